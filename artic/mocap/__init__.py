"""Marker fitting and tracking (the ODE paper, sections S1 and S2): a segment model in
maximal coordinates, markers as soft constraints, fitting anchors and attachments, tracking with torques. See
docs/marker_fitting.md."""

from __future__ import annotations

from .diagnostics import MarkerDiagnosis, diagnose_markers
from .filtering import lowpass_markers, noise_estimate
from .fit import FitResult, compare_segment_points, fit_markers, segment_points
from .markers import MarkerSet, read_c3d, write_c3d
from .model_file import load_segment_model, save_segment_model
from .neutral import neutral_at, rebase
from .rig import MarkerRig
from .segments import Segment, SegmentModel
from .track import (
    ArticulationEvaluator,
    TrackResult,
    reaction_forces,
    relative_rotations,
    track_markers,
    track_trials,
)

__all__ = [
    "ArticulationEvaluator",
    "FitResult",
    "MarkerDiagnosis",
    "MarkerRig",
    "MarkerSet",
    "Segment",
    "SegmentModel",
    "TrackResult",
    "compare_segment_points",
    "diagnose_markers",
    "fit_markers",
    "load_segment_model",
    "lowpass_markers",
    "neutral_at",
    "noise_estimate",
    "reaction_forces",
    "read_c3d",
    "rebase",
    "relative_rotations",
    "save_segment_model",
    "segment_points",
    "track_markers",
    "track_trials",
    "write_c3d",
]
