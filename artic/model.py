"""`ArticulationModel`: the immutable device description of one articulation, shared by all envs.

A scene holds one block per articulation added to it (`Model.articulations`), each replicated over the scene's
envs; kernels take a block's arrays plus its sizes as arguments, so no kernel is generated per model. Links are in
PhysX low-level (breadth-first) order, so every parent index is smaller than its child's; dofs are in cache order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import warp as wp

from .build.articulation import Articulation
from .build.types import ArticulationFlag, JointType
from .structs import bundle

# joint type codes seen by kernels; the root link's code says whether the base is fixed or floating
JOINT_FIX = int(JointType.FIX)
JOINT_PRISMATIC = int(JointType.PRISMATIC)
JOINT_REVOLUTE = int(JointType.REVOLUTE)
JOINT_REVOLUTE_UNWRAPPED = int(JointType.REVOLUTE_UNWRAPPED)
JOINT_SPHERICAL = int(JointType.SPHERICAL)
JOINT_FREE_ROOT = 6  # internal: a floating root link


@wp.struct
class Tree:
    """The topology and inertia arrays every tree algorithm reads, passed as one argument (fields as in
    ArticulationModel; `link_com_local` is its `link_com`)."""

    link_count: int
    link_parent: wp.array(dtype=int)
    joint_type: wp.array(dtype=int)
    joint_dof_start: wp.array(dtype=int)
    joint_dof_count: wp.array(dtype=int)
    dof_axis: wp.array(dtype=int)
    dof_armature: wp.array(dtype=float)
    link_mass: wp.array(dtype=float)
    joint_parent_pose: wp.array(dtype=wp.transform)
    joint_child_pose_inv: wp.array(dtype=wp.transform)
    link_com_local: wp.array(dtype=wp.vec3)
    link_principal_inertia: wp.array(dtype=wp.vec3)
    link_com_rot: wp.array(dtype=wp.quat)


@dataclass
class ArticulationModel:
    """Topology and constant parameters of one articulation (sizes: L links, n dofs, N = n + 6 if floating)."""

    link_count: int
    dof_count: int
    floating: bool
    link_parent: wp.array = None  # (L,) int32: parent link index, -1 for the root
    joint_type: wp.array = None  # (L,) int32: JointType of the inbound joint; JOINT_FIX/JOINT_FREE_ROOT at the root
    joint_parent_pose: wp.array = None  # (L,) transform: joint frame in the parent's actor frame
    joint_child_pose: wp.array = None  # (L,) transform: joint frame in the child's actor frame
    joint_child_pose_inv: wp.array = None  # (L,) transform: its inverse (kept to save the inversion per step)
    joint_dof_start: wp.array = None  # (L,) int32: first dof of the inbound joint
    joint_dof_count: wp.array = None  # (L,) int32: unlocked axes of the inbound joint (0..3)
    link_mass: wp.array = None  # (L,) float32 [kg]
    link_com: wp.array = None  # (L,) vec3 [m]: COM in the link's actor frame
    link_principal_inertia: wp.array = None  # (L,) vec3 [kg m^2]: principal moments about the COM
    link_com_rot: wp.array = None  # (L,) quat: principal axes in the link's actor frame
    dof_axis: wp.array = None  # (n,) int32: PhysX Axis of each dof (0..2 rotations, 3..5 translations)
    dof_armature: wp.array = None  # (n,) float32 [kg m^2 or kg]: added to the dof's mass-matrix diagonal
    flags: int = 0  # ArticulationFlag bits
    host: dict = field(default_factory=dict)  # the same arrays as NumPy, for host-side bookkeeping
    tree: Tree = None  # the arrays above bundled for kernels

    def bundle(self):
        self.tree = bundle(Tree, self, link_com_local="link_com")

    @property
    def gen_count(self) -> int:
        """Generalized dofs N: root (linear, angular) when floating, then the joint dofs."""
        return self.dof_count + (6 if self.floating else 0)

    @property
    def gen_offset(self) -> int:
        return 6 if self.floating else 0


def model_arrays(art: Articulation) -> dict:
    """Host (NumPy) arrays of an articulation's model, in low-level order."""
    topo = art._topology()
    index = topo.link_index
    links = topo.links
    n_links = len(links)
    floating = not (art.get_articulation_flags() & ArticulationFlag.FIX_BASE)
    h = {
        "link_parent": np.full(n_links, -1, np.int32),
        "joint_type": np.zeros(n_links, np.int32),
        "joint_parent_pose": np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32), (n_links, 1)),
        "joint_child_pose": np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32), (n_links, 1)),
        "joint_child_pose_inv": np.tile(np.array([0, 0, 0, 0, 0, 0, 1.0], np.float32), (n_links, 1)),
        "joint_dof_start": np.array(topo.dof_start, np.int32),
        "joint_dof_count": np.array([len(a) for a in topo.dof_axes], np.int32),
        "link_mass": np.zeros(n_links, np.float32),
        "link_com": np.zeros((n_links, 3), np.float32),
        "link_principal_inertia": np.zeros((n_links, 3), np.float32),
        "link_com_rot": np.zeros((n_links, 4), np.float32),
        "dof_axis": np.array([int(a) for axes in topo.dof_axes for a in axes], np.int32),
        "dof_armature": np.zeros(art.dof_count, np.float32),
    }
    h["joint_type"][0] = JOINT_FREE_ROOT if floating else JOINT_FIX
    for i, link in enumerate(links):
        h["link_mass"][i] = link.mass
        cm = link.cmass_local_pose
        h["link_com"][i] = cm.p
        h["link_com_rot"][i] = cm.q
        h["link_principal_inertia"][i] = link.inertia
        j = link.inbound_joint
        if j is None:
            continue
        h["link_parent"][i] = index[link.parent]
        h["joint_type"][i] = int(j.get_joint_type())
        h["joint_parent_pose"][i] = j.parent_pose.as_array()
        h["joint_child_pose"][i] = j.child_pose.as_array()
        h["joint_child_pose_inv"][i] = j.child_pose.inverse().as_array()
        for k, a in enumerate(topo.dof_axes[i]):
            h["dof_armature"][topo.dof_start[i] + k] = j.get_armature(a)
    return h


_DTYPES = {
    "link_parent": wp.int32, "joint_type": wp.int32, "joint_parent_pose": wp.transform,
    "joint_child_pose": wp.transform,
    "joint_child_pose_inv": wp.transform,
    "joint_dof_start": wp.int32, "joint_dof_count": wp.int32, "link_mass": wp.float32, "link_com": wp.vec3,
    "link_principal_inertia": wp.vec3, "link_com_rot": wp.quat, "dof_axis": wp.int32, "dof_armature": wp.float32,
}


def build_model(art: Articulation, device) -> ArticulationModel:
    h = model_arrays(art)
    m = ArticulationModel(art.link_count, art.dof_count, bool(h["joint_type"][0] == JOINT_FREE_ROOT),
                          flags=int(art.get_articulation_flags()), host=h)
    for name, dtype in _DTYPES.items():
        setattr(m, name, wp.array(h[name], dtype=dtype, device=device))
    m.bundle()
    return m


def refresh_model(m: ArticulationModel, art: Articulation):
    """Re-upload the parameters of an articulation whose topology did not change (masses, frames, armature)."""
    h = model_arrays(art)
    for name in _DTYPES:
        getattr(m, name).assign(h[name])
    m.host = h
    m.flags = int(art.get_articulation_flags())
