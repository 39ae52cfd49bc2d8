"""`ArticulationState`: what evolves, per env (E envs, L links, n dofs, T trees).

A block (sim/block.py) owns the state arrays of its forest; each articulation's state holds views of its columns
(its dofs, links and tree), so the step writes straight into what the articulation reads."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

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
    # reported it (sim/status.py)
    status: wp.array
    status_flag: wp.array  # (1,) int32: set to 1 by a step in which some env's status changed (read by the host)
    arrays: StateArrays = None  # the arrays above bundled for kernels

    def bundle(self) -> None:
        self.arrays = bundle(StateArrays, self)


def columns(a: wp.array, start: int, stop: int) -> wp.array:
    """a[:, start:stop] as a view (Warp has no empty slices: an empty range gets its own empty array)."""
    if stop > start:
        return a[:, start:stop]
    return wp.zeros((a.shape[0], 0), dtype=a.dtype, device=a.device)


def state_view(s: ArticulationState, dofs: tuple, links: tuple, tree: int) -> ArticulationState:
    """One tree's part of a block state: views of its dof and link columns and of its root (shape (E, 1))."""
    v = ArticulationState(
        joint_q=columns(s.joint_q, *dofs),
        joint_qd=columns(s.joint_qd, *dofs),
        root_pose=columns(s.root_pose, tree, tree + 1),
        root_lin_vel=columns(s.root_lin_vel, tree, tree + 1),
        root_ang_vel=columns(s.root_ang_vel, tree, tree + 1),
        link_pose=columns(s.link_pose, *links),
        link_velocity=columns(s.link_velocity, *links),
        wake_counter=s.wake_counter,
        sleeping=s.sleeping,
        status=s.status,
        status_flag=s.status_flag,
    )
    v.bundle()
    return v
