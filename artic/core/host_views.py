"""The host's side of the per-step Python: NumPy views of device arrays made once, and the one-reduction check of
values written into them.

A controller that writes its actuators' columns at every step and reads the state back (MjcfControl, a Gymnasium
loop) touches a handful of small arrays per step. Warp's `array.numpy()` builds a new NumPy view of a CPU array on
every call (~1.8 us), and NumPy's checks of a (1, 6) array cost a microsecond per ufunc: at one env they made up
most of such a loop's time (the Gymnasium half-cheetah's ctrl write 40 us against a 16 us step; measured
2026-11-29).
"""

from __future__ import annotations

import ctypes

import numpy as np
import warp as wp


def host_view(array: wp.array) -> np.ndarray:
    """`array`'s memory as NumPy sees it: on the CPU a view made once per array (kept on it: the memory of a Warp
    array never moves) that reads and writes the array itself, to be used at once and not kept (it does not keep
    the array alive); on a GPU a fresh copy (written back by the caller with `array.assign`, as before)."""
    if not array.device.is_cpu:
        return array.numpy()
    view = getattr(array, "_artic_host_view", None)
    if view is None:
        view = array.numpy()  # its base is the array: kept on the array as is, the two would form a cycle
        if view.size == 0:
            return view
        extent = sum((n - 1) * s for n, s in zip(view.shape, view.strides)) + view.itemsize
        memory = (ctypes.c_byte * extent).from_address(view.ctypes.data)
        view = np.ndarray(view.shape, view.dtype, buffer=memory, strides=view.strides)
        array._artic_host_view = view
    return view


def finite_within(values: np.ndarray, limit: float) -> bool:
    """Every value finite and at most `limit` in magnitude (np.inf: finite), in one reduction (NaN fails the
    comparison)."""
    if values.size == 0:
        return True
    top = np.abs(values).max()
    return bool(top < limit) if limit == np.inf else bool(top <= limit)
