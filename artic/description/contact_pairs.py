"""Explicit contact pairs (`Articulation.add_contact_pair`, MuJoCo's <contact><pair>): two shapes that collide
whatever their collision groups and masks, the articulation's `disable_collision` pairs, the parent/child rule,
DISABLE_SELF_COLLISION and body joints, with the pair's own material and rest offset. A pair replaces the contacts
the two shapes would make anyway (MuJoCo's explicit pair replaces the dynamic one of the same two geoms)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ValidationError
from .shapes import Material, Shape
from .validate import MAX_MAGNITUDE, finite

if TYPE_CHECKING:
    from .articulation import Articulation


@dataclass(frozen=True, eq=False)
class ContactPair:
    shape_a: Shape  # on a link of the articulation that holds the pair
    shape_b: Shape  # on any link of the scene, or on a RigidStatic
    material: Material | None  # the contact's friction and restitution as given (None: the shapes' combined)
    rest_offset: float  # [m] the contact acts with the surfaces this far apart (negative: this deep), not at touch


def contact_pair(
    art: Articulation, shape_a: Shape, shape_b: Shape, material: Material | None, rest_offset: float
) -> ContactPair:
    """A checked `ContactPair` for articulation `art` (see `Articulation.add_contact_pair`)."""
    owner = art._owner()
    link_a = next((lk for lk in art.get_links() if any(s is shape_a for s in lk.shapes)), None)
    if link_a is None:
        raise ValidationError(
            f"{owner}: add_contact_pair's shape_a must be a shape attached to a link of this "
            f"articulation, got {shape_a.label() if isinstance(shape_a, Shape) else shape_a!r}"
        )
    if not isinstance(shape_b, Shape):
        raise ValidationError(
            f"{owner}: add_contact_pair's shape_b must be an artic shape (of a link or a "
            f"RigidStatic), got {type(shape_b).__name__}"
        )
    if any(s is shape_b for s in link_a.shapes):
        raise ValidationError(
            f"{owner}: add_contact_pair: {shape_a.label()} and {shape_b.label()} are both on link "
            f"'{link_a.name}'; shapes of one link never collide, pair shapes of two bodies"
        )
    if material is not None and not isinstance(material, Material):
        raise ValidationError(
            f"{owner}: add_contact_pair's material must be an artic.Material or None, got {type(material).__name__}"
        )
    rest_offset = finite(owner, "add_contact_pair rest_offset", rest_offset)
    if abs(rest_offset) > MAX_MAGNITUDE:
        raise ValidationError(
            f"{owner}: add_contact_pair's rest_offset must be within +-{MAX_MAGNITUDE:g} m, got {rest_offset:g}"
        )
    return ContactPair(shape_a, shape_b, material, float(rest_offset))
