"""Wrapping a spatial tendon's straight segment around a sphere or a cylinder, as MuJoCo's tendon model defines it
(its XML reference, "tendon/spatial"; the geometry below is the same, written for rows of envs at once).

Between two path points x0 and x1 a wrapping geom may bend the tendon. The problem is solved in a plane through the
geom's centre:

* a sphere: the plane of x0, x1 and the centre (the tendon follows a great circle);
* a cylinder: the plane normal to its axis (the tendon follows a helix: its height grows in proportion to the
  path length, tangent segments and arc alike).

In the plane, with the circle of the geom's radius r at the origin, a wrapped path leaves each end point along one
of its two tangents to the circle, follows the arc between the tangent points, and goes on to the other end point.
No wrap when an end point lies inside the circle. Which way round:

* without a side site: only where the straight segment crosses the circle, the shorter way (a choice whose tangent
  segments cross is not taken);
* with a side site (MuJoCo 4.0's rule, its changelog and XML reference, "sidesite"): the shortest path homotopic to
  the polyline x0 -> side site (projected onto the circle) -> x1 in the plane with the disk removed, that is, with
  the same winding angle round the centre; straight where the straight segment already winds that way (it may then
  wrap although the straight segment misses the circle). MuJoCo 3 decided by a half-plane test; the two disagree on
  myo_sim's legs, and tests/io/mjcf/test_spatial_tendons.py checks this rule against MuJoCo 4.0.

A side site inside the geom (nearer its centre than r, in 3D) asks for MuJoCo's "inside" wrap: the path touches
the circle at one point, the one where the two straight segments make equal angles with the radius (found by
Newton's method on asin(A z) + asin(B z) - 2 asin(z) + G = 0, A = r / |x0|, B = r / |x1|, G the angle x0 O x1; z =
sin of the angle of incidence); MuJoCo uses it to keep a tendon on a bone's surface.

`wrap(x0, x1, center, rot, radius, cylinder, side, has_side)` returns, for rows of envs and wraps, the two tangent
points in the world, the wrapped arc's length and a mask of the rows that wrap; the other rows' points are x0, x1.
"""

from __future__ import annotations

import numpy as np

from ...math.np_spatial import cross3

_TINY = 1e-15  # MuJoCo's mjMINVAL: below it a length or a determinant counts as zero


def wrap(
    x0: np.ndarray,
    x1: np.ndarray,
    center: np.ndarray,
    rot: np.ndarray,
    radius: np.ndarray,
    cylinder: np.ndarray,
    side: np.ndarray,
    has_side: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t0, t1, arc, wrapped) for R rows (envs times wraps): x0, x1 (R, 3) the end points, center (R, 3) and rot
    (R, 3, 3) the geom's frame (a cylinder's axis its z), radius (R,) [m], cylinder (R,) bool, side (R, 3) the side
    site where has_side (R,) bool. t0, t1 (R, 3): the tangent points (x0, x1 where not wrapped); arc (R,): the wrapped
    length between them (0 where not wrapped) [m]."""
    radius = np.asarray(radius, float)
    cylinder = np.asarray(cylinder, bool)
    p0 = np.einsum("eji,ej->ei", rot, x0 - center)  # the end points in the geom's frame
    p1 = np.einsum("eji,ej->ei", rot, x1 - center)
    s0, s1 = _sphere_plane(p0, p1)
    ax0 = np.where(cylinder[:, None], [1.0, 0.0, 0.0], s0)
    ax1 = np.where(cylinder[:, None], [0.0, 1.0, 0.0], s1)
    d = np.stack([_dot(p0, ax0), _dot(p0, ax1), _dot(p1, ax0), _dot(p1, ax1)], axis=1)
    ok = (np.linalg.norm(p0, axis=1) >= _TINY) & (np.linalg.norm(p1, axis=1) >= _TINY)
    s = np.einsum("eji,ej->ei", rot, side - center)
    inside = has_side & (np.linalg.norm(s, axis=1) < radius)  # the side site inside the geom: the inside wrap
    sd = np.stack([_dot(s, ax0), _dot(s, ax1)], axis=1)
    n = np.linalg.norm(sd, axis=1)
    along_x = np.stack([radius, 0.0 * radius], 1)  # a side site on the axis: any direction (MuJoCo's x)
    sd = np.where((n < _TINY)[:, None], along_x, sd * (radius / np.maximum(n, _TINY))[:, None])
    pnt, length = _circle(d, radius)
    if has_side.any():
        pnt_h, len_h = _homotopic(d, sd, radius)
        pnt = np.where(has_side[:, None], pnt_h, pnt)
        length = np.where(has_side, len_h, length)
    if inside.any():
        pnt_i, len_i = _inside(d, radius)
        pnt = np.where(inside[:, None], pnt_i, pnt)
        length = np.where(inside, len_i, length)
    wrapped = ok & (length >= 0.0)
    length = np.where(wrapped, length, 0.0)
    r0 = pnt[:, 0:1] * ax0 + pnt[:, 1:2] * ax1  # the tangent points in the geom's frame
    r1 = pnt[:, 2:3] * ax0 + pnt[:, 3:4] * ax1
    # a cylinder: heights in proportion to the path length along the helix, and the arc lengthened by its rise
    run0 = np.hypot(p0[:, 0] - r0[:, 0], p0[:, 1] - r0[:, 1])
    run1 = np.hypot(p1[:, 0] - r1[:, 0], p1[:, 1] - r1[:, 1])
    total = np.maximum(run0 + length + run1, _TINY)
    rise = p1[:, 2] - p0[:, 2]
    r0[:, 2] = np.where(cylinder, p0[:, 2] + rise * run0 / total, r0[:, 2])
    r1[:, 2] = np.where(cylinder, p0[:, 2] + rise * (run0 + length) / total, r1[:, 2])
    length = np.where(cylinder, np.hypot(length, r1[:, 2] - r0[:, 2]), length)
    t0 = center + np.einsum("eij,ej->ei", rot, r0)
    t1 = center + np.einsum("eij,ej->ei", rot, r1)
    t0 = np.where(wrapped[:, None], t0, x0)
    t1 = np.where(wrapped[:, None], t1, x1)
    return t0, t1, np.where(wrapped, length, 0.0), wrapped


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ei,ei->e", a, b)


def _unit(a: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    return a / np.maximum(n, _TINY)


def _sphere_plane(p0: np.ndarray, p1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sphere's wrapping plane: first axis along p0, second in the plane of p0 and p1. When the two are
    parallel, any plane through p0: MuJoCo's choice, the normal p0 x (1, 1, 1 with a 0 at p0's largest
    component)."""
    a0 = _unit(p0)
    normal = cross3(p0, p1)
    parallel = np.linalg.norm(normal, axis=1) < _TINY
    if parallel.any():
        big = np.argmax(np.abs(a0), axis=1)
        other = np.ones_like(a0)
        other[np.arange(len(a0)), big] = 0.0
        normal = np.where(parallel[:, None], cross3(a0, other), normal)
    normal = _unit(normal)
    return a0, _unit(cross3(normal, a0))


def _crosses(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Rows where the 2D segments a0-a1 and b0-b1 intersect."""
    ea, eb = a1 - a0, b1 - b0
    det = eb[:, 1] * ea[:, 0] - eb[:, 0] * ea[:, 1]
    safe = np.where(np.abs(det) < _TINY, 1.0, det)
    off = a0 - b0
    s = (eb[:, 0] * off[:, 1] - eb[:, 1] * off[:, 0]) / safe
    t = (ea[:, 0] * off[:, 1] - ea[:, 1] * off[:, 0]) / safe
    return (np.abs(det) >= _TINY) & (s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)


def _circle(d: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outside wrap in the plane without a side site: d (E, 4) the end points (x0, y0, x1, y1). The segment
    wraps only where it crosses the circle, the shorter way round. Returns the tangent points (E, 4) and the arc
    length, -1 where nothing wraps."""
    q0, q1 = d[:, :2], d[:, 2:]
    n0, n1 = _dot(q0, q0), _dot(q1, q1)
    seg = q1 - q0
    seg2 = _dot(seg, seg)
    none = (n0 < r * r) | (n1 < r * r) | (r < _TINY) | (seg2 < _TINY)
    a = np.clip(-_dot(seg, q0) / np.where(seg2 < _TINY, 1.0, seg2), 0.0, 1.0)
    near = q0 + a[:, None] * seg  # the segment's point nearest the centre
    none |= _dot(near, near) > r * r
    h0 = np.sqrt(np.maximum(n0 - r * r, 0.0))
    h1 = np.sqrt(np.maximum(n1 - r * r, 0.0))
    m0, m1 = np.where(n0 > 0, n0, 1.0), np.where(n1 > 0, n1, 1.0)
    sols, good = [], []
    for sgn in (1.0, -1.0):  # the two ways round
        s0 = np.stack([q0[:, 0] * r * r + sgn * r * q0[:, 1] * h0, q0[:, 1] * r * r - sgn * r * q0[:, 0] * h0], 1)
        s1 = np.stack([q1[:, 0] * r * r - sgn * r * q1[:, 1] * h1, q1[:, 1] * r * r + sgn * r * q1[:, 0] * h1], 1)
        s0, s1 = s0 / m0[:, None], s1 / m1[:, None]
        g = np.where(_crosses(q0, s0, q1, s1), -10000.0, -_dot(s0 - s1, s0 - s1))
        sols.append(np.concatenate([s0, s1], axis=1))
        good.append(g)
    first = good[0] > good[1]
    pnt = np.where(first[:, None], sols[0], sols[1])
    none |= _crosses(q0, pnt[:, :2], q1, pnt[:, 2:])
    # the arc between the tangent points, the short or the long way as the chosen side goes round
    u0, u1 = _unit(pnt[:, :2]), _unit(pnt[:, 2:])
    angle = np.arccos(np.clip(_dot(u0, u1), -1.0, 1.0))
    turn = pnt[:, 1] * pnt[:, 2] - pnt[:, 0] * pnt[:, 3]
    long_way = ((turn > 0) & ~first) | ((turn < 0) & first)
    angle = np.where(long_way, 2.0 * np.pi - angle, angle)
    return pnt, np.where(none, -1.0, r * angle)


def _angle(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Signed angle (-pi, pi] from 2D vectors u to v, rows."""
    return np.arctan2(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0], _dot(u, v))


def _homotopic(d: np.ndarray, sd: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outside wrap with a side site (MuJoCo 4's rule): the shortest path from x0 to x1 that winds round the
    centre as the polyline x0 -> side -> x1 does (sd (E, 2): the side site on the circle). With W that winding angle
    and b_i = acos(r / |x_i|) the angle each tangent segment sweeps, the path is straight where |W| < b0 + b1, and
    otherwise leaves x0 along its tangent turning the way W turns, follows |W| - b0 - b1 of arc, and reaches x1 along
    its tangent. Returns the tangent points (E, 4) and the arc length, -1 where nothing wraps."""
    q0, q1 = d[:, :2], d[:, 2:]
    l0, l1 = np.linalg.norm(q0, axis=1), np.linalg.norm(q1, axis=1)
    none = (l0 < r) | (l1 < r) | (r < _TINY)
    winding = _angle(q0, sd) + _angle(sd, q1)
    b0 = np.arccos(np.clip(r / np.maximum(l0, _TINY), -1.0, 1.0))
    b1 = np.arccos(np.clip(r / np.maximum(l1, _TINY), -1.0, 1.0))
    arc = np.abs(winding) - b0 - b1
    none |= arc < 0.0
    turn = np.where(winding >= 0.0, 1.0, -1.0)
    out = []
    for q, b in ((q0, turn * b0), (q1, -turn * b1)):
        u = _unit(q)
        c, s = np.cos(b), np.sin(b)
        out.append(r[:, None] * np.stack([c * u[:, 0] - s * u[:, 1], s * u[:, 0] + c * u[:, 1]], 1))
    return np.concatenate(out, axis=1), np.where(none, -1.0, r * np.maximum(arc, 0.0))


def _inside(d: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inside wrap (module docstring): one touching point (given twice), length 0, or -1 where nothing
    wraps."""
    q0, q1 = d[:, :2], d[:, 2:]
    l0, l1 = np.linalg.norm(q0, axis=1), np.linalg.norm(q1, axis=1)
    seg = q1 - q0
    seg2 = _dot(seg, seg)
    none = (l0 <= r) | (l1 <= r) | (r < _TINY) | (l0 < _TINY) | (l1 < _TINY)
    a = -_dot(seg, q0) / np.where(seg2 > _TINY, seg2, 1.0)
    through = (seg2 > _TINY) & (a > 0) & (a < 1)
    near = q0 + a[:, None] * seg
    none |= through & (np.linalg.norm(near, axis=1) <= r)  # the straight segment cuts the circle: no wrap
    fallback = r[:, None] * _unit(0.5 * (q0 + q1))  # MuJoCo's answer where the solve fails: the mid direction
    A, B = r / np.maximum(l0, _TINY), r / np.maximum(l1, _TINY)
    cos_g = (l0 * l0 + l1 * l1 - seg2) / np.maximum(2.0 * l0 * l1, _TINY)
    none |= cos_g < -1.0 + _TINY
    failed = cos_g > 1.0 - _TINY
    G = np.arccos(np.clip(cos_g, -1.0, 1.0))

    def f(z):
        return np.arcsin(np.clip(A * z, -1, 1)) + np.arcsin(np.clip(B * z, -1, 1)) - 2.0 * np.arcsin(z) + G

    z = np.full(len(d), 1.0 - 1e-7)
    fz = f(z)
    failed |= fz > 0.0
    done = failed | none | (np.abs(fz) <= 1e-6)
    for _ in range(20):  # Newton's method from z near 1, moving left
        if done.all():
            break
        df = (
            A / np.maximum(_TINY, np.sqrt(np.maximum(1 - (z * A) ** 2, 0.0)))
            + B / np.maximum(_TINY, np.sqrt(np.maximum(1 - (z * B) ** 2, 0.0)))
            - 2.0 / np.maximum(_TINY, np.sqrt(np.maximum(1 - z * z, 0.0)))
        )
        bad = ~done & (df > -_TINY)
        step = np.where(done | bad, 0.0, -fz / np.where(bad | done, -1.0, df))
        z1 = z + step
        bad |= ~done & (z1 > z)
        failed |= bad
        z = np.where(done | bad, z, z1)
        fz = np.where(done | bad, fz, f(z))
        failed |= ~done & (fz > 1e-6)
        done = done | bad | (np.abs(fz) <= 1e-6) | failed
    failed |= ~done  # not converged in 20 steps
    ccw = q0[:, 0] * q1[:, 1] - q0[:, 1] * q1[:, 0] > 0
    base = _unit(np.where(ccw[:, None], q0, q1))
    ang = np.arcsin(np.clip(z, -1, 1)) - np.arcsin(np.clip(np.where(ccw, A, B) * z, -1, 1))
    c, s = np.cos(ang), np.sin(ang)
    touch = r[:, None] * np.stack([c * base[:, 0] - s * base[:, 1], s * base[:, 0] + c * base[:, 1]], 1)
    touch = np.where(failed[:, None], fallback, touch)
    return np.concatenate([touch, touch], axis=1), np.where(none, -1.0, 0.0)
