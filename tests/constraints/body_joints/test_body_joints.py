"""Body joints in a scene: constraint forces (ArtiSynth's joints chapter 3.3.7), ranges and locking
(3.3.5), drives on coordinates, the distance joint, grouping, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import Drive, DriveType, Transform
from artic.math.np_spatial import quat_from_axis_angle, quat_rotate
from tests.support.bodies import body

G = 9.81
SOLVERS = pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.TGS], ids=["pgs", "tgs"])
RX = quat_from_axis_angle((1.0, 0.0, 0.0), 0.5 * np.pi)  # a hinge about the world's -y axis
PIN = np.array([0.3, 0.0, 1.25])  # [m]
ARM = 0.25  # [m] from the pin down to the pendulum's COM


def _pendulum(envs=1, solver=artic.SolverType.PGS, gravity=(0.0, 0.0, -G), iterations=(4, 1)):
    """A 4 kg box hanging from a hinge to the world at PIN, its COM ARM below the pin."""
    b = body(artic.Box((0.05, 0.05, 0.2)), pose=PIN - (0.0, 0.0, ARM))
    b.set_solver_iteration_counts(*iterations)
    scene = artic.Scene(envs, gravity=gravity, solver_type=solver)
    scene.add_actor(b)
    joint = scene.add_joint(artic.HingeJoint(b, None, Transform(PIN, RX), name="pin"))
    return scene, b, joint


def _cross(a, b):
    return np.cross(a, b)


@SOLVERS
def test_hanging_body_force_is_its_weight_in_frame_c_on_a_and_on_b(solver):
    """Closed form and identities (3.3.7): a pendulum posed at theta = 60 deg and locked there hangs still. The
    hinge's linear multipliers add up to the weight m g, the lock's multiplier is the gravity torque m g r sin(60),
    the wrench on A (world, about A's COM) cancels gravity exactly, the wrench on B is its opposite moved to the world
    origin, and frame C's wrench turned into the world and moved to A's COM is the wrench on A. (PhysX's default 4
    position iterations: the lock is solved with the pin's rows as one block; row by row, Gauss-Seidel left it
    2.4e-3 rad short under this 25 cm lever.)"""
    scene, b, joint = _pendulum(solver=solver, iterations=(4, 1))
    scene.set_joint_coordinates(joint, [np.radians(60.0)])
    joint.set_locked(0)
    for _ in range(100):
        scene.step(0.01)
    m = b.link.mass
    pose = scene.get_actor_pose(b)[0]
    for _ in range(20):
        scene.step(0.01)
    assert scene.get_joint_coordinates(joint)[0, 0] == pytest.approx(np.radians(60.0), abs=1e-5)
    np.testing.assert_allclose(scene.get_actor_pose(b)[0], pose, atol=1e-5)  # it hangs still
    f = scene.get_joint_forces(joint)
    assert f.bilateral_count[0] == 6 and f.engaged_count[0] == 0  # 5 hinge constraints and the lock
    lin, lock = f.constraint_force[0, :3], f.constraint_force[0, 5]
    assert np.linalg.norm(lin) == pytest.approx(m * G, rel=1e-4)
    assert abs(lock) == pytest.approx(m * G * ARM * np.sin(np.radians(60.0)), rel=1e-4)
    wa, wb = f.wrench_a[0], f.wrench_b[0]
    np.testing.assert_allclose(wa, [0.0, 0.0, m * G, 0.0, 0.0, 0.0], atol=1e-4 * m * G)
    com = scene.get_actor_pose(b)[0, :3]
    np.testing.assert_allclose(wb[:3], -wa[:3], atol=1e-6 * m * G)
    np.testing.assert_allclose(wb[3:], -(wa[3:] + _cross(com, wa[:3])), atol=1e-5 * m * G)
    c = scene.get_joint_frames(joint).c_world[0]
    np.testing.assert_allclose(c[:3], PIN, atol=1e-6)
    wc = f.bilateral_wrench_c[0] + f.unilateral_wrench_c[0] + f.drive_wrench_c[0]
    force = quat_rotate(c[3:], wc[:3])
    np.testing.assert_allclose(force, wa[:3], atol=1e-5 * m * G)
    np.testing.assert_allclose(quat_rotate(c[3:], wc[3:]) + _cross(c[:3] - com, force), wa[3:], atol=1e-5 * m * G)


@SOLVERS
def test_ranges_stop_coordinates_at_their_bounds_per_env(solver):
    """A pendulum released at theta = 1 rad swings down through 0; env 0's range [-0.4, 2] stops it at -0.4 and
    env 1's [-0.2, 2] at -0.2 (to 2e-3 rad), the range constraint engaged and pushing back while it holds. The
    ranges then change between steps without a rebuild: [-0.1, 0.1] in env 0 keeps it inside from the next
    impact on, while env 1 swings on as before. (PhysX's default 4 position iterations, to 1e-4 rad: the range row
    is orthogonalized against the pin's block. Solved row by row, the two converged by a factor of about 0.8 per
    iteration and the pendulum passed a bound by 0.023 rad with 4 iterations, 1.2e-3 with 16.)"""
    scene, _b, joint = _pendulum(envs=2, solver=solver, iterations=(4, 1))
    scene.set_joint_coordinates(joint, [1.0])
    scene.set_joint_ranges(joint, [[-0.4], [-0.2]], [[2.0], [2.0]])
    theta, engaged = [], []
    for _ in range(150):
        scene.step(0.01)
        theta.append(scene.get_joint_coordinates(joint)[:, 0])
        f = scene.get_joint_forces(joint)
        engaged.append(f.engaged_count.copy())
        if f.engaged_count[0]:
            assert f.constraint_force[0, 5] != 0.0
    theta, engaged = np.array(theta), np.array(engaged)
    np.testing.assert_allclose(theta.min(axis=0), [-0.4, -0.2], atol=1e-4)
    assert engaged[:, 0].any() and engaged[:, 1].any()
    assert theta.max(axis=0).max() < 1.0 + 1e-3  # hard limits do not add energy
    scene.set_joint_ranges(joint, [[-0.1], [-0.2]], [[0.1], [2.0]])
    low, _high = scene.get_joint_ranges(joint)
    np.testing.assert_array_equal(low[:, 0], np.float32([-0.1, -0.2]))
    late = []
    for _ in range(150):
        scene.step(0.01)
        late.append(scene.get_joint_coordinates(joint)[:, 0])
    late = np.array(late)[50:]  # after the first impact on the new bounds
    assert late[:, 0].min() > -0.1 - 2e-3 and late[:, 0].max() < 0.1 + 2e-3
    assert late[:, 1].min() == pytest.approx(-0.2, abs=2e-3) and late[:, 1].max() > 0.15


@SOLVERS
def test_locking_holds_a_coordinate_per_env_and_releases(solver):
    """A 4 kg body on a vertical slider to the world. Locked in env 0 it does not move and the lock carries its
    weight; env 1, free, falls exactly as the integrator's free fall (symplectic Euler: z_n = -g dt^2 n(n+1)/2). Then
    env 0 is released (it falls) and env 1 locked (it stops where it is)."""
    b = body(artic.Box((0.05, 0.05, 0.05)), pose=(0.0, 0.0, 1.0))
    scene = artic.Scene(2, solver_type=solver)
    scene.add_actor(b)
    joint = scene.add_joint(artic.SliderJoint(b, None, Transform((0.0, 0.0, 1.0))))
    scene.set_joint_locked(joint, [[True], [False]])
    dt, n = 0.01, 40
    for _ in range(n):
        scene.step(dt)
    z = scene.get_joint_coordinates(joint)[:, 0]
    assert z[0] == pytest.approx(0.0, abs=1e-6)
    assert z[1] == pytest.approx(-G * dt * dt * n * (n + 1) / 2, rel=1e-4)
    f = scene.get_joint_forces(joint)
    assert f.constraint_force[0, 5] == pytest.approx(-b.link.mass * G, rel=1e-4) or f.constraint_force[
        0, 5
    ] == pytest.approx(b.link.mass * G, rel=1e-4)
    assert f.bilateral_count.tolist() == [6, 5]
    scene.set_joint_locked(joint, [[False], [True]])
    np.testing.assert_array_equal(scene.get_joint_locked(joint)[:, 0], [False, True])
    for _ in range(20):
        scene.step(dt)
    z2 = scene.get_joint_coordinates(joint)[:, 0]
    assert z2[0] < -0.01
    assert z2[1] == pytest.approx(z[1], abs=1e-5)


def test_drive_on_a_coordinate_is_the_implicit_pd_update():
    """Closed form (the implicit-drive note): a 4 kg body on a horizontal slider driven by an implicit
    PD drive (k = 500 N/m, d = 20 N s/m) toward per-env targets follows v' = (m v + dt (k (x* - x) + d v*)) /
    (m + dt d + dt^2 k), x' = x + dt v' at every step to 1e-5 m (PGS), and the drive force is m (v' - v) / dt."""
    b = body(artic.Box((0.05, 0.05, 0.05)), pose=(0.0, 0.0, 1.0))
    scene = artic.Scene(2, gravity=(0.0, 0.0, 0.0))
    scene.add_actor(b)
    joint = artic.SliderJoint(b, None, Transform((0.0, 0.0, 1.0), quat_from_axis_angle((0.0, 1.0, 0.0), 0.5 * np.pi)))
    k, d, m, dt = 500.0, 20.0, b.link.mass, 0.01
    joint.set_drive_params("z", Drive(k, d, float(np.finfo(np.float32).max), DriveType.FORCE))
    scene.add_joint(joint)
    target_x, target_v = np.array([0.2, -0.1]), np.array([0.0, 0.05])
    scene.set_joint_targets(joint, target_x[:, None], target_v[:, None])
    x, v = np.zeros(2), np.zeros(2)
    err = 0.0
    for _ in range(100):
        scene.step(dt)
        v_new = (m * v + dt * (k * (target_x - x) + d * target_v)) / (m + dt * d + dt * dt * k)
        force = m * (v_new - v) / dt
        v, x = v_new, x + dt * v_new
        err = max(err, np.abs(scene.get_actor_pose(b)[:, 0] - x).max())
        np.testing.assert_allclose(scene.get_joint_forces(joint).drive_force[:, 0], force, rtol=1e-3, atol=1e-3)
    assert err < 1e-5
    np.testing.assert_allclose(scene.get_joint_coordinates(joint)[:, 0], x, atol=1e-5)
    assert abs(x[0] - 0.2) < 0.05  # it got there


@SOLVERS
def test_distance_joint_hard_and_spring(solver):
    """A 1 kg ball 0.3 m under a world point, on a DistanceJoint with range [0, 0.5]: it falls slack, is caught at
    0.5 m (to 1e-3) and hangs there, the range constraint carrying m g. With a spring (k = 2000 N/m, d = 60 N s/m)
    it settles at 0.5 + m g / k."""
    results = []
    for spring in (False, True):
        b = body(artic.Sphere(0.05), pose=(0.0, 0.0, 0.7), density=1.0 / (4.0 / 3.0 * np.pi * 0.05**3))
        scene = artic.Scene(1, solver_type=solver)
        scene.add_actor(b)
        joint = artic.DistanceJoint.from_body_frames(b, Transform(), None, Transform((0.0, 0.0, 1.0)))
        joint.set_distance_range(0.0, 0.5)
        if spring:
            joint.set_spring(2000.0, 60.0)
        scene.add_joint(joint)
        dist = []
        for _ in range(300):
            scene.step(0.01)
            dist.append(scene.get_joint_coordinates(joint)[0, 0])
        results.append((np.array(dist), scene.get_joint_forces(joint), b.link.mass))
    (hard, f, m), (soft, _, _) = results
    assert m == pytest.approx(1.0, rel=1e-6)
    assert hard[0] < 0.5 and hard.max() < 0.5 + 1e-3
    assert hard[-1] == pytest.approx(0.5, abs=1e-4)
    assert f.engaged_count[0] == 1 and abs(f.constraint_force[0, -1]) == pytest.approx(m * G, rel=1e-3)
    assert soft[-1] == pytest.approx(0.5 + m * G / 2000.0, abs=2e-4)


def test_jointed_bodies_that_cannot_touch_are_stepped_together():
    """Bodies whose shapes collide with nothing are each stepped alone, until a joint joins two of them: then they
    share a block (and the joint holds), while a third stays alone."""

    def ghost(name, x):
        return body(artic.Box((0.1, 0.1, 0.1), collision_group=0, collision_mask=0), pose=(x, 0.0, 1.0), name=name)

    scene = artic.Scene(1)
    a, c, far = ghost("a", 0.0), ghost("c", 0.5), ghost("far", 5.0)
    for x in (a, c, far):
        scene.add_actor(x)
    blocks = {id(v.block) for v in scene._views.values()}
    assert len(blocks) == 3
    joint = scene.add_joint(artic.SphericalJoint(c, a, Transform((0.25, 0.0, 1.0))))
    block = scene._joint_view(joint).block
    assert {a.link.articulation, c.link.articulation} == set(block.arts)
    assert far.link.articulation not in block.arts
    for _ in range(50):
        scene.step(0.01)
    assert np.linalg.norm(scene.get_joint_frames(joint).terr[0, :3]) < 1e-4
    assert scene.get_actor_pose(a)[0, 2] < 0.9  # the pair falls together


def test_jointed_bodies_do_not_collide_unless_enabled():
    """Two overlapping boxes joined by a distance joint without a range (it constrains nothing): without
    collision_enabled they do not push each other apart, with it (set before add_joint, as PhysX's
    eCOLLISION_ENABLED) they do."""
    seps = []
    for enabled in (False, True):
        scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0))
        a = body(artic.Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 1.0), name="a")
        c = body(artic.Box((0.1, 0.1, 0.1)), pose=(0.05, 0.0, 1.0), name="c")
        for x in (a, c):
            scene.add_actor(x)
        joint = artic.DistanceJoint(a, c, Transform((0.0, 0.0, 1.0)))
        joint.collision_enabled = enabled
        scene.add_joint(joint)
        for _ in range(20):
            scene.step(0.01)
        seps.append(scene.get_actor_pose(c)[0, 0] - scene.get_actor_pose(a)[0, 0])
    assert seps[0] == pytest.approx(0.05, abs=1e-6)
    assert seps[1] > 0.1


def test_joint_state_survives_regrouping_and_remove_joint_frees_the_body():
    """Adding another body regroups the scene's blocks; the joint keeps its coordinates, per-env ranges, locks and
    targets. remove_joint releases the body: it falls freely."""
    scene, b, joint = _pendulum(envs=2)
    scene.set_joint_coordinates(joint, [[0.3], [-0.2]])
    scene.set_joint_ranges(joint, [[-1.0], [-0.5]], [[1.0], [0.5]])
    scene.set_joint_locked(joint, [[True], [False]])
    scene.set_joint_targets(joint, [[0.1], [0.2]])
    before = scene.get_joint_coordinates(joint)
    other = body(artic.Box((0.1, 0.1, 0.1)), pose=(0.3, 0.0, 1.0), name="other")  # touches the pendulum
    scene.add_actor(other)
    np.testing.assert_allclose(scene.get_joint_coordinates(joint), before, atol=1e-6)
    np.testing.assert_allclose(scene.get_joint_ranges(joint)[0], [[-1.0], [-0.5]])
    np.testing.assert_array_equal(scene.get_joint_locked(joint), [[True], [False]])
    np.testing.assert_allclose(scene.get_joint_targets(joint)[0], [[0.1], [0.2]])
    scene.remove_actor(other)
    scene.step(0.01)
    assert scene.get_joint_coordinates(joint)[0, 0] == pytest.approx(0.3, abs=2e-4)  # locked (4 iterations)
    scene.remove_joint(joint)
    assert joint not in scene.joints
    z0 = scene.get_actor_pose(b)[:, 2].copy()
    v0 = scene.get_actor_velocity(b)[:, 2].copy()
    for _ in range(10):
        scene.step(0.01)
    np.testing.assert_allclose(scene.get_actor_pose(b)[:, 2], z0 + 10 * 0.01 * v0 - G * 1e-4 * 55, atol=1e-4)


def test_bad_input_is_an_artic_error():
    """A joint between a body and itself, a non-unit frame quaternion, a negative compliance, a range with
    low > high, NaN bounds or targets, wrongly shaped per-env arrays, a body from another scene or in none, a D6
    motion changed in a scene, and two bodies that cannot move: each an ArticError naming the joint."""
    a = body(artic.Box((0.1, 0.1, 0.1)), name="a")
    c = body(artic.Box((0.1, 0.1, 0.1)), pose=(0.5, 0.0, 1.0), name="c")
    with pytest.raises(artic.ArticError, match="same body"):
        artic.HingeJoint(a, a, Transform())
    with pytest.raises(artic.ArticError, match="frame_ca"):
        artic.HingeJoint.from_body_frames(a, ((0, 0, 0), (0.0, 0.0, 0.0, 2.0)), c, Transform())
    with pytest.raises(artic.ArticError, match="frame_dw"):
        artic.HingeJoint(a, c, ((0, 0, 0), (0.0, 0.0, np.nan, 1.0)))
    joint = artic.HingeJoint(a, c, Transform((0.25, 0.0, 1.0)), name="h")
    with pytest.raises(artic.ArticError, match="'h'.*compliance"):
        joint.set_compliance([-1e-3] * 5)
    with pytest.raises(artic.ArticError, match="'h'.*compliance"):
        joint.set_compliance([1e-3] * 7)  # at most one per constraint (5 bilateral and a range)
    with pytest.raises(artic.ArticError, match="low 1.0 > high -1.0"):
        joint.set_coordinate_range("theta", 1.0, -1.0)
    with pytest.raises(artic.ArticError, match="NaN"):
        joint.set_coordinate_range(0, np.nan, 1.0)
    with pytest.raises(artic.ArticError, match="no coordinate|coordinate"):
        joint.set_locked("z")
    with pytest.raises(artic.ArticError, match="cannot move"):
        artic.FixedJoint(artic.RigidStatic(Transform(), "s"), None, Transform())
    with pytest.raises(artic.ArticError, match="world may only be body B"):
        artic.FixedJoint(None, a, Transform())
    other = artic.Scene(1)
    other.add_actor(c)
    scene = artic.Scene(2)
    with pytest.raises(artic.ArticError, match="body A 'a' is not in this scene"):
        scene.add_joint(joint)  # a is in no scene
    scene.add_actor(a)
    with pytest.raises(artic.ArticError, match="body B 'c' is not in this scene"):
        scene.add_joint(joint)  # c is in another scene
    d6 = artic.D6Joint(a, None, Transform())
    scene.add_joint(d6)
    with pytest.raises(artic.ArticError, match="in a scene"):
        d6.set_motion(artic.Axis.X, artic.Motion.FREE)
    with pytest.raises(artic.ArticError, match="scene"):
        scene.add_joint(d6)  # twice
    pin = artic.HingeJoint(a, None, Transform())
    scene.add_joint(pin)
    with pytest.raises(artic.ArticError, match="shape|\\(2, 1\\)"):
        scene.set_joint_ranges(pin, np.zeros((3, 1)), np.ones((3, 1)))
    with pytest.raises(artic.ArticError, match="low.*high|> high"):
        scene.set_joint_ranges(pin, [1.0], [-1.0])
    with pytest.raises(artic.ArticError, match="finite|NaN"):
        scene.set_joint_targets(pin, [np.nan])
    with pytest.raises(artic.ArticError, match="remove"):
        scene.remove_actor(a)  # joints still hold it


def test_numbers_given_as_text_and_empty_ranges_are_refused():
    """Issue 27: set_compliance("1e-6") was read as a number by NumPy and set_damping(["x"]) raised a raw
    ValueError; a range [inf, inf] (or [-inf, -inf]) admits no value and was accepted, after which PGS and TGS went
    NaN. Each is now an ArticError naming the joint, in the description and per env."""
    a = body(artic.Box((0.1, 0.1, 0.1)), name="a")
    joint = artic.HingeJoint(a, None, Transform(), name="h")
    with pytest.raises(artic.ArticError, match="'h'.*compliance.*real numbers"):
        joint.set_compliance("1e-6")
    with pytest.raises(artic.ArticError, match="'h'.*damping.*real numbers"):
        joint.set_damping(["x"])
    for low, high in ((np.inf, np.inf), (-np.inf, -np.inf), (np.inf, None), (None, -np.inf)):
        with pytest.raises(artic.ArticError, match="'h'.*admits no value"):
            joint.set_coordinate_range("theta", low, high)
    assert joint.get_coordinate_range("theta") == (-np.inf, np.inf)  # the refused calls changed nothing
    scene = artic.Scene(2)
    scene.add_actor(a)
    scene.add_joint(joint)
    with pytest.raises(artic.ArticError, match="'h'.*env 1 admits no value"):
        scene.set_joint_ranges(joint, [[-1.0], [np.inf]], [[1.0], [np.inf]])
    low, high = scene.get_joint_ranges(joint)
    assert np.all(low == -np.inf) and np.all(high == np.inf)
