"""Segment frames re-based on a neutral posture, so that joint angles mean the same on a fitted model as on the truth.

Fitting learns where the joints and markers sit in each segment's frame, but not how that frame is turned: any
rotation of a segment's frame, with its anchors, attachments and inertia turned with it, fits the markers equally
well (the docs call it the gauge). Points are compared up to it; angles cannot be, since a joint angle is the
rotation between two frames and each carries its own gauge (7-24 deg per segment after a fit from markers at the
COMs). Biomechanics fixes the gauge with a static trial: the subject stands in a known posture and every segment's
frame is defined there. `neutral_at` does that: it turns each segment's frame so that it has the world's axes in
the neutral posture (the reference pose of `SegmentModel.reference_poses`), after which a joint angle is the
rotation of the child relative to the parent away from that posture, zero in it.

A body-fixed vector v in the old frame is R v in the new one, R the segment's orientation in the neutral posture
(world from old body); inertia becomes R I R^T.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError
from ..math.np_spatial import quat_mul, quat_to_matrix
from .filtering import DEFAULT_CUTOFF
from .markers import MarkerSet
from .segment_joints import mean_rotation
from .segments import SegmentModel


def neutral_at(
    model: SegmentModel, attachments: ArrayLike, static: MarkerSet, cutoff: float | None = DEFAULT_CUTOFF
) -> tuple[SegmentModel, np.ndarray]:
    """(model, attachments) with every segment's frame turned to have the world's axes in the posture of a static
    trial: `static` is tracked with the model (`cutoff` as in track_markers) and each segment's orientation averaged
    over its frames. The model's reference pose is then that posture, and joint angles tracked with it are zero
    there."""
    from .track import track_markers  # track.py does not import this module: no cycle

    if static.frames < 2:
        raise ValidationError(
            f"neutral_at: the static trial has {static.frames} frame; tracking it needs at least 2 (repeat the frame "
            "if it is all there is)"
        )
    poses = track_markers(model, static, attachments, cutoff=cutoff).poses
    return rebase(
        model, attachments, static.segments, np.array([mean_rotation(poses[:, i, 3:]) for i in range(poses.shape[1])])
    )


def rebase(
    model: SegmentModel, attachments: ArrayLike, segments: list[str], orientations: ArrayLike
) -> tuple[SegmentModel, np.ndarray]:
    """(model, attachments) with segment i's frame turned by `orientations` (S, 4) (qx, qy, qz, qw; world from the
    old frame in the neutral posture, e.g. `TrackResult.poses[t, :, 3:]`), so that it has the world's axes there.
    `segments` (n,) names each attachment's segment."""
    s = np.asarray(attachments, float)
    q = np.asarray(orientations, float)
    if q.shape != (len(model.segments), 4) or not np.all(np.isfinite(q)) or np.any(np.linalg.norm(q, axis=1) == 0):
        raise ValidationError(
            f"rebase: orientations must be finite non-zero quaternions, of shape ({len(model.segments)}, 4), "
            f"got {q.shape}"
        )
    if s.shape != (len(segments), 3):
        raise ValidationError(f"rebase: attachments must have shape ({len(segments)}, 3), got {s.shape}")
    turn = np.array([quat_to_matrix(x / np.linalg.norm(x)) for x in q])  # world from old body frame, per segment
    out = model.copy()
    for i, seg in enumerate(out.segments):
        seg.inertia = turn[i] @ seg.inertia @ turn[i].T
        seg.anchor_in_child = turn[i] @ seg.anchor_in_child
        if seg.parent is None:
            continue
        p = model.index(seg.parent)
        seg.anchor_in_parent = turn[p] @ seg.anchor_in_parent
        if seg.joint != "ball":  # a hinge's or universal joint's frames turn with their segments (a ball's: no axes)
            seg.frame_in_child = quat_mul(q[i] / np.linalg.norm(q[i]), seg.frame_in_child)
            seg.frame_in_parent = quat_mul(q[p] / np.linalg.norm(q[p]), seg.frame_in_parent)
    segment_of = np.array([model.index(name) for name in segments], int)
    return out, np.einsum("nij,nj->ni", turn[segment_of], s)
