"""Dense Jacobian J(q): link COM velocities (linear, angular; world) from generalized velocities.

Rows are links in low-level order (the root skipped when the base is fixed), six per link; columns the generalized
dofs (physx-notes 6.2). Column d of link i's block is the motion column S_d of an ancestor dof, moved from O to the
link COM c_i: (s_lin + s_ang x c_i, s_ang).
"""

import warp as wp

from ..data import Kin
from ..math.spatial import root_column
from ..model import JOINT_FREE_ROOT, Tree
from ..parallel import launch_envs

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time


@wp.func
def _put(jac: wp.array3d(dtype=float), env: int, row: int, col: int, s: wp.spatial_vector, c: wp.vec3):
    w = wp.spatial_top(s)
    lin = wp.spatial_bottom(s) + wp.cross(w, c)
    for k in range(3):
        jac[env, row + k, col] = lin[k]
        jac[env, row + 3 + k, col] = w[k]


@wp.kernel
def _dense_jacobian(
    env_offset: int,
    tree: Tree,
    kin: Kin,
    jac: wp.array3d(dtype=float),
):
    env = env_offset + wp.tid()
    floating = tree.joint_type[0] == JOINT_FREE_ROOT
    off = 0
    first = 1
    if floating:
        off = 6
        first = 0
    for r in range(jac.shape[1]):
        for c in range(jac.shape[2]):
            jac[env, r, c] = 0.0
    c0 = kin.link_com[env, 0]
    for i in range(first, tree.link_count):
        row = 6 * (i - first)
        ci = kin.link_com[env, i]
        j = i
        while j > 0:
            for k in range(tree.joint_dof_count[j]):
                d = tree.joint_dof_start[j] + k
                _put(jac, env, row, off + d, kin.dof_motion[env, d], ci)
            j = tree.link_parent[j]
        if floating:
            for k in range(6):
                _put(jac, env, row, k, root_column(c0, k), ci)


def dense_jacobian(model, data):
    """J(q) into data.jacobian; needs forward_kinematics first."""
    launch_envs(_dense_jacobian, data.jacobian.shape[0], [model.tree, data.kin, data.jacobian], data.jacobian.device)
