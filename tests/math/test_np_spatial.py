"""The batched host helpers of artic/math/np_spatial.py against their one-at-a-time or NumPy counterparts."""

from __future__ import annotations

import numpy as np

from artic.math.np_spatial import cross3, quat_to_matrix, quats_rotate, quats_to_matrices


def test_cross3_is_numpys_cross():
    a, b = np.random.default_rng(1).normal(size=(2, 4, 7, 3))
    np.testing.assert_allclose(cross3(a, b), np.cross(a, b), rtol=0, atol=1e-15)


def test_batched_rotations_are_the_single_ones():
    rng = np.random.default_rng(2)
    q = rng.normal(size=(6, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    v = rng.normal(size=(6, 3))
    mats = quats_to_matrices(q)
    for k in range(6):
        np.testing.assert_allclose(mats[k], quat_to_matrix(q[k]), atol=1e-15)
        np.testing.assert_allclose(quats_rotate(q[k], v[k]), quat_to_matrix(q[k]) @ v[k], atol=1e-14)
