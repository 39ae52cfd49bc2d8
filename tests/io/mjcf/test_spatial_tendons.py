"""MJCF spatial tendons (artic/io/mjcf/spatial.py, wrap.py) against MuJoCo 4 on the same files.

* Wrapping: 240 random configurations of two sites round a sphere or a cylinder, with a side site outside the geom,
  inside it (the inside wrap) or none, all in one model: each tendon's length and tangent points equal MuJoCo's to
  1e-9 m and 1e-6 m (MuJoCo 4's homotopy rule for side sites included; about half of them wrap).
* A tendon over moving bodies (sites on three links, a sphere and a cylinder wrap on the links, a pulley): length
  and speed equal MuJoCo's ten_length and ten_velocity at random states to float32 precision.
* Forces: the tendon's spring and damper and a motor pulling on it move the chain as MuJoCo's for 1 s.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag
from artic.io.mjcf.spatial import TendonFrames, TendonSet, initial_pose

mujoco = pytest.importorskip("mujoco")


def _fmt(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def _load(tmp_path, xml, name="model.xml"):
    path = tmp_path / name
    path.write_text(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    return model, mujoco.MjModel.from_xml_path(str(path))


def _random_wraps(rng, count):
    """MJCF of `count` world-fixed tendons, each two sites round a sphere or cylinder of random pose and radius,
    with a side site outside, inside or absent."""
    sites, geoms, tendons = [], [], []
    for k in range(count):
        center = rng.uniform(-1, 1, 3)
        radius = rng.uniform(0.2, 0.8)
        quat = rng.normal(size=4)
        kind = "cylinder" if k % 2 else "sphere"
        geoms.append(
            f'<geom name="g{k}" type="{kind}" size="{radius} 5" pos="{_fmt(center)}" quat="{_fmt(quat)}" '
            'contype="0" conaffinity="0"/>'
        )
        x0, x1 = center + rng.uniform(-3, 3, 3), center + rng.uniform(-3, 3, 3)
        sites.append(f'<site name="a{k}" pos="{_fmt(x0)}"/><site name="b{k}" pos="{_fmt(x1)}"/>')
        side = ""
        if k % 3 == 1:  # a side site outside the geom
            sites.append(f'<site name="s{k}" pos="{_fmt(center + rng.uniform(-3, 3, 3))}"/>')
            side = f' sidesite="s{k}"'
        elif k % 3 == 2:  # inside: the inside wrap
            offset = rng.normal(size=3)
            offset *= rng.uniform(0.1, 0.9) * radius / np.linalg.norm(offset)
            sites.append(f'<site name="s{k}" pos="{_fmt(center + offset)}"/>')
            side = f' sidesite="s{k}"'
        tendons.append(
            f'<spatial name="t{k}"><site site="a{k}"/><geom geom="g{k}"{side}/><site site="b{k}"/></spatial>'
        )
    return (
        f"<mujoco><worldbody>{''.join(sites)}{''.join(geoms)}</worldbody><tendon>{''.join(tendons)}</tendon></mujoco>"
    )


def test_wrapping_round_spheres_and_cylinders_matches_mujoco(tmp_path):
    rng = np.random.default_rng(7)
    model, mm = _load(tmp_path, _random_wraps(rng, 240))
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    tendons = TendonSet(list(model.spatial_tendons.values()))
    length, points, _, _ = tendons.evaluate(initial_pose(tendons))
    np.testing.assert_allclose(length[0], md.ten_length, atol=1e-9)
    wrapped = 0
    for k in range(mm.ntendon):
        adr, num = md.ten_wrapadr[k], md.ten_wrapnum[k]
        if num == 4:  # site, two tangent points, site
            wrapped += 1
            got = points[0, [len(points[0]) - 2 * mm.ntendon + k, len(points[0]) - mm.ntendon + k]]
            # 1e-6: the inside wrap's touching point comes from Newton's method stopped at |f| < 1e-6
            np.testing.assert_allclose(got, md.wrap_xpos.reshape(-1, 3)[adr + 1 : adr + 3], atol=1e-6)
    assert 60 < wrapped < 180  # both outcomes are exercised


CHAIN = """<mujoco><option timestep="0.002" gravity="0 0 -9.81"><flag contact="disable"/></option>
<worldbody>
  <site name="w" pos="0 0.05 1.3"/>
  <body name="b1" pos="0 0 1"><joint name="j1" axis="0 1 0" damping="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
    <geom name="ball" type="sphere" size="0.05" pos="0.3 0 0" contype="0" conaffinity="0"/>
    <site name="s1" pos="0.1 0 0.05"/><site name="side1" pos="0.3 0 0.2"/>
    <body name="b2" pos="0.3 0 0"><joint name="j2" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <site name="s2" pos="0.15 0 0.04"/><site name="s3" pos="0.25 0.02 -0.03"/>
      <body name="b3" pos="0.3 0 0"><joint name="j3" type="slide" axis="1 0 0" damping="0.5"/>
        <geom type="box" size="0.05 0.03 0.03"/>
        <geom name="drum" type="cylinder" size="0.04 0.05" pos="0.1 0 0" euler="1.5708 0 0" contype="0"
          conaffinity="0"/>
        <site name="s4" pos="0.2 0 0.01"/>
      </body>
    </body>
  </body>
</worldbody>
<tendon><spatial name="t" stiffness="%s" damping="%s">
  <site site="w"/><site site="s1"/><geom geom="ball" sidesite="side1"/><site site="s2"/>
  <pulley divisor="2"/><site site="s3"/><geom geom="drum"/><site site="s4"/>
</spatial></tendon>
%s
</mujoco>"""


def _scene(model, solver=artic.SolverType.PGS):
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.add_to(scene)
    return scene


def test_length_and_speed_over_moving_bodies_match_mujoco(tmp_path):
    model, mm = _load(tmp_path, CHAIN % (0, 0, ""))
    md = mujoco.MjData(mm)
    scene = _scene(model)
    (art,) = model.articulations
    cache = art.create_cache()
    tendons = TendonSet([model.spatial_tendons["t"]])
    frames = TendonFrames(scene, tendons)
    rng = np.random.default_rng(3)
    wrapped = set()
    for _ in range(20):
        q = np.array([rng.uniform(-1.5, 1.5), rng.uniform(-2, 2), rng.uniform(-0.1, 0.1)])
        qd = rng.normal(size=3)
        md.qpos[:], md.qvel[:] = q, qd
        mujoco.mj_forward(mm, md)
        cache.joint_position[0], cache.joint_velocity[0] = q, qd
        art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        pose, velocity = frames.read()
        length, points, dirs, _ = tendons.evaluate(pose)
        speed = tendons.speed(pose, velocity, points, dirs)
        assert abs(length[0, 0] - md.ten_length[0]) < 2e-6
        assert abs(speed[0, 0] - md.ten_velocity[0]) < 2e-5
        wrapped.add(int(md.ten_wrapnum[0]))
    assert len(wrapped) > 1  # poses with and without wraps


ACTUATORS = {
    "motor": ('<motor name="m" tendon="t" gear="3"/>', -1.5),
    "position": ('<position name="m" tendon="t" kp="60" kv="4" timeconst="0.05"/>', 0.55),
    "general": (
        '<general name="m" tendon="t" gaintype="affine" gainprm="-2 -5 0" biastype="affine" biasprm="1 0 -3" '
        'dyntype="integrator" actrange="0 1"/>',
        2.0,
    ),
}


@pytest.mark.parametrize("kind", list(ACTUATORS))
@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.DIRECT])
def test_spring_damper_and_an_actuator_on_a_tendon_move_the_chain_as_mujocos(tmp_path, solver, kind):
    """The tendon's spring (k 40 N/m to its qpos0 length) and damper (2 N s/m), and an actuator pulling on it (a
    motor; a position servo with a filter; an affine gain with an integrator): the chain's joints follow MuJoCo's
    within 1e-4 over 1 s while swinging more than 0.5 rad (measured 1.6e-6 to 2.5e-6 over 2.4 to 3 rad swings), and
    the actuator force is MuJoCo's."""
    element, ctrl = ACTUATORS[kind]
    model, mm = _load(tmp_path, CHAIN % (40, 2, f"<actuator>{element}</actuator>"))
    md = mujoco.MjData(mm)
    scene = _scene(model, solver)
    control = artic.MjcfControl(model, scene)
    control.set(np.array([[ctrl]]))
    md.ctrl[:] = ctrl
    (art,) = model.articulations
    cache = art.create_cache()
    worst = travel = 0.0
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        worst = max(worst, float(np.abs(cache.joint_position[0] - md.qpos).max()))
        travel = max(travel, float(np.abs(md.qpos[:2]).max()))
    assert travel > 0.5
    assert worst < 1e-4, worst
    assert abs(control.actuator_force[0, 0] - md.actuator_force[0]) < 1e-4 * max(1.0, abs(md.actuator_force[0]))


def test_a_path_that_starts_with_a_pulley_divides_its_first_branch_as_mujoco(tmp_path):
    """`<pulley divisor="3"/>` before the first site (mujoco_warp's pulley tests; refused before as MuJoCo-invalid,
    which it is not): the first branch's length counts a third, as MuJoCo's ten_length, and a motor pulling on the
    tendon moves the chain as MuJoCo's (1e-4 over 1 s, more than 0.5 rad of travel)."""
    xml = (CHAIN % (0, 0, '<actuator><motor name="m" tendon="t" gear="3"/></actuator>')).replace(
        '<site site="w"/><site site="s1"/>', '<pulley divisor="3"/><site site="w"/><site site="s1"/>'
    )
    model, mm = _load(tmp_path, xml)
    md = mujoco.MjData(mm)
    scene = _scene(model)
    control = artic.MjcfControl(model, scene)
    control.set(np.array([[-1.5]]))
    md.ctrl[:] = -1.5
    (art,) = model.articulations
    cache = art.create_cache()
    tendons = TendonSet([model.spatial_tendons["t"]])
    frames = TendonFrames(scene, tendons)
    mujoco.mj_forward(mm, md)
    assert abs(tendons.evaluate(frames.read()[0])[0][0, 0] - md.ten_length[0]) < 2e-6
    worst = travel = 0.0
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        worst = max(worst, float(np.abs(cache.joint_position[0] - md.qpos).max()))
        travel = max(travel, float(np.abs(md.qpos[:2]).max()))
    assert travel > 0.5
    assert worst < 1e-4, worst


def test_without_a_control_the_springs_still_act(tmp_path):
    """A spatial tendon's spring is passive: add_to applies it with no MjcfControl made, as MuJoCo does."""
    model, mm = _load(tmp_path, CHAIN % (40, 2, ""))
    md = mujoco.MjData(mm)
    scene = _scene(model)
    (art,) = model.articulations
    cache = art.create_cache()
    for _ in range(200):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    np.testing.assert_allclose(cache.joint_position[0], md.qpos, atol=1e-3)


def test_a_tendon_that_blows_up_is_reported_not_raised(tmp_path):
    """A spring far too stiff for the step (1e9 N/m) drives the state non-finite: the scene reports the env, and the
    tendon's forces for it are left out rather than refused (stepping on does not raise)."""
    model, _ = _load(tmp_path, CHAIN % (1e9, 0, ""))
    scene = _scene(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the scene's non-finite warning is this test's subject, read below
        for _ in range(60):
            scene.step(0.002)
    assert scene.env_status.all()


def test_a_spatial_tendon_range_is_reported_once(tmp_path):
    xml = CHAIN % (0, 0, "")
    xml = xml.replace('<spatial name="t" stiffness="0" damping="0">', '<spatial name="t" range="0 2">')
    path = tmp_path / "ranged.xml"
    path.write_text(xml)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = artic.load_mjcf(path)
    hits = [str(w.message) for w in caught if "spatial tendon's range" in str(w.message)]
    assert len(hits) == 1 and "'t'" in hits[0]
    assert "t" in model.spatial_tendons


@pytest.mark.parametrize(
    "path, words",
    [
        ('<geom geom="ball"/><site site="s2"/>', "must start with a site"),
        ('<site site="w"/><geom geom="ball"/>', "between two sites"),
        ('<site site="w"/><pulley divisor="2"/><geom geom="ball"/><site site="s2"/>', "followed by a site"),
        ('<site site="w"/><geom geom="nothing"/><site site="s2"/>', "names no geom"),
        ('<site site="w"/><site site="w"/><site site="s2"/>', "the same site twice"),
        ('<site site="w"/><pulley divisor="2"/><site site="s2"/><site site="s3"/>', "two sites or more"),
        ('<site site="w"/>', "two sites or more"),
    ],
)
def test_malformed_paths_are_refused_by_name(tmp_path, path, words):
    xml = CHAIN % (0, 0, "")
    start = xml.index('<site site="w"/>')
    end = xml.index("</spatial>")
    path_file = tmp_path / "bad.xml"
    path_file.write_text(xml[:start] + path + xml[end:])
    with pytest.raises(ValueError):  # MuJoCo refuses each too
        mujoco.MjModel.from_xml_path(str(path_file))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(artic.MjcfError, match=words):
            artic.load_mjcf(path_file)


def test_envs_pull_their_own_tendons(tmp_path):
    """Three envs with three motor controls (one of them slack) each follow MuJoCo run with that control: the
    tendon forces are evaluated per env."""
    model, mm = _load(tmp_path, CHAIN % (40, 2, f"<actuator>{ACTUATORS['motor'][0]}</actuator>"))
    scene = artic.Scene(3, gravity=model.gravity, solver_type=artic.SolverType.PGS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.add_to(scene)
    ctrls = np.array([[-1.5], [0.0], [-0.4]])
    control = artic.MjcfControl(model, scene)
    control.set(ctrls)
    runs = []
    for c in ctrls[:, 0]:
        md = mujoco.MjData(mm)
        md.ctrl[:] = c
        runs.append(md)
    (art,) = model.articulations
    cache = art.create_cache()
    for _ in range(300):
        for md in runs:
            mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    for k, md in enumerate(runs):
        np.testing.assert_allclose(cache.joint_position[k], md.qpos, atol=1e-4)
    assert np.abs(cache.joint_position[0] - cache.joint_position[1]).max() > 0.1


def test_a_tendon_between_two_articulations_acts_on_both(tmp_path):
    """Gymnasium-Robotics' coupled half cheetahs, their tendon's spring made stiff (1000 N/m for the file's 0.1, which
    moves nothing in 1 s) and the second cheetah started 0.4 m ahead: the spatial tendon between the two torsos (a
    DistanceJoint for its range, a spring on both articulations) pulls them as in MuJoCo, within 1e-3 over 1 s
    (measured 1.7e-6), where MuJoCo's cheetahs without the spring end 0.046 from where they end with it."""
    gymnasium_robotics = pytest.importorskip("gymnasium_robotics")
    from pathlib import Path

    shipped = Path(gymnasium_robotics.__file__).parent / "envs" / "multiagent_mujoco" / "assets"
    text = (shipped / "coupled_half_cheetah.xml").read_text()
    assert 'stiffness="0.1"' in text
    path = tmp_path / "coupled.xml"
    path.write_text(text.replace('stiffness="0.1"', 'stiffness="1000"'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
        mm = mujoco.MjModel.from_xml_path(str(path))
    assert len(model.articulations) == 2 and "tendon0" in model.spatial_tendons and len(model.joints) == 1
    md, free = mujoco.MjData(mm), mujoco.MjData(mm)
    scene = _scene(model, model.solver_type)
    second = model.articulations[1]
    cache = second.create_cache()
    second.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    cache.joint_position[0, second.dof_names.index("rootx1")] += 0.4
    second.apply_cache(cache, CacheFlag.POSITION)
    rootx1 = mm.jnt_qposadr[mm.joint("rootx1").id]
    md.qpos[rootx1] += 0.4
    free.qpos[rootx1] += 0.4
    unsprung = mujoco.MjModel.from_xml_path(str(path))
    unsprung.tendon_stiffness[:] = 0.0
    for _ in range(int(round(1.0 / mm.opt.timestep))):
        mujoco.mj_step(mm, md)
        mujoco.mj_step(unsprung, free)
        scene.step(mm.opt.timestep)
    np.testing.assert_allclose(model.get_qpos(scene)[0], md.qpos, atol=1e-3)
    assert np.abs(md.qpos - free.qpos).max() > 0.02
