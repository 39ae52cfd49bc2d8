"""Real robot scenes as shipped, artic against MuJoCo in the same run: cost per step at one env (or per env-step at
--envs envs), contacts and solver iterations beside it.

The scenes are MJCF files from the package registry, loaded as they are (a scene file with its included robot,
floor and objects): Gymnasium's MuJoCo robots, dm_control's suite, Gymnasium-Robotics' Fetch, Shadow hand and
Adroit scenes, and myo_sim's elbow and legs (54 muscles) where its models are at hand (run the muscle tests once to
fetch them). Each is stepped from its initial state with zero controls, --steps steps at the file's time step,
after --warmup steps (kernels compiled, contacts made). artic loads it with `load_mjcf` defaults (MuJoCo's soft
constraints, `MjcfControl` with zero ctrl) and the file's solver (`model.solver_type`: DIRECT for MuJoCo's Newton and
CG, with --solver PGS the file's iterations as PGS position iterations); MuJoCo steps its own
`MjData` (`mj_step`). Both on one CPU thread at one env; with --envs N artic steps N envs on every core (its CPU
launches split envs into chunks from 128 envs) and its time is per env-step, against MuJoCo's single-thread step:
artic uses more cores than its peer there. A scene artic refuses, or that goes non-finite, is a row saying so.

Prints per scene: microseconds per step for both and their ratio, artic's contacts (reported points, speculative
ones included) and MuJoCo's `ncon`, artic's solver, its position iterations and the sweeps its PGS ran per step
(fewer where it stopped early, docs/solvers.md "Early stop"; 0 under DIRECT) and MuJoCo's `solver_niter`; then the
median and the worst ratio.

    python -m benchmarks.bench_robots [--steps 100] [--warmup 20] [--solver file|PGS|DIRECT] [--iterations 4]
        [--tolerance 0] [--scenes ...] [--envs 1024]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

import artic
from artic.core.parallel import set_cpu_threads


def _scenes() -> dict[str, Path]:
    import dm_control.suite
    import gymnasium
    import gymnasium_robotics

    gym = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
    suite = Path(dm_control.suite.__file__).parent
    robotics = Path(gymnasium_robotics.__file__).parent / "envs" / "assets"
    return {
        "gym ant": gym / "ant.xml",
        "gym humanoid": gym / "humanoid.xml",
        "gym half_cheetah": gym / "half_cheetah.xml",
        "gym hopper": gym / "hopper.xml",
        "gym walker2d": gym / "walker2d_v5.xml",
        "gym pusher": gym / "pusher_v5.xml",
        "dm cheetah": suite / "cheetah.xml",
        "dm quadruped": suite / "quadruped.xml",
        "dm humanoid": suite / "humanoid.xml",
        "dm finger": suite / "finger.xml",
        "dm manipulator": suite / "manipulator.xml",
        "dm stacker": suite / "stacker.xml",  # boxes on boxes under MuJoCo's elliptic cone (constraints/elliptic.py)
        "dm dog": suite / "dog.xml",
        "fetch pick_and_place": robotics / "fetch" / "pick_and_place.xml",
        "shadow hand block": robotics / "hand" / "manipulate_block.xml",
        "adroit pen": robotics / "adroit_hand" / "adroit_pen.xml",
        "adroit door": robotics / "adroit_hand" / "adroit_door.xml",
        **_myo_scenes(),
    }


def _myo_scenes() -> dict[str, Path]:
    """myo_sim's musculoskeletal models (myosuite's; muscles on wrapping spatial tendons), where the tests' wheel
    cache or an installed myo_sim has them (myosuite pins an older gymnasium, so it is not a dependency)."""
    import importlib.util

    spec = importlib.util.find_spec("myo_sim")
    root = Path(spec.submodule_search_locations[0]) if spec and spec.submodule_search_locations else None
    if root is None:
        root = Path.home() / ".cache" / "artic-test-models" / "myo_sim-0.2.3" / "myo_sim"  # tests/support/wheels.py
    legacy = root / "models" / "legacy"
    scenes = {
        "myo elbow": legacy / "elbow" / "myoelbow_2dof6muscles.xml",
        "myo legs": legacy / "osl" / "myolegs_osl.xml",
    }
    return {k: p for k, p in scenes.items() if p.is_file()}


def _artic(
    path: Path,
    steps: int,
    warmup: int,
    iterations: int | None,
    tolerance: float | None,
    solver: str = "file",
    envs: int = 1,
) -> tuple[float, float, int, float, str]:
    """(us per env-step, env 0's contacts, position iterations, mean sweeps run per step, solver) of artic on the
    scene stepped in `envs` envs, with
    `iterations` position iterations and `tolerance` as Articulation.solver_tolerance instead of the file's where
    given, and `solver` ("file": model.solver_type), or raise. The sweeps are counted in untimed steps after the
    timed ones (PGS's early stop runs fewer than the iterations)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    if iterations:
        for art in model.articulations:
            art.set_solver_iteration_counts(iterations, 1)
    if tolerance is not None:
        for art in model.articulations:
            art.solver_tolerance = tolerance
    kind = model.solver_type if solver == "file" else artic.SolverType[solver]
    scene = artic.Scene(envs, gravity=model.gravity, solver_type=kind)
    model.add_to(scene)
    if model.actuators:
        control = artic.MjcfControl(model, scene)
        control.set(np.zeros((envs, len(model.actuators))))
    dt = model.timestep
    for _ in range(warmup):
        scene.step(dt)
    contacts = []
    start = time.perf_counter()
    for _ in range(steps):
        scene.step(dt)
    seconds = time.perf_counter() - start
    if scene.env_status.any():
        raise FloatingPointError("the state went non-finite")
    for art in model.articulations:  # a contact between two articulations counts for both
        contacts.append(int(scene.get_contacts(art).count[0]))
    iterations = max(a.get_solver_iteration_counts()[0] for a in model.articulations)
    sweeps = []
    for _ in range(min(steps, 20)):
        scene.step(dt)
        sweeps.append(max(int(scene.get_solver_iterations(a)[0]) for a in model.articulations))
    return 1e6 * seconds / steps / envs, float(sum(contacts)), iterations, float(np.mean(sweeps)), kind.name


def _mujoco(path: Path, steps: int, warmup: int) -> tuple[float, float, float]:
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    for _ in range(warmup):
        mujoco.mj_step(m, d)
    ncon, niter = [], []
    start = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(m, d)
    seconds = time.perf_counter() - start
    ncon.append(d.ncon)
    niter.append(int(d.solver_niter[0]))
    return 1e6 * seconds / steps, float(np.mean(ncon)), float(np.mean(niter))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--scenes", nargs="*", default=None, help="names from the list (default: all)")
    ap.add_argument("--envs", type=int, default=1, help="artic's envs (every core from 128; MuJoCo: one)")
    ap.add_argument("--solver", default="file", choices=("file", "PGS", "DIRECT"), help="artic's (file: the file's)")
    ap.add_argument("--iterations", type=int, default=None, help="artic's position iterations (default: the file's)")
    ap.add_argument(
        "--tolerance", type=float, default=None, help="artic's PGS early stop [m/s] (default: load_mjcf's; 0: none)"
    )
    args = ap.parse_args(argv)
    set_cpu_threads(1 if args.envs == 1 else os.cpu_count())
    scenes = _scenes()
    chosen = args.scenes or list(scenes)
    where = "1 env" if args.envs == 1 else f"artic {args.envs} envs on {os.cpu_count()} threads, per env-step"
    print(f"{platform.machine()}, {os.cpu_count()} cores, {where}, {args.steps} steps after {args.warmup}")
    print(
        f"{'scene':22s} {'artic us':>9s} {'MuJoCo us':>10s} {'ratio':>7s} {'contacts':>9s} {'ncon':>5s} "
        f"{'solver':>7s} {'iters':>6s} {'sweeps':>7s} {'niter':>6s}"
    )
    ratios = []
    for name in chosen:
        path = scenes[name]
        try:
            mj_us, ncon, niter = _mujoco(path, args.steps, args.warmup)
        except Exception as e:  # a row that says why
            print(f"{name:22s} MuJoCo could not run it: {e}")
            continue
        try:
            us, contacts, iterations, sweeps, solver = _artic(
                path, args.steps, args.warmup, args.iterations, args.tolerance, args.solver, args.envs
            )
        except Exception as e:  # a row that says why
            print(f"{name:22s} artic: {type(e).__name__}: {str(e)[:300]}")
            continue
        finally:
            gc.collect()  # the last scene's arrays (reference cycles) before the next one's memory check
        ratios.append(us / mj_us)
        print(
            f"{name:22s} {us:9.1f} {mj_us:10.1f} {us / mj_us:6.2f}x {contacts:9.0f} {ncon:5.0f} {solver:>7s} "
            f"{iterations:6d} {sweeps:7.1f} {niter:6.0f}"
        )
    if ratios:
        print(f"median {np.median(ratios):.2f}x, worst {max(ratios):.2f}x MuJoCo over {len(ratios)} scenes")


if __name__ == "__main__":
    main()
