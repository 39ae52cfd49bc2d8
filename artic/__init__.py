"""artic: articulated rigid bodies the PhysX way, batched over environments on NVIDIA Warp."""

from .description.actors import RigidDynamic, RigidStatic, create_ground_plane
from .description.articulation import Articulation, Drive, FrictionParams, Joint, Limit, Link
from .description.mjcf import MjcfModel, load_mjcf
from .description.shapes import Box, Capsule, ConvexMesh, Cylinder, Material, Mesh, Plane, Shape, Sphere, TriangleMesh
from .description.types import ArticulationFlag, Axis, DriveType, JointType, Motion
from .description.urdf import load_urdf
from .cache import ArticulationCache, CacheFlag
from .errors import ArticError, StateError, TopologyError, UrdfError, ValidationError
from .math.np_spatial import Transform
from .parallel import get_cpu_threads, set_cpu_threads
from .scene import ContactReport, Scene
from .step import SolverType

__version__ = "0.1.0"

__all__ = [
    "ArticError", "Articulation", "ArticulationCache", "ArticulationFlag", "Axis", "Box", "CacheFlag", "Capsule",
    "ContactReport", "ConvexMesh", "Cylinder", "Drive", "DriveType", "FrictionParams", "Joint", "JointType", "Limit",
    "Link", "Material", "Mesh", "MjcfModel", "Motion", "Plane", "RigidDynamic", "RigidStatic", "Scene", "Shape",
    "SolverType",
    "Sphere", "StateError", "TopologyError", "Transform", "TriangleMesh", "UrdfError", "ValidationError",
    "create_ground_plane", "get_cpu_threads", "load_mjcf", "load_urdf", "set_cpu_threads",
]
