"""A segment model: rigid segments joined by ball, hinge or universal joints at anchor points, the body model of
marker fitting (the ODE paper, section S2; the joint types: segment_joints.py).

Each segment's body frame has its origin at the segment's COM and, in the reference pose, the world's axes. Segment
k hangs from its parent j by a ball joint whose anchor (centre of rotation) is c_jk in j's frame and c_kj in k's
frame; the joint holds R_j c_jk + x_j = R_k c_kj + x_k (eq. 16). The anchors set the segment dimensions (bone
lengths), which is what fitting adjusts.

The same model is simulated two ways: in maximal coordinates (free `RigidDynamic` bodies joined by compliant
`SphericalJoint`s, rig.py), where anchors can be pulled apart and fitted, and as a floating-base articulation
(`to_articulation`), whose generalized coordinates give joint angles, Jacobians and inverse dynamics.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..description.articulation import Articulation, Link
from ..enums import Axis, JointType, Motion
from ..errors import ValidationError
from ..math.np_spatial import Transform, quat_mul, quat_rotate, quat_to_matrix
from .segment_joints import IDENTITY, JOINT_TYPES, frame_from_axes


def _vec3(owner: str, what: str, value) -> np.ndarray:
    a = np.asarray(value)
    if a.shape != (3,) or a.dtype.kind not in "biuf" or not np.all(np.isfinite(a)):
        raise ValidationError(f"{owner}: {what} must be 3 finite real numbers [m or kg m^2], got {value!r}")
    return a.astype(np.float64)


def _unit_quat(owner: str, what: str, value) -> np.ndarray:
    q = np.asarray(IDENTITY if value is None else value, float)
    if q.shape != (4,) or not np.all(np.isfinite(q)) or abs(np.linalg.norm(q) - 1.0) > 1e-6:
        raise ValidationError(f"{owner}: {what} must be a unit quaternion (x, y, z, w), got {value!r}")
    return q / np.linalg.norm(q)


# PhysX's revolute joint turns about its frame's x: these frames put x on a joint frame's z (hinge, roll) and y
# (pitch); a rotation of -90 deg about y, and of 90 deg about z
_Z_TO_X = np.array([0.0, -np.sqrt(0.5), 0.0, np.sqrt(0.5)])
_Y_TO_X = np.array([0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)])


def _revolute(link: Link, parent_pose: Transform, child_pose: Transform) -> None:
    """Make `link`'s inbound joint a free revolute joint (about the frames' x), frictionless."""
    j = link.inbound_joint
    j.set_joint_type(JointType.REVOLUTE)
    j.set_motion(Axis.TWIST, Motion.FREE)
    j.parent_pose, j.child_pose = parent_pose, child_pose
    j.friction_coefficient = 0.0


@dataclass
class Segment:
    """One rigid segment. `anchor_in_parent` (c_jk) and `anchor_in_child` (c_kj) place the joint to the parent in
    the parent's and in this segment's body frame [m]; the root has no parent and no anchors. `joint` is "ball"
    (default), "hinge" (about `axis`) or "universal" (about `axis`, fixed in the parent, then `axis2`, fixed in
    this segment, perpendicular to it); the axes are given in the reference pose's (world) axes and become the
    joint's frames on both segments, `frame_in_parent` and `frame_in_child` (x, y, z, w), which can be given
    instead (segment_joints.py)."""

    name: str
    parent: str | None = None
    mass: float = 1.0  # [kg]
    # (3, 3) about the COM in body axes [kg m^2]; (3,) gives the diagonal
    inertia: np.ndarray = field(default_factory=lambda: np.full(3, 0.01))
    anchor_in_parent: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) c_jk [m]
    anchor_in_child: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) c_kj [m]
    joint: str = "ball"
    axis: InitVar[ArrayLike | None] = None
    axis2: InitVar[ArrayLike | None] = None
    frame_in_parent: np.ndarray | None = None  # (4,) the joint frame D in the parent's body axes
    frame_in_child: np.ndarray | None = None  # (4,) the joint frame C in this segment's body axes

    def __post_init__(self, axis, axis2):
        if not isinstance(self.name, str) or not self.name:
            raise ValidationError(f"segment {self.name!r}: name must be a non-empty string")
        owner = f"segment '{self.name}'"
        m = self.mass
        if (
            isinstance(m, bool)
            or not isinstance(m, (int, float, np.floating, np.integer))
            or not np.isfinite(m)
            or m <= 0
        ):
            raise ValidationError(f"{owner}: mass must be a finite number > 0 [kg], got {m!r}")
        self.mass = float(m)
        i = np.asarray(self.inertia)
        if i.shape == (3,) and i.dtype.kind in "biuf":
            i = np.diag(i)
        if (
            i.shape != (3, 3)
            or i.dtype.kind not in "biuf"
            or not np.all(np.isfinite(i))
            or not np.allclose(i, i.T, rtol=1e-9, atol=1e-12)
            or np.linalg.eigvalsh(i.astype(float))[0] <= 0
        ):
            raise ValidationError(
                f"{owner}: inertia must be 3 positive principal moments or a symmetric positive "
                f"definite (3, 3) tensor [kg m^2], got {self.inertia!r}"
            )
        self.inertia = i.astype(np.float64)
        self.anchor_in_parent = _vec3(owner, "anchor_in_parent", self.anchor_in_parent)
        self.anchor_in_child = _vec3(owner, "anchor_in_child", self.anchor_in_child)
        if self.joint not in JOINT_TYPES:
            raise ValidationError(f"{owner}: joint must be one of {sorted(JOINT_TYPES)}, got {self.joint!r}")
        if self.parent is None and self.joint != "ball":
            raise ValidationError(f"{owner}: the root segment has no joint (it floats); give the joint to a child")
        if self.frame_in_parent is None and self.frame_in_child is None:
            f = frame_from_axes(owner, self.joint, axis, axis2)
            self.frame_in_parent, self.frame_in_child = f.copy(), f.copy()
        else:
            if axis is not None or axis2 is not None:
                raise ValidationError(f"{owner}: give the joint's axes or its frames, not both")
            self.frame_in_parent = _unit_quat(owner, "frame_in_parent", self.frame_in_parent)
            self.frame_in_child = _unit_quat(owner, "frame_in_child", self.frame_in_child)

    @property
    def dof_count(self) -> int:
        """Coordinates of the joint to the parent: ball 3, hinge 1, universal 2."""
        return JOINT_TYPES[self.joint]


class SegmentModel:
    """Segments in parent-before-child order, the first one the root; `root_position` places the root's COM in the
    reference pose [m]."""

    def __init__(self, segments: list[Segment], root_position: ArrayLike = (0.0, 0.0, 1.0), name: str = "segments"):
        if not segments:
            raise ValidationError(f"segment model '{name}': needs at least one segment")
        self.name = name
        self.segments = [s if isinstance(s, Segment) else Segment(**s) for s in segments]
        self.root_position = _vec3(f"segment model '{name}'", "root_position", root_position)
        seen = {}
        for i, s in enumerate(self.segments):
            if s.name in seen:
                raise ValidationError(f"segment model '{name}': two segments are named '{s.name}'")
            if (i == 0) != (s.parent is None):
                raise ValidationError(
                    f"segment model '{name}': the first segment is the root (parent None) and only "
                    f"it; segment '{s.name}' has parent {s.parent!r}"
                )
            if i > 0 and s.parent not in seen:
                raise ValidationError(
                    f"segment '{s.name}': parent '{s.parent}' is not a segment listed before it (known: {list(seen)})"
                )
            seen[s.name] = i

    def __repr__(self):
        return f"SegmentModel('{self.name}', {len(self.segments)} segments)"

    @property
    def names(self) -> list[str]:
        """Segment names in segment order."""
        return [s.name for s in self.segments]

    @property
    def joint_names(self) -> list[str]:
        """One joint per non-root segment, named after it."""
        return [s.name for s in self.segments[1:]]

    @property
    def joint_types(self) -> list[str]:
        """The joint type of each non-root segment ("ball", "hinge" or "universal"), joint order."""
        return [s.joint for s in self.segments[1:]]

    def index(self, name: str) -> int:
        """Index of the segment named `name`; a ValidationError lists the names if none has it."""
        for i, s in enumerate(self.segments):
            if s.name == name:
                return i
        raise ValidationError(f"segment model '{self.name}': no segment '{name}' (segments: {self.names})")

    def parent_index(self) -> np.ndarray:
        """(S,) index of each segment's parent, -1 for the root."""
        return np.array([-1] + [self.index(s.parent) for s in self.segments[1:]])

    @property
    def total_mass(self) -> float:
        """Sum of the segment masses [kg]."""
        return float(sum(s.mass for s in self.segments))

    def copy(self) -> SegmentModel:
        """A deep copy: new segments with their own arrays."""
        segs = [
            Segment(
                s.name,
                s.parent,
                s.mass,
                s.inertia.copy(),
                s.anchor_in_parent.copy(),
                s.anchor_in_child.copy(),
                s.joint,
                frame_in_parent=s.frame_in_parent.copy(),
                frame_in_child=s.frame_in_child.copy(),
            )
            for s in self.segments
        ]
        return SegmentModel(segs, self.root_position.copy(), self.name)

    def anchors(self) -> tuple[np.ndarray, np.ndarray]:
        """(J, 3) anchors in the parents (c_jk) and in the children (c_kj), joint order [m]."""
        return (
            np.array([s.anchor_in_parent for s in self.segments[1:]]).reshape(-1, 3),
            np.array([s.anchor_in_child for s in self.segments[1:]]).reshape(-1, 3),
        )

    def set_anchors(self, in_parent: ArrayLike, in_child: ArrayLike) -> None:
        """Set every joint's anchors [m], (J, 3) in the parents (c_jk) and in the children (c_kj), joint order."""
        in_parent, in_child = np.asarray(in_parent, float), np.asarray(in_child, float)
        shape = (len(self.segments) - 1, 3)
        if (
            in_parent.shape != shape
            or in_child.shape != shape
            or not np.all(np.isfinite(in_parent))
            or not np.all(np.isfinite(in_child))
        ):
            raise ValidationError(f"segment model '{self.name}': anchors must be finite arrays of shape {shape}")
        for s, a, b in zip(self.segments[1:], in_parent, in_child):
            s.anchor_in_parent, s.anchor_in_child = a.copy(), b.copy()

    def reference_poses(self, rotations: ArrayLike | None = None) -> np.ndarray:
        """(S, 7) segment poses (px, py, pz, qx, qy, qz, qw) with every joint closed: the root's COM at
        root_position and each segment turned by `rotations` (S, 4) quaternions, identity by default."""
        q = (
            np.tile([0.0, 0.0, 0.0, 1.0], (len(self.segments), 1))
            if rotations is None
            else np.asarray(rotations, float).reshape(len(self.segments), 4)
        )
        x = np.zeros((len(self.segments), 3))
        x[0] = self.root_position
        for i, p in enumerate(self.parent_index()[1:], start=1):
            s = self.segments[i]
            x[i] = x[p] + quat_rotate(q[p], s.anchor_in_parent) - quat_rotate(q[i], s.anchor_in_child)
        return np.concatenate([x, q], axis=1)

    # -- reduced coordinates ------------------------------------------------------------------------------------------
    def to_articulation(self, name: str | None = None) -> tuple[Articulation, list[Link]]:
        """(articulation, links in segment order): a floating-base articulation with the same bodies (link frame =
        segment frame) and each segment's joint at its anchor: a spherical joint, a revolute one about the hinge
        axis, or for a universal joint two revolute ones through a massless link (the cross); no damping, no
        sleeping, no velocity caps, so that its inverse dynamics are those of the segment model."""
        art = Articulation(name or self.name)
        art.sleep_threshold = 0.0
        poses = self.reference_poses()
        links = []
        for i, s in enumerate(self.segments):
            parent = None if i == 0 else links[self.index(s.parent)]
            if s.joint == "universal":  # roll about D's z into the cross, pitch about C's y out of it
                cross = art.create_link(parent, None, f"{s.name}:cross")
                cross.set_mass_and_inertia_tensor(0.0, (0.0, 0.0, 0.0), np.zeros((3, 3)))
                d = Transform(tuple(s.anchor_in_parent), tuple(quat_mul(s.frame_in_parent, _Z_TO_X)))
                _revolute(cross, d, Transform((0.0, 0.0, 0.0), tuple(_Z_TO_X)))
                parent = cross
            link = art.create_link(parent, Transform.from_array(poses[0]) if i == 0 else None, s.name)
            link.set_mass_and_inertia_tensor(s.mass, (0.0, 0.0, 0.0), s.inertia)
            link.linear_damping = link.angular_damping = 0.0
            link.max_linear_velocity = link.max_angular_velocity = 1e6
            if i == 0:
                pass  # the root floats
            elif s.joint == "ball":
                j = link.inbound_joint
                j.set_joint_type(JointType.SPHERICAL)
                for axis in (Axis.TWIST, Axis.SWING1, Axis.SWING2):
                    j.set_motion(axis, Motion.FREE)
                j.parent_pose = Transform(tuple(s.anchor_in_parent))
                j.child_pose = Transform(tuple(s.anchor_in_child))
                j.friction_coefficient = 0.0
            elif s.joint == "hinge":  # PhysX turns a revolute joint about its frame's x: put x on D's and C's z
                d = Transform(tuple(s.anchor_in_parent), tuple(quat_mul(s.frame_in_parent, _Z_TO_X)))
                _revolute(link, d, Transform(tuple(s.anchor_in_child), tuple(quat_mul(s.frame_in_child, _Z_TO_X))))
            elif s.joint == "universal":
                c = Transform(tuple(s.anchor_in_child), tuple(quat_mul(s.frame_in_child, _Y_TO_X)))
                _revolute(link, Transform((0.0, 0.0, 0.0), tuple(_Y_TO_X)), c)
            links.append(link)
        return art, links

    @staticmethod
    def articulation_order(links: list[Link]) -> tuple[np.ndarray, list[np.ndarray]]:
        """For the links `to_articulation` returned: (S,) low-level index of each segment's link (get_link_poses
        order), and per joint the cache dof indices of its coordinates (segment_joints.py): a ball joint's three
        (twist, swing1, swing2 = x, y, z: the rotation vector of R_parent^T R_child), a hinge's angle, a universal
        joint's roll (the cross's dof) and pitch."""
        art = links[0].articulation
        topo = art._topology()
        start = {id(link): topo.dof_start[k] for k, link in enumerate(topo.links)}
        order = np.array([link.link_index for link in links])
        segment_links = {id(link) for link in links}
        dofs = []
        for link in links[1:]:
            own = list(range(start[id(link)], start[id(link)] + len(link.inbound_joint.dof_axes())))
            if id(link.parent) not in segment_links:  # a universal joint's cross: its roll comes first
                own = [start[id(link.parent)], *own]
            dofs.append(np.array(own, int))
        return order, dofs

    @classmethod
    def from_articulation(cls, art: Articulation, name: str | None = None, joints: str = "ball") -> SegmentModel:
        """A segment model from an articulation (loaded from URDF or MJCF, say): one segment per link with its mass
        and inertia, its frame at the link's COM with the world's axes in the articulation's description
        pose, and a joint at the joint frame's origin: with joints="ball" (default) every joint becomes a ball
        joint (prismatic and fixed ones too: fitting learns anchors); with joints="model" a revolute joint becomes
        a hinge about its axis and the others ball joints. Massless links are refused."""
        if joints not in ("ball", "model"):
            raise ValidationError(f"from_articulation: joints must be 'ball' or 'model', got {joints!r}")
        from ..description.body_joints import description_pose

        links = art.get_links()
        segs = []
        com = {}
        for link in links:
            if link.mass <= 0:
                raise ValidationError(
                    f"articulation '{art.name}': link '{link.name}' has no mass; a segment model "
                    "needs a mass on every link (set link.mass or merge the link)"
                )
            pose = description_pose(link)
            com[id(link)] = pose * link.cmass_local_pose  # the COM frame, principal axes
            r = quat_to_matrix(com[id(link)].q)
            segs.append((link, r @ np.diag(link.inertia) @ r.T))  # world axes = the segment's body axes
        out = []
        for link, moments in segs:
            j = link.inbound_joint
            if j is None:
                out.append(Segment(link.name, None, link.mass, moments))
                continue
            parent = link.parent
            anchor = description_pose(parent) * j.parent_pose
            hinge = joints == "model" and j.get_joint_type() in (JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED)
            axis = quat_to_matrix(anchor.q)[:, 0] if hinge else None  # PhysX turns a revolute joint about x
            out.append(
                Segment(
                    link.name,
                    parent.name,
                    link.mass,
                    moments,
                    anchor.p - com[id(parent)].p,
                    anchor.p - com[id(link)].p,
                    "hinge" if hinge else "ball",
                    axis,
                )
            )
        return cls(out, com[id(links[0])].p, name or art.name)
