"""Rigid bodies and the guide's finger for the contact tests."""

from __future__ import annotations

import numpy as np

import artic
from artic import ArticulationFlag, Axis, Drive, DriveType, JointType, Limit, Material, Motion, Transform

G = 9.81


def body(shape, pose=(0.0, 0.0, 1.0), density=1000.0, name="body", sleep=False, material=None):
    """A free body of one shape; `material` (default: the shape's) is given to the shape."""
    if material is not None:
        shape.material = material
    b = artic.RigidDynamic(Transform(pose), name)
    b.attach_shape(shape)
    b.update_mass_and_inertia(density)
    b.link.angular_damping = 0.0
    if not sleep:
        b.articulation.sleep_threshold = 0.0  # the solver must hold it, not the sleep test
    return b


def scene_with_ground(solver=artic.SolverType.PGS, material=None, envs=1, **kw):
    scene = artic.Scene(envs, solver_type=solver, **kw)
    scene.add_actor(artic.create_ground_plane(material=material or Material(0.5, 0.5, 0.0)))
    return scene


def run(scene, bodies, steps, dt, record=None):
    """Step and record (steps, E, 7) poses and (steps, E, 6) velocities of `record` (default: the first body)."""
    rec = record or bodies[0]
    poses, vels = [], []
    for _ in range(steps):
        scene.step(dt)
        poses.append(scene.get_actor_pose(rec))
        vels.append(scene.get_actor_velocity(rec))
    return np.array(poses), np.array(vels)


def finger(
    stiffness, damping, solver=artic.SolverType.PGS, iterations=(4, 1), target=1.0, envs=1, speculative="reachable"
):
    """The guide's simplified finger ("Articulation Drive Stability"): a fixed root, link 1 on the proximal revolute
    joint, link 2 on the distal revolute joint whose lower limit 0 forbids negative angles; both joints turn about
    +y so that positive angles move the fingertip down onto a static box. Links are 0.5 m rods of 1 kg whose only
    shape is the fingertip, a 0.05 m sphere 5 mm above the box. The proximal joint is driven to `target`, far
    beyond first contact (~0.005 rad). speculative: the scene's speculative_contacts."""
    art = artic.Articulation("finger")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(*iterations)
    art.sleep_threshold = 0.0
    root = art.create_link(None, Transform(), "palm")
    l1 = art.create_link(root, Transform((0.25, 0.0, 0.0)), "link1")
    l2 = art.create_link(l1, Transform((0.75, 0.0, 0.0)), "link2")
    for link in (l1, l2):
        link.mass = 1.0
        link.inertia = (1e-3, 0.5 / 12.0 * 0.5, 0.5 / 12.0 * 0.5)
        j = link.inbound_joint
        j.set_joint_type(JointType.REVOLUTE)
        j.parent_pose = Transform((0.25, 0.0, 0.0))
        j.child_pose = Transform((-0.25, 0.0, 0.0))
        j.friction_coefficient = 0.0
    l1.inbound_joint.parent_pose = Transform((0.0, 0.0, 0.0))
    l2.attach_shape(artic.Sphere(0.05, local_pose=Transform((0.25, 0.0, 0.0))))
    prox, dist = l1.inbound_joint, l2.inbound_joint
    prox.set_motion(Axis.SWING1, Motion.FREE)
    prox.set_drive_params(Axis.SWING1, Drive(stiffness, damping, 1e30, DriveType.FORCE))
    prox.set_drive_target(Axis.SWING1, target)
    dist.set_motion(Axis.SWING1, Motion.LIMITED)
    dist.set_limit_params(Axis.SWING1, Limit(0.0, 1.5))
    scene = artic.Scene(envs, solver_type=solver, speculative_contacts=speculative)
    box = artic.RigidStatic(Transform((1.0, 0.0, -0.255)), "box")
    box.attach_shape(artic.Box((0.4, 0.2, 0.2)))
    scene.add_actor(box)
    scene.add_articulation(art)
    return art, scene
