"""Two compiler rules of MuJoCo's joints that change what artic's joints get, for `load_mjcf`.

* `<joint springdamper="timeconst dampratio">`: MuJoCo's compiler replaces the joint's stiffness and damping by those
  of a mass-spring-damper of that time constant and damping ratio, the mass being the joint's inertia at qpos0:
  I = ndof / sum over its dofs of dof_invweight0 ((M^-1)_dd at qpos0, armature included), stiffness
  I / (timeconst dampratio)^2 and damping 2 I / timeconst (the solref rule; MuJoCo's `AutoSpringDamper`).
  dm_control's dog (its tail) and fruit fly use it. The values replace the joint's PassiveParams after the model's
  masses are final (`apply_spring_dampers`); `<flag spring/damper="disable">` still turns them off, as in MuJoCo.
* `<joint margin>` with soft constraints: MuJoCo's limit row is active while the distance to the range is below the
  margin, and its reference acceleration and impedance depend on (distance - margin) alone (`mj_referenceConstraint`,
  `getimpedance`): exactly a limit at the range shrunk by the margin on each side (`limit_with_margin`). The same
  holds for a fixed tendon's range and margin (couplings.py). Under PhysX's hard rows (`soft_constraints=False`)
  the margin is reported instead (the hard limit acts at the range).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from ...description.articulation_joint import PassiveParams
from ...description.mass_check import dof_inverse_weights

if TYPE_CHECKING:
    from ..xml_values import XmlValues

MIN_VALUE = 1.0e-15  # MuJoCo's mjMINVAL: the floor of the divisors in AutoSpringDamper


def read_spring_damper(v: XmlValues, j: ET.Element, a: dict) -> tuple[float, float] | None:
    """(timeconst, dampratio) of a joint's springdamper, None when absent or "0 0"; a pair with one value not
    positive is refused, as MuJoCo's compiler refuses it."""
    if "springdamper" not in a:
        return None
    tc, dr = (float(x) for x in v.numbers(j, "springdamper", 2, text=a["springdamper"]))
    if tc == 0.0 and dr == 0.0:
        return None
    if tc <= 0.0 or dr <= 0.0:
        raise v.fail(j, f"attribute springdamper='{a['springdamper']}': when given, both values must be positive")
    return tc, dr


def apply_spring_dampers(entries: list, spring: bool, damper: bool) -> None:
    """Set the PassiveParams of each (articulation, joint, axes, (timeconst, dampratio), springref) in `entries`
    from its inertia at the described pose (qpos0); `spring` / `damper`: MuJoCo's flags (False: disabled, 0)."""
    weights = {}
    for art, joint, axes, (tc, dr), springref in entries:
        if id(art) not in weights:
            weights[id(art)] = dof_inverse_weights(art)
        w = weights[id(art)]
        total = sum(w[(joint.child_link, ax)] for ax in axes)
        inertia = len(axes) / max(MIN_VALUE, total)
        stiffness = inertia / max(MIN_VALUE, (tc * dr) ** 2) if spring else 0.0
        damping = 2.0 * inertia / max(MIN_VALUE, tc) if damper else 0.0
        for ax in axes:
            joint.set_passive_params(ax, PassiveParams(stiffness, damping, springref))


def limit_with_margin(v: XmlValues, el: ET.Element, a: dict, rng: tuple[float, float]) -> tuple[float, float]:
    """The range a soft limit with MuJoCo's `margin` acts at: `rng` shrunk by the margin on each side (in radians
    for a hinge whatever the compiler's angle unit: MuJoCo converts the range, not the margin); a margin that would
    close the range is refused (MuJoCo's two limit rows would push against each other)."""
    margin = v.number(el, "margin", text=a.get("margin", "0"))
    lo, hi = rng[0] + margin, rng[1] - margin
    if not lo < hi:
        raise v.fail(el, f"attribute margin='{a['margin']}' closes the range {rng}: give a margin below half of it")
    return lo, hi
