"""Mimic joint impulse (specs/mimic-joint-maths.md; physx-notes 1.5).

dl = -(erp C / h + J v) / (r + cfm), a fresh delta every iteration (no accumulation, no clamp). Hard: erp is the
articulation's bias coefficient and cfm 0; compliant (mu > 0 and zeta > 0, position iterations only): the
implicit spring kp = mu^2 / r, kd = 2 mu zeta / r gives cfm = 1 / (h (h kp + kd)) and erp = h kp / (h kp + kd).
Velocity iterations are hard with no bias.
"""

import warp as wp


@wp.func
def mimic_impulse(c: float, jv: float, r: float, h: float, bias_coefficient: float, natural_frequency: float,
                  damping_ratio: float, position_iteration: int):
    erp = float(0.0)
    cfm = float(0.0)
    if position_iteration != 0:
        erp = bias_coefficient
        if natural_frequency > 0.0 and damping_ratio > 0.0 and r > 0.0:
            kp = natural_frequency * natural_frequency / r
            kd = 2.0 * natural_frequency * damping_ratio / r
            cfm = 1.0 / (h * (h * kp + kd))
            erp = h * kp / (h * kp + kd)
    if r + cfm <= 0.0:
        return 0.0
    return -(erp * c / h + jv) / (r + cfm)
