"""Scenes that no solver can get right, or that push one past what it resolves (issue 27): a loop that cannot
close, a body fixed twice, a joint created violated, a fast hinge, boxes whose mass ratio Gauss-Seidel cannot carry.
Shared by the violation-status tests and the stress test (tests/sim/test_stress.py)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np

import artic
from artic import Box, Transform
from artic.math.np_spatial import quat_from_axis_angle
from tests.support import EXAMPLES
from tests.support.bodies import body, scene_with_ground

_spec = importlib.util.spec_from_file_location("four_bar", EXAMPLES / "four_bar.py")
four_bar_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(four_bar_example)

HALF = 0.1  # [m] the stacked boxes' half extent


def free(shape, pose):
    """A body with no damping and no velocity caps: nothing but its joints decides how it moves."""
    b = body(shape, pose=pose)
    b.link.linear_damping = 0.0
    b.link.max_angular_velocity = 1e4
    b.link.max_linear_velocity = 1e4
    return b


def four_bar(solver, coupler=None):
    """The manual's four-bar made hard (examples/four_bar.py); `coupler`: bar 2's distance between its pins [m]
    (1 m as built; more than 3 m and the loop cannot close: ground, crank and rocker are 1 m each).
    Returns (scene, bars, joints)."""
    scene, bars, joints = four_bar_example.build_four_bar(compliance=0.0, damping=0.0, solver_type=solver)
    if coupler is not None:
        rx = quat_from_axis_angle((1.0, 0.0, 0.0), 0.5 * np.pi)
        joints[1].set_frames(frame_db=Transform((0.0, 0.0, 0.5 - coupler), rx))
    return scene, bars, joints


def two_fixed(solver=artic.SolverType.PGS, nan_policy="warn", envs=1):
    """A 1 kg box fixed to the world twice, the second joint's world frame 0.5 m from the first: impossible. The
    second joint is switched off in envs 1.., which then hold an ordinary fixed body. Returns (scene, box, second)."""
    scene = artic.Scene(envs, nan_policy=nan_policy, solver_type=solver)
    b = free(Box((0.1, 0.1, 0.1)), (0.0, 0.0, 1.0))
    scene.add_actor(b)
    scene.add_joint(artic.FixedJoint(b, None, Transform((0.0, 0.0, 1.0)), name="first"))
    second = scene.add_joint(
        artic.FixedJoint.from_body_frames(b, Transform(), None, Transform((0.5, 0.0, 1.0)), name="second")
    )
    scene.set_joint_enabled(second, [True] + [False] * (envs - 1))
    return scene, b, second


def violated_universal(solver):
    """A body fixed to the world and a second one joined to it by a universal joint whose world frames disagree by
    0.17 m and 0.7 rad (which the docs allow), under gravity. Returns (scene, (a, c), universal joint)."""
    scene = artic.Scene(1, solver_type=solver)
    a = free(Box((0.1, 0.1, 0.1)), (0.0, 0.0, 1.0))
    c = free(Box((0.1, 0.1, 0.1)), (0.3, 0.0, 1.0))
    scene.add_actor(a)
    scene.add_actor(c)
    scene.add_joint(artic.FixedJoint(a, None, Transform((0.0, 0.0, 1.0))))
    frame_c = Transform((0.15, 0.0, 1.0))
    frame_d = Transform((0.25, 0.1, 1.1), quat_from_axis_angle((1.0, 0.0, 0.0), 0.7))
    u = scene.add_joint(artic.UniversalJoint.from_world_frames(a, c, frame_c, frame_d))
    return scene, (a, c), u


def spinning_hinge(solver, omega, lever=0.25):
    """A 5 cm box on a `lever` m arm about a hinge to the world (z axis), spinning at omega rad/s, no gravity.
    Returns (scene, box, hinge)."""
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), solver_type=solver)
    b = free(Box((0.05, 0.05, 0.05)), (lever, 0.0, 0.0))
    scene.add_actor(b)
    hinge = scene.add_joint(artic.HingeJoint(b, None, Transform()))
    scene.set_actor_velocity(b, [[0.0, omega * lever, 0.0, 0.0, 0.0, omega]])
    return scene, b, hinge


def box_stack(solver, ratio, count, envs=1, nan_policy="warn", bottom=HALF):
    """`count` 0.2 m boxes stacked on the ground, touching, at 4 position iterations; the odd ones `ratio` times
    heavier than the 1 kg even ones. `bottom`: the lowest box's height (HALF: resting on the ground).
    Returns (scene, boxes)."""
    scene = scene_with_ground(solver, envs=envs, nan_policy=nan_policy)
    boxes = []
    for k in range(count):
        b = body(Box((HALF, HALF, HALF)), pose=(0.0, 0.0, bottom + 2 * HALF * k), density=125.0, name=f"b{k}")
        if k % 2:
            b.update_mass_and_inertia(125.0 * ratio)
        b.set_solver_iteration_counts(4, 1)
        scene.add_actor(b)
        boxes.append(b)
    return scene, boxes


def step_recording(scene, steps: int, dt: float) -> list[str]:
    """Step `steps` times and return every warning's message (each one, not once per place)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(steps):
            scene.step(dt)
    return [str(w.message) for w in record]


def assert_first_env_frozen(scene, body, dt: float) -> None:
    """Of two envs, the first is frozen (env_status) and stays where it is over 5 more steps; the second is not."""
    assert scene.env_status.tolist() == [True, False]
    held = scene.get_actor_pose(body).copy()
    for _ in range(5):
        scene.step(dt)
    np.testing.assert_array_equal(scene.get_actor_pose(body)[0], held[0])
