"""Culling before the narrow phase (collision/narrow.py): oriented bounding boxes.

A pair that passes the bounding-sphere test may still be far apart: the spheres of long or flat shapes (a robot
arm's link meshes, a table top) overlap wherever the shapes come within their longest extent, and the narrow phase
of two hulls is a full separating-axis test over their faces and edges (hull_hull.py). Each shape but a plane
carries a box in its own frame (Geometry.geom_box_center, geom_box_half: the hull's or mesh's vertex bounds, a
primitive's extent); two boxes that a separating axis keeps more than the pair's contact margin apart hold no
contact. The test is Gottschalk's 15-axis separating-axis test for oriented boxes (the three face normals of each
and their nine cross products), with a small tolerance added to the rotation terms so that near-parallel edges do
not make a false separating axis out of a degenerate cross product."""

from __future__ import annotations

import warp as wp

from .geometry import Geometry

PARALLEL_EPS = wp.constant(1.0e-5)  # added to |R_ij|: cross products of near-parallel axes are not trusted


@wp.func
def boxes_apart(geo: Geometry, a: int, b: int, xa: wp.transform, xb: wp.transform, pad: float) -> int:
    """1 if shape a's box, grown by `pad` [m] (the pair's contact margin), and shape b's box (in their world poses
    xa, xb) have a separating axis; 0 if they may touch, or if either has no box (a plane)."""
    ha = geo.geom_box_half[a] + wp.vec3(pad)
    hb = geo.geom_box_half[b]
    if geo.geom_box_half[a][0] < 0.0 or hb[0] < 0.0:
        return 0
    qa = wp.transform_get_rotation(xa)
    qb = wp.transform_get_rotation(xb)
    ca = wp.transform_point(xa, geo.geom_box_center[a])
    cb = wp.transform_point(xb, geo.geom_box_center[b])
    ra = wp.quat_to_matrix(qa)
    rb = wp.quat_to_matrix(qb)
    r = wp.transpose(ra) * rb  # b's axes in a's frame
    t = wp.transpose(ra) * (cb - ca)  # b's centre in a's frame
    abs_r = wp.mat33(0.0)
    for i in range(3):
        for j in range(3):
            abs_r[i, j] = wp.abs(r[i, j]) + PARALLEL_EPS
    for i in range(3):  # a's face normals
        if wp.abs(t[i]) > ha[i] + hb[0] * abs_r[i, 0] + hb[1] * abs_r[i, 1] + hb[2] * abs_r[i, 2]:
            return 1
    for j in range(3):  # b's face normals
        proj = t[0] * r[0, j] + t[1] * r[1, j] + t[2] * r[2, j]
        if wp.abs(proj) > ha[0] * abs_r[0, j] + ha[1] * abs_r[1, j] + ha[2] * abs_r[2, j] + hb[j]:
            return 1
    for i in range(3):  # a's axis i x b's axis j
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            reach_a = ha[i1] * abs_r[i2, j] + ha[i2] * abs_r[i1, j]
            reach_b = hb[j1] * abs_r[i, j2] + hb[j2] * abs_r[i, j1]
            if wp.abs(t[i2] * r[i1, j] - t[i1] * r[i2, j]) > reach_a + reach_b:
                return 1
    return 0
