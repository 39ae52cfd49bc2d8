"""Convex polytope against convex polytope (hull-hull, box-hull) by the separating-axis test.

Candidate axes: the face normals of both polytopes and the cross products of edge pairs that build a face of the
Minkowski difference (Gregorius, "The Separating Axis Test between Convex Polyhedra", GDC 2013): edge pairs whose
arcs on the Gauss map do not cross cannot be the axis of least penetration, so testing only those that cross keeps
the test exact at O(Ea Eb) constant-time checks instead of O(Ea Eb (Va + Vb)). On a face axis the separation is the
other polytope's support distance below the face plane; on an edge axis (oriented away from the first polytope's
centroid) it is the distance between the two edges' lines, since the edges are the supporting features. The axis
of largest separation is the contact normal; if it exceeds the pair's margin there is no contact. As in box_box.py,
an edge axis must beat the best face axis by 5 % of its depth plus 10 um (and b's face a's by 10 um), so that
resting faces give face contacts and ties resolve the same way every step.
* Face axis: the owner's face is the reference, the other polytope's face most opposed to it the incident face.
  Their overlap, seen along the reference normal, is a convex polygon whose vertices are the incident vertices
  inside the reference face, the reference vertices inside the incident face, and the crossings of their edges;
  each such vertex closer than the margin is a candidate (separation: the incident surface's height above the
  reference face; point: midway). `emit` keeps four. No clipping buffer is needed, whatever the faces' sizes.
* Edge axis: the two edges' closest points give one contact.
Face axes are tested in the face owner's frame, edge pairs in b's. The tables (face loops counter-clockwise seen
from outside, edges with their two faces) are built on the host by hull.hull_topology; boxes carry them too.
"""

from __future__ import annotations

import warp as wp

from .contacts import ContactPoints
from .distance import closest_segment_segment
from .geometry import ContactMaterial, Geometry
from .manifold import emit

wp.set_module_options({"enable_backward": False})

INSIDE_SLACK = wp.constant(1.0e-6)  # [m] a vertex this far outside a face's edge still counts as inside it


@wp.func
def _normal(geo: Geometry, f: int) -> wp.vec3:
    pl = geo.planes[f]
    return wp.vec3(pl[0], pl[1], pl[2])


@wp.func
def _loop_vertex(geo: Geometry, f: int, k: int) -> wp.vec3:
    return geo.verts[geo.face_verts[geo.face_vstart[f] + k % geo.face_vcount[f]]]


@wp.func
def _best_face(geo: Geometry, g: int, h: int, t_hg: wp.transform) -> tuple[float, int, int]:
    """(largest separation, its plane index, h's vertex at that separation) over the face planes of polytope g of
    polytope h; t_hg maps h's frame into g's. A plane's separation is h's smallest signed distance above it."""
    best = float(-1.0e30)
    best_f = int(-1)
    best_v = int(-1)
    f0 = geo.geom_fstart[g]
    v0 = geo.geom_vstart[h]
    q = wp.transform_get_rotation(t_hg)
    p = wp.transform_get_translation(t_hg)
    for f in range(f0, f0 + geo.geom_fcount[g]):
        n = _normal(geo, f)
        n_h = wp.quat_rotate_inv(q, n)  # the plane in h's frame, so h's vertices need no transform
        d_h = wp.dot(n, p) + geo.planes[f][3]
        s = float(1.0e30)
        low = int(-1)
        for k in range(v0, v0 + geo.geom_vcount[h]):
            sk = wp.dot(n_h, geo.verts[k]) + d_h
            if sk < s:
                s = sk
                low = k
        if s > best:
            best = s
            best_f = f
            best_v = low
    return best, best_f, best_v


@wp.func
def _centroid(geo: Geometry, g: int) -> wp.vec3:
    c = wp.vec3(0.0)
    v0 = geo.geom_vstart[g]
    n = geo.geom_vcount[g]
    for k in range(n):
        c += geo.verts[v0 + k]
    return c / float(n)


@wp.func
def _minkowski_face(a: wp.vec3, b: wp.vec3, c: wp.vec3, d: wp.vec3) -> bool:
    """Whether edge arcs (a, b) of one polytope and (-c, -d) of the other cross on the unit sphere, i.e. the
    edges build a face of the Minkowski difference (a, b, c, d: the unit normals of each edge's two faces)."""
    n1 = wp.cross(a, b)
    n2 = wp.cross(c, d)
    cba = -wp.dot(c, n1)
    dba = -wp.dot(d, n1)
    adc = wp.dot(a, n2)
    bdc = wp.dot(b, n2)
    return cba * dba < 0.0 and adc * bdc < 0.0 and cba * bdc > 0.0


@wp.func
def _best_edges(geo: Geometry, a: int, b: int, t_ab: wp.transform, margin: float) -> tuple[float, int, int, wp.vec3]:
    """(largest separation, edge of a, edge of b, axis in b's frame pointing from a to b) over the edge pairs
    that build Minkowski faces; the separation is 1e30 (and the edges -1) when one exceeds the margin. t_ab maps
    a's frame into b's: each edge of a is moved once, b's edges are read as stored."""
    best = float(-1.0e30)
    best_i = int(-1)
    best_j = int(-1)
    best_axis = wp.vec3(0.0, 0.0, 1.0)
    ca = wp.transform_point(t_ab, _centroid(geo, a))
    e0a = geo.geom_estart[a]
    e0b = geo.geom_estart[b]
    for i in range(e0a, e0a + geo.geom_ecount[a]):
        ev = geo.edges[i]
        ef = geo.edge_faces[i]
        p0 = wp.transform_point(t_ab, geo.verts[ev[0]])
        p1 = wp.transform_point(t_ab, geo.verts[ev[1]])
        na = wp.transform_vector(t_ab, _normal(geo, ef[0]))
        nb = wp.transform_vector(t_ab, _normal(geo, ef[1]))
        for j in range(e0b, e0b + geo.geom_ecount[b]):
            fv = geo.edge_faces[j]
            if not _minkowski_face(na, nb, _normal(geo, fv[0]), _normal(geo, fv[1])):
                continue
            ew = geo.edges[j]
            q0 = geo.verts[ew[0]]
            q1 = geo.verts[ew[1]]
            axis = wp.cross(p1 - p0, q1 - q0)
            length = wp.length(axis)
            if length < 1.0e-6 * wp.length(p1 - p0) * wp.length(q1 - q0):
                continue  # parallel edges: the face axes decide
            axis = axis / length
            if wp.dot(axis, p0 - ca) < 0.0:
                axis = -axis
            s = wp.dot(axis, q0 - p0)
            if s > margin:
                return float(1.0e30), int(-1), int(-1), axis
            if s > best:
                best = s
                best_i = i
                best_j = j
                best_axis = axis
    return best, best_i, best_j, best_axis


@wp.func
def _face_contacts(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    a: int,
    b: int,
    rank: int,
    inc: int,
    rf: int,
    sep: float,
    support: int,
    t_ir: wp.transform,
    x_ref: wp.transform,
    flip: float,
    margin: float,
    mat: ContactMaterial,
) -> None:
    """Candidates of reference face rf (pose x_ref) against the incident polytope inc (t_ir maps its frame into the
    reference's), whose vertex `support` lies deepest, at the face's separation sep. flip = -1 when the reference
    polytope is a (the emitted normal points from b to a)."""
    rn = _normal(geo, rf)
    r0 = _loop_vertex(geo, rf, 0)
    nw = wp.transform_vector(x_ref, rn) * flip
    # incident face: the face of inc most opposed to rn
    fi = int(-1)
    low = float(1.0e30)
    f0 = geo.geom_fstart[inc]
    for g in range(f0, f0 + geo.geom_fcount[inc]):
        c = wp.dot(wp.transform_vector(t_ir, _normal(geo, g)), rn)
        if c < low:
            low = c
            fi = g
    ni = wp.transform_vector(t_ir, _normal(geo, fi))
    nr = geo.face_vcount[rf]
    nc = geo.face_vcount[fi]
    q_first = wp.transform_point(t_ir, _loop_vertex(geo, fi, 0))
    deepest = float(1.0e30)  # the deepest candidate emitted
    # incident vertices inside the reference face, and incident edges crossing reference edges
    for j in range(nc):
        q = wp.transform_point(t_ir, _loop_vertex(geo, fi, j))
        q_next = wp.transform_point(t_ir, _loop_vertex(geo, fi, j + 1))
        f = q_next - q
        f_flat = f - rn * wp.dot(f, rn)
        inside = bool(True)
        for i in range(nr):
            r = _loop_vertex(geo, rf, i)
            e = _loop_vertex(geo, rf, i + 1) - r
            if wp.dot(wp.cross(e, rn), q - r) > INSIDE_SLACK:
                inside = False
            den = wp.dot(wp.cross(e, f_flat), rn)
            if wp.abs(den) > 1.0e-12:
                w = q - r
                u = wp.dot(wp.cross(w, f_flat), rn) / den
                s = wp.dot(wp.cross(w, e), rn) / den
                if u >= 0.0 and u <= 1.0 and s >= 0.0 and s <= 1.0:
                    p = q + f * s
                    h = wp.dot(p - r0, rn)
                    if h < margin:
                        emit(
                            cp,
                            env,
                            first,
                            la,
                            lb,
                            a,
                            b,
                            rank,
                            wp.transform_point(x_ref, p - rn * (0.5 * h)),
                            nw,
                            h,
                            mat,
                        )
                        deepest = wp.min(deepest, h)
        if inside:
            h = wp.dot(q - r0, rn)
            if h < margin:
                emit(cp, env, first, la, lb, a, b, rank, wp.transform_point(x_ref, q - rn * (0.5 * h)), nw, h, mat)
                deepest = wp.min(deepest, h)
    # reference vertices inside the incident face (seen along rn): the incident surface's height above them
    den_h = wp.dot(ni, rn)
    if den_h < -1.0e-6:
        for i in range(nr):
            r = _loop_vertex(geo, rf, i)
            inside = bool(True)
            for j in range(nc):
                q = wp.transform_point(t_ir, _loop_vertex(geo, fi, j))
                q_next = wp.transform_point(t_ir, _loop_vertex(geo, fi, j + 1))
                if wp.dot(wp.cross(q_next - q, rn), r - q) < -INSIDE_SLACK:
                    inside = False
            if inside:
                h = wp.dot(q_first - r, ni) / den_h
                if h < margin:
                    emit(cp, env, first, la, lb, a, b, rank, wp.transform_point(x_ref, r + rn * (0.5 * h)), nw, h, mat)
                    deepest = wp.min(deepest, h)
    # shapes apart: their faces may not overlap along rn (nearest features vertex-vertex, say) or overlap only
    # where the gap is wider than the axis's separation, which is what bounds their distance from below; then
    # inc's deepest vertex stands in at that separation (when the overlap reaches it, it is not needed, and a
    # vertex of an edge lying on the face may lie outside the face)
    if sep < margin and deepest > sep + INSIDE_SLACK:
        q = wp.transform_point(t_ir, geo.verts[support])
        emit(cp, env, first, la, lb, a, b, rank, wp.transform_point(x_ref, q - rn * (0.5 * sep)), nw, sep, mat)


@wp.func
def hull_hull(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    a: int,
    b: int,
    rank: int,
    xa: wp.transform,
    xb: wp.transform,
    margin: float,
    mat: ContactMaterial,
) -> None:
    t_ba = wp.transform_inverse(xa) * xb  # b's frame into a's
    t_ab = wp.transform_inverse(t_ba)
    sa, fa, va = _best_face(geo, a, b, t_ba)
    if sa > margin:
        return
    sb, fb, vb = _best_face(geo, b, a, t_ab)
    if sb > margin:
        return
    face_best = sa
    if sb > sa + 1.0e-5:
        face_best = sb
    se, ea, eb, axis = _best_edges(geo, a, b, t_ab, margin)
    if se > margin:
        return
    if ea >= 0 and se > face_best + 0.05 * wp.abs(face_best) + 1.0e-5:
        p0 = wp.transform_point(t_ab, geo.verts[geo.edges[ea][0]])  # in b's frame
        p1 = wp.transform_point(t_ab, geo.verts[geo.edges[ea][1]])
        q0 = geo.verts[geo.edges[eb][0]]
        q1 = geo.verts[geo.edges[eb][1]]
        st = closest_segment_segment(p0, p1, q0, q1)
        mid = 0.5 * (p0 + (p1 - p0) * st[0] + q0 + (q1 - q0) * st[1])
        emit(cp, env, first, la, lb, a, b, rank, wp.transform_point(xb, mid), -wp.transform_vector(xb, axis), se, mat)
    elif face_best == sa:
        _face_contacts(geo, cp, env, first, la, lb, a, b, rank, b, fa, sa, va, t_ba, xa, -1.0, margin, mat)
    else:
        _face_contacts(geo, cp, env, first, la, lb, a, b, rank, a, fb, sb, vb, t_ab, xb, 1.0, margin, mat)
