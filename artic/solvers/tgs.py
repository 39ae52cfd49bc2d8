"""Temporal Gauss-Seidel schedule (physx-notes 4.4): n_pos substeps of rho = dt / n_pos, each one sweep (elapsed
time a rho, bias min(0.9, 2/sqrt(n_pos))) followed by position integration over rho, which also accumulates each
dof's position change dq for drives and limits; then n_vel velocity iterations (drives frozen, no position bias)
that change only the velocity carried forward. Contacts use the rigid-contact bias min(0.8, 2/sqrt(n_pos)) and
their separations advance with each substep; joints between bodies use PhysX's PxJoint bias 1/sqrt(n_pos) and
their rows are measured again on the link poses after each substep (values and directions; kin_sub holds the
kinematics of the substep's poses; body_joint_rows.advance_body_joints says why). gen_vpos gets the mean substep
velocity, PhysX's position-iteration velocity under TGS (saveVelocityTGS), which the sleep test reads."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import BodyJointArrays, BodyJointTable, advance_body_joints
from ..constraints.contact_rows import ContactRows, advance_contacts
from ..constraints.coupling_rows import CouplingRows
from ..constraints.dof_rows import DofRows
from ..core.data import Kin, StepData
from ..core.model import DofParams, Tree
from ..dynamics.integrate import integrate_positions
from ..dynamics.kinematics import frame_kinematics_env
from .gauss_seidel import advance_spatial_lengths, sweep


@wp.func
def tgs_solve(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    cr: CouplingRows,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    kin_sub: Kin,
    joint_q: wp.array2d(dtype=float),
    root_pose: wp.array2d(dtype=wp.transform),
    env: int,
    n_gen: int,
    dt: float,
    n_pos: int,
    n_vel: int,
) -> None:
    rho = dt / float(n_pos)
    erp = wp.min(0.9, 2.0 / wp.sqrt(float(n_pos)))
    joint_erp = 1.0 / wp.sqrt(float(n_pos))
    contact_erp = wp.min(0.8, 2.0 / wp.sqrt(float(n_pos)))
    for k in range(n_gen):
        sd.gen_vpos[env, k] = 0.0
    sd.solver_iterations[env] = n_pos  # its position iterations are its substeps: all of them run
    for a in range(n_pos):
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
            rho,
            dt,
            erp,
            joint_erp,
            contact_erp,
            float(a) * rho,
            1,
            1,
        )
        for k in range(n_gen):
            sd.gen_vpos[env, k] = sd.gen_vpos[env, k] + sd.gen_v[env, k] / float(n_pos)
        integrate_positions(tree, joint_q, root_pose, sd.gen_v, sd.dof_dq, rho, env)
        advance_spatial_lengths(cr, sd, env, n_gen, rho)
        advance_contacts(cp, ct, sd.gen_v, env, n_gen, rho)
        if jt.joint_count > 0:
            frame_kinematics_env(tree, joint_q, root_pose, sd.link_pose_sub, kin_sub, env)
            advance_body_joints(tree, jt, ja, kin_sub, sd.link_pose_sub, sd.minv, env)
    for _it in range(n_vel):
        sweep(
            tree, dp, rows, cr, cp, ct, jt, ja, sd, joint_q, env, n_gen, rho, dt, erp, joint_erp, contact_erp, dt, 0, 1
        )
