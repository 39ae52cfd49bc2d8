"""Rigid bodies on the ground: resting, stacking on static boxes, sliding at mu g, bouncing with restitution,
contact forces (closed forms and identities)."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import Box, Capsule, ConvexMesh, Cylinder, Material, SolverType, Sphere, Transform
from artic.math.np_spatial import quat_from_matrix
from tests.support.bodies import G, body, run, scene_with_ground

SOLVERS = [SolverType.PGS, SolverType.TGS]


@pytest.mark.parametrize("solver", SOLVERS)
def test_box_rests_on_plane_for_ten_seconds(solver):
    """A 0.2 x 0.4 x 0.6 m box dropped from 5 cm: after it settles, penetration stays below 1 mm and it does not
    creep (sleeping disabled, so the solver holds it every step)."""
    scene = scene_with_ground(solver)
    b = body(Box((0.1, 0.2, 0.3)), pose=(0.0, 0.0, 0.35))
    scene.add_actor(b)
    poses, vels = run(scene, [b], 600, 1.0 / 60.0)
    z = poses[60:, 0, 2]
    assert np.all(z > 0.3 - 1e-3) and np.all(z < 0.3 + 1e-3)
    drift = np.linalg.norm(poses[-1, 0, :3] - poses[60, 0, :3])
    assert drift < 1e-3
    assert np.abs(vels[-60:, 0]).max() < 2e-2
    report = scene.get_contacts(b)
    assert report.count[0] == 4
    assert np.all(report.separation[0, :4] > -1e-3)
    # identity: at rest the contact forces carry the weight, along the normal
    np.testing.assert_allclose(report.total_force()[0], [0.0, 0.0, b.mass * G], rtol=0.02, atol=0.02 * b.mass * G)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("mu", [0.2, 0.6])
def test_box_slides_and_decelerates_at_mu_g(solver, mu):
    """Coulomb friction: a box launched at 3 m/s along x decelerates at mu g until it stops (closed form; both
    materials carry mu, PhysX averages them)."""
    scene = scene_with_ground(solver, Material(mu, mu, 0.0))
    b = body(Box((0.2, 0.2, 0.1)), pose=(0.0, 0.0, 0.1), material=Material(mu, mu, 0.0))
    scene.add_actor(b)
    run(scene, [b], 10, 1.0 / 240.0)  # settle onto the plane
    scene.set_actor_velocity(b, [3.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    dt = 1.0 / 240.0
    _, vels = run(scene, [b], 60, dt)
    vx = vels[:, 0, 0]
    decel = -np.polyfit(np.arange(len(vx)) * dt, vx, 1)[0]
    assert decel == pytest.approx(mu * G, rel=0.02)
    assert np.abs(vels[:, 0, 1]).max() < 1e-3  # no sideways drift
    t_stop = 3.0 / (mu * G)
    _, vels = run(scene, [b], int(t_stop / dt) + 30, dt)
    assert abs(vels[-1, 0, 0]) < 1e-2  # it stops, and static friction holds it


@pytest.mark.parametrize(
    "ground_mode, box_mode, mu",
    [
        ("average", "average", 0.4),
        ("min", "average", 0.2),
        ("multiply", "min", 0.12),
        ("average", "max", 0.6),
        ("max", "multiply", 0.6),
    ],
)
def test_friction_combine_mode_of_higher_priority_decides(ground_mode, box_mode, mu):
    """PxCombineMode: a box (mu 0.6) sliding on a ground (mu 0.2) decelerates at mu g with mu the two coefficients
    combined by the mode of higher priority (average < min < multiply < max): 0.4, 0.2, 0.12 or 0.6."""
    scene = scene_with_ground(SolverType.PGS, Material(0.2, 0.2, 0.0, friction_combine=ground_mode))
    b = body(Box((0.2, 0.2, 0.1)), pose=(0.0, 0.0, 0.1), material=Material(0.6, 0.6, 0.0, friction_combine=box_mode))
    scene.add_actor(b)
    run(scene, [b], 10, 1.0 / 240.0)
    scene.set_actor_velocity(b, [3.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    dt = 1.0 / 240.0
    _, vels = run(scene, [b], 40, dt)
    decel = -np.polyfit(np.arange(40) * dt, vels[:, 0, 0], 1)[0]
    assert decel == pytest.approx(mu * G, rel=0.02)
    with pytest.raises(artic.ValidationError, match="friction_combine must be one of average, min, multiply, max"):
        Material(friction_combine="sum")


def _box_on_slope(solver, degrees, mu, half=0.1):
    """A cube of half extent `half` resting on a plane tilted by `degrees` about y (mu_s = mu_d = mu on both
    materials), PhysX's default 4 position iterations; returns (scene, box, unit down-slope direction)."""
    a = np.radians(degrees)
    n = np.array([np.sin(a), 0.0, np.cos(a)])
    scene = artic.Scene(1, solver_type=solver)
    scene.add_actor(artic.create_ground_plane(normal=n, material=Material(mu, mu, 0.0)))
    rot = np.array([[np.cos(a), 0.0, np.sin(a)], [0.0, 1.0, 0.0], [-np.sin(a), 0.0, np.cos(a)]])  # z onto n
    b = body(Box((half, half, half)), material=Material(mu, mu, 0.0))
    b.set_global_pose(Transform(half * n, quat_from_matrix(rot)))
    scene.add_actor(b)
    return scene, b, np.array([np.cos(a), 0.0, -np.sin(a)])


@pytest.mark.parametrize("solver", SOLVERS)
def test_static_friction_holds_a_position_on_a_slope(solver):
    """tan 20 deg < mu_s = 0.5: the box must not move at all. Patch friction keeps its anchors while it sticks and
    pulls their drift back, so over 10 s at 60 Hz it stays within a micrometre (friction that only stops the
    velocity lets a small residual slip add up step after step)."""
    scene, b, down = _box_on_slope(solver, 20.0, 0.5)
    poses, vels = run(scene, [b], 600, 1.0 / 60.0)
    assert np.abs((poses[:, 0, :3] - poses[0, 0, :3]) @ down).max() < 1e-6
    assert np.abs(vels[:, 0, :3]).max() < 1e-4
    np.testing.assert_allclose(scene.get_link_poses(b)[:, 0], scene.get_actor_pose(b))  # a body is its one link
    report = scene.get_contacts(b)
    # identity: the contacts carry the weight (normal and friction parts together)
    np.testing.assert_allclose(report.total_force()[0], [0.0, 0.0, b.mass * G], atol=1e-3 * b.mass * G)


@pytest.mark.parametrize("solver", SOLVERS)
def test_small_box_with_one_anchor_holds_on_a_slope(solver):
    """A 1.6 cm cube: its face contacts lie within the 2.5 cm friction correlation distance, so the patch has one
    anchor, which cannot resist a twist. At the patch's centroid it carries the load without a moment; at a corner
    the box spun about the normal and wandered ~0.5 m in 10 s."""
    scene, b, _ = _box_on_slope(solver, 20.0, 0.5, half=0.008)
    poses, _ = run(scene, [b], 600, 1.0 / 60.0)
    assert np.abs(poses[:, 0, :3] - poses[0, 0, :3]).max() < 1e-6
    # no spin either: float32 rounding turns it by ~3e-3 rad over the 10 s (1 - |q.q0| 1.3e-6 under PGS), where the
    # anchor at a corner spun it about the normal by whole turns
    assert abs(abs(np.dot(poses[-1, 0, 3:], poses[0, 0, 3:])) - 1.0) < 1e-5


@pytest.mark.parametrize("solver", SOLVERS)
def test_box_slides_down_a_steep_slope_at_the_coulomb_rate(solver):
    """tan 35 deg > mu = 0.5: the patch breaks every step and slides with dynamic friction, the two anchors
    sharing mu_d N, so the box accelerates at exactly g (sin 35 - mu cos 35) (closed form, 1e-4)."""
    scene, b, down = _box_on_slope(solver, 35.0, 0.5)
    _, vels = run(scene, [b], 120, 1.0 / 60.0)
    v = vels[:, 0, :3] @ down
    a = np.radians(35.0)
    expected = G * (np.sin(a) - 0.5 * np.cos(a))
    assert (v[119] - v[59]) / 1.0 == pytest.approx(expected, rel=1e-4)
    assert np.abs(vels[:, 0, 1]).max() < 1e-4  # no sideways drift (float32 round-off only)


def test_static_friction_holds_on_a_slope_and_dynamic_slides():
    """Gravity tilted by 20 degrees: mu_s = 0.5 > tan 20 holds the box; mu_s = mu_d = 0.2 < tan 20 lets it slide
    with acceleration g (sin - mu cos)."""
    a = np.radians(20.0)
    for mu, moves in ((0.5, False), (0.2, True)):
        scene = artic.Scene(1, gravity=(G * np.sin(a), 0.0, -G * np.cos(a)))
        scene.add_actor(artic.create_ground_plane(material=Material(mu, mu, 0.0)))
        b = body(Box((0.2, 0.2, 0.1)), pose=(0.0, 0.0, 0.1), material=Material(mu, mu, 0.0))
        scene.add_actor(b)
        dt = 1.0 / 240.0
        run(scene, [b], 20, dt)
        _, vels = run(scene, [b], 120, dt)
        vx = vels[:, 0, 0]
        if moves:
            acc = np.polyfit(np.arange(len(vx)) * dt, vx, 1)[0]
            assert acc == pytest.approx(G * (np.sin(a) - mu * np.cos(a)), rel=0.03)
        else:
            assert np.abs(vx).max() < 1e-2


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("e", [0.5, 0.8])
def test_sphere_bounces_to_the_height_its_restitution_gives(solver, e):
    """A sphere dropped from 1 m leaves the plane at e times its impact speed and rises to e^2 times its fall
    height (to within the distance it travels in one step, the bounce happening at the start of the step)."""
    scene = scene_with_ground(solver, Material(0.5, 0.5, e))
    r = 0.1
    b = body(Sphere(r), pose=(0.0, 0.0, 1.0 + r), material=Material(0.5, 0.5, e))
    scene.add_actor(b)
    dt = 1.0 / 240.0
    poses, vels = run(scene, [b], 240, dt)
    vz = vels[:, 0, 2]
    k = int(np.argmax(vz > 0.0))  # first step going up
    assert k > 0
    assert vz[k] / -vz[k - 1] == pytest.approx(e, rel=0.01)
    z_bounce = poses[k - 1, 0, 2] - r  # the gap at which it turned
    apex = poses[k:, 0, 2].max() - r
    assert apex == pytest.approx(z_bounce + e * e * (1.0 - z_bounce), abs=float(abs(vz[k - 1]) * dt))


def test_below_bounce_threshold_there_is_no_bounce():
    """PhysX's bounce threshold (2 m/s): a sphere landing at 1 m/s stays on the plane even with restitution 1."""
    scene = scene_with_ground(material=Material(0.5, 0.5, 1.0))
    b = body(Sphere(0.1), pose=(0.0, 0.0, 0.1 + 0.05), material=Material(0.5, 0.5, 1.0))
    scene.add_actor(b)
    scene.set_actor_velocity(b, [0.0, 0.0, -1.0, 0.0, 0.0, 0.0])
    poses, _ = run(scene, [b], 60, 1.0 / 240.0)
    assert poses[20:, 0, 2].max() < 0.1 + 1e-3


@pytest.mark.parametrize(
    "shape, height",
    [
        (Sphere(0.1), 0.1),
        (Capsule(0.1, 0.2), 0.1),  # lying along x
        (Cylinder(0.1, 0.2, local_pose=Transform(q=(0.0, np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4)))), 0.2),  # upright
        (Cylinder(0.1, 0.2), 0.1),  # on its side
        (ConvexMesh(np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.2, 0.2) for z in (-0.05, 0.05)])), 0.05),
    ],
)
def test_every_shape_rests_on_the_plane_at_its_extent(shape, height):
    scene = scene_with_ground()
    b = body(shape, pose=(0.0, 0.0, height + 0.02))
    scene.add_actor(b)
    poses, vels = run(scene, [b], 240, 1.0 / 120.0)
    assert poses[-1, 0, 2] == pytest.approx(height, abs=1.5e-3)
    assert np.abs(vels[-1, 0]).max() < 1e-2
    np.testing.assert_allclose(scene.get_contacts(b).total_force()[0, 2], b.mass * G, rtol=0.03)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS, SolverType.DIRECT])
def test_rest_offsets_hold_the_surfaces_apart(solver):
    """PhysX's rest offset: a 0.1 m sphere with rest_offset 0.01 on a ground with rest_offset 0.02 rests 0.03
    above touching (centre at 0.13 m), its weight carried; a negative rest offset lets it rest that deep."""
    for sphere_rest, ground_rest in ((0.01, 0.02), (-0.004, 0.0)):
        scene = artic.Scene(1, solver_type=solver)
        ground = artic.create_ground_plane(material=Material(0.5, 0.5, 0.0))
        ground.shapes[0].rest_offset = ground_rest
        scene.add_actor(ground)
        b = body(Sphere(0.1, rest_offset=sphere_rest), pose=(0.0, 0.0, 0.1 + sphere_rest + ground_rest + 0.02))
        scene.add_actor(b)
        poses, vels = run(scene, [b], 240, 1.0 / 120.0)
        assert poses[-1, 0, 2] == pytest.approx(0.1 + sphere_rest + ground_rest, abs=1e-3)
        assert np.abs(vels[-1, 0]).max() < 1e-2
        np.testing.assert_allclose(scene.get_contacts(b).total_force()[0, 2], b.mass * G, rtol=0.03)


@pytest.mark.parametrize(
    "top",
    [
        Box((0.1, 0.1, 0.1)),
        Sphere(0.1),
        Capsule(0.1, 0.1),
        ConvexMesh(np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])),
    ],
)
def test_bodies_rest_on_a_static_box(top):
    """Box-box, sphere-box, capsule-box, hull-box: the body settles on the static box's top face."""
    scene = artic.Scene(1)
    table = artic.RigidStatic(Transform((0.0, 0.0, 0.25)), "table")
    table.attach_shape(Box((0.5, 0.5, 0.25)))
    scene.add_actor(table)
    b = body(top, pose=(0.05, -0.03, 0.5 + 0.1 + 0.01))
    scene.add_actor(b)
    poses, vels = run(scene, [b], 240, 1.0 / 120.0)
    assert poses[-1, 0, 2] == pytest.approx(0.6, abs=1.5e-3)
    assert np.abs(vels[-1, 0]).max() < 1e-2


def test_static_triangle_mesh_ground():
    """A box on a two-triangle static mesh rests like on a plane; a sphere rolls down a mesh ramp."""
    verts = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]], float)
    tris = np.array([[0, 1, 2], [0, 2, 3]])
    scene = artic.Scene(1)
    ground = artic.RigidStatic(name="mesh")
    ground.attach_shape(artic.TriangleMesh(verts, tris))
    scene.add_actor(ground)
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.3, 0.2, 0.12))
    scene.add_actor(b)
    poses, _ = run(scene, [b], 240, 1.0 / 120.0)
    assert poses[-1, 0, 2] == pytest.approx(0.1, abs=1.5e-3)


def test_contact_offset_makes_speculative_contacts_that_do_not_push():
    """A contact found within the contact offset (sphere 1 cm above the plane, offset 2 cm) exerts no force while
    the gap stays open: the body falls freely until it touches (every speculative contact kept, as PhysX; by
    default a step leaves this one out, since the fall cannot close the gap in it: test_speculative_reach.py)."""
    scene = scene_with_ground(speculative_contacts="all")
    b = body(Sphere(0.1), pose=(0.0, 0.0, 0.11))
    scene.add_actor(b)
    scene.step(1.0 / 240.0)
    report = scene.get_contacts(b)
    assert report.count[0] == 1
    assert report.separation[0, 0] == pytest.approx(0.01, abs=1e-4)
    assert np.allclose(report.force[0, 0], 0.0)
    assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(-G / 240.0, rel=1e-4)


def test_many_envs_are_independent():
    """Per-env poses: env 0 rests, env 1 lands later from higher up, env 2 is still falling."""
    scene = scene_with_ground(envs=3)
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1))
    scene.add_actor(b)
    poses = scene.get_actor_pose(b)
    poses[1, :3] = (1.0, 0.0, 0.5)
    poses[2, :3] = (5.0, 0.0, 6.0)
    scene.set_actor_pose(b, poses)
    out, _ = run(scene, [b], 45, 1.0 / 60.0)
    np.testing.assert_allclose(out[-1, :2, 2], 0.1, atol=1e-3)
    assert out[-1, 1, 0] == pytest.approx(1.0, abs=1e-3) and out[-1, 2, 2] > 1.0
    report = scene.get_contacts(b)
    assert list(report.count) == [4, 4, 0]
