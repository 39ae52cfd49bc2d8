"""`ArticulationState`: what evolves, per env (E envs, L links, n dofs, T trees).

A block (block.py) owns the state arrays of its forest; each articulation's state holds views of its columns
(its dofs, links and tree), so the step writes straight into what the articulation reads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from ..description.articulation import Articulation
from .structs import bundle


@wp.struct
class StateArrays:
    """The state arrays bundled for the step kernel (fields as in ArticulationState)."""

    joint_q: wp.array2d(dtype=float)
    joint_qd: wp.array2d(dtype=float)
    root_pose: wp.array2d(dtype=wp.transform)
    root_lin_vel: wp.array2d(dtype=wp.vec3)
    root_ang_vel: wp.array2d(dtype=wp.vec3)
    link_pose: wp.array2d(dtype=wp.transform)
    link_velocity: wp.array2d(dtype=wp.spatial_vector)
    wake_counter: wp.array(dtype=float)
    sleeping: wp.array(dtype=int)
    status: wp.array(dtype=int)
    status_flag: wp.array(dtype=int)


@dataclass
class ArticulationState:
    joint_q: wp.array  # (E, n) float32 [rad or m]: joint positions, cache order
    joint_qd: wp.array  # (E, n) float32 [rad/s or m/s]: joint velocities
    root_pose: wp.array  # (E, T) transform: root link actor frame in the world, per tree
    root_lin_vel: wp.array  # (E, T) vec3 [m/s]: root COM linear velocity, world
    root_ang_vel: wp.array  # (E, T) vec3 [rad/s]: root angular velocity, world
    link_pose: wp.array  # (E, L) transform: link actor frames in the world (derived from the above)
    link_velocity: wp.array  # (E, L) spatial_vector: (linear at COM, angular) [m/s, rad/s], world (derived)
    wake_counter: wp.array  # (E,) float32 [s]: time left before the block may sleep (PhysX wake counter)
    sleeping: wp.array  # (E,) int32: 1 while the block is asleep (not simulated, velocities zero)
    # (E,) int32: 0 while the env's state is finite; +-(1 + the first tree whose state went non-finite: NaN, inf or
    # beyond FINITE_LIMIT) after a step lost it, until a reset writes a finite state; negative until the host has
    # reported it (status.py)
    status: wp.array
    status_flag: wp.array  # (1,) int32: set to 1 by a step in which some env's status changed (read by the host)
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


def build_state(model, num_envs: int, device) -> ArticulationState:
    """Zeroed state arrays for a model (one articulation or a forest)."""
    e, n, nl, nt = num_envs, model.dof_count, model.link_count, model.tree_count
    s = ArticulationState(
        joint_q=wp.zeros((e, n), dtype=wp.float32, device=device),
        joint_qd=wp.zeros((e, n), dtype=wp.float32, device=device),
        root_pose=wp.zeros((e, nt), dtype=wp.transform, device=device),
        root_lin_vel=wp.zeros((e, nt), dtype=wp.vec3, device=device),
        root_ang_vel=wp.zeros((e, nt), dtype=wp.vec3, device=device),
        link_pose=wp.zeros((e, nl), dtype=wp.transform, device=device),
        link_velocity=wp.zeros((e, nl), dtype=wp.spatial_vector, device=device),
        wake_counter=wp.zeros(e, dtype=wp.float32, device=device),
        sleeping=wp.zeros(e, dtype=wp.int32, device=device),
        status=wp.zeros(e, dtype=wp.int32, device=device),
        status_flag=wp.zeros(1, dtype=wp.int32, device=device),
    )
    s.bundle()
    return s


def columns(a: wp.array, start: int, stop: int) -> wp.array:
    """a[:, start:stop] as a view (Warp has no empty slices: an empty range gets its own empty array)."""
    if stop > start:
        return a[:, start:stop]
    return wp.zeros((a.shape[0], 0), dtype=a.dtype, device=a.device)


def state_view(s: ArticulationState, dofs: tuple, links: tuple, tree: int) -> ArticulationState:
    """One tree's part of a block state: views of its dof and link columns and of its root (shape (E, 1))."""
    v = ArticulationState(
        joint_q=columns(s.joint_q, *dofs), joint_qd=columns(s.joint_qd, *dofs),
        root_pose=columns(s.root_pose, tree, tree + 1), root_lin_vel=columns(s.root_lin_vel, tree, tree + 1),
        root_ang_vel=columns(s.root_ang_vel, tree, tree + 1), link_pose=columns(s.link_pose, *links),
        link_velocity=columns(s.link_velocity, *links), wake_counter=s.wake_counter, sleeping=s.sleeping,
        status=s.status, status_flag=s.status_flag)
    v.bundle()
    return v


def write_description_state(s: ArticulationState, art: Articulation):
    """Copy the description's state into every env (used on add and when a joint setter changes it)."""
    d = description_state(art)
    e = s.joint_q.shape[0]
    s.joint_q.assign(np.tile(d["joint_q"], (e, 1)))
    s.joint_qd.assign(np.tile(d["joint_qd"], (e, 1)))
    s.root_pose.assign(np.tile(d["root_pose"], (e, 1)).reshape(e, 1, 7))
