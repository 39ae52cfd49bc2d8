"""`MjcfControl`: the batched control input of an MJCF model's actuators (actuators.py maps them), MuJoCo's
data.ctrl with one row per env.

Use::

    model = artic.load_mjcf("ant.xml")
    scene = artic.Scene(num_envs, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)  # after add_to
    control.set(ctrl)                          # ctrl: (num_envs, len(model.actuators)), file order
    scene.step(model.timestep)

`set` refuses (ValidationError) a ctrl of another shape or with non-finite values, clamps it to the control
ranges, and writes drive targets, target velocities and joint forces through each articulation's cache (only the
actuated dofs' columns). Controls persist until the next `set`, as in MuJoCo; `control.ctrl` is the last clamped
input. Before the first `set` the model behaves as with ctrl = 0 (the drives' targets are set for it at load), but
for a general actuator with a constant bias b0 and no stiffness or damping, whose force needs `set`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...enums import CacheFlag
from ...errors import ValidationError
from ..xml_values import MAX_MAGNITUDE

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
            b.cache = b.art.create_cache()  # refused (StateError) when the model was not added to a scene

    @property
    def names(self) -> list[str]:
        """The actuators' names, one per ctrl column."""
        return [r.name for r in self.actuators]

    def set(self, ctrl: ArrayLike) -> None:
        """Clamp `ctrl` (num_envs x n_actuators) to the control ranges and apply it to every env."""
        e, nu = self.num_envs, len(self.actuators)
        try:
            c = np.array(ctrl, dtype=np.float64)
        except (TypeError, ValueError):
            c = None
        if c is None or c.shape != (e, nu) or not np.all(np.isfinite(c)):
            got = (
                f"a {type(ctrl).__name__} that is not numbers"
                if c is None
                else f"shape {c.shape}"
                if c.shape != (e, nu)
                else "non-finite values"
            )
            raise ValidationError(
                f"MJCF model '{self.model.name}': ctrl must be {e} x {nu} finite numbers (one row "
                f"per env, one column per actuator: {', '.join(self.names) or 'none'}), got {got}"
            )
        c = np.clip(c, self.low, self.high)
        if np.abs(c).max(initial=0.0) > MAX_MAGNITUDE:
            raise ValidationError(f"MJCF model '{self.model.name}': ctrl values must be at most 1e+15 in magnitude")
        for b in self._bindings:
            b.apply(c)
        self.ctrl = c


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
        self.force_gain = np.array([r.gain for r in actuators])
        self.force_b0 = np.array([r.bias[0] for r in actuators])
        self.force_lo = np.array([r.forcerange[0] if r.forcerange else -np.inf for r in actuators])
        self.force_hi = np.array([r.forcerange[1] if r.forcerange else np.inf for r in actuators])
        self.flags = (
            (CacheFlag.JOINT_TARGET_POSITIONS if len(self.pos[0]) else 0)
            | (CacheFlag.JOINT_TARGET_VELOCITIES if len(self.vel[0]) else 0)
            | (CacheFlag.FORCE if len(self.force_dofs) else 0)
        )

    @staticmethod
    def _affine(groups, dofs, joints, actuators, nu, term):
        """(dof indices, matrix, offset) with target = ctrl @ matrix.T + offset: each actuator adds
        gear * gain * ctrl / the dof drive's whole `term` (stiffness or damping); the offset is the target set at
        load for ctrl = 0 (the joint spring's k * springref and the actuators' gear * b0, over the same term)."""
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
        art, cache = self.art, self.cache
        art.copy_internal_state_to_cache(cache, self.flags)
        idx, mat, off = self.pos
        if len(idx):
            cache.joint_target_positions[:, idx] = c @ mat.T + off
        idx, mat, off = self.vel
        if len(idx):
            cache.joint_target_velocities[:, idx] = c @ mat.T + off
        if len(self.force_dofs):
            f = np.clip(self.force_gain * c + self.force_b0, self.force_lo, self.force_hi)
            cache.joint_force[:, self.force_dofs] = np.clip(f @ self.force_map.T, self.joint_lo, self.joint_hi)
        art.apply_cache(cache, self.flags)
