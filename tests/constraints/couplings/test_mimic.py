"""Mimic joints: effective inertia, PhysX's compliant table (notes 8.4), the implicit-spring closed form, hard
coupling under a driven trajectory, Baumgarte convergence, SnippetMimicJoint, N-dof differentials, validation and
URDF <mimic> on real robots."""

import itertools

import numpy as np
import pytest

import artic
from artic import (
    ArticError,
    ArticulationFlag,
    Axis,
    CacheFlag,
    Drive,
    DriveType,
    JointType,
    Motion,
    SolverType,
    Transform,
)
from artic.description.softness import Softness
from tests.support.models import random_state, random_tree, robot_path, robots_dir
from tests.support.scenes import clean

DT = 1.0 / 60.0


def sliders(
    masses=(1.0, 2.0),
    solver=SolverType.PGS,
    n_pos=4,
    mimic=(-1.0, 0.0, 10.0, 1.0),
    q0=(0.1, 0.0),
    gravity=(0.0, 0.0, 0.0),
):
    """Notes 8.4 clean compliant test: two prismatic X dofs on a fixed root, mA = 1, mB = 2, no gravity."""
    art = artic.Articulation("sliders")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(n_pos, 1)
    art.sleep_threshold = 0.0  # as PhysX's snippet: the end-of-step velocities are zero while C still decays
    root = art.create_link(None, Transform(), "root")
    clean(root)
    joints = []
    for name, m, y in zip("AB", masses, (0.0, 1.0), strict=True):
        link = art.create_link(root, None, name)
        link.mass = m
        clean(link, link.inbound_joint)
        j = link.inbound_joint
        j.parent_pose = Transform((0.0, y, 0.0))
        j.set_joint_type(JointType.PRISMATIC)
        j.set_motion(Axis.X, Motion.FREE)
        joints.append(j)
    mj = art.create_mimic_joint(joints[0], Axis.X, joints[1], Axis.X, *mimic)
    scene = artic.Scene(1, gravity=gravity, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[0] = q0
    art.apply_cache(cache, CacheFlag.POSITION)
    return art, scene, cache, mj


def _run_c(art, scene, cache, steps, gear=-1.0):
    out = []
    for _ in range(steps):
        scene.step(DT)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        out.append((cache.joint_position[0, 0] + gear * cache.joint_position[0, 1], cache.joint_velocity[0].copy()))
    return out


@pytest.mark.parametrize(
    "solver, n_pos, c1, c30",
    [
        (SolverType.PGS, 1, 0.0979592, 0.0538710),
        (SolverType.PGS, 4, 0.0945489, 0.0186078),
        (SolverType.PGS, 32, 0.0923081, 0.0090614),
        (SolverType.TGS, 1, 0.0979592, 0.0538710),
        (SolverType.TGS, 4, 0.0985242, 0.0640159),
        (SolverType.TGS, 32, 0.0987258, 0.0680643),
    ],
)
def test_compliant_mimic_reproduces_physx_table(solver, n_pos, c1, c30):
    """Notes 8.4: C after steps 1 and 30 for PGS/TGS with 1, 4, 32 position iterations; velocities exactly 0."""
    out = _run_c(*sliders(solver=solver, n_pos=n_pos)[:3], 30)
    assert out[0][0] == pytest.approx(c1, rel=1e-5)
    assert out[29][0] == pytest.approx(c30, rel=1e-4)
    assert np.abs(out[29][1]).max() < 1e-6


def test_one_iteration_equals_the_implicit_spring():
    """With one position iteration the compliant mimic is the implicit spring kp = mu^2/r, kd = 2 mu zeta/r acting
    on C with reciprocal mass r: C1 = C0 - dt^2 r kp C0 / (1 + r dt (dt kp + kd)) (velocities zeroed after)."""
    for mu, zeta in ((10.0, 1.0), (3.0, 2.5), (40.0, 0.7)):
        out = _run_c(*sliders(n_pos=1, mimic=(-1.0, 0.0, mu, zeta))[:3], 1)
        r = 1.0 + 0.5
        kp, kd = mu * mu / r, 2.0 * mu * zeta / r
        v = -DT * r * kp * 0.1 / (1.0 + r * DT * (DT * kp + kd))
        assert out[0][0] == pytest.approx(0.1 + DT * v, rel=1e-5)


def test_more_position_iterations_stiffen_a_compliant_mimic():
    """The documented PhysX behaviour: the impulse is not accumulated, so PGS iterations make it stiffer."""
    finals = [_run_c(*sliders(n_pos=n)[:3], 10)[-1][0] for n in (1, 2, 8, 64)]
    assert all(a > b for a, b in itertools.pairwise(finals))


@pytest.mark.parametrize("random_seed", [0, 1])
@pytest.mark.parametrize("floating", [False, True])
def test_effective_inertia_matches_dense_inverse(random_seed, floating):
    """r = J M^-1 J^T used by a mimic row equals r_AA + G (r_AB + r_BA) + G^2 r_BB from the dense inverse of the
    full mass matrix (armature included), for dofs in different sub-trees, fixed and floating base."""
    rng = np.random.default_rng(random_seed)
    art = random_tree(rng, n_links=9, floating=floating, kinds=("revolute", "prismatic", "fix"))
    dofs = art.dof_list()
    (ja, aa), (jb, ab) = dofs[0], dofs[-1]
    g = -1.7
    art.create_mimic_joint(ja, aa, jb, ab, g, 0.2)
    scene = artic.Scene(2, gravity=(0.0, 0.0, 0.0))
    scene.add_articulation(art)
    cache = art.create_cache()
    random_state(rng, art, cache)
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM)
    art.compute_mass_matrix(cache)
    scene.step(DT)  # the step computes the rows' responses at the start configuration
    r = scene.view(art).block.step_data.cpl_r.numpy()[:, 0]
    off = 6 if floating else 0
    a, b = off, off + art.dof_count - 1
    for e in range(2):
        minv = np.linalg.inv(cache.mass_matrix[e].astype(float))
        expect = minv[a, a] + g * (minv[a, b] + minv[b, a]) + g * g * minv[b, b]
        assert r[e] == pytest.approx(expect, rel=1e-4)


def test_cross_response_vanishes_across_a_fixed_root():
    """Two dofs on different branches of a fixed root: r_AB = 0, so r = r_AA + G^2 r_BB = 1/mA + G^2/mB."""
    art, scene, _, _ = sliders(mimic=(-2.0, 0.0, 0.0, 0.0))
    scene.step(DT)
    r = scene.view(art).block.step_data.cpl_r.numpy()[0, 0]
    assert r == pytest.approx(1.0 + 4.0 / 2.0, rel=1e-6)


def _driven_pair(solver, gear=-1.0, offset=0.0):
    """Two revolute links under gravity; A driven by a stiff drive along a trajectory, B mimics it (hard)."""
    art = artic.Articulation("pair")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(8, 1)
    root = art.create_link(None, Transform(), "root")
    joints = []
    for name, x in (("A", -1.0), ("B", 1.0)):
        link = art.create_link(root, None, name)
        link.cmass_local_pose = Transform((0.0, -0.5, 0.0))
        j = link.inbound_joint
        j.parent_pose = Transform((x, 0.0, 0.0))
        j.set_joint_type(JointType.REVOLUTE)
        j.set_motion(Axis.TWIST, Motion.FREE)
        joints.append(j)
    joints[0].set_drive_params(Axis.TWIST, Drive(500.0, 50.0, 1e6, DriveType.FORCE))
    art.create_mimic_joint(joints[0], Axis.TWIST, joints[1], Axis.TWIST, gear, offset)
    scene = artic.Scene(1, gravity=(0.0, -9.81, 0.0), solver_type=solver)
    scene.add_articulation(art)
    return art, scene


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_hard_mimic_follows_a_driven_joint_for_5_s(solver):
    """qA driven along 0.8 sin(t) for 5 s: |C| = |qA - qB| stays below 1e-3 (measured ~1e-5 PGS, ~1e-4 TGS)."""
    art, scene = _driven_pair(solver)
    cache = art.create_cache()
    worst, q_a = 0.0, []
    for k in range(300):
        cache.joint_target_positions[0, 0] = 0.8 * np.sin(k * DT)
        art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
        scene.step(DT)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        worst = max(worst, abs(cache.joint_position[0, 0] - cache.joint_position[0, 1]))
        q_a.append(cache.joint_position[0, 0])
    assert np.ptp(q_a) > 1.0
    assert worst < 1e-3


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_violated_hard_mimic_converges_as_baumgarte_predicts(solver):
    """Two free sliders starting at C = 0.1 (hard, no drive): per PGS step the bias removes erp = 0.8 of C in the
    first position iteration and the rest stays (the velocity iteration zeroes Jv); TGS removes a fraction per
    substep: (1 - erp)^n_pos with erp = min(0.9, 2/sqrt(n_pos))."""
    n_pos = 4
    out = _run_c(*sliders(solver=solver, n_pos=n_pos, mimic=(-1.0, 0.0, 0.0, 0.0))[:3], 3)
    factor = 0.2 if solver == SolverType.PGS else (1.0 - min(0.9, 2.0 / np.sqrt(n_pos))) ** n_pos
    assert [c for c, _ in out] == pytest.approx([0.1 * factor ** (k + 1) for k in range(3)], rel=1e-4, abs=1e-8)


@pytest.mark.parametrize("solver, tol", [(SolverType.PGS, 1e-6), (SolverType.TGS, 6e-6)])
def test_snippet_mimic_joint(solver, tol):
    """SnippetMimicJoint (notes 8.4): revolute A with drive 1e10 following a bouncing target, prismatic B coupled
    by G = 1: qA equals the target and qB = -qA (PhysX: |qA + qB| ~ 3e-8 PGS, 2.8e-6 TGS). The links keep PhysX's
    default mass and inertia (1, 1): with them artic gives 0 (PGS) and 2.84e-6 (TGS) at the first step, PhysX's
    figures; Gauss-Seidel between the drive and the mimic converges at r_AA / (r_AA + r_BB) per iteration."""
    art = artic.Articulation("snippet")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(32, 1)
    art.sleep_threshold = 0.0
    root = art.create_link(None, Transform(), "root")
    root.attach_shape(artic.Sphere(0.5))
    joints = []
    for name, x, jtype, ax in (("A", -5.0, JointType.REVOLUTE, Axis.TWIST), ("B", 5.0, JointType.PRISMATIC, Axis.X)):
        link = art.create_link(root, None, name)
        link.attach_shape(artic.Box((0.5, 0.5, 0.5)))
        clean(link, link.inbound_joint)
        j = link.inbound_joint
        j.parent_pose = Transform((x, 0.0, 0.0))
        j.set_joint_type(jtype)
        j.set_motion(ax, Motion.FREE)
        joints.append(j)
    clean(root)
    joints[0].set_drive_params(Axis.TWIST, Drive(1e10, 0.0, 3.4e38, DriveType.FORCE))
    art.create_mimic_joint(joints[0], Axis.TWIST, joints[1], Axis.X, 1.0, 0.0)
    scene = artic.Scene(1, gravity=(0.0, -9.81, 0.0), solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    dt, target, direction = 0.016777, 0.0, 1.0
    for _ in range(120):
        target += 5.0 * dt * direction
        if abs(target) > 1.0:
            direction = -direction
            target = np.clip(target, -1.0, 1.0)
        cache.joint_target_positions[0, 0] = target
        art.apply_cache(cache, CacheFlag.JOINT_TARGET_POSITIONS)
        scene.step(dt)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        qa, qb = cache.joint_position[0]
        assert qa == pytest.approx(target, abs=1e-5)
        assert abs(qa + qb) < tol


def test_n_dof_differential():
    """q0 + G1 q1 + G2 q2 + gamma = 0 with q1, q2 driven independently: q0 follows -(G1 q1 + G2 q2 + gamma)."""
    art = artic.Articulation("differential")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(8, 1)
    root = art.create_link(None, Transform(), "root")
    joints = []
    for i in range(3):
        link = art.create_link(root, None, f"w{i}")
        link.mass = 0.5 + i
        j = link.inbound_joint
        j.parent_pose = Transform((float(i), 0.0, 0.0))
        j.set_joint_type(JointType.REVOLUTE_UNWRAPPED)
        j.set_motion(Axis.TWIST, Motion.FREE)
        joints.append(j)
    for j, t in ((joints[1], 0.6), (joints[2], -0.9)):
        j.set_drive_params(Axis.TWIST, Drive(200.0, 20.0, 1e6, DriveType.FORCE))
        j.set_drive_target(Axis.TWIST, t)
    m = art.create_multi_dof_mimic_joint(
        joints[0], Axis.TWIST, [(joints[1], Axis.TWIST, -0.5), (joints[2], Axis.TWIST, -0.5)], 0.1
    )
    assert [g for _, _, g in m.terms] == [1.0, -0.5, -0.5]
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0))
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[0] = [-0.1, 0.0, 0.0]  # start on the constraint
    art.apply_cache(cache, CacheFlag.POSITION)
    worst = 0.0
    for _ in range(240):
        scene.step(DT)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        q = cache.joint_position[0]
        worst = max(worst, abs(q[0] - 0.5 * q[1] - 0.5 * q[2] + 0.1))
    assert worst < 1e-4
    assert q[1:] == pytest.approx([0.6, -0.9], abs=5e-3)
    assert q[0] == pytest.approx(0.5 * 0.6 - 0.5 * 0.9 - 0.1, abs=5e-3)


def test_mimic_validation_and_release():
    """PhysX's rules: same articulation, unlocked dofs, non-zero gear ratio, not the same dof, creation and
    release only outside a scene; parameters may change between steps."""
    art, _, _, mj = sliders()
    a, b = mj.joint_a, mj.joint_b
    art2 = random_tree(np.random.default_rng(1), n_links=3, kinds=("revolute",))
    with pytest.raises(ArticError, match="every joint must belong to articulation 'random'"):
        art2.create_mimic_joint(a, Axis.X, b, Axis.X, 1.0)
    j1, j2 = art2.get_joint("l1"), art2.get_joint("l2")
    ax1, ax2 = j1.dof_axes()[0], j2.dof_axes()[0]
    with pytest.raises(ArticError, match="gear ratio .* must be non-zero"):
        art2.create_mimic_joint(j1, ax1, j2, ax2, 0.0)
    with pytest.raises(ArticError, match="appears twice"):
        art2.create_mimic_joint(j1, ax1, j1, ax1, 1.0)
    locked = next(a for a in Axis if a != ax1)
    with pytest.raises(ArticError, match="is LOCKED"):
        art2.create_mimic_joint(j1, locked, j2, ax2, 1.0)
    with pytest.raises(ArticError, match="remove it from the scene first"):
        art.create_mimic_joint(a, Axis.X, b, Axis.X, 1.0)
    with pytest.raises(ArticError, match="remove it from the scene first"):
        mj.release()
    mj.gear_ratio = -2.0  # allowed between steps
    mj.natural_frequency = 0.0
    scene = art._scene
    scene.step(DT)
    assert mj.gear_ratio == -2.0
    scene.remove_articulation(art)
    mj.release()
    assert art.get_mimic_joints() == []


def test_mimic_and_tendon_softness_are_checked():
    """A MuJoCo softness and PhysX's compliance are exclusive (refused when set, and when the articulation enters a
    scene with both); a softness must be a Softness (a mimic joint's, a fixed tendon's limit_softness) and a soft
    weight >= 0, each refused naming the coupling."""
    art = random_tree(np.random.default_rng(1), n_links=3, kinds=("revolute",))
    j1, j2 = art.get_joint("l1"), art.get_joint("l2")
    ax1, ax2 = j1.dof_axes()[0], j2.dof_axes()[0]
    compliant = art.create_mimic_joint(j1, ax1, j2, ax2, 1.0, natural_frequency=10.0, damping_ratio=1.0)
    with pytest.raises(ArticError, match="mimic joint of articulation 'random'.*set both to 0"):
        compliant.softness = Softness()
    with pytest.raises(ArticError, match="softness must be an artic Softness"):
        compliant.softness = (0.02, 1.0)
    with pytest.raises(ArticError, match="soft_weight must be >= 0"):
        compliant.soft_weight = -1.0
    with pytest.raises(ArticError, match="fixed tendon of articulation 'random': softness must be an artic Softness"):
        art.create_fixed_tendon().limit_softness = "soft"
    compliant.natural_frequency = 0.0
    compliant.softness = Softness((0.05, 0.3))
    compliant.natural_frequency = 10.0  # both again: refused when the articulation enters a scene
    with pytest.raises(ArticError, match="both a MuJoCo softness and a PhysX compliance"):
        artic.Scene(1).add_articulation(art)


def test_mimic_polynomial_is_checked():
    """A polynomial (x0, k2, k3, k4) is 4 numbers, for a two-dof mimic joint only; with it the gear ratio may be 0
    (q_B enters through the polynomial alone), and neither may then be cleared, each refused naming the joint."""
    art = random_tree(np.random.default_rng(1), n_links=4, kinds=("revolute",))
    j1, j2, j3 = art.get_joint("l1"), art.get_joint("l2"), art.get_joint("l3")
    ax1, ax2, ax3 = j1.dof_axes()[0], j2.dof_axes()[0], j3.dof_axes()[0]
    with pytest.raises(ArticError, match="gear ratio of joint 'l2'.* must be non-zero"):
        art.create_mimic_joint(j1, ax1, j2, ax2, 0.0)
    curved = art.create_mimic_joint(j1, ax1, j2, ax2, 0.0, polynomial=(0.1, 1.0, 0.0, 0.0))
    assert curved.polynomial == (0.1, 1.0, 0.0, 0.0)
    with pytest.raises(ArticError, match="mimic joint of articulation 'random': its gear ratio is 0"):
        curved.polynomial = (0.0, 0.0, 0.0, 0.0)
    with pytest.raises(ArticError, match="polynomial must be 4 numbers"):
        curved.polynomial = (0.0, 1.0)
    with pytest.raises(ArticError, match="polynomial must be a number"):
        curved.polynomial = (0.0, "x", 0.0, 0.0)
    linear = art.create_mimic_joint(j2, ax2, j3, ax3, 2.0)
    with pytest.raises(ArticError, match="gear_ratio must be non-zero"):
        linear.gear_ratio = 0.0
    three = art.create_multi_dof_mimic_joint(j1, ax1, [(j2, ax2, 1.0), (j3, ax3, 1.0)])
    with pytest.raises(ArticError, match="a polynomial couples two dofs; this mimic joint has 3"):
        three.polynomial = (0.0, 1.0, 0.0, 0.0)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_panda_gripper_follows_one_driven_finger(solver):
    """panda.urdf's <mimic> (finger2 = finger1) becomes a mimic joint: driving only finger 1 moves finger 2 the
    same way. A drive fighting a hard mimic needs position iterations (the guide's warning): with PhysX's default 4
    the PGS fingers settle 2e-4 m apart, with 16 within 1e-5."""
    art = artic.load_urdf(robot_path("panda"))
    art.set_solver_iteration_counts(16, 1)
    f1 = art.get_joint("panda_finger_joint1")
    f1.set_drive_params(Axis.X, Drive(2000.0, 100.0, 100.0, DriveType.FORCE))
    f1.set_drive_target(Axis.X, 0.03)
    for n in art.dof_names[:7]:
        j = art.get_joint(n)
        j.set_drive_params(Axis.TWIST, Drive(1e4, 100.0, 1e3, DriveType.FORCE))
    scene = artic.Scene(1, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    for _ in range(120):
        scene.step(1.0 / 120.0)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    q1, q2 = cache.joint_position[0, 7:]
    assert q1 == pytest.approx(0.03, abs=2e-3)
    assert q2 == pytest.approx(q1, abs=2e-5)


def test_every_example_robot_data_urdf_with_mimic_tags_loads_with_mimic_joints():
    """Each URDF with <mimic> tags on moving joints loads with one mimic joint per such tag (tags on fixed joints are
    ignored with a warning), and takes a step without non-finite values."""
    import warnings
    import xml.etree.ElementTree as ET

    def moving_mimics(p):
        return [
            j
            for j in ET.parse(p).getroot().findall("joint")
            if j.find("mimic") is not None and j.get("type") != "fixed"
        ]

    files = [p for p in sorted(robots_dir().rglob("*.urdf")) if moving_mimics(p)]
    # the files whose tags sit on moving joints: panda (2), talos_full_v2 (2), alex, romeo, baxter, pr2, tiago_pro
    assert len(files) >= 9
    for path in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            art = artic.load_urdf(path, repair_inertia=True)
        assert len(art.get_mimic_joints()) == len(moving_mimics(path)) > 0, path.name
        scene = artic.Scene(1)
        scene.add_articulation(art)
        scene.step(1.0 / 240.0)
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        assert np.all(np.isfinite(cache.joint_position)), path.name


def _guide_chain(n_pos, solver, mu=0.0, zeta=0.0):
    """The guide's three-link chain: a very stiff drive (1e6) steps joint 1 to 0.8 rad; joint 2 mimics joint 1."""
    art = artic.Articulation("chain3")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(n_pos, 1)
    art.sleep_threshold = 0.0  # a creeping compliant mimic ends each step at rest: keep it awake
    parent = art.create_link(None, Transform(), "root")
    joints = []
    for i in range(2):
        link = art.create_link(parent, None, f"l{i}")
        link.inertia = (0.01, 0.1, 0.1)
        link.cmass_local_pose = Transform((0.25, 0.0, 0.0))
        j = link.inbound_joint
        if i:
            j.parent_pose = Transform((0.5, 0.0, 0.0))
        j.set_joint_type(JointType.REVOLUTE)
        j.set_motion(Axis.SWING2, Motion.FREE)
        joints.append(j)
        parent = link
    joints[0].set_drive_params(Axis.SWING2, Drive(1e6, 100.0, 1e9, DriveType.FORCE))
    joints[0].set_drive_target(Axis.SWING2, 0.8)
    art.create_mimic_joint(joints[1], Axis.SWING2, joints[0], Axis.SWING2, -1.0, 0.0, mu, zeta)
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    c = []
    for _ in range(120):
        scene.step(DT)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        c.append(abs(cache.joint_position[0, 1] - cache.joint_position[0, 0]))
    return np.array(c)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_guide_three_link_chain(solver):
    """The guide's drive-versus-mimic chain (docs/mimic_and_tendons.md has the table): with a hard mimic the worst
    |C| falls as position iterations grow (PGS 2.2, 1.1, 0.073, 1e-6 for 1, 4, 16, 64) and, with 4, |C| jitters
    (its change reverses >= 10 times in 2 s); a compliant mimic (mu 20, zeta 1.5) decays smoothly (<= 3 reversals)
    to below 2e-3."""
    worst = [_guide_chain(n, solver).max() for n in (1, 4, 16, 64)]
    assert all(a > b for a, b in itertools.pairwise(worst))

    def reversals(c):
        return int(np.sum(np.diff(np.sign(np.diff(c))) != 0))

    assert reversals(_guide_chain(4, solver)) >= 10
    soft = _guide_chain(4, solver, 20.0, 1.5)
    assert reversals(soft) <= 3
    assert soft[-1] < 2e-3
