"""MJCF keyframes (issue 25, item 6): `load_mjcf` exposes every <key> (qpos, qvel, ctrl in MuJoCo's layout) and
`MjcfModel.set_keyframe` puts a scene's envs in one; checked against MuJoCo's mj_resetDataKeyframe."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from tests.support.models import mjcf_with_mujoco

mujoco = pytest.importorskip("mujoco")

# a free root whose COM is off its frame, a ball joint, a hinge with a ref, a slide; gravity and contacts off
MODEL = """<mujoco><option timestep="0.0001" gravity="0 0 0"><flag contact="disable"/></option>
<worldbody>
  <body name="torso" pos="0 0 1" euler="0 20 0"><freejoint/>
    <geom type="box" size=".2 .1 .05" pos=".05 .02 0"/>
    <body name="upper" pos=".2 0 0"><joint name="shoulder" type="ball"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body name="lower" pos=".3 0 0"><joint name="elbow" axis="0 1 0" ref="30" range="-90 90"/>
        <geom type="capsule" fromto="0 0 0 .25 0 0" size=".025"/>
        <body name="tip" pos=".25 0 0"><joint name="slide" type="slide" axis="1 0 0"/>
          <geom type="sphere" size=".03"/></body></body></body></body>
  <body name="pendulum" pos="1 0 1"><joint name="swing" axis="1 0 0"/><geom type="box" size=".05 .05 .3" pos="0 0 -.3"/>
  </body>
</worldbody>
<actuator><motor joint="elbow"/><position joint="swing" kp="10"/></actuator>
<keyframe>
  <key name="bent" qpos="0.3 -0.2 1.4 0.9238795 0 0.3826834 0  0.8660254 0.5 0 0  0.7 0.05  -0.4"
       qvel="0.5 -0.3 0.2 0.4 -1.0 0.8  0.3 0.6 -0.9  1.5 -0.2  0.7" ctrl="0.4 -0.3"/>
  <key name="still" time="2"/>
</keyframe></mujoco>"""


def _load(tmp_path):
    path = tmp_path / "model.xml"
    path.write_text(MODEL)
    return mjcf_with_mujoco(path)


def _poses(scene, model, mm):
    """{body: (world position, world quaternion x y z w)} of artic's bodies named as MuJoCo's."""
    out = {}
    for art in model.articulations:
        poses = scene.get_link_poses(art)[0]
        for i, name in enumerate(art.link_names):
            out[name] = poses[i]
    return {
        mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b): out[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)]
        for b in range(1, mm.nbody)
    }


def test_keyframes_are_read_in_mujocos_layout(tmp_path):
    """The keys' qpos, qvel and ctrl are MuJoCo's (a key without them: qpos0 and zeros, its time kept)."""
    model, mm = _load(tmp_path)
    assert [k.name for k in model.keyframes] == ["bent", "still"]
    for k, key in enumerate(model.keyframes):
        np.testing.assert_allclose(key.qpos, mm.key_qpos[k], atol=1e-12)
        np.testing.assert_allclose(key.qvel, mm.key_qvel[k], atol=1e-12)
        np.testing.assert_allclose(key.ctrl, mm.key_ctrl[k], atol=1e-12)
    assert model.keyframes[1].time == 2.0


def test_size_nkey_adds_default_keys_as_mujoco(tmp_path):
    """<size nkey="4"> with two keys defined: MuJoCo has four, the last two at qpos0 with zero qvel and ctrl
    (dm_control's dog declares one key and defines none: "no keyframe 0" before)."""
    path = tmp_path / "model.xml"
    path.write_text(MODEL.replace("<worldbody>", '<size nkey="4"/><worldbody>'))
    model, mm = mjcf_with_mujoco(path)
    assert mm.nkey == len(model.keyframes) == 4
    for k, key in enumerate(model.keyframes):
        np.testing.assert_allclose(key.qpos, mm.key_qpos[k], atol=1e-12)
        np.testing.assert_allclose(key.qvel, mm.key_qvel[k], atol=1e-12)
        np.testing.assert_allclose(key.ctrl, mm.key_ctrl[k], atol=1e-12)


def test_a_scene_set_to_a_keyframe_is_where_mujoco_puts_it_and_moves_as_it_does(tmp_path):
    """After set_keyframe (every env) and MuJoCo's mj_resetDataKeyframe, every body is at MuJoCo's pose (1e-5 m,
    quaternions equal up to sign), and over 20 ms with the keyframe's controls (no gravity) the bodies move as
    MuJoCo's do (1e-3 m): the free root's velocity (MuJoCo's origin velocity in world, spin in the body frame)
    and the ball joint's spin are converted, not copied."""
    model, mm = _load(tmp_path)
    md = mujoco.MjData(mm)
    scene = artic.Scene(2, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    key = model.set_keyframe(scene, "bent")
    control.set(np.tile(key.ctrl, (2, 1)))
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    mujoco.mj_kinematics(mm, md)
    ours = _poses(scene, model, mm)
    for b in range(1, mm.nbody):
        pose = ours[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)]
        np.testing.assert_allclose(pose[:3], md.xpos[b], atol=1e-5)
        assert abs(abs(np.dot(pose[3:], np.roll(md.xquat[b], -1))) - 1.0) < 1e-5
    start = md.xpos.copy()
    for _ in range(200):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    ours = _poses(scene, model, mm)
    assert np.abs(md.xpos[1:] - start[1:]).max() > 0.01  # they moved
    for b in range(1, mm.nbody):
        np.testing.assert_allclose(ours[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)][:3], md.xpos[b], atol=1e-3)


def test_a_keyframes_zero_quaternions_are_the_identity_as_in_mujoco(tmp_path):
    """A key whose free root and ball joint have quaternion "0 0 0 0" (menagerie's ALOHA scene holds its pot so in
    four keys): MuJoCo normalises it to the identity; artic puts the bodies where MuJoCo does (a NaN root before)."""
    path = tmp_path / "model.xml"
    path.write_text(
        MODEL.replace(
            '<key name="still" time="2"/>', '<key name="zero" qpos="0.3 -0.2 1.4 0 0 0 0  0 0 0 0  0.7 0.05  -0.4"/>'
        )
    )
    model, mm = mjcf_with_mujoco(path)
    md = mujoco.MjData(mm)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    model.set_keyframe(scene, "zero")
    mujoco.mj_resetDataKeyframe(mm, md, 1)
    mujoco.mj_kinematics(mm, md)
    ours = _poses(scene, model, mm)
    for b in range(1, mm.nbody):
        pose = ours[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)]
        np.testing.assert_allclose(pose[:3], md.xpos[b], atol=1e-5)
        assert abs(abs(np.dot(pose[3:], np.roll(md.xquat[b], -1))) - 1.0) < 1e-5
    np.testing.assert_allclose(md.xquat[1], [1, 0, 0, 0], atol=1e-12)  # MuJoCo's reading, which the test relies on


def test_get_qpos_reads_a_state_in_mujocos_layout(tmp_path):
    """get_qpos is set_keyframe's inverse: right after set_keyframe it gives the key's qpos (quaternions up to sign,
    the ball joint's rotation vector turned back into one), per env; after 20 ms it is MuJoCo's data.qpos to 1e-3."""
    model, mm = _load(tmp_path)
    md = mujoco.MjData(mm)
    scene = artic.Scene(2, gravity=model.gravity)
    model.add_to(scene)
    key = model.set_keyframe(scene, "bent", envs=[1])
    q = model.get_qpos(scene)
    assert q.shape == (2, mm.nq)
    np.testing.assert_allclose(q[0], mm.qpos0, atol=1e-6)
    np.testing.assert_allclose(q[1], key.qpos, atol=1e-6)
    control = artic.MjcfControl(model, scene)
    control.set(np.tile(key.ctrl, (2, 1)))
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    for _ in range(200):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    ours = model.get_qpos(scene)[1]
    for a in (3, 7):  # the free root's and the ball joint's quaternions: either sign is the same rotation
        if np.dot(ours[a : a + 4], md.qpos[a : a + 4]) < 0.0:
            ours[a : a + 4] *= -1.0
    np.testing.assert_allclose(ours, md.qpos, atol=1e-3)


def test_get_qpos_keeps_no_scene_alive(tmp_path):
    """get_qpos works out its layout once per model and scene and keeps it with the model: once the model and the
    scene are dropped, both are freed (a table keyed by the scene, whose plans hold the scene's articulations,
    kept every scene alive), and a second scene of the same model gets its own layout."""
    import gc
    import weakref

    model, mm = _load(tmp_path)
    first, second = artic.Scene(1, gravity=model.gravity), artic.Scene(3, gravity=model.gravity)
    model.add_to(first)
    assert model.get_qpos(first).shape == (1, mm.nq)
    gone = weakref.ref(first), weakref.ref(model)
    del first, model
    gc.collect()
    assert gone[0]() is None and gone[1]() is None
    model, _ = _load(tmp_path)
    model.add_to(second)
    assert model.get_qpos(second).shape == (3, mm.nq)


def test_set_keyframe_takes_envs_and_refuses_unknown_keys(tmp_path):
    """One env set to a key leaves the other as it was; an unknown name or index is a ValidationError listing the
    keys; a key's qpos of the wrong length is an MjcfError naming the key."""
    model, _mm = _load(tmp_path)
    scene = artic.Scene(2, gravity=model.gravity)
    model.add_to(scene)
    torso = model.articulations[0]
    before = scene.get_link_poses(torso)[1].copy()
    model.set_keyframe(scene, 0, envs=[0])
    assert scene.get_link_poses(torso)[0, 0, 2] == pytest.approx(1.4, abs=1e-6)
    np.testing.assert_allclose(scene.get_link_poses(torso)[1], before, atol=1e-6)  # written back as read
    with pytest.raises(artic.ValidationError, match="no keyframe 'crouch'; it has 'bent', 'still'"):
        model.set_keyframe(scene, "crouch")
    with pytest.raises(artic.ValidationError, match="no keyframe 5"):
        model.set_keyframe(scene, 5)
    path = tmp_path / "short.xml"
    path.write_text(MODEL.replace('ctrl="0.4 -0.3"', 'ctrl="0.4"'))
    with pytest.raises(artic.MjcfError, match="attribute ctrl has 1 numbers; the model's ctrl has 2"):
        artic.load_mjcf(path)
