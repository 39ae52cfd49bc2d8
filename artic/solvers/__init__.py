"""Solvers over the constraint rows: PhysX's PGS and TGS schedules and the Gauss-Seidel sweep they share, and the
direct solver (direct.py) with its bounded mixed LCP (mlcp.py)."""

from __future__ import annotations
