"""MJCF body mass properties computed the way MuJoCo's compiler computes them (loader.py calls `MassRules`).

The rules, as MuJoCo 3.x/4.x applies them (user_objects.cc, user_mesh.cc, engine_support.c):

* Which source. `compiler inertiafromgeom`: "true" takes a body's mass from its geoms even when it has an
  <inertial> (which stays when none of its geoms has mass); "auto" (the default) uses the <inertial> when there is
  one, else the geoms; "false" uses only the <inertial>, and a body without one has no mass. Only geoms whose
  `group` lies in `compiler inertiagrouprange` (default 0 5) count, and only if their mass exceeds 1e-14.
* A geom's mass is its `mass` attribute when given (0 gives 0; a geom of volume <= 1e-14 then gets nothing), else
  `density` (default 1000) times its volume. Its inertia is that of the solid of uniform density, or of a thin
  shell of the same mass when `shellinertia="true"` (then "volume" means area):
  sphere 2/5 m r^2 (shell 2/3 m r^2); box m/3 (b^2 + c^2) for half sizes; cylinder m (3 r^2 + h^2)/12 about the
  radial axes (h the full height) and m r^2/2 about its axis; ellipsoid m/5 (b^2 + c^2) (its shell area is
  Thomsen's approximation, its shell inertia the difference of two solids 1e-6 apart); capsule: a cylinder plus
  two hemispheres, the mass split by volume, the hemispheres' inertia 2/5 m_s r^2 about their own centre plus
  m_s h (3 r + 2 h)/8 about the radial axes (shell: split by area, hemispheres at half their radius from the
  cap plane). `fromto` sets the centre to the midpoint, the z axis along the segment and the half-length to half
  its length; for box and ellipsoid the one size value is the two radial sizes.
* Mesh geoms take the mesh asset's properties, chosen by the mesh's `inertia` attribute (default "legacy"):
  "exact" sums signed tetrahedra over the triangles; "legacy" sums their absolute values (so a mesh with
  inconsistently wound or open faces still has a volume; the result depends on the apex: first the centroid of
  the faces for the COM, then the COM for volume and inertia); "convex" uses the convex hull of the vertices;
  "shell" uses area instead of volume (a triangle's second moment a/12 (sum v v^T + s s^T), its COM weighted
  3/4 on its centroid and 1/4 on the faces' centroid, as MuJoCo does). `shellinertia` on a mesh geom is an error
  in MuJoCo (and here).
* Several geoms add up about their common COM (parallel axes). An <inertial> gives pos, mass and diaginertia
  (principal moments, oriented by its quat/euler/...) or fullinertia (xx yy zz xy xz yz in the body frame, no
  orientation allowed with it); pos, mass and one of the two are required.
* Then for every body: mass = max(mass, boundmass) and each principal moment max(moment, boundinertia); moments
  that break A + B >= C become their mean with `balanceinertia="true"`, else MuJoCo refuses the model (so does
  artic). Last, `settotalmass` > 0 scales every body's mass and inertia by one factor so that they add up to it.

A body that ends with no mass is given 1e-6 kg and 1e-9 kg m^2 by artic (a massless link would make the
joint-space inertia singular); MuJoCo keeps 0 for it. Its COM is where MuJoCo's compiler puts it, at the body's own
`pos` read in the body's frame (MuJoCo copies body_pos into body_ipos; the pos as written, before a <frame>): the
point MuJoCo's body_invweight0 and so a soft weld's, connect's or contact's regularizer is taken at (metaworld's
Sawyer hand, welded to its mocap body, sagged 3.5x less than in MuJoCo), and where a boundmass puts the mass.
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...description.shapes import Mesh
from ...math.np_spatial import Transform, quat_between, quat_to_matrix
from ..xml_values import MAX_MAGNITUDE

if TYPE_CHECKING:
    from ...description.articulation import Link
    from ...description.shapes import Shape
    from .loader import _Loader

_EPS = 1e-14  # MuJoCo's mjEPS: a geom lighter than this, or of smaller volume, adds nothing
MESH_INERTIA = ("legacy", "exact", "convex", "shell")
_PRIMITIVES = ("sphere", "capsule", "cylinder", "ellipsoid", "box")


class MassRules:
    """Per model: the compiler's mass settings, each body's mass properties as they are computed (kept so that
    `finish` can apply settotalmass across the model)."""

    def __init__(self, loader: _Loader, root: ET.Element):
        self.ld = loader
        v = loader.v
        self.group_range = (0, 5)
        self.bound_mass = self.bound_inertia = self.total_mass = 0.0
        self.balance = False
        for comp in root.findall("compiler"):
            if "inertiagrouprange" in comp.attrib:
                lo, hi = v.numbers(comp, "inertiagrouprange", 2)
                self.group_range = (lo, hi)
            self.bound_mass = v.number(comp, "boundmass", self.bound_mass, minimum=0.0)
            self.bound_inertia = v.number(comp, "boundinertia", self.bound_inertia, minimum=0.0)
            self.total_mass = v.number(comp, "settotalmass", self.total_mass)
            if "balanceinertia" in comp.attrib:
                self.balance = v.choice(comp, "balanceinertia", comp.get("balanceinertia"), ("true", "false")) == "true"
        self.bodies = []  # (link, mass, com, tensor) per body, in load order

    def fill(self, link: Link, body: ET.Element, cls: str, shapes: list[Shape]) -> None:
        """Give `link` the mass properties of MJCF `body` (its geoms' artic shapes in `shapes`, in order)."""
        ld, v = self.ld, self.ld.v
        mode = ld.inertia_from_geom
        inertial = body.find("inertial")
        mass, com, tensor = 0.0, np.zeros(3), np.zeros((3, 3))
        if mode == "true" or (mode == "auto" and inertial is None):
            mass, com, tensor = self._from_geoms(body, cls, shapes)
            self._check_magnitude(body, mass, tensor)
        if mass == 0.0 and inertial is not None:  # under "true" too when no geom has mass: MuJoCo keeps it then
            mass, com, tensor = self._inertial(inertial)
        elif mass == 0.0:  # MuJoCo's compiler puts a massless body's COM at its own `pos` (body_ipos = body_pos)
            com = v.numbers(body, "pos", 3, (0.0, 0.0, 0.0), ld.written_pos.get(body, body.get("pos")))
        moments, axes = np.linalg.eigh(tensor)
        bounded = np.maximum(moments, self.bound_inertia)
        a, b, c = bounded
        tol = 1e-12 * c  # eigh's round-off must not break a flat body's exact A + B = C (eigh sorts: c largest)
        if a + b < c - tol:
            if not self.balance:
                raise v.fail(
                    body,
                    f"its principal inertias {bounded.tolist()} break A + B >= C (MuJoCo refuses "
                    "this too); fix the <inertial> or set <compiler balanceinertia='true'>",
                )
            bounded[:] = bounded.mean()
        tensor = axes @ np.diag(bounded) @ axes.T
        mass = max(mass, self.bound_mass)
        self.bodies.append((link, body, mass, com, tensor))
        self._set(link, body, mass, com, tensor)

    def _check_magnitude(self, body, mass, tensor):
        if not mass <= MAX_MAGNITUDE or not np.abs(tensor).max() <= MAX_MAGNITUDE:  # also catches inf and nan
            raise self.ld.v.fail(
                body,
                f"its geoms give a mass of {mass:.3g} kg and inertia up to "
                f"{np.abs(tensor).max():.3g} kg m^2, beyond 1e15 (float32 overflows in the "
                "solver); check the geom sizes, densities and masses",
            )

    def finish(self) -> None:
        """`compiler settotalmass`: scale every body's mass and inertia so that they add up to it."""
        if self.total_mass <= 0.0:
            return
        total = sum(m for _, _, m, _, _ in self.bodies)
        scale = max(1e-15, self.total_mass / max(1e-15, total))  # MuJoCo's mjMINVAL guards
        for link, body, mass, com, tensor in self.bodies:
            self._set(link, body, mass * scale, com, tensor * scale)

    def _set(self, link, body, mass, com, tensor):
        with self.ld.v.context(body):
            if mass <= 0.0:  # MuJoCo keeps 0; a tiny mass keeps the joint-space inertia positive definite
                link.mass = 1e-6
                link.inertia = (1e-9, 1e-9, 1e-9)
                link.cmass_local_pose = Transform(com)
                link.in_fluid = False  # MuJoCo's massless body has no inertia box
            else:
                link.set_mass_and_inertia_tensor(mass, com, tensor)

    def _inertial(self, el):
        ld, v = self.ld, self.ld.v
        a = el.attrib
        mass = v.number(el, "mass", minimum=0.0)
        if ("diaginertia" in a) == ("fullinertia" in a):  # MuJoCo refuses a moving body without inertia
            raise v.fail(el, "needs exactly one of diaginertia and fullinertia")
        if "pos" not in a:
            raise v.fail(el, "needs attribute pos (the COM in the body frame), as MuJoCo requires")
        if "fullinertia" in a:
            given = [k for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if k in a]
            if given:
                raise v.fail(
                    el,
                    f"gives fullinertia and an orientation ({given[0]}); fullinertia is in the body "
                    "frame, remove the orientation (MuJoCo refuses both too)",
                )
            xx, yy, zz, xy, xz, yz = v.numbers(el, "fullinertia", 6)
            tensor = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            if np.linalg.eigvalsh(tensor).min() < -1e-12 * max(1e-300, np.abs(tensor).max()):
                raise v.fail(el, f"attribute fullinertia='{a['fullinertia']}' is not positive semi-definite")
            return mass, v.numbers(el, "pos", 3), tensor
        frame = ld._frame(el, a)
        moments = v.numbers(el, "diaginertia", 3)
        if moments.min() < 0.0:
            raise v.fail(el, f"attribute diaginertia='{a['diaginertia']}' must not be negative")
        r = quat_to_matrix(frame.q)
        return mass, frame.p, r @ np.diag(moments) @ r.T

    def _from_geoms(self, body, cls, shapes):
        parts = []
        for g, shape in zip(body.findall("geom"), shapes):
            with self.ld.v.context(g):
                part = self._geom(g, cls, shape)
            if part is not None and part[0] > _EPS:
                parts.append(part)
        if not parts:
            return 0.0, np.zeros(3), np.zeros((3, 3))
        mass = sum(m for m, _, _ in parts)
        com = sum(m * c for m, c, _ in parts) / mass
        tensor = np.zeros((3, 3))
        for m, c, i in parts:
            d = c - com
            tensor += i + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
        return mass, com, tensor

    def _geom(self, g, cls, shape):
        """(mass, COM, inertia tensor about the COM) of a geom in the body frame, or None if it adds no mass."""
        ld, v = self.ld, self.ld.v
        a = ld._attrs(g, cls)
        group = v.integer(g, "group", a.get("group", "0"), -(2**31), 2**31 - 1)
        if not self.group_range[0] <= group <= self.group_range[1]:
            return None
        kind = a.get("type", "sphere")
        shell = v.choice(g, "shellinertia", a.get("shellinertia", "false"), ("true", "false")) == "true"
        if kind == "mesh" and shell:
            raise v.fail(
                g,
                "shellinertia='true' on a mesh geom; give the <mesh> asset inertia='shell' instead "
                "(MuJoCo refuses this too)",
            )
        if kind not in _PRIMITIVES and kind != "mesh":
            return None  # planes have no volume; other types are refused when the shape is made
        given = v.number(g, "mass", text=a["mass"], minimum=0.0) if "mass" in a else None
        density = v.number(g, "density", text=a.get("density", "1000"), minimum=0.0)
        if kind == "mesh":
            volume, com, unit = self._mesh(g, a, shape)
        else:
            pose, size = self._primitive_frame(g, a, kind)
            volume = _volume(kind, size, shell)
            com, unit = pose.p, None
        if given is not None:
            if given == 0.0 or volume <= _EPS:
                return None
            mass = given
        else:
            if density == 0.0 or volume <= _EPS:  # a mesh whose file is not read weighs nothing (warned in _mesh)
                return None
            mass = density * volume
        if kind == "mesh":
            return mass, com, unit * (mass / volume)
        r = quat_to_matrix(pose.q)
        return mass, com, r @ np.diag(_moments(kind, size, mass, shell)) @ r.T

    def _primitive_frame(self, g, a, kind):
        """(pose in the body frame, MuJoCo's three size values) of a primitive geom, `fromto` resolved."""
        v = self.ld.v
        size = np.zeros(3)
        if g in self.ld.fitted:  # a primitive fitted to its mesh (geoms.py): MuJoCo weighs what it fitted
            fitted, frame = self.ld.fitted[g]
            size[: len(fitted)] = fitted
            if kind == "sphere":
                size[1:] = 0.0
            return self.ld._frame(g, a) * frame, size
        given = v.numbers(g, "size", (0, 3), (), a.get("size"))
        size[: len(given)] = given
        if "fromto" in a and kind != "sphere":
            ft = v.numbers(g, "fromto", 6, text=a["fromto"])
            axis = ft[3:] - ft[:3]
            length = float(np.linalg.norm(axis))
            if length < 2 * _EPS:
                raise v.fail(g, f"attribute fromto='{a['fromto']}': the two end points coincide")
            half = 0.5 * length
            size = np.array([size[0], size[0], half]) if kind in ("box", "ellipsoid") else np.array([size[0], half, 0])
            return Transform(0.5 * (ft[:3] + ft[3:]), quat_between(np.array([0.0, 0.0, 1.0]), axis / length)), size
        if kind == "sphere":
            size[1:] = 0.0
        return self.ld._frame(g, a), size

    def _mesh(self, g, a, shape):
        """(volume or area, COM, unit-density inertia tensor about the COM) of a mesh geom, in the body frame."""
        v = self.ld.v
        source, scale = self.ld.meshes.get(a.get("mesh"), (None, None))
        if hasattr(source, "triangles"):  # an inline <mesh vertex face> (geoms.InlineMesh), collided as its hull
            verts, tris, what = source.vertices * scale, source.triangles, "given by its vertices"
        elif isinstance(shape, Mesh) and shape.vertices is not None:
            verts, tris, what = shape.vertices, shape.triangles, f"file '{shape.filename}'"
        else:
            warnings.warn(
                f"{v.where(g)}: the mesh's file format is not read, so this geom adds no mass (MuJoCo "
                "would give it the mesh's volume times its density)",
                RuntimeWarning,
                stacklevel=6,
            )
            return 0.0, np.zeros(3), np.zeros((3, 3))
        kind = self.ld.mesh_inertia.get(a.get("mesh"), "legacy")
        try:
            volume, com, unit = mesh_mass(verts, tris, kind)
        except ValueError as e:
            raise v.fail(g, f"mesh '{a.get('mesh')}' ({what}): {e}") from None
        pose = shape.local_pose
        r = quat_to_matrix(pose.q)
        return volume, pose.transform_point(com), r @ unit @ r.T


def _volume(kind, s, shell):
    r = s[0]
    if kind == "sphere":
        return 4 * math.pi * r**2 if shell else 4 / 3 * math.pi * r**3
    if kind == "capsule":
        h = 2 * s[1]
        return 4 * math.pi * r**2 + 2 * math.pi * r * h if shell else math.pi * (r * r * h + 4 / 3 * r**3)
    if kind == "cylinder":
        h = 2 * s[1]
        return 2 * math.pi * r * r + 2 * math.pi * r * h if shell else math.pi * r * r * h
    if kind == "ellipsoid":
        if shell:  # Thomsen's approximation of the surface area, as MuJoCo uses
            p = 1.6075
            t = (s[0] * s[1]) ** p + (s[1] * s[2]) ** p + (s[2] * s[0]) ** p
            return 4 * math.pi * (t / 3) ** (1 / p)
        return 4 / 3 * math.pi * s[0] * s[1] * s[2]
    # box
    return 8 * (s[0] * s[1] + s[1] * s[2] + s[2] * s[0]) if shell else 8 * s[0] * s[1] * s[2]


def _moments(kind, s, m, shell):
    """Principal moments of inertia of a primitive geom of mass m, in its own frame (MuJoCo's formulas)."""
    if kind == "sphere":
        i = (2 / 3 if shell else 2 / 5) * m * s[0] ** 2
        return np.array([i, i, i])
    if kind in ("box", "ellipsoid") and not shell:
        sq = s**2
        k = 1 / 3 if kind == "box" else 1 / 5
        return k * m * np.array([sq[1] + sq[2], sq[0] + sq[2], sq[0] + sq[1]])
    if kind == "ellipsoid":  # shell: the solid grown by 1e-6 minus the solid, at the density giving mass m
        eps = 1e-6
        big = s + eps
        va, vb = 4 / 3 * math.pi * np.prod(s), 4 / 3 * math.pi * np.prod(big)
        rho = m / (vb - va)
        return _moments("ellipsoid", big, rho * vb, False) - _moments("ellipsoid", s, rho * va, False)
    if kind == "box":  # shell: six plates, each pair sharing 1/2 of its area's mass
        lx, ly, lz = 2 * s
        a0, a1, a2 = lx * ly, ly * lz, lz * lx
        tot = 2 * (a0 + a1 + a2)
        m0, m1, m2 = m * a0 / tot, m * a1 / tot, m * a2 / tot
        sx, sy, sz = s**2
        ix = 2 * (m0 * sz + m2 * sy + m0 * ly**2 / 12 + m1 * (ly**2 + lz**2) / 12 + m2 * lz**2 / 12)
        iy = 2 * (m0 * sz + m1 * sx + m0 * lx**2 / 12 + m1 * lz**2 / 12 + m2 * (lx**2 + lz**2) / 12)
        iz = 2 * (m1 * sx + m2 * sy + m0 * (lx**2 + ly**2) / 12 + m1 * ly**2 / 12 + m2 * lx**2 / 12)
        return np.array([ix, iy, iz])
    r, half = s[0], s[1]
    h = 2 * half
    if kind == "cylinder":
        if not shell:
            radial = m * (3 * r * r + h * h) / 12
            return np.array([radial, radial, m * r * r / 2])
        disk = math.pi * r * r
        md = m * disk / (2 * disk + 2 * math.pi * r * h)  # each end disk
        mc = m - 2 * md
        radial = mc * (6 * r * r + h * h) / 12 + 2 * (md * r * r / 4 + md * half * half)
        return np.array([radial, radial, mc * r * r + md * r * r])
    # capsule
    if not shell:
        ms = m * 4 * r / (4 * r + 3 * h)  # the two hemispheres' share, by volume
        mc = m - ms
        sph = 2 * ms * r * r / 5
        radial = mc * (3 * r * r + h * h) / 12 + sph + ms * h * (3 * r + 2 * h) / 8
        return np.array([radial, radial, mc * r * r / 2 + sph])
    a_sph, a_cyl = 4 * math.pi * r * r, 2 * math.pi * r * h
    ms = m * a_sph / (a_sph + a_cyl)
    mc = m - ms
    sph = 2 * ms * r * r / 3
    at = half + r / 2  # hemisphere shells' centres sit at half their radius beyond the cap planes
    radial = mc * (6 * r * r + h * h) / 12 + sph + ms * (at * at - r * r / 4)
    return np.array([radial, radial, mc * r * r + sph])


def mesh_mass(verts: ArrayLike, tris: ArrayLike, kind: str = "legacy") -> tuple[float, np.ndarray, np.ndarray]:
    """(volume, or area for "shell"; COM; inertia tensor about the COM at unit density) of a triangle mesh by
    MuJoCo's rules for a <mesh inertia=kind> (see the module docstring). ValueError when the volume (area) is
    below 1e-30 or negative, as MuJoCo refuses such meshes."""
    verts = np.asarray(verts, dtype=float)
    tris = np.asarray(tris)
    d, e, f = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    cross = np.cross(e - d, f - d)
    area = 0.5 * np.linalg.norm(cross, axis=1)
    centre = (d + e + f) / 3
    if area.sum() < 1e-30:
        raise ValueError("the mesh has no surface area")
    apex = (area[:, None] * centre).sum(axis=0) / area.sum()  # MuJoCo's centroid of the faces
    if kind == "convex":
        d, e, f, cross, area, centre = _hull_faces(verts)
    normal = cross / np.maximum(2 * area, 1e-300)[:, None]

    def weights(origin):
        if kind == "shell":
            return area.copy()
        w = np.einsum("ij,ij->i", centre - origin, normal) * area / 3
        return np.abs(w) if kind == "legacy" else w

    w = weights(apex)
    total = w.sum()
    if total < 1e-30:
        raise ValueError(
            "the mesh volume is negative (triangles wound inwards)"
            if total < 0
            else "the mesh volume is too small; give the <mesh> inertia='shell'"
        )
    com = (w[:, None] * (0.75 * centre + 0.25 * apex)).sum(axis=0) / total
    d, e, f, centre = d - com, e - com, f - com, centre - com
    w = weights(np.zeros(3))
    c = 12.0 if kind == "shell" else 20.0
    s = d + e + f
    second = (
        np.einsum("i,ij,ik->jk", w / c, d, d)
        + np.einsum("i,ij,ik->jk", w / c, e, e)
        + np.einsum("i,ij,ik->jk", w / c, f, f)
        + np.einsum("i,ij,ik->jk", w / c, s, s)
    )
    inertia = np.trace(second) * np.eye(3) - second
    return float(w.sum()), com, inertia


def _hull_faces(verts):
    """The convex hull's triangles wound outwards: (d, e, f, cross products, areas, centroids)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(verts)
    except (QhullError, ValueError) as err:
        raise ValueError(f"no convex hull ({str(err).strip().splitlines()[0]})") from None
    tris = hull.simplices.copy()
    d, e, f = (verts[tris[:, k]] for k in range(3))
    cross = np.cross(e - d, f - d)
    inward = np.einsum("ij,ij->i", cross, hull.equations[:, :3]) < 0
    tris[inward] = tris[inward][:, ::-1]
    d, e, f = (verts[tris[:, k]] for k in range(3))
    cross = np.cross(e - d, f - d)
    return d, e, f, cross, 0.5 * np.linalg.norm(cross, axis=1), (d + e + f) / 3
