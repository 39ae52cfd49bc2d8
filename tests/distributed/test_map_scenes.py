"""`map_scenes` without Ray (address=None): the reference path a cluster's results are compared with. Results in
input order, failures carried with their configuration, nothing skipped, bad arguments refused."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from artic import ArticError, ValidationError
from artic.distributed import MapError, TaskFailure, map_scenes
from tests.support.distributed_tasks import drop_ant
from tests.support.imports import hide_package


def _square_or_raise(x):
    if x == 3:
        raise ValidationError("config 3 is refused on purpose")
    return x * x


def test_results_come_in_input_order():
    assert map_scenes(_square_or_raise, [5, 1, 4], progress=False) == [25, 1, 16]
    assert map_scenes(_square_or_raise, iter(range(3)), progress=False) == [0, 1, 4]
    assert map_scenes(_square_or_raise, [], progress=False) == []


def test_a_failed_task_names_its_config_and_the_others_finish():
    """A function that raises for one configuration: with errors='raise' a MapError (an ArticError) after all the
    tasks ran, naming the configuration and the error, with the other results kept; with errors='return' the
    TaskFailure stands in the failed slot, its error the original exception."""
    with pytest.raises(
        MapError, match=r"(?s)1 of 5 tasks failed.*config 3 \(3\): ValidationError: config 3 is refused"
    ) as e:
        map_scenes(_square_or_raise, range(5), progress=False)
    assert isinstance(e.value, ArticError)
    assert e.value.results == [0, 1, 4, None, 16]
    (failure,) = e.value.failures
    assert failure.index == 3 and failure.config == 3 and isinstance(failure.error, ValidationError)
    assert "_square_or_raise" in failure.trace
    out = map_scenes(_square_or_raise, range(5), errors="return", progress=False)
    assert out[:3] == [0, 1, 4] and out[4] == 16 and isinstance(out[3], TaskFailure)
    copy = pickle.loads(pickle.dumps(out[3]))  # it travels back from a Ray worker
    assert (copy.index, copy.config, str(copy)) == (3, 3, str(out[3]))


def test_artic_errors_inside_a_scene_come_back(capsys):
    """A scene task given a negative mass: artic's ValidationError comes back with the configuration; the progress
    line says how many failed."""
    configs = [
        {"envs": 1, "seed": 0, "spread": 0.1, "steps": 5, "torque": 0.0},
        {"envs": 1, "seed": 1, "spread": 0.1, "steps": 5, "torque": 0.0, "mass": -1.0},
    ]
    out = map_scenes(drop_ant, configs, errors="return")
    assert isinstance(out[0], dict) and np.all(np.isfinite(out[0]["q"]))
    assert isinstance(out[1], TaskFailure) and isinstance(out[1].error, ValidationError)
    assert "mass" in str(out[1]) and "'mass': -1.0" in str(out[1])
    assert "map_scenes: 2/2 tasks done (1 failed)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"fn": 3}, "fn must be callable"),
        ({"configs": 5}, "configs must be an iterable"),
        ({"errors": "ignore"}, "errors must be 'raise' or 'return'"),
        ({"max_retries": -1}, "max_retries must be a non-negative integer"),
        ({"num_cpus": 0}, "num_cpus must be a positive number"),
        ({"address": 7}, "address must be None"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    args = {"fn": _square_or_raise, "configs": [1, 2]} | kwargs
    with pytest.raises(ValidationError, match=match):
        map_scenes(**args)


def test_an_address_without_ray_says_how_to_install(monkeypatch):
    """Ray is optional: asked for a cluster without it, map_scenes says how to install it."""
    hide_package(monkeypatch, "ray")
    with pytest.raises(ArticError, match=r"pip install 'artic\[ray\]'"):
        map_scenes(_square_or_raise, [1], address="local", progress=False)
