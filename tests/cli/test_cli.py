"""The `artic info` main job on the shipped model and on a URDF path; bad models give a clear error."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from artic.cli.main import main
from tests.support.models import robot_path


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
    assert (
        main(["sim", "--seconds", "1.5", "--envs", "2", "--solver", "tgs", "--out", str(out), "--plot", str(plot)]) == 0
    )
    data = np.load(out)
    assert data["q"].shape == (180, 2, 8) and list(data["dof_names"])[:2] == ["shoulder_pan", "shoulder_lift"]
    assert np.abs(data["q"][-1, :, 0] - data["targets"][0]).max() < 1e-2  # the pan joint feels no gravity
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert "per env-step" in capsys.readouterr().out


def test_sim_with_the_direct_solver(tmp_path, capsys):
    """`artic sim --solver direct` on the shipped arm: the direct solver drives the pan joint to its target like
    PGS does (1e-2 rad after 1.5 s) and the summary names the solver."""
    import numpy as np

    out = tmp_path / "run.npz"
    assert main(["sim", "--seconds", "1.5", "--solver", "direct", "--out", str(out), "--plot", ""]) == 0
    data = np.load(out)
    assert abs(data["q"][-1, 0, 0] - data["targets"][0]) < 1e-2
    assert "DIRECT" in capsys.readouterr().out


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
    import artic.sim.scene

    real_step = artic.sim.scene.Scene.step
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

    monkeypatch.setattr(artic.sim.scene.Scene, "step", step)
    assert main(["sim", "--seconds", "0.25", "--envs", "3", "--out", "", "--plot", ""]) == 1
    captured = capsys.readouterr()
    assert "1 of 3 env(s) went non-finite" in captured.err and "env(s) [1]" in captured.err
    assert "t = 0.08333 s" in captured.err  # the 10th step at dt 1/120
    assert "max over the finite envs" in captured.out
    summary = captured.out.split("finite envs):")[1]
    assert "nan" not in summary


def test_sim_and_info_show_what_the_import_dropped_or_repaired(tmp_path, capsys):
    """A URDF whose moving link has no <inertial>: `artic info` and `artic sim` print the mass check's repair as a
    warning line on stderr, once, instead of hiding it (they used to silence import warnings)."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"/><link name="tip"><collision><geometry><sphere radius="0.05"/>'
        '</geometry></collision></link><joint name="wrist" type="revolute"><parent link="base"/>'
        '<child link="tip"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>'
        "</robot>"
    )
    assert main(["info", str(urdf)]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "'tip'" in err and err.count("warning:") == len(set(err.splitlines()))
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


_TET = (
    b"solid t\n"
    + b"".join(
        b"facet normal 0 0 0\nouter loop\n" + b"".join(b"vertex %g %g %g\n" % v for v in tri) + b"endloop\nendfacet\n"
        for tri in [
            ((0, 0, 0), (0.1, 0, 0), (0, 0.1, 0)),
            ((0, 0, 0), (0, 0.1, 0), (0, 0, 0.1)),
            ((0, 0, 0), (0, 0, 0.1), (0.1, 0, 0)),
            ((0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1)),
        ]
    )
    + b"endsolid t\n"
)


def _arm_urdf(tmp_path, mesh="", inertia="0.01"):
    link = (
        f'<link name="tip"><inertial><mass value="1"/><inertia ixx="{inertia}" iyy="0.01" izz="0.01" ixy="0" '
        'ixz="0" iyz="0"/></inertial>'
        + (f'<collision><geometry><mesh filename="{mesh}"/></geometry></collision>' if mesh else "")
        + "</link>"
    )
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"/>' + link + '<joint name="wrist" type="revolute">'
        '<parent link="base"/><child link="tip"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>'
    )
    return str(urdf)


def test_sim_reports_setup_apart_from_the_steady_state_and_saves_root_and_link_poses(tmp_path, capsys):
    """The first step's compile/setup time is printed apart from the steady-state cost per step and env-step (the
    CLI used to report compile time as step time); run.npz holds root poses (T, E, 7) and link poses
    (T, E, L, 7) of the floating ant, and the model path, so that a replay can be rebuilt."""
    out = tmp_path / "ant.npz"
    assert (
        main(["sim", "ant", "--seconds", "0.5", "--envs", "2", "--out", str(out), "--plot", str(tmp_path / "ant.png")])
        == 0
    )
    text = capsys.readouterr().out
    assert "setup and first step" in text and "steady state" in text and "us per env-step" in text
    data = np.load(out)
    assert data["root_pose"].shape == (60, 2, 7) and data["link_poses"].shape[:2] == (60, 2)
    assert data["link_poses"].shape[2] == len(data["link_names"]) and str(data["model"]).endswith("ant.xml")
    assert abs(data["root_pose"][-1, 0, 2] - data["root_pose"][0, 0, 2]) > 1e-3  # the ant moved
    np.testing.assert_allclose(data["link_poses"][:, :, 0], data["root_pose"], atol=1e-6)  # link 0 is the root


def test_warp_banner_is_silent_unless_verbose():
    """`artic info` prints no Warp banner, module lines or CUDA-driver notice; with --verbose Warp's banner
    shows."""
    quiet = subprocess.run([sys.executable, "-m", "artic", "info"], capture_output=True, text=True, timeout=300)
    loud = subprocess.run(
        [sys.executable, "-m", "artic", "--verbose", "info"], capture_output=True, text=True, timeout=300
    )
    assert quiet.returncode == 0 and loud.returncode == 0, quiet.stderr + loud.stderr
    assert "Warp" not in quiet.stdout + quiet.stderr and "Module" not in quiet.stdout + quiet.stderr
    assert "initialized" in loud.stdout + loud.stderr


def test_every_option_has_help_with_its_default():
    """Each option of `artic sim` and `artic info` has a help text, and the help shows the defaults."""
    import argparse

    from artic.assets import shipped_models
    from artic.cli.sim import add_parser

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_parser(sub, ", ".join(shipped_models()))
    sim = sub.choices["sim"]
    for action in sim._actions:
        assert action.help, action.dest
    text = " ".join(sim.format_help().split())
    assert "(default: 400.0)" in text and "(default: pgs)" in text and "(default: run.npz)" in text


def test_package_dir_and_repair_inertia_reach_the_loader(tmp_path, capsys):
    """--package-dir resolves package:// meshes (the error names the package, not '{pkg}'), and
    --repair-inertia loads a URDF whose inertia is not positive semi-definite, which is refused without it."""
    (tmp_path / "pkgs" / "mypkg").mkdir(parents=True)
    (tmp_path / "pkgs" / "mypkg" / "t.stl").write_bytes(_TET)
    sub = tmp_path / "sub"
    sub.mkdir()
    urdf = _arm_urdf(sub, mesh="package://mypkg/t.stl")
    assert main(["info", urdf]) == 2
    err = capsys.readouterr().err
    assert "'mypkg'" in err and "{pkg}" not in err
    assert (
        main(["sim", urdf, "--package-dir", str(tmp_path / "pkgs"), "--seconds", "0.05", "--out", "", "--plot", ""])
        == 0
    )
    capsys.readouterr()
    bad = _arm_urdf(tmp_path, inertia="-0.5")
    assert main(["sim", bad, "--seconds", "0.05", "--out", "", "--plot", ""]) == 2
    assert "repair_inertia" in capsys.readouterr().err
    assert main(["sim", bad, "--repair-inertia", "--seconds", "0.05", "--out", "", "--plot", ""]) == 0


def test_plot_groups_many_dofs_by_limb_with_distinct_colours():
    """The humanoid's 17 dofs are split by the limb they hang from, each group small enough for its colour map
    to give every line its own colour (they used to share 10 colours in one panel)."""
    from artic.assets import load_model, model_path
    from artic.cli.sim import _dof_groups

    art = load_model(model_path("humanoid"))[0]
    groups = _dof_groups(art)
    assert len(groups) >= 3
    assert sorted(d for _, dofs in groups for d in dofs) == list(range(art.dof_count))
    assert all(len(dofs) <= 20 for _, dofs in groups)
    titles = [title for title, _ in groups]  # in words, by the joints of the panel (not a link's compound name)
    assert "abdomen_z to left_knee (11 dofs)" in titles and "right_shoulder1 to right_elbow (3 dofs)" in titles


def test_sim_html_writes_a_self_contained_replay_and_view_rebuilds_it(tmp_path, capsys):
    """`artic sim ant --html` writes one HTML replay with three.js inlined (no network), and `artic view` rebuilds
    one from the saved run; both hold the ant's frames (the browser test of the page itself is
    tests/viewer/test_viewer.py)."""
    html, run = tmp_path / "ant.html", tmp_path / "ant.npz"
    assert main(["sim", "ant", "--seconds", "0.25", "--html", str(html), "--out", str(run), "--plot", ""]) == 0
    assert "replay written" in capsys.readouterr().out
    page = html.read_text()
    assert "articReplay" in page and len(page) > 500_000
    assert re.search(r'(src|href)\s*=\s*["\']https?:', page) is None  # nothing loaded from the network
    assert main(["view", str(run), "--html", str(tmp_path / "again.html")]) == 0
    assert (tmp_path / "again.html").stat().st_size > 500_000
    assert main(["sim", "ant", "--html", str(tmp_path / "missing" / "x.html"), "--out", "", "--plot", ""]) == 2


def test_sim_default_targets_lie_strictly_inside_every_range(tmp_path):
    """The default targets of the ant (whose ankles start at 0, outside their ranges) and the arm lie strictly inside
    every dof's range, apart from its limits by at least a tenth of the range's smaller side."""
    from artic.assets import load_model, model_path
    from artic.cli.sim import _ranges, _targets

    for name in ("ant", "arm6"):
        art = load_model(model_path(name))[0]
        targets = _targets(art, None)
        _, low, high = _ranges(art)
        limited = np.isfinite(low)
        assert np.all(targets[limited] > low[limited]) and np.all(targets[limited] < high[limited]), name


def test_sim_leaves_planar_roots_undriven_and_drops_onto_the_floor(tmp_path, capsys):
    """Gymnasium's half_cheetah: its root slides and hinge have no actuator, so the run does not drive them (it
    says so): the cheetah falls onto its floor instead of hovering on springs."""
    import gymnasium

    path = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "half_cheetah.xml"
    out = tmp_path / "run.npz"
    assert main(["sim", str(path), "--seconds", "1", "--out", str(out), "--plot", ""]) == 0
    text = capsys.readouterr().out
    assert "not driven (no actuator in the file): rootx, rootz, rooty" in text
    assert "simulating half_cheetah:" in text  # named after its file, not its root body ('torso')
    data = np.load(out)
    rootz = list(data["dof_names"]).index("rootz")
    assert data["q"][-1, 0, rootz] < -0.2  # it fell (held at 0 by a drive before)


def test_sim_puts_a_floor_under_a_floating_urdf(tmp_path, capsys):
    """A floating URDF robot gets a floor just under its shapes (said in the output) and stays on it; --no-floor
    drops it and the robot falls."""
    out = tmp_path / "run.npz"
    assert main(["sim", "--floating", "--seconds", "1", "--out", str(out), "--plot", ""]) == 0
    text = capsys.readouterr().out
    assert "floor: a plane at z = " in text
    floor = float(text.split("floor: a plane at z = ")[1].split()[0])
    z = np.load(out)["link_poses"][:, 0, :, 2]
    assert z.min() > floor - 0.05
    assert main(["sim", "--floating", "--no-floor", "--seconds", "1", "--out", str(out), "--plot", ""]) == 0
    assert "floor:" not in capsys.readouterr().out
    assert np.load(out)["link_poses"][-1, 0, :, 2].max() < floor - 1.0


def test_sim_clamps_targets_outside_a_range_and_names_bad_arguments(tmp_path, capsys):
    """--target beyond a dof's range is clamped with a warning naming it; --verbose works after the subcommand;
    a bad --dt names --dt; no progress bar goes to a stream that is not a terminal."""
    from artic.assets import load_model, model_path
    from artic.cli.sim import _ranges

    art = load_model(model_path("arm6"))[0]
    name = art.dof_names[1]
    _, _, high = _ranges(art)
    out = tmp_path / "run.npz"
    assert main(["sim", "--target", f"{name}=10", "--seconds", "0.05", "--out", str(out), "--plot", ""]) == 0
    err = capsys.readouterr().err
    assert f"--target {name}=10 is outside its range" in err and "clamped to" in err
    assert np.load(out)["targets"][1] == pytest.approx(high[1])
    assert main(["sim", "--verbose", "--seconds", "0.05", "--out", "", "--plot", ""]) == 0
    assert main(["sim", "--dt", "-0.01", "--out", "", "--plot", ""]) == 2
    err = capsys.readouterr().err
    assert "--dt must be a positive number of seconds, got -0.01" in err and "\r" not in err


def test_sim_record_envs_and_view_says_which_envs_it_has(tmp_path, capsys):
    """--record-envs sets how many envs' link poses run.npz keeps (0: all); `artic view --env` beyond them says so
    and how to record more."""
    out = tmp_path / "run.npz"
    assert main(["sim", "--envs", "3", "--record-envs", "2", "--seconds", "0.05", "--out", str(out), "--plot", ""]) == 0
    assert np.load(out)["link_poses"].shape[1] == 2
    assert main(["view", str(out), "--env", "2", "--html", str(tmp_path / "r.html")]) == 2
    assert "keeps the link poses of envs 0 to 1, not env 2" in capsys.readouterr().err
    assert main(["sim", "--envs", "3", "--record-envs", "0", "--seconds", "0.05", "--out", str(out), "--plot", ""]) == 0
    assert np.load(out)["link_poses"].shape[1] == 3
    assert main(["view", str(out), "--env", "2", "--html", str(tmp_path / "r.html")]) == 0
