"""Joint position limits with speculation (physx-notes 3.1; PhysX 5.8 `computeLimitImpulse` in
lowleveldynamics/shared/DyCpuGpuArticulation.h, called per dof from `FeatherstoneArticulation::
solveInternalJointConstraintRecursive` in DyFeatherstoneArticulation.cpp).

Errors are positive inside [low, high]. A side is active when it is violated now or would be after this step at the
current velocity. Violated in a position iteration: drive the velocity to -error * erp / h; not yet violated
(speculative): arrive exactly at the limit, -error / h, in position and velocity iterations alike. The accumulated
impulse stays repulsive (low >= 0, high <= 0); when no side is active, a previously applied impulse may relax.
Velocity iterations apply no position bias.

A dof that starts beyond its limit (PhysX 5.8's rule, kept exactly):
* The bias -error * erp / h has no cap of its own. PhysX's max depenetration velocity (PxRigidBody::
  setMaxDepenetrationVelocity, the link's maxPenBias) clamps only contact bias (DyArticulationContactPrep.cpp), never
  an articulation limit. The cap is the dof's velocity-limit row (constraints/velocity_limit.py), solved right after
  its limit row: the net velocity the two give the dof is min(erp * error / h, maxJointVelocity), plus the fraction
  cfm / (r + cfm) of the excess, since both rows scale their impulses by 1 / (r + cfm). With the default
  maxJointVelocity 100, PGS removes the fraction erp = 0.8 of the error in each step; with a small one (the panda's
  fingers, 0.2 m/s) the dof returns at about that speed.
* In a velocity iteration a violated side sets no target and falls through to the relaxing branch, which removes the
  recovery velocity again (the 5.7.0 CHANGELOG fix "joint limits were not properly enforced during velocity
  iterations"). The recovery therefore moves the position without carrying momentum into the next step: no
  overshoot to the other limit, and no kinetic energy to keep an articulation awake (it may fall asleep before the
  dof is back inside).
* Prismatic positions are not clamped to the limit (5.7.0 removed that clamp). PhysX 5.3 (SAPIEN) still has that
  clamp and keeps the bias velocity through velocity iterations, so it agrees with this rule only on the first PGS
  step of a revolute joint (tests/sim/test_out_of_limits.py).
"""

from __future__ import annotations

import warp as wp

from .softness import SOFT_APART, SOFT_HARD, is_soft, soft_params, soft_row


@wp.func
def limit_impulse(
    err_low: float,
    err_high: float,
    dq: float,
    v: float,
    h: float,
    erp: float,
    recip_response: float,
    low_acc: float,
    high_acc: float,
    position_iteration: int,
) -> wp.vec3:
    """(impulse delta, new low accumulator, new high accumulator)."""
    curr_low = err_low + dq
    curr_high = err_high - dq
    next_low = curr_low + v * h
    next_high = curr_high - v * h
    if curr_low < 0.0 or next_low < 0.0:
        target = float(0.0)
        has_target = int(0)
        if curr_low < 0.0:
            if position_iteration != 0:
                target = -curr_low * erp / h
                has_target = 1
        else:
            target = -curr_low / h
            has_target = 1
        if has_target != 0:
            delta = wp.max(low_acc + (target - v) * recip_response, 0.0) - low_acc
            return wp.vec3(delta, low_acc + delta, high_acc)
    elif curr_high < 0.0 or next_high < 0.0:
        target = float(0.0)
        has_target = int(0)
        if curr_high < 0.0:
            if position_iteration != 0:
                target = curr_high * erp / h
                has_target = 1
        else:
            target = curr_high / h
            has_target = 1
        if has_target != 0:
            delta = wp.min(high_acc + (target - v) * recip_response, 0.0) - high_acc
            return wp.vec3(delta, low_acc, high_acc + delta)
    if v > 0.0:
        delta = wp.max(-v * recip_response, -low_acc)
        return wp.vec3(delta, low_acc + delta, high_acc)
    delta = wp.min(-v * recip_response, -high_acc)
    return wp.vec3(delta, low_acc, high_acc + delta)


@wp.func
def soft_limit_row(p: soft_params, err_low: float, err_high: float, v0: float, weight: float, dt: float) -> wp.vec2:
    """(target, cfm) of a soft limit (MuJoCo's solreflimit/solimplimit, constraints/softness.py) for the step, on
    the side violated at its start (err < 0; the dof's velocity v0 then): a row only while beyond the range, as
    MuJoCo's (its margin 0). On the high side the row pushes along -e_d, so in the dof's direction its target is
    soft_row's with the violation's sign flipped. cfm SOFT_HARD: hard; SOFT_APART: within the range, no row."""
    if not is_soft(p):
        return wp.vec2(0.0, SOFT_HARD)
    if err_low < 0.0:
        return soft_row(p, err_low, v0, weight, dt, dt)
    if err_high < 0.0:
        return soft_row(p, -err_high, v0, weight, dt, dt)
    return wp.vec2(0.0, SOFT_APART)


@wp.func
def soft_limit_impulse(
    target: float, cfm: float, err_low: float, v: float, response: float, low_acc: float, high_acc: float
) -> wp.vec3:
    """(impulse delta, new low accumulator, new high accumulator) of a soft limit row (soft_limit_row): the
    Gauss-Seidel update of v + cfm lambda = target with lambda >= 0 on the low side (violated at the step's start,
    err_low < 0), <= 0 on the high side; response: the dof's 1 / recip."""
    if cfm < 0.0:
        return wp.vec3(0.0, low_acc, high_acc)
    if err_low < 0.0:
        new = wp.max(low_acc + (target - v - cfm * low_acc) / (response + cfm), 0.0)
        return wp.vec3(new - low_acc, new, high_acc)
    new = wp.min(high_acc + (target - v - cfm * high_acc) / (response + cfm), 0.0)
    return wp.vec3(new - high_acc, low_acc, new)
