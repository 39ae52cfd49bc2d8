"""Tendon impulses: the implicit springs of physx-notes 5.2, shared by fixed and spatial tendons.

With h the solver step and r the row's unit response: a = h (h k + d), x = 1 / (1 + a r) (0 if r <= 0), bias
coefficient -k x h, velocity multiplier -x a, impulse multiplier 1 - x (PGS) or 1 (TGS). The limit spring uses the
limit stiffness, the same damping and r, and has no velocity term. Impulses accumulate without clamping; TGS
velocity iterations are not frozen.
"""

from __future__ import annotations

import warp as wp


@wp.func
def _spring_x(k: float, damping: float, r: float, h: float) -> float:
    if r <= 0.0:
        return 0.0
    return 1.0 / (1.0 + h * (h * k + damping) * r)


@wp.func
def tendon_impulse(
    err: float,
    limit_err: float,
    speed: float,
    acc_rest: float,
    acc_limit: float,
    r: float,
    h: float,
    stiffness: float,
    damping: float,
    limit_stiffness: float,
    recip_coef: float,
    tgs: int,
) -> wp.vec3:
    """(delta, new rest accumulator, new limit accumulator)."""
    x = _spring_x(stiffness, damping, r, h)
    xl = _spring_x(limit_stiffness, damping, r, h)
    imp_mult = 1.0 - x
    lim_mult = 1.0 - xl
    if tgs != 0:
        imp_mult = 1.0
        lim_mult = 1.0
    rest = (err * (-stiffness * x * h) + speed * (-x * h * (h * stiffness + damping))) * recip_coef
    rest += acc_rest * imp_mult
    limit = limit_err * (-limit_stiffness * xl * h) * recip_coef + acc_limit * lim_mult
    return wp.vec3((rest - acc_rest) + (limit - acc_limit), rest, limit)


@wp.func
def spatial_limit_error(length: float, low: float, high: float) -> float:
    """How far a spatial tendon leaf's length lies beyond its limits, as (limit - length); 0 within them."""
    if length > high:
        return high - length
    if length < low:
        return low - length
    return 0.0
