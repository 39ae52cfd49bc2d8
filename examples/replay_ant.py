"""Watch the shipped MuJoCo ant drop onto its floor and paddle its legs, in any browser, with no network.

The ant's 8 joints get implicit PD drives whose targets swing sinusoidally (hips and ankles a quarter period
apart); `artic.viewer.Recorder` keeps every frame's link poses and contacts, and writes one self-contained HTML
page (three.js inlined). Open it, press Play, drag to orbit, and tick 'joint frames' or 'normals'.

    python examples/replay_ant.py [--seconds 3] [--html ant.html]
"""

from __future__ import annotations

import argparse

import numpy as np

from artic import CacheFlag, Drive, DriveType, Scene
from artic.assets import load_model, model_path
from artic.viewer import Recorder

KP, KD = 60.0, 4.0  # drive stiffness [N m/rad] and damping [N m s/rad]: soft, so that the legs give on landing
AMPLITUDE, FREQUENCY = 0.5, 1.5  # [rad], [Hz]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="simulated time [s] (default 3)")
    parser.add_argument("--dt", type=float, default=1.0 / 60.0, help="time step [s] (default 1/60)")
    parser.add_argument("--html", default="ant.html", help="replay to write (default ant.html)")
    args = parser.parse_args(argv)

    art, statics, gravity = load_model(model_path("ant"))
    for joint, axis in art.dof_list():
        joint.set_drive_params(axis, Drive(KP, KD, 1e3, DriveType.FORCE))
    scene = Scene(1, gravity=gravity)
    for actor in statics:
        scene.add_actor(actor)
    scene.add_articulation(art)
    cache = art.create_cache()
    # dofs hip_1..4 then ankle_1..4: diagonal legs in phase, the other pair opposite, ankles a quarter period late
    phase = np.array([np.pi * (int(name[-1]) % 2) + 0.5 * np.pi * name.startswith("ankle") for name in art.dof_names])
    rec = Recorder(scene)
    for k in range(round(args.seconds / args.dt)):
        t = k * args.dt
        cache.joint_target_positions[:] = AMPLITUDE * np.sin(2 * np.pi * FREQUENCY * t + phase)
        art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
        scene.step(args.dt)
        rec.record()
    path = rec.write(args.html, args.dt, title="ant")
    print(f"replay written to {path}: open it in a browser")
    return path, rec


if __name__ == "__main__":
    main()
