"""MJCF `<keyframe><key>`: named states (qpos, qvel, ctrl at a time) in MuJoCo's layout, and putting a scene's envs
in one.

MuJoCo's qpos holds, per joint in body order (depth first, each body's joints in file order): a free joint's
position and quaternion (w, x, y, z), a ball joint's quaternion, a hinge's angle, a slide's displacement; its qvel a
free joint's linear velocity (of the body origin, world) and angular velocity (body frame), a ball joint's angular
velocity (child frame), a hinge's or slide's rate. The loader records that layout as it creates the joints
(`QposEntry`); artic's coordinates are the same numbers but for a free root (a pose, and the velocity of its COM in
world axes) and a ball joint (the rotation vector of the quaternion; its velocity the same angular velocity).
A key without qpos is the model's qpos0, without qvel, ctrl or act zero, as in MuJoCo (act: the activations of the
actuators that have one, `Actuator.has_act`, which `MjcfControl.set_keyframe` applies with the ctrl); its mpos and
mquat place the mocap bodies (mocap.py; without them, where the file puts them).
"""

from __future__ import annotations

import warnings
import weakref
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...enums import CacheFlag
from ...errors import ValidationError
from ...math.np_spatial import quat_rotate, unit_wxyz
from .attach import ATTACHED_KEYS, QPOS_SIZES

if TYPE_CHECKING:
    from ...description.articulation import Articulation
    from ...sim.scene import Scene
    from ..xml_values import XmlValues
    from .loader import MjcfModel

_QPOS = {kind: sizes[0] for kind, sizes in QPOS_SIZES.items()}
_QVEL = {kind: sizes[1] for kind, sizes in QPOS_SIZES.items()}


@dataclass
class QposEntry:
    """One joint of MuJoCo's qpos layout: its kind, its articulation, and the artic joint (None for a free root)."""

    kind: str  # "free", "ball", "hinge" or "slide"
    articulation: Articulation
    joint: object = None
    element: ET.Element = None  # the <joint> or <freejoint> (an attached model's keys name theirs: attach.py)


@dataclass
class Keyframe:
    """A `<key>` of the file: `qpos` (nq,), `qvel` (nv,), `ctrl` (nu,) and `act` (na,) in MuJoCo's layout
    (docs/mjcf.md)."""

    name: str
    time: float
    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    mpos: np.ndarray = None  # (3 nmocap,) the mocap bodies' positions, file order (mocap.py)
    mquat: np.ndarray = None  # (4 nmocap,) their orientations, w x y z
    act: np.ndarray = None  # (na,) the actuators' activations (MjcfControl.act's columns)


def read_keyframes(
    v: XmlValues,
    root: ET.Element,
    layout: list[QposEntry],
    qpos0: np.ndarray,
    nu: int,
    mocap0: tuple = ((), ()),
    na: int = 0,
) -> list:
    """Every <key> of the file's <keyframe> sections, then default keys up to <size nkey>; a vector of the wrong
    length is an MjcfError naming it.
    mocap0: the mocap bodies' file positions and quaternions (w x y z), flattened, for keys without mpos/mquat."""
    nv = sum(_QVEL[e.kind] for e in layout)
    mpos0, mquat0 = (np.asarray(m, float).reshape(-1) for m in mocap0)
    keys = []
    for section in root.findall("keyframe"):
        for k, key in enumerate(section.findall("key")):
            time = v.number(key, "time", 0.0, key.get("time"))
            if key in ATTACHED_KEYS:
                values = _attached_values(v, root, key, layout, qpos0, nv, nu)
                values.update(act=np.zeros(na), mpos=mpos0.copy(), mquat=mquat0.copy())
                keys.append(Keyframe(key.get("name"), time, *(values[a] for a in _ATTRS)))
                continue
            values = {}
            for attr, size, default in (
                ("qpos", len(qpos0), qpos0),
                ("qvel", nv, np.zeros(nv)),
                ("ctrl", nu, None),
                ("act", na, None),
                ("mpos", len(mpos0), mpos0),
                ("mquat", len(mquat0), mquat0),
            ):
                if attr not in key.attrib:
                    values[attr] = np.zeros(size) if default is None else default.copy()
                    continue
                got = v.numbers(key, attr, (0, 10**9), text=key.get(attr))
                if len(got) != size:
                    raise v.fail(key, f"attribute {attr} has {len(got)} numbers; the model's {attr} has {size}")
                values[attr] = np.asarray(got, float)
            _normalize_quaternions(values["qpos"], layout)
            keys.append(Keyframe(key.get("name", f"key {k}"), time, *(values[a] for a in _ATTRS)))
    # <size nkey>: MuJoCo allocates that many keys at least, those the file does not define at qpos0 (dm_control's
    # dog declares one and defines none)
    nkey = max([v.integer(s, "nkey", s.get("nkey", "0"), 0, 10**6) for s in root.findall("size")], default=0)
    for k in range(len(keys), nkey):
        zeros = (np.zeros(nv), np.zeros(nu))
        keys.append(Keyframe(f"key {k}", 0.0, qpos0.copy(), *zeros, mpos0.copy(), mquat0.copy(), np.zeros(na)))
    return keys


def _normalize_quaternions(qpos: np.ndarray, layout: list[QposEntry]) -> None:
    """A key's free and ball joints' quaternions at unit length, in place, as MuJoCo 4 compiles them (a zero one
    becomes the identity)."""
    at = 0
    for e in layout:
        if e.kind in ("free", "ball"):
            q = slice(at + 3 * (e.kind == "free"), at + _QPOS[e.kind])
            qpos[q] = unit_wxyz(qpos[q])
        at += _QPOS[e.kind]


_ATTRS = ("qpos", "qvel", "ctrl", "mpos", "mquat", "act")  # Keyframe's vectors, in its field order


def _attached_values(v, root, key, layout, qpos0, nv, nu) -> dict:
    """qpos, qvel and ctrl of an attached model's key (attach.py's placeholder): its joints' and actuators' values
    where the composite model has them, qpos0 and zeros elsewhere."""
    placed = ATTACHED_KEYS[key]
    qpos, qvel, ctrl = qpos0.copy(), np.zeros(nv), np.zeros(nu)
    at, iq, iv = {}, 0, 0
    for e in layout:
        at[e.element] = (iq, iv)
        iq, iv = iq + _QPOS[e.kind], iv + _QVEL[e.kind]
    missing = 0
    for el, q, dq in placed.joints:
        if el not in at:
            missing += 1
            continue
        iq, iv = at[el]
        if q is not None:
            qpos[iq : iq + len(q)] = q
        if dq is not None:
            qvel[iv : iv + len(dq)] = dq
    actuators = list(root.find("actuator")) if root.find("actuator") is not None else []
    for el, c in placed.actuators:
        if el in actuators and actuators.index(el) < nu:
            ctrl[actuators.index(el)] = c
        else:
            missing += 1
    if missing:
        warnings.warn(
            f"{v.where(key)}: {missing} joint(s) or actuator(s) of the attached model's key are not in the compiled "
            "model (a <replicate> copied them?); they keep qpos0 and zero ctrl",
            RuntimeWarning,
            stacklevel=4,
        )
    return {"qpos": qpos, "qvel": qvel, "ctrl": ctrl}


def qpos0(layout: list[QposEntry]) -> np.ndarray:
    """MuJoCo's qpos0 (the file's pose: roots where the file puts them, joints at their ref) from the description."""
    out = []
    for e in layout:
        if e.kind == "free":
            pose = e.articulation.root_global_pose
            x, y, z, w = pose.q
            out += [*pose.p, w, x, y, z]
        elif e.kind == "ball":
            out += [1.0, 0.0, 0.0, 0.0]
        else:
            j = e.joint
            out.append(j.get_joint_position(j.dof_axes()[0]))
    return np.array(out, float)


def set_keyframe(model: MjcfModel, scene: Scene, key: int | str, envs: ArrayLike | None = None) -> Keyframe:
    """Put `envs` (default: all) of `scene` in keyframe `key` (its name or index): root poses and velocities, joint
    positions and velocities, through each articulation's cache. Returns the Keyframe (its ctrl and act are for
    MjcfControl.set; MjcfControl.set_keyframe puts the state, ctrl and act at once)."""
    frame = _find(model, key)
    n = scene.num_envs
    rows = np.arange(n) if envs is None else np.atleast_1d(np.asarray(envs))
    flags = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES
    caches = {}
    for art in model.articulations:
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache, flags)
        caches[id(art)] = (art, cache, {(id(j), int(a)): i for i, (j, a) in enumerate(art.dof_list())})
    qa = va = 0
    for e in model.qpos_layout:
        art, cache, dof = caches[id(e.articulation)]
        q, dq = frame.qpos[qa : qa + _QPOS[e.kind]], frame.qvel[va : va + _QVEL[e.kind]]
        qa, va = qa + _QPOS[e.kind], va + _QVEL[e.kind]
        if e.kind == "free":
            quat = unit_wxyz(q[3:])[[1, 2, 3, 0]]  # a zero quaternion is the identity, as in MuJoCo
            cache.root_transform[rows] = [*q[:3], *quat]
            com = quat_rotate(quat, art.get_links()[0].cmass_local_pose.p)
            w = quat_rotate(quat, dq[3:])  # MuJoCo's angular velocity is in the body frame
            cache.root_angular_velocity[rows] = w
            cache.root_linear_velocity[rows] = dq[:3] + np.cross(w, com)  # of the COM
            continue
        axes = e.joint.dof_axes()
        cols = [dof[(id(e.joint), int(a))] for a in axes]
        if e.kind == "ball":
            cache.joint_position[np.ix_(rows, cols)] = _rotation_vector(unit_wxyz(q))
        else:
            cache.joint_position[np.ix_(rows, cols)] = q
        cache.joint_velocity[np.ix_(rows, cols)] = dq
    for art, cache, _ in caches.values():
        art.apply_cache(cache, flags)
    for m, body in enumerate(model.mocap_bodies.values()):  # placed at once, and held there
        poses = scene.get_actor_pose(body)
        w, x, y, z = unit_wxyz(frame.mquat[4 * m : 4 * m + 4])
        poses[rows] = [*frame.mpos[3 * m : 3 * m + 3], x, y, z, w]
        scene.set_actor_pose(body, poses)
        scene.set_kinematic_target(body, poses)
    return frame


def get_qpos(model: MjcfModel, scene: Scene) -> np.ndarray:
    """(E, nq) every env's state in MuJoCo's qpos layout (set_keyframe's inverse): a free root's body position and
    quaternion (w x y z), a ball joint's quaternion, hinge and slide joints' values, so that a state can be compared
    with MuJoCo's `data.qpos` entry by entry. Where each entry comes from is worked out once per model and scene
    (_qpos_plan: an observation read at every step cost 75 us at one env before, the caches and the layout's
    lookups made anew each call)."""
    out = np.empty((scene.num_envs, sum(_QPOS[e.kind] for e in model.qpos_layout)))
    for art, cache, free, balls, columns in _qpos_plan(model, scene):
        art.copy_internal_state_to_cache(cache, _QPOS_FLAGS)
        for at in free:
            x = cache.root_transform
            out[:, at : at + 3] = x[:, :3]
            out[:, at + 3] = x[:, 6]  # w, then x y z
            out[:, at + 4 : at + 7] = x[:, 3:6]
        for at, cols in balls:
            out[:, at : at + 4] = _quaternions(cache.joint_position[:, cols])
        if len(columns[0]):
            out[:, columns[0]] = cache.joint_position[:, columns[1]]
    return out


_QPOS_FLAGS = CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM


def _qpos_plan(model: MjcfModel, scene: Scene) -> list:
    """Per articulation of the model: (articulation, a cache of it, qpos columns of its free root, (column, dof
    columns) of its ball joints, (qpos columns, dof columns) of its hinges and slides)."""
    # kept by the model, {id(scene): (weak reference to the scene, plan)}: a plan's caches hold the articulations
    # and through them their scene, which the model holds anyway (a module-level table would keep every scene)
    plans = model.qpos_plans
    held = plans.get(id(scene))
    if held is not None and held[0]() is scene:
        return held[1]
    per_art = {}
    at = 0
    for e in model.qpos_layout:
        art = e.articulation
        if id(art) not in per_art:
            dof = {(id(j), int(a)): i for i, (j, a) in enumerate(art.dof_list())}
            per_art[id(art)] = (art, art.create_cache(), [], [], ([], []), dof)
        _, _, free, balls, columns, dof = per_art[id(art)]
        if e.kind == "free":
            free.append(at)
        else:
            cols = [dof[(id(e.joint), int(a))] for a in e.joint.dof_axes()]
            if e.kind == "ball":
                balls.append((at, cols))
            else:
                columns[0].append(at)
                columns[1].append(cols[0])
        at += _QPOS[e.kind]
    plan = [
        (art, cache, free, balls, (np.array(c[0], int), np.array(c[1], int)))
        for art, cache, free, balls, c, _ in per_art.values()
    ]
    plans[id(scene)] = (weakref.ref(scene), plan)
    return plan


def _quaternions(r: np.ndarray) -> np.ndarray:
    """(E, 4) unit quaternions (w, x, y, z) of (E, 3) rotation vectors (_rotation_vector's inverse, row by row)."""
    angle = np.linalg.norm(r, axis=1)
    small = angle < 1e-15
    half = 0.5 * angle
    scale = np.where(small, 0.0, np.sin(half) / np.where(small, 1.0, angle))
    return np.column_stack([np.where(small, 1.0, np.cos(half)), r * scale[:, None]])


def _rotation_vector(wxyz: np.ndarray) -> np.ndarray:
    """The rotation vector (|r| <= pi) of a unit quaternion (w, x, y, z): a ball joint's artic coordinates."""
    w, vec = (wxyz[0], wxyz[1:]) if wxyz[0] >= 0.0 else (-wxyz[0], -wxyz[1:])
    s = np.linalg.norm(vec)
    return np.zeros(3) if s < 1e-15 else vec * (2.0 * np.arctan2(s, w) / s)


def _find(model: MjcfModel, key: int | str) -> Keyframe:
    names = [k.name for k in model.keyframes]
    if isinstance(key, str) and key in names:
        return model.keyframes[names.index(key)]
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and -len(names) <= key < len(names):
        return model.keyframes[key]
    raise ValidationError(
        f"MJCF model '{model.name}': no keyframe {key!r}; it has "
        + (", ".join(repr(n) for n in names) if names else "none")
        + " (a name or an index)"
    )
