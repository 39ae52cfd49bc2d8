"""Convex hulls and mesh files on the host: the hull's vertices and face planes that the narrow phase reads, the
mass properties of a solid hull, and a small STL/OBJ reader for URDF and MJCF mesh references."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ..errors import ValidationError

MAX_HULL_VERTICES = 64  # the narrow phase samples every hull vertex; PhysX cooks hulls to at most 255


def _hull(pts: np.ndarray, owner: str):
    from scipy.spatial import ConvexHull, QhullError

    try:
        return ConvexHull(pts)
    except (QhullError, ValueError) as e:
        raise ValidationError(f"{owner}: cannot build a convex hull ({str(e).splitlines()[0]}); the points must "
                              "span a volume") from None


def convex_hull(points: np.ndarray, owner: str, max_vertices: int | None = MAX_HULL_VERTICES):
    """(vertices (V, 3), planes (F, 4) with unit outward normal n and offset d: n . x + d <= 0 inside), with at
    most max_vertices vertices (None: all of the hull's)."""
    pts = np.asarray(points, dtype=float)
    hull = _hull(pts, owner)
    verts = pts[hull.vertices]
    if max_vertices is not None and len(verts) > max_vertices:
        # keep the extreme points along directions spread over the sphere, as many directions as leave at most
        # max_vertices distinct extremes (taking the first indices of a longer list dropped whole ends of a body)
        n = 4 * max_vertices
        while True:
            keep = np.unique(np.argmax(verts @ _fibonacci_directions(n).T, axis=0))
            if len(keep) <= max_vertices:
                break
            n = int(n * 0.9)
        verts = verts[keep]
        hull = _hull(verts, owner)
        verts = verts[hull.vertices]
        hull = _hull(verts, owner)
    planes = np.unique(np.round(hull.equations, 6), axis=0)  # coplanar triangles share a plane
    return verts, planes


def _fibonacci_directions(n: int) -> np.ndarray:
    k = np.arange(n) + 0.5
    phi = np.arccos(1.0 - 2.0 * k / n)
    theta = np.pi * (1.0 + 5.0**0.5) * k
    return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)


def hull_mass_properties(points: np.ndarray, owner: str):
    """(volume, COM, unit-density inertia about the COM) of the solid convex hull of all the points (tetrahedra
    from the centroid; not of the reduced hull collision uses)."""
    verts, _ = convex_hull(points, owner, max_vertices=None)
    hull = _hull(verts, owner)
    ref = verts.mean(axis=0)
    vol, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for tri in hull.simplices:
        a, b, c = verts[tri] - ref
        v = abs(np.dot(a, np.cross(b, c))) / 6.0
        vol += v
        first += v * (a + b + c) / 4.0
        # second moment of a tetrahedron (0, a, b, c): v/20 (sum of outer products + (a+b+c)(a+b+c)^T)
        s = a + b + c
        second += v / 20.0 * (np.outer(a, a) + np.outer(b, b) + np.outer(c, c) + np.outer(s, s))
    com_rel = first / vol
    second -= vol * np.outer(com_rel, com_rel)
    inertia = np.trace(second) * np.eye(3) - second
    return vol, ref + com_rel, inertia


class UnsupportedMeshFormat(ValidationError):
    pass


_MESH_FILES = {}  # (path, mtime) -> (vertices, triangles): robots share mesh files across links and rebuilds


def load_mesh_file(path: str, scale=(1.0, 1.0, 1.0), owner: str = "mesh"):
    """(vertices (V, 3), triangles (T, 3)) of an STL (binary or ASCII) or OBJ file, scaled per axis."""
    p = Path(path)
    key = (str(p), p.stat().st_mtime if p.is_file() else None)
    if key not in _MESH_FILES:
        _MESH_FILES[key] = _read_mesh_file(p, owner)
    verts, tris = _MESH_FILES[key]
    return verts * np.asarray(scale, dtype=float), tris


def _read_mesh_file(p: Path, owner: str):
    path = str(p)
    if not p.is_file():
        raise ValidationError(f"{owner}: mesh file '{path}' not found")
    suffix = p.suffix.lower()
    if suffix == ".stl":
        verts, tris = _read_stl(p.read_bytes(), owner)
    elif suffix == ".obj":
        verts, tris = _read_obj(p.read_text(errors="replace"), owner)
    else:
        raise UnsupportedMeshFormat(f"{owner}: mesh format '{suffix}' of '{path}' is not supported (STL and OBJ "
                                    "are)")
    return verts, tris


def _read_stl(data: bytes, owner: str):
    if len(data) >= 84:
        count = struct.unpack_from("<I", data, 80)[0]
        if 84 + 50 * count == len(data):
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=count, offset=84)
            v = rec["v"].reshape(-1, 3).astype(float)
            return _weld(v)
    text = data.decode("ascii", errors="replace")
    v = [list(map(float, line.split()[1:4])) for line in text.splitlines() if line.strip().startswith("vertex")]
    if not v or len(v) % 3:
        raise ValidationError(f"{owner}: not a valid STL file")
    return _weld(np.array(v, dtype=float))


def _weld(v: np.ndarray):
    uniq, inv = np.unique(np.round(v, 9), axis=0, return_inverse=True)
    return uniq, inv.reshape(-1, 3).astype(np.int32)


def _read_obj(text: str, owner: str):
    verts, tris = [], []
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "v":
            verts.append([float(x) for x in f[1:4]])
        elif f[0] == "f":
            idx = [int(t.split("/")[0]) for t in f[1:]]
            idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
            tris.extend([idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1))
    if not verts or not tris:
        raise ValidationError(f"{owner}: OBJ file has no vertices or faces")
    return np.array(verts, dtype=float), np.array(tris, dtype=np.int32)


def hull_topology(verts: np.ndarray, owner: str):
    """Planes, faces and edges of the convex polytope with vertices `verts` (from convex_hull), for the
    separating-axis test (hull_hull.py). Qhull's triangles are grouped into faces by their rounded plane (as
    convex_hull does); a face's loop is the chain of its triangles' edges that no other triangle of the face shares,
    counter-clockwise seen from outside. A group whose boundary is not one simple loop (near-coplanar triangles
    that rounding grouped apart from their neighbours) is split back into its triangles. Every edge then lies
    between exactly two faces.

    Returns (planes (F, 4), loops: F lists of `verts` indices, edges (E, 2) int, edge_faces (E, 2) int)."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(verts)
    eq = np.round(hull.equations, 6)
    _, group = np.unique(eq, axis=0, return_inverse=True)
    group = group.reshape(-1)
    planes, loops = [], []
    for g in range(group.max() + 1):
        tris = np.flatnonzero(group == g)
        loop = _boundary_loop(hull.simplices[tris])
        pieces = [(loop, tris[0])] if loop is not None else [(list(hull.simplices[t]), t) for t in tris]
        for loop, t in pieces:
            n = hull.equations[t, :3]
            area = sum(np.cross(verts[i], verts[j]) for i, j in zip(loop, loop[1:] + loop[:1]))
            if np.dot(area, n) < 0.0:
                loop = loop[::-1]
            planes.append(eq[t])
            loops.append([int(i) for i in loop])
    owners = {}
    for f, loop in enumerate(loops):
        for i, j in zip(loop, loop[1:] + loop[:1]):
            owners.setdefault((min(i, j), max(i, j)), []).append(f)
    if any(len(faces) != 2 for faces in owners.values()):
        raise ValidationError(f"{owner}: the convex hull's faces do not close; simplify the mesh")
    edges = np.array(list(owners), np.int32).reshape(-1, 2)
    edge_faces = np.array(list(owners.values()), np.int32).reshape(-1, 2)
    return np.array(planes, float).reshape(-1, 4), loops, edges, edge_faces


def _boundary_loop(tris: np.ndarray):
    """The vertex cycle bounding a set of triangles, or None if their boundary is not one simple cycle."""
    count = {}
    for t in tris:
        for i in range(3):
            e = (min(t[i], t[(i + 1) % 3]), max(t[i], t[(i + 1) % 3]))
            count[e] = count.get(e, 0) + 1
    nbrs = {}
    for (i, j), c in count.items():
        if c == 1:
            nbrs.setdefault(i, []).append(j)
            nbrs.setdefault(j, []).append(i)
    if not nbrs or any(len(v) != 2 for v in nbrs.values()):
        return None
    start = next(iter(nbrs))
    loop, prev, cur = [start], None, start
    while True:
        a, b = nbrs[cur]
        nxt = b if a == prev else a
        if nxt == start:
            break
        loop.append(nxt)
        prev, cur = cur, nxt
    return loop if len(loop) == len(nbrs) else None
