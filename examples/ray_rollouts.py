"""Rollouts from several artic vector envs at once, each a Ray actor, against one env in this process.

Each actor (`RolloutWorker`) holds one `ArticVectorEnv` (the shipped ant, --envs envs, torque actions) and collects
a whole rollout per call, so that one round trip carries --steps env steps; actions come from a seeded random
policy inside the actor. The script starts a Ray cluster on this machine (`LocalCluster`: a head node and
--nodes - 1 more, one CPU each) or joins the one at --address, collects one rollout per actor, and prints the
throughput in env-steps/s against one worker stepping the same rollouts here, one after the other. The rollouts are
the same on both sides: each worker's env is seeded, and artic's CPU step is deterministic.

    python examples/ray_rollouts.py [--actors 2] [--envs 16] [--steps 200] [--nodes 2] [--address HOST:PORT]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


class RolloutWorker:
    """One ArticVectorEnv; `rollout(steps, seed)` runs a seeded random policy and returns the observations
    (steps + 1, E, obs), actions (steps, E, 8), rewards and terminations (steps, E)."""

    def __init__(self, envs: int):
        from artic.interop.gym_env import ArticVectorEnv

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the ant file's RK4 and visual parts, reported on load
            self.env = ArticVectorEnv(
                "ant", num_envs=envs, dt=0.05, substeps=5, action_mode="force", force_scale=150.0,
                max_episode_steps=100, reward_fn=lambda obs, actions: obs[:, 7],
            )  # fmt: skip

    def rollout(self, steps: int, seed: int) -> dict:
        rng = np.random.default_rng(seed)
        obs, _ = self.env.reset(seed=seed)
        out = {"obs": [obs], "actions": [], "rewards": [], "terminated": []}
        for _ in range(steps):
            action = rng.uniform(-1.0, 1.0, self.env.action_space.shape)
            obs, reward, terminated, _, _ = self.env.step(action)
            for key, value in zip(("obs", "actions", "rewards", "terminated"), (obs, action, reward, terminated)):
                out[key].append(value)
        return {key: np.array(value) for key, value in out.items()}


def collect(address: str, actors: int, envs: int, steps: int) -> tuple[list[dict], float]:
    """One rollout from each of `actors` RolloutWorker actors on the cluster at `address`; the rollouts and the
    seconds they took (actor start-up excluded)."""
    import ray

    ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    try:
        workers = [ray.remote(num_cpus=1)(RolloutWorker).remote(envs) for _ in range(actors)]
        ray.get([w.rollout.remote(1, seed=k) for k, w in enumerate(workers)])  # started, kernels loaded
        start = time.perf_counter()
        rollouts = ray.get([w.rollout.remote(steps, seed=k) for k, w in enumerate(workers)])
        return rollouts, time.perf_counter() - start
    finally:
        ray.shutdown()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--actors", type=int, default=2, help="Ray actors, one vector env each")
    parser.add_argument("--envs", type=int, default=16, help="envs per vector env")
    parser.add_argument("--steps", type=int, default=200, help="env steps per rollout")
    parser.add_argument("--nodes", type=int, default=2, help="nodes of the cluster started here (one CPU each)")
    parser.add_argument("--address", default=None, help="join this Ray cluster instead of starting one")
    args = parser.parse_args(argv)
    from artic.distributed import LocalCluster

    if args.address:
        rollouts, remote_s = collect(args.address, args.actors, args.envs, args.steps)
    else:
        with LocalCluster(nodes=args.nodes, cpus_per_node=1) as cluster:
            rollouts, remote_s = collect(cluster.address, args.actors, args.envs, args.steps)
    here = RolloutWorker(args.envs)
    here.rollout(1, seed=0)
    start = time.perf_counter()
    local = [here.rollout(args.steps, seed=k) for k in range(args.actors)]
    local_s = time.perf_counter() - start
    same = all(np.array_equal(a[key], b[key]) for a, b in zip(rollouts, local) for key in a)
    env_steps = args.actors * args.envs * args.steps
    print(f"{args.actors} actors x {args.envs} envs x {args.steps} steps = {env_steps} env-steps")
    print(f"Ray actors:   {remote_s:.2f} s, {env_steps / remote_s:,.0f} env-steps/s")
    print(f"one process:  {local_s:.2f} s, {env_steps / local_s:,.0f} env-steps/s (speed-up {local_s / remote_s:.2f})")
    print(f"rollouts identical: {same}")
    return rollouts, local, remote_s, local_s


if __name__ == "__main__":
    main()
