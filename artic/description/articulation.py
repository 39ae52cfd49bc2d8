"""Host-side articulation description: `Articulation` and its `Link`s (their joints: articulation_joint.py).

PhysX's reduced-coordinate articulation API (the PhysX guide, "Creating an Articulation",
"Articulation Joints", "Cache Indexing") in snake_case, with PhysX's defaults (physx-notes 7.2). Every
setter validates its input and raises an `ArticError` naming the object. Nothing here touches a device: a `Scene`
turns descriptions into Model/State arrays, and an articulation in a scene forwards its inverse-dynamics calls to it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..enums import AXIS_NAMES, ArticulationFlag, Axis, CacheFlag
from ..errors import StateError, TopologyError, ValidationError
from ..math.np_spatial import Transform, quat_from_matrix
from .articulation_joint import Joint
from .contact_pairs import contact_pair
from .couplings import FixedTendon, MimicJoint, SpatialTendon, validate_couplings
from .fluid import Fluid
from .shapes import Material, Shape, mass_properties
from .validate import KnownAttributes, finite, flag_value, nonneg, nonneg_property, pose_property
from .validate import as_real as _as_real
from .validate import as_transform as _as_transform

if TYPE_CHECKING:
    from ..sim.cache import ArticulationCache


class Link(KnownAttributes):
    """`PxArticulationLink`: a rigid body of an articulation, created by `Articulation.create_link`."""

    def __init__(self, articulation: Articulation, parent: Link | None, pose: Transform, name: str):
        self.articulation = articulation
        self.parent = parent
        self.name = name
        self.children: list[Link] = []
        self.initial_pose = pose
        self.shapes: list[Shape] = []
        self._mass = 1.0
        self._inertia = np.ones(3)
        self._cmass_local_pose = Transform()
        self._linear_damping = 0.05
        self._angular_damping = 0.05
        self._max_linear_velocity = 100.0
        self._max_angular_velocity = 50.0
        self._cfm_scale = 0.025
        self._gravity_scale = 1.0
        self._in_fluid = True
        self.inbound_joint: Joint | None = Joint(self, parent, name) if parent is not None else None

    def __repr__(self):
        return f"Link('{self.name}')"

    def _owner(self) -> str:
        return f"link '{self.name}'"

    def _changed(self, what: str = "model"):
        self.articulation._changed(what)

    # -- mass properties ------------------------------------------------------------------------------------------
    @property
    def mass(self) -> float:
        """Mass [kg] (PhysX default 1)."""
        return self._mass

    @mass.setter
    def mass(self, value: float):
        self._mass = nonneg(self._owner(), "mass", value)
        self._changed()

    @property
    def inertia(self) -> np.ndarray:
        """Principal moments of inertia about the COM [kg m^2], along the axes of `cmass_local_pose` (default 1)."""
        return self._inertia.copy()

    @inertia.setter
    def inertia(self, value: ArrayLike):
        v = _as_real(self._owner(), "inertia", value, "3 principal moments")
        if v.shape != (3,):
            raise ValidationError(f"{self._owner()}: inertia must be 3 principal moments, got shape {v.shape}")
        for k in range(3):
            nonneg(self._owner(), "principal inertia", v[k])
        self._inertia = v.copy()
        self._changed()

    cmass_local_pose = pose_property(
        "cmass_local_pose", "COM position and principal-axes orientation in the link's actor frame."
    )

    def set_mass_and_inertia_tensor(self, mass: float, com: ArrayLike, inertia_tensor: ArrayLike) -> None:
        """Set mass, COM (actor frame) and a full 3x3 inertia tensor about the COM (actor axes); the tensor is
        diagonalized into principal moments and the orientation of `cmass_local_pose`."""
        owner = self._owner()
        tensor = _as_real(owner, "inertia tensor", inertia_tensor, "a finite 3x3 matrix")
        if tensor.shape != (3, 3) or not np.all(np.isfinite(tensor)):
            raise ValidationError(f"{owner}: inertia tensor must be a finite 3x3 matrix, got {tensor!r}")
        if not np.allclose(tensor, tensor.T, atol=1e-9 * max(1.0, np.abs(tensor).max())):
            raise ValidationError(f"{owner}: inertia tensor is not symmetric")
        moments, axes = np.linalg.eigh(0.5 * (tensor + tensor.T))
        scale = max(1e-12, np.abs(moments).max())
        if moments.min() < -1e-6 * scale:
            raise ValidationError(f"{owner}: inertia tensor is not positive semi-definite (moments {moments})")
        if np.linalg.det(axes) < 0:
            axes[:, 2] = -axes[:, 2]
        self.mass = mass
        self._inertia = np.maximum(moments, 0.0)
        self._cmass_local_pose = _as_transform(owner, "COM", (com, quat_from_matrix(axes)))
        self._changed()

    def attach_shape(self, shape: Shape) -> Shape:
        """Attach a collision shape (mass properties with update_mass_and_inertia, and contacts). Only while the
        articulation is out of a scene: a scene builds its collision pairs from the shapes when it is added."""
        if self.articulation._scene is not None:
            raise StateError(
                f"{self._owner()}: attach_shape while {self.articulation._owner()} is in a scene would "
                "never collide; attach shapes before scene.add_articulation (or remove it, attach, and "
                "add it again, which restarts it from its description)"
            )
        if not isinstance(shape, Shape) or type(shape).__name__ in ("Plane", "TriangleMesh"):
            raise ValidationError(
                f"{self._owner()}: attach_shape takes an artic shape other than Plane or "
                f"TriangleMesh (those belong on a RigidStatic), got {type(shape).__name__}"
            )
        shape.check_contact_params()
        self.shapes.append(shape)
        return shape

    def update_mass_and_inertia(self, density: float) -> None:
        """`PxRigidBodyExt::updateMassAndInertia`: mass, COM and inertia from the attached shapes at `density`."""
        mass, com, tensor = mass_properties(self.shapes, density, self._owner())
        self.set_mass_and_inertia_tensor(mass, com, tensor)

    # -- rigid-body parameters ------------------------------------------------------------------------------------
    linear_damping = nonneg_property("linear_damping", "Linear damping coefficient [1/s] (default 0.05).")
    angular_damping = nonneg_property("angular_damping", "Angular damping coefficient [1/s] (default 0.05).")
    max_linear_velocity = nonneg_property("max_linear_velocity", "Max linear COM speed [m/s] (default 100).")
    max_angular_velocity = nonneg_property("max_angular_velocity", "Max angular speed [rad/s] (default 50).")
    cfm_scale = nonneg_property("cfm_scale", "Per-link constraint softening of limits and friction (default 0.025).")

    @property
    def gravity_scale(self) -> float:
        """The share of the scene's gravity that acts on this link (default 1). 0 is PhysX's eDISABLE_GRAVITY;
        MuJoCo's body gravcomp g is 1 - g (a force m g gravcomp up at the COM; above 1 the link floats up). The
        step applies it; the inverse-dynamics API (gravity compensation, RNEA) still weighs every link fully."""
        return self._gravity_scale

    @gravity_scale.setter
    def gravity_scale(self, value: float):
        self._gravity_scale = finite(self._owner(), "gravity_scale", value)
        self._changed("model")

    @property
    def in_fluid(self) -> bool:
        """Whether the articulation's `fluid` acts on this link (default True). MJCF imports turn it off for the
        massless links a multi-joint body is split into and for bodies MuJoCo leaves massless: MuJoCo's body has
        one inertia box, a massless one none."""
        return self._in_fluid

    @in_fluid.setter
    def in_fluid(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise ValidationError(f"{self._owner()}: in_fluid must be True or False, got {value!r}")
        self._in_fluid = bool(value)
        self._changed("model")

    def set_cfm_scale(self, cfm_scale: float) -> None:
        """PhysX's `setCfmScale`: the same as assigning `cfm_scale`."""
        self.cfm_scale = cfm_scale

    def get_cfm_scale(self) -> float:
        """PhysX's `getCfmScale`: the same as reading `cfm_scale`."""
        return self.cfm_scale

    # -- indexing -------------------------------------------------------------------------------------------------
    @property
    def link_index(self) -> int:
        """PhysX low-level index: breadth-first from the root (0), children in creation order."""
        return self.articulation._topology().link_index[self]

    @property
    def inbound_joint_dof(self) -> int:
        """Number of unlocked axes of the inbound joint (0 for the root)."""
        return 0 if self.inbound_joint is None else len(self.inbound_joint.dof_axes())


@dataclass
class _Topology:
    """Low-level indexing: links breadth-first, dofs in link order then axis order (physx-notes 6.3)."""

    links: list  # Link in low-level order
    link_index: dict  # Link -> low-level index
    dof_start: list  # per low-level link: first dof index
    dof_axes: list  # per low-level link: unlocked axes
    dof_count: int = 0  # n, the sum of the links' unlocked axes

    def depth_first(self) -> list[int]:
        """Low-level link indices in PhysX's solver order: depth first, children in low-level order (notes 4.2)."""
        children = {i: [] for i in range(len(self.links))}
        for i, link in enumerate(self.links[1:], start=1):
            children[self.link_index[link.parent]].append(i)
        order, stack = [], [0]
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(children[i]))
        return order


class Articulation(KnownAttributes):
    """`PxArticulationReducedCoordinate`: a tree of links joined by reduced-coordinate joints."""

    def __init__(self, name: str = "articulation"):
        self.name = name
        self._links: list[Link] = []
        self._flags = ArticulationFlag(0)
        self._iterations = (4, 1)
        self._sleep_threshold = 5e-3
        self._solver_tolerance = 0.0
        self._root_damping = 0.0
        self._root_armature = 0.0
        self._stabilization_threshold = 5e-4
        self._wake_counter = 0.4
        self._root_pose: Transform | None = None
        self._topo: _Topology | None = None
        self._scene = None
        self._couplings: list = []  # mimic joints and tendons (description/couplings.py)
        self.collision_filters: set = set()  # frozenset({link, link}) pairs that never collide
        self.contact_pairs: list = []  # ContactPair (contact_pairs.py): shape pairs that always collide
        self._kinematic = False  # set by a kinematic RigidDynamic: the root follows pose targets
        self._fluid: Fluid | None = None

    def __repr__(self):
        return f"Articulation('{self.name}', links={len(self._links)}, dofs={self.dof_count})"

    def _owner(self) -> str:
        return f"articulation '{self.name}'"

    # -- scene plumbing -------------------------------------------------------------------------------------------
    def _changed(self, what: str, part: tuple[str, int | None] | None = None):
        """Tell the scene, if any: `part` (a state or control field and a dof column) limits what it rewrites."""
        if what == "topology":
            self._topo = None
        if self._scene is not None:
            self._scene._on_description_changed(self, what, part)

    def _check_topology_change(self, owner: str, action: str):
        if self._scene is not None:
            raise TopologyError(
                f"{owner}: {action} changes the topology of {self._owner()}, which is in a scene; "
                "remove it from the scene first"
            )

    def _require_scene(self):
        if self._scene is None:
            raise StateError(f"{self._owner()} is not in a scene; call scene.add_articulation first")
        return self._scene

    # -- building -------------------------------------------------------------------------------------------------
    def create_link(
        self,
        parent: Link | None,
        pose: Transform | tuple[ArrayLike, ArrayLike] | None = None,
        name: str | None = None,
    ) -> Link:
        """Add a link; `parent=None` creates the root (once). Each non-root link gets an inbound joint named like it."""
        self._check_topology_change(self._owner(), "create_link")
        pose = _as_transform(self._owner(), "link pose", pose)
        if parent is None and self._links:
            raise TopologyError(f"{self._owner()}: already has root '{self._links[0].name}'; give a parent link")
        if parent is not None and (not isinstance(parent, Link) or parent.articulation is not self):
            raise TopologyError(f"{self._owner()}: the parent of a new link must be a link of this articulation")
        name = name if name is not None else f"link{len(self._links)}"
        if any(link.name == name for link in self._links):
            raise ValidationError(f"{self._owner()}: a link named '{name}' already exists; link names must be unique")
        link = Link(self, parent, pose, name)
        if parent is not None:
            parent.children.append(link)
        else:
            self._root_pose = pose
        self._links.append(link)
        self._changed("topology")
        return link

    def get_links(self) -> list[Link]:
        """Links in creation order (PhysX `getLinks`)."""
        return list(self._links)

    def get_link(self, name: str) -> Link:
        """The link named `name`; a ValidationError lists the link names if none has it."""
        for link in self._links:
            if link.name == name:
                return link
        names = [lk.name for lk in self._links]
        raise ValidationError(f"{self._owner()}: no link named '{name}' (links: {', '.join(names)})")

    def get_joint(self, name: str) -> Joint:
        """The inbound joint named `name`; a ValidationError lists the joint names if none has it."""
        for link in self._links:
            if link.inbound_joint is not None and link.inbound_joint.name == name:
                return link.inbound_joint
        names = [lk.inbound_joint.name for lk in self._links if lk.inbound_joint is not None]
        raise ValidationError(f"{self._owner()}: no joint named '{name}' (joints: {', '.join(names) or 'none'})")

    @property
    def fluid(self) -> Fluid | None:
        """The medium the links move through (description/fluid.py: MuJoCo's inertia-box drag), or None (default:
        vacuum, as in PhysX)."""
        return self._fluid

    @fluid.setter
    def fluid(self, value: Fluid | None) -> None:
        if value is not None and not isinstance(value, Fluid):
            raise ValidationError(f"{self._owner()}: fluid must be an artic.Fluid or None, got {value!r}")
        self._fluid = value
        self._changed("model")

    @property
    def root(self) -> Link:
        """The root link (the first one created, `create_link(None, ...)`); a TopologyError while there is none."""
        if not self._links:
            raise TopologyError(f"{self._owner()} has no links; call create_link(None, pose) first")
        return self._links[0]

    # -- mimic joints and tendons -------------------------------------------------------------------------------
    def create_mimic_joint(
        self,
        joint_a: Joint,
        axis_a: Axis,
        joint_b: Joint,
        axis_b: Axis,
        gear_ratio: float,
        offset: float = 0.0,
        natural_frequency: float = 0.0,
        damping_ratio: float = 0.0,
        polynomial: Iterable[float] = (0.0, 0.0, 0.0, 0.0),
    ) -> MimicJoint:
        """Couple two dofs: q_A + gear_ratio * q_B + offset (+ k2 x^2 + k3 x^3 + k4 x^4, x = q_B - x0, with
        polynomial = (x0, k2, k3, k4); gear_ratio may then be 0) = 0 (the mimic-joint note). Hard unless
        natural_frequency > 0 and damping_ratio > 0. Only while the articulation is out of a scene."""
        self._check_topology_change(self._owner(), "create_mimic_joint")
        m = MimicJoint(
            self,
            [(joint_a, axis_a, 1.0), (joint_b, axis_b, gear_ratio)],
            offset,
            natural_frequency,
            damping_ratio,
            polynomial,
        )
        self._couplings.append(m)
        self._changed("topology")
        return m

    def create_multi_dof_mimic_joint(
        self,
        joint_a: Joint,
        axis_a: Axis,
        others: Iterable[tuple[Joint, Axis, float]],
        offset: float = 0.0,
        natural_frequency: float = 0.0,
        damping_ratio: float = 0.0,
    ) -> MimicJoint:
        """The N-dof extension: q_A + sum G_i q_i + offset = 0, `others` = [(joint, axis, G_i), ...]
        (differentials)."""
        self._check_topology_change(self._owner(), "create_mimic_joint")
        m = MimicJoint(self, [(joint_a, axis_a, 1.0)] + list(others), offset, natural_frequency, damping_ratio)
        self._couplings.append(m)
        self._changed("topology")
        return m

    def create_fixed_tendon(self) -> FixedTendon:
        """A new, empty `FixedTendon` (PhysX `createFixedTendon`): add its joints with `create_tendon_joint`. Only while
        the articulation is out of a scene."""
        self._check_topology_change(self._owner(), "create_fixed_tendon")
        t = FixedTendon(self)
        self._couplings.append(t)
        return t

    def create_spatial_tendon(self) -> SpatialTendon:
        """A new, empty `SpatialTendon` (PhysX `createSpatialTendon`): add its attachments with `create_attachment`.
        Only while the articulation is out of a scene."""
        self._check_topology_change(self._owner(), "create_spatial_tendon")
        t = SpatialTendon(self)
        self._couplings.append(t)
        return t

    def disable_collision(self, link_a: Link, link_b: Link) -> None:
        """Never make contacts between these two links (parent and child links never collide anyway)."""
        for lk in (link_a, link_b):
            if not isinstance(lk, Link) or lk.articulation is not self:
                raise ValidationError(f"{self._owner()}: disable_collision takes two links of this articulation")
        self.collision_filters.add(frozenset((link_a, link_b)))
        self._changed("model")

    def add_contact_pair(
        self, shape_a: Shape, shape_b: Shape, material: Material | None = None, rest_offset: float = 0.0
    ) -> None:
        """shape_a (this articulation's) and shape_b (any body's) collide whatever their filters (contact_pairs.py)."""
        if self._scene is not None:
            raise StateError(f"{self._owner()}: add_contact_pair while in a scene; add pairs before adding it")
        self.contact_pairs.append(contact_pair(self, shape_a, shape_b, material, rest_offset))

    def get_mimic_joints(self) -> list:
        """The mimic joints, in creation order (PhysX `getMimicJoints`)."""
        return [c for c in self._couplings if isinstance(c, MimicJoint)]

    def get_fixed_tendons(self) -> list:
        """The fixed tendons, in creation order (PhysX `getFixedTendons`)."""
        return [c for c in self._couplings if isinstance(c, FixedTendon)]

    def get_spatial_tendons(self) -> list:
        """The spatial tendons, in creation order (PhysX `getSpatialTendons`)."""
        return [c for c in self._couplings if isinstance(c, SpatialTendon)]

    # -- flags and solver settings --------------------------------------------------------------------------------
    def set_articulation_flag(self, flag: ArticulationFlag, value: bool = True) -> None:
        """PhysX's `setArticulationFlag`: set (or, with value False, clear) `flag`. FIX_BASE changes the topology, so
        only while the articulation is out of a scene."""
        flag = flag_value(self._owner(), "articulation flag", flag, ArticulationFlag)
        if not isinstance(value, (bool, np.bool_)):
            raise ValidationError(f"{self._owner()}: set_articulation_flag value must be True or False, got {value!r}")
        if flag & ArticulationFlag.FIX_BASE:
            self._check_topology_change(self._owner(), "changing FIX_BASE")
        self._flags = (self._flags | flag) if value else (self._flags & ~flag)
        self._changed("model")

    def get_articulation_flags(self) -> ArticulationFlag:
        """The `ArticulationFlag`s set (PhysX `getArticulationFlags`; none by default)."""
        return self._flags

    @property
    def fix_base(self) -> bool:
        """Whether ArticulationFlag.FIX_BASE is set: the root is welded to the world instead of floating."""
        return bool(self._flags & ArticulationFlag.FIX_BASE)

    def set_solver_iteration_counts(self, min_position_iters: int, min_velocity_iters: int = 1) -> None:
        """Position iterations in [1, 255], velocity iterations in [0, 255] (PhysX defaults 4 / 1)."""
        p, v = min_position_iters, min_velocity_iters
        if any(isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) for x in (p, v)) or not (
            1 <= p <= 255 and 0 <= v <= 255
        ):
            raise ValidationError(f"{self._owner()}: iteration counts must be in [1, 255] and [0, 255], got {p}, {v}")
        self._iterations = (int(p), int(v))
        self._changed("model")

    def get_solver_iteration_counts(self) -> tuple[int, int]:
        """(position, velocity) iteration counts (PhysX `getSolverIterationCounts`; default (4, 1))."""
        return self._iterations

    solver_tolerance = nonneg_property(
        "solver_tolerance",
        "PGS ends its position iterations after the first sweep that changes no generalized velocity by more than "
        "this [m/s or rad/s] (solvers/pgs.py); 0 (the default, PhysX's behaviour) runs every iteration. TGS runs "
        "all of its substeps; Scene.get_solver_iterations reports the sweeps run.",
    )
    root_damping = nonneg_property(
        "root_damping",
        "Damping [N s/m and N m s/rad] on a floating root's six velocities, MuJoCo's free-joint damping: a force "
        "-d v at the root frame's origin and a torque -d w, explicit in the unconstrained step and made implicit "
        "after the constraint solve as MuJoCo's Euler integrator does (dynamics/passive.py: M gains dt D in the "
        "root block, D = d J^T J for the origin's velocity J). PhysX has none (0, the default); ignored for a "
        "fixed base. Unlike the links' linear_damping and angular_damping [1/s] it is not per unit mass, so it "
        "damps a body's spin about its axis of least inertia the most (a pen's roll).",
    )
    root_armature = nonneg_property(
        "root_armature",
        "Armature [kg and kg m^2] on a floating root's six velocities, MuJoCo's free-joint armature: an inertia a "
        "added to the mass matrix for the root frame's origin velocity (world axes) and for the angular velocity, "
        "as a body of mass a at the root frame's origin with rotational inertia a 1 about it would add, without "
        "its weight (math/spatial.armature_about_o). PhysX has none (0, the default); ignored for a fixed base.",
    )
    sleep_threshold = nonneg_property(
        "sleep_threshold", "Mass-normalized kinetic energy below which it may sleep (5e-3)."
    )
    stabilization_threshold = nonneg_property("stabilization_threshold", "Stabilization energy threshold (5e-4).")
    wake_counter = nonneg_property("wake_counter", "Seconds the articulation stays awake without motion (0.4).")

    @property
    def root_global_pose(self) -> Transform:
        """Pose of the root link's actor frame in the world (the pose given to create_link for the root)."""
        return self.root.initial_pose.copy()

    def set_root_global_pose(self, pose: Transform | tuple[ArrayLike, ArrayLike]) -> None:
        """PhysX's `setRootGlobalPose` on the description; in a scene every env's root pose becomes it (joint
        positions and velocities stay; per env: apply_cache with ROOT_TRANSFORM)."""
        self.root.initial_pose = _as_transform(self._owner(), "root pose", pose)
        self._changed("state", ("root_pose", None))

    # -- indexing -------------------------------------------------------------------------------------------------
    def _topology(self) -> _Topology:
        if self._topo is None:
            order = []
            queue = deque([self.root])
            while queue:
                link = queue.popleft()
                order.append(link)
                queue.extend(link.children)
            dof_start, dof_axes, n = [], [], 0
            for link in order:
                axes = link.inbound_joint.dof_axes() if link.inbound_joint is not None else []
                dof_start.append(n)
                dof_axes.append(axes)
                n += len(axes)
            self._topo = _Topology(order, {link: i for i, link in enumerate(order)}, dof_start, dof_axes, n)
        return self._topo

    @property
    def link_count(self) -> int:
        """Number of links L, the root included."""
        return len(self._links)

    @property
    def dof_count(self) -> int:
        """Number of unlocked joint axes n: the length of the cache's joint arrays."""
        if not self._links:
            return 0
        return self._topology().dof_count  # kept until the links or their axes change (a Gymnasium loop reads it)

    @property
    def link_names(self) -> list[str]:
        """Link names in low-level (breadth-first) order."""
        return [link.name for link in self._topology().links]

    @property
    def joint_names(self) -> list[str]:
        """Inbound-joint names of the non-root links, in low-level link order."""
        return [link.inbound_joint.name for link in self._topology().links[1:]]

    @property
    def dof_names(self) -> list[str]:
        """One name per dof in cache order: a 1-dof joint's dof is named after the joint, others 'joint:axis'."""
        topo = self._topology()
        names = []
        for link, axes in zip(topo.links, topo.dof_axes, strict=True):
            for a in axes:
                jname = link.inbound_joint.name
                names.append(jname if len(axes) == 1 else f"{jname}:{AXIS_NAMES[a]}")
        return names

    def dof_list(self) -> list[tuple[Joint, Axis]]:
        """(joint, axis) of every dof, in cache order."""
        topo = self._topology()
        return [(link.inbound_joint, a) for link, axes in zip(topo.links, topo.dof_axes, strict=True) for a in axes]

    def validate(self) -> None:
        """Whole-articulation checks, run when it enters a scene."""
        if not self._links:
            raise TopologyError(f"{self._owner()} has no links; call create_link(None, pose) first")
        names = [link.inbound_joint.name for link in self._links[1:]]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValidationError(f"{self._owner()}: joint names must be unique, repeated: {sorted(dup)}")
        for link in self._links:
            if link.inbound_joint is not None:
                link.inbound_joint.validate()
        validate_couplings(self)

    # -- cache and inverse dynamics (forwarded to the scene, which owns the device data) --------------------------
    def create_cache(self) -> ArticulationCache:
        """A new `ArticulationCache` for every env of the scene (PhysX `createCache`), zeroed (root_transform the
        identity)."""
        return self._require_scene()._create_cache(self)

    def copy_internal_state_to_cache(self, cache: ArticulationCache, flags: CacheFlag) -> None:
        """PhysX's `copyInternalStateToCache`: every env's state, targets or forces into the cache fields `flags`
        selects."""
        self._require_scene()._copy_internal_state_to_cache(self, cache, flags)

    def apply_cache(self, cache: ArticulationCache, flags: CacheFlag) -> None:
        """PhysX's `applyCache`: the cache fields `flags` selects into every env's state or controls. Every field is
        checked before any is written; envs given non-zero velocities, forces or new targets are woken."""
        self._require_scene()._apply_cache(self, cache, flags)

    def pack_joint_data(self, maximum: ArrayLike, reduced: np.ndarray | None = None) -> np.ndarray:
        """Maximal (..., link_count-1, 6) per-axis data -> reduced (..., dof_count) in cache order."""
        topo = self._topology()
        maximum = _as_real(self._owner(), "pack_joint_data input", maximum)
        if maximum.shape[-2:] != (self.link_count - 1, 6):
            raise ValidationError(
                f"{self._owner()}: pack_joint_data expects shape (..., {self.link_count - 1}, 6), got {maximum.shape}"
            )
        out = np.zeros(maximum.shape[:-2] + (self.dof_count,)) if reduced is None else reduced
        for i, axes in enumerate(topo.dof_axes[1:], start=1):
            for k, a in enumerate(axes):
                out[..., topo.dof_start[i] + k] = maximum[..., i - 1, int(a)]
        return out

    def unpack_joint_data(self, reduced: ArrayLike, maximum: np.ndarray | None = None) -> np.ndarray:
        """Reduced (..., dof_count) in cache order -> maximal (..., link_count-1, 6), zeros on locked axes."""
        topo = self._topology()
        reduced = _as_real(self._owner(), "unpack_joint_data input", reduced)
        if reduced.shape[-1:] != (self.dof_count,):
            raise ValidationError(
                f"{self._owner()}: unpack_joint_data expects shape (..., {self.dof_count}), got {reduced.shape}"
            )
        out = np.zeros(reduced.shape[:-1] + (self.link_count - 1, 6)) if maximum is None else maximum
        for i, axes in enumerate(topo.dof_axes[1:], start=1):
            for k, a in enumerate(axes):
                out[..., i - 1, int(a)] = reduced[..., topo.dof_start[i] + k]
        return out

    def common_init(self) -> None:
        """PhysX's `commonInit`: link poses from every env's current joint positions (the scene's state; apply_cache
        puts the cache's there). The compute_* methods work at those positions and refresh the poses when needed."""
        self._require_scene()._common_init(self)

    def compute_mass_matrix(self, cache: ArticulationCache) -> None:
        """PhysX's `computeMassMatrix`: the joint-space mass matrix at the current positions into cache.mass_matrix
        (E, N, N), N = dof_count (+ 6 root entries first for a floating base)."""
        self._require_scene()._inverse_dynamics(self).compute_mass_matrix(cache)

    def compute_gravity_compensation(self, cache: ArticulationCache) -> None:
        """PhysX's `computeGravityCompensation`: the generalized forces g(q) that hold the current positions against the
        scene's gravity, into cache.gravity_compensation_force (E, N)."""
        self._require_scene()._inverse_dynamics(self).compute_gravity_compensation(cache)

    def compute_coriolis_compensation(self, cache: ArticulationCache) -> None:
        """PhysX's `computeCoriolisCompensation`: C(q, v) v at the current positions and the cache's joint (and root)
        velocities, gravity left out, into cache.coriolis_force (E, N)."""
        self._require_scene()._inverse_dynamics(self).compute_coriolis_compensation(cache)

    def compute_generalized_external_force(self, cache: ArticulationCache) -> None:
        """PhysX's `computeGeneralizedExternalForce`: -J^T F, the generalized forces that counteract
        cache.external_forces (E, L, 6) at the current positions, into cache.joint_force (E, n) and, for a floating
        base, cache.root_force (E, 6)."""
        self._require_scene()._inverse_dynamics(self).compute_generalized_external_force(cache)

    def compute_joint_acceleration(self, cache: ArticulationCache) -> None:
        """PhysX's `computeJointAcceleration` (forward dynamics, ABA): the accelerations that cache.joint_force (and
        root_force) give at the current positions and the cache's velocities, gravity included, into
        cache.joint_acceleration (E, n) and, for a floating base, cache.root_linear/angular_acceleration (E, 3)."""
        self._require_scene()._inverse_dynamics(self).compute_joint_acceleration(cache)

    def compute_joint_force(self, cache: ArticulationCache) -> None:
        """PhysX's `computeJointForce` (inverse dynamics, RNEA without gravity): M a + C(q, v) v at the current
        positions and the cache's velocities and accelerations, into cache.joint_force (E, n) and, for a floating base,
        cache.root_force (E, 6)."""
        self._require_scene()._inverse_dynamics(self).compute_joint_force(cache)

    def compute_dense_jacobian(self, cache: ArticulationCache) -> tuple[int, int]:
        """PhysX's `computeDenseJacobian`: link COM velocities (linear, angular; world) over generalized velocities at
        the current positions, into cache.dense_jacobian (E, rows, N), 6 rows per link (the root's only if floating).
        Returns (rows, N)."""
        return self._require_scene()._inverse_dynamics(self).compute_dense_jacobian(cache)

    def compute_centroidal_momentum_matrix(self, cache: ArticulationCache) -> None:
        """PhysX's `computeCentroidalMomentumMatrix` (floating base only): A_G into cache.centroidal_momentum_matrix
        (E, 6, N) and its bias, from the cache's velocities, into cache.centroidal_momentum_bias (E, 6)."""
        self._require_scene()._inverse_dynamics(self).compute_centroidal_momentum_matrix(cache)

    def compute_articulation_com(self, root_frame: bool = False) -> np.ndarray:
        """PhysX's `computeArticulationCOM`: the centre of mass of every env, (E, 3) float64 [m], in the world or
        (root_frame=True) in the root link's actor frame."""
        return self._require_scene()._inverse_dynamics(self).compute_articulation_com(root_frame)
