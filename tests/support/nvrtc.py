"""Compile a module's Warp kernels to CUDA PTX through NVRTC without a GPU, so that GPU-only compile errors show up on
the CPU-only CI (../shared/reference/warp-notes.md, "CUDA without a GPU")."""

from __future__ import annotations

from pathlib import Path

import pytest
import warp as wp


def ptx_files(module: str, out: Path) -> list[Path]:
    """The PTX files of `module`'s kernels compiled for sm_90 into `out`; skips the test where NVRTC is missing."""
    try:
        wp.compile_aot_module(module, device=None, arch=90, module_dir=str(out), use_ptx=True)
    except Exception as e:
        if "nvrtc" in str(e).lower() and "not" in str(e).lower() and "available" in str(e).lower():
            pytest.skip(f"NVRTC is not available here: {e}")
        raise
    return [p for p in out.rglob("*") if p.suffix == ".ptx"]
