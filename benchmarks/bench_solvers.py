"""PGS, TGS and DIRECT on the same scenes in the same run: cost per env-step and accuracy (issue 13, "Benchmark and
record"; docs/solvers.md says what each solver does).

Scenes (sleeping off everywhere, so that every env is stepped every time; PhysX's default 4 position / 1 velocity
iterations for PGS and TGS):
* panda: example-robot-data's panda, fixed base, PD drives (kp 400, kd 40) to random targets in +-0.5 rad, except
  joints 4 and 6, driven 0.3 rad beyond a limit, and the fingers (one mimicking the other), driven 2 cm beyond
  theirs; every dof starts 0.05 rad (the fingers 1 cm) inside its limits; no ground. dt 1/120.
* humanoid: a two-legged rig standing on a ground box: a 10 kg pelvis, two legs of hip, knee and ankle pitch joints
  held by stiff PD drives (kp 2000, kd 100) in a slight crouch, 0.2 m box feet. 26 kg in all. dt 1/120.
* allegro: the allegro hand lying palm-flat on a table, fingers curling under PD drives (benchmarks/bench_contact.py's
  scene). dt 1/200.
* four_bar: ArtiSynth's four-bar (examples/four_bar.py) with rigid hinges (no compliance, no damping): a closed loop
  of three free bars and four hinge body joints, falling from the square. dt 1 ms.

Cost: microseconds per env-step, the median of --repeats runs of --steps steps (a quarter of them at 1024 envs),
after --warmup steps (which include the kernel compile and the scene settling), the three solvers' runs
interleaved; the humanoid's timed steps stay within its first simulated second,
while it stands under all three solvers. All three solvers run in the same kernel launch on the same cores
(env chunks on every CPU core from 128 envs, artic/core/parallel.py), so the ratios compare the solvers only.

Accuracy, on one env over a fixed simulated time (--accuracy-seconds; untimed, separate from the cost runs):
* violation: panda and allegro the largest joint-limit violation over the run [rad]; humanoid and allegro the
  deepest contact penetration over the second half of the run [mm]; four_bar the largest hinge closure error over
  the run [mm] (|T_err| translation, examples/four_bar.py).
* complementarity: DIRECT's own report (the largest violation of the LCP conditions of its velocity solve, m/s or
  rad/s, the largest over the run); '-' for PGS and TGS (their LCP residual is not computed here).
* energy drift: four_bar only (rigid hinges, no damping, no friction: a conservative system): the change of kinetic
  plus potential energy from the start to the end of the run, and the largest |change| on the way [J].
* humanoid: whether it still stands at the end (pelvis above 0.8 m), how far the pelvis moved horizontally from
  0.25 s (landed) to the end, the vertical ground reaction over the weight and the left foot's share of it
  (statics: 1 and 0.5, the rig being symmetric), averaged over the second half of the run.
* DIRECT's rows, pivots per step, fallbacks and unsettled friction boxes over the run.

With --facets, DIRECT on the contact scenes (humanoid, allegro) with each friction pyramid asked for
(Scene.direct_friction_facets; 4 is PhysX's box): cost per env-step (interleaved as above), rows and pivots.

With --stress, also bench_direct_stress.py's scenes (the alternating 1:1000 stack, the 1:1e6 pair and chain, the
rigid four-bar over --four-bar-seconds in --four-bar-envs envs): cost, whether each holds, DIRECT's pivots, spent
pivot budgets, fallbacks and the four-bar's energy drift.

    python -m benchmarks.bench_solvers [--scenes panda humanoid allegro four_bar] [--envs 1 1024] [--steps 50]
        [--facets 4 8 16] [--stress [--four-bar-seconds 200] [--four-bar-envs 8]]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import warp as wp

import artic
from artic import (
    Axis,
    Box,
    CacheFlag,
    Drive,
    DriveType,
    JointType,
    Limit,
    Motion,
    SolverType,
    Transform,
)
from artic.math.np_spatial import quat_rotate, quat_to_matrix

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = (SolverType.PGS, SolverType.TGS, SolverType.DIRECT)
G = 9.81


def _module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Bench:
    """A scene to step: `scene`, the articulation whose report is read (`art`), `dt`, and what accuracy reads."""

    def __init__(self, scene, art, dt, **extra):
        self.scene, self.art, self.dt = scene, art, dt
        self.__dict__.update(extra)


# -- scenes --------------------------------------------------------------------------------------------------------


def panda(envs, solver):
    from tests.support.models import robot_path

    art = artic.load_urdf(robot_path("panda"))
    art.sleep_threshold = 0.0
    for dof in art.dof_names:
        j = art.get_joint(dof)
        j.set_drive_params(j.dof_axes()[0], Drive(400.0, 40.0, 1e6, DriveType.FORCE))
    scene = artic.Scene(envs, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    targets = np.random.default_rng(0).uniform(-0.5, 0.5, cache.joint_target_positions.shape)
    low, high = _limits(art)
    targets[:, 3] = high[3] + 0.3  # joint 4 pressed against its upper limit, joint 6 against its lower one
    targets[:, 5] = low[5] - 0.3
    targets[:, 7:] = high[7:] + 0.02  # the fingers (one mimicking the other) against their opening limit
    cache.joint_target_positions[:] = targets
    art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    return Bench(scene, art, 1.0 / 120.0, limits=_start_inside_limits(art))


def _start_inside_limits(art, margin=0.05):
    """Start every dof at 0 moved `margin` inside its limits (the panda's and the hand's zero poses lie outside some
    of them), so that the limit violation measures the solver; returns the limits."""
    low, high = _limits(art)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    inset = np.minimum(margin, 0.25 * (high - low))  # the panda's fingers travel 4 cm
    cache.joint_position[:] = np.clip(0.0, low + inset, high - inset)
    art.apply_cache(cache, CacheFlag.POSITION)
    return low, high


def _limits(art):
    """(low, high) arrays over the articulation's dofs, in cache order."""
    low, high = [], []
    for dof in art.dof_names:
        j = art.get_joint(dof)
        lim = j.get_limit_params(j.dof_axes()[0])
        low.append(lim.low)
        high.append(lim.high)
    return np.array(low), np.array(high)


LEG = 0.4  # thigh and shin length [m]
CROUCH = (-0.15, 0.3, -0.15)  # hip, knee, ankle targets [rad]: the feet stay flat
FOOT = (0.1, 0.05, 0.02)  # half extents [m]


def humanoid(envs, solver):
    """A pelvis on two legs of three pitch joints each (hip, knee, ankle) and box feet 0.1 m either side of the
    middle, standing on a ground box; the masses of the links sit on the legs' axes, so statics puts half of the
    weight on each foot."""
    art = artic.Articulation("biped")
    art.sleep_threshold = 0.0
    z0 = 0.05 + 2 * LEG + 0.03 + FOOT[2] + 0.001  # straight legs, feet 1 mm above the ground
    pelvis = art.create_link(None, Transform((0.0, 0.0, z0)), "pelvis")
    pelvis.mass = 10.0
    pelvis.inertia = (0.1, 0.05, 0.1)
    for side, y in (("left", 0.1), ("right", -0.1)):
        parent, offset = pelvis, (0.0, y, -0.05)
        for k, (part, mass, length) in enumerate((("thigh", 4.0, LEG), ("shin", 3.0, LEG), ("foot", 1.0, 0.06))):
            z = z0 - 0.05 - LEG * min(k, 2) - 0.5 * length if k < 2 else z0 - 0.05 - 2 * LEG - 0.03
            link = art.create_link(parent, Transform((0.0, y, z)), f"{side}_{part}")
            link.mass = mass
            link.inertia = (mass * length**2 / 12.0 + 1e-3, mass * length**2 / 12.0 + 1e-3, 1e-2 * mass)
            j = link.inbound_joint
            j.set_joint_type(JointType.REVOLUTE)
            j.parent_pose = Transform(offset)
            j.child_pose = Transform((0.0, 0.0, 0.5 * length if k < 2 else 0.03))
            j.friction_coefficient = 0.0
            j.set_motion(Axis.SWING1, Motion.LIMITED)
            j.set_limit_params(Axis.SWING1, Limit(-1.0, 1.0) if k != 1 else Limit(0.0, 2.0))
            j.set_drive_params(Axis.SWING1, Drive(2000.0, 100.0, 1e6, DriveType.FORCE))
            j.set_drive_target(Axis.SWING1, CROUCH[k])
            if part == "foot":
                link.attach_shape(Box(FOOT))
            parent, offset = link, (0.0, 0.0, -0.5 * length)
    scene = artic.Scene(envs, solver_type=solver)
    ground = artic.RigidStatic(Transform((0.0, 0.0, -0.1)), "ground")
    ground.attach_shape(Box((2.0, 2.0, 0.1)))
    scene.add_actor(ground)
    scene.add_articulation(art)
    weight = G * sum(link.mass for link in art.get_links())
    # PGS and TGS (4, 1) let this rig creep forward and fall after ~1.2 s: time the first second only, standing
    return Bench(scene, art, 1.0 / 120.0, weight=weight, limits=_limits(art), timed_seconds=1.0)


def allegro(envs, solver):
    from benchmarks.bench_contact import artic_model

    art, statics, dt, gravity = artic_model("allegro")
    art.sleep_threshold = 0.0
    scene = artic.Scene(envs, gravity=gravity, solver_type=solver)
    for actor in statics:
        scene.add_actor(actor)
    scene.add_articulation(art)
    return Bench(scene, art, dt, limits=_start_inside_limits(art))


def four_bar(envs, solver):
    mod = _module("four_bar", ROOT / "examples" / "four_bar.py")
    scene, bars, joints = mod.build_four_bar(envs, 0.0, 0.0, solver)
    return Bench(scene, bars[1].articulation, 1e-3, bars=bars[1:], joints=joints, errors=mod.joint_errors)


SCENES = {"panda": panda, "humanoid": humanoid, "allegro": allegro, "four_bar": four_bar}


# -- accuracy ------------------------------------------------------------------------------------------------------


def _limit_violation(b, cache):
    b.art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    q = cache.joint_position[0].astype(float)
    low, high = b.limits
    return float(np.max(np.maximum(np.maximum(low - q, q - high), 0.0)))


def _penetration(b):
    c = b.scene.get_contacts(b.art)
    n = int(c.count[0])
    return float(max(0.0, -c.separation[0, :n].min())) if n else 0.0


def _energy(b):
    """(kinetic plus potential, kinetic) energy of the four-bar's free bars, env 0 [J]."""
    e = kinetic = 0.0
    for bar in b.bars:
        link = bar.link
        pose, vel = b.scene.get_actor_pose(bar)[0], b.scene.get_actor_velocity(bar)[0]
        r = quat_to_matrix(pose[3:]) @ quat_to_matrix(link.cmass_local_pose.q)
        inertia = r @ np.diag(link.inertia) @ r.T
        com_z = pose[2] + quat_rotate(pose[3:], link.cmass_local_pose.p)[2]
        ke = 0.5 * link.mass * vel[:3] @ vel[:3] + 0.5 * vel[3:] @ inertia @ vel[3:]
        kinetic += ke
        e += ke + link.mass * G * com_z
    return float(e), float(kinetic)


def _grf(b):
    """(vertical ground reaction / weight, left foot's share of it) in env 0."""
    c = b.scene.get_contacts(b.art)
    n = int(c.count[0])
    fz, y = c.force[0, :n, 2], c.point[0, :n, 1]
    total = fz.sum()
    return float(total / b.weight), float(fz[y > 0.0].sum() / total) if total > 0.0 else float("nan")


def _pelvis(b):
    return b.scene.get_link_poses(b.art)[0, 0, :3]


def accuracy(name, solver, seconds):
    """The accuracy figures of one scene and solver (module docstring), on one env."""
    b = SCENES[name](1, solver)
    steps = round(seconds / b.dt)
    cache = b.art.create_cache()
    out = {"violation": 0.0, "complementarity": 0.0, "pivots": [], "rows": 0, "fallbacks": 0, "unsettled": 0}
    grf, e0 = [], _energy(b)[0] if name == "four_bar" else None
    drift_max = kinetic_max = 0.0
    for k in range(steps):
        b.scene.step(b.dt)
        late = k >= steps // 2
        if name in ("panda", "allegro"):
            out["violation"] = max(out["violation"], _limit_violation(b, cache))
        if name in ("humanoid", "allegro") and late:
            out.setdefault("penetration", 0.0)
            out["penetration"] = max(out["penetration"], _penetration(b))
        if name == "humanoid" and late:
            grf.append(_grf(b))
        if name == "humanoid" and k == round(0.25 / b.dt):
            out["pelvis0"] = _pelvis(b)
        if name == "four_bar":
            out["violation"] = max(out["violation"], float(b.errors(b.scene, b.joints).max()))
            energy, kinetic = _energy(b)
            drift = energy - e0
            drift_max = max(drift_max, abs(drift))
            kinetic_max = max(kinetic_max, kinetic)
            out["drift"] = drift
        if solver == SolverType.DIRECT:
            rep = b.scene.get_solver_report(b.art)
            out["complementarity"] = max(out["complementarity"], float(rep["complementarity"][0]))
            out["pivots"].append(int(rep["pivots"][0]))
            out["rows"] = max(out["rows"], int(rep["rows"][0]))
            out["fallbacks"] = int(rep["fallback_count"][0])
            out["unsettled"] += int(not rep["friction_settled"][0])
    if name == "four_bar":
        out["drift_max"] = drift_max
        out["kinetic_max"] = kinetic_max
    if grf:
        out["grf"] = tuple(np.nanmean(np.array(grf), axis=0))
        pelvis = _pelvis(b)
        out["pelvis"] = (float(np.linalg.norm(pelvis[:2] - out["pelvis0"][:2])), float(pelvis[2]))
    out["steps"] = steps
    return out


def _fmt_accuracy(name, solver, a):
    if name == "panda":
        viol = f"limit {a['violation']:.2e} rad"
    elif name == "humanoid":
        viol = f"penetration {1e3 * a['penetration']:.2f} mm"
    elif name == "allegro":
        viol = f"limit {a['violation']:.2e} rad, penetration {1e3 * a['penetration']:.2f} mm"
    else:
        viol = f"closure {1e3 * a['violation']:.3f} mm"
    comp = f"{a['complementarity']:.1e}" if solver == SolverType.DIRECT else "-"
    drift = (
        f"{a['drift']:+.3f} (max {a['drift_max']:.3f}; {100 * a['drift_max'] / a['kinetic_max']:.2f} % of "
        f"the largest kinetic energy, {a['kinetic_max']:.1f})"
        if "drift" in a
        else "-"
    )
    extra = []
    if "grf" in a:
        moved, height = a["pelvis"]
        extra.append(
            f"{'stands' if height > 0.8 else 'FELL'}: pelvis moved {1e3 * moved:.1f} mm from 0.25 s, "
            f"height {height:.3f} m; GRF/weight {a['grf'][0]:.3f}, left share {a['grf'][1]:.3f}"
        )
    if solver == SolverType.DIRECT:
        p = np.array(a["pivots"])
        extra.append(
            f"rows <= {a['rows']}, pivots/step median {np.median(p):.0f} max {p.max()}, "
            f"fallbacks {a['fallbacks']}, unsettled {a['unsettled']}"
        )
    return f"| {name} | {solver.name} | {viol} | {comp} | {drift} | {'; '.join(extra) or '-'} |"


# -- cost ----------------------------------------------------------------------------------------------------------


def cost(name, envs, steps, warmup, repeats):
    """{solver: (median microseconds per env-step, env-steps that fell back)} over `repeats` runs of `steps` steps
    of each solver, after `warmup` steps. The solvers' runs are interleaved (PGS, TGS, DIRECT, PGS, ...), so that
    the machine's drift over the run (~10 % here from minute to minute at 1024 envs) falls on all three alike."""
    benches = {solver: SCENES[name](envs, solver) for solver in SOLVERS}
    for b in benches.values():
        if hasattr(b, "timed_seconds"):  # the timed steps stay within that simulated time
            steps = min(steps, max(2, (round(b.timed_seconds / b.dt) - warmup) // repeats))
        for _ in range(warmup):
            b.scene.step(b.dt)
    runs = _interleaved(benches, steps, envs, repeats)
    out = {}
    for solver, b in benches.items():
        fell = int(b.scene.get_solver_report(b.art)["fallback_count"].sum()) if solver == SolverType.DIRECT else 0
        out[solver] = (runs[solver], fell)
    return out


def _interleaved(benches: dict, steps: int, envs: int, repeats: int) -> dict:
    """{key: median microseconds per env-step} of `repeats` runs of `steps` steps of each bench, the benches' runs
    interleaved so that the machine's drift falls on all alike."""
    wp.synchronize()
    runs = {key: [] for key in benches}
    for _ in range(repeats):
        for key, b in benches.items():
            start = time.perf_counter()
            for _ in range(steps):
                b.scene.step(b.dt)
            wp.synchronize()
            runs[key].append((time.perf_counter() - start) / steps / envs * 1e6)
    return {key: statistics.median(r) for key, r in runs.items()}


def facets_table(scenes, envs_list, facets, steps, warmup, repeats):
    """DIRECT with each of `facets` on the contact scenes among `scenes`: us/env-step, its ratio to the box (4),
    rows and pivots of the last step, fallbacks."""
    print("\n| scene | envs | facets | DIRECT us/env-step | / box | rows | pivots | fallbacks |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in [s for s in scenes if s in ("humanoid", "allegro")]:
        for envs in envs_list:
            n = max(2, steps // 4) if envs >= 1024 else steps
            benches = {f: SCENES[name](envs, SolverType.DIRECT) for f in sorted(set(facets) | {4})}
            for f, b in benches.items():
                b.scene.direct_friction_facets = f
                for _ in range(warmup):
                    b.scene.step(b.dt)
            runs = _interleaved(benches, n, envs, repeats)
            box = runs[4]
            for f in facets:
                rep = benches[f].scene.get_solver_report(benches[f].art)
                us = runs[f]
                print(
                    f"| {name} | {envs} | {f} | {us:.1f} | {us / box:.2f} | {int(rep['rows'].max())} | "
                    f"{int(np.median(rep['pivots']))} | {int(rep['fallback_count'].sum())} |",
                    flush=True,
                )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", nargs="+", choices=list(SCENES), default=list(SCENES))
    p.add_argument("--envs", nargs="+", type=int, default=[1, 1024])
    p.add_argument("--steps", type=int, default=50, help="timed steps per repeat (divided by 4 at 1024 envs or more)")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps first (compile, settle)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--accuracy-seconds", type=float, default=1.0, help="simulated time of the accuracy runs")
    p.add_argument("--no-accuracy", dest="accuracy", action="store_false")
    p.add_argument("--no-cost", dest="cost", action="store_false")
    p.add_argument(
        "--stress",
        action="store_true",
        help="also the direct solver's stress scenes (bench_direct_stress.py: stack, pair, chain, four_bar)",
    )
    p.add_argument("--facets", nargs="+", type=int, choices=(4, 8, 12, 16), help="DIRECT's friction pyramids")
    p.add_argument("--four-bar-seconds", type=float, default=200.0, help="the stress four-bar's simulated time")
    p.add_argument("--four-bar-envs", type=int, default=8, help="the stress four-bar's envs")
    args = p.parse_args()
    wp.config.quiet = True
    wp.init()
    # the tables count DIRECT's fallbacks to PGS; the scene's warning about them would only interleave with them
    warnings.filterwarnings("ignore", message="scene: the direct solver could not solve")
    load = os.getloadavg()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, artic {artic.get_cpu_threads()} thread(s), warp "
        f"{wp.__version__} on {wp.get_device()}, {time.strftime('%Y-%m-%d %H:%M %Z')}, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(
        "# PGS and TGS: 4 position / 1 velocity iterations; all three solvers run in the same launch on the same cores"
    )
    if args.cost:
        print("\n| scene | envs | PGS us/env-step | TGS us/env-step | DIRECT us/env-step | DIRECT/PGS | DIRECT/TGS |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in args.scenes:
            for envs in args.envs:
                steps = max(2, args.steps // 4) if envs >= 1024 else args.steps
                t = cost(name, envs, steps, args.warmup, args.repeats)
                pgs, tgs, (direct, fell) = t[SolverType.PGS][0], t[SolverType.TGS][0], t[SolverType.DIRECT]
                note = f" ({fell} env-steps fell back to PGS, warm-up included)" if fell else ""
                print(
                    f"| {name} | {envs} | {pgs:.1f} | {tgs:.1f} | {direct:.1f}{note} | {direct / pgs:.2f} | "
                    f"{direct / tgs:.2f} |",
                    flush=True,
                )
    if args.accuracy:
        print(f"\nAccuracy, 1 env, {args.accuracy_seconds:g} s simulated:\n")
        print("| scene | solver | violation | complementarity | energy drift [J] | other |")
        print("|---|---|---|---:|---|---|")
        for name in args.scenes:
            for solver in SOLVERS:
                print(_fmt_accuracy(name, solver, accuracy(name, solver, args.accuracy_seconds)), flush=True)
    if args.facets:
        facets_table(args.scenes, args.envs, args.facets, args.steps, args.warmup, args.repeats)
    if args.stress:
        from benchmarks.bench_direct_stress import stress_table

        print("\nStress scenes (bench_direct_stress.py; ms per env-step in scene.step alone):\n")
        args.scenes = ["stack", "pair", "chain", "four_bar"]
        stress_table(args)


if __name__ == "__main__":
    main()
