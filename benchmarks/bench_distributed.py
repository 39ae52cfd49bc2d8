"""Trials on a Ray cluster against one process and against Python's multiprocessing pool (issue 30).

The workload is a batch of independent trials, each a `map_scenes` task that builds its own scene: the shipped ant,
--envs envs with seeded random joint angles and torques, --steps steps of 0.01 s on its floor
(tests/support/distributed_tasks.py's `drop_ant`). It runs

* here, one trial after the other (`map_scenes(address=None)`, no Ray);
* on Ray clusters started on this machine (`LocalCluster`), of 1 and 2 nodes of one CPU each: each task reserves
  one CPU, and artic's launches in it use one thread;
* on `multiprocessing.Pool` with as many processes (the standard library's peer: no retries, no cluster).

Prints trials per minute, env-steps per second, the speed-up over one process, and Ray's cost per task (a task that
does nothing, its round trip averaged over 200) and per connection (`ray.init` to the running cluster). The Ray rows
leave out the cluster's start-up (the "start" column: a real cluster is started once) and the connection (one per
driver). Every row uses as many cores as its worker count (the local row one).

    python -m benchmarks.bench_distributed [--trials 8] [--envs 16] [--steps 300] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import time

import numpy as np
import ray

from artic.core.parallel import set_cpu_threads
from artic.distributed import LocalCluster, map_scenes
from tests.support.distributed_tasks import drop_ant


def _nothing(config):
    return config


def _pool_trial(config):
    set_cpu_threads(1)
    return drop_ant(config)


def _row(name, seconds, trials, env_steps, base, start=None):
    start_text = f"{start:8.1f}" if start is not None else "       -"
    print(
        f"{name:<22s} {seconds:8.2f} {start_text} {60.0 * trials / seconds:10.1f} {env_steps / seconds:12,.0f} "
        f"{base / seconds:8.2f}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    configs = [
        {"envs": args.envs, "seed": k, "spread": 0.3, "steps": args.steps, "torque": 0.1 * (k % 5 - 2)}
        for k in range(args.trials)
    ]
    env_steps = args.trials * args.envs * args.steps
    print(f"{platform.processor() or platform.machine()}, {multiprocessing.cpu_count()} cores; {time.strftime('%F')}")
    print(
        f"{args.trials} trials x {args.envs} envs x {args.steps} steps = {env_steps} env-steps (the ant on its floor)"
    )
    print(f"{'run':<22s} {'seconds':>8s} {'start':>8s} {'trials/min':>10s} {'env-steps/s':>12s} {'speed-up':>8s}")
    set_cpu_threads(1)
    drop_ant(dict(configs[0], steps=1))  # kernels loaded here before timing
    t = time.perf_counter()
    local = map_scenes(drop_ant, configs, progress=False)
    base = time.perf_counter() - t
    _row("one process", base, args.trials, env_steps, base)
    for n in args.workers:
        t = time.perf_counter()
        with LocalCluster(nodes=n, cpus_per_node=1) as cluster:
            started = time.perf_counter() - t
            t = time.perf_counter()
            ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")  # map_scenes uses it
            connect = time.perf_counter() - t
            map_scenes(drop_ant, [dict(c, steps=1) for c in configs[:n]], cluster.address, progress=False)  # warm
            t = time.perf_counter()
            remote = map_scenes(drop_ant, configs, cluster.address, progress=False)
            seconds = time.perf_counter() - t
            same = all(np.array_equal(a["q"], b["q"]) for a, b in zip(local, remote))
            _row(f"Ray, {n} node(s)" + ("" if same else " DIFFERENT"), seconds, args.trials, env_steps, base, started)
            t = time.perf_counter()
            map_scenes(_nothing, range(200), cluster.address, progress=False)
            per_task = 1e3 * (time.perf_counter() - t) / 200
            print(f"{'':22s} Ray: {per_task:.1f} ms per empty task (200 in one call), {connect:.2f} s to connect")
            ray.shutdown()
        with multiprocessing.get_context("spawn").Pool(n) as pool:
            pool.map(_pool_trial, [dict(c, steps=1) for c in configs[:n]])
            t = time.perf_counter()
            pool.map(_pool_trial, configs, chunksize=1)
            _row(f"multiprocessing, {n}", time.perf_counter() - t, args.trials, env_steps, base)


if __name__ == "__main__":
    main()
