"""The step kernel: the whole `Scene.step` of one env in one thread, every env of a block in one launch.

Pipeline (physx-notes 0 and 9.1; the PhysX guide, "Constraint Sequence"), one `wp.func` per stage:
 1. `_begin_step`: the start state kept, generalized velocities gathered, PhysX's velocity pre-scale; kinematics
    and link velocities at the start of the step; `detect_env` (collision/narrow.py): contact points;
 2. `_unconstrained_dynamics`: gravity, user link forces and persistent joint forces, damping and max-velocity
    forces, Coriolis and gyroscopic terms and armature through ABA, the joint loads the coefficient friction scales
    with (RNEA of that motion), and v* = v + a dt;
 3. `_mass_matrix`: M and M^-1 (per tree, from its tree-sparse factor, math/tree_ldl.py) and kinematic bodies'
    velocities; then each row kind's setup at the solver step (`_setup_dofs`, `_setup_couplings`, `setup_contacts`,
    `setup_body_joints`): directions, responses, drive coefficients and limit errors;
 4-5. PGS, TGS or the direct solver over every row (solvers/), integration (PGS and the direct solver: once, with
    the position-iteration velocity; TGS: per substep), and `_write_velocities` into the state;
 then `_check_status` (a state gone non-finite marks the env, and under the freeze policy restores its start);
 6. `_report`: contact forces, body-joint wrenches, joint and link accelerations, incoming joint forces,
    kinematics and body-joint coordinates at the end; `_sleep`: PhysX's sleep check (physx-notes 3.7).
`record_step` records the launch once per (dt, solver, status mode, pivot limit) and the block replays it
(warp-notes), in env chunks on every CPU core (core/parallel.py): a step allocates nothing. The solver calls stay
in the kernel's body: a stage that only passed the row tables through to them cost a copy of every table per step
(Warp passes structs by value): 5 % of a 64-env panda step (15.7 against 14.9 us).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import Geometry
from ..collision.narrow import detect_env
from ..collision.reach import mark_links
from ..constraints.body_joint_report import finish_body_joint_forces, update_body_joint_coordinates
from ..constraints.body_joint_rows import BodyJointArrays, BodyJointTable, setup_body_joints
from ..constraints.contact_rows import ContactRows, finish_contacts, setup_contacts
from ..constraints.contact_status import PenetrationStatus, track_penetration
from ..constraints.coupling_rows import CouplingRows, hard_mimics, setup_couplings, soft_coupling_row
from ..constraints.deadzone_rows import DeadzoneTable
from ..constraints.dof_rows import DofRows
from ..constraints.drive import spherical_drive_error
from ..constraints.limit import soft_limit_row
from ..constraints.row_form import RowForm
from ..core.control import ControlArrays
from ..core.data import Kin, Scratch, StepData
from ..core.model import DRIVE_ACCELERATION, DRIVE_NONE, DofParams, Tree
from ..core.parallel import RecordedEnvLaunch
from ..core.state import StateArrays
from ..core.struct_refs import opt_in as _struct_refs
from ..dynamics.aba import aba_env
from ..dynamics.crba import crba_env
from ..dynamics.forward import applied_link_wrench, prescale_joint_velocities
from ..dynamics.integrate import integrate_positions, quat_log
from ..dynamics.kinematics import (
    forward_kinematics_env,
    joint_rotation_vector,
    link_bias_accelerations_env,
    link_velocities_env,
    quat_exp,
)
from ..dynamics.passive import explicit_drive_force, mujoco_damping, passive_forces, tgs_mujoco_damping
from ..dynamics.rnea import rnea_env
from ..enums import SolverType
from ..math.spatial import unit
from ..solvers.direct import direct_solve, refresh_slot_rates
from ..solvers.direct_arrays import DirectArrays
from ..solvers.pgs import dense_inverse, dof_responses, pgs_solve
from ..solvers.tgs import tgs_solve
from .status import CONTACT_PENETRATION, JOINT_VIOLATION, STATUS_FREEZE, STATUS_OFF, state_status

if TYPE_CHECKING:
    from .block import Block

wp.set_module_options({"enable_backward": False})
_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

WAKE_COUNTER_RESET = 0.4  # PxSceneDesc::wakeCounterResetValue [s]
SOLVER_TGS = wp.constant(int(SolverType.TGS))
SOLVER_DIRECT = wp.constant(int(SolverType.DIRECT))
BOUNCE_THRESHOLD = 2.0  # PxSceneDesc::bounceThresholdVelocity = 0.2 * PxTolerancesScale::speed (10) [m/s]

# Where a step may stop early, for the stage profile (benchmarks/profile_stages.py): a step stopped before
# STAGE_INTEGRATE has written nothing back to the state (but under TGS, whose substeps integrate), so it can be
# repeated and timed; STAGE_NONE returns at once (the launch's own cost). The block always runs them all.
STAGE_NONE = -1
STAGES = ("kinematics", "collide", "dynamics", "mass matrix", "row setup", "solve", "integrate", "report")
STAGE_KINEMATICS, STAGE_COLLIDE, STAGE_DYNAMICS, STAGE_MASS, STAGE_SETUP, STAGE_SOLVE, STAGE_INTEGRATE = range(7)
STAGE_ALL = len(STAGES) - 1


# -- the stages, in pipeline order --------------------------------------------------------------------------------


@wp.func
def _begin_step(
    tree: Tree, dp: DofParams, st: StateArrays, kin: Kin, sc: Scratch, sd: StepData, env: int, n: int, n_gen: int
) -> None:
    """Keep the state the step starts from (a frozen env returns to it), gather the generalized velocity (roots'
    six, then the dofs), apply PhysX's joint-velocity pre-scale, and compute the links' poses and velocities."""
    for d in range(n):
        sd.q0[env, d] = st.joint_q[env, d]
    for t in range(tree.tree_count):
        sd.root_pose0[env, t] = st.root_pose[env, t]
    for t in range(tree.tree_count):
        rg = tree.link_root_gen[tree.tree_root[t]]
        if rg >= 0:
            for k in range(3):
                sd.gen_v[env, rg + k] = st.root_lin_vel[env, t][k]
                sd.gen_v[env, rg + 3 + k] = st.root_ang_vel[env, t][k]
    for d in range(n):
        sd.gen_v[env, tree.dof_gen[d]] = st.joint_qd[env, d]
    for k in range(n_gen):
        sd.gen_v0[env, k] = sd.gen_v[env, k]
    prescale_joint_velocities(tree, dp, sd.gen_v, env, n)
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    link_velocities_env(tree, kin, sd.gen_v, 1, st.root_lin_vel, st.root_ang_vel, sc.link_v, sd.link_vel0, env)


@wp.func
def _mark_joined_links(jt: BodyJointTable, sd: StepData, env: int) -> None:
    """The links a body joint holds marked in StepData.link_struck: their speculative contacts are all kept, since
    another body's pull is not in collision/reach.py's bound."""
    for j in range(jt.joint_count):
        if jt.joint_link_a[j] >= 0:
            sd.link_struck[env, jt.joint_link_a[j]] = 1
        if jt.joint_link_b[j] >= 0:
            sd.link_struck[env, jt.joint_link_b[j]] = 1


@wp.func
def _adhesion(cp: ContactPoints, ctl: ControlArrays, kin: Kin, sd: StepData, env: int, link_count: int) -> None:
    """MuJoCo's adhesion (an actuator on a body, mjTRN_BODY): a link with adhesion force f > 0 pulls on what it
    touches through each of its k contacts (every detected one, those in the detection band beyond touch too, as
    MuJoCo counts the contacts within margin + gap) by f / k along the normal, towards each other, on both bodies:
    MuJoCo's moment arm, minus the mean of the contacts' normal Jacobians. Added to the links' applied wrenches
    (force, torque about the COM) before the unconstrained step: explicit, as MuJoCo's actuator forces."""
    count = cp.count[env]
    o = kin.origin[env]
    for i in range(link_count):
        f = ctl.link_adhesion[env, i]
        if f > 0.0:
            k = int(0)
            for c in range(count):
                if cp.link_a[env, c] == i or cp.link_b[env, c] == i:
                    k += 1
            for c in range(count):
                la = cp.link_a[env, c]
                lb = cp.link_b[env, c]
                if la == i or lb == i:
                    pull = cp.normal[env, c] * (f / float(k))  # the normal points from b to a: a is pulled back
                    p = cp.point[env, c] - o
                    if la >= 0:
                        arm = p - kin.link_com[env, la]
                        sd.link_fext[env, la] = sd.link_fext[env, la] - wp.spatial_vector(pull, wp.cross(arm, pull))
                    if lb >= 0:
                        arm = p - kin.link_com[env, lb]
                        sd.link_fext[env, lb] = sd.link_fext[env, lb] + wp.spatial_vector(pull, wp.cross(arm, pull))


@wp.func
def _unconstrained_dynamics(
    tree: Tree,
    dp: DofParams,
    st: StateArrays,
    ctl: ControlArrays,
    cp: ContactPoints,
    kin: Kin,
    sc: Scratch,
    sd: StepData,
    gravity: wp.vec3,
    dt: float,
    env: int,
    n: int,
    n_gen: int,
) -> None:
    """The applied link wrenches and joint forces, the unconstrained acceleration (ABA), the joint loads of that
    motion that the coefficient friction scales with (RNEA), and v* = v + a dt."""
    for i in range(tree.link_count):
        sd.link_fext[env, i] = applied_link_wrench(
            tree,
            dp,
            i,
            wp.transform_get_rotation(st.link_pose[env, i]),
            sd.link_vel0[env, i],
            ctl.link_force[env, i],
            ctl.link_torque[env, i],
            gravity,
            dt,
        )
    _adhesion(cp, ctl, kin, sd, env, tree.link_count)
    for k in range(n_gen):
        sd.gen_f[env, k] = 0.0
    for d in range(n):
        sd.gen_f[env, tree.dof_gen[d]] = ctl.joint_force[env, d] + explicit_drive_force(tree, dp, st, ctl, sd, env, d)
    if dp.passive != 0:
        passive_forces(tree, dp, st, kin, sd, env, n)
    zero = wp.vec3(0.0)
    aba_env(tree, kin, sc, sd.gen_v, sd.gen_f, sd.link_fext, zero, 1, sd.gen_a, env, 1)
    if dp.friction_loads != 0:  # the joint loads of that motion, which PhysX's coefficient friction scales with
        rnea_env(tree, kin, sc, sd.gen_v, sd.gen_a, sd.link_fext, zero, 1, sd.gen_f, env)
        for d in range(n):
            i = dp.dof_link[d]
            f = sc.link_f[env, i]
            force = wp.spatial_bottom(f)
            torque = wp.spatial_top(f) - wp.cross(kin.link_com[env, i], force)
            sd.dof_friction_force[env, d] = dp.dof_friction_coef[d] * (wp.length(force) + wp.length(torque))
    for k in range(n_gen):
        sd.gen_v[env, k] = sd.gen_v[env, k] + sd.gen_a[env, k] * dt


@wp.func
def _dense_minv(dp: DofParams, cr: CouplingRows, jt: BodyJointTable, n: int, solver: int) -> int:
    """1 when the step needs M^-1 and every row's M^-1 g: PGS's and TGS's rows, and the direct solver's for its body
    joints' setup, an acceleration drive's or a PhysX-compliant mimic joint's coefficients. The direct solver
    solves through its own tree factor (solvers/tree_rows.py) otherwise, and its fallback to PGS computes them then
    (pgs.pgs_prerequisites): the dense M^-1 and the rows' M^-1 g were 15 % of the dm humanoid's direct step."""
    if solver != SOLVER_DIRECT or jt.joint_count > 0:
        return 1
    for d in range(n):
        if dp.dof_drive[d] == DRIVE_ACCELERATION:
            return 1
    return hard_mimics(cr)


@wp.func
def _mass_matrix(
    tree: Tree,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
    sc: Scratch,
    sd: StepData,
    env: int,
    dt: float,
    dense: int,
) -> None:
    """M, with `dense` M^-1 too (per tree, through its tree-sparse factor; a kinematic tree's block zero), then the
    kinematic bodies' velocities."""
    crba_env(tree, kin, sc, sd.mass_matrix, env)
    if dense != 0:
        dense_inverse(tree, sd, env)
    _kinematic_roots(tree, st, ctl, sd, env, dt)


@wp.func
def _setup_couplings(
    tree: Tree, cr: CouplingRows, kin: Kin, st: StateArrays, sd: StepData, env: int, n_gen: int, dt: float, dense: int
) -> None:
    """The coupling rows' directions and (`dense`) responses, MuJoCo-soft rows' targets, accumulators zeroed."""
    setup_couplings(
        tree, cr, kin, st.link_pose, sd.minv, sd.cpl_g, sd.cpl_minv_g, sd.cpl_r, sd.cpl_len, st.joint_q, env, n_gen,
        dense,
    )  # fmt: skip
    for k in range(cr.row_count):
        sd.cpl_acc[env, k] = 0.0
        sd.cpl_acc2[env, k] = 0.0
        soft = soft_coupling_row(cr, sd.cpl_g, sd.cpl_len, sd.gen_v0, st.joint_q, env, k, n_gen, dt)
        sd.cpl_soft_target[env, k] = soft[0]
        sd.cpl_soft_cfm[env, k] = soft[1]


@wp.func
def _write_velocities(tree: Tree, st: StateArrays, sd: StepData, env: int, n: int) -> None:
    """The solved generalized velocity back into the state: joint velocities and each floating root's."""
    for d in range(n):
        st.joint_qd[env, d] = sd.gen_v[env, tree.dof_gen[d]]
    for t in range(tree.tree_count):
        rg = tree.link_root_gen[tree.tree_root[t]]
        if rg >= 0:
            st.root_lin_vel[env, t] = _gen_to_vec3(sd.gen_v, env, rg)
            st.root_ang_vel[env, t] = _gen_to_vec3(sd.gen_v, env, rg + 3)


@wp.func
def _check_status(
    tree: Tree, st: StateArrays, kin: Kin, sc: Scratch, sd: StepData, env: int, n: int, status_mode: int
) -> int:
    """Mark an env whose state this step left non-finite (status.py); under the freeze policy restore the state it
    started from. Returns 1 when the env is frozen (the rest of the step is skipped)."""
    if status_mode != STATUS_OFF and st.status[env] == 0:
        bad = state_status(tree, st, env)
        if bad != 0:
            st.status[env] = -bad  # negative: not reported yet (status.py)
            st.status_flag[0] = 1  # every writer stores the same value: no atomics needed across CPU chunks
            if status_mode == STATUS_FREEZE:
                _restore_start(tree, kin, sc, st, sd, env, n)
                return 1
    return 0


@wp.func
def _report(
    tree: Tree,
    cp: ContactPoints,
    ct: ContactRows,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
    sc: Scratch,
    sd: StepData,
    env: int,
    n: int,
    n_gen: int,
    dt: float,
    track: int,
) -> int:
    """What a step reports: contact forces, body-joint wrenches (with the start-of-step geometry, as the impulses),
    joint and link accelerations and incoming joint forces; then the end kinematics and body-joint coordinates and
    errors (with `track`, their violation status: returns 1 when a joint has just become violated).
    Link forces and torques act for one step (PhysX without eRETAIN_ACCELERATIONS) and are cleared."""
    finish_contacts(cp, ct, env, dt)
    finish_body_joint_forces(jt, ja, kin, st.link_pose, env, dt)
    for k in range(n_gen):
        sd.gen_a[env, k] = (sd.gen_v[env, k] - sd.gen_v0[env, k]) / dt
    for d in range(n):
        sd.joint_acceleration[env, d] = sd.gen_a[env, tree.dof_gen[d]]
    rnea_env(tree, kin, sc, sd.gen_v0, sd.gen_a, sd.link_fext, wp.vec3(0.0), 1, sd.gen_f, env)
    _incoming_joint_forces(tree, kin, sc, st, sd, env)
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    fresh = update_body_joint_coordinates(jt, ja, st.link_pose, env, track)
    link_velocities_env(tree, kin, st.joint_qd, 0, st.root_lin_vel, st.root_ang_vel, sc.link_v, st.link_velocity, env)
    for i in range(tree.link_count):
        sd.link_acceleration[env, i] = (st.link_velocity[env, i] - sd.link_vel0[env, i]) / dt
        ctl.link_force[env, i] = wp.vec3(0.0)
        ctl.link_torque[env, i] = wp.vec3(0.0)
    return fresh


@wp.func
def _sleep(
    tree: Tree,
    st: StateArrays,
    kin: Kin,
    sc: Scratch,
    sd: StepData,
    env: int,
    n: int,
    dt: float,
    sleep_threshold: float,
) -> None:
    """PhysX's sleep check on the velocities the positions were integrated with; an env that falls asleep has its
    velocities and accelerations zeroed."""
    # link_vel0 is free again: it takes the velocities the positions were integrated with, for the sleep test
    link_velocities_env(tree, kin, sd.gen_vpos, 1, st.root_lin_vel, st.root_ang_vel, sc.link_v, sd.link_vel0, env)
    if _sleep_check(tree, st, sd.link_vel0, env, dt, sleep_threshold):
        st.sleeping[env] = 1
        for d in range(n):
            st.joint_qd[env, d] = 0.0
            sd.joint_acceleration[env, d] = 0.0
        for t in range(tree.tree_count):
            st.root_lin_vel[env, t] = wp.vec3(0.0)
            st.root_ang_vel[env, t] = wp.vec3(0.0)
        for i in range(tree.link_count):
            st.link_velocity[env, i] = wp.spatial_vector()
            sd.link_acceleration[env, i] = wp.spatial_vector()


def _make_step(stop_after: int, module: str | None = None) -> wp.Kernel:
    """The step kernel, run up to and including stage `stop_after` (STAGES): the stage profile's stops are settled
    when the kernel is compiled (wp.static), since tested at run time they cost the 64-env ur5 step 14 %."""

    def _step(
        env_offset: int,
        tree: Tree,
        dp: DofParams,
        rows: DofRows,
        cr: CouplingRows,
        geo: Geometry,
        cp: ContactPoints,
        ct: ContactRows,
        ps: PenetrationStatus,
        jt: BodyJointTable,
        ja: BodyJointArrays,
        st: StateArrays,
        ctl: ControlArrays,
        kin: Kin,
        kin_sub: Kin,
        sc: Scratch,
        sd: StepData,
        dz: DeadzoneTable,
        rf: RowForm,
        da: DirectArrays,
        gravity: wp.vec3,
        dt: float,
        solver: int,
        n_pos: int,
        n_vel: int,
        tolerance: float,
        sleep_threshold: float,
        bounce_threshold: float,
        friction_correlation: float,
        keep_speculative: int,
        status_mode: int,
    ):
        # long function: the pipeline reads top to bottom as the module docstring lists it, and the solver calls stay in
        # the kernel's body (a stage passing the row tables through costs a copy of each per step: module docstring)
        env = env_offset + wp.tid()
        if st.sleeping[env] != 0:
            return
        if wp.static(stop_after == STAGE_NONE):
            return
        if status_mode == STATUS_FREEZE and st.status[env] != 0:
            return  # frozen at its last finite state until a reset (status.py)
        tgs = int(solver == SOLVER_TGS)
        n = st.joint_q.shape[1]
        n_gen = sd.gen_v.shape[1]
        # 1. the start state, kinematics and link velocities; contact points
        _begin_step(tree, dp, st, kin, sc, sd, env, n, n_gen)
        if wp.static(stop_after == STAGE_KINEMATICS):
            return
        # the step's dt: only the speculative contacts that could act in it (collision/reach.py); 0: every one, as
        # under couplings, through which a leader's command moves its followers at once
        reach_dt = dt * float(1 - keep_speculative) * float(cr.row_count == 0)
        if reach_dt > 0.0:  # the links whose pairs are all kept
            mark_links(cp, sd, env, tree.link_count)
            _mark_joined_links(jt, sd, env)
        detect_env(geo, cp, st.link_pose, env, tree, dp, st, ctl, kin, sd, gravity, reach_dt)
        if wp.static(stop_after == STAGE_COLLIDE):
            return
        if status_mode != STATUS_OFF and track_penetration(cp, ps, env) != 0:
            st.status_flag[0] = 1  # bodies sunk into each other, for the host to report (status.py)
            if status_mode == STATUS_FREEZE and st.status[env] == 0:
                st.status[env] = -CONTACT_PENETRATION
                return  # frozen before this step changed anything
        # 2. unconstrained forward dynamics: v* = v + a dt
        _unconstrained_dynamics(tree, dp, st, ctl, cp, kin, sc, sd, gravity, dt, env, n, n_gen)
        if wp.static(stop_after == STAGE_DYNAMICS):
            return
        # 3. M (M^-1 where the solver reads it) and every row at the solver step h (dt, or the TGS substep)
        dense = _dense_minv(dp, cr, jt, n, solver)
        _mass_matrix(tree, st, ctl, kin, sc, sd, env, dt, dense)
        if wp.static(stop_after == STAGE_MASS):
            return
        h = wp.where(tgs != 0, dt / float(n_pos), dt)
        _setup_dofs(tree, dp, rows, st, ctl, sd, env, n, h, dt, tgs, dense)
        _setup_couplings(tree, cr, kin, st, sd, env, n_gen, dt, dense)
        setup_contacts(
            tree,
            kin,
            geo,
            cp,
            ct,
            st.link_pose,
            sc.link_v,
            sd.minv,
            sd.gen_v,
            env,
            n_gen,
            dt,
            bounce_threshold,
            friction_correlation,
            dense,
        )
        _setup_joints(tree, jt, ja, kin, st, sc, sd, env, n_gen, h, dt, tgs, int(solver != SOLVER_DIRECT))
        if wp.static(stop_after == STAGE_SETUP):
            return
        # 4-5. solve and integrate (PGS and the direct solver integrate once, with the position-iteration velocity)
        if tgs != 0:
            tgs_solve(
                tree, dp, rows, cr, cp, ct, jt, ja, sd, kin_sub, st.joint_q, st.root_pose, env, n_gen, dt, n_pos, n_vel
            )
            if dp.passive != 0:
                tgs_mujoco_damping(tree, dp, st, kin, sd, env, dt, n_gen)
            if wp.static(stop_after == STAGE_SOLVE):
                return  # (TGS's substeps have integrated the positions already)
        else:
            if solver == SOLVER_DIRECT:
                direct_solve(
                    tree,
                    dp,
                    rows,
                    cr,
                    cp,
                    ct,
                    jt,
                    ja,
                    kin,
                    dz,
                    sd,
                    rf,
                    da,
                    st.joint_q,
                    st.link_pose,
                    ctl.joint_target_velocity,
                    env,
                    n_gen,
                    dt,
                    n_pos,
                    n_vel,
                    tolerance,
                    dense,
                )
            else:
                pgs_solve(tree, dp, rows, cr, cp, ct, jt, ja, sd, st.joint_q, env, n_gen, dt, n_pos, n_vel, tolerance)
            # both integrate once, with the position-iteration velocity; the flag is tested here because Warp passes
            # the structs by value: a call that returns at once still copies them (6 % of a 64-env panda step)
            if dp.passive != 0:
                mujoco_damping(tree, dp, st, kin, sd, env, dt, 1)
                if solver == SOLVER_DIRECT:
                    refresh_slot_rates(jt, ja, rf, da, sd, env)
            if wp.static(stop_after == STAGE_SOLVE):
                return
            integrate_positions(tree, st.joint_q, st.root_pose, sd.gen_vpos, sd.dof_dq, dt, env)
        _write_velocities(tree, st, sd, env, n)
        if _check_status(tree, st, kin, sc, sd, env, n, status_mode) != 0:
            return  # frozen: restored to its start
        if wp.static(stop_after == STAGE_INTEGRATE):
            return
        # 6. what the step reports, the end kinematics, sleep
        track = int(status_mode != STATUS_OFF)
        if _report(tree, cp, ct, jt, ja, st, ctl, kin, sc, sd, env, n, n_gen, dt, track) != 0:
            st.status_flag[0] = 1  # a joint's violation for the host to report (status.py)
            if status_mode == STATUS_FREEZE and st.status[env] == 0:
                st.status[env] = -JOINT_VIOLATION
                _restore_start(tree, kin, sc, st, sd, env, n)
                update_body_joint_coordinates(jt, ja, st.link_pose, env, 0)
                return
        _sleep(tree, st, kin, sc, sd, env, n, dt, sleep_threshold)

    kernel = wp.kernel(_step, module=module)
    if module is not None:  # the stage profile's own modules compile as the step's
        _struct_refs(kernel.module)
    return kernel


_step = _make_step(STAGE_ALL)


@functools.cache
def _profile_step(stop_after: int) -> wp.Kernel:
    """A kernel that stops after stage `stop_after`, for the stage profile only: in a module of its own, so that the
    step's module is not compiled again."""
    return _make_step(stop_after, module="unique")


def record_step(
    block: Block,
    dt: float,
    solver_type: SolverType,
    status_mode: int,
    rows_direct: tuple[RowForm, DirectArrays],
    stop_after: int = STAGE_ALL,
) -> RecordedEnvLaunch:
    """The step of every env of `block` (sim/block.py) as one recorded launch; rows_direct: the (RowForm,
    DirectArrays) the direct solver uses (a one-row placeholder for PGS and TGS); stop_after: the last stage run
    (STAGES; only the stage profile stops early)."""
    n_pos, n_vel = block.iteration_counts()
    rf, da = rows_direct
    return RecordedEnvLaunch(
        _step if stop_after == STAGE_ALL else _profile_step(stop_after),
        block.num_envs,
        [
            block.model.tree,
            block.dof_params,
            block.dof_rows,
            block.couplings,
            block.geometry,
            block.contact_points,
            block.contact_rows,
            block.penetration,
            block.body_joint_table,
            block.body_joint_arrays,
            block.state.arrays,
            block.control.arrays,
            block.data.kin,
            block.substep_kin,
            block.data.scratch,
            block.step_data,
            block.deadzones,
            rf,
            da,
            wp.vec3(*block.gravity),
            float(dt),
            int(solver_type),
            int(n_pos),
            int(n_vel),
            float(block.solver_tolerance()),
            float(block.sleep_threshold()),
            BOUNCE_THRESHOLD,
            float(block.friction_correlation_distance),
            int(block.keep_speculative),
            int(status_mode),
        ],
        block.device,
    )


# -- the stages' parts ---------------------------------------------------------------------------------------------


@wp.func
def _gen_to_vec3(gen: wp.array2d(dtype=float), env: int, k: int) -> wp.vec3:
    return wp.vec3(gen[env, k], gen[env, k + 1], gen[env, k + 2])


@wp.func
def _kinematic_roots(tree: Tree, st: StateArrays, ctl: ControlArrays, sd: StepData, env: int, dt: float) -> None:
    """Kinematic trees: nothing moves them (their block of M^-1 is zero, pgs.dense_inverse, and the direct solver's
    factor's, so no row impulse reaches them) and their root velocity is the one that carries the pose to its
    target in dt (zero without a target), which contact rows see as the body's motion (PhysX's kinematic target
    velocity)."""
    for t in range(tree.tree_count):
        if tree.tree_kinematic[t] != 0:
            root = tree.tree_root[t]
            rg = tree.link_root_gen[root]
            lin = wp.vec3(0.0)
            ang = wp.vec3(0.0)
            if ctl.kinematic_pending[env, t] != 0:
                x = st.root_pose[env, t]
                xt = ctl.kinematic_target[env, t]
                com = tree.link_com_local[root]
                lin = (wp.transform_point(xt, com) - wp.transform_point(x, com)) / dt
                dq = wp.transform_get_rotation(xt) * wp.quat_inverse(wp.transform_get_rotation(x))
                if dq[3] < 0.0:
                    dq = -dq  # the short way round
                ang = quat_log(wp.normalize(dq)) / dt
            for k in range(3):
                sd.gen_v[env, rg + k] = lin[k]
                sd.gen_v[env, rg + 3 + k] = ang[k]
            ctl.kinematic_pending[env, t] = 0


@wp.func
def _setup_joints(
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    st: StateArrays,
    sc: Scratch,
    sd: StepData,
    env: int,
    n_gen: int,
    h: float,
    dt: float,
    tgs: int,
    gauss_seidel: int,
) -> None:
    """The body joints' rows at the step's start, with the links' J-dot q-dot that MuJoCo-soft rows cancel (from
    the velocity-product accelerations the unconstrained step's ABA left in sc.link_c)."""
    if jt.joint_count > 0:
        link_bias_accelerations_env(tree, sc.link_c, sd.link_bias, env)
    setup_body_joints(
        tree,
        jt,
        ja,
        kin,
        st.link_pose,
        sd.minv,
        sd.gen_v0,
        sc.link_v,
        sd.link_bias,
        env,
        n_gen,
        h,
        dt,
        tgs,
        gauss_seidel,
    )


@wp.func
def _setup_dofs(
    tree: Tree,
    dp: DofParams,
    rows: DofRows,
    st: StateArrays,
    ctl: ControlArrays,
    sd: StepData,
    env: int,
    n: int,
    h: float,
    dt: float,
    tgs: int,
    dense: int,
) -> None:
    """Limit errors, drive errors and (`dense`) responses and drive coefficients; zero accumulators (physx-notes
    2.3-2.5, 3.1)."""
    for d in range(n):
        q = st.joint_q[env, d]
        sd.dof_err_low[env, d] = q - dp.dof_limit_low[d]
        sd.dof_err_high[env, d] = dp.dof_limit_high[d] - q
        soft = soft_limit_row(
            dp.dof_limit_soft[d],
            sd.dof_err_low[env, d],
            sd.dof_err_high[env, d],
            sd.gen_v0[env, tree.dof_gen[d]],
            dp.dof_inverse_weight[d],
            dt,
        )
        sd.dof_soft_target[env, d] = soft[0]
        sd.dof_soft_cfm[env, d] = soft[1]
        sd.dof_dq[env, d] = 0.0
        geom = ctl.joint_target_position[env, d] - q
        if dp.dof_quat_drive[d] != 0:
            i = dp.dof_link[d]
            d0 = tree.joint_dof_start[i]
            nd = tree.joint_dof_count[i]
            target = wp.vec3(0.0)
            for k in range(nd):
                if dp.dof_drive[d0 + k] != DRIVE_NONE:
                    target += unit(tree.dof_axis[d0 + k]) * ctl.joint_target_position[env, d0 + k]
            rel = quat_exp(joint_rotation_vector(st.joint_q, env, d0, nd, tree.dof_axis))
            geom = spherical_drive_error(rel, target)[tree.dof_axis[d]]
        sd.dof_geom_error[env, d] = geom
    if dense != 0:
        dof_responses(tree, dp, sd, ctl.joint_target_velocity, env, h, dt, tgs)
    for r in range(rows.row_count):
        sd.row_lambda[env, r] = 0.0
        sd.row_lambda2[env, r] = 0.0


@wp.func
def _restore_start(tree: Tree, kin: Kin, sc: Scratch, st: StateArrays, sd: StepData, env: int, n: int) -> None:
    """Put back the state the step started from (a frozen env's last finite state), with its link poses and
    velocities, and zero what the step reported."""
    for d in range(n):
        st.joint_q[env, d] = sd.q0[env, d]
        st.joint_qd[env, d] = sd.gen_v0[env, tree.dof_gen[d]]
        sd.joint_acceleration[env, d] = 0.0
    for t in range(tree.tree_count):
        st.root_pose[env, t] = sd.root_pose0[env, t]
        rg = tree.link_root_gen[tree.tree_root[t]]
        if rg >= 0:
            st.root_lin_vel[env, t] = _gen_to_vec3(sd.gen_v0, env, rg)
            st.root_ang_vel[env, t] = _gen_to_vec3(sd.gen_v0, env, rg + 3)
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    link_velocities_env(tree, kin, st.joint_qd, 0, st.root_lin_vel, st.root_ang_vel, sc.link_v, st.link_velocity, env)
    for i in range(tree.link_count):
        sd.link_acceleration[env, i] = wp.spatial_vector()
        sd.link_incoming_joint_force[env, i] = wp.spatial_vector()


@wp.func
def _incoming_joint_forces(tree: Tree, kin: Kin, sc: Scratch, st: StateArrays, sd: StepData, env: int) -> None:
    """Force each inbound joint transmits to its child (RNEA of the realized motion), in the child joint frame."""
    for i in range(tree.link_count):
        if tree.link_parent[i] < 0:
            sd.link_incoming_joint_force[env, i] = wp.spatial_vector()
            continue
        f = sc.link_f[env, i]
        xj = st.link_pose[env, i] * wp.transform_inverse(tree.joint_child_pose_inv[i])
        anchor = wp.transform_get_translation(xj) - kin.origin[env]
        force = wp.spatial_bottom(f)
        torque = wp.spatial_top(f) - wp.cross(anchor, force)
        rot = wp.transform_get_rotation(xj)
        sd.link_incoming_joint_force[env, i] = wp.spatial_vector(
            wp.quat_rotate_inv(rot, force), wp.quat_rotate_inv(rot, torque)
        )


@wp.func
def _sleep_check(
    tree: Tree,
    st: StateArrays,
    link_velocity: wp.array2d(dtype=wp.spatial_vector),
    env: int,
    dt: float,
    threshold: float,
) -> bool:
    """PhysX's wake-counter rule with the articulation's threshold; True when the env falls asleep. link_velocity:
    the links' position-iteration velocities, which PhysX's sleep test reads (5.8 FeatherstoneArticulation::
    getMotionVelocity returns getPosIterMotionVelocities()): a dof moving back from beyond its limit keeps it
    awake."""
    energy = float(0.0)
    for i in range(tree.link_count):
        v = link_velocity[env, i]
        q = wp.transform_get_rotation(st.link_pose[env, i]) * tree.link_com_rot[i]
        wb = wp.quat_rotate_inv(q, wp.spatial_bottom(v))
        inv_mass = float(1.0)
        if tree.link_mass[i] > 0.0:
            inv_mass = 1.0 / tree.link_mass[i]
        e = 0.5 * (
            wp.dot(wp.cw_mul(wb, wb), tree.link_principal_inertia[i]) * inv_mass
            + wp.dot(wp.spatial_top(v), wp.spatial_top(v))
        )
        energy = wp.max(energy, e)
    wc = st.wake_counter[env]
    if (wc < 0.5 * WAKE_COUNTER_RESET or wc < dt) and energy >= threshold:
        factor = float(2.0)
        if threshold > 0.0:
            factor = wp.min(energy / threshold, 2.0)
        wc = factor * 0.5 * WAKE_COUNTER_RESET
    else:
        wc = wp.max(wc - dt, 0.0)
    st.wake_counter[env] = wc
    return wc <= 0.0
