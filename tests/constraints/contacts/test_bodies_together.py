"""Contacts between different articulations and rigid bodies: blocks (one forest per env), the box-box test, and
the closed forms and identities they must satisfy."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import ArticulationFlag, Axis, JointType, Material, Motion, SolverType, Transform
from tests.support.bodies import G, body, scene_with_ground

BOX = 0.1  # half extent [m]
MASS = 1000.0 * (2 * BOX) ** 3  # 8 kg at the default density


def _pendulum(name: str, x: float) -> artic.Articulation:
    art = artic.Articulation(name)
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.sleep_threshold = 0.0
    root = art.create_link(None, Transform((x, 0.0, 2.0)), "base")
    link = art.create_link(root, Transform((x + 0.3, 0.0, 2.0)), "arm")
    link.mass = 1.0
    link.inertia = (1e-3, 0.01, 0.01)
    j = link.inbound_joint
    j.set_joint_type(JointType.REVOLUTE)
    j.set_motion(Axis.SWING1, Motion.FREE)
    j.child_pose = Transform((-0.3, 0.0, 0.0))
    j.friction_coefficient = 0.0
    link.attach_shape(artic.Capsule(0.05, 0.2))
    return art


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_articulations_in_one_block_step_as_they_do_alone(solver):
    """Identity: a pendulum and a falling box that can collide but never meet share one block (one forest), and
    their trajectories equal those each has alone in its own scene."""

    def alone(make):
        scene = artic.Scene(1, solver_type=solver)
        obj = make()
        (scene.add_actor if isinstance(obj, artic.RigidDynamic) else scene.add_articulation)(obj)
        return scene, obj

    def box():
        return body(artic.Box((BOX, BOX, BOX)), pose=(5.0, 0.0, 3.0), name="box")

    together = artic.Scene(1, solver_type=solver)
    pend, b = _pendulum("pendulum", 0.0), box()
    together.add_articulation(pend)
    together.add_actor(b)
    assert len(together._blocks) == 1 and len(together._blocks[0].arts) == 2
    s1, pend1 = alone(lambda: _pendulum("pendulum", 0.0))
    s2, b2 = alone(box)
    c, c1 = pend.create_cache(), pend1.create_cache()
    for _ in range(120):
        for s in (together, s1, s2):
            s.step(1.0 / 120.0)
    pend.copy_internal_state_to_cache(c, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
    pend1.copy_internal_state_to_cache(c1, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
    assert abs(c.joint_position[0, 0]) > 0.5  # it swung
    np.testing.assert_allclose(c.joint_position, c1.joint_position, atol=1e-5)
    np.testing.assert_allclose(c.joint_velocity, c1.joint_velocity, atol=1e-4)
    np.testing.assert_allclose(together.get_actor_pose(b), s2.get_actor_pose(b2), atol=1e-5)
    np.testing.assert_allclose(together.get_actor_velocity(b), s2.get_actor_velocity(b2), atol=1e-5)


def test_blocks_follow_collision_groups_and_regrouping_keeps_state():
    """Bodies whose groups cannot collide get blocks of their own; adding a body that can touch a moving one merges
    their blocks without disturbing its state: the box keeps falling freely (z = z0 - g t^2 / 2)."""
    scene = artic.Scene(1)
    a = body(artic.Box((BOX, BOX, BOX)), pose=(0.0, 0.0, 10.0), name="a")
    scene.add_actor(a)
    for _ in range(30):
        scene.step(1.0 / 60.0)
    z_before, v_before = scene.get_actor_pose(a)[0, 2], scene.get_actor_velocity(a)[0, 2]
    other = artic.Sphere(0.1)
    other.collision_group, other.collision_mask = 2, 2  # cannot meet a's group 1
    lone = body(other, pose=(3.0, 0.0, 10.0), name="lone")
    scene.add_actor(lone)
    assert len(scene._blocks) == 2
    b = body(artic.Sphere(0.1), pose=(-3.0, 0.0, 10.0), name="b")
    scene.add_actor(b)
    assert sorted(len(k.arts) for k in scene._blocks) == [1, 2]
    assert scene.get_actor_pose(a)[0, 2] == pytest.approx(z_before, abs=1e-6)
    assert scene.get_actor_velocity(a)[0, 2] == pytest.approx(v_before, abs=1e-6)
    for _ in range(30):
        scene.step(1.0 / 60.0)
    t = 60 / 60.0
    # semi-implicit Euler: z = z0 - g dt^2 (1 + 2 + ... + n)
    expected = 10.0 - G * (1.0 / 60.0) ** 2 * 60 * 61 / 2
    assert scene.get_actor_pose(a)[0, 2] == pytest.approx(expected, abs=1e-4)
    assert scene.get_actor_velocity(a)[0, 2] == pytest.approx(-G * t, abs=1e-4)
    scene.remove_actor(b)
    assert len(scene._blocks) == 2
    scene.step(1.0 / 60.0)
    assert scene.get_actor_velocity(a)[0, 2] == pytest.approx(-G * (t + 1.0 / 60.0), abs=1e-4)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_box_on_box_forces_balance(solver):
    """A box resting on a box on the ground: after 2 s the upper box's contacts carry m g, the lower box's ground
    contacts (m0 + m1) g, and the two boxes' reports of their shared contacts are equal and opposite."""
    scene = scene_with_ground(solver)
    lower = body(artic.Box((BOX, BOX, BOX)), pose=(0.0, 0.0, BOX), name="lower")
    upper = body(artic.Box((BOX, BOX, BOX)), pose=(0.0, 0.0, 3 * BOX + 0.002), name="upper")
    for b in (lower, upper):
        b.articulation.set_solver_iteration_counts(16, 1)
        scene.add_actor(b)
    for _ in range(120):
        scene.step(1.0 / 60.0)
    assert scene.get_actor_pose(upper)[0, 2] == pytest.approx(3 * BOX, abs=1e-3)
    ru, rl = scene.get_contacts(upper), scene.get_contacts(lower)
    assert ru.total_force()[0] == pytest.approx([0.0, 0.0, MASS * G], rel=0.02, abs=0.05)
    lower_index = scene.articulations.index(lower.articulation)
    assert np.all(ru.articulation_b[0, : ru.count[0]] == lower_index)
    assert np.all(ru.normal[0, : ru.count[0], 2] > 0.99)  # pointing from the lower box up into the upper one
    shared = rl.articulation_b[0, : rl.count[0]] == scene.articulations.index(upper.articulation)
    ground = rl.articulation_b[0, : rl.count[0]] == -1
    np.testing.assert_allclose(rl.force[0, : rl.count[0]][shared].sum(axis=0), -ru.total_force()[0], atol=1e-3)
    assert rl.force[0, : rl.count[0]][ground].sum(axis=0)[2] == pytest.approx(2 * MASS * G, rel=0.02)


@pytest.mark.parametrize(
    "solver, iterations, sink",
    [(SolverType.PGS, 4, 1e-2), (SolverType.TGS, 4, 3e-3), (SolverType.TGS, 16, 2e-3), (SolverType.PGS, 32, 2e-3)],
)
def test_stack_of_five_boxes_stays_up(solver, iterations, sink):
    """Five 0.2 m boxes stacked on the ground stand for 10 s at dt = 1/60, with PhysX's default 4 position
    iterations too: every box within 0.1 mm of the column (patch friction keeps its anchors, so nothing walks),
    and within `sink` of its height (a 4-iteration PGS stack settles ~8 mm into its five contacts) and still."""
    scene = scene_with_ground(solver)
    boxes = []
    for k in range(5):
        b = body(artic.Box((BOX, BOX, BOX)), pose=(0.0, 0.0, BOX + 2 * BOX * k), name=f"box{k}")
        b.articulation.set_solver_iteration_counts(iterations, 1)
        scene.add_actor(b)
        boxes.append(b)
    heights = []
    for step in range(600):
        scene.step(1.0 / 60.0)
        if step in (299, 599):
            heights.append([scene.get_actor_pose(b)[0, 2] for b in boxes])
    p = np.array([scene.get_actor_pose(b)[0, :3] for b in boxes])
    assert np.abs(p[:, :2]).max() < 1e-4
    np.testing.assert_allclose(p[:, 2], BOX + 2 * BOX * np.arange(5), atol=sink)
    np.testing.assert_allclose(heights[0], heights[1], atol=1e-4)  # settled at 5 s, no creep after


@pytest.mark.parametrize("e, m2", [(1.0, 1.0), (0.5, 1.0), (1.0, 3.0), (0.5, 3.0)])
def test_head_on_collision_follows_newtons_restitution_law(e, m2):
    """Two spheres in free space meet head on at 3 m/s each (above the 2 m/s bounce threshold), no friction:
    momentum is conserved and the separation speed is e times the approach speed, which fixes the 1D closed form
    v1' = ((m1 - e m2) v1 + (1 + e) m2 v2) / (m1 + m2) and the same with 1 and 2 exchanged."""
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0))
    mat = Material(0.0, 0.0, e)
    s1 = body(artic.Sphere(0.1), pose=(-0.3, 0.0, 0.0), name="s1", material=mat)
    s2 = body(artic.Sphere(0.1), pose=(0.3, 0.0, 0.0), name="s2", material=Material(0.0, 0.0, e), density=1000.0 * m2)
    for b in (s1, s2):
        scene.add_actor(b)
    scene.set_actor_velocity(s1, [3.0, 0, 0, 0, 0, 0])
    scene.set_actor_velocity(s2, [-3.0, 0, 0, 0, 0, 0])
    m1 = s1.link.mass
    m2_kg = s2.link.mass
    for _ in range(60):
        scene.step(1.0 / 120.0)
    v1, v2 = scene.get_actor_velocity(s1)[0, 0], scene.get_actor_velocity(s2)[0, 0]
    u1, u2 = 3.0, -3.0
    assert m1 * v1 + m2_kg * v2 == pytest.approx(m1 * u1 + m2_kg * u2, abs=1e-3 * m1)
    assert v1 == pytest.approx(((m1 - e * m2_kg) * u1 + (1 + e) * m2_kg * u2) / (m1 + m2_kg), abs=0.03)
    assert v2 == pytest.approx(((m2_kg - e * m1) * u2 + (1 + e) * m1 * u1) / (m1 + m2_kg), abs=0.03)


def test_box_box_finds_edge_edge_contacts():
    """Two boxes turned 45 degrees about crossing axes meet edge to edge: the separating-axis test reports one
    contact at the crossing with the gap between the edges (a corner-sampling test finds none)."""
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), speculative_contacts="all")
    s, c = np.sin(np.pi / 8), np.cos(np.pi / 8)  # quaternions of 45-degree turns
    base = artic.RigidStatic(Transform((0.0, 0.0, 0.0), (s, 0.0, 0.0, c)), "base")  # top edge along x
    base.attach_shape(artic.Box((BOX, BOX, BOX)))
    scene.add_actor(base)
    gap = 0.005
    z = 2 * BOX * np.sqrt(2.0) + gap
    top = artic.RigidDynamic(Transform((0.0, 0.0, z), (0.0, s, 0.0, c)), "top")  # bottom edge along y
    top.attach_shape(artic.Box((BOX, BOX, BOX)))
    top.update_mass_and_inertia(1000.0)
    scene.add_actor(top)
    scene.step(1.0 / 120.0)
    r = scene.get_contacts(top)
    assert r.count[0] == 1
    assert r.separation[0, 0] == pytest.approx(gap, abs=1e-5)
    np.testing.assert_allclose(r.normal[0, 0], [0.0, 0.0, 1.0], atol=1e-5)
    np.testing.assert_allclose(r.point[0, 0], [0.0, 0.0, BOX * np.sqrt(2.0) + gap / 2], atol=1e-5)
