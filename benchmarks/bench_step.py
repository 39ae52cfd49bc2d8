"""Simulation step throughput: artic (all envs in one launch) against PhysX 5.3 through SAPIEN (one CPU scene per
env) and, if installed (`pip install newton`), Newton's Featherstone solver (its own PD, no implicit drives), on
panda, ur5 and the allegro hand with PD drives, PGS (4, 1), dt = 1/120, collisions off. Prints microseconds per
env-step and the ratios (< 1: artic is faster).

SAPIEN scenes are stepped one after another; its per-env cost is measured on min(envs, --physx-max-scenes) scenes
(it grows linearly with the count). Pass --solver tgs for TGS.

    python -m benchmarks.bench_step [--robots panda ur5 allegro] [--envs 1 64 1024 8192] [--steps 100]

With --status-cost it measures instead what the step's per-env non-finite state check (artic/sim/status.py) costs:
artic's step with the check and without it, alternated --repeats times on the same scene, best of each.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
import warp as wp

import artic
from artic import CacheFlag, Drive, DriveType, SolverType
from tests.support.models import robot_path
from tests.support.physx_oracle import _strip_urdf, physx_robot

DT = 1.0 / 120.0
KP, KD = 400.0, 40.0


def bench_artic(name, envs, steps, solver):
    scene = _artic_scene(name, envs, solver)
    scene.step(DT)  # compile / record
    wp.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        scene.step(DT)
    wp.synchronize()
    return (time.perf_counter() - start) / steps / envs * 1e6


def _artic_scene(name, envs, solver, sleep=True):
    art = artic.load_urdf(robot_path(name))
    if not sleep:
        art.sleep_threshold = 0.0  # every env stays awake however long the drives have held their targets
    for dof in art.dof_names:
        j = art.get_joint(dof)
        j.set_drive_params(j.dof_axes()[0], Drive(KP, KD, 1e6, DriveType.FORCE))
    scene = artic.Scene(envs, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_target_positions[:] = np.random.default_rng(0).uniform(-0.5, 0.5, cache.joint_target_positions.shape)
    art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    return scene


def bench_status_cost(name, envs, steps, solver, repeats):
    """(us/env-step with the check, without it): the best of `repeats` alternated runs on one scene."""
    scene = _artic_scene(name, envs, solver, sleep=False)
    best = {True: np.inf, False: np.inf}
    for _ in range(repeats):
        for check in (True, False):
            artic.sim.status.CHECK_STATE = check  # read when the step's launch is recorded (one per setting)
            scene.step(DT)
            wp.synchronize()
            start = time.perf_counter()
            for _ in range(steps):
                scene.step(DT)
            wp.synchronize()
            best[check] = min(best[check], (time.perf_counter() - start) / steps / envs * 1e6)
    artic.sim.status.CHECK_STATE = True
    return best[True], best[False]


def bench_physx(name, envs, steps, solver):
    path = _strip_urdf(robot_path(name))
    scenes = []
    for _ in range(envs):
        scene, robot = physx_robot(path, solver, DT, (0.0, 0.0, -9.81))
        targets = np.random.default_rng(0).uniform(-0.5, 0.5, robot.dof)
        for j, t in zip(robot.active_joints, targets, strict=True):
            j.set_drive_properties(KP, KD, 1e6, "force")
            j.set_drive_target(t)
        scenes.append(scene)
    for s in scenes:
        s.step()
    start = time.perf_counter()
    for _ in range(steps):
        for s in scenes:
            s.step()
    return (time.perf_counter() - start) / steps / envs * 1e6


def bench_newton(name, envs, steps):
    """Newton's SolverFeatherstone on `envs` copies of the robot (None if Newton is not installed). Newton has no
    implicit PhysX drives: the joints carry its own PD targets with the same gains; collisions are left out."""
    try:
        import newton
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = newton.ModelBuilder()
        robot.add_urdf(_strip_urdf(robot_path(name)), floating=False, hide_visuals=True)
        for k in range(len(robot.joint_target_ke)):
            robot.joint_target_ke[k] = KP
            robot.joint_target_kd[k] = KD
        builder = newton.ModelBuilder()
        for _ in range(envs):
            builder.add_builder(robot)
        model = builder.finalize()
        solver = newton.solvers.SolverFeatherstone(model)
        s0, s1, control = model.state(), model.state(), model.control()
        solver.step(s0, s1, control, None, DT)  # compile
        wp.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            solver.step(s0, s1, control, None, DT)
            s0, s1 = s1, s0
        wp.synchronize()
    return (time.perf_counter() - start) / steps / envs * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--robots", nargs="+", default=["panda", "ur5", "allegro"])
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 64, 1024, 8192])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--physx-max-scenes", type=int, default=64)
    parser.add_argument("--solver", choices=("pgs", "tgs"), default="pgs")
    parser.add_argument("--no-newton", dest="newton", action="store_false", help="skip Newton even if installed")
    parser.add_argument("--status-cost", action="store_true", help="measure the non-finite state check's cost")
    parser.add_argument("--repeats", type=int, default=7, help="alternations for --status-cost")
    args = parser.parse_args()
    solver = SolverType.TGS if args.solver == "tgs" else SolverType.PGS
    wp.config.quiet = True
    wp.init()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, warp {wp.__version__} on {wp.get_device()}, "
        f"{solver.name} (4, 1), dt 1/120, {time.strftime('%Y-%m-%d')}"
    )
    if args.status_cost:
        print("| robot | envs | with check us/env-step | without | cost |")
        print("|---|---:|---:|---:|---:|")
        for name in args.robots:
            for envs in args.envs:
                steps = max(5, min(20 * args.steps, int(args.steps * 64 / envs)))
                on, off = bench_status_cost(name, envs, steps, solver, args.repeats)
                print(f"| {name} | {envs} | {on:.2f} | {off:.2f} | {100 * (on / off - 1):+.1f} % |", flush=True)
        return
    print("| robot | envs | artic us/env-step | PhysX us/env-step | artic/PhysX | Newton us/env-step | artic/Newton |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.robots:
        physx = {}
        for envs in args.envs:
            n_px = min(envs, args.physx_max_scenes)
            if n_px not in physx:
                physx[n_px] = bench_physx(name, n_px, max(10, int(20 * args.steps / n_px)), solver)
            # enough steps that small env counts are not dominated by timer and cache noise
            steps = max(5, min(20 * args.steps, int(args.steps * 64 / envs)))
            a = bench_artic(name, envs, steps, solver)
            p = physx[n_px]
            nw = bench_newton(name, envs, steps) if args.newton else None
            nw_cols = f"{nw:.2f} | {a / nw:.2f}" if nw else "- | -"
            print(f"| {name} | {envs} | {a:.2f} | {p:.2f} | {a / p:.2f} | {nw_cols} |", flush=True)


if __name__ == "__main__":
    main()
