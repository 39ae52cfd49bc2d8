"""Deadzone controllers and a secondary target (the ODE paper, end of section S1), solved by the direct solver.

A two-link arm hangs from a fixed base on two hinges (about y), gravity along -z. Each hinge has a deadzone
controller: the shoulder may swing freely within [-0.4, 0.4] rad and is pushed back beyond (k = 400 N m/rad, no
damping, at most 60 N m); the elbow has the band [-1, 1] rad and, while inside it, pursues the secondary
target 0.6 rad with a weak, capped spring (k2 = 5, d2 = 1, at most 2 N m). The arm starts at shoulder 1.2 rad, far
outside its band: the shoulder controller pushes it back (at its 60 N m cap) and then lets it swing freely
inside, bouncing off the band's undamped edges; the elbow moves towards its secondary target as far as its 2 N m
allow against gravity. The script prints the swing and returns the joint angles and the controllers' torques.

    python examples/deadzone_controller.py [--seconds 4]
"""

from __future__ import annotations

import argparse

import numpy as np

import artic
from artic import Axis, CacheFlag, Transform

DT = 0.005


def build():
    art = artic.Articulation("arm")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    base = art.create_link(None, Transform((0.0, 0.0, 2.0)), "base")
    upper = art.create_link(base, None, "upper")
    lower = art.create_link(upper, None, "lower")
    for link, length in ((upper, 0.6), (lower, 0.5)):
        link.attach_shape(artic.Box((0.03, 0.03, length / 2)))
        link.update_mass_and_inertia(1000.0)
        link.linear_damping = link.angular_damping = 0.0
        j = link.inbound_joint
        j.set_joint_type(artic.JointType.REVOLUTE)
        j.set_motion(Axis.SWING1, artic.Motion.FREE)  # about y
        j.friction_coefficient = 0.0
        j.child_pose = Transform((0.0, 0.0, length / 2))  # hinge at the link's top end
    lower.inbound_joint.parent_pose = Transform((0.0, 0.0, -0.3))
    upper.inbound_joint.set_deadzone(Axis.SWING1, artic.Deadzone(-0.4, 0.4, 400.0, 0.0, max_force=60.0))
    lower.inbound_joint.set_deadzone(
        Axis.SWING1,
        artic.Deadzone(
            -1.0,
            1.0,
            400.0,
            0.0,
            max_force=60.0,
            secondary_target=0.6,
            secondary_stiffness=5.0,
            secondary_damping=1.0,
            secondary_max_force=2.0,
        ),
    )
    art.sleep_threshold = 0.0
    scene = artic.Scene(1, solver_type=artic.SolverType.DIRECT)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[0] = [1.2, 0.0]
    art.apply_cache(cache, CacheFlag.POSITION)
    return art, scene


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="simulated time [s] (default 4)")
    args = parser.parse_args(argv)
    art, scene = build()
    cache = art.create_cache()
    q, torque = [], []
    for _ in range(int(round(args.seconds / DT))):
        scene.step(DT)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q.append(cache.joint_position[0].copy())
        torque.append(scene.get_solver_report(art)["deadzone_impulse"][0] / DT)
    q, torque = np.array(q), np.array(torque)
    back = int(np.argmax(np.abs(q[:, 0]) <= 0.4))
    print(
        f"shoulder back inside [-0.4, 0.4] rad after {back * DT:.2f} s; afterwards within "
        f"[{q[back:, 0].min():.3f}, {q[back:, 0].max():.3f}] rad; elbow ends at {q[-1, 1]:.3f} rad "
        f"(secondary target 0.6)"
    )
    return q, torque


if __name__ == "__main__":
    main()
