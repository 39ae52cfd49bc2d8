"""core/host_views.py: NumPy views of CPU Warp arrays made once, and the one-reduction value check."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import warp as wp

from artic.core.host_views import finite_within, host_view


def test_a_host_view_reads_and_writes_the_array_and_is_made_once():
    """Writes through the view land in the array (a column slice and a transform array too), the same view comes
    back on the next call, and it does not keep the array alive: with garbage collection off, the array is freed
    as soon as its last reference goes (a view whose base is the array, kept on it, would form a cycle)."""
    a = wp.zeros((3, 4), dtype=float, device="cpu")
    view = host_view(a)
    view[1, 2] = 5.0
    assert a.numpy()[1, 2] == 5.0 and host_view(a) is view
    columns = a[:, 1:3]
    host_view(columns)[2, 1] = 7.0
    assert a.numpy()[2, 2] == 7.0
    poses = wp.zeros((2, 1), dtype=wp.transform, device="cpu")
    host_view(poses)[1, 0, 6] = 1.0
    assert poses.numpy()[1, 0, 6] == 1.0 and host_view(poses).shape == (2, 1, 7)
    b = wp.zeros(1000, dtype=float, device="cpu")
    host_view(b)[:] = 2.0
    gone = weakref.ref(b)
    gc.disable()
    try:
        del b
        assert gone() is None
    finally:
        gc.enable()


def test_finite_within_fails_on_nan_inf_and_magnitude():
    assert finite_within(np.zeros((1, 6)), 1e15) and finite_within(np.zeros((0, 3)), 1.0)
    assert not finite_within(np.array([[0.0, np.nan]]), 1e15)
    assert not finite_within(np.array([[np.inf]]), 1e15) and not finite_within(np.array([[np.inf]]), np.inf)
    assert not finite_within(np.array([[-2e15]]), 1e15) and finite_within(np.array([[-2e15]]), np.inf)
