"""`Fluid`: the medium an articulation moves through, for MuJoCo's inertia-box fluid model (PhysX has none).

MuJoCo's `<option density viscosity wind>` (its "inertia model", the one it uses unless a geom asks for the ellipsoid
model): each link is its equivalent inertia box, the box of the link's mass and principal moments, sides
b_i = sqrt(6 (I_j + I_k - I_i) / m) along the principal axes. With v and w the velocity of the link's centre of mass
relative to the wind and its angular velocity, both in the principal axes:

* viscous (Stokes) resistance of the box's mean-side sphere, d = (b_0 + b_1 + b_2) / 3:
  f = -3 pi viscosity d v, t = -pi viscosity d^3 w;
* quadratic drag of the box's faces: f_i = -density / 2 b_j b_k |v_i| v_i, and
  t_i = -density b_i (b_j^4 + b_k^4) |w_i| w_i / 64.

Applied at the centre of mass as an explicit force every step (as MuJoCo's Euler integrator applies its passive
forces), through dynamics/forward.py; the sides are computed where the model is built (sim/builders/model.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError
from .validate import MAX_MAGNITUDE


@dataclass(frozen=True)
class Fluid:
    """density [kg/m^3], viscosity [Pa s] (both >= 0) and wind [m/s] (world frame) of the medium."""

    density: float = 0.0
    viscosity: float = 0.0
    wind: tuple = (0.0, 0.0, 0.0)

    def __post_init__(self):
        for name in ("density", "viscosity"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise ValidationError(f"Fluid: {name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0.0 or value > MAX_MAGNITUDE:
                raise ValidationError(f"Fluid: {name} must be finite and >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        try:
            wind = np.asarray(self.wind, dtype=float)
        except (TypeError, ValueError):
            wind = None
        if wind is None or wind.shape != (3,) or not np.all(np.isfinite(wind)) or np.abs(wind).max() > MAX_MAGNITUDE:
            raise ValidationError(f"Fluid: wind must be 3 finite numbers [m/s], got {self.wind!r}")
        object.__setattr__(self, "wind", tuple(float(x) for x in wind))

    @property
    def active(self) -> bool:
        """Whether the medium acts at all: density > 0 or viscosity > 0 (wind alone moves nothing)."""
        return self.density > 0.0 or self.viscosity > 0.0


def inertia_box(mass: float, principal_inertia: ArrayLike) -> np.ndarray:
    """The sides [m] of the box with this mass and these principal moments (zeros for a massless link); a moment
    triple that violates the triangle inequality gives the side it would make zero a tiny length, as MuJoCo does."""
    if mass <= 0.0:
        return np.zeros(3)
    i = np.asarray(principal_inertia, dtype=float)
    sums = np.array([i[1] + i[2] - i[0], i[0] + i[2] - i[1], i[0] + i[1] - i[2]])
    return np.sqrt(6.0 * np.maximum(sums, 1e-15) / mass)
