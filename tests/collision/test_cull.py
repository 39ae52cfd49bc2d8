"""The oriented-box culling before the narrow phase (collision/cull.py): against an exact separating-axis test in
NumPy (float64, no tolerance) on random box pairs, and on the shapes' boxes (builders/geometry._shape_box)."""

from __future__ import annotations

import numpy as np
import warp as wp

from artic.collision.cull import boxes_apart
from artic.collision.geometry import Geometry
from artic.math.np_spatial import quat_to_matrix


@wp.kernel
def _apart_kernel(geo: Geometry, xa: wp.array(dtype=wp.transform), xb: wp.array(dtype=wp.transform),
                  pad: float, out: wp.array(dtype=int)):  # fmt: skip
    k = wp.tid()
    out[k] = boxes_apart(geo, 0, 1, xa[k], xb[k], pad)


def _random_quats(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _gap(ca, ra, ha, cb, rb, hb):
    """The largest separation of the two boxes along the 15 axes (exact, float64): > 0 iff they are apart, and then a
    lower bound of their distance."""
    axes = [ra[:, i] for i in range(3)] + [rb[:, j] for j in range(3)]
    axes += [np.cross(ra[:, i], rb[:, j]) for i in range(3) for j in range(3)]
    best = -np.inf
    for ax in axes:
        n = np.linalg.norm(ax)
        if n < 1e-9:
            continue
        ax = ax / n
        reach = np.abs(ra.T @ ax) @ ha + np.abs(rb.T @ ax) @ hb
        best = max(best, abs(ax @ (cb - ca)) - reach)
    return best


def test_boxes_apart_agrees_with_the_exact_separating_axis_test():
    """4000 random pairs of boxes (half extents 0.01-1 m, near each other, some with parallel or nearly parallel
    axes): boxes_apart says apart only where the exact test separates them by more than the pad (conservative), and
    says so wherever the exact gap exceeds the pad by 1e-3 m (it culls)."""
    rng = np.random.default_rng(3)
    n, pad = 4000, 0.02
    ha, hb = rng.uniform(0.01, 1.0, 3), rng.uniform(0.01, 1.0, 3)
    ca_local, cb_local = rng.normal(scale=0.1, size=3), rng.normal(scale=0.1, size=3)
    qa = _random_quats(rng, n)
    qb = _random_quats(rng, n)
    qb[: n // 4] = qa[: n // 4]  # parallel axes
    qb[n // 4 : n // 2] = qa[n // 4 : n // 2] + rng.normal(scale=1e-4, size=(n // 4, 4))  # nearly parallel
    qb /= np.linalg.norm(qb, axis=1, keepdims=True)
    pa = rng.normal(size=(n, 3))
    pb = pa + rng.normal(size=(n, 3)) * 0.7
    geo = Geometry()
    geo.geom_box_center = wp.array(np.array([ca_local, cb_local]), dtype=wp.vec3)
    geo.geom_box_half = wp.array(np.array([ha, hb]), dtype=wp.vec3)
    xa = wp.array(np.hstack([pa, qa]).astype(np.float32), dtype=wp.transform)
    xb = wp.array(np.hstack([pb, qb]).astype(np.float32), dtype=wp.transform)
    out = wp.zeros(n, dtype=int)
    wp.launch(_apart_kernel, n, inputs=[geo, xa, xb, pad, out])
    apart = out.numpy() != 0
    gaps = np.empty(n)
    for k in range(n):
        ra, rb = quat_to_matrix(qa[k]), quat_to_matrix(qb[k])
        gaps[k] = _gap(pa[k] + ra @ ca_local, ra, ha + pad, pb[k] + rb @ cb_local, rb, hb)
    assert not np.any(apart & (gaps <= 0.0)), gaps[apart & (gaps <= 0.0)]  # never culls boxes that may touch
    assert np.all(apart[gaps > 1e-3])  # culls the pairs apart
    assert 0.2 < apart.mean() < 0.8  # both kinds occur


def test_a_plane_has_no_box():
    """A plane's half extents are negative: boxes_apart never culls a pair with a plane (the plane test does)."""
    geo = Geometry()
    geo.geom_box_center = wp.array(np.zeros((2, 3)), dtype=wp.vec3)
    geo.geom_box_half = wp.array(np.array([[-1.0, -1.0, -1.0], [0.1, 0.1, 0.1]]), dtype=wp.vec3)
    far = np.array([[100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    near = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    out = wp.zeros(1, dtype=int)
    wp.launch(_apart_kernel, 1, inputs=[geo, wp.array(near, dtype=wp.transform), wp.array(far, dtype=wp.transform),
                                        0.0, out])  # fmt: skip
    assert out.numpy()[0] == 0
