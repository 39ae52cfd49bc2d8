"""Joint friction: PhysX's coefficient model and its static/dynamic/viscous model (physx-notes 3.3).

Coefficient model: the friction impulse is at most coefficient * (|F| + |T|) * h, where (F, T) is the spatial force
the joint transmits in the unconstrained forward dynamics (T about the child COM). PGS accumulates over iterations;
TGS clamps each iteration on its own (accumulator reset).
Effort model: J' = J_acc - v R; it sticks while |J'| <= static * dt, else slides at +-(dynamic * dt + viscous * dt
* |v|). The accumulator persists over all iterations of the step.
"""

from __future__ import annotations

import warp as wp


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
