"""`MjcfControl`: the batched control input of an MJCF model's actuators (actuators.py maps them), MuJoCo's
data.ctrl and data.act with one row per env.

Use::

    model = artic.load_mjcf("ant.xml")
    scene = artic.Scene(num_envs, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)  # after add_to
    control.set(ctrl)                          # ctrl: (num_envs, len(model.actuators)), file order
    scene.step(model.timestep)

`set` refuses (ValidationError) a ctrl of another shape or with non-finite values, clamps it to the control
ranges, and writes drive targets, target velocities and joint forces through each articulation's cache (only the
actuated dofs' columns). Controls persist until the next `set`, as in MuJoCo; `control.ctrl` is the last clamped
input. Before the first `set` the model behaves as with ctrl = 0 (the drives' targets are set for it at load), but
for a general actuator with a constant bias b0 and no stiffness or damping, whose force needs `set`.

Actuators with state (an activation: intvelocity, filters, <position timeconst>, cylinders, dyntype integrator) or
whose force depends on the state (an affine gain: <damper>) are applied at every step: the control registers with
the scene (`Scene.set_before_step`, one per model and scene: a newer MjcfControl of the same model replaces the
older) and, at the start of each step, integrates `control.act` as MuJoCo's Euler does and writes the forces and
targets they give, the joint velocities read from the step's initial state (actuators.py has the formulas). Where
every activation is a muscle's on a spatial tendon (myo_sim's models) the tendons' launch advances them on the CPU,
in `control.act` itself (muscles.py's take_activations).
Actuators on spatial tendons (muscles among them) and the spatial tendons' own springs and dampers are applied there
too, as link forces for that step (muscles.py); `model.add_to(scene)` makes a control for a model that has any, so
that their passive forces act at ctrl 0 without one of the user's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...core.host_views import finite_within, host_view
from ...enums import CacheFlag
from ...errors import ValidationError
from ..xml_values import MAX_MAGNITUDE
from .muscles import SpatialActuators, has_tausmooth, muscle_act_dot
from .site_actuators import SiteActuators

if TYPE_CHECKING:
    from ...sim.scene import Scene
    from .loader import MjcfModel


class MjcfControl:
    """The batched control input of an MJCF model's actuators in a scene (see the module docstring): `set(ctrl)`
    with ctrl of shape (num_envs, len(model.actuators)), columns in the file's actuator order."""

    def __init__(self, model: MjcfModel, scene: Scene):
        self.model = model
        self.actuators = list(model.actuators)
        self.num_envs = scene.num_envs
        nu = len(self.actuators)
        self.low = np.full(nu, -np.inf)
        self.high = np.full(nu, np.inf)
        for i, r in enumerate(self.actuators):
            if r.supported and r.ctrlrange is not None:
                self.low[i], self.high[i] = r.ctrlrange
        self.ctrl = np.zeros((self.num_envs, nu))
        self._scene = scene
        self._activations = _Activations(self.actuators)
        self._act = np.zeros((self.num_envs, self._activations.na))  # MuJoCo's data.act (columns: has_act actuators)
        self._bindings = []
        for art in model.articulations:
            if art._scene is not None and art._scene is not scene:
                raise ValidationError(
                    f"MJCF model '{model.name}': articulation '{art.name}' is in another scene; "
                    "bind the control to the scene the model was added to"
                )
            b = _Binding(art, self.actuators, model.joint_force_ranges)
            if b.flags:
                self._bindings.append(b)
        for b in self._bindings:
            b.art._require_scene()  # refused (StateError) when the model was not added to a scene
        self._stepped = [b for b in self._bindings if b.stepped]
        self._adhesions = _Adhesions(self.actuators)
        self._spatial = SpatialActuators(model, scene, self.actuators)
        self._sites = SiteActuators(model, scene, self.actuators)
        on_device = self._spatial.take_activations(self._activations)
        if on_device is not None:  # the tendons' launch advances the muscles' activations, in this very array
            self._act = on_device
        key = f"MjcfControl of model {id(model)}"  # a newer control of this model takes the older's place
        every_step = self._stepped or self._spatial.active or self._sites.active
        scene.set_before_step(key, self._before_step if every_step else None)

    @property
    def act(self) -> np.ndarray:
        """(E, na) MuJoCo's data.act: the activations of the actuators that have one (names: `act_names`), updated in
        place by every step; assigning writes into it (checked as `set`'s act)."""
        return self._act

    @act.setter
    def act(self, value: ArrayLike) -> None:
        self._act[...] = self._checked_act(value)

    @property
    def act_names(self) -> list[str]:
        """The names of the actuators with an activation, one per act column."""
        return list(self._activations.names)

    @property
    def actuator_force(self) -> np.ndarray:
        """(E, nu) [N or N m] the forces that the actuators on spatial tendons (muscles among them) and on sites
        applied in the last step, MuJoCo's data.actuator_force in their columns (zero in the others')."""
        out = self._spatial.force.copy()
        self._sites.add_forces(out)
        return out

    @property
    def names(self) -> list[str]:
        """The actuators' names, one per ctrl column."""
        return [r.name for r in self.actuators]

    def set(self, ctrl: ArrayLike, act: ArrayLike | None = None) -> None:
        """Clamp `ctrl` (num_envs x n_actuators) to the control ranges and apply it to every env; `act`
        (num_envs x na, na = the number of actuators with an activation), when given, replaces the activations."""
        c = self._checked(ctrl, "ctrl", len(self.actuators))  # finite, not beyond 1e15 (before the clamp)
        c = np.minimum(np.maximum(c, self.low), self.high)  # np.clip's checks cost more than the clamp
        if act is not None:
            self._act[...] = self._checked_act(act)
        self.ctrl = c
        u = self._activations.inputs(c, self.act, self.act)
        for b in self._bindings:
            b.apply(u)
        self._adhesions.apply(u)

    def set_keyframe(self, key: int | str, envs: ArrayLike | None = None) -> None:
        """Put `envs` (default: all) in keyframe `key` (name or index): the state (MjcfModel.set_keyframe), and
        these envs' ctrl and act, as MuJoCo's mj_resetDataKeyframe."""
        frame = self.model.set_keyframe(self._scene, key, envs)
        rows = np.arange(self.num_envs) if envs is None else np.atleast_1d(np.asarray(envs))
        ctrl, act = self.ctrl.copy(), self.act.copy()
        ctrl[rows] = frame.ctrl
        act[rows] = frame.act
        self.set(ctrl, act)

    def _checked_act(self, act: ArrayLike) -> np.ndarray:
        return self._checked(act, "act", self._activations.na)

    def _checked(self, values: ArrayLike, what: str, n: int) -> np.ndarray:
        """`values` as an (E, n) float64 array, refused unless finite and within 1e15 ("ctrl" or "act": `what`)."""
        e = self.num_envs
        try:
            c = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            c = None
        if c is not None and c.shape == (e, n) and finite_within(c, MAX_MAGNITUDE):  # one reduction when all is well
            return c
        if c is not None and c.shape == (e, n) and finite_within(c, np.inf):
            raise ValidationError(f"MJCF model '{self.model.name}': {what} values must be at most 1e+15 in magnitude")
        got = (
            f"a {type(values).__name__} that is not numbers"
            if c is None
            else f"shape {c.shape}"
            if c.shape != (e, n)
            else "non-finite values"
        )
        raise ValidationError(
            f"MJCF model '{self.model.name}': {what} must be {e} x {n} finite numbers (one row "
            f"per env, one column per actuator{' with an activation' if what == 'act' else ''}: "
            f"{', '.join(self.names if what == 'ctrl' else self._activations.names) or 'none'}), got {got}"
        )

    def _before_step(self, dt: float) -> None:
        """The scene's step hook: the forces and targets of this step (from act, or the act after the update where
        actearly), then act integrated over dt (by the tendons' launch where SpatialActuators.apply_advancing can:
        muscles that do not act early, whose forces take the act before the update, the same order)."""
        if self._stepped or self._sites.active:  # their inputs: ctrl, or the act before its update (actearly does
            u = self._activations.inputs(self.ctrl, self._act, self._act)  # not go to the device)
        if self._spatial.apply_advancing(self.ctrl, dt):  # link forces for this step, and act advanced in place
            for b in self._stepped:
                b.apply(u)
            if self._sites.active:
                self._sites.apply(u)
            return
        new = self._activations.advance(self.ctrl, self._act, dt)
        u = self._activations.inputs(self.ctrl, self._act, new)
        for b in self._stepped:
            b.apply(u)
        self._spatial.apply(u)  # link forces, for this step only: applied at every step
        if self._sites.active:
            self._sites.apply(u)
        self._act[...] = new


class _Activations:
    """MuJoCo's activation dynamics of the actuators that have one (actuators.py): their act columns, and the
    Euler update of mj_step."""

    _INTEGRATOR, _FILTER, _EXACT, _MUSCLE, _INERT = range(5)

    def __init__(self, actuators):
        cols = [i for i, r in enumerate(actuators) if r.has_act]
        self.na = len(cols)
        self.names = [actuators[i].name for i in cols]
        self.columns = np.array(cols, int)  # actuator index of each act column
        kinds = {
            "integrator": self._INTEGRATOR,
            "filter": self._FILTER,
            "filterexact": self._EXACT,
            "muscle": self._MUSCLE,
        }
        self.kind = np.array(
            [kinds.get(actuators[i].dyn, self._INERT) if actuators[i].supported else self._INERT for i in cols], int
        )
        self.timeconst = np.array([actuators[i].timeconst for i in cols], float)
        self.low = np.array([(actuators[i].actrange or (-np.inf, np.inf))[0] for i in cols], float)
        self.high = np.array([(actuators[i].actrange or (-np.inf, np.inf))[1] for i in cols], float)
        self.early = np.array([actuators[i].actearly for i in cols], bool)
        self.dynprm = np.array([actuators[i].dynprm for i in cols], float).reshape(-1, 3)
        # myo_sim's models: only muscles, none acting early (advance and inputs skip the other kinds' NumPy calls,
        # ~10 us of a 60 us step at one env)
        self.only_muscles = bool(self.na) and bool(np.all(self.kind == self._MUSCLE))
        self.any_early = bool(self.early.any())
        self._any_muscle = bool(np.any(self.kind == self._MUSCLE))
        self._smooth = has_tausmooth(self.dynprm)
        self._every = np.array_equal(self.columns, np.arange(len(actuators)))  # act columns are all the actuators

    def advance(self, ctrl: np.ndarray, act: np.ndarray, dt: float) -> np.ndarray:
        """act after a step of dt with `ctrl` (E x nu): integrator act + h ctrl, filter act + h (ctrl - act) / tau,
        filterexact act + (ctrl - act) (1 - e^(-h / tau)) (a time constant 0 takes ctrl at once), muscle act + h act'
        (muscles.py), clamped to actrange; an inert actuator's act stays."""
        if not self.na:
            return act
        c = ctrl if self._every else ctrl[:, self.columns]
        if self.only_muscles:
            # minimum and maximum: np.clip's wrapper costs more than its arithmetic at one env
            rate = muscle_act_dot(c, act, self.dynprm, self._smooth)
            return np.minimum(np.maximum(act + dt * rate, self.low), self.high)
        tau = np.where(self.timeconst > 0.0, self.timeconst, 1.0)
        share = np.where(self.kind == self._FILTER, dt / tau, -np.expm1(-dt / tau))
        share = np.where(self.timeconst > 0.0, share, 1.0)
        new = np.where(self.kind == self._INTEGRATOR, act + dt * c, act + share * (c - act))
        if self._any_muscle:
            new = np.where(self.kind == self._MUSCLE, act + dt * muscle_act_dot(c, act, self.dynprm, self._smooth), new)
        new = np.where(self.kind == self._INERT, act, new)
        return np.clip(new, self.low, self.high)

    def inputs(self, ctrl: np.ndarray, act: np.ndarray, new: np.ndarray) -> np.ndarray:
        """What each actuator's force takes (E x nu): ctrl, or act (the updated `new` where actearly)."""
        if not self.na:
            return ctrl
        u = ctrl.copy()
        u[:, self.columns] = np.where(self.early, new, act) if self.any_early else act
        return u


class _Adhesions:
    """The adhesion actuators (MuJoCo's body transmission): each one's force gain * ctrl, clamped to its
    forcerange, written into its body's link as `link_adhesion` (the links' sum; persistent, as a ctrl is), which
    the step applies through the link's contacts (step_kernel._adhesion)."""

    def __init__(self, actuators: list):
        self.entries = {}  # id(articulation): (articulation, [(actuator index, link column, gain, low, high)])
        for i, r in enumerate(actuators):
            if r.kind != "adhesion" or not r.supported:
                continue
            link = r.link
            art = link.articulation
            low, high = r.forcerange if r.forcerange is not None else (-np.inf, np.inf)
            column = link.link_index  # its column in the articulation's link arrays (topological order)
            self.entries.setdefault(id(art), (art, []))[1].append((i, column, r.gain, low, high))

    def apply(self, u: np.ndarray) -> None:
        for art, members in self.entries.values():
            view = art._require_scene().view(art)
            array = view.control.link_adhesion
            host = host_view(array)  # the array's own memory on the CPU; a copy, written back, on a GPU
            host[...] = 0.0
            for i, column, gain, low, high in members:
                host[:, column] += np.clip(gain * u[:, i], low, high)
            if not array.device.is_cpu:
                array.assign(host)
            view.wake(np.any(host > 0.0, axis=1))


class _Binding:
    """One articulation's actuated dofs: target positions, target velocities and joint forces as affine maps of
    ctrl."""

    def __init__(self, art, actuators, joint_force_ranges):
        self.art = art
        dofs = {joint.name: i for i, (joint, _) in enumerate(art.dof_list())}
        joints = {joint.name: joint for joint, _ in art.dof_list()}
        pos, vel, force = {}, {}, {}  # joint name: [(actuator index, coefficient)]
        for i, r in enumerate(actuators):
            if not r.supported or not r.terms or not all(j in dofs for j, _ in r.terms):
                continue
            if r.tendon is not None:  # its ctrl term, as joint forces gear c_i f (its bias is the tendon's spring)
                for j, c in r.terms:
                    force.setdefault(j, []).append((i, c))
                continue
            group = pos if r.bias[1] != 0.0 else vel if r.bias[2] != 0.0 else force
            group.setdefault(r.joint, []).append((i, 1.0))
        nu = len(actuators)
        self.pos = self._affine(pos, dofs, joints, actuators, nu, "stiffness")
        self.vel = self._affine(vel, dofs, joints, actuators, nu, "damping")
        self.force_dofs = np.array([dofs[j] for j in force], int)
        # a joint's actuatorfrcrange clamps the sum of its force actuators (its drive's max force the rest)
        self.joint_lo = np.array([joint_force_ranges.get(j, (-np.inf, np.inf))[0] for j in force])
        self.joint_hi = np.array([joint_force_ranges.get(j, (-np.inf, np.inf))[1] for j in force])
        self.force_map = np.zeros((len(force), nu))  # dof row: gear c_i of each force actuator
        for row, members in enumerate(force.values()):
            for i, c in members:
                self.force_map[row, i] += actuators[i].gear * c
        bound = [i for members in (*pos.values(), *vel.values(), *force.values()) for i, _ in members]
        # an affine gain g0 + g1 length + g2 velocity (a damper): length and velocity of each force actuator
        self.gain_slope = np.array([r.gain_slope for r in actuators], float).reshape(nu, 2)
        self.length_map = np.zeros((nu, len(art.dof_list())))  # actuator length = gear * sum c_j q_j
        for i in {i for members in force.values() for i, _ in members}:
            for j, c in actuators[i].terms:
                self.length_map[i, dofs[j]] += actuators[i].gear * c
        self.needs_state = bool(np.any(self.gain_slope[sorted(set(bound))] != 0.0)) if bound else False
        self.stepped = self.needs_state or any(actuators[i].has_act for i in bound)
        self.force_gain = np.array([r.gain for r in actuators])
        self.force_b0 = np.array([r.bias[0] for r in actuators])
        self.force_lo = np.array([r.forcerange[0] if r.forcerange else -np.inf for r in actuators])
        self.force_hi = np.array([r.forcerange[1] if r.forcerange else np.inf for r in actuators])
        # which of `apply`'s terms do anything (each NumPy call on these small arrays costs ~1 us, at every step)
        self.force_terms = (
            bool(self.force_b0.any()),
            bool(np.isfinite(self.force_lo).any() or np.isfinite(self.force_hi).any()),
            bool(np.isfinite(self.joint_lo).any() or np.isfinite(self.joint_hi).any()),
        )
        self.flags = (
            (CacheFlag.JOINT_TARGET_POSITIONS if len(self.pos[0]) else 0)
            | (CacheFlag.JOINT_TARGET_VELOCITIES if len(self.vel[0]) else 0)
            | (CacheFlag.FORCE if len(self.force_dofs) else 0)
        )

    @staticmethod
    def _affine(groups, dofs, joints, actuators, nu, term):
        """(dof indices, matrix, offset) with target = ctrl @ matrix.T + offset: each actuator adds
        gear * gain * ctrl / the dof drive's whole `term` (stiffness or damping); the offset is the target set at
        load for ctrl = 0 (the actuators' gear * b0, over the same term)."""
        idx = np.array([dofs[j] for j in groups], int)
        mat = np.zeros((len(groups), nu))
        off = np.zeros(len(groups))
        for row, (jname, members) in enumerate(groups.items()):
            joint = joints[jname]
            ax = joint.dof_axes()[0]
            drive = joint.get_drive_params(ax)
            total = getattr(drive, term)
            load_target = joint.get_drive_target(ax) if term == "stiffness" else joint.get_drive_velocity(ax)
            for i, _ in members:
                mat[row, i] = actuators[i].gear * actuators[i].gain / total
            off[row] = load_target
        return idx, mat, off

    def apply(self, c):
        """Write the targets and forces that the actuators' inputs `c` (E x nu: ctrl, or act) give, into the
        actuated dofs' columns alone (ArticulationView.write_dof_columns: no cache round trip at every step)."""
        view = self.art._require_scene().view(self.art)
        columns = {}
        idx, mat, off = self.pos
        if len(idx):
            columns["joint_target_positions"] = (idx, c @ mat.T + off)
        idx, mat, off = self.vel
        if len(idx):
            columns["joint_target_velocities"] = (idx, c @ mat.T + off)
        if len(self.force_dofs):
            gain = self.force_gain
            if self.needs_state:  # MuJoCo's affine gain, at the state the step starts from (explicit, as its Euler)
                length = host_view(view.state.joint_q) @ self.length_map.T
                speed = host_view(view.state.joint_qd) @ self.length_map.T
                gain = gain + self.gain_slope[:, 0] * length + self.gain_slope[:, 1] * speed
            biased, clamped, joint_clamped = self.force_terms
            f = gain * c
            if biased:
                f += self.force_b0
            if clamped:
                f = np.minimum(np.maximum(f, self.force_lo), self.force_hi)
            f = f @ self.force_map.T
            if joint_clamped:
                f = np.minimum(np.maximum(f, self.joint_lo), self.joint_hi)
            columns["joint_force"] = (self.force_dofs, f)
        view.write_dof_columns(columns)
