"""What `load_mjcf` does not use, reported: one warning per kind (an element, or an element's attribute), naming it,
how many times it occurs and where it first does (issue 15: never silent about dropped MJCF content).

`USED` lists, per MJCF element, the attributes artic reads (supported as MuJoCo reads them, or mapped: see
docs/mjcf.md). Everything else found in the include-expanded tree is reported, in two ways:
* content that changes the dynamics in MuJoCo (joint margin, geom gap, an unknown element...) gives one
  RuntimeWarning per kind;
* content with no effect on the simulated dynamics (`NO_DYNAMICS`: visual, sensing, a keyframe's act, sites (they
  matter only where a tendon, an equality or an actuator names them, and those read them), cameras, lights, geom
  colors) is listed in ONE summary warning, so that a model's hundred rgba attributes do not flood.
An ignored attribute at a value that asks for what artic does anyway (`MATCHING`: condim 3, gap 0...) is not
reported.
Subtrees read and reported by their own code are skipped (`OWNED`): <option> (options.py), <contact>,
<tendon>, <equality>, <actuator> and their <default> counterparts (loader.py and its coupling and actuator modules).
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..xml_values import XmlValues

_ORIENT = {"quat", "axisangle", "euler", "xyaxes", "zaxis"}
# per element: the attributes artic reads (loader.py, mass.py); "class" selects defaults and "name" identifies
USED = {
    "mujoco": {"model"},
    "compiler": {
        "angle",
        "eulerseq",
        "meshdir",
        "assetdir",
        "inertiafromgeom",
        "autolimits",
        "coordinate",
        "inertiagrouprange",
        "boundmass",
        "boundinertia",
        "settotalmass",
        "balanceinertia",
        "fitaabb",
    },
    "lengthrange": {  # lengthrange.py
        "mode",
        "useexisting",
        "uselimit",
        "accel",
        "maxforce",
        "timeconst",
        "timestep",
        "inttotal",
        "interval",
        "tolrange",
    },
    "default": {"class"},
    "asset": set(),
    "mesh": {"name", "class", "file", "scale", "inertia", "maxhullvert", "vertex", "face"},
    "hfield": {"name", "nrow", "ncol", "size", "elevation", "file"},
    "worldbody": set(),
    "body": {"name", "childclass", "pos", "gravcomp", "mocap"} | _ORIENT,
    "inertial": {"pos", "mass", "diaginertia", "fullinertia"} | _ORIENT,
    "keyframe": set(),
    "key": {"name", "time", "qpos", "qvel", "ctrl", "act", "mpos", "mquat"},  # keyframes.py
    "joint": {
        "name",
        "actuatorfrcrange",
        "actuatorfrclimited",
        "actuatorgravcomp",
        "class",
        "type",
        "pos",
        "axis",
        "range",
        "limited",
        "ref",
        "damping",
        "armature",
        "frictionloss",
        "stiffness",
        "springref",
        "springdamper",
    },
    "freejoint": {"name"},
    "geom": {
        "name",
        "class",
        "type",
        "size",
        "fromto",
        "pos",
        "mesh",
        "friction",
        "priority",
        "margin",
        "contype",
        "conaffinity",
        "mass",
        "density",
        "shellinertia",
        "group",
        "hfield",
        "fitscale",
    }
    | _ORIENT,
}
# read only with soft constraints on (load_mjcf's soft_constraints): MuJoCo's soft contacts and limits
SOFT_USED = {
    "geom": {"solref", "solimp", "solmix", "gap"},
    "joint": {"solreflimit", "solimplimit", "margin", "solreffriction", "solimpfriction"},
}
# sections, and the <default> children of their elements, read and reported elsewhere
OWNED = {
    "option",
    "contact",
    "tendon",
    "equality",
    "actuator",
    "pair",
    "motor",
    "position",
    "velocity",
    "general",
    "intvelocity",
    "damper",
    "cylinder",
    "muscle",
    "adhesion",
}
# content without effect on the simulated dynamics: whole elements (by tag) and attributes ("tag attr")
NO_DYNAMICS = {
    "visual",
    "statistic",
    "size",
    "sensor",
    "custom",
    "site",
    "camera",
    "light",
    "texture",
    "material",
    "skin",
    "geom rgba",
    "geom material",
    "geom user",
    "body user",
    "joint user",
    "joint group",
    "freejoint group",
    "compiler texturedir",
    "compiler usethread",
    "compiler discardvisual",
    "mesh smoothnormal",
}
# attributes whose value here asks for what artic does anyway (MuJoCo's defaults that change nothing artic lacks:
# condim 3 is sliding friction only, as artic's contacts, condim 1 none, mapped as friction 0): not reported there
MATCHING = {
    "geom condim": ("1", "3", "4", "6"),  # 4, 6: torsional and rolling friction (geoms.angular_friction)
    "geom gap": ("0",),
    "geom solmix": ("1",),
    "joint margin": ("0",),
}
# why some physics kinds are not used: said in their warning
REASON = {
    "geom solref": "soft constraints are off (soft_constraints=False): contacts are PhysX's hard ones",
    "geom solimp": "soft constraints are off (soft_constraints=False): contacts are PhysX's hard ones",
    "geom solmix": "soft constraints are off (soft_constraints=False): contacts are PhysX's hard ones",
    "geom gap": "soft constraints are off (soft_constraints=False): contacts are found within 2 cm",
    "joint solreflimit": "soft constraints are off (soft_constraints=False): limits are PhysX's hard limits",
    "joint solimplimit": "soft constraints are off (soft_constraints=False): limits are PhysX's hard limits",
    "joint margin": "soft constraints are off (soft_constraints=False): hard limits act at the range itself",
}


def report_unused(root: ET.Element, v: XmlValues, soft: bool = False) -> None:
    """Warn about every element and attribute of `root` (an include-expanded <mujoco>) that `USED` does not list
    (and, with soft constraints on, `SOFT_USED`); `v` (an `XmlValues` of the file) names the first occurrence of
    each kind."""
    found = {}  # kind: [count, first element]
    used = {tag: attrs | (SOFT_USED.get(tag, set()) if soft else set()) for tag, attrs in USED.items()}

    def note(kind, el):
        entry = found.setdefault(kind, [0, el])
        entry[0] += 1

    def walk(el):
        for child in el:
            if child.tag in OWNED:
                continue
            if child.tag not in used:
                note(child.tag, child)  # one kind for the element: its attributes and content go with it
                continue
            for attr in child.attrib:
                kind = f"{child.tag} {attr}"
                if attr not in used[child.tag] and child.get(attr).strip() not in MATCHING.get(kind, ()):
                    note(kind, child)
            walk(child)

    walk(root)
    for attr in root.attrib:
        if attr not in USED["mujoco"]:
            note(f"mujoco {attr}", root)
    quiet = []
    for kind, (count, el) in found.items():
        what = f"<{kind}>" if " " not in kind else "<{}> attribute {}".format(*kind.split(" "))
        if kind in NO_DYNAMICS:
            quiet.append(f"{what} ({count})")
            continue
        why = f" ({REASON[kind]})" if kind in REASON else ""
        warnings.warn(
            f"{v.where(el)}: {what} is not used by artic and is ignored{why}; {count} occurrence(s) in "
            "the model, this is the first",
            RuntimeWarning,
            stacklevel=3,
        )
    if quiet:
        warnings.warn(
            f"MJCF file '{v.path}': not used by artic, without effect on the simulated dynamics (visual, "
            f"sensing, keyframes, markers): {', '.join(quiet)}",
            RuntimeWarning,
            stacklevel=3,
        )


def and_more(v: XmlValues, elements: list[ET.Element]) -> str:
    """What a warning said for the first of `elements` adds about the others: how many, naming the next three
    (one warning per kind, not one per element: a hand's 64 tendons or 20 actuators)."""
    if not elements:
        return ""
    names = ", ".join(v.describe(e) for e in elements[:3])
    return f" (and {len(elements)} more like it: {names}{', ...' if len(elements) > 3 else ''})"
