"""The articulation cache: PhysX flag values, apply/copy round trips, link poses and velocities updated on apply,
env independence, and clear errors on bad input (wrong shapes, NaN, foreign caches, out-of-range positions)."""

import numpy as np
import pytest

import artic
from artic import ArticError, CacheFlag, Transform
from artic.math.np_spatial import quat_to_matrix
from tests.support.models import random_state, random_tree

E = 3


def _scene(seed=0, floating=True):
    rng = np.random.default_rng(seed)
    art = random_tree(rng, n_links=7, floating=floating)
    scene = artic.Scene(E)
    scene.add_articulation(art)
    return rng, art, scene, art.create_cache()


def test_flag_values_are_physx_bits():
    """Bit values of physx-notes 6.1; ALL excludes FORCE, incoming joint force, targets and link force/torque."""
    expected = {
        "VELOCITY": 1,
        "ACCELERATION": 2,
        "POSITION": 4,
        "FORCE": 8,
        "LINK_VELOCITY": 16,
        "LINK_ACCELERATION": 32,
        "ROOT_TRANSFORM": 64,
        "ROOT_VELOCITIES": 128,
        "LINK_INCOMING_JOINT_FORCE": 1024,
        "JOINT_TARGET_POSITIONS": 2048,
        "JOINT_TARGET_VELOCITIES": 4096,
        "LINK_FORCE": 8192,
        "LINK_TORQUE": 16384,
    }
    assert {k: int(CacheFlag[k]) for k in expected} == expected
    excluded = (
        CacheFlag.FORCE
        | CacheFlag.LINK_INCOMING_JOINT_FORCE
        | CacheFlag.JOINT_TARGET_POSITIONS
        | CacheFlag.JOINT_TARGET_VELOCITIES
        | CacheFlag.LINK_FORCE
        | CacheFlag.LINK_TORQUE
    )
    assert int(CacheFlag.ALL) == 1 | 2 | 4 | 16 | 32 | 64 | 128 and not CacheFlag.ALL & excluded


def test_apply_then_copy_round_trip():
    """Values applied per env come back unchanged from copy_internal_state_to_cache."""
    rng, art, _, cache = _scene()
    random_state(rng, art, cache)
    cache.joint_force[:] = rng.normal(size=cache.joint_force.shape)
    cache.joint_target_positions[:] = rng.normal(size=cache.joint_force.shape)
    cache.joint_target_velocities[:] = rng.normal(size=cache.joint_force.shape)
    cache.link_force[:] = rng.normal(size=cache.link_force.shape)
    cache.link_torque[:] = rng.normal(size=cache.link_torque.shape)
    flags = (
        CacheFlag.ALL
        | CacheFlag.FORCE
        | CacheFlag.JOINT_TARGET_POSITIONS
        | CacheFlag.JOINT_TARGET_VELOCITIES
        | CacheFlag.LINK_FORCE
        | CacheFlag.LINK_TORQUE
    )
    art.apply_cache(cache, flags)
    fields = [
        "joint_position",
        "joint_velocity",
        "joint_force",
        "joint_target_positions",
        "joint_target_velocities",
        "root_transform",
        "root_linear_velocity",
        "root_angular_velocity",
        "link_force",
        "link_torque",
    ]
    before = {f: getattr(cache, f).copy() for f in fields}
    out = art.create_cache()
    art.copy_internal_state_to_cache(out, flags)
    for f in fields:  # the root quaternion is renormalized on apply, the rest is copied bit for bit
        assert getattr(out, f) == pytest.approx(before[f], abs=1e-6 if f == "root_transform" else 0), f


def test_apply_position_updates_link_poses():
    """Applying positions and the root pose recomputes link poses: X_child = X_parent * parent_pose * J(q) *
    child_pose^-1, checked with a float64 host computation for a revolute-only chain."""
    art = artic.Articulation("chain")
    root = art.create_link(None, Transform((0.5, -1.0, 2.0)), "root")
    rng = np.random.default_rng(3)
    parent = root
    from tests.support.models import random_pose

    for i in range(4):
        link = art.create_link(parent, None, f"l{i}")
        j = link.inbound_joint
        j.parent_pose, j.child_pose = random_pose(rng), random_pose(rng)
        j.set_joint_type(artic.JointType.REVOLUTE)
        j.set_motion(artic.Axis(i % 3), artic.Motion.FREE)
        parent = link
    scene = artic.Scene(E)
    scene.add_articulation(art)
    cache = art.create_cache()
    random_state(rng, art, cache)
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM)
    poses = scene.view(art).state.link_pose.numpy()
    from artic.math.np_spatial import quat_from_axis_angle

    for e in range(E):
        x = Transform.from_array(cache.root_transform[e])
        assert poses[e, 0] == pytest.approx(x.as_array(), abs=1e-6)
        for i in range(4):
            j = art.get_joint(f"l{i}")
            axis = np.eye(3)[i % 3]
            jx = Transform(q=quat_from_axis_angle(axis, float(cache.joint_position[e, i])))
            x = x * j.parent_pose * jx * j.child_pose.inverse()
            assert poses[e, i + 1, :3] == pytest.approx(x.p, abs=1e-5)
            assert quat_to_matrix(poses[e, i + 1, 3:]) == pytest.approx(quat_to_matrix(x.q), abs=1e-5)


def test_apply_velocity_updates_link_velocities_and_envs_are_independent():
    """Link velocities follow applied joint/root velocities; each env's result equals a one-env scene's."""
    rng, art, _, cache = _scene(5)
    random_state(rng, art, cache)
    art.apply_cache(cache, CacheFlag.ALL)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    art.compute_mass_matrix(cache)
    assert not np.allclose(cache.link_velocity[0], cache.link_velocity[1])
    single = random_tree(np.random.default_rng(5), n_links=7, floating=True)
    artic.Scene(1).add_articulation(single)
    c1 = single.create_cache()
    for e in range(E):
        for f in (
            "joint_position",
            "joint_velocity",
            "root_transform",
            "root_linear_velocity",
            "root_angular_velocity",
        ):
            getattr(c1, f)[0] = getattr(cache, f)[e]
        single.apply_cache(c1, CacheFlag.ALL)
        single.copy_internal_state_to_cache(c1, CacheFlag.LINK_VELOCITY)
        single.compute_mass_matrix(c1)
        assert np.array_equal(c1.link_velocity[0], cache.link_velocity[e])
        assert np.array_equal(c1.mass_matrix[0], cache.mass_matrix[e])


@pytest.mark.parametrize(
    "field, value, flag, message",
    [
        ("joint_position", np.nan, CacheFlag.POSITION, r"cache.joint_position has a non-finite value at index"),
        ("joint_target_positions", np.inf, CacheFlag.JOINT_TARGET_POSITIONS, "non-finite"),
        ("joint_velocity", np.zeros((E, 1)), CacheFlag.VELOCITY, r"has shape \(3, 1\), expected"),
        ("root_transform", np.zeros((E, 7)), CacheFlag.ROOT_TRANSFORM, "must be unit length"),
    ],
)
def test_bad_cache_input(field, value, flag, message):
    _, art, _, cache = _scene()
    if np.ndim(value) == 0:
        getattr(cache, field)[0, 0] = value
    else:
        setattr(cache, field, value)
    with pytest.raises(ArticError, match=message):
        art.apply_cache(cache, flag)


def test_revolute_positions_must_lie_in_range_and_caches_are_not_shared():
    rng = np.random.default_rng(0)
    art = random_tree(rng, n_links=3, floating=False, kinds=("revolute",))
    artic.Scene(1).add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[:] = 7.0
    with pytest.raises(ArticError, match=r"REVOLUTE joint positions must lie in \[-2pi, 2pi\]"):
        art.apply_cache(cache, CacheFlag.POSITION)
    _, _other, _, other_cache = _scene()
    with pytest.raises(ArticError, match="not created by this articulation"):
        art.compute_mass_matrix(other_cache)


def test_not_in_scene_and_centroidal_needs_floating_base():
    art = random_tree(np.random.default_rng(0), n_links=3)
    with pytest.raises(ArticError, match="not in a scene"):
        art.create_cache()
    artic.Scene(1).add_articulation(art)
    with pytest.raises(ArticError, match="floating-base articulations only"):
        art.compute_centroidal_momentum_matrix(art.create_cache())


def test_description_state_and_targets_reach_every_env():
    """Joint setters on a description in a scene write every env (state and drive targets)."""
    rng = np.random.default_rng(0)
    art = random_tree(rng, n_links=3, floating=False, kinds=("revolute",))
    artic.Scene(E).add_articulation(art)
    j = art.get_joint("l1")
    ax = j.dof_axes()[0]
    j.set_joint_position(ax, 0.7)
    j.set_drive_target(ax, -0.2)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.JOINT_TARGET_POSITIONS)
    k = art.dof_names.index("l1")
    assert np.all(cache.joint_position[:, k] == np.float32(0.7))
    assert np.all(cache.joint_target_positions[:, k] == np.float32(-0.2))


def test_description_setters_keep_per_env_values_of_other_dofs():
    """A joint setter in a scene writes its own dof's column in every env and nothing else: per-env positions,
    velocities and targets set through the cache on the other dofs (and on the same dof's other field) stay, and
    set_root_global_pose moves every env's root without touching joint positions."""
    rng, art, _, cache = _scene(seed=3)
    n = art.dof_count
    flags = (
        CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.JOINT_TARGET_POSITIONS | CacheFlag.JOINT_TARGET_VELOCITIES
    )
    cache.joint_position[:] = rng.uniform(-0.5, 0.5, (E, n))
    cache.joint_velocity[:] = rng.uniform(-1, 1, (E, n))
    cache.joint_target_positions[:] = rng.uniform(-0.5, 0.5, (E, n))
    cache.joint_target_velocities[:] = rng.uniform(-1, 1, (E, n))
    art.apply_cache(cache, flags)
    before = {f: getattr(cache, f).copy() for f in ("joint_position", "joint_velocity", "joint_target_positions")}
    before["joint_target_velocities"] = cache.joint_target_velocities.copy()
    joint, axis = art.dof_list()[1]
    joint.set_drive_target(axis, 0.25)
    joint.set_joint_position(axis, -0.125)
    art.set_root_global_pose(Transform((0.0, 0.0, 2.0)))
    after = art.create_cache()
    art.copy_internal_state_to_cache(after, flags | CacheFlag.ROOT_TRANSFORM)
    others = [k for k in range(n) if k != 1]
    for field, value in before.items():
        np.testing.assert_array_equal(getattr(after, field)[:, others], value[:, others], err_msg=field)
    assert np.all(after.joint_target_positions[:, 1] == np.float32(0.25))
    assert np.all(after.joint_position[:, 1] == np.float32(-0.125))
    np.testing.assert_array_equal(after.joint_velocity[:, 1], before["joint_velocity"][:, 1])
    np.testing.assert_array_equal(after.joint_target_velocities[:, 1], before["joint_target_velocities"][:, 1])
    np.testing.assert_allclose(after.root_transform[:, :3], np.tile([0.0, 0.0, 2.0], (E, 1)))


def test_singular_tree_is_reported_not_propagated():
    """A free dof carrying a massless, inertia-less link makes M singular: compute_joint_acceleration raises an
    ArticError naming the articulation instead of returning NaN; armature on that dof makes it well posed."""
    art = artic.Articulation("singular")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    root = art.create_link(None, Transform(), "root")
    link = art.create_link(root, None, "ghost")
    link.inbound_joint.set_joint_type(artic.JointType.REVOLUTE)
    link.inbound_joint.set_motion(artic.Axis.TWIST, artic.Motion.FREE)
    artic.Scene(2).add_articulation(art)
    link.mass = 0.0  # after add_articulation, whose mass check would give the link a small mass and inertia
    link.inertia = (0.0, 0.0, 0.0)
    cache = art.create_cache()
    with pytest.raises(ArticError, match="singular.*not finite|not finite.*singular"):
        art.compute_joint_acceleration(cache)
    link.inbound_joint.set_armature(artic.Axis.TWIST, 0.5)
    cache.joint_force[:] = 1.0
    art.compute_joint_acceleration(cache)
    assert cache.joint_acceleration == pytest.approx(np.full((2, 1), 2.0))


def test_env_chunking_on_cpu_threads_changes_nothing():
    """Large batches run in env chunks on every CPU core (artic/core/parallel.py): the results equal a single-threaded
    run bit for bit, for the inverse-dynamics API and for the step."""
    from artic import SolverType
    from artic.core.parallel import get_cpu_threads, set_cpu_threads

    results = []
    previous = get_cpu_threads()
    try:
        for threads in (1, 2):
            set_cpu_threads(threads)
            rng = np.random.default_rng(3)
            art = random_tree(rng, n_links=6, floating=True)
            scene = artic.Scene(300, solver_type=SolverType.TGS)
            scene.add_articulation(art)
            cache = art.create_cache()
            random_state(rng, art, cache)
            art.apply_cache(cache, CacheFlag.ALL)
            art.compute_mass_matrix(cache)
            art.compute_joint_acceleration(cache)
            for _ in range(3):
                scene.step(1.0 / 60.0)
            art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
            results.append(
                [
                    cache.mass_matrix.copy(),
                    cache.joint_acceleration.copy(),
                    cache.joint_position.copy(),
                    cache.joint_velocity.copy(),
                ]
            )
    finally:
        set_cpu_threads(previous)
    for a, b in zip(*results, strict=True):
        assert np.array_equal(a, b)


def test_write_dof_columns_writes_those_columns_wakes_and_refuses_non_finite():
    """ArticulationView.write_dof_columns (MjcfControl's per-step path, without a cache round trip): only the given
    columns change, as apply_cache would write them; a sleeping env given a force wakes, one left alone sleeps on;
    a NaN or huge value is refused and changes nothing."""
    rng, art, scene, cache = _scene(floating=False)
    art.copy_internal_state_to_cache(cache, CacheFlag.FORCE | CacheFlag.JOINT_TARGET_POSITIONS)
    before = {"joint_force": cache.joint_force.copy(), "joint_target_positions": cache.joint_target_positions.copy()}
    view = scene.view(art)
    view.state.sleeping.assign(np.ones(E, np.int32))  # every env asleep
    idx = np.array([0, 2])
    forces = np.zeros((E, 2))
    forces[1] = (3.0, -4.0)  # env 1 only
    targets = rng.normal(size=(E, 1))
    view.write_dof_columns({"joint_force": (idx, forces), "joint_target_positions": (np.array([1]), targets)})
    art.copy_internal_state_to_cache(cache, CacheFlag.FORCE | CacheFlag.JOINT_TARGET_POSITIONS)
    expected_f = before["joint_force"].copy()
    expected_f[:, idx] = forces
    expected_t = before["joint_target_positions"].copy()
    expected_t[:, 1] = targets[:, 0]
    np.testing.assert_allclose(cache.joint_force, expected_f, rtol=1e-6)
    np.testing.assert_allclose(cache.joint_target_positions, expected_t, rtol=1e-6)
    # a target away from the position wakes every env here (random targets); forces alone would wake env 1 only
    assert not view.is_sleeping().any()
    view.state.sleeping.assign(np.ones(E, np.int32))
    view.write_dof_columns({"joint_force": (idx, forces)})
    assert view.is_sleeping().tolist() == [True, False, True]
    for bad in (np.nan, 1e20):
        with pytest.raises(ArticError, match="joint_force must be finite"):
            view.write_dof_columns({"joint_force": (idx, np.full((E, 2), bad))})
    art.copy_internal_state_to_cache(cache, CacheFlag.FORCE)
    np.testing.assert_allclose(cache.joint_force, expected_f, rtol=1e-6)
