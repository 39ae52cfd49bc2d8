"""`Deadzone`: a controller with a band of zero force and an optional secondary target (the ODE paper, end of
section S1: target manifolds, deadzone controllers, constraints with secondary targets).

On an articulation axis (`ArticulationJoint.set_deadzone`) or a body joint's coordinate (`JointBase.set_deadzone`):
* while the coordinate q stays within [low, high] the controller applies no force;
* beyond the band it is the implicit spring f = -k (q' - edge) - d v' towards the crossed edge (q', v' at the end of
  the step, the ODE paper's eq. 13), which only pushes back and is capped at max_force;
* with a secondary target s in [low, high] and secondary gains, a step that starts inside the band also pursues s
  with the implicit spring (k2, d2), capped at secondary_max_force: the coordinate uses its freedom inside the band
  for a second goal, while the band's edges stay the primary condition (the cap keeps the secondary spring weaker
  than what the edges can apply).
Only SolverType.DIRECT solves these rows (each is a one-sided or boxed soft row of its bounded mLCP); a scene that
steps one with PGS or TGS raises an ArticError. With damping d > 0 the edge rows also act inside the band when q
approaches an edge faster than k / d times its distance from it (the damper of the same implicit spring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ValidationError
from .validate import KnownAttributes


@dataclass
class Deadzone(KnownAttributes):
    """Band [low, high] (rad or m), edge gains stiffness [N/m or N m/rad] and damping, max_force [N or N m]; an
    optional secondary_target inside the band with its own gains and force cap (secondary_max_force 0: none)."""

    low: float
    high: float
    stiffness: float
    damping: float = 0.0
    max_force: float = math.inf
    secondary_target: float = 0.0
    secondary_stiffness: float = 0.0
    secondary_damping: float = 0.0
    secondary_max_force: float = 0.0


def checked_deadzone(owner: str, value: Deadzone) -> Deadzone:
    """A validated copy of `value` (an artic.Deadzone), or an ArticError naming `owner` and the field."""
    if not isinstance(value, Deadzone):
        raise ValidationError(f"{owner}: set_deadzone takes an artic.Deadzone, got {type(value).__name__}")
    fields = {}
    for name in (
        "low",
        "high",
        "stiffness",
        "damping",
        "max_force",
        "secondary_target",
        "secondary_stiffness",
        "secondary_damping",
        "secondary_max_force",
    ):
        v = getattr(value, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
            raise ValidationError(f"{owner}: deadzone {name} must be a number, got {v!r}")
        fields[name] = float(v)
    for name in ("low", "high", "secondary_target"):
        if not math.isfinite(fields[name]) or abs(fields[name]) > 1e15:
            raise ValidationError(f"{owner}: deadzone {name} must be finite, got {fields[name]}")
    if fields["low"] > fields["high"]:
        raise ValidationError(f"{owner}: deadzone low {fields['low']} > high {fields['high']}; give low <= high")
    for name in (
        "stiffness",
        "damping",
        "max_force",
        "secondary_stiffness",
        "secondary_damping",
        "secondary_max_force",
    ):
        if fields[name] < 0.0 or (name != "max_force" and not math.isfinite(fields[name])):
            raise ValidationError(f"{owner}: deadzone {name} must be finite and >= 0, got {fields[name]}")
    if fields["stiffness"] == 0.0 and fields["damping"] == 0.0:
        raise ValidationError(f"{owner}: a deadzone needs stiffness or damping > 0 (both are 0)")
    if fields["secondary_max_force"] > 0.0:
        if not fields["low"] <= fields["secondary_target"] <= fields["high"]:
            raise ValidationError(
                f"{owner}: deadzone secondary_target {fields['secondary_target']} lies outside "
                f"[{fields['low']}, {fields['high']}]; a secondary target must be inside the band"
            )
        if fields["secondary_stiffness"] == 0.0 and fields["secondary_damping"] == 0.0:
            raise ValidationError(
                f"{owner}: deadzone secondary_max_force > 0 needs secondary_stiffness or secondary_damping > 0"
            )
    return Deadzone(**fields)
