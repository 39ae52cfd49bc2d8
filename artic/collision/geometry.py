"""`Geometry`, the device table collision detection reads: one per block (the link shapes of its articulations
plus the scene's static shapes, and the candidate pairs among them), built by sim/builders/geometry.py. What
detection writes is contacts.py's `ContactPoints`.

Candidate pairs are filtered once on the host (parent/child links, DISABLE_SELF_COLLISION, collision groups,
`Articulation.disable_collision` pairs, links that cannot move); explicit pairs (`Articulation.add_contact_pair`)
pass every filter but the last, and carry their own material and rest offset. Their order is the solver's:
link-vs-link pairs first, within one articulation or between two (PhysX's "dynamic" contacts, solved before the
articulations' internal constraints), then link-vs-static pairs sorted by the link's depth-first rank in the forest
(static contacts are solved right after their link's joint rows).
C is the sum of every pair's maximum manifold size (the host's `capacity_bound`), capped by the block's slots (the
scene's `contact_capacity` to start with). When an env's contacts do not fit, detection runs again without the
speculative ones (surfaces within the contact offsets but apart; the touching ones and the soft ones that overlap
stay), so that the slots go to the contacts that bear loads rather than to whichever pairs come first in the solve
order (a robot's feet on the floor come last). Contacts that still do not fit are counted in `overflow`. Either way
the slots the env wanted are kept in `wanted` and the block's slots grow for the next steps (sim/block.py
`plan_contact_growth`), with a warning that says what the step left out.
"""

from __future__ import annotations

import numpy as np
import warp as wp

GEOM_PLANE = wp.constant(0)
GEOM_SPHERE = wp.constant(1)
GEOM_CAPSULE = wp.constant(2)
GEOM_BOX = wp.constant(3)
GEOM_CYLINDER = wp.constant(4)
GEOM_CONVEX = wp.constant(5)
GEOM_TRIMESH = wp.constant(6)

MANIFOLD_POINTS = 4

# A shape's or a contact's material, one vector: friction, restitution and the soft-contact parameters
# (description/softness.py; all zero for PhysX's hard contact). Entries:
MAT_SOLREF = 3  # 3, 4: solref
MAT_SOLIMP = 5  # 5..9: solimp
MAT_MIX = 10  # a shape's solmix
MAT_PYRAMID = 11  # MuJoCo's cone and impratio: > 0 pyramidal, < 0 elliptic (-impratio), 0 PhysX's patch friction
MAT_WEIGHT = 12  # a shape's link's inverse weight at the reference pose [1/kg]; a contact's: both shapes' summed
MAT_TORSION = 13  # torsional friction [m] of MuJoCo's pyramidal cone (condim 4 and 6; 0: none)
MAT_ROLLING = 14  # rolling friction [m] (condim 6; 0: none)
MAT_CONDIM = 15  # MuJoCo's condim (1: frictionless unless the other shape's is larger; combined by max)
MAT_PRIORITY = 16  # MuJoCo's geom priority: a contact takes the higher one's parameters whole
MATERIAL_SIZE = 17
ContactMaterial = wp.types.vector(length=MATERIAL_SIZE, dtype=float)


@wp.struct
class Geometry:
    """Shapes and candidate pairs of one block (G shapes, P pairs, L links)."""

    geom_link: wp.array(dtype=int)  # (G,) owning link, -1 for a static shape
    geom_type: wp.array(dtype=int)  # (G,) GEOM_*
    geom_pose: wp.array(dtype=wp.transform)  # (G,) shape frame in the link's actor frame (static: in the world)
    geom_size: wp.array(dtype=wp.vec3)  # (G,) box half extents; (radius, half height, 0) otherwise [m]
    geom_material: wp.array(dtype=ContactMaterial)  # (G,) friction, restitution, softness (MAT_*)
    geom_combine: wp.array(dtype=int)  # (G,) friction combine mode: its index in shapes.FRICTION_COMBINE_MODES
    geom_offset: wp.array(dtype=float)  # (G,) contact offset [m]
    geom_radius: wp.array(dtype=float)  # (G,) bounding-sphere radius about the shape origin [m] (0 for planes)
    geom_box_center: wp.array(dtype=wp.vec3)  # (G,) bounding box centre in the shape frame [m] (collision/cull.py)
    geom_box_half: wp.array(dtype=wp.vec3)  # (G,) its half extents [m]; negative for a plane (no box)
    geom_vstart: wp.array(dtype=int)  # (G,) first vertex (hull or mesh) in `verts`
    geom_vcount: wp.array(dtype=int)  # (G,)
    geom_fstart: wp.array(dtype=int)  # (G,) first hull plane in `planes` or first triangle in `tris`
    geom_fcount: wp.array(dtype=int)  # (G,)
    verts: wp.array(dtype=wp.vec3)  # (V,) shape-frame vertices [m]
    planes: wp.array(dtype=wp.vec4)  # (F,) hull planes (unit outward normal, offset): n . x + d <= 0 inside
    tris: wp.array(dtype=wp.vec3i)  # (T,) triangle vertex indices into `verts` (absolute)
    # polytope topology of hulls and boxes, for the separating-axis test (hull_hull.py)
    face_vstart: wp.array(dtype=int)  # (F,) first entry of plane f's vertex loop in `face_verts`
    face_vcount: wp.array(dtype=int)  # (F,)
    face_verts: wp.array(dtype=int)  # (K,) vertex loops (absolute `verts` indices), counter-clockwise from outside
    geom_estart: wp.array(dtype=int)  # (G,) first edge in `edges`
    geom_ecount: wp.array(dtype=int)  # (G,)
    edges: wp.array(dtype=wp.vec2i)  # (E,) end vertices (absolute `verts` indices)
    edge_faces: wp.array(dtype=wp.vec2i)  # (E,) the edge's two faces (absolute `planes` indices)
    pair_count: int
    pair_dynamic_count: int  # the first pairs are self-collision pairs
    pair_a: wp.array(dtype=int)  # (P,) link shape
    pair_b: wp.array(dtype=int)  # (P,) link or static shape
    pair_own_material: wp.array(dtype=int)  # (P,) 1: an explicit pair's material (pair_material), 0: combined
    pair_material: wp.array(dtype=ContactMaterial)  # (P,) an explicit pair's own (MAT_WEIGHT unused)
    pair_rest: wp.array(dtype=float)  # (P,) rest offset: the contact acts with the surfaces this far apart [m]
    # (P,) the square of the shapes' centres' distance beyond which the pair cannot touch (both radii and contact
    # offsets, the rest offset) [m^2]; -1 where b is a plane, tested by its distance to the plane instead
    pair_cull: wp.array(dtype=float)
    pair_run_end: wp.array(dtype=int)  # (P,) at the first pair of a run between the same two links: its end
    pair_run_reach: wp.array(dtype=float)  # (P,) there: the link centres' distance beyond which none can touch [m]
    link_rank: wp.array(dtype=int)  # (L,) depth-first visiting rank of each link
    link_center: wp.array(dtype=wp.vec3)  # (L,) centre of the link's shapes, in its actor frame [m]
    capacity: int  # contact slots per env


CYLINDER_PRISM_SIDES = 32


def cylinder_prism(radius: float, half_height: float) -> np.ndarray:
    """Corners of the prism that stands for a cylinder (axis x) against boxes, hulls and cylinders: 32 sides
    tangent to the circle, with faces centred on +-y and +-z (so a cylinder lying on a face rests at its radius);
    its corners stand 0.5 % of the radius outside the circle."""
    n = CYLINDER_PRISM_SIDES
    ang = (np.arange(n) + 0.5) * 2.0 * np.pi / n
    r = radius / np.cos(np.pi / n)
    ring = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=1)
    return np.array([[x, y, z] for x in (-half_height, half_height) for y, z in ring])
