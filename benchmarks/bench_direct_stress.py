"""The direct solver on the scenes that make pivoting solvers fall over, beside PGS and TGS in the same run: what each
costs, whether it holds, how often DIRECT hands a step to PGS and how much energy a conservative loop keeps.

Scenes (PGS and TGS at PhysX's default 4 position / 1 velocity iterations; sleeping off):
* stack: twenty 0.2 m boxes on the ground, alternating 1 kg and 1000 kg (tests/support/degenerate.box_stack),
  dt 1/60, 5 s. Held: the top box's drop from its rest height [mm].
* pair: a 1e6 kg box on a 1 kg box on the ground, dt 1/60, 5 s. Held: the top box's drop [mm].
* chain: six bodies alternating 1 kg and 1e6 kg hanging on ball joints (tests/support/direct_scenes.ball_chain),
  dt 1/60, 5 s. Held: the largest joint error |C| over the run [mm].
* four_bar: the over-constrained four-bar of examples/four_bar.py with rigid hinges (no compliance, no damping: a
  conservative system) in --four-bar-envs envs, each started with a different crank spin (env k: 0.5 k rad/s about
  the hinge axis, which the first step makes consistent), dt 1 ms for --four-bar-seconds. Held: the largest hinge
  closure error [mm]; energy: each env's kinetic plus potential energy at the end minus after its first step, as a
  percentage of the largest kinetic energy it reached (the range over the envs).

Per scene and solver: milliseconds of wall time per env-step in scene.step alone (the first step, with the kernel
compile, left out; the measurements between steps are not timed), and for DIRECT the pivots per step (median and
largest), the steps a solve spent its pivot budget in, and the env-steps that fell back to PGS.

    python -m benchmarks.bench_direct_stress [--scenes stack pair chain four_bar] [--four-bar-seconds 200]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import warp as wp

import artic
from artic import SolverType
from artic.math.np_spatial import quat_rotate, quat_to_matrix
from tests.support.degenerate import box_stack
from tests.support.direct_scenes import ball_chain

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = (SolverType.PGS, SolverType.TGS, SolverType.DIRECT)
G = 9.81


def _four_bar_module():
    spec = importlib.util.spec_from_file_location("four_bar", ROOT / "examples" / "four_bar.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Run:
    """One scene under one solver: `step()` advances it and gathers what `result()` reports."""

    def __init__(self, scene, report_body, dt, steps):
        self.scene, self.report_body, self.dt, self.steps = scene, report_body, dt, steps
        self.pivots, self.budget, self.fallbacks = [], 0, 0
        self.elapsed = 0.0  # [s] in scene.step alone, after the first step
        self.taken = 0

    def step(self):
        start = time.perf_counter()
        self.scene.step(self.dt)
        wp.synchronize()
        if self.taken > 0:
            self.elapsed += time.perf_counter() - start
        self.taken += 1
        if self.scene.solver_type == SolverType.DIRECT:
            rep = self.scene.get_solver_report(self.report_body)
            self.pivots.append(int(rep["pivots"].max()))
            self.budget += int(rep["pivot_budget_hit"].any())
            self.fallbacks = int(rep["fallback_count"].sum())

    def held(self):
        return ""

    def energy(self):
        return "-"


class Stack(Run):
    def __init__(self, solver, ratio, count, seconds=5.0):
        scene, self.boxes = box_stack(solver, ratio, count)
        super().__init__(scene, self.boxes[0], 1.0 / 60.0, round(seconds * 60))
        self.rest = scene.get_actor_pose(self.boxes[-1])[0, 2]

    def held(self):
        drop = self.rest - self.scene.get_actor_pose(self.boxes[-1])[0, 2]
        return f"top box {1e3 * drop:.2f} mm low"


class Chain(Run):
    def __init__(self, solver, seconds=5.0):
        scene, self.bodies, self.joints = ball_chain(solver, (4, 1), [1.0, 1e6] * 3)
        super().__init__(scene, self.bodies[0], 1.0 / 60.0, round(seconds * 60))
        self.worst = 0.0

    def step(self):
        super().step()
        self.worst = max(
            self.worst, max(float(np.linalg.norm(self.scene.get_joint_frames(j).tcd[0, :3])) for j in self.joints)
        )

    def held(self):
        return f"largest joint error {1e3 * self.worst:.3g} mm"


class FourBar(Run):
    def __init__(self, solver, envs, seconds):
        self.mod = _four_bar_module()
        scene, bars, self.joints = self.mod.build_four_bar(envs, 0.0, 0.0, solver)
        self.bars = bars[1:]
        super().__init__(scene, self.bars[0], 1e-3, round(seconds / 1e-3))
        spin = np.zeros((envs, 6))
        spin[:, 4] = 0.5 * np.arange(envs)  # about y, the hinges' axis
        scene.set_actor_velocity(self.bars[0], spin)
        self.e0 = None
        self.kinetic_max = np.zeros(envs)
        self.closure = 0.0
        self.count = 0

    def _energy(self):
        """(kinetic plus potential, kinetic) energy of the free bars per env [J]."""
        total = kinetic = 0.0
        for bar in self.bars:
            link = bar.link
            poses, vels = self.scene.get_actor_pose(bar), self.scene.get_actor_velocity(bar)
            for arrays in (poses, vels):
                assert np.isfinite(arrays).all()
            ke = np.empty(len(poses))
            com_z = np.empty(len(poses))
            for e, (pose, vel) in enumerate(zip(poses, vels)):
                r = quat_to_matrix(pose[3:]) @ quat_to_matrix(link.cmass_local_pose.q)
                inertia = r @ np.diag(link.inertia) @ r.T
                ke[e] = 0.5 * link.mass * vel[:3] @ vel[:3] + 0.5 * vel[3:] @ inertia @ vel[3:]
                com_z[e] = pose[2] + quat_rotate(pose[3:], link.cmass_local_pose.p)[2]
            kinetic = kinetic + ke
            total = total + ke + link.mass * G * com_z
        return total, kinetic

    def step(self):
        super().step()
        self.count += 1
        if self.e0 is None:
            self.e0 = self._energy()[0]
        if self.count % 20 == 0 or self.count == self.steps:
            self.kinetic_max = np.maximum(self.kinetic_max, self._energy()[1])
            self.closure = max(self.closure, float(self.mod.joint_errors(self.scene, self.joints).max()))

    def held(self):
        return f"largest closure error {1e3 * self.closure:.3f} mm (every 20th step)"

    def energy(self):
        drift = 100.0 * (self._energy()[0] - self.e0) / self.kinetic_max
        return f"{drift.min():+.1f} to {drift.max():+.1f} %"


def build(name, solver, args):
    if name == "stack":
        return Stack(solver, 1000.0, 20)
    if name == "pair":
        return Stack(solver, 1e6, 2)
    if name == "chain":
        return Chain(solver)
    return FourBar(solver, args.four_bar_envs, args.four_bar_seconds)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", nargs="+", choices=["stack", "pair", "chain", "four_bar"],
                   default=["stack", "pair", "chain", "four_bar"])  # fmt: skip
    p.add_argument("--four-bar-seconds", type=float, default=200.0)
    p.add_argument("--four-bar-envs", type=int, default=8)
    args = p.parse_args()
    wp.config.quiet = True
    wp.init()
    warnings.filterwarnings("ignore", message="scene: the direct solver could not solve")  # counted in the table
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # PGS's violation reports: the 'held' column says it
    load = os.getloadavg()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, artic {artic.get_cpu_threads()} thread(s), warp "
        f"{wp.__version__} on {wp.get_device()}, {time.strftime('%Y-%m-%d %H:%M %Z')}, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
    )
    stress_table(args)


def stress_table(args):
    """The table of the module docstring for args.scenes (four_bar with args.four_bar_seconds, args.four_bar_envs);
    bench_solvers.py --stress prints it too."""
    print("| scene | solver | ms/env-step | held | energy drift | pivots/step (median, max) | budget spent |", end="")
    print(" fallbacks |")
    print("|---|---|---:|---|---|---|---:|---:|")
    for name in args.scenes:
        for solver in SOLVERS:
            run = build(name, solver, args)
            for _ in range(run.steps):
                run.step()
            per = run.elapsed / (run.steps - 1) / run.scene.num_envs * 1e3
            direct = solver == SolverType.DIRECT
            piv = f"{np.median(run.pivots):.0f}, {max(run.pivots)}" if direct else "-"
            print(
                f"| {name} | {solver.name} | {per:.3f} | {run.held()} | {run.energy()} | {piv} | "
                f"{run.budget if direct else '-'} | {run.fallbacks if direct else '-'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
