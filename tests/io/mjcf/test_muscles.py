"""MuJoCo's muscles (artic/io/mjcf/muscles.py) against MuJoCo 4: its curves, and myo_sim's models as shipped.

* The force-length-velocity, passive and activation curves equal mju_muscleGain, mju_muscleBias and
  mju_muscleDynamics over random parameters, lengths and speeds.
* myo_sim's elbows (six muscles on spatial tendons wrapping round spheres and cylinders with side sites; one and two
  joints, one with an exoskeleton motor) driven by a pattern of controls for 1 s: joints within 1e-4 rad of
  MuJoCo's (measured 2e-6 to 1.3e-5 while they swing 0.3 to 1.8 rad), activations and muscle forces equal.
* myo_sim's legs with a prosthesis (54 muscles, 29 dofs, a free root) fall from the 'stand' key with the muscles
  driven, until the left foot first touches the prosthesis's foot (78 ms): joints within 1e-5 rad (measured 5e-6)
  while the ankles turn 0.5 rad, with and without an MjcfControl (the passive muscle force acts at ctrl 0). From
  that contact on the two part (0.01 rad by 0.3 s): the contact, not the muscles.
* A muscle's peak force from MuJoCo's acc0 (when `force` is not given) equals MuJoCo's; a lengthrange not given is
  found by MuJoCo's compile-time simulation, run in artic (myo_sim's finger: MuJoCo's ends to 1e-6 m but one), and
  the finger then moves as MuJoCo's; a muscle on a floating body without one is reported by name and inert.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic.io.mjcf.muscles import has_tausmooth, muscle_act_dot, muscle_bias, muscle_gain
from tests.support.models import mjcf_with_mujoco
from tests.support.wheels import package_root

mujoco = pytest.importorskip("mujoco")


def _legacy(name: str):
    return package_root("myo_sim") / "models" / "legacy" / name


def test_muscle_curves_equal_mujocos():
    rng = np.random.default_rng(5)
    for _ in range(300):
        lo = rng.uniform(0.3, 0.9)
        prm = np.zeros(10)
        prm[:9] = [lo, lo + rng.uniform(0.2, 1.0), rng.uniform(10, 1000), 200, rng.uniform(0, 0.6),
                   rng.uniform(1.2, 3.5), rng.uniform(1, 15), rng.uniform(1, 2), rng.uniform(1.1, 1.8)]  # fmt: skip
        lr = np.sort(rng.uniform(0.1, 0.5, 2))
        length = rng.uniform(lr[0] - 0.2, lr[1] + 0.2, 8)
        speed = rng.uniform(-3, 3, 8)
        gain = muscle_gain(length, speed, lr, prm)
        bias = muscle_bias(length, lr, prm)
        for k in range(8):
            assert gain[k] == pytest.approx(mujoco.mju_muscleGain(length[k], speed[k], lr, 1.0, prm[:9]), abs=1e-9)
            assert bias[k] == pytest.approx(mujoco.mju_muscleBias(length[k], lr, 1.0, prm[:9]), abs=1e-9)
        dyn = np.array([rng.uniform(0.005, 0.05), rng.uniform(0.02, 0.1), rng.choice([0.0, rng.uniform(0.05, 0.5)])])
        ctrl, act = rng.uniform(-0.2, 1.2, 8), rng.uniform(-0.1, 1.1, 8)
        rate = muscle_act_dot(ctrl[:, None], act[:, None], dyn)[:, 0]
        # the flag MjcfControl passes (computed once) gives the same rates
        assert has_tausmooth(dyn) == (dyn[2] > 0.0)
        np.testing.assert_array_equal(muscle_act_dot(ctrl[:, None], act[:, None], dyn, has_tausmooth(dyn))[:, 0], rate)
        for k in range(8):
            assert rate[k] == pytest.approx(mujoco.mju_muscleDynamics(ctrl[k], act[k], dyn), rel=1e-9, abs=1e-9)


def _run(path, ctrl, seconds, key=None, control=True):
    """artic and MuJoCo side by side from qpos0 (or keyframe `key`) with a constant ctrl: the worst joint difference
    (free root's position and quaternion left out), MuJoCo's travel, the last act and forces of both."""
    model, mm = mjcf_with_mujoco(path)
    md = mujoco.MjData(mm)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.add_to(scene)
    ctl = artic.MjcfControl(model, scene) if control else None
    if key is not None:
        mujoco.mj_resetDataKeyframe(mm, md, mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_KEY, key))
        model.set_keyframe(scene, key)
    if ctl is not None:
        ctl.set(np.asarray(ctrl, float)[None])
        md.ctrl[:] = ctl.ctrl[0]
    free = 7 if mm.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE else 0
    start = md.qpos.copy()
    worst = travel = 0.0
    for _ in range(int(round(seconds / mm.opt.timestep))):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        q = model.get_qpos(scene)[0]
        worst = max(worst, float(np.abs(q[free:] - md.qpos[free:]).max()))
        travel = max(travel, float(np.abs(md.qpos[free:] - start[free:]).max()))
    assert not scene.env_status.any()
    return worst, travel, ctl, md


@pytest.mark.parametrize(
    "name",
    [
        "elbow/myoelbow_1dof6muscles.xml",
        "elbow/myoelbow_2dof6muscles.xml",
        "elbow/myoelbow_1dof6muscles_1dofexo.xml",
    ],
)
def test_myo_elbows_move_as_mujocos(name):
    path = _legacy(name)
    mm = mujoco.MjModel.from_xml_path(str(path))
    ctrl = np.array([0.3, 0.0, 0.1, 0.8, 0.5, 0.2, 0.4][: mm.nu])
    worst, travel, ctl, md = _run(path, ctrl, 1.0)
    assert travel > 0.3
    assert worst < 1e-4, worst
    np.testing.assert_allclose(ctl.act[0], md.act, atol=1e-9)
    muscles = [i for i in range(mm.nu) if mm.actuator_dyntype[i] == mujoco.mjtDyn.mjDYN_MUSCLE]
    np.testing.assert_allclose(ctl.actuator_force[0, muscles], md.actuator_force[muscles], rtol=1e-3, atol=1e-2)


def test_the_tendon_launch_advances_the_activations_as_the_host_does(monkeypatch):
    """On the CPU the tendons' launch advances the muscles' activations (SpatialActuators.take_activations) where
    MjcfControl did with NumPy: two envs of the two-joint elbow under different controls, changed halfway, and
    set_keyframe-style writes of act, give the host path's act, forces and joints (to 1e-12)."""
    from artic.io.mjcf.muscles import SpatialActuators

    path = _legacy("elbow/myoelbow_2dof6muscles.xml")

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = artic.load_mjcf(path)
            scene = artic.Scene(2, gravity=model.gravity, solver_type=model.solver_type)
            model.add_to(scene)
        ctl = artic.MjcfControl(model, scene)
        nu = len(model.actuators)
        ctl.set(np.array([np.linspace(0.0, 1.0, nu), np.linspace(1.0, 0.2, nu)]))
        for k in range(300):
            if k == 150:
                ctl.set(ctl.ctrl[::-1].copy(), act=np.full(ctl.act.shape, 0.25))
            scene.step(model.timestep)
        return ctl, model.get_qpos(scene)

    device, q_device = run()
    assert device._spatial._acts is not None  # the launch took them
    monkeypatch.setattr(SpatialActuators, "take_activations", lambda self, acts: None)
    host, q_host = run()
    assert host._spatial._acts is None
    assert np.abs(host.act - 0.25).max() > 0.05  # they moved after the write
    np.testing.assert_allclose(device.act, host.act, rtol=0, atol=1e-12)
    np.testing.assert_allclose(device.actuator_force, host.actuator_force, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(q_device, q_host, rtol=0, atol=1e-12)


@pytest.mark.parametrize("control", [True, False])
def test_myo_legs_fall_from_standing_as_mujocos(control):
    path = _legacy("osl/myolegs_osl.xml")
    mm = mujoco.MjModel.from_xml_path(str(path))
    ctrl = np.where(np.arange(mm.nu) % 3 == 0, 0.6, 0.05)
    worst, travel, _, _ = _run(path, ctrl, 0.075, key="stand", control=control)
    assert travel > 0.1
    assert worst < 1e-5, worst


ACC0_MODELS = {
    "hinges": """<worldbody><site name="a" pos="0 0.05 1.2"/>
      <body pos="0 0 1"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
       <geom name="ball" type="sphere" size="0.04" pos="0.3 0 0" contype="0" conaffinity="0"/>
       <site name="side" pos="0.3 0 0.2"/>
       <body pos="0.3 0 0"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <site name="b" pos="0.15 0 0.04"/></body></body></worldbody>
      <tendon><spatial name="t"><site site="a"/><geom geom="ball" sidesite="side"/><site site="b"/></spatial></tendon>
      <actuator><muscle name="m" tendon="t" lengthrange="0.3 0.7" gear="1.5"/></actuator>""",
    "free root and ball joint": """<worldbody><site name="a" pos="0.1 0.05 1.2"/>
      <body pos="0.2 0.1 1" euler="0.3 0.2 0.1"><freejoint/><geom type="box" size="0.1 0.05 0.03"/>
       <body pos="0.3 0 0"><joint type="ball"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <site name="b" pos="0.15 0.02 0.04"/></body></body></worldbody>
      <tendon><spatial name="t"><site site="a"/><site site="b"/></spatial></tendon>
      <actuator><muscle name="m" tendon="t" lengthrange="0.3 0.7" scale="150"/></actuator>""",
    "from a mocap body": """<worldbody><body mocap="true" pos="0 0 1.3"><site name="a"/></body>
      <body pos="0 0 1"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
       <site name="b" pos="0.2 0 0.03"/></body></worldbody>
      <tendon><spatial name="t"><site site="a"/><site site="b"/></spatial></tendon>
      <actuator><muscle name="m" tendon="t" lengthrange="0.2 0.5"/></actuator>""",
}


@pytest.mark.parametrize("kind", list(ACC0_MODELS))
def test_a_muscle_without_force_is_scaled_by_mujocos_acc0(tmp_path, kind):
    """force < 0 (the default): F0 = scale / acc0 with acc0 = |M^-1 gear J^T| at qpos0, equal to MuJoCo's to 1e-9
    (a free root's linear acceleration taken at the body's origin, as MuJoCo's free joint has it; a mocap body moved
    by nothing, as the world)."""
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco>{ACC0_MODELS[kind]}</mujoco>")
    model, mm = mjcf_with_mujoco(path)
    (rec,) = model.actuators
    expected = mm.actuator_gainprm[0, 3] / mm.actuator_acc0[0]
    assert rec.supported
    assert rec.gainprm[2] == pytest.approx(expected, rel=1e-9)
    assert rec.biasprm[2] == pytest.approx(expected, rel=1e-9)


def test_lengthranges_are_found_as_mujocos_compiler_finds_them():
    """myofinger_v0's muscles give no lengthrange: MuJoCo's compiler simulates each pulled and pushed (contacts,
    gravity and passive forces off, limits on) and keeps the extremes; artic's simulation of the same gives MuJoCo's
    ends to 1e-6 m, but for the extensor's shortest, 1 mm (1.5 % of its range) shorter: pulled straight, the finger
    balances on its sideways (adduction) joint, which MuJoCo's doubles keep at 0 while float32 rounding tips artic's to
    its limit."""
    path = _legacy("finger/myofinger_v0.xml")
    model, mm = mjcf_with_mujoco(path)
    for k, rec in enumerate(model.actuators):
        assert rec.supported
        low, high = mm.actuator_lengthrange[k]
        tol = 0.02 * (high - low) if rec.name == "extn" else 1e-5
        assert rec.lengthrange == pytest.approx((low, high), abs=tol), rec.name


def test_myo_finger_moves_as_mujocos():
    """myofinger_v0 driven by muscles whose lengthranges artic found: joints within 0.02 rad of MuJoCo's over 1 s
    (measured 7e-3 with the extensor's range 1.5 % off), with controls that do not balance the finger on its unstable
    sideways equilibrium (equal adductor and abductor controls tip artic's float32 state off it within 0.4 s, and
    MuJoCo's double state later)."""
    worst, travel, _, _ = _run(_legacy("finger/myofinger_v0.xml"), np.array([0.0, 0.3, 0.0, 0.6, 0.2]), 1.0)
    assert travel > 0.5
    assert worst < 0.02, worst


def test_a_muscle_on_a_floating_body_without_lengthrange_is_reported(tmp_path):
    xml = """<mujoco><worldbody><site name="a" pos="0 0 1"/>
    <body><freejoint/><geom size=".05"/><site name="b"/></body></worldbody>
    <tendon><spatial name="t"><site site="a"/><site site="b"/></spatial></tendon>
    <actuator><muscle name="m" tendon="t" force="100"/></actuator></mujoco>"""
    path = tmp_path / "m.xml"
    path.write_text(xml)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = artic.load_mjcf(path)
    hits = [str(w.message) for w in caught if "lengthrange" in str(w.message)]
    assert len(hits) == 1 and "'m'" in hits[0] and "floating" in hits[0]
    assert not model.actuators[0].supported


def test_uselimit_takes_the_tendons_range(tmp_path):
    xml = """<mujoco><compiler><lengthrange uselimit="true"/></compiler><worldbody><site name="a" pos="0 0 1"/>
    <body><joint type="slide" axis="0 0 1" range="-0.5 0.5"/><geom size=".05"/><site name="b"/></body></worldbody>
    <tendon><spatial name="t" range="0.6 1.4"><site site="a"/><site site="b"/></spatial></tendon>
    <actuator><muscle name="m" tendon="t" force="100" gear="2"/></actuator></mujoco>"""
    path = tmp_path / "m.xml"
    path.write_text(xml)
    model, mm = mjcf_with_mujoco(path)
    assert model.actuators[0].lengthrange == pytest.approx(tuple(mm.actuator_lengthrange[0]))


@pytest.mark.parametrize(
    "attrs, words",
    [('range="1 0.5"', "range"), ('lmin="1.1"', "lmin < 1 < lmax"), ('vmax="0"', "vmax"), ('scale="0"', "scale")],
)
def test_muscle_parameters_mujoco_refuses_are_refused(tmp_path, attrs, words):
    xml = f"""<mujoco><worldbody><site name="a" pos="0 0 1"/>
    <body><joint type="slide" axis="0 0 1"/><geom size=".05"/><site name="b"/></body></worldbody>
    <tendon><spatial name="t"><site site="a"/><site site="b"/></spatial></tendon>
    <actuator><muscle name="m" tendon="t" lengthrange=".5 1" {attrs}/></actuator></mujoco>"""
    path = tmp_path / "m.xml"
    path.write_text(xml)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(artic.MjcfError, match=words):
            artic.load_mjcf(path)
