"""Frictional contact rows (physx-notes 4.1, 9.6; the guide's "Constraint Sequence").

Each contact gives three rows on the generalized velocities: the normal n and two friction directions t1, t2 at
the contact point p. A row's direction is g = J_a(p)^T w - J_b(p)^T w with w the unit force along the row at p
(b's term only for self-collision), so g^T v is the relative velocity of the two bodies at p along the row and an
impulse dl changes v by dl M^-1 g, exactly as the coupling rows of mimic joints and tendons do.

Normal row (accumulated impulse >= 0): in position iterations the relative normal velocity is pushed to at least
-s/h for a separated contact (speculative: it may close the gap s within the step but not cross it) and to
-erp s/h for a penetrating one (PGS erp 0.8, TGS min(0.8, 2/sqrt(n_pos)), physx-notes 4.4); velocity iterations
keep only the speculative part (minPenetration 0). A contact that approaches faster than the bounce threshold and
would close within the step instead targets the restitution velocity -e v_n0 (v_n0 the approach speed before the
solve).

Friction is PhysX's patch friction. The contacts of one shape pair form a patch; its friction acts at one or two
anchors, each a point fixed on both bodies (kept in each body's frame), with two rows along t1 (the slip direction)
and t2 = n x t1. A new patch takes its first (deepest) contact as anchor and, if another contact lies farther than
the friction correlation distance, the farthest one as the second; a smaller patch gets one anchor at its
centroid. While the patch sticks its anchors are kept to the next step (matched by shape pair, dropped if they
drifted apart or left the contact plane), and in position iterations the rows also pull the anchor drift e back
(target -erp e/h): static friction holds a position, not only a velocity, so stacks and grasps do not creep.
Each anchor's impulse is bounded by mu_s/k times the patch's normal impulse (k anchors; PhysX's improved patch
friction); beyond it the anchor slides with mu_d/k and the patch is marked broken, which renews its anchors at the
next step. The rows of a patch are solved together (_solve_patch).
TGS tracks each contact's separation (`gap`, from the detected one) and each anchor's drift over the substeps
(s += v_n rho).

MuJoCo's pyramidal cone (an MJCF model's default; a soft contact whose material carries MAT_PYRAMID, the impratio,
and friction f): the contact point's rows 3c+1, 3c+2 are MuJoCo's contact frame t1, t2 (mju_makeFrame: the normal's
component-free part of y, or of z when n is near y, or of a plane-capsule contact's capsule axis; t2 = n x t1) at
the point itself, with no anchors, and the
solvers act on its four edges g_e = g_n + s f g_tk (s = +-1, k = 1, 2), each pushing only (lambda_e >= 0): the
contact impulse is sum lambda_e along n and f (lambda_1 - lambda_2), f (lambda_3 - lambda_4) along t1, t2, inside
|f_t1| + |f_t2| <= f f_n. Each edge is a soft row (constraints/softness.py) with its own velocity v_e at the step's
start, the contact's depth r, and MuJoCo's R = 2 mu^2 (1 + f^2) (1 - d) / d w, mu^2 = f^2 / impratio (mj_makeImpedance
with diagApprox w (1 + f^2) per edge), so that PGS to convergence, TGS and the direct solver give MuJoCo's force.
"""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import (
    GEOM_CAPSULE,
    GEOM_PLANE,
    MAT_PYRAMID,
    MAT_SOLREF,
    MAT_WEIGHT,
    ContactMaterial,
    Geometry,
)
from ..core.data import Kin
from ..core.model import Tree
from ..math.dense import add_row, row_dot, solve_row
from .coupling_rows import add_jacobian_transpose
from .softness import SOFT_APART, SOFT_HARD, is_soft, soft_params, soft_row


@wp.struct
class ContactRows:
    """The solver's side of a block's contacts (E envs, C slots, N generalized dofs): three rows per contact point
    of `ContactPoints` (same slots), their results, and the friction anchors kept from step to step."""

    gap: wp.array2d(dtype=float)  # (E, C) the normal row's separation [m]: detected, then tracked over TGS substeps
    tangent: wp.array2d(dtype=wp.vec3)  # (E, C) first friction direction (the second is normal x tangent)
    bounce: wp.array2d(dtype=float)  # (E, C) restitution target normal velocity (0 when not bouncing) [m/s]
    # a soft contact's normal row (constraints/softness.py), fixed for the step: cfm = SOFT_HARD for a hard contact,
    # SOFT_APART for a soft one whose surfaces do not overlap (no row: MuJoCo has no contact there)
    soft_target: wp.array2d(dtype=float)  # (E, C) [m/s]
    soft_cfm: wp.array2d(dtype=float)  # (E, C) [m/s per N s]; a pyramidal contact's: every edge's R
    # MuJoCo's pyramidal cone (a soft contact whose material asks for it, MAT_PYRAMID): four edge rows instead of
    # the normal row and PhysX's anchors (module docstring)
    pyramid: wp.array2d(dtype=int)  # (E, C) 1 if slot c's friction is MuJoCo's pyramidal cone
    edge_target: wp.array2d(dtype=wp.vec4)  # (E, C) the edges' targets, n + f t1, n - f t1, n + f t2, n - f t2 [m/s]
    edge_impulse: wp.array2d(dtype=wp.vec4)  # (E, C) their accumulated impulses (>= 0) [N s]
    g: wp.array3d(dtype=float)  # (E, 3C, N) generalized directions of the normal and two friction rows
    minv_g: wp.array3d(dtype=float)  # (E, 3C, N) M^-1 g
    response: wp.array2d(dtype=float)  # (E, 3C) g^T M^-1 g
    delassus: wp.array3d(dtype=float)  # (E, 3C, 12) row r's entries g_r^T M^-1 g_s against the rows s of its patch
    impulse: wp.array2d(dtype=float)  # (E, 3C) accumulated impulses [N s]
    force: wp.array2d(dtype=wp.vec3)  # (E, C) reported force on link a at the point, world [N]
    # patch friction (PhysX's model, docs/design.md): the friction rows of slot c act at an anchor when
    # anchor[c] != 0 (the first one or two slots of a patch); anchors persist across steps while the patch sticks
    anchor: wp.array2d(dtype=int)  # (E, C) 1 if slot c's friction rows act at an anchor
    anchor_a: wp.array2d(dtype=wp.vec3)  # (E, C) anchor in link a's actor frame [m]
    anchor_b: wp.array2d(dtype=wp.vec3)  # (E, C) anchor in link b's actor frame (world for a static shape) [m]
    anchor_error: wp.array2d(dtype=wp.vec2)  # (E, C) anchor drift (a minus b) along the two friction directions [m]
    broken: wp.array2d(dtype=int)  # (E, C) 1 if the patch's friction hit its static bound in the last solve
    prev_count: wp.array(dtype=int)  # (E,) contacts of the previous step, for matching patches
    prev_shape_a: wp.array2d(dtype=int)  # (E, C)
    prev_shape_b: wp.array2d(dtype=int)  # (E, C)
    prev_anchor: wp.array2d(dtype=int)  # (E, C) anchor kept (it did not slip)
    prev_anchor_a: wp.array2d(dtype=wp.vec3)  # (E, C)
    prev_anchor_b: wp.array2d(dtype=wp.vec3)  # (E, C)


@wp.func
def _tangent(n: wp.vec3, slip: wp.vec3) -> wp.vec3:
    """First friction direction: along the tangential slip when there is one, else any unit vector normal to n."""
    t = slip - n * wp.dot(slip, n)
    if wp.length(t) > 1.0e-6:
        return wp.normalize(t)
    a = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(n[0]) > 0.8:
        a = wp.vec3(0.0, 1.0, 0.0)
    return wp.normalize(wp.cross(n, a))


@wp.func
def _point_velocity(link_v: wp.array2d(dtype=wp.spatial_vector), env: int, link: int, p: wp.vec3) -> wp.vec3:
    if link < 0:
        return wp.vec3(0.0)
    v = link_v[env, link]
    return wp.spatial_bottom(v) + wp.cross(wp.spatial_top(v), p)


@wp.func
def _set_row(
    tree: Tree,
    kin: Kin,
    ct: ContactRows,
    minv: wp.array3d(dtype=float),
    env: int,
    row: int,
    n_gen: int,
    la: int,
    pa: wp.vec3,
    lb: int,
    pb: wp.vec3,
    u: wp.vec3,
) -> None:
    """Row `row` = the relative velocity along u of a's point pa and b's point pb (both relative to O)."""
    for i in range(n_gen):
        ct.g[env, row, i] = 0.0
    add_jacobian_transpose(tree, kin, ct.g, env, row, la, wp.spatial_vector(wp.cross(pa, u), u), 1.0)
    if lb >= 0:
        add_jacobian_transpose(tree, kin, ct.g, env, row, lb, wp.spatial_vector(wp.cross(pb, u), u), -1.0)
    ct.response[env, row] = solve_row(minv, ct.g, ct.minv_g, env, row, n_gen)
    ct.impulse[env, row] = 0.0


@wp.func
def _clear_row(ct: ContactRows, env: int, row: int, n_gen: int) -> None:
    for i in range(n_gen):
        ct.g[env, row, i] = 0.0
        ct.minv_g[env, row, i] = 0.0
    ct.response[env, row] = 0.0
    ct.impulse[env, row] = 0.0


@wp.func
def patch_end(cp: ContactPoints, env: int, c: int, c1: int) -> int:
    """One past the last contact of the patch starting at c (consecutive contacts of one shape pair, <= 4)."""
    e = c + 1
    while (
        e < c1 and e - c < 4 and cp.shape_a[env, e] == cp.shape_a[env, c] and cp.shape_b[env, e] == cp.shape_b[env, c]
    ):
        e += 1
    return e


@wp.func
def _cone_factor(mat: ContactMaterial) -> float:
    """The normal row's regularizer under MuJoCo's pyramidal cone relative to the elliptic one's: its 2(dim-1)
    edge rows n +- mu t share R_py = 2 mu^2 R_edge with R_edge = (1 - d) / d w (1 + f^2) (MuJoCo's
    mj_makeImpedance and diagApprox; mu^2 = f^2 / impratio, f the friction), and together act on the normal as one
    row of R_py / 4 (dim 3): mu^2 (1 + f^2) / 2 of the elliptic cone's (1 - d) / d w. 1 without friction or for
    the elliptic cone (MAT_PYRAMID 0)."""
    f = mat[0]
    ratio = mat[MAT_PYRAMID]
    if ratio <= 0.0 or f <= 0.0:
        return 1.0
    return f * f / ratio * (1.0 + f * f) / 2.0


@wp.func
def is_pyramid(mat: ContactMaterial) -> int:
    """1 for a soft contact with friction under MuJoCo's pyramidal cone (module docstring)."""
    if mat[MAT_PYRAMID] > 0.0 and mat[0] > 0.0 and (mat[MAT_SOLREF] != 0.0 or mat[MAT_SOLREF + 1] != 0.0):
        return 1
    return 0


@wp.func
def mujoco_tangent(n: wp.vec3, hint: wp.vec3) -> wp.vec3:
    """MuJoCo's first contact-frame axis for normal n (mju_makeFrame): the collision's hint (a unit vector, or
    zero), else y, or z when |n_y| >= 0.5; made normal to n."""
    a = wp.vec3(0.0, 1.0, 0.0)
    if wp.abs(n[1]) >= 0.5:
        a = wp.vec3(0.0, 0.0, 1.0)
    if wp.length(hint - n * wp.dot(n, hint)) > 1.0e-6:
        a = hint
    return wp.normalize(a - n * wp.dot(n, a))


@wp.func
def _frame_hint(
    geo: Geometry, link_pose: wp.array2d(dtype=wp.transform), cp: ContactPoints, env: int, c: int
) -> wp.vec3:
    """The tangent MuJoCo's collision sets before mju_makeFrame: a plane-capsule contact's capsule axis
    (mjc_PlaneCapsule aligns its frame with it; every other pair of artic's shapes leaves it to the default)."""
    ga = cp.shape_a[env, c]
    gb = cp.shape_b[env, c]
    cap = int(-1)
    if geo.geom_type[ga] == GEOM_CAPSULE and geo.geom_type[gb] == GEOM_PLANE:
        cap = ga
    elif geo.geom_type[gb] == GEOM_CAPSULE and geo.geom_type[ga] == GEOM_PLANE:
        cap = gb
    if cap < 0:
        return wp.vec3(0.0)
    pose = geo.geom_pose[cap]
    if geo.geom_link[cap] >= 0:
        pose = wp.transform_multiply(link_pose[env, geo.geom_link[cap]], pose)
    return wp.transform_vector(pose, wp.vec3(1.0, 0.0, 0.0))  # artic's capsules lie along their x axis


@wp.func
def pyramid_edge(e: int) -> wp.vec2:
    """(k, s) of edge e: g_e = g_n + s f g_tk, in MuJoCo's order (t1 +, t1 -, t2 +, t2 -)."""
    return wp.vec2(float(1 + e // 2), float(1 - 2 * (e % 2)))


@wp.func
def _setup_pyramid(
    tree: Tree,
    kin: Kin,
    geo: Geometry,
    cp: ContactPoints,
    ct: ContactRows,
    link_pose: wp.array2d(dtype=wp.transform),
    link_v: wp.array2d(dtype=wp.spatial_vector),
    minv: wp.array3d(dtype=float),
    sp: soft_params,
    o: wp.vec3,
    env: int,
    c: int,
    n_gen: int,
    dt: float,
) -> None:
    """Slot c's friction rows along MuJoCo's frame at the point, and its edges' soft targets and R."""
    cmat = cp.material[env, c]
    la = cp.link_a[env, c]
    lb = cp.link_b[env, c]
    pc = cp.point[env, c] - o
    n = cp.normal[env, c]
    t1 = mujoco_tangent(n, _frame_hint(geo, link_pose, cp, env, c))
    t2 = wp.cross(n, t1)
    ct.tangent[env, c] = t1
    ct.pyramid[env, c] = 1
    _set_row(tree, kin, ct, minv, env, 3 * c + 1, n_gen, la, pc, lb, pc, t1)
    _set_row(tree, kin, ct, minv, env, 3 * c + 2, n_gen, la, pc, lb, pc, t2)
    ct.edge_impulse[env, c] = wp.vec4(0.0)
    if cp.separation[env, c] >= 0.0:
        return  # apart: no rows (soft_cfm stays SOFT_APART)
    rel = _point_velocity(link_v, env, la, pc) - _point_velocity(link_v, env, lb, pc)
    f = cmat[0]
    weight = cmat[MAT_WEIGHT] * 2.0 * f * f / cmat[MAT_PYRAMID] * (1.0 + f * f)
    targets = wp.vec4(0.0)
    cfm = float(0.0)
    for e in range(4):
        ks = pyramid_edge(e)
        t = t1
        if ks[0] > 1.5:
            t = t2
        row = soft_row(sp, cp.separation[env, c], wp.dot(n + t * (ks[1] * f), rel), weight, dt, dt)
        targets[e] = row[0]
        cfm = row[1]
    ct.edge_target[env, c] = targets
    ct.soft_cfm[env, c] = cfm


@wp.func
def _link_frame(link_pose: wp.array2d(dtype=wp.transform), env: int, link: int) -> wp.transform:
    if link < 0:
        return wp.transform_identity()
    return link_pose[env, link]


@wp.func
def _kept_anchors(
    cp: ContactPoints,
    ct: ContactRows,
    link_pose: wp.array2d(dtype=wp.transform),
    env: int,
    c0: int,
    c1: int,
    corr: float,
) -> int:
    """Copy the previous step's anchors of this shape pair into slots c0.. if they are still on the contact
    plane and have not drifted apart; returns how many were kept."""
    sa = cp.shape_a[env, c0]
    sb = cp.shape_b[env, c0]
    xa = _link_frame(link_pose, env, cp.link_a[env, c0])
    xb = _link_frame(link_pose, env, cp.link_b[env, c0])
    n = cp.normal[env, c0]
    kept = int(0)
    candidates = int(0)
    for j in range(ct.prev_count[env]):
        if (
            ct.prev_anchor[env, j] != 0
            and ct.prev_shape_a[env, j] == sa
            and ct.prev_shape_b[env, j] == sb
            and c0 + kept < c1
        ):
            candidates += 1
            pa = wp.transform_point(xa, ct.prev_anchor_a[env, j])
            pb = wp.transform_point(xb, ct.prev_anchor_b[env, j])
            if wp.length(pa - pb) < corr and wp.abs(wp.dot(pa - cp.point[env, c0], n)) < corr:
                ct.anchor_a[env, c0 + kept] = ct.prev_anchor_a[env, j]
                ct.anchor_b[env, c0 + kept] = ct.prev_anchor_b[env, j]
                kept += 1
    if kept < candidates:
        kept = 0  # one of two survived: start the patch afresh rather than guess the second
    return kept


@wp.func
def _new_anchors(
    cp: ContactPoints,
    ct: ContactRows,
    link_pose: wp.array2d(dtype=wp.transform),
    env: int,
    c0: int,
    c1: int,
    corr: float,
) -> int:
    """Anchors of a new patch: its first contact and, if farther than `corr`, its farthest one; a patch whose
    contacts all lie within `corr` gets one anchor at their centroid (one anchor cannot resist a twist about the
    normal, and at a corner the tangential load's moment about it would spin the body)."""
    xa_inv = wp.transform_inverse(_link_frame(link_pose, env, cp.link_a[env, c0]))
    xb_inv = wp.transform_inverse(_link_frame(link_pose, env, cp.link_b[env, c0]))
    p0 = cp.point[env, c0]
    far = int(-1)
    best = corr
    centroid = p0
    for c in range(c0 + 1, c1):
        centroid += cp.point[env, c]
        d = wp.length(cp.point[env, c] - p0)
        if d > best:
            best = d
            far = c
    if far < 0:
        centroid /= float(c1 - c0)
        ct.anchor_a[env, c0] = wp.transform_point(xa_inv, centroid)
        ct.anchor_b[env, c0] = wp.transform_point(xb_inv, centroid)
        return 1
    ct.anchor_a[env, c0] = wp.transform_point(xa_inv, p0)
    ct.anchor_b[env, c0] = wp.transform_point(xb_inv, p0)
    ct.anchor_a[env, c0 + 1] = wp.transform_point(xa_inv, cp.point[env, far])
    ct.anchor_b[env, c0 + 1] = wp.transform_point(xb_inv, cp.point[env, far])
    return 2


@wp.func
def setup_contacts(
    tree: Tree,
    kin: Kin,
    geo: Geometry,
    cp: ContactPoints,
    ct: ContactRows,
    link_pose: wp.array2d(dtype=wp.transform),
    link_v: wp.array2d(dtype=wp.spatial_vector),
    minv: wp.array3d(dtype=float),
    v: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
    bounce_threshold: float,
    corr: float,
) -> None:
    """Normal rows of every contact and friction rows at each patch's anchors: directions, M^-1 g, responses,
    restitution targets, anchor drifts; zero impulses. link_v: link spatial velocities (about O) at the start of
    the step, for the slip direction; corr: the friction correlation distance [m]."""
    o = kin.origin[env]
    count = cp.count[env]
    for c in range(count):
        _set_row(
            tree,
            kin,
            ct,
            minv,
            env,
            3 * c,
            n_gen,
            cp.link_a[env, c],
            cp.point[env, c] - o,
            cp.link_b[env, c],
            cp.point[env, c] - o,
            cp.normal[env, c],
        )
        _clear_row(ct, env, 3 * c + 1, n_gen)
        _clear_row(ct, env, 3 * c + 2, n_gen)
        ct.anchor[env, c] = 0
        ct.broken[env, c] = 0
        ct.anchor_error[env, c] = wp.vec2(0.0)
        ct.tangent[env, c] = _tangent(cp.normal[env, c], wp.vec3(0.0))
        ct.gap[env, c] = cp.separation[env, c]
        vn = row_dot(ct.g, v, env, 3 * c, n_gen)
        e = cp.material[env, c][2]
        bounce = float(0.0)
        if e > 0.0 and -vn > bounce_threshold and -vn * dt > cp.separation[env, c]:
            bounce = -e * vn
        ct.bounce[env, c] = bounce
        ct.soft_cfm[env, c] = SOFT_HARD
        ct.soft_target[env, c] = 0.0
        ct.pyramid[env, c] = 0
        cmat = cp.material[env, c]
        sp = soft_params()
        for k in range(7):
            sp[k] = cmat[MAT_SOLREF + k]
        if is_pyramid(cmat) != 0:
            ct.soft_cfm[env, c] = SOFT_APART
            _setup_pyramid(tree, kin, geo, cp, ct, link_pose, link_v, minv, sp, o, env, c, n_gen, dt)
        elif is_soft(sp):
            ct.soft_cfm[env, c] = SOFT_APART
            if cp.separation[env, c] < 0.0:
                pc = cp.point[env, c] - o
                nc = cp.normal[env, c]
                vn0 = wp.dot(nc, _point_velocity(link_v, env, cp.link_a[env, c], pc))
                vn0 -= wp.dot(nc, _point_velocity(link_v, env, cp.link_b[env, c], pc))
                row = soft_row(sp, cp.separation[env, c], vn0, cmat[MAT_WEIGHT] * _cone_factor(cmat), dt, dt)
                ct.soft_target[env, c] = row[0]
                ct.soft_cfm[env, c] = row[1]
    c0 = int(0)
    while c0 < count:
        c1 = patch_end(cp, env, c0, count)
        mat = cp.material[env, c0]
        if (mat[0] > 0.0 or mat[1] > 0.0) and is_pyramid(mat) == 0:
            anchors = _kept_anchors(cp, ct, link_pose, env, c0, c1, corr)
            if anchors == 0:
                anchors = _new_anchors(cp, ct, link_pose, env, c0, c1, corr)
            la = cp.link_a[env, c0]
            lb = cp.link_b[env, c0]
            xa = _link_frame(link_pose, env, la)
            xb = _link_frame(link_pose, env, lb)
            n = cp.normal[env, c0]
            for s in range(c0, c0 + anchors):
                pa = wp.transform_point(xa, ct.anchor_a[env, s]) - o
                pb = wp.transform_point(xb, ct.anchor_b[env, s]) - o
                t1 = _tangent(n, _point_velocity(link_v, env, la, pa) - _point_velocity(link_v, env, lb, pb))
                t2 = wp.cross(n, t1)
                ct.tangent[env, s] = t1
                ct.anchor[env, s] = 1
                ct.anchor_error[env, s] = wp.vec2(wp.dot(pa - pb, t1), wp.dot(pa - pb, t2))
                _set_row(tree, kin, ct, minv, env, 3 * s + 1, n_gen, la, pa, lb, pb, t1)
                _set_row(tree, kin, ct, minv, env, 3 * s + 2, n_gen, la, pa, lb, pb, t2)
        _patch_delassus(ct, env, c0, c1, n_gen)
        c0 = c1


@wp.func
def _patch_delassus(ct: ContactRows, env: int, c0: int, c1: int, n_gen: int) -> None:
    """The patch's Delassus matrix A = G M^-1 G^T, once per step (the rows do not change within it): the patch
    solve reads it every visit. Rows that carry no friction (no anchor) stay zero."""
    m = 3 * (c1 - c0)
    for i in range(m):
        ri = 3 * c0 + i
        live_i = i % 3 == 0 or ct.anchor[env, c0 + i // 3] != 0 or ct.pyramid[env, c0 + i // 3] != 0
        for j in range(m):
            rj = 3 * c0 + j
            s = float(0.0)
            if live_i and (j % 3 == 0 or ct.anchor[env, c0 + j // 3] != 0 or ct.pyramid[env, c0 + j // 3] != 0):
                if j < i:
                    s = ct.delassus[env, rj, i]  # symmetric
                else:
                    for k in range(n_gen):
                        gk = ct.g[env, ri, k]
                        if gk != 0.0:  # g is sparse: the dofs between the contact's links and their roots
                            s += gk * ct.minv_g[env, rj, k]
            ct.delassus[env, ri, j] = s


PATCH_ROWS = 12  # 4 contacts x (normal, 2 friction)
PATCH_SWEEPS = wp.constant(8)  # at most; a sweep that changes no row velocity by SWEEP_TOLERANCE ends them
SWEEP_TOLERANCE = wp.constant(1.0e-9)  # [m/s] (1e-6 let a 1.6 cm cube on a slope turn by 0.5 deg in 10 s)
EDGE_QP_CFM = wp.constant(1.0e-3)  # a pyramidal contact whose R is below this share of its edges' A: edge by edge
_vec_patch = wp.types.vector(length=PATCH_ROWS, dtype=float)
_mat_patch = wp.types.matrix(shape=(PATCH_ROWS, PATCH_ROWS), dtype=float)


@wp.func
def normal_target(ct: ContactRows, env: int, c: int, h: float, erp: float, position_iteration: int) -> float:
    """A hard normal row's target; a soft one's (ct.soft_cfm >= 0) is ct.soft_target."""
    if ct.soft_cfm[env, c] >= 0.0:
        return ct.soft_target[env, c]
    sep = ct.gap[env, c]
    target = -wp.max(sep, 0.0) / h
    if position_iteration != 0 and sep < 0.0:
        target = -erp * sep / h
    if ct.bounce[env, c] > 0.0:
        target = wp.max(target, ct.bounce[env, c])
    return target


@wp.func
def _solve_patch(
    cp: ContactPoints,
    ct: ContactRows,
    v: wp.array2d(dtype=float),
    env: int,
    c0: int,
    c1: int,
    n_gen: int,
    h: float,
    erp: float,
    position_iteration: int,
) -> None:
    """The rows of one patch (<= 4 contacts of a shape pair) solved together: projected Gauss-Seidel sweeps on the
    patch's Delassus matrix A = G M^-1 G^T (normals, then friction with the Coulomb disc), then one velocity update.
    Converging the patch inside the visit removes the bias a fixed row order leaves in a few outer iterations."""
    if ct.pyramid[env, c0] != 0:
        _solve_pyramid_patch(cp, ct, v, env, c0, c1, n_gen)
        return
    m = 3 * (c1 - c0)
    a = _mat_patch()
    vrel = _vec_patch()
    lam0 = _vec_patch()
    for i in range(m):
        ri = 3 * c0 + i
        vrel[i] = row_dot(ct.g, v, env, ri, n_gen)
        lam0[i] = ct.impulse[env, ri]
        for j in range(m):
            a[i, j] = ct.delassus[env, ri, j]
    lam = lam0
    # A soft contact on a link that few dofs move (a pendulum's ball grazing the floor) has normal and friction
    # rows that move the same dof: friction can undo the normal row's work, and plain sweeps then cycle with period
    # two (normal impulse up, friction stops the swing and with it the approach, normal impulse back to zero, ...)
    # and may end on a zero impulse. A sweep that ends where the one before it started, with the normal impulse
    # zero at one of the two ends, halves the step taken from then on: the same fixed point, reached (a mix of two
    # admissible impulses stays admissible: the bounds are convex in them). Patches that converge, if not
    # monotonically (a stack of boxes), keep the plain sweeps.
    omega = float(1.0)
    earlier = lam0
    earlier_total = float(-1.0)
    for _sweep in range(PATCH_SWEEPS):
        before = lam
        for c in range(c1 - c0):
            i = 3 * c
            cfm = wp.max(ct.soft_cfm[env, c0 + c], 0.0)
            if a[i, i] > 1.0e-12 and ct.soft_cfm[env, c0 + c] != SOFT_APART:
                vi = vrel[i]
                for j in range(m):
                    vi += a[i, j] * (lam[j] - lam0[j])
                target = normal_target(ct, env, c0 + c, h, erp, position_iteration)
                lam[i] = wp.max(lam[i] + (target - vi - cfm * lam[i]) / (a[i, i] + cfm), 0.0)
        # friction at the anchors, each bounded by mu / anchors times the patch's normal impulse
        total = float(0.0)
        anchors = float(0.0)
        for c in range(c1 - c0):
            total += lam[3 * c]
            anchors += float(ct.anchor[env, c0 + c])
        mat = cp.material[env, c0]
        broken = int(0)
        for c in range(c1 - c0):
            i = 3 * c
            if ct.anchor[env, c0 + c] != 0:
                drift = wp.vec2(0.0)
                if position_iteration != 0:
                    drift = ct.anchor_error[env, c0 + c] * (-erp / h)
                n1 = lam[i + 1]
                n2 = lam[i + 2]
                v1 = vrel[i + 1]
                v2 = vrel[i + 2]
                for j in range(m):
                    v1 += a[i + 1, j] * (lam[j] - lam0[j])
                    v2 += a[i + 2, j] * (lam[j] - lam0[j])
                if a[i + 1, i + 1] > 1.0e-12:
                    n1 += (drift[0] - v1) / a[i + 1, i + 1]
                if a[i + 2, i + 2] > 1.0e-12:
                    n2 += (drift[1] - v2) / a[i + 2, i + 2]
                mag = wp.sqrt(n1 * n1 + n2 * n2)
                if mag > mat[0] * total / anchors:
                    broken = 1
                    scale = float(0.0)
                    if mag > 0.0:
                        scale = mat[1] * total / anchors / mag
                    n1 *= scale
                    n2 *= scale
                lam[i + 1] = n1
                lam[i + 2] = n2
        ct.broken[env, c0] = broken  # the last sweep of the last visit decides
        change = float(0.0)  # largest velocity change this sweep made
        for i in range(m):
            change = wp.max(change, wp.abs(lam[i] - before[i]) * a[i, i])
        back = float(0.0)  # how far this sweep's impulses are from those the sweep before started from
        for i in range(m):
            back = wp.max(back, wp.abs(lam[i] - earlier[i]) * a[i, i])
        if _sweep > 0 and back < 0.1 * change and (total == 0.0 or earlier_total == 0.0):
            omega = 0.5 * omega
        earlier = before
        earlier_total = total
        if omega < 1.0:
            for i in range(m):
                lam[i] = before[i] + omega * (lam[i] - before[i])
            change = omega * change
        if change < SWEEP_TOLERANCE:
            break  # converged (at once for a patch of speculative contacts that stay apart)
    for i in range(m):
        d = lam[i] - lam0[i]
        if d != 0.0:
            add_row(v, ct.minv_g, env, 3 * c0 + i, n_gen, d)
            ct.impulse[env, 3 * c0 + i] = lam[i]


@wp.func
def _edge_qp(h: wp.mat44, b: wp.vec4, old: wp.vec4) -> wp.vec4:
    """The x >= 0 minimizing x^T h x / 2 - b^T x for one contact's four edges (h = A_edges + R I, positive
    definite since R > 0, so the answer is unique): the active set whose solution is feasible and whose inactive
    edges' gradients h x - b are >= 0, tried from all four edges active (a sticking contact) down to none (x = 0
    when every b <= 0). Should rounding reject every set (an edge exactly at its bound), `old` is kept."""
    out = old
    found = int(0)
    if b[0] <= 0.0 and b[1] <= 0.0 and b[2] <= 0.0 and b[3] <= 0.0:
        out = wp.vec4(0.0)
        found = 1
    for size in range(4, 0, -1):
        for mask in range(1, 16):
            n = (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1) + ((mask >> 3) & 1)
            if found == 0 and n == size:
                sub = wp.mat44(0.0)
                rhs = wp.vec4(0.0)
                for r in range(4):
                    if (mask >> r) & 1 != 0:
                        rhs[r] = b[r]
                        for q in range(4):
                            if (mask >> q) & 1 != 0:
                                sub[r, q] = h[r, q]
                    else:
                        sub[r, r] = 1.0
                x = wp.inverse(sub) * rhs
                ok = int(1)
                if not (wp.isfinite(x[0]) and wp.isfinite(x[1]) and wp.isfinite(x[2]) and wp.isfinite(x[3])):
                    ok = 0
                g = h * x - b
                scale = wp.max(wp.max(wp.abs(b[0]), wp.abs(b[1])), wp.max(wp.abs(b[2]), wp.abs(b[3])))
                for r in range(4):
                    if (mask >> r) & 1 != 0:
                        if x[r] < 0.0:
                            ok = 0
                    elif g[r] < -1.0e-6 * scale:
                        ok = 0
                if ok != 0:
                    out = x
                    found = 1
    return out


@wp.func
def _solve_pyramid_patch(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, c0: int, c1: int, n_gen: int
) -> None:
    """The edges of a pyramidal patch (module docstring): v_e + R lambda_e = target_e, lambda_e >= 0, on the
    patch's Delassus matrix (an edge's entries are its rows' combinations). Each contact's four edges are solved
    exactly together (_edge_qp: Gauss-Seidel on the edges alone converges slowly, as they share the normal; a
    contact whose R is too small for that, EDGE_QP_CFM, takes Gauss-Seidel steps), the contacts of the patch by
    block Gauss-Seidel sweeps; the rows' impulses are kept as the edges' sums; then one velocity update. The soft
    targets hold for the whole step, so every iteration of every solver solves the same rows."""
    m = 3 * (c1 - c0)
    a = _mat_patch()
    vel = _vec_patch()  # the rows' velocities at the current impulses
    lam0 = _vec_patch()
    for i in range(m):
        ri = 3 * c0 + i
        vel[i] = row_dot(ct.g, v, env, ri, n_gen)
        lam0[i] = ct.impulse[env, ri]
        for j in range(m):
            a[i, j] = ct.delassus[env, ri, j]
    lam = lam0
    f = cp.material[env, c0][0]
    for _sweep in range(PATCH_SWEEPS):
        change = float(0.0)
        exact = int(1)
        for c in range(c1 - c0):
            cfm = ct.soft_cfm[env, c0 + c]
            if cfm >= 0.0:  # else apart: no edges
                i = 3 * c
                old = ct.edge_impulse[env, c0 + c]
                targets = ct.edge_target[env, c0 + c]
                h = wp.mat44(0.0)
                b = wp.vec4(0.0)
                for e in range(4):
                    ke = pyramid_edge(e)
                    k = i + int(ke[0])
                    se = ke[1] * f
                    for q in range(4):
                        kq = pyramid_edge(q)
                        kl = i + int(kq[0])
                        sq = kq[1] * f
                        h[e, q] = a[i, i] + sq * a[i, kl] + se * a[k, i] + se * sq * a[k, kl]
                for e in range(4):
                    ke = pyramid_edge(e)
                    b[e] = targets[e] - vel[i] - ke[1] * f * vel[i + int(ke[0])]
                b = b + h * old
                for e in range(4):
                    h[e, e] = h[e, e] + cfm
                new = old
                # the four edges span three directions: with R ~ 0 (a body MuJoCo weighs 0 at qpos0, whose R is
                # MuJoCo's floor 1e-15) h is singular and float32 solves of it give impulses of 1e8 (robosuite's Jaco
                # gripper); such a contact takes projected Gauss-Seidel steps, edge by edge, instead
                if cfm > EDGE_QP_CFM * wp.max(wp.max(h[0, 0], h[1, 1]), wp.max(h[2, 2], h[3, 3])):
                    new = _edge_qp(h, b, old)
                else:
                    exact = 0
                    for e in range(4):
                        g = b[e] - wp.dot(wp.vec4(h[e, 0], h[e, 1], h[e, 2], h[e, 3]), new)
                        new[e] = wp.max(new[e] + g / h[e, e], 0.0)
                for e in range(4):
                    d = new[e] - old[e]
                    if d != 0.0:
                        ke = pyramid_edge(e)
                        k = i + int(ke[0])
                        se = ke[1] * f
                        lam[i] += d
                        lam[k] += se * d
                        j = int(0)
                        while j < m:
                            vel[j] += (a[j, i] + se * a[j, k]) * d
                            j += 1
                        change = wp.max(change, wp.abs(d) * h[e, e])
                ct.edge_impulse[env, c0 + c] = new
        if change < SWEEP_TOLERANCE or (c1 - c0 == 1 and exact != 0):
            break  # one contact solved exactly: done
    for i in range(m):
        d = lam[i] - lam0[i]
        if d != 0.0:
            add_row(v, ct.minv_g, env, 3 * c0 + i, n_gen, d)
            ct.impulse[env, 3 * c0 + i] = lam[i]


@wp.func
def pyramid_impulses(cp: ContactPoints, ct: ContactRows, env: int, c: int) -> None:
    """Slot c's normal and friction impulses from its edges' (the direct solver's write-back)."""
    edges = ct.edge_impulse[env, c]
    f = cp.material[env, c][0]
    ct.impulse[env, 3 * c] = edges[0] + edges[1] + edges[2] + edges[3]
    ct.impulse[env, 3 * c + 1] = f * (edges[0] - edges[1])
    ct.impulse[env, 3 * c + 2] = f * (edges[2] - edges[3])


@wp.func
def solve_contacts(
    cp: ContactPoints,
    ct: ContactRows,
    v: wp.array2d(dtype=float),
    env: int,
    c0: int,
    c1: int,
    n_gen: int,
    h: float,
    erp: float,
    position_iteration: int,
) -> None:
    """One Gauss-Seidel visit of contacts [c0, c1), patch by patch (consecutive contacts of one shape pair)."""
    c = c0
    while c < c1:
        e = patch_end(cp, env, c, c1)
        _solve_patch(cp, ct, v, env, c, e, n_gen, h, erp, position_iteration)
        c = e


@wp.func
def advance_contacts(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, n_gen: int, h: float
) -> None:
    """TGS: each contact's separation and each anchor's drift after a substep of length h."""
    for c in range(cp.count[env]):
        ct.gap[env, c] = ct.gap[env, c] + row_dot(ct.g, v, env, 3 * c, n_gen) * h
        if ct.anchor[env, c] != 0:
            ct.anchor_error[env, c] = (
                ct.anchor_error[env, c]
                + wp.vec2(row_dot(ct.g, v, env, 3 * c + 1, n_gen), row_dot(ct.g, v, env, 3 * c + 2, n_gen)) * h
            )


@wp.func
def finish_contacts(cp: ContactPoints, ct: ContactRows, env: int, dt: float) -> None:
    """Force on link a at each contact point over the step (the accumulated impulses / dt, world; a patch's
    friction is reported at the contacts that hold its anchors), and the anchors kept for the next step."""
    count = cp.count[env]
    c0 = int(0)
    while c0 < count:
        c1 = patch_end(cp, env, c0, count)
        kept = 1 - ct.broken[env, c0]  # the patch's first slot holds its flag
        for c in range(c0, c1):
            ct.prev_shape_a[env, c] = cp.shape_a[env, c]
            ct.prev_shape_b[env, c] = cp.shape_b[env, c]
            ct.prev_anchor_a[env, c] = ct.anchor_a[env, c]
            ct.prev_anchor_b[env, c] = ct.anchor_b[env, c]
            ct.prev_anchor[env, c] = ct.anchor[env, c] * kept
        c0 = c1
    ct.prev_count[env] = count
    for c in range(count):
        n = cp.normal[env, c]
        t1 = ct.tangent[env, c]
        row = 3 * c
        f = n * ct.impulse[env, row] + t1 * ct.impulse[env, row + 1] + wp.cross(n, t1) * ct.impulse[env, row + 2]
        ct.force[env, c] = f / dt
