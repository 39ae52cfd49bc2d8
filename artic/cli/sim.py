"""`artic sim`: simulate a URDF or MJCF file (or a shipped model) with PD-driven joints, write the trajectory and a
plot. MJCF models bring their floor and gravity (e.g. `artic sim ant`); URDF robots are fixed to the world.

Every dof gets an implicit force drive (kp, kd, max force = the URDF effort) towards its target: the values given
with --target (one number per dof, or name=value pairs), else 40 % of the way to each limited dof's upper limit
(0.5 for unlimited ones) so that the default run visibly moves. All envs run the same command.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ..assets import load_model, model_path
from ..description.articulation import Drive
from ..description.types import DriveType, Motion
from ..cache import CacheFlag
from ..errors import ValidationError
from ..scene import Scene
from ..status import FINITE_LIMIT
from ..step import SolverType


def _targets(art, spec) -> np.ndarray:
    names = art.dof_names
    if not spec:
        return np.array([0.4 * j.get_limit_params(ax).high if j.get_motion(ax) == Motion.LIMITED else 0.5
                         for j, ax in art.dof_list()])
    if all("=" in s for s in spec):
        out = np.zeros(len(names))
        for s in spec:
            key, _, value = s.partition("=")
            if key not in names:
                raise ValidationError(f"--target: no dof named '{key}' (dofs: {', '.join(names)})")
            out[names.index(key)] = float(value)
        return out
    try:
        values = np.array([float(s) for s in spec])
    except ValueError:
        raise ValidationError("--target takes numbers (one per dof) or name=value pairs") from None
    if values.shape != (len(names),):
        raise ValidationError(f"--target: {len(values)} values given for {len(names)} dofs ({', '.join(names)})")
    return values


def _progress(k: int, total: int, start: float):
    """A text progress bar on stderr, shown once a run has taken more than a second."""
    if time.perf_counter() - start < 1.0 or (k % max(1, total // 50) and k != total):
        return
    frac = k / total
    bar = "#" * int(30 * frac)
    sys.stderr.write(f"\r  [{bar:<30s}] {100 * frac:5.1f}%  {time.perf_counter() - start:6.1f} s")
    if k == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _plot(path, t, q, targets, names, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for d, name in enumerate(names):
        line, = ax.plot(t, q[:, 0, d], label=name)
        ax.axhline(targets[d], color=line.get_color(), linestyle="--", linewidth=0.8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("joint position [rad or m]")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _check_args(args):
    """Refuse what cannot run, and outputs that cannot be written, before any time is spent simulating."""
    if not (args.dt > 0 and args.seconds > 0 and args.envs >= 1):  # NaN fails too
        raise ValidationError("--dt and --seconds must be positive and --envs at least 1")
    if int(round(args.seconds / args.dt)) < 1:
        raise ValidationError(f"--seconds {args.seconds:g} is less than one step of --dt {args.dt:g}; give at least "
                              "one step")
    for flag, path in (("--out", args.out), ("--plot", args.plot)):
        if path:
            folder = Path(path).resolve().parent
            if not folder.is_dir() or not os.access(folder, os.W_OK):
                raise ValidationError(f"{flag} {path}: the folder {folder} does not exist or is not writable")


def cmd_sim(args) -> int:
    _check_args(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        art, statics, gravity = load_model(model_path(args.model), fix_base=not args.floating)
    for w in caught:  # what the import dropped or repaired is said, not hidden
        print(f"warning: {w.message}", file=sys.stderr)
    targets = _targets(art, args.target)
    for j, ax in art.dof_list():
        effort = j.get_drive_params(ax).max_force or 1e6
        j.set_drive_params(ax, Drive(args.kp, args.kd, effort, DriveType.FORCE))
    art.set_solver_iteration_counts(args.position_iterations, args.velocity_iterations)
    solver = SolverType.TGS if args.solver == "tgs" else SolverType.PGS
    scene = Scene(args.envs, solver_type=solver, **({"gravity": gravity} if gravity else {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for actor in statics:
            scene.add_actor(actor)
        scene.add_articulation(art)  # the mass check's repairs warn here
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    cache = art.create_cache()
    cache.joint_target_positions[:] = targets
    art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    steps = int(round(args.seconds / args.dt))
    t = np.arange(1, steps + 1) * args.dt
    q = np.zeros((steps, args.envs, art.dof_count), np.float32)
    qd = np.zeros_like(q)
    print(f"simulating {art.name}: {art.dof_count} dofs, {args.envs} env(s), {solver.name}, dt {args.dt:g} s, "
          f"{steps} steps ({args.seconds:g} s)" + (f", {len(statics)} static actor(s)" if statics else ""))
    start = time.perf_counter()
    lost_at = np.full(args.envs, steps)  # the step at which each env's state went non-finite
    for k in range(steps):
        scene.step(args.dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        q[k], qd[k] = cache.joint_position, cache.joint_velocity
        lost_at[(lost_at == steps) & scene.env_status] = k
        _progress(k + 1, steps, start)
    wall = time.perf_counter() - start
    print(f"done in {wall:.2f} s: {wall / steps * 1e6:.0f} us per step ({wall / steps / args.envs * 1e6:.1f} us "
          f"per env-step), {args.seconds * args.envs / wall:.1f}x real time over all envs")
    bad = scene.env_status
    finite = ~bad
    if finite.any():
        err = np.abs(q[-1, finite] - targets).max(axis=0)
        print("final |q - target| per dof (max over " + ("envs" if bad.sum() == 0 else "the finite envs") + "):")
        for name, e in zip(art.dof_names, err, strict=True):
            print(f"  {name:<28s} {e:.4g}")
    if bad.any():
        envs = np.flatnonzero(bad)
        first = int(lost_at.min())
        print(f"error: the state of {len(envs)} of {args.envs} env(s) went non-finite (NaN, inf or beyond "
              f"{FINITE_LIMIT:g}), the first at t = {t[first]:.4g} s; env(s) {envs[:8].tolist()}. Check the "
              "model's masses and inertias (artic info), the gains and the time step", file=sys.stderr)
    if args.out:
        np.savez(args.out, t=t, q=q, qd=qd, targets=targets, dof_names=np.array(art.dof_names), dt=args.dt)
        print(f"trajectory written to {args.out}")
    if args.plot:
        _plot(args.plot, t, q, targets, art.dof_names, f"{art.name}: joint positions ({solver.name}, "
              f"kp {args.kp:g}, kd {args.kd:g}); dashed: targets")
        print(f"plot written to {args.plot}")
    return 1 if bad.any() else 0


def add_parser(sub, shipped):
    p = sub.add_parser("sim", help="simulate a model with PD-driven joints; write a trajectory and a plot")
    p.add_argument("model", nargs="?", default="arm6",
                   help=f"URDF or MJCF path, or shipped model ({shipped}); default arm6")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--dt", type=float, default=1.0 / 120.0)
    p.add_argument("--envs", type=int, default=1)
    p.add_argument("--solver", choices=("pgs", "tgs"), default="pgs")
    p.add_argument("--kp", type=float, default=400.0, help="drive stiffness [Nm/rad or N/m]")
    p.add_argument("--kd", type=float, default=40.0, help="drive damping [Nm s/rad or N s/m]")
    p.add_argument("--target", nargs="*", default=None, help="targets: one number per dof, or name=value pairs")
    p.add_argument("--position-iterations", type=int, default=4)
    p.add_argument("--velocity-iterations", type=int, default=1)
    p.add_argument("--floating", action="store_true", help="load with a floating base")
    p.add_argument("--out", default="run.npz", help="trajectory file (npz); '' to skip")
    p.add_argument("--plot", default="run.png", help="plot of joint positions (png); '' to skip")
    p.set_defaults(func=cmd_sim)
