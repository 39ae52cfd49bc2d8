"""What a step reports, read from a block's arrays on the host: contacts (`ContactReport`), body-joint forces and
frames (`JointForces`, `JointFrames`; ArtiSynth's joints chapter, sections 3.3.2, 3.3.5, 3.3.7), the direct
solver's per-env report, and the warnings a step gives about dropped contacts and solver fallbacks (never
silent: docs/conventions.md)."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..constraints.body_joint_rows import ROW_LOCKED, ROW_ON, row_layout
from ..description.articulation import Articulation
from ..description.body_joints import coordinates_to_tcd_mode
from ..errors import ArticError, ValidationError
from ..math.np_spatial import Transform
from . import status
from .body_joint_view import BodyJointView, refresh_body_joint_kinematics

if TYPE_CHECKING:
    from .block import Block
    from .status import StatusMonitor

FALLBACK_WARN_INTERVAL = 10.0  # [s] of wall time between two warnings about direct-solver fallbacks


# -- contacts -------------------------------------------------------------------------------------------------------


@dataclass
class ContactReport:
    """The contacts of one articulation or rigid body after the last step (E envs, C slots; entries past count[e]
    are stale). Forces are what link a received over the step, world frame, applied at the point."""

    count: np.ndarray  # (E,) int
    link_a: np.ndarray  # (E, C) int: the body's link (low-level order), pushed along +normal
    link_b: np.ndarray  # (E, C) int: the other link (in its own articulation), -1 for a static shape
    articulation_b: np.ndarray  # (E, C) int: the other link's articulation (index in scene.articulations), -1 static
    shape_a: list  # per geometry index: the Shape objects (index with shape_index_a and shape_index_b)
    shape_index_a: np.ndarray  # (E, C) int
    shape_index_b: np.ndarray  # (E, C) int
    point: np.ndarray  # (E, C, 3) [m]
    normal: np.ndarray  # (E, C, 3) unit, from the other body towards a
    separation: np.ndarray  # (E, C) [m] at detection, negative when penetrating
    force: np.ndarray  # (E, C, 3) [N]: on the body's link
    overflow: np.ndarray  # (E,) contacts dropped for lack of slots in the last step (the body's whole block)

    def total_force(self) -> np.ndarray:
        """(E, 3) sum of the contact forces on the body, per env [N]."""
        mask = np.arange(self.force.shape[1])[None, :] < self.count[:, None]
        return (self.force * mask[..., None]).sum(axis=1)


def contact_report(block: Block, art: Articulation, articulations: list[Articulation]) -> ContactReport:
    """The contacts of `art` (in `block`); `articulations`: the scene's, which articulation_b indexes."""
    c = _contact_arrays(block, art)
    scene_index = {id(a): k for k, a in enumerate(articulations)}
    to_scene = np.array([scene_index[id(a)] for a in block.arts] + [-1])
    return ContactReport(shape_a=[s for s, _ in block.shapes], articulation_b=to_scene[c.pop("other")], **c)


def _contact_arrays(block, art: Articulation) -> dict:
    """The contacts that involve `art`, per env, compacted and turned so that link a is art's link (normal
    from the other body towards it, force on it). Link indices are local to their articulation; `other` is
    the other articulation's index in this block (-1 for a static shape)."""
    block.ensure_step_arrays()
    cp = block.contact_points
    rows = block.contact_rows
    _, (l0, l1), _ = block.ranges(art)
    count = cp.count.numpy()
    la, lb = cp.link_a.numpy(), cp.link_b.numpy()
    slots = la.shape[1]
    valid = np.arange(slots)[None, :] < count[:, None]
    mine_a = valid & (la >= l0) & (la < l1)
    mine_b = valid & (lb >= l0) & (lb < l1) & ~mine_a
    keep = mine_a | mine_b
    order = np.argsort(~keep, axis=1, kind="stable")  # kept contacts first, in solver order

    def pick(a):
        return np.take_along_axis(a, order.reshape(order.shape + (1,) * (a.ndim - 2)), axis=1)

    sa, sb = cp.shape_a.numpy(), cp.shape_b.numpy()
    la_, lb_ = np.where(mine_b, lb, la), np.where(mine_b, la, lb)
    sign = np.where(mine_b, -1.0, 1.0)[..., None]
    tree_of = block.model.host["link_tree"]
    other = np.where(lb_ >= 0, tree_of[np.maximum(lb_, 0)], -1)
    starts = np.array(block.link_start)
    local_b = np.where(lb_ >= 0, lb_ - starts[np.maximum(other, 0)], -1)
    return {
        "count": keep.sum(axis=1),
        "link_a": pick(la_ - l0),
        "link_b": pick(local_b),
        "other": pick(other),
        "shape_index_a": pick(np.where(mine_b, sb, sa)),
        "shape_index_b": pick(np.where(mine_b, sa, sb)),
        "point": pick(cp.point.numpy()),
        "normal": pick(cp.normal.numpy() * sign),
        "separation": pick(cp.separation.numpy()),
        "force": pick(rows.force.numpy() * sign),
        "overflow": cp.overflow.numpy().copy(),
    }


# -- body joints --------------------------------------------------------------------------------------------------


@dataclass
class JointFrames:
    """A joint's frames in every env (E envs; poses as (px, py, pz, qx, qy, qz, qw)): C and D in the world, T_CD,
    the constraint frame G (the nearest pose to C that satisfies the joint, section 3.3.2: T_CD = T_GD T_CG) in the
    world and in D, and the error T_err = T_CG."""

    c_world: np.ndarray  # (E, 7)
    d_world: np.ndarray  # (E, 7)
    g_world: np.ndarray  # (E, 7)
    tcd: np.ndarray  # (E, 7)
    tgd: np.ndarray  # (E, 7)
    terr: np.ndarray  # (E, 7)


@dataclass
class JointStatus:
    """A joint's violation status per env (E envs; status.py): its hard constraints' errors at the current poses,
    in the measure the status watches, and whether it is reported as violated."""

    violated: np.ndarray  # (E,) bool: reported (constraints/persistence.py's rule) and not back within tolerance
    linear_error: np.ndarray  # (E,) [m] norm of the constrained linear slots' errors (T_err's translation)
    angular_error: np.ndarray  # (E,) [rad] of the angular ones (T_err's rotation angle, to first order)
    steps: np.ndarray  # (E,) int: steps in a row beyond tolerance without halving


@dataclass
class PenetrationReport:
    """The scene's contact penetration status per env (E envs; constraints/contact_status.py), over its blocks."""

    violated: np.ndarray  # (E,) bool: reported (constraints/persistence.py's rule) and not back within tolerance
    depth: np.ndarray  # (E,) [m] the deepest penetration at the start of the last step
    steps: np.ndarray  # (E,) int: steps in a row beyond tolerance without halving


def penetration_report(blocks: list[Block], num_envs: int) -> PenetrationReport:
    violated, depth, steps = np.zeros(num_envs, bool), np.zeros(num_envs), np.zeros(num_envs, np.int32)
    for block in blocks:
        ps = block.penetration
        violated |= ps.violated.numpy() != 0
        depth = np.maximum(depth, ps.depth.numpy())
        steps = np.maximum(steps, ps.track.numpy()[:, 0].astype(np.int32))
    return PenetrationReport(violated, depth, steps)


@dataclass
class JointForces:
    """A joint's constraint forces over the last step (section 3.3.7), per env (E envs, n constraints, m
    coordinates). Multipliers are impulses / dt [N or N m], in the joint's constraint order (bilateral constraints,
    then one range constraint per coordinate); wrenches are (force [N], torque [N m])."""

    constraint_force: np.ndarray  # (E, n) multiplier of each constraint, 0 where it is not engaged
    bilateral: np.ndarray  # (E, n) bool: the constraint is bilateral (a constrained slot or a locked coordinate)
    engaged: np.ndarray  # (E, n) bool: an engaged unilateral (range) constraint
    drive_force: np.ndarray  # (E, m) drive force of each coordinate
    bilateral_wrench_c: np.ndarray  # (E, 6) in frame C, about its origin
    unilateral_wrench_c: np.ndarray  # (E, 6)
    drive_wrench_c: np.ndarray  # (E, 6)
    wrench_a: np.ndarray  # (E, 6) everything the joint applied to A, world, torque about A's COM
    wrench_b: np.ndarray  # (E, 6) on B, torque about B's COM (about the world origin for the world or a static B)

    @property
    def bilateral_count(self) -> np.ndarray:
        """(E,) bilateral constraints (ArtiSynth's numBilateralConstraints)."""
        return self.bilateral.sum(axis=1)

    @property
    def engaged_count(self) -> np.ndarray:
        """(E,) engaged unilateral constraints (numEngagedUnilateralConstraints)."""
        return self.engaged.sum(axis=1)


def joint_frames(jv: BodyJointView) -> JointFrames:
    """Frames C, D, G and T_err of a body joint (its view, body_joint_view.py) in every env, at the current poses."""
    refresh_body_joint_kinematics(jv.block)
    joint = jv.joint
    coord = jv.arrays["coord"].numpy().astype(np.float64)
    c_w = jv.arrays["frame_c"].numpy()[:, 0].astype(np.float64)
    d_w = jv.arrays["frame_d"].numpy()[:, 0].astype(np.float64)
    tcd = jv.arrays["tcd"].numpy()[:, 0].astype(np.float64)
    slots = [s for _, s in joint._coordinates]
    tgd, g_w, terr = (np.empty_like(tcd) for _ in range(3))
    for e in range(jv.num_envs):  # a query, not the step: host float64 is fine here
        g = coordinates_to_tcd_mode(joint._mode, slots, coord[e])
        tgd[e] = g.as_array()
        g_w[e] = (Transform.from_array(d_w[e]) * g).as_array()
        terr[e] = (g.inverse() * Transform.from_array(tcd[e])).as_array()
    return JointFrames(c_w, d_w, g_w, tcd, tgd, terr)


def joint_status(jv: BodyJointView) -> JointStatus:
    """A body joint's violation status, with its errors at the current poses."""
    refresh_body_joint_kinematics(jv.block)
    error = jv.arrays["error"].numpy()[:, 0].astype(np.float64)
    violated = jv.arrays["violated"].numpy()[:, 0] != 0
    steps = jv.arrays["error_track"].numpy()[:, 0, 0].astype(np.int32)
    return JointStatus(violated, error[:, 0], error[:, 1], steps)


def joint_forces(jv: BodyJointView, dt: float) -> JointForces:
    """A body joint's constraint forces over the last step of length dt [s]."""
    joint = jv.joint
    r0, r1 = jv.rows
    a = jv.block.body_joint_arrays
    lam = (a.row_lambda.numpy()[:, r0:r1] + a.row_lambda2.numpy()[:, r0:r1]) / dt
    active = a.row_active.numpy()[:, r0:r1]
    m, nb = joint.num_coordinates, joint.bilateral_count
    drive, limit, bil = row_layout(m, nb)
    force = np.concatenate([lam[:, bil], lam[:, limit]], axis=1)
    bilateral = np.concatenate([np.ones((jv.num_envs, nb), bool), active[:, limit] == int(ROW_LOCKED)], axis=1)
    engaged = np.concatenate(
        [np.zeros((jv.num_envs, nb), bool), (active[:, limit] == int(ROW_ON)) & (lam[:, limit] != 0.0)], axis=1
    )
    force[~(bilateral | engaged)] = 0.0
    wc = jv.arrays["wrench_c"].numpy()
    return JointForces(
        force,
        bilateral,
        engaged,
        lam[:, drive],
        wc[:, 0],
        wc[:, 1],
        wc[:, 2],
        jv.arrays["wrench_a"].numpy()[:, 0],
        jv.arrays["wrench_b"].numpy()[:, 0],
    )


# -- the direct solver and the step's warnings ---------------------------------------------------------------------


def solver_report(block: Block) -> dict[str, np.ndarray] | None:
    """The direct solver's per-env report of the last direct step of `block` (NumPy copies), None before one."""
    if block.direct is None:
        return None
    da = block.direct[1]
    return {
        "pivots": da.pivots.numpy().copy(),
        "cone_sweeps": da.cone_sweeps.numpy().copy(),
        "rows": da.rows.numpy().copy(),
        "complementarity": da.complementarity.numpy().copy(),
        "bilateral_residual": da.bilateral_residual.numpy().copy(),
        "friction_settled": da.settled.numpy() != 0,
        "pivot_budget_hit": da.budget_hit.numpy() != 0,
        "fell_back": da.fallback.numpy() != 0,
        "fallback_count": da.fallback_count.numpy().copy(),
        "deadzone_impulse": da.deadzone_impulse.numpy()[:, : block.deadzones.count].copy(),
        **_joint_errors(block),
    }


def _joint_errors(block: Block) -> dict[str, np.ndarray]:
    """The body joints' side of a solver report: the largest hard-constraint error per env at the end of the last
    step (E, 2) [m, rad] and how many joints are reported violated (sim/status.py)."""
    e = block.num_envs
    if not block.joints:
        return {"joint_error": np.zeros((e, 2), np.float32), "violated_joints": np.zeros(e, np.int32)}
    ja = block.body_joint_arrays
    return {
        "joint_error": ja.error.numpy().max(axis=1),
        "violated_joints": (ja.violated.numpy() != 0).sum(axis=1).astype(np.int32),
    }


def require_solver_report(block: Block, art: Articulation) -> dict[str, np.ndarray]:
    report = solver_report(block)
    if report is None:
        raise ValidationError(
            f"scene: no direct step has run for '{art.name}' yet; set scene.solver_type = "
            "artic.SolverType.DIRECT and step first"
        )
    return report


class StepWarnings:
    """The scene's warnings about what a step could not do as asked: contacts that did not fit their slots (the
    slots then grow) and envs the direct solver handed to PGS (at most every FALLBACK_WARN_INTERVAL seconds)."""

    def __init__(self):
        self._fallback_warned_at = -1.0e9

    def after_step(self, monitor: StatusMonitor, blocks: list[Block], direct: bool) -> None:
        """Read what a step raised (Block.quiet was False, or warnings wait): non-finite states and violations
        (the status monitor), direct-solver fallbacks (`direct`: the scene's solver), contacts that did not fit
        their slots; each warns, raises or grows the buffers."""
        if status.CHECK_STATE:  # off only while benchmarks/bench_step.py measures what the check costs
            monitor.after_step(blocks)
        if direct:
            self.check_fallbacks(blocks)
        for block in blocks:  # one int per block: a NumPy view on the CPU, a pinned copy a step late on a GPU
            if block.contacts_did_not_fit():
                self.check_contacts(block)

    def check_fallbacks(self, blocks: list[Block]) -> None:
        for block in blocks:
            if block.direct is None:
                continue
            flag = block.fallback_host  # the step's flags first: the whole report costs ~50 us a step
            if flag is None:
                flag = block.direct[1].any_fallback.numpy()
            fell, near = flag[0] != 0, flag[1] != 0  # read before the flags are lowered (flag may be a view)
            if not (fell or near):
                continue
            da = block.direct[1]
            da.any_fallback.zero_()
            fell_back = da.fallback.numpy()
            reason = ""
            if near:
                over = bool(np.any(fell_back & (da.wanted.numpy() > da.contact_slots)))
                reason = self._grow_direct(block, over)
            if not fell:
                continue
            now = time.monotonic()
            if now - self._fallback_warned_at >= FALLBACK_WARN_INTERVAL:
                self._fallback_warned_at = now
                envs = np.flatnonzero(fell_back)
                warnings.warn(
                    f"scene: the direct solver could not solve the step of {block.owner()} in "
                    f"{len(envs)} env(s) (first: {envs[:8].tolist()}) and used PGS for them{reason}; "
                    "scene.get_solver_report(art) counts these fallbacks",
                    RuntimeWarning,
                    stacklevel=3,
                )

    @staticmethod
    def _grow_direct(block: Block, over: bool) -> str:
        """Grow the direct rows' room for contacts (Block.plan_direct_growth) after a step whose contacts came near it
        (`over`: beyond it in an env, which PGS then solved); what to add to the fallback warning. A growth that does
        not fit the memory is said once, and the block's steps beyond the room stay PGS's."""
        if block.direct_grow_failed:
            block.direct[1].wanted.zero_()
            return " (their contacts outnumbered the room the direct solver's rows have)" if over else ""
        old = block.direct_contact_slots()
        try:
            grown = block.plan_direct_growth()
        except ArticError as e:
            block.direct_grow_failed = True
            warnings.warn(
                f"scene: {block.owner()} came near or beyond the {old} contacts the direct solver's rows have room "
                f"for, and that room cannot grow ({e}); an env's step with more is solved by PGS. Use fewer envs, "
                "or SolverType.PGS",
                RuntimeWarning,
                stacklevel=4,
            )
            return ""
        if grown is None or not over:
            return ""
        return f" (their {grown[2]} contacts outnumbered the {grown[0]} its rows had room for; now {grown[1]})"

    def check_contacts(self, block: Block) -> None:
        """After a step whose contacts did not fit the block's slots: plan larger ones for the next step
        (Block.plan_contact_growth) and say what the step left out. Each growth is said once (a block grows at most
        a few times: the slots at least double); a block whose growth does not fit the memory stays as it is and
        says so once."""
        if block.contact_grow_failed:
            return
        dropped = block.contact_overflow()
        dropped = 0 if dropped is None else int(dropped.sum())
        try:
            grown = block.plan_contact_growth()
        except ArticError as e:
            block.contact_grow_failed = True
            warnings.warn(
                f"scene: {block.owner()} found more contacts than their {block.contact_points.link_a.shape[1]} "
                f"slots and the slots cannot grow ({e}); contacts that do not fit are left out, speculative ones "
                "first. Use fewer envs or filter collision pairs (collision groups)",
                RuntimeWarning,
                stacklevel=3,
            )
            return
        if grown is None:
            return
        old, new, need, envs = grown
        lost = (
            f"dropped {dropped} touching contact(s)"
            if dropped
            else "kept the touching contacts and left out the speculative ones (surfaces apart within the contact "
            "offsets)"
        )
        warnings.warn(
            f"scene: {block.owner()} wanted up to {need} contact slots in {envs} env(s), more than their {old}: "
            f"that step {lost}; the next steps have {new} slots (Scene(contact_capacity=...) sets the starting "
            "number)",
            RuntimeWarning,
            stacklevel=3,
        )
