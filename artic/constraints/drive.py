"""Implicit PD joint drives (the implicit-drive note; physx-notes 2.4-2.7).

The drive impulse of one iteration is
    l = l_acc * impulse_multiplier + v * velocity_multiplier + target_vel_plus_initial_bias
        - dq * bias_coefficient + t_elapsed * target_pos_bias,
clamped to +-max_impulse, with the coefficients of spec eqs. (13)-(24) (force drive) and (30)-(39) (acceleration
drive). h is the solver step (dt for PGS, rho = dt / n_pos for TGS) and tau the full step; PGS keeps the impulse
multiplier 1 - x and no target-position bias, TGS sums substep increments (multiplier 1) and interpolates the target
by t_elapsed * v_T. A force drive uses the response r, an acceleration drive the cfm-softened 1 / (r + cfm).
"""

from __future__ import annotations

import warp as wp

from ..core.model import DRIVE_ACCELERATION

vec5 = wp.types.vector(length=5, dtype=float)


@wp.func
def drive_coefficients(
    kind: int,
    stiffness: float,
    damping: float,
    target_vel: float,
    geom_error: float,
    r: float,
    recip_response: float,
    h: float,
    tau: float,
    tgs: int,
) -> vec5:
    """(target_vel_plus_initial_bias, velocity_multiplier, impulse_multiplier, bias_coefficient, target_pos_bias)."""
    a = h * (h * stiffness + damping)
    b = h * damping * target_vel
    initial_bias = geom_error - (tau - h) * target_vel
    x = float(0.0)
    scale = float(1.0)
    if kind == DRIVE_ACCELERATION:
        x = 1.0 / (1.0 + a)
        scale = recip_response
    elif r > 0.0:
        x = 1.0 / (1.0 + a * r)
    bias_coef = stiffness * x * scale * h
    impulse_mult = 1.0 - x
    target_pos_bias = float(0.0)
    if tgs != 0:
        impulse_mult = 1.0
        target_pos_bias = bias_coef * target_vel
    return vec5(x * b * scale + bias_coef * initial_bias, -x * a * scale, impulse_mult, bias_coef, target_pos_bias)


@wp.func
def drive_impulse(coef: vec5, accumulated: float, v: float, dq: float, t_elapsed: float, max_impulse: float) -> float:
    """The new accumulated drive impulse, clamped to +-max_impulse."""
    lam = accumulated * coef[2] + v * coef[1] + coef[0] - dq * coef[3] + t_elapsed * coef[4]
    return wp.clamp(lam, -max_impulse, max_impulse)


@wp.func
def spherical_drive_error(joint_rotation: wp.quat, target_rotvec: wp.vec3) -> wp.vec3:
    """Per-axis position error of a multi-dof spherical drive: -2 imag(target^-1 q), target on the same
    hemisphere as q (physx-notes 2.4; 2 sin(theta/2) axis rather than the exact logarithm)."""
    angle = wp.length(target_rotvec)
    target = wp.quat_identity()
    if angle > 1.0e-12:
        target = wp.quat_from_axis_angle(target_rotvec / angle, angle)
    qt = wp.vec4(target[0], target[1], target[2], target[3])
    qj = wp.vec4(joint_rotation[0], joint_rotation[1], joint_rotation[2], joint_rotation[3])
    if wp.dot(qt, qj) < 0.0:
        target = wp.quat(-target[0], -target[1], -target[2], -target[3])
    e = wp.quat_inverse(target) * joint_rotation
    return wp.vec3(-2.0 * e[0], -2.0 * e[1], -2.0 * e[2])
