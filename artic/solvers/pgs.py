"""Projected Gauss-Seidel schedule (physx-notes 4.3): n_pos position iterations with bias 0.8 (articulation joints and
contacts alike, physx-notes 9.6; 1 for joints between bodies, PhysX's PxJoint bias, physx-notes 7.2) and the full step,
then max(1, n_vel) velocity iterations without position bias. The velocity at the end of the position iterations is the
one positions are integrated with; the velocity iterations only change the velocity carried forward.

Early stop. With a tolerance > 0 (Articulation.solver_tolerance; an MJCF import sets one, PhysX has none and runs every
iteration), the position iterations end after the first sweep that changed no generalized velocity by more than the
tolerance [m/s or rad/s]: a sweep that moves nothing has reached the fixed point every later sweep would repeat. It is a
stopping rule, not an error bound: Gauss-Seidel's changes shrink geometrically once the active set is fixed, but a
slowly converging problem can also change little per sweep far from its answer (docs/solvers.md). MuJoCo's solvers stop
the same way, on the improvement of their cost (mjOption.tolerance). gen_vpos holds each sweep's starting velocity
meanwhile; sd.solver_iterations reports the sweeps run per env."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import BodyJointArrays, BodyJointTable
from ..constraints.contact_rows import ContactRows, contact_responses
from ..constraints.coupling_rows import CouplingRows, coupling_responses, fixed_directions
from ..constraints.dof_rows import DofRows
from ..constraints.drive import drive_coefficients
from ..core.data import Kin, StepData
from ..core.model import DofParams, Tree
from ..math.tree_ldl import tree_spd_inverse
from .gauss_seidel import sweep

PGS_ERP = wp.constant(0.8)
PGS_JOINT_ERP = wp.constant(1.0)


@wp.func
def _largest_change(sd: StepData, env: int, n_gen: int) -> float:
    """max_k |v_k - v_k at the sweep's start| (gen_vpos holds the start); NaN counts as unconverged."""
    change = float(0.0)
    for k in range(n_gen):
        d = wp.abs(sd.gen_v[env, k] - sd.gen_vpos[env, k])
        if not wp.isfinite(d):
            return wp.inf
        change = wp.max(change, d)
    return change


@wp.func
def dense_inverse(tree: Tree, sd: StepData, env: int) -> None:
    """sd.minv = M^-1 per tree (through its tree-sparse factor), a kinematic tree's block zero: nothing moves it,
    so no row impulse reaches it."""
    for t in range(tree.tree_count):
        g0 = tree.tree_gen_start[t]
        ng = tree.tree_gen_count[t]
        tree_spd_inverse(sd.mass_matrix, sd.minv, tree.gen_parent, env, g0, ng)
        if tree.tree_kinematic[t] != 0:
            for i in range(ng):
                for j in range(ng):
                    sd.minv[env, g0 + i, g0 + j] = 0.0


@wp.func
def dof_responses(
    tree: Tree,
    dp: DofParams,
    sd: StepData,
    target_velocity: wp.array2d(dtype=float),
    env: int,
    h: float,
    dt: float,
    tgs: int,
) -> None:
    """Each dof's response (M^-1)_dd, 1 / (response + cfm) (0 for a rotation nothing moves) and its drive's
    coefficients (constraints/drive.py), from its drive error sd.dof_geom_error."""
    for d in range(tree.dof_gen.shape[0]):
        r = sd.minv[env, tree.dof_gen[d], tree.dof_gen[d]]
        recip = float(0.0)
        if tree.dof_axis[d] >= 3 or r > 0.0:
            recip = 1.0 / (r + dp.dof_cfm[d])
        sd.dof_r[env, d] = r
        sd.dof_recip[env, d] = recip
        sd.dof_drive_coef[env, d] = drive_coefficients(
            dp.dof_drive[d],
            dp.dof_stiffness[d],
            dp.dof_damping[d],
            target_velocity[env, d],
            sd.dof_geom_error[env, d],
            r,
            recip,
            h,
            dt,
            tgs,
        )


@wp.func
def pgs_prerequisites(
    tree: Tree,
    dp: DofParams,
    cr: CouplingRows,
    cp: ContactPoints,
    ct: ContactRows,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    sd: StepData,
    target_velocity: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
) -> None:
    """What a direct step leaves out of the row setup and PGS needs (M^-1, the fixed-tendon joints' rows, every
    row's M^-1 g and response, the contact patches' Delassus matrices), from the rows it set up at the step's start
    kinematics: for its fallback to PGS, with the same values as a PGS step's setup."""
    dense_inverse(tree, sd, env)
    dof_responses(tree, dp, sd, target_velocity, env, dt, dt, 0)
    fixed_directions(tree, cr, kin, link_pose, sd.cpl_g, env, n_gen)
    coupling_responses(cr, sd.minv, sd.cpl_g, sd.cpl_minv_g, sd.cpl_r, env, n_gen)
    contact_responses(cp, ct, sd.minv, env, n_gen)


@wp.func
def pgs_solve(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    cr: CouplingRows,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    joint_q: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
    n_pos: int,
    n_vel: int,
    tolerance: float,
) -> None:
    it = int(0)
    while it < n_pos:
        if tolerance > 0.0:
            for k in range(n_gen):
                sd.gen_vpos[env, k] = sd.gen_v[env, k]
        sweep(
            tree,
            dp,
            rows,
            cr,
            cp,
            ct,
            jt,
            ja,
            sd,
            joint_q,
            env,
            n_gen,
            dt,
            dt,
            PGS_ERP,
            PGS_JOINT_ERP,
            PGS_ERP,
            0.0,
            1,
            0,
        )
        it += 1
        if tolerance > 0.0 and _largest_change(sd, env, n_gen) <= tolerance:
            break
    sd.solver_iterations[env] = it
    for k in range(n_gen):
        sd.gen_vpos[env, k] = sd.gen_v[env, k]
    for _it in range(wp.max(1, n_vel)):
        sweep(
            tree,
            dp,
            rows,
            cr,
            cp,
            ct,
            jt,
            ja,
            sd,
            joint_q,
            env,
            n_gen,
            dt,
            dt,
            PGS_ERP,
            PGS_JOINT_ERP,
            PGS_ERP,
            0.0,
            0,
            0,
        )
