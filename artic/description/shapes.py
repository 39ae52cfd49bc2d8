"""Collision shapes attached to links and rigid actors, their materials and filters, and the mass properties they
give at a density.

Contact parameters follow PhysX: a shape makes contacts with another when their surfaces are closer than the sum of
their `contact_offset`s (default 0.02 m, PxTolerancesScale length 1); friction and restitution average the two
materials (PxCombineMode::eAVERAGE). Filtering follows MuJoCo's contype/conaffinity: two shapes may collide when
(a.collision_group & b.collision_mask) or (b.collision_group & a.collision_mask) is non-zero.

Mass properties: standard solid-body formulas (box, sphere, cylinder; a capsule is a cylinder plus two
hemispheres, the hemisphere's centroid lying 3r/8 from its flat face). Capsules and cylinders lie along their local
x axis, as PhysX's capsule does; the URDF importer rotates z-aligned URDF cylinders onto it.

Validation: every field is checked when it is set, at construction or later (`Shape.__setattr__` runs the class's
`_check_<field>`): sizes positive and finite, `local_pose` a finite Transform whose quaternion is normalized (a zero
or non-finite one is refused), mesh vertices finite. A `Mesh` reads and validates its file when it is built (or its
filename or scale change) and keeps the vertices, so a missing or broken file is reported at load, never at the
first step. Errors name the shape by its type and name ("box 'lid'", or "unnamed box"); loaders add the file and
link. Point sets that span no volume are thickened as collision/hull.py documents.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..collision.hull import coincident, hull_mass_properties, solid_points
from ..collision.mesh_file import UnsupportedMeshFormat, read_mesh_file
from ..errors import ValidationError
from ..math.np_spatial import Transform, quat_to_matrix


def _positive(owner: str, name: str, value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{owner}: {name} must be a positive finite number, got {value!r}") from None
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

    def label(self) -> str:
        """How errors name the shape: its type and name, e.g. "box 'lid'" or "unnamed box"."""
        kind = "".join(" " + c.lower() if c.isupper() else c for c in type(self).__name__).strip()
        name = self.__dict__.get("name", "")
        return f"{kind} '{name}'" if name else f"unnamed {kind}"

    def __setattr__(self, name, value):
        # every assignment, in the dataclass __init__ or later, goes through the class's check of that field
        check = getattr(self, f"_check_{name}", None)
        if check is not None:
            value = check(value)
        object.__setattr__(self, name, value)

    def _check_local_pose(self, pose):
        if not isinstance(pose, Transform):
            raise ValidationError(f"{self.label()}: local_pose must be an artic.Transform, got {type(pose).__name__}")
        if not pose.is_finite():
            raise ValidationError(f"{self.label()}: local_pose must be finite, got p={pose.p.tolist()} "
                                  f"q={pose.q.tolist()}")
        norm = float(np.linalg.norm(pose.q))
        if norm < 1e-6:
            raise ValidationError(f"{self.label()}: local_pose quaternion must be non-zero (x, y, z, w), got "
                                  f"{pose.q.tolist()}")
        return Transform(pose.p.copy(), pose.q / norm)

    def check_contact_params(self):
        owner = self.label()
        self._check_local_pose(self.local_pose)  # its arrays may have been edited in place since it was set
        if not isinstance(self.material, Material):
            raise ValidationError(f"{owner}: material must be an artic.Material, got {type(self.material).__name__}")
        try:
            off = float(self.contact_offset)
        except (TypeError, ValueError):
            off = float("nan")
        if not np.isfinite(off) or off < 0.0:
            raise ValidationError(f"{owner}: contact_offset must be a non-negative finite distance, got "
                                  f"{self.contact_offset!r}")
        for name in ("collision_group", "collision_mask"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 2**31:
                raise ValidationError(f"{owner}: {name} must be an integer bit mask in [0, 2^31), got {v!r}")

    def volume_com_inertia(self):
        """(volume, COM in shape frame, unit-density inertia about the COM in shape frame)."""
        raise TypeError(f"{self.label()} has no volume; set the link's mass explicitly")


@dataclass
class Box(Shape):
    half_extents: tuple = (0.5, 0.5, 0.5)

    def _check_half_extents(self, value):
        try:
            items = tuple(value)
        except TypeError:
            items = ()
        if len(items) != 3:
            raise ValidationError(f"{self.label()}: half_extents must be 3 numbers, got {value!r}")
        return tuple(_positive(self.label(), "half extent", h) for h in items)

    def volume_com_inertia(self):
        a, b, c = self.half_extents
        v = 8.0 * a * b * c
        return v, np.zeros(3), v / 3.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


@dataclass
class Sphere(Shape):
    radius: float = 0.5

    def _check_radius(self, value):
        return _positive(self.label(), "radius", value)

    def volume_com_inertia(self):
        r = self.radius
        v = 4.0 / 3.0 * np.pi * r**3
        return v, np.zeros(3), np.eye(3) * 0.4 * v * r * r


@dataclass
class Capsule(Shape):
    """A capsule along local x: a cylinder of length 2*half_height capped by hemispheres of `radius`."""

    radius: float = 0.5
    half_height: float = 0.5

    def _check_radius(self, value):
        return _positive(self.label(), "radius", value)

    def _check_half_height(self, value):
        return _positive(self.label(), "half_height", value)

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

    def _check_radius(self, value):
        return _positive(self.label(), "radius", value)

    def _check_half_height(self, value):
        return _positive(self.label(), "half_height", value)

    def volume_com_inertia(self):
        r, h = self.radius, self.half_height
        v = np.pi * r * r * 2.0 * h
        iyy = v * (3.0 * r * r + 4.0 * h * h) / 12.0
        return v, np.zeros(3), np.diag([v * r * r / 2.0, iyy, iyy])


@dataclass
class Mesh(Shape):
    """A triangle mesh read from a file (URDF/MJCF <mesh>; formats in collision/mesh_file.py), scaled per axis
    (a negative scale mirrors). On a link or dynamic actor it collides as the convex hull of its vertices (as PhysX
    cooks convex meshes) and gives that hull's mass properties; on a static actor it collides as its triangles.

    The file is read and validated when the shape is built and whenever `filename` or `scale` change: a missing,
    unreadable or invalid file raises ValidationError then, naming the file. `vertices` and `triangles` (scaled,
    shape frame) are kept, so the file is not read again. A file in a format artic does not read gives a warning,
    no vertices, and is left out of collision detection."""

    filename: str = ""
    scale: tuple = (1.0, 1.0, 1.0)

    def _check_filename(self, value):
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ValidationError(f"{self.label()}: filename must be a non-empty path, got {value!r}")
        return str(value)

    def _check_scale(self, value):
        try:
            scale = np.asarray(value, dtype=float).reshape(3)
        except (TypeError, ValueError):
            raise ValidationError(f"{self.label()}: scale must be 3 numbers, got {value!r}") from None
        if not np.all(np.isfinite(scale)) or np.any(scale == 0.0):
            raise ValidationError(f"{self.label()}: scale must be 3 finite non-zero numbers, got {scale.tolist()}")
        return tuple(float(x) for x in scale)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "filename":
            self._read()
        if name in ("filename", "scale") and "scale" in self.__dict__:
            self._apply_scale()

    def _read(self):
        """Read the file once; a new scale re-uses what was read."""
        try:
            self.__dict__["_file"] = read_mesh_file(self.filename, self.label())
        except UnsupportedMeshFormat as e:
            warnings.warn(f"{e}; the mesh is left out of collision detection and has no mass properties",
                          RuntimeWarning, stacklevel=4)
            self.__dict__["_file"] = None

    def _apply_scale(self):
        if self._file is None:
            self.__dict__.update(_vertices=None, _triangles=None, _points=None)
            return
        verts, tris = self._file
        scale = np.asarray(self.scale)
        if np.prod(np.sign(scale)) < 0.0:
            tris = tris[:, ::-1]  # a mirroring scale turns the triangles inside out; keep them facing outwards
        verts = verts * scale
        if coincident(verts):
            raise ValidationError(f"{self.label()} (file '{self.filename}'): all {len(verts)} vertices coincide; "
                                  "the mesh has no extent")
        # the hull points are made on first use: a flat mesh is fine as a static triangle mesh, and is thickened
        # (with a warning) only when it must be a hull
        self.__dict__.update(_vertices=verts, _triangles=np.ascontiguousarray(tris), _points=None)

    @property
    def vertices(self):
        """(V, 3) scaled vertices in the shape frame [m], or None for a format artic does not read."""
        return self._vertices

    @property
    def triangles(self):
        """(T, 3) vertex indices, or None for a format artic does not read."""
        return self._triangles

    @property
    def hull_points(self):
        """The points whose convex hull this mesh is on a link: the vertices, thickened (with a warning) if they
        span no volume; None for a format artic does not read."""
        if self._points is None and self._vertices is not None:
            self.__dict__["_points"] = solid_points(self._vertices, f"{self.label()} (file '{self.filename}')")
        return self._points

    def volume_com_inertia(self):
        if self.hull_points is None:
            return super().volume_com_inertia()
        return hull_mass_properties(self.hull_points, f"{self.label()} (file '{self.filename}')")


@dataclass
class ConvexMesh(Shape):
    """The convex hull of a point cloud `vertices` (V, 3) [m], shape frame. Points that span no volume are thickened
    (collision/hull.py, with a warning); points that all coincide are refused."""

    vertices: np.ndarray = None

    def _check_vertices(self, value):
        if value is None:
            raise ValidationError(f"{self.label()}: vertices must be a finite (V, 3) array, got None")
        points = solid_points(value, self.label())
        self.__dict__["_points"] = points
        return np.array(value, dtype=float)

    @property
    def hull_points(self):
        """The points whose convex hull this shape is: the vertices, thickened if they span no volume."""
        return self._points

    def volume_com_inertia(self):
        return hull_mass_properties(self._points, self.label())


@dataclass
class TriangleMesh(Shape):
    """A static triangle mesh: `vertices` (V, 3) [m] and `triangles` (T, 3) vertex indices; only on RigidStatic."""

    vertices: np.ndarray = None
    triangles: np.ndarray = None

    def __post_init__(self):
        owner = self.label()
        try:
            v = np.asarray(self.vertices, dtype=float)
            t = np.asarray(self.triangles)
        except (TypeError, ValueError):
            raise ValidationError(f"{owner}: vertices and triangles must be numeric arrays") from None
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
