"""Forward kinematics: link poses and velocities, and the per-env quantities the other algorithms share.

For each link i with parent p: X_i = X_p * parent_pose * J(q) * child_pose^-1, where J(q) is a rotation about the
joint frame's axis (revolute), a translation along it (prismatic) or PxExp of the rotation vector (spherical);
physx-notes 7.1 ("Gp Lp J = Gc Lc"). The motion subspace column of an angular dof is (u, (a - O) x u) and of a linear
dof (0, u), with u the child joint frame's axis in the world and a its origin (Featherstone, ch. 4).
"""

import warp as wp

from ..math.spatial import root_motion, spatial_inertia, unit
from ..model import JOINT_FREE_ROOT, JOINT_PRISMATIC, JOINT_SPHERICAL


@wp.func
def joint_transform(jtype: int, q: wp.array2d(dtype=float), env: int, dof0: int, ndof: int,
                    dof_axis: wp.array(dtype=int)):
    """J(q): the child joint frame relative to the parent joint frame."""
    if ndof == 0:
        return wp.transform_identity()
    if jtype == JOINT_PRISMATIC:
        return wp.transform(unit(dof_axis[dof0] - 3) * q[env, dof0], wp.quat_identity())
    if jtype == JOINT_SPHERICAL:
        rv = wp.vec3(0.0)
        for k in range(ndof):
            rv += unit(dof_axis[dof0 + k]) * q[env, dof0 + k]
        angle = wp.length(rv)
        if angle < 1.0e-12:
            return wp.transform_identity()
        return wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(rv / angle, angle))
    return wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(unit(dof_axis[dof0]), q[env, dof0]))


@wp.kernel
def _forward_kinematics(
    link_count: int,
    link_parent: wp.array(dtype=int),
    joint_type: wp.array(dtype=int),
    joint_parent_pose: wp.array(dtype=wp.transform),
    joint_child_pose: wp.array(dtype=wp.transform),
    joint_dof_start: wp.array(dtype=int),
    joint_dof_count: wp.array(dtype=int),
    link_mass: wp.array(dtype=float),
    link_com_local: wp.array(dtype=wp.vec3),
    link_inertia_local: wp.array(dtype=wp.mat33),
    dof_axis: wp.array(dtype=int),
    joint_q: wp.array2d(dtype=float),
    joint_qd: wp.array2d(dtype=float),
    root_pose: wp.array(dtype=wp.transform),
    root_lin_vel: wp.array(dtype=wp.vec3),
    root_ang_vel: wp.array(dtype=wp.vec3),
    # outputs
    link_pose: wp.array2d(dtype=wp.transform),
    link_velocity: wp.array2d(dtype=wp.spatial_vector),
    origin: wp.array(dtype=wp.vec3),
    link_com: wp.array2d(dtype=wp.vec3),
    link_inertia: wp.array2d(dtype=wp.spatial_matrix),
    dof_motion: wp.array2d(dtype=wp.spatial_vector),
    link_v: wp.array2d(dtype=wp.spatial_vector),
):
    env = wp.tid()
    x0 = root_pose[env]
    o = wp.transform_get_translation(x0)
    origin[env] = o
    for i in range(link_count):
        if i == 0:
            x = x0
        else:
            p = link_parent[i]
            d0 = joint_dof_start[i]
            nd = joint_dof_count[i]
            jx = joint_transform(joint_type[i], joint_q, env, d0, nd, dof_axis)
            cp = joint_child_pose[i]
            x = link_pose[env, p] * joint_parent_pose[i] * jx * wp.transform_inverse(cp)
        link_pose[env, i] = x
        rot = wp.quat_to_matrix(wp.transform_get_rotation(x))
        c = wp.transform_point(x, link_com_local[i]) - o
        link_com[env, i] = c
        link_inertia[env, i] = spatial_inertia(link_mass[i], c, rot * link_inertia_local[i] * wp.transpose(rot))
        if i == 0:
            v = wp.spatial_vector()
            if joint_type[0] == JOINT_FREE_ROOT:
                v = root_motion(c, root_lin_vel[env], root_ang_vel[env])
        else:
            xj = x * joint_child_pose[i]
            a = wp.transform_get_translation(xj) - o
            v = link_v[env, link_parent[i]]
            for k in range(joint_dof_count[i]):
                d = joint_dof_start[i] + k
                ax = dof_axis[d]
                s = wp.spatial_vector()
                if ax < 3:
                    u = wp.transform_vector(xj, unit(ax))
                    s = wp.spatial_vector(u, wp.cross(a, u))
                else:
                    s = wp.spatial_vector(wp.vec3(0.0), wp.transform_vector(xj, unit(ax - 3)))
                dof_motion[env, d] = s
                v += s * joint_qd[env, d]
        link_v[env, i] = v
        w = wp.spatial_top(v)
        link_velocity[env, i] = wp.spatial_vector(wp.spatial_bottom(v) + wp.cross(w, c), w)


def forward_kinematics(model, state, data):
    """Update link poses/velocities (State) and the shared per-env quantities (Data) from q, qd and the root."""
    m = model
    wp.launch(
        _forward_kinematics, dim=state.joint_q.shape[0], device=state.joint_q.device,
        inputs=[m.link_count, m.link_parent, m.joint_type, m.joint_parent_pose, m.joint_child_pose,
                m.joint_dof_start, m.joint_dof_count, m.link_mass, m.link_com, m.link_inertia, m.dof_axis,
                state.joint_q, state.joint_qd, state.root_pose, state.root_lin_vel, state.root_ang_vel],
        outputs=[state.link_pose, state.link_velocity, data.origin, data.link_com, data.link_inertia,
                 data.dof_motion, data.link_v],
    )

