"""MuJoCo's elliptic friction cone (`<option cone="elliptic">`: a soft contact whose material carries MAT_PYRAMID < 0,
minus the impratio; collision/geometry.py).

A contact's three rows are MuJoCo's: the normal n and its contact frame's t1, t2 at the point (pyramid.mujoco_tangent),
each soft (constraints/softness.py) with MuJoCo's regularizers (mj_makeImpedance): R_n = (1 - d) / d w, w the bodies'
translational inverse weights at qpos0 (MuJoCo's diagApprox, the same for all three rows), and R_t = R_n / impratio on
both friction rows, whose targets damp their velocity only, v - h b v (MuJoCo gives friction rows no position term;
b from solref). The impulse l = (l_n, l_1, l_2) lies in the Coulomb cone |(l_1, l_2)| <= f l_n (f: the friction), and
with A the rows' Delassus block the contact's impulse solves

    min 1/2 l^T (A + R) l - q^T l   over the cone,

the problem MuJoCo's dual solvers solve (its Newton solves the primal whose dual this is): a convex program with one
answer, R being positive. Per contact, cone_qp solves the 3 x 3 problem: the unconstrained answer where it lies in the
cone, no impulse where the cone's dual says so, otherwise MuJoCo's own alternation (its PGS's) until it stops moving:
a step along the ray through the current impulse, then the friction with the normal fixed, a quadratic program on the
disc |l_t| <= f l_n (disc_qp). Each is an exact minimization along a direction or over the disc, so the cost descends.
PGS and TGS visit a patch's contacts by block Gauss-Seidel (solve_elliptic_patch); the direct solver pivots the rows
with box friction |l_k| <= f l_n first (the square around the disc) and then brings its contacts onto the cone by the
same block updates on its own A (solvers/cone_polish.py).

A sliding contact's answer is on the cone's surface, where its normal row keeps a residual f |w_t| (the cone is
MuJoCo's convex relaxation of Coulomb's law, not the law itself).

Torsional and rolling friction (MuJoCo's condim 4 and 6) are more friction rows of the same cone: the bodies'
relative spin about n (f_tor), then their rolling about t1 and t2 (f_roll), with R_k = R_t f^2 / f_k^2
(mj_makeImpedance) and the cone |(l_1 / f, l_2 / f, l_3 / f_tor, ...)| <= l_n. cone_qp takes up to five friction
components (dim 6). The direct solver solves them with its rows; PGS and TGS solve such a contact's rows together,
sliding and angular, after its patch (solve_elliptic_angular).
"""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import (
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
from ..math.dense import add_row, row_dot, rows_dot
from .contact_arrays import (
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
from .pyramid import angular_axis, angular_rows, frame_hint, mujoco_tangent, relative_spin
from .softness import soft_params, soft_row, soft_row_at

ELLIPTIC = wp.constant(2)  # ContactRows.pyramid of an elliptic contact (1: pyramidal)
ELLIPSE_SWEEPS = wp.constant(64)  # at most, per patch visit (a box sliding and spinning took 64 to match MuJoCo)
CONE_ROUNDS = wp.constant(100)  # at most, per visit of a contact: ray and disc steps (an anisotropic cone, condim 6
# with rolling friction 40 times below the sliding one, took 100 from a cold start)
DISC_NEWTON = wp.constant(30)  # at most, Newton steps on the disc's multiplier
CONE_TOLERANCE = wp.constant(1.0e-6)  # relative: a round that moves no impulse by more ends the alternation (a
# few float32 roundings: 1e-12 never ended it early, and 100 rounds a visit made the stacker's polish 0.9 ms)
mat66 = wp.types.matrix(shape=(6, 6), dtype=float)


@wp.func
def is_elliptic(mat: ContactMaterial) -> int:
    """1 for a soft contact with friction under MuJoCo's elliptic cone (module docstring)."""
    if mat[MAT_PYRAMID] < 0.0 and mat[0] > 0.0 and (mat[MAT_SOLREF] != 0.0 or mat[MAT_SOLREF + 1] != 0.0):
        return 1
    return 0


@wp.func
def setup_elliptic(
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
    """Slot c's friction rows along MuJoCo's frame at the point and its angular ones (pyramid.angular_rows: their
    count in ang_edges); for an overlapping contact its normal row's soft target and R (soft_target, soft_cfm), its
    friction rows' (edge_target: t1's and t2's targets, their R) and its angular rows' (ang_target: the targets,
    then their R). `responses`: contact_arrays.set_row's."""
    cmat = cp.material[env, c]
    la = cp.link_a[env, c]
    lb = cp.link_b[env, c]
    pc = cp.point[env, c] - o
    n = cp.normal[env, c]
    t1 = mujoco_tangent(n, frame_hint(geo, link_pose, cp, env, c))
    t2 = wp.cross(n, t1)
    ct.tangent[env, c] = t1
    ct.pyramid[env, c] = ELLIPTIC
    set_row(tree, kin, ct, minv, env, 3 * c + 1, n_gen, la, pc, lb, pc, t1, responses)
    set_row(tree, kin, ct, minv, env, 3 * c + 2, n_gen, la, pc, lb, pc, t2, responses)
    count = angular_rows(tree, kin, cp, ct, minv, env, c, n_gen, la, lb, n, t1, t2, responses)
    ct.ang_edges[env, c] = count
    if cp.separation[env, c] >= 0.0:
        return  # apart: no rows (soft_cfm stays SOFT_APART)
    rel = point_velocity(link_v, env, la, pc) - point_velocity(link_v, env, lb, pc)
    sep = cp.separation[env, c]
    weight = cmat[MAT_WEIGHT]
    normal = soft_row(sp, sep, wp.dot(n, rel), weight, dt, dt)
    ct.soft_target[env, c] = normal[0]
    ct.soft_cfm[env, c] = normal[1]
    # the friction rows: no violation of their own, the contact's impedance
    r_t = normal[1] / (-cmat[MAT_PYRAMID])
    r1 = soft_row_at(sp, 0.0, sep, wp.dot(t1, rel), weight, dt, dt)
    r2 = soft_row_at(sp, 0.0, sep, wp.dot(t2, rel), weight, dt, dt)
    ct.edge_target[env, c] = wp.vec4(r1[0], r2[0], r_t, 0.0)
    if count > 0:
        spin = relative_spin(link_v, env, la, lb)
        f = cmat[0]
        rows = vec6(0.0)
        for k in range(count):
            f_k = cmat[MAT_ROLLING]
            if k == 0:
                f_k = cmat[MAT_TORSION]
            rows[k] = soft_row_at(sp, 0.0, sep, wp.dot(angular_axis(k, n, t1, t2), spin), weight, dt, dt)[0]
            if f_k > 0.0:
                rows[3 + k] = r_t * f * f / (f_k * f_k)
        ct.ang_target[env, c] = rows
        ct.ang_impulse[env, c] = vec6(0.0)


@wp.func
def _solve_shifted(h: mat66, g: float, b: vec6, lo: int, hi: int) -> vec6:
    """(h + g I)^-1 b over the indices lo..hi-1 (the others 0), by Cholesky (h symmetric positive definite there)."""
    chol = mat66(0.0)
    for i in range(lo, hi):
        for j in range(lo, i + 1):
            s = h[i, j]
            for k in range(lo, j):
                s -= chol[i, k] * chol[j, k]
            if i == j:
                chol[i, i] = wp.sqrt(wp.max(s + g, 1.0e-30))
            else:
                chol[i, j] = s / chol[j, j]
    y = vec6(0.0)
    for i in range(lo, hi):
        s = b[i]
        for k in range(lo, i):
            s -= chol[i, k] * y[k]
        y[i] = s / chol[i, i]
    x = vec6(0.0)
    for r in range(hi - lo):
        i = hi - 1 - r
        s = y[i]
        for k in range(i + 1, hi):
            s -= chol[k, i] * x[k]
        x[i] = s / chol[i, i]
    return x


@wp.func
def disc_qp(h: mat66, p: vec6, mu: vec6, r: float, dim: int) -> vec6:
    """The friction x (indices 1..dim-1) minimizing x^T h x / 2 - p^T x over |(x_k / mu_k)| <= r (h symmetric
    positive definite): in y = x / mu, a trust-region problem: the unconstrained answer if it lies inside, else
    y(g) = (h' + g I)^-1 p' on the sphere (h' = D h D, p' = D p, D = diag(mu)), the multiplier g >= 0 found by
    Newton's method on 1 / |y(g)| - 1 / r (nearly linear in g: the trust region's secular equation, from g = 0
    where it is negative), then put exactly on the sphere."""
    if r <= 0.0:
        return vec6(0.0)
    hs = mat66(0.0)
    ps = vec6(0.0)
    for i in range(1, dim):
        ps[i] = mu[i] * p[i]
        for j in range(1, dim):
            hs[i, j] = mu[i] * h[i, j] * mu[j]
    y = _solve_shifted(hs, 0.0, ps, 1, dim)
    ny = wp.length(y)
    if ny > r:
        g = float(0.0)
        for _k in range(DISC_NEWTON):
            if ny <= r * (1.0 + 1.0e-6) and ny >= r * (1.0 - 1.0e-6):
                break
            slope = wp.dot(y, _solve_shifted(hs, g, y, 1, dim)) / (ny * ny * ny)  # d/dg of 1 / |y(g)|
            if not (slope > 0.0):
                break
            g = wp.max(g - (1.0 / ny - 1.0 / r) / slope, 0.0)
            y = _solve_shifted(hs, g, ps, 1, dim)
            ny = wp.length(y)
        if ny > 0.0:
            y = y * (r / ny)
    for i in range(1, dim):
        y[i] = y[i] * mu[i]
    return y


@wp.func
def _friction_norm(x: vec6, mu: vec6, dim: int) -> float:
    """|(x_k / mu_k)| over the friction indices 1..dim-1."""
    s = float(0.0)
    for k in range(1, dim):
        s += (x[k] / mu[k]) * (x[k] / mu[k])
    return wp.sqrt(s)


@wp.func
def onto_cone(x: vec6, mu: vec6, dim: int) -> vec6:
    """x projected onto the cone in the metric that makes it the unit second-order cone (x_k / mu_k)."""
    n = x[0]
    s = _friction_norm(x, mu, dim)
    if s <= n:
        return x
    if s <= -n:
        return vec6(0.0)
    a = 0.5 * (n + s)
    out = x * (a / s)
    out[0] = a
    return out


@wp.func
def _cost(h: mat66, q: vec6, x: vec6) -> float:
    return 0.5 * wp.dot(x, h * x) - wp.dot(q, x)


@wp.func
def cone_qp(h: mat66, q: vec6, old: vec6, mu: vec6, dim: int) -> vec6:
    """The l minimizing l^T h l / 2 - q^T l over the cone |(l_k / mu_k)| <= l_0, k = 1..dim-1 (h = A + R of one
    contact, zero outside dim x dim; module docstring), from the impulse `old`: the unconstrained answer if it lies
    in the cone; zero if -q lies in the dual cone (-q_0 >= |(mu_k q_k)|: no impulse in the cone lowers the cost);
    else on the cone's surface, by MuJoCo's alternation of a ray step and a disc step, from `old` projected onto the
    cone or from the best point of the generator along q's friction part, whichever costs less, until a round moves
    no impulse by more than CONE_TOLERANCE of the largest."""
    if dim == 3 and mu[1] == mu[2]:
        h3 = wp.mat33(h[0, 0], h[0, 1], h[0, 2], h[1, 0], h[1, 1], h[1, 2], h[2, 0], h[2, 1], h[2, 2])
        l3 = cone_qp3(h3, wp.vec3(q[0], q[1], q[2]), wp.vec3(old[0], old[1], old[2]), mu[1])
        return vec6(l3[0], l3[1], l3[2], 0.0, 0.0, 0.0)
    x = _solve_shifted(h, 0.0, q, 0, dim)
    if x[0] >= 0.0 and _friction_norm(x, mu, dim) <= x[0]:
        return x
    mq = float(0.0)
    for k in range(1, dim):
        mq += (mu[k] * q[k]) * (mu[k] * q[k])
    mq = wp.sqrt(mq)
    if -q[0] >= mq:
        return vec6(0.0)
    # the answer is on the surface: the generator along q's friction part, l = s (1, mu^2 q_t / |mu q_t|), lowers the
    # cost (q . l / s = q_0 + |mu q_t| > 0); the ray step alone cannot leave the apex
    lam = vec6(0.0)
    lam[0] = 1.0
    if mq > 0.0:
        for k in range(1, dim):
            lam[k] = mu[k] * mu[k] * q[k] / mq
    lam = lam * wp.max(wp.dot(lam, q) / wp.dot(lam, h * lam), 0.0)
    start = onto_cone(old, mu, dim)
    if _cost(h, q, start) < _cost(h, q, lam):
        lam = start
    for _round in range(CONE_ROUNDS):
        before = lam
        den = wp.dot(lam, h * lam)
        if den > 0.0:  # the ray through l: the best multiple of it
            lam = lam * wp.max(wp.dot(lam, q) / den, 0.0)
        # the friction on its disc, the normal fixed
        p = vec6(0.0)
        for k in range(1, dim):
            p[k] = q[k] - h[k, 0] * lam[0]
        t = disc_qp(h, p, mu, lam[0], dim)
        t[0] = lam[0]
        lam = t
        size = float(0.0)
        moved = float(0.0)
        for k in range(dim):
            size = wp.max(size, wp.abs(lam[k]))
            moved = wp.max(moved, wp.abs(lam[k] - before[k]))
        if moved <= CONE_TOLERANCE * size:
            break
    return lam


@wp.func
def cone_qp_held(h: mat66, q: vec6, old: vec6, mu: vec6, dim: int) -> vec6:
    """cone_qp with a friction component of coefficient 0 held at 0 (a rolling friction without a torsional one,
    a direct-solver row of mu 0): its row and column of h decoupled, its q 0, its coefficient 1 for the metric."""
    hh = h
    qq = q
    mm = mu
    for r in range(1, dim):
        if mm[r] <= 0.0:
            for s in range(dim):
                hh[r, s] = 0.0
                hh[s, r] = 0.0
            hh[r, r] = 1.0
            qq[r] = 0.0
            mm[r] = 1.0
    return cone_qp(hh, qq, old, mm, dim)


@wp.func
def _disc_qp2(h: wp.mat22, p: wp.vec2, r: float) -> wp.vec2:
    """disc_qp on a disc (isotropic friction, 2 x 2 inverses in closed form)."""
    if r <= 0.0:
        return wp.vec2(0.0)
    x = wp.inverse(h) * p
    nx = wp.length(x)
    if nx <= r:
        return x
    g = float(0.0)
    for _k in range(DISC_NEWTON):
        inv = wp.inverse(h + wp.mat22(g, 0.0, 0.0, g))
        x = inv * p
        nx = wp.length(x)
        if nx <= r * (1.0 + 1.0e-6) and nx >= r * (1.0 - 1.0e-6):
            break
        slope = wp.dot(x, inv * x) / (nx * nx * nx)  # d/dg of 1 / |x(g)|
        if not (slope > 0.0):
            break
        g = wp.max(g - (1.0 / nx - 1.0 / r) / slope, 0.0)
    if nx > 0.0:
        x = x * (r / nx)
    return x


@wp.func
def _onto_cone3(x: wp.vec3, f: float) -> wp.vec3:
    """x projected onto the cone |t| <= f n in the metric that makes it the unit second-order cone (t / f)."""
    n = x[0]
    s = wp.sqrt(x[1] * x[1] + x[2] * x[2]) / f
    if s <= n:
        return x
    if s <= -n:
        return wp.vec3(0.0)
    a = 0.5 * (n + s)
    return wp.vec3(a, x[1] * a / s, x[2] * a / s)


@wp.func
def cone_qp3(h: wp.mat33, q: wp.vec3, old: wp.vec3, f: float) -> wp.vec3:
    """cone_qp for a contact of sliding friction f alone (condim 3): the same steps in 3 x 3 and 2 x 2 arithmetic,
    whose inverses are closed forms (the general code's Cholesky on 6 x 6 locals, element by element, made the
    stacker's polish 4 times slower)."""
    x = wp.inverse(h) * q
    if x[0] >= 0.0 and wp.sqrt(x[1] * x[1] + x[2] * x[2]) <= f * x[0]:
        return x
    if -q[0] >= f * wp.sqrt(q[1] * q[1] + q[2] * q[2]):
        return wp.vec3(0.0)
    qt = wp.sqrt(q[1] * q[1] + q[2] * q[2])
    lam = wp.vec3(1.0, 0.0, 0.0)
    if qt > 0.0:
        lam = wp.vec3(1.0, f * q[1] / qt, f * q[2] / qt)
    lam = lam * wp.max(wp.dot(lam, q) / wp.dot(lam, h * lam), 0.0)
    start = _onto_cone3(old, f)
    if 0.5 * wp.dot(start, h * start) - wp.dot(start, q) < 0.5 * wp.dot(lam, h * lam) - wp.dot(lam, q):
        lam = start
    for _round in range(CONE_ROUNDS):
        before = lam
        den = wp.dot(lam, h * lam)
        if den > 0.0:  # the ray through l: the best multiple of it
            lam = lam * wp.max(wp.dot(lam, q) / den, 0.0)
        # the friction on its disc, the normal fixed
        p = wp.vec2(q[1] - h[1, 0] * lam[0], q[2] - h[2, 0] * lam[0])
        t = _disc_qp2(wp.mat22(h[1, 1], h[1, 2], h[2, 1], h[2, 2]), p, f * lam[0])
        lam = wp.vec3(lam[0], t[0], t[1])
        d = lam - before
        size = wp.max(wp.abs(lam[0]), wp.max(wp.abs(lam[1]), wp.abs(lam[2])))
        if wp.max(wp.abs(d[0]), wp.max(wp.abs(d[1]), wp.abs(d[2]))) <= CONE_TOLERANCE * size:
            break
    return lam


@wp.func
def _block_dot(ct: ContactRows, env: int, c: int, j: int, k: int, n_gen: int) -> float:
    """Entry (j, k) of slot c's Delassus block over its rows n, t1, t2 (0-2) and angular rows (3-5): g_j . M^-1 g_k."""
    if j < 3:
        if k < 3:
            return rows_dot(ct.g, 3 * c + j, ct.minv_g, 3 * c + k, env, n_gen)
        return rows_dot(ct.g, 3 * c + j, ct.ang_minv_g, 3 * c + k - 3, env, n_gen)
    if k < 3:
        return rows_dot(ct.ang_g, 3 * c + j - 3, ct.minv_g, 3 * c + k, env, n_gen)
    return rows_dot(ct.ang_g, 3 * c + j - 3, ct.ang_minv_g, 3 * c + k - 3, env, n_gen)


@wp.func
def solve_elliptic_angular(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, c: int, n_gen: int
) -> None:
    """PGS's and TGS's visit of an elliptic contact with torsional or rolling rows (condim 4 or 6): all its rows,
    sliding and angular, solved exactly together in their one cone (cone_qp on the (3 + k)-row block, k = ang_edges),
    on the current velocities v; the rows share the cone, so none is solved without the others."""
    count = ct.ang_edges[env, c]
    r_n = ct.soft_cfm[env, c]
    if count == 0 or r_n < 0.0:
        return
    dim = 3 + count
    cmat = cp.material[env, c]
    et = ct.edge_target[env, c]
    at = ct.ang_target[env, c]
    ang = ct.ang_impulse[env, c]
    h = mat66(0.0)
    target = vec6(0.0)
    vel = vec6(0.0)
    old = vec6(0.0)
    reg = vec6(0.0)
    mu = vec6(0.0)
    for j in range(dim):
        for k in range(j, dim):
            h[j, k] = _block_dot(ct, env, c, j, k, n_gen)
            h[k, j] = h[j, k]
        if j < 3:
            vel[j] = row_dot(ct.g, v, env, 3 * c + j, n_gen)
            old[j] = ct.impulse[env, 3 * c + j]
        else:
            vel[j] = row_dot(ct.ang_g, v, env, 3 * c + j - 3, n_gen)
            old[j] = ang[j - 3]
            target[j] = at[j - 3]
            reg[j] = at[j]  # ang_target's R entries sit three after their targets
            mu[j] = cmat[MAT_ROLLING]
    target[0] = ct.soft_target[env, c]
    target[1] = et[0]
    target[2] = et[1]
    reg[0] = r_n
    reg[1] = et[2]
    reg[2] = et[2]
    mu[1] = cmat[0]
    mu[2] = cmat[0]
    mu[3] = cmat[MAT_TORSION]
    q = target - vel + h * old
    for j in range(dim):
        h[j, j] = h[j, j] + reg[j]
    new = cone_qp_held(h, q, old, mu, dim)
    for j in range(dim):
        d = new[j] - old[j]
        if d != 0.0:
            if j < 3:
                add_row(v, ct.minv_g, env, 3 * c + j, n_gen, d)
                ct.impulse[env, 3 * c + j] = new[j]
            else:
                add_row(v, ct.ang_minv_g, env, 3 * c + j - 3, n_gen, d)
                ang[j - 3] = new[j]
    ct.ang_impulse[env, c] = ang


@wp.func
def solve_elliptic_patch(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, c0: int, c1: int, n_gen: int
) -> None:
    """A patch of elliptic contacts (module docstring): v + R l = target on each contact's three sliding rows, l in
    its cone, on the patch's Delassus matrix; each contact solved exactly (cone_qp) in block Gauss-Seidel sweeps over
    the patch, then one velocity update. The soft targets hold for the whole step, so every iteration of every solver
    solves the same rows. A contact with angular rows is solved after them, whole (solve_elliptic_angular)."""
    m = 3 * (c1 - c0)
    a = load_delassus(ct, env, c0, m)
    vel = load_velocities(ct, v, env, c0, m, n_gen)  # the rows' velocities at the current impulses
    lam0 = load_impulses(ct, env, c0, m)
    lam = lam0
    for _sweep in range(ELLIPSE_SWEEPS):
        change = float(0.0)
        for c in range(c1 - c0):
            r_n = ct.soft_cfm[env, c0 + c]
            if r_n >= 0.0 and ct.ang_edges[env, c0 + c] == 0:  # else apart (no rows) or solved whole below
                i = 3 * c
                et = ct.edge_target[env, c0 + c]
                targets = wp.vec3(ct.soft_target[env, c0 + c], et[0], et[1])
                f = cp.material[env, c0 + c][0]
                h = wp.mat33(
                    a[i, i], a[i, i + 1], a[i, i + 2],
                    a[i + 1, i], a[i + 1, i + 1], a[i + 1, i + 2],
                    a[i + 2, i], a[i + 2, i + 1], a[i + 2, i + 2],
                )  # fmt: skip
                old = wp.vec3(lam[i], lam[i + 1], lam[i + 2])
                q = targets - wp.vec3(vel[i], vel[i + 1], vel[i + 2]) + h * old
                h = h + wp.diag(wp.vec3(r_n, et[2], et[2]))
                new = cone_qp3(h, q, old, f)
                for r in range(3):
                    d = new[r] - old[r]
                    if d != 0.0:
                        lam[i + r] = new[r]
                        j = int(0)
                        while j < m:
                            vel[j] += a[j, i + r] * d
                            j += 1
                        change = wp.max(change, wp.abs(d) * h[r, r])
        if change < SWEEP_TOLERANCE:
            break
    apply_patch(ct, v, env, c0, m, n_gen, lam, lam0)
    for c in range(c0, c1):
        solve_elliptic_angular(cp, ct, v, env, c, n_gen)
