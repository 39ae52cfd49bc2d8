"""Memory checks before a scene allocates its per-env arrays.

A scene's arrays grow linearly with the number of envs. Asking Warp for more than the device has fails inside its
allocator (or, on a CPU with overcommit, gets the process killed while the arrays are zeroed), so the scene estimates
what an articulation, and then a block's first step, will need before building them and refuses with the figures.
The byte counts are builders/arrays.py's, next to the allocations they count; this module compares them with what
the device has and turns Warp's own allocation failures into ArticErrors.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import warp as wp

from ..errors import ValidationError

_GIB = float(1 << 30)
MAX_ENVS = (1 << 31) - 1  # Warp array dimensions are signed 32-bit


def available_bytes(device: wp.Device | str | None) -> tuple[int, str]:
    """(bytes the device can still give, how that was measured)."""
    device = wp.get_device(device)
    if device.is_cuda:
        free = getattr(device, "free_memory", None)
        return (int(free), "free GPU memory") if free else (int(device.total_memory), "GPU memory")
    try:  # Linux: what can be allocated without swapping, page cache included
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available memory"
    except OSError:
        pass
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "physical memory"


def check_fits(
    owner: str, num_envs: int, per_env: int, device: wp.Device | str | None, what: str, other_fix: str = ""
) -> None:
    """Refuse (ValidationError) when num_envs * per_env bytes exceed what the device has; `other_fix` names a way out
    besides fewer envs."""
    need = num_envs * per_env
    have, kind = available_bytes(device)
    if need > have:
        fit = max(0, have // max(per_env, 1))
        raise ValidationError(
            f"{owner}: {what} in {num_envs} envs needs at least {need / _GIB:.1f} GiB "
            f"({per_env} bytes per env) but the device '{wp.get_device(device)}' has "
            f"{have / _GIB:.1f} GiB of {kind}; use at most about {fit} envs"
            + (f", or {other_fix}" if other_fix else "")
        )


@contextlib.contextmanager
def allocation_errors(owner: str, num_envs: int) -> Iterator[None]:
    """Turn Warp's allocation failures (out of memory, dimensions past 32 bits) into a ValidationError."""
    try:
        yield
    except (RuntimeError, ValueError) as e:
        text = str(e)
        if "allocate" not in text and "must not exceed" not in text:
            raise
        raise ValidationError(
            f"{owner}: the arrays for {num_envs} envs could not be allocated ({text}); use fewer envs"
        ) from None
