"""`Softness`: MuJoCo's soft-constraint parameters (solref, solimp) for a row that is otherwise hard: a contact
(`Material.softness`), a joint's range (`ArticulationJoint.limit_softness`) or a joint between bodies
(`BodyJoint.softness`). PhysX has no soft contacts or soft limits of this kind, ODE's ERP/CFM are their nearest
relative (the ODE note's implicit-spring equivalence), so the names are MuJoCo's.

What the parameters mean (MuJoCo's "Solver parameters"; the row law is constraints/softness.py):
* solref = (timeconst, dampratio), both > 0: the row's reference acceleration a_ref = -b v - k d r with
  b = 2 / (dmax timeconst), k = 1 / (dmax^2 timeconst^2 dampratio^2), r the row's violation and v its velocity;
  timeconst is raised to twice the step where it is shorter (MuJoCo's refsafe). solref = (-stiffness, -damping),
  both <= 0: k = stiffness / dmax^2, b = damping / dmax directly.
* solimp = (d0, dmax, width, midpoint, power): the impedance d(r) in (0, 1), d0 at no violation rising to dmax at
  |r| >= width along two power curves joined at midpoint. The row's regularizer is R = (1 - d) / d w, w the
  row's approximate inverse effective mass at the reference pose (constraints/softness.py says which).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError
from .validate import finite, refuse_unknown_attribute

DEFAULT_SOLREF = (0.02, 1.0)  # MuJoCo's defaults
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
MIN_IMPEDANCE, MAX_IMPEDANCE = 1e-4, 0.9999  # MuJoCo's mjMINIMP, mjMAXIMP


@dataclass
class Softness:
    """solref and solimp of one soft row (module docstring); checked whenever a field is set."""

    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP

    def __setattr__(self, name, value):
        refuse_unknown_attribute(self, name)
        if name == "solref":
            value = _numbers("solref", value, 2)
            if not ((value[0] > 0.0 and value[1] > 0.0) or (value[0] <= 0.0 and value[1] <= 0.0)):
                raise ValidationError(
                    f"softness: solref must be (timeconst > 0, dampratio > 0) or (-stiffness <= 0, -damping <= 0), "
                    f"got {value}"
                )
            if value == (0.0, 0.0):
                raise ValidationError(
                    "softness: solref (0, 0) is neither stiff nor damped; leave softness None for a hard row"
                )
        elif name == "solimp":
            value = _numbers("solimp", value, 5)
            d0, dmax, width, mid, power = value
            if not (0.0 < d0 <= 1.0 and 0.0 < dmax <= 1.0):  # used clamped to [MIN_IMPEDANCE, MAX_IMPEDANCE]
                raise ValidationError(f"softness: solimp's d0 and dmax must be in (0, 1], got {d0:g}, {dmax:g}")
            if width < 0.0 or not 0.0 <= mid <= 1.0 or power < 1.0:
                raise ValidationError(
                    f"softness: solimp needs width >= 0, midpoint in [0, 1] and power >= 1, got {value}"
                )
        object.__setattr__(self, name, value)


def _numbers(what: str, value, n: int) -> tuple:
    try:
        items = list(value)
    except TypeError:
        raise ValidationError(f"softness: {what} must be {n} numbers, got {value!r}") from None
    if len(items) != n:
        raise ValidationError(f"softness: {what} must be {n} numbers, got {len(items)}")
    return tuple(finite("softness", what, v) for v in items)


def check_softness(owner: str, value: object) -> Softness | None:
    """None (a hard row) or a Softness, refused otherwise with the owner's name."""
    if value is None or isinstance(value, Softness):
        return value
    raise ValidationError(f"{owner}: softness must be an artic Softness or None, got {type(value).__name__}")


def softness_row(s: Softness | None) -> list:
    """The 7 numbers the device rows carry: solref then solimp; all zeros for a hard row."""
    if s is None:
        return [0.0] * 7
    return [*s.solref, *s.solimp]


# ODE's ERP and CFM and the implicit spring-damper they stand for (body joints' set_erp_cfm and get_erp_cfm)
def erp_cfm_from_spring(stiffness: float, damping: float, dt: float) -> tuple[float, float]:
    """ODE's (ERP, CFM) of an implicit spring-damper at time step dt (the ODE paper, eq. 13):
    ERP = dt k / (dt k + d), CFM = 1 / (dt k + d). CFM is in ODE's force units, so the impulse-level softness is
    CFM / dt. k = inf (compliance 0) gives (1, 0)."""
    k, d, h = float(stiffness), float(damping), float(dt)
    if np.isinf(k):
        return 1.0, 0.0
    s = h * k + d
    return h * k / s, 1.0 / s


def spring_from_erp_cfm(erp: float, cfm: float, dt: float) -> tuple[float, float]:
    """The inverse of erp_cfm_from_spring: (stiffness, damping) = (ERP / (dt CFM), (1 - ERP) / CFM)."""
    erp, cfm, h = float(erp), float(cfm), float(dt)
    if cfm == 0.0:
        return np.inf, np.inf
    return erp / (h * cfm), (1.0 - erp) / cfm
