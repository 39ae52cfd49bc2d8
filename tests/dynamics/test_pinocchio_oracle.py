"""Pinocchio as oracle on real robots from example-robot-data at random configurations (dofs matched by name):
M, g, C(q, v) v, link Jacobians and ABA agree within 1e-4 relative. Floating bases (solo12) are compared through
the exact map between artic's root coordinates (COM linear, angular; world) and Pinocchio's free-flyer (body-frame
twist of the root frame): v_pin = T v, so M = T^T M_pin T and the bias gains T^T M_pin T-dot v."""

import numpy as np
import pytest

import artic
from artic import CacheFlag
from artic.math.np_spatial import quat_to_matrix
from tests.support.models import ROBOTS, random_rotation, robot_path
from tests.support.pinocchio_oracle import PinMap, pinocchio_model

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.oracle
E = 4
TOL = 1e-4


def rel_err(a, b):
    return np.abs(np.asarray(a, float) - b).max() / max(1e-9, np.abs(b).max())


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    name = request.param
    path, floating = robot_path(name), ROBOTS[name][1]
    art = artic.load_urdf(path, fix_base=not floating)
    artic.Scene(E).add_articulation(art)
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    cache = art.create_cache()
    n = art.dof_count
    for dof, dname in enumerate(art.dof_names):
        joint = art.get_joint(dname)
        lim = joint.get_limit_params(joint.dof_axes()[0])
        lo, hi = (lim.low, lim.high) if lim.low < lim.high else (-np.pi, np.pi)
        cache.joint_position[:, dof] = rng.uniform(lo, hi, E)
    cache.joint_velocity[:] = rng.uniform(-2, 2, (E, n))
    cache.joint_force[:] = rng.uniform(-5, 5, (E, n))
    if floating:
        cache.root_transform[:] = np.concatenate(
            [rng.uniform(-1, 1, (E, 3)), [random_rotation(rng) for _ in range(E)]], 1
        )
        cache.root_linear_velocity[:] = rng.uniform(-1, 1, (E, 3))
        cache.root_angular_velocity[:] = rng.uniform(-1, 1, (E, 3))
        cache.root_force[:] = rng.uniform(-5, 5, (E, 6))
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM)
    art.compute_mass_matrix(cache)
    art.compute_gravity_compensation(cache)
    art.compute_coriolis_compensation(cache)
    art.compute_joint_acceleration(cache)
    art.compute_dense_jacobian(cache)
    pm = pinocchio_model(path, floating)
    return name, art, cache, pm, PinMap(pm, art), floating


def _pin_reference(art, cache, pm, mp, floating, e):
    pd = pm.createData()
    xr = cache.root_transform[e].astype(float)
    q = mp.q(cache.joint_position[e].astype(float), xr)
    joint_v = cache.joint_velocity[e].astype(float)
    root_v = [cache.root_linear_velocity[e], cache.root_angular_velocity[e]]
    v = np.concatenate(root_v + [joint_v]) if floating else joint_v
    t = mp.t_matrix(xr, art.root.cmass_local_pose.p)
    vp = t @ v
    pin.crba(pm, pd, q)
    m_pin = np.triu(pd.M) + np.triu(pd.M, 1).T
    g_pin = pin.computeGeneralizedGravity(pm, pd, q)
    c_pin = pin.rnea(pm, pd, q, vp, np.zeros(pm.nv)) - g_pin + m_pin @ mp.tdot_v(xr, v)
    return q, v, t, t.T @ m_pin @ t, t.T @ g_pin, t.T @ c_pin


def test_mass_matrix_gravity_coriolis_and_aba(robot):
    """M, g, C v match Pinocchio; ABA's accelerations match M^-1 (tau - C v - g) of Pinocchio's terms."""
    name, art, cache, pm, mp, floating = robot
    for e in range(E):
        _, _v, _, m, g, c = _pin_reference(art, cache, pm, mp, floating, e)
        assert rel_err(cache.mass_matrix[e], m) < TOL, name
        assert rel_err(cache.gravity_compensation_force[e], g) < TOL, name
        assert rel_err(cache.coriolis_force[e], c) < TOL, name
        tau = np.concatenate([cache.root_force[e], cache.joint_force[e]]) if floating else cache.joint_force[e]
        acc = np.linalg.solve(m, tau - c - g)
        got = (
            np.concatenate(
                [cache.root_linear_acceleration[e], cache.root_angular_acceleration[e], cache.joint_acceleration[e]]
            )
            if floating
            else cache.joint_acceleration[e]
        )
        assert rel_err(got, acc) < TOL, name


def test_link_jacobians(robot):
    """Every link's 6 Jacobian rows match Pinocchio's frame Jacobian (LOCAL_WORLD_ALIGNED, at the link frame),
    moved to the link COM and mapped to artic's generalized velocity."""
    name, art, cache, pm, mp, floating = robot
    pd = pm.createData()
    first = 0 if floating else 1
    for e in range(E):
        q, _, t, _, _, _ = _pin_reference(art, cache, pm, mp, floating, e)
        pin.computeJointJacobians(pm, pd, q)
        pin.updateFramePlacements(pm, pd)
        checked = 0
        for i, lname in enumerate(art.link_names[first:], start=first):
            if not pm.existFrame(lname):
                continue
            fid = pm.getFrameId(lname)
            j_pin = pin.getFrameJacobian(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) @ t
            r = pd.oMf[fid].rotation
            arm = r @ art.get_link(lname).cmass_local_pose.p
            j_com = j_pin.copy()
            j_com[:3] -= np.cross(arm, j_pin[3:].T).T  # v_com = v_origin + w x arm
            rows = slice(6 * (i - first), 6 * (i - first) + 6)
            assert rel_err(cache.dense_jacobian[e, rows], j_com) < TOL, (name, lname)
            checked += 1
        assert checked >= art.link_count - 2, name


def test_link_poses(robot):
    """Forward kinematics: every link frame's world pose matches Pinocchio's frame placement."""
    name, art, cache, pm, mp, _floating = robot
    pd = pm.createData()
    poses = art._scene.view(art).state.link_pose.numpy()
    for e in range(E):
        q = mp.q(cache.joint_position[e].astype(float), cache.root_transform[e].astype(float))
        pin.framesForwardKinematics(pm, pd, q)
        for i, lname in enumerate(art.link_names):
            if pm.existFrame(lname):
                oMf = pd.oMf[pm.getFrameId(lname)]
                assert poses[e, i, :3] == pytest.approx(oMf.translation, abs=2e-5), (name, lname)
                assert quat_to_matrix(poses[e, i, 3:]) == pytest.approx(oMf.rotation, abs=2e-5), (name, lname)
