"""Launching a per-env kernel over all envs: one launch on a GPU, env chunks on all CPU cores.

Warp runs a CPU kernel serially over its launch dimension in the calling thread and releases the GIL while it runs,
so disjoint env ranges launched from a thread pool run in parallel (measured 1.7x on 2 cores). Every per-env kernel
takes `env_offset` as its first argument and computes env = env_offset + tid; because a thread only touches its own
env's data (docs/design.md), any chunking gives identical results.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import warp as wp

from ..errors import ValidationError

MAX_THREADS = 1024  # more threads than this only add pool overhead on any CPU there is
MIN_CHUNK = 64  # envs per chunk below which threading costs more than it saves
_threads = max(1, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None


def set_cpu_threads(n: int) -> None:
    """Threads used for CPU launches (default: the machine's core count; 1 disables threading)."""
    global _threads, _pool
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_THREADS:
        raise ValidationError(
            f"set_cpu_threads: the thread count must be an integer from 1 to {MAX_THREADS}, got {n!r}"
        )
    _threads = int(n)
    if _pool is not None:
        _pool.shutdown(wait=True)
        _pool = None


def get_cpu_threads() -> int:
    """Threads used for CPU launches (set_cpu_threads; default: the machine's core count)."""
    return _threads


def _chunks(num_envs: int, device) -> list[tuple[int, int]]:
    if not wp.get_device(device).is_cpu or _threads == 1 or num_envs < 2 * MIN_CHUNK:
        return [(0, num_envs)]
    n = min(_threads, num_envs // MIN_CHUNK)
    size = -(-num_envs // n)
    return [(k, min(size, num_envs - k)) for k in range(0, num_envs, size)]


def _run(tasks):
    global _pool
    if len(tasks) == 1:
        tasks[0]()
        return
    if _pool is None:
        _pool = ThreadPoolExecutor(_threads, thread_name_prefix="artic")
    for f in [_pool.submit(t) for t in tasks]:
        f.result()


def launch_envs(kernel: wp.Kernel, num_envs: int, inputs: list, device: wp.Device | str | None) -> None:
    """Launch kernel(env_offset, *inputs) over every env."""
    _run(
        [
            lambda off=off, n=n: wp.launch(kernel, dim=n, inputs=[off, *inputs], device=device)
            for off, n in _chunks(num_envs, device)
        ]
    )


class RecordedEnvLaunch:
    """A per-env launch recorded once (one command per chunk) and replayed on every call.

    On the CPU, Warp's replay of a recorded launch still marshals every argument into a fresh ctypes structure on
    every call (its `invoke`: one setattr per argument, ~0.2 us each, about half of a 1-env step of a small robot).
    The arguments of a recorded launch do not change, so each command's structure is built once here and the
    compiled kernel called with it directly (`_PackedCpuLaunch`). Where Warp's internals are not the ones this
    relies on, the command is replayed the ordinary way."""

    def __init__(self, kernel: wp.Kernel, num_envs: int, inputs: list, device: wp.Device | str | None):
        self._cmds = [
            wp.launch(kernel, dim=n, inputs=[off, *inputs], device=device, record_cmd=True)
            for off, n in _chunks(num_envs, device)
        ]
        self._calls = [replay(cmd) for cmd in self._cmds]
        self._single = None  # one chunk, once its packed call exists: called straight (~0.2 us of Python less)

    def launch(self) -> None:
        if self._single is not None:
            self._single()
            return
        _run(self._calls)
        if len(self._calls) == 1:
            self._single = getattr(self._calls[0], "packed", None)


def replay(cmd: wp.Launch) -> Callable[[], None]:
    """A call that replays `cmd` (a recorded wp.Launch) with its arguments marshalled once, or cmd.launch."""
    try:
        return _PackedCpuLaunch(cmd)
    except (TypeError, AttributeError):  # a GPU or block launch, or Warp's internals elsewhere: Warp's own replay
        return cmd.launch


class _PackedCpuLaunch:
    """Warp's CPU `invoke` fast path with its ctypes argument structure built once (the recorded launch's
    arguments are fixed): the kernel's forward entry point called with the same bounds and arguments."""

    def __init__(self, cmd):
        if not cmd.device.is_cpu or cmd.adjoint or getattr(cmd, "block_dim", 1) > 1 or not callable(cmd.hooks.forward):
            raise TypeError("not a plain CPU launch")
        self._cmd = cmd  # keeps the arrays and the module alive
        self._call = self._first
        self.packed: Callable[[], None] | None = None  # the kernel called with the packed arguments, once built

    def __call__(self) -> None:
        self._call()

    def _first(self) -> None:
        """The first replay goes through Warp (which checks it and caches the kernel's argument structure type);
        later ones reuse one structure of the same arguments."""
        import ctypes

        cmd = self._cmd
        cmd.launch()
        try:
            cached = cmd.kernel._invoke_cache[(tuple(type(p) for p in cmd.params[1:]), False)]
            args = cached[0]()
            for i, field in enumerate(cached[1]):
                setattr(args, field[0], cmd.params[1 + i])
        except (AttributeError, KeyError, IndexError, TypeError):
            self._call = cmd.launch  # Warp keeps its cache elsewhere: its own replay from now on
            return
        forward, bounds, ref = cmd.hooks.forward, ctypes.byref(cmd.params[0]), ctypes.byref(args)
        self._args = args  # the structure must outlive its byref

        def packed() -> None:
            forward(bounds, ref)

        self._call = self.packed = packed
