"""The direct solver (SolverType.DIRECT, issue 13) on whole scenes: it agrees with PGS run to convergence where the
problem is well posed, it holds what Gauss-Seidel cannot (the guide's finger, a 1:1000 mass ratio, an
over-constrained four-bar, a heavy box on a light one, a biped's ground reaction), and a soft joint range is a
deadzone: no force inside its band, the implicit spring of the ODE paper's eq. 13 beyond it.

Scenes: tests/support/direct_scenes.py, tests/support/bodies.py (the finger, boxes), examples/four_bar.py."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import artic
from artic import Axis, Box, CacheFlag, SolverType
from artic.math.np_spatial import quat_rotate, quat_to_matrix
from tests.support.bodies import G, body, finger, scene_with_ground
from tests.support.degenerate import box_stack, spinning_hinge
from tests.support.direct_scenes import CONVERGED, ball_chain, biped, chain, panda, slider_with_soft_range
from tests.support.models import robot_path
from tests.support.scenes import rod_pendulum, run

DIRECT = SolverType.DIRECT
PGS = SolverType.PGS
DT = 1.0 / 60.0


def _no_fallback(scene, obj):
    report = scene.get_solver_report(obj)
    assert not report["fell_back"].any() and report["fallback_count"].sum() == 0
    return report


def _joint_history(art, scene, steps, dt=DT):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a PGS fallback would warn
        return run(art, scene, steps, dt)


# --- agreement with PGS run to convergence ---------------------------------------------------------------------


def test_chain_with_drives_and_limits_agrees_with_converged_pgs():
    """A three-link chain with a force drive, an acceleration drive and two joint limits that engage and hold
    (PhysX's link cfm and joint friction left on): over 1 s the joint positions and velocities of DIRECT equal
    those of PGS at 255/255 iterations to 1e-4 at every step."""
    q_d, qd_d = _joint_history(*chain(DIRECT, (4, 1)), 60)
    q_p, qd_p = run(*chain(PGS, CONVERGED), 60)
    assert np.abs(q_d[-1, 0, 1:] - [0.3, 0.2]).max() < 1e-5  # both limits engaged at the end
    np.testing.assert_allclose(q_d, q_p, atol=1e-4, rtol=0)
    np.testing.assert_allclose(qd_d, qd_p, atol=1e-4, rtol=0)


def test_resting_box_agrees_with_converged_pgs():
    """A 0.2 x 0.4 x 0.6 m box released 1 mm above the ground plane: it lands on its four corner contacts and rests;
    over 1 s its pose and velocity under DIRECT equal PGS's at 255/255 iterations to 1e-5, and it rests on the
    plane (height 0.3 m to 1e-4)."""
    out = []
    for solver, iterations in ((DIRECT, (4, 1)), (PGS, CONVERGED)):
        scene = scene_with_ground(solver)
        b = body(Box((0.1, 0.2, 0.3)), pose=(0.0, 0.0, 0.301))
        b.set_solver_iteration_counts(*iterations)
        scene.add_actor(b)
        poses, vels = [], []
        for _ in range(60):
            scene.step(DT)
            poses.append(scene.get_actor_pose(b)[0])
            vels.append(scene.get_actor_velocity(b)[0])
        if solver == DIRECT:
            _no_fallback(scene, b)
            assert scene.get_contacts(b).count[0] == 4
        out.append((np.array(poses), np.array(vels)))
    (p_d, v_d), (p_p, v_p) = out
    assert p_d[-1, 2] == pytest.approx(0.3, abs=1e-4)
    np.testing.assert_allclose(p_d, p_p, atol=1e-5, rtol=0)
    np.testing.assert_allclose(v_d, v_p, atol=1e-5, rtol=0)


def test_panda_with_drives_agrees_with_converged_pgs():
    """The panda (URDF damping, finger mimic) with its arm on PD drives: over 1 s under gravity all nine joint
    positions and velocities of DIRECT equal PGS's at 255/255 iterations to 1e-4 at every step."""
    path = robot_path("panda")
    art, scene = panda(DIRECT, (4, 1), path)
    q_d, qd_d = _joint_history(art, scene, 60)
    _no_fallback(scene, art)
    q_p, qd_p = run(*panda(PGS, CONVERGED, path), 60)
    assert np.abs(q_d[-1, 0] - q_d[0, 0]).max() > 0.05  # the arm really moved
    np.testing.assert_allclose(q_d, q_p, atol=1e-4, rtol=0)
    np.testing.assert_allclose(qd_d, qd_p, atol=1e-4, rtol=0)


@pytest.mark.parametrize("limit", [None, (-0.6, 0.6)])
def test_rod_with_coulomb_and_viscous_joint_friction_agrees_with_converged_pgs(limit):
    """A rod pendulum whose joint has static, dynamic and viscous friction (0.5 N m, 0.3 N m, 0.2 N m s/rad), with
    and without a limit it falls onto: DIRECT's viscous row (the implicit damper, beside the Coulomb box) gives
    PGS's converged answer (sliding bound (dynamic + c |v|) h) to 1e-4 over 1 s."""
    kw = {"friction": (0.5, 0.3, 0.2), "limit": limit}
    art, scene = rod_pendulum(DIRECT, (4, 1), **kw)
    q_d, qd_d = _joint_history(art, scene, 60)
    _no_fallback(scene, art)
    q_p, qd_p = run(*rod_pendulum(PGS, CONVERGED, **kw), 60)
    assert q_d[-1, 0, 0] < -0.5  # it swung down
    np.testing.assert_allclose(q_d, q_p, atol=1e-4, rtol=0)
    np.testing.assert_allclose(qd_d, qd_p, atol=1e-4, rtol=0)


def test_return_from_beyond_a_limit_keeps_the_velocity_limit():
    """A rod started 0.5 rad above its [-0.3, 0.3] limit, its velocity limited to 2 rad/s: the limit's recovery
    velocity (erp 0.8 of the error per step, 24 rad/s) and the velocity limit contradict each other; as in PhysX
    (constraints/limit.py) the velocity limit wins and DIRECT brings the joint back by exactly 2/60 rad per step
    (1e-5 rad; closed form), as PGS at 255/255 iterations does."""
    qs = []
    for solver, iterations in ((DIRECT, (4, 1)), (PGS, CONVERGED)):
        art, scene = rod_pendulum(solver, iterations, limit=(-0.3, 0.3))
        art.get_links()[1].inbound_joint.set_max_joint_velocity(Axis.SWING2, 2.0)
        cache = art.create_cache()
        cache.joint_position[:] = 0.8
        art.apply_cache(cache, CacheFlag.POSITION)
        qs.append(_joint_history(art, scene, 10)[0][:, 0, 0])
    expected = 0.8 - 2.0 * DT * np.arange(1, 11)
    np.testing.assert_allclose(qs[0], expected, atol=1e-5, rtol=0)
    np.testing.assert_allclose(qs[1], expected, atol=1e-5, rtol=0)


# --- what Gauss-Seidel cannot do ---------------------------------------------------------------------------------


def _distal(art, scene, steps, dt=DT):
    cache = art.create_cache()
    q = []
    for _ in range(steps):
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q.append(cache.joint_position[0].copy())
    return np.array(q)


def test_stiff_finger_keeps_its_distal_limit():
    """The guide's finger ("nothing yields"): a proximal drive (kp 1e5, kd 1e2) that in one 1/60 s step covers
    94 % of the way to a target 1 rad beyond first contact, the distal limit at 0, the fingertip on a static box.
    PGS, even at 64 iterations, breaks the limit by more than 0.3 rad (measured 0.64); DIRECT holds it to 1e-4 rad
    at every step with the tip resting on the box (proximal angle ~0.005 rad, the 5 mm gap)."""
    art, scene = finger(1e5, 1e2, PGS, iterations=(64, 1))
    assert _distal(art, scene, 60)[:, 1].min() < -0.3
    art, scene = finger(1e5, 1e2, DIRECT)
    q = _distal(art, scene, 60)
    _no_fallback(scene, art)
    assert q[:, 1].min() > -1e-4
    report = scene.get_contacts(art)
    assert report.count[0] == 1 and report.separation[0, 0] > -1e-3
    assert q[-1, 0] == pytest.approx(0.005, abs=1.5e-3)


def test_stiffest_finger_keeps_its_distal_limit():
    """The guide's finger with the drive of tests/constraints/contacts/test_finger_and_filtering.py (kp 1e8, kd 1e5,
    reaching its target within one step): the distal limit holds to 1e-4 rad over 1 s with the tip on the box, and no
    step falls back. The drive, the limit and the contact are five rows on two dofs: only the drive's compliance
    (3.6e-5) decides the answer, so the solve's regularization stays below it (direct.REG_CFM_FRACTION) and the impulses
    of ~1e6 N m s are summed in float64."""
    art, scene = finger(1e8, 1e5, DIRECT)
    q = _distal(art, scene, 60)
    assert q[:, 1].min() > -1e-4
    report = scene.get_solver_report(art)
    assert report["fallback_count"][0] == 0


def test_unfinished_solve_falls_back_and_says_so():
    """A solve cut short by scene.direct_pivot_limit (1 pivot, where the kp 1e8 finger needs 4-5) leaves a point
    that violates the LCP conditions by far more than the failure threshold: DIRECT counts it as failed, solves
    the step with PGS, warns (RuntimeWarning) and reports it: fell_back, pivot_budget_hit, fallback_count = steps,
    the complementarity error of the rejected solve (> 1 rad/s). With the limit lifted, the same scene solves."""
    art, scene = finger(1e8, 1e5, DIRECT)
    scene.direct_pivot_limit = 1
    with pytest.warns(RuntimeWarning, match="direct solver could not solve"):
        _distal(art, scene, 10)
    report = scene.get_solver_report(art)
    assert report["fell_back"][0] and report["pivot_budget_hit"][0] and report["fallback_count"][0] == 10
    assert report["complementarity"][0] > 1.0
    scene.direct_pivot_limit = None
    _distal(art, scene, 5)
    report = scene.get_solver_report(art)
    assert not report["fell_back"][0] and report["fallback_count"][0] == 10
    with pytest.raises(artic.ValidationError, match="direct_pivot_limit must be a positive integer"):
        scene.direct_pivot_limit = 0


def _fallen_back_and_pgs(run):
    """run(solver, pivot_limit) -> (states over the steps, fallback counts or None)."""
    ours, falls = run(DIRECT, 1)
    theirs, _ = run(SolverType.PGS, None)
    return ours, falls, theirs


def test_a_step_that_falls_back_is_a_pgs_step():
    """A direct step leaves out M^-1, the rows' M^-1 g and responses, the contact patches' Delassus matrices and the
    fixed-tendon joints' directions, which only PGS reads (step_kernel._dense_minv); its fallback computes them
    (pgs.pgs_prerequisites). With the pivot budget at 1 every step falls back, and the trajectories are bitwise a
    PGS scene's: a 1:10 box stack (PhysX's patch friction and its anchors), the biped (stiff force drives, feet on
    the ground) and, where gymnasium-robotics is installed, the Shadow hand with its block (MuJoCo's pyramids,
    soft frictionloss, its fixed tendons given springs, explicit servos under random controls)."""

    def stack(solver, limit):
        scene, boxes = box_stack(solver, 10.0, 3, envs=2)
        if limit:
            scene.direct_pivot_limit = limit
        poses = []
        for _ in range(40):
            scene.step(0.01)
            poses.append([scene.get_actor_pose(b) for b in boxes])
        return np.array(poses), scene.get_solver_report(boxes[0])["fallback_count"] if limit else None

    def legs(solver, limit):
        art, scene = biped(solver, (4, 1))[:2]
        if limit:
            scene.direct_pivot_limit = limit
        poses = []
        for _ in range(40):
            scene.step(0.01)
            poses.append(scene.get_link_poses(art).copy())
        return np.array(poses), scene.get_solver_report(art)["fallback_count"] if limit else None

    runs = [stack, legs]
    if importlib.util.find_spec("gymnasium_robotics") is not None:

        def hand(solver, limit):
            import gymnasium_robotics

            path = Path(gymnasium_robotics.__file__).parent / "envs" / "assets" / "hand" / "manipulate_block.xml"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = artic.load_mjcf(path)
            for tendon in (t for a in model.articulations for t in a.get_fixed_tendons()):
                tendon.stiffness, tendon.damping = 2.0, 0.1  # springs: their couples act under PGS
            scene = artic.Scene(2, gravity=model.gravity, solver_type=solver)
            model.add_to(scene)
            if limit:
                scene.direct_pivot_limit = limit
            control = artic.MjcfControl(model, scene)
            rng = np.random.default_rng(1)
            poses = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the fallbacks' notices
                for k in range(60):
                    if k % 10 == 0:
                        control.set(rng.uniform(-0.5, 0.5, (2, len(model.actuators))))
                    scene.step(model.timestep)
                    poses.append(model.get_qpos(scene).copy())
            falls = scene.get_solver_report(model.articulations[0])["fallback_count"] if limit else None
            return np.array(poses), falls

        runs.append(hand)
    for case in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fallbacks' notices
            ours, falls, theirs = _fallen_back_and_pgs(case)
        assert (falls == len(ours)).all(), (case.__name__, falls)  # every step fell back
        assert np.array_equal(ours, theirs), (case.__name__, np.abs(ours - theirs).max())


def _worst_ball_error(solver, iterations, masses, steps):
    scene, bodies, joints = ball_chain(solver, iterations, masses)
    worst = 0.0
    for _ in range(steps):
        scene.step(DT)
        worst = max(worst, max(np.linalg.norm(scene.get_joint_frames(j).tcd[0, :3]) for j in joints))
    return worst, scene, bodies


@pytest.mark.parametrize("ratio", [1e3, 1e6])
def test_mass_ratio_chain_hangs(ratio):
    """Six bodies alternating 1 kg and `ratio` kg hang from the world on ball joints: over 2 s every joint's position
    error |C| (the origin of C in D) stays below 1e-5 m under DIRECT with no fallback (1:1e6 fell back on every step
    and came 123 m apart while a uniform regularization softened the light bodies' rows), and each joint carries the
    weight below it (statics: to 1e-4 of it). PGS stretches the 1:1000 chain by more than 1 cm even at 64 iterations
    (measured 3.9 m at 4, 0.19 m at 64), which the violation status reports (a RuntimeWarning naming the joint)
    instead of leaving it to the reader of the docs."""
    masses = [1.0, ratio] * 3
    worst, scene, bodies = _worst_ball_error(DIRECT, (4, 1), masses, 120)
    _no_fallback(scene, bodies[0])
    assert worst < 1e-5
    assert not scene.get_solver_report(bodies[0])["violated_joints"].any()
    for k, joint in enumerate(scene.joints):  # ball_chain adds them from the top down
        below = G * sum(masses[k:])
        force = scene.get_joint_forces(joint).wrench_a[0, :3]  # on the body below the joint
        np.testing.assert_allclose(force, [0.0, 0.0, below], rtol=0.0, atol=1e-4 * below)
    if ratio == 1e3:
        with pytest.warns(RuntimeWarning, match=r"hard joint error beyond .* joint 'ball\d+' env\(s\) 0"):
            assert _worst_ball_error(PGS, (64, 64), masses, 120)[0] > 1e-2


def _load_four_bar():
    path = Path(__file__).parents[2] / "examples" / "four_bar.py"
    spec = importlib.util.spec_from_file_location("four_bar_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hard_four_bar_holds():
    """The over-constrained four-bar (20 rows on 18 dofs) with rigid hinges, no compliance: under DIRECT it falls
    from the square (the crank turns by more than 0.1 rad in 0.15 s at dt 1 ms) while every hinge holds its
    position to 1e-5 m and its axis to 1e-5 rad: the regularization floor takes the redundant rows without a
    fallback."""
    four_bar = _load_four_bar()
    scene, bars, joints = four_bar.build_four_bar(1, 0.0, 0.0, DIRECT)
    start = four_bar.crank_angle(scene, bars)[0]
    lin = rot = 0.0
    for _ in range(150):
        scene.step(1e-3)
        for j in joints:
            frames = scene.get_joint_frames(j)
            lin = max(lin, np.linalg.norm(frames.tcd[0, :3]))
            rot = max(rot, 2.0 * np.linalg.norm(frames.terr[0, 3:6]))
    _no_fallback(scene, bars[1])
    assert abs(four_bar.crank_angle(scene, bars)[0] - start) > 0.1
    assert lin < 1e-5 and rot < 1e-5


def _four_bar_energy(scene, bars):
    """(kinetic plus potential, kinetic) energy of the four-bar's free bars in env 0 [J]."""
    total = kinetic = 0.0
    for bar in bars:
        link = bar.link
        pose, vel = scene.get_actor_pose(bar)[0], scene.get_actor_velocity(bar)[0]
        r = quat_to_matrix(pose[3:]) @ quat_to_matrix(link.cmass_local_pose.q)
        ke = 0.5 * link.mass * vel[:3] @ vel[:3] + 0.5 * vel[3:] @ (r @ np.diag(link.inertia) @ r.T) @ vel[3:]
        kinetic += ke
        total += ke + link.mass * G * (pose[2] + quat_rotate(pose[3:], link.cmass_local_pose.p)[2])
    return total, kinetic


def _four_bar_energy_change(solver, dt, seconds=3.0):
    """The rigid four-bar's energy change over `seconds` at step dt, as a share of the largest kinetic energy it
    reached (negative: lost)."""
    four_bar = _load_four_bar()
    scene, bars, _joints = four_bar.build_four_bar(1, 0.0, 0.0, solver)
    e0 = _four_bar_energy(scene, bars[1:])[0]
    kinetic = 0.0
    for k in range(round(seconds / dt)):
        scene.step(dt)
        if k % 10 == 0:
            kinetic = max(kinetic, _four_bar_energy(scene, bars[1:])[1])
    if solver == DIRECT:
        _no_fallback(scene, bars[1])
    return (_four_bar_energy(scene, bars[1:])[0] - e0) / kinetic


def test_rigid_four_bar_keeps_its_energy_better_than_pgs():
    """The four-bar with rigid hinges and no damping is conservative. PGS (4, 1) projects its velocity onto the
    start-of-step rows, which the next step's rows have turned away from, and loses energy at first order in dt
    (2.4 / 1.2 % of the largest kinetic energy over 3 s at dt 2 / 1 ms). DIRECT's velocity pass asks each hard
    slot for half its direction's turn over the last step (row_form.carried_row_target): its energy after
    3 s is within 0.6 % of the start's (+0.25 / -0.09 %) and below a third of PGS's loss at both steps. Measured
    over 5 s at 2 / 1 / 0.5 ms: DIRECT +0.1 / -0.15 / -0.9 %, PGS -4.0 / -2.0 / -1.0 %; DIRECT at target 0 (before)
    lost 6.1 / 3.2 / 1.8 %, and regularizing only by the pivot let the loop take 4e5 N s at its toggle points and
    lose 40 % in three steps (docs/solvers.md, "Energy")."""
    for dt in (2e-3, 1e-3):
        pgs = _four_bar_energy_change(PGS, dt)
        direct = _four_bar_energy_change(DIRECT, dt)
        assert -0.03 < pgs < -0.005, (dt, pgs)
        assert abs(direct) < 0.006 and abs(direct) < abs(pgs) / 3.0, (dt, direct, pgs)


def _stack(solver, iterations, heavy_kg=1000.0):
    scene = scene_with_ground(solver)
    light = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1), density=125.0, name="light")  # 1 kg
    heavy = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.3), density=125.0 * heavy_kg, name="heavy")
    for b in (light, heavy):
        b.set_solver_iteration_counts(*iterations)
        scene.add_actor(b)
    poses = []
    for _ in range(120):
        scene.step(DT)
        poses.append(scene.get_actor_pose(heavy)[0])
    return np.array(poses), scene, light, heavy


@pytest.mark.parametrize("heavy_kg", [1e3, 1e6])
def test_heavy_box_on_light_box_stands(heavy_kg):
    """A 1000 kg (or 1e6 kg) cube resting on a 1 kg cube on the ground (0.2 m cubes, mu 0.5): under DIRECT, for
    2 s, the top cube stays within 1e-3 m of its rest position and does not tip (quaternion vector part < 1e-3),
    and the bottom one stays in place, with no fallback (the 1e6 kg cube made every step fall back, and sank
    through the light one, before the dependent-row regularization); PGS at 4 iterations lets the 1000 kg cube
    sink by more than 5 cm (measured: it squeezes the light cube out and lands on the ground, 0.2 m), and says so
    (the penetration status)."""
    poses, scene, light, heavy = _stack(DIRECT, (4, 1), heavy_kg)
    _no_fallback(scene, heavy)
    assert np.abs(poses[:, :3] - [0.0, 0.0, 0.3]).max() < 1e-3
    assert np.abs(poses[:, 3:6]).max() < 1e-3
    assert np.abs(scene.get_actor_pose(light)[0, :3] - [0.0, 0.0, 0.1]).max() < 1e-3
    if heavy_kg > 1e3:
        return
    with pytest.warns(RuntimeWarning, match="contact penetration deeper than 0.02 m.*'light' and 'heavy'"):
        pgs = _stack(PGS, (4, 1))[0]
    assert np.abs(pgs[:, 2] - 0.3).max() > 0.05


def test_alternating_stack_of_twenty_stands():
    """Twenty 0.2 m boxes stacked on the ground, alternating 1 kg and 1000 kg, at dt 1/60: under DIRECT the stack
    stands for 5 s (every box within 1 mm of its rest height and 1 mm of the axis) with no fallback. Before the
    dependent-row regularization (measured: 25 steps of 300 fell back to PGS, whose 4 iterations cannot hold it,
    107 ms a step, and the top box ended 0.4 m low). The pivot budget may be spent in a few steps (the friction
    boxes' fixed point on 160 rows), whose answer is then judged by its complementarity error and kept."""
    scene, boxes = box_stack(DIRECT, 1000.0, 20)
    for _ in range(300):
        scene.step(DT)
    _no_fallback(scene, boxes[0])
    for k, b in enumerate(boxes):
        pose = scene.get_actor_pose(b)[0]
        assert abs(pose[2] - (0.1 + 0.2 * k)) < 1e-3, (k, pose)
        assert np.abs(pose[:2]).max() < 1e-3, (k, pose)


def _statics(art, scene, masses, coms):
    """(sum of vertical contact forces, weight, horizontal distance from the centre of pressure to the COM)."""
    poses = scene.get_link_poses(art)[0]
    com = sum(m * (p[:3] + quat_rotate(p[3:], c)) for m, p, c in zip(masses, poses, coms)) / masses.sum()
    report = scene.get_contacts(art)
    n = report.count[0]
    fz = report.force[0, :n, 2]
    cop = (fz[:, None] * report.point[0, :n, :2]).sum(axis=0) / fz.sum()
    return fz.sum(), masses.sum() * G, np.linalg.norm(cop - com[:2]), report


def test_biped_ground_reaction_is_the_statics_split():
    """A two-legged rig (pelvis, off-centre payload, two legs held by stiff hip drives, box feet) standing on the
    ground for 2 s: under DIRECT the vertical contact forces sum to its weight (1e-3 relative; measured 1e-7) and
    their centre of pressure lies under its centre of mass (horizontal distance < 1 cm; measured 2e-7 m), both feet
    carrying load. (How the load splits between the feet is not fixed by statics here: each foot's own centre of
    pressure may lie anywhere on its sole. DIRECT gives the left foot 54 %, PGS 80 %; PGS at 4 iterations also
    meets both conditions on this rig, to 1e-5 and 0.6 mm.)"""
    art, scene, masses, coms = biped(DIRECT, (4, 1))
    for _ in range(120):
        scene.step(DT)
    _no_fallback(scene, art)
    total, weight, distance, report = _statics(art, scene, masses, coms)
    assert total == pytest.approx(weight, rel=1e-3)
    assert distance < 1e-2
    n = report.count[0]
    left = report.force[0, :n, 2][report.point[0, :n, 1] > 0.0].sum()
    assert 0.2 * weight < left < 0.8 * weight


# --- the deadzone: a soft joint range ---------------------------------------------------------------------------

MASS, LOW, HIGH, COMPLIANCE, DAMPING = 2.0, -0.1, 0.1, 1e-3, 20.0


def test_soft_range_applies_no_force_inside_its_band():
    """A 2 kg body on a slider along z with a compliant range [-0.1, 0.1] m (a deadzone), starting at rest at 0:
    for five steps of 1/60 s it falls freely (velocity -g t to 1e-6 m/s, height -g h^2 k(k+1)/2 of semi-implicit
    Euler) and the range constraint reports zero force."""
    scene, b, joint = slider_with_soft_range(DIRECT, MASS, LOW, HIGH, COMPLIANCE, DAMPING)
    for k in range(1, 6):
        scene.step(DT)
        assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(-G * DT * k, abs=1e-6)
        assert scene.get_joint_coordinates(joint)[0, 0] == pytest.approx(-G * DT * DT * k * (k + 1) / 2, abs=1e-6)
        forces = scene.get_joint_forces(joint)
        assert forces.constraint_force[0, 5] == 0.0 and not forces.engaged[0, 5]
    _no_fallback(scene, b)


def test_soft_range_beyond_its_band_is_the_implicit_spring():
    """The same body in five envs at once, four started beyond a bound (below -0.1 or above 0.1 m, moving either
    way) and one inside: one step's range impulse is, per env, the implicit spring of the ODE paper's eq. 13 on
    the distance x past the bound, k = 1/compliance, d = damping, effective mass m, v* = v0 - g h:
    p = -(h k x + h (h k + d) v*) / (1 + h (h k + d) / m), pushing back only, computed here by hand (zero in the
    env inside the band); the reported force is p / h (1e-4 relative) and the velocity v* + p / m (1e-5 m/s)."""
    start = np.array([-0.2, -0.15, 0.25, 0.18, 0.05])
    velocity = np.array([-0.5, 0.3, 0.4, -1.0, 0.2])
    scene, b, joint = slider_with_soft_range(DIRECT, MASS, LOW, HIGH, COMPLIANCE, DAMPING, envs=len(start))
    scene.set_joint_coordinates(joint, start[:, None])
    scene.set_actor_velocity(b, np.column_stack([np.zeros((5, 2)), velocity, np.zeros((5, 3))]))
    scene.step(DT)
    k, d, h = 1.0 / COMPLIANCE, DAMPING, DT
    x = np.where(start < LOW, start - LOW, np.where(start > HIGH, start - HIGH, 0.0))
    v_star = velocity - G * h
    p = -(h * k * x + h * (h * k + d) * v_star) / (1.0 + h * (h * k + d) / MASS)
    p = np.where(start < LOW, np.maximum(p, 0.0), np.where(start > HIGH, np.minimum(p, 0.0), 0.0))
    assert np.all(np.abs(p[:4]) > 0.1)  # the spring acts in every env beyond a bound
    np.testing.assert_allclose(scene.get_joint_forces(joint).constraint_force[:, 5], p / h, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(scene.get_actor_velocity(b)[:, 2], v_star + p / MASS, rtol=0, atol=1e-5)
    _no_fallback(scene, b)


def test_body_joint_range_the_solved_velocity_would_cross_is_added():
    """A free 2 kg body on a SliderJoint to the world (no gravity), at rest, with the hard range [-0.05, 0.05] m and
    a stiff drive (kp 1e4, kd 100) towards 1 m: the unconstrained velocity does not reach the range, the drive's
    does, so the range row must be added lazily from the solved velocity. The coordinate never passes 0.05 m by
    more than 1e-5 m over 1 s and ends resting on it; no step falls back."""
    b = artic.RigidDynamic(artic.Transform((0.0, 0.0, 1.0)), "slider_body")
    b.link.mass, b.link.inertia = 2.0, (0.1, 0.1, 0.1)
    b.link.linear_damping = b.link.angular_damping = 0.0
    b.articulation.sleep_threshold = 0.0
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), solver_type=SolverType.DIRECT)
    scene.add_actor(b)
    joint = artic.SliderJoint(b, None, artic.Transform((0.0, 0.0, 1.0)))
    joint.set_coordinate_range(0, -0.05, 0.05)
    joint.set_drive_params(0, artic.Drive(1e4, 100.0, 1e6, artic.DriveType.FORCE))
    joint.set_drive_target(0, 1.0)
    scene.add_joint(joint)
    z = []
    for _ in range(60):
        scene.step(DT)
        z.append(float(scene.get_joint_coordinates(joint)[0, 0]))
    _no_fallback(scene, b)
    assert max(z) < 0.05 + 1e-5
    assert z[-1] == pytest.approx(0.05, abs=1e-4)


def test_a_velocity_written_between_steps_forgets_the_carried_turn():
    """A hinge spinning at 10 rad/s without gravity (0.1 rad a step) carries half its pin rows' turn from step to
    step (row_form.carried_row_target). Stopped by writing a zero velocity between steps, it must stay at rest: the
    step that follows starts from another velocity than the last one carried, and forgets the rows' last rates:
    1e-15 m/s after the step. Kept, they asked for half the old turn: 0.06 m/s after the first step, 7e-5 m/s
    still after the third (measured with the check switched off)."""
    scene, b, _hinge = spinning_hinge(DIRECT, 10.0)
    for _ in range(30):
        scene.step(0.01)
    assert np.abs(scene.get_actor_velocity(b)[0, 5]) > 9.8
    scene.set_actor_velocity(b, np.zeros((1, 6)))
    for _ in range(3):
        scene.step(0.01)
        assert np.abs(scene.get_actor_velocity(b)[0]).max() < 1e-5
    _no_fallback(scene, b)


# --- drives and dampers folded into the mass matrix (solvers/fold.py) --------------------------------------------


def _driven_rod(kp, kd, max_force, target):
    """rod_pendulum (horizontal at rest, gravity torque -m g l / 2 about its joint) under DIRECT with a force drive."""
    art, scene = rod_pendulum(DIRECT, (4, 1))
    j = art.get_links()[1].inbound_joint
    j.set_drive_params(Axis.SWING2, artic.Drive(kp, kd, max_force, artic.DriveType.FORCE))
    j.set_drive_target(Axis.SWING2, target)
    inertia = 1.0 / 12.0 * (1.0**2 + 0.1**2) + 0.25  # about the joint [kg m^2]
    return art, scene, inertia, -9.81 * 0.5


def test_folded_drive_is_the_implicit_pd_step():
    """A drive folded into the mass matrix is the implicit-drive note's step: (I + h^2 kp + h kd) v1 = I v0 +
    h (tau_g + kp (q_t - q0) + kd v_t), for the rod from rest (closed form, 1e-5 relative), and the position moves
    by h v1."""
    kp, kd, target, h = 1000.0, 10.0, 0.5, DT
    art, scene, inertia, tau_g = _driven_rod(kp, kd, 1e6, target)
    q, qd = _joint_history(art, scene, 1)
    v1 = h * (tau_g + kp * target) / (inertia + h * h * kp + h * kd)
    assert qd[0, 0, 0] == pytest.approx(v1, rel=1e-5)
    assert q[0, 0, 0] == pytest.approx(h * v1, rel=1e-5)
    _no_fallback(scene, art)


def test_folded_drive_beyond_its_max_force_is_solved_with_its_box():
    """A stiff drive (kp 1e5) towards 1 rad with a max force of 0.01 (without DRIVE_LIMITS_ARE_FORCES, PhysX's
    default, an impulse per step [N m s]): the folded impulse would be far beyond its box, so the step is solved again
    with the drive as a boxed row of the LCP and it pushes with exactly its bound, v1 = (h tau_g + 0.01) / I (closed
    form, 1e-5 relative), with no fallback to PGS."""
    art, scene, inertia, tau_g = _driven_rod(1e5, 0.0, 0.01, 1.0)
    _q, qd = _joint_history(art, scene, 1)
    assert qd[0, 0, 0] == pytest.approx((DT * tau_g + 0.01) / inertia, rel=1e-5)
    _no_fallback(scene, art)


def test_a_drive_switched_on_after_the_first_steps_gets_its_row():
    """An undriven body-joint coordinate has no row slot in the direct solver's arrays; a drive set on it between
    steps rebuilds them, and its first step is the implicit PD step of the drive note (force drive, target 0):
    p = -(h k x + h (h k + d) v*) / (1 + h (h k + d) / m), v* = v0 - g h, to 1e-5 m/s, with no fallback."""
    scene, b, joint = slider_with_soft_range(DIRECT, MASS, -5.0, 5.0, COMPLIANCE, DAMPING)
    for _ in range(3):
        scene.step(DT)
    rows_before = int(scene.get_solver_report(b.articulation)["rows"][0])
    x = float(scene.get_joint_coordinates(joint)[0, 0])
    v0 = float(scene.get_actor_velocity(b)[0, 2])
    k, d, h = 400.0, 20.0, DT
    joint.set_drive_params(0, artic.Drive(k, d, 1e30, artic.DriveType.FORCE))
    joint.set_drive_target(0, 0.0)
    scene.step(DT)
    v_star = v0 - G * h
    p = -(h * k * x + h * (h * k + d) * v_star) / (1.0 + h * (h * k + d) / MASS)
    assert abs(p) > 0.01
    assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(v_star + p / MASS, abs=1e-5)
    assert int(scene.get_solver_report(b.articulation)["rows"][0]) == rows_before + 1
    _no_fallback(scene, b)
