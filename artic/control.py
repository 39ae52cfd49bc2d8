"""`ArticulationControl`: per-step inputs, per env (E envs, L links, n dofs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from .build.articulation import Articulation
from .structs import bundle


@wp.struct
class ControlArrays:
    """The control arrays bundled for the step kernel (fields as in ArticulationControl)."""

    joint_force: wp.array2d(dtype=float)
    joint_target_position: wp.array2d(dtype=float)
    joint_target_velocity: wp.array2d(dtype=float)
    link_force: wp.array2d(dtype=wp.vec3)
    link_torque: wp.array2d(dtype=wp.vec3)


@dataclass
class ArticulationControl:
    joint_force: wp.array  # (E, n) float32 [N or Nm]: persistent joint force, applied every step until changed
    joint_target_position: wp.array  # (E, n) float32 [rad or m]: drive targets
    joint_target_velocity: wp.array  # (E, n) float32 [rad/s or m/s]: drive target velocities
    link_force: wp.array  # (E, L) vec3 [N]: world force at the COM, for the next step only
    link_torque: wp.array  # (E, L) vec3 [Nm]: world torque, for the next step only
    arrays: ControlArrays = None  # the arrays above bundled for kernels

    def bundle(self):
        self.arrays = bundle(ControlArrays, self)


def description_targets(art: Articulation):
    topo = art._topology()
    pos = np.zeros(art.dof_count, np.float32)
    vel = np.zeros(art.dof_count, np.float32)
    for i, link in enumerate(topo.links):
        for k, a in enumerate(topo.dof_axes[i]):
            pos[topo.dof_start[i] + k] = link.inbound_joint.get_drive_target(a)
            vel[topo.dof_start[i] + k] = link.inbound_joint.get_drive_velocity(a)
    return pos, vel


def build_control(art: Articulation, num_envs: int, device) -> ArticulationControl:
    c = ArticulationControl(
        joint_force=wp.zeros((num_envs, art.dof_count), dtype=wp.float32, device=device),
        joint_target_position=wp.zeros((num_envs, art.dof_count), dtype=wp.float32, device=device),
        joint_target_velocity=wp.zeros((num_envs, art.dof_count), dtype=wp.float32, device=device),
        link_force=wp.zeros((num_envs, art.link_count), dtype=wp.vec3, device=device),
        link_torque=wp.zeros((num_envs, art.link_count), dtype=wp.vec3, device=device),
    )
    c.bundle()
    write_description_targets(c, art)
    return c


def write_description_targets(c: ArticulationControl, art: Articulation):
    pos, vel = description_targets(art)
    e = c.joint_force.shape[0]
    c.joint_target_position.assign(np.tile(pos, (e, 1)))
    c.joint_target_velocity.assign(np.tile(vel, (e, 1)))
