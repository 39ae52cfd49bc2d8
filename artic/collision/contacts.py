"""`ContactPoints`: what collision detection produces per env, rebuilt every step (narrow.py writes it, at most
four points per candidate pair, manifold.py). The solver's rows and persistent friction anchors built on these
points are constraints/contact_rows.py's `ContactRows`.

Contacts are stored in the solver's visiting order (geometry.py): the `dynamic_count` link-link contacts first,
then the link-static contacts by the depth-first rank of their link. A pair's points are consecutive (a patch).
"""

from __future__ import annotations

import warp as wp

from .geometry import ContactMaterial


@wp.struct
class ContactPoints:
    """Per-env contact points of one block (E envs, C slots)."""

    count: wp.array(dtype=int)  # (E,) contacts in use
    dynamic_count: wp.array(dtype=int)  # (E,) the first ones are link-link contacts
    overflow: wp.array(dtype=int)  # (E,) contacts that did not fit in the last step
    wanted: wp.array(dtype=int)  # (E,) slots the last step's detection wanted when they did not fit, else 0
    grow: wp.array(dtype=int)  # (1,) 1 once any env's contacts did not fit: the host grows the slots (block.py)
    link_a: wp.array2d(dtype=int)  # (E, C) link pushed along +normal
    link_b: wp.array2d(dtype=int)  # (E, C) other link, -1 for a static shape
    shape_a: wp.array2d(dtype=int)  # (E, C) geometry index of a
    shape_b: wp.array2d(dtype=int)  # (E, C)
    rank: wp.array2d(dtype=int)  # (E, C) depth-first rank of link_a (solve order of static contacts)
    point: wp.array2d(dtype=wp.vec3)  # (E, C) world contact point, midway between the surfaces [m]
    normal: wp.array2d(dtype=wp.vec3)  # (E, C) unit world normal, from b towards a
    separation: wp.array2d(dtype=float)  # (E, C) signed surface distance at detection, < 0 when penetrating [m]
    material: wp.array2d(dtype=ContactMaterial)  # (E, C) combined friction, restitution, softness (geometry.MAT_*)
    geom_center: wp.array2d(dtype=wp.vec3)  # (E, G + L) each shape's origin, then each link's centre of shapes, in
    # the world this step (narrow.py) [m]
