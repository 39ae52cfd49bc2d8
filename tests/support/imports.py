"""Test helper: make an optional package look not installed for the length of a test."""

from __future__ import annotations

import builtins


def hide_package(monkeypatch, package: str) -> None:
    """`import package` (and its submodules) raises ImportError until the test ends (monkeypatch undoes it)."""
    real_import = builtins.__import__

    def guarded(name, *args, **kwargs):
        if name == package or name.startswith(package + "."):
            raise ImportError(f"no {package} (hidden by the test)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)
