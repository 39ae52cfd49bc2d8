"""MuJoCo's compile-time muscle lengthrange (its `<compiler><lengthrange>` and mj_setLengthRange), for muscles that
do not give one: the range of lengths the actuator reaches when pulled and pushed as hard as the model allows.

MuJoCo simulates each such actuator twice from qpos0, with contacts, gravity, springs, dampers, friction loss and
actuation disabled (limits and equalities acting), at the lengthrange's own time step: at every step the velocities
decay by exp(-h / timeconst) and the generalized force s moment is applied, moment = gear J^T and s = -+accel /
|M^-1 moment| (the force that accelerates the actuator at `accel`), capped at `maxforce`; over the last `interval`
of `inttotal` seconds the lengths' extremes are kept: the shortest when pulled, the longest when pushed. A side that
still moves by more than `tolrange` of the range is an error in MuJoCo, and reported here.

artic runs the same simulation on a copy of the model, every actuator and side an env of one scene: the force is the
tendon's point forces (spatial.py) scaled by s, which is s moment in joint space, and |M^-1 moment| comes from the
copy's mass matrix and generalized external force. Fixed-base articulations only: a tendon that moves a floating
root has no bounded range in this simulation (MuJoCo's would not converge either), and is reported.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...description.articulation_joint import Drive, FrictionParams, PassiveParams
from ...enums import CacheFlag
from ...errors import ArticError
from .options import disable_contacts
from .spatial import TendonFrames, TendonSet

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from ..xml_values import XmlValues
    from .loader import MjcfModel


@dataclass
class LengthRangeOptions:
    """`<compiler><lengthrange>`, MuJoCo's defaults."""

    mode: str = "muscle"  # none, muscle, muscleuser, all: which actuators get one (artic uses it for muscles)
    useexisting: bool = True
    uselimit: bool = False  # take a limited tendon's range instead of simulating
    accel: float = 20.0  # [m/s^2 or rad/s^2] the actuator acceleration the force aims for
    maxforce: float = 0.0  # [N] cap on |force| in joint space (0: none)
    timeconst: float = 1.0  # [s] velocity decay
    timestep: float = 0.01  # [s]
    inttotal: float = 10.0  # [s] simulated per side
    interval: float = 2.0  # [s] the last part of it, over which the extremes are kept
    tolrange: float = 0.05  # convergence: each side's spread over that interval, as a share of the range


def read_lengthrange_options(v: XmlValues, root: ET.Element) -> LengthRangeOptions:
    """The `<compiler><lengthrange>` options (every occurrence, the last one given winning, as MuJoCo merges)."""
    opts = LengthRangeOptions()
    for el in root.findall("compiler/lengthrange"):
        a = el.attrib
        if "mode" in a:
            opts.mode = v.choice(el, "mode", a["mode"], ("none", "muscle", "muscleuser", "all"))
        for flag in ("useexisting", "uselimit"):
            if flag in a:
                setattr(opts, flag, v.choice(el, flag, a[flag], ("true", "false")) == "true")
        for key in ("accel", "maxforce", "timeconst", "timestep", "inttotal", "interval", "tolrange"):
            if key in a:
                setattr(opts, key, v.number(el, key, text=a[key], minimum=0.0))
    if opts.timestep <= 0.0 or opts.inttotal <= 0.0 or opts.interval > opts.inttotal:
        raise v.fail(
            root.find("compiler/lengthrange"), "lengthrange needs timestep > 0, inttotal > 0, interval <= inttotal"
        )
    return opts


def compute_lengthranges(model: MjcfModel, pending: list, opts: LengthRangeOptions) -> dict:
    """{index into `pending`: (low, high) [m] or the reason there is none} for `pending` [(actuator, spatial
    tendon)]; the model itself is not changed (its copy is simulated)."""
    out = {}
    todo = []
    for k, (_, tendon) in enumerate(pending):
        if any(not lk.articulation.fix_base and not lk.articulation._kinematic for lk in TendonSet([tendon]).links):
            out[k] = "its tendon moves a floating root, which has no bounded lengthrange simulation"
        else:
            todo.append(k)
    if not todo:
        return out
    gears = [pending[k][0].gear for k in todo]
    try:
        with warnings.catch_warnings():
            # what the copy's scene says (mass repairs, penetration) the model's own scene says again when it is
            # added; a simulation that fails is reported below, per muscle
            warnings.simplefilter("ignore")
            low, high = _simulate(model, [pending[k][1] for k in todo], gears, opts)
    except ArticError as e:  # a state that left what the cache accepts
        low = high = np.full(2 * len(todo), np.nan)
        failure = str(e)
    else:
        failure = None
    for i, k in enumerate(todo):
        lo, hi = low[2 * i], high[2 * i + 1]
        spread = max(high[2 * i] - low[2 * i], high[2 * i + 1] - low[2 * i + 1])
        if failure is not None:
            out[k] = f"its lengthrange simulation failed ({failure})"
        elif not np.isfinite(lo) or not np.isfinite(hi) or not lo < hi:
            out[k] = f"its lengthrange simulation gave no range ({lo:g}, {hi:g})"
        elif spread > opts.tolrange * (hi - lo):
            out[k] = f"its lengthrange simulation did not settle (the ends moved {spread:.3g} within the last interval)"
        else:
            out[k] = (float(lo), float(hi))
    return out


def _simulate(model: MjcfModel, tendons: list, gears: list, opts: LengthRangeOptions) -> tuple[np.ndarray, np.ndarray]:
    """(lowest, highest) actuator length over the kept interval per env (env 2 i + side: tendon i pulled, side 0, or
    pushed, side 1), simulated on a copy of the model (module docstring)."""
    from ...sim.scene import Scene

    # one copy: the tendons' links are the copied articulations' links, the joints join the copied bodies
    mocap = list(model.mocap_bodies.values())
    arts, joints, tendons, mocap = copy.deepcopy((model.articulations, model.joints, tendons, mocap))
    for art in arts:
        _disable_forces(art)
    for body in mocap:  # held where they are (kinematic), as MuJoCo's mocap bodies at qpos0
        for shape in body.link.shapes:
            shape.collision_group = shape.collision_mask = 0
    envs = 2 * len(tendons)
    scene = Scene(envs, gravity=(0.0, 0.0, 0.0), solver_type=model.solver_type)
    for art in arts:
        scene.add_articulation(art)
    for body in mocap:
        scene.add_actor(body)
    for j in joints:
        scene.add_joint(j)
    tset = TendonSet(tendons)
    frames = TendonFrames(scene, tset)
    gear = np.repeat(gears, 2)
    column = np.repeat(np.arange(len(tendons)), 2)
    sign = np.tile([-1.0, 1.0], len(tendons))
    caches = {id(a): a.create_cache() for a in arts}
    steps = int(np.ceil(opts.inttotal / opts.timestep - 1e-9))
    keep_from = int(np.floor((opts.inttotal - opts.interval) / opts.timestep))
    low, high = np.full(envs, np.inf), np.full(envs, -np.inf)
    decay = np.exp(-opts.timestep / max(0.01, opts.timeconst))
    rows = np.arange(envs)
    for step in range(steps):
        for art in arts:  # the velocities decay before each step
            cache = caches[id(art)]
            art.copy_internal_state_to_cache(cache, CacheFlag.VELOCITY)
            cache.joint_velocity *= decay
            art.apply_cache(cache, CacheFlag.VELOCITY)
        pose, _ = frames.read()
        length, points, dirs, _ = tset.evaluate(pose)
        unit = np.zeros((envs, len(tendons)))
        unit[rows, column] = gear  # the unit actuator force: gear times a unit tension
        force, torque = tset.forces(pose, points, dirs, unit)
        response, moment = _norms(arts, caches, tset, force, torque)
        scale = sign * opts.accel / np.maximum(1e-15, response)
        if opts.maxforce > 0.0:  # |s moment| at most maxforce
            cap = opts.maxforce / np.maximum(1e-15, moment)
            scale = np.clip(scale, -cap, cap)
        frames.apply(force * scale[:, None, None], torque * scale[:, None, None])
        if step >= keep_from:
            now = gear * length[rows, column]
            low, high = np.minimum(low, now), np.maximum(high, now)
        scene.step(opts.timestep)
    return low, high


def _norms(arts, caches, tset, force, torque) -> tuple[np.ndarray, np.ndarray]:
    """(|M^-1 moment|, |moment|) per env, over every articulation: the joint-space acceleration and force of the
    unit actuator force given as link forces and torques (E, n + 1, 3)."""
    acc2, moment2 = np.zeros(len(force)), np.zeros(len(force))
    for art in arts:
        rows = [k for k, lk in enumerate(tset.links) if lk.articulation is art]
        if not rows:
            continue
        cache = caches[id(art)]
        low = [tset.links[k].link_index for k in rows]
        cache.external_forces[:] = 0.0
        cache.external_forces[:, low, :3] = force[:, rows]
        cache.external_forces[:, low, 3:] = torque[:, rows]
        art.compute_generalized_external_force(cache)
        moment = -cache.joint_force.astype(np.float64)  # PhysX's sign: the force that counteracts them
        art.compute_mass_matrix(cache)
        acc = np.linalg.solve(cache.mass_matrix.astype(np.float64), moment[..., None])[..., 0]
        acc2 += np.sum(acc**2, axis=1)
        moment2 += np.sum(moment**2, axis=1)
    return np.sqrt(acc2), np.sqrt(moment2)


def _disable_forces(art) -> None:
    """MuJoCo's lengthrange options on the copy: no contacts, springs, dampers, fluid, friction loss or actuation."""
    art.root_damping = 0.0
    art.fluid = None
    for link in art.get_links():
        disable_contacts(link)
        joint = link.inbound_joint
        if joint is None:
            continue
        for ax in joint.dof_axes():
            joint.set_passive_params(ax, PassiveParams())
            joint.set_friction_params(ax, FrictionParams())
            joint.set_drive_params(ax, Drive())
    for tendon in art.get_fixed_tendons():
        tendon.stiffness = 0.0
        tendon.damping = 0.0
