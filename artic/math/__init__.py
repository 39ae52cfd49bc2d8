"""Spatial algebra: `spatial` holds the Warp functions used by kernels, `np_spatial` a float64 NumPy mirror."""
