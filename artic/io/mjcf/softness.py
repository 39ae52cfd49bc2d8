"""MuJoCo's solref / solimp read as artic `Softness` (description/softness.py), for geoms and pairs (contacts),
joint ranges (solreflimit / solimplimit) and equalities, when `load_mjcf(..., soft_constraints=True)` (the default).

Values as MuJoCo's: missing attributes take the element's class or MuJoCo's built-in defaults (solref 0.02 1,
solimp 0.9 0.95 0.001 0.5 2); a solimp of 3 or 4 numbers keeps the built-in midpoint and power for the rest, as
MuJoCo's parser does; solimp's d0 and dmax are clamped to [1e-4, 0.9999], as MuJoCo clamps the impedance.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from ...description.softness import DEFAULT_SOLIMP, DEFAULT_SOLREF, MAX_IMPEDANCE, MIN_IMPEDANCE, Softness
from ...errors import ArticError

if TYPE_CHECKING:
    from ..xml_values import XmlValues

BUILTIN = {"solref": " ".join(map(str, DEFAULT_SOLREF)), "solimp": " ".join(map(str, DEFAULT_SOLIMP))}


def read_softness(v: XmlValues, el: ET.Element, a: dict, ref: str = "solref", imp: str = "solimp") -> Softness:
    """The Softness of element `el` from its attributes with defaults applied (`a`); `ref` and `imp` name its
    solref and solimp attributes (a joint's range: solreflimit, solimplimit)."""
    solref = v.numbers(el, ref, 2, text=a.get(ref, BUILTIN["solref"]))
    solimp = list(v.numbers(el, imp, (3, 5), text=a.get(imp, BUILTIN["solimp"])))
    solimp += list(DEFAULT_SOLIMP[len(solimp) :])
    solimp[0] = min(max(solimp[0], MIN_IMPEDANCE), MAX_IMPEDANCE)
    solimp[1] = min(max(solimp[1], MIN_IMPEDANCE), MAX_IMPEDANCE)
    try:
        return Softness(tuple(float(x) for x in solref), tuple(float(x) for x in solimp))
    except ArticError as e:
        raise v.fail(el, f"attributes {ref}/{imp}: {e}") from None
