"""MJCF joints (ref, springref, stiffness, damping, armature, frictionloss, range/limited/autolimits), <option>
(timestep, gravity, flags, reported settings) and MuJoCo's defaults on an MJCF import, checked against MuJoCo."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import artic
from artic import ArticError, CacheFlag, Motion
from artic.description.body_joints import description_pose
from artic.io.mjcf.options import SOLVER_TOLERANCE

mujoco = pytest.importorskip("mujoco")

# a hinge and a slide with reference positions, in degrees; a second hinge without
ARM = """<mujoco model="arm">
  <option timestep="0.0002" {option}>{flags}</option>
  <worldbody>
    <body name="upper" pos="0 0 1" euler="10 20 30">
      <joint name="shoulder" axis="0 1 1" pos="0 0 0.1" ref="30" springref="10" stiffness="{k}" damping="{d}"
             range="-20 80" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <body name="lower" pos="0.4 0 0">
        <joint name="slide" type="slide" axis="1 0 0" ref="0.2" range="-0.1 0.5" damping="{d}"/>
        <geom type="box" size="0.1 0.05 0.05" pos="0.1 0 0"/>
        <body name="hand" pos="0.2 0 0">
          <joint name="wrist" axis="0 0 1" frictionloss="{loss}"/>
          <geom type="sphere" size="0.05" pos="0.05 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""
JOINTS = ["shoulder", "slide", "wrist"]


def _write(tmp_path, option="", flags="", k=0.0, d=0.0, loss=0.0, text=None):
    path = tmp_path / "arm.xml"
    path.write_text(text or ARM.format(option=option, flags=flags, k=k, d=d, loss=loss))
    return path


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return artic.load_mjcf(path)


def _mujoco_poses(mm, qpos):
    md = mujoco.MjData(mm)
    md.qpos[:] = qpos
    mujoco.mj_kinematics(mm, md)
    return {
        mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b): (md.xpos[b].copy(), md.xquat[b].copy())
        for b in range(1, mm.nbody)
    }


def _same_rotation(q_xyzw, q_wxyz):
    return abs(abs(np.dot(q_xyzw, np.roll(q_wxyz, -1))) - 1.0) < 1e-9


def test_ref_makes_q_equal_qpos(tmp_path):
    """A joint's ref is its position in the file's pose (MuJoCo's qpos0 = ref): artic starts at q = ref and places
    every body where MuJoCo does at qpos0 and at other joint positions; range and springref are in the same
    coordinate, so the limits equal MuJoCo's jnt_range."""
    path = _write(tmp_path, k=2.0)
    mm = mujoco.MjModel.from_xml_path(str(path))
    art = _load(path).articulations[0]
    joints = [art.get_joint(n) for n in JOINTS]
    np.testing.assert_allclose([j.get_joint_position(j.dof_axes()[0]) for j in joints], mm.qpos0, atol=1e-12)
    for j, rng in zip(joints[:2], mm.jnt_range[:2]):
        limit = j.get_limit_params(j.dof_axes()[0])
        np.testing.assert_allclose([limit.low, limit.high], rng, atol=1e-12)
    shoulder = joints[0]
    assert shoulder.get_passive_params(shoulder.dof_axes()[0]).reference == pytest.approx(mm.qpos_spring[0])
    for qpos in (mm.qpos0, np.array([-0.3, 0.45, 1.2])):
        for j, q in zip(joints, qpos):
            j.set_joint_position(j.dof_axes()[0], q)
        for body, (pos, quat) in _mujoco_poses(mm, qpos).items():
            pose = description_pose(art.get_link(body))
            np.testing.assert_allclose(pose.p, pos, atol=1e-9)
            assert _same_rotation(pose.q, quat)


def test_spring_and_damper_follow_mujoco(tmp_path):
    """stiffness/springref/damping/armature: without gravity, the arm swings about springref and settles there as in
    MuJoCo, integrated as MuJoCo's Euler (explicit spring, damping implicit after the solve): 1e-4 rad over 2 s at
    h = 0.2 ms, 10000 float32 steps (measured 4.3e-5; 1e-3 when the spring was an implicit drive)."""
    path = _write(tmp_path, flags='<flag gravity="disable"/>', k=2.0, d=0.05)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    model = _load(path)
    assert model.gravity == (0.0, 0.0, 0.0) and model.timestep == 0.0002
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    art = model.articulations[0]
    idx = [art.dof_names.index(n) for n in JOINTS]
    cache = art.create_cache()
    worst = 0.0
    for _ in range(10000):
        mujoco.mj_step(mm, md)
        scene.step(0.0002)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        worst = max(worst, np.abs(cache.joint_position[0, idx] - md.qpos).max())
    assert abs(md.qpos[0] - mm.qpos0[0]) > 0.05  # the spring moved the shoulder from ref towards springref
    assert worst < 1e-4, worst


def test_limits_autolimits_and_limit_flags(tmp_path):
    """A range alone limits a joint (MuJoCo 3's autolimits); limited='false' frees it; autolimits='false' with a
    range and no limited is refused as MuJoCo refuses it; flag limit or constraint 'disable' frees every joint."""
    art = _load(_write(tmp_path)).articulations[0]
    assert art.get_joint("shoulder").get_motion(art.get_joint("shoulder").dof_axes()[0]) == Motion.LIMITED
    assert art.get_joint("wrist").get_motion(art.get_joint("wrist").dof_axes()[0]) == Motion.FREE
    text = ARM.format(option="", flags="", k=0, d=0, loss=0)
    freed = _load(_write(tmp_path, text=text.replace('range="-20 80"', 'range="-20 80" limited="false"')))
    j = freed.articulations[0].get_joint("shoulder")
    assert j.get_motion(j.dof_axes()[0]) == Motion.FREE
    with pytest.raises(ArticError, match="autolimits"):
        artic.load_mjcf(_write(tmp_path, text=text.replace("<worldbody>", '<compiler autolimits="false"/><worldbody>')))
    for flag in ("limit", "constraint"):
        art = _load(_write(tmp_path, flags=f'<flag {flag}="disable"/>')).articulations[0]
        for n in JOINTS:
            j = art.get_joint(n)
            assert j.get_motion(j.dof_axes()[0]) == Motion.FREE, (flag, n)


def test_contact_and_frictionloss_flags(tmp_path):
    """flag contact='disable' (and constraint='disable') leaves every shape, static ones too, colliding with
    nothing; constraint and frictionloss 'disable' drop the joints' dry friction."""
    text = ARM.replace("<worldbody>", '<worldbody><geom type="plane" size="1 1 1"/>')
    on = _load(_write(tmp_path, text=text.format(option="", flags="", k=0, d=0, loss=0.3)))
    wrist = on.articulations[0].get_joint("wrist")
    assert wrist.get_friction_params(wrist.dof_axes()[0]).static_friction_effort == 0.3
    assert all(s.collision_group == 1 for lk in on.articulations[0].get_links() for s in lk.shapes)
    for flag in ("contact", "constraint"):
        off = _load(
            _write(tmp_path, text=text.format(option="", flags=f'<flag {flag}="disable"/>', k=0, d=0, loss=0.3))
        )
        shapes = [s for lk in off.articulations[0].get_links() for s in lk.shapes] + off.statics[0].shapes
        assert len(shapes) == 4 and all(s.collision_group == 0 and s.collision_mask == 0 for s in shapes)
    for flag in ("frictionloss", "constraint"):
        off = _load(
            _write(tmp_path, text=text.format(option="", flags=f'<flag {flag}="disable"/>', k=0, d=0, loss=0.3))
        )
        wrist = off.articulations[0].get_joint("wrist")
        assert wrist.get_friction_params(wrist.dof_axes()[0]).static_friction_effort == 0.0, flag


def test_spring_and_damper_flags(tmp_path):
    """flag spring / damper 'disable' drop the joints' stiffness / damping (MuJoCo's passive forces, PassiveParams)."""

    def drive(flags):
        art = _load(_write(tmp_path, flags=flags, k=2.0, d=0.05)).articulations[0]
        j = art.get_joint("shoulder")
        d = j.get_passive_params(j.dof_axes()[0])
        return d.stiffness, d.damping

    assert drive("") == (2.0, 0.05)
    assert drive('<flag spring="disable"/>') == (0.0, 0.05)
    assert drive('<flag damper="disable"/>') == (2.0, 0.0)


def test_add_to_reports_a_scene_gravity_other_than_the_files(tmp_path):
    """add_to warns when the scene's gravity is not the file's (here disabled by its flag), and not when it is."""
    model = _load(_write(tmp_path, flags='<flag gravity="disable"/>'))
    with pytest.warns(RuntimeWarning, match="gravity=model.gravity"):
        model.add_to(artic.Scene(1))
    model = _load(_write(tmp_path, flags='<flag gravity="disable"/>'))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.add_to(artic.Scene(1, gravity=model.gravity))


@pytest.mark.parametrize(
    "option, flags, named",
    [
        ('integrator="implicit"', "", "integrator='implicit' \\(artic steps implicitfast"),
        ('integrator="RK4"', "", "integrator='RK4'"),
        ('noslip_iterations="3"', "", "noslip_iterations='3'"),
        ('iterations="1000"', "", "iterations='1000' is capped at 255"),
        ("", '<flag eulerdamp="disable"/>', "eulerdamp='disable'"),
        ("", '<flag actuation="disable"/>', "actuation='disable'"),
        ("", '<flag override="enable"/>', "override='enable'"),
    ],
)
def test_settings_artic_does_not_follow_are_named(tmp_path, option, flags, named):
    """Each integrator, solver or flag setting that artic does not follow gives a warning naming it."""
    with pytest.warns(RuntimeWarning, match=named):
        artic.load_mjcf(_write(tmp_path, option=option, flags=flags))


SERVOS = """<mujoco><option timestep="0.004" integrator="{integrator}"/><worldbody>
<body name="arm"><joint name="j" axis="0 1 0" damping="0.1"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"
  mass=".05"/><body pos=".3 0 0"><joint name="k" type="slide" axis="1 0 0"/><geom size=".03" mass=".02"/></body></body>
</worldbody><actuator><position joint="j" kp="40" kv="0.6" forcerange="-3 3"/><velocity joint="k" kv="2"/>
<general joint="k" biastype="affine" gainprm="5" biasprm="0 -5 -0.1"/></actuator></mujoco>"""


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.DIRECT, artic.SolverType.TGS])
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_actuators_follow_mujocos_integrator(tmp_path, integrator, solver):
    """Stiff servos on a light arm (kp 40 on 2e-3 kg m^2: h sqrt(k / I) = 0.57 at 4 ms) under changing controls,
    one clamped by its forcerange, two on one slide: with MuJoCo's Euler the actuator forces are explicit
    (DriveType.EXPLICIT), with implicitfast their damping is implicit after the solve (EXPLICIT_STIFFNESS), and the
    arm follows MuJoCo's within 1e-5 rad or m over 2 s (measured 1.7e-7 PGS and DIRECT, 1.3e-5 to 1.9e-5 TGS: 2e-4
    for TGS). As PhysX's implicit drives (before 2026-11-29) it was 0.03 rad off under either integrator."""
    path = tmp_path / "servos.xml"
    path.write_text(SERVOS.format(integrator=integrator))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    j = model.articulations[0].get_joint("j")
    kind = artic.DriveType.EXPLICIT if integrator == "Euler" else artic.DriveType.EXPLICIT_STIFFNESS
    assert j.get_drive_params(j.dof_axes()[0]).drive_type == kind
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    worst = 0.0
    for i in range(500):
        u = [1.5 * np.sin(0.02 * i), 0.3 * np.cos(0.03 * i), 0.05]
        md.ctrl[:] = u
        control.set([u])
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        worst = max(worst, float(np.abs(model.get_qpos(scene)[0] - md.qpos).max()))
    assert np.abs(md.qpos).max() > 0.5
    assert worst < (2e-4 if solver == artic.SolverType.TGS else 1e-5), worst


@pytest.mark.parametrize(
    "option, counts", [("", (100, 1)), ('iterations="20"', (20, 1)), ('iterations="1000"', (255, 1))]
)
def test_mujocos_iterations_are_the_position_iterations(tmp_path, option, counts):
    """MuJoCo solves to convergence within `iterations` (default 100): an MJCF import's articulations get that many
    position iterations (PhysX's bound 255), not PhysX's default 4."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(_write(tmp_path, option=option))
    assert all(a.get_solver_iteration_counts() == counts for a in model.articulations)


@pytest.mark.parametrize(
    "option, tolerance", [("", SOLVER_TOLERANCE), ('tolerance="1e-10"', SOLVER_TOLERANCE), ('tolerance="0"', 0.0)]
)
def test_mujocos_tolerance_stops_the_iterations_early(tmp_path, option, tolerance):
    """MuJoCo stops its iterations when converged unless tolerance="0": an MJCF import gets artic's own early stop
    (Articulation.solver_tolerance, in velocity; tests/solvers/test_early_stop.py), or none; silently, as followed."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = artic.load_mjcf(_write(tmp_path, option=option))
    assert all(a.solver_tolerance == tolerance for a in model.articulations)


@pytest.mark.parametrize(
    "option, solver",
    [
        ("", artic.SolverType.DIRECT),
        ('solver="Newton"', artic.SolverType.DIRECT),
        ('solver="CG"', artic.SolverType.DIRECT),
        ('solver="PGS"', artic.SolverType.PGS),
    ],
)
def test_mujocos_solver_names_the_scenes_solver(tmp_path, option, solver):
    """MuJoCo's Newton (its default) and CG solve to convergence: model.solver_type is artic's exact DIRECT for them,
    PGS for MuJoCo's PGS; read silently, as followed. An unknown solver is refused, naming the choices."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = artic.load_mjcf(_write(tmp_path, option=option))
    assert model.solver_type == solver
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    scene.step(model.timestep)
    assert scene.solver_type == solver and not scene.env_status.any()
    with pytest.raises(artic.ArticError, match="solver='Jacobi' is not one of PGS, CG, Newton"):
        artic.load_mjcf(_write(tmp_path, option='solver="Jacobi"'))


def test_a_negative_tolerance_is_refused(tmp_path):
    with pytest.raises(artic.ArticError, match="tolerance"):
        artic.load_mjcf(_write(tmp_path, option='tolerance="-1"'))


def test_followed_settings_are_silent(tmp_path):
    """MuJoCo's defaults spelled out, the followed flags and harmless ones (energy) give no warning."""
    path = _write(
        tmp_path,
        option='integrator="Euler" density="0" viscosity="0" iterations="50"',
        flags='<flag gravity="enable" contact="disable" energy="enable" warmstart="enable"/>',
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        artic.load_mjcf(path)


def test_mjcf_gets_mujocos_defaults_and_urdf_keeps_physx(tmp_path):
    """An MJCF import has no link damping, no sleeping and no binding velocity caps (MuJoCo has none); a URDF
    import keeps PhysX's defaults (damping 0.05, sleep threshold 5e-3, caps 100 m/s, 50 rad/s, 100 per dof)."""
    art = _load(_write(tmp_path)).articulations[0]
    assert art.sleep_threshold == 0.0
    for link in art.get_links():
        assert link.linear_damping == 0.0 and link.angular_damping == 0.0
        assert link.max_linear_velocity >= 1e10 and link.max_angular_velocity >= 1e10
        if link.inbound_joint is not None:
            assert all(link.inbound_joint.get_max_joint_velocity(a) >= 1e10 for a in link.inbound_joint.dof_axes())
    urdf = tmp_path / "r.urdf"
    urdf.write_text("""<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"
        ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1"/><inertia ixx="1"
        iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="continuous"><parent
        link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>""")
    u = artic.load_urdf(urdf)
    assert u.sleep_threshold == pytest.approx(5e-3)
    b = u.get_link("b")
    assert (b.linear_damping, b.angular_damping, b.max_linear_velocity, b.max_angular_velocity) == (
        0.05,
        0.05,
        100.0,
        50.0,
    )
    assert b.inbound_joint.get_max_joint_velocity(b.inbound_joint.dof_axes()[0]) == 100.0


def test_actuator_drive_leaves_the_joint_spring_and_damper_apart(tmp_path):
    """A <velocity> actuator's drive carries its kv and a <position> actuator's its kp, and the joint's own damping
    and spring stay its PassiveParams (MuJoCo's passive forces, outside any actuator's force range), without a
    warning."""
    text = ARM.format(option="", flags="", k=2.0, d=0.05, loss=0).replace(
        "</mujoco>", '<actuator><velocity joint="slide" kv="3"/><position joint="shoulder" kp="4"/></actuator></mujoco>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        art = artic.load_mjcf(_write(tmp_path, text=text)).articulations[0]
    slide, shoulder = art.get_joint("slide"), art.get_joint("shoulder")
    assert slide.get_drive_params(slide.dof_axes()[0]).damping == pytest.approx(3.0)
    assert slide.get_passive_params(slide.dof_axes()[0]).damping == pytest.approx(0.05)
    assert shoulder.get_drive_params(shoulder.dof_axes()[0]).stiffness == pytest.approx(4.0)
    assert shoulder.get_passive_params(shoulder.dof_axes()[0]).stiffness == pytest.approx(2.0)


def test_ref_on_several_joints_of_one_body(tmp_path):
    """Joints of one body compose in order, each turned by q - ref (MuJoCo's mj_kinematics): the body sits where
    MuJoCo puts it at qpos0 and at another qpos."""
    path = tmp_path / "chain.xml"
    path.write_text("""<mujoco><compiler angle="radian"/><worldbody>
      <body name="b" pos="0.1 0.2 0.3">
        <joint name="a" axis="1 0 0" ref="0.4" pos="0 0.1 0"/>
        <joint name="s" type="slide" axis="0 1 1" ref="-0.3"/>
        <joint name="c" axis="0 0 1" ref="-1.1" pos="0.2 0 0"/>
        <geom type="box" size="0.1 0.2 0.3" pos="0.3 0 0"/>
      </body></worldbody></mujoco>""")
    mm = mujoco.MjModel.from_xml_path(str(path))
    art = _load(path).articulations[0]
    joints = [art.get_joint(n) for n in "asc"]
    for qpos in (mm.qpos0, np.array([1.0, 0.25, 0.3])):
        for j, q in zip(joints, qpos):
            j.set_joint_position(j.dof_axes()[0], q)
        pos, quat = _mujoco_poses(mm, qpos)["b"]
        pose = description_pose(art.get_link("b"))
        np.testing.assert_allclose(pose.p, pos, atol=1e-9)
        assert _same_rotation(pose.q, quat)


GRAVCOMP = """<mujoco><option timestep="0.001"/><worldbody>
  <body name="arm" gravcomp="{arm}"><joint name="j" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/></body>
  <body name="box" pos="2 0 1" gravcomp="{box}"><freejoint/><geom type="box" size=".1 .1 .1" mass="2"/></body>
  </worldbody><actuator><position joint="j" kp="10"/></actuator></mujoco>"""


@pytest.mark.parametrize("arm, box", [("1", "0.5"), ("0.3", "1.7")])
def test_gravcomp_is_mujocos(tmp_path, arm, box):
    """Body gravcomp (ignored before: a 1 kg arm on a kp 10 servo with gravcomp 1 sagged 0.238 rad where MuJoCo
    holds it level): the link's gravity_scale is 1 - gravcomp, so the arm holds or sags as in MuJoCo and a free box
    falls at (1 - gravcomp) g, or rises above gravcomp 1, as in MuJoCo (1e-3 over 1 s)."""
    path = tmp_path / "gravcomp.xml"
    path.write_text(GRAVCOMP.format(arm=arm, box=box))
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    model = _load(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    arm_art = next(a for a in model.articulations if a.name == "arm")
    box_art = next(a for a in model.articulations if a.name == "box")
    cache = arm_art.create_cache()
    for _ in range(1000):
        mujoco.mj_step(mm, md)
        scene.step(model.timestep)
    arm_art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert cache.joint_position[0, 0] == pytest.approx(md.qpos[0], abs=1e-3)
    z = scene.get_link_poses(box_art)[0, 0, 2]
    assert z == pytest.approx(md.qpos[3], abs=1e-3)
    assert abs(md.qpos[3] - 1.0) > 0.5 * 9.81 * 0.25  # it did fall (or rise) by (1 - gravcomp) g


def test_actuatorgravcomp_without_a_force_range_is_the_bodies_gravcomp(tmp_path):
    """actuatorgravcomp moves the joint's gravity compensation from passive to actuator force in MuJoCo; without an
    actuatorfrcrange to count it against, the motion is the same, and artic's (body gravcomp) follows MuJoCo's
    arm with no warning about it. With a range it is said that the compensation is not clamped."""
    path = tmp_path / "gravcomp.xml"
    path.write_text(GRAVCOMP.format(arm="0.6", box="0").replace('axis="0 1 0"', 'axis="0 1 0" actuatorgravcomp="true"'))
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = artic.load_mjcf(path)
    assert not [w for w in record if "actuatorgravcomp" in str(w.message)]
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    arm = next(a for a in model.articulations if a.name == "arm")
    cache = arm.create_cache()
    for _ in range(1000):
        mujoco.mj_step(mm, md)
        scene.step(model.timestep)
    arm.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert abs(md.qpos[0]) > 0.05  # it sags by the uncompensated 40 %
    assert cache.joint_position[0, 0] == pytest.approx(md.qpos[0], abs=1e-3)
    path.write_text(
        path.read_text().replace('actuatorgravcomp="true"', 'actuatorgravcomp="true" actuatorfrcrange="-3 3"')
    )
    with pytest.warns(RuntimeWarning, match="joint.*'j'.*actuatorgravcomp and an actuatorfrcrange.*not counted"):
        artic.load_mjcf(path)


FLUID = """<mujoco><option timestep="0.002" density="1.2" viscosity="0.02" wind="1 0.5 0"><flag contact="disable"/>
</option><worldbody>
  <body name="b" pos="0 0 1" euler="10 20 30"><freejoint/><geom type="box" size=".2 .1 .05" mass="0.05"/></body>
  <body name="arm" pos="1 0 1"><joint name="h" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .4 0 0" size=".05"
    mass="0.2"/></body>
  <body name="wrist" pos="2 0 1"><joint name="w1" axis="0 1 0"/><joint name="w2" axis="1 0 0"/>
    <geom type="box" size=".15 .05 .02" pos=".15 0 0" mass="0.1"/></body>
</worldbody></mujoco>"""


def test_a_medium_drags_as_mujocos(tmp_path):
    """<option density viscosity wind>: MuJoCo's inertia-box fluid forces (reported and ignored before). A light
    tumbling plate blown by the wind, a hinged capsule and a two-hinge body (split into two links, the first
    massless: it gets no inertia box, as MuJoCo's body has one) follow MuJoCo for 2 s: the plate to 1e-4 m while
    the medium moves it by metres from free fall, the hinges to 5e-3 rad."""
    path = tmp_path / "fluid.xml"
    path.write_text(FLUID)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the medium is followed: nothing to report
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    arts = {a.name: a for a in model.articulations}
    for _ in range(1000):
        mujoco.mj_step(mm, md)
        scene.step(model.timestep)
    plate = scene.get_link_poses(arts["b"])[0, 0, :3]
    np.testing.assert_allclose(plate, md.qpos[:3], atol=1e-4)
    assert np.hypot(*md.qpos[:2]) > 1.0  # blown along by the wind
    for name, columns in (("arm", [7]), ("wrist", [8, 9])):
        cache = arts[name].create_cache()
        arts[name].copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        np.testing.assert_allclose(cache.joint_position[0], md.qpos[columns], atol=5e-3)


def test_gymnasiums_swimmer_swims_as_mujocos():
    """Gymnasium's swimmer moves only by its medium's drag (density 4000, viscosity 0.1): with the same strokes for
    3 s (MuJoCo run with Euler, artic's), its root ends within 5 mm of MuJoCo's after swimming 0.4 m."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None:
        pytest.skip("gymnasium is not installed")
    path = Path(spec.origin).parent / "envs" / "mujoco" / "assets" / "swimmer.xml"
    mm = mujoco.MjModel.from_xml_path(str(path))
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    md = mujoco.MjData(mm)
    model = _load(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    (art,) = model.articulations
    for k in range(int(3.0 / mm.opt.timestep)):
        u = np.sin(2.0 * np.pi * k * mm.opt.timestep + 1.2 * np.arange(mm.nu))
        md.ctrl[:] = u
        control.set(u[None])
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    ours = [cache.joint_position[0, art.dof_names.index(n)] for n in ("slider1", "slider2")]
    assert np.hypot(*md.qpos[:2]) > 0.4
    np.testing.assert_allclose(ours, md.qpos[:2], atol=5e-3)
