"""Batched inverse-dynamics throughput: artic (all envs in one call) against Pinocchio (one call per state).

For each robot and env count it times, per env, artic's full call including the position upload, forward
kinematics and the copy back to the NumPy cache:
  CRBA   apply_cache(POSITION) + compute_mass_matrix          vs pinocchio.crba(q)
  RNEA   apply_cache(POSITION) + compute_joint_force          vs pinocchio.rnea(q, v, a)
  ABA    apply_cache(POSITION) + compute_joint_acceleration   vs pinocchio.aba(q, v, tau)
  JAC    apply_cache(POSITION) + compute_dense_jacobian       vs pinocchio.computeJointJacobians(q)
and prints microseconds per env (artic) and per call (Pinocchio), and their ratio (< 1: artic is faster).

    python -m benchmarks.bench_dynamics [--robots panda ur5] [--envs 1 64 1024 8192] [--min-time 0.3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import warp as wp

import artic
from artic import CacheFlag
from tests.support.models import ROBOTS, robot_path
from tests.support.pinocchio_oracle import pinocchio_model


def timed(fn, min_time):
    fn()  # warm-up (kernel load)
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time and n >= 3:
            return elapsed / n


def bench_artic(name, envs, min_time):
    path, floating = robot_path(name), ROBOTS[name][1]
    art = artic.load_urdf(path, fix_base=not floating)
    artic.Scene(envs).add_articulation(art)
    cache = art.create_cache()
    rng = np.random.default_rng(0)
    cache.joint_position[:] = rng.uniform(-1, 1, cache.joint_position.shape)
    cache.joint_velocity[:] = rng.uniform(-1, 1, cache.joint_velocity.shape)
    cache.joint_acceleration[:] = rng.uniform(-1, 1, cache.joint_velocity.shape)
    cache.joint_force[:] = rng.uniform(-1, 1, cache.joint_velocity.shape)

    def call(fn):
        def run():
            art.apply_cache(cache, CacheFlag.POSITION)
            fn(cache)

        return run

    return {
        k: timed(call(f), min_time) / envs * 1e6
        for k, f in [
            ("CRBA", art.compute_mass_matrix),
            ("RNEA", art.compute_joint_force),
            ("ABA", art.compute_joint_acceleration),
            ("JAC", art.compute_dense_jacobian),
        ]
    }


def bench_pinocchio(name, min_time):
    import pinocchio as pin

    path, floating = robot_path(name), ROBOTS[name][1]
    pm = pinocchio_model(path, floating)
    pd = pm.createData()
    q = pin.randomConfiguration(pm) if not floating else pin.neutral(pm)
    v = np.random.default_rng(0).uniform(-1, 1, pm.nv)
    a = np.random.default_rng(1).uniform(-1, 1, pm.nv)
    return {
        "CRBA": timed(lambda: pin.crba(pm, pd, q), min_time) * 1e6,
        "RNEA": timed(lambda: pin.rnea(pm, pd, q, v, a), min_time) * 1e6,
        "ABA": timed(lambda: pin.aba(pm, pd, q, v, a), min_time) * 1e6,
        "JAC": timed(lambda: pin.computeJointJacobians(pm, pd, q), min_time) * 1e6,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--robots", nargs="+", default=["panda", "ur5", "allegro", "solo12"])
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 64, 1024, 8192])
    parser.add_argument("--min-time", type=float, default=0.3)
    args = parser.parse_args()
    wp.config.quiet = True
    wp.init()
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, device "
        f"{wp.get_device()}, warp {wp.__version__}, {time.strftime('%Y-%m-%d')}"
    )
    print("| robot | envs | algo | artic us/env | pinocchio us/call | ratio |")
    print("|---|---:|---|---:|---:|---:|")
    for name in args.robots:
        ref = bench_pinocchio(name, args.min_time)
        for envs in args.envs:
            res = bench_artic(name, envs, args.min_time)
            for k in ("CRBA", "RNEA", "ABA", "JAC"):
                print(f"| {name} | {envs} | {k} | {res[k]:.3f} | {ref[k]:.3f} | {res[k] / ref[k]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
