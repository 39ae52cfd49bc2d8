"""The per-env arrays of a scene, allocated and filled from the descriptions: an articulation's or a block's state,
controls and Data (core/), the step's own arrays, the contact buffers, the direct solver's workspace, and the
byte counts the memory check (sim/memory.py) compares with the device before any of them is allocated.

Every array has a leading env dimension E. Sizes: L links, n dofs, N generalized dofs, T trees, C contact slots.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ...collision.contacts import ContactPoints
from ...collision.geometry import MANIFOLD_POINTS, MATERIAL_SIZE, ContactMaterial, Geometry
from ...constraints.contact_arrays import ContactRows, vec6
from ...constraints.contact_status import PenetrationStatus
from ...constraints.row_form import RowForm
from ...core.control import ArticulationControl
from ...core.data import ArticulationData, Kin, StepData
from ...core.model import ArticulationModel
from ...core.state import ArticulationState
from ...description.articulation import Articulation
from ...solvers.direct_arrays import DirectArrays
from ...solvers.free_factor import FactorMemo

_FLOAT = 4  # bytes: every array but the direct solver's workspace is float32 or int32 based


def _zeros(shape, dtype, device) -> wp.array:
    return wp.zeros(shape, dtype=dtype, device=device)


# -- state, controls and Data ----------------------------------------------------------------------------------------


def description_state(art: Articulation) -> dict:
    """The description's state (joint positions/velocities set on joints, root pose) as one env's NumPy arrays."""
    topo = art._topology()
    q = np.zeros(art.dof_count, np.float32)
    qd = np.zeros(art.dof_count, np.float32)
    for i, link in enumerate(topo.links):
        for k, a in enumerate(topo.dof_axes[i]):
            q[topo.dof_start[i] + k] = link.inbound_joint.get_joint_position(a)
            qd[topo.dof_start[i] + k] = link.inbound_joint.get_joint_velocity(a)
    return {"joint_q": q, "joint_qd": qd, "root_pose": art.root_global_pose.as_array().astype(np.float32)}


def build_state(model: ArticulationModel, num_envs: int, device: wp.Device | str | None) -> ArticulationState:
    """Zeroed state arrays for a model (one articulation or a forest)."""
    e, n, nl, nt = num_envs, model.dof_count, model.link_count, model.tree_count
    s = ArticulationState(
        joint_q=wp.zeros((e, n), dtype=wp.float32, device=device),
        joint_qd=wp.zeros((e, n), dtype=wp.float32, device=device),
        root_pose=wp.zeros((e, nt), dtype=wp.transform, device=device),
        root_lin_vel=wp.zeros((e, nt), dtype=wp.vec3, device=device),
        root_ang_vel=wp.zeros((e, nt), dtype=wp.vec3, device=device),
        link_pose=wp.zeros((e, nl), dtype=wp.transform, device=device),
        link_velocity=wp.zeros((e, nl), dtype=wp.spatial_vector, device=device),
        wake_counter=wp.zeros(e, dtype=wp.float32, device=device),
        sleeping=wp.zeros(e, dtype=wp.int32, device=device),
        status=wp.zeros(e, dtype=wp.int32, device=device),
        status_flag=wp.zeros(1, dtype=wp.int32, device=device),
    )
    s.bundle()
    return s


def _write_column(arr: wp.array, values: np.ndarray, dof: int | None) -> None:
    """One field of every env from the description's values: all of it, or one dof's column."""
    if dof is None:
        arr.assign(np.broadcast_to(values, arr.shape).copy())
        return
    a = arr.numpy()
    a[:, dof] = values[dof]
    arr.assign(a)


def write_description_state(s: ArticulationState, art: Articulation, part: tuple | None = None) -> None:
    """Copy the description's state into every env (used on add and when a joint setter changes it): all of it, or
    only `part` = (field, dof column), e.g. ("joint_q", 3) after one joint position was set."""
    d = description_state(art)
    e = s.joint_q.shape[0]
    if part is not None and part[0] != "root_pose":
        field, dof = part
        _write_column(getattr(s, field), d[field], dof)
        return
    s.root_pose.assign(np.tile(d["root_pose"], (e, 1)).reshape(e, 1, 7))
    if part is None:
        s.joint_q.assign(np.tile(d["joint_q"], (e, 1)))
        s.joint_qd.assign(np.tile(d["joint_qd"], (e, 1)))


def description_targets(art: Articulation) -> tuple[np.ndarray, np.ndarray]:
    topo = art._topology()
    pos = np.zeros(art.dof_count, np.float32)
    vel = np.zeros(art.dof_count, np.float32)
    for i, link in enumerate(topo.links):
        for k, a in enumerate(topo.dof_axes[i]):
            pos[topo.dof_start[i] + k] = link.inbound_joint.get_drive_target(a)
            vel[topo.dof_start[i] + k] = link.inbound_joint.get_drive_velocity(a)
    return pos, vel


def build_control(model: ArticulationModel, num_envs: int, device: wp.Device | str | None) -> ArticulationControl:
    """Zeroed control arrays for a model (one articulation or a forest)."""
    e, n, nl = num_envs, model.dof_count, model.link_count
    c = ArticulationControl(
        joint_force=wp.zeros((e, n), dtype=wp.float32, device=device),
        joint_target_position=wp.zeros((e, n), dtype=wp.float32, device=device),
        joint_target_velocity=wp.zeros((e, n), dtype=wp.float32, device=device),
        link_force=wp.zeros((e, nl), dtype=wp.vec3, device=device),
        link_torque=wp.zeros((e, nl), dtype=wp.vec3, device=device),
        link_adhesion=wp.zeros((e, nl), dtype=wp.float32, device=device),
        kinematic_target=wp.zeros((e, model.tree_count), dtype=wp.transform, device=device),
        kinematic_pending=wp.zeros((e, model.tree_count), dtype=wp.int32, device=device),
    )
    c.bundle()
    return c


def write_description_targets(c: ArticulationControl, art: Articulation, part: tuple | None = None) -> None:
    """Copy the description's drive targets into every env: all of them, or only `part` = (field, dof column)."""
    pos, vel = description_targets(art)
    if part is not None:
        field, dof = part
        _write_column(getattr(c, field), pos if field == "joint_target_position" else vel, dof)
        return
    e = c.joint_force.shape[0]
    c.joint_target_position.assign(np.tile(pos, (e, 1)))
    c.joint_target_velocity.assign(np.tile(vel, (e, 1)))


def build_data(
    m: ArticulationModel, num_envs: int, device: wp.Device | str | None, inverse_dynamics: bool = True
) -> ArticulationData:
    """Data arrays for a model; a block's (inverse_dynamics False) leaves out the Jacobian and centroidal ones."""
    e, n_l, n_d, n_g = num_envs, m.link_count, m.dof_count, m.gen_count
    rows = 6 * (n_l if m.floating else n_l - 1) if inverse_dynamics else 0
    n_c = n_g if inverse_dynamics else 0

    def z(shape, dtype):
        return wp.zeros(shape, dtype=dtype, device=device)

    d = ArticulationData(
        origin=z(e, wp.vec3),
        link_com=z((e, n_l), wp.vec3),
        link_inertia=z((e, n_l), wp.mat33),
        link_origin=z((e, n_l), wp.vec3),
        comp_mass=z((e, n_l), wp.float32),
        comp_h=z((e, n_l), wp.vec3),
        comp_j=z((e, n_l), wp.mat33),
        dof_motion=z((e, n_d), wp.spatial_vector),
        link_v=z((e, n_l), wp.spatial_vector),
        link_a=z((e, n_l), wp.spatial_vector),
        link_f=z((e, n_l), wp.spatial_vector),
        link_c=z((e, n_l), wp.spatial_vector),
        link_ia=z((e, n_l), wp.spatial_matrix),
        link_dinv=z((e, n_l), wp.mat33),
        link_u=z((e, n_l), wp.vec3),
        dof_u=z((e, n_d), wp.spatial_vector),
        gen_v=z((e, n_g), wp.float32),
        gen_a=z((e, n_g), wp.float32),
        gen_f=z((e, n_g), wp.float32),
        link_fext=z((e, n_l), wp.spatial_vector),
        mass_matrix=z((e, n_g, n_g), wp.float32),
        jacobian=z((e, rows, n_c), wp.float32),
        com=z(e, wp.vec3),
        centroidal_matrix=z((e, 6, n_c), wp.float32),
        centroidal_bias=z((e, 6), wp.float32),
        joint_acceleration=z((e, n_d), wp.float32),
        link_acceleration=z((e, n_l), wp.spatial_vector),
        link_incoming_joint_force=z((e, n_l), wp.spatial_vector),
    )
    d.bundle()
    return d


def build_step_data(data: ArticulationData, row_count: int, coupling_count: int, tree_count: int) -> StepData:
    """The step's arrays: those it shares with the inverse-dynamics API plus its own."""
    e, n = data.joint_acceleration.shape
    n_g = data.gen_v.shape[1]
    device = data.gen_v.device
    sd = StepData()
    for name in (
        "gen_v",
        "gen_a",
        "gen_f",
        "link_fext",
        "mass_matrix",
        "joint_acceleration",
        "link_acceleration",
        "link_incoming_joint_force",
    ):
        setattr(sd, name, getattr(data, name))
    sd.gen_v0 = wp.zeros((e, n_g), dtype=wp.float32, device=device)
    sd.gen_vpos = wp.zeros((e, n_g), dtype=wp.float32, device=device)
    sd.solver_iterations = wp.zeros(e, dtype=wp.int32, device=device)
    sd.q0 = wp.zeros((e, n), dtype=wp.float32, device=device)
    sd.root_pose0 = wp.zeros((e, tree_count), dtype=wp.transform, device=device)
    sd.link_vel0 = wp.zeros_like(data.link_v)
    sd.dof_command0 = wp.full((e, n), wp.vec3(1.0e30), dtype=wp.vec3, device=device)  # no step yet
    sd.link_struck = wp.zeros(data.link_v.shape, dtype=wp.int32, device=device)
    sd.link_pose_sub = wp.zeros(data.link_v.shape, dtype=wp.transform, device=device)
    sd.link_bias = wp.zeros_like(data.link_v)
    sd.minv = wp.zeros_like(data.mass_matrix)
    for name in (
        "dof_r",
        "dof_recip",
        "dof_geom_error",
        "dof_err_low",
        "dof_err_high",
        "dof_soft_target",
        "dof_soft_cfm",
        "dof_dq",
        "dof_friction_force",
    ):
        setattr(sd, name, wp.zeros((e, n), dtype=wp.float32, device=device))
    sd.dof_drive_coef = wp.zeros((e, n), dtype=wp.types.vector(length=5, dtype=float), device=device)
    sd.cpl_g = wp.zeros((e, coupling_count, n_g), dtype=wp.float32, device=device)
    sd.cpl_minv_g = wp.zeros((e, coupling_count, n_g), dtype=wp.float32, device=device)
    for name in ("cpl_r", "cpl_acc", "cpl_acc2", "cpl_len", "cpl_soft_target", "cpl_soft_cfm"):
        setattr(sd, name, wp.zeros((e, coupling_count), dtype=wp.float32, device=device))
    sd.row_lambda = wp.zeros((e, row_count), dtype=wp.float32, device=device)
    sd.row_lambda2 = wp.zeros((e, row_count), dtype=wp.float32, device=device)
    return sd


def build_substep_kin(data: ArticulationData) -> Kin:
    """The kinematics of the TGS substeps' poses (the body joints' rows, solvers/tgs.py): origin, COMs and motion
    columns per env; no inertias nor link origins (placeholders)."""
    e, n_l = data.link_com.shape
    device = data.link_com.device
    kin = Kin()
    kin.origin = wp.zeros(e, dtype=wp.vec3, device=device)
    kin.link_com = wp.zeros((e, n_l), dtype=wp.vec3, device=device)
    kin.link_inertia = wp.zeros((1, 1), dtype=wp.mat33, device=device)
    kin.link_origin = wp.zeros((1, 1), dtype=wp.vec3, device=device)
    kin.dof_motion = wp.zeros_like(data.dof_motion)
    return kin


# -- contacts and the direct solver -----------------------------------------------------------------------------


def build_contact_points(
    num_envs: int, capacity: int, geom_count: int, device: wp.Device | str | None
) -> ContactPoints:
    """Zeroed contact points for `num_envs` envs of `capacity` slots (at least one, as Warp has no empty arrays) and
    the detection's `geom_count` centres (shapes and links)."""
    e, c = num_envs, max(capacity, 1)
    cp = ContactPoints()
    cp.count, cp.dynamic_count, cp.overflow = _zeros(e, int, device), _zeros(e, int, device), _zeros(e, int, device)
    cp.wanted, cp.grow = _zeros(e, int, device), _zeros(1, int, device)
    for name in ("link_a", "link_b", "shape_a", "shape_b", "rank"):
        setattr(cp, name, _zeros((e, c), int, device))
    for name in ("point", "normal"):
        setattr(cp, name, _zeros((e, c), wp.vec3, device))
    cp.material = _zeros((e, c), ContactMaterial, device)
    cp.separation = _zeros((e, c), float, device)
    cp.geom_center = _zeros((e, max(geom_count, 1)), wp.vec3, device)
    return cp


def build_penetration_status(num_envs: int, device: wp.Device | str | None) -> PenetrationStatus:
    """Zeroed per-env penetration status (constraints/contact_status.py)."""
    ps = PenetrationStatus()
    ps.depth = _zeros(num_envs, float, device)
    ps.links = _zeros(num_envs, wp.vec2i, device)
    ps.track = _zeros(num_envs, wp.vec4, device)
    ps.violated = _zeros(num_envs, int, device)
    return ps


def build_contact_rows(
    num_envs: int, capacity: int, n_gen: int, device: wp.Device | str | None, angular: bool = False
) -> ContactRows:
    """Zeroed contact rows (three per slot over N generalized dofs) and friction anchors; with `angular`, three
    angular rows and six edges per slot for torsional and rolling friction (else one-entry placeholders)."""
    e, c = num_envs, max(capacity, 1)
    ct = ContactRows()
    ea, ca, na = (e, c, n_gen) if angular else (1, 1, 1)
    ct.ang_edges = _zeros((e, c), int, device)
    ct.ang_g, ct.ang_minv_g = _zeros((ea, 3 * ca, na), float, device), _zeros((ea, 3 * ca, na), float, device)
    ct.ang_target, ct.ang_impulse = _zeros((ea, ca), vec6, device), _zeros((ea, ca), vec6, device)
    ct.prev_count = _zeros(e, int, device)
    ct.edge_target, ct.edge_impulse = _zeros((e, c), wp.vec4, device), _zeros((e, c), wp.vec4, device)
    for name in ("anchor", "broken", "prev_shape_a", "prev_shape_b", "prev_anchor", "pyramid"):
        setattr(ct, name, _zeros((e, c), int, device))
    ct.anchor_error = _zeros((e, c), wp.vec2, device)
    for name in ("tangent", "force", "anchor_a", "anchor_b", "prev_anchor_a", "prev_anchor_b"):
        setattr(ct, name, _zeros((e, c), wp.vec3, device))
    ct.gap, ct.bounce = _zeros((e, c), float, device), _zeros((e, c), float, device)
    ct.soft_target, ct.soft_cfm = _zeros((e, c), float, device), _zeros((e, c), float, device)
    ct.g, ct.minv_g = _zeros((e, 3 * c, n_gen), float, device), _zeros((e, 3 * c, n_gen), float, device)
    ct.response, ct.impulse = _zeros((e, 3 * c), float, device), _zeros((e, 3 * c), float, device)
    ct.delassus = _zeros((e, 3 * c, 3 * MANIFOLD_POINTS), float, device)
    return ct


def build_direct(
    num_envs: int, capacity: int, n_gen: int, deadzones: int, device: wp.Device | str | None, contact_slots: int = 0
) -> tuple[RowForm, DirectArrays]:
    """(RowForm, DirectArrays) for `num_envs` envs of `capacity` rows each, `contact_slots` of their contacts."""
    e, m, n = num_envs, max(capacity, 1), max(n_gen, 1)

    def z(shape, dtype=wp.float32):
        return wp.zeros(shape, dtype=dtype, device=device)

    rf = RowForm()
    rf.count = z(e, wp.int32)
    rf.g = z((e, m, n))
    for name in ("target", "cfm", "target_vel", "cfm_vel", "lo", "hi", "mu_static", "mu_dynamic"):
        setattr(rf, name, z((e, m)))
    for name in ("findex", "fcount", "source_kind", "source_index"):
        setattr(rf, name, z((e, m), wp.int32))
    da = DirectArrays()
    d = wp.float64
    da.a, da.chol = z((e, m, m), d), z((e, m, m), d)
    da.b, da.lo, da.hi, da.x, da.y = z((e, m), d), z((e, m), d), z((e, m), d), z((e, m), d), z((e, 4 * m), d)
    da.state, da.free = z((e, m), wp.int32), z((e, m), wp.int32)
    da.nfree = wp.full(e, -1, dtype=wp.int32, device=device)
    da.resp = z((e, m), d)
    da.nz, da.nnz, da.u64 = z((e, m, n), wp.int32), z((e, m), wp.int32), z((e, m, n), d)
    da.row_trees = z((e, m), wp.vec4i)
    da.cap = z(e, d)
    da.last_x, da.last_source, da.last_count = z((e, m), d), z((e, m), wp.int32), z(e, wp.int32)
    da.v_star = z((e, n))
    da.v_free, da.factor64, da.fold_scratch = z((e, n), d), z((e, n, n), d), z((e, n), d)
    da.fold_src, da.fold_col, da.fold_row = z((e, m), wp.int32), z((e, m), wp.int32), z((e, m, 5))
    da.fold_count, da.fold_exceeded, da.rows_energy = z(e, wp.int32), z(e, wp.int32), z(e)
    da.fold_x, da.box_x = z((e, m), d), z((e, m), d)
    da.memo = FactorMemo()
    da.memo.free, da.memo.dependent, da.memo.count = z((e, m), wp.int32), z((e, m), wp.int32), z(e, wp.int32)
    da.carried = wp.full((e, n), np.nan, dtype=wp.float32, device=device)
    for name in ("pivots", "rows", "settled", "budget_hit", "fallback", "fallback_count", "cone_sweeps", "polished"):
        setattr(da, name, z(e, wp.int32))
    da.complementarity = z(e)
    da.any_fallback = z(2, wp.int32)
    da.contact_slots = contact_slots
    da.wanted = z(e, wp.int32)
    da.bilateral_residual = z(e)
    da.deadzone_impulse = z((e, max(deadzones, 1)))
    da.pivot_limit = 0
    da.friction_directions = 2
    return rf, da


def direct_bytes_per_env(capacity: int, n_gen: int) -> int:
    """Bytes one env of build_direct's arrays takes: the rows (float32 and int32) and the solver's float64 workspace
    (A and the Cholesky factor dominate: 16 M^2 bytes)."""
    m, n = max(capacity, 1), max(n_gen, 1)
    # + one float per deadzone controller
    return 4 * (2 * m * n + 29 * m + 2 * n + 18) + 8 * (2 * m * m + m * n + n * n + 12 * m + 2 * n + 1)


# -- what they will take ---------------------------------------------------------------------------------------


def bytes_per_env(link_count: int, dof_count: int, floating: bool) -> int:
    """Lower bound of the bytes one env of one articulation occupies (see the module docstring)."""
    nl, n = link_count, dof_count
    ng = n + (6 if floating else 0)
    rows = 6 * (nl if floating else nl - 1)  # dense Jacobian rows
    data = 123 * nl + 13 * n + 3 * ng + ng * ng  # ArticulationData: per-link spatial quantities, per-dof, M
    inverse_dynamics = rows * ng + 6 * ng  # the view's Jacobian and centroidal matrix
    state = 13 * nl + 2 * n + 13  # link poses and velocities, q, qd, root pose and velocities
    control = 3 * n + 6 * nl  # joint forces and targets, link forces and torques
    step = ng * ng + 2 * ng + 6 * nl  # M^-1, velocities at the start of the step
    return _FLOAT * (2 * data + inverse_dynamics + state + control + step)


def block_bytes_per_env(arts: list[Articulation], joints: list) -> int:
    """Lower bound of the bytes one env of a block (the articulations and bodies stepped together, sim/block.py)
    takes by its first step: the forest's Data, state and controls, the step's own arrays and the body joints'
    arrays. Two terms grow faster than the bodies: M and M^-1 with the square of the block's generalized dofs N,
    and each body-joint row's direction and M^-1 g with N (a block of 50 free bodies joined to each other: N = 300,
    ~0.7 MB per env). Contact slots and the direct solver's workspace are checked when they are allocated."""
    nl = sum(a.link_count for a in arts)
    n = sum(a.dof_count for a in arts)
    nt = len(arts)
    ng = n + 6 * sum(1 for a in arts if not a.fix_base)
    coords = sum(j.num_coordinates for j in joints)
    rows = sum(2 * j.num_coordinates + j.bilateral_count for j in joints)
    data = 115 * nl + 13 * n + 3 * ng + ng * ng + 12  # build_data without the inverse-dynamics arrays
    state = 13 * nl + 2 * n + 13 * nt + 12  # with the penetration status
    control = 3 * n + 6 * nl + 8 * nt
    step = ng * ng + 2 * ng + 16 * nl + 18 * n + 7 * nt + 3  # M^-1, the per-dof arrays, substep kinematics
    body_joints = 7 * coords + 88 * len(joints) + rows * (2 * ng + 29)  # build_body_joint_arrays
    return _FLOAT * (data + state + control + step + body_joints)


def step_bytes_per_env(model: ArticulationModel, row_count: int, coupling_count: int) -> int:
    """Bytes one env of the step's own arrays takes (build_step_data; those it shares with the inverse-dynamics
    API are counted by bytes_per_env): float32 or int32 values."""
    n, g, nl = model.dof_count, model.gen_count, model.link_count
    values = (
        2 * g
        + n
        + 7 * model.tree_count
        + 23 * nl  # (the last: reach.py's link marks)
        + 3
        + 1  # solver_iterations
        + g * g
        + 23 * n  # velocities, q0, root poses, link velocities and bias accelerations, substep kinematics, M^-1, dofs
        # (the last 3: the commands the speculative contacts' reach compares with, collision/reach.py)
        + 2 * coupling_count * g
        + 4 * coupling_count
        + 2 * row_count
    )  # coupling and joint rows
    return 4 * values


def detection_centers(geometry: Geometry) -> int:
    """The narrow phase's per-env centres of a block's Geometry: one per shape, then one per link (narrow.py)."""
    return geometry.geom_link.shape[0] + geometry.link_center.shape[0]


def contact_bytes_per_env(capacity: int, gen_count: int, angular: bool = False, geom_count: int = 0) -> int:
    """Bytes one env of the contact buffers takes (build_contact_points and build_contact_rows): 5 counters, per slot
    12 int, 8 vec3, a material (MATERIAL_SIZE floats), a vec2, 2 vec4 and 5 floats, and 3 rows with their
    generalized directions (2 N) and patch Delassus entries; with `angular`, 3 angular rows (2 N: g and M^-1 g) and 2
    vec6 more; a vec3 per shape (its centre)."""
    c = max(capacity, 1)
    values = 5 + c * (12 + 24 + MATERIAL_SIZE + 2 + 8 + 5) + 3 * c * (2 * gen_count + 2 + 3 * MANIFOLD_POINTS)
    values += 3 * max(geom_count, 1)
    if angular:
        values += c * 12 + 3 * c * 2 * gen_count
    return 4 * values
