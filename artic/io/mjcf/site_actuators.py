"""MuJoCo's site and slider-crank transmissions: an actuator with `site=` (and optionally `refsite=`) pushes on a
site's body with a wrench along its 6-vector `gear`, as quadrotors' thrusters and Cartesian servos do; one with
`cranksite=` drives a slider through a rod.

MuJoCo's definitions (mj_transmission, checked against its actuator_length, actuator_velocity and moment arms in
tests/io/mjcf/test_site_actuators.py), with gear = (g_lin, g_rot):
* No refsite: length 0; the wrench is (R_s g_lin, R_s g_rot) with R_s the site's world rotation, so the force f
  pushes along the site's own axes: f R_s g_lin at the site's position and a torque f R_s g_rot on its body. The
  velocity is that wrench's dot with the site's twist (the point velocity at the site, the body's angular velocity).
* With refsite: the site's pose relative to the reference site, in the reference's frame: length = g_lin .
  R_r^T (p_s - p_r) + g_rot . rotvec(q_r^-1 q_s) (the rotation vector of the relative rotation, angle in (-pi, pi]);
  the wrench (R_r g_lin, R_r g_rot) acts on the site's body as above and, opposite, on the reference's body, its
  force at the reference site (MuJoCo's moment arm: J_site(p_s) - J_ref(p_r)). MuJoCo then leaves out the dofs
  the two bodies share (their common path to the root): a couple (p_r - p_s) x f R_r g_lin on their deepest common
  link takes back what the force pair did to those dofs. The velocity is the wrench's power per unit force over
  the same motion. MuJoCo's moment arm leaves out how R_r turns with the reference's body; so does this.
* A slider-crank (cranksite, slidersite, cranklength rod, gear[0] = g): length g (a.v - sqrt((a.v)^2 + rod^2 -
  v.v)), v = p_crank - p_slider and a the slider site's z axis (a.v where the rod cannot reach: det <= 0); the
  force g f dL/dv at the crank pin, its opposite at the slider site and the torque g f a x dL/da on the slider's
  body (the axis turns with it as w x a).

The force is MuJoCo's general one, f = clamp(gain u + b0 + b1 length + b2 velocity, forcerange) with gain = g0 + g1
length + g2 velocity and u the ctrl or the activation (MjcfControl's inputs, activations integrated there). It is
applied at every step from the step's initial state, as MuJoCo's Euler applies actuator forces, by one launch per
pair of blocks (`_site_wrench`, one (env, actuator) per thread) that adds it to the links' forces, which the step
reads and clears. Under implicitfast MuJoCo makes an actuator's velocity terms (b2, g2) implicit; here they stay
explicit (read_actuators reports it). Reported and inert: a muscle on a site, dampratio and inheritrange on a site. The
reference may be on another articulation (a mocap body: a Cartesian servo towards a moving target) in another block
of the scene: the launch then reads and writes both blocks' arrays.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ...core.parallel import replay
from ...core.struct_refs import opt_in as _struct_refs
from ..xml_values import MAX_MAGNITUDE
from .geoms import fromto_quat
from .tendon_kernels import link_frame, point_velocity, push

_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from ...sim.scene import Scene
    from .loader import MjcfModel, _Loader

_LIMIT = wp.constant(float(MAX_MAGNITUDE))  # a force beyond it (or not finite) is dropped, and reported
_PI = wp.constant(wp.float64(np.pi))
NO_REF = -2  # ref_link when the actuator has no refsite (-1 is the world)


@dataclass
class SiteTransmission:
    """A site transmission (module docstring): the site's link (None: the world) and pose in the link's actor frame
    (the MuJoCo body's frame), the reference site's (`ref` False: none), and the 6-vector gear."""

    link: object
    pos: np.ndarray  # (3,) [m]
    quat: np.ndarray  # (4,) x, y, z, w
    gear: np.ndarray  # (6,) linear, then rotational
    ref: bool = False
    ref_link: object = None
    ref_pos: np.ndarray | None = None
    ref_quat: np.ndarray | None = None
    rod: float = 0.0  # [m] > 0: a slider-crank (cranksite the site, slidersite the reference; gear[0] alone)


def site_frames(loader: _Loader, el: ET.Element) -> dict:
    """Every named site of the model: name -> (link or None for the world, pos (3,), quat (4,) x y z w) in its
    body's frame, with class defaults (a capsule site's fromto gives its centre and its z axis, from - to); `el` is any
    element of the file."""
    if getattr(loader, "_site_frames", None) is None:
        out = {}

        def walk(body, cls, link):
            for s in body.findall("site"):
                if s.get("name") is None:
                    continue
                a = loader._attrs(s, cls)
                if "fromto" in a:
                    if a.get("type", "sphere") not in ("capsule", "cylinder", "box", "ellipsoid"):
                        raise loader.v.fail(s, "fromto needs a capsule, cylinder, box or ellipsoid site (MuJoCo too)")
                    ends = loader.v.numbers(s, "fromto", 6, text=a["fromto"])
                    if not np.any(ends[3:] != ends[:3]):
                        raise loader.v.fail(s, f"attribute fromto='{a['fromto']}': the two end points coincide")
                    # MuJoCo turns the site's z onto from - to (as a geom's): its frame, not only its shape
                    out[s.get("name")] = (link, 0.5 * (ends[:3] + ends[3:]), fromto_quat(ends))
                else:
                    frame = loader._frame(s, a)
                    out[s.get("name")] = (link, np.asarray(frame.p, float), np.asarray(frame.q, float))
            for child in body.findall("body"):
                if child in loader.body_links:  # a body artic built (mocap bodies included)
                    walk(child, loader._class(child, "childclass", cls), loader.body_links[child])

        walk(loader.v.root_of(el).find("worldbody"), "main", None)
        loader._site_frames = out
    return loader._site_frames


def read_site_transmission(loader: _Loader, act: ET.Element, a: dict, muscle: bool) -> SiteTransmission | str:
    """The site transmission of actuator element `act` (attributes `a`, with class defaults), or why it is not
    followed; a site name that names no site is refused as MuJoCo refuses it."""
    v = loader.v
    sites = site_frames(loader, act)
    crank = "cranksite" in a
    names = ("cranksite", "slidersite") if crank else ("site", "refsite")
    found = []
    for attr in names:
        if attr in a and a[attr] not in sites:
            raise v.fail(act, f"attribute {attr}='{a[attr]}' names no site of the model; fix the name")
        found.append(sites.get(a.get(attr)))
    rod = 0.0
    if crank:
        if "slidersite" not in a:
            raise v.fail(act, "a slider-crank (cranksite) needs slidersite; give it (MuJoCo refuses it too)")
        rod = v.number(act, "cranklength", 0.0, a.get("cranklength"))
        if not rod > 0.0:
            raise v.fail(act, "a slider-crank needs a positive cranklength (MuJoCo refuses it too)")
    if muscle:
        return "a muscle on a site transmission is not mapped (muscles on spatial tendons are)"
    for attr in ("dampratio", "inheritrange"):
        if attr in a and v.number(act, attr, text=a[attr]) != 0.0:
            return f"{attr} on a site transmission is not mapped (only on joints)"
    gear = np.zeros(6)
    given = v.numbers(act, "gear", (1, 6), (1.0,), a.get("gear"))
    gear[: len(given)] = given
    (link, pos, quat), ref = found
    out = SiteTransmission(link, pos, quat, gear, rod=rod)
    if ref is not None:
        out.ref, (out.ref_link, out.ref_pos, out.ref_quat) = True, ref
        if link is None and ref[0] is None:
            return "both sites are on the world body: nothing can move"
    elif link is None:
        return f"site '{a[names[0]]}' is on the world body: nothing can move"
    return out


@wp.struct
class SiteTables:
    """K site actuators of one launch: their sites, gears, gains and columns."""

    site_link: wp.array(dtype=int)  # (K,) the site's link column in the block, -1: the world
    site_pos: wp.array(dtype=wp.vec3d)  # (K,) [m] in the link's actor frame
    site_quat: wp.array(dtype=wp.quatd)  # (K,)
    site_com: wp.array(dtype=wp.vec3d)  # (K,) [m] the link's COM in its actor frame
    ref_link: wp.array(dtype=int)  # (K,) the reference's link column, -1: the world, NO_REF: no refsite
    ref_pos: wp.array(dtype=wp.vec3d)  # (K,)
    ref_quat: wp.array(dtype=wp.quatd)  # (K,)
    ref_com: wp.array(dtype=wp.vec3d)  # (K,)
    gear_lin: wp.array(dtype=wp.vec3d)  # (K,)
    gear_rot: wp.array(dtype=wp.vec3d)  # (K,)
    gain: wp.array(dtype=wp.vec3d)  # (K,) g0, g1, g2
    bias: wp.array(dtype=wp.vec3d)  # (K,) b0, b1, b2
    force_low: wp.array(dtype=wp.float64)  # (K,) [N or N m]
    force_high: wp.array(dtype=wp.float64)  # (K,)
    rod: wp.array(dtype=wp.float64)  # (K,) [m] a slider-crank's rod length (the site the crank pin); 0: none
    common: wp.array(dtype=int)  # (K,) the site's and reference's deepest common link (block column), -1: none


@wp.func
def _site_frame(pose: wp.array2d(dtype=wp.transform), env: int, blk: int, pos: wp.vec3d, quat: wp.quatd):
    """(world position, world rotation) of a site fixed at (pos, quat) on block link `blk` (-1: the world)."""
    p, q = link_frame(pose, env, blk)
    return p + wp.quat_rotate(q, pos), q * quat


@wp.func
def _rotation_vector(q: wp.quatd) -> wp.vec3d:
    """MuJoCo's mju_quat2Vel(q, 1): the rotation vector of q, its angle wrapped into (-pi, pi]."""
    axis = wp.vec3d(q[0], q[1], q[2])
    s = wp.length(axis)
    if s == wp.float64(0.0):
        return axis
    angle = wp.float64(2.0) * wp.atan2(s, q[3])
    if angle > _PI:
        angle = angle - wp.float64(2.0) * _PI
    return axis * (angle / s)


@wp.func
def _angular(vel: wp.array2d(dtype=wp.spatial_vector), env: int, blk: int) -> wp.vec3d:
    """The angular velocity [rad/s] of block link `blk` (0 for the world)."""
    if blk < 0:
        return wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
    v = vel[env, blk]
    return wp.vec3d(wp.float64(v[3]), wp.float64(v[4]), wp.float64(v[5]))


@wp.func
def _crank(st: SiteTables, k: int, pc: wp.vec3d, ps: wp.vec3d, qs: wp.quatd) -> tuple[wp.float64, wp.vec3d, wp.vec3d]:
    """A slider-crank's (length, unit force on the crank at its site, unit torque on the slider) for the crank pin at
    pc and the slider site at (ps, qs): MuJoCo's length gear (a.v - sqrt((a.v)^2 + rod^2 - v.v)), v = pc - ps, a the
    slider's z axis, and the derivatives of that length in v and a (a rod too short to reach: the length a.v)."""
    axis = wp.quat_rotate(qs, wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(1.0)))
    vec = pc - ps
    av = wp.dot(vec, axis)
    rod = st.rod[k]
    det = av * av + rod * rod - wp.dot(vec, vec)
    length = av
    d_axis = vec
    d_vec = axis
    if det > wp.float64(0.0):
        root = wp.sqrt(det)
        length = av - root
        factor = wp.float64(1.0) - av / root
        d_axis = vec * factor
        d_vec = axis * factor + vec / root
    g = st.gear_lin[k][0]
    return length * g, d_vec * g, wp.cross(axis, d_axis) * g  # a turns as w x a: the torque's share is a x dL/da


@wp.kernel
def _site_wrench(
    st: SiteTables,
    pose: wp.array2d(dtype=wp.transform),
    vel: wp.array2d(dtype=wp.spatial_vector),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
    ref_pose: wp.array2d(dtype=wp.transform),
    ref_vel: wp.array2d(dtype=wp.spatial_vector),
    ref_force: wp.array2d(dtype=wp.vec3),
    ref_torque: wp.array2d(dtype=wp.vec3),
    num_actuators: int,
    u: wp.array2d(dtype=wp.float64),  # (E, K) each actuator's input: its ctrl or act
    actuator_force: wp.array2d(dtype=wp.float64),
    dropped: wp.array(dtype=int),
):
    """Each (env, site actuator): its length and velocity, its force at input u, that force's wrench added to the
    site's link and, opposite, to the reference's (module docstring). The reference's link may be in another block:
    its state and forces are the ref_ arrays (the same arrays as the site's within one block)."""
    tid = wp.tid()
    env = tid // num_actuators
    k = tid % num_actuators
    bs = st.site_link[k]
    ps, qs = _site_frame(pose, env, bs, st.site_pos[k], st.site_quat[k])
    vs = point_velocity(pose, vel, env, bs, st.site_com[k], ps)
    ws = _angular(vel, env, bs)
    length = wp.float64(0.0)
    # per unit force: on the site's link a force `lin` at the site and a torque `rot`; on the reference's -lin at
    # `at` and the torque `ref_rot`
    lin = wp.quat_rotate(qs, st.gear_lin[k])
    rot = wp.quat_rotate(qs, st.gear_rot[k])
    ref_rot = -rot
    br = st.ref_link[k]
    at = ps
    if br != NO_REF:
        pr, qr = _site_frame(ref_pose, env, br, st.ref_pos[k], st.ref_quat[k])
        at = pr
        if st.rod[k] > wp.float64(0.0):  # a slider-crank: the site is the crank pin, the reference the slider
            length, lin, ref_rot = _crank(st, k, ps, pr, qr)
            rot = wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
        else:  # the gear in the reference's frame
            length = wp.dot(st.gear_lin[k], wp.quat_rotate_inv(qr, ps - pr))
            length = length + wp.dot(st.gear_rot[k], _rotation_vector(wp.quat_inverse(qr) * qs))
            lin = wp.quat_rotate(qr, st.gear_lin[k])
            rot = wp.quat_rotate(qr, st.gear_rot[k])
            ref_rot = -rot
    # the velocity: the wrench's power per unit force over both links' motion
    speed = wp.dot(lin, vs) + wp.dot(rot, ws)
    if br != NO_REF:
        speed = speed - wp.dot(lin, point_velocity(ref_pose, ref_vel, env, br, st.ref_com[k], at))
        speed = speed + wp.dot(ref_rot, _angular(ref_vel, env, br))
    # MuJoCo leaves the dofs both links share out of a site transmission's moment arm: the couple (at - ps) x lin
    # on their deepest common link takes back what the force pair at ps and at did to those dofs
    couple = wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
    common = st.common[k]
    if common >= 0:
        couple = wp.cross(at - ps, lin)
        speed = speed + wp.dot(couple, _angular(vel, env, common))
    g = st.gain[k]
    b = st.bias[k]
    gain = g[0] + g[1] * length + g[2] * speed
    f = gain * u[env, k] + b[0] + b[1] * length + b[2] * speed
    f = wp.clamp(f, st.force_low[k], st.force_high[k])
    actuator_force[env, k] = f
    if not wp.isfinite(f) or wp.abs(f) > wp.float64(_LIMIT):
        dropped[0] = 1  # every writer stores the same value; the host reports it (SiteActuators.apply)
        return
    push(pose, link_force, link_torque, env, bs, st.site_com[k], ps, lin * f, rot * f)
    if br != NO_REF:
        push(ref_pose, ref_force, ref_torque, env, br, st.ref_com[k], at, -lin * f, ref_rot * f)
    if common >= 0:
        t = couple * f
        wp.atomic_add(link_torque, env, common, wp.vec3(float(t[0]), float(t[1]), float(t[2])))


@dataclass
class _Launch:
    """One recorded launch of _site_wrench and what it reads and writes."""

    call: object  # the replayed launch
    u: object  # (E, K) inputs: a NumPy view on the CPU, the device array elsewhere
    forces: wp.array  # (E, K) [N or N m] the last forces
    columns: np.ndarray  # (K,) their actuators' columns
    arts: list  # the articulations whose link state it reads
    dropped: wp.array  # (1,) set when a force was not finite or beyond 1e15 and was dropped


class SiteActuators:
    """A model's site actuators in a scene: one launch per pair of blocks they join, rebuilt when the scene regroups
    its blocks (module docstring). `apply(u)` adds this step's wrenches; `add_forces` reports the last ones."""

    def __init__(self, model: MjcfModel, scene: Scene, actuators: list):
        self._scene = scene
        self.members = [(i, r) for i, r in enumerate(actuators) if r.supported and r.site is not None]
        self.active = bool(self.members)
        self._blocks_seen = None  # the blocks the launches were recorded for (held: compared by identity)
        self._launches: list[_Launch] = []
        self._model_name = model.name

    def _route(self) -> None:
        """The launches for the scene's current blocks (again when it regrouped them): one per pair of blocks
        (the site's, the reference's) that the actuators join."""
        pairs = [self._blocks(r.site) for _, r in self.members]
        seen = [b for pair in pairs for b in pair]
        if self._blocks_seen is not None and all(a is b for a, b in zip(seen, self._blocks_seen)):
            return
        self._blocks_seen, groups = seen, {}
        for (i, r), pair in zip(self.members, pairs):
            groups.setdefault(tuple(id(b) for b in pair), (pair, []))[1].append((i, r))
        self._launches = [self._record(*pair, members) for pair, members in groups.values()]

    def _blocks(self, t: SiteTransmission) -> tuple:
        """(block of the site's link, block of the reference's), the other's for a site or reference on the world."""
        site, ref = (None if lk is None else self._scene.view(lk.articulation).block for lk in (t.link, t.ref_link))
        return (ref if site is None else site), (site if ref is None else ref)

    def _record(self, block, ref_block, members) -> _Launch:
        dev, e = block.device, self._scene.num_envs
        trs = [r.site for _, r in members]

        def column(lk, b):
            return -1 if lk is None else b.link_index[id(lk)]

        def com(lk):
            return np.zeros(3) if lk is None else np.asarray(lk.cmass_local_pose.p, float)

        def arr(rows, dtype):
            return wp.array(np.asarray(rows), dtype=dtype, device=dev)

        st = SiteTables()
        st.site_link = arr([column(t.link, block) for t in trs], int)
        st.site_pos, st.site_quat = arr([t.pos for t in trs], wp.vec3d), arr([t.quat for t in trs], wp.quatd)
        st.site_com = arr([com(t.link) for t in trs], wp.vec3d)
        st.ref_link = arr([column(t.ref_link, ref_block) if t.ref else NO_REF for t in trs], int)
        st.ref_pos = arr([t.ref_pos if t.ref else np.zeros(3) for t in trs], wp.vec3d)
        st.ref_quat = arr([t.ref_quat if t.ref else np.array([0, 0, 0, 1.0]) for t in trs], wp.quatd)
        st.ref_com = arr([com(t.ref_link) if t.ref else np.zeros(3) for t in trs], wp.vec3d)
        st.gear_lin, st.gear_rot = arr([t.gear[:3] for t in trs], wp.vec3d), arr([t.gear[3:] for t in trs], wp.vec3d)
        st.gain = arr([(r.gain, *r.gain_slope) for _, r in members], wp.vec3d)
        st.bias = arr([r.bias for _, r in members], wp.vec3d)
        st.force_low = arr([r.forcerange[0] if r.forcerange else -np.inf for _, r in members], wp.float64)
        st.force_high = arr([r.forcerange[1] if r.forcerange else np.inf for _, r in members], wp.float64)
        st.rod = arr([t.rod for t in trs], wp.float64)
        st.common = arr([column(_common_link(t), block) for t in trs], int)
        u = wp.zeros((e, len(members)), dtype=wp.float64, device=dev)
        forces = wp.zeros((e, len(members)), dtype=wp.float64, device=dev)
        dropped = wp.zeros(1, dtype=int, device=dev)
        ends = [(b.state.link_pose, b.state.link_velocity, b.control.link_force, b.control.link_torque)
                for b in (block, ref_block)]  # fmt: skip
        cmd = wp.launch(
            _site_wrench, e * len(members), [st, *ends[0], *ends[1], len(members), u, forces, dropped], device=dev,
            record_cmd=True,
        )  # fmt: skip
        arts = list({id(lk.articulation): lk.articulation for t in trs for lk in (t.link, t.ref_link) if lk}.values())
        columns = np.array([i for i, _ in members])
        return _Launch(replay(cmd), u.numpy() if dev.is_cpu else u, forces, columns, arts, dropped)

    def apply(self, u: np.ndarray) -> None:
        """Add the site actuators' wrenches at inputs u (E, nu: ctrl, or act where they have one) to the links'
        forces for the coming step, from the scene's current state. A force the launch dropped is reported here
        on the CPU (a view, no copy), on a GPU when the forces are read (add_forces): no readback in a step."""
        self._route()
        for run in self._launches:
            for art in run.arts:
                self._scene.view(art).ensure_link_state()
            if isinstance(run.u, np.ndarray):
                run.u[...] = u[:, run.columns]
            else:
                run.u.assign(np.ascontiguousarray(u[:, run.columns]))
            run.call()
            if run.dropped.device.is_cpu:
                self._report(run)

    def add_forces(self, out: np.ndarray) -> None:
        """Write the forces [N or N m] of the last `apply` into their columns of `out` (E, nu)."""
        for run in self._launches:
            out[:, run.columns] = run.forces.numpy()
            self._report(run)

    def _report(self, run: _Launch) -> None:
        if run.dropped.numpy()[0] != 0:
            run.dropped.zero_()
            warnings.warn(
                f"MJCF model '{self._model_name}': a site actuator's force was not finite or beyond 1e+15 and was "
                "not applied (control.actuator_force shows it); check its ctrl, gains and forcerange",
                RuntimeWarning,
                stacklevel=4,
            )


def _common_link(t: SiteTransmission):
    """The deepest link on both the site's and the reference's paths to their root (a site transmission with its
    reference in the same articulation), or None; a slider-crank's moment keeps every dof, as MuJoCo's."""
    if not t.ref or t.rod > 0.0 or t.link is None or t.ref_link is None:
        return None
    if t.link.articulation is not t.ref_link.articulation:
        return None
    path, lk = set(), t.link
    while lk is not None:
        path.add(id(lk))
        lk = lk.parent
    lk = t.ref_link
    while lk is not None and id(lk) not in path:
        lk = lk.parent
    return lk
