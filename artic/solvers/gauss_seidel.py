"""One projected Gauss-Seidel sweep over an articulation's joint rows, in PhysX order (constraints/joint_rows.py).

Each row reads its dof's current velocity, computes an impulse delta by its kind's rule, and applies it exactly:
v += delta * M^-1 e_d, so the next row sees every dof's updated velocity (what PhysX's lazy impulse propagation
computes, physx-notes 4.2). Accumulators live in row_lambda (row_lambda2 for a limit's high side).
"""

import warp as wp

from ..constraints.drive import drive_impulse
from ..constraints.friction import coefficient_friction_impulse, effort_friction_impulse
from ..constraints.joint_rows import (ROW_DRIVE, ROW_FRICTION, ROW_FRICTION_COEF, ROW_LIMIT, ROW_VELOCITY_LIMIT,
                                      JointRows)
from ..constraints.limit import limit_impulse
from ..constraints.velocity_limit import velocity_limit_impulse
from ..data import StepData


@wp.func
def apply_dof_impulse(sd: StepData, env: int, n_gen: int, col: int, delta: float):
    for k in range(n_gen):
        sd.gen_v[env, k] = sd.gen_v[env, k] + delta * sd.minv[env, k, col]


@wp.func
def sweep_joint_rows(rows: JointRows, sd: StepData, env: int, off: int, n_gen: int, h: float, dt: float,
                     erp: float, t_elapsed: float, position_iteration: int, tgs: int):
    """One pass over the rows. h: solver step (dt or rho); dt: full step (force limits, effort friction)."""
    max_impulse_scale = float(1.0)
    if rows.drive_limits_are_forces != 0:
        max_impulse_scale = dt
    for r in range(rows.row_count):
        kind = rows.row_kind[r]
        d = rows.row_dof[r]
        col = off + d
        v = sd.gen_v[env, col]
        recip = sd.dof_recip[env, d]
        delta = float(0.0)
        if kind == ROW_FRICTION_COEF:
            acc = sd.row_lambda[env, r]
            if tgs != 0:
                acc = 0.0  # TGS clamps every iteration on its own
            new = coefficient_friction_impulse(acc, v, recip, sd.dof_friction_force[env, d] * h)
            delta = new - acc
            sd.row_lambda[env, r] = new
        elif kind == ROW_DRIVE:
            if tgs == 0 or position_iteration != 0:  # TGS velocity iterations freeze the drive
                acc = sd.row_lambda[env, r]
                new = drive_impulse(sd.dof_drive_coef[env, d], acc, v, sd.dof_dq[env, d], t_elapsed,
                                    rows.dof_max_force[d] * max_impulse_scale)
                delta = new - acc
                sd.row_lambda[env, r] = new
        elif kind == ROW_FRICTION:
            acc = sd.row_lambda[env, r]
            new = effort_friction_impulse(acc, v, recip, rows.dof_static_friction[d] * dt,
                                          rows.dof_dynamic_friction[d] * dt, rows.dof_viscous_friction[d] * dt)
            delta = new - acc
            sd.row_lambda[env, r] = new
        elif kind == ROW_LIMIT:
            res = limit_impulse(sd.dof_err_low[env, d], sd.dof_err_high[env, d], sd.dof_dq[env, d], v, h, erp, recip,
                                sd.row_lambda[env, r], sd.row_lambda2[env, r], position_iteration)
            delta = res[0]
            sd.row_lambda[env, r] = res[1]
            sd.row_lambda2[env, r] = res[2]
        elif kind == ROW_VELOCITY_LIMIT:
            delta = velocity_limit_impulse(v, rows.dof_max_velocity[d], recip)
        if delta != 0.0:
            apply_dof_impulse(sd, env, n_gen, col, delta)
