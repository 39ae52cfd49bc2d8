"""MJCF `<tendon><spatial>`: MuJoCo's spatial tendons (a path of sites, wrapping spheres and cylinders, pulleys),
evaluated per env on the host: their length, their speed, and the forces their tension puts on the bodies.

A spatial tendon's length is the sum of its straight segments between consecutive path points, plus the arcs
where it wraps round a geom (wrap.py), each branch divided by the divisor of the pulley that starts it (MuJoCo's
XML reference, "tendon/spatial"). Its Jacobian J = dL/dq is MuJoCo's: each straight segment from a point on body A
to a point on body B adds u^T (J_B - J_A) (u the segment's unit direction; a wrap's tangent points belong to the
geom's body, and the arc between them adds nothing, as the tendon slides over it). So the generalized force J^T f
of a tendon force f is the same as a pair of point forces per segment, -f u at its start and +f u at its end: that
is how artic applies it, as link forces (a world force at each link's COM and the torque of its offset), without
forming J. The speed is the same sum of u^T (v_B - v_A) over the segments.

Path rules (MuJoCo's): a path starts with a site; a geom stands between two sites; a pulley starts a new branch
whose first element is a site. Anything else is refused.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...math.np_spatial import Transform, cross3, quat_between, quats_mul, quats_rotate, quats_to_matrices
from ..xml_values import MAX_MAGNITUDE
from .wrap import wrap

if TYPE_CHECKING:
    from ...description.articulation import Link
    from ...sim.scene import Scene
    from .couplings import _Couplings

__all__ = ["SpatialTendon", "TendonFrames", "TendonSet", "read_spatial_path"]


@dataclass
class _Site:
    link: Link | None  # None: the world
    pos: np.ndarray  # (3,) [m] in the link's actor frame (the MuJoCo body's frame), or in the world


@dataclass
class _Wrap:
    link: Link | None
    frame: Transform  # the geom's frame in the link's actor frame (a cylinder's axis its z)
    radius: float  # [m]
    cylinder: bool
    side: _Site | None  # the side site


@dataclass
class SpatialTendon:
    """One `<spatial>` tendon: its path (sites, wraps, and pulley divisors as floats). MuJoCo's passive force
    along it: stiffness [N/m] towards `spring` (low, high) [m] (none inside that dead band; None: the length at
    qpos0, measured when the model is added to a scene) and damping [N s/m] against its speed, both explicit as
    in MuJoCo's Euler step."""

    name: str
    path: list = field(default_factory=list)
    stiffness: float = 0.0
    damping: float = 0.0
    spring: tuple | None = None
    range: tuple | None = None  # (low, high) [m] when limited: not enforced (reported), read by lengthrange's uselimit


class TendonSet:
    """Spatial tendons compiled for evaluation over all envs at once: their points gathered from the links' poses in
    one pass, their wraps solved together (wrap.py), segment lengths, speeds and forces summed per tendon. Tendons
    are indexed in the order given."""

    def __init__(self, tendons: list):
        self.tendons = list(tendons)
        self.links = []  # the links the points lie on; the world is index len(links) (its pose is the identity)
        index = {}

        def link_of(link):
            if link is None:
                return -1
            if id(link) not in index:
                index[id(link)] = len(self.links)
                self.links.append(link)
            return index[id(link)]

        sites, site_link = [], []  # points fixed on links: the path's sites and the side sites
        wraps = []  # (x0 site, x1 site, link, frame, radius, cylinder, side site or -1)
        segs = []  # (end A, end B, tendon, divisor, wrap or -1, 0: always, 1: where the wrap bends, 2: where not)

        def site(e):
            sites.append(np.asarray(e.pos, float))
            site_link.append(link_of(e.link))
            return len(sites) - 1

        for t, tendon in enumerate(self.tendons):
            path, k, divisor = tendon.path, 0, 1.0
            while k < len(path) - 1:
                e0, e1 = path[k], path[k + 1]
                if isinstance(e0, float) or isinstance(e1, float):
                    divisor = e0 if isinstance(e0, float) else divisor
                    k += 1
                    continue
                a = site(e0)
                if isinstance(e1, _Site):
                    segs.append((("s", a), ("s", site(e1)), t, divisor, -1, 0))
                    k += 1
                    continue
                b = site(path[k + 2])
                side = site(e1.side) if e1.side is not None else -1
                w = len(wraps)
                wraps.append((a, b, link_of(e1.link), e1.frame, e1.radius, e1.cylinder, side))
                segs.append((("s", a), ("t0", w), t, divisor, w, 1))
                segs.append((("t1", w), ("s", b), t, divisor, w, 1))
                segs.append((("s", a), ("s", b), t, divisor, w, 2))
                k += 2
        world = len(self.links)
        self.site_pos = np.array(sites, float).reshape(-1, 3)
        self.site_link = np.array([world if i < 0 else i for i in site_link], int)
        self.wrap_ends = np.array([(w[0], w[1]) for w in wraps], int).reshape(-1, 2)
        self.wrap_link = np.array([world if w[2] < 0 else w[2] for w in wraps], int)
        self.wrap_pos = np.array([w[3].p for w in wraps], float).reshape(-1, 3)
        self.wrap_quat = np.array([w[3].q for w in wraps], float).reshape(-1, 4)
        self.wrap_radius = np.array([w[4] for w in wraps], float)
        self.wrap_cylinder = np.array([w[5] for w in wraps], bool)
        self.wrap_side = np.array([max(w[6], 0) for w in wraps], int)
        self.wrap_has_side = np.array([w[6] >= 0 for w in wraps], bool)
        self.wrap_divisor = np.array([next(g[3] for g in segs if g[4] == i) for i in range(len(wraps))], float)
        self.wrap_tendon = np.array([next(g[2] for g in segs if g[4] == i) for i in range(len(wraps))], int)
        ns, nw = len(sites), len(wraps)
        offset = {"s": 0, "t0": ns, "t1": ns + nw}  # the points: sites, then first and second tangent points
        self.seg_a = np.array([offset[a[0]] + a[1] for a, *_ in segs], int)
        self.seg_b = np.array([offset[b[0]] + b[1] for _, b, *_ in segs], int)
        self.seg_tendon = np.array([g[2] for g in segs], int)
        self.seg_scale = np.array([1.0 / g[3] for g in segs], float)
        self.seg_wrap = np.array([g[4] for g in segs], int)
        self.seg_kind = np.array([g[5] for g in segs], int)
        # the link each point moves with: a site's link, a tangent point the wrapping geom's
        self.point_link = np.concatenate([self.site_link, self.wrap_link, self.wrap_link])
        self.com_local = np.array([np.asarray(lk.cmass_local_pose.p, float) for lk in self.links] + [np.zeros(3)])

    def evaluate(self, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(length (E, T) [m], points (E, P, 3), segment directions (E, S, 3) over their divisors where on the path,
        segment lengths (E, S)) at link poses `pose` (E, len(links) + 1, 7) (x y z, qx qy qz qw; the last row the
        world's identity)."""
        e = len(pose)
        t = len(self.tendons)
        site = self._points(pose, self.site_link, self.site_pos)
        length = np.zeros((e, t))
        if len(self.wrap_link):
            center = self._points(pose, self.wrap_link, self.wrap_pos)
            q = quats_mul(pose[:, self.wrap_link, 3:], np.broadcast_to(self.wrap_quat, (e, len(self.wrap_link), 4)))
            rot = quats_to_matrices(q.reshape(-1, 4))
            rows = lambda a: a.reshape(-1, a.shape[-1])  # noqa: E731 (envs x wraps as rows)
            t0, t1, arc, wrapped = wrap(
                rows(site[:, self.wrap_ends[:, 0]]),
                rows(site[:, self.wrap_ends[:, 1]]),
                rows(center),
                rot,
                np.tile(self.wrap_radius, e),
                np.tile(self.wrap_cylinder, e),
                rows(site[:, self.wrap_side]),
                np.tile(self.wrap_has_side, e),
            )
            nw = len(self.wrap_link)
            wrapped = wrapped.reshape(e, nw)
            points = np.concatenate([site, t0.reshape(e, nw, 3), t1.reshape(e, nw, 3)], axis=1)
            np.add.at(length.T, self.wrap_tendon, (arc.reshape(e, nw) / self.wrap_divisor).T)
            on = np.ones((e, len(self.seg_a)))
            bent = wrapped[:, np.maximum(self.seg_wrap, 0)]
            on = np.where(self.seg_kind == 1, bent, np.where(self.seg_kind == 2, ~bent, on))
        else:
            points, on = site, np.ones((e, len(self.seg_a)))
        d = points[:, self.seg_b] - points[:, self.seg_a]
        n = np.linalg.norm(d, axis=2)
        weight = on * self.seg_scale
        np.add.at(length.T, self.seg_tendon, (weight * n).T)
        u = d * (weight / np.maximum(n, 1e-15))[..., None]
        return length, points, u, n

    def speed(self, pose: np.ndarray, velocity: np.ndarray, points: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(E, T) [m/s] dL/dt from `evaluate`'s points and directions and the links' velocities (E, len(links) + 1,
        6) (linear at the COM, angular; the world's last row zero)."""
        v = self._point_velocity(pose, velocity, points)
        rate = np.einsum("esi,esi->es", u, v[:, self.seg_b] - v[:, self.seg_a])
        out = np.zeros((len(pose), len(self.tendons)))
        np.add.at(out.T, self.seg_tendon, rate.T)
        return out

    def forces(
        self, pose: np.ndarray, points: np.ndarray, u: np.ndarray, force: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Link forces (E, len(links) + 1, 3) at the COMs and torques (world) of tendon forces `force` (E, T) [N],
        MuJoCo's sign (the generalized force J^T f: a negative f pulls the ends together)."""
        e = len(pose)
        f = u * force[:, self.seg_tendon][..., None]
        com = self._points(pose, np.arange(len(self.links) + 1), self.com_local)
        nl = len(self.links) + 1
        out_f, out_t = np.zeros((e, nl, 3)), np.zeros((e, nl, 3))
        for ends, sign in ((self.seg_a, -1.0), (self.seg_b, 1.0)):
            links = self.point_link[ends]
            arm = points[:, ends] - com[:, links]
            np.add.at(out_f.transpose(1, 0, 2), links, (sign * f).transpose(1, 0, 2))
            np.add.at(out_t.transpose(1, 0, 2), links, (sign * cross3(arm, f)).transpose(1, 0, 2))
        return out_f, out_t

    @staticmethod
    def _points(pose, links, local):
        """(E, k, 3) world positions of points `local` (k, 3) fixed on `links` (k,)."""
        p = pose[:, links]
        return p[..., :3] + quats_rotate(p[..., 3:], np.broadcast_to(local, p[..., :3].shape))

    def _point_velocity(self, pose, velocity, points):
        links = self.point_link
        com = self._points(pose, links, self.com_local[links])
        v = velocity[:, links]
        return v[..., :3] + cross3(v[..., 3:], points - com)


class TendonFrames:
    """A TendonSet's link poses and velocities read from a scene (the state a step starts from), and its forces
    added to the links' forces for the coming step."""

    def __init__(self, scene: Scene, tendons: TendonSet):
        self.num_envs = scene.num_envs
        self._scene = scene
        self.set = tendons
        arts = {}
        for k, link in enumerate(tendons.links):  # the state's order is the low-level (breadth-first) one
            arts.setdefault(id(link.articulation), (link.articulation, [], []))
            arts[id(link.articulation)][1].append(k)
            arts[id(link.articulation)][2].append(link.link_index)
        self._arts = list(arts.values())
        self.caches = {id(a): a.create_cache() for a, _, _ in self._arts}

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """(pose (E, n + 1, 7), velocity (E, n + 1, 6)) of the set's links and the world."""
        n = len(self.set.links)
        pose = np.zeros((self.num_envs, n + 1, 7))
        pose[:, :, 6] = 1.0
        vel = np.zeros((self.num_envs, n + 1, 6))
        for art, rows, low in self._arts:
            view = self._scene.view(art)
            view.ensure_link_state()
            pose[:, rows] = view.state.link_pose.numpy()[:, low]
            vel[:, rows] = view.state.link_velocity.numpy()[:, low]
        return pose, vel

    def apply(self, force: np.ndarray, torque: np.ndarray) -> None:
        """Add link forces and torques (E, n + 1, 3) (the world's last row ignored) to the articulations' link forces
        for the coming step; what the user applied for this step stays."""
        from ...enums import CacheFlag

        flags = CacheFlag.LINK_FORCE | CacheFlag.LINK_TORQUE
        # an env whose state went non-finite or beyond float32's reach (the scene reports it) gets no tendon force,
        # rather than a cache the articulation refuses
        lost = ~((np.abs(force) <= MAX_MAGNITUDE).all(axis=(1, 2)) & (np.abs(torque) <= MAX_MAGNITUDE).all(axis=(1, 2)))
        force, torque = np.where(lost[:, None, None], 0.0, force), np.where(lost[:, None, None], 0.0, torque)
        for art, rows, low in self._arts:
            cache = self.caches[id(art)]
            art.copy_internal_state_to_cache(cache, flags)
            np.add.at(cache.link_force, (slice(None), low), force[:, rows])
            np.add.at(cache.link_torque, (slice(None), low), torque[:, rows])
            art.apply_cache(cache, flags)


def initial_pose(tendons: TendonSet) -> np.ndarray:
    """(1, n + 1, 7) the set's links at their initial poses (the model's qpos0), the world last."""
    rows = [np.concatenate([lk.initial_pose.p, lk.initial_pose.q]) for lk in tendons.links]
    return np.array(rows + [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], float)[None]


# -- reading ---------------------------------------------------------------------------------------------------------
def read_spatial_path(reader: _Couplings, el: ET.Element) -> list:
    """The path of <spatial> element `el` (sites, wrapping geoms with their side sites, pulley divisors), checked
    against MuJoCo's rules; `reader` is couplings.py's _Couplings (its sites, the loader's geoms)."""
    v = reader.v
    path = []
    for c in el:
        if c.tag == "site":
            path.append(_site(reader, c, c.get("site"), "site"))
        elif c.tag == "geom":
            path.append(_wrap_geom(reader, c))
        elif c.tag == "pulley":
            path.append(v.number(c, "divisor", text=c.get("divisor"), minimum=1e-9))
        else:
            raise v.fail(c, f"<{c.tag}> cannot be part of a spatial tendon; use site, geom or pulley")
    if not path or not isinstance(path[1] if isinstance(path[0], float) and len(path) > 1 else path[0], _Site):
        raise v.fail(el, "a spatial tendon's path must start with a site, or a pulley and a site (as MuJoCo's)")
    for k, e in enumerate(path):
        prev = path[k - 1] if k else None
        nxt = path[k + 1] if k + 1 < len(path) else None
        if isinstance(e, _Wrap) and not (isinstance(prev, _Site) and isinstance(nxt, _Site)):
            raise v.fail(el[k], "a wrapping geom must stand between two sites (MuJoCo refuses it too)")
        if isinstance(e, float) and not isinstance(nxt, _Site):
            raise v.fail(el[k], "a pulley must be followed by a site (MuJoCo refuses it too)")
        if isinstance(e, _Site) and isinstance(nxt, _Site) and el[k].get("site") == el[k + 1].get("site"):
            raise v.fail(el[k + 1], "the same site twice in a row: a segment of no length (MuJoCo refuses it too)")
    branch = 0  # elements of the branch the pulleys cut the path into
    for k, e in enumerate([*path, 1.0]):
        if isinstance(e, float):
            if branch < 2 and k > 0:  # a leading pulley divides the first branch (MuJoCo compiles it so)
                raise v.fail(el[min(k, len(path)) - 1], "each branch of a tendon needs two sites or more (MuJoCo too)")
            branch = 0
        else:
            branch += 1
    return path


def _site(reader, el, name, attr) -> _Site:
    if name not in reader.sites:
        raise reader.v.fail(el, f"attribute {attr}='{name}' names no site of the model; fix the name")
    link, pos = reader.sites[name]
    return _Site(link, np.asarray(pos, float))


def _wrap_geom(reader, el) -> _Wrap:
    """A wrapping geom: a sphere or a cylinder of the model (MuJoCo wraps round no other), its frame on its body."""
    v, name = reader.v, el.get("geom")
    geoms = wrap_geoms(reader)
    if name not in geoms:
        raise v.fail(el, f"attribute geom='{name}' names no geom of the model; fix the name")
    link, g, a = geoms[name]
    kind = a.get("type", "sphere")
    if kind not in ("sphere", "cylinder"):
        raise v.fail(el, f"geom '{name}' is a {kind}; a tendon wraps round spheres and cylinders only (as MuJoCo)")
    size = v.numbers(g, "size", (0, 3), (), a.get("size"))
    frame = reader.loader._frame(g, a)
    if "fromto" in a and kind == "cylinder":
        ft = v.numbers(g, "fromto", 6, text=a["fromto"])
        frame = Transform(0.5 * (ft[:3] + ft[3:]), quat_between(np.array([0.0, 0.0, 1.0]), ft[3:] - ft[:3]))
    if not len(size):
        raise v.fail(g, f"geom '{name}' has no size; a wrapping geom needs its radius")
    side = _site(reader, el, el.get("sidesite"), "sidesite") if el.get("sidesite") else None
    return _Wrap(link, frame, float(size[0]), kind == "cylinder", side)


def wrap_geoms(reader: _Couplings) -> dict:
    """Named geoms of the model: name -> (link or None, element, attributes with class defaults)."""
    if getattr(reader, "_geoms", None) is None:
        ld, out = reader.loader, {}

        def walk(body, cls, link):
            for g in body.findall("geom"):
                if g.get("name") is not None:
                    out[g.get("name")] = (link, g, ld._attrs(g, cls))
            for child in body.findall("body"):
                if child in ld.body_links:  # a body artic built (mocap bodies included)
                    walk(child, ld._class(child, "childclass", cls), ld.body_links[child])

        walk(reader.root.find("worldbody"), "main", None)
        reader._geoms = out
    return reader._geoms
