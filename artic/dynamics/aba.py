"""Articulated-body algorithm: forward dynamics a = M^-1 (tau - C v - g + J^T f_ext) in O(n) (Featherstone, ch. 7.3).

Multi-dof joints (spherical, up to 3 dofs) use 3x3 joint-space inertias D = S^T I^A S; unused rows are padded
with the identity so one 3x3 inverse serves 1, 2 and 3 dofs. Armature adds to D's diagonal. Gravity enters as an
external force -I (0, g) on every link so that the floating root needs no special case; the floating root solves
its 6x6 system by Cholesky in the root's generalized coordinates (COM linear, angular).
"""

import warp as wp

from ..math.spatial import cholesky_solve6, com_force_to_o, fcross, inertia_matrix, mcross, root_column, root_motion
from ..model import JOINT_FREE_ROOT, Tree

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time


@wp.kernel
def _aba(
    tree: Tree,
    link_com: wp.array2d(dtype=wp.vec3),
    link_inertia: wp.array2d(dtype=wp.mat33),
    dof_motion: wp.array2d(dtype=wp.spatial_vector),
    gen_v: wp.array2d(dtype=float),
    gen_f: wp.array2d(dtype=float),
    link_fext: wp.array2d(dtype=wp.spatial_vector),
    gravity: wp.vec3,
    use_fext: int,
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_c: wp.array2d(dtype=wp.spatial_vector),
    link_ia: wp.array2d(dtype=wp.spatial_matrix),
    link_pa: wp.array2d(dtype=wp.spatial_vector),
    dof_u: wp.array2d(dtype=wp.spatial_vector),
    link_dinv: wp.array2d(dtype=wp.mat33),
    link_u: wp.array2d(dtype=wp.vec3),
    link_a: wp.array2d(dtype=wp.spatial_vector),
    gen_a: wp.array2d(dtype=float),
):
    env = wp.tid()
    floating = tree.joint_type[0] == JOINT_FREE_ROOT
    off = 0
    if floating:
        off = 6
    g = wp.spatial_vector(wp.vec3(0.0), gravity)
    c0 = link_com[env, 0]
    vl = wp.vec3(0.0)
    w = wp.vec3(0.0)
    if floating:
        vl = wp.vec3(gen_v[env, 0], gen_v[env, 1], gen_v[env, 2])
        w = wp.vec3(gen_v[env, 3], gen_v[env, 4], gen_v[env, 5])
    # outward: velocities, velocity-product accelerations, isolated inertias and bias forces
    for i in range(tree.link_count):
        v = root_motion(c0, vl, w)
        c = wp.spatial_vector(wp.vec3(0.0), -wp.cross(w, vl))
        if i > 0:
            vj = wp.spatial_vector()
            for k in range(tree.joint_dof_count[i]):
                d = tree.joint_dof_start[i] + k
                vj += dof_motion[env, d] * gen_v[env, off + d]
            v = link_v[env, tree.link_parent[i]] + vj
            c = mcross(v, vj)
        link_v[env, i] = v
        link_c[env, i] = c
        inertia = inertia_matrix(tree.link_mass[i], tree.link_mass[i] * link_com[env, i], link_inertia[env, i])
        link_ia[env, i] = inertia
        pa = fcross(v, inertia * v) - inertia * g
        if use_fext != 0:
            pa -= com_force_to_o(link_com[env, i], link_fext[env, i])
        link_pa[env, i] = pa
    # inward: articulated inertias and bias forces
    for ii in range(tree.link_count - 1):
        i = tree.link_count - 1 - ii
        ia = link_ia[env, i]
        pa = link_pa[env, i]
        nd = tree.joint_dof_count[i]
        d0 = tree.joint_dof_start[i]
        dmat = wp.identity(n=3, dtype=float)
        u = wp.vec3(0.0)
        for k in range(nd):
            uk = ia * dof_motion[env, d0 + k]
            dof_u[env, d0 + k] = uk
            u[k] = gen_f[env, off + d0 + k] - wp.dot(dof_motion[env, d0 + k], pa)
            for kk in range(nd):
                dmat[kk, k] = wp.dot(dof_motion[env, d0 + kk], uk)
            dmat[k, k] = dmat[k, k] + tree.dof_armature[d0 + k]
        dinv = wp.inverse(dmat)
        if wp.determinant(dmat) <= 0.0:
            dinv = wp.mat33(wp.nan)  # Warp's inverse returns zeros for a singular D: make it visible to the host
        link_dinv[env, i] = dinv
        link_u[env, i] = u
        ia_child = ia
        for k in range(nd):
            for kk in range(nd):
                ia_child -= wp.outer(dof_u[env, d0 + k], dof_u[env, d0 + kk]) * dinv[k, kk]
        pa_child = pa + ia_child * link_c[env, i]
        for k in range(nd):
            for kk in range(nd):
                pa_child += dof_u[env, d0 + k] * (dinv[k, kk] * u[kk])
        p = tree.link_parent[i]
        link_ia[env, p] = link_ia[env, p] + ia_child
        link_pa[env, p] = link_pa[env, p] + pa_child
    # root
    a0 = wp.spatial_vector()
    if floating:
        ia0 = link_ia[env, 0]
        bias = link_pa[env, 0] + ia0 * link_c[env, 0]
        dm = wp.spatial_matrix()
        rhs = wp.spatial_vector()
        for cc in range(6):
            col = ia0 * root_column(c0, cc)
            rhs[cc] = gen_f[env, cc] - wp.dot(root_column(c0, cc), bias)
            for r in range(6):
                dm[r, cc] = wp.dot(root_column(c0, r), col)
        nu = cholesky_solve6(dm, rhs)
        for k in range(6):
            gen_a[env, k] = nu[k]
        a0 = root_motion(c0, wp.vec3(nu[0], nu[1], nu[2]), wp.vec3(nu[3], nu[4], nu[5])) + link_c[env, 0]
    link_a[env, 0] = a0
    # outward: accelerations
    for i in range(1, tree.link_count):
        a = link_a[env, tree.link_parent[i]] + link_c[env, i]
        nd = tree.joint_dof_count[i]
        d0 = tree.joint_dof_start[i]
        if nd > 0:
            rhs_j = link_u[env, i]
            for k in range(nd):
                rhs_j[k] = rhs_j[k] - wp.dot(dof_u[env, d0 + k], a)
            qdd = link_dinv[env, i] * rhs_j
            for k in range(nd):
                gen_a[env, off + d0 + k] = qdd[k]
                a += dof_motion[env, d0 + k] * qdd[k]
        link_a[env, i] = a


def aba(model, data, gravity, use_fext: bool):
    """data.gen_a = ABA(q, data.gen_v, data.gen_f) with `gravity` and, if asked, data.link_fext."""
    m = model
    wp.launch(
        _aba, dim=data.gen_a.shape[0], device=data.gen_a.device,
        inputs=[m.tree, data.link_com, data.link_inertia, data.dof_motion, data.gen_v, data.gen_f, data.link_fext,
                wp.vec3(*gravity), int(use_fext)],
        outputs=[data.link_v, data.link_c, data.link_ia, data.link_f, data.dof_u, data.link_dinv, data.link_u,
                 data.link_a, data.gen_a],
    )
