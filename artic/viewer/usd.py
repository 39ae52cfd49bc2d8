"""Write a simulation as a USD stage (Pixar's Universal Scene Description, what PhysX, Isaac Sim, Omniverse, usdview,
Houdini and Blender read): the bodies' shapes under one transform per link, time-sampled, and optionally the
contact points. Written with `usd-core` from the package registry (pip install 'artic[usd]'); docs/viewer.md says
how to open it.

Layout (Z up, metres, `timeCodesPerSecond` = 1 / dt, frame k at time code k):

    /World                          the default prim
      /<articulation>/<link>        an Xform per link: xformOp:translate (double3) and xformOp:orient (quatd), sampled
        /<shape>                    a Cube (scaled to the box), Sphere, Capsule or Cylinder (along X, as PhysX's), a
                                    Mesh (triangles; a convex mesh as its hull), or a large thin Cube for a plane;
                                    its pose in the link frame as its own translate and orient; displayColor per link
      /statics/<actor>/<shape>      static actors, posed once
      /contacts                     optional: a Points prim of the contact points, sampled per frame

Names are made valid USD identifiers (Tf.MakeValidIdentifier) and unique; each link prim keeps the artic name in its
`artic:name` attribute.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..description.shapes import Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere, TriangleMesh
from ..errors import ArticError, ValidationError

if TYPE_CHECKING:
    from ..description.articulation import Articulation
    from ..sim.scene import Scene
from .replay import _as_articulations, _color, _hull_triangles, _palette, _poses_array

PLANE_HALF_SIZE = 50.0  # [m] a plane is drawn as a square of this half size (USD has no infinite plane to render)
PLANE_HALF_THICKNESS = 0.005  # [m]


def _pxr():
    try:
        from pxr import Gf, Sdf, Tf, Usd, UsdGeom, Vt
    except ImportError:
        raise ArticError(
            "write_usd: USD export needs usd-core; pip install 'artic[usd]' (or pip install usd-core)"
        ) from None
    return Gf, Sdf, Tf, Usd, UsdGeom, Vt


def write_usd(
    path: os.PathLike | str,
    source: str | Path | Scene | Articulation | Sequence,
    link_poses: ArrayLike | Sequence[ArrayLike],
    dt: float,
    *,
    contacts: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike] | None] | None = None,
    env: int = 0,
    colors: dict | None = None,
) -> Path:
    """Write a USD stage to `path` (.usda: text; .usd or .usdc: binary) and return it. `source`, `link_poses`,
    `dt`, `contacts`, `env` and `colors` are write_replay's (docs/viewer.md): a model path, a Scene or artic
    objects; per frame the links' world poses (px, py, pz, qx, qy, qz, qw), (T, L, 7) or (T, E, L, 7)."""
    Gf, Sdf, Tf, Usd, UsdGeom, Vt = _pxr()
    if not (isinstance(dt, (int, float)) and np.isfinite(dt) and dt > 0):
        raise ValidationError(f"write_usd: dt must be a positive number of seconds, got {dt!r}")
    if not isinstance(path, (str, os.PathLike)) or Path(path).suffix not in (".usda", ".usd", ".usdc"):
        raise ValidationError(f"write_usd: path must be a .usda, .usd or .usdc file path, got {path!r}")
    path = Path(path)
    if not path.resolve().parent.is_dir():
        raise ValidationError(f"write_usd: the folder of {path} does not exist")
    arts, statics, _, _ = _as_articulations(source)
    poses = _poses_array(link_poses, arts, env).astype(np.float64)  # (T, B, 7), checked finite and unit
    frames = len(poses)
    if contacts is not None and len(contacts) != frames:
        raise ValidationError(f"write_usd: {len(contacts)} contact frames for {frames} pose frames; give one per frame")
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(1.0 / dt)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(frames - 1)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    names = _Names(Tf)
    colors = dict(colors or {})
    palette = _palette(sum(a.link_count for a in arts))
    body = 0
    for art in arts:
        art_path = names.child("/World", art.name)
        UsdGeom.Xform.Define(stage, art_path)
        for link in art._topology().links:
            owner = f"articulation '{art.name}' link '{link.name}'"
            color = _color(colors.pop(link.name), owner) if link.name in colors else palette[body]
            xf = UsdGeom.Xform.Define(stage, names.child(art_path, link.name))
            xf.GetPrim().CreateAttribute("artic:name", Sdf.ValueTypeNames.String).Set(link.name)
            translate = xf.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble)
            orient = xf.AddOrientOp(UsdGeom.XformOp.PrecisionDouble)
            for k in range(frames):
                p = poses[k, body]
                translate.Set(Gf.Vec3d(*p[:3]), k)
                orient.Set(_quat(p[3:], Gf), k)
            for shape in link.shapes:
                _shape(stage, names, str(xf.GetPath()), shape, color, owner)
            body += 1
    if colors:
        raise ValidationError(f"write_usd colors: no link named {sorted(colors)}")
    if statics:
        UsdGeom.Xform.Define(stage, "/World/statics")
    for actor in statics:
        xf = UsdGeom.Xform.Define(stage, names.child("/World/statics", actor.name))
        _place(xf, actor.pose, Gf, UsdGeom)
        for shape in actor.shapes:
            _shape(stage, names, str(xf.GetPath()), shape, "#9aa3ad", f"static actor '{actor.name}'")
    if contacts is not None:
        points = UsdGeom.Points.Define(stage, "/World/contacts")
        for k, frame in enumerate(contacts):
            pts = np.zeros((0, 3)) if frame is None else np.asarray(frame[0], float).reshape(-1, 3)
            points.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(pts.astype(np.float32)), k)
            points.GetWidthsAttr().Set(Vt.FloatArray([0.02] * len(pts)), k)
        points.GetDisplayColorAttr().Set([Gf.Vec3f(0.9, 0.1, 0.1)])
    try:
        stage.GetRootLayer().Export(str(path))
    except Exception as e:  # pxr raises Tf.ErrorException for an unwritable file
        raise ValidationError(f"write_usd: cannot write {path} ({e})") from None
    return path


class _Names:
    """Valid, unique USD prim paths under a parent."""

    def __init__(self, tf):
        self.tf, self.used = tf, set()

    def child(self, parent: str, name: str) -> str:
        base = self.tf.MakeValidIdentifier(name or "unnamed")
        candidate, k = f"{parent}/{base}", 1
        while candidate in self.used:
            candidate, k = f"{parent}/{base}_{k}", k + 1
        self.used.add(candidate)
        return candidate


def _quat(xyzw, Gf):
    """Gf.Quatd (w, x, y, z) of an x y z w quaternion, normalised in double precision: USD turns an orient into a
    matrix through the angle acos(w), so a float32 quaternion of norm 1 - 6e-8 (what a step leaves) would tilt by
    7e-4 rad."""
    q = np.asarray(xyzw, np.float64)
    x, y, z, w = q / np.linalg.norm(q)
    return Gf.Quatd(float(w), float(x), float(y), float(z))


def _place(xformable, pose, Gf, UsdGeom) -> None:
    """A constant translate + orient (an artic Transform: p, q as x y z w)."""
    xformable.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*(float(x) for x in pose.p)))
    xformable.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(_quat(pose.q, Gf))


def _shape(stage, names, parent: str, shape, color: str, owner: str) -> None:
    """One shape prim under `parent`, posed in its frame, coloured."""
    Gf, _, _, _, UsdGeom, Vt = _pxr()
    prim_path = names.child(parent, shape.name or type(shape).__name__.lower())
    scale = None
    if isinstance(shape, Box):
        geom = UsdGeom.Cube.Define(stage, prim_path)
        geom.GetSizeAttr().Set(2.0)
        scale = [float(h) for h in shape.half_extents]
    elif isinstance(shape, Sphere):
        geom = UsdGeom.Sphere.Define(stage, prim_path)
        geom.GetRadiusAttr().Set(float(shape.radius))
    elif isinstance(shape, (Capsule, Cylinder)):
        geom = (UsdGeom.Capsule if isinstance(shape, Capsule) else UsdGeom.Cylinder).Define(stage, prim_path)
        geom.GetRadiusAttr().Set(float(shape.radius))
        geom.GetHeightAttr().Set(2.0 * float(shape.half_height))
        geom.GetAxisAttr().Set(UsdGeom.Tokens.x)
    elif isinstance(shape, Plane):  # the half-space x <= 0: a thin square slab just below x = 0
        geom = UsdGeom.Cube.Define(stage, prim_path)
        geom.GetSizeAttr().Set(2.0)
        scale = [PLANE_HALF_THICKNESS, PLANE_HALF_SIZE, PLANE_HALF_SIZE]
    elif isinstance(shape, (Mesh, TriangleMesh, ConvexMesh)):
        if isinstance(shape, ConvexMesh):
            verts, tris = _hull_triangles(np.asarray(shape.hull_points, float), f"{owner} {shape.label()}")
        elif shape.vertices is None:
            return  # a mesh file artic does not read: nothing to draw (write_replay leaves it out too)
        else:
            verts, tris = np.asarray(shape.vertices, float), np.asarray(shape.triangles, int)
        geom = UsdGeom.Mesh.Define(stage, prim_path)
        geom.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(np.asarray(verts, np.float32)))
        geom.GetFaceVertexCountsAttr().Set(Vt.IntArray([3] * len(tris)))
        geom.GetFaceVertexIndicesAttr().Set(Vt.IntArray.FromNumpy(np.asarray(tris, np.int32).reshape(-1)))
        geom.GetSubdivisionSchemeAttr().Set(UsdGeom.Tokens.none)
    else:
        raise ValidationError(f"{owner}: write_usd cannot draw a {type(shape).__name__} shape")
    pose = shape.local_pose
    if isinstance(shape, Plane):  # the slab's centre half its thickness below the plane
        from ..math.np_spatial import quat_rotate

        offset = quat_rotate(np.asarray(pose.q, float), np.array([-PLANE_HALF_THICKNESS, 0.0, 0.0]))
        pose = type(pose)(np.asarray(pose.p, float) + offset, pose.q)
    _place(geom, pose, Gf, UsdGeom)
    if scale is not None:
        geom.AddScaleOp().Set(Gf.Vec3f(*scale))
    rgb = [int(color[i : i + 2], 16) / 255.0 for i in (1, 3, 5)]
    geom.GetDisplayColorAttr().Set([Gf.Vec3f(*rgb)])
