"""Which articulations are stepped together: the scene's partition into blocks (block.py), and the move of every
env's state into new blocks when it changes.

Two articulations share a block when a shape of one can collide with a shape of the other and one of them can
move, or when a body joint or an explicit contact pair connects them. A small block is stepped within another
(merge_small) where that changes nothing but the launches: a block's launch and its Python cost 3-5 us at one env
whatever it holds (an MJCF scene's target markers and goals). Regrouping (on adding or removing an
articulation or a joint) copies every env's state, controls and reported outputs of the regrouped articulations and
joints into their new block; arrays taken from `scene.view(art)` before it are stale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from ..core.control import ControlArrays
from ..description.articulation import Articulation, Link
from ..description.body_joints import JointBase
from .block import Block
from .status import refresh_status

if TYPE_CHECKING:
    from .articulation_view import ArticulationView


def regroup(
    articulations: list,
    joints: list,
    views: dict,
    joint_views: dict,
    new_block: Callable[[list, list], Block],
    merge: bool = True,
) -> list[Block]:
    """The blocks of `articulations` and `joints` (views and joint_views: the scene's, by id); a block whose members
    did not change is kept, the others are made with `new_block(arts, joints)` and receive their members' state.
    `merge`: small blocks join others (merge_small); not under nan_policy 'freeze', which freezes a block's env
    whole, so that a joined articulation going non-finite would freeze its host too."""
    groups = collision_groups(articulations, joints)
    if merge:
        groups = merge_small(groups, articulations)

    def key(arts, js):
        return tuple(id(a) for a in arts), tuple(id(j) for j in js)

    current = {key(v.block.arts, v.block.joints): v.block for v in views.values()}
    blocks = []
    for group in groups:
        members = block_joints(group, joints)
        block = current.get(key(group, members))
        if block is None:
            group_views = [views[id(a)] for a in group]
            saved = [view_arrays(v) for v in group_views]
            jviews = [joint_views[id(j)] for j in members]
            jsaved = [jv.saved() if jv.block is not None else None for jv in jviews]
            block = new_block(group, members)
            for v, arrays in zip(group_views, saved):
                v.bind(block)
                restore_view_arrays(v, arrays)
            merge_wake_state(block, saved)
            refresh_status(block, recheck=True)
            for jv, arrays in zip(jviews, jsaved):
                jv.bind(block)
                if arrays is not None:
                    jv.restore(arrays)
                else:  # a new joint: its description, with coordinates read from the current poses
                    jv.start()
        blocks.append(block)
    return blocks


def _movable(art: Articulation) -> bool:
    """Whether contacts can move it (a kinematic body or a fixed base without dofs cannot)."""
    return not (art.fix_base or art._kinematic) or art.dof_count > 0


def _filters(art: Articulation) -> set:
    return {(int(s.collision_group), int(s.collision_mask)) for link in art.get_links() for s in link.shapes}


def collision_groups(arts: list[Articulation], joints: Iterable[JointBase] = ()) -> list[list[Articulation]]:
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


MERGE_GEN = 6  # generalized coordinates of a block that merge_small steps within another (a kinematic body's)
MERGE_TOTAL = 64  # at most this many in the block it joins: its dense per-env arrays grow as their square
MERGE_DISTANCE = 2.0  # [m] from the host's first root, for a joining articulation with dofs (_joinable)


def _gen(art: Articulation) -> int:
    return art.dof_count + (0 if art.fix_base else 6)


def _settings(group: list[Articulation]) -> tuple | None:
    """What a block of `group` steps with that merging could change, when merging cannot (one value for all, no
    sleeping: a block sleeps as one island, PhysX's, so articulations that never touch must not share one where
    they can sleep; iteration counts and the early stop, a block's largest and strictest); None when it could."""
    found = {(a.get_solver_iteration_counts(), a.solver_tolerance) for a in group}
    if len(found) != 1 or any(a.sleep_threshold != 0.0 for a in group):
        return None
    return found.pop()


def _joinable(group: list[Articulation], host: list[Articulation]) -> bool:
    """Whether `group` may be stepped within `host`'s block without losing precision. A block computes its
    dynamics in float32 about one origin, its first tree's root (dynamics/kinematics.py), so a tree that moves far
    from it loses digits (a pendulum 10 m away: 2.6e-5 of its speed in a step): only articulations fixed to the world
    or kinematic join (nothing moves their roots but the user), and those with dofs only near a fixed host's root
    (MERGE_DISTANCE, at their description's poses)."""
    if any(not (a.fix_base or a._kinematic) for a in group):
        return False
    moving = [a for a in group if not a._kinematic and a.dof_count > 0]
    if not moving:
        return True
    if not host[0].fix_base:
        return False
    o = np.asarray(host[0].root_global_pose.p, float)
    return all(np.linalg.norm(np.asarray(a.root_global_pose.p, float) - o) <= MERGE_DISTANCE for a in moving)


def merge_small(groups: list[list[Articulation]], order: list[Articulation]) -> list[list[Articulation]]:
    """The collision groups with each group of at most MERGE_GEN coordinates joined to the largest group of the
    same settings (_settings) that it may join (_joinable) within MERGE_TOTAL: the two cannot touch, so
    their rows never couple, and the joined block steps them side by side (exact zeros between them) in one
    launch, the same step up to the rounding of sums over more coordinates. Members keep the scene's order
    (`order`) within each joined group, the host's first: its shapes and links keep their indices, its first root
    stays the block's origin, and its contacts are found and solved in the same order."""
    rank = {id(a): i for i, a in enumerate(order)}
    groups = [sorted(g, key=lambda a: rank[id(a)]) for g in groups]
    out: list[tuple[tuple | None, list[Articulation]]] = []
    for group in sorted(groups, key=lambda g: (-sum(_gen(a) for a in g), rank[id(g[0])])):
        key = _settings(group)
        size = sum(_gen(a) for a in group)
        host = None
        if key is not None and size <= MERGE_GEN:  # the largest block it may join
            host = next(
                (
                    h
                    for k, h in out
                    if k == key and sum(_gen(a) for a in h) + size <= MERGE_TOTAL and _joinable(group, h)
                ),
                None,
            )
        if host is not None:
            host.extend(group)
        else:
            out.append((key, group))
    blocks = [g for _, g in out]
    blocks.sort(key=lambda g: rank[id(g[0])])
    return blocks


def block_joints(group: list[Articulation], joints: Iterable[JointBase]) -> list[JointBase]:
    """The body joints of a block: those with a body in one of its articulations, in the scene's order."""
    members = {id(a) for a in group}
    return [
        j for j in joints if any(isinstance(b, Link) and id(b.articulation) in members for b in (j.body_a, j.body_b))
    ]


_STATE = ("joint_q", "joint_qd", "root_pose", "root_lin_vel", "root_ang_vel", "link_pose", "link_velocity")
_CONTROL = tuple(ControlArrays.vars)  # every control array, pending kinematic targets included
_OUTPUTS = ("joint_acceleration", "link_acceleration", "link_incoming_joint_force")


def view_arrays(view: ArticulationView) -> dict[tuple[str, str], np.ndarray]:
    """Host copies of everything an articulation's view holds per env (before it moves to another block)."""
    out = {("state", k): getattr(view.state, k).numpy() for k in _STATE + ("wake_counter", "sleeping")}
    out.update({("control", k): getattr(view.control, k).numpy() for k in _CONTROL})
    out.update({("data", k): getattr(view.data, k).numpy() for k in _OUTPUTS})
    return out


def restore_view_arrays(view: ArticulationView, arrays: dict) -> None:
    for (part, name), a in arrays.items():
        if name not in ("wake_counter", "sleeping") and a.size:
            getattr(getattr(view, part), name).assign(a)


def merge_wake_state(block: Block, saved: list[dict]) -> None:
    """A merged block is awake if any member was, with the longest wake counter."""
    block.state.wake_counter.assign(np.max([s[("state", "wake_counter")] for s in saved], axis=0))
    block.state.sleeping.assign(np.min([s[("state", "sleeping")] for s in saved], axis=0))
