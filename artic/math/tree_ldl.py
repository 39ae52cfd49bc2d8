"""Tree-sparse factorization of a joint-space inertia matrix, M = L^T D L without fill-in (Featherstone, "Rigid Body
Dynamics Algorithms", sec. 6.5, "LTDL"), and what the step needs from it: M^-1, and solves with M + dt D.

M's entry (i, j) off the diagonal is nonzero only where one coordinate is an ancestor of the other in the tree
(`Tree.gen_parent`, every parent index smaller than its child's). Factoring from the leaves to the root keeps that
pattern: L is unit lower-triangular with L_ij nonzero only for j an ancestor of i, at a cost of the sum of the
squared depths instead of the dense n^3 / 6. The solver reads the columns of M^-1, which are dense in a tree whose
branches meet at a root; they come from L X = D^-1 L^-T (upper-triangular), row by row from the root:

    X_ij = -sum_{m ancestor of i} L_im X_mj            (j < i)
    X_ii = 1 / D_ii - sum_{m ancestor of i} L_im X_mi

at n^2 / 2 times the mean depth (the 79-dof dm_control dog: 32 us against the dense Cholesky inverse's 270).

Storage: D on the diagonal, L_ij transposed at [j, i] (the upper triangle), so that the inverse can build X's rows
in the lower triangle while L is still needed, and the factor can be formed in place of a symmetric M.

Pivot floor. A joint-space inertia can be singular in float32 although it is positive definite in exact
arithmetic: a light hand at the end of a heavy arm (icub's smallest eigenvalue rounds to -1.7e-9), or a link whose
mass the description left at zero. The factorization then meets a pivot that is zero, negative or mere rounding
noise. A pivot below PIVOT_REL times its diagonal entry of M (float32 elimination loses about 1e-7 of the
diagonal, so such a pivot carries no information) is raised to PIVOT_REL * M_kk, and at least to PIVOT_ABS; the
direction it belongs to gets the finite response 1 / pivot instead of NaN: it behaves as if it had that much
inertia. The step's articulated-body pass (dynamics/aba.py) treats a joint-space inertia D = S^T I^A S that is
singular the same way. The inverse-dynamics API does neither: there a singular matrix is an error naming the envs.
Models with massless movable subtrees are repaired or refused when they are added (description/mass_check.py), so
the floor only catches what rounding makes singular.

Loops are while loops: Warp 1.19's CPU code runs a for-range loop with a runtime bound at several times the cost of
a while loop (math/dense.py row_dot).
"""

from __future__ import annotations

import warp as wp

PIVOT_REL = wp.constant(1.0e-6)  # smallest pivot relative to its diagonal entry of M
PIVOT_ABS = wp.constant(1.0e-9)  # [kg or kg m^2] smallest pivot when the diagonal entry itself is zero


@wp.func
def tree_ldl_factor(
    a: wp.array3d(dtype=float), out: wp.array3d(dtype=float), parent: wp.array(dtype=int), env: int, s: int, n: int
) -> None:
    """D and L (module docstring) of the block [s, s + n) of the SPD a, into out; out may be a (a symmetric a's
    upper triangle already holds what the factor starts from). Reads a's lower triangle and diagonal only on the
    ancestor pattern; out's lower triangle, except its last row, is left as it was."""
    last = s + n - 1
    k = s
    while k < s + n:  # only the ancestor entries are read, so only they are copied
        j = parent[k]
        while j >= 0:
            out[env, j, k] = a[env, k, j]
            j = parent[j]
        out[env, k, k] = a[env, k, k]
        k += 1
    k = s
    while k < last:  # M's diagonal, which the pivots' floors are relative to, kept in the (unused) last row
        out[env, last, k] = a[env, k, k]
        k += 1
    k = last
    while k >= s:
        d = out[env, k, k]
        mkk = d  # the last coordinate is a leaf: nothing updated its diagonal before this point
        if k < last:
            mkk = out[env, last, k]
        floor = wp.max(PIVOT_REL * mkk, PIVOT_ABS)
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
def tree_ldl_solve(
    f: wp.array3d(dtype=float), b: wp.array2d(dtype=float), parent: wp.array(dtype=int), env: int, s: int, n: int
) -> None:
    """b = M^-1 b on the block [s, s + n), with f holding M's factor (tree_ldl_factor)."""
    k = s + n - 1
    while k >= s:  # L^T y = b, leaves first: y_k is final once its descendants are done
        y = b[env, k]
        i = parent[k]
        while i >= 0:
            b[env, i] = b[env, i] - f[env, i, k] * y
            i = parent[i]
        k -= 1
    k = s
    while k < s + n:  # L x = D^-1 y, root first
        x = b[env, k] / f[env, k, k]
        i = parent[k]
        while i >= 0:
            x -= f[env, i, k] * b[env, i]
            i = parent[i]
        b[env, k] = x
        k += 1


@wp.func
def tree_spd_inverse(
    a: wp.array3d(dtype=float), out: wp.array3d(dtype=float), parent: wp.array(dtype=int), env: int, s: int, n: int
) -> None:
    """out = a^-1 on the diagonal block [s, s + n) of an SPD a with the tree sparsity `parent` (global indices, -1
    at a root); entries outside the block are not written. `out` serves as the factor's workspace."""
    tree_ldl_factor(a, out, parent, env, s, n)
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
        while m >= 0 and parent[m] >= 0 and parent[parent[m]] >= 0 and parent[parent[parent[m]]] >= 0:
            # four ancestors a pass while there are four: a quarter of the loads and stores of row i
            m2 = parent[m]
            m3 = parent[m2]
            m4 = parent[m3]
            f = out[env, m, i]
            f2 = out[env, m2, i]
            f3 = out[env, m3, i]
            f4 = out[env, m4, i]
            j = s
            while j < i:
                out[env, i, j] = out[env, i, j] - (
                    (f * out[env, m, j] + f2 * out[env, m2, j]) + (f3 * out[env, m3, j] + f4 * out[env, m4, j])
                )
                j += 1
            m = parent[m4]
        while m >= 0:  # then two, then one
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
