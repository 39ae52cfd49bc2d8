"""When an error is worth reporting: the rule the step applies to hard joints' errors (body_joint_report.py) and to
contact penetration (contact_status.py), each measured in its own tolerances (e > 1: beyond).

An error is reported when it has stayed beyond tolerance for PERSIST_STEPS steps in a row without halving, or has
grown by GROWTH per step for GROWTH_STEPS steps in a row while beyond it. A joint that closes, or bodies that
separate, halve their error well within PERSIST_STEPS (a joint's correction is capped at 10 m/s: 0.2 m closes in
two steps) and are never reported; a mechanism that cannot close, a chain whose masses the solver cannot resolve,
or a stack that sinks are. The state per tracked item is a vec4: (steps beyond tolerance without halving, the error
when that count began, the error of the last step, steps in a row it grew).
"""

from __future__ import annotations

import warp as wp

PERSIST_STEPS = wp.constant(20)
GROWTH_STEPS = wp.constant(5)
GROWTH = wp.constant(1.1)  # growing: at least 10 % more than in the step before


@wp.func
def persist(e: float, track: wp.vec4) -> wp.vec4:
    """The tracker after a step whose error is e (in tolerances). A NaN counts as within: the non-finite state
    check reports that."""
    if not (e > 1.0):
        return wp.vec4(0.0, 0.0, e, 0.0)
    steps = track[0]
    start = track[1]
    if steps == 0.0 or e < 0.5 * start:
        start = e
        steps = 0.0
    grow = float(0.0)
    if e > GROWTH * track[2]:
        grow = track[3] + 1.0
    return wp.vec4(steps + 1.0, start, e, grow)


@wp.func
def persists(track: wp.vec4) -> int:
    """1 when the tracked error is to be reported."""
    if track[0] >= float(PERSIST_STEPS) or track[3] >= float(GROWTH_STEPS):
        return 1
    return 0
