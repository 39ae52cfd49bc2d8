"""Segment models as MJCF files: bodies with their joints at their anchors, inertials, and one `<site>` per marker at
its attachment point (its name the marker's name). MJCF rather than URDF because URDF has no ball joint. A ball
joint is a `ball` joint, a hinge a `hinge` joint about the child's joint axis, a universal joint two perpendicular
hinges in one body (roll, then pitch: MuJoCo turns a body's joints in order, which is the Cardan joint). The joint
frames themselves (the parent's side may differ from the child's after a fit) are kept in `<custom><numeric>`
entries, which MuJoCo ignores. The file loads in MuJoCo as it is; `load_segment_model` reads back what
`save_segment_model` writes (and any MJCF of the same shape: nested bodies, a free root, those joints, inertials
with diaginertia or fullinertia, sites)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ArticError
from ..math.np_spatial import quat_to_matrix
from .segments import Segment, SegmentModel


def _fmt(v) -> str:
    return " ".join(f"{float(x):.9g}" for x in np.ravel(v))


def save_segment_model(
    path: os.PathLike | str,
    model: SegmentModel,
    marker_names: Iterable[str] = (),
    marker_segments: Iterable[str] = (),
    attachments: ArrayLike | None = None,
) -> None:
    """Write `model` (reference pose) and its markers' attachment points to an MJCF file."""
    root = ET.Element("mujoco", model=model.name)
    ET.SubElement(root, "compiler", angle="radian")
    custom = ET.SubElement(root, "custom")
    world = ET.SubElement(root, "worldbody")
    atts = np.zeros((0, 3)) if attachments is None else np.asarray(attachments, float)
    elements = {}
    for i, seg in enumerate(model.segments):
        if i == 0:
            body = ET.SubElement(world, "body", name=seg.name, pos=_fmt(model.root_position))
            ET.SubElement(body, "freejoint", name=f"{seg.name}_root")
        else:
            # body frame at the COM, the world's axes: offset from the parent's COM through the anchor
            body = ET.SubElement(
                elements[seg.parent], "body", name=seg.name, pos=_fmt(seg.anchor_in_parent - seg.anchor_in_child)
            )
            _write_joint(body, custom, seg)
        i3 = seg.inertia
        ET.SubElement(
            body,
            "inertial",
            pos="0 0 0",
            mass=f"{seg.mass:.9g}",
            fullinertia=_fmt([i3[0, 0], i3[1, 1], i3[2, 2], i3[0, 1], i3[0, 2], i3[1, 2]]),
        )
        elements[seg.name] = body
    if not len(custom):
        root.remove(custom)
    for name, seg, s in zip(marker_names, marker_segments, atts):
        ET.SubElement(elements[seg], "site", name=name, pos=_fmt(s), size="0.01")
    ET.indent(root)
    Path(path).write_text(ET.tostring(root, encoding="unicode") + "\n")


def _write_joint(body: ET.Element, custom: ET.Element, seg: Segment) -> None:
    pos = _fmt(seg.anchor_in_child)
    if seg.joint == "ball":
        ET.SubElement(body, "joint", name=seg.name, type="ball", pos=pos)
        return
    c = quat_to_matrix(seg.frame_in_child)
    if seg.joint == "hinge":
        ET.SubElement(body, "joint", name=seg.name, type="hinge", pos=pos, axis=_fmt(c[:, 2]))
    else:
        ET.SubElement(body, "joint", name=f"{seg.name}_roll", type="hinge", pos=pos, axis=_fmt(c[:, 2]))
        ET.SubElement(body, "joint", name=f"{seg.name}_pitch", type="hinge", pos=pos, axis=_fmt(c[:, 1]))
    for side in ("frame_in_parent", "frame_in_child"):
        ET.SubElement(custom, "numeric", name=f"{seg.name}:{side}", data=_fmt(getattr(seg, side)))


def _read_joint(path, name: str, joints: list, frames: dict, vec) -> tuple[str, np.ndarray, dict]:
    """(type, anchor in the child, Segment keywords for the axes or frames) of a body's joints."""
    kinds = [j.get("type", "hinge") for j in joints]
    anchors = [vec(j, "pos", np.zeros(3)) for j in joints]
    if kinds == ["ball"]:
        return "ball", anchors[0], {}
    if kinds not in (["hinge"], ["hinge", "hinge"]) or not np.allclose(anchors[0], anchors[-1]):
        raise ArticError(
            f"segment model file '{path}': body '{name}' needs one ball joint, one hinge, or two hinges at one point "
            f"(a universal joint), found {kinds}"
        )
    joint = "hinge" if len(kinds) == 1 else "universal"
    saved = [frames.get(f"{name}:{side}") for side in ("frame_in_parent", "frame_in_child")]
    if all(f is not None for f in saved):
        return joint, anchors[0], {"frame_in_parent": saved[0], "frame_in_child": saved[1]}
    axes = [vec(j, "axis", (0.0, 0.0, 1.0)) for j in joints]
    return joint, anchors[0], {"axis": axes[0], "axis2": axes[1] if joint == "universal" else None}


def load_segment_model(path: os.PathLike | str) -> tuple[SegmentModel, list[str], list[str], np.ndarray]:
    """(model, marker names, marker segments, attachments (n, 3)) from an MJCF segment model: every body a segment
    (its frame at its COM: an inertial's pos must be 0 and the body unrotated), every non-root body hanging from a
    ball joint whose pos is the anchor; sites are markers."""
    path = Path(path)
    if not path.is_file():
        raise ArticError(f"segment model file '{path}' does not exist")
    try:
        tree = ET.parse(path)
    except ET.ParseError as e:
        raise ArticError(f"segment model file '{path}': not valid XML ({e})") from None
    world = tree.getroot().find("worldbody")
    bodies = [] if world is None else world.findall("body")
    if len(bodies) != 1:
        raise ArticError(
            f"segment model file '{path}': <worldbody> needs exactly one <body> (the root segment), found {len(bodies)}"
        )
    segs, names, seg_of, atts = [], [], [], []
    frames = {}  # the joint frames save_segment_model keeps in <custom><numeric>
    for numeric in tree.getroot().iterfind("custom/numeric"):
        try:
            frames[numeric.get("name", "")] = np.array([float(x) for x in numeric.get("data", "").split()])
        except ValueError:
            raise ArticError(
                f"segment model file '{path}': <numeric name='{numeric.get('name')}'> data is not numbers"
            ) from None

    def vec(el, attr, default, n=3):
        text = el.get(attr)
        if text is None:
            return np.asarray(default, float)
        try:
            v = np.array([float(x) for x in text.split()])
        except ValueError:
            v = np.zeros(0)
        if v.shape != (n,) or not np.all(np.isfinite(v)):
            raise ArticError(
                f"segment model file '{path}': <{el.tag} name='{el.get('name')}'> {attr}='{text}' must be "
                f"{n} finite numbers"
            )
        return v

    def walk(body, parent):
        name = body.get("name")
        if not name:
            raise ArticError(f"segment model file '{path}': every <body> needs a name")
        if body.get("quat") or body.get("euler") or body.get("axisangle"):
            raise ArticError(
                f"segment model file '{path}': body '{name}' is rotated; segment frames have the world's axes"
            )
        inertial = body.find("inertial")
        if inertial is None:
            raise ArticError(f"segment model file '{path}': body '{name}' has no <inertial>")
        if np.any(vec(inertial, "pos", np.zeros(3)) != 0):
            raise ArticError(
                f"segment model file '{path}': body '{name}': the inertial's pos must be 0 (the body "
                "frame is at the COM)"
            )
        try:
            mass = float(inertial.get("mass", "nan"))
        except ValueError:
            mass = float("nan")
        if inertial.get("fullinertia") is not None:
            f = vec(inertial, "fullinertia", None, 6)
            inertia = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
        else:
            inertia = np.diag(vec(inertial, "diaginertia", None))
        pos = vec(body, "pos", np.zeros(3))
        if parent is None:
            segs.append(Segment(name, None, mass, inertia))
            root_pos = pos
        else:
            joint, anchor_child, axes = _read_joint(path, name, body.findall("joint"), frames, vec)
            segs.append(Segment(name, parent, mass, inertia, pos + anchor_child, anchor_child, joint, **axes))
            root_pos = None
        for site in body.findall("site"):
            names.append(site.get("name") or f"{name}_site{len(names)}")
            seg_of.append(name)
            atts.append(vec(site, "pos", np.zeros(3)))
        for child in body.findall("body"):
            walk(child, name)
        return root_pos

    try:
        root_pos = walk(bodies[0], None)
        model = SegmentModel(segs, root_pos, tree.getroot().get("model") or path.stem)
    except ArticError as e:
        raise ArticError(f"segment model file '{path}': {e}") from None
    return model, names, seg_of, np.array(atts, float).reshape(-1, 3)
