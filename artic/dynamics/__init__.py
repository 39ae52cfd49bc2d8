"""Tree dynamics: kinematics, CRBA, RNEA, ABA, Jacobian, COM and centroidal momentum, one module each."""

from __future__ import annotations
