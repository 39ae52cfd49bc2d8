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
MuJoCo's elliptic cone (MAT_PYRAMID < 0) has the same frame and rows, solved as one block per contact with its
impulse in the Coulomb cone (constraints/elliptic.py).
"""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import (
    MAT_SOLREF,
    MAT_WEIGHT,
    Geometry,
)
from ..core.data import Kin
from ..core.model import Tree
from ..math.dense import row_dot, rows_dot, solve_row
from .contact_arrays import (
    PATCH_SWEEPS,
    SWEEP_TOLERANCE,
    ContactRows,
    apply_patch,
    clear_row,
    load_delassus,
    load_impulses,
    load_velocities,
    patch_end,
    point_velocity,
    set_row,
)
from .elliptic import ELLIPTIC, is_elliptic, setup_elliptic, solve_elliptic_patch
from .pyramid import cone_factor, is_pyramid, pyramid_edge, pyramid_impulses, setup_pyramid, solve_pyramid_patch
from .softness import SOFT_APART, SOFT_HARD, is_soft, soft_params, soft_row

# for the row form and the solvers
__all__ = ["ELLIPTIC", "ContactRows", "patch_end", "pyramid_edge", "pyramid_impulses"]


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
    responses: int,
) -> None:
    """Normal rows of every contact and friction rows at each patch's anchors: directions, M^-1 g, responses,
    restitution targets, anchor drifts; zero impulses. link_v: link spatial velocities (about O) at the start of
    the step, for the slip direction; corr: the friction correlation distance [m]. Without `responses` (the direct
    solver) neither M^-1 g, the responses nor the patches' Delassus matrices: contact_responses computes them for
    a fallback to PGS."""
    o = kin.origin[env]
    count = cp.count[env]
    for c in range(count):
        set_row(
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
            responses,
        )
        clear_row(ct, env, 3 * c + 1, n_gen)
        clear_row(ct, env, 3 * c + 2, n_gen)
        ct.anchor[env, c] = 0
        ct.broken[env, c] = 0
        ct.ang_edges[env, c] = 0  # a pyramidal slot sets its own (pyramid.setup_pyramid)
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
            setup_pyramid(tree, kin, geo, cp, ct, link_pose, link_v, minv, sp, o, env, c, n_gen, dt, responses)
        elif is_elliptic(cmat) != 0:
            ct.soft_cfm[env, c] = SOFT_APART
            setup_elliptic(tree, kin, geo, cp, ct, link_pose, link_v, minv, sp, o, env, c, n_gen, dt, responses)
        elif is_soft(sp):
            ct.soft_cfm[env, c] = SOFT_APART
            if cp.separation[env, c] < 0.0:
                pc = cp.point[env, c] - o
                nc = cp.normal[env, c]
                vn0 = wp.dot(nc, point_velocity(link_v, env, cp.link_a[env, c], pc))
                vn0 -= wp.dot(nc, point_velocity(link_v, env, cp.link_b[env, c], pc))
                row = soft_row(sp, cp.separation[env, c], vn0, cmat[MAT_WEIGHT] * cone_factor(cmat), dt, dt)
                ct.soft_target[env, c] = row[0]
                ct.soft_cfm[env, c] = row[1]
    c0 = int(0)
    while c0 < count:
        c1 = patch_end(cp, env, c0, count)
        mat = cp.material[env, c0]
        if (mat[0] > 0.0 or mat[1] > 0.0) and is_pyramid(mat) == 0 and is_elliptic(mat) == 0:
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
                t1 = _tangent(n, point_velocity(link_v, env, la, pa) - point_velocity(link_v, env, lb, pb))
                t2 = wp.cross(n, t1)
                ct.tangent[env, s] = t1
                ct.anchor[env, s] = 1
                ct.anchor_error[env, s] = wp.vec2(wp.dot(pa - pb, t1), wp.dot(pa - pb, t2))
                set_row(tree, kin, ct, minv, env, 3 * s + 1, n_gen, la, pa, lb, pb, t1, responses)
                set_row(tree, kin, ct, minv, env, 3 * s + 2, n_gen, la, pa, lb, pb, t2, responses)
        if responses != 0:
            _patch_delassus(ct, env, c0, c1, n_gen)
        c0 = c1


@wp.func
def contact_responses(cp: ContactPoints, ct: ContactRows, minv: wp.array3d(dtype=float), env: int, n_gen: int) -> None:
    """What setup_contacts leaves out without `responses`, from the rows it set: every row's M^-1 g and response
    (a cleared row's are zero), the angular rows' M^-1 g and each patch's Delassus matrix: the same values, for a
    direct step that falls back to PGS."""
    count = cp.count[env]
    for c in range(count):
        for k in range(3):
            ct.response[env, 3 * c + k] = solve_row(minv, ct.g, ct.minv_g, env, 3 * c + k, n_gen)
        angular = ct.ang_edges[env, c]  # a pyramid's edges (two per row), an elliptic contact's rows
        if ct.pyramid[env, c] != ELLIPTIC:
            angular = angular // 2
        for k in range(angular):
            solve_row(minv, ct.ang_g, ct.ang_minv_g, env, 3 * c + k, n_gen)
    c0 = int(0)
    while c0 < count:
        c1 = patch_end(cp, env, c0, count)
        _patch_delassus(ct, env, c0, c1, n_gen)
        c0 = c1


@wp.func
def _patch_delassus(ct: ContactRows, env: int, c0: int, c1: int, n_gen: int) -> None:
    """The patch's Delassus matrix A = G M^-1 G^T, once per step (the rows do not change within it): the patch
    solve reads it every visit. Rows that carry no friction (no anchor) stay zero."""
    m = 3 * (c1 - c0)
    i = int(0)
    while i < m:  # while loops: _solve_patch
        ri = 3 * c0 + i
        live_i = i % 3 == 0 or ct.anchor[env, c0 + i // 3] != 0 or ct.pyramid[env, c0 + i // 3] != 0
        j = int(0)
        while j < m:
            rj = 3 * c0 + j
            s = float(0.0)
            if live_i and (j % 3 == 0 or ct.anchor[env, c0 + j // 3] != 0 or ct.pyramid[env, c0 + j // 3] != 0):
                if j < i:
                    s = ct.delassus[env, rj, i]  # symmetric
                else:
                    s = rows_dot(ct.g, ri, ct.minv_g, rj, env, n_gen)
            ct.delassus[env, ri, j] = s
            j += 1
        i += 1


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
def _patch_idle(
    ct: ContactRows,
    v: wp.array2d(dtype=float),
    env: int,
    c0: int,
    c1: int,
    n_gen: int,
    h: float,
    erp: float,
    position_iteration: int,
) -> int:
    """1 when the sweeps of _solve_patch would change no impulse: none yet, and every normal row's velocity already
    meets its target (speculative contacts that stay apart: most of a hand's points above its table). The patch's
    broken flag is then written as the sweeps would have (an anchor whose free slip or drift is not zero slides
    under a zero friction bound). Exact, and the patch costs its normal rows' velocities instead of its Delassus
    copy and sweeps."""
    c = c0
    while c < c1:
        r = 3 * c
        if ct.impulse[env, r] != 0.0 or ct.impulse[env, r + 1] != 0.0 or ct.impulse[env, r + 2] != 0.0:
            return 0
        if ct.delassus[env, r, 3 * (c - c0)] > 1.0e-12 and ct.soft_cfm[env, c] != SOFT_APART:
            if row_dot(ct.g, v, env, r, n_gen) < normal_target(ct, env, c, h, erp, position_iteration):
                return 0
        c += 1
    broken = int(0)
    c = c0
    while c < c1 and broken == 0:
        if ct.anchor[env, c] != 0:
            drift = wp.vec2(0.0)
            if position_iteration != 0:
                drift = ct.anchor_error[env, c] * (-erp / h)
            r = 3 * c
            i = 3 * (c - c0)
            if ct.delassus[env, r + 1, i + 1] > 1.0e-12 and drift[0] != row_dot(ct.g, v, env, r + 1, n_gen):
                broken = 1
            if ct.delassus[env, r + 2, i + 2] > 1.0e-12 and drift[1] != row_dot(ct.g, v, env, r + 2, n_gen):
                broken = 1
        c += 1
    ct.broken[env, c0] = broken
    return 1


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
    if ct.pyramid[env, c0] == ELLIPTIC:
        solve_elliptic_patch(cp, ct, v, env, c0, c1, n_gen)
        return
    if ct.pyramid[env, c0] != 0:
        solve_pyramid_patch(cp, ct, v, env, c0, c1, n_gen)
        return
    if _patch_idle(ct, v, env, c0, c1, n_gen, h, erp, position_iteration) != 0:
        return
    # long function: the sweep's normal, friction and relaxation steps share the patch's matrix and impulses, which
    # Warp would copy into and out of each helper (structs and vectors pass by value). While loops throughout, as
    # contact_arrays' loads: these are the PGS contact solve's inner loops
    m = 3 * (c1 - c0)
    n = c1 - c0
    a = load_delassus(ct, env, c0, m)
    vrel = load_velocities(ct, v, env, c0, m, n_gen)
    lam0 = load_impulses(ct, env, c0, m)
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
    # friction at the anchors, each bounded by mu / anchors times the patch's normal impulse
    anchors = float(0.0)
    c = int(0)
    while c < n:
        anchors += float(ct.anchor[env, c0 + c])
        c += 1
    mat = cp.material[env, c0]
    sweep = int(0)
    while sweep < PATCH_SWEEPS:
        before = lam
        c = int(0)
        while c < n:
            i = 3 * c
            cfm = wp.max(ct.soft_cfm[env, c0 + c], 0.0)
            if a[i, i] > 1.0e-12 and ct.soft_cfm[env, c0 + c] != SOFT_APART:
                vi = vrel[i]
                j = int(0)
                while j < m:
                    vi += a[i, j] * (lam[j] - lam0[j])
                    j += 1
                target = normal_target(ct, env, c0 + c, h, erp, position_iteration)
                lam[i] = wp.max(lam[i] + (target - vi - cfm * lam[i]) / (a[i, i] + cfm), 0.0)
            c += 1
        total = float(0.0)
        c = int(0)
        while c < n:
            total += lam[3 * c]
            c += 1
        broken = int(0)
        c = int(0)
        while c < n:
            i = 3 * c
            if ct.anchor[env, c0 + c] != 0:
                drift = wp.vec2(0.0)
                if position_iteration != 0:
                    drift = ct.anchor_error[env, c0 + c] * (-erp / h)
                n1 = lam[i + 1]
                n2 = lam[i + 2]
                v1 = vrel[i + 1]
                v2 = vrel[i + 2]
                j = int(0)
                while j < m:
                    v1 += a[i + 1, j] * (lam[j] - lam0[j])
                    v2 += a[i + 2, j] * (lam[j] - lam0[j])
                    j += 1
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
            c += 1
        ct.broken[env, c0] = broken  # the last sweep of the last visit decides
        change = float(0.0)  # largest velocity change this sweep made
        back = float(0.0)  # how far this sweep's impulses are from those the sweep before started from
        i = int(0)
        while i < m:
            change = wp.max(change, wp.abs(lam[i] - before[i]) * a[i, i])
            back = wp.max(back, wp.abs(lam[i] - earlier[i]) * a[i, i])
            i += 1
        if sweep > 0 and back < 0.1 * change and (total == 0.0 or earlier_total == 0.0):
            omega = 0.5 * omega
        earlier = before
        earlier_total = total
        if omega < 1.0:
            i = int(0)
            while i < m:
                lam[i] = before[i] + omega * (lam[i] - before[i])
                i += 1
            change = omega * change
        if change < SWEEP_TOLERANCE:
            break  # converged
        sweep += 1
    apply_patch(ct, v, env, c0, m, n_gen, lam, lam0)


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
