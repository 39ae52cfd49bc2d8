"""Spatial tendons and their actuators on the device (artic/io/mjcf/tendon_kernels.py, muscle_kernels.py) against
MuJoCo 4 and against NumPy's spatial.py and muscles.py, which they replace in the step where one block holds every
tendon link: wraps round spheres and cylinders (side sites outside, inside, none) to MuJoCo's lengths and tangent
points; myo_sim's models at random states and random controls to NumPy's lengths, speeds, link forces and actuator
forces. The trajectories against MuJoCo (test_muscles.py, test_spatial_tendons.py) run through the kernels too."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic.io.mjcf.muscles import SpatialActuators
from artic.io.mjcf.spatial import TendonFrames, TendonSet
from artic.io.mjcf.tendon_kernels import TendonKernels
from tests.io.mjcf.test_spatial_tendons import _load, _random_wraps
from tests.support.nvrtc import ptx_files
from tests.support.wheels import package_root

mujoco = pytest.importorskip("mujoco")


def _any_block(envs=1):
    """A scene with one free body: a block whose state the world-fixed tendons' kernels can be given."""
    scene = artic.Scene(envs)
    b = artic.RigidDynamic(artic.Transform((0.0, 0.0, 1.0)), "b")
    b.attach_shape(artic.Sphere(0.1))
    b.update_mass_and_inertia(1000.0)
    scene.add_actor(b)
    scene.step(0.01)
    return scene, scene.view(b.articulation).block


def test_wraps_on_the_device_match_mujoco(tmp_path):
    """240 world-fixed tendons, each round a random sphere or cylinder with a side site outside, inside or none:
    lengths to 1e-9 m and the tangent points to 1e-6 m (the inside wrap's Newton stop), float64 as MuJoCo."""
    rng = np.random.default_rng(7)
    model, mm = _load(tmp_path, _random_wraps(rng, 240))
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    scene, block = _any_block()
    kernels = TendonKernels(scene, TendonSet(list(model.spatial_tendons.values())), block)
    length, _ = kernels.length_speed()
    np.testing.assert_allclose(length[0], md.ten_length, atol=1e-9)
    points, wrapped = kernels.points.numpy()[0], kernels.wrapped.numpy()[0]
    assert 60 < wrapped.sum() < 180
    for k in range(mm.ntendon):  # one path step per tendon, in tendon order
        adr, num = md.ten_wrapadr[k], md.ten_wrapnum[k]
        assert wrapped[k] == (num == 4)
        if num == 4:
            np.testing.assert_allclose(points[k, 1:3], md.wrap_xpos.reshape(-1, 3)[adr + 1 : adr + 3], atol=1e-6)


def _myo(name: str, envs: int):
    path = package_root("myo_sim") / "models" / "legacy" / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(str(path))
        scene = artic.Scene(envs, gravity=model.gravity, solver_type=model.solver_type)
        model.add_to(scene)
    rng = np.random.default_rng(3)
    for art in model.articulations:  # joint positions moved at random (evaluated, not stepped), random velocities
        cache = art.create_cache()
        art.copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
        q = cache.joint_position
        q[...] = q + rng.normal(scale=0.2, size=q.shape)
        cache.joint_velocity[...] = rng.normal(scale=1.0, size=q.shape)
        art.apply_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
    return model, scene


@pytest.mark.parametrize(
    "name", ["elbow/myoelbow_2dof6muscles.xml", "osl/myolegs_osl.xml"], ids=["myo elbow", "myo legs"]
)
def test_the_kernels_give_numpys_lengths_speeds_and_link_forces(name):
    """Four envs at random states: lengths and speeds to 1e-6 of NumPy's (both from the same float32 poses), the
    link forces and torques of random tensions to 1e-5 of the largest (float32 sums on the device)."""
    model, scene = _myo(name, 4)
    tendons = TendonSet(list(model.spatial_tendons.values()))
    block = scene.view(tendons.links[0].articulation).block
    pose, vel = TendonFrames(scene, tendons).read()
    length, points, dirs, _ = tendons.evaluate(pose)
    speed = tendons.speed(pose, vel, points, dirs)
    kernels = TendonKernels(scene, tendons, block)
    got_length, got_speed = kernels.length_speed()
    np.testing.assert_allclose(got_length, length, atol=1e-6)
    np.testing.assert_allclose(got_speed, speed, atol=1e-6 * max(1.0, np.abs(speed).max()))
    assert np.abs(speed).max() > 0.01  # the random velocities move the tendons
    tension = np.random.default_rng(5).normal(scale=50.0, size=length.shape)
    force, torque = tendons.forces(pose, points, dirs, tension)
    block.control.link_force.zero_()
    block.control.link_torque.zero_()
    kernels.apply(tension)
    cols = [block.link_index[id(lk)] for lk in tendons.links]
    np.testing.assert_allclose(
        block.control.link_force.numpy()[:, cols], force[:, :-1], atol=1e-5 * np.abs(force).max()
    )
    np.testing.assert_allclose(
        block.control.link_torque.numpy()[:, cols], torque[:, :-1], atol=1e-5 * np.abs(torque).max()
    )
    block.control.link_force.zero_()
    block.control.link_torque.zero_()


def test_the_device_actuators_give_numpys_muscle_forces():
    """myo_sim's legs (54 muscles) at random states and random controls in three envs: the actuator forces the device
    path reports equal NumPy's muscle curves at the kernels' lengths and speeds to 1e-6 of the largest; the tensions
    its one launch leaves are the springs, dampers and geared forces summed per tendon, and the link forces it adds
    are those the separate apply launch (checked against NumPy above) gives for those tensions."""
    model, scene = _myo("osl/myolegs_osl.xml", 3)
    actuators = SpatialActuators(model, scene, model.actuators)
    assert actuators.kernels is not None
    block = scene.view(model.articulations[0]).block
    u = np.random.default_rng(11).uniform(0.0, 1.0, size=(3, len(model.actuators)))
    actuators.apply(u)
    got = actuators.force[:, actuators.columns].copy()
    fused = block.control.link_force.numpy().copy(), block.control.link_torque.numpy().copy()
    tension = actuators.kernels.force.numpy().copy()
    length, speed = actuators.kernels.length_speed()
    k = actuators.tendon_of
    want = actuators.actuator_forces(
        u[:, actuators.columns], actuators.gear * length[:, k], actuators.gear * speed[:, k]
    )
    assert np.abs(want).max() > 10.0
    np.testing.assert_allclose(got, want, atol=1e-6 * np.abs(want).max())
    spring = np.clip(length, actuators.spring_low, actuators.spring_high) - length
    want_tension = actuators.stiffness * spring - actuators.damping * speed
    np.add.at(want_tension.T, k, (actuators.gear * want).T)
    np.testing.assert_allclose(tension, want_tension, atol=1e-6 * np.abs(want_tension).max())
    block.control.link_force.zero_()
    block.control.link_torque.zero_()
    actuators.kernels.apply(tension)
    np.testing.assert_allclose(fused[0], block.control.link_force.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fused[1], block.control.link_torque.numpy(), rtol=1e-6, atol=1e-6)
    assert np.abs(fused[0]).max() > 10.0
    block.control.link_force.zero_()
    block.control.link_torque.zero_()


@pytest.mark.parametrize("module", ["artic.io.mjcf.tendon_kernels", "artic.io.mjcf.muscle_kernels"])
def test_the_kernels_compile_for_cuda(tmp_path, module):
    """Both modules' kernels compile to CUDA PTX for sm_90 through NVRTC, without a GPU (artic has not run on one)."""
    import importlib

    importlib.import_module(module)
    assert ptx_files(module, tmp_path)


def test_lengths_follow_a_state_written_between_steps():
    """The kernels read the link poses and velocities a step leaves in the state without recomputing them
    (ArticulationView.ensure_link_state); a joint state written through the cache between steps is read afresh:
    the lengths and speeds are those of the new state (NumPy's on freshly computed kinematics), not the step's."""
    model, scene = _myo("elbow/myoelbow_2dof6muscles.xml", 2)
    art = model.articulations[0]
    tendons = TendonSet(list(model.spatial_tendons.values()))
    kernels = TendonKernels(scene, tendons, scene.view(art).block)
    scene.step(model.timestep)
    after_step = [a.copy() for a in kernels.length_speed()]
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
    cache.joint_position[...] += 0.3
    cache.joint_velocity[...] = -1.0
    art.apply_cache(cache, artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY)
    got = kernels.length_speed()
    pose, vel = TendonFrames(scene, tendons).read()
    length, points, dirs, _ = tendons.evaluate(pose)
    np.testing.assert_allclose(got[0], length, atol=1e-6)
    np.testing.assert_allclose(got[1], tendons.speed(pose, vel, points, dirs), atol=1e-6)
    assert np.abs(got[0] - after_step[0]).max() > 1e-3 and np.abs(got[1] - after_step[1]).max() > 1e-2
