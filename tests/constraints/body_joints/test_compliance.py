"""Compliance, damping and ERP/CFM of body joints (ArtiSynth's joints chapter 3.3.8;
the ODE paper, eq. 13): a compliant constraint is an implicit spring, exactly."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import Transform
from tests.support.bodies import body

G = 9.81


def _spring_body(solver, compliance=None, damping=None, erp=None, cfm=None, mass=2.0):
    """A body of mass `mass` held at its COM by a FixedJoint to the world, displaced 5 cm up."""
    b = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "b")
    b.link.mass, b.link.inertia = mass, (0.1, 0.2, 0.3)
    b.link.angular_damping = 0.0
    b.articulation.sleep_threshold = 0.0
    scene = artic.Scene(1, solver_type=solver)
    scene.add_actor(b)
    joint = artic.FixedJoint(b, None, Transform((0.0, 0.0, 1.0)))
    if erp is not None:
        joint.set_erp_cfm([erp] * 6, [cfm] * 6)
    else:
        joint.set_compliance([compliance] * 6)
        joint.set_damping([damping] * 6)
    scene.add_joint(joint)
    pose = scene.get_actor_pose(b)
    pose[:, 2] += 0.05
    scene.set_actor_pose(b, pose)
    return scene, b, joint


def _implicit_spring(x, v, k, d, m, dt, substeps):
    """One step of the implicit spring-damper with gravity (eq. 13 with f_g): the step's gravity first (as both
    solvers apply it), then per substep of h: f = -(k x + (h k + d) v) / (1 + h (h k + d) / m). Returns x, v and
    the spring's impulse over the step / dt."""
    v -= G * dt
    h = dt / substeps
    impulse = 0.0
    for _ in range(substeps):
        f = -(k * x + (h * k + d) * v) / (1.0 + h * (h * k + d) / m)
        v += h * f / m
        x += h * v
        impulse += h * f
    return x, v, impulse / dt


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.TGS], ids=["pgs", "tgs"])
@pytest.mark.parametrize("form", ["compliance", "erp_cfm"])
def test_compliant_fixed_joint_is_the_implicit_spring_step_by_step(solver, form):
    """Closed form: a 2 kg body on a compliant fixed joint (C = 1e-3 m/N, D = 5 N s/m), displaced 5 cm under
    gravity, follows the implicit spring recurrence of ODE's eq. 13 at every one of 200 steps to 1e-6 m (PGS: one
    step of dt; TGS: four substeps), oscillating and decaying to the sag m g C. Given as ERP/CFM (the values of
    erp_cfm_from_spring at dt), the same trajectory. The joint's multiplier is the spring's force."""
    c, d, dt, m = 1e-3, 5.0, 0.01, 2.0
    if form == "compliance":
        scene, b, joint = _spring_body(solver, compliance=c, damping=d)
    else:
        erp, cfm = artic.erp_cfm_from_spring(1.0 / c, d, dt)
        scene, b, joint = _spring_body(solver, erp=erp, cfm=cfm)
    substeps = 4 if solver == artic.SolverType.TGS else 1
    x, v = 0.05, 0.0
    err, xs = 0.0, []
    for _ in range(200):
        scene.step(dt)
        x, v, spring_force = _implicit_spring(x, v, 1.0 / c, d, m, dt, substeps)
        z = float(scene.get_actor_pose(b)[0, 2]) - 1.0
        err = max(err, abs(z - x))
        xs.append(z)
    assert err < 1e-6  # float32 positions near z = 1 m: ulp 1.2e-7
    xs = np.array(xs)
    assert xs.min() < -0.02 and xs.max() > 0.0  # it oscillated through the sag
    if solver == artic.SolverType.PGS:  # settles at the sag (TGS, which adds the step's gravity before its
        assert xs[-1] == pytest.approx(-m * G * c, abs=2e-4)  # substeps, ends each step a little higher)
    force = scene.get_joint_forces(joint).constraint_force[0, 2]  # the row of p's z component
    assert force == pytest.approx(spring_force, rel=1e-4, abs=1e-4)


def test_hard_rows_hold_and_rotary_compliance_turns():
    """A torque on a body held by a fixed joint: rigid (compliance 0), it does not turn; with rotary compliance C
    it turns to the static angle tau C. (set_rotary_compliance's damping 2 sqrt(M / C) uses the mass, as eq. 3.24:
    for this small box's inertia it is 12 times critical, a time constant D C of 1.25 s, hence the 15 s.)"""
    tau, c = 2.0, 0.05
    for comp, expected in ((0.0, 0.0), (c, tau * c)):
        b = body(artic.Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 1.0))
        scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0))
        scene.add_actor(b)
        joint = artic.FixedJoint(b, None, Transform((0.0, 0.0, 1.0)))
        joint.set_rotary_compliance(comp)
        scene.add_joint(joint)
        cache = b.articulation.create_cache()
        for _ in range(300):
            cache.link_torque[:] = (0.0, 0.0, tau)
            b.articulation.apply_cache(cache, artic.CacheFlag.LINK_TORQUE)
            scene.step(0.05)
        q = scene.get_actor_pose(b)[0, 3:]
        assert 2 * np.arctan2(q[2], q[3]) == pytest.approx(expected, abs=1e-4)


def test_uniform_compliance_sets_critical_damping():
    """Closed form (eq. 3.24): set_linear_compliance(C) gives the linear bilateral constraints compliance C and
    damping 2 sqrt(M / C), M the attached bodies' mass, and leaves rotary ones and ranges alone; the getters return
    C, or -1 once the values differ."""
    a = body(artic.Box((0.1, 0.1, 0.1)), name="a")  # 8 kg
    b = body(artic.Box((0.1, 0.1, 0.2)), name="b")  # 16 kg
    joint = artic.HingeJoint(a, b, Transform())
    joint.set_linear_compliance(1e-6)
    flags = joint.get_constraint_flags()
    assert flags[:3] == [artic.ConstraintFlag.LINEAR] * 3
    assert flags[5] == artic.ConstraintFlag.ROTARY | artic.ConstraintFlag.LIMIT
    np.testing.assert_allclose(joint.get_compliance(), [1e-6] * 3 + [0.0] * 3)
    np.testing.assert_allclose(joint.get_damping()[:3], 2 * np.sqrt(24.0 / 1e-6))
    assert joint.get_linear_compliance() == 1e-6
    assert joint.get_rotary_compliance() == 0.0
    joint.set_compliance([2e-6])
    assert joint.get_linear_compliance() == -1.0


def test_erp_cfm_conversions_are_inverse():
    """Identity: erp_cfm_from_spring and spring_from_erp_cfm invert each other at any dt, compliance 0 is
    (ERP 1, CFM 0), and get_erp_cfm reports the values a compliance and damping describe at dt."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        k, d, dt = 10 ** rng.uniform(0, 7), 10 ** rng.uniform(-2, 4), 10 ** rng.uniform(-4, -1)
        erp, cfm = artic.erp_cfm_from_spring(k, d, dt)
        assert 0.0 < erp < 1.0 and cfm > 0.0
        np.testing.assert_allclose(artic.spring_from_erp_cfm(erp, cfm, dt), (k, d), rtol=1e-9)
    assert artic.erp_cfm_from_spring(np.inf, 3.0, 0.01) == (1.0, 0.0)
    joint = artic.FixedJoint(body(artic.Box((0.1, 0.1, 0.1))), None, Transform())
    joint.set_compliance([1e-4] * 6)
    joint.set_damping([50.0] * 6)
    erp, cfm = joint.get_erp_cfm(0.01)
    np.testing.assert_allclose(erp, 0.01 * 1e4 / (0.01 * 1e4 + 50.0))
    np.testing.assert_allclose(cfm, 1.0 / (0.01 * 1e4 + 50.0))
