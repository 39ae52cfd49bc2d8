"""Filling the Warp structs that bundle arrays for kernels (one argument instead of many)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import warp as wp

if TYPE_CHECKING:
    from warp._src.codegen import Struct, StructInstance  # what @wp.struct makes, and its instances


def bundle(struct_type: Struct, source: object, **renamed: str) -> StructInstance:
    """A `struct_type` whose fields are `source`'s attributes of the same names (or of renamed[field])."""
    s = struct_type()
    for name in struct_type.vars:
        setattr(s, name, getattr(source, renamed.get(name, name)))
    return s


def upload(struct_type: Struct, host: dict, device: wp.Device | str | None) -> StructInstance:
    """A `struct_type` from host values: array fields become device arrays of the field's dtype, scalars stay."""
    s = struct_type()
    for name, var in struct_type.vars.items():
        value = host[name]
        if wp.types.is_array(var.type):
            dtype = var.type.dtype
            scalar = getattr(dtype, "_wp_scalar_type_", dtype)
            arr = np.asarray(value, dtype=np.int32 if scalar == wp.int32 else np.float32)
            if wp.types.type_size(dtype) > 1:  # vectors: one row of components per element
                arr = arr.reshape(-1, wp.types.type_size(dtype))
            value = wp.array(arr, dtype=dtype, device=device)
        setattr(s, name, value)
    return s
