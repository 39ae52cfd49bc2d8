"""Scenes for the direct solver's tests (tests/solvers/test_direct.py): each builder takes the solver and the
iteration counts, so that the same scene runs under DIRECT and under PGS run to convergence."""

from __future__ import annotations

import numpy as np

import artic
from artic import Axis, Box, CacheFlag, Drive, DriveType, JointType, Limit, Motion, Transform

CONVERGED = (255, 255)  # PGS's largest iteration counts: position and velocity iterations each converge the step
PANDA_Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8, 0.02, 0.02])  # inside every limit of the panda


def chain(solver, iterations):
    """A fixed-base chain of three 0.5 m links about +y under gravity, PhysX defaults otherwise (link cfm 0.025,
    joint friction coefficient 0.05): a force drive (50, 5) to 0.5 rad on the first joint, a [-0.3, 0.3] limit on
    the second and a [-0.5, 0.2] limit on the third, with a velocity-only acceleration drive pushing it at 1 rad/s
    into its upper limit. Both limits are reached within the first 0.2 s and held."""
    art = artic.Articulation("chain")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(*iterations)
    art.sleep_threshold = 0.0
    parent = art.create_link(None, Transform(), "root")
    for i in range(3):
        link = art.create_link(parent, None, f"link{i}")
        link.mass = 1.0 + i
        link.inertia = (0.01, 0.05, 0.05)
        j = link.inbound_joint
        j.set_joint_type(JointType.REVOLUTE)
        if i:
            j.parent_pose = Transform((0.25, 0.0, 0.0))
        j.child_pose = Transform((-0.25, 0.0, 0.0))
        if i == 0:
            j.set_motion(Axis.SWING1, Motion.FREE)
            j.set_drive_params(Axis.SWING1, Drive(50.0, 5.0, 1e3, DriveType.FORCE))
            j.set_drive_target(Axis.SWING1, 0.5)
        else:
            j.set_motion(Axis.SWING1, Motion.LIMITED)
            j.set_limit_params(Axis.SWING1, Limit(-0.3, 0.3) if i == 1 else Limit(-0.5, 0.2))
        if i == 2:
            j.set_drive_params(Axis.SWING1, Drive(0.0, 2.0, 1e3, DriveType.ACCELERATION))
            j.set_drive_velocity(Axis.SWING1, 1.0)
        parent = link
    scene = artic.Scene(1, solver_type=solver)
    scene.add_articulation(art)
    return art, scene


def panda(solver, iterations, robot_path):
    """example-robot-data's panda (fixed base, URDF damping as viscous joint friction, the fingers coupled by the
    URDF mimic) from PANDA_Q0, its seven arm joints on force drives (400, 40, 87 N m) to targets 0.1 rad off
    PANDA_Q0, slow enough that no velocity limit engages."""
    art = artic.load_urdf(str(robot_path))
    art.set_solver_iteration_counts(*iterations)
    art.sleep_threshold = 0.0
    for i in range(1, 8):
        j = art.get_joint(f"panda_joint{i}")
        j.set_drive_params(Axis.TWIST, Drive(400.0, 40.0, 87.0, DriveType.FORCE))
        j.set_drive_target(Axis.TWIST, PANDA_Q0[i - 1] + 0.1 * (-1) ** i)
    scene = artic.Scene(1, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[:] = PANDA_Q0
    art.apply_cache(cache, CacheFlag.POSITION)
    return art, scene


def ball_chain(solver, iterations, masses, spacing=0.5):
    """Free bodies (inertia 0.01 m about each axis) hanging in a vertical line below the origin, `spacing` apart,
    joined by ball joints (SphericalJoint): the first to the world at the origin, each other one to the body above
    at that body's centre. Returns (scene, bodies, joints)."""
    scene = artic.Scene(1, solver_type=solver)
    bodies, joints = [], []
    for i, m in enumerate(masses):
        b = artic.RigidDynamic(Transform((0.0, 0.0, -spacing * (i + 1))), f"bob{i}")
        b.attach_shape(artic.Sphere(0.05, collision_group=0, collision_mask=0))
        b.link.mass = m
        b.link.inertia = (0.01 * m, 0.01 * m, 0.01 * m)
        b.link.linear_damping = b.link.angular_damping = 0.0
        b.articulation.sleep_threshold = 0.0
        b.set_solver_iteration_counts(*iterations)
        scene.add_actor(b)
        bodies.append(b)
    for i, b in enumerate(bodies):
        joint = artic.SphericalJoint(
            b, bodies[i - 1] if i else None, Transform((0.0, 0.0, -spacing * i)), name=f"ball{i}"
        )
        scene.add_joint(joint)
        joints.append(joint)
    return scene, bodies, joints


def biped(solver, iterations):
    """A two-legged rig standing on the ground plane: a floating pelvis (12 kg, COM at the root) carrying a 6 kg
    payload on a fixed joint at (0.06, 0.05, 0.1), and two 5 kg legs on revolute hips (about y, at y = +-0.1),
    each held at 0 by a stiff force drive (1e4, 1e2), each ending in a 0.2 x 0.1 x 0.05 m box foot whose sole
    touches the ground at the start. The COM is off the middle of both feet, so the ground-reaction split between
    them is uneven. Returns (art, scene, masses and COM offsets per link in link order)."""
    art = artic.Articulation("biped")
    art.set_solver_iteration_counts(*iterations)
    art.sleep_threshold = 0.0
    pelvis = art.create_link(None, Transform((0.0, 0.0, 0.9)), "pelvis")
    pelvis.mass = 12.0
    pelvis.inertia = (0.2, 0.2, 0.2)
    payload = art.create_link(pelvis, None, "payload")
    payload.mass = 6.0
    payload.inertia = (0.02, 0.02, 0.02)
    pj = payload.inbound_joint
    pj.set_joint_type(JointType.FIX)
    pj.parent_pose = Transform((0.06, 0.05, 0.1))
    coms = [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)]
    for side, y in (("left", 0.1), ("right", -0.1)):
        leg = art.create_link(pelvis, None, f"{side}_leg")
        leg.mass = 5.0
        leg.inertia = (0.3, 0.3, 0.02)
        leg.cmass_local_pose = Transform((0.0, 0.0, -0.45))
        leg.attach_shape(Box((0.1, 0.05, 0.025), local_pose=Transform((0.0, 0.0, -0.875))))
        j = leg.inbound_joint
        j.set_joint_type(JointType.REVOLUTE)
        j.parent_pose = Transform((0.0, y, 0.0))
        j.set_motion(Axis.SWING1, Motion.FREE)
        j.set_drive_params(Axis.SWING1, Drive(1e4, 1e2, 1e6, DriveType.FORCE))
        j.set_drive_target(Axis.SWING1, 0.0)
        coms.append((0.0, 0.0, -0.45))
    for link in art.get_links():
        link.linear_damping = link.angular_damping = 0.0
    scene = artic.Scene(1, solver_type=solver)
    scene.add_actor(artic.create_ground_plane(material=artic.Material(0.8, 0.8, 0.0)))
    scene.add_articulation(art)
    return art, scene, np.array([lk.mass for lk in art.get_links()]), np.array(coms)


def slider_with_soft_range(solver, mass, low, high, compliance, damping, envs=1):
    """A free body of `mass` (COM at its origin) on a SliderJoint to the world along z, gravity -z, its range
    [low, high] compliant (the range constraint's compliance and damping; the five bilateral constraints hard), no
    link damping, in `envs` envs. The slider coordinate is the body's height above its start."""
    scene = artic.Scene(envs, solver_type=solver)
    b = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "slider_body")
    b.attach_shape(artic.Sphere(0.05, collision_group=0, collision_mask=0))
    b.link.mass = mass
    b.link.inertia = (0.01, 0.01, 0.01)
    b.link.linear_damping = b.link.angular_damping = 0.0
    b.articulation.sleep_threshold = 0.0
    scene.add_actor(b)
    joint = artic.SliderJoint(b, None, Transform((0.0, 0.0, 1.0)), name="slider")
    joint.set_coordinate_range(0, low, high)
    joint.set_compliance([0.0] * 5 + [compliance])
    joint.set_damping([0.0] * 5 + [damping])
    scene.add_joint(joint)
    return scene, b, joint
