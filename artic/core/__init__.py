"""The device arrays every algorithm reads, with a leading env dimension: `Model` (model.py: the trees' topology
and inertia, and the dof and link parameters), `State`, `Control` and `Data` (state.py, control.py, data.py), the
Warp structs that bundle them for kernels (structs.py), and the launch of a per-env kernel over all envs on every
CPU core (parallel.py). Built from descriptions by sim/builders/."""

from __future__ import annotations
