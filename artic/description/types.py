"""PhysX enumerations, with PhysX's numeric values (physx-notes sections 6.1 and 7.1)."""

from enum import IntEnum, IntFlag


class ArticulationFlag(IntFlag):
    """`PxArticulationFlag`: all off by default (floating base, drive limits as impulses, self-collision on)."""

    FIX_BASE = 1
    DRIVE_LIMITS_ARE_FORCES = 2
    DISABLE_SELF_COLLISION = 4


class JointType(IntEnum):
    """`PxArticulationJointType`. UNDEFINED is the default and must be changed before the scene accepts the joint."""

    FIX = 0
    PRISMATIC = 1
    REVOLUTE = 2
    REVOLUTE_UNWRAPPED = 3
    SPHERICAL = 4
    UNDEFINED = 5


class Axis(IntEnum):
    """`PxArticulationAxis`: rotations about the child joint frame's x, y, z, then translations along them."""

    TWIST = 0
    SWING1 = 1
    SWING2 = 2
    X = 3
    Y = 4
    Z = 5


class Motion(IntEnum):
    """`PxArticulationMotion`: LOCKED is the default for every axis."""

    LOCKED = 0
    LIMITED = 1
    FREE = 2


class DriveType(IntEnum):
    """`PxArticulationDriveType`: FORCE outputs a force/torque, ACCELERATION a mass-independent acceleration."""

    FORCE = 0
    ACCELERATION = 1
    NONE = 2


ANGULAR_AXES = (Axis.TWIST, Axis.SWING1, Axis.SWING2)
LINEAR_AXES = (Axis.X, Axis.Y, Axis.Z)
AXIS_NAMES = {Axis.TWIST: "twist", Axis.SWING1: "swing1", Axis.SWING2: "swing2", Axis.X: "x", Axis.Y: "y", Axis.Z: "z"}
