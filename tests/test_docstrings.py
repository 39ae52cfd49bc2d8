"""Every public class, function, method and property of artic's public API has a docstring (issue 29: docstrings on
every public class and method), so that help() and an editor's hover say what each name does. The API is what the
modules below export (`__all__`); a class's methods and properties count where artic defines them, and a docstring
inherited from an artic base class counts (inspect.getdoc). Exceptions and enums are checked, their members not."""

from __future__ import annotations

import enum
import importlib
import inspect

import pytest

MODULES = ["artic", "artic.viewer", "artic.mocap", "artic.distributed", "artic.interop.gym_env"]
OPTIONAL = {"artic.interop.gym_env": "gymnasium"}  # a module that needs an optional package


def _documented(obj) -> bool:
    return bool((inspect.getdoc(obj) or "").strip())


def _ours(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("artic")


def _undocumented_members(cls: type, qualname: str) -> list[str]:
    """The public methods and properties of `cls` that artic defines and that have no docstring (own or inherited)."""
    missing = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if not (inspect.isfunction(raw) or isinstance(raw, property)):
            continue
        owner = next(c for c in cls.__mro__ if name in vars(c))
        if _ours(owner) and not _documented(raw if isinstance(raw, property) else getattr(cls, name)):
            missing.append(f"{qualname}.{name}")
    return missing


def undocumented(module_name: str) -> list[str]:
    """The public names of a module (its `__all__`, else its names without a leading underscore) that lack a
    docstring, with the undocumented methods and properties of its classes."""
    module = importlib.import_module(module_name)
    missing = []
    for name in getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or not _ours(obj):
            continue
        qualname = f"{module_name}.{name}"
        if not _documented(obj):
            missing.append(qualname)
        if inspect.isclass(obj) and not issubclass(obj, (BaseException, enum.Enum)):
            missing += _undocumented_members(obj, qualname)
    return sorted(set(missing))


@pytest.mark.parametrize("module_name", MODULES)
def test_public_api_has_docstrings(module_name):
    if module_name in OPTIONAL:
        pytest.importorskip(OPTIONAL[module_name])
    missing = undocumented(module_name)
    assert not missing, f"{len(missing)} public names without a docstring:\n" + "\n".join(missing)


def test_the_check_finds_a_missing_docstring():
    """The check can fail: a class with an undocumented method and property is reported, a documented one is not."""

    class Probe:
        """Documented."""

        def method(self):
            pass

        @property
        def value(self):
            return 0

        def documented(self):
            """Documented."""

    Probe.__module__ = "artic.probe"
    assert _undocumented_members(Probe, "Probe") == ["Probe.method", "Probe.value"]
