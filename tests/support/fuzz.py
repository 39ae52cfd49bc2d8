"""Mutated URDF/MJCF files for the loader fuzz test (tests/io/test_fuzz_loaders.py) and for later checks that the
mutants that load also step finitely: `load_mutants(seed, count)`.

Sources: artic's shipped arm6.urdf, ant.xml and humanoid.xml, and example-robot-data's ur5 and panda URDFs (when
installed). Each mutant applies 1 to 3 random mutations: delete an element or an attribute, replace a number with
garbage (text, '', NaN, inf, 1e300, wrong counts), swap a joint's parent and child or make a link its own parent,
point a mesh at a missing file, a folder or a broken mesh file (BAD_MESHES), duplicate a name; MJCF also gets
undefined classes, free joints in the wrong place and unknown compiler settings. Everything is seeded: the same
(seed, count) gives the same mutants.
"""

from __future__ import annotations

import copy
import tempfile
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import artic
from artic import ArticError

ASSETS = Path(artic.__file__).parent / "assets"
GARBAGE = [
    "",
    " ",
    "abc",
    "nan",
    "inf",
    "-inf",
    "NaN 0 0",
    "1e300",
    "-1e300",
    "1e200",
    "0 0 1e200",
    "1e16",
    "0",
    "-1",
    "-0",
    "1e-300",
    "0 0 0",
    "0 0 0 0",
    "1 2",
    "1 2 3 4 5 6 7",
    "1,2,3",
    "0x10",
    "1e",
    "--1",
    "1e39",
    "3.4e38 0 0",
    "1 nan 0",
    "true",
    "-1e15",
    "0.5 0.5",
]


# broken mesh files written next to the mutants (meshes are read by the geometry code, not by the loaders)
BAD_MESHES = {
    "bad_index.obj": "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n",
    "two_coords.obj": "v 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n",
    "flat.obj": "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n",
    "nan.obj": "v 0 0 nan\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n",
    "empty.stl": "",
    "truncated.stl": "solid x\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n",
}


@dataclass
class Mutant:
    """One mutated file: `source` (the original's name), `mutations` (what was done), `path` (the written file),
    and `loaded` (the Articulation or MjcfModel it loaded as; None when it was refused with `error`)."""

    source: str
    mutations: list
    path: Path
    loaded: object = None
    error: Exception | None = None


def sources() -> list:
    """(name, path, kind, package_dirs) of the files to mutate; example-robot-data's when it is installed."""
    found = [
        ("arm6", ASSETS / "arm6.urdf", "urdf", ()),
        ("ant", ASSETS / "mjcf" / "ant.xml", "mjcf", ()),
        ("humanoid", ASSETS / "mjcf" / "humanoid.xml", "mjcf", ()),
    ]
    try:
        from tests.support.models import robot_path, robots_dir

        share = robots_dir().parent.parent  # package://example-robot-data/robots/... resolves from share/
        found += [(n, robot_path(n), "urdf", (share,)) for n in ("ur5", "panda")]
    except pytest.skip.Exception:  # robots_dir() skips when example-robot-data is not installed
        pass
    return found


def _numeric_attrs(root):
    out = []
    for el in root.iter():
        for k, v in el.attrib.items():
            try:
                [float(t) for t in v.split()]
            except ValueError:
                continue
            if v.strip():
                out.append((el, k))
    return out


def _pick(rng, items):
    return items[int(rng.integers(len(items)))] if items else None


def _mutate(rng, root, kind: str) -> str:
    """Apply one random mutation to the tree in place; returns what it did."""
    elements = [el for el in root.iter() if el is not root]
    parent_of = {c: p for p in root.iter() for c in p}
    op = int(rng.integers(10))
    if op == 0:
        el = _pick(rng, elements)
        parent_of[el].remove(el)
        return f"deleted <{el.tag} {el.get('name', '')}>"
    if op == 1:
        el = _pick(rng, [e for e in elements if e.attrib])
        if el is not None:
            k = _pick(rng, sorted(el.attrib))
            del el.attrib[k]
            return f"deleted <{el.tag}> {k}"
    if op in (2, 3, 4):
        picked = _pick(rng, _numeric_attrs(root))
        if picked is not None:
            el, k = picked
            if rng.random() < 0.5:
                el.set(k, _pick(rng, GARBAGE))
            else:  # one number of the list replaced: the count stays right, the value goes bad
                parts = el.get(k).split()
                parts[int(rng.integers(len(parts)))] = _pick(rng, ["nan", "inf", "1e300", "-1e300", "", "x", "1e20"])
                el.set(k, " ".join(parts))
            return f"<{el.tag}> {k}='{el.get(k)}'"
    if op == 5:  # a name reused
        named = [e for e in elements if e.get("name")]
        a, b = _pick(rng, named), _pick(rng, named)
        if a is not None and a.tag == b.tag:
            b.set("name", a.get("name"))
            return f"<{b.tag}> renamed '{a.get('name')}'"
    if op == 6:  # meshes pointing nowhere, at a folder ("." is the file's own) or at a broken mesh file
        target = _pick(rng, [".", "missing/nothing.stl", *BAD_MESHES])
        if kind == "urdf":
            link = _pick(rng, [e for e in elements if e.tag == "link"])
            if link is not None and rng.random() < 0.5:  # a new collision mesh on a link
                col = ET.SubElement(link, "collision")
                ET.SubElement(ET.SubElement(col, "geometry"), "mesh", {"filename": target})
                return f"link '{link.get('name')}' gets mesh '{target}'"
            el = _pick(rng, [e for e in elements if e.tag == "mesh" and e.get("filename")])
            if el is not None:
                el.set("filename", target)
                return f"<mesh> filename='{target}'"
        else:
            body = _pick(rng, [e for e in elements if e.tag == "body"])
            if body is not None:
                asset = root.find("asset")
                if asset is None:
                    asset = ET.SubElement(root, "asset")
                ET.SubElement(asset, "mesh", {"name": "fuzz_mesh", "file": target})
                ET.SubElement(body, "geom", {"type": "mesh", "mesh": "fuzz_mesh"})
                return f"body '{body.get('name')}' gets mesh '{target}'"
    if op == 7 and kind == "urdf":  # cycles: swap a joint's ends, or make a link its own parent
        joint = _pick(
            rng,
            [
                e
                for e in elements
                if e.tag == "joint"
                and e.find("parent") is not None
                and e.find("child") is not None
                and e.find("parent").get("link")
                and e.find("child").get("link")
            ],
        )
        if joint is not None:
            p, c = joint.find("parent"), joint.find("child")
            if rng.random() < 0.5:
                pl, cl = p.get("link"), c.get("link")
                p.set("link", cl)
                c.set("link", pl)
                return f"joint '{joint.get('name')}' parent/child swapped"
            p.set("link", c.get("link"))
            return f"joint '{joint.get('name')}' parent = child"
    if op == 7 and kind == "mjcf":  # class references and compiler settings
        el = _pick(rng, [e for e in elements if e.tag in ("geom", "joint", "body")])
        if el is not None:
            el.set("childclass" if el.tag == "body" else "class", _pick(rng, ["nope", "main", ""]))
            return f"<{el.tag}> class changed"
    if op == 8 and kind == "mjcf":
        bodies = [e for e in elements if e.tag == "body"]
        body = _pick(rng, bodies)
        if body is not None:
            body.insert(
                0,
                ET.Element(
                    _pick(rng, ["freejoint", "joint"]),
                    {"type": _pick(rng, ["free", "hinge", "ball", "slide", "weird"])},
                ),
            )
            return f"joint added to body '{body.get('name')}'"
    if op == 8 and kind == "urdf":
        joint = _pick(rng, [e for e in elements if e.tag == "joint"])
        if joint is not None:
            joint.set("type", _pick(rng, ["floating", "planar", "", "revolute", "continuous", "prismatic", "fixed"]))
            return f"joint '{joint.get('name')}' type='{joint.get('type')}'"
    if op == 9:
        comp = root.find("compiler")
        if kind == "mjcf":
            if comp is None:
                comp = ET.SubElement(root, "compiler")
            key = _pick(rng, ["angle", "eulerseq", "inertiafromgeom", "meshdir"])
            comp.set(key, _pick(rng, ["grad", "radian", "degree", "zyx", "XYZ", "xyy", "true", "false", "/nowhere"]))
            return f"<compiler {key}='{comp.get(key)}'>"
        el = _pick(rng, [e for e in elements if e.tag in ("axis", "origin", "limit", "inertia", "mass")])
        if el is not None:
            k = _pick(rng, sorted(el.attrib)) if el.attrib else "xyz"
            el.set(k, _pick(rng, ["0 0 0", "0 0 1e200", "1e300 1e300 1e300", "1e-320 0 0", "-1e16", "1e16 0 0"]))
            return f"<{el.tag}> {k}='{el.get(k)}'"
    return "no-op"


def _load(path: Path, kind: str, package_dirs):
    if kind == "urdf":
        return artic.load_urdf(path, package_dirs=package_dirs)
    return artic.load_mjcf(path)


def make_mutants(seed: int, count: int, folder=None) -> list:
    """`count` mutants (written under `folder`, a new temporary folder when None), each loaded: `loaded` is set
    when it loads, `error` when it raises. Any exception is kept in `error`; the caller judges it."""
    rng = np.random.default_rng(seed)
    folder = Path(folder if folder is not None else tempfile.mkdtemp(prefix="artic-fuzz-"))
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in BAD_MESHES.items():
        (folder / name).write_text(text)
    srcs = sources()
    trees = {name: ET.parse(path) for name, path, _, _ in srcs}
    mutants = []
    for k in range(count):
        name, src_path, kind, package_dirs = srcs[k % len(srcs)]
        root = copy.deepcopy(trees[name].getroot())
        done = [_mutate(rng, root, kind) for _ in range(1 + int(rng.integers(3)))]
        path = folder / f"{name}_{seed}_{k}{src_path.suffix}"
        ET.ElementTree(root).write(path)
        mutant = Mutant(name, done, path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                mutant.loaded = _load(path, kind, package_dirs)
            except Exception as e:
                mutant.error = e
        mutants.append(mutant)
    return mutants


def load_mutants(seed: int, count: int, folder=None) -> list:
    """The mutants of `make_mutants(seed, count)` that load (each `Mutant.loaded` is an Articulation or an
    MjcfModel), for stepping them and checking that their states stay finite or their NaN envs are reported.
    Raises the first exception that is not an ArticError."""
    mutants = make_mutants(seed, count, folder)
    for m in mutants:
        if m.error is not None and not isinstance(m.error, ArticError):
            raise m.error
    return [m for m in mutants if m.loaded is not None]
