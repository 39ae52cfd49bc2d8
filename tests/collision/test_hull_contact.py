"""Convex hulls against hulls and boxes: the separating-axis narrow phase (hull_hull.py) checked against a
brute-force separating-axis test in numpy (every face normal and every edge-pair cross product, projecting every
vertex), against closed-form edge crossings, and in resting and stacking simulations."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import Box, ConvexMesh, Cylinder, SolverType, Transform
from artic.math.hull import convex_hull
from artic.math.np_spatial import quat_to_matrix
from tests.support.bodies import body


def _world_verts(points, pose7):
    verts, _ = convex_hull(points, "test")
    return verts @ quat_to_matrix(pose7[3:]).T + pose7[:3]


def _axes(va, vb):
    """Candidate separating axes of two point sets' hulls, both orientations: the hulls' face normals and the cross
    products of their triangulations' edges (coplanar faces' diagonals included: extra directions never raise the
    largest separation of overlapping shapes above their penetration), brute force and independent of artic."""
    from scipy.spatial import ConvexHull

    hulls = [ConvexHull(v) for v in (va, vb)]
    edges = []
    for h, v in zip(hulls, (va, vb)):
        pairs = {tuple(sorted((s[i], s[(i + 1) % 3]))) for s in h.simplices for i in range(3)}
        edges.append(np.array([v[j] - v[i] for i, j in pairs]))
    cross = np.cross(edges[0][:, None, :], edges[1][None, :, :]).reshape(-1, 3)
    length = np.linalg.norm(cross, axis=1)
    axes = np.concatenate(
        [hulls[0].equations[:, :3], hulls[1].equations[:, :3], cross[length > 1e-9] / length[length > 1e-9, None]]
    )
    return np.concatenate([axes, -axes])


def _separation(va, vb, n):
    """Gap along unit n between a (on the +n side) and b."""
    return (va @ n).min() - (vb @ n).max()


def _sat(va, vb, axes, shift=(0.0, 0.0, 0.0)):
    """Largest separation of a translated by `shift` from b over the given axes."""
    return ((va @ axes.T).min(axis=0) + axes @ np.asarray(shift) - (vb @ axes.T).max(axis=0)).max()


RNG_HULLS = [(0, 10), (1, 14), (2, 24)]


@pytest.mark.parametrize("seed, points", RNG_HULLS)
def test_hull_pairs_match_a_brute_force_separating_axis_test(seed, points):
    """64 random poses of a random hull near a static random hull (and a static box), from 1 cm deep to 3 cm
    apart. Overlapping: artic's contacts share one normal (from the static shape to the body) along which the
    brute-force separation is the brute-force penetration (the largest separation over every axis), and their
    deepest separation is that penetration, to 1e-5 m. Apart but within the summed contact offsets: contacts whose
    separation is a lower bound of the gap (a separating axis of the shapes' faces and edges, never penetration).
    Farther: none."""
    rng = np.random.default_rng(seed)
    envs = 64
    pa = rng.normal(size=(points, 3)) * 0.1
    pb = rng.normal(size=(points, 3)) * 0.08
    box = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.07, 0.07) for z in (-0.05, 0.05)])
    for static_shape, static_points in ((ConvexMesh(pa), pa), (Box((0.1, 0.07, 0.05)), box)):
        scene = artic.Scene(envs, gravity=(0.0, 0.0, 0.0), speculative_contacts="all")
        base = artic.RigidStatic(Transform(), "base")
        base.attach_shape(static_shape)
        scene.add_actor(base)
        b = body(ConvexMesh(pb), pose=(0.0, 0.0, 1.0))
        scene.add_actor(b)
        va = _world_verts(static_points, np.array([0, 0, 0, 0, 0, 0, 1.0]))
        poses = np.zeros((envs, 7))
        expected = np.zeros(envs)
        for e in range(envs):
            q = rng.normal(size=4)
            q /= np.linalg.norm(q)
            d = rng.normal(size=3)
            d /= np.linalg.norm(d)
            target = rng.uniform(-0.01, 0.03)
            vb = _world_verts(pb, np.concatenate([np.zeros(3), q]))
            axes = _axes(vb, va)
            lo, hi = 0.0, 1.0  # bisection on the distance along d for a brute-force separation `target`
            for _ in range(50):
                mid = 0.5 * (lo + hi)
                if _sat(vb, va, axes, d * mid) < target:
                    lo = mid
                else:
                    hi = mid
            poses[e] = np.concatenate([d * hi, q])
            expected[e] = _sat(vb, va, axes, d * hi)
        scene.set_actor_pose(b, poses)
        scene.step(1e-6)
        r = scene.get_contacts(b)
        margin = 2 * 0.02
        overlapping = 0
        for e in range(envs):
            vb = _world_verts(pb, poses[e])
            n = r.count[e]
            if expected[e] > margin + 1e-4:
                assert n == 0
                continue
            if expected[e] > margin - 1e-4:
                continue  # at the margin either answer is right
            assert n >= 1, (e, expected[e])
            normal = r.normal[e, 0]
            assert np.allclose(r.normal[e, :n], normal, atol=1e-6)  # one normal per manifold
            along = _separation(vb, va, normal)
            if expected[e] < 0.0:
                overlapping += 1
                assert along == pytest.approx(expected[e], abs=1e-5)
                assert r.separation[e, :n].min() == pytest.approx(expected[e], abs=1e-5)
            else:
                assert 0.0 <= r.separation[e, :n].min() <= along + 1e-6
        assert overlapping >= 10  # the draw covers both cases


def _wedge(half_length, half_width, height, ridge_up=True):
    """A triangular prism along x: a base 2 half_width wide and a ridge `height` above (or below) it."""
    s = 1.0 if ridge_up else -1.0
    pts = []
    for x in (-half_length, half_length):
        pts += [[x, -half_width, 0.0], [x, half_width, 0.0], [x, 0.0, s * height]]
    return np.array(pts)


@pytest.mark.parametrize("static_kind", ["hull", "box"])
def test_crossing_edges_of_hulls_meet_at_the_crossing(static_kind):
    """A wedge whose ridge points down along y, 5 mm above a static ridge along x (a hull wedge, or a box turned
    45 degrees about x): no vertex of either is near the other, yet the edges cross. One contact at the crossing,
    normal +z, separation 5 mm (closed form)."""
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), speculative_contacts="all")
    if static_kind == "hull":
        base = artic.RigidStatic(Transform(), "base")
        base.attach_shape(ConvexMesh(_wedge(0.2, 0.1, 0.1)))
        top_z = 0.1
    else:
        s, c = np.sin(np.pi / 8), np.cos(np.pi / 8)
        base = artic.RigidStatic(Transform(q=(s, 0.0, 0.0, c)), "base")
        base.attach_shape(Box((0.2, 0.05, 0.05)))
        top_z = 0.05 * np.sqrt(2.0)
    scene.add_actor(base)
    gap = 0.005
    turn = (0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4))  # ridge along y
    top = artic.RigidDynamic(Transform((0.03, -0.02, top_z + gap), turn), "top")
    top.attach_shape(ConvexMesh(_wedge(0.2, 0.1, 0.1, ridge_up=False), local_pose=Transform((0.0, 0.0, 0.1))))
    top.update_mass_and_inertia(1000.0)
    scene.add_actor(top)
    scene.step(1.0 / 120.0)
    r = scene.get_contacts(top)
    assert r.count[0] == 1
    assert r.separation[0, 0] == pytest.approx(gap, abs=1e-6)
    np.testing.assert_allclose(r.normal[0, 0], [0.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(r.point[0, 0], [0.03, 0.0, top_z + gap / 2], atol=1e-6)  # ridge x ridge


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
def test_hull_cube_stack_on_a_hull_platform_stays_up(solver):
    """Three hull cubes (each turned about z) stacked on a static hexagonal hull platform, 4 iterations, 5 s:
    every face contact keeps its corners, the column stays within 1 mm and the heights within 2 mm."""
    scene = artic.Scene(1, solver_type=solver)
    ang = np.linspace(0.0, 2 * np.pi, 6, endpoint=False)
    hexagon = np.array([[0.4 * np.cos(t), 0.4 * np.sin(t), z] for t in ang for z in (-0.1, 0.0)])
    platform = artic.RigidStatic(Transform(), "platform")
    platform.attach_shape(ConvexMesh(hexagon))
    scene.add_actor(platform)
    cube = np.array([[x, y, z] for x in (-0.05, 0.05) for y in (-0.05, 0.05) for z in (-0.05, 0.05)])
    boxes = []
    for k in range(3):
        t = 0.3 * k
        b = body(ConvexMesh(cube), name=f"cube{k}")
        b.set_global_pose(
            Transform((0.0, 0.0, 0.05 + 0.1 * k + 0.001 * (k + 1)), (0.0, 0.0, np.sin(t / 2), np.cos(t / 2)))
        )
        scene.add_actor(b)
        boxes.append(b)
    for b in boxes:
        b.articulation.set_solver_iteration_counts(4, 1)
    for _ in range(600):
        scene.step(1.0 / 120.0)
    for k, b in enumerate(boxes):
        p = scene.get_actor_pose(b)[0]
        assert np.hypot(p[0], p[1]) < 1e-3
        assert p[2] == pytest.approx(0.05 + 0.1 * k, abs=2e-3)
        assert scene.get_contacts(b).count[0] >= 4


@pytest.mark.parametrize("top_kind", ["box", "cylinder"])
def test_edge_or_side_across_a_cylinder_meets_its_top(top_kind):
    """A static cylinder (radius 0.1) lying along x; 5 mm above its top, crossing it at 90 degrees, the bottom edge
    of a box turned 45 degrees about y, or the side of a cylinder lying along y. Their corners are far from the
    other shape (sampling them against the cylinder's distance gave 16 mm, not 5), yet they meet at the top:
    the contact lies over the axis, normal +z, separation 5 mm (closed form; the cylinder's prism has faces
    tangent to it on top)."""
    scene = artic.Scene(1, gravity=(0.0, 0.0, 0.0), speculative_contacts="all")
    base = artic.RigidStatic(Transform(), "base")
    base.attach_shape(Cylinder(0.1, 0.3))
    scene.add_actor(base)
    gap = 0.005
    if top_kind == "box":
        s, c = np.sin(np.pi / 8), np.cos(np.pi / 8)
        top = artic.RigidDynamic(Transform((0.03, 0.0, 0.1 + gap + 0.05 * np.sqrt(2.0)), (0.0, s, 0.0, c)), "top")
        top.attach_shape(Box((0.05, 0.05, 0.05)))
    else:
        turn = (0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4))  # axis along y
        top = artic.RigidDynamic(Transform((0.03, 0.0, 0.2 + gap), turn), "top")
        top.attach_shape(Cylinder(0.1, 0.2))
    top.update_mass_and_inertia(1000.0)
    scene.add_actor(top)
    scene.step(1.0 / 120.0)
    r = scene.get_contacts(top)
    n = r.count[0]
    assert n >= 1
    np.testing.assert_allclose(r.separation[0, :n], gap, atol=1e-6)
    np.testing.assert_allclose(r.normal[0, :n], np.tile([0.0, 0.0, 1.0], (n, 1)), atol=1e-6)
    np.testing.assert_allclose(r.point[0, :n].mean(axis=0), [0.03, 0.0, 0.1 + gap / 2], atol=2e-3)


@pytest.mark.parametrize(
    "pose, height",
    [
        (Transform((0.0, 0.0, 0.62)), 0.6),  # on its side
        (Transform((0.0, 0.0, 0.72), (0.0, np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4))), 0.7),  # upright
    ],
)
def test_cylinder_rests_on_a_static_box(pose, height):
    """A cylinder (radius 0.1, half height 0.2) dropped on a static box's top face (z = 0.5) settles at its radius
    (on its side) or half height (upright) above it, within 1.5 mm, and stops."""
    scene = artic.Scene(1)
    table = artic.RigidStatic(Transform((0.0, 0.0, 0.25)), "table")
    table.attach_shape(Box((0.5, 0.5, 0.25)))
    scene.add_actor(table)
    b = body(Cylinder(0.1, 0.2))
    b.set_global_pose(pose)
    scene.add_actor(b)
    for _ in range(240):
        scene.step(1.0 / 120.0)
    p = scene.get_actor_pose(b)[0]
    assert p[2] == pytest.approx(height, abs=1.5e-3)
    assert np.abs(scene.get_actor_velocity(b)[0]).max() < 1e-2


def test_a_capsule_across_an_edge_meets_it_where_its_axis_passes_closest():
    """A capsule (radius 0.05, half-length 0.3) lies across the top edge of a static box, turned so that the axis
    point nearest the edge is not one of its five samples: the deepest contact's separation is the closed form (the
    axis's distance to the edge line, less the radius), 16 cases from 2 cm deep to 1 cm apart, to 1e-5 m. Before,
    the samples on either side measured it shallower. (A hull's distance function is its largest face-plane
    distance, a lower bound outside: by an edge it reports up to 1 - 1/sqrt(2) of the axis's distance deeper.)"""
    half = 0.2
    shape = Box((half, half, half))
    envs = 16
    scene = artic.Scene(envs, gravity=(0.0, 0.0, 0.0), speculative_contacts="all")
    base = artic.RigidStatic(Transform(), "base")
    base.attach_shape(shape)
    scene.add_actor(base)
    b = body(artic.Capsule(0.05, 0.3), pose=(0.0, 0.0, 2.0))
    scene.add_actor(b)
    # the edge: the line x = z = half along y
    outward = np.array([1.0, 0.0, 1.0]) / np.sqrt(2.0)  # away from the edge, between the two faces
    axis = np.array([1.0, 0.7, -1.0])
    axis /= np.linalg.norm(axis)  # across the edge line, and across the bisecting plane
    gaps = np.linspace(-0.02, 0.01, envs)  # the expected separations
    closest_at = 0.11  # [m] along the axis from the capsule's centre: between the samples at 0 and 0.15
    poses = np.zeros((envs, 7))
    for e, gap in enumerate(gaps):
        near = np.array([half, 0.0, half]) + outward * (0.05 + gap)  # the axis point nearest the edge
        centre = near - axis * closest_at
        x = np.array([1.0, 0.0, 0.0])  # the capsule's axis is its local x: rotate x onto `axis`
        c = np.cross(x, axis)
        q = np.concatenate([c, [1.0 + x @ axis]])
        poses[e] = np.concatenate([centre, q / np.linalg.norm(q)])
    scene.set_actor_pose(b, poses)
    scene.step(1e-6)
    r = scene.get_contacts(b)
    for e in range(envs):
        n = r.count[e]
        assert n >= 1, e
        assert r.separation[e, :n].min() == pytest.approx(_capsule_edge_gap(poses[e], half), abs=1e-5)


def _capsule_edge_gap(pose, half):
    """Closed form: the distance from the capsule's axis segment to the edge line x = z = half (its x-z
    projection's nearest approach, on a fine grid of the segment), less the radius."""
    centre, q = pose[:3], pose[3:]
    axis = quat_to_matrix(q) @ np.array([1.0, 0.0, 0.0])
    points = centre + np.linspace(-0.3, 0.3, 60001)[:, None] * axis
    return np.hypot(points[:, 0] - half, points[:, 2] - half).min() - 0.05
