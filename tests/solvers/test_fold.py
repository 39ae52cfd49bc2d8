"""Rows folded into the mass matrix (artic/solvers/fold.py) against NumPy: which rows fold, what stays in the row
form and in which order, (M + D)^-1 and the velocity with the folded rows alone, the folded impulses and their box
check; and the module compiles for CUDA through NVRTC (GPU-only compile errors on the CPU-only CI)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from artic import SolverType
from artic.constraints.row_form import SRC_DOF, SRC_DOF_HIGH, SRC_DOF_VISCOUS, RowForm
from artic.core.model import Tree
from artic.solvers.fold import fold_exceeded, fold_rows, fold_velocity
from tests.support.direct_scenes import panda
from tests.support.models import robot_path
from tests.support.nvrtc import ptx_files


@wp.kernel
def _fold_kernel(
    tree: Tree,
    mass_matrix: wp.array3d(dtype=float),
    rf: RowForm,
    v_star: wp.array2d(dtype=float),
    v: wp.array2d(dtype=float),
    fold_src: wp.array2d(dtype=int),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    fold_count: wp.array(dtype=int),
    factor: wp.array3d(dtype=wp.float64),
    fold_x: wp.array2d(dtype=wp.float64),
    scratch: wp.array2d(dtype=wp.float64),
    v_free: wp.array2d(dtype=wp.float64),
    exceeded: wp.array(dtype=int),
    n_gen: int,
    position: int,
):
    env = wp.tid()
    fold_rows(tree, mass_matrix, rf, fold_src, fold_col, fold_row, fold_count, factor, env, n_gen, 1)
    fold_velocity(tree, v_star, fold_col, fold_row, fold_count, factor, scratch, v_free, env, n_gen, position)
    exceeded[env] = fold_exceeded(v, fold_col, fold_row, fold_count, fold_x, env, position)


# rows on the panda's 9 dofs: (kind, column or -1 for a two-dof row, target, velocity-pass target, cfm, lo, hi)
ROWS = [
    (SRC_DOF, 2, 1.5, 1.5, 0.01, -50.0, 50.0),  # a drive: folded
    (SRC_DOF_HIGH, 3, 0.2, 0.0, 0.0, -np.inf, 0.0),  # a hard limit: stays
    (SRC_DOF_VISCOUS, 2, 0.0, 0.0, 0.1, -np.inf, np.inf),  # a damper on the drive's dof: folded
    (SRC_DOF, -1, 0.3, 0.3, 0.05, -np.inf, np.inf),  # compliant, but on two dofs: stays
    (SRC_DOF, 5, -0.4, -0.4, 0.02, 0.0, np.inf),  # compliant but one-sided: stays
    (SRC_DOF, 6, 0.7, 0.0, 0.03, -np.inf, np.inf),  # its compliance differs between the passes below: stays
    (SRC_DOF, 0, -2.0, -2.0, 0.005, -1e30, 1e30),  # folded
]


def _setup():
    scene = panda(SolverType.DIRECT, (4, 1), robot_path("panda"))[1]
    scene.step(1.0 / 120.0)  # allocates the direct arrays and fills M and M^-1
    block = scene._blocks[0]
    rf, da = block.direct
    n = block.model.gen_count
    m = rf.cfm.shape[1]
    g = np.zeros((1, m, n), np.float32)
    fields = {k: np.zeros((1, m), np.float32) for k in ("target", "target_vel", "cfm", "cfm_vel", "lo", "hi")}
    kind = np.zeros((1, m), np.int32)
    for i, (k, col, t, tv, c, lo, hi) in enumerate(ROWS):
        if col >= 0:
            g[0, i, col] = 1.0
        else:
            g[0, i, 1], g[0, i, 4] = 1.0, -0.5
        kind[0, i] = k
        for name, value in zip(fields, (t, tv, c, c, lo, hi), strict=True):
            fields[name][0, i] = value
    fields["cfm_vel"][0, 5] = 0.0
    rf.g.assign(g)
    for name, value in fields.items():
        getattr(rf, name).assign(value)
    rf.source_kind.assign(kind)
    rf.source_index.assign(np.arange(m, dtype=np.int32)[None, :])
    rf.count.assign(np.array([len(ROWS)], np.int32))
    return block, rf, da, n


@pytest.mark.parametrize("position", [1, 0])
def test_fold_matches_numpy(position):
    """Rows 0, 2 and 6 (two-sided, compliant, on one dof, the same compliance in both passes) are folded, the rest
    keep their order; the factor L^T D L is that of M + D with D = sum 1 / cfm on each folded dof (1e-10
    relative), the velocity with the folded rows alone is v* + (M + D)^-1 (r - D v*) for the pass's targets, and a
    folded impulse (t - v_k) / cfm outside its box is flagged."""
    block, rf, da, n = _setup()
    sd = block.step_data
    rng = np.random.default_rng(3)
    v_star = rng.uniform(-1.0, 1.0, (1, n)).astype(np.float32)
    v = rng.uniform(-1.0, 1.0, (1, n)).astype(np.float32)
    v[0, 2] = 1.5 - 0.01 * 60.0  # the drive's impulse (t - v) / cfm = 60, beyond its box of 50
    exceeded = wp.zeros(1, dtype=wp.int32)
    wp.launch(
        _fold_kernel,
        dim=1,
        inputs=[
            block.model.tree, sd.mass_matrix, rf, wp.array(v_star), wp.array(v), da.fold_src, da.fold_col,
            da.fold_row, da.fold_count, da.factor64, da.fold_x, da.fold_scratch, da.v_free, exceeded, n, position,
        ],
    )  # fmt: skip
    assert da.fold_count.numpy()[0] == 3 and rf.count.numpy()[0] == 4
    kept = [ROWS[i] for i in (1, 3, 4, 5)]
    np.testing.assert_array_equal(rf.source_kind.numpy()[0, :4], [r[0] for r in kept])
    np.testing.assert_array_equal(rf.source_index.numpy()[0, :4], [1, 3, 4, 5])
    assert rf.g.numpy()[0, 1, 4] == -0.5 and rf.target.numpy()[0, 3] == pytest.approx(0.7)
    np.testing.assert_array_equal(da.fold_col.numpy()[0, :3], [2, 2, 0])
    mass = sd.mass_matrix.numpy()[0].astype(np.float64)
    d = np.zeros(n)
    r = np.zeros(n)
    for i in (0, 2, 6):
        _, col, t, tv, c, _, _ = ROWS[i]
        d[col] += 1.0 / np.float64(np.float32(c))
        r[col] += np.float64(np.float32(t if position else tv)) / np.float64(np.float32(c))
    inv = np.linalg.inv(mass + np.diag(d))
    # the factor (solvers/tree_rows.py): L_ki at [i, k] for i an ancestor of k, D^-1/2 on the diagonal
    fac = da.factor64.numpy()[0]
    parent = block.model.tree.gen_parent.numpy()
    lower = np.eye(n)
    for k in range(n):
        i = parent[k]
        while i >= 0:
            lower[k, i] = fac[i, k]
            i = parent[i]
    rebuilt = lower.T @ np.diag(1.0 / np.diag(fac) ** 2) @ lower
    np.testing.assert_allclose(rebuilt, mass + np.diag(d), rtol=1e-10, atol=1e-12 * np.abs(mass).max())
    vs = v_star[0].astype(np.float64)
    np.testing.assert_allclose(da.v_free.numpy()[0], vs + inv @ (r - d * vs), rtol=1e-9, atol=1e-12)
    x = [
        (np.float32(ROWS[i][2 if position else 3]) - np.float64(v[0, ROWS[i][1]])) / np.float32(ROWS[i][4])
        for i in (0, 2, 6)
    ]
    np.testing.assert_allclose(da.fold_x.numpy()[0, :3], x, rtol=1e-6)
    assert exceeded.numpy()[0] == 1


def test_fold_compiles_for_cuda(tmp_path):
    """This module's kernel, which calls every function of solvers/fold.py, compiles to CUDA PTX for sm_90 through
    NVRTC, without a GPU."""
    assert ptx_files(__name__, tmp_path)
