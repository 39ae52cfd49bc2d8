"""Which of a step's speculative contacts can act (Scene's speculative_contacts 'reachable', the default).

A hard contact found with its surfaces apart by s (within the shapes' contact offsets: PhysX's speculative contact)
is a row that lets the surfaces close at most s within the step: it pushes only if the step's motion would cross the
gap. Where no point of a pair can get that far, the row's normal impulse stays 0, and so does the friction it
bounds, so leaving the pair out changes nothing but the cost. That is the intent; what is checked is the outcome on
given scenes (tests/constraints/contacts/test_speculative_reach.py: bitwise under PGS and TGS on the allegro hand on
its table, a ball falling from rest, a fast ball, the guide's stiff finger, a rod thrown by a joint torque; the
direct solver's LCP, whose answer among redundant contacts is not unique, within 3e-5 on the hand).

A pair with a point within 1 mm (TOUCHING) is kept whatever its motion: a contact that holds a load rests there
(its row closed the gap exactly), and the last step's motion, which its load balanced, says nothing of what it
would do without it. Otherwise, how fast a point can close a gap in a step of h, estimated from what is known
before the step:
* its relative speed now, |v|;
* what the last step's net acceleration of the two links at the point, |a| (the reported link accelerations: the
  drives, the contacts that hold a link, gravity, all together), and gravity, |g| by the links' gravity scales,
  add in h: h (|a| + |g|);
* what changed in the commands of the dofs on the two links' paths to their roots since the last detection, each
  times the point's lever arm on its dof: a joint force changed by df adds at most h df w, a drive of stiffness k and
  damping c whose error (target - q) changed by de and velocity error (target velocity - qd) by du at most
  h (k de + c du) w (w the dof's inverse weight at the reference pose, DofParams; 1 for an acceleration drive), and
  an implicit drive at most |qd| + max(|target - q| / h, |target velocity|) whatever the inertia (its velocity after
  the step is a weighted mean of qd, (target - q) / h and the target velocity). Before the first step, and after a
  description change, every command counts as changed.
The sum is doubled (REACH_SAFETY) for what the estimate leaves out (the inertia's change with the pose), and the
pair is kept when s <= h times it; a bound that is NaN (a non-finite state or command) keeps it too.

Always kept: the pairs of kinematic trees and quaternion drives (no bound: a kinematic velocity is set from its
target after detection), of a link a body joint holds (another body's pull), of a link the last step found more
than 1 mm inside something (the position iterations' push-out, which the reported velocity leaves out), of an
adhesive link (MuJoCo's adhesion pulls through every detected contact), and of a link in a kept link-link pair (an
impact passed on within the step: a block pushed into its neighbour; link-link pairs are detected before
link-static ones, so the marks reach every link-static pair, though not a link-link pair detected before the one
that marks). A block with couplings (mimic joints, tendons: a leader's command moves its followers at once) keeps
every pair (step_kernel.py). What can still be missed: a wrench that starts this step from outside the tree (an
external force on a link at rest), a load balanced in the last step that comes free (a support pulled away), and an
impact passed on through a chain of link-link pairs in the wrong detection order: such a contact is found a step
later, a little inside the surface, and the position iterations push it out (as MuJoCo's contacts, which exist
only once surfaces touch, always are).
"""

from __future__ import annotations

import warp as wp

from ..core.control import ControlArrays
from ..core.data import Kin, StepData
from ..core.model import DRIVE_ACCELERATION, DRIVE_EXPLICIT, DRIVE_NONE, DofParams, Tree
from ..core.state import StateArrays
from .contacts import ContactPoints

TOUCHING = wp.constant(1.0e-3)  # [m] surfaces this close count as touching (a load they held keeps them so)
REACH_SAFETY = wp.constant(2.0)  # how much the estimate of a point's speed in the step is trusted
UNBOUNDED = wp.constant(1.0e30)  # [m/s] a motion without a bound on what a step adds


@wp.func
def _dof_command(dp: DofParams, st: StateArrays, ctl: ControlArrays, env: int, d: int) -> wp.vec3:
    """Dof d's drive error, velocity error and applied joint force now (StepData.dof_command0's entries)."""
    e = float(0.0)
    u = float(0.0)
    if dp.dof_drive[d] != DRIVE_NONE:
        e = ctl.joint_target_position[env, d] - st.joint_q[env, d]
        u = ctl.joint_target_velocity[env, d] - st.joint_qd[env, d]
    return wp.vec3(e, u, ctl.joint_force[env, d])


@wp.func
def _at_point(v: wp.spatial_vector, kin: Kin, env: int, link: int, p: wp.vec3) -> wp.vec3:
    """The linear part at world point p of a link's (COM linear, angular) velocity or acceleration v."""
    return wp.spatial_top(v) + wp.cross(wp.spatial_bottom(v), p - kin.origin[env] - kin.link_com[env, link])


@wp.func
def _command_reach(
    tree: Tree,
    dp: DofParams,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
    sd: StepData,
    env: int,
    h: float,
    link: int,
    p: wp.vec3,
) -> float:
    """The most [m/s] the command changes on `link`'s path to its root can add to its point p's speed in h."""
    speed = float(0.0)
    if tree.tree_kinematic[tree.link_tree[link]] != 0:
        return UNBOUNDED
    i = link
    while i >= 0:
        for k in range(tree.joint_dof_count[i]):
            d = tree.joint_dof_start[i] + k
            before = sd.dof_command0[env, d]
            if before[2] >= UNBOUNDED:
                return UNBOUNDED  # no step has run since the arrays were made: nothing to compare with
            now = _dof_command(dp, st, ctl, env, d)
            change = now - before
            w = dp.dof_inverse_weight[d]
            rate = h * wp.abs(change[2]) * w
            kind = dp.dof_drive[d]
            if kind != DRIVE_NONE and (dp.dof_stiffness[d] != 0.0 or dp.dof_damping[d] != 0.0):
                if dp.dof_quat_drive[d] != 0:
                    return UNBOUNDED
                push = h * (dp.dof_stiffness[d] * wp.abs(change[0]) + dp.dof_damping[d] * wp.abs(change[1]))
                if kind != DRIVE_ACCELERATION:
                    push *= w
                if kind != DRIVE_EXPLICIT:
                    qd = st.joint_qd[env, d]
                    push = wp.min(push, wp.abs(qd) + wp.max(wp.abs(now[0]) / h, wp.abs(now[1] + qd)))
                rate += push
            if rate != 0.0:  # a NaN command counts too, and makes the bound NaN: the pair is kept
                m = kin.dof_motion[env, d]
                speed += rate * wp.length(wp.spatial_bottom(m) + wp.cross(wp.spatial_top(m), p - kin.origin[env]))
        i = tree.link_parent[i]
    return speed


@wp.func
def within_reach(
    tree: Tree,
    dp: DofParams,
    st: StateArrays,
    ctl: ControlArrays,
    kin: Kin,
    sd: StepData,
    cp: ContactPoints,
    gravity: wp.vec3,
    h: float,
    env: int,
    first: int,
    la: int,
    lb: int,
) -> int:
    """1 when one of the pair's points (first..count; la's link against lb's, -1 static) touches or could close its
    gap in a step of h (module docstring), else 0: the pair's rows could not act. Links marked in
    StepData.link_struck (a body joint's, an adhesive one's, one in a kept link-link pair) keep all their pairs."""
    if sd.link_struck[env, la] != 0 or ctl.link_adhesion[env, la] > 0.0:
        return 1
    if lb >= 0:
        if sd.link_struck[env, lb] != 0 or ctl.link_adhesion[env, lb] > 0.0:
            return 1
    g = wp.length(gravity) * wp.abs(dp.link_gravity_scale[la])
    if lb >= 0:
        g += wp.length(gravity) * wp.abs(dp.link_gravity_scale[lb])
    for c in range(first, cp.count[env]):
        s = cp.separation[env, c]
        if s <= TOUCHING:
            return 1  # a hard contact holding a load rests at ~0 (its row closes the gap exactly): keep it
        p = cp.point[env, c]
        v = _at_point(sd.link_vel0[env, la], kin, env, la, p)
        a = _at_point(sd.link_acceleration[env, la], kin, env, la, p)
        commands = _command_reach(tree, dp, st, ctl, kin, sd, env, h, la, p)
        if lb >= 0:
            v -= _at_point(sd.link_vel0[env, lb], kin, env, lb, p)
            a -= _at_point(sd.link_acceleration[env, lb], kin, env, lb, p)
            commands += _command_reach(tree, dp, st, ctl, kin, sd, env, h, lb, p)
        if not (s > h * REACH_SAFETY * (wp.length(v) + h * (wp.length(a) + g) + commands)):
            return 1  # within reach, or a bound that is NaN (a non-finite state or command): kept
    return 0


@wp.func
def mark_links(cp: ContactPoints, sd: StepData, env: int, link_count: int) -> None:
    """StepData.link_struck before a step's detection: marked, the links the last step found more than 1 mm inside
    something (the position iterations push them out at a speed the reported velocity does not show); the others
    cleared. `cp` still holds the last step's contacts. The step then marks the links body joints hold
    (sim/step_kernel.py, _mark_joined_links)."""
    for i in range(link_count):
        sd.link_struck[env, i] = 0
    for c in range(cp.count[env]):
        if cp.separation[env, c] < -TOUCHING:
            sd.link_struck[env, cp.link_a[env, c]] = 1
            if cp.link_b[env, c] >= 0:
                sd.link_struck[env, cp.link_b[env, c]] = 1


@wp.func
def remember_commands(dp: DofParams, st: StateArrays, ctl: ControlArrays, sd: StepData, env: int, n: int) -> None:
    """Every dof's commands as this step's detection saw them, for the next step's (`_command_reach`)."""
    for d in range(n):
        sd.dof_command0[env, d] = _dof_command(dp, st, ctl, env, d)
