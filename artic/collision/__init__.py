"""Collision detection: shape tables on the device, a broad phase over precomputed candidate pairs and narrow
phases that write contact manifolds of at most four points per pair (docs/design.md, "Contacts")."""
