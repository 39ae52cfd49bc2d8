"""<contact><pair geom1 geom2>: MuJoCo's explicit contact pairs as artic's (`Articulation.add_contact_pair`).

MuJoCo collides the two geoms whatever their contype/conaffinity, <exclude> and the parent filter, and the pair
replaces the dynamic contact of the same two geoms (other geoms of their bodies collide as before; the
<option><flag contact='disable'> switch turns pairs off too). The pair's parameters are its own (its attributes over
its <default><pair> class over MuJoCo's built-ins, never the geoms'):
* friction: the first (sliding) value, in both directions (`Material`); condim 1 is friction 0, condim 3 Coulomb
  friction, condim 4 and 6 add the torsional and rolling values (geoms.angular_friction); anisotropic sliding
  friction is reported.
* margin: MuJoCo's contact acts once the geoms are closer than the pair's margin (instead of the sum of the geoms'
  margins). artic has grown each shape by its geom's margin (geoms.py `_grow`), or given a mesh, which cannot grow,
  its margin as a rest offset that the pair's adds to, so the pair's rest offset is the pair's margin less the two
  geoms' margins; gap other than 0 is reported, as for geoms.
* solref, solimp: the pair's soft contact (io/mjcf/softness.py) with soft constraints on (the default), reported
  otherwise; solreffriction (soft friction) is reported: artic's friction is Coulomb's box.
A pair of two geoms of one body (one link) or of two <worldbody> geoms acts on nothing, in MuJoCo too: it is skipped.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...description.shapes import Material
from .geoms import angular_friction, soft_material

if TYPE_CHECKING:
    from .loader import _Loader

BUILTIN = {"condim": "3", "friction": "1 1 0.005 0.0001 0.0001", "margin": "0", "gap": "0"}  # MuJoCo's
_READ = {"name", "class", "geom1", "geom2", "condim", "friction", "margin", "gap"}
_SOFT = {"solref", "solimp"}  # read when soft constraints are on
_REASON = {
    "solref": "soft constraints are off (soft_constraints=False)",
    "solimp": "soft constraints are off (soft_constraints=False)",
    "solreffriction": "artic's friction is Coulomb's box, not a soft row",
    "gap": "contacts act from the margin on",
    "friction": "the first (sliding) friction acts in both tangent directions",
}


def read_pairs(mj: _Loader, elements: Iterable[ET.Element]) -> None:
    """Add the explicit pairs `elements` (<pair> elements of <contact>) of importer `mj` (loader.py's, after its
    bodies) to the articulations; bad names raise the file's error, unused attributes warn once per kind."""
    v = mj.v
    owners = {}  # id(shape): (articulation, link) of every link shape; world geoms have none
    for art in mj.model.articulations:
        for link in art.get_links():
            for s in link.shapes:
                owners[id(s)] = (art, link)
    dropped = {}  # attribute: [count, first element]
    for el in elements:
        a = mj._attrs(el, "main")
        ends = []
        for attr in ("geom1", "geom2"):
            name = el.get(attr)
            if name is None:
                raise v.fail(el, f"needs attribute {attr} naming a geom")
            if name in mj.geom_repeated:
                raise v.fail(el, f"attribute {attr}='{name}' names several geoms; geom names must be unique")
            if name not in mj.geoms:
                raise v.fail(el, f"attribute {attr}='{name}' names no geom of the model; name a <geom name=...>")
            ends.append(mj.geoms[name])
        if el.get("geom1") == el.get("geom2"):
            raise v.fail(
                el,
                f"attributes geom1 and geom2 both name geom '{el.get('geom1')}': a geom cannot collide "
                "with itself; name two different geoms",
            )
        condim = v.choice(el, "condim", a["condim"].strip(), ("1", "3", "4", "6"))
        friction = v.numbers(el, "friction", (1, 5), text=a["friction"])
        if friction.min() < 0.0:
            raise v.fail(el, f"attribute friction='{a['friction']}' must not be negative")
        margin = v.number(el, "margin", text=a["margin"], minimum=0.0)
        for attr in set(a) - _READ - (_SOFT if mj.opts.soft else set()):
            dropped.setdefault(attr, [0, el])[0] += 1
        if v.number(el, "gap", text=a["gap"], minimum=0.0) != 0.0:
            dropped.setdefault("gap", [0, el])[0] += 1
        if condim != "1" and len(friction) > 1 and friction[1] != friction[0]:
            dropped.setdefault("friction", [0, el])[0] += 1
        if not mj.opts.contact:  # <flag contact='disable'>: no contacts at all, pairs included
            continue
        (shape1, grown1), (shape2, grown2) = ends
        if id(shape1) not in owners:
            (shape1, grown1), (shape2, grown2) = (shape2, grown2), (shape1, grown1)
        if id(shape1) not in owners or (id(shape2) in owners and owners[id(shape2)][1] is owners[id(shape1)][1]):
            continue  # two world geoms or two geoms of one link: the contact would act on nothing
        mu = 0.0 if condim == "1" else float(friction[0])
        with v.context(el):
            material = Material(mu, mu, 0.0, friction_combine="max", condim=int(condim))
            label = el.get("name") or f"{el.get('geom1')}-{el.get('geom2')}"
            angular_friction(mj, material, condim, friction[2:], label)
            if mj.opts.soft:
                soft_material(mj, material, el, a)
            owners[id(shape1)][0].add_contact_pair(shape1, shape2, material, margin - grown1 - grown2)
    for attr, (count, el) in dropped.items():
        why = f" ({_REASON[attr]})" if attr in _REASON else ""
        warnings.warn(
            f"{v.where(el)}: <pair> attribute {attr} is not followed by artic{why}; {count} occurrence(s) "
            "in the model, this is the first",
            RuntimeWarning,
            stacklevel=4,
        )


def collide_with_world_parents(mj: _Loader) -> None:
    """MuJoCo's parent filter spares a body whose parent is welded to the world (an arm's first link and its base),
    where artic's links never collide with their parent link: each such geom pair that contype/conaffinity let
    collide, not excluded (<exclude>) nor already an explicit <pair>, becomes an explicit contact pair with the
    geoms' own materials (MuJoCo's mixing, as any dynamic contact)."""
    if not mj.opts.contact:
        return
    for art, link, parent in mj.world_parents:
        if frozenset((link, parent)) in art.collision_filters:
            continue
        paired = {frozenset((id(p.shape_a), id(p.shape_b))) for p in art.contact_pairs}
        for a in link.shapes:
            for b in parent.shapes:
                if frozenset((id(a), id(b))) in paired:
                    continue
                if (a.collision_group & b.collision_mask) or (b.collision_group & a.collision_mask):
                    art.add_contact_pair(a, b)
