"""`Block`: articulations that may touch each other, stepped together as one forest, and every device array of it.

Contact between two articulations (or rigid bodies, which are one-link articulations) couples their velocities, so
the solver must see both in the same Gauss-Seidel sweep. A block concatenates its articulations into one forest
model (core/model.py): trees one after the other, each with its own generalized coordinates, M block-diagonal. It
owns all of the forest's arrays for every env: the model and its parameters, the state, controls and Data, the row
tables (dof rows, couplings, deadzones, body joints), the collision tables and contact buffers, the step's
intermediates and the direct solver's workspace; and it replays the recorded step launch (step_kernel.py). Each
articulation's view reads and writes its columns of the state and controls (core/state.py: state_view), so there
is no copying between the two; each body joint's view reads its columns of the body-joint arrays
(body_joint_view.py). The scene groups articulations into blocks (grouping.py); an articulation alone in its block
steps exactly as it did before blocks existed.

The step's arrays are built at the first step (or the first read of contacts), when the collision pairs and rows
are known; a description change rebuilds the tables at the next step or read (`mark_dirty`, `sync`).

PhysX solves an island with the largest iteration counts of its articulations and lets it sleep when all of them
may; a block does the same (its sleep threshold is the smallest of its articulations').
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..collision.geometry import MAT_CONDIM, MAT_PYRAMID, MATERIAL_SIZE
from ..constraints.body_joint_rows import BODY_ROW_DRIVE, BODY_ROW_RANGE
from ..constraints.dof_rows import ROW_FRICTION
from ..core.control import control_view
from ..core.host_views import host_view
from ..core.model import DRIVE_NONE
from ..core.state import columns, state_view
from ..description.actors import RigidStatic
from ..description.articulation import Articulation, Link
from ..description.body_joints import JointBase
from ..enums import SolverType
from ..errors import ArticError, ValidationError
from . import status
from .builders.arrays import (
    build_contact_points,
    build_contact_rows,
    build_control,
    build_data,
    build_direct,
    build_penetration_status,
    build_state,
    build_step_data,
    build_substep_kin,
    contact_bytes_per_env,
    detection_centers,
    direct_bytes_per_env,
    step_bytes_per_env,
)
from .builders.body_joints import build_body_joint_arrays, build_body_joint_table
from .builders.geometry import build_geometry
from .builders.model import build_dof_rows, build_model, forest_links, refresh_model
from .builders.rows import build_coupling_rows, build_deadzone_table
from .memory import allocation_errors, check_fits
from .status import STATUS_CHECK, STATUS_FREEZE, STATUS_OFF
from .step_kernel import WAKE_COUNTER_RESET, record_step

DIRECT_START_BYTES = 64 << 20  # the most a block's direct arrays start with, for all its envs [bytes]
DIRECT_MIN_CONTACTS = 16  # contacts its direct rows have room for at least (or its contact slots, if fewer)


class Block:
    def __init__(
        self,
        arts: list[Articulation],
        joints: list[JointBase],
        num_envs: int,
        gravity: tuple[float, float, float],
        device: wp.Device,
        statics: list[RigidStatic],
        contact_capacity: int,
        friction_correlation_distance: float,
        keep_speculative: bool = False,
    ):
        self.arts = list(arts)
        self.joints = list(joints)  # the body joints between its bodies (or from them to fixed bodies)
        self.num_envs = num_envs
        self.gravity = tuple(float(g) for g in gravity)
        self.device = device
        self.statics = statics  # the scene's RigidStatic actors (a shared list)
        self.contact_capacity = contact_capacity  # slots per env: the scene's, then grown (plan_contact_growth)
        self.friction_correlation_distance = friction_correlation_distance  # [m]
        # every speculative contact (PhysX), else only the pairs whose gap the step could close (Scene docstring)
        self.keep_speculative = keep_speculative
        self.model = build_model(self.arts, device)
        self.state = build_state(self.model, num_envs, device)
        # on the CPU, a NumPy view of the step's status flag (status.py), read after every step without a copy
        self.status_flag_host = self.state.status_flag.numpy() if device.is_cpu else None
        self.steps = 0  # steps launched (the articulation views' _catch_up)
        self._flag_views = None  # memoryviews of the flags a step raises, for `quiet` (None: to make)
        self.control = build_control(self.model, num_envs, device)
        self.penetration = build_penetration_status(num_envs, device)  # constraints/contact_status.py
        self.data = build_data(self.model, num_envs, device, inverse_dynamics=False)
        self.link_start, self.dof_start = [], []
        links = dofs = 0
        for art in self.arts:
            self.link_start.append(links)
            self.dof_start.append(dofs)
            links, dofs = links + art.link_count, dofs + art.dof_count
        self.link_index = {
            id(link): start + art._topology().link_index[link]
            for art, start in zip(self.arts, self.link_start)
            for link in art.get_links()
        }
        _, self.link_movable, self.link_rank = forest_links(self.arts)
        self.body_joint_table = self._build_body_joint_table()
        t = self.body_joint_table
        self.body_joint_arrays = build_body_joint_arrays(
            num_envs, t.joint_count, t.coord_count, t.row_count, self.model.gen_count, device
        )
        self.joint_coord_start, self.joint_row_start = [], []
        coords = rows = 0
        for joint in self.joints:
            self.joint_coord_start.append(coords)
            self.joint_row_start.append(rows)
            coords += joint.num_coordinates
            rows += 2 * joint.num_coordinates + joint.bilateral_count
        # the step's arrays, built at the first step (_ensure_step_arrays)
        self.dof_params = self.dof_rows = self.couplings = self.deadzones = None
        self.geometry = self.geometry_host = self.shapes = None
        self.contact_points = self.contact_rows = self.step_data = None
        self.substep_kin = None  # the TGS substeps' kinematics (body joints), built with step_data
        self.direct = None  # (RowForm, DirectArrays), built at the first direct step
        self.fallback_host = None  # its any-fallback flags, seen from NumPy on the CPU (_direct_arrays)
        self._direct_contacts = 0  # contacts steps asked its rows to have room for (plan_direct_growth)
        self._fallbacks = None  # fallback counts of the direct arrays last replaced, carried into the new ones
        self.direct_grow_failed = False  # its rows could not grow (memory): StepWarnings said so once
        self._direct_to = 0  # contacts the next step's direct rows have room for (plan_direct_growth)
        self._no_direct = None  # a one-row (RowForm, DirectArrays) that PGS and TGS launches pass instead
        self._overflow_view = self._grow_view = self._grow_pinned = None
        self.contact_grow_failed = False  # the slots could not grow (memory): StepWarnings said so once
        self._contacts_to = 0  # slots the next step starts with, when a step wanted more (plan_contact_growth)
        self._launches = {}  # recorded step launches by (dt, solver, status mode, pivot limit)
        self._last_launch = None  # (step's arguments, key, launch) of the last step (step's fast path)
        self.friction_directions = 2  # the direct solver's friction rows per contact anchor (direct_capacity)
        self._angular = False  # the contact rows hold torsional and rolling edges (_allocate)
        self._dirty = False  # a description parameter changed since the model was uploaded

    def _build_body_joint_table(self):
        tree = self.model.tree
        start, count = tree.tree_gen_start.numpy(), tree.tree_gen_count.numpy()
        link_tree = tree.link_tree.numpy()
        span = np.stack([start[link_tree], count[link_tree]], axis=1) if len(link_tree) else np.zeros((0, 2), int)
        return build_body_joint_table(
            self.joints, self.link_index, self.link_rank, self.link_movable, span, self.device
        )

    def joint_filters(self) -> tuple[set, set]:
        """Body pairs a joint keeps from colliding (unless it has collision_enabled): forest link pairs, and
        (forest link, id of a RigidStatic) pairs."""
        links, statics = set(), set()
        for joint in self.joints:
            if joint.collision_enabled:
                continue
            a, b = (self.link_index[id(x)] if isinstance(x, Link) else x for x in (joint.body_a, joint.body_b))
            if isinstance(a, int) and isinstance(b, int):
                links.add(frozenset((a, b)))
            elif isinstance(a, int) and isinstance(b, RigidStatic):
                statics.add((a, id(b)))
            elif isinstance(b, int) and isinstance(a, RigidStatic):
                statics.add((b, id(a)))
        return links, statics

    def joint_ranges(self, joint: JointBase) -> tuple[int, tuple[int, int], tuple[int, int]]:
        """(joint index, coordinate range, row range) of a body joint in this block."""
        j = next(i for i, x in enumerate(self.joints) if x is joint)
        k, r = self.joint_coord_start[j], self.joint_row_start[j]
        return j, (k, k + joint.num_coordinates), (r, r + 2 * joint.num_coordinates + joint.bilateral_count)

    def index(self, art: Articulation) -> int:
        return next(t for t, a in enumerate(self.arts) if a is art)

    def ranges(self, art: Articulation) -> tuple[tuple[int, int], tuple[int, int], int]:
        """(dof range, link range, tree index) of an articulation in the forest."""
        t = self.index(art)
        d, lk = self.dof_start[t], self.link_start[t]
        return (d, d + art.dof_count), (lk, lk + art.link_count), t

    def views(self, art: Articulation) -> tuple:
        """The articulation's state and control (views of the block's arrays) and its reported step outputs."""
        dofs, links, t = self.ranges(art)
        outputs = {
            "joint_acceleration": columns(self.data.joint_acceleration, *dofs),
            "link_acceleration": columns(self.data.link_acceleration, *links),
            "link_incoming_joint_force": columns(self.data.link_incoming_joint_force, *links),
        }
        return state_view(self.state, dofs, links, t), control_view(self.control, dofs, links, t), outputs

    def link_owner(self, link: int) -> str:
        """How messages name a block link: its articulation and link ('the ground' for -1, a static shape)."""
        if link < 0:
            return "the ground or a static body"
        t = max(k for k, start in enumerate(self.link_start) if start <= link)
        art = self.arts[t]
        name = art.link_names[link - self.link_start[t]]
        return art.name if art.link_count == 1 else f"{art.name}/{name}"

    def owner(self) -> str:
        """How messages name the block: by its articulations."""
        return "articulation(s) " + ", ".join(f"'{a.name}'" for a in self.arts)

    # -- parameters -----------------------------------------------------------------------------------------------
    def iteration_counts(self) -> tuple[int, int]:
        counts = [a.get_solver_iteration_counts() for a in self.arts]
        return max(c[0] for c in counts), max(c[1] for c in counts)

    def solver_tolerance(self) -> float:
        """The strictest of the articulations' (0, run every iteration, if any asks for that)."""
        return min(a.solver_tolerance for a in self.arts)

    def sleep_threshold(self) -> float:
        return min(a.sleep_threshold for a in self.arts)

    def wake(self, envs: np.ndarray) -> None:
        """Wake the envs where `envs` is True (the whole block wakes, as a PhysX island)."""
        if not envs.any():
            return
        wc = host_view(self.state.wake_counter)  # the arrays' own memory on the CPU (no copy back), a copy on a GPU
        sleeping = host_view(self.state.sleeping)
        wc[envs] = np.maximum(wc[envs], WAKE_COUNTER_RESET)
        sleeping[envs] = 0
        if not self.state.sleeping.device.is_cpu:
            self.state.wake_counter.assign(wc)
            self.state.sleeping.assign(sleeping)

    def set_gravity(self, gravity: tuple) -> None:
        self.gravity = gravity
        self._launches.clear()  # the recorded launches hold the old gravity: record them again

    def mark_dirty(self) -> None:
        self._dirty = True

    def sync(self) -> None:
        """Re-upload parameters changed through the descriptions (once, before the next step)."""
        if self._dirty:
            refresh_model(self.model, self.arts)
            self.body_joint_table = self._build_body_joint_table()
            if self.step_data is not None:
                self._rebuild_tables()
            self._dirty = False

    def on_statics_changed(self) -> None:
        if self.step_data is not None:
            self._rebuild_tables()

    # -- the step's arrays ----------------------------------------------------------------------------------------
    def ensure_step_arrays(self) -> None:
        """Build the row tables, collision tables, contact buffers and the step's arrays (once)."""
        self.sync()
        if self.step_data is None:
            self._build_rows()
            self._no_direct = build_direct(1, 1, 1, 1, self.device)
            self._allocate(step_data=True)

    def _build_rows(self):
        self.dof_params, self.dof_rows = build_dof_rows(self.arts, self.device)
        self.couplings = build_coupling_rows(self.arts, self.device)
        self.deadzones = build_deadzone_table(self.arts, self.joints, self.joint_row_start, self.device)

    def _allocate(self, step_data: bool):
        """Build the collision tables, then the per-env contact buffers and (with `step_data`) the step's arrays,
        whose sizes only the rows and collision pairs fix: checked against the device's memory first, so that a
        scene too large for its first step gets an ArticError with the figures, not Warp's allocator failure."""
        geometry, geometry_host, shapes = build_geometry(
            self.arts, self.statics, self.contact_capacity, self.device, self.joint_filters()
        )
        m = self.model
        angular = self._angular_edges(geometry_host) > 0
        geoms = detection_centers(geometry)
        need = contact_bytes_per_env(geometry.capacity, m.gen_count, angular, geoms)
        if step_data:
            need += step_bytes_per_env(m, self.dof_rows.row_count, self.couplings.row_count)
        # the buffers being replaced are freed once the new ones are assigned: count them as available
        if self.contact_points is not None:
            cp = self.contact_points
            need -= contact_bytes_per_env(cp.link_a.shape[1], m.gen_count, self._angular, cp.geom_center.shape[1])
        if step_data and self.step_data is not None:
            need -= step_bytes_per_env(m, self.step_data.row_lambda.shape[1], self.step_data.cpl_r.shape[1])
        if need > 0:
            check_fits(self.owner(), self.num_envs, need, self.device, "the step's contact and solver arrays")
        with allocation_errors(self.owner(), self.num_envs):
            sd = (
                build_step_data(self.data, self.dof_rows.row_count, self.couplings.row_count, m.tree_count)
                if step_data
                else self.step_data
            )
            if step_data:
                self.substep_kin = build_substep_kin(self.data)
            points = build_contact_points(self.num_envs, geometry.capacity, geoms, self.device)
            rows = build_contact_rows(self.num_envs, geometry.capacity, m.gen_count, self.device, angular)
        self.step_data, self.contact_points, self.contact_rows = sd, points, rows
        self._angular = angular
        self._retire_direct()  # its capacity follows the rows and the contact capacity
        self.geometry, self.geometry_host, self.shapes = geometry, geometry_host, shapes
        self._overflow_view = points.overflow.numpy() if self.device.is_cpu else None  # shares the memory
        self._grow_view = points.grow.numpy() if self.device.is_cpu else None
        self._flag_views = None

    def _rebuild_tables(self):
        """Re-read the row tables after a description change (the set of dof rows may change: a drive switched
        on) and the collision tables after a static actor came or went; the recorded launches are recorded again."""
        old = self.dof_params, self.dof_rows, self.couplings, self.deadzones
        self._build_rows()
        try:
            self._allocate(
                step_data=self.dof_rows.row_count != old[1].row_count
                or self.couplings.row_count != old[2].row_count  # a tendon's rows come or go with its parameters
            )
        except ArticError:
            # the recorded launches keep arrays that match each other, and every later step tries again (and
            # raises) until the arrays fit
            self.dof_params, self.dof_rows, self.couplings, self.deadzones = old
            self.mark_dirty()
            raise
        if self.step_data is not None:  # new gains or masses: the commands' last values bound nothing (reach.py)
            self.step_data.dof_command0.fill_(wp.vec3(1.0e30))
        self._launches.clear()

    def contact_overflow(self) -> np.ndarray | None:
        """Per-env dropped-contact counts of the last step, None when the block has no candidate pairs."""
        if self.geometry is None or self.geometry.pair_count == 0:
            return None
        return self._overflow_view if self._overflow_view is not None else self.contact_points.overflow.numpy()

    def quiet(self) -> bool:
        """True on the CPU when the last step raised none of the flags the scene reads after it (non-finite state or
        violation, direct-solver fallback or rows short of room, contacts short of slots): four memoryview reads
        (~0.1 us) in place of the three checks' (~1.5 us a step). False on a GPU (its checks read pinned copies
        a step late) and whenever a flag is up."""
        views = self._flag_views
        if views is None:
            if not self.device.is_cpu:
                return False
            fallback = self.fallback_host if self.fallback_host is not None else np.zeros(2, np.int32)
            grow = self._grow_view if self._grow_view is not None else np.zeros(1, np.int32)
            views = self._flag_views = (memoryview(self.status_flag_host), memoryview(fallback), memoryview(grow))
        state, fallback, grow = views
        return not (state[0] or fallback[0] or fallback[1] or grow[0])

    def contacts_did_not_fit(self) -> bool:
        """Whether a step since the last plan_contact_growth found more contacts than the slots: one int read, from a
        NumPy view on the CPU, or on a GPU from a pinned host copy queued at the last call (one step late, with no
        synchronization per step, as the status flag: sim/status.py)."""
        if self.geometry is None or self.geometry.pair_count == 0:
            return False
        if self._grow_view is not None:
            return bool(self._grow_view[0] != 0)
        flag = self.contact_points.grow
        if self._grow_pinned is None or self._grow_pinned[0] is not flag:
            self._grow_pinned = (flag, wp.zeros(1, dtype=wp.int32, device="cpu", pinned=True))
        host = self._grow_pinned[1]
        seen = bool(host.numpy()[0])
        wp.copy(host, flag)
        return seen

    def plan_contact_growth(self) -> tuple[int, int, int, int] | None:
        """After a step whose contacts did not fit: the slots the next step gets, as (old slots, new slots, slots
        wanted, envs that wanted more), or None when everything fit. The slots at least double, up to the most the
        block's pairs can make (geometry's capacity_bound); the buffers are replaced when the next step starts, so
        that the last step's contacts can still be read. Why grow rather than size every block for that bound: a
        block's pairs can make far more contacts than any state touches (the dm_control dog: thousands of slots,
        each a generalized row per env), and the step that did not fit already kept the touching contacts
        (collision/narrow.py). Friction anchors and the direct solver's warm start are not carried into the new
        buffers. Raises the memory check's ArticError when the new slots would not fit."""
        self.contact_points.grow.zero_()
        wanted = self.contact_points.wanted.numpy()
        if not wanted.any():  # a GPU's flag read one step late, already handled
            return None
        old = self.contact_points.link_a.shape[1]
        need = int(wanted.max())
        new = min(max(2 * old, need), self.geometry_host["capacity_bound"])
        if new > old:
            g = self.model.gen_count
            more = contact_bytes_per_env(new, g, self._angular) - contact_bytes_per_env(old, g, self._angular)
            if self.direct is not None:  # its rows follow the slots within a budget (direct_contact_slots)
                rows = self.direct_capacity(self.direct_contact_slots(new))
                more += direct_bytes_per_env(rows, g) - direct_bytes_per_env(self.direct_capacity(), g)
            check_fits(self.owner(), self.num_envs, more, self.device, f"{new} contact slots")
            self._contacts_to = new
        return old, max(new, old), need, int((wanted > 0).sum())

    def _grow_contacts(self) -> None:
        """Replace the contact buffers by the planned larger ones (plan_contact_growth) and record the step again."""
        self.contact_capacity, self._contacts_to = self._contacts_to, 0
        self._allocate(step_data=False)
        self._launches.clear()

    def direct_contact_slots(self, slots: int | None = None) -> int:
        """Contacts one env's direct rows have room for, with the block's contact slots (or `slots` of them): the
        slots, or as many as keep all envs' direct arrays within DIRECT_START_BYTES (at least DIRECT_MIN_CONTACTS),
        or what steps whose contacts came near that room asked for (plan_direct_growth). Why not always the slots:
        each contact is 5 to 11 rows, A and its factor grow with the rows' square, and the slots cover every pair's
        most contacts (the dm_control dog: 512 slots, 5454 rows, 476 MB an env; the rows it uses standing: 30)."""
        slots = self.geometry.capacity if slots is None else slots
        room, g = slots, self.model.gen_count
        while room > DIRECT_MIN_CONTACTS and (
            self.num_envs * direct_bytes_per_env(self.direct_capacity(room), g) > DIRECT_START_BYTES
        ):
            room //= 2
        return min(slots, max(room, DIRECT_MIN_CONTACTS, self._direct_contacts))

    def plan_direct_growth(self) -> tuple[int, int, int] | None:
        """After a step whose contacts came near the direct rows' room (or beyond it: that env's step was PGS's):
        room for at least 1.5 times the most contacts seen and twice the old, up to what the block's pairs can make,
        for the next steps; returns (old room, new room, most contacts), None when it cannot grow. The arrays are
        replaced when the next step starts (the last step's report stays readable; the warm start is not carried).
        Raises the memory check's ArticError when they would not fit."""
        da = self.direct[1]
        wanted = int(da.wanted.numpy().max())
        da.wanted.zero_()
        old = self.direct_contact_slots()
        new = min(max(2 * old, wanted + wanted // 2), self.geometry_host["capacity_bound"])
        if new <= old:
            return None
        g = self.model.gen_count
        more = direct_bytes_per_env(self.direct_capacity(min(new, self.geometry.capacity)), g)
        if more <= direct_bytes_per_env(self.direct_capacity(), g):
            return None
        check_fits(
            self.owner(), self.num_envs, more - direct_bytes_per_env(self.direct_capacity(), g), self.device,
            f"the direct solver's rows for {new} contacts",
        )  # fmt: skip
        self._direct_to = new
        return old, new, wanted

    def _retire_direct(self) -> None:
        """Drop the direct arrays (rebuilt at the next direct step), keeping their per-env fallback counts."""
        if self.direct is not None:
            self._fallbacks = self.direct[1].fallback_count.numpy().copy()
        self.direct = self.fallback_host = self._last_launch = self._flag_views = None
        self._launches = {k: v for k, v in self._launches.items() if k[1] != int(SolverType.DIRECT)}

    def direct_capacity(self, slots: int | None = None) -> int:
        """Rows one env's direct solve can have: each dof row (and a second for an effort friction's viscous part),
        two per coupling row (a tendon's spring and its limit), one plus friction_directions per contact its rows
        have room for (at least four where a material asks for MuJoCo's pyramidal cone: its edges; `slots`: that
        many contacts instead of direct_contact_slots), one per body-joint row
        (two for a soft range row: its two sides; hardness is fixed when the scene is built, the ranges themselves
        may be set later) and three per deadzone controller. The direct solver's float64 workspace grows with its
        square, and the envs' steps with that footprint (a four-bar at 1024 envs: 13.4 us an env-step with two slots
        per body-joint row, 12.2 with one)."""
        rows = self.dof_rows
        friction = int((rows.row_kind.numpy() == ROW_FRICTION).sum()) if rows.row_count else 0
        per_contact = 1 + self.friction_directions
        for key in ("geom_material", "pair_material"):
            table = np.asarray(self.geometry_host[key], np.float32).reshape(-1, MATERIAL_SIZE)
            if np.any(table[:, MAT_PYRAMID] != 0.0):  # either of MuJoCo's cones (the elliptic: at most 3 + 3)
                per_contact = max(per_contact, 4 + self._angular_edges(self.geometry_host))
        return (
            rows.row_count
            + friction
            + 2 * self.couplings.row_count
            + per_contact * (self.direct_contact_slots() if slots is None else slots)
            + self._body_joint_slots()
            + 3 * self.deadzones.count
        )

    @staticmethod
    def _angular_edges(geometry_host: dict) -> int:
        """The most torsional and rolling edges a contact of the block can have (constraints/pyramid.py): 6 with a
        condim-6 material (rolling friction acts there), 2 with a condim-4 one (torsional), else 0: a lower condim's
        values are latent (narrow._angular_by_condim)."""
        most = 0
        for key in ("geom_material", "pair_material"):
            table = np.asarray(geometry_host[key], np.float32).reshape(-1, MATERIAL_SIZE)
            if np.any(table[:, MAT_CONDIM] > 5.5):
                most = 6
            elif np.any(table[:, MAT_CONDIM] > 3.5):
                most = max(most, 2)
        return most

    def _body_joint_slots(self) -> int:
        """Rows the joints between bodies can make: one per row, two for a soft range (add_body_joint_rows), none
        for the drive row of an undriven coordinate (its drive type is the table's: a change rebuilds it and these
        arrays; the ranges are per env and may be set at any time, so every range row keeps its slot)."""
        jt = self.body_joint_table
        if jt.row_count == 0:
            return 0
        kind, erp = jt.row_kind.numpy(), jt.row_erp.numpy()
        soft = np.where(erp >= 0.0, jt.row_cfm.numpy() > 0.0, jt.row_compliance.numpy() > 0.0)
        drives = jt.row_coord.numpy()[kind == BODY_ROW_DRIVE]  # the other rows' coordinate may be -1
        undriven = int(np.sum(jt.coord_drive.numpy()[drives] == DRIVE_NONE)) if drives.size else 0
        return jt.row_count + int(np.sum((kind == BODY_ROW_RANGE) & soft)) - undriven

    def _direct_arrays(self) -> tuple:
        if self.direct is None:
            cap = self.direct_capacity()
            check_fits(
                self.owner(),
                self.num_envs,
                direct_bytes_per_env(cap, self.model.gen_count),
                self.device,
                f"the direct solver's arrays ({cap} rows per env)",
            )
            with allocation_errors(self.owner(), self.num_envs):
                self.direct = build_direct(
                    self.num_envs, cap, self.model.gen_count, self.deadzones.count, self.device,
                    self.direct_contact_slots(),
                )  # fmt: skip
            if self._fallbacks is not None:
                self.direct[1].fallback_count.assign(self._fallbacks)
                self._fallbacks = None
            # on the CPU, a NumPy view of the flag a step raises when an env falls back, which the scene reads after
            # every direct step: making one costs ~4 us, a sixth of a small robot's step (reports.py)
            self.fallback_host = self.direct[1].any_fallback.numpy() if self.device.is_cpu else None
            self._flag_views = None
        return self.direct

    # -- stepping ---------------------------------------------------------------------------------------------------
    def step(
        self, dt: float, solver_type: SolverType, freeze: bool = False, pivot_limit: int = 0, directions: int = 2
    ) -> None:
        """One step of every env: the recorded launch of step_kernel.py for this dt and solver; the direct solver's
        with `directions` friction rows per contact anchor (a change rebuilds its arrays: their rows follow it)."""
        self.steps += 1
        args = (dt, solver_type, freeze, pivot_limit, directions, status.CHECK_STATE)
        fast = self._last_launch
        # the same step as the last one, with nothing rebuilt, regrown or changed since (every such change clears or
        # replaces the recorded launches): its launch again without the checks below (~1 us of a 15 us step)
        if fast is not None and fast[0] == args and not (self._dirty or self._contacts_to or self._direct_to):
            if self._launches.get(fast[1]) is fast[2]:
                fast[2].launch()
                return
        self.ensure_step_arrays()
        if directions != self.friction_directions:
            self.friction_directions = directions
            self._retire_direct()
        if self._contacts_to:
            self._grow_contacts()
        if self._direct_to:
            self._direct_contacts, self._direct_to = self._direct_to, 0
            self._retire_direct()
        mode = (STATUS_FREEZE if freeze else STATUS_CHECK) if status.CHECK_STATE else STATUS_OFF
        key = (dt, int(solver_type), mode, pivot_limit)
        if solver_type != SolverType.DIRECT and self.deadzones.count:
            names = ", ".join(f"'{a.name}'" for a in self.arts) or "a body joint"
            raise ValidationError(
                f"scene: articulation(s) {names} or their body joints have deadzone controllers, "
                "which only the direct solver solves; set scene.solver_type = "
                "artic.SolverType.DIRECT (or remove them with set_deadzone(..., None))"
            )
        direct = self._direct_arrays() if solver_type == SolverType.DIRECT else self._no_direct
        direct[1].pivot_limit = pivot_limit  # captured by value when the launch below is recorded
        direct[1].friction_directions = directions
        cmd = self._launches.get(key)
        if cmd is None:
            cmd = self._launches[key] = record_step(self, dt, solver_type, mode, direct)
        self._last_launch = (args, key, cmd)
        cmd.launch()
