"""Marker data: names, the segment each marker is attached to, and positions per frame (T, n, 3) [m], NaN where a
marker was not seen. C3D files (the motion-capture standard) are read and written with the `c3d` package."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..description.validate import finite
from ..errors import ArticError, ValidationError
from .segments import SegmentModel


@dataclass
class MarkerSet:
    """`positions` (T, n, 3) [m] world, NaN for a marker missing in a frame; `rate` [frames/s]."""

    names: list[str]
    segments: list[str]
    positions: np.ndarray
    rate: float = 100.0

    def __post_init__(self):
        self.names = [str(n) for n in self.names]
        self.segments = [str(s) for s in self.segments]
        n = len(self.names)
        if n == 0:
            raise ValidationError("markers: no markers given")
        if len(set(self.names)) != n:
            dup = sorted({x for x in self.names if self.names.count(x) > 1})
            raise ValidationError(f"markers: names must be unique, {dup} repeat")
        if len(self.segments) != n:
            raise ValidationError(
                f"markers: {n} names but {len(self.segments)} segment assignments; give one segment per marker"
            )
        p = np.asarray(self.positions)
        if p.ndim == 3 and p.shape[0] == 0 and p.shape[1:] == (n, 3):
            raise ValidationError(f"markers: the recording has no frames ({n} markers); nothing to fit or track")
        if p.dtype.kind not in "biuf" or p.ndim != 3 or p.shape[1:] != (n, 3) or p.shape[0] < 1:
            raise ValidationError(
                f"markers: positions must be real values of shape (T, {n}, 3) (frames, markers "
                f"{self.names[:3]}..., xyz), got {p.dtype} of shape {p.shape}"
            )
        p = p.astype(np.float64)
        if np.any(np.isinf(p)):
            raise ValidationError("markers: positions must be finite or NaN (missing), got inf")
        partial = np.isnan(p).any(axis=2) & ~np.isnan(p).all(axis=2)
        if partial.any():
            t, k = np.argwhere(partial)[0]
            raise ValidationError(
                f"markers: marker '{self.names[k]}' in frame {t} has some NaN coordinates; a missing "
                "marker has all three NaN"
            )
        self.positions = p
        rate = self.rate
        if np.ndim(rate) != 0 or isinstance(rate, (str, bytes, bool, np.bool_)):
            raise ValidationError(f"markers: rate must be one number of frames per second, got {rate!r}")
        rate = finite("markers", "rate", rate)
        if rate <= 0:
            raise ValidationError(f"markers: rate must be > 0 frames per second, got {rate!r}")
        self.rate = rate

    @property
    def count(self) -> int:
        """Number of markers n."""
        return len(self.names)

    @property
    def frames(self) -> int:
        """Number of frames T."""
        return self.positions.shape[0]

    def present(self) -> np.ndarray:
        """(T, n) bool."""
        return np.isfinite(self.positions[..., 0])

    def check_model(self, model: SegmentModel) -> None:
        """Every marker's segment exists in the model, and every segment has a marker or a joint to move it."""
        known = set(model.names)
        for name, seg in zip(self.names, self.segments):
            if seg not in known:
                raise ValidationError(
                    f"marker '{name}': segment '{seg}' is not in segment model '{model.name}' (segments: {model.names})"
                )
        seen = self.present().any(axis=0)
        if not seen.any():
            raise ValidationError("markers: no marker is present in any frame")

    def unmarked_segments(self, model: SegmentModel) -> list[str]:
        """The model's segments that no marker is declared on (they move only as their joints carry them)."""
        marked = set(self.segments)
        return [name for name in model.names if name not in marked]


def write_c3d(path: os.PathLike | str, markers: MarkerSet) -> None:
    """Write marker positions to a C3D file (millimetres, float format); missing markers are written as
    invalid points (residual -1)."""
    c3d = _c3d()
    w = c3d.Writer(point_rate=markers.rate, point_units="mm  ", point_scale=-1.0)
    w.set_point_labels(markers.names)
    frames = []
    for t in range(markers.frames):
        pts = np.zeros((markers.count, 5), np.float32)
        p = markers.positions[t]
        ok = np.isfinite(p[:, 0])
        pts[ok, :3] = p[ok] * 1000.0
        pts[~ok, 3] = -1.0
        frames.append((pts, np.zeros((0, 0), np.float32)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the c3d package's "No analog data found": artic writes points
        w.add_frames(frames)
        with open(path, "wb") as f:
            w.write(f)


def read_c3d(path: os.PathLike | str) -> tuple[list[str], np.ndarray, float]:
    """(names, positions (T, n, 3) [m] with NaN for invalid points, rate [Hz]) from a C3D file; units from the
    file's POINT:UNITS (mm or m)."""
    c3d = _c3d()
    path = Path(path)
    if not path.is_file():
        raise ArticError(f"C3D file '{path}' does not exist")
    try:
        with open(path, "rb") as f, warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "No analog data found": artic reads points only
            r = c3d.Reader(f)
            names = [str(x).strip() for x in r.point_labels]
            try:
                units = r.get_string("POINT:UNITS").strip().lower()
            except (AttributeError, KeyError, TypeError, ValueError):
                units = "mm"
            scale = {"mm": 1e-3, "m": 1.0, "cm": 1e-2}.get(units)
            if scale is None:
                raise ArticError(f"C3D file '{path}': POINT:UNITS '{units}' is not mm, cm or m")
            frames = []
            for _, points, _ in r.read_frames(check_nan=False):
                p = points[:, :3].astype(np.float64) * scale
                p[points[:, 3] < 0] = np.nan
                frames.append(p)
            rate = float(r.point_rate)
            declared = int(getattr(r, "frame_count", 0) or 0)
    except ArticError:
        raise
    except Exception as e:  # the c3d package raises assorted errors on a corrupt file
        raise ArticError(f"C3D file '{path}' could not be read: {type(e).__name__}: {e}") from None
    if not frames:
        raise ArticError(f"C3D file '{path}' has no frames")
    if len(frames) < declared:  # a file cut short reads as a shorter recording: say so
        warnings.warn(
            f"C3D file '{path}': its header declares {declared} frames but only {len(frames)} could be read (the "
            "file is cut short); the recording ends there",
            RuntimeWarning,
            stacklevel=2,
        )
    return names, np.stack(frames), rate


def _c3d():
    try:
        import c3d
    except ImportError:  # pragma: no cover - a dependency of artic
        raise ArticError("reading C3D files needs the 'c3d' package: pip install c3d") from None
    return c3d
