"""Forward kinematics: link poses and velocities, and the per-env quantities the other algorithms share.

For each link i with parent p: X_i = X_p * parent_pose * J(q) * child_pose^-1, where J(q) is a rotation about the
joint frame's axis (revolute), a translation along it (prismatic) or PxExp of the rotation vector (spherical);
physx-notes 7.1 ("Gp Lp J = Gc Lc"). The motion subspace column of an angular dof is (u, (a - O) x u) and of a linear
dof (0, u), with u the child joint frame's axis in the world and a its origin (Featherstone, ch. 4).
"""

from __future__ import annotations

import warp as wp

from ..core.data import ArticulationData, Kin
from ..core.model import JOINT_PRISMATIC, JOINT_SPHERICAL, ArticulationModel, Tree
from ..core.parallel import launch_envs
from ..core.state import ArticulationState
from ..core.struct_refs import opt_in as _struct_refs
from ..math.spatial import root_motion, unit

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)


@wp.func
def joint_rotation_vector(
    q: wp.array2d(dtype=float), env: int, dof0: int, ndof: int, dof_axis: wp.array(dtype=int)
) -> wp.vec3:
    """Sum of q_k e_k over a joint's angular dofs (PhysX's PxExp argument)."""
    rv = wp.vec3(0.0)
    for k in range(ndof):
        rv += unit(dof_axis[dof0 + k]) * q[env, dof0 + k]
    return rv


@wp.func
def quat_exp(rv: wp.vec3) -> wp.quat:
    angle = wp.length(rv)
    if angle < 1.0e-12:
        return wp.quat_identity()
    return wp.quat_from_axis_angle(rv / angle, angle)


@wp.func
def joint_transform(
    jtype: int, q: wp.array2d(dtype=float), env: int, dof0: int, ndof: int, dof_axis: wp.array(dtype=int)
) -> wp.transform:
    """J(q): the child joint frame relative to the parent joint frame."""
    if ndof == 0:
        return wp.transform_identity()
    if jtype == JOINT_PRISMATIC:
        return wp.transform(unit(dof_axis[dof0] - 3) * q[env, dof0], wp.quat_identity())
    if jtype == JOINT_SPHERICAL:
        return wp.transform(wp.vec3(0.0), quat_exp(joint_rotation_vector(q, env, dof0, ndof, dof_axis)))
    return wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(unit(dof_axis[dof0]), q[env, dof0]))


@wp.func
def world_inertia_about_o(q: wp.quat, d: wp.vec3, mass: float, c: wp.vec3) -> wp.mat33:
    """R diag(d) R^T + m (|c|^2 1 - c c^T), R the world axes of the principal frame, written out entry by entry
    (symmetric: six distinct entries); Warp's generic outer/matmul expressions cost twice as much on the CPU."""
    r = wp.quat_to_matrix(q)
    a0 = r[0, 0] * d[0]
    a1 = r[0, 1] * d[1]
    a2 = r[0, 2] * d[2]
    b0 = r[1, 0] * d[0]
    b1 = r[1, 1] * d[1]
    b2 = r[1, 2] * d[2]
    cc = wp.dot(c, c)
    xx = a0 * r[0, 0] + a1 * r[0, 1] + a2 * r[0, 2] + mass * (cc - c[0] * c[0])
    xy = a0 * r[1, 0] + a1 * r[1, 1] + a2 * r[1, 2] - mass * c[0] * c[1]
    xz = a0 * r[2, 0] + a1 * r[2, 1] + a2 * r[2, 2] - mass * c[0] * c[2]
    yy = b0 * r[1, 0] + b1 * r[1, 1] + b2 * r[1, 2] + mass * (cc - c[1] * c[1])
    yz = b0 * r[2, 0] + b1 * r[2, 1] + b2 * r[2, 2] - mass * c[1] * c[2]
    zz = r[2, 0] * d[0] * r[2, 0] + r[2, 1] * d[1] * r[2, 1] + r[2, 2] * d[2] * r[2, 2] + mass * (cc - c[2] * c[2])
    return wp.mat33(xx, xy, xz, xy, yy, yz, xz, yz, zz)


@wp.func
def _link_pose(
    tree: Tree,
    joint_q: wp.array2d(dtype=float),
    root_pose: wp.array2d(dtype=wp.transform),
    link_pose: wp.array2d(dtype=wp.transform),
    env: int,
    i: int,
) -> tuple[wp.transform, wp.transform]:
    """(pose of link i, its child joint frame) from its parent's pose in link_pose (a root's: its actor pose)."""
    x = root_pose[env, tree.link_tree[i]]
    xj = x  # the child joint frame (unused for a root)
    p = tree.link_parent[i]
    if p >= 0:
        jx = joint_transform(
            tree.joint_type[i], joint_q, env, tree.joint_dof_start[i], tree.joint_dof_count[i], tree.dof_axis
        )
        xj = link_pose[env, p] * tree.joint_parent_pose[i] * jx
        x = xj * tree.joint_child_pose_inv[i]
    return x, xj


@wp.func
def _motion_columns(tree: Tree, kin: Kin, xj: wp.transform, o: wp.vec3, env: int, i: int) -> None:
    """The motion subspace columns of link i's inbound joint, whose child joint frame is xj (world)."""
    a = wp.transform_get_translation(xj) - o
    for k in range(tree.joint_dof_count[i]):
        d = tree.joint_dof_start[i] + k
        ax = tree.dof_axis[d]
        if ax < 3:
            u = wp.transform_vector(xj, unit(ax))
            kin.dof_motion[env, d] = wp.spatial_vector(u, wp.cross(a, u))
        else:
            kin.dof_motion[env, d] = wp.spatial_vector(wp.vec3(0.0), wp.transform_vector(xj, unit(ax - 3)))


@wp.func
def forward_kinematics_env(
    tree: Tree,
    joint_q: wp.array2d(dtype=float),
    root_pose: wp.array2d(dtype=wp.transform),
    link_pose: wp.array2d(dtype=wp.transform),
    kin: Kin,
    env: int,
) -> None:
    """Link poses, O (the first tree's root origin), link COMs and inertias about O, and motion columns of one env.
    root_pose: (E, T), one actor pose per tree."""
    o = wp.transform_get_translation(root_pose[env, 0])
    kin.origin[env] = o
    for i in range(tree.link_count):
        x, xj = _link_pose(tree, joint_q, root_pose, link_pose, env, i)
        link_pose[env, i] = x
        c = wp.transform_point(x, tree.link_com_local[i]) - o
        kin.link_com[env, i] = c
        kin.link_origin[env, i] = wp.transform_get_translation(x) - o
        kin.link_inertia[env, i] = world_inertia_about_o(
            wp.transform_get_rotation(x) * tree.link_com_rot[i], tree.link_principal_inertia[i], tree.link_mass[i], c
        )
        if tree.link_parent[i] >= 0:
            _motion_columns(tree, kin, xj, o, env, i)


@wp.func
def frame_kinematics_env(
    tree: Tree,
    joint_q: wp.array2d(dtype=float),
    root_pose: wp.array2d(dtype=wp.transform),
    link_pose: wp.array2d(dtype=wp.transform),
    kin: Kin,
    env: int,
) -> None:
    """forward_kinematics_env without the inertias (kin.link_inertia and link_origin are left alone): what a
    Jacobian needs, for the body joints' rows after each TGS substep."""
    o = wp.transform_get_translation(root_pose[env, 0])
    kin.origin[env] = o
    for i in range(tree.link_count):
        x, xj = _link_pose(tree, joint_q, root_pose, link_pose, env, i)
        link_pose[env, i] = x
        kin.link_com[env, i] = wp.transform_point(x, tree.link_com_local[i]) - o
        if tree.link_parent[i] >= 0:
            _motion_columns(tree, kin, xj, o, env, i)


@wp.func
def link_velocities_env(
    tree: Tree,
    kin: Kin,
    qd: wp.array2d(dtype=float),
    generalized: int,
    root_lin: wp.array2d(dtype=wp.vec3),
    root_ang: wp.array2d(dtype=wp.vec3),
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_velocity: wp.array2d(dtype=wp.spatial_vector),
    env: int,
) -> None:
    """Internal spatial velocities (link_v) and public COM velocities (link_velocity) of one env. With
    `generalized` set, qd is a generalized vector (roots and joints at their generalized indices); otherwise it is
    the joint state and the floating roots' velocities come from root_lin/root_ang (E, T)."""
    for i in range(tree.link_count):
        v = wp.spatial_vector()
        p = tree.link_parent[i]
        if p < 0:
            rg = tree.link_root_gen[i]
            if rg >= 0:
                t = tree.link_tree[i]
                lin = root_lin[env, t]
                ang = root_ang[env, t]
                if generalized != 0:
                    lin = wp.vec3(qd[env, rg], qd[env, rg + 1], qd[env, rg + 2])
                    ang = wp.vec3(qd[env, rg + 3], qd[env, rg + 4], qd[env, rg + 5])
                v = root_motion(kin.link_com[env, i], lin, ang)
        else:
            v = link_v[env, p]
            for k in range(tree.joint_dof_count[i]):
                d = tree.joint_dof_start[i] + k
                col = d
                if generalized != 0:
                    col = tree.dof_gen[d]
                v += kin.dof_motion[env, d] * qd[env, col]
        link_v[env, i] = v
        w = wp.spatial_top(v)
        link_velocity[env, i] = wp.spatial_vector(wp.spatial_bottom(v) + wp.cross(w, kin.link_com[env, i]), w)


@wp.func
def link_bias_accelerations_env(
    tree: Tree, link_c: wp.array2d(dtype=wp.spatial_vector), out: wp.array2d(dtype=wp.spatial_vector), env: int
) -> None:
    """Each link's spatial acceleration about O with every generalized acceleration zero (J-dot q-dot): the sum of
    the velocity-product accelerations c (link_c, as ABA leaves them: v_i x (S_i q-dot_i), a floating root's
    (0, -w x v_com)) down its chain."""
    for i in range(tree.link_count):
        a = link_c[env, i]
        p = tree.link_parent[i]
        if p >= 0:
            a += out[env, p]
        out[env, i] = a


@wp.kernel
def _forward_kinematics(
    env_offset: int,
    tree: Tree,
    joint_q: wp.array2d(dtype=float),
    root_pose: wp.array2d(dtype=wp.transform),
    link_pose: wp.array2d(dtype=wp.transform),
    kin: Kin,
):
    forward_kinematics_env(tree, joint_q, root_pose, link_pose, kin, env_offset + wp.tid())


@wp.kernel
def _link_velocities(
    env_offset: int,
    tree: Tree,
    kin: Kin,
    joint_qd: wp.array2d(dtype=float),
    root_lin_vel: wp.array2d(dtype=wp.vec3),
    root_ang_vel: wp.array2d(dtype=wp.vec3),
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_velocity: wp.array2d(dtype=wp.spatial_vector),
):
    env = env_offset + wp.tid()
    link_velocities_env(tree, kin, joint_qd, 0, root_lin_vel, root_ang_vel, link_v, link_velocity, env)


def forward_kinematics(model: ArticulationModel, state: ArticulationState, data: ArticulationData) -> None:
    """Link poses (State) and the shared per-env quantities (Data.kin) from q and the root pose."""
    launch_envs(
        _forward_kinematics,
        state.joint_q.shape[0],
        [model.tree, state.joint_q, state.root_pose, state.link_pose, data.kin],
        state.joint_q.device,
    )


def link_velocities(model: ArticulationModel, state: ArticulationState, data: ArticulationData) -> None:
    """Link COM velocities (State) from joint and root velocities; needs forward_kinematics first."""
    launch_envs(
        _link_velocities,
        state.joint_qd.shape[0],
        [
            model.tree,
            data.kin,
            state.joint_qd,
            state.root_lin_vel,
            state.root_ang_vel,
            data.link_v,
            state.link_velocity,
        ],
        state.joint_qd.device,
    )
