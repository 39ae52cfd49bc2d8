"""Speculative contacts a step cannot reach (collision/reach.py): Scene(speculative_contacts='reachable'), the
default, leaves out a pair whose surfaces are apart and cannot meet within the step; 'all' keeps every pair within
the contact offsets, as PhysX. The identity: a row left out is one whose impulse would have stayed 0, so the motion
is bitwise PhysX's ('all'), on the allegro hand resting on a table (half its points left out), a ball that falls
onto the ground from rest, a fast ball, the guide's stiff finger (a drive that reaches its target in a step) and a
link that an applied joint force throws at a box."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import ArticulationFlag, Box, CacheFlag, Drive, DriveType, JointType, Motion, SolverType, Sphere, Transform
from artic.errors import StateError, ValidationError
from tests.support.bodies import body, finger, run, scene_with_ground
from tests.support.models import robot_path

SOLVERS = [SolverType.PGS, SolverType.TGS]


def _allegro_on_a_table(mode: str, solver: SolverType, curl: float = 0.5):
    """example-robot-data's allegro hand (boxes and spheres, floating) palm down on a table, PD drives curling its
    fingers (bench_contact's scene): (scene, articulation)."""
    art = artic.load_urdf(robot_path("allegro"), fix_base=False)
    art.set_root_global_pose(Transform((0.0, 0.0, 0.04), (0.0, 0.7071068, 0.0, 0.7071068)))
    for link in art.get_links()[1:]:
        j = link.inbound_joint
        for ax in j.dof_axes():
            lim = j.get_limit_params(ax)
            j.set_drive_params(ax, Drive(3.0, 0.1, 1e6, DriveType.FORCE))
            j.set_drive_target(ax, float(np.clip(curl, lim.low, lim.high)))
    art.sleep_threshold = 0.0
    scene = artic.Scene(1, solver_type=solver, speculative_contacts=mode)
    table = artic.RigidStatic(Transform((0.0, 0.0, -0.05)), "table")
    table.attach_shape(Box((0.3, 0.3, 0.05)))
    scene.add_actor(table)
    scene.add_articulation(art)
    return scene, art


def _positions(art, scene):
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.ALL)
    return np.concatenate([np.asarray(cache.root_transform).ravel(), np.asarray(cache.joint_position).ravel()])


@pytest.mark.parametrize("solver", SOLVERS + [SolverType.DIRECT])
def test_the_allegro_hand_steps_bitwise_as_with_every_contact(solver):
    """The hand settles on its table over 0.5 s: every pose bitwise equal to the one with every speculative
    contact under PGS and TGS, with fewer than 0.7 times the contacts once it rests (72 -> ~38 points; 72 -> 21
    under the direct solver, which rests it exactly). The direct solver's LCP among a face's redundant contacts has
    no unique answer, and its pivots take another path without the rows left out: within 1e-4 (3e-5 seen)."""
    scenes = {m: _allegro_on_a_table(m, solver) for m in ("reachable", "all")}
    counts = {m: [] for m in scenes}
    for step in range(100):
        for m, (scene, art) in scenes.items():
            scene.step(0.005)
            counts[m].append(scene.get_contacts(art).count[0])
        if step % 10 == 9:
            q = {m: _positions(art, scene) for m, (scene, art) in scenes.items()}
            assert np.all(np.isfinite(q["all"]))
            if solver == SolverType.DIRECT:
                np.testing.assert_allclose(q["reachable"], q["all"], atol=1e-4, err_msg=f"step {step}")
            else:
                np.testing.assert_array_equal(q["reachable"], q["all"], err_msg=f"step {step}")
    rest = slice(50, None)
    assert np.mean(counts["reachable"][rest]) < 0.7 * np.mean(counts["all"][rest])
    assert min(counts["reachable"][rest]) > 8  # the touching points stay


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_ball_at_rest_above_the_ground_gets_its_contact_once_it_can_reach(solver):
    """A 0.1 m ball at rest 1 cm above the ground (offset 2 cm): no contact while its fall cannot close the gap in a
    step (2 g h^2 = 0.34 mm at 240 Hz), one before it lands; it lands and rests exactly as with every contact."""
    runs = {}
    for mode in ("reachable", "all"):
        scene = scene_with_ground(solver, speculative_contacts=mode)
        b = body(Sphere(0.1), pose=(0.0, 0.0, 0.11))
        scene.add_actor(b)
        poses, counts = [], []
        for _ in range(60):
            p, _ = run(scene, [b], 1, 1.0 / 240.0)
            poses.append(p[0, 0])
            counts.append(scene.get_contacts(b).count[0])
        runs[mode] = np.array(poses), counts
    np.testing.assert_array_equal(runs["reachable"][0], runs["all"][0])
    assert runs["all"][1][0] == 1 and runs["reachable"][1][0] == 0
    assert runs["reachable"][1][-1] == 1
    assert runs["reachable"][0][-1, 2] == pytest.approx(0.1, abs=1e-3)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_fast_ball_keeps_its_speculative_contact(solver):
    """A ball 1.5 cm above the ground coming down at 3 m/s in 10 ms steps would cross 3 cm: its contact is kept at
    once and it stops on the surface, as with every contact."""
    out = {}
    for mode in ("reachable", "all"):
        scene = scene_with_ground(solver, speculative_contacts=mode)
        b = body(Sphere(0.1), pose=(0.0, 0.0, 0.115))
        scene.add_actor(b)
        scene.set_actor_velocity(b, [0.0, 0.0, -3.0, 0.0, 0.0, 0.0])
        p, _ = run(scene, [b], 1, 0.01)
        assert scene.get_contacts(b).count[0] == 1
        out[mode] = p
    np.testing.assert_array_equal(out["reachable"], out["all"])
    assert out["reachable"][0, 0, 2] > 0.1 - 1e-3


def test_the_stiff_finger_keeps_its_tip_contact_from_rest():
    """The guide's finger: a drive of stiffness 1e8 throws the tip, at rest 5 mm above the box, onto it within the
    first step. The drive's bound (what an implicit PD step can give) keeps the contact, and the finger moves
    bitwise as with every contact."""
    hist = {}
    for mode in ("reachable", "all"):
        art, scene = finger(1e8, 1e5, SolverType.PGS, speculative=mode)
        qs = []
        for _ in range(30):
            scene.step(1.0 / 60.0)
            qs.append(_positions(art, scene))
            assert scene.get_contacts(art).count[0] == 1
        hist[mode] = np.array(qs)
    np.testing.assert_array_equal(hist["reachable"], hist["all"])


def _pendulum_over_a_box(mode: str):
    """A 0.5 m rod of 1 kg on a fixed revolute joint about y, its tip (a 5 cm sphere) 5 mm above a static box, no
    gravity: only an applied joint force can bring it down."""
    art = artic.Articulation("rod")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.sleep_threshold = 0.0
    root = art.create_link(None, Transform(), "base")
    rod = art.create_link(root, Transform((0.25, 0.0, 0.0)), "rod")
    rod.mass = 1.0
    rod.inertia = (1e-3, 0.5 / 12.0 * 0.25, 0.5 / 12.0 * 0.25)
    j = rod.inbound_joint
    j.set_joint_type(JointType.REVOLUTE)
    j.child_pose = Transform((-0.25, 0.0, 0.0))
    j.set_motion(artic.Axis.SWING1, Motion.FREE)
    rod.attach_shape(Sphere(0.05, local_pose=Transform((0.25, 0.0, 0.0))))
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), speculative_contacts=mode)
    box = artic.RigidStatic(Transform((0.5, 0.0, -0.155)), "box")
    box.attach_shape(Box((0.2, 0.2, 0.1)))
    scene.add_actor(box)
    scene.add_articulation(art)
    return art, scene


def test_an_applied_joint_force_keeps_the_contact_it_brings_about():
    """A joint torque of 50 N m on the resting rod: its tip would move ~10 mm in a 1/60 s step, across the 5 mm gap.
    The force's bound keeps the contact from the first step, the rod stops on the box, and there it stays, pressed
    at a separation of ~0.5 um with no motion and no command change to show for it (a touching contact is kept:
    the load it holds would otherwise throw the rod through the box, as it did before that rule), all as with
    every contact."""
    hist = {}
    for mode in ("reachable", "all"):
        art, scene = _pendulum_over_a_box(mode)
        cache = art.create_cache()
        cache.joint_force[:] = 50.0
        art.apply_cache(cache, CacheFlag.FORCE)
        qs = []
        for _ in range(20):
            scene.step(1.0 / 60.0)
            qs.append(_positions(art, scene))
            assert scene.get_contacts(art).count[0] == 1
        hist[mode] = np.array(qs)
    np.testing.assert_array_equal(hist["reachable"], hist["all"])
    assert hist["reachable"][-1, -1] == pytest.approx(0.01, abs=2e-3)  # 5 mm at 0.5 m: the tip on the box


def test_the_setting_is_checked_and_fixed():
    with pytest.raises(ValidationError, match="speculative_contacts must be 'reachable'.*or 'all'"):
        artic.Scene(1, speculative_contacts="none")
    scene = artic.Scene(1)
    assert scene.speculative_contacts == "reachable"
    with pytest.raises(StateError, match="speculative_contacts is fixed at construction"):
        scene.speculative_contacts = "all"


@pytest.mark.parametrize("solver", SOLVERS)
def test_an_impact_passes_on_to_the_neighbour_within_the_step(solver):
    """A box sliding at 4 m/s hits a resting box whose neighbour is 3 mm away (at 240 Hz, where gravity's reach is
    0.7 mm): the struck box moves ~8 mm in that step, so its pair with the neighbour must act in the same step
    although nothing moved before. A link in a kept link-link pair keeps all its pairs, and the three boxes move
    bitwise as with every contact (without that rule the step leaves the pair out: checked by removing it)."""
    out = {}
    for mode in ("reachable", "all"):
        scene = scene_with_ground(solver, speculative_contacts=mode)
        boxes = [
            body(Box((0.05, 0.05, 0.05)), pose=(x, 0.0, 0.05), name=f"b{k}") for k, x in enumerate((-0.3, 0.0, 0.103))
        ]
        for b in boxes:
            scene.add_actor(b)
        run(scene, boxes, 20, 1.0 / 240.0)  # settle
        scene.set_actor_velocity(boxes[0], [4.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        poses = []
        for _ in range(80):
            scene.step(1.0 / 240.0)
            poses.append([scene.get_actor_pose(b)[0] for b in boxes])
        out[mode] = np.array(poses)  # (steps, box, 7)
    np.testing.assert_array_equal(out["reachable"], out["all"])
    assert out["all"][-1, 2, 0] > 0.2  # the neighbour was pushed along
