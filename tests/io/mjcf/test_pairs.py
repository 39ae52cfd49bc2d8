"""MJCF <contact><pair>: explicit geom pairs collide whatever contype/conaffinity and the body filters, with the
pair's own friction, condim and margin (from its attributes or its <default><pair> class), as in MuJoCo run side by
side; bad pairs are refused and unsupported pair attributes reported."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag
from artic.io.mjcf.loader import MjcfError
from artic.sim.builders.geometry import geometry_arrays

mujoco = pytest.importorskip("mujoco")

_BALL = """<mujoco><worldbody>
<geom name="floor" type="plane" size="5 5 .1" contype="0" conaffinity="0"/>
<body pos="0 0 0.3"><freejoint/><geom name="ball" size="0.1" contype="0" conaffinity="0" margin="{geom_margin}"/>
</body></worldbody>{contact}</mujoco>"""


def _load(tmp_path, xml):
    path = tmp_path / "m.xml"
    path.write_text(xml)
    return path, artic.load_mjcf(path)


def _artic_root(model, seconds):
    """The free root's (x, z) after `seconds` at the file's time step and gravity."""
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    for _ in range(round(seconds / model.timestep)):
        scene.step(model.timestep)
    art = model.articulations[0]
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_TRANSFORM)
    return cache.root_transform[0, [0, 2]]


def _mujoco_root(xml, seconds):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(round(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
    return d.qpos[[0, 2]]


@pytest.mark.parametrize("pair_margin, geom_margin", [(0.0, 0.0), (0.01, 0.0), (0.005, 0.02)])
def test_pair_makes_filtered_geoms_collide_as_in_mujoco(tmp_path, pair_margin, geom_margin):
    """A ball and a floor that contype/conaffinity 0 keep apart rest on each other through a <pair>, at MuJoCo's
    height after 1 s (1e-3 m): the pair's margin, not the geoms', is the resting distance."""
    xml = _BALL.format(
        geom_margin=geom_margin, contact=f'<contact><pair geom1="ball" geom2="floor" margin="{pair_margin}"/></contact>'
    )
    _, model = _load(tmp_path, xml)
    z = _artic_root(model, 1.0)[1]
    assert z == pytest.approx(_mujoco_root(xml, 1.0)[1], abs=1e-3)
    assert z == pytest.approx(0.1 + pair_margin, abs=1e-3)  # resting, not falling


def test_without_the_pair_the_ball_falls_through(tmp_path):
    """The same ball and floor without the <pair> never touch (contype/conaffinity 0), in MuJoCo and in artic."""
    xml = _BALL.format(geom_margin=0.0, contact="")
    _, model = _load(tmp_path, xml)
    assert _mujoco_root(xml, 1.0)[1] < -4.0
    assert _artic_root(model, 1.0)[1] == pytest.approx(0.3 - 0.5 * 9.81, abs=0.05)


def test_pair_between_two_trees_holds_one_on_the_other(tmp_path):
    """Box a, which collides with nothing (contype/conaffinity 0), rests on box b (another tree, on the floor)
    through a <pair>: the pair joins the two articulations' collision block. Heights after 1 s as MuJoCo's
    (1e-3 m)."""
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
    <body name="b" pos="0 0 0.1"><freejoint/><geom name="gb" type="box" size="0.1 0.1 0.1"/></body>
    <body name="a" pos="0 0 0.35"><freejoint/><geom name="ga" type="box" size="0.1 0.1 0.1" contype="0"
    conaffinity="0"/></body></worldbody><contact><pair geom1="ga" geom2="gb"/></contact></mujoco>"""
    _, model = _load(tmp_path, xml)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    for _ in range(500):
        scene.step(model.timestep)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(500):
        mujoco.mj_step(m, d)
    for art, k in zip(model.articulations, (0, 7)):
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_TRANSFORM)
        assert cache.root_transform[0, 2] == pytest.approx(d.qpos[k + 2], abs=1e-3)
    assert d.qpos[9] == pytest.approx(0.3, abs=2e-3)  # a rests on b in MuJoCo too


# gravity tilted by atan(0.5) about y: the floor is a slope that holds a box with friction above 0.5
_SLOPE = """<mujoco><option gravity="{gx} 0 {gz}"/>{default}<worldbody>
<geom name="floor" type="plane" size="50 50 .1" friction="{geom_mu}"/>
<body pos="0 0 0.1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1" friction="{geom_mu}"/></body>
</worldbody><contact><pair {pair}/></contact></mujoco>"""


def _slope(geom_mu, pair, default=""):
    g = 9.81 / np.sqrt(1.25)
    return _SLOPE.format(gx=-0.5 * g, gz=-g, geom_mu=geom_mu, pair=pair, default=default)


@pytest.mark.parametrize(
    "geom_mu, pair",
    [
        (1.0, 'geom1="box" geom2="floor" friction="0.2 0.2"'),
        (0.2, 'geom1="floor" geom2="box" friction="0.8 0.8"'),
        (1.0, 'geom1="box" geom2="floor" condim="1"'),
    ],
)
def test_pair_friction_overrides_the_geoms(tmp_path, geom_mu, pair):
    """On a slope of gradient 0.5 the box slides or sticks by the pair's friction, not the geoms' (the geoms'
    would do the opposite), as in MuJoCo; a condim-1 pair is frictionless: the box slides as far as MuJoCo's
    (2 %)."""
    xml = _slope(geom_mu, pair)
    _, model = _load(tmp_path, xml)
    ours, theirs = abs(_artic_root(model, 1.0)[0]), abs(_mujoco_root(xml, 1.0)[0])
    assert (ours > 0.5) == (theirs > 0.5)
    assert ours > 0.5 if 'friction="0.2' in pair or "condim" in pair else ours < 0.01
    if "condim" in pair:
        assert ours == pytest.approx(theirs, rel=0.02)


def test_pair_attributes_come_from_its_default_class(tmp_path):
    """<default><pair> and a <pair class> set the pair's friction and margin (the geoms' are not used), as in
    MuJoCo's compiled pair; the box on the slope slides by the class's friction, as MuJoCo's does."""
    default = (
        '<default><pair friction="0.9 0.9" margin="0.002"/>'
        '<default class="slick"><pair friction="0.2 0.2"/></default></default>'
    )
    xml = _slope(1.0, 'class="slick" geom1="box" geom2="floor"', default)
    _, model = _load(tmp_path, xml)
    m = mujoco.MjModel.from_xml_string(xml)
    (pair,) = model.articulations[0].contact_pairs
    assert pair.material.static_friction == pytest.approx(m.pair_friction[0, 0])
    assert pair.material.dynamic_friction == pytest.approx(m.pair_friction[0, 0])
    assert pair.rest_offset == pytest.approx(m.pair_margin[0])  # the geoms have no margin
    assert (abs(_artic_root(model, 1.0)[0]) > 0.5) == (abs(_mujoco_root(xml, 1.0)[0]) > 0.5)


def test_pair_replaces_the_dynamic_contact_and_passes_the_body_filter(tmp_path):
    """A pair of geoms that would collide anyway is one candidate pair, with the pair's material (MuJoCo makes one
    contact, the pair's); a pair of a parent and a child body that <exclude> keeps apart is a candidate pair."""
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
    <body name="a" pos="0 0 0.5"><freejoint/><geom name="ga" size="0.1"/>
      <body name="b" pos="0.15 0 0"><joint type="hinge" axis="0 1 0"/><geom name="gb" size="0.1"/></body></body>
    </worldbody><contact><exclude body1="a" body2="b"/><pair geom1="ga" geom2="gb"/>
    <pair geom1="floor" geom2="gb" friction="0.3"/></contact></mujoco>"""
    _, model = _load(tmp_path, xml)
    h, shapes = geometry_arrays(model.articulations, model.statics, 64)
    names = [frozenset((shapes[a][0].name, shapes[b][0].name)) for a, b in zip(h["pair_a"], h["pair_b"])]
    assert sorted(map(sorted, names)) == [["floor", "ga"], ["floor", "gb"], ["ga", "gb"]]
    k = names.index(frozenset(("floor", "gb")))
    assert h["pair_own_material"][k] == 1
    np.testing.assert_allclose(h["pair_material"][k][:3], [0.3, 0.3, 0.0], rtol=1e-6)  # friction, restitution
    np.testing.assert_allclose(h["pair_material"][k][3:10], [0.02, 1.0, 0.9, 0.95, 0.001, 0.5, 2.0], rtol=1e-6)
    assert h["pair_own_material"][names.index(frozenset(("floor", "ga")))] == 0  # a dynamic pair, combined


@pytest.mark.parametrize(
    "pair, message",
    [
        ('geom1="ball" geom2="rock"', "attribute geom2='rock' names no geom of the model"),
        ('geom1="ball" geom2="ball"', "attributes geom1 and geom2 both name geom 'ball'"),
        ('geom1="ball"', "needs attribute geom2 naming a geom"),
        ('geom1="ball" geom2="floor" condim="2"', "condim"),
    ],
)
def test_bad_pairs_are_refused_naming_file_element_and_attribute(tmp_path, pair, message):
    """A pair naming an unknown geom, pairing a geom with itself, missing a geom or with a condim MuJoCo does not
    have is an MjcfError (an ArticError) naming the file, the <pair> element and the attribute."""
    path = tmp_path / "m.xml"
    path.write_text(_BALL.format(geom_margin=0.0, contact=f"<contact><pair {pair}/></contact>"))
    with pytest.raises(MjcfError, match=re.escape(message)) as err:
        artic.load_mjcf(path)
    assert isinstance(err.value, artic.ArticError)
    assert str(path) in str(err.value) and "<pair>" in str(err.value)


@pytest.mark.parametrize("soft", [True, False])
def test_unsupported_pair_attributes_are_reported(tmp_path, soft):
    """solreffriction, a gap and anisotropic sliding friction are not followed, nor solref and solimp with soft
    constraints off: one warning per kind, naming the attribute and the first <pair> that has it; with soft
    constraints on (the default) solref and solimp are read, not reported. condim 4 is followed with soft
    constraints (torsional friction, test_condim.py) and said to act as condim 3 without them."""
    contact = (
        '<contact><pair geom1="ball" geom2="floor" solref="0.01 1" solimp="0.9 0.95 0.001" gap="0.01"/>'
        '<pair name="p2" geom1="floor" geom2="ball" condim="4" friction="1 0.5" solreffriction="0.02 1"/>'
        "</contact>"
    )
    path = tmp_path / "m.xml"
    path.write_text(_BALL.format(geom_margin=0.0, contact=contact))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        artic.load_mjcf(path, soft_constraints=soft)
    text = [str(w.message) for w in caught]
    for attr, where in [
        ("solref", "<pair #0>"),
        ("solimp", "<pair #0>"),
        ("gap", "<pair #0>"),
        ("friction", "pair 'p2'"),
        ("solreffriction", "pair 'p2'"),
    ]:
        hits = [t for t in text if f"<pair> attribute {attr} is not followed" in t]
        expected = 0 if soft and attr in ("solref", "solimp") else 1
        assert len(hits) == expected and (not hits or where in hits[0]), (attr, text)
    assert not any("attribute condim" in t for t in text)
    as_three = [t for t in text if "act as condim 3" in t]
    assert len(as_three) == (0 if soft else 1) and (soft or "'p2'" in as_three[0]), text


def test_add_contact_pair_checks_its_shapes(tmp_path):
    """Articulation.add_contact_pair refuses a shape_a not on its links, two shapes of one link, a non-shape
    shape_b and a non-finite rest offset (ValidationError), and a pair added while in a scene (StateError)."""
    _, model = _load(tmp_path, _BALL.format(geom_margin=0.0, contact=""))
    art, floor = model.articulations[0], model.statics[0].shapes[0]
    ball = art.get_links()[0].shapes[0]
    other = artic.Sphere(0.1, name="loose")
    with pytest.raises(artic.ValidationError, match="shape_a must be a shape attached to a link"):
        art.add_contact_pair(other, floor)
    art.get_links()[0].attach_shape(other)
    with pytest.raises(artic.ValidationError, match="both on link"):
        art.add_contact_pair(ball, other)
    with pytest.raises(artic.ValidationError, match="shape_b must be an artic shape"):
        art.add_contact_pair(ball, "floor")
    with pytest.raises(artic.ValidationError, match="rest_offset"):
        art.add_contact_pair(ball, floor, rest_offset=float("nan"))
    model.add_to(artic.Scene(1, gravity=model.gravity))
    with pytest.raises(artic.StateError, match="add_contact_pair while in a scene"):
        art.add_contact_pair(ball, floor)
