"""OpenSim 4.6 inverse kinematics as an oracle for marker tracking (tests/support/opensim_oracle.py). These tests
check the harness itself: given the true segment model and noise-free markers of the synthetic humanoid, OpenSim's
IK must recover the true motion, so that a later disagreement with artic's tracking measures artic, not a
convention slip in the harness (joint frames, quaternion order, marker gaps)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from artic.mocap.markers import MarkerSet
from artic.mocap.synthetic import humanoid, humanoid_markers, record_markers, simulate_motion
from artic.mocap.track import relative_rotations

pytest.importorskip(
    "opensim", reason="the OpenSim IK oracle needs the optional 'opensim' package (pip install opensim==4.6)"
)
# after the skip: the helper imports opensim
from tests.support.opensim_oracle import body_poses, build_opensim_model, opensim_ik

pytestmark = pytest.mark.oracle
ANGLE_RMS_DEG = 0.2
COM_MAX_MM = 1.0


@pytest.fixture(scope="module")
def subject():
    model = humanoid()
    names, segments, attachments = humanoid_markers(model)
    motion = simulate_motion(model, seconds=0.5, rate=100)
    segment_of = np.array([model.index(s) for s in segments])
    markers = record_markers(motion, segment_of, attachments, names, segments, noise=0.0)
    return model, motion, markers, build_opensim_model(model, names, segments, attachments)


def _agreement(model, truth, poses):
    """(joint-angle error RMS and max [deg], per component of artic's rotation vectors; COM error max [mm])."""
    angle_err = np.degrees(np.abs(relative_rotations(model, poses) - relative_rotations(model, truth)))
    com_err = 1e3 * np.linalg.norm(poses[..., :3] - truth[..., :3], axis=-1)
    return np.sqrt(np.mean(angle_err**2)), angle_err.max(), com_err.max()


def test_default_pose_is_reference_pose(subject):
    # the frames and offsets alone, before IK: a slip here (anchors swapped, root offset twice) shows up cleanly
    model, _, _, om = subject
    assert np.abs(body_poses(om, om.initSystem()) - model.reference_poses()).max() < 1e-12


def test_opensim_ik_recovers_true_poses(subject):
    model, motion, markers, om = subject
    start = time.perf_counter()
    poses = opensim_ik(om, markers)
    seconds = time.perf_counter() - start
    rms, worst, com = _agreement(model, motion.poses, poses)
    print(
        f"\nOpenSim IK, true model, {markers.frames} frames x {markers.count} markers ({seconds:.2f} s): joint angles "
        f"{rms:.2e} deg RMS ({worst:.2e} max), COM {com:.2e} mm max"
    )
    assert poses.shape == motion.poses.shape
    assert rms < ANGLE_RMS_DEG and com < COM_MAX_MM


def test_opensim_ik_skips_missing_markers(subject):
    # gaps: one of each segment's three markers missing in about a third of the frames. Two markers and the
    # ball joint still fix every segment, so the poses stay exact only if OpenSim leaves NaN markers out.
    model, motion, markers, om = subject
    rng = np.random.default_rng(7)
    p = markers.positions.copy()
    for seg in model.names:
        idx = [k for k, s in enumerate(markers.segments) if s == seg]
        gap = np.flatnonzero(rng.random(markers.frames) < 0.3)
        p[gap, rng.choice(idx, len(gap))] = np.nan
    gappy = MarkerSet(markers.names, markers.segments, p, markers.rate)
    poses = opensim_ik(om, gappy)
    rms, worst, com = _agreement(model, motion.poses, poses)
    print(
        f"\nOpenSim IK with {int(np.isnan(p[..., 0]).sum())} missing marker samples: joint angles {rms:.2e} deg RMS "
        f"({worst:.2e} max), COM {com:.2e} mm max"
    )
    assert np.all(np.isfinite(poses))
    assert rms < ANGLE_RMS_DEG and com < COM_MAX_MM


@pytest.fixture(scope="module")
def lab_trial():
    """One second of the humanoid at 100 Hz with 1.5 mm marker noise, and the same with gaps: 8 markers missing
    for 8 frames (0.08 s) each, mid-motion."""
    model = humanoid()
    names, segments, attachments = humanoid_markers(model)
    motion = simulate_motion(model, seconds=1.0, rate=100)
    segment_of = np.array([model.index(s) for s in segments])
    noisy = record_markers(motion, segment_of, attachments, names, segments, noise=0.0015)
    rng = np.random.default_rng(7)
    p = noisy.positions.copy()
    for k in rng.choice(len(names), 8, replace=False):
        t0 = rng.integers(15, 80)
        p[t0 : t0 + 8, k] = np.nan
    gappy = MarkerSet(names, segments, p, noisy.rate)
    return model, motion, attachments, build_opensim_model(model, names, segments, attachments), noisy, gappy


@pytest.mark.parametrize("case", ["noisy", "gaps"])
def test_artic_tracking_is_within_opensim_ik_error(lab_trial, case):
    """The issue's oracle: on the same markers (true model), artic's tracking (its default 6 Hz low-pass) recovers
    the joint angles at least as well as OpenSim's IK on those markers as given (measured: 0.43 vs 0.95 deg RMS
    noisy, 0.53 vs 0.99 with gaps). OpenSim on the markers artic's low-pass gives is a little closer still (0.37 and
    0.42 deg): the filter does most of the work, and the soft tracking loses a little to exact IK."""
    from artic.mocap import lowpass_markers, track_markers

    model, motion, attachments, om, noisy, gappy = lab_trial
    markers = noisy if case == "noisy" else gappy
    truth = relative_rotations(model, motion.poses)
    mid = slice(10, -10)  # both start from a guess and end at the recording's edge

    def rms(poses):
        return np.degrees(np.sqrt(np.mean((relative_rotations(model, poses) - truth)[mid] ** 2)))

    artic_rms = rms(track_markers(model, markers, attachments).poses)
    osim_raw = rms(opensim_ik(om, markers))
    osim_filtered = rms(opensim_ik(om, lowpass_markers(markers)))
    print(f"\n{case}: artic {artic_rms:.2f} deg RMS, OpenSim IK {osim_raw:.2f}, low-passed first {osim_filtered:.2f}")
    assert artic_rms <= osim_raw
    assert artic_rms < 1.5 * osim_filtered


def test_clean_markers_artic_against_opensim(subject):
    """Clean markers, true model: OpenSim's IK is exact (1e-4 deg RMS); artic's tracking is a simulation pulled by
    soft marker springs and lags by a little: within 0.15 deg RMS (measured 0.05) after its start settles. On clean
    data artic is NOT within OpenSim's error; on noisy data and with gaps it is (the test above)."""
    from artic.mocap import track_markers

    model, motion, markers, _ = subject
    truth = relative_rotations(model, motion.poses)
    att = humanoid_markers(model)[2]
    tracked = track_markers(model, markers, att, cutoff=None).joint_angles
    rms = np.degrees(np.sqrt(np.mean((tracked - truth)[10:-10] ** 2)))
    print(f"\nclean: artic {rms:.3f} deg RMS")
    assert rms < 0.15
