"""`artic fit MARKERS --model MODEL` and `artic track MARKERS --model MODEL` (artic/mocap, docs/marker_fitting.md).

MARKERS is a C3D file or an .npz with `names` (n,), `positions` (T, n, 3) [m] and `rate` [Hz]. MODEL is an MJCF
segment model (mocap/model_file.py): bodies with ball joints, one `<site>` per marker, named as in MARKERS, on the
segment it is attached to. Markers of MARKERS without a site are reported and left out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..errors import ArticError


def _load(markers_path: str, model_path: str):
    from ..mocap import MarkerSet, load_segment_model, read_c3d

    model, site_names, site_segments, attachments = load_segment_model(model_path)
    path = Path(markers_path)
    if path.suffix.lower() == ".c3d":
        names, positions, rate = read_c3d(path)
    elif path.suffix.lower() == ".npz":
        if not path.is_file():
            raise ArticError(f"marker file '{path}' does not exist")
        try:
            data = np.load(path, allow_pickle=False)
            names, positions, rate = [str(x) for x in data["names"]], data["positions"], data["rate"]
            if rate.ndim != 0:
                raise ValueError(f"rate must be one number, got an array of shape {rate.shape}")
            rate = float(rate)
        except (KeyError, ValueError, TypeError, OSError) as e:
            raise ArticError(
                f"marker file '{path}': needs arrays names (n,), positions (T, n, 3) [m] and rate [Hz] ({e})"
            ) from None
    else:
        raise ArticError(f"marker file '{path}': expected a .c3d or .npz file")
    if not site_names:
        raise ArticError(f"segment model '{model_path}' has no <site>s; give each marker a site on its segment")
    index = {n: k for k, n in enumerate(names)}
    missing = [n for n in site_names if n not in index]
    if missing:
        raise ArticError(
            f"segment model '{model_path}': sites {missing[:5]} are not markers of '{path}' (markers: {names[:8]}...)"
        )
    unused = [n for n in names if n not in set(site_names)]
    if unused:
        print(f"warning: markers without a site in the model, left out: {unused}")
    positions = np.asarray(positions)
    sel = [index[n] for n in site_names]
    if positions.ndim != 3 or positions.shape[1] != len(names):
        raise ArticError(f"marker file '{path}': positions must be (T, {len(names)}, 3), got {positions.shape}")
    markers = MarkerSet(site_names, site_segments, positions[:, sel], rate)
    return model, markers, attachments


def _out_dir(p: str) -> Path:
    out = Path(p)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / ".write-test").write_text("")
        (out / ".write-test").unlink()
    except OSError as e:
        raise ArticError(f"--out '{out}': cannot write there ({e})") from None
    return out


def cmd_fit(args: argparse.Namespace) -> int:
    from ..mocap import fit_markers, save_segment_model

    out = _out_dir(args.out)
    model, markers, attachments = _load(args.markers, args.model)
    start = np.zeros_like(attachments) if args.from_com else attachments
    res = fit_markers(
        model,
        markers,
        start,
        epochs=args.epochs,
        num_envs=args.envs,
        relax_steps=args.relax_steps,
        eta_m=args.eta_m,
        eta_l=args.eta_l,
        progress=True,
    )
    save_segment_model(out / "fitted.xml", res.model, markers.names, markers.segments, res.attachments)
    lines = [
        f"markers {markers.count}, frames used {len(res.frames)} of {markers.frames}, epochs {args.epochs}",
        f"marker RMS after relaxation: first epoch {1e3 * res.rms[0]:.2f} mm, last {1e3 * res.rms[-1]:.2f} mm",
        f"joint gap RMS: first epoch {1e3 * res.joint_gap[0]:.2f} mm, last {1e3 * res.joint_gap[-1]:.2f} mm",
        "per marker RMS [mm]: " + ", ".join(f"{n} {1e3 * e:.1f}" for n, e in zip(markers.names, res.marker_rms)),
    ]
    (out / "fit_report.txt").write_text("\n".join(lines) + "\n")
    _plot_fit(out / "fit_report.png", res)
    print("\n".join(lines[:3]))
    print(f"wrote {out / 'fitted.xml'}, {out / 'fit_report.txt'}, {out / 'fit_report.png'}")
    return 0


def cmd_track(args: argparse.Namespace) -> int:
    from ..mocap import track_markers

    out = _out_dir(args.out)
    model, markers, attachments = _load(args.markers, args.model)
    res = track_markers(model, markers, attachments)
    np.savez(
        out / "track.npz",
        dt=res.dt,
        segments=np.array(model.names),
        joints=np.array(model.joint_names),
        poses=res.poses,
        joint_angles=res.joint_angles,
        joint_forces=res.joint_forces,
        joint_torques=res.joint_torques,
        residual=res.residual,
        marker_forces=res.marker_forces,
        marker_error=res.marker_error,
    )
    _plot_track(out / "track.png", res, model.joint_names)
    err = res.marker_error
    print(
        f"frames {markers.frames} at {markers.rate:g} Hz; marker error median {1e3 * np.nanmedian(err):.2f}"
        f" mm, max {1e3 * np.nanmax(res.marker_error):.2f} mm; peak joint torque "
        f"{np.abs(res.joint_torques).max():.1f} N m; peak residual force {np.abs(res.residual[:, :3]).max():.1f} N"
    )
    print(f"wrote {out / 'track.npz'}, {out / 'track.png'}")
    return 0


def _plot_fit(path, res):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.semilogy(np.arange(1, len(res.rms) + 1), 1e3 * res.rms, "o-", label="marker RMS")
    ax.semilogy(np.arange(1, len(res.rms) + 1), 1e3 * np.maximum(res.joint_gap, 1e-6), "s-", label="joint gap RMS")
    ax.set_xlabel("epoch")
    ax.set_ylabel("[mm]")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_track(path, res, joint_names):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(len(res.poses)) * res.dt
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for j, name in enumerate(joint_names):
        axes[0].plot(t, np.linalg.norm(res.joint_angles[:, j], axis=1), label=name)
        axes[1].plot(t, np.linalg.norm(res.joint_torques[:, j], axis=1))
    axes[2].plot(t, np.linalg.norm(res.residual[:, :3], axis=1), label="residual force [N]")
    axes[2].plot(t, np.linalg.norm(res.residual[:, 3:], axis=1), label="residual torque [N m]")
    axes[0].set_ylabel("|joint angle| [rad]")
    axes[1].set_ylabel("|joint torque| [N m]")
    axes[2].set_xlabel("time [s]")
    axes[0].legend(fontsize=6, ncol=4)
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    d = "(default: %(default)s)"
    f = sub.add_parser("fit", help="fit a segment model's joint anchors and marker attachments to marker data")
    f.add_argument("markers", help="marker file: .c3d, or .npz with names, positions (T, n, 3) [m], rate [Hz]")
    f.add_argument("--model", required=True, help="MJCF segment model with one <site> per marker")
    f.add_argument("--out", default="fit_out", help=f"output directory {d}")
    f.add_argument("--epochs", type=int, default=20, help=f"passes over the fitted frames {d}")
    f.add_argument("--envs", type=int, default=8, help=f"frames relaxed at once {d}")
    f.add_argument("--relax-steps", type=int, default=20, help=f"simulation steps per frame {d}")
    f.add_argument("--eta-m", type=float, default=1.0, help=f"marker attachment learning rate {d}")
    f.add_argument("--eta-l", type=float, default=1.0, help=f"joint anchor learning rate {d}")
    f.add_argument("--from-com", action="store_true", help="start every marker at its segment's COM, not its site")
    f.set_defaults(func=cmd_fit)
    t = sub.add_parser("track", help="drive a fitted segment model through marker data; joint angles and torques")
    t.add_argument("markers", help="marker file: .c3d, or .npz with names, positions (T, n, 3) [m], rate [Hz]")
    t.add_argument("--model", required=True, help="MJCF segment model with one <site> per marker (e.g. fitted.xml)")
    t.add_argument("--out", default="track_out", help=f"output directory {d}")
    t.set_defaults(func=cmd_track)
