"""One row form for everything the step solves: each kind's rows written as (g, target, cfm, lo, hi,
friction index), which the direct solver (solvers/direct.py) assembles into one bounded mixed LCP per env.

A row i asks that, after the impulses lambda, its velocity g_i . v plus cfm_i lambda_i equals target_i, unless
lambda_i sits at a bound (the ODE paper's three conditions). Every kind maps onto that form (h = dt, one solve):
* implicit PD drive (the implicit-drive note): cfm = 1 / (h (h k + d)), target = (k e + d v_T) / (h k + d) with e
  the position error, bounds +-max force h; an acceleration drive scales k and d by 1 / (r + cfm_dof). This is the
  ODE paper's eq. 13: the row is the drive's implicit spring, solved together with every other row.
* joint position limit (constraints/limit.py's rule): the side that is violated or would be within the step, a
  one-sided row at -err erp / h (violated, position pass), 0 (violated, velocity pass) or -err / h (speculative);
* joint velocity limit: a one-sided row at +-max velocity, added when the velocity would exceed it;
* joint friction: target 0, box +-f h (coefficient model) or +-static h sliding at +-dynamic h (effort model),
  whose viscous part is the implicit damper c on the dof: target 0, cfm 1 / (c h), unbounded (what PGS's sliding
  bound +-(dynamic + c |v|) h converges to), a second row when there is a Coulomb part;
* mimic joint (the mimic-joint note): hard (cfm 0, target -erp C / h), its compliant spring, or MuJoCo-soft (a joint
  or tendon equality: constraints/softness.py's target and cfm);
* tendons: the rest-length spring as an implicit spring (a fixed tendon's on the single direction sum_j c_j e_j,
  where PhysX splits it per tendon joint), and the limit as a one-sided implicit spring, or MuJoCo-soft (one-sided);
* contact normal (target as constraints/contact_rows.py: speculative, restitution, or -erp s / h) with lambda >= 0, and
  two friction rows per anchor whose box is mu / anchors times the patch's normal impulse (the friction index); or,
  for MuJoCo's pyramidal cone, four soft edge rows per contact with lambda >= 0; for its elliptic cone, the soft
  normal and friction rows of each contact, friction boxed by the normal and then put on the cone (cone_polish.py);
* joints between bodies (constraints/body_joint_rows.py): bilateral slots and locks (hard, with their bias in the
  position pass and half their direction's turn over the last step in the velocity pass, carried_row_target; or
  soft), drives, ranges (hard like limits, or soft as two one-sided springs: a deadzone);
* deadzone controllers (constraints/deadzone_rows.py): one-sided implicit springs at a band's edges, and a
  secondary target.
Limit, velocity-limit and friction rows are hard (cfm 0): PhysX's link cfm only under-relaxes each Gauss-Seidel
update of these rows (impulse (target - v) / (r + cfm), with no -cfm lambda term), so PGS run to convergence holds
them exactly; as a true CFM it would let a limit carrying a large impulse yield by cfm * lambda (the guide's finger:
0.025 * 4e3 N m s = 100 rad/s).
"""

from __future__ import annotations

import warp as wp

from ..core.data import StepData
from ..core.model import DRIVE_ACCELERATION, DRIVE_NONE, DofParams, Tree
from ..math.dense import row_dot, zero_row
from .body_joint_report import ANGULAR_TOLERANCE, LINEAR_TOLERANCE
from .body_joint_rows import (
    BODY_ROW_DRIVE,
    BODY_ROW_RANGE,
    MAX_CORRECTION_ANGULAR,
    MAX_CORRECTION_LINEAR,
    ROW_OFF,
    ROW_ON,
    BodyJointArrays,
    BodyJointTable,
    hard_row_target,
)
from .coupling_rows import (
    COUPLING_FIXED,
    COUPLING_SPATIAL,
    COUPLING_TENDON_LIMIT,
    CouplingRows,
    mimic_speed_bound,
    mimic_value,
)
from .dof_rows import ROW_DRIVE, ROW_FRICTION, ROW_FRICTION_COEF, ROW_LIMIT, DofRows
from .friction import soft_friction_row
from .softness import SOFT_HARD, is_soft
from .tendon import spatial_limit_error

# source kinds, for writing impulses back (reported forces) and for the report
SRC_DOF = wp.constant(0)
SRC_DOF_HIGH = wp.constant(1)  # a limit row on its high side
SRC_VELOCITY_LIMIT = wp.constant(2)
SRC_COUPLING = wp.constant(3)
SRC_COUPLING_LIMIT = wp.constant(4)
SRC_CONTACT = wp.constant(5)
SRC_BODY_JOINT = wp.constant(6)
SRC_BODY_JOINT_HIGH = wp.constant(7)  # a loop range's high side
SRC_DEADZONE = wp.constant(8)  # a deadzone controller's row (constraints/deadzone_rows.py)
SRC_DOF_VISCOUS = wp.constant(9)  # the viscous part of a dof's friction, added to its friction row's impulse
SRC_CONTACT_EDGE = wp.constant(10)  # an edge of a pyramidal contact (index 10 c + e, e >= 4 angular; pyramid.py)
SRC_CONTACT_FACET = wp.constant(11)  # friction direction k of a pyramid's anchor (index 8 c + k; add_contact_rows)
SRC_CONTACT_CONE = wp.constant(12)  # an elliptic contact's row k (index 6 c + k: 0 normal, 1 2 sliding, 3.. angular)
NO_FRICTION = wp.constant(-1)  # findex of a row no normal impulse bounds
FRICTION_CONSTANT = wp.constant(-2)  # findex of a box of fixed size (mu_static, then mu_dynamic once sliding)


@wp.struct
class RowForm:
    """A block's rows in the one form (E envs, capacity M rows, N generalized dofs). Rows 0..count-1 are in use."""

    count: wp.array(dtype=int)  # (E,)
    g: wp.array3d(dtype=float)  # (E, M, N) generalized direction
    target: wp.array2d(dtype=float)  # (E, M) [m/s or rad/s] target row velocity in the position pass (ERP bias
    # included)
    cfm: wp.array2d(dtype=float)  # (E, M) [velocity per impulse] compliance in the position pass
    target_vel: wp.array2d(dtype=float)  # (E, M) [m/s or rad/s] target row velocity in the velocity pass (no bias)
    cfm_vel: wp.array2d(dtype=float)  # (E, M) [velocity per impulse] compliance in the velocity pass
    lo: wp.array2d(dtype=float)  # (E, M) [N s or N m s] lower bound (-inf: none)
    hi: wp.array2d(dtype=float)  # (E, M) upper bound
    findex: wp.array2d(dtype=int)  # (E, M) first normal row whose impulse bounds this one, NO_FRICTION, or
    # FRICTION_CONSTANT (a box of fixed size, static then dynamic)
    fcount: wp.array2d(dtype=int)  # (E, M) normal rows findex .. findex + fcount - 1 (a contact patch)
    mu_static: wp.array2d(dtype=float)  # (E, M) box per unit normal impulse while sticking (or the impulse itself)
    mu_dynamic: wp.array2d(dtype=float)  # (E, M) once sliding
    source_kind: wp.array2d(dtype=int)  # (E, M) SRC_*
    source_index: wp.array2d(dtype=int)  # (E, M) the source row (joint row, coupling row, contact row, loop row)


@wp.func
def _set_target(rf: RowForm, env: int, i: int, target: float, cfm: float) -> None:
    """Row i's target and compliance, the same in both passes."""
    rf.target[env, i] = target
    rf.cfm[env, i] = cfm
    rf.target_vel[env, i] = target
    rf.cfm_vel[env, i] = cfm


@wp.func
def set_velocity_pass(rf: RowForm, env: int, i: int, target: float, cfm: float) -> None:
    """Row i's target and compliance in the velocity pass, where they differ from the position pass's (no ERP
    bias; a compliant mimic joint's spring, hard there)."""
    rf.target_vel[env, i] = target
    rf.cfm_vel[env, i] = cfm


@wp.func
def new_row(
    rf: RowForm, env: int, n_gen: int, kind: int, index: int, target: float, cfm: float, lo: float, hi: float
) -> int:
    """Append a row with a zero direction, the same target and cfm in both passes (set_velocity_pass makes them
    differ); returns its index."""
    i = rf.count[env]
    rf.count[env] = i + 1
    zero_row(rf.g, env, i, n_gen)
    _set_target(rf, env, i, target, cfm)
    rf.lo[env, i] = lo
    rf.hi[env, i] = hi
    rf.findex[env, i] = NO_FRICTION
    rf.fcount[env, i] = 0
    rf.mu_static[env, i] = 0.0
    rf.mu_dynamic[env, i] = 0.0
    rf.source_kind[env, i] = kind
    rf.source_index[env, i] = index
    return i


@wp.func
def add_dof(rf: RowForm, env: int, i: int, col: int, coef: float) -> None:
    """g_i += coef e_col."""
    rf.g[env, i, col] = rf.g[env, i, col] + coef


@wp.func
def copy_dir(rf: RowForm, env: int, i: int, n_gen: int, g: wp.array3d(dtype=float), src: int) -> None:
    k = int(0)
    while k < n_gen:
        rf.g[env, i, k] = g[env, src, k]
        k += 1


@wp.func
def implicit_spring(stiffness: float, damping: float, error: float, target_velocity: float, h: float) -> wp.vec2:
    """(target, cfm) of the row that is the implicit spring f = -k (e' + h v+) - d (v+ - v_T) on a coordinate whose
    error is e' = -error (error = target position - position); cfm < 0 when there is no spring."""
    s = h * stiffness + damping
    if s <= 0.0:
        return wp.vec2(0.0, -1.0)
    return wp.vec2((stiffness * error + damping * target_velocity) / s, 1.0 / (h * s))


@wp.func
def velocity(rf: RowForm, v: wp.array2d(dtype=float), env: int, i: int, n_gen: int) -> float:
    return row_dot(rf.g, v, env, i, n_gen)


@wp.func
def limit_row(err_low: float, err_high: float, v: float, h: float, erp: float, near: float) -> wp.vec3:
    """(position pass target, side, velocity pass target) of a hard limit row: side 1 low (lambda >= 0), -1 high
    (lambda <= 0), 0 inactive; the rule of constraints/limit.py (violated: the bias in the position pass, 0 in the
    velocity pass; speculative: arrive at the limit in the step). `near` > 0 also makes a row for a limit that v
    would come within `near` of (the direct solver's rows predicted from a guess of the solved velocity): its target
    is still the speculative one, so the row holds only if the limit is reached."""
    if err_low < 0.0 or err_low + v * h < near:
        if err_low < 0.0:
            return wp.vec3(-err_low * erp / h, 1.0, 0.0)
        return wp.vec3(-err_low / h, 1.0, -err_low / h)
    if err_high < 0.0 or err_high - v * h < near:
        if err_high < 0.0:
            return wp.vec3(err_high * erp / h, -1.0, 0.0)
        return wp.vec3(err_high / h, -1.0, err_high / h)
    return wp.vec3(0.0, 0.0, 0.0)


@wp.func
def limit_target(dp: DofParams, d: int, target: float) -> float:
    """A limit row's target within the dof's velocity limit. A dof far beyond its limit asks for erp * error / h,
    which its velocity-limit row forbids: two hard rows that contradict each other, which the mLCP would split by
    its regularization (a rod 0.5 rad out with a 2 rad/s limit returned at 13 rad/s). PhysX's order makes the
    velocity limit win (constraints/limit.py: min(erp * error / h, max velocity)), and so does this cap."""
    vmax = dp.dof_max_velocity[d]
    return wp.clamp(target, -vmax, vmax)


@wp.func
def add_limit_row(
    tree: Tree, dp: DofParams, rows: DofRows, sd: StepData, rf: RowForm, env: int, n_gen: int, r: int, side: wp.vec3
) -> int:
    """Joint row r's limit as a hard one-sided row, `side` from limit_row (target, +1 low / -1 high / 0 none,
    velocity pass target); returns 1 if a row was added."""
    d = rows.row_dof[r]
    target = limit_target(dp, d, side[0])
    i = int(-1)
    if side[1] > 0.0:
        i = new_row(rf, env, n_gen, SRC_DOF, r, target, 0.0, 0.0, wp.inf)
    elif side[1] < 0.0:
        i = new_row(rf, env, n_gen, SRC_DOF_HIGH, r, target, 0.0, -wp.inf, 0.0)
    if i < 0:
        return 0
    set_velocity_pass(rf, env, i, limit_target(dp, d, side[2]), 0.0)
    add_dof(rf, env, i, tree.dof_gen[d], 1.0)
    return 1


@wp.func
def add_dof_rows(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    sd: StepData,
    rf: RowForm,
    joint_q: wp.array2d(dtype=float),
    target_velocity: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
    erp: float,
) -> int:
    """Drives, limits and friction of the articulations' dofs (velocity limits are added when needed); returns
    the number of viscous friction rows that found no slot."""
    for r in range(rows.row_count):
        kind = rows.row_kind[r]
        d = rows.row_dof[r]
        col = tree.dof_gen[d]
        v = sd.gen_v[env, col]
        if kind == ROW_DRIVE:
            if dp.dof_drive[d] == DRIVE_NONE:
                continue
            k = dp.dof_stiffness[d]
            c = dp.dof_damping[d]
            if dp.dof_drive[d] == DRIVE_ACCELERATION:
                k *= sd.dof_recip[env, d]
                c *= sd.dof_recip[env, d]
            spring = implicit_spring(k, c, sd.dof_geom_error[env, d], target_velocity[env, d], h)
            if spring[1] < 0.0:
                continue
            bound = dp.dof_max_force[d]
            if dp.dof_limits_are_forces[d] != 0:
                bound *= h
            i = new_row(rf, env, n_gen, SRC_DOF, r, spring[0], spring[1], -bound, bound)
            add_dof(rf, env, i, col, 1.0)
        elif kind == ROW_FRICTION_COEF:
            bound = sd.dof_friction_force[env, d] * h
            if bound > 0.0:
                i = new_row(rf, env, n_gen, SRC_DOF, r, 0.0, 0.0, -bound, bound)
                add_dof(rf, env, i, col, 1.0)
        elif kind == ROW_FRICTION:
            static = dp.dof_static_friction[d] * h
            if is_soft(dp.dof_friction_soft[d]) and static > 0.0:  # MuJoCo's frictionloss: a soft box
                soft = soft_friction_row(dp.dof_friction_soft[d], sd.gen_v0[env, col], dp.dof_inverse_weight[d], h)
                i = new_row(rf, env, n_gen, SRC_DOF, r, soft[0], soft[1], -static, static)
                rf.findex[env, i] = FRICTION_CONSTANT  # a box it reaches whenever the joint slides: not folded
                rf.mu_static[env, i] = static
                rf.mu_dynamic[env, i] = static
                add_dof(rf, env, i, col, 1.0)
            elif static > 0.0 or dp.dof_dynamic_friction[d] > 0.0:
                i = new_row(rf, env, n_gen, SRC_DOF, r, 0.0, 0.0, -static, static)
                rf.findex[env, i] = FRICTION_CONSTANT
                rf.mu_static[env, i] = static
                rf.mu_dynamic[env, i] = dp.dof_dynamic_friction[d] * h
                add_dof(rf, env, i, col, 1.0)
            elif dp.dof_viscous_friction[d] > 0.0:  # viscous only (URDF damping): the damper takes this slot
                i = new_row(rf, env, n_gen, SRC_DOF, r, 0.0, 1.0 / (dp.dof_viscous_friction[d] * h), -wp.inf, wp.inf)
                add_dof(rf, env, i, col, 1.0)
        elif kind == ROW_LIMIT:
            cfm = sd.dof_soft_cfm[env, d]
            if cfm == SOFT_HARD:
                add_limit_row(
                    tree,
                    dp,
                    rows,
                    sd,
                    rf,
                    env,
                    n_gen,
                    r,
                    limit_row(sd.dof_err_low[env, d], sd.dof_err_high[env, d], v, h, erp, 0.0),
                )
            elif cfm >= 0.0:  # a soft limit, beyond its range at the step's start (limit.soft_limit_row)
                i = int(0)
                if sd.dof_err_low[env, d] < 0.0:
                    i = new_row(rf, env, n_gen, SRC_DOF, r, sd.dof_soft_target[env, d], cfm, 0.0, wp.inf)
                else:
                    i = new_row(rf, env, n_gen, SRC_DOF_HIGH, r, sd.dof_soft_target[env, d], cfm, -wp.inf, 0.0)
                add_dof(rf, env, i, col, 1.0)
    # the viscous part of a friction that also has a Coulomb part is a second row (step.direct_capacity counts a
    # slot for it); returns how many found no slot (the caller then falls back: never dropped silently)
    missing = int(0)
    for r in range(rows.row_count):
        d = rows.row_dof[r]
        c = dp.dof_viscous_friction[d]
        if (
            rows.row_kind[r] == ROW_FRICTION
            and c > 0.0
            and (dp.dof_static_friction[d] > 0.0 or dp.dof_dynamic_friction[d] > 0.0)
        ):
            if rf.count[env] < rf.cfm.shape[1]:
                i = new_row(rf, env, n_gen, SRC_DOF_VISCOUS, r, 0.0, 1.0 / (c * h), -wp.inf, wp.inf)
                add_dof(rf, env, i, tree.dof_gen[d], 1.0)
            else:
                missing += 1
    return missing


@wp.func
def add_velocity_limit(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    sd: StepData,
    rf: RowForm,
    env: int,
    n_gen: int,
    r: int,
    v: float,
    near: float,
) -> int:
    """The velocity-limit row of joint row r when the dof's velocity v exceeds its limit (or comes within `near` of
    it, a speed); returns 1 if added."""
    d = rows.row_dof[r]
    vmax = dp.dof_max_velocity[d]
    if wp.abs(v) <= vmax * (1.0 + 1.0e-6) - near:
        return 0
    i = int(0)
    if v > 0.0:
        i = new_row(rf, env, n_gen, SRC_VELOCITY_LIMIT, r, vmax, 0.0, -wp.inf, 0.0)
    else:
        i = new_row(rf, env, n_gen, SRC_VELOCITY_LIMIT, r, -vmax, 0.0, 0.0, wp.inf)
    add_dof(rf, env, i, tree.dof_gen[d], 1.0)
    return 1


@wp.func
def _tendon_rows(
    rf: RowForm,
    env: int,
    n_gen: int,
    first: int,
    k: int,
    y: float,
    y_limit: float,
    stiffness: float,
    damping: float,
    limit_stiffness: float,
    h: float,
) -> None:
    """Row `first` (its direction set, the last row so far) becomes the rest-length spring on y, whose rate is the
    row velocity; beyond a limit (y_limit != 0) a second row on the same direction is the limit spring, pushing
    back only. Without a rest spring, `first` becomes the limit row, or is dropped."""
    spring = implicit_spring(stiffness, damping, -y, 0.0, h)
    limit = wp.vec2(0.0, -1.0)
    if y_limit != 0.0:
        limit = implicit_spring(limit_stiffness, damping, -y_limit, 0.0, h)
    lo = float(0.0)
    hi = float(wp.inf)
    if y_limit > 0.0:
        lo = -wp.inf
        hi = 0.0
    i = first
    if spring[1] >= 0.0:
        _set_target(rf, env, first, spring[0], spring[1])
        if limit[1] >= 0.0:
            i = new_row(rf, env, n_gen, SRC_COUPLING_LIMIT, k, 0.0, 0.0, 0.0, 0.0)
            c = int(0)
            while c < n_gen:
                rf.g[env, i, c] = rf.g[env, first, c]
                c += 1
    elif limit[1] < 0.0:
        rf.count[env] = rf.count[env] - 1
        return
    if limit[1] >= 0.0:
        _set_target(rf, env, i, limit[0], limit[1])
        rf.lo[env, i] = lo
        rf.hi[env, i] = hi
        rf.source_kind[env, i] = SRC_COUPLING_LIMIT


@wp.func
def add_coupling_rows(
    tree: Tree,
    dp: DofParams,
    cr: CouplingRows,
    sd: StepData,
    rf: RowForm,
    joint_q: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
    erp: float,
) -> None:
    """Mimic joints and tendons."""
    tendon = int(-1)
    for k in range(cr.row_count):
        item = cr.row_item[k]
        kind = cr.row_kind[k]
        if kind == COUPLING_SPATIAL:
            t = cr.leaf_tendon[item]
            ls = sd.cpl_len[env, k]
            y_limit = spatial_limit_error(ls, cr.leaf_limit_low[item], cr.leaf_limit_high[item])
            first = new_row(rf, env, n_gen, SRC_COUPLING, k, 0.0, 0.0, -wp.inf, wp.inf)
            copy_dir(rf, env, first, n_gen, sd.cpl_g, k)
            # the row velocity g.v is the rate of (rest length - length)
            _tendon_rows(
                rf,
                env,
                n_gen,
                first,
                k,
                cr.leaf_rest_length[item] - ls,
                y_limit,
                cr.st_stiffness[t],
                cr.st_damping[t],
                cr.st_limit_stiffness[t],
                h,
            )
        elif kind == COUPLING_FIXED:
            t = cr.ftj_tendon[item]
            if t == tendon:
                continue  # one row per fixed tendon, along sum_j c_j e_j
            tendon = t
            length = cr.ft_offset[t]
            first = new_row(rf, env, n_gen, SRC_COUPLING, k, 0.0, 0.0, -wp.inf, wp.inf)
            for m in range(cr.ft_joint_count[t]):
                u = cr.ft_joint_start[t] + m
                length += cr.ftj_coef[u] * joint_q[env, cr.ftj_dof[u]]
                add_dof(rf, env, first, tree.dof_gen[cr.ftj_dof[u]], cr.ftj_coef[u])
            y_limit = float(0.0)
            if not is_soft(cr.ft_limit_soft[t]):  # a MuJoCo-soft limit is a row of its own (COUPLING_TENDON_LIMIT)
                if length < cr.ft_limit_low[t]:
                    y_limit = length - cr.ft_limit_low[t]
                elif length > cr.ft_limit_high[t]:
                    y_limit = length - cr.ft_limit_high[t]
            _tendon_rows(
                rf,
                env,
                n_gen,
                first,
                k,
                length - cr.ft_rest_length[t],
                y_limit,
                cr.ft_stiffness[t],
                cr.ft_damping[t],
                cr.ft_limit_stiffness[t],
                h,
            )
        elif kind == COUPLING_TENDON_LIMIT or sd.cpl_soft_cfm[env, k] >= 0.0:
            # MuJoCo-soft (coupling_rows.soft_coupling_row), the same row in both passes: a mimic joint, or a tendon
            # limit beyond its range at the step's start, pushing only (SOFT_APART within it: no row)
            cfm = sd.cpl_soft_cfm[env, k]
            if cfm >= 0.0:
                lo = -wp.inf
                hi = wp.inf
                if kind == COUPLING_TENDON_LIMIT:
                    if sd.cpl_len[env, k] < cr.ft_limit_low[item]:
                        lo = 0.0
                    else:
                        hi = 0.0
                i = new_row(rf, env, n_gen, SRC_COUPLING, k, sd.cpl_soft_target[env, k], cfm, lo, hi)
                copy_dir(rf, env, i, n_gen, sd.cpl_g, k)
        else:
            c = mimic_value(cr, joint_q, env, item)
            max_speed = mimic_speed_bound(cr, dp.dof_max_velocity, joint_q, env, item)
            r = sd.cpl_r[env, k]
            bias = erp
            cfm = float(0.0)
            mu = cr.mimic_natural_frequency[item]
            zeta = cr.mimic_damping_ratio[item]
            if mu > 0.0 and zeta > 0.0 and r > 0.0:
                kp = mu * mu / r
                kd = 2.0 * mu * zeta / r
                cfm = 1.0 / (h * (h * kp + kd))
                bias = h * kp / (h * kp + kd)
            target = -wp.clamp(bias * c / h, -max_speed, max_speed)
            i = new_row(rf, env, n_gen, SRC_COUPLING, k, target, cfm, -wp.inf, wp.inf)
            set_velocity_pass(rf, env, i, 0.0, 0.0)  # hard and unbiased, a compliant one too
            copy_dir(rf, env, i, n_gen, sd.cpl_g, k)


@wp.func
def _copy_span(rf: RowForm, ja: BodyJointArrays, env: int, i: int, r: int, span: wp.vec4i) -> None:
    """Row i's direction from loop row r: its joint's two trees (the rest of g was zeroed by _new_row)."""
    for part in range(2):
        k = span[2 * part]
        while k < span[2 * part] + span[2 * part + 1]:
            rf.g[env, i, k] = ja.row_g[env, r, k]
            k += 1


@wp.func
def add_body_joint_range_row(
    ja: BodyJointArrays,
    sd: StepData,
    rf: RowForm,
    env: int,
    n_gen: int,
    r: int,
    span: wp.vec4i,
    low: float,
    high: float,
    value: float,
    h: float,
    joint_erp: float,
    near: float,
) -> int:
    """Loop row r's hard range as a one-sided row on the side that is violated or that the velocity in sd.gen_v
    would cross (or come within `near` of) within the step (limit_row's rule); returns 1 if a row was added."""
    i = new_row(rf, env, n_gen, SRC_BODY_JOINT, r, 0.0, 0.0, 0.0, 0.0)
    _copy_span(rf, ja, env, i, r, span)
    res = limit_row(value - low, high - value, velocity(rf, sd.gen_v, env, i, n_gen), h, joint_erp, near)
    if res[1] == 0.0:
        rf.count[env] = rf.count[env] - 1
        return 0
    _set_target(rf, env, i, res[0], 0.0)
    set_velocity_pass(rf, env, i, res[2], 0.0)
    if res[1] > 0.0:
        rf.hi[env, i] = wp.inf
    else:
        rf.lo[env, i] = -wp.inf
        rf.source_kind[env, i] = SRC_BODY_JOINT_HIGH
    return 1


@wp.func
def carried_row_target(slot: int, rate: float, last_rate: float) -> float:
    """The velocity a hard row asks for in the direct solver's velocity pass: half of what the turn of its direction
    over the last step added to its velocity, -(g_n . v_n - g_(n-1) . v_n) / 2, with v_n the velocity the step
    started from (`rate` = g_n . v_n) and g_(n-1) . v_n what the last step left it at (`last_rate`, row_rate).
    Projecting onto the start-of-step rows (target 0) makes the velocity tangent to the constraint where the step
    begins, and the next step's rows, turned by h w, take a share (h w)^2 / 2 of the energy each step: a loop loses
    its energy at first order in h. Asking for half the turn, extrapolated, leaves the velocity tangent at the middle
    of the next step, as a symplectic (RATTLE-like) projection does, and a rigid loop keeps its energy to second
    order (docs/solvers.md, "Energy"). From velocities, not from the position errors' drift (h^2 w^2 r / 2, below
    float32's resolution of a pose at 1 ms steps). 0 without a last rate (the first step, a row just switched on,
    after a fallback); at most the correction cap."""
    if not wp.isfinite(last_rate):
        return 0.0
    cap = MAX_CORRECTION_LINEAR
    if slot < 3:
        cap = MAX_CORRECTION_ANGULAR
    return wp.clamp(0.5 * (last_rate - rate), -cap, cap)


@wp.func
def add_body_joint_rows(
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    rf: RowForm,
    env: int,
    n_gen: int,
    h: float,
    joint_erp: float,
) -> None:
    """The rows of the joints between bodies, each in its kind's form."""
    # while every joint of the env is within the violation tolerances, the hard slots carry their directions' turn
    # in the velocity pass; a joint beyond them is being pulled together (or cannot close), its turn is that of the
    # correction, and the joints it moves would carry it on
    held = int(1)
    for j in range(jt.joint_count):
        err = ja.error[env, j]
        if err[0] > LINEAR_TOLERANCE or err[1] > ANGULAR_TOLERANCE:
            held = 0
    for j in range(jt.joint_count):
        span = jt.joint_span[j]
        for r in range(jt.joint_row_start[j], jt.joint_row_start[j] + jt.joint_row_count[j]):
            active = ja.row_active[env, r]
            if active == ROW_OFF:
                continue
            kind = jt.row_kind[r]
            k = jt.row_coord[r]
            value = ja.row_value[env, r]
            coef = ja.row_coef[env, r]
            i = int(-1)
            if kind == BODY_ROW_DRIVE:
                st = jt.coord_stiffness[k]
                dm = jt.coord_damping[k]
                if jt.coord_drive[k] == DRIVE_ACCELERATION:
                    st /= ja.row_r[env, r]
                    dm /= ja.row_r[env, r]
                spring = implicit_spring(st, dm, ja.target_position[env, k] - value, ja.target_velocity[env, k], h)
                if spring[1] >= 0.0:
                    bound = jt.coord_max_force[k] * h
                    i = new_row(rf, env, n_gen, SRC_BODY_JOINT, r, spring[0], spring[1], -bound, bound)
                    _copy_span(rf, ja, env, i, r, span)
            elif kind == BODY_ROW_RANGE and active == ROW_ON:
                low = ja.range_low[env, k]
                high = ja.range_high[env, k]
                if coef[1] < 0.0:  # hard range
                    add_body_joint_range_row(ja, sd, rf, env, n_gen, r, span, low, high, value, h, joint_erp, 0.0)
                else:  # soft range: a deadzone, an implicit spring beyond either bound that only pushes back
                    if low > -wp.inf:
                        i = new_row(rf, env, n_gen, SRC_BODY_JOINT, r, -coef[0] * (value - low), coef[1], 0.0, wp.inf)
                        _copy_span(rf, ja, env, i, r, span)
                    if high < wp.inf:
                        i = new_row(
                            rf, env, n_gen, SRC_BODY_JOINT_HIGH, r, coef[0] * (high - value), coef[1], -wp.inf, 0.0
                        )
                        _copy_span(rf, ja, env, i, r, span)
            else:  # a constrained slot or a locked coordinate
                if coef[1] < 0.0:
                    target = hard_row_target(coef, jt.row_slot[r], value, joint_erp, h)
                    i = new_row(rf, env, n_gen, SRC_BODY_JOINT, r, target, 0.0, -wp.inf, wp.inf)
                    _copy_span(rf, ja, env, i, r, span)
                    carried = float(0.0)
                    if held != 0:
                        rate = velocity(rf, sd.gen_v0, env, i, n_gen)
                        carried = carried_row_target(jt.row_slot[r], rate, ja.row_rate[env, r])
                    set_velocity_pass(rf, env, i, carried, 0.0)
                else:
                    target = -coef[0] * value
                    if coef[3] != 0.0:  # MuJoCo-soft (body_joint_rows._mujoco_soft_coefficients)
                        target = coef[4]
                    i = new_row(rf, env, n_gen, SRC_BODY_JOINT, r, target, coef[1], -wp.inf, wp.inf)
                    _copy_span(rf, ja, env, i, r, span)
