"""The guide's finger pressing on a box ("Articulation Drive Stability"), the constraint order it depends on,
self-collision and filtering, contact capacity and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import (
    ArticError,
    ArticulationFlag,
    Axis,
    Box,
    CacheFlag,
    JointType,
    Material,
    Motion,
    SolverType,
    Sphere,
    Transform,
)
from tests.support.bodies import body, finger, run, scene_with_ground


def _distal_history(art, scene, dt, seconds):
    cache = art.create_cache()
    q = []
    for _ in range(int(round(seconds / dt))):
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q.append(cache.joint_position[0].copy())
    return np.array(q)


@pytest.mark.parametrize("iterations", [4, 64])
def test_stiff_finger_breaks_the_distal_limit_under_pgs(iterations):
    """A proximal drive that reaches its target within a step, a distal limit at 0, a static contact at the tip:
    the contact, solved last, wins every iteration and the distal joint ends far below its limit -- and more
    iterations make no qualitative difference, as the guide says."""
    art, scene = finger(1e8, 1e5, SolverType.PGS, iterations=(iterations, 1))
    q = _distal_history(art, scene, 1.0 / 60.0, 1.0)
    assert q[:, 1].min() < -0.5  # the limit is broken by tens of degrees
    assert scene.get_contacts(art).count[0] == 1


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_soft_finger_with_small_steps_keeps_the_distal_limit(solver):
    """The guide's remedy: a drive that does not reach its target within a step (kp 50, kd 5) and a smaller time
    step (1/240). The fingertip then rests on the box and the distal limit holds to a few milliradians with
    PhysX's default 4 iterations, and to 1e-4 rad with 32."""
    for iterations, tol in ((4, 5e-3), (32, 1e-4)):
        art, scene = finger(50.0, 5.0, solver, iterations=(iterations, 1))
        q = _distal_history(art, scene, 1.0 / 240.0, 2.0)
        assert q[:, 1].min() > -tol
        report = scene.get_contacts(art)
        assert report.count[0] == 1 and report.separation[0, 0] > -1e-3
        assert q[-1, 0] == pytest.approx(0.005, abs=1.5e-3)  # tip 5 mm above the box: ~0.005 rad of proximal travel


def test_static_contact_is_solved_after_its_link_joint_rows():
    """Order check behind the finger: with a single iteration the stiff finger's final velocities are the
    contact's (tip normal velocity at its target), not the limit's."""
    art, scene = finger(1e8, 1e5, SolverType.PGS, iterations=(1, 0))
    dt = 1.0 / 60.0
    q0 = _distal_history(art, scene, dt, dt)
    assert q0[-1, 1] < -0.05  # the limit, solved before the contact, lost


def _two_link_arm(flags=None, group=1, mask=1):
    """A fixed base, a free revolute link with a sphere that swings down onto a sphere on the base."""
    art = artic.Articulation("arm")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    if flags:
        art.set_articulation_flag(flags)
    art.sleep_threshold = 0.0
    base = art.create_link(None, Transform(), "base")
    base.attach_shape(Sphere(0.1, local_pose=Transform((0.5, 0.0, -0.3)), collision_group=group, collision_mask=mask))
    mid = art.create_link(base, Transform((0.0, 0.0, 0.0)), "mid")
    tip = art.create_link(mid, Transform((0.5, 0.0, 0.0)), "tip")
    tip.attach_shape(Sphere(0.1))
    for link in (mid, tip):
        link.mass = 1.0
        link.inertia = (0.01, 0.01, 0.01)
        j = link.inbound_joint
        j.set_joint_type(JointType.REVOLUTE if link is mid else JointType.FIX)
        j.friction_coefficient = 0.0
    tip.inbound_joint.parent_pose = Transform((0.5, 0.0, 0.0))
    mid.inbound_joint.set_motion(Axis.SWING1, Motion.FREE)
    scene = artic.Scene(1)
    scene.add_articulation(art)
    return art, scene


def test_self_collision_stops_a_link_on_another_link():
    """Self-collision (a dynamic contact between links of one articulation that are not parent and child): the
    tip sphere swings down under gravity and comes to rest on the base's sphere (centres 0.2 m apart)."""
    art, scene = _two_link_arm()
    q = _distal_history(art, scene, 1.0 / 120.0, 2.0)
    angle = q[-1, 0]
    tip = np.array([0.5 * np.cos(angle), 0.0, -0.5 * np.sin(angle)])
    assert np.linalg.norm(tip - np.array([0.5, 0.0, -0.3])) == pytest.approx(0.2, abs=2e-3)
    report = scene.get_contacts(art)
    assert report.count[0] == 1 and report.link_b[0, 0] == 0  # against the base link


@pytest.mark.parametrize(
    "flags, group, mask",
    [
        (ArticulationFlag.DISABLE_SELF_COLLISION, 1, 1),  # PhysX's flag
        (ArticulationFlag(0), 2, 2),  # groups that do not match: (1 & 2) | (2 & 1) == 0
    ],
)
def test_filtered_links_pass_through_each_other(flags, group, mask):
    art, scene = _two_link_arm(flags, group, mask)
    q = _distal_history(art, scene, 1.0 / 120.0, 1.0)
    assert q[:, 0].max() > 1.0  # swung past the base sphere
    assert scene.get_contacts(art).count[0] == 0


def test_parent_and_child_links_never_collide():
    """Overlapping boxes on a link and its child make no contacts, so the child swings freely."""
    art = artic.Articulation("pair")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    base = art.create_link(None, Transform(), "base")
    base.attach_shape(Box((0.3, 0.3, 0.3)))
    child = art.create_link(base, Transform(), "child")
    child.attach_shape(Box((0.3, 0.3, 0.3)))
    child.inbound_joint.set_joint_type(JointType.REVOLUTE)
    child.inbound_joint.set_motion(Axis.TWIST, Motion.FREE)
    scene = artic.Scene(1)
    scene.add_articulation(art)
    scene.step(1.0 / 60.0)
    assert scene.get_contacts(art).count[0] == 0


def test_overflowing_contacts_warn_are_counted_and_the_slots_grow():
    """A box resting on the ground with slots for 2 of its 4 corners: the first step drops two touching contacts,
    counts them and says so; the slots then grow to the box's 4 (its one pair's largest manifold), and the next
    steps keep every corner with no further warning. The box stays at rest."""
    scene = scene_with_ground(contact_capacity=2)
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1))
    scene.add_actor(b)
    with pytest.warns(
        RuntimeWarning,
        match=r"wanted up to 4 contact slots in 1 env\(s\), more than their 2: that "
        r"step dropped 2 touching contact\(s\); the next steps have 4 slots",
    ):
        scene.step(1.0 / 60.0)
    report = scene.get_contacts(b)
    assert report.count[0] == 2 and report.overflow[0] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        poses, _ = run(scene, [b], 30, 1.0 / 60.0)
    report = scene.get_contacts(b)
    assert report.count[0] == 4 and report.overflow[0] == 0
    assert np.abs(poses[:, 0, 2] - 0.1).max() < 1e-3


def test_capacity_covers_every_pair_by_default():
    """The default capacity is the sum of every pair's largest manifold, so a normal scene never overflows."""
    scene = scene_with_ground()
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1))
    scene.add_actor(b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(scene, [b], 5, 1.0 / 60.0)
    assert scene.get_contacts(b).overflow[0] == 0


def test_bad_contact_input_is_refused_clearly():
    with pytest.raises(ArticError, match="static_friction"):
        Material(-0.1, 0.5, 0.0)
    with pytest.raises(ArticError, match="restitution"):
        Material(0.5, 0.5, 1.5)
    with pytest.raises(ArticError, match="contact_offset"):
        art = artic.Articulation("a")
        art.create_link(None, None, "r").attach_shape(Sphere(0.1, contact_offset=-1.0))
    with pytest.raises(ArticError, match="RigidStatic"):
        artic.RigidDynamic(name="b").attach_shape(artic.Plane())
    with pytest.raises(ArticError, match="RigidStatic"):
        art = artic.Articulation("a")
        art.create_link(None, None, "r").attach_shape(artic.Plane())
    with pytest.raises(ArticError, match="collision_group"):
        artic.RigidStatic().attach_shape(Box((1, 1, 1), collision_group=-1))
    with pytest.raises(ArticError, match="convex hull"):
        artic.RigidDynamic().attach_shape(artic.ConvexMesh(np.zeros((5, 3)))).volume_com_inertia()
    with pytest.raises(ArticError, match="triangle"):
        artic.TriangleMesh(np.zeros((3, 3)), np.array([[0, 1, 5]]))
    with pytest.raises(ArticError, match="add_actor"):
        artic.Scene(1).add_actor("ground")
    with pytest.raises(ArticError, match="shape"):
        scene = scene_with_ground()
        b = body(Box((0.1, 0.1, 0.1)))
        scene.add_actor(b)
        scene.set_actor_velocity(b, np.zeros(5))
    with pytest.raises(ArticError, match="height"):
        artic.create_ground_plane(height=float("nan"))
    for bad in (0.0, -0.01, float("nan"), "far"):
        with pytest.raises(ArticError, match="friction_correlation_distance"):
            artic.Scene(1, friction_correlation_distance=bad)


def test_convex_hull_mass_properties_match_a_box():
    """A hull of a box's corners has the box's volume and inertia (closed form)."""
    pts = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.2, 0.2) for z in (-0.3, 0.3)])
    hull = artic.ConvexMesh(pts)
    box = Box((0.1, 0.2, 0.3))
    v1, c1, i1 = hull.volume_com_inertia()
    v2, c2, i2 = box.volume_com_inertia()
    assert v1 == pytest.approx(v2)
    np.testing.assert_allclose(c1, c2, atol=1e-12)
    np.testing.assert_allclose(i1, i2, rtol=1e-9)


def test_full_slots_keep_the_contacts_that_bear_loads():
    """A box resting on the ground among static spheres 1 cm from it (within the contact offsets), the spheres
    added first so that their speculative contacts come first in the solve order and the ground's last. With slots
    for 6, the first step leaves the speculative ones out rather than the ground's (before, the box fell through the
    ground: z -0.08 m after 0.3 s) and says so; the slots then grow to hold them all."""
    scene = artic.Scene(1, contact_capacity=6, speculative_contacts="all")
    for k, (x, y) in enumerate([(s * 0.16, t) for s in (-1, 1) for t in (-0.08, 0.0, 0.08)]):
        for p in ((x, y), (y, x)):  # 1 cm from the box's faces
            ball = artic.RigidStatic(Transform([p[0], p[1], 0.1]), name=f"ball{k}{p}")
            ball.attach_shape(Sphere(0.05))
            scene.add_actor(ball)
    scene.add_actor(artic.create_ground_plane(material=Material(0.5, 0.5, 0.0)))
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1))
    scene.add_actor(b)
    with pytest.warns(RuntimeWarning, match="kept the touching contacts and left out the speculative ones"):
        scene.step(1.0 / 60.0)
    report = scene.get_contacts(b)
    assert report.count[0] == 4 and report.overflow[0] == 0  # the ground's four corners
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        poses, _ = run(scene, [b], 60, 1.0 / 60.0)
    report = scene.get_contacts(b)
    assert report.count[0] > 6 and report.overflow[0] == 0  # now the spheres' speculative contacts too
    assert np.abs(poses[:, 0, 2] - 0.1).max() < 1e-3
