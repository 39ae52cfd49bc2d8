"""The PhysX guide's worked inverse-dynamics examples ("Inverse Dynamics" section), with the guide's numbers:
a pendulum of mass 1 whose COM lies d = 1 from a pivot revolute about z (SWING2), inertia about the COM m d^2/3,
gravity 10 along -y."""

import numpy as np
import pytest

import artic
from artic import ArticulationFlag, Axis, CacheFlag, JointType, Motion, Transform

M, D, G = 1.0, 1.0, 10.0
I_PIVOT = D * D * M / 3.0 + D * D * M


def pendulum(upright=True, n_links=1, l1=1.0, root_pose=None):
    """A chain of pendulum links; `upright` puts the COM at +y at q = 0 (the guide's external-force and Jacobian
    examples), otherwise at -y (hanging, the gravity-compensation example)."""
    sign = 1.0 if upright else -1.0
    art = artic.Articulation("pendulum")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    parent = art.create_link(None, root_pose or Transform(), "base")
    for i in range(n_links):
        link = art.create_link(parent, None, f"link{i}")
        link.mass = M
        link.inertia = (M * D * D / 3.0, 1e-6, M * D * D / 3.0)
        link.cmass_local_pose = Transform((0.0, sign * D, 0.0))
        j = link.inbound_joint
        j.set_joint_type(JointType.REVOLUTE)
        j.set_motion(Axis.SWING2, Motion.FREE)
        if i > 0:
            j.parent_pose = Transform((0.0, sign * l1, 0.0))
        parent = link
    scene = artic.Scene(1, gravity=(0.0, -G, 0.0))
    scene.add_articulation(art)
    return art, art.create_cache()


def _set_positions(art, cache, q):
    cache.joint_position[:] = q
    art.apply_cache(cache, CacheFlag.POSITION)
    art.common_init()


def test_gravity_compensation_holding_torque():
    """Holding torque of the horizontal pendulum is m d g = 10 Nm; applied as joint force it gives zero joint
    acceleration (the guide's 'post-simulation velocity is zero')."""
    art, cache = pendulum(upright=False)
    _set_positions(art, cache, np.pi / 2)
    art.compute_gravity_compensation(cache)
    assert cache.gravity_compensation_force[0, 0] == pytest.approx(M * D * G, rel=1e-6)
    cache.joint_velocity[:] = 0.0
    cache.joint_force[:] = cache.gravity_compensation_force
    art.compute_joint_acceleration(cache)
    assert cache.joint_acceleration[0, 0] == pytest.approx(0.0, abs=1e-5)


def test_double_pendulum_centrifugal_torque():
    """Joint 0 at 1 rad/s, joint 1 at pi/2: the centrifugal compensation of joint 1 is m l1 d w^2 (planar double
    pendulum closed form, C_2 = m2 l1 lc2 sin(q2) q1dot^2) and joint 0's is 0; joint forces = Coriolis + gravity
    compensation leave both joint accelerations at zero."""
    l1 = 1.5
    art, cache = pendulum(upright=True, n_links=2, l1=l1)
    _set_positions(art, cache, [0.0, np.pi / 2])
    cache.joint_velocity[:] = [1.0, 0.0]
    art.compute_coriolis_compensation(cache)
    assert cache.coriolis_force[0] == pytest.approx([0.0, M * l1 * D * 1.0], abs=1e-5)
    art.compute_gravity_compensation(cache)
    cache.joint_force[:] = cache.coriolis_force + cache.gravity_compensation_force
    art.compute_joint_acceleration(cache)
    assert cache.joint_acceleration[0] == pytest.approx([0.0, 0.0], abs=1e-5)


def test_generalized_external_force():
    """Force (1, 0, 0) and torque (0, 0, 1) at the COM of the pendulum at pi/4: counter torque cos(pi/4) d - 1."""
    art, cache = pendulum(upright=True)
    _set_positions(art, cache, np.pi / 4)
    cache.external_forces[0, 1] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    art.compute_generalized_external_force(cache)
    assert cache.joint_force[0, 0] == pytest.approx(np.cos(np.pi / 4) * D * 1.0 - 1.0, abs=1e-6)


def test_joint_acceleration_cases_1_and_2():
    """Case 1: horizontal, no torque: q'' = m g d / I_pivot > 0. Case 2: a torque of -m g d cancels it."""
    art, cache = pendulum(upright=True)
    _set_positions(art, cache, np.pi / 2)
    cache.joint_force[:] = 0.0
    art.compute_joint_acceleration(cache)
    assert cache.joint_acceleration[0, 0] == pytest.approx(G * M * D / I_PIVOT, rel=1e-6)
    cache.joint_force[:] = -G * M * D
    art.compute_joint_acceleration(cache)
    assert cache.joint_acceleration[0, 0] == pytest.approx(0.0, abs=1e-5)


def test_joint_force_from_acceleration():
    """A target acceleration of 1 rad/s^2 needs torque I_pivot (gravity not considered)."""
    art, cache = pendulum(upright=True)
    _set_positions(art, cache, 0.3)
    cache.joint_acceleration[:] = 1.0
    art.compute_joint_force(cache)
    assert cache.joint_force[0, 0] == pytest.approx(I_PIVOT, rel=1e-6)


def test_articulation_com_world_and_root_frame():
    """The COM of the pendulum at pi/4 is d (-sin, cos, 0) from the pivot; root_frame=True gives it in the root
    link's frame (here the root is moved and turned, so the two differ)."""
    root = Transform((1.0, 2.0, 3.0), (0.0, 0.0, np.sin(0.25), np.cos(0.25)))
    art, cache = pendulum(upright=True, root_pose=root)
    cache.root_transform[:] = root.as_array()
    art.apply_cache(cache, CacheFlag.ROOT_TRANSFORM)
    _set_positions(art, cache, np.pi / 4)
    # the root keeps PhysX's default mass 1 with its COM at its origin, so it weighs in
    local = np.array([-D * np.sin(np.pi / 4), D * np.cos(np.pi / 4), 0.0])
    expected_root = (M * local + 1.0 * np.zeros(3)) / (M + 1.0)
    assert art.compute_articulation_com(root_frame=True)[0] == pytest.approx(expected_root, abs=1e-6)
    assert art.compute_articulation_com()[0] == pytest.approx(root.transform_point(expected_root), abs=1e-6)


def test_dense_jacobian_of_the_pendulum():
    """At pi/2 the pendulum points along -x: 6 rows, 1 column, (vy, wz) = (-d, 1), every other entry 0."""
    art, cache = pendulum(upright=True)
    _set_positions(art, cache, np.pi / 2)
    rows, cols = art.compute_dense_jacobian(cache)
    assert (rows, cols) == (6, 1)
    assert cache.dense_jacobian[0, :, 0] == pytest.approx([0.0, -D, 0.0, 0.0, 0.0, 1.0], abs=1e-6)


def test_mass_matrix_of_the_pendulum():
    """M = I_pivot for one link; adding armature a makes it I_pivot + a (artic includes armature in M)."""
    art, cache = pendulum(upright=True)
    art.compute_mass_matrix(cache)
    assert cache.mass_matrix[0, 0, 0] == pytest.approx(I_PIVOT, rel=1e-6)
    art.get_joint("link0").set_armature(Axis.SWING2, 0.25)
    art.compute_mass_matrix(cache)
    assert cache.mass_matrix[0, 0, 0] == pytest.approx(I_PIVOT + 0.25, rel=1e-6)
