"""Step behaviour: the guide's compensation examples, energy drift, reported quantities, one-step link forces,
the velocity pre-scale, floating bases and sleeping."""

import numpy as np
import pytest

import artic
from artic import ArticError, ArticulationFlag, Axis, CacheFlag, JointType, Motion, SolverType, Transform
from tests.support.scenes import clean, run

G = 9.81


def chain(
    n_links=1,
    gravity=(0.0, -G, 0.0),
    solver=SolverType.PGS,
    com=(1.0, 0.0, 0.0),
    length=1.0,
    make_clean=True,
    envs=1,
    fixed=True,
):
    """Revolute-about-z links, each COM at `com` from its joint, the next joint `length` along x."""
    art = artic.Articulation("chain")
    if fixed:
        art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    parent = art.create_link(None, Transform(), "base")
    if make_clean:
        clean(parent)
    for i in range(n_links):
        link = art.create_link(parent, None, f"l{i}")
        link.mass = 1.0
        link.inertia = (1e-3, 1.0 / 3.0, 1.0 / 3.0)
        link.cmass_local_pose = Transform(com)
        j = link.inbound_joint
        j.set_joint_type(JointType.REVOLUTE)
        j.set_motion(Axis.SWING2, Motion.FREE)
        if i > 0:
            j.parent_pose = Transform((length, 0.0, 0.0))
        if make_clean:
            clean(link, j)
        parent = link
    scene = artic.Scene(envs, gravity=gravity, solver_type=solver)
    scene.add_articulation(art)
    return art, scene


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_gravity_compensation_holds_the_pendulum_for_a_step(solver):
    """The guide: holding torque from compute_gravity_compensation applied as joint force keeps the horizontal
    pendulum at rest after a step."""
    art, scene = chain(solver=solver)
    cache = art.create_cache()
    art.compute_gravity_compensation(cache)
    assert cache.gravity_compensation_force[0, 0] == pytest.approx(G, rel=1e-6)
    cache.joint_force[:] = cache.gravity_compensation_force
    art.apply_cache(cache, CacheFlag.FORCE)
    _, qd = run(art, scene, 1)
    assert abs(qd[0, 0, 0]) < 1e-5


def test_coriolis_and_gravity_compensation_keep_the_double_pendulum_velocities():
    """The guide's double pendulum: joint forces = Coriolis + gravity compensation keep (1, 0) rad/s after a step."""
    art, scene = chain(2)
    cache = art.create_cache()
    cache.joint_position[0] = [0.0, np.pi / 2]
    cache.joint_velocity[0] = [1.0, 0.0]
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    art.compute_coriolis_compensation(cache)
    art.compute_gravity_compensation(cache)
    cache.joint_force[:] = cache.coriolis_force + cache.gravity_compensation_force
    art.apply_cache(cache, CacheFlag.FORCE)
    _, qd = run(art, scene, 1, dt=1.0 / 240.0)
    assert qd[0, 0] == pytest.approx([1.0, 0.0], abs=1e-4)


def _energy(art, cache):
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    art.compute_mass_matrix(cache)
    v = cache.joint_velocity[0].astype(float)
    kinetic = 0.5 * v @ cache.mass_matrix[0].astype(float) @ v
    masses = sum(lk.mass for lk in art.get_links())
    return kinetic + masses * G * art.compute_articulation_com()[0][1]


def test_double_pendulum_energy_drift_tgs():
    """A free, undamped double pendulum released from horizontal: over 10 s at dt = 1/240 with TGS (4, 1) its
    total energy stays within 5 % of the potential-energy scale 2 m g (2 l). Measured: 3.5 %, the same as a float64
    semi-implicit Euler step of the same dynamics (1.360 J both): the drift is the integrator's."""
    art, scene = chain(2, solver=SolverType.TGS)
    cache = art.create_cache()
    e0 = _energy(art, cache)
    energies = []
    for _ in range(40):
        for _ in range(60):
            scene.step(1.0 / 240.0)
        energies.append(_energy(art, cache))
    scale = 2.0 * G * 2.0  # m g h of the two links over their swing
    assert np.abs(np.array(energies) - e0).max() < 0.05 * scale


def test_reported_accelerations_velocities_and_incoming_joint_force():
    """Joint accelerations are (qd1 - qd0)/dt; link velocities equal J qd; a horizontal link held still by
    gravity compensation receives (0, m g, 0) and torque (0, 0, m g d) from its joint, in the child joint frame."""
    art, scene = chain()
    cache = art.create_cache()
    art.compute_gravity_compensation(cache)
    cache.joint_force[:] = cache.gravity_compensation_force
    art.apply_cache(cache, CacheFlag.FORCE)
    scene.step(1.0 / 60.0)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_INCOMING_JOINT_FORCE | CacheFlag.ACCELERATION)
    assert cache.link_incoming_joint_force[0, 1] == pytest.approx([0.0, G, 0.0, 0.0, 0.0, G], abs=1e-4)
    assert cache.link_incoming_joint_force[0, 0] == pytest.approx(np.zeros(6))
    art2, scene2 = chain(2)
    c2 = art2.create_cache()
    _q, qd = run(art2, scene2, 3)
    art2.copy_internal_state_to_cache(c2, CacheFlag.ACCELERATION | CacheFlag.LINK_VELOCITY)
    assert c2.joint_acceleration[0] == pytest.approx((qd[2, 0] - qd[1, 0]) * 60.0, rel=1e-4, abs=1e-4)
    art2.compute_dense_jacobian(c2)
    assert c2.link_velocity[0, 1:].reshape(-1) == pytest.approx(c2.dense_jacobian[0] @ qd[2, 0], abs=1e-5)


def test_link_force_acts_for_one_step():
    """A link force applied through the cache pushes for one step (impulse F dt) and is then cleared."""
    art, scene = chain(gravity=(0.0, 0.0, 0.0))
    cache = art.create_cache()
    cache.link_force[0, 1] = [0.0, 3.0, 0.0]  # +y at the COM, 1 m from the pivot: torque +3
    art.apply_cache(cache, CacheFlag.LINK_FORCE)
    _, qd = run(art, scene, 3)
    i_pivot = 1.0 / 3.0 + 1.0
    assert qd[:, 0, 0] == pytest.approx(np.full(3, 3.0 / 60.0 / i_pivot), rel=1e-5)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_FORCE)
    assert not cache.link_force.any()


def test_joint_velocity_prescale_keeps_the_direction():
    """Two prismatic dofs at (200, 50) with max 100 each and nothing acting: one ratio (0.5) scales both (link
    speed caps raised so that PhysX's max-linear-velocity force does not act as well)."""
    art = artic.Articulation("slides")
    art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    parent = art.create_link(None, Transform(), "base")
    for i, ax in enumerate((Axis.X, Axis.Y)):
        link = art.create_link(parent, None, f"s{i}")
        clean(link, link.inbound_joint)
        link.max_linear_velocity = 1e3
        link.inbound_joint.set_joint_type(JointType.PRISMATIC)
        link.inbound_joint.set_motion(ax, Motion.FREE)
        parent = link
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0))
    scene.add_articulation(art)
    cache = art.create_cache()
    cache.joint_velocity[0] = [200.0, 50.0]
    art.apply_cache(cache, CacheFlag.VELOCITY)
    _, qd = run(art, scene, 1)
    assert qd[0, 0] == pytest.approx([100.0, 25.0], rel=1e-6)


def test_floating_base_falls_and_conserves_momentum():
    """A floating two-link body: under gravity its COM accelerates at g; without gravity, spinning and sliding,
    its momentum drifts only at the integrator's first order: < 2 % over 0.5 s at dt = 1/240 (artic does not apply
    PhysX's momentum fix-ups, physx-notes 9.2; docs/conventions.md)."""
    art, scene = chain(1, gravity=(0.0, 0.0, -G), fixed=False)
    cache = art.create_cache()
    com0 = art.compute_articulation_com()[0]
    run(art, scene, 30)
    t = 30 / 60.0
    art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_VELOCITIES)
    assert cache.root_linear_velocity[0] == pytest.approx([0.0, 0.0, -G * t], rel=1e-4, abs=1e-5)
    assert art.compute_articulation_com()[0][2] == pytest.approx(com0[2] - 0.5 * G * t * t - 0.5 * G * t / 60, rel=1e-3)
    art2, scene2 = chain(1, gravity=(0.0, 0.0, 0.0), fixed=False)
    c2 = art2.create_cache()
    c2.root_linear_velocity[0] = [0.3, -0.1, 0.2]
    c2.root_angular_velocity[0] = [0.5, 1.0, -0.7]
    c2.joint_velocity[0] = [2.0]
    art2.apply_cache(c2, CacheFlag.ROOT_VELOCITIES | CacheFlag.VELOCITY)

    def momentum():
        art2.compute_centroidal_momentum_matrix(c2)
        v = np.concatenate([c2.root_linear_velocity[0], c2.root_angular_velocity[0], c2.joint_velocity[0]])
        return c2.centroidal_momentum_matrix[0] @ v

    h0 = momentum()
    for _ in range(120):
        scene2.step(1.0 / 240.0)
        art2.copy_internal_state_to_cache(c2, CacheFlag.ROOT_VELOCITIES | CacheFlag.VELOCITY)
    h1 = momentum()
    assert np.linalg.norm(h1[:3] - h0[:3]) < 2e-2 * np.linalg.norm(h0[:3])
    assert np.linalg.norm(h1[3:] - h0[3:]) < 2e-2 * np.linalg.norm(h0[3:])


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_sleeping(solver):
    """Notes 8.6: a hanging pendulum at rest with all defaults falls asleep once its wake counter (0.4 s) has
    run out; an env that is moving does not; applying a velocity wakes the sleeping one."""
    art, scene = chain(gravity=(0.0, -G, 0.0), com=(0.0, -1.0, 0.0), make_clean=False, solver=solver, envs=2)
    cache = art.create_cache()
    cache.joint_velocity[1] = 3.0
    art.apply_cache(cache, CacheFlag.VELOCITY)
    view = scene.view(art)
    asleep_at = None
    for k in range(60):
        scene.step(1.0 / 60.0)
        if asleep_at is None and view.is_sleeping()[0]:
            asleep_at = (k + 1) / 60.0
    assert asleep_at is not None and 0.35 <= asleep_at <= 0.45
    assert not view.is_sleeping()[1]
    cache.joint_velocity[:] = 0.0
    cache.joint_velocity[0] = 1.0
    art.apply_cache(cache, CacheFlag.VELOCITY)
    assert not view.is_sleeping()[0]
    _, qd = run(art, scene, 1)
    assert abs(qd[0, 0, 0]) > 0.5


def test_step_input_errors():
    _art, scene = chain()
    for bad in (0.0, -1.0, float("nan"), "x"):
        with pytest.raises(ArticError, match="dt must be"):
            scene.step(bad)
    with pytest.raises(ArticError, match="unknown solver_type"):
        artic.Scene(solver_type=7)


def test_a_links_gravity_scale_weighs_it():
    """Closed form: Link.gravity_scale s is the share of gravity on the link (0: PhysX's eDISABLE_GRAVITY, 1 - g:
    MuJoCo's gravcomp g). Free bodies without damping fall s g t^2 / 2 in t; a scale set after the body entered
    the scene applies from the next step; a non-finite scale is refused."""
    scene = artic.Scene(1, gravity=(0.0, 0.0, -10.0))
    bodies = []
    for k, scale in enumerate((1.0, 0.5, 0.0, -0.2)):
        b = artic.RigidDynamic(artic.Transform((k, 0.0, 0.0)), f"b{k}")
        b.attach_shape(artic.Sphere(0.1, collision_group=0, collision_mask=0))
        b.update_mass_and_inertia(1000.0)
        b.link.linear_damping = 0.0
        b.articulation.sleep_threshold = 0.0  # a weightless body at rest would fall asleep
        b.link.gravity_scale = scale
        scene.add_actor(b)
        bodies.append((b, scale))
    dt, steps = 0.01, 50
    for _ in range(steps):
        scene.step(dt)
    t = dt * steps
    for b, scale in bodies:
        # semi-implicit Euler: z = -s g dt^2 n (n + 1) / 2
        expected = -scale * 10.0 * dt * dt * steps * (steps + 1) / 2
        assert scene.get_actor_pose(b)[0, 2] == pytest.approx(expected, abs=1e-4), scale
    assert abs(expected) > 0.1 * t * t
    b, _ = bodies[2]
    b.link.gravity_scale = 1.0
    scene.step(dt)
    assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(-10.0 * dt, rel=1e-5)
    with pytest.raises(artic.ValidationError, match="gravity_scale"):
        b.link.gravity_scale = float("nan")


def test_before_step_callbacks():
    """Scene.set_before_step: each key's callback is called once per step with its dt before anything moves (it
    sees the state the step starts from), a key set again replaces its callback, None removes it, and a key or
    callback of the wrong kind is refused."""
    art, scene = chain()
    cache = art.create_cache()
    seen = []

    def watch(dt):
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        seen.append((dt, float(cache.joint_position[0, 0])))

    scene.set_before_step("watch", lambda dt: seen.append("old"))
    scene.set_before_step("watch", watch)
    for dt in (0.01, 0.02):
        scene.step(dt)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert [s[0] for s in seen] == [0.01, 0.02]
    assert seen[0][1] == 0.0 and seen[1][1] != 0.0  # the first call saw the rest pose, the second the moved one
    scene.set_before_step("watch", None)
    scene.step(0.01)
    assert len(seen) == 2
    with pytest.raises(ArticError, match="key must be a string"):
        scene.set_before_step(3, watch)
    with pytest.raises(ArticError, match="must be callable"):
        scene.set_before_step("watch", 3)


def test_views_see_every_step_without_being_told():
    """A step no longer tells each articulation view that the state moved (view._catch_up asks the block's step
    count instead): the link velocities, mass matrix and gravity compensation read after steps are those of the
    stepped state, equal to what the same joint state applied through the cache gives, interleaved with reads
    between steps and a cache write."""
    art, scene = chain(3)
    cache = art.create_cache()
    other = art.create_cache()
    for round_ in range(3):
        for _ in range(5 + round_):
            scene.step(1.0 / 120.0)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.LINK_VELOCITY)
        art.compute_mass_matrix(cache)
        art.compute_gravity_compensation(cache)
        stepped = (cache.link_velocity.copy(), cache.mass_matrix.copy(), cache.gravity_compensation_force.copy())
        other.joint_position[:] = cache.joint_position
        other.joint_velocity[:] = cache.joint_velocity
        art.apply_cache(other, CacheFlag.POSITION | CacheFlag.VELOCITY)  # the same state again: all recomputed
        art.copy_internal_state_to_cache(other, CacheFlag.LINK_VELOCITY)
        art.compute_mass_matrix(other)
        art.compute_gravity_compensation(other)
        np.testing.assert_allclose(stepped[0], other.link_velocity, atol=1e-5)
        np.testing.assert_array_equal(stepped[1], other.mass_matrix)
        np.testing.assert_array_equal(stepped[2], other.gravity_compensation_force)
    assert round_ == 2 and np.abs(cache.joint_position).max() > 0.05  # the chain swung between the reads
