"""Checks shared by the description API, the cache and the scene: numbers, poses, axes, flag values and arrays.

Each raises a `ValidationError` that names the owner (``joint 'elbow'``, ``articulation 'arm'``...) and the field,
and says what is expected. `MAX_MAGNITUDE` bounds state-like quantities (positions, velocities, forces, targets,
gravity): artic computes in float32, whose largest value is 3.4e38, and products of two values beyond 1e15 (a force
times a lever arm, a velocity squared in an energy) already leave float32's precise range, so such inputs are refused
rather than allowed to turn into inf or NaN inside the step.
"""

from __future__ import annotations

import difflib
import inspect
import sys
import warnings
from enum import IntFlag
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ..enums import Axis, DriveType, Motion
from ..errors import ValidationError
from ..math.np_spatial import Transform

if TYPE_CHECKING:
    from .articulation_joint import Joint

_Flag = TypeVar("_Flag", bound=IntFlag)  # flag_value returns a member of the IntFlag class it is given

MAX_MAGNITUDE = 1e15  # largest |value| accepted for positions [m], velocities, forces, targets and gravity


def finite(owner: str, what: str, value: float) -> float:
    # float() would also read strings ("2") and booleans: refuse them instead of converting them silently
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValidationError(f"{owner}: {what} must be a number, got {value!r}")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{owner}: {what} must be a number, got {value!r}") from None
    if not np.isfinite(value):
        raise ValidationError(f"{owner}: {what} must be finite, got {value}")
    return value


def bounded(owner: str, what: str, value: float) -> float:
    """A finite number of magnitude at most MAX_MAGNITUDE (a state-like quantity)."""
    value = finite(owner, what, value)
    if abs(value) > MAX_MAGNITUDE:
        raise ValidationError(
            f"{owner}: {what} {value:g} is beyond +-{MAX_MAGNITUDE:g}, which float32 arithmetic "
            "cannot simulate; give a physically meaningful value"
        )
    return value


def as_transform(owner: str, what: str, pose: Transform | tuple[ArrayLike, ArrayLike] | None) -> Transform:
    """A finite pose with a unit quaternion (normalized) and a position within MAX_MAGNITUDE metres."""
    if pose is None:
        return Transform()
    if not isinstance(pose, Transform):
        try:
            p, q = pose
            pose = Transform(p, q)
        except (TypeError, ValueError):
            raise ValidationError(f"{owner}: {what} must be a Transform or a (p, q) pair, got {pose!r}") from None
    if not pose.is_finite():
        raise ValidationError(f"{owner}: {what} is not finite: {pose}")
    if np.abs(pose.p).max() > MAX_MAGNITUDE:
        raise ValidationError(
            f"{owner}: {what} position {pose.p} is beyond +-{MAX_MAGNITUDE:g} m, which float32 "
            "arithmetic cannot simulate"
        )
    n = np.linalg.norm(pose.q)
    if abs(n - 1.0) > 1e-3:
        raise ValidationError(f"{owner}: {what} quaternion {pose.q} is not unit length (norm {n:.6g}); normalize it")
    return Transform(pose.p, pose.q / n)


def axis(owner: str, value: Axis | int) -> Axis:
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{owner}: unknown axis {value!r}; use artic.Axis (TWIST..Z)")
    try:
        return Axis(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{owner}: unknown axis {value!r}; use artic.Axis (TWIST..Z)") from None


_FLAG_BITS: dict = {}  # IntFlag class: the union of its members' bits (flag_value)


def flag_value(owner: str, what: str, value: int, cls: type[_Flag]) -> _Flag:
    """An IntFlag value of `cls` (an instance or a plain int) with no bits outside its members; IntFlag itself keeps
    unknown bits silently, and a string such as "POSITION" is a common slip for the member."""
    if type(value) is cls or type(value) is int:  # the common case, checked in ~0.2 us (every cache call)
        allowed = _FLAG_BITS.get(cls)
        if allowed is None:
            allowed = _FLAG_BITS[cls] = sum(m.value for m in cls)
        v = int(value)
        if v >= 0 and not v & ~allowed:
            return value if type(value) is cls else cls(v)
    name = cls.__name__
    members = list(cls)  # canonical single-bit members
    if isinstance(value, str):
        hint = f"artic.{name}.{value.upper()}" if value.upper() in cls.__members__ else f"an artic.{name} member"
        raise ValidationError(f"{owner}: {what} must be an artic.{name}, not the string {value!r}; pass {hint}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValidationError(
            f"{owner}: {what} must be an artic.{name} (e.g. artic.{name}.{members[0].name}), got {value!r}"
        )
    allowed = 0
    for m in members:
        allowed |= m.value
    v = int(value)
    if v < 0 or v & ~allowed:
        names = ", ".join(f"{m.name} ({m.value})" for m in members)
        raise ValidationError(
            f"{owner}: {what} {v} has bits that are not artic.{name} flags "
            f"({v & ~allowed if v >= 0 else v}); the flags are {names}"
        )
    return cls(v)


def positive_int(owner: str, what: str, value: int, maximum: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValidationError(f"{owner}: {what} must be a positive integer, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValidationError(f"{owner}: {what} must be at most {maximum}, got {value}")
    return int(value)


def as_real(owner: str, what: str, value: ArrayLike, expect: str = "real numbers") -> np.ndarray:
    """`value` as a float64 array of any shape, refusing complex numbers, strings, objects, booleans and ragged
    sequences (NumPy would raise a TypeError or ValueError, or drop an imaginary part with a warning)."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as e:  # ragged nested sequences
        raise ValidationError(f"{owner}: {what} must be {expect}; it cannot be read as an array ({e})") from None
    if a.dtype.kind not in "fiu":
        kind = "complex" if a.dtype.kind == "c" else f"dtype {a.dtype}"
        raise ValidationError(f"{owner}: {what} is {kind}, must be {expect}")
    return a.astype(np.float64)


def real_array(
    owner: str, what: str, value: ArrayLike, shape: tuple, limit: float | None = MAX_MAGNITUDE
) -> np.ndarray:
    """`value` as a C-contiguous float32 array of exactly `shape`: real numbers (not complex, strings, objects or
    booleans), finite, and (with `limit`) of magnitude at most `limit`."""
    expect = f"a finite float32 array of shape {shape}"
    a = as_real(owner, what, value, expect)
    if a.shape != tuple(shape):
        raise ValidationError(f"{owner}: {what} has shape {a.shape}, expected {tuple(shape)}; it must be {expect}")
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValidationError(f"{owner}: {what} has a non-finite value at index {bad}")
    if limit is not None and a.size and np.abs(a).max() > limit:
        bad = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(a)), a.shape))
        raise ValidationError(
            f"{owner}: {what} has {float(a[bad]):g} at index {bad}, beyond +-{limit:g}, which "
            "float32 arithmetic cannot simulate"
        )
    return np.array(a, dtype=np.float32, order="C")  # a copy: callers may normalize it in place


def _no_drive(d) -> bool:
    """Whether a Drive is the joint's default (0, 0, 0, NONE)."""
    return d.stiffness == 0.0 and d.damping == 0.0 and d.max_force == 0.0 and d.drive_type == DriveType.NONE


def check_axis_settings(joint: Joint) -> None:
    """Settings that cannot act on the axis they were given (PhysX accepts them and ignores them, which hides a
    mistake): a drive, limit, drive target or joint state on a LOCKED axis is refused; a limit on a FREE axis only
    acts once the axis is LIMITED, so it is kept and warned about."""
    owner = joint._owner()
    for a in Axis:
        motion = joint._motion[a]
        if motion == Motion.LOCKED:
            given = [
                what
                for what, unset in (
                    ("drive", _no_drive(joint._drive[a])),
                    ("limit", joint._limit[a].low == 0.0 and joint._limit[a].high == 0.0),
                    ("drive target", joint._drive_target[a] == 0.0),
                    ("drive velocity", joint._drive_velocity[a] == 0.0),
                    ("joint position", joint._position[a] == 0.0),
                    ("joint velocity", joint._velocity[a] == 0.0),
                )
                if not unset
            ]
            if given:
                raise ValidationError(
                    f"{owner}: axis {a.name} is LOCKED but has a {' and a '.join(given)}, which "
                    f"would never act; unlock it with set_motion(Axis.{a.name}, ...) or reset "
                    "them (artic.Drive(), artic.Limit(), 0 for targets and state)"
                )
        elif motion == Motion.FREE and (joint._limit[a].low != 0.0 or joint._limit[a].high != 0.0):
            lim = joint._limit[a]
            warnings.warn(
                f"{owner}: axis {a.name} has a limit [{lim.low}, {lim.high}] but is FREE, so the limit "
                f"does not act; set_motion(Axis.{a.name}, Motion.LIMITED) to enforce it",
                stacklevel=5,
            )


# -- validated properties of description objects (each reports a model change to its articulation) ------------


MAX_F32 = float(np.finfo(np.float32).max)


def nonneg(owner: str, what: str, value: float) -> float:
    """A finite number >= 0 (or float32's largest value, which means "no limit")."""
    value = finite(owner, what, value) if value != MAX_F32 else value
    if value < 0.0:
        raise ValidationError(f"{owner}: {what} must be >= 0, got {value}")
    return value


def nonneg_property(name: str, doc: str) -> property:
    """A property stored in `_<name>` that accepts non-negative finite values and reports a model change."""
    attr = "_" + name

    def get(self):
        return getattr(self, attr)

    def set_(self, value):
        setattr(self, attr, nonneg(self._owner(), name, value))
        self._changed("model")

    return property(get, set_, doc=doc)


def pose_property(name: str, doc: str) -> property:
    """A Transform property stored in `_<name>`, validated (finite, unit quaternion) and copied on the way out."""
    attr = "_" + name

    def get(self) -> Transform:
        return getattr(self, attr).copy()

    def set_(self, pose):
        setattr(self, attr, as_transform(self._owner(), name, pose))
        self._changed("model")

    return property(get, set_, doc=doc)


def refuse_unknown_attribute(obj: object, name: str) -> None:
    """Refuse setting a public attribute that `obj`'s class does not have: Python would create it, and a misspelled
    name (`link.masss = 2`, `joint.max_joint_velocty = 3`) would then do nothing, silently. artic's own code may
    add attributes; private names pass."""
    if name.startswith("_") or name in obj.__dict__:
        return
    cls = type(obj)
    fields = getattr(cls, "__dataclass_fields__", {})
    if name in fields or hasattr(cls, name):
        return
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name == "__setattr__":
        frame = frame.f_back  # past the classes' own __setattr__ chain, to the code that assigns
    if frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "artic":
        return
    known = {n for n in obj.__dict__ if not n.startswith("_")} | set(fields)
    methods = set()
    for n in dir(cls):
        if n.startswith("_"):
            continue
        if isinstance(inspect.getattr_static(cls, n), property) or not callable(getattr(cls, n)):
            known.add(n)
        else:
            methods.add(n)
    close = difflib.get_close_matches(name, sorted(known | methods), n=3)
    if close:
        hint = "; did you mean " + " or ".join(f"{c}(...)" if c in methods else repr(c) for c in close) + "?"
    else:
        hint = f"; its attributes: {', '.join(sorted(known))}"
    owner = obj._owner() if hasattr(obj, "_owner") else obj.label() if hasattr(obj, "label") else cls.__name__.lower()
    raise ValidationError(f"{owner}: has no attribute {name!r} to set (it would be kept and do nothing){hint}")


class KnownAttributes:
    """Mixin: a public attribute the class does not have is refused when set (refuse_unknown_attribute)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        if name[0] != "_" and name not in self.__dict__:  # the common cases without a further call
            refuse_unknown_attribute(self, name)
        object.__setattr__(self, name, value)
