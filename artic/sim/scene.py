"""`Scene`: the envs, gravity and device, and the articulations and rigid actors replicated over the envs.

The settings the arrays are built with (num_envs, device, contact_capacity, friction_correlation_distance,
nan_policy, speculative_contacts) are fixed at construction and refuse assignment; gravity and solver_type may be
assigned and act from the next step.

Adding an articulation validates it and builds its device arrays (Model, State, Control, Data) for all envs; from
then on its topology is frozen (PhysX: remove, change, re-add). Parameter changes made through the description
(masses, frames, armature) are re-uploaded; state set through the description (joint positions, root pose) is
written to every env. Per-env state goes through the articulation cache.

Articulations whose shapes can touch, or that a body joint connects, are stepped together in one block (block.py);
the scene regroups them when an articulation or a joint is added or removed, carrying every env's state over.
Arrays taken from `scene.view(art)` belong to the current grouping: take them again after adding or removing an
articulation or a joint.

Body joints (description/body_joints.py) join links, rigid bodies, static bodies and the world; their coordinates, drive
targets, ranges and locks are per-env arrays read and written here (body_joint_view.py), and setting coordinates moves
the freest bodies so that every joint holds (assemble.py).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import warp as wp
from numpy.typing import ArrayLike

from ..core.host_views import host_view
from ..core.warp_runtime import init_warp
from ..description.actors import RigidDynamic, RigidStatic
from ..description.articulation import Articulation, Link
from ..description.body_joints import JointBase
from ..description.mass_check import check_mass_properties, mass_policy_arg
from ..description.validate import MAX_MAGNITUDE, KnownAttributes, positive_int
from ..enums import CacheFlag, NanPolicy, SolverType
from ..errors import StateError, TopologyError, ValidationError
from .articulation_view import ArticulationView
from .assemble import assemble, check_targets
from .block import Block
from .body_joint_view import BodyJointView, per_env_array
from .builders.arrays import block_bytes_per_env, bytes_per_env
from .grouping import regroup
from .memory import MAX_ENVS, allocation_errors, check_fits
from .reports import (
    ContactReport,
    JointForces,
    JointFrames,
    JointStatus,
    PenetrationReport,
    StepWarnings,
    contact_report,
    joint_forces,
    joint_frames,
    joint_status,
    penetration_report,
    require_solver_report,
)
from .scene_settings import as_gravity, contact_settings, fixed, managed
from .status import StatusMonitor, as_nan_policy

FACETS = (4, 8, 12, 16)  # Scene.direct_friction_facets (contact_row_form.add_contact_rows: even row counts)


class Scene(KnownAttributes):
    """`num_envs` copies ("environments") of the articulations, rigid bodies, static actors and body joints added to it,
    simulated together by `step(dt)` (PxScene, with an env dimension on every array).

    Settings fixed at construction: `num_envs`, `device` (None: Warp's default, the CPU here), `contact_capacity`
    (the contact slots per env a block starts with, at most what its collision pairs can make; a step that finds
    more keeps the touching contacts, and the block's slots grow for the next steps, with a warning),
    `friction_correlation_distance` [m], `nan_policy` ('warn', 'raise' or 'freeze': what a step that leaves an env's
    state non-finite does, status.py), `speculative_contacts` ('reachable': of the pairs whose surfaces are apart
    within the contact offsets, only those whose gap the step could close; 'all': every one, as PhysX).
    `gravity` (3,) [m/s^2], `solver_type` (PGS, TGS or DIRECT: docs/solvers.md) and `mass_policy` ('repair' or
    'raise': massless movable links when an articulation is added) may change later. Per-env state goes through each
    articulation's cache (`art.create_cache`, `apply_cache`, `copy_internal_state_to_cache`) and the per-env setters
    here; `env_status` reports the envs whose state went non-finite."""

    def __init__(
        self,
        num_envs: int = 1,
        gravity: ArrayLike = (0.0, 0.0, -9.81),
        device: wp.Device | str | None = None,
        solver_type: SolverType | int = SolverType.PGS,
        contact_capacity: int = 512,
        friction_correlation_distance: float = 0.025,
        nan_policy: NanPolicy | str | int = "warn",
        mass_policy: str = "repair",
        speculative_contacts: str = "reachable",
    ):
        num_envs = positive_int("scene", "num_envs", num_envs, MAX_ENVS)
        g = as_gravity(gravity)
        init_warp()  # quietly unless artic.set_verbose / ARTIC_VERBOSE (core/warp_runtime.py)
        try:
            self._device = wp.get_device(device)
        except (RuntimeError, ValueError) as e:
            raise ValidationError(f"scene: unknown device {device!r} ({e}); use None, 'cpu' or 'cuda:0'") from None
        # anything a scene simulates costs at least one rigid body's arrays per env: refuse hopeless env counts now
        check_fits("scene", num_envs, bytes_per_env(1, 0, True), self.device, "even a single rigid body")
        self.solver_type = solver_type  # validated by the setter
        self._warnings = StepWarnings()  # dropped contacts and direct-solver fallbacks (reports.py)
        self._pivot_limit = 0
        self._friction_facets = 4
        # the contact slots per env a block starts with; PxSceneDesc::frictionCorrelationDistance [m] (contacts of a
        # patch closer than this share one friction anchor); which speculative contacts a step keeps
        self._contact_capacity, self._friction_correlation_distance, self._speculative_contacts = contact_settings(
            contact_capacity, friction_correlation_distance, speculative_contacts
        )
        self._num_envs = int(num_envs)
        self._gravity = g
        self.time = 0.0  # [s] simulated: the sum of the dt of every step that had something to simulate
        self._empty_step_warned = False
        self._views: dict[int, ArticulationView] = {}
        self._joint_views: dict[int, BodyJointView] = {}
        self._blocks: list[Block] = []
        self._deferred = 0  # open `adding()` contexts: regrouping waits for the last one to close
        self._unwoken: list[JointBase] = []  # joints added while deferred, woken once grouped
        self._articulations: list[Articulation] = []
        self._statics: list[RigidStatic] = []  # shared with every block
        self._joints: list[JointBase] = []
        self._last_dt = None  # [s] of the last step (constraint forces are its impulses over it)
        self._before_step: dict = {}  # key: callback(dt), called at the start of every step (set_before_step)
        # what a step that leaves an env non-finite does: warn (default), raise or freeze the env (status.py)
        self._nan_policy = as_nan_policy(nan_policy)
        self._status = StatusMonitor(self._nan_policy)
        self.mass_policy = mass_policy

    # -- settings: those the blocks were built with are fixed; gravity and the solver type can change -------------
    num_envs = fixed("num_envs", "every articulation's arrays were allocated for it")
    device = fixed("device", "every array lives on it")
    contact_capacity = fixed("contact_capacity", "the blocks' contact buffers started with it")
    friction_correlation_distance = fixed("friction_correlation_distance", "the contact setup was built with it")
    speculative_contacts = fixed("speculative_contacts", "the step's detection was built with it")
    nan_policy = fixed("nan_policy", "the status monitor was set up with it")
    articulations = managed(
        "articulations",
        "the articulations and rigid bodies",
        "add_articulation, remove_articulation, add_actor(RigidDynamic) and remove_actor",
    )
    statics = managed("statics", "the static actors", "add_actor and remove_actor")
    joints = managed("joints", "the body joints", "add_joint and remove_joint")

    @property
    def gravity(self) -> tuple:
        """(3,) [m/s^2], world frame."""
        return self._gravity

    @gravity.setter
    def gravity(self, value: ArrayLike):
        """New gravity for every articulation and body, from the next step (and for inverse dynamics at once). Every
        env is woken: PxScene::setGravity leaves sleeping actors asleep, so a body at rest would ignore the change
        until something touched it, which reads as a gravity that was not applied."""
        g = as_gravity(value)
        self._gravity = g
        for block in self._blocks:
            block.set_gravity(g)
            block.wake(np.ones(self.num_envs, bool))
        for view in self._views.values():
            view.gravity = g

    @property
    def mass_policy(self) -> str:
        """What add_articulation does with movable dofs that have (numerically) no mass or inertia: 'repair' gives
        their links a small mass and inertia with a warning, 'raise' refuses the articulation
        (description/mass_check.py). It applies to articulations added after it is set."""
        return self._mass_policy

    @mass_policy.setter
    def mass_policy(self, value: str):
        self._mass_policy = mass_policy_arg(value)

    @property
    def solver_type(self) -> SolverType:
        """The constraint solver of every step: SolverType.PGS, TGS or DIRECT (a new one acts from the next step)."""
        return self._solver_type

    @solver_type.setter
    def solver_type(self, value: SolverType | int):
        """PGS, TGS or DIRECT, from the next step (each step passes it to the kernel)."""
        # SolverType("TGS") or SolverType(1.0) would raise or convert: only the members (or their int values) pass
        number = not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))
        try:
            self._solver_type = SolverType(value if number else None)
        except ValueError:
            raise ValidationError(
                f"scene: unknown solver_type {value!r}; use artic.SolverType.PGS, TGS or DIRECT"
            ) from None

    @property
    def direct_pivot_limit(self) -> int | None:
        """The most pivots one solve of the direct solver may take (None: automatic, 4 rows + 16). A solve that
        reaches it keeps its last feasible point if that meets the LCP conditions closely enough, and otherwise
        falls back to PGS for that env (counted and warned): a bound on the cost of a step."""
        return self._pivot_limit or None

    @direct_pivot_limit.setter
    def direct_pivot_limit(self, value: int | None):
        if value is None:
            self._pivot_limit = 0
            return
        self._pivot_limit = positive_int("scene", "direct_pivot_limit", value, 1_000_000)

    @property
    def direct_friction_facets(self) -> int:
        """The faces of the direct solver's friction cone at each contact anchor of PhysX's patch friction (an MJCF
        model's soft pyramidal contacts are MuJoCo's own): 4, the default, is PhysX's box, a row along each tangent,
        whose face across the slip also resists a sideways push while sliding and whose corners let a sticking
        contact take up to sqrt(2) mu N; 8, 12 or 16 make facets / 2 rows per anchor, a pyramid inscribed in the
        Coulomb cone with a vertex turned to the slip the step would have without friction, where implicit Coulomb
        friction lies: one contact then slides and sticks as with the cone itself (contact_row_form.py). More
        rows make a step costlier (docs/solvers.md). PGS and TGS bound each anchor by the Coulomb disc itself."""
        return self._friction_facets

    @direct_friction_facets.setter
    def direct_friction_facets(self, value: int):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value not in FACETS:
            choices = ", ".join(map(str, FACETS))
            raise ValidationError(f"scene: direct_friction_facets must be one of {choices} (4 a box), got {value!r}")
        self._friction_facets = int(value)

    def __repr__(self):
        return (
            f"Scene(num_envs={self.num_envs}, articulations={len(self.articulations)}, "
            f"solver={self.solver_type.name}, device='{self.device}')"
        )

    def add_articulation(self, art: Articulation) -> Articulation:
        """Validate `art`, freeze its topology and build its arrays for every env."""
        if not isinstance(art, Articulation):
            raise ValidationError(f"scene: add_articulation takes an artic.Articulation, got {type(art).__name__}")
        if art._scene is not None:
            raise TopologyError(f"articulation '{art.name}' is already in a scene; remove it first")
        art.validate()
        check_mass_properties(art, self.mass_policy)  # massless dofs: repair or refuse
        for link in art.get_links():
            for shape in link.shapes:
                shape.check_contact_params()
        # the arrays of the articulations already added are allocated, so available memory already excludes them
        check_fits(
            "scene",
            self.num_envs,
            bytes_per_env(art.link_count, art.dof_count, not art.fix_base),
            self.device,
            f"articulation '{art.name}'",
        )
        with allocation_errors(f"articulation '{art.name}'", self.num_envs):
            view = ArticulationView(art, self._new_block([art], []))
        view.write_description()
        art._scene = self
        self._views[id(art)] = view
        self.articulations.append(art)
        self._regroup()
        return art

    def _new_block(self, arts: list[Articulation], joints: list[JointBase]) -> Block:
        """A block of `arts` and `joints`, once its arrays are known to fit: its dense arrays grow with the square
        of its generalized dofs, which no single body's check sees."""
        owner = "articulation(s) " + ", ".join(f"'{a.name}'" for a in arts[:8]) + (" ..." if len(arts) > 8 else "")
        if len(arts) > 1 or joints:
            n_gen = sum(a.dof_count + (0 if a.fix_base else 6) for a in arts)
            rows = sum(2 * j.num_coordinates + j.bilateral_count for j in joints)
            what = (
                f"the arrays of {len(arts)} bodies stepped together (they can touch or are joined: {n_gen} "
                f"generalized dofs, {rows} body-joint rows)"
            )
            fix = "let fewer bodies touch or join (collision groups, fewer joints) so that they step in smaller blocks"
            check_fits(owner, self.num_envs, block_bytes_per_env(arts, joints), self.device, what, fix)
        with allocation_errors(owner, self.num_envs):
            return Block(
                arts,
                joints,
                self.num_envs,
                self.gravity,
                self.device,
                self.statics,
                self.contact_capacity,
                self.friction_correlation_distance,
                self.speculative_contacts == "all",
            )

    def bytes_per_env(self) -> int:
        """A lower bound of the bytes one env of this scene takes (every block, as the memory checks count them;
        contact slots and the direct solver's workspace come on top): `artic.sim.memory.available_bytes(device)`
        divided by it bounds the number of envs that can fit."""
        return sum(block_bytes_per_env(b.arts, b.joints) for b in self._blocks)

    def _regroup(self):
        """Group the articulations into blocks and move the state of regrouped ones (grouping.py); inside `adding()`
        only noted, and done once when it closes."""
        if self._deferred:
            return
        merge = self._nan_policy != NanPolicy.FREEZE  # freezing stops a block's env whole: no joined blocks then
        self._blocks = regroup(self.articulations, self.joints, self._views, self._joint_views, self._new_block, merge)
        woken, self._unwoken = self._unwoken, []
        for joint in woken:
            if id(joint) in self._joint_views:
                self._joint_view(joint).block.wake(np.ones(self.num_envs, bool))

    @contextmanager
    def adding(self) -> Iterator[Scene]:
        """Add many articulations, bodies and joints, and group them into blocks once, when the block closes:
        `with scene.adding(): ...`. Every add regroups the scene by itself, which rebuilds a growing block once per
        joint (a 52-body marker rig: 4.7 s to build, 0.1 s inside `adding`). Inside it, a joint just added has no
        block yet: read or set it after the block, where grouping errors (a block too large to fit) surface too."""
        self._deferred += 1
        try:
            yield self
        finally:
            self._deferred -= 1
            self._regroup()

    def add_actor(self, actor: RigidStatic | RigidDynamic) -> RigidStatic | RigidDynamic:
        """Add a RigidStatic (its shapes collide with every articulation and body, in every env) or a RigidDynamic
        (simulated as a one-link floating articulation, see description/actors.py)."""
        if isinstance(actor, RigidDynamic):
            self.add_articulation(actor.articulation)
            return actor
        if not isinstance(actor, RigidStatic):
            raise ValidationError(f"scene: add_actor takes a RigidStatic or RigidDynamic, got {type(actor).__name__}")
        if actor._scene is not None:
            raise TopologyError(f"static actor '{actor.name}' is already in a scene")
        actor._scene = self
        self.statics.append(actor)
        self._statics_changed()
        return actor

    def remove_actor(self, actor: RigidStatic | RigidDynamic) -> None:
        """Remove a RigidStatic or RigidDynamic from the scene; refused while a body joint joins it."""
        if isinstance(actor, RigidDynamic):
            self.remove_articulation(actor.articulation)
            return
        if actor not in self.statics:
            raise StateError(f"actor '{getattr(actor, 'name', actor)}' is not in this scene")
        joined = [j.name for j in self.joints if actor is j.body_a or actor is j.body_b]
        if joined:
            raise StateError(
                f"static actor '{actor.name}' is joined by body joint(s) {joined}; remove them first "
                "(scene.remove_joint)"
            )
        self.statics.remove(actor)
        actor._scene = None
        self._statics_changed()

    def _statics_changed(self):
        for block in self._blocks:
            block.on_statics_changed()
        for view in self._views.values():
            view.wake(np.ones(self.num_envs, bool))

    def step(self, dt: float) -> None:
        """Advance every articulation of every env by dt seconds (one fused kernel launch per block). A scene
        without articulations or rigid bodies has nothing to simulate: the step warns once and leaves `time`."""
        if type(dt) is not float or dt != self._last_dt:  # the last step's dt, a float, was checked then
            if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, (int, float, np.integer, np.floating)):
                raise ValidationError(f"scene: dt must be a number, got {dt!r}")  # float("0.01") would take a string
            if not math.isfinite(dt := float(dt)) or dt <= 0.0 or dt > MAX_MAGNITUDE:  # math, not NumPy: 0.01 us
                raise ValidationError(f"scene: dt must be a positive finite number of seconds, got {dt}")
        if not self._articulations:  # static actors alone never move: nothing is simulated, time stands still
            if not self._empty_step_warned:
                self._empty_step_warned = True
                warnings.warn(
                    "scene: step() on a scene without articulations or rigid bodies simulates nothing and "
                    "does not advance scene.time; add_articulation or add_actor(RigidDynamic) first",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return
        if self._before_step:
            for callback in tuple(self._before_step.values()):
                callback(dt)
        freeze = self._nan_policy == NanPolicy.FREEZE
        for block in self._blocks:  # the articulation views learn of the step when next asked (view._catch_up)
            block.step(dt, self._solver_type, freeze, self._pivot_limit, self._friction_facets // 2)
        # straight into __dict__: KnownAttributes.__setattr__ is a Python call, ~0.3 us each at every step
        state = self.__dict__
        state["time"] = self.time + dt
        state["_last_dt"] = dt
        for block in self._blocks:  # on the CPU, most steps raise no flag and leave no warning pending
            if not block.quiet():
                break
        else:
            if not self._status.pending:
                return
        self._warnings.after_step(self._status, self._blocks, self._solver_type == SolverType.DIRECT)

    def set_before_step(self, key: str, callback: Callable[[float], None] | None) -> None:
        """Call `callback(dt)` at the start of every step, before anything moves: for a controller that carries
        state of its own and must advance with the scene (MjcfControl integrates MuJoCo's actuator activations
        there). One callback per key: setting a key again replaces its callback, None removes it."""
        if not isinstance(key, str):
            raise ValidationError(f"scene: set_before_step's key must be a string, got {key!r}")
        if callback is None:
            self._before_step.pop(key, None)
        elif not callable(callback):
            raise ValidationError(f"scene: set_before_step's callback for {key!r} must be callable, got {callback!r}")
        else:
            self._before_step[key] = callback

    @property
    def env_status(self) -> np.ndarray:
        """(E,) bool: True for the envs whose state a step left non-finite (NaN, inf or beyond
        artic.sim.status.FINITE_LIMIT), in any articulation or body, until a reset through the cache writes a finite
        state (under nan_policy 'freeze' such envs are not stepped meanwhile)."""
        lost = np.zeros(self.num_envs, bool)
        for block in self._blocks:
            lost |= host_view(block.state.status) != 0
        return lost

    def get_env_status(self, obj: Articulation | RigidDynamic) -> np.ndarray:
        """(E,) bool: True for the envs whose state went non-finite in `obj`'s articulation or body (a
        RigidDynamic or Articulation)."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        view = self.view(art)
        return np.abs(host_view(view.block.state.status)) == view.block.index(art) + 1

    def get_penetration_status(self) -> PenetrationReport:
        """Per env, the deepest contact penetration at the start of the last step and whether it is reported as
        a failure: beyond 2 cm for 20 steps without halving, or growing for 5 (docs/conventions.md, "Failures")."""
        return penetration_report(self._blocks, self.num_envs)

    def get_solver_report(self, obj: Articulation | RigidDynamic) -> dict[str, np.ndarray]:
        """The direct solver's report for the envs of `obj`'s block (an Articulation or RigidDynamic) after the last
        direct step: (E,) arrays 'pivots', 'cone_sweeps' (those that put elliptic contacts on their cone,
        solvers/cone_polish.py), 'rows', 'complementarity' (the largest violation of the LCP conditions
        in the velocity solve [m/s or rad/s]), 'bilateral_residual' (the largest |g.v - target| of a hard
        bilateral row after the position solve: what contradicting constraints left unmet), 'friction_settled',
        'fell_back' (this step was solved by PGS instead), 'fallback_count' (such steps so far), and of the body
        joints 'joint_error' (E, 2) (the largest hard-constraint error at the end of the step [m, rad]) and
        'violated_joints' (joints reported violated, get_joint_status). docs/solvers.md."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        return require_solver_report(self.view(art).block, art)

    def get_solver_iterations(self, obj: Articulation | RigidDynamic) -> np.ndarray:
        """(E,) int32: the position iterations the last step ran in each env for the block of `obj` (an
        Articulation or RigidDynamic): PGS's sweeps, fewer than its count where Articulation.solver_tolerance ended
        them early; TGS's substeps; under DIRECT 0, or the sweeps of a PGS fallback. An env that slept or stayed
        frozen through the last step keeps the count of the step it last ran."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        block = self.view(art).block
        if block.step_data is None:
            raise ValidationError(f"scene: no step has run for '{art.name}' yet; step first")
        return block.step_data.solver_iterations.numpy().copy()

    def get_contacts(self, obj: Articulation | RigidDynamic) -> ContactReport:
        """The contacts of an articulation or RigidDynamic after the last step."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        return contact_report(self.view(art).block, art, self.articulations)

    # -- rigid-body state as arrays ---------------------------------------------------------------------------------
    def _body_cache(self, body, flags):
        if not isinstance(body, RigidDynamic):
            raise ValidationError(f"scene: expected a RigidDynamic, got {type(body).__name__}")
        cache = body.articulation.create_cache()
        body.articulation.copy_internal_state_to_cache(cache, flags)
        return cache

    def get_actor_pose(self, body: RigidDynamic) -> np.ndarray:
        """(E, 7) actor poses (px, py, pz, qx, qy, qz, qw) of a RigidDynamic."""
        return self._body_cache(body, CacheFlag.ROOT_TRANSFORM).root_transform.copy()

    def set_actor_pose(self, body: RigidDynamic, poses: ArrayLike) -> None:
        """Set a RigidDynamic's pose per env ((E, 7) or (7,): px, py, pz, qx, qy, qz, qw; unit quaternions, to 1e-3)."""
        cache = self._body_cache(body, CacheFlag.ROOT_TRANSFORM)
        cache.root_transform[:] = per_env_array(
            f"rigid body '{body.name}'", "poses (px, py, pz, qx, qy, qz, qw)", poses, cache.root_transform.shape
        )
        body.articulation.apply_cache(cache, CacheFlag.ROOT_TRANSFORM)

    def get_actor_velocity(self, body: RigidDynamic) -> np.ndarray:
        """(E, 6) COM linear [m/s] then angular [rad/s] velocities, world."""
        c = self._body_cache(body, CacheFlag.ROOT_VELOCITIES)
        return np.concatenate([c.root_linear_velocity, c.root_angular_velocity], axis=1)

    def set_actor_velocity(self, body: RigidDynamic, velocities: ArrayLike) -> None:
        """Set a RigidDynamic's COM linear [m/s] then angular [rad/s] velocity per env ((E, 6) or (6,), world)."""
        cache = self._body_cache(body, CacheFlag.ROOT_VELOCITIES)
        v = per_env_array(
            f"rigid body '{body.name}'", "velocities (linear, then angular)", velocities, (self.num_envs, 6)
        )
        cache.root_linear_velocity[:] = v[:, :3]
        cache.root_angular_velocity[:] = v[:, 3:]
        body.articulation.apply_cache(cache, CacheFlag.ROOT_VELOCITIES)

    def set_kinematic_target(self, body: RigidDynamic, poses: ArrayLike) -> None:
        """Move a kinematic RigidDynamic to `poses` ((E, 7) or (7,): px, py, pz, qx, qy, qz, qw) over the next
        step (PxRigidDynamic::setKinematicTarget): it moves at the velocity that reaches them in dt, pushing the
        bodies it meets; without a new target it stops there."""
        if not isinstance(body, RigidDynamic) or not body.kinematic:
            raise ValidationError(
                f"scene: set_kinematic_target needs a RigidDynamic with kinematic = True, got {body!r}"
            )
        p = per_env_array(
            f"rigid body '{body.name}'", "kinematic targets (px, py, pz, qx, qy, qz, qw)", poses, (self.num_envs, 7)
        )
        norm = np.linalg.norm(p[:, 3:], axis=1)
        if np.any(norm < 1e-6):
            raise ValidationError(
                f"rigid body '{body.name}' kinematic targets: quaternions (qx, qy, qz, qw) must not be zero"
            )
        p[:, 3:] /= norm[:, None]
        view = self.view(body.articulation)
        view.control.kinematic_target.assign(p.reshape(self.num_envs, 1, 7))
        view.control.kinematic_pending.fill_(1)
        view.wake(np.ones(self.num_envs, bool))

    def set_kinematic_targets(self, bodies: list[RigidDynamic], poses: ArrayLike) -> None:
        """set_kinematic_target for many kinematic bodies at once, `poses` (E, k, 7) for k bodies: one write per
        block instead of one per body (a marker rig sets 39 targets a frame)."""
        bodies = list(bodies)
        p = np.array(poses, dtype=np.float64)
        if p.shape != (self.num_envs, len(bodies), 7) or not np.all(np.isfinite(p)):
            raise ValidationError(
                f"scene: set_kinematic_targets needs finite poses of shape ({self.num_envs}, {len(bodies)}, 7) "
                f"(envs, bodies, px py pz qx qy qz qw), got {p.shape}"
            )
        norm = np.linalg.norm(p[..., 3:], axis=2)
        if np.any(norm < 1e-6):
            raise ValidationError("scene: set_kinematic_targets: quaternions (qx, qy, qz, qw) must not be zero")
        p[..., 3:] /= norm[..., None]
        by_block: dict[int, tuple] = {}
        for k, body in enumerate(bodies):
            if not isinstance(body, RigidDynamic) or not body.kinematic:
                raise ValidationError(
                    f"scene: set_kinematic_targets needs kinematic RigidDynamics (kinematic = True), got {body!r}"
                )
            block = self.view(body.articulation).block
            by_block.setdefault(id(block), (block, [], []))
            by_block[id(block)][1].append(block.ranges(body.articulation)[2])
            by_block[id(block)][2].append(k)
        for block, trees, ks in by_block.values():
            targets, pending = block.control.kinematic_target.numpy(), block.control.kinematic_pending.numpy()
            targets[:, trees] = p[:, ks]
            pending[:, trees] = 1
            block.control.kinematic_target.assign(targets)
            block.control.kinematic_pending.assign(pending)
            block.wake(np.ones(self.num_envs, bool))

    def get_link_poses(self, obj: Articulation | RigidDynamic) -> np.ndarray:
        """(E, L, 7) world poses (px, py, pz, qx, qy, qz, qw) of an articulation's links, in link order
        (PxArticulationLink::getGlobalPose for every link and env)."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        view = self.view(art)
        view.ensure_kinematics()
        return view.state.link_pose.numpy().copy()

    def remove_articulation(self, art: Articulation | RigidDynamic) -> None:
        """Remove an articulation or RigidDynamic from the scene; refused while a body joint joins one of its links."""
        if isinstance(art, RigidDynamic):
            art = art.articulation
        if art._scene is not self:
            raise StateError(f"articulation '{art.name}' is not in this scene")
        joined = [
            j.name
            for j in self.joints
            if any(isinstance(b, Link) and b.articulation is art for b in (j.body_a, j.body_b))
        ]
        if joined:
            raise StateError(
                f"articulation '{art.name}' is joined by body joint(s) {joined}; remove them first (scene.remove_joint)"
            )
        del self._views[id(art)]
        self.articulations.remove(art)
        art._scene = None
        self._regroup()

    def view(self, art: Articulation | RigidDynamic) -> ArticulationView:
        """The device blocks (model, state, control, data) of an articulation (or RigidDynamic) in this scene."""
        if isinstance(art, RigidDynamic):
            art = art.articulation
        if not isinstance(art, Articulation):
            raise ValidationError(f"scene: expected an artic.Articulation or RigidDynamic, got {type(art).__name__}")
        try:
            return self._views[id(art)]
        except KeyError:
            raise StateError(f"articulation '{art.name}' is not in this scene") from None

    # -- body joints ------------------------------------------------------------------------------------------------
    def add_joint(self, joint: JointBase) -> JointBase:
        """Add a body joint (description/body_joints.py) between bodies already in this scene (or a body and the
        world), in every env. The bodies it joins are stepped together from now on, and no longer collide with
        each other unless joint.collision_enabled was set before."""
        if not isinstance(joint, JointBase):
            raise ValidationError(
                f"scene: add_joint takes a body joint (artic.HingeJoint, ...), got {type(joint).__name__}"
            )
        if joint._scene is not None:
            raise TopologyError(f"{joint._owner()} is already in a scene; remove it first")
        for which, body in (("A", joint.body_a), ("B", joint.body_b)):
            if isinstance(body, Link) and body.articulation._scene is not self:
                raise StateError(
                    f"{joint._owner()}: body {which} '{body.name}' is not in this scene; add its "
                    "articulation or rigid body first (scene.add_articulation / add_actor)"
                )
            if isinstance(body, RigidStatic) and body not in self.statics:
                raise StateError(
                    f"{joint._owner()}: static body {which} '{body.name}' is not in this scene; add it "
                    "first (scene.add_actor)"
                )
        joint._scene = self
        self.joints.append(joint)
        self._joint_views[id(joint)] = BodyJointView(joint, self.num_envs)
        self._unwoken.append(joint)
        self._regroup()  # wakes the joint's block (inside `adding()`: once it closes)
        return joint

    def remove_joint(self, joint: JointBase) -> None:
        """Remove a body joint from the scene; from the next step it no longer acts."""
        if getattr(joint, "_scene", None) is not self:
            raise StateError(f"{getattr(joint, 'name', joint)!r} is not a joint of this scene")
        self.joints.remove(joint)
        del self._joint_views[id(joint)]
        joint._scene = None
        self._regroup()

    def _joint_view(self, joint) -> BodyJointView:
        try:
            jv = self._joint_views[id(joint)]
        except (KeyError, TypeError):
            raise StateError(
                f"{getattr(joint, 'name', joint)!r} is not a joint of this scene; scene.add_joint it first"
            ) from None
        if jv.block is None:
            raise StateError(
                f"{joint._owner()} was added inside `with scene.adding():` and has no block until that closes; "
                "read or set it after the with-block"
            )
        return jv

    def _on_joint_changed(self, joint, what: str):
        jv = self._joint_view(joint)
        j = joint
        shape = (self.num_envs, j.num_coordinates)
        if what == "range":
            jv.write_ranges(np.broadcast_to(j._range[:, 0], shape), np.broadcast_to(j._range[:, 1], shape))
        elif what == "lock":
            jv.write_locks(np.broadcast_to(j._locked, shape))
        elif what == "target":
            jv.write_targets(np.broadcast_to(j._target[:, 0], shape), np.broadcast_to(j._target[:, 1], shape))
        else:
            jv.block.mark_dirty()  # re-uploaded once, at the next step or read
        jv.block.wake(np.ones(self.num_envs, bool))

    def get_joint_coordinates(self, joint: JointBase) -> np.ndarray:
        """(E, m) coordinates of a body joint in every env [rad or m]; angles keep counting past +-pi."""
        return self._joint_view(joint).coordinates()

    def set_joint_coordinates(self, joint: JointBase, values: ArrayLike) -> None:
        """Pose every env so that the joint's coordinates take `values` ((E, m) or (m,)) and every joint of its
        block holds, moving the freest bodies (assemble.py); velocities are left as they are. Values outside the
        joint's ranges or away from a locked coordinate's value are refused (StateError), and so is a pose that
        would move another joint of the block out of its range; other joints' locked coordinates are held. Meant
        for setting up, before or between steps, not for driving a simulation (use drives)."""
        jv = self._joint_view(joint)
        v = jv._shaped(values, "coordinates").astype(np.float64)
        check_targets(jv.block, jv.index, v)  # the joint's own ranges and locks
        assemble(jv.block, {(jv.index, k): v[:, k] for k in range(joint.num_coordinates)})
        for view in self._views.values():
            if view.block is jv.block:
                view.after_step(links_written=False)  # poses changed under the articulation views
        jv.block.wake(np.ones(self.num_envs, bool))

    def set_joint_targets(
        self, joint: JointBase, positions: ArrayLike | None = None, velocities: ArrayLike | None = None
    ) -> None:
        """Drive targets of a joint's coordinates per env ((E, m) or (m,)) [rad or m, rad/s or m/s]."""
        jv = self._joint_view(joint)
        jv.write_targets(positions, velocities)
        jv.block.wake(np.ones(self.num_envs, bool))

    def get_joint_targets(self, joint: JointBase) -> tuple[np.ndarray, np.ndarray]:
        """(positions, velocities) (E, m) float32: a body joint's drive targets per env [rad or m, rad/s or m/s]."""
        jv = self._joint_view(joint)
        return jv.arrays["target_position"].numpy().copy(), jv.arrays["target_velocity"].numpy().copy()

    def set_joint_ranges(self, joint: JointBase, low: ArrayLike, high: ArrayLike) -> None:
        """Coordinate ranges per env ((E, m) or (m,), -inf/inf for an open side); they act from the next step."""
        jv = self._joint_view(joint)
        jv.write_ranges(low, high)
        jv.block.wake(np.ones(self.num_envs, bool))

    def get_joint_ranges(self, joint: JointBase) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) (E, m) float32: a body joint's coordinate ranges per env [rad or m], +-inf on an open side."""
        jv = self._joint_view(joint)
        return jv.arrays["range_low"].numpy().copy(), jv.arrays["range_high"].numpy().copy()

    def set_joint_locked(self, joint: JointBase, locked: ArrayLike) -> None:
        """Lock (True) or release coordinates per env ((E, m) or (m,) booleans); a coordinate locks at the value it
        has when locked."""
        jv = self._joint_view(joint)
        jv.write_locks(locked)
        jv.block.wake(np.ones(self.num_envs, bool))

    def get_joint_locked(self, joint: JointBase) -> np.ndarray:
        """(E, m) bool: which coordinates of a body joint are locked in each env."""
        return self._joint_view(joint).arrays["locked"].numpy().astype(bool)

    def set_joint_enabled(self, joint: JointBase, enabled: ArrayLike) -> None:
        """Switch a joint on (True) or off (False) per env ((E,) booleans or one bool), from the next step: a
        disabled joint applies nothing and reports zero forces (ODE's dJointEnable/dJointDisable, PhysX's
        PxConstraintFlag::eDISABLE_CONSTRAINT, here per env). Its bodies stay in one block."""
        jv = self._joint_view(joint)
        jv.write_enabled(enabled)
        jv.block.wake(np.ones(self.num_envs, bool))

    def get_joint_enabled(self, joint: JointBase) -> np.ndarray:
        """(E,) bool."""
        return self._joint_view(joint).arrays["enabled"].numpy()[:, 0].astype(bool)

    def get_joint_forces(self, joint: JointBase) -> JointForces:
        """The joint's constraint multipliers and wrenches over the last step (zero before any step)."""
        return joint_forces(self._joint_view(joint), self._last_dt or 1.0)

    def get_joint_frames(self, joint: JointBase) -> JointFrames:
        """Frames C, D, G and the error T_err of the joint in every env, at the current poses."""
        return joint_frames(self._joint_view(joint))

    def get_joint_status(self, joint: JointBase) -> JointStatus:
        """The joint's violation status in every env (`JointStatus`): whether its hard constraints have stayed
        beyond tolerance (1 cm, 0.05 rad) for 20 steps without closing, which a step reports through nan_policy,
        and their errors at the current poses (T_err's translation and angle, as get_joint_frames gives them)."""
        return joint_status(self._joint_view(joint))

    # -- forwarded from Articulation ------------------------------------------------------------------------------
    def _on_description_changed(self, art, what, part=None):
        if what == "topology":
            raise TopologyError(f"articulation '{art.name}' is in a scene; remove it before changing its topology")
        self.view(art).on_description_changed(what, part)

    def _create_cache(self, art):
        return self.view(art).create_cache()

    def _copy_internal_state_to_cache(self, art, cache, flags):
        self.view(art).copy_internal_state_to_cache(cache, flags)

    def _apply_cache(self, art, cache, flags):
        self.view(art).apply_cache(cache, flags)

    def _common_init(self, art):
        self.view(art).common_init()

    def _inverse_dynamics(self, art):
        return self.view(art)
