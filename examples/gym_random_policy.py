"""A random policy on the shipped MuJoCo ant through artic's Gymnasium vector env (artic.interop.gym_env).

The ant's eight hinges take joint torques (action_mode 'force', 150 Nm per unit action: the gear of ant.xml's
motors), or drive targets with --position. Each env step is 0.05 s in 5 scene steps of 0.01 s (MuJoCo's Ant-v5:
timestep 0.01, frame_skip 5); the reward is the torso's forward (x) velocity, as in Ant-v5 without its other terms.
Episodes end after --episode-steps steps (truncated) or when an env's state goes non-finite (terminated), and are
reset on the next step (Gymnasium's next-step autoreset). The script prints the episodes' returns and the torso
heights.

    python examples/gym_random_policy.py [--envs 16] [--steps 200] [--episode-steps 100] [--position] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

from artic.interop.gym_env import ArticVectorEnv

DT = 0.05  # [s] per env step


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--envs", type=int, default=16, help="parallel envs (one artic scene)")
    parser.add_argument("--steps", type=int, default=200, help="vector env steps")
    parser.add_argument("--episode-steps", type=int, default=100, help="steps before an episode is truncated")
    parser.add_argument("--position", action="store_true", help="actions are drive targets instead of torques")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resets and of the random actions")
    args = parser.parse_args(argv)
    mode = "position" if args.position else "force"
    env = ArticVectorEnv(
        "ant",
        num_envs=args.envs,
        dt=DT,
        substeps=5,
        action_mode=mode,
        force_scale=150.0,
        kp=200.0,
        kd=20.0,
        reset_noise_scale=0.1,
        max_episode_steps=args.episode_steps,
        reward_fn=lambda obs, actions: obs[:, 7],
    )  # root COM linear velocity x [m/s]
    height = env.observation_slices["root_pose"].start + 2
    obs, _ = env.reset(seed=args.seed)
    env.action_space.seed(args.seed)
    returns, episode_return = [], np.zeros(args.envs)
    terminated_count, heights = 0, []
    for _ in range(args.steps):
        obs, rewards, terminated, truncated, _ = env.step(env.action_space.sample())
        episode_return += rewards
        heights.append(obs[:, height])
        ended = terminated | truncated
        returns += episode_return[ended].tolist()
        episode_return[ended] = 0.0  # the next step resets these envs and returns reward 0 for them
        terminated_count += int(terminated.sum())
    heights = np.array(heights)
    print(
        f"ant, {args.envs} envs, {mode} actions, {args.steps} steps of {DT:g} s: {len(returns)} "
        f"episodes ended ({terminated_count} by a non-finite state), mean return "
        f"{np.mean(returns) if returns else float('nan'):.3f}; torso height {heights.min():.3f} to "
        f"{heights.max():.3f} m (mean {heights.mean():.3f})"
    )
    env.close()
    return {"returns": np.array(returns), "terminated": terminated_count, "heights": heights}


if __name__ == "__main__":
    main()
