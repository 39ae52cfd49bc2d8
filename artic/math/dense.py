"""Dense symmetric positive-definite solves per env (Cholesky, Golub and Van Loan, ch. 4.2), and the row products
the solvers use. The step's M^-1 comes from the tree-sparse factor (math/tree_ldl.py), which shares this module's
pivot floor; the dense Cholesky serves MuJoCo's implicit damping (dynamics/passive.py).

Pivot floor. A joint-space inertia can be singular in float32 although it is positive definite in exact
arithmetic: a light hand at the end of a heavy arm (icub's smallest eigenvalue rounds to -1.7e-9), or a link whose
mass the description left at zero. Cholesky then meets a pivot that is zero, negative or mere rounding noise. A
pivot below PIVOT_REL times its diagonal entry (float32 elimination loses about 1e-7 of the diagonal, so such a
pivot carries no information) is raised to PIVOT_REL * M_jj, and at least to PIVOT_ABS. The step's articulated-body
pass (dynamics/aba.py) treats a joint-space inertia D = S^T I^A S that is singular the same way: it adds
(PIVOT_ABS + PIVOT_REL trace D) to D's diagonal. The inverse-dynamics API does neither: there a singular matrix
is an error naming the envs. The direction it belongs to then gets the finite response 1 / pivot instead of NaN:
it behaves as if it had that much inertia. Models with massless movable subtrees are repaired or refused when they
are added (description/mass_check.py), so the floor only catches what rounding makes singular.
"""

from __future__ import annotations

import warp as wp

PIVOT_REL = wp.constant(1.0e-6)  # smallest Cholesky pivot relative to its diagonal entry of M
PIVOT_ABS = wp.constant(1.0e-9)  # [kg or kg m^2] smallest pivot when the diagonal entry itself is zero


@wp.func
def cholesky_factor(a: wp.array3d(dtype=float), out: wp.array3d(dtype=float), env: int, s: int, n: int) -> None:
    """The Cholesky factor L of the diagonal block [s, s + n) of an SPD a, in out's lower triangle (out may be a:
    column j reads a's entries at and below j before writing them). Pivots are floored (module docstring)."""
    for j in range(s, s + n):
        t = a[env, j, j]
        for k in range(s, j):
            t -= out[env, j, k] * out[env, j, k]
        floor = wp.max(PIVOT_REL * a[env, j, j], PIVOT_ABS)
        if t < floor:  # a NaN pivot (from a NaN state) stays NaN: the step reports that env
            t = floor
        d = wp.sqrt(t)
        out[env, j, j] = d
        for i in range(j + 1, s + n):
            u = a[env, i, j]
            for k in range(s, j):
                u -= out[env, i, k] * out[env, j, k]
            out[env, i, j] = u / d


@wp.func
def cholesky_solve_in_place(
    a: wp.array3d(dtype=float), b: wp.array2d(dtype=float), env: int, s: int, n: int, factor: int
) -> None:
    """b = a^-1 b on the block [s, s + n) of an SPD a, whose lower triangle becomes (with `factor`) or already is
    (without) its Cholesky factor L; pivots floored as cholesky_factor's. The step's MuJoCo damping solves twice with
    one factor (dynamics/passive.py mujoco_damping)."""
    if factor != 0:
        cholesky_factor(a, a, env, s, n)
    for i in range(s, s + n):  # L y = b
        u = b[env, i]
        for k in range(s, i):
            u -= a[env, i, k] * b[env, k]
        b[env, i] = u / a[env, i, i]
    for ii in range(n):  # L^T x = y
        i = s + n - 1 - ii
        u = b[env, i]
        for k in range(i + 1, s + n):
            u -= a[env, k, i] * b[env, k]
        b[env, i] = u / a[env, i, i]


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
def add_row(v: wp.array2d(dtype=float), d: wp.array3d(dtype=float), env: int, row: int, n: int, scale: float) -> None:
    """v[env] += scale d[env, row]: apply an impulse along a row whose M^-1 g is d[env, row] (a while loop: row_dot)."""
    i = int(0)
    while i < n:
        v[env, i] = v[env, i] + scale * d[env, row, i]
        i += 1


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
