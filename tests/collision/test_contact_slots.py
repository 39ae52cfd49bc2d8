"""Contact slots that grow (issue 25, item 5; sim/block.py `plan_contact_growth`): a block starts with
Scene(contact_capacity) slots per env; a step that finds more keeps the touching contacts (collision/narrow.py) and
the next steps get at least twice the slots, up to what the block's pairs can make, with a warning that says what
that step left out. Where the larger buffers would not fit the memory, the block stays as it is and says so once.

The other cases (the touching contacts kept over speculative ones, the default capacity never overflowing) are in
tests/constraints/contacts/test_finger_and_filtering.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import Box
from tests.support.bodies import body, scene_with_ground

DT = 1.0 / 60.0


def _boxes_on_ground(heights, capacity):
    """A 10 cm box per env at the given centre heights (0.1: resting on its face, four corners touching)."""
    scene = scene_with_ground(contact_capacity=capacity, envs=len(heights))
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1))
    scene.add_actor(b)
    pose = np.tile(np.array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]), (len(heights), 1))
    pose[:, 2] = heights
    scene.set_actor_pose(b, pose)
    return scene, b


def test_only_the_env_that_needs_more_is_named_and_every_env_gets_the_slots():
    """Three envs, the box resting in env 1 only (the others 1 m up): the warning counts one env, and from the
    next step every env has the box's 4 slots."""
    scene, b = _boxes_on_ground([1.0, 0.1, 1.0], capacity=1)
    with pytest.warns(RuntimeWarning, match=r"wanted up to 4 contact slots in 1 env\(s\), more than their 1"):
        scene.step(DT)
    assert scene.get_contacts(b).count.tolist() == [0, 1, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scene.step(DT)
    report = scene.get_contacts(b)
    assert report.count.tolist() == [0, 4, 0] and report.overflow.tolist() == [0, 0, 0]
    assert report.separation.shape == (3, 4)


def test_slots_that_cannot_grow_are_said_once(monkeypatch):
    """With the memory check patched to refuse anything, the growth is refused: one warning names the reason and
    that contacts are left out; later steps keep dropping (counted in overflow) without warning again."""
    scene, b = _boxes_on_ground([1.0], capacity=2)
    scene.step(DT)  # the step's arrays are allocated at the first step: with the memory still there
    scene.set_actor_pose(b, np.array([[0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]]))
    monkeypatch.setattr("artic.sim.memory.available_bytes", lambda device: (0, "available memory"))
    with pytest.warns(RuntimeWarning, match=r"slots and the slots cannot grow \(.*available memory"):
        scene.step(DT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            scene.step(DT)
    report = scene.get_contacts(b)
    assert report.count[0] == 2 and report.overflow[0] == 2


def test_the_slots_wanted_count_points_not_candidates():
    """A hull resting on the ground with one slot: its eight vertices are candidates, but a pair keeps at most four
    points, so the step wanted 4 slots and dropped 3 (it counted every candidate that found no slot)."""
    scene = scene_with_ground(contact_capacity=1)
    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
    b = body(artic.ConvexMesh(corners), pose=(0.0, 0.0, 0.1))
    scene.add_actor(b)
    with pytest.warns(RuntimeWarning, match=r"wanted up to 4 contact slots .* dropped 3 touching contact"):
        scene.step(DT)
    assert scene.get_contacts(b).overflow[0] == 3


def test_growth_counts_the_direct_solvers_rows_too(monkeypatch):
    """Under the direct solver the rows follow the contact slots (three or four per slot, float64 A and factor):
    the growth's memory check counts them, so memory that holds the larger contact buffers but not the larger direct
    workspace refuses the growth with the warning, instead of the next step raising."""
    from artic.sim.builders.arrays import contact_bytes_per_env, direct_bytes_per_env

    scene, b = _boxes_on_ground([1.0], capacity=2)
    scene.solver_type = artic.SolverType.DIRECT
    scene.step(DT)
    block = scene.view(b.articulation).block
    g = block.model.gen_count
    contacts = contact_bytes_per_env(4, g) - contact_bytes_per_env(2, g)
    rows = direct_bytes_per_env(block.direct_capacity(4), g) - direct_bytes_per_env(block.direct_capacity(), g)
    assert rows > 0
    scene.set_actor_pose(b, np.array([[0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]]))
    monkeypatch.setattr("artic.sim.memory.available_bytes", lambda device: (contacts + rows // 2, "available memory"))
    with pytest.warns(RuntimeWarning, match="slots cannot grow"):
        scene.step(DT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scene.step(DT)  # steps on with its two slots
    assert scene.get_contacts(b).count[0] == 2
