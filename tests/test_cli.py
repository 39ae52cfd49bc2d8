"""The `artic info` main job on the shipped model and on a URDF path; bad models give a clear error."""

import subprocess
import sys

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
