"""artic: articulated rigid bodies the PhysX way, batched over environments on NVIDIA Warp.

The public API is what this module exports; docs/design.md maps the packages behind it."""

import importlib
import importlib.abc
import importlib.util
import sys

from .core.parallel import get_cpu_threads, set_cpu_threads
from .core.warp_runtime import set_verbose
from .description.actors import RigidDynamic, RigidStatic, create_ground_plane
from .description.articulation import Articulation, Link
from .description.articulation_joint import Drive, FrictionParams, Joint, Limit, PassiveParams
from .description.body_joints import (
    CylindricalJoint,
    D6Joint,
    DistanceJoint,
    FixedJoint,
    GimbalJoint,
    HingeJoint,
    JointBase,
    PlanarJoint,
    SliderJoint,
    SphericalJoint,
    UniversalJoint,
    create_physx_joint,
)
from .description.deadzone import Deadzone
from .description.fluid import Fluid
from .description.shapes import Box, Capsule, ConvexMesh, Cylinder, Material, Mesh, Plane, Shape, Sphere, TriangleMesh
from .description.softness import Softness, erp_cfm_from_spring, spring_from_erp_cfm
from .enums import (
    ArticulationFlag,
    Axis,
    CacheFlag,
    ConstraintFlag,
    DriveType,
    JointType,
    Motion,
    NanPolicy,
    SolverType,
)
from .errors import ArticError, MjcfError, StateError, TopologyError, UrdfError, ValidationError
from .io.mjcf.control import MjcfControl
from .io.mjcf.loader import MjcfModel, load_mjcf
from .io.urdf import load_urdf
from .math.np_spatial import Transform
from .sim.cache import ArticulationCache
from .sim.reports import ContactReport, JointForces, JointFrames, JointStatus, PenetrationReport
from .sim.scene import Scene
from .sim.status import ConstraintViolationError, NonFiniteStateError

__version__ = "0.1.0"

# Module paths documented before the packages of docs/design.md's map, kept as aliases of their new homes and
# imported on first use (gym_env and torch_views need optional packages).
_MOVED_MODULES = {
    "artic.status": "artic.sim.status",
    "artic.gym_env": "artic.interop.gym_env",
    "artic.torch_views": "artic.interop.torch_views",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import artic.gym_env` gives the module object of `artic.interop.gym_env` (one module, two names)."""

    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name in _MOVED_MODULES else None

    def create_module(self, spec):
        return importlib.import_module(_MOVED_MODULES[spec.name])

    def exec_module(self, module):
        pass  # already executed under its own name


if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
    sys.meta_path.append(_MovedModuleFinder())


def __getattr__(name: str):
    if f"artic.{name}" in _MOVED_MODULES:  # artic.status as an attribute, as before
        return importlib.import_module(f"artic.{name}")
    raise AttributeError(f"module 'artic' has no attribute '{name}'")


__all__ = [
    "ArticError",
    "Articulation",
    "ArticulationCache",
    "ArticulationFlag",
    "Axis",
    "Box",
    "CacheFlag",
    "Capsule",
    "ConstraintFlag",
    "ConstraintViolationError",
    "ContactReport",
    "ConvexMesh",
    "Cylinder",
    "CylindricalJoint",
    "D6Joint",
    "Deadzone",
    "DistanceJoint",
    "Drive",
    "DriveType",
    "FixedJoint",
    "Fluid",
    "FrictionParams",
    "GimbalJoint",
    "HingeJoint",
    "Joint",
    "JointBase",
    "JointForces",
    "JointFrames",
    "JointStatus",
    "JointType",
    "Limit",
    "Link",
    "Material",
    "Mesh",
    "MjcfControl",
    "MjcfError",
    "MjcfModel",
    "Motion",
    "NanPolicy",
    "NonFiniteStateError",
    "PassiveParams",
    "PenetrationReport",
    "PlanarJoint",
    "Plane",
    "RigidDynamic",
    "RigidStatic",
    "Scene",
    "Shape",
    "SliderJoint",
    "Softness",
    "SolverType",
    "Sphere",
    "SphericalJoint",
    "StateError",
    "TopologyError",
    "Transform",
    "TriangleMesh",
    "UniversalJoint",
    "UrdfError",
    "ValidationError",
    "create_ground_plane",
    "create_physx_joint",
    "erp_cfm_from_spring",
    "get_cpu_threads",
    "load_mjcf",
    "load_urdf",
    "set_cpu_threads",
    "set_verbose",
    "spring_from_erp_cfm",
]
