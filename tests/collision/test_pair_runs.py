"""The narrow phase's runs of pairs between the same two links (sim/builders/geometry.py `_pair_runs`,
collision/narrow.py): skipping a run whose links' centres are beyond its reach drops no contact."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from tests.support.models import suite_mjcf_files

DOG = dict(suite_mjcf_files()).get("dm_control/dog.xml")


def _scene() -> tuple[artic.Scene, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(DOG)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    return scene, model.timestep


def _compare_in_lockstep(runs: artic.Scene, single: artic.Scene, dt: float, steps: int) -> tuple[int, int]:
    """Steps both scenes, `single` with every pair tested on its own; asserts equal contacts and states; returns
    (runs skipped, link-link contacts seen) over the steps."""
    host = runs._blocks[0].geometry_host
    geo = single._blocks[0].geometry
    count = geo.pair_count
    run_end = host["pair_run_end"]
    starts = np.flatnonzero(run_end > np.arange(1, count + 1))
    geo.pair_run_end.assign(np.arange(1, count + 1, dtype=np.int32))  # in place: the recorded launch keeps it
    links = host["geom_link"]
    skipped = link_contacts = 0
    for _ in range(steps):
        runs.step(dt)
        single.step(dt)
        a, b = runs._blocks[0].contact_points, single._blocks[0].contact_points
        n = int(a.count.numpy()[0])
        assert n == int(b.count.numpy()[0])
        for name in ("shape_a", "shape_b", "point", "normal", "separation"):
            np.testing.assert_array_equal(getattr(a, name).numpy()[0, :n], getattr(b, name).numpy()[0, :n])
        link_contacts += int(a.dynamic_count.numpy()[0])
        centers = a.geom_center.numpy()[0, len(links) :]
        for k in starts:
            la, lb = links[host["pair_a"][k]], links[host["pair_b"][k]]
            skipped += int(np.linalg.norm(centers[la] - centers[lb]) > host["pair_run_reach"][k])
    for x, y in zip(runs._blocks, single._blocks):
        np.testing.assert_array_equal(x.state.root_pose.numpy(), y.state.root_pose.numpy())
    return skipped, link_contacts


def _three_sphere_bodies(solver: artic.SolverType) -> artic.Scene:
    scene = artic.Scene(1, solver_type=solver)
    scene.add_actor(artic.create_ground_plane())
    for x, z, yaw in ((0.0, 0.1, 0.0), (0.05, 0.45, 1.2), (5.0, 0.1, 0.0)):
        body = artic.RigidDynamic(artic.Transform((x, 0.0, z), (0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2))))
        for dx in (-0.2, 0.0, 0.2):
            body.attach_shape(artic.Sphere(0.1, local_pose=artic.Transform((dx, 0.0, 0.0))))
        body.update_mass_and_inertia(1000.0)
        scene.add_actor(body)
    return scene


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.DIRECT])
def test_bodies_landing_on_each_other_keep_every_contact(solver):
    """Identity: three bodies of three spheres each (nine pairs a body pair, in runs), one dropped crosswise onto
    another and a third far away: stepped 1 s with the runs and with every pair on its own, the contacts (the
    dropped body's on the other's spheres among them) and the states are the same bit for bit, and the far body's
    runs were skipped."""
    runs, single = _three_sphere_bodies(solver), _three_sphere_bodies(solver)
    runs.step(1.0 / 60.0)
    single.step(1.0 / 60.0)
    skipped, link_contacts = _compare_in_lockstep(runs, single, 1.0 / 60.0, 60)
    assert skipped >= 2 * 59 and link_contacts > 0


@pytest.mark.skipif(DOG is None, reason="dm_control is not installed")
def test_skipping_far_link_pairs_drops_no_contact():
    """Identity on a real model (dm_control's dog, 296 shapes, 6277 candidate pairs in 2371 runs): the dog falls
    and lands for 0.3 s twice in lockstep, once with the runs and once with every pair tested on its own; every
    step's contacts (count, shapes, points, normals, separations) and the state are the same bit for bit, and the
    runs did skip pairs (its contacts are with the floor: the bodies test above has contacts inside runs)."""
    (runs, dt), (single, _) = _scene(), _scene()
    runs.step(dt)
    single.step(dt)
    run_end = runs._blocks[0].geometry_host["pair_run_end"]
    assert np.count_nonzero(run_end > 1 + np.arange(len(run_end))) > 100  # the dog's pairs do come in runs
    skipped, _ = _compare_in_lockstep(runs, single, dt, int(0.3 / dt))
    assert skipped > 0
