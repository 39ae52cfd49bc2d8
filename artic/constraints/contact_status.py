"""Contact penetration as a status (docs/conventions.md, "Failures"): per env, the deepest penetration among the
contacts detected at the start of a step, watched with persistence.py's rule against PENETRATION_TOLERANCE and
reported through the scene's nan_policy (sim/status.py). Bodies that sink into each other that far are a solve
that did not converge: a heavy body on a light one or a tall stack under too few Gauss-Seidel iterations (a
1000 kg box passes through a 1 kg one in 11 steps under PGS at 4 iterations), or a step too large for the speeds.
A stack that settles a few millimetres into its contacts is not reported."""

from __future__ import annotations

import warp as wp

from ..collision.contacts import ContactPoints
from .persistence import persist, persists

PENETRATION_TOLERANCE = wp.constant(0.02)  # [m]


@wp.struct
class PenetrationStatus:
    """Per env (E envs): the deepest penetration and its persistence."""

    depth: wp.array(dtype=float)  # (E,) [m] the deepest penetration at the start of the last step (0: none)
    links: wp.array(dtype=wp.vec2i)  # (E,) its two links (block link indices; -1 for a static shape)
    track: wp.array(dtype=wp.vec4)  # (E,) persistence.py's tracker, in tolerances
    violated: wp.array(dtype=int)  # (E,) 0; -1 just reported by the step (the host not told yet); 1 told


@wp.func
def track_penetration(cp: ContactPoints, ps: PenetrationStatus, env: int) -> int:
    """The env's deepest penetration after detection, and its status; 1 when it has just become reportable."""
    depth = float(0.0)
    links = wp.vec2i(-1, -1)
    for c in range(cp.count[env]):
        if -cp.separation[env, c] > depth:
            depth = -cp.separation[env, c]
            links = wp.vec2i(cp.link_a[env, c], cp.link_b[env, c])
    ps.depth[env] = depth
    ps.links[env] = links
    track = persist(depth / PENETRATION_TOLERANCE, ps.track[env])
    ps.track[env] = track
    if track[0] == 0.0:
        ps.violated[env] = 0
        return 0
    if persists(track) != 0 and ps.violated[env] == 0:
        ps.violated[env] = -1
        return 1
    return 0
