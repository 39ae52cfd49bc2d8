"""`artic fit MARKERS... --model MODEL` and `artic track MARKERS... --model MODEL` (artic/mocap,
docs/marker_fitting.md).

Several marker files are several trials of one model: each gets its folder under --out (named after its file) and
a row in the summary table printed at the end and written to --out/summary.csv; a trial that fails is a row that
says why, the others are done. `--ray [ADDRESS]` runs the trials as Ray tasks (artic.distributed.map_scenes): on a
cluster, or on one started on this machine.

Each MARKERS is a C3D file or an .npz with `names` (n,), `positions` (T, n, 3) [m] and `rate` [Hz]. MODEL is an MJCF
segment model (mocap/model_file.py): bodies with ball joints, one `<site>` per marker, named as in MARKERS, on the
segment it is attached to. Markers of MARKERS without a site are reported and left out.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from ..errors import ArticError
from .plots import LEGEND_BESIDE, colours, log_if_wide


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


def _fit_trial(config: dict) -> dict:
    """One `artic fit` trial (a Ray task or a call here): fit, write its files into config["out"], return its
    summary row."""
    from ..mocap import fit_markers, save_segment_model

    out = Path(config["out"])
    model, markers, attachments = _load(config["markers"], config["model"])
    start = np.zeros_like(attachments) if config["from_com"] else attachments
    res = fit_markers(
        model,
        markers,
        start,
        epochs=config["epochs"],
        num_envs=config["envs"],
        relax_steps=config["relax_steps"],
        eta_m=config["eta_m"],
        eta_l=config["eta_l"],
        progress=config["progress"],
    )
    save_segment_model(out / "fitted.xml", res.model, markers.names, markers.segments, res.attachments)
    lines = [
        f"markers {markers.count}, frames used {len(res.frames)} of {markers.frames}, epochs {config['epochs']}",
        f"marker RMS after relaxation: first epoch {1e3 * res.rms[0]:.2f} mm, last {1e3 * res.rms[-1]:.2f} mm",
        f"joint gap RMS: first epoch {1e3 * res.joint_gap[0]:.2f} mm, last {1e3 * res.joint_gap[-1]:.2f} mm",
        "per marker RMS [mm]: " + ", ".join(f"{n} {1e3 * e:.1f}" for n, e in zip(markers.names, res.marker_rms)),
    ]
    (out / "fit_report.txt").write_text("\n".join(lines) + "\n")
    _plot_fit(out / "fit_report.png", res)
    return {
        "frames": markers.frames,
        "marker RMS first [mm]": 1e3 * res.rms[0],
        "marker RMS last [mm]": 1e3 * res.rms[-1],
        "joint gap last [mm]": 1e3 * res.joint_gap[-1],
        "lines": lines[:3],
        "wrote": [str(out / n) for n in ("fitted.xml", "fit_report.txt", "fit_report.png")],
    }


def _track_trial(config: dict) -> dict:
    """One `artic track` trial (a Ray task or a call here): track, write its files into config["out"], return its
    summary row."""
    from ..mocap import diagnose_markers, neutral_at, track_markers
    from ..mocap.diagnostics import suspect_message

    out = Path(config["out"])
    model, markers, attachments = _load(config["markers"], config["model"])
    cutoff = config.get("cutoff", 6.0) or None
    if config.get("static"):  # angles from the static trial's posture: zero there
        _, static, _ = _load(config["static"], config["model"])
        model, attachments = neutral_at(model, attachments, static, cutoff)
    res = track_markers(model, markers, attachments, cutoff=cutoff)
    # returned in the row, not warned: a Ray task's warnings would stay in the worker's log
    suspects = (
        suspect_message(diagnose_markers(model, markers, attachments, res.poses))
        if config.get("diagnose", True)
        else None
    )
    np.savez(
        out / "track.npz",
        dt=res.dt,
        segments=np.array(model.names),
        joints=np.array(model.joint_names),
        poses=res.poses,
        joint_angles=res.joint_angles,
        joint_forces=res.joint_forces,
        joint_torques=res.joint_torques,
        reaction_forces=res.reaction_forces,
        markers_seen=res.markers_seen,
        residual=res.residual,
        marker_forces=res.marker_forces,
        marker_error=res.marker_error,
    )
    _plot_track(out / "track.png", res, model.joint_names)
    err = res.marker_error
    row = {
        "frames": markers.frames,
        "marker error median [mm]": 1e3 * float(np.nanmedian(err)),
        "marker error max [mm]": 1e3 * float(np.nanmax(err)),
        "peak joint torque [N m]": float(np.abs(res.joint_torques).max()),
        "peak residual force [N]": float(np.abs(res.residual[1:, :3]).max()),  # frame 0: the start settles
        "markers on a wrong segment?": len(suspects.splitlines()) if suspects else 0,
    }
    row["lines"] = [
        f"frames {markers.frames} at {markers.rate:g} Hz; marker error median {row['marker error median [mm]']:.2f}"
        f" mm, max {row['marker error max [mm]']:.2f} mm; peak joint torque {row['peak joint torque [N m]']:.1f} N m;"
        f" peak residual force {row['peak residual force [N]']:.1f} N"
        + (f"; markers low-passed at {cutoff:g} Hz" if cutoff else "; markers not filtered")
    ]
    row["lines"] += [f"warning: {line}" for line in (suspects or "").splitlines()]
    row["wrote"] = [str(out / "track.npz"), str(out / "track.png")]
    return row


def _trials(args: argparse.Namespace, options: dict) -> list[dict]:
    """One configuration per marker file: absolute paths (a Ray worker runs elsewhere), its output folder made here
    (--out itself for one file, --out/<file stem> for several)."""
    files = [Path(m).resolve() for m in args.markers]
    stems = [f.stem for f in files]
    names = [s if stems.count(s) == 1 else f"{s}_{k}" for k, s in enumerate(stems)]
    outs = [Path(args.out)] if len(files) == 1 else [Path(args.out) / n for n in names]
    model = str(Path(args.model).resolve())
    return [
        dict(options, trial=n, markers=str(f), model=model, out=str(_out_dir(o).resolve()))
        for n, f, o in zip(names, files, outs)
    ]


def _run_trials(fn, args: argparse.Namespace, configs: list[dict]) -> int:
    """One trial here as before (its errors exit 2); several, or --ray, through map_scenes (on the cluster at
    --ray, 'local' for one on this machine), then the summary table of all trials, also written to --out/summary.csv.
    Exit 1 when a trial failed (the table says which and why)."""
    from ..distributed import map_scenes

    if len(configs) == 1 and args.ray is None:
        row = fn(configs[0])
        print("\n".join(row["lines"]))
        print("wrote " + ", ".join(row["wrote"]))
        return 0
    results = map_scenes(fn, configs, address=args.ray, errors="return")
    rows = [
        {"trial": c["trial"], "status": "ok" if isinstance(r, dict) else f"failed: {r.error}"}
        for c, r in zip(configs, results)
    ]
    columns = [k for r in results if isinstance(r, dict) for k in r if k not in ("lines", "wrote")]
    columns = list(dict.fromkeys(columns))
    for row, r in zip(rows, results):
        row.update({k: (f"{r[k]:.4g}" if isinstance(r, dict) else "") for k in columns})
    header = ["trial", *columns, "status"]
    widths = [max(len(h), *(len(str(row[h])) for row in rows)) for h in header]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    for row in rows:
        print("  ".join(str(row[h]).ljust(w) for h, w in zip(header, widths)).rstrip())
    summary = Path(args.out) / "summary.csv"
    with open(summary, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    failed = sum(not isinstance(r, dict) for r in results)
    print(f"{len(configs) - failed} of {len(configs)} trials done; wrote {summary} and one folder per trial")
    return 1 if failed else 0


def cmd_fit(args: argparse.Namespace) -> int:
    options = {
        "epochs": args.epochs,
        "envs": args.envs,
        "relax_steps": args.relax_steps,
        "eta_m": args.eta_m,
        "eta_l": args.eta_l,
        "from_com": args.from_com,
        "progress": len(args.markers) == 1 and args.ray is None,
    }
    return _run_trials(_fit_trial, args, _trials(args, options))


def cmd_track(args: argparse.Namespace) -> int:
    static = str(Path(args.static).resolve()) if args.static else ""
    options = {"cutoff": args.cutoff, "static": static, "diagnose": not args.no_diagnose}
    return _run_trials(_track_trial, args, _trials(args, options))


def _plot_fit(path, res):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = np.arange(1, len(res.rms) + 1)
    marker, gap = 1e3 * res.rms, 1e3 * np.maximum(res.joint_gap, 1e-6)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    ax.plot(epochs, marker, "o-", color=colours(2)[0], label="marker RMS")
    ax.plot(epochs, gap, "s-", color=colours(2)[1], label="joint gap RMS")
    log_if_wide(ax, np.concatenate([marker, gap]))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole
    ax.set_title("Marker fit: errors after each epoch's relaxation", fontsize=10)
    ax.set_xlabel("epoch")
    ax.set_ylabel("[mm]")
    ax.legend(**LEGEND_BESIDE)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_track(path, res, joint_names):
    """Per joint, the rotation angle (the size of the ball joint's rotation) and the torque's size, with one
    legend beside both (same colours), and the residual wrench the segment model could not explain."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(len(res.poses)) * res.dt
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    for colour, (j, name) in zip(colours(len(joint_names)), enumerate(joint_names)):
        axes[0].plot(t, np.linalg.norm(res.joint_angles[:, j], axis=1), color=colour, label=name)
        axes[1].plot(t, np.linalg.norm(res.joint_torques[:, j], axis=1), color=colour)
    residual = colours(2)
    axes[2].plot(t, np.linalg.norm(res.residual[:, :3], axis=1), color=residual[0], label="residual force [N]")
    axes[2].plot(t, np.linalg.norm(res.residual[:, 3:], axis=1), color=residual[1], label="residual torque [N m]")
    axes[0].set_title("joint rotation angle of each segment against its parent", fontsize=9)
    axes[1].set_title("joint torque of each segment (size)", fontsize=9)
    axes[2].set_title("residual wrench on the root (what the joints and gravity do not explain)", fontsize=9)
    axes[0].set_ylabel("[rad]")
    axes[1].set_ylabel("[N m]")
    axes[2].set_ylabel("[N] or [N m]")
    axes[2].set_xlabel("time [s]")
    axes[0].legend(ncol=1 + len(joint_names) // 16, **LEGEND_BESIDE)
    axes[2].legend(**LEGEND_BESIDE)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


MARKERS_HELP = (
    "marker file(s): .c3d, or .npz with names, positions (T, n, 3) [m], rate [Hz]; several are several trials, "
    "each in --out/<file stem>, with a summary table"
)
RAY_HELP = (
    "run the trials as Ray tasks: on the cluster at ADDRESS (host:port, or 'auto'), or without ADDRESS on a Ray "
    "cluster started on this machine (pip install 'artic[ray]'; docs/distributed.md)"
)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    d = "(default: %(default)s)"
    f = sub.add_parser("fit", help="fit a segment model's joint anchors and marker attachments to marker data")
    f.add_argument("markers", nargs="+", help=MARKERS_HELP)
    f.add_argument("--model", required=True, help="MJCF segment model with one <site> per marker")
    f.add_argument("--out", default="fit_out", help=f"output directory {d}")
    f.add_argument("--epochs", type=int, default=20, help=f"passes over the fitted frames {d}")
    f.add_argument("--envs", type=int, default=8, help=f"frames relaxed at once {d}")
    f.add_argument("--relax-steps", type=int, default=20, help=f"simulation steps per frame {d}")
    f.add_argument("--eta-m", type=float, default=1.0, help=f"marker attachment learning rate {d}")
    f.add_argument("--eta-l", type=float, default=1.0, help=f"joint anchor learning rate {d}")
    f.add_argument("--from-com", action="store_true", help="start every marker at its segment's COM, not its site")
    f.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=RAY_HELP)
    f.set_defaults(func=cmd_fit)
    t = sub.add_parser("track", help="drive a fitted segment model through marker data; joint angles and torques")
    t.add_argument("markers", nargs="+", help=MARKERS_HELP)
    t.add_argument("--model", required=True, help="MJCF segment model with one <site> per marker (e.g. fitted.xml)")
    t.add_argument("--out", default="track_out", help=f"output directory {d}")
    t.add_argument(
        "--cutoff",
        type=float,
        default=6.0,
        help=f"low-pass of the markers before tracking [Hz]: zero-lag 4th-order Butterworth; 0 tracks them raw {d}",
    )
    t.add_argument(
        "--static",
        default="",
        metavar="MARKERS",
        help="a static trial (same markers): joint angles are measured from its posture (zero there)",
    )
    t.add_argument("--no-diagnose", action="store_true", help="skip the check for markers on the wrong segment")
    t.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help=RAY_HELP)
    t.set_defaults(func=cmd_track)
