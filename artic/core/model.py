"""`ArticulationModel`: the immutable device description of one articulation, or of a forest of them, shared by
all envs.

Each articulation has its own model (its inverse dynamics and cache work on it alone). The scene also concatenates
the articulations that may touch each other into one forest, a *block* (sim/block.py), so that one thread steps every
body of an env together and contacts between them are ordinary rows. Kernels take a model's arrays plus its sizes
as arguments, so no kernel is generated per model. Within a tree, links are in PhysX low-level (breadth-first)
order; trees follow each other, so every parent index is smaller than its child's; dofs are in cache order.
Generalized coordinates are per tree: a floating root's six (COM linear, angular), then the tree's joint dofs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import warp as wp

from ..enums import JointType
from .structs import bundle

SOFT_PARAMS = 7  # a soft row's parameters: solref (2), solimp (5) (constraints/softness.py)
soft_params = wp.types.vector(length=SOFT_PARAMS, dtype=float)

# joint type codes seen by kernels; the root link's code says whether the base is fixed or floating
JOINT_FIX = int(JointType.FIX)
JOINT_PRISMATIC = int(JointType.PRISMATIC)
JOINT_REVOLUTE = int(JointType.REVOLUTE)
JOINT_REVOLUTE_UNWRAPPED = int(JointType.REVOLUTE_UNWRAPPED)
JOINT_SPHERICAL = int(JointType.SPHERICAL)
JOINT_FREE_ROOT = 6  # internal: a floating root link


@wp.struct
class Tree:
    """The topology and inertia arrays every tree algorithm reads, passed as one argument (fields as in
    ArticulationModel; `link_com_local` is its `link_com`)."""

    link_count: int
    tree_count: int
    link_tree: wp.array(dtype=int)
    link_root_gen: wp.array(dtype=int)
    dof_gen: wp.array(dtype=int)
    tree_root: wp.array(dtype=int)
    tree_gen_start: wp.array(dtype=int)
    tree_gen_count: wp.array(dtype=int)
    tree_kinematic: wp.array(dtype=int)
    gen_parent: wp.array(dtype=int)
    link_parent: wp.array(dtype=int)
    joint_type: wp.array(dtype=int)
    joint_dof_start: wp.array(dtype=int)
    joint_dof_count: wp.array(dtype=int)
    dof_axis: wp.array(dtype=int)
    dof_armature: wp.array(dtype=float)
    link_root_armature: wp.array(dtype=float)
    link_mass: wp.array(dtype=float)
    joint_parent_pose: wp.array(dtype=wp.transform)
    joint_child_pose_inv: wp.array(dtype=wp.transform)
    link_com_local: wp.array(dtype=wp.vec3)
    link_principal_inertia: wp.array(dtype=wp.vec3)
    link_com_rot: wp.array(dtype=wp.quat)


@dataclass
class ArticulationModel:
    """Topology and constant parameters of one articulation or a forest of T of them (sizes: L links, n dofs,
    N generalized dofs = n + 6 per floating root). `floating` describes the first tree."""

    link_count: int
    dof_count: int
    floating: bool
    tree_count: int = 1
    gen_count: int = 0  # N
    link_parent: wp.array = None  # (L,) int32: parent link index, -1 for a tree's root
    link_tree: wp.array = None  # (L,) int32: the tree (articulation) each link belongs to
    link_root_gen: wp.array = None  # (L,) int32: first of the tree's six root coordinates in N, -1 for a fixed base
    dof_gen: wp.array = None  # (n,) int32: each dof's index in the generalized vector
    tree_root: wp.array = None  # (T,) int32: root link of each tree
    tree_gen_start: wp.array = None  # (T,) int32: first generalized index of each tree (M is block-diagonal)
    tree_gen_count: wp.array = None  # (T,) int32: generalized dofs of each tree
    tree_kinematic: wp.array = None  # (T,) int32: 1 for a kinematic body's tree (its root follows pose targets)
    gen_parent: wp.array = None  # (N,) int32: parent generalized coordinate in the tree (M's sparsity), -1 for none
    joint_type: wp.array = None  # (L,) int32: JointType of the inbound joint; JOINT_FIX/JOINT_FREE_ROOT at the root
    joint_parent_pose: wp.array = None  # (L,) transform: joint frame in the parent's actor frame
    joint_child_pose: wp.array = None  # (L,) transform: joint frame in the child's actor frame
    joint_child_pose_inv: wp.array = None  # (L,) transform: its inverse (kept to save the inversion per step)
    joint_dof_start: wp.array = None  # (L,) int32: first dof of the inbound joint
    joint_dof_count: wp.array = None  # (L,) int32: unlocked axes of the inbound joint (0..3)
    link_mass: wp.array = None  # (L,) float32 [kg]
    link_com: wp.array = None  # (L,) vec3 [m]: COM in the link's actor frame
    link_principal_inertia: wp.array = None  # (L,) vec3 [kg m^2]: principal moments about the COM
    link_com_rot: wp.array = None  # (L,) quat: principal axes in the link's actor frame
    dof_axis: wp.array = None  # (n,) int32: PhysX Axis of each dof (0..2 rotations, 3..5 translations)
    dof_armature: wp.array = None  # (n,) float32 [kg m^2 or kg]: added to the dof's mass-matrix diagonal
    link_root_armature: wp.array = None  # (L,) float32 [kg and kg m^2]: a floating root's root_armature, else 0
    flags: int = 0  # ArticulationFlag bits
    host: dict = field(default_factory=dict)  # the same arrays as NumPy, for host-side bookkeeping
    tree: Tree = None  # the arrays above bundled for kernels

    def bundle(self) -> None:
        self.tree = bundle(Tree, self, link_com_local="link_com")

    @property
    def gen_offset(self) -> int:
        """Where the first tree's joint dofs start in the generalized vector (after its floating root)."""
        return 6 if self.floating else 0


# drive codes of DofParams.dof_drive (which update rule a dof's drive row follows, constraints/drive.py); the
# explicit ones have no row: their force joins the unconstrained step's (step_kernel._unconstrained_dynamics)
DRIVE_NONE = wp.constant(0)
DRIVE_FORCE = wp.constant(1)
DRIVE_ACCELERATION = wp.constant(2)
DRIVE_EXPLICIT = wp.constant(3)
DRIVE_EXPLICIT_STIFFNESS = wp.constant(4)  # its damping implicit after the solve, as MuJoCo's implicitfast (passive.py)


@wp.struct
class DofParams:
    """The joint and link properties the step reads besides topology and inertia (n dofs, L links): drives,
    limits, friction, velocity caps and cfm per dof (PhysX's PxArticulationJointReducedCoordinate), damping and
    velocity caps per link (PxArticulationLink). One per block (trees concatenated, as in `Tree`)."""

    dof_drive: wp.array(dtype=int)  # (n,) DRIVE_*
    dof_stiffness: wp.array(dtype=float)  # (n,) [N/m, Nm/rad] or [1/s^2] for acceleration drives
    dof_damping: wp.array(dtype=float)  # (n,) [N s/m, Nm s/rad] or [1/s]
    dof_max_force: wp.array(dtype=float)  # (n,) [N or Nm] or impulse [N s or Nm s] (see dof_limits_are_forces)
    dof_quat_drive: wp.array(dtype=int)  # (n,) 1 for dofs of a spherical joint with > 1 dof (quaternion error)
    dof_limit_low: wp.array(dtype=float)  # (n,) [rad or m]; only read for LIMITED dofs
    dof_limit_high: wp.array(dtype=float)  # (n,) [rad or m]
    dof_limit_soft: wp.array(dtype=soft_params)  # (n,) solref, solimp of a soft limit; zeros: hard
    dof_friction_soft: wp.array(dtype=soft_params)  # (n,) of MuJoCo's soft frictionloss; zeros: PhysX's friction
    dof_inverse_weight: wp.array(dtype=float)  # (n,) (M^-1)_dd at the reference pose, a soft limit's scale
    dof_max_velocity: wp.array(dtype=float)  # (n,) [rad/s or m/s]
    dof_friction_coef: wp.array(dtype=float)  # (n,) the joint's coefficient (deprecated model)
    friction_loads: int  # 1 when any dof has a coefficient: the step's RNEA then gives the loads it scales
    dof_static_friction: wp.array(dtype=float)  # (n,) [N or Nm]
    dof_dynamic_friction: wp.array(dtype=float)  # (n,) [N or Nm]
    dof_viscous_friction: wp.array(dtype=float)  # (n,) [N s/m or Nm s/rad]
    dof_passive: wp.array(dtype=wp.vec3)  # (n,) MuJoCo's stiffness, damping, reference (PassiveParams)
    passive: int  # 1 when any dof has PassiveParams or a floating root root_damping (else the step skips them)
    dof_cfm: wp.array(dtype=float)  # (n,) max(link cfm, parent cfm); a fixed root has cfm 0
    dof_link: wp.array(dtype=int)  # (n,) link whose inbound joint owns the dof
    dof_limits_are_forces: wp.array(dtype=int)  # (n,) 1 where the articulation has DRIVE_LIMITS_ARE_FORCES
    link_linear_damping: wp.array(dtype=float)  # (L,) [1/s]
    link_angular_damping: wp.array(dtype=float)  # (L,) [1/s]
    link_max_linear_velocity: wp.array(dtype=float)  # (L,) [m/s]
    link_max_angular_velocity: wp.array(dtype=float)  # (L,) [rad/s]
    link_gravity_scale: wp.array(dtype=float)  # (L,) share of the scene's gravity acting on the link (1: all)
    link_root_damping: wp.array(dtype=float)  # (L,) [N s/m, N m s/rad] a floating root's root_damping, else 0
    link_fluid: wp.array(dtype=wp.vec3)  # (L,) the medium's density [kg/m^3], viscosity [Pa s], 0 (fluid.py)
    link_wind: wp.array(dtype=wp.vec3)  # (L,) the medium's velocity [m/s], world frame
    link_fluid_box: wp.array(dtype=wp.vec3)  # (L,) sides of the link's inertia box [m], in its principal axes
