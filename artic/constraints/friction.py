"""Joint friction: PhysX's coefficient model and its static/dynamic/viscous model (physx-notes 3.3).

Coefficient model: the friction impulse is at most coefficient * (|F| + |T|) * h, where (F, T) is the spatial force
the joint transmits in the unconstrained forward dynamics (T about the child COM). PGS accumulates over iterations;
TGS clamps each iteration on its own (accumulator reset).
Effort model: J' = J_acc - v R; it sticks while |J'| <= static * dt, else slides at +-(dynamic * dt + viscous * dt
* |v|). The accumulator persists over all iterations of the step.
MuJoCo's soft frictionloss (a joint's friction_softness): one box row of +-static * dt whose target is MuJoCo's
reference, v0 - dt b v0 (no position term: the row's violation is 0), and cfm its regularizer (1 - d0) / d0 w at
the dof's inverse weight w, so that a joint pushed below its friction effort creeps as in MuJoCo (soft_friction_row).
"""

from __future__ import annotations

import warp as wp

from .softness import soft_params, soft_row


@wp.func
def soft_friction_row(p: soft_params, v0: float, weight: float, dt: float) -> wp.vec2:
    """(target, cfm) of a soft friction row (MuJoCo's frictionloss row) for a dof moving at v0 at the step's start."""
    return soft_row(p, 0.0, v0, weight, dt, dt)


@wp.func
def soft_friction_impulse(row: wp.vec2, accumulated: float, v: float, response: float, bound: float) -> float:
    """New accumulated impulse of a soft friction row (soft_friction_row's (target, cfm)): the Gauss-Seidel update
    of v + cfm lambda = target within +-bound; response: the dof's r (+ its cfm)."""
    trial = accumulated + (row[0] - v - row[1] * accumulated) / (response + row[1])
    return wp.clamp(trial, -bound, bound)


@wp.func
def coefficient_friction_impulse(accumulated: float, v: float, recip_response: float, max_impulse: float) -> float:
    """New accumulated impulse of the coefficient model (pass accumulated = 0 to clamp one iteration alone)."""
    return wp.clamp(accumulated - v * recip_response, -max_impulse, max_impulse)


@wp.func
def effort_friction_impulse(
    accumulated: float,
    v: float,
    recip_response: float,
    static_impulse: float,
    dynamic_impulse: float,
    viscous_impulse_coef: float,
) -> float:
    """New accumulated impulse of the static/dynamic/viscous model."""
    trial = accumulated - v * recip_response
    if wp.abs(trial) <= static_impulse:
        return trial
    bound = dynamic_impulse + viscous_impulse_coef * wp.abs(v)
    return wp.clamp(trial, -bound, bound)
