"""URDF import: every example-robot-data URDF loads or is refused clearly; mapping of axes, limits, mimic, meshes."""

import warnings

import numpy as np
import pytest

import artic
from artic import ArticError, Axis, JointType, Motion, UrdfError
from artic.io.urdf import urdf_mimic_tags
from tests.support.models import robot_path, robots_dir


def _all_urdfs():
    return sorted(robots_dir().rglob("*.urdf"))


def test_every_example_robot_data_urdf_loads_or_is_refused_clearly():
    """Each URDF either loads and enters a scene, or raises an ArticError that names the file and the element."""
    loaded, refused = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in _all_urdfs():
            try:
                art = artic.load_urdf(path)
                artic.Scene().add_articulation(art)
                loaded.append(path.name)
            except ArticError as e:
                refused[path.name] = str(e)
    assert len(loaded) + len(refused) == len(_all_urdfs()) >= 60
    for name, msg in refused.items():
        assert name in msg  # the file is named ...
        assert any(w in msg for w in ("link '", "joint '", "no <link>")), msg  # ... and the element
    # the refusals are the broken files: an empty <robot> and non-PSD inertias
    assert set(refused) <= {
        "ur3.urdf",
        "romeo_laas_small.urdf",
        "tiago.urdf",
        "tiago_dual.urdf",
        "tiago_no_hand.urdf",
    }, refused
    assert len(loaded) >= 60


def test_repair_inertia_loads_the_refused_files():
    """repair_inertia=True loads the URDFs whose inertias are not positive semi-definite, with a warning."""
    path = robots_dir() / "tiago_description/robots/tiago.urdf"
    with pytest.warns(UserWarning, match="not positive semi-definite"):
        art = artic.load_urdf(path, repair_inertia=True)
    artic.Scene().add_articulation(art)


def test_panda_mapping():
    """panda.urdf: 9 dofs named after their joints, limits, effort/velocity mapping, mimic kept, meshes resolved."""
    art = artic.load_urdf(robot_path("panda"))
    assert art.fix_base
    assert art.dof_names[:7] == [f"panda_joint{i}" for i in range(1, 8)]
    assert art.dof_names[7:] == ["panda_finger_joint1", "panda_finger_joint2"]
    j1 = art.get_joint("panda_joint1")
    assert j1.get_joint_type() == JointType.REVOLUTE and j1.get_motion(Axis.TWIST) == Motion.LIMITED
    lim = j1.get_limit_params(Axis.TWIST)
    assert (lim.low, lim.high) == (-2.8973, 2.8973)
    assert j1.get_drive_params(Axis.TWIST).max_force == 87.0
    assert j1.get_max_joint_velocity(Axis.TWIST) == 2.175
    assert j1.get_friction_params(Axis.TWIST).viscous_friction_coefficient == 0.003
    f1 = art.get_joint("panda_finger_joint1")
    assert f1.get_joint_type() == JointType.PRISMATIC and f1.get_motion(Axis.X) == Motion.LIMITED
    assert urdf_mimic_tags(robot_path("panda")) == [("panda_finger_joint2", "panda_finger_joint1", 1.0, 0.0)]
    (mimic,) = art.get_mimic_joints()  # q2 = 1 q1 + 0 as q2 - q1 + 0 = 0
    assert (mimic.joint_a.name, mimic.joint_b.name, mimic.gear_ratio, mimic.offset) == (
        "panda_finger_joint2",
        "panda_finger_joint1",
        -1.0,
        0.0,
    )
    link0 = art.get_link("panda_link0")
    assert link0.mass == pytest.approx(0.629769)
    assert link0.shapes and all(s.filename.endswith(".stl") for s in link0.shapes)
    assert all(__import__("os").path.exists(s.filename) for s in link0.shapes)


def _write(tmp_path, body, name="r.urdf"):
    p = tmp_path / name
    p.write_text(f'<robot name="t">{body}</robot>')
    return p


LINK = '<link name="{0}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>'


def test_axis_sign_and_zero_are_kept(tmp_path):
    """A revolute joint about -y: positive q rotates the child by -q about y, as URDF says, and q = 0 is the
    URDF zero; the child's pose follows origin * Rot(axis, q)."""
    body = (
        LINK.format("a")
        + LINK.format("b")
        + (
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
            '<origin xyz="0 0 1" rpy="0 0 0"/><axis xyz="0 -1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
            "</joint>"
        )
    )
    art = artic.load_urdf(_write(tmp_path, body))
    scene = artic.Scene()
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[:] = 0.5
    art.apply_cache(cache, artic.CacheFlag.POSITION)
    pose = scene.view(art).state.link_pose.numpy()[0, 1]
    from artic.math.np_spatial import quat_from_axis_angle, quat_to_matrix

    assert pose[:3] == pytest.approx([0, 0, 1], abs=1e-6)
    expect = quat_to_matrix(quat_from_axis_angle((0, -1, 0), 0.5))
    assert quat_to_matrix(pose[3:]) == pytest.approx(expect, abs=1e-6)


@pytest.mark.parametrize(
    "body, message",
    [
        ("", "no <link> elements"),
        (LINK.format("a") + LINK.format("b"), "expected one root link"),
        (
            LINK.format("a") + LINK.format("b") + '<joint name="j" type="planar"><parent link="a"/><child link="b"/>'
            "</joint>",
            "joint 'j': joint type 'planar' is not supported",
        ),
        (
            LINK.format("a") + '<joint name="j" type="fixed"><parent link="a"/><child link="zz"/></joint>',
            "joint 'j': refers to unknown link 'zz'",
        ),
        (
            LINK.format("a") + LINK.format("b") + '<joint name="j" type="revolute"><parent link="a"/>'
            '<child link="b"/><limit lower="1" upper="-1"/></joint>',
            "lower 1.0 > upper -1.0",
        ),
        (
            LINK.format("a") + LINK.format("b") + '<joint name="j" type="revolute"><parent link="a"/>'
            '<child link="b"/><axis xyz="0 0 0"/></joint>',
            "<axis xyz> is zero",
        ),
        ('<link name="a"><inertial><mass value="-2"/></inertial></link>', "mass must be >= 0"),
        (
            '<link name="a"><collision><geometry><mesh filename="package://nowhere/m.stl"/></geometry></collision>'
            "</link>",
            "cannot resolve 'package://nowhere/m.stl'",
        ),
        (
            '<link name="a"><collision><geometry><box size="1 2"/></geometry></collision></link>',
            "expected 3 finite numbers",
        ),
    ],
)
def test_broken_urdfs_raise_urdf_error(tmp_path, body, message):
    with pytest.raises(UrdfError, match=message):
        artic.load_urdf(_write(tmp_path, body))


def test_not_xml_and_missing_file(tmp_path):
    p = tmp_path / "bad.urdf"
    p.write_text("<robot><link name='a'></robot>")
    with pytest.raises(UrdfError, match="not valid XML"):
        artic.load_urdf(p)
    with pytest.raises(UrdfError, match="not found"):
        artic.load_urdf(tmp_path / "missing.urdf")


_TETRA_STL = (
    "solid t\n"
    + "".join(
        "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {v}\n" for v in tri) + "endloop\nendfacet\n"
        for tri in (
            ("0 0 0", "0 1 0", "1 0 0"),
            ("0 0 0", "1 0 0", "0 0 1"),
            ("0 0 0", "0 0 1", "0 1 0"),
            ("1 0 0", "0 1 0", "0 0 1"),
        )
    )
    + "endsolid t\n"
)


def test_package_dirs_search_path(tmp_path):
    """package://pkg/... resolves through package_dirs when the package is not next to the file."""
    pkg = tmp_path / "elsewhere" / "mypkg" / "meshes"
    pkg.mkdir(parents=True)
    (pkg / "m.stl").write_text(_TETRA_STL)  # mesh files are read at load, so it must be a valid mesh
    sub = tmp_path / "robot"
    sub.mkdir()
    body = (
        '<link name="a"><collision><geometry><mesh filename="package://mypkg/meshes/m.stl"/></geometry>'
        "</collision></link>"
    )
    path = _write(sub, body)
    with pytest.raises(UrdfError):
        artic.load_urdf(path)
    art = artic.load_urdf(path, package_dirs=[tmp_path / "elsewhere"])
    assert art.root.shapes[0].filename == str(pkg / "m.stl")


def test_floating_world_joint_and_primitives(tmp_path):
    """A floating joint from a massless world link makes a floating base; primitives become shapes."""
    body = '<link name="world"/>' + (
        '<link name="base"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1"/></inertial>'
        '<collision><geometry><cylinder radius="0.1" length="0.4"/></geometry></collision>'
        '<collision><geometry><sphere radius="0.2"/></geometry></collision></link>'
        '<joint name="free" type="floating"><parent link="world"/><child link="base"/></joint>'
    )
    art = artic.load_urdf(_write(tmp_path, body))
    assert not art.fix_base and art.link_count == 1
    cyl = art.root.shapes[0]
    assert isinstance(cyl, artic.Cylinder) and cyl.half_height == pytest.approx(0.2)
    assert cyl.local_pose.rotate((1, 0, 0)) == pytest.approx([0, 0, 1])  # artic's x-aligned cylinder -> URDF z


def test_equal_limits_load_as_free_with_warning():
    """double_pendulum.urdf writes lower == upper == 0: loaded unlimited, with a warning saying so."""
    with pytest.warns(UserWarning, match="lower == upper"):
        art = artic.load_urdf(robots_dir() / "double_pendulum_description/urdf/double_pendulum.urdf")
    assert all(art.get_joint(n).get_motion(Axis.TWIST) == Motion.FREE for n in art.joint_names)
    assert np.isfinite(art.get_link(art.link_names[-1]).mass)
