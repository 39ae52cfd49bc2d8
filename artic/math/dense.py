"""The products of a constraint row with the generalized velocity and with M^-1 that every solver uses; the rows
are dense over a block's generalized coordinates. M^-1 itself comes from the tree-sparse factor (math/tree_ldl.py).
"""

from __future__ import annotations

import warp as wp


@wp.func
def row_dot(g: wp.array3d(dtype=float), v: wp.array2d(dtype=float), env: int, row: int, n: int) -> float:
    """g[env, row] . v[env]: a constraint row's velocity. A while loop in four partial sums: Warp 1.19's CPU code
    runs a for-range loop with a runtime bound at ~2 ns an iteration (a while loop at ~0.4), and a single running
    sum waits on each addition (this was the hottest loop of the PGS contact solve on dm_control's humanoid,
    benchmarks/profile_step.py)."""
    s0 = float(0.0)
    s1 = float(0.0)
    s2 = float(0.0)
    s3 = float(0.0)
    i = int(0)
    while i + 4 <= n:
        s0 += g[env, row, i] * v[env, i]
        s1 += g[env, row, i + 1] * v[env, i + 1]
        s2 += g[env, row, i + 2] * v[env, i + 2]
        s3 += g[env, row, i + 3] * v[env, i + 3]
        i += 4
    while i < n:
        s0 += g[env, row, i] * v[env, i]
        i += 1
    return (s0 + s1) + (s2 + s3)


@wp.func
def rows_dot(a: wp.array3d(dtype=float), ra: int, b: wp.array3d(dtype=float), rb: int, env: int, n: int) -> float:
    """a[env, ra] . b[env, rb] (row_dot's four partial sums)."""
    s0 = float(0.0)
    s1 = float(0.0)
    s2 = float(0.0)
    s3 = float(0.0)
    i = int(0)
    while i + 4 <= n:
        s0 += a[env, ra, i] * b[env, rb, i]
        s1 += a[env, ra, i + 1] * b[env, rb, i + 1]
        s2 += a[env, ra, i + 2] * b[env, rb, i + 2]
        s3 += a[env, ra, i + 3] * b[env, rb, i + 3]
        i += 4
    while i < n:
        s0 += a[env, ra, i] * b[env, rb, i]
        i += 1
    return (s0 + s1) + (s2 + s3)


@wp.func
def zero_row(g: wp.array3d(dtype=float), env: int, row: int, n: int) -> None:
    """g[env, row, :n] = 0 (a while loop: row_dot)."""
    i = int(0)
    while i < n:
        g[env, row, i] = 0.0
        i += 1


@wp.func
def add_row(v: wp.array2d(dtype=float), d: wp.array3d(dtype=float), env: int, row: int, n: int, scale: float) -> None:
    """v[env] += scale d[env, row]: apply an impulse along a row whose M^-1 g is d[env, row] (a while loop: row_dot)."""
    i = int(0)
    while i < n:
        v[env, i] = v[env, i] + scale * d[env, row, i]
        i += 1


@wp.func
def _next_nonzero(g: wp.array3d(dtype=float), env: int, row: int, j: int, n: int) -> int:
    """The first index at or after j where row `row` of g is nonzero; n if none."""
    k = j
    while k < n:
        if g[env, row, k] != 0.0:
            return k
        k += 1
    return n


@wp.func
def solve_row(
    minv: wp.array3d(dtype=float),
    g: wp.array3d(dtype=float),
    minv_g: wp.array3d(dtype=float),
    env: int,
    row: int,
    n: int,
) -> float:
    """minv_g[env, row] = M^-1 g[env, row]; returns the row's response g^T M^-1 g."""
    # column by column, skipping g's zeros: a contact or joint row touches only the dofs between its links and
    # the root (M^-1 is symmetric, so column j is row j); two columns a pass halve the loads and stores of the
    # result (while loops: row_dot)
    zero_row(minv_g, env, row, n)
    j = _next_nonzero(g, env, row, 0, n)
    while j < n:
        g1 = g[env, row, j]
        j1 = j
        j = _next_nonzero(g, env, row, j + 1, n)
        i = int(0)
        if j < n:
            g2 = g[env, row, j]
            while i < n:
                minv_g[env, row, i] = minv_g[env, row, i] + (minv[env, j1, i] * g1 + minv[env, j, i] * g2)
                i += 1
            j = _next_nonzero(g, env, row, j + 1, n)
        else:
            while i < n:
                minv_g[env, row, i] = minv_g[env, row, i] + minv[env, j1, i] * g1
                i += 1
    return rows_dot(g, row, minv_g, row, env, n)
