"""Marker fitting and tracking (the ODE paper, sections S1 and S2): a segment model in
maximal coordinates, markers as soft constraints, fitting anchors and attachments, tracking with torques. See
docs/marker_fitting.md."""

from __future__ import annotations

from .fit import FitResult, compare_segment_points, fit_markers, segment_points
from .markers import MarkerSet, read_c3d, write_c3d
from .model_file import load_segment_model, save_segment_model
from .rig import MarkerRig
from .segments import Segment, SegmentModel
from .track import ArticulationEvaluator, TrackResult, relative_rotations, track_markers

__all__ = [
    "ArticulationEvaluator",
    "FitResult",
    "MarkerRig",
    "MarkerSet",
    "Segment",
    "SegmentModel",
    "TrackResult",
    "compare_segment_points",
    "fit_markers",
    "load_segment_model",
    "read_c3d",
    "relative_rotations",
    "save_segment_model",
    "segment_points",
    "track_markers",
    "write_c3d",
]
