"""The over-constrained four-bar linkage of ArtiSynth's joints chapter, section 3.3.9: four hinges
remove 20 degrees of freedom from three free bars (18), and the linkage keeps one. Checked against the closed form
of the parallelogram's one-degree-of-freedom pendulum and against MuJoCo (a hinged chain closed by an equality
constraint)."""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import artic
from artic.math.np_spatial import quat_from_axis_angle, quat_to_matrix
from tests.support import EXAMPLES

_spec = importlib.util.spec_from_file_location("four_bar", EXAMPLES / "four_bar.py")
four_bar = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(four_bar)

G, DT, SECONDS = 9.81, 1e-3, 2.0
STEPS = int(round(SECONDS / DT))


def _closed_form(bars):
    """The crank elevation a(t) of the parallelogram: the cranks (bars 1, 3) turn about their pins on bar 0 and the
    coupler (bar 2) translates, so (I1 + I3 + m2 L^2) a'' = -g L cos(a) (m1 / 2 + m2 + m3 / 2), L = 1 m, I about
    the pins."""
    links = [b.link for b in bars[1:]]
    m = [lk.mass for lk in links]

    def i_pin(lk, deg):
        r = quat_to_matrix(quat_from_axis_angle((0.0, 1.0, 0.0), np.radians(deg))) @ quat_to_matrix(
            lk.cmass_local_pose.q
        )
        return (r @ np.diag(lk.inertia) @ r.T)[1, 1] + lk.mass * 0.25

    inertia = i_pin(links[0], 90) + i_pin(links[2], 270) + m[1]
    moment = G * (0.5 * m[0] + m[1] + 0.5 * m[2])
    sol = solve_ivp(
        lambda t, y: [y[1], -moment * np.cos(y[0]) / inertia],
        (0.0, SECONDS),
        [0.0, 0.0],
        rtol=1e-11,
        atol=1e-12,
        dense_output=True,
    )
    return sol.sol(np.arange(STEPS + 1) * DT)[0]


def _mujoco(bars):
    """The crank elevation in MuJoCo: bars 1-3 a hinged chain from bar 0's top pin, closed by a connect equality at
    bar 0's bottom pin (stiff: solref 2 ms), RK4 at the same time step, the same masses and inertias."""
    mujoco = pytest.importorskip("mujoco")
    poses = [bars[0].pose] + [b.global_pose for b in bars[1:]]

    def body(i, inner):
        rel = poses[i] if i == 1 else poses[i - 1].inverse() * poses[i]
        lk = bars[i].link
        c, q, d = lk.cmass_local_pose.p, lk.cmass_local_pose.q, lk.inertia
        return (
            f'<body name="link{i}" pos="{rel.p[0]} {rel.p[1]} {rel.p[2]}" '
            f'quat="{rel.q[3]} {rel.q[0]} {rel.q[1]} {rel.q[2]}">'
            f'<joint type="hinge" axis="0 1 0" pos="0 0 -0.5"/>'
            f'<inertial pos="{c[0]} {c[1]} {c[2]}" quat="{q[3]} {q[0]} {q[1]} {q[2]}" mass="{lk.mass}" '
            f'diaginertia="{d[0]} {d[1]} {d[2]}"/>{inner}</body>'
        )

    xml = (
        f'<mujoco><option timestep="{DT}" gravity="0 0 -{G}" integrator="RK4"/><worldbody>'
        f'{body(1, body(2, body(3, "")))}</worldbody><equality><connect body1="link3" body2="world" '
        f'anchor="0 0 0.5" solref="0.002 1"/></equality></mujoco>'
    )
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    angle = []
    for _ in range(STEPS + 1):
        u = data.xmat[model.body("link1").id].reshape(3, 3)[:, 2]
        angle.append(np.arctan2(u[2], u[0]))
        mujoco.mj_step(model, data)
    return np.unwrap(angle)


def _run(compliance, damping, solver=artic.SolverType.PGS, every=10):
    """Crank elevation at every step; every `every` steps also the bars' orientations and each hinge's T_CD and
    forces."""
    scene, bars, joints = four_bar.build_four_bar(1, compliance, damping, solver)
    angle, samples = [], []
    for k in range(STEPS + 1):
        if k:
            scene.step(DT)
        angle.append(four_bar.crank_angle(scene, bars)[0])
        if k % every == 0:
            frames = [scene.get_joint_frames(j) for j in joints]
            samples.append(
                {
                    "pose": [scene.get_actor_pose(b)[0] for b in bars[1:]],
                    "vel": [scene.get_actor_velocity(b)[0] for b in bars[1:]],
                    "rot": [scene.get_actor_pose(b)[0, 3:] for b in bars[1:]],
                    "tcd": [f.tcd[0] for f in frames],
                    "c": [f.c_world[0] for f in frames],
                    "d": [f.d_world[0] for f in frames],
                    "force": [scene.get_joint_forces(j).constraint_force[0, :5] for j in joints],
                }
            )
    return bars, np.unwrap(angle), samples


def _one_dof_deviation(samples) -> float:
    """The largest departure from the parallelogram's motion [rad]: the coupler (bar 2) does not turn, and bar 3
    stays parallel to bar 1."""
    worst = 0.0
    for s in samples:
        r1, r2, r3 = (quat_to_matrix(q) for q in s["rot"])
        z1, z3 = r1[:, 2], r3[:, 2]
        worst = max(worst, np.arccos(np.clip(-r2[2, 2], -1, 1)), np.arccos(np.clip(-z1 @ z3, -1, 1)))
    return worst


@pytest.mark.oracle
def test_rigid_four_bar_matches_the_closed_form_and_mujoco():
    """The four-bar with rigid hinges (20 rows, 18 dofs) falls from the square through its folded pose and back:
    the crank elevation stays within 1e-2 rad of the closed-form pendulum and of MuJoCo over 2 s (MuJoCo RK4 itself
    is 4e-4 from the closed form; artic's semi-implicit Euler error halves with dt), the hinges hold to 0.1 mm and
    the bars keep the parallelogram's one degree of freedom to 1e-3 rad."""
    bars, angle, samples = _run(0.0, 0.0)
    closed = _closed_form(bars)
    assert np.degrees(closed.min()) < -170  # it swings through the folded pose to the other side
    assert np.abs(angle - closed).max() < 1e-2
    assert np.abs(angle - _mujoco(bars)).max() < 1e-2
    assert max(np.linalg.norm(t[:3]) for s in samples for t in s["tcd"]) < 1e-4
    assert _one_dof_deviation(samples) < 1e-3


@pytest.mark.oracle
def test_compliant_four_bar_of_the_manual():
    """The manual's linkage (compliance 1e-6, damping 25000 on the hinges' five bilateral constraints): it keeps
    one degree of freedom (parallelogram to 5e-3 rad), every hinge's translational constraint force is the implicit
    spring's, F = -((phi + dt phi') / C + D phi') with phi the error at the start of the step and phi' its rate at the
    end (eq. 13), to 0.2 % of the largest force (4 PGS iterations), and the error is at most 3.5 mm (the ground hinges
    carry ~3 kN at the bottom of the swing: C F = 3 mm, so not below 1 mm as ArtiSynth's text suggests for this
    undamped fall). The crank stays within 2e-2 rad of MuJoCo's stiff linkage; the difference is the compliance:
    with C = 1e-7 it shrinks below a quarter."""
    c, d = four_bar.COMPLIANCE, four_bar.DAMPING
    bars, angle, samples = _run(c, d, every=1)
    assert _one_dof_deviation(samples) < 5e-3
    coms = [b.link.cmass_local_pose.p for b in bars[1:]]

    def point_velocity(start, end, bar, p):
        """Velocity of bar's material point at world p: end-of-step velocity, start-of-step lever arm (bar 0 is
        static)."""
        if bar == 0:
            return np.zeros(3)
        pose, vel = start["pose"][bar - 1], end["vel"][bar - 1]
        com = pose[:3] + quat_to_matrix(pose[3:]) @ coms[bar - 1]
        return vel[:3] + np.cross(vel[3:], p - com)

    worst_error, worst_force, residual = 0.0, 0.0, 0.0
    for prev, s in itertools.pairwise(samples):
        for i in range(4):
            # the hinge's translational row rates: C's origin on bar i relative to bar i+1's point there, in D's
            # axes, with the start-of-step geometry and the end-of-step velocities (what the step solved with)
            pc, rd = prev["c"][i][:3], quat_to_matrix(prev["d"][i][3:])
            rate = rd.T @ (point_velocity(prev, s, i, pc) - point_velocity(prev, s, (i + 1) % 4, pc))
            phi, force = prev["tcd"][i][:3], s["force"][i][:3]
            worst_error = max(worst_error, np.linalg.norm(s["tcd"][i][:3]))
            worst_force = max(worst_force, np.abs(force).max())
            residual = max(residual, np.abs(force + (phi + DT * rate) / c + d * rate).max())
    assert residual < 0.002 * worst_force
    assert 2e-3 < worst_error < 3.5e-3
    mj = _mujoco(bars)
    gap = np.abs(angle - mj).max()
    assert gap < 2e-2
    _, stiffer, _ = _run(c / 10, d * np.sqrt(10), every=STEPS)
    assert np.abs(stiffer - mj).max() < 0.25 * gap


def test_four_bar_posed_by_its_crank_angle():
    """Setting hinge joint0 to 60 deg moves bars 1-3 (not the grounded bar 0) so that all four hinges hold to 1e-6
    and every hinge reads the parallelogram's angles (90 +- 30 deg); per env, with different angles, and the
    example runs from there."""
    scene, bars, joints = four_bar.build_four_bar(2, 0.0, 0.0)
    theta = np.radians([[60.0], [150.0]])
    scene.set_joint_coordinates(joints[0], theta)
    for j in joints:
        frames = scene.get_joint_frames(j)
        assert np.abs(frames.terr[:, :3]).max() < 1e-6 and np.abs(frames.terr[:, 3:6]).max() < 1e-6
    coords = np.concatenate([scene.get_joint_coordinates(j) for j in joints], axis=1)
    np.testing.assert_allclose(coords[:, 0], theta[:, 0], atol=1e-6)
    np.testing.assert_allclose(coords[:, 2], theta[:, 0], atol=1e-6)  # opposite corners of a parallelogram
    np.testing.assert_allclose(coords[:, 1], np.pi - theta[:, 0], atol=1e-6)
    np.testing.assert_allclose(four_bar.crank_angle(scene, bars), np.pi / 2 - theta[:, 0], atol=1e-6)


def test_posing_honours_ranges_and_locks():
    """Issue 27: set_joint_coordinates ignored the joint's own lock or range, and the next step snapped the
    coordinate back at ~50 rad/s. Now values outside the joint's range (per env) or away from a locked value are
    refused with a StateError naming the joint, the coordinate and the env, leaving the state as it was; another
    joint's locked coordinate is held (a four-bar with one hinge locked cannot move, so any other crank angle is
    refused), and a pose that would take another joint out of its range is refused too."""
    scene, bars, joints = four_bar.build_four_bar(2, 0.0, 0.0)
    scene.set_joint_coordinates(joints[0], np.radians([[80.0], [100.0]]))
    before = np.concatenate([scene.get_joint_coordinates(j) for j in joints], axis=1)

    def unchanged():
        now = np.concatenate([scene.get_joint_coordinates(j) for j in joints], axis=1)
        np.testing.assert_allclose(now, before, atol=1e-6)

    scene.set_joint_ranges(joints[0], [[-1.0], [-1.0]], [[1.8], [1.8]])
    with pytest.raises(artic.StateError, match=r"'joint0': coordinate 'theta' = 1.9 in env 1 .*outside its range"):
        scene.set_joint_coordinates(joints[0], [[1.5], [1.9]])
    unchanged()
    scene.set_joint_locked(joints[0], [[True], [False]])
    with pytest.raises(artic.StateError, match=r"'joint0'.* in env 0 .*locked at 1.39626"):
        scene.set_joint_coordinates(joints[0], [[1.2], [1.2]])
    unchanged()
    scene.set_joint_coordinates(joints[0], before[:, :1])  # the locked value itself is fine
    scene.set_joint_locked(joints[0], [[False], [False]])
    scene.set_joint_locked(joints[1], [[True], [True]])  # the linkage is now rigid
    with pytest.raises(artic.StateError, match="cannot all hold"):
        scene.set_joint_coordinates(joints[0], [[1.0], [1.0]])
    unchanged()
    scene.set_joint_locked(joints[1], [[False], [False]])
    scene.set_joint_ranges(joints[1], [[1.5], [1.5]], [[2.0], [2.0]])  # joint1 reads pi - theta0
    with pytest.raises(artic.StateError, match=r"'joint1'.*moves its coordinate 'theta' to 2.14.* in env 0"):
        scene.set_joint_coordinates(joints[0], [[1.0], [1.4]])
    unchanged()
    scene.set_joint_coordinates(joints[0], [[1.3], [1.4]])  # within every range
    for _ in range(5):
        scene.step(1e-3)
    assert np.abs(scene.get_actor_velocity(bars[1])).max() < 0.5  # posed where it may stay: no snap back
