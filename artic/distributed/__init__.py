"""Past one machine (docs/distributed.md): `map_scenes` runs a function over many configurations as Ray tasks, each
building and stepping its own scene, results in input order; `LocalCluster` starts a real Ray cluster on this
machine. Ray is an optional extra (pip install 'artic[ray]'); without an address nothing here needs it."""

from .cluster import LocalCluster
from .map_scenes import MapError, TaskFailure, map_scenes

__all__ = ["LocalCluster", "MapError", "TaskFailure", "map_scenes"]
