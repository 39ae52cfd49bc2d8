"""Damping on a floating root's six velocities (Articulation.root_damping, MuJoCo's free-joint damping): a force
-d v at the root frame's origin and a torque -d w, implicit in the step as MuJoCo's Euler integrator damps
(step_kernel._damp_roots: the root block of M gains dt D, and v* becomes (M + dt D)^-1 M v*).

Closed form: a sphere coasting in zero gravity keeps v0 / (1 + dt d / m)^n after n steps. Oracle: a body whose COM is
off its frame, launched spinning and sliding, follows MuJoCo with the same free-joint damping; the Shadow hand's pen
(damping 0.01, 1.3e-6 kg m^2 about its axis: d dt / I = 15, beyond any explicit scheme) stays in the palm as in
MuJoCo, where it rolled off before (the damping was dropped without a word).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import artic
from artic import SolverType, Sphere, Transform

mujoco = pytest.importorskip("mujoco")

SOLVERS = [SolverType.PGS, SolverType.TGS, SolverType.DIRECT]


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_coasting_sphere_decays_as_implicit_euler(solver):
    """v_n = v0 / (1 + dt d / m)^n for a 1.26 kg sphere at d = 2 N s/m, dt 0.01 (the explicit rate would be
    1 - dt d / m): to float32 precision over 100 steps; with d = 0 it coasts. The spin decays the same way with
    d / I, where d dt / I = 4 would make an explicit scheme diverge."""
    dt, d, steps = 0.01, 2.0, 100
    for damping in (d, 0.0):
        scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), solver_type=solver)
        b = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "ball")
        b.attach_shape(Sphere(0.1))
        b.update_mass_and_inertia(300.0)
        b.link.linear_damping = b.link.angular_damping = 0.0
        b.articulation.root_damping = damping
        b.articulation.sleep_threshold = 0.0
        scene.add_actor(b)
        scene.set_actor_velocity(b, np.array([[0.4, -0.3, 0.2, 1.0, 2.0, -3.0]]))
        for _ in range(steps):
            scene.step(dt)
        v = scene.get_actor_velocity(b)[0]
        m, inertia = b.mass, b.link.inertia[0]
        lin = (1.0 + dt * damping / m) ** -steps
        ang = (1.0 + dt * damping / inertia) ** -steps
        np.testing.assert_allclose(v[:3], np.array([0.4, -0.3, 0.2]) * lin, rtol=2e-5)
        np.testing.assert_allclose(v[3:], np.array([1.0, 2.0, -3.0]) * ang, rtol=2e-5, atol=1e-9)
        if damping:
            assert lin < 0.25 and ang < 1e-6  # it did damp, the spin stiffly (d dt / I = 4)


MODEL = """<mujoco><option timestep="0.002" gravity="0 0 0"/><worldbody>
<body name="b" pos="0 0 1" euler="10 20 30"><joint type="free" damping="{d}"/>
  <geom type="box" size=".1 .03 .01" pos=".05 .02 -.01" density="800"/>
  <geom type="capsule" size=".01 .1" pos="0 .05 0" euler="0 90 0"/></body>
</worldbody><keyframe><key qvel="0.3 -0.2 0.5 2 -1 5"/></keyframe></mujoco>"""


@pytest.mark.oracle
@pytest.mark.parametrize("solver", SOLVERS)
def test_an_off_centre_body_follows_mujocos_free_joint_damping(tmp_path, solver):
    """A body whose COM is 5 cm off its frame, launched sliding and spinning at 5.5 rad/s with free-joint damping
    0.05 and 0.5: over 1 s its qpos stays within 3e-3 of MuJoCo's (the same integrators without damping: 1.5e-3,
    their gyroscopic terms differ), while MuJoCo's damping takes 97 % and more of the spin."""
    for d in (0.05, 0.5):
        path = tmp_path / f"damped{d}.xml"
        path.write_text(MODEL.format(d=d))
        mm = mujoco.MjModel.from_xml_path(str(path))
        md = mujoco.MjData(mm)
        mujoco.mj_resetDataKeyframe(mm, md, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = artic.load_mjcf(path)
        assert model.articulations[0].root_damping == d
        scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
        model.add_to(scene)
        model.set_keyframe(scene, 0)
        worst = 0.0
        for _ in range(500):
            scene.step(mm.opt.timestep)
            mujoco.mj_step(mm, md)
            q = model.get_qpos(scene)[0]
            if np.dot(q[3:7], md.qpos[3:7]) < 0.0:
                q[3:7] *= -1.0
            worst = max(worst, float(np.abs(q - md.qpos).max()))
        assert np.linalg.norm(md.qvel[3:]) < 0.03 * np.linalg.norm([2.0, -1.0, 5.0])
        assert worst < 3e-3, (d, worst)


def _hand_file(name: str) -> Path:
    robotics = pytest.importorskip("gymnasium_robotics")
    return Path(robotics.__file__).parent / "envs" / "assets" / "hand" / name


@pytest.mark.oracle
def test_the_shadow_hands_pen_stays_in_the_palm_as_in_mujoco():
    """gymnasium-robotics' manipulate_pen as shipped: the pen (free-joint damping 0.01) dropped onto the palm stays
    there for 1 s, its centre within 2 mm of MuJoCo's (it rolled off the fingers to -0.21 m without the damping,
    as MuJoCo's does without it)."""
    path = _hand_file("manipulate_pen.xml")
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    pen = mm.jnt_qposadr[mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, "object:joint")]
    for _ in range(500):
        scene.step(mm.opt.timestep)
        mujoco.mj_step(mm, md)
    ours = model.get_qpos(scene)[0, pen : pen + 3]
    assert md.qpos[pen + 2] > 0.14  # MuJoCo's pen lies in the palm
    np.testing.assert_allclose(ours, md.qpos[pen : pen + 3], atol=2e-3)
