"""Zero-copy PyTorch views of an articulation's state and control arrays (Warp's `wp.to_torch`, DLPack).

`state_views(scene, art)` and `control_views(scene, art)` return dicts of torch tensors that share memory with the
scene's Warp arrays (same device, float32, leading env dimension E): reading one after a step sees that step, and
writing a control tensor acts from the next step, with no copy either way.

Caveats (what the cache path does and these views do not):
* They belong to the scene's current grouping (like the arrays of `scene.view(art)`): adding or removing an
  articulation, rigid body or body joint can move the articulation to new arrays, after which the old tensors are
  stale (they still read and write the old memory). Take the views again after such a change.
* Writes bypass `apply_cache`'s validation: a NaN, inf or huge value written here is caught only by the step's
  non-finite state check (`scene.env_status`, and the scene's nan_policy), after it has reached the state.
* Writes do not wake sleeping envs: call `wake(scene, art, envs)` after writing controls (the cache wakes them).
* Writing the state tensors (joint_q, root_pose, ...) neither clears an env's non-finite status nor updates the link
  poses and the kinematics that inverse dynamics use; reset envs through the cache (`apply_cache`) instead.
  link_pose and link_velocity are derived by each step: read them, do not write them.
* On CUDA, Warp and PyTorch may run on different streams: synchronize (`wp.synchronize_device()`) before reading
  after a step, or run Warp on PyTorch's stream (`wp.ScopedStream(wp.stream_from_torch())`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

try:
    import torch
except ImportError:  # an optional extra: say how to get it instead of a bare ModuleNotFoundError
    raise ImportError(
        "artic.interop.torch_views needs PyTorch: pip install 'artic[torch]' (or a torch build for your device)"
    ) from None
import warp as wp

from ..errors import ArticError, ValidationError

if TYPE_CHECKING:
    from ..description.actors import RigidDynamic
    from ..description.articulation import Articulation
    from ..sim.scene import Scene


def _tensor(a: wp.array) -> torch.Tensor:
    t = wp.to_torch(a, requires_grad=False)
    # an empty array (no dofs) owns no memory; anything else must alias the scene's memory, or writes would be lost
    if a.size and t.data_ptr() != a.ptr:
        raise ArticError(
            f"torch views: wp.to_torch copied a {a.shape} array instead of sharing its memory (Warp "
            f"{wp.config.version}); writes through it would not reach the simulation"
        )
    return t


def _view(scene, art):
    from ..sim.scene import Scene

    if not isinstance(scene, Scene):
        raise ValidationError(f"torch views: expected an artic.Scene, got {type(scene).__name__}")
    return scene.view(art)  # refuses what is not an articulation or rigid body of this scene


def state_views(scene: Scene, art: Articulation | RigidDynamic) -> dict[str, torch.Tensor]:
    """Tensors of `art`'s state (an Articulation or RigidDynamic of `scene`), sharing the scene's memory:
    joint_q, joint_qd (E, n); root_pose (E, 7) (px, py, pz, qx, qy, qz, qw); root_linear_velocity,
    root_angular_velocity (E, 3), world, the first at the root COM; link_pose (E, L, 7) and link_velocity (E, L, 6)
    (linear at the COM, angular), derived by each step (read only)."""
    s = _view(scene, art).state
    return {
        "joint_q": _tensor(s.joint_q),
        "joint_qd": _tensor(s.joint_qd),
        # the per-tree (E, 1, k) root arrays, indexed down to (E, k): still views of the same memory
        "root_pose": _tensor(s.root_pose)[:, 0],
        "root_linear_velocity": _tensor(s.root_lin_vel)[:, 0],
        "root_angular_velocity": _tensor(s.root_ang_vel)[:, 0],
        "link_pose": _tensor(s.link_pose),
        "link_velocity": _tensor(s.link_velocity),
    }


def control_views(scene: Scene, art: Articulation | RigidDynamic) -> dict[str, torch.Tensor]:
    """Tensors of `art`'s controls, sharing the scene's memory: joint_force (E, n) [N or Nm], persistent;
    joint_target_position, joint_target_velocity (E, n), the drives' targets; link_force, link_torque (E, L, 3),
    world, at the link COMs, for the next step only (the step clears them)."""
    c = _view(scene, art).control
    return {
        name: _tensor(getattr(c, name))
        for name in ("joint_force", "joint_target_position", "joint_target_velocity", "link_force", "link_torque")
    }


def wake(scene: Scene, art: Articulation | RigidDynamic, envs: torch.Tensor | ArrayLike | None = None) -> None:
    """Wake `art`'s envs (all, or those where the (E,) bool mask `envs` is True), as writing controls through the
    cache would: a sleeping env ignores controls written through the views until it is woken."""
    view = _view(scene, art)
    mask = (
        np.ones(view.num_envs, bool)
        if envs is None
        else np.asarray(envs.cpu().numpy() if isinstance(envs, torch.Tensor) else envs)
    )
    if mask.shape != (view.num_envs,) or mask.dtype != bool:
        raise ValidationError(
            f"torch views: wake takes {view.num_envs} booleans (one per env) or None, got {envs!r:.60}"
        )
    view.wake(mask)
