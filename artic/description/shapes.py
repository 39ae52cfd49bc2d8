"""Collision shapes attached to links and rigid actors, their materials and filters, and the mass properties they
give at a density.

Contact parameters follow PhysX: a shape makes contacts with another when their surfaces are closer than the sum of
their `contact_offset`s (default 0.02 m, PxTolerancesScale length 1); friction and restitution average the two
materials (PxCombineMode::eAVERAGE). Filtering follows MuJoCo's contype/conaffinity: two shapes may collide when
(a.collision_group & b.collision_mask) or (b.collision_group & a.collision_mask) is non-zero.

Mass properties: standard solid-body formulas (box, sphere, cylinder; a capsule is a cylinder plus two
hemispheres, the hemisphere's centroid lying 3r/8 from its flat face). Capsules and cylinders lie along their local
x axis, as PhysX's capsule does; the URDF importer rotates z-aligned URDF cylinders onto it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ValidationError
from ..math.np_spatial import Transform, quat_to_matrix


def _positive(owner: str, name: str, value: float) -> float:
    value = float(value)
    if not np.isfinite(value) or value <= 0.0:
        raise ValidationError(f"{owner}: {name} must be a positive finite number, got {value}")
    return value


@dataclass
class Material:
    """`PxMaterial`: Coulomb friction coefficients and the coefficient of restitution."""

    static_friction: float = 0.5
    dynamic_friction: float = 0.5
    restitution: float = 0.0

    def __post_init__(self):
        for name in ("static_friction", "dynamic_friction", "restitution"):
            v = float(getattr(self, name))
            if not np.isfinite(v) or v < 0.0:
                raise ValidationError(f"material: {name} must be a non-negative finite number, got {v}")
            setattr(self, name, v)
        if self.restitution > 1.0:
            raise ValidationError(f"material: restitution must be in [0, 1], got {self.restitution}")


@dataclass
class Shape:
    """Base class: a geometry placed on a link or actor by `local_pose` (shape frame in the actor frame)."""

    local_pose: Transform = field(default_factory=Transform, kw_only=True)
    name: str = field(default="", kw_only=True)
    material: Material = field(default_factory=Material, kw_only=True)
    contact_offset: float = field(default=0.02, kw_only=True)  # [m]
    collision_group: int = field(default=1, kw_only=True)  # bit mask (MuJoCo contype)
    collision_mask: int = field(default=1, kw_only=True)  # bit mask (MuJoCo conaffinity)

    def check_contact_params(self):
        owner = f"{type(self).__name__.lower()} '{self.name}'"
        if not isinstance(self.material, Material):
            raise ValidationError(f"{owner}: material must be an artic.Material, got {type(self.material).__name__}")
        off = float(self.contact_offset)
        if not np.isfinite(off) or off < 0.0:
            raise ValidationError(f"{owner}: contact_offset must be a non-negative finite distance, got {off}")
        for name in ("collision_group", "collision_mask"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 2**31:
                raise ValidationError(f"{owner}: {name} must be an integer bit mask in [0, 2^31), got {v!r}")

    def volume_com_inertia(self):
        """(volume, COM in shape frame, unit-density inertia about the COM in shape frame)."""
        raise TypeError(f"shape '{self.name}': {type(self).__name__} has no volume; set the link's mass explicitly")


@dataclass
class Box(Shape):
    half_extents: tuple = (0.5, 0.5, 0.5)

    def __post_init__(self):
        self.half_extents = tuple(_positive(f"box '{self.name}'", "half extent", h) for h in self.half_extents)

    def volume_com_inertia(self):
        a, b, c = self.half_extents
        v = 8.0 * a * b * c
        return v, np.zeros(3), v / 3.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


@dataclass
class Sphere(Shape):
    radius: float = 0.5

    def __post_init__(self):
        self.radius = _positive(f"sphere '{self.name}'", "radius", self.radius)

    def volume_com_inertia(self):
        r = self.radius
        v = 4.0 / 3.0 * np.pi * r**3
        return v, np.zeros(3), np.eye(3) * 0.4 * v * r * r


@dataclass
class Capsule(Shape):
    """A capsule along local x: a cylinder of length 2*half_height capped by hemispheres of `radius`."""

    radius: float = 0.5
    half_height: float = 0.5

    def __post_init__(self):
        self.radius = _positive(f"capsule '{self.name}'", "radius", self.radius)
        self.half_height = _positive(f"capsule '{self.name}'", "half_height", self.half_height)

    def volume_com_inertia(self):
        r, h = self.radius, self.half_height
        vc = np.pi * r * r * 2.0 * h
        vs = 4.0 / 3.0 * np.pi * r**3
        ixx = vc * r * r / 2.0 + vs * 0.4 * r * r
        iyy = vc * (r * r / 4.0 + h * h / 3.0) + vs * (0.4 * r * r + h * h + 0.75 * h * r)
        return vc + vs, np.zeros(3), np.diag([ixx, iyy, iyy])


@dataclass
class Cylinder(Shape):
    """A solid cylinder along local x of length 2*half_height."""

    radius: float = 0.5
    half_height: float = 0.5

    def __post_init__(self):
        self.radius = _positive(f"cylinder '{self.name}'", "radius", self.radius)
        self.half_height = _positive(f"cylinder '{self.name}'", "half_height", self.half_height)

    def volume_com_inertia(self):
        r, h = self.radius, self.half_height
        v = np.pi * r * r * 2.0 * h
        iyy = v * (3.0 * r * r + 4.0 * h * h) / 12.0
        return v, np.zeros(3), np.diag([v * r * r / 2.0, iyy, iyy])


@dataclass
class Mesh(Shape):
    """A triangle mesh referenced by file path (URDF <mesh>). On a link or dynamic actor it collides as the convex
    hull of its vertices (as PhysX cooks convex meshes); on a static actor as its triangles."""

    filename: str = ""
    scale: tuple = (1.0, 1.0, 1.0)


@dataclass
class ConvexMesh(Shape):
    """The convex hull of a point cloud `vertices` (V, 3) [m], shape frame."""

    vertices: np.ndarray = None

    def __post_init__(self):
        v = np.asarray(self.vertices, dtype=float)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4 or not np.all(np.isfinite(v)):
            raise ValidationError(f"convex mesh '{self.name}': vertices must be a finite (V >= 4, 3) array, "
                                  f"got shape {v.shape}")
        self.vertices = v

    def volume_com_inertia(self):
        from ..collision.hull import hull_mass_properties
        return hull_mass_properties(self.vertices, f"convex mesh '{self.name}'")


@dataclass
class TriangleMesh(Shape):
    """A static triangle mesh: `vertices` (V, 3) [m] and `triangles` (T, 3) vertex indices; only on RigidStatic."""

    vertices: np.ndarray = None
    triangles: np.ndarray = None

    def __post_init__(self):
        v = np.asarray(self.vertices, dtype=float)
        t = np.asarray(self.triangles)
        owner = f"triangle mesh '{self.name}'"
        if v.ndim != 2 or v.shape[1] != 3 or not np.all(np.isfinite(v)):
            raise ValidationError(f"{owner}: vertices must be a finite (V, 3) array, got shape {v.shape}")
        if t.ndim != 2 or t.shape[1] != 3 or len(t) == 0 or not np.issubdtype(t.dtype, np.integer):
            raise ValidationError(f"{owner}: triangles must be a non-empty (T, 3) integer array, got {t.shape}")
        if t.min() < 0 or t.max() >= len(v):
            raise ValidationError(f"{owner}: triangle indices must lie in [0, {len(v)}), got [{t.min()}, {t.max()}]")
        self.vertices, self.triangles = v, t.astype(np.int32)


@dataclass
class Plane(Shape):
    """The half-space x <= 0 of the shape frame, as PhysX's plane."""


def mass_properties(shapes, density: float, owner: str):
    """(mass, COM, inertia tensor about the COM) of solid shapes of uniform density, in the link frame."""
    density = _positive(owner, "density", density)
    parts = []
    for s in shapes:
        if isinstance(s, Plane):
            continue  # planes only ever bound static actors
        try:
            v, c, i = s.volume_com_inertia()
        except TypeError as e:
            raise ValidationError(f"{owner}: {e}") from None
        r = quat_to_matrix(s.local_pose.q)
        parts.append((density * v, s.local_pose.transform_point(c), density * r @ i @ r.T))
    if not parts:
        raise ValidationError(f"{owner}: update_mass_and_inertia needs at least one attached shape")
    mass = sum(p[0] for p in parts)
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, i in parts:
        d = c - com
        inertia += i + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return mass, com, inertia
