"""MJCF (MuJoCo's XML) files in: `load_mjcf` (loader.py) turns a file into articulations, static actors and body
joints; `MjcfControl` (control.py) drives its actuators like MuJoCo's data.ctrl. docs/mjcf.md maps every element."""

from __future__ import annotations

from .control import MjcfControl
from .loader import MjcfModel, load_mjcf

__all__ = ["MjcfControl", "MjcfModel", "load_mjcf"]
