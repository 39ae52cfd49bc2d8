"""Mimic joints and fixed and spatial tendons: descriptions that couple dofs or links of one articulation.

* `MimicJoint` (the mimic-joint note; physx-notes 1): C = q_A + G q_B + gamma = 0, or the N-dof extension
  C = q_0 + G_1 q_1 + ... + gamma, or a polynomial in q_B (MuJoCo's polycoef). Hard by default; compliant when
  natural_frequency > 0 and damping_ratio > 0 (PhysX's rule), or MuJoCo-soft when given a `Softness` (an MJCF
  joint or tendon equality's solref/solimp).
* `FixedTendon` (physx-notes 5.3): a tree of tendon joints; length L = offset + sum c_i q_i over the non-root tendon
  joints, pulled to rest_length by an implicit spring, with optional limits (PhysX's limit spring, or MuJoCo-soft).
* `SpatialTendon` (physx-notes 5.4): a tree of attachment points on links; each leaf's path length is pulled to
  its rest length.
All are created and released only while the articulation is out of a scene (PhysX's rule); their scalar
parameters may change between steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..enums import AXIS_NAMES, Axis, JointType, Motion
from ..errors import TopologyError, ValidationError
from ..math.np_spatial import Transform
from .softness import Softness, check_softness
from .validate import KnownAttributes

if TYPE_CHECKING:
    from .articulation import Articulation, Link
    from .articulation_joint import Joint

_MAX_F32 = float(np.finfo(np.float32).max)


def _number(owner: str, what: str, value, nonneg=False) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{owner}: {what} must be a number, got {value!r}") from None
    if not np.isfinite(value) and abs(value) != _MAX_F32:
        raise ValidationError(f"{owner}: {what} must be finite, got {value}")
    if nonneg and value < 0.0:
        raise ValidationError(f"{owner}: {what} must be >= 0, got {value}")
    return value


class _Coupling(KnownAttributes):
    """Shared plumbing: the owning articulation, release, and parameter setters that notify the scene."""

    kind = "coupling"

    def __init__(self, articulation):
        self.articulation = articulation
        self._released = False

    def _owner(self) -> str:
        return f"{self.kind} of articulation '{self.articulation.name}'"

    def _set(self, attr: str, value, nonneg=False):
        setattr(self, "_" + attr, _number(self._owner(), attr, value, nonneg))
        self.articulation._changed("model")

    def release(self):
        """Remove it from its articulation (only while the articulation is out of a scene)."""
        self.articulation._check_topology_change(self._owner(), "release")
        if not self._released:
            self.articulation._couplings.remove(self)
            self._released = True
            self.articulation._changed("topology")


def _param(name: str, doc: str, nonneg=False):
    def get(self):
        return getattr(self, "_" + name)

    def set_(self, value):
        self._set(name, value, nonneg)

    return property(get, set_, doc=doc)


def _check_dof(owner: str, articulation, joint, axis, routing: bool = False) -> Axis:
    """The axis, checked; `routing`: a tendon joint of coefficient 0, which only carries the tendon's tree past its
    link (MuJoCo's fixed tendons skip joints, and the links between may be welded), may use a LOCKED axis."""
    if joint is None or getattr(joint, "articulation", None) is not articulation:
        raise ValidationError(f"{owner}: every joint must belong to articulation '{articulation.name}'")
    try:
        axis = Axis(axis)
    except ValueError:
        raise ValidationError(f"{owner}: unknown axis {axis!r}") from None
    if joint.get_motion(axis) == Motion.LOCKED and not routing:
        raise ValidationError(
            f"{owner}: axis {axis.name} of joint '{joint.name}' is LOCKED; a coupled dof must be FREE or LIMITED"
        )
    return axis


class MimicJoint(_Coupling):
    """q_A + sum_i G_i q_i + offset = 0 over one or more dofs (`terms`: (joint, axis, G), the first G is 1)."""

    kind = "mimic joint"

    def __init__(
        self,
        articulation: Articulation,
        terms: Iterable[tuple[Joint, Axis, float]],
        offset: float,
        natural_frequency: float,
        damping_ratio: float,
        polynomial: Iterable[float] = (0.0, 0.0, 0.0, 0.0),
    ):
        super().__init__(articulation)
        owner = self._owner()
        checked = []
        curved = any(_number(owner, "polynomial", k) != 0.0 for k in list(polynomial)[1:])
        for joint, axis, g in terms:
            axis = _check_dof(owner, articulation, joint, axis)
            g = _number(owner, "gear ratio", g)
            if g == 0.0 and not (curved and len(checked) == 1):  # q_B may enter through the polynomial alone
                raise ValidationError(f"{owner}: gear ratio of joint '{joint.name}' axis {axis.name} must be non-zero")
            if any(j is joint and a == axis for j, a, _ in checked):
                raise ValidationError(
                    f"{owner}: joint '{joint.name}' axis {axis.name} appears twice; a dof cannot be coupled to itself"
                )
            checked.append((joint, axis, g))
        if len(checked) < 2:
            raise ValidationError(f"{owner}: needs at least two dofs")
        self.terms = checked
        self._offset = _number(owner, "offset", offset)
        self._natural_frequency = _number(owner, "natural_frequency", natural_frequency)
        self._damping_ratio = _number(owner, "damping_ratio", damping_ratio)
        self._softness = None
        self._soft_weight = None
        self._polynomial = (0.0, 0.0, 0.0, 0.0)
        self.polynomial = polynomial

    @property
    def joint_a(self) -> Joint:
        return self.terms[0][0]

    @property
    def axis_a(self) -> Axis:
        return self.terms[0][1]

    @property
    def joint_b(self) -> Joint:
        return self.terms[1][0]

    @property
    def axis_b(self) -> Axis:
        return self.terms[1][1]

    @property
    def gear_ratio(self) -> float:
        """G of the second dof (the two-dof form); `terms` holds every G of an N-dof mimic joint."""
        return self.terms[1][2]

    @gear_ratio.setter
    def gear_ratio(self, value: float):
        g = _number(self._owner(), "gear_ratio", value)
        if g == 0.0 and not any(self._polynomial[1:]):
            raise ValidationError(f"{self._owner()}: gear_ratio must be non-zero (or q_B enter through a polynomial)")
        j, a, _ = self.terms[1]
        self.terms[1] = (j, a, g)
        self.articulation._changed("model")

    offset = _param("offset", "gamma in q_A + G q_B + gamma = 0.")
    natural_frequency = _param("natural_frequency", "Compliance natural frequency mu [1/s]; <= 0: hard.")
    damping_ratio = _param("damping_ratio", "Compliance damping ratio zeta; <= 0: hard (>= 1 recommended).")

    @property
    def softness(self) -> Softness | None:
        """MuJoCo's solref/solimp for the row C = 0 (constraints/softness.py's law, in every solver), or None: hard,
        or PhysX's compliance when natural_frequency and damping_ratio are > 0. The two are exclusive."""
        return self._softness

    @softness.setter
    def softness(self, value: Softness | None):
        value = check_softness(self._owner(), value)
        if value is not None and self._natural_frequency > 0.0 and self._damping_ratio > 0.0:
            raise ValidationError(
                f"{self._owner()}: has a PhysX compliance (natural_frequency {self._natural_frequency:g}, "
                f"damping_ratio {self._damping_ratio:g}); set both to 0 before giving it a MuJoCo softness"
            )
        self._softness = value
        self.articulation._changed("model")

    @property
    def soft_weight(self) -> float | None:
        """The approximate inverse effective mass a soft row's regularizer is scaled by [1/kg, 1/(kg m^2)]; None:
        MuJoCo's rule for a joint equality, the sum of the coupled dofs' (M^-1)_dd at the described pose. An MJCF
        tendon equality sets the sum of its tendons' J M^-1 J^T instead."""
        return self._soft_weight

    @soft_weight.setter
    def soft_weight(self, value: float | None):
        if value is not None:
            value = _number(self._owner(), "soft_weight", value, nonneg=True)
        self._soft_weight = value
        self.articulation._changed("model")

    @property
    def polynomial(self) -> tuple[float, float, float, float]:
        """(x0, k2, k3, k4): C gains k2 x^2 + k3 x^3 + k4 x^4 with x = q_B - x0 (a two-dof mimic joint only; MuJoCo's
        polycoef beyond the linear term). Zeros (the default): the linear coupling. The row's direction is then
        dC/dq at the current q_B, so it turns with the coupled dof."""
        return self._polynomial

    @polynomial.setter
    def polynomial(self, value: Iterable[float]):
        owner = self._owner()
        try:
            items = [_number(owner, "polynomial", v) for v in value]
        except TypeError:
            raise ValidationError(f"{owner}: polynomial must be 4 numbers (x0, k2, k3, k4), got {value!r}") from None
        if len(items) != 4:
            raise ValidationError(f"{owner}: polynomial must be 4 numbers (x0, k2, k3, k4), got {len(items)}")
        if any(items[1:]) and len(self.terms) != 2:
            raise ValidationError(f"{owner}: a polynomial couples two dofs; this mimic joint has {len(self.terms)}")
        if not any(items[1:]) and self.terms[1][2] == 0.0:
            raise ValidationError(f"{owner}: its gear ratio is 0, so q_B enters through the polynomial; keep one")
        self._polynomial = tuple(items)
        self.articulation._changed("model")

    def set_gear_ratio(self, g: float) -> None:
        self.gear_ratio = g

    def set_offset(self, offset: float) -> None:
        self.offset = offset

    def set_natural_frequency(self, mu: float) -> None:
        self.natural_frequency = mu

    def set_damping_ratio(self, zeta: float) -> None:
        self.damping_ratio = zeta


class _Tendon(_Coupling):
    stiffness = _param("stiffness", "Spring stiffness towards the rest length [N/m or Nm/rad].", nonneg=True)
    damping = _param("damping", "Damping of the rest-length spring, also used by the limit spring.", nonneg=True)
    limit_stiffness = _param("limit_stiffness", "Stiffness of the limit spring (0: limits off).", nonneg=True)
    offset = _param("offset", "Added to the tendon length; change it (or the rest length) to actuate.")

    def __init__(self, articulation):
        super().__init__(articulation)
        self._stiffness = self._damping = self._limit_stiffness = self._offset = 0.0


class TendonJoint(KnownAttributes):
    """One node of a fixed tendon: an axis of `link`'s inbound joint with coefficient c and recip coefficient."""

    def __init__(
        self,
        tendon: FixedTendon,
        parent: TendonJoint | None,
        axis: Axis,
        coefficient: float,
        recip_coefficient: float,
        link: Link,
    ):
        self.tendon, self.parent, self.link = tendon, parent, link
        self.axis, self.coefficient, self.recip_coefficient = axis, coefficient, recip_coefficient
        self.children: list[TendonJoint] = []


class FixedTendon(_Tendon):
    """`PxArticulationFixedTendon`. The root tendon joint's axis and coefficient are ignored: its link receives the
    reaction of every other tendon joint's force (physx-notes 5.3)."""

    kind = "fixed tendon"

    def __init__(self, articulation: Articulation):
        super().__init__(articulation)
        self.tendon_joints: list[TendonJoint] = []
        self._rest_length = 0.0
        self._limit_low, self._limit_high = _MAX_F32, -_MAX_F32  # PhysX's (inverted) defaults: no limits
        self._limit_softness = None

    rest_length = _param("rest_length", "Length the spring pulls L = offset + sum c_i q_i to.")

    def set_limit_parameters(self, low: float, high: float) -> None:
        owner = self._owner()
        low, high = _number(owner, "limit low", low), _number(owner, "limit high", high)
        if low > high:
            raise ValidationError(f"{owner}: limit low {low} > high {high}")
        self._limit_low, self._limit_high = low, high
        self.articulation._changed("model")

    def get_limit_parameters(self) -> tuple[float, float]:
        return self._limit_low, self._limit_high

    @property
    def limit_softness(self) -> Softness | None:
        """MuJoCo's solreflimit/solimplimit for the limits, or None: PhysX's limit spring (limit_stiffness). Soft,
        each limit is a one-sided row on L beyond it with constraints/softness.py's law, scaled by MuJoCo's
        tendon_invweight0 (J M^-1 J^T at the described pose, J = sum c_i e_i), and limit_stiffness is not used."""
        return self._limit_softness

    @limit_softness.setter
    def limit_softness(self, value: Softness | None):
        self._limit_softness = check_softness(self._owner(), value)
        self.articulation._changed("model")

    def acting_joints(self) -> list[TendonJoint]:
        """The tendon joints below the root that have a dof: all but the coefficient-0 ones on a LOCKED axis, which
        only route the tendon past a welded link. These are the tendon's solver rows."""
        return [
            tj
            for tj in self.tendon_joints[1:]
            if tj.coefficient != 0.0 or tj.link.inbound_joint.get_motion(tj.axis) != Motion.LOCKED
        ]

    def create_tendon_joint(
        self, parent: TendonJoint | None, axis: Axis, coefficient: float, recip_coefficient: float, link: Link
    ) -> TendonJoint:
        owner = self._owner()
        self.articulation._check_topology_change(owner, "create_tendon_joint")
        if link is None or link.articulation is not self.articulation:
            raise ValidationError(
                f"{owner}: the tendon joint's link must belong to articulation '{self.articulation.name}'"
            )
        if parent is None:
            if self.tendon_joints:
                raise TopologyError(f"{owner}: it already has a root tendon joint; give a parent")
            node = TendonJoint(self, None, Axis.TWIST, 0.0, 0.0, link)
        else:
            if parent.tendon is not self:
                raise TopologyError(f"{owner}: the parent tendon joint belongs to another tendon")
            if link.parent is not parent.link:
                raise TopologyError(
                    f"{owner}: link '{link.name}' is not a child of the parent tendon joint's link '{parent.link.name}'"
                )
            j = link.inbound_joint
            coefficient = _number(owner, "coefficient", coefficient)
            recip_coefficient = _number(owner, "recip_coefficient", recip_coefficient)
            axis = _check_dof(owner, self.articulation, j, axis, routing=coefficient == 0.0)
            if j.get_joint_type() == JointType.SPHERICAL and len(j.dof_axes()) > 1:
                raise ValidationError(
                    f"{owner}: joint '{j.name}' is a multi-dof spherical joint; tendon joints need one-dof axes"
                )
            node = TendonJoint(self, parent, axis, coefficient, recip_coefficient, link)
            parent.children.append(node)
        self.tendon_joints.append(node)
        self.articulation._changed("topology")
        return node


class Attachment(KnownAttributes):
    """One point of a spatial tendon: `relative_offset` in the link's COM frame (PhysX stores it so)."""

    def __init__(
        self,
        tendon: SpatialTendon,
        parent: Attachment | None,
        coefficient: float,
        relative_offset_com: ArrayLike,
        link: Link,
    ):
        self.tendon, self.parent, self.link, self.coefficient = tendon, parent, link, coefficient
        self.relative_offset = np.asarray(relative_offset_com, dtype=float)
        self.children: list[Attachment] = []
        self._rest_length = 0.0
        self._limit_low, self._limit_high = _MAX_F32, -_MAX_F32

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def set_rest_length(self, length: float) -> None:
        self._rest_length = _number(self.tendon._owner(), "rest length", length)
        self.tendon.articulation._changed("model")

    def get_rest_length(self) -> float:
        return self._rest_length

    def set_limit_parameters(self, low: float, high: float) -> None:
        owner = self.tendon._owner()
        low, high = _number(owner, "limit low", low), _number(owner, "limit high", high)
        if low > high:
            raise ValidationError(f"{owner}: attachment limit low {low} > high {high}")
        self._limit_low, self._limit_high = low, high
        self.tendon.articulation._changed("model")

    def get_limit_parameters(self) -> tuple[float, float]:
        return self._limit_low, self._limit_high

    def set_relative_offset(self, offset_com: ArrayLike) -> None:
        """The point in the link's COM frame (PhysX's setRelativeOffset stores it unconverted)."""
        off = np.asarray(offset_com, dtype=float)
        if off.shape != (3,) or not np.all(np.isfinite(off)):
            raise ValidationError(f"{self.tendon._owner()}: relative offset must be 3 finite numbers")
        self.relative_offset = off
        self.tendon.articulation._changed("model")


class SpatialTendon(_Tendon):
    """`PxArticulationSpatialTendon`: each leaf attachment's path length from the root is pulled to its rest
    length by a spring between the root attachment's link and the leaf's link (physx-notes 5.4)."""

    kind = "spatial tendon"

    def __init__(self, articulation: Articulation):
        super().__init__(articulation)
        self.attachments: list[Attachment] = []

    def create_attachment(
        self, parent: Attachment | None, coefficient: float, relative_offset: ArrayLike, link: Link
    ) -> Attachment:
        """`relative_offset` is given in the link's actor frame and stored in its COM frame, as PhysX does."""
        owner = self._owner()
        self.articulation._check_topology_change(owner, "create_attachment")
        if link is None or link.articulation is not self.articulation:
            raise ValidationError(
                f"{owner}: the attachment's link must belong to articulation '{self.articulation.name}'"
            )
        if parent is None and self.attachments:
            raise TopologyError(f"{owner}: it already has a root attachment; give a parent")
        if parent is not None and parent.tendon is not self:
            raise TopologyError(f"{owner}: the parent attachment belongs to another tendon")
        off = np.asarray(relative_offset, dtype=float)
        if off.shape != (3,) or not np.all(np.isfinite(off)):
            raise ValidationError(f"{owner}: relative offset must be 3 finite numbers, got {relative_offset!r}")
        com_frame = link.cmass_local_pose.inverse().transform_point(off)
        node = Attachment(self, parent, _number(owner, "coefficient", coefficient), com_frame, link)
        if parent is not None:
            parent.children.append(node)
        self.attachments.append(node)
        self.articulation._changed("topology")
        return node


def validate_couplings(articulation: Articulation) -> None:
    """Checks that need the final dof layout (run when the articulation enters a scene)."""
    for c in articulation._couplings:
        owner = c._owner()
        if isinstance(c, MimicJoint):
            for joint, axis, _ in c.terms:
                if joint.get_motion(axis) == Motion.LOCKED:
                    raise ValidationError(f"{owner}: joint '{joint.name}' axis {AXIS_NAMES[axis]} is now LOCKED")
            if c.softness is not None and c.natural_frequency > 0.0 and c.damping_ratio > 0.0:
                raise ValidationError(
                    f"{owner}: has both a MuJoCo softness and a PhysX compliance (natural_frequency, damping_ratio);"
                    " keep one (set softness to None, or both compliance values to 0)"
                )
        elif isinstance(c, FixedTendon):
            if len(c.tendon_joints) < 2:
                raise ValidationError(f"{owner}: needs a root tendon joint and at least one child")
            for tj in c.tendon_joints[1:]:
                if tj.coefficient != 0.0 and tj.link.inbound_joint.get_motion(tj.axis) == Motion.LOCKED:
                    raise ValidationError(f"{owner}: tendon joint on link '{tj.link.name}' uses a LOCKED axis")
            if not c.acting_joints():
                raise ValidationError(f"{owner}: every tendon joint has coefficient 0 on a LOCKED axis")
        elif isinstance(c, SpatialTendon) and len(c.attachments) < 2:
            raise ValidationError(f"{owner}: needs a root attachment and at least one leaf")


__all__ = ["Attachment", "FixedTendon", "MimicJoint", "SpatialTendon", "TendonJoint", "Transform"]
