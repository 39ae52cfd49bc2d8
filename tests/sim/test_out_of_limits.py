"""States outside limits do not diverge (issue 14, item 3; the rule is documented in artic/constraints/limit.py and
artic/constraints/mimic.py).

* PhysX 5.8's limit rule, kept exactly: a dof beyond its limit gets the bias erp * error / h in position iterations
  only, capped by its own velocity-limit row; velocity iterations remove that recovery velocity again, so PGS takes
  the fraction erp = 0.8 of the error away each step and nothing overshoots.
* PhysX's sleep test reads the position-iteration velocities, so a dof on its way back keeps its articulation awake.
* artic's one deviation: a mimic joint's bias speed is capped at what the coupled dofs' velocity limits allow; without
  the cap the README's panda example drove the wrist 1.6 rad past its limit in 2 s. PhysX does that too: run through
  ovphysx 0.7 (CPU, PGS) with cfmScale 0 on both sides, the same 16 starts end with joint6 1.13 rad and a finger
  1.45 m outside (artic without the cap: 1.08 rad, 1.27 m).
"""

import tempfile
import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag, SolverType
from tests.support.models import robot_path

DT = 1.0 / 120.0

_JOINT = (
    '<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
    '<origin xyz="{xyz}"/><axis xyz="{axis}"/>'
    '<limit lower="{low}" upper="{high}" effort="100" velocity="{vel}"/>{extra}</joint>'
)
_LINK = (
    '<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
    '<inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>'
)


def _write_urdf(links, joints) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(
            '<robot name="r">'
            + "".join(_LINK.format(**k) for k in links)
            + "".join(_JOINT.format(**j) for j in joints)
            + "</robot>"
        )
    return f.name


def _joint(name, kind, parent, child, xyz, axis, low, high, vel, extra=""):
    return {
        "name": name,
        "kind": kind,
        "parent": parent,
        "child": child,
        "xyz": xyz,
        "axis": axis,
        "low": low,
        "high": high,
        "vel": vel,
        "extra": extra,
    }


def _single_dof_urdf(kind, axis, low, high, vel) -> str:
    """A fixed base and one link (mass 1, COM 0.2 m along x) on one limited joint."""
    links = [{"name": "base", "com": "0 0 0", "mass": 1.0}, {"name": "l1", "com": "0.2 0 0", "mass": 1.0}]
    joints = [_joint("j", kind, "base", "l1", "0 0 0", axis, low, high, vel)]
    return _write_urdf(links, joints)


def _clean(art):
    """No link damping, no joint friction: only the limit (and the velocity limit) acts."""
    for link in art.get_links():
        link.linear_damping = link.angular_damping = 0.0
    for name in art.dof_names:
        art.get_joint(name).friction_coefficient = 0.0


def _simulate(art, q0, steps, solver, num_envs=1, gravity=(0.0, 0.0, 0.0)):
    """Joint positions after each step, (steps, envs, dofs)."""
    scene = artic.Scene(num_envs, gravity=gravity, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[:] = q0
    art.apply_cache(cache, CacheFlag.POSITION)
    out = []
    for _ in range(steps):
        scene.step(DT)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        out.append(cache.joint_position.astype(float).copy())
    return np.array(out)


def _limits(art) -> np.ndarray:
    lims = []
    for name in art.dof_names:
        j = art.get_joint(name)
        lim = j.get_limit_params(j.dof_axes()[0])
        lims.append((lim.low, lim.high))
    return np.array(lims)


def _violation(q, lims):
    """How far each dof is outside [low, high] (0 inside)."""
    return np.maximum(np.maximum(lims[:, 0] - q, q - lims[:, 1]), 0.0)


def test_readme_example_stays_bounded():
    """The README example as written (panda, 1024 envs, all nine dofs uniform(-1, 1), URDF mimic on the fingers,
    drive on joint4, 240 steps of 1/120 s): every state stays finite; no arm dof ever ends up farther outside its
    limits than it started, by more than 0.02 rad, and all are inside (0.02 rad) after 2 s; each finger closes its
    violation at no less than its 0.2 m/s joint velocity limit (1 mm tolerance). Run on to 5 s, every dof is inside
    its limits (0.02 rad, 1 mm) and the mimic joint holds (|finger1 - finger2| < 1 mm).

    Tolerances: the arm's largest excursion measured is 0.010 rad (joint2 landing on its limit under gravity at its
    2.175 rad/s velocity limit: what 4 Gauss-Seidel iterations leave of a limit hit at full speed); before the mimic
    bias cap joint5 ended 0.55 rad and joint6 1.6 rad outside, the fingers 1.5 m. The fingers cannot be inside after
    2 s: they start up to 0.96 m out and return at their URDF velocity limit, 0.2 m/s, as in PhysX; before the sleep
    test read the position-iteration velocities, the envs fell asleep on the way, fingers up to 0.44 m outside."""
    art = artic.load_urdf(str(robot_path("panda")))
    scene = artic.Scene(num_envs=1024)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[:] = np.random.default_rng(0).uniform(-1, 1, cache.joint_position.shape)
    art.apply_cache(cache, CacheFlag.POSITION)
    j = art.get_joint("panda_joint4")
    j.set_drive_params(artic.Axis.TWIST, artic.Drive(400.0, 40.0, 87.0, artic.DriveType.FORCE))
    cache.joint_target_positions[:, 3] = -1.5
    art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)

    lims = _limits(art)
    finger_vmax = art.get_joint("panda_finger_joint1").get_max_joint_velocity(artic.Axis.X)
    assert finger_vmax == pytest.approx(0.2)
    viol0 = _violation(cache.joint_position.astype(float), lims)
    assert viol0[:, 7:].max() > 0.9  # the fingers really start far outside
    for k in range(600):
        scene.step(DT)
        if k % 12 == 11:
            art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
            q = cache.joint_position.astype(float)
            assert np.isfinite(q).all() and np.isfinite(cache.joint_velocity).all()
            viol = _violation(q, lims)
            assert (viol[:, :7] - viol0[:, :7]).max() < 0.02
            t = (k + 1) * DT
            assert (viol[:, 7:] - np.maximum(viol0[:, 7:] - finger_vmax * t, 0.0)).max() < 1e-3
            if k + 1 == 240:
                assert viol[:, :7].max() < 0.02
    assert viol[:, :7].max() < 0.02 and viol[:, 7:].max() < 1e-3
    assert np.abs(q[:, 7] - q[:, 8]).max() < 1e-3


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_slider_returns_from_one_metre_outside(solver):
    """A prismatic slider started 1 m beyond its [0, 0.04] m limit (no gravity, default velocity limit 100 m/s)
    returns without overshooting below 0 and is inside (1 mm) after 0.25 s. Under PGS it follows PhysX 5.8's rule
    step by step: each step removes the fraction erp = 0.8 of the error and carries no momentum, so the error is
    1.0, 0.2, 0.04, 0.008 m (computed from the rule, 1e-5 m; PhysX through ovphysx 0.7 gives the same numbers)."""
    art = artic.load_urdf(_single_dof_urdf("prismatic", "1 0 0", 0.0, 0.04, 100.0))
    _clean(art)
    q = _simulate(art, [[1.04]], 30, solver)[:, 0, 0]
    assert np.isfinite(q).all()
    assert q.min() > -1e-3 and q.max() < 1.04
    assert abs(q[-1] - 0.02) < 0.021
    if solver == SolverType.PGS:
        np.testing.assert_allclose(q[:3] - 0.04, [0.2, 0.04, 0.008], atol=1e-5)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_slider_returns_at_its_velocity_limit(solver):
    """With maxJointVelocity 0.2 m/s and cfm 0, the velocity-limit row right after the limit row caps the recovery
    exactly: the slider 1 m outside moves back by 0.2 m/s * dt every step, q_k = 1.04 - 0.2 k dt, for the whole 2 s
    (1e-4 m: float32 round-off of 240 steps, 960 TGS substeps). PhysX (ovphysx 0.7, CPU, PGS, cfmScale 0) gives the
    same to 1e-6 m, and shows that the articulation stays awake although the carried velocity is 0: PhysX's sleep
    test reads the position-iteration velocities."""
    art = artic.load_urdf(_single_dof_urdf("prismatic", "1 0 0", 0.0, 0.04, 0.2))
    _clean(art)
    for link in art.get_links():
        link.cfm_scale = 0.0
    q = _simulate(art, [[1.04]], 240, solver)[:, 0, 0]
    np.testing.assert_allclose(q, 1.04 - 0.2 * DT * np.arange(1, 241), atol=1e-4)


@pytest.mark.oracle
def test_revolute_first_step_out_of_limit_matches_physx():
    """A revolute joint 1 rad past its 0.5 rad limit (PGS, no gravity, default velocity limit): the first step moves
    it to 0.7 rad (erp 0.8 of the error) in artic and in PhysX 5.3 (SAPIEN) alike, to 1e-5 rad. Later steps differ
    by design: PhysX 5.3 keeps the 96 rad/s bias velocity through the velocity iteration and swings to the other limit
    (fixed in 5.7.0), artic follows 5.8 and settles at the limit without crossing the range (checked here too)."""
    pytest.importorskip("sapien")
    from tests.support.physx_oracle import physx_robot

    path = _single_dof_urdf("revolute", "0 1 0", -0.5, 0.5, 100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene, robot = physx_robot(path, SolverType.PGS, DT, (0.0, 0.0, 0.0), (4, 1))
        for link in robot.links:
            link.linear_damping = link.angular_damping = 0.0
        pj = robot.active_joints[0]
        pj.set_friction(0.0)
        pj.set_armature(np.zeros(1))
        pj.set_max_velocity(100.0)
        robot.set_qpos(np.array([1.5]))
        robot.set_qvel(np.zeros(1))
        scene.step()
    physx_q1 = float(robot.qpos[0])

    art = artic.load_urdf(path)
    _clean(art)
    q = _simulate(art, [[1.5]], 30, SolverType.PGS)[:, 0, 0]
    assert physx_q1 == pytest.approx(0.7, abs=1e-5)
    assert q[0] == pytest.approx(physx_q1, abs=1e-5)
    assert q.min() > 0.4 and q.max() < 1.5
    assert abs(q[-1] - 0.5) < 0.06


def _gripper_urdf(finger_vel) -> str:
    """Fixed base, an arm link on a revolute joint about z ([-0.5, 0.5] rad, 2 rad/s), and two prismatic fingers on
    it ([0, 0.04] m, opposite axes) coupled by a URDF mimic (finger2 = finger1), like the panda's gripper."""
    links = [
        {"name": "base", "com": "0 0 0", "mass": 1.0},
        {"name": "arm", "com": "0.3 0 0", "mass": 1.0},
        {"name": "f1", "com": "0 0 0", "mass": 0.05},
        {"name": "f2", "com": "0 0 0", "mass": 0.05},
    ]
    joints = [
        _joint("arm_j", "revolute", "base", "arm", "0 0 0", "0 0 1", -0.5, 0.5, 2.0),
        _joint("f1_j", "prismatic", "arm", "f1", "0.6 0.2 0", "0 1 0", 0.0, 0.04, finger_vel),
        _joint(
            "f2_j",
            "prismatic",
            "arm",
            "f2",
            "0.6 -0.2 0",
            "0 -1 0",
            0.0,
            0.04,
            finger_vel,
            '<mimic joint="f1_j" multiplier="1" offset="0"/>',
        ),
    ]
    return _write_urdf(links, joints)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
@pytest.mark.parametrize("finger_vel", [0.2, 100.0])
def test_mimic_pair_far_from_its_constraint_converges(solver, finger_vel):
    """Fingers coupled by a hard mimic joint, started 2 m apart (f1 = -1, f2 = +1) and 1 m outside their limits: the
    states stay finite, the arm they hang on never leaves its +-0.5 rad range by more than 0.01 rad, the mimic error
    |f2 - f1| never grows while it is wider than 1 cm (1e-4 m), once under 5 mm stays there (the arm hitting its
    limit jolts it by about 1.3 mm) and ends under 1 mm, and the fingers end inside their limits (1 mm) after 8 s.
    With 0.2 m/s finger velocity limits the gap closes at least as fast as both fingers at their limits, 0.4 m/s,
    while it is wider than 0.1 m."""
    art = artic.load_urdf(_gripper_urdf(finger_vel))
    _clean(art)
    assert len(art.get_mimic_joints()) == 1
    q = _simulate(art, [[0.0, -1.0, 1.0]], 960, solver, num_envs=2)[:, 0, :]
    assert np.isfinite(q).all()
    assert np.abs(q[:, 0]).max() < 0.51
    gap = np.abs(q[:, 2] - q[:, 1])
    closing = np.flatnonzero(np.concatenate([[2.0], gap[:-1]]) > 0.01)
    assert (np.diff(np.concatenate([[2.0], gap]))[closing] < 1e-4).all()
    assert gap[np.argmax(gap < 5e-3) :].max() < 5e-3 and gap[-1] < 1e-3
    if finger_vel < 1.0:
        wide = np.flatnonzero(gap > 0.1)
        assert (2.0 - gap[wide] >= 0.4 * DT * (wide + 1) - 1e-4).all()
    np.testing.assert_array_less(_violation(q[-1, 1:], np.array([[0.0, 0.04]] * 2)), 1e-3)
