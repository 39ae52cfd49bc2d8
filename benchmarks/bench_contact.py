"""Contact-rich step throughput: artic against MuJoCo on the same MJCF files (Gymnasium's ant and humanoid,
shipped in artic/assets/mjcf), dropped from their MJCF poses onto the floor, zero controls, each file's own time
step. artic runs all envs in one launch (PGS, PhysX's default 4/1 iterations); MuJoCo steps one MjData per env
after another on one thread (its per-env cost does not depend on the env count; measured on min(envs,
--mujoco-max-envs) envs). Prints microseconds per env-step and the ratio (< 1: artic is faster).

PhysX through SAPIEN is not in this benchmark: SAPIEN 3.0 has no MJCF loader, and the allegro-on-a-table scene the
issue names is not built yet (docs/benchmarks.md).

    python benchmarks/bench_contact.py [--models ant humanoid] [--envs 1 64 1024] [--steps 200]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import warp as wp

import artic
from artic import SolverType

ASSETS = Path(artic.__file__).parent / "assets" / "mjcf"


def bench_artic(name, envs, steps, solver, warmup):
    model = artic.load_mjcf(ASSETS / f"{name}.xml")
    scene = artic.Scene(envs, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    model.articulations[0].sleep_threshold = 0.0  # measure the solver, not sleeping envs
    for _ in range(warmup):  # compile, record, and land on the floor
        scene.step(model.timestep)
    wp.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        scene.step(model.timestep)
    wp.synchronize()
    contacts = scene.get_contacts(model.articulations[0]).count.mean()
    return (time.perf_counter() - start) / steps / envs * 1e6, contacts


def bench_mujoco(name, envs, steps, warmup):
    import mujoco

    mm = mujoco.MjModel.from_xml_path(str(ASSETS / f"{name}.xml"))
    datas = [mujoco.MjData(mm) for _ in range(envs)]
    for d in datas:
        for _ in range(warmup):
            mujoco.mj_step(mm, d)
    start = time.perf_counter()
    for d in datas:
        for _ in range(steps):
            mujoco.mj_step(mm, d)
    return (time.perf_counter() - start) / steps / envs * 1e6, sum(d.ncon for d in datas) / envs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["ant", "humanoid"])
    p.add_argument("--envs", nargs="+", type=int, default=[1, 64, 1024])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--mujoco-max-envs", type=int, default=16)
    p.add_argument("--solver", choices=("pgs", "tgs"), default="pgs")
    p.add_argument("--threads", type=int, default=None, help="artic CPU threads (default: all cores)")
    args = p.parse_args()
    if args.threads:
        artic.set_cpu_threads(args.threads)
    solver = SolverType.TGS if args.solver == "tgs" else SolverType.PGS
    print(f"{platform.processor() or platform.machine()}, {artic.get_cpu_threads()} artic thread(s), "
          f"device {wp.get_device()}, {solver.name}")
    print(f"{'model':<10s}{'envs':>6s}{'artic us/env-step':>20s}{'contacts':>10s}{'MuJoCo us/step':>16s}"
          f"{'contacts':>10s}{'ratio':>8s}")
    for name in args.models:
        for envs in args.envs:
            a, ca = bench_artic(name, envs, args.steps, solver, args.warmup)
            m, cm = bench_mujoco(name, min(envs, args.mujoco_max_envs), args.steps, args.warmup)
            print(f"{name:<10s}{envs:>6d}{a:>20.1f}{ca:>10.1f}{m:>16.1f}{cm:>10.1f}{a / m:>8.2f}")


if __name__ == "__main__":
    main()
