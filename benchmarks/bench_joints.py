"""Body-joint step throughput: artic against MuJoCo on closed chains and maximal-coordinate mechanisms.

* four_bar: the over-constrained four-bar of ArtiSynth's manual (examples/four_bar.py, compliance 1e-6, damping
  25000), three free bars joined by four hinges (20 rows, 18 dofs), dt 1 ms. MuJoCo: bars 1-3 a hinged chain from
  the grounded bar, closed by a connect equality (the usual MuJoCo model of a loop).
* ragdoll: 15 free boxes joined by 6 spherical and 8 revolute body joints (tests/support/mechanisms.py), tumbling
  from random velocities at dt 1/480. MuJoCo: the same 15 bodies on free joints joined by connect equalities (one
  per ball joint, two on the axis per hinge), the same masses and inertias, no contacts.
* ragdoll_tree: the same ragdoll as one floating articulation in artic and as a tree of ball and hinge joints in
  MuJoCo (reduced coordinates in both, for reference).

artic runs all envs in one launch (PGS, 32/1 iterations for the ragdolls, 4/1 for the four-bar, as in the tests);
MuJoCo steps one MjData per env after another on one thread (its per-env cost does not depend on the env count:
measured on min(envs, --peer-max-envs) envs). Warp runs artic's kernel on every core of the CPU (2 here); MuJoCo
uses one. Prints microseconds per env-step and the ratio (< 1: artic is faster).

    python -m benchmarks.bench_joints [--models four_bar ragdoll ragdoll_tree] [--envs 1 64 1024] [--steps 200]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import time
from pathlib import Path

import numpy as np
import warp as wp

import artic
from artic import Transform
from artic.math.np_spatial import quat_to_matrix
from tests.support.mechanisms import RAGDOLL, ragdoll_articulation, ragdoll_bodies

ROOT = Path(__file__).resolve().parents[1]

_spec = importlib.util.spec_from_file_location("four_bar", ROOT / "examples" / "four_bar.py")
four_bar = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(four_bar)

DT = {"four_bar": 1e-3, "ragdoll": 1.0 / 480.0, "ragdoll_tree": 1.0 / 480.0}
RAGDOLL_POSE = Transform((0.0, 0.0, 2.0))


def _velocities(count: int, seed: int = 1) -> np.ndarray:
    """(count, 6) random (linear, angular) world velocities of the ragdoll's parts [m/s, rad/s]."""
    return np.random.default_rng(seed).normal(size=(count, 6)) * 0.5


# -- artic ---------------------------------------------------------------------------------------------------------
def artic_scene(name: str, envs: int):
    if name == "four_bar":
        scene, _, _ = four_bar.build_four_bar(envs)
        return scene
    scene = artic.Scene(envs)
    art, links = ragdoll_articulation(RAGDOLL_POSE)
    if name == "ragdoll_tree":
        scene.add_articulation(art)
        cache = art.create_cache()
        cache.joint_velocity[:] = np.random.default_rng(1).normal(size=cache.joint_velocity.shape)
        art.apply_cache(cache, artic.CacheFlag.VELOCITY)
        return scene
    bodies, _ = ragdoll_bodies(scene, links)
    for b, v in zip(bodies.values(), _velocities(len(bodies))):
        scene.set_actor_velocity(b, np.broadcast_to(v, (envs, 6)))
    return scene


def bench_artic(name: str, envs: int, steps: int, warmup: int) -> float:
    scene = artic_scene(name, envs)
    for _ in range(warmup):  # compile and record
        scene.step(DT[name])
    wp.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        scene.step(DT[name])
    wp.synchronize()
    return (time.perf_counter() - t0) / (steps * envs) * 1e6


# -- MuJoCo --------------------------------------------------------------------------------------------------------
def _inertial(link) -> str:
    c, q, d = link.cmass_local_pose.p, link.cmass_local_pose.q, link.inertia
    return (
        f'<inertial pos="{c[0]} {c[1]} {c[2]}" quat="{q[3]} {q[0]} {q[1]} {q[2]}" mass="{link.mass}" '
        f'diaginertia="{d[0]} {d[1]} {d[2]}"/>'
    )


def _pose_attrs(t: Transform) -> str:
    return f'pos="{t.p[0]} {t.p[1]} {t.p[2]}" quat="{t.q[3]} {t.q[0]} {t.q[1]} {t.q[2]}"'


def _four_bar_xml() -> str:
    _, bars, _ = four_bar.build_four_bar(1)
    poses = [bars[0].pose] + [b.global_pose for b in bars[1:]]

    def body(i, inner):
        rel = poses[i] if i == 1 else poses[i - 1].inverse() * poses[i]
        return (
            f'<body name="link{i}" {_pose_attrs(rel)}><joint type="hinge" axis="0 1 0" pos="0 0 -0.5"/>'
            f"{_inertial(bars[i].link)}{inner}</body>"
        )

    return (
        f'<mujoco><option timestep="{DT["four_bar"]}"/><worldbody>{body(1, body(2, body(3, "")))}</worldbody>'
        '<equality><connect body1="link3" body2="world" anchor="0 0 0.5"/></equality></mujoco>'
    )


def _ragdoll_xml(tree: bool) -> str:
    from artic.description.body_joints import description_pose

    _, links = ragdoll_articulation(RAGDOLL_POSE)
    dt = DT["ragdoll"]
    if not tree:
        bodies, eqs = [], []
        for name, parent, kind, _, _, _ in RAGDOLL:
            pose = description_pose(links[name])
            bodies.append(f'<body name="{name}" {_pose_attrs(pose)}><freejoint/>{_inertial(links[name])}</body>')
            if parent is not None:
                j = links[name].inbound_joint
                anchors = (
                    [j.child_pose.p]
                    if kind == "ball"
                    else [j.child_pose.p + s * quat_to_matrix(j.child_pose.q)[:, 0] for s in (-0.05, 0.05)]
                )
                eqs += [f'<connect body1="{name}" body2="{parent}" anchor="{a[0]} {a[1]} {a[2]}"/>' for a in anchors]
        return (
            f'<mujoco><option timestep="{dt}"/><worldbody>{"".join(bodies)}</worldbody>'
            f"<equality>{''.join(eqs)}</equality></mujoco>"
        )

    children = {}
    for name, parent, *_ in RAGDOLL:
        children.setdefault(parent, []).append(name)

    def body(name):
        link = links[name]
        j = link.inbound_joint
        if j is None:
            head, joint = _pose_attrs(RAGDOLL_POSE), "<freejoint/>"
        else:
            kind = next(k for n, _, k, *_ in RAGDOLL if n == name)
            rel = j.parent_pose * j.child_pose.inverse()
            a = j.child_pose.p
            joint = (
                f'<joint type="ball" pos="{a[0]} {a[1]} {a[2]}"/>'
                if kind == "ball"
                else f'<joint type="hinge" axis="1 0 0" pos="{a[0]} {a[1]} {a[2]}"/>'
            )
            head = _pose_attrs(rel)
        return (
            f'<body name="{name}" {head}>{joint}{_inertial(link)}'
            + "".join(body(c) for c in children.get(name, []))
            + "</body>"
        )

    return f'<mujoco><option timestep="{dt}"/><worldbody>{body("pelvis")}</worldbody></mujoco>'


def bench_mujoco(name: str, envs: int, steps: int, warmup: int) -> float:
    import mujoco

    xml = _four_bar_xml() if name == "four_bar" else _ragdoll_xml(tree=name == "ragdoll_tree")
    model = mujoco.MjModel.from_xml_string(xml)
    datas = []
    for _ in range(envs):
        data = mujoco.MjData(model)
        if name == "ragdoll":
            # the same random numbers; MuJoCo reads the angular part in the body frame: a random tumble either way
            data.qvel[:] = _velocities(model.nbody - 1).ravel()
        elif name == "ragdoll_tree":
            data.qvel[:] = np.random.default_rng(1).normal(size=model.nv)
        datas.append(data)
    for data in datas:
        for _ in range(warmup):
            mujoco.mj_step(model, data)
    t0 = time.perf_counter()
    for data in datas:
        for _ in range(steps):
            mujoco.mj_step(model, data)
    return (time.perf_counter() - t0) / (steps * envs) * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["four_bar", "ragdoll", "ragdoll_tree"], choices=list(DT))
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 64, 1024])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--peer-max-envs", type=int, default=16)
    args = parser.parse_args(argv)
    wp.config.quiet = True
    print(f"{platform.processor() or platform.machine()}, {wp.get_device()}, python {platform.python_version()}")
    print(f"{'model':<14}{'envs':>6}{'artic us':>11}{'MuJoCo us':>11}{'artic/MuJoCo':>14}")
    rows = []
    for name in args.models:
        for envs in args.envs:
            a = bench_artic(name, envs, args.steps, args.warmup)
            m = bench_mujoco(name, min(envs, args.peer_max_envs), args.steps, args.warmup)
            rows.append((name, envs, a, m))
            print(f"{name:<14}{envs:>6}{a:>11.1f}{m:>11.1f}{a / m:>14.2f}", flush=True)
    return rows


if __name__ == "__main__":
    main()
