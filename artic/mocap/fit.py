"""Fitting a segment model to markers (the ODE paper, section S2).

Markers are infinite-mass points tied to their segments by soft 3-dof constraints (rig.py), much softer than the
joints. Per batch of frames (one frame per env):
1. pose the segments (the frame's pose from the last epoch, or a first guess) and put the markers at the frame's
   positions;
2. relax: step k times (no gravity) so that the markers pull the body into shape;
3. re-attach each marker with learning rate eta_m: s' = (1 - eta_m) s + eta_m mean_frames(R^T (p - x));
4. move each joint's two anchors towards the midpoint m of their pulled-apart world points with learning rate
   eta_l: c' = (1 - eta_l) c + eta_l mean_frames(R^T (m - x)) (the spec's update moves each end towards the other
   end; towards the midpoint the two ends meet when eta_l = 1 instead of crossing);
and iterate over batches and epochs. The update averages over the batch's frames, so that one frame's local fit
does not undo another's. Both updates descend the marker and joint errors, sum |p - R s - x|^2 weighted by the
constraint stiffnesses.

What the markers cannot see: a segment's fitted attachments and anchors are the true ones up to a rigid motion of
that segment's own frame (the body frame is a choice, the marker and joint points are what is observed), and the
fit is compared that way (`compare_segment_points`).
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError
from ..math.np_spatial import quat_from_matrix, quats_conj, quats_rotate
from ..sim import memory
from .markers import MarkerSet
from .rig import MarkerRig, marker_world
from .segment_joints import fit_axes
from .segments import SegmentModel


@dataclass
class FitResult:
    """The fitted model (its anchors) and attachments (n, 3) [m, segment frames]; `rms` (epochs,) the marker RMS
    error [m] after relaxation in each epoch; `joint_gap` (epochs,) the RMS distance between the two ends of the
    joints [m]; `poses` (F, S, 7) the relaxed segment poses of the fitted frames `frames` (F,)."""

    model: SegmentModel
    attachments: np.ndarray
    rms: np.ndarray
    joint_gap: np.ndarray
    frames: np.ndarray
    poses: np.ndarray
    marker_rms: np.ndarray = field(default=None)  # (n,) per marker, last epoch


def _check_rate(name: str, value: float):
    if not np.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValidationError(f"fit_markers: {name} must be a learning rate in [0, 1], got {value!r}")


def first_guess(
    model: SegmentModel, segment_of: np.ndarray, attachments: np.ndarray, positions: np.ndarray
) -> np.ndarray:
    """(E, S, 7) segment poses for marker frames (E, n, 3): each segment turned by the best rotation of its
    attachments onto its markers (Kabsch) where 3 or more are present and spread out, else left unturned, and
    placed at mean(p - R s); a segment without markers keeps its reference offset from its parent."""
    e = positions.shape[0]
    ref = model.reference_poses()
    out = np.broadcast_to(ref, (e,) + ref.shape).copy()
    parents = model.parent_index()
    for i in range(len(model.segments)):
        mine = np.flatnonzero(segment_of == i)
        for env in range(e):
            p = positions[env, mine]
            ok = np.isfinite(p[:, 0])
            s, p = attachments[mine][ok], p[ok]
            if len(p) == 0:
                if parents[i] >= 0:
                    out[env, i, :3] = out[env, parents[i], :3] + ref[i, :3] - ref[parents[i], :3]
                continue
            q = np.array([0.0, 0.0, 0.0, 1.0])
            if len(p) >= 3:
                sc, pc = s - s.mean(0), p - p.mean(0)
                u, sv, vt = np.linalg.svd(pc.T @ sc)
                if sv[1] > 1e-6 * max(sv[0], 1e-12) and np.linalg.norm(sc) > 1e-4:
                    d = np.sign(np.linalg.det(u @ vt))
                    r = u @ np.diag([1.0, 1.0, d]) @ vt
                    q = np.asarray(quat_from_matrix(r), float)
            out[env, i, 3:] = q
            out[env, i, :3] = (p - quats_rotate(np.broadcast_to(q, s.shape[:1] + (4,)), s)).mean(0)
    return out


def _initial_poses(rig: MarkerRig, model, markers, segment_of, s, frames, relax_steps, dt) -> np.ndarray:
    """(F, S, 7) a first relaxed pose of every fitted frame, found in time order, each frame starting from the
    previous one (the first from `first_guess`): starting every frame from a guess lets a segment far from its
    reference orientation settle in a wrong, tangled pose. The first frame should be near the reference pose (or
    the attachments known)."""
    out = np.zeros((len(frames), len(model.segments), 7))
    e = rig.num_envs
    prev = None
    for f_idx, f in enumerate(frames):
        p = np.broadcast_to(markers.positions[f], (e,) + markers.positions.shape[1:])
        start = first_guess(model, segment_of, s, p[:1]) if prev is None else prev[None]
        rig.set_state(np.broadcast_to(start, (e,) + start.shape[1:]).copy())
        rig.place_markers(p)
        rig.step(dt, relax_steps)
        prev = rig.poses()[0]
        out[f_idx] = prev
    return out


def _joint_points(model: SegmentModel, poses: np.ndarray):
    """(E, J, 3) world points of each joint's anchor on the parent and on the child."""
    par = model.parent_index()[1:]
    ap, ac = model.anchors()
    a = quats_rotate(poses[:, par, 3:], np.broadcast_to(ap, poses[:, par, :3].shape)) + poses[:, par, :3]
    b = quats_rotate(poses[:, 1:, 3:], np.broadcast_to(ac, poses[:, 1:, :3].shape)) + poses[:, 1:, :3]
    return a, b


FIT_MEMORY_SHARE = 0.5  # of the device's available memory a fit's batch may take (contacts, solver, the rest)


def _envs_that_fit(
    model: SegmentModel,
    markers: MarkerSet,
    attachments: np.ndarray,
    num_envs: int,
    joint_erp_cfm: tuple[float, float],
    marker_erp_cfm: tuple[float, float],
    iterations: int,
    damping: float,
) -> int:
    """`num_envs`, or as many envs as FIT_MEMORY_SHARE of the device's available memory holds, with a warning: the
    rig's bodies and markers step as one block, whose arrays grow with the square of their dofs, so a large batch
    of a large model can exceed memory (100000 envs of the 13-segment example need ~60 GiB)."""
    probe = MarkerRig(
        model, markers, attachments, 1, joint_erp_cfm, marker_erp_cfm, iterations=iterations, damping=damping
    )
    per_env = probe.scene.bytes_per_env()
    have, kind = memory.available_bytes(probe.scene.device)
    fit = max(1, int(FIT_MEMORY_SHARE * have // max(per_env, 1)))
    if num_envs <= fit:
        return num_envs
    warnings.warn(
        f"fit_markers: {num_envs} envs of this model need at least {num_envs * per_env / 2**30:.1f} GiB ({per_env} "
        f"bytes per env) and the device has {have / 2**30:.1f} GiB of {kind}; relaxing {fit} frames at a time",
        RuntimeWarning,
        stacklevel=3,
    )
    return fit


def fit_markers(
    model: SegmentModel,
    markers: MarkerSet,
    attachments: ArrayLike | None = None,
    epochs: int = 20,
    num_envs: int = 8,
    frames: ArrayLike | None = None,
    relax_steps: int = 20,
    dt: float = 0.01,
    eta_m: float = 1.0,
    eta_l: float = 1.0,
    joint_erp_cfm: tuple[float, float] = (0.2, 1e-4),
    marker_erp_cfm: tuple[float, float] = (0.2, 1e-3),
    damping: float = 20.0,
    iterations: int = 16,
    fit_anchors: bool = True,
    progress: bool = False,
) -> FitResult:
    """Fit the anchors of `model` and the markers' attachment points to `markers` (section S2). `attachments`
    (n, 3) start at the segments' COMs (zeros) by default; `frames` picks the frames used (default: up to 4 *
    num_envs frames spread over the recording); `num_envs` frames are relaxed at once. Returns a FitResult; the
    input model is not changed. With fit_anchors, the
    axes of hinge and universal joints are fitted too (segment_joints.fit_axes), from every fitted frame's
    segment orientations, once per epoch with learning rate eta_l."""
    markers.check_model(model)
    unmarked = markers.unmarked_segments(model)
    if unmarked:
        raise ValidationError(
            f"fit_markers: segment(s) {unmarked} carry no marker, so nothing observes where their joints are; add "
            "markers on them or merge them into a neighbour"
        )
    if markers.frames < 2:
        raise ValidationError(
            "fit_markers: one frame cannot place a joint (any point fits a single posture); record the subject "
            "moving every joint, over many frames"
        )
    model = model.copy()
    n = markers.count
    s = np.zeros((n, 3)) if attachments is None else np.array(attachments, float)
    if s.shape != (n, 3) or not np.all(np.isfinite(s)):
        raise ValidationError(f"fit_markers: attachments must be finite, of shape ({n}, 3), got {s.shape}")
    for name, v in (("eta_m", eta_m), ("eta_l", eta_l)):
        _check_rate(name, v)
    if int(epochs) < 1 or int(relax_steps) < 1 or int(num_envs) < 1:
        raise ValidationError("fit_markers: epochs, relax_steps and num_envs must be >= 1")
    num_envs = _envs_that_fit(model, markers, s, int(num_envs), joint_erp_cfm, marker_erp_cfm, iterations, damping)
    if frames is None:
        frames = np.unique(np.linspace(0, markers.frames - 1, min(markers.frames, 4 * num_envs)).round().astype(int))
    frames = np.asarray(frames, int)
    if frames.ndim != 1 or len(frames) == 0 or frames.min() < 0 or frames.max() >= markers.frames:
        raise ValidationError(f"fit_markers: frames must be indices in [0, {markers.frames}), got {frames}")
    segment_of = np.array([model.index(x) for x in markers.segments])
    rig = MarkerRig(model, markers, s, num_envs, joint_erp_cfm, marker_erp_cfm, iterations=iterations, damping=damping)
    warm = _initial_poses(rig, model, markers, segment_of, s, frames, relax_steps, dt)
    rms, gaps = [], []
    batches = [frames[i : i + num_envs] for i in range(0, len(frames), num_envs)]
    for epoch in range(int(epochs)):
        err2 = np.zeros(n)
        seen = np.zeros(n)
        gap2 = []
        for b, batch in enumerate(batches):
            slot = np.arange(b * num_envs, b * num_envs + len(batch))
            pad = np.concatenate([batch, np.repeat(batch[-1:], num_envs - len(batch))])
            p = markers.positions[pad]
            rig.set_parameters(model, s)
            rig.set_state(warm[np.concatenate([slot, np.repeat(slot[-1:], num_envs - len(batch))])])
            rig.place_markers(p)
            rig.step(dt, relax_steps)
            poses = rig.poses()[: len(batch)]
            warm[slot] = poses
            p = p[: len(batch)]
            present = np.isfinite(p[..., 0])
            resid = np.where(present[..., None], p - marker_world(poses, segment_of, s), 0.0)
            err2 += (resid**2).sum(axis=(0, 2))
            seen += present.sum(axis=0)
            # 3. re-attach: the attachment that would put each marker exactly where it is now, averaged over frames
            seg = poses[:, segment_of]
            local = quats_rotate(quats_conj(seg[..., 3:]), np.where(present[..., None], p, 0.0) - seg[..., :3])
            count = present.sum(axis=0)
            use = count > 0
            target = np.where(present[..., None], local, 0.0).sum(axis=0)[use] / count[use, None]
            s[use] = (1.0 - eta_m) * s[use] + eta_m * target
            # 4. joint anchors towards the midpoints of their two ends
            a, bpt = _joint_points(model, poses)
            gap2.append(((a - bpt) ** 2).sum(axis=2).ravel())
            if fit_anchors and len(model.segments) > 1:
                mid = 0.5 * (a + bpt)
                par = model.parent_index()[1:]
                ap, ac = model.anchors()
                tp = quats_rotate(quats_conj(poses[:, par, 3:]), mid - poses[:, par, :3]).mean(axis=0)
                tc = quats_rotate(quats_conj(poses[:, 1:, 3:]), mid - poses[:, 1:, :3]).mean(axis=0)
                model.set_anchors((1.0 - eta_l) * ap + eta_l * tp, (1.0 - eta_l) * ac + eta_l * tc)
        if fit_anchors:  # 5. hinge and universal axes from the markers' own orientations of every fitted frame
            _fit_joint_axes(model, first_guess(model, segment_of, s, markers.positions[frames]), eta_l)
        rms.append(float(np.sqrt(err2.sum() / max(seen.sum(), 1))))
        gaps.append(float(np.sqrt(np.concatenate(gap2).mean())) if gap2 and len(gap2[0]) else 0.0)
        if progress:
            _progress(epoch + 1, int(epochs), rms[-1], gaps[-1])
    marker_rms = np.sqrt(err2 / np.maximum(seen, 1))
    return FitResult(model, s, np.array(rms), np.array(gaps), frames, warm, marker_rms)


def _fit_joint_axes(model: SegmentModel, poses: np.ndarray, eta: float) -> None:
    """Move every hinge's and universal joint's axes towards those that best explain the segment orientations
    (F, S, 7) of the fitted frames (segment_joints.fit_axes); ball joints have none. The orientations are each
    segment's best fit to its own markers (Kabsch), not the relaxed poses: the rig's soft joint holds those to the
    current axes, which would keep a wrong axis where it is."""
    par = model.parent_index()
    for i, seg in enumerate(model.segments[1:], start=1):
        if seg.joint != "ball":
            seg.frame_in_parent, seg.frame_in_child = fit_axes(
                seg.joint, seg.frame_in_parent, seg.frame_in_child, poses[:, par[i], 3:], poses[:, i, 3:], eta
            )


def _progress(done: int, total: int, rms: float, gap: float):
    """The fit's progress on stderr: one redrawn bar on a terminal; in a log or a pipe, which would keep every
    redraw, a line at every fifth of the epochs."""
    text = f"epoch {done}/{total}  marker RMS {1e3 * rms:7.2f} mm  joint gap {1e3 * gap:6.2f} mm"
    if not sys.stderr.isatty():
        if done == total or done % max(1, total // 5) == 0:
            print(f"fit: {text}", file=sys.stderr, flush=True)
        return
    width = 30
    bar = "#" * (width * done // total) + "-" * (width - width * done // total)
    end = "\n" if done == total else ""
    print(f"\rfit [{bar}] {text}", end=end, file=sys.stderr, flush=True)


def segment_points(model: SegmentModel, attachments: np.ndarray, segment_of: np.ndarray) -> list[np.ndarray]:
    """Per segment, the points the markers and joints observe in its frame: its joints' anchors (to its parent,
    then to each child) and its markers' attachments."""
    pts = []
    for i, seg in enumerate(model.segments):
        own = [seg.anchor_in_child] if i > 0 else []
        own += [c.anchor_in_parent for c in model.segments[1:] if c.parent == seg.name]
        own += list(attachments[segment_of == i])
        pts.append(np.array(own).reshape(-1, 3))
    return pts


def compare_segment_points(fitted: list[np.ndarray], truth: list[np.ndarray]) -> list[np.ndarray]:
    """Per segment, the distance [m] of each fitted point from the true one after the rigid motion of the segment's
    frame that best aligns them (Kabsch): the error the markers can see."""
    out = []
    for f, t in zip(fitted, truth):
        fc, tc = f - f.mean(0), t - t.mean(0)
        u, _, vt = np.linalg.svd(tc.T @ fc)
        d = np.sign(np.linalg.det(u @ vt))
        r = u @ np.diag([1.0, 1.0, d]) @ vt
        out.append(np.linalg.norm(fc @ r.T - tc, axis=1))
    return out
