"""`ArticulationData`: per-env intermediates and outputs of the dynamics kernels (E envs, L links, n dofs, N gen).

Spatial vectors here are artic's internal form (docs/conventions.md): world axes, about the env's reference point
O = the root link's actor origin (a forest's: its first tree's), motion vectors (angular, linear) and force vectors
(torque about O, force).
"""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp

from .structs import bundle


@wp.struct
class Kin:
    """Per-env kinematic quantities shared by the tree algorithms (fields as in ArticulationData)."""

    origin: wp.array(dtype=wp.vec3)
    link_com: wp.array2d(dtype=wp.vec3)
    link_inertia: wp.array2d(dtype=wp.mat33)
    link_origin: wp.array2d(dtype=wp.vec3)
    dof_motion: wp.array2d(dtype=wp.spatial_vector)


@wp.struct
class Scratch:
    """Per-env scratch of the tree algorithms (fields as in ArticulationData)."""

    link_v: wp.array2d(dtype=wp.spatial_vector)
    link_a: wp.array2d(dtype=wp.spatial_vector)
    link_f: wp.array2d(dtype=wp.spatial_vector)
    link_c: wp.array2d(dtype=wp.spatial_vector)
    link_ia: wp.array2d(dtype=wp.spatial_matrix)
    link_dinv: wp.array2d(dtype=wp.mat33)
    link_u: wp.array2d(dtype=wp.vec3)
    dof_u: wp.array2d(dtype=wp.spatial_vector)
    comp_mass: wp.array2d(dtype=float)
    comp_h: wp.array2d(dtype=wp.vec3)
    comp_j: wp.array2d(dtype=wp.mat33)


@wp.struct
class StepData:
    """Per-env intermediates of one simulation step (E envs, n dofs, N generalized dofs, L links, R rows)."""

    gen_v: wp.array2d(dtype=float)  # (E, N): the velocity the solver works on
    gen_a: wp.array2d(dtype=float)  # (E, N): unconstrained acceleration
    gen_f: wp.array2d(dtype=float)  # (E, N): applied generalized force; scratch output of RNEA passes
    gen_v0: wp.array2d(dtype=float)  # (E, N): velocity at the start of the step, before the velocity pre-scale
    gen_vpos: wp.array2d(dtype=float)  # (E, N): velocity at the end of the position iterations (PGS integrates it)
    q0: wp.array2d(dtype=float)  # (E, n) [rad or m]: joint positions at the start of the step (a frozen env's)
    root_pose0: wp.array2d(dtype=wp.transform)  # (E, T): root poses at the start of the step
    link_fext: wp.array2d(dtype=wp.spatial_vector)  # (E, L): applied (force, torque) at each COM this step
    link_vel0: wp.array2d(dtype=wp.spatial_vector)  # (E, L): COM velocities at the start of the step
    # (E, n): each dof's drive error target - q [rad or m], target velocity - qd [rad/s or m/s] and applied joint
    # force [N or Nm] when the last step's contacts were detected (collision/reach.py); 1e30 before any step
    dof_command0: wp.array2d(dtype=wp.vec3)
    link_struck: wp.array2d(dtype=int)  # (E, L): 1 where a link keeps all its speculative contacts this step
    link_pose_sub: wp.array2d(dtype=wp.transform)  # (E, L): link poses after the latest TGS substep
    link_bias: wp.array2d(dtype=wp.spatial_vector)  # (E, L): spatial accelerations about O at zero joint
    # accelerations (J-dot q-dot), at the start of the step; for MuJoCo-soft joints between bodies
    mass_matrix: wp.array3d(dtype=float)  # (E, N, N): M(q) at the start of the step
    minv: wp.array3d(dtype=float)  # (E, N, N): M^-1 (its column d is the velocity change per unit impulse on d)
    dof_r: wp.array2d(dtype=float)  # (E, n): response r = (M^-1)_dd
    dof_recip: wp.array2d(dtype=float)  # (E, n): 1 / (r + cfm)
    dof_geom_error: wp.array2d(dtype=float)  # (E, n): drive target - position at the start of the step
    dof_err_low: wp.array2d(dtype=float)  # (E, n): q - low
    dof_err_high: wp.array2d(dtype=float)  # (E, n): high - q
    # a soft limit's row for the step (constraints/softness.py), on the violated side: cfm SOFT_HARD for a hard
    # limit, SOFT_APART for a soft one within its range (no row)
    dof_soft_target: wp.array2d(dtype=float)  # (E, n) [rad/s or m/s]
    dof_soft_cfm: wp.array2d(dtype=float)  # (E, n)
    dof_dq: wp.array2d(dtype=float)  # (E, n): position change accumulated over TGS substeps
    dof_friction_force: wp.array2d(dtype=float)  # (E, n): coefficient * (|F| + |T|) transmitted, [N or Nm]
    dof_drive_coef: wp.array2d(dtype=wp.types.vector(length=5, dtype=float))  # (E, n): drive coefficients
    cpl_g: wp.array3d(dtype=float)  # (E, K, N): generalized impulse direction of each coupling row
    cpl_minv_g: wp.array3d(dtype=float)  # (E, K, N): M^-1 g, the velocity change per unit coupling impulse
    cpl_r: wp.array2d(dtype=float)  # (E, K): response g^T M^-1 g
    cpl_acc: wp.array2d(dtype=float)  # (E, K): accumulated tendon rest-length impulse
    cpl_acc2: wp.array2d(dtype=float)  # (E, K): accumulated tendon limit impulse
    cpl_len: wp.array2d(dtype=float)  # (E, K): spatial tendon path length (refreshed per TGS substep)
    cpl_soft_target: wp.array2d(dtype=float)  # (E, K) [m/s or rad/s]: a MuJoCo-soft mimic row's target
    cpl_soft_cfm: wp.array2d(dtype=float)  # (E, K): its cfm; SOFT_HARD for every other row
    row_lambda: wp.array2d(dtype=float)  # (E, R): accumulated impulse (the low side for limits)
    row_lambda2: wp.array2d(dtype=float)  # (E, R): accumulated high-side limit impulse
    joint_acceleration: wp.array2d(dtype=float)  # (E, n): reported (v_end - v_start) / dt
    link_acceleration: wp.array2d(dtype=wp.spatial_vector)  # (E, L): reported COM accelerations
    link_incoming_joint_force: wp.array2d(dtype=wp.spatial_vector)  # (E, L): reported, child joint frame
    solver_iterations: wp.array(dtype=wp.int32)  # (E,): position iterations (sweeps) the last step ran, solvers/pgs.py


@dataclass
class ArticulationData:
    origin: wp.array  # (E,) vec3 [m]: reference point O of the env (root actor origin, world)
    link_com: wp.array  # (E, L) vec3 [m]: link COM relative to O, world axes
    link_inertia: wp.array  # (E, L) mat33 [kg m^2]: link rotational inertia about O, world axes
    link_origin: wp.array  # (E, L) vec3 [m]: link frame origin relative to O, world axes (a root's armature)
    dof_motion: wp.array  # (E, n) spatial_vector: joint motion subspace columns (motion about O)
    link_v: wp.array  # (E, L) spatial_vector: scratch, link spatial velocities
    link_a: wp.array  # (E, L) spatial_vector: scratch, link spatial accelerations
    link_f: wp.array  # (E, L) spatial_vector: scratch, link forces (RNEA) or articulated bias forces (ABA)
    link_c: wp.array  # (E, L) spatial_vector: scratch, velocity-product accelerations (ABA)
    link_ia: wp.array  # (E, L) spatial_matrix: scratch, articulated inertias (ABA)
    comp_mass: wp.array  # (E, L) float32: scratch, composite mass (CRBA)
    comp_h: wp.array  # (E, L) vec3: scratch, composite first moment sum m c (CRBA)
    comp_j: wp.array  # (E, L) mat33: scratch, composite rotational inertia about O (CRBA)
    link_dinv: wp.array  # (E, L) mat33: scratch, inverse joint-space articulated inertia (ABA), padded to 3x3
    link_u: wp.array  # (E, L) vec3: scratch, ABA joint-space bias u, padded to 3
    dof_u: wp.array  # (E, n) spatial_vector: scratch, ABA U = I^A S columns
    gen_v: wp.array  # (E, N) float32: generalized velocity input
    gen_a: wp.array  # (E, N) float32: generalized acceleration input/output
    gen_f: wp.array  # (E, N) float32: generalized force input/output
    link_fext: wp.array  # (E, L) spatial_vector: external (force, torque) at each COM, world, public order
    mass_matrix: wp.array  # (E, N, N) float32: M(q), generalized order
    jacobian: wp.array  # (E, 6R, N) float32: dense Jacobian, R = L (floating) or L-1 (fixed)
    com: wp.array  # (E,) vec3 [m]: articulation COM, world or root frame
    centroidal_matrix: wp.array  # (E, 6, N) float32: centroidal momentum matrix A_G (linear rows first)
    centroidal_bias: wp.array  # (E, 6) float32: A_G-dot q-dot
    joint_acceleration: wp.array  # (E, n) float32: reported joint accelerations of the last step
    link_acceleration: wp.array  # (E, L) spatial_vector: reported (linear at COM, angular) accelerations
    link_incoming_joint_force: wp.array  # (E, L) spatial_vector: reported (force, torque), child joint frame
    kin: Kin = None  # origin, link_com, link_inertia, dof_motion bundled for kernels
    scratch: Scratch = None  # the scratch arrays bundled for kernels
    step: StepData = None  # the step's intermediates (shares gen_*, link_fext, mass_matrix and reported arrays)

    def bundle(self) -> None:
        self.kin = bundle(Kin, self)
        self.scratch = bundle(Scratch, self)
