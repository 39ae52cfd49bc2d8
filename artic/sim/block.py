"""`Block`: articulations that may touch each other, stepped together as one forest.

Contact between two articulations (or rigid bodies, which are one-link articulations) couples their velocities, so
the solver must see both in the same Gauss-Seidel sweep. A block concatenates its articulations into one forest
model (model.py): trees one after the other, each with its own generalized coordinates, M block-diagonal. It owns
the state, control and step arrays of the forest for every env; each articulation's view reads and writes its
columns of them (state.state_view), so there is no copying between the two. The scene groups articulations into
blocks by whether any of their shapes can collide or a body joint connects them (scene.py); an articulation alone
in its block steps exactly as it did before blocks existed. The block also owns its body joints' tables and
per-env arrays (constraints/loop_rows.py); each joint's view reads its columns of them (joint_view.py).

PhysX solves an island with the largest iteration counts of its articulations and lets it sleep when all of them
may; a block does the same (its sleep threshold is the smallest of its articulations').
"""

from __future__ import annotations

import numpy as np

from ..collision.geometry import forest_links
from ..constraints.body_joint_rows import build_loop_arrays, build_loop_table
from ..description.actors import RigidStatic
from ..description.articulation import Articulation, Link
from ..core.control import ControlArrays, build_control, control_view
from ..core.data import build_data
from ..core.model import build_model, refresh_model
from ..core.state import build_state, columns, state_view
from .step import WAKE_COUNTER_RESET, Stepper


class Block:
    def __init__(self, arts: list[Articulation], joints: list, num_envs: int, gravity, device, statics,
                 contact_capacity: int, friction_correlation_distance: float):
        self.arts = list(arts)
        self.joints = list(joints)  # the body joints between its bodies (or from them to fixed bodies)
        self.num_envs = num_envs
        self.gravity = tuple(float(g) for g in gravity)
        self.device = device
        self.statics = statics  # the scene's RigidStatic actors (a shared list)
        self.contact_capacity = contact_capacity
        self.friction_correlation_distance = friction_correlation_distance  # [m]
        self.model = build_model(self.arts, device)
        self.state = build_state(self.model, num_envs, device)
        # on the CPU, a NumPy view of the step's status flag (status.py), read after every step without a copy
        self.status_flag_host = self.state.status_flag.numpy() if device.is_cpu else None
        self.control = build_control(self.model, num_envs, device)
        self.data = build_data(self.model, num_envs, device, inverse_dynamics=False)
        self.link_start, self.dof_start = [], []
        links = dofs = 0
        for art in self.arts:
            self.link_start.append(links)
            self.dof_start.append(dofs)
            links, dofs = links + art.link_count, dofs + art.dof_count
        self.link_index = {id(link): start + art._topology().link_index[link]
                           for art, start in zip(self.arts, self.link_start) for link in art.get_links()}
        _, self.link_movable, self.link_rank = forest_links(self.arts)
        self.loop_table = self._build_loop_table()
        t = self.loop_table
        self.loop = build_loop_arrays(num_envs, t.joint_count, t.coord_count, t.row_count, self.model.gen_count,
                                      device)
        self.joint_coord_start, self.joint_row_start = [], []
        coords = rows = 0
        for joint in self.joints:
            self.joint_coord_start.append(coords)
            self.joint_row_start.append(rows)
            coords += joint.num_coordinates
            rows += 2 * joint.num_coordinates + joint.bilateral_count
        self.stepper = None  # built at the first step
        self._dirty = False  # a description parameter changed since the model was uploaded

    def _build_loop_table(self):
        tree = self.model.tree
        start, count = tree.tree_gen_start.numpy(), tree.tree_gen_count.numpy()
        link_tree = tree.link_tree.numpy()
        span = np.stack([start[link_tree], count[link_tree]], axis=1) if len(link_tree) else np.zeros((0, 2), int)
        return build_loop_table(self.joints, self.link_index, self.link_rank, self.link_movable, span, self.device)

    def joint_filters(self) -> tuple[set, set]:
        """Body pairs a joint keeps from colliding (unless it has collision_enabled): forest link pairs, and
        (forest link, id of a RigidStatic) pairs."""
        links, statics = set(), set()
        for joint in self.joints:
            if joint.collision_enabled:
                continue
            ends = [self.link_index[id(b)] if isinstance(b, Link) else b for b in (joint.body_a, joint.body_b)]
            a, b = ends
            if isinstance(a, int) and isinstance(b, int):
                links.add(frozenset((a, b)))
            elif isinstance(a, int) and isinstance(b, RigidStatic):
                statics.add((a, id(b)))
            elif isinstance(b, int) and isinstance(a, RigidStatic):
                statics.add((b, id(a)))
        return links, statics

    def joint_ranges(self, joint):
        """(joint index, coordinate range, row range) of a body joint in this block."""
        j = next(i for i, x in enumerate(self.joints) if x is joint)
        k, r = self.joint_coord_start[j], self.joint_row_start[j]
        return j, (k, k + joint.num_coordinates), (r, r + 2 * joint.num_coordinates + joint.bilateral_count)

    def index(self, art: Articulation) -> int:
        return next(t for t, a in enumerate(self.arts) if a is art)

    def ranges(self, art: Articulation):
        """(dof range, link range, tree index) of an articulation in the forest."""
        t = self.index(art)
        d, lk = self.dof_start[t], self.link_start[t]
        return (d, d + art.dof_count), (lk, lk + art.link_count), t

    def views(self, art: Articulation):
        """The articulation's state and control (views of the block's arrays) and its reported step outputs."""
        dofs, links, t = self.ranges(art)
        outputs = {"joint_acceleration": columns(self.data.joint_acceleration, *dofs),
                   "link_acceleration": columns(self.data.link_acceleration, *links),
                   "link_incoming_joint_force": columns(self.data.link_incoming_joint_force, *links)}
        return state_view(self.state, dofs, links, t), control_view(self.control, dofs, links, t), outputs

    # -- parameters -----------------------------------------------------------------------------------------------
    def iteration_counts(self) -> tuple[int, int]:
        counts = [a.get_solver_iteration_counts() for a in self.arts]
        return max(c[0] for c in counts), max(c[1] for c in counts)

    def sleep_threshold(self) -> float:
        return min(a.sleep_threshold for a in self.arts)

    def wake(self, envs: np.ndarray):
        """Wake the envs where `envs` is True (the whole block wakes, as a PhysX island)."""
        if not np.any(envs):
            return
        wc = self.state.wake_counter.numpy()
        sleeping = self.state.sleeping.numpy()
        wc[envs] = np.maximum(wc[envs], WAKE_COUNTER_RESET)
        sleeping[envs] = 0
        self.state.wake_counter.assign(wc)
        self.state.sleeping.assign(sleeping)

    def mark_dirty(self):
        self._dirty = True

    def sync(self):
        """Re-upload parameters changed through the descriptions (once, before the next step)."""
        if self._dirty:
            refresh_model(self.model, self.arts)
            self.loop_table = self._build_loop_table()
            if self.stepper is not None:
                self.stepper.refresh()
            self._dirty = False

    def on_statics_changed(self):
        if self.stepper is not None:
            self.stepper.refresh()

    # -- stepping and contacts ------------------------------------------------------------------------------------
    def step(self, dt: float, solver_type, freeze: bool = False, pivot_limit: int = 0):
        self.sync()
        self._ensure_stepper()
        self.stepper.step(dt, solver_type, freeze, pivot_limit)

    def _ensure_stepper(self):
        if self.stepper is None:
            self.stepper = Stepper(self)
        return self.stepper

    def contacts(self):
        self.sync()
        return self._ensure_stepper().contacts

    def contact_overflow(self) -> np.ndarray | None:
        """Per-env dropped-contact counts of the last step, None when the block has no candidate pairs."""
        if self.stepper is None or self.stepper.geometry.pair_count == 0:
            return None
        return self.stepper.overflow_host()

    def contact_arrays(self, art: Articulation) -> dict:
        """The contacts that involve `art`, per env, compacted and turned so that link a is art's link (normal
        from the other body towards it, force on it). Link indices are local to their articulation; `other` is
        the other articulation's index in this block (-1 for a static shape)."""
        ct = self.contacts()
        _, (l0, l1), _ = self.ranges(art)
        count = ct.count.numpy()
        la, lb = ct.link_a.numpy(), ct.link_b.numpy()
        slots = la.shape[1]
        valid = np.arange(slots)[None, :] < count[:, None]
        mine_a = valid & (la >= l0) & (la < l1)
        mine_b = valid & (lb >= l0) & (lb < l1) & ~mine_a
        keep = mine_a | mine_b
        order = np.argsort(~keep, axis=1, kind="stable")  # kept contacts first, in solver order

        def pick(a):
            return np.take_along_axis(a, order.reshape(order.shape + (1,) * (a.ndim - 2)), axis=1)

        sa, sb = ct.shape_a.numpy(), ct.shape_b.numpy()
        la_, lb_ = np.where(mine_b, lb, la), np.where(mine_b, la, lb)
        sign = np.where(mine_b, -1.0, 1.0)[..., None]
        tree_of = self.model.host["link_tree"]
        other = np.where(lb_ >= 0, tree_of[np.maximum(lb_, 0)], -1)
        starts = np.array(self.link_start)
        local_b = np.where(lb_ >= 0, lb_ - starts[np.maximum(other, 0)], -1)
        return {
            "count": keep.sum(axis=1), "link_a": pick(la_ - l0), "link_b": pick(local_b), "other": pick(other),
            "shape_index_a": pick(np.where(mine_b, sb, sa)), "shape_index_b": pick(np.where(mine_b, sa, sb)),
            "point": pick(ct.point.numpy()), "normal": pick(ct.normal.numpy() * sign),
            "separation": pick(ct.separation.numpy()), "force": pick(ct.force.numpy() * sign),
            "overflow": ct.overflow.numpy().copy(),
        }


# -- grouping -----------------------------------------------------------------------------------------------------


def _movable(art: Articulation) -> bool:
    """Whether contacts can move it (a kinematic body or a fixed base without dofs cannot)."""
    return not (art.fix_base or art._kinematic) or art.dof_count > 0


def _filters(art: Articulation) -> set:
    return {(int(s.collision_group), int(s.collision_mask)) for link in art.get_links() for s in link.shapes}


def collision_groups(arts: list[Articulation], joints=()) -> list[list[Articulation]]:
    """Partition articulations into blocks: two share a block when a shape of one can collide with a shape of the
    other (collision groups and masks, as the pair filter tests them) and one of them can move, or when a body
    joint or an explicit contact pair (Articulation.add_contact_pair) connects them. Blocks and their members keep
    the scene's order."""
    parent = list(range(len(arts)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    filters = [_filters(a) for a in arts]
    for i in range(len(arts)):
        for j in range(i + 1, len(arts)):
            if not (_movable(arts[i]) or _movable(arts[j])):
                continue
            if any(ga & mb or gb & ma for ga, ma in filters[i] for gb, mb in filters[j]):
                parent[root(j)] = root(i)
    index = {id(a): i for i, a in enumerate(arts)}
    for joint in joints:
        ends = [index[id(b.articulation)] for b in (joint.body_a, joint.body_b) if isinstance(b, Link)]
        if len(ends) == 2:
            parent[root(ends[1])] = root(ends[0])
    shape_art = {id(s): i for i, a in enumerate(arts) for link in a.get_links() for s in link.shapes}
    for i, art in enumerate(arts):  # explicit contact pairs collide whatever the groups
        for pair in art.contact_pairs:
            if id(pair.shape_b) in shape_art:
                parent[root(shape_art[id(pair.shape_b)])] = root(i)
    groups: dict[int, list] = {}
    for i, art in enumerate(arts):
        groups.setdefault(root(i), []).append(art)
    return list(groups.values())


def block_joints(group: list[Articulation], joints) -> list:
    """The body joints of a block: those with a body in one of its articulations, in the scene's order."""
    members = {id(a) for a in group}
    return [j for j in joints
            if any(isinstance(b, Link) and id(b.articulation) in members for b in (j.body_a, j.body_b))]


_STATE = ("joint_q", "joint_qd", "root_pose", "root_lin_vel", "root_ang_vel", "link_pose", "link_velocity")
_CONTROL = tuple(ControlArrays.vars)  # every control array, pending kinematic targets included
_OUTPUTS = ("joint_acceleration", "link_acceleration", "link_incoming_joint_force")


def view_arrays(view) -> dict:
    """Host copies of everything an articulation's view holds per env (before it moves to another block)."""
    out = {("state", k): getattr(view.state, k).numpy() for k in _STATE + ("wake_counter", "sleeping")}
    out.update({("control", k): getattr(view.control, k).numpy() for k in _CONTROL})
    out.update({("data", k): getattr(view.data, k).numpy() for k in _OUTPUTS})
    return out


def restore_view_arrays(view, arrays: dict):
    for (part, name), a in arrays.items():
        if name not in ("wake_counter", "sleeping") and a.size:
            getattr(getattr(view, part), name).assign(a)


def merge_wake_state(block: Block, saved: list[dict]):
    """A merged block is awake if any member was, with the longest wake counter."""
    block.state.wake_counter.assign(np.max([s[("state", "wake_counter")] for s in saved], axis=0))
    block.state.sleeping.assign(np.min([s[("state", "sleeping")] for s in saved], axis=0))
