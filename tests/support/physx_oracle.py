"""Runs the same fixed-base robot in artic and in PhysX 5.3 (through SAPIEN) with every setting mirrored:
dt, iteration counts, solver, gravity, drives (force mode, limits as forces), link damping and velocity caps,
joint friction coefficient, max joint velocities, armature 0, collisions off. Returns both joint trajectories."""

from __future__ import annotations

import re
import tempfile
import warnings

import numpy as np

import artic
from artic import CacheFlag, Drive, DriveType, FrictionParams, SolverType


def _strip_urdf(path) -> str:
    """SAPIEN's loader builds render meshes and collision shapes: keep only links, joints and inertials."""
    with open(path) as f:
        txt = f.read()
    txt = re.sub(r"<visual>.*?</visual>", "", txt, flags=re.S)
    txt = re.sub(r"<collision>.*?</collision>", "", txt, flags=re.S)
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(txt)
    return f.name


def physx_robot(urdf_path: str, solver: SolverType, dt: float, gravity, iters=(4, 1)):
    """(SAPIEN scene, fixed-base articulation) of a URDF on PhysX's CPU backend with the given solver settings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sapien
        import sapien.physx as px

        cfg = px.PhysxSceneConfig()
        cfg.enable_tgs = solver == SolverType.TGS
        cfg.gravity = np.asarray(gravity, dtype=float)
        px.set_scene_config(cfg)
        scene = sapien.Scene([px.PhysxCpuSystem()])
        scene.set_timestep(dt)
        loader = scene.create_urdf_loader()
        loader.fix_root_link = True
        robot = loader.load(urdf_path)
    robot.set_solver_position_iterations(iters[0])
    robot.set_solver_velocity_iterations(iters[1])
    return scene, robot


def trajectories(
    path,
    q0,
    target_fn,
    kp,
    kd,
    solver: SolverType,
    steps: int,
    dt: float,
    iters=(4, 1),
    friction=0.05,
    damping=0.05,
    max_lin=100.0,
    max_ang=50.0,
):
    """(artic q, PhysX q), each (steps, dofs), in artic's dof order. target_fn(t) -> targets (dofs,)."""
    scene, robot = physx_robot(_strip_urdf(path), solver, dt, (0.0, 0.0, -9.81), iters)
    art = artic.load_urdf(path)
    art.set_solver_iteration_counts(*iters)
    artic_scene = artic.Scene(1, gravity=(0.0, 0.0, -9.81), solver_type=solver)
    names = art.dof_names
    pj = {j.name: j for j in robot.active_joints}
    order = [list(pj).index(n) for n in names]
    for link in robot.links:
        link.linear_damping = damping
        link.angular_damping = damping
        link.max_linear_velocity = max_lin
        link.max_angular_velocity = max_ang
    for link in art.get_links():
        link.linear_damping = link.angular_damping = damping
        link.max_linear_velocity, link.max_angular_velocity = max_lin, max_ang
    for n in names:
        j = art.get_joint(n)
        ax = j.dof_axes()[0]
        j.friction_coefficient = friction
        j.set_friction_params(ax, FrictionParams())  # PhysX 5.3 has only the coefficient model
        j.set_drive_params(ax, Drive(kp, kd, 1e6, DriveType.FORCE))
        vmax = j.get_max_joint_velocity(ax)
        pj[n].set_drive_properties(kp, kd, 1e6, "force")
        pj[n].set_friction(friction)
        pj[n].set_max_velocity(vmax)
        pj[n].set_armature(np.zeros(1))
    artic_scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[0] = q0
    art.apply_cache(cache, CacheFlag.POSITION)
    qp = np.zeros(robot.dof)
    qp[order] = q0
    robot.set_qpos(qp)
    robot.set_qvel(np.zeros(robot.dof))
    out_a, out_p = [], []
    for k in range(steps):
        target = np.asarray(target_fn(k * dt))
        cache.joint_target_positions[0] = target
        art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
        for n, t in zip(names, target, strict=True):
            pj[n].set_drive_target(t)
        artic_scene.step(dt)
        scene.step()
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        out_a.append(cache.joint_position[0].astype(float).copy())
        out_p.append(np.asarray(robot.qpos, dtype=float)[order])
    return np.array(out_a), np.array(out_p)
