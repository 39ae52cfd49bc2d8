"""The direct solver's rows through the tree-sparse factor of its mass matrix, in float64.

Per tree, M + D (D the folded rows' springs, solvers/fold.py; zero without them) = L^T D L, factored from the leaves
as math/tree_ldl.py factors M (its pivot floors, and its storage: L_ki at [i, k] for i an ancestor of k, the upper
triangle), and then [k, k] holds D_k^-1/2. A row's u = D^-1/2 L^-T g is nonzero only on its columns and their
ancestors (a contact on a dog's foot: about 15 of its 85 coordinates), so

    A_ij = g_i . (M + D)^-1 g_j = u_i . u_j        over the sparser row's pattern: exactly symmetric, and PSD
    (M + D)^-1 G^T x = L^-1 D^-1/2 (sum_i x_i u_i)  one pass from the roots per velocity

where a dense (M + D)^-1 cost n^2 / 2 times the mean depth to form and each row's (M + D)^-1 g its nonzeros times
n. A kinematic tree (moved by its target, not by forces) gets L = 0 and D^-1/2 = 0: rows see no response there, as
the zeroed block of M^-1 gave them.

Loops are while loops (Warp's CPU code runs them faster than for-range loops with a runtime bound: math/dense.py).
"""

from __future__ import annotations

import warp as wp

from ..core.model import Tree
from ..math.tree_ldl import PIVOT_ABS, PIVOT_REL


@wp.func
def _factor_block(
    mass_matrix: wp.array3d(dtype=float),
    parent: wp.array(dtype=int),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    nf: int,
    out: wp.array3d(dtype=wp.float64),
    env: int,
    s: int,
    last: int,
) -> None:
    """The factor of M + D on the block [s, last] into out (module docstring); reads M's float32 lower triangle on
    the ancestor pattern and the folded rows' compliances (fold_row[.., 2]) on the block."""
    i = s
    while i <= last:  # M + D on the ancestor pattern, in L's place: [j, i] for j an ancestor of i
        j = parent[i]
        while j >= 0:
            out[env, j, i] = wp.float64(mass_matrix[env, i, j])
            j = parent[j]
        out[env, i, i] = wp.float64(mass_matrix[env, i, i])
        i += 1
    for f in range(nf):
        k = fold_col[env, f]
        if k >= s and k <= last:
            out[env, k, k] = out[env, k, k] + wp.float64(1.0) / wp.float64(fold_row[env, f, 2])
    i = s
    while i < last:  # the diagonal the pivot floors are relative to, in the last row (a leaf's: never updated)
        out[env, last, i] = out[env, i, i]
        i += 1
    k = last
    while k >= s:  # leaves first: M + D = L^T D L
        d = out[env, k, k]
        mkk = d
        if k < last:
            mkk = out[env, last, k]
        floor = wp.max(wp.float64(PIVOT_REL) * mkk, wp.float64(PIVOT_ABS))
        if d < floor:  # as tree_ldl_factor's floor; a NaN stays NaN and the step reports the env
            d = floor
        out[env, k, k] = wp.float64(1.0) / wp.sqrt(d)
        i = parent[k]
        while i >= 0:
            r = out[env, i, k] / d
            j = i
            while j >= 0:
                out[env, j, i] = out[env, j, i] - r * out[env, j, k]
                j = parent[j]
            out[env, i, k] = r
            i = parent[i]
        k -= 1


@wp.func
def factor_blocks(
    tree: Tree,
    mass_matrix: wp.array3d(dtype=float),
    fold_col: wp.array2d(dtype=int),
    fold_row: wp.array3d(dtype=float),
    nf: int,
    out: wp.array3d(dtype=wp.float64),
    env: int,
) -> None:
    """The factor of M + D of every tree (module docstring); a kinematic tree's L and D^-1/2 zero."""
    parent = tree.gen_parent
    for t in range(tree.tree_count):
        s = tree.tree_gen_start[t]
        last = s + tree.tree_gen_count[t] - 1
        if tree.tree_kinematic[t] == 0:
            _factor_block(mass_matrix, parent, fold_col, fold_row, nf, out, env, s, last)
            continue
        k = s
        while k <= last:
            out[env, k, k] = wp.float64(0.0)
            i = parent[k]
            while i >= 0:
                out[env, i, k] = wp.float64(0.0)
                i = parent[i]
            k += 1


@wp.func
def row_u(
    tree: Tree,
    fac: wp.array3d(dtype=wp.float64),
    g: wp.array3d(dtype=float),
    u: wp.array3d(dtype=wp.float64),
    nz: wp.array3d(dtype=int),
    env: int,
    i: int,
    n_gen: int,
) -> int:
    """Row i's u = D^-1/2 L^-T g into u[env, i] (zero off its pattern) and its pattern, g's columns and their
    ancestors in increasing order, into nz[env, i] (a kinematic tree's columns included: their g . v counts, their
    u is 0); returns the pattern's size."""
    parent = tree.gen_parent
    k = int(0)
    while k < n_gen:
        u[env, i, k] = wp.float64(g[env, i, k])
        k += 1
    k = n_gen - 1
    while k >= 0:  # L^T y = g, leaves first: y_k is final once its descendants are done
        y = u[env, i, k]
        if y != wp.float64(0.0):
            p = parent[k]
            while p >= 0:
                u[env, i, p] = u[env, i, p] - fac[env, p, k] * y
                p = parent[p]
        k -= 1
    nnz = int(0)
    k = int(0)
    while k < n_gen:
        y = u[env, i, k]
        if y != wp.float64(0.0) or g[env, i, k] != 0.0:
            u[env, i, k] = y * fac[env, k, k]
            nz[env, i, nnz] = k
            nnz += 1
        k += 1
    return nnz


@wp.func
def from_roots(
    tree: Tree, fac: wp.array3d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), env: int, n_gen: int
) -> None:
    """b = L^-1 D^-1/2 b in place: scaled, then solved from the roots (an ancestor's entry is final first)."""
    parent = tree.gen_parent
    k = int(0)
    while k < n_gen:
        x = b[env, k] * fac[env, k, k]
        p = parent[k]
        while p >= 0:
            x -= fac[env, p, k] * b[env, p]
            p = parent[p]
        b[env, k] = x
        k += 1


@wp.func
def solve_factored(
    tree: Tree, fac: wp.array3d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), env: int, n_gen: int
) -> None:
    """b = (M + D)^-1 b in place: L^T y = b from the leaves, scaled by D^-1/2, then from_roots."""
    parent = tree.gen_parent
    k = n_gen - 1
    while k >= 0:
        y = b[env, k]
        if y != wp.float64(0.0):
            p = parent[k]
            while p >= 0:
                b[env, p] = b[env, p] - fac[env, p, k] * y
                p = parent[p]
        k -= 1
    k = int(0)
    while k < n_gen:
        b[env, k] = b[env, k] * fac[env, k, k]
        k += 1
    from_roots(tree, fac, b, env, n_gen)


__all__ = ["factor_blocks", "from_roots", "row_u", "solve_factored"]
