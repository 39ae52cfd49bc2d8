"""3D replays that open in any browser with no network: `write_replay` and `Recorder`; USD stages for usdview, Isaac
Sim or Blender: `write_usd` (see docs/viewer.md)."""

from __future__ import annotations

from .replay import Recorder, describe, write_replay
from .usd import write_usd

__all__ = ["Recorder", "describe", "write_replay", "write_usd"]
