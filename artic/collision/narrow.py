"""Narrow phase: contact points, normals and separations of one shape pair, in Warp functions.

Every shape is described twice: by a signed distance function with its gradient (exact for planes, spheres, capsules,
boxes and cylinders; the largest face-plane distance for convex hulls, exact inside and a lower bound outside, where
a round shape near enough to touch gets GJK's exact distance instead, gjk.py), and by surface samples (a sphere's
centre with its radius, five points along a capsule's axis with its radius, a box's corners, sixteen points on a
cylinder's rims, a hull's vertices). A pair is resolved by the exact segment-segment test when both shapes are round
(sphere, capsule), by testing the round shape's samples against the other's distance function when one is, and by a
separating-axis test otherwise: box_box.py for two boxes, hull_hull.py for any other pair of boxes, hulls and
cylinders (a cylinder as its 32-sided prism). A plane against a cylinder uses the exact deepest rim points. Triangle
meshes (static only) are tested against the other shape's samples with point-triangle distances, which misses a mesh
edge crossing a polytope edge (docs/design.md).

Candidates go through `emit` (manifold.py), which keeps at most four points per pair (MANIFOLD_POINTS): the deepest,
and among points of about the same depth those that spread the manifold most.
"""

from __future__ import annotations

import warp as wp

from ..core.control import ControlArrays
from ..core.data import Kin, StepData
from ..core.model import DofParams, Tree
from ..core.state import StateArrays
from .box_box import box_box
from .contacts import ContactPoints
from .cull import boxes_apart
from .distance import closest_on_segment, closest_on_triangle, closest_segment_segment
from .geometry import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CONVEX,
    GEOM_CYLINDER,
    GEOM_PLANE,
    GEOM_SPHERE,
    GEOM_TRIMESH,
    MANIFOLD_POINTS,
    MAT_CONDIM,
    MAT_MIX,
    MAT_PRIORITY,
    MAT_PYRAMID,
    MAT_ROLLING,
    MAT_SOLREF,
    MAT_TORSION,
    MAT_WEIGHT,
    ContactMaterial,
    Geometry,
)
from .gjk import segment_hull_distance
from .hull_hull import hull_hull
from .manifold import emit
from .reach import TOUCHING, remember_commands, within_reach

wp.set_module_options({"enable_backward": False})

CYLINDER_RIM_SAMPLES = wp.constant(8)
MANIFOLD = wp.constant(MANIFOLD_POINTS)
# sin^2 of the angle below which two capsules' segments count as parallel for soft contacts: MuJoCo makes two
# contacts at 0.001 degrees and one at 0.01 (measured), so about 1e-4 rad
PARALLEL_SIN2 = wp.constant(1.0e-8)
CAPSULE_SAMPLES = wp.constant(5)


@wp.func
def _unit_x() -> wp.vec3:
    return wp.vec3(1.0, 0.0, 0.0)


@wp.func
def sdf_local(geo: Geometry, g: int, p: wp.vec3) -> wp.vec4:
    """(distance, outward unit normal) of a shape-frame point from shape g's surface, as a vec4."""
    t = geo.geom_type[g]
    size = geo.geom_size[g]
    if t == GEOM_PLANE:
        return wp.vec4(p[0], 1.0, 0.0, 0.0)
    if t == GEOM_SPHERE or t == GEOM_CAPSULE:
        q = p
        if t == GEOM_CAPSULE:
            q = p - wp.vec3(wp.clamp(p[0], -size[1], size[1]), 0.0, 0.0)
        d = wp.length(q)
        n = _unit_x()
        if d > 1.0e-9:
            n = q / d
        return wp.vec4(d - size[0], n[0], n[1], n[2])
    if t == GEOM_BOX:
        q = wp.vec3(wp.abs(p[0]) - size[0], wp.abs(p[1]) - size[1], wp.abs(p[2]) - size[2])
        qmax = wp.max(q[0], wp.max(q[1], q[2]))
        if qmax > 0.0:
            o = wp.vec3(
                wp.max(q[0], 0.0) * wp.sign(p[0]), wp.max(q[1], 0.0) * wp.sign(p[1]), wp.max(q[2], 0.0) * wp.sign(p[2])
            )
            d = wp.length(o)
            n = o / d
            return wp.vec4(d, n[0], n[1], n[2])
        k = int(0)
        if q[1] >= q[0] and q[1] >= q[2]:
            k = 1
        elif q[2] >= q[0] and q[2] >= q[1]:
            k = 2
        n = wp.vec3(0.0)
        n[k] = wp.sign(p[k])
        return wp.vec4(qmax, n[0], n[1], n[2])
    if t == GEOM_CYLINDER:
        radial = wp.sqrt(p[1] * p[1] + p[2] * p[2])
        rdir = wp.vec3(0.0, 1.0, 0.0)
        if radial > 1.0e-9:
            rdir = wp.vec3(0.0, p[1] / radial, p[2] / radial)
        dr = radial - size[0]
        dx = wp.abs(p[0]) - size[1]
        if dr > 0.0 or dx > 0.0:
            ox = wp.max(dx, 0.0)
            orr = wp.max(dr, 0.0)
            d = wp.sqrt(ox * ox + orr * orr)
            n = (wp.vec3(wp.sign(p[0]) * ox, 0.0, 0.0) + rdir * orr) / d
            return wp.vec4(d, n[0], n[1], n[2])
        if dx > dr:
            return wp.vec4(dx, wp.sign(p[0]), 0.0, 0.0)
        return wp.vec4(dr, rdir[0], rdir[1], rdir[2])
    # convex hull: the largest face-plane distance
    best = float(-1.0e30)
    n = _unit_x()
    f0 = geo.geom_fstart[g]
    for f in range(geo.geom_fcount[g]):
        pl = geo.planes[f0 + f]
        nf = wp.vec3(pl[0], pl[1], pl[2])
        d = wp.dot(nf, p) + pl[3]
        if d > best:
            best = d
            n = nf
    return wp.vec4(best, n[0], n[1], n[2])


@wp.func
def sample_count(geo: Geometry, g: int) -> int:
    t = geo.geom_type[g]
    if t == GEOM_SPHERE:
        return 1
    if t == GEOM_CAPSULE:
        return CAPSULE_SAMPLES
    if t == GEOM_BOX:
        return 8
    if t == GEOM_CYLINDER:
        return 2 * CYLINDER_RIM_SAMPLES
    return geo.geom_vcount[g]


@wp.func
def sample_local(geo: Geometry, g: int, k: int) -> wp.vec4:
    """Sample k of shape g: (shape-frame point, radius) as a vec4."""
    t = geo.geom_type[g]
    size = geo.geom_size[g]
    if t == GEOM_SPHERE:
        return wp.vec4(0.0, 0.0, 0.0, size[0])
    if t == GEOM_CAPSULE:
        x = -size[1] + 2.0 * size[1] * float(k) / float(CAPSULE_SAMPLES - 1)
        return wp.vec4(x, 0.0, 0.0, size[0])
    if t == GEOM_BOX:
        sx = float(1 - 2 * (k & 1))
        sy = float(1 - (k & 2))
        sz = float(1 - ((k >> 2) & 1) * 2)
        return wp.vec4(sx * size[0], sy * size[1], sz * size[2], 0.0)
    if t == GEOM_CYLINDER:
        rim = k // CYLINDER_RIM_SAMPLES
        ang = 2.0 * wp.pi * float(k % CYLINDER_RIM_SAMPLES) / float(CYLINDER_RIM_SAMPLES)
        return wp.vec4(float(2 * rim - 1) * size[1], size[0] * wp.cos(ang), size[0] * wp.sin(ang), 0.0)
    v = geo.verts[geo.geom_vstart[g] + k]
    return wp.vec4(v[0], v[1], v[2], 0.0)


@wp.func
def segment_of(geo: Geometry, g: int, x: wp.transform, end: float) -> wp.vec3:
    """World end point (end = -1 or 1) of a round shape's core segment (a sphere's is its centre)."""
    h = float(0.0)
    if geo.geom_type[g] == GEOM_CAPSULE:
        h = geo.geom_size[g][1]
    return wp.transform_point(x, wp.vec3(end * h, 0.0, 0.0))


@wp.func
def collide_round(
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
    """Sphere/capsule against sphere/capsule: closest points of the core segments. Hard contacts add a's end points
    when the capsules are nearly parallel (within 18 degrees), so that a capsule lying along another rests on two
    points. A soft contact is a spring of its own, so soft contacts follow MuJoCo's count exactly: the closest
    points only, or, for parallel segments (MuJoCo's test: within ~1e-4 rad), the two ends of their overlap."""
    a0 = segment_of(geo, a, xa, -1.0)
    a1 = segment_of(geo, a, xa, 1.0)
    b0 = segment_of(geo, b, xb, -1.0)
    b1 = segment_of(geo, b, xb, 1.0)
    ra = geo.geom_size[a][0]
    rb = geo.geom_size[b][0]
    da = a1 - a0
    db = b1 - b0
    la2 = wp.length(da)
    lb2 = wp.length(db)
    soft = mat[MAT_SOLREF] != 0.0 or mat[MAT_SOLREF + 1] != 0.0
    if soft and la2 > 1.0e-9 and lb2 > 1.0e-9:
        cross = wp.cross(da, db)
        if wp.dot(cross, cross) <= PARALLEL_SIN2 * la2 * la2 * lb2 * lb2:
            # the overlap of b's projection onto a's segment, in a's parameter
            t0 = wp.dot(b0 - a0, da) / (la2 * la2)
            t1 = wp.dot(b1 - a0, da) / (la2 * la2)
            lo = wp.max(wp.min(t0, t1), 0.0)
            hi = wp.min(wp.max(t0, t1), 1.0)
            if hi > lo:
                p_lo = a0 + da * lo
                p_hi = a0 + da * hi
                _round_point(
                    cp, env, first, la, lb, a, b, rank, p_lo, closest_on_segment(b0, b1, p_lo), ra, rb, margin, mat
                )
                _round_point(
                    cp, env, first, la, lb, a, b, rank, p_hi, closest_on_segment(b0, b1, p_hi), ra, rb, margin, mat
                )
                return
    st = closest_segment_segment(a0, a1, b0, b1)
    pa = a0 + da * st[0]
    pb = b0 + db * st[1]
    _round_point(cp, env, first, la, lb, a, b, rank, pa, pb, ra, rb, margin, mat)
    if not soft and la2 > 1.0e-9 and lb2 > 1.0e-9:
        if wp.abs(wp.dot(da, db)) > 0.95 * la2 * lb2:
            _round_point(cp, env, first, la, lb, a, b, rank, a0, closest_on_segment(b0, b1, a0), ra, rb, margin, mat)
            _round_point(cp, env, first, la, lb, a, b, rank, a1, closest_on_segment(b0, b1, a1), ra, rb, margin, mat)


@wp.func
def _round_point(
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    a: int,
    b: int,
    rank: int,
    pa: wp.vec3,
    pb: wp.vec3,
    ra: float,
    rb: float,
    margin: float,
    mat: ContactMaterial,
) -> None:
    d = pa - pb
    dist = wp.length(d)
    sep = dist - ra - rb
    if sep < margin:
        n = wp.vec3(0.0, 0.0, 1.0)
        if dist > 1.0e-9:
            n = d / dist
        emit(cp, env, first, la, lb, a, b, rank, pb + n * (rb + 0.5 * sep), n, sep, mat)


@wp.func
def samples_against(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    a: int,
    b: int,
    rank: int,
    src: int,
    xs: wp.transform,
    dst: int,
    xd: wp.transform,
    flip: float,
    margin: float,
    mat: ContactMaterial,
) -> None:
    """Samples of shape `src` (pose xs) against the distance function of `dst` (pose xd). flip = 1 when src is
    a (the normal leaves dst towards a), -1 when src is b."""
    count = sample_count(geo, src)
    step = int(1)
    if geo.geom_type[src] == GEOM_CAPSULE and geo.geom_type[dst] == GEOM_PLANE:
        step = CAPSULE_SAMPLES - 1  # on a plane only a capsule's end points can be deepest
    for k in range(0, count, step):
        s = sample_local(geo, src, k)
        p = wp.transform_point(xs, wp.vec3(s[0], s[1], s[2]))
        local = wp.transform_point(wp.transform_inverse(xd), p)
        dn = sdf_local(geo, dst, local)
        if geo.geom_type[dst] == GEOM_CONVEX and dn[0] > 0.0 and dn[0] - s[3] < margin:
            dn = _hull_point_distance(geo, dst, local, dn)
        sep = dn[0] - s[3]
        if sep < margin:
            nd = wp.transform_vector(xd, wp.vec3(dn[1], dn[2], dn[3]))
            point = p - nd * (s[3] + 0.5 * sep)
            emit(cp, env, first, la, lb, a, b, rank, point, nd * flip, sep, mat)
    if geo.geom_type[src] == GEOM_CAPSULE and geo.geom_type[dst] != GEOM_PLANE:
        _capsule_deepest(geo, cp, env, first, la, lb, a, b, rank, src, xs, dst, xd, flip, margin, mat)


@wp.func
def _hull_point_distance(geo: Geometry, g: int, p: wp.vec3, lower: wp.vec4) -> wp.vec4:
    """(distance, outward unit normal) of shape-frame point p outside hull g, exact (GJK), where `lower` (the
    face-plane distance, sdf_local's) is only a lower bound; `lower` itself when GJK finds p on the hull."""
    dist, pa, pb = segment_hull_distance(geo, g, p, p)
    if dist <= 0.0:
        return lower
    n = (pa - pb) / dist
    return wp.vec4(dist, n[0], n[1], n[2])


CAPSULE_SEARCH = wp.constant(28)  # golden-section steps: the axis interval shrinks to 0.618^28 = 1.4e-6 of its length


@wp.func
def _capsule_deepest(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    a: int,
    b: int,
    rank: int,
    src: int,
    xs: wp.transform,
    dst: int,
    xd: wp.transform,
    flip: float,
    margin: float,
    mat: ContactMaterial,
) -> None:
    """The capsule axis point deepest in (or nearest to) `dst`: a box edge or a hull ridge across the capsule's
    middle lies between the axis samples, which then stay apart while the capsule sinks onto the edge (a capsule
    link crossing a box post's top edge went 2.5 cm in). The distance functions of boxes, cylinders and hulls are
    convex, so along the axis it has one minimum, found by golden-section search. A hull's distance function is
    exact only inside it: an axis that stays outside a hull gets GJK's nearest point instead."""
    h = geo.geom_size[src][1]
    r = geo.geom_size[src][0]
    inv = wp.transform_inverse(xd)
    p0 = wp.transform_point(inv, wp.transform_point(xs, wp.vec3(-h, 0.0, 0.0)))
    p1 = wp.transform_point(inv, wp.transform_point(xs, wp.vec3(h, 0.0, 0.0)))
    if geo.geom_type[dst] == GEOM_CONVEX:
        dist, pa, pb = segment_hull_distance(geo, dst, p0, p1)
        if dist > 0.0:
            axis = p1 - p0
            t_near = wp.dot(pa - p0, axis) / wp.max(wp.dot(axis, axis), 1.0e-30)
            sep_near = dist - r
            if t_near >= 0.02 and t_near <= 0.98 and sep_near < margin:  # at an end, the end samples have it
                nd = wp.transform_vector(xd, (pa - pb) / dist)
                emit(
                    cp,
                    env,
                    first,
                    la,
                    lb,
                    a,
                    b,
                    rank,
                    wp.transform_point(xd, pa) - nd * (r + 0.5 * sep_near),
                    nd * flip,
                    sep_near,
                    mat,
                )
            return
    lo = float(0.0)
    hi = float(1.0)
    g = 0.6180339887
    t1 = hi - g * (hi - lo)
    t2 = lo + g * (hi - lo)
    f1 = sdf_local(geo, dst, p0 + (p1 - p0) * t1)[0]
    f2 = sdf_local(geo, dst, p0 + (p1 - p0) * t2)[0]
    for _k in range(CAPSULE_SEARCH):
        if f1 < f2:
            hi = t2
            t2 = t1
            f2 = f1
            t1 = hi - g * (hi - lo)
            f1 = sdf_local(geo, dst, p0 + (p1 - p0) * t1)[0]
        else:
            lo = t1
            t1 = t2
            f1 = f2
            t2 = lo + g * (hi - lo)
            f2 = sdf_local(geo, dst, p0 + (p1 - p0) * t2)[0]
    t = 0.5 * (lo + hi)
    if t < 0.02 or t > 0.98:
        return  # at an end: the end samples have it
    local = p0 + (p1 - p0) * t
    dn = sdf_local(geo, dst, local)
    sep = dn[0] - r
    if sep < margin:
        nd = wp.transform_vector(xd, wp.vec3(dn[1], dn[2], dn[3]))
        point = wp.transform_point(xd, local) - nd * (r + 0.5 * sep)
        emit(cp, env, first, la, lb, a, b, rank, point, nd * flip, sep, mat)


@wp.func
def plane_cylinder(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    a: int,
    b: int,
    rank: int,
    xa: wp.transform,
    xb: wp.transform,
    margin: float,
    mat: ContactMaterial,
) -> None:
    """A cylinder on a plane: per rim, the deepest rim point and the rim points 90, 180 and 270 degrees away."""
    n = wp.transform_vector(xb, _unit_x())
    nl = wp.transform_vector(wp.transform_inverse(xa), n)
    size = geo.geom_size[a]
    down = wp.vec3(0.0, -nl[1], -nl[2])
    if wp.length(down) < 1.0e-6:
        down = wp.vec3(0.0, 1.0, 0.0)
    down = wp.normalize(down)
    side = wp.cross(_unit_x(), down)
    for rim in range(2):
        cx = float(2 * rim - 1) * size[1]
        for k in range(4):
            u = down
            if k == 1:
                u = side
            elif k == 2:
                u = -side
            elif k == 3:
                u = -down
            p = wp.transform_point(xa, wp.vec3(cx, 0.0, 0.0) + u * size[0])
            sep = wp.transform_point(wp.transform_inverse(xb), p)[0]
            if sep < margin:
                emit(cp, env, first, la, -1, a, b, rank, p - n * (0.5 * sep), n, sep, mat)


@wp.func
def samples_against_mesh(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    a: int,
    b: int,
    rank: int,
    xa: wp.transform,
    xb: wp.transform,
    margin: float,
    mat: ContactMaterial,
) -> None:
    """Samples of a against static mesh b: each sample's signed distance to the mesh's nearest triangle (its
    plane's where the sample projects inside it, else the distance to its boundary; of equally near triangles,
    the one the sample is most in front of, so a point off a convex edge is outside). Only the nearest triangle
    counts: a sample 5 cm above a 16 mm table top is 66 mm behind its bottom face, which judged alone gave a deep
    contact pushing the sample down through the top. A sample nearest an edge or corner from behind (inside a
    concave fold) is skipped: its depth has no one direction."""
    f0 = geo.geom_fstart[b]
    for k in range(sample_count(geo, a)):
        s = sample_local(geo, a, k)
        p = wp.transform_point(xa, wp.vec3(s[0], s[1], s[2]))
        pl = wp.transform_point(wp.transform_inverse(xb), p)  # mesh frame
        best = float(1.0e30)
        best_signed = float(-1.0e30)
        best_q = wp.vec4(0.0)
        best_n = wp.vec3(0.0)
        for f in range(geo.geom_fcount[b]):
            tri = geo.tris[f0 + f]
            va = geo.verts[tri[0]]
            vb = geo.verts[tri[1]]
            vc = geo.verts[tri[2]]
            nt = wp.cross(vb - va, vc - va)
            ln = wp.length(nt)
            if ln < 1.0e-12:
                continue
            nt = nt / ln
            q = closest_on_triangle(pl, va, vb, vc)
            diff = pl - wp.vec3(q[0], q[1], q[2])
            dist = wp.length(diff)
            signed = wp.dot(diff, nt)
            tie = 1.0e-6 * wp.max(1.0, dist)
            if dist < best - tie or (dist <= best + tie and signed > best_signed):
                best = wp.min(best, dist)
                best_signed = signed
                best_q = q
                best_n = nt
        if best > 1.0e29:
            continue
        qp = wp.vec3(best_q[0], best_q[1], best_q[2])
        diff = pl - qp
        sep = float(0.0)
        nl = best_n
        if best_q[3] > 0.5:
            sep = best_signed - s[3]
        else:
            if best_signed < 0.0 or best < 1.0e-9:
                continue
            sep = best - s[3]
            nl = diff / best
        if sep < margin:
            n = wp.transform_vector(xb, nl)
            emit(cp, env, first, la, -1, a, b, rank, p - n * (s[3] + 0.5 * sep), n, sep, mat)


@wp.func
def combine_materials(geo: Geometry, a: int, b: int) -> ContactMaterial:
    """The contact's material: friction by PhysX's combine mode of higher priority of the two shapes' (0 average,
    1 min, 2 multiply, 3 max: shapes.FRICTION_COMBINE_MODES), restitution averaged; the softness as MuJoCo mixes two
    geoms' (weights by solmix; solimp and a standard solref averaged, a direct solref the smaller of each), hard
    when either shape is hard; MuJoCo's larger condim (1: frictionless); all of the shape's of higher priority when
    the two differ (MuJoCo's geom priority); both links' inverse weights summed."""
    ma = geo.geom_material[a]
    mb = geo.geom_material[b]
    mode = wp.max(geo.geom_combine[a], geo.geom_combine[b])
    out = 0.5 * (ma + mb)
    if mode == 1:
        out[0] = wp.min(ma[0], mb[0])
        out[1] = wp.min(ma[1], mb[1])
    elif mode == 2:
        out[0] = ma[0] * mb[0]
        out[1] = ma[1] * mb[1]
    elif mode == 3:
        out[0] = wp.max(ma[0], mb[0])
        out[1] = wp.max(ma[1], mb[1])
    hard_a = ma[MAT_SOLREF] == 0.0 and ma[MAT_SOLREF + 1] == 0.0
    hard_b = mb[MAT_SOLREF] == 0.0 and mb[MAT_SOLREF + 1] == 0.0
    if hard_a or hard_b:
        for k in range(MAT_SOLREF, MAT_MIX):
            out[k] = 0.0
    else:
        sa = ma[MAT_MIX]
        sb = mb[MAT_MIX]
        mix = float(0.5)
        if sa >= 1.0e-15 and sb >= 1.0e-15:
            mix = sa / (sa + sb)
        elif sa < 1.0e-15 and sb >= 1.0e-15:
            mix = 0.0
        elif sa >= 1.0e-15:
            mix = 1.0
        for k in range(MAT_SOLREF, MAT_MIX):
            out[k] = mix * ma[k] + (1.0 - mix) * mb[k]
        if ma[MAT_SOLREF] <= 0.0 or mb[MAT_SOLREF] <= 0.0:  # a direct solref: the smaller of each
            out[MAT_SOLREF] = wp.min(ma[MAT_SOLREF], mb[MAT_SOLREF])
            out[MAT_SOLREF + 1] = wp.min(ma[MAT_SOLREF + 1], mb[MAT_SOLREF + 1])
    out[MAT_MIX] = 0.0
    # the pyramidal cone where either shape asks for it, else the elliptic one (-impratio) where either does
    cone = wp.max(ma[MAT_PYRAMID], mb[MAT_PYRAMID])
    if cone <= 0.0:
        cone = wp.min(ma[MAT_PYRAMID], mb[MAT_PYRAMID])
    out[MAT_PYRAMID] = cone
    out[MAT_TORSION] = wp.max(ma[MAT_TORSION], mb[MAT_TORSION])  # MuJoCo: the larger of each friction component
    # (acting where the condim below asks for it: _angular_by_condim)
    out[MAT_ROLLING] = wp.max(ma[MAT_ROLLING], mb[MAT_ROLLING])
    # MuJoCo's contact takes the larger condim of two geoms of equal priority: frictionless only when both are 1
    out[MAT_CONDIM] = wp.max(ma[MAT_CONDIM], mb[MAT_CONDIM])
    if ma[MAT_PRIORITY] != mb[MAT_PRIORITY]:  # MuJoCo: the geom of higher priority gives all the contact's
        out = ma
        if mb[MAT_PRIORITY] > ma[MAT_PRIORITY]:
            out = mb
        out[MAT_MIX] = 0.0
    if out[MAT_CONDIM] < 1.5:
        out[0] = 0.0
        out[1] = 0.0
    out[MAT_WEIGHT] = ma[MAT_WEIGHT] + mb[MAT_WEIGHT]
    return out


@wp.func
def _angular_by_condim(mat: ContactMaterial) -> ContactMaterial:
    """MuJoCo's contact dimensionality decides which friction values act: the torsional one from condim 4, the
    rolling one at 6 (a shape's values below that are latent: they count when the other shape's condim asks for
    them, as MuJoCo's contact takes the larger of each)."""
    out = mat
    if out[MAT_CONDIM] < 3.5:
        out[MAT_TORSION] = 0.0
    if out[MAT_CONDIM] < 5.5:
        out[MAT_ROLLING] = 0.0
    return out


@wp.func
def is_round(t: int) -> bool:
    return t == GEOM_SPHERE or t == GEOM_CAPSULE


@wp.func
def collide_pair(
    geo: Geometry,
    cp: ContactPoints,
    env: int,
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
    """All contacts of pair (a, b) (a a link shape) with surfaces closer than `margin`, of material `mat`."""
    ta = geo.geom_type[a]
    tb = geo.geom_type[b]
    first = cp.count[env]
    if tb == GEOM_PLANE:
        if ta == GEOM_CYLINDER:
            plane_cylinder(geo, cp, env, first, la, a, b, rank, xa, xb, margin, mat)
        else:
            samples_against(geo, cp, env, first, la, lb, a, b, rank, a, xa, b, xb, 1.0, margin, mat)
    elif tb == GEOM_TRIMESH:
        samples_against_mesh(geo, cp, env, first, la, a, b, rank, xa, xb, margin, mat)
    elif is_round(ta) and is_round(tb):
        collide_round(geo, cp, env, first, la, lb, a, b, rank, xa, xb, margin, mat)
    elif is_round(ta):
        samples_against(geo, cp, env, first, la, lb, a, b, rank, a, xa, b, xb, 1.0, margin, mat)
    elif is_round(tb):
        samples_against(geo, cp, env, first, la, lb, a, b, rank, b, xb, a, xa, -1.0, margin, mat)
    elif ta == GEOM_BOX and tb == GEOM_BOX:
        box_box(geo, cp, env, first, la, lb, a, b, rank, xa, xb, margin, mat)
    else:  # hulls, boxes and cylinders (their prisms) in any other combination
        hull_hull(geo, cp, env, first, la, lb, a, b, rank, xa, xb, margin, mat)


@wp.func
def _detect_pairs(
    geo: Geometry,
    cp: ContactPoints,
    link_pose: wp.array2d(dtype=wp.transform),
    env: int,
    speculative: int,
    tree: Tree,
    dp: DofParams,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
    sd: StepData,
    gravity: wp.vec3,
    reach_dt: float,
) -> None:
    """Every candidate pair of one env: bounding-sphere (or plane-distance) culling, then the narrow phase.
    speculative 0: only surfaces that touch (no contact offsets); reach_dt > 0: a hard contact's pair whose points
    are all apart is kept only when the step could close a gap (reach.py; 0: PhysX's, every pair)."""
    cp.count[env] = 0
    cp.overflow[env] = 0
    cp.dynamic_count[env] = 0
    # each shape's centre once, not once per pair it is in (the dm_control dog: 296 shapes, 6277 pairs), then each
    # link's, after them
    n_geoms = geo.geom_link.shape[0]
    g = int(0)
    while g < n_geoms:
        p = wp.transform_get_translation(geo.geom_pose[g])
        if geo.geom_link[g] >= 0:
            p = wp.transform_point(link_pose[env, geo.geom_link[g]], p)
        cp.geom_center[env, g] = p
        g += 1
    i = int(0)
    while i < wp.min(geo.link_center.shape[0], link_pose.shape[1]):
        cp.geom_center[env, n_geoms + i] = wp.transform_point(link_pose[env, i], geo.link_center[i])
        i += 1
    k = int(0)
    run_end = int(0)
    while k < geo.pair_count:
        if k == geo.pair_dynamic_count:
            cp.dynamic_count[env] = cp.count[env]
        if k >= run_end:
            # a run of pairs between the same two links: none touches while the links' centres are this far apart
            run_end = geo.pair_run_end[k]
            if run_end > k + 1:
                ca = cp.geom_center[env, n_geoms + geo.geom_link[geo.pair_a[k]]]
                cb = cp.geom_center[env, n_geoms + geo.geom_link[geo.pair_b[k]]]
                if wp.length(ca - cb) > geo.pair_run_reach[k]:
                    k = run_end
                    continue
        pk = k
        k += 1
        a = geo.pair_a[pk]
        b = geo.pair_b[pk]
        # the bounding spheres first, with as few loads as can be: most pairs end here (the dm dog: 3600 of them)
        cull = geo.pair_cull[pk]
        ca = cp.geom_center[env, a]
        if cull >= 0.0:
            gap = ca - cp.geom_center[env, b]
            if wp.dot(gap, gap) > cull:
                continue
        plane = int(cull < 0.0)
        la = geo.geom_link[a]
        lb = geo.geom_link[b]
        # a pair's contacts act `rest` apart (an explicit pair's own plus the shapes' rest offsets): found that much
        # farther, their separations taken from it
        rest = geo.pair_rest[pk]
        reach = geo.geom_radius[a] + geo.geom_offset[a] + geo.geom_offset[b] + wp.max(rest, 0.0)
        xb = geo.geom_pose[b]
        if lb >= 0:
            xb = link_pose[env, lb] * geo.geom_pose[b]
        if plane != 0:
            if wp.transform_point(wp.transform_inverse(xb), ca)[0] > reach:
                continue
        xa = link_pose[env, la] * geo.geom_pose[a]
        if plane == 0 and boxes_apart(geo, a, b, xa, xb, reach - geo.geom_radius[a]) != 0:
            continue  # spheres that overlap around shapes that do not (cull.py)
        margin = geo.geom_offset[a] + geo.geom_offset[b] + rest
        mat = combine_materials(geo, a, b)
        if geo.pair_own_material[pk] != 0:
            weight = mat[MAT_WEIGHT]
            mat = geo.pair_material[pk]
            mat[MAT_WEIGHT] = weight
        mat = _angular_by_condim(mat)
        if speculative == 0:
            # only surfaces that touch: a hard contact at rest sits at separation ~0, a soft one acts only while
            # the surfaces overlap (MuJoCo's contact exists only within its margin, which the shapes' growth holds)
            margin = rest
            if mat[MAT_SOLREF] == 0.0 and mat[MAT_SOLREF + 1] == 0.0:
                margin = rest + TOUCHING
        first = cp.count[env]
        before = cp.overflow[env]
        collide_pair(geo, cp, env, la, lb, a, b, geo.link_rank[la], xa, xb, margin, mat)
        # emit counts every candidate that found no slot (a hull's vertices, a capsule's samples); the pair lacks at
        # most the points its manifold could still take
        missing = MANIFOLD - (cp.count[env] - first)
        cp.overflow[env] = before + wp.min(cp.overflow[env] - before, missing)
        if rest != 0.0:
            for c in range(first, cp.count[env]):
                cp.separation[env, c] = cp.separation[env, c] - rest
        if reach_dt > 0.0 and speculative != 0 and mat[MAT_SOLREF] == 0.0 and mat[MAT_SOLREF + 1] == 0.0:
            if cp.count[env] > first:
                if within_reach(tree, dp, st, ctl, kin, sd, cp, gravity, reach_dt, env, first, la, lb) == 0:
                    cp.count[env] = first
                    cp.overflow[env] = before  # nor does it want slots
                elif lb >= 0:  # an impact passes on within the step: both links keep all their pairs (reach.py)
                    sd.link_struck[env, la] = 1
                    sd.link_struck[env, lb] = 1
    if geo.pair_dynamic_count >= geo.pair_count:
        cp.dynamic_count[env] = cp.count[env]


@wp.func
def detect_env(
    geo: Geometry,
    cp: ContactPoints,
    link_pose: wp.array2d(dtype=wp.transform),
    env: int,
    tree: Tree,
    dp: DofParams,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
    sd: StepData,
    gravity: wp.vec3,
    reach_dt: float,
) -> None:
    """The env's contacts (with reach_dt > 0 the step kernel has marked StepData.link_struck first: reach.py). When
    they do not fit the slots, detection runs again without the speculative ones (surfaces apart within the contact
    offsets), so that the slots go to the contacts that bear loads (a robot's feet on the floor, solved last, were
    the ones dropped); what still does not fit is counted in `overflow`.
    Either way the slots the first pass wanted go to `wanted` and the block's `grow` flag is raised, so that the
    host gives the next steps room (Block.plan_contact_growth)."""
    _detect_pairs(geo, cp, link_pose, env, 1, tree, dp, st, ctl, kin, sd, gravity, reach_dt)
    cp.wanted[env] = 0
    if cp.overflow[env] > 0:
        cp.wanted[env] = cp.count[env] + cp.overflow[env]
        cp.grow[0] = 1  # every writer stores the same value: no atomics needed across CPU chunks
        _detect_pairs(geo, cp, link_pose, env, 0, tree, dp, st, ctl, kin, sd, gravity, reach_dt)
    if reach_dt > 0.0:
        remember_commands(dp, st, ctl, sd, env, st.joint_q.shape[1])
