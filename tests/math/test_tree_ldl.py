"""The tree-sparse inverse of M (math/tree_ldl.py): the sparsity it relies on is CRBA's, and it inverts M."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from artic.dynamics.crba import crba
from artic.dynamics.kinematics import forward_kinematics
from artic.math.tree_ldl import PIVOT_REL, tree_ldl_factor, tree_ldl_solve, tree_spd_inverse
from artic.sim.builders.arrays import build_data, build_state
from artic.sim.builders.model import build_model
from tests.support.models import random_rotation, random_tree


@wp.kernel
def _inverse(
    a: wp.array3d(dtype=float),
    out: wp.array3d(dtype=float),
    parent: wp.array(dtype=int),
    starts: wp.array(dtype=int),
    counts: wp.array(dtype=int),
):
    env = wp.tid()
    for t in range(starts.shape[0]):
        tree_spd_inverse(a, out, parent, env, starts[t], counts[t])


@wp.kernel
def _solve_in_place(
    a: wp.array3d(dtype=float),
    b: wp.array2d(dtype=float),
    parent: wp.array(dtype=int),
    starts: wp.array(dtype=int),
    counts: wp.array(dtype=int),
):
    env = wp.tid()
    for t in range(starts.shape[0]):
        tree_ldl_factor(a, a, parent, env, starts[t], counts[t])
        tree_ldl_solve(a, b, parent, env, starts[t], counts[t])


def _forest_mass_matrices(seed: int, envs: int = 3):
    """A forest of random trees (floating and fixed, FIX and multi-axis spherical joints among them) at random
    states: (model, M per env as CRBA computes it)."""
    rng = np.random.default_rng(seed)
    arts = [random_tree(rng, 9, floating=True), random_tree(rng, 7), random_tree(rng, 12, floating=True)]
    m = build_model(arts, "cpu")
    st = build_state(m, envs, "cpu")
    st.joint_q.assign(rng.uniform(-1.5, 1.5, st.joint_q.shape).astype(np.float32))
    poses = np.concatenate([rng.uniform(-1, 1, (envs, m.tree_count, 3)), np.zeros((envs, m.tree_count, 4))], 2)
    for e in range(envs):
        for t in range(m.tree_count):
            poses[e, t, 3:] = random_rotation(rng)
    st.root_pose.assign(poses.astype(np.float32))
    data = build_data(m, envs, "cpu")
    forward_kinematics(m, st, data)
    crba(m, data)
    return m, data.mass_matrix


def _ancestors(parent: np.ndarray, i: int) -> set[int]:
    out = set()
    while parent[i] >= 0:
        i = parent[i]
        out.add(i)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gen_parent_is_the_sparsity_of_crba(seed):
    """Identity: every entry of M off the diagonal where neither coordinate is an ancestor of the other (by
    `gen_parent`) is exactly zero, and each tree's coordinates hang from their own tree only."""
    m, mm = _forest_mass_matrices(seed)
    parent = m.gen_parent.numpy()
    starts, counts = m.tree_gen_start.numpy(), m.tree_gen_count.numpy()
    assert all(parent[i] < i for i in range(len(parent)))
    for s, c in zip(starts, counts):
        assert parent[s] == -1 and all(s <= parent[i] < s + c for i in range(s + 1, s + c) if parent[i] >= 0)
    mats = mm.numpy()
    n = m.gen_count
    related = np.eye(n, dtype=bool)
    for i in range(n):
        for j in _ancestors(parent, i):
            related[i, j] = related[j, i] = True
    assert np.all(mats[:, ~related] == 0.0)
    assert np.count_nonzero(mats[0][related]) > 0.9 * related.sum()  # the pattern is not trivially empty


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_inverse_matches_the_dense_inverse(seed):
    """Oracle: each tree's block of M^-1 from the tree-sparse factor equals NumPy's float64 inverse to float32
    precision (relative to the block's largest entry, scaled by its condition number); entries outside the trees'
    blocks are never written."""
    m, mm = _forest_mass_matrices(seed)
    out = wp.full(mm.shape, 7.0, dtype=float, device="cpu")
    wp.launch(_inverse, mm.shape[0], [mm, out, m.gen_parent, m.tree_gen_start, m.tree_gen_count], device="cpu")
    x = out.numpy()
    inside = np.zeros(x.shape[1:], dtype=bool)
    for e, a in enumerate(mm.numpy().astype(np.float64)):
        for s, c in zip(m.tree_gen_start.numpy(), m.tree_gen_count.numpy()):
            block = slice(s, s + c)
            inside[block, block] = True
            ref = np.linalg.inv(a[block, block])
            err = np.abs(x[e][block, block] - ref).max() / np.abs(ref).max()
            assert err < 1e-7 * np.linalg.cond(a[block, block]) + 1e-6, (e, s, err)
            np.testing.assert_array_equal(x[e][block, block], x[e][block, block].T)
    assert np.all(x[:, ~inside] == 7.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_in_place_factor_solves_with_the_matrix(seed):
    """Oracle: M factored in place of itself (as MuJoCo's implicit damping does with M + dt D) solves M x = b as
    NumPy's float64 solve does, per tree block, to float32 precision."""
    m, mm = _forest_mass_matrices(seed)
    a64 = mm.numpy().astype(np.float64)
    rng = np.random.default_rng(seed)
    b = rng.normal(size=(mm.shape[0], m.gen_count))
    x = wp.array(b.astype(np.float32), device="cpu")
    wp.launch(_solve_in_place, mm.shape[0], [mm, x, m.gen_parent, m.tree_gen_start, m.tree_gen_count], device="cpu")
    for e in range(mm.shape[0]):
        for s, c in zip(m.tree_gen_start.numpy(), m.tree_gen_count.numpy()):
            blk = slice(s, s + c)
            ref = np.linalg.solve(a64[e][blk, blk], b[e, blk])
            err = np.abs(x.numpy()[e, blk] - ref).max() / np.abs(ref).max()
            assert err < 1e-7 * np.linalg.cond(a64[e][blk, blk]) + 1e-6, (e, s, err)


def test_pivot_floor_keeps_a_regular_inverse_exact_and_a_singular_one_finite():
    """A well-conditioned SPD matrix (dense: the coordinates as one chain) is inverted to float32 precision (the
    floor never acts); a singular one (rank 2 of 3, and one whose rounding makes a pivot negative) gives a finite
    inverse whose null direction has a response of the order of 1 / (PIVOT_REL M_jj) instead of NaN."""
    rng = np.random.default_rng(3)
    b = rng.normal(size=(5, 5))
    good = b @ b.T + 5 * np.eye(5)
    v = np.array([[1.0, 1.0, 0.0]]) / np.sqrt(2)
    singular = np.diag([2.0, 2.0, 1.0]) - 2.0 * v.T @ v  # eigenvalues 2, 0, 1: rows 0 and 1 equal
    negative = singular.copy()
    negative[1, 1] -= 1e-6  # float32 sees a pivot below zero

    def inverse(a: np.ndarray) -> np.ndarray:
        n = a.shape[0]
        out = wp.zeros((1, n, n), dtype=float, device="cpu")
        args = [wp.array(a[None].astype(np.float32), device="cpu"), out]
        chain = wp.array(np.arange(-1, n - 1, dtype=np.int32), device="cpu")
        args += [chain, wp.array([0], dtype=wp.int32, device="cpu"), wp.array([n], dtype=wp.int32, device="cpu")]
        wp.launch(_inverse, 1, args, device="cpu")
        return out.numpy()[0].astype(np.float64)

    np.testing.assert_allclose(inverse(good) @ good, np.eye(5), atol=1e-5)
    for m in (singular, negative):
        inv = inverse(m)
        assert np.all(np.isfinite(inv))
        null = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)  # M null = 0
        assert 0.5 / PIVOT_REL < null @ inv @ null < 4.0 / PIVOT_REL
        e2 = np.array([0.0, 0.0, 1.0])  # a regular direction keeps its exact response
        assert e2 @ inv @ e2 == pytest.approx(1.0, rel=1e-6)
