"""The row products of math/dense.py against NumPy."""

from __future__ import annotations

import numpy as np
import warp as wp

from artic.math.dense import add_row, row_dot, rows_dot, solve_row, zero_row


@wp.kernel
def _products(
    minv: wp.array3d(dtype=float),
    g: wp.array3d(dtype=float),
    v: wp.array2d(dtype=float),
    minv_g: wp.array3d(dtype=float),
    resp: wp.array2d(dtype=float),
    dots: wp.array2d(dtype=float),
    cross: wp.array2d(dtype=float),
):
    e = wp.tid()
    for r in range(g.shape[1]):
        resp[e, r] = solve_row(minv, g, minv_g, e, r, g.shape[2])
        dots[e, r] = row_dot(g, v, e, r, g.shape[2])
    for r in range(g.shape[1]):
        cross[e, r] = rows_dot(g, r, minv_g, g.shape[1] - 1 - r, e, g.shape[2])
    add_row(v, minv_g, e, g.shape[1] - 1, g.shape[2], 0.5)
    zero_row(g, e, 3, g.shape[2])


def test_row_products_match_numpy():
    """solve_row (M^-1 g skipping g's zeros, two columns a pass: rows with no nonzero, one at the first or last
    index, an odd and an even count), its response g^T M^-1 g, row_dot and rows_dot (lengths not a multiple of four)
    and add_row equal NumPy's float64 products to float32 precision; zero_row clears one row only."""
    rng = np.random.default_rng(0)
    for n in (1, 6, 13):
        a = rng.normal(size=(2, n, n))
        m = a @ a.transpose(0, 2, 1) + np.eye(n)
        g = rng.normal(size=(2, 7, n))
        g[rng.random(g.shape) < 0.5] = 0.0
        g[:, 0] = 0.0
        g[:, 1] = 0.0
        g[:, 1, n - 1] = 1.5
        g[:, 2] = 0.0
        g[:, 2, 0] = -2.0
        v = rng.normal(size=(2, n))
        arrays = [wp.array(x.astype(np.float32), device="cpu") for x in (m, g, v)]
        minv_g = wp.zeros(g.shape, dtype=float, device="cpu")
        resp = wp.zeros(g.shape[:2], dtype=float, device="cpu")
        dots = wp.zeros(g.shape[:2], dtype=float, device="cpu")
        cross = wp.zeros(g.shape[:2], dtype=float, device="cpu")
        wp.launch(_products, 2, [*arrays, minv_g, resp, dots, cross], device="cpu")
        ref = np.einsum("eij,erj->eri", m, g)
        scale = np.abs(ref).max()
        np.testing.assert_allclose(minv_g.numpy(), ref, atol=1e-5 * scale)
        np.testing.assert_allclose(resp.numpy(), np.einsum("eri,eri->er", g, ref), atol=1e-5 * scale**2 + 1e-6)
        np.testing.assert_allclose(dots.numpy(), np.einsum("eri,ei->er", g, v), atol=1e-5 * np.abs(g).max() * n)
        np.testing.assert_allclose(arrays[2].numpy(), v + 0.5 * ref[:, -1], atol=1e-5 * scale)
        cross_ref = np.einsum("eri,eri->er", g, ref[:, ::-1])
        np.testing.assert_allclose(cross.numpy(), cross_ref, atol=1e-5 * scale * np.abs(g).max() * n)
        cleared = arrays[1].numpy()
        assert np.all(cleared[:, 3] == 0.0)
        np.testing.assert_array_equal(np.delete(cleared, 3, axis=1), np.delete(g, 3, axis=1).astype(np.float32))
