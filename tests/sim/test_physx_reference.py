"""PhysX 5.8 reference numbers of physx-notes 8.1-8.3 (drives, max force, armature, free and damped pendulum,
limit stop, velocity limit, friction), to float32 precision."""

import numpy as np
import pytest

from artic import DriveType, SolverType
from tests.support.scenes import prismatic_drive, rod_pendulum, run

DT = 1.0 / 60.0
F32 = {"rel": 2e-6, "abs": 2e-6}


@pytest.mark.parametrize("iters", [(4, 1), (1, 0)])
def test_force_drive_pgs(iters):
    """8.1 PGS (4,1) and identically (1,0): steps 1, 2, 10."""
    q, qd = run(*prismatic_drive(SolverType.PGS, iters), 10)
    assert q[[0, 1, 9], 0, 0] == pytest.approx([0.0126582, 0.0366928, 0.4828290], **F32)
    assert qd[[0, 1, 9], 0, 0] == pytest.approx([0.7594936, 1.4420764, 4.1335545], **F32)


def test_force_drive_tgs():
    """8.1 TGS (4,1): four implicit-Euler substeps; the velocity iteration changes nothing (frozen drive)."""
    q, qd = run(*prismatic_drive(SolverType.TGS, (4, 1)), 10)
    assert q[[0, 1, 9], 0, 0] == pytest.approx([0.0083070, 0.0289738, 0.4811885], **F32)
    assert qd[[0, 1, 9], 0, 0] == pytest.approx([0.7883175, 1.5013934, 4.3642993], **F32)
    q0, qd0 = run(*prismatic_drive(SolverType.TGS, (4, 0)), 10)
    assert np.array_equal(q0, q) and np.array_equal(qd0, qd)


def test_tgs_one_iteration_equals_pgs():
    """8.1: TGS (1,0) equals PGS."""
    qt, qdt = run(*prismatic_drive(SolverType.TGS, (1, 0)), 10)
    qp, qdp = run(*prismatic_drive(SolverType.PGS, (1, 0)), 10)
    assert qt == pytest.approx(qp, abs=1e-6) and qdt == pytest.approx(qdp, abs=1e-6)


def test_acceleration_drive():
    """8.1 eACCELERATION, PGS (4,1): step 1 q = 0.0232558, qd = 1.3953488 whatever the mass; step 10."""
    for mass in (2.0, 0.3, 40.0):
        q, qd = run(*prismatic_drive(drive_type=DriveType.ACCELERATION, mass=mass), 10)
        assert q[[0, 9], 0, 0] == pytest.approx([0.0232558, 0.6694283], **F32)
        assert qd[[0, 9], 0, 0] == pytest.approx([1.3953488, 4.6061349], **F32)


def test_armature():
    """8.1: armature 3 on the mass-2 joint (effective mass 5): PGS step 1 q = 0.0053476, qd = 0.3208556."""
    q, qd = run(*prismatic_drive(armature=3.0), 1)
    assert (q[0, 0, 0], qd[0, 0, 0]) == pytest.approx((0.0053476, 0.3208556), **F32)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_max_force_as_impulse_and_as_force(solver):
    """8.1: max_force 0.01 as an impulse, or 0.6 as a force (flag on), both give +0.005 m/s per step (m = 2)."""
    for max_force, forces in ((0.01, False), (0.6, True)):
        _, qd = run(*prismatic_drive(solver, max_force=max_force, forces=forces), 5)
        assert qd[:, 0, 0] == pytest.approx(0.005 * np.arange(1, 6), rel=1e-5)


def _symplectic_pendulum(steps, damping=0.0):
    """The closed forms of 8.2: w += dt (tau (1 - d dt) / I_pivot - d w); theta += dt w."""
    i_pivot, theta, w, out = 0.3341667, 0.0, 0.0, []
    for _ in range(steps):
        tau = -1.0 * 9.81 * 0.5 * np.cos(theta)
        w += DT * (tau * (1.0 - damping * DT) / i_pivot - damping * w)
        theta += DT * w
        out.append((theta, w))
    return np.array(out)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_free_and_damped_pendulum(solver):
    """8.2: the clean pendulum is symplectic Euler; with link damping 0.05 it follows the damped closed form."""
    for damping in (0.0, 0.05):
        q, qd = run(*rod_pendulum(solver, damping=damping), 30)
        ref = _symplectic_pendulum(30, damping)
        assert q[:, 0, 0] == pytest.approx(ref[:, 0], rel=2e-5, abs=2e-6)
        assert qd[:, 0, 0] == pytest.approx(ref[:, 1], rel=2e-5, abs=2e-6)


def test_limit_stop():
    """8.3: limit [-0.5, 0.5]: steps 5/10 as free; step 15 PGS -0.4854654/-3.5942338, TGS -0.4854654/-3.4882939;
    from step 16 on q = -0.5 exactly and qd = 0 (the speculative branch lands on the limit)."""
    expect15 = {SolverType.PGS: -3.5942338, SolverType.TGS: -3.4882939}
    for solver in (SolverType.PGS, SolverType.TGS):
        q, qd = run(*rod_pendulum(solver, limit=(-0.5, 0.5)), 40)
        assert (q[4, 0, 0], qd[4, 0, 0]) == pytest.approx((-0.0611527, -1.2228953), **F32)
        assert (q[9, 0, 0], qd[9, 0, 0]) == pytest.approx((-0.2238870, -2.4364185), **F32)
        # 15 steps of float32 accumulation: 1e-5 relative
        assert (q[14, 0, 0], qd[14, 0, 0]) == pytest.approx((-0.4854654, expect15[solver]), rel=1e-5)
        assert q[16:, 0, 0] == pytest.approx(-0.5, abs=2e-6)
        assert qd[16:, 0, 0] == pytest.approx(0.0, abs=2e-5)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_velocity_limit(solver):
    """8.3: m = 1, joint force 10, max joint velocity 1: qd = k/6 for k = 1..5, then exactly 1; q(10) = 0.125."""
    art, scene = prismatic_drive(solver, mass=1.0, max_force=0.0, stiffness=0.0, damping=0.0)
    art.get_joint("slider").set_max_joint_velocity(3, 1.0)  # Axis.X
    cache = art.create_cache()
    cache.joint_force[:] = 10.0
    from artic import CacheFlag

    art.apply_cache(cache, CacheFlag.FORCE)
    q, qd = run(art, scene, 10)
    assert qd[:5, 0, 0] == pytest.approx(np.arange(1, 6) / 6.0, rel=1e-5)
    assert qd[5:, 0, 0] == pytest.approx(1.0, rel=1e-6)
    assert q[9, 0, 0] == pytest.approx(0.125, rel=1e-5)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_static_friction_holds(solver):
    """8.3: static effort 6 > the 4.905 Nm gravity torque: the pendulum stays at q = 0."""
    q, qd = run(*rod_pendulum(solver, friction=(6.0, 5.0, 0.0)), 60)
    assert np.abs(q).max() < 1e-6 and np.abs(qd).max() < 1e-5


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_dynamic_and_viscous_friction(solver):
    """8.3: static 4 < 4.905 Nm: it slides, resisted by dynamic 2 + viscous 0.5 |w|. For one dof the section 3.3
    iteration converges to the implicit fixed point |w| = (|w_free| - Jd / I) / (1 + cv / I), Jd = 2 dt,
    cv = 0.5 dt, with the free velocity w_free = w + dt tau / I_pivot (cfm 0, so R = I_pivot)."""
    q, qd = run(*rod_pendulum(solver, friction=(4.0, 2.0, 0.5)), 20)
    i_pivot, theta, w = 0.3341667, 0.0, 0.0
    for k in range(20):
        w_free = w + DT * (-9.81 * 0.5 * np.cos(theta)) / i_pivot
        if abs(w_free) * i_pivot <= 4.0 * DT:
            w = 0.0
        else:
            w = np.sign(w_free) * (abs(w_free) - 2.0 * DT / i_pivot) / (1.0 + 0.5 * DT / i_pivot)
        theta += DT * w
        assert qd[k, 0, 0] == pytest.approx(w, rel=1e-4, abs=1e-6)
        if solver == SolverType.PGS:
            assert q[k, 0, 0] == pytest.approx(theta, rel=1e-4, abs=1e-6)
    assert q[-1, 0, 0] < -0.05  # it slid


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_default_coefficient_friction(solver):
    """8.2: friction coefficient 0.05 alone. Max impulse 0.05 (|F| + |T|) h with F = m (a_com - g) and
    T = I_com alpha from the unconstrained accelerations (tangential and centripetal); PGS accumulates one clamp
    over its iterations (h = dt), TGS clamps each of its 4 substeps and its velocity iteration afresh (h = rho)."""
    art, scene = rod_pendulum(solver, coefficient=0.05)
    art.get_link("rod").set_cfm_scale(0.0)
    q, qd = run(art, scene, 30)
    m, izz = 1.0, 1.0 / 12.0 * (1.0 + 0.01)
    i_pivot, theta, w = 0.3341667, 0.0, 0.0
    rho = DT / 4.0
    for k in range(30):
        alpha = -9.81 * 0.5 * np.cos(theta) / i_pivot
        c = 0.5 * np.array([np.cos(theta), np.sin(theta)])  # COM relative to the pivot
        a_com = alpha * np.array([-c[1], c[0]]) - w * w * c
        force = m * (a_com - np.array([0.0, -9.81]))
        bound = 0.05 * (np.linalg.norm(force) + abs(izz * alpha))
        v = w + DT * alpha
        if solver == SolverType.PGS:
            v = 0.0 if abs(v) * i_pivot <= bound * DT else v - np.sign(v) * bound * DT / i_pivot
            theta += DT * v
        else:
            for it in range(5):
                v -= np.sign(v) * min(abs(v) * i_pivot, bound * rho) / i_pivot
                if it < 4:
                    theta += rho * v
        w = v
        assert qd[k, 0, 0] == pytest.approx(w, rel=1e-4, abs=1e-6)
        assert q[k, 0, 0] == pytest.approx(theta, rel=1e-4, abs=1e-6)
