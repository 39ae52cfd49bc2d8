"""Mesh files for URDF and MJCF `<mesh>` shapes: read once, when the `Mesh` shape is built, and validated there.

Readers: STL (binary and ASCII), COLLADA (.dae, through pycollada), PLY, OFF and glTF binary through trimesh; MuJoCo's
own binary MSH format (`_read_msh`: robosuite's objects, dm_control's fruit fly); OBJ by the strict reader below,
because trimesh reads an OBJ face index 0 as the last vertex and keeps 2-coordinate vertices without a word. A DAE
file is read with its materials stripped: collision needs only the geometry, and pycollada drops a node's geometry
when one of its materials refers to a missing texture (ANYmal's foot).

Every file must give finite 3-D vertices and at least one triangle whose indices lie in range; anything else, and
any exception of the reading libraries, becomes a `MeshFileError` (an ArticError) naming the file. Files are cached
by path, modification time and size: robots share mesh files across links and rebuilds.
"""

from __future__ import annotations

import io
import os
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import ValidationError

TRIMESH_FORMATS = (".stl", ".dae", ".ply", ".off", ".glb")
READ_FORMATS = (".obj", ".msh") + TRIMESH_FORMATS


class MeshFileError(ValidationError):
    """A mesh file is missing, unreadable or holds invalid geometry."""


class UnsupportedMeshFormat(MeshFileError):
    """A mesh file whose format artic does not read."""


_MESH_FILES = {}  # (path, mtime_ns, size) -> (vertices (V, 3) float, triangles (T, 3) int32)


def read_mesh_file(path: os.PathLike | str, owner: str, first_object: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), triangles (T, 3)) of a mesh file, validated; `owner` names the shape in errors.
    `first_object`: of an OBJ file, the faces of its first object or group only (MuJoCo's reading; every vertex is
    kept), with a warning naming what is left out."""
    p = Path(path)
    where = f"{owner} (file '{p}')"
    try:
        st = p.stat()
    except OSError as e:
        raise MeshFileError(f"{where}: mesh file not found or not accessible ({e.strerror})") from None
    if not p.is_file():
        raise MeshFileError(f"{where}: not a file")
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size, first_object and p.suffix.lower() == ".obj")
    if key not in _MESH_FILES:
        suffix = p.suffix.lower()
        if suffix not in READ_FORMATS:
            raise UnsupportedMeshFormat(
                f"{where}: mesh format '{suffix}' is not read (formats read: {', '.join(READ_FORMATS)})"
            )
        try:
            data = p.read_bytes()
        except OSError as e:
            raise MeshFileError(f"{where}: cannot read the file ({e.strerror})") from None
        if not data.strip():
            raise MeshFileError(f"{where}: the file is empty")
        if suffix == ".obj":
            verts, tris = _read_obj(data, where, first_object)
        elif suffix == ".msh":
            verts, tris = _read_msh(data, where)
        else:
            verts, tris = _read_trimesh(data, suffix, where)
        verts, tris = _validated(verts, tris, where)
        for a in (verts, tris):
            a.setflags(write=False)  # shared by every shape of this file
        _MESH_FILES[key] = verts, tris
    return _MESH_FILES[key]


def _validated(verts, tris, where: str):
    verts = np.asarray(verts, dtype=float)
    tris = np.asarray(tris)
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise MeshFileError(f"{where}: vertices must have 3 coordinates, got an array of shape {verts.shape}")
    if len(tris) == 0 or len(verts) == 0:
        raise MeshFileError(f"{where}: the file holds no triangles (empty, truncated or not a mesh file)")
    if tris.ndim != 2 or tris.shape[1] != 3 or not np.issubdtype(tris.dtype, np.integer):
        raise MeshFileError(f"{where}: faces must be triangles of integer indices, got shape {tris.shape}")
    if tris.min() < 0 or tris.max() >= len(verts):
        raise MeshFileError(f"{where}: face indices must lie in [0, {len(verts)}), got [{tris.min()}, {tris.max()}]")
    finite = np.all(np.isfinite(verts), axis=1)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise MeshFileError(f"{where}: vertex {bad} is not finite ({verts[bad].tolist()})")
    return verts, tris.astype(np.int32)


def _read_msh(data: bytes, where: str):
    """MuJoCo's MSH file: four int32 counts (vertices, normals, texture coordinates, faces), then that many float32
    vertices (3 each), normals (3), texture coordinates (2) and int32 faces (3), and nothing else. Normals and texture
    coordinates are not needed for collision or mass. A file with no faces is its vertices' convex hull (as MuJoCo
    takes a mesh given by vertices alone)."""
    if len(data) < 16:
        raise MeshFileError(f"{where}: an MSH file starts with four int32 counts; the file has {len(data)} bytes")
    nvert, nnormal, ntex, nface = (int(n) for n in np.frombuffer(data[:16], dtype="<i4"))
    expected = 16 + 4 * (3 * nvert + 3 * nnormal + 2 * ntex + 3 * nface)
    if min(nvert, nnormal, ntex, nface) < 0 or len(data) != expected:
        raise MeshFileError(
            f"{where}: not an MSH file: its counts ({nvert} vertices, {nnormal} normals, {ntex} texture "
            f"coordinates, {nface} faces) call for {expected} bytes, the file has {len(data)}"
        )
    verts = np.frombuffer(data, dtype="<f4", count=3 * nvert, offset=16).reshape(-1, 3).astype(float)
    faces_at = 16 + 4 * (3 * nvert + 3 * nnormal + 2 * ntex)
    tris = np.frombuffer(data, dtype="<i4", count=3 * nface, offset=faces_at).reshape(-1, 3)
    if nface == 0 and nvert >= 4:
        from scipy.spatial import ConvexHull, QhullError

        try:
            tris = ConvexHull(verts).simplices
        except QhullError:
            raise MeshFileError(f"{where}: the file has no faces and its vertices span no volume") from None
    return verts, tris


def _read_trimesh(data: bytes, suffix: str, where: str):
    if suffix == ".dae":
        data = _dae_geometry_only(data, where)
    try:
        import trimesh

        mesh = trimesh.load(io.BytesIO(data), file_type=suffix[1:], force="mesh", process=False)
        verts, tris = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    except Exception as e:
        raise MeshFileError(f"{where}: cannot read the mesh ({type(e).__name__}: {str(e).strip()[:200]})") from None
    if suffix == ".stl" and len(verts) == 3 * len(tris):
        return _weld(verts)  # STL repeats each shared vertex per triangle
    return verts, tris


def _weld(v: np.ndarray):
    uniq, inv = np.unique(np.round(v, 9), axis=0, return_inverse=True)
    return uniq, inv.reshape(-1, 3).astype(np.int32)


_DAE_MATERIAL_TAGS = ("bind_material", "library_materials", "library_effects", "library_images")


def _dae_geometry_only(data: bytes, where: str) -> bytes:
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise MeshFileError(f"{where}: not a valid COLLADA (XML) file: {e}") from None
    stack = [root]
    while stack:
        el = stack.pop()
        for child in list(el):
            if child.tag.rsplit("}", 1)[-1] in _DAE_MATERIAL_TAGS:
                el.remove(child)
            else:
                stack.append(child)
    if root.tag.startswith("{"):
        ET.register_namespace("", root.tag[1:].split("}", 1)[0])  # keep COLLADA's default namespace unprefixed
    return ET.tostring(root)


def _read_obj(data: bytes, where: str, first_object: bool = False):
    """Vertices and triangles (polygons fanned) of an OBJ file's `v` and `f` lines; other lines are ignored. With
    `first_object`, faces after an `o` or `g` line that follows faces (a second object or group) are left out."""
    verts, tris, left_out, later = [], [], [], False
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        f = line.split()
        if first_object and f and f[0] in ("o", "g") and tris:
            later = True
            left_out.append(" ".join(f[1:]) or f"line {n}")
        if not f or f[0] not in ("v", "f") or (later and f[0] == "f"):
            continue
        if f[0] == "v":
            try:
                xyz = [float(x) for x in f[1:4]]
            except ValueError:
                raise MeshFileError(
                    f"{where}: line {n}: vertex coordinates are not numbers: {line.strip()!r}"
                ) from None
            if len(xyz) != 3:
                raise MeshFileError(f"{where}: line {n}: a vertex needs 3 coordinates, got {len(xyz)}")
            verts.append(xyz)
            continue
        try:
            idx = [int(t.split("/")[0]) for t in f[1:]]
        except ValueError:
            raise MeshFileError(f"{where}: line {n}: face indices are not integers: {line.strip()!r}") from None
        if len(idx) < 3:
            raise MeshFileError(f"{where}: line {n}: a face needs at least 3 vertices, got {len(idx)}")
        for i in idx:  # OBJ counts from 1; negative indices count back from the last vertex read so far
            if i == 0 or i > len(verts) or i < -len(verts):
                raise MeshFileError(
                    f"{where}: line {n}: face index {i} is out of range (the file has "
                    f"{len(verts)} vertices before this line; OBJ indices start at 1)"
                )
        idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
        tris.extend([idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1))
    if left_out:
        names = ", ".join(repr(x) for x in left_out[:3]) + (", ..." if len(left_out) > 3 else "")
        warnings.warn(
            f"{where}: the OBJ file holds {len(left_out) + 1} objects or groups; as MuJoCo, only the first one's "
            f"faces are read ({len(left_out)} left out: {names})",
            RuntimeWarning,
            stacklevel=2,
        )
    return np.array(verts, dtype=float).reshape(-1, 3), np.array(tris, dtype=np.int64).reshape(-1, 3)
