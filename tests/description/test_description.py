"""The description API: PhysX defaults, low-level indexing, validation errors, mass properties from shapes."""

import numpy as np
import pytest

import artic
from artic import (
    ArticError,
    ArticulationFlag,
    Axis,
    Box,
    Capsule,
    Cylinder,
    Drive,
    DriveType,
    JointType,
    Limit,
    Mesh,
    Motion,
    Sphere,
    Transform,
)


def _chain():
    art = artic.Articulation("a")
    root = art.create_link(None, Transform(), "root")
    link = art.create_link(root, Transform(), "l1")
    return art, root, link


def test_physx_defaults():
    """The defaults check of physx-notes 8.6: articulation, link and joint values read from fresh objects."""
    art, root, link = _chain()
    assert art.get_solver_iteration_counts() == (4, 1)
    assert art.sleep_threshold == pytest.approx(5e-3)
    assert art.stabilization_threshold == pytest.approx(5e-4)
    assert art.wake_counter == pytest.approx(0.4)
    assert int(art.get_articulation_flags()) == 0
    assert (link.linear_damping, link.angular_damping) == (0.05, 0.05)
    assert (link.max_linear_velocity, link.max_angular_velocity) == (100.0, 50.0)
    assert link.cfm_scale == pytest.approx(0.025)
    assert link.mass == 1.0 and np.allclose(link.inertia, 1.0)
    j = link.inbound_joint
    assert int(j.get_joint_type()) == 5 and j.get_joint_type() == JointType.UNDEFINED
    for ax in Axis:
        assert j.get_motion(ax) == Motion.LOCKED
        assert j.get_max_joint_velocity(ax) == 100.0
        assert j.get_armature(ax) == 0.0
        lim = j.get_limit_params(ax)
        assert (lim.low, lim.high) == (0.0, 0.0)
        d = j.get_drive_params(ax)
        assert (d.stiffness, d.damping, d.max_force, d.drive_type) == (0.0, 0.0, 0.0, DriveType.NONE)
    assert j.friction_coefficient == pytest.approx(0.05)
    assert root.inbound_joint is None and root.inbound_joint_dof == 0


def test_link_ordering_breadth_first():
    """physx-notes 8.6: links created as root, A(root), A1(A), B(root), A2(A), B1(B) get low-level indices
    0, 1, 3, 2, 4, 5; dofs follow low-level order, a 2-dof spherical A1 contributing swing1 then swing2."""
    art = artic.Articulation("order")
    root = art.create_link(None, Transform(), "root")
    a = art.create_link(root, None, "A")
    a1 = art.create_link(a, None, "A1")
    b = art.create_link(root, None, "B")
    a2 = art.create_link(a, None, "A2")
    b1 = art.create_link(b, None, "B1")
    assert [lk.link_index for lk in (root, a, a1, b, a2, b1)] == [0, 1, 3, 2, 4, 5]
    assert art.link_names == ["root", "A", "B", "A1", "A2", "B1"]
    assert [lk.name for lk in art.get_links()] == ["root", "A", "A1", "B", "A2", "B1"]
    for lk in (a, b, a2, b1):
        lk.inbound_joint.set_joint_type(JointType.REVOLUTE)
        lk.inbound_joint.set_motion(Axis.TWIST, Motion.FREE)
    a1.inbound_joint.set_joint_type(JointType.SPHERICAL)
    a1.inbound_joint.set_motion(Axis.SWING2, Motion.FREE)
    a1.inbound_joint.set_motion(Axis.SWING1, Motion.FREE)
    assert a1.inbound_joint_dof == 2
    assert art.dof_count == 6
    assert art.dof_names == ["A", "B", "A1:swing1", "A1:swing2", "A2", "B1"]
    assert [(j.name, ax) for j, ax in art.dof_list()] == [
        ("A", Axis.TWIST),
        ("B", Axis.TWIST),
        ("A1", Axis.SWING1),
        ("A1", Axis.SWING2),
        ("A2", Axis.TWIST),
        ("B1", Axis.TWIST),
    ]
    assert art.joint_names == ["A", "B", "A1", "A2", "B1"]


def test_pack_unpack_guide_example():
    """The guide's pack/unpack example: a 1-dof pendulum free on SWING2 maps 0.5 to maximal entry [SWING2]."""
    art, _root, link = _chain()
    link.inbound_joint.set_joint_type(JointType.REVOLUTE)
    link.inbound_joint.set_motion(Axis.SWING2, Motion.FREE)
    maximal = art.unpack_joint_data(np.array([0.5]))
    expected = np.zeros((1, 6))
    expected[0, Axis.SWING2] = 0.5
    assert np.array_equal(maximal, expected)
    assert np.array_equal(art.pack_joint_data(expected), [0.5])


def test_pack_unpack_round_trip_batched():
    """pack(unpack(x)) = x for a leading env dimension on a tree with a 3-dof spherical and a prismatic joint."""
    art, _root, link = _chain()
    j = link.inbound_joint
    j.set_joint_type(JointType.SPHERICAL)
    for ax in (Axis.TWIST, Axis.SWING1, Axis.SWING2):
        j.set_motion(ax, Motion.FREE)
    l2 = art.create_link(link, None, "l2")
    l2.inbound_joint.set_joint_type(JointType.PRISMATIC)
    l2.inbound_joint.set_motion(Axis.Y, Motion.LIMITED)
    x = np.random.default_rng(0).normal(size=(5, 4))
    m = art.unpack_joint_data(x)
    assert m.shape == (5, 2, 6) and m[0, 1, Axis.Y] == x[0, 3] and m[0, 1, Axis.X] == 0.0
    assert np.array_equal(art.pack_joint_data(m), x)
    with pytest.raises(ArticError, match="expects shape"):
        art.pack_joint_data(np.zeros((5, 3, 6)))


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda lk: setattr(lk, "mass", -1.0), "link 'l1': mass must be >= 0"),
        (lambda lk: setattr(lk, "mass", float("nan")), "mass must be finite"),
        (lambda lk: setattr(lk, "inertia", (1.0, 2.0)), "3 principal moments"),
        (lambda lk: lk.inbound_joint.set_motion(Axis.TWIST, Motion.FREE), "set the joint type before set_motion"),
        (
            lambda lk: lk.inbound_joint.set_limit_params(Axis.TWIST, Limit(1.2, 0.3)),
            r"joint 'l1': twist limit low 1.2 >= high 0.3",
        ),
        (lambda lk: lk.inbound_joint.set_drive_target(Axis.TWIST, float("nan")), "drive target must be finite"),
        (
            lambda lk: lk.inbound_joint.set_drive_params(Axis.X, Drive(-1.0, 0, 0, DriveType.FORCE)),
            "stiffness must be >= 0",
        ),
        (lambda lk: setattr(lk.inbound_joint, "parent_pose", Transform((0, 0, 0), (0, 0, 0, 2))), "not unit length"),
        (lambda lk: lk.articulation.create_link(None, None, "r2"), "already has root"),
        (lambda lk: lk.articulation.create_link(lk, None, "l1"), "already exists"),
        (lambda lk: lk.articulation.set_solver_iteration_counts(0, 1), r"\[1, 255\]"),
    ],
)
def test_bad_input_raises_named_error(action, message):
    """Bad input raises an ArticError whose message names the object and the problem."""
    _, _, link = _chain()
    with pytest.raises(ArticError, match=message):
        action(link)


def test_motion_must_suit_joint_type():
    """PhysX's isValidMotion: prismatic takes one linear axis, revolute one angular axis, FIX none."""
    _, _, link = _chain()
    j = link.inbound_joint
    j.set_joint_type(JointType.PRISMATIC)
    with pytest.raises(ArticError, match="moves along X, Y or Z"):
        j.set_motion(Axis.TWIST, Motion.FREE)
    j.set_motion(Axis.X, Motion.FREE)
    with pytest.raises(ArticError, match="one free axis"):
        j.set_motion(Axis.Y, Motion.FREE)
    j.set_joint_type(JointType.FIX)
    with pytest.raises(ArticError, match="FIX joint has no free axes"):
        j.set_motion(Axis.Z, Motion.FREE)


def test_scene_refuses_incomplete_articulations():
    """Adding validates: an UNDEFINED joint, or a LIMITED axis without a valid range, is refused with the fix."""
    art, _, link = _chain()
    with pytest.raises(ArticError, match="UNDEFINED; call set_joint_type"):
        artic.Scene().add_articulation(art)
    link.inbound_joint.set_joint_type(JointType.REVOLUTE)
    link.inbound_joint.set_motion(Axis.TWIST, Motion.LIMITED)
    with pytest.raises(ArticError, match="LIMITED but its limit is"):
        artic.Scene().add_articulation(art)
    link.inbound_joint.set_limit_params(Axis.TWIST, Limit(-1, 1))
    scene = artic.Scene()
    scene.add_articulation(art)
    with pytest.raises(ArticError, match="remove it from the scene first"):
        art.create_link(link, None, "late")


def test_scene_input_validation():
    with pytest.raises(ArticError, match="num_envs must be a positive integer"):
        artic.Scene(num_envs=0)
    with pytest.raises(ArticError, match="gravity must be 3 finite numbers"):
        artic.Scene(gravity=(0, 0))


@pytest.mark.parametrize(
    "shape, mass, inertia",
    [
        (Box((0.1, 0.2, 0.3)), 1000 * 0.048, 1000 * 0.048 / 3 * np.array([0.13, 0.10, 0.05])),
        (Sphere(0.2), 1000 * 4 / 3 * np.pi * 0.008, 0.4 * 1000 * 4 / 3 * np.pi * 0.008 * 0.04 * np.ones(3)),
        (
            Cylinder(0.1, 0.5),
            1000 * np.pi * 0.01,
            1000 * np.pi * 0.01 * np.array([0.005, (0.03 + 1.0) / 12, (0.03 + 1.0) / 12]),
        ),
    ],
)
def test_update_mass_and_inertia_closed_forms(shape, mass, inertia):
    """Mass and principal inertia of a box, a sphere and a cylinder at density 1000 equal the textbook values."""
    _, _, link = _chain()
    link.attach_shape(shape)
    link.update_mass_and_inertia(1000.0)
    assert link.mass == pytest.approx(mass, rel=1e-9)
    assert np.sort(link.inertia) == pytest.approx(np.sort(inertia), rel=1e-9)


def test_capsule_limits_and_offset_shapes(tmp_path):
    """A capsule with a tiny radius tends to a rod (I = m L^2 / 12); two offset spheres combine by parallel axes;
    a mesh in a format artic does not read has no volume."""
    _, _, link = _chain()
    link.attach_shape(Capsule(1e-4, 0.5))
    link.update_mass_and_inertia(1.0)
    assert max(link.inertia) == pytest.approx(link.mass / 12.0, rel=1e-3)
    _, _, link2 = _chain()
    link2.attach_shape(Sphere(0.1, local_pose=Transform((1, 0, 0))))
    link2.attach_shape(Sphere(0.1, local_pose=Transform((-1, 0, 0))))
    link2.update_mass_and_inertia(1.0)
    ms = 4 / 3 * np.pi * 1e-3
    assert link2.cmass_local_pose.p == pytest.approx(np.zeros(3), abs=1e-12)
    assert np.sort(link2.inertia) == pytest.approx(
        np.sort([2 * 0.4 * ms * 0.01, 2 * ms * (0.004 + 1), 2 * ms * (0.004 + 1)])
    )
    odd = tmp_path / "x.3ds"  # mesh files are read when the shape is built: this one exists, in a foreign format
    odd.write_bytes(b"3ds")
    with pytest.warns(RuntimeWarning, match="not read"):
        link2.attach_shape(Mesh(str(odd)))
    with pytest.raises(ArticError, match="set the link's mass explicitly"):
        link2.update_mass_and_inertia(1.0)


def test_full_inertia_tensor_is_diagonalized():
    """set_mass_and_inertia_tensor keeps the tensor: R diag(moments) R^T rebuilds it."""
    _, _, link = _chain()
    t = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
    link.set_mass_and_inertia_tensor(2.0, (0.1, 0.2, 0.3), t)
    from artic.math.np_spatial import quat_to_matrix

    r = quat_to_matrix(link.cmass_local_pose.q)
    assert r @ np.diag(link.inertia) @ r.T == pytest.approx(t)
    assert np.linalg.det(r) == pytest.approx(1.0)
    with pytest.raises(ArticError, match="not positive semi-definite"):
        link.set_mass_and_inertia_tensor(1.0, (0, 0, 0), -t)


def test_flags():
    art, _, _ = _chain()
    art.set_articulation_flag(ArticulationFlag.FIX_BASE, True)
    art.set_articulation_flag(ArticulationFlag.DISABLE_SELF_COLLISION, True)
    assert art.fix_base and int(art.get_articulation_flags()) == 5
    art.set_articulation_flag(ArticulationFlag.FIX_BASE, False)
    assert not art.fix_base
