"""Where a step's time goes, by stage of the pipeline: the step kernel's launch stopped after each stage in turn
(`step_kernel.STAGES`: kinematics, collide, dynamics, mass matrix, row setup, solve, integrate, report), timed
interleaved one launch at a time, each stage's cost the difference from the one before; the launch alone and the
rest of `Scene.step` (Python, the host checks) beside them.

The stops are compiled in (`step_kernel._make_step`: tested at run time they slowed every step), so each prefix is a
kernel of its own, and the compiler inlines each a little differently: the split between two neighbouring stages
moves by a few microseconds (the dm dog's integrate and report: 2.6 and 10.8 us with the stops tested at run time,
11.4 and 0 compiled in), the sums over several stages do not.

Every timed launch starts from the same saved state (a step stopped before "integrate" writes nothing back to it
anyway, but under TGS, whose substeps integrate), so each stop steps the same motion. The direct solver keeps what
it learnt about the rows between steps (free_factor.FactorMemo), as in a real run of steps.

    python -m benchmarks.profile_stages "dm dog" [--envs 1] [--solver file] [--rounds 300]
    python -m benchmarks.profile_stages --all      # every bench_robots scene, one line each

Scenes: as benchmarks/profile_step.py (bench_robots' MJCF scenes by name, bench_solvers' scenes).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import warp as wp

from benchmarks.profile_step import _scene


def stage_times(
    name: str, envs: int = 1, solver: str = "file", rounds: int = 300, warmup: int = 20
) -> dict[str, float]:
    """Microseconds per step of each stage (and "launch", "host" and "step") of scene `name`: the median over
    `rounds` interleaved rounds, each stop timed once per round from the same saved state."""
    import artic
    from artic.sim.step_kernel import STAGE_NONE, STAGES, record_step

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene, dt = _scene(name, envs, solver)
        for _ in range(warmup):
            scene.step(dt)
    stops = [STAGE_NONE, *range(len(STAGES))]
    launches = []
    for block in scene._blocks:
        ((key_dt, kind, mode, _),) = block._launches.keys()  # the one launch the warm-up recorded
        kind = artic.SolverType(kind)
        direct = block._direct_arrays() if kind == artic.SolverType.DIRECT else block._no_direct
        launches.append([record_step(block, key_dt, kind, mode, direct, stop_after=k) for k in stops])
    saved = [_state_arrays(block) for block in scene._blocks]
    start = [{k: wp.clone(a) for k, a in arrays.items()} for arrays in saved]

    def restore() -> None:
        for arrays, copies in zip(saved, start):
            for k, a in arrays.items():
                wp.copy(a, copies[k])

    samples = {k: [] for k in [*stops, "step"]}
    for _ in range(rounds):
        for i, k in enumerate(stops):
            restore()
            t = time.perf_counter()
            for per_block in launches:
                per_block[i].launch()
            samples[k].append((time.perf_counter() - t) * 1e6)
        restore()
        t = time.perf_counter()
        scene.step(dt)
        samples["step"].append((time.perf_counter() - t) * 1e6)
    med = {k: statistics.median(v) for k, v in samples.items()}
    out = {"launch": med[STAGE_NONE]}
    for i, stage in enumerate(STAGES):
        out[stage] = max(med[i] - med[stops[i]], 0.0)
    out["host"] = max(med["step"] - med[len(STAGES) - 1], 0.0)
    out["step"] = med["step"]
    return out


def _state_arrays(block) -> dict:
    """The Warp arrays of a block's state (sim/block.py), by field name."""
    return {k: a for k, a in vars(block.state).items() if isinstance(a, wp.array)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("scene", nargs="?")
    p.add_argument("--all", action="store_true", help="every bench_robots scene")
    p.add_argument("--envs", type=int, default=1)
    p.add_argument("--solver", default="file", choices=("file", "PGS", "TGS", "DIRECT"), help="file: an MJCF's own")
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20, help="steps before the profile (300: most robots at rest)")
    args = p.parse_args()
    if args.all:
        from benchmarks import bench_robots

        names = list(bench_robots._scenes())
    elif args.scene:
        names = [args.scene]
    else:
        p.error("a scene name, or --all")
    rows = [(n, stage_times(n, args.envs, args.solver, args.rounds, args.warmup)) for n in names]
    cols = list(rows[0][1])
    print(
        f"us per step ({args.envs} env(s), solver {args.solver}, after {args.warmup} steps); each stage's share of the "
        "step in parentheses"
    )
    print("| scene | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for n, t in rows:
        cells = [f"{t[c]:.1f}" + ("" if c == "step" else f" ({100 * t[c] / t['step']:.0f}%)") for c in cols]
        print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
