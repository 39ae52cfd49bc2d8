"""Gymnasium environments over artic's batched envs: `ArticVectorEnv` (a `gymnasium.vector.VectorEnv`, one artic
scene whose envs are the sub-environments) and `ArticEnv` (a `gymnasium.Env` over a one-env scene).

Actions are a Box in [-1, 1] per dof (the normalized range Gymnasium's checker recommends), clipped to it:
* action_mode "position": drive targets. Every dof gets an implicit PD drive (stiffness kp, damping kd, force limit
  max_force, PhysX force drive); -1 and 1 map to the joint's limits (to -pi..pi, or -1..1 m, on an unlimited
  axis).
* action_mode "force": joint forces, force_scale times the action [N or Nm] (e.g. 150 for the MuJoCo ant, its
  motors' gear). The model's own drives act as they are.
Observations are a float32 Box: for a floating base the root pose (px, py, pz, qx, qy, qz, qw), its COM linear and
angular velocity (world), then q and qd (cache order); q and qd alone for a fixed base (`observation_slices` names
the parts). Rewards are 0 unless `reward_fn(obs, actions) -> (E,)` is given. An env whose state a step leaves
non-finite (scene.env_status) is terminated: the scene runs with nan_policy 'freeze', so the observation returned
is its last finite state, and info['non_finite'] marks it (the scene also warns, rate-limited). An env is truncated
after max_episode_steps steps.

Resets go through the articulation cache (apply_cache with POSITION, VELOCITY, ROOT_TRANSFORM and
ROOT_VELOCITIES): the model's initial state plus uniform noise of +-reset_noise_scale on q (kept within the limits,
or within the start where the model starts outside them, as the MuJoCo ant's ankles do), qd and the root velocities,
drawn from the env's generator (seeded by reset(seed=...)). A reset also clears the env's joint forces and sets its
drive targets to the reset pose. The vector env resets ended envs with Gymnasium's default next-step autoreset
(metadata['autoreset_mode']): the step after the one that returned terminated or truncated resets those envs,
ignores their actions and returns their first observation with reward 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError:  # an optional extra: say how to get it instead of a bare ModuleNotFoundError
    raise ImportError("artic.interop.gym_env needs gymnasium>=1: pip install 'artic[gym]'") from None

from ..assets import load_model, model_path
from ..description.articulation import Articulation
from ..description.articulation_joint import Drive
from ..description.validate import finite, positive_int
from ..enums import CacheFlag, DriveType, Motion, SolverType
from ..errors import TopologyError, ValidationError
from ..sim.scene import Scene
from ..sim.status import FINITE_LIMIT

if TYPE_CHECKING:
    import warp as wp

    from ..description.actors import RigidDynamic, RigidStatic

__all__ = ["ArticEnv", "ArticVectorEnv"]

_STATE = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES
_OWNER = "gym env"


def _nonneg(what: str, value) -> float:
    v = finite(_OWNER, what, value)
    if not np.isfinite(v) or v < 0.0:
        raise ValidationError(f"{_OWNER}: {what} must be a finite number >= 0, got {value!r}")
    return v


class _Batch:
    """The simulation behind both envs: the scene, the action mapping, observations and per-env resets."""

    def __init__(
        self,
        model,
        statics,
        num_envs,
        dt,
        substeps,
        action_mode,
        kp,
        kd,
        max_force,
        force_scale,
        reset_noise_scale,
        max_episode_steps,
        reward_fn,
        fix_base,
        solver_type,
        device,
    ):
        if action_mode not in ("position", "force"):
            raise ValidationError(f"{_OWNER}: action_mode must be 'position' or 'force', got {action_mode!r}")
        self.dt = finite(_OWNER, "dt", dt)
        if not np.isfinite(self.dt) or self.dt <= 0.0:
            raise ValidationError(f"{_OWNER}: dt must be a positive time step in seconds, got {dt!r}")
        self.substeps = positive_int(_OWNER, "substeps", substeps)
        self.max_episode_steps = (
            None if max_episode_steps is None else positive_int(_OWNER, "max_episode_steps", max_episode_steps)
        )
        if reward_fn is not None and not callable(reward_fn):
            raise ValidationError(
                f"{_OWNER}: reward_fn must be a callable (obs, actions) -> (num_envs,) rewards, "
                f"got {type(reward_fn).__name__}"
            )
        self.reward_fn = reward_fn
        self.noise = _nonneg("reset_noise_scale", reset_noise_scale)
        self.action_mode = action_mode
        gravity = None
        if isinstance(model, Articulation):
            art, statics = model, list(statics or [])
        else:
            art, loaded, gravity = load_model(model_path(str(model)), fix_base=fix_base)
            statics = list(loaded) + list(statics or [])
        if art._scene is not None:  # checked before its drives are changed
            raise TopologyError(
                f"{_OWNER}: articulation '{art.name}' is already in a scene; the env builds its own "
                "scene: pass an articulation that is in none (or a model path)"
            )
        self.art = art
        n = art.dof_count
        if n == 0:
            raise ValidationError(f"{_OWNER}: articulation '{art.name}' has no dofs to act on")
        dofs = art.dof_list()
        limited = np.array([j.get_motion(ax) == Motion.LIMITED for j, ax in dofs])
        lim = [j.get_limit_params(ax) for j, ax in dofs]
        low, high = np.array([x.low for x in lim]), np.array([x.high for x in lim])
        self.low = np.where(limited, low, -np.inf).astype(np.float32)
        self.high = np.where(limited, high, np.inf).astype(np.float32)
        free_half = np.array([np.pi if int(ax) < 3 else 1.0 for _, ax in dofs])  # angular axes come first (0-2)
        self.mid = np.where(limited, 0.5 * (low + high), 0.0).astype(np.float32)
        self.half = np.where(limited, 0.5 * (high - low), free_half).astype(np.float32)
        if action_mode == "position":
            drive = Drive(_nonneg("kp", kp), _nonneg("kd", kd), _nonneg("max_force", max_force), DriveType.FORCE)
            if drive.stiffness == 0.0 or drive.max_force == 0.0:
                raise ValidationError(f"{_OWNER}: position actions need a drive: give kp > 0 and max_force > 0")
            for j, ax in dofs:
                j.set_drive_params(ax, drive)
        try:
            scale = np.asarray(force_scale, dtype=np.float64)
            scale = np.broadcast_to(scale, (n,)) if scale.ndim <= 1 and scale.size in (1, n) else None
        except (TypeError, ValueError):  # strings, objects, ragged sequences
            scale = None
        if scale is None or not np.all(np.isfinite(scale)) or np.any(scale <= 0.0):
            raise ValidationError(
                f"{_OWNER}: force_scale must be a positive number or {n} positive numbers (one per "
                f"dof of '{art.name}'), got {force_scale!r}"
            )
        self.force_scale = scale.astype(np.float32)
        self.scene = Scene(
            num_envs,
            device=device,
            solver_type=solver_type,
            nan_policy="freeze",
            **({"gravity": gravity} if gravity else {}),
        )
        for actor in statics:
            self.scene.add_actor(actor)
        self.scene.add_articulation(art)
        self.num_envs = self.scene.num_envs
        self.floating = not art.fix_base
        self.cache = art.create_cache()
        art.copy_internal_state_to_cache(self.cache, _STATE)
        self.initial = {
            f: getattr(self.cache, f)[0].copy() for f in ("joint_position", "joint_velocity", "root_transform")
        }
        k = 13 if self.floating else 0
        self.slices = (
            {"root_pose": slice(0, 7), "root_linear_velocity": slice(7, 10), "root_angular_velocity": slice(10, 13)}
            if self.floating
            else {}
        )
        self.slices.update(joint_position=slice(k, k + n), joint_velocity=slice(k + n, k + 2 * n))
        self.obs_dim = k + 2 * n
        self.elapsed = np.zeros(num_envs, np.int64)
        self.last_actions = np.zeros((num_envs, n), np.float32)

    # -- spaces ---------------------------------------------------------------------------------------------------
    def spaces(self):
        # finite bounds: a value beyond FINITE_LIMIT counts as non-finite and terminates the env
        obs = spaces.Box(-FINITE_LIMIT, FINITE_LIMIT, (self.obs_dim,), np.float32)
        act = spaces.Box(-1.0, 1.0, (self.art.dof_count,), np.float32)
        return obs, act

    # -- reading and writing ----------------------------------------------------------------------------------------
    def observe(self) -> np.ndarray:
        c = self.cache
        self.art.copy_internal_state_to_cache(c, _STATE)
        parts = [c.root_transform, c.root_linear_velocity, c.root_angular_velocity] if self.floating else []
        return np.concatenate(parts + [c.joint_position, c.joint_velocity], axis=1).astype(np.float32)

    def act(self, actions, envs: np.ndarray):
        """Write the actions of the envs in `envs` (a bool mask; the others keep their controls)."""
        n = self.art.dof_count
        try:
            a = np.asarray(actions, dtype=np.float32)
        except (TypeError, ValueError):
            a = None
        if a is None or a.shape != (self.num_envs, n) or not np.all(np.isfinite(a)):
            got = (
                f"a {type(actions).__name__} that is not numbers"
                if a is None
                else f"shape {a.shape}"
                if a.shape != (self.num_envs, n)
                else "non-finite values"
            )
            raise ValidationError(
                f"{_OWNER}: actions must be {self.num_envs} x {n} finite numbers (one row per env, "
                f"one column per dof of '{self.art.name}'), got {got}"
            )
        a = np.clip(a, -1.0, 1.0)
        self.last_actions = a
        if self.action_mode == "position":
            self.art.copy_internal_state_to_cache(self.cache, CacheFlag.JOINT_TARGET_POSITIONS)
            field, flag, value = "joint_target_positions", CacheFlag.JOINT_TARGET_POSITIONS, self.mid + self.half * a
        else:
            self.art.copy_internal_state_to_cache(self.cache, CacheFlag.FORCE)
            field, flag, value = "joint_force", CacheFlag.FORCE, self.force_scale * a
        out = getattr(self.cache, field)
        out[envs] = value[envs]
        self.art.apply_cache(self.cache, flag)  # validated, and wakes the envs whose controls changed

    def reset(self, envs: np.ndarray, rng: np.random.Generator):
        """Reset the envs in `envs` (a bool mask) to the initial state plus noise from `rng`."""
        m = int(envs.sum())
        if m == 0:
            return
        c, k = self.cache, self.noise
        self.art.copy_internal_state_to_cache(c, _STATE)
        n = self.art.dof_count
        q0 = self.initial["joint_position"]
        # noise stays within the limits; a model that starts outside them (the MuJoCo ant's ankles) keeps its start
        c.joint_position[envs] = np.clip(
            q0 + rng.uniform(-k, k, (m, n)), np.minimum(self.low, q0), np.maximum(self.high, q0)
        )
        c.joint_velocity[envs] = self.initial["joint_velocity"] + rng.uniform(-k, k, (m, n))
        c.root_transform[envs] = self.initial["root_transform"]
        c.root_linear_velocity[envs] = rng.uniform(-k, k, (m, 3)) if self.floating else 0.0
        c.root_angular_velocity[envs] = rng.uniform(-k, k, (m, 3)) if self.floating else 0.0
        self.art.apply_cache(c, _STATE)  # clears the envs' non-finite status
        view = self.scene.view(self.art)
        # controls written as arrays, not through the cache: another env's planted garbage must not block a reset
        for arr, rows in (
            (view.control.joint_force, 0.0),
            (view.control.joint_target_velocity, 0.0),
            (view.control.joint_target_position, c.joint_position[envs]),
        ):
            host = arr.numpy().copy()
            host[envs] = rows
            arr.assign(host)
        view.wake(envs)  # a reset env starts awake, wherever it was put to sleep
        self.elapsed[envs] = 0

    def step(self):
        """Advance every env by dt; returns (rewards, terminated, truncated, non_finite)."""
        for _ in range(self.substeps):
            self.scene.step(self.dt / self.substeps)
        self.elapsed += 1
        lost = self.scene.env_status
        truncated = (
            self.elapsed >= self.max_episode_steps
            if self.max_episode_steps is not None
            else np.zeros(self.num_envs, bool)
        ) & ~lost
        return lost, truncated

    def rewards(self, obs: np.ndarray) -> np.ndarray:
        if self.reward_fn is None:
            return np.zeros(self.num_envs, np.float64)
        r = np.asarray(self.reward_fn(obs, self.last_actions), dtype=np.float64)
        if r.shape != (self.num_envs,):
            raise ValidationError(
                f"{_OWNER}: reward_fn returned shape {r.shape}; it must return one reward per env, "
                f"shape ({self.num_envs},)"
            )
        return r


_DOC_ARGS = """
    model: a shipped model's name ('ant', 'arm6'), a URDF or MJCF path, or an artic.Articulation not yet in a scene
        (its drives are overwritten in position mode); statics: extra static actors (a loaded MJCF's ground comes
        with it). dt: seconds per env step, split into `substeps` scene steps. kp, kd, max_force: the position
        drives' gains and force limit. force_scale: N or Nm per unit action in force mode. fix_base: for URDFs.
"""


class _BatchAccess:
    """What both envs expose of the batch they wrap."""

    _batch: _Batch

    @property
    def scene(self) -> Scene:
        """The artic Scene the env steps (refused after close())."""
        return self._open_batch("scene").scene

    @property
    def articulation(self) -> Articulation:
        """The simulated Articulation (refused after close())."""
        return self._open_batch("articulation").art

    @property
    def observation_slices(self) -> dict:
        """Name -> slice of an observation row (root_pose, root_linear_velocity, root_angular_velocity for a
        floating base; joint_position, joint_velocity)."""
        return dict(self._open_batch("observation_slices").slices)

    def _open_batch(self, action: str) -> _Batch:
        """The batch, or a ValidationError once the env is closed (its scene is released)."""
        if getattr(self, "_closed", False):
            raise ValidationError(f"{_OWNER}: {action} after close(); create a new env")
        return self._batch

    def _release(self) -> None:
        self._closed = True
        self._batch = None


def _seed(seed: int | None) -> int | None:
    """`seed` as Gymnasium takes it (None or a non-negative Python int): NumPy integers are accepted, anything else
    is refused here rather than by Gymnasium's own error."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValidationError(f"{_OWNER}: seed must be None or a non-negative integer, got {seed!r}")
    return int(seed)


class ArticVectorEnv(_BatchAccess, VectorEnv):
    __doc__ = "A Gymnasium vector env whose sub-environments are the envs of one artic scene." + _DOC_ARGS

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        model: Articulation | os.PathLike | str,
        num_envs: int = 1,
        dt: float = 0.01,
        action_mode: str = "position",
        *,
        statics: Iterable[RigidStatic | RigidDynamic] | None = (),
        substeps: int = 1,
        kp: float = 100.0,
        kd: float = 10.0,
        max_force: float = 1e6,
        force_scale: ArrayLike = 1.0,
        reset_noise_scale: float = 0.01,
        max_episode_steps: int | None = 1000,
        reward_fn: Callable | None = None,
        fix_base: bool = True,
        solver_type: SolverType | int = SolverType.PGS,
        device: str | wp.Device | None = None,
    ):
        self._batch = _Batch(
            model,
            statics,
            num_envs,
            dt,
            substeps,
            action_mode,
            kp,
            kd,
            max_force,
            force_scale,
            reset_noise_scale,
            max_episode_steps,
            reward_fn,
            fix_base,
            solver_type,
            device,
        )
        self.num_envs = self._batch.num_envs
        self.single_observation_space, self.single_action_space = self._batch.spaces()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, bool)
        self._np_random = None

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Reset every env (or, with options={'reset_mask': (E,) bools}, those envs)."""
        batch = self._open_batch("reset()")
        super().reset(seed=_seed(seed))
        if self._np_random is None:
            self._np_random, _ = gym.utils.seeding.np_random(None)
        mask = np.ones(self.num_envs, bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.shape != (self.num_envs,) or mask.dtype != bool:
                raise ValidationError(
                    f"{_OWNER}: options['reset_mask'] must be {self.num_envs} booleans, got {options['reset_mask']!r}"
                )
        batch.reset(mask, self._np_random)
        self._autoreset[mask] = False
        return batch.observe(), {}

    def step(self, actions: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        b = self._open_batch("step()")
        if self._np_random is None:
            raise ValidationError(f"{_OWNER}: call reset() before step()")
        # next-step autoreset: the envs that ended in the last step ignore their actions and are reset after this
        # step (all envs step together; a non-finite env is frozen meanwhile), returning their first observation
        resetting = self._autoreset.copy()
        b.act(actions, ~resetting)
        terminated, truncated = b.step()
        obs = b.observe()
        rewards = b.rewards(obs)
        if resetting.any():
            b.reset(resetting, self._np_random)
            obs[resetting] = b.observe()[resetting]
            rewards[resetting] = 0.0
            terminated[resetting] = truncated[resetting] = False
        self._autoreset = terminated | truncated
        info = {"non_finite": terminated.copy(), "_non_finite": np.ones(self.num_envs, bool)}
        return obs, rewards, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        self._release()


class ArticEnv(_BatchAccess, gym.Env):
    __doc__ = "A Gymnasium env over a one-env artic scene (no autoreset: call reset after an episode ends)." + _DOC_ARGS

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(
        self,
        model: Articulation | os.PathLike | str,
        dt: float = 0.01,
        action_mode: str = "position",
        *,
        statics: Iterable[RigidStatic | RigidDynamic] | None = (),
        substeps: int = 1,
        kp: float = 100.0,
        kd: float = 10.0,
        max_force: float = 1e6,
        force_scale: ArrayLike = 1.0,
        reset_noise_scale: float = 0.01,
        max_episode_steps: int | None = 1000,
        reward_fn: Callable | None = None,
        fix_base: bool = True,
        solver_type: SolverType | int = SolverType.PGS,
        device: str | wp.Device | None = None,
    ):
        wrapped = None if reward_fn is None else (lambda obs, actions: np.atleast_1d(reward_fn(obs[0], actions[0])))
        self._batch = _Batch(
            model,
            statics,
            1,
            dt,
            substeps,
            action_mode,
            kp,
            kd,
            max_force,
            force_scale,
            reset_noise_scale,
            max_episode_steps,
            wrapped,
            fix_base,
            solver_type,
            device,
        )
        self.observation_space, self.action_space = self._batch.spaces()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, bool]]:
        batch = self._open_batch("reset()")
        super().reset(seed=_seed(seed))
        batch.reset(np.ones(1, bool), self.np_random)
        return batch.observe()[0], {}

    def step(self, action: ArrayLike) -> tuple[np.ndarray, float, bool, bool, dict[str, bool]]:
        b = self._open_batch("step()")
        n = b.art.dof_count
        b.act(np.reshape(action, (1, n)) if np.shape(action) == (n,) else action, np.ones(1, bool))
        terminated, truncated = b.step()
        obs = b.observe()
        reward = float(b.rewards(obs)[0])
        return obs[0], reward, bool(terminated[0]), bool(truncated[0]), {"non_finite": bool(terminated[0])}

    def close(self) -> None:
        """Release the scene; step and reset refuse afterwards."""
        self._release()
