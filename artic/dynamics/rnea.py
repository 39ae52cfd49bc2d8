"""Recursive Newton-Euler inverse dynamics: tau = M(q) a + C(q, v) v + g(q) - J^T f_ext (Featherstone, ch. 5.3).

Gravity enters as a fictitious base acceleration -g. The floating root's generalized velocity is (COM linear,
angular); its spatial velocity about O is (w, v_c + c x w), and the time derivative of that map adds (0, -w x v_c)
to the root's spatial acceleration. Root generalized forces are (force, torque about the root COM).
"""

from __future__ import annotations

import warp as wp

from ..core.data import ArticulationData, Kin, Scratch
from ..core.model import ArticulationModel, Tree
from ..core.parallel import launch_envs
from ..core.struct_refs import opt_in as _struct_refs
from ..math.spatial import armature_about_o, com_force_to_o, fcross, inertia_mul, mcross, root_motion

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)


@wp.func
def gen_vec3(gen: wp.array2d(dtype=float), env: int, k: int) -> wp.vec3:
    return wp.vec3(gen[env, k], gen[env, k + 1], gen[env, k + 2])


@wp.func
def rnea_env(
    tree: Tree,
    kin: Kin,
    sc: Scratch,
    gen_v: wp.array2d(dtype=float),
    gen_a: wp.array2d(dtype=float),
    link_fext: wp.array2d(dtype=wp.spatial_vector),
    gravity: wp.vec3,
    use_fext: int,
    gen_f: wp.array2d(dtype=float),
    env: int,
) -> None:
    """gen_f = RNEA(q, gen_v, gen_a); also leaves link velocities, accelerations and the forces transmitted across
    each inbound joint (about O) in sc.link_v, sc.link_a, sc.link_f."""
    for i in range(tree.link_count):
        p = tree.link_parent[i]
        v = wp.spatial_vector()
        a = wp.spatial_vector(wp.vec3(0.0), -gravity)
        if p < 0:
            rg = tree.link_root_gen[i]
            if rg >= 0:
                c0 = kin.link_com[env, i]
                vl = gen_vec3(gen_v, env, rg)
                w = gen_vec3(gen_v, env, rg + 3)
                v = root_motion(c0, vl, w)
                a += root_motion(c0, gen_vec3(gen_a, env, rg), gen_vec3(gen_a, env, rg + 3))
                a += wp.spatial_vector(wp.vec3(0.0), -wp.cross(w, vl))
        else:
            vj = wp.spatial_vector()
            aj = wp.spatial_vector()
            for k in range(tree.joint_dof_count[i]):
                d = tree.joint_dof_start[i] + k
                s = kin.dof_motion[env, d]
                vj += s * gen_v[env, tree.dof_gen[d]]
                aj += s * gen_a[env, tree.dof_gen[d]]
            v = sc.link_v[env, p] + vj
            a = sc.link_a[env, p] + aj + mcross(v, vj)
        sc.link_v[env, i] = v
        sc.link_a[env, i] = a
        mass = tree.link_mass[i]
        h = mass * kin.link_com[env, i]
        j = kin.link_inertia[env, i]
        f = inertia_mul(mass, h, j, a) + fcross(v, inertia_mul(mass, h, j, v))
        if p < 0 and tree.link_root_armature[i] > 0.0:  # a floating root's armature: inertia without weight
            ar = tree.link_root_armature[i]
            p0 = kin.link_origin[env, i]
            ja = armature_about_o(ar, p0)
            a_true = a - wp.spatial_vector(wp.vec3(0.0), -gravity)  # a carries the base's fictitious -g
            f += inertia_mul(ar, ar * p0, ja, a_true) + fcross(v, inertia_mul(ar, ar * p0, ja, v))
        if use_fext != 0:
            f -= com_force_to_o(kin.link_com[env, i], link_fext[env, i])
        sc.link_f[env, i] = f
    for ii in range(tree.link_count):
        i = tree.link_count - 1 - ii
        f = sc.link_f[env, i]
        p = tree.link_parent[i]
        if p >= 0:
            for k in range(tree.joint_dof_count[i]):
                d = tree.joint_dof_start[i] + k
                gd = tree.dof_gen[d]
                gen_f[env, gd] = wp.dot(kin.dof_motion[env, d], f) + tree.dof_armature[d] * gen_a[env, gd]
            sc.link_f[env, p] = sc.link_f[env, p] + f
        elif tree.link_root_gen[i] >= 0:
            rg = tree.link_root_gen[i]
            force = wp.spatial_bottom(f)
            torque = wp.spatial_top(f) - wp.cross(kin.link_com[env, i], force)
            for k in range(3):
                gen_f[env, rg + k] = force[k]
                gen_f[env, rg + 3 + k] = torque[k]


@wp.kernel
def _rnea(
    env_offset: int,
    tree: Tree,
    kin: Kin,
    sc: Scratch,
    gen_v: wp.array2d(dtype=float),
    gen_a: wp.array2d(dtype=float),
    link_fext: wp.array2d(dtype=wp.spatial_vector),
    gravity: wp.vec3,
    use_fext: int,
    gen_f: wp.array2d(dtype=float),
):
    rnea_env(tree, kin, sc, gen_v, gen_a, link_fext, gravity, use_fext, gen_f, env_offset + wp.tid())


def rnea(model: ArticulationModel, data: ArticulationData, gravity: tuple[float, float, float], use_fext: bool) -> None:
    """data.gen_f = RNEA(q, data.gen_v, data.gen_a) with `gravity` and, if asked, data.link_fext."""
    launch_envs(
        _rnea,
        data.gen_f.shape[0],
        [
            model.tree,
            data.kin,
            data.scratch,
            data.gen_v,
            data.gen_a,
            data.link_fext,
            wp.vec3(*gravity),
            int(use_fext),
            data.gen_f,
        ],
        data.gen_f.device,
    )
