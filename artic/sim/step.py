"""`Scene.step` for one block (the articulations that may touch each other, block.py): the whole step for one env
in one thread, all envs in one kernel launch.

Pipeline (physx-notes 0 and 9.1; the PhysX guide, "Constraint Sequence"):
 1. velocity pre-scale, kinematics and link velocities at the start of the step, collision detection;
 2. unconstrained forward dynamics (ABA) with gravity, user link forces and persistent joint forces, damping and
    max-velocity forces, Coriolis and gyroscopic terms and armature: v* = v + a dt;
 3. setup: M and M^-1 (dense, per env), per-dof responses, drive coefficients, limit errors and the joint forces
    the coefficient friction scales with (RNEA with the unconstrained accelerations);
 4. PGS or TGS iterations over the body joints, the contacts, the coupling rows (tendons, mimic joints) and the
    joint rows (solvers/);
 5. integration (PGS: once, with the position-iteration velocity; TGS: per substep), state write-back;
 6. reported quantities (joint and link accelerations, incoming joint forces, body joint wrenches), kinematics
    and body joint coordinates at the end, and the sleep check (physx-notes 3.7).
The launch is recorded once per time step size and replayed (warp-notes), in env chunks on every CPU
core (parallel.py): a step allocates nothing.
"""

from __future__ import annotations

from ..enums import SolverType

import warp as wp

from ..collision.geometry import MANIFOLD_POINTS, Contacts, Geometry, build_contacts, build_geometry
from ..collision.narrow import detect_env
from ..constraints.contact_rows import finish_contacts, setup_contacts
from ..constraints.coupling_rows import CouplingRows, build_coupling_rows, setup_couplings
from ..constraints.drive import drive_coefficients, spherical_drive_error
from ..constraints.dof_rows import DRIVE_NONE, ROW_FRICTION, JointRows, build_joint_rows
from ..constraints.deadzone_rows import DeadzoneTable, build_deadzone_table
from ..constraints.row_form import RowForm
from ..constraints.body_joint_rows import LoopArrays, LoopTable, finish_loop_forces, setup_loops, update_loop_coordinates
from ..core.control import ControlArrays
from ..core.data import Kin, Scratch, StepData, build_step_data
from ..dynamics.aba import aba_env
from ..dynamics.crba import crba_env
from ..dynamics.forward import applied_link_wrench, prescale_joint_velocities
from ..dynamics.integrate import integrate_positions, quat_log
from ..dynamics.kinematics import forward_kinematics_env, joint_rotation_vector, link_velocities_env, quat_exp
from ..dynamics.rnea import rnea_env
from ..math.dense import spd_inverse
from ..errors import ArticError, ValidationError
from .memory import allocation_errors, check_fits
from ..math.spatial import unit
from ..core.model import Tree
from ..core.parallel import RecordedEnvLaunch
from ..solvers.direct import DirectArrays, build_direct, direct_bytes_per_env, direct_solve
from ..solvers.pgs import pgs_solve
from ..solvers.tgs import tgs_solve
from ..core.state import StateArrays
from . import status
from .status import STATUS_CHECK, STATUS_FREEZE, STATUS_OFF, state_status

wp.set_module_options({"enable_backward": False})

WAKE_COUNTER_RESET = 0.4  # PxSceneDesc::wakeCounterResetValue [s]
SOLVER_TGS = wp.constant(1)
SOLVER_DIRECT = wp.constant(2)
BOUNCE_THRESHOLD = 2.0  # PxSceneDesc::bounceThresholdVelocity = 0.2 * PxTolerancesScale::speed (10) [m/s]


@wp.func
def _gen_to_vec3(gen: wp.array2d(dtype=float), env: int, k: int):
    return wp.vec3(gen[env, k], gen[env, k + 1], gen[env, k + 2])


@wp.func
def _setup_dofs(tree: Tree, rows: JointRows, st: StateArrays, ctl: ControlArrays, sd: StepData, env: int, n: int,
                h: float, dt: float, tgs: int):
    """Responses, drive coefficients, limit errors; zero accumulators (physx-notes 2.3-2.5, 3.1)."""
    for d in range(n):
        r = sd.minv[env, tree.dof_gen[d], tree.dof_gen[d]]
        recip = float(0.0)
        if tree.dof_axis[d] >= 3 or r > 0.0:
            recip = 1.0 / (r + rows.dof_cfm[d])
        sd.dof_r[env, d] = r
        sd.dof_recip[env, d] = recip
        q = st.joint_q[env, d]
        sd.dof_err_low[env, d] = q - rows.dof_limit_low[d]
        sd.dof_err_high[env, d] = rows.dof_limit_high[d] - q
        sd.dof_dq[env, d] = 0.0
        geom = ctl.joint_target_position[env, d] - q
        if rows.dof_quat_drive[d] != 0:
            i = rows.dof_link[d]
            d0 = tree.joint_dof_start[i]
            nd = tree.joint_dof_count[i]
            target = wp.vec3(0.0)
            for k in range(nd):
                if rows.dof_drive[d0 + k] != DRIVE_NONE:
                    target += unit(tree.dof_axis[d0 + k]) * ctl.joint_target_position[env, d0 + k]
            rel = quat_exp(joint_rotation_vector(st.joint_q, env, d0, nd, tree.dof_axis))
            geom = spherical_drive_error(rel, target)[tree.dof_axis[d]]
        sd.dof_geom_error[env, d] = geom
        sd.dof_drive_coef[env, d] = drive_coefficients(
            rows.dof_drive[d], rows.dof_stiffness[d], rows.dof_damping[d], ctl.joint_target_velocity[env, d], geom,
            r, recip, h, dt, tgs)
    for r in range(rows.row_count):
        sd.row_lambda[env, r] = 0.0
        sd.row_lambda2[env, r] = 0.0


@wp.func
def _incoming_joint_forces(tree: Tree, kin: Kin, sc: Scratch, st: StateArrays, sd: StepData, env: int):
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
        sd.link_incoming_joint_force[env, i] = wp.spatial_vector(wp.quat_rotate_inv(rot, force),
                                                                 wp.quat_rotate_inv(rot, torque))


@wp.func
def _sleep_check(tree: Tree, st: StateArrays, link_velocity: wp.array2d(dtype=wp.spatial_vector), env: int,
                 dt: float, threshold: float):
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
        e = 0.5 * (wp.dot(wp.cw_mul(wb, wb), tree.link_principal_inertia[i]) * inv_mass
                   + wp.dot(wp.spatial_top(v), wp.spatial_top(v)))
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


@wp.kernel
def _step(
    env_offset: int,
    tree: Tree,
    rows: JointRows,
    cr: CouplingRows,
    geo: Geometry,
    ct: Contacts,
    jt: LoopTable,
    ja: LoopArrays,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
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
    sleep_threshold: float,
    bounce_threshold: float,
    friction_correlation: float,
    status_mode: int,
):
    env = env_offset + wp.tid()
    tgs = int(0)
    if solver == SOLVER_TGS:
        tgs = 1
    if st.sleeping[env] != 0:
        return
    if status_mode == STATUS_FREEZE and st.status[env] != 0:
        return  # frozen at its last finite state until a reset (status.py)
    n = st.joint_q.shape[1]
    n_gen = sd.gen_v.shape[1]
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
    prescale_joint_velocities(tree, rows, sd.gen_v, env, n)

    # 1-2. start kinematics, applied forces, unconstrained accelerations
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    link_velocities_env(tree, kin, sd.gen_v, 1, st.root_lin_vel, st.root_ang_vel, sc.link_v, sd.link_vel0, env)
    detect_env(geo, ct, st.link_pose, env)
    for i in range(tree.link_count):
        sd.link_fext[env, i] = applied_link_wrench(
            tree, rows, i, wp.transform_get_rotation(st.link_pose[env, i]), sd.link_vel0[env, i],
            ctl.link_force[env, i], ctl.link_torque[env, i], gravity, dt)
    for k in range(n_gen):
        sd.gen_f[env, k] = 0.0
    for d in range(n):
        sd.gen_f[env, tree.dof_gen[d]] = ctl.joint_force[env, d]
    zero = wp.vec3(0.0)
    aba_env(tree, kin, sc, sd.gen_v, sd.gen_f, sd.link_fext, zero, 1, sd.gen_a, env, 1)

    # 3. setup
    rnea_env(tree, kin, sc, sd.gen_v, sd.gen_a, sd.link_fext, zero, 1, sd.gen_f, env)
    for d in range(n):
        i = rows.dof_link[d]
        f = sc.link_f[env, i]
        force = wp.spatial_bottom(f)
        torque = wp.spatial_top(f) - wp.cross(kin.link_com[env, i], force)
        sd.dof_friction_force[env, d] = rows.dof_friction_coef[d] * (wp.length(force) + wp.length(torque))
    crba_env(tree, kin, sc, sd.mass_matrix, env)
    for t in range(tree.tree_count):
        spd_inverse(sd.mass_matrix, sd.minv, env, tree.tree_gen_start[t], tree.tree_gen_count[t])
    for k in range(n_gen):
        sd.gen_v[env, k] = sd.gen_v[env, k] + sd.gen_a[env, k] * dt
    _kinematic_roots(tree, st, ctl, sd, env, dt)
    h = dt
    if tgs != 0:
        h = dt / float(n_pos)
    _setup_dofs(tree, rows, st, ctl, sd, env, n, h, dt, tgs)
    setup_couplings(tree, cr, kin, st.link_pose, sd.minv, sd.cpl_g, sd.cpl_minv_g, sd.cpl_r, sd.cpl_len, env, n_gen)
    for k in range(cr.row_count):
        sd.cpl_acc[env, k] = 0.0
        sd.cpl_acc2[env, k] = 0.0
    setup_contacts(tree, kin, ct, st.link_pose, sc.link_v, sd.minv, sd.gen_v, env, n_gen, dt, bounce_threshold,
                   friction_correlation)
    setup_loops(tree, jt, ja, kin, st.link_pose, sd.minv, env, n_gen, h, dt, tgs)

    # 4-5. solve and integrate
    if tgs != 0:
        tgs_solve(tree, rows, cr, ct, jt, ja, sd, st.joint_q, st.root_pose, env, n_gen, dt, n_pos, n_vel)
    elif solver == SOLVER_DIRECT:
        direct_solve(tree, rows, cr, ct, jt, ja, kin, dz, sd, rf, da, st.joint_q, ctl.joint_target_velocity, env,
                     n_gen, dt, n_pos, n_vel)
        integrate_positions(tree, st.joint_q, st.root_pose, sd.gen_vpos, sd.dof_dq, dt, env)
    else:
        pgs_solve(tree, rows, cr, ct, jt, ja, sd, st.joint_q, env, n_gen, dt, n_pos, n_vel)
        integrate_positions(tree, st.joint_q, st.root_pose, sd.gen_vpos, sd.dof_dq, dt, env)
    for d in range(n):
        st.joint_qd[env, d] = sd.gen_v[env, tree.dof_gen[d]]
    for t in range(tree.tree_count):
        rg = tree.link_root_gen[tree.tree_root[t]]
        if rg >= 0:
            st.root_lin_vel[env, t] = _gen_to_vec3(sd.gen_v, env, rg)
            st.root_ang_vel[env, t] = _gen_to_vec3(sd.gen_v, env, rg + 3)

    if status_mode != STATUS_OFF and st.status[env] == 0:
        bad = state_status(tree, st, env)
        if bad != 0:
            st.status[env] = -bad  # negative: not reported yet (status.py)
            st.status_flag[0] = 1  # every writer stores the same value: no atomics needed across CPU chunks
            if status_mode == STATUS_FREEZE:
                _restore_start(tree, kin, sc, st, sd, env, n)
                return

    # 6. reported quantities, end kinematics, sleep
    finish_contacts(ct, env, dt)
    finish_loop_forces(jt, ja, kin, st.link_pose, env, dt)  # start-of-step geometry, as the impulses
    for k in range(n_gen):
        sd.gen_a[env, k] = (sd.gen_v[env, k] - sd.gen_v0[env, k]) / dt
    for d in range(n):
        sd.joint_acceleration[env, d] = sd.gen_a[env, tree.dof_gen[d]]
    rnea_env(tree, kin, sc, sd.gen_v0, sd.gen_a, sd.link_fext, zero, 1, sd.gen_f, env)
    _incoming_joint_forces(tree, kin, sc, st, sd, env)
    forward_kinematics_env(tree, st.joint_q, st.root_pose, st.link_pose, kin, env)
    update_loop_coordinates(jt, ja, st.link_pose, env)
    link_velocities_env(tree, kin, st.joint_qd, 0, st.root_lin_vel, st.root_ang_vel, sc.link_v, st.link_velocity,
                        env)
    for i in range(tree.link_count):
        sd.link_acceleration[env, i] = (st.link_velocity[env, i] - sd.link_vel0[env, i]) / dt
        ctl.link_force[env, i] = wp.vec3(0.0)  # link forces act for one step (PhysX: no eRETAIN_ACCELERATIONS)
        ctl.link_torque[env, i] = wp.vec3(0.0)
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


@wp.func
def _restore_start(tree: Tree, kin: Kin, sc: Scratch, st: StateArrays, sd: StepData, env: int, n: int):
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
    link_velocities_env(tree, kin, st.joint_qd, 0, st.root_lin_vel, st.root_ang_vel, sc.link_v, st.link_velocity,
                        env)
    for i in range(tree.link_count):
        sd.link_acceleration[env, i] = wp.spatial_vector()
        sd.link_incoming_joint_force[env, i] = wp.spatial_vector()


@wp.func
def _kinematic_roots(tree: Tree, st: StateArrays, ctl: ControlArrays, sd: StepData, env: int, dt: float):
    """Kinematic trees: nothing moves them (their block of M^-1 is zero, so no row impulse reaches them) and their
    root velocity is the one that carries the pose to its target in dt (zero without a target), which contact rows
    see as the body's motion (PhysX's kinematic target velocity)."""
    for t in range(tree.tree_count):
        if tree.tree_kinematic[t] != 0:
            g0 = tree.tree_gen_start[t]
            for i in range(tree.tree_gen_count[t]):
                for j in range(tree.tree_gen_count[t]):
                    sd.minv[env, g0 + i, g0 + j] = 0.0
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


def step_bytes_per_env(model, row_count: int, coupling_count: int) -> int:
    """Bytes one env of the step's own arrays takes (data.build_step_data; those it shares with the inverse-dynamics
    API are counted by memory.bytes_per_env): float32 or int32 values."""
    n, g, nl = model.dof_count, model.gen_count, model.link_count
    values = (2 * g + n + 7 * model.tree_count + 6 * nl + g * g + 12 * n  # velocities, q0, root poses, M^-1, dofs
              + 2 * coupling_count * g + 4 * coupling_count + 2 * row_count)  # coupling and joint rows
    return 4 * values


def contact_bytes_per_env(capacity: int, gen_count: int) -> int:
    """Bytes one env of the contact buffer takes (collision.geometry.build_contacts): per slot, 10 int, 9 vec3, a
    vec2 and 2 floats, and 3 rows with their generalized directions (2 N) and patch Delassus entries."""
    c = max(capacity, 1)
    values = 4 + c * (10 + 27 + 2 + 2) + 3 * c * (2 * gen_count + 2 + 3 * MANIFOLD_POINTS)
    return 4 * values


class Stepper:
    """Owns one block's joint rows, coupling rows, collision tables and step arrays, and replays a recorded step
    launch."""

    def __init__(self, block):
        self.block = block
        self.rows = build_joint_rows(block.arts, block.device)
        self.couplings = build_coupling_rows(block.arts, block.device)
        self.deadzones = build_deadzone_table(block.arts, block.joints, block.joint_row_start, block.device)
        self.step_data = self.contacts = None
        self.direct = None  # (RowForm, DirectArrays), built at the first direct step
        self._no_direct = build_direct(1, 1, 1, 1, block.device)  # what PGS and TGS launches pass instead
        self._allocate(step_data=True)
        self._launches = {}

    def _allocate(self, step_data: bool):
        """Build the collision tables, then the per-env contact buffers and (with `step_data`) the step's arrays,
        whose sizes only the joint rows and collision pairs fix: checked against the device's memory first, so that
        a scene too large for its first step gets an ArticError with the figures, not Warp's allocator failure."""
        b = self.block
        geometry, geometry_host, shapes = build_geometry(b.arts, b.statics, b.contact_capacity, b.device,
                                                         b.joint_filters())
        m = b.model
        need = contact_bytes_per_env(geometry.capacity, m.gen_count)
        if step_data:
            need += step_bytes_per_env(m, self.rows.row_count, self.couplings.row_count)
        # the buffers being replaced are freed once the new ones are assigned: count them as available
        if self.contacts is not None:
            need -= contact_bytes_per_env(self.contacts.link_a.shape[1], m.gen_count)
        if step_data and self.step_data is not None:
            need -= step_bytes_per_env(m, self.step_data.row_lambda.shape[1], self.step_data.cpl_r.shape[1])
        owner = "articulation(s) " + ", ".join(f"'{a.name}'" for a in b.arts)
        if need > 0:
            check_fits(owner, b.num_envs, need, b.device, "the step's contact and solver arrays")
        with allocation_errors(owner, b.num_envs):
            sd = build_step_data(b.data, self.rows.row_count, self.couplings.row_count, m.tree_count) \
                if step_data else self.step_data
            contacts = build_contacts(b.num_envs, geometry.capacity, m.gen_count, b.device)
        self.step_data, self.contacts = sd, contacts
        self.direct = None  # its capacity follows the rows and the contact capacity
        self.geometry, self.geometry_host, self.shapes = geometry, geometry_host, shapes
        self._overflow_view = self.contacts.overflow.numpy() if b.device.is_cpu else None  # shares the memory

    def overflow_host(self):
        return self._overflow_view if self._overflow_view is not None else self.contacts.overflow.numpy()

    def refresh(self):
        """Re-read solver parameters after a description change; the set of joint rows may change (a drive
        switched on), and the recorded launches must be recorded again."""
        old = self.rows, self.couplings
        self.rows = build_joint_rows(self.block.arts, self.block.device)
        self.couplings = build_coupling_rows(self.block.arts, self.block.device)
        b = self.block
        self.deadzones = build_deadzone_table(b.arts, b.joints, b.joint_row_start, b.device)
        try:
            self._allocate(step_data=self.rows.row_count != old[0].row_count)
        except ArticError:
            self.rows, self.couplings = old  # the recorded launches keep arrays that match each other
            self.block.mark_dirty()  # and every later step tries again, and raises, until the arrays fit
            raise
        self._launches.clear()

    def direct_capacity(self) -> int:
        """Rows one env's direct solve can have: each joint row (and a second for an effort friction's viscous
        part), two per coupling row (a tendon's spring and its limit), three per contact slot, two per loop row (a
        soft range's two sides) and three per deadzone controller."""
        friction = int((self.rows.row_kind.numpy() == ROW_FRICTION).sum()) if self.rows.row_count else 0
        return (self.rows.row_count + friction + 2 * self.couplings.row_count + 3 * self.geometry.capacity
                + 2 * self.block.loop_table.row_count + 3 * self.deadzones.count)

    def _direct_arrays(self):
        if self.direct is None:
            b = self.block
            cap = self.direct_capacity()
            owner = "articulation(s) " + ", ".join(f"'{a.name}'" for a in b.arts)
            check_fits(owner, b.num_envs, direct_bytes_per_env(cap, b.model.gen_count), b.device,
                       f"the direct solver's arrays ({cap} rows per env)")
            with allocation_errors(owner, b.num_envs):
                self.direct = build_direct(b.num_envs, cap, b.model.gen_count, self.deadzones.count, b.device)
            self._launches = {k: v for k, v in self._launches.items() if k[1] != int(SolverType.DIRECT)}
        return self.direct

    def direct_report(self) -> dict | None:
        """The direct solver's per-env report of the last direct step (NumPy copies), None before one."""
        if self.direct is None:
            return None
        da = self.direct[1]
        return {"pivots": da.pivots.numpy().copy(), "rows": da.rows.numpy().copy(),
                "complementarity": da.complementarity.numpy().copy(), "friction_settled": da.settled.numpy() != 0,
                "pivot_budget_hit": da.budget_hit.numpy() != 0,
                "fell_back": da.fallback.numpy() != 0, "fallback_count": da.fallback_count.numpy().copy(),
                "deadzone_impulse": da.deadzone_impulse.numpy()[:, :self.deadzones.count].copy()}

    def step(self, dt: float, solver_type: SolverType, freeze: bool = False, pivot_limit: int = 0):
        mode = (STATUS_FREEZE if freeze else STATUS_CHECK) if status.CHECK_STATE else STATUS_OFF
        key = (dt, int(solver_type), mode, pivot_limit)
        if solver_type != SolverType.DIRECT and self.deadzones.count:
            names = ", ".join(f"'{a.name}'" for a in self.block.arts) or "a body joint"
            raise ValidationError(f"scene: articulation(s) {names} or their body joints have deadzone controllers, "
                                  "which only the direct solver solves; set scene.solver_type = "
                                  "artic.SolverType.DIRECT (or remove them with set_deadzone(..., None))")
        direct = self._direct_arrays() if solver_type == SolverType.DIRECT else self._no_direct
        direct[1].pivot_limit = pivot_limit  # captured by value when the launch below is recorded
        cmd = self._launches.get(key)
        if cmd is None:
            b = self.block
            n_pos, n_vel = b.iteration_counts()
            cmd = RecordedEnvLaunch(
                _step, b.num_envs,
                [b.model.tree, self.rows, self.couplings, self.geometry, self.contacts, b.loop_table, b.loop,
                 b.state.arrays,
                 b.control.arrays, b.data.kin, b.data.scratch, self.step_data, self.deadzones, direct[0], direct[1],
                 wp.vec3(*b.gravity), float(dt),
                 int(solver_type), int(n_pos), int(n_vel), float(b.sleep_threshold()), BOUNCE_THRESHOLD,
                 float(b.friction_correlation_distance), mode],
                b.device)
            self._launches[key] = cmd
        cmd.launch()
