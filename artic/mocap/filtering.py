"""Low-pass filtering of marker trajectories before tracking, and an estimate of the noise left when they are not.

Tracking turns marker motion into accelerations and so into torques; white noise of standard deviation sigma on a
position sampled every dt becomes acceleration noise of about sqrt(6) sigma / dt^2 (the second difference of
white noise), 37 m/s^2 for 1.5 mm at 100 Hz, and the torques follow it. Biomechanics labs therefore low-pass their
markers first, most often with a zero-lag Butterworth filter at about 6 Hz (Winter, "Biomechanics and Motor Control
of Human Movement", ch. 2): a second-order Butterworth filter run forwards and backwards (SciPy's `filtfilt`), which
is fourth order with no phase lag. Two passes lower the -3 dB point, so the single-pass cutoff is raised by Winter's
correction 1 / 0.802 to put the combined -3 dB point at the requested cutoff.

Gaps: a filter cannot run through missing frames, and filtering each run between gaps on its own gives every gap
two edges, where the filter's start-up transients push the marker off its path just as it reappears. So each
marker's gaps are bridged first by a cubic spline through its measured frames, the whole span from its first to its
last measured frame is filtered, and the gaps are then emptied again: the filter never reports a position that was
not measured. A marker measured in fewer than `MIN_RUN` frames is left as it is.

Ends: a filter needs samples before the first frame and after the last. SciPy's default (an odd reflection) keeps
the slope but flips the curvature there, so a falling body's constant 9.81 m/s^2 turns into a 19.6 m/s^2 step that
the filter spreads into a 13 mm error at the ends; padding with the quadratic that best fits the first (last) few
frames keeps the acceleration, and the error falls to 0.4 mm (a falling, swinging point at 100 Hz, 6 Hz cutoff).
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from .markers import MarkerSet

DEFAULT_CUTOFF = 6.0  # [Hz] the usual choice for marker trajectories of walking and reaching (Winter)
_PASS_CORRECTION = 0.802  # Winter's cutoff correction for a second-order Butterworth filter run twice
MIN_RUN = 10  # frames: filtfilt pads each end with 3 * (filter length) = 9 samples of a second-order filter


def lowpass_markers(markers: MarkerSet, cutoff: float = DEFAULT_CUTOFF) -> MarkerSet:
    """The markers low-passed by a zero-lag fourth-order Butterworth filter whose combined -3 dB point is `cutoff`
    [Hz] (a second-order filter run forwards and backwards), run by run between gaps; missing frames stay missing.
    The cutoff must lie below the Nyquist frequency (rate / 2) with room for the two-pass correction."""
    from scipy.signal import butter

    rate = markers.rate
    real = isinstance(cutoff, (int, float, np.integer, np.floating)) and not isinstance(cutoff, (bool, np.bool_))
    wn = float(cutoff) / _PASS_CORRECTION / (0.5 * rate) if real else np.nan
    if not (np.isfinite(wn) and 0.0 < wn < 1.0):
        raise ValidationError(
            f"lowpass_markers: cutoff must be a frequency in (0, {0.5 * rate * _PASS_CORRECTION:.4g}) Hz for markers "
            f"at {rate:g} Hz (below the Nyquist frequency after the two-pass correction), got {cutoff!r}"
        )
    from scipy.interpolate import CubicSpline

    b, a = butter(2, wn)
    settle = int(np.ceil(rate / float(cutoff)))  # samples per cutoff period: the filter's memory
    p = markers.positions.copy()
    present = markers.present()
    for k in range(markers.count):
        seen = np.flatnonzero(present[:, k])
        if len(seen) < MIN_RUN:
            continue
        first, last = seen[0], seen[-1] + 1
        span = p[first:last, k]
        if len(seen) < last - first:  # gaps inside the span: bridge them for the filter only
            span = CubicSpline(seen, p[seen, k], axis=0)(np.arange(first, last))
        smooth = _filter_padded(b, a, span, settle)
        p[first:last, k] = np.where(present[first:last, k, None], smooth, np.nan)
    return MarkerSet(list(markers.names), list(markers.segments), p, rate)


def _filter_padded(b, a, x: np.ndarray, settle: int) -> np.ndarray:
    """filtfilt of x (N, 3) with each end extended by 3 `settle` samples of the quadratic that best fits its first
    (last) `settle` samples (at least 5): the extension continues the position, velocity and acceleration."""
    from scipy.signal import filtfilt

    n, fit = 3 * settle, min(len(x), max(5, settle))
    k = np.arange(fit, dtype=float)
    head = np.polynomial.polynomial.polyfit(k, x[:fit], 2)  # (3, 3): coefficients per coordinate
    tail = np.polynomial.polynomial.polyfit(k, x[-fit:], 2)
    before = np.polynomial.polynomial.polyval(np.arange(-n, 0, dtype=float), head).T
    after = np.polynomial.polynomial.polyval(fit - 1 + np.arange(1, n + 1, dtype=float), tail).T
    padded = np.concatenate([before, x, after])
    return filtfilt(b, a, padded, axis=0, padtype=None)[n:-n]


def noise_estimate(markers: MarkerSet, cutoff: float = DEFAULT_CUTOFF) -> float:
    """The RMS [m] of what a low-pass at `cutoff` removes from the markers: on smooth motion sampled well above
    `cutoff` that is the measurement noise (plus any real motion above the cutoff). NaN when nothing could be
    filtered (every run shorter than MIN_RUN frames)."""
    filtered = lowpass_markers(markers, cutoff).positions
    d = markers.positions - filtered
    changed = np.isfinite(d[..., 0]) & np.any(d != 0.0, axis=2)
    if not changed.any():
        return float("nan")
    return float(np.sqrt(np.mean(np.sum(d[changed] ** 2, axis=1) / 3.0)))


def acceleration_noise(sigma: float, rate: float) -> float:
    """The acceleration noise [m/s^2] that position noise of standard deviation `sigma` [m] makes when
    differentiated twice at `rate` [Hz]: sqrt(6) sigma rate^2."""
    return float(np.sqrt(6.0) * sigma * rate**2)
