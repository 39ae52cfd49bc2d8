"""Collision shapes attached to links and rigid actors, their materials and filters, and the mass properties they give
at a density.

Contact parameters follow PhysX: a shape makes contacts with another when their surfaces are closer than the sum of
their `contact_offset`s (default 0.02 m, PxTolerancesScale length 1) and their `rest_offset`s, and the contact holds
them the sum of their `rest_offset`s apart (PxShape::setRestOffset; default 0, touching); friction combines the two
materials by their `friction_combine` mode of higher priority (PxCombineMode; eAVERAGE by default), restitution
averages. Filtering follows MuJoCo's contype/conaffinity: two shapes may collide when (a.collision_group &
b.collision_mask) or (b.collision_group & a.collision_mask) is non-zero.

Mass properties: standard solid-body formulas (box, sphere, cylinder; a capsule is a cylinder plus two hemispheres, the
hemisphere's centroid lying 3r/8 from its flat face). Capsules and cylinders lie along their local x axis, as PhysX's
capsule does; the URDF importer rotates z-aligned URDF cylinders onto it.

Validation: every field is checked when it is set, at construction or later (`Shape.__setattr__` and
`Material.__setattr__` run the class's `_check_<field>`): sizes positive, finite and at most MAX_MAGNITUDE (1e15 m,
validate.py: beyond it float32 contact arithmetic overflows or loses all precision), `local_pose` a finite Transform
whose quaternion is normalized (a zero or non-finite one is refused), mesh vertices finite and within MAX_MAGNITUDE
(after scale), triangle indices in range, contact_offset in [0, MAX_MAGNITUDE], rest_offset within +-MAX_MAGNITUDE,
collision bit masks integers in [0, 2^31). Materials follow PxMaterial's ranges (friction >= 0, restitution in [0, 1])
with friction also bounded by MAX_FRICTION. Lengths beyond COARSE_LENGTH (1e5 m), where float32 resolves a surface only
to centimetres, are accepted with a warning. Mesh arrays are stored read-only, so they cannot be edited in place behind
these checks; the arrays of `local_pose` can, so `check_contact_params` (run by attach_shape, scene add and the
collision build) checks the pose, and a mesh's triangle indices, again. A `Mesh` reads and validates its file when it is
built (or its filename or scale change) and keeps the vertices, so a missing or broken file is reported at load, never
at the first step. Errors name the shape by its type and name ("box 'lid'", or "unnamed box"); loaders add the file and
link. Point sets that span no volume are thickened as math/hull.py documents.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..errors import ValidationError
from ..io.mesh_file import UnsupportedMeshFormat, read_mesh_file
from ..math.hull import coincident, hull_mass_properties, solid_points
from ..math.np_spatial import Transform, quat_to_matrix
from .softness import Softness, check_softness
from .validate import MAX_MAGNITUDE, as_real, finite, refuse_unknown_attribute

# Coulomb coefficients of real surface pairs stay below ~2 (rubber on rubber), and with one above ~10 a contact
# already sticks under any sane load, so 1e3 leaves room for "infinite friction" settings; a larger value is a unit
# or typing slip, and one near 1e30 turns the friction bound (coefficient x normal impulse) into float32 infinity.
# PhysX itself only asks friction >= 0.
MAX_FRICTION = 1e3
# Contacts are computed in float32, which resolves a surface at distance L from its frame's origin only to about
# L * 2^-24 (6 cm at 1e6 m): a static sphere of radius 1e6 holds a 0.1 m ball 5.6 cm above its surface, a box of
# half extent 1e9 throws it 8 m up, a triangle mesh with 1e12 m coordinates lets it fall through. Lengths beyond
# COARSE_LENGTH (resolution 6 mm, a third of the default contact_offset) are accepted with a warning; use a Plane
# for a ground, or split a large terrain mesh into tiles placed by their actors' poses.
COARSE_LENGTH = 1e5


def _positive(owner: str, name: str, value, unit: str = "m") -> float:
    """A size (a length by default): positive, finite, at most MAX_MAGNITUDE."""
    value = finite(owner, name, value)
    if value <= 0.0:
        raise ValidationError(f"{owner}: {name} must be a positive finite number, got {value}")
    if value > MAX_MAGNITUDE:
        raise ValidationError(
            f"{owner}: {name} {value:g} {unit} is beyond {MAX_MAGNITUDE:g} {unit}, which float32 "
            "arithmetic cannot simulate; give a physically meaningful value"
        )
    return value


def _length(owner: str, name: str, value) -> float:
    """A positive length [m] of at most MAX_MAGNITUDE, with a warning beyond COARSE_LENGTH."""
    value = _positive(owner, name, value)
    _warn_if_coarse(owner, f"{name} {value:g} m", value)
    return value


def _warn_if_coarse(owner: str, what: str, length: float):
    if length <= COARSE_LENGTH:
        return
    # point the warning at the first caller outside this module and the dataclass-generated __init__ ("<string>"),
    # whatever the depth of the check that found the length
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename in (__file__, "<string>"):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"{owner}: {what} is so large that float32 contact arithmetic places its surface only to "
        f"~{length * 2.0**-24:.2g} m (beyond {COARSE_LENGTH:g} m), so contacts with it are approximate "
        "or missed; use a Plane for a ground, or split the shape",
        RuntimeWarning,
        stacklevel=level,
    )


def _readonly(a: np.ndarray) -> np.ndarray:
    # mesh arrays are validated when set; an in-place edit (an index out of range) would bypass that and could
    # crash the collision kernels, so the stored arrays refuse writes
    a.flags.writeable = False
    return a


# PxCombineMode, in PhysX's priority order (the index is the mode's priority, and its code in the narrow phase)
FRICTION_COMBINE_MODES = ("average", "min", "multiply", "max")


@dataclass
class Material:
    """`PxMaterial`: Coulomb friction coefficients in [0, MAX_FRICTION] and the coefficient of restitution in
    [0, 1] (PhysX's ranges), checked whenever a field is set. `friction_combine` is PhysX's friction combine mode
    (PxCombineMode, one of FRICTION_COMBINE_MODES): a contact's friction coefficients combine the two shapes' by
    the mode of higher priority (average < min < multiply < max), as PhysX does; restitution is averaged.

    `softness` (description/softness.py) makes the contact's normal row soft as MuJoCo's (solref, solimp): None,
    PhysX's hard contact, by default; a contact is soft when both shapes' materials are (or an explicit pair's own
    material is), with the two mixed by `solmix` as MuJoCo mixes geoms (weights solmix_a / (solmix_a + solmix_b)
    for solimp and a standard solref, the smaller of each for a direct one). Soft contacts act only while the
    surfaces overlap, as MuJoCo's (no speculative row). Their friction is MuJoCo's pyramidal cone with
    `pyramid_impratio` > 0 (its default cone; constraints/pyramid.py), its elliptic cone with `elliptic_impratio` > 0
    (constraints/elliptic.py), PhysX's patch friction with neither; a contact takes the pyramid where either shape
    asks for it (the larger impratio), else the ellipse. A material has at most one of the two.

    `torsional_friction` and `rolling_friction` [m] (MuJoCo's friction[1] and friction[2], the larger of the two
    shapes') resist the bodies' relative spin about the normal and their rolling: two more edges of MuJoCo's
    pyramidal cone each (constraints/pyramid.py), or more rows of its elliptic cone (constraints/elliptic.py), under
    every solver; 0 (the default) for none. As in MuJoCo they act only where the contact's condim (below) asks for
    them: torsion from condim 4, rolling at 6; a shape's values below its own condim are latent, counting against a
    shape whose condim asks for them. They belong to MuJoCo's cones: a soft contact's (solref) with
    pyramid_impratio or elliptic_impratio.

    `condim` is MuJoCo's contact dimensionality of the shape (1, 3, 4 or 6): a contact takes the larger of its two
    shapes' (MuJoCo's rule for geoms of equal priority), and is frictionless when that is 1, so that a condim-1
    shape slides freely on another condim-1 shape but has its friction against a condim-3 one (with
    friction_combine 'max', MuJoCo's larger coefficient). 3, the default, leaves friction as the combine mode gives
    it; 4 adds the torsional friction above, 6 also the rolling one. `priority` is MuJoCo's geom
    priority: where two shapes' differ, the contact takes every parameter of the higher one's material (friction,
    condim, softness, cone) instead of combining them; 0, the default, everywhere leaves the combination."""

    static_friction: float = 0.5
    dynamic_friction: float = 0.5
    restitution: float = 0.0
    friction_combine: str = "average"
    softness: Softness | None = None
    solmix: float = 1.0
    pyramid_impratio: float = 0.0
    elliptic_impratio: float = 0.0
    torsional_friction: float = 0.0
    rolling_friction: float = 0.0
    condim: int = 3
    priority: int = 0

    def __setattr__(self, name, value):
        refuse_unknown_attribute(self, name)
        if name == "priority" and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise ValidationError(f"material: priority must be an integer (MuJoCo's geom priority), got {value!r}")
        if name == "condim" and (isinstance(value, bool) or value not in (1, 3, 4, 6)):
            raise ValidationError(f"material: condim must be 1, 3, 4 or 6 (MuJoCo's), got {value!r}")
        if name == "friction_combine" and value not in FRICTION_COMBINE_MODES:
            raise ValidationError(
                f"material: friction_combine must be one of {', '.join(FRICTION_COMBINE_MODES)}, got {value!r}"
            )
        if name in ("static_friction", "dynamic_friction", "restitution"):
            value = finite("material", name, value)
            high = 1.0 if name == "restitution" else MAX_FRICTION
            if not 0.0 <= value <= high:
                why = "PxMaterial's range" if name == "restitution" else "artic.description.shapes.MAX_FRICTION"
                raise ValidationError(f"material: {name} must be in [0, {high:g}] ({why}), got {value:g}")
        if name == "softness":
            value = check_softness("material", value)
        if name in ("solmix", "pyramid_impratio", "elliptic_impratio", "torsional_friction", "rolling_friction"):
            value = finite("material", name, value)
            if value < 0.0:
                raise ValidationError(f"material: {name} must be >= 0, got {value:g}")
        if value and name in ("pyramid_impratio", "elliptic_impratio"):  # one cone at a time
            other = "elliptic_impratio" if name == "pyramid_impratio" else "pyramid_impratio"
            if getattr(self, other, 0.0):
                raise ValidationError(f"material: {name} and {other} are two cones; set {other} to 0 first")
        object.__setattr__(self, name, value)


@dataclass
class Shape:
    """Base class: a geometry placed on a link or actor by `local_pose` (shape frame in the actor frame)."""

    local_pose: Transform = field(default_factory=Transform, kw_only=True)
    name: str = field(default="", kw_only=True)
    material: Material = field(default_factory=Material, kw_only=True)
    contact_offset: float = field(default=0.02, kw_only=True)  # [m] detection distance beyond the rest offsets
    rest_offset: float = field(default=0.0, kw_only=True)  # [m] contacts hold the surfaces this far apart (<0: deep)
    collision_group: int = field(default=1, kw_only=True)  # bit mask (MuJoCo contype)
    collision_mask: int = field(default=1, kw_only=True)  # bit mask (MuJoCo conaffinity)

    def label(self) -> str:
        """How errors name the shape: its type and name, e.g. "box 'lid'" or "unnamed box"."""
        kind = "".join(" " + c.lower() if c.isupper() else c for c in type(self).__name__).strip()
        name = self.__dict__.get("name", "")
        return f"{kind} '{name}'" if name else f"unnamed {kind}"

    def __setattr__(self, name, value):
        # every assignment, in the dataclass __init__ or later, goes through the class's check of that field
        refuse_unknown_attribute(self, name)
        check = getattr(self, f"_check_{name}", None)
        if check is not None:
            value = check(value)
        object.__setattr__(self, name, value)

    def _check_local_pose(self, pose):
        if not isinstance(pose, Transform):
            raise ValidationError(f"{self.label()}: local_pose must be an artic.Transform, got {type(pose).__name__}")
        if not pose.is_finite():
            raise ValidationError(
                f"{self.label()}: local_pose must be finite, got p={pose.p.tolist()} q={pose.q.tolist()}"
            )
        norm = float(np.linalg.norm(pose.q))
        if norm < 1e-6:
            raise ValidationError(
                f"{self.label()}: local_pose quaternion must be non-zero (x, y, z, w), got {pose.q.tolist()}"
            )
        return Transform(pose.p.copy(), pose.q / norm)

    def _check_name(self, value):
        if not isinstance(value, str):
            raise ValidationError(f"shape {type(self).__name__}: name must be a string, got {value!r}")
        return value

    def _check_material(self, value):
        if not isinstance(value, Material):
            raise ValidationError(f"{self.label()}: material must be an artic.Material, got {type(value).__name__}")
        return value

    def _check_contact_offset(self, value):
        value = finite(self.label(), "contact_offset", value)
        if not 0.0 <= value <= MAX_MAGNITUDE:
            raise ValidationError(
                f"{self.label()}: contact_offset must be a distance in [0, {MAX_MAGNITUDE:g}] m, got {value:g}"
            )
        return value

    def _check_rest_offset(self, value):
        value = finite(self.label(), "rest_offset", value)
        if abs(value) > MAX_MAGNITUDE:
            raise ValidationError(
                f"{self.label()}: rest_offset must be a distance within +-{MAX_MAGNITUDE:g} m, got {value:g}"
            )
        return value

    def _check_mask(self, name, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2**31:
            raise ValidationError(f"{self.label()}: {name} must be an integer bit mask in [0, 2^31), got {value!r}")
        return int(value)

    def _check_collision_group(self, value):
        return self._check_mask("collision_group", value)

    def _check_collision_mask(self, value):
        return self._check_mask("collision_mask", value)

    def check_contact_params(self) -> None:
        """Check what can change without an assignment: run by attach_shape, scene add and the collision build,
        because a pose's arrays may have been edited in place since it was set (every other field is checked on
        assignment, and mesh arrays are read-only)."""
        self._check_local_pose(self.local_pose)

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(volume, COM in shape frame, unit-density inertia about the COM in shape frame)."""
        raise TypeError(f"{self.label()} has no volume; set the link's mass explicitly")


@dataclass
class Box(Shape):
    """A box of `half_extents` (3,) [m] along the shape frame's axes (PxBoxGeometry)."""

    half_extents: tuple = (0.5, 0.5, 0.5)

    def _check_half_extents(self, value):
        try:
            items = tuple(value)
        except TypeError:
            items = ()
        if len(items) != 3:
            raise ValidationError(f"{self.label()}: half_extents must be 3 numbers, got {value!r}")
        return tuple(_length(self.label(), "half extent", h) for h in items)

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        a, b, c = self.half_extents
        v = 8.0 * a * b * c
        return v, np.zeros(3), v / 3.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


@dataclass
class Sphere(Shape):
    """A sphere of `radius` [m] about the shape frame's origin (PxSphereGeometry)."""

    radius: float = 0.5

    def _check_radius(self, value):
        return _length(self.label(), "radius", value)

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        r = self.radius
        v = 4.0 / 3.0 * np.pi * r**3
        return v, np.zeros(3), np.eye(3) * 0.4 * v * r * r


@dataclass
class Capsule(Shape):
    """A capsule along local x: a cylinder of length 2*half_height capped by hemispheres of `radius`."""

    radius: float = 0.5
    half_height: float = 0.5

    def _check_radius(self, value):
        return _length(self.label(), "radius", value)

    def _check_half_height(self, value):
        return _length(self.label(), "half_height", value)

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
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
        return _length(self.label(), "radius", value)

    def _check_half_height(self, value):
        return _length(self.label(), "half_height", value)

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        r, h = self.radius, self.half_height
        v = np.pi * r * r * 2.0 * h
        iyy = v * (3.0 * r * r + 4.0 * h * h) / 12.0
        return v, np.zeros(3), np.diag([v * r * r / 2.0, iyy, iyy])


@dataclass
class Mesh(Shape):
    """A triangle mesh read from a file (URDF/MJCF <mesh>; formats in io/mesh_file.py), scaled per axis
    (a negative scale mirrors). On a link or dynamic actor it collides as the convex hull of its vertices (as PhysX
    cooks convex meshes) and gives that hull's mass properties; on a static actor it collides as its triangles, or
    as its hull too with `static_hull` (MuJoCo's rule, which MJCF imports use).

    The file is read and validated when the shape is built and whenever `filename` or `scale` change: a missing,
    unreadable or invalid file raises ValidationError then, naming the file. `vertices` and `triangles` (scaled,
    shape frame) are kept, so the file is not read again. A file in a format artic does not read gives a warning,
    no vertices, and is left out of collision detection."""

    filename: str = ""
    scale: tuple = (1.0, 1.0, 1.0)
    # OBJ files: the faces of the first object (`o`) or group (`g`) only, as MuJoCo reads them; the rest is warned
    first_object: bool = field(default=False, kw_only=True)
    # on a static actor too, collide as the convex hull (MuJoCo collides every mesh as its hull: an MJCF table top
    # made of a mesh is a thin box there, and its triangles were found from below by samples above it)
    static_hull: bool = field(default=False, kw_only=True)

    def _check_first_object(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValidationError(f"{self.label()}: first_object must be True or False, got {value!r}")
        return bool(value)

    def _check_static_hull(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValidationError(f"{self.label()}: static_hull must be True or False, got {value!r}")
        return bool(value)

    def _check_filename(self, value):
        if not isinstance(value, (str, os.PathLike)) or not str(value):
            raise ValidationError(f"{self.label()}: filename must be a non-empty path, got {value!r}")
        return str(value)

    def _check_scale(self, value):
        scale = as_real(self.label(), "scale", value, "3 finite non-zero numbers")
        if scale.shape != (3,):
            raise ValidationError(f"{self.label()}: scale must be 3 numbers, got {value!r}")
        if not np.all(np.isfinite(scale)) or np.any(scale == 0.0) or np.abs(scale).max() > MAX_MAGNITUDE:
            raise ValidationError(
                f"{self.label()}: scale must be 3 finite non-zero numbers within "
                f"+-{MAX_MAGNITUDE:g}, got {scale.tolist()}"
            )
        return tuple(float(x) for x in scale)

    def __setattr__(self, name, value):
        if name not in ("filename", "scale", "first_object"):
            super().__setattr__(name, value)
            return
        before = dict(self.__dict__)
        try:
            super().__setattr__(name, value)
            if name == "filename" or (name == "first_object" and "filename" in self.__dict__):
                self._read()
            if "scale" in self.__dict__:
                self._apply_scale()
        except ValidationError:
            # a refused file or scale leaves the mesh as it was, so it never holds a value its arrays do not match
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _read(self):
        """Read the file once; a new scale re-uses what was read."""
        try:
            first = self.__dict__.get("first_object", False)
            self.__dict__["_file"] = read_mesh_file(self.filename, self.label(), first_object=first)
        except UnsupportedMeshFormat as e:
            warnings.warn(
                f"{e}; the mesh is left out of collision detection and has no mass properties",
                RuntimeWarning,
                stacklevel=4,
            )
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
        where = f"{self.label()} (file '{self.filename}', scale {list(self.scale)})"
        _check_extent(where, verts)
        if coincident(verts):
            raise ValidationError(f"{where}: all {len(verts)} vertices coincide; the mesh has no extent")
        # the hull points are made on first use: a flat mesh is fine as a static triangle mesh, and is thickened
        # (with a warning) only when it must be a hull. The file's arrays are shared by every shape reading it
        self.__dict__.update(_vertices=_readonly(verts), _triangles=_readonly(np.ascontiguousarray(tris)), _points=None)

    @property
    def vertices(self) -> np.ndarray | None:
        """(V, 3) scaled vertices in the shape frame [m], or None for a format artic does not read."""
        return self._vertices

    @property
    def triangles(self) -> np.ndarray | None:
        """(T, 3) vertex indices, or None for a format artic does not read."""
        return self._triangles

    @property
    def hull_points(self) -> np.ndarray | None:
        """The points whose convex hull this mesh is on a link: the vertices, thickened (with a warning) if they
        span no volume; None for a format artic does not read."""
        if self._points is None and self._vertices is not None:
            points = solid_points(self._vertices, f"{self.label()} (file '{self.filename}')")
            self.__dict__["_points"] = _readonly(np.array(points))
        return self._points

    def check_contact_params(self) -> None:
        super().check_contact_params()
        if self._vertices is not None:
            _indices_in_range(f"{self.label()} (file '{self.filename}')", self._triangles, len(self._vertices))

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        if self.hull_points is None:
            return super().volume_com_inertia()
        return hull_mass_properties(self.hull_points, f"{self.label()} (file '{self.filename}')")


@dataclass
class ConvexMesh(Shape):
    """The convex hull of a point cloud `vertices` (V, 3) [m], shape frame. Points that span no volume are thickened
    (math/hull.py, with a warning); points that all coincide are refused."""

    vertices: np.ndarray = None

    def _check_vertices(self, value):
        verts = _vertex_array(self.label(), value)
        self.__dict__["_points"] = _readonly(np.array(solid_points(verts, self.label())))
        return _readonly(verts)

    @property
    def hull_points(self) -> np.ndarray:
        """The points whose convex hull this shape is: the vertices, thickened if they span no volume."""
        return self._points

    def volume_com_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        return hull_mass_properties(self._points, self.label())


@dataclass
class TriangleMesh(Shape):
    """A static triangle mesh: `vertices` (V, 3) [m] and `triangles` (T, 3) vertex indices; only on RigidStatic."""

    vertices: np.ndarray = None
    triangles: np.ndarray = None

    def _check_vertices(self, value):
        verts = _vertex_array(self.label(), value)
        tris = self.__dict__.get("triangles")
        if tris is not None:  # fewer vertices than before must still cover every triangle index
            _indices_in_range(self.label(), tris, len(verts))
        return _readonly(verts)

    def _check_triangles(self, value):
        try:
            tris = np.asarray(value)
        except (TypeError, ValueError):  # ragged nested sequences
            tris = np.zeros((0, 0))
        if tris.dtype.kind not in "iu" or tris.ndim != 2 or tris.shape[1] != 3 or len(tris) == 0:
            raise ValidationError(
                f"{self.label()}: triangles must be a non-empty (T, 3) integer array, got "
                f"{'dtype ' + str(tris.dtype) if tris.dtype.kind not in 'iu' else tris.shape}"
            )
        _indices_in_range(self.label(), tris, len(self.vertices))
        return _readonly(tris.astype(np.int32))

    def check_contact_params(self) -> None:
        super().check_contact_params()
        _indices_in_range(self.label(), self.triangles, len(self.vertices))


def _vertex_array(owner: str, value) -> np.ndarray:
    """Finite (V, 3) vertices spanning some extent, each coordinate within MAX_MAGNITUDE, as a new float64 array."""
    if value is None:
        raise ValidationError(f"{owner}: vertices must be a finite (V, 3) array, got None")
    verts = as_real(owner, "vertices", value, "a finite (V, 3) array")
    if verts.ndim != 2 or verts.shape[1] != 3 or len(verts) == 0:
        raise ValidationError(f"{owner}: vertices must be a non-empty (V, 3) array, got shape {verts.shape}")
    if not np.all(np.isfinite(verts)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(verts), axis=1))[0])
        raise ValidationError(f"{owner}: vertex {bad} is not finite ({verts[bad].tolist()})")
    _check_extent(owner, verts)
    return np.array(verts)


def _check_extent(owner: str, verts: np.ndarray):
    """Coordinates within MAX_MAGNITUDE metres."""
    far = np.abs(verts).max(axis=1)
    if far.max() > MAX_MAGNITUDE:
        bad = int(np.argmax(far))
        raise ValidationError(
            f"{owner}: vertex {bad} {verts[bad].tolist()} lies beyond +-{MAX_MAGNITUDE:g} m, "
            "which float32 contact arithmetic cannot simulate; give coordinates in metres"
        )
    _warn_if_coarse(owner, f"coordinate {far.max():g} m of vertex {int(np.argmax(far))}", float(far.max()))


def _indices_in_range(owner: str, tris: np.ndarray, count: int):
    """Every triangle index in [0, count): the collision kernels read vertices by these indices unchecked."""
    if tris.min() < 0 or tris.max() >= count:
        raise ValidationError(
            f"{owner}: triangle indices must lie in [0, {count}) (the vertex count), got "
            f"[{int(tris.min())}, {int(tris.max())}]"
        )


@dataclass
class Plane(Shape):
    """The half-space x <= 0 of the shape frame, as PhysX's plane."""


def bounding_radius(shape: Shape) -> float:
    """The largest distance [m] of the shape's points from its frame's origin (a mesh's vertices, or its hull's
    points when only those are known; 0 for a mesh whose file was not read; inf for a plane)."""
    if isinstance(shape, Sphere):
        return float(shape.radius)
    if isinstance(shape, Capsule):
        return float(shape.half_height + shape.radius)
    if isinstance(shape, Cylinder):
        return float(np.hypot(shape.half_height, shape.radius))
    if isinstance(shape, Box):
        return float(np.linalg.norm(shape.half_extents))
    if isinstance(shape, Plane):
        return float("inf")
    points = shape.hull_points if isinstance(shape, ConvexMesh) else shape.vertices
    return 0.0 if points is None else float(np.linalg.norm(np.asarray(points, float), axis=1).max())


def mass_properties(shapes: Iterable[Shape], density: float, owner: str) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, COM, inertia tensor about the COM) of solid shapes of uniform density, in the link frame."""
    density = _positive(owner, "density", density, "kg/m^3")
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
