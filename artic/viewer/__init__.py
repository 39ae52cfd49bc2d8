"""3D replays that open in any browser with no network: `write_replay` and `Recorder` (see docs/viewer.md)."""

from __future__ import annotations

from .replay import Recorder, describe, write_replay

__all__ = ["Recorder", "describe", "write_replay"]
