"""A small block that can touch nothing of another is stepped within it when that changes nothing but the launches
(sim/grouping.py's merge_small): same settings, no sleeping. Identities against the same scenes stepped apart."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
import artic.sim.grouping as grouping
from artic import ArticulationFlag, Axis, JointType, Motion, Transform
from tests.support.bodies import G, body

BOX = 0.1


def _pendulum(name: str, x: float, sleep: float, iterations: tuple[int, int], base_free: bool = False):
    art = artic.Articulation(name)
    if not base_free:
        art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    art.sleep_threshold = sleep
    art.set_solver_iteration_counts(*iterations)
    root = art.create_link(None, Transform((x, 0.0, 2.0)), "base")
    link = art.create_link(root, Transform((x + 0.3, 0.0, 2.0)), "arm")
    for lk in (root, link):
        lk.mass = 1.0
        lk.inertia = (1e-3, 0.01, 0.01)
    j = link.inbound_joint
    j.set_joint_type(JointType.REVOLUTE_UNWRAPPED)  # any angle: test_nothing_joins_under_the_freeze_policy
    j.set_motion(Axis.SWING1, Motion.FREE)
    j.child_pose = Transform((-0.3, 0.0, 0.0))
    j.friction_coefficient = 0.0
    shape = artic.Capsule(0.05, 0.2)
    shape.collision_group, shape.collision_mask = 8, 8
    link.attach_shape(shape)
    return art


def _scene(sleep: float, iterations: tuple[int, int] = (4, 1), nan_policy: str = "warn") -> tuple[artic.Scene, dict]:
    """Pendulums fixed to the world at x = 0, 1 and 5 m, a kinematic box 10 m away, a free box and one that falls
    past the first pendulum (the only pair able to touch: every other shape is in a group of its own); every body
    with `sleep` as its sleep threshold, the first pendulum with `iterations`."""
    scene = artic.Scene(2, solver_type=artic.SolverType.PGS, nan_policy=nan_policy)
    out = {}
    for k, (name, x) in enumerate((("a", 0.0), ("b", 1.0), ("c", 5.0))):
        art = _pendulum(name, x, sleep, iterations if name == "a" else (4, 1))
        art.get_links()[1].shapes[0].collision_group = art.get_links()[1].shapes[0].collision_mask = 8 << k
        scene.add_articulation(art)
        out[name] = art
    for name, x, kinematic, group in (("kinematic", 10.0, True, 2), ("free", 3.0, False, 4), ("under", 0.3, False, 8)):
        shape = artic.Box((BOX, BOX, BOX))
        shape.collision_group = shape.collision_mask = group  # "under" can touch pendulum a: they share its block
        box = body(shape, pose=(x, 0.0, 10.0), name=name)
        box.kinematic = kinematic
        box.articulation.sleep_threshold = sleep
        scene.add_actor(box)
        out[name] = box
    return scene, out


def _run(scene: artic.Scene, bodies: dict, steps: int = 60) -> np.ndarray:
    """The pendulums' angles and speeds and the boxes' poses and velocities after `steps` steps of 1/60 s, the
    kinematic box moved along x at 0.6 m/s by its targets."""
    kin = bodies["kinematic"]
    for k in range(steps):
        pose = np.tile([10.0 + 0.01 * (k + 1), 0.0, 10.0, 0.0, 0.0, 0.0, 1.0], (scene.num_envs, 1))
        scene.set_kinematic_target(kin, pose)
        scene.step(1.0 / 60.0)
    out = []
    for name in ("a", "b", "c"):
        cache = bodies[name].create_cache()
        bodies[name].copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
        out += [cache.joint_position.ravel(), cache.joint_velocity.ravel()]
    for name in ("kinematic", "free", "under"):
        out += [np.asarray(scene.get_actor_pose(bodies[name])).ravel()]
        out += [np.asarray(scene.get_actor_velocity(bodies[name])).ravel()]
    return np.concatenate(out)


def _blocks(scene: artic.Scene) -> list[list[str]]:
    return sorted(sorted(a.name for a in b.arts) for b in scene._blocks)


def test_world_fixed_and_kinematic_bodies_share_a_block_and_step_as_apart(monkeypatch):
    """Without sleeping, the pendulum 1 m from the first one and the kinematic box are stepped within the block of
    the first pendulum and the box falling past it (one launch instead of three); the pendulum 5 m away (beyond
    MERGE_DISTANCE) and the free box (a free body can go anywhere) keep their own. Every body moves as in blocks
    of its own: the pendulums swing (to float32 rounding: 3e-7 of the speed of the one 1 m from the block's
    origin), the kinematic box follows its targets and the free box falls as semi-implicit Euler's."""
    scene, bodies = _scene(sleep=0.0)
    assert _blocks(scene) == [["a", "b", "kinematic", "under"], ["c"], ["free"]]
    together = _run(scene, bodies)
    monkeypatch.setattr(grouping, "MERGE_GEN", -1)
    apart_scene, apart_bodies = _scene(sleep=0.0)
    assert len(apart_scene._blocks) == 5  # a and the box under it share theirs
    apart = _run(apart_scene, apart_bodies)
    assert np.abs(together[:2]).max() > 0.5  # the first pendulum swung
    np.testing.assert_allclose(together, apart, rtol=1e-6, atol=1e-6)
    assert scene.get_actor_pose(bodies["kinematic"])[0, 0] == pytest.approx(10.6, abs=1e-5)
    z = scene.get_actor_pose(bodies["free"])[0, 2]
    assert z == pytest.approx(10.0 - G * (1.0 / 60.0) ** 2 * 60 * 61 / 2, abs=1e-3)


@pytest.mark.parametrize("what", ["sleeping", "iterations"])
def test_blocks_that_could_step_differently_stay_apart(what):
    """A block sleeps as one island and runs its members' largest iteration counts: bodies that may sleep (PhysX's
    default threshold), or whose iteration counts differ, keep blocks of their own."""
    if what == "sleeping":
        scene, _ = _scene(sleep=5e-3)
        assert len(scene._blocks) == 5
    else:
        scene, _ = _scene(sleep=0.0, iterations=(8, 1))
        assert _blocks(scene) == [["a", "under"], ["b"], ["c"], ["free"], ["kinematic"]]


def test_only_small_blocks_join():
    """Only blocks of at most MERGE_GEN coordinates join another: a chain on a free base (7 coordinates) near the
    first pendulum keeps its own block."""
    scene, _ = _scene(sleep=0.0)
    chain = _pendulum("chain", 0.5, 0.0, (4, 1), base_free=True)
    chain.get_links()[1].shapes[0].collision_group = chain.get_links()[1].shapes[0].collision_mask = 64
    scene.add_articulation(chain)
    assert ["chain"] in _blocks(scene)
    assert ["a", "b", "kinematic", "under"] in _blocks(scene)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scene.step(1.0 / 60.0)


def test_nothing_joins_under_the_freeze_policy():
    """nan_policy 'freeze' stops a block's env whole when any of its members goes non-finite: a joined pendulum
    blowing up would freeze its host too (and the host's status would not say so), so under it nothing joins."""
    scene, bodies = _scene(sleep=0.0, nan_policy="freeze")
    assert len(scene._blocks) == 5
    scene.step(1.0 / 60.0)
    cache = bodies["b"].create_cache()
    bodies["b"].copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION)
    cache.joint_position[1] = 1e11  # beyond status.FINITE_LIMIT: the next step reports it lost
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the non-finite state is reported
        bodies["b"].apply_cache(cache, artic.CacheFlag.POSITION)
        for _ in range(5):
            scene.step(1.0 / 60.0)
    assert list(scene.get_env_status(bodies["b"])) == [False, True]  # b is lost in env 1 (and frozen there)
    assert list(scene.get_env_status(bodies["a"])) == [False, False]
    a = bodies["a"].create_cache()
    bodies["a"].copy_internal_state_to_cache(a, artic.CacheFlag.VELOCITY)
    assert a.joint_velocity[1, 0] == a.joint_velocity[0, 0] != 0.0  # pendulum a swings on in both envs
