"""A synthetic subject for marker fitting: a 13-segment humanoid with known anchors and marker attachments, a known
motion (the humanoid as a floating articulation, its ball joints driven by PD drives towards smooth targets), and
its markers recorded with noise and soft-tissue wobble. Used by examples/marker_fit.py, `artic fit --demo` and the
tests, where the truth must be known."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..description.articulation_joint import Drive
from ..enums import CacheFlag, DriveType
from ..sim.scene import Scene
from .markers import MarkerSet
from .rig import marker_world
from .segments import Segment, SegmentModel

# name, parent, mass [kg], half extents of the box that gives its inertia [m], anchor in parent, anchor in self
_HUMANOID = [
    ("pelvis", None, 10.0, (0.10, 0.15, 0.08), None, None),
    ("torso", "pelvis", 20.0, (0.10, 0.16, 0.20), (0.0, 0.0, 0.08), (0.0, 0.0, -0.20)),
    ("head", "torso", 5.0, (0.09, 0.08, 0.11), (0.0, 0.0, 0.22), (0.0, 0.0, -0.10)),
    ("uarm_l", "torso", 2.0, (0.05, 0.05, 0.14), (0.0, 0.19, 0.17), (0.0, 0.0, 0.14)),
    ("farm_l", "uarm_l", 1.5, (0.04, 0.04, 0.13), (0.0, 0.0, -0.14), (0.0, 0.0, 0.13)),
    ("uarm_r", "torso", 2.0, (0.05, 0.05, 0.14), (0.0, -0.19, 0.17), (0.0, 0.0, 0.14)),
    ("farm_r", "uarm_r", 1.5, (0.04, 0.04, 0.13), (0.0, 0.0, -0.14), (0.0, 0.0, 0.13)),
    ("thigh_l", "pelvis", 8.0, (0.07, 0.07, 0.20), (0.0, 0.09, -0.06), (0.0, 0.0, 0.20)),
    ("shank_l", "thigh_l", 3.5, (0.05, 0.05, 0.20), (0.0, 0.0, -0.20), (0.0, 0.0, 0.20)),
    ("foot_l", "shank_l", 1.0, (0.10, 0.04, 0.03), (0.0, 0.0, -0.21), (-0.05, 0.0, 0.05)),
    ("thigh_r", "pelvis", 8.0, (0.07, 0.07, 0.20), (0.0, -0.09, -0.06), (0.0, 0.0, 0.20)),
    ("shank_r", "thigh_r", 3.5, (0.05, 0.05, 0.20), (0.0, 0.0, -0.20), (0.0, 0.0, 0.20)),
    ("foot_r", "shank_r", 1.0, (0.10, 0.04, 0.03), (0.0, 0.0, -0.21), (-0.05, 0.0, 0.05)),
]


# anatomical joints: elbows and knees flex about the lateral axis (y: the body faces +x), ankles are Cardan joints
# (dorsiflexion about the shank's y, then inversion about the foot's x)
_ANATOMY = {
    "farm_l": ("hinge", (0.0, 1.0, 0.0), None),
    "farm_r": ("hinge", (0.0, 1.0, 0.0), None),
    "shank_l": ("hinge", (0.0, 1.0, 0.0), None),
    "shank_r": ("hinge", (0.0, 1.0, 0.0), None),
    "foot_l": ("universal", (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)),
    "foot_r": ("universal", (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)),
}


def humanoid(root_position: ArrayLike = (0.0, 0.0, 1.0), anatomical: bool = False) -> SegmentModel:
    """The 13-segment humanoid (67 kg) in its reference pose: standing, facing +x, z up; 12 ball joints, or with
    `anatomical` hinged elbows and knees and universal ankles (6 ball joints left: neck, shoulders, hips, waist)."""
    segs = []
    for name, parent, mass, h, a_parent, a_child in _HUMANOID:
        h = np.asarray(h)
        inertia = mass / 3.0 * np.array([h[1] ** 2 + h[2] ** 2, h[0] ** 2 + h[2] ** 2, h[0] ** 2 + h[1] ** 2])
        joint, axis, axis2 = _ANATOMY[name] if anatomical and name in _ANATOMY else ("ball", None, None)
        segs.append(
            Segment(name, parent, mass, inertia, a_parent or np.zeros(3), a_child or np.zeros(3), joint, axis, axis2)
        )
    return SegmentModel(segs, root_position, "humanoid13" + ("_anatomical" if anatomical else ""))


def humanoid_markers(model: SegmentModel) -> tuple[list[str], list[str], np.ndarray]:
    """(names, segments, attachments (n, 3) [m]): three markers per segment on its box's surface, not collinear
    and off the segment's axis (as skin markers are)."""
    names, segs, att = [], [], []
    for name, _, _, h, _, _ in _HUMANOID:
        hx, hy, hz = h
        for tag, s in (
            ("front", (hx, 0.3 * hy, 0.5 * hz)),
            ("side", (0.2 * hx, hy if "_r" not in name else -hy, -0.3 * hz)),
            ("back", (-hx, -0.4 * hy, 0.1 * hz)),
        ):
            names.append(f"{name}_{tag}")
            segs.append(name)
            att.append(s)
    return names, segs, np.array(att)


@dataclass
class Motion:
    """A known motion of the articulation built from a segment model: per frame (T frames) the segment poses
    (T, S, 7), the generalized positions (root pose (T, 7), joint positions (T, n)), velocities (root (T, 6):
    linear, angular; joints (T, n)) and accelerations over the following step ((T - 1, 6 + n), root first)."""

    dt: float
    poses: np.ndarray
    root_pose: np.ndarray
    joint_position: np.ndarray
    root_velocity: np.ndarray
    joint_velocity: np.ndarray
    acceleration: np.ndarray


def simulate_motion(
    model: SegmentModel,
    seconds: float = 1.0,
    rate: float = 200.0,
    amplitude: float = 0.5,
    seed: int = 0,
    gravity: ArrayLike = (0.0, 0.0, -9.81),
) -> Motion:
    """Free-floating motion of the model's articulation: every joint axis is driven (implicit PD, stiffness
    400 N m/rad, damping 40 N m s/rad, acceleration type) towards amplitude * sin(w t + phase) with random w in
    [2, 6] rad/s; the root starts at rest in the reference pose and the body falls freely (no ground)."""
    rng = np.random.default_rng(seed)
    art, links = model.to_articulation()
    for joint, axis in art.dof_list():
        joint.set_drive_params(axis, Drive(400.0, 40.0, 1e9, DriveType.ACCELERATION))
    order, _ = SegmentModel.articulation_order(links)
    scene = Scene(1, gravity=gravity)
    scene.add_articulation(art)
    n = art.dof_count
    w, phase = rng.uniform(2.0, 6.0, n), rng.uniform(0.0, 2 * np.pi, n)
    steps = int(round(seconds * rate))
    dt = 1.0 / rate
    cache = art.create_cache()
    out = {k: [] for k in ("poses", "root_pose", "q", "root_v", "qd", "acc")}
    flags = CacheFlag.ALL
    for t in range(steps + 1):
        art.copy_internal_state_to_cache(cache, flags)
        out["poses"].append(scene.get_link_poses(art)[0, order].astype(np.float64))
        out["root_pose"].append(cache.root_transform[0].astype(np.float64))
        out["q"].append(cache.joint_position[0].astype(np.float64))
        out["root_v"].append(np.concatenate([cache.root_linear_velocity[0], cache.root_angular_velocity[0]]))
        out["qd"].append(cache.joint_velocity[0].astype(np.float64))
        if t == steps:
            break
        cache.joint_target_positions[0] = amplitude * np.sin(w * (t * dt) + phase) - amplitude * np.sin(phase)
        art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.ACCELERATION | CacheFlag.ROOT_VELOCITIES)
        v1 = np.concatenate([cache.root_linear_velocity[0], cache.root_angular_velocity[0]])
        out["acc"].append(np.concatenate([(v1 - out["root_v"][-1]) / dt, cache.joint_acceleration[0]]))
    return Motion(
        dt,
        np.array(out["poses"]),
        np.array(out["root_pose"]),
        np.array(out["q"]),
        np.array(out["root_v"], np.float64),
        np.array(out["qd"]),
        np.array(out["acc"], np.float64),
    )


def record_markers(
    motion: Motion,
    segment_of: ArrayLike,
    attachments: ArrayLike,
    names: Iterable[str],
    segments: Iterable[str],
    noise: float = 0.0,
    wobble: float = 0.0,
    seed: int = 1,
) -> MarkerSet:
    """Markers of a known motion: each attachment point's world position per frame, plus white noise of standard
    deviation `noise` [m] and soft-tissue wobble: a smooth displacement per marker (sum of two sines, amplitude
    `wobble` [m] each axis) that moves with the skin, not the bone."""
    rng = np.random.default_rng(seed)
    p = marker_world(motion.poses, np.asarray(segment_of), np.asarray(attachments))
    t = np.arange(len(p))[:, None, None] * motion.dt
    if wobble:
        f = rng.uniform(1.0, 4.0, (2,) + p.shape[1:])
        ph = rng.uniform(0.0, 2 * np.pi, (2,) + p.shape[1:])
        p = p + 0.5 * wobble * (np.sin(2 * np.pi * f[0] * t + ph[0]) + np.sin(2 * np.pi * f[1] * t + ph[1]))
    if noise:
        p = p + rng.normal(0.0, noise, p.shape)
    return MarkerSet(list(names), list(segments), p, 1.0 / motion.dt)
