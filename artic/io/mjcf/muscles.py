"""MuJoCo's muscle model (its documentation, "Muscles"; the same curves, written for rows of envs) and the
actuators that pull on spatial tendons, whose forces artic computes at every step (NumPy here, the reference; one
device launch where one block holds the tendons' links: muscle_kernels.py, which on the CPU also advances the
muscles' activations).

A muscle actuator's force is f = gain(L, V) act + bias(L) with L, V the actuator's length and speed (gear times the
tendon's), act its activation:

* L0 = (lengthrange[1] - lengthrange[0]) / (range[1] - range[0]) is the optimal fibre length; the normalized length
  is l = range[0] + (L - lengthrange[0]) / L0 and the normalized speed v = V / (L0 vmax).
* gain = -F0 FL(l) FV(v) and bias = -F0 FP(l): FL a bump of two half-quadratics on each side of 1 reaching 0 at lmin
  and lmax; FV 0 below v = -1, (v + 1)^2 up to 0, rising to fvmax at v = fvmax - 1; FP 0 below l = 1, a
  half-quadratic up to b = (1 + lmax) / 2 (fpmax / 2 there) and linear beyond. F0 is `force`, or when that is
  negative MuJoCo's scale / acc0, acc0 = |M^-1 gear J^T| at qpos0 (`scale_by_acc0`).
* The activation follows act' = (u - act) / tau, u the ctrl clamped to [0, 1], tau = tau_act (0.5 + 1.5 act) when
  u > act and tau_deact / (0.5 + 1.5 act) otherwise (act clamped to [0, 1] in both), with a smooth switch of width
  tausmooth when it is positive: tau_deact + (tau_act - tau_deact) sigmoid(dctrl / tausmooth + 1/2), sigmoid the
  quintic smoothstep. control.py integrates it as MuJoCo's Euler does (act + h act').

Parameters (gainprm and biasprm, MuJoCo's order): range[0], range[1], force, scale, lmin, lmax, vmax, fpmax, fvmax;
dynprm: tau_act, tau_deact, tausmooth. `<muscle>` sets them from its attributes; `<general>` gives them directly.

`SpatialActuators` applies, at the start of every step, the forces of every actuator with a spatial-tendon
transmission (gain fixed, affine or muscle; bias none, affine or muscle) and every spatial tendon's own spring and
damper (spatial.py), all explicit as MuJoCo's Euler step takes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ...core.parallel import replay
from ...description.mass_check import generalized_force, joint_space_inertia
from .muscle_kernels import actuator_tables, record_actuate
from .spatial import SpatialTendon, TendonFrames, TendonSet, initial_pose
from .tendon_kernels import TendonKernels

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from numpy.typing import ArrayLike

    from ...sim.scene import Scene
    from ..xml_values import XmlValues
    from .actuators import Actuator
    from .control import _Activations
    from .loader import MjcfModel

_TINY = 1e-15
MUSCLE_DEFAULTS = {  # <muscle>'s attributes and MuJoCo's defaults
    "range": (0.75, 1.05),
    "force": (-1.0,),
    "scale": (200.0,),
    "lmin": (0.5,),
    "lmax": (1.6,),
    "vmax": (1.5,),
    "fpmax": (1.3,),
    "fvmax": (1.2,),
}


def read_muscle(v: XmlValues, act: ET.Element, a: dict, rec: Actuator) -> str | None:
    """Set rec's gain, bias and dynamics parameters from a <muscle> or a <general> with muscle types; the reason
    it is not supported, or None."""
    if act.tag == "muscle":
        prm = []
        for key, default in MUSCLE_DEFAULTS.items():
            got = v.numbers(act, key, len(default), default, a.get(key))
            prm.extend(float(x) for x in got)
        rec.gain_type = rec.bias_type = "muscle"
        rec.gainprm = rec.biasprm = padded_params(prm)
        tau = v.numbers(act, "timeconst", 2, (0.01, 0.04), a.get("timeconst"))
        smooth = v.number(act, "tausmooth", 0.0, a.get("tausmooth"), minimum=0.0)
        rec.dyn, rec.dynprm = "muscle", (float(tau[0]), float(tau[1]), smooth)
    else:
        rec.gain_type, rec.bias_type = a.get("gaintype", "fixed"), a.get("biastype", "none")
        rec.gainprm = padded_params(v.numbers(act, "gainprm", (1, 10), (1.0,), a.get("gainprm")))
        rec.biasprm = padded_params(v.numbers(act, "biasprm", (1, 10), (0.0,), a.get("biasprm")))
    if "user" in (rec.gain_type, rec.bias_type):
        return "gaintype or biastype 'user' (a callback of the user's) is not supported"
    for kind in ("gain", "bias"):
        prm = getattr(rec, f"{kind}prm")
        if getattr(rec, f"{kind}_type") == "muscle":
            _check_muscle(v, act, kind, prm)
    lr = v.numbers(act, "lengthrange", 2, (0.0, 0.0), a.get("lengthrange"))
    # without one (low >= high), MuJoCo's compiler finds it by simulation: read_actuators, lengthrange.py
    rec.lengthrange = (float(lr[0]), float(lr[1])) if lr[0] < lr[1] else None
    return None


def _check_muscle(v: XmlValues, act: ET.Element, kind: str, prm: tuple) -> None:
    """MuJoCo's checks of muscle parameters, refused where MuJoCo 4 refuses them (range, lmin < 1 < lmax, scale and
    vmax positive; it accepts a negative fpmax or an fvmax below 1, and so does artic)."""
    problems = []
    if not prm[0] < prm[1]:
        problems.append("range[0] must be below range[1]")
    if not prm[4] < 1.0 < prm[5]:
        problems.append("lmin < 1 < lmax is required")
    if not (prm[3] > 0.0 and prm[6] > 0.0):
        problems.append("scale and vmax must be positive")
    if problems:
        raise v.fail(act, f"muscle {kind}prm {' '.join(f'{x:g}' for x in prm[:9])}: {'; '.join(problems)}")


def scale_by_acc0(rec: Actuator, tendon: SpatialTendon) -> None:
    """MuJoCo's peak force when a muscle's `force` is negative: scale / acc0, acc0 = |M^-1 moment| at qpos0 (the
    actuator's moment gear J^T, J the tendon's Jacobian; M the joint-space inertia of the articulations it moves)."""
    if not any(t == "muscle" and p[2] < 0.0 for t, p in ((rec.gain_type, rec.gainprm), (rec.bias_type, rec.biasprm))):
        return
    tendons = TendonSet([tendon])
    pose = initial_pose(tendons)
    _, points, dirs, _ = tendons.evaluate(pose)
    force, torque = tendons.forces(pose, points, dirs, np.ones((1, 1)))
    squares = 0.0
    for art in {id(lk.articulation): lk.articulation for lk in tendons.links}.values():
        if art._kinematic:  # a mocap body: moved by nothing, like the world
            continue
        wrenches = {lk: (force[0, k], torque[0, k]) for k, lk in enumerate(tendons.links) if lk.articulation is art}
        m, _ = joint_space_inertia(art)
        acc = np.linalg.solve(m, rec.gear * generalized_force(art, wrenches))
        if not art.fix_base:  # MuJoCo's free joint: the linear acceleration of the body's origin, not the world's
            acc[3:6] += np.cross(acc[0:3], art.get_links()[0].initial_pose.p)
        squares += float(np.sum(acc**2))
    acc0 = np.sqrt(squares)
    for kind in ("gainprm", "biasprm"):
        prm = list(getattr(rec, kind))
        if getattr(rec, kind.replace("prm", "_type")) == "muscle" and prm[2] < 0.0:
            prm[2] = prm[3] / max(_TINY, acc0)
            setattr(rec, kind, tuple(prm))


def padded_params(values: ArrayLike) -> tuple:
    """MuJoCo's 10 parameters: the values given, then zeros."""
    out = np.zeros(10)
    out[: len(values)] = values
    return tuple(float(x) for x in out)


def _norm_length(length, lengthrange, prm):
    lo, hi = prm[..., 0], prm[..., 1]
    l0 = (lengthrange[..., 1] - lengthrange[..., 0]) / np.maximum(_TINY, hi - lo)
    return lo + (length - lengthrange[..., 0]) / np.maximum(_TINY, l0), l0


def muscle_gain(length: np.ndarray, velocity: np.ndarray, lengthrange: np.ndarray, prm: np.ndarray) -> np.ndarray:
    """-F0 FL FV (module docstring) at actuator lengths and speeds (E, k) of k muscles with `lengthrange` (k, 2) and
    gainprm (k, 10) (or one muscle: (E,), (2,), (10,))."""
    lengthrange, prm = np.asarray(lengthrange, float), np.asarray(prm, float)
    force, lmin, lmax, vmax, fvmax = prm[..., 2], prm[..., 4], prm[..., 5], prm[..., 6], prm[..., 8]
    norm, l0 = _norm_length(length, lengthrange, prm)
    vel = velocity / np.maximum(_TINY, l0 * vmax)
    a, b = 0.5 * (lmin + 1.0), 0.5 * (1.0 + lmax)
    x = np.select(
        [norm <= a, norm <= 1.0, norm <= b],
        [
            (norm - lmin) / np.maximum(_TINY, a - lmin),
            (1.0 - norm) / np.maximum(_TINY, 1.0 - a),
            (norm - 1.0) / np.maximum(_TINY, b - 1.0),
        ],
        (lmax - norm) / np.maximum(_TINY, lmax - b),
    )
    outer = (norm <= a) | (norm > b)  # the bump's feet rise as x^2 / 2, its top falls as 1 - x^2 / 2
    fl = np.where(outer, 0.5 * x * x, 1.0 - 0.5 * x * x)
    fl = np.where((norm >= lmin) & (norm <= lmax), fl, 0.0)
    y = fvmax - 1.0
    fv = np.select(
        [vel <= -1.0, vel <= 0.0, vel <= y],
        [0.0, (vel + 1.0) ** 2, fvmax - (y - vel) ** 2 / np.maximum(_TINY, y)],
        fvmax,
    )
    return -force * fl * fv


def muscle_bias(length: np.ndarray, lengthrange: np.ndarray, prm: np.ndarray) -> np.ndarray:
    """-F0 FP (module docstring) at actuator lengths (E, k), shapes as muscle_gain's."""
    lengthrange, prm = np.asarray(lengthrange, float), np.asarray(prm, float)
    force, lmax, fpmax = prm[..., 2], prm[..., 5], prm[..., 7]
    norm, _ = _norm_length(length, lengthrange, prm)
    b = 0.5 * (1.0 + lmax)
    x = (norm - 1.0) / np.maximum(_TINY, b - 1.0)
    beyond = (norm - b) / np.maximum(_TINY, b - 1.0)
    fp = np.where(norm <= 1.0, 0.0, np.where(norm <= b, 0.5 * x * x, 0.5 + beyond))
    return -force * fpmax * fp


def has_tausmooth(dynprm: ArrayLike) -> bool:
    """Whether any muscle of dynprm (k, 3) blends its time constants (MuJoCo's tausmooth, dynprm[:, 2] > 0)."""
    return bool(np.any(np.asarray(dynprm, float).reshape(-1, 3)[:, 2] >= _TINY))


def muscle_act_dot(ctrl: np.ndarray, act: np.ndarray, dynprm: ArrayLike, smooth: bool | None = None) -> np.ndarray:
    """act' of muscles (module docstring); ctrl, act (E, k), dynprm (k, 3); smooth: whether any muscle has a tausmooth
    (dynprm[:, 2] > 0), None to look. Few NumPy calls: at one env each costs ~1 us against its microseconds of
    arithmetic, and this runs before every step (myo_sim's elbow: 21 us of a 53 us step with the smooth blend
    computed whether or not a muscle has one)."""
    dynprm = np.asarray(dynprm, float).reshape(-1, 3)
    scale = 0.5 + 1.5 * np.minimum(np.maximum(act, 0.0), 1.0)
    tau_act = dynprm[:, 0] * scale
    tau_deact = dynprm[:, 1] / scale
    dctrl = np.minimum(np.maximum(ctrl, 0.0), 1.0) - act
    tau = np.where(dctrl > 0.0, tau_act, tau_deact)
    width = dynprm[:, 2]
    if has_tausmooth(dynprm) if smooth is None else smooth:
        # tausmooth: the quintic blend of the two time constants over dctrl in +-width / 2
        s = np.minimum(np.maximum(dctrl / np.where(width > 0, width, 1.0) + 0.5, 0.0), 1.0)
        blend = tau_deact + (tau_act - tau_deact) * s**3 * (s * (6.0 * s - 15.0) + 10.0)
        tau = np.where(width < _TINY, tau, blend)
    return dctrl / np.maximum(_TINY, tau)


class SpatialActuators:
    """The forces of a model's spatial tendons (their springs and dampers) and of the actuators that pull on them,
    applied as link forces before each step (module docstring). `force` (E, nu) holds the last step's actuator
    forces, MuJoCo's data.actuator_force, in the columns of these actuators."""

    def __init__(self, model: MjcfModel, scene: Scene, actuators: list):
        spatial = model.spatial_tendons
        acting = [(i, r) for i, r in enumerate(actuators) if r.supported and r.tendon in spatial]
        passive = [t for t in spatial.values() if t.stiffness > 0.0 or t.damping > 0.0]
        used = list({id(t): t for t in [*passive, *(spatial[r.tendon] for _, r in acting)]}.values())
        column = {id(t): k for k, t in enumerate(used)}
        self.active = bool(used)
        self._force = np.zeros((scene.num_envs, len(actuators)))
        self._fresh = None  # (columns, the device's forces): the last launch's, copied into _force when read
        self._acts = self._act = self._dt = None  # the activations the launch advances (take_activations)
        if not self.active:
            return
        self.set = TendonSet(used)
        self._scene = scene
        self._arts = list({id(lk.articulation): lk.articulation for lk in self.set.links}.values())
        self.kernels = self.frames = None
        self._route()
        self.stiffness = np.array([t.stiffness for t in used])
        self.damping = np.array([t.damping for t in used])
        rest0 = self.set.evaluate(initial_pose(self.set))[0][0]  # MuJoCo's springlength -1: the length at qpos0
        spring = [t.spring if t.spring is not None else (rest0[k],) * 2 for k, t in enumerate(used)]
        self.spring_low, self.spring_high = np.array(spring, float).reshape(-1, 2).T
        # the actuators as columns: their actuator index, tendon column, gear, gain and bias kinds and parameters
        self.columns = np.array([i for i, _ in acting], int)
        self.tendon_of = np.array([column[id(spatial[r.tendon])] for _, r in acting], int)
        self.gear = np.array([r.gear for _, r in acting], float)
        self.gain_type = np.array([r.gain_type for _, r in acting])
        self.bias_type = np.array([r.bias_type for _, r in acting])
        self.gainprm = np.array([r.gainprm for _, r in acting], float).reshape(-1, 10)
        self.biasprm = np.array([r.biasprm for _, r in acting], float).reshape(-1, 10)
        self.lengthrange = np.array([r.lengthrange or (0.0, 1.0) for _, r in acting], float).reshape(-1, 2)
        self.force_low = np.array([(r.forcerange or (-np.inf, np.inf))[0] for _, r in acting], float)
        self.force_high = np.array([(r.forcerange or (-np.inf, np.inf))[1] for _, r in acting], float)

    @property
    def force(self) -> np.ndarray:
        """(E, nu) the last step's forces of these actuators in their columns (MuJoCo's actuator_force; 0 in the
        other actuators' columns)."""
        if self._fresh is not None:
            columns, forces = self._fresh
            out = forces if isinstance(forces, np.ndarray) else forces.numpy()
            self._force[:, columns] = out[:, : len(columns)]
        return self._force

    def take_activations(self, acts: _Activations) -> np.ndarray | None:
        """Advance the activations `acts` (MjcfControl's) in this launch, where each of them is a muscle on one of
        these tendons, none acts early (its force takes the act before the update) and the launch runs on the
        CPU: returns the act array (E, na), a view of the launch's, which each step then updates in place; None
        where that does not hold (MjcfControl advances them on the host). On the CPU the kernel's act and the
        host's are the same memory, so reads and writes of MjcfControl.act need no copies."""
        if not (self.active and acts.na and acts.only_muscles and not acts.any_early):
            return None
        if not set(acts.columns.tolist()) <= set(self.columns.tolist()):
            return None
        self._route()
        if self.kernels is None or not self.kernels.block.device.is_cpu:
            return None
        dev = self.kernels.block.device
        self._acts = acts
        self._act = wp.zeros((self._force.shape[0], acts.na), dtype=wp.float64, device=dev)
        self._dt = wp.zeros(1, dtype=wp.float64, device=dev)
        self._device = None
        return self._act.numpy()

    def apply_advancing(self, ctrl: np.ndarray, dt: float) -> bool:
        """apply(ctrl, dt) with the launch advancing the activations taken (take_activations), where it can (not
        after a regrouping that split the tendons' links over blocks); False, having done nothing, where not."""
        if self._acts is None:
            return False
        self._route()
        if self.kernels is None:
            return False
        self._on_device(ctrl, dt)
        return True

    def _route(self) -> None:
        """On the device where one block holds every tendon link (tendon_kernels.py), else NumPy over a copy of the
        state (spatial.py's TendonFrames); again whenever the scene regrouped its blocks."""
        blocks = {id(b): b for b in (self._scene.view(a).block for a in self._arts)}
        block = next(iter(blocks.values())) if len(blocks) == 1 else None
        if self.kernels is not None and self.kernels.block is block:
            return
        self.kernels = TendonKernels(self._scene, self.set, block) if block is not None else None
        self._device = None  # the actuators' launch and arrays for these kernels (_on_device)
        if self.kernels is None and self.frames is None:
            self.frames = TendonFrames(self._scene, self.set)

    def apply(self, u: np.ndarray) -> None:
        """Write this step's link forces: the actuators' at inputs u (E, nu: ctrl, or act where they have one)."""
        if not self.active:
            return
        self._route()
        if self.kernels is not None:
            self._on_device(u, 0.0)  # dt: only for the activations the launch advances (apply_advancing)
            return
        pose, velocity = self.frames.read()
        length, points, dirs, _ = self.set.evaluate(pose)
        rate = self.set.speed(pose, velocity, points, dirs)
        total = self.stiffness * (np.clip(length, self.spring_low, self.spring_high) - length) - self.damping * rate
        if len(self.columns):
            k = self.tendon_of
            f = self.actuator_forces(u[:, self.columns], self.gear * length[:, k], self.gear * rate[:, k])
            self._fresh = None
            self._force[:, self.columns] = f
            np.add.at(total.T, self.tendon_of, (self.gear * f).T)
        self.frames.apply(*self.set.forces(pose, points, dirs, total))

    def _on_device(self, u: np.ndarray, dt: float) -> None:
        """apply's work in one launch (muscle_kernels.py's _step_tendons): lengths and speeds, tensions and actuator
        forces (and activations: take_activations), link forces; only u (and dt) go to the device, and the actuator
        forces are read back when asked for (force)."""
        k = self.kernels
        if self._device is None:
            dev = k.block.device
            tables, order = actuator_tables(self, dev, self._acts)
            u_dev = wp.zeros(u.shape, dtype=wp.float64, device=dev)
            forces = wp.zeros((len(u), max(len(order), 1)), dtype=wp.float64, device=dev)
            act = self._act if self._acts is not None else wp.zeros((1, 1), dtype=wp.float64, device=dev)
            dt_dev = self._dt if self._dt is not None else wp.zeros(1, dtype=wp.float64, device=dev)
            cpu = dev.is_cpu
            views = (u_dev.numpy(), dt_dev.numpy()) if cpu else (None, None)
            launch = replay(record_actuate(tables, k, u_dev, act, dt_dev, forces))
            columns = self.columns[order]
            self._device = (launch, u_dev, dt_dev, views)
            self._fresh = (columns, forces.numpy() if cpu else forces) if len(columns) else None
        launch, u_dev, _, (u_view, dt_view) = self._device
        if u_view is not None:
            u_view[...] = u
            dt_view[0] = dt  # read by the activations the launch advances, which take_activations allows on the CPU
        else:  # a GPU: no activations on the device, so no dt to send (a launch a step less)
            u_dev.assign(np.asarray(u, np.float64))
        k.ensure_link_state()
        launch()

    def actuator_forces(self, u: np.ndarray, length: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """MuJoCo's actuator forces gain u + bias (E, k) at the actuators' lengths and speeds (E, k), clamped to their
        forceranges."""
        g, b = self.gainprm, self.biasprm
        gain = np.where(
            self.gain_type == "muscle",
            muscle_gain(length, velocity, self.lengthrange, g),
            g[:, 0] + np.where(self.gain_type == "affine", g[:, 1] * length + g[:, 2] * velocity, 0.0),
        )
        bias = np.where(
            self.bias_type == "muscle",
            muscle_bias(length, self.lengthrange, b),
            np.where(self.bias_type == "affine", b[:, 0] + b[:, 1] * length + b[:, 2] * velocity, 0.0),
        )
        return np.clip(gain * u + bias, self.force_low, self.force_high)
