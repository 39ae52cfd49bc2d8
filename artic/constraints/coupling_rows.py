"""Coupling rows: mimic joints, fixed-tendon joints and spatial-tendon leaves, as rows with a general
generalized-impulse direction g (per env, configuration dependent).

A row's impulse dF changes the generalized velocity by dF M^-1 g and its response is r = g^T M^-1 g:
* mimic joint: g = sum_i G_i e_{d_i} (J of the mimic-joint note), plus p'(q_B) on the second dof when C carries
  a polynomial p in q_B (MuJoCo's polycoef);
* fixed-tendon joint i: g = J_i^T w_i - J_root^T w_0, the couple of physx-notes 5.3 (w_i: a unit torque about
  joint i's axis, or a unit force along it at its anchor; w_0 the same for the root's first child tendon joint,
  on the tendon root link);
* spatial-tendon leaf: g = J_leaf^T (n at the leaf point) - J_root^T (n_0 at the root point), physx-notes 5.4;
* MuJoCo-soft fixed-tendon limit: g = sum_i c_i e_{d_i}, the tendon length's gradient (a row after its tendon's).
Rows are solved before the joint rows, spatial tendons, then fixed tendons, then mimic joints (physx-notes 1.7).
"""

from __future__ import annotations

import warp as wp

from ..core.data import Kin
from ..core.model import Tree, soft_params
from ..math.dense import row_dot, solve_row, zero_row
from ..math.spatial import root_column
from .limit import soft_limit_row
from .softness import SOFT_HARD, is_soft, soft_row

COUPLING_SPATIAL = wp.constant(0)
COUPLING_FIXED = wp.constant(1)
COUPLING_MIMIC = wp.constant(2)
COUPLING_TENDON_LIMIT = wp.constant(3)  # a MuJoCo-soft fixed-tendon limit: one row along sum_i c_i e_i


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
    mimic_soft: wp.array(dtype=soft_params)  # (mimics,) MuJoCo's solref, solimp (zeros: hard or PhysX-compliant)
    mimic_weight: wp.array(dtype=float)  # (mimics,) a soft row's approximate inverse effective mass [1/kg...]
    mimic_poly: wp.array(dtype=wp.vec4)  # (mimics,) (x0, k2, k3, k4): C += sum_k k_k (q_B - x0)^k (zeros: linear)
    term_dof: wp.array(dtype=int)  # (T,) dof of each term (first term of a mimic: coefficient 1)
    term_coef: wp.array(dtype=float)  # (T,)
    ft_stiffness: wp.array(dtype=float)  # (F,)
    ft_damping: wp.array(dtype=float)
    ft_limit_stiffness: wp.array(dtype=float)
    ft_offset: wp.array(dtype=float)
    ft_rest_length: wp.array(dtype=float)
    ft_limit_low: wp.array(dtype=float)
    ft_limit_high: wp.array(dtype=float)
    ft_limit_soft: wp.array(dtype=soft_params)  # (F,) MuJoCo's solreflimit, solimplimit; zeros: PhysX's limit spring
    ft_weight: wp.array(dtype=float)  # (F,) tendon_invweight0, J M^-1 J^T at the described pose (soft limits only)
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


# -- per-env setup (once per step) --------------------------------------------------------------------------------


@wp.func
def dof_wrench(
    tree: Tree, kin: Kin, link_pose: wp.array2d(dtype=wp.transform), env: int, d: int, link: int
) -> wp.spatial_vector:
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
def add_jacobian_transpose(
    tree: Tree, kin: Kin, g: wp.array3d(dtype=float), env: int, k: int, link: int, w: wp.spatial_vector, sign: float
) -> None:
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
def attachment_point(
    tree: Tree, cr: CouplingRows, kin: Kin, link_pose: wp.array2d(dtype=wp.transform), env: int, a: int
) -> wp.vec3:
    """World point of attachment a relative to O (link body frame = actor pose * COM pose)."""
    link = cr.att_link[a]
    local = tree.link_com_local[link] + wp.quat_rotate(tree.link_com_rot[link], cr.att_offset[a])
    return wp.transform_point(link_pose[env, link], local) - kin.origin[env]


@wp.func
def _unit_or_zero(v: wp.vec3) -> wp.vec3:
    d = wp.length(v)
    if d <= 0.001:
        return wp.vec3(0.0)
    return v / d


@wp.func
def setup_couplings(
    tree: Tree,
    cr: CouplingRows,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    minv: wp.array3d(dtype=float),
    g: wp.array3d(dtype=float),
    minv_g: wp.array3d(dtype=float),
    r: wp.array2d(dtype=float),
    length: wp.array2d(dtype=float),
    joint_q: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    responses: int,
) -> None:
    """Directions g, (spatial tendons, soft fixed-tendon limits) lengths and, with `responses`, M^-1 g and the
    responses of every coupling row. Without `responses` (the direct solver) a fixed-tendon joint's row is left out:
    the direct solver makes one row per tendon from its coefficients, and neither reads these directions nor, but
    for a PhysX-compliant mimic joint, the responses; its fallback to PGS computes both then (fixed_directions,
    coupling_responses). The Shadow hand's 56 tendon-joint rows were 8 us of its step."""
    for k in range(cr.row_count):
        item = cr.row_item[k]
        kind = cr.row_kind[k]
        if kind == COUPLING_FIXED:
            if responses != 0:
                _fixed_direction(tree, cr, kin, link_pose, g, env, k, n_gen)
            continue
        zero_row(g, env, k, n_gen)
        if kind == COUPLING_SPATIAL:
            a = cr.leaf_att[item]
            root = cr.leaf_root_att[item]
            pb = attachment_point(tree, cr, kin, link_pose, env, a)
            n = _unit_or_zero(attachment_point(tree, cr, kin, link_pose, env, cr.att_parent[a]) - pb)
            pa = attachment_point(tree, cr, kin, link_pose, env, root)
            n0 = _unit_or_zero(pa - attachment_point(tree, cr, kin, link_pose, env, cr.leaf_root_child_att[item]))
            add_jacobian_transpose(tree, kin, g, env, k, cr.att_link[a], wp.spatial_vector(wp.cross(pb, n), n), 1.0)
            add_jacobian_transpose(
                tree, kin, g, env, k, cr.att_link[root], wp.spatial_vector(wp.cross(pa, n0), n0), -1.0
            )
            total = cr.st_offset[cr.leaf_tendon[item]] * cr.att_coef[root]
            x = a
            while cr.att_parent[x] >= 0:
                p = cr.att_parent[x]
                seg = attachment_point(tree, cr, kin, link_pose, env, x) - attachment_point(
                    tree, cr, kin, link_pose, env, p
                )
                total += cr.att_coef[x] * wp.length(seg)
                x = p
            length[env, k] = total
        elif kind == COUPLING_TENDON_LIMIT:
            total = cr.ft_offset[item]
            for m in range(cr.ft_joint_count[item]):
                u = cr.ft_joint_start[item] + m
                gd = tree.dof_gen[cr.ftj_dof[u]]
                g[env, k, gd] = g[env, k, gd] + cr.ftj_coef[u]
                total += cr.ftj_coef[u] * joint_q[env, cr.ftj_dof[u]]
            length[env, k] = total
        else:
            for m in range(cr.mimic_term_count[item]):
                gd = tree.dof_gen[cr.term_dof[cr.mimic_term_start[item] + m]]
                g[env, k, gd] = g[env, k, gd] + mimic_slope(cr, joint_q, env, item, m)
    if responses != 0:
        coupling_responses(cr, minv, g, minv_g, r, env, n_gen)


@wp.func
def _fixed_direction(
    tree: Tree,
    cr: CouplingRows,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    g: wp.array3d(dtype=float),
    env: int,
    k: int,
    n_gen: int,
) -> None:
    """Row k's g, a fixed-tendon joint's couple: J_i^T w_i - J_root^T w_0 (module docstring)."""
    zero_row(g, env, k, n_gen)
    item = cr.row_item[k]
    t = cr.ftj_tendon[item]
    wi = dof_wrench(tree, kin, link_pose, env, cr.ftj_dof[item], cr.ftj_link[item])
    add_jacobian_transpose(tree, kin, g, env, k, cr.ftj_link[item], wi, 1.0)
    w0 = dof_wrench(tree, kin, link_pose, env, cr.ft_root_dof[t], cr.ft_root_dof_link[t])
    add_jacobian_transpose(tree, kin, g, env, k, cr.ft_root_link[t], w0, -1.0)


@wp.func
def fixed_directions(
    tree: Tree,
    cr: CouplingRows,
    kin: Kin,
    link_pose: wp.array2d(dtype=wp.transform),
    g: wp.array3d(dtype=float),
    env: int,
    n_gen: int,
) -> None:
    """The fixed-tendon joints' rows' g that setup_couplings leaves out without `responses`."""
    for k in range(cr.row_count):
        if cr.row_kind[k] == COUPLING_FIXED:
            _fixed_direction(tree, cr, kin, link_pose, g, env, k, n_gen)


@wp.func
def coupling_responses(
    cr: CouplingRows,
    minv: wp.array3d(dtype=float),
    g: wp.array3d(dtype=float),
    minv_g: wp.array3d(dtype=float),
    r: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
) -> None:
    """M^-1 g and the response g^T M^-1 g of every coupling row, from its direction g."""
    for k in range(cr.row_count):
        r[env, k] = solve_row(minv, g, minv_g, env, k, n_gen)


@wp.func
def hard_mimics(cr: CouplingRows) -> int:
    """1 when a mimic joint is not MuJoCo-soft: its rows' stiffness and damping scale with its response
    (row_form.add_coupling_rows), which needs M^-1 g."""
    for k in range(cr.row_count):
        if cr.row_kind[k] == COUPLING_MIMIC and not is_soft(cr.mimic_soft[cr.row_item[k]]):
            return 1
    return 0


@wp.func
def mimic_slope(cr: CouplingRows, joint_q: wp.array2d(dtype=float), env: int, item: int, m: int) -> float:
    """dC/dq of mimic joint `item`'s term m: its gear ratio, plus p'(q_B) on the second term."""
    term = cr.mimic_term_start[item] + m
    slope = cr.term_coef[term]
    if m == 1:
        poly = cr.mimic_poly[item]
        x = joint_q[env, cr.term_dof[term]] - poly[0]
        slope += x * (2.0 * poly[1] + x * (3.0 * poly[2] + x * 4.0 * poly[3]))
    return slope


@wp.func
def mimic_value(cr: CouplingRows, joint_q: wp.array2d(dtype=float), env: int, item: int) -> float:
    """C of mimic joint `item`: offset + sum G_i q_i + p(q_B), p = k2 x^2 + k3 x^3 + k4 x^4, x = q_B - x0."""
    c = cr.mimic_offset[item]
    for m in range(cr.mimic_term_count[item]):
        term = cr.mimic_term_start[item] + m
        c += cr.term_coef[term] * joint_q[env, cr.term_dof[term]]
    poly = cr.mimic_poly[item]
    x = joint_q[env, cr.term_dof[cr.mimic_term_start[item] + 1]] - poly[0]
    return c + x * x * (poly[1] + x * (poly[2] + x * poly[3]))


@wp.func
def mimic_speed_bound(
    cr: CouplingRows, max_velocity: wp.array(dtype=float), joint_q: wp.array2d(dtype=float), env: int, item: int
) -> float:
    """The fastest |dC/dt| the coupled dofs' velocity limits allow (constraints/mimic.py's bias cap)."""
    bound = float(0.0)
    for m in range(cr.mimic_term_count[item]):
        term = cr.mimic_term_start[item] + m
        bound += wp.abs(mimic_slope(cr, joint_q, env, item, m)) * max_velocity[cr.term_dof[term]]
    return bound


@wp.func
def soft_coupling_row(
    cr: CouplingRows,
    g: wp.array3d(dtype=float),
    length: wp.array2d(dtype=float),
    v0: wp.array2d(dtype=float),
    joint_q: wp.array2d(dtype=float),
    env: int,
    k: int,
    n_gen: int,
    dt: float,
) -> wp.vec2:
    """(target, cfm) of coupling row k at the step's start (rate g . v0) when it is MuJoCo-soft: a mimic joint
    (MuJoCo's joint and tendon equalities), softness.soft_row at its violation C; a fixed-tendon limit,
    limit.soft_limit_row at its length (cfm SOFT_APART within the range). cfm SOFT_HARD for every other row. No
    J-dot term, a polynomial mimic's p'' q_B'^2 left out too: the quartic case follows MuJoCo to 1.2e-5 rad, so
    MuJoCo's reference leaves it out as well, or it is below that."""
    out = wp.vec2(0.0, SOFT_HARD)
    if cr.row_kind[k] == COUPLING_TENDON_LIMIT:
        t = cr.row_item[k]
        out = soft_limit_row(
            cr.ft_limit_soft[t],
            length[env, k] - cr.ft_limit_low[t],
            cr.ft_limit_high[t] - length[env, k],
            row_dot(g, v0, env, k, n_gen),
            cr.ft_weight[t],
            dt,
        )
    elif cr.row_kind[k] == COUPLING_MIMIC:
        item = cr.row_item[k]
        p = cr.mimic_soft[item]
        if is_soft(p):
            c = mimic_value(cr, joint_q, env, item)
            out = soft_row(p, c, row_dot(g, v0, env, k, n_gen), cr.mimic_weight[item], dt, dt)
    return out


__all__ = [
    "COUPLING_FIXED",
    "COUPLING_MIMIC",
    "COUPLING_SPATIAL",
    "COUPLING_TENDON_LIMIT",
    "CouplingRows",
    "add_jacobian_transpose",
    "dof_wrench",
    "mimic_slope",
    "mimic_speed_bound",
    "mimic_value",
    "setup_couplings",
    "soft_coupling_row",
]
