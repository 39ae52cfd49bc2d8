"""`ArticulationControl`: per-step inputs, per env (E envs, L links, n dofs); owned by a block, viewed per
articulation like the state."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from ..description.articulation import Articulation
from .state import columns
from .structs import bundle


@wp.struct
class ControlArrays:
    """The control arrays bundled for the step kernel (fields as in ArticulationControl)."""

    joint_force: wp.array2d(dtype=float)
    joint_target_position: wp.array2d(dtype=float)
    joint_target_velocity: wp.array2d(dtype=float)
    link_force: wp.array2d(dtype=wp.vec3)
    link_torque: wp.array2d(dtype=wp.vec3)
    kinematic_target: wp.array2d(dtype=wp.transform)
    kinematic_pending: wp.array2d(dtype=int)


@dataclass
class ArticulationControl:
    joint_force: wp.array  # (E, n) float32 [N or Nm]: persistent joint force, applied every step until changed
    joint_target_position: wp.array  # (E, n) float32 [rad or m]: drive targets
    joint_target_velocity: wp.array  # (E, n) float32 [rad/s or m/s]: drive target velocities
    link_force: wp.array  # (E, L) vec3 [N]: world force at the COM, for the next step only
    link_torque: wp.array  # (E, L) vec3 [Nm]: world torque, for the next step only
    kinematic_target: wp.array  # (E, T) transform: a kinematic root's pose at the end of the next step
    kinematic_pending: wp.array  # (E, T) int32: 1 while a target waits for the next step (the step clears it)
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


def build_control(model, num_envs: int, device) -> ArticulationControl:
    """Zeroed control arrays for a model (one articulation or a forest)."""
    e, n, nl = num_envs, model.dof_count, model.link_count
    c = ArticulationControl(
        joint_force=wp.zeros((e, n), dtype=wp.float32, device=device),
        joint_target_position=wp.zeros((e, n), dtype=wp.float32, device=device),
        joint_target_velocity=wp.zeros((e, n), dtype=wp.float32, device=device),
        link_force=wp.zeros((e, nl), dtype=wp.vec3, device=device),
        link_torque=wp.zeros((e, nl), dtype=wp.vec3, device=device),
        kinematic_target=wp.zeros((e, model.tree_count), dtype=wp.transform, device=device),
        kinematic_pending=wp.zeros((e, model.tree_count), dtype=wp.int32, device=device),
    )
    c.bundle()
    return c


def control_view(c: ArticulationControl, dofs: tuple, links: tuple, tree: int) -> ArticulationControl:
    """One tree's part of a block's control arrays (views)."""
    def part(name):
        if name.startswith("link"):
            return links
        return (tree, tree + 1) if name.startswith("kinematic") else dofs

    v = ArticulationControl(**{name: columns(getattr(c, name), *part(name)) for name in ControlArrays.vars})
    v.bundle()
    return v


def write_description_targets(c: ArticulationControl, art: Articulation):
    pos, vel = description_targets(art)
    e = c.joint_force.shape[0]
    c.joint_target_position.assign(np.tile(pos, (e, 1)))
    c.joint_target_velocity.assign(np.tile(vel, (e, 1)))
