"""Articulated-body algorithm: forward dynamics a = M^-1 (tau - C v - g + J^T f_ext) in O(n) (Featherstone, ch. 7.3).

Multi-dof joints (spherical, up to 3 dofs) use 3x3 joint-space inertias D = S^T I^A S; unused rows are padded
with the identity so one 3x3 inverse serves 1, 2 and 3 dofs. Armature adds to D's diagonal. Gravity enters as an
external force -I (0, g) on every link so that the floating root needs no special case; the floating root solves
its 6x6 system by Cholesky in the root's generalized coordinates (COM linear, angular).
"""

from __future__ import annotations

import warp as wp

from ..core.data import ArticulationData, Kin, Scratch
from ..core.model import ArticulationModel, Tree
from ..core.parallel import launch_envs
from ..core.struct_refs import opt_in as _struct_refs
from ..math.spatial import (
    armature_about_o,
    cholesky_solve6,
    com_force_to_o,
    fcross,
    inertia_matrix,
    mcross,
    root_column,
    root_motion,
)
from ..math.tree_ldl import PIVOT_ABS, PIVOT_REL
from .rnea import gen_vec3

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)


@wp.func
def aba_env(
    tree: Tree,
    kin: Kin,
    sc: Scratch,
    gen_v: wp.array2d(dtype=float),
    gen_f: wp.array2d(dtype=float),
    link_fext: wp.array2d(dtype=wp.spatial_vector),
    gravity: wp.vec3,
    use_fext: int,
    gen_a: wp.array2d(dtype=float),
    env: int,
    regularize: int,
) -> None:
    """gen_a = ABA(q, gen_v, gen_f); link accelerations are left in sc.link_a. Each tree of a forest is solved on
    its own (its root is a link without parent)."""
    g = wp.spatial_vector(wp.vec3(0.0), gravity)
    # outward: velocities, velocity-product accelerations, isolated inertias and bias forces
    for i in range(tree.link_count):
        p = tree.link_parent[i]
        v = wp.spatial_vector()
        c = wp.spatial_vector()
        if p < 0:
            rg = tree.link_root_gen[i]
            if rg >= 0:
                vl = gen_vec3(gen_v, env, rg)
                w = gen_vec3(gen_v, env, rg + 3)
                v = root_motion(kin.link_com[env, i], vl, w)
                c = wp.spatial_vector(wp.vec3(0.0), -wp.cross(w, vl))
        else:
            vj = wp.spatial_vector()
            for k in range(tree.joint_dof_count[i]):
                d = tree.joint_dof_start[i] + k
                vj += kin.dof_motion[env, d] * gen_v[env, tree.dof_gen[d]]
            v = sc.link_v[env, p] + vj
            c = mcross(v, vj)
        sc.link_v[env, i] = v
        sc.link_c[env, i] = c
        inertia = inertia_matrix(tree.link_mass[i], tree.link_mass[i] * kin.link_com[env, i], kin.link_inertia[env, i])
        pa = -(inertia * g)
        if p < 0 and tree.link_root_armature[i] > 0.0:  # a floating root's armature: inertia without weight
            ar = tree.link_root_armature[i]
            p0 = kin.link_origin[env, i]
            inertia += inertia_matrix(ar, ar * p0, armature_about_o(ar, p0))
        sc.link_ia[env, i] = inertia
        pa += fcross(v, inertia * v)
        if use_fext != 0:
            pa -= com_force_to_o(kin.link_com[env, i], link_fext[env, i])
        sc.link_f[env, i] = pa
    # inward: articulated inertias and bias forces
    for ii in range(tree.link_count):
        i = tree.link_count - 1 - ii
        p = tree.link_parent[i]
        if p < 0:
            continue
        ia = sc.link_ia[env, i]
        pa = sc.link_f[env, i]
        nd = tree.joint_dof_count[i]
        d0 = tree.joint_dof_start[i]
        dmat = wp.identity(n=3, dtype=float)
        u = wp.vec3(0.0)
        for k in range(nd):
            uk = ia * kin.dof_motion[env, d0 + k]
            sc.dof_u[env, d0 + k] = uk
            u[k] = gen_f[env, tree.dof_gen[d0 + k]] - wp.dot(kin.dof_motion[env, d0 + k], pa)
            for kk in range(nd):
                dmat[kk, k] = wp.dot(kin.dof_motion[env, d0 + kk], uk)
            dmat[k, k] = dmat[k, k] + tree.dof_armature[d0 + k]
        if regularize != 0 and wp.determinant(dmat) <= 0.0:
            # the step's pivot floor (math/dense.py): a D that float32 rounds to singular gets a small inertia
            dmat += wp.identity(n=3, dtype=float) * (PIVOT_ABS + PIVOT_REL * wp.trace(dmat))
        dinv = wp.inverse(dmat)
        if wp.determinant(dmat) <= 0.0:
            dinv = wp.mat33(wp.nan)  # Warp's inverse returns zeros for a singular D: make it visible to the host
        sc.link_dinv[env, i] = dinv
        sc.link_u[env, i] = u
        ia_child = ia
        for k in range(nd):
            for kk in range(nd):
                ia_child -= wp.outer(sc.dof_u[env, d0 + k], sc.dof_u[env, d0 + kk]) * dinv[k, kk]
        pa_child = pa + ia_child * sc.link_c[env, i]
        for k in range(nd):
            for kk in range(nd):
                pa_child += sc.dof_u[env, d0 + k] * (dinv[k, kk] * u[kk])
        sc.link_ia[env, p] = sc.link_ia[env, p] + ia_child
        sc.link_f[env, p] = sc.link_f[env, p] + pa_child
    # outward: accelerations (a floating root solves its 6x6 system first)
    for i in range(tree.link_count):
        p = tree.link_parent[i]
        if p < 0:
            a0 = wp.spatial_vector()
            rg = tree.link_root_gen[i]
            if rg >= 0:
                c0 = kin.link_com[env, i]
                ia0 = sc.link_ia[env, i]
                bias = sc.link_f[env, i] + ia0 * sc.link_c[env, i]
                dm = wp.spatial_matrix()
                rhs = wp.spatial_vector()
                for cc in range(6):
                    col = ia0 * root_column(c0, cc)
                    rhs[cc] = gen_f[env, rg + cc] - wp.dot(root_column(c0, cc), bias)
                    for r in range(6):
                        dm[r, cc] = wp.dot(root_column(c0, r), col)
                nu = cholesky_solve6(dm, rhs)
                for k in range(6):
                    gen_a[env, rg + k] = nu[k]
                a0 = root_motion(c0, wp.vec3(nu[0], nu[1], nu[2]), wp.vec3(nu[3], nu[4], nu[5])) + sc.link_c[env, i]
            sc.link_a[env, i] = a0
            continue
        a = sc.link_a[env, p] + sc.link_c[env, i]
        nd = tree.joint_dof_count[i]
        d0 = tree.joint_dof_start[i]
        if nd > 0:
            rhs_j = sc.link_u[env, i]
            for k in range(nd):
                rhs_j[k] = rhs_j[k] - wp.dot(sc.dof_u[env, d0 + k], a)
            qdd = sc.link_dinv[env, i] * rhs_j
            for k in range(nd):
                gen_a[env, tree.dof_gen[d0 + k]] = qdd[k]
                a += kin.dof_motion[env, d0 + k] * qdd[k]
        sc.link_a[env, i] = a


@wp.kernel
def _aba(
    env_offset: int,
    tree: Tree,
    kin: Kin,
    sc: Scratch,
    gen_v: wp.array2d(dtype=float),
    gen_f: wp.array2d(dtype=float),
    link_fext: wp.array2d(dtype=wp.spatial_vector),
    gravity: wp.vec3,
    use_fext: int,
    gen_a: wp.array2d(dtype=float),
):
    aba_env(tree, kin, sc, gen_v, gen_f, link_fext, gravity, use_fext, gen_a, env_offset + wp.tid(), 0)


def aba(model: ArticulationModel, data: ArticulationData, gravity: tuple[float, float, float], use_fext: bool) -> None:
    """data.gen_a = ABA(q, data.gen_v, data.gen_f) with `gravity` and, if asked, data.link_fext."""
    launch_envs(
        _aba,
        data.gen_a.shape[0],
        [
            model.tree,
            data.kin,
            data.scratch,
            data.gen_v,
            data.gen_f,
            data.link_fext,
            wp.vec3(*gravity),
            int(use_fext),
            data.gen_a,
        ],
        data.gen_a.device,
    )
