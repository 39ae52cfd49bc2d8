"""A segment model: rigid segments joined by ball joints at anchor points, the body model of marker fitting
(the ODE paper, section S2).

Each segment's body frame has its origin at the segment's COM and, in the reference pose, the world's axes. Segment
k hangs from its parent j by a ball joint whose anchor (centre of rotation) is c_jk in j's frame and c_kj in k's
frame; the joint holds R_j c_jk + x_j = R_k c_kj + x_k (eq. 16). The anchors set the segment dimensions (bone
lengths), which is what fitting adjusts.

The same model is simulated two ways: in maximal coordinates (free `RigidDynamic` bodies joined by compliant
`SphericalJoint`s, rig.py), where anchors can be pulled apart and fitted, and as a floating-base articulation
(`to_articulation`), whose generalized coordinates give joint angles, Jacobians and inverse dynamics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..description.articulation import Articulation, Link
from ..enums import Axis, JointType, Motion
from ..errors import ValidationError
from ..math.np_spatial import Transform, quat_rotate, quat_to_matrix


def _vec3(owner: str, what: str, value) -> np.ndarray:
    a = np.asarray(value)
    if a.shape != (3,) or a.dtype.kind not in "biuf" or not np.all(np.isfinite(a)):
        raise ValidationError(f"{owner}: {what} must be 3 finite real numbers [m or kg m^2], got {value!r}")
    return a.astype(np.float64)


@dataclass
class Segment:
    """One rigid segment. `anchor_in_parent` (c_jk) and `anchor_in_child` (c_kj) place the ball joint to the parent
    in the parent's and in this segment's body frame [m]; the root has no parent and no anchors."""

    name: str
    parent: str | None = None
    mass: float = 1.0  # [kg]
    # (3, 3) about the COM in body axes [kg m^2]; (3,) gives the diagonal
    inertia: np.ndarray = field(default_factory=lambda: np.full(3, 0.01))
    anchor_in_parent: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) c_jk [m]
    anchor_in_child: np.ndarray = field(default_factory=lambda: np.zeros(3))  # (3,) c_kj [m]

    def __post_init__(self):
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
        """One ball joint per non-root segment, named after it."""
        return [s.name for s in self.segments[1:]]

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
            Segment(s.name, s.parent, s.mass, s.inertia.copy(), s.anchor_in_parent.copy(), s.anchor_in_child.copy())
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
        segment frame) and a spherical joint at each anchor; no damping, no sleeping, no velocity caps, so that its
        inverse dynamics are those of the segment model."""
        art = Articulation(name or self.name)
        art.sleep_threshold = 0.0
        poses = self.reference_poses()
        links = []
        for i, s in enumerate(self.segments):
            parent = None if i == 0 else links[self.index(s.parent)]
            link = art.create_link(parent, Transform.from_array(poses[0]) if i == 0 else None, s.name)
            link.set_mass_and_inertia_tensor(s.mass, (0.0, 0.0, 0.0), s.inertia)
            link.linear_damping = link.angular_damping = 0.0
            link.max_linear_velocity = link.max_angular_velocity = 1e6
            if parent is not None:
                j = link.inbound_joint
                j.set_joint_type(JointType.SPHERICAL)
                for axis in (Axis.TWIST, Axis.SWING1, Axis.SWING2):
                    j.set_motion(axis, Motion.FREE)
                j.parent_pose = Transform(tuple(s.anchor_in_parent))
                j.child_pose = Transform(tuple(s.anchor_in_child))
                j.friction_coefficient = 0.0
            links.append(link)
        return art, links

    @staticmethod
    def articulation_order(links: list[Link]) -> tuple[np.ndarray, np.ndarray]:
        """For the links `to_articulation` returned: (S,) low-level index of each segment's link (get_link_poses
        order), and (J, 3) the cache dof indices of each joint's three axes (twist, swing1, swing2 = x, y, z of the
        anchor frame: the rotation vector of R_parent^T R_child)."""
        order = np.array([link.link_index for link in links])
        return order, np.array([[3 * (i - 1) + k for k in range(3)] for i in order[1:]]).reshape(-1, 3)

    @classmethod
    def from_articulation(cls, art: Articulation, name: str | None = None) -> SegmentModel:
        """A segment model from an articulation (loaded from URDF or MJCF, say): one segment per link with its mass
        and inertia, its frame at the link's COM with the world's axes in the articulation's description
        pose; every joint becomes a ball joint at the joint frame's origin (revolute, prismatic and fixed joints
        included: fitting learns anchors, not joint types). Massless links are refused."""
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
            out.append(
                Segment(
                    link.name, parent.name, link.mass, moments, anchor.p - com[id(parent)].p, anchor.p - com[id(link)].p
                )
            )
        return cls(out, com[id(links[0])].p, name or art.name)
