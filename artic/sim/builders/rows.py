"""The row tables of a block beyond its dof rows, from the descriptions: coupling rows (mimic joints, fixed-tendon
joints and spatial-tendon leaves, constraints/coupling_rows.py) and deadzone controllers
(constraints/deadzone_rows.py). Tables are concatenated over the block's articulations, their indices shifted."""

from __future__ import annotations

import numpy as np
import warp as wp

from ...constraints.body_joint_rows import row_layout
from ...constraints.coupling_rows import (
    COUPLING_FIXED,
    COUPLING_MIMIC,
    COUPLING_SPATIAL,
    COUPLING_TENDON_LIMIT,
    CouplingRows,
)
from ...constraints.deadzone_rows import DeadzoneTable
from ...core.structs import upload
from ...description.articulation import Articulation
from ...description.body_joints import JointBase
from ...description.mass_check import dof_inverse_weights, joint_space_inertia, tendon_inverse_weight
from ...description.softness import softness_row
from ...enums import AXIS_NAMES
from ...errors import ValidationError


def _dof_index(art, joint, axis) -> int:
    topo = art._topology()
    i = topo.link_index[joint.child_link]
    return topo.dof_start[i] + topo.dof_axes[i].index(axis)


def _tree_coupling_arrays(art: Articulation) -> dict:
    topo = art._topology()
    li = topo.link_index
    h = {k: [] for k in CouplingRows.vars}
    rows = []
    for t_idx, t in enumerate(art.get_spatial_tendons()):
        for k in ("st_stiffness", "st_damping", "st_limit_stiffness", "st_offset"):
            h[k].append(getattr(t, k[3:]))
        base = len(h["att_link"])
        index = {id(a): base + n for n, a in enumerate(t.attachments)}
        for a in t.attachments:
            h["att_link"].append(li[a.link])
            h["att_parent"].append(index[id(a.parent)] if a.parent is not None else -1)
            h["att_offset"].append(a.relative_offset)
            h["att_coef"].append(a.coefficient)
        root = t.attachments[0]
        for a in t.attachments[1:]:
            if a.is_leaf:
                rows.append((int(COUPLING_SPATIAL), len(h["leaf_att"])))
                h["leaf_att"].append(index[id(a)])
                h["leaf_tendon"].append(t_idx)
                h["leaf_root_att"].append(index[id(root)])
                h["leaf_root_child_att"].append(index[id(root.children[0])])
                h["leaf_rest_length"].append(a.get_rest_length())
                low, high = a.get_limit_parameters()
                h["leaf_limit_low"].append(low)
                h["leaf_limit_high"].append(high)
    tendons = art.get_fixed_tendons()
    inertia = joint_space_inertia(art) if any(t.limit_softness is not None for t in tendons) else None
    for t_idx, t in enumerate(tendons):
        for k in ("ft_stiffness", "ft_damping", "ft_limit_stiffness", "ft_offset", "ft_rest_length"):
            h[k].append(getattr(t, k[3:]))
        low, high = t.get_limit_parameters()
        h["ft_limit_low"].append(low)
        h["ft_limit_high"].append(high)
        soft = t.limit_softness is not None and low <= high  # PhysX's inverted defaults: no limits
        h["ft_limit_soft"].append(softness_row(t.limit_softness if soft else None))
        h["ft_weight"].append(
            tendon_inverse_weight([((tj.link, tj.axis), tj.coefficient) for tj in t.acting_joints()], inertia)
            if soft
            else 0.0
        )
        root, acting = t.tendon_joints[0], t.acting_joints()
        h["ft_root_link"].append(li[root.link])
        first = root.children[0] if root.children[0] in acting else acting[0]
        h["ft_root_dof"].append(_dof_index(art, first.link.inbound_joint, first.axis))
        h["ft_root_dof_link"].append(li[first.link])
        h["ft_joint_start"].append(len(h["ftj_dof"]))
        h["ft_joint_count"].append(len(acting))
        # a tendon without spring, damper or limit applies no force (an MJCF tendon that only routes actuators): its
        # table stays (indices, a later change of its parameters rebuilds the rows), its rows are left out (the dm
        # dog's 94 rows of 8 such tendons were a quarter of its step)
        inert = t.stiffness == 0.0 and t.damping == 0.0 and (t.limit_stiffness == 0.0 or low > high) and not soft
        for tj in acting:
            if not inert:
                rows.append((int(COUPLING_FIXED), len(h["ftj_dof"])))
            h["ftj_tendon"].append(t_idx)
            h["ftj_dof"].append(_dof_index(art, tj.link.inbound_joint, tj.axis))
            h["ftj_link"].append(li[tj.link])
            h["ftj_coef"].append(tj.coefficient)
            h["ftj_recip"].append(tj.recip_coefficient)
        if soft:  # its limits as one MuJoCo-soft row after the tendon's rows
            rows.append((int(COUPLING_TENDON_LIMIT), t_idx))
    mimics = art.get_mimic_joints()
    weights = dof_inverse_weights(art) if any(m.softness is not None for m in mimics) else {}
    for m_idx, m in enumerate(mimics):
        rows.append((int(COUPLING_MIMIC), m_idx))
        h["mimic_term_start"].append(len(h["term_dof"]))
        h["mimic_term_count"].append(len(m.terms))
        h["mimic_offset"].append(m.offset)
        h["mimic_natural_frequency"].append(m.natural_frequency)
        h["mimic_damping_ratio"].append(m.damping_ratio)
        h["mimic_soft"].append(softness_row(m.softness))
        weight = m.soft_weight
        if weight is None:  # MuJoCo's joint equality: the coupled dofs' inverse weights, summed unscaled
            weight = sum(weights.get((joint.child_link, axis), 0.0) for joint, axis, _ in m.terms)
        h["mimic_weight"].append(weight)
        h["mimic_poly"].append(m.polynomial)
        for joint, axis, g in m.terms:
            h["term_dof"].append(_dof_index(art, joint, axis))
            h["term_coef"].append(g)
    h["row_kind"] = [r[0] for r in rows]
    h["row_item"] = [r[1] for r in rows]
    h["row_count"] = len(rows)
    return h


# index fields of the tables and the count each one indexes into ("link", "dof", or the table they point at)
_SHIFTS = {
    "mimic_term_start": "term_dof",
    "term_dof": "dof",
    "ft_joint_start": "ftj_dof",
    "ft_root_link": "link",
    "ft_root_dof": "dof",
    "ft_root_dof_link": "link",
    "ftj_tendon": "ft_stiffness",
    "ftj_dof": "dof",
    "ftj_link": "link",
    "att_link": "link",
    "att_parent": "att_link",
    "leaf_att": "att_link",
    "leaf_tendon": "st_stiffness",
    "leaf_root_att": "att_link",
    "leaf_root_child_att": "att_link",
}


_ROW_TABLE = {
    int(COUPLING_SPATIAL): "leaf_att",
    int(COUPLING_FIXED): "ftj_dof",
    int(COUPLING_MIMIC): "mimic_offset",
    int(COUPLING_TENDON_LIMIT): "ft_stiffness",
}


def coupling_arrays(arts: list[Articulation]) -> dict:
    """The coupling rows of a forest: each articulation's rows in turn, their table indices shifted."""
    h = {k: [] for k in CouplingRows.vars if k != "row_count"}
    counts = {"link": 0, "dof": 0}
    for art in arts:
        p = _tree_coupling_arrays(art)
        base = {k: len(h[k]) for k in h}
        for k in h:
            shift = counts[_SHIFTS[k]] if _SHIFTS.get(k) in counts else base.get(_SHIFTS.get(k), 0)
            if k == "row_item":
                h[k] += [i + base[_ROW_TABLE[kind]] for kind, i in zip(p["row_kind"], p[k])]
            elif k == "att_parent":
                h[k] += [i + shift if i >= 0 else -1 for i in p[k]]
            else:
                h[k] += [i + shift for i in p[k]] if k in _SHIFTS else p[k]
        counts["link"] += art.link_count
        counts["dof"] += art.dof_count
    h["row_count"] = len(h["row_kind"])
    return h


def build_coupling_rows(arts: list[Articulation], device: wp.Device | str | None) -> CouplingRows:
    arts = list(arts)
    return upload(CouplingRows, coupling_arrays(arts), device)


# -- deadzone controllers ---------------------------------------------------------------------------------------


def deadzone_arrays(arts: list[Articulation], joints: list[JointBase], joint_row_start: list[int]) -> dict:
    """Host arrays of the controllers of a block's articulations (in block dof order) and body joints."""
    kind, dof, joint, row, params = [], [], [], [], []
    offset = 0
    for art in arts:
        topo = art._topology()
        for i, link in enumerate(topo.links):
            j = link.inbound_joint
            if j is None:
                continue
            axes = list(topo.dof_axes[i])
            for ax, dz in sorted(j._deadzone.items()):
                if ax not in axes:
                    raise ValidationError(
                        f"joint '{j.name}': a deadzone on axis {AXIS_NAMES[ax]}, which is locked; "
                        "free or limit that axis, or remove the deadzone (set_deadzone(axis, None))"
                    )
                kind.append(0)
                dof.append(offset + topo.dof_start[i] + axes.index(ax))
                joint.append(-1)
                row.append(-1)
                params.append(_params(dz))
        offset += art.dof_count
    for jj, bj in enumerate(joints):
        for k in range(bj.num_coordinates):
            dz = bj.get_deadzone(k)
            if dz is not None:
                kind.append(1)
                dof.append(-1)
                joint.append(jj)
                row.append(joint_row_start[jj] + row_layout(bj.num_coordinates, bj.bilateral_count)[0][k])
                params.append(_params(dz))
    ints = {"kind": kind, "dof": dof, "joint": joint, "row": row}
    h = {k: np.array(v, np.int32).reshape(-1) for k, v in ints.items()}
    h["params"] = np.array(params, np.float32).reshape(-1, 9)
    h["count"] = len(kind)
    return h


def _params(dz) -> list:
    return [
        dz.low,
        dz.high,
        dz.stiffness,
        dz.damping,
        min(dz.max_force, 3.0e38),
        dz.secondary_target,
        dz.secondary_stiffness,
        dz.secondary_damping,
        dz.secondary_max_force,
    ]


def build_deadzone_table(
    arts: list[Articulation], joints: list[JointBase], joint_row_start: list[int], device: wp.Device | str | None
) -> DeadzoneTable:
    return upload(DeadzoneTable, deadzone_arrays(arts, joints, joint_row_start), device)
