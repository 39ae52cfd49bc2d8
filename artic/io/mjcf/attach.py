"""MJCF `<attach model body prefix>` (MuJoCo 3's model composition), expanded as MuJoCo's compiler does, before the
bodies are read: `<asset><model name file>` names another MJCF file; `<attach>` (in a body, a frame or the
worldbody) puts a copy of that model's body `body` and its subtree there, or, without `body`, everything in its
worldbody (in a frame). Checked against MuJoCo's compiled model (tests/io/mjcf/test_sections.py).

What the copy brings, every name prefixed with `prefix` (MuJoCo's rule, as its `mj_saveLastXML` shows):
* the subtree: bodies, joints, geoms, sites, frames..., their `class`/`childclass` and the meshes, materials and
  height fields they name; its top takes the childclass its elements inherited in the child (from its ancestors,
  else the child's main class), prefixed, unless it sets its own;
* the child's defaults, under a class `prefix` + "main" holding its main class's settings and its classes, which
  inherits nothing from the parent's (`ATTACHED_DEFAULTS`: MuJoCo's attached joints do not take the parent's main
  class's damping);
* the child's assets (mesh and texture files made absolute from the child's folder and meshdir);
* the child's actuators, tendons, equalities, contact pairs/excludes and sensors whose every reference lies in the
  copied subtree; the others are left out, as MuJoCo leaves them (a warning counts them);
* the child's keyframes, each as a key `prefix` + name after the parent's own (MuJoCo 4's rule, checked against its
  compiled model): the copied joints take the child key's qpos and qvel verbatim (a free joint's position is not
  moved by the attachment's frame), the copied actuators its ctrl, everything else the composite model's qpos0 and
  zeros. The keys are placeholders here (`ATTACHED_KEYS` holds what they carry); keyframes.py fills them in the
  composite layout. A child key's act, mpos and mquat are left out, with a warning.

The child keeps its own compiler units: its `euler` and `axisangle` (elements and defaults) become quaternions with
its eulerseq and angle unit, and its hinge and ball joints' range, ref and springref are written on each joint in
the parent's unit (a default's value resolved through the child's classes first, since a class does not know
whether its joints are hinges). Other compiler settings (inertia rules, bounds) are the parent's.
"""

from __future__ import annotations

import copy
import math
import warnings
import weakref
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import MjcfError
from ...math.np_spatial import quat_from_axis_angle, quat_mul

# attributes of section elements that name model objects, and what they name
REFERENCES = (
    "joint",
    "jointinparent",
    "tendon",
    "site",
    "body",
    "geom",
    "body1",
    "body2",
    "geom1",
    "geom2",
    "joint1",
    "joint2",
    "tendon1",
    "tendon2",
    "site1",
    "site2",
    "objname",
    "refname",
    "cranksite",
    "slidersite",
    "sidesite",
)
_ASSET_REFERENCES = ("mesh", "material", "hfield", "texture", "skin")
SECTIONS = ("tendon", "actuator", "equality", "contact", "sensor")  # tendons first: actuators name them
# a joint kind's entries in MuJoCo's qpos and qvel (keyframes.py reads them from here: it imports this module)
QPOS_SIZES = {"free": (7, 6), "ball": (4, 3), "hinge": (1, 1), "slide": (1, 1)}


@dataclass
class AttachedKey:
    """What an attached model's key sets in the composite model: per copied joint element its qpos and qvel values,
    per copied actuator element its ctrl (keyframes.py places them)."""

    joints: list = field(default_factory=list)  # (joint element, qpos values, qvel values)
    actuators: list = field(default_factory=list)  # (actuator element, ctrl value)


ATTACHED_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # the placeholder <key> -> AttachedKey
# the attached models' top <default> classes (prefix + "main"): they inherit nothing from the parent's classes, as
# MuJoCo keeps an attached model's defaults its own (a parent's <joint damping> does not reach the child's joints)
ATTACHED_DEFAULTS: weakref.WeakSet = weakref.WeakSet()


def expand_attachments(root: ET.Element, path: Path, read_model: Callable[[Path], tuple]) -> None:
    """Replace every <attach> of `root` (includes already expanded) by the attached copy; `read_model(file)` gives
    (the child's <mujoco> element, includes expanded and sections merged, its folders dict) for a file path."""
    models = {}
    for asset in root.findall("asset"):
        for m in asset.findall("model"):
            name, file = m.get("name"), m.get("file")
            if not name or not file:
                raise MjcfError(f"MJCF file '{path}': <asset><model> needs a name and a file")
            models[name] = (path.parent / file).resolve()
            asset.remove(m)
    parent_of = {el: parent for parent in root.iter() for el in parent}
    attaches = [(parent_of[el], el) for el in root.iter() if el.tag == "attach"]  # in file order, as MuJoCo
    if not attaches:
        return
    degrees, _ = _units(root)  # the parent's eulerseq does not matter: the child's euler become quaternions
    loaded = {}
    for parent, el in attaches:
        name = el.get("model")
        if name not in models:
            raise MjcfError(f"MJCF file '{path}': <attach model='{name}'> names no <asset><model>")
        if name not in loaded:
            child, folders = read_model(models[name])
            _to_units(child, degrees)
            _absolute_files(child, models[name], folders)
            loaded[name] = child
        _attach(root, parent, el, loaded[name], el.get("prefix", ""), path)


def _units(root) -> tuple[bool, str]:
    """(angles in degrees, eulerseq) of a model: its last <compiler> setting of each, MuJoCo's defaults else."""
    degrees, seq = True, "xyz"
    for comp in root.findall("compiler"):
        degrees = comp.get("angle", "degree" if degrees else "radian") == "degree"
        seq = comp.get("eulerseq", seq)
    return degrees, seq


def _quat_text(el, degrees: bool, seq: str) -> str | None:
    """`el`'s euler or axisangle as MuJoCo's quat text (w x y z), or None when it has neither."""
    if "euler" in el.attrib:
        q = np.array([0.0, 0.0, 0.0, 1.0])
        for c, a in zip(seq, (float(x) for x in el.get("euler").split())):
            r = quat_from_axis_angle(np.eye(3)["xyz".index(c.lower())], math.radians(a) if degrees else a)
            q = quat_mul(q, r) if c.islower() else quat_mul(r, q)
    elif "axisangle" in el.attrib:
        x, y, z, a = (float(t) for t in el.get("axisangle").split())
        axis = np.array([x, y, z]) / max(np.linalg.norm([x, y, z]), 1e-300)
        q = quat_from_axis_angle(axis, math.radians(a) if degrees else a)
    else:
        return None
    return " ".join(f"{v:.17g}" for v in (q[3], q[0], q[1], q[2]))


def _classes(child) -> dict:
    """class name: (parent class or None, {element tag: attributes}) of the child's <default> tree."""
    out = {}

    def walk(d, name, parent):
        out[name] = (parent, {e.tag: dict(e.attrib) for e in d if e.tag != "default"})
        for sub in d.findall("default"):
            walk(sub, sub.get("class", ""), name)

    for d in child.findall("default"):
        walk(d, d.get("class", "main"), None)
    return out


def _resolved(classes, cls, tag, attr):
    while cls is not None and cls in classes:
        parent, defaults = classes[cls]
        if attr in defaults.get(tag, {}):
            return defaults[tag][attr]
        cls = parent
    return None


def _to_units(child, degrees: bool) -> None:
    """The child's orientations as quaternions and its hinge/ball joints' angles in the parent's unit (module
    docstring), so that its own compiler angle and eulerseq no longer matter."""
    c_degrees, c_seq = _units(child)
    for el in child.iter():
        q = _quat_text(el, c_degrees, c_seq)
        if q is not None:
            el.attrib.pop("euler", None)
            el.attrib.pop("axisangle", None)
            el.set("quat", q)
    if c_degrees == degrees:
        return
    scale = (math.pi / 180.0) if c_degrees else (180.0 / math.pi)
    classes = _classes(child)
    world = child.find("worldbody")

    def walk(el, cls):
        for sub in el:
            own = sub.get("class", cls)
            if sub.tag == "joint":
                kind = sub.get("type") or _resolved(classes, own, "joint", "type") or "hinge"
                if kind in ("hinge", "ball"):
                    for attr in ("range", "ref", "springref"):
                        text = sub.get(attr) or _resolved(classes, own, "joint", attr)
                        if text is not None and (attr == "range" or kind == "hinge"):
                            sub.set(attr, " ".join(f"{float(x) * scale:.17g}" for x in text.split()))
            walk(sub, sub.get("childclass", cls) if sub.tag in ("body", "frame") else cls)

    if world is not None:
        walk(world, "main")


def _absolute_files(child, path: Path, folders: dict) -> None:
    """Mesh, texture and height-field files of the child as absolute paths, found where MuJoCo finds them (meshdir
    or assetdir of the child, relative to its file; then an included part's own folder)."""
    comp = {}
    for c in child.findall("compiler"):
        comp.update(c.attrib)
    for asset in child.findall("asset"):
        for el in asset:
            file = el.get("file")
            if file is None:
                continue
            if el.tag == "mesh" and not el.get("name"):
                el.set("name", Path(file).stem)  # MuJoCo names a mesh after its file
            kind = {"mesh": "meshdir", "texture": "texturedir"}.get(el.tag)
            base = path.parent / comp.get(kind, comp.get("assetdir", "")) if kind else path.parent
            target = base / file
            if not target.is_file() and el in folders:
                target = base / folders[el] / file
            el.set("file", str(target.resolve()))


def _inherited_class(child, body) -> str:
    """The childclass `body`'s elements inherit in the child from its nearest ancestor that sets one ("main")."""
    parent_of = {el: parent for parent in child.iter() for el in parent}
    el = parent_of.get(body)
    while el is not None:
        if el.get("childclass") is not None:
            return el.get("childclass")
        el = parent_of.get(el)
    return "main"


def _find_body(child, name):
    world = child.find("worldbody")
    for b in world.iter("body") if world is not None else ():
        if b.get("name") == name:
            return b
    return None


def _attach(root, parent, el, child, prefix, path):
    name = el.get("body")
    if name is not None:
        body = _find_body(child, name)
        if body is None:
            raise MjcfError(f"MJCF file '{path}': <attach body='{name}'>: model '{el.get('model')}' has no such body")
        subtree = copy.deepcopy(body)
    else:  # the whole worldbody, in a frame
        subtree = ET.Element("frame")
        for sub in child.find("worldbody") if child.find("worldbody") is not None else ():
            subtree.append(copy.deepcopy(sub))
    inherited = _inherited_class(child, body) if name is not None else "main"
    names = _prefix_subtree(subtree, prefix)
    if subtree.get("childclass") is None:  # the class its elements had in the child, through its ancestors
        subtree.set("childclass", prefix + inherited)
    at = list(parent).index(el)
    parent.remove(el)
    parent.insert(at, subtree)
    _copy_defaults(root, child, prefix)
    _copy_assets(root, child, prefix)
    copies = dict(zip(body.iter(), subtree.iter())) if name is not None else {}
    for orig, sub in zip(child.find("worldbody") if name is None else (), subtree):
        copies.update(zip(orig.iter(), sub.iter()))
    left = _copy_sections(root, child, prefix, names, copies)
    dropped = _copy_keys(root, child, prefix, copies, path)
    if left or dropped:
        warnings.warn(
            f"MJCF file '{path}': <attach model='{el.get('model')}' prefix='{prefix}'> left out {left} actuator, "
            "tendon, equality, contact or sensor element(s) naming objects outside the attached subtree"
            + (f", and its keys' {' and '.join(dropped)}" if dropped else ""),
            RuntimeWarning,
            stacklevel=4,
        )


def retarget_keys(first: dict) -> None:
    """After a <replicate> (frames.py): the attached keys' joints and actuators that it copied name their first
    copy (`first`: original -> first copy), as MuJoCo 4's keys of a replicated attachment set the first copy only
    (mujoco_warp's n_humanoid.xml: three humanoids, the keys place the first)."""
    for placed in ATTACHED_KEYS.values():
        placed.joints = [(first.get(el, el), q, dq) for el, q, dq in placed.joints]
        placed.actuators = [(first.get(el, el), c) for el, c in placed.actuators]


def _child_joints(child) -> list:
    """(joint element, kind) of the child in MuJoCo's qpos order: bodies depth first, each body's own joints (those
    in its frames too) before its child bodies; a joint's type through the child's classes."""
    classes = _classes(child)
    out = []

    def content(el, cls, joints, bodies):
        for sub in el:
            if sub.tag in ("joint", "freejoint"):
                own = sub.get("class", cls)
                kind = "free" if sub.tag == "freejoint" else sub.get("type") or _resolved(classes, own, "joint", "type")
                joints.append((sub, kind or "hinge"))
            elif sub.tag == "frame":
                content(sub, sub.get("childclass", cls), joints, bodies)
            elif sub.tag == "body":
                bodies.append((sub, sub.get("childclass", cls)))

    def walk(el, cls):
        joints, bodies = [], []
        content(el, cls, joints, bodies)
        out.extend(joints)
        for b, c in bodies:
            walk(b, c)

    world = child.find("worldbody")
    if world is not None:
        walk(world, "main")
    return out


def _copy_keys(root, child, prefix, copies, path) -> list:
    """The child's keys as placeholder keys of `root` (module docstring); returns what was left out of them."""
    keys = [k for section in child.findall("keyframe") for k in section.findall("key")]
    if not keys:
        return []
    joints = _child_joints(child)
    actuators = [a for section in child.findall("actuator") for a in section]
    nq, nv = (sum(QPOS_SIZES[kind][i] for _, kind in joints) for i in (0, 1))
    target = ET.SubElement(root, "keyframe")  # after the parent's own sections: its keys come first, as MuJoCo's
    dropped = set()
    for key in keys:
        values = {}
        for attr, size in (("qpos", nq), ("qvel", nv), ("ctrl", len(actuators))):
            if attr in key.attrib:
                try:
                    values[attr] = [float(x) for x in key.get(attr).split()]
                except ValueError:
                    values[attr] = None
                if values[attr] is None or len(values[attr]) != size:
                    raise MjcfError(
                        f"MJCF file '{path}': attached model's <key name='{key.get('name', '')}'> attribute {attr} "
                        f"needs {size} numbers (its model's {attr}), got '{key.get(attr)}'"
                    )
        dropped.update(a for a in ("act", "mpos", "mquat") if a in key.attrib)
        placed = AttachedKey()
        iq = iv = 0
        for el, kind in joints:
            sq, sv = QPOS_SIZES[kind]
            if el in copies:
                qpos = values["qpos"][iq : iq + sq] if "qpos" in values else None
                qvel = values["qvel"][iv : iv + sv] if "qvel" in values else None
                placed.joints.append((copies[el], qpos, qvel))
            iq, iv = iq + sq, iv + sv
        for k, el in enumerate(actuators):
            if el in copies and "ctrl" in values:
                placed.actuators.append((copies[el], values["ctrl"][k]))
        out = ET.SubElement(target, "key", {"name": prefix + key.get("name", "")})
        if "time" in key.attrib:
            out.set("time", key.get("time"))
        ATTACHED_KEYS[out] = placed
    return sorted(dropped)


def _prefix_subtree(tree, prefix) -> set:
    """Prefix every name, class and asset reference in `tree`; returns the original names it holds."""
    names = set()
    for e in tree.iter():
        if "name" in e.attrib:
            names.add(e.get("name"))
            e.set("name", prefix + e.get("name"))
        for attr in ("class", "childclass") + _ASSET_REFERENCES:
            if attr in e.attrib:
                e.set(attr, prefix + e.get(attr))
    return names


def _copy_defaults(root, child, prefix):
    target = root.find("default")
    if target is None:
        target = ET.SubElement(root, "default")
    if not child.findall("default"):  # the class the subtree's top names (its childclass), empty
        ATTACHED_DEFAULTS.add(ET.SubElement(target, "default", {"class": prefix + "main"}))
    for d in child.findall("default"):
        top = copy.deepcopy(d)
        ATTACHED_DEFAULTS.add(top)
        top.set("class", prefix + d.get("class", "main"))
        for sub in top.iter("default"):
            if sub is not top:
                sub.set("class", prefix + sub.get("class", ""))
        for e in top.iter():
            for attr in _ASSET_REFERENCES:
                if attr in e.attrib:
                    e.set(attr, prefix + e.get(attr))
        target.append(top)


def _copy_assets(root, child, prefix):
    target = root.find("asset")
    if target is None:
        target = ET.SubElement(root, "asset")
    for asset in child.findall("asset"):
        for el in asset:
            e = copy.deepcopy(el)
            if "name" in e.attrib:
                e.set("name", prefix + e.get("name"))
            e.set("class", prefix + e.get("class", "main"))
            for attr in _ASSET_REFERENCES:
                if attr in e.attrib:
                    e.set(attr, prefix + e.get(attr))
            target.append(e)


def _copy_sections(root, child, prefix, names, copies) -> int:
    """The child's section elements whose references all lie among `names` (the attached subtree's, and the
    tendons copied before them), prefixed, each recorded in `copies` (original -> copy); returns how many were
    left out."""
    left = 0
    for tag in SECTIONS:
        for section in child.findall(tag):
            target = root.find(tag)
            if target is None:
                target = ET.SubElement(root, tag)
            for el in section:
                refs = [e.get(a) for e in el.iter() for a in REFERENCES if a in e.attrib]
                if any(r not in names for r in refs):
                    left += 1
                    continue
                e = copy.deepcopy(el)
                for sub in e.iter():
                    for a in REFERENCES + ("name", "class"):
                        if a in sub.attrib:
                            sub.set(a, prefix + sub.get(a))
                if e.get("class") is None and tag != "contact":
                    e.set("class", prefix + "main")  # the child's defaults (its <default><position kp>...)
                if el.get("name") is not None and tag == "tendon":
                    names.add(el.get("name"))
                target.append(e)
                copies[el] = e
    return left
