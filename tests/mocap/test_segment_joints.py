"""Hinge and universal segment joints (artic/mocap/segment_joints.py): their frames and coordinates against closed
forms, tracking and inverse dynamics on the synthetic humanoid with hinged elbows and knees and Cardan ankles,
axis fitting, re-basing, and the MJCF file MuJoCo loads."""

from __future__ import annotations

import numpy as np
import pytest

from artic import ValidationError
from artic.math.np_spatial import quat_from_axis_angle, quat_mul, quat_to_matrix
from artic.mocap import (
    ArticulationEvaluator,
    Segment,
    fit_markers,
    load_segment_model,
    neutral_at,
    rebase,
    relative_rotations,
    save_segment_model,
    track_markers,
)
from artic.mocap.segment_joints import axes_in_child, coordinates, frame_from_axes, joint_rotation
from artic.mocap.synthetic import humanoid, humanoid_markers, record_markers, simulate_motion

SKIP = 10


@pytest.fixture(scope="module")
def anatomical():
    model = humanoid(anatomical=True)
    names, segments, att = humanoid_markers(model)
    motion = simulate_motion(model, seconds=1.0, rate=100.0, amplitude=1.0)
    segment_of = np.array([model.index(s) for s in segments])
    return model, names, segments, att, motion, segment_of


def test_frames_and_coordinates_are_the_closed_forms():
    """A hinge's frame puts z on its axis; R_DC = Rz(theta) reads theta; a universal joint's frame has z on its
    first axis and y on its second, and Rz(roll) Ry(pitch) reads (roll, pitch); the torque axes in the child are
    the hinge axis, and the universal joint's roll axis (fixed in the parent) turned into the child's axes."""
    f = frame_from_axes("s", "hinge", (1.0, 1.0, 0.0))
    np.testing.assert_allclose(quat_to_matrix(f)[:, 2], np.array([1.0, 1.0, 0.0]) / np.sqrt(2), atol=1e-12)
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    rz = quat_from_axis_angle((0, 0, 1), 0.7)
    assert coordinates("hinge", rz[None], ident[None], rz[None])[0, 0] == pytest.approx(0.7)
    u = frame_from_axes("s", "universal", (0.0, 1.0, 0.0), (1.0, 0.0, 0.0))
    np.testing.assert_allclose(quat_to_matrix(u)[:, 2], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(u)[:, 1], [1, 0, 0], atol=1e-12)
    r_dc = quat_mul(quat_from_axis_angle((0, 0, 1), 0.4), quat_from_axis_angle((0, 1, 0), -0.3))
    child = quat_mul(quat_mul(u, r_dc), [-u[0], -u[1], -u[2], u[3]])  # parent at identity: q_c = D R_DC C^-1
    rot = joint_rotation(u, u, ident[None], child[None])
    np.testing.assert_allclose(coordinates("universal", rot, ident[None], child[None])[0], [0.4, -0.3], atol=1e-12)
    axes = axes_in_child("universal", u, u, ident[None], child[None])[0]
    np.testing.assert_allclose(axes[0], quat_to_matrix(child).T @ [0, 1, 0], atol=1e-12)  # roll: D's z = world y
    np.testing.assert_allclose(axes[1], [1, 0, 0], atol=1e-12)  # pitch: C's y in the child's axes
    assert abs(axes[0] @ axes[1]) < 1e-12  # the Cardan cross


def test_bad_joints_are_refused():
    with pytest.raises(ValidationError, match="joint must be one of"):
        Segment("a", "r", joint="knee", axis=(0, 1, 0))
    with pytest.raises(ValidationError, match="needs its axis"):
        Segment("a", "r", joint="hinge")
    with pytest.raises(ValidationError, match="perpendicular"):
        Segment("a", "r", joint="universal", axis=(0, 1, 0), axis2=(0, 1, 1))
    with pytest.raises(ValidationError, match="root segment has no joint"):
        Segment("a", None, joint="hinge", axis=(0, 1, 0))
    with pytest.raises(ValidationError, match="ball joint has no axis"):
        Segment("a", "r", axis=(0, 1, 0))


def test_tracking_and_inverse_dynamics_with_hinges(anatomical):
    """The humanoid with hinged elbows and knees and Cardan ankles, 1 s of motion driven through every joint
    coordinate: tracking its clean markers recovers the relative rotations to 0.3 deg RMS (0.17 measured) and the
    torques of inverse dynamics to 2 % of their peak (RMS); a hinge's torque lies along its axis, and its relative
    rotation has no part off it."""
    model, names, segments, att, motion, segment_of = anatomical
    clean = record_markers(motion, segment_of, att, names, segments)
    result = track_markers(model, clean, att, cutoff=None)
    truth = relative_rotations(model, motion.poses)
    assert np.degrees(np.sqrt(np.mean((result.joint_angles - truth)[SKIP:-SKIP] ** 2))) < 0.3
    ev = ArticulationEvaluator(model, clean.frames - 1)
    ev.set_poses(motion.poses[:-1])
    _, id_torques = ev.inverse_dynamics(motion.root_velocity[:-1], motion.joint_velocity[:-1], motion.acceleration)
    rms = np.sqrt(np.mean((result.joint_torques[:-1] - id_torques)[SKIP:-SKIP] ** 2))
    assert rms < 0.02 * np.abs(id_torques).max()  # measured 0.26 N m against a 33 N m peak
    elbow = model.joint_names.index("farm_l")
    assert np.abs(np.cross(id_torques[:, elbow], [0.0, 1.0, 0.0])).max() < 1e-6 * np.abs(id_torques).max()
    assert np.abs(truth[:, elbow, [0, 2]]).max() < 1e-5 and np.ptp(truth[:, elbow, 1]) > 0.5


def _tilted(model, degrees: float, seed: int = 3):
    out, rng = model.copy(), np.random.default_rng(seed)
    for seg in out.segments[1:]:
        if seg.joint != "ball":
            tilt = quat_from_axis_angle(rng.normal(size=3), np.radians(degrees))
            seg.frame_in_parent = quat_mul(tilt, seg.frame_in_parent)
            seg.frame_in_child = quat_mul(tilt, seg.frame_in_child)
    return out


def _axis_errors_deg(model, truth, poses_fit, poses_true) -> list[float]:
    """Per hinge or universal joint, the angle between the fitted and the true parent-side axis, both in the world
    through their own model's parent poses (so the fit's per-segment gauge drops out), averaged over frames."""
    out = []
    for i, seg in enumerate(model.segments):
        if seg.joint == "ball":
            continue
        p = model.index(seg.parent)
        fitted = np.einsum("fij,j->fi", _mats(poses_fit[:, p, 3:]), quat_to_matrix(seg.frame_in_parent)[:, 2])
        true = np.einsum(
            "fij,j->fi", _mats(poses_true[:, p, 3:]), quat_to_matrix(truth.segments[i].frame_in_parent)[:, 2]
        )
        out.append(float(np.degrees(np.arccos(np.clip(np.abs((fitted * true).sum(1)), 0.0, 1.0))).mean()))
    return out


def _mats(q):
    return np.array([quat_to_matrix(x) for x in q])


def test_fit_finds_the_axes(anatomical):
    """Every hinge and universal axis tilted 15 deg and every anchor moved 2.5 cm, markers from the segments' COMs,
    2 mm noise and 3 mm soft-tissue wobble: the fit brings the axes within 4 deg (measured 0.7-3.4: the noise over
    the joints' range of motion sets that floor)."""
    model, names, segments, att, motion, segment_of = anatomical
    markers = record_markers(motion, segment_of, att, names, segments, noise=0.002, wobble=0.003)
    start = _tilted(model, 15.0)
    ap, ac = start.anchors()
    moves = np.random.default_rng(4).normal(size=(2,) + ap.shape)
    moves *= 0.025 / np.linalg.norm(moves, axis=2, keepdims=True)
    start.set_anchors(ap + moves[0], ac + moves[1])
    fit = fit_markers(start, markers, np.zeros_like(att), epochs=30, num_envs=8)
    errors = _axis_errors_deg(fit.model, model, fit.poses, motion.poses[fit.frames])
    print(f"\naxis errors after the fit [deg]: {np.round(errors, 2)}")
    assert max(errors) < 4.0


def test_rebase_turns_the_joint_frames_and_the_file_keeps_them(anatomical, tmp_path):
    """A gauge put on the anatomical model (every segment frame turned) and taken off again by a static trial
    (neutral_at) gives the truth's angles; the gauged model saved as MJCF loads back with the same joint frames,
    and MuJoCo loads it with its hinges (4 hinges and 2 x 2 for the ankles, 6 ball joints)."""
    model, names, segments, att, motion, segment_of = anatomical
    rng = np.random.default_rng(5)
    q = rng.normal(size=(len(model.segments), 4))
    gauged, att_g = rebase(model, att, segments, q / np.linalg.norm(q, axis=1, keepdims=True))
    clean = record_markers(motion, segment_of, att, names, segments)
    from dataclasses import replace

    standing = replace(motion, poses=np.repeat(motion.poses[:1], 20, axis=0))
    static = record_markers(standing, segment_of, att, names, segments)
    based, att_b = neutral_at(gauged, att_g, static)
    angles = track_markers(based, clean, att_b).joint_angles
    truth = relative_rotations(model, motion.poses)
    assert np.degrees(np.sqrt(np.mean((angles - truth)[SKIP:-SKIP] ** 2))) < 0.5
    save_segment_model(tmp_path / "gauged.xml", gauged, names, segments, att_g)
    back, _, _, att_back = load_segment_model(tmp_path / "gauged.xml")
    for a, b in zip(gauged.segments, back.segments):
        assert a.joint == b.joint
        np.testing.assert_allclose(b.frame_in_child, a.frame_in_child, atol=1e-8)
        np.testing.assert_allclose(b.frame_in_parent, a.frame_in_parent, atol=1e-8)
    np.testing.assert_allclose(att_back, att_g, atol=1e-8)
    mujoco = pytest.importorskip("mujoco")
    mm = mujoco.MjModel.from_xml_path(str(tmp_path / "gauged.xml"))
    kinds = list(mm.jnt_type)
    assert kinds.count(mujoco.mjtJoint.mjJNT_HINGE) == 8 and kinds.count(mujoco.mjtJoint.mjJNT_BALL) == 6


def test_from_articulation_keeps_revolute_joints_as_hinges():
    """The shipped arm's revolute joints become hinges about their world axes (joints="model"), the other joints
    ball joints: the segment model's articulation has as many dofs, and each hinge's axis is the revolute joint's
    (its frame's x, in the world at the description pose)."""
    import artic
    from artic.assets import model_path
    from artic.description.body_joints import description_pose
    from artic.mocap import SegmentModel

    arm = artic.load_urdf(model_path("arm6"), fix_base=False)
    seg = SegmentModel.from_articulation(arm, joints="model")
    joints = {link.name: link.inbound_joint for link in arm.get_links()[1:]}
    revolute = [n for n, j in joints.items() if j.get_joint_type() == artic.JointType.REVOLUTE]
    assert [s.name for s in seg.segments[1:] if s.joint == "hinge"] == revolute and len(revolute) >= 6
    art, _ = seg.to_articulation()
    assert art.dof_count == len(revolute) + 3 * (len(seg.segments) - 1 - len(revolute))
    for s in seg.segments[1:]:
        if s.joint == "hinge":
            j = joints[s.name]
            world = quat_to_matrix((description_pose(j.parent_link) * j.parent_pose).q)[:, 0]
            np.testing.assert_allclose(quat_to_matrix(s.frame_in_parent)[:, 2], world, atol=1e-9)
    with pytest.raises(ValidationError, match="'ball' or 'model'"):
        SegmentModel.from_articulation(arm, joints="hinge")
