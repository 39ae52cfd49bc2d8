"""One projected Gauss-Seidel sweep over a block's rows in PhysX order (physx-notes 4.1-4.2): joints between two moving
bodies ("link dynamic constraints", constraints/body_joint_rows.py), link-link ("dynamic") contacts, coupling rows
(spatial tendons, fixed tendons, mimic joints; constraints/coupling_rows.py), then the joint rows link by link in
depth-first order (constraints/dof_rows.py), each link's joints to fixed bodies ("link static constraints") and then its
static contacts right after its joint rows (the root's before any joint row).

Each row reads its dof's current velocity, computes an impulse delta by its kind's rule, and applies it exactly:
v += delta * M^-1 e_d, so the next row sees every dof's updated velocity (what PhysX's lazy impulse propagation
computes, physx-notes 4.2). Accumulators live in row_lambda (row_lambda2 for a limit's high side).
"""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import BodyJointArrays, BodyJointTable, solve_body_joint, solve_dynamic_body_joints
from ..constraints.contact_rows import ContactRows, solve_contacts
from ..constraints.coupling_rows import (
    COUPLING_FIXED,
    COUPLING_SPATIAL,
    COUPLING_TENDON_LIMIT,
    CouplingRows,
    mimic_speed_bound,
    mimic_value,
)
from ..constraints.dof_rows import ROW_DRIVE, ROW_FRICTION, ROW_FRICTION_COEF, ROW_LIMIT, ROW_VELOCITY_LIMIT, DofRows
from ..constraints.drive import drive_impulse
from ..constraints.friction import (
    coefficient_friction_impulse,
    effort_friction_impulse,
    soft_friction_impulse,
    soft_friction_row,
)
from ..constraints.limit import limit_impulse, soft_limit_impulse
from ..constraints.mimic import mimic_impulse
from ..constraints.softness import SOFT_HARD, is_soft
from ..constraints.tendon import spatial_limit_error, tendon_impulse
from ..constraints.velocity_limit import velocity_limit_impulse
from ..core.data import StepData
from ..core.model import DofParams, Tree
from ..math.dense import add_row, row_dot


@wp.func
def apply_dof_impulse(sd: StepData, env: int, n_gen: int, col: int, delta: float) -> None:
    # M^-1's row col, which is its column (symmetric), read contiguously; a while loop (math/dense.py row_dot)
    k = int(0)
    while k < n_gen:
        sd.gen_v[env, k] = sd.gen_v[env, k] + delta * sd.minv[env, col, k]
        k += 1


_NO_RANK = wp.constant(2147483647)


@wp.func
def _solve_statics(
    jt: BodyJointTable,
    ja: BodyJointArrays,
    cp: ContactPoints,
    ct: ContactRows,
    sd: StepData,
    env: int,
    n_gen: int,
    c: int,
    sj: int,
    rank_limit: int,
    h: float,
    dt: float,
    joint_erp: float,
    contact_erp: float,
    t_elapsed: float,
    position_iteration: int,
    tgs: int,
) -> tuple[int, int]:
    """The static joints, then the static contacts, of each link visited before depth-first rank `rank_limit`, link
    by link; c and sj: the next contact and the next static joint (in jt.joint_order). Returns the new (c, sj)."""
    n_contacts = cp.count[env]
    while True:
        joint_rank = _NO_RANK
        if sj < jt.joint_count:
            joint_rank = jt.joint_rank[jt.joint_order[sj]]
        contact_rank = _NO_RANK
        if c < n_contacts:
            contact_rank = cp.rank[env, c]
        rank = wp.min(joint_rank, contact_rank)
        if rank >= rank_limit:
            break
        while sj < jt.joint_count and jt.joint_rank[jt.joint_order[sj]] == rank:
            solve_body_joint(
                jt, ja, sd.gen_v, env, jt.joint_order[sj], n_gen, h, dt, joint_erp, t_elapsed, position_iteration, tgs
            )
            sj += 1
        e = c
        while e < n_contacts and cp.rank[env, e] == rank:
            e += 1
        if e > c:
            solve_contacts(cp, ct, sd.gen_v, env, c, e, n_gen, h, contact_erp, position_iteration)
            c = e
    return c, sj


@wp.func
def _limit_row(
    dp: DofParams,
    sd: StepData,
    env: int,
    r: int,
    d: int,
    v: float,
    h: float,
    erp: float,
    recip: float,
    position_iteration: int,
) -> float:
    """Joint row r's limit visited (a soft limit's row, else PhysX's speculative hard limit): the impulse change,
    with both sides' accumulators updated."""
    res = wp.vec3(0.0)
    if sd.dof_soft_cfm[env, d] != SOFT_HARD:
        res = soft_limit_impulse(
            sd.dof_soft_target[env, d],
            sd.dof_soft_cfm[env, d],
            sd.dof_err_low[env, d],
            v,
            sd.dof_r[env, d] + dp.dof_cfm[d],
            sd.row_lambda[env, r],
            sd.row_lambda2[env, r],
        )
    else:
        res = limit_impulse(
            sd.dof_err_low[env, d],
            sd.dof_err_high[env, d],
            sd.dof_dq[env, d],
            v,
            h,
            erp,
            recip,
            sd.row_lambda[env, r],
            sd.row_lambda2[env, r],
            position_iteration,
        )
    sd.row_lambda[env, r] = res[1]
    sd.row_lambda2[env, r] = res[2]
    return res[0]


@wp.func
def sweep_dof_rows(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    env: int,
    n_gen: int,
    h: float,
    dt: float,
    erp: float,
    joint_erp: float,
    contact_erp: float,
    t_elapsed: float,
    position_iteration: int,
    tgs: int,
) -> None:
    """One pass over the rows, the static joints and the static contacts. h: solver step (dt or rho); dt: full step
    (force limits, effort friction)."""
    c = cp.dynamic_count[env]
    sj = jt.dynamic_count
    for r in range(rows.row_count):
        c, sj = _solve_statics(
            jt,
            ja,
            cp,
            ct,
            sd,
            env,
            n_gen,
            c,
            sj,
            rows.row_rank[r],
            h,
            dt,
            joint_erp,
            contact_erp,
            t_elapsed,
            position_iteration,
            tgs,
        )
        kind = rows.row_kind[r]
        d = rows.row_dof[r]
        col = tree.dof_gen[d]
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
                max_impulse = dp.dof_max_force[d]
                if dp.dof_limits_are_forces[d] != 0:
                    max_impulse *= dt
                new = drive_impulse(sd.dof_drive_coef[env, d], acc, v, sd.dof_dq[env, d], t_elapsed, max_impulse)
                delta = new - acc
                sd.row_lambda[env, r] = new
        elif kind == ROW_FRICTION:
            acc = sd.row_lambda[env, r]
            new = float(0.0)
            if is_soft(dp.dof_friction_soft[d]):  # MuJoCo's frictionloss
                row = soft_friction_row(dp.dof_friction_soft[d], sd.gen_v0[env, col], dp.dof_inverse_weight[d], dt)
                bound = dp.dof_static_friction[d] * dt
                new = soft_friction_impulse(row, acc, v, sd.dof_r[env, d] + dp.dof_cfm[d], bound)
            else:
                new = effort_friction_impulse(
                    acc,
                    v,
                    recip,
                    dp.dof_static_friction[d] * dt,
                    dp.dof_dynamic_friction[d] * dt,
                    dp.dof_viscous_friction[d] * dt,
                )
            delta = new - acc
            sd.row_lambda[env, r] = new
        elif kind == ROW_LIMIT:
            delta = _limit_row(dp, sd, env, r, d, v, h, erp, recip, position_iteration)
        elif kind == ROW_VELOCITY_LIMIT:
            delta = velocity_limit_impulse(v, dp.dof_max_velocity[d], recip)
        if delta != 0.0:
            apply_dof_impulse(sd, env, n_gen, col, delta)
    _solve_statics(
        jt,
        ja,
        cp,
        ct,
        sd,
        env,
        n_gen,
        c,
        sj,
        _NO_RANK,
        h,
        dt,
        joint_erp,
        contact_erp,
        t_elapsed,
        position_iteration,
        tgs,
    )


@wp.func
def sweep_coupling_rows(
    tree: Tree,
    dp: DofParams,
    cr: CouplingRows,
    sd: StepData,
    joint_q: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
    erp: float,
    position_iteration: int,
    tgs: int,
) -> None:
    """One pass over the coupling rows. joint_q holds the current positions (TGS integrates them per substep);
    rows gives the dofs' max joint velocities, which cap a mimic joint's bias speed (constraints/mimic.py)."""
    tendon = int(-1)
    length = float(0.0)
    speed = float(0.0)
    for k in range(cr.row_count):
        item = cr.row_item[k]
        kind = cr.row_kind[k]
        delta = float(0.0)
        if kind == COUPLING_SPATIAL:
            t = cr.leaf_tendon[item]
            ls = sd.cpl_len[env, k]
            limit_err = spatial_limit_error(ls, cr.leaf_limit_low[item], cr.leaf_limit_high[item])
            res = tendon_impulse(
                cr.leaf_rest_length[item] - ls,
                limit_err,
                row_dot(sd.cpl_g, sd.gen_v, env, k, n_gen),
                sd.cpl_acc[env, k],
                sd.cpl_acc2[env, k],
                sd.cpl_r[env, k],
                h,
                cr.st_stiffness[t],
                cr.st_damping[t],
                cr.st_limit_stiffness[t],
                1.0,
                tgs,
            )
            delta = res[0]
            sd.cpl_acc[env, k] = res[1]
            sd.cpl_acc2[env, k] = res[2]
        elif kind == COUPLING_FIXED:
            t = cr.ftj_tendon[item]
            n = cr.ft_joint_count[t]
            if t != tendon:  # length and speed once per tendon per iteration
                tendon = t
                length = cr.ft_offset[t]
                speed = float(0.0)
                for m in range(n):
                    u = cr.ft_joint_start[t] + m
                    length += cr.ftj_coef[u] * joint_q[env, cr.ftj_dof[u]]
                    speed += cr.ftj_coef[u] * sd.gen_v[env, tree.dof_gen[cr.ftj_dof[u]]]
            limit_err = float(0.0)
            if not is_soft(cr.ft_limit_soft[t]):  # a MuJoCo-soft limit is a row of its own (COUPLING_TENDON_LIMIT)
                if length < cr.ft_limit_low[t]:
                    limit_err = (length - cr.ft_limit_low[t]) / float(n)
                elif length > cr.ft_limit_high[t]:
                    limit_err = (length - cr.ft_limit_high[t]) / float(n)
            res = tendon_impulse(
                (length - cr.ft_rest_length[t]) / float(n),
                limit_err,
                speed / float(n),
                sd.cpl_acc[env, k],
                sd.cpl_acc2[env, k],
                sd.cpl_r[env, k],
                h,
                cr.ft_stiffness[t],
                cr.ft_damping[t],
                cr.ft_limit_stiffness[t],
                cr.ftj_recip[item],
                tgs,
            )
            delta = res[0]
            sd.cpl_acc[env, k] = res[1]
            sd.cpl_acc2[env, k] = res[2]
        elif kind == COUPLING_TENDON_LIMIT:  # MuJoCo-soft, pushing only (coupling_rows.soft_coupling_row)
            acc = sd.cpl_acc[env, k]
            res = soft_limit_impulse(
                sd.cpl_soft_target[env, k],
                sd.cpl_soft_cfm[env, k],
                sd.cpl_len[env, k] - cr.ft_limit_low[item],
                row_dot(sd.cpl_g, sd.gen_v, env, k, n_gen),
                sd.cpl_r[env, k],
                acc,
                acc,
            )
            delta = res[0]
            sd.cpl_acc[env, k] = acc + delta
        elif sd.cpl_soft_cfm[env, k] >= 0.0:  # a MuJoCo-soft mimic joint: v + cfm lambda = target, every iteration
            cfm = sd.cpl_soft_cfm[env, k]
            jv = row_dot(sd.cpl_g, sd.gen_v, env, k, n_gen)
            delta = (sd.cpl_soft_target[env, k] - jv - cfm * sd.cpl_acc[env, k]) / (sd.cpl_r[env, k] + cfm)
            sd.cpl_acc[env, k] = sd.cpl_acc[env, k] + delta
        else:
            c = mimic_value(cr, joint_q, env, item)
            max_speed = mimic_speed_bound(cr, dp.dof_max_velocity, joint_q, env, item)
            delta = mimic_impulse(
                c,
                row_dot(sd.cpl_g, sd.gen_v, env, k, n_gen),
                sd.cpl_r[env, k],
                h,
                erp,
                cr.mimic_natural_frequency[item],
                cr.mimic_damping_ratio[item],
                position_iteration,
                max_speed,
            )
        if delta != 0.0:
            add_row(sd.gen_v, sd.cpl_minv_g, env, k, n_gen, delta)


@wp.func
def sweep(
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
    h: float,
    dt: float,
    erp: float,
    joint_erp: float,
    contact_erp: float,
    t_elapsed: float,
    position_iteration: int,
    tgs: int,
) -> None:
    """One solver iteration: joints between moving bodies, link-link contacts (within an articulation or between
    two), coupling rows, then the per-link joint rows with each link's static joints and contacts (physx-notes
    1.7, 4.1-4.2). erp: the articulation bias; joint_erp: the body joints' (PhysX's PxJoint bias)."""
    solve_dynamic_body_joints(jt, ja, sd.gen_v, env, n_gen, h, dt, joint_erp, t_elapsed, position_iteration, tgs)
    solve_contacts(cp, ct, sd.gen_v, env, 0, cp.dynamic_count[env], n_gen, h, contact_erp, position_iteration)
    sweep_coupling_rows(tree, dp, cr, sd, joint_q, env, n_gen, h, erp, position_iteration, tgs)
    sweep_dof_rows(
        tree,
        dp,
        rows,
        cp,
        ct,
        jt,
        ja,
        sd,
        env,
        n_gen,
        h,
        dt,
        erp,
        joint_erp,
        contact_erp,
        t_elapsed,
        position_iteration,
        tgs,
    )


@wp.func
def advance_spatial_lengths(cr: CouplingRows, sd: StepData, env: int, n_gen: int, h: float) -> None:
    """TGS: refresh spatial tendon lengths after a substep, to first order (dL = -speed h)."""
    for k in range(cr.row_count):
        if cr.row_kind[k] == COUPLING_SPATIAL:
            sd.cpl_len[env, k] = sd.cpl_len[env, k] - row_dot(sd.cpl_g, sd.gen_v, env, k, n_gen) * h
