"""The markers' low-pass (artic/mocap/filtering.py) against closed forms: the Butterworth response at and below its
cutoff, a falling body's parabola kept to the ends, gaps bridged for the filter and left empty, and the noise
estimate of white noise."""

from __future__ import annotations

import numpy as np
import pytest

from artic import ValidationError
from artic.mocap import MarkerSet
from artic.mocap.filtering import lowpass_markers, noise_estimate

RATE = 100.0


def _markers(x: np.ndarray) -> MarkerSet:
    """One marker moving along x (T,) on the world's x axis."""
    p = np.zeros((len(x), 1, 3))
    p[:, 0, 0] = x
    return MarkerSet(["m"], ["s"], p, RATE)


def _gain(freq: float, cutoff: float) -> float:
    t = np.arange(600) / RATE
    out = lowpass_markers(_markers(np.sin(2 * np.pi * freq * t)), cutoff).positions[:, 0, 0]
    mid = slice(150, 450)  # away from the ends
    return np.sqrt(2.0 * np.mean(out[mid] ** 2))


def test_gain_is_half_power_at_the_cutoff_and_one_well_below():
    """Zero-lag fourth order (a second-order Butterworth run twice), cutoff corrected for the two passes: the
    combined gain is 1/sqrt(2) at the cutoff, 1 at a sixth of it, and falls as (f/fc)^-4 above it."""
    assert _gain(6.0, 6.0) == pytest.approx(1 / np.sqrt(2), abs=0.01)
    assert _gain(1.0, 6.0) == pytest.approx(1.0, abs=2e-3)
    assert _gain(24.0, 6.0) < 1.1 * (6.0 / 24.0) ** 4


def test_a_falling_swinging_point_keeps_its_path_to_the_ends():
    """-g t^2 / 2 plus a 1 Hz swing: quadratic end padding keeps the acceleration, so the filtered path stays within
    1 mm everywhere (SciPy's default odd padding: 13 mm at the ends)."""
    t = np.arange(101) / RATE
    x = -0.5 * 9.81 * t**2 + 0.1 * np.sin(2 * np.pi * t)
    out = lowpass_markers(_markers(x)).positions[:, 0, 0]
    assert np.abs(out - x).max() < 1e-3


def test_gaps_are_bridged_for_the_filter_and_stay_missing():
    """A 5-frame gap: those frames stay NaN, and elsewhere the filtered path is the one of the full recording
    (within 0.2 mm), with no transient at the gap's edges."""
    t = np.arange(200) / RATE
    x = 0.2 * np.sin(2 * np.pi * 0.7 * t) + 0.05 * np.sin(2 * np.pi * 2.3 * t)
    full = lowpass_markers(_markers(x)).positions[:, 0, 0]
    holed = _markers(x)
    holed.positions[80:85] = np.nan
    out = lowpass_markers(holed).positions[:, 0, 0]
    assert np.isnan(out[80:85]).all() and np.isfinite(np.delete(out, range(80, 85))).all()
    assert np.nanmax(np.abs(out - full)) < 2e-4


def test_noise_estimate_of_white_noise():
    """White noise sigma on a smooth path: the filter removes the 1 - 6/50 of its power above 6 Hz, so the estimate
    is sigma sqrt(0.88) = 0.94 sigma."""
    rng = np.random.default_rng(0)
    t = np.arange(1000) / RATE
    sigma = 1.5e-3
    x = 0.2 * np.sin(2 * np.pi * 0.5 * t)
    p = np.zeros((len(t), 4, 3))
    p[:, :, :] = x[:, None, None]
    p += rng.normal(0.0, sigma, p.shape)
    est = noise_estimate(MarkerSet(list("abcd"), ["s"] * 4, p, RATE))
    assert est == pytest.approx(sigma * np.sqrt(1 - 6.0 / 50.0), rel=0.05)


@pytest.mark.parametrize("cutoff", [0.0, -1.0, 45.0, float("nan"), "6"])
def test_a_cutoff_the_rate_cannot_carry_is_refused(cutoff):
    with pytest.raises(ValidationError, match="cutoff must be a frequency"):
        lowpass_markers(_markers(np.zeros(50)), cutoff)
