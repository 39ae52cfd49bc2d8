"""Identities on random trees mixing every joint type, fixed and floating base, several envs at once:
RNEA = M a + bias, ABA inverts RNEA, kinetic energy, J v = link velocities, A_G v = centroidal momentum,
generalized external and gravity forces = -J^T F, and the centroidal bias against finite differences."""

import numpy as np
import pytest

import artic
from artic import CacheFlag
from artic.math.np_spatial import quat_exp, quat_mul, quat_to_matrix
from tests.support.models import random_state, random_tree

E = 3


def _setup(seed, floating, armature=True, kinds=None, n_links=9):
    rng = np.random.default_rng(seed)
    kw = {} if kinds is None else {"kinds": kinds}
    art = random_tree(rng, n_links=n_links, floating=floating, armature=armature, **kw)
    if armature and floating:
        art.root_armature = 0.37  # MuJoCo's free-joint armature: inertia without weight (the gravity check below)
    scene = artic.Scene(E, gravity=(0.3, -0.5, -9.81))
    scene.add_articulation(art)
    cache = art.create_cache()
    random_state(rng, art, cache)
    art.apply_cache(
        cache, CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES
    )
    return rng, art, scene, cache


def _gen(cache, joint, root=None, floating=False):
    if not floating:
        return getattr(cache, joint).astype(float)
    return np.concatenate([getattr(cache, f) for f in root] + [getattr(cache, joint)], axis=1).astype(float)


def _velocity(cache, floating):
    return _gen(cache, "joint_velocity", ("root_linear_velocity", "root_angular_velocity"), floating)


def _tol(ref):
    return 2e-5 * max(1.0, np.abs(ref).max())


PARAMS = [(seed, floating) for seed in (1, 2, 3) for floating in (False, True)]


@pytest.mark.parametrize("seed, floating", PARAMS)
def test_mass_matrix_symmetric_positive_definite(seed, floating):
    """M(q) is symmetric and positive definite, of size n (fixed) or n + 6 (floating)."""
    _, art, _, cache = _setup(seed, floating)
    art.compute_mass_matrix(cache)
    m = cache.mass_matrix.astype(float)
    assert m.shape == (E, art.dof_count + 6 * floating, art.dof_count + 6 * floating)
    assert np.abs(m - m.transpose(0, 2, 1)).max() <= _tol(m)
    assert np.linalg.eigvalsh(m).min() > 0


@pytest.mark.parametrize("seed, floating", PARAMS)
def test_rnea_equals_mass_matrix_times_acceleration_plus_bias(seed, floating):
    """compute_joint_force(a) (RNEA without gravity) = M a + C(q, v) v, root entries included."""
    rng, art, _, cache = _setup(seed, floating)
    art.compute_mass_matrix(cache)
    art.compute_coriolis_compensation(cache)
    cache.joint_acceleration[:] = rng.uniform(-2, 2, cache.joint_acceleration.shape)
    cache.root_linear_acceleration[:] = rng.uniform(-2, 2, (E, 3))
    cache.root_angular_acceleration[:] = rng.uniform(-2, 2, (E, 3))
    art.compute_joint_force(cache)
    a = _gen(cache, "joint_acceleration", ("root_linear_acceleration", "root_angular_acceleration"), floating)
    tau = _gen(cache, "joint_force", ("root_force",), floating)
    expect = np.einsum("eij,ej->ei", cache.mass_matrix, a) + cache.coriolis_force
    assert np.abs(tau - expect).max() <= _tol(expect)


@pytest.mark.parametrize("seed, floating", PARAMS)
def test_aba_inverts_rnea(seed, floating):
    """compute_joint_acceleration(compute_joint_force(a) + g(q)) = a: ABA and RNEA are inverse maps."""
    rng, art, _, cache = _setup(seed, floating)
    a = rng.uniform(-2, 2, cache.joint_acceleration.shape)
    ra = rng.uniform(-2, 2, (E, 6))
    cache.joint_acceleration[:] = a
    cache.root_linear_acceleration[:] = ra[:, :3]
    cache.root_angular_acceleration[:] = ra[:, 3:]
    art.compute_joint_force(cache)
    art.compute_gravity_compensation(cache)
    off = 6 if floating else 0
    cache.joint_force += cache.gravity_compensation_force[:, off:]
    if floating:
        cache.root_force += cache.gravity_compensation_force[:, :off]
    cache.joint_acceleration[:] = 0.0
    art.compute_joint_acceleration(cache)
    assert np.abs(cache.joint_acceleration - a).max() <= 1e-3 * max(1, np.abs(a).max())
    if floating:
        got = np.concatenate([cache.root_linear_acceleration, cache.root_angular_acceleration], 1)
        assert np.abs(got - ra).max() <= 1e-3 * max(1, np.abs(ra).max())


def _link_world_inertias(art, scene):
    poses = scene.view(art).state.link_pose.numpy().astype(float)
    out = np.zeros(poses.shape[:2] + (3, 3))
    coms = np.zeros(poses.shape[:2] + (3,))
    masses = np.zeros(poses.shape[1])
    for i, name in enumerate(art.link_names):
        link = art.get_link(name)
        cm = link.cmass_local_pose
        masses[i] = link.mass
        for e in range(poses.shape[0]):
            r = quat_to_matrix(poses[e, i, 3:]) @ quat_to_matrix(cm.q)
            out[e, i] = r @ np.diag(link.inertia) @ r.T
            coms[e, i] = poses[e, i, :3] + quat_to_matrix(poses[e, i, 3:]) @ cm.p
    return masses, coms, out


@pytest.mark.parametrize("seed, floating", PARAMS)
def test_kinetic_energy(seed, floating):
    """1/2 v^T M v equals the sum over links of 1/2 (m |v_c|^2 + w^T I w) (no armature, which adds rotor energy)."""
    _, art, scene, cache = _setup(seed, floating, armature=False)
    art.compute_mass_matrix(cache)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    v = _velocity(cache, floating)
    ke_m = 0.5 * np.einsum("ei,eij,ej->e", v, cache.mass_matrix, v)
    masses, _, inertias = _link_world_inertias(art, scene)
    lv = cache.link_velocity.astype(float)
    ke_links = 0.5 * (
        np.einsum("l,eli,eli->e", masses, lv[..., :3], lv[..., :3])
        + np.einsum("eli,elij,elj->e", lv[..., 3:], inertias, lv[..., 3:])
    )
    assert ke_m == pytest.approx(ke_links, rel=1e-4)


@pytest.mark.parametrize("seed, floating", PARAMS)
def test_jacobian_maps_generalized_to_link_velocities(seed, floating):
    """J v equals the link COM velocities (linear, angular) reported through LINK_VELOCITY."""
    _, art, _, cache = _setup(seed, floating)
    rows, cols = art.compute_dense_jacobian(cache)
    assert (rows, cols) == (6 * (art.link_count - (0 if floating else 1)), art.dof_count + 6 * floating)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    jv = np.einsum("erc,ec->er", cache.dense_jacobian, _velocity(cache, floating))
    lv = cache.link_velocity[:, (0 if floating else 1) :].reshape(E, -1)
    assert np.abs(jv - lv).max() <= _tol(lv)


@pytest.mark.parametrize("seed", (1, 2, 3))
def test_centroidal_momentum_matrix(seed):
    """A_G v equals (sum m v_c, sum I w + m (c - G) x v_c) computed link by link about the articulation COM."""
    _, art, scene, cache = _setup(seed, True, armature=False)
    art.compute_centroidal_momentum_matrix(cache)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    h = np.einsum("erc,ec->er", cache.centroidal_momentum_matrix, _velocity(cache, True))
    masses, coms, inertias = _link_world_inertias(art, scene)
    g = np.einsum("l,eli->ei", masses, coms) / masses.sum()
    lv = cache.link_velocity.astype(float)
    p = np.einsum("l,eli->ei", masses, lv[..., :3])
    ang = np.einsum("elij,elj->ei", inertias, lv[..., 3:]) + np.einsum(
        "l,eli->ei", masses, np.cross(coms - g[:, None], lv[..., :3])
    )
    ref = np.concatenate([p, ang], 1)
    assert np.abs(h - ref).max() <= _tol(ref)
    assert art.compute_articulation_com() == pytest.approx(g, abs=1e-5)


def test_centroidal_bias_matches_finite_difference():
    """With zero generalized acceleration, d/dt (A_G v) = bias: central differences along the motion (root
    COM moving at constant velocity, root turning at constant angular velocity, joints at constant rates)."""
    _, art, _scene, cache = _setup(7, True, armature=False, kinds=("fix", "prismatic", "revolute"))
    art.compute_centroidal_momentum_matrix(cache)
    bias = cache.centroidal_momentum_bias.astype(float).copy()
    v = _velocity(cache, True)
    x0, q0 = cache.root_transform.astype(float).copy(), cache.joint_position.astype(float).copy()
    com_local = art.root.cmass_local_pose.p
    h = []
    dt = 2e-3
    for s in (-1.0, 1.0):
        for e in range(E):
            r0 = quat_to_matrix(x0[e, 3:])
            c = x0[e, :3] + r0 @ com_local + s * dt * v[e, :3]
            qr = quat_mul(quat_exp(s * dt * v[e, 3:6]), x0[e, 3:])
            cache.root_transform[e] = np.concatenate([c - quat_to_matrix(qr) @ com_local, qr])
        cache.joint_position[:] = q0 + s * dt * v[:, 6:]
        art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM)
        art.compute_centroidal_momentum_matrix(cache)
        h.append(np.einsum("erc,ec->er", cache.centroidal_momentum_matrix.astype(float), v))
    fd = (h[1] - h[0]) / (2 * dt)
    assert np.abs(fd - bias).max() <= 2e-2 * max(1.0, np.abs(bias).max())


@pytest.mark.parametrize("seed, floating", PARAMS)
def test_external_and_gravity_forces_are_minus_jacobian_transpose(seed, floating):
    """compute_generalized_external_force = -J^T F, and g(q) = -sum_i J_i^T (m_i g, 0)."""
    rng, art, scene, cache = _setup(seed, floating)
    art.compute_dense_jacobian(cache)
    first = 0 if floating else 1
    f = rng.uniform(-1, 1, cache.external_forces.shape)
    f[:, :first] = 0.0  # a fixed root's wrench goes to the world
    cache.external_forces[:] = f
    art.compute_generalized_external_force(cache)
    expect = -np.einsum("erc,er->ec", cache.dense_jacobian, f[:, first:].reshape(E, -1))
    got = _gen(cache, "joint_force", ("root_force",), floating)
    assert np.abs(got - expect).max() <= _tol(expect)
    art.compute_gravity_compensation(cache)
    masses = np.array([art.get_link(n).mass for n in art.link_names])
    wrench = np.zeros((E, art.link_count, 6))
    wrench[..., :3] = masses[None, :, None] * np.array(scene.gravity)
    expect_g = -np.einsum("erc,er->ec", cache.dense_jacobian, wrench[:, first:].reshape(E, -1))
    assert np.abs(cache.gravity_compensation_force - expect_g).max() <= _tol(expect_g)


def test_armature_adds_to_the_diagonal_only():
    """M with armature minus M after zeroing every armature (through the joints, in the scene) is
    diag(armature) on the joint dofs: artic's M includes armature, and description changes reach the device."""
    _, art, _, cache = _setup(11, True, armature=True)
    art.compute_mass_matrix(cache)
    with_armature = cache.mass_matrix.astype(float).copy()
    arm = []
    for name in art.link_names[1:]:
        joint = art.get_link(name).inbound_joint
        for ax in joint.dof_axes():
            arm.append(joint.get_armature(ax))
            joint.set_armature(ax, 0.0)
    assert max(arm) > 0
    art.compute_mass_matrix(cache)
    diff = with_armature - cache.mass_matrix
    assert diff == pytest.approx(np.broadcast_to(np.diag([0.0] * 6 + arm), diff.shape), abs=1e-5)


def test_root_armature_adds_mujocos_free_joint_inertia():
    """A floating root's root_armature a adds a J^T J to M's root block, J = [[1, -[r]x], [0, 1]] taking the root
    coordinates (COM velocity, angular velocity) to the root frame origin's velocity and the angular velocity (r =
    origin - COM): MuJoCo's a on its free joint's six qvel, whose angular part is in body axes (a rotation leaves a 1
    unchanged). Nothing else in M moves, and gravity compensation does not (it has no weight)."""
    _, art, _, cache = _setup(12, True, armature=True)
    assert art.root_armature == 0.37
    art.compute_mass_matrix(cache)
    art.compute_gravity_compensation(cache)
    with_armature = cache.mass_matrix.astype(float).copy()
    gravity_with = cache.gravity_compensation_force.astype(float).copy()
    art.root_armature = 0.0
    art.compute_mass_matrix(cache)
    art.compute_gravity_compensation(cache)
    root = art.get_link(art.link_names[0])
    for e in range(E):
        pose = cache.root_transform[e].astype(float)
        rot = quat_to_matrix(pose[3:7])
        r = -rot @ np.asarray(root.cmass_local_pose.p, float)  # origin - COM, world axes
        jac = np.eye(6)
        jac[:3, 3:] = -np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        expect = np.zeros_like(with_armature[e])
        expect[:6, :6] = 0.37 * jac.T @ jac
        assert with_armature[e] - cache.mass_matrix[e] == pytest.approx(expect, abs=2e-5)
    assert np.abs(r).max() > 0.01  # the COM is off the origin: the coupling terms are tested
    assert gravity_with == pytest.approx(cache.gravity_compensation_force.astype(float), abs=1e-5)
