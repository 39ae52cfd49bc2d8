"""artic.interop.gym_env: Gymnasium's checker on the single env, and the vector env's spaces, autoreset, termination on
a non-finite state, seeding and action mapping, on the shipped MuJoCo ant (floating base, 8 hinge dofs)."""

import importlib.util
import warnings

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

from artic import CacheFlag, TopologyError, ValidationError
from artic.interop.gym_env import ArticEnv, ArticVectorEnv
from tests.support import EXAMPLES

ANT_START = np.array([0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 1.0], np.float32)  # ant.xml: torso pos="0 0 0.75", no rotation
ANT_DOFS = 8


def test_single_env_passes_gymnasium_check_env():
    """ArticEnv passes gymnasium.utils.env_checker.check_env (spaces, seeded reset and step determinism, fresh
    returned data) with no warning from the checker."""
    env = ArticEnv("ant", dt=0.01, max_episode_steps=50)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    assert [str(w.message) for w in caught if "gymnasium" in w.filename] == []


def test_vector_env_spaces_and_shapes():
    """The vector env's batched spaces, observation layout (root pose, root velocities, q, qd), dtypes and
    user reward callable."""
    env = ArticVectorEnv("ant", num_envs=3, dt=0.01, reward_fn=lambda obs, act: obs[:, 2] + act.sum(axis=1))
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.single_action_space.shape == (ANT_DOFS,) and env.action_space.shape == (3, ANT_DOFS)
    assert env.single_observation_space.shape == (13 + 2 * ANT_DOFS,)
    assert env.observation_space.shape == (3, 13 + 2 * ANT_DOFS)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs in env.observation_space
    s = env.observation_slices
    np.testing.assert_allclose(obs[:, s["root_pose"]], np.tile(ANT_START, (3, 1)))
    actions = np.full((3, ANT_DOFS), 0.5, np.float32)
    obs, rewards, terminated, truncated, _ = env.step(actions)
    assert obs.shape == (3, 29) and rewards.shape == (3,) and terminated.dtype == bool and truncated.dtype == bool
    np.testing.assert_allclose(rewards, obs[:, 2] + 4.0, rtol=1e-6)
    # the observation is the scene's state, read through the cache
    cache = env.articulation.create_cache()
    env.articulation.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM)
    np.testing.assert_array_equal(obs[:, s["joint_position"]], cache.joint_position)
    np.testing.assert_array_equal(obs[:, s["root_pose"]], cache.root_transform)


def test_truncation_then_next_step_autoreset():
    """Envs are truncated at max_episode_steps; the next step resets them (reward 0, not done, the start pose) and
    the episode counts again from there."""
    env = ArticVectorEnv("ant", num_envs=2, dt=0.01, max_episode_steps=3, reset_noise_scale=0.0)
    env.reset(seed=1)
    zero = np.zeros((2, ANT_DOFS), np.float32)
    for _ in range(2):
        obs, r, term, trunc, _ = env.step(zero)
        assert not trunc.any() and not term.any()
    obs, r, term, trunc, _ = env.step(zero)
    assert trunc.all() and not term.any()
    assert np.all(np.any(obs[:, :3] != ANT_START[:3], axis=1))  # the final observation: stepped, not reset
    obs, r, term, trunc, _ = env.step(np.ones((2, ANT_DOFS), np.float32))
    np.testing.assert_array_equal(obs[:, :7], np.tile(ANT_START, (2, 1)))
    np.testing.assert_array_equal(obs[:, 13:], 0.0)  # no noise: the initial q and qd
    assert not trunc.any() and not term.any() and np.all(r == 0.0)
    for _ in range(2):
        *_, trunc, _ = env.step(zero)
        assert not trunc.any()
    *_, trunc, _ = env.step(zero)
    assert trunc.all()


def _run(env, actions, plant=None):
    out = []
    for k, a in enumerate(actions):
        if plant is not None and k == 2:
            plant(env)
        out.append(env.step(a))
    return out


def test_non_finite_env_terminates_and_resets_alone():
    """A NaN planted in one env's joint force terminates that env only (info['non_finite']); the next step resets
    it (its joint force cleared, its status too) while the other envs go on exactly as in a run without the NaN."""
    rng = np.random.default_rng(5)
    actions = rng.uniform(-1, 1, (8, 3, ANT_DOFS)).astype(np.float32)
    ref = ArticVectorEnv("ant", num_envs=3, dt=0.01, max_episode_steps=100)
    ref.reset(seed=3)
    expected = _run(ref, actions)
    env = ArticVectorEnv("ant", num_envs=3, dt=0.01, max_episode_steps=100)
    env.reset(seed=3)

    def plant(e):
        f = e.scene.view(e.articulation).control.joint_force
        host = f.numpy().copy()
        host[1, 0] = np.nan
        f.assign(host)

    with pytest.warns(RuntimeWarning, match="non-finite"):
        got = _run(env, actions[:3], plant)
    obs, r, term, trunc, info = got[2]
    np.testing.assert_array_equal(term, [False, True, False])
    assert not trunc.any()  # terminated, not truncated
    np.testing.assert_array_equal(info["non_finite"], [False, True, False])
    assert np.all(np.isfinite(obs)) and obs in env.observation_space  # frozen at its last finite state
    obs, r, term, _, info = env.step(actions[3])
    np.testing.assert_array_equal(obs[1, :7], ANT_START)  # reset (no noise on the root pose)
    assert not term.any() and r[1] == 0.0
    assert not env.scene.env_status.any()
    np.testing.assert_array_equal(env.scene.view(env.articulation).control.joint_force.numpy()[1], 0.0)
    for k in (0, 2):  # the others never noticed
        np.testing.assert_array_equal(obs[k], expected[3][0][k])
    for a in actions[4:]:
        obs, _, term, _, _ = env.step(a)
        assert not term.any() and np.all(np.isfinite(obs))


def test_seeded_resets_and_steps_are_deterministic():
    """Two envs reset with the same seed and given the same actions return identical observations; another seed
    gives another start."""
    a = ArticVectorEnv("ant", num_envs=2, dt=0.01, reset_noise_scale=0.05)
    b = ArticVectorEnv("ant", num_envs=2, dt=0.01, reset_noise_scale=0.05)
    oa, _ = a.reset(seed=11)
    ob, _ = b.reset(seed=11)
    np.testing.assert_array_equal(oa, ob)
    assert not np.array_equal(oa[0], oa[1])  # each env draws its own noise
    actions = np.random.default_rng(0).uniform(-1, 1, (5, 2, ANT_DOFS)).astype(np.float32)
    for act in actions:
        np.testing.assert_array_equal(a.step(act)[0], b.step(act)[0])
    oc, _ = b.reset(seed=12)
    assert not np.array_equal(oa, oc)


def test_actions_map_to_targets_and_forces():
    """Position actions -1..1 span each hinge's limits as drive targets; force actions are force_scale times the
    action as joint forces; actions outside [-1, 1] are clipped."""
    env = ArticVectorEnv("ant", num_envs=2, dt=0.01)
    env.reset(seed=0)
    art = env.articulation
    lows = np.array([j.get_limit_params(ax).low for j, ax in art.dof_list()])
    highs = np.array([j.get_limit_params(ax).high for j, ax in art.dof_list()])
    env.step(np.stack([-np.ones(ANT_DOFS), 5.0 * np.ones(ANT_DOFS)]).astype(np.float32))
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    np.testing.assert_allclose(cache.joint_target_positions, np.stack([lows, highs]), atol=1e-6)

    env = ArticVectorEnv("ant", num_envs=2, dt=0.01, action_mode="force", force_scale=150.0)
    env.reset(seed=0)
    act = np.random.default_rng(1).uniform(-1, 1, (2, ANT_DOFS)).astype(np.float32)
    env.step(act)
    cache = env.articulation.create_cache()
    env.articulation.copy_internal_state_to_cache(cache, CacheFlag.FORCE)
    np.testing.assert_allclose(cache.joint_force, 150.0 * act, rtol=1e-6)


def test_bad_arguments_and_actions_are_refused():
    """Unknown action modes, non-positive dt, bad force scales, drives without force, unknown models and actions of
    the wrong shape or non-finite raise ValidationError naming the argument; an articulation already in a scene is
    refused (TopologyError) before its drives are touched."""
    with pytest.raises(ValidationError, match="action_mode"):
        ArticVectorEnv("ant", action_mode="velocity")
    with pytest.raises(ValidationError, match="dt"):
        ArticVectorEnv("ant", dt=0.0)
    with pytest.raises(ValidationError, match="force_scale"):
        ArticVectorEnv("ant", action_mode="force", force_scale=[1.0, 2.0])
    with pytest.raises(ValidationError, match="force_scale"):
        ArticVectorEnv("ant", action_mode="force", force_scale="big")
    with pytest.raises(ValidationError, match="max_force"):
        ArticVectorEnv("ant", max_force=0.0)
    with pytest.raises(ValidationError, match="no such file"):
        ArticVectorEnv("no_such_model")
    env = ArticVectorEnv("ant", num_envs=2)
    with pytest.raises(TopologyError, match="already in a scene"):
        ArticVectorEnv(env.articulation, kp=7.0)
    assert all(j.get_drive_params(ax).stiffness == 100.0 for j, ax in env.articulation.dof_list())  # the default
    with pytest.raises(ValidationError, match="reset"):
        env.step(np.zeros((2, ANT_DOFS), np.float32))
    env.reset(seed=0)
    with pytest.raises(ValidationError, match="actions"):
        env.step(np.zeros((2, 3), np.float32))
    with pytest.raises(ValidationError, match="non-finite"):
        env.step(np.full((2, ANT_DOFS), np.nan, np.float32))


def test_random_policy_example():
    """examples/gym_random_policy.py runs the ant with random torques: with 10-step episodes, 30 steps end two
    episodes per env (steps 10 and 21: step 11 is the reset), none by a non-finite state, and the torso stays
    between the ground and a plausible jump."""
    path = EXAMPLES / "gym_random_policy.py"
    spec = importlib.util.spec_from_file_location("gym_random_policy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(["--envs", "2", "--steps", "30", "--episode-steps", "10"])
    assert len(out["returns"]) == 4 and out["terminated"] == 0
    assert np.all(np.isfinite(out["returns"]))
    assert out["heights"].shape == (30, 2) and out["heights"].min() > 0.1 and out["heights"].max() < 2.0


def test_fixed_base_articulation_given_as_object():
    """A fixed-base articulation passed as an object (the shipped arm6 URDF): observations are q and qd only, the
    position drives get the given gains, and ArticEnv's reward_fn sees one observation and one action."""
    from artic.assets import load_model, model_path

    art = load_model(model_path("arm6"))[0]
    n = art.dof_count
    env = ArticEnv(art, dt=0.01, kp=50.0, kd=5.0, reward_fn=lambda obs, act: float(obs.shape[0] + act.shape[0]))
    assert set(env.observation_slices) == {"joint_position", "joint_velocity"}
    assert env.observation_space.shape == (2 * n,) and env.action_space.shape == (n,)
    assert all(
        j.get_drive_params(ax).stiffness == 50.0 and j.get_drive_params(ax).damping == 5.0 for j, ax in art.dof_list()
    )
    obs, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(np.zeros(n, np.float32))
    assert obs.shape == (2 * n,) and reward == 3 * n and not terminated and not truncated
    assert info == {"non_finite": False}


def test_closed_envs_and_bad_seeds_are_refused():
    """Issue 27: an env stepped after close() went on stepping, and a bad seed surfaced as Gymnasium's own error.
    Both envs now refuse step and reset after close (twice closing is fine) and take None, a Python or a NumPy
    integer >= 0 as seed, refusing anything else with a ValidationError."""
    for env in (ArticVectorEnv("ant", num_envs=2, dt=0.02), ArticEnv("ant", dt=0.02)):
        for seed in (-1, "7", 1.5, True):
            with pytest.raises(ValidationError, match="seed must be None or a non-negative integer"):
                env.reset(seed=seed)
        env.reset(seed=np.int64(7))
        env.step(env.action_space.sample())
        env.close()
        env.close()
        for call in (lambda e=env: e.step(e.action_space.sample()), lambda e=env: e.reset()):
            with pytest.raises(ValidationError, match=r"after close\(\); create a new env"):
                call()
        with pytest.raises(ValidationError, match="after close"):
            _ = env.scene
