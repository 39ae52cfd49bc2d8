"""Tracking markers with soft constraints: constraints as controllers (the ODE paper,
section S1).

The fitted segment model (maximal coordinates, rig.py) is simulated with gravity while its markers move along the
recorded trajectories as kinematic bodies; the soft marker constraints pull it along as implicit PD controllers.
What the markers applied is the motion's actuation: mapped into the articulation's generalized coordinates,
Q = sum over segments of J_i^T (f_i, tau_i) (marker forces and torques about each COM), its joint part is the joint
torques that produce the tracked motion and its root part the residual force the body could not produce itself
(M(q) qdd + C + g = Q by virtual work, the ball joints' own constraint forces doing no work). Joint angles are the
ball joints' coordinates, joint constraint forces what each ball joint transmitted.

Before tracking, the markers are low-passed (filtering.py: zero-lag Butterworth, 6 Hz by default), since noise
differentiated twice swamps the torques; without the filter, a warning says when the noise the data carries would
dominate them. A marker that reappears after a gap starts where its attachment point is (rig.py), so it does not
yank its segment; a segment with no marker in a frame is carried by its joints, counted in `markers_seen`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..enums import CacheFlag, SolverType
from ..errors import ValidationError
from ..math.np_spatial import quats_conj, quats_mul, quats_rotate, quats_to_rotvec
from ..sim.scene import Scene
from .filtering import DEFAULT_CUTOFF, acceleration_noise, lowpass_markers, noise_estimate
from .fit import first_guess
from .markers import MarkerSet
from .rig import MarkerRig, marker_world
from .segment_joints import axes_in_child, coordinates, joint_rotation
from .segments import SegmentModel


@dataclass
class TrackResult:
    """Per frame (T frames, S segments, J joints, n markers):
    * `poses` (T, S, 7) segment COM poses (px, py, pz, qx, qy, qz, qw), world;
    * `joint_angles` (T, J, 3) rotation vector of R_parent^T R_child [rad]: zero where child and parent are as in
      the model's reference pose (for a model re-based on a static trial, `neutral_at`, as in that trial);
    * `joint_torques` (T, J, 3) the torque each ball joint's actuation applies to its child [N m], in the CHILD
      segment's axes (the generalized force of the articulation's spherical dofs); `torques_in` gives them in the
      parent's axes or the world's;
    * `reaction_forces` (T, J, 3) inverse dynamics' joint reaction: the force the parent applies to the child
      through the joint [N], world, sum over the child's subtree of m (a - g) (no contact with the ground: the
      subtree's only external force is gravity), from the tracked COM accelerations;
    * `joint_forces` (T, J, 3) what each soft ball joint of the tracking rig transmitted to its child [N], world:
      the joints' share of the load, the markers carrying the rest (so not the reaction force);
    * `marker_forces` (T, n, 3) force each marker applied to its segment [N], world;
    * `residual` (T, 6) the root's generalized force (force [N], torque about the root COM [N m], world): what the
      body could not produce itself;
    * `marker_error` (T, n) distance from each marker to its attachment point [m] (NaN when missing);
    * `markers_seen` (T, S) markers present per segment: 0 means the segment was carried by its joints alone.
    Frame t's forces act over the step from frame t to t + 1 (the last frame's are zero). `cutoff` is the low-pass
    applied to the markers [Hz] (None: unfiltered)."""

    dt: float
    poses: np.ndarray
    joint_angles: np.ndarray
    joint_forces: np.ndarray
    marker_forces: np.ndarray
    joint_torques: np.ndarray
    residual: np.ndarray
    marker_error: np.ndarray
    reaction_forces: np.ndarray | None = None
    markers_seen: np.ndarray | None = None
    cutoff: float | None = None
    parents: np.ndarray | None = None  # (J,) segment index of each joint's parent

    def torques_in(self, frame: str = "child") -> np.ndarray:
        """(T, J, 3) joint_torques [N m] in the child's axes ("child", as stored), the parent's ("parent") or the
        world's ("world")."""
        if frame not in ("child", "parent", "world"):
            raise ValidationError(f"TrackResult.torques_in: frame must be 'child', 'parent' or 'world', got {frame!r}")
        if frame == "child":
            return self.joint_torques.copy()
        world = quats_rotate(self.poses[:, 1:, 3:], self.joint_torques)
        if frame == "world":
            return world
        return quats_rotate(quats_conj(self.poses[:, self.parents, 3:]), world)


def relative_rotations(model: SegmentModel, poses: np.ndarray) -> np.ndarray:
    """(..., J, 3) rotation vector of R_parent^T R_child for segment poses (..., S, 7): a ball joint's coordinates
    (the articulation's spherical joint positions, twist, swing1, swing2 about the parent's x, y, z), and for every
    joint type the rotation between the two segments."""
    par = model.parent_index()[1:]
    return quats_to_rotvec(quats_mul(quats_conj(poses[..., par, 3:]), poses[..., 1:, 3:]))


def joint_coordinates(model: SegmentModel, poses: np.ndarray) -> list[np.ndarray]:
    """Per joint, its coordinates (..., k) [rad] for segment poses (..., S, 7): a ball joint's rotation vector
    (k = 3), a hinge's angle (1), a universal joint's roll and pitch (2) (segment_joints.py)."""
    par = model.parent_index()
    out = []
    for i, seg in enumerate(model.segments[1:], start=1):
        qp, qc = poses[..., par[i], 3:], poses[..., i, 3:]
        out.append(coordinates(seg.joint, joint_rotation(seg.frame_in_parent, seg.frame_in_child, qp, qc), qp, qc))
    return out


class ArticulationEvaluator:
    """The segment model as an articulation in a scene of T envs (one per frame): generalized forces of external
    wrenches and inverse dynamics at given poses, every frame in one call."""

    def __init__(self, model: SegmentModel, frames: int):
        self.model = model
        self.art, links = model.to_articulation()
        self.order, self.dofs = SegmentModel.articulation_order(links)
        self.scene = Scene(frames, gravity=(0.0, 0.0, -9.81))
        self.scene.add_articulation(self.art)
        self.cache = self.art.create_cache()

    def set_poses(self, poses: np.ndarray) -> None:
        """Pose env t as frame t of `poses` (T, S, 7), world segment poses (px, py, pz, qx, qy, qz, qw): the root's
        transform and each joint's coordinates (segment_joints.py; a hinge or universal joint's part of the
        relative rotation that its axes cannot take is left out)."""
        c = self.cache
        c.root_transform[:] = poses[:, 0]
        c.joint_position[:] = 0.0
        for idx, coords in zip(self.dofs, joint_coordinates(self.model, poses)):
            c.joint_position[:, idx] = coords
        self._poses = poses
        self.art.apply_cache(c, CacheFlag.ROOT_TRANSFORM | CacheFlag.POSITION)

    def _torques(self, q: np.ndarray) -> np.ndarray:
        """(T, J, 3) per joint, the generalized forces q (T, n) of its coordinates as one torque in the child's
        axes: the sum of each coordinate's force times its axis (a ball joint's x, y, z; a hinge's axis; a
        universal joint's two perpendicular axes)."""
        par = self.model.parent_index()
        out = np.zeros((len(q), len(self.dofs), 3))
        for j, (seg, idx) in enumerate(zip(self.model.segments[1:], self.dofs)):
            axes = axes_in_child(
                seg.joint,
                seg.frame_in_parent,
                seg.frame_in_child,
                self._poses[:, par[j + 1], 3:],
                self._poses[:, j + 1, 3:],
            )
            out[:, j] = np.einsum("tk,tki->ti", q[:, idx], axes)
        return out

    def generalized_force(self, forces: np.ndarray, torques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(root (T, 6), joints (T, J, 3)) generalized force J^T F of per-segment world forces and torques about the
        COMs ((T, S, 3) each), at the poses set last."""
        c = self.cache
        c.external_forces[:] = 0.0
        c.external_forces[:, self.order, :3] = forces
        c.external_forces[:, self.order, 3:] = torques
        self.art.compute_generalized_external_force(c)  # -J^T F: the force that counteracts them
        return -c.root_force.astype(np.float64), self._torques(-c.joint_force.astype(np.float64))

    def inverse_dynamics(
        self, root_velocity: np.ndarray, joint_velocity: np.ndarray, acceleration: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(root (T, 6), joints (T, J, 3)): M a + C(q, v) v + g, the generalized force that produces accelerations
        `acceleration` (T, 6 + n: root linear, angular, then the dofs in cache order) at velocities (root (T, 6),
        joints (T, n)), gravity included, at the poses set last."""
        c = self.cache
        c.root_linear_velocity[:], c.root_angular_velocity[:] = root_velocity[:, :3], root_velocity[:, 3:]
        c.joint_velocity[:] = joint_velocity
        self.art.apply_cache(c, CacheFlag.VELOCITY | CacheFlag.ROOT_VELOCITIES)
        c.root_linear_acceleration[:], c.root_angular_acceleration[:] = acceleration[:, :3], acceleration[:, 3:6]
        c.joint_acceleration[:] = acceleration[:, 6:]
        self.art.compute_joint_force(c)
        root, joints = c.root_force.astype(np.float64), c.joint_force.astype(np.float64)
        self.art.compute_gravity_compensation(c)  # floating base: (T, 6 + n), root first
        gc = c.gravity_compensation_force.astype(np.float64)
        root, joints = root + gc[:, :6], joints + gc[:, 6:]
        return root, self._torques(joints)


def _initial_velocity(p0: np.ndarray, p1: np.ndarray, dt: float) -> np.ndarray:
    """(S, 6) COM linear and angular velocities that carry poses p0 to p1 (S, 7) in dt."""
    lin = (p1[:, :3] - p0[:, :3]) / dt
    ang = quats_to_rotvec(quats_mul(p1[:, 3:], quats_conj(p0[:, 3:]))) / dt
    return np.concatenate([lin, ang], axis=1)


def track_markers(
    model: SegmentModel,
    markers: MarkerSet,
    attachments: ArrayLike,
    joint_erp_cfm: tuple[float, float] = (0.2, 1e-5),
    marker_erp_cfm: tuple[float, float] = (0.2, 1e-4),
    gravity: ArrayLike = (0.0, 0.0, -9.81),
    iterations: int = 32,
    solver_type: SolverType | int = SolverType.PGS,
    cutoff: float | None = DEFAULT_CUTOFF,
) -> TrackResult:
    """Drive the model through the marker trajectories, one step per frame (dt = 1 / markers.rate), and report what
    it took (TrackResult). The markers are first low-passed at `cutoff` [Hz] (zero-lag fourth-order Butterworth,
    filtering.py; None or 0 tracks them as given, with a warning if their noise would dominate the torques). The
    model starts at the poses that best fit the first two frames (Kabsch per segment, from the attachments), moving
    at the velocity between them."""
    options = (joint_erp_cfm, marker_erp_cfm, gravity, iterations, solver_type, cutoff)
    return track_trials(model, [markers], attachments, *options)[0]


def track_trials(
    model: SegmentModel,
    trials: Sequence[MarkerSet],
    attachments: ArrayLike,
    joint_erp_cfm: tuple[float, float] = (0.2, 1e-5),
    marker_erp_cfm: tuple[float, float] = (0.2, 1e-4),
    gravity: ArrayLike = (0.0, 0.0, -9.81),
    iterations: int = 32,
    solver_type: SolverType | int = SolverType.PGS,
    cutoff: float | None = DEFAULT_CUTOFF,
) -> list[TrackResult]:
    """track_markers for several trials of one subject at once, one env per trial (same markers and rate; lengths
    may differ): one scene steps them all, which costs little more than one trial on a CPU with several cores or a
    GPU. Each result equals what track_markers gives for its trial alone."""
    trials = list(trials)
    if not trials or not all(isinstance(m, MarkerSet) for m in trials):
        raise ValidationError("track_trials: trials must be a non-empty list of MarkerSets")
    first = trials[0]
    for k, m in enumerate(trials):
        if m.names != first.names or m.segments != first.segments or m.rate != first.rate:
            raise ValidationError(
                f"track_trials: trial {k} has other markers or another rate than trial 0; trials tracked together "
                "share the model's markers (names and segments, in one order) and the frame rate"
            )
        m.check_model(model)
        if m.frames < 2:
            raise ValidationError(
                f"track_markers: the recording has {m.frames} frame; tracking steps from frame to frame and needs "
                "at least 2"
            )
    _warn_unmarked(model, first)
    if cutoff:
        trials = [lowpass_markers(m, cutoff) for m in trials]
    else:
        for m in trials:
            _warn_noise(m)
        cutoff = None
    s = np.asarray(attachments, float)
    if s.shape != (first.count, 3) or not np.all(np.isfinite(s)):
        raise ValidationError(f"track_markers: attachments must be finite, of shape ({first.count}, 3), got {s.shape}")
    lengths = [m.frames for m in trials]
    e, t_count, n = len(trials), max(lengths), first.count
    p = np.full((e, t_count, n, 3), np.nan)  # a trial that ended has no markers: its env runs on, ignored
    for k, m in enumerate(trials):
        p[k, : m.frames] = m.positions
    poses, jf, mf, seg_f, seg_t = _run(
        model, first, s, p, (joint_erp_cfm, marker_erp_cfm, gravity, iterations, solver_type)
    )
    segment_of = np.array([model.index(x) for x in first.segments])
    dt = 1.0 / first.rate
    out = []
    for k, (m, t_k) in enumerate(zip(trials, lengths)):
        err = np.linalg.norm(m.positions - marker_world(poses[k, :t_k], segment_of, s), axis=2)
        ev = ArticulationEvaluator(model, t_k)
        ev.set_poses(poses[k, :t_k])
        residual, torques = ev.generalized_force(seg_f[k, :t_k], seg_t[k, :t_k])
        seen = np.zeros((t_k, len(model.segments)), int)
        np.add.at(seen, (slice(None), segment_of), m.present().astype(int))
        jf[k, t_k - 1] = mf[k, t_k - 1] = 0.0  # the last frame's forces act over no step
        out.append(
            TrackResult(
                dt,
                poses[k, :t_k],
                relative_rotations(model, poses[k, :t_k]),
                jf[k, :t_k],
                mf[k, :t_k],
                torques.reshape(t_k, -1, 3),
                residual,
                err,
                reaction_forces(model, poses[k, :t_k], dt, gravity),
                seen,
                cutoff,
                model.parent_index()[1:],
            )
        )
    return out


def _run(model: SegmentModel, markers: MarkerSet, s: np.ndarray, p: np.ndarray, options: tuple) -> tuple:
    """Step the rig through marker positions p (E, T, n, 3), one env per trial: per env and frame the segment
    poses (E, T, S, 7), the joints' forces (E, T, J, 3), the markers' forces (E, T, n, 3) and the markers' forces
    and torques summed per segment (E, T, S, 3) each."""
    e, t_count, n = p.shape[:3]
    segment_of = np.array([model.index(x) for x in markers.segments])
    dt = 1.0 / markers.rate
    rig = MarkerRig(model, markers, s, e, *options)
    g0, g1 = first_guess(model, segment_of, s, p[:, 0]), first_guess(model, segment_of, s, p[:, 1])
    rig.set_state(g0, np.stack([_initial_velocity(a, b, dt) for a, b in zip(g0, g1)]))
    rig.place_markers(p[:, 0])
    n_seg, n_j = len(model.segments), len(model.segments) - 1
    poses = np.zeros((e, t_count, n_seg, 7))
    jf = np.zeros((e, t_count, n_j, 3))
    mf = np.zeros((e, t_count, n, 3))
    seg_f = np.zeros((e, t_count, n_seg, 3))
    seg_t = np.zeros((e, t_count, n_seg, 3))
    for t in range(t_count):
        poses[:, t] = rig.poses()
        if t + 1 == t_count:
            break
        rig.place_markers(p[:, t + 1], move=True)
        rig.step(dt)
        f, tau = rig.marker_forces()
        mf[:, t] = f
        np.add.at(seg_f[:, t], (slice(None), segment_of), f)  # every env's markers summed per segment at once
        np.add.at(seg_t[:, t], (slice(None), segment_of), tau)
        if n_j:
            jf[:, t] = rig.joint_forces()
    return poses, jf, mf, seg_f, seg_t


def reaction_forces(
    model: SegmentModel, poses: np.ndarray, dt: float, gravity: ArrayLike = (0.0, 0.0, -9.81)
) -> np.ndarray:
    """(T, J, 3) inverse dynamics' reaction force of each joint [N], world: the force the parent applies to the
    child, sum over the child's subtree of m (a - g), with the COM accelerations a of poses (T, S, 7) by central
    differences (one-sided at the ends). Ground contact is not modelled: gravity is the only external force."""
    t_count = len(poses)
    if t_count < 3:
        return np.zeros((t_count, len(model.segments) - 1, 3))
    x = poses[:, :, :3]
    acc = np.gradient(np.gradient(x, dt, axis=0), dt, axis=0)
    own = np.array([seg.mass for seg in model.segments])[None, :, None] * (acc - np.asarray(gravity, float))
    subtree = own.copy()
    parents = model.parent_index()
    for i in range(len(model.segments) - 1, 0, -1):  # children come after their parents: sum leaves first
        subtree[:, parents[i]] += subtree[:, i]
    return subtree[:, 1:]


def _warn_unmarked(model: SegmentModel, markers: MarkerSet) -> None:
    """A segment with no marker at all moves only as its joints carry it: its orientation is not measured."""
    unmarked = markers.unmarked_segments(model)
    if unmarked:
        warnings.warn(
            f"track_markers: segment(s) {unmarked} carry no marker; they move only as their joints carry them, and "
            "their angles and torques are not measured",
            RuntimeWarning,
            stacklevel=3,
        )


NOISY_ACCELERATION = 5.0  # [m/s^2] (half a g) acceleration noise above which unfiltered torques are mostly noise


def _warn_noise(markers: MarkerSet) -> None:
    """Unfiltered markers: say so when their noise, differentiated twice, would dominate the torques."""
    if markers.frames < 20:
        return
    sigma = noise_estimate(markers)
    if np.isfinite(sigma) and acceleration_noise(sigma, markers.rate) > NOISY_ACCELERATION:
        warnings.warn(
            f"track_markers: the markers carry about {1e3 * sigma:.2g} mm of noise above {DEFAULT_CUTOFF:g} Hz, "
            f"which becomes about {acceleration_noise(sigma, markers.rate):.3g} m/s^2 of acceleration noise at "
            f"{markers.rate:g} Hz: unfiltered, the torques are mostly noise; track with cutoff={DEFAULT_CUTOFF:g} "
            "(the default) or another low-pass",
            RuntimeWarning,
            stacklevel=3,
        )
