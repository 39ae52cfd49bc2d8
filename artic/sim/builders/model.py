"""The device tables of articulations, from their descriptions: topology and inertia (`Tree`), the dof and link
parameters (`DofParams`) and the dof rows (`DofRows`), for one articulation (its inverse dynamics) or a block's
forest (trees one after the other, link and dof indices shifted).

Within a tree, links are in PhysX low-level (breadth-first) order; trees follow each other, so every parent index
is smaller than its child's; dofs are in cache order. Generalized coordinates are per tree: a floating root's six
(COM linear, angular), then the tree's joint dofs.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import warp as wp

from ...constraints.dof_rows import ROW_DRIVE, ROW_FRICTION, ROW_FRICTION_COEF, ROW_LIMIT, ROW_VELOCITY_LIMIT, DofRows
from ...core.model import (
    DRIVE_ACCELERATION,
    DRIVE_EXPLICIT,
    DRIVE_EXPLICIT_STIFFNESS,
    DRIVE_FORCE,
    JOINT_FIX,
    JOINT_FREE_ROOT,
    SOFT_PARAMS,
    ArticulationModel,
    DofParams,
)
from ...core.structs import upload
from ...description.articulation import Articulation
from ...description.fluid import inertia_box
from ...description.mass_check import dof_inverse_weights
from ...description.softness import softness_row
from ...enums import ArticulationFlag, DriveType, JointType, Motion
from ...errors import ValidationError

_DRIVE_CODES = {
    DriveType.FORCE: DRIVE_FORCE,
    DriveType.ACCELERATION: DRIVE_ACCELERATION,
    DriveType.EXPLICIT: DRIVE_EXPLICIT,
    DriveType.EXPLICIT_STIFFNESS: DRIVE_EXPLICIT_STIFFNESS,
}


def _tree_arrays(art: Articulation) -> dict:
    """Host (NumPy) arrays of one articulation's model, in low-level order."""
    topo = art._topology()
    index = topo.link_index
    links = topo.links
    n_links = len(links)
    floating = not (art.get_articulation_flags() & ArticulationFlag.FIX_BASE)
    h = {
        "link_parent": np.full(n_links, -1, np.int32),
        "joint_type": np.zeros(n_links, np.int32),
        "joint_parent_pose": np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32), (n_links, 1)),
        "joint_child_pose": np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32), (n_links, 1)),
        "joint_child_pose_inv": np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32), (n_links, 1)),
        "joint_dof_start": np.array(topo.dof_start, np.int32),
        "joint_dof_count": np.array([len(a) for a in topo.dof_axes], np.int32),
        "link_mass": np.zeros(n_links, np.float32),
        "link_com": np.zeros((n_links, 3), np.float32),
        "link_principal_inertia": np.zeros((n_links, 3), np.float32),
        "link_com_rot": np.zeros((n_links, 4), np.float32),
        "dof_axis": np.array([int(a) for axes in topo.dof_axes for a in axes], np.int32),
        "dof_armature": np.zeros(art.dof_count, np.float32),
        "link_root_armature": np.zeros(n_links, np.float32),
    }
    h["joint_type"][0] = JOINT_FREE_ROOT if floating else JOINT_FIX
    h["link_root_armature"][0] = art.root_armature if floating else 0.0
    for i, link in enumerate(links):
        h["link_mass"][i] = link.mass
        cm = link.cmass_local_pose
        h["link_com"][i] = cm.p
        h["link_com_rot"][i] = cm.q
        h["link_principal_inertia"][i] = link.inertia
        j = link.inbound_joint
        if j is None:
            continue
        h["link_parent"][i] = index[link.parent]
        h["joint_type"][i] = int(j.get_joint_type())
        h["joint_parent_pose"][i] = j.parent_pose.as_array()
        h["joint_child_pose"][i] = j.child_pose.as_array()
        h["joint_child_pose_inv"][i] = j.child_pose.inverse().as_array()
        for k, a in enumerate(topo.dof_axes[i]):
            h["dof_armature"][topo.dof_start[i] + k] = j.get_armature(a)
    return h


def model_arrays(arts: list[Articulation]) -> dict:
    """Host arrays of the forest of `arts` (one tree each, in order): the trees' arrays concatenated, link and dof
    indices shifted, plus the per-tree generalized layout."""
    parts = [_tree_arrays(a) for a in arts]
    h = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    link_tree, root_gen, dof_gen, roots, gen_start, gen_count, gen_parent = [], [], [], [], [], [], []
    links = dofs = gen = 0
    for t, p in enumerate(parts):
        nl, nd = len(p["link_parent"]), len(p["dof_axis"])
        floating = p["joint_type"][0] == JOINT_FREE_ROOT
        h["link_parent"][links : links + nl] += np.where(p["link_parent"] >= 0, links, 0)
        h["joint_dof_start"][links : links + nl] += dofs
        link_tree += [t] * nl
        root_gen += [gen if floating else -1] * nl
        dof_gen += range(gen + 6 * floating, gen + 6 * floating + nd)
        gen_parent += _gen_parents(p, gen, floating)
        roots.append(links)
        gen_start.append(gen)
        gen_count.append(nd + 6 * floating)
        links, dofs, gen = links + nl, dofs + nd, gen + nd + 6 * floating
    kinematic = [int(a._kinematic) for a in arts]
    for name, v in (
        ("link_tree", link_tree),
        ("link_root_gen", root_gen),
        ("dof_gen", dof_gen),
        ("tree_root", roots),
        ("tree_gen_start", gen_start),
        ("tree_gen_count", gen_count),
        ("tree_kinematic", kinematic),
        ("gen_parent", gen_parent),
    ):
        h[name] = np.array(v, np.int32)
    return h


def _gen_parents(p: dict, gen: int, floating: bool) -> list[int]:
    """The parent of each of a tree's generalized coordinates (global indices, -1 for none): a floating root's six
    form a chain, a joint's dofs follow each other, and a joint's first dof hangs from the last coordinate of the
    nearest ancestor link that has one. M's nonzeros off the diagonal are exactly the pairs where one coordinate is
    an ancestor of the other, which the tree-sparse factorization (math/tree_ldl.py) relies on."""
    parents = [gen + k - 1 if k > 0 else -1 for k in range(6 * floating)]
    last = [gen + 5 if floating else -1] * len(p["link_parent"])  # each link's last coordinate, or its ancestor's
    first = gen + 6 * floating
    for i, (start, count) in enumerate(zip(p["joint_dof_start"], p["joint_dof_count"])):
        up = last[p["link_parent"][i]] if i > 0 else last[0]
        for k in range(count):
            parents.append(up if k == 0 else first + start + k - 1)
        if count:
            last[i] = first + start + count - 1
        elif i > 0:
            last[i] = up
    return parents


_DTYPES = {
    "link_parent": wp.int32,
    "joint_type": wp.int32,
    "joint_parent_pose": wp.transform,
    "joint_child_pose": wp.transform,
    "joint_child_pose_inv": wp.transform,
    "joint_dof_start": wp.int32,
    "joint_dof_count": wp.int32,
    "link_mass": wp.float32,
    "link_com": wp.vec3,
    "link_principal_inertia": wp.vec3,
    "link_com_rot": wp.quat,
    "dof_axis": wp.int32,
    "dof_armature": wp.float32,
    "link_root_armature": wp.float32,
    "link_tree": wp.int32,
    "link_root_gen": wp.int32,
    "dof_gen": wp.int32,
    "tree_root": wp.int32,
    "tree_gen_start": wp.int32,
    "tree_gen_count": wp.int32,
    "tree_kinematic": wp.int32,
    "gen_parent": wp.int32,
}


def build_model(arts: Articulation | Iterable[Articulation], device: wp.Device | str | None) -> ArticulationModel:
    """The model of one articulation, or of the forest of a list of them."""
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    h = model_arrays(arts)
    m = ArticulationModel(
        len(h["link_parent"]),
        len(h["dof_axis"]),
        bool(h["joint_type"][0] == JOINT_FREE_ROOT),
        tree_count=len(arts),
        gen_count=int(h["tree_gen_count"].sum()),
        flags=int(arts[0].get_articulation_flags()),
        host=h,
    )
    for name, dtype in _DTYPES.items():
        setattr(m, name, wp.array(h[name], dtype=dtype, device=device))
    m.bundle()
    return m


def refresh_model(m: ArticulationModel, arts: Articulation | Iterable[Articulation]) -> None:
    """Re-upload the parameters of articulations whose topology did not change (masses, frames, armature)."""
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    h = model_arrays(arts)
    for name in _DTYPES:
        getattr(m, name).assign(h[name])
    m.host = h
    m.flags = int(arts[0].get_articulation_flags())


def _explicit_drive(art: Articulation, link, drive, n_axes: int) -> bool:
    """Whether `drive` (of link's inbound joint) is explicit (DriveType.EXPLICIT, EXPLICIT_STIFFNESS: a joint force,
    no solver row); refused on a joint other than a revolute or prismatic one."""
    if drive.drive_type not in (DriveType.EXPLICIT, DriveType.EXPLICIT_STIFFNESS):
        return False
    kind = link.inbound_joint.get_joint_type()
    if kind not in (JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED, JointType.PRISMATIC) or n_axes != 1:
        raise ValidationError(
            f"articulation '{art.name}': joint of link '{link.name}': an explicit drive ({drive.drive_type.name}) "
            "acts on a revolute or prismatic joint only; use DriveType.FORCE"
        )
    return True


def _tree_dof_arrays(art: Articulation) -> dict:
    """Host arrays of one articulation's dof and link parameters and its row table, in low-level dof/link order."""
    topo = art._topology()
    n, nl = art.dof_count, art.link_count
    f = np.float32
    h = {
        k: np.zeros(n, f)
        for k in (
            "dof_stiffness",
            "dof_damping",
            "dof_max_force",
            "dof_limit_low",
            "dof_limit_high",
            "dof_max_velocity",
            "dof_friction_coef",
            "dof_static_friction",
            "dof_dynamic_friction",
            "dof_viscous_friction",
            "dof_cfm",
            "dof_inverse_weight",
        )
    }
    h.update({k: np.zeros((n, SOFT_PARAMS), f) for k in ("dof_limit_soft", "dof_friction_soft")})
    h["dof_passive"] = np.zeros((n, 3), f)
    # soft rows scale by the dofs' inverse weights, and the speculative contacts' reach reads them
    # (collision/reach.py)
    weights = dof_inverse_weights(art)
    h.update({k: np.zeros(n, np.int32) for k in ("dof_drive", "dof_quat_drive", "dof_link")})
    h.update(
        {
            k: np.zeros(nl, f)
            for k in (
                "link_linear_damping",
                "link_angular_damping",
                "link_max_linear_velocity",
                "link_max_angular_velocity",
                "link_gravity_scale",
                "link_root_damping",
            )
        }
    )
    link_cfm = [lk.cfm_scale for lk in topo.links]
    if art.fix_base:
        link_cfm[0] = 0.0  # PhysX CPU: a fixed root has no cfm (physx-notes 2.3)
    kinds, dofs, ranks = [], [], []
    for i, link in enumerate(topo.links):
        h["link_linear_damping"][i] = link.linear_damping
        h["link_angular_damping"][i] = link.angular_damping
        h["link_max_linear_velocity"][i] = link.max_linear_velocity
        h["link_max_angular_velocity"][i] = link.max_angular_velocity
        h["link_gravity_scale"][i] = link.gravity_scale
    if not art.fix_base:
        h["link_root_damping"][0] = art.root_damping
    h.update({k: np.zeros((nl, 3), f) for k in ("link_fluid", "link_wind", "link_fluid_box")})
    if art.fluid is not None and art.fluid.active:
        for i, link in enumerate(topo.links):
            if not link.in_fluid:
                continue
            h["link_fluid"][i] = (art.fluid.density, art.fluid.viscosity, 0.0)
            h["link_wind"][i] = art.fluid.wind
            h["link_fluid_box"][i] = inertia_box(link.mass, link.inertia)
    for rank, i in enumerate(topo.depth_first()):
        link = topo.links[i]
        j = link.inbound_joint
        if j is None:
            continue
        first_row = len(kinds)
        axes = topo.dof_axes[i]
        for k, ax in enumerate(axes):
            d = topo.dof_start[i] + k
            drive = j.get_drive_params(ax)
            fp = j.get_friction_params(ax)
            h["dof_link"][d] = i
            h["dof_cfm"][d] = max(link_cfm[i], link_cfm[topo.link_index[link.parent]])
            h["dof_stiffness"][d], h["dof_damping"][d] = drive.stiffness, drive.damping
            h["dof_max_force"][d] = drive.max_force
            h["dof_quat_drive"][d] = int(j.get_joint_type() == JointType.SPHERICAL and len(axes) > 1)
            lim = j.get_limit_params(ax)
            h["dof_limit_low"][d], h["dof_limit_high"][d] = lim.low, lim.high
            h["dof_limit_soft"][d] = softness_row(j.limit_softness)
            h["dof_friction_soft"][d] = softness_row(j.friction_softness)
            h["dof_inverse_weight"][d] = weights.get((link, ax), 0.0)
            h["dof_max_velocity"][d] = j.get_max_joint_velocity(ax)
            h["dof_friction_coef"][d] = j.friction_coefficient
            h["dof_static_friction"][d] = fp.static_friction_effort
            h["dof_dynamic_friction"][d] = fp.dynamic_friction_effort
            h["dof_viscous_friction"][d] = fp.viscous_friction_coefficient
            passive = j.get_passive_params(ax)
            h["dof_passive"][d] = (passive.stiffness, passive.damping, passive.reference)
            new_friction = fp.static_friction_effort != 0.0 or fp.viscous_friction_coefficient != 0.0
            if int(ax) < 3:  # angular: a drive exists unless its type is NONE (physx-notes 2.2)
                has_drive = drive.drive_type != DriveType.NONE
            else:  # linear: it needs a force limit and a gain
                has_drive = drive.max_force > 0.0 and (drive.stiffness > 0.0 or drive.damping > 0.0)
            explicit = _explicit_drive(art, link, drive, len(axes))
            if has_drive:
                h["dof_drive"][d] = int(_DRIVE_CODES[drive.drive_type])
            if j.friction_coefficient > 0.0 and not new_friction:
                kinds.append(int(ROW_FRICTION_COEF))
                dofs.append(d)
            if has_drive and not explicit:  # an explicit drive's force is no row (step_kernel)
                kinds.append(int(ROW_DRIVE))
                dofs.append(d)
            if new_friction:
                kinds.append(int(ROW_FRICTION))
                dofs.append(d)
            if j.get_motion(ax) == Motion.LIMITED:
                kinds.append(int(ROW_LIMIT))
                dofs.append(d)
            kinds.append(int(ROW_VELOCITY_LIMIT))
            dofs.append(d)
        ranks.extend([rank] * (len(kinds) - first_row))
    h["row_kind"] = np.array(kinds, np.int32)
    h["row_dof"] = np.array(dofs, np.int32)
    h["row_rank"] = np.array(ranks, np.int32)
    forces = bool(art.get_articulation_flags() & ArticulationFlag.DRIVE_LIMITS_ARE_FORCES)
    h["dof_limits_are_forces"] = np.full(n, int(forces), np.int32)
    return h


def dof_row_arrays(arts: list[Articulation]) -> dict:
    """The parameters and rows of a forest: each tree's rows in turn, with link, dof and rank indices shifted (a link's
    depth-first rank in the forest is its tree's link offset plus its rank in the tree)."""
    parts = [_tree_dof_arrays(a) for a in arts]
    h = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    links = dofs = rows = 0
    for art, p in zip(arts, parts):
        nr = len(p["row_kind"])
        h["row_dof"][rows : rows + nr] += dofs
        h["row_rank"][rows : rows + nr] += links
        h["dof_link"][dofs : dofs + art.dof_count] += links
        links, dofs, rows = links + art.link_count, dofs + art.dof_count, rows + nr
    h["row_count"] = rows
    implicit_drive = (h["dof_drive"] == int(DRIVE_EXPLICIT_STIFFNESS)) & (h["dof_damping"] > 0.0)  # passive.py damps it
    h["friction_loads"] = int(bool(np.any(h["dof_friction_coef"] != 0.0)))
    h["passive"] = int(
        bool(np.any(h["dof_passive"][:, :2] > 0.0) or np.any(h["link_root_damping"] > 0.0) or np.any(implicit_drive))
    )
    return h


def build_dof_rows(arts: list[Articulation], device: wp.Device | str | None) -> tuple[DofParams, DofRows]:
    """The dof and link parameters of a forest and its dof rows (both from one pass over its joints)."""
    h = dof_row_arrays(list(arts))
    return upload(DofParams, h, device), upload(DofRows, h, device)


# -- forest topology (the block's link order, and which links contacts and joints can move) -------------------


def tree_links(art: Articulation, link_offset: int) -> tuple[list[int], list[bool], list[int]]:
    """Per link of one articulation: forest parent, movability (some dof between it and the world), and the
    links in depth-first order, all in forest indices."""
    topo = art._topology()
    parents = [-1] + [topo.link_index[lk.parent] + link_offset for lk in topo.links[1:]]
    movable = [not art.fix_base and not art._kinematic] + [False] * (len(parents) - 1)
    for i in range(1, len(parents)):
        movable[i] = movable[parents[i] - link_offset] or len(topo.dof_axes[i]) > 0
    return parents, movable, [i + link_offset for i in topo.depth_first()]


def forest_links(arts: list[Articulation]) -> tuple[list[int], list[bool], np.ndarray]:
    """(parents, movable, depth-first rank) of every link of a forest, in forest indices."""
    parents, movable, order = [], [], []
    for art in arts:
        p, m, o = tree_links(art, len(parents))
        parents += p
        movable += m
        order += o
    rank = np.zeros(len(parents), np.int32)
    rank[order] = np.arange(len(order))
    return parents, movable, rank
