"""The checks of `Scene`'s settings, and the properties that keep the fixed ones fixed (scene.py).

`speculative_contacts` chooses which of PhysX's speculative contacts (surfaces apart, but within the shapes' summed
contact offsets) a step keeps: 'reachable' (the default) only the pairs whose gap the step could close, 'all' every
one, as PhysX does (collision/reach.py).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..description.validate import MAX_MAGNITUDE, as_real, finite
from ..errors import StateError, ValidationError

SPECULATIVE_CONTACTS = ("reachable", "all")


def contact_settings(
    contact_capacity: int, friction_correlation_distance: float, speculative_contacts: str
) -> tuple[int, float, str]:
    """The scene's contact settings checked: (slots per env, friction correlation distance [m], speculative mode)."""
    if isinstance(contact_capacity, bool) or not isinstance(contact_capacity, (int, np.integer)):
        contact_capacity = 0
    if contact_capacity < 1:
        raise ValidationError(f"scene: contact_capacity must be a positive integer, got {contact_capacity!r}")
    try:
        corr = finite("scene", "friction_correlation_distance", friction_correlation_distance)
    except ValidationError:
        corr = float("nan")
    if not np.isfinite(corr) or corr <= 0.0:
        raise ValidationError(
            f"scene: friction_correlation_distance must be a positive length in metres, got "
            f"{friction_correlation_distance!r}"
        )
    if not isinstance(speculative_contacts, str) or speculative_contacts not in SPECULATIVE_CONTACTS:
        raise ValidationError(
            f"scene: speculative_contacts must be 'reachable' (the pairs whose gap a step could close) or 'all' "
            f"(every pair within the contact offsets, as PhysX), got {speculative_contacts!r}"
        )
    return int(contact_capacity), float(corr), speculative_contacts


def as_gravity(value: ArrayLike) -> tuple:
    try:
        g = as_real("scene", "gravity", value)  # float64: scene.gravity reads back what was given
    except ValidationError:
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ValidationError(f"scene: gravity must be 3 finite numbers, got {value!r}")
    if np.abs(g).max() > MAX_MAGNITUDE:
        raise ValidationError(
            f"scene: gravity {tuple(g)} is beyond +-{MAX_MAGNITUDE:g} m/s^2, which float32 "
            "arithmetic cannot simulate; give a physical gravity"
        )
    return tuple(float(x) for x in g)


def fixed(name: str, why: str) -> property:
    """A Scene setting that is read when its arrays are built: reading it works, assigning it raises (it would
    otherwise be ignored by everything already built)."""

    def get(self):
        return getattr(self, "_" + name)

    def refuse(self, value):
        raise StateError(
            f"scene: {name} is fixed at construction ({why}); create a new artic.Scene({name}=...) "
            "instead of assigning it"
        )

    return property(get, refuse, doc=f"Fixed at construction: Scene({name}=...).")


def managed(name: str, what: str, how: str) -> property:
    """A list the scene keeps in step with its blocks: readable, but changed only through its methods (a list
    assigned in its place would be out of step with the arrays)."""

    def get(self):
        return getattr(self, "_" + name)

    def refuse(self, value):
        raise StateError(f"scene: {name} cannot be assigned; {what} of a scene change through {how}")

    return property(get, refuse, doc=f"{what.capitalize()} of the scene (change them through {how}).")
