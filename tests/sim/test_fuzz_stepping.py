"""Fuzz test, second half (issue 14): the seeded mutants that load (tests/support/fuzz.py) are added to a scene and
stepped; each is refused with an ArticError when added, or steps with every env either finite or reported in
`scene.env_status` (never a silent NaN, never another exception). Bounded: a few dozen short runs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import ArticError, CacheFlag
from tests.support.fuzz import load_mutants

SEEDS = (0, 1, 2)
PER_SEED = 300  # mutants made per seed (as the loader fuzz test); those that load are stepped
ENVS = 2
STEPS = 60  # 0.5 s at 1/120 s
_STATE = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES


def _finite_envs(art) -> np.ndarray:
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, _STATE)
    ok = np.ones(ENVS, bool)
    for name in ("joint_position", "joint_velocity", "root_transform", "root_linear_velocity", "root_angular_velocity"):
        a = getattr(cache, name, None)
        if a is not None and a.size:
            ok &= np.all(np.abs(a.reshape(ENVS, -1)) <= artic.sim.status.FINITE_LIMIT, axis=1)
    return ok


def _step(loaded):
    """(scene, articulations) after STEPS steps, or the ArticError that refused the model when it was added."""
    arts = loaded.articulations if isinstance(loaded, artic.MjcfModel) else [loaded]
    gravity = loaded.gravity if isinstance(loaded, artic.MjcfModel) else (0.0, 0.0, -9.81)
    scene = artic.Scene(ENVS, gravity=gravity)
    try:
        if isinstance(loaded, artic.MjcfModel):
            loaded.add_to(scene)
        else:
            scene.add_articulation(loaded)
    except ArticError as e:
        return e, arts
    for _ in range(STEPS):
        scene.step(1.0 / 120.0)
    return scene, arts


@pytest.mark.parametrize("seed", SEEDS)
def test_loaded_mutants_step_finitely_or_report_their_envs(seed, tmp_path):
    """For every mutant that loads: adding it raises an ArticError, or after 0.5 s each env's state is finite
    exactly where `scene.env_status` says so, and `get_env_status` never charges an articulation whose state is
    finite."""
    mutants = load_mutants(seed, PER_SEED, tmp_path)
    assert len(mutants) >= 10  # the test must step something
    stepped = 0
    for m in mutants:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # repairs, dropped MJCF content and NaN warnings are expected here
            scene, arts = _step(m.loaded)
        if isinstance(scene, ArticError):
            continue
        stepped += 1
        finite = np.ones(ENVS, bool)
        for art in arts:
            art_finite = _finite_envs(art)
            # an env is charged to the first articulation of its block found bad: never to a finite one
            assert not np.any(scene.get_env_status(art) & art_finite), f"{m.path.name} {m.mutations}: '{art.name}'"
            finite &= art_finite
        np.testing.assert_array_equal(scene.env_status, ~finite, err_msg=f"{m.path.name} {m.mutations}")
    assert stepped >= 10
