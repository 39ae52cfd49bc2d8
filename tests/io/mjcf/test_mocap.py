"""MJCF mocap bodies (io/mjcf/mocap.py): kinematic bodies placed by `model.set_mocap` (MuJoCo's mocap_pos and
mocap_quat), holding robots through welds; against MuJoCo stepping the same file with the same mocap path."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import artic
from artic.errors import MjcfError, ValidationError

_XML = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="2 2 .1"/>
<body name="target" mocap="true" pos="0 0 0.5"><geom type="sphere" size="0.02" contype="0" conaffinity="0"/></body>
<body name="box" pos="0 0 0.5"><freejoint/><geom type="box" size=".05 .05 .05" mass="1"/></body>
</worldbody><equality><weld body1="target" body2="box"/></equality>
<keyframe><key name="up" qpos="0 0 0.8 1 0 0 0" mpos="0 0 0.8" mquat="0.7071068 0 0 0.7071068"/></keyframe>
</mujoco>"""


def _load(tmp_path, xml=_XML):
    path = tmp_path / "m.xml"
    path.write_text(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return artic.load_mjcf(path), path


def _path(t, turn):
    """The mocap's position and quaternion (w x y z) at time t: a circle, turning about z at 2 rad/s or not."""
    a = 2.0 * t
    q = np.array([np.cos(a / 2), 0, 0, np.sin(a / 2)]) if turn else np.array([1.0, 0, 0, 0])
    return np.array([0.2 * np.sin(a), 0.2 * (1.0 - np.cos(a)), 0.5]), q


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.DIRECT], ids=lambda s: s.name)
@pytest.mark.parametrize("turn, tol", [(False, 1e-4), (True, 2e-3)], ids=["moving", "moving and turning"])
def test_box_welded_to_a_moving_mocap_body_follows_mujocos(tmp_path, solver, turn, tol):
    """A box held by a (soft) weld to a mocap body that is moved along a circle each step: its position follows
    MuJoCo's over 1 s to 1e-4 m (3e-5 measured); turning the mocap at 2 rad/s as well, to 2e-3 m (1.2e-3 measured:
    the mocap body, placed each step, has no velocity while the box turns, and artic's weld measures its angles in
    the box's turning frame where MuJoCo's rows do not turn). The mocap body is where it was put (gravity does not
    move it)."""
    model, path = _load(tmp_path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    (box,) = model.articulations
    target = model.mocap_bodies["target"]
    worst = 0.0
    for k in range(500):
        pos, quat = _path(k * m.opt.timestep, turn)
        d.mocap_pos[0], d.mocap_quat[0] = pos, quat
        model.set_mocap(scene, "target", pos, quat)
        mujoco.mj_step(m, d)
        scene.step(model.timestep)
        mujoco.mj_kinematics(m, d)
        worst = max(worst, np.abs(scene.get_link_poses(box)[0, 0, :3] - d.xpos[2]).max())
        np.testing.assert_allclose(scene.get_actor_pose(target)[0, :3], pos, atol=1e-6)
    assert np.abs(d.xpos[2] - np.array([0.0, 0.0, 0.5])).max() > 0.1  # the box was carried
    assert worst < tol, worst


def test_keyframe_places_the_mocap_body(tmp_path):
    """A key's mpos and mquat (w x y z) put the mocap body there at once, and it stays there."""
    model, _ = _load(tmp_path)
    scene = artic.Scene(2, gravity=model.gravity)
    model.add_to(scene)
    model.set_keyframe(scene, "up", envs=[1])
    for _ in range(50):
        scene.step(model.timestep)
    poses = scene.get_actor_pose(model.mocap_bodies["target"])
    np.testing.assert_allclose(poses[0], [0, 0, 0.5, 0, 0, 0, 1], atol=1e-6)
    np.testing.assert_allclose(poses[1], [0, 0, 0.8, 0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-6)
    np.testing.assert_allclose(scene.get_link_poses(model.articulations[0])[1, 0, :3], [0, 0, 0.8], atol=2e-3)


def test_mocap_misuse_is_refused_clearly(tmp_path):
    model, _ = _load(tmp_path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    with pytest.raises(ValidationError, match="no mocap body named 'nope'.*target"):
        model.set_mocap(scene, "nope", pos=(0, 0, 1))
    with pytest.raises(ValidationError, match="pos must be 3 finite numbers"):
        model.set_mocap(scene, "target", pos=(0, 0, np.nan))
    with pytest.raises(ValidationError, match="quat .* must not be zero"):
        model.set_mocap(scene, "target", quat=(0, 0, 0, 0))
    with pytest.raises(ValidationError, match="envs must be in"):
        model.set_mocap(scene, "target", pos=(0, 0, 1), envs=[3])
    bad = _XML.replace('mocap="true" pos="0 0 0.5">', 'mocap="true" pos="0 0 0.5"><joint/>')
    with pytest.raises(MjcfError, match="mocap body with a joint"):
        _load(tmp_path, bad)
