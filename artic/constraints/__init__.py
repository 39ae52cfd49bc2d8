"""Constraint rows: one module per constraint kind, each with the @wp.func update rule the solvers call by kind."""

from __future__ import annotations
