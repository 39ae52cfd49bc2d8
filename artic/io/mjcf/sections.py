"""The MJCF file as MuJoCo's compiler sees it before anything is built, as an XML rewrite (loader.py reads the
result): `<include>`s expanded, `<attach>`ed models copied in (attach.py), and repeated top-level sections merged
in MuJoCo's order and rules. Every later reader (bodies, masses, tendons, actuators, the unused-content report) then
sees one tree in MuJoCo's order and needs no special case."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from ...errors import MjcfError
from ..xml_values import read_xml_root
from .attach import ATTACHED_DEFAULTS, expand_attachments


def expand_file(root: ET.Element, path: Path) -> dict:
    """`root` (the file's <mujoco>) with its includes expanded, its attached models copied in and its sections
    merged, in place; returns the included asset elements' folders (`_record_folders`), for mesh lookups."""
    folders = {}
    _expand_includes(root, path, [path.resolve()], folders)
    expand_attachments(root, path, read_model)
    _merge_sections(root)
    return folders


def inherited_defaults(el: ET.Element, parents: dict) -> dict:
    """What the nested <default> `el` inherits: its parent class's settings `parents`, or nothing for an attached
    model's top class (attach.py)."""
    return {} if el in ATTACHED_DEFAULTS else parents


def read_model(file: Path) -> tuple:
    """(<mujoco> element, folders) of an attached model's file, expanded as `expand_file` expands the main one."""
    path, root = read_xml_root(file, "MJCF (attached model)", "mujoco", MjcfError)
    return root, expand_file(root, path)


def _expand_includes(root, path: Path, chain: list, folders: dict, seen: set | None = None):
    """MuJoCo's <include file="..."/>: the children of the included file's <mujoco> element take the include's
    place, recursively. The path is taken relative to the including file. A file included twice (MuJoCo refuses
    repeated includes) or including itself is an MjcfError naming both files. `folders` gets the included asset
    elements' folders (`_record_folders`)."""
    seen = set() if seen is None else seen
    for parent in list(root.iter()):
        for child in [c for c in parent if c.tag == "include"]:
            name = child.get("file")
            if not name:
                raise MjcfError(f"MJCF file '{path}': <include> needs a file attribute naming the MJCF file")
            target = (path.parent / name).resolve()
            if target in chain:
                raise MjcfError(
                    f"MJCF file '{path}': <include file='{name}'> includes itself (through "
                    f"{' -> '.join(p.name for p in chain)})"
                )
            if target in seen:
                raise MjcfError(
                    f"MJCF file '{path}': <include file='{name}'>: '{target.name}' is included twice; "
                    "MuJoCo refuses repeated includes"
                )
            seen.add(target)
            # MuJoCo takes the children of the included file's top element: <mujoco>, or <mujocoinclude> in files
            # written for MuJoCo 2 (gymnasium-robotics' Adroit hand and kitchen)
            _, inc = read_xml_root(target, f"MJCF (included by '{path}')", ("mujoco", "mujocoinclude"), MjcfError)
            _record_folders(inc, target, chain[0], folders)
            _expand_includes(inc, target, chain + [target], folders, seen)
            at = list(parent).index(child)
            parent.remove(child)
            for k, el in enumerate(list(inc)):
                parent.insert(at + k, el)


# MuJoCo reads every occurrence of a top-level section: a scene file that includes a robot and adds its own
# <worldbody> (a floor, a table), <actuator> or <compiler> holds several. These keep one element whose attributes
# the later ones override (each compiler/option setting applies to the whole model, the last one given wins);
# the others are concatenated in file order (a <default> class defined in a later section serves elements before it).
_MERGED_ATTRIBUTES = ("compiler", "option", "size", "statistic", "visual")
_CONCATENATED = (
    "default",
    "extension",
    "custom",
    "asset",
    "worldbody",
    "contact",
    "deformable",
    "equality",
    "tendon",
    "actuator",
    "sensor",
    "keyframe",
)


def _merge_sections(root) -> None:
    """Each repeated top-level section of `root` (after the includes are expanded) merged into its first
    occurrence, as MuJoCo merges them (checked against MuJoCo in tests/io/mjcf/test_sections.py)."""
    for tag in _MERGED_ATTRIBUTES + _CONCATENATED:
        found = root.findall(tag)
        for later in found[1:]:
            if tag in _MERGED_ATTRIBUTES:
                found[0].attrib.update(later.attrib)
            found[0].extend(list(later))
            root.remove(later)


def _record_folders(inc, target: Path, main: Path, folders: dict) -> None:
    """MuJoCo looks for an asset file named in an included file (a mesh) under the compiler's meshdir first as
    given, then under the included file's folder as the main file sees it (`meshdir/<include folder>/file`). The
    included file's own asset elements (not those of the files it includes, recorded in their turn) are mapped to
    that folder."""
    folder = Path(os.path.relpath(target.parent, main.parent))
    if folder != Path("."):
        for el in inc.iter():
            if el.tag in ("mesh", "hfield", "texture", "skin") and el.get("file"):
                folders[el] = folder
