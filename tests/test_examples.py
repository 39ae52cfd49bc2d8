"""The example scripts run and do what they say."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

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


def test_four_bar_example(tmp_path):
    """The manual's four-bar (compliance 1e-6, damping 25000) keeps one dof: in 1 s the crank (bar 1) falls from
    the horizontal to the folded pose near -180 deg, hinge joint0's theta is 90 deg minus the crank's elevation to
    0.02 rad (a parallelogram), every joint error stays below 5 mm (C F, with F ~ 3 kN at the bottom of the swing),
    and the plot is written. With --hard the errors stay below 0.1 mm."""
    plot = tmp_path / "four_bar.png"
    _, angle, theta, errors = _load("four_bar").main(["--seconds", "1", "--plot", str(plot)])
    assert np.degrees(angle[0]) == pytest.approx(0.0, abs=1e-3)
    assert np.degrees(angle.min()) < -170.0
    assert np.abs(theta - (0.5 * np.pi - angle)).max() < 0.02
    assert errors.max() < 5e-3
    assert plot.stat().st_size > 10_000
    _, _, _, hard = _load("four_bar").main(["--seconds", "0.5", "--hard", "--plot", ""])
    assert hard.max() < 1e-4


def test_deadzone_controller_example():
    """The deadzone arm: the shoulder controller applies exactly zero torque in every step that ends inside its
    band [-0.4, 0.4] and pushes back (at most its 60 N m cap) in the others; the shoulder starts 0.8 rad outside and
    is back inside within 0.3 s; the elbow's controller pushes back in the steps that end outside its band [-1, 1]
    and applies at most the secondary spring's 2 N m inside."""
    q, torque = _load("deadzone_controller").main(["--seconds", "2"])
    inside = np.abs(q[:, 0]) < 0.4
    assert np.all(torque[inside, 0] == 0.0)
    outside = ~inside
    assert np.all(np.sign(torque[outside, 0]) == -np.sign(q[outside, 0]))  # pushing back towards the band
    assert np.abs(torque[:, 0]).max() <= 60.0 * (1 + 1e-5)
    assert np.argmax(inside) * 0.005 < 0.3
    elbow_out = np.abs(q[:, 1]) >= 1.0
    assert np.all(np.sign(torque[elbow_out, 1]) == -np.sign(q[elbow_out, 1]))
    assert np.abs(torque[~elbow_out, 1]).max() <= 2.0 * (1 + 1e-5)  # inside: the secondary spring's cap alone


def _run_example(name, args, extra_env):
    import os
    import subprocess
    import sys

    root = EXAMPLES.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    env.pop("ARTIC_VERBOSE", None)
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args], capture_output=True, text=True, timeout=600, env=env
    )


def test_examples_are_quiet_unless_asked(tmp_path):
    """An example prints its own lines only: no Warp banner, no kernel-module lines, no CUDA-driver notice (Warp's
    C++ writes that one to fd 2). ARTIC_VERBOSE=1 brings Warp's start-up back."""
    args = ["--seconds", "0.2", "--plot", str(tmp_path / "g.png")]
    quiet = _run_example("gripper_mimic", args, {})
    assert quiet.returncode == 0, quiet.stderr
    out = quiet.stdout + quiet.stderr
    assert "gripper:" in quiet.stdout
    for noise in ("Warp ", "Module ", "CUDA driver"):
        assert noise not in out, f"{noise!r} printed:\n{out}"
    loud = _run_example("gripper_mimic", args, {"ARTIC_VERBOSE": "1"})
    assert loud.returncode == 0, loud.stderr
    assert "initialized" in loud.stdout + loud.stderr  # Warp's banner: "Warp 1.x initialized:"
