"""URDF and MJCF loaders never corrupt silently (issue 14): bad trees, axes, free joints, classes and numbers are
refused with an error naming the file, the element and the attribute; huge axes are normalised safely."""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import artic
import artic.assets
from artic import ArticError, Axis, Motion, UrdfError
from artic.errors import MjcfError
from tests.support.models import robot_path, robots_dir

INERTIAL = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial>'


def _link(name):
    return f'<link name="{name}">{INERTIAL}</link>'


def _joint(name, parent, child, kind="revolute", extra=""):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def _urdf(tmp_path, body, name="r.urdf"):
    path = tmp_path / name
    path.write_text(f'<robot name="r">{body}</robot>')
    return path


def _mjcf(tmp_path, body, head="", name="m.xml"):
    path = tmp_path / name
    path.write_text(f"<mujoco>{head}<worldbody>{body}</worldbody></mujoco>")
    return path


def _raises(error, path, *parts):
    """Loading `path` raises `error` whose message contains the file and each of `parts` literally."""
    loader = artic.load_urdf if path.suffix == ".urdf" else artic.load_mjcf
    with pytest.raises(error) as info:
        loader(path)
    msg = str(info.value)
    assert str(path) in msg, msg
    for part in parts:
        assert part in msg, f"{part!r} not in {msg!r}"
    return msg


# -- URDF trees ---------------------------------------------------------------------------------------------------
def test_joint_whose_parent_is_its_child_is_refused(tmp_path):
    """A joint with the same link as parent and child is refused, naming the joint and the link (it used to drop
    the rest of the tree)."""
    body = _link("a") + _link("b") + _link("c") + _joint("j1", "a", "b") + _joint("j2", "c", "c")
    _raises(UrdfError, _urdf(tmp_path, body), "joint 'j2'", "link 'c' is both the parent and the child")


def test_cycle_is_refused_naming_its_joints_and_links(tmp_path):
    """Links joined in a loop (each with one parent, so the root check passes) are refused with the cycle's joints
    and links named, instead of being dropped."""
    body = (
        _link("root")
        + _link("a")
        + _link("b")
        + _link("c")
        + _joint("j0", "root", "a")
        + _joint("jb", "c", "b")
        + _joint("jc", "b", "c")
    )
    msg = _raises(UrdfError, _urdf(tmp_path, body), "cycle", "joint 'jb'", "joint 'jc'")
    assert "'b'" in msg and "'c'" in msg


def test_ur5_with_a_self_parented_joint_is_refused(tmp_path):
    """The issue's case: ur5 whose shoulder_pan_joint has its child as parent loaded with 2 dofs instead of 6;
    it is now refused naming that joint. Swapping a joint's parent and child (a link with two parents) too."""
    src = robot_path("ur5")
    share = robots_dir().parent.parent  # package://example-robot-data/... resolves from here
    assert artic.load_urdf(src).dof_count == 6  # the unmutated file
    for mutate, name, expected in (
        ("self", "shoulder_pan_joint", "link 'shoulder_link' is both the parent"),
        ("swap", "elbow_joint", "link 'upper_arm_link' already has parent joint"),
    ):
        tree = ET.parse(src)
        joint = next(j for j in tree.getroot().iter("joint") if j.get("name") == name)
        parent, child = joint.find("parent"), joint.find("child")
        p, c = parent.get("link"), child.get("link")
        parent.set("link", c)
        if mutate == "swap":
            child.set("link", p)
        out = tmp_path / f"ur5_{mutate}.urdf"
        tree.write(out)
        with pytest.raises(UrdfError, match=expected) as info:
            artic.load_urdf(out, package_dirs=[share])
        assert str(out) in str(info.value)


@pytest.mark.parametrize(
    "body, parts",
    [
        (
            _link("a") + _link("b") + _link("c") + _joint("j1", "a", "c") + _joint("j2", "b", "c"),
            ["joint 'j2'", "link 'c' already has parent joint 'j1'"],
        ),
        (_link("a") + _joint("j", "nowhere", "a"), ["joint 'j'", "unknown link 'nowhere'", "<parent link=...>"]),
        (_link("a") + _joint("j", "a", "ghost"), ["joint 'j'", "unknown link 'ghost'", "<child link=...>"]),
        (_link("a") + _link("a"), ["link 'a' is defined twice"]),
        (
            _link("a") + _link("b") + _link("c") + _joint("j", "a", "b") + _joint("j", "a", "c"),
            ["joint 'j' is defined twice"],
        ),
        (
            _link("a") + _link("b") + _link("c") + _joint("j", "a", "b"),
            ["expected one root link, found 2", "'a'", "'c'"],
        ),
        (
            _link("a") + _link("b") + '<joint type="fixed"><parent link="a"/><child link="b"/></joint>',
            ["<joint>", "attribute name is missing"],
        ),
        (_link("a") + "<link/>", ["<link #1>", "attribute name is missing"]),
        (
            _link("a") + _link("b") + '<joint name="j"><parent link="a"/><child link="b"/></joint>',
            ["joint 'j'", "attribute type is missing"],
        ),
    ],
)
def test_urdf_tree_errors_name_the_element(tmp_path, body, parts):
    """Two parents, unknown parent/child links, duplicate link/joint names, several roots and unnamed elements are
    refused naming the element (by name, or by index when unnamed)."""
    _raises(UrdfError, _urdf(tmp_path, body), *parts)


# -- axes ---------------------------------------------------------------------------------------------------------
def test_huge_urdf_axis_is_normalised_not_turned_into_x(tmp_path):
    """`<axis xyz="0 0 1e200">` is the z axis (it became x when the norm overflowed)."""
    body = _link("a") + _link("b") + _joint("j", "a", "b", extra='<axis xyz="0 0 1e200"/>')
    joint = artic.load_urdf(_urdf(tmp_path, body)).get_joint("j")
    np.testing.assert_allclose(joint.child_pose.rotate((1.0, 0.0, 0.0)), [0.0, 0.0, 1.0], atol=1e-12)
    body = _link("a") + _link("b") + _joint("j", "a", "b", extra='<axis xyz="0 1e-300 0"/>')
    joint = artic.load_urdf(_urdf(tmp_path, body, "tiny.urdf")).get_joint("j")
    np.testing.assert_allclose(joint.child_pose.rotate((1.0, 0.0, 0.0)), [0.0, 1.0, 0.0], atol=1e-12)


def test_huge_mjcf_axis_is_normalised_and_zero_axis_refused(tmp_path):
    """MJCF `axis="0 1e200 0"` is the y axis; `axis="0 0 0"` is refused naming the joint and the attribute."""
    path = _mjcf(tmp_path, '<body name="b"><joint name="h" axis="0 1e200 0"/><geom size="0.1"/></body>')
    joint = artic.load_mjcf(path).articulations[0].get_joint("h")
    np.testing.assert_allclose(joint.child_pose.rotate((1.0, 0.0, 0.0)), [0.0, 1.0, 0.0], atol=1e-12)
    path = _mjcf(tmp_path, '<body name="b"><joint name="h" axis="0 0 0"/><geom size="0.1"/></body>', name="z.xml")
    _raises(MjcfError, path, "joint 'h'", "axis='0 0 0'", "zero vector")
    path = _mjcf(tmp_path, '<body name="b" quat="0 0 0 0"><geom size="0.1"/></body>', name="q.xml")
    _raises(MjcfError, path, "body 'b'", "quat='0 0 0 0'", "zero vector")


def test_zero_urdf_axis_names_the_joint(tmp_path):
    """A zero URDF axis is refused naming the joint and the attribute."""
    body = _link("a") + _link("b") + _joint("j", "a", "b", extra='<axis xyz="0 0 0"/>')
    _raises(UrdfError, _urdf(tmp_path, body), "<axis> in joint 'j'", "<axis xyz> is zero")


# -- URDF numbers -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "extra, link_extra, parts",
    [
        ('<origin xyz="1 x 3"/>', "", ["<origin> in joint 'j'", "xyz='1 x 3'", "expected 3 finite numbers"]),
        ('<origin rpy="0 0"/>', "", ["<origin> in joint 'j'", "rpy='0 0'", "has 2 number(s), expected 3"]),
        (
            '<limit lower="-1" upper="1" effort="" velocity="1"/>',
            "",
            ["<limit> in joint 'j'", "effort=''", "expected 1 finite number"],
        ),
        ('<limit lower="abc" upper="1"/>', "", ["<limit> in joint 'j'", "lower='abc'", "malformed"]),
        (
            '<limit lower="-1" upper="1" effort="1e300"/>',
            "",
            ["<limit> in joint 'j'", "effort='1e300'", "exceeds 1e+15"],
        ),
        ('<limit lower="-1" upper="1" effort="-5"/>', "", ["<limit> in joint 'j'", "effort='-5'", "must be >= 0"]),
        ('<dynamics damping="nan"/>', "", ["<dynamics> in joint 'j'", "damping='nan'", "not finite"]),
        ("", '<inertial><mass value=""/></inertial>', ["<mass> in <inertial> in link 'b'", "value=''", "expected 1"]),
        ("", '<inertial><mass value="1e20"/></inertial>', ["<mass> in <inertial> in link 'b'", "exceeds 1e+15"]),
        ("", '<inertial><mass value="1"/><inertia ixx="inf"/></inertial>', ["<inertia>", "ixx='inf'", "not finite"]),
        (
            "",
            (
                '<collision><geometry><box size="1 1 1"/></geometry></collision>'
                '<collision><geometry><sphere radius="-1"/></geometry></collision>'
            ),
            ["<sphere> in <geometry> in <collision #1> in link 'b'", "sphere 'b_collision1': radius"],
        ),
    ],
)
def test_urdf_number_errors_name_element_attribute_and_value(tmp_path, extra, link_extra, parts):
    """Every malformed, non-finite, absurdly large or out-of-range number names the file, the element (inside its
    named link or joint), the attribute, the bad text and the expected count."""
    body = _link("a") + f'<link name="b">{link_extra}</link>' + _joint("j", "a", "b", extra=extra)
    _raises(UrdfError, _urdf(tmp_path, body), *parts)


def test_urdf_limit_beyond_1e15_means_unbounded(tmp_path):
    """iris.urdf writes +-1e16 for "no limit": both bounds beyond 1e15 load unlimited, one is clamped to 1e15,
    each with a warning naming the joint."""
    both = _link("a") + _link("b") + _joint("j", "a", "b", extra='<limit lower="-1e16" upper="1e16"/>')
    with pytest.warns(UserWarning, match="joint 'j'.*unlimited"):
        art = artic.load_urdf(_urdf(tmp_path, both))
    assert art.get_joint("j").get_motion(Axis.TWIST) == Motion.FREE
    one = _link("a") + _link("b") + _joint("j", "a", "b", "prismatic", '<limit lower="0" upper="1e300"/>')
    with pytest.warns(UserWarning, match="clamped"):
        art = artic.load_urdf(_urdf(tmp_path, one, "one.urdf"))
    limit = art.get_joint("j").get_limit_params(Axis.X)
    assert (limit.low, limit.high) == (0.0, 1e15)


# -- files --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loader, error", [(artic.load_urdf, UrdfError), (artic.load_mjcf, MjcfError)])
def test_bad_files_raise_the_loader_error(tmp_path, loader, error):
    """Missing, empty, folder, broken XML and non-path arguments raise the loader's ArticError naming the file."""
    empty = tmp_path / "empty.xml"
    empty.write_text("")
    broken = tmp_path / "broken.xml"
    broken.write_text("<robot><link name='a'></robot>")
    cases = [
        (tmp_path / "missing.xml", "not found"),
        (empty, "the file is empty"),
        (tmp_path, "is a folder"),
        (broken, "not valid XML"),
    ]
    for path, message in cases:
        with pytest.raises(error, match=message) as info:
            loader(path)
        assert str(path) in str(info.value)
    with pytest.raises(error, match="expected a path"):
        loader(None)


@pytest.mark.parametrize("loader", [artic.load_urdf, artic.load_mjcf])
def test_what_tinyxml_reads_loads_with_a_warning(tmp_path, loader):
    """'--' inside a comment and two attributes with no space between them are not XML, but MuJoCo's and urdfdom's
    parser reads them, and files as shipped hold them (myo_sim's elbow and leg models): artic reads them the same
    and says what it repaired. The values read are the file's (the glued attribute is not lost)."""
    if loader is artic.load_urdf:
        text = (
            '<robot name="r"><!-- a -- comment ---><link name="a"><inertial><mass value="2"/>'
            '<inertia ixx="1"ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>'
        )
    else:
        text = (
            '<mujoco><!-- a -- comment ---><worldbody><body name="b"><freejoint/>'
            '<geom name="g"type="sphere" size="0.1" mass="2"/></body></worldbody></mujoco>'
        )
    path = tmp_path / "slips.xml"
    path.write_text(text)
    with pytest.warns(UserWarning, match="not well-formed.*'--' inside a comment and attributes not separated"):
        loaded = loader(path)
    art = loaded if loader is artic.load_urdf else loaded.articulations[0]
    assert art.get_links()[0].mass == pytest.approx(2.0)
    path.write_text(text.replace("<link name", "<link name=").replace("<body name", "<body name="))
    with pytest.raises(ArticError, match="not valid XML"):  # what TinyXML-2 refuses too is still refused
        loader(path)


def test_package_dirs_must_be_folders(tmp_path):
    """package_dirs=None is refused clearly; a single folder is accepted as a one-folder list."""
    path = _urdf(tmp_path, _link("a"))
    with pytest.raises(UrdfError, match="package_dirs must be a list of folders"):
        artic.load_urdf(path, package_dirs=None)
    assert artic.load_urdf(path, package_dirs=str(tmp_path)).link_count == 1


# -- MJCF free joints, classes, compiler ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body, parts",
    [
        (
            '<body name="top"><freejoint/><geom size="0.1"/><body name="inner"><freejoint/><geom size="0.1"/>'
            "</body></body>",
            ["body 'inner'", "not a child of <worldbody>", "inside body 'top'"],
        ),
        (
            (
                '<body name="top"><joint type="hinge"/><geom size="0.1"/><body name="inner"><joint type="free"/>'
                '<geom size="0.1"/></body></body>'
            ),
            ["body 'inner'", "free joint"],
        ),
        (
            '<body name="top"><freejoint/><joint name="h" type="hinge"/><geom size="0.1"/></body>',
            ["body 'top'", "a free joint and 1 other joint"],
        ),
    ],
)
def test_misplaced_free_joints_are_refused(tmp_path, body, parts):
    """A free joint on a nested body, or beside a hinge on the same body, is refused naming the body (MuJoCo
    refuses both); they used to be dropped silently."""
    _raises(MjcfError, _mjcf(tmp_path, body), *parts)


@pytest.mark.parametrize(
    "head, body, parts",
    [
        ("", '<body name="b"><geom name="g" class="nope" size="0.1"/></body>', ["geom 'g'", "class='nope'"]),
        ("", '<body name="b" childclass="ghost"><geom size="0.1"/></body>', ["body 'b'", "childclass='ghost'"]),
        (
            '<default><default class="a"/><default class="a"/></default>',
            '<body><geom size="1"/></body>',
            ["default class 'a' is defined twice"],
        ),
        ('<compiler angle="grad"/>', '<body><geom size="1"/></body>', ["<compiler>", "angle='grad'", "degree, radian"]),
        ('<compiler eulerseq="xyw"/>', '<body><geom size="1"/></body>', ["<compiler>", "eulerseq='xyw'"]),
        ('<compiler coordinate="global"/>', '<body><geom size="1"/></body>', ["<compiler>", "coordinate='global'"]),
    ],
)
def test_undefined_classes_and_unknown_compiler_settings_are_refused(tmp_path, head, body, parts):
    """Undefined class/childclass references, duplicate classes and compiler angle/eulerseq/coordinate values artic
    does not implement are refused naming the element and the attribute."""
    _raises(MjcfError, _mjcf(tmp_path, body, head), *parts)


def test_eulerseq_matches_mujoco(tmp_path):
    """compiler eulerseq (intrinsic lower case, extrinsic upper case) gives MuJoCo's body orientation."""
    mujoco = pytest.importorskip("mujoco")
    for seq in ("xyz", "zyx", "XYZ", "zYx"):
        path = _mjcf(
            tmp_path,
            '<body name="b" euler="30 -50 70"><joint/><geom size="0.1"/></body>',
            f'<compiler eulerseq="{seq}"/>',
            f"e_{seq}.xml",
        )
        q = artic.load_mjcf(path).articulations[0].get_link("b").initial_pose.q  # (x, y, z, w)
        w, x, y, z = mujoco.MjModel.from_xml_path(str(path)).body_quat[1]
        assert abs(np.dot(q, [x, y, z, w])) == pytest.approx(1.0, abs=1e-9), seq


# -- MJCF numbers -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body, parts",
    [
        (
            '<body name="b"><geom name="g" type="capsule" size=""/></body>',
            ["geom 'g'", "size=''", "a capsule geom needs 2 size value(s)"],
        ),
        ('<body name="b"><geom name="g" type="capsule" size="0.1"/></body>', ["geom 'g'", "needs 2 size value(s)"]),
        ('<body name="b"><geom name="g" size="0.1 x"/></body>', ["geom 'g'", "size='0.1 x'", "0 to 3 finite numbers"]),
        (
            '<body name="b"><geom type="capsule" fromto="0 0 0 1 0" size="0.1"/></body>',
            ["<geom> in body 'b'", "fromto='0 0 0 1 0'", "has 5 number(s), expected 6"],
        ),
        ('<body name="b"><geom type="capsule" fromto="1 1 1 1 1 1" size="0.1"/></body>', ["end points coincide"]),
        ('<body name="b" pos="0 0 1e20"><geom size="0.1"/></body>', ["body 'b'", "pos='0 0 1e20'", "exceeds 1e+15"]),
        (
            '<body name="b"><geom size="0.1"/><geom size="0.2" mass="-1"/></body>',
            ["<geom #1> in body 'b'", "mass='-1'", "must be >= 0"],
        ),
        (
            '<body name="b"><joint name="h" range="1"/><geom size="0.1"/></body>',
            ["joint 'h'", "range='1'", "malformed", "expected 2 finite numbers"],
        ),
        (
            '<body name="b"><joint name="h" range="30 -30"/><geom size="0.1"/></body>',
            ["joint 'h'", "low must be below"],
        ),
        ('<body name="b"><joint name="h" limited="true"/><geom size="0.1"/></body>', ["joint 'h'", "without a range"]),
        ('<body name="b"><joint name="h" damping="-1"/><geom size="0.1"/></body>', ["joint 'h'", "damping='-1'"]),
        (
            '<body name="b"><geom size="0.1"/><inertial mass="1"/></body>',
            ["<inertial> in body 'b'", "exactly one of diaginertia and fullinertia"],
        ),
        ('<body name="b"><geom size="0.1"/><inertial mass="inf" diaginertia="1 1 1"/></body>', ["mass='inf'"]),
        ('<body name="b"><geom type="mesh" mesh="ghost"/></body>', ["mesh='ghost'", "names no <mesh>"]),
        ('<body name="b"><geom size="0.1" contype="1.5"/></body>', ["contype='1.5'", "not an integer"]),
        ('<body name="b"><geom name="g" size="-1"/></body>', ["geom 'g' in body 'b'", "sphere 'g': radius must be"]),
        ('<body name="b"><frame childclass="x"><geom size="0.1"/></frame></body>', ["<frame> in body", "'x' names"]),
        ('<body name="b"><replicate offset="1 0 0"><geom size="0.1"/></replicate></body>', ["<replicate>", "count"]),
        ('<body name="b"><attach model="m" body="x" prefix="p"/></body>', ["<attach model='m'>", "names no"]),
    ],
)
def test_mjcf_value_errors_name_element_attribute_and_value(tmp_path, body, parts):
    """Malformed, wrongly counted, non-finite, absurd or inconsistent values name the file, the element (by name,
    or by index in its named body), the attribute, the bad text and what was expected (they used to read
    "malformed value (could not convert string to float: '')")."""
    _raises(MjcfError, _mjcf(tmp_path, body), *parts)


def test_mjcf_actuator_and_mesh_asset_errors(tmp_path):
    """An empty gear (an IndexError before), an actuator on an unknown joint, a mesh asset whose file is missing and
    a mesh a plugin makes (MuJoCo's SDF meshes: "neither a file nor vertex data" before) are refused naming the
    element."""
    body = '<body name="b"><joint name="h"/><geom size="0.1"/></body>'
    path = tmp_path / "a.xml"
    path.write_text(f'<mujoco><worldbody>{body}</worldbody><actuator><motor joint="h" gear=""/></actuator></mujoco>')
    _raises(MjcfError, path, "<motor> in <actuator>", "gear=''", "1 to 6 finite numbers")
    path.write_text(f'<mujoco><worldbody>{body}</worldbody><actuator><motor name="m" joint="x"/></actuator></mujoco>')
    _raises(MjcfError, path, "motor 'm'", "joint='x'", "names no joint")
    path.write_text(f'<mujoco><asset><mesh name="m" file="gone.stl"/></asset><worldbody>{body}</worldbody></mujoco>')
    _raises(MjcfError, path, "mesh 'm'", "file='gone.stl'", "not found")
    sdf = '<extension><plugin plugin="mujoco.sdf.torus"><instance name="t"/></plugin></extension>'
    path.write_text(
        f'<mujoco>{sdf}<asset><mesh name="m"><plugin instance="t"/></mesh></asset><worldbody>{body}'
        "</worldbody></mujoco>"
    )
    _raises(MjcfError, path, "mesh 'm'", "MuJoCo plugin (a signed distance field)", "file='...' or vertex='...'")


def test_mjcf_derived_magnitudes_are_refused(tmp_path):
    """Values each below 1e15 whose products are absurd are refused too: a geom-derived mass (size 1e14 gives
    ~4e45 kg, inf in float32) and a position gain kp times gear beyond 1e15."""
    _raises(
        MjcfError,
        _mjcf(tmp_path, '<body name="b"><joint/><geom size="1e14"/></body>'),
        "body 'b'",
        "its geoms give a mass of",
        "beyond 1e15",
    )
    path = tmp_path / "a.xml"
    path.write_text(
        '<mujoco><worldbody><body name="b"><joint name="h"/><geom size="0.1"/></body></worldbody>'
        '<actuator><position name="p" joint="h" kp="1e10" gear="1e10"/></actuator></mujoco>'
    )
    _raises(MjcfError, path, "position 'p'", "gain times gear (1e+20) exceeds 1e+15")


def test_mjcf_class_value_errors_say_they_are_inherited(tmp_path):
    """A bad value that comes from a <default> class names the element that uses it and says it is inherited."""
    path = _mjcf(
        tmp_path,
        '<body name="b"><joint name="h" class="c"/><geom size="0.1"/></body>',
        '<default><default class="c"><joint armature="x"/></default></default>',
    )
    _raises(MjcfError, path, "joint 'h'", "armature='x' (inherited from its <default> class)")


def test_duplicate_mjcf_joint_names_and_dropped_sections(tmp_path):
    """Two joints with one name are refused (actuators would bind the wrong one); an <equality> element artic cannot
    map (a joint equality without joint2) is dropped with a warning naming it."""
    body = (
        '<body name="a"><joint name="h"/><geom size="0.1"/><body name="b"><joint name="h"/><geom size="0.1"/>'
        "</body></body>"
    )
    _raises(MjcfError, _mjcf(tmp_path, body), "joint 'h' is defined twice")
    path = tmp_path / "t.xml"
    path.write_text(
        '<mujoco><worldbody><body name="a"><joint name="h"/><geom size="0.1"/></body></worldbody>'
        '<equality><joint joint1="h"/></equality></mujoco>'
    )
    with pytest.warns(
        RuntimeWarning,
        match=re.escape(
            "<joint> in <equality>: a joint equality without joint2 (a joint held at a constant) is not supported; "
            "dropped"
        ),
    ):
        artic.load_mjcf(path)


def test_mjcf_error_is_an_artic_error():
    """MjcfError lives in artic.errors, is an ArticError (and a UrdfError, as before) and is what mjcf raises."""
    from artic.io.mjcf import loader as mjcf

    assert issubclass(MjcfError, ArticError) and issubclass(MjcfError, UrdfError) and mjcf.MjcfError is MjcfError


def test_shipped_models_still_load_without_value_warnings():
    """The shipped ant and humanoid load as before: 8 and 17 dofs, no warning other than the <option> settings
    artic does not follow (RK4 on both; the humanoid's solver and iterations are followed: model.solver_type) and
    the content artic does not use (mjcf_report.py, tested in test_mjcf_report.py)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ant = artic.load_mjcf(artic.assets.ASSETS / "mjcf" / "ant.xml")
        humanoid = artic.load_mjcf(artic.assets.ASSETS / "mjcf" / "humanoid.xml")
    assert ant.articulations[0].dof_count == 8 and humanoid.articulations[0].dof_count == 17
    others = [
        str(w.message) for w in caught if "tendon" not in str(w.message) and "not used by artic" not in str(w.message)
    ]
    assert len(others) == 2 and all("<option>" in m for m in others)
    assert sum("integrator='RK4'" in m for m in others) == 2


def test_mjcf_include_is_expanded_nested_and_relative_to_the_including_file(tmp_path):
    """<include> puts the included file's <mujoco> children in its place, nested includes too, with paths relative
    to the including file; the result has the bodies, joints and masses MuJoCo gives the same file."""
    import mujoco

    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xml").write_text(
        '<mujoco><body name="upper" pos="0 0 1"><joint name="shoulder" type="hinge" axis="0 1 0"/>'
        '<geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.4" mass="2"/>'
        '<include file="hand.xml"/></body></mujoco>'
    )
    (tmp_path / "parts" / "hand.xml").write_text(
        '<mujoco><body name="hand" pos="0 0 -0.4"><joint name="wrist" type="hinge" axis="1 0 0"/>'
        '<geom type="sphere" size="0.06" mass="0.5"/></body></mujoco>'
    )
    (tmp_path / "model.xml").write_text(
        '<mujoco><worldbody><body name="base"><geom type="box" size="0.1 0.1 0.1" mass="5"/>'
        '<include file="parts/arm.xml"/></body></worldbody></mujoco>'
    )
    model = artic.load_mjcf(tmp_path / "model.xml")
    art = model.articulations[0]
    assert art.dof_names == ["shoulder", "wrist"]
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "model.xml"))
    masses = {link.name: link.mass for link in art.get_links()}
    for name in ("base", "upper", "hand"):
        assert masses[name] == pytest.approx(m.body(name).mass[0], rel=1e-9)


def test_mjcf_circular_and_repeated_includes_are_refused(tmp_path):
    """A file that includes itself (through another) or is included twice is an MjcfError naming the include."""
    (tmp_path / "a.xml").write_text('<mujoco><include file="b.xml"/></mujoco>')
    (tmp_path / "b.xml").write_text('<mujoco><include file="a.xml"/></mujoco>')
    with pytest.raises(artic.ArticError, match="includes itself"):
        artic.load_mjcf(tmp_path / "a.xml")
    (tmp_path / "c.xml").write_text("<mujoco><worldbody/></mujoco>")
    (tmp_path / "d.xml").write_text('<mujoco><include file="c.xml"/><include file="c.xml"/></mujoco>')
    with pytest.raises(artic.ArticError, match="included twice"):
        artic.load_mjcf(tmp_path / "d.xml")
    (tmp_path / "e.xml").write_text('<mujoco><include file="missing.xml"/></mujoco>')
    with pytest.raises(artic.ArticError, match="missing.xml' not found"):
        artic.load_mjcf(tmp_path / "e.xml")
