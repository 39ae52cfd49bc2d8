"""Rigid actors: `RigidStatic` (immovable shapes) and `RigidDynamic` (a free rigid body), PhysX's PxRigidStatic and
PxRigidDynamic, plus `create_ground_plane` (PxCreatePlane).

A RigidDynamic is simulated as a one-link floating articulation: same integrator, same solver rows, same state
arrays (root pose and root COM velocities per env). It differs from PhysX's rigid bodies in the defaults it sets
(linear damping 0, angular damping 0.05, max angular velocity 100 rad/s) and in keeping gyroscopic terms, which
PhysX only integrates for rigid bodies with eENABLE_GYROSCOPIC_FORCES.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StateError, ValidationError
from ..math.np_spatial import Transform, quat_from_matrix
from .articulation import Articulation
from .shapes import Material, Plane, Shape, TriangleMesh
from .validate import KnownAttributes, bounded
from .validate import as_transform as _as_transform


class RigidStatic(KnownAttributes):
    """Immovable collision geometry, the same in every env: `attach_shape`, then `scene.add_actor`."""

    def __init__(self, pose: Transform | tuple[ArrayLike, ArrayLike] | None = None, name: str = "static"):
        self.name = name
        self.pose = _as_transform(f"static actor '{name}'", "pose", pose)
        self.shapes: list[Shape] = []
        self._scene = None

    def __repr__(self):
        return f"RigidStatic('{self.name}', shapes={len(self.shapes)})"

    def attach_shape(self, shape: Shape) -> Shape:
        """Attach a collision shape (planes and triangle meshes included) and return it; only before scene.add_actor."""
        if not isinstance(shape, Shape):
            raise ValidationError(
                f"static actor '{self.name}': attach_shape takes an artic shape, got {type(shape).__name__}"
            )
        if self._scene is not None:
            raise StateError(
                f"static actor '{self.name}' is in a scene, whose collision pairs are built already; "
                "attach shapes before scene.add_actor (or remove_actor, attach, add_actor again)"
            )
        shape.check_contact_params()
        self.shapes.append(shape)
        return shape


class RigidDynamic(KnownAttributes):
    """A free rigid body. Mass properties come from `update_mass_and_inertia(density)` or the `link` setters;
    per-env pose and velocities are read and written with `scene.get_actor_pose/set_actor_pose/...`."""

    def __init__(self, pose: Transform | tuple[ArrayLike, ArrayLike] | None = None, name: str = "body"):
        self.name = name
        self.articulation = Articulation(name)
        self.link = self.articulation.create_link(None, pose, name)
        self.link.linear_damping = 0.0  # PxRigidDynamic defaults (an articulation link's are 0.05 / 50 rad/s)
        self.link.angular_damping = 0.05
        self.link.max_linear_velocity = 1e16
        self.link.max_angular_velocity = 100.0
        self.articulation.set_solver_iteration_counts(4, 1)

    def __repr__(self):
        return f"RigidDynamic('{self.name}', mass={self.link.mass:g})"

    def attach_shape(self, shape: Shape) -> Shape:
        """Attach a collision shape to the body's link and return it; not a Plane or TriangleMesh (static only), and
        only before scene.add_actor."""
        if isinstance(shape, (Plane, TriangleMesh)):
            raise ValidationError(
                f"rigid body '{self.name}': a {type(shape).__name__} may only be attached to a "
                "RigidStatic (PhysX: planes and triangle meshes cannot be dynamic)"
            )
        return self.link.attach_shape(shape)

    @property
    def kinematic(self) -> bool:
        """PxRigidBodyFlag::eKINEMATIC: the body follows `scene.set_kinematic_target` poses, is moved by nothing
        else (gravity, contacts), pushes dynamic bodies as an infinite mass and touches no static or kinematic
        shape. Set it before `scene.add_actor`."""
        return self.articulation._kinematic

    @kinematic.setter
    def kinematic(self, value: bool):
        if self.articulation._scene is not None:
            raise ValidationError(f"rigid body '{self.name}' is in a scene; set kinematic before add_actor")
        if not isinstance(value, (bool, np.bool_)):
            raise ValidationError(f"rigid body '{self.name}': kinematic must be True or False, got {value!r}")
        self.articulation._kinematic = bool(value)

    def update_mass_and_inertia(self, density: float) -> None:
        """`PxRigidBodyExt::updateMassAndInertia`: mass, COM and inertia from the shapes at `density` [kg/m^3]."""
        self.link.update_mass_and_inertia(density)

    @property
    def mass(self) -> float:
        """Mass [kg] of the body's link (default 1; update_mass_and_inertia or `link.mass` set it)."""
        return self.link.mass

    @property
    def shapes(self) -> list[Shape]:
        """The attached shapes (the link's list itself)."""
        return self.link.shapes

    def set_solver_iteration_counts(self, min_position_iters: int, min_velocity_iters: int = 1) -> None:
        """Position iterations in [1, 255], velocity iterations in [0, 255] (PhysX defaults 4 / 1)."""
        self.articulation.set_solver_iteration_counts(min_position_iters, min_velocity_iters)

    @property
    def solver_tolerance(self) -> float:
        """Articulation.solver_tolerance of the body's one-link articulation (0: every iteration runs)."""
        return self.articulation.solver_tolerance

    @solver_tolerance.setter
    def solver_tolerance(self, value: float) -> None:
        self.articulation.solver_tolerance = value

    @property
    def global_pose(self) -> Transform:
        """The pose in the description (given at creation or by set_global_pose); per env: scene.get_actor_pose."""
        return self.articulation.root_global_pose

    def set_global_pose(self, pose: Transform | tuple[ArrayLike, ArrayLike]) -> None:
        """The pose in every env (per env: scene.set_actor_pose)."""
        self.articulation.set_root_global_pose(pose)


def create_ground_plane(
    height: float = 0.0,
    material: Material | None = None,
    normal: ArrayLike = (0.0, 0.0, 1.0),
    name: str = "ground",
) -> RigidStatic:
    """A static plane {x : normal . x = height} whose solid side is below (PxCreatePlane)."""
    try:
        n = np.asarray(normal, dtype=float)
    except (TypeError, ValueError):  # strings, complex numbers
        n = np.full(3, np.nan)
    if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) < 1e-9:
        raise ValidationError(f"ground plane '{name}': normal must be a non-zero 3-vector, got {normal!r}")
    h = bounded(f"ground plane '{name}'", "height", height)
    n = n / np.linalg.norm(n)
    # the plane shape's solid half-space is x <= 0 of its frame: put the frame's x axis along the normal
    helper = np.array([0.0, 0.0, 1.0]) if abs(n[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    y = np.cross(helper, n)
    y /= np.linalg.norm(y)
    rot = np.stack([n, y, np.cross(n, y)], axis=1)
    actor = RigidStatic(Transform(n * h, quat_from_matrix(rot)), name)
    actor.attach_shape(Plane(material=material or Material(), name=name))
    return actor
