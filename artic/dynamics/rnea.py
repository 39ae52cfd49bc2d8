"""Recursive Newton-Euler inverse dynamics: tau = M(q) a + C(q, v) v + g(q) - J^T f_ext (Featherstone, ch. 5.3).

Gravity enters as a fictitious base acceleration -g. The floating root's generalized velocity is (COM linear,
angular); its spatial velocity about O is (w, v_c + c x w), and the time derivative of that map adds (0, -w x v_c)
to the root's spatial acceleration. Root generalized forces are (force, torque about the root COM).
"""

import warp as wp

from ..math.spatial import com_force_to_o, fcross, inertia_mul, mcross, root_motion
from ..model import JOINT_FREE_ROOT, Tree

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time


@wp.kernel
def _rnea(
    tree: Tree,
    link_com: wp.array2d(dtype=wp.vec3),
    link_inertia: wp.array2d(dtype=wp.mat33),
    dof_motion: wp.array2d(dtype=wp.spatial_vector),
    gen_v: wp.array2d(dtype=float),
    gen_a: wp.array2d(dtype=float),
    link_fext: wp.array2d(dtype=wp.spatial_vector),
    gravity: wp.vec3,
    use_fext: int,
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_a: wp.array2d(dtype=wp.spatial_vector),
    link_f: wp.array2d(dtype=wp.spatial_vector),
    gen_f: wp.array2d(dtype=float),
):
    env = wp.tid()
    off = 0
    c0 = link_com[env, 0]
    v0 = wp.spatial_vector()
    a0 = wp.spatial_vector(wp.vec3(0.0), -gravity)
    if tree.joint_type[0] == JOINT_FREE_ROOT:
        off = 6
        vl = wp.vec3(gen_v[env, 0], gen_v[env, 1], gen_v[env, 2])
        w = wp.vec3(gen_v[env, 3], gen_v[env, 4], gen_v[env, 5])
        v0 = root_motion(c0, vl, w)
        a0 += root_motion(c0, wp.vec3(gen_a[env, 0], gen_a[env, 1], gen_a[env, 2]),
                          wp.vec3(gen_a[env, 3], gen_a[env, 4], gen_a[env, 5]))
        a0 += wp.spatial_vector(wp.vec3(0.0), -wp.cross(w, vl))
    for i in range(tree.link_count):
        v = v0
        a = a0
        if i > 0:
            p = tree.link_parent[i]
            vj = wp.spatial_vector()
            aj = wp.spatial_vector()
            for k in range(tree.joint_dof_count[i]):
                d = tree.joint_dof_start[i] + k
                s = dof_motion[env, d]
                vj += s * gen_v[env, off + d]
                aj += s * gen_a[env, off + d]
            v = link_v[env, p] + vj
            a = link_a[env, p] + aj + mcross(v, vj)
        link_v[env, i] = v
        link_a[env, i] = a
        mass = tree.link_mass[i]
        h = mass * link_com[env, i]
        j = link_inertia[env, i]
        f = inertia_mul(mass, h, j, a) + fcross(v, inertia_mul(mass, h, j, v))
        if use_fext != 0:
            f -= com_force_to_o(link_com[env, i], link_fext[env, i])
        link_f[env, i] = f
    for ii in range(tree.link_count - 1):
        i = tree.link_count - 1 - ii
        f = link_f[env, i]
        for k in range(tree.joint_dof_count[i]):
            d = tree.joint_dof_start[i] + k
            gen_f[env, off + d] = wp.dot(dof_motion[env, d], f) + tree.dof_armature[d] * gen_a[env, off + d]
        p = tree.link_parent[i]
        link_f[env, p] = link_f[env, p] + f
    if off == 6:
        f0 = link_f[env, 0]
        force = wp.spatial_bottom(f0)
        torque = wp.spatial_top(f0) - wp.cross(c0, force)
        for k in range(3):
            gen_f[env, k] = force[k]
            gen_f[env, 3 + k] = torque[k]


def rnea(model, data, gravity, use_fext: bool):
    """data.gen_f = RNEA(q, data.gen_v, data.gen_a) with `gravity` and, if asked, data.link_fext."""
    m = model
    wp.launch(
        _rnea, dim=data.gen_f.shape[0], device=data.gen_f.device,
        inputs=[m.tree, data.link_com, data.link_inertia, data.dof_motion, data.gen_v, data.gen_a, data.link_fext,
                wp.vec3(*gravity), int(use_fext)],
        outputs=[data.link_v, data.link_a, data.link_f, data.gen_f],
    )
