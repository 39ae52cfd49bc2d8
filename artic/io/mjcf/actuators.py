"""MJCF `<actuator>` for `load_mjcf`: actuators read and mapped onto drives, joint forces and tendon springs.

MuJoCo's actuator force is ``f = gain * ctrl + b0 + b1 * length + b2 * velocity`` with length = gear * q and velocity =
gear * qdot on a joint transmission, clamped to `forcerange` when force-limited; the joint gets ``gear * f``. `ctrl` is
clamped to `ctrlrange` when control-limited (MuJoCo's XML reference, "actuator"; ctrllimited and forcelimited "auto"
mean "limited when the range is given"). The shortcuts are general actuators:

* <motor>: gain 1, no bias. artic applies ``gear * clamp(ctrl)`` as a joint force (explicit, as in MuJoCo).
* <position kp kv>: gain kp, bias (0, -kp, -kv): an explicit drive (below) of stiffness gear^2 kp, damping gear^2 kv
  and target position ctrl / gear. dampratio and inheritrange are MuJoCo's compile-time rules (`_position_extras`);
  timeconst is an activation filter (below).
* <velocity kv>: gain kv, bias (0, 0, -kv): a drive of damping gear^2 kv and target velocity ctrl / gear.
* <general>: gaintype fixed, dyntype none and biastype none or affine. With bias b1 != 0 it joins the drive's stiffness
  (target position), else with b2 != 0 its damping (target velocity), else it is a joint force.
* <intvelocity kp kv actrange>: a position servo on an integrated ctrl: dyntype integrator, gain kp, bias (0, -kp, -kv),
  its activation limited to actrange (inheritrange sets actrange, dampratio kv, as for <position>).
* <damper kv ctrlrange>: a damping proportional to ctrl: an affine gain (0, 0, -kv), f = -kv velocity ctrl, with ctrl
  limited to a range that must be given and not negative (as MuJoCo refuses). A joint force that `MjcfControl` computes
  at each step from the velocity the step starts with (MuJoCo's Euler takes actuator forces explicitly too).
* <general>: gaintype fixed or affine (gain = g0 + g1 length + g2 velocity, applied as a damper is; only without a
  stiffness or damping bias), dyntype none, integrator, filter or filterexact, biastype none or affine. With bias b1 !=
  0 it joins the drive's stiffness (target position), else with b2 != 0 its damping (target velocity), else it is a
  joint force.
* Activations (dyntype integrator: act' = ctrl; filter and filterexact: act' = (ctrl - act) / timeconst; <position
  timeconst> is filterexact, <cylinder timeconst> filter): the force takes act where it would take ctrl. `MjcfControl`
  keeps act per env and integrates it at the start of every step as MuJoCo's Euler does (act + h act', filterexact
  exactly, then clamped to actrange when actlimited; with actearly the force takes the updated act, else the one the
  step starts with). act starts at 0, or at a keyframe's act.
* A fixed tendon transmission (tendon="name" of a <tendon><fixed>, an artic fixed tendon, couplings.py): the tendon
  length is L = sum c_i q_i and joint i gets gear c_i f. The bias terms b1, b2 join the artic tendon's stiffness (-b1
  gear^2) and damping (-b2 gear^2), with its rest length kept where the tendon's own spring puts it; the ctrl term gear
  (gain ctrl + b0), clamped to forcerange, is applied as joint forces gear c_i f by `MjcfControl` (MuJoCo's Euler
  applies actuator forces explicitly too). A forcerange then bounds only that term (warned when the actuator also has
  stiffness or damping).

Several actuators on one joint add up into the dof's one drive: stiffness K = sum(-b1 gear^2), damping D = sum(-b2
gear^2), and targets chosen so that K (x - q) + D (v - qdot) is the sum of their forces. The joint's own spring and
damper are not in it: they are its PassiveParams, integrated as MuJoCo's Euler (dynamics/passive.py). What does not
combine exactly is reported: a forcerange on a drive actuator clamps the whole drive (the PhysX drive's max force, gear
* max(|lo|, |hi|)), so it is exact only for a symmetric range on a joint that actuator drives alone.

The drives are explicit, as MuJoCo's integrators apply actuator forces: DriveType.EXPLICIT under `integrator="Euler"`
(the force of the step's start state, clamped, applied as a joint force), EXPLICIT_STIFFNESS under implicitfast and
implicit (the same force, its damping then made implicit after the constraint solve with the joint's own, as
implicitfast's M + h D; dynamics/passive.py). PhysX's implicit drives (before 2026-11-29) were implicit in stiffness
too: stiff servos on light links (kp 40 on 2e-3 kg m^2 at 4 ms) ran 0.03 rad from MuJoCo's, now 2e-7.

* A spatial tendon transmission (tendon="name" of a <spatial>, spatial.py): any of the kinds above, and muscles
  (<muscle>, or <general> with gaintype/biastype/dyntype muscle, muscles.py). MuJoCo's force gain u + bias at the
  actuator length gear L and speed gear dL/dt (gain fixed, affine or muscle; bias none, affine or muscle), clamped to
  forcerange, is computed by `MjcfControl` on the host at every step from the step's initial state and applied along
  the tendon as link forces (explicit, as MuJoCo's Euler step). dampratio and inheritrange there are reported.

* A site transmission (site="name", refsite="name", a 6-vector gear) or a slider-crank (cranksite, slidersite,
  cranklength; site_actuators.py): the fixed or affine gain and affine bias of the kinds above, MuJoCo's wrench
  computed and applied by `MjcfControl` at every step.

Reported with one warning naming each actuator, and then inert (its ctrl column is read and ignored): transmissions
other than a hinge or slide joint, a tendon, a site or a slider-crank (ball and free joints), dynamics other than those
above (user), gaintype or biastype user, on a joint or fixed tendon a muscle, a muscle gain or an affine gain with a
stiffness or damping bias, negative stiffness (b1 > 0) or damping (b2 > 0), a muscle on a floating body without a
lengthrange (lengthrange.py), and the other actuator elements: plugin, ... An <adhesion> is MuJoCo's body transmission
(_adhesion: its force through the body's contacts, step_kernel._adhesion).

<cylinder area diameter bias timeconst> is MuJoCo's general actuator with gain area (pi d^2 / 4 when the diameter is
given), affine bias and a filter of time constant timeconst: mapped as such.

The control input that drives them, `MjcfControl`, is in control.py.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...description.articulation_joint import Drive
from ...description.mass_check import joint_space_inertia
from ...enums import ArticulationFlag, DriveType, Motion
from ..xml_values import MAX_MAGNITUDE
from .lengthrange import compute_lengthranges
from .muscles import padded_params, read_muscle, scale_by_acc0
from .report import and_more
from .site_actuators import read_site_transmission

if TYPE_CHECKING:
    from .loader import _Loader

__all__ = ["Actuator", "read_actuators"]

_SHORTCUTS = ("motor", "position", "velocity", "general", "cylinder", "intvelocity", "damper", "muscle")
_OTHER_TRANSMISSIONS = ("site", "body", "cranksite")
_DYNAMICS = ("none", "integrator", "filter", "filterexact", "muscle")  # activation dynamics MjcfControl integrates


@dataclass
class Actuator:
    """One MJCF actuator, in file order (its index is its ctrl column). `ctrlrange` / `forcerange` are None when
    not limited. Force = gain * ctrl + bias[0] + bias[1] * gear * q + bias[2] * gear * qdot; `supported` is False
    for an actuator artic reported and does not apply."""

    name: str
    kind: str  # the element: "motor", "position", "velocity", "general", ...
    joint: str | None  # the joint transmission
    gear: float = 1.0
    ctrlrange: tuple | None = None
    forcerange: tuple | None = None
    gain: float = 1.0
    bias: tuple = (0.0, 0.0, 0.0)
    supported: bool = True
    tendon: str | None = None  # the fixed-tendon transmission
    terms: tuple = ()  # (joint name, coefficient c_i) of a tendon transmission: joint i gets gear c_i f
    gain_slope: tuple = (0.0, 0.0)  # an affine gain's g1, g2: gain = gain + g1 * length + g2 * velocity
    dyn: str = "none"  # MuJoCo's dyntype; other than "none" the force takes the activation act for ctrl
    timeconst: float = 1.0  # [s] a filter's time constant (dynprm[0])
    actrange: tuple | None = None  # act's range when actlimited (the integration clamps to it)
    actearly: bool = False  # the force takes act after this step's update
    dynprm: tuple = (1.0, 0.0, 0.0)  # MuJoCo's dynprm[:3] (a muscle's tau_act, tau_deact [s], tausmooth)
    # a spatial-tendon transmission's force, computed on the host (muscles.py): MuJoCo's gain and bias types and
    # their parameters (gainprm, biasprm: 10 values each), and a muscle's lengthrange [m]
    gain_type: str = "fixed"
    bias_type: str = "none"
    gainprm: tuple = ()
    biasprm: tuple = ()
    lengthrange: tuple | None = None
    body: str | None = None  # an adhesion's body (MuJoCo's body transmission): force gain * ctrl through its contacts
    link: object = None  # that body's link (its own, fixed to its parent's when the body has no joint)
    site: object = None  # a site transmission (site_actuators.SiteTransmission): a wrench at a site, every step

    @property
    def has_act(self) -> bool:
        """True when MuJoCo keeps an activation for it (one act column, in actuator order; keyframes' act)."""
        return self.dyn != "none"


def _limited(v, act, a, which):
    """MuJoCo's ctrllimited/forcelimited: true, false, or auto (limited when the range is given)."""
    flag = v.choice(act, f"{which}limited", a.get(f"{which}limited", "auto"), ("true", "false", "auto"))
    rng = f"{which}range"
    if flag == "false" or (flag == "auto" and rng not in a):
        return None
    if rng not in a:
        raise v.fail(act, f"{which}limited='true' needs attribute {rng}; give the range or drop {which}limited")
    lo, hi = (float(x) for x in v.numbers(act, rng, 2, text=a[rng]))
    if lo > hi:
        raise v.fail(act, f"attribute {rng}='{a[rng]}': the lower bound exceeds the upper one")
    return (lo, hi)


def _gains(v, act, a):
    """(gain, (b0, b1, b2), (g1, g2)) of the element, or a reason it is not supported."""
    tag, flat = act.tag, (0.0, 0.0)
    if tag == "motor":
        return 1.0, (0.0, 0.0, 0.0), flat
    if tag in ("position", "intvelocity"):
        kp = v.number(act, "kp", 1.0, a.get("kp"), minimum=0.0)
        kv = v.number(act, "kv", 0.0, a.get("kv"), minimum=0.0)
        if "dampratio" in act.attrib and "kv" in act.attrib:
            raise v.fail(act, "gives both kv and dampratio; keep one (MuJoCo refuses both)")
        return kp, (0.0, -kp, -kv), flat
    if tag == "velocity":
        kv = v.number(act, "kv", 1.0, a.get("kv"), minimum=0.0)
        return kv, (0.0, 0.0, -kv), flat
    if tag == "damper":
        kv = v.number(act, "kv", 0.0, a.get("kv"), minimum=0.0)
        return 0.0, (0.0, 0.0, 0.0), (0.0, -kv)
    if tag == "cylinder":  # MuJoCo: gain area (or pi d^2 / 4), affine bias, a filter of time constant timeconst
        area = v.number(act, "area", 1.0, a.get("area"), minimum=0.0)
        if "diameter" in a:
            area = np.pi / 4.0 * v.number(act, "diameter", text=a["diameter"], minimum=0.0) ** 2
        return area, tuple(float(x) for x in v.numbers(act, "bias", 3, (0.0, 0.0, 0.0), a.get("bias"))), flat
    gt, bt = a.get("gaintype", "fixed"), a.get("biastype", "none")
    if gt not in ("fixed", "affine"):
        return f"gaintype='{gt}' is not supported (only fixed and affine)"
    if bt not in ("none", "affine"):
        return f"biastype='{bt}' is not supported (only none and affine)"
    gainprm = np.zeros(3)
    prm = v.numbers(act, "gainprm", (1, 10), (1.0,), a.get("gainprm"))[:3]
    gainprm[: len(prm)] = prm
    bias = np.zeros(3)
    if bt == "affine":
        prm = v.numbers(act, "biasprm", (1, 10), (0.0,), a.get("biasprm"))[:3]
        bias[: len(prm)] = prm
    slope = (float(gainprm[1]), float(gainprm[2])) if gt == "affine" else flat
    return float(gainprm[0]), tuple(float(x) for x in bias), slope


def _is_muscle(act, a) -> bool:
    return act.tag == "muscle" or "muscle" in (a.get("gaintype"), a.get("biastype"))


def _spatial_gains(v, act, a, rec) -> str | None:
    """The gain and bias of an actuator on a spatial tendon, whose force MjcfControl computes at each step
    (muscles.py): a muscle's parameters, or the fixed or affine gain and affine bias of the other kinds; the reason
    it is not supported, or None."""
    if _is_muscle(act, a):
        return read_muscle(v, act, a, rec)  # its force from acc0 when negative: read_actuators, scale_by_acc0
    for attr in ("dampratio", "inheritrange"):
        if attr in a and v.number(act, attr, text=a[attr]) != 0.0:
            return f"{attr} on a spatial tendon is not mapped (MuJoCo sets it from the tendon's Jacobian at qpos0)"
    gains = _gains(v, act, a)
    if isinstance(gains, str):
        return gains
    gain, bias, slope = gains
    rec.gain_type = "affine" if slope != (0.0, 0.0) else "fixed"
    rec.gainprm = padded_params((gain, *slope))
    rec.bias_type = "affine"
    rec.biasprm = padded_params(bias)
    return None


def _site_gains(loader, act, rec, gains, explicit) -> str | None:
    """Set a site actuator's gain, bias and gain slope from `gains` (_gains'); the reason it is not supported, or
    None. Its velocity terms are noted in `explicit` under an implicit integrator."""
    if isinstance(gains, str):
        return gains
    rec.gain, rec.bias, rec.gain_slope = gains
    size = max(abs(x) for x in (rec.gain, *rec.bias, *rec.gain_slope)) * float(np.max(np.abs(rec.site.gear)))
    if size > MAX_MAGNITUDE:  # a wrench float32 cannot carry (the link forces)
        raise loader.v.fail(act, f"gains times gear ({size:.3g}) exceed 1e+15; lower the gains or gear")
    if loader.opts.integrator.startswith("implicit") and (rec.bias[2] != 0.0 or rec.gain_slope[1] != 0.0):
        explicit.append(act)
    return None


def _damper_range(v, act, a):
    """A <damper>'s ctrlrange: MuJoCo limits its ctrl always and refuses a range that is missing or negative (the
    damping it scales would push)."""
    a = dict(a, ctrllimited="true")
    if "ctrlrange" not in a:
        raise v.fail(act, "a <damper> needs ctrlrange (MuJoCo limits its ctrl always); give e.g. ctrlrange='0 1'")
    rng = _limited(v, act, a, "ctrl")
    if rng[0] < 0.0:
        raise v.fail(act, f"ctrlrange='{a['ctrlrange']}' of a <damper> must not be negative (MuJoCo refuses it)")
    return rng


def _dynamics(v, act, a, rec):
    """Set rec's activation dynamics (dyn, timeconst, actrange, actearly) from the element; the reason it is not
    supported, or None."""
    tag = act.tag
    if tag == "intvelocity":
        rec.dyn = "integrator"
    elif tag == "position":
        rec.timeconst = v.number(act, "timeconst", 0.0, a.get("timeconst"), minimum=0.0)
        rec.dyn = "filterexact" if rec.timeconst > 0.0 else "none"
    elif tag == "cylinder":
        rec.timeconst = v.number(act, "timeconst", 1.0, a.get("timeconst"), minimum=0.0)
        rec.dyn = "filter"
    elif tag == "muscle":
        rec.dyn = "muscle"  # its dynprm: muscles.read_muscle
    elif tag == "general":
        rec.dyn = a.get("dyntype", "none")
        prm = np.zeros(3)
        given = v.numbers(act, "dynprm", (1, 10), (1.0,), a.get("dynprm"))[:3]
        prm[: len(given)] = given
        rec.timeconst, rec.dynprm = float(prm[0]), tuple(float(x) for x in prm)
    rec.actrange = _limited(v, act, a, "act")
    rec.actearly = v.choice(act, "actearly", a.get("actearly", "false"), ("true", "false")) == "true"
    if rec.dyn not in _DYNAMICS:
        return f"dyntype='{rec.dyn}' (actuator dynamics) is not supported"
    return None


def _adhesion(loader: _Loader, act: ET.Element, a: dict, name: str) -> Actuator:
    """MuJoCo's <adhesion>: a body transmission whose force gain * ctrl (ctrl >= 0: its ctrlrange must be) pulls
    the body towards what it touches, through its contacts (step_kernel._adhesion; MjcfControl writes the force
    into the link's `link_adhesion`). A body without a joint has a link of its own too (fixed to its parent's), so
    the contacts it pulls through are its own geoms', as MuJoCo's."""
    v = loader.v
    body = a.get("body")
    if body is None:
        raise v.fail(act, "an <adhesion> needs body='...', the body whose contacts it pulls through")
    if body not in loader.bodies or loader.bodies[body][1] is None:
        raise v.fail(act, f"body='{body}' names no body that moves (MuJoCo's adhesion acts on a body's contacts)")
    rec = Actuator(
        a.get("name", body),
        "adhesion",
        None,
        1.0,
        _limited(v, act, a, "ctrl"),
        _limited(v, act, a, "force"),
        gain=v.number(act, "gain", 1.0, a.get("gain"), minimum=0.0),
        body=body,
        link=loader.bodies[body][1],
    )
    if rec.ctrlrange is None or rec.ctrlrange[0] < 0.0:
        raise v.fail(
            act,
            "an adhesion needs a nonnegative ctrlrange (its force only pulls), as MuJoCo requires; "
            'give ctrlrange="0 1" for instance',
        )
    return rec


def read_actuators(loader: _Loader, el: ET.Element | None) -> None:
    """Read the <actuator> section `el` into loader.model.actuators and set the joints' drives and the tendons'
    springs (see the module docstring). `loader` is loader.py's _Loader: its XmlValues `v`, `_attrs` (class defaults)
    and `joint_names`; its articulations' fixed tendons are built already (couplings.py)."""
    for art in loader.model.articulations:  # MuJoCo's forcerange is a force; PhysX's default drive limit an impulse
        art.set_articulation_flag(ArticulationFlag.DRIVE_LIMITS_ARE_FORCES, True)
    if el is None:
        return
    v = loader.v
    tendons = {t.name: t for art in loader.model.articulations for t in art.get_fixed_tendons() if t.name}
    dropped = []
    acts = []
    inverse_inertia = {}  # id(articulation) -> (M^-1, dof index), for dampratio
    pending = []  # (muscle, spatial tendon, element) whose lengthrange MuJoCo's compiler would compute
    explicit = []  # site actuators whose velocity terms stay explicit under implicitfast
    for k, act in enumerate(el):
        a = loader._attrs(act, "main")
        name = a.get("name", f"actuator {k}")
        if act.tag == "adhesion":
            loader.model.actuators.append(_adhesion(loader, act, a, name))
            continue
        if act.tag not in _SHORTCUTS:  # plugin, newer kinds
            dropped.append((f"<{act.tag}> '{name}'", "this actuator type is not mapped"))
            loader.model.actuators.append(Actuator(name, act.tag, None, supported=False))
            continue
        jname = a.get("joint", a.get("jointinparent"))
        tname = a.get("tendon") if jname is None else None
        gear = float(v.numbers(act, "gear", (1, 6), (1.0,), a.get("gear"))[0])
        rec = Actuator(
            name if "name" in a else (jname or tname or name),
            act.tag,
            jname,
            gear,
            _limited(v, act, a, "ctrl") if act.tag != "damper" else _damper_range(v, act, a),
            _limited(v, act, a, "force"),
            tendon=tname,
        )
        loader.model.actuators.append(rec)
        reason = _dynamics(v, act, a, rec)
        other = [t for t in _OTHER_TRANSMISSIONS if t in a]
        spatial = tname in loader.model.spatial_tendons
        if reason is not None:
            pass
        elif spatial:
            reason = _spatial_gains(v, act, a, rec)
        elif ("site" in a or "cranksite" in a) and jname is None and tname is None:
            got = read_site_transmission(loader, act, a, _is_muscle(act, a))
            reason, rec.site = (got, None) if isinstance(got, str) else (None, got)
        elif _is_muscle(act, a):
            reason = "a muscle on a joint or a fixed tendon is not mapped (muscles on spatial tendons are)"
        elif tname is not None:
            if tname not in tendons:
                reason = f"tendon '{tname}' is not a fixed tendon that artic built (only those can be driven)"
            else:
                rec.terms = tuple(
                    (n.link.inbound_joint.name, float(n.coefficient))
                    for n in tendons[tname].tendon_joints[1:]
                    if n.coefficient != 0.0
                )
        elif jname is None:
            reason = (
                f"its {other[0]} transmission is not supported (only hinge and slide joints and fixed tendons)"
                if other
                else "it names no joint or tendon"
            )
        elif jname in loader.free_joint_names:
            reason = f"joint '{jname}' is a free joint (only hinge and slide joints)"
        elif jname not in loader.joint_names:
            raise v.fail(act, f"attribute joint='{jname}' names no joint of the model")
        elif len(loader.joint_names[jname][1].dof_axes()) != 1:
            reason = f"joint '{jname}' is a ball joint (only hinge and slide joints)"
        else:
            rec.terms = ((jname, 1.0),)
        if spatial and reason is None:  # forces computed on the host at every step (muscles.py)
            scale_by_acc0(rec, loader.model.spatial_tendons[tname])
            size = max(abs(x) for x in (*rec.gainprm[:3], *rec.biasprm[:3])) * abs(gear)
            if size > MAX_MAGNITUDE:  # a force float32 cannot carry (the tendon's link forces)
                raise v.fail(act, f"gains times gear ({size:.3g}) exceed 1e+15; lower the gains or gear")
            if _is_muscle(act, a) and (rec.lengthrange is None or not loader.lengthrange.useexisting):
                pending.append((rec, loader.model.spatial_tendons[tname], act))
            continue
        if rec.site is not None and reason is None:  # a wrench MjcfControl applies at every step (site_actuators)
            reason = _site_gains(loader, act, rec, _gains(v, act, a), explicit)
            if reason is None:
                continue
        gains = _gains(v, act, a)
        if reason is None and isinstance(gains, str):
            reason = gains
        if reason is None and gains[2] != (0.0, 0.0) and (gains[1][1] != 0.0 or gains[1][2] != 0.0):
            reason = "an affine gain with a stiffness or damping bias (biasprm[1:3]) is not supported on a joint"
        if reason is None and act.tag in ("position", "intvelocity"):
            gains, why = _position_extras(loader, act, a, rec, gains, inverse_inertia)
            reason = reason or why
        if reason is None:
            rec.gain, rec.bias, rec.gain_slope = gains
            if rec.bias[1] > 0.0 or rec.bias[2] > 0.0:
                reason = "a positive biasprm[1] or biasprm[2] (negative stiffness or damping) is not supported"
            gain = max(abs(rec.gain), *(abs(b) for b in rec.bias + rec.gain_slope))
            for what, x in (("gain times gear", gain * abs(gear)), ("gain times gear^2", gain * gear * gear)):
                if x > MAX_MAGNITUDE:  # the joint force per ctrl and the drive's gains
                    raise v.fail(act, f"{what} ({x:.3g}) exceeds 1e+15; lower the gains or gear")
        if reason is not None:
            rec.supported = False
            dropped.append((f"<{act.tag}> '{rec.name}'", reason))
            continue
        if tname is not None:
            _tendon_spring(loader, tendons[tname], rec, act)
        else:
            acts.append((rec, act))
    _set_drives(loader, acts)
    dropped += _lengthranges(loader, pending)
    _report_explicit(loader, explicit)
    if dropped:
        warnings.warn(
            f"{v.where(el)}: actuator(s) not supported and inert (their ctrl is ignored): "
            + "; ".join(f"{n}: {r}" for n, r in dropped),
            RuntimeWarning,
            stacklevel=4,
        )


def _report_explicit(loader, explicit) -> None:
    """One warning for the site actuators whose velocity terms MuJoCo's implicit integrators make implicit."""
    if explicit:
        v = loader.v
        warnings.warn(
            f"{v.where(explicit[0])}: under integrator='{loader.opts.integrator}' MuJoCo makes this site actuator's "
            "velocity terms (kv, biasprm[2], gainprm[2]) implicit; artic applies them explicitly, as under Euler"
            + and_more(v, explicit[1:]),
            RuntimeWarning,
            stacklevel=5,
        )


def _lengthranges(loader, pending) -> list:
    """Set the lengthrange of the muscles that need one as MuJoCo's compiler computes it (with uselimit a limited
    tendon's range, else lengthrange.py's simulation); returns (name, reason) of those left inert."""
    opts, dropped, simulate = loader.lengthrange, [], []
    for rec, tendon, _ in pending:
        if opts.mode == "none":
            rec.lengthrange = rec.lengthrange if rec.lengthrange is not None else (0.0, 0.0)
        elif opts.uselimit and tendon.range is not None:
            rec.lengthrange = tendon.range  # MuJoCo copies the tendon's range as it is (gear not applied)
        else:
            simulate.append((rec, tendon))
    for k, got in compute_lengthranges(loader.model, simulate, opts).items():
        rec = simulate[k][0]
        if isinstance(got, str):
            rec.supported = False
            dropped.append((f"<{rec.kind}> '{rec.name}'", f"{got}; give lengthrange (MuJoCo's actuator_lengthrange)"))
        else:
            rec.lengthrange = got
    for rec, _, _ in pending:
        if rec.supported and not rec.lengthrange[0] < rec.lengthrange[1]:
            rec.supported = False
            dropped.append((f"<{rec.kind}> '{rec.name}'", "no lengthrange (<lengthrange mode='none'>); give one"))
    return dropped


def _position_extras(loader, act, a, rec, gains, inverse_inertia):
    """A <position>'s compile-time attributes, as MuJoCo's compiler sets them at qpos0: dampratio z gives the damping
    kv = 2 z sqrt(kp m) for the transmission's effective mass m = 1 / (gear^2 c^T M^-1 c) (c: the joint's unit
    column, or a fixed tendon's coefficients; M the joint-space inertia with armature); inheritrange r makes the
    ctrlrange (an <intvelocity>'s actrange) the joint's range scaled by r about its middle. Returns (gains, None)
    or (gains, why unsupported)."""
    v = loader.v
    kp, bias, slope = gains
    # the element's own kv or dampratio wins over its class's, as in MuJoCo
    if "dampratio" in act.attrib or ("dampratio" in a and "kv" not in act.attrib):
        z = v.number(act, "dampratio", text=a["dampratio"], minimum=0.0)
        inverse_mass = _transmission_inverse_mass(loader, rec, inverse_inertia)
        if not inverse_mass > 0.0:
            return gains, "dampratio on a transmission nothing can move"
        bias = (bias[0], bias[1], -2.0 * z * np.sqrt(kp / inverse_mass) / abs(rec.gear))
    r = v.number(act, "inheritrange", 0.0, a.get("inheritrange"), minimum=0.0)
    if r > 0.0:
        if rec.joint is None:
            return (kp, bias, slope), "inheritrange on a tendon transmission is not mapped (only joints)"
        _, joint = loader.joint_names[rec.joint]
        if joint.get_motion(joint.dof_axes()[0]) != Motion.LIMITED:
            raise v.fail(act, f"inheritrange needs joint '{rec.joint}' to have a range (MuJoCo refuses it too)")
        limit = joint.get_limit_params(joint.dof_axes()[0])
        low, high = loader.ranges.get(id(joint), (limit.low, limit.high))  # the file's range, without its margin
        middle, half = 0.5 * (low + high), 0.5 * r * (high - low)
        if act.tag == "intvelocity":  # its position target is act: MuJoCo sets the activation's range
            rec.actrange = (middle - half, middle + half)
        else:
            rec.ctrlrange = (middle - half, middle + half)
    return (kp, bias, slope), None


def _transmission_inverse_mass(loader, rec, cache) -> float:
    """c^T M^-1 c of the actuator's transmission at the articulation's initial pose (mass_check.py's M); `cache`
    keeps each articulation's M^-1 and dof index."""
    terms = rec.terms  # (joint name, coefficient)
    art = loader.joint_names[terms[0][0]][0]
    if id(art) not in cache:
        m, dofs = joint_space_inertia(art)
        cache[id(art)] = (np.linalg.pinv(m), {(id(link), int(axis)): i for i, (link, axis) in enumerate(dofs)})
    minv, index = cache[id(art)]
    c = np.zeros(len(minv))
    for name, coef in terms:
        owner, joint = loader.joint_names[name]
        if owner is not art:
            return 0.0
        link = next(lk for lk in art.get_links()[1:] if lk.inbound_joint is joint)
        c[index[(id(link), int(joint.dof_axes()[0]))]] += coef
    return float(c @ minv @ c)


def _tendon_spring(loader, tendon, rec, act):
    """A fixed-tendon actuator's bias b1, b2 into the artic tendon's stiffness and damping (its own spring's rest
    length kept: k0 rest0 / (k0 + K)); the ctrl term is MjcfControl's (module docstring)."""
    k_add, d_add = -rec.bias[1] * rec.gear**2, -rec.bias[2] * rec.gear**2
    if k_add == 0.0 and d_add == 0.0:
        return
    k0 = tendon.stiffness
    with loader.v.context(act):
        tendon.rest_length = k0 * tendon.rest_length / (k0 + k_add) if k0 + k_add > 0.0 else tendon.rest_length
        tendon.stiffness = k0 + k_add
        tendon.damping = tendon.damping + d_add
    if rec.forcerange is not None:
        warnings.warn(
            f"{loader.v.where(act)}: forcerange bounds only the ctrl term gear (gain ctrl + b0) of this "
            "tendon actuator; its stiffness and damping act through the tendon's spring, unbounded",
            RuntimeWarning,
            stacklevel=5,
        )


def _set_drives(loader, acts):
    """Combine the drive actuators of each joint into the dof's one drive, targets set for ctrl = 0 (the joint's
    own spring and damper are its PassiveParams, outside the drive and so outside its force limit, as in
    MuJoCo)."""
    v = loader.v
    # MuJoCo's Euler applies actuator forces explicitly; implicitfast (and implicit) makes their damping implicit
    kind = DriveType.EXPLICIT_STIFFNESS if loader.opts.integrator.startswith("implicit") else DriveType.EXPLICIT
    approximate = []  # (actuator element, reasons) whose forcerange the drive bounds only approximately
    by_joint = {}
    for rec, act in acts:
        if rec.bias[1] != 0.0 or rec.bias[2] != 0.0:
            by_joint.setdefault(rec.joint, []).append((rec, act))
    for jname, group in by_joint.items():
        _, joint = loader.joint_names[jname]
        ax = joint.dof_axes()[0]
        stiffness = sum(-r.bias[1] * r.gear**2 for r, _ in group)
        damping = sum(-r.bias[2] * r.gear**2 for r, _ in group)
        x0 = sum(r.gear * r.bias[0] for r, _ in group if r.bias[1] != 0.0)
        v0 = sum(r.gear * r.bias[0] for r, _ in group if r.bias[1] == 0.0)
        max_force = 1e30
        joint_range = loader.model.joint_force_ranges.get(jname)
        if joint_range is not None:  # actuatorfrcrange: the total actuator force on the joint
            lo, hi = joint_range
            max_force = max(abs(lo), abs(hi))
            if lo != -hi:
                approximate.append((group[0][1], [f"joint '{jname}''s actuatorfrcrange: not symmetric"]))
        limited = [(r, act) for r, act in group if r.forcerange is not None]
        for r, act in limited:
            lo, hi = r.forcerange
            max_force = min(max_force, abs(r.gear) * max(abs(lo), abs(hi)))
            why = []
            if lo != -hi:
                why.append(f"the range is not symmetric; the drive clamps to +-{max(abs(lo), abs(hi)):g}")
            if len(group) > 1:
                why.append(f"joint '{jname}''s drive also carries other actuators, which the clamp limits too")
            if why:
                approximate.append((act, why))
        with v.context(group[0][1]):
            joint.set_drive_params(ax, Drive(stiffness, damping, max_force, kind))
            joint.set_drive_target(ax, x0 / stiffness if stiffness > 0.0 else 0.0)
            joint.set_drive_velocity(ax, v0 / damping if damping > 0.0 else 0.0)
    if approximate:
        act, why = approximate[0]
        warnings.warn(
            f"{v.where(act)}: forcerange is applied only approximately: {'; '.join(why)}"
            + and_more(v, [a for a, _ in approximate[1:]]),
            RuntimeWarning,
            stacklevel=5,
        )
