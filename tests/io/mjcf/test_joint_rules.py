"""MuJoCo's joint `springdamper` and limit `margin` (io/mjcf/joint_rules.py), checked against MuJoCo 4.

* Identity: the stiffness and damping a springdamper gives equal MuJoCo's compiled jnt_stiffness and dof_damping
  (hinge, slide and ball joints, armature, a floating base); inheritrange keeps the file's range, not the margin's.
* Closed form: stiffness I / (timeconst dampratio)^2 and damping 2 I / timeconst with I = 1 / (M^-1)_dd at qpos0,
  the one-dof pendulum's I being its inertia about the hinge plus armature.
* Oracle: a chain swinging on its springdampers, a bar falling into a range with a margin, a fixed tendon's range
  with a margin: the angles over 1 s follow MuJoCo's.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import artic
from artic import CacheFlag, SolverType
from artic.errors import MjcfError

_CHAIN = """<mujoco><option timestep="0.002"/><default><geom contype="0" conaffinity="0"/></default><worldbody>
<body pos="0 0 1" {root}><joint name="j1" axis="0 1 0" springdamper="0.2 0.3" armature="0.01" {j1}/>
<geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
<body pos=".3 0 0"><joint name="j2" axis="0 1 0" springdamper="0.1 0.5" springref="20"/>
<geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
<body pos=".3 0 0"><joint name="j3" {j3} springdamper="0.3 1"/><geom type="capsule" fromto="0 0 0 .2 0 0" size=".02"/>
</body></body></body></worldbody></mujoco>"""


def _load(tmp_path, xml, **kw):
    path = tmp_path / "m.xml"
    path.write_text(xml)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = artic.load_mjcf(path, **kw)
    return model, [str(w.message) for w in caught]


def _passive(model):
    """{joint name: [(stiffness, damping) per dof axis]}."""
    out = {}
    for art in model.articulations:
        for link in art.get_links():
            j = link.inbound_joint
            if j is not None and j.name and j.dof_axes():
                out[j.name] = [
                    (j.get_passive_params(ax).stiffness, j.get_passive_params(ax).damping) for ax in j.dof_axes()
                ]
    return out


CHAIN_CASES = {
    "hinges": {"root": "", "j1": "", "j3": 'axis="0 1 0"'},
    "slide and ball": {"root": "", "j1": "", "j3": 'type="ball"'},
    "floating base": {"root": "", "j1": "", "j3": 'type="slide" axis="1 0 0"'},
}


@pytest.mark.parametrize("case", list(CHAIN_CASES))
def test_springdamper_gives_mujocos_stiffness_and_damping(tmp_path, case):
    """Each joint's stiffness and damping equal MuJoCo's compiled values (to 1e-9 relative), whatever the joint
    kind, its armature or a floating base (whose M^-1 changes every dof's inertia), and no warning is given."""
    fill = dict(CHAIN_CASES[case])
    xml = _CHAIN.format(**fill)
    if case == "floating base":
        xml = xml.replace(
            '<joint name="j1" axis="0 1 0"', '<freejoint/><geom size=".05"/><body><joint name="j1" axis="0 1 0"', 1
        )
        xml = xml.replace("</body></body></body></worldbody>", "</body></body></body></body></worldbody>")
    model, said = _load(tmp_path, xml)
    assert not [s for s in said if "springdamper" in s], said
    m = mujoco.MjModel.from_xml_string(xml)
    mine = _passive(model)
    for jid in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, jid)
        if name is None:
            continue
        adr, n = m.jnt_dofadr[jid], {0: 6, 1: 3, 2: 1, 3: 1}[m.jnt_type[jid]]
        for k, (stiffness, damping) in enumerate(mine[name]):
            assert stiffness == pytest.approx(m.jnt_stiffness[jid], rel=1e-9), (name, k)
            assert damping == pytest.approx(m.dof_damping[adr + k], rel=1e-9), (name, k)
        assert len(mine[name]) == n


def test_springdamper_closed_form(tmp_path):
    """One hinge: I is the bar's inertia about the hinge plus armature, stiffness I / (tc zeta)^2, damping 2 I / tc."""
    xml = """<mujoco><worldbody><body><joint axis="0 1 0" armature="0.05" springdamper="0.25 0.4"/>
    <geom type="box" size=".2 .05 .05" pos=".2 0 0" mass="2"/></body></worldbody></mujoco>"""
    model, _ = _load(tmp_path, xml)
    ((stiffness, damping),) = next(iter(_passive(model).values()))
    inertia = 2.0 * (0.4**2 + 0.1**2) / 12.0 + 2.0 * 0.2**2 + 0.05  # box about its centre, moved 0.2 m, armature
    assert stiffness == pytest.approx(inertia / (0.25 * 0.4) ** 2, rel=1e-6)
    assert damping == pytest.approx(2.0 * inertia / 0.25, rel=1e-6)


ALL_SOLVERS = [SolverType.PGS, SolverType.TGS, SolverType.DIRECT]


@pytest.mark.parametrize("solver", ALL_SOLVERS, ids=lambda s: s.name)
def test_a_chain_on_springdampers_swings_as_in_mujoco(tmp_path, solver):
    """Three hinges started off their spring references swing and settle on their springdampers: the angles
    over 1 s follow MuJoCo's to 2e-5 rad (measured 1.5e-6; TGS 2e-4, measured 5e-5). Without the springdampers
    the chain falls and swings: 2.45 rad away."""
    xml = _CHAIN.format(root="", j1='ref="0"', j3='axis="0 1 0"')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = [0.4, -0.3, 0.5]
    model, _ = _load(tmp_path, xml)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    art = model.articulations[0]
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    cache.joint_position[0, :3] = d.qpos
    art.apply_cache(cache, CacheFlag.POSITION)
    worst = 0.0
    for _ in range(500):
        mujoco.mj_step(m, d)
        scene.step(model.timestep)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        worst = max(worst, float(np.max(np.abs(cache.joint_position[0, :3] - d.qpos))))
    assert worst < (2e-4 if solver == SolverType.TGS else 2e-5), worst


def test_springdamper_with_one_value_not_positive_is_refused(tmp_path):
    """As MuJoCo's compiler: both values positive, or "0 0" for none."""
    bad = """<mujoco><worldbody><body><joint axis="0 1 0" springdamper="0.1 0"/><geom size=".1"/></body>
    </worldbody></mujoco>"""
    with pytest.raises(MjcfError, match="springdamper.*both values must be positive"):
        _load(tmp_path, bad)
    none, _ = _load(tmp_path, bad.replace('"0.1 0"', '"0 0"').replace('axis="0 1 0"', 'axis="0 1 0" stiffness="3"'))
    assert next(iter(_passive(none).values()))[0][0] == 3.0


def _hinge_run(tmp_path, xml, solver, steps=500):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    theirs = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        theirs.append(d.qpos.copy())
    model, said = _load(tmp_path, xml)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    art = model.articulations[0]
    cache = art.create_cache()
    mine = []
    for _ in range(steps):
        scene.step(model.timestep)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        mine.append(cache.joint_position[0, : m.nq].copy())
    return np.array(mine), np.array(theirs), said


@pytest.mark.parametrize("solver", ALL_SOLVERS, ids=lambda s: s.name)
def test_a_limit_with_a_margin_holds_where_mujocos_does(tmp_path, solver):
    """A bar falls into a 30 degree range with a 0.1 rad margin (a degree-unit file: the margin stays in radians,
    as in MuJoCo): it stops 0.1 rad before the range as MuJoCo's, its angle over 1 s within 3e-5 rad of MuJoCo's
    (measured 3e-7, TGS 6e-6; the margin ignored, it overran to past 30 degrees: 0.115 rad away)."""
    xml = """<mujoco><option timestep="0.002"/><worldbody><body pos="0 0 1">
    <joint name="j" axis="0 1 0" range="-30 30" margin="0.1"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03" mass="1"/></body></worldbody></mujoco>"""
    mine, theirs, said = _hinge_run(tmp_path, xml, solver)
    assert not [s for s in said if "margin" in s], said
    assert np.max(theirs) < np.radians(30) - 0.05  # MuJoCo's bar stops short of the range
    np.testing.assert_allclose(mine, theirs, atol=3e-5)


@pytest.mark.parametrize("solver", ALL_SOLVERS, ids=lambda s: s.name)
def test_a_tendon_range_with_a_margin_holds_where_mujocos_does(tmp_path, solver):
    """Two hinges whose sum is a fixed tendon ranged to +-0.4 with a margin of 0.15: the chain falls until the sum
    nears 0.25 (MuJoCo's soft limit at range - margin); both angles over 1 s within 3e-5 rad of MuJoCo's (measured
    7e-6; TGS 1e-3, measured 3e-4; the margin ignored: 0.22 rad away)."""
    xml = """<mujoco><option timestep="0.002"/><compiler angle="radian"/>
    <default><geom contype="0" conaffinity="0"/></default><worldbody><body pos="0 0 1">
    <joint name="a" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass="1"/>
    <body pos=".3 0 0"><joint name="b" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass="1"/>
    </body></body></worldbody><tendon><fixed range="-0.4 0.4" margin="0.15"><joint joint="a" coef="1"/>
    <joint joint="b" coef="1"/></fixed></tendon></mujoco>"""
    mine, theirs, said = _hinge_run(tmp_path, xml, solver)
    assert not [s for s in said if "margin" in s], said
    assert np.max(theirs.sum(axis=1)) < 0.4 - 0.05
    np.testing.assert_allclose(mine, theirs, atol=1e-3 if solver == SolverType.TGS else 3e-5)


def test_inheritrange_takes_the_files_range_and_a_closing_margin_is_refused(tmp_path):
    """A position actuator's inheritrange spans the joint's range as written (MuJoCo's ctrlrange), not the
    range the margin leaves; a margin of half the range or more is refused; with soft constraints off the margin
    is reported (PhysX's hard limit acts at the range)."""
    xml = """<mujoco><compiler angle="radian"/><worldbody><body><joint name="j" axis="0 1 0" range="-1 1"
    margin="{margin}"/><geom size=".1"/></body></worldbody><actuator><position joint="j" kp="10"
    inheritrange="1"/></actuator></mujoco>"""
    model, _ = _load(tmp_path, xml.format(margin="0.2"))
    m = mujoco.MjModel.from_xml_string(xml.format(margin="0.2"))
    np.testing.assert_allclose(model.actuators[0].ctrlrange, m.actuator_ctrlrange[0])
    with pytest.raises(MjcfError, match="margin='1.2' closes the range"):
        _load(tmp_path, xml.format(margin="1.2"))
    _, said = _load(tmp_path, xml.format(margin="0.2"), soft_constraints=False)
    assert [s for s in said if "margin" in s and "soft_constraints=False" in s], said


@pytest.mark.parametrize("walker", ["suite/dog.xml", "locomotion/walkers/assets/fruitfly_v2/fruitfly.xml"])
def test_dm_controls_dog_and_fly_get_mujocos_springdampers(walker):
    """dm_control's dog (its tail) and fruit fly, as shipped: every hinge and slide joint's stiffness and damping
    equal MuJoCo's compiled ones to 1e-6 relative (measured 2e-8), and no springdamper is reported."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("dm_control")
    if spec is None:
        pytest.skip("dm_control is not installed")
    path = Path(spec.origin).parent / walker
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = artic.load_mjcf(path)
    assert not [w for w in caught if "springdamper" in str(w.message)]
    m = mujoco.MjModel.from_xml_path(str(path))
    assert "springdamper" in path.read_text()
    mine = {}
    for art in model.articulations:
        for link in art.get_links():
            j = link.inbound_joint
            if j is not None and j.name and j.dof_axes():
                mine[j.name] = j.get_passive_params(j.dof_axes()[0])
    compared = 0
    for jid in np.flatnonzero(np.isin(m.jnt_type, (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE))):
        p = mine[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, jid)]
        assert p.stiffness == pytest.approx(m.jnt_stiffness[jid], rel=1e-6, abs=1e-12)
        assert p.damping == pytest.approx(m.dof_damping[m.jnt_dofadr[jid]], rel=1e-6, abs=1e-12)
        compared += 1
    assert compared > 50
