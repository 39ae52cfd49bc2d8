"""The over-constrained four-bar linkage of ArtiSynth's manual (ArtiSynth's joints chapter, 3.3.9).

Four rounded bars (1 m between their pin centres, 0.25 m wide, 0.2 or 0.3 m deep, density 1000) form a square; the
left bar is grounded and the others are free rigid bodies joined at the corners by four hinge joints, which remove
20 degrees of freedom from 18: the linkage keeps one. As in the manual, the hinges' bilateral constraints get
compliance 1e-6 and damping 25000 (`--hard` leaves them rigid). The linkage falls from the square and swings as a
parallelogram through its folded (singular) pose; the script prints and plots the crank angle and the largest joint
error of each hinge.

    python examples/four_bar.py [--seconds 2] [--hard] [--crank DEG] [--plot four_bar.png]
"""

from __future__ import annotations

import argparse

import numpy as np

import artic
from artic import Transform
from artic.math.np_spatial import quat_from_axis_angle, quat_rotate

DENSITY = 1000.0  # [kg/m^3]
COMPLIANCE, DAMPING = 1e-6, 25000.0  # the manual's values [m/N or rad/(N m)], [N s/m or N m s/rad]


def rounded_box(length: float, width: float, depth: float, slices: int = 20) -> np.ndarray:
    """Vertices of ArtiSynth's MeshFactory.createRoundedBox: a box `width` (x) by `depth` (y) whose z ends are
    half-cylinders centred `length` apart."""
    a = np.pi * np.arange(slices + 1) / slices
    r = 0.5 * width
    pts = []
    for end in (1.0, -1.0):
        for x, z in zip(r * np.cos(a), end * (0.5 * length + r * np.sin(a))):
            pts += [(x, -0.5 * depth, z), (x, 0.5 * depth, z)]
    return np.array(pts)


def build_four_bar(
    num_envs: int = 1,
    compliance: float = COMPLIANCE,
    damping: float = DAMPING,
    solver_type=artic.SolverType.PGS,
    iterations=(4, 1),
):
    """(scene, bars, joints): bar 0 a RigidStatic, bars 1-3 RigidDynamic bodies (no link damping, no sleeping),
    hinges joint0..joint3 from bar i (body A) to bar i+1 (body B), frames as in the manual's createJoint."""
    scene = artic.Scene(num_envs, solver_type=solver_type)
    bars = []
    for i, (depth, x, z, deg) in enumerate(
        ((0.2, -0.5, 0.0, 0), (0.3, 0.0, 0.5, 90), (0.2, 0.5, 0.0, 180), (0.3, 0.0, -0.5, 270))
    ):
        pose = Transform((x, 0.0, z), quat_from_axis_angle((0.0, 1.0, 0.0), np.radians(deg)))
        # the bars overlap at their pins and cross when the linkage folds: as in ArtiSynth, they do not collide
        shape = artic.ConvexMesh(rounded_box(1.0, 0.25, depth), collision_group=0, collision_mask=0)
        if i == 0:
            bar = artic.RigidStatic(pose, "link0")  # the grounded bar
            bar.attach_shape(shape)
        else:
            bar = artic.RigidDynamic(pose, f"link{i}")
            bar.attach_shape(shape)
            bar.update_mass_and_inertia(DENSITY)
            bar.link.angular_damping = 0.0
            bar.link.max_angular_velocity = 1e3
            bar.articulation.sleep_threshold = 0.0
            bar.set_solver_iteration_counts(*iterations)
        scene.add_actor(bar)
        bars.append(bar)
    rx = quat_from_axis_angle((1.0, 0.0, 0.0), 0.5 * np.pi)  # the hinge's z axis along the bars' y axis
    joints = []
    for i in range(4):
        joint = artic.HingeJoint.from_body_frames(
            bars[i],
            Transform((0.0, 0.0, 0.5), rx),
            bars[(i + 1) % 4],
            Transform((0.0, 0.0, -0.5), rx),
            name=f"joint{i}",
        )
        joint.set_compliance([compliance] * joint.bilateral_count)
        joint.set_damping([damping] * joint.bilateral_count)
        scene.add_joint(joint)
        joints.append(joint)
    return scene, bars, joints


def crank_angle(scene, bars) -> np.ndarray:
    """(E,) elevation of bar 1 (the top crank) above the horizontal [rad]."""
    poses = scene.get_actor_pose(bars[1])
    u = np.array([quat_rotate(q, (0.0, 0.0, 1.0)) for q in poses[:, 3:]])
    return np.arctan2(u[:, 2], u[:, 0])


def joint_errors(scene, joints) -> np.ndarray:
    """(E, 4) largest translational error |p| of T_err of each hinge [m]."""
    return np.stack([np.linalg.norm(scene.get_joint_frames(j).terr[:, :3], axis=1) for j in joints], axis=1)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated time [s]")
    parser.add_argument("--dt", type=float, default=1e-3, help="time step [s]")
    parser.add_argument("--hard", action="store_true", help="rigid hinges (no compliance)")
    parser.add_argument(
        "--crank",
        type=float,
        default=None,
        help="start with hinge joint0 at this angle [deg] instead of the square (90)",
    )
    parser.add_argument("--plot", default="four_bar.png", help="where to write the plot ('' for none)")
    args = parser.parse_args(argv)
    scene, bars, joints = build_four_bar(1, 0.0 if args.hard else COMPLIANCE, 0.0 if args.hard else DAMPING)
    if args.crank is not None:
        scene.set_joint_coordinates(joints[0], [np.radians(args.crank)])  # the other bars follow
    steps = int(round(args.seconds / args.dt))
    t = np.arange(steps + 1) * args.dt
    angle, theta, errors = [], [], []
    for k in range(steps + 1):
        if k:
            scene.step(args.dt)
        angle.append(crank_angle(scene, bars)[0])
        theta.append(scene.get_joint_coordinates(joints[0])[0, 0])
        errors.append(joint_errors(scene, joints)[0])
    angle, theta, errors = np.unwrap(angle), np.array(theta), np.array(errors)
    print(
        f"four-bar ({'hard' if args.hard else f'compliance {COMPLIANCE:g}, damping {DAMPING:g}'}): crank "
        f"from {np.degrees(angle[0]):.1f} to {np.degrees(angle.min()):.1f} deg, joint0 theta up to "
        f"{np.degrees(theta.max()):.1f} deg, largest joint error {errors.max() * 1e3:.3f} mm"
    )
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a0, a1) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
        a0.plot(t, np.degrees(angle), label="crank elevation (bar 1)")
        a0.plot(t, np.degrees(theta), label="hinge joint0 theta")
        a0.set_ylabel("deg")
        a0.legend()
        for i in range(4):
            a1.plot(t, errors[:, i] * 1e3, label=joints[i].name)
        a1.set_ylabel("joint error [mm]")
        a1.set_xlabel("t [s]")
        a1.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        plt.close(fig)
    return t, angle, theta, errors


if __name__ == "__main__":
    main()
