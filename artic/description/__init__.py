"""Host-side descriptions, the types users build: articulations, links and their joints (articulation.py), mimic
joints and tendons (couplings.py), rigid actors (actors.py), shapes and materials (shapes.py), joints between any
bodies (body_joints.py), deadzone controllers, explicit contact pairs, and the validation they share
(validate.py, mass_check.py). Plain Python, checked on entry; importers that make them live in artic/io."""

from __future__ import annotations
