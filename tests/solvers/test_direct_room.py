"""The direct solver's rows sized by the contacts a step uses (sim/block.py `direct_contact_slots`,
`plan_direct_growth`): a block's direct arrays start with room for its contact slots' contacts, or for fewer where
all envs' arrays would pass a budget (A and its factor grow with the rows' square); a step whose contacts come near
that room makes it grow for the next steps, and an env whose contacts exceed it is solved by PGS for that step, with
a warning that says so. Before, the rows followed the contact slots, and the file's solver refused real models at
1024 envs (the dm_control humanoid: 1586 rows, 40 MB an env)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import Box
from tests.support.bodies import body, scene_with_ground

DT = 1.0 / 60.0
DIRECT = artic.SolverType.DIRECT


def _box_scene(envs=1, height=0.055):
    """Three 10 cm boxes in a row per env, their faces `height` - 0.05 m above the ground: each lands on its face,
    four corners, twelve contacts in all; the block's pairs can make 24, its slots."""
    scene = scene_with_ground(DIRECT, envs=envs, contact_capacity=64)
    boxes = [body(Box((0.05, 0.05, 0.05)), pose=(0.5 * i, 0.0, height), name=f"box{i}") for i in range(3)]
    for b in boxes:
        scene.add_actor(b)
    return scene, boxes[0]


def _room(monkeypatch, contacts: int) -> None:
    """Blocks built from now on start with room for `contacts` contacts in their direct rows."""
    monkeypatch.setattr("artic.sim.block.DIRECT_START_BYTES", 0)
    monkeypatch.setattr("artic.sim.block.DIRECT_MIN_CONTACTS", contacts)


def _block(scene, b):
    return scene.view(b.articulation).block


def _steps(scene, b, n):
    poses = []
    for _ in range(n):
        scene.step(DT)
        poses.append(scene.get_actor_pose(b)[0])
    return np.array(poses)


def test_contacts_beyond_the_room_are_solved_by_pgs_once_and_the_room_grows(monkeypatch):
    """Room for one contact: the landing step's twelve corners exceed it, so that step is PGS's (warned, with the
    reason, counted), and the next steps have room for 18 (1.5 x 12) and solve directly; the box then rests where
    the same scene with room for all its slots rests, to 1e-4 m."""
    reference, rb = _box_scene()
    want = _steps(reference, rb, 40)
    assert _block(reference, rb).direct_contact_slots() == 24
    assert reference.get_solver_report(rb.articulation)["fallback_count"][0] == 0

    _room(monkeypatch, 1)
    scene, b = _box_scene()
    with pytest.warns(RuntimeWarning, match=r"used PGS for them \(their 12 contacts outnumbered the 1 its rows had "):
        got = _steps(scene, b, 40)
    assert _block(scene, b).direct_contact_slots() == 18
    report = scene.get_solver_report(b.articulation)
    assert report["fallback_count"][0] == 1  # carried over the rebuilt arrays
    assert not report["fell_back"][0]
    assert scene.get_contacts(b).count[0] == 4
    np.testing.assert_allclose(got[-1, :3], want[-1, :3], atol=1e-4)
    assert abs(got[-1, 2] - 0.05) < 2e-3  # resting on its face


def test_the_room_grows_before_it_is_exceeded(monkeypatch):
    """Room for 14: the twelve corners fit (the step is solved directly, as with room for every slot, to float32
    rounding), but fill more than three quarters of it, so the room grows to the 24 slots (twice 14, up to what the
    pairs can make) without a warning or fallback."""
    reference, rb = _box_scene()
    want = _steps(reference, rb, 10)
    _room(monkeypatch, 14)
    scene, b = _box_scene()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _steps(scene, b, 10)
    assert _block(scene, b).direct_contact_slots() == 24
    assert scene.get_solver_report(b.articulation)["fallback_count"][0] == 0
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_a_room_that_cannot_grow_says_so_once(monkeypatch):
    """With the memory check refusing the growth: one warning names it, the env's steps beyond the room are PGS's
    (counted), and the scene steps on."""
    _room(monkeypatch, 1)
    scene, b = _box_scene(height=0.2)
    scene.step(DT)  # the arrays are built with the memory still there, 15 cm above the ground
    monkeypatch.setattr("artic.sim.memory.available_bytes", lambda device: (0, "available memory"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _steps(scene, b, 30)
    said = [str(w.message) for w in caught if "room cannot grow" in str(w.message)]
    assert len(said) == 1 and "available memory" in said[0]
    assert _block(scene, b).direct_contact_slots() == 1
    assert scene.get_solver_report(b.articulation)["fallback_count"][0] >= 10
    assert np.isfinite(scene.get_actor_pose(b)).all()


def test_many_envs_start_within_the_budget():
    """4096 envs of the boxes: the direct rows start with room for 16 contacts (DIRECT_MIN_CONTACTS), not their 24
    slots, since the slots' rows in every env would pass the budget (DIRECT_START_BYTES)."""
    from artic.sim.block import DIRECT_MIN_CONTACTS, DIRECT_START_BYTES
    from artic.sim.builders.arrays import direct_bytes_per_env

    scene, b = _box_scene(envs=4096)
    scene.step(DT)
    block = _block(scene, b)
    assert block.direct_contact_slots() == DIRECT_MIN_CONTACTS == 16
    assert block.direct[0].cfm.shape[1] == block.direct_capacity() < block.direct_capacity(24)
    assert 4096 * direct_bytes_per_env(block.direct_capacity(24), block.model.gen_count) > DIRECT_START_BYTES


def test_a_real_model_at_1024_envs_follows_its_one_env_run():
    """dm_control's humanoid (the file's solver: DIRECT) at 1024 envs, which the direct solver refused before (its
    rows sized for 386 contact slots): it falls onto its floor as the same model does at one env, where the rows
    have room for every slot, to 1e-4 m on every link's height over 0.6 s, with no fallback."""
    suite = pytest.importorskip("dm_control.suite")
    from pathlib import Path

    path = Path(suite.__file__).parent / "humanoid.xml"
    heights = []
    for envs in (1, 1024):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = artic.load_mjcf(str(path))
        scene = artic.Scene(envs, gravity=model.gravity, solver_type=model.solver_type)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.add_to(scene)
        art = model.articulations[0]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(int(0.6 / model.timestep)):
                scene.step(model.timestep)
        heights.append(scene.get_link_poses(art)[:, :, 2])
        assert scene.get_solver_report(art)["fallback_count"].max() == 0
    one, many = heights
    assert np.ptp(many, axis=0).max() < 1e-6  # every env the same
    np.testing.assert_allclose(many[0], one[0], atol=1e-4)
