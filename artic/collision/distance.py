"""Closest points between points, segments and triangles (Ericson, Real-Time Collision Detection, ch. 5)."""

from __future__ import annotations

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def closest_on_segment(a: wp.vec3, b: wp.vec3, p: wp.vec3) -> wp.vec3:
    ab = b - a
    den = wp.dot(ab, ab)
    t = float(0.0)
    if den > 1.0e-12:
        t = wp.clamp(wp.dot(p - a, ab) / den, 0.0, 1.0)
    return a + ab * t


@wp.func
def closest_segment_segment(p1: wp.vec3, q1: wp.vec3, p2: wp.vec3, q2: wp.vec3) -> wp.vec2:
    """Parameters (s, t) of the closest points p1 + s (q1 - p1), p2 + t (q2 - p2) (Ericson 5.1.9), as a vec2."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    s = float(0.0)
    t = float(0.0)
    eps = 1.0e-12
    if a <= eps and e <= eps:
        return wp.vec2(0.0, 0.0)
    if a <= eps:
        return wp.vec2(0.0, wp.clamp(f / e, 0.0, 1.0))
    c = wp.dot(d1, r)
    if e <= eps:
        return wp.vec2(wp.clamp(-c / a, 0.0, 1.0), 0.0)
    b = wp.dot(d1, d2)
    den = a * e - b * b
    if den > eps:
        s = wp.clamp((b * f - c * e) / den, 0.0, 1.0)
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = wp.clamp(-c / a, 0.0, 1.0)
    elif t > 1.0:
        t = 1.0
        s = wp.clamp((b - c) / a, 0.0, 1.0)
    return wp.vec2(s, t)


@wp.func
def closest_on_triangle(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec4:
    """Closest point of triangle abc to p (Ericson 5.1.5); the fourth component is 1 when it is interior."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec4(a[0], a[1], a[2], 0.0)
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec4(b[0], b[1], b[2], 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        q = a + ab * (d1 / (d1 - d3))
        return wp.vec4(q[0], q[1], q[2], 0.0)
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec4(c[0], c[1], c[2], 0.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        q = a + ac * (d2 / (d2 - d6))
        return wp.vec4(q[0], q[1], q[2], 0.0)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        q = b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))
        return wp.vec4(q[0], q[1], q[2], 0.0)
    den = 1.0 / (va + vb + vc)
    q = a + ab * (vb * den) + ac * (vc * den)
    return wp.vec4(q[0], q[1], q[2], 1.0)
