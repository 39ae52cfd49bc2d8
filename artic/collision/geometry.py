"""The device tables collision detection reads: one `Geometry` per block (the link shapes of its articulations
plus the scene's static shapes) and one `Contacts` buffer per block (E envs, C contact slots per env).

Candidate pairs are filtered once on the host (parent/child links, DISABLE_SELF_COLLISION, collision groups,
`Articulation.disable_collision` pairs, links that cannot move); explicit pairs (`Articulation.add_contact_pair`)
pass every filter but the last, and carry their own material and rest offset. Their order is the solver's:
link-vs-link pairs first, within one articulation or between two (PhysX's "dynamic" contacts, solved before the
articulations' internal constraints), then link-vs-static pairs sorted by the link's depth-first rank in the forest
(static contacts are solved right after their link's joint rows).
C is the sum of every pair's maximum manifold size, capped by the scene's `contact_capacity`; contacts past C are
counted in `overflow`, never dropped silently (the scene warns).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..description.articulation import Articulation
from ..description.shapes import (FRICTION_COMBINE_MODES, Box, Capsule, ConvexMesh, Cylinder, Mesh, Plane, Sphere,
                                  TriangleMesh)
from ..enums import ArticulationFlag
from ..errors import ValidationError
from ..core.structs import upload
from ..math.hull import convex_hull, hull_topology

GEOM_PLANE = wp.constant(0)
GEOM_SPHERE = wp.constant(1)
GEOM_CAPSULE = wp.constant(2)
GEOM_BOX = wp.constant(3)
GEOM_CYLINDER = wp.constant(4)
GEOM_CONVEX = wp.constant(5)
GEOM_TRIMESH = wp.constant(6)

MANIFOLD_POINTS = 4


@wp.struct
class Geometry:
    """Shapes and candidate pairs of one block (G shapes, P pairs, L links)."""

    geom_link: wp.array(dtype=int)  # (G,) owning link, -1 for a static shape
    geom_type: wp.array(dtype=int)  # (G,) GEOM_*
    geom_pose: wp.array(dtype=wp.transform)  # (G,) shape frame in the link's actor frame (static: in the world)
    geom_size: wp.array(dtype=wp.vec3)  # (G,) box half extents; (radius, half height, 0) otherwise [m]
    geom_material: wp.array(dtype=wp.vec3)  # (G,) (static friction, dynamic friction, restitution)
    geom_combine: wp.array(dtype=int)  # (G,) friction combine mode: its index in shapes.FRICTION_COMBINE_MODES
    geom_offset: wp.array(dtype=float)  # (G,) contact offset [m]
    geom_radius: wp.array(dtype=float)  # (G,) bounding-sphere radius about the shape origin [m] (0 for planes)
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
    pair_material: wp.array(dtype=wp.vec3)  # (P,) (static friction, dynamic friction, restitution)
    pair_rest: wp.array(dtype=float)  # (P,) rest offset: the contact acts with the surfaces this far apart [m]
    link_rank: wp.array(dtype=int)  # (L,) depth-first visiting rank of each link
    capacity: int  # contact slots per env


@wp.struct
class Contacts:
    """Per-env contact buffer, rebuilt every step (E envs, C slots, N generalized dofs)."""

    count: wp.array(dtype=int)  # (E,) contacts in use
    dynamic_count: wp.array(dtype=int)  # (E,) the first ones are self-collision contacts
    overflow: wp.array(dtype=int)  # (E,) contacts that did not fit in the last step
    link_a: wp.array2d(dtype=int)  # (E, C) link pushed along +normal
    link_b: wp.array2d(dtype=int)  # (E, C) other link, -1 for a static shape
    shape_a: wp.array2d(dtype=int)  # (E, C) geometry index of a
    shape_b: wp.array2d(dtype=int)  # (E, C)
    rank: wp.array2d(dtype=int)  # (E, C) depth-first rank of link_a (solve order of static contacts)
    point: wp.array2d(dtype=wp.vec3)  # (E, C) world contact point, midway between the surfaces [m]
    normal: wp.array2d(dtype=wp.vec3)  # (E, C) unit world normal, from b towards a
    tangent: wp.array2d(dtype=wp.vec3)  # (E, C) first friction direction (the second is normal x tangent)
    separation: wp.array2d(dtype=float)  # (E, C) signed surface distance, < 0 when penetrating [m]
    material: wp.array2d(dtype=wp.vec3)  # (E, C) combined (static, dynamic friction, restitution)
    bounce: wp.array2d(dtype=float)  # (E, C) restitution target normal velocity (0 when not bouncing) [m/s]
    g: wp.array3d(dtype=float)  # (E, 3C, N) generalized directions of the normal and two friction rows
    minv_g: wp.array3d(dtype=float)  # (E, 3C, N) M^-1 g
    response: wp.array2d(dtype=float)  # (E, 3C) g^T M^-1 g
    delassus: wp.array3d(dtype=float)  # (E, 3C, 12) row r's entries g_r^T M^-1 g_s against the rows s of its patch
    impulse: wp.array2d(dtype=float)  # (E, 3C) accumulated impulses [N s]
    force: wp.array2d(dtype=wp.vec3)  # (E, C) reported force on link a at the point, world [N]
    # patch friction (PhysX's model, docs/design.md): the friction rows of slot c act at an anchor when
    # anchor[c] != 0 (the first one or two slots of a patch); anchors persist across steps while the patch sticks
    anchor: wp.array2d(dtype=int)  # (E, C) 1 if slot c's friction rows act at an anchor
    anchor_a: wp.array2d(dtype=wp.vec3)  # (E, C) anchor in link a's actor frame [m]
    anchor_b: wp.array2d(dtype=wp.vec3)  # (E, C) anchor in link b's actor frame (world for a static shape) [m]
    anchor_error: wp.array2d(dtype=wp.vec2)  # (E, C) anchor drift (a minus b) along the two friction directions [m]
    broken: wp.array2d(dtype=int)  # (E, C) 1 if the patch's friction hit its static bound in the last solve
    prev_count: wp.array(dtype=int)  # (E,) contacts of the previous step, for matching patches
    prev_shape_a: wp.array2d(dtype=int)  # (E, C)
    prev_shape_b: wp.array2d(dtype=int)  # (E, C)
    prev_anchor: wp.array2d(dtype=int)  # (E, C) anchor kept (it did not slip)
    prev_anchor_a: wp.array2d(dtype=wp.vec3)  # (E, C)
    prev_anchor_b: wp.array2d(dtype=wp.vec3)  # (E, C)


_TYPE_OF = {Plane: 0, Sphere: 1, Capsule: 2, Box: 3, Cylinder: 4, ConvexMesh: 5, TriangleMesh: 6}


def _max_points(ta: int, tb: int) -> int:
    """Largest manifold a pair can produce (a: link shape, b: any)."""
    round_ = (1, 2)
    if ta == 1 and tb in round_ or tb == 1 and ta in round_:
        return 1
    if ta in round_ and tb in round_:
        return 2
    if tb == 0 and ta == 2:
        return 2
    return MANIFOLD_POINTS


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


class _Tables:
    def __init__(self):
        self.rows = {k: [] for k in ("geom_link", "geom_type", "geom_pose", "geom_size", "geom_material",
                                     "geom_combine", "geom_offset", "geom_radius", "geom_vstart", "geom_vcount",
                                     "geom_fstart",
                                     "geom_fcount", "geom_estart", "geom_ecount")}
        self.verts, self.planes, self.tris = [], [], []
        self.face_vstart, self.face_vcount, self.face_verts, self.edges, self.edge_faces = [], [], [], [], []
        self.shapes = []  # (shape, owner name) per geometry, for reports
        self.groups = []

    def add(self, shape, link: int, pose, owner: str, static: bool):
        """Append one shape's rows; False for a mesh file that was not read (its load warned)."""
        cls = type(shape)
        where = f"{owner} {shape.label()}"
        if not pose.is_finite():  # a pose edited in place after attach_shape checked it
            raise ValidationError(f"{where}: the shape's pose is not finite ({pose.as_array().tolist()})")
        try:  # the shape's pose arrays (or a mesh array made writable again) may have been edited in place
            shape.check_contact_params()
        except ValidationError as e:
            raise ValidationError(f"{owner}: {e}") from None
        if isinstance(shape, Mesh):
            if shape.vertices is None:
                return False
            if static:
                shape_kind, data = 6, (shape.vertices, shape.triangles)
            else:
                shape_kind, data = 5, shape.hull_points
        elif cls in _TYPE_OF:
            shape_kind, data = _TYPE_OF[cls], None
            if shape_kind == 5:
                data = shape.hull_points
            elif shape_kind == 6:
                data = (shape.vertices, shape.triangles)
        else:
            raise ValidationError(f"{where}: shape type {cls.__name__} cannot collide")
        if shape_kind in (0, 6) and not static:
            raise ValidationError(f"{where}: a {cls.__name__} may only belong to a RigidStatic")
        size, radius = np.zeros(3), 0.0
        vstart, vcount, fstart, fcount = len(self.verts), 0, 0, 0
        estart, ecount = len(self.edges), 0
        if shape_kind in (3, 4, 5):  # polytopes (a cylinder's prism): vertices, planes, face loops and edges
            if shape_kind == 3:
                corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
                points = corners * np.asarray(shape.half_extents, float)
            elif shape_kind == 4:
                points = cylinder_prism(shape.radius, shape.half_height)
            else:
                points = data
            verts, _ = convex_hull(points, where)
            planes, loops, edges, edge_faces = hull_topology(verts, where)
            fstart, fcount, vcount, ecount = len(self.planes), len(planes), len(verts), len(edges)
            self.verts.extend(verts)
            self.planes.extend(planes)
            for loop in loops:
                self.face_vstart.append(len(self.face_verts))
                self.face_vcount.append(len(loop))
                self.face_verts.extend(np.asarray(loop) + vstart)
            self.edges.extend(edges + vstart)
            self.edge_faces.extend(edge_faces + fstart)
        if shape_kind == 1:
            size[0] = radius = shape.radius
        elif shape_kind in (2, 4):
            size[:2] = shape.radius, shape.half_height
            radius = shape.half_height + shape.radius if shape_kind == 2 else np.hypot(shape.half_height,
                                                                                      shape.radius)
        elif shape_kind == 3:
            size[:] = shape.half_extents
            radius = float(np.linalg.norm(size))
        elif shape_kind == 5:
            radius = float(np.linalg.norm(verts, axis=1).max())
        elif shape_kind == 6:
            verts, tris = data
            fstart, fcount = len(self.tris), len(tris)
            self.verts.extend(verts)
            self.tris.extend(tris + vstart)
            vcount = len(verts)
            radius = float(np.linalg.norm(verts, axis=1).max())
        m = shape.material
        r = self.rows
        r["geom_link"].append(link)
        r["geom_type"].append(shape_kind)
        r["geom_pose"].append(pose.as_array())
        r["geom_size"].append(size)
        r["geom_material"].append([m.static_friction, m.dynamic_friction, m.restitution])
        r["geom_combine"].append(FRICTION_COMBINE_MODES.index(m.friction_combine))
        r["geom_offset"].append(float(shape.contact_offset))
        r["geom_radius"].append(radius)
        r["geom_vstart"].append(vstart)
        r["geom_vcount"].append(vcount)
        r["geom_fstart"].append(fstart)
        r["geom_fcount"].append(fcount)
        r["geom_estart"].append(estart)
        r["geom_ecount"].append(ecount)
        self.shapes.append((shape, owner))
        self.groups.append((int(shape.collision_group), int(shape.collision_mask)))
        return True

    def collide(self, i: int, j: int) -> bool:
        (ga, ma), (gb, mb) = self.groups[i], self.groups[j]
        return bool((ga & mb) or (gb & ma))


def tree_links(art: Articulation, link_offset: int):
    """Per link of one articulation: forest parent, movability (some dof between it and the world), and the
    links in depth-first order, all in forest indices."""
    topo = art._topology()
    parents = [-1] + [topo.link_index[lk.parent] + link_offset for lk in topo.links[1:]]
    movable = [not art.fix_base and not art._kinematic] + [False] * (len(parents) - 1)
    for i in range(1, len(parents)):
        movable[i] = movable[parents[i] - link_offset] or len(topo.dof_axes[i]) > 0
    return parents, movable, [i + link_offset for i in topo.depth_first()]


def forest_links(arts: list[Articulation]):
    """(parents, movable, depth-first rank) of every link of a forest, in forest indices."""
    parents, movable, order = [], [], []
    for art in arts:
        p, m, o = tree_links(art, len(parents))
        parents += p
        movable += m
        order += o
    rank = np.zeros(len(parents), np.int32)
    rank[order] = np.arange(len(order))
    return parents, movable, rank


def geometry_arrays(arts: list[Articulation], statics: list, capacity_cap: int,
                    filters: tuple[set, set] = (frozenset(), frozenset())) -> tuple[dict, list]:
    """Host arrays of a block's Geometry (the forest of `arts` and the scene's statics), and the (shape, owner)
    list indexed like its shapes. filters: pairs that never collide (bodies joined by a body joint), as a set of
    frozensets of two forest links and a set of (forest link, id of a RigidStatic)."""
    parents, movable, rank = forest_links(arts)
    order = np.argsort(rank)
    tree_of, link_obj = [], []
    for t, art in enumerate(arts):
        tree_of += [t] * art.link_count
        link_obj += art._topology().links
    t = _Tables()
    link_geoms = []
    for i in order.tolist():
        link = link_obj[i]
        for s in link.shapes:
            if t.add(s, i, s.local_pose, f"link '{link.name}'", static=False):
                link_geoms.append(len(t.shapes) - 1)
    static_geoms, static_actor = [], {}
    for actor in statics:
        for s in actor.shapes:
            if t.add(s, -1, actor.pose * s.local_pose, f"static actor '{actor.name}'", static=True):
                static_geoms.append(len(t.shapes) - 1)
                static_actor[len(t.shapes) - 1] = id(actor)
    link_filters, static_filters = filters
    link_of = t.rows["geom_link"]
    geom_of = {id(shape): g for g, (shape, _) in enumerate(t.shapes)}
    explicit = {}  # frozenset of two geometries: their ContactPair (both shapes in this block)
    for art in arts:
        for p in art.contact_pairs:
            if id(p.shape_a) in geom_of and id(p.shape_b) in geom_of:  # else shape_b's body is not in the scene
                explicit[frozenset((geom_of[id(p.shape_a)], geom_of[id(p.shape_b)]))] = p
    pairs_a, pairs_b, own, materials, rests, capacity = [], [], [], [], [], 0

    def add_pair(a, b, pair):
        nonlocal capacity
        if not movable[link_of[a]]:
            a, b = b, a
        pairs_a.append(a)
        pairs_b.append(b)
        m = pair.material if pair is not None else None
        own.append(int(m is not None))
        materials.append([m.static_friction, m.dynamic_friction, m.restitution] if m is not None else [0.0] * 3)
        rests.append(pair.rest_offset if pair is not None else 0.0)
        capacity += _max_points(t.rows["geom_type"][a], t.rows["geom_type"][b])

    for x, a in enumerate(link_geoms):  # "dynamic" pairs: links of one tree, or of two trees
        for b in link_geoms[x + 1:]:
            la, lb = link_of[a], link_of[b]
            if not (movable[la] or movable[lb]) or la == lb:
                continue
            pair = explicit.get(frozenset((a, b)))
            if pair is None and (not t.collide(a, b) or frozenset((la, lb)) in link_filters):
                continue
            art = arts[tree_of[la]]
            if pair is None and tree_of[la] == tree_of[lb]:
                if (parents[la] == lb or parents[lb] == la
                        or art.get_articulation_flags() & ArticulationFlag.DISABLE_SELF_COLLISION
                        or frozenset((link_obj[la], link_obj[lb])) in art.collision_filters):
                    continue
            add_pair(a, b, pair)
    dynamic_count = len(pairs_a)
    for a in link_geoms:  # already in depth-first link order
        if not movable[link_of[a]]:
            continue
        for b in static_geoms:
            pair = explicit.get(frozenset((a, b)))
            if pair is not None or t.collide(a, b) and (link_of[a], static_actor[b]) not in static_filters:
                add_pair(a, b, pair)
    h = {k: np.array(v) for k, v in t.rows.items()}
    h["geom_pose"] = np.array(t.rows["geom_pose"], np.float32).reshape(-1, 7)
    h["geom_size"] = np.array(t.rows["geom_size"], np.float32).reshape(-1, 3)
    h["geom_material"] = np.array(t.rows["geom_material"], np.float32).reshape(-1, 3)
    h["verts"] = np.array(t.verts, np.float32).reshape(-1, 3)
    h["planes"] = np.array(t.planes, np.float32).reshape(-1, 4)
    h["tris"] = np.array(t.tris, np.int32).reshape(-1, 3)
    h["face_vstart"] = np.array(t.face_vstart, np.int32)
    h["face_vcount"] = np.array(t.face_vcount, np.int32)
    h["face_verts"] = np.array(t.face_verts, np.int32)
    h["edges"] = np.array(t.edges, np.int32).reshape(-1, 2)
    h["edge_faces"] = np.array(t.edge_faces, np.int32).reshape(-1, 2)
    h["pair_a"] = np.array(pairs_a, np.int32)
    h["pair_b"] = np.array(pairs_b, np.int32)
    h["pair_own_material"] = np.array(own, np.int32)
    h["pair_material"] = np.array(materials, np.float32).reshape(-1, 3)
    h["pair_rest"] = np.array(rests, np.float32)
    h["pair_count"] = len(pairs_a)
    h["pair_dynamic_count"] = dynamic_count
    h["link_rank"] = rank
    h["capacity"] = int(min(capacity, capacity_cap))
    return h, t.shapes


def build_geometry(arts, statics: list, capacity_cap: int, device, filters=(frozenset(), frozenset())):
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    h, shapes = geometry_arrays(arts, statics, capacity_cap, filters)
    return upload(Geometry, h, device), h, shapes


def build_contacts(num_envs: int, capacity: int, n_gen: int, device) -> Contacts:
    e, c = num_envs, max(capacity, 1)
    ct = Contacts()

    def z(shape, dtype):
        return wp.zeros(shape, dtype=dtype, device=device)

    ct.count, ct.dynamic_count, ct.overflow, ct.prev_count = z(e, int), z(e, int), z(e, int), z(e, int)
    for name in ("link_a", "link_b", "shape_a", "shape_b", "rank", "anchor", "broken", "prev_shape_a",
                 "prev_shape_b", "prev_anchor"):
        setattr(ct, name, z((e, c), int))
    ct.anchor_error = z((e, c), wp.vec2)
    for name in ("point", "normal", "tangent", "material", "force", "anchor_a", "anchor_b", "prev_anchor_a",
                 "prev_anchor_b"):
        setattr(ct, name, z((e, c), wp.vec3))
    ct.separation, ct.bounce = z((e, c), float), z((e, c), float)
    ct.g, ct.minv_g = z((e, 3 * c, n_gen), float), z((e, 3 * c, n_gen), float)
    ct.response, ct.impulse = z((e, 3 * c), float), z((e, 3 * c), float)
    ct.delassus = z((e, 3 * c, 3 * MANIFOLD_POINTS), float)
    return ct
