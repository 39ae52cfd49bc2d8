"""`ArticulationState`: what evolves, per env (E envs, L links, n dofs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from .build.articulation import Articulation
from .structs import bundle


@wp.struct
class StateArrays:
    """The state arrays bundled for the step kernel (fields as in ArticulationState)."""

    joint_q: wp.array2d(dtype=float)
    joint_qd: wp.array2d(dtype=float)
    root_pose: wp.array(dtype=wp.transform)
    root_lin_vel: wp.array(dtype=wp.vec3)
    root_ang_vel: wp.array(dtype=wp.vec3)
    link_pose: wp.array2d(dtype=wp.transform)
    link_velocity: wp.array2d(dtype=wp.spatial_vector)
    wake_counter: wp.array(dtype=float)
    sleeping: wp.array(dtype=int)


@dataclass
class ArticulationState:
    joint_q: wp.array  # (E, n) float32 [rad or m]: joint positions, cache order
    joint_qd: wp.array  # (E, n) float32 [rad/s or m/s]: joint velocities
    root_pose: wp.array  # (E,) transform: root link actor frame in the world
    root_lin_vel: wp.array  # (E,) vec3 [m/s]: root COM linear velocity, world
    root_ang_vel: wp.array  # (E,) vec3 [rad/s]: root angular velocity, world
    link_pose: wp.array  # (E, L) transform: link actor frames in the world (derived from the above)
    link_velocity: wp.array  # (E, L) spatial_vector: (linear at COM, angular) [m/s, rad/s], world (derived)
    wake_counter: wp.array  # (E,) float32 [s]: time left before the articulation may sleep (PhysX wake counter)
    sleeping: wp.array  # (E,) int32: 1 while asleep (not simulated, velocities zero)
    arrays: StateArrays = None  # the arrays above bundled for kernels

    def bundle(self):
        self.arrays = bundle(StateArrays, self)


def description_state(art: Articulation) -> dict:
    """The description's state (joint positions/velocities set on joints, root pose) as one env's NumPy arrays."""
    topo = art._topology()
    q = np.zeros(art.dof_count, np.float32)
    qd = np.zeros(art.dof_count, np.float32)
    for i, link in enumerate(topo.links):
        for k, a in enumerate(topo.dof_axes[i]):
            q[topo.dof_start[i] + k] = link.inbound_joint.get_joint_position(a)
            qd[topo.dof_start[i] + k] = link.inbound_joint.get_joint_velocity(a)
    return {"joint_q": q, "joint_qd": qd, "root_pose": art.root_global_pose.as_array().astype(np.float32)}


def build_state(art: Articulation, num_envs: int, device) -> ArticulationState:
    s = ArticulationState(
        joint_q=wp.zeros((num_envs, art.dof_count), dtype=wp.float32, device=device),
        joint_qd=wp.zeros((num_envs, art.dof_count), dtype=wp.float32, device=device),
        root_pose=wp.zeros(num_envs, dtype=wp.transform, device=device),
        root_lin_vel=wp.zeros(num_envs, dtype=wp.vec3, device=device),
        root_ang_vel=wp.zeros(num_envs, dtype=wp.vec3, device=device),
        link_pose=wp.zeros((num_envs, art.link_count), dtype=wp.transform, device=device),
        link_velocity=wp.zeros((num_envs, art.link_count), dtype=wp.spatial_vector, device=device),
        wake_counter=wp.full(num_envs, art.wake_counter, dtype=wp.float32, device=device),
        sleeping=wp.zeros(num_envs, dtype=wp.int32, device=device),
    )
    s.bundle()
    write_description_state(s, art)
    return s


def write_description_state(s: ArticulationState, art: Articulation):
    """Copy the description's state into every env (used on add and when a joint setter changes it)."""
    d = description_state(art)
    e = s.joint_q.shape[0]
    s.joint_q.assign(np.tile(d["joint_q"], (e, 1)))
    s.joint_qd.assign(np.tile(d["joint_qd"], (e, 1)))
    s.root_pose.assign(np.tile(d["root_pose"], (e, 1)))
