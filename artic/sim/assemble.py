"""Posing a block by joint coordinates (ArtiSynth's joints chapter, sections 3.3.2 and 3.3.4):
set some body joints' coordinates and move the freest bodies so that every joint of the block holds, loops
included (a four-bar posed by its crank angle).

Gauss-Newton on the block's generalized positions, batched over envs. The residuals are every joint's constrained
slots and the set coordinates minus their values; their Jacobian rows are the joints' row directions g
(constraints/body_joint_rows.py), since g . v is a slot's rate for the generalized velocity v. Each step is the smallest
displacement in the metric of W that zeroes the linearized residuals, dx = -W^-1 G^T (G W^-1 G^T)^+ r, with W the
mass matrix and the trees attached to a fixed body (a fixed base, or a joint to the world, a static or a kinematic
body) a hundred times heavier, which is ArtiSynth's preference for moving the bodies not attached to ground.
Displacements are applied as one integration step of length 1 (dynamics/integrate.py), so floating roots and
spherical joints move on their manifolds. The residuals are evaluated in float32 on the device: a joint holds to
about 1e-7 of the model's size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ..constraints.body_joint_rows import (
    BodyJointArrays,
    BodyJointTable,
    joint_coordinates,
    joint_kinematics,
    joint_row_direction,
    slot_wrenches,
)
from ..core.data import Kin, Scratch
from ..core.model import Tree
from ..core.parallel import launch_envs
from ..core.state import StateArrays
from ..description.actors import RigidStatic
from ..description.articulation import Link
from ..dynamics.crba import crba_env
from ..dynamics.integrate import integrate_positions
from ..dynamics.kinematics import forward_kinematics_env
from ..errors import StateError
from .body_joint_view import refresh_body_joint_kinematics

if TYPE_CHECKING:
    from .block import Block

GROUND_WEIGHT = 100.0  # how much heavier a tree attached to ground counts when choosing what moves
TOLERANCE = 2.0e-7  # [m or rad] residual at which a solve stops, for a model within 1 m of the world origin
MAX_ITERATIONS = 30


@wp.kernel
def _residual_rows(
    env_offset: int,
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    st: StateArrays,
    kin: Kin,
    sc: Scratch,
    mass_matrix: wp.array3d(dtype=float),
    values: wp.array2d(dtype=float),
    g: wp.array3d(dtype=float),
):
    """Per env: M, and every joint's six slot values (coordinates unwrapped against ja.coord) and directions."""
    env = env_offset + wp.tid()
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    crba_env(tree, kin, sc, mass_matrix, env)
    o = kin.origin[env]
    for j in range(jt.joint_count):
        xc, xd, _tcd, raw, dirs = joint_kinematics(jt, st.link_pose, env, j)
        v = joint_coordinates(jt, ja, env, j, raw, 0)
        for s in range(6):
            values[env, 6 * j + s] = v[s]
            wa, wb = slot_wrenches(jt, j, s, xc, xd, dirs, o)
            joint_row_direction(tree, jt, kin, g, env, 6 * j + s, j, wa, wb)


@wp.kernel
def _displace(
    env_offset: int, tree: Tree, st: StateArrays, dx: wp.array2d(dtype=float), scratch: wp.array2d(dtype=float)
):
    integrate_positions(tree, st.joint_q, st.root_pose, dx, scratch, 1.0, env_offset + wp.tid())


def _is_fixed(body) -> bool:
    return body is None or isinstance(body, RigidStatic) or (isinstance(body, Link) and body.articulation._kinematic)


def _metric_scale(block) -> np.ndarray:
    """(N,) factor on each generalized coordinate's rows and columns of W: GROUND_WEIGHT for trees attached to
    ground; 0 marks the coordinates of kinematic trees, which must not move."""
    host = block.model.host
    scale = np.ones(block.model.gen_count)
    grounded = {t for t, art in enumerate(block.arts) if art.fix_base}
    for joint in block.joints:
        ends = (joint.body_a, joint.body_b)
        for mine, other in (ends, ends[::-1]):
            if isinstance(mine, Link) and _is_fixed(other):
                grounded.add(block.index(mine.articulation))
    for t, art in enumerate(block.arts):
        s, n = host["tree_gen_start"][t], host["tree_gen_count"][t]
        scale[s : s + n] = 0.0 if art._kinematic else (GROUND_WEIGHT if t in grounded else 1.0)
    return scale


def assemble(block: Block, targets: dict[tuple[int, int], np.ndarray]) -> None:
    """Move the block's bodies so that every joint holds and each (joint index in block, coordinate) of `targets`
    takes its (E,) values. Raises StateError when some env does not converge."""
    e, n_gen = block.num_envs, block.model.gen_count
    jt, ja = block.body_joint_table, block.body_joint_arrays
    nj = jt.joint_count
    coord = ja.coord.numpy()
    rows, goal = [], []  # residual rows (slot indices) and, for coordinates, their target columns
    for j, joint in enumerate(block.joints):
        for s in joint._constrained_slots():
            rows.append(6 * j + s)
            goal.append(None)
        for k, (_, s) in enumerate(joint._coordinates):
            if (j, k) in targets:
                rows.append(6 * j + s)
                goal.append(np.asarray(targets[(j, k)], np.float64))
                coord[:, block.joint_coord_start[j] + k] = targets[(j, k)]  # unwrap angles near their targets
    ja.coord.assign(coord)
    values = wp.zeros((e, 6 * nj), dtype=float, device=block.device)
    g = wp.zeros((e, 6 * nj, n_gen), dtype=float, device=block.device)
    dx = wp.zeros((e, n_gen), dtype=float, device=block.device)
    scratch = wp.zeros((e, block.model.dof_count), dtype=float, device=block.device)
    scale = _metric_scale(block)
    movable = scale > 0
    st = block.state

    def residuals():
        launch_envs(
            _residual_rows,
            e,
            [
                block.model.tree,
                jt,
                ja,
                st.arrays,
                block.data.kin,
                block.data.scratch,
                block.data.mass_matrix,
                values,
                g,
            ],
            block.device,
        )
        v = values.numpy().astype(np.float64)[:, rows]
        for i, target in enumerate(goal):
            if target is not None:
                v[:, i] -= target
        return v

    saved = {name: getattr(st, name).numpy() for name in ("joint_q", "root_pose")}
    # float32 positions carry ~1e-7 of their magnitude: the floor the residuals can reach
    size = max(1.0, float(np.abs(st.link_pose.numpy()[..., :3]).max()) if st.link_pose.shape[1] else 1.0)
    tol = TOLERANCE * size
    r = residuals()
    err = np.abs(r).max(axis=1)
    step = np.ones(e)
    for _ in range(MAX_ITERATIONS):
        if err.max() <= tol:
            break
        gm = g.numpy().astype(np.float64)[:, rows][:, :, movable]
        m = block.data.mass_matrix.numpy().astype(np.float64)[:, movable][:, :, movable]
        m *= np.sqrt(np.outer(scale[movable], scale[movable]))[None]
        floor = 1e-9 * np.trace(m, axis1=1, axis2=2) / max(m.shape[1], 1) + 1e-12  # massless links stay solvable
        m += np.eye(m.shape[1])[None] * floor[:, None, None]
        w_inv_gt = np.linalg.solve(m, np.swapaxes(gm, 1, 2))
        a = gm @ w_inv_gt
        lam = np.einsum("eij,ej->ei", np.linalg.pinv(a, rcond=1e-10, hermitian=True), r)
        d = np.zeros((e, n_gen))
        d[:, movable] = -np.einsum("eij,ej->ei", w_inv_gt, lam)
        d *= step[:, None]
        d[err <= tol] = 0.0
        before = {name: getattr(st, name).numpy() for name in saved}
        dx.assign(d.astype(np.float32))
        launch_envs(_displace, e, [block.model.tree, st.arrays, dx, scratch], block.device)
        r_new = residuals()
        err_new = np.abs(r_new).max(axis=1)
        worse = err_new > err * 1.5 + tol  # a step too long for the linearization: retry half of it
        if worse.any():
            for name, arr in before.items():
                cur = getattr(st, name).numpy()
                cur[worse] = arr[worse]
                getattr(st, name).assign(cur)
            step[worse] *= 0.5
            r_new = residuals()
            err_new = np.abs(r_new).max(axis=1)
        step[~worse] = np.minimum(1.0, step[~worse] * 2.0)
        r, err = r_new, err_new
    if err.max() > 10 * tol:
        bad = np.flatnonzero(err > 10 * tol)
        for name, arr in saved.items():
            getattr(st, name).assign(arr)
        refresh_body_joint_kinematics(block)
        raise StateError(
            f"the joints of {', '.join(repr(a.name) for a in block.arts)} cannot all hold at the "
            f"requested coordinates in env(s) {bad[:5].tolist()} (residual {err.max():.3g}); the "
            "values may be out of the mechanism's reach, or too far from the current pose for one "
            "solve (set them in smaller steps)"
        )
    refresh_body_joint_kinematics(block)
