"""The tension of each spatial tendon on the device (muscles.py's SpatialActuators): its spring and damper, plus the
forces of the actuators that pull on it, MuJoCo's gain u + bias with the muscle curves of muscles.py (`muscle_gain`,
`muscle_bias`, the module docstring there) or fixed and affine gains and biases, at the tendon's length and speed
times the gear, clamped to the forcerange. NumPy's muscles.py stays the reference
(tests/io/mjcf/test_tendon_kernels.py checks the two against each other) and the path where the tendons' links are in
more than one block. One launch a step (_step_tendons) evaluates each tendon's path, its tension and its pull on the
links (tendon_kernels.py's evaluate_tendon and apply_tendon around actuate_tendon): three launches cost myo_sim's
elbow 4 us more than one, of a 53 us step at one env.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ...core.struct_refs import opt_in as _struct_refs
from .tendon_kernels import TendonTables, apply_tendon, evaluate_tendon

_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

if TYPE_CHECKING:
    from .control import _Activations
    from .muscles import SpatialActuators
    from .tendon_kernels import TendonKernels

GAIN_FIXED, GAIN_AFFINE, GAIN_MUSCLE = 0, 1, 2  # an actuator's gain and bias kinds (bias: fixed means none)
_KINDS = {"fixed": GAIN_FIXED, "none": GAIN_FIXED, "affine": GAIN_AFFINE, "muscle": GAIN_MUSCLE}


@wp.func
def _tiny() -> wp.float64:
    return wp.float64(1.0e-15)


@wp.func
def _norm_length(length: wp.float64, lr0: wp.float64, lr1: wp.float64, lo: wp.float64, hi: wp.float64):
    """(normalized length, the optimal length L0 [m]), as muscles.py's _norm_length."""
    l0 = (lr1 - lr0) / wp.max(_tiny(), hi - lo)
    return lo + (length - lr0) / wp.max(_tiny(), l0), l0


@wp.func
def _muscle_gain(
    length: wp.float64, speed: wp.float64, lr0: wp.float64, lr1: wp.float64, p: wp.array2d(dtype=wp.float64), c: int
) -> wp.float64:
    """-F0 FL FV (muscles.py's muscle_gain) for column c of gainprm `p`."""
    one = wp.float64(1.0)
    half = wp.float64(0.5)
    norm, l0 = _norm_length(length, lr0, lr1, p[c, 0], p[c, 1])
    lmin = p[c, 4]
    lmax = p[c, 5]
    fvmax = p[c, 8]
    vel = speed / wp.max(_tiny(), l0 * p[c, 6])
    a = half * (lmin + one)
    b = half * (one + lmax)
    fl = wp.float64(0.0)
    if norm >= lmin and norm <= lmax:
        if norm <= a:
            x = (norm - lmin) / wp.max(_tiny(), a - lmin)
            fl = half * x * x
        elif norm <= one:
            x = (one - norm) / wp.max(_tiny(), one - a)
            fl = one - half * x * x
        elif norm <= b:
            x = (norm - one) / wp.max(_tiny(), b - one)
            fl = one - half * x * x
        else:
            x = (lmax - norm) / wp.max(_tiny(), lmax - b)
            fl = half * x * x
    y = fvmax - one
    fv = fvmax
    if vel <= -one:
        fv = wp.float64(0.0)
    elif vel <= wp.float64(0.0):
        fv = (vel + one) * (vel + one)
    elif vel <= y:
        fv = fvmax - (y - vel) * (y - vel) / wp.max(_tiny(), y)
    return -p[c, 2] * fl * fv


@wp.func
def _muscle_bias(
    length: wp.float64, lr0: wp.float64, lr1: wp.float64, p: wp.array2d(dtype=wp.float64), c: int
) -> wp.float64:
    """-F0 FP (muscles.py's muscle_bias) for column c of biasprm `p`."""
    one = wp.float64(1.0)
    half = wp.float64(0.5)
    norm, _l0 = _norm_length(length, lr0, lr1, p[c, 0], p[c, 1])
    b = half * (one + p[c, 5])
    fp = wp.float64(0.0)
    if norm > b:
        fp = half + (norm - b) / wp.max(_tiny(), b - one)
    elif norm > one:
        x = (norm - one) / wp.max(_tiny(), b - one)
        fp = half * x * x
    return -p[c, 2] * p[c, 7] * fp


@wp.struct
class ActuatorTables:
    """The tendons' springs and dampers (T tendons) and the actuators on them (C columns)."""

    stiffness: wp.array(dtype=wp.float64)  # (T,) [N/m]
    damping: wp.array(dtype=wp.float64)  # (T,) [N s/m]
    spring_low: wp.array(dtype=wp.float64)  # (T,) [m] the spring's dead band
    spring_high: wp.array(dtype=wp.float64)  # (T,) [m]
    column_start: wp.array(dtype=int)  # (T + 1,) each tendon's columns (sorted by tendon)
    column: wp.array(dtype=int)  # (C,) the actuator column of each (an index into u and the force report)
    gear: wp.array(dtype=wp.float64)  # (C,)
    gain_type: wp.array(dtype=int)  # (C,) GAIN_*
    bias_type: wp.array(dtype=int)  # (C,) GAIN_* (fixed: no bias)
    gainprm: wp.array2d(dtype=wp.float64)  # (C, 10) MuJoCo's
    biasprm: wp.array2d(dtype=wp.float64)  # (C, 10)
    lengthrange: wp.array2d(dtype=wp.float64)  # (C, 2) [m]
    force_low: wp.array(dtype=wp.float64)  # (C,) [N] the forcerange (-inf, inf where none)
    force_high: wp.array(dtype=wp.float64)  # (C,)
    # a muscle whose activation the launch advances (MjcfControl's device activations; -1: its input is u's column)
    act_column: wp.array(dtype=int)  # (C,) its column of act
    dynprm: wp.array2d(dtype=wp.float64)  # (C, 3) MuJoCo's muscle dynprm: tau_act, tau_deact [s], tausmooth
    act_low: wp.array(dtype=wp.float64)  # (C,) its actrange (-inf, inf where none)
    act_high: wp.array(dtype=wp.float64)  # (C,)


@wp.func
def muscle_act_dot(ctrl: wp.float64, act: wp.float64, p: wp.array2d(dtype=wp.float64), k: int) -> wp.float64:
    """act' of a muscle (muscles.py's muscle_act_dot) with the dynprm of column k of `p`."""
    zero = wp.float64(0.0)
    one = wp.float64(1.0)
    scale = wp.float64(0.5) + wp.float64(1.5) * wp.clamp(act, zero, one)
    tau_act = p[k, 0] * scale
    tau_deact = p[k, 1] / scale
    dctrl = wp.clamp(ctrl, zero, one) - act
    tau = tau_deact
    if dctrl > zero:
        tau = tau_act
    width = p[k, 2]
    if width >= _tiny():  # tausmooth: the quintic blend of the two time constants over dctrl in +-width / 2
        x = wp.clamp(dctrl / width + wp.float64(0.5), zero, one)
        tau = tau_deact + (tau_act - tau_deact) * x * x * x * (
            x * (wp.float64(6.0) * x - wp.float64(15.0)) + wp.float64(10.0)
        )
    return dctrl / wp.max(_tiny(), tau)


@wp.func
def actuate_tendon(
    at: ActuatorTables,
    env: int,
    t: int,
    length: wp.array2d(dtype=wp.float64),
    speed: wp.array2d(dtype=wp.float64),
    u: wp.array2d(dtype=wp.float64),
    act: wp.array2d(dtype=wp.float64),
    dt: wp.array(dtype=wp.float64),
    actuator_force: wp.array2d(dtype=wp.float64),
    tension: wp.array2d(dtype=wp.float64),
) -> None:
    """Tendon t's tension [N] in env (MuJoCo's sign): its spring and damper, plus gear times each actuator's force,
    written to actuator_force (E, C) too. A muscle with an act column takes its activation as input and then
    advances it over dt[0] (MuJoCo's Euler, act' from the ctrl in u), clamped to its actrange."""
    ln = length[env, t]
    v = speed[env, t]
    total = at.stiffness[t] * (wp.clamp(ln, at.spring_low[t], at.spring_high[t]) - ln) - at.damping[t] * v
    for k in range(at.column_start[t], at.column_start[t + 1]):
        g = at.gear[k]
        lk = g * ln
        vk = g * v
        gain = at.gainprm[k, 0]
        if at.gain_type[k] == GAIN_MUSCLE:
            gain = _muscle_gain(lk, vk, at.lengthrange[k, 0], at.lengthrange[k, 1], at.gainprm, k)
        elif at.gain_type[k] == GAIN_AFFINE:
            gain = gain + at.gainprm[k, 1] * lk + at.gainprm[k, 2] * vk
        bias = wp.float64(0.0)
        if at.bias_type[k] == GAIN_MUSCLE:
            bias = _muscle_bias(lk, at.lengthrange[k, 0], at.lengthrange[k, 1], at.biasprm, k)
        elif at.bias_type[k] == GAIN_AFFINE:
            bias = at.biasprm[k, 0] + at.biasprm[k, 1] * lk + at.biasprm[k, 2] * vk
        a = at.act_column[k]
        ctrl = u[env, at.column[k]]
        inp = ctrl
        if a >= 0:
            inp = act[env, a]
            step = inp + dt[0] * muscle_act_dot(ctrl, inp, at.dynprm, k)
            act[env, a] = wp.clamp(step, at.act_low[k], at.act_high[k])
        f = wp.clamp(gain * inp + bias, at.force_low[k], at.force_high[k])
        actuator_force[env, k] = f
        total += g * f
    tension[env, t] = total


@wp.kernel
def _step_tendons(
    tt: TendonTables,
    at: ActuatorTables,
    pose: wp.array2d(dtype=wp.transform),
    vel: wp.array2d(dtype=wp.spatial_vector),
    num_tendons: int,
    length: wp.array2d(dtype=wp.float64),
    speed: wp.array2d(dtype=wp.float64),
    points: wp.array3d(dtype=wp.vec3d),
    wrapped: wp.array2d(dtype=int),
    u: wp.array2d(dtype=wp.float64),
    act: wp.array2d(dtype=wp.float64),
    dt: wp.array(dtype=wp.float64),
    actuator_force: wp.array2d(dtype=wp.float64),
    tension: wp.array2d(dtype=wp.float64),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
):
    """Each (env, tendon): its path at the current state, its tension at inputs u, its pull added to the links'
    forces. A thread reads only its own tendon's path, so the three stages need no barrier between them."""
    tid = wp.tid()
    env = tid // num_tendons
    t = tid % num_tendons
    evaluate_tendon(tt, pose, vel, env, t, length, speed, points, wrapped)
    actuate_tendon(at, env, t, length, speed, u, act, dt, actuator_force, tension)
    apply_tendon(tt, pose, env, t, tension, points, wrapped, link_force, link_torque)


def actuator_tables(
    sa: SpatialActuators, device: wp.Device, acts: _Activations | None = None
) -> tuple[ActuatorTables, np.ndarray]:
    """SpatialActuators `sa`'s tables on `device`, and the order of its columns in them (sorted by tendon); with
    MjcfControl's activations `acts`, the launch advances those of its muscles (act_column)."""
    order = np.argsort(sa.tendon_of, kind="stable").astype(np.int32)
    nt = len(sa.set.tendons)
    at = ActuatorTables()

    def arr(a, dtype=wp.float64):
        a = np.asarray(a)
        return wp.array(a if a.size else np.zeros((1,) + a.shape[1:], a.dtype), dtype=dtype, device=device)

    at.stiffness, at.damping = arr(sa.stiffness), arr(sa.damping)
    at.spring_low, at.spring_high = arr(sa.spring_low), arr(sa.spring_high)
    at.column_start = arr(np.searchsorted(sa.tendon_of[order], np.arange(nt + 1)).astype(np.int32), int)
    at.column = arr(sa.columns[order].astype(np.int32), int)
    at.gear = arr(sa.gear[order])
    at.gain_type = arr(np.array([_KINDS.get(k, GAIN_FIXED) for k in sa.gain_type[order]], np.int32), int)
    at.bias_type = arr(np.array([_KINDS.get(k, GAIN_FIXED) for k in sa.bias_type[order]], np.int32), int)
    at.gainprm = arr(sa.gainprm[order], wp.float64)
    at.biasprm = arr(sa.biasprm[order], wp.float64)
    at.lengthrange = arr(sa.lengthrange[order], wp.float64)
    at.force_low, at.force_high = arr(sa.force_low[order]), arr(sa.force_high[order])
    c = len(order)
    act_column, dynprm = np.full(c, -1, np.int32), np.zeros((c, 3))
    low, high = np.full(c, -np.inf), np.full(c, np.inf)
    if acts is not None:
        where = {int(i): a for a, i in enumerate(acts.columns)}
        for j, i in enumerate(sa.columns[order]):
            a = where.get(int(i), -1)
            act_column[j] = a
            if a >= 0:
                dynprm[j], low[j], high[j] = acts.dynprm[a], acts.low[a], acts.high[a]
    at.act_column = arr(act_column, int)
    at.dynprm = arr(dynprm, wp.float64)
    at.act_low, at.act_high = arr(low), arr(high)
    return at, order


def record_actuate(
    at: ActuatorTables, kernels: TendonKernels, u: wp.array, act: wp.array, dt: wp.array, actuator_force: wp.array
) -> wp.Launch:
    """The recorded launch of _step_tendons over TendonKernels `kernels` (its tables, lengths, speeds, points and
    tension `force`) at inputs u, into actuator_force and the links' forces of the kernels' block; the muscles with
    an act column advance their act (E, na) over dt (1,) [s]."""
    st, ctl = kernels.block.state, kernels.block.control
    return wp.launch(
        _step_tendons,
        kernels.num_envs * kernels.num_tendons,
        [kernels.tables, at, st.link_pose, st.link_velocity, kernels.num_tendons, kernels.length, kernels.speed,
         kernels.points, kernels.wrapped, u, act, dt, actuator_force, kernels.force, ctl.link_force, ctl.link_torque],
        device=kernels.block.device,
        record_cmd=True,
    )  # fmt: skip
