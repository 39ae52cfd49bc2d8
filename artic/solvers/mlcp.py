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
carries ~1e6 N m s, where float32's 6e-8 alone is ~1 rad/s of joint velocity). Redundant rows (a four-bar's over-
constrained loop, two contacts that say the same thing) make A_FF singular, and a loop near its toggle point makes
it nearly so. Only such rows are regularized: a row whose Cholesky pivot (what is left of its diagonal entry after
the free rows before it) is below SMALL_PIVOT_REL of the entry, and whose direction g_i the same combination of
those rows' directions reproduces to GEOMETRIC_REL, is dependent, and its diagonal is raised by REG_REL of the entry
(capped by the caller below the problem's smallest compliance, solvers/direct.py). A small pivot whose direction is
not reproduced comes from the masses (a 1 kg body between 1e6 kg ones: 1e-6 of its entry) and is solved exactly: a
uniform regularization (1e-5 of every entry, as before) made such a chain carry a twentieth of its weight and fall
back on every step, while a threshold on the pivot alone cannot tell the two apart (a loop's out-of-plane rows
computed in float32 gave pivots of 1e-12; solved exactly, their large opposite impulses leaked through G's rounding
and a fast crank went 3 rad astray; a four-bar at its toggle point, pivot 2e-7, took impulses of 4e5 N s and lost 40
% of its energy at once). A is assembled in float64 from M^-1 (solvers/direct.py), so that a redundant row's pivot
is rounding (~1e-16 of its entry). Without directions (g zero), a pivot below DEPENDENT_REL of its entry makes a
dependent row. Once the active set would be final, REFINE_PASSES passes of iterative refinement against the
unregularized A_FF remove the regularization's error from every direction A_FF resolves; only a (nearly) redundant
direction keeps the compliance. A pivot that rounding still drives below FLOOR_REL times its diagonal entry (or a
tenth of the regularization) is raised to that (math/dense.py's rule).
A pass count beyond MAX_PIVOTS_PER_ROW * m + 16 (or the caller's pivot limit) ends the solve at its last feasible
point (BUDGET_SPENT: rounding can make a degenerate problem cycle); a non-finite value is a failure. The caller
judges the first by its complementarity error and falls back to projected Gauss-Seidel on failure, counted
(solvers/direct.py).
"""

from __future__ import annotations

import warp as wp

from ..constraints.row_form import FRICTION_CONSTANT

Mat64 = wp.array3d(dtype=wp.float64)  # (E, M, M) per-env matrices
Vec64 = wp.array2d(dtype=wp.float64)  # (E, M) per-env vectors

FAILED = wp.constant(0)
SOLVED = wp.constant(1)
BUDGET_SPENT = wp.constant(3)
UNSETTLED = wp.constant(1)  # flags of solve_friction_lcp
BUDGET_HIT = wp.constant(2)
FREE = wp.constant(0)
AT_LOW = wp.constant(1)
AT_HIGH = wp.constant(2)
STUCK = wp.constant(4)  # a flag on a clamped row's state, within one solve: released once for nothing, not again
REG_REL = wp.constant(wp.float64(1.0e-4))  # a dependent row's regularization, relative to A_ii (1e-5 lost
# 1.7-2.8 times the energy of 1e-4 at a four-bar's toggle points)
DEPENDENT_REL = wp.constant(wp.float64(1.0e-8))  # without the rows' directions: a pivot below this fraction of
# its A_ii makes a dependent row
SMALL_PIVOT_REL = wp.constant(wp.float64(1.0e-4))  # with them: a pivot below this fraction of A_ii is looked at
GEOMETRIC_REL = wp.constant(wp.float64(1.0e-2))  # and the row is dependent if the same combination of the rows
# before it leaves less than this fraction of its direction g_i
FLOOR_REL = wp.constant(wp.float64(1.0e-7))  # smallest Cholesky pivot relative to its (regularized) diagonal entry
FLOOR_ABS = wp.constant(wp.float64(1.0e-20))
REFINE_PASSES = wp.constant(2)  # iterative refinement passes after each free-set solve
MAX_PIVOTS_PER_ROW = wp.constant(4)
TOL_REL = wp.constant(wp.float64(1.0e-5))  # complementarity tolerance on w, relative to the largest |b_i|
FLOOR_W = wp.constant(wp.float64(1.0e-7))  # [m/s or rad/s] the tolerance's floor
NOISE_REL = wp.constant(wp.float64(1.0e-9))  # a release must beat this fraction of sum_j |a_ij x_j| (rounding)


@wp.func
def _dot(a: Mat64, env: int, i: int, x: Vec64, off: int, n: int) -> wp.float64:
    """sum over j < n of a[env, i, j] x[env, off + j], in four partial sums: a single running sum makes the loop wait
    on each addition's latency (2.2 ns a term on the CPU; 0.5 ns with four, measured with Warp 1.19)."""
    s0 = wp.float64(0.0)
    s1 = wp.float64(0.0)
    s2 = wp.float64(0.0)
    s3 = wp.float64(0.0)
    j = int(0)
    while j + 4 <= n:
        s0 += a[env, i, j] * x[env, off + j]
        s1 += a[env, i, j + 1] * x[env, off + j + 1]
        s2 += a[env, i, j + 2] * x[env, off + j + 2]
        s3 += a[env, i, j + 3] * x[env, off + j + 3]
        j += 4
    while j < n:
        s0 += a[env, i, j] * x[env, off + j]
        j += 1
    return (s0 + s1) + (s2 + s3)


@wp.func
def _dot_rows(c: Mat64, env: int, r: int, q: int, n: int) -> wp.float64:
    """sum over p < n of c[env, r, p] c[env, q, p] (two rows of the factor), in four partial sums as _dot."""
    s0 = wp.float64(0.0)
    s1 = wp.float64(0.0)
    s2 = wp.float64(0.0)
    s3 = wp.float64(0.0)
    p = int(0)
    while p + 4 <= n:
        s0 += c[env, r, p] * c[env, q, p]
        s1 += c[env, r, p + 1] * c[env, q, p + 1]
        s2 += c[env, r, p + 2] * c[env, q, p + 2]
        s3 += c[env, r, p + 3] * c[env, q, p + 3]
        p += 4
    while p < n:
        s0 += c[env, r, p] * c[env, q, p]
        p += 1
    return (s0 + s1) + (s2 + s3)


@wp.func
def _dot_free(a: Mat64, env: int, i: int, free: wp.array2d(dtype=int), y: Vec64, n: int) -> wp.float64:
    """sum over q < n of a[env, i, free[env, q]] y[env, q] (row i of A_.F times y), in four partial sums as _dot."""
    s0 = wp.float64(0.0)
    s1 = wp.float64(0.0)
    s2 = wp.float64(0.0)
    s3 = wp.float64(0.0)
    q = int(0)
    while q + 4 <= n:
        s0 += a[env, i, free[env, q]] * y[env, q]
        s1 += a[env, i, free[env, q + 1]] * y[env, q + 1]
        s2 += a[env, i, free[env, q + 2]] * y[env, q + 2]
        s3 += a[env, i, free[env, q + 3]] * y[env, q + 3]
        q += 4
    while q < n:
        s0 += a[env, i, free[env, q]] * y[env, q]
        q += 1
    return (s0 + s1) + (s2 + s3)


@wp.func
def _residual(a: Mat64, b: Vec64, x: Vec64, env: int, i: int, m: int) -> wp.float64:
    """w_i = (A x)_i - b_i (without the regularization: the problem as posed)."""
    return _dot(a, env, i, x, 0, m) - b[env, i]


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
def _geometric_residual(
    chol: Mat64, free: wp.array2d(dtype=int), y: Vec64, g: wp.array3d(dtype=float), env: int, nf: int, i: int
) -> wp.float64:
    """|g_i - sum_k z_k g_F(k)| / |g_i| for the combination z of the free rows that best reproduces row i in A's
    (mass) metric: z = L^-T l with l = L^-1 a_Fi, the factor's new row (chol[nf, :nf]); y's second part holds z.
    Small when row i is a combination of those rows in their directions themselves (a redundant loop row, a loop
    at its toggle point); near 1 when only the masses make it look so (a light body between heavy ones, whose
    rows move the heavy ones very little). -1 when g_i is zero (the caller passed no directions)."""
    c = y.shape[1] // 4
    k = int(0)
    while k < nf:
        y[env, c + k] = chol[env, nf, k]
        k += 1
    k = nf - 1
    while k >= 0:  # L^T z = l
        u = y[env, c + k] / chol[env, k, k]
        y[env, c + k] = u
        p = int(0)
        while p < k:
            y[env, c + p] = y[env, c + p] - chol[env, k, p] * u
            p += 1
        k -= 1
    rr = wp.float64(0.0)
    gg = wp.float64(0.0)
    n = g.shape[2]
    col = int(0)
    while col < n:
        gi = wp.float64(g[env, i, col])
        r = gi
        q = int(0)
        while q < nf:
            r -= y[env, c + q] * wp.float64(g[env, free[env, q], col])
            q += 1
        rr += r * r
        gg += gi * gi
        col += 1
    if gg <= wp.float64(0.0):
        return wp.float64(-1.0)
    return wp.sqrt(rr / gg)


@wp.func
def _append(
    a: Mat64,
    chol: Mat64,
    free: wp.array2d(dtype=int),
    y: Vec64,
    g: wp.array3d(dtype=float),
    env: int,
    nf: int,
    i: int,
    reg_cap: wp.float64,
) -> int:
    """Row i joins the free set as its last member: the factor's new row is L^-1 a_Fi and its pivot the rest of the
    diagonal entry (the bordered form of Cholesky: appending the rows one by one is the factorization). Row i is
    dependent on the free rows before it when its pivot is below SMALL_PIVOT_REL of the entry and the rows'
    directions g (E, M, N) show it (_geometric_residual below GEOMETRIC_REL), or, where g is zero (a caller with no
    directions), when the pivot is below DEPENDENT_REL of the entry. A dependent row's diagonal is regularized by
    REG_REL of the entry (at most reg_cap), kept in y's fourth part (by row) for the steps. A pivot that rounding
    still drives below FLOOR_REL of its entry (or a tenth of the regularization) is raised to that (math/dense.py's
    rule); a NaN stays NaN, and the caller sees a non-finite result. Returns nf + 1."""
    diag = a[env, i, i]
    t = wp.float64(diag)
    k = int(0)
    while k < nf:
        u = (a[env, free[env, k], i] - _dot_rows(chol, env, nf, k, k)) / chol[env, k, k]
        chol[env, nf, k] = u
        t -= u * u
        k += 1
    reg = wp.float64(0.0)
    if t < SMALL_PIVOT_REL * diag:
        rho = _geometric_residual(chol, free, y, g, env, nf, i)
        dependent = rho >= wp.float64(0.0) and rho < GEOMETRIC_REL
        if rho < wp.float64(0.0):
            dependent = t < DEPENDENT_REL * diag
        if dependent or not wp.isfinite(rho):
            reg = wp.min(REG_REL * diag, reg_cap)
    y[env, 3 * (y.shape[1] // 4) + i] = reg
    pivot = t + reg
    floor = wp.max(wp.min(FLOOR_REL * diag, wp.float64(0.1) * reg), FLOOR_ABS)
    if pivot < floor:
        pivot = floor
    chol[env, nf, nf] = wp.sqrt(pivot)
    free[env, nf] = i
    return nf + 1


@wp.func
def factor_drop(chol: Mat64, free: wp.array2d(dtype=int), env: int, nf: int, k: int) -> int:
    """The free row at position k leaves: the rows after it keep their factor, updated by the rank-one term
    l l^T of the deleted column l (L33' L33'^T = L33 L33^T + l l^T, the Givens form of the update, l kept in the
    deleted column while it is consumed), then shifted up and left by one. Returns nf - 1."""
    j = k + 1
    while j < nf:
        ljj = chol[env, j, j]
        xj = chol[env, j, k]
        r = wp.sqrt(ljj * ljj + xj * xj)
        c = r / ljj
        s = xj / ljj
        chol[env, j, j] = r
        i = j + 1
        while i < nf:
            lij = (chol[env, i, j] + s * chol[env, i, k]) / c
            chol[env, i, k] = c * chol[env, i, k] - s * lij
            chol[env, i, j] = lij
            i += 1
        j += 1
    p = k
    while p < nf - 1:
        free[env, p] = free[env, p + 1]
        q = int(0)
        while q < k:
            chol[env, p, q] = chol[env, p + 1, q]
            q += 1
        while q <= p:
            chol[env, p, q] = chol[env, p + 1, q + 1]
            q += 1
        p += 1
    return nf - 1


@wp.func
def _sync_factor(
    a: Mat64,
    state: wp.array2d(dtype=int),
    chol: Mat64,
    free: wp.array2d(dtype=int),
    nfree: wp.array(dtype=int),
    y: Vec64,
    g: wp.array3d(dtype=float),
    env: int,
    m: int,
    reg_cap: wp.float64,
) -> int:
    """Bring the factor to the free set that `state` says: drop the listed rows that are no longer free and append
    the free rows not listed (the rows the last solve left as they were keep their factor); factor from scratch
    when nfree[env] < 0 (no valid factor) or when more than half the rows would change. Returns nf."""
    nf = nfree[env]
    if nf >= 0:
        drops = int(0)
        for k in range(nf):
            if free[env, k] >= m or state[env, free[env, k]] != FREE:
                drops += 1
        free_now = int(0)
        for i in range(m):
            if state[env, i] == FREE:
                free_now += 1
        appends = free_now - (nf - drops)  # every kept row is free
        if 2 * (drops + appends) > nf + 4:
            nf = -1
    if nf < 0:
        nf = int(0)
        for i in range(m):
            y[env, 3 * (y.shape[1] // 4) + i] = wp.float64(0.0)  # no row is regularized until it joins
            if state[env, i] == FREE:
                nf = _append(a, chol, free, y, g, env, nf, i, reg_cap)
        nfree[env] = nf
        return nf
    k = nf - 1
    while k >= 0:  # from the end: a dropped row's update only touches the rows after it
        if free[env, k] >= m or state[env, free[env, k]] != FREE:
            nf = factor_drop(chol, free, env, nf, k)
        k -= 1
    for i in range(m):
        if state[env, i] == FREE:
            listed = int(0)
            q = int(0)
            while q < nf:
                if free[env, q] == i:
                    listed = 1
                q += 1
            if listed == 0:
                nf = _append(a, chol, free, y, g, env, nf, i, reg_cap)
    nfree[env] = nf
    return nf


@wp.func
def _substitute(chol: Mat64, y: Vec64, env: int, nf: int, offset: int) -> None:
    """y[offset:offset + nf] = (L L^T)^-1 y[offset:offset + nf], L in chol's lower triangle: forward by rows,
    backward by columns (L^T's rows are L's columns: each solved value is taken out of the rows above it, reading
    L row by row)."""
    k = int(0)
    while k < nf:
        y[env, offset + k] = (y[env, offset + k] - _dot(chol, env, k, y, offset, k)) / chol[env, k, k]
        k += 1
    k = nf - 1
    while k >= 0:
        u = y[env, offset + k] / chol[env, k, k]
        y[env, offset + k] = u
        p = int(0)
        while p < k:
            y[env, offset + p] = y[env, offset + p] - chol[env, k, p] * u
            p += 1
        k -= 1


@wp.func
def _compute_w(a: Mat64, b: Vec64, x: Vec64, y: Vec64, env: int, m: int) -> None:
    """w = A x - b afresh, into y's third part (the pivoting keeps it up to date; this removes its rounding)."""
    off = 2 * (y.shape[1] // 4)
    i = int(0)
    while i < m:
        y[env, off + i] = _residual(a, b, x, env, i, m)
        i += 1


@wp.func
def _free_step(
    a: Mat64,
    x: Vec64,
    chol: Mat64,
    free: wp.array2d(dtype=int),
    y: Vec64,
    env: int,
    nf: int,
    refine: int,
) -> None:
    """y[:nf] = d, the step from x_F to the free set's solution y_F = (A_FF + R)^-1 (b_F - A_FC x_C) (R the
    dependent rows' regularization, y's fourth part): since b_F - A_FC x_C = A_FF x_F - w_F, d = -(A_FF + R)^-1 (w_F
    + R x_F), from the kept w in O(f^2). With `refine`, REFINE_PASSES passes of iterative refinement against the
    unregularized A_FF follow: d += (A_FF + R)^-1 (-w_F - A_FF d), in float64 (y's second part holds the
    correction). They remove the regularization's error in every direction A_FF resolves (the compliance REG_REL
    A_ii would otherwise give a hard row: a limit holding 1e3 N m s against a stiff drive yields by REG_REL A_ii
    lambda), while a redundant direction, which A_FF does not resolve, gains at most another regularized share of
    its residual per pass."""
    c = y.shape[1] // 4
    off = 2 * c
    k = int(0)
    while k < nf:
        i = free[env, k]
        y[env, k] = -(y[env, off + i] + y[env, 3 * c + i] * x[env, i])
        k += 1
    _substitute(chol, y, env, nf, 0)
    if refine != 0:
        for _pass in range(REFINE_PASSES):
            k = int(0)
            while k < nf:
                i = free[env, k]
                y[env, c + k] = -y[env, off + i] - _dot_free(a, env, i, free, y, nf)
                k += 1
            _substitute(chol, y, env, nf, c)
            k = int(0)
            while k < nf:
                y[env, k] = y[env, k] + y[env, c + k]
                k += 1


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
def start_state(lo: Vec64, hi: Vec64, x: Vec64, state: wp.array2d(dtype=int), env: int, m: int) -> None:
    """A feasible start: x clamped into [lo, hi]; rows at a bound are clamped there, the rest free. A warm start
    passes the previous solution in x."""
    for i in range(m):
        v = wp.clamp(x[env, i], lo[env, i], hi[env, i])
        st = FREE
        if v <= lo[env, i]:
            v = lo[env, i]
            st = AT_LOW
        elif v >= hi[env, i]:
            v = hi[env, i]
            st = AT_HIGH
        x[env, i] = v
        state[env, i] = st


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
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_static: wp.array2d(dtype=float),
    mu_dynamic: wp.array2d(dtype=float),
    env: int,
    m: int,
    reg_cap: wp.float64,
    pivot_limit: int,
    box_updates: int,
) -> wp.vec3i:
    """Solve the env's m-row problem in place: x holds a feasible start with its state (start_state) and ends with
    the solution. nfree[env]: -1, or the size of a factor in chol of the free rows listed in free that is valid for
    this A and reg_cap (the last solve's; it is brought to this start's free set by updates, and left valid for the
    next call). reg_cap: the largest regularization of a row; pivot_limit: the most passes (0: MAX_PIVOTS_PER_ROW m
    + 16). Friction rows (findex, fcount, mu_static, mu_dynamic: friction_bounds) have their boxes follow the normal
    impulses inside the pivoting, up to box_updates times (0: the boxes are fixed): each time the active set is
    final for the boxes it has, they are set from the normals there (_follow_normals) and the pivoting goes on from
    that point with a fresh budget, until no box would move. Returns (pivots, status, unsettled): status SOLVED;
    FAILED (a non-finite value); BUDGET_SPENT (the pivot budget ran out, as rounding makes a degenerate problem
    cycle between equivalent active sets: x is the last feasible point, whose complementarity error the caller
    judges); unsettled 1 when the boxes would still move after box_updates updates (x then solves the boxes in lo
    and hi)."""
    tol = lcp_tolerance(b, env, m)
    max_passes = MAX_PIVOTS_PER_ROW * m + 16
    if pivot_limit > 0:
        max_passes = wp.min(max_passes, pivot_limit)
    pivots = int(0)
    refine = int(0)  # refinement only from the pass that would end the solve: it moves no active set, only values
    off = 2 * (y.shape[1] // 4)  # w = A x - b, kept up to date as x moves (y's third part)
    nf = _sync_factor(a, state, chol, free, nfree, y, g, env, m, reg_cap)
    _compute_w(a, b, x, y, env, m)
    released = int(-1)  # the row the last pass released
    box_left = box_updates
    budget = max_passes
    while budget > 0:
        budget -= 1
        _free_step(a, x, chol, free, y, env, nf, refine)
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
        k = int(0)
        while k < nf:
            _move(a, x, y, env, m, free[env, k], alpha * y[env, k])
            k += 1
        if block >= 0:
            bound = hi[env, block]
            if block_state == AT_LOW:
                bound = lo[env, block]
            _move(a, x, y, env, m, block, bound - x[env, block])  # exactly at its bound
            x[env, block] = bound
            if block == released and alpha <= wp.float64(0.0):
                # released and blocked again without a step: rounding (or a dependent row's regularization) made
                # its w look wrong; releasing it again would cycle until the budget is spent (160 rows of a
                # 1:1000 box stack: 1341 pivots, 130 ms, where the step takes 40 pivots)
                block_state = block_state | STUCK
            state[env, block] = block_state
            released = -1
            nf = factor_drop(chol, free, env, nf, block_at)
            nfree[env] = nf
            pivots += 1
            continue
        if refine != 0:
            _compute_w(a, b, x, y, env, m)  # the final check reads w afresh, without the updates' rounding
        # the free rows meet their targets: free the clamped row whose w has the wrong sign by the most, and by
        # more than the rounding of its terms (NOISE_REL sum_j |a_ij x_j|): with large impulses that noise can
        # exceed tol, and releasing on it cycles (in float32: a 1000 kg box on a 1 kg box, impulses of 80 N s)
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
            if box_updates > 0 and box_left == 0:
                change = friction_bounds(x, lo, hi, state, findex, fcount, mu_static, mu_dynamic, env, m, 1, 0)
                if change > _settled_change(x, env, m):
                    unsettled = 1
            return wp.vec3i(pivots, SOLVED, unsettled)
        state[env, worst] = FREE
        released = worst
        nf = _append(a, chol, free, y, g, env, nf, worst, reg_cap)
        nfree[env] = nf
        pivots += 1
    _unstick(state, env, m)
    return wp.vec3i(pivots, BUDGET_SPENT, 0)


@wp.func
def _unstick(state: wp.array2d(dtype=int), env: int, m: int) -> None:
    """Clear the STUCK flags at the end of a solve: the next solve (other bounds, other A) may release the rows."""
    i = int(0)
    while i < m:
        state[env, i] = state[env, i] & 3
        i += 1


@wp.func
def complementarity_error(
    a: Mat64, b: Vec64, lo: Vec64, hi: Vec64, x: Vec64, state: wp.array2d(dtype=int), y: Vec64, env: int, m: int
) -> wp.float64:
    """The largest violation of the conditions at x: for each row, the smallest of |w_i| (it could be free), how far
    w_i < 0 at lo or w_i > 0 at hi, and how far x_i lies outside [lo_i, hi_i]. A free dependent row is a row of
    compliance R_i (its regularization, y's fourth part), so its |w_i| counts beyond R_i |x_i| only: a loop at its
    toggle point leaves ~1e-4 m/s there by design. [m/s or rad/s, or impulse units for the bounds]"""
    err = wp.float64(0.0)
    c = 3 * (y.shape[1] // 4)
    for i in range(m):
        w = wp.float64(_residual(a, b, x, env, i, m))
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
    findex: wp.array2d(dtype=int),
    fcount: wp.array2d(dtype=int),
    mu_static: wp.array2d(dtype=float),
    mu_dynamic: wp.array2d(dtype=float),
    env: int,
    m: int,
    reg_cap: wp.float64,
    pivot_limit: int,
    max_passes: int,
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
    start_state(lo, hi, x, state, env, m)
    res = solve_box_lcp(
        a, b, lo, hi, x, state, chol, free, nfree, y, g, findex, fcount, mu_static, mu_dynamic, env, m, reg_cap,
        pivot_limit, max_passes,
    )  # fmt: skip
    if res[1] == FAILED:
        return wp.vec3i(res[0], 0, 0)
    flags = int(0)
    if res[1] == BUDGET_SPENT:
        flags = BUDGET_HIT
    if res[2] != 0:
        flags = flags | UNSETTLED
    return wp.vec3i(res[0], 1, flags)
