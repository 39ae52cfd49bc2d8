"""The arrays of a block's contact rows (`ContactRows`; constraints/contact_rows.py builds and solves them,
constraints/pyramid.py holds MuJoCo's pyramidal cone) and the row writers both use."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..core.data import Kin
from ..core.model import Tree
from ..math.dense import add_row, row_dot, solve_row, zero_row
from .coupling_rows import add_jacobian_transpose

vec6 = wp.types.vector(length=6, dtype=float)


@wp.struct
class ContactRows:
    """The solver's side of a block's contacts (E envs, C slots, N generalized dofs): three rows per contact point
    of `ContactPoints` (same slots), their results, and the friction anchors kept from step to step."""

    gap: wp.array2d(dtype=float)  # (E, C) the normal row's separation [m]: detected, then tracked over TGS substeps
    tangent: wp.array2d(dtype=wp.vec3)  # (E, C) first friction direction (the second is normal x tangent)
    bounce: wp.array2d(dtype=float)  # (E, C) restitution target normal velocity (0 when not bouncing) [m/s]
    # a soft contact's normal row (constraints/softness.py), fixed for the step: cfm = SOFT_HARD for a hard contact,
    # SOFT_APART for a soft one whose surfaces do not overlap (no row: MuJoCo has no contact there)
    soft_target: wp.array2d(dtype=float)  # (E, C) [m/s]
    soft_cfm: wp.array2d(dtype=float)  # (E, C) [m/s per N s]; a pyramidal contact's: every edge's R
    # MuJoCo's pyramidal cone (a soft contact whose material asks for it, MAT_PYRAMID): four edge rows instead of
    # the normal row and PhysX's anchors (module docstring)
    pyramid: wp.array2d(dtype=int)  # (E, C) 1 if slot c's friction is MuJoCo's pyramidal cone, 2 its elliptic one
    edge_target: wp.array2d(dtype=wp.vec4)  # (E, C) the edges' targets, n + f t1, n - f t1, n + f t2, n - f t2 [m/s];
    # an elliptic contact's (constraints/elliptic.py): t1's and t2's targets [m/s], their R [m/s per N s], 0
    edge_impulse: wp.array2d(dtype=wp.vec4)  # (E, C) their accumulated impulses (>= 0) [N s]
    # its torsional and rolling edges (MAT_TORSION, MAT_ROLLING: MuJoCo's condim 4 and 6; constraints/pyramid.py);
    # the arrays hold one entry when no material of the block has them
    # an elliptic contact's (constraints/elliptic.py): 0, 1 or 3 angular rows, their targets [rad/s] and R, then
    # their impulses [N m s] (and zeros)
    ang_edges: wp.array2d(dtype=int)  # (E, C) 0, 2 (torsion) or 6 (and rolling) angular edges of slot c
    ang_g: wp.array3d(dtype=float)  # (E, 3C, N) relative angular velocity about n, t1, t2 [rad/s per generalized]
    ang_minv_g: wp.array3d(dtype=float)  # (E, 3C, N) M^-1 ang_g, for PGS's and TGS's visits
    ang_target: wp.array2d(dtype=vec6)  # (E, C) n +- f_tor spin, n +- f_roll roll1, n +- f_roll roll2 [m/s]
    ang_impulse: wp.array2d(dtype=vec6)  # (E, C) their impulses (>= 0) [N s]
    g: wp.array3d(dtype=float)  # (E, 3C, N) generalized directions of the normal and two friction rows
    minv_g: wp.array3d(dtype=float)  # (E, 3C, N) M^-1 g
    response: wp.array2d(dtype=float)  # (E, 3C) g^T M^-1 g
    delassus: wp.array3d(dtype=float)  # (E, 3C, 12) row r's entries g_r^T M^-1 g_s against the rows s of its patch
    impulse: wp.array2d(dtype=float)  # (E, 3C) accumulated impulses [N s]
    force: wp.array2d(dtype=wp.vec3)  # (E, C) reported force on link a at the point, world [N]
    # patch friction (PhysX's model, docs/design.md): the friction rows of slot c act at an anchor when
    # anchor[c] != 0 (the first one or two slots of a patch); anchors persist across steps while the patch sticks
    anchor: wp.array2d(dtype=int)  # (E, C) 1 if slot c's friction rows act at an anchor
    anchor_a: wp.array2d(dtype=wp.vec3)  # (E, C) anchor in link a's actor frame [m]
    anchor_b: wp.array2d(dtype=wp.vec3)  # (E, C) anchor in link b's actor frame (world for a static shape) [m]
    anchor_error: wp.array2d(dtype=wp.vec2)  # (E, C) anchor drift (a minus b) along the two friction directions [m]
    broken: wp.array2d(dtype=int)  # (E, C) 1 if the patch's friction hit its static bound in the last solve
    prev_count: wp.array(dtype=int)  # (E,) contacts of the previous step, for matching patches
    prev_shape_a: wp.array2d(dtype=int)  # (E, C)
    prev_shape_b: wp.array2d(dtype=int)  # (E, C)
    prev_anchor: wp.array2d(dtype=int)  # (E, C) anchor kept (it did not slip)
    prev_anchor_a: wp.array2d(dtype=wp.vec3)  # (E, C)
    prev_anchor_b: wp.array2d(dtype=wp.vec3)  # (E, C)


PATCH_ROWS = 12  # 4 contacts x (normal, 2 friction)
PATCH_SWEEPS = wp.constant(8)  # at most; a sweep that changes no row velocity by SWEEP_TOLERANCE ends them
SWEEP_TOLERANCE = wp.constant(1.0e-9)  # [m/s] (1e-6 let a 1.6 cm cube on a slope turn by 0.5 deg in 10 s)
vec_patch = wp.types.vector(length=PATCH_ROWS, dtype=float)
mat_patch = wp.types.matrix(shape=(PATCH_ROWS, PATCH_ROWS), dtype=float)


# The patch solvers' loads and stores (contact_rows, pyramid, elliptic), in while loops: Warp 1.19's CPU code runs a
# for-range loop with a runtime bound at about twice a while loop's cost an iteration (math/dense.py's row_dot), and
# these are the inner loops of every PGS and TGS contact visit.
@wp.func
def load_delassus(ct: ContactRows, env: int, c0: int, m: int) -> mat_patch:
    """The Delassus matrix of the patch whose first row is 3 c0, m rows (setup_contacts' ct.delassus)."""
    a = mat_patch()
    i = int(0)
    while i < m:
        j = int(0)
        while j < m:
            a[i, j] = ct.delassus[env, 3 * c0 + i, j]
            j += 1
        i += 1
    return a


@wp.func
def load_velocities(ct: ContactRows, v: wp.array2d(dtype=float), env: int, c0: int, m: int, n_gen: int) -> vec_patch:
    """The velocities g . v of the patch's m rows."""
    vel = vec_patch()
    i = int(0)
    while i < m:
        vel[i] = row_dot(ct.g, v, env, 3 * c0 + i, n_gen)
        i += 1
    return vel


@wp.func
def load_impulses(ct: ContactRows, env: int, c0: int, m: int) -> vec_patch:
    """The accumulated impulses of the patch's m rows."""
    lam = vec_patch()
    i = int(0)
    while i < m:
        lam[i] = ct.impulse[env, 3 * c0 + i]
        i += 1
    return lam


@wp.func
def apply_patch(
    ct: ContactRows,
    v: wp.array2d(dtype=float),
    env: int,
    c0: int,
    m: int,
    n_gen: int,
    lam: vec_patch,
    lam0: vec_patch,
) -> None:
    """The visit's one velocity update: v += M^-1 g (lam - lam0) row by row, and the new impulses stored."""
    i = int(0)
    while i < m:
        d = lam[i] - lam0[i]
        if d != 0.0:
            add_row(v, ct.minv_g, env, 3 * c0 + i, n_gen, d)
            ct.impulse[env, 3 * c0 + i] = lam[i]
        i += 1


@wp.func
def point_velocity(link_v: wp.array2d(dtype=wp.spatial_vector), env: int, link: int, p: wp.vec3) -> wp.vec3:
    if link < 0:
        return wp.vec3(0.0)
    v = link_v[env, link]
    return wp.spatial_bottom(v) + wp.cross(wp.spatial_top(v), p)


@wp.func
def set_row(
    tree: Tree,
    kin: Kin,
    ct: ContactRows,
    minv: wp.array3d(dtype=float),
    env: int,
    row: int,
    n_gen: int,
    la: int,
    pa: wp.vec3,
    lb: int,
    pb: wp.vec3,
    u: wp.vec3,
    responses: int,
) -> None:
    """Row `row` = the relative velocity along u of a's point pa and b's point pb (both relative to O); with
    `responses`, its M^-1 g and response too (PGS and TGS: the direct solver solves through its own factor, and
    its fallback to PGS computes them then, contact_rows.contact_responses)."""
    zero_row(ct.g, env, row, n_gen)
    add_jacobian_transpose(tree, kin, ct.g, env, row, la, wp.spatial_vector(wp.cross(pa, u), u), 1.0)
    if lb >= 0:
        add_jacobian_transpose(tree, kin, ct.g, env, row, lb, wp.spatial_vector(wp.cross(pb, u), u), -1.0)
    if responses != 0:
        ct.response[env, row] = solve_row(minv, ct.g, ct.minv_g, env, row, n_gen)
    ct.impulse[env, row] = 0.0


@wp.func
def clear_row(ct: ContactRows, env: int, row: int, n_gen: int) -> None:
    i = int(0)
    while i < n_gen:
        ct.g[env, row, i] = 0.0
        ct.minv_g[env, row, i] = 0.0
        i += 1
    ct.response[env, row] = 0.0
    ct.impulse[env, row] = 0.0


@wp.func
def patch_end(cp: ContactPoints, env: int, c: int, c1: int) -> int:
    """One past the last contact of the patch starting at c (consecutive contacts of one shape pair, <= 4)."""
    e = c + 1
    while (
        e < c1 and e - c < 4 and cp.shape_a[env, e] == cp.shape_a[env, c] and cp.shape_b[env, e] == cp.shape_b[env, c]
    ):
        e += 1
    return e
