"""Box against box by the separating-axis test (Gottschalk's OBB test; the contact generation of ODE's dBoxBox).

Fifteen candidate axes: the three face normals of each box and the nine cross products of their edges. On each
axis the boxes' separation is |L . (c_b - c_a)| - r_a - r_b; the axis of largest separation is the contact normal
(edge axes must beat the best face axis by 5 % of its depth plus 10 um, so that nearly parallel faces give face
contacts). If it exceeds the pair's margin there is no contact.
* Face axis: the box that owns it is the reference, the other's face most opposed to it the incident face. The
  incident face, in the reference face's 2D frame, is clipped against the reference rectangle (Sutherland-Hodgman,
  at most 8 vertices); each clipped vertex closer than the margin is a contact, its separation the height above the
  reference face, its point midway between the faces. `emit` keeps four of them.
* Edge axis: the two supporting edges' closest points give one contact.
Unlike testing corners against a distance function, this finds the face contact of two equal, aligned boxes (a
stack), whose corners lie exactly on each other's edges, and edge-edge contacts.
"""

from __future__ import annotations

import warp as wp

from .contacts import ContactPoints
from .distance import closest_segment_segment
from .geometry import ContactMaterial, Geometry
from .manifold import emit

wp.set_module_options({"enable_backward": False})

_poly = wp.types.matrix(shape=(8, 3), dtype=float)  # clipped polygon: rows (s, t, height)
EDGE_TOLERANCE_REL = wp.constant(0.05)
EDGE_TOLERANCE_ABS = wp.constant(1.0e-5)


@wp.func
def _radius(r: wp.mat33, h: wp.vec3, axis: wp.vec3) -> float:
    """Half extent of a box (axes the columns of r, half sizes h) along a unit axis."""
    return (
        h[0] * wp.abs(wp.dot(wp.vec3(r[0, 0], r[1, 0], r[2, 0]), axis))
        + h[1] * wp.abs(wp.dot(wp.vec3(r[0, 1], r[1, 1], r[2, 1]), axis))
        + h[2] * wp.abs(wp.dot(wp.vec3(r[0, 2], r[1, 2], r[2, 2]), axis))
    )


@wp.func
def _col(r: wp.mat33, k: int) -> wp.vec3:
    return wp.vec3(r[0, k], r[1, k], r[2, k])


@wp.func
def _clip(poly: _poly, count: int, coord: int, sign: float, limit: float) -> tuple[_poly, int]:
    """Keep the part of a polygon where sign * poly[:, coord] <= limit."""
    out = _poly()
    m = int(0)
    for i in range(count):
        j = (i + 1) % count
        di = sign * poly[i, coord] - limit
        dj = sign * poly[j, coord] - limit
        if di <= 0.0:
            if m < 8:
                for k in range(3):
                    out[m, k] = poly[i, k]
                m += 1
        if (di < 0.0 and dj > 0.0) or (di > 0.0 and dj < 0.0):
            f = di / (di - dj)
            if m < 8:
                for k in range(3):
                    out[m, k] = poly[i, k] + f * (poly[j, k] - poly[i, k])
                m += 1
    return out, m


@wp.func
def box_box(
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
    ha = geo.geom_size[a]
    hb = geo.geom_size[b]
    ra = wp.quat_to_matrix(wp.transform_get_rotation(xa))
    rb = wp.quat_to_matrix(wp.transform_get_rotation(xb))
    ca = wp.transform_get_translation(xa)
    cb = wp.transform_get_translation(xb)
    d = cb - ca
    best = float(-1.0e30)
    best_axis = int(-1)
    n = wp.vec3(0.0, 0.0, 1.0)
    for k in range(6):
        axis = _col(ra, k % 3)
        if k >= 3:
            axis = _col(rb, k - 3)
        s = wp.abs(wp.dot(axis, d)) - _radius(ra, ha, axis) - _radius(rb, hb, axis)
        if s > margin:
            return
        if s > best:
            best = s
            best_axis = k
            n = axis
    face_best = best
    for i in range(3):
        for j in range(3):
            axis = wp.cross(_col(ra, i), _col(rb, j))
            length = wp.length(axis)
            if length < 1.0e-6:
                continue  # parallel edges: the face axes decide
            axis = axis / length
            s = wp.abs(wp.dot(axis, d)) - _radius(ra, ha, axis) - _radius(rb, hb, axis)
            if s > margin:
                return
            if s > face_best + EDGE_TOLERANCE_REL * wp.abs(face_best) + EDGE_TOLERANCE_ABS and s > best:
                best = s
                best_axis = 6 + 3 * i + j
                n = axis
    if wp.dot(n, d) > 0.0:
        n = -n  # from b towards a
    if best_axis >= 6:
        i = (best_axis - 6) // 3
        j = (best_axis - 6) % 3
        pa = ca  # a's edge nearest b, along a's axis i
        pb = cb
        for k in range(3):
            if k != i:
                u = _col(ra, k)
                pa = pa - u * (ha[k] * wp.sign(wp.dot(u, n)))
            if k != j:
                u = _col(rb, k)
                pb = pb + u * (hb[k] * wp.sign(wp.dot(u, n)))
        ea = _col(ra, i) * ha[i]
        eb = _col(rb, j) * hb[j]
        st = closest_segment_segment(pa - ea, pa + ea, pb - eb, pb + eb)
        qa = pa - ea + 2.0 * ea * st[0]
        qb = pb - eb + 2.0 * eb * st[1]
        emit(cp, env, first, la, lb, a, b, rank, 0.5 * (qa + qb), n, best, mat)
        return
    _face_contacts(cp, env, first, la, lb, a, b, rank, ra, ha, ca, rb, hb, cb, n, best_axis, margin, mat)


@wp.func
def _face_contacts(
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    a: int,
    b: int,
    rank: int,
    ra: wp.mat33,
    ha: wp.vec3,
    ca: wp.vec3,
    rb: wp.mat33,
    hb: wp.vec3,
    cb: wp.vec3,
    n: wp.vec3,
    best_axis: int,
    margin: float,
    mat: ContactMaterial,
) -> None:
    """The contacts of a face axis (best_axis 0..5, n from b towards a): the incident face clipped against the
    reference face's rectangle, one contact per clipped vertex within the margin."""
    # reference box (owner of the axis) and its face towards the other box
    r_ref = ra
    h_ref = ha
    c_ref = ca
    r_inc = rb
    h_inc = hb
    c_inc = cb
    rn = -n  # reference face normal, pointing at the incident box
    if best_axis >= 3:
        r_ref = rb
        h_ref = hb
        c_ref = cb
        r_inc = ra
        h_inc = ha
        c_inc = ca
        rn = n
    k = best_axis % 3
    ku = (k + 1) % 3
    kv = (k + 2) % 3
    u = _col(r_ref, ku)
    v = _col(r_ref, kv)
    fc = c_ref + rn * h_ref[k]
    # incident face: the face of the other box most opposed to rn
    inc = int(0)
    best_dot = float(0.0)
    for m in range(3):
        dm = wp.dot(_col(r_inc, m), rn)
        if wp.abs(dm) > wp.abs(best_dot):
            best_dot = dm
            inc = m
    inc_n = _col(r_inc, inc) * (-wp.sign(best_dot))
    ic = c_inc + inc_n * h_inc[inc]
    iu = _col(r_inc, (inc + 1) % 3) * h_inc[(inc + 1) % 3]
    iv = _col(r_inc, (inc + 2) % 3) * h_inc[(inc + 2) % 3]
    poly = _poly()
    for m in range(4):
        su = float(1 - 2 * ((m + 1) // 2 % 2))  # corners in order: (+,+), (-,+), (-,-), (+,-)
        sv = float(1 - 2 * (m // 2))
        p = ic + iu * su + iv * sv - fc
        poly[m, 0] = wp.dot(p, u)
        poly[m, 1] = wp.dot(p, v)
        poly[m, 2] = wp.dot(p, rn)
    count = int(4)
    poly, count = _clip(poly, count, 0, 1.0, h_ref[ku])
    poly, count = _clip(poly, count, 0, -1.0, h_ref[ku])
    poly, count = _clip(poly, count, 1, 1.0, h_ref[kv])
    poly, count = _clip(poly, count, 1, -1.0, h_ref[kv])
    for m in range(count):
        sep = poly[m, 2]
        if sep < margin:
            point = fc + u * poly[m, 0] + v * poly[m, 1] + rn * (0.5 * sep)
            emit(cp, env, first, la, lb, a, b, rank, point, n, sep, mat)
