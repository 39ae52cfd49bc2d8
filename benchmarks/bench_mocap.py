"""Marker tracking and fitting cost against OpenSim's inverse kinematics, on the same trials.

The trials: the synthetic 13-segment humanoid (artic.mocap.synthetic), each a different 1 s motion at 100 Hz with
1.5 mm marker noise (39 markers). Measured in one run:

* artic `track_markers`, one trial at a time (1 env, one CPU thread as OpenSim);
* artic `track_trials`, all --trials at once (one env per trial, every core of the machine);
* OpenSim 4.6 `InverseKinematicsSolver` (tests/support/opensim_oracle.py, accuracy 1e-8) on --osim-trials of them,
  one after the other (it runs one trial on one thread), extrapolated per frame;
* artic `fit_markers` on one trial (20 epochs of 32 frames, 8 envs), for scale.

Prints frames per second and the ratios, and the joint-angle error of each against the truth (artic low-passes the
markers first, OpenSim gets them as recorded). artic's batch runs its envs in chunks of at least 64 on as many
threads (one thread below 128 envs); OpenSim and artic's 1-env row use one.

    python -m benchmarks.bench_mocap [--trials 64] [--osim-trials 4]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np

from artic.core.parallel import _chunks, get_cpu_threads, set_cpu_threads
from artic.mocap import fit_markers, relative_rotations, track_markers
from artic.mocap.synthetic import humanoid, humanoid_markers, record_markers, simulate_motion
from artic.mocap.track import track_trials


def _trials(count: int):
    model = humanoid()
    names, segments, att = humanoid_markers(model)
    segment_of = np.array([model.index(s) for s in segments])
    motions = [simulate_motion(model, seconds=1.0, rate=100.0, seed=k) for k in range(count)]
    markers = [
        record_markers(mo, segment_of, att, names, segments, noise=0.0015, seed=k) for k, mo in enumerate(motions)
    ]
    return model, names, segments, att, motions, markers


def _angle_rms_deg(model, motions, poses_list) -> float:
    err = [
        relative_rotations(model, p)[10:-10] - relative_rotations(model, m.poses)[10:-10]
        for m, p in zip(motions, poses_list)
    ]
    return float(np.degrees(np.sqrt(np.mean(np.concatenate(err) ** 2))))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--osim-trials", type=int, default=4)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    model, names, segments, att, motions, markers = _trials(args.trials)
    frames = sum(m.frames for m in markers)
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, {args.trials} trials x {markers[0].frames} frames x "
        f"{markers[0].count} markers"
    )
    threads = get_cpu_threads()
    track_markers(model, markers[0], att)  # compile the kernels outside the timings

    set_cpu_threads(1)
    n1 = min(4, args.trials)
    start = time.perf_counter()
    one = [track_markers(model, m, att).poses for m in markers[:n1]]
    t_one = (time.perf_counter() - start) / sum(m.frames for m in markers[:n1])
    set_cpu_threads(threads)
    used = len(_chunks(args.trials, "cpu"))  # env chunks on the CPU: one thread each (one below 128 envs)
    start = time.perf_counter()
    batch = [r.poses for r in track_trials(model, markers, att)]
    t_batch = (time.perf_counter() - start) / frames

    rows = [
        ("artic track_markers, 1 env, 1 thread", 1 / t_one, _angle_rms_deg(model, motions[:n1], one)),
        (
            f"artic track_trials, {args.trials} envs, {used} thread(s)",
            1 / t_batch,
            _angle_rms_deg(model, motions, batch),
        ),
    ]
    try:
        from tests.support.opensim_oracle import build_opensim_model, opensim_ik
    except ImportError:
        print("OpenSim is not installed (pip install opensim): its rows are left out")
    else:
        om = build_opensim_model(model, names, segments, att)
        n = min(args.osim_trials, args.trials)
        start = time.perf_counter()
        osim = [opensim_ik(om, m) for m in markers[:n]]
        t_osim = (time.perf_counter() - start) / sum(m.frames for m in markers[:n])
        rows.append(("OpenSim 4.6 IK, 1 thread", 1 / t_osim, _angle_rms_deg(model, motions[:n], osim)))
    start = time.perf_counter()
    fit_markers(model, markers[0], np.zeros_like(att), epochs=20, num_envs=8)
    t_fit = time.perf_counter() - start

    ref = rows[2][1] if len(rows) > 2 else None
    print(f"{'':44s} {'frames/s':>10s} {'vs OpenSim':>11s} {'angles RMS [deg]':>17s}")
    for name, fps, err in rows:
        ratio = f"{fps / ref:10.2f}x" if ref else f"{'-':>11s}"
        print(f"{name:44s} {fps:10.0f} {ratio} {err:17.2f}")
    print(f"artic fit_markers, 1 trial (20 epochs x 32 frames, 8 envs): {t_fit:.1f} s")


if __name__ == "__main__":
    main()
