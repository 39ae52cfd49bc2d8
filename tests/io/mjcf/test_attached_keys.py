"""Keyframes of `<attach>`ed models, against MuJoCo 4's compiled model: each copy's keys follow the parent's own,
named prefix + name, with the copied joints' qpos and qvel and the copied actuators' ctrl from the child's key
(verbatim: a free joint's position is not moved by the attachment's frame) and the composite model's qpos0 and
zeros elsewhere. A key's quaternions are normalized as MuJoCo compiles them (a zero one becomes the identity)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic

ARM = """<mujoco model="arm"><worldbody>
  <body name="arm" pos="0 0 1"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
    <body name="fore" pos=".3 0 0"><joint name="j2" axis="0 1 0" ref="0.2"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/></body></body></worldbody>
  <actuator><motor joint="j1"/></actuator>
  <keyframe><key name="bent" qpos="0.5 -0.7" ctrl="0.3" time="1.5"/><key name="other" qpos="0.1 0.2" qvel="3 4"/>
  </keyframe></mujoco>"""

LID = """<mujoco model="box"><worldbody>
  <body name="obj" pos="0 0 1"><freejoint name="f"/><geom type="box" size=".05 .05 .05"/>
    <body name="lid" pos="0 0 .05"><joint name="h" axis="1 0 0"/><geom type="box" size=".05 .05 .01"/></body></body>
  </worldbody><keyframe><key name="up" qpos="0.1 0.2 0.3 0 1 0 0 0.9" qvel="1 2 3 4 5 6 7" time="2"/></keyframe>
  </mujoco>"""

SCENE = """<mujoco model="scene"><asset><model name="arm" file="arm.xml"/><model name="box" file="box.xml"/></asset>
  <worldbody>
    <body name="base"><joint name="slide" type="slide" axis="1 0 0"/><geom type="box" size=".1 .1 .1"/>
      <attach model="arm" body="arm" prefix="a_"/></body>
    <body name="ball" pos="1 0 0"><freejoint/><geom type="sphere" size=".1"/></body>
    <frame pos="2 0 0"><attach model="arm" prefix="b_"/></frame>
    <frame pos="3 0 0" euler="0 0 30"><attach model="box" body="obj" prefix="x_"/></frame>
  </worldbody>
  <actuator><motor joint="slide"/></actuator>
  <keyframe><key name="home" qpos="0.25 1 2 3 1 0 0 0 0.4 0.5 0.6 0.7 0 0 0 1 0 0 0 0" ctrl="1 0 0"/></keyframe>
</mujoco>"""


def _write(tmp_path, scene=SCENE, arm=ARM):
    (tmp_path / "arm.xml").write_text(arm)
    (tmp_path / "box.xml").write_text(LID)
    path = tmp_path / "scene.xml"
    path.write_text(scene)
    return path


def test_attached_keys_are_mujocos(tmp_path):
    """Two copies of an arm (by body inside a body with a slide, and its whole worldbody in a frame), a free ball
    between them and a box with a lid whose key places its free joint: every key's name, time, qpos, qvel and ctrl
    equal MuJoCo's; the parent's key (quaternions (0 0 .4 .5) and zero) is normalized as MuJoCo's. An attached key
    puts a scene's state where MuJoCo's key does."""
    mujoco = pytest.importorskip("mujoco")
    path = _write(tmp_path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is left out
        model = artic.load_mjcf(path)
    assert [k.name for k in model.keyframes] == [mm.key(k).name for k in range(mm.nkey)]
    assert mm.nkey == 6  # home, a_bent, a_other, b_bent, b_other, x_up
    for k, key in enumerate(model.keyframes):
        np.testing.assert_allclose(key.qpos, mm.key_qpos[k], atol=1e-12, err_msg=key.name)
        np.testing.assert_allclose(key.qvel, mm.key_qvel[k], atol=0, err_msg=key.name)
        np.testing.assert_allclose(key.ctrl, mm.key_ctrl[k], atol=0, err_msg=key.name)
        assert key.time == mm.key_time[k]
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    for name in ("x_up", "b_bent"):
        model.set_keyframe(scene, name)
        np.testing.assert_allclose(model.get_qpos(scene)[0], mm.key_qpos[mm.key(name).id], atol=1e-6)


def test_what_an_attached_key_cannot_carry_is_reported(tmp_path):
    """A child key's act (a filter actuator's activation) is left out of the attached key, with a warning that
    names it; its qpos of the wrong length is an MjcfError naming the attribute."""
    arm = ARM.replace('<motor joint="j1"/>', '<general joint="j1" dyntype="filter" dynprm="0.1"/>').replace(
        'ctrl="0.3"', 'ctrl="0.3" act="0.2"'
    )
    path = _write(tmp_path, arm=arm)
    with pytest.warns(RuntimeWarning, match="keys' act"):
        model = artic.load_mjcf(path)
    assert model.keyframes[1].name == "a_bent" and model.keyframes[1].ctrl[1] == 0.3
    _write(tmp_path, arm=ARM.replace('qpos="0.5 -0.7"', 'qpos="0.5"'))
    with pytest.raises(artic.MjcfError, match="attribute qpos needs 2 numbers"):
        artic.load_mjcf(path)


def test_a_replicated_attachments_keys_place_its_first_copy():
    """mujoco_warp's n_humanoid.xml: a humanoid <attach>ed inside a <replicate count=3>. MuJoCo 4 keeps the
    humanoid's three keys (prefixed '_') and sets the first copy's joints from them, the other two at qpos0; so
    does artic (to 1e-6: the keys' quaternions normalized from the file's digits)."""
    mujoco = pytest.importorskip("mujoco")
    from tests.support.wheels import package_root

    path = package_root("mujoco_warp") / "test_data/humanoid/n_humanoid.xml"
    mm = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its lights, cameras and textures are reported
        model = artic.load_mjcf(path)
    assert (
        [k.name for k in model.keyframes]
        == [mm.key(k).name for k in range(mm.nkey)]
        == [
            "_squat",
            "_stand_on_left_leg",
            "_no_efc",
        ]
    )
    for k, key in enumerate(model.keyframes):
        np.testing.assert_allclose(key.qpos, mm.key_qpos[k], atol=1e-6, err_msg=key.name)
        np.testing.assert_allclose(key.qvel, mm.key_qvel[k], atol=0, err_msg=key.name)
    assert np.abs(mm.key_qpos[0] - mm.qpos0).max() > 0.5  # the key does move the first copy


def test_an_attached_model_keeps_its_own_defaults(tmp_path):
    """The parent's main class sets joint damping 5, geom friction 2 and density 300, and a class 'x' damping 7; the
    attached arm's joints and geoms take none of it (MuJoCo: damping 0, friction 1, its masses at density 1000), and
    its own class 'x' (stiffness 3) reaches its joint j2. Before, the attached classes nested under the parent's main
    class and inherited its settings (damping 5 where MuJoCo has 0)."""
    mujoco = pytest.importorskip("mujoco")
    arm = ARM.replace('<mujoco model="arm">', '<mujoco model="arm"><default><default class="x"><joint stiffness="3"/>')
    arm = arm.replace("<worldbody>", "</default></default><worldbody>", 1).replace('name="j2"', 'name="j2" class="x"')
    scene = (
        '<mujoco><default><joint damping="5"/><geom friction="2 0.1 0.1" density="300"/>'
        '<default class="x"><joint damping="7"/></default></default>'
        '<asset><model name="arm" file="arm.xml"/></asset>'
        '<worldbody><body name="base"><attach model="arm" body="arm" prefix="a_"/></body></worldbody></mujoco>'
    )
    path = _write(tmp_path, scene=scene, arm=arm)
    mm = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is left out
        model = artic.load_mjcf(path)
    links = [lk for lk in model.articulations[0].get_links() if lk.name in ("a_arm", "a_fore")]
    assert [lk.inbound_joint.name for lk in links] == ["a_j1", "a_j2"]
    for k, lk in enumerate(links):
        passive = lk.inbound_joint._passive[0]
        assert (passive.damping, passive.stiffness) == (mm.dof_damping[k], mm.jnt_stiffness[k])
        assert lk.mass == pytest.approx(mm.body_mass[k + 2], rel=1e-9)
        assert lk.shapes[0].material.static_friction == mm.geom_friction[k, 0]
    assert (mm.dof_damping[0], mm.jnt_stiffness[1], mm.geom_friction[0, 0]) == (0.0, 3.0, 1.0)
