"""MJCF import: the Gymnasium ant and humanoid shipped in artic/assets/mjcf, against MuJoCo on the same files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import artic
from artic import ArticError, CacheFlag, SolverType

ASSETS = Path(artic.__file__).parent / "assets" / "mjcf"
ANT_INIT = np.array([0.0, 0.0, 0.55, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 1.0])  # Gymnasium reset
ANT_JOINTS = ["hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4"]


@pytest.mark.parametrize("name", ["ant", "humanoid"])
def test_masses_and_inertias_match_mujoco(name):
    mujoco = pytest.importorskip("mujoco")
    mm = mujoco.MjModel.from_xml_path(str(ASSETS / f"{name}.xml"))
    model = artic.load_mjcf(ASSETS / f"{name}.xml")
    art = model.articulations[0]
    assert art.dof_count == mm.nv - 6 and len(model.statics) == 1
    for b in range(1, mm.nbody):
        body = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)
        link = art.get_link(body) if body else None
        if link is None:
            continue
        assert link.mass == pytest.approx(mm.body_mass[b], rel=1e-9)
        np.testing.assert_allclose(np.sort(link.inertia), np.sort(mm.body_inertia[b]), rtol=1e-6)
    joint = mujoco.mjtObj.mjOBJ_JOINT
    assert [a.joint for a in model.actuators] == [
        mujoco.mj_id2name(mm, joint, mm.actuator_trnid[k, 0]) for k in range(mm.nu)
    ]


def test_one_tree_is_named_after_the_model(tmp_path):
    """A file with one body tree names its articulation after <mujoco model> ('ant', what the CLI, replays and USD
    stages show), its root link after the root body; with two trees each keeps its root body's name."""
    art = artic.load_mjcf(ASSETS / "ant.xml").articulations[0]
    assert art.name == "ant" and art.root.name == "torso"
    two = tmp_path / "two.xml"
    two.write_text(
        '<mujoco model="pair"><worldbody>'
        '<body name="a"><freejoint/><geom size=".1"/></body>'
        '<body name="b" pos="1 0 0"><freejoint/><geom size=".1"/></body>'
        "</worldbody></mujoco>"
    )
    assert [a.name for a in artic.load_mjcf(two).articulations] == ["a", "b"]


def _artic_ant(solver, dt, seconds):
    model = artic.load_mjcf(ASSETS / "ant.xml")
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    art = model.articulations[0]
    art.sleep_threshold = 0.0
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.ALL)
    for k, n in enumerate(ANT_JOINTS):
        cache.joint_position[0, art.dof_names.index(n)] = ANT_INIT[7 + k]
    cache.root_transform[0, 2] = ANT_INIT[2]
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM)
    heights = []
    for _ in range(int(round(seconds / dt))):
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES)
        heights.append(cache.root_transform[0, 2])
    return np.array(heights), cache, scene, art


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_ant_comes_to_rest_at_mujocos_height(solver):
    """Gymnasium's reset pose, zero controls, MJCF time step 0.01: after landing (2 s) the torso rests within
    10 % of MuJoCo's height. (Left for 20 s more, MuJoCo's soft contacts let the feet creep outward at ~1 cm/s
    until the ankles reach their 30 degree limits at 0.38 m; artic's feet obey Coulomb's law, checked below, and
    the lightly loaded ones slide at < 1 cm/s.)"""
    mujoco = pytest.importorskip("mujoco")
    mm = mujoco.MjModel.from_xml_path(str(ASSETS / "ant.xml"))
    md = mujoco.MjData(mm)
    md.qpos[:] = ANT_INIT
    for _ in range(200):
        mujoco.mj_step(mm, md)
    heights, _cache, scene, art = _artic_ant(solver, 0.01, 2.0)
    assert heights[-1] == pytest.approx(md.qpos[2], rel=0.10)
    assert np.abs(np.diff(heights[-20:])).max() / 0.01 < 0.01  # at rest: the torso moves < 1 cm/s
    report = scene.get_contacts(art)
    assert report.count[0] == 4  # the four feet
    f = report.force[0, :4]
    normal = np.einsum("ij,ij->i", f, report.normal[0, :4])
    tangential = np.linalg.norm(f - normal[:, None] * report.normal[0, :4], axis=1)
    assert np.all(tangential <= 1.0 * normal * 1.001)  # Coulomb: inside or on the friction cone (mu = 1)
    np.testing.assert_allclose(normal.sum(), sum(lk.mass for lk in art.get_links()) * 9.81, rtol=0.02)


def test_humanoid_falls_and_lies_on_the_ground():
    """The humanoid (17 joints, self-collision on, passive joint springs as drives) dropped from its MJCF pose
    falls over and comes to lie on the floor, torso below its standing height, nothing below the floor."""
    model = artic.load_mjcf(ASSETS / "humanoid.xml")
    scene = artic.Scene(1, gravity=model.gravity, solver_type=SolverType.TGS)
    model.add_to(scene)
    art = model.articulations[0]
    cache = art.create_cache()
    for _ in range(int(3.0 / 0.005)):
        scene.step(0.005)
    art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_TRANSFORM | CacheFlag.POSITION)
    assert np.all(np.isfinite(cache.joint_position))
    assert 0.05 < cache.root_transform[0, 2] < 1.0
    report = scene.get_contacts(art)
    assert report.count[0] >= 3 and report.separation[0, : report.count[0]].min() > -0.02


def test_bad_mjcf_is_refused_clearly(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<robot/>")
    with pytest.raises(ArticError, match="expected <mujoco>"):
        artic.load_mjcf(bad)
    bad.write_text("<mujoco><worldbody><body><geom type='sdf' size='1'/></body></worldbody></mujoco>")
    with pytest.raises(ArticError, match="unsupported type 'sdf'"):
        artic.load_mjcf(bad)
    bad.write_text(
        "<mujoco><worldbody><body><joint type='hinge' range='1'/><geom size='1'/></body></worldbody></mujoco>"
    )
    with pytest.raises(ArticError, match="malformed"):
        artic.load_mjcf(bad)
    with pytest.raises(ArticError, match="not found"):
        artic.load_mjcf(tmp_path / "missing.xml")
