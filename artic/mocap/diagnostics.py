"""Which segment each marker really moves with: finding a marker declared on the wrong segment.

A marker's residual (its distance to its attachment point) does not find a mislabelled marker: the tracking pulls
the declared segment towards it, so its neighbours on that segment show residuals as large as its own. A marker
glued to a segment keeps one position in that segment's frame, however the body moves, and so the test here asks,
for the marker and every segment, how far the marker's positions in that segment's frame (through the tracked
poses) spread about their mean. The spread on the segment it is glued to is the noise and soft-tissue motion (a
few mm); on a segment across a moving joint it is the joint's motion at the marker's distance (centimetres). A
marker whose declared segment spreads several times more than another one is named, with that other segment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..math.np_spatial import quats_conj, quats_rotate
from .markers import MarkerSet
from .segments import SegmentModel

SUSPECT_RATIO = 3.0  # the declared segment spreads this many times more than the best one
SUSPECT_SPREAD = 0.005  # [m] and by more than this (below, any segment explains the marker within soft tissue)


@dataclass
class MarkerDiagnosis:
    """One marker: `spread` [m] RMS distance of its positions in its declared segment's frame from their mean;
    `best_segment` the segment it spreads least on, `best_spread` [m] that spread; `suspect` True when the declared
    segment spreads SUSPECT_RATIO times more than the best one and by more than SUSPECT_SPREAD."""

    name: str
    segment: str
    spread: float
    best_segment: str
    best_spread: float
    suspect: bool


def _spreads(model: SegmentModel, markers: MarkerSet, poses: np.ndarray) -> np.ndarray:
    """(n, S) RMS spread [m] of each marker's positions in each segment's frame about their mean."""
    p = markers.positions  # (T, n, 3)
    seg_p, seg_q = poses[:, None, :, :3], poses[:, None, :, 3:]  # (T, 1, S, ...)
    local = quats_rotate(quats_conj(np.broadcast_to(seg_q, p.shape[:2] + seg_q.shape[2:])), p[:, :, None] - seg_p)
    present = markers.present()[:, :, None, None]  # (T, n, 1, 1)
    count = np.maximum(present.sum(axis=0), 1)
    mean = np.where(present, local, 0.0).sum(axis=0) / count
    return np.sqrt(np.where(present, (local - mean) ** 2, 0.0).sum(axis=(0, 3)) / count[..., 0])


def diagnose_markers(
    model: SegmentModel, markers: MarkerSet, attachments: np.ndarray, poses: np.ndarray | None = None
) -> list[MarkerDiagnosis]:
    """Per marker, how rigidly it moves with its declared segment and with the best other one, from segment poses
    (T, S, 7) (a TrackResult's; tracked here when None). A mislabelled marker drags the segments it is tracked
    with, which hides part of its spread; so each marker that looks doubtful on those poses (its declared segment
    spreads 1.3 times more than another, by more than SUSPECT_SPREAD) is judged again on poses tracked without it,
    all those re-trackings at once (track_trials, one env each)."""
    from .track import track_markers, track_trials  # track.py does not import this module: no cycle

    if poses is None:
        poses = track_markers(model, markers, attachments).poses
    spread = _spreads(model, markers, poses)
    declared = np.array([model.index(x) for x in markers.segments])
    own, best = spread[np.arange(markers.count), declared], spread.min(axis=1)
    doubtful = np.flatnonzero((own > 1.3 * best) & (own - best > SUSPECT_SPREAD))
    trials = []
    for k in doubtful:
        without = markers.positions.copy()
        without[:, k] = np.nan
        trials.append(MarkerSet(markers.names, markers.segments, without, markers.rate))
    for k, result in zip(doubtful, track_trials(model, trials, attachments) if trials else []):
        spread[k] = _spreads(model, markers, result.poses)[k]
    out = []
    for k, name in enumerate(markers.names):
        own, best = float(spread[k, declared[k]]), int(np.argmin(spread[k]))
        suspect = own > SUSPECT_RATIO * spread[k, best] and own - spread[k, best] > SUSPECT_SPREAD
        out.append(MarkerDiagnosis(name, markers.segments[k], own, model.names[best], float(spread[k, best]), suspect))
    return out


def suspect_message(diagnoses: list[MarkerDiagnosis]) -> str | None:
    """One line per marker that seems declared on the wrong segment, or None."""
    lines = [
        f"marker '{d.name}' is declared on '{d.segment}' but moves with '{d.best_segment}' (its positions in that "
        f"segment's frame spread {1e3 * d.best_spread:.1f} mm, on '{d.segment}' {1e3 * d.spread:.1f} mm): check "
        "its label"
        for d in diagnoses
        if d.suspect
    ]
    return "\n".join(lines) if lines else None
