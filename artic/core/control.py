"""`ArticulationControl`: per-step inputs, per env (E envs, L links, n dofs); owned by a block, viewed per
articulation like the state."""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

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
    link_adhesion: wp.array2d(dtype=float)
    kinematic_target: wp.array2d(dtype=wp.transform)
    kinematic_pending: wp.array2d(dtype=int)


@dataclass
class ArticulationControl:
    joint_force: wp.array  # (E, n) float32 [N or Nm]: persistent joint force, applied every step until changed
    joint_target_position: wp.array  # (E, n) float32 [rad or m]: drive targets
    joint_target_velocity: wp.array  # (E, n) float32 [rad/s or m/s]: drive target velocities
    link_force: wp.array  # (E, L) vec3 [N]: world force at the COM, for the next step only
    link_torque: wp.array  # (E, L) vec3 [Nm]: world torque, for the next step only
    # (E, L) float32 [N]: MuJoCo's adhesion (a body transmission), persistent: the link pulls on the bodies it is in
    # contact with by this force, shared by its contacts (step_kernel._adhesion)
    link_adhesion: wp.array
    kinematic_target: wp.array  # (E, T) transform: a kinematic root's pose at the end of the next step
    kinematic_pending: wp.array  # (E, T) int32: 1 while a target waits for the next step (the step clears it)
    arrays: ControlArrays = None  # the arrays above bundled for kernels

    def bundle(self) -> None:
        self.arrays = bundle(ControlArrays, self)


def control_view(c: ArticulationControl, dofs: tuple, links: tuple, tree: int) -> ArticulationControl:
    """One tree's part of a block's control arrays (views)."""

    def part(name):
        if name.startswith("link"):
            return links
        return (tree, tree + 1) if name.startswith("kinematic") else dofs

    v = ArticulationControl(**{name: columns(getattr(c, name), *part(name)) for name in ControlArrays.vars})
    v.bundle()
    return v
