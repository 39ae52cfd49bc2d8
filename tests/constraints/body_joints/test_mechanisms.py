"""Closed chains and maximal coordinates: the slider-crank against its closed-form kinematics (free bodies, and an
articulation closed by a loop joint), and a ragdoll of free bodies against the same ragdoll as an articulation."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import CacheFlag, Transform
from artic.math.np_spatial import quat_rotate
from tests.support.mechanisms import (
    CRANK,
    ROD,
    ragdoll_articulation,
    ragdoll_bodies,
    slider_crank_articulation,
    slider_crank_bodies,
    slider_position,
)

SOLVERS = pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.TGS], ids=["pgs", "tgs"])


@SOLVERS
def test_slider_crank_of_free_bodies_follows_its_closed_form(solver):
    """Closed form: crank, rod and slider as free bodies (four hinges and a slider joint: 20 constraints on 18 dofs,
    two of them redundant), the crank driven at 3 rad/s for 3.5 s (more than a turn, through both dead centres).
    At every step the slider sits at x = r cos(t) + sqrt(l^2 - r^2 sin^2(t)) for the crank pin's position to 1e-4 m,
    the crank pin is at r (cos t, 0, sin t) for the crank hinge's coordinate t (1e-4 m), and t keeps counting past
    2 pi."""
    scene, crank, slider, joints = slider_crank_bodies(3.0, solver=solver)
    err_x = err_pin = err_joint = 0.0
    dt = 0.005
    for _ in range(700):
        scene.step(dt)
        pose = scene.get_actor_pose(crank)[0]
        pin = pose[:3] + quat_rotate(pose[3:], (0.5 * CRANK, 0.0, 0.0))
        err_x = max(err_x, abs(scene.get_actor_pose(slider)[0, 0] - slider_position(pin[0], pin[2])))
        t = scene.get_joint_coordinates(joints[0])[0, 0]
        err_pin = max(err_pin, np.linalg.norm(pin - CRANK * np.array([np.cos(t), 0.0, np.sin(t)])))
        err_joint = max(err_joint, max(np.linalg.norm(scene.get_joint_frames(j).terr[0, :3]) for j in joints))
    assert err_x < 1e-4 and err_pin < 1e-4 and err_joint < 5e-4
    assert t == pytest.approx(3.0 * 700 * dt, rel=0.02)  # 10.5 rad: the velocity drive holds 3 rad/s
    # the slider joint's coordinate is the slider's travel along x from where it was created (r + l)
    assert scene.get_joint_coordinates(joints[3])[0, 0] == pytest.approx(
        scene.get_actor_pose(slider)[0, 0] - (CRANK + ROD), abs=1e-5
    )


@SOLVERS
def test_slider_crank_closed_by_a_loop_joint_follows_its_closed_form(solver):
    """Closed form: a fixed-base articulation (crank; slider carrying the rod) closed by a hinge between the rod's
    end and the crank pin, the crank driven at 3 rad/s. In reduced coordinates the loop's three out-of-plane rows
    have no direction at all (the mechanism is planar); they must drop out, not explode. At every step the
    prismatic joint's position q_s satisfies r + l + q_s = r cos(t) + sqrt(l^2 - r^2 sin^2(t)) for the crank's
    joint position t, to 1e-4 m."""
    scene, art, loop = slider_crank_articulation(3.0, solver=solver)
    cache = art.create_cache()
    err = err_loop = 0.0
    for _ in range(700):
        scene.step(0.005)
        art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
        t, q_s, _ = cache.joint_position[0]
        err = max(err, abs(CRANK + ROD + q_s - slider_position(CRANK * np.cos(t), CRANK * np.sin(t))))
        err_loop = max(err_loop, np.linalg.norm(scene.get_joint_frames(loop).terr[0, :3]))
    assert err < 1e-4 and err_loop < 1e-4
    assert scene.get_joint_forces(loop).bilateral_count[0] == 5  # all five reported, the idle ones at zero


def _ragdoll_gap(dt: float, seconds: float, solver) -> tuple[float, float]:
    """Largest position [m] and rotation [rad] difference between the parts of the ragdoll built as free bodies
    and as an articulation, in one scene, after `seconds` from the same random velocities."""
    scene = artic.Scene(1, solver_type=solver)
    art, links = ragdoll_articulation(Transform((0.0, 0.0, 2.0)))
    scene.add_articulation(art)
    bodies, _ = ragdoll_bodies(scene, links)
    rng = np.random.default_rng(1)
    cache = art.create_cache()
    cache.joint_velocity[:] = rng.normal(size=cache.joint_velocity.shape) * 2.0
    cache.root_angular_velocity[:] = (0.5, -1.0, 0.8)
    cache.root_linear_velocity[:] = (0.2, 0.0, 1.0)
    art.apply_cache(cache, CacheFlag.VELOCITY | CacheFlag.ROOT_VELOCITIES)
    art.copy_internal_state_to_cache(cache, CacheFlag.LINK_VELOCITY)
    for i, name in enumerate(art.link_names):
        scene.set_actor_velocity(bodies[name], cache.link_velocity[:, i])
    for _ in range(int(round(seconds / dt))):
        scene.step(dt)
    reduced = scene.get_link_poses(art)[0].astype(np.float64)
    maximal = np.array([scene.get_actor_pose(bodies[n])[0] for n in art.link_names], dtype=np.float64)
    dot = np.clip(np.abs(np.sum(reduced[:, 3:] * maximal[:, 3:], axis=1)), 0.0, 1.0)
    return np.abs(reduced[:, :3] - maximal[:, :3]).max(), (2.0 * np.arccos(dot)).max()


@SOLVERS
def test_ragdoll_of_free_bodies_matches_the_articulation(solver):
    """Oracle (reduced coordinates): 15 free bodies joined by 6 spherical and 8 revolute body joints, and the same
    ragdoll as one floating articulation, tumble in the same scene for 0.5 s from the same random joint velocities.
    They agree to 5 mm and 0.02 rad at dt = 1/480, and the gap halves with dt (first order: both integrators converge
    to the same motion), so maximal and reduced coordinates give the same answer."""
    coarse = _ragdoll_gap(1.0 / 480.0, 0.5, solver)
    fine = _ragdoll_gap(1.0 / 960.0, 0.5, solver)
    assert coarse[0] < 5e-3 and coarse[1] < 2e-2
    for c, f in zip(coarse, fine):
        assert 0.4 < f / c < 0.6
