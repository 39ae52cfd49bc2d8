"""The `artic info` main job on the shipped model and on a URDF path; bad models give a clear error."""

import subprocess
import sys

import numpy as np

from artic.cli.main import main
from helpers import robot_path


def test_info_shipped_model(capsys):
    """`artic info` (default arm6) prints the tree, 8 dofs in cache order, the mimic tag and the total mass."""
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "links      9   joints 8   dofs 8   total mass 12.9 kg" in out
    assert "finger_right_joint = 1 * finger_left_joint + 0" in out
    assert out.index("shoulder_pan") < out.index("elbow") < out.index("finger_left_joint")


def test_info_urdf_path_floating(capsys):
    assert main(["info", str(robot_path("solo12")), "--floating"]) == 0
    out = capsys.readouterr().out
    assert "(floating base)" in out and "dofs 12" in out


def test_info_unknown_model(capsys):
    assert main(["info", "no-such-robot"]) == 2
    assert "no such file and no shipped model" in capsys.readouterr().err


def test_console_entry_point_runs():
    """python -m artic info runs in a fresh interpreter (the README's first command uses the same entry)."""
    r = subprocess.run([sys.executable, "-m", "artic", "info", "arm6"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "dofs 8" in r.stdout


def test_sim_writes_trajectory_and_plot(tmp_path, capsys):
    """`artic sim` on the shipped arm: the npz holds (steps, envs, dofs) positions that approach the targets, and a
    PNG plot is written."""
    import numpy as np

    out, plot = tmp_path / "run.npz", tmp_path / "run.png"
    assert main(["sim", "--seconds", "1.5", "--envs", "2", "--solver", "tgs", "--out", str(out),
                 "--plot", str(plot)]) == 0
    data = np.load(out)
    assert data["q"].shape == (180, 2, 8) and list(data["dof_names"])[:2] == ["shoulder_pan", "shoulder_lift"]
    assert np.abs(data["q"][-1, :, 0] - data["targets"][0]).max() < 1e-2  # the pan joint feels no gravity
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert "per env-step" in capsys.readouterr().out


def test_sim_target_errors(capsys):
    assert main(["sim", "--target", "1", "2", "--out", "", "--plot", ""]) == 2
    assert "2 values given for 8 dofs" in capsys.readouterr().err
    assert main(["sim", "--target", "nope=1", "--out", "", "--plot", ""]) == 2
    assert "no dof named 'nope'" in capsys.readouterr().err


def test_sim_runs_an_mjcf_model_with_contacts(tmp_path, capsys):
    """`artic sim ant`: the shipped MJCF ant with its floor; it lands and its drives move the legs."""
    out, png = tmp_path / "ant.npz", tmp_path / "ant.png"
    assert main(["sim", "ant", "--seconds", "1", "--dt", "0.01", "--out", str(out), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "1 static actor" in text
    data = np.load(out)
    assert data["q"].shape == (100, 1, 8) and np.all(np.isfinite(data["q"]))
    assert png.stat().st_size > 10_000


def test_sim_reports_envs_whose_state_went_non_finite(tmp_path, capsys, monkeypatch):
    """`artic sim` says which envs went non-finite and when, leaves them out of the |q - target| summary and exits
    1. The cause is planted: env 1's joint force becomes NaN before the 10th step, and the real step loses that
    env's state, which the step's own check reports."""
    import artic.scene

    real_step = artic.scene.Scene.step
    calls = {"n": 0}

    def step(self, dt):
        calls["n"] += 1
        if calls["n"] == 10:
            art = self.articulations[0]
            f = self.view(art).control.joint_force
            a = f.numpy()
            a[1, 0] = np.nan
            f.assign(a)
        return real_step(self, dt)

    monkeypatch.setattr(artic.scene.Scene, "step", step)
    assert main(["sim", "--seconds", "0.25", "--envs", "3", "--out", "", "--plot", ""]) == 1
    captured = capsys.readouterr()
    assert "1 of 3 env(s) went non-finite" in captured.err and "env(s) [1]" in captured.err
    assert "t = 0.08333 s" in captured.err  # the 10th step at dt 1/120
    assert "max over the finite envs" in captured.out
    summary = captured.out.split("finite envs):")[1]
    assert "nan" not in summary


def test_sim_and_info_show_what_the_import_dropped_or_repaired(tmp_path, capsys):
    """A URDF whose moving link has no <inertial>: `artic info` and `artic sim` print the mass check's repair as a
    warning line instead of hiding it (they used to silence import warnings)."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"/><link name="tip"><collision><geometry><sphere radius="0.05"/>'
        '</geometry></collision></link><joint name="wrist" type="revolute"><parent link="base"/>'
        '<child link="tip"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>'
        '</robot>')
    assert main(["info", str(urdf)]) == 0
    out = capsys.readouterr().out
    assert "warning:" in out and "'tip'" in out
    assert main(["sim", str(urdf), "--seconds", "0.05", "--out", "", "--plot", ""]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "'tip'" in err


def test_sim_refuses_zero_steps_and_unwritable_outputs_before_simulating(tmp_path, capsys):
    """`--seconds` shorter than one step and an --out or --plot in a missing folder are clear errors (exit 2)
    given before the model is loaded or simulated (the first ended in a ZeroDivisionError, the second after the
    whole run)."""
    assert main(["sim", "--seconds", "0.001", "--out", "", "--plot", ""]) == 2
    assert "less than one step" in capsys.readouterr().err
    missing = tmp_path / "no" / "such" / "run.npz"
    assert main(["sim", "--out", str(missing), "--plot", ""]) == 2
    err = capsys.readouterr()
    assert "--out" in err.err and "does not exist" in err.err and "simulating" not in err.out
    assert main(["sim", "--seconds", "nan", "--out", "", "--plot", ""]) == 2
