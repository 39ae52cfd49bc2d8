"""Building and driving many bodies at once: `scene.adding()` groups the scene once instead of once per add, and
`set_kinematic_targets` writes many kinematic targets in one go; both give exactly what the one-by-one calls give."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import StateError, Transform, ValidationError

E = 3


def _chain(scene: artic.Scene, batched: bool) -> tuple[list, list]:
    """Five free bodies hanging from each other by soft spherical joints, each pulled by a kinematic handle."""
    bodies, handles = [], []

    def build():
        for k in range(5):
            b = artic.RigidDynamic(Transform((0.0, 0.0, 1.0 - 0.2 * k)), f"b{k}")
            b.attach_shape(artic.Sphere(0.05))
            b.update_mass_and_inertia(1000.0)
            scene.add_actor(b)
            h = artic.RigidDynamic(Transform((0.1, 0.0, 1.0 - 0.2 * k)), f"h{k}")
            h.kinematic = True
            h.link.mass, h.link.inertia = 1.0, (1e-3, 1e-3, 1e-3)
            scene.add_actor(h)
            if k:
                j = artic.SphericalJoint.from_body_frames(
                    b, Transform((0.0, 0.0, 0.1)), bodies[-1], Transform((0.0, 0.0, -0.1)), f"j{k}"
                )
                scene.add_joint(j)
            pull = artic.SphericalJoint.from_body_frames(b, Transform((0.1, 0.0, 0.0)), h, Transform(), f"p{k}")
            pull.set_erp_cfm([0.2] * 3, [1e-3] * 3)
            scene.add_joint(pull)
            bodies.append(b)
            handles.append(h)

    if batched:
        with scene.adding():
            build()
    else:
        build()
    return bodies, handles


def _run(batched: bool, targets_at_once: bool) -> np.ndarray:
    scene = artic.Scene(E, gravity=(0.0, 0.0, 0.0))  # the handles alone move the chain
    bodies, handles = _chain(scene, batched)
    direction = np.random.default_rng(0).normal(size=(E, 1, 3))  # one per env: the chain sways as a whole
    out = []
    for step in range(20):
        poses = np.zeros((E, len(handles), 7))
        poses[..., :3] = [[0.1, 0.0, 1.0 - 0.2 * k] for k in range(len(handles))]
        poses[..., :3] += 0.05 * np.sin(0.2 * step) * direction  # a smooth sway
        poses[..., 6] = 1.0
        if targets_at_once:
            scene.set_kinematic_targets(handles, poses)
        else:
            for k, h in enumerate(handles):
                scene.set_kinematic_target(h, poses[:, k])
        scene.step(0.01)
        out.append(np.stack([scene.get_actor_pose(b) for b in bodies], axis=1))
    return np.array(out)


def test_adding_and_batched_targets_change_nothing():
    reference = _run(batched=False, targets_at_once=False)
    np.testing.assert_array_equal(_run(batched=True, targets_at_once=False), reference)
    np.testing.assert_array_equal(_run(batched=True, targets_at_once=True), reference)
    assert np.abs(reference[-1] - reference[0]).max() > 1e-3  # the handles did move the chain


def test_a_joint_added_inside_adding_has_no_block_until_it_closes():
    scene = artic.Scene(E)
    a = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "a")
    a.attach_shape(artic.Sphere(0.05))
    a.update_mass_and_inertia(1000.0)
    with scene.adding():
        scene.add_actor(a)
        j = scene.add_joint(artic.SphericalJoint.from_body_frames(a, Transform(), None, Transform((0, 0, 1)), "j"))
        with pytest.raises(StateError, match=r"inside `with scene.adding\(\):`.*after the with-block"):
            scene.get_joint_forces(j)
    assert scene.get_joint_forces(j).wrench_a.shape == (E, 6)


def test_batched_targets_are_checked():
    scene = artic.Scene(E)
    _, handles = _chain(scene, batched=True)
    with pytest.raises(ValidationError, match=r"shape \(3, 5, 7\)"):
        scene.set_kinematic_targets(handles, np.zeros((E, 4, 7)))
    bad = np.zeros((E, 5, 7))
    with pytest.raises(ValidationError, match="must not be zero"):
        scene.set_kinematic_targets(handles, bad)
    with pytest.raises(ValidationError, match="needs kinematic RigidDynamics"):
        scene.set_kinematic_targets([scene.articulations[0]], np.tile([0, 0, 0, 0, 0, 0, 1.0], (E, 1, 1)))
