"""The runtime: `Scene` (scene.py, the API), the blocks of articulations stepped together (block.py, which owns
every device array, and grouping.py), the step kernel (step_kernel.py), the description-to-array builders
(builders/), the articulation's cache and inverse dynamics (cache.py, articulation_view.py), body joints' per-env
arrays (body_joint_view.py) and posing (assemble.py), reports (reports.py), non-finite states (status.py) and the
memory check (memory.py)."""

from __future__ import annotations
