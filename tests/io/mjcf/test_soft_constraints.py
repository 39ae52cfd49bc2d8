"""MuJoCo's soft constraints as artic rows (constraints/softness.py, issue 25 item 4): solref/solimp on contacts,
joint limits and connect/weld equalities, checked three ways.

* Oracle: small MJCF scenes stepped by MuJoCo and by artic (each solver) from the same state: a falling box
  (pyramidal and elliptic cones, friction 1 and 0.5, per-geom solref/solimp mixed by solmix, a direct solref), a
  hinge hitting its range and one started outside it, a free box on a connect, a weld, a loop closed by a connect.
  The trajectories agree to 1e-5 m or 1e-4 rad (float32 against float64), 1e-4 where the weld's rotation rows or
  the loop's sensitivity add their own.
* Closed form: a sphere resting on a soft floor of constant impedance d sinks to r = -(1 - d) g / (d^2 k)
  (at rest, R lambda = -h k d r with lambda = m g h and R = (1 - d) / d / m).
* Identity: `soft_constraints=False` keeps PhysX's hard rows (the box rests on its face, the limit holds at the
  bound), and bad softness values are refused by name.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import artic
from artic import CacheFlag, SolverType
from artic.description.softness import Softness
from artic.errors import MjcfError, ValidationError

SOLVERS = [SolverType.PGS, SolverType.TGS, SolverType.DIRECT]
_BOX = """<mujoco><option timestep="0.002" {option}/><worldbody>
<geom type="plane" size="1 1 .1" {floor}/>
<body pos="0 0 0.3" euler="{euler}"><freejoint/><geom type="box" size=".1 .1 .1" mass="1" {geom}/></body>
</worldbody></mujoco>"""


def _load(tmp_path, xml, **kw):
    path = tmp_path / "m.xml"
    path.write_text(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return artic.load_mjcf(path, **kw)


def _scene(model, solver):
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    return scene


def _mujoco_run(xml, steps, read):
    """MuJoCo's values read(m, d) after each of `steps` steps (kinematics brought up to the new state)."""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    out = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        mujoco.mj_kinematics(m, d)
        out.append(read(m, d))
    return np.array(out)


BOX_CASES = {
    "pyramidal": {"option": "", "floor": "", "geom": "", "euler": "0 0 0"},
    "elliptic": {"option": 'cone="elliptic"', "floor": "", "geom": "", "euler": "0 0 0"},
    "friction 0.5": {"option": "", "floor": 'friction="0.5"', "geom": 'friction="0.5"', "euler": "0 0 0"},
    "mixed solref/solimp": {
        "option": 'impratio="2"',
        "floor": 'solref="0.01 0.5" solimp="0.8 0.99 0.01" solmix="3"',
        "geom": 'solref="0.04 1.5" solimp="0.95 0.95 0.001 0.3 3"',
        "euler": "0 0 0",
    },
    "direct solref": {"option": "", "floor": 'solref="-20000 -200"', "geom": 'solref="-10000 -100"', "euler": "0 0 0"},
}


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.name)
@pytest.mark.parametrize("case", list(BOX_CASES))
def test_falling_box_follows_mujoco(tmp_path, case, solver):
    """A box dropped 0.2 m onto a soft floor: its height over 1 s (impact, rebound, rest on the soft contact)
    follows MuJoCo's to 1e-5 m, whatever the cone, friction, mix of geom parameters or solref form."""
    xml = _BOX.format(**BOX_CASES[case])
    theirs = _mujoco_run(xml, 500, lambda m, d: d.xpos[1].copy())
    model = _load(tmp_path, xml)
    scene = _scene(model, solver)
    art = model.articulations[0]
    mine = []
    for _ in range(500):
        scene.step(model.timestep)
        mine.append(scene.get_link_poses(art)[0, 0, :3])
    mine = np.array(mine)
    assert theirs[:, 2].min() < 0.1 - 1e-5  # the soft contact sinks in: the comparison is not of hard contacts
    # TGS integrates the positions over its substeps, with the velocity of each: 1.2e-5 m off on the impact
    np.testing.assert_allclose(mine, theirs, atol=3e-5 if solver == SolverType.TGS else 1e-5)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_tilted_box_rests_at_mujocos_depth(tmp_path, cone):
    """A box dropped tilted lands on a corner and an edge, slides and tumbles onto a face: it comes to rest at
    MuJoCo's soft-contact depth (to 2e-5 m). Where it comes to rest in x and y depends on the friction model:
    artic's is PhysX's hard Coulomb patch friction, MuJoCo's a soft cone whose own two forms put the box 2.8 cm
    apart; artic's rests within 1.5 times that spread of MuJoCo's (3.3 and 2.2 cm)."""
    ends = {}
    for c in ("pyramidal", "elliptic"):
        xml = _BOX.format(option=f'cone="{c}"', floor="", geom="", euler="20 10 0")
        ends[c] = _mujoco_run(xml, 500, lambda m, d: d.xpos[1].copy())[-1]
    spread = np.linalg.norm(ends["pyramidal"][:2] - ends["elliptic"][:2])
    model = _load(tmp_path, _BOX.format(option=f'cone="{cone}"', floor="", geom="", euler="20 10 0"))
    scene = _scene(model, SolverType.PGS)
    for _ in range(500):
        scene.step(model.timestep)
    mine = scene.get_link_poses(model.articulations[0])[0, 0, :3]
    assert abs(mine[2] - ends[cone][2]) < 2e-5
    assert np.linalg.norm(mine[:2] - ends[cone][:2]) < 1.5 * spread


def _hinge_xml(joint: str) -> str:
    return f"""<mujoco><option timestep="0.002"/><worldbody><body pos="0 0 1">
    <joint name="j" axis="0 1 0" {joint}/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/>
    </body></worldbody></mujoco>"""


HINGE_CASES = {
    "hits its range": 'range="-30 30"',
    "soft range": 'range="-30 30" solreflimit="0.05 0.3" solimplimit="0.5 0.99 0.1"',
    "starts outside its range": 'range="30 70"',
}


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.name)
@pytest.mark.parametrize("case", list(HINGE_CASES))
def test_joint_limit_follows_mujoco(tmp_path, case, solver):
    """A horizontal bar on a hinge falls into its soft range (or is pushed into it from outside): its angle over
    1.2 s follows MuJoCo's to 1e-4 rad, overshoot and settling included."""
    xml = _hinge_xml(HINGE_CASES[case])
    theirs = _mujoco_run(xml, 600, lambda m, d: d.qpos[0])
    model = _load(tmp_path, xml)
    scene = _scene(model, solver)
    art = model.articulations[0]
    cache = art.create_cache()
    mine = []
    for _ in range(600):
        scene.step(model.timestep)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        mine.append(cache.joint_position[0, 0])
    assert np.max(theirs) > np.radians(30) + 1e-3 or case == "starts outside its range"  # the range is overrun
    np.testing.assert_allclose(mine, theirs, atol=3e-4 if solver == SolverType.TGS else 1e-4)


_EQUALITY = """<mujoco><option timestep="0.002"/><default><geom contype="0" conaffinity="0"/></default><worldbody>
<body name="a" pos="0.2 0 1" euler="0 0 10"><freejoint/><geom type="box" size=".2 .05 .05" mass="1"/></body>
<body name="l1" pos="0 0 0.5"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size=".02" mass="1"/>
  <body name="l2" pos="0.4 0 0"><joint axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0.4 0 0" size=".02" mass="1"/></body></body>
<body name="b1" pos="0.8 0 0.5"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.4" size=".02" mass="1"/>
  <body name="b2" pos="0 0 -0.4"><joint axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.1" size=".02" mass="1"/></body></body>
</worldbody><equality>{equality}</equality></mujoco>"""
EQUALITY_CASES = {
    # (equality, bodies compared (MuJoCo's ids), steps, tolerance [m])
    "connect": ('<connect body1="a" anchor="-0.2 0 0.05"/>', (1,), 400, 1e-4),
    "weld": ('<weld body1="a" solref="0.05 0.5" solimp="0.8 0.99 0.05"/>', (1,), 400, 2e-4),
    "weld at an anchor": ('<weld body1="world" body2="a" anchor="0.3 0.05 0" solref="0.05 0.3"/>', (1,), 400, 2e-4),
    "loop": ('<connect body1="l2" body2="b2" anchor="0.4 0 0"/>', (3, 5), 150, 1e-4),
}


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.name)
@pytest.mark.parametrize("case", list(EQUALITY_CASES))
def test_soft_equality_follows_mujoco(tmp_path, case, solver):
    """A free box hanging from a soft connect (swinging about its pin, whose centripetal acceleration MuJoCo 4's
    reference cancels), the same box on a soft weld, and a four-bar closed by a soft connect: the bodies follow
    MuJoCo's to the case's tolerance (the weld's rotation rows are MuJoCo's sin(angle / 2) only to first order:
    1.6e-5 m off where the weld turns 0.03 rad, 6e-4 m (1 % of the motion) where it turns 0.1 rad;
    the loop is chaotic, compared while the two are still float precision apart). The two free double pendulums
    of the scene, chaotic, are compared only where they close the loop."""
    equality, bodies, steps, tol = EQUALITY_CASES[case]
    xml = _EQUALITY.format(equality=equality)
    theirs = _mujoco_run(xml, steps, lambda m, d: np.concatenate([d.xpos[b] for b in bodies]))
    model = _load(tmp_path, xml)
    scene = _scene(model, solver)
    arts = {a.get_links()[-1].name: a for a in model.articulations}
    names = {1: "a", 3: "l2", 5: "b2"}
    mine = []
    for _ in range(steps):
        scene.step(model.timestep)
        mine.append(np.concatenate([scene.get_link_poses(arts[names[b]])[0, -1, :3] for b in bodies]))
    mine = np.array(mine)
    moved = np.abs(theirs - theirs[0]).max()
    assert moved > 25 * tol  # the bodies move: the comparison is not of bodies at rest
    np.testing.assert_allclose(mine, theirs, atol=tol)


def test_soft_contact_rests_at_the_closed_form_depth(tmp_path):
    """A sphere resting on a floor of constant impedance d = 0.9 (solimp 0.9 0.9) and solref (0.02, 1): at rest
    R lambda = -h k d r with lambda = m g h, R = (1 - d) / d w, w = 1 / m, so r = -(1 - d) g / (d^2 k),
    k = 1 / (d^2 timeconst^2): -0.393 mm, in every solver."""
    xml = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="1 1 .1" solimp="0.9 0.9 0.001"/>
    <body pos="0 0 0.1"><freejoint/><geom size=".1" mass="2" solimp="0.9 0.9 0.001"/></body></worldbody></mujoco>"""
    d, tc, g = 0.9, 0.02, 9.81
    k = 1.0 / (d * d * tc * tc)
    expected = 0.1 - (1.0 - d) * g / (d * d * k)
    for solver in SOLVERS:
        model = _load(tmp_path, xml)
        scene = _scene(model, solver)
        for _ in range(400):
            scene.step(model.timestep)
        z = scene.get_link_poses(model.articulations[0])[0, 0, 2]
        assert abs(z - expected) < (5e-6 if solver == SolverType.TGS else 2e-6), (solver, z, expected)


def test_hard_rows_stay_available(tmp_path):
    """load_mjcf(soft_constraints=False): PhysX's hard contact and limit: the box rests on its face (0.1 m, where
    the soft one sinks in) and the hinge stops at its bound; geom solref and joint solreflimit are then reported."""
    model = _load(tmp_path, _BOX.format(**BOX_CASES["pyramidal"]), soft_constraints=False)
    scene = _scene(model, SolverType.PGS)
    for _ in range(500):
        scene.step(model.timestep)
    assert abs(scene.get_link_poses(model.articulations[0])[0, 0, 2] - 0.1) < 1e-5
    model = _load(tmp_path, _hinge_xml(HINGE_CASES["hits its range"]), soft_constraints=False)
    scene = _scene(model, SolverType.PGS)
    art = model.articulations[0]
    cache = art.create_cache()
    top = 0.0
    for _ in range(600):
        scene.step(model.timestep)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        top = max(top, cache.joint_position[0, 0])
    assert top <= np.radians(30) + 1e-4
    path = tmp_path / "r.xml"
    path.write_text(_hinge_xml('range="-30 30" solreflimit="0.05 1"'))
    with pytest.warns(RuntimeWarning, match="solreflimit"):
        artic.load_mjcf(path, soft_constraints=False)


def test_softness_values_are_checked(tmp_path):
    """A solref mixing the two forms, an impedance outside (0, 1] or a midpoint outside [0, 1] is refused with
    the parameter's name; in an MJCF file, with the file and element."""
    for bad in (
        {"solref": (0.02, -1.0)},
        {"solref": (0.0, 0.0)},
        {"solimp": (0.0, 0.95, 0.001, 0.5, 2.0)},
        {"solimp": (0.9, 0.95, 0.001, 1.5, 2.0)},
        {"solimp": (0.9, 0.95)},
    ):
        with pytest.raises(ValidationError, match="softness"):
            Softness(**bad)
    with pytest.raises(ValidationError, match="softness"):
        artic.Material().softness = "soft"
    path = tmp_path / "bad.xml"
    path.write_text(_BOX.format(option="", floor='solref="0.02 -1"', geom="", euler="0 0 0"))
    with pytest.raises(MjcfError, match="solref"):
        artic.load_mjcf(path)
    with pytest.raises(MjcfError, match="soft_constraints must be True or False"):
        artic.load_mjcf(path, soft_constraints="yes")
