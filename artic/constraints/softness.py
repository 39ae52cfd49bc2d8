"""MuJoCo's soft constraint as one of artic's rows (description/softness.py holds the parameters).

MuJoCo solves each soft row for its force f from (A + R) f = a_ref - a0 (A the row's J M^-1 J^T, a0 its
unconstrained acceleration), with a_ref = -b v - k d r and R = (1 - d) / d w: the row's velocity v and violation
r at the start of the step, the impedance d(r) from solimp, k and b from solref, w the approximate inverse
effective mass MuJoCo's diagApprox takes from the bodies' (or dofs') inverse weights at the reference pose.
Times h, with the impulse lambda = h f and the row velocity after the step g . v+ = g . v* + A lambda (v* the
unconstrained velocity), that equation is

    g . v+ + R lambda = v + h a_ref = v - h (b v + k d r)

which is artic's row form exactly (row_form.py: g . v+ + cfm lambda = target): cfm = R, target = v - h (b v + k d r).
This is the ODE note's eq. 13 for a spring-damper whose stiffness and damping are scaled by the row's effective
mass: no approximation beyond MuJoCo's own, so PGS run to convergence, TGS and the direct solver all give MuJoCo's
soft force (MuJoCo's own solvers converge to the same point). The values are the step's (h = dt, v and r at its
start) in all three solvers.
"""

from __future__ import annotations

import warp as wp

from ..core.model import soft_params  # the row type lives with the model arrays that hold it

SOFT_HARD = wp.constant(-1.0)  # a row's cfm marker: the row is hard (no softness)
SOFT_APART = wp.constant(-2.0)  # a soft row that is not active this step (no overlap, within the range)
_MIN = wp.constant(1.0e-15)  # MuJoCo's mjMINVAL
_MIN_IMPEDANCE = wp.constant(1.0e-4)
_MAX_IMPEDANCE = wp.constant(0.9999)


@wp.func
def is_soft(p: soft_params) -> bool:
    """A row with softness (solref (0, 0) marks a hard one)."""
    return p[0] != 0.0 or p[1] != 0.0


@wp.func
def impedance(p: soft_params, r: float) -> float:
    """d(r) from solimp = p[2..6] (d0, dmax, width, midpoint, power): d0 at r = 0, dmax at |r| >= width, joined
    by x^power / mid^(power-1) below the midpoint and 1 - (1 - x)^power / (1 - mid)^(power-1) above it."""
    d0 = p[2]
    dmax = p[3]
    width = p[4]
    mid = p[5]
    power = p[6]
    d = 0.5 * (d0 + dmax)
    if d0 != dmax and width > _MIN:
        x = wp.abs(r) / width
        if x >= 1.0:
            d = dmax
        elif x <= 0.0:
            d = d0
        else:
            y = x
            if power != 1.0:
                if x <= mid:
                    y = wp.pow(x, power) / wp.pow(mid, power - 1.0)
                else:
                    y = 1.0 - wp.pow(1.0 - x, power) / wp.pow(1.0 - mid, power - 1.0)
            d = d0 + y * (dmax - d0)
    return wp.clamp(d, _MIN_IMPEDANCE, _MAX_IMPEDANCE)


@wp.func
def soft_row_at(p: soft_params, r: float, r_imp: float, v: float, weight: float, h: float, dt: float) -> wp.vec2:
    """(target, cfm) of a soft row with violation r (< 0 violated) and velocity v at the start of the step, its
    impedance taken at violation r_imp (MuJoCo: a connect's or weld's whole error, the row's own otherwise),
    approximate inverse effective mass `weight` (MuJoCo's diagApprox), solved over h; dt is the model's step, for
    MuJoCo's refsafe (timeconst at least 2 dt)."""
    dmax = p[3]
    k = float(0.0)
    b = float(0.0)
    if p[0] > 0.0:
        tc = wp.max(p[0], 2.0 * dt)
        k = 1.0 / wp.max(_MIN, dmax * dmax * tc * tc * p[1] * p[1])
        b = 2.0 / wp.max(_MIN, dmax * tc)
    else:
        k = -p[0] / wp.max(_MIN, dmax * dmax)
        b = -p[1] / wp.max(_MIN, dmax)
    d = impedance(p, r_imp)
    cfm = wp.max(_MIN, (1.0 - d) / d * weight)
    return wp.vec2(v - h * (b * v + k * d * r), cfm)


@wp.func
def soft_row(p: soft_params, r: float, v: float, weight: float, h: float, dt: float) -> wp.vec2:
    """soft_row_at with the impedance at the row's own violation."""
    return soft_row_at(p, r, r, v, weight, h, dt)
