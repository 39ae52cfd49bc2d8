"""MuJoCo's passive damping and springs (PassiveParams on a joint's axis, Articulation.root_damping on a floating root,
MuJoCo's free-joint damping): the spring k (reference - q) and the damper -d v enter the step's forces explicitly, and
after the constraint solve the damping is made implicit as MuJoCo's Euler integrator does (dynamics/passive.py
mujoco_damping: v = v0 + (M + dt D)^-1 M (v_solved - v0)). A root's damping is a force -d v at the root frame's origin
and a torque -d w.

Closed form: a sphere coasting in zero gravity keeps v0 / (1 + dt d / m)^n after n steps. Oracle: a body whose COM is
off its frame, launched spinning and sliding, follows MuJoCo with the same free-joint damping; the Shadow hand's pen
(damping 0.01, 1.3e-6 kg m^2 about its axis: d dt / I = 15, beyond any explicit scheme) stays in the palm as in MuJoCo,
where it rolled off before (the damping was dropped without a word).

Joints: a damped hinge decays as implicit Euler (closed form) and a spring oscillates as MuJoCo's explicit one; a damped
hinge pushed out of a deep soft contact moves as MuJoCo's in one step (solving the damper with the contact, as a drive
does, took 11 % off the CMU humanoid's first step); bad parameters are refused by name.
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


ARMATURE = """<mujoco><option timestep="0.002"/><worldbody>
<body name="b" pos="0.1 0.2 1" quat="0.9 0.1 0.3 0.2"><joint name="f" type="free" {arm}/>
  <geom type="box" size="0.2 0.05 0.1" pos="0.15 -0.05 0.02" mass="1.3" contype="0" conaffinity="0"/>
  <body name="c" pos="0.3 0 0"><joint name="h" type="hinge" axis="0 1 1" damping="0.01"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="0.4" contype="0" conaffinity="0"/></body></body>
</worldbody><keyframe><key qpos="0.1 0.2 1 0.9 0.1 0.3 0.2 0" qvel="0.3 -0.2 1 2 -3 5 4"/></keyframe></mujoco>"""


def _armature_run(path: Path, solver: SolverType | None) -> tuple[np.ndarray | None, np.ndarray]:
    """(artic's qpos, MuJoCo's qpos) over 1 s from the file's keyframe, (500, 8) each; solver None: MuJoCo's only."""
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    theirs = []
    for _ in range(500):
        mujoco.mj_step(mm, md)
        theirs.append(md.qpos.copy())
    if solver is None:
        return None, np.array(theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the armature is followed, not reported
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    model.set_keyframe(scene, 0)
    ours = []
    for _ in range(500):
        scene.step(mm.opt.timestep)
        ours.append(model.get_qpos(scene)[0].copy())
    return np.array(ours), np.array(theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("solver", SOLVERS)
def test_a_free_joints_armature_follows_mujoco(tmp_path, solver):
    """A free body (COM 16 cm off its frame) carrying a damped hinge, thrown spinning at 6 rad/s under gravity with
    free-joint armature 0.05 and 0.5 (Articulation.root_armature: inertia without weight, the same on all six of
    MuJoCo's qvel): over 1 s its orientation and hinge angle stay within 1e-4 of MuJoCo's (1e-6 under PGS and
    DIRECT), its position within 6e-3 (MuJoCo integrates the frame's origin, artic the COM: 4e-3 with or without
    armature), where the armature itself moves them by 0.1 to 1 (it slows the fall: weight m g on m + a)."""
    for a in (0.05, 0.5):
        path = tmp_path / f"armature{a}.xml"
        path.write_text(ARMATURE.format(arm=f'armature="{a}"'))
        ours, theirs = _armature_run(path, solver)
        unarmed = tmp_path / "none.xml"
        unarmed.write_text(ARMATURE.format(arm=""))
        _, without = _armature_run(unarmed, None)
        flip = np.sign(np.einsum("ti,ti->t", ours[:, 3:7], theirs[:, 3:7]))[:, None]
        ours[:, 3:7] *= flip
        turn = np.abs(ours[:, 3:] - theirs[:, 3:]).max()
        assert turn < 1e-4, (a, turn)
        assert np.abs(ours[:, :3] - theirs[:, :3]).max() < 6e-3
        assert np.abs(without[:, 3:] - theirs[:, 3:]).max() > 0.1
        assert np.abs(without[-1, 2] - theirs[-1, 2]) > 0.15  # the fall: 0.19 m at a = 0.05
    lossy = tmp_path / "lossy.xml"
    lossy.write_text(ARMATURE.format(arm='armature="0.05" frictionloss="0.1"'))
    with pytest.warns(RuntimeWarning, match="has frictionloss, which artic does not follow"):
        assert artic.load_mjcf(lossy).articulations[0].root_armature == 0.05


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


HINGE = """<mujoco><compiler angle="radian"/><option timestep="{dt}" gravity="0 0 {g}">
<flag contact="{contact}"/></option><worldbody>
<geom name="base" type="capsule" size=".09 .06" euler="0 90 0"/>
<body name="arm"><joint name="h" axis="0 1 0" pos="-0.3 0 .3" armature="0.01" damping="{d}" stiffness="{k}"
  springref="{ref}"/>
  <geom type="sphere" size=".06" pos="0 0 {z}" mass="2"/></body></worldbody>
<keyframe><key qvel="{v0}"/></keyframe></mujoco>"""


def _hinge(tmp_path, dt=0.002, g=0.0, contact="disable", d=0.0, k=0.0, ref=0.0, z=0.3, v0=0.0):
    path = tmp_path / "hinge.xml"
    path.write_text(HINGE.format(dt=dt, g=g, contact=contact, d=d, k=k, ref=ref, z=z, v0=v0))
    mm = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    return path, mm, model


@pytest.mark.oracle
@pytest.mark.parametrize("solver", SOLVERS)
def test_a_damped_spring_hinge_follows_mujocos_euler(tmp_path, solver):
    """A hinge with stiffness 40 and damping 0.8 (d dt / I = 0.08 at dt 0.01), released 0.5 rad from its spring's
    reference with 3 rad/s: MuJoCo's explicit spring and implicit damper, step for step, to 1e-6 rad over 2 s
    (TGS, whose substeps integrate the positions, 3e-5); the joint's PassiveParams carry them, no drive."""
    _, mm, model = _hinge(tmp_path, dt=0.01, d=0.8, k=40.0, ref=0.5, v0=3.0)
    (art,) = model.articulations
    joint = art.get_links()[-1].inbound_joint
    p = joint.get_passive_params(joint.dof_axes()[0])
    assert (p.stiffness, p.damping, p.reference) == (40.0, 0.8, 0.5)
    assert joint.get_drive_params(joint.dof_axes()[0]).stiffness == 0.0  # no drive: nothing actuates it
    md = mujoco.MjData(mm)
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    model.set_keyframe(scene, 0)
    worst = 0.0
    for _ in range(200):
        scene.step(mm.opt.timestep)
        mujoco.mj_step(mm, md)
        worst = max(worst, abs(float(model.get_qpos(scene)[0, 0]) - md.qpos[0]))
    assert abs(md.qpos[0] - 0.5) < 0.1 and worst < (3e-5 if solver == SolverType.TGS else 1e-6), worst


@pytest.mark.oracle
@pytest.mark.parametrize("solver", SOLVERS)
def test_a_contact_pushing_a_damped_hinge_moves_it_as_mujoco(tmp_path, solver):
    """A 2 kg ball on a hinge (damping 5, armature 0.01: d dt / I = 0.05) starts 46 mm deep in a fixed capsule:
    after one step its velocity is MuJoCo's to 1e-5 relative. MuJoCo computes the contact force with M alone and
    then damps; a damper row solved with the contact resisted it (the velocity was 5 % lower)."""
    _, mm, model = _hinge(tmp_path, contact="enable", d=5.0, z=0.104)
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    assert md.ncon == 1 and md.contact[0].dist < -0.04
    mujoco.mj_step(mm, md)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    scene.step(mm.opt.timestep)
    (art,) = model.articulations
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.VELOCITY)
    assert abs(md.qvel[0]) > 0.5
    np.testing.assert_allclose(cache.joint_velocity[0, 0], md.qvel[0], rtol=1e-5)


def test_the_direct_solver_carries_the_damped_velocity(tmp_path):
    """Under DIRECT the velocity carried into the next step is the damped one, and the solver records it as what it
    carried (DirectArrays.carried), so that the next step starts from the velocity it carried (else it forgets its
    hard slots' rates on every step of a damped model)."""
    _, mm, model = _hinge(tmp_path, dt=0.01, d=0.8, k=40.0, ref=0.5, v0=3.0)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=SolverType.DIRECT)
    model.add_to(scene)
    model.set_keyframe(scene, 0)
    (art,) = model.articulations
    cache = art.create_cache()
    for _ in range(3):
        scene.step(mm.opt.timestep)
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.VELOCITY)
    carried = scene.view(art).block.direct[1].carried.numpy()[0]
    np.testing.assert_array_equal(carried[-1:], cache.joint_velocity[0, -1:])


def test_bad_passive_parameters_are_refused_by_name():
    art = artic.Articulation("arm")
    root = art.create_link(None, Transform(), "base")
    link = art.create_link(root, Transform(), "upper")
    joint = link.inbound_joint
    joint.set_joint_type(artic.JointType.REVOLUTE)
    for bad, what in (
        (artic.PassiveParams(-1.0, 0.0, 0.0), "passive stiffness"),
        (artic.PassiveParams(0.0, float("nan"), 0.0), "passive damping"),
        (artic.PassiveParams(0.0, 0.0, float("inf")), "passive reference"),
    ):
        with pytest.raises(artic.ArticError, match=f"joint 'upper'.*{what}"):
            joint.set_passive_params(artic.Axis.TWIST, bad)
    with pytest.raises(artic.ArticError, match="set_passive_params takes an artic.PassiveParams"):
        joint.set_passive_params(artic.Axis.TWIST, (1.0, 2.0, 3.0))
    with pytest.raises(artic.ArticError, match="root_damping"):
        art.root_damping = -0.1
