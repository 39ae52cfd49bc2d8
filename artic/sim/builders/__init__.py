"""Every description-to-array builder: the model and its parameters (model.py), the row tables (rows.py,
body_joints.py), the collision tables (geometry.py) and the per-env arrays with their byte counts (arrays.py)."""

from __future__ import annotations
