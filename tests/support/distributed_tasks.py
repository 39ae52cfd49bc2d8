"""Task functions for tests/distributed: importable by Ray's workers (LocalCluster puts the repository on their
PYTHONPATH), each building and stepping its own scene from a configuration dict."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

import artic
from artic.assets import model_path


def drop_ant(config: dict) -> dict:
    """The shipped ant (`config["envs"]` envs, joints started at seeded random angles of `config["spread"]` rad) on
    its floor for `config["steps"]` steps of 0.01 s with constant motor torques `config["torque"]`; the final root
    poses and joint angles (float32, as the scene keeps them). With `config["pid_dir"]`, the worker's pid is written
    there first (the fault test kills it). A `config["mass"]` is set on the torso (a negative one raises)."""
    if config.get("pid_dir"):
        Path(config["pid_dir"], f"{config['seed']}.{os.getpid()}").write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(model_path("ant"))
    art = model.articulations[0]
    if "mass" in config:
        art.get_links()[0].mass = config["mass"]
    scene = artic.Scene(config["envs"], gravity=model.gravity)
    model.add_to(scene)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.ALL)
    rng = np.random.default_rng(config["seed"])
    cache.joint_position[:] = rng.uniform(-config["spread"], config["spread"], cache.joint_position.shape)
    cache.joint_force[:] = config["torque"]
    art.apply_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.FORCE)
    for _ in range(config["steps"]):
        scene.step(0.01)
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.ROOT_TRANSFORM)
    return {"root": cache.root_transform.copy(), "q": cache.joint_position.copy()}
