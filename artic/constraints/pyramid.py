"""MuJoCo's pyramidal friction cone (an MJCF model's default; constraints/contact_rows.py's module docstring has the
model): each soft contact's edges in MuJoCo's contact frame, their soft targets and regularizer, and their exact
solve per contact in PGS and TGS (the direct solver adds the same edges as rows: constraints/row_form.py); the
torsional and rolling edges (condim 4 and 6) in PGS and TGS by pairs after them (solve_angular_edges)."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import (
    GEOM_CAPSULE,
    GEOM_PLANE,
    MAT_PYRAMID,
    MAT_ROLLING,
    MAT_SOLREF,
    MAT_TORSION,
    MAT_WEIGHT,
    ContactMaterial,
    Geometry,
)
from ..core.data import Kin
from ..core.model import Tree
from ..math.dense import add_row, row_dot, rows_dot, solve_row, zero_row
from .contact_arrays import (
    PATCH_SWEEPS,
    SWEEP_TOLERANCE,
    ContactRows,
    apply_patch,
    load_delassus,
    load_impulses,
    load_velocities,
    point_velocity,
    set_row,
    vec6,
)
from .coupling_rows import add_jacobian_transpose
from .softness import soft_params, soft_row

EDGE_QP_CFM = wp.constant(1.0e-3)  # a pyramidal contact whose R is below this share of its edges' A: edge by edge


@wp.func
def cone_factor(mat: ContactMaterial) -> float:
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
def frame_hint(
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
def setup_pyramid(
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
    responses: int,
) -> None:
    """Slot c's friction rows along MuJoCo's frame at the point, and its edges' soft targets and R (`responses`:
    contact_arrays.set_row's)."""
    cmat = cp.material[env, c]
    la = cp.link_a[env, c]
    lb = cp.link_b[env, c]
    pc = cp.point[env, c] - o
    n = cp.normal[env, c]
    t1 = mujoco_tangent(n, frame_hint(geo, link_pose, cp, env, c))
    t2 = wp.cross(n, t1)
    ct.tangent[env, c] = t1
    ct.pyramid[env, c] = 1
    set_row(tree, kin, ct, minv, env, 3 * c + 1, n_gen, la, pc, lb, pc, t1, responses)
    set_row(tree, kin, ct, minv, env, 3 * c + 2, n_gen, la, pc, lb, pc, t2, responses)
    ct.edge_impulse[env, c] = wp.vec4(0.0)
    ct.ang_edges[env, c] = 0
    if cp.separation[env, c] >= 0.0:
        return  # apart: no rows (soft_cfm stays SOFT_APART)
    rel = point_velocity(link_v, env, la, pc) - point_velocity(link_v, env, lb, pc)
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
    _setup_angular(tree, kin, cp, ct, link_v, minv, sp, env, c, n_gen, la, lb, n, t1, t2, rel, weight, dt, responses)


@wp.func
def angular_axis(k: int, n: wp.vec3, t1: wp.vec3, t2: wp.vec3) -> wp.vec3:
    """The axis of a contact's angular friction row k: spin about n, then rolling about t1 and t2."""
    if k == 1:
        return t1
    if k == 2:
        return t2
    return n


@wp.func
def relative_spin(link_v: wp.array2d(dtype=wp.spatial_vector), env: int, la: int, lb: int) -> wp.vec3:
    """Link a's angular velocity less link b's (a static side: 0)."""
    spin = wp.vec3(0.0)
    if la >= 0:
        spin = wp.spatial_top(link_v[env, la])
    if lb >= 0:
        spin = spin - wp.spatial_top(link_v[env, lb])
    return spin


@wp.func
def angular_rows(
    tree: Tree,
    kin: Kin,
    cp: ContactPoints,
    ct: ContactRows,
    minv: wp.array3d(dtype=float),
    env: int,
    c: int,
    n_gen: int,
    la: int,
    lb: int,
    n: wp.vec3,
    t1: wp.vec3,
    t2: wp.vec3,
    responses: int,
) -> int:
    """Slot c's angular friction rows (MuJoCo's condim 4 and 6): rows 3c + k of ang_g, the bodies' relative angular
    velocity about angular_axis(k), for 1 axis with a torsional friction, 3 with a rolling one, and (`responses`)
    their M^-1 g in ang_minv_g. Returns how many (0: none, or no room: the block's tables have none, one-entry
    placeholders)."""
    cmat = cp.material[env, c]
    count = int(0)
    if cmat[MAT_ROLLING] > 0.0:
        count = 3
    elif cmat[MAT_TORSION] > 0.0:
        count = 1
    if count == 0 or ct.ang_g.shape[1] < 3 * (c + 1) or ct.ang_g.shape[2] < n_gen:
        return 0
    for k in range(count):
        axis = angular_axis(k, n, t1, t2)
        row = 3 * c + k
        zero_row(ct.ang_g, env, row, n_gen)
        add_jacobian_transpose(tree, kin, ct.ang_g, env, row, la, wp.spatial_vector(axis, wp.vec3(0.0)), 1.0)
        if lb >= 0:
            add_jacobian_transpose(tree, kin, ct.ang_g, env, row, lb, wp.spatial_vector(axis, wp.vec3(0.0)), -1.0)
        if responses != 0:
            solve_row(minv, ct.ang_g, ct.ang_minv_g, env, row, n_gen)
    return count


@wp.func
def _setup_angular(
    tree: Tree,
    kin: Kin,
    cp: ContactPoints,
    ct: ContactRows,
    link_v: wp.array2d(dtype=wp.spatial_vector),
    minv: wp.array3d(dtype=float),
    sp: soft_params,
    env: int,
    c: int,
    n_gen: int,
    la: int,
    lb: int,
    n: wp.vec3,
    t1: wp.vec3,
    t2: wp.vec3,
    rel: wp.vec3,
    weight: float,
    dt: float,
    responses: int,
) -> None:
    """Slot c's torsional and rolling edges (MuJoCo's condim 4 and 6, mj_instantiateContact): rows 3c, 3c+1, 3c+2 of
    ang_g are the bodies' relative angular velocity about n, t1 and t2, and edge 2k + (0, 1) is g_n +- f_k ang_g_k
    (f_0 the torsional friction, f_1 = f_2 the rolling one), soft with the same R as the sliding edges (MuJoCo
    gives every edge of a pyramid one R) and its own velocity at the step's start."""
    cmat = cp.material[env, c]
    f_tor = cmat[MAT_TORSION]
    f_roll = cmat[MAT_ROLLING]
    edges = 2 * angular_rows(tree, kin, cp, ct, minv, env, c, n_gen, la, lb, n, t1, t2, responses)
    if edges == 0:
        return
    ct.ang_edges[env, c] = edges
    spin = relative_spin(link_v, env, la, lb)
    targets = vec6(0.0)
    for k in range(edges // 2):
        axis = angular_axis(k, n, t1, t2)
        f = f_tor
        if k > 0:
            f = f_roll
        for s in range(2):
            sign = 1.0 - 2.0 * float(s)
            v_e = wp.dot(n, rel) + sign * f * wp.dot(axis, spin)
            targets[2 * k + s] = soft_row(sp, cp.separation[env, c], v_e, weight, dt, dt)[0]
    ct.ang_target[env, c] = targets
    ct.ang_impulse[env, c] = vec6(0.0)


@wp.func
def angular_edge(cp: ContactPoints, env: int, c: int, e: int) -> wp.vec2:
    """(row of ang_g, s f) of slot c's angular edge e (_setup_angular): g_e = g_n + s f ang_g[row]."""
    k = e // 2
    f = cp.material[env, c][MAT_TORSION]
    if k > 0:
        f = cp.material[env, c][MAT_ROLLING]
    return wp.vec2(float(3 * c + k), (1.0 - 2.0 * float(e % 2)) * f)


@wp.func
def _pair_qp(h: wp.mat22, b: wp.vec2) -> wp.vec2:
    """The x >= 0 minimizing x^T h x / 2 - b^T x for two variables (h positive definite): the cheapest of the
    minimizers on the quadrant's faces (the interior's where it is feasible, each axis's, the origin), which holds
    the global one."""
    best = wp.vec2(0.0)
    cost = float(0.0)
    det = h[0, 0] * h[1, 1] - h[0, 1] * h[1, 0]
    if det > 0.0:
        x = wp.vec2(h[1, 1] * b[0] - h[0, 1] * b[1], h[0, 0] * b[1] - h[1, 0] * b[0]) / det
        if x[0] >= 0.0 and x[1] >= 0.0:
            return x
    for k in range(2):
        x = wp.vec2(0.0)
        if h[k, k] > 0.0:
            x[k] = wp.max(b[k] / h[k, k], 0.0)
        c = 0.5 * wp.dot(x, h * x) - wp.dot(b, x)
        if c < cost:
            best = x
            cost = c
    return best


@wp.func
def solve_angular_edges(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, c: int, n_gen: int
) -> None:
    """PGS's and TGS's visit of slot c's torsional and rolling edges (_setup_angular; none: nothing), after its
    sliding edges: the two edges g_n +- f_k ang_g_k of each angular axis solved exactly together (they share the
    normal, so that one by one they would trade it back and forth), with the contact's one R (soft_cfm), on the
    current velocities v; their normal parts join the normal row's impulse (the reported force)."""
    edges = ct.ang_edges[env, c]
    cfm = ct.soft_cfm[env, c]
    if edges == 0 or cfm < 0.0:
        return
    i = 3 * c
    a_nn = ct.response[env, i]
    targets = ct.ang_target[env, c]
    imp = ct.ang_impulse[env, c]
    normal = float(0.0)
    for k in range(edges // 2):
        row = angular_edge(cp, env, c, 2 * k)
        r = int(row[0])
        f = row[1]
        cross = f * rows_dot(ct.g, i, ct.ang_minv_g, r, env, n_gen)
        roll = f * f * rows_dot(ct.ang_g, r, ct.ang_minv_g, r, env, n_gen)
        vn = row_dot(ct.g, v, env, i, n_gen)
        va = f * row_dot(ct.ang_g, v, env, r, n_gen)
        a = wp.mat22(a_nn + 2.0 * cross + roll, a_nn - roll, a_nn - roll, a_nn - 2.0 * cross + roll)
        old = wp.vec2(imp[2 * k], imp[2 * k + 1])
        b = wp.vec2(targets[2 * k] - vn - va, targets[2 * k + 1] - vn + va) + a * old
        new = _pair_qp(a + wp.mat22(cfm, 0.0, 0.0, cfm), b)
        d = new - old
        if d[0] != 0.0 or d[1] != 0.0:
            add_row(v, ct.minv_g, env, i, n_gen, d[0] + d[1])
            add_row(v, ct.ang_minv_g, env, r, n_gen, f * (d[0] - d[1]))
            imp[2 * k] = new[0]
            imp[2 * k + 1] = new[1]
            normal += d[0] + d[1]
    ct.ang_impulse[env, c] = imp
    ct.impulse[env, i] = ct.impulse[env, i] + normal


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
def solve_pyramid_patch(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, c0: int, c1: int, n_gen: int
) -> None:
    """The edges of a pyramidal patch (module docstring): v_e + R lambda_e = target_e, lambda_e >= 0, on the
    patch's Delassus matrix (an edge's entries are its rows' combinations). Each contact's four edges are solved
    exactly together (_edge_qp: Gauss-Seidel on the edges alone converges slowly, as they share the normal; a
    contact whose R is too small for that, EDGE_QP_CFM, takes Gauss-Seidel steps), the contacts of the patch by
    block Gauss-Seidel sweeps; the rows' impulses are kept as the edges' sums; then one velocity update. The soft
    targets hold for the whole step, so every iteration of every solver solves the same rows."""
    m = 3 * (c1 - c0)
    a = load_delassus(ct, env, c0, m)
    vel = load_velocities(ct, v, env, c0, m, n_gen)  # the rows' velocities at the current impulses
    lam0 = load_impulses(ct, env, c0, m)
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
    apply_patch(ct, v, env, c0, m, n_gen, lam, lam0)
    for c in range(c0, c1):
        solve_angular_edges(cp, ct, v, env, c, n_gen)


@wp.func
def pyramid_impulses(cp: ContactPoints, ct: ContactRows, env: int, c: int) -> None:
    """Slot c's normal and friction impulses from its edges' (the direct solver's write-back)."""
    edges = ct.edge_impulse[env, c]
    f = cp.material[env, c][0]
    normal = edges[0] + edges[1] + edges[2] + edges[3]
    for e in range(ct.ang_edges[env, c]):  # the torsional and rolling edges push along n too
        normal += ct.ang_impulse[env, c][e]
    ct.impulse[env, 3 * c] = normal
    ct.impulse[env, 3 * c + 1] = f * (edges[0] - edges[1])
    ct.impulse[env, 3 * c + 2] = f * (edges[2] - edges[3])
