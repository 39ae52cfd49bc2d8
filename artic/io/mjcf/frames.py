"""MuJoCo's `<frame>` and `<replicate>` (expand_replicates: each copy becomes a frame). A frame is a pose (pos and
an orientation) and a `childclass` that its children (bodies, geoms, sites, joints, cameras, lights, other frames)
are given in. Expanded in place before the bodies are read, as MuJoCo
compiles it: each child is moved to the frame's parent with its pose composed with the frame's (a geom's `fromto`
end points and a joint's `pos` and `axis` transformed), explicit on the element so that its class defaults cannot
undo it, and the frame's childclass given to the children that name no class of their own.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from copy import deepcopy as copy_tree
from typing import TYPE_CHECKING

import numpy as np

from ...math.np_spatial import Transform
from .attach import REFERENCES, SECTIONS, retarget_keys

if TYPE_CHECKING:
    from .loader import _Loader

_ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
_FROMTO = ("capsule", "cylinder", "box", "ellipsoid")


def expand_frames(loader: _Loader, el: ET.Element, childclass: str) -> None:
    """Replace every <frame> below `el` (a <worldbody> or <body> whose children take `childclass` by default) by
    its children, posed in the frame's parent."""
    k = 0
    while k < len(el):
        child = el[k]
        if child.tag == "frame":
            moved = _unframe(loader, child, childclass)
            el.remove(child)
            for n, c in enumerate(moved):
                el.insert(k + n, c)
            continue  # the first moved child may be a frame itself
        if child.tag == "body":
            expand_frames(loader, child, child.get("childclass", childclass))
        k += 1


def _unframe(loader: _Loader, frame: ET.Element, childclass: str) -> list[ET.Element]:
    v = loader.v
    for key in frame.attrib:
        if key not in ("name", "pos", "childclass", *_ORIENTATIONS):
            raise v.fail(
                frame, f"attribute {key} is not a <frame> attribute (MuJoCo's: name, pos, an orientation, childclass)"
            )
    t = loader._frame(frame, frame.attrib)
    inner = frame.get("childclass", childclass)
    if inner not in loader.defaults:
        raise v.fail(frame, f"attribute childclass='{inner}' names no <default class>; define it or fix the name")
    children = list(frame)
    for c in children:
        a = loader._attrs(c, inner)
        if c.tag == "joint":
            if "pos" in a:
                c.set("pos", _text(t.transform_point(v.numbers(c, "pos", 3, text=a["pos"]))))
            c.set("axis", _text(t.rotate(v.numbers(c, "axis", 3, (0.0, 0.0, 1.0), a.get("axis")))))
        elif c.tag == "geom" and a.get("type", "sphere") in _FROMTO and "fromto" in a:
            ft = v.numbers(c, "fromto", 6, text=a["fromto"])
            c.set("fromto", _text(np.concatenate([t.transform_point(ft[:3]), t.transform_point(ft[3:])])))
        elif c.tag not in ("freejoint", "inertial"):
            if c.tag == "body":
                loader.written_pos.setdefault(c, c.get("pos"))  # the innermost frame's: the file's
            pose = t * loader._frame(c, a)
            for key in _ORIENTATIONS:
                c.attrib.pop(key, None)
            c.set("pos", _text(pose.p))
            x, y, z, w = pose.q
            c.set("quat", _text((w, x, y, z)))
        if "childclass" in frame.attrib:
            key = "childclass" if c.tag in ("body", "frame") else "class"
            if key not in c.attrib:
                c.set(key, inner)
    return children


def _replicate_sections(loader: _Loader, root: ET.Element, names: set, suffixes: list[str], first: dict) -> None:
    """MuJoCo's rule for the sections' elements that name an element of a replicated subtree (`names`, before their
    suffixes): each becomes one copy per suffix (its own name and those references suffixed, other references kept),
    the copies placed after the section's other elements, copy by copy in the section's order, as MuJoCo 4 compiles
    them. An equality that also names something outside the subtree is left out, as MuJoCo leaves it out (warned
    here: MuJoCo says nothing). `first` gets each original's first copy."""
    dropped = []
    for tag in SECTIONS:
        section = root.find(tag)
        if section is None:
            continue
        inside = [
            e for e in section if any(sub.get(a) in names for sub in e.iter() for a in REFERENCES if a in sub.attrib)
        ]
        for e in inside:
            section.remove(e)
        names = names | {e.get("name") for e in inside if e.get("name")}  # a replicated tendon's actuators follow
        mixed = [
            e
            for e in inside
            if tag == "equality" and any(e.get(a) not in names for a in REFERENCES if e.get(a) is not None)
        ]
        dropped += [loader.v.describe(e) if e.get("name") else f"<{e.tag}>" for e in mixed]
        for suffix in suffixes:
            for e in inside:
                if any(e is m for m in mixed):
                    continue
                original, e = e, copy_tree(e)
                first.setdefault(original, e)
                for sub in e.iter():
                    for a in (*REFERENCES, "name"):
                        if sub.get(a) in names or (a == "name" and sub is e and a in sub.attrib):
                            sub.set(a, sub.get(a) + suffix)
                section.append(e)
    if dropped:
        warnings.warn(
            f"MJCF file '{loader.v.path}': {len(dropped)} equality constraint(s) between a replicated element and one "
            f"outside its <replicate> ({', '.join(dropped[:3])}) left out, as MuJoCo compiles them (silently)",
            RuntimeWarning,
            stacklevel=5,
        )


def _text(values) -> str:
    return " ".join(repr(float(x)) for x in values)


def expand_replicates(loader: _Loader, el: ET.Element, root: ET.Element) -> None:
    """MuJoCo's `<replicate count offset euler sep>` below `el`: `count` copies of its children, copy k in the frame
    T^k (T: the offset and the euler rotation, so each copy is placed from the one before), each name given the
    suffix sep + k (zero-padded to the digits of count - 1). Inner replicates are expanded first, so that a name
    gets the inner index before the outer, as in MuJoCo. Each copy becomes a <frame> (expand_frames). The elements
    of `root`'s tendon, actuator, equality, contact and sensor sections that name something inside are copied with
    it (`_replicate_sections`)."""
    for child in list(el):
        expand_replicates(loader, child, root)
    k = 0
    while k < len(el):
        rep = el[k]
        if rep.tag != "replicate":
            k += 1
            continue
        v = loader.v
        for key in rep.attrib:
            if key not in ("count", "offset", "euler", "sep"):
                raise v.fail(rep, f"attribute {key} is not a <replicate> attribute (count, offset, euler, sep)")
        if "count" not in rep.attrib:
            raise v.fail(rep, "needs attribute count (how many copies)")
        count = v.integer(rep, "count", rep.get("count"), 1, 100_000)
        step = Transform(v.numbers(rep, "offset", 3, (0.0, 0.0, 0.0)), loader._quat(rep, rep.attrib))
        digits, sep = len(str(count - 1)), rep.get("sep", "")
        el.remove(rep)
        pose = Transform()
        suffixes = [f"{sep}{copy:0{digits}d}" for copy in range(count)]
        first = {}  # each original element's first copy: an attached model's keys set that copy (attach.py)
        _replicate_sections(loader, root, {n.get("name") for n in rep.iter() if "name" in n.attrib}, suffixes, first)
        for copy, suffix in enumerate(suffixes):
            frame = ET.Element("frame", {"pos": _text(pose.p), "quat": _text((pose.q[3], *pose.q[:3]))})
            for c in rep:
                original, c = c, copy_tree(c)
                if copy == 0:
                    first.update(zip(original.iter(), c.iter()))
                for named in c.iter():
                    if "name" in named.attrib:
                        named.set("name", named.get("name") + suffix)
                frame.append(c)
            el.insert(k + copy, frame)
            pose = pose * step
        retarget_keys(first)
        k += count
