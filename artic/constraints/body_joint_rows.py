"""Rows of the joints between bodies (description/body_joints.py): loops within an articulation, joints between
articulations, rigid bodies, static bodies and the world (ArtiSynth's joints chapter 3.3;
the ODE paper; physx-notes 4.1 for their place in the solve).

Every row has a generalized direction g = J_A^T w_A - J_B^T w_B (w the unit torque of an angular slot, or the unit
force at C's origin of a linear one; joint_frames.py), a response r = g^T M^-1 g, a position value (the error of a
constrained slot, the coordinate of a coordinate row), compliance (or ERP/CFM) and bounds, like the coupling and
contact rows: an impulse dl changes the generalized velocity by dl M^-1 g. A joint's rows, in its solve order: per
coordinate a drive row (implicit PD, constraints/drive.py) and a range row (speculative limits as the articulation
limits, constraints/limit.py, or a lock), then one bilateral row per constrained slot, so that the joint's structure
is solved last and wins (as PhysX's D6 joint, whose locked axes come after its drives and limits). The Gauss-Seidel
solvers solve a joint's hard rows (constrained slots and hard locks) as one block and orthogonalize its drive and
range rows against it (docs/joints.md, "How they are solved").

A compliant row (compliance C > 0 and damping D, or ERP/CFM) is the implicit spring of ODE's eq. 13 with k = 1/C,
d = D: dl = (-beta phi - v - gamma l) / (r + gamma), beta = k / (h k + d), gamma = 1 / (h (h k + d)), which is the
implicit drive update with target 0 (PGS: recomputed in velocity iterations; TGS: one fresh impulse per substep
with the error tracked over the substeps, frozen in velocity iterations). A hard row corrects the fraction `erp`
of its error in position iterations (PhysX's PxJoint bias: 1 under PGS, 1/sqrt(n_pos) under TGS, or the row's own
ERP), at MAX_CORRECTION_* at most, and holds the velocity in velocity iterations.

Joints whose two bodies both move are PhysX's "link dynamic constraints", solved at the start of every iteration;
a joint to the world, a static or kinematic body is a "link static constraint", solved right after the joint rows
of its moving link (gauss_seidel.py).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..core.data import Kin
from ..core.model import DRIVE_NONE, Tree
from .body_joint_frames import MODE_DISTANCE, body_pose, joint_slots, point_bias, unwrap, vec6, weld_rotation_row
from .coupling_rows import add_jacobian_transpose
from .drive import drive_coefficients, drive_impulse, vec5
from .limit import limit_impulse
from .softness import is_soft, soft_params, soft_row_at

BODY_ROW_DRIVE = wp.constant(0)
BODY_ROW_RANGE = wp.constant(1)  # a coordinate's range, or its lock
BODY_ROW_BILATERAL = wp.constant(2)
ROW_OFF = wp.constant(0)
ROW_ON = wp.constant(1)
ROW_LOCKED = wp.constant(2)  # a range row holding its coordinate at the lock value
_MIN_RESPONSE = wp.constant(1.0e-12)  # rows nothing can move along (both bodies fixed in that direction) sleep
# A row whose generalized direction g is float32 cancellation noise (|g| < 3e-5 m or rad per unit gen velocity)
# is one the bodies' dofs cannot violate: a planar mechanism's out-of-plane rows in reduced coordinates. Left on,
# its noise-sized response turns any residual into an enormous impulse.
_MIN_DIRECTION = wp.constant(1.0e-9)
# A hard row's correction speed is capped (the idea of PhysX's max depenetration velocity, which PhysX applies to
# contacts only): a joint created or pushed far from its constraint comes back at these speeds at most instead of
# erp * error / h, which for a 0.2 m error at a 1/240 s substep is 48 m/s and flings the bodies it joins.
MAX_CORRECTION_LINEAR = wp.constant(10.0)  # [m/s]
MAX_CORRECTION_ANGULAR = wp.constant(10.0)  # [rad/s]
# A block pivot below this fraction of its row's response marks a row that depends on the rows before it (a
# redundant constraint, as a fixed joint on a body with one dof): it takes no impulse of its own.
_BLOCK_PIVOT = wp.constant(1.0e-5)
vec6i = wp.types.vector(length=6, dtype=int)


@wp.struct
class BodyJointTable:
    """A block's joints (J joints, K coordinates, R rows), in solve order groups: joint_order[:dynamic_count] have
    two moving bodies, the rest a fixed one, sorted by their moving link's depth-first rank."""

    joint_count: int
    dynamic_count: int
    coord_count: int
    row_count: int
    joint_order: wp.array(dtype=int)  # (J,) solve order
    joint_rank: wp.array(dtype=int)  # (J,) depth-first rank of the moving link (static joints)
    joint_mode: wp.array(dtype=int)  # (J,) MODE_* of joint_frames.py
    joint_link_a: wp.array(dtype=int)  # (J,) forest link of body A, -1 for a static body
    joint_link_b: wp.array(dtype=int)  # (J,) forest link of body B, -1 for a static body or the world
    joint_frame_a: wp.array(dtype=wp.transform)  # (J,) T_CA (T_CW for a static A)
    joint_frame_b: wp.array(dtype=wp.transform)  # (J,) T_DB (T_DW for a static B or the world)
    # (J,) generalized indices a joint's rows can touch: (start, count) of body A's tree and of body B's (count 0
    # for a fixed body, or for B in A's tree). M is block-diagonal by tree, so g and M^-1 g vanish elsewhere and
    # the solver's dot products and updates skip the other trees' dofs (a ragdoll of 15 free bodies: 12 of 90).
    joint_span: wp.array(dtype=wp.vec4i)
    joint_row_start: wp.array(dtype=int)  # (J,)
    joint_row_count: wp.array(dtype=int)  # (J,)
    joint_coord_start: wp.array(dtype=int)  # (J,)
    joint_coord_count: wp.array(dtype=int)  # (J,)
    coord_slot: wp.array(dtype=int)  # (K,) slot 0..5 the coordinate reads
    coord_wrap: wp.array(dtype=int)  # (K,) 1 for angles that keep counting past +-pi
    coord_drive: wp.array(dtype=int)  # (K,) DRIVE_NONE / DRIVE_FORCE / DRIVE_ACCELERATION
    coord_stiffness: wp.array(dtype=float)  # (K,) [N/m, N m/rad] or [1/s^2]
    coord_damping: wp.array(dtype=float)  # (K,) [N s/m, N m s/rad] or [1/s]
    coord_max_force: wp.array(dtype=float)  # (K,) [N or N m]
    row_kind: wp.array(dtype=int)  # (R,) LOOP_*
    row_slot: wp.array(dtype=int)  # (R,)
    row_coord: wp.array(dtype=int)  # (R,) block coordinate of drive and range rows, -1 for bilateral rows
    row_compliance: wp.array(dtype=float)  # (R,) [m/N or rad/(N m)]; 0 is hard
    row_soft: wp.array(dtype=soft_params)  # (R,) a bilateral row's MuJoCo softness (zeros: none; softness.py)
    row_weight: wp.array(dtype=float)  # (R,) its approximate inverse effective mass, in the row's units
    row_damping: wp.array(dtype=float)  # (R,) [N s/m or N m s/rad]
    row_erp: wp.array(dtype=float)  # (R,) ODE's ERP when given (< 0: use compliance and damping)
    row_cfm: wp.array(dtype=float)  # (R,) ODE's CFM [force units] when ERP is given


@wp.struct
class BodyJointArrays:
    """Per-env joint state, controls, step rows and outputs of a block (E envs, N generalized dofs)."""

    coord: wp.array2d(dtype=float)  # (E, K) coordinates, angles unwrapped [rad or m]
    target_position: wp.array2d(dtype=float)  # (E, K) drive targets
    target_velocity: wp.array2d(dtype=float)  # (E, K)
    range_low: wp.array2d(dtype=float)  # (E, K) -inf when open
    range_high: wp.array2d(dtype=float)  # (E, K) +inf when open
    locked: wp.array2d(dtype=int)  # (E, K) 1 while the coordinate is held at lock_value
    lock_value: wp.array2d(dtype=float)  # (E, K)
    enabled: wp.array2d(dtype=int)  # (E, J) 0 switches every row of the joint off in that env (ODE's dJointDisable)
    tcd: wp.array2d(dtype=wp.transform)  # (E, J) T_CD after the last step
    frame_c: wp.array2d(dtype=wp.transform)  # (E, J) C in the world
    frame_d: wp.array2d(dtype=wp.transform)  # (E, J) D in the world
    wrench_a: wp.array2d(dtype=wp.spatial_vector)  # (E, J) (force, torque about A's COM) on A, world [N, N m]
    wrench_b: wp.array2d(dtype=wp.spatial_vector)  # (E, J) on B, about B's COM (the world origin for a fixed B)
    wrench_c: wp.array2d(dtype=wp.spatial_vector)  # (E, 3J) bilateral, unilateral, drive (force, torque) in C
    block_rows: wp.array2d(dtype=vec6i)  # (E, J) the rows of the joint's block (its hard slots and locks)
    block_count: wp.array2d(dtype=int)  # (E, J) how many
    scalar_count: wp.array2d(dtype=int)  # (E, J) its other active rows (drives, ranges, compliant rows)
    # (E, J, 21) Cholesky factor L of the block's G M^-1 G^T, lower triangle packed by rows (entry (a, c) at
    # a (a + 1) / 2 + c), the diagonal stored inverted (0 for a row left out)
    block_factor: wp.array3d(dtype=float)
    row_ortho: wp.array2d(dtype=vec6)  # (E, R) a coordinate row's part along its joint's block rows (PGS, TGS)
    error: wp.array2d(dtype=wp.vec2)  # (E, J) [m, rad] its hard constraints' errors at the current poses
    error_track: wp.array2d(dtype=wp.vec4)  # (E, J) the error's persistence (constraints/persistence.py)
    violated: wp.array2d(dtype=int)  # (E, J) 0; -1 just reported by the step (the host not told yet); 1 told
    row_g: wp.array3d(dtype=float)  # (E, R, N) generalized direction
    row_minv_g: wp.array3d(dtype=float)  # (E, R, N) M^-1 g
    row_r: wp.array2d(dtype=float)  # (E, R) response g^T M^-1 g
    row_value: wp.array2d(dtype=float)  # (E, R) error, coordinate, or coordinate - lock value at the step start
    row_rate: wp.array2d(dtype=float)  # (E, R) a hard slot's g.v after the last direct step; NaN: none (row_form)
    row_dq: wp.array2d(dtype=float)  # (E, R) value change over the TGS substeps so far
    row_active: wp.array2d(dtype=int)  # (E, R) ROW_OFF / ROW_ON / ROW_LOCKED this step
    row_coef: wp.array2d(dtype=vec5)  # (E, R) drive coefficients, or (beta, gamma, erp) of the other rows
    row_lambda: wp.array2d(dtype=float)  # (E, R) accumulated impulse [N s or N m s] (a range's low side)
    row_lambda2: wp.array2d(dtype=float)  # (E, R) a range's high side
    row_wrench_a: wp.array2d(dtype=wp.spatial_vector)  # (E, R) unit wrench on A (torque about O, force)
    row_wrench_b: wp.array2d(dtype=wp.spatial_vector)  # (E, R) unit wrench on B (torque about O, force)


# -- host tables (built by sim/builders/body_joints.py) ------------------------------------------------------------


def row_layout(coordinate_count: int, bilateral_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row offsets within one joint: each coordinate's drive row and range row (interleaved), then the bilateral
    rows, in solve order."""
    m = coordinate_count
    return np.arange(m) * 2, np.arange(m) * 2 + 1, 2 * m + np.arange(bilateral_count)


# -- per-env kinematics ---------------------------------------------------------------------------------------------


@wp.func
def joint_kinematics(
    jt: BodyJointTable, link_pose: wp.array2d(dtype=wp.transform), env: int, j: int
) -> tuple[wp.transform, wp.transform, wp.transform, vec6, wp.mat33]:
    """(T_CW, T_DW, T_CD, slot values, angular directions) of joint j; a distance joint's slot 3 holds the
    distance."""
    xc = body_pose(link_pose, env, jt.joint_link_a[j]) * jt.joint_frame_a[j]
    xd = body_pose(link_pose, env, jt.joint_link_b[j]) * jt.joint_frame_b[j]
    tcd = wp.transform_inverse(xd) * xc
    values, dirs = joint_slots(jt.joint_mode[j], tcd, wp.transform_get_rotation(xd))
    if jt.joint_mode[j] == MODE_DISTANCE:
        values[3] = wp.length(wp.transform_get_translation(xc) - wp.transform_get_translation(xd))
    return xc, xd, tcd, values, dirs


@wp.func
def joint_coordinates(jt: BodyJointTable, ja: BodyJointArrays, env: int, j: int, values: vec6, store: int) -> vec6:
    """Unwrap the joint's angular coordinates against the stored ones (store != 0: keep the result); returns the
    values with the coordinates in their slots."""
    out = values
    for m in range(jt.joint_coord_count[j]):
        k = jt.joint_coord_start[j] + m
        s = jt.coord_slot[k]
        c = values[s]
        if jt.coord_wrap[k] != 0:
            c = unwrap(c, ja.coord[env, k])
        out[s] = c
        if store != 0:
            ja.coord[env, k] = c
    return out


@wp.func
def slot_wrenches(
    jt: BodyJointTable,
    j: int,
    slot: int,
    xc: wp.transform,
    xd: wp.transform,
    dirs: wp.mat33,
    o: wp.vec3,
    own_points: int = 0,
) -> tuple[wp.spatial_vector, wp.spatial_vector]:
    """Unit wrenches (torque about O, force) on A and on B whose generalized impulses make slot's row. A linear
    row acts at C's origin on both bodies (PhysX's joint), or with `own_points` at C's on A and at D's on B, as
    MuJoCo's connect and weld measure each body at its own anchor (apart by the joint's error, which a soft joint
    lets grow: 0.28 m in gym-aloha's end-effector scenes, where B's spin moved C's point 30 % off MuJoCo's rows)."""
    if slot < 3:
        u = wp.vec3(dirs[slot, 0], dirs[slot, 1], dirs[slot, 2])
        w = wp.spatial_vector(u, wp.vec3(0.0))
        return w, w
    pc = wp.transform_get_translation(xc) - o
    if jt.joint_mode[j] == MODE_DISTANCE:
        pd = wp.transform_get_translation(xd) - o
        u = pc - pd
        d = wp.length(u)
        if d > 1.0e-9:
            u = u / d
        else:
            u = wp.transform_vector(xd, wp.vec3(0.0, 0.0, 1.0))  # coincident points: any direction will do
        return wp.spatial_vector(wp.cross(pc, u), u), wp.spatial_vector(wp.cross(pd, u), u)
    e = wp.vec3(0.0)
    e[slot - 3] = 1.0
    u = wp.transform_vector(xd, e)
    w = wp.spatial_vector(wp.cross(pc, u), u)
    if own_points != 0:
        return w, wp.spatial_vector(wp.cross(wp.transform_get_translation(xd) - o, u), u)
    return w, w


@wp.func
def joint_row_direction(
    tree: Tree,
    jt: BodyJointTable,
    kin: Kin,
    g: wp.array3d(dtype=float),
    env: int,
    row: int,
    j: int,
    wa: wp.spatial_vector,
    wb: wp.spatial_vector,
) -> None:
    """g[env, row] = J_A^T wa - J_B^T wb (zero outside the joint's span, which is all the solver reads)."""
    span = jt.joint_span[j]
    for i in range(span[0], span[0] + span[1]):
        g[env, row, i] = 0.0
    for i in range(span[2], span[2] + span[3]):
        g[env, row, i] = 0.0
    if jt.joint_link_a[j] >= 0:
        add_jacobian_transpose(tree, kin, g, env, row, jt.joint_link_a[j], wa, 1.0)
    if jt.joint_link_b[j] >= 0:
        add_jacobian_transpose(tree, kin, g, env, row, jt.joint_link_b[j], wb, -1.0)


# -- step: setup, solve, substep advance, outputs ------------------------------------------------------------------


@wp.func
def _span_dot(g: wp.array3d(dtype=float), v: wp.array2d(dtype=float), env: int, r: int, span: wp.vec4i) -> float:
    """g[env, r] . v[env] over the joint's two trees."""
    s = float(0.0)
    for i in range(span[0], span[0] + span[1]):
        s += g[env, r, i] * v[env, i]
    for i in range(span[2], span[2] + span[3]):
        s += g[env, r, i] * v[env, i]
    return s


@wp.func
def _span_solve(
    minv: wp.array3d(dtype=float),
    g: wp.array3d(dtype=float),
    minv_g: wp.array3d(dtype=float),
    env: int,
    r: int,
    span: wp.vec4i,
) -> float:
    """minv_g[env, r] = M^-1 g[env, r] over the joint's span (M^-1 is block-diagonal by tree); returns the response
    g^T M^-1 g."""
    resp = float(0.0)
    for part in range(2):
        s0 = span[2 * part]
        n = span[2 * part + 1]
        for i in range(s0, s0 + n):
            acc = float(0.0)
            for k in range(s0, s0 + n):
                acc += minv[env, i, k] * g[env, r, k]
            minv_g[env, r, i] = acc
            resp += g[env, r, i] * acc
    return resp


@wp.func
def _span_add(
    v: wp.array2d(dtype=float), d: wp.array3d(dtype=float), env: int, r: int, span: wp.vec4i, scale: float
) -> None:
    """v[env] += scale d[env, r] over the joint's two trees."""
    for i in range(span[0], span[0] + span[1]):
        v[env, i] = v[env, i] + scale * d[env, r, i]
    for i in range(span[2], span[2] + span[3]):
        v[env, i] = v[env, i] + scale * d[env, r, i]


@wp.func
def _span_dot_rows(
    g: wp.array3d(dtype=float), d: wp.array3d(dtype=float), env: int, r1: int, r2: int, span: wp.vec4i
) -> float:
    """g[env, r1] . d[env, r2] over the joint's two trees."""
    s = float(0.0)
    for i in range(span[0], span[0] + span[1]):
        s += g[env, r1, i] * d[env, r2, i]
    for i in range(span[2], span[2] + span[3]):
        s += g[env, r1, i] * d[env, r2, i]
    return s


@wp.func
def hard_row_target(coef: vec5, slot: int, phi: float, erp: float, h: float) -> float:
    """The velocity a hard row holding error phi aims at in a position iteration: -bias phi / h (bias: the row's
    own ERP, else the solver's erp), capped at MAX_CORRECTION_* (angular slots 0-2, linear 3-5)."""
    bias = erp
    if coef[2] >= 0.0:
        bias = coef[2]
    cap = MAX_CORRECTION_LINEAR
    if slot < 3:
        cap = MAX_CORRECTION_ANGULAR
    return wp.clamp(-bias * phi / h, -cap, cap)


@wp.func
def _is_block_row(kind: int, active: int, coef: vec5) -> int:
    """1 for a row that holds the joint's structure: a hard constrained slot or locked coordinate, or a MuJoCo-soft
    slot (coef[3] 1; solved with its regularizer on the block's diagonal)."""
    if active == ROW_OFF or kind == BODY_ROW_DRIVE:
        return 0
    if coef[3] != 0.0:
        return 1
    if coef[1] >= 0.0:
        return 0
    if kind == BODY_ROW_BILATERAL or active == ROW_LOCKED:
        return 1
    return 0


@wp.func
def _find_block_rows(jt: BodyJointTable, ja: BodyJointArrays, env: int, j: int) -> tuple[vec6i, int]:
    """The rows of joint j's block, in solve order, and their count (at most 6: one per slot); the count of its
    other active rows is stored."""
    idx = vec6i()
    k = int(0)
    others = int(0)
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
        if k < 6 and _is_block_row(jt.row_kind[r], ja.row_active[env, r], ja.row_coef[env, r]) != 0:
            idx[k] = r
            k += 1
        elif ja.row_active[env, r] != ROW_OFF:
            others += 1
    ja.scalar_count[env, j] = others
    return idx, k


@wp.func
def factor_joint_block(jt: BodyJointTable, ja: BodyJointArrays, env: int, j: int) -> None:
    """Joint j's block rows found and stored, and the Cholesky factor L of A = G M^-1 G^T + R packed (R: the
    MuJoCo-soft rows' regularizers; a row that depends on earlier ones left out: zero pivot and column)."""
    idx, k = _find_block_rows(jt, ja, env, j)
    ja.block_rows[env, j] = idx
    ja.block_count[env, j] = k
    span = jt.joint_span[j]
    lf = wp.spatial_matrix()
    for a in range(k):
        for b in range(a + 1):
            s = _span_dot_rows(ja.row_g, ja.row_minv_g, env, idx[a], idx[b], span)
            for c in range(b):
                s -= lf[a, c] * lf[b, c]
            if a == b:
                coef = ja.row_coef[env, idx[a]]
                if coef[3] != 0.0:
                    s += coef[1]
                if s > _BLOCK_PIVOT * ja.row_r[env, idx[a]]:
                    lf[a, a] = wp.sqrt(s)
            elif lf[b, b] > 0.0:
                lf[a, b] = s / lf[b, b]
    for a in range(k):
        row = a * (a + 1) // 2
        for c in range(a):
            ja.block_factor[env, j, row + c] = lf[a, c]
        inv = float(0.0)
        if lf[a, a] > 0.0:
            inv = 1.0 / lf[a, a]
        ja.block_factor[env, j, row + a] = inv


@wp.func
def _block_solve(ja: BodyJointArrays, env: int, j: int, b: vec6, k: int) -> vec6:
    """x with L L^T x = b over joint j's k block rows; a left-out row (zero pivot) gets 0."""
    x = vec6()
    for a in range(k):  # L y = b
        row = a * (a + 1) // 2
        s = b[a]
        for c in range(a):
            s -= ja.block_factor[env, j, row + c] * x[c]
        x[a] = s * ja.block_factor[env, j, row + a]
    for t in range(k):  # L^T x = y, in place
        a = k - 1 - t
        s = x[a]
        for c in range(a + 1, k):
            s -= ja.block_factor[env, j, c * (c + 1) // 2 + a] * x[c]
        x[a] = s * ja.block_factor[env, j, a * (a + 1) // 2 + a]
    return x


@wp.func
def _span_axpy(g: wp.array3d(dtype=float), env: int, dst: int, src: int, span: wp.vec4i, scale: float) -> None:
    """g[env, dst] += scale g[env, src] over the joint's two trees."""
    for i in range(span[0], span[0] + span[1]):
        g[env, dst, i] = g[env, dst, i] + scale * g[env, src, i]
    for i in range(span[2], span[2] + span[3]):
        g[env, dst, i] = g[env, dst, i] + scale * g[env, src, i]


@wp.func
def _solve_joint_block(
    jt: BodyJointTable,
    ja: BodyJointArrays,
    v: wp.array2d(dtype=float),
    env: int,
    j: int,
    h: float,
    erp: float,
    position_iteration: int,
) -> None:
    """Joint j's hard (and MuJoCo-soft) rows solved exactly together: G dv = target - G v (- R l) with dv =
    M^-1 G^T dl, so the joint holds
    after one visit whatever its rows' coupling (row by row, a pin's rows in world axes converge slowly once the
    body has turned: a pin on a light lever moves far more easily across the lever than along it)."""
    k = ja.block_count[env, j]
    if k == 0:
        return
    idx = ja.block_rows[env, j]
    span = jt.joint_span[j]
    b = vec6()
    for a in range(k):
        r = idx[a]
        b[a] = -_span_dot(ja.row_g, v, env, r, span)
        coef = ja.row_coef[env, r]
        if coef[3] != 0.0:  # MuJoCo-soft: v + R lambda = target, in every iteration
            b[a] += coef[4] - coef[1] * ja.row_lambda[env, r]
        elif position_iteration != 0:
            phi = ja.row_value[env, r] + ja.row_dq[env, r]
            b[a] += hard_row_target(coef, jt.row_slot[r], phi, erp, h)
    x = _block_solve(ja, env, j, b, k)
    for a in range(k):
        r = idx[a]
        ja.row_lambda[env, r] = ja.row_lambda[env, r] + x[a]
        _span_add(v, ja.row_minv_g, env, r, span, x[a])


@wp.func
def orthogonalize_coordinate_rows(jt: BodyJointTable, ja: BodyJointArrays, env: int, j: int) -> None:
    """PGS and TGS: each active drive and range row of joint j turned M^-1-orthogonal to its block, g' = g - G^T y
    with A y = G M^-1 g, so that its impulses move the bodies only along the joint's free motion, and its response
    becomes the coordinate's effective one (a hinge's: the inertia about its axis). Solved one after the other, a
    range row and the pin's block undo each other's work within each visit: a TGS substep sweeps once, and a
    pendulum passed its range by 3.5e-3 rad with 32 substeps. y is kept (row_ortho) to give the block rows their
    share of the row's impulse in the reports."""
    k = ja.block_count[env, j]
    idx = ja.block_rows[env, j]
    span = jt.joint_span[j]
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
        ja.row_ortho[env, r] = vec6()
        if k == 0 or ja.row_active[env, r] != ROW_ON or jt.row_kind[r] == BODY_ROW_BILATERAL:
            continue
        b = vec6()
        for a in range(k):
            b[a] = _span_dot_rows(ja.row_g, ja.row_minv_g, env, idx[a], r, span)
        y = _block_solve(ja, env, j, b, k)
        for a in range(k):
            _span_axpy(ja.row_g, env, r, idx[a], span, -y[a])
            _span_axpy(ja.row_minv_g, env, r, idx[a], span, -y[a])
        resp = _span_dot_rows(ja.row_g, ja.row_minv_g, env, r, r, span)
        if resp < _BLOCK_PIVOT * ja.row_r[env, r] or resp < _MIN_RESPONSE:
            ja.row_active[env, r] = ROW_OFF  # the joint's structure fixes this coordinate: nothing to drive or stop
        else:
            ja.row_r[env, r] = resp
            ja.row_ortho[env, r] = y


@wp.func
def soft_coefficients(jt: BodyJointTable, r: int, h: float, dt: float) -> vec5:
    """(beta, gamma, erp): a compliant row's implicit-spring coefficients at solver step h (gamma < 0 marks a hard
    row; erp < 0 then means the solver's default bias)."""
    erp = jt.row_erp[r]
    cfm = jt.row_cfm[r]
    k = float(0.0)
    d = float(0.0)
    if erp >= 0.0:
        if cfm <= 0.0:
            return vec5(0.0, -1.0, erp, 0.0, 0.0)
        k = erp / (dt * cfm)  # the spring ERP and CFM describe at the step dt (spring_from_erp_cfm)
        d = (1.0 - erp) / cfm
    else:
        c = jt.row_compliance[r]
        if c <= 0.0:
            return vec5(0.0, -1.0, -1.0, 0.0, 0.0)
        k = 1.0 / c
        d = jt.row_damping[r]
    s = h * k + d
    return vec5(k / s, 1.0 / (h * s), -1.0, 0.0, 0.0)


@wp.func
def _mujoco_soft_coefficients(
    jt: BodyJointTable,
    ja: BodyJointArrays,
    link_pose: wp.array2d(dtype=wp.transform),
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_bias: wp.array2d(dtype=wp.spatial_vector),
    v0: wp.array2d(dtype=float),
    o: wp.vec3,
    env: int,
    j: int,
    dt: float,
) -> None:
    """Joint j's MuJoCo-soft bilateral rows (row_soft): coef = (0, cfm, -1, 1, target) of softness.soft_row_at,
    the impedance at the norm of the joint's error (linear errors and half the angles: MuJoCo measures a weld's
    rotation by the quaternion's vector part, sin(angle / 2), whose rows move at half the angular rate; the
    table's angular weights carry the factor 4 that this change of units gives the regularizer). As MuJoCo 4's
    equality rows, the reference also cancels the row's velocity-product acceleration J-dot q-dot (a swinging
    body's centripetal acceleration at its pin), taken along the row's start direction: C's and D's accelerations
    at zero generalized accelerations, differenced on D's axes (linear slots) or on the row's own direction (a weld's
    quaternion rows)."""
    norm2 = float(0.0)
    soft = int(0)
    span = jt.joint_span[j]
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
        if jt.row_kind[r] == BODY_ROW_BILATERAL and is_soft(jt.row_soft[r]):
            soft = 1
            e = ja.row_value[env, r]
            if jt.row_slot[r] < 3:
                e = 0.5 * e
            norm2 += e * e
    if soft == 0:
        return
    xc, xd, _tcd, _raw, _dirs = joint_kinematics(jt, link_pose, env, j)
    ac = point_bias(link_v, link_bias, env, jt.joint_link_a[j], wp.transform_get_translation(xc) - o)
    ad = point_bias(link_v, link_bias, env, jt.joint_link_b[j], wp.transform_get_translation(xd) - o)
    rel_lin = wp.spatial_bottom(ac) - wp.spatial_bottom(ad)
    rel_ang = wp.spatial_top(ac) - wp.spatial_top(ad)
    axes = wp.quat_to_matrix(wp.transform_get_rotation(xd))
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
        if jt.row_kind[r] == BODY_ROW_BILATERAL and is_soft(jt.row_soft[r]):
            slot = jt.row_slot[r]
            jdot = float(0.0)
            if slot >= 3:
                k = slot - 3
                jdot = wp.dot(wp.vec3(axes[0, k], axes[1, k], axes[2, k]), rel_lin)
            else:  # the row's own direction: a weld's quaternion row (weld_rotation_row)
                jdot = wp.dot(wp.spatial_top(ja.row_wrench_a[env, r]), rel_ang)
            vel = _span_dot(ja.row_g, v0, env, r, span)
            row = soft_row_at(jt.row_soft[r], ja.row_value[env, r], wp.sqrt(norm2), vel, jt.row_weight[r], dt, dt)
            ja.row_coef[env, r] = vec5(0.0, row[1], -1.0, 1.0, row[0] - dt * jdot)


@wp.func
def setup_body_joints(
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    minv: wp.array3d(dtype=float),
    v0: wp.array2d(dtype=float),
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_bias: wp.array2d(dtype=wp.spatial_vector),
    env: int,
    n_gen: int,
    h: float,
    dt: float,
    tgs: int,
    gauss_seidel: int,
) -> None:
    """Directions, responses, position values and coefficients of every joint row at the start of the step; accumulators
    zeroed; for the Gauss-Seidel solvers (gauss_seidel 1; the direct solver's fallback to PGS does it itself) each
    joint's block factored and its coordinate rows orthogonalized against it. Coordinates are unwrapped against the last
    stored ones and stored. v0, link_v, link_bias: the generalized and link velocities and the links' J-dot q-dot at the
    step's start (MuJoCo-soft rows' reference)."""
    o = kin.origin[env]
    for j in range(jt.joint_count):
        xc, xd, _tcd, raw, dirs = joint_kinematics(jt, link_pose, env, j)
        values = joint_coordinates(jt, ja, env, j, raw, 1)
        for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
            kind = jt.row_kind[r]
            slot = jt.row_slot[r]
            k = jt.row_coord[r]
            value = values[slot]
            active = ROW_ON
            if ja.enabled[env, j] == 0:
                active = ROW_OFF
            elif kind == BODY_ROW_DRIVE:
                if jt.coord_drive[k] == DRIVE_NONE:
                    active = ROW_OFF
            elif kind == BODY_ROW_RANGE:
                if ja.locked[env, k] != 0:
                    active = ROW_LOCKED
                    value = value - ja.lock_value[env, k]
                elif ja.range_low[env, k] == -wp.inf and ja.range_high[env, k] == wp.inf:
                    active = ROW_OFF
            wa, wb = slot_wrenches(jt, j, slot, xc, xd, dirs, o, int(is_soft(jt.row_soft[r])))
            if slot < 3 and kind == BODY_ROW_BILATERAL and is_soft(jt.row_soft[r]):
                mj = weld_rotation_row(xc, xd, slot)  # MuJoCo's weld: its quaternion error, at any angle
                value = mj[0]
                wa = wp.spatial_vector(wp.vec3(mj[1], mj[2], mj[3]), wp.vec3(0.0))
                wb = wa
            ja.row_wrench_a[env, r] = wa
            ja.row_wrench_b[env, r] = wb
            resp = float(0.0)
            if active != ROW_OFF:
                joint_row_direction(tree, jt, kin, ja.row_g, env, r, j, wa, wb)
                span = jt.joint_span[j]
                resp = _span_solve(minv, ja.row_g, ja.row_minv_g, env, r, span)
                if resp < _MIN_RESPONSE or _span_dot_rows(ja.row_g, ja.row_g, env, r, r, span) < _MIN_DIRECTION:
                    active = ROW_OFF
            ja.row_coef[env, r] = soft_coefficients(jt, r, h, dt)  # a drive's are set below
            ja.row_active[env, r] = active
            ja.row_r[env, r] = resp
            ja.row_value[env, r] = value
            ja.row_dq[env, r] = 0.0
            ja.row_lambda[env, r] = 0.0
            ja.row_lambda2[env, r] = 0.0
        _mujoco_soft_coefficients(jt, ja, link_pose, link_v, link_bias, v0, o, env, j, dt)
        if gauss_seidel != 0:  # the block solve's factor: the direct solver factors all rows at once
            factor_joint_block(jt, ja, env, j)
            orthogonalize_coordinate_rows(jt, ja, env, j)
        for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
            if jt.row_kind[r] == BODY_ROW_DRIVE and ja.row_active[env, r] != ROW_OFF:
                k = jt.row_coord[r]
                resp = ja.row_r[env, r]
                ja.row_coef[env, r] = drive_coefficients(
                    jt.coord_drive[k],
                    jt.coord_stiffness[k],
                    jt.coord_damping[k],
                    ja.target_velocity[env, k],
                    ja.target_position[env, k] - ja.row_value[env, r],
                    resp,
                    1.0 / resp,
                    h,
                    dt,
                    tgs,
                )


@wp.func
def _soft_delta(
    phi: float, vel: float, acc: float, resp: float, coef: vec5, position_iteration: int, tgs: int
) -> float:
    """Impulse change of a compliant row: the implicit spring (PGS: from the accumulated impulse in every
    iteration; TGS: a fresh impulse per substep, nothing in velocity iterations). A MuJoCo-soft row (coef[3] 1)
    solves v + cfm lambda = target for the step's accumulated impulse in every solver and iteration."""
    if coef[3] != 0.0:
        return (coef[4] - vel - coef[1] * acc) / (resp + coef[1])
    if tgs != 0:
        if position_iteration == 0:
            return float(0.0)
        return (-coef[0] * phi - vel) / (resp + coef[1])
    return (-coef[0] * phi - vel - coef[1] * acc) / (resp + coef[1])


@wp.func
def solve_body_joint(
    jt: BodyJointTable,
    ja: BodyJointArrays,
    v: wp.array2d(dtype=float),
    env: int,
    j: int,
    n_gen: int,
    h: float,
    dt: float,
    erp: float,
    t_elapsed: float,
    position_iteration: int,
    tgs: int,
) -> None:
    """One Gauss-Seidel visit of joint j's rows. erp: the solver's bias for hard rows."""
    span = jt.joint_span[j]
    count = int(0)  # a joint with no drive, range or compliant row (most ball and hinge joints) skips the loop
    if ja.scalar_count[env, j] > 0:
        count = jt.joint_row_count[j]
    for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + count):
        active = ja.row_active[env, r]
        if active == ROW_OFF:
            continue
        kind = jt.row_kind[r]
        coef = ja.row_coef[env, r]
        if _is_block_row(kind, active, coef) != 0:
            continue  # solved with the block, below
        vel = _span_dot(ja.row_g, v, env, r, span)
        acc = ja.row_lambda[env, r]
        resp = ja.row_r[env, r]
        dq = ja.row_dq[env, r]
        delta = float(0.0)
        if kind == BODY_ROW_DRIVE:
            if tgs == 0 or position_iteration != 0:  # TGS velocity iterations freeze drives
                k = jt.row_coord[r]
                new = drive_impulse(coef, acc, vel, dq, t_elapsed, jt.coord_max_force[k] * dt)
                delta = new - acc
                ja.row_lambda[env, r] = new
        elif kind == BODY_ROW_RANGE and active == ROW_ON:
            k = jt.row_coord[r]
            c = ja.row_value[env, r]
            if coef[1] < 0.0:
                res = limit_impulse(
                    c - ja.range_low[env, k],
                    ja.range_high[env, k] - c,
                    dq,
                    vel,
                    h,
                    erp,
                    1.0 / resp,
                    acc,
                    ja.row_lambda2[env, r],
                    position_iteration,
                )
                delta = res[0]
                ja.row_lambda[env, r] = res[1]
                ja.row_lambda2[env, r] = res[2]
            else:  # a soft range: a spring that only pushes, beyond either bound
                low = _soft_delta(c + dq - ja.range_low[env, k], vel, acc, resp, coef, position_iteration, tgs)
                new_low = wp.max(acc + low, 0.0)
                hi = ja.row_lambda2[env, r]
                high = _soft_delta(ja.range_high[env, k] - c - dq, -vel, -hi, resp, coef, position_iteration, tgs)
                new_high = wp.min(hi - high, 0.0)
                delta = (new_low - acc) + (new_high - hi)
                ja.row_lambda[env, r] = new_low
                ja.row_lambda2[env, r] = new_high
        else:  # a compliant slot or lock
            delta = _soft_delta(ja.row_value[env, r] + dq, vel, acc, resp, coef, position_iteration, tgs)
            ja.row_lambda[env, r] = acc + delta
        if delta != 0.0:
            _span_add(v, ja.row_minv_g, env, r, span, delta)
    _solve_joint_block(jt, ja, v, env, j, h, erp, position_iteration)


@wp.func
def solve_dynamic_body_joints(
    jt: BodyJointTable,
    ja: BodyJointArrays,
    v: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
    dt: float,
    erp: float,
    t_elapsed: float,
    position_iteration: int,
    tgs: int,
) -> None:
    """The joints between two moving bodies (PhysX's link dynamic constraints), in creation order."""
    for i in range(jt.dynamic_count):
        solve_body_joint(jt, ja, v, env, jt.joint_order[i], n_gen, h, dt, erp, t_elapsed, position_iteration, tgs)


@wp.func
def advance_body_joints(
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    minv: wp.array3d(dtype=float),
    env: int,
) -> None:
    """TGS, after each substep: every active row measured again on the substep's poses (link_pose, with kin's
    origin, COMs and motion columns): its value change since the step start, exactly, and its direction and
    response (M^-1 stays the step start's). A body turning fast about a pin leaves the pin along the chord it
    moves on: the first-order update g.v h never sees that, and rows kept at the start geometry keep pushing
    along the start tangent, so the drift per step stays what a single step makes. A row that has lost its
    direction on the way (a singular pose) is off for the rest of the step."""
    o = kin.origin[env]
    for j in range(jt.joint_count):
        xc, xd, _tcd, raw, dirs = joint_kinematics(jt, link_pose, env, j)
        values = joint_coordinates(jt, ja, env, j, raw, 0)
        span = jt.joint_span[j]
        for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
            active = ja.row_active[env, r]
            if active == ROW_OFF or ja.row_coef[env, r][3] != 0.0:
                continue  # a MuJoCo-soft row keeps the step's start geometry, as MuJoCo's
            slot = jt.row_slot[r]
            value = values[slot]
            if active == ROW_LOCKED:
                value = value - ja.lock_value[env, jt.row_coord[r]]
            ja.row_dq[env, r] = value - ja.row_value[env, r]
            wa, wb = slot_wrenches(jt, j, slot, xc, xd, dirs, o)
            joint_row_direction(tree, jt, kin, ja.row_g, env, r, j, wa, wb)
            resp = _span_solve(minv, ja.row_g, ja.row_minv_g, env, r, span)
            if resp < _MIN_RESPONSE or _span_dot_rows(ja.row_g, ja.row_g, env, r, r, span) < _MIN_DIRECTION:
                ja.row_active[env, r] = ROW_OFF
            else:
                ja.row_r[env, r] = resp
        factor_joint_block(jt, ja, env, j)
        orthogonalize_coordinate_rows(jt, ja, env, j)
