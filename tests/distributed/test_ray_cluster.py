"""`map_scenes` and a Gymnasium vector env on a real Ray cluster (issue 30): a head node and a second worker node,
each a `ray start --block` process on 127.0.0.1 (`LocalCluster`), started once for this module and stopped at its
end. Scene tasks give bitwise the results of the local run; a worker process killed mid-task costs nothing (Ray
runs the task again); a task that raises comes back with its configuration; an ArticVectorEnv in a Ray actor steps
as the same env in this process."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest

from artic import ValidationError
from artic.distributed import LocalCluster, MapError, map_scenes
from tests.support.distributed_tasks import drop_ant

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(nodes=2, cpus_per_node=1) as c:
        yield c
    if ray.is_initialized():
        ray.shutdown()


def _configs(steps, **extra):
    return [
        dict(envs=2, seed=s, spread=0.3, steps=steps, torque=t, **extra) for s, t in ((0, 0.0), (1, 0.4), (2, -0.3))
    ]


def _same(a, b):
    return all(np.array_equal(x["root"], y["root"]) and np.array_equal(x["q"], y["q"]) for x, y in zip(a, b))


def test_results_equal_the_local_run_bitwise(cluster):
    """Three ant scenes (2 envs each, different seeds and torques) on both nodes give exactly the local results, in
    input order; the two nodes are both used."""
    configs = _configs(200)
    local = map_scenes(drop_ant, configs, progress=False)
    remote = map_scenes(drop_ant, configs, cluster.address, progress=False)
    assert len(remote) == 3 and _same(local, remote)
    assert not np.array_equal(local[0]["q"], local[1]["q"])  # the configurations matter


def test_a_killed_worker_loses_no_result(cluster, tmp_path):
    """The worker process running the first task is killed (SIGKILL) while it steps; Ray runs the task again and
    the batch completes with the local run's results."""
    configs = _configs(3000, pid_dir=str(tmp_path))
    local = map_scenes(drop_ant, [dict(c, pid_dir="") for c in configs], progress=False)
    killed = []

    def kill_first_worker():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            started = sorted(tmp_path.iterdir(), key=lambda p: p.stat().st_mtime)
            if started:
                time.sleep(0.3)  # well inside the task (it steps for seconds)
                pid = int(started[0].name.split(".")[1])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_first_worker)
    killer.start()
    remote = map_scenes(drop_ant, configs, cluster.address, max_retries=3, progress=False)
    killer.join()
    assert len(killed) == 1
    runs = [p.name for p in tmp_path.iterdir()]
    assert len(runs) > len(configs)  # the killed task started again, in another worker process
    assert _same(local, remote)


def test_a_raising_task_comes_back_with_its_config(cluster):
    """A scene given a negative mass raises artic's ValidationError inside its Ray task: map_scenes raises a
    MapError naming that configuration after the other tasks finished, with their results."""
    configs = _configs(20)
    configs[1]["mass"] = -2.0
    with pytest.raises(MapError, match=r"1 of 3 tasks failed") as e:
        map_scenes(drop_ant, configs, cluster.address, progress=False)
    (failure,) = e.value.failures
    assert failure.index == 1 and failure.config["mass"] == -2.0 and isinstance(failure.error, ValidationError)
    assert e.value.results[1] is None and isinstance(e.value.results[0], dict) and isinstance(e.value.results[2], dict)


def test_vector_env_as_a_ray_actor(cluster):
    """ArticVectorEnv constructed inside a Ray actor (each on a node's CPU): seeded resets and the same actions give
    the observations and rewards of the same env in this process, bitwise."""
    from artic.interop.gym_env import ArticVectorEnv

    kwargs = {
        "num_envs": 3,
        "dt": 0.02,
        "substeps": 2,
        "action_mode": "force",
        "force_scale": 50.0,
        "max_episode_steps": 20,
    }
    actions = np.random.default_rng(5).uniform(-1.0, 1.0, (25, 3, 8))
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        actors = [ray.remote(num_cpus=1)(ArticVectorEnv).remote("ant", **kwargs) for _ in range(2)]
        firsts = ray.get([a.reset.remote(seed=10 + k) for k, a in enumerate(actors)])
        steps = [[] for _ in actors]
        for act in actions:
            out = ray.get([a.step.remote(act) for a in actors])
            for k, o in enumerate(out):
                steps[k].append(o[:4])
    finally:
        ray.shutdown()
    for k in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the ant file's RK4 and visual parts, reported on load
            env = ArticVectorEnv("ant", **kwargs)
        obs, _ = env.reset(seed=10 + k)
        assert np.array_equal(obs, firsts[k][0])
        for act, theirs in zip(actions, steps[k]):
            ours = env.step(act)[:4]
            assert all(np.array_equal(x, y) for x, y in zip(ours, theirs))
        env.close()
    assert not np.array_equal(firsts[0][0], firsts[1][0])  # the seeds differ


def _trials(folder):
    """Two synthetic marker trials of the humanoid (different motions) and a marker file that cannot be read."""
    from artic.mocap import save_segment_model, write_c3d
    from artic.mocap.synthetic import humanoid, humanoid_markers, record_markers, simulate_motion

    m = humanoid()
    names, segs, att = humanoid_markers(m)
    files = []
    for k, seconds in enumerate((0.2, 0.25)):
        motion = simulate_motion(m, seconds=seconds, rate=100.0, seed=k)
        write_c3d(folder / f"walk{k}.c3d", record_markers(motion, [m.index(s) for s in segs], att, names, segs))
        files.append(str(folder / f"walk{k}.c3d"))
    (folder / "broken.c3d").write_bytes(b"not a c3d file")
    save_segment_model(folder / "model.xml", m, names, segs, att)
    return [*files, str(folder / "broken.c3d")], str(folder / "model.xml")


def test_cli_trials_on_the_cluster(cluster, tmp_path, capsys):
    """`artic fit` and `artic track` with three marker files: one folder per trial, a summary table (printed and in
    summary.csv) with the broken file's trial failed and why, exit code 1; with --ray on the cluster the fitted
    models and tracked arrays are the local run's, byte for byte."""
    from artic.cli.main import main

    files, model = _trials(tmp_path)
    fit = ["--epochs", "2", "--relax-steps", "5", "--envs", "4"]
    for where, ray_args in (("local", []), ("ray", ["--ray", cluster.address])):
        assert main(["fit", *files, "--model", model, "--out", str(tmp_path / f"fit_{where}"), *fit, *ray_args]) == 1
        assert main(["track", *files, "--model", model, "--out", str(tmp_path / f"track_{where}"), *ray_args]) == 1
    out = capsys.readouterr().out
    assert out.count("2 of 3 trials done") == 4
    summary = (tmp_path / "fit_ray" / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("trial,frames,marker RMS first [mm]") and len(summary) == 4
    assert summary[1].startswith("walk0,21,") and summary[1].endswith(",ok")
    assert summary[3].startswith("broken,") and "failed: " in summary[3] and "broken.c3d" in summary[3]
    for k in range(2):
        local, remote = tmp_path / "fit_local" / f"walk{k}", tmp_path / "fit_ray" / f"walk{k}"
        assert (local / "fitted.xml").read_bytes() == (remote / "fitted.xml").read_bytes()
        a, b = (
            np.load(tmp_path / "track_local" / f"walk{k}" / "track.npz"),
            np.load(tmp_path / "track_ray" / f"walk{k}" / "track.npz"),
        )
        assert all(np.array_equal(a[key], b[key], equal_nan=a[key].dtype.kind == "f") for key in a.files)
    assert not (tmp_path / "fit_ray" / "broken" / "fitted.xml").exists()


def test_rollouts_example(cluster, capsys):
    """examples/ray_rollouts.py on the cluster: two actors' rollouts equal the same workers' rollouts stepped in
    this process, bitwise; the throughput lines are printed."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "ray_rollouts.py"
    spec = importlib.util.spec_from_file_location("ray_rollouts", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    rollouts, local, remote_s, local_s = example.main(["--address", cluster.address, "--envs", "4", "--steps", "30"])
    assert len(rollouts) == 2 and rollouts[0]["obs"].shape[:2] == (31, 4)
    assert all(np.array_equal(a[k], b[k]) for a, b in zip(rollouts, local) for k in a)
    assert not np.array_equal(rollouts[0]["obs"], rollouts[1]["obs"])  # seeded differently
    out = capsys.readouterr().out
    assert "rollouts identical: True" in out and "env-steps/s" in out and remote_s > 0 and local_s > 0


def test_local_cluster_arguments_are_checked():
    with pytest.raises(ValidationError, match="nodes must be a positive integer"):
        LocalCluster(nodes=0)
    with pytest.raises(ValidationError, match="cpus_per_node must be a positive integer"):
        LocalCluster(cpus_per_node=1.5)


def test_local_address_starts_and_stops_a_cluster_of_its_own(cluster):
    """address='local' starts a Ray cluster for the call (not joining the one running here) and stops it after."""
    assert map_scenes(abs, [-1.5, 2, -3], "local", progress=False) == [1.5, 2, 3]
    assert not ray.is_initialized()
