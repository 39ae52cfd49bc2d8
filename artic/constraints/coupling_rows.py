"""Coupling rows: mimic joints, fixed-tendon joints and spatial-tendon leaves, as rows with a general
generalized-impulse direction g (per env, configuration dependent).

A row's impulse dF changes the generalized velocity by dF M^-1 g and its response is r = g^T M^-1 g:
* mimic joint: g = sum_i G_i e_{d_i} (J of the mimic-joint note);
* fixed-tendon joint i: g = J_i^T w_i - J_root^T w_0, the couple of physx-notes 5.3 (w_i: a unit torque about
  joint i's axis, or a unit force along it at its anchor; w_0 the same for the root's first child tendon joint,
  on the tendon root link);
* spatial-tendon leaf: g = J_leaf^T (n at the leaf point) - J_root^T (n_0 at the root point), physx-notes 5.4.
Rows are solved before the joint rows, spatial tendons, then fixed tendons, then mimic joints (physx-notes 1.7).
"""

from __future__ import annotations

import warp as wp

from ..description.articulation import Articulation
from ..core.data import Kin
from ..math.dense import solve_row
from ..math.spatial import root_column
from ..core.model import Tree
from ..core.structs import upload

COUPLING_SPATIAL = wp.constant(0)
COUPLING_FIXED = wp.constant(1)
COUPLING_MIMIC = wp.constant(2)


@wp.struct
class CouplingRows:
    """Static tables of an articulation's couplings (K rows; T mimic terms; F fixed tendons with U tendon joints;
    S spatial tendons with A attachments and P leaves)."""

    row_count: int
    row_kind: wp.array(dtype=int)  # (K,) COUPLING_*
    row_item: wp.array(dtype=int)  # (K,) index of the leaf, tendon joint or mimic joint
    mimic_term_start: wp.array(dtype=int)  # (mimics,)
    mimic_term_count: wp.array(dtype=int)
    mimic_offset: wp.array(dtype=float)
    mimic_natural_frequency: wp.array(dtype=float)
    mimic_damping_ratio: wp.array(dtype=float)
    term_dof: wp.array(dtype=int)  # (T,) dof of each term (first term of a mimic: coefficient 1)
    term_coef: wp.array(dtype=float)  # (T,)
    ft_stiffness: wp.array(dtype=float)  # (F,)
    ft_damping: wp.array(dtype=float)
    ft_limit_stiffness: wp.array(dtype=float)
    ft_offset: wp.array(dtype=float)
    ft_rest_length: wp.array(dtype=float)
    ft_limit_low: wp.array(dtype=float)
    ft_limit_high: wp.array(dtype=float)
    ft_joint_start: wp.array(dtype=int)  # (F,) first non-root tendon joint
    ft_joint_count: wp.array(dtype=int)  # (F,) N: number of non-root tendon joints
    ft_root_link: wp.array(dtype=int)  # (F,) tendon root link (receives the reactions)
    ft_root_dof: wp.array(dtype=int)  # (F,) dof whose axis is row0 (the root's first child tendon joint)
    ft_root_dof_link: wp.array(dtype=int)  # (F,) the link whose inbound joint owns that dof
    ftj_tendon: wp.array(dtype=int)  # (U,)
    ftj_dof: wp.array(dtype=int)
    ftj_link: wp.array(dtype=int)
    ftj_coef: wp.array(dtype=float)
    ftj_recip: wp.array(dtype=float)
    st_stiffness: wp.array(dtype=float)  # (S,)
    st_damping: wp.array(dtype=float)
    st_limit_stiffness: wp.array(dtype=float)
    st_offset: wp.array(dtype=float)
    att_link: wp.array(dtype=int)  # (A,)
    att_parent: wp.array(dtype=int)  # (A,) -1 for a root attachment
    att_offset: wp.array(dtype=wp.vec3)  # (A,) point in the link's COM frame
    att_coef: wp.array(dtype=float)
    leaf_att: wp.array(dtype=int)  # (P,)
    leaf_tendon: wp.array(dtype=int)
    leaf_root_att: wp.array(dtype=int)
    leaf_root_child_att: wp.array(dtype=int)  # the root's first child attachment (direction n_0)
    leaf_rest_length: wp.array(dtype=float)
    leaf_limit_low: wp.array(dtype=float)
    leaf_limit_high: wp.array(dtype=float)


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
    for t_idx, t in enumerate(art.get_fixed_tendons()):
        for k in ("ft_stiffness", "ft_damping", "ft_limit_stiffness", "ft_offset", "ft_rest_length"):
            h[k].append(getattr(t, k[3:]))
        low, high = t.get_limit_parameters()
        h["ft_limit_low"].append(low)
        h["ft_limit_high"].append(high)
        root = t.tendon_joints[0]
        h["ft_root_link"].append(li[root.link])
        first = root.children[0]
        h["ft_root_dof"].append(_dof_index(art, first.link.inbound_joint, first.axis))
        h["ft_root_dof_link"].append(li[first.link])
        h["ft_joint_start"].append(len(h["ftj_dof"]))
        h["ft_joint_count"].append(len(t.tendon_joints) - 1)
        for tj in t.tendon_joints[1:]:
            rows.append((int(COUPLING_FIXED), len(h["ftj_dof"])))
            h["ftj_tendon"].append(t_idx)
            h["ftj_dof"].append(_dof_index(art, tj.link.inbound_joint, tj.axis))
            h["ftj_link"].append(li[tj.link])
            h["ftj_coef"].append(tj.coefficient)
            h["ftj_recip"].append(tj.recip_coefficient)
    for m_idx, m in enumerate(art.get_mimic_joints()):
        rows.append((int(COUPLING_MIMIC), m_idx))
        h["mimic_term_start"].append(len(h["term_dof"]))
        h["mimic_term_count"].append(len(m.terms))
        h["mimic_offset"].append(m.offset)
        h["mimic_natural_frequency"].append(m.natural_frequency)
        h["mimic_damping_ratio"].append(m.damping_ratio)
        for joint, axis, g in m.terms:
            h["term_dof"].append(_dof_index(art, joint, axis))
            h["term_coef"].append(g)
    h["row_kind"] = [r[0] for r in rows]
    h["row_item"] = [r[1] for r in rows]
    h["row_count"] = len(rows)
    return h


# index fields of the tables and the count each one indexes into ("link", "dof", or the table they point at)
_SHIFTS = {
    "mimic_term_start": "term_dof", "term_dof": "dof", "ft_joint_start": "ftj_dof", "ft_root_link": "link",
    "ft_root_dof": "dof", "ft_root_dof_link": "link", "ftj_tendon": "ft_stiffness", "ftj_dof": "dof",
    "ftj_link": "link", "att_link": "link", "att_parent": "att_link", "leaf_att": "att_link",
    "leaf_tendon": "st_stiffness", "leaf_root_att": "att_link", "leaf_root_child_att": "att_link",
}
_ROW_TABLE = {int(COUPLING_SPATIAL): "leaf_att", int(COUPLING_FIXED): "ftj_dof", int(COUPLING_MIMIC): "mimic_offset"}


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


def build_coupling_rows(arts, device) -> CouplingRows:
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    return upload(CouplingRows, coupling_arrays(arts), device)


# -- per-env setup (once per step) --------------------------------------------------------------------------------


@wp.func
def dof_wrench(tree: Tree, kin: Kin, link_pose: wp.array2d(dtype=wp.transform), env: int, d: int, link: int):
    """A unit effort along dof d as a force about O: a pure torque about an angular axis, a force along a linear
    axis at the joint anchor."""
    s = kin.dof_motion[env, d]
    if tree.dof_axis[d] < 3:
        return wp.spatial_vector(wp.spatial_top(s), wp.vec3(0.0))
    xj = link_pose[env, link] * wp.transform_inverse(tree.joint_child_pose_inv[link])
    anchor = wp.transform_get_translation(xj) - kin.origin[env]
    u = wp.spatial_bottom(s)
    return wp.spatial_vector(wp.cross(anchor, u), u)


@wp.func
def add_jacobian_transpose(tree: Tree, kin: Kin, g: wp.array3d(dtype=float), env: int, k: int, link: int,
                           w: wp.spatial_vector, sign: float):
    """g[k] += sign J_link^T w: the generalized impulse of a force w (about O) on `link`."""
    j = link
    while tree.link_parent[j] >= 0:
        for kk in range(tree.joint_dof_count[j]):
            d = tree.joint_dof_start[j] + kk
            gd = tree.dof_gen[d]
            g[env, k, gd] = g[env, k, gd] + sign * wp.dot(kin.dof_motion[env, d], w)
        j = tree.link_parent[j]
    rg = tree.link_root_gen[j]
    if rg >= 0:
        for c in range(6):
            g[env, k, rg + c] = g[env, k, rg + c] + sign * wp.dot(root_column(kin.link_com[env, j], c), w)


@wp.func
def attachment_point(tree: Tree, cr: CouplingRows, kin: Kin, link_pose: wp.array2d(dtype=wp.transform), env: int,
                     a: int):
    """World point of attachment a relative to O (link body frame = actor pose * COM pose)."""
    link = cr.att_link[a]
    local = tree.link_com_local[link] + wp.quat_rotate(tree.link_com_rot[link], cr.att_offset[a])
    return wp.transform_point(link_pose[env, link], local) - kin.origin[env]


@wp.func
def _unit_or_zero(v: wp.vec3):
    d = wp.length(v)
    if d <= 0.001:
        return wp.vec3(0.0)
    return v / d


@wp.func
def setup_couplings(tree: Tree, cr: CouplingRows, kin: Kin, link_pose: wp.array2d(dtype=wp.transform),
                    minv: wp.array3d(dtype=float), g: wp.array3d(dtype=float), minv_g: wp.array3d(dtype=float),
                    r: wp.array2d(dtype=float), length: wp.array2d(dtype=float), env: int, n_gen: int):
    """Directions g, M^-1 g, responses and (spatial tendons) path lengths of every coupling row."""
    for k in range(cr.row_count):
        for c in range(n_gen):
            g[env, k, c] = 0.0
        item = cr.row_item[k]
        kind = cr.row_kind[k]
        if kind == COUPLING_SPATIAL:
            a = cr.leaf_att[item]
            root = cr.leaf_root_att[item]
            pb = attachment_point(tree, cr, kin, link_pose, env, a)
            n = _unit_or_zero(attachment_point(tree, cr, kin, link_pose, env, cr.att_parent[a]) - pb)
            pa = attachment_point(tree, cr, kin, link_pose, env, root)
            n0 = _unit_or_zero(pa - attachment_point(tree, cr, kin, link_pose, env, cr.leaf_root_child_att[item]))
            add_jacobian_transpose(tree, kin, g, env, k, cr.att_link[a], wp.spatial_vector(wp.cross(pb, n), n),
                                   1.0)
            add_jacobian_transpose(tree, kin, g, env, k, cr.att_link[root],
                                   wp.spatial_vector(wp.cross(pa, n0), n0), -1.0)
            total = cr.st_offset[cr.leaf_tendon[item]] * cr.att_coef[root]
            x = a
            while cr.att_parent[x] >= 0:
                p = cr.att_parent[x]
                seg = attachment_point(tree, cr, kin, link_pose, env, x) - attachment_point(tree, cr, kin, link_pose,
                                                                                            env, p)
                total += cr.att_coef[x] * wp.length(seg)
                x = p
            length[env, k] = total
        elif kind == COUPLING_FIXED:
            t = cr.ftj_tendon[item]
            add_jacobian_transpose(tree, kin, g, env, k, cr.ftj_link[item],
                                   dof_wrench(tree, kin, link_pose, env, cr.ftj_dof[item], cr.ftj_link[item]), 1.0)
            add_jacobian_transpose(tree, kin, g, env, k, cr.ft_root_link[t],
                                   dof_wrench(tree, kin, link_pose, env, cr.ft_root_dof[t], cr.ft_root_dof_link[t]),
                                   -1.0)
        else:
            for m in range(cr.mimic_term_count[item]):
                term = cr.mimic_term_start[item] + m
                gd = tree.dof_gen[cr.term_dof[term]]
                g[env, k, gd] = g[env, k, gd] + cr.term_coef[term]
        r[env, k] = solve_row(minv, g, minv_g, env, k, n_gen)


__all__ = ["COUPLING_FIXED", "COUPLING_MIMIC", "COUPLING_SPATIAL", "CouplingRows", "build_coupling_rows",
           "setup_couplings"]
