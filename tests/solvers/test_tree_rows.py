"""The direct solver's rows through the tree factor (artic/solvers/tree_rows.py) against NumPy's dense algebra on
branching trees: u_i . u_j = g_i (M + D)^-1 g_j, each u zero off its row's pattern (its columns and their
ancestors), the velocity L^-1 D^-1/2 sum x_i u_i = (M + D)^-1 G^T x, the full solve, a kinematic tree's zero
response; and the module compiles for CUDA through NVRTC (GPU-only compile errors on the CPU-only CI)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import artic
from artic import Box, SolverType, Transform
from artic.core.model import Tree
from artic.solvers.tree_rows import factor_blocks, from_roots, row_u, solve_factored
from tests.support.models import random_tree
from tests.support.nvrtc import ptx_files


@wp.kernel
def _rows_kernel(
    tree: Tree,
    mass_matrix: wp.array3d(dtype=float),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    nf: int,
    factor: wp.array3d(dtype=wp.float64),
    g: wp.array3d(dtype=float),
    u: wp.array3d(dtype=wp.float64),
    nz: wp.array3d(dtype=int),
    nnz: wp.array2d(dtype=int),
    w: wp.array2d(dtype=wp.float64),
    b: wp.array2d(dtype=wp.float64),
    m: int,
    n_gen: int,
):
    env = wp.tid()
    factor_blocks(tree, mass_matrix, fold_col, fold_row, nf, factor, env)
    for i in range(m):
        nnz[env, i] = row_u(tree, factor, g, u, nz, env, i, n_gen)
    from_roots(tree, factor, w, env, n_gen)
    solve_factored(tree, factor, b, env, n_gen)


def _scene(kinematic: bool):
    """A random floating tree joined by a distance joint to a box (kinematic or not) in one block of two trees,
    stepped once so that M is filled."""
    rng = np.random.default_rng(7)
    scene = artic.Scene(1, solver_type=SolverType.DIRECT)
    art = random_tree(rng, n_links=9, floating=True, kinds=("revolute", "prismatic"))
    box = artic.RigidDynamic(Transform((0.0, 0.0, 2.0)), "box")
    box.attach_shape(Box((0.1, 0.1, 0.1), collision_group=0, collision_mask=0))
    box.update_mass_and_inertia(1000.0)
    box.kinematic = kinematic
    scene.add_articulation(art)
    scene.add_actor(box)
    scene.add_joint(artic.DistanceJoint.from_body_frames(art.get_links()[0], Transform(), box, Transform()))
    scene.step(1e-3)
    block = scene.view(art).block
    assert block.model.tree_count == 2 and block.model.tree.tree_kinematic.numpy()[1] == int(kinematic)
    return rng, block


@pytest.mark.parametrize("kinematic", [False, True])
def test_rows_through_the_factor_match_dense_algebra(kinematic):
    rng, block = _scene(kinematic)
    tree, sd = block.model.tree, block.step_data
    n = block.model.gen_count
    m = 12
    g = np.zeros((1, m, n), np.float32)
    for i in range(m):  # each row on a few random columns, some across both trees
        cols = rng.choice(n, size=rng.integers(1, 4), replace=False)
        g[0, i, cols] = rng.normal(size=len(cols))
    folded = np.array([[1, 4, n - 2]], np.int32)  # springs on three columns (D), one twice
    fold_row = np.zeros((1, 3, 5), np.float32)
    fold_row[0, :, 2] = (0.01, 0.2, 0.05)
    x = rng.normal(size=m)
    b = rng.normal(size=(1, n))
    arrays = {
        "factor": wp.zeros((1, n, n), dtype=wp.float64),
        "u": wp.zeros((1, m, n), dtype=wp.float64),
        "nz": wp.zeros((1, m, n), dtype=wp.int32),
        "nnz": wp.zeros((1, m), dtype=wp.int32),
    }
    u0 = None
    w = wp.array(np.zeros((1, n)), dtype=wp.float64)
    for pass_ in range(2):  # the second pass needs the first's u: w = sum x_i u_i
        if pass_ == 1:
            w = wp.array((x @ u0)[None, :], dtype=wp.float64)
        bw = wp.array(b, dtype=wp.float64)
        wp.launch(
            _rows_kernel,
            dim=1,
            inputs=[
                tree, sd.mass_matrix, wp.array(folded), wp.array(fold_row), 3, arrays["factor"], wp.array(g),
                arrays["u"], arrays["nz"], arrays["nnz"], w, bw, m, n,
            ],
        )  # fmt: skip
        u0 = arrays["u"].numpy()[0]
    mass = sd.mass_matrix.numpy()[0].astype(np.float64)
    d = np.zeros(n)
    for c, cfm in zip(folded[0], fold_row[0, :, 2], strict=True):
        d[c] += 1.0 / np.float64(cfm)
    inv = np.linalg.inv(mass + np.diag(d))
    assert np.linalg.cond(mass + np.diag(d)) < 1e9
    if kinematic:  # the kinematic tree's block of the inverse is zero (its rows see no response there)
        start, count = tree.tree_gen_start.numpy()[1], tree.tree_gen_count.numpy()[1]
        inv[start : start + count, :] = 0.0
        inv[:, start : start + count] = 0.0
    gd = g[0].astype(np.float64)
    a_dense = gd @ inv @ gd.T
    scale = np.abs(a_dense).max()
    # float64 both ways; the random tree's M has a condition number ~1e8, so agreement is to ~1e-8 of A's scale
    np.testing.assert_allclose(u0 @ u0.T, a_dense, rtol=1e-7, atol=1e-8 * scale)
    # each u is zero off its pattern, which holds the row's columns and lies within their ancestors
    parent = tree.gen_parent.numpy()
    nz, nnz = arrays["nz"].numpy()[0], arrays["nnz"].numpy()[0]
    for i in range(m):
        expected = set()
        for c in np.flatnonzero(g[0, i]):
            while c >= 0 and c not in expected:
                expected.add(int(c))
                c = parent[c]
        pattern = nz[i, : nnz[i]].tolist()
        assert pattern == sorted(pattern) and set(pattern) <= expected  # (an ancestor whose entry cancels drops out)
        assert set(np.flatnonzero(g[0, i]).tolist()) <= set(pattern)
        off = np.ones(n, bool)
        off[nz[i, : nnz[i]]] = False
        assert np.all(u0[i, off] == 0.0)
    np.testing.assert_allclose(w.numpy()[0], inv @ gd.T @ x, rtol=1e-7, atol=1e-8 * np.abs(inv @ gd.T @ x).max())
    np.testing.assert_allclose(bw.numpy()[0], inv @ b[0], rtol=1e-7, atol=1e-8 * np.abs(inv @ b[0]).max())


def test_tree_rows_compile_for_cuda(tmp_path):
    """This module's kernel, which calls every function of solvers/tree_rows.py, compiles to CUDA PTX for sm_90
    through NVRTC, without a GPU."""
    assert ptx_files(__name__, tmp_path)
