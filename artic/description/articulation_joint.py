"""An articulation's joints: `Joint` (PhysX's PxArticulationJointReducedCoordinate, the inbound joint of a
non-root link) and the per-axis parameters it takes, `Limit`, `Drive` and `FrictionParams`, with PhysX's defaults
(physx-notes 7.2), and `PassiveParams`, MuJoCo's passive joint spring and damper, which PhysX has no word for.
Every setter validates its input and raises an `ArticError` naming the joint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..enums import AXIS_NAMES, LINEAR_AXES, Axis, DriveType, JointType, Motion
from ..errors import ValidationError
from ..math.np_spatial import Transform
from .deadzone import Deadzone, checked_deadzone
from .softness import Softness, check_softness
from .validate import KnownAttributes, check_axis_settings, nonneg, pose_property
from .validate import axis as _axis
from .validate import bounded as _bounded
from .validate import finite as _finite

if TYPE_CHECKING:
    from .articulation import Articulation, Link


@dataclass
class Limit(KnownAttributes):
    """`PxArticulationLimit`: position range [low, high] of one axis (rad or m)."""

    low: float = 0.0
    high: float = 0.0


@dataclass
class Drive(KnownAttributes):
    """`PxArticulationDrive`: implicit PD gains, force (or impulse) limit and drive type of one axis."""

    stiffness: float = 0.0
    damping: float = 0.0
    max_force: float = 0.0
    drive_type: DriveType = DriveType.NONE


@dataclass
class FrictionParams(KnownAttributes):
    """`PxJointFrictionParams` (PhysX 5.6 model): static and dynamic friction efforts [N or Nm] and a viscous
    coefficient [N s/m or Nm s/rad]. All zero (the default) leaves the axis to the coefficient model."""

    static_friction_effort: float = 0.0
    dynamic_friction_effort: float = 0.0
    viscous_friction_coefficient: float = 0.0


@dataclass
class PassiveParams(KnownAttributes):
    """MuJoCo's passive spring and damper of one axis (its joint stiffness, damping and springref): the force
    stiffness (reference - q), explicit, and -damping qdot, implicit after the constraints are solved, as MuJoCo's
    Euler integrator applies them (dynamics/passive.py). Unlike a `Drive` (PhysX's implicit PD row,
    solved with the constraints, so that a contact pushing a damped joint meets the damper's resistance) they
    reproduce MuJoCo's trajectories with contacts. [N/m or Nm/rad], [N s/m or Nm s/rad], [m or rad]."""

    stiffness: float = 0.0
    damping: float = 0.0
    reference: float = 0.0


class Joint(KnownAttributes):
    """`PxArticulationJointReducedCoordinate`: the inbound joint of a non-root link."""

    def __init__(self, child: Link, parent: Link, name: str):
        self.child_link = child
        self.parent_link = parent
        self.name = name
        self._parent_pose = Transform()
        self._child_pose = Transform()
        self._type = JointType.UNDEFINED
        self._motion = [Motion.LOCKED] * 6
        self._limit = [Limit() for _ in range(6)]
        self._drive = [Drive() for _ in range(6)]
        self._friction_params = [FrictionParams() for _ in range(6)]
        self._passive = [PassiveParams() for _ in range(6)]
        self._drive_target = np.zeros(6)
        self._drive_velocity = np.zeros(6)
        self._armature = np.zeros(6)
        self._max_joint_velocity = np.full(6, 100.0)
        self._position = np.zeros(6)
        self._velocity = np.zeros(6)
        self._friction_coefficient = 0.05
        self._deadzone = {}  # Axis -> Deadzone (description/deadzone.py)
        self._limit_softness = None  # Softness of every limited axis (description/softness.py); None: hard
        self._friction_softness = None  # Softness of its friction effort (MuJoCo's frictionloss); None: PhysX's

    def __repr__(self):
        return f"Joint('{self.name}', {self._type.name})"

    def _owner(self) -> str:
        return f"joint '{self.name}'"

    @property
    def articulation(self) -> Articulation:
        """The articulation the joint belongs to (its child link's)."""
        return self.child_link.articulation

    def _changed(self, what="model", part=None):
        self.articulation._changed(what, part)

    # -- frames and type ------------------------------------------------------------------------------------------
    parent_pose = pose_property("parent_pose", "Joint frame in the parent link's actor frame.")
    child_pose = pose_property("child_pose", "Joint frame in the child link's actor frame.")

    def set_joint_type(self, joint_type: JointType) -> None:
        """PhysX's `setJointType`: FIX, PRISMATIC, REVOLUTE, REVOLUTE_UNWRAPPED or SPHERICAL, before set_motion; only
        while the articulation is out of a scene."""
        self.articulation._check_topology_change(self._owner(), "set_joint_type")
        try:
            self._type = JointType(joint_type)
        except ValueError:
            raise ValidationError(f"{self._owner()}: unknown joint type {joint_type!r}; use artic.JointType") from None
        self._changed()

    def get_joint_type(self) -> JointType:
        """The joint type (PhysX `getJointType`; UNDEFINED until set)."""
        return self._type

    def set_motion(self, axis: Axis, motion: Motion) -> None:
        """Lock, limit or free one axis. The joint type must be set first, and the axis must suit it (PhysX's
        `isValidMotion`): prismatic takes one of X/Y/Z, revolute one of TWIST/SWING1/SWING2, spherical angular
        axes only, FIX none."""
        owner = self._owner()
        self.articulation._check_topology_change(owner, "set_motion")
        axis = _axis(owner, axis)
        try:
            motion = Motion(motion)
        except ValueError:
            raise ValidationError(f"{owner}: unknown motion {motion!r}; use artic.Motion") from None
        if motion != Motion.LOCKED:
            t = self._type
            if t == JointType.UNDEFINED:
                raise ValidationError(f"{owner}: set the joint type before set_motion")
            if t == JointType.FIX:
                raise ValidationError(f"{owner}: a FIX joint has no free axes")
            if t == JointType.PRISMATIC and axis not in LINEAR_AXES:
                raise ValidationError(f"{owner}: a PRISMATIC joint moves along X, Y or Z, not {axis.name}")
            if t in (JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED, JointType.SPHERICAL) and axis in LINEAR_AXES:
                raise ValidationError(
                    f"{owner}: a {t.name} joint rotates about TWIST, SWING1 or SWING2, not {axis.name}"
                )
            if t in (JointType.PRISMATIC, JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED):
                others = [Axis(a).name for a in range(6) if a != axis and self._motion[a] != Motion.LOCKED]
                if others:
                    raise ValidationError(f"{owner}: a {t.name} joint has one free axis; {others[0]} is already free")
        self._motion[axis] = motion
        self._changed("topology")

    def get_motion(self, axis: Axis) -> Motion:
        """LOCKED, LIMITED or FREE: the motion of one axis (PhysX `getMotion`)."""
        return self._motion[_axis(self._owner(), axis)]

    def dof_axes(self) -> list[Axis]:
        """The unlocked axes in PhysX dof order (TWIST, SWING1, SWING2, X, Y, Z)."""
        return [Axis(a) for a in range(6) if self._motion[a] != Motion.LOCKED]

    # -- per-axis parameters --------------------------------------------------------------------------------------
    def _check_in_scene_axis(self, axis: Axis, what: str):
        """In a scene the motions are frozen, so a limit, drive, target or state on a locked axis can be refused at
        once (out of a scene, Joint.validate refuses it when the articulation is added)."""
        if self.articulation._scene is not None and self._motion[axis] == Motion.LOCKED:
            raise ValidationError(
                f"{self._owner()}: axis {axis.name} is LOCKED, so a {what} on it would never act; "
                "set it on an unlocked axis"
            )

    def set_limit_params(self, axis: Axis, limit: Limit) -> None:
        """The range of a LIMITED axis, low < high; Limit() (the default) clears the limit of another axis."""
        owner = self._owner()
        axis = _axis(owner, axis)
        if not isinstance(limit, Limit):
            raise ValidationError(f"{owner}: set_limit_params takes an artic.Limit, got {type(limit).__name__}")
        if limit != Limit():
            self._check_in_scene_axis(axis, "limit")
        # not bounded like positions: huge finite limits (URDFs use +-1e16) mean "unlimited" and overflow nothing
        low = _finite(owner, f"{AXIS_NAMES[axis]} limit low", limit.low)
        high = _finite(owner, f"{AXIS_NAMES[axis]} limit high", limit.high)
        cleared = (low, high) == (0.0, 0.0) and self._motion[axis] != Motion.LIMITED  # Limit(): "no limit"
        if low >= high and not cleared:
            raise ValidationError(f"{owner}: {AXIS_NAMES[axis]} limit low {low} >= high {high}; give low < high")
        self._limit[axis] = Limit(low, high)
        self._changed()

    def get_limit_params(self, axis: Axis) -> Limit:
        """A copy of one axis's `Limit` [rad or m] (PhysX `getLimitParams`)."""
        lim = self._limit[_axis(self._owner(), axis)]
        return Limit(lim.low, lim.high)

    @property
    def limit_softness(self) -> Softness | None:
        """MuJoCo's soft limit (solreflimit, solimplimit) for every LIMITED axis of the joint: a row that acts only
        while the axis is beyond its range, with MuJoCo's reference acceleration and regularizer
        (constraints/softness.py); None (the default): PhysX's hard, speculative limit."""
        return self._limit_softness

    @limit_softness.setter
    def limit_softness(self, value: Softness | None) -> None:
        self._limit_softness = check_softness(self._owner(), value)
        self._changed()

    @property
    def friction_softness(self) -> Softness | None:
        """MuJoCo's soft joint friction (frictionloss with solreffriction, solimpfriction) for every axis with a
        static friction effort: one row bounded by +-the effort, with MuJoCo's reference acceleration (-b qdot) and
        regularizer, so that a joint pushed below its friction effort still creeps as MuJoCo's does; None (the
        default): PhysX's static, dynamic and viscous friction model."""
        return self._friction_softness

    @friction_softness.setter
    def friction_softness(self, value: Softness | None) -> None:
        self._friction_softness = check_softness(self._owner(), value)
        self._changed()

    def set_drive_params(self, axis: Axis, drive: Drive) -> None:
        """PhysX's `setDriveParams`: the implicit PD drive of one axis (stiffness, damping and max_force >= 0, drive
        type); Drive() switches it off."""
        owner = self._owner()
        axis = _axis(owner, axis)
        name = AXIS_NAMES[axis]
        if not isinstance(drive, Drive):
            raise ValidationError(f"{owner}: set_drive_params takes an artic.Drive, got {type(drive).__name__}")
        if drive != Drive():
            self._check_in_scene_axis(axis, "drive")
        try:
            drive_type = DriveType(drive.drive_type)
        except ValueError:
            raise ValidationError(f"{owner}: unknown drive type {drive.drive_type!r}; use artic.DriveType") from None
        self._drive[axis] = Drive(
            nonneg(owner, f"{name} drive stiffness", drive.stiffness),
            nonneg(owner, f"{name} drive damping", drive.damping),
            nonneg(owner, f"{name} drive max_force", drive.max_force),
            drive_type,
        )
        self._changed()

    def get_drive_params(self, axis: Axis) -> Drive:
        """A copy of one axis's `Drive` (PhysX `getDriveParams`)."""
        d = self._drive[_axis(self._owner(), axis)]
        return Drive(d.stiffness, d.damping, d.max_force, d.drive_type)

    def set_friction_params(self, axis: Axis, params: FrictionParams) -> None:
        """PhysX 5.6's `setFrictionParams`: static and dynamic friction efforts and the viscous coefficient of one axis,
        all >= 0."""
        owner, axis = self._owner(), _axis(self._owner(), axis)
        name = AXIS_NAMES[axis]
        if not isinstance(params, FrictionParams):
            raise ValidationError(
                f"{owner}: set_friction_params takes an artic.FrictionParams, got {type(params).__name__}"
            )
        self._friction_params[axis] = FrictionParams(
            nonneg(owner, f"{name} static friction effort", params.static_friction_effort),
            nonneg(owner, f"{name} dynamic friction effort", params.dynamic_friction_effort),
            nonneg(owner, f"{name} viscous friction coefficient", params.viscous_friction_coefficient),
        )
        self._changed()

    def get_friction_params(self, axis: Axis) -> FrictionParams:
        """A copy of one axis's `FrictionParams`."""
        p = self._friction_params[_axis(self._owner(), axis)]
        return FrictionParams(p.static_friction_effort, p.dynamic_friction_effort, p.viscous_friction_coefficient)

    def set_passive_params(self, axis: Axis, params: PassiveParams) -> None:
        """MuJoCo's passive spring and damper of one axis (`PassiveParams`): stiffness and damping >= 0, a finite
        reference."""
        owner, axis = self._owner(), _axis(self._owner(), axis)
        name = AXIS_NAMES[axis]
        if not isinstance(params, PassiveParams):
            raise ValidationError(
                f"{owner}: set_passive_params takes an artic.PassiveParams, got {type(params).__name__}"
            )
        self._passive[axis] = PassiveParams(
            nonneg(owner, f"{name} passive stiffness", params.stiffness),
            nonneg(owner, f"{name} passive damping", params.damping),
            _bounded(owner, f"{name} passive reference", params.reference),
        )
        self._changed()

    def get_passive_params(self, axis: Axis) -> PassiveParams:
        """A copy of one axis's `PassiveParams` (all 0 by default)."""
        p = self._passive[_axis(self._owner(), axis)]
        return PassiveParams(p.stiffness, p.damping, p.reference)

    def _set_axis_value(self, store, axis, value, what, non_negative=False, kind="model", field=None):
        owner = self._owner()
        axis = _axis(owner, axis)
        check = nonneg if non_negative else _bounded
        value = check(owner, f"{AXIS_NAMES[axis]} {what}", value)
        if kind != "model" and value != 0.0:
            self._check_in_scene_axis(axis, what)
        store[axis] = value
        # a scene rewrites only this dof's column of `field` in every env, keeping what apply_cache set elsewhere
        part = (field, self._dof_index(axis)) if field is not None and self.articulation._scene is not None else None
        self._changed(kind, part)

    def _dof_index(self, axis):
        """The cache column of one of this joint's axes (only in a scene, where the topology is fixed)."""
        return next(k for k, (j, a) in enumerate(self.articulation.dof_list()) if j is self and a == axis)

    def set_drive_target(self, axis: Axis, target: float) -> None:
        """PhysX's `setDriveTarget`: the drive's target position of one axis [rad or m]. In a scene it becomes this
        dof's target in every env; other dofs keep theirs (per env: apply_cache with JOINT_TARGET_POSITIONS)."""
        self._set_axis_value(
            self._drive_target, axis, target, "drive target", kind="control", field="joint_target_position"
        )

    def get_drive_target(self, axis: Axis) -> float:
        """The drive's target position of one axis in the description [rad or m]."""
        return float(self._drive_target[_axis(self._owner(), axis)])

    def set_drive_velocity(self, axis: Axis, velocity: float) -> None:
        """PhysX's `setDriveVelocity`: the drive's target velocity of one axis [rad/s or m/s]; in a scene it becomes
        this dof's target velocity in every env, as set_drive_target."""
        self._set_axis_value(
            self._drive_velocity, axis, velocity, "drive velocity", kind="control", field="joint_target_velocity"
        )

    def get_drive_velocity(self, axis: Axis) -> float:
        """The drive's target velocity of one axis in the description [rad/s or m/s]."""
        return float(self._drive_velocity[_axis(self._owner(), axis)])

    def set_armature(self, axis: Axis, armature: float) -> None:
        """Reflected rotor inertia added to the dof's diagonal of the mass matrix [kg m^2 or kg]."""
        self._set_axis_value(self._armature, axis, armature, "armature", non_negative=True)

    def set_deadzone(self, axis: Axis, deadzone: Deadzone | None) -> None:
        """A deadzone controller on a free or limited axis (artic.Deadzone; None removes it); direct solver only."""
        axis = _axis(self._owner(), axis)
        self._deadzone.pop(axis, None)
        if deadzone is not None:
            self._deadzone[axis] = checked_deadzone(f"{self._owner()} {AXIS_NAMES[axis]}", deadzone)
        self._changed()

    def get_deadzone(self, axis: Axis) -> Deadzone | None:
        """The deadzone controller of one axis, or None."""
        return self._deadzone.get(_axis(self._owner(), axis))

    def get_armature(self, axis: Axis) -> float:
        """The armature of one axis [kg m^2 or kg] (default 0)."""
        return float(self._armature[_axis(self._owner(), axis)])

    def set_max_joint_velocity(self, axis: Axis, max_velocity: float) -> None:
        """PhysX's `setMaxJointVelocity`: the speed limit of one axis [rad/s or m/s], >= 0 (default 100)."""
        self._set_axis_value(self._max_joint_velocity, axis, max_velocity, "max joint velocity", non_negative=True)

    def get_max_joint_velocity(self, axis: Axis) -> float:
        """The speed limit of one axis [rad/s or m/s] (default 100)."""
        return float(self._max_joint_velocity[_axis(self._owner(), axis)])

    def set_joint_position(self, axis: Axis, position: float) -> None:
        """Set the position of one axis [rad or m]; in a scene it becomes this dof's position in every env (other dofs,
        velocities and the root keep theirs)."""
        self._set_axis_value(self._position, axis, position, "joint position", kind="state", field="joint_q")

    def get_joint_position(self, axis: Axis) -> float:
        """The position of one axis in the description [rad or m]; a scene's per-env positions are read through the
        cache."""
        return float(self._position[_axis(self._owner(), axis)])

    def set_joint_velocity(self, axis: Axis, velocity: float) -> None:
        """Set the velocity of one axis [rad/s or m/s]; in a scene it becomes this dof's velocity in every env, as
        set_joint_position."""
        self._set_axis_value(self._velocity, axis, velocity, "joint velocity", kind="state", field="joint_qd")

    def get_joint_velocity(self, axis: Axis) -> float:
        """The velocity of one axis in the description [rad/s or m/s]; a scene's per-env velocities are read through the
        cache."""
        return float(self._velocity[_axis(self._owner(), axis)])

    @property
    def friction_coefficient(self) -> float:
        """PhysX's coefficient joint-friction model, the same for all axes (default 0.05, active by default)."""
        return self._friction_coefficient

    @friction_coefficient.setter
    def friction_coefficient(self, value: float):
        self._friction_coefficient = nonneg(self._owner(), "friction coefficient", value)
        self._changed()

    def validate(self) -> None:
        """Checks that need the whole joint (run when the articulation enters a scene)."""
        owner = self._owner()
        free = self.dof_axes()
        t = self._type
        if t == JointType.UNDEFINED:
            raise ValidationError(f"{owner}: joint type is UNDEFINED; call set_joint_type before adding to a scene")
        if t in (JointType.PRISMATIC, JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED) and len(free) != 1:
            raise ValidationError(f"{owner}: a {t.name} joint needs exactly one unlocked axis, has {len(free)}")
        if t == JointType.SPHERICAL and not free:
            raise ValidationError(f"{owner}: a SPHERICAL joint needs at least one unlocked angular axis")
        for a in free:
            if self._motion[a] == Motion.LIMITED:
                lim = self._limit[a]
                if lim.low >= lim.high:
                    raise ValidationError(
                        f"{owner}: axis {a.name} is LIMITED but its limit is [{lim.low}, {lim.high}]; "
                        "call set_limit_params with low < high"
                    )
            if t == JointType.REVOLUTE and abs(self._position[a]) > 2 * np.pi:
                raise ValidationError(f"{owner}: a REVOLUTE position must lie in [-2pi, 2pi], got {self._position[a]}")
            if t == JointType.SPHERICAL and abs(self._position[a]) > np.pi:
                raise ValidationError(f"{owner}: a SPHERICAL position must lie in [-pi, pi], got {self._position[a]}")
        check_axis_settings(self)
