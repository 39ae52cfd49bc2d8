"""What a step reports of the joints between bodies (body_joint_rows.py holds their rows): the wrenches of the
accumulated impulses, split by kind, and, at the end poses, the coordinates, frames and the hard constraints'
errors, which the violation status watches (docs/conventions.md, "Failures"): a hard joint whose error stays
beyond LINEAR_TOLERANCE or ANGULAR_TOLERANCE (persistence.py's rule) is reported through the scene's nan_policy
(sim/status.py). Such a joint cannot close (frames or lengths that disagree: a four-bar with
one bar too long, two fixed joints apart) or is stepped too coarsely for its speed."""

from __future__ import annotations

import warp as wp

from ..core.data import Kin
from .body_joint_frames import body_pose, vec6
from .body_joint_rows import (
    BODY_ROW_BILATERAL,
    BODY_ROW_DRIVE,
    BODY_ROW_RANGE,
    ROW_LOCKED,
    ROW_OFF,
    ROW_ON,
    BodyJointArrays,
    BodyJointTable,
    joint_coordinates,
    joint_kinematics,
)
from .persistence import persist, persists

LINEAR_TOLERANCE = wp.constant(0.01)  # [m] a hard joint's linear error beyond this counts as a violation
ANGULAR_TOLERANCE = wp.constant(0.05)  # [rad] and its angular error beyond this


@wp.func
def _about(w: wp.spatial_vector, p: wp.vec3) -> wp.spatial_vector:
    """A (torque about O, force) wrench as (force, torque about p), p relative to O: the public order."""
    f = wp.spatial_bottom(w)
    return wp.spatial_vector(f, wp.spatial_top(w) - wp.cross(p, f))


@wp.func
def _in_frame(w: wp.spatial_vector, rot: wp.quat) -> wp.spatial_vector:
    """A public (force, torque) pair in the axes of a frame of orientation rot."""
    return wp.spatial_vector(wp.quat_rotate_inv(rot, wp.spatial_top(w)), wp.quat_rotate_inv(rot, wp.spatial_bottom(w)))


@wp.func
def _fold_orthogonal_shares(jt: BodyJointTable, ja: BodyJointArrays, env: int, j: int) -> None:
    """An orthogonalized coordinate row's impulse l acts along g - G^T y: its block rows are owed -l y, added to
    their accumulators so that every report splits the joint's wrench by kind as the rows' own directions do."""
    k = ja.block_count[env, j]
    idx = ja.block_rows[env, j]
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
        if ja.row_active[env, r] != ROW_ON or jt.row_kind[r] == BODY_ROW_BILATERAL:
            continue
        y = ja.row_ortho[env, r]
        lam = ja.row_lambda[env, r] + ja.row_lambda2[env, r]
        for a in range(k):
            ja.row_lambda[env, idx[a]] = ja.row_lambda[env, idx[a]] - lam * y[a]


@wp.func
def finish_body_joint_forces(
    jt: BodyJointTable, ja: BodyJointArrays, kin: Kin, link_pose: wp.array2d(dtype=wp.transform), env: int, dt: float
) -> None:
    """Wrenches of the step's accumulated impulses (start-of-step geometry): on A and B about their COMs (world),
    and per kind (bilateral, unilateral, drive) in frame C about its origin."""
    o = kin.origin[env]
    for j in range(jt.joint_count):
        _fold_orthogonal_shares(jt, ja, env, j)
        xc = body_pose(link_pose, env, jt.joint_link_a[j]) * jt.joint_frame_a[j]
        on_a = wp.spatial_vector()
        on_b = wp.spatial_vector()
        bilateral = wp.spatial_vector()  # constrained slots and locks
        unilateral = wp.spatial_vector()  # ranges
        drive = wp.spatial_vector()
        for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
            active = ja.row_active[env, r]
            if active == ROW_OFF:
                continue
            f = (ja.row_lambda[env, r] + ja.row_lambda2[env, r]) / dt
            w = f * ja.row_wrench_a[env, r]
            on_a += w
            on_b -= f * ja.row_wrench_b[env, r]
            if jt.row_kind[r] == BODY_ROW_DRIVE:
                drive += w
            elif jt.row_kind[r] == BODY_ROW_RANGE and active == ROW_ON:
                unilateral += w
            else:
                bilateral += w
        pc = wp.transform_get_translation(xc) - o
        rot = wp.transform_get_rotation(xc)
        ja.wrench_c[env, 3 * j] = _in_frame(_about(bilateral, pc), rot)
        ja.wrench_c[env, 3 * j + 1] = _in_frame(_about(unilateral, pc), rot)
        ja.wrench_c[env, 3 * j + 2] = _in_frame(_about(drive, pc), rot)
        ref_a = wp.transform_get_translation(xc) - o
        if jt.joint_link_a[j] >= 0:
            ref_a = kin.link_com[env, jt.joint_link_a[j]]
        ref_b = -o
        if jt.joint_link_b[j] >= 0:
            ref_b = kin.link_com[env, jt.joint_link_b[j]]
        ja.wrench_a[env, j] = _about(on_a, ref_a)
        ja.wrench_b[env, j] = _about(on_b, ref_b)


@wp.func
def _hard_errors(jt: BodyJointTable, ja: BodyJointArrays, env: int, j: int, values: vec6) -> wp.vec2:
    """(linear [m], angular [rad]) error of joint j's hard constraints at slot values `values`: the norms of its
    constrained slots' errors (T_err's translation and, to first order, its rotation angle: get_joint_frames),
    with a hard lock's distance from its value and a hard range's excess beyond its bounds in the same sums. The
    rows' activity and hardness are this step's (a disabled joint has none)."""
    lin2 = float(0.0)
    ang2 = float(0.0)
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
        active = ja.row_active[env, r]
        kind = jt.row_kind[r]
        if active == ROW_OFF or kind == BODY_ROW_DRIVE or ja.row_coef[env, r][1] >= 0.0:
            continue
        slot = jt.row_slot[r]
        e = values[slot]
        if active == ROW_LOCKED:
            e = e - ja.lock_value[env, jt.row_coord[r]]
        elif kind == BODY_ROW_RANGE:
            k = jt.row_coord[r]
            e = wp.max(wp.max(ja.range_low[env, k] - e, e - ja.range_high[env, k]), 0.0)
        if slot < 3:
            ang2 += e * e
        else:
            lin2 += e * e
    return wp.vec2(wp.sqrt(lin2), wp.sqrt(ang2))


@wp.func
def _track(ja: BodyJointArrays, env: int, j: int, err: wp.vec2) -> int:
    """The violation status of one joint after a step (persistence.py's rule); 1 when it has just become
    violated."""
    e = wp.max(err[0] / LINEAR_TOLERANCE, err[1] / ANGULAR_TOLERANCE)  # in tolerances
    track = persist(e, ja.error_track[env, j])
    ja.error_track[env, j] = track
    if track[0] == 0.0:
        ja.violated[env, j] = 0  # back within tolerance: a later violation is reported again
        return 0
    if persists(track) != 0 and ja.violated[env, j] == 0:
        ja.violated[env, j] = -1  # the host reports it (sim/status.py) and stores 1
        return 1
    return 0


@wp.func
def update_body_joint_coordinates(
    jt: BodyJointTable, ja: BodyJointArrays, link_pose: wp.array2d(dtype=wp.transform), env: int, track: int
) -> int:
    """Coordinates (unwrapped against the stored ones), T_CD, the world frames C and D and the hard constraints'
    errors of the current poses; with `track` (after a step), their violation status. Returns 1 when a joint of
    the env has just become violated."""
    fresh = int(0)
    for j in range(jt.joint_count):
        xc, xd, tcd, raw, _dirs = joint_kinematics(jt, link_pose, env, j)
        values = joint_coordinates(jt, ja, env, j, raw, 1)
        ja.tcd[env, j] = tcd
        ja.frame_c[env, j] = xc
        ja.frame_d[env, j] = xd
        err = _hard_errors(jt, ja, env, j, values)
        ja.error[env, j] = err
        if track != 0:
            fresh = fresh | _track(ja, env, j, err)
    return fresh
