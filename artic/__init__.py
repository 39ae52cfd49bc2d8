"""artic: articulated rigid bodies the PhysX way, batched over environments on NVIDIA Warp."""

from .description.actors import RigidDynamic, RigidStatic, create_ground_plane
from .description.articulation import Articulation, Drive, FrictionParams, Joint, Limit, Link
from .enums import ConstraintFlag
from .description.joints import CylindricalJoint, D6Joint, DistanceJoint, FixedJoint, GimbalJoint, HingeJoint, JointBase, PlanarJoint, SliderJoint, SphericalJoint, UniversalJoint, create_physx_joint, erp_cfm_from_spring, spring_from_erp_cfm
from .description.deadzone import Deadzone
from .description.mjcf import MjcfModel, load_mjcf
from .description.mjcf_actuators import MjcfControl
from .description.shapes import Box, Capsule, ConvexMesh, Cylinder, Material, Mesh, Plane, Shape, Sphere, TriangleMesh
from .enums import ArticulationFlag, Axis, DriveType, JointType, Motion
from .description.urdf import load_urdf
from .cache import ArticulationCache
from .enums import CacheFlag
from .errors import ArticError, MjcfError, StateError, TopologyError, UrdfError, ValidationError
from .math.np_spatial import Transform
from .parallel import get_cpu_threads, set_cpu_threads
from .joint_view import JointForces, JointFrames
from .scene import ContactReport, Scene
from .enums import NanPolicy
from .status import NonFiniteStateError
from .enums import SolverType

__version__ = "0.1.0"

__all__ = [
    "ArticError", "Articulation", "ArticulationCache", "ArticulationFlag", "Axis", "Box", "CacheFlag", "Capsule",
    "ConstraintFlag", "ContactReport", "ConvexMesh", "Cylinder", "CylindricalJoint", "D6Joint", "Deadzone",
    "DistanceJoint",
    "Drive", "DriveType", "FixedJoint", "FrictionParams", "GimbalJoint", "HingeJoint", "Joint", "JointBase",
    "JointForces", "JointFrames", "JointType", "Limit", "Link", "Material", "Mesh", "MjcfControl", "MjcfError",
    "MjcfModel", "Motion", "NanPolicy", "NonFiniteStateError",
    "PlanarJoint", "Plane", "RigidDynamic", "RigidStatic", "Scene", "Shape", "SliderJoint", "SolverType", "Sphere",
    "SphericalJoint", "StateError", "TopologyError", "Transform", "TriangleMesh", "UniversalJoint", "UrdfError",
    "ValidationError", "create_ground_plane", "create_physx_joint", "erp_cfm_from_spring", "get_cpu_threads",
    "load_mjcf", "load_urdf", "set_cpu_threads", "spring_from_erp_cfm",
]
