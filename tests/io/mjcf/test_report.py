"""mjcf_report.py: what load_mjcf does not use is reported, one warning per kind naming it, the file, the first
element and the count; used attributes give none; the suite's models give no floods; `artic info` prints them."""

import collections
import re
import warnings

import pytest

import artic
from tests.support.models import REFUSED_MJCF, suite_mjcf_files

_MODEL = """<mujoco model="m">
  <default><geom {default_geom}/></default>
  <worldbody>
    <body name="b" pos="0 0 1" {body}>
      <joint name="j" type="hinge" axis="0 1 0" {joint}/>
      <geom name="g1" type="sphere" size="0.1" {geom}/>
      <geom name="g2" type="box" size="0.1 0.1 0.1" {geom}/>
    </body>
  </worldbody>
</mujoco>"""


def _load(tmp_path, soft=True, **parts):
    for key in ("default_geom", "body", "joint", "geom"):
        parts.setdefault(key, "")
    path = tmp_path / "m.xml"
    path.write_text(_MODEL.format(**parts))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        artic.load_mjcf(path, soft_constraints=soft)
    return path, [str(w.message) for w in caught]


@pytest.mark.parametrize(
    "element, attr, value, where",
    [
        ("geom", "solref", "0.02 1", "geom 'g1' in body 'b'"),
        ("geom", "solimp", "0.9 0.95 0.001", "geom 'g1' in body 'b'"),
        ("joint", "solreflimit", "0.02 1", "joint 'j' in body 'b'"),
        ("joint", "margin", "0.01", "joint 'j' in body 'b'"),
        ("geom", "gap", "0.01", "geom 'g1' in body 'b'"),
    ],
)
def test_each_ignored_physics_attribute_gives_one_warning(tmp_path, element, attr, value, where):
    """An attribute artic ignores gives exactly one warning, naming the file, the element kind, the attribute, its
    first element and how many times it occurs (twice for the two geoms, once for the joint and the body)."""
    # soft constraints off: solref and solimp are then not used (on, they are read: test_soft_constraints.py)
    path, msgs = _load(tmp_path, soft=False, **{element: f'{attr}="{value}"'})
    hits = [m for m in msgs if f"<{element}> attribute {attr} " in m]
    assert len(hits) == 1, msgs
    count = 2 if element == "geom" else 1
    assert str(path) in hits[0] and where in hits[0] and f"{count} occurrence(s)" in hits[0]


def test_supported_attributes_give_no_report(tmp_path):
    """Attributes artic reads (joint damping/range/armature, geom friction/margin/gap/density, body orientation), and
    ignored ones at a value that asks for what artic does anyway (condim 3: sliding friction only, condim 1: none),
    are not reported: no warning at all for this model."""
    _, msgs = _load(
        tmp_path,
        body='euler="0 0 10" gravcomp="0"',
        joint='damping="0.1" range="-1 1" armature="0.01"',
        geom='friction="0.8" margin="0.001" gap="0.001" density="500" contype="1" condim="3"',
    )
    assert msgs == []


def test_default_class_attributes_are_counted_and_visual_ones_summarised(tmp_path):
    """A <default> geom's solref (soft constraints off) is reported at the <default>; rgba (visual) and a
    <sensor> go into one summary warning with their counts, not one warning each."""
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><default><geom solref="0.02 1"/></default><worldbody><body name="b">'
        '<joint/><geom size="0.1" rgba="1 0 0 1"/><geom size="0.2" rgba="0 1 0 1"/><site name="s"/>'
        '</body></worldbody><sensor><jointpos joint="x"/></sensor></mujoco>'
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        artic.load_mjcf(path, soft_constraints=False)
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 2, msgs
    solref = next(m for m in msgs if "solref" in m)
    assert "<geom> in <default>" in solref and "1 occurrence(s)" in solref
    summary = next(m for m in msgs if "without effect on the simulated dynamics" in m)
    assert "<geom> attribute rgba (2)" in summary and "<sensor> (1)" in summary and "<site> (1)" in summary


def test_unknown_element_is_reported_once_with_its_subtree(tmp_path):
    """An element artic does not know (here a made-up <widget> with children) is one warning naming it, and its
    children and attributes are not reported on their own."""
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><worldbody><body name="b"><joint/><geom size="0.1"/></body></worldbody>'
        '<widget a="1"><part b="2"/></widget><widget/></mujoco>'
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        artic.load_mjcf(path)
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 1 and "<widget> is not used by artic" in msgs[0] and "2 occurrence(s)" in msgs[0]


@pytest.mark.parametrize("key, path", [kp for kp in suite_mjcf_files() if kp[0] not in REFUSED_MJCF])
def test_suite_models_give_at_most_one_report_per_kind(key, path):
    """Every suite model's unused content is reported without floods: no kind (element or element attribute) is
    named by two report warnings, and at most one summary warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        artic.load_mjcf(path)
    msgs = [str(w.message) for w in caught]
    kinds = collections.Counter(
        re.search(r": (<[a-z_]+>(?: attribute \w+)?) is not used by artic", m).group(1)
        for m in msgs
        if "is not used by artic" in m
    )
    assert all(n == 1 for n in kinds.values()), kinds
    assert sum("without effect on the simulated dynamics" in m for m in msgs) <= 1


def test_artic_info_prints_the_report(tmp_path, capsys):
    """`artic info` on an MJCF file whose geoms carry a fluidshape (MuJoCo's ellipsoid fluid model, not followed)
    prints that warning as a 'warning:' line on stderr (the CLI's one voice for warnings)."""
    from artic.cli.main import main

    path, _ = _load(tmp_path, geom='fluidshape="ellipsoid"')
    assert main(["info", str(path)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: .*<geom> attribute fluidshape is not used by artic.*2 occurrence\(s\)", err)


def test_artic_sim_prints_the_report(tmp_path, capsys):
    """`artic sim ant` (the shipped MJCF ant, whose geoms carry rgba and materials): the report's summary of visual
    content is one counted note by default and, with --verbose, its 'warning:' line on stderr; the warnings that
    matter to the dynamics (RK4 not followed) are shown either way."""
    from artic.cli.main import main

    out = tmp_path / "ant.npz"
    assert main(["sim", "ant", "--seconds", "0.05", "--dt", "0.01", "--out", str(out), "--plot", ""]) == 0
    err = capsys.readouterr().err
    assert "integrator='RK4'" in err and "without effect on the simulated dynamics" not in err
    assert "note: 1 import note(s) on parts of the file without effect on the dynamics" in err
    assert main(["sim", "ant", "--seconds", "0.05", "--dt", "0.01", "--out", str(out), "--plot", "", "--verbose"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: .*without effect on the simulated dynamics.*<geom> attribute rgba", err)
