"""artic's enumerations, in one place: PhysX's with PhysX's numeric values (physx-notes sections 6.1 and 7.1),
ArtiSynth's constraint flags, and artic's own choices (solver, NaN policy)."""

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
    """`PxArticulationDriveType`: FORCE outputs a force/torque, ACCELERATION a mass-independent acceleration, both
    implicit PD rows solved with the constraints. Not PhysX's, for MuJoCo's actuators (an MJCF import's): EXPLICIT is
    the force stiffness (target - q) + damping (target velocity - qdot) of the state the step starts with, clamped
    to +-max_force (a force, whatever DRIVE_LIMITS_ARE_FORCES says) and applied as a joint force, as MuJoCo's Euler
    integrator applies an actuator's; EXPLICIT_STIFFNESS applies the same force and then makes its damping implicit
    after the constraint solve, with the joint's passive damping, as MuJoCo's implicitfast integrator does. Both act on
    revolute and prismatic axes of articulations only."""

    FORCE = 0
    ACCELERATION = 1
    NONE = 2
    EXPLICIT = 3
    EXPLICIT_STIFFNESS = 4


class CacheFlag(IntFlag):
    """`PxArticulationCacheFlag`, with PhysX's bit values. ALL excludes FORCE, LINK_INCOMING_JOINT_FORCE, the
    targets and LINK_FORCE/LINK_TORQUE, as in PhysX."""

    VELOCITY = 1 << 0
    ACCELERATION = 1 << 1
    POSITION = 1 << 2
    FORCE = 1 << 3
    LINK_VELOCITY = 1 << 4
    LINK_ACCELERATION = 1 << 5
    ROOT_TRANSFORM = 1 << 6
    ROOT_VELOCITIES = 1 << 7
    LINK_INCOMING_JOINT_FORCE = 1 << 10
    JOINT_TARGET_POSITIONS = 1 << 11
    JOINT_TARGET_VELOCITIES = 1 << 12
    LINK_FORCE = 1 << 13
    LINK_TORQUE = 1 << 14
    ALL = VELOCITY | ACCELERATION | POSITION | LINK_VELOCITY | LINK_ACCELERATION | ROOT_TRANSFORM | ROOT_VELOCITIES


class SolverType(IntEnum):
    """`PxSolverType`: PGS (PhysX's default) or TGS; DIRECT (artic's, not PhysX's): every row of the step solved
    together as one bounded mixed LCP per env by pivoting (solvers/direct.py)."""

    PGS = 0
    TGS = 1
    DIRECT = 2


class NanPolicy(IntEnum):
    """What a scene does when a step leaves an env's state non-finite."""

    WARN = 0
    RAISE = 1
    FREEZE = 2


class ConstraintFlag(IntFlag):
    """ArtiSynth's RigidBodyConstraint flags: what a constraint restrains, and whether it is a coordinate range."""

    LINEAR = 1
    ROTARY = 2
    LIMIT = 4  # the range constraint of a coordinate (unilateral, engaged only at its bounds)


ANGULAR_AXES = (Axis.TWIST, Axis.SWING1, Axis.SWING2)
LINEAR_AXES = (Axis.X, Axis.Y, Axis.Z)
AXIS_NAMES = {Axis.TWIST: "twist", Axis.SWING1: "swing1", Axis.SWING2: "swing2", Axis.X: "x", Axis.Y: "y", Axis.Z: "z"}
