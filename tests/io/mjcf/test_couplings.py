"""MJCF <tendon> and <equality> (artic/io/mjcf/couplings.py) against MuJoCo on the same files.

* The shipped humanoid's two hip-knee fixed tendons are present with MuJoCo's coefficients.
* A fixed tendon spring on a two-hinge chain: the first step's velocity change equals MuJoCo's (the generalized
  force c_i F, F = -k (L - L0) - d dL/dt, through artic's recip coefficients), and the 1 s trajectory stays near
  MuJoCo's. artic's tendon spring is implicit (PhysX's), MuJoCo's explicit, so the trajectories part at first
  order in h k / inertia, as joint springs do (mjcf_options.py): 1.2e-2 rad measured over 1 s, 0.02 allowed.
* A connect equality closing a parallelogram four-bar holds (gap below 1e-3 m) and moves as MuJoCo's.
* ball_in_cup's string (a spatial tendon used as a rope) holds the ball below the cup as in MuJoCo.
* A weld and a linear joint equality become a FixedJoint and a mimic joint; unsupported elements warn once,
  naming the element.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag
from artic.description.couplings import FixedTendon, MimicJoint

mujoco = pytest.importorskip("mujoco")

HUMANOID = "artic/assets/mjcf/humanoid.xml"

CHAIN = """<mujoco model="tendon_chain">
  <option timestep="0.002" gravity="0 0 0"><flag contact="disable"/></option>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="b" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 -1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t" stiffness="5" damping="0.1" springlength="0.2">
      <joint joint="j1" coef="1"/>
      <joint joint="j2" coef="-0.5"/>
    </fixed>
  </tendon>
</mujoco>
"""

# two fingers on a palm: the tendon's joints lie on sibling branches (MuJoCo grippers' "grasp" tendons)
FINGERS = """<mujoco model="fingers">
  <option timestep="0.002" gravity="0 0 0"><flag contact="disable"/></option>
  <worldbody>
    <body name="palm" pos="0 0 1">
      <joint name="wrist" type="hinge" axis="0 0 1"/>
      <geom type="box" size="0.05 0.05 0.02"/>
      <body name="left" pos="0 0.05 0">
        <joint name="l" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02"/>
      </body>
      <body name="right" pos="0 -0.05 0">
        <joint name="r" type="hinge" axis="-1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="grasp" stiffness="3">
      <joint joint="l" coef="0.5"/>
      <joint joint="r" coef="-2"/>
    </fixed>
  </tendon>
</mujoco>
"""

FOUR_BAR = """<mujoco model="four_bar">
  <option timestep="0.001" gravity="6 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="crank" pos="0 0 0.5">
      <joint name="crank" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/>
      <body name="coupler" pos="0 0 -0.3">
        <joint name="coupler" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/>
      </body>
    </body>
    <body name="rocker" pos="0.4 0 0.5">
      <joint name="rocker" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/>
    </body>
  </worldbody>
  <equality>
    <connect name="loop" body1="coupler" body2="rocker" anchor="0.4 0 0"/>
  </equality>
</mujoco>
"""


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return artic.load_mjcf(path)


def _write(tmp_path, text, name="model.xml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _setup(path, q0):
    """MuJoCo and artic at the same joint positions q0 (MuJoCo's joint order), at rest."""
    mm = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mm)
    md.qpos[:] = q0
    mujoco.mj_forward(mm, md)
    model = _load(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    names = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, k) for k in range(mm.njnt)]
    states = []
    for art in model.articulations:
        idx = [(k, art.dof_names.index(n)) for k, n in enumerate(names) if n in art.dof_names]
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache, CacheFlag.ALL)
        for k, d in idx:
            cache.joint_position[0, d] = q0[k]
        art.apply_cache(cache, CacheFlag.POSITION)
        states.append((art, cache, idx))
    return mm, md, model, scene, states


def _q(states, n, what="joint_position"):
    q = np.zeros(n)
    for art, cache, idx in states:
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        for k, d in idx:
            q[k] = getattr(cache, what)[0, d]
    return q


def test_humanoid_hip_knee_tendons_present():
    """The shipped humanoid's left_hipknee and right_hipknee tendons exist, on hip_y (coefficient -1) and knee (+1),
    as MuJoCo reads them."""
    mm = mujoco.MjModel.from_xml_path(HUMANOID)
    (art,) = _load(HUMANOID).articulations
    tendons = {t.name: t for t in art._couplings if isinstance(t, FixedTendon)}
    assert sorted(tendons) == sorted(mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_TENDON, k) for k in range(mm.ntendon))
    for k in range(mm.ntendon):
        t = tendons[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_TENDON, k)]
        expected = {}
        for w in range(mm.tendon_adr[k], mm.tendon_adr[k] + mm.tendon_num[k]):
            expected[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, mm.wrap_objid[w])] = mm.wrap_prm[w]
        got = {tj.link.inbound_joint.name: tj.coefficient for tj in t.tendon_joints[1:] if tj.coefficient != 0.0}
        assert got == pytest.approx(expected)


def test_fixed_tendon_force_matches_mujoco(tmp_path):
    """From rest at q = (0.3, -0.2), one step's joint velocity change equals MuJoCo's (5e-3 relative): the tendon
    force acts on each joint as coef_i F with MuJoCo's length, rest length, stiffness and signs (j2's axis is
    reversed, so the recip coefficients must carry the sign). artic's implicit spring scales the first impulse by
    1 / (1 + h (h k + d) r), r the row's inverse inertia: 1.9e-3 here."""
    path = _write(tmp_path, CHAIN)
    mm, md, _, scene, states = _setup(path, np.array([0.3, -0.2]))
    mujoco.mj_step(mm, md)
    scene.step(mm.opt.timestep)
    dv = _q(states, 2, "joint_velocity")
    assert np.abs(md.qvel).min() > 1e-3  # both joints pushed
    np.testing.assert_allclose(dv, md.qvel, rtol=5e-3)


def test_branching_fixed_tendon_force_matches_mujoco(tmp_path):
    """A tendon over two sibling finger joints is rooted at the palm and, from rest at (0.2, 0.4, -0.1), gives the
    first step's velocity change MuJoCo gives (5e-3 relative), the wrist (not in the tendon) untouched."""
    path = _write(tmp_path, FINGERS)
    mm, md, _, scene, states = _setup(path, np.array([0.2, 0.4, -0.1]))
    mujoco.mj_step(mm, md)
    scene.step(mm.opt.timestep)
    dv = _q(states, 3, "joint_velocity")
    assert np.abs(md.qvel[1:]).min() > 1e-3
    np.testing.assert_allclose(dv, _implicit(mm, md), rtol=2e-3, atol=1e-6)


def _implicit(mm, md):
    """MuJoCo's first-step velocity change from rest (explicit tendon spring), turned into the implicit spring's:
    F_implicit = F / (1 + h^2 k c^T M^-1 c) for one tendon of coefficients c (no damping)."""
    c = np.zeros(mm.nv)
    for w in range(mm.tendon_adr[0], mm.tendon_adr[0] + mm.tendon_num[0]):
        c[mm.jnt_dofadr[mm.wrap_objid[w]]] = mm.wrap_prm[w]
    minv_c = np.zeros((1, mm.nv))
    mujoco.mj_solveM(mm, md, minv_c, c.reshape(1, -1))  # M and its factor are the step's start (q0)
    return md.qvel / (1.0 + mm.opt.timestep**2 * mm.tendon_stiffness[0] * c @ minv_c[0])


def test_a_fixed_tendon_passes_a_welded_body(tmp_path):
    """dm_control's rodent routes its tail tendons past vertebrae that have no joint (refused before: "axis TWIST
    of joint 'vertebra_C8' is LOCKED"). The welded body's tendon joint only routes the tendon (coefficient 0, no
    row); the first step's velocity change equals MuJoCo's as for any fixed tendon."""
    text = CHAIN.replace(
        '<body name="b" pos="0.3 0 0">', '<body name="w" pos="0.3 0 0"><geom size="0.03"/><body name="b" pos="0 0 0">'
    ).replace("</body>\n    </body>", "</body></body>\n    </body>")
    path = _write(tmp_path, text)
    mm, md, model, scene, states = _setup(path, np.array([0.3, -0.2]))
    tendon = next(c for c in model.articulations[0]._couplings if isinstance(c, FixedTendon))
    assert [tj.link.name for tj in tendon.tendon_joints] == ["a_world", "a", "w", "b"]
    assert [tj.link.name for tj in tendon.acting_joints()] == ["a", "b"]
    mujoco.mj_step(mm, md)
    scene.step(mm.opt.timestep)
    dv = _q(states, 2, "joint_velocity")
    assert np.abs(md.qvel).min() > 1e-3
    np.testing.assert_allclose(dv, _implicit(mm, md), rtol=2e-3, atol=1e-6)


def test_fixed_tendon_trajectory_near_mujoco(tmp_path):
    """Over 1 s the tendon-sprung chain follows MuJoCo within 0.02 rad (implicit vs explicit spring, see the
    module docstring) while it moves by more than 0.2 rad."""
    path = _write(tmp_path, CHAIN)
    q0 = np.array([0.3, -0.2])
    mm, md, _, scene, states = _setup(path, q0)
    worst = travel = 0.0
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        worst = max(worst, float(np.abs(_q(states, 2) - md.qpos).max()))
        travel = max(travel, float(np.abs(md.qpos - q0).max()))
    assert travel > 0.2
    assert worst < 0.02


def test_connect_closes_a_four_bar(tmp_path):
    """The connect equality becomes a body joint that keeps the coupler's end on the rocker's end (gap < 1e-3 m)
    while the four-bar swings under a tilted gravity, and the crank angle follows MuJoCo's within 0.02 rad over 1 s
    (measured: gap 4e-7 m, angle 7e-4 rad over 1.1 rad of travel)."""
    path = _write(tmp_path, FOUR_BAR)
    mm, md, model, scene, states = _setup(path, np.zeros(3))
    assert len(model.joints) == 1 and isinstance(model.joints[0], artic.SphericalJoint)
    links = {}
    for art in model.articulations:
        for k, link in enumerate(art.get_links()):
            links[link.name] = (art, k)
    worst_gap = worst = travel = 0.0
    for _ in range(1000):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        ends = []
        for name, local in (("coupler", [0.4, 0, 0]), ("rocker", [0, 0, -0.3])):
            art, k = links[name]
            pose = scene.get_link_poses(art)[0, k]
            x = artic.Transform(pose[:3], pose[3:])
            ends.append(x.transform_point(np.array(local, float)))
        worst_gap = max(worst_gap, float(np.linalg.norm(ends[0] - ends[1])))
        q = _q(states, 3)
        worst = max(worst, abs(q[0] - md.qpos[0]))
        travel = max(travel, abs(md.qpos[0]))
    assert travel > 0.2
    assert worst_gap < 1e-3
    assert worst < 0.02


def test_tendon_equality_couples_the_fingers(tmp_path):
    """<equality><tendon tendon1> holding a fixed tendon at its qpos0 length (dm_control's manipulator fingers)
    becomes a mimic joint: started at (0.4, 0.1), where the tendon length 0.5 l - 2 r is its qpos0 value 0, the
    fingers swing out as the wrist spins the palm, and the length stays 0 within 1e-3 over 0.5 s."""
    xml = FINGERS.replace("</tendon>", '</tendon><equality><tendon tendon1="grasp"/></equality>')
    xml = xml.replace('stiffness="3"', "")
    path = _write(tmp_path, xml)
    mm, md, model, scene, states = _setup(path, np.array([0.0, 0.4, 0.1]))
    mimic = [c for a in model.articulations for c in a._couplings if isinstance(c, MimicJoint)]
    assert len(mimic) == 1
    for art, cache, idx in states:
        art.copy_internal_state_to_cache(cache, CacheFlag.ALL)
        cache.joint_velocity[0, dict(idx)[0]] = 8.0  # spin the wrist
        art.apply_cache(cache, CacheFlag.VELOCITY)
    md.qvel[0] = 8.0
    worst = travel = 0.0
    for _ in range(250):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        q = _q(states, 3)
        worst = max(worst, abs(0.5 * q[1] - 2.0 * q[2]))
        travel = max(travel, abs(q[1] - 0.4), abs(q[2] - 0.1))
    assert travel > 0.05
    assert worst < 1e-3


def test_ball_in_cup_ball_hangs_on_its_string():
    """dm_control's ball_in_cup: the string (a spatial tendon of two sites, range 0..0.3) becomes a DistanceJoint
    between the cup and ball articulations; released 0.292 m below the cup's site, the ball drops and hangs at the
    string's length (0.3 m, 1e-3) below it, at MuJoCo's height within 2e-3 m (MuJoCo's soft limit stretches the
    string by 0.6 mm), far above the floor where it lies without its string."""
    import os

    pytest.importorskip("dm_control")
    import dm_control.suite

    path = os.path.join(os.path.dirname(dm_control.suite.__file__), "ball_in_cup.xml")
    mm = mujoco.MjModel.from_xml_path(path)
    md = mujoco.MjData(mm)
    model = _load(path)
    assert [type(j) for j in model.joints] == [artic.DistanceJoint]
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    links = {link.name: (art, k) for art in model.articulations for k, link in enumerate(art.get_links())}
    for _ in range(round(2.0 / mm.opt.timestep)):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    ball, cup = (scene.get_link_poses(links[n][0])[0, links[n][1], :3] for n in ("ball", "cup"))
    cup_site = cup + np.array([0.0, 0.0, -0.108])  # the site's position in the cup body (the file's)
    assert np.linalg.norm(ball - cup_site) == pytest.approx(0.3, abs=1e-3)
    assert ball[2] == pytest.approx(md.site_xpos[mm.site("ball").id][2], abs=2e-3)
    assert ball[2] > 0.1


def test_connect_between_sites_closes_the_four_bar(tmp_path):
    """<connect site1 site2> (MuJoCo 3's form) holds the two sites together: the four-bar closed through sites on
    the coupler's and the rocker's ends swings as MuJoCo's (crank within 0.02 rad over 0.5 s)."""
    xml = FOUR_BAR.replace(
        '<geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/>',
        '<geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/><site name="c" pos="0.4 0 0"/>',
    )
    xml = xml.replace(
        '<geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/>\n    </body>\n  </worldbody>',
        '<geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/><site name="r" pos="0 0 -0.3"/>'
        "\n    </body>\n  </worldbody>",
    )
    xml = xml.replace(
        '<connect name="loop" body1="coupler" body2="rocker" anchor="0.4 0 0"/>',
        '<connect name="loop" site1="c" site2="r"/>',
    )
    assert 'site name="r"' in xml
    path = _write(tmp_path, xml)
    mm, md, model, scene, states = _setup(path, np.zeros(3))
    assert [type(j) for j in model.joints] == [artic.SphericalJoint]
    worst = travel = 0.0
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        worst = max(worst, abs(_q(states, 3)[0] - md.qpos[0]))
        travel = max(travel, abs(md.qpos[0]))
    assert travel > 0.2
    assert worst < 0.02


def test_a_weld_between_sites_holds_the_frames_together_as_mujocos(tmp_path):
    """<weld site1 site2> (MuJoCo 3's form) makes the two site frames coincide, position and orientation: a free
    box whose site starts 3.6 cm and 20 degrees off an arm's tip site is pulled onto it by the (soft) weld and
    swings with the arm by 2 rad; every joint and the box's pose within 1e-3 of MuJoCo's every 0.1 s over 0.5 s
    (measured 2e-4 in the first 0.1 s, as the soft weld pulls in, then 1e-5 to 5e-5). It was dropped, with a
    warning, before 2026-11-29."""
    xml = """<mujoco><option timestep="0.002"><flag contact="disable"/></option><worldbody>
 <body name="arm" pos="0 0 1"><joint name="h" axis="0 1 0" damping=".1"/>
  <geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"/><site name="tip" pos=".3 0 0" euler="0 0 20"/></body>
 <body name="box" pos=".33 .02 .98" euler="5 10 15"><freejoint/><geom type="box" size=".03 .03 .03"/>
  <site name="grip" pos="-.02 0 0"/></body>
</worldbody><equality><weld site1="grip" site2="tip"/></equality></mujoco>"""
    path = _write(tmp_path, xml)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    model = _load(path)
    assert [type(j) for j in model.joints] == [artic.FixedJoint]
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    worst = 0.0
    for k in range(250):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        if k % 50 == 49:
            worst = max(worst, float(np.abs(model.get_qpos(scene)[0] - md.qpos).max()))
    assert abs(md.qpos[0]) > 1.5
    assert worst < 1e-3


def test_weld_and_joint_equalities_map(tmp_path):
    """<weld> becomes a FixedJoint between the two links, <joint polycoef='c0 c1'> a mimic joint
    q1 - c1 q2 - c0 = 0 (gear ratio -c1, offset -c0 at ref 0)."""
    xml = FOUR_BAR.replace(
        '<connect name="loop" body1="coupler" body2="rocker" anchor="0.4 0 0"/>',
        '<weld body1="coupler" body2="rocker"/><joint joint1="coupler" joint2="crank" polycoef="0.1 -1 0 0 0"/>',
    )
    model = _load(_write(tmp_path, xml))
    assert [type(j) for j in model.joints] == [artic.FixedJoint]
    mimic = [c for a in model.articulations for c in a._couplings if isinstance(c, MimicJoint)]
    assert len(mimic) == 1
    assert mimic[0].gear_ratio == pytest.approx(1.0) and mimic[0].offset == pytest.approx(-0.1)


def test_weld_locks_the_four_bar(tmp_path):
    """Welding the coupler to the rocker makes the four-bar rigid: under the tilted gravity that swings it by more
    than 0.2 rad when only connected, its crank stays within 2e-3 rad of its start over 0.5 s, in artic and MuJoCo."""
    xml = FOUR_BAR.replace(
        '<connect name="loop" body1="coupler" body2="rocker" anchor="0.4 0 0"/>',
        '<weld body1="coupler" body2="rocker"/>',
    )
    mm, md, _, scene, states = _setup(_write(tmp_path, xml), np.zeros(3))
    worst = worst_mj = 0.0
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        worst = max(worst, abs(_q(states, 3)[0]))
        worst_mj = max(worst_mj, abs(md.qpos[0]))
    assert worst < 2e-3 and worst_mj < 2e-3


@pytest.mark.parametrize(
    "element, words",
    [
        ('<equality><joint joint1="coupler" polycoef="0.1"/></equality>', "without joint2"),
        ('<equality><tendon tendon1="t"/></equality>', "<tendon"),
        ('<equality><joint joint1="coupler" joint2="crank" active="false"/></equality>', "inactive"),
        (
            '<tendon><fixed name="f" frictionloss="0.1"><joint joint="crank" coef="1"/></fixed></tendon>',
            "frictionloss",
        ),
    ],
)
def test_unsupported_elements_warn_once(element, words, tmp_path):
    """Each unsupported coupling element or attribute gives exactly one warning, naming it."""
    xml = FOUR_BAR.replace(FOUR_BAR[FOUR_BAR.index("  <equality>") : FOUR_BAR.index("</mujoco>")], element + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        artic.load_mjcf(_write(tmp_path, xml))
    hits = [str(w.message) for w in caught if words in str(w.message)]
    assert len(hits) == 1, [str(w.message) for w in caught]


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.TGS, artic.SolverType.DIRECT])
def test_a_quartic_joint_equality_held_hard_stays_on_its_curve(tmp_path, solver):
    """<joint joint1="j2" joint2="j1" polycoef="0.1 0.5 0.3 -0.2 0.05"> held hard (`soft_constraints=False`, PhysX's
    mimic row, whose direction dC/dq = (-p'(q1), 1) turns with q1): a double pendulum started 0.1 rad off the curve
    closes it within 0.05 s and then keeps |q2 - p(q1)| below 2e-4 rad (measured 5e-5) while swinging 2 rad, in every
    solver."""
    xml = """<mujoco><option timestep="0.002"/><worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
     <body name="b" pos=".3 0 0"><joint name="j2" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
    </body></body></worldbody>
    <equality><joint joint1="j2" joint2="j1" polycoef="0.1 0.5 0.3 -0.2 0.05"/></equality></mujoco>"""
    path = _write(tmp_path, xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path, soft_constraints=False)
    (mimic,) = model.articulations[0].get_mimic_joints()
    assert mimic.softness is None and mimic.polynomial == (0.0, -0.3, 0.2, -0.05)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    art = model.articulations[0]
    cache = art.create_cache()
    worst, travel = 0.0, 0.0
    for step in range(500):
        scene.step(0.002)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q1, q2 = cache.joint_position[0, :2]
        gap = abs(q2 - (0.1 + 0.5 * q1 + 0.3 * q1**2 - 0.2 * q1**3 + 0.05 * q1**4))
        if step >= 25:  # after the start's 0.1 rad (c0) is closed
            worst = max(worst, gap)
        travel = max(travel, abs(q1))
    assert travel > 1.5
    assert worst < 2e-4, worst
