"""Position integration of one step or TGS substep (physx-notes 7.1 and 9.3).

Revolute and prismatic positions advance by qdot h; REVOLUTE positions then wrap by 4 pi into [-2 pi, 2 pi] (PhysX's
rule, not 2 pi). A spherical joint's relative rotation is advanced by its angular velocity (components about the
child joint frame's axes) and its positions are recomputed as the rotation-vector components along the free axes.
A floating root's COM advances by v_c h and its orientation by exp(w h), world frame.
"""

from __future__ import annotations

import warp as wp

from ..core.model import JOINT_REVOLUTE, JOINT_SPHERICAL, Tree
from ..math.spatial import unit
from .kinematics import joint_rotation_vector, quat_exp

_TWO_PI = wp.constant(6.283185307179586)


@wp.func
def quat_log(q: wp.quat) -> wp.vec3:
    """Rotation vector of a unit quaternion, angle in [0, pi]."""
    w = q[3]
    v = wp.vec3(q[0], q[1], q[2])
    if w < 0.0:
        w = -w
        v = -v
    s = wp.length(v)
    if s < 1.0e-12:
        return 2.0 * v
    return v * (2.0 * wp.atan2(s, w) / s)


@wp.func
def wrap_revolute(q: float) -> float:
    if q > _TWO_PI:
        q -= 2.0 * _TWO_PI
    elif q < -_TWO_PI:
        q += 2.0 * _TWO_PI
    return wp.clamp(q, -2.0 * _TWO_PI, 2.0 * _TWO_PI)


@wp.func
def integrate_positions(
    tree: Tree,
    joint_q: wp.array2d(dtype=float),
    root_pose: wp.array2d(dtype=wp.transform),
    gen_v: wp.array2d(dtype=float),
    dof_dq: wp.array2d(dtype=float),
    h: float,
    env: int,
) -> None:
    """Advance q and the floating roots (root_pose: (E, T)) by h with the velocities gen_v; accumulate each dof's
    change in dof_dq."""
    for i in range(tree.link_count):
        if tree.link_parent[i] < 0:
            rg = tree.link_root_gen[i]
            if rg >= 0:
                t = tree.link_tree[i]
                x = root_pose[env, t]
                rot = wp.transform_get_rotation(x)
                com = wp.transform_point(x, tree.link_com_local[i])
                com += wp.vec3(gen_v[env, rg], gen_v[env, rg + 1], gen_v[env, rg + 2]) * h
                rot = wp.normalize(
                    quat_exp(wp.vec3(gen_v[env, rg + 3], gen_v[env, rg + 4], gen_v[env, rg + 5]) * h) * rot
                )
                root_pose[env, t] = wp.transform(com - wp.quat_rotate(rot, tree.link_com_local[i]), rot)
            continue
        nd = tree.joint_dof_count[i]
        d0 = tree.joint_dof_start[i]
        if nd == 0:
            continue
        if tree.joint_type[i] == JOINT_SPHERICAL:
            rel = quat_exp(joint_rotation_vector(joint_q, env, d0, nd, tree.dof_axis))
            w = wp.vec3(0.0)
            for k in range(nd):
                w += unit(tree.dof_axis[d0 + k]) * gen_v[env, tree.dof_gen[d0 + k]]
            rv = quat_log(wp.normalize(rel * quat_exp(w * h)))
            for k in range(nd):
                d = d0 + k
                new_q = rv[tree.dof_axis[d]]
                dof_dq[env, d] = dof_dq[env, d] + gen_v[env, tree.dof_gen[d]] * h
                joint_q[env, d] = new_q
        else:
            d = d0
            qd = gen_v[env, tree.dof_gen[d]]
            q = joint_q[env, d] + qd * h
            if tree.joint_type[i] == JOINT_REVOLUTE:
                q = wrap_revolute(q)
            joint_q[env, d] = q
            dof_dq[env, d] = dof_dq[env, d] + qd * h
