"""`artic view run.npz`: rebuild the 3D replay (one self-contained HTML page, artic.viewer) of a run that
`artic sim` saved. The run file holds the link poses `link_poses` (T, E, L, 7), the model `model` (a path or a
shipped model's name) and the time step `dt`; the model is read again for its shapes."""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

import numpy as np

from ..assets import model_path
from ..errors import ValidationError


def _read_run(path: Path) -> dict:
    if not path.is_file():
        raise ValidationError(f"artic view: no run file {path} (write one with artic sim --out {path.name})")
    try:
        with np.load(path, allow_pickle=False) as data:
            run = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise ValidationError(f"artic view: {path} is not a run file written by artic sim ({e})") from None
    missing = [k for k in ("link_poses", "model", "dt") if k not in run]
    if missing:
        raise ValidationError(
            f"artic view: {path} has no {', '.join(missing)} (it holds {', '.join(run) or 'nothing'})"
            "; runs from an older artic sim lack the link poses: run artic sim again"
        )
    return run


def _model(run: dict, run_path: Path) -> Path:
    """The run's model: as saved (a shipped name, or a path from where sim ran), else beside the run file."""
    name = str(run["model"])
    try:
        return model_path(name)
    except ValidationError:
        beside = run_path.parent / name
        if beside.is_file():
            return beside
        raise


def cmd_view(args: argparse.Namespace) -> int:
    from ..viewer import write_replay

    run_path = Path(args.run)
    run = _read_run(run_path)
    out = Path(args.html) if args.html else run_path.with_suffix(".html")
    poses = np.asarray(run["link_poses"])
    if poses.ndim != 4:
        raise ValidationError(
            f"artic view: {run_path}: link_poses must be (frames, envs, links, 7), got shape {poses.shape}"
        )
    if not 0 <= args.env < poses.shape[1]:
        raise ValidationError(
            f"artic view: {run_path} keeps the link poses of envs 0 to {poses.shape[1] - 1}, not env {args.env}; "
            "run artic sim with --record-envs 0 (all envs) or a larger count to replay it"
        )
    model = _model(run, run_path)
    write_replay(out, model, poses, float(run["dt"]), env=args.env, title=args.title or model.stem)
    print(f"replay of {model.stem} ({len(poses)} frames, env {args.env} of {poses.shape[1]}) written to {out}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view", help="write the 3D replay (one HTML file, no network needed) of a run saved by artic sim"
    )
    p.add_argument("run", help="run file written by artic sim --out (npz)")
    p.add_argument("--html", default="", help="replay to write; default: the run file's name with .html")
    p.add_argument("--env", type=int, default=0, help="which env to show (default 0)")
    p.add_argument("--title", default="", help="page title (default: the model's name)")
    p.set_defaults(func=cmd_view)
