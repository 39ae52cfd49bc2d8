"""Kinematic rigid bodies (PxRigidBodyFlag::eKINEMATIC): pose targets, infinite mass against dynamic bodies, no
contact with statics."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import ArticError, Box, Material, SolverType, Transform
from artic.math.np_spatial import quat_exp
from tests.support.bodies import body, run, scene_with_ground

SOLVERS = [SolverType.PGS, SolverType.TGS]
DT = 1.0 / 60.0


def _kinematic_box(pose, half=(0.05, 0.3, 0.1), name="paddle"):
    b = artic.RigidDynamic(Transform(pose), name)
    b.attach_shape(Box(half, material=Material(0.5, 0.5, 0.0)))
    b.update_mass_and_inertia(1000.0)
    b.kinematic = True
    return b


@pytest.mark.parametrize("solver", SOLVERS)
def test_kinematic_body_follows_its_targets_and_stops_without_one(solver):
    """Gravity on, a target that moves 1 cm and turns 0.02 rad about a tilted axis per step: after every step the
    pose is the target and the velocity the one that reaches it in dt (closed form); with no new target the body
    stays where it is with zero velocity."""
    scene = artic.Scene(1, solver_type=solver)
    k = _kinematic_box((0.0, 0.0, 1.0))
    scene.add_actor(k)
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    for step in range(1, 31):
        q = quat_exp(axis * 0.02 * step)
        target = np.concatenate([[0.01 * step, 0.0, 1.0], q])
        scene.set_kinematic_target(k, target)
        scene.step(DT)
        pose = scene.get_actor_pose(k)[0]
        np.testing.assert_allclose(pose[:3], target[:3], atol=1e-5)
        assert abs(abs(np.dot(pose[3:], q)) - 1.0) < 1e-6
        v = scene.get_actor_velocity(k)[0]
        np.testing.assert_allclose(v[:3], [0.01 / DT, 0.0, 0.0], atol=1e-3)  # the box's COM is its origin
        np.testing.assert_allclose(v[3:], axis * 0.02 / DT, atol=1e-3)
    run(scene, [k], 30, DT)
    np.testing.assert_allclose(scene.get_actor_pose(k)[0, :3], [0.3, 0.0, 1.0], atol=1e-5)
    assert np.abs(scene.get_actor_velocity(k)).max() == 0.0


@pytest.mark.parametrize("solver", SOLVERS)
def test_kinematic_paddle_pushes_a_box_at_its_own_speed(solver):
    """A kinematic paddle moving at 0.5 m/s meets a resting 8 kg box: from then on the box moves at the paddle's
    speed with its face on the paddle's (infinite mass: the paddle's path does not change), and the paddle, 5 cm
    above the ground, never touches it (kinematic bodies skip static shapes)."""
    scene = scene_with_ground(solver, Material(0.5, 0.5, 0.0))
    paddle = _kinematic_box((-0.5, 0.0, 0.15))
    scene.add_actor(paddle)
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1), material=Material(0.5, 0.5, 0.0))
    scene.add_actor(b)
    pushes = []
    for step in range(1, 181):
        scene.set_kinematic_target(paddle, [-0.5 + 0.5 * DT * step, 0.0, 0.15, 0.0, 0.0, 0.0, 1.0])
        scene.step(DT)
        if step > 160:
            pushes.append(-scene.get_contacts(paddle).total_force()[0, 0])
    x_paddle = scene.get_actor_pose(paddle)[0, 0]
    assert x_paddle == pytest.approx(-0.5 + 0.5 * DT * 180, abs=1e-5)
    assert scene.get_actor_pose(b)[0, 0] == pytest.approx(x_paddle + 0.05 + 0.1, abs=1e-4)
    np.testing.assert_allclose(scene.get_actor_velocity(b)[0, :3], [0.5, 0.0, 0.0], atol=1e-4)
    report = scene.get_contacts(paddle)
    n = report.count[0]
    assert n > 0 and np.all(report.articulation_b[0, :n] == scene.articulations.index(b.articulation))
    # identity: the paddle pushes with the box's sliding friction, mu m g, over the last 20 steps (PGS measured 0.11 %
    # above it, TGS 0.03 % below: the iterative friction's float32 residue, which a change of M^-1's rounding moved
    # from 0.09 % to 0.11 %)
    assert np.mean(pushes) == pytest.approx(0.5 * b.mass * 9.81, rel=2e-3)


@pytest.mark.parametrize("solver", SOLVERS)
def test_box_rides_a_moving_kinematic_platform(solver):
    """A box resting on a kinematic platform that glides at 0.3 m/s is carried by static friction: it ends at the
    platform's speed and, once carried, keeps its place on the platform to 0.1 mm (anchored friction)."""
    scene = artic.Scene(1, solver_type=solver)
    platform = _kinematic_box((0.0, 0.0, 0.0), half=(1.0, 1.0, 0.05), name="platform")
    scene.add_actor(platform)
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.15), material=Material(0.5, 0.5, 0.0))
    scene.add_actor(b)
    offsets = []
    for step in range(1, 121):
        x = 0.3 * DT * max(step - 10, 0)  # at rest for 10 steps, then at 0.3 m/s
        scene.set_kinematic_target(platform, [x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
        scene.step(DT)
        if step in (30, 120):
            offsets.append(scene.get_actor_pose(b)[0, :3] - scene.get_actor_pose(platform)[0, :3])
    np.testing.assert_allclose(scene.get_actor_velocity(b)[0, :3], [0.3, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(offsets[0], offsets[1], atol=1e-4)


def test_bad_kinematic_use_is_refused_clearly():
    scene = artic.Scene(1)
    free = body(Box((0.1, 0.1, 0.1)))
    scene.add_actor(free)
    with pytest.raises(ArticError, match="kinematic = True"):
        scene.set_kinematic_target(free, [0, 0, 0, 0, 0, 0, 1])
    with pytest.raises(ArticError, match="before add_actor"):
        free.kinematic = True
    with pytest.raises(ArticError, match="True or False"):
        artic.RigidDynamic().kinematic = "yes"
    k = _kinematic_box((0.0, 0.0, 1.0))
    scene.add_actor(k)
    with pytest.raises(ArticError, match="finite"):
        scene.set_kinematic_target(k, [0, 0, float("nan"), 0, 0, 0, 1])
    with pytest.raises(ArticError, match="shape"):
        scene.set_kinematic_target(k, [0, 0, 0])
    with pytest.raises(ArticError, match="quaternion"):
        scene.set_kinematic_target(k, [0, 0, 0, 0, 0, 0, 0])


def test_a_pending_target_survives_regrouping():
    """Adding a body regroups the scene's blocks; a target set before it still moves the kinematic body."""
    scene = artic.Scene(1)
    k = _kinematic_box((0.0, 0.0, 1.0))
    scene.add_actor(k)
    scene.set_kinematic_target(k, [0.2, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    scene.add_actor(body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.5)))  # can touch the paddle: same block
    scene.step(DT)
    np.testing.assert_allclose(scene.get_actor_pose(k)[0, :3], [0.2, 0.0, 1.0], atol=1e-5)
