"""Model files shipped inside packages that cannot join the test extra: robosuite (its dependencies pin numpy 1.x),
myo_sim (myosuite's models; myosuite pins an older gymnasium), metaworld (it pins MuJoCo 3.3), and mujoco_warp,
gym_aloha, gym_xarm and mjlab, whose model files alone the tests need (ALOHA, xArm, Unitree G1 and Go1, YAM). Their
wheels are fetched from the package index without dependencies, unpacked once into ~/.cache/artic-test-models, and
only their asset files are read; nothing is installed or imported. A package that is installed anyway is used in
place. Without the index the tests skip."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

CACHE = Path.home() / ".cache" / "artic-test-models"
# the versions the tests' file lists and figures are for; metaworld pins an older MuJoCo, mujoco_warp's test models
# include menagerie's ALOHA scene
PINNED = {
    "robosuite": "1.5.2",
    "myo_sim": "0.2.3",
    "metaworld": "3.1.1",
    "mujoco_warp": "4.0.0",
    "gym_aloha": "0.1.5",
    "gym_xarm": "0.1.1",
    "mjlab": "1.6.0",
}
_PIP_NAME = {"myo_sim": "myo-sim", "mujoco_warp": "mujoco-warp", "gym_aloha": "gym-aloha", "gym_xarm": "gym-xarm"}


def package_root(name: str) -> Path:
    """The folder of package `name` (PINNED): installed, or unpacked from its wheel; skips the test if neither."""
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.submodule_search_locations:
        return Path(spec.submodule_search_locations[0])
    version = PINNED[name]
    target = CACHE / f"{name}-{version}"
    root = target / name
    if root.is_dir():
        return root
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    pip_name = _PIP_NAME.get(name, name)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), f"{pip_name}=={version}"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    except (subprocess.SubprocessError, OSError) as e:
        pytest.skip(f"{pip_name}=={version} could not be fetched from the package index: {e}")
    found = sorted(wheels.glob(f"{name}-{version}-*.whl"))
    if not found:
        pytest.skip(f"pip fetched no wheel for {pip_name}=={version}")
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(found[0]) as z:
        z.extractall(partial)
    partial.rename(target)  # whole or not at all: an interrupted unpacking is not taken for the package
    return root
