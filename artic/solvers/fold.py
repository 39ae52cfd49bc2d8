"""Rows folded into the mass matrix: the direct solver's implicit springs on single dofs (solvers/direct.py).

A row i on one generalized velocity v_k (g_i = e_k) with compliance cfm_i > 0 and no bound it can reach asks
v_k + cfm_i lambda_i = t_i, so its impulse is a linear function of the velocity, lambda_i = (t_i - v_k) / cfm_i.
Eliminating it from the LCP adds 1 / cfm_i to M's diagonal entry k and t_i / cfm_i to the right-hand side:
    (M + D) v = M v* + r + G^T lambda,   D_kk = sum_i 1 / cfm_i,   r_k = sum_i t_i / cfm_i,
over the folded rows i on dof k; the other rows see (M + D)^-1 instead of M^-1 and the velocity
v_free = v* + (M + D)^-1 (r - D v*) instead of v*. For an implicit PD drive (cfm = 1 / (h (h k + d)), target
(k e + d v_T) / (h k + d)) that is the implicit integration (M + h^2 k + h d) v = M v* + h (k e + d v_T), as MuJoCo's
implicit damping and the ODE paper's eq. 13 write it; the answer is the LCP's with the row in it, exactly, as long
as the row's impulse stays inside its box. Folded: the dofs' drives and dampers (their viscous friction), which are
most of a robot arm's rows (the panda's 18 of 23), so the pivoting and its O(m^2) passes run over the limits,
couplings, contacts and joints between bodies only.

A drive's box (+-max force h) cannot be folded: its impulse is checked after each pass (fold_exceeded), and a step
whose folded impulse left its box is solved again with every row in the LCP (direct_solve). Rows whose compliance
differs between the passes (a compliant mimic joint's), rows on kinematic trees and friction boxes (MuJoCo's soft
frictionloss, whose box a sliding joint reaches: folded, every such step was solved twice) stay in the LCP.
"""

from __future__ import annotations

import warp as wp

from ..constraints.row_form import FRICTION_CONSTANT, SRC_DOF, SRC_DOF_VISCOUS, RowForm
from ..core.model import Tree
from .tree_rows import factor_blocks, solve_factored

FOLD_BOX_SLACK = wp.constant(1.0e-6)  # a folded impulse may exceed its box by this share of the box (rounding)


@wp.func
def _column(rf: RowForm, env: int, i: int, n_gen: int) -> int:
    """The one generalized column row i acts on with coefficient 1, or -1."""
    col = int(-1)
    k = int(0)
    while k < n_gen:
        gk = rf.g[env, i, k]
        if gk != 0.0:
            if col >= 0 or gk != 1.0:
                return -1
            col = k
        k += 1
    return col


@wp.func
def _foldable(tree: Tree, rf: RowForm, env: int, i: int, col: int) -> int:
    kind = rf.source_kind[env, i]
    if (kind != SRC_DOF and kind != SRC_DOF_VISCOUS) or rf.findex[env, i] == FRICTION_CONSTANT:
        return 0  # a friction box (MuJoCo's soft frictionloss) is reached whenever the joint slides
    c = rf.cfm[env, i]
    if col < 0 or not (c > 0.0) or rf.cfm_vel[env, i] != c or not (rf.lo[env, i] < 0.0 and rf.hi[env, i] > 0.0):
        return 0
    for t in range(tree.tree_count):
        if col >= tree.tree_gen_start[t] and col < tree.tree_gen_start[t] + tree.tree_gen_count[t]:
            if tree.tree_kinematic[t] != 0:
                return 0
    return 1


@wp.func
def _copy_row(rf: RowForm, env: int, src: int, dst: int, n_gen: int) -> None:
    k = int(0)
    while k < n_gen:
        rf.g[env, dst, k] = rf.g[env, src, k]
        k += 1
    rf.target[env, dst] = rf.target[env, src]
    rf.cfm[env, dst] = rf.cfm[env, src]
    rf.target_vel[env, dst] = rf.target_vel[env, src]
    rf.cfm_vel[env, dst] = rf.cfm_vel[env, src]
    rf.lo[env, dst] = rf.lo[env, src]
    rf.hi[env, dst] = rf.hi[env, src]
    rf.findex[env, dst] = rf.findex[env, src]
    rf.fcount[env, dst] = rf.fcount[env, src]
    rf.mu_static[env, dst] = rf.mu_static[env, src]
    rf.mu_dynamic[env, dst] = rf.mu_dynamic[env, src]
    rf.source_kind[env, dst] = rf.source_kind[env, src]
    rf.source_index[env, dst] = rf.source_index[env, src]


@wp.func
def fold_rows(
    tree: Tree,
    mass_matrix: wp.array3d(dtype=float),
    rf: RowForm,
    fold_src: wp.array2d(dtype=int),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    fold_count: wp.array(dtype=int),
    factor: wp.array3d(dtype=wp.float64),
    env: int,
    n_gen: int,
    enabled: int,
) -> None:
    """Move the foldable rows (module docstring) out of the row form into the fold arrays (fold_row: target,
    target_vel, cfm, lo, hi; fold_src: kind + 16 index), keeping the others' order (no friction row refers to a dof
    row, so no findex moves), then the factor of M + D of every tree (solvers/tree_rows.py; D zero on a tree
    without folded rows), which the direct solver's rows go through."""
    m = rf.count[env]
    nf = int(0)
    w = int(0)
    for i in range(m):
        col = _column(rf, env, i, n_gen)
        if enabled != 0 and _foldable(tree, rf, env, i, col) != 0:
            fold_src[env, nf] = rf.source_kind[env, i] + 16 * rf.source_index[env, i]
            fold_col[env, nf] = col
            fold_row[env, nf, 0] = rf.target[env, i]
            fold_row[env, nf, 1] = rf.target_vel[env, i]
            fold_row[env, nf, 2] = rf.cfm[env, i]
            fold_row[env, nf, 3] = rf.lo[env, i]
            fold_row[env, nf, 4] = rf.hi[env, i]
            nf += 1
        else:
            if w != i:
                _copy_row(rf, env, i, w, n_gen)
            w += 1
    rf.count[env] = w
    fold_count[env] = nf
    factor_blocks(tree, mass_matrix, fold_col, fold_row, nf, factor, env)


@wp.func
def _fold_target(fold_row: wp.array3d(dtype=float), env: int, f: int, position: int) -> float:
    """Folded row f's target in the position pass (position 1) or the velocity pass."""
    if position != 0:
        return fold_row[env, f, 0]
    return fold_row[env, f, 1]


@wp.func
def fold_velocity(
    tree: Tree,
    v_star: wp.array2d(dtype=float),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    fold_count: wp.array(dtype=int),
    factor: wp.array3d(dtype=wp.float64),
    scratch: wp.array2d(dtype=wp.float64),
    v_free: wp.array2d(dtype=wp.float64),
    env: int,
    n_gen: int,
    position: int,
) -> None:
    """v_free = v* + (M + D)^-1 (r - D v*) with the pass's targets (module docstring), through the factor
    (fold_rows); scratch (E, >= N) holds r - D v*. Without folded rows, v_free = v*."""
    k = int(0)
    while k < n_gen:
        scratch[env, k] = wp.float64(0.0)
        v_free[env, k] = wp.float64(v_star[env, k])
        k += 1
    nf = fold_count[env]
    if nf == 0:
        return
    for f in range(nf):
        c = fold_col[env, f]
        t = _fold_target(fold_row, env, f, position)
        scratch[env, c] = scratch[env, c] + (wp.float64(t) - wp.float64(v_star[env, c])) / wp.float64(
            fold_row[env, f, 2]
        )
    solve_factored(tree, factor, scratch, env, n_gen)
    k = int(0)
    while k < n_gen:
        v_free[env, k] = v_free[env, k] + scratch[env, k]
        k += 1


@wp.func
def fold_exceeded(
    v: wp.array2d(dtype=float),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    fold_count: wp.array(dtype=int),
    fold_x: wp.array2d(dtype=wp.float64),
    env: int,
    position: int,
) -> int:
    """The folded rows' impulses at the pass's velocity v, lambda = (t - v_k) / cfm, into fold_x; 1 if one left its
    box (beyond FOLD_BOX_SLACK of it): the step is then solved with the row in the LCP."""
    out = int(0)
    for f in range(fold_count[env]):
        t = _fold_target(fold_row, env, f, position)
        x = (wp.float64(t) - wp.float64(v[env, fold_col[env, f]])) / wp.float64(fold_row[env, f, 2])
        fold_x[env, f] = x
        lo = wp.float64(fold_row[env, f, 3])
        hi = wp.float64(fold_row[env, f, 4])
        if x < lo - wp.float64(FOLD_BOX_SLACK) * wp.abs(lo) or x > hi + wp.float64(FOLD_BOX_SLACK) * wp.abs(hi):
            out = 1
    return out
