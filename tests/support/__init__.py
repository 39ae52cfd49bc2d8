"""Builders and oracles shared by tests and benchmarks: real and random models (models.py), the PhysX guide's
scenes (scenes.py), bodies on a ground (bodies.py), body-joint mechanisms (mechanisms.py), the direct solver's
scenes (direct_scenes.py), Pinocchio and PhysX oracles, and loader fuzzing (fuzz.py)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository root
EXAMPLES = REPO / "examples"
