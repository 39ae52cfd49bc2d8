"""Dense Jacobian J(q): link COM velocities (linear, angular; world) from generalized velocities.

Rows are links in low-level order (the root skipped when the base is fixed), six per link; columns the generalized
dofs (physx-notes 6.2). Column d of link i's block is the motion column S_d of an ancestor dof, moved from O to the
link COM c_i: (s_lin + s_ang x c_i, s_ang).
"""

from __future__ import annotations

import warp as wp

from ..core.data import ArticulationData, Kin
from ..core.model import ArticulationModel, Tree
from ..core.parallel import launch_envs
from ..core.struct_refs import opt_in as _struct_refs
from ..math.spatial import root_column

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)


@wp.func
def _put(jac: wp.array3d(dtype=float), env: int, row: int, col: int, s: wp.spatial_vector, c: wp.vec3) -> None:
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
    first = 1  # one articulation: rows for every link but a fixed root
    if tree.link_root_gen[0] >= 0:
        first = 0
    for r in range(jac.shape[1]):
        for c in range(jac.shape[2]):
            jac[env, r, c] = 0.0
    for i in range(first, tree.link_count):
        row = 6 * (i - first)
        ci = kin.link_com[env, i]
        j = i
        while tree.link_parent[j] >= 0:
            for k in range(tree.joint_dof_count[j]):
                d = tree.joint_dof_start[j] + k
                _put(jac, env, row, tree.dof_gen[d], kin.dof_motion[env, d], ci)
            j = tree.link_parent[j]
        rg = tree.link_root_gen[j]
        if rg >= 0:
            for k in range(6):
                _put(jac, env, row, rg + k, root_column(kin.link_com[env, j], k), ci)


def dense_jacobian(model: ArticulationModel, data: ArticulationData) -> None:
    """J(q) into data.jacobian; needs forward_kinematics first."""
    launch_envs(_dense_jacobian, data.jacobian.shape[0], [model.tree, data.kin, data.jacobian], data.jacobian.device)
