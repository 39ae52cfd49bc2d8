"""Dense symmetric positive-definite inverse per env (Cholesky, Golub and Van Loan, ch. 4.2).

The solver needs the columns of M^-1: column d is the generalized velocity change per unit impulse on dof d.
A dense factorization is right up to a few dozen dofs; this is the one place to swap in a tree-sparse one.
"""

import warp as wp


@wp.func
def spd_inverse(a: wp.array3d(dtype=float), out: wp.array3d(dtype=float), env: int, s: int, n: int):
    """out = a^-1 on the diagonal block [s, s + n) of an SPD a; `out` also serves as the Cholesky workspace.
    (A forest's M is block-diagonal, one block per tree: entries outside the blocks are never written and stay
    zero.) A non-positive pivot (singular a) yields NaN, which the caller reports."""
    # Cholesky factor L in the lower triangle of out
    for j in range(s, s + n):
        t = a[env, j, j]
        for k in range(s, j):
            t -= out[env, j, k] * out[env, j, k]
        d = wp.sqrt(t)
        if t <= 0.0:
            d = wp.nan
        out[env, j, j] = d
        for i in range(j + 1, s + n):
            u = a[env, i, j]
            for k in range(s, j):
                u -= out[env, i, k] * out[env, j, k]
            out[env, i, j] = u / d
    # L^-1 in place (lower triangle)
    for j in range(s, s + n):
        out[env, j, j] = 1.0 / out[env, j, j]
        for i in range(j + 1, s + n):
            u = float(0.0)
            for k in range(j, i):
                u -= out[env, i, k] * out[env, k, j]
            out[env, i, j] = u / out[env, i, i]
    # A^-1 = L^-T L^-1, symmetric: fill the upper triangle first, then mirror
    for i in range(s, s + n):
        for j in range(i, s + n):
            u = float(0.0)
            for k in range(j, s + n):
                u += out[env, k, i] * out[env, k, j]
            out[env, i, j] = u
    for i in range(s, s + n):
        for j in range(i + 1, s + n):
            out[env, j, i] = out[env, i, j]


@wp.func
def row_dot(g: wp.array3d(dtype=float), v: wp.array2d(dtype=float), env: int, row: int, n: int):
    """g[env, row] . v[env]: a constraint row's velocity."""
    s = float(0.0)
    for i in range(n):
        s += g[env, row, i] * v[env, i]
    return s


@wp.func
def add_row(v: wp.array2d(dtype=float), d: wp.array3d(dtype=float), env: int, row: int, n: int, scale: float):
    """v[env] += scale d[env, row]: apply an impulse along a row whose M^-1 g is d[env, row]."""
    for i in range(n):
        v[env, i] = v[env, i] + scale * d[env, row, i]


@wp.func
def solve_row(minv: wp.array3d(dtype=float), g: wp.array3d(dtype=float), minv_g: wp.array3d(dtype=float), env: int,
              row: int, n: int):
    """minv_g[env, row] = M^-1 g[env, row]; returns the row's response g^T M^-1 g."""
    # column by column, skipping g's zeros: a contact or joint row touches only the dofs between its links and
    # the root (M^-1 is symmetric, so column j is row j)
    for i in range(n):
        minv_g[env, row, i] = 0.0
    for j in range(n):
        gj = g[env, row, j]
        if gj != 0.0:
            for i in range(n):
                minv_g[env, row, i] = minv_g[env, row, i] + minv[env, j, i] * gj
    resp = float(0.0)
    for i in range(n):
        resp += g[env, row, i] * minv_g[env, row, i]
    return resp
