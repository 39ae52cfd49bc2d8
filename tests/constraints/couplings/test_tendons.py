"""Fixed and spatial tendons: PhysX's generalized-impulse check (notes 8.5), the implicit-spring closed form,
limits, a spatial tendon as a spring between attachments, and PhysX (SAPIEN) as oracle on a tendon chain."""

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
from tests.support.scenes import clean

DT = 1.0 / 60.0


def rod_chain(n=2, solver=SolverType.PGS, iters=(1, 0), gravity=(0.0, 0.0, 0.0)):
    """Notes 8.5: link0 (fixed) -> link1 -> link2, boxes (0.5, 0.05, 0.05) of mass 1, revolute z at the ends."""
    art = artic.Articulation("rods")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.set_solver_iteration_counts(*iters)
    art.sleep_threshold = 0.0
    links = [art.create_link(None, Transform(), "link0")]
    clean(links[0])
    for i in range(1, n + 1):
        link = art.create_link(links[-1], None, f"link{i}")
        clean(link, link.inbound_joint)
        link.mass = 1.0
        izz = (1.0 + 0.01) / 12.0
        link.inertia = (0.02 / 12.0, izz, izz)
        j = link.inbound_joint
        j.parent_pose = Transform((0.5, 0.0, 0.0))
        j.child_pose = Transform((-0.5, 0.0, 0.0))
        j.set_joint_type(JointType.REVOLUTE)
        j.set_motion(Axis.SWING2, Motion.FREE)
        links.append(link)
    return art, links, solver, gravity


def _finish(art, solver, gravity, q0):
    scene = artic.Scene(1, gravity=gravity, solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[0] = q0
    art.apply_cache(cache, CacheFlag.POSITION)
    return scene, cache


@pytest.mark.parametrize(
    "coefs, expected",
    [((1.0, 1.0), (-0.0165688, -0.0082834)), ((1.0, -1.0), (0.0000001, 0.0081301)), ((1.0, 0.0), (-0.0083136, 0.0))],
)
def test_fixed_tendon_generalized_impulse(coefs, expected):
    """Notes 8.5: stiffness 10, rest 0, q0 = (0.1, 0), PGS (1, 0): M qdot after one step equals PhysX's numbers:
    the tendon force of joint i is a couple between its link and the tendon root, so Q1 = dF1 + dF2, Q2 = dF2."""
    art, links, solver, gravity = rod_chain()
    t = art.create_fixed_tendon()
    t.stiffness = 10.0
    root = t.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links[0])
    a = t.create_tendon_joint(root, Axis.SWING2, coefs[0], coefs[0], links[1])
    t.create_tendon_joint(a, Axis.SWING2, coefs[1], coefs[1], links[2])
    scene, cache = _finish(art, solver, gravity, (0.1, 0.0))
    art.compute_mass_matrix(cache)
    assert cache.mass_matrix[0] == pytest.approx(np.array([[2.668333, 0.834167], [0.834167, 0.334167]]), abs=1e-5)
    scene.step(DT)
    art.copy_internal_state_to_cache(cache, CacheFlag.VELOCITY)
    assert cache.mass_matrix[0] @ cache.joint_velocity[0] == pytest.approx(expected, abs=2e-7)


@pytest.mark.parametrize("k, d", [(10.0, 0.0), (400.0, 20.0), (1e6, 50.0)])
def test_single_joint_tendon_is_an_implicit_spring(k, d):
    """A tendon with one joint (c = 1) on a single rod: L = q pulled to rest length R = 0.4 with stiffness k and
    damping d: one PGS step is the implicit Euler update with r = 1/I_pivot, for soft and very stiff springs."""
    art, links, solver, gravity = rod_chain(n=1)
    t = art.create_fixed_tendon()
    t.stiffness, t.damping, t.rest_length = k, d, 0.4
    root = t.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links[0])
    t.create_tendon_joint(root, Axis.SWING2, 1.0, 1.0, links[1])
    scene, cache = _finish(art, solver, gravity, (0.0,))
    scene.step(DT)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    r = 1.0 / (0.25 + (1.0 + 0.01) / 12.0)
    v1 = DT * r * k * 0.4 / (1.0 + r * DT * (DT * k + d))
    assert cache.joint_velocity[0, 0] == pytest.approx(v1, rel=1e-5)
    assert cache.joint_position[0, 0] == pytest.approx(DT * v1, rel=1e-5)


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS, SolverType.DIRECT])
def test_an_inert_tendon_has_no_rows_until_it_is_given_a_spring(solver):
    """A fixed tendon without spring, damper or limit (an MJCF tendon that only routes actuators) applies nothing
    and gets no rows; given a stiffness after the scene exists, its rows appear at the next step and it acts as one
    stiff from the start (the block's coupling arrays are reallocated for the new row count)."""
    runs = []
    for late in (False, True):
        art, links, _, gravity = rod_chain(solver=solver, iters=(4, 1))
        t = art.create_fixed_tendon()
        t.rest_length = 0.0
        root = t.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links[0])
        a = t.create_tendon_joint(root, Axis.SWING2, 1.0, 1.0, links[1])
        t.create_tendon_joint(a, Axis.SWING2, 1.0, 1.0, links[2])
        if not late:
            t.stiffness = 10.0
        scene, cache = _finish(art, solver, gravity, (0.1, 0.0))
        block = scene.view(art).block
        if late:
            scene.step(DT)  # inert: no force, no rows
            assert block.couplings.row_count == 0
            art.copy_internal_state_to_cache(cache, CacheFlag.VELOCITY)
            assert np.all(cache.joint_velocity == 0.0)
            t.stiffness = 10.0
        for _ in range(20):
            scene.step(DT)
        assert block.couplings.row_count == 2
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        runs.append(cache.joint_position[0].copy())
    # the inert step left the state as it was, so the late run's 20 stiff steps are the early run's
    assert np.abs(runs[0] - (0.1, 0.0)).max() > 1e-3
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-6, atol=1e-9)


def test_fixed_tendon_mirrors_joints_and_its_limit_holds():
    """SnippetFixedTendon's use: coefficients (1, -1), rest 0, drive on joint 1 only: joint 2 follows (L = q1 - q2
    -> 0). With limits [-0.05, 0.05] on L and a stiff limit spring, a drive pulling L apart stops near the limit."""
    art, links, solver, gravity = rod_chain(iters=(8, 1))
    t = art.create_fixed_tendon()
    t.stiffness, t.damping = 200.0, 20.0
    root = t.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links[0])
    a = t.create_tendon_joint(root, Axis.SWING2, 1.0, 1.0, links[1])
    t.create_tendon_joint(a, Axis.SWING2, -1.0, -1.0, links[2])
    links[1].inbound_joint.set_drive_params(Axis.SWING2, Drive(100.0, 10.0, 1e6, DriveType.FORCE))
    links[1].inbound_joint.set_drive_target(Axis.SWING2, 0.5)
    scene, cache = _finish(art, solver, gravity, (0.0, 0.0))
    for _ in range(300):
        scene.step(DT)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    q1, q2 = cache.joint_position[0]
    assert q1 > 0.3 and q2 == pytest.approx(q1, abs=0.02)
    # limit: no rest-length spring; a drive on joint 2 alone pulls q2 to -0.5, which opens L = q1 - q2 to 0.65
    # without the limit; with limits [-0.05, 0.05] and a stiff limit spring, L stays inside (within its softness)
    spans = []
    for limited in (False, True):
        art2, links2, solver, gravity = rod_chain(iters=(8, 1))
        t2 = art2.create_fixed_tendon()
        if limited:
            t2.limit_stiffness, t2.damping = 1e4, 10.0
            t2.set_limit_parameters(-0.05, 0.05)
        r2 = t2.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links2[0])
        a2 = t2.create_tendon_joint(r2, Axis.SWING2, 1.0, 1.0, links2[1])
        t2.create_tendon_joint(a2, Axis.SWING2, -1.0, -1.0, links2[2])
        links2[2].inbound_joint.set_drive_params(Axis.SWING2, Drive(20.0, 2.0, 1e6, DriveType.FORCE))
        links2[2].inbound_joint.set_drive_target(Axis.SWING2, -0.5)
        scene2, cache2 = _finish(art2, solver, gravity, (0.0, 0.0))
        lengths = []
        for _ in range(300):
            scene2.step(DT)
            art2.copy_internal_state_to_cache(cache2, CacheFlag.POSITION)
            lengths.append(cache2.joint_position[0, 0] - cache2.joint_position[0, 1])
        spans.append(np.abs(lengths).max())
    assert spans[0] > 0.6
    assert spans[1] < 0.08  # measured 0.066: the limit spring (1e4) yields a little


def test_spatial_tendon_is_a_spring_between_attachments():
    """A slider (mass 2) on X with a spatial tendon from a base point 1 m behind it to the slider: L = 1 + q is
    pulled to rest length 0.7 with stiffness k and damping d: one PGS step is the implicit Euler update with r = 1/m,
    and the tendon settles the slider at q = -0.3."""
    k, d = 300.0, 10.0
    art = artic.Articulation("spring")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.sleep_threshold = 0.0
    base = art.create_link(None, Transform(), "base")
    slider = art.create_link(base, None, "slider")
    slider.mass = 2.0
    clean(base)
    clean(slider, slider.inbound_joint)
    slider.inbound_joint.set_joint_type(JointType.PRISMATIC)
    slider.inbound_joint.set_motion(Axis.X, Motion.FREE)
    t = art.create_spatial_tendon()
    t.stiffness, t.damping = k, d
    root = t.create_attachment(None, 1.0, (-1.0, 0.0, 0.0), base)
    leaf = t.create_attachment(root, 1.0, (0.0, 0.0, 0.0), slider)
    leaf.set_rest_length(0.7)
    scene, cache = _finish(art, SolverType.PGS, (0.0, 0.0, 0.0), (0.0,))
    scene.step(DT)
    art.copy_internal_state_to_cache(cache, CacheFlag.VELOCITY)
    v1 = -DT * 0.5 * k * 0.3 / (1.0 + 0.5 * DT * (DT * k + d))
    assert cache.joint_velocity[0, 0] == pytest.approx(v1, rel=1e-5)
    for _ in range(600):
        scene.step(DT)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert cache.joint_position[0, 0] == pytest.approx(-0.3, abs=1e-4)


def test_tendon_validation():
    """Tendon joints need a child link of the parent tendon joint's link and an unlocked one-dof axis (a locked one
    only with coefficient 0, routing the tendon past a welded link, and not all of them); creation only outside a
    scene."""
    art, links, _, _ = rod_chain()
    t = art.create_fixed_tendon()
    root = t.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links[0])
    with pytest.raises(ArticError, match="is not a child of the parent tendon joint's link"):
        t.create_tendon_joint(root, Axis.SWING2, 1.0, 1.0, links[2])
    with pytest.raises(ArticError, match="is LOCKED"):
        t.create_tendon_joint(root, Axis.TWIST, 1.0, 1.0, links[1])
    with pytest.raises(ArticError, match="already has a root"):
        t.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, links[1])
    routed, routed_links, _, _ = rod_chain()
    rt = routed.create_fixed_tendon()
    rt.create_tendon_joint(
        rt.create_tendon_joint(None, Axis.SWING2, 1.0, 1.0, routed_links[0]), Axis.TWIST, 0.0, 0.0, routed_links[1]
    )  # coefficient 0: only routes the tendon
    with pytest.raises(ArticError, match="every tendon joint has coefficient 0 on a LOCKED axis"):
        artic.Scene().add_articulation(routed)
    with pytest.raises(ArticError, match="limit low 1.0 > high 0.0"):
        t.set_limit_parameters(1.0, 0.0)
    with pytest.raises(ArticError, match="needs a root tendon joint and at least one child"):
        artic.Scene().add_articulation(art)


_CHAIN_URDF = """<robot name="chain">
  <link name="link0"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  {links}
</robot>"""
_LINK = """<link name="link{i}"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j{i}" type="revolute"><parent link="link{p}"/><child link="link{i}"/>
    <origin xyz="{x} 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="100" velocity="50"/></joint>"""


@pytest.mark.oracle
@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_fixed_tendon_matches_physx(tmp_path, solver):
    """PhysX oracle (SAPIEN, PhysX 5.3): a three-link chain under gravity with a fixed tendon over its joints
    (coefficients 1, 0.5, -1; rest length 0.2; stiffness 30, damping 3), released from a bent pose: joint
    trajectories over 2 s at dt = 1/120 agree within 1e-3 rad (measured in the closing note)."""
    pytest.importorskip("sapien")
    from tests.support.physx_oracle import physx_robot

    path = tmp_path / "chain.urdf"
    path.write_text(
        _CHAIN_URDF.format(links="\n  ".join(_LINK.format(i=i, p=i - 1, x=0.0 if i == 1 else 0.5) for i in (1, 2, 3)))
    )
    coefs, q0, dt = [1.0, 0.5, -1.0], np.array([0.4, -0.3, 0.5]), 1.0 / 120.0
    art = artic.load_urdf(path)
    art.set_solver_iteration_counts(4, 1)
    links = [art.get_link(f"link{i}") for i in range(4)]
    t = art.create_fixed_tendon()
    t.stiffness, t.damping, t.rest_length = 30.0, 3.0, 0.2
    node = t.create_tendon_joint(None, Axis.TWIST, 1.0, 1.0, links[0])
    for link, c in zip(links[1:], coefs, strict=True):
        node = t.create_tendon_joint(node, Axis.TWIST, c, c, link)
    for n in art.dof_names:
        j = art.get_joint(n)
        j.set_friction_params(Axis.TWIST, artic.FrictionParams())
        j.set_max_joint_velocity(Axis.TWIST, 100.0)
    scene = artic.Scene(1, gravity=(0.0, -9.81, 0.0), solver_type=solver)
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_position[0] = q0
    art.apply_cache(cache, CacheFlag.POSITION)
    ps, robot = physx_robot(str(path), solver, dt, (0.0, -9.81, 0.0))
    chain = [robot.find_link_by_name(f"link{i}") for i in range(4)]
    robot.create_fixed_tendon(chain, [1.0] + coefs, [1.0] + coefs, rest_length=0.2, stiffness=30.0, damping=3.0)
    for link in robot.links:
        link.max_linear_velocity, link.max_angular_velocity = 100.0, 50.0
    for j in robot.active_joints:
        j.set_max_velocity(100.0)
    robot.set_qpos(q0)
    worst, moved = 0.0, 0.0
    for _ in range(240):
        scene.step(dt)
        ps.step()
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        worst = max(worst, np.abs(cache.joint_position[0] - robot.qpos).max())
        moved = max(moved, np.abs(robot.qpos - q0).max())
    assert moved > 0.5
    print(f"fixed tendon vs PhysX, {solver.name}: max joint error {worst:.2e} rad")
    assert worst < 1e-3
