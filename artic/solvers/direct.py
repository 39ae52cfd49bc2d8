"""The direct solver (SolverType.DIRECT): the step's rows, in the one row form (constraints/row_form.py), solved
together as one bounded mixed LCP per env by pivoting (solvers/mlcp.py), inside the same one-launch step.

Schedule, mirroring PGS's split into position and velocity iterations (solvers/pgs.py): a position solve whose
targets include the ERP bias gives the velocity the positions are integrated with; a velocity solve of the same
rows without position bias gives the velocity carried into the next step, and the impulses that are reported.
Each solve starts from the unconstrained velocity v*: A = G M^-1 G^T + diag(cfm), b = target - G v*.

Rows that v* alone cannot predict are added lazily: a joint limit or a body joint's hard range the solved velocity
would cross within the step, and a velocity limit the solved velocity exceeds; the problem is then solved again,
warm-started, at most LAZY_ROUNDS times.

The velocity solve starts from the position solve's impulses and active set (the same rows in the same order).
The LCP is float64 (solvers/mlcp.py); its regularization stays below REG_CFM_FRACTION of the smallest compliance
among the rows, so that soft rows among redundant hard ones (the guide's finger) decide the answer.

When a solve fails (a value is not finite; the velocity solve's answer, or that of a solve that spent its pivot budget,
violates the conditions by more than FAILED_TOLERANCES times the pivoting's tolerance; a lazy row finds no slot; the
last lazy round still calls for rows; the env's contacts outnumber the room its rows have for them, which the host
grows on demand) the env falls back to PGS for this step; the fallback is counted per env and
reported by Scene (never silent). The per-env report: pivots, rows, complementarity error (also of a rejected solve),
whether the friction boxes settled, whether a pivot budget was spent, and each deadzone controller's impulse."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import (
    BODY_ROW_DRIVE,
    MAX_CORRECTION_LINEAR,
    BodyJointArrays,
    BodyJointTable,
    factor_joint_block,
    orthogonalize_coordinate_rows,
)
from ..constraints.contact_rows import ContactRows
from ..constraints.coupling_rows import CouplingRows
from ..constraints.deadzone_rows import DeadzoneTable
from ..constraints.dof_rows import DofRows
from ..constraints.row_form import (
    SRC_BODY_JOINT,
    SRC_CONTACT,
    SRC_CONTACT_EDGE,
    SRC_CONTACT_FACET,
    RowForm,
)
from ..core.data import Kin, StepData
from ..core.model import DofParams, Tree
from .cone_polish import polish_cones
from .direct_arrays import DirectArrays, write_back
from .direct_rows import lazy_rows, step_rows
from .fold import fold_exceeded, fold_rows, fold_velocity
from .mlcp import (
    BUDGET_HIT,
    MAX_FRICTION_PASSES,
    UNSETTLED,
    complementarity_error,
    factor_drop,
    lcp_tolerance,
    solve_friction_lcp,
)
from .pgs import pgs_prerequisites, pgs_solve
from .tree_rows import a_row, from_roots, row_trees, row_u

LAZY_ROUNDS = wp.constant(4)
QUICK_PASSES = wp.constant(4)  # friction passes of a round before its lazy rows are checked
REG_CFM_FRACTION = wp.constant(1.0e-3)  # the regularization floor stays below this fraction of every row's cfm
FAILED_TOLERANCES = wp.constant(1000.0)  # a velocity solve whose complementarity error exceeds this many times
# the pivoting's own tolerance (1e-2 of the largest |b|, at least 1e-4 m/s) has failed
MIN_RESPONSE = wp.constant(1.0e-12)  # a hard row nothing can move along is held at zero impulse
CORRECTION_MARGIN = wp.constant(4.0)  # the position solve's correction may take this many times its rows' energy


@wp.func
def _pass_cfm(rf: RowForm, env: int, i: int, position: int) -> float:
    """Row i's compliance in the position pass (position 1) or the velocity pass."""
    if position != 0:
        return rf.cfm[env, i]
    return rf.cfm_vel[env, i]


@wp.func
def _build(
    tree: Tree,
    factor: wp.array3d(dtype=wp.float64),
    rf: RowForm,
    da: DirectArrays,
    env: int,
    start: int,
    m: int,
    n_gen: int,
    warm: int,
    keep: int,
    position: int,
) -> None:
    """Rows start..m-1 of A (and their columns) and of b, with the pass's targets and compliances (_pass_cfm); their
    impulses start at 0, except the first `warm` rows', which keep the previous solve's. The first `keep` rows are
    the previous solve's (the velocity solve's, after the position solve): their entries among themselves stay, and
    only their compliance, right-hand side and bounds are renewed.

    A_ij = g_i . (M + D)^-1 g_j = u_i . u_j (u in float64 through the tree factor, solvers/tree_rows.py) sums over
    the rows' patterns (da.nz: its columns and their ancestors) in the trees both rows touch (tree_rows.a_row): a
    dof row's pattern is its dof's path to the root, a contact row's the paths of the links it touches, and rows on
    trees apart (a stack's far contacts) cost no sum; each pair is computed once (A is symmetric)."""
    many_trees = int(tree.tree_gen_start.shape[0] > 1)
    for i in range(start, m):
        if i >= keep:
            nnz = row_u(tree, factor, rf.g, da.u64, da.nz, env, i, n_gen)
            da.nnz[env, i] = nnz
            row_trees(tree, da, env, i, nnz)
            a_row(da, env, i, nnz, many_trees)
            da.resp[env, i] = da.a[env, i, i]
        resp = da.resp[env, i]
        cfm = _pass_cfm(rf, env, i, position)
        old_diag = da.a[env, i, i]
        old_b = da.b[env, i]
        da.a[env, i, i] = resp + wp.float64(cfm)
        vel = wp.float64(0.0)
        q = int(0)
        while q < da.nnz[env, i]:
            k = da.nz[env, i, q]
            vel += wp.float64(rf.g[env, i, k]) * da.v_free[env, k]
            q += 1
        target = rf.target[env, i]
        if position == 0:
            target = rf.target_vel[env, i]
        da.b[env, i] = wp.float64(target) - vel
        da.lo[env, i] = wp.float64(rf.lo[env, i])
        da.hi[env, i] = wp.float64(rf.hi[env, i])
        if resp <= wp.float64(MIN_RESPONSE) and cfm <= 0.0:
            da.lo[env, i] = wp.float64(0.0)
            da.hi[env, i] = wp.float64(0.0)
            rf.findex[env, i] = -1
        if i < keep:  # w = A x - b follows the change of this row's diagonal and right-hand side
            off = 2 * (da.y.shape[1] // 4)
            da.y[env, off + i] = (
                da.y[env, off + i] + (da.a[env, i, i] - old_diag) * da.x[env, i] - (da.b[env, i] - old_b)
            )
        if i >= warm:
            da.x[env, i] = wp.float64(0.0)


@wp.func
def _source(rf: RowForm, env: int, i: int) -> int:
    """Row i's source as one number (kind + 16 index; the kinds are below 16), to match rows between solves."""
    return rf.source_kind[env, i] + 16 * rf.source_index[env, i]


@wp.func
def _velocity(
    tree: Tree, rf: RowForm, da: DirectArrays, v: wp.array2d(dtype=float), env: int, m: int, n_gen: int
) -> None:
    """v = v_free + (M + D)^-1 G^T x = v_free + L^-1 D^-1/2 sum_i x_i u_i, in float64 (the impulses of stiff rows
    cancel each other) with the u that A was built from, so that each row's velocity is the one the solve saw."""
    w = da.fold_scratch  # free once fold_velocity has run
    for k in range(n_gen):
        acc = wp.float64(0.0)
        i = int(0)
        while i < m:
            xi = da.x[env, i]
            if xi != wp.float64(0.0):
                acc += xi * da.u64[env, i, k]
            i += 1
        w[env, k] = acc
    from_roots(tree, da.factor64, w, env, n_gen)
    for k in range(n_gen):
        v[env, k] = float(da.v_free[env, k] + w[env, k])


@wp.func
def _warm_from_last_step(rf: RowForm, da: DirectArrays, env: int, base: int) -> None:
    """Start the position solve's rows 0..base-1 from the last step's impulses of the rows with the same source
    (0 where there is none), as PGS warm-starts its contacts: the active set is then mostly right from the start,
    and a step takes a pivot or two where a cold start takes one per row that ends clamped. Rows keep their order
    from step to step except where rows come or go, so the search starts at the last match's offset. Unless the rows
    are the last step's, in the same order and without contacts, the factorization's memo is cleared."""
    n = da.last_count[env]
    shift = int(0)
    same = int(base == n)  # the last step's rows in the same order, and no contact (whose slots change meaning)
    i = int(0)
    while i < base:
        src = _source(rf, env, i)
        kind = rf.source_kind[env, i]
        contact = kind == SRC_CONTACT or kind == SRC_CONTACT_EDGE or kind == SRC_CONTACT_FACET
        if i >= n or da.last_source[env, i] != src or contact:
            same = 0
        da.x[env, i] = wp.float64(0.0)
        j = i + shift
        if j < 0 or j >= n or da.last_source[env, j] != src:
            j = int(0)
            while j < n and da.last_source[env, j] != src:
                j += 1
        if j < n:
            da.x[env, i] = da.last_x[env, j]
            shift = j - i
        i += 1
    if same == 0:
        da.memo.count[env] = 0  # its verdicts were on other rows


@wp.func
def _remember_step(rf: RowForm, da: DirectArrays, env: int) -> None:
    """Keep this step's impulses and their sources for the next step's warm start (the pivoting's, before a cone
    polish moved them)."""
    m = rf.count[env]
    i = int(0)
    while i < m:
        da.last_x[env, i] = da.x[env, i]
        if da.polished[env] != 0:
            da.last_x[env, i] = da.box_x[env, i]
        da.last_source[env, i] = _source(rf, env, i)
        i += 1
    da.last_count[env] = m


@wp.func
def _forget_slot_rates(jt: BodyJointTable, ja: BodyJointArrays, env: int) -> None:
    r = int(0)
    while r < jt.row_count:
        ja.row_rate[env, r] = wp.nan
        r += 1


@wp.func
def _remember_slot_rates(
    jt: BodyJointTable, ja: BodyJointArrays, rf: RowForm, da: DirectArrays, sd: StepData, env: int, ok: int
) -> None:
    """Each hard slot's g.v with the velocity carried on (ja.row_rate), which the next velocity pass compares with
    its turned direction's (carried_row_target); NaN for every other row, and for every row after a fallback."""
    _forget_slot_rates(jt, ja, env)
    if ok == 0:
        return
    i = int(0)
    while i < rf.count[env]:
        r = rf.source_index[env, i]
        if rf.source_kind[env, i] == SRC_BODY_JOINT and rf.cfm[env, i] == 0.0 and rf.lo[env, i] == -wp.inf:
            if rf.hi[env, i] == wp.inf and jt.row_kind[r] != BODY_ROW_DRIVE:  # a hard slot or lock
                rate = float(0.0)
                q = int(0)
                while q < da.nnz[env, i]:
                    k = da.nz[env, i, q]
                    rate += rf.g[env, i, k] * sd.gen_v[env, k]
                    q += 1
                ja.row_rate[env, r] = rate
        i += 1
    k = int(0)
    while k < sd.gen_v.shape[1]:
        da.carried[env, k] = sd.gen_v[env, k]
        k += 1


@wp.func
def refresh_slot_rates(
    jt: BodyJointTable, ja: BodyJointArrays, rf: RowForm, da: DirectArrays, sd: StepData, env: int
) -> None:
    """_remember_slot_rates again once the step changed the velocity the direct solve carried on (MuJoCo's damping,
    dynamics/passive.py): the next step starts from that velocity, and a carried velocity other than its start would
    make it forget the rates every step. Nothing after a fallback (PGS carried that step)."""
    if da.fallback[env] == 0:
        _remember_slot_rates(jt, ja, rf, da, sd, env, 1)


@wp.func
def _keep_factor(rf: RowForm, da: DirectArrays, env: int) -> None:
    """Before the velocity solve's A is renewed: keep the position solve's factor for its rows whose compliance is
    the same in both passes (a compliant mimic row's is not) and drop the others from it (rank-one updates), so that
    the velocity solve, whose active set is usually the position solve's, starts without a factorization. A changed
    regularization cap drops the factor later (_solve)."""
    nf = da.nfree[env]
    if nf < 0:
        return
    k = nf - 1
    while k >= 0:
        i = da.free[env, k]
        if da.a[env, i, i] != da.resp[env, i] + wp.float64(rf.cfm_vel[env, i]):
            nf = factor_drop(da.chol, da.free, env, nf, k)
        k -= 1
    da.nfree[env] = nf


@wp.func
def _regularization_cap(rf: RowForm, da: DirectArrays, env: int, m: int, position: int) -> wp.float64:
    """The largest regularization the solve may put on a row: REG_CFM_FRACTION of the smallest compliance among the
    rows. Where soft rows meet redundant hard ones (the guide's finger: a drive of cfm 3.6e-5 against a limit and a
    contact on two dofs), the drive's compliance is what decides the answer, and the hard rows must stay far
    stiffer than it; without soft rows a dependent row gets free_factor.REG_REL of its entry."""
    cfm_min = float(wp.inf)
    for i in range(m):
        c = _pass_cfm(rf, env, i, position)
        if c > 0.0:
            cfm_min = wp.min(cfm_min, c)
    for f in range(da.fold_count[env]):  # a folded drive is still one of the rows (the finger's, kp 1e8)
        cfm_min = wp.min(cfm_min, da.fold_row[env, f, 2])
    return wp.float64(REG_CFM_FRACTION * cfm_min)


@wp.func
def _solve(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    rf: RowForm,
    da: DirectArrays,
    env: int,
    n_gen: int,
    h: float,
    position: int,
    w_fresh: int,
) -> wp.vec3i:
    """One solve of the step's rows (direct_rows.step_rows) in the position pass or the velocity pass: assemble, solve,
    add lazy rows and solve again; the velocity ends in sd.gen_v. The position solve starts from the last step's
    impulses (_warm_from_last_step), the velocity solve from the position solve's: the same rows in the same order (its
    lazy ones included), the same A but for the diagonal of rows whose compliance differs, its factor and usually its
    active set; with w_fresh (the position solve ended SOLVED: its w = A x - b is exact) the velocity solve's w follows
    from it by the change of A's diagonal and of b (_build), without an O(m^2) product. Returns (pivots, ok, flags): ok
    0 if it failed; flags as solve_friction_lcp's, of the final rows."""
    fold_velocity(
        tree, da.v_star, da.fold_col, da.fold_row, da.fold_count, da.factor64, da.fold_scratch, da.v_free, env, n_gen,
        position,
    )  # fmt: skip
    warm = rf.count[env]  # _build keeps these impulses
    keep = int(0)
    if position != 0:
        _warm_from_last_step(rf, da, env, warm)
        da.nfree[env] = -1  # a new A: no factor yet
    else:
        keep = warm
        _keep_factor(rf, da, env)
    built = int(0)
    pivots = int(0)
    flags = int(0)
    w_known = w_fresh * (1 - position)
    for _round in range(LAZY_ROUNDS + 1):
        m = rf.count[env]
        _build(tree, da.factor64, rf, da, env, built, m, n_gen, warm, keep, position)
        built = m
        cap = _regularization_cap(rf, da, env, m, position)
        if cap != da.cap[env]:  # the factor's regularization changed (lazy rows are hard: not between rounds)
            da.nfree[env] = -1
        da.cap[env] = cap
        # a few friction passes first: a round that calls for lazy rows is solved again anyway
        res = solve_friction_lcp(
            da.a, da.b, da.lo, da.hi, da.x, da.state, da.chol, da.free, da.nfree, da.y, rf.g, da.memo, rf.findex,
            rf.fcount, rf.mu_static, rf.mu_dynamic, env, m, cap, da.pivot_limit, QUICK_PASSES, w_known,
        )  # fmt: skip
        w_known = 0
        pivots += res[0]
        if res[1] == 0:
            return wp.vec3i(pivots, 0, res[2])
        _velocity(tree, rf, da, sd.gen_v, env, m, n_gen)
        added = lazy_rows(tree, dp, rows, jt, ja, sd, rf, env, n_gen, h, 0.0)
        if added < 0:
            return wp.vec3i(pivots, 0, res[2])
        flags = res[2]
        if added == 0:
            if (flags & UNSETTLED) != 0:  # the final rows: let the friction boxes settle, warm-started
                res = solve_friction_lcp(
                    da.a, da.b, da.lo, da.hi, da.x, da.state, da.chol, da.free, da.nfree, da.y, rf.g, da.memo,
                    rf.findex, rf.fcount, rf.mu_static, rf.mu_dynamic, env, m, cap, da.pivot_limit,
                    MAX_FRICTION_PASSES, int((flags & BUDGET_HIT) == 0),  # a solve that ended SOLVED left w afresh
                )  # fmt: skip
                pivots += res[0]
                if res[1] == 0:
                    return wp.vec3i(pivots, 0, res[2])
                flags = (flags & BUDGET_HIT) | res[2]
                _velocity(tree, rf, da, sd.gen_v, env, m, n_gen)
            sweeps = polish_cones(rf, da, env, m)  # elliptic contacts from the box onto their cone
            da.polished[env] = int(sweeps != 0)
            if sweeps != 0:
                da.cone_sweeps[env] = da.cone_sweeps[env] + wp.max(sweeps, 0)
                if sweeps < 0:
                    flags = flags | UNSETTLED
                _velocity(tree, rf, da, sd.gen_v, env, m, n_gen)
            return wp.vec3i(pivots, 1, flags)
    # the last round still called for lazy rows, which were added but not solved: a failure (PGS takes the step)
    return wp.vec3i(pivots, 0, flags)


@wp.func
def _bilateral_residual(rf: RowForm, da: DirectArrays, v: wp.array2d(dtype=float), env: int) -> float:
    """The largest |g.v - target| over the hard bilateral rows (no bounds, no compliance): zero when the position
    solve met them, and what it could not meet when they contradict each other (the complementarity of the
    regularized problem stays small then). Over each row's nonzero columns (da.nz)."""
    worst = float(0.0)
    i = int(0)
    while i < rf.count[env]:
        if rf.cfm[env, i] == 0.0 and rf.lo[env, i] == -wp.inf and rf.hi[env, i] == wp.inf:
            s = float(0.0)
            q = int(0)
            while q < da.nnz[env, i]:
                k = da.nz[env, i, q]
                s += rf.g[env, i, k] * v[env, k]
                q += 1
            worst = wp.max(worst, wp.abs(s - rf.target[env, i]))
        i += 1
    return worst


@wp.func
def _rows_correction_energy(rf: RowForm, da: DirectArrays, env: int) -> float:
    """sum of target^2 / A_ii over the position solve's rows [J]: the energy its corrections would take if each row
    were closed on its own (each hard row's target is capped, hard_row_target)."""
    e = float(0.0)
    for i in range(rf.count[env]):
        aii = float(da.a[env, i, i])
        t = rf.target[env, i]
        if aii > 0.0:
            e += t * t / aii
    return e


@wp.func
def _bound_correction(sd: StepData, env: int, n_gen: int, rows_energy: float) -> None:
    """Scale the position solve's correction d = gen_vpos - gen_v (what its ERP targets add to the velocity solve's
    answer) down to CORRECTION_MARGIN times the rows' own energy when d^T M d exceeds that and d is faster than
    a row's capped correction (MAX_CORRECTION_LINEAR, in any generalized velocity). Rows that are nearly
    dependent (a loop that cannot close, stretched towards its singular pose) give corrections of any size for
    capped targets (velocity ~ target^2 / regularization); PhysX bounds a correction per body (max depenetration),
    this bounds it per mechanism."""
    # small corrections pass whatever their energy: a chain of mass ratio 1000 couples its rows so that the exact
    # correction takes 1000 times the rows' energy, for errors of micrometres (and d^T M d, O(N^2), is only formed
    # for a fast one)
    fastest = float(0.0)
    i = int(0)
    while i < n_gen:
        fastest = wp.max(fastest, wp.abs(sd.gen_vpos[env, i] - sd.gen_v[env, i]))
        i += 1
    if fastest <= MAX_CORRECTION_LINEAR:
        return
    e = float(0.0)
    for i in range(n_gen):
        s = float(0.0)
        for k in range(n_gen):
            s += sd.mass_matrix[env, i, k] * (sd.gen_vpos[env, k] - sd.gen_v[env, k])
        e += (sd.gen_vpos[env, i] - sd.gen_v[env, i]) * s
    if e > CORRECTION_MARGIN * rows_energy:
        f = wp.sqrt(CORRECTION_MARGIN * rows_energy / e)
        for i in range(n_gen):
            sd.gen_vpos[env, i] = sd.gen_v[env, i] + f * (sd.gen_vpos[env, i] - sd.gen_v[env, i])


@wp.func
def _passes_alike(rf: RowForm, da: DirectArrays, env: int) -> int:
    """1 when every row, folded ones included, has the same target and compliance in both passes (an MJCF model whose
    constraints are all soft: MuJoCo solves once), so that the velocity solve would repeat the position solve."""
    for i in range(rf.count[env]):
        if rf.target_vel[env, i] != rf.target[env, i] or rf.cfm_vel[env, i] != rf.cfm[env, i]:
            return 0
    for f in range(da.fold_count[env]):
        if da.fold_row[env, f, 1] != da.fold_row[env, f, 0]:
            return 0
    return 1


@wp.func
def _attempt(
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
    da: DirectArrays,
    joint_q: wp.array2d(dtype=float),
    target_velocity: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
    fold: int,
) -> wp.vec4i:
    """The step's rows (with `fold`, the foldable ones folded into the mass matrix: solvers/fold.py), the position
    solve (sd.gen_vpos) and the velocity solve (sd.gen_v). Returns (pivots, ok, both solves' flags, the last
    solve's flags); da.fold_exceeded is 1 when a folded row's impulse left its box in either pass (the caller then
    solves again without folding), da.complementarity the error of a position solve that spent its pivot budget,
    da.rows_energy the position rows' correction energy (_bound_correction)."""
    res = wp.vec3i(0, 0, 0)
    exceeded = int(0)
    if (
        step_rows(
            tree,
            dp,
            rows,
            cr,
            cp,
            ct,
            jt,
            ja,
            kin,
            dz,
            sd,
            rf,
            da.v_star,
            joint_q,
            target_velocity,
            env,
            n_gen,
            dt,
            da.friction_directions,
        )
        != 0
    ):
        fold_rows(
            tree, sd.mass_matrix, rf, da.fold_src, da.fold_col, da.fold_row, da.fold_count, da.factor64, env, n_gen,
            fold,
        )  # fmt: skip
        res = _solve(tree, dp, rows, jt, ja, sd, rf, da, env, n_gen, dt, 1, 0)
        if res[1] != 0:
            exceeded = fold_exceeded(sd.gen_v, da.fold_col, da.fold_row, da.fold_count, da.fold_x, env, 1)
    pivots = res[0]
    flags = res[2]
    ok = res[1]
    da.bilateral_residual[env] = _bilateral_residual(rf, da, sd.gen_v, env)
    err = float(0.0)
    if ok != 0 and (flags & BUDGET_HIT) != 0:
        # a position solve that spent its pivot budget integrates the positions with its last feasible point:
        # only if that is a solution (an exact solve of redundant rows with inconsistent ERP targets, a four-bar's,
        # leaves a residual that is the regularized problem's answer, and is kept)
        m0 = rf.count[env]
        err = float(complementarity_error(da.a, da.b, da.lo, da.hi, da.x, da.state, da.y, env, m0, 0))
        if err > FAILED_TOLERANCES * float(lcp_tolerance(da.b, env, m0)):
            ok = 0
    rows_energy = float(0.0)
    if ok != 0:
        rows_energy = _rows_correction_energy(rf, da, env)
        for k in range(n_gen):
            sd.gen_vpos[env, k] = sd.gen_v[env, k]
        if _passes_alike(rf, da, env) != 0:  # the velocity solve would solve the position solve's problem again
            da.complementarity[env] = err
            da.rows_energy[env] = rows_energy
            da.fold_exceeded[env] = exceeded
            return wp.vec4i(pivots, ok, flags, res[2])
        w_fresh = int((flags & BUDGET_HIT) == 0)
        if da.polished[env] != 0:  # the velocity solve starts where the pivoting left the position solve's rows
            w_fresh = 0
            for i in range(rf.count[env]):
                da.x[env, i] = da.box_x[env, i]
        res = _solve(tree, dp, rows, jt, ja, sd, rf, da, env, n_gen, dt, 0, w_fresh)
        pivots += res[0]
        ok = res[1]
        flags = flags | res[2]
        if ok != 0:
            exceeded = exceeded | fold_exceeded(sd.gen_v, da.fold_col, da.fold_row, da.fold_count, da.fold_x, env, 0)
    da.complementarity[env] = err
    da.rows_energy[env] = rows_energy
    da.fold_exceeded[env] = exceeded
    return wp.vec4i(pivots, ok, flags, res[2])


@wp.func
def _fall_back(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    cr: CouplingRows,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    sd: StepData,
    rf: RowForm,
    da: DirectArrays,
    joint_q: wp.array2d(dtype=float),
    target_velocity: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
    n_pos: int,
    n_vel: int,
    tolerance: float,
    dense: int,
) -> None:
    """This env's step solved by PGS from v* instead, counted and flagged for the host; each body joint's block
    factored and its coordinate rows orthogonalized first (setup_body_joints does it for Gauss-Seidel only), and
    without `dense` M^-1 and the rows' responses (pgs.pgs_prerequisites: the direct setup left them out)."""
    da.last_count[env] = 0
    da.fallback[env] = 1
    da.fallback_count[env] = da.fallback_count[env] + 1
    da.any_fallback[0] = 1  # every writer stores the same value: no atomics needed
    for k in range(n_gen):
        sd.gen_v[env, k] = da.v_star[env, k]
    _remember_slot_rates(jt, ja, rf, da, sd, env, 0)
    for j in range(jt.joint_count):  # the direct setup left them out
        factor_joint_block(jt, ja, env, j)
        orthogonalize_coordinate_rows(jt, ja, env, j)
    if dense == 0:
        pgs_prerequisites(tree, dp, cr, cp, ct, kin, link_pose, sd, target_velocity, env, n_gen, dt)
    pgs_solve(tree, dp, rows, cr, cp, ct, jt, ja, sd, joint_q, env, n_gen, dt, n_pos, n_vel, tolerance)


@wp.func
def direct_solve(
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
    da: DirectArrays,
    joint_q: wp.array2d(dtype=float),
    link_pose: wp.array2d(dtype=wp.transform),
    target_velocity: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
    n_pos: int,
    n_vel: int,
    tolerance: float,
    dense: int,
) -> None:
    """Position solve (sd.gen_vpos), then velocity solve (sd.gen_v); PGS for this env if either fails (then
    sd.solver_iterations counts its sweeps; 0 when solved directly). `dense`: the setup computed M^-1 and the rows'
    responses (step_kernel._dense_minv), which PGS needs."""
    same_start = int(1)
    da.cone_sweeps[env] = 0
    da.polished[env] = 0
    for k in range(n_gen):
        da.v_star[env, k] = sd.gen_v[env, k]
        if sd.gen_v0[env, k] != da.carried[env, k]:  # not the velocity the last direct step carried (or NaN)
            same_start = 0
    if same_start == 0:
        _forget_slot_rates(jt, ja, env)
    contacts = cp.count[env]
    if 4 * contacts > 3 * da.contact_slots and da.contact_slots < cp.link_a.shape[1]:
        # the rows' room for contacts runs short (sized by use, Block.direct_contact_slots): the host grows it
        # before it is exceeded where it can; a step that exceeds it is PGS's
        da.wanted[env] = wp.max(da.wanted[env], contacts)
        da.any_fallback[1] = 1
        if contacts > da.contact_slots:
            da.complementarity[env] = 0.0
            da.pivots[env] = 0
            da.rows[env] = 0
            _fall_back(
                tree, dp, rows, cr, cp, ct, jt, ja, kin, link_pose, sd, rf, da, joint_q, target_velocity, env, n_gen,
                dt, n_pos, n_vel, tolerance, dense,
            )  # fmt: skip
            return
    attempt = _attempt(
        tree, dp, rows, cr, cp, ct, jt, ja, kin, dz, sd, rf, da, joint_q, target_velocity, env, n_gen, dt, 1
    )
    if da.fold_exceeded[env] != 0:  # a folded row's impulse left its box: every row in the LCP (solvers/fold.py)
        first_pivots = attempt[0]
        attempt = _attempt(
            tree, dp, rows, cr, cp, ct, jt, ja, kin, dz, sd, rf, da, joint_q, target_velocity, env, n_gen, dt, 0
        )
        attempt[0] = attempt[0] + first_pivots  # the report counts both attempts' pivots
    pivots = attempt[0]
    ok = attempt[1]
    flags = attempt[2]
    last_flags = attempt[3]  # the last solve's
    err = da.complementarity[env]
    rows_energy = da.rows_energy[env]
    for k in range(n_gen):
        if not wp.isfinite(sd.gen_v[env, k]) or not wp.isfinite(sd.gen_vpos[env, k]):
            ok = 0
    da.pivots[env] = pivots
    da.rows[env] = rf.count[env] + da.fold_count[env]
    da.settled[env] = 1 - (flags & UNSETTLED)
    da.budget_hit[env] = (flags & BUDGET_HIT) // BUDGET_HIT
    if ok != 0:
        m = rf.count[env]
        fresh = int((last_flags & BUDGET_HIT) == 0)  # the velocity solve ended SOLVED: its w is A x - b afresh
        err = wp.max(err, float(complementarity_error(da.a, da.b, da.lo, da.hi, da.x, da.state, da.y, env, m, fresh)))
        if err > FAILED_TOLERANCES * float(lcp_tolerance(da.b, env, m)):
            ok = 0  # float32 could not resolve it (the guide's finger with kp 1e8: 18 rad/s): not a solution
    da.complementarity[env] = err
    if ok == 0:
        _fall_back(
            tree, dp, rows, cr, cp, ct, jt, ja, kin, link_pose, sd, rf, da, joint_q, target_velocity, env, n_gen, dt,
            n_pos, n_vel, tolerance, dense,
        )  # fmt: skip
        return
    da.fallback[env] = 0
    sd.solver_iterations[env] = 0
    _remember_step(rf, da, env)
    _bound_correction(sd, env, n_gen, rows_energy)
    _remember_slot_rates(jt, ja, rf, da, sd, env, 1)
    write_back(rf, da, sd, cp, ct, ja, env, n_gen)
