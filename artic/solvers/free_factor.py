"""The free set's Cholesky factor for the pivoting of solvers/mlcp.py, kept up to date row by row as ODE's dLCP
does: a row that joins is appended (one forward substitution, O(f^2)), a row that leaves is deleted and the rows
after it take its column's share by a rank-one update (O(f^2)); sync_factor brings a factor kept from an earlier
solve to a new free set. The dot products run in four partial sums and the loops are while loops: Warp 1.19's CPU
code runs a for-range loop with a runtime bound at ~2 ns an iteration (a while loop at ~0.4) and a single running
sum waits on each addition's latency.

Redundant rows (a four-bar's over-constrained loop, two contacts that say the same thing) make A_FF singular, and a
loop near its toggle point makes it nearly so. Only such rows are regularized: a row whose Cholesky pivot (what is
left of its diagonal entry after the free rows before it) is below SMALL_PIVOT_REL of the entry, and whose direction
g_i the same combination of those rows' directions reproduces to GEOMETRIC_REL, is dependent, and its diagonal is
raised by REG_REL of the entry (capped by the caller below the problem's smallest compliance, solvers/direct.py),
unless its pivot is already EXPLAINED times that: compliant rows before it make it (a limit under a stiff drive). A
small pivot whose direction is not reproduced comes from the masses (a 1 kg body between 1e6 kg ones: 1e-6 of its
entry) and is solved exactly: a uniform regularization (1e-5 of every entry, as this solver had) made such a chain
carry a twentieth of its weight and fall back on every step, while a threshold on the pivot alone cannot tell the
two apart (a loop's out-of-plane rows computed in float32 gave pivots of 1e-12; solved exactly, their large opposite
impulses leaked through G's rounding and a fast crank went 3 rad astray; a four-bar at its toggle point, pivot 2e-7,
took impulses of 4e5 N s and lost 40 % of its energy within three steps). A is assembled in float64 from M^-1
(solvers/direct.py), so that a redundant row's pivot is rounding (~1e-16 of its entry). Without directions (g zero),
a pivot below DEPENDENT_REL of its entry makes a dependent row. A pivot that rounding still drives below FLOOR_REL
times its diagonal entry (or a tenth of the regularization) is raised to that (math/dense.py's rule).
"""

from __future__ import annotations

import warp as wp

Mat64 = wp.array3d(dtype=wp.float64)  # (E, M, M) per-env matrices
Vec64 = wp.array2d(dtype=wp.float64)  # (E, M) per-env vectors


@wp.struct
class FactorMemo:
    """What the last factorization from scratch found (sync_factor): which rows were free and, of those with a small
    pivot, whether their directions made them dependent; reused by the next one over the same rows, whose verdicts
    are those of one step's motion later (a four-bar's 3 redundant rows: the directions test was 0.85 us of its
    11 us env-step at 1024 envs, rerun every step)."""

    free: wp.array2d(dtype=int)  # (E, M) 1 if the row was free when the factor was made
    dependent: wp.array2d(dtype=int)  # (E, M) its verdict there: 1 dependent, 0 not, -1 not tested (a large pivot)
    count: wp.array(dtype=int)  # (E,) rows it describes; 0: none (the caller clears it when its rows change)


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
EXPLAINED = wp.constant(wp.float64(100.0))  # a dependent row whose pivot is this many times the regularization
# it would get needs none: the compliance of the rows it depends on already holds its pivot there
FLOOR_REL = wp.constant(wp.float64(1.0e-7))  # smallest Cholesky pivot relative to its (regularized) diagonal entry
FLOOR_ABS = wp.constant(wp.float64(1.0e-20))


@wp.func
def dot_row(a: Mat64, env: int, i: int, x: Vec64, off: int, n: int) -> wp.float64:
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
def dot_rows(c: Mat64, env: int, r: int, q: int, n: int) -> wp.float64:
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
def _back_substitute(chol: Mat64, y: Vec64, env: int, nf: int, offset: int) -> None:
    """y[offset:offset + nf] = L^-T y[offset:offset + nf], by columns: L^T's rows are L's columns, so each solved
    value is taken out of the rows above it while L is read row by row."""
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
    _back_substitute(chol, y, env, nf, c)  # L^T z = l
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
def append_row(
    a: Mat64,
    chol: Mat64,
    free: wp.array2d(dtype=int),
    y: Vec64,
    g: wp.array3d(dtype=float),
    env: int,
    nf: int,
    i: int,
    reg_cap: wp.float64,
    verdict: int,
) -> wp.vec2i:
    """Row i joins the free set as its last member: the factor's new row is L^-1 a_Fi and its pivot the rest of the
    diagonal entry (the bordered form of Cholesky: appending the rows one by one is the factorization). Row i is
    dependent on the free rows before it when its pivot is below SMALL_PIVOT_REL of the entry and the rows'
    directions g (E, M, N) show it (_geometric_residual below GEOMETRIC_REL), or, where g is zero (a caller with no
    directions), when the pivot is below DEPENDENT_REL of the entry. A dependent row's diagonal is regularized by
    REG_REL of the entry (at most reg_cap), kept in y's fourth part (by row) for the steps. A pivot that rounding
    still drives below FLOOR_REL of its entry (or a tenth of the regularization) is raised to that (math/dense.py's
    rule); a NaN stays NaN, and the caller sees a non-finite result. `verdict` (0 or 1) is a FactorMemo's verdict on
    this row over the same free rows before it, used instead of the directions test; -1 tests. Returns (nf + 1, the
    verdict: -1 when the pivot was not small)."""
    diag = a[env, i, i]
    t = wp.float64(diag)
    k = int(0)
    while k < nf:
        u = (a[env, free[env, k], i] - dot_rows(chol, env, nf, k, k)) / chol[env, k, k]
        chol[env, nf, k] = u
        t -= u * u
        k += 1
    reg = wp.float64(0.0)
    found = int(-1)
    if t < SMALL_PIVOT_REL * diag:
        dependent = verdict == 1
        if verdict < 0:
            rho = _geometric_residual(chol, free, y, g, env, nf, i)
            dependent = (rho >= wp.float64(0.0) and rho < GEOMETRIC_REL) or not wp.isfinite(rho)
            if rho < wp.float64(0.0):
                dependent = t < DEPENDENT_REL * diag
        found = int(dependent)
        if dependent:
            reg = wp.min(REG_REL * diag, reg_cap)
            if t > EXPLAINED * reg:  # compliant rows before it make its pivot (a limit under a stiff drive)
                reg = wp.float64(0.0)
    y[env, 3 * (y.shape[1] // 4) + i] = reg
    pivot = t + reg
    floor = wp.max(wp.min(FLOOR_REL * diag, wp.float64(0.1) * reg), FLOOR_ABS)
    if pivot < floor:
        pivot = floor
    chol[env, nf, nf] = wp.sqrt(pivot)
    free[env, nf] = i
    return wp.vec2i(nf + 1, found)


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
def sync_factor(
    a: Mat64,
    state: wp.array2d(dtype=int),
    chol: Mat64,
    free: wp.array2d(dtype=int),
    nfree: wp.array(dtype=int),
    y: Vec64,
    g: wp.array3d(dtype=float),
    memo: FactorMemo,
    env: int,
    m: int,
    reg_cap: wp.float64,
) -> int:
    """Bring the factor to the free set that `state` says: drop the listed rows that are no longer free and append
    the free rows not listed (the rows the last solve left as they were keep their factor); factor from scratch
    when nfree[env] < 0 (no valid factor) or when more than half the rows would change, reusing the memo's verdicts
    while the free rows before each row are those it recorded, and recording this factorization's. Returns nf."""
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
        same = int(1)  # the rows before i are free as when the memo was made
        known = memo.count[env]
        for i in range(m):
            y[env, 3 * (y.shape[1] // 4) + i] = wp.float64(0.0)  # no row is regularized until it joins
            is_free = int(state[env, i] == FREE)
            same = same * int(i < known)
            verdict = int(-1)
            if is_free != 0:
                if same != 0 and memo.free[env, i] != 0:
                    verdict = memo.dependent[env, i]
                res = append_row(a, chol, free, y, g, env, nf, i, reg_cap, verdict)
                nf = res[0]
                verdict = res[1]
            if same != 0 and memo.free[env, i] != is_free:
                same = 0
            memo.free[env, i] = is_free
            memo.dependent[env, i] = verdict
        memo.count[env] = m
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
                nf = append_row(a, chol, free, y, g, env, nf, i, reg_cap, -1)[0]
    nfree[env] = nf
    return nf


@wp.func
def substitute(chol: Mat64, y: Vec64, env: int, nf: int, offset: int) -> None:
    """y[offset:offset + nf] = (L L^T)^-1 y[offset:offset + nf], L in chol's lower triangle: forward by rows, then
    backward by columns (_back_substitute)."""
    k = int(0)
    while k < nf:
        y[env, offset + k] = (y[env, offset + k] - dot_row(chol, env, k, y, offset, k)) / chol[env, k, k]
        k += 1
    _back_substitute(chol, y, env, nf, offset)
