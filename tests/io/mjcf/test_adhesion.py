"""MuJoCo's <adhesion> actuator (a body transmission: its force gain * ctrl pulls the body towards what it touches,
shared by its contacts; step_kernel._adhesion) and geom `gap` (MuJoCo 4's band of inactive contacts beyond the
margin, which adhesion pulls through), against MuJoCo on the same files."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic

mujoco = pytest.importorskip("mujoco")

CEILING = """<mujoco><option timestep="0.002"/>
<worldbody><geom name="ceiling" type="box" size="0.5 0.5 0.05" pos="0 0 1.05"/>
<body name="{body}" pos="0 0 {z}"><freejoint/>{geom}</body></worldbody>
<actuator><adhesion name="stick" body="{body}" gain="{gain}" ctrlrange="0 1"/></actuator></mujoco>"""
BOX = '<geom type="box" size="0.05 0.05 0.05" density="1000" margin="0.001" gap="0.001"/>'  # 1 kg: 9.81 N
BALL = '<geom type="sphere" size="0.05" density="1000" gap="{gap}"/>'  # 0.524 kg


def _both(tmp_path, xml: str, ctrl: float, seconds: float = 0.5, solver=None):
    """The body's height every 10 ms in MuJoCo and in artic, with the adhesion's ctrl held."""
    path = tmp_path / "adhesion.xml"
    path.write_text(xml)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing of the file is left out
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver or model.solver_type)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    control.set(np.array([[ctrl]]))
    d.ctrl[:] = ctrl
    theirs, ours = [], []
    for k in range(round(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
        scene.step(m.opt.timestep)
        if k % 5 == 4:
            theirs.append(d.qpos[2])
            ours.append(model.get_qpos(scene)[0, 2])
    assert not scene.env_status.any()
    return np.array(theirs), np.array(ours)


SOLVERS = {"direct": None, "pgs": artic.SolverType.PGS, "tgs": artic.SolverType.TGS}
TOLERANCE = {"direct": 1e-5, "pgs": 1e-5, "tgs": 1e-4}  # [m] (measured 2e-6, 2e-6 and 4e-5 at most)


@pytest.mark.parametrize("solver", list(SOLVERS))
def test_a_box_sticks_under_a_ceiling_as_in_mujoco(tmp_path, solver):
    """A 1 kg box 0.5 mm below a ceiling (within its margin and gap of 1 mm each, as the fruit fly's adhesive pads),
    its adhesion's gain 30 N: at ctrl 1 (30 N > its weight) it is pulled up and held in both engines (heights
    within 2e-7 m of MuJoCo's every 10 ms under the file's solver and PGS); at ctrl 0.2 (6 N) it falls as MuJoCo's
    (2e-6 m over 0.5 s and 1.15 m of fall)."""
    xml = CEILING.format(body="box", z=0.9495, geom=BOX, gain=30)
    theirs, ours = _both(tmp_path, xml, 1.0, solver=SOLVERS[solver])
    assert np.abs(theirs - 0.95).max() < 2e-3  # MuJoCo's box stays
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE[solver])
    theirs, ours = _both(tmp_path, xml, 0.2, solver=SOLVERS[solver])
    assert theirs[-1] < 0.95 - 0.3  # MuJoCo's falls
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE[solver])


@pytest.mark.parametrize("solver", list(SOLVERS))
def test_adhesion_pulls_through_a_contact_in_the_gap(tmp_path, solver):
    """A ball 3 mm below the ceiling, inside its 5 mm gap (a contact found, inactive): adhesion (20 N against
    5.1 N of weight) pulls it up through that contact until it touches and holds it there, as in MuJoCo (heights to
    1.2e-7 m every 10 ms); without the gap there is no contact and the ball falls in both."""
    xml = CEILING.format(body="ball", z=0.947, geom=BALL.format(gap=0.005), gain=20)
    theirs, ours = _both(tmp_path, xml, 1.0, seconds=0.3, solver=SOLVERS[solver])
    assert theirs[-1] > 0.9495  # MuJoCo's ball rose to the ceiling
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE[solver])
    xml = CEILING.format(body="ball", z=0.947, geom=BALL.format(gap=0.0), gain=20)
    theirs, ours = _both(tmp_path, xml, 1.0, seconds=0.3, solver=SOLVERS[solver])
    assert theirs[-1] < 0.9  # no contact, no pull
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE[solver])


def test_an_adhesion_without_a_body_or_with_a_negative_ctrlrange_is_refused(tmp_path):
    path = tmp_path / "bad.xml"
    for actuator, words in (
        ('<adhesion gain="1" ctrlrange="0 1"/>', "needs body="),
        ('<adhesion body="nowhere" ctrlrange="0 1"/>', "names no body"),
        ('<adhesion body="box" ctrlrange="-1 1"/>', "needs a nonnegative ctrlrange"),
        ('<adhesion body="box" gain="30"/>', "needs a nonnegative ctrlrange"),  # MuJoCo: invalid control range
    ):
        xml = CEILING.format(body="box", z=0.9495, geom=BOX, gain=1)
        path.write_text(xml.replace('<adhesion name="stick" body="box" gain="1" ctrlrange="0 1"/>', actuator))
        with pytest.raises(artic.MjcfError, match=words):
            artic.load_mjcf(path)


TREE = """<mujoco><option timestep="0.002"/>
<worldbody><geom name="ceiling" type="box" size="0.5 0.5 0.05" pos="0 0 1.05"/>
<body name="base" pos="0 0 0.8"><freejoint/><geom type="box" size="0.05 0.05 0.05" density="1000"/>
  <body name="a" pos="0.1 0 -0.1"><joint type="hinge" axis="0 1 0" damping="0.1"/>
    <geom type="sphere" size="0.02" density="1000"/>
    <body name="a1" pos="0 0 -0.1"><joint type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="sphere" size="0.02" density="1000"/></body></body>
  <body name="pad" pos="0 0 0.147"><joint type="slide" axis="0 0 1" range="-0.01 0.01" damping="1"/>
    <geom type="sphere" size="0.05" density="100" gap="0.005"/></body>
</body></worldbody>
<actuator><adhesion name="stick" body="pad" gain="40" ctrlrange="0 1"/></actuator></mujoco>"""


def test_adhesion_on_a_link_deep_in_a_tree_pulls_the_tree(tmp_path):
    """The adhesive pad is the root's second child (file order: base, a, a1, pad; PhysX's breadth-first link order:
    base, a, pad, a1), on a slide joint: its pull through the gap contact slides it up to the ceiling, where it
    holds and the base hangs from it, as in MuJoCo (every coordinate to 1e-5 every 10 ms)."""
    path = tmp_path / "tree.xml"
    path.write_text(TREE)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    artic.MjcfControl(model, scene).set([[1.0]])
    d.ctrl[:] = 1.0
    worst = 0.0
    for k in range(150):
        mujoco.mj_step(m, d)
        scene.step(m.opt.timestep)
        if k % 5 == 4:
            worst = max(worst, float(np.abs(model.get_qpos(scene)[0] - d.qpos).max()))
    assert d.qpos[-1] > 0.002  # MuJoCo's pad slid up to the ceiling (3 mm)
    assert worst < 1e-5, worst


def test_an_adhesion_on_a_body_without_a_joint_acts_through_its_own_geoms(tmp_path):
    """The same tree with the pad welded to the base (no joint): the pad keeps a link of its own, fixed to the
    base's, so the adhesion pulls through the pad's contact alone and lifts the tree to the ceiling as in MuJoCo."""
    path = tmp_path / "welded.xml"
    path.write_text(TREE.replace('<joint type="slide" axis="0 0 1" range="-0.01 0.01" damping="1"/>', ""))
    theirs, ours = _both(tmp_path, path.read_text(), 1.0, seconds=0.3)
    assert theirs[-1] > 0.8 + 0.002  # MuJoCo's tree rose by the pad's 3 mm
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
