"""The panda hand grasps a box: its two fingers are one hard mimic joint (panda.urdf's <mimic>), only finger 1 is
driven, the box hangs in the fingers by friction alone while the arm lifts it and holds it still."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import ArticulationFlag, Axis, CacheFlag, Drive, DriveType, Material, SolverType, Transform
from artic.math.np_spatial import quat_rotate
from tests.support.models import robot_path

G = 9.81
DT = 1.0 / 120.0
Q0 = [0.0, 0.2, 0.0, -2.2, 0.0, 2.4, 0.785]  # hand pointing down, pads 0.19 m above the ground
BOX_MASS = 0.1  # [kg]
BOX_HALF = (0.02, 0.025, 0.02)  # 5 cm between the pads [m]


def _grasp_scene(solver):
    art = artic.load_urdf(robot_path("panda"))
    art.set_articulation_flag(ArticulationFlag.DISABLE_SELF_COLLISION)
    art.set_solver_iteration_counts(8, 1)
    art.sleep_threshold = 0.0
    for name, q in zip(art.dof_names[:7], Q0, strict=True):
        joint = art.get_joint(name)
        joint.set_drive_params(Axis.TWIST, Drive(4000.0, 400.0, 1e3, DriveType.FORCE))
        joint.set_drive_target(Axis.TWIST, q)
    finger = art.get_joint("panda_finger_joint1")
    finger.set_drive_params(Axis.X, Drive(200.0, 2.0, 100.0, DriveType.FORCE))
    finger.set_drive_target(Axis.X, 0.04)
    scene = artic.Scene(1, solver_type=solver)
    table = artic.RigidStatic(Transform((0.55, 0.0, 0.084)), "table")
    table.attach_shape(artic.Box((0.1, 0.1, 0.084)))
    scene.add_actor(table)
    box = artic.RigidDynamic(Transform((0.552, 0.0, 0.188)), "box")
    box.attach_shape(artic.Box(BOX_HALF, material=Material(1.0, 1.0, 0.0)))
    box.update_mass_and_inertia(BOX_MASS / (8.0 * np.prod(BOX_HALF)))
    box.articulation.sleep_threshold = 0.0
    scene.add_articulation(art)
    scene.add_actor(box)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    cache.joint_position[0, :7] = Q0
    cache.joint_position[0, 7:] = 0.04
    art.apply_cache(cache, CacheFlag.POSITION)
    return art, scene, box


def _box_in_hand(scene, art, box):
    """The box's position in the hand's frame [m]."""
    hand = scene.get_link_poses(art)[0, [lk.name for lk in art.get_links()].index("panda_hand")]
    q_inv = hand[3:] * np.array([-1.0, -1.0, -1.0, 1.0])
    return quat_rotate(q_inv, scene.get_actor_pose(box)[0, :3] - hand[:3])


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_panda_gripper_lifts_a_box_and_holds_it(solver):
    """Close finger 1's drive target at 0.1 m/s (finger 2 follows through the mimic joint), lift the hand 13 cm by
    turning the shoulder, then hold for 2 s: the box leaves the table, moves with the hand (within 0.1 mm of its
    place between the pads over the hold), and its contact forces balance its weight -- the fingers' squeeze
    forces cancel and their friction carries m g (identity of static equilibrium)."""
    art, scene, box = _grasp_scene(solver)
    finger = art.get_joint("panda_finger_joint1")
    shoulder = art.get_joint("panda_joint2")
    cache = art.create_cache()
    held = []
    for k in range(int(round(3.8 / DT))):
        t = k * DT
        if 0.25 <= t < 0.7:
            finger.set_drive_target(Axis.X, max(0.0, 0.04 - 0.1 * (t - 0.25 + DT)))
        if 0.8 <= t < 1.8:
            shoulder.set_drive_target(Axis.TWIST, 0.2 - 0.25 * (t - 0.8 + DT))
        scene.step(DT)
        if k + 1 in (int(round(1.8 / DT)), int(round(3.8 / DT))):
            held.append(_box_in_hand(scene, art, box))
    assert scene.get_actor_pose(box)[0, 2] > 0.188 + 0.1  # lifted more than 10 cm
    assert np.linalg.norm(held[1] - held[0]) < 1e-4  # no slip during the 2 s hold (measured ~2e-6 m)
    report = scene.get_contacts(box)
    n = report.count[0]
    panda = scene.articulations.index(art)
    touching = report.separation[0, :n] < 1e-3
    assert np.all(report.articulation_b[0, :n][touching] == panda)  # only the fingers touch it
    np.testing.assert_allclose(report.total_force()[0], [0.0, 0.0, BOX_MASS * G], atol=0.02 * BOX_MASS * G)
    names = [lk.name for lk in art.get_links()]
    squeeze = [
        report.force[0, :n][report.link_b[0, :n] == names.index(f)].sum(axis=0)[1]
        for f in ("panda_leftfinger", "panda_rightfinger")
    ]
    assert squeeze[0] > 0.5 and squeeze[1] < -0.5  # each pad presses the box towards the other
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    q1, q2 = cache.joint_position[0, 7:]
    assert abs(q1 - q2) < 1e-3  # the mimic joint holds while the box resists
