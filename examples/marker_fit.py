"""Fit a body model to motion-capture markers, then drive it with them (the ODE paper,
sections S2 and S1; docs/marker_fitting.md).

A synthetic subject whose truth is known: a 13-segment humanoid (artic.mocap.synthetic) moves freely for a second,
its 39 markers recorded at 100 Hz with 2 mm noise and 3 mm soft-tissue wobble and written to a C3D file. Fitting
starts from every marker at its segment's COM and every joint anchor moved 2.5 cm; it relaxes 8 frames at once,
re-attaches the markers and moves the anchors, epoch after epoch. The fitted model is saved as MJCF, compared with
the truth, and then driven through the clean markers to recover joint angles and the torques that produced them,
which are compared with inverse dynamics of the known motion.

    python examples/marker_fit.py [--epochs 30] [--out marker_fit_out]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from artic.mocap import (
    ArticulationEvaluator,
    MarkerSet,
    compare_segment_points,
    fit_markers,
    neutral_at,
    read_c3d,
    relative_rotations,
    save_segment_model,
    segment_points,
    track_markers,
    write_c3d,
)
from artic.mocap.synthetic import humanoid, humanoid_markers, record_markers, simulate_motion


def perturbed(model, distance: float, seed: int = 3):
    """A copy of `model` with every joint anchor (both ends) moved `distance` [m] in a random direction."""
    rng = np.random.default_rng(seed)
    out = model.copy()
    moves = rng.normal(size=(2,) + model.anchors()[0].shape)
    moves *= distance / np.linalg.norm(moves, axis=2, keepdims=True)
    ap, ac = model.anchors()
    out.set_anchors(ap + moves[0], ac + moves[1])
    return out


def run(epochs: int = 30, out: str = "marker_fit_out", plot: bool = True) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    truth = humanoid()
    names, segments, attachments = humanoid_markers(truth)
    segment_of = np.array([truth.index(s) for s in segments])
    motion = simulate_motion(truth, seconds=1.0, rate=100.0)
    recorded = record_markers(motion, segment_of, attachments, names, segments, noise=0.002, wobble=0.003)
    write_c3d(out / "markers.c3d", recorded)
    c3d_names, positions, rate = read_c3d(out / "markers.c3d")
    markers = MarkerSet(c3d_names, segments, positions, rate)

    start = perturbed(truth, 0.025)
    fit = fit_markers(start, markers, np.zeros_like(attachments), epochs=epochs, num_envs=8, progress=True)
    save_segment_model(out / "fitted.xml", fit.model, names, segments, fit.attachments)
    true_pts = segment_points(truth, attachments, segment_of)
    before = np.concatenate(compare_segment_points(segment_points(start, 0 * attachments, segment_of), true_pts))
    after = np.concatenate(compare_segment_points(segment_points(fit.model, fit.attachments, segment_of), true_pts))

    clean = record_markers(motion, segment_of, attachments, names, segments)
    track = track_markers(truth, clean, attachments, cutoff=None)  # clean: nothing to filter (S1 as such)
    # the lab's way: the fitted model, re-based on a static trial (the subject standing in the reference posture for
    # 0.2 s, same noise), tracks the noisy markers, low-passed at 6 Hz; its angles are then the truth's
    standing = replace(motion, poses=np.repeat(motion.poses[:1], 20, axis=0))
    static = record_markers(standing, segment_of, attachments, names, segments, noise=0.002, wobble=0.003, seed=2)
    based, based_att = neutral_at(fit.model, fit.attachments, static)
    lab = track_markers(based, markers, based_att)
    raw_lab = track_markers(fit.model, markers, fit.attachments)
    skip = 10  # the first 0.1 s: the start from two frames' best-fit poses settles
    true_angles = relative_rotations(truth, motion.poses)
    angle_err = np.abs(track.joint_angles - true_angles)[skip:]
    lab_err = (lab.joint_angles - true_angles)[skip:-skip]
    raw_err = (raw_lab.joint_angles - true_angles)[skip:-skip]
    ev = ArticulationEvaluator(truth, clean.frames - 1)
    ev.set_poses(motion.poses[:-1])
    _, id_joints = ev.inverse_dynamics(motion.root_velocity[:-1], motion.joint_velocity[:-1], motion.acceleration)
    id_joints = id_joints.reshape(track.joint_torques[:-1].shape)
    torque_err = (track.joint_torques[:-1] - id_joints)[skip:]
    figures = {
        "marker_rms_first_mm": 1e3 * fit.rms[0],
        "marker_rms_last_mm": 1e3 * fit.rms[-1],
        "point_error_start_mm": 1e3 * np.sqrt(np.mean(before**2)),
        "point_error_rms_mm": 1e3 * np.sqrt(np.mean(after**2)),
        "point_error_max_mm": 1e3 * after.max(),
        "angle_error_rms_deg": np.degrees(np.sqrt(np.mean(angle_err**2))),
        "angle_error_max_deg": np.degrees(angle_err.max()),
        "fitted_angle_error_rms_deg": np.degrees(np.sqrt(np.mean(lab_err**2))),
        "fitted_unbased_angle_error_rms_deg": np.degrees(np.sqrt(np.mean(raw_err**2))),
        "torque_error_rms_nm": np.sqrt(np.mean(torque_err**2)),
        "torque_error_max_nm": np.abs(torque_err).max(),
        "torque_peak_nm": np.abs(id_joints).max(),
        "residual_force_max_n": np.abs(track.residual[skip:-1, :3]).max(),
        "weight_n": 9.81 * truth.total_mass,
    }
    print(
        f"\nfit: marker RMS {figures['marker_rms_first_mm']:.1f} -> {figures['marker_rms_last_mm']:.2f} mm; anchors "
        f"and attachments (up to each segment's frame) {figures['point_error_start_mm']:.1f} -> "
        f"{figures['point_error_rms_mm']:.2f} mm RMS, {figures['point_error_max_mm']:.2f} mm max"
    )
    print(
        f"track: joint angles {figures['angle_error_rms_deg']:.3f} deg RMS "
        f"({figures['angle_error_max_deg']:.2f} max);"
        f" joint torques vs inverse dynamics {figures['torque_error_rms_nm']:.3f} N m RMS "
        f"({figures['torque_error_max_nm']:.2f} max, peak torque {figures['torque_peak_nm']:.1f} N m); residual "
        f"force <= {figures['residual_force_max_n']:.1f} N (weight {figures['weight_n']:.0f} N)"
    )
    print(
        f"lab: the fitted model on the noisy markers (6 Hz low-pass), re-based on a static trial: joint angles "
        f"{figures['fitted_angle_error_rms_deg']:.2f} deg RMS from the truth (without the static trial "
        f"{figures['fitted_unbased_angle_error_rms_deg']:.1f} deg)"
    )
    if plot:
        _plot(out / "marker_fit.png", fit, track, id_joints, truth.joint_names)
        print(f"wrote {out / 'fitted.xml'}, {out / 'markers.c3d'}, {out / 'marker_fit.png'}")
    return figures


def _plot(path, fit, track, id_joints, joint_names):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    epochs = np.arange(1, len(fit.rms) + 1)
    axes[0].semilogy(epochs, 1e3 * fit.rms, "o-", label="marker RMS")
    axes[0].semilogy(epochs, 1e3 * fit.joint_gap, "s-", label="joint gap RMS")
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("[mm]")
    axes[0].set_title("fitting")
    axes[0].legend()
    t = np.arange(len(id_joints)) * track.dt
    for j in (2, 6, 7):  # shoulder, hip, knee
        axes[1].plot(t, track.joint_torques[:-1, j, 0], label=f"{joint_names[j]} x (tracked)")
        axes[1].plot(t, id_joints[:, j, 0], "k--", lw=0.8)
    axes[1].set_xlabel("time [s]")
    axes[1].set_ylabel("joint torque [N m]")
    axes[1].set_title("tracking: torques (dashed: inverse dynamics)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--out", default="marker_fit_out")
    a = ap.parse_args()
    run(a.epochs, a.out)
