"""The direct solver's rows through the tree-sparse factor of its mass matrix, in float64.

Per tree, M + D (D the folded rows' springs, solvers/fold.py; zero without them) = L^T D L, factored from the leaves
as math/tree_ldl.py factors M (its pivot floors, and its storage: L_ki at [i, k] for i an ancestor of k, the upper
triangle), and then [k, k] holds D_k^-1/2. A row's u = D^-1/2 L^-T g is nonzero only on its columns and their
ancestors (a contact on a dog's foot: about 15 of its 85 coordinates), so

    A_ij = g_i . (M + D)^-1 g_j = u_i . u_j        over the rows' patterns (a_row): exactly symmetric, and PSD
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
from .direct_arrays import DirectArrays


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


# -- the LCP's matrix A = G (M + D)^-1 G^T, entry by entry from the rows' u --------------------------------------

MANY_TREES = wp.constant(-2)  # row_trees: a row on more than two trees (its A entries sum over all its columns)


@wp.func
def row_trees(tree: Tree, da: DirectArrays, env: int, i: int, nnz: int) -> None:
    """The trees of row i's pattern (da.nz, increasing: row_u) into da.row_trees: (tree0, split, tree1,
    0), tree0's columns before nz index split and tree1's (-1: none) from it on; tree0 is MANY_TREES for a row on
    more than two trees."""
    tree0 = int(-1)
    tree1 = int(-1)
    split = nnz
    if tree.tree_gen_start.shape[0] > 1:  # one tree: nothing to tell apart
        t = int(0)
        q = int(0)
        while q < nnz:
            col = da.nz[env, i, q]
            while col >= tree.tree_gen_start[t] + tree.tree_gen_count[t]:
                t += 1
            if tree0 == -1:
                tree0 = t
            elif t != tree0 and tree1 == -1:
                tree1 = t
                split = q
            elif t != tree0 and t != tree1:
                tree0 = MANY_TREES
            q += 1
    da.row_trees[env, i] = wp.vec4i(tree0, split, tree1, 0)


@wp.func
def _a_entry(da: DirectArrays, env: int, r: int, c: int, q0: int, q1: int) -> wp.float64:
    """g_r . (M + D)^-1 g_c = u_r . u_c over r's pattern q0..q1-1 (tree_rows.py)."""
    s = wp.float64(0.0)
    q = q0
    while q < q1:
        k = da.nz[env, r, q]
        s += da.u64[env, r, k] * da.u64[env, c, k]
        q += 1
    return s


@wp.func
def _four_entries(da: DirectArrays, env: int, i: int, j: int, nnz: int) -> None:
    """A_i,j..j+3 (and their mirror) over row i's pattern, each u_i load shared by four products: the dm humanoid's
    A took 22 % less time than one entry at a time over the sparser pattern. The same sums as _a_entry's: the
    products off row j's pattern are zeros, and the others come in the same order."""
    s0 = wp.float64(0.0)
    s1 = wp.float64(0.0)
    s2 = wp.float64(0.0)
    s3 = wp.float64(0.0)
    q = int(0)
    while q < nnz:
        k = da.nz[env, i, q]
        ui = da.u64[env, i, k]
        s0 += ui * da.u64[env, j, k]
        s1 += ui * da.u64[env, j + 1, k]
        s2 += ui * da.u64[env, j + 2, k]
        s3 += ui * da.u64[env, j + 3, k]
        q += 1
    da.a[env, i, j] = s0
    da.a[env, j, i] = s0
    da.a[env, i, j + 1] = s1
    da.a[env, j + 1, i] = s1
    da.a[env, i, j + 2] = s2
    da.a[env, j + 2, i] = s2
    da.a[env, i, j + 3] = s3
    da.a[env, j + 3, i] = s3


@wp.func
def a_row(da: DirectArrays, env: int, i: int, nnz: int, many_trees: int) -> None:
    """A_ij for j <= i (and A_ji), each over the sparser row's nonzero columns; with many_trees, only those in a tree
    the other row touches ([0, split) tree0's, [split, nnz) tree1's: row_trees). Two loops: a test inside the one
    loop made the allegro hand's step (one tree) 5 % slower. On one tree, four entries at a time over row i's
    pattern (_four_entries), then the rest one by one."""
    j = int(0)
    if many_trees != 0:
        while j <= i:
            r = i
            c = j
            if nnz > da.nnz[env, j]:
                r = j
                c = i
            seg = da.row_trees[env, r]
            other = da.row_trees[env, c]
            q0 = int(0)
            q1 = da.nnz[env, r]
            if seg[0] != MANY_TREES and other[0] != MANY_TREES:
                if seg[0] != other[0] and seg[0] != other[2]:
                    q0 = seg[1]
                if seg[2] < 0 or (seg[2] != other[0] and seg[2] != other[2]):
                    q1 = seg[1]
            s = _a_entry(da, env, r, c, q0, q1)
            da.a[env, i, j] = s
            da.a[env, j, i] = s
            j += 1
    else:
        while j + 3 <= i:
            _four_entries(da, env, i, j, nnz)
            j += 4
        while j <= i:
            s = wp.float64(0.0)
            if nnz > da.nnz[env, j]:
                s = _a_entry(da, env, j, i, 0, da.nnz[env, j])
            else:
                s = _a_entry(da, env, i, j, 0, nnz)
            da.a[env, i, j] = s
            da.a[env, j, i] = s
            j += 1


__all__ = ["MANY_TREES", "a_row", "factor_blocks", "from_roots", "row_trees", "row_u", "solve_factored"]
