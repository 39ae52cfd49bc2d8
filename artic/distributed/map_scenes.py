"""`map_scenes`: a user function over many configurations, each in its own Ray task, results in input order.

Each call ``fn(config)`` builds and steps its own scene (batching envs inside it as it likes) and returns something
picklable. With ``address=None`` the calls run one after the other in this process, without Ray: the reference a
cluster's results can be compared with, and the same code path for a laptop. With an address they run as Ray tasks:

* ``"local"`` starts a Ray cluster on this machine for the call (stopped after it); ``"auto"``, ``"host:port"`` or
  ``"ray://host:port"`` joins a running cluster (``ray start --head`` on one machine, ``ray start --address`` on the
  others); an already initialised Ray session is used as it is.
* A task whose worker process or node dies is run again by Ray (``max_retries`` times; Ray's own task retries), so
  a lost worker costs time, not results. A task whose function raises is not retried: its exception comes back with
  the index and the configuration that raised it (`TaskFailure`). Nothing is skipped: after every task has ended,
  ``errors="raise"`` raises `MapError` (an ArticError that names each failed configuration and carries the results
  of the others), ``errors="return"`` puts the `TaskFailure` in the failed slot of the returned list.
* Determinism: a task runs the same artic code on the same inputs as the local call, so a deterministic `fn` (artic's
  CPU step is) gives bitwise the same results on a cluster as with ``address=None``.

The workers need artic (and the module that defines `fn`, unless it is defined in the calling script, which Ray
ships by value) importable: install artic on every node, or pass Ray's ``runtime_env`` (e.g.
``{"working_dir": ".", "pip": ["artic"]}``). docs/distributed.md has the details.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from ..core.parallel import set_cpu_threads
from ..errors import ArticError, ValidationError

__all__ = ["MapError", "TaskFailure", "map_scenes"]

_PROGRESS_EVERY = 2.0  # [s] between progress lines


class TaskFailure(ArticError):
    """One configuration whose task did not return: `index` in the input, `config`, `error` (the exception the
    function raised, or Ray's error when the task could not be completed even after its retries) and `trace`, the
    traceback text where the function raised."""

    def __init__(self, index: int, config: Any, error: BaseException, trace: str = ""):
        self.index, self.config, self.error, self.trace = index, config, error, trace
        super().__init__(f"config {index} ({_short(config)}): {type(error).__name__}: {error}")

    def __reduce__(self):  # picklable with its fields (Exception's default would pass only the message)
        return (TaskFailure, (self.index, self.config, self.error, self.trace))


class MapError(ArticError):
    """Some tasks of a `map_scenes` call failed: `failures` (TaskFailure, in input order) and `results` (the
    input-ordered list, None where a task failed)."""

    def __init__(self, failures: list[TaskFailure], results: list):
        self.failures, self.results = failures, results
        shown = "\n  ".join(str(f) for f in failures[:5])
        more = f"\n  ... and {len(failures) - 5} more" if len(failures) > 5 else ""
        super().__init__(
            f"map_scenes: {len(failures)} of {len(results)} tasks failed (the others' results are in .results):"
            f"\n  {shown}{more}"
        )


def map_scenes(
    fn: Callable[[Any], Any],
    configs: Iterable,
    address: str | None = None,
    *,
    max_retries: int = 3,
    num_cpus: float = 1.0,
    errors: str = "raise",
    progress: bool = True,
    runtime_env: dict | None = None,
) -> list:
    """[fn(c) for c in configs], each call a Ray task on the cluster at `address` (None: here, without Ray);
    results in input order. `max_retries`: reruns of a task whose worker died; `num_cpus`: the CPUs a task reserves
    (and the threads artic's CPU launches use in it); `errors`: "raise" (MapError after all tasks ended) or "return"
    (TaskFailure in the failed slots); `progress`: a line on stderr every few seconds; `runtime_env`: Ray's, for
    the workers' code and packages. See the module docstring."""
    if not callable(fn):
        raise ValidationError(f"map_scenes: fn must be callable, got {fn!r}")
    try:
        configs = list(configs)
    except TypeError:
        raise ValidationError(f"map_scenes: configs must be an iterable of configurations, got {configs!r}") from None
    if errors not in ("raise", "return"):
        raise ValidationError(f"map_scenes: errors must be 'raise' or 'return', got {errors!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValidationError(f"map_scenes: max_retries must be a non-negative integer, got {max_retries!r}")
    if not isinstance(num_cpus, (int, float)) or not num_cpus > 0:
        raise ValidationError(f"map_scenes: num_cpus must be a positive number, got {num_cpus!r}")
    if address is not None and not isinstance(address, str):
        raise ValidationError(f"map_scenes: address must be None, 'local', 'auto' or 'host:port', got {address!r}")
    meter = _Progress(len(configs), progress)
    if address is None:
        outcomes = []
        for index, config in enumerate(configs):
            outcomes.append(_call(fn, index, config))
            meter.update(len(outcomes), sum(isinstance(o, TaskFailure) for o in outcomes))
    else:
        outcomes = _on_ray(fn, configs, address, max_retries, num_cpus, runtime_env, meter)
    meter.done()
    failures = [o for o in outcomes if isinstance(o, TaskFailure)]
    if failures and errors == "raise":
        raise MapError(failures, [None if isinstance(o, TaskFailure) else o for o in outcomes])
    return outcomes


def _call(fn, index, config):
    """fn(config), or the TaskFailure of what it raised (here and inside a Ray task alike)."""
    try:
        return fn(config)
    except Exception as e:
        return TaskFailure(index, config, e, traceback.format_exc())


def _task(fn, index, config, threads):
    """A Ray task: artic's CPU launches use the CPUs the task reserved (not every core of the node, which the node's
    other tasks share), then fn(config) as `_call`."""
    set_cpu_threads(threads)
    return _call(fn, index, config)


def _on_ray(fn, configs, address, max_retries, num_cpus, runtime_env, meter):
    ray = _import_ray()
    started = _connect(ray, address, runtime_env)
    try:
        task = ray.remote(_task).options(max_retries=max_retries, retry_exceptions=False, num_cpus=num_cpus)
        fn_ref = ray.put(fn)  # shipped once, not with every task
        threads = max(1, int(num_cpus))
        refs = [task.remote(fn_ref, index, config, threads) for index, config in enumerate(configs)]
        slot = {ref: k for k, ref in enumerate(refs)}
        outcomes: list = [None] * len(refs)
        pending, finished, failed = list(refs), 0, 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=_PROGRESS_EVERY)
            for ref in ready:
                k = slot[ref]
                try:
                    outcomes[k] = ray.get(ref)
                except Exception as e:  # the task could not be completed: its worker or node died past the retries
                    outcomes[k] = TaskFailure(k, configs[k], e)
                finished += 1
                failed += isinstance(outcomes[k], TaskFailure)
            meter.update(finished, failed)
        return outcomes
    finally:
        if started:
            ray.shutdown()


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ArticError(
            "map_scenes: an address needs Ray, which is not installed; pip install 'artic[ray]' "
            "(or give address=None to run here without it)"
        ) from None
    return ray


def _connect(ray, address, runtime_env) -> bool:
    """Join (or, for 'local', start) the cluster; True when this call started Ray and must stop it."""
    if ray.is_initialized():
        return False
    options = {"runtime_env": runtime_env} if runtime_env else {}
    try:
        if address == "local":
            # address "local": a new cluster even when one started by `ray start` runs here (None would join it)
            ray.init(address="local", include_dashboard=False, log_to_driver=False, logging_level="WARNING", **options)
        else:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING", **options)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ArticError(
            f"map_scenes: cannot reach a Ray cluster at {address!r} ({e}); start one with `ray start --head` and give "
            "its address, or 'local' for one on this machine"
        ) from None
    return True


def _short(config, limit: int = 120) -> str:
    text = repr(config)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Progress:
    """'map_scenes: k/n tasks done (f failed)' on stderr, at most every few seconds and once at the end."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.last, self.line = total, enabled and total > 0, time.monotonic(), None

    def update(self, finished, failed):
        self.line = f"map_scenes: {finished}/{self.total} tasks done" + (f" ({failed} failed)" if failed else "")
        if self.enabled and time.monotonic() - self.last >= _PROGRESS_EVERY:
            self.last = time.monotonic()
            print(self.line, file=sys.stderr, flush=True)

    def done(self):
        if self.enabled and self.line is not None:
            print(self.line, file=sys.stderr, flush=True)
