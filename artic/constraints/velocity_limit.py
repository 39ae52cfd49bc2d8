"""Joint velocity limit (physx-notes 3.2): a hard clamp of |v| to max_velocity in every iteration, no accumulator."""

from __future__ import annotations

import warp as wp


@wp.func
def velocity_limit_impulse(v: float, max_velocity: float, recip_response: float) -> float:
    if wp.abs(v) <= max_velocity:
        return 0.0
    return (wp.clamp(v, -max_velocity, max_velocity) - v) * recip_response
