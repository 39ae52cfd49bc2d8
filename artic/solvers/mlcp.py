"""The bounded mixed LCP of one env, solved exactly by pivoting (the ODE paper, "Solving with Complementarity
Conditions"; Baraff 1994; ODE's dLCP).

Problem: given A (m x m, symmetric positive semi-definite, compliance already on its diagonal), b and bounds
lo <= hi (either may be infinite), find lambda and w = A lambda - b with
    lo_i < lambda_i < hi_i  and  w_i = 0,   or   lambda_i = lo_i  and  w_i >= 0,   or   lambda_i = hi_i  and  w_i <= 0.
For a constraint row, w_i is the row's velocity after the impulses minus its target (plus cfm lambda_i): a free row
meets its target, a row at a bound may overshoot it only in the direction its bound forbids pushing against.
Because A is symmetric PSD, this is the box-constrained quadratic program min 1/2 l^T A l - b^T l, lo <= l <= hi.

Method: a primal active-set (principal pivoting) method, Dantzig's idea as Baraff and ODE use it: the rows split
into a free set F (strictly between bounds, w = 0) and a clamped set (at lo or at hi). Unbounded rows are free from
the start and never leave F, as ODE solves them first. Each pass solves A_FF l_F = b_F - A_FC l_C by Cholesky and
then either
* walks from the current (feasible) point towards that solution and stops where the first free row meets a bound,
  which joins the clamped set (a blocking pivot), or
* if the solution is feasible, takes it and frees the clamped row whose w has the wrong sign by the largest margin
  (a releasing pivot); if none has, the point is the exact solution.
The objective decreases strictly at every pivot, so no active set repeats (in exact arithmetic): the method ends in
finitely many pivots. As in ODE's dLCP, the free set's Cholesky factor is updated at each pivot, not recomputed: a
row that joins is appended (one forward substitution, O(f^2)), a row that leaves is deleted and the rows after it
take its column's share by a rank-one update (O(f^2)). The factor lives across calls (nfree[env] >= 0 says it is
valid for the rows listed in free): the friction passes and the lazy rounds of one step, whose matrix only grows
by appended rows, start from the last free set and only the rows whose state changed are added or dropped.

Numerics: float64 throughout (the step's rows are float32; their impulses are not: a limit holding a stiff drive
carries ~1e6 N m s, where float32's 6e-8 alone is ~1 rad/s of joint velocity). The free set's factor, and which rows
of it are regularized as dependent on the others, is solvers/free_factor.py. On the passes that may end the solve
(the first, and once the active set would be final), up to REFINE_PASSES passes of iterative refinement against the
unregularized A_FF remove the regularization's error (and the factor's rounding) from every direction A_FF resolves,
until the residual is below REFINED of the tolerance; only a (nearly) redundant direction keeps its compliance.
A pass count beyond MAX_PIVOTS_PER_ROW * m + 16 (or the caller's pivot limit) ends the solve at its last feasible
point (BUDGET_SPENT: rounding can make a degenerate problem cycle); a non-finite value is a failure. The caller
judges the first by its complementarity error and falls back to projected Gauss-Seidel on failure, counted
(solvers/direct.py).
"""

from __future__ import annotations

import warp as wp

from ..constraints.row_form import FRICTION_CONSTANT
from .free_factor import (
    AT_HIGH,
    AT_LOW,
    FREE,
    STUCK,
    FactorMemo,
    Mat64,
    Vec64,
    append_row,
    dot_row,
    factor_drop,
    substitute,
    sync_factor,
)

FAILED = wp.constant(0)
SOLVED = wp.constant(1)
BUDGET_SPENT = wp.constant(3)
UNSETTLED = wp.constant(1)  # flags of solve_friction_lcp
BUDGET_HIT = wp.constant(2)
REFINE_PASSES = wp.constant(2)  # iterative refinement passes after each free-set solve, at most
REFINED = wp.constant(wp.float64(1.0e-3))  # they end once the free rows' residual is below this share of the tolerance
STALLED = wp.constant(wp.float64(0.5))  # or once a correction did not halve it (a redundant direction, not resolved)
MAX_PIVOTS_PER_ROW = wp.constant(4)
TOL_REL = wp.constant(wp.float64(1.0e-5))  # complementarity tolerance on w, relative to the largest |b_i|
FLOOR_W = wp.constant(wp.float64(1.0e-7))  # [m/s or rad/s] the tolerance's floor
NOISE_REL = wp.constant(wp.float64(1.0e-9))  # a release must beat this fraction of sum_j |a_ij x_j| (rounding)


@wp.func
def _residual(a: Mat64, b: Vec64, x: Vec64, env: int, i: int, m: int) -> wp.float64:
    """w_i = (A x)_i - b_i (without the regularization: the problem as posed)."""
    return dot_row(a, env, i, x, 0, m) - b[env, i]


@wp.func
def _noise(a: Mat64, x: Vec64, env: int, i: int, m: int) -> wp.float64:
    """What rounding can put into w_i: NOISE_REL sum_j |a_ij x_j| (A's entries are sums of float32 products)."""
    s = wp.float64(0.0)
    j = int(0)
    while j < m:
        s += wp.abs(a[env, i, j] * x[env, j])
        j += 1
    return s * NOISE_REL


@wp.func
def _compute_w(a: Mat64, b: Vec64, x: Vec64, y: Vec64, env: int, m: int) -> None:
    """w = A x - b afresh, into y's third part (the pivoting keeps it up to date; this removes its rounding)."""
    off = 2 * (y.shape[1] // 4)
    i = int(0)
    while i < m:
        y[env, off + i] = _residual(a, b, x, env, i, m)
        i += 1


@wp.func
def _free_step(x: Vec64, chol: Mat64, free: wp.array2d(dtype=int), y: Vec64, env: int, nf: int, correct: int) -> None:
    """y[:nf] = d, the step from x_F to the free set's solution y_F = (A_FF + R)^-1 (b_F - A_FC x_C) (R the
    dependent rows' regularization, y's fourth part): since b_F - A_FC x_C = A_FF x_F - w_F, d = -(A_FF + R)^-1 (w_F
    + R x_F), from the kept w in O(f^2). With `correct`, an iterative refinement's correction against the
    unregularized A_FF instead, d = -(A_FF + R)^-1 w_F from a w computed afresh at the point the last pass reached:
    it removes the regularization's error in every direction A_FF resolves (the compliance REG_REL A_ii would
    otherwise give a hard row: a limit holding 1e3 N m s against a stiff drive yields by REG_REL A_ii lambda), and the
    factor's rounding where A is ill-conditioned (a 1:1000 stack), while a redundant direction, which A_FF does not
    resolve, gains at most another regularized share of its residual per correction (solve_box_lcp)."""
    c = y.shape[1] // 4
    off = 2 * c
    k = int(0)
    while k < nf:
        i = free[env, k]
        r = y[env, off + i]
        if correct == 0:
            r += y[env, 3 * c + i] * x[env, i]
        y[env, k] = -r
        k += 1
    substitute(chol, y, env, nf, 0)


@wp.func
def _free_residual(free: wp.array2d(dtype=int), y: Vec64, env: int, nf: int) -> wp.float64:
    """The largest |w_i| over the free rows (w in y's third part)."""
    off = 2 * (y.shape[1] // 4)
    largest = wp.float64(0.0)
    k = int(0)
    while k < nf:
        largest = wp.max(largest, wp.abs(y[env, off + free[env, k]]))
        k += 1
    return largest


@wp.func
def _step_free_rows(
    a: Mat64,
    b: Vec64,
    x: Vec64,
    y: Vec64,
    free: wp.array2d(dtype=int),
    env: int,
    m: int,
    nf: int,
    alpha: wp.float64,
    whole: int,
) -> wp.float64:
    """Move the free rows along y[:nf]. `whole`: the whole step, then w afresh (O(m^2), where moving w along costs
    O(m f)): the free rows' w is the refinement's residual, returned, and the final check reads w without the
    updates' rounding. Otherwise alpha of the step with w moved along; returns 0."""
    k = int(0)
    if whole != 0:
        while k < nf:
            i = free[env, k]
            x[env, i] = x[env, i] + y[env, k]
            k += 1
        _compute_w(a, b, x, y, env, m)
        return _free_residual(free, y, env, nf)
    while k < nf:
        _move(a, x, y, env, m, free[env, k], alpha * y[env, k])
        k += 1
    return wp.float64(0.0)


@wp.func
def _move(a: Mat64, x: Vec64, y: Vec64, env: int, m: int, i: int, dx: wp.float64) -> None:
    """x_i += dx, and w += dx A_i (w in y's third part)."""
    if dx != wp.float64(0.0):
        off = 2 * (y.shape[1] // 4)
        x[env, i] = x[env, i] + dx
        j = int(0)
        while j < m:
            y[env, off + j] = y[env, off + j] + a[env, i, j] * dx  # A is symmetric: row i, read in order
            j += 1


@wp.func
def lcp_tolerance(b: Vec64, env: int, m: int) -> wp.float64:
    """Complementarity tolerance on w for this problem: TOL_REL of the largest |b_i|, at least FLOOR_W."""
    scale = wp.float64(0.0)
    i = int(0)
    while i < m:
        scale = wp.max(scale, wp.abs(b[env, i]))
        i += 1
    return wp.max(TOL_REL * scale, FLOOR_W)


@wp.func
def start_state(lo: Vec64, hi: Vec64, x: Vec64, state: wp.array2d(dtype=int), env: int, m: int) -> int:
    """A feasible start: x clamped into [lo, hi]; rows at a bound are clamped there, the rest free. A warm start
    passes the previous solution in x. Returns how many impulses moved."""
    moved = int(0)
    for i in range(m):
        v = wp.clamp(x[env, i], lo[env, i], hi[env, i])
        st = FREE
        if v <= lo[env, i]:
            v = lo[env, i]
            st = AT_LOW
        elif v >= hi[env, i]:
            v = hi[env, i]
            st = AT_HIGH
        if v != x[env, i]:
            moved += 1
        x[env, i] = v
        state[env, i] = st
    return moved


@wp.func
def solve_box_lcp(
    a: Mat64,
    b: Vec64,
    lo: Vec64,
    hi: Vec64,
    x: Vec64,
    state: wp.array2d(dtype=int),
    chol: Mat64,
    free: wp.array2d(dtype=int),
    nfree: wp.array(dtype=int),
    y: Vec64,
    g: wp.array3d(dtype=float),
    memo: FactorMemo,
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_static: wp.array2d(dtype=float),
    mu_dynamic: wp.array2d(dtype=float),
    env: int,
    m: int,
    reg_cap: wp.float64,
    pivot_limit: int,
    box_updates: int,
    w_known: int,
) -> wp.vec3i:
    """Solve the env's m-row problem in place from a feasible x and its state (start_state). nfree[env]: -1, or the
    size of a factor (chol, free) valid for this A and reg_cap, kept from the last solve and brought to this free
    set. pivot_limit: the most passes per set of boxes (0: MAX_PIVOTS_PER_ROW m + 16). Friction rows' boxes
    (friction_bounds) follow the normals up to box_updates times (0: fixed): whenever the active set is final for
    its boxes, _follow_normals moves them and the pivoting goes on. Returns (pivots, status, unsettled): SOLVED;
    FAILED (a non-finite value); BUDGET_SPENT (rounding made a degenerate problem cycle: x is the last feasible
    point, for the caller to judge); unsettled 1 when the boxes would still move after the last update."""
    # long function: one pivoting loop whose passes, ratio test, refinement, releases and box updates share its state
    tol = lcp_tolerance(b, env, m)
    max_passes = MAX_PIVOTS_PER_ROW * m + 16
    if pivot_limit > 0:
        max_passes = wp.min(max_passes, pivot_limit)
    pivots = int(0)
    # refined passes: the first (a warm start's active set is usually final: one pass, not an unrefined and a refined
    # one); if it pivots, the passes go unrefined until one would end the solve, and stay refined from then on (going
    # back and forth made the 1:1000 stack cycle between the two answers' active sets)
    refine = int(1)
    nf = sync_factor(a, state, chol, free, nfree, y, g, memo, env, m, reg_cap)
    if w_known == 0:
        _compute_w(a, b, x, y, env, m)
    released = int(-1)  # the row the last pass released
    box_left = box_updates
    budget = max_passes
    corrections = int(0)  # refinement corrections taken since the last full pass
    last_residual = wp.float64(wp.inf)  # the free rows' residual before the last correction
    while budget > 0:
        if corrections == 0:
            budget -= 1
        _free_step(x, chol, free, y, env, nf, int(corrections > 0))
        alpha = wp.float64(1.0)
        block = int(-1)
        block_at = int(-1)
        block_state = FREE
        k = int(0)
        while k < nf:
            i = free[env, k]
            step = y[env, k]
            if not wp.isfinite(step):
                nfree[env] = -1
                _unstick(state, env, m)
                return wp.vec3i(pivots, FAILED, 0)
            target = x[env, i] + step
            if target < lo[env, i] and step < wp.float64(0.0):
                t = (lo[env, i] - x[env, i]) / step
                if t < alpha:
                    alpha = t
                    block = i
                    block_at = k
                    block_state = AT_LOW
            elif target > hi[env, i] and step > wp.float64(0.0):
                t = (hi[env, i] - x[env, i]) / step
                if t < alpha:
                    alpha = t
                    block = i
                    block_at = k
                    block_state = AT_HIGH
            k += 1
        alpha = wp.max(alpha, wp.float64(0.0))
        whole = int(block < 0 and refine != 0)
        residual = _step_free_rows(a, b, x, y, free, env, m, nf, alpha, whole)
        if whole != 0 and corrections < REFINE_PASSES and residual > REFINED * tol:
            if residual < STALLED * last_residual:
                corrections += 1  # refine: a correction from this w, against the unregularized A_FF
                last_residual = residual
                continue
        corrections = 0
        last_residual = wp.float64(wp.inf)
        if block >= 0:
            stuck = block == released and alpha <= wp.float64(0.0)
            nf = _clamp(a, x, y, lo, hi, state, chol, free, env, m, nf, block, block_at, block_state, stuck)
            nfree[env] = nf
            released = -1
            refine = refine * int(pivots > 0)  # the first pass pivoted: unrefined until one would end the solve
            pivots += 1
            continue
        worst = _release_candidate(a, x, y, lo, hi, state, env, m, tol)
        if worst < 0:
            if refine == 0:
                refine = 1  # solve the same active set once more, refined, and check it again
                continue
            if box_left > 0:  # solved for these boxes: move them to the normals found, and go on from here
                moved = _follow_normals(
                    a, lo, hi, x, state, chol, free, y, findex, fcount, mu_static, mu_dynamic, env, m, nf
                )
                if moved[0] != 0:
                    nf = moved[1]
                    nfree[env] = nf
                    box_left -= 1
                    refine = 0
                    budget = max_passes  # a budget per set of boxes, as per solve of an outer loop
                    _unstick(state, env, m)
                    continue
            _unstick(state, env, m)
            unsettled = int(0)
            if box_updates > 0 and box_left == 0:  # the boxes would still move: reported
                if friction_bounds(x, lo, hi, state, findex, fcount, mu_static, mu_dynamic, env, m, 1, 0) > (
                    _settled_change(x, env, m)
                ):
                    unsettled = 1
            return wp.vec3i(pivots, SOLVED, unsettled)
        state[env, worst] = FREE
        released = worst
        nf = append_row(a, chol, free, y, g, env, nf, worst, reg_cap, -1)[0]
        nfree[env] = nf
        refine = refine * int(pivots > 0)
        pivots += 1
    _unstick(state, env, m)
    return wp.vec3i(pivots, BUDGET_SPENT, 0)


@wp.func
def _clamp(
    a: Mat64,
    x: Vec64,
    y: Vec64,
    lo: Vec64,
    hi: Vec64,
    state: wp.array2d(dtype=int),
    chol: Mat64,
    free: wp.array2d(dtype=int),
    env: int,
    m: int,
    nf: int,
    block: int,
    block_at: int,
    side: int,
    stuck: bool,
) -> int:
    """The free row `block` (position block_at in the factor) met its bound on `side`: it is put exactly there (w
    follows) and leaves the factor. `stuck`: it was released by the last pass and blocked again without a step
    (rounding, or a dependent row's compliance, made its w look wrong); releasing it again would cycle until the
    budget is spent (160 rows of a 1:1000 box stack: 1341 pivots and 130 ms where the step takes 40 pivots), so it
    is flagged STUCK for the rest of the solve. Returns nf - 1."""
    bound = hi[env, block]
    if side == AT_LOW:
        bound = lo[env, block]
    _move(a, x, y, env, m, block, bound - x[env, block])
    x[env, block] = bound
    if stuck:
        side = side | STUCK
    state[env, block] = side
    return factor_drop(chol, free, env, nf, block_at)


@wp.func
def _release_candidate(
    a: Mat64, x: Vec64, y: Vec64, lo: Vec64, hi: Vec64, state: wp.array2d(dtype=int), env: int, m: int, tol: wp.float64
) -> int:
    """Where the free rows meet their targets: the clamped row whose w (y's third part) has the wrong sign by the
    most, beyond tol and beyond the rounding of its terms (NOISE_REL sum_j |a_ij x_j|: with large impulses that noise
    can exceed tol, and releasing on it cycles; in float32, a 1000 kg box on a 1 kg box, impulses of 80 N s); STUCK
    rows are not released. -1 when there is none."""
    off = 2 * (y.shape[1] // 4)
    worst = int(-1)
    worst_w = wp.float64(tol)
    i = int(0)
    while i < m:
        st = state[env, i]
        if st != FREE and (st & STUCK) == 0 and lo[env, i] < hi[env, i]:
            w = y[env, off + i]
            if st == AT_LOW:
                w = -w
            if w > worst_w:
                if w > _noise(a, x, env, i, m):
                    worst_w = w
                    worst = i
        i += 1
    return worst


@wp.func
def _unstick(state: wp.array2d(dtype=int), env: int, m: int) -> None:
    """Clear the STUCK flags at the end of a solve: the next solve (other bounds, other A) may release the rows."""
    i = int(0)
    while i < m:
        state[env, i] = state[env, i] & 3
        i += 1


@wp.func
def complementarity_error(
    a: Mat64,
    b: Vec64,
    lo: Vec64,
    hi: Vec64,
    x: Vec64,
    state: wp.array2d(dtype=int),
    y: Vec64,
    env: int,
    m: int,
    fresh: int,
) -> wp.float64:
    """The largest violation of the conditions at x: for each row, the smallest of |w_i| (it could be free), how far
    w_i < 0 at lo or w_i > 0 at hi, and how far x_i lies outside [lo_i, hi_i]. A free dependent row is a row of
    compliance R_i (its regularization, y's fourth part), so its |w_i| counts beyond R_i |x_i| only: a loop at its
    toggle point leaves ~1e-4 m/s there by design. With `fresh`, w is read from y's third part, which a solve that
    ended SOLVED computed afresh from x (A x - b, as here); otherwise it is computed. [m/s or rad/s, or impulse
    units for the bounds]"""
    err = wp.float64(0.0)
    c = 3 * (y.shape[1] // 4)
    i = int(0)
    while i < m:
        w = y[env, 2 * (y.shape[1] // 4) + i]
        if fresh == 0:
            w = _residual(a, b, x, env, i, m)
        xi = x[env, i]
        e = wp.abs(w)
        if state[env, i] == FREE:
            e = wp.max(e - y[env, c + i] * wp.abs(xi), wp.float64(0.0))
        gap_lo = wp.abs(xi - lo[env, i])
        gap_hi = wp.abs(hi[env, i] - xi)
        scale = wp.max(wp.float64(1.0), wp.abs(xi))
        if gap_lo <= wp.float64(1.0e-6) * scale:  # at its lower bound: only w < 0 violates
            e = wp.min(e, wp.max(-w, wp.float64(0.0)))
        if gap_hi <= wp.float64(1.0e-6) * scale:
            e = wp.min(e, wp.max(w, wp.float64(0.0)))
        e = wp.max(e, wp.max(lo[env, i] - xi, xi - hi[env, i]))
        err = wp.max(err, e)
        i += 1
    return err


MAX_FRICTION_PASSES = wp.constant(32)


@wp.func
def friction_bounds(
    x: Vec64,
    lo: Vec64,
    hi: Vec64,
    state: wp.array2d(dtype=int),
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_static: wp.array2d(dtype=float),
    mu_dynamic: wp.array2d(dtype=float),
    env: int,
    m: int,
    sliding_known: int,
    write: int,
) -> wp.float64:
    """Set each friction row's box from its normal rows' current impulses (ODE's findex, generalized to a patch:
    rows findex .. findex + fcount - 1): +-mu N with mu static while the row sticks and dynamic once a previous
    solve left it at a bound (sliding_known). Returns the largest change of a bound; `write` 0 only measures it."""
    change = wp.float64(0.0)
    for i in range(m):
        f = findex[env, i]
        if f >= 0 or f == FRICTION_CONSTANT:
            normal = wp.float64(1.0)
            if f >= 0:
                normal = wp.float64(0.0)
                for k in range(fcount[env, i]):
                    normal += wp.max(x[env, f + k], wp.float64(0.0))
            mu = wp.float64(mu_static[env, i])
            if sliding_known != 0 and state[env, i] != FREE:
                mu = wp.float64(mu_dynamic[env, i])
            bound = mu * normal
            change = wp.max(change, wp.abs(bound - hi[env, i]))
            if write != 0:
                lo[env, i] = -bound
                hi[env, i] = bound
    return change


@wp.func
def _settled_change(x: Vec64, env: int, m: int) -> wp.float64:
    """The largest move of a friction box that counts as settled: 1e-5 of the largest impulse."""
    scale = wp.float64(0.0)
    i = int(0)
    while i < m:
        scale = wp.max(scale, wp.abs(x[env, i]))
        i += 1
    return wp.float64(1.0e-5) * scale + wp.float64(1.0e-12)


@wp.func
def _follow_normals(
    a: Mat64,
    lo: Vec64,
    hi: Vec64,
    x: Vec64,
    state: wp.array2d(dtype=int),
    chol: Mat64,
    free: wp.array2d(dtype=int),
    y: Vec64,
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_static: wp.array2d(dtype=float),
    mu_dynamic: wp.array2d(dtype=float),
    env: int,
    m: int,
    nf: int,
) -> wp.vec2i:
    """Inside the pivoting, where the free rows meet their targets: if a friction box would move by more than
    _settled_change, set every box from the normal impulses at x (dynamic mu for the rows at a bound) and keep x
    feasible: a clamped row moves with its bound, a free row outside its new box is clamped to it and leaves the
    factor (w follows x). Returns (1 if the boxes moved, nf)."""
    if friction_bounds(x, lo, hi, state, findex, fcount, mu_static, mu_dynamic, env, m, 1, 0) <= _settled_change(
        x, env, m
    ):
        return wp.vec2i(0, nf)
    friction_bounds(x, lo, hi, state, findex, fcount, mu_static, mu_dynamic, env, m, 1, 1)
    i = int(0)
    while i < m:
        f = findex[env, i]
        if f >= 0 or f == FRICTION_CONSTANT:
            st = state[env, i] & 3
            target = x[env, i]
            if st == AT_LOW or (st == FREE and target < lo[env, i]):
                target = lo[env, i]
                st = AT_LOW | (state[env, i] & STUCK)
            elif st == AT_HIGH or (st == FREE and target > hi[env, i]):
                target = hi[env, i]
                st = AT_HIGH | (state[env, i] & STUCK)
            if state[env, i] == FREE and st != FREE:
                k = int(0)
                while free[env, k] != i:
                    k += 1
                nf = factor_drop(chol, free, env, nf, k)
            _move(a, x, y, env, m, i, target - x[env, i])
            x[env, i] = target
            state[env, i] = st
        i += 1
    return wp.vec2i(1, nf)


@wp.func
def solve_friction_lcp(
    a: Mat64,
    b: Vec64,
    lo: Vec64,
    hi: Vec64,
    x: Vec64,
    state: wp.array2d(dtype=int),
    chol: Mat64,
    free: wp.array2d(dtype=int),
    nfree: wp.array(dtype=int),
    y: Vec64,
    g: wp.array3d(dtype=float),
    memo: FactorMemo,
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_static: wp.array2d(dtype=float),
    mu_dynamic: wp.array2d(dtype=float),
    env: int,
    m: int,
    reg_cap: wp.float64,
    pivot_limit: int,
    max_passes: int,
    w_known: int,
) -> wp.vec3i:
    """The problem with friction rows whose boxes follow their normal impulses (ODE's findex): the boxes start from
    the normals in x (zeros, or the last solution; static mu) and follow them inside the pivoting (solve_box_lcp's
    box_updates = max_passes; MAX_FRICTION_PASSES for a step's final rows) until no bound would move by more than
    1e-5 of the largest impulse. The fixed point is the one an outer loop of whole solves reaches (one solve per box
    update, each from start_state), without restarting: the factor, w and the active set carry on. Returns (pivots,
    solved, flags): solved 0 if the solve failed; flags UNSETTLED when the boxes would still move after the last
    update (x then solves the boxes it was solved with, which stay in lo and hi), BUDGET_HIT when the solve spent
    its pivot budget (x is its last feasible point)."""
    friction_bounds(x, lo, hi, state, findex, fcount, mu_static, mu_dynamic, env, m, 0, 1)
    if start_state(lo, hi, x, state, env, m) != 0:
        w_known = 0
    res = solve_box_lcp(
        a, b, lo, hi, x, state, chol, free, nfree, y, g, memo, findex, fcount, mu_static, mu_dynamic, env, m, reg_cap,
        pivot_limit, max_passes, w_known,
    )  # fmt: skip
    if res[1] == FAILED:
        return wp.vec3i(res[0], 0, 0)
    flags = int(0)
    if res[1] == BUDGET_SPENT:
        flags = BUDGET_HIT
    if res[2] != 0:
        flags = flags | UNSETTLED
    return wp.vec3i(res[0], 1, flags)
