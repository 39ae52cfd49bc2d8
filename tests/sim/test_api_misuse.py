"""Misuse of the Python API (issue 14): every case gets an ArticError that names the object and the fix, never a raw
NumPy, Warp or Python exception, and never silent acceptance."""

import warnings

import numpy as np
import pytest
import warp as wp

import artic
from artic import (
    ArticError,
    ArticulationFlag,
    Axis,
    Box,
    CacheFlag,
    Drive,
    DriveType,
    JointType,
    Limit,
    Motion,
    Sphere,
    StateError,
    Transform,
)
from artic.sim.builders.arrays import bytes_per_env
from artic.sim.memory import allocation_errors, available_bytes
from tests.support.models import random_tree

E = 2


def _pendulum(name="pend", drive_axis=None):
    """A fixed-base two-link pendulum: link 'arm' on a revolute joint about TWIST, limited to [-1, 1]."""
    art = artic.Articulation(name)
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    root = art.create_link(None, Transform(), "base")
    arm = art.create_link(root, Transform((0.0, 0.0, -0.5)), "arm")
    j = arm.inbound_joint
    j.set_joint_type(JointType.REVOLUTE)
    j.set_motion(Axis.TWIST, Motion.LIMITED)
    j.set_limit_params(Axis.TWIST, Limit(-1.0, 1.0))
    if drive_axis is not None:
        j.set_drive_params(drive_axis, Drive(10.0, 1.0, 100.0, DriveType.FORCE))
    return art


def _in_scene(art=None):
    art = art or _pendulum()
    scene = artic.Scene(E)
    scene.add_articulation(art)
    return scene, art, art.create_cache()


# -- 1. flags ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", [1 << 20, ArticulationFlag.FIX_BASE | (1 << 20), -1, "FIX_BASE", 1.0, None])
def test_unknown_articulation_flags_are_refused(flag):
    """IntFlag keeps unknown bits silently; set_articulation_flag refuses them, and non-integers, naming the flags."""
    art = _pendulum()
    with pytest.raises(ArticError, match=r"articulation 'pend'.*(FIX_BASE|ArticulationFlag)"):
        art.set_articulation_flag(flag)
    assert int(art.get_articulation_flags()) == int(ArticulationFlag.FIX_BASE)


def test_articulation_flag_value_must_be_bool():
    """A value other than True/False (e.g. the string "no", which is truthy) is refused rather than read as True."""
    art = _pendulum()
    with pytest.raises(ArticError, match="True or False"):
        art.set_articulation_flag(ArticulationFlag.DISABLE_SELF_COLLISION, "no")


@pytest.mark.parametrize(
    "flags, message",
    [
        ("POSITION", r"pass artic\.CacheFlag\.POSITION"),
        (1 << 20, r"not artic\.CacheFlag flags \(1048576\); the flags are VELOCITY \(1\)"),
        (CacheFlag.ALL | (1 << 9), r"not artic\.CacheFlag flags \(512\)"),
        (2.5, "must be an artic.CacheFlag"),
        (True, "must be an artic.CacheFlag"),
    ],
)
def test_bad_cache_flags_are_refused(flags, message):
    """apply_cache and copy_internal_state_to_cache refuse strings, non-integers and unknown bits."""
    _, art, cache = _in_scene()
    for call in (art.apply_cache, art.copy_internal_state_to_cache):
        with pytest.raises(ArticError, match=message):
            call(cache, flags)


# -- 2. cache fields --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, flag",
    [
        ("joint_position", CacheFlag.POSITION),
        ("joint_force", CacheFlag.FORCE),
        ("joint_target_positions", CacheFlag.JOINT_TARGET_POSITIONS),
        ("link_force", CacheFlag.LINK_FORCE),
    ],
)
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda a: a.astype(complex), r"is complex, must be a finite float32 array of shape \(2, \d+(, 3)?\)"),
        (lambda a: a.astype(str), "is dtype <U32, must be a finite float32 array"),
        (lambda a: a.astype(object), "is dtype object, must be"),
        (lambda a: a[:1], r"has shape \(1, \d+(, 3)?\), expected \(2, \d+(, 3)?\)"),
        (lambda a: a.tolist()[:1], r"has shape \(1,"),
        (lambda a: np.full_like(a, 3e38), r"has 3e\+38 at index \(0, 0(, 0)?\), beyond \+-1e\+15"),
    ],
)
def test_bad_cache_input_names_field_shape_and_dtype(field, flag, make, message):
    """Replaced input fields (complex, strings, objects, wrong shape, lists, overflowing values) are refused, naming
    the field and the expected shape and dtype, and the refused call changes no state."""
    _, art, cache = _in_scene()
    before = art.create_cache()
    art.copy_internal_state_to_cache(before, CacheFlag.POSITION | CacheFlag.FORCE)
    setattr(cache, field, make(getattr(cache, field)))
    with pytest.raises(ArticError, match=rf"articulation 'pend': cache\.{field} " + message):
        art.apply_cache(cache, flag | CacheFlag.POSITION if field != "joint_position" else flag)
    after = art.create_cache()
    art.copy_internal_state_to_cache(after, CacheFlag.POSITION | CacheFlag.FORCE)
    assert np.array_equal(after.joint_position, before.joint_position)
    assert np.array_equal(after.joint_force, before.joint_force)


def test_a_refused_field_leaves_earlier_fields_unapplied():
    """apply_cache checks every field before writing any: a bad velocity does not let the positions through."""
    _, art, cache = _in_scene()
    cache.joint_position[:] = 0.5
    cache.joint_velocity = np.ones((E, 1), complex)
    with pytest.raises(ArticError, match="joint_velocity is complex"):
        art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert np.all(cache.joint_position == 0.0)


@pytest.mark.parametrize(
    "field, call",
    [
        ("mass_matrix", lambda art, c: art.compute_mass_matrix(c)),
        ("gravity_compensation_force", lambda art, c: art.compute_gravity_compensation(c)),
        ("dense_jacobian", lambda art, c: art.compute_dense_jacobian(c)),
        ("joint_force", lambda art, c: art.compute_joint_force(c)),
        ("joint_acceleration", lambda art, c: art.compute_joint_acceleration(c)),
        ("joint_position", lambda art, c: art.copy_internal_state_to_cache(c, CacheFlag.POSITION)),
        ("link_velocity", lambda art, c: art.copy_internal_state_to_cache(c, CacheFlag.LINK_VELOCITY)),
    ],
)
@pytest.mark.parametrize(
    "replacement, got",
    [
        (3, r"an object of type int \(3\)"),
        (np.zeros((5, 5), np.float32), r"an array of dtype float32 and shape \(5, 5\)"),
        (np.zeros(1, np.int64), "an array of dtype int64"),
    ],
)
def test_replaced_output_field_is_refused(field, call, replacement, got):
    """An output field the user assigned (a number, an array of another shape or an integer dtype) is refused with
    the fix, instead of a TypeError or a broadcasting ValueError from NumPy."""
    _, art, cache = _in_scene()
    setattr(cache, field, replacement)
    with pytest.raises(ArticError, match=rf"cache\.{field} was replaced by {got}.*cache\.{field}\[:\] = "):
        call(art, cache)


def test_cache_inputs_beyond_float32_range_are_refused_for_inverse_dynamics():
    """External forces of 3e38 would overflow the float32 RNEA: compute_generalized_external_force refuses them."""
    _, art, cache = _in_scene()
    cache.external_forces[0, 1, 2] = 3e38
    with pytest.raises(ArticError, match=r"cache\.external_forces has 3e\+38 at index \(0, 1, 2\)"):
        art.compute_generalized_external_force(cache)


def test_cache_from_another_scene_is_refused():
    """A cache taken before the articulation moved to a scene with another env count is refused by name, not with
    a broadcasting error."""
    scene, art, cache = _in_scene()
    scene.remove_articulation(art)
    artic.Scene(E + 1).add_articulation(art)
    with pytest.raises(ArticError, match=r"the cache was created for 2 envs but its scene has 3"):
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda lk: setattr(lk, "inertia", (1j, 1.0, 1.0)), "link 'arm': inertia is complex, must be 3 principal"),
        (lambda lk: setattr(lk, "inertia", "abc"), "link 'arm': inertia is dtype <U3"),
        (lambda lk: lk.set_mass_and_inertia_tensor(1.0, (0, 0, 0), [[1, 0], [0]]), "inertia tensor must be a finite"),
        (lambda lk: lk.articulation.pack_joint_data(np.full((1, 6), "x")), "pack_joint_data input is dtype <U1"),
        (lambda lk: lk.articulation.unpack_joint_data([1j]), "unpack_joint_data input is complex"),
    ],
)
def test_non_real_description_arrays_are_refused(action, message):
    """Complex, string and ragged arrays given to the link and packing API raise an ArticError, not NumPy's
    TypeError or ValueError."""
    art = _pendulum()
    with pytest.raises(ArticError, match=message):
        action(art.get_link("arm"))


# -- 3. settings that cannot act ------------------------------------------------------------------------------------


def test_drive_on_a_locked_axis_is_refused_at_add():
    """PhysX accepts a drive on a locked axis and ignores it; artic refuses it when the articulation is added, naming
    the joint and the axis."""
    art = _pendulum(drive_axis=Axis.SWING1)
    with pytest.raises(ArticError, match="joint 'arm': axis SWING1 is LOCKED but has a drive"):
        artic.Scene(E).add_articulation(art)
    art.get_joint("arm").set_drive_params(Axis.SWING1, Drive())  # reset: accepted
    art.get_joint("arm").set_limit_params(Axis.SWING1, Limit())  # so is clearing a limit that was never set
    art.get_joint("arm").set_drive_params(Axis.TWIST, Drive(10.0, 1.0, 100.0, DriveType.FORCE))
    artic.Scene(E).add_articulation(art)


@pytest.mark.parametrize(
    "action, what",
    [
        (lambda j: j.set_limit_params(Axis.Z, Limit(-1.0, 1.0)), "limit"),
        (lambda j: j.set_drive_target(Axis.SWING2, 0.3), "drive target"),
        (lambda j: j.set_joint_position(Axis.X, 0.2), "joint position"),
    ],
)
def test_limit_target_or_state_on_a_locked_axis_is_refused(action, what):
    """A limit, drive target or joint position on a locked axis is refused at add (out of a scene; resetting it
    makes the articulation acceptable) and at once (in a scene, where motions are frozen)."""
    art = _pendulum()
    action(art.get_joint("arm"))
    with pytest.raises(ArticError, match=f"joint 'arm': axis .* is LOCKED but has a {what}.*artic.Limit\\(\\)"):
        artic.Scene(E).add_articulation(art)
    j = art.get_joint("arm")
    j.set_limit_params(Axis.Z, Limit())
    j.set_drive_target(Axis.SWING2, 0.0)
    j.set_joint_position(Axis.X, 0.0)
    artic.Scene(E).add_articulation(art)
    _, art, _ = _in_scene()
    with pytest.raises(ArticError, match=f"joint 'arm': axis .* is LOCKED, so a {what} on it would never act"):
        action(art.get_joint("arm"))


def test_clearing_the_limit_of_a_limited_axis_is_refused():
    """Limit() clears a limit only where no limit is needed: on a LIMITED axis it would lock the joint at 0."""
    _, art, _ = _in_scene()
    with pytest.raises(ArticError, match=r"joint 'arm': twist limit low 0.0 >= high 0.0"):
        art.get_joint("arm").set_limit_params(Axis.TWIST, Limit())


def test_drive_on_a_locked_axis_is_refused_in_a_scene():
    _, art, _ = _in_scene()
    with pytest.raises(ArticError, match="joint 'arm': axis SWING2 is LOCKED, so a drive on it would never act"):
        art.get_joint("arm").set_drive_params(Axis.SWING2, Drive(1.0, 0.0, 1.0, DriveType.FORCE))


def test_limit_on_a_free_axis_warns():
    """A limit on a FREE axis does not act (only LIMITED axes use it): adding warns and names the fix."""
    art2 = artic.Articulation("free")
    art2.set_articulation_flag(ArticulationFlag.FIX_BASE)
    arm = art2.create_link(art2.create_link(None, None, "base"), None, "arm")
    arm.inbound_joint.set_joint_type(JointType.REVOLUTE)
    arm.inbound_joint.set_limit_params(Axis.TWIST, Limit(-1.0, 1.0))
    arm.inbound_joint.set_motion(Axis.TWIST, Motion.FREE)
    with pytest.warns(UserWarning, match=r"joint 'arm': axis TWIST has a limit \[-1.0, 1.0\] but is FREE"):
        artic.Scene(E).add_articulation(art2)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda j: j.set_limit_params(Axis.TWIST, (-1.0, 1.0)), "set_limit_params takes an artic.Limit, got tuple"),
        (lambda j: j.set_drive_params(Axis.TWIST, {"stiffness": 1.0}), "set_drive_params takes an artic.Drive"),
        (lambda j: j.set_friction_params(Axis.TWIST, 0.1), "set_friction_params takes an artic.FrictionParams"),
        (lambda j: j.set_drive_target(Axis.TWIST, 1j), "drive target must be a number"),
        (lambda j: j.set_drive_target(Axis.TWIST, 3e38), r"drive target 3e\+38 is beyond \+-1e\+15"),
        (lambda j: j.set_joint_velocity(Axis.TWIST, -1e20), r"joint velocity -1e\+20 is beyond"),
        (lambda j: setattr(j, "parent_pose", Transform((0.0, 0.0, 1e30))), r"position .* is beyond \+-1e\+15 m"),
        (lambda j: setattr(j.child_link, "mass", "2"), r"link 'arm': mass must be a number, got '2'"),
        (lambda j: j.set_drive_target(Axis.TWIST, True), "drive target must be a number, got True"),
        (lambda j: j.child_link.articulation.set_solver_iteration_counts("4"), r"\[1, 255\]"),
        (lambda j: j.child_link.articulation.set_solver_iteration_counts(4.7), r"\[1, 255\]"),
    ],
)
def test_bad_description_values_are_named(action, message):
    """Wrong types and absurd magnitudes given to the joint API raise an ArticError naming the joint, never an
    AttributeError or TypeError and never a value float32 cannot hold."""
    art = _pendulum()
    with pytest.raises(ArticError, match=message):
        action(art.get_joint("arm"))


def test_huge_limits_mean_unlimited_and_are_accepted():
    """URDFs (iris.urdf) write +-1e16 for an unlimited range; such limits overflow nothing and are kept, unlike
    positions and targets of that size."""
    art = _pendulum()
    art.get_joint("arm").set_limit_params(Axis.TWIST, Limit(-1e16, 1e16))
    assert art.get_joint("arm").get_limit_params(Axis.TWIST) == Limit(-1e16, 1e16)


def test_negative_nan_masses_and_inverted_limits_are_refused():
    """Already checked before issue 14; kept here with the other misuse cases."""
    art = _pendulum()
    link, joint = art.get_link("arm"), art.get_joint("arm")
    for value, message in ((-1.0, "mass must be >= 0"), (float("nan"), "mass must be finite")):
        with pytest.raises(ArticError, match=f"link 'arm': {message}"):
            link.mass = value
    with pytest.raises(ArticError, match=r"joint 'arm': twist limit low 2.0 >= high -2.0"):
        joint.set_limit_params(Axis.TWIST, Limit(2.0, -2.0))


# -- 4. shapes after adding -----------------------------------------------------------------------------------------


def test_attach_shape_in_a_scene_is_refused():
    """A shape attached after the scene built its collision pairs would never collide: refused with what to do, for
    articulation links, rigid bodies and static actors; before adding it is accepted."""
    scene, art, _ = _in_scene()
    scene.step(0.01)
    with pytest.raises(StateError, match="link 'arm': attach_shape while articulation 'pend' is in a scene"):
        art.get_link("arm").attach_shape(Sphere(0.1))
    assert art.get_link("arm").shapes == []
    body = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "ball")
    body.attach_shape(Sphere(0.1))
    scene.add_actor(body)
    with pytest.raises(StateError, match="attach shapes before scene.add_articulation"):
        body.attach_shape(Box((0.1, 0.1, 0.1)))
    ground = scene.add_actor(artic.create_ground_plane())
    with pytest.raises(StateError, match="static actor 'ground' is in a scene"):
        ground.attach_shape(Sphere(1.0))


# -- 5. empty scene ---------------------------------------------------------------------------------------------------


def test_stepping_an_empty_scene_warns_once_and_time_stands_still():
    """A scene with only static actors simulates nothing: step warns once and leaves scene.time at 0; once a body is
    added, time counts the steps."""
    scene = artic.Scene(E)
    scene.add_actor(artic.create_ground_plane())
    with pytest.warns(RuntimeWarning, match="simulates nothing and does not advance scene.time"):
        scene.step(0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scene.step(0.01)  # warned once only
    assert scene.time == 0.0
    body = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "ball")
    body.attach_shape(Sphere(0.1))
    body.update_mass_and_inertia(1000.0)
    scene.add_actor(body)
    scene.step(0.01)
    scene.step(0.01)
    assert scene.time == 0.02


@pytest.mark.parametrize("dt", ["0.01", True, 1j, None, 0.0, -0.01, float("nan"), 1e30])
def test_step_refuses_dt_that_is_not_a_positive_number(dt):
    """A string such as "0.01" is not converted silently, nor is a bool; dt must be a positive finite number."""
    scene, _, _ = _in_scene()
    with pytest.raises(ArticError, match="scene: dt must be a"):
        scene.step(dt)
    assert scene.time == 0.0


# -- 6. threads -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", ["a", 0, -1, 2.5, True, None, 10**9])
def test_set_cpu_threads_refuses_what_is_not_a_thread_count(n):
    """Strings, non-positive, fractional, boolean, None and absurd thread counts are refused; nothing changes."""
    before = artic.get_cpu_threads()
    with pytest.raises(ArticError, match=r"set_cpu_threads: the thread count must be an integer from 1 to 1024"):
        artic.set_cpu_threads(n)
    assert artic.get_cpu_threads() == before


# -- 7. env counts and memory ---------------------------------------------------------------------------------------


def test_scene_refuses_a_string_friction_correlation_distance():
    with pytest.raises(ArticError, match="friction_correlation_distance must be a positive length"):
        artic.Scene(1, friction_correlation_distance="0.025")


@pytest.mark.parametrize("n", [0, -3, 2.0, True, np.bool_(True), "4", 1 << 31])
def test_num_envs_must_be_a_positive_int32(n):
    with pytest.raises(ArticError, match="scene: num_envs must be"):
        artic.Scene(n)


def test_too_many_envs_for_even_one_body_are_refused_up_front():
    """10**9 envs need about 2 TB for a single rigid body: Scene() refuses, naming the memory it needs."""
    with pytest.raises(
        ArticError,
        match=r"scene: even a single rigid body in 1000000000 envs needs at least "
        r"[\d.]+ GiB \(\d+ bytes per env\) but the device 'cpu' has",
    ):
        artic.Scene(10**9, device="cpu")


def test_bytes_per_env_counts_the_mass_matrix_and_jacobian():
    """The lower bound grows with N^2 (mass matrix, twice, and its inverse) and 6L x N (Jacobian): 30 links with 29
    dofs on a fixed base take at least 4 * (3 * 29^2 + 174 * 29) bytes per env."""
    assert bytes_per_env(30, 29, False) >= 4 * (3 * 29 * 29 + 174 * 29)


def test_adding_an_articulation_that_does_not_fit_is_refused():
    """An articulation whose arrays exceed the device's memory in this many envs is refused when it is added,
    naming the memory it needs, before Warp allocates anything."""
    art = random_tree(np.random.default_rng(1), n_links=30, floating=True)
    per_env = bytes_per_env(art.link_count, art.dof_count, True)
    # twice what the machine has, so that other processes freeing or taking memory meanwhile change nothing; the
    # one-body floor that Scene() checks is 2 kB per env, far below this articulation's
    envs = 2 * available_bytes("cpu")[0] // per_env
    if envs >= 1 << 31:
        pytest.skip("this machine has too much memory for an int32 env count to exceed it")
    scene = artic.Scene(int(envs), device="cpu")
    with pytest.raises(ArticError, match=rf"scene: articulation 'random' in {envs} envs needs at least [\d.]+ GiB"):
        scene.add_articulation(art)
    assert scene.articulations == [] and art._scene is None


def test_ten_million_envs_of_a_robot_are_refused_before_allocating():
    """Scene(10**7) with a 7-link floating tree: refused by an ArticError (at Scene() or at add_articulation,
    depending on the machine's memory), not by Warp's allocator or the kernel's OOM killer."""
    art = random_tree(np.random.default_rng(0), n_links=7, floating=True)
    if available_bytes("cpu")[0] >= 10**7 * bytes_per_env(art.link_count, art.dof_count, True):
        pytest.skip("this machine could hold the arrays")
    with pytest.raises(ArticError, match=r"in 10000000 envs needs at least [\d.]+ GiB"):
        artic.Scene(10**7, device="cpu").add_articulation(art)


def test_warp_allocation_failure_becomes_artic_error():
    """Warp's own allocation failure (400 GB here) is turned into an ArticError that says to use fewer envs."""
    with (
        pytest.raises(ArticError, match="could not be allocated .*use fewer envs"),
        allocation_errors("articulation 'x'", 10**5),
    ):
        wp.zeros((10**5, 10**5, 10), dtype=wp.float32, device="cpu")


# -- 8. absurd magnitudes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gravity, message",
    [
        ((0.0, 0.0, -1e38), r"gravity .* is beyond \+-1e\+15 m/s\^2"),
        ((0.0, 0.0, 1j), "gravity must be 3 finite numbers"),
        ("down", "gravity must be 3 finite numbers"),
    ],
)
def test_absurd_gravity_is_refused(gravity, message):
    with pytest.raises(ArticError, match=message):
        artic.Scene(1, gravity=gravity)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: artic.create_ground_plane(height=1e30), r"ground plane 'ground': height 1e\+30 is beyond \+-1e\+15"),
        (lambda: artic.RigidStatic(Transform((0.0, 0.0, 1e30)), "floor"), r"static actor 'floor': pose position"),
        (lambda: artic.RigidDynamic(Transform((1e16, 0.0, 0.0)), "far"), r"articulation 'far': link pose position"),
        (lambda: artic.create_ground_plane(normal=(0.0, 0.0, 1j)), "normal must be a non-zero 3-vector"),
    ],
)
def test_absurd_poses_are_refused(make, message):
    with pytest.raises(ArticError, match=message):
        make()


def test_absurd_root_position_through_the_cache_is_refused():
    """A root position of 1e20 m set through the cache is refused, naming the field."""
    body = artic.RigidDynamic(Transform(), "ball")
    scene = artic.Scene(E)
    scene.add_actor(body)
    cache = body.articulation.create_cache()
    cache.root_transform[1, 0] = 1e20
    with pytest.raises(ArticError, match=r"cache\.root_transform has 1e\+20 at index \(1, 0\)"):
        body.articulation.apply_cache(cache, CacheFlag.ROOT_TRANSFORM)


# -- 9. per-env setters of the scene ------------------------------------------------------------------------------


def _ball_scene(kinematic=False):
    body = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "ball")
    body.attach_shape(Sphere(0.1))
    body.update_mass_and_inertia(1000.0)
    body.kinematic = kinematic
    scene = artic.Scene(E)
    scene.add_actor(body)
    return scene, body


_BAD_ROWS = [
    (
        lambda n: "abc",
        r"is dtype <U3, must be a finite float32 array of shape \(2, {n}\) \(one row per env\) or "
        r"\({n},\)",
    ),
    (lambda n: ["1"] * n, "is dtype <U1, must be a finite float32 array"),
    (lambda n: np.ones(n, complex), "is complex, must be a finite float32 array"),
    (lambda n: [[0.0] * n, [0.0, 0.0]], r"must be a finite float32 array .*; it cannot be read as an array"),
    (lambda n: np.zeros((3, n)), r"has shape \(3, {n}\), expected \(2, {n}\) or \({n},\)"),
    (lambda n: np.full(n, 1e20), r"has 1e\+20 at index \(0, 0\), beyond \+-1e\+15"),
    (lambda n: np.full((E, n), np.nan), r"has a non-finite value at index \(0, 0\)"),
]


@pytest.mark.parametrize(
    "setter, field, n",
    [
        (lambda s, b, v: s.set_actor_pose(b, v), r"poses \(px, py, pz, qx, qy, qz, qw\)", 7),
        (lambda s, b, v: s.set_actor_velocity(b, v), r"velocities \(linear, then angular\)", 6),
        (lambda s, b, v: s.set_kinematic_target(b, v), r"kinematic targets \(px, py, pz, qx, qy, qz, qw\)", 7),
    ],
)
@pytest.mark.parametrize("make, message", _BAD_ROWS)
def test_bad_rigid_body_rows_name_the_body_field_and_shape(setter, field, n, make, message):
    """Strings, complex numbers, ragged lists, wrong shapes, NaN and magnitudes beyond 1e15 given to the rigid-body
    setters raise an ArticError naming the body, the field and the expected float32 shapes (before, a string raised
    NumPy's ValueError and 1e20 was accepted), and the refused call leaves the body where it was."""
    scene, body = _ball_scene(kinematic="kinematic" in field)
    before = scene.get_actor_pose(body)
    with pytest.raises(ArticError, match=rf"rigid body 'ball': {field} " + message.format(n=n)):
        setter(scene, body, make(n))
    assert np.array_equal(scene.get_actor_pose(body), before)


def test_rigid_body_rows_for_every_env_still_broadcast():
    """A single (7,) pose is given to every env, and a per-env (E, 7) array sets each env its own."""
    scene, body = _ball_scene()
    scene.set_actor_pose(body, [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(scene.get_actor_pose(body)[:, :3], [[1.0, 2.0, 3.0]] * E)
    scene.set_actor_velocity(body, [[0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(scene.get_actor_velocity(body)[:, 2], [1.0, -1.0])


def _hinge_scene():
    """A 1 kg box on a hinge to the world about y, in E envs; coordinate 'angle'."""
    body = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "bob")
    body.attach_shape(Box((0.05, 0.05, 0.2)))
    body.update_mass_and_inertia(1000.0)
    scene = artic.Scene(E)
    scene.add_actor(body)
    joint = scene.add_joint(artic.HingeJoint(body, None, Transform((0.0, 0.0, 1.2)), name="pin"))
    return scene, joint


@pytest.mark.parametrize(
    "setter, field",
    [
        (lambda s, j, v: s.set_joint_coordinates(j, v), "coordinates"),
        (lambda s, j, v: s.set_joint_targets(j, positions=v), "drive target positions"),
        (lambda s, j, v: s.set_joint_targets(j, velocities=v), "drive target velocities"),
    ],
)
@pytest.mark.parametrize("make, message", _BAD_ROWS)
def test_bad_joint_rows_name_the_joint_field_and_shape(setter, field, make, message):
    """The body-joint setters refuse what the rigid-body setters refuse, naming the joint, the field and its
    coordinates, and leave the joint's coordinates and targets as they were."""
    scene, joint = _hinge_scene()
    before = scene.get_joint_coordinates(joint), scene.get_joint_targets(joint)
    with pytest.raises(ArticError, match=rf"hinge joint 'pin': {field} \(coordinates \[.*\]\) " + message.format(n=1)):
        setter(scene, joint, make(1))
    assert np.array_equal(scene.get_joint_coordinates(joint), before[0])
    assert all(np.array_equal(a, b) for a, b in zip(scene.get_joint_targets(joint), before[1]))


@pytest.mark.parametrize(
    "low, message",
    [
        ("abc", r"range low \(coordinates \[.*\]\) is dtype <U3"),
        ([np.nan], r"range low \(coordinates \[.*\]\) must not be NaN; use -inf or inf for an open side"),
        (np.zeros((3, 1)), r"range low \(coordinates \[.*\]\) has shape \(3, 1\), expected \(2, 1\) or \(1,\)"),
    ],
)
def test_bad_joint_ranges_are_refused(low, message):
    scene, joint = _hinge_scene()
    with pytest.raises(ArticError, match="hinge joint 'pin': " + message):
        scene.set_joint_ranges(joint, low, [1.0])


def test_range_bounds_beyond_float32_mean_an_open_side():
    """A range bound of 1e39 cannot be a float32; like inf it leaves that side open (no overflow warning), while
    1e16, which float32 holds, is kept."""
    scene, joint = _hinge_scene()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scene.set_joint_ranges(joint, [-1e39], [1e16])
    low, high = scene.get_joint_ranges(joint)
    assert np.all(low == -np.inf) and np.all(high == np.float32(1e16))


@pytest.mark.parametrize(
    "setter",
    [lambda s, j, v: s.set_joint_locked(j, v), lambda s, j, v: s.set_joint_enabled(j, v)],
    ids=["locked", "enabled"],
)
@pytest.mark.parametrize(
    "value, message",
    [
        ([1, 0], "got dtype int64"),
        ([[1.0], [0.0]], "got dtype float64"),
        ("yes", "got dtype <U3"),
        ([[True], [True, False]], "cannot be read as an array"),
        (np.ones((3, 1), bool), r"has shape \(3, 1\)"),
        (np.ones((E, 2), bool), r"has shape \(2, 2\)"),
    ],
)
def test_locks_and_enabled_must_be_booleans_of_the_right_shape(setter, value, message):
    """Locks and enabled flags take booleans only (0/1 integers, floats and strings are refused, and a ragged list
    raises an ArticError rather than NumPy's ValueError) in the documented shapes; the refused call changes
    nothing."""
    scene, joint = _hinge_scene()
    with pytest.raises(ArticError, match=r"hinge joint 'pin': (locks|enabled) .*" + message):
        setter(scene, joint, value)
    assert not scene.get_joint_locked(joint).any() and scene.get_joint_enabled(joint).all()


def test_locks_and_enabled_accept_their_documented_shapes():
    scene, joint = _hinge_scene()
    scene.set_joint_locked(joint, [True])  # (m,): every env
    assert scene.get_joint_locked(joint).all()
    scene.set_joint_locked(joint, [[False], [True]])
    assert scene.get_joint_locked(joint)[:, 0].tolist() == [False, True]
    scene.set_joint_enabled(joint, False)  # one bool: every env
    assert not scene.get_joint_enabled(joint).any()
    scene.set_joint_enabled(joint, np.array([True, False]))
    assert scene.get_joint_enabled(joint).tolist() == [True, False]


def test_description_drive_target_beyond_float32_range_is_refused():
    """A body joint's drive target of 1e20 is refused when it is set (before, it was stored and only the scene's
    per-env check would have caught it, after the description had changed)."""
    _scene, joint = _hinge_scene()
    with pytest.raises(ArticError, match=r"hinge joint 'pin': drive target 1e\+20 is beyond \+-1e\+15"):
        joint.set_drive_target(0, 1e20)
    assert joint.get_drive_target(0) == 0.0


# -- 10. scene settings after construction ----------------------------------------------------------------------


def _falling_ball_z(scene, body, steps=10, dt=0.01):
    z0 = scene.get_actor_pose(body)[:, 2].copy()
    for _ in range(steps):
        scene.step(dt)
    return scene.get_actor_pose(body)[:, 2] - z0


def test_assigning_gravity_changes_the_fall():
    """scene.gravity = ... after the first step (its launch is recorded) takes effect at the next step: a free ball
    falls 0.5 g t^2 (semi-implicit Euler: g dt^2 n(n+1)/2) under the new gravity, and rises under an upward one;
    inverse dynamics uses it too."""
    scene, body = _ball_scene()
    body.link.linear_damping = 0.0
    scene.step(0.01)  # records the launch with the old gravity
    scene.set_actor_velocity(body, np.zeros(6))
    scene.gravity = (0.0, 0.0, -2.0)
    assert scene.gravity == (0.0, 0.0, -2.0)
    dz = _falling_ball_z(scene, body)
    np.testing.assert_allclose(dz, -2.0 * 0.01**2 * 55, rtol=1e-4)
    scene.set_actor_velocity(body, np.zeros(6))
    scene.gravity = [0.0, 0.0, 5.0]
    np.testing.assert_allclose(_falling_ball_z(scene, body), 5.0 * 0.01**2 * 55, rtol=1e-4)
    cache = body.articulation.create_cache()
    body.articulation.compute_gravity_compensation(cache)
    np.testing.assert_allclose(cache.gravity_compensation_force[:, 2], -5.0 * body.link.mass, rtol=1e-5)


def test_assigning_gravity_wakes_a_sleeping_body():
    """A body asleep under zero gravity starts to fall when gravity is switched on (PxScene::setGravity would leave
    it asleep: artic wakes every env, so the new gravity is never silently ignored)."""
    body = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "ball")
    body.attach_shape(Sphere(0.1))
    body.update_mass_and_inertia(1000.0)
    scene = artic.Scene(E, gravity=(0.0, 0.0, 0.0))
    scene.add_actor(body)
    for _ in range(60):  # at rest for longer than the wake counter (0.4 s): asleep
        scene.step(0.01)
    assert scene.view(body.articulation).is_sleeping().all()
    scene.gravity = (0.0, 0.0, -9.81)
    assert np.all(_falling_ball_z(scene, body) < -0.004)


@pytest.mark.parametrize(
    "gravity, message",
    [
        ((0.0, 0.0, -1e38), r"gravity .* is beyond \+-1e\+15 m/s\^2"),
        ("down", "gravity must be 3 finite numbers"),
        ((0.0, -9.81), "gravity must be 3 finite numbers"),
    ],
)
def test_assigning_bad_gravity_is_refused_and_keeps_the_old(gravity, message):
    scene, _ = _ball_scene()
    with pytest.raises(ArticError, match=message):
        scene.gravity = gravity
    assert scene.gravity == (0.0, 0.0, -9.81)


@pytest.mark.parametrize(
    "name, value",
    [
        ("num_envs", 4),
        ("device", "cpu"),
        ("contact_capacity", 8),
        ("friction_correlation_distance", 0.1),
        ("nan_policy", "raise"),
    ],
)
def test_settings_fixed_at_construction_refuse_assignment(name, value):
    """Settings the scene's arrays were built with cannot change afterwards: assigning one raises an ArticError
    saying so (before, it was stored and ignored, or left the scene inconsistent), and the setting is unchanged."""
    scene, _ = _ball_scene()
    before = getattr(scene, name)
    with pytest.raises(StateError, match=rf"scene: {name} is fixed at construction .*artic\.Scene\({name}=\.\.\.\)"):
        setattr(scene, name, value)
    assert getattr(scene, name) == before


@pytest.mark.parametrize(
    "name, how", [("articulations", "add_articulation"), ("statics", "add_actor"), ("joints", "add_joint")]
)
def test_the_scene_lists_cannot_be_assigned(name, how):
    """Replacing scene.articulations (or statics, joints) would leave the blocks simulating the old ones: it raises
    and names the methods to use."""
    scene, body = _ball_scene()
    with pytest.raises(StateError, match=rf"scene: {name} cannot be assigned; .*{how}"):
        setattr(scene, name, [])
    assert scene.articulations == [body.articulation]


def test_solver_type_can_be_assigned_and_is_validated():
    """solver_type is read at every step, so assigning it works; a string or an unknown value is refused."""
    scene, _ = _ball_scene()
    scene.solver_type = artic.SolverType.TGS
    assert scene.solver_type is artic.SolverType.TGS
    scene.step(0.01)
    for bad in ("TGS", 7, 1.0, True):
        with pytest.raises(ArticError, match="scene: unknown solver_type .*artic.SolverType.PGS, TGS or DIRECT"):
            scene.solver_type = bad
    assert scene.solver_type is artic.SolverType.TGS


# -- 11. memory of the first step --------------------------------------------------------------------------------


def test_first_step_that_does_not_fit_is_refused_with_the_memory_it_needs(monkeypatch):
    """The contact and solver arrays are sized at the first step (by the collision pairs and joint rows): when the
    device cannot hold them the step raises an ArticError naming the articulation and the memory, before Warp
    allocates anything; with the memory back the scene steps. The available memory is patched to 1 kB, far below
    the 2 envs x 512 contact slots x 3 rows x (2 N + 14) floats the ball's buffers need."""
    scene, _body = _ball_scene()
    scene.add_actor(artic.create_ground_plane())
    monkeypatch.setattr("artic.sim.memory.available_bytes", lambda device: (1024, "available memory"))
    with pytest.raises(
        ArticError,
        match=r"articulation\(s\) 'ball': the step's contact and solver arrays in 2 envs "
        r"needs at least [\d.]+ GiB \(\d+ bytes per env\) but the device 'cpu' has "
        r"0.0 GiB of available memory",
    ):
        scene.step(0.01)
    assert scene.time == 0.0
    monkeypatch.undo()
    scene.step(0.01)
    assert scene.time == 0.01


def test_step_memory_estimate_matches_the_arrays():
    """The estimate check_fits is given is the size of the arrays the step then allocates (contact buffer and the
    step's own arrays), measured from the Warp arrays themselves."""
    from artic.sim.builders.arrays import contact_bytes_per_env, detection_centers, step_bytes_per_env

    art = random_tree(np.random.default_rng(3), n_links=5, floating=True)
    scene = artic.Scene(3)
    scene.add_articulation(art)
    scene.add_actor(artic.create_ground_plane())
    scene.step(0.01)
    block = scene.view(art).block

    def nbytes(obj, skip=()):
        return sum(v.capacity for k, v in vars(obj).items() if isinstance(v, wp.array) and k not in skip)

    shared = (
        "gen_v",
        "gen_a",
        "gen_f",
        "link_fext",
        "mass_matrix",
        "joint_acceleration",
        "link_acceleration",
        "link_incoming_joint_force",
    )
    # grow: one flag per block; the angular rows are one-entry placeholders without torsional or rolling friction
    placeholders = ("ang_g", "ang_minv_g", "ang_target", "ang_impulse")
    contacts = nbytes(block.contact_points, ("grow",)) + nbytes(block.contact_rows, placeholders)
    centers = detection_centers(block.geometry)
    assert contacts == 3 * contact_bytes_per_env(block.geometry.capacity, block.model.gen_count, False, centers)
    # the TGS substeps' kinematics, less its one-entry inertia and link-origin placeholders
    substep = nbytes(block.substep_kin, ("link_inertia", "link_origin"))
    assert nbytes(block.step_data, shared) + substep == 3 * step_bytes_per_env(
        block.model, block.dof_rows.row_count, block.couplings.row_count
    )


def test_warp_failure_in_the_first_step_becomes_artic_error(monkeypatch):
    """If Warp's allocator fails anyway (the estimate is only what artic knows of), the first step raises an
    ArticError that names the articulation and says to use fewer envs."""
    scene, _ = _ball_scene()

    def fail(*args, **kwargs):
        raise RuntimeError("Failed to allocate 1234 bytes on device 'cpu'")

    monkeypatch.setattr("artic.sim.block.build_contact_points", fail)
    with pytest.raises(
        ArticError,
        match=r"articulation\(s\) 'ball': the arrays for 2 envs could not be allocated "
        r".*use fewer envs",
    ):
        scene.step(0.01)


def test_a_refused_rebuild_is_retried_at_every_step_until_it_fits(monkeypatch):
    """Adding a static actor after the first step rebuilds the contact buffers; if they do not fit, add_actor raises
    an ArticError, and so does every step (never a step with the old buffers, where the ground would not collide)
    until memory is back; then the ball lands on the ground."""
    scene, body = _ball_scene()
    scene.step(0.01)
    monkeypatch.setattr("artic.sim.memory.available_bytes", lambda device: (1024, "available memory"))
    with pytest.raises(ArticError, match=r"articulation\(s\) 'ball': the step's contact and solver arrays"):
        scene.add_actor(artic.create_ground_plane())
    with pytest.raises(ArticError, match=r"articulation\(s\) 'ball': the step's contact and solver arrays"):
        scene.step(0.01)
    assert scene.time == 0.01
    monkeypatch.undo()
    for _ in range(150):
        scene.step(0.01)
    np.testing.assert_allclose(scene.get_actor_pose(body)[:, 2], 0.1, atol=2e-3)  # resting on the ground


@pytest.mark.parametrize("bad", ["1", 1 + 2j, [1.0, 2.0], True])
def test_body_joint_range_bounds_must_be_numbers(bad):
    """set_coordinate_range refuses strings, complex numbers, arrays and booleans as bounds (float("1") used to
    accept a string), naming the joint and coordinate; None and +-inf still leave a side open."""
    body = artic.RigidDynamic(name="b")
    body.attach_shape(artic.Box((0.1, 0.1, 0.1)))
    joint = artic.HingeJoint(body, None, artic.Transform())
    with pytest.raises(artic.ValidationError, match=r"hinge joint '.*': coordinate 'theta' range low"):
        joint.set_coordinate_range(0, bad, 1.0)
    joint.set_coordinate_range(0, None, np.inf)
    assert joint.get_coordinate_range(0) == (-np.inf, np.inf)


def test_scene_accessors_refuse_objects_that_are_not_articulations_and_deleted_cache_fields_are_named():
    """scene.view / get_env_status / get_link_poses / get_contacts given a string name the expected types (they
    raised AttributeError); a cache field the user deleted is named when the cache is applied or filled; a string
    solver_type is named in the message."""
    art = random_tree(np.random.default_rng(0), n_links=3)
    scene = artic.Scene(2)
    scene.add_articulation(art)
    for call in (scene.view, scene.get_env_status, scene.get_link_poses, scene.get_contacts):
        with pytest.raises(artic.ValidationError, match="expected an artic.Articulation or RigidDynamic, got str"):
            call("x")
    cache = art.create_cache()
    del cache.joint_position
    with pytest.raises(artic.ValidationError, match=r"cache.joint_position was deleted"):
        art.apply_cache(cache, CacheFlag.POSITION)
    with pytest.raises(artic.ValidationError, match=r"cache.joint_position was deleted"):
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    with pytest.raises(artic.ValidationError, match="unknown solver_type 'PGS'"):
        artic.Scene(1, solver_type="PGS")
