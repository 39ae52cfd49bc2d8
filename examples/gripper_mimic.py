"""A parallel gripper whose fingers are coupled by a mimic joint, and a geared pair coupled by a fixed tendon.

The shipped arm6 robot's URDF says <mimic joint="finger_left_joint" multiplier="1"> on the right finger: artic
turns it into a hard mimic joint. Only the left finger is driven (open, close, open); the right one follows.
Beside it, two wheels on one base are geared 2:1 by a fixed tendon (L = q1 - 0.5 q2 pulled to 0).

    python examples/gripper_mimic.py [--seconds 3] [--plot gripper.png]
"""

from __future__ import annotations

import argparse

import numpy as np

import artic
from artic import ArticulationFlag, Axis, CacheFlag, Drive, DriveType, JointType, Motion, Transform
from artic.assets import model_path


def gripper(seconds: float, dt: float):
    art = artic.load_urdf(model_path("arm6"))
    art.set_solver_iteration_counts(16, 1)
    left = art.get_joint("finger_left_joint")
    left.set_drive_params(Axis.X, Drive(800.0, 40.0, 40.0, DriveType.FORCE))
    for name in art.dof_names[:6]:  # hold the arm still
        art.get_joint(name).set_drive_params(Axis.TWIST, Drive(2e4, 400.0, 500.0, DriveType.FORCE))
    scene = artic.Scene(1)
    scene.add_articulation(art)
    cache = art.create_cache()
    t = np.arange(1, int(seconds / dt) + 1) * dt
    q = []
    for tk in t:
        cache.joint_target_positions[0, 6] = 0.04 * (tk % 2.0 < 1.0)  # open for 1 s, close for 1 s
        art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q.append(cache.joint_position[0, 6:8].copy())
    return t, np.array(q)


def geared_wheels(seconds: float, dt: float):
    art = artic.Articulation("gears")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(8, 1)
    base = art.create_link(None, Transform(), "base")
    wheels = []
    for i, x in enumerate((-0.3, 0.3)):
        w = art.create_link(base, None, f"wheel{i}")
        w.mass, w.inertia = 1.0, (0.02, 0.01, 0.01)
        j = w.inbound_joint
        j.parent_pose = Transform((x, 0.0, 0.0))
        j.set_joint_type(JointType.REVOLUTE_UNWRAPPED)
        j.set_motion(Axis.TWIST, Motion.FREE)
        j.friction_coefficient = 0.0
        wheels.append(w)
    wheels[0].inbound_joint.set_drive_params(Axis.TWIST, Drive(0.0, 2.0, 10.0, DriveType.FORCE))
    wheels[0].inbound_joint.set_drive_velocity(Axis.TWIST, 3.0)  # spin wheel 0 at 3 rad/s
    tendon = art.create_fixed_tendon()
    tendon.stiffness, tendon.damping = 500.0, 20.0
    root = tendon.create_tendon_joint(None, Axis.TWIST, 1.0, 1.0, base)
    tendon.create_tendon_joint(root, Axis.TWIST, 1.0, 1.0, wheels[0])
    tendon.create_tendon_joint(root, Axis.TWIST, -0.5, -0.5, wheels[1])
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0))
    scene.add_articulation(art)
    cache = art.create_cache()
    t = np.arange(1, int(seconds / dt) + 1) * dt
    q = []
    for _ in t:
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q.append(cache.joint_position[0].copy())
    return t, np.array(q)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dt", type=float, default=1.0 / 120.0)
    parser.add_argument("--plot", default="gripper.png")
    args = parser.parse_args(argv)
    tg, qg = gripper(args.seconds, args.dt)
    tw, qw = geared_wheels(args.seconds, args.dt)
    print(
        f"gripper: max |q_right - q_left| = {np.abs(qg[:, 1] - qg[:, 0]).max():.2e} m, "
        f"finger travel {np.ptp(qg[:, 0]):.3f} m"
    )
    print(
        f"gears: max |q0 - 0.5 q1| = {np.abs(qw[:, 0] - 0.5 * qw[:, 1]).max():.3f} rad while wheel 0 turned "
        f"{qw[-1, 0]:.2f} rad and wheel 1 {qw[-1, 1]:.2f} rad"
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a0, a1) = plt.subplots(1, 2, figsize=(11, 4))
    a0.plot(tg, qg[:, 0], label="left finger (driven)")
    a0.plot(tg, qg[:, 1], "--", label="right finger (mimic)")
    a0.set_xlabel("time [s]")
    a0.set_ylabel("finger position [m]")
    a0.set_title("arm6 gripper: URDF <mimic> as a hard mimic joint")
    a0.legend()
    a1.plot(tw, qw[:, 0], label="wheel 0 (velocity-driven)")
    a1.plot(tw, qw[:, 1], label="wheel 1")
    a1.plot(tw, 2.0 * qw[:, 0], ":", label="2 x wheel 0")
    a1.set_xlabel("time [s]")
    a1.set_ylabel("angle [rad]")
    a1.set_title("2:1 gear pair: fixed tendon q0 - 0.5 q1 -> 0")
    a1.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    print(f"plot written to {args.plot}")
    return qg, qw


if __name__ == "__main__":
    main()
