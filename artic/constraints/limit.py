"""Joint position limits with speculation (physx-notes 3.1, `computeLimitImpulse`).

Errors are positive inside [low, high]. A side is active when it is violated now or would be after this step at the
current velocity. Violated in a position iteration: drive the velocity to -error * erp / h; not yet violated
(speculative): arrive exactly at the limit, -error / h, in position and velocity iterations alike. The accumulated
impulse stays repulsive (low >= 0, high <= 0); when no side is active, a previously applied impulse may relax.
Velocity iterations apply no position bias.
"""

import warp as wp


@wp.func
def limit_impulse(err_low: float, err_high: float, dq: float, v: float, h: float, erp: float,
                  recip_response: float, low_acc: float, high_acc: float, position_iteration: int):
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
