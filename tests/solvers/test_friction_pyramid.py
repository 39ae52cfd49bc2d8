"""The direct solver's friction pyramid (Scene.direct_friction_facets; constraints/contact_row_form.add_contact_rows):
a box pushed on the ground against the closed forms of Coulomb friction, integrated implicitly as the step does
(v_(n+1) = v* - h mu g along v_(n+1), v* the velocity without friction), and PhysX's box for comparison."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import Box, CacheFlag, Material, SolverType
from tests.support.bodies import G, body, scene_with_ground

MU = 0.5
DT = 1.0 / 240.0


def _pushed_box(facets, push, v0=(0.0, 0.0), steps=60):
    """A 0.2 m box (8 kg) settled on the ground, launched at v0 and pushed by the horizontal force push(step) [N]
    at its centre for `steps` steps. Returns the (steps, 2) horizontal velocities, the (steps, 3) contact forces
    and the scene."""
    scene = scene_with_ground(SolverType.DIRECT, Material(MU, MU, 0.0))
    scene.direct_friction_facets = facets
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1), material=Material(MU, MU, 0.0))
    scene.add_actor(b)
    for _ in range(10):
        scene.step(DT)
    scene.set_actor_velocity(b, [v0[0], v0[1], 0.0, 0.0, 0.0, 0.0])
    cache = b.articulation.create_cache()
    vels, forces = [], []
    for k in range(steps):
        cache.link_force[0, 0] = [*push(k), 0.0]
        b.articulation.apply_cache(cache, CacheFlag.LINK_FORCE)
        scene.step(DT)
        vels.append(scene.get_actor_velocity(b)[0, :2])
        forces.append(scene.get_contacts(b).total_force()[0])
    return np.array(vels), np.array(forces), scene, b


def _implicit_coulomb(accel, v0, steps):
    """The closed form's velocities: each step v* = v + a h, then friction mu g h against v* (or v* removed)."""
    v, out = np.array(v0, float), []
    for k in range(steps):
        vs = v + np.asarray(accel(k)) * DT
        speed = np.linalg.norm(vs)
        v = vs * max(0.0, 1.0 - MU * G * DT / speed) if speed > 0.0 else vs
        out.append(v)
    return np.array(out)


@pytest.mark.parametrize("facets", [8, 16])
def test_a_sliding_box_pushed_sideways_curves_as_coulomb_friction_makes_it(facets):
    """Launched at 2 m/s along x and pushed along y by half its friction: the pyramid's velocities follow implicit
    Coulomb friction to float precision, and the contact force's tangential part is mu N against the slip."""
    push = 0.5 * MU * 8.0 * G
    vels, forces, scene, _ = _pushed_box(facets, lambda k: (0.0, push), v0=(2.0, 0.0), steps=80)
    ref = _implicit_coulomb(lambda k: (0.0, push / 8.0), (2.0, 0.0), 80)
    np.testing.assert_allclose(vels, ref, atol=1e-4)
    assert ref[-1, 1] > 0.3  # the push turned the path by 40 degrees
    tangential = np.linalg.norm(forces[:, :2], axis=1)
    np.testing.assert_allclose(tangential, MU * forces[:, 2], rtol=1e-3)
    along = -np.einsum("ij,ij->i", forces[:, :2], vels) / np.linalg.norm(vels, axis=1)
    np.testing.assert_allclose(along, tangential, rtol=1e-4)  # against the slip
    report = scene.get_solver_report(scene.articulations[-1])
    assert not report["fell_back"].any() and report["fallback_count"].sum() == 0


def test_physx_box_resists_the_sideways_push_while_sliding():
    """The default 4 facets are PhysX's box with t1 along the slip: its face across the slip takes the sideways push
    (up to mu N) on top of mu N against the slip, so the box slides straight on and decelerates at mu g."""
    push = 0.5 * MU * 8.0 * G
    vels, forces, _, _ = _pushed_box(4, lambda k: (0.0, push), v0=(2.0, 0.0), steps=60)
    assert np.abs(vels[:, 1]).max() < 1e-4
    decel = -np.polyfit(np.arange(60) * DT, vels[:, 0], 1)[0]
    assert decel == pytest.approx(MU * G, rel=1e-3)
    tangential = np.linalg.norm(forces[:, :2], axis=1)
    np.testing.assert_allclose(tangential, np.hypot(1.0, 0.5) * MU * forces[:, 2], rtol=2e-3)


@pytest.mark.parametrize("facets", [8, 12, 16])
@pytest.mark.parametrize("degrees", [0.0, 11.25, 22.5, 30.0, 45.0, 67.5, 90.0])
def test_the_pyramid_holds_below_mu_n_and_slides_above_in_every_direction(facets, degrees):
    """From rest, a push of 0.97 mu m g in any horizontal direction is held and one of 1.2 mu m g slides at
    (F - mu m g) / m along the push (closed forms; the disc's, whatever the pyramid's faces)."""
    e = np.array([np.cos(np.radians(degrees)), np.sin(np.radians(degrees))])
    held, _, _, _ = _pushed_box(facets, lambda k: 0.97 * MU * 8.0 * G * e, steps=40)
    assert np.abs(held).max() < 1e-5
    slid, _, _, _ = _pushed_box(facets, lambda k: 1.2 * MU * 8.0 * G * e, steps=40)
    ref = _implicit_coulomb(lambda k: 1.2 * MU * G * e, (0.0, 0.0), 40)
    np.testing.assert_allclose(slid, ref, atol=2e-4)


@pytest.mark.parametrize("degrees, push, holds", [(0.0, 1.05, False), (22.5, 1.05, True), (45.0, 1.35, True)])
def test_physx_box_holds_diagonal_pushes_beyond_mu_n(degrees, push, holds):
    """The box bounds each tangent by mu N, so a sticking contact takes up to mu N / cos 22.5 = 1.08 mu N 22.5
    degrees from its tangents and sqrt 2 mu N at 45: pushes of 1.05 and 1.35 mu m g are held there, and 1.05 along
    a tangent slides at the closed form's rate. At rest t1 is normal x the world's x axis (contact_rows._tangent):
    +y on the ground, so a push along x is along t2."""
    angle = np.radians(degrees)
    e = np.array([np.cos(angle), np.sin(angle)])
    vels, _, _, _ = _pushed_box(4, lambda k: push * MU * 8.0 * G * e, steps=40)
    if holds:
        assert np.abs(vels).max() < 1e-5
    else:
        assert np.linalg.norm(vels[-1]) == pytest.approx((push - 1.0) * MU * G * 40 * DT, rel=0.02)


def test_facets_are_validated_and_a_change_rebuilds_the_rows():
    """Only 4, 8, 12 and 16 are accepted (an ArticError naming the choices); a change between steps takes effect at
    the next step (the direct solver's rows per contact follow it)."""
    scene = scene_with_ground(SolverType.DIRECT, Material(MU, MU, 0.0))
    for bad in (6, 0, 32, True, 8.0, "8", None):
        with pytest.raises(artic.ArticError, match="direct_friction_facets must be one of 4, 8, 12, 16"):
            scene.direct_friction_facets = bad
    assert scene.direct_friction_facets == 4
    b = body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1), material=Material(MU, MU, 0.0))
    scene.add_actor(b)
    scene.step(DT)
    rows_box = scene.get_solver_report(b.articulation)["rows"].copy()
    scene.direct_friction_facets = 16
    scene.step(DT)
    rows_pyramid = scene.get_solver_report(b.articulation)["rows"]
    # 4 normal rows; 2 anchors of 2 rows each became 2 anchors of 8 rows each
    assert rows_pyramid[0] - rows_box[0] == 2 * (8 - 2)
