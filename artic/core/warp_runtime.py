"""Starting Warp quietly: artic's own output is what a user asked for, Warp's start-up is not.

Warp prints a banner (version, devices, kernel cache), a line per kernel module it loads, and, on a machine without
an NVIDIA driver, a notice from its C++ code straight to the process's stderr, which no Warp setting silences.
artic starts Warp through `init_warp`, which keeps all of that out of the output unless the user asked for it
(`artic.set_verbose(True)`, the environment variable ARTIC_VERBOSE=1, or the CLI's --verbose). Warp's warnings and
errors always show. A program that started Warp itself, or set Warp's log level itself, keeps its own settings.
"""

from __future__ import annotations

import os
import sys

import warp as wp

_verbose: bool | None = None  # None: ask the environment (ARTIC_VERBOSE)
_WARP_DEFAULT_LOG_LEVEL = wp.config.log_level  # what Warp starts with; another value was chosen by the program


def set_verbose(verbose: bool = True) -> None:
    """Show Warp's start-up banner, its kernel-module load lines and its driver notices (off by default; the
    environment variable ARTIC_VERBOSE=1 turns them on too). Takes effect for Warp's start-up only if Warp has
    not started yet in this process."""
    global _verbose
    _verbose = bool(verbose)
    if _warp_started():
        wp.config.log_level = wp.LOG_INFO if _verbose else max(wp.config.log_level, wp.LOG_WARNING)


def is_verbose() -> bool:
    """Whether Warp's own output is shown (`set_verbose`, else ARTIC_VERBOSE in the environment)."""
    if _verbose is not None:
        return _verbose
    return os.environ.get("ARTIC_VERBOSE", "").strip().lower() not in ("", "0", "false", "no")


def _warp_started() -> bool:
    try:
        from warp._src import context  # Warp keeps its runtime there, None until wp.init() (Warp >= 1.10)
    except ImportError:
        import warp.context as context  # older Warp
    return getattr(context, "runtime", None) is not None


def init_warp() -> None:
    """Start Warp (idempotent), quietly unless `is_verbose()`."""
    if _warp_started():
        return
    if is_verbose():
        wp.init()
        return
    if wp.config.log_level == _WARP_DEFAULT_LOG_LEVEL:
        wp.config.log_level = wp.LOG_WARNING
    # the driver notice comes from C++ on file descriptor 2: point it at /dev/null while Warp starts
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr descriptor (an embedded interpreter): nothing to hide
        wp.init()
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        wp.init()
    finally:
        os.dup2(saved, 2)
        os.close(null)
        os.close(saved)
