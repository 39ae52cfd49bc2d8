"""Closed forms and behaviour of drives, limits and velocity limits (the implicit-drive note)."""

import numpy as np
import pytest

import artic
from artic import Axis, CacheFlag, Drive, DriveType, Limit, Motion, SolverType
from tests.support.bodies import body
from tests.support.scenes import MAX_F32, prismatic_drive, run


@pytest.mark.parametrize(
    "kp, kd, dt, mass",
    [
        (100.0, 10.0, 1 / 60, 2.0),
        (1e4, 50.0, 1 / 60, 0.1),
        (1e7, 1e3, 1 / 30, 0.01),
        (5.0, 0.0, 1 / 240, 3.0),
        (0.0, 20.0, 1 / 60, 1.0),
    ],
)
def test_pgs_step_is_implicit_euler(kp, kd, dt, mass):
    """One PGS step from (x0, v0) equals v1 = (v0 + dt r (kp (xT - x0) + kd vT)) / (1 + r dt (dt kp + kd)),
    x1 = x0 + dt v1 (spec eqs. 9-12) for any gains, including kp dt^2 / m >> 1."""
    x0, v0, xt, vt = 0.2, -0.5, 1.0, 0.3
    art, scene = prismatic_drive(stiffness=kp, damping=kd, mass=mass, target=xt, target_velocity=vt)
    cache = art.create_cache()
    cache.joint_position[:] = x0
    cache.joint_velocity[:] = v0
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    q, qd = run(art, scene, 1, dt)
    r = 1.0 / mass
    v1 = (v0 + dt * r * (kp * (xt - x0) + kd * vt)) / (1.0 + r * dt * (dt * kp + kd))
    assert qd[0, 0, 0] == pytest.approx(v1, rel=1e-5, abs=1e-6)
    assert q[0, 0, 0] == pytest.approx(x0 + dt * v1, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("n_pos", [2, 4, 8])
def test_tgs_step_is_n_implicit_substeps(n_pos):
    """TGS with n position iterations equals n implicit-Euler substeps of rho = dt/n, the target moving
    as x_T - (dt - (i+1) rho) v_T within the step (spec eq. 41)."""
    dt, kp, kd, mass, xt, vt = 1 / 60, 400.0, 20.0, 0.5, 1.0, 0.7
    art, scene = prismatic_drive(
        SolverType.TGS, (n_pos, 1), stiffness=kp, damping=kd, mass=mass, target=xt, target_velocity=vt
    )
    q, qd = run(art, scene, 3, dt)
    x, v, rho, r = 0.0, 0.0, dt / n_pos, 1.0 / mass
    for step in range(3):
        for i in range(n_pos):
            x_sub = xt - (dt - (i + 1) * rho) * vt
            v = (v + rho * r * (kp * (x_sub - x) + kd * vt)) / (1.0 + r * rho * (rho * kp + kd))
            x += rho * v
        assert q[step, 0, 0] == pytest.approx(x, rel=1e-5, abs=1e-6)
        assert qd[step, 0, 0] == pytest.approx(v, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS, SolverType.DIRECT])
@pytest.mark.parametrize("kind", [DriveType.EXPLICIT, DriveType.EXPLICIT_STIFFNESS])
@pytest.mark.parametrize("max_force", [MAX_F32, 30.0])
def test_explicit_drives_are_mujocos_euler_and_implicitfast(solver, kind, max_force):
    """One step from (x0, v0): EXPLICIT (MuJoCo's Euler actuator) gives v1 = v0 + dt f / m with f = clamp(kp (xT -
    x0) + kd (vT - v0), +-max_force), its force a force even for PGS's impulse limits; EXPLICIT_STIFFNESS
    (implicitfast) then makes its damping implicit after the solve: (m + dt kd) (v1 - v0) = dt f."""
    dt, kp, kd, mass, x0, v0, xt, vt = 1 / 60, 400.0, 20.0, 0.5, 0.2, -0.5, 1.0, 0.3
    art, scene = prismatic_drive(
        solver,
        stiffness=kp,
        damping=kd,
        mass=mass,
        target=xt,
        target_velocity=vt,
        drive_type=kind,
        max_force=max_force,
    )
    cache = art.create_cache()
    cache.joint_position[:] = x0
    cache.joint_velocity[:] = v0
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    q, qd = run(art, scene, 1, dt)
    f = float(np.clip(kp * (xt - x0) + kd * (vt - v0), -max_force, max_force))
    v1 = v0 + dt * f / (mass if kind == DriveType.EXPLICIT else mass + dt * kd)
    assert qd[0, 0, 0] == pytest.approx(v1, rel=1e-5, abs=1e-6)
    assert q[0, 0, 0] == pytest.approx(x0 + dt * v1, rel=1e-5, abs=1e-6)


def test_explicit_drives_are_refused_where_they_do_not_act():
    """An explicit drive on a spherical joint is refused when the scene takes it, one on a body joint at once."""
    art = artic.Articulation("ball")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    root = art.create_link(None, artic.Transform(), "root")
    link = art.create_link(root, None, "bob")
    j = link.inbound_joint
    j.set_joint_type(artic.JointType.SPHERICAL)
    for ax in (Axis.TWIST, Axis.SWING1, Axis.SWING2):
        j.set_motion(ax, Motion.FREE)
    j.set_drive_params(Axis.TWIST, Drive(10.0, 1.0, 5.0, DriveType.EXPLICIT))
    with pytest.raises(artic.ValidationError, match="explicit drive.*revolute or prismatic"):
        scene = artic.Scene(1)
        scene.add_articulation(art)
        scene.step(0.01)
    slider = artic.SliderJoint(body(artic.Box((0.05, 0.05, 0.05))), None, artic.Transform())
    with pytest.raises(artic.ValidationError, match="EXPLICIT drives act on articulation joints only"):
        slider.set_drive_params("z", Drive(10.0, 1.0, 5.0, DriveType.EXPLICIT))


def test_acceleration_drive_is_mass_independent():
    """The acceleration drive gives the same motion whatever the link mass (PGS and TGS)."""
    for solver in (SolverType.PGS, SolverType.TGS):
        runs = [run(*prismatic_drive(solver, mass=m, drive_type=DriveType.ACCELERATION), 30)[0] for m in (0.05, 1, 80)]
        assert runs[0] == pytest.approx(runs[1], abs=1e-6) and runs[2] == pytest.approx(runs[1], abs=1e-6)


def test_stiff_drive_is_stable_where_explicit_pd_explodes():
    """kp = 1e7, kd = 10 on a 0.05 kg slider at dt = 1/60: the implicit drive stays bounded and settles on the
    target over 10 s; an explicit PD with the same gains (symplectic Euler) diverges within a few steps."""
    kp, kd, mass, dt = 1e7, 10.0, 0.05, 1 / 60
    q, _qd = run(*prismatic_drive(stiffness=kp, damping=kd, mass=mass, target=1.0), 600, dt)
    assert np.all(np.isfinite(q)) and np.abs(q).max() < 1.5
    assert q[-1, 0, 0] == pytest.approx(1.0, abs=1e-4)
    x, v = 0.0, 0.0
    for _ in range(10):
        v += dt * (kp * (1.0 - x) - kd * v) / mass
        x += dt * v
    assert abs(x) > 1e6  # the explicit controller has exploded


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_limit_holds_against_a_drive(solver):
    """A drive pulling to x_T = 1 past a limit at 0.3 (with the default cfm): the slider stops at the limit
    within 1e-3 m and stays there."""
    art, scene = prismatic_drive(solver, stiffness=500.0, damping=20.0, mass=1.0, target=1.0)
    j = art.get_joint("slider")
    scene.remove_articulation(art)
    j.set_motion(Axis.X, Motion.LIMITED)
    j.set_limit_params(Axis.X, Limit(-0.3, 0.3))
    art.get_link("slider").cfm_scale = 0.025
    scene.add_articulation(art)
    q, _qd = run(art, scene, 300)
    assert q.max() < 0.3 + 1e-3
    assert q[-60:, 0, 0] == pytest.approx(0.3, abs=1e-3)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_velocity_limit_holds_against_a_drive(solver):
    """A strong drive to a far target under max joint velocity 0.5: |qd| never exceeds 0.5."""
    art, scene = prismatic_drive(solver, stiffness=1e4, damping=100.0, mass=1.0, target=5.0)
    art.get_joint("slider").set_max_joint_velocity(Axis.X, 0.5)
    _q, qd = run(art, scene, 120)
    assert np.abs(qd).max() <= 0.5 + 1e-6
    assert qd[-1, 0, 0] == pytest.approx(0.5, rel=1e-6)


def test_envs_are_independent():
    """Envs with different targets step as one-env scenes with those targets would."""
    art, scene = prismatic_drive(envs=3)
    cache = art.create_cache()
    cache.joint_target_positions[:, 0] = [0.5, 1.0, -2.0]
    art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
    q, _ = run(art, scene, 20)
    for e, t in enumerate([0.5, 1.0, -2.0]):
        q1, _ = run(*prismatic_drive(target=t), 20)
        assert q[:, e, 0] == pytest.approx(q1[:, 0, 0], abs=1e-7)


def test_spherical_drive_reaches_its_target():
    """A 3-dof spherical joint driven to a rotation vector settles there (quaternion drive error, no gravity)."""
    art = artic.Articulation("ball")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    root = art.create_link(None, artic.Transform(), "root")
    link = art.create_link(root, None, "ball")
    link.cmass_local_pose = artic.Transform((0.0, 0.0, 0.3))
    link.mass = 1.0
    link.inertia = (0.02, 0.02, 0.01)
    j = link.inbound_joint
    j.set_joint_type(artic.JointType.SPHERICAL)
    target = np.array([0.3, -0.2, 0.4])
    for ax, t in zip((Axis.TWIST, Axis.SWING1, Axis.SWING2), target, strict=True):
        j.set_motion(ax, Motion.FREE)
        j.set_drive_params(ax, Drive(50.0, 5.0, 1e6, DriveType.FORCE))
        j.set_drive_target(ax, t)
    j.friction_coefficient = 0.0
    scene = artic.Scene(1, gravity=(0, 0, 0), solver_type=SolverType.TGS)
    scene.add_articulation(art)
    q, _ = run(art, scene, 300)
    assert q[-1, 0] == pytest.approx(target, abs=2e-3)
