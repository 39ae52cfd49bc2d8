"""The direct solver's elliptic contacts brought onto their cone (constraints/elliptic.py).

The pivoting (solvers/mlcp.py) solves a bounded LCP, whose friction can only be a box: an elliptic contact's
friction rows enter it boxed at +-f_k times the normal's impulse, the box around the cone. Its answer is then the
start of block Gauss-Seidel sweeps on the same A and b (A holding the rows' R on its diagonal): each elliptic
contact's rows (three, and its angular ones) solved together on the cone (elliptic.cone_qp), every other row clamped
to its bounds (a box friction row's from its normals' current impulses) as PGS clamps it, until a sweep changes no
row's velocity by more than POLISH_TOLERANCE of the largest |b| (at least POLISH_FLOOR). The problem is convex with
one answer (each soft row's R > 0). The sweeps alone are slow where contacts are redundant: a flat box's four
sliding contacts on 6 dofs leave A with six eigenvalues at R (a few percent of its diagonal), and took 180 sweeps a
solve. Every SUBSPACE_EVERY sweeps a projected Newton step (_subspace_step) minimizes over the current face (the
rows inside their bounds and cones, and each sliding contact's ray), which moves along that slow mode at once: 9
sweeps a solve. w = A x - b is kept up to date (float64) as the impulses move. The pivoting's own answer is kept
(DirectArrays.box_x): the velocity solve and the next step's position solve start from it, at a vertex of their
boxes, not from the polished impulses, which cost each a new active set (the dm_control stacker's solve at rest:
0.35 -> 0.15 ms a step).

The elliptic rows' conditions are the cone's, not a box's: once polished their bounds are pinned at their
impulses (lo = hi = x), which the LCP's complementarity check (mlcp.complementarity_error) then accepts; the velocity
solve sets their boxes afresh. The count of sweeps is what the polish reports (-1: not converged in POLISH_SWEEPS).
"""

from __future__ import annotations

import warp as wp

from ..constraints.contact_arrays import vec6
from ..constraints.elliptic import cone_qp_held, mat66, onto_cone
from ..constraints.row_form import SRC_CONTACT_CONE, RowForm
from .direct_arrays import DirectArrays

POLISH_SWEEPS = wp.constant(200)
POLISH_TOLERANCE = wp.constant(1.0e-6)  # of the largest |b|: the block solves are float32 (elliptic.cone_qp)
POLISH_FLOOR = wp.constant(1.0e-10)  # [m/s]
SUBSPACE_EVERY = wp.constant(2)  # sweeps between two projected Newton steps (_subspace_step)


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
    new = cone_qp_held(h, q, old, mu, dim)
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
    d = wp.clamp(xi - da.y[env, off + i] / aii, lo, hi) - xi
    if d != wp.float64(0.0):
        _move(da, env, m, off, i, d)
    return wp.abs(d) * aii


@wp.func
def _projected_delta(rf: RowForm, da: DirectArrays, env: int, m: int, alpha: wp.float64) -> None:
    """y's first part = P(x + alpha dir) - x (dir: y's second part): each elliptic contact's rows projected onto its
    cone (elliptic.onto_cone), every other row clamped to its bounds (a box friction row keeps its impulse)."""
    off = da.y.shape[1] // 4
    i = int(0)
    while i < m:
        if rf.source_kind[env, i] == SRC_CONTACT_CONE:
            dim = _block_size(rf, env, m, i)
            v = vec6(0.0)
            mu = vec6(1.0)
            for r in range(dim):
                v[r] = float(da.x[env, i + r] + alpha * da.y[env, off + i + r])
                if r > 0:
                    mu[r] = wp.max(rf.mu_static[env, i + r], 1.0e-12)
            v = onto_cone(v, mu, dim)
            for r in range(dim):
                da.y[env, i + r] = wp.float64(v[r]) - da.x[env, i + r]
            i += dim
        else:
            xi = da.x[env, i]
            if rf.findex[env, i] < 0:
                xi = wp.clamp(xi + alpha * da.y[env, off + i], da.lo[env, i], da.hi[env, i])
            da.y[env, i] = xi - da.x[env, i]
            i += 1


@wp.func
def _cost_change(da: DirectArrays, env: int, m: int, off_w: int) -> wp.float64:
    """The polish's cost change (1/2 x^T A x - b^T x) for the move dx in y's first part: dx . w + dx^T A dx / 2."""
    s = wp.float64(0.0)
    for r in range(m):
        d = da.y[env, r]
        if d != wp.float64(0.0):
            q = da.y[env, off_w + r]
            for c in range(m):
                q += wp.float64(0.5) * da.a[env, r, c] * da.y[env, c]
            s += d * q
    return s


@wp.func
def _add_column(da: DirectArrays, env: int, k: int, start: int, length: int) -> int:
    """Column k of the subspace: rows start..start+length-1 (da.free holds start * 8 + length), its entries already
    in y's first part. Returns k + 1."""
    da.free[env, k] = start * 8 + length
    return k + 1


@wp.func
def _free_columns(rf: RowForm, da: DirectArrays, env: int, m: int) -> int:
    """The subspace's columns (_add_column; their unit entries in y's first part, by row): the rows strictly inside
    their bounds (not box friction, whose bounds move with the normals), the rows of elliptic contacts strictly
    inside their cone, and the ray through the impulse of those on its surface: what moves in the sweeps' slow mode,
    the redistribution of a sliding patch's normals (a turn of their friction too made the step worse than none: the
    cone's curvature). Returns their count."""
    k = int(0)
    i = int(0)
    while i < m:
        if rf.source_kind[env, i] == SRC_CONTACT_CONE:
            dim = _block_size(rf, env, m, i)
            n = da.x[env, i]
            if n > wp.float64(0.0):
                s = wp.float64(0.0)
                norm = n * n
                for r in range(1, dim):
                    t = da.x[env, i + r] / wp.float64(wp.max(rf.mu_static[env, i + r], 1.0e-12))
                    s += t * t
                    norm += da.x[env, i + r] * da.x[env, i + r]
                if wp.sqrt(s) < n * wp.float64(1.0 - 1.0e-6):
                    for r in range(dim):
                        da.y[env, i + r] = wp.float64(1.0)
                        k = _add_column(da, env, k, i + r, 1)
                else:
                    for r in range(dim):
                        da.y[env, i + r] = da.x[env, i + r] / wp.sqrt(norm)
                    k = _add_column(da, env, k, i, dim)
            i += dim
        else:
            x = da.x[env, i]
            gap = wp.float64(1.0e-9) * (wp.abs(x) + wp.float64(1.0e-12))
            if (
                rf.findex[env, i] < 0
                and x > da.lo[env, i] + gap
                and x < da.hi[env, i] - gap
                and da.a[env, i, i] > wp.float64(0.0)
            ):
                da.y[env, i] = wp.float64(1.0)
                k = _add_column(da, env, k, i, 1)
            i += 1
    return k


@wp.func
def _subspace_step(rf: RowForm, da: DirectArrays, env: int, m: int, off_w: int) -> None:
    """One projected Newton step of the polish's quadratic (the Gauss-Seidel sweeps' slow part in one solve): its
    minimum over the current face (_free_columns; H = Z^T A Z by Cholesky in the pivoting's factor workspace, which
    is then invalid: the velocity solve factors afresh), then x moves towards it, projected back onto the bounds and
    cones, by the largest of 1, 1/2, 1/4, ... (at most 12) that lowers the cost."""
    k = _free_columns(rf, da, env, m)
    da.nfree[env] = -1  # the workspace below is the pivoting's factor
    if k == 0:
        return
    off_x = da.y.shape[1] // 4  # y's second part: the reduced gradient and step, then the direction in x
    for a in range(k):
        a0 = da.free[env, a] // 8
        a1 = a0 + da.free[env, a] % 8
        g = wp.float64(0.0)
        for r in range(a0, a1):
            g += da.y[env, r] * da.y[env, off_w + r]
        da.y[env, off_x + a] = -g
        for b in range(a + 1):
            b0 = da.free[env, b] // 8
            b1 = b0 + da.free[env, b] % 8
            h = wp.float64(0.0)
            for r in range(a0, a1):
                row = wp.float64(0.0)
                for q in range(b0, b1):
                    row += da.a[env, r, q] * da.y[env, q]
                h += da.y[env, r] * row
            da.chol[env, a, b] = h
    for a in range(k):  # Cholesky, lower triangle in place
        for b in range(a + 1):
            s = da.chol[env, a, b]
            for c in range(b):
                s -= da.chol[env, a, c] * da.chol[env, b, c]
            if a == b:
                if s <= wp.float64(1.0e-14) * da.chol[env, a, a]:
                    return  # (nearly) singular on this face: left to the sweeps
                da.chol[env, a, a] = wp.sqrt(s)
            else:
                da.chol[env, a, b] = s / da.chol[env, b, b]
    for a in range(k):
        s = da.y[env, off_x + a]
        for c in range(a):
            s -= da.chol[env, a, c] * da.y[env, off_x + c]
        da.y[env, off_x + a] = s / da.chol[env, a, a]
    for t in range(k):
        a = k - 1 - t
        s = da.y[env, off_x + a]
        for c in range(a + 1, k):
            s -= da.chol[env, c, a] * da.y[env, off_x + c]
        da.y[env, off_x + a] = s / da.chol[env, a, a]
    for a in range(k):  # the reduced step aside (the factor's first column is no longer needed)
        da.chol[env, a, 0] = da.y[env, off_x + a]
    for r in range(m):
        da.y[env, off_x + r] = wp.float64(0.0)
    for a in range(k):
        a0 = da.free[env, a] // 8
        for r in range(a0, a0 + da.free[env, a] % 8):
            da.y[env, off_x + r] = da.y[env, r] * da.chol[env, a, 0]
    alpha = wp.float64(1.0)
    for _halving in range(12):
        _projected_delta(rf, da, env, m, alpha)
        if _cost_change(da, env, m, off_w) < wp.float64(0.0):
            for r in range(m):
                d = da.y[env, r]
                if d != wp.float64(0.0):
                    _move(da, env, m, off_w, r, d)
            return
        alpha = alpha * wp.float64(0.5)


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
    for i in range(m):  # the pivoting's answer, for the next solve's start (direct.py)
        da.box_x[env, i] = da.x[env, i]
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
        if sweep % SUBSPACE_EVERY == SUBSPACE_EVERY - 1:
            _subspace_step(rf, da, env, m, off)
    for i in range(m):
        if rf.source_kind[env, i] == SRC_CONTACT_CONE:
            da.lo[env, i] = da.x[env, i]
            da.hi[env, i] = da.x[env, i]
    return sweeps
