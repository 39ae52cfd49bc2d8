"""The direct solver's rows (solvers/direct.py): the step's rows in the one row form, built once for both of its
solves (constraints/row_form.py: each row carries both passes' targets and compliances), and the rows added lazily
when the solved velocity calls for them: a joint limit or a body joint's hard range it would cross within the step,
a velocity limit it exceeds. Those the last step's velocity calls for, with a margin (PREDICT_NEAR), are added
before the first round (_predicted_rows)."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import BODY_ROW_RANGE, ROW_ON, BodyJointArrays, BodyJointTable
from ..constraints.contact_row_form import add_contact_rows
from ..constraints.contact_rows import ContactRows
from ..constraints.coupling_rows import CouplingRows
from ..constraints.deadzone_rows import DeadzoneTable, add_deadzone_rows
from ..constraints.dof_rows import ROW_LIMIT, ROW_VELOCITY_LIMIT, DofRows
from ..constraints.row_form import (
    SRC_BODY_JOINT,
    SRC_BODY_JOINT_HIGH,
    SRC_DOF,
    SRC_DOF_HIGH,
    SRC_VELOCITY_LIMIT,
    RowForm,
    add_body_joint_range_row,
    add_body_joint_rows,
    add_coupling_rows,
    add_dof_rows,
    add_limit_row,
    add_velocity_limit,
    limit_row,
)
from ..constraints.softness import SOFT_HARD
from ..core.data import Kin, StepData
from ..core.model import DofParams, Tree
from .pgs import PGS_ERP, PGS_JOINT_ERP

PREDICT_NEAR = wp.constant(1.0e-3)  # [m or rad] how near a limit a guessed velocity comes for _predicted_rows


@wp.func
def _has_row(rf: RowForm, env: int, m: int, kind: int, kind2: int, index: int) -> int:
    i = int(0)
    while i < m:
        if rf.source_index[env, i] == index and (rf.source_kind[env, i] == kind or rf.source_kind[env, i] == kind2):
            return 1
        i += 1
    return 0


@wp.func
def lazy_rows(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    rf: RowForm,
    env: int,
    n_gen: int,
    h: float,
    near: float,
) -> int:
    """Add the joint-limit, velocity-limit and body-joint range rows the solved velocity (in sd.gen_v) calls for;
    returns how many, or -1 when the capacity has no room left for one (a friction dof's viscous row took it).
    `near` > 0 (a guess of the solved velocity in sd.gen_v, PREDICT_NEAR) also adds those whose limit the velocity
    would come within `near` of (a position, or near / h of a velocity limit)."""
    m = rf.count[env]
    added = int(0)
    full = rf.cfm.shape[1]
    for r in range(rows.row_count):
        kind = rows.row_kind[r]
        d = rows.row_dof[r]
        col = tree.dof_gen[d]
        v = sd.gen_v[env, col]
        if kind == ROW_VELOCITY_LIMIT:
            if wp.abs(v) > dp.dof_max_velocity[d] * (1.0 + 1.0e-6) - near / h:
                if _has_row(rf, env, m, SRC_VELOCITY_LIMIT, SRC_VELOCITY_LIMIT, r) == 0:
                    if rf.count[env] >= full:
                        return -1
                    added += add_velocity_limit(tree, dp, rows, sd, rf, env, n_gen, r, v, near / h)
        elif kind == ROW_LIMIT and sd.dof_soft_cfm[env, d] == SOFT_HARD:  # a soft limit's row is there or not
            res = limit_row(sd.dof_err_low[env, d], sd.dof_err_high[env, d], v, h, PGS_ERP, near)
            if res[1] != 0.0 and _has_row(rf, env, m, SRC_DOF, SRC_DOF_HIGH, r) == 0:
                if rf.count[env] >= full:
                    return -1
                added += add_limit_row(tree, dp, rows, sd, rf, env, n_gen, r, res)
    for j in range(jt.joint_count):  # the hard ranges of the joints between bodies
        for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
            if jt.row_kind[r] == BODY_ROW_RANGE and ja.row_active[env, r] == ROW_ON and ja.row_coef[env, r][1] < 0.0:
                if _has_row(rf, env, m, SRC_BODY_JOINT, SRC_BODY_JOINT_HIGH, r) == 0:
                    if rf.count[env] >= full:
                        return -1
                    k = jt.row_coord[r]
                    added += add_body_joint_range_row(
                        ja,
                        sd,
                        rf,
                        env,
                        n_gen,
                        r,
                        jt.joint_span[j],
                        ja.range_low[env, k],
                        ja.range_high[env, k],
                        ja.row_value[env, r],
                        h,
                        PGS_JOINT_ERP,
                        near,
                    )
    return added


@wp.func
def _predicted_rows(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    rf: RowForm,
    v_star: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
) -> None:
    """Before the first round: the lazy rows that the last step's velocity (a guess of this step's) calls for, with
    a margin (PREDICT_NEAR). A joint held at its limit by a drive (v* alone does not cross it) would otherwise have
    its row added by a second round every step. A predicted row that the solve does not need stays at its bound 0
    and changes nothing (its target is the speculative one); a needed row the guess missed is still added lazily.
    No room for one is not a failure here: the lazy rounds report it if the row is needed."""
    for k in range(n_gen):
        sd.gen_v[env, k] = sd.gen_v0[env, k]
    lazy_rows(tree, dp, rows, jt, ja, sd, rf, env, n_gen, h, PREDICT_NEAR)
    for k in range(n_gen):
        sd.gen_v[env, k] = v_star[env, k]  # the row builders' v*


@wp.func
def step_rows(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    cr: CouplingRows,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    dz: DeadzoneTable,
    sd: StepData,
    rf: RowForm,
    v_star: wp.array2d(dtype=float),
    joint_q: wp.array2d(dtype=float),
    target_velocity: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
    directions: int,
) -> int:
    """The step's rows, once for both solves (each row carries both passes' targets and compliances: row_form.py),
    with `directions` friction rows per contact anchor, and the predicted lazy ones; 0 when a friction dof's viscous
    row found no slot."""
    for k in range(n_gen):
        sd.gen_v[env, k] = v_star[env, k]  # the row builders read v* (limit sides, joint velocities)
    rf.count[env] = 0
    add_body_joint_rows(jt, ja, sd, rf, env, n_gen, h, PGS_JOINT_ERP)
    add_contact_rows(cp, ct, rf, v_star, env, n_gen, h, PGS_ERP, directions)
    add_coupling_rows(tree, dp, cr, sd, rf, joint_q, env, n_gen, h, PGS_ERP)
    if add_dof_rows(tree, dp, rows, sd, rf, joint_q, target_velocity, env, n_gen, h, PGS_ERP) != 0:
        return 0
    add_deadzone_rows(tree, jt, ja, kin, dz, rf, joint_q, env, n_gen, h)
    _predicted_rows(tree, dp, rows, jt, ja, sd, rf, v_star, env, n_gen, h)
    return 1
