"""MJCF self-collision filtering against MuJoCo: the weld/parent body filter, <contact><exclude>, and the warning
for what artic cannot filter (exclusions across trees or with the world; <pair>: test_mjcf_pairs.py)."""

from __future__ import annotations

import importlib.util
import re
import warnings
from itertools import combinations
from pathlib import Path

import pytest

import artic
from artic.io.mjcf.loader import MjcfError
from tests.support.models import mjcf_with_mujoco

ASSETS = Path(artic.__file__).parent / "assets" / "mjcf"

# every sphere overlaps every other one (centres at most 0.2 m apart, radius 0.15): each body pair that is not
# filtered is in contact, in MuJoCo and in artic. hip and hip2 are welded to the free root, hand to arm; thigh has
# two hinges (a chain of two links in artic), so its geom link's parent is not hip's link
_BODIES = """
<body name="root" pos="0 0 1"><freejoint/><geom size="0.15"/>
  <body name="hip" pos="0.05 0 0"><geom size="0.15"/>
    <body name="thigh" pos="0.05 0 0"><joint name="tx" axis="1 0 0"/><joint name="ty" axis="0 1 0"/>
      <geom size="0.15"/>
      <body name="shin" pos="0.05 0 0"><joint name="k" axis="0 1 0"/><geom size="0.15"/></body>
    </body>
  </body>
  <body name="hip2" pos="-0.05 0 0"><geom size="0.15"/></body>
  <body name="arm" pos="0 0.05 0"><joint name="s" axis="1 0 0"/><geom size="0.15"/>
    <body name="hand" pos="0 0.05 0"><geom size="0.15"/>
      <body name="finger" pos="0 0.05 0"><joint name="f" axis="1 0 0"/><geom size="0.15"/></body>
    </body>
  </body>
</body>"""


def _write(tmp_path, contact="", bodies=_BODIES):
    path = tmp_path / "filters.xml"
    path.write_text(f'<mujoco><option gravity="0 0 0"/><worldbody>{bodies}</worldbody>{contact}</mujoco>')
    return path


def _mujoco_filtered(mujoco, m) -> set:
    """Body-name pairs MuJoCo never lets collide: its filterBodyPair (same weld body; a weld body and its weld
    parent, neither the world's) and the <exclude> signatures, read from MuJoCo's compiled model."""
    weld, parent = m.body_weldid, m.body_parentid
    excluded = {int(s) for s in m.exclude_signature}
    out = set()
    for b1, b2 in combinations(range(1, m.nbody), 2):
        w1, w2 = weld[b1], weld[b2]
        wp1, wp2 = weld[parent[w1]], weld[parent[w2]]
        if w1 == w2 or (w1 != 0 and w2 != 0 and (w1 == wp2 or w2 == wp1)) or (b1 << 16) + b2 in excluded:
            out.add(frozenset((m.body(b1).name, m.body(b2).name)))
    return out


def _mujoco_contacts(mujoco, m) -> set:
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    bodies = [
        frozenset((m.body(m.geom_bodyid[c.geom1]).name, m.body(m.geom_bodyid[c.geom2]).name))
        for c in d.contact[: d.ncon]
    ]
    return {b for b in bodies if len(b) == 2}


def _artic_self_contacts(path) -> set:
    """Body-name pairs (the geom links are named after their bodies) of the self-contacts after one step."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    scene.step(1e-4)
    out = set()
    for k, art in enumerate(scene.articulations):
        report = scene.get_contacts(art)
        names = art.link_names
        for c in range(report.count[0]):
            if report.articulation_b[0, c] == k:
                out.add(frozenset((names[report.link_a[0, c]], names[report.link_b[0, c]])))
    return out


def test_weld_and_parent_filter_match_mujocos_contacts(tmp_path):
    """Every pair of overlapping spheres that MuJoCo's body filter lets collide is in contact in artic after one
    step, and no other pair: bodies welded to their parent (hip, hip2, hand) do not collide with each other, with
    the parent, nor with the children of their weld group (thigh against root, finger against arm), also where a
    body became a chain of links (thigh: two hinges)."""
    mujoco = pytest.importorskip("mujoco")
    path = _write(tmp_path)
    m = mujoco.MjModel.from_xml_path(str(path))
    expected = _mujoco_contacts(mujoco, m)
    assert frozenset(("thigh", "root")) not in expected and frozenset(("hip", "hip2")) not in expected
    assert frozenset(("finger", "root")) in expected  # the filter reaches one weld level up, not further
    assert _artic_self_contacts(path) == expected


def test_a_body_collides_with_its_parent_welded_to_the_world(tmp_path):
    """With the root welded to the world (no free joint), MuJoCo's parent filter no longer applies to the root's
    children: the one-joint arm collides with the root (and hip, hip2, welded to it), which artic's parent rule
    kept apart (robosuite's Sawyer swung its first link through its base); they are explicit pairs now."""
    mujoco = pytest.importorskip("mujoco")
    path = _write(tmp_path, bodies=_BODIES.replace("<freejoint/>", ""))
    m = mujoco.MjModel.from_xml_path(str(path))
    expected = _mujoco_contacts(mujoco, m)
    assert frozenset(("arm", "root")) in expected and frozenset(("hand", "root")) in expected
    assert _artic_self_contacts(path) == expected
    with_exclude = _write(
        tmp_path, '<contact><exclude body1="arm" body2="root"/></contact>', _BODIES.replace("<freejoint/>", "")
    )
    assert _artic_self_contacts(with_exclude) == _mujoco_contacts(
        mujoco, mujoco.MjModel.from_xml_path(str(with_exclude))
    )


_POST = """<mujoco><option timestep="0.002"/><worldbody>
  <body name="post"><geom type="box" size=".05 .05 .25" pos="0 0 .25"/>
    <body name="arm" pos="0 0 .6"><joint name="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/></body></body></worldbody></mujoco>"""


@pytest.mark.parametrize("soft", [True, False], ids=["soft", "hard"])
def test_an_arm_falls_onto_the_edge_of_its_post_as_in_mujoco(tmp_path, soft):
    """A capsule arm hinged on top of a box post welded to the world swings down onto the post's top edge and
    stays there, in MuJoCo at 0.836 rad. artic before: no contact (the parent rule), then, with the pair, the
    contact's impulse ended at zero (the normal and friction rows of a one-dof link undid each other sweep after
    sweep), and the edge lay between the capsule's axis samples (1.53 rad, then 1.01). Now within 0.01 rad."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "post.xml"
    path.write_text(_POST)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path, soft_constraints=soft)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    art = model.articulations[0]
    for _ in range(400):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION)
    assert 0.8 < md.qpos[0] < 0.9  # MuJoCo's arm rests on the edge
    assert cache.joint_position[0, 0] == pytest.approx(md.qpos[0], abs=0.01)


def test_exclude_keeps_two_bodies_of_one_tree_apart(tmp_path):
    """<exclude body1 body2> removes exactly that body pair's contacts, as in MuJoCo (here shin and root, and
    finger and thigh, which collide otherwise)."""
    mujoco = pytest.importorskip("mujoco")
    path = _write(
        tmp_path, '<contact><exclude body1="shin" body2="root"/><exclude body1="thigh" body2="finger"/></contact>'
    )
    m = mujoco.MjModel.from_xml_path(str(path))
    expected = _mujoco_contacts(mujoco, m)
    assert frozenset(("shin", "root")) not in expected and frozenset(("thigh", "finger")) not in expected
    got = _artic_self_contacts(path)
    assert got == expected
    assert got | {frozenset(("shin", "root")), frozenset(("thigh", "finger"))} == _artic_self_contacts(_write(tmp_path))


def test_unsupported_contact_content_is_dropped_with_a_warning(tmp_path):
    """An <exclude> with the world or between two trees is dropped with one warning naming each element; an
    <exclude> naming no body is an MjcfError naming the attribute."""
    other = '<body name="other" pos="1 0 0"><freejoint/><geom size="0.1"/></body>'
    contact = '<contact><exclude body1="world" body2="shin"/><exclude body1="other" body2="root"/></contact>'
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco><worldbody>{_BODIES}{other}</worldbody>{contact}</mujoco>")
    with pytest.warns(RuntimeWarning) as caught:
        artic.load_mjcf(path)
    text = " ".join(str(w.message) for w in caught)
    for part in (
        "<exclude body1='world' body2='shin'> (bodies of the world",
        "<exclude body1='other' body2='root'> (bodies of two different trees",
        "dropped",
    ):
        assert part in text
    path.write_text(
        f'<mujoco><worldbody>{_BODIES}</worldbody><contact><exclude body1="shin" body2="knee"/></contact></mujoco>'
    )
    with pytest.raises(MjcfError, match=re.escape("attribute body2='knee' names no body of the model")):
        artic.load_mjcf(path)


def _humanoids():
    out = [ASSETS / "humanoid.xml"]
    spec = importlib.util.find_spec("dm_control")
    if spec is not None:
        suite = Path(spec.origin).parent / "suite"
        out += [suite / "humanoid.xml", suite / "humanoid_CMU.xml"]
    return pytest.mark.parametrize("path", out, ids=[f"{p.parent.name}/{p.name}" for p in out])


@_humanoids()
def test_humanoid_filters_are_mujocos(path):
    """For every pair of bodies with geoms, artic filters the pair (same link, parent and child links, or
    collision_filters) exactly when MuJoCo's body filter and excludes do; and after one step at the initial pose no
    self-contact joins a pair MuJoCo filters (humanoid_CMU's clavicles and necks, its hip bodies welded to the
    root)."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(path))
    filtered = _mujoco_filtered(mujoco, m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = artic.load_mjcf(path).articulations[0]
    links = [lk for lk in art.get_links() if lk.shapes]
    assert len(links) == sum(1 for b in range(1, m.nbody) if m.body_geomnum[b])
    for a, b in combinations(links, 2):
        ours = a.parent is b or b.parent is a or frozenset((a, b)) in art.collision_filters
        assert ours == (frozenset((a.name, b.name)) in filtered), (a.name, b.name)
    assert not _artic_self_contacts(path) & filtered


@pytest.mark.parametrize("second", ["a", "world"])
def test_repeated_body_names_are_refused(tmp_path, second):
    """Two bodies with one name, or a body named like the world body, are an MjcfError naming the body (an <exclude>
    could not tell them apart; MuJoCo refuses both)."""
    path = tmp_path / "m.xml"
    path.write_text(
        f'<mujoco><worldbody><body name="a"><freejoint/><geom size="0.1"/></body><body name="{second}">'
        '<freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    )
    with pytest.raises(MjcfError, match=re.escape(f"body '{second}' is defined twice")):
        artic.load_mjcf(path)


_GRAZE = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="2 2 .1"/>
  <body name="arm" pos="0 0 .44"><joint name="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 .4 0 0" size=".01" mass="0.1"/>
    <geom type="sphere" pos=".4 0 0" size=".05" mass="0.5"/></body></worldbody></mujoco>"""


def test_a_pendulum_grazing_the_floor_is_stopped_as_in_mujoco(tmp_path):
    """A one-dof pendulum whose ball reaches 1 cm below the floor at the bottom of its swing: its soft contact's
    normal and friction rows move the same dof, and the patch's sweeps cycled (normal impulse up, friction stops
    the swing and with it the approach, normal impulse back to zero), ending 13 steps on a penetrating contact
    with no force; the ball went through (1.56 rad where MuJoCo's stops at 1.37). Now every penetrating contact
    pushes, and the pendulum stops within 0.05 rad of MuJoCo's."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "graze.xml"
    path.write_text(_GRAZE)
    model, mm = mjcf_with_mujoco(path)
    md = mujoco.MjData(mm)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    art = model.articulations[0]
    idle = 0
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        r = scene.get_contacts(art)
        n = r.count[0]
        if n and r.separation[0, :n].min() < -1e-3 and not r.force[0, :n].any():
            idle += 1
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION)
    assert idle == 0
    assert 1.2 < md.qpos[0] < 1.5  # MuJoCo's ball stopped on the floor short of hanging
    assert cache.joint_position[0, 0] == pytest.approx(md.qpos[0], abs=0.05)
