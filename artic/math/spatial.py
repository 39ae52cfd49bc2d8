"""Spatial algebra as Warp functions (Featherstone, "Rigid Body Dynamics Algorithms", ch. 2).

artic's internal spatial vectors use world axes about a per-env reference point O: a motion vector is
(angular, linear velocity of the body point at O), a force vector is (torque about O, force). With every quantity in
one frame, the tree algorithms need no coordinate transforms between links.
"""

from __future__ import annotations

import warp as wp


@wp.func
def mcross(v: wp.spatial_vector, m: wp.spatial_vector) -> wp.spatial_vector:
    """Motion cross product v x m."""
    w = wp.spatial_top(v)
    vo = wp.spatial_bottom(v)
    mw = wp.spatial_top(m)
    mv = wp.spatial_bottom(m)
    return wp.spatial_vector(wp.cross(w, mw), wp.cross(w, mv) + wp.cross(vo, mw))


@wp.func
def fcross(v: wp.spatial_vector, f: wp.spatial_vector) -> wp.spatial_vector:
    """Force cross product v x* f."""
    w = wp.spatial_top(v)
    vo = wp.spatial_bottom(v)
    t = wp.spatial_top(f)
    ff = wp.spatial_bottom(f)
    return wp.spatial_vector(wp.cross(w, t) + wp.cross(vo, ff), wp.cross(w, ff))


@wp.func
def inertia_mul(mass: float, h: wp.vec3, j: wp.mat33, v: wp.spatial_vector) -> wp.spatial_vector:
    """I v for a rigid-body spatial inertia in compact form: mass, first moment h = m c and 3x3 inertia j about
    O. Featherstone eq. 2.63 without forming the 6x6 matrix: (j w + h x v_O, m v_O - h x w)."""
    w = wp.spatial_top(v)
    lin = wp.spatial_bottom(v)
    return wp.spatial_vector(j * w + wp.cross(h, lin), mass * lin - wp.cross(h, w))


@wp.func
def armature_about_o(a: float, p: wp.vec3) -> wp.mat33:
    """The rotational inertia about O of MuJoCo's free-joint armature a (Articulation.root_armature) as a body: mass
    a at the root frame's origin p (from O), rotational inertia a 1 about it; its first moment is a p. Such a body's
    equations, F = a (the origin's acceleration) and tau = a (angular acceleration) (no gyroscopic term: isotropic),
    are MuJoCo's a qacc in its free joint's coordinates (the origin's velocity in world axes, the spin in the body's
    axes: a rotation leaves a 1 unchanged)."""
    return a * ((1.0 + wp.dot(p, p)) * wp.identity(n=3, dtype=float) - wp.outer(p, p))


@wp.func
def inertia_matrix(mass: float, h: wp.vec3, j: wp.mat33) -> wp.spatial_matrix:
    """The 6x6 spatial inertia [[j, [h]x], [[h]x^T, m 1]] of a compact rigid-body inertia (for ABA's I^A)."""
    b = wp.skew(h)
    return wp.spatial_matrix(
        j[0, 0],
        j[0, 1],
        j[0, 2],
        b[0, 0],
        b[0, 1],
        b[0, 2],
        j[1, 0],
        j[1, 1],
        j[1, 2],
        b[1, 0],
        b[1, 1],
        b[1, 2],
        j[2, 0],
        j[2, 1],
        j[2, 2],
        b[2, 0],
        b[2, 1],
        b[2, 2],
        b[0, 0],
        b[1, 0],
        b[2, 0],
        mass,
        0.0,
        0.0,
        b[0, 1],
        b[1, 1],
        b[2, 1],
        0.0,
        mass,
        0.0,
        b[0, 2],
        b[1, 2],
        b[2, 2],
        0.0,
        0.0,
        mass,
    )


@wp.func
def unit(k: int) -> wp.vec3:
    v = wp.vec3(0.0)
    v[k] = 1.0
    return v


@wp.func
def root_motion(c: wp.vec3, lin: wp.vec3, ang: wp.vec3) -> wp.spatial_vector:
    """Spatial motion about O of a floating root with COM velocity `lin` and angular velocity `ang` (c = COM - O)."""
    return wp.spatial_vector(ang, lin + wp.cross(c, ang))


@wp.func
def root_column(c: wp.vec3, k: int) -> wp.spatial_vector:
    """Column k of the floating root's motion subspace: k < 3 COM linear velocity, k >= 3 angular velocity."""
    if k < 3:
        return wp.spatial_vector(wp.vec3(0.0), unit(k))
    e = unit(k - 3)
    return wp.spatial_vector(e, wp.cross(c, e))


@wp.func
def com_force_to_o(c: wp.vec3, f: wp.spatial_vector) -> wp.spatial_vector:
    """A public (force, torque at the COM c) pair as an internal force about O."""
    force = wp.spatial_top(f)
    return wp.spatial_vector(wp.spatial_bottom(f) + wp.cross(c, force), force)


@wp.func
def cholesky_solve6(a: wp.spatial_matrix, b: wp.spatial_vector) -> wp.spatial_vector:
    """Solve a x = b for symmetric positive-definite 6x6 a (floating-root articulated inertia)."""
    low = wp.spatial_matrix()
    for j in range(6):
        s = a[j, j]
        for k in range(j):
            s -= low[j, k] * low[j, k]
        d = wp.sqrt(s)  # a singular root inertia yields inf/NaN, which the host reports
        low[j, j] = d
        for i in range(j + 1, 6):
            t = a[i, j]
            for k in range(j):
                t -= low[i, k] * low[j, k]
            low[i, j] = t / d
    y = wp.spatial_vector()
    for i in range(6):
        t = b[i]
        for k in range(i):
            t -= low[i, k] * y[k]
        y[i] = t / low[i, i]
    x = wp.spatial_vector()
    for ii in range(6):
        i = 5 - ii
        t = y[i]
        for k in range(i + 1, 6):
            t -= low[k, i] * x[k]
        x[i] = t / low[i, i]
    return x
