"""Articulations that cannot be stepped (a dof with no mass or inertia to move) are found when they enter a scene,
and repaired with a warning or refused (artic/description/mass_check.py)."""

import warnings

import numpy as np
import pytest

import artic
from artic import ArticulationFlag, Axis, CacheFlag, Drive, DriveType, JointType, Motion, Transform
from artic.assets import model_path
from artic.description.mass_check import check_mass_properties, find_massless, mass_policy_arg, pivots
from tests.support.models import random_tree, robot_path, step_finite

URDF_NO_INERTIAL = """<robot name="arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="upper"><inertial><origin xyz="0 0 0.2"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
  <joint name="wrist" type="revolute"><parent link="upper"/><child link="tip"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
</robot>
"""


def _link(
    art,
    parent,
    name,
    axis=Axis.SWING1,
    mass=1.0,
    inertia=(0.01, 0.01, 0.01),
    com=(0.0, 0.0, 0.0),
    offset=(0.0, 0.0, 0.3),
    joint_type=JointType.REVOLUTE,
):
    link = art.create_link(parent, None, name)
    j = link.inbound_joint
    j.set_joint_type(joint_type)
    j.set_motion(axis, Motion.FREE)
    j.parent_pose = Transform(offset)
    link.mass = mass
    link.inertia = inertia
    link.cmass_local_pose = Transform(com)
    return link


def _arm(tip_mass=1.0, tip_inertia=(0.01, 0.01, 0.01), tip_com=(0.0, 0.0, 0.1), tip_axis=Axis.SWING1):
    """Fixed base, two hinges about y: an upper link of 1 kg and a tip link with the given mass properties."""
    art = artic.Articulation("arm")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    base = art.create_link(None, Transform((0, 0, 1)), "base")
    upper = _link(art, base, "upper", com=(0, 0, 0.15))
    _link(art, upper, "tip", axis=tip_axis, mass=tip_mass, inertia=tip_inertia, com=tip_com)
    return art


def _masses(art):
    return [(link.mass, link.inertia.tobytes(), link.cmass_local_pose.as_array().tobytes()) for link in art.get_links()]


def _add(art, **scene_kw):
    scene = artic.Scene(1, **scene_kw)
    scene.add_articulation(art)
    return scene


def test_pivot_of_one_hinge_is_the_parallel_axis_inertia():
    """A single hinge's pivot is its link's inertia about the axis plus m r^2 (parallel-axis theorem), plus the
    joint's armature."""
    art = _arm(tip_mass=2.0, tip_inertia=(0.3, 0.05, 0.2), tip_com=(0.1, 0.0, 0.2))
    art.get_joint("tip").set_armature(Axis.SWING1, 0.25)
    tip = [p for link, kind, p in pivots(art) if link.name == "tip"]
    # the hinge is about y through the joint origin; the COM lies 0.1 along x and 0.2 along z from it
    assert tip == [pytest.approx(0.05 + 2.0 * (0.1**2 + 0.2**2) + 0.25, rel=1e-12)]


def test_pivots_multiply_to_the_determinant_of_the_mass_matrix():
    """M = L^T D L with unit-triangular L (leaves eliminated first), so the product of the pivots is det M;
    checked against the scene's CRBA mass matrix on random fixed-base trees of hinges and sliders."""
    rng = np.random.default_rng(3)
    for _ in range(3):
        art = random_tree(rng, n_links=7, armature=False, kinds=("revolute", "prismatic", "fix"))  # at q = 0
        scene = _add(art)
        cache = art.create_cache()
        art.compute_mass_matrix(cache)
        m = cache.mass_matrix[0].astype(float)
        product = np.prod([p for _, _, p in pivots(art)])
        assert product == pytest.approx(np.linalg.det(m), rel=2e-4)
        assert scene.num_envs == 1


def test_urdf_link_without_inertial_on_a_moving_joint_is_repaired_and_steps(tmp_path):
    """A URDF link without <inertial> at the end of a hinge (zero mass, zero inertia) is found when the
    articulation enters the scene: a warning names it, its mass and inertia are raised, and 2 s of stepping stay
    finite."""
    path = tmp_path / "arm.urdf"
    path.write_text(URDF_NO_INERTIAL)
    art = artic.load_urdf(path)
    assert art.get_link("tip").mass == 0.0
    with pytest.warns(UserWarning, match=r"'tip' \(rotational inertia about joint 'wrist' 0 kg m\^2\)"):
        _add(art)
    tip = art.get_link("tip")
    # 1e-5 of the 3 kg total is 3e-5 kg; 1e-5 of the largest pivot (the shoulder) is above the 1e-8 floor
    assert tip.mass == pytest.approx(3e-5)
    assert np.all(tip.inertia > 1e-8)
    assert art.get_link("upper").mass == 1.0  # the healthy links are left alone
    assert step_finite(art, 2.0, scene=art._scene)


def test_raise_policy_refuses_and_names_the_links(tmp_path):
    """policy='raise' refuses the model with a ValidationError naming the link and the joint, and changes
    nothing."""
    path = tmp_path / "arm.urdf"
    path.write_text(URDF_NO_INERTIAL)
    art = artic.load_urdf(path)
    before = _masses(art)
    with pytest.raises(artic.ValidationError, match=r"articulation 'arm'.*'tip'.*joint 'wrist'.*<inertial>"):
        check_mass_properties(art, "raise")
    assert _masses(art) == before


def test_scene_mass_policy_keyword_repairs_by_default_and_refuses_on_request(tmp_path):
    """Scene(mass_policy=...) chooses what add_articulation does with a massless hinge link: by default it warns
    and repairs (the scene then steps), with 'raise' it refuses and the articulation stays out of the scene; an
    unknown policy is refused at construction."""
    path = tmp_path / "arm.urdf"
    path.write_text(URDF_NO_INERTIAL)
    refused = artic.load_urdf(path)
    with pytest.raises(artic.ValidationError, match=r"'tip'"):
        _add(refused, mass_policy="raise")
    assert refused._scene is None and refused.get_link("tip").mass == 0.0
    art = artic.load_urdf(path)
    with pytest.warns(UserWarning, match="'tip'"):
        scene = _add(art)
    assert scene.mass_policy == "repair" and art.get_link("tip").mass > 0.0
    with pytest.raises(artic.ValidationError, match="'repair' or 'raise'"):
        artic.Scene(1, mass_policy="ignore")


def test_unknown_policy_is_refused():
    """A mass policy other than 'repair' or 'raise' is a ValidationError naming the choices."""
    with pytest.raises(artic.ValidationError, match="'repair' or 'raise'"):
        mass_policy_arg("fix")
    with pytest.raises(artic.ValidationError, match="'repair' or 'raise'"):
        check_mass_properties(_arm(), policy=None)


def test_massless_floating_root_is_repaired_and_steps():
    """A floating single link with no mass and no inertia is found (the root), repaired with a warning and falls
    under gravity with finite states; 'raise' refuses it."""
    art = artic.Articulation("ghost")
    root = art.create_link(None, Transform((0, 0, 1)), "ghost")
    root.mass = 0.0
    root.inertia = (0.0, 0.0, 0.0)
    with pytest.raises(artic.ValidationError, match="'ghost' \\(root mass 0 kg"):
        check_mass_properties(art, "raise")
    with pytest.warns(UserWarning, match="'ghost'"):
        scene = _add(art)
    assert root.mass == 1e-5 and np.all(root.inertia == 1e-8)  # the floors: the total mass was zero
    assert step_finite(art, 2.0, scene=scene)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_TRANSFORM)
    assert cache.root_transform[0, 2] < 1.0 - 10.0  # it fell (about 19.6 m, less the link damping's share)


def test_massless_floating_root_carried_by_a_massive_child_is_fine():
    """A massless floating root welded or hinged to a massive child (a URDF 'base' frame) is not reported: the
    root's articulated inertia is the child's."""
    art = artic.Articulation("frame")
    root = art.create_link(None, Transform((0, 0, 1)), "frame")
    root.mass = 0.0
    root.inertia = (0.0, 0.0, 0.0)
    body = art.create_link(root, None, "body")
    body.inbound_joint.set_joint_type(JointType.FIX)
    body.inbound_joint.parent_pose = Transform((0.1, 0, 0))
    assert find_massless(art) == []


def test_zero_inertia_about_the_hinge_axis_is_found_but_not_about_another_axis():
    """A 1 kg tip whose COM is on its hinge and whose inertia about the hinge axis is zero is found (icub's
    neck_2); the same link on a hinge about an axis where it has inertia is not."""
    bad = _arm(tip_inertia=(0.01, 0.0, 0.01), tip_com=(0, 0, 0))  # y is the hinge axis
    assert [link.name for link, _ in find_massless(bad)] == ["tip"]
    with pytest.warns(UserWarning, match="'tip'"):
        scene = _add(bad)
    assert bad.get_link("tip").mass == 1.0  # the mass was already above the floor: only the inertia changed
    assert bad.get_link("tip").inertia[1] > 0.0
    assert step_finite(bad, 2.0, scene=scene)
    assert find_massless(_arm(tip_inertia=(0.0, 0.01, 0.0), tip_com=(0, 0, 0))) == []


def test_pivot_lost_to_float32_is_found():
    """A pivot above the absolute floor but below float32's epsilon times the largest pivot (1e-6 kg m^2 against
    a 1e5 kg m^2 shoulder) is found: the step could not tell it from zero."""
    art = _arm(tip_mass=1e-3, tip_inertia=(1e-6, 1e-6, 1e-6), tip_com=(0, 0, 0))
    art.get_link("upper").inertia = (1e5, 1e5, 1e5)
    assert [link.name for link, _ in find_massless(art)] == ["tip"]


def test_massless_link_with_armature_or_massive_children_is_fine():
    """A massless link is not reported when its joint has armature, or when a massive child moves with it about
    another axis (a URDF intermediate frame between two joints)."""
    art = _arm(tip_mass=0.0, tip_inertia=(0, 0, 0), tip_com=(0, 0, 0))
    assert [link.name for link, _ in find_massless(art)] == ["tip"]
    art.get_joint("tip").set_armature(Axis.SWING1, 0.01)
    assert find_massless(art) == []

    art = _arm(tip_mass=0.0, tip_inertia=(0, 0, 0), tip_com=(0, 0, 0))
    hand = _link(art, art.get_link("tip"), "hand", axis=Axis.TWIST, com=(0, 0, 0.1), offset=(0, 0, 0.05))
    assert hand.mass == 1.0
    assert find_massless(art) == []


def test_milligram_links_under_drives_are_repaired_and_step_in_32_envs():
    """1e-6 kg links (inertia 1e-9 kg m^2, COM on the hinge) under ordinary PD drives are found and repaired; then
    32 envs started at random angles step 2 s under PGS with finite states."""
    art = artic.Articulation("tiny")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    parent = art.create_link(None, Transform((0, 0, 1)), "base")
    for i in range(3):
        parent = _link(
            art,
            parent,
            f"l{i}",
            axis=Axis.SWING1 if i % 2 else Axis.SWING2,
            mass=1e-6,
            inertia=(1e-9, 1e-9, 1e-9),
            offset=(0.0, 0.0, 0.0),
        )
        j = parent.inbound_joint
        j.set_drive_params(j.dof_axes()[0], Drive(100.0, 10.0, 1e3, DriveType.FORCE))
        j.set_drive_target(j.dof_axes()[0], 0.5)
    assert len(find_massless(art)) == 3
    scene = artic.Scene(32, solver_type=artic.SolverType.PGS)
    with pytest.warns(UserWarning, match="3 link\\(s\\)"):
        scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[:] = np.random.default_rng(0).uniform(-1, 1, cache.joint_position.shape)
    art.apply_cache(cache, CacheFlag.POSITION)
    for _ in range(120):
        scene.step(1 / 60)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    assert np.isfinite(cache.joint_position).all() and np.isfinite(cache.joint_velocity).all()


def test_healthy_models_are_untouched_and_silent():
    """Random trees of every joint type, panda, and the shipped MJCF humanoid (whose multi-hinge bodies become
    chains of 1e-6 kg links carrying the real body) enter a scene without a mass warning and with bit-identical
    masses, inertias and COM frames."""
    rng = np.random.default_rng(7)
    arts = [random_tree(rng, n_links=8, floating=f) for f in (False, True)] + [artic.load_urdf(robot_path("panda"))]
    humanoid = artic.load_mjcf(model_path("humanoid")).articulations[0]
    assert min(link.mass for link in humanoid.get_links()) == 1e-6
    arts.append(humanoid)
    for art in arts:
        before = _masses(art)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*no mass or inertia.*")
            _add(art)
        assert _masses(art) == before
        assert check_mass_properties(art) == []


def _gimbal(middle_limit):
    """A fixed base and a 2 kg body on three concurrent hinges (z, then x, then y) joined by two massless links;
    the middle hinge's range is [-middle_limit, middle_limit]."""
    art = artic.Articulation("gimbal")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    parent = art.create_link(None, Transform((0, 0, 1)), "base")
    for name, axis in (("yaw", Axis.SWING2), ("pitch", Axis.TWIST), ("body", Axis.SWING1)):
        massless = name != "body"
        parent = _link(
            art,
            parent,
            name,
            axis=axis,
            mass=0.0 if massless else 2.0,
            inertia=(0, 0, 0) if massless else (0.02, 0.03, 0.04),
            com=(0, 0, 0 if massless else -0.2),
            offset=(0, 0, 0),
        )
        if name == "pitch":
            parent.inbound_joint.set_motion(Axis.TWIST, Motion.LIMITED)
            parent.inbound_joint.set_limit_params(Axis.TWIST, artic.Limit(-middle_limit, middle_limit))
    return art


def test_gimbal_lock_within_the_limits_is_found_and_repaired():
    """Three concurrent hinges joined by massless links are fine at zero but singular when the middle hinge turns
    90 degrees (the first and last axes line up; human.urdf's hips): found when the middle range reaches pi/2, with
    the joint and angle named, not when it stays within 1 rad; repaired, the body falls 2 s finitely from the
    locked configuration."""
    assert find_massless(_gimbal(1.0)) == []
    art = _gimbal(2.0)
    found = find_massless(art)
    assert [link.name for link, _ in found] == ["yaw"]
    assert found[0][1].endswith("with joint 'pitch' at -1.571 rad")  # the first lock sampled: -pi/2
    with pytest.warns(UserWarning, match="'yaw'"):
        scene = _add(art)
    assert art.get_link("yaw").inertia.min() > 0.0 and art.get_link("body").mass == 2.0
    cache = art.create_cache()
    cache.joint_position[:] = [0.0, np.pi / 2, 0.0]
    art.apply_cache(cache, CacheFlag.POSITION)
    assert step_finite(art, 2.0, scene=scene)


def test_turned_joint_pivots_equal_those_of_the_model_built_turned():
    """Turning one hinge (the lock search) gives the same pivots as a copy of the model whose joint frame is built
    turned by that angle, on random floating trees (only the turned link's ancestors and the root are listed)."""
    from artic.math.np_spatial import quat_from_axis_angle

    rng = np.random.default_rng(11)
    for _ in range(3):
        seed = int(rng.integers(1 << 30))
        art = random_tree(np.random.default_rng(seed), n_links=9, floating=True, kinds=("revolute", "prismatic"))
        hinges = [link for link in art.get_links()[1:] if link.inbound_joint.get_joint_type() == JointType.REVOLUTE]
        link = hinges[-1]
        turned = {(x.name, kind): p for x, kind, p in pivots(art, link, 1.1)}
        assert {name for name, _ in turned} >= {"root", link.parent.name}
        copy = random_tree(np.random.default_rng(seed), n_links=9, floating=True, kinds=("revolute", "prismatic"))
        j = copy.get_link(link.name).inbound_joint
        axis = np.eye(3)[int(j.dof_axes()[0])]
        j.parent_pose = j.parent_pose * Transform(np.zeros(3), quat_from_axis_angle(axis, 1.1))
        built = {(x.name, kind): p for x, kind, p in pivots(copy)}
        for key, value in turned.items():
            assert value == pytest.approx(built[key], rel=1e-9)
        at_zero = {(x.name, kind): p for x, kind, p in pivots(art)}
        assert any(abs(turned[k] - at_zero[k]) > 1e-6 * abs(at_zero[k]) for k in turned)  # the turn mattered


def test_massless_rigid_body_added_as_an_actor_is_repaired():
    """A RigidDynamic given no mass goes through the same check when added with add_actor: a warning names it and
    it falls with finite states."""
    body = artic.RigidDynamic(Transform((0, 0, 2)), name="feather")
    body.link.mass = 0.0
    body.link.inertia = (0.0, 0.0, 0.0)
    scene = artic.Scene(1)
    with pytest.warns(UserWarning, match="'feather'"):
        scene.add_actor(body)
    assert body.mass == 1e-5
    assert step_finite(body.articulation, 1.0, scene=scene)
