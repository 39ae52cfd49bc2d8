"""The joint constraint rows of an articulation, in PhysX's solve order, and their per-dof parameters.

Every joint row acts on one dof d: its Jacobian is the unit vector e_d over the generalized velocities, so its
response is r = (M^-1)_dd (the joint velocity change per unit joint impulse with every other dof and the floating
base free to move, physx-notes 2.3) and an impulse dl changes the generalized velocity by dl * M^-1 e_d. Rows are
ordered as PhysX visits them (physx-notes 2.8 and 4.2): links depth-first from the root, children in low-level
order; per dof in axis order: coefficient friction, drive, static/dynamic/viscous friction, position limit,
velocity limit. Which rows exist follows physx-notes 2.2 (drives) and 3.3 (friction models).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from ..description.articulation import Articulation
from ..enums import ArticulationFlag, DriveType, JointType, Motion
from ..core.structs import upload

ROW_FRICTION_COEF = wp.constant(0)  # PhysX's deprecated coefficient friction (default 0.05)
ROW_DRIVE = wp.constant(1)
ROW_FRICTION = wp.constant(2)  # static/dynamic/viscous friction (PhysX 5.6 model)
ROW_LIMIT = wp.constant(3)
ROW_VELOCITY_LIMIT = wp.constant(4)

DRIVE_NONE = wp.constant(0)
DRIVE_FORCE = wp.constant(1)
DRIVE_ACCELERATION = wp.constant(2)


@wp.struct
class JointRows:
    """Row table and per-dof/per-link solver parameters (n dofs, L links, R rows)."""

    row_count: int
    row_kind: wp.array(dtype=int)  # (R,) ROW_*
    row_dof: wp.array(dtype=int)  # (R,) dof the row acts on
    row_rank: wp.array(dtype=int)  # (R,) depth-first rank of the row's link (static contacts follow each link)
    dof_drive: wp.array(dtype=int)  # (n,) DRIVE_*
    dof_stiffness: wp.array(dtype=float)  # (n,) [N/m, Nm/rad] or [1/s^2] for acceleration drives
    dof_damping: wp.array(dtype=float)  # (n,) [N s/m, Nm s/rad] or [1/s]
    dof_max_force: wp.array(dtype=float)  # (n,) [N or Nm] or impulse [N s or Nm s] (see dof_limits_are_forces)
    dof_quat_drive: wp.array(dtype=int)  # (n,) 1 for dofs of a spherical joint with > 1 dof (quaternion error)
    dof_limit_low: wp.array(dtype=float)  # (n,) [rad or m]; only read for LIMITED dofs
    dof_limit_high: wp.array(dtype=float)
    dof_max_velocity: wp.array(dtype=float)  # (n,) [rad/s or m/s]
    dof_friction_coef: wp.array(dtype=float)  # (n,) the joint's coefficient (deprecated model)
    dof_static_friction: wp.array(dtype=float)  # (n,) [N or Nm]
    dof_dynamic_friction: wp.array(dtype=float)  # (n,) [N or Nm]
    dof_viscous_friction: wp.array(dtype=float)  # (n,) [N s/m or Nm s/rad]
    dof_cfm: wp.array(dtype=float)  # (n,) max(link cfm, parent cfm); a fixed root has cfm 0
    dof_link: wp.array(dtype=int)  # (n,) link whose inbound joint owns the dof
    link_linear_damping: wp.array(dtype=float)  # (L,) [1/s]
    link_angular_damping: wp.array(dtype=float)  # (L,) [1/s]
    link_max_linear_velocity: wp.array(dtype=float)  # (L,) [m/s]
    link_max_angular_velocity: wp.array(dtype=float)  # (L,) [rad/s]
    dof_limits_are_forces: wp.array(dtype=int)  # (n,) 1 where the articulation has DRIVE_LIMITS_ARE_FORCES


def _tree_row_arrays(art: Articulation) -> dict:
    """Host arrays of one articulation's row table and parameters, in low-level dof/link order."""
    topo = art._topology()
    n, nl = art.dof_count, art.link_count
    f = np.float32
    h = {k: np.zeros(n, f) for k in ("dof_stiffness", "dof_damping", "dof_max_force", "dof_limit_low",
                                     "dof_limit_high", "dof_max_velocity", "dof_friction_coef", "dof_static_friction",
                                     "dof_dynamic_friction", "dof_viscous_friction", "dof_cfm")}
    h.update({k: np.zeros(n, np.int32) for k in ("dof_drive", "dof_quat_drive", "dof_link")})
    h.update({k: np.zeros(nl, f) for k in ("link_linear_damping", "link_angular_damping",
                                           "link_max_linear_velocity", "link_max_angular_velocity")})
    link_cfm = [lk.cfm_scale for lk in topo.links]
    if art.fix_base:
        link_cfm[0] = 0.0  # PhysX CPU: a fixed root has no cfm (physx-notes 2.3)
    kinds, dofs, ranks = [], [], []
    for i, link in enumerate(topo.links):
        h["link_linear_damping"][i] = link.linear_damping
        h["link_angular_damping"][i] = link.angular_damping
        h["link_max_linear_velocity"][i] = link.max_linear_velocity
        h["link_max_angular_velocity"][i] = link.max_angular_velocity
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
            h["dof_max_velocity"][d] = j.get_max_joint_velocity(ax)
            h["dof_friction_coef"][d] = j.friction_coefficient
            h["dof_static_friction"][d] = fp.static_friction_effort
            h["dof_dynamic_friction"][d] = fp.dynamic_friction_effort
            h["dof_viscous_friction"][d] = fp.viscous_friction_coefficient
            new_friction = fp.static_friction_effort != 0.0 or fp.viscous_friction_coefficient != 0.0
            if int(ax) < 3:  # angular: a drive exists unless its type is NONE (physx-notes 2.2)
                has_drive = drive.drive_type != DriveType.NONE
            else:  # linear: it needs a force limit and a gain
                has_drive = drive.max_force > 0.0 and (drive.stiffness > 0.0 or drive.damping > 0.0)
            if has_drive:
                h["dof_drive"][d] = int(DRIVE_ACCELERATION if drive.drive_type == DriveType.ACCELERATION
                                        else DRIVE_FORCE)
            if j.friction_coefficient > 0.0 and not new_friction:
                kinds.append(int(ROW_FRICTION_COEF))
                dofs.append(d)
            if has_drive:
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


def joint_row_arrays(arts: list[Articulation]) -> dict:
    """The rows of a forest: each tree's rows in turn, with link, dof and rank indices shifted (a link's
    depth-first rank in the forest is its tree's link offset plus its rank in the tree)."""
    parts = [_tree_row_arrays(a) for a in arts]
    h = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    links = dofs = rows = 0
    for art, p in zip(arts, parts):
        nr = len(p["row_kind"])
        h["row_dof"][rows:rows + nr] += dofs
        h["row_rank"][rows:rows + nr] += links
        h["dof_link"][dofs:dofs + art.dof_count] += links
        links, dofs, rows = links + art.link_count, dofs + art.dof_count, rows + nr
    h["row_count"] = rows
    return h


def build_joint_rows(arts, device) -> JointRows:
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    return upload(JointRows, joint_row_arrays(arts), device)
