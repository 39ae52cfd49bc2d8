"""3D replays that open in any browser with no network: `write_replay` and `Recorder` (see docs/viewer.md)."""

from .replay import Recorder, describe, write_replay

__all__ = ["Recorder", "describe", "write_replay"]
