"""The direct solver's per-env arrays (solvers/direct.py), and what a solve leaves in them for the rest of the step
and for the reports: each row's impulse written back into its kind's accumulator (write_back)."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from ..constraints.body_joint_rows import BodyJointArrays
from ..constraints.contact_row_form import facet_base, friction_direction
from ..constraints.contact_rows import ELLIPTIC, ContactRows, pyramid_impulses
from ..constraints.row_form import (
    SRC_BODY_JOINT,
    SRC_BODY_JOINT_HIGH,
    SRC_CONTACT,
    SRC_CONTACT_CONE,
    SRC_CONTACT_EDGE,
    SRC_CONTACT_FACET,
    SRC_COUPLING,
    SRC_COUPLING_LIMIT,
    SRC_DEADZONE,
    SRC_DOF,
    SRC_DOF_HIGH,
    SRC_DOF_VISCOUS,
    RowForm,
)
from ..core.data import StepData
from .free_factor import FREE, FactorMemo


@wp.struct
class DirectArrays:
    """The direct solver's per-env workspace and report (E envs, M rows, N generalized dofs)."""

    a: wp.array3d(dtype=wp.float64)  # (E, M, M) G M^-1 G^T + diag(cfm)
    resp: wp.array2d(dtype=wp.float64)  # (E, M) g_i . M^-1 g_i: A's diagonal without the compliance
    u64: wp.array3d(dtype=wp.float64)  # (E, M, N) each row's u = D^-1/2 L^-T g (solvers/tree_rows.py), 0 off nz
    nz: wp.array3d(dtype=int)  # (E, M, N) each row's pattern: its columns and their ancestors, nnz of them
    nnz: wp.array2d(dtype=int)  # (E, M)
    row_trees: wp.array2d(dtype=wp.vec4i)  # (E, M) (tree0, split, tree1, 0): the trees of nz's columns (direct.py)
    cap: wp.array(dtype=wp.float64)  # (E,) the regularization cap the factor (chol, free, nfree) was made with
    last_x: wp.array2d(dtype=wp.float64)  # (E, M) the last step's impulses (its velocity solve), which start the
    last_source: wp.array2d(dtype=int)  # (E, M) next position solve where its rows come from the same sources
    last_count: wp.array(dtype=int)  # (E,) rows in last_x (0 after a fallback)
    b: wp.array2d(dtype=wp.float64)  # (E, M) target - G v*
    lo: wp.array2d(dtype=wp.float64)  # (E, M) the bounds as solved (friction boxes follow the normals)
    hi: wp.array2d(dtype=wp.float64)  # (E, M)
    x: wp.array2d(dtype=wp.float64)  # (E, M) impulses [N s or N m s]
    state: wp.array2d(dtype=int)  # (E, M) free / at low / at high
    chol: wp.array3d(dtype=wp.float64)  # (E, M, M) Cholesky workspace
    free: wp.array2d(dtype=int)  # (E, M) the free rows, in the order of the factor's rows
    nfree: wp.array(dtype=int)  # (E,) rows in the factor, -1 when it is not valid for the current A
    y: wp.array2d(dtype=wp.float64)  # (E, 4M) the pivoting's step, the refinement's correction, w = A x - b,
    # the rows' regularization
    v_star: wp.array2d(dtype=float)  # (E, N) the unconstrained velocity
    v_free: wp.array2d(dtype=wp.float64)  # (E, N) the pass's velocity with the folded rows alone (solvers/fold.py)
    factor64: wp.array3d(dtype=wp.float64)  # (E, N, N) L and D^-1/2 of M + D per tree (solvers/tree_rows.py)
    memo: FactorMemo  # the last factorization's verdicts on dependent rows (solvers/free_factor.py)
    fold_exceeded: wp.array(dtype=int)  # (E,) 1 when the last attempt's folded impulse left its box
    rows_energy: wp.array(dtype=float)  # (E,) the position rows' correction energy [J] (_rows_correction_energy)
    fold_src: wp.array2d(dtype=int)  # (E, M) the folded rows' sources (kind + 16 index)
    fold_col: wp.array2d(dtype=int)  # (E, M) their generalized columns
    fold_row: wp.array3d(dtype=float)  # (E, M, 5) their target, velocity-pass target, cfm, lo, hi
    fold_count: wp.array(dtype=int)  # (E,) folded rows this step
    fold_x: wp.array2d(dtype=wp.float64)  # (E, M) their impulses in the last pass [N s or N m s]
    fold_scratch: wp.array2d(dtype=wp.float64)  # (E, N)
    carried: wp.array2d(dtype=float)  # (E, N) the velocity the last direct step carried on (NaN after a fallback):
    # a step that starts from another (a state written between steps, a PGS or TGS step) forgets ja.row_rate
    pivots: wp.array(dtype=int)  # (E,) pivots of the last step (both solves)
    cone_sweeps: wp.array(dtype=int)  # (E,) the last step's sweeps putting elliptic contacts on their cone (both
    # solves; solvers/cone_polish.py)
    polished: wp.array(dtype=int)  # (E,) 1 when the last solve's rows had elliptic contacts (cone_polish.py)
    box_x: wp.array2d(dtype=wp.float64)  # (E, M) that solve's impulses as the pivoting left them, before the polish:
    # where the next solve of the same rows starts (the polished impulses cost it a new active set each time)
    rows: wp.array(dtype=int)  # (E,) rows of the last velocity solve
    complementarity: wp.array(dtype=float)  # (E,) largest violation of the conditions in the last step's solves
    bilateral_residual: wp.array(dtype=float)  # (E,) largest |g.v - target| of a hard bilateral row after the
    # position solve [m/s or rad/s]: what the solve could not meet, as in a mechanism that cannot close
    settled: wp.array(dtype=int)  # (E,) 1 if the friction boxes settled in both solves of the last step
    budget_hit: wp.array(dtype=int)  # (E,) 1 if a solve of the last step spent its pivot budget (kept if accurate)
    fallback: wp.array(dtype=int)  # (E,) 1 if the last step fell back to PGS
    fallback_count: wp.array(dtype=int)  # (E,) steps that fell back since the scene was built
    any_fallback: wp.array(dtype=int)  # (2,) [0] raised by a step in which any env fell back, [1] by one whose
    # contacts came near contact_slots (wanted); both lowered by the host (StepWarnings.check_fallbacks)
    contact_slots: int  # contacts the rows have room for (Block.direct_contact_slots)
    wanted: wp.array(dtype=int)  # (E,) the most contacts of a step near or over contact_slots since the host looked
    pivot_limit: int  # most pivots of one solve (0: automatic, 4 m + 16; Scene.direct_pivot_limit)
    friction_directions: int  # friction rows per contact anchor (2: a box; Scene.direct_friction_facets / 2)
    deadzone_impulse: wp.array2d(dtype=float)  # (E, Z) each deadzone controller's impulse in the last step [N s]


@wp.func
def write_back(
    rf: RowForm,
    da: DirectArrays,
    sd: StepData,
    cp: ContactPoints,
    ct: ContactRows,
    ja: BodyJointArrays,
    env: int,
    n_gen: int,
) -> None:
    """The velocity solve's impulses into each kind's accumulator, which the reported forces read (a pyramidal
    contact's edges summed into its rows'); a patch whose friction ended at its box is marked broken (its anchors
    are renewed next step)."""
    for z in range(da.deadzone_impulse.shape[1]):
        da.deadzone_impulse[env, z] = 0.0
    for i in range(rf.count[env]):
        x = float(da.x[env, i])
        src = rf.source_index[env, i]
        kind = rf.source_kind[env, i]
        if kind == SRC_DOF:
            sd.row_lambda[env, src] = x
        elif kind == SRC_DOF_HIGH:
            sd.row_lambda2[env, src] = x
        elif kind == SRC_DOF_VISCOUS:  # after its Coulomb row (add_dof_rows adds these last)
            sd.row_lambda[env, src] = sd.row_lambda[env, src] + x
        elif kind == SRC_COUPLING:
            sd.cpl_acc[env, src] = x
        elif kind == SRC_COUPLING_LIMIT:
            sd.cpl_acc2[env, src] = x
        elif kind == SRC_CONTACT_CONE:  # index 6 c + k: k < 3 the contact's rows, the rest its angular ones
            c = src // 6
            k = src % 6
            if k < 3:
                ct.impulse[env, 3 * c + k] = x
            else:
                ang = ct.ang_impulse[env, c]
                ang[k - 3] = x
                ct.ang_impulse[env, c] = ang
        elif kind == SRC_CONTACT or kind == SRC_CONTACT_FACET:
            if kind == SRC_CONTACT:
                ct.impulse[env, src] = x
            else:  # a pyramid's direction (add_contact_rows: k = 0 first): its share of the anchor's t1 and t2
                base = facet_base(ct, da.v_star, env, src // 8, n_gen)
                d = friction_direction(da.friction_directions, src % 8, base) * x
                t = 3 * (src // 8) + 1
                if src % 8 != 0:
                    d += wp.vec2(ct.impulse[env, t], ct.impulse[env, t + 1])
                ct.impulse[env, t] = d[0]
                ct.impulse[env, t + 1] = d[1]
            f = rf.findex[env, i]
            if f >= 0 and da.state[env, i] != FREE and da.hi[env, i] > wp.float64(0.0):
                ct.broken[env, rf.source_index[env, f] // 3] = 1
        elif kind == SRC_BODY_JOINT:
            ja.row_lambda[env, src] = x
        elif kind == SRC_BODY_JOINT_HIGH:
            ja.row_lambda2[env, src] = x
        elif kind == SRC_DEADZONE:
            da.deadzone_impulse[env, src] = da.deadzone_impulse[env, src] + x
        elif kind == SRC_CONTACT_EDGE:  # index 10 c + e: e < 4 sliding, the rest torsional and rolling
            c = src // 10
            e = src % 10
            if e < 4:
                edges = ct.edge_impulse[env, c]
                edges[e] = x
                ct.edge_impulse[env, c] = edges
            else:
                ang = ct.ang_impulse[env, c]
                ang[e - 4] = x
                ct.ang_impulse[env, c] = ang
    for f in range(da.fold_count[env]):  # after the rows of the LCP: a viscous part adds to its Coulomb row's
        src = da.fold_src[env, f] // 16
        x = float(da.fold_x[env, f])
        if da.fold_src[env, f] % 16 == SRC_DOF_VISCOUS:
            sd.row_lambda[env, src] = sd.row_lambda[env, src] + x
        else:
            sd.row_lambda[env, src] = x
    for c in range(cp.count[env]):
        if ct.pyramid[env, c] != 0 and ct.pyramid[env, c] != ELLIPTIC:
            pyramid_impulses(cp, ct, env, c)
