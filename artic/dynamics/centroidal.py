"""Articulation centre of mass and the centroidal momentum matrix A_G with its bias (Orin, Goswami and Lee, 2013).

With the floating root's generalized velocity (COM linear v_c, angular w), the first six rows of M map q-dot to
(linear momentum p, angular momentum about the root COM c_0), and the first six entries of C(q, q-dot) q-dot are the
rate of that momentum when q-double-dot = 0. Moving the angular part to the articulation COM G (L_G = L_c0 +
(c_0 - G) x p) gives A_G = T M[:6] and bias A_G-dot q-dot = T C[:6], T = [[1, 0], [[c_0 - G]x, 1]]. Rows are linear
then angular, as PhysX.
"""

from __future__ import annotations

import warp as wp

from ..core.data import ArticulationData
from ..core.model import ArticulationModel, Tree
from ..core.parallel import launch_envs
from ..core.state import ArticulationState
from ..core.struct_refs import opt_in as _struct_refs

wp.set_module_options({"enable_backward": False})  # forward-only kernels: half the compile time
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)


@wp.func
def _com(tree: Tree, link_com: wp.array2d(dtype=wp.vec3), env: int) -> wp.vec3:
    total = float(0.0)
    s = wp.vec3(0.0)
    for i in range(tree.link_count):
        total += tree.link_mass[i]
        s += tree.link_mass[i] * link_com[env, i]
    return s / wp.max(total, 1.0e-30)


@wp.kernel
def _articulation_com(
    env_offset: int,
    tree: Tree,
    link_com: wp.array2d(dtype=wp.vec3),
    origin: wp.array(dtype=wp.vec3),
    root_pose: wp.array2d(dtype=wp.transform),
    root_frame: int,
    com: wp.array(dtype=wp.vec3),
):
    env = env_offset + wp.tid()
    g = _com(tree, link_com, env) + origin[env]
    if root_frame != 0:
        g = wp.transform_point(wp.transform_inverse(root_pose[env, 0]), g)
    com[env] = g


@wp.kernel
def _centroidal_momentum(
    env_offset: int,
    tree: Tree,
    link_com: wp.array2d(dtype=wp.vec3),
    mass_matrix: wp.array3d(dtype=float),
    coriolis: wp.array2d(dtype=float),
    matrix: wp.array3d(dtype=float),
    bias: wp.array2d(dtype=float),
):
    env = env_offset + wp.tid()
    arm = link_com[env, 0] - _com(tree, link_com, env)
    for c in range(mass_matrix.shape[2]):
        p = wp.vec3(mass_matrix[env, 0, c], mass_matrix[env, 1, c], mass_matrix[env, 2, c])
        ang = wp.vec3(mass_matrix[env, 3, c], mass_matrix[env, 4, c], mass_matrix[env, 5, c]) + wp.cross(arm, p)
        for k in range(3):
            matrix[env, k, c] = p[k]
            matrix[env, 3 + k, c] = ang[k]
    p = wp.vec3(coriolis[env, 0], coriolis[env, 1], coriolis[env, 2])
    ang = wp.vec3(coriolis[env, 3], coriolis[env, 4], coriolis[env, 5]) + wp.cross(arm, p)
    for k in range(3):
        bias[env, k] = p[k]
        bias[env, 3 + k] = ang[k]


def articulation_com(
    model: ArticulationModel, state: ArticulationState, data: ArticulationData, root_frame: bool
) -> None:
    """Articulation COM into data.com (world, or the root link's actor frame); needs forward_kinematics first."""
    launch_envs(
        _articulation_com,
        data.com.shape[0],
        [model.tree, data.link_com, data.origin, state.root_pose, int(root_frame), data.com],
        data.com.device,
    )


def centroidal_momentum(
    model: ArticulationModel, data: ArticulationData, coriolis: wp.array, matrix: wp.array, bias: wp.array
) -> None:
    """A_G and its bias from data.mass_matrix and the Coriolis force `coriolis` (E, N) into `matrix`, `bias`."""
    launch_envs(
        _centroidal_momentum,
        matrix.shape[0],
        [model.tree, data.link_com, data.mass_matrix, coriolis, matrix, bias],
        matrix.device,
    )
