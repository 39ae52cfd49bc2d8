"""`ArticulationModel`: the immutable device description of one articulation, or of a forest of them, shared by
all envs.

Each articulation has its own model (its inverse dynamics and cache work on it alone). The scene also concatenates
the articulations that may touch each other into one forest, a *block* (block.py), so that one thread steps every
body of an env together and contacts between them are ordinary rows. Kernels take a model's arrays plus its sizes
as arguments, so no kernel is generated per model. Within a tree, links are in PhysX low-level (breadth-first)
order; trees follow each other, so every parent index is smaller than its child's; dofs are in cache order.
Generalized coordinates are per tree: a floating root's six (COM linear, angular), then the tree's joint dofs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import warp as wp

from ..description.articulation import Articulation
from ..enums import ArticulationFlag, JointType
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
    tree_count: int
    link_tree: wp.array(dtype=int)
    link_root_gen: wp.array(dtype=int)
    dof_gen: wp.array(dtype=int)
    tree_root: wp.array(dtype=int)
    tree_gen_start: wp.array(dtype=int)
    tree_gen_count: wp.array(dtype=int)
    tree_kinematic: wp.array(dtype=int)
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
    """Topology and constant parameters of one articulation or a forest of T of them (sizes: L links, n dofs,
    N generalized dofs = n + 6 per floating root). `floating` describes the first tree."""

    link_count: int
    dof_count: int
    floating: bool
    tree_count: int = 1
    gen_count: int = 0  # N
    link_parent: wp.array = None  # (L,) int32: parent link index, -1 for a tree's root
    link_tree: wp.array = None  # (L,) int32: the tree (articulation) each link belongs to
    link_root_gen: wp.array = None  # (L,) int32: first of the tree's six root coordinates in N, -1 for a fixed base
    dof_gen: wp.array = None  # (n,) int32: each dof's index in the generalized vector
    tree_root: wp.array = None  # (T,) int32: root link of each tree
    tree_gen_start: wp.array = None  # (T,) int32: first generalized index of each tree (M is block-diagonal)
    tree_gen_count: wp.array = None  # (T,) int32: generalized dofs of each tree
    tree_kinematic: wp.array = None  # (T,) int32: 1 for a kinematic body's tree (its root follows pose targets)
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
    def gen_offset(self) -> int:
        """Where the first tree's joint dofs start in the generalized vector (after its floating root)."""
        return 6 if self.floating else 0


def _tree_arrays(art: Articulation) -> dict:
    """Host (NumPy) arrays of one articulation's model, in low-level order."""
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


def model_arrays(arts: list[Articulation]) -> dict:
    """Host arrays of the forest of `arts` (one tree each, in order): the trees' arrays concatenated, link and dof
    indices shifted, plus the per-tree generalized layout."""
    parts = [_tree_arrays(a) for a in arts]
    h = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    link_tree, root_gen, dof_gen, roots, gen_start, gen_count = [], [], [], [], [], []
    links = dofs = gen = 0
    for t, p in enumerate(parts):
        nl, nd = len(p["link_parent"]), len(p["dof_axis"])
        floating = p["joint_type"][0] == JOINT_FREE_ROOT
        h["link_parent"][links:links + nl] += np.where(p["link_parent"] >= 0, links, 0)
        h["joint_dof_start"][links:links + nl] += dofs
        link_tree += [t] * nl
        root_gen += [gen if floating else -1] * nl
        dof_gen += range(gen + 6 * floating, gen + 6 * floating + nd)
        roots.append(links)
        gen_start.append(gen)
        gen_count.append(nd + 6 * floating)
        links, dofs, gen = links + nl, dofs + nd, gen + nd + 6 * floating
    kinematic = [int(a._kinematic) for a in arts]
    for name, v in (("link_tree", link_tree), ("link_root_gen", root_gen), ("dof_gen", dof_gen),
                    ("tree_root", roots), ("tree_gen_start", gen_start), ("tree_gen_count", gen_count),
                    ("tree_kinematic", kinematic)):
        h[name] = np.array(v, np.int32)
    return h


_DTYPES = {
    "link_parent": wp.int32, "joint_type": wp.int32, "joint_parent_pose": wp.transform,
    "joint_child_pose": wp.transform,
    "joint_child_pose_inv": wp.transform,
    "joint_dof_start": wp.int32, "joint_dof_count": wp.int32, "link_mass": wp.float32, "link_com": wp.vec3,
    "link_principal_inertia": wp.vec3, "link_com_rot": wp.quat, "dof_axis": wp.int32, "dof_armature": wp.float32,
    "link_tree": wp.int32, "link_root_gen": wp.int32, "dof_gen": wp.int32, "tree_root": wp.int32,
    "tree_gen_start": wp.int32, "tree_gen_count": wp.int32, "tree_kinematic": wp.int32,
}


def build_model(arts, device) -> ArticulationModel:
    """The model of one articulation, or of the forest of a list of them."""
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    h = model_arrays(arts)
    m = ArticulationModel(len(h["link_parent"]), len(h["dof_axis"]), bool(h["joint_type"][0] == JOINT_FREE_ROOT),
                          tree_count=len(arts), gen_count=int(h["tree_gen_count"].sum()),
                          flags=int(arts[0].get_articulation_flags()), host=h)
    for name, dtype in _DTYPES.items():
        setattr(m, name, wp.array(h[name], dtype=dtype, device=device))
    m.bundle()
    return m


def refresh_model(m: ArticulationModel, arts):
    """Re-upload the parameters of articulations whose topology did not change (masses, frames, armature)."""
    arts = [arts] if isinstance(arts, Articulation) else list(arts)
    h = model_arrays(arts)
    for name in _DTYPES:
        getattr(m, name).assign(h[name])
    m.host = h
    m.flags = int(arts[0].get_articulation_flags())
