"""Joints between any two bodies (ArtiSynth's joints chapter, section 3.3; PhysX's PxJoint family).

A joint connects body A to body B. A body is a `Link` of any articulation (the same articulation closes a loop),
a `RigidDynamic`, a `RigidStatic`, or the world (`None`, only as B). Frame C is fixed on A (T_CA), frame D on B
(T_DB), and the joint constrains T_CD, the pose of C in D (section 3.3.1): T_AB = T_DB T_CD T_CA^-1.

Every joint type is a set of *coordinates* (its free motions) and *constraints* (the rest), read from T_CD = (p, R)
with p the origin of C in D's axes:
* linear: the components of p along D's x, y, z;
* angular, by type: the rotation vector r = log R (fixed, slider, spherical, D6 with 0 or >= 2 free rotations);
  the twist angle about one axis and the swing left over (hinge, cylindrical, planar: z; D6 with one free
  rotation: that axis); or the Euler angles R = Rz(roll) Ry(pitch) Rx(yaw) (universal: roll and pitch, gimbal: all
  three).
Coordinates are zero in the zero state T_CD = I. A twist or Euler angle (other than pitch) keeps counting past
+-pi: each step takes the branch nearest to the previous value, so a limit at 3 pi stops the third half-turn.

Constraints, in this order: the constrained linear components (x, y, z), the constrained angular components, then
one range constraint per coordinate. Each has a compliance C [m/N or rad/(N m)] and damping D [N s/m or N m s/rad]
(section 3.3.8; C = 0 is hard) or, equivalently at a time step h, ODE's ERP and CFM (erp_cfm_from_spring).

Names are ArtiSynth's where PhysX has no joint of that kind (cylindrical, universal, gimbal, planar) and for the
hinge and slider, whose axis is z as in ArtiSynth (PhysX's revolute and prismatic joints use x:
`create_physx_joint` turns PhysX-style frames accordingly).
"""

from __future__ import annotations

from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from ..enums import Axis, ConstraintFlag, DriveType, JointType, Motion
from ..errors import StateError, TopologyError, ValidationError
from ..math.np_spatial import Transform, quat_exp, quat_from_axis_angle, quat_mul
from .actors import RigidDynamic, RigidStatic
from .articulation import Link
from .articulation_joint import Drive, Limit
from .deadzone import Deadzone, checked_deadzone
from .softness import Softness, check_softness, erp_cfm_from_spring
from .validate import KnownAttributes, as_real, bounded
from .validate import as_transform as _as_transform
from .validate import axis as _axis
from .validate import finite as _finite

# how a joint measures its rotation (constraints/body_joint_frames.py computes each on the device)
MODE_ROTVEC, MODE_TWIST_X, MODE_TWIST_Y, MODE_TWIST_Z, MODE_EULER_ZY, MODE_EULER_ZYX, MODE_DISTANCE = range(7)
# slots: 0..2 the angular quantities of the mode, 3..5 the components of p along D's axes
_LINEAR_SLOTS = (3, 4, 5)
_ANGULAR_SLOTS = (0, 1, 2)


def _rot(axis: int, angle: float) -> np.ndarray:
    return quat_from_axis_angle(np.eye(3)[axis], angle)


def coordinates_to_tcd_mode(mode: int, slots: list[int], values: ArrayLike) -> Transform:
    """T_CD of the given coordinate values (slots: the slot of each coordinate; the other slots are zero)."""
    full = np.zeros(6)
    full[list(slots)] = values
    if mode == MODE_DISTANCE:
        return Transform((0.0, 0.0, full[3]))
    if mode == MODE_ROTVEC:
        q = quat_exp(full[:3])
    elif mode in (MODE_TWIST_X, MODE_TWIST_Y, MODE_TWIST_Z):
        k = mode - MODE_TWIST_X
        q = _rot(k, full[k])
    else:  # Euler: Rz(roll) Ry(pitch) Rx(yaw)
        q = quat_mul(_rot(2, full[0]), quat_mul(_rot(1, full[1]), _rot(0, full[2])))
    return Transform(full[3:], q)


def _joint_transform(jtype: JointType, axes, q) -> Transform:
    """The articulation joint motion J(q) on the host (dynamics/kinematics.py: joint_transform)."""
    if not axes:
        return Transform()
    if jtype == JointType.PRISMATIC:
        return Transform(np.eye(3)[int(axes[0]) - 3] * q[0])
    if jtype == JointType.SPHERICAL:
        return Transform(np.zeros(3), quat_exp(sum(np.eye(3)[int(a)] * v for a, v in zip(axes, q))))
    return Transform(np.zeros(3), _rot(int(axes[0]), q[0]))


def description_pose(body: Link | RigidStatic | None) -> Transform:
    """A body's world pose from its description (a link's by forward kinematics of its articulation's root pose
    and joint positions), in float64."""
    if body is None:
        return Transform()
    if isinstance(body, RigidStatic):
        return body.pose.copy()
    link = body
    chain = []
    while link.inbound_joint is not None:
        chain.append(link)
        link = link.parent
    x = link.articulation.root_global_pose
    for lk in reversed(chain):
        j = lk.inbound_joint
        axes = j.dof_axes()
        q = [j.get_joint_position(a) for a in axes]
        x = x * j.parent_pose * _joint_transform(j.get_joint_type(), axes, q) * j.child_pose.inverse()
    return x


def _body(owner: str, which: str, body, allow_world: bool):
    """A joint body as stored: a Link (a RigidDynamic is its one link), a RigidStatic, or None (the world)."""
    if isinstance(body, RigidDynamic):
        return body.link
    if isinstance(body, (Link, RigidStatic)):
        return body
    if body is None and allow_world:
        return None
    what = (
        "a Link, RigidDynamic, RigidStatic or None (the world)"
        if allow_world
        else "a Link, RigidDynamic or RigidStatic (the world may only be body B)"
    )
    raise ValidationError(f"{owner}: body {which} must be {what}, got {type(body).__name__}")


def _body_name(body) -> str:
    if body is None:
        return "the world"
    return f"'{body.name}'"


def _body_mass(body) -> float:
    return body.mass if isinstance(body, Link) else 0.0


def _range_bound(owner: str, what: str, value, open_side: float) -> float:
    """One range bound: a real number (+-inf allowed), or None for an open side; strings and arrays refused."""
    if value is None:
        return open_side
    a = as_real(owner, what, value, "a number or None")
    if a.shape != ():
        raise ValidationError(f"{owner}: {what} must be one number or None, got shape {a.shape}")
    return float(a)


class JointBase(KnownAttributes):
    """A joint between bodies A and B (ArtiSynth's JointBase). Create one of the concrete types with
    `Type(body_a, body_b, frame_dw)` (zero state: C = D at T_DW), `Type.from_body_frames(body_a, frame_ca, body_b,
    frame_db)` or `Type.from_world_frames(body_a, body_b, frame_cw, frame_dw)` (section 3.3.3), then
    `scene.add_joint(joint)`. Frames are `Transform`s or (p, q) pairs; body poses are taken from the descriptions."""

    kind = "joint"
    _mode = MODE_ROTVEC
    _coordinates: tuple = ()  # (name, slot) of each coordinate, in coordinate order
    _count = 0

    def __init__(
        self,
        body_a: Link | RigidDynamic | RigidStatic,
        body_b: Link | RigidDynamic | RigidStatic | None,
        frame_dw: Transform | tuple[ArrayLike, ArrayLike],
        name: str | None = None,
        coordinates: ArrayLike | None = None,
    ):
        self._begin(name)
        owner = self._owner()
        a, b = _body(owner, "A", body_a, False), _body(owner, "B", body_b, True)
        t_dw = _as_transform(owner, "frame_dw", frame_dw)
        tcd = Transform() if coordinates is None else self.coordinates_to_tcd(coordinates)
        self._attach(a, description_pose(a).inverse() * (t_dw * tcd), b, description_pose(b).inverse() * t_dw)

    @classmethod
    def from_body_frames(
        cls,
        body_a: Link | RigidDynamic | RigidStatic,
        frame_ca: Transform | tuple[ArrayLike, ArrayLike],
        body_b: Link | RigidDynamic | RigidStatic | None,
        frame_db: Transform | tuple[ArrayLike, ArrayLike],
        name: str | None = None,
    ) -> Self:
        """ArtiSynth's Joint(bodyA, TCA, bodyB, TDB) constructors: frames given on the bodies (T_DB is in the world
        for the world body B, in the actor frame for a static one)."""
        joint = cls.__new__(cls)
        joint._begin(name)
        owner = joint._owner()
        a, b = _body(owner, "A", body_a, False), _body(owner, "B", body_b, True)
        joint._attach(a, _as_transform(owner, "frame_ca", frame_ca), b, _as_transform(owner, "frame_db", frame_db))
        return joint

    @classmethod
    def from_world_frames(
        cls,
        body_a: Link | RigidDynamic | RigidStatic,
        body_b: Link | RigidDynamic | RigidStatic | None,
        frame_cw: Transform | tuple[ArrayLike, ArrayLike],
        frame_dw: Transform | tuple[ArrayLike, ArrayLike],
        name: str | None = None,
    ) -> Self:
        """ArtiSynth's Joint(bodyA, bodyB, TCW, TDW) constructors: both frames in the world; T_CD = T_DW^-1 T_CW may
        differ from the identity."""
        joint = cls.__new__(cls)
        joint._begin(name)
        owner = joint._owner()
        a, b = _body(owner, "A", body_a, False), _body(owner, "B", body_b, True)
        t_cw = _as_transform(owner, "frame_cw", frame_cw)
        t_dw = _as_transform(owner, "frame_dw", frame_dw)
        joint._attach(a, description_pose(a).inverse() * t_cw, b, description_pose(b).inverse() * t_dw)
        return joint

    # -- construction ---------------------------------------------------------------------------------------------
    def _begin(self, name):
        JointBase._count += 1
        self.name = str(name) if name is not None else f"{self.kind}{JointBase._count}"
        self._scene = None
        self.collision_enabled = False  # PhysX's PxConstraintFlag::eCOLLISION_ENABLED: the two bodies may touch
        self._setup_kind()
        self._init_state()

    def _setup_kind(self):
        """Per-instance type data (a D6 joint's motions); the fixed types keep their class attributes."""

    def _init_state(self):
        m = len(self._coordinates)
        n = self.constraint_count
        self._compliance = np.zeros(n)
        self._damping = np.zeros(n)
        self._erp = np.full(n, -1.0)  # < 0: not given (the compliance and damping apply)
        self._cfm = np.zeros(n)
        # Softness of the bilateral constraints (description/softness.py), kept when a D6 joint's motions change
        self._softness = self.__dict__.get("_softness")
        self._range = np.tile([-np.inf, np.inf], (m, 1))
        self._locked = np.zeros(m, bool)
        self._drive = [Drive() for _ in range(m)]
        self._target = np.zeros((m, 2))  # drive target position and velocity
        self._deadzone = [None] * m  # description/deadzone.py

    def _attach(self, a, t_ca: Transform, b, t_db: Transform):
        owner = self._owner()
        if a is b:
            raise ValidationError(
                f"{owner}: body A and body B are the same body {_body_name(a)}; a joint connects two different bodies"
            )
        if isinstance(a, RigidStatic) and (b is None or isinstance(b, RigidStatic)):
            raise ValidationError(
                f"{owner}: bodies {_body_name(a)} and {_body_name(b)} cannot move; a joint needs "
                "at least one Link or RigidDynamic"
            )
        self.body_a, self.body_b = a, b
        self._frame_ca, self._frame_db = t_ca, t_db

    def _owner(self) -> str:
        return f"{self.kind} joint '{self.name}'"

    def __repr__(self):
        return f"{type(self).__name__}('{self.name}', A={_body_name(self.body_a)}, B={_body_name(self.body_b)})"

    @property
    def frame_ca(self) -> Transform:
        """T_CA: frame C in body A's actor frame."""
        return self._frame_ca.copy()

    @property
    def frame_db(self) -> Transform:
        """T_DB: frame D in body B's actor frame (in the world when B is the world)."""
        return self._frame_db.copy()

    def set_frames(
        self,
        frame_ca: Transform | tuple[ArrayLike, ArrayLike] | None = None,
        frame_db: Transform | tuple[ArrayLike, ArrayLike] | None = None,
    ) -> None:
        """Move frame C on body A (T_CA) and/or frame D on body B (T_DB; in the world for the world body B), in a
        scene too: from the next step and read, in every env. Marker fitting moves joint anchors this way."""
        owner = self._owner()
        if frame_ca is not None:
            self._frame_ca = _as_transform(owner, "frame_ca", frame_ca)
        if frame_db is not None:
            self._frame_db = _as_transform(owner, "frame_db", frame_db)
        self._changed("frames")

    def _changed(self, what: str = "model"):
        if self._scene is not None:
            self._scene._on_joint_changed(self, what)

    def _check_not_in_scene(self, action: str):
        if self._scene is not None:
            raise TopologyError(f"{self._owner()} is in a scene; {action} before scene.add_joint (or remove it)")

    # -- coordinates ----------------------------------------------------------------------------------------------
    @property
    def coordinate_names(self) -> list[str]:
        """The coordinates' names in coordinate order (a cylindrical joint's: ['z', 'theta'])."""
        return [n for n, _ in self._coordinates]

    @property
    def num_coordinates(self) -> int:
        """Number of coordinates m: the joint's free motions."""
        return len(self._coordinates)

    def _coord(self, idx) -> int:
        names = self.coordinate_names
        if isinstance(idx, str):
            if idx not in names:
                raise ValidationError(f"{self._owner()}: no coordinate '{idx}'; its coordinates are {names}")
            return names.index(idx)
        if isinstance(idx, (bool, np.bool_)) or not isinstance(idx, (int, np.integer)) or not 0 <= idx < len(names):
            raise ValidationError(
                f"{self._owner()}: coordinate index must be an integer in [0, {len(names)}) or one "
                f"of {names}, got {idx!r}"
            )
        return int(idx)

    def coordinate_is_angular(self, idx: int | str) -> bool:
        """Whether a coordinate (index or name) is an angle [rad] rather than a length [m]."""
        return self._coordinates[self._coord(idx)][1] < 3

    def coordinates_to_tcd(self, values: ArrayLike) -> Transform:
        """T_CD for the given coordinate values (ArtiSynth's coordinatesToTCD)."""
        v = np.asarray(values, dtype=float).reshape(-1)
        if v.shape != (self.num_coordinates,) or not np.all(np.isfinite(v)):
            raise ValidationError(
                f"{self._owner()}: expected {self.num_coordinates} finite coordinate values "
                f"{self.coordinate_names}, got {values!r}"
            )
        return coordinates_to_tcd_mode(self._mode, [s for _, s in self._coordinates], v)

    def get_coordinates(self) -> np.ndarray:
        """(E, m) coordinate values in every env of the scene (rad or m)."""
        return self._require_scene().get_joint_coordinates(self)

    def set_coordinates(self, values: ArrayLike) -> None:
        """Set the coordinates in every env ((m,) or (E, m)): the scene moves the freest bodies so that every joint
        holds (scene.set_joint_coordinates)."""
        self._require_scene().set_joint_coordinates(self, values)

    def _require_scene(self):
        if self._scene is None:
            raise StateError(f"{self._owner()} is not in a scene; call scene.add_joint(joint) first")
        return self._scene

    # -- ranges and locking (section 3.3.5) -----------------------------------------------------------------------
    def set_coordinate_range(self, idx: int | str, low: float | None, high: float | None) -> None:
        """Range [low, high] of a coordinate (rad or m; angles may pass +-pi); None or +-inf leaves a side open.
        In a scene it applies to every env at once (per env: scene.set_joint_ranges)."""
        k = self._coord(idx)
        owner = self._owner()
        name = f"coordinate '{self.coordinate_names[k]}' range"
        lo = _range_bound(owner, f"{name} low", low, -np.inf)
        hi = _range_bound(owner, f"{name} high", high, np.inf)
        if np.isnan(lo) or np.isnan(hi):
            raise ValidationError(f"{owner}: coordinate '{self.coordinate_names[k]}' range bounds must not be NaN")
        if lo == np.inf or hi == -np.inf:  # [inf, inf] or [-inf, -inf]: no value satisfies it
            raise ValidationError(
                f"{owner}: coordinate '{self.coordinate_names[k]}' range [{lo}, {hi}] admits no value; an open "
                "side is low = -inf (or None) or high = inf (or None)"
            )
        if lo > hi:
            raise ValidationError(
                f"{owner}: coordinate '{self.coordinate_names[k]}' range low {lo} > high {hi}; give low <= high"
            )
        self._range[k] = (lo, hi)
        self._changed("range")

    def get_coordinate_range(self, idx: int | str) -> tuple[float, float]:
        """A coordinate's (low, high) in the description [rad or m]; +-inf on an open side."""
        lo, hi = self._range[self._coord(idx)]
        return float(lo), float(hi)

    def set_locked(self, idx: int | str, locked: bool = True) -> None:
        """Lock a coordinate at its current value (a bilateral constraint), or release it. In a scene every env
        locks at its own current value."""
        k = self._coord(idx)
        if not isinstance(locked, (bool, np.bool_)):
            raise ValidationError(f"{self._owner()}: locked must be True or False, got {locked!r}")
        self._locked[k] = bool(locked)
        self._changed("lock")

    def is_locked(self, idx: int | str) -> bool:
        """Whether a coordinate is locked in the description (per env: scene.get_joint_locked)."""
        return bool(self._locked[self._coord(idx)])

    # -- constraints, compliance and damping (section 3.3.8) ------------------------------------------------------
    def _constrained_slots(self) -> list[int]:
        """Bilateral constraints: the slots that are not coordinates, linear first."""
        free = {s for _, s in self._coordinates}
        if self._mode == MODE_DISTANCE:
            return []
        return [s for s in _LINEAR_SLOTS + _ANGULAR_SLOTS if s not in free]

    @property
    def constraint_count(self) -> int:
        """Number of constraints: the bilateral ones, then one range constraint per coordinate."""
        return len(self._constrained_slots()) + len(self._coordinates)

    @property
    def bilateral_count(self) -> int:
        """Number of bilateral constraints: the constrained linear, then angular, components."""
        return len(self._constrained_slots())

    def get_constraint_flags(self) -> list[ConstraintFlag]:
        """LINEAR or ROTARY for each constraint in order, with LIMIT on the range ones."""
        flags = [ConstraintFlag.LINEAR if s >= 3 else ConstraintFlag.ROTARY for s in self._constrained_slots()]
        for _, s in self._coordinates:
            kind = ConstraintFlag.LINEAR if s >= 3 or self._mode == MODE_DISTANCE else ConstraintFlag.ROTARY
            flags.append(kind | ConstraintFlag.LIMIT)
        return flags

    def _values(self, what: str, values, nonneg=True) -> np.ndarray:
        n = self.constraint_count
        # as_real refuses what np.asarray(dtype=float) would read silently ("1e-6") or fail on with a raw ValueError
        v = np.atleast_1d(as_real(self._owner(), what, values, f"at most {n} real numbers (one per constraint)"))
        if v.ndim != 1 or len(v) > n or not np.all(np.isfinite(v)):
            raise ValidationError(
                f"{self._owner()}: {what} must be at most {n} finite values (one per constraint), got {values!r}"
            )
        if nonneg and np.any(v < 0):
            raise ValidationError(f"{self._owner()}: {what} must be >= 0, got {v}")
        return v

    def set_compliance(self, values: ArrayLike) -> None:
        """Compliance of the first len(values) constraints [m/N or rad/(N m)]; 0 is hard. Clears any ERP/CFM."""
        v = self._values("compliance", values)
        self._compliance[: len(v)] = v
        self._erp[: len(v)] = -1.0
        self._changed()

    def get_compliance(self) -> np.ndarray:
        """A copy of every constraint's compliance, (constraint_count,) [m/N or rad/(N m)]."""
        return self._compliance.copy()

    @property
    def softness(self) -> Softness | None:
        """MuJoCo's soft equality (solref, solimp) for the joint's bilateral constraints: each becomes a row
        with MuJoCo's reference acceleration and regularizer (constraints/softness.py), the impedance taken at the
        norm of the joint's whole error (linear errors and half the angles, MuJoCo's connect and weld). It
        replaces their compliance, damping and ERP/CFM; None (the default): those apply."""
        return self._softness

    @softness.setter
    def softness(self, value: Softness | None) -> None:
        self._softness = check_softness(self._owner(), value)
        self._changed()

    def set_damping(self, values: ArrayLike) -> None:
        """Damping of the first len(values) constraints [N s/m or N m s/rad]; it acts only where the compliance
        is non-zero."""
        v = self._values("damping", values)
        self._damping[: len(v)] = v
        self._changed()

    def get_damping(self) -> np.ndarray:
        """A copy of every constraint's damping, (constraint_count,) [N s/m or N m s/rad]."""
        return self._damping.copy()

    def attached_mass(self) -> float:
        """Total mass of the bodies the joint attaches [kg] (M of eq. 3.24)."""
        return _body_mass(self.body_a) + _body_mass(self.body_b)

    def _set_uniform(self, flag: ConstraintFlag, compliance: float):
        c = _finite(self._owner(), "compliance", compliance)
        if c < 0:
            raise ValidationError(f"{self._owner()}: compliance must be >= 0, got {c}")
        m = self.attached_mass()
        d = 2.0 * np.sqrt(m / c) if c > 0 else 0.0  # critical damping, eq. 3.24 with zeta = 1
        for i, f in enumerate(self.get_constraint_flags()):
            if f & flag and not f & ConstraintFlag.LIMIT:
                self._compliance[i], self._damping[i], self._erp[i] = c, d, -1.0
        self._changed()

    def _get_uniform(self, flag: ConstraintFlag) -> float:
        idx = [i for i, f in enumerate(self.get_constraint_flags()) if f & flag and not f & ConstraintFlag.LIMIT]
        if not idx or np.ptp(self._compliance[idx]) > 0 or np.any(self._erp[idx] >= 0):
            return -1.0
        c = self._compliance[idx[0]]
        d = 2.0 * np.sqrt(self.attached_mass() / c) if c > 0 else 0.0
        return float(c) if np.allclose(self._damping[idx], d) else -1.0

    def set_linear_compliance(self, compliance: float) -> None:
        """Uniform compliance of the linear bilateral constraints, with critical damping 2 sqrt(M / C) (eq. 3.24,
        M the attached mass)."""
        self._set_uniform(ConstraintFlag.LINEAR, compliance)

    def get_linear_compliance(self) -> float:
        """The uniform linear compliance with its critical damping, or -1 if there is none."""
        return self._get_uniform(ConstraintFlag.LINEAR)

    def set_rotary_compliance(self, compliance: float) -> None:
        """Uniform compliance of the rotary bilateral constraints, with critical damping 2 sqrt(M / C)."""
        self._set_uniform(ConstraintFlag.ROTARY, compliance)

    def get_rotary_compliance(self) -> float:
        """The uniform rotary compliance with its critical damping, or -1 if there is none."""
        return self._get_uniform(ConstraintFlag.ROTARY)

    def set_erp_cfm(self, erp: ArrayLike, cfm: ArrayLike) -> None:
        """ODE's parameterization of the first len(erp) constraints: ERP in [0, 1] and CFM >= 0 (force units, as
        ODE). They describe the spring erp_cfm_from_spring inverts at each step's dt; CFM = 0 with ERP = e is a
        hard constraint that corrects the fraction e of its error per step."""
        e = self._values("erp", erp)
        c = self._values("cfm", cfm)
        if len(e) != len(c):
            raise ValidationError(f"{self._owner()}: erp and cfm need the same length, got {len(e)} and {len(c)}")
        if np.any(e > 1.0):
            raise ValidationError(f"{self._owner()}: erp must lie in [0, 1], got {e}")
        self._erp[: len(e)], self._cfm[: len(c)] = e, c
        self._changed()

    def get_erp_cfm(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Each constraint's (ERP, CFM) at time step dt: the given ones, or those of its compliance and damping."""
        erp, cfm = self._erp.copy(), self._cfm.copy()
        for i in np.flatnonzero(erp < 0):
            c = self._compliance[i]
            erp[i], cfm[i] = erp_cfm_from_spring(np.inf if c == 0 else 1.0 / c, self._damping[i], dt)
        return erp, cfm

    # -- drives on coordinates ------------------------------------------------------------------------------------
    def set_drive_params(self, idx: int | str, drive: Drive) -> None:
        """Implicit PD drive of a coordinate (the articulation drives' model, the implicit-drive note):
        stiffness [N/m or N m/rad], damping, max_force [N or N m] and type (NONE switches it off)."""
        k = self._coord(idx)
        owner = f"{self._owner()} coordinate '{self.coordinate_names[k]}'"
        if not isinstance(drive, Drive):
            raise ValidationError(f"{owner}: set_drive_params takes an artic.Drive, got {type(drive).__name__}")
        for what in ("stiffness", "damping", "max_force"):
            v = getattr(drive, what)
            if not (v == np.finfo(np.float32).max or np.isfinite(_finite(owner, f"drive {what}", v))) or v < 0:
                raise ValidationError(f"{owner}: drive {what} must be >= 0, got {v}")
        try:
            kind = DriveType(drive.drive_type)
        except ValueError:
            raise ValidationError(f"{owner}: unknown drive type {drive.drive_type!r}; use artic.DriveType") from None
        if kind in (DriveType.EXPLICIT, DriveType.EXPLICIT_STIFFNESS):
            raise ValidationError(f"{owner}: {kind.name} drives act on articulation joints only; use DriveType.FORCE")
        self._drive[k] = Drive(float(drive.stiffness), float(drive.damping), float(drive.max_force), kind)
        self._changed()

    def get_drive_params(self, idx: int | str) -> Drive:
        """A copy of a coordinate's `Drive`."""
        d = self._drive[self._coord(idx)]
        return Drive(d.stiffness, d.damping, d.max_force, d.drive_type)

    def set_drive_target(self, idx: int | str, position: float) -> None:
        """Drive target of a coordinate in every env (per env: scene.set_joint_targets)."""
        k = self._coord(idx)
        self._target[k, 0] = bounded(self._owner(), "drive target", position)  # the scene refuses beyond 1e15
        self._changed("target")

    def set_drive_velocity(self, idx: int | str, velocity: float) -> None:
        """Drive target velocity of a coordinate in every env [rad/s or m/s] (per env: scene.set_joint_targets)."""
        k = self._coord(idx)
        self._target[k, 1] = bounded(self._owner(), "drive target velocity", velocity)
        self._changed("target")

    def set_deadzone(self, idx: int | str, deadzone: Deadzone | None) -> None:
        """A deadzone controller on a coordinate (artic.Deadzone; None removes it); direct solver only."""
        k = self._coord(idx)
        self._deadzone[k] = (
            None
            if deadzone is None
            else checked_deadzone(f"{self._owner()} coordinate '{self.coordinate_names[k]}'", deadzone)
        )
        self._changed()

    def get_deadzone(self, idx: int | str) -> Deadzone | None:
        """A coordinate's deadzone controller, or None."""
        return self._deadzone[self._coord(idx)]

    def get_drive_target(self, idx: int | str) -> float:
        """A coordinate's drive target in the description [rad or m] (per env: scene.get_joint_targets)."""
        return float(self._target[self._coord(idx), 0])

    def get_drive_velocity(self, idx: int | str) -> float:
        """A coordinate's target velocity in the description [rad/s or m/s] (per env: scene.get_joint_targets)."""
        return float(self._target[self._coord(idx), 1])


class FixedJoint(JointBase):
    """A weld (ArtiSynth's SolidJoint, PhysX's PxFixedJoint): T_CD = I, six constraints, no coordinates."""

    kind = "fixed"


class HingeJoint(JointBase):
    """Rotation theta about the z axis of D (ArtiSynth's HingeJoint; PhysX's revolute joint turns about x)."""

    kind = "hinge"
    _mode = MODE_TWIST_Z
    _coordinates = (("theta", 2),)


class SliderJoint(JointBase):
    """Translation z along the z axis of D (ArtiSynth's SliderJoint; PhysX's prismatic joint slides along x)."""

    kind = "slider"
    _coordinates = (("z", 5),)


class CylindricalJoint(JointBase):
    """Translation z along and rotation theta about the z axis of D."""

    kind = "cylindrical"
    _mode = MODE_TWIST_Z
    _coordinates = (("z", 5), ("theta", 2))


class SphericalJoint(JointBase):
    """A ball joint: the origins of C and D coincide; coordinates are the rotation vector (rx, ry, rz) of C in D, as
    the articulation SPHERICAL joint's positions (|r| <= pi)."""

    kind = "spherical"
    _coordinates = (("rx", 0), ("ry", 1), ("rz", 2))


class UniversalJoint(JointBase):
    """A Cardan joint: R_CD = Rz(roll) Ry(pitch), origins coincident (singular at pitch = +-pi/2)."""

    kind = "universal"
    _mode = MODE_EULER_ZY
    _coordinates = (("roll", 0), ("pitch", 1))


class GimbalJoint(JointBase):
    """Three rotations R_CD = Rz(roll) Ry(pitch) Rx(yaw), origins coincident (singular at pitch = +-pi/2)."""

    kind = "gimbal"
    _mode = MODE_EULER_ZYX
    _coordinates = (("roll", 0), ("pitch", 1), ("yaw", 2))


class PlanarJoint(JointBase):
    """C moves in D's xy plane: translations x, y and rotation theta about z."""

    kind = "planar"
    _mode = MODE_TWIST_Z
    _coordinates = (("x", 3), ("y", 4), ("theta", 2))


_D6_NAMES = {Axis.TWIST: "twist", Axis.SWING1: "swing1", Axis.SWING2: "swing2", Axis.X: "x", Axis.Y: "y", Axis.Z: "z"}


class D6Joint(JointBase):
    """Per-axis LOCKED / LIMITED / FREE motion of C in D, as the articulation joint (PhysX's PxD6Joint): TWIST,
    SWING1, SWING2 rotate about D's x, y, z, X, Y, Z translate along them. Every axis starts LOCKED; set motions
    before scene.add_joint. The unlocked axes are the coordinates, in that order: translations are the components
    of p in D; rotations are the rotation-vector components (the articulation SPHERICAL joint's positions), or the
    twist angle when exactly one axis rotates. A LIMITED axis takes its range from set_limit_params."""

    kind = "d6"

    def _setup_kind(self):
        self._motion = [Motion.LOCKED] * 6
        self._coordinates = ()
        self._mode = MODE_ROTVEC

    def set_motion(self, axis: Axis, motion: Motion) -> None:
        """LOCKED, LIMITED or FREE motion of an axis, before scene.add_joint; other axes keep their settings."""
        owner = self._owner()
        self._check_not_in_scene("set_motion")
        axis = _axis(owner, axis)
        try:
            motion = Motion(motion)
        except ValueError:
            raise ValidationError(f"{owner}: unknown motion {motion!r}; use artic.Motion") from None
        saved = self._constraint_params()
        self._motion[axis] = motion
        self._coordinates = tuple((_D6_NAMES[Axis(a)], a) for a in range(6) if self._motion[a] != Motion.LOCKED)
        angular = [a for a in range(3) if self._motion[a] != Motion.LOCKED]
        self._mode = MODE_TWIST_X + angular[0] if len(angular) == 1 else MODE_ROTVEC
        self._init_state()
        self._restore_constraint_params(saved)
        if motion == Motion.FREE:
            self._range[self._coord(_D6_NAMES[axis])] = (-np.inf, np.inf)

    def get_motion(self, axis: Axis) -> Motion:
        """LOCKED, LIMITED or FREE: the motion of an axis."""
        return self._motion[_axis(self._owner(), axis)]

    def set_limit_params(self, axis: Axis, limit: Limit) -> None:
        """Range [low, high] of a LIMITED axis [rad or m]."""
        axis = _axis(self._owner(), axis)
        if self._motion[axis] != Motion.LIMITED:
            raise ValidationError(
                f"{self._owner()}: axis {axis.name} is {self._motion[axis].name}; set_motion(axis, "
                "Motion.LIMITED) first"
            )
        self.set_coordinate_range(_D6_NAMES[axis], limit.low, limit.high)

    def get_limit_params(self, axis: Axis) -> Limit:
        """Range of an unlocked axis as a `Limit` [rad or m] (a FREE one's is open: +-inf)."""
        axis = _axis(self._owner(), axis)
        if self._motion[axis] == Motion.LOCKED:
            raise ValidationError(f"{self._owner()}: axis {axis.name} is LOCKED and has no range")
        return Limit(*self.get_coordinate_range(_D6_NAMES[axis]))

    def _constraint_keys(self) -> list:
        return [("slot", s) for s in self._constrained_slots()] + [("range", n) for n, _ in self._coordinates]

    def _constraint_params(self) -> dict:
        """Everything set per constraint and per coordinate, keyed so that it survives a change of motions."""
        out = {
            k: (self._compliance[i], self._damping[i], self._erp[i], self._cfm[i])
            for i, k in enumerate(self._constraint_keys())
        }
        out.update(
            {
                ("coord", n): (self._range[k].copy(), self._locked[k], self._drive[k], self._target[k].copy())
                for k, (n, _) in enumerate(self._coordinates)
            }
        )
        return out

    def _restore_constraint_params(self, saved: dict):
        for i, k in enumerate(self._constraint_keys()):
            if k in saved:
                self._compliance[i], self._damping[i], self._erp[i], self._cfm[i] = saved[k]
        for k, (n, _) in enumerate(self._coordinates):
            if ("coord", n) in saved:
                self._range[k], self._locked[k], self._drive[k], self._target[k] = saved[("coord", n)]


class DistanceJoint(JointBase):
    """PhysX's PxDistanceJoint: the distance between the origins of C and D stays in [min_distance, max_distance]
    (a coordinate 'distance' whose range those are); with a spring (stiffness > 0) the bounds are soft. Rotations
    are free."""

    kind = "distance"
    _mode = MODE_DISTANCE
    _coordinates = (("distance", 3),)

    def set_distance_range(self, min_distance: float = 0.0, max_distance: float = np.inf) -> None:
        """Bounds of the distance between the origins of C and D [m]: 0 <= min, max may be inf."""
        lo = _finite(self._owner(), "min_distance", min_distance)
        if lo < 0:
            raise ValidationError(f"{self._owner()}: min_distance must be >= 0, got {lo}")
        self.set_coordinate_range(0, lo, max_distance)

    def set_spring(self, stiffness: float, damping: float = 0.0) -> None:
        """Soft bounds: a spring of this stiffness [N/m] and damping [N s/m] acts beyond them (0 stiffness: hard)."""
        k = _finite(self._owner(), "spring stiffness", stiffness)
        d = _finite(self._owner(), "spring damping", damping)
        if k < 0 or d < 0:
            raise ValidationError(f"{self._owner()}: spring stiffness and damping must be >= 0, got {k}, {d}")
        self._compliance[0] = 1.0 / k if k > 0 else 0.0
        self._damping[0] = d
        self._erp[0] = -1.0
        self._changed()


JOINT_TYPES = (
    FixedJoint,
    HingeJoint,
    SliderJoint,
    CylindricalJoint,
    SphericalJoint,
    UniversalJoint,
    GimbalJoint,
    PlanarJoint,
    D6Joint,
    DistanceJoint,
)

# PhysX's joints turn about or slide along the x axis of their frames; artic's hinge and slider use z
_X_TO_Z = Transform(np.zeros(3), quat_from_axis_angle((0.0, 1.0, 0.0), 0.5 * np.pi))  # z of the new frame = old x
_PHYSX_KINDS = {
    "fixed": (FixedJoint, False),
    "revolute": (HingeJoint, True),
    "prismatic": (SliderJoint, True),
    "spherical": (SphericalJoint, False),
    "distance": (DistanceJoint, False),
    "d6": (D6Joint, False),
}


def create_physx_joint(
    kind: str,
    actor0: Link | RigidDynamic | RigidStatic | None,
    local_frame0: Transform | tuple[ArrayLike, ArrayLike],
    actor1: Link | RigidDynamic | RigidStatic,
    local_frame1: Transform | tuple[ArrayLike, ArrayLike],
    name: str | None = None,
) -> JointBase:
    """A joint created the PhysX way (PxRevoluteJointCreate(physics, actor0, localFrame0, actor1, localFrame1) and
    its siblings): actor0 is body B with T_DB = localFrame0, actor1 is body A with T_CA = localFrame1 (None for
    actor0 is the world, as PhysX's NULL). For "revolute" and "prismatic" both frames are turned by +90 degrees
    about their y axis, so that PhysX's x axis becomes the hinge's or slider's z axis and the angle or offset keeps
    PhysX's sign. kind: fixed, revolute, prismatic, spherical, distance or d6."""
    try:
        cls, turn = _PHYSX_KINDS[kind]
    except (KeyError, TypeError):
        raise ValidationError(f"create_physx_joint: unknown kind {kind!r}; use one of {sorted(_PHYSX_KINDS)}") from None
    if actor1 is None:
        raise ValidationError("create_physx_joint: actor1 is None; pass the world as actor0 (artic's body B)")
    owner = f"{kind} joint '{name}'"
    f0 = _as_transform(owner, "local_frame0", local_frame0)
    f1 = _as_transform(owner, "local_frame1", local_frame1)
    if turn:
        f0, f1 = f0 * _X_TO_Z, f1 * _X_TO_Z
    return cls.from_body_frames(actor1, f1, actor0, f0, name)
