"""Convex hulls on the host: the hull's vertices and face planes that the narrow phase reads, and the mass
properties of a solid hull.

Robustness (issue 14): every Qhull call goes through `_hull`, which retries a failed hull with Qhull's joggle
(option QJ: the input is perturbed by a few ulps of its extent until the hull is simplicial) and turns a final
failure into a ValidationError naming the shape; no SciPy exception leaves this module. Point sets that span no
volume (all points on a plane or a line to FLAT_TOLERANCE, as any set of fewer than 4 distinct points) are
thickened by `solid_points` before any hull is built: they are extruded symmetrically along each missing principal
direction to a total thickness of DEGENERATE_THICKNESS_RATIO (1 %) of their largest extent, with a warning naming
the shape. A set whose points all coincide is refused. Mass properties of a thickened set are those of that slab
(or square rod).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError

MAX_HULL_VERTICES = 64  # the narrow phase samples every hull vertex; PhysX cooks hulls to at most 255
DEGENERATE_THICKNESS_RATIO = 0.01  # thickness given to flat or collinear point sets, of their largest extent
# a principal extent below this fraction of the largest one counts as missing: the narrow phase works in float32
# (epsilon 1.2e-7), where a thinner hull is flat and its side planes are round-off noise
FLAT_TOLERANCE = 1e-6


def solid_points(points: ArrayLike, owner: str) -> np.ndarray:
    """The points, or, if they span no volume, the points extruded along their missing principal directions to a
    total thickness of DEGENERATE_THICKNESS_RATIO times their largest extent (with a warning naming `owner`).
    Raises ValidationError if the points are not a finite (N, 3) array or all coincide."""
    try:
        pts = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        raise ValidationError(f"{owner}: vertices must be a numeric (N, 3) array") from None
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) == 0:
        raise ValidationError(f"{owner}: vertices must be a non-empty (N, 3) array, got shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(pts), axis=1))[0])
        raise ValidationError(f"{owner}: vertex {bad} is not finite ({pts[bad].tolist()})")
    if coincident(pts):
        raise ValidationError(
            f"{owner}: all {len(pts)} vertices coincide at {pts[0].tolist()}; a convex hull "
            "needs points that span a volume (use a Sphere or Box for a point-like shape)"
        )
    centred = pts - pts.mean(axis=0)
    _, axes = np.linalg.eigh(centred.T @ centred)  # principal directions, ascending spread
    proj = centred @ axes
    extent = proj.max(axis=0) - proj.min(axis=0)
    largest = extent.max()
    missing = np.flatnonzero(extent < FLAT_TOLERANCE * largest)
    if len(missing) == 0:
        return pts
    half = 0.5 * DEGENERATE_THICKNESS_RATIO * largest
    kind = "flat (all in one plane)" if len(missing) == 1 else "collinear"
    warnings.warn(
        f"{owner}: the {len(pts)} vertices are {kind} and span no volume; the hull is thickened to "
        f"{2.0 * half:.3g} m ({DEGENERATE_THICKNESS_RATIO:.0%} of its {largest:.3g} m extent) along the "
        "missing direction(s), which also sets its mass properties; give a closed mesh or set the mass "
        "explicitly",
        RuntimeWarning,
        stacklevel=5,
    )
    for k in missing:
        offset = half * axes[:, k]
        pts = np.concatenate([pts + offset, pts - offset])
    return pts


def coincident(pts: np.ndarray) -> bool:
    """Whether all the (finite) points are one point, to round-off."""
    return bool(np.ptp(pts, axis=0).max() <= 1e-12 * max(1.0, float(np.abs(pts).max())))


def _hull(pts: np.ndarray, owner: str):
    """scipy's ConvexHull of pts, retried with Qhull's joggle (QJ) when the exact hull fails on precision."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return ConvexHull(pts)
    except (QhullError, ValueError):
        pass
    try:
        return ConvexHull(pts, qhull_options="QJ")
    except (QhullError, ValueError) as e:
        raise ValidationError(
            f"{owner}: cannot build a convex hull of {len(pts)} points "
            f"({str(e).strip().splitlines()[0]}); the points must span a volume"
        ) from None


def convex_hull(
    points: np.ndarray, owner: str, max_vertices: int | None = MAX_HULL_VERTICES
) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), planes (F, 4) with unit outward normal n and offset d: n . x + d <= 0 inside), with at
    most max_vertices vertices (None: all of the hull's)."""
    pts = solid_points(points, owner)
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


def hull_mass_properties(points: np.ndarray, owner: str) -> tuple[float, np.ndarray, np.ndarray]:
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
    if not vol > 0.0 or not np.isfinite(vol):
        raise ValidationError(f"{owner}: the convex hull has no volume ({vol}); the points must span a volume")
    com_rel = first / vol
    second -= vol * np.outer(com_rel, com_rel)
    inertia = np.trace(second) * np.eye(3) - second
    return vol, ref + com_rel, inertia


def hull_topology(verts: np.ndarray, owner: str) -> tuple[np.ndarray, list[list[int]], np.ndarray, np.ndarray]:
    """Planes, faces and edges of the convex polytope with vertices `verts` (from convex_hull), for the
    separating-axis test (hull_hull.py). Qhull's triangles are grouped into faces by their rounded plane (as
    convex_hull does); a face's loop is the chain of its triangles' edges that no other triangle of the face shares,
    counter-clockwise seen from outside. A group whose boundary is not one simple loop (near-coplanar triangles
    that rounding grouped apart from their neighbours) is split back into its triangles. Every edge then lies
    between exactly two faces.

    Returns (planes (F, 4), loops: F lists of `verts` indices, edges (E, 2) int, edge_faces (E, 2) int)."""
    hull = _hull(np.asarray(verts, dtype=float), owner)
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
