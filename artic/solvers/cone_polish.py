"""The direct solver's elliptic contacts brought onto their cone (constraints/elliptic.py).

The pivoting (solvers/mlcp.py) solves a bounded LCP, whose friction can only be a box: an elliptic contact's
friction rows enter it boxed at +-f_k times the normal's impulse, the box around the cone. Its answer is then the
start of block Gauss-Seidel sweeps on the same A and b (A holding the rows' R on its diagonal), over-relaxed by
POLISH_OMEGA: each elliptic contact's rows (three, and its angular ones) solved together on the cone
(elliptic.cone_qp), every other row clamped to its bounds (a box friction row's from its normals' current impulses)
as PGS clamps it, until a sweep changes no row's velocity by more than POLISH_TOLERANCE of the largest |b| (at least
POLISH_FLOOR). The problem is convex with one answer (each soft row's R > 0). The sweeps are what is slow: a flat
box's four contacts are redundant, a redundancy that only R (a few percent of A's diagonal) resolves, and took 180
sweeps a solve without the over-relaxation, 55 with it. w = A x - b is kept up to date (float64) as the impulses
move, so that the velocity solve can start from it as from the pivoting's.

The elliptic rows' conditions are the cone's, not a box's: once polished their bounds are pinned at their
impulses (lo = hi = x), which the LCP's complementarity check (mlcp.complementarity_error) then accepts; the velocity
solve sets their boxes afresh. The count of sweeps is what the polish reports (-1: not converged in POLISH_SWEEPS).
"""

from __future__ import annotations

import warp as wp

from ..constraints.contact_arrays import vec6
from ..constraints.elliptic import cone_qp, mat66, onto_cone
from ..constraints.row_form import SRC_CONTACT_CONE, RowForm
from .direct_arrays import DirectArrays

POLISH_SWEEPS = wp.constant(200)
POLISH_OMEGA = wp.constant(1.6)  # over-relaxation: a box's 4 contacts took 180 sweeps a solve at 1, 55 at 1.6
POLISH_TOLERANCE = wp.constant(1.0e-6)  # of the largest |b|: the block solves are float32 (elliptic.cone_qp)
POLISH_FLOOR = wp.constant(1.0e-10)  # [m/s]


@wp.func
def _move(da: DirectArrays, env: int, m: int, off: int, i: int, d: wp.float64) -> None:
    """x_i += d, and w = A x - b with it."""
    da.x[env, i] = da.x[env, i] + d
    j = int(0)
    while j < m:
        da.y[env, off + j] = da.y[env, off + j] + da.a[env, j, i] * d
        j += 1


@wp.func
def _normal_sum(rf: RowForm, da: DirectArrays, env: int, i: int) -> wp.float64:
    """The normal impulses that bound box friction row i (rf.findex, rf.fcount)."""
    s = wp.float64(0.0)
    for k in range(rf.fcount[env, i]):
        s += wp.max(da.x[env, rf.findex[env, i] + k], wp.float64(0.0))
    return s


@wp.func
def _cone_block(rf: RowForm, da: DirectArrays, env: int, m: int, off: int, i: int, dim: int) -> wp.float64:
    """Rows i..i+dim-1 (an elliptic contact's normal, friction and angular rows: row_form) solved on its cone; returns
    the largest velocity change it made. A friction row of coefficient 0 is held at 0 (decoupled)."""
    h = mat66(0.0)
    old = vec6(0.0)
    q = vec6(0.0)
    mu = vec6(0.0)
    for r in range(dim):
        old[r] = float(da.x[env, i + r])
        mu[r] = rf.mu_static[env, i + r]
        for s in range(dim):
            h[r, s] = float(da.a[env, i + r, i + s])
        q[r] = -float(da.y[env, off + i + r])
    q = q + h * old
    for r in range(1, dim):
        if mu[r] <= 0.0:
            for s in range(dim):
                h[r, s] = 0.0
                h[s, r] = 0.0
            h[r, r] = 1.0
            q[r] = 0.0
            mu[r] = 1.0
    new = cone_qp(h, q, old, mu, dim)
    new = onto_cone(old + (new - old) * POLISH_OMEGA, mu, dim)
    change = wp.float64(0.0)
    for r in range(dim):
        d = wp.float64(new[r]) - da.x[env, i + r]
        if d != wp.float64(0.0):
            _move(da, env, m, off, i + r, d)
            change = wp.max(change, wp.abs(d) * da.a[env, i + r, i + r])
    return change


@wp.func
def _block_size(rf: RowForm, env: int, m: int, i: int) -> int:
    """The rows from i on of the elliptic contact whose normal is row i (source index 6 c + k, k = 0 the normal)."""
    c = rf.source_index[env, i] // 6
    j = i + 1
    while j < m and j < i + 6 and rf.source_kind[env, j] == SRC_CONTACT_CONE and rf.source_index[env, j] // 6 == c:
        j += 1
    return j - i


@wp.func
def _scalar_row(rf: RowForm, da: DirectArrays, env: int, m: int, off: int, i: int) -> wp.float64:
    """Row i's projected Gauss-Seidel update; returns the velocity change it made."""
    aii = da.a[env, i, i]
    if aii <= wp.float64(0.0):
        return wp.float64(0.0)
    lo = da.lo[env, i]
    hi = da.hi[env, i]
    if rf.findex[env, i] >= 0:
        bound = wp.float64(rf.mu_static[env, i]) * _normal_sum(rf, da, env, i)
        lo = -bound
        hi = bound
    xi = da.x[env, i]
    d = wp.clamp(xi - wp.float64(POLISH_OMEGA) * da.y[env, off + i] / aii, lo, hi) - xi
    if d != wp.float64(0.0):
        _move(da, env, m, off, i, d)
    return wp.abs(d) * aii


@wp.func
def polish_cones(rf: RowForm, da: DirectArrays, env: int, m: int) -> int:
    """The env's m rows after the pivoting, their elliptic contacts brought onto the cone (module docstring).
    Returns the sweeps taken: 0 without elliptic rows, -1 if POLISH_SWEEPS did not converge."""
    first = int(-1)
    scale = wp.float64(0.0)
    for i in range(m):
        if rf.source_kind[env, i] == SRC_CONTACT_CONE and first < 0:
            first = i
        scale = wp.max(scale, wp.abs(da.b[env, i]))
    if first < 0:
        return 0
    off = 2 * (da.y.shape[1] // 4)
    for i in range(m):  # w = A x - b afresh
        s = -da.b[env, i]
        j = int(0)
        while j < m:
            s += da.a[env, i, j] * da.x[env, j]
            j += 1
        da.y[env, off + i] = s
    tolerance = wp.max(wp.float64(POLISH_TOLERANCE) * scale, wp.float64(POLISH_FLOOR))
    sweeps = int(-1)
    for sweep in range(POLISH_SWEEPS):
        change = wp.float64(0.0)
        i = int(0)
        while i < m:
            if rf.source_kind[env, i] == SRC_CONTACT_CONE:  # a contact's rows, in order (row_form)
                dim = _block_size(rf, env, m, i)
                change = wp.max(change, _cone_block(rf, da, env, m, off, i, dim))
                i += dim
            else:
                change = wp.max(change, _scalar_row(rf, da, env, m, off, i))
                i += 1
        if change <= tolerance:
            sweeps = sweep + 1
            break
    for i in range(m):
        if rf.source_kind[env, i] == SRC_CONTACT_CONE:
            da.lo[env, i] = da.x[env, i]
            da.hi[env, i] = da.x[env, i]
    return sweeps
