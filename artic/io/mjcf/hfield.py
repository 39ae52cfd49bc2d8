"""MJCF height fields (`<asset><hfield>` and `<geom type="hfield">`) as static triangle meshes, for `load_mjcf`.

MuJoCo's height field (XML reference, "asset/hfield"): a grid of `nrow` x `ncol` elevations over the rectangle
[-rx, rx] x [-ry, ry] of the geom's frame (`size="rx ry ztop zbase"`), column c at x = (2c/(ncol-1) - 1) rx and
data row r at y = (2r/(nrow-1) - 1) ry. The elevations are normalised to [0, 1] (minus their minimum, over their
range; all equal gives zeros) and scaled by ztop; `elevation` lists them row by row from the +y edge down (as an
image's rows), which MuJoCo stores reversed. Without `elevation` or `file` the field is all zeros (dm_control's
quadruped fills its terrain at run time): a flat patch at the geom's height. Each grid cell is two triangles split
along its (r, c)-(r+1, c+1) diagonal, as MuJoCo splits them.

artic's counterpart is a `TriangleMesh` on the static world actor (the narrow phase tests the robot's shapes against
its triangles): the top surface only, wound to face +z; MuJoCo's solid base below it (`zbase`) has no counterpart,
which matters only for a body that reaches under the field's edge. A flat field is two triangles. MuJoCo allows
height fields on static bodies only; artic takes them among the <worldbody> geoms. Elevations from a `file` (PNG
or MuJoCo's binary format) are refused: give them as `elevation`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...description.shapes import TriangleMesh

if TYPE_CHECKING:
    from ..xml_values import XmlValues


def read_hfield(v: XmlValues, h: ET.Element) -> tuple[str, tuple[np.ndarray, np.ndarray]]:
    """(name, (size (4,), heights (nrow, ncol) in data-row order, normalised to [0, 1])) of an <hfield> asset."""
    name = h.get("name") or h.get("file")
    if not name:
        raise v.fail(h, "needs a name (geoms refer to a height field by name)")
    if "file" in h.attrib:
        raise v.fail(
            h,
            f"attribute file='{h.get('file')}': height fields from files are not supported; give the "
            "elevations as attribute elevation (nrow x ncol numbers, row by row from the +y edge)",
        )
    size = v.numbers(h, "size", 4, text=h.get("size"))
    if np.any(size <= 0.0):
        raise v.fail(h, f"attribute size='{h.get('size')}': rx, ry, ztop and zbase must all be > 0")
    nrow = v.integer(h, "nrow", h.get("nrow", "0"), 0, 10000)
    ncol = v.integer(h, "ncol", h.get("ncol", "0"), 0, 10000)
    if nrow < 2 or ncol < 2:
        raise v.fail(h, f"nrow={nrow}, ncol={ncol}: a height field needs at least 2 rows and 2 columns")
    heights = np.zeros((nrow, ncol))
    if "elevation" in h.attrib:
        data = v.numbers(h, "elevation", nrow * ncol, text=h.get("elevation"))
        span = float(data.max() - data.min())
        if span > 0.0:  # MuJoCo normalises to [0, 1]; all-equal elevations stay zero
            heights = ((data - data.min()) / span).reshape(nrow, ncol)[::-1]
    return name, (size, heights)


def hfield_mesh(size: ArrayLike, heights: np.ndarray, name: str) -> TriangleMesh:
    """The top surface of a height field (see the module docstring) as a TriangleMesh in the geom's frame."""
    rx, ry, ztop = float(size[0]), float(size[1]), float(size[2])
    if np.all(heights == heights.flat[0]):  # flat: one rectangle, exactly the same surface
        z = float(heights.flat[0]) * ztop
        verts = np.array([[-rx, -ry, z], [rx, -ry, z], [rx, ry, z], [-rx, ry, z]])
        return TriangleMesh(vertices=verts, triangles=np.array([[0, 1, 2], [0, 2, 3]]), name=name)
    nrow, ncol = heights.shape
    x = (2.0 * np.arange(ncol) / (ncol - 1) - 1.0) * rx
    y = (2.0 * np.arange(nrow) / (nrow - 1) - 1.0) * ry
    gx, gy = np.meshgrid(x, y)  # (nrow, ncol), row r at y[r]
    verts = np.column_stack([gx.ravel(), gy.ravel(), heights.ravel() * ztop])
    idx = np.arange(nrow * ncol).reshape(nrow, ncol)
    v00, v10, v11, v01 = idx[:-1, :-1], idx[:-1, 1:], idx[1:, 1:], idx[1:, :-1]  # (r, c), (r, c+1), ...
    tris = np.concatenate([np.stack([v00, v10, v11], -1).reshape(-1, 3), np.stack([v00, v11, v01], -1).reshape(-1, 3)])
    return TriangleMesh(vertices=verts, triangles=tris, name=name)
