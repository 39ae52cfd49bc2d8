"""Mimic joint impulse (the mimic-joint note; physx-notes 1.5).

dl = -(b + J v) / (r + cfm), a fresh delta every iteration (no accumulation, no clamp on the impulse). Hard: the
bias b = erp C / h with erp the articulation's bias coefficient and cfm 0; compliant (mu > 0 and zeta > 0, position
iterations only): the implicit spring kp = mu^2 / r, kd = 2 mu zeta / r gives cfm = 1 / (h (h kp + kd)) and
erp = h kp / (h kp + kd). Velocity iterations are hard with no bias.

One deliberate difference from PhysX 5.8: the bias speed |erp C / h| is capped at max_bias_speed, the fastest rate
at which C can change when every coupled dof moves at its maximum joint velocity (sum |G_i| maxJointVelocity_i).
PhysX's `computeMimicJointImpulses` (lowleveldynamics/shared/DyCpuGpuArticulation.h, tag 110.0 = 5.8.0) has no cap,
so a mimic joint far from its constraint asks for a speed the velocity-limit rows take back again, but only on the
coupled dofs: the reaction of that impulse on their ancestors stays. On the panda (fingers 0.2 m/s, started up to
2 m apart) it drove the wrist 1.6 rad past its limits in 2 s. With the cap the coupled dofs close C at their
velocity limits. The cap never binds while erp |C| / h stays below that speed (a hard mimic joint in normal use keeps
|C| ~ 1e-6), so the PhysX reference results are unchanged.
"""

from __future__ import annotations

import warp as wp


@wp.func
def mimic_impulse(
    c: float,
    jv: float,
    r: float,
    h: float,
    bias_coefficient: float,
    natural_frequency: float,
    damping_ratio: float,
    position_iteration: int,
    max_bias_speed: float,
) -> float:
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
    bias = wp.clamp(erp * c / h, -max_bias_speed, max_bias_speed)
    return -(bias + jv) / (r + cfm)
