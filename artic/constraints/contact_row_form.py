"""The contact rows in the one row form (constraints/row_form.py), which the direct solver assembles: per patch,
PhysX's normal rows and friction boxes at its anchors (or a pyramid of facets), or MuJoCo's soft cones: the
pyramid's four edges per contact (constraints/pyramid.py) and the elliptic cone's normal, friction and angular rows
(constraints/elliptic.py)."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..collision.geometry import MAT_ROLLING, MAT_TORSION
from ..math.dense import row_dot
from .contact_rows import ELLIPTIC, ContactRows, normal_target, patch_end, pyramid_edge
from .pyramid import angular_edge
from .row_form import (
    SRC_CONTACT,
    SRC_CONTACT_CONE,
    SRC_CONTACT_EDGE,
    SRC_CONTACT_FACET,
    RowForm,
    copy_dir,
    new_row,
    set_velocity_pass,
)
from .softness import SOFT_APART


@wp.func
def _add_pyramid_rows(cp: ContactPoints, ct: ContactRows, rf: RowForm, env: int, n_gen: int, c0: int, c1: int) -> None:
    """A pyramidal patch's rows: four edges g_n + s f g_tk per overlapping contact, and its torsional and rolling
    edges g_n + s f_k ang_g_k (condim 4 and 6), each pushing only, with its soft target and R (constraints/pyramid.py);
    the same rows in both passes."""
    f = cp.material[env, c0][0]
    for c in range(c0, c1):
        cfm = ct.soft_cfm[env, c]
        if cfm >= 0.0:
            targets = ct.edge_target[env, c]
            for e in range(4):
                ks = pyramid_edge(e)
                i = new_row(rf, env, n_gen, SRC_CONTACT_EDGE, 10 * c + e, targets[e], cfm, 0.0, wp.inf)
                copy_dir(rf, env, i, n_gen, ct.g, 3 * c)
                t = 3 * c + int(ks[0])
                sf = ks[1] * f
                k = int(0)
                while k < n_gen:
                    rf.g[env, i, k] = rf.g[env, i, k] + sf * ct.g[env, t, k]
                    k += 1
            for e in range(ct.ang_edges[env, c]):
                rs = angular_edge(cp, env, c, e)
                i = new_row(
                    rf, env, n_gen, SRC_CONTACT_EDGE, 10 * c + 4 + e, ct.ang_target[env, c][e], cfm, 0.0, wp.inf
                )
                copy_dir(rf, env, i, n_gen, ct.g, 3 * c)
                t = int(rs[0])
                k = int(0)
                while k < n_gen:
                    rf.g[env, i, k] = rf.g[env, i, k] + rs[1] * ct.ang_g[env, t, k]
                    k += 1


@wp.func
def _add_elliptic_rows(cp: ContactPoints, ct: ContactRows, rf: RowForm, env: int, n_gen: int, c0: int, c1: int) -> None:
    """An elliptic patch's rows, in a run per overlapping contact (constraints/elliptic.py): the soft normal
    (lambda >= 0), its two soft friction rows and its angular ones (condim 4 and 6), each boxed at +-f_k times the
    normal's impulse (the box around the cone, which solvers/cone_polish.py then brings onto the cone); source index
    6 c + k; the same rows in both passes."""
    for c in range(c0, c1):
        cfm = ct.soft_cfm[env, c]
        if cfm >= 0.0:
            et = ct.edge_target[env, c]
            at = ct.ang_target[env, c]
            mat = cp.material[env, c]
            normal = new_row(rf, env, n_gen, SRC_CONTACT_CONE, 6 * c, ct.soft_target[env, c], cfm, 0.0, wp.inf)
            copy_dir(rf, env, normal, n_gen, ct.g, 3 * c)
            for k in range(2 + ct.ang_edges[env, c]):
                target = et[k % 2]
                r = et[2]
                f = mat[0]
                g = ct.g
                src = 3 * c + 1 + k
                if k >= 2:  # angular: spin (torsional friction), then rolling
                    target = at[k - 2]
                    r = at[k + 1]
                    f = mat[MAT_ROLLING]
                    if k == 2:
                        f = mat[MAT_TORSION]
                    g = ct.ang_g
                    src = 3 * c + k - 2
                i = new_row(rf, env, n_gen, SRC_CONTACT_CONE, 6 * c + 1 + k, target, r, 0.0, 0.0)
                copy_dir(rf, env, i, n_gen, g, src)
                rf.findex[env, i] = normal
                rf.fcount[env, i] = 1
                rf.mu_static[env, i] = f
                rf.mu_dynamic[env, i] = f


@wp.func
def facet_base(ct: ContactRows, v_star: wp.array2d(dtype=float), env: int, c: int, n_gen: int) -> float:
    """The angle from t1 of anchor c's slip at the unconstrained velocity v*, 0 without one: a pyramid turns a
    vertex to it (add_contact_rows)."""
    u1 = row_dot(ct.g, v_star, env, 3 * c + 1, n_gen)
    u2 = row_dot(ct.g, v_star, env, 3 * c + 2, n_gen)
    if u1 * u1 + u2 * u2 < 1.0e-18:
        return 0.0
    return wp.atan2(u2, u1)


@wp.func
def friction_direction(directions: int, k: int, base: float) -> wp.vec2:
    """Friction direction k of an anchor with `directions` rows, as its (t1, t2) components: t1 and t2 for PhysX's
    box (2), else evenly spaced over half a turn from half a step past `base` (add_contact_rows)."""
    angle = float(k) * wp.pi / 2.0
    if directions > 2:
        angle = base + (float(k) + 0.5) * wp.pi / float(directions)
    return wp.vec2(wp.cos(angle), wp.sin(angle))


@wp.func
def _add_friction_row(
    ct: ContactRows, rf: RowForm, env: int, n_gen: int, kind: int, src: int, c: int, d: wp.vec2, target: float
) -> int:
    """A friction row along d[0] t1 + d[1] t2 of contact c, boxed later (findex) and targeting `target` in the
    position pass, 0 in the velocity pass."""
    i = new_row(rf, env, n_gen, kind, src, target, 0.0, 0.0, 0.0)
    set_velocity_pass(rf, env, i, 0.0, 0.0)
    k = int(0)
    while k < n_gen:
        rf.g[env, i, k] = d[0] * ct.g[env, 3 * c + 1, k] + d[1] * ct.g[env, 3 * c + 2, k]
        k += 1
    return i


@wp.func
def add_contact_rows(
    cp: ContactPoints,
    ct: ContactRows,
    rf: RowForm,
    v_star: wp.array2d(dtype=float),
    env: int,
    n_gen: int,
    h: float,
    erp: float,
    directions: int,
) -> None:
    """Per patch: the normal rows, then `directions` friction rows per anchor, each boxed by mu' / anchors times the
    patch's normal impulse (static, then dynamic once sliding). Two are PhysX's box: along t1 and t2, mu' = mu
    (t1 along the anchor's slip at the start of the step: contact_rows.setup_contacts). More (m, even) are a pyramid
    of 2m facets: directions (k + 1/2) pi / m from the anchor's slip at the unconstrained velocity v* (facet_base),
    whose boxes sum to a regular 2m-gon with a vertex along that slip and every vertex on the Coulomb disc of radius
    mu N (mu' = mu sin(pi / 2m)). Implicit Coulomb friction at one point opposes the slip at the step's end, which is
    parallel to v*'s: the vertex is where the disc's answer lies, and a lone contact slides and sticks as with the
    disc itself. The box puts a face across the slip instead, which also resists a sideways push up to mu N."""
    count = cp.count[env]
    c0 = int(0)
    while c0 < count:
        c1 = patch_end(cp, env, c0, count)
        if ct.pyramid[env, c0] == ELLIPTIC:
            _add_elliptic_rows(cp, ct, rf, env, n_gen, c0, c1)
            c0 = c1
            continue
        if ct.pyramid[env, c0] != 0:
            _add_pyramid_rows(cp, ct, rf, env, n_gen, c0, c1)
            c0 = c1
            continue
        first = rf.count[env]
        for c in range(c0, c1):
            cfm = ct.soft_cfm[env, c]
            hi = wp.inf
            if cfm == SOFT_APART:
                hi = 0.0  # a soft contact whose surfaces do not overlap: no force (kept for the patch's layout)
            target = normal_target(ct, env, c, h, erp, 1)
            i = new_row(rf, env, n_gen, SRC_CONTACT, 3 * c, target, wp.max(cfm, 0.0), 0.0, hi)
            set_velocity_pass(rf, env, i, normal_target(ct, env, c, h, erp, 0), wp.max(cfm, 0.0))
            copy_dir(rf, env, i, n_gen, ct.g, 3 * c)
        anchors = float(0.0)
        for c in range(c0, c1):
            anchors += float(ct.anchor[env, c])
        mat = cp.material[env, c0]
        scale = 1.0 / anchors
        kind = SRC_CONTACT  # the box's rows are the contact's own tangent rows
        if directions > 2:
            scale = wp.sin(wp.pi / float(2 * directions)) / anchors
            kind = SRC_CONTACT_FACET
        for c in range(c0, c1):
            if ct.anchor[env, c] != 0:
                drift = ct.anchor_error[env, c] * (-erp / h)  # the position pass pulls the anchors' drift back
                base = float(0.0)
                if kind == SRC_CONTACT_FACET:
                    base = facet_base(ct, v_star, env, c, n_gen)
                for k in range(directions):
                    src = 3 * c + 1 + k
                    if kind == SRC_CONTACT_FACET:
                        src = 8 * c + k
                    d = friction_direction(directions, k, base)
                    i = _add_friction_row(ct, rf, env, n_gen, kind, src, c, d, wp.dot(d, drift))
                    rf.findex[env, i] = first
                    rf.fcount[env, i] = c1 - c0
                    rf.mu_static[env, i] = mat[0] * scale
                    rf.mu_dynamic[env, i] = mat[1] * scale
        c0 = c1
