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
friction the same way). TGS tracks each contact's separation over the substeps (s += v_n rho).
"""

import warp as wp

from ..collision.geometry import Contacts
from ..data import Kin
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
def _row_velocity(ct: Contacts, v: wp.array2d(dtype=float), env: int, row: int, n_gen: int):
    s = float(0.0)
    for i in range(n_gen):
        s += ct.g[env, row, i] * v[env, i]
    return s


@wp.func
def _point_velocity(tree: Tree, kin: Kin, link_v: wp.array2d(dtype=wp.spatial_vector), env: int, link: int,
                    p: wp.vec3):
    if link < 0:
        return wp.vec3(0.0)
    v = link_v[env, link]
    return wp.spatial_bottom(v) + wp.cross(wp.spatial_top(v), p)


@wp.func
def setup_contacts(tree: Tree, kin: Kin, ct: Contacts, link_v: wp.array2d(dtype=wp.spatial_vector),
                   minv: wp.array3d(dtype=float), v: wp.array2d(dtype=float), env: int, off: int, n_gen: int,
                   dt: float, bounce_threshold: float):
    """Row directions, M^-1 g, responses and restitution targets of every contact of the env; zero impulses.
    link_v: link spatial velocities (about O) at the start of the step, for the slip direction."""
    o = kin.origin[env]
    for c in range(ct.count[env]):
        p = ct.point[env, c] - o
        n = ct.normal[env, c]
        la = ct.link_a[env, c]
        lb = ct.link_b[env, c]
        slip = _point_velocity(tree, kin, link_v, env, la, p) - _point_velocity(tree, kin, link_v, env, lb, p)
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
            add_jacobian_transpose(tree, kin, ct.g, env, row, off, la, w, 1.0)
            if lb >= 0:
                add_jacobian_transpose(tree, kin, ct.g, env, row, off, lb, w, -1.0)
            resp = float(0.0)
            for i in range(n_gen):
                s = float(0.0)
                for j in range(n_gen):
                    s += minv[env, i, j] * ct.g[env, row, j]
                ct.minv_g[env, row, i] = s
                resp += ct.g[env, row, i] * s
            ct.response[env, row] = resp
            ct.impulse[env, row] = 0.0
        vn = _row_velocity(ct, v, env, 3 * c, n_gen)
        e = ct.material[env, c][2]
        bounce = float(0.0)
        if e > 0.0 and -vn > bounce_threshold and -vn * dt > ct.separation[env, c]:
            bounce = -e * vn
        ct.bounce[env, c] = bounce


@wp.func
def _apply(ct: Contacts, v: wp.array2d(dtype=float), env: int, row: int, n_gen: int, delta: float):
    for i in range(n_gen):
        v[env, i] = v[env, i] + delta * ct.minv_g[env, row, i]


@wp.func
def solve_contact(ct: Contacts, v: wp.array2d(dtype=float), env: int, c: int, n_gen: int, h: float, erp: float,
                  position_iteration: int):
    """One Gauss-Seidel visit of contact c: the normal row, then the two friction rows."""
    row = 3 * c
    r = ct.response[env, row]
    if r <= 1.0e-12:
        return
    sep = ct.separation[env, c]
    target = -wp.max(sep, 0.0) / h
    if position_iteration != 0 and sep < 0.0:
        target = -erp * sep / h
    if ct.bounce[env, c] > 0.0:
        target = wp.max(target, ct.bounce[env, c])
    acc = ct.impulse[env, row]
    new = wp.max(acc + (target - _row_velocity(ct, v, env, row, n_gen)) / r, 0.0)
    if new != acc:
        _apply(ct, v, env, row, n_gen, new - acc)
        ct.impulse[env, row] = new
    mat = ct.material[env, c]
    if mat[0] <= 0.0 and mat[1] <= 0.0:
        return
    r1 = ct.response[env, row + 1]
    r2 = ct.response[env, row + 2]
    a1 = ct.impulse[env, row + 1]
    a2 = ct.impulse[env, row + 2]
    n1 = a1
    n2 = a2
    if r1 > 1.0e-12:
        n1 = a1 - _row_velocity(ct, v, env, row + 1, n_gen) / r1
    if r2 > 1.0e-12:
        n2 = a2 - _row_velocity(ct, v, env, row + 2, n_gen) / r2
    mag = wp.sqrt(n1 * n1 + n2 * n2)
    if mag > mat[0] * new:
        scale = float(0.0)
        if mag > 0.0:
            scale = mat[1] * new / mag
        n1 *= scale
        n2 *= scale
    if n1 != a1:
        _apply(ct, v, env, row + 1, n_gen, n1 - a1)
        ct.impulse[env, row + 1] = n1
    if n2 != a2:
        _apply(ct, v, env, row + 2, n_gen, n2 - a2)
        ct.impulse[env, row + 2] = n2


@wp.func
def advance_contacts(ct: Contacts, v: wp.array2d(dtype=float), env: int, n_gen: int, h: float):
    """TGS: each contact's separation after a substep of length h."""
    for c in range(ct.count[env]):
        ct.separation[env, c] = ct.separation[env, c] + _row_velocity(ct, v, env, 3 * c, n_gen) * h


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
