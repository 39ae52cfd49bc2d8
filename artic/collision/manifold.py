"""Contact manifolds: `emit` adds a candidate point to a shape pair's contacts, keeping at most MANIFOLD_POINTS (4):
the deepest, and among points of about the same depth those that spread the manifold most."""

from __future__ import annotations

import warp as wp

from .contacts import ContactPoints
from .geometry import ContactMaterial

wp.set_module_options({"enable_backward": False})


@wp.func
def _perimeter(cp: ContactPoints, env: int, first: int, last: int, skip: int, p: wp.vec3) -> float:
    """Sum of pairwise distances of the pair's points [first, last) with slot `skip` replaced by p (skip < 0:
    unchanged): the spread of a manifold."""
    s = float(0.0)
    for i in range(first, last):
        pi = cp.point[env, i]
        if i == skip:
            pi = p
        for j in range(i + 1, last):
            pj = cp.point[env, j]
            if j == skip:
                pj = p
            s += wp.length(pi - pj)
    return s


DEPTH_TIE = wp.constant(1.0e-3)  # [m] candidates this close in depth are told apart by the spread they give


@wp.func
def emit(
    cp: ContactPoints,
    env: int,
    first: int,
    la: int,
    lb: int,
    ga: int,
    gb: int,
    rank: int,
    p: wp.vec3,
    n: wp.vec3,
    sep: float,
    mat: ContactMaterial,
) -> None:
    """Add a candidate of the pair whose contacts start at slot `first`. A pair keeps at most four points: a
    clearly deeper candidate replaces the shallowest, one of about the same depth replaces the point whose
    replacement spreads the manifold most (so a face resting on a face keeps its corners, not four neighbours).
    A candidate that finds no slot while its pair has fewer than four points is counted in `overflow`."""
    c = cp.count[env]
    slot = int(c)
    full = c - first >= 4
    if not full and c >= cp.link_a.shape[1]:
        cp.overflow[env] = cp.overflow[env] + 1
        full = c > first
        if not full:
            return
    if full:
        shallow = first
        for s in range(first + 1, c):
            if cp.separation[env, s] > cp.separation[env, shallow]:
                shallow = s
        if sep < cp.separation[env, shallow] - DEPTH_TIE:
            slot = shallow
        elif sep <= cp.separation[env, shallow] + DEPTH_TIE:
            best = float(_perimeter(cp, env, first, c, -1, p))
            slot = int(-1)
            for s in range(first, c):
                if cp.separation[env, s] >= sep - DEPTH_TIE:
                    spread = _perimeter(cp, env, first, c, s, p)
                    if spread > best * 1.0001:
                        best = spread
                        slot = s
            if slot < 0:
                return
        else:
            return
    else:
        cp.count[env] = c + 1
    cp.link_a[env, slot] = la
    cp.link_b[env, slot] = lb
    cp.shape_a[env, slot] = ga
    cp.shape_b[env, slot] = gb
    cp.rank[env, slot] = rank
    cp.point[env, slot] = p
    cp.normal[env, slot] = n
    cp.separation[env, slot] = sep
    cp.material[env, slot] = mat
