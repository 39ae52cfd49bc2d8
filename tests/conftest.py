"""Shared test setup: Warp's per-module compile lines stay quiet. Scene builders shared by several tests live in
the tests.support package."""

import warp as wp

wp.config.quiet = True
