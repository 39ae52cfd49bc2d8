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
from ..core.struct_refs import opt_in as _struct_refs
from ..description.actors import RigidStatic
from ..description.articulation import Link
from ..description.body_joints import JointBase
from ..dynamics.crba import crba_env
from ..dynamics.integrate import integrate_positions
from ..dynamics.kinematics import forward_kinematics_env
from ..errors import StateError
from .body_joint_view import refresh_body_joint_kinematics

_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

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


def _hard_coordinates(joint: JointBase) -> np.ndarray:
    """(m,) bool: the coordinates whose range and lock are hard constraints (a compliant or ERP/CFM-softened range
    is a spring, which a pose may stretch)."""
    c = joint.bilateral_count + np.arange(joint.num_coordinates)
    soft = (joint._compliance[c] > 0.0) | ((joint._erp[c] >= 0.0) & (joint._cfm[c] > 0.0))
    return ~soft


def check_targets(block: Block, j: int, values: np.ndarray) -> None:
    """Refuse (StateError) coordinate values (E, m) of block joint j that its own per-env hard ranges or locks
    forbid: the next step would snap them back (at ~50 rad/s for a locked hinge set 1 rad away)."""
    joint = block.joints[j]
    ja = block.body_joint_arrays
    k0 = block.joint_coord_start[j]
    k1 = k0 + joint.num_coordinates
    low, high = ja.range_low.numpy()[:, k0:k1], ja.range_high.numpy()[:, k0:k1]
    locked, lock_value = ja.locked.numpy()[:, k0:k1] != 0, ja.lock_value.numpy()[:, k0:k1]
    tol = 1e-6 * np.maximum(1.0, np.abs(values))
    hard = _hard_coordinates(joint)[None, :]
    outside = hard & ((values < low - tol) | (values > high + tol))
    moved = hard & locked & (np.abs(values - lock_value) > tol)
    for bad, why in ((outside, "outside its range"), (moved, "locked")):
        if bad.any():
            env, k = (int(i) for i in np.argwhere(bad)[0])
            name = joint.coordinate_names[k]
            what = f"[{low[env, k]:g}, {high[env, k]:g}]" if why != "locked" else f"at {lock_value[env, k]:g}"
            raise StateError(
                f"{joint._owner()}: coordinate '{name}' = {values[env, k]:g} in env {env} ({int(bad.sum())} "
                f"value(s) in all) is {why} {what}; give values the joint allows, or change its range or "
                "unlock it first"
            )


def assemble(block: Block, targets: dict[tuple[int, int], np.ndarray]) -> None:
    """Move the block's bodies so that every joint holds and each (joint index in block, coordinate) of `targets`
    takes its (E,) values; the other joints' locked coordinates stay at their lock values, and none of their
    coordinates may end outside its range. Raises StateError (and leaves the state as it was) when some env does
    not converge or would leave a range."""
    e, n_gen = block.num_envs, block.model.gen_count
    jt, ja = block.body_joint_table, block.body_joint_arrays
    nj = jt.joint_count
    coord = ja.coord.numpy().copy()
    coord_before = coord.copy()  # the unwrapping reference, put back if the request is refused
    locked, lock_value = ja.locked.numpy() != 0, ja.lock_value.numpy().astype(np.float64)
    rows, goal = [], []  # residual rows (slot indices) and, for coordinates, their target columns
    for j, joint in enumerate(block.joints):
        for s in joint._constrained_slots():
            rows.append(6 * j + s)
            goal.append(None)
        for k, (_, s) in enumerate(joint._coordinates):
            c = block.joint_coord_start[j] + k
            if (j, k) in targets:
                rows.append(6 * j + s)
                goal.append(np.asarray(targets[(j, k)], np.float64))
                coord[:, c] = targets[(j, k)]  # unwrap angles near their targets
            elif locked[:, c].any() and _hard_coordinates(joint)[k]:  # held where locked, free elsewhere
                rows.append(6 * j + s)
                goal.append(np.where(locked[:, c], lock_value[:, c], np.nan))
    ja.coord.assign(coord)
    values = wp.zeros((e, 6 * nj), dtype=float, device=block.device)
    g = wp.zeros((e, 6 * nj, n_gen), dtype=float, device=block.device)
    dx = wp.zeros((e, n_gen), dtype=float, device=block.device)
    scratch = wp.zeros((e, block.model.dof_count), dtype=float, device=block.device)
    scale = _metric_scale(block)
    movable = scale > 0
    st = block.state

    active = (
        np.stack([np.ones(e, bool) if t is None else ~np.isnan(t) for t in goal], axis=1)
        if goal
        else np.ones((e, 0), bool)
    )

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
            if target is not None:  # NaN: no goal in that env (a coordinate locked in other envs only)
                v[:, i] = np.where(np.isnan(target), 0.0, v[:, i] - np.nan_to_num(target))
        return v

    # copies: on the CPU .numpy() is a view of the device memory, which the solve then moves
    saved = {name: getattr(st, name).numpy().copy() for name in ("joint_q", "root_pose")}
    # float32 positions carry ~1e-7 of their magnitude: the floor the residuals can reach
    size = max(1.0, float(np.abs(st.link_pose.numpy()[..., :3]).max()) if st.link_pose.shape[1] else 1.0)
    tol = TOLERANCE * size
    r = residuals()
    err = np.abs(r).max(axis=1)
    step = np.ones(e)
    for _ in range(MAX_ITERATIONS):
        if err.max() <= tol:
            break
        # a row with no goal in an env (a coordinate locked elsewhere only) is left out there: rows and residuals 0
        gm = g.numpy().astype(np.float64)[:, rows][:, :, movable] * active[:, :, None]
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
        before = {name: getattr(st, name).numpy().copy() for name in saved}
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
        _restore(block, saved, coord_before)
        raise StateError(
            f"the joints of {', '.join(repr(a.name) for a in block.arts)} cannot all hold at the "
            f"requested coordinates in env(s) {bad[:5].tolist()} (residual {err.max():.3g}); the "
            "values may be out of the mechanism's reach, or too far from the current pose for one "
            "solve (set them in smaller steps)"
        )
    refresh_body_joint_kinematics(block)
    _check_ranges(block, targets, saved, coord_before)


def _restore(block: Block, saved: dict, coord: np.ndarray) -> None:
    """Put back the poses and the coordinates' unwrapping reference of before a refused request."""
    for name, arr in saved.items():
        getattr(block.state, name).assign(arr)
    block.body_joint_arrays.coord.assign(coord)
    refresh_body_joint_kinematics(block)


def _check_ranges(block: Block, targets: dict[tuple[int, int], np.ndarray], saved: dict, coord0: np.ndarray) -> None:
    """After an assembly: a coordinate of another joint that ended outside its range refuses the whole request
    (the state goes back to `saved`)."""
    ja = block.body_joint_arrays
    coord = ja.coord.numpy().astype(np.float64)
    low, high = ja.range_low.numpy(), ja.range_high.numpy()
    for j, joint in enumerate(block.joints):
        hard = _hard_coordinates(joint)
        for k, name in enumerate(joint.coordinate_names):
            if (j, k) in targets or not hard[k]:
                continue
            c = block.joint_coord_start[j] + k
            tol = 1e-5 * max(1.0, float(np.abs(coord[:, c]).max(initial=0.0)))
            bad = (coord[:, c] < low[:, c] - tol) | (coord[:, c] > high[:, c] + tol)
            if bad.any():
                env = int(np.flatnonzero(bad)[0])
                _restore(block, saved, coord0)
                raise StateError(
                    f"{joint._owner()}: holding the other joints at the requested coordinates moves its coordinate "
                    f"'{name}' to {coord[env, c]:g} in env {env}, outside its range [{low[env, c]:g}, "
                    f"{high[env, c]:g}]; the state is left as it was. Request coordinates the mechanism reaches "
                    "within its ranges"
                )
