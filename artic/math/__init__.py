"""Spatial algebra: `spatial` holds the Warp functions used by kernels, `np_spatial` a float64 NumPy mirror,
`dense` the per-env dense factorizations, `hull` convex hulls and their mass properties on the host."""

from __future__ import annotations
