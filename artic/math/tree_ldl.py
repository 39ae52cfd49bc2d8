"""Tree-sparse inverse of a joint-space inertia matrix: the L^T D L factorization without fill-in (Featherstone,
"Rigid Body Dynamics Algorithms", sec. 6.5, "LTDL"), then M^-1 from the factor.

M's entry (i, j) off the diagonal is nonzero only where one coordinate is an ancestor of the other in the tree
(`Tree.gen_parent`, every parent index smaller than its child's). Factoring from the leaves to the root keeps that
pattern: M = L^T D L with L unit lower-triangular and L_ij nonzero only for j an ancestor of i, at a cost of the sum
of the squared depths instead of the dense n^3 / 6. The solver reads the columns of M^-1, which are dense in a tree
whose branches meet at a root; they come from L X = D^-1 L^-T (upper-triangular), row by row from the root:

    X_ij = -sum_{m ancestor of i} L_im X_mj            (j < i)
    X_ii = 1 / D_ii - sum_{m ancestor of i} L_im X_mi

at a cost of n^2 / 2 times the mean depth (a 79-dof dog: about a tenth of the dense inverse's n^3 / 2).

Pivot floor as math/dense.py's Cholesky: a pivot D_kk below PIVOT_REL M_kk (and PIVOT_ABS) is raised to it, so a
singular M gives a finite, very large inverse.

Loops are while loops: Warp 1.19's CPU code runs a for-range loop with a runtime bound at several times the cost of
a while loop (math/dense.py row_dot).
"""

from __future__ import annotations

import warp as wp

from .dense import PIVOT_ABS, PIVOT_REL


@wp.func
def _factor(
    a: wp.array3d(dtype=float), out: wp.array3d(dtype=float), parent: wp.array(dtype=int), env: int, s: int, n: int
) -> None:
    """D (the diagonal) and L of the block [s, s + n) of a, in out; L_ij (j an ancestor of i) is stored transposed,
    at out[j, i], so that the inverse can build X's rows in the lower triangle while L is still needed."""
    k = s
    while k < s + n:  # only the ancestor entries are read, so only they are copied
        j = k
        while j >= 0:
            out[env, j, k] = a[env, k, j]
            j = parent[j]
        k += 1
    k = s + n - 1
    while k >= s:
        d = out[env, k, k]
        floor = wp.max(PIVOT_REL * a[env, k, k], PIVOT_ABS)
        if d < floor:  # a NaN pivot (from a NaN state) stays NaN: the step reports that env
            d = floor
        out[env, k, k] = d
        i = parent[k]
        while i >= 0:
            f = out[env, i, k] / d
            j = i
            while j >= 0:
                out[env, j, i] = out[env, j, i] - f * out[env, j, k]
                j = parent[j]
            out[env, i, k] = f
            i = parent[i]
        k -= 1


@wp.func
def tree_spd_inverse(
    a: wp.array3d(dtype=float), out: wp.array3d(dtype=float), parent: wp.array(dtype=int), env: int, s: int, n: int
) -> None:
    """out = a^-1 on the diagonal block [s, s + n) of an SPD a with the tree sparsity `parent` (global indices, -1
    at a root); entries outside the block are not written. `out` serves as the factor's workspace."""
    _factor(a, out, parent, env, s, n)
    i = s
    while i < s + n:
        # row i of X in the lower triangle (contiguous), from the rows of its ancestors, which are complete up to
        # column i - 1; then mirrored into column i, over L's entries of row i, which are no longer needed
        m = parent[i]
        j = s
        if m < 0:
            while j < i:
                out[env, i, j] = 0.0
                j += 1
        else:
            f = out[env, m, i]
            while j < i:
                out[env, i, j] = -f * out[env, m, j]
                j += 1
            m = parent[m]
        while m >= 0:  # two ancestors a pass: half the loads and stores of row i
            f = out[env, m, i]
            m2 = parent[m]
            j = s
            if m2 < 0:
                while j < i:
                    out[env, i, j] = out[env, i, j] - f * out[env, m, j]
                    j += 1
                m = m2
            else:
                f2 = out[env, m2, i]
                while j < i:
                    out[env, i, j] = out[env, i, j] - (f * out[env, m, j] + f2 * out[env, m2, j])
                    j += 1
                m = parent[m2]
        x = 1.0 / out[env, i, i]
        m = parent[i]
        while m >= 0:
            x -= out[env, m, i] * out[env, i, m]
            m = parent[m]
        j = s
        while j < i:
            out[env, j, i] = out[env, i, j]
            j += 1
        out[env, i, i] = x
        i += 1
