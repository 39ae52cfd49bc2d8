"""Exact distance between a segment (a point when its ends coincide) and a convex hull, by GJK.

A round shape (sphere, capsule) is a segment swept by a radius, so its distance to a hull is this distance less
the radius. The hull's signed distance function of narrow.py (its largest face-plane distance) is exact inside the
hull but only a lower bound outside, by as much as the hull is thin: beside the edge of a 6 mm convex palm a
capsule 36 mm away read -1.4 mm and was pushed (MuJoCo's `mj_geomDistance` gives 36 mm). Outside, this module gives
the exact closest points.

Method: Gilbert, Johnson and Keerthi's distance algorithm on the Minkowski difference C = segment - hull (Ericson,
Real-Time Collision Detection, 9.5): a simplex of at most four support points of C is reduced each iteration to
the face, edge or vertex nearest the origin (Voronoi-region tests, Ericson 5.1.2 and 5.1.6), and the next support
point is taken against that nearest point v, until it lowers |v| by less than a relative GJK_TOLERANCE. The
support of the segment is one of its ends and the hull's its farthest vertex, so an iteration costs one pass over
the hull's vertices. Each simplex point keeps its segment and hull points, and the closest points are their
barycentric combinations. The origin inside the simplex (or |v| below GJK_TOUCH) means the two overlap: the
distance is reported as 0 and callers fall back to the face-plane depth, which is exact for a point inside.
"""

from __future__ import annotations

import warp as wp

from .geometry import Geometry

wp.set_module_options({"enable_backward": False})

Simplex = wp.types.matrix(shape=(4, 3), dtype=float)  # rows: up to four points (of C, or of the segment or hull)

GJK_ITERATIONS = wp.constant(32)  # converges in a few on hulls of up to a few hundred vertices; a bound for safety
GJK_TOLERANCE = wp.constant(1.0e-6)  # stop when |v|^2 - v . w <= this times |v|^2: |v| is then within 5e-7 of it
GJK_TOUCH = wp.constant(1.0e-7)  # [m] nearer than this counts as overlapping (float32's resolution at 1 m is 6e-8)


@wp.func
def _hull_support(geo: Geometry, g: int, d: wp.vec3) -> wp.vec3:
    """The vertex of hull g farthest along d (shape frame)."""
    v0 = geo.geom_vstart[g]
    best = geo.verts[v0]
    best_dot = wp.dot(best, d)
    for k in range(1, geo.geom_vcount[g]):
        v = geo.verts[v0 + k]
        s = wp.dot(v, d)
        if s > best_dot:
            best_dot = s
            best = v
    return best


@wp.func
def _closest_on_triangle(a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec3:
    """Barycentric weights (of a, b, c) of the point of triangle abc nearest the origin (Ericson 5.1.5); a weight
    of exactly 0 marks a vertex the nearest point does not need."""
    ab = b - a
    ac = c - a
    ap = -a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec3(1.0, 0.0, 0.0)
    bp = -b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec3(0.0, 1.0, 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3)
        return wp.vec3(1.0 - t, t, 0.0)
    cp = -c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec3(0.0, 0.0, 1.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6)
        return wp.vec3(1.0 - t, 0.0, t)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return wp.vec3(0.0, 1.0 - t, t)
    den = va + vb + vc
    if den <= 0.0:  # a degenerate (flat) triangle: its longest-reaching edge decides
        return wp.vec3(1.0, 0.0, 0.0)
    v = vb / den
    w = vc / den
    return wp.vec3(1.0 - v - w, v, w)


@wp.func
def _outside(a: wp.vec3, b: wp.vec3, c: wp.vec3, d: wp.vec3) -> bool:
    """Whether the origin lies on the other side of plane abc than d (or d is in the plane: a flat tetrahedron)."""
    n = wp.cross(b - a, c - a)
    side_o = wp.dot(-a, n)
    side_d = wp.dot(d - a, n)
    return side_o * side_d < 0.0 or side_d * side_d <= 1.0e-20 * wp.dot(n, n) * wp.dot(d - a, d - a)


@wp.func
def _weights(w: Simplex, n: int):
    """(barycentric weights of the simplex's point nearest the origin, 1 when the origin is inside a
    tetrahedron). A weight of 0 drops its point."""
    lam = wp.vec4(1.0, 0.0, 0.0, 0.0)
    if n == 2:
        e = w[1] - w[0]
        den = wp.dot(e, e)
        t = float(0.0)
        if den > 0.0:
            t = wp.clamp(-wp.dot(w[0], e) / den, 0.0, 1.0)
        lam = wp.vec4(1.0 - t, t, 0.0, 0.0)
        if t >= 1.0:
            lam = wp.vec4(0.0, 1.0, 0.0, 0.0)
    elif n == 3:
        b = _closest_on_triangle(w[0], w[1], w[2])
        lam = wp.vec4(b[0], b[1], b[2], 0.0)
    elif n == 4:
        best = float(1.0e30)
        inside = int(1)
        # faces (0,1,2), (0,2,3), (0,3,1), (1,3,2), each against its opposite point
        for f in range(4):
            i = 0
            j = 1
            k = 2
            o = 3
            if f == 1:
                j = 2
                k = 3
                o = 1
            elif f == 2:
                j = 3
                k = 1
                o = 2
            elif f == 3:
                i = 1
                j = 3
                k = 2
                o = 0
            if _outside(w[i], w[j], w[k], w[o]):
                inside = 0
                b = _closest_on_triangle(w[i], w[j], w[k])
                p = w[i] * b[0] + w[j] * b[1] + w[k] * b[2]
                dd = wp.dot(p, p)
                if dd < best:
                    best = dd
                    lam = wp.vec4(0.0)
                    lam[i] = b[0]
                    lam[j] = b[1]
                    lam[k] = b[2]
        if inside != 0:
            return wp.vec4(0.25), 1
    return lam, 0


@wp.func
def segment_hull_distance(geo: Geometry, g: int, p0: wp.vec3, p1: wp.vec3) -> tuple[float, wp.vec3, wp.vec3]:
    """(distance, point of segment p0 p1, point of hull g) in g's shape frame, the points the nearest pair. A
    distance of 0 means they overlap (the points are then not meaningful)."""
    ws = Simplex()
    sa = Simplex()
    sb = Simplex()
    # start from the support against the direction from the hull's first vertex to the segment's middle
    mid = 0.5 * (p0 + p1)
    d = mid - geo.verts[geo.geom_vstart[g]]
    if wp.dot(d, d) == 0.0:
        d = wp.vec3(1.0, 0.0, 0.0)
    a = p0
    if wp.dot(p1, -d) > wp.dot(p0, -d):
        a = p1
    b = _hull_support(geo, g, d)
    ws[0] = a - b
    sa[0] = a
    sb[0] = b
    n = int(1)
    v = ws[0]
    pa = a
    pb = b
    vv = wp.dot(v, v)
    it = int(0)
    while it < GJK_ITERATIONS:
        it += 1
        if vv <= GJK_TOUCH * GJK_TOUCH:
            return 0.0, pa, pb
        # support of C = segment - hull against v
        a = p0
        if wp.dot(p1, v) < wp.dot(p0, v):
            a = p1
        b = _hull_support(geo, g, v)
        w = a - b
        if vv - wp.dot(v, w) <= GJK_TOLERANCE * vv:
            break  # no support point lowers |v| noticeably: v is the nearest point of C
        ws[n] = w
        sa[n] = a
        sb[n] = b
        n += 1
        lam, inside = _weights(ws, n)
        if inside != 0:
            return 0.0, pa, pb
        # keep the points with weight, in order
        m = int(0)
        nv = wp.vec3(0.0)
        npa = wp.vec3(0.0)
        npb = wp.vec3(0.0)
        for k in range(n):
            if lam[k] > 0.0:
                nv = nv + ws[k] * lam[k]
                npa = npa + sa[k] * lam[k]
                npb = npb + sb[k] * lam[k]
                ws[m] = ws[k]
                sa[m] = sa[k]
                sb[m] = sb[k]
                m += 1
        n = m
        nvv = wp.dot(nv, nv)
        if nvv >= vv:
            break  # no progress in float32: the last point stands
        v = nv
        vv = nvv
        pa = npa
        pb = npb
    return wp.sqrt(vv), pa, pb
