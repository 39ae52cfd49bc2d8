"""Composite-rigid-body algorithm: the generalized mass matrix M(q) (Featherstone, ch. 6.2).

Composite inertias are summed leaf to root (all in the same world frame about O, so no transforms). For each dof d
of link i, F = Ic_i S_d and M[d', d] = S_d'^T F for every dof d' of i and of its ancestors; the floating root's six
columns (COM linear, angular; physx-notes 6.2) take part like an ancestor joint. Armature is added to the joint
diagonal; artic's M includes it everywhere (PhysX leaves it out of computeMassMatrix only: docs/conventions.md).
"""

from __future__ import annotations

import warp as wp

from ..core.data import ArticulationData, Kin, Scratch
from ..core.model import ArticulationModel, Tree
from ..core.parallel import launch_envs
from ..core.struct_refs import opt_in as _struct_refs
from ..math.dense import zero_row
from ..math.spatial import armature_about_o, inertia_mul, root_column

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)


@wp.func
def crba_env(tree: Tree, kin: Kin, sc: Scratch, mass_matrix: wp.array3d(dtype=float), env: int) -> None:
    n = mass_matrix.shape[1]
    for r in range(n):
        zero_row(mass_matrix, env, r, n)
    for i in range(tree.link_count):
        sc.comp_mass[env, i] = tree.link_mass[i]
        sc.comp_h[env, i] = tree.link_mass[i] * kin.link_com[env, i]
        sc.comp_j[env, i] = kin.link_inertia[env, i]
    for ii in range(tree.link_count):
        i = tree.link_count - 1 - ii
        p = tree.link_parent[i]
        if p >= 0:
            sc.comp_mass[env, p] = sc.comp_mass[env, p] + sc.comp_mass[env, i]
            sc.comp_h[env, p] = sc.comp_h[env, p] + sc.comp_h[env, i]
            sc.comp_j[env, p] = sc.comp_j[env, p] + sc.comp_j[env, i]
    for i in range(tree.link_count):
        rg = tree.link_root_gen[i]
        if tree.link_parent[i] < 0:
            if rg >= 0:  # the floating root's 6x6 block: the whole tree's composite inertia and its armature
                c0 = kin.link_com[env, i]
                ar = tree.link_root_armature[i]
                p0 = kin.link_origin[env, i]
                cm = sc.comp_mass[env, i] + ar
                ch = sc.comp_h[env, i] + ar * p0
                cj = sc.comp_j[env, i] + armature_about_o(ar, p0)
                for c in range(6):
                    f = inertia_mul(cm, ch, cj, root_column(c0, c))
                    for r in range(6):
                        mass_matrix[env, rg + r, rg + c] = wp.dot(root_column(c0, r), f)
            continue
        cm = sc.comp_mass[env, i]
        ch = sc.comp_h[env, i]
        cj = sc.comp_j[env, i]
        for k in range(tree.joint_dof_count[i]):
            d = tree.joint_dof_start[i] + k
            gd = tree.dof_gen[d]
            f = inertia_mul(cm, ch, cj, kin.dof_motion[env, d])
            j = i
            while tree.link_parent[j] >= 0:
                for kk in range(tree.joint_dof_count[j]):
                    dd = tree.joint_dof_start[j] + kk
                    val = wp.dot(kin.dof_motion[env, dd], f)
                    mass_matrix[env, tree.dof_gen[dd], gd] = val
                    mass_matrix[env, gd, tree.dof_gen[dd]] = val
                j = tree.link_parent[j]
            if rg >= 0:  # j is now the tree's root
                for r in range(6):
                    val = wp.dot(root_column(kin.link_com[env, j], r), f)
                    mass_matrix[env, rg + r, gd] = val
                    mass_matrix[env, gd, rg + r] = val
            mass_matrix[env, gd, gd] = mass_matrix[env, gd, gd] + tree.dof_armature[d]


@wp.kernel
def _crba(
    env_offset: int,
    tree: Tree,
    kin: Kin,
    sc: Scratch,
    mass_matrix: wp.array3d(dtype=float),
):
    crba_env(tree, kin, sc, mass_matrix, env_offset + wp.tid())


def crba(model: ArticulationModel, data: ArticulationData) -> None:
    """M(q) into data.mass_matrix; needs forward_kinematics first."""
    launch_envs(
        _crba,
        data.mass_matrix.shape[0],
        [model.tree, data.kin, data.scratch, data.mass_matrix],
        data.mass_matrix.device,
    )
