"""Body joints' kinematics: what each joint type measures (its slots), their rates, coordinates and T_CD
(ArtiSynth's joints chapter, sections 3.3.1-3.3.4)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import artic
from artic import Axis, Limit, Motion, Transform
from artic.core.parallel import launch_envs
from artic.math.np_spatial import quat_exp, quat_from_axis_angle, quat_to_matrix
from artic.sim.assemble import _displace, _residual_rows
from tests.support.bodies import body

TYPES = [
    artic.FixedJoint,
    artic.HingeJoint,
    artic.SliderJoint,
    artic.CylindricalJoint,
    artic.SphericalJoint,
    artic.UniversalJoint,
    artic.GimbalJoint,
    artic.PlanarJoint,
    artic.DistanceJoint,
]


def _two_bodies(rng, envs=1):
    scene = artic.Scene(envs, gravity=(0.0, 0.0, 0.0))
    bodies = []
    for name in ("a", "b"):
        b = body(artic.Box((0.1, 0.2, 0.3)), name=name)
        b.set_global_pose(Transform(rng.normal(size=3) * 0.3, quat_exp(rng.normal(size=3))))
        scene.add_actor(b)
        bodies.append(b)
    return scene, bodies


def _slots(block):
    """(E, 6J) slot values and (E, 6J, N) row directions g of every joint of a block (as assembly reads them)."""
    e, n = block.num_envs, block.model.gen_count
    values = wp.zeros((e, 6 * block.body_joint_table.joint_count), dtype=float)
    g = wp.zeros((e, 6 * block.body_joint_table.joint_count, n), dtype=float)
    launch_envs(
        _residual_rows,
        e,
        [
            block.model.tree,
            block.body_joint_table,
            block.body_joint_arrays,
            block.state.arrays,
            block.data.kin,
            block.data.scratch,
            block.data.mass_matrix,
            values,
            g,
        ],
        block.device,
    )
    return values.numpy().astype(np.float64), g.numpy().astype(np.float64)


def _move(block, dx):
    scratch = wp.zeros((block.num_envs, max(block.model.dof_count, 1)), dtype=float)
    launch_envs(
        _displace,
        block.num_envs,
        [block.model.tree, block.state.arrays, wp.array(dx.astype(np.float32), dtype=float), scratch],
        block.device,
    )


@pytest.mark.parametrize("cls", TYPES, ids=lambda c: c.__name__)
def test_row_directions_are_the_rates_of_the_slot_values(cls):
    """Identity: for random poses far from the joint's manifold and a random generalized velocity v, each slot's
    row direction g satisfies g . v = d(slot value)/dt (central differences, float32); this is what makes the rows
    the Jacobian of the joint's constraints and coordinates."""
    rng = np.random.default_rng(7)
    scene, (a, b) = _two_bodies(rng)
    joint = cls.from_body_frames(
        a,
        Transform(rng.normal(size=3) * 0.3, quat_exp(rng.normal(size=3))),
        b,
        Transform(rng.normal(size=3) * 0.3, quat_exp(rng.normal(size=3))),
    )
    scene.add_joint(joint)
    block = scene._joint_view(joint).block
    v = rng.normal(size=(1, block.model.gen_count))
    eps = 2e-3
    _, g = _slots(block)
    _move(block, v * eps)
    plus, _ = _slots(block)
    _move(block, -2 * v * eps)
    minus, _ = _slots(block)
    rate = (plus - minus) / (2 * eps)
    analytic = np.einsum("ern,en->er", g, v)
    used = [3] if cls is artic.DistanceJoint else list(range(6))  # a distance joint has one slot
    np.testing.assert_allclose(analytic[0, used], rate[0, used], atol=2e-3 * (1 + np.abs(rate).max()))


@pytest.mark.parametrize(
    "cls", [c for c in TYPES if c not in (artic.FixedJoint, artic.DistanceJoint)], ids=lambda c: c.__name__
)
def test_set_coordinates_give_coordinates_to_tcd(cls):
    """Closed form: after scene.set_joint_coordinates(c), the joint holds to 1e-6, reads back c, and its T_CD
    equals coordinates_to_tcd(c) (ArtiSynth's coordinatesToTCD), per env with different values."""
    rng = np.random.default_rng(3)
    scene, (a, b) = _two_bodies(rng, envs=3)
    joint = cls(a, b, Transform(rng.normal(size=3) * 0.3, quat_exp(rng.normal(size=3))))
    scene.add_joint(joint)
    m = joint.num_coordinates
    values = rng.uniform(-0.6, 0.6, size=(3, m))
    scene.set_joint_coordinates(joint, values)
    np.testing.assert_allclose(scene.get_joint_coordinates(joint), values, atol=2e-6)
    frames = scene.get_joint_frames(joint)
    assert np.abs(frames.terr[:, :3]).max() < 1e-6
    assert np.abs(frames.terr[:, 3:6]).max() < 1e-6
    for e in range(3):
        t = joint.coordinates_to_tcd(values[e])
        np.testing.assert_allclose(frames.tcd[e, :3], t.p, atol=2e-6)
        np.testing.assert_allclose(quat_to_matrix(frames.tcd[e, 3:]), quat_to_matrix(t.q), atol=2e-6)


def test_zero_state_constructors_agree():
    """Closed form (section 3.3.3): Type(A, B, T_DW) puts C on D (T_CD = I); from_world_frames(A, B, T_CW, T_DW)
    gives T_CD = T_DW^-1 T_CW; from_body_frames keeps T_CA and T_DB as given; all in the scene's first read."""
    rng = np.random.default_rng(5)
    scene, (a, b) = _two_bodies(rng)
    t_dw = Transform(rng.normal(size=3), quat_exp(rng.normal(size=3)))
    t_cd = Transform((0.0, 0.0, 0.0), quat_from_axis_angle((0.0, 0.0, 1.0), 0.7))
    zero = artic.HingeJoint(a, b, t_dw)
    world = artic.HingeJoint.from_world_frames(a, b, t_dw * t_cd, t_dw)
    frames = artic.HingeJoint.from_body_frames(a, world.frame_ca, b, world.frame_db)
    for j in (zero, world, frames):
        scene.add_joint(j)
    np.testing.assert_allclose(scene.get_joint_coordinates(zero), [[0.0]], atol=1e-6)
    np.testing.assert_allclose(scene.get_joint_coordinates(world), [[0.7]], atol=1e-6)
    np.testing.assert_allclose(scene.get_joint_coordinates(frames), [[0.7]], atol=1e-6)
    c_world = scene.get_joint_frames(zero).c_world[0]
    np.testing.assert_allclose(c_world[:3], t_dw.p, atol=1e-6)
    assert abs(abs(np.dot(c_world[3:], t_dw.q)) - 1.0) < 1e-6


def test_physx_creation_maps_onto_artisynth_frames():
    """Closed form: create_physx_joint('revolute', actor0, frame0, actor1, frame1) turns about the x axis of PhysX's
    frames with PhysX's sign: actor1 turned by 0.4 rad about frame0's x reads theta = 0.4; 'prismatic' slides
    along x."""
    rng = np.random.default_rng(9)
    scene, (a, b) = _two_bodies(rng)
    f0 = Transform((0.1, 0.2, 0.3), quat_exp((0.2, -0.1, 0.4)))
    f1 = Transform((-0.2, 0.0, 0.1), quat_exp((0.0, 0.3, 0.0)))
    # put actor1 where frame1 sits on frame0 turned by 0.4 about x and moved 0.25 along it
    turned = Transform((0.25, 0.0, 0.0), quat_from_axis_angle((1.0, 0.0, 0.0), 0.4))
    a.set_global_pose(b.global_pose * f0 * turned * f1.inverse())
    scene.set_actor_pose(a, (b.global_pose * f0 * turned * f1.inverse()).as_array())
    hinge = artic.create_physx_joint("revolute", b, f0, a, f1)
    slider = artic.create_physx_joint("prismatic", b, f0, a, f1)
    d6 = artic.create_physx_joint("d6", b, f0, a, f1)
    d6.set_motion(Axis.TWIST, Motion.FREE)
    d6.set_motion(Axis.X, Motion.FREE)
    for j in (hinge, slider, d6):
        assert j.body_a is a.link and j.body_b is b.link
        scene.add_joint(j)
    assert scene.get_joint_coordinates(hinge)[0, 0] == pytest.approx(0.4, abs=1e-6)
    assert scene.get_joint_coordinates(slider)[0, 0] == pytest.approx(0.25, abs=1e-6)
    np.testing.assert_allclose(scene.get_joint_coordinates(d6)[0], [0.4, 0.25], atol=1e-6)


def test_angles_keep_counting_past_half_turns():
    """A hinge spun by a velocity drive for more than two turns reads a coordinate that grows past 2 pi without
    wrapping (ArtiSynth: angles wrap only at a limit), and equals the twist of T_CD modulo 2 pi."""
    wheel = body(artic.Cylinder(0.1, 0.02), pose=(0.0, 0.0, 1.0), name="wheel")
    scene = artic.Scene(1)
    scene.add_actor(wheel)
    hinge = artic.HingeJoint(wheel, None, Transform((0.0, 0.0, 1.0)))
    hinge.set_drive_params("theta", artic.Drive(0.0, 50.0, 1e3, artic.DriveType.FORCE))
    hinge.set_drive_velocity("theta", 10.0)
    scene.add_joint(hinge)
    theta = []
    for _ in range(200):
        scene.step(1 / 100)
        theta.append(scene.get_joint_coordinates(hinge)[0, 0])
    theta = np.array(theta)
    assert theta[-1] > 4 * np.pi
    assert np.all(np.diff(theta) > 0)
    tcd = scene.get_joint_frames(hinge).tcd[0]
    twist = 2 * np.arctan2(tcd[5], tcd[6])
    assert np.cos(theta[-1] - twist) == pytest.approx(1.0, abs=1e-8)


def test_d6_coordinates_follow_its_motions():
    """A D6 joint's coordinates are its unlocked axes in PhysX order with their ranges (LIMITED from
    set_limit_params); one free rotation reads the twist about that axis, two or more the rotation vector."""
    rng = np.random.default_rng(2)
    scene, (a, b) = _two_bodies(rng)
    d6 = artic.D6Joint(a, b, Transform())
    d6.set_motion(Axis.SWING2, Motion.LIMITED)
    d6.set_limit_params(Axis.SWING2, Limit(-0.5, 0.25))
    d6.set_motion(Axis.Y, Motion.FREE)
    assert d6.coordinate_names == ["swing2", "y"]
    assert d6.get_coordinate_range("swing2") == (-0.5, 0.25)
    assert d6.bilateral_count == 4
    scene.add_joint(d6)
    scene.set_joint_coordinates(d6, [0.2, -0.1])
    t = scene.get_joint_frames(d6).tcd[0]
    np.testing.assert_allclose(t[:3], [0.0, -0.1, 0.0], atol=1e-6)
    assert 2 * np.arctan2(t[5], t[6]) == pytest.approx(0.2, abs=1e-6)
    scene.remove_joint(d6)
    ball = artic.D6Joint(a, b, Transform())  # two rotations: the rotation vector's x and y components
    for ax in (Axis.TWIST, Axis.SWING1):
        ball.set_motion(ax, Motion.FREE)
    scene.add_joint(ball)
    scene.set_joint_coordinates(ball, [0.3, -0.4])
    t = scene.get_joint_frames(ball).tcd[0]
    np.testing.assert_allclose(quat_to_matrix(t[3:]), quat_to_matrix(quat_exp((0.3, -0.4, 0.0))), atol=2e-6)


def _pendulum_angle(rate: float, lever: float, mass: float, inertia: float, seconds: float) -> float:
    """The angle a rigid pendulum (COM `lever` below the pivot, `inertia` about its COM) started at the bottom with
    `rate` [rad/s] reaches after `seconds` under gravity 9.81: RK4 at 0.1 ms, converged to 1e-9 rad."""
    about_pivot = inertia + mass * lever**2

    def accel(a):
        return -mass * 9.81 * lever * np.sin(a) / about_pivot

    a, w, h = 0.0, rate, 1e-4
    for _ in range(round(seconds / h)):
        k1 = (w, accel(a))
        k2 = (w + 0.5 * h * k1[1], accel(a + 0.5 * h * k1[0]))
        k3 = (w + 0.5 * h * k2[1], accel(a + 0.5 * h * k2[0]))
        k4 = (w + h * k3[1], accel(a + h * k3[0]))
        a += h * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6
        w += h * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]) / 6
    return a


@pytest.mark.parametrize("solver", list(artic.SolverType), ids=lambda s: s.name.lower())
def test_a_universal_joint_turns_through_pitch_90_like_a_hinge(solver):
    """Identity: a 0.4 m bar below a universal joint to the world, thrown at 20 rad/s about the pitch axis (y), turns
    over the top as a hinge pendulum about y would (the roll axis z is never excited). The universal joint follows
    the hinge to 1e-5 m, its roll stays 0 and its pitch keeps counting through +-90 deg and past -2.5 pi with the
    hinge's angle. Read as Z-Y-X Euler angles (before), the roll flipped by pi at pitch 90 deg, the constrained slot
    with it, and PGS and TGS went non-finite in the first turn.

    Oracle: the throw, projected onto the joint by the first step, is -14.56 rad/s about the pivot; the rigid
    pendulum then turns -12.06 rad in 1 s. TGS (-12.03) and DIRECT (-11.81, which carries half its rows' turn into
    the next step: solvers/direct.py) keep the swing's energy; PGS's start-of-step projection at 0.2 rad a step
    loses most of it (-9.1). The joint's linear error is the last step's chord drift r (w h)^2 / 2 at the speed the
    solver kept (2.8 mm for DIRECT at 13.7 rad/s)."""

    def swing(joint):
        scene = artic.Scene(1, solver_type=solver)
        b = body(artic.Box((0.05, 0.05, 0.2)), pose=(0.0, 0.0, -0.3))
        b.link.linear_damping = 0.0
        scene.add_actor(b)
        joint = scene.add_joint(joint(b))
        scene.set_actor_velocity(b, [[6.0, 0.0, 0.0, 0.0, 20.0, 0.0]])
        poses, coords = [], []
        for _ in range(100):
            scene.step(0.01)
            poses.append(scene.get_actor_pose(b)[0])
            coords.append(scene.get_joint_coordinates(joint)[0])
        spin = scene.get_actor_velocity(b)[0, 4]
        return np.array(poses), np.array(coords), scene.get_joint_frames(joint), spin, b.link

    about_y = Transform((0.0, 0.0, 0.0), quat_from_axis_angle((1.0, 0.0, 0.0), -0.5 * np.pi))  # the hinge's z on y
    hinge, angle, *_ = swing(lambda b: artic.HingeJoint(b, None, about_y))
    universal, coords, frames, spin, link = swing(lambda b: artic.UniversalJoint(b, None, Transform()))
    np.testing.assert_allclose(universal[:, :3], hinge[:, :3], atol=1e-5)
    assert np.abs(coords[:, 0]).max() < 1e-6
    np.testing.assert_allclose(coords[:, 1], angle[:, 0], atol=1e-4)
    assert coords[:, 1].min() < -2.5 * np.pi
    assert np.abs(frames.terr[0, :6]).max() < 0.6 * 0.3 * (spin * 0.01) ** 2 + 1e-4
    thrown = (link.inertia[1] * 20.0 - link.mass * 0.3 * 6.0) / (link.inertia[1] + link.mass * 0.3**2)
    exact = _pendulum_angle(thrown, 0.3, link.mass, link.inertia[1], 1.0)
    assert exact == pytest.approx(-12.06, abs=0.01)
    if solver != artic.SolverType.PGS:
        assert coords[-1, 1] == pytest.approx(exact, abs=0.4)
    else:
        assert exact + 2.0 < coords[-1, 1] < exact + 4.0
