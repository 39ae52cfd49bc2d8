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
solve). Friction (both rows, accumulated): the impulse that stops the tangential slip, clamped to the Coulomb disc:
if it exceeds mu_s times the normal impulse it slides with mu_d times it (PhysX switches from static to dynamic
friction the same way). The rows of a patch (the contacts of one shape pair) are solved together
(_solve_patch). TGS tracks each contact's separation over the substeps (s += v_n rho).
"""

import warp as wp

from ..collision.geometry import Contacts
from ..data import Kin
from ..math.dense import add_row, row_dot, solve_row
from ..model import Tree
from .coupling_rows import add_jacobian_transpose


@wp.func
def _tangent(n: wp.vec3, slip: wp.vec3):
    """First friction direction: along the tangential slip when there is one, else any unit vector normal to n."""
    t = slip - n * wp.dot(slip, n)
    if wp.length(t) > 1.0e-6:
        return wp.normalize(t)
    a = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(n[0]) > 0.8:
        a = wp.vec3(0.0, 1.0, 0.0)
    return wp.normalize(wp.cross(n, a))


@wp.func
def _point_velocity(link_v: wp.array2d(dtype=wp.spatial_vector), env: int, link: int, p: wp.vec3):
    if link < 0:
        return wp.vec3(0.0)
    v = link_v[env, link]
    return wp.spatial_bottom(v) + wp.cross(wp.spatial_top(v), p)


@wp.func
def setup_contacts(tree: Tree, kin: Kin, ct: Contacts, link_v: wp.array2d(dtype=wp.spatial_vector),
                   minv: wp.array3d(dtype=float), v: wp.array2d(dtype=float), env: int, n_gen: int,
                   dt: float, bounce_threshold: float):
    """Row directions, M^-1 g, responses and restitution targets of every contact of the env; zero impulses.
    link_v: link spatial velocities (about O) at the start of the step, for the slip direction."""
    o = kin.origin[env]
    for c in range(ct.count[env]):
        p = ct.point[env, c] - o
        n = ct.normal[env, c]
        la = ct.link_a[env, c]
        lb = ct.link_b[env, c]
        slip = _point_velocity(link_v, env, la, p) - _point_velocity(link_v, env, lb, p)
        t1 = _tangent(n, slip)
        ct.tangent[env, c] = t1
        t2 = wp.cross(n, t1)
        for k in range(3):
            row = 3 * c + k
            u = n
            if k == 1:
                u = t1
            elif k == 2:
                u = t2
            for i in range(n_gen):
                ct.g[env, row, i] = 0.0
            w = wp.spatial_vector(wp.cross(p, u), u)
            add_jacobian_transpose(tree, kin, ct.g, env, row, la, w, 1.0)
            if lb >= 0:
                add_jacobian_transpose(tree, kin, ct.g, env, row, lb, w, -1.0)
            ct.response[env, row] = solve_row(minv, ct.g, ct.minv_g, env, row, n_gen)
            ct.impulse[env, row] = 0.0
        vn = row_dot(ct.g, v, env, 3 * c, n_gen)
        e = ct.material[env, c][2]
        bounce = float(0.0)
        if e > 0.0 and -vn > bounce_threshold and -vn * dt > ct.separation[env, c]:
            bounce = -e * vn
        ct.bounce[env, c] = bounce


PATCH_ROWS = 12  # 4 contacts x (normal, 2 friction)
PATCH_SWEEPS = wp.constant(8)
_vec_patch = wp.types.vector(length=PATCH_ROWS, dtype=float)
_mat_patch = wp.types.matrix(shape=(PATCH_ROWS, PATCH_ROWS), dtype=float)


@wp.func
def _normal_target(ct: Contacts, env: int, c: int, h: float, erp: float, position_iteration: int):
    sep = ct.separation[env, c]
    target = -wp.max(sep, 0.0) / h
    if position_iteration != 0 and sep < 0.0:
        target = -erp * sep / h
    if ct.bounce[env, c] > 0.0:
        target = wp.max(target, ct.bounce[env, c])
    return target


@wp.func
def _solve_patch(ct: Contacts, v: wp.array2d(dtype=float), env: int, c0: int, c1: int, n_gen: int, h: float,
                 erp: float, position_iteration: int):
    """The rows of one patch (<= 4 contacts of a shape pair) solved together: projected Gauss-Seidel sweeps on the
    patch's Delassus matrix A = G M^-1 G^T (normals, then friction with the Coulomb disc), then one velocity update.
    Converging the patch inside the visit removes the bias a fixed row order leaves in a few outer iterations."""
    m = 3 * (c1 - c0)
    a = _mat_patch()
    vrel = _vec_patch()
    lam0 = _vec_patch()
    for i in range(m):
        ri = 3 * c0 + i
        vrel[i] = row_dot(ct.g, v, env, ri, n_gen)
        lam0[i] = ct.impulse[env, ri]
        for j in range(m):
            rj = 3 * c0 + j
            s = float(0.0)
            for k in range(n_gen):
                s += ct.g[env, ri, k] * ct.minv_g[env, rj, k]
            a[i, j] = s
    lam = lam0
    for _sweep in range(PATCH_SWEEPS):
        for c in range(c1 - c0):
            i = 3 * c
            if a[i, i] > 1.0e-12:
                vi = vrel[i]
                for j in range(m):
                    vi += a[i, j] * (lam[j] - lam0[j])
                target = _normal_target(ct, env, c0 + c, h, erp, position_iteration)
                lam[i] = wp.max(lam[i] + (target - vi) / a[i, i], 0.0)
        for c in range(c1 - c0):
            mat = ct.material[env, c0 + c]
            i = 3 * c
            if mat[0] > 0.0 or mat[1] > 0.0:
                n1 = lam[i + 1]
                n2 = lam[i + 2]
                v1 = vrel[i + 1]
                v2 = vrel[i + 2]
                for j in range(m):
                    v1 += a[i + 1, j] * (lam[j] - lam0[j])
                    v2 += a[i + 2, j] * (lam[j] - lam0[j])
                if a[i + 1, i + 1] > 1.0e-12:
                    n1 -= v1 / a[i + 1, i + 1]
                if a[i + 2, i + 2] > 1.0e-12:
                    n2 -= v2 / a[i + 2, i + 2]
                mag = wp.sqrt(n1 * n1 + n2 * n2)
                if mag > mat[0] * lam[i]:
                    scale = float(0.0)
                    if mag > 0.0:
                        scale = mat[1] * lam[i] / mag
                    n1 *= scale
                    n2 *= scale
                lam[i + 1] = n1
                lam[i + 2] = n2
    for i in range(m):
        d = lam[i] - lam0[i]
        if d != 0.0:
            add_row(v, ct.minv_g, env, 3 * c0 + i, n_gen, d)
            ct.impulse[env, 3 * c0 + i] = lam[i]


@wp.func
def solve_contacts(ct: Contacts, v: wp.array2d(dtype=float), env: int, c0: int, c1: int, n_gen: int, h: float,
                   erp: float, position_iteration: int):
    """One Gauss-Seidel visit of contacts [c0, c1), patch by patch (consecutive contacts of one shape pair)."""
    c = c0
    while c < c1:
        e = c + 1
        while e < c1 and e - c < 4 and ct.shape_a[env, e] == ct.shape_a[env, c] \
                and ct.shape_b[env, e] == ct.shape_b[env, c]:
            e += 1
        _solve_patch(ct, v, env, c, e, n_gen, h, erp, position_iteration)
        c = e


@wp.func
def advance_contacts(ct: Contacts, v: wp.array2d(dtype=float), env: int, n_gen: int, h: float):
    """TGS: each contact's separation after a substep of length h."""
    for c in range(ct.count[env]):
        ct.separation[env, c] = ct.separation[env, c] + row_dot(ct.g, v, env, 3 * c, n_gen) * h


@wp.func
def report_contact_forces(ct: Contacts, env: int, dt: float):
    """Force on link a at each contact point over the step: the accumulated impulses / dt, world."""
    for c in range(ct.count[env]):
        n = ct.normal[env, c]
        t1 = ct.tangent[env, c]
        row = 3 * c
        f = (n * ct.impulse[env, row] + t1 * ct.impulse[env, row + 1]
             + wp.cross(n, t1) * ct.impulse[env, row + 2])
        ct.force[env, c] = f / dt
