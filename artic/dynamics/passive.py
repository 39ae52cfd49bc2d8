"""MuJoCo's passive joint forces and how its Euler integrator applies them, for the step (step_kernel.py).

A joint axis's PassiveParams (stiffness k, damping d, reference) and a floating root's root_damping (MuJoCo's
free-joint damping: a force -d v at the root frame's origin and a torque -d w) enter the unconstrained step as
explicit generalized forces (`passive_forces`). After the constraint solve, `mujoco_damping` makes the damping
implicit as MuJoCo's Euler integrator does (eulerdamp): the solved velocity v becomes
v0 + (M + dt D)^-1 M (v - v0) = v - dt (M + dt D)^-1 D (v - v0). The springs stay explicit, as MuJoCo's.

Why after the solve and not as rows solved with the constraints (a PhysX drive's damping): MuJoCo computes its
constraint forces with M alone and damps afterwards, so a contact pushing a damped joint moves it less than the
contact asked; solving the damper with the contact made the CMU humanoid's first step 11 % off MuJoCo's and the
gymnasium ant's drop 4.8 % (MuJoCo's Euler; both now agree to float precision in a step).
"""

from __future__ import annotations

import warp as wp

from ..core.control import ControlArrays
from ..core.data import Kin, StepData
from ..core.model import DRIVE_EXPLICIT, DRIVE_EXPLICIT_STIFFNESS, DofParams, Tree
from ..core.state import StateArrays
from ..math.tree_ldl import tree_ldl_factor, tree_ldl_solve
from .integrate import integrate_positions

wp.set_module_options({"enable_backward": False})


@wp.func
def root_damping_matrix(d: float, r: wp.vec3) -> wp.spatial_matrix:
    """MuJoCo's free-joint damping d in a floating root's generalized coordinates (COM velocity, angular velocity):
    the force -d v_o at the root frame's origin o (r = o - COM: v_o = v - r x w) and the torque -d w give the
    generalized force -D nu with D = d J^T J, J = [[I, -[r]x], [0, I]] (the body-frame spin's damping is the same
    torque in the world frame, d being isotropic)."""
    s = wp.skew(r)
    eye = wp.identity(n=3, dtype=float)
    top_right = -d * s
    bottom_right = d * (eye - s * s)
    m = wp.spatial_matrix()
    for a in range(3):
        m[a, a] = d
        for b in range(3):
            m[a, 3 + b] = top_right[a, b]
            m[3 + a, b] = top_right[b, a]  # D is symmetric
            m[3 + a, 3 + b] = bottom_right[a, b]
    return m


@wp.func
def _root_damping(tree: Tree, dp: DofParams, st: StateArrays, kin: Kin, env: int, i: int) -> wp.spatial_matrix:
    """root_damping_matrix of floating root link i (Articulation.root_damping) at the step's start."""
    r = wp.transform_get_translation(st.link_pose[env, i]) - kin.origin[env] - kin.link_com[env, i]
    return root_damping_matrix(dp.link_root_damping[i], r)


@wp.func
def explicit_drive_force(
    tree: Tree, dp: DofParams, st: StateArrays, ctl: ControlArrays, sd: StepData, env: int, d: int
) -> float:
    """Dof d's explicit drive force (DriveType.EXPLICIT, EXPLICIT_STIFFNESS; 0 for the others): MuJoCo's actuator
    force k (target - q) + c (target velocity - qdot) at the step's start, clamped to +-max_force, as its Euler and
    implicitfast integrators apply it; the latter's implicit damping is `implicit_damping`'s."""
    kind = dp.dof_drive[d]
    if kind != DRIVE_EXPLICIT and kind != DRIVE_EXPLICIT_STIFFNESS:
        return 0.0
    v = sd.gen_v[env, tree.dof_gen[d]]  # the start velocity, until the unconstrained step advances it
    f = dp.dof_stiffness[d] * (ctl.joint_target_position[env, d] - st.joint_q[env, d])
    f = f + dp.dof_damping[d] * (ctl.joint_target_velocity[env, d] - v)
    return wp.clamp(f, -dp.dof_max_force[d], dp.dof_max_force[d])


@wp.func
def implicit_damping(dp: DofParams, d: int) -> float:
    """Dof d's damping that `mujoco_damping` makes implicit: its passive damping and an EXPLICIT_STIFFNESS drive's
    (MuJoCo's implicitfast differentiates an actuator's force in the velocity: kv for a position servo)."""
    c = dp.dof_passive[d][1]
    if dp.dof_drive[d] == DRIVE_EXPLICIT_STIFFNESS:
        c = c + dp.dof_damping[d]
    return c


@wp.func
def _tree_links_end(tree: Tree, t: int) -> int:
    """One past tree t's last link (a forest's trees are concatenated, each from its root)."""
    if t + 1 < tree.tree_count:
        return tree.tree_root[t + 1]
    return tree.link_count


@wp.func
def _tree_damped(tree: Tree, dp: DofParams, t: int) -> int:
    """1 when tree t has MuJoCo damping: a damped floating root or a dof with passive damping."""
    i = tree.tree_root[t]
    if tree.tree_kinematic[t] != 0:
        return 0
    if tree.link_root_gen[i] >= 0 and dp.link_root_damping[i] > 0.0:
        return 1
    for li in range(i, _tree_links_end(tree, t)):
        for k in range(tree.joint_dof_count[li]):
            if implicit_damping(dp, tree.joint_dof_start[li] + k) > 0.0:
                return 1
    return 0


@wp.func
def any_damped(tree: Tree, dp: DofParams) -> int:
    """1 when any tree of the block has MuJoCo damping (so that a block without any skips its correction)."""
    if dp.passive == 0:
        return 0
    for t in range(tree.tree_count):
        if _tree_damped(tree, dp, t) != 0:
            return 1
    return 0


@wp.func
def passive_forces(tree: Tree, dp: DofParams, st: StateArrays, kin: Kin, sd: StepData, env: int, n: int) -> None:
    """MuJoCo's passive joint forces into the unconstrained step's generalized force, explicit as MuJoCo's: each
    dof's spring k (reference - q) and damper -d qdot, and a damped floating root's -D nu (root_damping_matrix).
    The damping is made implicit after the solve (mujoco_damping)."""
    if dp.passive == 0:
        return
    for d in range(n):
        p = dp.dof_passive[d]
        if p[0] > 0.0 or p[1] > 0.0:
            g = tree.dof_gen[d]
            sd.gen_f[env, g] = sd.gen_f[env, g] + p[0] * (p[2] - st.joint_q[env, d]) - p[1] * sd.gen_v[env, g]
    for t in range(tree.tree_count):
        i = tree.tree_root[t]
        rg = tree.link_root_gen[i]
        if rg >= 0 and dp.link_root_damping[i] > 0.0:
            dmat = _root_damping(tree, dp, st, kin, env, i)
            nu = wp.spatial_vector()
            for k in range(6):
                nu[k] = sd.gen_v[env, rg + k]
            f = dmat * nu
            for k in range(6):
                sd.gen_f[env, rg + k] = sd.gen_f[env, rg + k] - f[k]


@wp.func
def _alike(sd: StepData, env: int, g0: int, ng: int) -> int:
    """1 when gen_vpos = gen_v on coordinates g0..g0+ng-1 (the direct solver's passes alike: MJCF's soft rows)."""
    for k in range(ng):
        if sd.gen_vpos[env, g0 + k] != sd.gen_v[env, g0 + k]:
            return 0
    return 1


@wp.func
def mujoco_damping(
    tree: Tree, dp: DofParams, st: StateArrays, kin: Kin, sd: StepData, env: int, dt: float, with_vpos: int
) -> None:
    """MuJoCo's implicit damping after the constraint solve (its Euler integrator's eulerdamp): the solved velocity
    v becomes v0 + (M + dt D)^-1 M (v - v0) = v - dt (M + dt D)^-1 D (v - v0), with D the dofs' passive damping
    and the damped roots' blocks, for the velocity carried forward and (`with_vpos`) the one positions integrate
    with. Why after the solve and not as rows solved with the constraints (a drive's damping): MuJoCo's
    constraint forces are computed with M alone, and a contact pushing a damped joint then moves it less than
    the contact asked; solving the damper with the contact made the CMU humanoid's first step 11 % off MuJoCo's.
    M + dt D is factored in place of M (no longer needed in this step; math/tree_ldl.py); sd.gen_a holds the
    right-hand side."""
    if dp.passive == 0:
        return
    for t in range(tree.tree_count):
        if _tree_damped(tree, dp, t) == 0:
            continue
        g0 = tree.tree_gen_start[t]
        ng = tree.tree_gen_count[t]
        i = tree.tree_root[t]
        rg = tree.link_root_gen[i]
        dmat = wp.spatial_matrix()
        if rg >= 0 and dp.link_root_damping[i] > 0.0:
            dmat = _root_damping(tree, dp, st, kin, env, i)
            for r in range(6):
                for c in range(6):
                    sd.mass_matrix[env, rg + r, rg + c] = sd.mass_matrix[env, rg + r, rg + c] + dt * dmat[r, c]
        for li in range(i, _tree_links_end(tree, t)):
            for k in range(tree.joint_dof_count[li]):
                d = tree.joint_dof_start[li] + k
                g = tree.dof_gen[d]
                sd.mass_matrix[env, g, g] = sd.mass_matrix[env, g, g] + dt * implicit_damping(dp, d)
        alike = _alike(sd, env, g0, ng) * with_vpos  # one solve serves both velocities when they are equal
        for which in range(1 - with_vpos + alike, 2):  # 0: gen_vpos, 1: gen_v
            # right-hand side D (v - v0) in sd.gen_a
            for k in range(ng):
                sd.gen_a[env, g0 + k] = 0.0
            for li in range(i, _tree_links_end(tree, t)):
                for k in range(tree.joint_dof_count[li]):
                    d = tree.joint_dof_start[li] + k
                    g = tree.dof_gen[d]
                    u = wp.where(which == 0, sd.gen_vpos[env, g], sd.gen_v[env, g]) - sd.gen_v0[env, g]
                    sd.gen_a[env, g] = implicit_damping(dp, d) * u
            if rg >= 0 and dp.link_root_damping[i] > 0.0:
                u6 = wp.spatial_vector()
                for k in range(6):
                    u6[k] = (
                        wp.where(which == 0, sd.gen_vpos[env, rg + k], sd.gen_v[env, rg + k]) - sd.gen_v0[env, rg + k]
                    )
                du = dmat * u6
                for k in range(6):
                    sd.gen_a[env, rg + k] = du[k]
            if which == 1 - with_vpos + alike:  # M + dt D keeps M's tree pattern (D: diagonal but for the root's block)
                tree_ldl_factor(sd.mass_matrix, sd.mass_matrix, tree.gen_parent, env, g0, ng)
            tree_ldl_solve(sd.mass_matrix, sd.gen_a, tree.gen_parent, env, g0, ng)
            for k in range(ng):
                if which == 0:
                    sd.gen_vpos[env, g0 + k] = sd.gen_vpos[env, g0 + k] - dt * sd.gen_a[env, g0 + k]
                else:
                    sd.gen_v[env, g0 + k] = sd.gen_v[env, g0 + k] - dt * sd.gen_a[env, g0 + k]
                    if alike != 0:
                        sd.gen_vpos[env, g0 + k] = sd.gen_v[env, g0 + k]


@wp.func
def tgs_mujoco_damping(
    tree: Tree, dp: DofParams, st: StateArrays, kin: Kin, sd: StepData, env: int, dt: float, n_gen: int
) -> None:
    """mujoco_damping after TGS, whose substeps integrated the positions already: they take the correction of the
    velocity too (sd.gen_f, free until the step's report writes it, holds it)."""
    if any_damped(tree, dp) == 0:
        return
    for k in range(n_gen):
        sd.gen_f[env, k] = sd.gen_v[env, k]
    mujoco_damping(tree, dp, st, kin, sd, env, dt, 0)
    for k in range(n_gen):
        sd.gen_f[env, k] = sd.gen_v[env, k] - sd.gen_f[env, k]
    integrate_positions(tree, st.joint_q, st.root_pose, sd.gen_f, sd.dof_dq, dt, env)
