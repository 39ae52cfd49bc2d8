"""`BodyJointView`: one body joint's columns of its block's arrays (constraints/body_joint_rows.py:
BodyJointArrays), through which the scene reads and writes its coordinates, drive targets, ranges, locks and
enabling per env. Its forces and frames are read by reports.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import warp as wp
from numpy.typing import ArrayLike

from ..constraints.body_joint_report import update_body_joint_coordinates
from ..constraints.body_joint_rows import BodyJointArrays, BodyJointTable
from ..core.data import Kin
from ..core.model import Tree
from ..core.parallel import launch_envs
from ..core.state import StateArrays, columns
from ..core.struct_refs import opt_in as _struct_refs
from ..description.body_joints import JointBase
from ..description.validate import MAX_MAGNITUDE, as_real, real_array
from ..dynamics.kinematics import forward_kinematics_env
from ..errors import ValidationError

_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

if TYPE_CHECKING:
    from .block import Block

_COORD_ARRAYS = ("coord", "target_position", "target_velocity", "range_low", "range_high", "locked", "lock_value")
_JOINT_ARRAYS = ("tcd", "frame_c", "frame_d", "wrench_a", "wrench_b", "enabled", "error", "error_track", "violated")


@wp.kernel
def _body_joint_kinematics(
    env_offset: int, tree: Tree, jt: BodyJointTable, ja: BodyJointArrays, st: StateArrays, kin: Kin
):
    env = env_offset + wp.tid()
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    update_body_joint_coordinates(jt, ja, st.link_pose, env, 0)


def refresh_body_joint_kinematics(block: Block) -> None:
    """Link poses, and every joint's coordinates and frames, from the block's current state."""
    block.sync()  # joint frames moved since the last step (JointBase.set_frames)
    if block.body_joint_table.joint_count:
        launch_envs(
            _body_joint_kinematics,
            block.num_envs,
            [block.model.tree, block.body_joint_table, block.body_joint_arrays, block.state.arrays, block.data.kin],
            block.device,
        )


def per_env_array(
    owner: str,
    what: str,
    values: ArrayLike,
    shape: tuple,
    limit: float | None = MAX_MAGNITUDE,
    open_sides: bool = False,
) -> np.ndarray:
    """`values` given per env (`shape`, E rows) or once for every env (shape[1:]) as a C-contiguous float32 array of
    `shape`: real numbers (not strings, booleans or complex), finite and of magnitude at most `limit`. With
    `open_sides` (range bounds) -inf and inf are kept, and a bound beyond float32's range becomes one of them."""
    expect = f"a finite float32 array of shape {shape} (one row per env) or {shape[1:]} (the same in every env)"
    if open_sides:
        expect = f"a float32 array of shape {shape} or {shape[1:]} (-inf or inf for an open side)"
    a = as_real(owner, what, values, expect)
    if a.shape == shape[1:]:
        a = np.broadcast_to(a, shape)
    if a.shape != shape:
        raise ValidationError(
            f"{owner}: {what} has shape {a.shape}, expected {shape} or {shape[1:]}; it must be {expect}"
        )
    if not open_sides:
        return real_array(owner, what, a, shape, limit)
    if np.any(np.isnan(a)):
        raise ValidationError(f"{owner}: {what} must not be NaN; use -inf or inf for an open side")
    # past float32's range a bound can only mean "open": make it +-inf rather than let the cast overflow with a warning
    a = np.where(np.abs(a) > np.finfo(np.float32).max, np.copysign(np.inf, a), a)
    return np.array(a, dtype=np.float32, order="C")


class BodyJointView:
    def __init__(self, joint: JointBase, num_envs: int):
        self.joint = joint
        self.num_envs = num_envs
        self.block = None

    def bind(self, block: Block) -> None:
        self.block = block
        self.index, (k0, k1), (r0, r1) = block.joint_ranges(self.joint)
        a = block.body_joint_arrays
        self.arrays = {name: columns(getattr(a, name), k0, k1) for name in _COORD_ARRAYS}
        self.arrays.update({name: columns(getattr(a, name), self.index, self.index + 1) for name in _JOINT_ARRAYS})
        self.arrays["wrench_c"] = columns(a.wrench_c, 3 * self.index, 3 * self.index + 3)
        self.rows = (r0, r1)

    def saved(self) -> dict:
        """Host copies of the joint's per-env state and controls (kept across a regrouping)."""
        return {name: self.arrays[name].numpy() for name in _COORD_ARRAYS + ("tcd", "frame_c", "frame_d", "enabled")}

    def restore(self, saved: dict) -> None:
        for name, values in saved.items():
            if values.size:
                self.arrays[name].assign(values)

    def start(self) -> None:
        """A joint new to its block: the description's ranges, locks and targets, coordinates read at the next
        kinematics refresh (from zero, the unwrapping reference)."""
        self.restore({"coord": np.zeros((self.num_envs, self.joint.num_coordinates), np.float32)})
        self.write_description()

    def write_description(self) -> None:
        """Ranges, locks (at the current coordinates) and drive targets of the description, in every env."""
        self.write_ranges(
            np.broadcast_to(self.joint._range[:, 0], (self.num_envs, self.joint.num_coordinates)),
            np.broadcast_to(self.joint._range[:, 1], (self.num_envs, self.joint.num_coordinates)),
        )
        self.write_locks(np.broadcast_to(self.joint._locked, (self.num_envs, self.joint.num_coordinates)))
        self.write_targets(
            np.broadcast_to(self.joint._target[:, 0], (self.num_envs, self.joint.num_coordinates)),
            np.broadcast_to(self.joint._target[:, 1], (self.num_envs, self.joint.num_coordinates)),
        )

    # -- per-env inputs ---------------------------------------------------------------------------------------------
    def _shaped(self, values, what: str, open_sides: bool = False) -> np.ndarray:
        shape = (self.num_envs, self.joint.num_coordinates)
        return per_env_array(
            self.joint._owner(),
            f"{what} (coordinates {self.joint.coordinate_names})",
            values,
            shape,
            open_sides=open_sides,
        )

    def _mask(self, values, what: str, shape: tuple) -> np.ndarray:
        """`values` (`shape`, or shape[1:] for every env) as booleans. Integers 0/1 and strings are refused: a
        truthy value of another type is more often a slip (a coordinate index, a target) than a lock."""
        owner = self.joint._owner()
        expect = f"booleans of shape {shape} (one row per env) or {shape[1:]} (the same in every env)"
        try:
            a = np.asarray(values)
        except (TypeError, ValueError):  # ragged nested sequences
            raise ValidationError(f"{owner}: {what} must be {expect}; it cannot be read as an array") from None
        if a.dtype != bool:
            raise ValidationError(f"{owner}: {what} must be {expect}, got dtype {a.dtype}")
        if a.shape == shape[1:]:
            a = np.broadcast_to(a, shape)
        if a.shape != shape:
            raise ValidationError(f"{owner}: {what} has shape {a.shape}, expected {expect}")
        return a

    def write_targets(self, positions: ArrayLike | None = None, velocities: ArrayLike | None = None) -> None:
        if positions is not None:
            self.arrays["target_position"].assign(self._shaped(positions, "drive target positions"))
        if velocities is not None:
            self.arrays["target_velocity"].assign(self._shaped(velocities, "drive target velocities"))

    def write_ranges(self, low: ArrayLike, high: ArrayLike) -> None:
        """Ranges per env; -inf/inf (or a bound beyond float32's range, which means the same) leaves a side open."""
        lo = self._shaped(low, "range low", open_sides=True)
        hi = self._shaped(high, "range high", open_sides=True)
        bad = np.argwhere((lo == np.inf) | (hi == -np.inf))
        if len(bad):  # [inf, inf] or [-inf, -inf]: no value satisfies it (PGS and TGS would divide by the infinity)
            e, k = bad[0]
            raise ValidationError(
                f"{self.joint._owner()}: coordinate '{self.joint.coordinate_names[k]}' range [{lo[e, k]}, "
                f"{hi[e, k]}] in env {e} admits no value; an open side is low = -inf or high = inf"
            )
        bad = np.argwhere(lo > hi)
        if len(bad):
            e, k = bad[0]
            raise ValidationError(
                f"{self.joint._owner()}: coordinate '{self.joint.coordinate_names[k]}' range low "
                f"{lo[e, k]} > high {hi[e, k]} in env {e}; give low <= high"
            )
        self.arrays["range_low"].assign(lo)
        self.arrays["range_high"].assign(hi)

    def write_locks(self, locked: ArrayLike) -> None:
        """Lock (True) or release each coordinate per env; a newly locked one holds its current value."""
        mask = self._mask(locked, "locks", (self.num_envs, self.joint.num_coordinates))
        refresh_body_joint_kinematics(self.block)
        was = self.arrays["locked"].numpy().astype(bool)
        value = self.arrays["lock_value"].numpy()
        coord = self.arrays["coord"].numpy()
        newly = mask & ~was
        value[newly] = coord[newly]
        self.arrays["lock_value"].assign(value)
        self.arrays["locked"].assign(np.ascontiguousarray(mask, dtype=np.int32))

    def write_enabled(self, enabled: ArrayLike) -> None:
        """Switch the joint on (True) or off per env ((E,) booleans or one bool)."""
        mask = self._mask(enabled, "enabled", (self.num_envs,))
        self.arrays["enabled"].assign(np.ascontiguousarray(mask, dtype=np.int32).reshape(-1, 1))

    # -- outputs ----------------------------------------------------------------------------------------------------
    def coordinates(self) -> np.ndarray:
        refresh_body_joint_kinematics(self.block)
        return self.arrays["coord"].numpy().astype(np.float64)
