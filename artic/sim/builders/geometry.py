"""A block's collision tables (collision/geometry.py's `Geometry`) from its articulations' shapes and the scene's
static actors: shapes as device rows (polytopes with their faces and edges for the separating-axis test, triangle
meshes, round shapes), and the candidate pairs, filtered and in the solver's visiting order (the rules are in
collision/geometry.py's module docstring)."""

from __future__ import annotations

import numpy as np
import warp as wp

from ...collision.geometry import GEOM_PLANE, MANIFOLD_POINTS, MATERIAL_SIZE, Geometry, cylinder_prism
from ...core.structs import upload
from ...description.articulation import Articulation
from ...description.mass_check import link_inverse_weights
from ...description.shapes import (
    FRICTION_COMBINE_MODES,
    Box,
    Capsule,
    ConvexMesh,
    Cylinder,
    Material,
    Mesh,
    Plane,
    Sphere,
    TriangleMesh,
    bounding_radius,
)
from ...description.softness import softness_row
from ...enums import ArticulationFlag
from ...errors import ValidationError
from ...math.hull import convex_hull, hull_topology
from .model import forest_links


def material_row(m: Material, weight: float) -> list:
    """A Material as the device's ContactMaterial (collision/geometry.py's MAT_* layout)."""
    return [
        m.static_friction,
        m.dynamic_friction,
        m.restitution,
        *softness_row(m.softness),
        m.solmix,
        m.pyramid_impratio if m.pyramid_impratio > 0.0 else -m.elliptic_impratio,
        weight,
        m.torsional_friction,
        m.rolling_friction,
        float(m.condim),
        float(m.priority),
    ]


_TYPE_OF = {Plane: 0, Sphere: 1, Capsule: 2, Box: 3, Cylinder: 4, ConvexMesh: 5, TriangleMesh: 6}


def _max_points(ta: int, tb: int) -> int:
    """Largest manifold a pair can produce (a: link shape, b: any)."""
    round_ = (1, 2)
    if (ta == 1 and tb in round_) or (tb == 1 and ta in round_):
        return 1
    if ta in round_ and tb in round_:
        return 3  # the closest points and, for hard contacts of nearly parallel capsules, a's two ends
    if tb == 0 and ta == 2:
        return 2
    return MANIFOLD_POINTS


def _shape_box(kind: int, size: np.ndarray, verts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre, half extents) of a shape's bounding box in its own frame (collision/cull.py): its vertices' bounds
    for polytopes and meshes, the extent of a sphere or a capsule (along x), none for a plane (half -1)."""
    if kind == 0:
        return np.zeros(3), -np.ones(3)
    if kind == 1:
        return np.zeros(3), np.full(3, size[0])
    if kind == 2:
        return np.zeros(3), np.array([size[0] + size[1], size[0], size[0]])
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    return (lo + hi) / 2.0, (hi - lo) / 2.0


class _Tables:
    def __init__(self):
        self.rows = {
            k: []
            for k in (
                "geom_link",
                "geom_type",
                "geom_pose",
                "geom_size",
                "geom_material",
                "geom_combine",
                "geom_offset",
                "geom_radius",
                "geom_box_center",
                "geom_box_half",
                "geom_vstart",
                "geom_vcount",
                "geom_fstart",
                "geom_fcount",
                "geom_estart",
                "geom_ecount",
            )
        }
        self.verts, self.planes, self.tris = [], [], []
        self.face_vstart, self.face_vcount, self.face_verts, self.edges, self.edge_faces = [], [], [], [], []
        self.shapes = []  # (shape, owner name) per geometry, for reports
        self.groups = []

    def add(self, shape, link: int, pose, owner: str, static: bool, weight: float = 0.0):
        """Append one shape's rows; False for a mesh file that was not read (its load warned). weight: the link's
        translational inverse weight (mass_check.link_inverse_weights), for soft contacts."""
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
            if static and not shape.static_hull:
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
        if shape_kind in (1, 2, 3, 4):
            radius = bounding_radius(shape)
        if shape_kind == 1:
            size[0] = shape.radius
        elif shape_kind in (2, 4):
            size[:2] = shape.radius, shape.half_height
        elif shape_kind == 3:
            size[:] = shape.half_extents
        elif shape_kind == 5:
            radius = float(np.linalg.norm(verts, axis=1).max())
        elif shape_kind == 6:
            verts, tris = data
            fstart, fcount = len(self.tris), len(tris)
            self.verts.extend(verts)
            self.tris.extend(tris + vstart)
            vcount = len(verts)
            radius = float(np.linalg.norm(verts, axis=1).max())
        box = _shape_box(shape_kind, size, np.asarray(self.verts[vstart : vstart + vcount], float).reshape(-1, 3))
        m = shape.material
        r = self.rows
        r["geom_link"].append(link)
        r["geom_type"].append(shape_kind)
        r["geom_pose"].append(pose.as_array())
        r["geom_size"].append(size)
        r["geom_material"].append(material_row(m, weight))
        r["geom_combine"].append(FRICTION_COMBINE_MODES.index(m.friction_combine))
        r["geom_offset"].append(float(shape.contact_offset))
        r["geom_radius"].append(radius)
        r["geom_box_center"].append(box[0])
        r["geom_box_half"].append(box[1])
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


def geometry_arrays(
    arts: list[Articulation], statics: list, capacity_cap: int, filters: tuple[set, set] = (frozenset(), frozenset())
) -> tuple[dict, list]:
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
    soft = any(s.material.softness is not None for link in link_obj for s in link.shapes)
    weights = {}  # link: translational inverse weight, for soft contacts only (an M^-1 per articulation)
    if soft:
        for art in arts:
            if not art._kinematic:  # a kinematic body weighs 0 (MuJoCo's mocap bodies' invweight0)
                weights.update({link: w[0] for link, w in link_inverse_weights(art).items()})
    for i in order.tolist():
        link = link_obj[i]
        for s in link.shapes:
            if t.add(s, i, s.local_pose, f"link '{link.name}'", static=False, weight=weights.get(link, 0.0)):
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
    rest_of = [float(shape.rest_offset) for shape, _ in t.shapes]

    def add_pair(a, b, pair):
        nonlocal capacity
        if not movable[link_of[a]]:
            a, b = b, a
        pairs_a.append(a)
        pairs_b.append(b)
        m = pair.material if pair is not None else None
        own.append(int(m is not None))
        materials.append(material_row(m, 0.0) if m is not None else [0.0] * MATERIAL_SIZE)
        # the shapes' rest offsets add to an explicit pair's (an MJCF <pair>'s margin less the geoms' own, pairs.py)
        rests.append((pair.rest_offset if pair is not None else 0.0) + rest_of[a] + rest_of[b])
        capacity += _max_points(t.rows["geom_type"][a], t.rows["geom_type"][b])

    for x, a in enumerate(link_geoms):  # "dynamic" pairs: links of one tree, or of two trees
        for b in link_geoms[x + 1 :]:
            la, lb = link_of[a], link_of[b]
            if not (movable[la] or movable[lb]) or la == lb:
                continue
            pair = explicit.get(frozenset((a, b)))
            if pair is None and (not t.collide(a, b) or frozenset((la, lb)) in link_filters):
                continue
            art = arts[tree_of[la]]
            if pair is None and tree_of[la] == tree_of[lb]:
                if (
                    parents[la] == lb
                    or parents[lb] == la
                    or art.get_articulation_flags() & ArticulationFlag.DISABLE_SELF_COLLISION
                    or frozenset((link_obj[la], link_obj[lb])) in art.collision_filters
                ):
                    continue
            add_pair(a, b, pair)
    dynamic_count = len(pairs_a)
    for a in link_geoms:  # already in depth-first link order
        if not movable[link_of[a]]:
            continue
        for b in static_geoms:
            pair = explicit.get(frozenset((a, b)))
            if pair is not None or (t.collide(a, b) and (link_of[a], static_actor[b]) not in static_filters):
                add_pair(a, b, pair)
    h = {k: np.array(v) for k, v in t.rows.items()}
    h["geom_pose"] = np.array(t.rows["geom_pose"], np.float32).reshape(-1, 7)
    h["geom_size"] = np.array(t.rows["geom_size"], np.float32).reshape(-1, 3)
    h["geom_box_center"] = np.array(t.rows["geom_box_center"], np.float32).reshape(-1, 3)
    h["geom_box_half"] = np.array(t.rows["geom_box_half"], np.float32).reshape(-1, 3)
    h["geom_material"] = np.array(t.rows["geom_material"], np.float32).reshape(-1, MATERIAL_SIZE)
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
    h["pair_material"] = np.array(materials, np.float32).reshape(-1, MATERIAL_SIZE)
    h["pair_rest"] = np.array(rests, np.float32)
    h["pair_count"] = len(pairs_a)
    h["pair_dynamic_count"] = dynamic_count
    h["link_rank"] = rank
    h["link_center"], h["pair_run_end"], h["pair_run_reach"] = _pair_runs(h, dynamic_count, len(rank))
    h["pair_cull"] = _pair_cull(h)
    h["capacity"] = int(min(capacity, capacity_cap))
    h["capacity_bound"] = int(capacity)  # every pair's largest manifold: no step can want more slots
    return h, t.shapes


def _pair_cull(h: dict) -> np.ndarray:
    """Each pair's squared bounding-sphere distance (Geometry.pair_cull: no square root per pair in the narrow
    phase, most of the dm dog's 3600 pair tests), summed in float32 as the narrow phase summed it before."""
    f = np.float32
    if not len(h["pair_a"]):
        return np.zeros(0, f)
    radius, offset = h["geom_radius"].astype(f), h["geom_offset"].astype(f)
    a, b = h["pair_a"], h["pair_b"]
    reach = radius[a] + offset[a] + offset[b] + np.maximum(h["pair_rest"].astype(f), f(0.0))
    bound = (reach + radius[b]).astype(np.float64)
    square = np.nextafter((bound * bound).astype(f), f(np.inf))  # rounded up: never culls a pair that may touch
    return np.where(np.asarray(h["geom_type"])[b] == int(GEOM_PLANE), f(-1.0), square).astype(f)


def _pair_runs(h: dict, dynamic_count: int, link_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of consecutive link-link pairs between the same two links, which the narrow phase skips at once when the
    links' centres are farther apart than any of the run's pairs could touch (collision/narrow.py): each link's
    centre (the mean of its shapes' origins, link frame), and per pair the end of the run it starts (else the next
    pair) and that run's reach: the largest over its pairs of both shapes' bounding radius, distance from their
    link's centre and contact offset, plus the pair's rest offset (the triangle inequality then bounds every pair's
    own test), widened by float32 rounding."""
    geom_link = h["geom_link"].astype(np.int64)
    origin = h["geom_pose"][:, :3].astype(np.float64)
    center = np.zeros((max(link_count, 1), 3))
    for link in range(link_count):
        mine = geom_link == link
        if mine.any():
            center[link] = origin[mine].mean(axis=0)
    own = np.where(geom_link >= 0, np.linalg.norm(origin - center[np.maximum(geom_link, 0)], axis=1), 0.0)
    extent = own + h["geom_radius"].astype(np.float64) + h["geom_offset"].astype(np.float64)
    count = len(h["pair_a"])
    run_end = np.arange(1, count + 1, dtype=np.int32)
    reach = np.full(count, np.inf, np.float32)
    la, lb = geom_link[h["pair_a"]], geom_link[h["pair_b"]]
    k = 0
    while k < dynamic_count:
        end = k + 1
        while end < dynamic_count and la[end] == la[k] and lb[end] == lb[k]:
            end += 1
        if end > k + 1:
            pa, pb = h["pair_a"][k:end], h["pair_b"][k:end]
            most = (extent[pa] + extent[pb] + np.maximum(h["pair_rest"][k:end], 0.0)).max()
            run_end[k], reach[k] = end, most * (1.0 + 1e-5) + 1e-6
        k = end
    return center.astype(np.float32), run_end, reach


def build_geometry(
    arts: list[Articulation],
    statics: list,
    capacity_cap: int,
    device: wp.Device | str | None,
    filters: tuple[set, set] = (frozenset(), frozenset()),
) -> tuple[Geometry, dict, list]:
    """The block's Geometry on the device, its host arrays, and the (shape, owner) list indexed like its shapes."""
    arts = list(arts)
    h, shapes = geometry_arrays(arts, statics, capacity_cap, filters)
    return upload(Geometry, h, device), h, shapes
