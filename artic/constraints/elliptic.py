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
MuJoCo's convex relaxation of Coulomb's law, not the law itself). Torsional and rolling friction (condim 4 and 6)
are not mapped under this cone: such a contact is condim 3 (the importer says so).
"""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import MAT_PYRAMID, MAT_SOLREF, MAT_WEIGHT, ContactMaterial, Geometry
from ..core.data import Kin
from ..core.model import Tree
from ..math.dense import add_row, row_dot
from .contact_arrays import SWEEP_TOLERANCE, ContactRows, mat_patch, point_velocity, set_row, vec_patch
from .pyramid import frame_hint, mujoco_tangent
from .softness import soft_params, soft_row, soft_row_at

ELLIPTIC = wp.constant(2)  # ContactRows.pyramid of an elliptic contact (1: pyramidal)
ELLIPSE_SWEEPS = wp.constant(64)  # at most, per patch visit (a box sliding and spinning took 64 to match MuJoCo)
CONE_ROUNDS = wp.constant(40)  # at most, per visit of a contact: ray and disc steps
DISC_NEWTON = wp.constant(30)  # at most, Newton steps on the disc's multiplier
CONE_TOLERANCE = wp.constant(1.0e-12)  # relative: a round that moves no impulse by more ends the alternation


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
) -> None:
    """Slot c's friction rows along MuJoCo's frame at the point; for an overlapping contact its normal row's soft
    target and R (soft_target, soft_cfm) and its friction rows' (edge_target: t1's and t2's targets, their R)."""
    cmat = cp.material[env, c]
    la = cp.link_a[env, c]
    lb = cp.link_b[env, c]
    pc = cp.point[env, c] - o
    n = cp.normal[env, c]
    t1 = mujoco_tangent(n, frame_hint(geo, link_pose, cp, env, c))
    t2 = wp.cross(n, t1)
    ct.tangent[env, c] = t1
    ct.pyramid[env, c] = ELLIPTIC
    set_row(tree, kin, ct, minv, env, 3 * c + 1, n_gen, la, pc, lb, pc, t1)
    set_row(tree, kin, ct, minv, env, 3 * c + 2, n_gen, la, pc, lb, pc, t2)
    if cp.separation[env, c] >= 0.0:
        return  # apart: no rows (soft_cfm stays SOFT_APART)
    rel = point_velocity(link_v, env, la, pc) - point_velocity(link_v, env, lb, pc)
    sep = cp.separation[env, c]
    weight = cmat[MAT_WEIGHT]
    normal = soft_row(sp, sep, wp.dot(n, rel), weight, dt, dt)
    ct.soft_target[env, c] = normal[0]
    ct.soft_cfm[env, c] = normal[1]
    # the friction rows: no violation of their own, the contact's impedance
    r1 = soft_row_at(sp, 0.0, sep, wp.dot(t1, rel), weight, dt, dt)
    r2 = soft_row_at(sp, 0.0, sep, wp.dot(t2, rel), weight, dt, dt)
    ct.edge_target[env, c] = wp.vec4(r1[0], r2[0], normal[1] / (-cmat[MAT_PYRAMID]), 0.0)


@wp.func
def disc_qp(h: wp.mat22, p: wp.vec2, r: float) -> wp.vec2:
    """The x minimizing x^T h x / 2 - p^T x over |x| <= r (h symmetric positive definite): the unconstrained answer
    if it lies inside, else x(g) = (h + g I)^-1 p on the circle, the multiplier g >= 0 found by Newton's method on
    1 / |x(g)| - 1 / r (nearly linear in g: the trust-region subproblem's secular equation, from g = 0 where it is
    negative), then put exactly on the circle."""
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
        if nx <= r * (1.0 + 1.0e-7) and nx >= r * (1.0 - 1.0e-7):
            break
        slope = wp.dot(x, inv * x) / (nx * nx * nx)  # d/dg of 1 / |x(g)|
        if not (slope > 0.0):
            break
        g = wp.max(g - (1.0 / nx - 1.0 / r) / slope, 0.0)
    if nx > 0.0:
        x = x * (r / nx)
    return x


@wp.func
def onto_cone(x: wp.vec3, f: float) -> wp.vec3:
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
def cone_qp(h: wp.mat33, q: wp.vec3, old: wp.vec3, f: float) -> wp.vec3:
    """The l minimizing l^T h l / 2 - q^T l over |(l_1, l_2)| <= f l_n (h = A + R of one contact, module docstring),
    from the impulse `old`: the unconstrained answer if it lies in the cone; zero if -q lies in the dual cone
    (-q_n >= f |q_t|: no impulse in the cone lowers the cost); else on the cone's surface, by MuJoCo's alternation
    of a ray step and a disc step, from `old` projected onto the cone or from the best point of the generator along
    q's friction part, whichever costs less, until a round moves no impulse by more than CONE_TOLERANCE of the
    largest."""
    x = wp.inverse(h) * q
    if x[0] >= 0.0 and wp.sqrt(x[1] * x[1] + x[2] * x[2]) <= f * x[0]:
        return x
    if -q[0] >= f * wp.sqrt(q[1] * q[1] + q[2] * q[2]):
        return wp.vec3(0.0)
    # the answer is on the surface (neither case above): start from the better of the old impulse (onto the cone)
    # and the best point on the generator along q's friction part, l = s (1, f q_t / |q_t|), which lowers the cost
    # (q . (1, f q_t / |q_t|) = q_n + f |q_t| > 0 there); the ray step cannot leave the apex by itself
    qt = wp.sqrt(q[1] * q[1] + q[2] * q[2])
    lam = wp.vec3(1.0, 0.0, 0.0)
    if qt > 0.0:
        lam = wp.vec3(1.0, f * q[1] / qt, f * q[2] / qt)
    lam = lam * wp.max(wp.dot(lam, q) / wp.dot(lam, h * lam), 0.0)
    start = onto_cone(old, f)
    if 0.5 * wp.dot(start, h * start) - wp.dot(start, q) < 0.5 * wp.dot(lam, h * lam) - wp.dot(lam, q):
        lam = start
    for _round in range(CONE_ROUNDS):
        before = lam
        den = wp.dot(lam, h * lam)
        if den > 0.0:  # the ray through l: the best multiple of it
            lam = lam * wp.max(wp.dot(lam, q) / den, 0.0)
        # the friction on its disc, the normal fixed
        p = wp.vec2(q[1] - h[1, 0] * lam[0], q[2] - h[2, 0] * lam[0])
        t = disc_qp(wp.mat22(h[1, 1], h[1, 2], h[2, 1], h[2, 2]), p, f * lam[0])
        lam = wp.vec3(lam[0], t[0], t[1])
        d = lam - before
        size = wp.max(wp.abs(lam[0]), wp.max(wp.abs(lam[1]), wp.abs(lam[2])))
        if wp.max(wp.abs(d[0]), wp.max(wp.abs(d[1]), wp.abs(d[2]))) <= CONE_TOLERANCE * size:
            break
    return lam


@wp.func
def cone_block(ct: ContactRows, env: int, c: int) -> wp.vec4:
    """Slot c's three soft targets (normal, t1, t2; the fourth entry 0)."""
    et = ct.edge_target[env, c]
    return wp.vec4(ct.soft_target[env, c], et[0], et[1], 0.0)


@wp.func
def solve_elliptic_patch(
    cp: ContactPoints, ct: ContactRows, v: wp.array2d(dtype=float), env: int, c0: int, c1: int, n_gen: int
) -> None:
    """A patch of elliptic contacts (module docstring): v + R l = target on each contact's three rows, l in its
    cone, on the patch's Delassus matrix; each contact solved exactly (cone_qp) in block Gauss-Seidel sweeps over the
    patch, then one velocity update. The soft targets hold for the whole step, so every iteration of every solver
    solves the same rows."""
    m = 3 * (c1 - c0)
    a = mat_patch()
    vel = vec_patch()  # the rows' velocities at the current impulses
    lam0 = vec_patch()
    for i in range(m):
        ri = 3 * c0 + i
        vel[i] = row_dot(ct.g, v, env, ri, n_gen)
        lam0[i] = ct.impulse[env, ri]
        for j in range(m):
            a[i, j] = ct.delassus[env, ri, j]
    lam = lam0
    for _sweep in range(ELLIPSE_SWEEPS):
        change = float(0.0)
        for c in range(c1 - c0):
            r_n = ct.soft_cfm[env, c0 + c]
            if r_n >= 0.0:  # else apart: no rows
                i = 3 * c
                targets = cone_block(ct, env, c0 + c)
                r_t = ct.edge_target[env, c0 + c][2]
                h = wp.mat33(0.0)
                old = wp.vec3(lam[i], lam[i + 1], lam[i + 2])
                q = wp.vec3(0.0)
                for r in range(3):
                    for s in range(3):
                        h[r, s] = a[i + r, i + s]
                    q[r] = targets[r] - vel[i + r]
                q = q + h * old
                h[0, 0] = h[0, 0] + r_n
                h[1, 1] = h[1, 1] + r_t
                h[2, 2] = h[2, 2] + r_t
                new = cone_qp(h, q, old, cp.material[env, c0 + c][0])
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
    for i in range(m):
        d = lam[i] - lam0[i]
        if d != 0.0:
            add_row(v, ct.minv_g, env, 3 * c0 + i, n_gen, d)
            ct.impulse[env, 3 * c0 + i] = lam[i]
