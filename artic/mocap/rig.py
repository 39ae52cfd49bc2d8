"""The marker rig: a segment model in maximal coordinates with its markers, in a scene of E envs
(the ODE paper, section S2).

Segments are free `RigidDynamic` bodies (no shapes: they touch nothing) joined to their parents by `SphericalJoint`s
at their anchors, soft through ODE's ERP and CFM. Each marker is a kinematic `RigidDynamic` (an infinite-mass
point whose trajectory constraint forces cannot change) joined to its segment at its attachment point s by a
`SphericalJoint` whose three rows are phi = p - R s - x, with its own, softer, ERP and CFM. `damping` [1/s] is
the segments' linear and angular velocity damping (PhysX link damping): fitting relaxes with it, so that a segment
whose markers sit on its axis cannot spin freely about it; tracking uses none. A marker missing in an
env's frame (NaN) has its joint switched off in that env (`Scene.set_joint_enabled`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..description.actors import RigidDynamic
from ..description.body_joints import HingeJoint, SphericalJoint, UniversalJoint
from ..enums import SolverType
from ..errors import ValidationError
from ..math.np_spatial import Transform, quats_rotate
from ..sim.scene import Scene
from .markers import MarkerSet
from .segments import SegmentModel


class MarkerRig:
    """E envs of the segment model and its markers. Bodies in segment order; joints in the model's joint order
    (one per non-root segment, child = body A, parent = body B); marker joints in marker order (segment = body A,
    marker = body B)."""

    def __init__(
        self,
        model: SegmentModel,
        markers: MarkerSet,
        attachments: np.ndarray,
        num_envs: int,
        joint_erp_cfm: tuple[float, float] = (0.2, 1e-5),
        marker_erp_cfm: tuple[float, float] = (0.2, 1e-3),
        gravity: ArrayLike = (0.0, 0.0, 0.0),
        iterations: int = 16,
        solver_type: SolverType | int = SolverType.PGS,
        damping: float = 0.0,
    ):
        self.model, self.markers = model, markers
        self.num_envs = num_envs
        self.segment_of = np.array([model.index(s) for s in markers.segments])
        s = self.attachments = np.asarray(attachments, float)
        if s.shape != (markers.count, 3) or not np.all(np.isfinite(s)):
            raise ValidationError(
                f"marker rig: attachments must be finite, of shape ({markers.count}, 3), got {s.shape}"
            )
        self.scene = scene = Scene(num_envs, gravity=gravity, solver_type=solver_type)
        with scene.adding():  # one grouping of the 52 bodies and 51 joints, not one per joint
            poses = model.reference_poses()
            self.bodies = []
            for seg, pose in zip(model.segments, poses):
                b = RigidDynamic(Transform.from_array(pose), seg.name)
                b.link.set_mass_and_inertia_tensor(seg.mass, (0.0, 0.0, 0.0), seg.inertia)
                _free_body(b, iterations, damping)
                scene.add_actor(b)
                self.bodies.append(b)
            self.joints = []
            for i, p in enumerate(model.parent_index()[1:], start=1):
                seg = model.segments[i]
                c, d = _joint_frames(seg)
                j = _JOINTS[seg.joint].from_body_frames(self.bodies[i], c, self.bodies[p], d, seg.name)
                _soft(j, joint_erp_cfm)
                self.joints.append(scene.add_joint(j))
            self.marker_bodies, self.marker_joints = [], []
            for k, name in enumerate(markers.names):
                seg_pose = Transform.from_array(poses[self.segment_of[k]])
                m = RigidDynamic(Transform(tuple(seg_pose.transform_point(s[k]))), f"marker:{name}")
                m.kinematic = True
                m.link.mass, m.link.inertia = 1.0, (1e-3, 1e-3, 1e-3)
                _free_body(m, iterations, 0.0)
                scene.add_actor(m)
                j = SphericalJoint.from_body_frames(
                    self.bodies[self.segment_of[k]], Transform(tuple(s[k])), m, Transform(), f"marker:{name}"
                )
                _soft(j, marker_erp_cfm)
                self.marker_bodies.append(m)
                self.marker_joints.append(scene.add_joint(j))
        self._present = np.ones((num_envs, markers.count), bool)
        # where each marker was last seen, per env: a missing marker's (disabled) body waits there, so that it does
        # not jump when it reappears
        self._last = np.broadcast_to(marker_world(poses[None], self.segment_of, s), (num_envs, markers.count, 3)).copy()

    # -- parameters ---------------------------------------------------------------------------------------------------
    def set_parameters(self, model: SegmentModel, attachments: np.ndarray) -> None:
        """Move the joint anchors and marker attachments (every env) to a model's and `attachments`."""
        for j, seg in zip(self.joints, model.segments[1:]):
            j.set_frames(*_joint_frames(seg))
        self.attachments = np.asarray(attachments, float)
        for j, s in zip(self.marker_joints, attachments):
            j.set_frames(Transform(tuple(s)))

    # -- state --------------------------------------------------------------------------------------------------------
    def poses(self) -> np.ndarray:
        """(E, S, 7) segment poses (px, py, pz, qx, qy, qz, qw)."""
        return np.stack([self.scene.get_actor_pose(b) for b in self.bodies], axis=1).astype(np.float64)

    def set_state(self, poses: np.ndarray, velocities: np.ndarray | None = None) -> None:
        """Segment poses (E, S, 7) and velocities (E, S, 6) (zero when None)."""
        for i, b in enumerate(self.bodies):
            self.scene.set_actor_pose(b, poses[:, i])
            self.scene.set_actor_velocity(b, np.zeros((self.num_envs, 6)) if velocities is None else velocities[:, i])

    def place_markers(self, positions: np.ndarray, move: bool = False) -> None:
        """Put the markers at `positions` (E, n, 3) [m]; NaN rows switch that marker off in that env. move=False
        teleports them (fitting); move=True sets kinematic targets, reached over the next step at the velocity
        that gets there (tracking)."""
        p = np.asarray(positions, float)
        present = np.all(np.isfinite(p), axis=2)
        q = np.zeros((self.num_envs, 4))
        q[:, 3] = 1.0
        back = present & ~self._present  # markers that reappear after a gap
        attached = marker_world(self.poses(), self.segment_of, self.attachments) if move and back.any() else None
        targets = np.concatenate(
            [np.where(present[..., None], p, self._last), np.broadcast_to(q[:, None], p.shape[:2] + (4,))], axis=2
        )
        for k, (m, j) in enumerate(zip(self.marker_bodies, self.marker_joints)):
            if not np.array_equal(present[:, k], self._present[:, k]):
                self.scene.set_joint_enabled(j, present[:, k])
            if not present[:, k].any():
                continue
            pose = targets[:, k]
            if move:
                if back[:, k].any():
                    # a marker seen again starts the step where its attachment point is now, not where it was last
                    # seen: from there its target is one frame's motion away, and the joint (disabled through the
                    # gap) does not drag the segment across the whole gap in one step
                    start = np.where(back[:, k, None], attached[:, k], self._last[:, k])
                    self.scene.set_actor_pose(m, np.concatenate([start, q], axis=1))
            else:
                self.scene.set_actor_pose(m, pose)
                self.scene.set_actor_velocity(m, np.zeros((self.num_envs, 6)))
        if move:  # one write for every marker (a marker missing everywhere keeps its target: its joint is off)
            self.scene.set_kinematic_targets(self.marker_bodies, targets)
        self._present = present
        self._last = np.where(present[..., None], p, self._last)

    def step(self, dt: float, count: int = 1) -> None:
        """Advance every env by `count` scene steps of dt seconds."""
        for _ in range(count):
            self.scene.step(dt)

    # -- outputs ------------------------------------------------------------------------------------------------------
    def marker_forces(self) -> tuple[np.ndarray, np.ndarray]:
        """(E, n, 3) force and (E, n, 3) torque about its segment's COM that each marker applied to its segment over
        the last step, world [N, N m]."""
        w = np.stack([self.scene.get_joint_forces(j).wrench_a for j in self.marker_joints], axis=1)
        return w[..., :3].astype(np.float64), w[..., 3:].astype(np.float64)

    def joint_forces(self) -> np.ndarray:
        """(E, J, 3) force each ball joint applied to its child segment, world [N]."""
        return np.stack([self.scene.get_joint_forces(j).wrench_a[:, :3] for j in self.joints], axis=1)


# the body joint of each segment joint type: frames C (on the child, body A) and D (on the parent, body B) with the
# hinge about their z, the universal joint's roll about D's z and pitch about C's y (segment_joints.py)
_JOINTS = {"ball": SphericalJoint, "hinge": HingeJoint, "universal": UniversalJoint}


def _joint_frames(seg) -> tuple[Transform, Transform]:
    """(C in the child, D in the parent) of a segment's joint: anchors and joint-frame orientations."""
    return (
        Transform(tuple(seg.anchor_in_child), tuple(seg.frame_in_child)),
        Transform(tuple(seg.anchor_in_parent), tuple(seg.frame_in_parent)),
    )


def _soft(joint, erp_cfm):
    """ODE's ERP and CFM on the joint's three bilateral (position) rows."""
    erp, cfm = erp_cfm
    joint.set_erp_cfm([erp] * joint.bilateral_count, [cfm] * joint.bilateral_count)


def _free_body(b: RigidDynamic, iterations: int, damping: float):
    b.link.linear_damping = b.link.angular_damping = damping
    b.link.max_linear_velocity = b.link.max_angular_velocity = 1e6
    b.articulation.sleep_threshold = 0.0
    b.set_solver_iteration_counts(iterations, 1)


def marker_world(poses: np.ndarray, segment_of: np.ndarray, attachments: np.ndarray) -> np.ndarray:
    """(E, n, 3) world positions R s + x of the attachment points, for segment poses (E, S, 7)."""
    seg = poses[:, segment_of]
    return quats_rotate(seg[..., 3:], np.broadcast_to(attachments, seg[..., :3].shape)) + seg[..., :3]
