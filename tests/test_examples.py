"""The example scripts run and do what they say."""

import importlib.util
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gripper_mimic_example(tmp_path):
    """The mimic gripper's right finger follows the driven left one within 1e-4 m over a full open/close cycle, the
    tendon-geared wheels keep q0 = 0.5 q1 within 0.02 rad while turning, and the plot is written."""
    plot = tmp_path / "gripper.png"
    qg, qw = _load("gripper_mimic").main(["--seconds", "2.5", "--plot", str(plot)])
    assert np.ptp(qg[:, 0]) > 0.035
    assert np.abs(qg[:, 1] - qg[:, 0]).max() < 1e-4
    assert qw[-1, 0] > 5.0 and np.abs(qw[:, 0] - 0.5 * qw[:, 1]).max() < 0.02
    assert plot.stat().st_size > 10_000
