"""MJCF `<geom>`s as artic shapes: primitives, meshes, height fields and ellipsoids (as the convex polytope
inscribed through ELLIPSOID_DIRECTIONS), grown by their margins (MuJoCo's contacts act that far apart, artic's at
touch), with MuJoCo's max friction rule and contact filters (contype, conaffinity); the loader (loader.py) calls
`geom_shape` for each geom of a body or of the world."""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from ...description.shapes import (
    Box,
    Capsule,
    ConvexMesh,
    Cylinder,
    Material,
    Mesh,
    Plane,
    Shape,
    Sphere,
    TriangleMesh,
)
from ...math.np_spatial import Transform, quat_between, quat_from_matrix
from ..mesh_file import read_mesh_file
from .hfield import hfield_mesh
from .mass import mesh_mass
from .softness import read_softness

if TYPE_CHECKING:
    from ..xml_values import XmlValues
    from .loader import _Loader

# (number of size values, what they are) each geom type needs; with fromto, capsule/cylinder/box/ellipsoid need one
_SIZES = {
    "sphere": (1, "radius"),
    "capsule": (2, "radius, half-length"),
    "cylinder": (2, "radius, half-length"),
    "box": (3, "three half-sizes"),
    "ellipsoid": (3, "three radii"),
    "plane": (0, ""),
    "mesh": (0, ""),
    "hfield": (0, ""),
}


DETECTION_OFFSET = 0.02  # [m] the contact offset of every MJCF geom: PhysX's default (see `_shape`)
MIN_MU = 1.0e-5  # MuJoCo's mjMINMU, the least friction coefficient of a contact (angular_friction)


def fromto_quat(ends: np.ndarray) -> np.ndarray:
    """The frame MuJoCo gives a geom or site by fromto (x0 y0 z0 x1 y1 z1), as artic's quaternion (x, y, z, w): the
    smallest turn of z onto from - to; where from - to lies along z, none for +z and a half turn about x for -z
    (MuJoCo's mjuu_z2quat: about x, where the smallest-turn formula would pick y)."""
    v = np.asarray(ends[:3], float) - np.asarray(ends[3:], float)
    v = v / np.linalg.norm(v)
    if np.linalg.norm(np.cross([0.0, 0.0, 1.0], v)) < 1e-10:
        return np.array([0.0, 0.0, 0.0, 1.0]) if v[2] > 0.0 else np.array([1.0, 0.0, 0.0, 0.0])
    return quat_between(np.array([0.0, 0.0, 1.0]), v)


def _ellipsoid_directions() -> np.ndarray:
    """54 unit vectors: the six axis directions, 10 more on the equator (every 30 degrees), rings of 12 at +-30
    degrees latitude (offset by 15 degrees) and of 8 at +-60 degrees. Their convex hull, scaled by an ellipsoid's
    radii, is inscribed in the ellipsoid, touches it at the ends of its three axes (where it rests on a face) and
    falls short of its support by at most 5.3 % of the radius in any direction (the narrow phase takes hulls of up
    to 64 vertices, math/hull.py)."""
    rows = [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0)]
    for lat, count, offset in ((0.0, 12, 0.0), (30.0, 12, 0.5), (-30.0, 12, 0.5), (60.0, 8, 0.0), (-60.0, 8, 0.0)):
        for k in range(count):
            lon = 2.0 * math.pi * (k + offset) / count
            rows.append(
                (
                    math.cos(math.radians(lat)) * math.cos(lon),
                    math.cos(math.radians(lat)) * math.sin(lon),
                    math.sin(math.radians(lat)),
                )
            )
    return np.array(rows)


ELLIPSOID_DIRECTIONS = _ellipsoid_directions()


def geom_shape(loader: _Loader, g: ET.Element, cls: str, owner: str, static: bool = False) -> Shape:
    """The artic shape of a <geom> (its mass: mass.py); `static` for a <worldbody> geom. loader: the MJCF
    loader (loader.py), whose defaults, assets and per-file lists the geom reads and fills."""
    v = loader.v
    a = loader._attrs(g, cls)
    kind = a.get("type", "sphere")
    name = a.get("name", owner)
    if kind not in _SIZES:
        raise v.fail(g, f"geom '{name}' has unsupported type '{kind}'; use one of {', '.join(_SIZES)}")
    fitted = None  # the mesh's principal frame, where MuJoCo puts a primitive fitted to it
    if "mesh" in a and kind != "mesh":
        if kind not in _FITTED:
            raise v.fail(g, f"geom '{name}' of type '{kind}' names mesh '{a['mesh']}'; MuJoCo fits only {_FITTED}")
        size, fitted = _fit_to_mesh(loader, g, a, kind)
        loader.fitted[g] = (size, fitted)  # mass.py weighs the fitted primitive
        a = {**{k: x for k, x in a.items() if k != "fromto"}, "size": " ".join(repr(float(x)) for x in size)}
    fromto = kind in ("capsule", "cylinder", "box", "ellipsoid") and "fromto" in a
    size = v.numbers(g, "size", (0, 3), (), a.get("size"))
    need, what = _SIZES[kind]
    if fromto:  # the segment gives the half-length; size[0] is the radius (box: both radial half sizes)
        need, what = 1, "radius"
    if len(size) < need:
        raise v.fail(
            g,
            f"attribute size='{a.get('size', '')}': a {kind} geom needs {need} size value(s) ({what}), got {len(size)}",
        )
    pose = loader._frame(g, a) if fitted is None else loader._frame(g, a) * fitted
    along_z = Transform(q=quat_between(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])))
    if fromto:
        ft = v.numbers(g, "fromto", 6, text=a["fromto"])
        axis = ft[3:] - ft[:3]
        half = 0.5 * float(np.linalg.norm(axis))
        if half == 0.0:
            raise v.fail(g, f"attribute fromto='{a['fromto']}': the two end points coincide")
        pose = Transform(0.5 * (ft[:3] + ft[3:]), quat_between(np.array([1.0, 0.0, 0.0]), axis / (2 * half)))
        if kind == "box":  # MuJoCo's frame turns z onto from - to: it sets the square section's sides too
            pose = Transform(pose.p, fromto_quat(ft))
            shape = Box((size[0], size[0], half), name=name)
        elif kind == "ellipsoid":
            shape = _ellipsoid(loader, name, (half, size[0], size[0]))  # the shape's x is the segment
        else:
            shape = (Capsule if kind == "capsule" else Cylinder)(float(size[0]), half, name=name)
    elif kind == "sphere":
        shape = Sphere(float(size[0]), name=name)
    elif kind in ("capsule", "cylinder"):
        shape = (Capsule if kind == "capsule" else Cylinder)(float(size[0]), float(size[1]), name=name)
        pose = pose * along_z
    elif kind == "box":
        shape = Box(tuple(size[:3]), name=name)
    elif kind == "plane":
        shape = Plane(name=name)
        pose = pose * Transform(q=quat_between(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])))
    elif kind == "hfield":
        if not static:
            raise v.fail(
                g,
                f"geom '{name}' of type 'hfield' is on a moving body; height fields are static "
                "terrain: put the geom in <worldbody>",
            )
        if a.get("hfield") not in loader.hfields:
            raise v.fail(g, f"attribute hfield='{a.get('hfield', '')}' names no <hfield> in <asset>")
        shape = hfield_mesh(*loader.hfields[a["hfield"]], name=name)
    elif kind == "mesh":
        mesh = a.get("mesh")
        if mesh not in loader.meshes:
            raise v.fail(
                g,
                f"attribute mesh='{mesh}' names no <mesh> in <asset>"
                if mesh
                else "a mesh geom needs a mesh attribute naming an <asset> <mesh>",
            )
        file, scale = loader.meshes[mesh]
        if isinstance(file, InlineMesh):  # <mesh vertex face>: MuJoCo collides it as its hull, as every mesh
            shape = ConvexMesh(file.vertices * scale, name=name)
        else:  # MuJoCo's reading of OBJ files, and its collision of every mesh, static ones too, as the hull
            shape = Mesh(str(file), tuple(scale), name=name, first_object=True, static_hull=True)
    else:
        shape = _ellipsoid(loader, name, size[:3])
    margin = v.number(g, "margin", text=a["margin"], minimum=0.0)
    shape.local_pose = _grow(shape, pose, margin)
    if "name" in g.attrib:
        if g.get("name") in loader.geoms:
            loader.geom_repeated.add(g.get("name"))
        loader.geoms[g.get("name")] = (shape, margin)
    frictions = v.numbers(g, "friction", (1, 3), text=a["friction"])
    mu = float(frictions[0])
    # MuJoCo gives a pair of equal priority the larger condim and the larger friction of the two: PhysX's
    # combine mode max, and the material's condim (frictionless when both are 1); of different priority, the higher
    # one's parameters (Material.priority)
    condim = v.choice(g, "condim", a.get("condim", "3").strip(), ("1", "3", "4", "6"))
    priority = v.integer(g, "priority", a.get("priority", "0"), -(2**31), 2**31 - 1)
    shape.material = Material(mu, mu, 0.0, friction_combine="max", condim=int(condim), priority=priority)
    angular_friction(loader, shape.material, condim, frictions[1:], name, latent=True)
    if loader.opts.soft:  # MuJoCo's soft contact (io/mjcf/softness.py; contact_rows.py's soft normal row)
        soft_material(loader, shape.material, g, a)
    # MuJoCo's contact acts only within the margin, which the shape's growth (or rest offset) holds: a soft contact
    # acts only while the surfaces overlap. Its detection distance is the geom's `gap`, MuJoCo 4's band beyond the
    # margin where contacts are found but inactive (an <adhesion> pulls through them; the pair's is the sum, as
    # MuJoCo's), 0 by default: speculative points would cost slots and time and act on nothing (the dm_control dog
    # had 164 points, MuJoCo 10). PhysX's hard rows need one: at 0 a hard resting contact is found only in the
    # steps where it penetrates, and its friction comes and goes (dm walker kneeling)
    gap = v.number(g, "gap", 0.0, a.get("gap"), minimum=0.0)
    shape.contact_offset = gap if loader.opts.soft else DETECTION_OFFSET
    shape.collision_group = v.integer(g, "contype", a["contype"], 0, 2**31 - 1)
    shape.collision_mask = v.integer(g, "conaffinity", a["conaffinity"], 0, 2**31 - 1)
    return shape


def angular_friction(
    loader: _Loader, m: Material, condim: str, rest: np.ndarray, name: str, latent: bool = False
) -> None:
    """MuJoCo's torsional (condim 4 and 6) and rolling (condim 6) friction on material `m`: `rest`, the geom's or
    pair's friction values after the sliding one(s) (torsional, then rolling; MuJoCo's defaults 0.005 and 0.0001
    where the file gives fewer). They act as edges of MuJoCo's pyramidal cone (constraints/pyramid.py) or as rows of
    its elliptic cone (constraints/elliptic.py), so with soft constraints only; otherwise the contact is condim 3
    and `name` is counted for report_condim's one warning. `latent` (a geom): the values are kept below condim 4
    too, as MuJoCo's contact takes the larger condim of two geoms and the larger of each friction value: a condim-3
    geom's torsion counts against a condim-4 one (Material.condim decides where they act)."""
    if not loader.opts.soft:
        if condim in ("4", "6"):
            loader.angular_dropped.append(name)
        return
    torsion = float(rest[0]) if len(rest) > 0 else 0.005
    rolling = float(rest[1]) if len(rest) > 1 else 0.0001
    if condim not in ("4", "6"):
        if latent:
            m.torsional_friction, m.rolling_friction = torsion, rolling
        return
    # MuJoCo raises every friction coefficient of a contact to at least mjMINMU: a spin is resisted even where the
    # sliding friction is 0 (the pyramid's edges and the cone need a sliding coefficient; a condim-3 contact keeps
    # a 0 as none, the 1e-5 MuJoCo would give it being below anything it shows)
    m.static_friction = max(m.static_friction, MIN_MU)
    m.dynamic_friction = max(m.dynamic_friction, MIN_MU)
    m.torsional_friction = max(torsion, MIN_MU)
    m.rolling_friction = max(rolling, MIN_MU) if condim == "6" else rolling


def soft_material(loader: _Loader, m: Material, el: ET.Element, a: dict) -> None:
    """Give material `m` the softness of geom or pair `el` (attributes `a`, defaults applied): its solref,
    solimp and solmix, and the model's cone with its impratio (MuJoCo's pyramidal cone by default, or its elliptic
    one)."""
    m.softness = read_softness(loader.v, el, a)
    if el.tag == "geom":
        m.solmix = loader.v.number(el, "solmix", text=a.get("solmix", "1"), minimum=0.0)
    if loader.opts.cone == "pyramidal":
        m.pyramid_impratio = loader.opts.impratio
    else:
        m.elliptic_impratio = loader.opts.impratio


@dataclass
class InlineMesh:
    """A <mesh vertex face> asset: its vertices (V, 3) and triangles (T, 3), the convex hull's outward-wound faces
    when the file gives none (MuJoCo computes the hull then)."""

    vertices: np.ndarray
    triangles: np.ndarray


def inline_mesh(v: XmlValues, m: ET.Element) -> InlineMesh:
    """The InlineMesh of <mesh> element `m` (its vertex and optional face attributes)."""
    verts = v.numbers(m, "vertex", (12, 3 * 10**7), text=m.get("vertex"))
    if len(verts) % 3:
        raise v.fail(m, f"attribute vertex has {len(verts)} numbers; give 3 per vertex")
    verts = np.asarray(verts, float).reshape(-1, 3)
    if "face" in m.attrib:
        faces = v.numbers(m, "face", (3, 3 * 10**7), text=m.get("face"))
        if len(faces) % 3 or np.any(faces != np.round(faces)) or faces.min() < 0 or faces.max() >= len(verts):
            raise v.fail(m, f"attribute face: give 3 vertex indices in [0, {len(verts)}) per triangle")
        return InlineMesh(verts, np.asarray(faces, int).reshape(-1, 3))
    try:
        hull = ConvexHull(verts)
    except QhullError as e:
        raise v.fail(m, f"attribute vertex: the points span no volume ({str(e).splitlines()[0]})") from None
    tris = hull.simplices.copy()
    centre = verts[hull.vertices].mean(axis=0)
    for t in tris:  # wind each face counter-clockwise seen from outside
        a, b, c = verts[t]
        if np.dot(np.cross(b - a, c - a), a - centre) < 0.0:
            t[1], t[2] = t[2], t[1]
    return InlineMesh(verts, tris)


def mesh_data(file: InlineMesh | os.PathLike | str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, triangles) of a mesh asset: its file's first object (MuJoCo's reading of OBJ files), or an
    inline mesh's own."""
    if isinstance(file, InlineMesh):
        return file.vertices, file.triangles
    return read_mesh_file(file, where, first_object=True)


_FITTED = ("sphere", "capsule", "cylinder", "box", "ellipsoid")


def _fit_to_mesh(loader: _Loader, g: ET.Element, a: dict, kind: str) -> tuple[np.ndarray, Transform]:
    """(size, frame) of a primitive fitted to its mesh, as MuJoCo's compiler fits it: in the mesh's principal frame
    (its COM, axes by decreasing principal moment: the longest extent along z), to the mesh's equivalent-inertia
    box (half sizes h) or, with <compiler fitaabb="true">, to its bounding box in that frame, times the geom's
    fitscale. Sphere: mean(h) (aabb: max); capsule: radius (h0 + h1) / 2 and half length h2 - radius / 2 (aabb:
    max(h0, h1) and h2 - radius); cylinder: that radius and h2; box and ellipsoid: h."""
    v = loader.v
    if a["mesh"] not in loader.meshes:
        raise v.fail(g, f"attribute mesh='{a['mesh']}' names no <mesh> in <asset>")
    file, scale = loader.meshes[a["mesh"]]
    verts, tris = mesh_data(file, v.where(g))
    verts = np.asarray(verts) * scale
    try:  # the mesh's volume and inertia by the rule of its <mesh inertia>, as for a mesh geom (mass.py)
        volume, com, inertia = mesh_mass(verts, tris, loader.mesh_inertia.get(a["mesh"], "legacy"))
    except ValueError as e:
        raise v.fail(g, f"mesh '{a['mesh']}' cannot be fitted: {e}") from None
    moments, axes = np.linalg.eigh(inertia)
    order = np.argsort(-moments)
    moments, axes = moments[order], axes[:, order]
    if np.linalg.det(axes) < 0.0:
        axes[:, 2] = -axes[:, 2]
    center = com
    if loader.fitaabb:
        local = (verts - com) @ axes
        lo, hi = local.min(axis=0), local.max(axis=0)
        h, center = 0.5 * (hi - lo), com + axes @ (0.5 * (hi + lo))
    else:
        h = np.sqrt(np.maximum(0.0, 1.5 / volume * (moments.sum() - 2.0 * moments)))
    if kind == "sphere":
        size = [h.max() if loader.fitaabb else h.mean()]
    elif kind in ("capsule", "cylinder"):
        r = max(h[0], h[1]) if loader.fitaabb else 0.5 * (h[0] + h[1])
        size = [r, h[2] if kind == "cylinder" else max(0.0, h[2] - (r if loader.fitaabb else 0.5 * r))]
    else:
        size = list(h)
    fitscale = v.number(g, "fitscale", 1.0, a.get("fitscale"), minimum=0.0)
    return np.array(size) * fitscale, Transform(center, quat_from_matrix(axes))


def report_condim(loader: _Loader) -> None:
    """The geoms and pairs whose condim 4 or 6 acts as 3 (one warning)."""
    if loader.angular_dropped:
        names = loader.angular_dropped
        warnings.warn(
            f"MJCF '{loader.path.name}': {len(names)} condim 4 or 6 geom(s) or pair(s) (first '{names[0]}') act "
            "as condim 3 here: torsional and rolling friction are part of MuJoCo's friction cones, which need "
            "soft constraints (load_mjcf's default)",
            RuntimeWarning,
            stacklevel=4,
        )


def _grow(shape: Shape, pose: Transform, margin: float) -> Transform:
    """MuJoCo's contact acts once two geoms are closer than the sum of their margins, and they rest about that
    far apart; artic's act at touch. So each shape grows by its margin (its pose returned): spheres, capsules
    and ellipsoids (their radii) exactly, planes and height fields moved out along their normal, boxes and
    cylinders by their half sizes (exact on their faces; their edges and corners reach up to (sqrt(3) - 1)
    margin farther than MuJoCo's rounded ones). A mesh (its hull), which cannot grow, gets the margin as its
    rest offset: its contacts hold it that far from the other surface, which is MuJoCo's margin exactly."""
    if margin == 0.0:
        return pose
    if isinstance(shape, (Sphere, Capsule)):
        shape.radius = shape.radius + margin
    elif isinstance(shape, Cylinder):
        shape.radius, shape.half_height = shape.radius + margin, shape.half_height + margin
    elif isinstance(shape, Box):
        shape.half_extents = tuple(np.asarray(shape.half_extents) + margin)
    elif isinstance(shape, ConvexMesh):  # an ellipsoid: vertices ELLIPSOID_DIRECTIONS * radii
        radii = np.abs(shape.vertices).max(axis=0)
        shape.vertices = ELLIPSOID_DIRECTIONS * (radii + margin)
    elif isinstance(shape, Plane):  # the plane's normal is its x axis
        return pose * Transform(np.array([margin, 0.0, 0.0]))
    elif isinstance(shape, TriangleMesh):  # a height field, facing its +z
        return pose * Transform(np.array([0.0, 0.0, margin]))
    else:
        shape.rest_offset = margin
    return pose


def _ellipsoid(loader, name: str, radii) -> Shape:
    """An ellipsoid of three equal radii is a sphere; any other collides as the convex polytope inscribed in it
    through ELLIPSOID_DIRECTIONS (its mass properties stay the ellipsoid's, mass.py)."""
    radii = np.asarray(radii, dtype=float)
    if np.all(radii == radii[0]):
        return Sphere(float(radii[0]), name=name)
    loader.ellipsoids.append(name)
    return ConvexMesh(vertices=ELLIPSOID_DIRECTIONS * radii, name=name)
