"""Small articulations of physx-notes section 8 ("clean": no damping, cfm 0, friction coefficient 0)."""

from __future__ import annotations

import numpy as np

import artic
from artic import ArticulationFlag, Axis, CacheFlag, Drive, DriveType, JointType, Motion, SolverType, Transform

MAX_F32 = float(np.finfo(np.float32).max)


def clean(link, joint=None):
    link.linear_damping = 0.0
    link.angular_damping = 0.0
    link.cfm_scale = 0.0
    if joint is not None:
        joint.friction_coefficient = 0.0


def prismatic_drive(
    solver=SolverType.PGS,
    iters=(4, 1),
    mass=2.0,
    stiffness=100.0,
    damping=10.0,
    target=1.0,
    target_velocity=0.0,
    drive_type=DriveType.FORCE,
    max_force=MAX_F32,
    forces=False,
    armature=0.0,
    envs=1,
):
    """Notes 8.1: a prismatic X joint, child mass 2, drive (100, 10) to x_T = 1, no gravity."""
    art = artic.Articulation("prismatic")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    if forces:
        art.set_articulation_flag(ArticulationFlag.DRIVE_LIMITS_ARE_FORCES)
    art.set_solver_iteration_counts(*iters)
    root = art.create_link(None, Transform(), "root")
    link = art.create_link(root, None, "slider")
    link.mass = mass
    clean(root)
    clean(link, link.inbound_joint)
    j = link.inbound_joint
    j.set_joint_type(JointType.PRISMATIC)
    j.set_motion(Axis.X, Motion.FREE)
    j.set_drive_params(Axis.X, Drive(stiffness, damping, max_force, drive_type))
    j.set_drive_target(Axis.X, target)
    j.set_drive_velocity(Axis.X, target_velocity)
    j.set_armature(Axis.X, armature)
    scene = artic.Scene(envs, gravity=(0.0, 0.0, 0.0), solver_type=solver)
    scene.add_articulation(art)
    return art, scene


def rod_pendulum(solver=SolverType.PGS, iters=(4, 1), limit=None, friction=None, damping=0.0, coefficient=0.0, envs=1):
    """Notes 8.2: a rod (box 0.5 x 0.05 x 0.05 half extents, mass 1) on a revolute SWING2 (z) joint at its end,
    starting horizontal at rest, gravity -9.81 along y."""
    art = artic.Articulation("rod")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(*iters)
    root = art.create_link(None, Transform(), "root")
    link = art.create_link(root, None, "rod")
    link.mass = 1.0
    izz = 1.0 / 12.0 * (1.0**2 + 0.1**2)
    link.inertia = (1.0 / 12.0 * 0.02, izz, izz)
    clean(root)
    clean(link, link.inbound_joint)
    link.linear_damping = link.angular_damping = damping
    j = link.inbound_joint
    j.child_pose = Transform((-0.5, 0.0, 0.0))
    j.set_joint_type(JointType.REVOLUTE)
    j.set_motion(Axis.SWING2, Motion.LIMITED if limit else Motion.FREE)
    if limit:
        j.set_limit_params(Axis.SWING2, artic.Limit(*limit))
    j.friction_coefficient = coefficient
    if friction:
        j.set_friction_params(Axis.SWING2, artic.FrictionParams(*friction))
    scene = artic.Scene(envs, gravity=(0.0, -9.81, 0.0), solver_type=solver)
    scene.add_articulation(art)
    return art, scene


def run(art, scene, steps, dt=1.0 / 60.0):
    """Positions and velocities of every dof after each step: arrays (steps, envs, dofs)."""
    cache = art.create_cache()
    qs, qds = [], []
    for _ in range(steps):
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        qs.append(cache.joint_position.copy())
        qds.append(cache.joint_velocity.copy())
    return np.array(qs, dtype=float), np.array(qds, dtype=float)
