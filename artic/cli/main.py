"""`artic` command: `artic sim [MODEL]` simulates (cli/sim.py); `artic info [MODEL]` prints a render-free summary
of a URDF or a shipped model; `artic view RUN` writes the 3D replay of a saved run (cli/view.py); `artic fit` and
`artic track` fit a segment model to markers and track them (cli/mocap.py).

The summary lists the link tree with masses, the dofs in cache order with their limits, effort and velocity
limits, and evaluates the model once: total mass, COM, gravity torques and the mass-matrix diagonal at q = 0.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

import numpy as np

from ..assets import load_model, model_path, shipped_models
from ..enums import AXIS_NAMES, Motion
from ..errors import ArticError
from ..sim.scene import Scene
from .mocap import add_parsers as add_mocap_parsers
from .sim import add_parser as add_sim_parser
from .view import add_parser as add_view_parser
from .voice import Voice


def _tree_lines(art):
    lines = []

    def walk(link, depth):
        j = link.inbound_joint
        kind = (
            "root" + (" (fixed base)" if art.fix_base else " (floating base)")
            if j is None
            else f"{j.name}: {j.get_joint_type().name.lower()}"
        )
        lines.append(f"{'  ' * depth}{link.name} [{kind}] mass {link.mass:.4g} kg")
        for child in link.children:
            walk(child, depth + 1)

    walk(art.root, 0)
    return lines


def _dof_lines(art):
    rows = []
    for d, (j, ax) in enumerate(art.dof_list()):
        lim = j.get_limit_params(ax)
        rng = f"[{lim.low:+.4g}, {lim.high:+.4g}]" if j.get_motion(ax) == Motion.LIMITED else "free"
        effort = j.get_drive_params(ax).max_force
        rows.append(
            f"  {d:3d}  {art.dof_names[d]:<28s} {AXIS_NAMES[ax]:<7s} {rng:<20s} "
            f"effort {effort:<8.4g} vmax {j.get_max_joint_velocity(ax):.4g}"
        )
    return rows


def cmd_info(args: argparse.Namespace) -> int:
    art = load_model(model_path(args.model), fix_base=not args.floating)[0]
    scene = Scene(1)
    scene.add_articulation(art)  # the mass check's repairs warn here (the CLI's voice says them: voice.py)
    cache = art.create_cache()
    art.compute_mass_matrix(cache)
    art.compute_gravity_compensation(cache)
    masses = [lk.mass for lk in art.get_links()]
    print(f"model      {art.name}  ({model_path(args.model)})")
    print(
        f"links      {art.link_count}   joints {len(art.joint_names)}   dofs {art.dof_count}   "
        f"total mass {sum(masses):.4g} kg"
    )
    print(f"com at q=0 {np.array2string(art.compute_articulation_com()[0], precision=4)} m (world)")
    print("tree:")
    print("\n".join("  " + ln for ln in _tree_lines(art)))
    print("dofs (cache order):")
    print("\n".join(_dof_lines(art)))
    mimics = [m for m in art.get_mimic_joints() if len(m.terms) == 2]
    if mimics:  # q_a + G q_b + offset = 0, printed as q_a = -G q_b - offset
        print(
            "mimic joints: "
            + ", ".join(f"{m.joint_a.name} = {-m.gear_ratio:g} * {m.joint_b.name} + {-m.offset:g}" for m in mimics)
        )
    off = 6 if not art.fix_base else 0
    g = cache.gravity_compensation_force[0]
    print("at q = 0:")
    print(f"  gravity compensation  {np.array2string(g[off:], precision=4, max_line_width=100)}")
    diag = np.diag(cache.mass_matrix[0])[off:]
    print(f"  mass-matrix diagonal  {np.array2string(diag, precision=4, max_line_width=100)}")
    return 0


def _init_warp(verbose: bool):
    """Start Warp: quietly (core/warp_runtime.py) unless --verbose."""
    from ..core.warp_runtime import init_warp, set_verbose

    if verbose:
        set_verbose(True)
    init_warp()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="artic", description="Articulated rigid bodies the PhysX way, on Warp.")
    parser.add_argument("--verbose", action="store_true", help="show Warp's start-up and every import note")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser(
        "info",
        help="summarize a URDF or a shipped model (tree, dofs, masses, limits)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    info.add_argument(
        "model", nargs="?", default="arm6", help=f"URDF path or shipped model name ({', '.join(shipped_models())})"
    )
    info.add_argument("--floating", action="store_true", help="load with a floating base")
    info.set_defaults(func=cmd_info)
    add_sim_parser(sub, ", ".join(shipped_models()))
    add_mocap_parsers(sub)
    add_view_parser(sub)
    for command in sub.choices.values():  # `artic sim --verbose` as well as `artic --verbose sim`
        command.add_argument(
            "--verbose", dest="sub_verbose", action="store_true", help="show Warp's start-up and every import note"
        )
    args = parser.parse_args(argv)
    args.verbose = args.verbose or args.sub_verbose
    _init_warp(args.verbose)
    voice = Voice(args.verbose)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = voice.showwarning
        try:
            return args.func(args)
        except ArticError as e:
            print(f"artic: error: {e}", file=sys.stderr)
            return 2
        finally:
            voice.close()


if __name__ == "__main__":
    sys.exit(main())
