"""Errors raised by artic.

Every error that bad input can cause is an `ArticError`; its message names the offending object and says how to
fix it, e.g. ``joint 'elbow': limit low 1.2 >= high 0.3; give low < high``.
"""


class ArticError(Exception):
    """Base class of every error artic raises on purpose."""


class ValidationError(ArticError, ValueError):
    """A value given to the description API is out of range, of the wrong shape, or not finite."""


class TopologyError(ArticError):
    """The articulation's structure is invalid or cannot change now (e.g. it is already in a scene)."""


class UrdfError(ArticError):
    """A URDF file is malformed or uses an element artic does not support."""


class MjcfError(UrdfError):
    """An MJCF file is malformed or uses an element artic does not support (a UrdfError, so code catching
    robot-file errors as UrdfError catches both)."""


class StateError(ArticError):
    """An operation was called in a state where it is not allowed (e.g. before the articulation is in a scene)."""
