"""Rows of the deadzone controllers (description/deadzone.py) in the one row form, for the direct solver.

Per controller on a coordinate q with band [low, high] and step h: a low-edge row (lambda in [0, max_force h],
target k (low - q) / (h k + d), cfm 1 / (h (h k + d))) and a high-edge row (lambda in [-max_force h, 0], target
k (high - q) / (h k + d)): each is the implicit spring towards its edge, and its bound turns it off while the
spring would pull, which is exactly inside the band (d = 0). A step that starts with q inside the band adds the
secondary row: the implicit spring (k2, d2) towards the secondary target, lambda in +-secondary_max_force h.
The coordinate is an articulation dof (g = e_d) or a body joint's coordinate (g from that coordinate's drive row
wrenches, constraints/body_joint_rows.py).
"""

from __future__ import annotations

import warp as wp

from ..core.data import Kin
from ..core.model import Tree
from .body_joint_rows import BodyJointArrays, BodyJointTable, joint_row_direction
from .row_form import SRC_DEADZONE, RowForm, add_dof, implicit_spring, new_row

ON_DOF = wp.constant(0)
ON_COORDINATE = wp.constant(1)


@wp.struct
class DeadzoneTable:
    """A block's deadzone controllers (Z of them)."""

    count: int
    kind: wp.array(dtype=int)  # (Z,) ON_DOF or ON_COORDINATE
    dof: wp.array(dtype=int)  # (Z,) block dof (ON_DOF)
    joint: wp.array(dtype=int)  # (Z,) block body-joint index (ON_COORDINATE)
    row: wp.array(dtype=int)  # (Z,) the coordinate's drive row in the loop table (ON_COORDINATE)
    params: wp.array(dtype=wp.types.vector(length=9, dtype=float))  # (Z,) low, high, k, d, max_force, s, k2, d2, max2


@wp.func
def _coordinate_row(
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    rf: RowForm,
    env: int,
    i: int,
    j: int,
    r: int,
) -> None:
    """Row i's direction: body joint j's coordinate whose drive row is r."""
    joint_row_direction(tree, jt, kin, rf.g, env, i, j, ja.row_wrench_a[env, r], ja.row_wrench_b[env, r])


@wp.func
def _one_row(
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    dz: DeadzoneTable,
    rf: RowForm,
    env: int,
    n_gen: int,
    z: int,
    spring: wp.vec2,
    lo: float,
    hi: float,
) -> None:
    i = new_row(rf, env, n_gen, SRC_DEADZONE, z, spring[0], spring[1], lo, hi)
    if dz.kind[z] == ON_DOF:
        add_dof(rf, env, i, tree.dof_gen[dz.dof[z]], 1.0)
    else:
        _coordinate_row(tree, jt, ja, kin, rf, env, i, dz.joint[z], dz.row[z])


@wp.func
def add_deadzone_rows(
    tree: Tree,
    jt: BodyJointTable,
    ja: BodyJointArrays,
    kin: Kin,
    dz: DeadzoneTable,
    rf: RowForm,
    joint_q: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
) -> None:
    for z in range(dz.count):
        p = dz.params[z]
        q = float(0.0)
        if dz.kind[z] == ON_DOF:
            q = joint_q[env, dz.dof[z]]
        else:
            q = ja.row_value[env, dz.row[z]]
        cap = p[4] * h
        _one_row(tree, jt, ja, kin, dz, rf, env, n_gen, z, implicit_spring(p[2], p[3], p[0] - q, 0.0, h), 0.0, cap)
        _one_row(tree, jt, ja, kin, dz, rf, env, n_gen, z, implicit_spring(p[2], p[3], p[1] - q, 0.0, h), -cap, 0.0)
        if p[8] > 0.0 and q >= p[0] and q <= p[1]:
            cap2 = p[8] * h
            _one_row(
                tree,
                jt,
                ja,
                kin,
                dz,
                rf,
                env,
                n_gen,
                z,
                implicit_spring(p[6], p[7], p[5] - q, 0.0, h),
                -cap2,
                cap2,
            )
