"""Projected Gauss-Seidel schedule (physx-notes 4.3): n_pos position iterations with bias 0.8 (articulation joints and
contacts alike, physx-notes 9.6; 1 for joints between bodies, PhysX's PxJoint bias, physx-notes 7.2) and the full step,
then max(1, n_vel) velocity iterations without position bias. The velocity at the end of the position iterations is the
one positions are integrated with; the velocity iterations only change the velocity carried forward.

Early stop. With a tolerance > 0 (Articulation.solver_tolerance; an MJCF import sets one, PhysX has none and runs every
iteration), the position iterations end after the first sweep that changed no generalized velocity by more than the
tolerance [m/s or rad/s]: a sweep that moves nothing has reached the fixed point every later sweep would repeat. It is a
stopping rule, not an error bound: Gauss-Seidel's changes shrink geometrically once the active set is fixed, but a
slowly converging problem can also change little per sweep far from its answer (docs/solvers.md). MuJoCo's solvers stop
the same way, on the improvement of their cost (mjOption.tolerance). gen_vpos holds each sweep's starting velocity
meanwhile; sd.solver_iterations reports the sweeps run per env."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import BodyJointArrays, BodyJointTable
from ..constraints.contact_rows import ContactRows
from ..constraints.coupling_rows import CouplingRows
from ..constraints.dof_rows import DofRows
from ..core.data import StepData
from ..core.model import DofParams, Tree
from .gauss_seidel import sweep

PGS_ERP = wp.constant(0.8)
PGS_JOINT_ERP = wp.constant(1.0)


@wp.func
def _largest_change(sd: StepData, env: int, n_gen: int) -> float:
    """max_k |v_k - v_k at the sweep's start| (gen_vpos holds the start); NaN counts as unconverged."""
    change = float(0.0)
    for k in range(n_gen):
        d = wp.abs(sd.gen_v[env, k] - sd.gen_vpos[env, k])
        if not wp.isfinite(d):
            return wp.inf
        change = wp.max(change, d)
    return change


@wp.func
def pgs_solve(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    cr: CouplingRows,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    sd: StepData,
    joint_q: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    dt: float,
    n_pos: int,
    n_vel: int,
    tolerance: float,
) -> None:
    it = int(0)
    while it < n_pos:
        if tolerance > 0.0:
            for k in range(n_gen):
                sd.gen_vpos[env, k] = sd.gen_v[env, k]
        sweep(
            tree,
            dp,
            rows,
            cr,
            cp,
            ct,
            jt,
            ja,
            sd,
            joint_q,
            env,
            n_gen,
            dt,
            dt,
            PGS_ERP,
            PGS_JOINT_ERP,
            PGS_ERP,
            0.0,
            1,
            0,
        )
        it += 1
        if tolerance > 0.0 and _largest_change(sd, env, n_gen) <= tolerance:
            break
    sd.solver_iterations[env] = it
    for k in range(n_gen):
        sd.gen_vpos[env, k] = sd.gen_v[env, k]
    for _it in range(wp.max(1, n_vel)):
        sweep(
            tree,
            dp,
            rows,
            cr,
            cp,
            ct,
            jt,
            ja,
            sd,
            joint_q,
            env,
            n_gen,
            dt,
            dt,
            PGS_ERP,
            PGS_JOINT_ERP,
            PGS_ERP,
            0.0,
            0,
            0,
        )
