"""Contact-rich step throughput: artic against MuJoCo and PhysX 5 (through SAPIEN) on the same models: Gymnasium's
ant and humanoid (MJCF, shipped in artic/assets/mjcf) dropped from their MJCF poses onto the floor with zero
controls at each file's time step, and the allegro hand (example-robot-data's URDF, 16 joints with PD drives
curling the fingers, floating base) lying on a table at 200 Hz. artic runs all envs in one launch (PGS, PhysX's
default 4/1 iterations); MuJoCo steps one MjData per env after another, PhysX one SAPIEN scene per env, each on
the CPU (their per-env cost does not depend on the env count: measured on min(envs, --peer-max-envs) envs).
Prints microseconds per env-step, contacts per env and the ratios (< 1: artic is faster).

How the peers get the same model: MuJoCo reads the same MJCF, and the allegro URDF through MjSpec (with a free
joint, the table, position actuators of the same gains, and `balanceinertia`, since four of the URDF's link
inertias break the triangle inequality that MuJoCo enforces). SAPIEN 3.0 has no MJCF reader, so PhysX gets every
model rebuilt from artic's own articulation (benchmarks/physx_scene.py); PhysX filters parent-child pairs only,
so the humanoid and allegro run there without self-collision (artic and MuJoCo keep the humanoid's), which can
only make PhysX's step cheaper. Contact counts differ by design: artic and PhysX count speculative contacts within
the contact offsets (0.02 m per shape), MuJoCo active ones.

    python -m benchmarks.bench_contact [--models ant humanoid allegro] [--envs 1 64 1024] [--steps 200] [--hard]

MJCF models load with MuJoCo's soft constraints (load_mjcf's default); --hard loads them with
PhysX's hard rows, the A/B of what the soft rows cost.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import warp as wp

import artic
from artic import Box, Drive, DriveType, SolverType, Transform
from artic.math.np_spatial import quat_from_axis_angle

ASSETS = Path(artic.__file__).parent / "assets" / "mjcf"
ALLEGRO_DT = 0.005
ALLEGRO_KP, ALLEGRO_KD, ALLEGRO_CURL = 3.0, 0.1, 0.5  # drive gains [Nm/rad, Nm s/rad], finger target [rad]
ALLEGRO_POSE = Transform((0.0, 0.0, 0.04), quat_from_axis_angle((0.0, 1.0, 0.0), np.pi / 2))  # palm flat


def _allegro_urdf() -> Path:
    from tests.support.models import robot_path

    return robot_path("allegro")


def _table():
    table = artic.RigidStatic(Transform((0.0, 0.0, -0.05)), "table")
    table.attach_shape(Box((0.3, 0.3, 0.05)))
    return table


def artic_model(name, soft=True):
    """(articulation, static actors, time step, gravity) of a benchmark model; soft: an MJCF model with MuJoCo's soft
    constraints (load_mjcf's default), else PhysX's hard rows."""
    if name == "allegro":
        art = artic.load_urdf(_allegro_urdf(), fix_base=False)
        art.set_root_global_pose(ALLEGRO_POSE)
        for link in art.get_links()[1:]:
            j = link.inbound_joint
            for ax in j.dof_axes():
                lim = j.get_limit_params(ax)
                j.set_drive_params(ax, Drive(ALLEGRO_KP, ALLEGRO_KD, 1e6, DriveType.FORCE))
                j.set_drive_target(ax, float(np.clip(ALLEGRO_CURL, lim.low, lim.high)))
        return art, [_table()], ALLEGRO_DT, (0.0, 0.0, -9.81)
    model = artic.load_mjcf(ASSETS / f"{name}.xml", soft_constraints=soft)
    art = model.articulations[0]
    # an MJCF import takes MuJoCo's solver iterations (100) as position iterations; this benchmark compares
    # PhysX's default schedule, in artic and in PhysX alike
    art.set_solver_iteration_counts(4, 1)
    return art, model.statics, model.timestep, model.gravity


def bench_artic(name, envs, steps, solver, warmup, soft=True):
    art, statics, dt, gravity = artic_model(name, soft)
    scene = artic.Scene(envs, gravity=gravity, solver_type=solver)
    for actor in statics:
        scene.add_actor(actor)
    scene.add_articulation(art)
    art.sleep_threshold = 0.0  # measure the solver, not sleeping envs
    for _ in range(warmup):  # compile, record, and land on the floor
        scene.step(dt)
    wp.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        scene.step(dt)
    wp.synchronize()
    contacts = scene.get_contacts(art).count.mean()
    return (time.perf_counter() - start) / steps / envs * 1e6, contacts


def mujoco_model(name):
    import mujoco

    if name != "allegro":
        return mujoco.MjModel.from_xml_path(str(ASSETS / f"{name}.xml"))
    spec = mujoco.MjSpec.from_file(str(_allegro_urdf()))
    spec.compiler.balanceinertia = True
    spec.compiler.discardvisual = True
    root = spec.worldbody.first_body()
    root.add_freejoint()
    p, q = ALLEGRO_POSE.p, ALLEGRO_POSE.q
    root.pos, root.quat = list(p), [q[3], q[0], q[1], q[2]]
    for g in spec.geoms:  # the hand against the table only, as in artic's URDF import
        g.contype, g.conaffinity = 1, 2
    table = spec.worldbody.add_geom()
    table.type, table.size, table.pos = mujoco.mjtGeom.mjGEOM_BOX, [0.3, 0.3, 0.05], [0.0, 0.0, -0.05]
    table.contype, table.conaffinity = 2, 1
    for j in spec.joints:
        if j.type != mujoco.mjtJoint.mjJNT_FREE:
            a = spec.add_actuator()
            a.target, a.trntype = j.name, mujoco.mjtTrn.mjTRN_JOINT
            a.set_to_position(kp=ALLEGRO_KP, kv=ALLEGRO_KD)
    mm = spec.compile()
    mm.opt.timestep = ALLEGRO_DT
    return mm


def _mujoco_data(mm, name):
    import mujoco

    d = mujoco.MjData(mm)
    if name == "allegro":
        d.ctrl[:] = np.clip(ALLEGRO_CURL, mm.jnt_range[1:, 0], mm.jnt_range[1:, 1])
    return d


def bench_mujoco(name, envs, steps, warmup):
    import mujoco

    mm = mujoco_model(name)
    datas = [_mujoco_data(mm, name) for _ in range(envs)]
    for d in datas:
        for _ in range(warmup):
            mujoco.mj_step(mm, d)
    start = time.perf_counter()
    for d in datas:
        for _ in range(steps):
            mujoco.mj_step(mm, d)
    return (time.perf_counter() - start) / steps / envs * 1e6, sum(d.ncon for d in datas) / envs


def bench_physx(name, envs, steps, warmup, solver):
    from benchmarks.physx_scene import physx_scene

    art, statics, dt, gravity = artic_model(name)  # one description, one PhysX scene per env
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scenes = [
            physx_scene(art, statics, dt, gravity, solver, self_collision=(name == "ant"))[0] for _ in range(envs)
        ]
    for s in scenes:
        for _ in range(warmup):
            s.step()
    start = time.perf_counter()
    for s in scenes:
        for _ in range(steps):
            s.step()
    elapsed = time.perf_counter() - start
    return elapsed / steps / envs * 1e6, sum(len(s.get_contacts()) for s in scenes) / envs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["ant", "humanoid", "allegro"])
    p.add_argument("--envs", nargs="+", type=int, default=[1, 64, 1024])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--peer-max-envs", type=int, default=16)
    p.add_argument("--solver", choices=("pgs", "tgs"), default="pgs")
    p.add_argument("--threads", type=int, default=None, help="artic CPU threads (default: all cores)")
    p.add_argument("--no-physx", action="store_true", help="leave PhysX (SAPIEN) out")
    p.add_argument("--hard", action="store_true", help="MJCF models with PhysX's hard rows, not MuJoCo's soft ones")
    args = p.parse_args()
    if args.threads:
        artic.set_cpu_threads(args.threads)
    solver = SolverType.TGS if args.solver == "tgs" else SolverType.PGS
    print(
        f"{platform.processor() or platform.machine()}, {artic.get_cpu_threads()} artic thread(s), "
        f"device {wp.get_device()}, {solver.name}, MJCF rows {'hard' if args.hard else 'soft'}"
    )
    print(
        f"{'model':<10s}{'envs':>6s}{'artic us':>10s}{'contacts':>9s}{'MuJoCo us':>11s}{'contacts':>9s}"
        f"{'PhysX us':>10s}{'contacts':>9s}{'/MuJoCo':>9s}{'/PhysX':>8s}"
    )
    for name in args.models:
        for envs in args.envs:
            a, ca = bench_artic(name, envs, args.steps, solver, args.warmup, not args.hard)
            peers = min(envs, args.peer_max_envs)
            m, cm = bench_mujoco(name, peers, args.steps, args.warmup)
            x, cx = (
                (float("nan"), float("nan"))
                if args.no_physx
                else bench_physx(name, peers, args.steps, args.warmup, solver)
            )
            print(
                f"{name:<10s}{envs:>6d}{a:>10.1f}{ca:>9.1f}{m:>11.1f}{cm:>9.1f}{x:>10.1f}{cx:>9.1f}"
                f"{a / m:>9.2f}{a / x:>8.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
