"""`ArticulationCache` and `CacheFlag` (PhysX `PxArticulationCache`, physx-notes 6).

Fields are NumPy arrays with a leading env dimension E; n = dof_count, L = link_count, N = n (fixed base) or n + 6
(floating base: root linear then angular first). Six-vectors are (linear, angular) / (force, torque) in the world,
about link COMs. Sizes are exact (PhysX over-allocates n + 6 and reports the used size; artic's arrays are the used
size). artic adds `root_force`, the floating root's (force, torque) generalized force, so that
`compute_joint_force` and `compute_joint_acceleration` are inverses for floating bases too, once gravity is
accounted for: the first leaves gravity out (PhysX's), the second includes it, so the forces that produce
accelerations a are compute_joint_force's plus `compute_gravity_compensation`'s (tests/dynamics/test_identities.py).

Fields are meant to be written in place (``cache.joint_position[:] = q``). A field the user replaced is checked
where it is used, in one place (`checked_input`, `checked_output`): an input must be real, finite, of magnitude at
most `description.validate.MAX_MAGNITUDE` and of the field's shape; an output must still be a writable float array of
its shape.
"""

from __future__ import annotations

import numpy as np

from ..description.articulation import Articulation
from ..description.validate import flag_value, real_array
from ..enums import CacheFlag
from ..errors import ValidationError


class ArticulationCache:
    """Host-side snapshot of one articulation over all envs (create it with `Articulation.create_cache`)."""

    def __init__(self, articulation: Articulation, num_envs: int, link_count: int, dof_count: int, floating: bool):
        e, n, nl = num_envs, dof_count, link_count
        ng = n + (6 if floating else 0)
        rows = 6 * (nl if floating else nl - 1)
        self.articulation = articulation
        self.num_envs = num_envs
        f = np.float32
        self.joint_position = np.zeros((e, n), f)  # [rad or m]
        self.joint_velocity = np.zeros((e, n), f)  # [rad/s or m/s]
        self.joint_acceleration = np.zeros((e, n), f)  # [rad/s^2 or m/s^2]
        self.joint_force = np.zeros((e, n), f)  # [Nm or N]
        self.joint_target_positions = np.zeros((e, n), f)
        self.joint_target_velocities = np.zeros((e, n), f)
        self.root_transform = np.zeros((e, 7), f)  # (px, py, pz, qx, qy, qz, qw) of the root actor frame
        self.root_transform[:, 6] = 1.0
        self.root_linear_velocity = np.zeros((e, 3), f)  # root COM [m/s], world
        self.root_angular_velocity = np.zeros((e, 3), f)  # [rad/s], world
        self.root_linear_acceleration = np.zeros((e, 3), f)  # root COM [m/s^2], world
        self.root_angular_acceleration = np.zeros((e, 3), f)  # [rad/s^2], world
        self.root_force = np.zeros((e, 6), f)  # floating root (force [N], torque about the root COM [Nm]), world
        self.link_velocity = np.zeros((e, nl, 6), f)  # (linear at COM, angular), world
        self.link_acceleration = np.zeros((e, nl, 6), f)  # classical COM acceleration (linear, angular)
        self.link_incoming_joint_force = np.zeros((e, nl, 6), f)  # (force, torque) in the child joint frame
        self.link_force = np.zeros((e, nl, 3), f)  # [N] at the COM, world, next step only
        self.link_torque = np.zeros((e, nl, 3), f)  # [Nm], world, next step only
        self.external_forces = np.zeros((e, nl, 6), f)  # (force, torque) at each COM, world (inverse dynamics)
        self.mass_matrix = np.zeros((e, ng, ng), f)
        self.coriolis_force = np.zeros((e, ng), f)
        self.gravity_compensation_force = np.zeros((e, ng), f)
        self.dense_jacobian = np.zeros((e, rows, ng), f)
        self.centroidal_momentum_matrix = np.zeros((e, 6, ng), f)
        self.centroidal_momentum_bias = np.zeros((e, 6), f)
        self._shapes = {k: v.shape for k, v in vars(self).items() if isinstance(v, np.ndarray)}

    def _owner(self) -> str:
        return f"articulation '{self.articulation.name}'"

    def checked_input(self, name: str) -> np.ndarray:
        """Field `name` as a float32 array, refused with a ValidationError naming the field unless it is real (not
        complex, string or object), finite, within +-MAX_MAGNITUDE and of the shape it was created with."""
        return real_array(self._owner(), f"cache.{name}", self._field(name), self._shapes[name])

    def _field(self, name: str):
        try:
            return getattr(self, name)
        except AttributeError:  # deleted by the user
            raise ValidationError(
                f"{self._owner()}: cache.{name} was deleted; take a fresh cache with art.create_cache()"
            ) from None

    def checked_output(self, name: str) -> np.ndarray:
        """Field `name`, to be written in place; refused if the user replaced it by anything but a writable float
        array of its shape."""
        a = self._field(name)
        shape = self._shapes[name]
        if isinstance(a, np.ndarray) and a.shape == shape and a.dtype.kind == "f" and a.flags.writeable:
            return a
        got = (
            f"{'a read-only' if not a.flags.writeable else 'an'} array of dtype {a.dtype} and shape {a.shape}"
            if isinstance(a, np.ndarray)
            else f"an object of type {type(a).__name__} ({a!r:.40})"
        )
        raise ValidationError(
            f"{self._owner()}: cache.{name} was replaced by {got}; it must stay a writable float "
            f"array of shape {shape}. Write into it (cache.{name}[:] = ...) instead of assigning "
            "the attribute, or take a fresh cache with art.create_cache()"
        )

    def __repr__(self):
        return f"ArticulationCache('{self.articulation.name}', envs={self.num_envs})"


def cache_flags(owner: str, flags: CacheFlag | int) -> CacheFlag:
    """`flags` as a CacheFlag, refusing strings, non-integers and bits that are not PhysX cache flags."""
    return flag_value(owner, "cache flags", flags, CacheFlag)
