"""Closed-chain mechanisms for the joint tests and benchmarks: the slider-crank (two ways) and a 15-body ragdoll
(free bodies with body joints, or one articulation)."""

from __future__ import annotations

import numpy as np

import artic
from artic import ArticulationFlag, Axis, Drive, DriveType, JointType, Motion, Transform
from artic.description.body_joints import description_pose
from artic.math.np_spatial import quat_from_axis_angle

MAX_F32 = float(np.finfo(np.float32).max)
RX = quat_from_axis_angle((1.0, 0.0, 0.0), 0.5 * np.pi)  # body-joint hinge z along the world's -y
RZ = quat_from_axis_angle((0.0, 0.0, 1.0), 0.5 * np.pi)  # articulation twist x along the world's y
RY = quat_from_axis_angle((0.0, 1.0, 0.0), 0.5 * np.pi)  # slider z along the world's x
CRANK, ROD = 0.1, 0.3  # [m] crank radius r and connecting-rod length l


def _ghost_box(half_extents, local=None):
    """A box that collides with nothing (the mechanisms' parts overlap at their pins)."""
    return artic.Box(tuple(half_extents), local_pose=local or Transform(), collision_group=0, collision_mask=0)


def _dyn(name, x, half_extents, iterations):
    b = artic.RigidDynamic(Transform((x, 0.0, 0.0)), name)
    b.attach_shape(_ghost_box(half_extents))
    b.update_mass_and_inertia(1000.0)
    b.link.angular_damping = 0.0
    b.link.max_angular_velocity = 1e3
    b.articulation.sleep_threshold = 0.0
    b.set_solver_iteration_counts(*iterations)
    return b


def slider_crank_bodies(omega: float, envs: int = 1, iterations=(16, 1), solver=artic.SolverType.PGS):
    """(scene, crank, slider, joints): crank, rod and slider block as free RigidDynamic bodies in the x-z plane,
    joined by four hinges about y (world-crank, crank-rod, rod-slider) and a slider joint along x (slider-world):
    18 dofs, 20 constraints, 1 dof left. The crank hinge carries a velocity drive to omega [rad/s]."""
    scene = artic.Scene(envs, solver_type=solver)
    crank = _dyn("crank", 0.5 * CRANK, (0.5 * CRANK, 0.01, 0.01), iterations)
    rod = _dyn("rod", CRANK + 0.5 * ROD, (0.5 * ROD, 0.01, 0.01), iterations)
    slider = _dyn("slider", CRANK + ROD, (0.03, 0.02, 0.02), iterations)
    for b in (crank, rod, slider):
        scene.add_actor(b)
    drive = artic.HingeJoint(crank, None, Transform((0.0, 0.0, 0.0), RX), name="crank")
    drive.set_drive_params("theta", Drive(0.0, 50.0, MAX_F32, DriveType.FORCE))
    drive.set_drive_velocity("theta", omega)
    joints = [
        drive,
        artic.HingeJoint(rod, crank, Transform((CRANK, 0.0, 0.0), RX), name="crank_pin"),
        artic.HingeJoint(slider, rod, Transform((CRANK + ROD, 0.0, 0.0), RX), name="wrist_pin"),
        artic.SliderJoint(slider, None, Transform((CRANK + ROD, 0.0, 0.0), RY), name="slide"),
    ]
    for j in joints:
        scene.add_joint(j)
    return scene, crank, slider, joints


def slider_crank_articulation(omega: float, envs: int = 1, iterations=(16, 1), solver=artic.SolverType.PGS):
    """(scene, art, loop): a fixed-base articulation with two branches, crank (revolute about y at the origin,
    velocity-driven to omega) and slider (prismatic along x) carrying the rod (revolute about y at the slider pin);
    a HingeJoint from the rod's free end to the crank pin closes the loop. Dofs: crank, slider, rod."""
    art = artic.Articulation("slider_crank")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(*iterations)
    art.sleep_threshold = 0.0
    root = art.create_link(None, Transform(), "base")
    root.mass, root.inertia = 1.0, (0.01, 0.01, 0.01)
    links = {}
    for name, parent, kind, at, shape in (
        ("crank", root, JointType.REVOLUTE, Transform((0.0, 0.0, 0.0), RZ), (0.5 * CRANK, 0.01, 0.01)),
        ("slider", root, JointType.PRISMATIC, Transform((CRANK + ROD, 0.0, 0.0)), (0.03, 0.02, 0.02)),
        ("rod", "slider", JointType.REVOLUTE, Transform((0.0, 0.0, 0.0), RZ), (0.5 * ROD, 0.01, 0.01)),
    ):
        link = art.create_link(links.get(parent, root), None, name)
        j = link.inbound_joint
        j.set_joint_type(kind)
        j.set_motion(Axis.TWIST if kind == JointType.REVOLUTE else Axis.X, Motion.FREE)
        j.parent_pose = at
        j.child_pose = Transform((0.0, 0.0, 0.0), at.q)
        j.friction_coefficient = 0.0
        offset = {"crank": 0.5 * CRANK, "slider": 0.0, "rod": -0.5 * ROD}[name]
        link.attach_shape(_ghost_box(shape, Transform((offset, 0.0, 0.0))))
        link.update_mass_and_inertia(1000.0)
        link.angular_damping = 0.0
        links[name] = link
    crank = links["crank"].inbound_joint
    crank.set_drive_params(Axis.TWIST, Drive(0.0, 50.0, MAX_F32, DriveType.FORCE))
    crank.set_drive_velocity(Axis.TWIST, omega)
    scene = artic.Scene(envs, solver_type=solver)
    scene.add_articulation(art)
    loop = artic.HingeJoint.from_body_frames(
        links["rod"], Transform((-ROD, 0.0, 0.0), RX), links["crank"], Transform((CRANK, 0.0, 0.0), RX), name="loop"
    )
    scene.add_joint(loop)
    return scene, art, loop


def slider_position(crank_pin_x, crank_pin_z):
    """Closed form: the slider pin's x for the crank pin at (x, z): x + sqrt(l^2 - z^2) (= r cos t +
    sqrt(l^2 - r^2 sin^2 t) for the crank at angle t)."""
    return crank_pin_x + np.sqrt(ROD * ROD - crank_pin_z * crank_pin_z)


# -- ragdoll -------------------------------------------------------------------------------------------------------
_TURN = Transform((0.0, 0.0, 0.0), RY)  # a body hinge's z along the articulation joint's twist x
# name, parent, joint kind, joint position in the parent's frame, box half extents, child above (+1) or below (-1)
RAGDOLL = [
    ("pelvis", None, None, None, (0.15, 0.1, 0.08), 0),
    ("torso", "pelvis", "ball", (0.0, 0.0, 0.1), (0.14, 0.09, 0.18), 1),
    ("head", "torso", "ball", (0.0, 0.0, 0.2), (0.08, 0.08, 0.1), 1),
    ("uarm_l", "torso", "ball", (0.2, 0.0, 0.15), (0.05, 0.05, 0.14), -1),
    ("larm_l", "uarm_l", "hinge", (0.0, 0.0, -0.15), (0.04, 0.04, 0.12), -1),
    ("hand_l", "larm_l", "hinge", (0.0, 0.0, -0.13), (0.02, 0.04, 0.05), -1),
    ("uarm_r", "torso", "ball", (-0.2, 0.0, 0.15), (0.05, 0.05, 0.14), -1),
    ("larm_r", "uarm_r", "hinge", (0.0, 0.0, -0.15), (0.04, 0.04, 0.12), -1),
    ("hand_r", "larm_r", "hinge", (0.0, 0.0, -0.13), (0.02, 0.04, 0.05), -1),
    ("thigh_l", "pelvis", "ball", (0.09, 0.0, -0.09), (0.06, 0.06, 0.2), -1),
    ("shin_l", "thigh_l", "hinge", (0.0, 0.0, -0.21), (0.05, 0.05, 0.2), -1),
    ("foot_l", "shin_l", "hinge", (0.0, 0.0, -0.21), (0.05, 0.1, 0.03), -1),
    ("thigh_r", "pelvis", "ball", (-0.09, 0.0, -0.09), (0.06, 0.06, 0.2), -1),
    ("shin_r", "thigh_r", "hinge", (0.0, 0.0, -0.21), (0.05, 0.05, 0.2), -1),
    ("foot_r", "shin_r", "hinge", (0.0, 0.0, -0.21), (0.05, 0.1, 0.03), -1),
]


def _ragdoll_body(link, half_extents, iterations):
    link.attach_shape(_ghost_box(half_extents))
    link.update_mass_and_inertia(1000.0)
    link.linear_damping = link.angular_damping = 0.0
    link.max_angular_velocity = link.max_linear_velocity = 1e6


def ragdoll_articulation(root_pose: Transform, iterations=(32, 1)):
    """(art, links): the 15-part ragdoll as a floating articulation (spherical and unwrapped revolute joints)."""
    art = artic.Articulation("ragdoll")
    art.set_solver_iteration_counts(*iterations)
    art.sleep_threshold = 0.0
    links = {}
    for name, parent, kind, at, half, up in RAGDOLL:
        if parent is None:
            link = art.create_link(None, root_pose, name)
        else:
            link = art.create_link(links[parent], None, name)
            j = link.inbound_joint
            j.parent_pose = Transform(at)
            j.child_pose = Transform((0.0, 0.0, -up * (half[2] + 0.01)))
            if kind == "ball":
                j.set_joint_type(JointType.SPHERICAL)
                for axis in (Axis.TWIST, Axis.SWING1, Axis.SWING2):
                    j.set_motion(axis, Motion.FREE)
            else:
                j.set_joint_type(JointType.REVOLUTE_UNWRAPPED)
                j.set_motion(Axis.TWIST, Motion.FREE)
            j.friction_coefficient = 0.0
        _ragdoll_body(link, half, iterations)
        links[name] = link
    return art, links


def ragdoll_bodies(scene, links, iterations=(32, 1)):
    """The same ragdoll as 15 free RigidDynamic bodies at the articulation's description poses, joined by
    SphericalJoints and HingeJoints at the articulation's joint frames. Returns (bodies by name, joints)."""
    bodies, joints = {}, []
    for name, parent, kind, _, half, _ in RAGDOLL:
        b = artic.RigidDynamic(description_pose(links[name]), name + "_body")
        _ragdoll_body(b.link, half, iterations)
        b.set_solver_iteration_counts(*iterations)
        b.articulation.sleep_threshold = 0.0
        scene.add_actor(b)
        bodies[name] = b
        if parent is not None:
            j = links[name].inbound_joint
            if kind == "ball":
                joint = artic.SphericalJoint.from_body_frames(b, j.child_pose, bodies[parent], j.parent_pose, name)
            else:
                joint = artic.HingeJoint.from_body_frames(
                    b, j.child_pose * _TURN, bodies[parent], j.parent_pose * _TURN, name
                )
            joints.append(scene.add_joint(joint))
    return bodies, joints
