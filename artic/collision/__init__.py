"""Collision detection: shape tables on the device (geometry.py), narrow phases over precomputed candidate pairs
that write at most four contact points per pair (narrow.py, box_box.py, hull_hull.py, manifold.py), and the points
they produce (contacts.py). docs/design.md, "Contacts"."""

from __future__ import annotations
