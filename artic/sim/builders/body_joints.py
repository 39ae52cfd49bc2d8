"""A block's body-joint tables (constraints/body_joint_rows.py) from its body joints (description/body_joints.py):
`BodyJointTable`, what each joint and its rows are, and `BodyJointArrays`, their per-env state, controls, rows and
outputs."""

from __future__ import annotations

import numpy as np
import warp as wp
from numpy.typing import ArrayLike

from ...constraints.body_joint_frames import vec6
from ...constraints.body_joint_rows import (
    BODY_ROW_BILATERAL,
    BODY_ROW_DRIVE,
    BODY_ROW_RANGE,
    BodyJointArrays,
    BodyJointTable,
    vec6i,
)
from ...constraints.drive import vec5
from ...core.model import DRIVE_ACCELERATION, DRIVE_FORCE, DRIVE_NONE, SOFT_PARAMS
from ...core.structs import upload
from ...description import body_joints as jm
from ...description.actors import RigidStatic
from ...description.articulation import Link
from ...description.mass_check import link_inverse_weights
from ...description.softness import softness_row
from ...enums import DriveType


def _keeps_counting(mode: int, slot: int) -> bool:
    """Twist and Euler angles (but the gimbal's pitch, in [-pi/2, pi/2]) keep counting; rotation-vector
    components and lengths do not (nor the universal joint's constrained slot, in [-pi/2, pi/2])."""
    if slot >= 3 or mode in (jm.MODE_ROTVEC, jm.MODE_DISTANCE):
        return False
    return not ((mode == jm.MODE_EULER_ZYX and slot == 1) or (mode == jm.MODE_EULER_ZY and slot == 2))


def _drive_code(drive) -> int:
    if drive.drive_type == DriveType.NONE or (drive.stiffness == 0.0 and drive.damping == 0.0):
        return int(DRIVE_NONE)
    return int(DRIVE_ACCELERATION if drive.drive_type == DriveType.ACCELERATION else DRIVE_FORCE)


def body_joint_table_arrays(
    joints: list, link_index: dict, rank: np.ndarray, movable: np.ndarray, link_span: np.ndarray
) -> dict:
    """Host arrays of a block's BodyJointTable. link_index: id(Link) -> forest link; rank and movable per forest link;
    link_span: (L, 2) first generalized index and count of each forest link's tree."""
    h = {k: [] for k in BodyJointTable.vars if k not in ("joint_count", "dynamic_count", "coord_count", "row_count")}
    dynamic, static = [], []
    weights = {}  # id(articulation): its links' inverse weights (mass_check.link_inverse_weights)
    for j, joint in enumerate(joints):
        ends = []
        for body, frame in ((joint.body_a, joint.frame_ca), (joint.body_b, joint.frame_db)):
            if isinstance(body, Link):
                ends.append((link_index[id(body)], frame))
            elif isinstance(body, RigidStatic):
                ends.append((-1, body.pose * frame))
            else:
                ends.append((-1, frame))
        (la, fa), (lb, fb) = ends
        h["joint_mode"].append(joint._mode)
        h["joint_link_a"].append(la)
        h["joint_link_b"].append(lb)
        h["joint_frame_a"].append(fa.as_array())
        h["joint_frame_b"].append(fb.as_array())
        span_a = tuple(link_span[la]) if la >= 0 else (0, 0)
        span_b = tuple(link_span[lb]) if lb >= 0 and (la < 0 or link_span[lb][0] != span_a[0]) else (0, 0)
        h["joint_span"].append(span_a + span_b)
        moving = [lk for lk in (la, lb) if lk >= 0 and movable[lk]]
        if len(moving) == 2:
            dynamic.append(j)
            h["joint_rank"].append(-1)
        else:
            static.append(j)
            h["joint_rank"].append(int(rank[moving[0]]) if moving else -1)
        h["joint_coord_start"].append(len(h["coord_slot"]))
        h["joint_coord_count"].append(joint.num_coordinates)
        h["joint_row_start"].append(len(h["row_kind"]))
        erp, cfm = joint._erp, joint._cfm
        nb = joint.bilateral_count
        soft = softness_row(joint.softness)
        tran, rot = 0.0, 0.0  # the bodies' inverse weights, for a MuJoCo-soft joint's regularizer
        if joint.softness is not None:
            for body in (joint.body_a, joint.body_b):
                if isinstance(body, Link) and not body.articulation._kinematic:  # a kinematic body weighs 0
                    if id(body.articulation) not in weights:
                        weights[id(body.articulation)] = link_inverse_weights(body.articulation)
                    w = weights[id(body.articulation)][body]
                    tran, rot = tran + w[0], rot + w[1]
        for k, (_name, slot) in enumerate(joint._coordinates):
            coord = len(h["coord_slot"])
            drive = joint._drive[k]
            h["coord_slot"].append(slot)
            h["coord_wrap"].append(int(_keeps_counting(joint._mode, slot)))
            h["coord_drive"].append(_drive_code(drive))
            h["coord_stiffness"].append(drive.stiffness)
            h["coord_damping"].append(drive.damping)
            h["coord_max_force"].append(min(drive.max_force, float(np.finfo(np.float32).max) / 1e3))
            for kind in (BODY_ROW_DRIVE, BODY_ROW_RANGE):
                c = nb + k
                h["row_kind"].append(int(kind))
                h["row_slot"].append(slot)
                h["row_coord"].append(coord)
                h["row_soft"].append([0.0] * SOFT_PARAMS)
                h["row_weight"].append(0.0)
                h["row_compliance"].append(joint._compliance[c])
                h["row_damping"].append(joint._damping[c])
                h["row_erp"].append(erp[c])
                h["row_cfm"].append(cfm[c])
        for c, slot in enumerate(joint._constrained_slots()):
            h["row_kind"].append(int(BODY_ROW_BILATERAL))
            h["row_slot"].append(slot)
            h["row_coord"].append(-1)
            h["row_soft"].append(soft)
            # MuJoCo's weld measures rotation by sin(angle / 2) (rows at half the rate): in angles, 4 x its weight
            h["row_weight"].append(tran if slot >= 3 else 4.0 * rot)
            h["row_compliance"].append(joint._compliance[c])
            h["row_damping"].append(joint._damping[c])
            h["row_erp"].append(erp[c])
            h["row_cfm"].append(cfm[c])
        h["joint_row_count"].append(len(h["row_kind"]) - h["joint_row_start"][-1])
    static.sort(key=lambda j: h["joint_rank"][j])
    h["joint_order"] = dynamic + static
    h["joint_count"] = len(joints)
    h["dynamic_count"] = len(dynamic)
    h["coord_count"] = len(h["coord_slot"])
    h["row_count"] = len(h["row_kind"])
    return h


def build_body_joint_table(
    joints: list[jm.JointBase],
    link_index: dict[int, int],
    rank: np.ndarray,
    movable: ArrayLike,
    link_span: np.ndarray,
    device: wp.Device | str | None,
) -> BodyJointTable:
    h = body_joint_table_arrays(joints, link_index, rank, movable, link_span)
    for k in ("joint_frame_a", "joint_frame_b"):
        h[k] = np.array(h[k], np.float32).reshape(-1, 7)
    h["row_soft"] = np.array(h["row_soft"], np.float32).reshape(-1, SOFT_PARAMS)
    return upload(BodyJointTable, h, device)


def build_body_joint_arrays(
    num_envs: int, joint_count: int, coord_count: int, row_count: int, n_gen: int, device: wp.Device | str | None
) -> BodyJointArrays:
    e = num_envs
    a = BodyJointArrays()

    def z(shape, dtype=float):
        return wp.zeros(shape, dtype=dtype, device=device)

    for name in ("coord", "target_position", "target_velocity", "lock_value"):
        setattr(a, name, z((e, coord_count)))
    a.range_low = wp.full((e, coord_count), -np.inf, dtype=float, device=device)
    a.range_high = wp.full((e, coord_count), np.inf, dtype=float, device=device)
    a.locked = z((e, coord_count), int)
    a.enabled = wp.full((e, joint_count), 1, dtype=int, device=device)
    for name in ("tcd", "frame_c", "frame_d"):
        setattr(a, name, wp.full((e, joint_count), wp.transform_identity(), dtype=wp.transform, device=device))
    a.wrench_a = z((e, joint_count), wp.spatial_vector)
    a.wrench_b = z((e, joint_count), wp.spatial_vector)
    a.wrench_c = z((e, 3 * joint_count), wp.spatial_vector)
    a.block_rows = z((e, joint_count), vec6i)
    a.block_count = z((e, joint_count), int)
    a.scalar_count = z((e, joint_count), int)
    a.block_factor = z((e, joint_count, 21))
    a.error = z((e, joint_count), wp.vec2)
    a.error_track = z((e, joint_count), wp.vec4)
    a.violated = z((e, joint_count), int)
    a.row_g = z((e, row_count, n_gen))
    a.row_minv_g = z((e, row_count, n_gen))
    for name in ("row_r", "row_value", "row_dq", "row_lambda", "row_lambda2"):
        setattr(a, name, z((e, row_count)))
    a.row_rate = wp.full((e, row_count), np.nan, dtype=float, device=device)
    a.row_active = z((e, row_count), int)
    a.row_coef = z((e, row_count), vec5)
    a.row_ortho = z((e, row_count), vec6)
    a.row_wrench_a = z((e, row_count), wp.spatial_vector)
    a.row_wrench_b = z((e, row_count), wp.spatial_vector)
    return a
