"""`artic sim`: simulate a URDF or MJCF file (or a shipped model) with PD-driven joints, write the trajectory and a
plot. MJCF models bring their floor and gravity (e.g. `artic sim ant`); URDF robots are fixed to the world, or with
--floating stand on a floor put just under them (--no-floor: none).

Every driven dof gets an implicit force drive (kp, kd, max force = the URDF effort) towards its target: the values
given with --target (one number per dof, or name=value pairs; clamped to the dof's range with a warning), else 40 %
of the way from its initial position (brought into its range) to the farther limit, at most 0.5 (+0.5 without
limits): strictly inside every range, and far enough that the default run visibly moves. A URDF's dofs are all
driven; an MJCF file's are those its actuators act on (a planar robot's root slides and hinge are not), the others
keep the file's spring and damper. All envs run the same command.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from ..assets import load_model, model_path
from ..description.actors import create_ground_plane
from ..description.articulation_joint import Drive
from ..description.shapes import bounding_radius
from ..enums import CacheFlag, DriveType, Motion, SolverType
from ..errors import ValidationError
from ..io.mjcf.loader import load_mjcf
from ..math.np_spatial import quat_rotate
from ..sim.scene import Scene
from ..sim.status import FINITE_LIMIT
from .plots import LEGEND_BESIDE, colours


def _ranges(art) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(initial position, low, high) per dof; +-inf for a dof without limits."""
    q0, low, high = [], [], []
    for j, ax in art.dof_list():
        limited = j.get_motion(ax) == Motion.LIMITED
        lim = j.get_limit_params(ax)
        q0.append(j.get_joint_position(ax))
        low.append(lim.low if limited else -np.inf)
        high.append(lim.high if limited else np.inf)
    return np.array(q0, float), np.array(low, float), np.array(high, float)


def _targets(art, spec) -> np.ndarray:
    """--target's values, else the default: from the initial position (brought into the range), 40 % of the way to
    the farther limit, or +0.5 without limits: strictly inside every range, and far enough to see the drive act.
    A given target outside its dof's range is clamped to it, with a warning."""
    names = art.dof_names
    q0, low, high = _ranges(art)
    if not spec:
        start = np.clip(q0, low, high)
        up, down = high - start, start - low
        toward = np.where(up >= down, 0.4 * np.minimum(up, 1.25), -0.4 * np.minimum(down, 1.25))
        return start + np.where(np.isfinite(low) & np.isfinite(high), toward, 0.5)
    if all("=" in s for s in spec):
        out = np.clip(q0, low, high)
        for s in spec:
            key, _, value = s.partition("=")
            if key not in names:
                raise ValidationError(f"--target: no dof named '{key}' (dofs: {', '.join(names)})")
            try:
                out[names.index(key)] = float(value)
            except ValueError:
                raise ValidationError(f"--target {s}: '{value}' is not a number") from None
    else:
        try:
            out = np.array([float(s) for s in spec])
        except ValueError:
            raise ValidationError("--target takes numbers (one per dof) or name=value pairs") from None
        if out.shape != (len(names),):
            raise ValidationError(f"--target: {len(out)} values given for {len(names)} dofs ({', '.join(names)})")
    if not np.all(np.isfinite(out)):
        raise ValidationError("--target: the targets must be finite numbers")
    for d in np.flatnonzero((out < low) | (out > high)):
        clamped = min(max(out[d], low[d]), high[d])
        print(
            f"warning: --target {names[d]}={out[d]:g} is outside its range [{low[d]:.4g}, {high[d]:.4g}]; "
            f"clamped to {clamped:.4g}",
            file=sys.stderr,
        )
    return np.clip(out, low, high)


def _display_name(art, path) -> str:
    """The model's name for the output: an MJCF articulation is named after its root body ('torso' for every
    Gymnasium robot), so those files go by their file name."""
    return path.stem if path.suffix.lower() == ".xml" else art.name


def _progress(k: int, total: int, start: float):
    """A text progress bar on stderr, shown once a run has taken more than a second, and only on a terminal (a log
    file or a pipe would get every redraw)."""
    if not sys.stderr.isatty():
        return
    if time.perf_counter() - start < 1.0 or (k % max(1, total // 50) and k != total):
        return
    frac = k / total
    bar = "#" * int(30 * frac)
    sys.stderr.write(f"\r  [{bar:<30s}] {100 * frac:5.1f}%  {time.perf_counter() - start:6.1f} s")
    if k == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _dof_groups(art) -> list[tuple[str, list[int]]]:
    """Dofs grouped by the root's child link they hang from (a limb, a finger), in dof order, each with a title in
    words; small models, and models whose dofs all hang from one link, keep one group."""
    everything = [("joint positions", list(range(art.dof_count)))]
    if art.dof_count <= 8:
        return everything
    topo = art._topology()
    groups: dict[str, list[int]] = {}
    for i, link in enumerate(topo.links):
        top = link
        while top.parent is not None and top.parent.parent is not None:
            top = top.parent
        for k in range(len(topo.dof_axes[i])):
            groups.setdefault(top.name, []).append(topo.dof_start[i] + k)
    if len(groups) == 1:
        return everything
    # titled by the joints it holds: a link's name in an MJCF import joins body and joint ('lwaist_abdomen_z')
    names = art.dof_names
    return [
        (f"{names[d[0]]} to {names[d[-1]]} ({len(d)} dofs)" if len(d) > 1 else names[d[0]], d) for d in groups.values()
    ]


def _plot(path, t, q, targets, art, title, root_pose=None):
    """Joint positions of env 0 in one subplot per limb (distinct colours within each, legends beside the data),
    with dashed targets, and for a floating base its height and roll/pitch/yaw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.spatial.transform import Rotation

    groups = _dof_groups(art)
    panels = len(groups) + (root_pose is not None)
    cols = 1 if panels == 1 else 2
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(10 if cols == 1 else 15, 3.2 * rows + 1), squeeze=False)
    axes = axes.ravel()
    names = art.dof_names
    legend = LEGEND_BESIDE
    for ax, (label, dofs) in zip(axes, groups):
        for colour, d in zip(colours(len(dofs)), dofs):
            ax.plot(t, q[:, 0, d], color=colour, label=names[d])
            if np.isfinite(targets[d]):  # a dof the run does not drive has no target
                ax.axhline(targets[d], color=colour, linestyle="--", linewidth=0.8)
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("rad or m")
        ax.grid(alpha=0.3)
        ax.legend(ncol=1 + len(dofs) // 12, **legend)
    if root_pose is not None:
        ax = axes[len(groups)]
        rpy = Rotation.from_quat(root_pose[:, 0, 3:]).as_euler("xyz")
        ax.plot(t, root_pose[:, 0, 2], color="black", label="root height [m]")
        for k, (name, c) in enumerate(zip(("roll", "pitch", "yaw"), ("tab:red", "tab:green", "tab:blue"))):
            ax.plot(t, rpy[:, k], color=c, label=f"root {name} [rad]")
        ax.set_title("floating base", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(**legend)
    for ax in axes[panels:]:
        ax.set_visible(False)
    for ax in axes[:panels]:
        ax.set_xlabel("time [s]")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _check_args(args):
    """Refuse what cannot run, and outputs that cannot be written, before any time is spent simulating."""
    for flag, value in (("--dt", args.dt), ("--seconds", args.seconds)):
        if not value > 0 or not np.isfinite(value):  # NaN fails too
            raise ValidationError(f"{flag} must be a positive number of seconds, got {value:g}")
    if args.envs < 1:
        raise ValidationError(f"--envs must be at least 1, got {args.envs}")
    if args.record_envs < 0:
        raise ValidationError(f"--record-envs must be 0 (all) or a positive count, got {args.record_envs}")
    for flag, value in (
        ("--position-iterations", args.position_iterations),
        ("--velocity-iterations", args.velocity_iterations),
    ):
        if not 0 <= value <= 255:
            raise ValidationError(f"{flag} must be from 0 to 255 (PhysX's bound), got {value}")
    if int(round(args.seconds / args.dt)) < 1:
        raise ValidationError(
            f"--seconds {args.seconds:g} is less than one step of --dt {args.dt:g}; give at least one step"
        )
    for flag, path in (("--out", args.out), ("--plot", args.plot), ("--html", args.html)):
        if path:
            folder = Path(path).resolve().parent
            if not folder.is_dir() or not os.access(folder, os.W_OK):
                raise ValidationError(f"{flag} {path}: the folder {folder} does not exist or is not writable")


RECORD_ENVS = 16  # run.npz keeps the link poses of this many envs by default (T x E x L x 7 floats)


def _load(args):
    """(articulation, statics, gravity or None, path, driven) of the model; `driven` (per dof) is False for the dofs
    an MJCF file gives no actuator (a planar robot's root slides and hinge, passive joints), which keep the file's
    own spring and damper. What the import drops or repairs it warns about, which the CLI's voice says (voice.py)."""
    path = model_path(args.model)
    if path.suffix.lower() == ".xml":
        model = load_mjcf(path)
        art, statics, gravity = model.articulations[0], model.statics, model.gravity
        actuated = {r.joint for r in model.actuators if r.supported and r.joint} | {
            name for r in model.actuators if r.supported for name, _ in r.terms
        }
        driven = np.array([j.name in actuated for j, _ in art.dof_list()]) if actuated else None
    else:
        art, statics, gravity = load_model(
            path, fix_base=not args.floating, package_dirs=args.package_dir, repair_inertia=args.repair_inertia
        )
        driven = None
    return art, statics, gravity, path, np.ones(art.dof_count, bool) if driven is None else driven


def _floor(scene, art) -> float:
    """The height [m] of a floor just under every shape of the articulation as it starts (env 0)."""
    poses = scene.get_link_poses(art)[0].astype(float)
    lowest = np.inf
    for pose, link in zip(poses, art._topology().links, strict=True):
        for shape in link.shapes:
            centre = pose[:3] + quat_rotate(pose[3:], shape.local_pose.p)
            lowest = min(lowest, centre[2] - bounding_radius(shape))
    return float(lowest) if np.isfinite(lowest) else float(poses[:, 2].min())


def _scene(args):
    """The model loaded with the drives and iteration counts of `args`, in a scene of `args.envs` envs: (articulation,
    statics, model path, targets, driven, scene, solver, the time the setup started)."""
    _check_args(args)
    art, statics, gravity, path, driven = _load(args)
    targets = _targets(art, args.target)
    for (j, ax), drive in zip(art.dof_list(), driven, strict=True):
        if drive:
            effort = j.get_drive_params(ax).max_force or 1e6
            j.set_drive_params(ax, Drive(args.kp, args.kd, effort, DriveType.FORCE))
    if not driven.all():
        free = [n for n, d in zip(art.dof_names, driven, strict=True) if not d]
        print(f"not driven (no actuator in the file): {', '.join(free)}")
    art.set_solver_iteration_counts(args.position_iterations, args.velocity_iterations)
    solver = SolverType[args.solver.upper()]
    setup_start = time.perf_counter()
    scene = Scene(args.envs, solver_type=solver, **({"gravity": gravity} if gravity else {}))
    for actor in statics:
        scene.add_actor(actor)
    scene.add_articulation(art)  # the mass check's repairs warn here (the CLI's voice says them: voice.py)
    if not art.fix_base and not statics and not args.no_floor:
        height = _floor(scene, art)
        statics = [create_ground_plane(height=height, name="floor")]
        scene.add_actor(statics[0])
        print(f"floor: a plane at z = {height:.4g} m, under the floating base as it starts (--no-floor: none)")
    return art, statics, path, targets, driven, scene, solver, setup_start


def _summary(args, art, scene, q, t, targets, driven, lost_at) -> np.ndarray:
    """Print how far each driven dof ended from its target and which envs went non-finite; returns env_status."""
    bad = scene.env_status
    finite = ~bad
    if finite.any():
        err = np.abs(q[-1, finite] - targets).max(axis=0)
        print("final |q - target| per dof (max over " + ("envs" if bad.sum() == 0 else "the finite envs") + "):")
        for name, e, d in zip(art.dof_names, err, driven, strict=True):
            print(f"  {name:<28s} {e:.4g}" if d else f"  {name:<28s} (not driven)")
    if bad.any():
        envs = np.flatnonzero(bad)
        first = int(lost_at.min())
        print(
            f"error: the state of {len(envs)} of {args.envs} env(s) went non-finite (NaN, inf or beyond "
            f"{FINITE_LIMIT:g}), the first at t = {t[first]:.4g} s; env(s) {envs[:8].tolist()}. Check the "
            "model's masses and inertias (artic info), the gains and the time step",
            file=sys.stderr,
        )
    return bad


def cmd_sim(args: argparse.Namespace) -> int:
    art, statics, path, targets, driven, scene, solver, setup_start = _scene(args)
    name = _display_name(art, path)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    cache.joint_target_positions[:, driven] = targets[driven]  # the others keep the file's spring reference
    art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    steps = int(round(args.seconds / args.dt))
    t = np.arange(1, steps + 1) * args.dt
    q = np.zeros((steps, args.envs, art.dof_count), np.float32)
    qd = np.zeros_like(q)
    root = np.zeros((steps, args.envs, 7), np.float32)
    n_pose_envs = args.envs if args.record_envs == 0 else min(args.envs, args.record_envs)
    link_poses = np.zeros((steps, n_pose_envs, art.link_count, 7), np.float32)
    flags = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM
    print(
        f"simulating {name}: {art.dof_count} dofs, {args.envs} env(s), {solver.name}, dt {args.dt:g} s, "
        f"{steps} steps ({args.seconds:g} s)" + (f", {len(statics)} static actor(s)" if statics else "")
    )
    recorder = None
    if args.html or args.usd:
        from ..viewer import Recorder

        recorder = Recorder(scene)  # env 0's link poses, contacts and joint forces, for the replay and the USD stage
    step_time = 0.0  # [s] in scene.step from the second step on: the steady state, without compiling
    start = time.perf_counter()
    lost_at = np.full(args.envs, steps)  # the step at which each env's state went non-finite
    for k in range(steps):
        t0 = time.perf_counter()
        scene.step(args.dt)
        t1 = time.perf_counter()
        if k == 0:
            setup = t1 - setup_start  # building the arrays, compiling or loading kernels, recording the step
        else:
            step_time += t1 - t0
        art.copy_internal_state_to_cache(cache, flags)
        q[k], qd[k], root[k] = cache.joint_position, cache.joint_velocity, cache.root_transform
        link_poses[k] = scene.get_link_poses(art)[:n_pose_envs]
        lost_at[(lost_at == steps) & scene.env_status] = k
        if recorder is not None and lost_at[0] == steps:  # the replay stops where env 0 went non-finite
            recorder.record()
        _progress(k + 1, steps, start)
    wall = time.perf_counter() - start
    print(f"done in {wall:.2f} s: setup and first step (kernel compile or cache load) {setup:.2f} s", end="")
    if steps > 1:
        per_step = step_time / (steps - 1)
        print(
            f"; steady state {per_step * 1e6:.1f} us per step, {per_step / args.envs * 1e6:.2f} us per "
            f"env-step, {args.dt * args.envs / per_step:.1f}x real time over all envs (recording the "
            "trajectory not included)"
        )
    else:
        print(" (one step: no steady-state figure)")
    bad = _summary(args, art, scene, q, t, targets, driven, lost_at)
    if args.out:
        np.savez(
            args.out,
            t=t,
            q=q,
            qd=qd,
            targets=targets,
            dof_names=np.array(art.dof_names),
            dt=args.dt,
            root_pose=root,
            link_poses=link_poses,
            link_names=np.array(art.link_names),
            model=str(path.resolve()),
            floating=not art.fix_base,
            env_status=bad,
        )
        print(f"trajectory written to {args.out}")
    if recorder is not None and recorder.poses[0] and args.html:
        recorder.write(args.html, args.dt, title=f"{name} ({path.name})")
        print(f"replay written to {args.html} (open it in a browser)")
    if recorder is not None and recorder.poses[0] and args.usd:
        from ..viewer import write_usd

        poses = [np.stack(p) for p in recorder.poses]
        write_usd(args.usd, [*recorder.arts, *scene.statics], poses, args.dt, contacts=recorder.contacts)
        print(f"USD stage written to {args.usd} (usdview, Blender, Isaac Sim; docs/viewer.md)")
    if args.plot:
        _plot(
            args.plot,
            t,
            q,
            np.where(driven, targets, np.nan),
            art,
            f"{name} ({path.name}): env 0, {solver.name}, kp {args.kp:g}, kd {args.kd:g}; dashed: targets",
            None if art.fix_base else root,
        )
        print(f"plot written to {args.plot}")
    return 1 if bad.any() else 0


def add_parser(sub: argparse._SubParsersAction, shipped: str) -> None:
    p = sub.add_parser(
        "sim",
        help="simulate a model with PD-driven joints; write a trajectory and a plot",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("model", nargs="?", default="arm6", help=f"URDF or MJCF path, or shipped model ({shipped})")
    p.add_argument("--seconds", type=float, default=3.0, help="simulated time [s]")
    p.add_argument("--dt", type=float, default=1.0 / 120.0, help="time step [s]")
    p.add_argument("--envs", type=int, default=1, help="copies of the model simulated together")
    p.add_argument(
        "--solver",
        choices=("pgs", "tgs", "direct"),
        default="pgs",
        help="PhysX's PGS or TGS, or artic's direct mLCP solver (docs/solvers.md)",
    )
    p.add_argument("--kp", type=float, default=400.0, help="drive stiffness of every dof [Nm/rad or N/m]")
    p.add_argument("--kd", type=float, default=40.0, help="drive damping of every dof [Nm s/rad or N s/m]")
    p.add_argument(
        "--target",
        nargs="*",
        default=None,
        help="targets: one number per dof, or name=value pairs (clamped to the dof's range, with a warning); by "
        "default 40 %% of the way from the initial position to the farther limit (at most 0.5), +0.5 without limits",
    )
    p.add_argument("--position-iterations", type=int, default=4, help="solver position iterations")
    p.add_argument("--velocity-iterations", type=int, default=1, help="solver velocity iterations")
    p.add_argument("--floating", action="store_true", help="load a URDF with a floating base (on a floor)")
    p.add_argument("--no-floor", action="store_true", help="no floor under a floating URDF robot")
    p.add_argument(
        "--package-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="folder holding the packages that package:// mesh paths name (repeatable)",
    )
    p.add_argument(
        "--repair-inertia",
        action="store_true",
        help="raise a URDF's non-positive principal inertias instead of refusing the file",
    )
    p.add_argument(
        "--out",
        default="run.npz",
        help="trajectory file (npz: q, qd, root and link poses, targets, model path); '' to skip",
    )
    p.add_argument(
        "--record-envs",
        type=int,
        default=RECORD_ENVS,
        help="envs whose link poses the trajectory file keeps (for artic view; 0: all, frames x envs x links x 7 "
        "floats)",
    )
    p.add_argument("--plot", default="run.png", help="plot of joint positions (png); '' to skip")
    p.add_argument("--html", default="", help="3D replay of env 0: one HTML file that opens offline; '' to skip")
    p.add_argument(
        "--usd", default="", help="USD stage of env 0 (.usda or .usdc; needs usd-core): shapes, poses, contacts"
    )
    p.set_defaults(func=cmd_sim)
