"""A controller's loop at one env, artic against MuJoCo in the same run: write the controls, step, read the state.

`bench_robots` times the step alone, its controls set once. A controller or a learning loop also writes its
controls and reads the state back at every step, and at one env that Python is part of what it pays. Per scene
(bench_robots' MJCF scenes, as shipped), with new random controls within the ctrlranges at every step:

  artic:  MjcfControl.set(ctrl); Scene.step(dt); MjcfModel.get_qpos(scene) and the first articulation's
          joint and root velocities through its cache (copy_internal_state_to_cache)
  MuJoCo: data.ctrl[:] = ctrl; mj_step; data.qpos.copy(), data.qvel.copy()

and prints microseconds per loop for each, the share of artic's loop spent outside Scene.step, and the ratio.
Both on one CPU thread.

    python -m benchmarks.bench_loop [--steps 300] [--warmup 20] [--scenes "gym half_cheetah" ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np

import artic
from artic.core.parallel import set_cpu_threads
from benchmarks.bench_robots import _scenes

_VELOCITIES = artic.CacheFlag.VELOCITY | artic.CacheFlag.ROOT_VELOCITIES


def _controls(low: np.ndarray, high: np.ndarray, steps: int) -> np.ndarray:
    """(steps, nu) random controls within [low, high] (unbounded columns within +-1)."""
    rng = np.random.default_rng(0)
    lo = np.where(np.isfinite(low), low, -1.0)
    hi = np.where(np.isfinite(high), high, 1.0)
    return rng.uniform(lo, hi, (steps, len(lo)))


def _artic(path, steps: int, warmup: int) -> tuple[float, float]:
    """(us per loop, us of it in Scene.step)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    art = model.articulations[0]
    cache = art.create_cache()
    u = _controls(control.low, control.high, steps + warmup)[:, None, :]
    dt = model.timestep
    stepping = 0.0
    for k in range(steps + warmup):
        if k == warmup:
            start, stepping = time.perf_counter(), 0.0
        control.set(u[k])
        t = time.perf_counter()
        scene.step(dt)
        stepping += time.perf_counter() - t
        model.get_qpos(scene)
        art.copy_internal_state_to_cache(cache, _VELOCITIES)
    total = time.perf_counter() - start
    return 1e6 * total / steps, 1e6 * stepping / steps


def _mujoco(path, steps: int, warmup: int) -> float:
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    low, high = m.actuator_ctrlrange[:, 0].copy(), m.actuator_ctrlrange[:, 1].copy()
    unlimited = m.actuator_ctrllimited == 0
    low[unlimited], high[unlimited] = -np.inf, np.inf
    u = _controls(low, high, steps + warmup)
    for k in range(steps + warmup):
        if k == warmup:
            start = time.perf_counter()
        d.ctrl[:] = u[k]
        mujoco.mj_step(m, d)
        d.qpos.copy()
        d.qvel.copy()
    return 1e6 * (time.perf_counter() - start) / steps


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--scenes", nargs="*", default=None, help="bench_robots' names (default: all)")
    args = ap.parse_args(argv)
    set_cpu_threads(1)
    scenes = _scenes()
    print(f"{platform.machine()}, {os.cpu_count()} cores, one env, one thread, {args.steps} loops after {args.warmup}")
    print(f"{'scene':22s} {'artic us':>9s} {'of it step':>11s} {'MuJoCo us':>10s} {'ratio':>7s}")
    ratios = []
    for name in args.scenes or list(scenes):
        try:
            mj_us = _mujoco(scenes[name], args.steps, args.warmup)
            us, step_us = _artic(scenes[name], args.steps, args.warmup)
        except Exception as e:  # a row that says why
            print(f"{name:22s} {type(e).__name__}: {str(e)[:200]}")
            continue
        ratios.append(us / mj_us)
        print(f"{name:22s} {us:9.1f} {step_us:11.1f} {mj_us:10.1f} {us / mj_us:6.2f}x")
    if ratios:
        print(f"median {np.median(ratios):.2f}x, worst {max(ratios):.2f}x MuJoCo over {len(ratios)} scenes")


if __name__ == "__main__":
    main()
