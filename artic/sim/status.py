"""Per-env status: a step that leaves an env's state non-finite is detected in the step kernel and reported.

The step kernel (step_kernel.py) checks, at the end of each env's step, every joint position and velocity and every
root pose and velocity. A value that is NaN, infinite or beyond FINITE_LIMIT in magnitude marks the env: at 1e10
float32 resolves a value only to about 1e3 (a kilometre, or a kilometre per second), so such a state no longer
describes a simulation; inputs up to description.validate.MAX_MAGNITUDE (1e15) are accepted, and a state that runs
away towards them is reported, not carried on silently. The mark: `StateArrays.status[env]` becomes
1 + the first tree (articulation of the block) found bad, and the block's `status_flag` is raised so that the host
learns of it without scanning every env; the code is stored negated until the host has reported it (so an env
is reported once per loss). The check reads what the step already holds in registers or cache, n + 13 T floats
per env.

What happens next is the scene's `nan_policy` (chosen at construction, `NanPolicy`):
* WARN (default): the env keeps stepping (its state stays non-finite and other envs are untouched: envs never
  share data); a RuntimeWarning names the articulations and the envs, at most once per WARN_INTERVAL seconds of
  wall time (envs lost in between are collected and warned about at the first step after the interval).
* RAISE: `Scene.step` raises `NonFiniteStateError` naming them, after the step (the state is left as it is).
* FREEZE: the step restores the env's state at the start of that step (its last finite state) and the env is not
  stepped again until a reset writes a finite state; a warning is given as for WARN.
Writing a state through the cache (`apply_cache`) or the actor/joint setters re-checks the block's envs and clears
the status of every env whose state is finite again (`refresh_status`).

Joints between bodies have a second status, per env and joint (constraints/body_joint_report.py): a hard joint whose
error stays beyond its tolerance (1 cm, 0.05 rad) for 20 steps without halving is marked by the step
(BodyJointArrays.violated = -1, the block's flag raised) and reported under the same policy: a RuntimeWarning naming
the joints, envs and errors (WARN), `ConstraintViolationError` (RAISE), or the env restored to the start of that
step and frozen, its status JOINT_VIOLATION, until a reset (FREEZE). A joint is reported once until its error is
back within tolerance.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ..constraints.body_joint_report import ANGULAR_TOLERANCE, LINEAR_TOLERANCE
from ..constraints.body_joint_rows import BodyJointArrays
from ..constraints.contact_status import PENETRATION_TOLERANCE, PenetrationStatus
from ..constraints.persistence import GROWTH_STEPS, PERSIST_STEPS
from ..core.model import Tree
from ..core.parallel import launch_envs
from ..core.state import StateArrays
from ..core.struct_refs import opt_in as _struct_refs
from ..enums import NanPolicy
from ..errors import ArticError, ValidationError

_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

if TYPE_CHECKING:
    from .block import Block

FINITE_LIMIT = 1.0e10  # [m, rad, m/s, rad/s]: state values beyond this are reported as lost (non-finite)
# the check runs in every step; benchmarks/bench_step.py turns it off (before the first step) to measure its cost
CHECK_STATE = True
STATUS_OFF = wp.constant(0)  # the step kernel's status_mode: no check (benchmark only)
STATUS_CHECK = wp.constant(1)  # check and mark
STATUS_FREEZE = wp.constant(2)  # check, mark, restore and freeze
WARN_INTERVAL = 10.0  # [s] of wall time between two warnings of one kind
JOINT_VIOLATION = wp.constant(1 << 20)  # the status of an env frozen for a joint's violation (beyond 1 + trees)
CONTACT_PENETRATION = wp.constant(1 << 21)  # the status of an env frozen for its bodies' penetration


class NonFiniteStateError(ArticError, FloatingPointError):
    """A step left the state of some envs non-finite (raised by Scene.step under NanPolicy.RAISE)."""


class ConstraintViolationError(ArticError):
    """A hard joint between bodies stayed beyond its tolerance, or bodies sank into each other (raised by
    Scene.step under NanPolicy.RAISE)."""


def as_nan_policy(value: NanPolicy | str | int) -> NanPolicy:
    if isinstance(value, str):
        try:
            return NanPolicy[value.upper()]
        except KeyError:
            pass
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return NanPolicy(value)
        except ValueError:
            pass
    raise ValidationError(f"scene: unknown nan_policy {value!r}; use 'warn', 'raise' or 'freeze' (or artic.NanPolicy)")


@wp.func
def _bad(x: float) -> int:
    # NaN fails every comparison, so one test covers NaN, inf and overflow-bound magnitudes
    if wp.abs(x) <= FINITE_LIMIT:
        return 0
    return 1


@wp.func
def _bad_vec3(v: wp.vec3) -> int:
    return _bad(v[0]) + _bad(v[1]) + _bad(v[2])


@wp.func
def state_status(tree: Tree, st: StateArrays, env: int) -> int:
    """0 when the env's joint and root state is finite, else 1 + the first tree with a bad value."""
    for i in range(tree.link_count):
        d0 = tree.joint_dof_start[i]
        for k in range(tree.joint_dof_count[i]):
            if _bad(st.joint_q[env, d0 + k]) + _bad(st.joint_qd[env, d0 + k]) != 0:
                return 1 + tree.link_tree[i]
    for t in range(tree.tree_count):
        x = st.root_pose[env, t]
        q = wp.transform_get_rotation(x)
        bad = _bad_vec3(wp.transform_get_translation(x)) + _bad(q[0]) + _bad(q[1]) + _bad(q[2]) + _bad(q[3])
        bad += _bad_vec3(st.root_lin_vel[env, t]) + _bad_vec3(st.root_ang_vel[env, t])
        if bad != 0:
            return 1 + t
    return 0


@wp.kernel
def _refresh_status(
    env_offset: int, tree: Tree, st: StateArrays, ja: BodyJointArrays, ps: PenetrationStatus, recheck: int
):
    env = env_offset + wp.tid()
    if st.status[env] != 0 or recheck != 0:
        was = st.status[env]
        code = state_status(tree, st, env)
        if was < 0:
            code = -code  # still lost and not reported yet: keep it for the host
        st.status[env] = code
        if wp.abs(was) >= JOINT_VIOLATION and code == 0:  # a reset: joints and contacts are watched afresh
            for j in range(ja.violated.shape[1]):
                ja.violated[env, j] = 0
                ja.error_track[env, j] = wp.vec4(0.0)
            ps.violated[env] = 0
            ps.track[env] = wp.vec4(0.0)


def refresh_status(block: Block, recheck: bool = False) -> None:
    """Clear the status of the block's envs whose state is finite again (after a reset through the cache); with
    `recheck`, set every env's status from its state (a new block after regrouping: frozen envs whose state is
    finite are released)."""
    launch_envs(
        _refresh_status,
        block.num_envs,
        [block.model.tree, block.state.arrays, block.body_joint_arrays, block.penetration, int(recheck)],
        block.device,
    )


class StatusMonitor:
    """The host side: reads each block's flag after a step and warns or raises (rate-limited, see above)."""

    def __init__(self, policy: NanPolicy):
        self.policy = policy
        self._last_warning = {"state": -np.inf, "joint": -np.inf, "contact": -np.inf}  # each kind's last warning
        self._pending: dict[str, set] = {}  # articulation name -> envs not reported yet
        self._pending_joints: dict[str, dict] = {}  # joint name -> {env: (linear, angular) error}
        self._pending_contacts: dict[str, dict] = {}  # "'a' into 'b'" -> {env: depth}
        self._host_flags = {}  # id(block) -> (its flag, a pinned host copy of it read one step late), CUDA only

    def _flag(self, block) -> bool:
        if block.status_flag_host is not None:  # the CPU: a view of the flag's memory (block.py)
            return block.status_flag_host[0] != 0
        flag = block.state.status_flag
        if self.policy == NanPolicy.RAISE:
            return bool(flag.numpy()[0])  # synchronizes: raising must not lag
        held = self._host_flags.get(id(block))
        if held is None or held[0] is not flag:  # a new block (regrouping) gets its own pinned copy
            held = self._host_flags[id(block)] = (flag, wp.zeros(1, dtype=wp.int32, device="cpu", pinned=True))
        host = held[1]
        seen = bool(host.numpy()[0])  # a copy an earlier step queued: no synchronization per step
        wp.copy(host, flag)
        return seen

    @property
    def pending(self) -> bool:
        """Warnings held back by the rate limit, to be given after a later step."""
        return bool(self._pending or self._pending_joints or self._pending_contacts)

    def after_step(self, blocks: list[Block]) -> None:
        flagged = [block for block in blocks if self._flag(block)]
        if not flagged and not (self._pending or self._pending_joints or self._pending_contacts):
            return  # the common case, at every step: nothing raised, nothing waiting for its warning
        new, joints, contacts = {}, {}, {}
        for block in flagged:
            block.state.status_flag.zero_()
            _collect_states(block, new)
            _collect_joints(block, joints)
            _collect_contacts(block, contacts)
        if new and self.policy == NanPolicy.RAISE:
            raise NonFiniteStateError(
                f"scene: the step left a non-finite state in {_describe(new)}; check "
                "masses, inertias, gains and time step, or choose "
                "Scene(nan_policy='freeze')"
            )
        if joints and self.policy == NanPolicy.RAISE:
            raise ConstraintViolationError(f"scene: {_describe_joints(joints)}; {_JOINT_ADVICE}")
        if contacts and self.policy == NanPolicy.RAISE:
            raise ConstraintViolationError(f"scene: {_describe_contacts(contacts)}; {_CONTACT_ADVICE}")
        for name, depths in contacts.items():
            self._pending_contacts.setdefault(name, {}).update(depths)
        for name, envs in new.items():
            self._pending.setdefault(name, set()).update(envs)
        for name, errors in joints.items():
            self._pending_joints.setdefault(name, {}).update(errors)
        what = "frozen at their last finite state until reset" if self.policy == NanPolicy.FREEZE else "still stepping"
        if self._pending and self._due("state"):
            warnings.warn(
                f"scene: non-finite state (NaN, inf or |x| > {FINITE_LIMIT:g}) in {_describe(self._pending)} "
                f"({what}); scene.env_status shows every env, a reset through the cache clears it. Check "
                "masses, inertias, gains and the time step",
                RuntimeWarning,
                stacklevel=3,
            )
            self._pending = {}
        if self._pending_joints and self._due("joint"):
            what = (
                "frozen at the start of that step until reset" if self.policy == NanPolicy.FREEZE else "still stepping"
            )
            warnings.warn(
                f"scene: {_describe_joints(self._pending_joints)} ({what}); {_JOINT_ADVICE}",
                RuntimeWarning,
                stacklevel=3,
            )
            self._pending_joints = {}
        if self._pending_contacts and self._due("contact"):
            what = "frozen before that step until reset" if self.policy == NanPolicy.FREEZE else "still stepping"
            warnings.warn(
                f"scene: {_describe_contacts(self._pending_contacts)} ({what}); {_CONTACT_ADVICE}",
                RuntimeWarning,
                stacklevel=3,
            )
            self._pending_contacts = {}

    def _due(self, kind: str) -> bool:
        """Whether a warning of this kind may be given now (one per WARN_INTERVAL; what comes in between is
        collected and given with the next)."""
        now = time.monotonic()
        if now - self._last_warning[kind] < WARN_INTERVAL:
            return False
        self._last_warning[kind] = now
        return True


_JOINT_ADVICE = (
    "its bodies cannot meet the joint as placed (frames or lengths that disagree, other joints in the way), or the "
    "step is too coarse for its speed (TGS or a smaller dt); scene.get_joint_status(joint) shows every env"
)


_PERSISTENCE = f"{int(PERSIST_STEPS)} steps without halving, or growing for {int(GROWTH_STEPS)}"
_CONTACT_ADVICE = (
    "the solver's iterations do not converge for this mass ratio or stack (more position iterations, TGS, or "
    "the direct solver), or the step is too large for the speeds; scene.get_penetration_status() shows every env"
)


def _collect_contacts(block: Block, contacts: dict) -> None:
    ps = block.penetration
    violated = ps.violated.numpy()
    fresh = _take_fresh(violated, ps.violated, block.device)
    if not fresh.any():
        return
    depth, links = ps.depth.numpy(), ps.links.numpy()
    for env in np.flatnonzero(fresh):
        name = " and ".join(f"'{block.link_owner(int(i))}'" for i in links[env])
        contacts.setdefault(name, {})[int(env)] = float(depth[env])


def _env_list(envs: list[int]) -> str:
    """Sorted env indices as a message shows them: the first eight, then how many."""
    return ", ".join(str(i) for i in envs[:8]) + (f", ... ({len(envs)} envs)" if len(envs) > 8 else "")


def _describe_contacts(contacts: dict) -> str:
    parts = []
    for name, depths in contacts.items():
        envs = sorted(depths)
        parts.append(f"{name} env(s) {_env_list(envs)} (env {envs[0]}: {depths[envs[0]]:.3g} m)")
    return f"contact penetration deeper than {float(PENETRATION_TOLERANCE):g} m for {_PERSISTENCE}: " + "; ".join(parts)


def _take_fresh(codes: np.ndarray, array: wp.array, device: wp.Device) -> np.ndarray:
    """The entries the step marked (negative) and not reported yet, stored positive again."""
    fresh = codes < 0
    if fresh.any():
        if device.is_cpu:
            codes[fresh] = -codes[fresh]  # the NumPy array is the device memory
        else:
            array.assign(np.abs(codes))
    return fresh


def _collect_states(block: Block, new: dict) -> None:
    status = block.state.status.numpy()
    fresh = _take_fresh(status, block.state.status, block.device)
    for k, art in enumerate(block.arts):
        envs = np.flatnonzero(fresh & (np.abs(status) == k + 1))
        if len(envs):
            new.setdefault(art.name, set()).update(envs.tolist())


def _collect_joints(block: Block, joints: dict) -> None:
    if not block.joints:
        return
    ja = block.body_joint_arrays
    violated = ja.violated.numpy()
    fresh = _take_fresh(violated, ja.violated, block.device)
    if not fresh.any():
        return
    error = ja.error.numpy()
    for j, joint in enumerate(block.joints):
        for env in np.flatnonzero(fresh[:, j]):
            joints.setdefault(joint.name, {})[int(env)] = tuple(float(x) for x in error[env, j])


def _describe_joints(joints: dict) -> str:
    parts = []
    for name, errors in joints.items():
        envs = sorted(errors)
        lin, ang = errors[envs[0]]
        parts.append(f"joint '{name}' env(s) {_env_list(envs)} (env {envs[0]}: {lin:.3g} m, {ang:.3g} rad)")
    return (
        f"hard joint error beyond {float(LINEAR_TOLERANCE):g} m or {float(ANGULAR_TOLERANCE):g} rad for "
        f"{_PERSISTENCE}: " + "; ".join(parts)
    )


def _describe(by_name: dict) -> str:
    parts = []
    for name, envs in by_name.items():
        parts.append(f"articulation '{name}' env(s) {_env_list(sorted(envs))}")
    return "; ".join(parts)
