"""`Scene`: the envs, gravity and device, and the articulations replicated over the envs.

Adding an articulation validates it and builds its device blocks (Model, State, Control, Data) for all envs; from
then on its topology is frozen (PhysX: remove, change, re-add). Parameter changes made through the description
(masses, frames, armature) are re-uploaded; state set through the description (joint positions, root pose) is
written to every env. Per-env state goes through the articulation cache.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from .build.articulation import Articulation
from .errors import StateError, TopologyError, ValidationError
from .step import SolverType
from .view import ArticulationView


class Scene:
    def __init__(self, num_envs: int = 1, gravity=(0.0, 0.0, -9.81), device=None, solver_type=SolverType.PGS):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValidationError(f"scene: num_envs must be a positive integer, got {num_envs!r}")
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValidationError(f"scene: gravity must be 3 finite numbers, got {gravity!r}")
        wp.init()
        try:
            self.device = wp.get_device(device)
        except (RuntimeError, ValueError) as e:
            raise ValidationError(f"scene: unknown device {device!r} ({e}); use None, 'cpu' or 'cuda:0'") from None
        try:
            self.solver_type = SolverType(solver_type)
        except ValueError:
            raise ValidationError(
                f"scene: unknown solver_type {solver_type!r}; use artic.SolverType.PGS or TGS") from None
        self.num_envs = int(num_envs)
        self.gravity = tuple(g)
        self.time = 0.0
        self._views: dict[int, ArticulationView] = {}
        self.articulations: list[Articulation] = []

    def __repr__(self):
        return (f"Scene(num_envs={self.num_envs}, articulations={len(self.articulations)}, "
                f"solver={self.solver_type.name}, device='{self.device}')")

    def add_articulation(self, art: Articulation):
        """Validate `art`, freeze its topology and build its arrays for every env."""
        if not isinstance(art, Articulation):
            raise ValidationError(f"scene: add_articulation takes an artic.Articulation, got {type(art).__name__}")
        if art._scene is not None:
            raise TopologyError(f"articulation '{art.name}' is already in a scene; remove it first")
        art.validate()
        view = ArticulationView(art, self.num_envs, self.gravity, self.device)
        art._scene = self
        self._views[id(art)] = view
        self.articulations.append(art)
        return art

    def step(self, dt: float):
        """Advance every articulation of every env by dt seconds (one fused kernel launch per articulation)."""
        try:
            dt = float(dt)
        except (TypeError, ValueError):
            raise ValidationError(f"scene: dt must be a number, got {dt!r}") from None
        if not np.isfinite(dt) or dt <= 0.0:
            raise ValidationError(f"scene: dt must be a positive finite number of seconds, got {dt}")
        for art in self.articulations:
            self._views[id(art)].step(dt, self.solver_type)
        self.time += dt

    def remove_articulation(self, art: Articulation):
        if art._scene is not self:
            raise StateError(f"articulation '{art.name}' is not in this scene")
        del self._views[id(art)]
        self.articulations.remove(art)
        art._scene = None

    def view(self, art: Articulation) -> ArticulationView:
        """The device blocks (model, state, control, data) of an articulation in this scene."""
        try:
            return self._views[id(art)]
        except KeyError:
            raise StateError(f"articulation '{art.name}' is not in this scene") from None

    # -- forwarded from Articulation ------------------------------------------------------------------------------
    def _on_description_changed(self, art, what):
        if what == "topology":
            raise TopologyError(f"articulation '{art.name}' is in a scene; remove it before changing its topology")
        self.view(art).on_description_changed(what)

    def _create_cache(self, art):
        return self.view(art).create_cache()

    def _copy_internal_state_to_cache(self, art, cache, flags):
        self.view(art).copy_internal_state_to_cache(cache, flags)

    def _apply_cache(self, art, cache, flags):
        self.view(art).apply_cache(cache, flags)

    def _common_init(self, art):
        self.view(art).common_init()

    def _inverse_dynamics(self, art):
        return self.view(art)
