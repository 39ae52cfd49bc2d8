"""Spheres and capsules beside thin convex hulls (issue 25, item 5; collision/gjk.py): the reported separation is
the true distance, checked against MuJoCo's `mj_geomDistance` as the oracle.

A hull's face-plane distance (the largest over its faces) is exact inside it but only a lower bound outside, short
by as much as the hull is thin: beside the rim of a 6 mm convex palm a capsule 36 mm away read -1.4 mm and was
pushed away, and at a true 5 mm gap a 12 mm palm read -1.2 mm. Outside, artic now measures a round shape's core
(point or segment) against the hull by GJK.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import artic
from artic import Capsule, ConvexMesh, Sphere, Transform
from artic.math.np_spatial import quat_mul

RADIUS = 0.01  # of the sphere and capsule [m]
HALF = 0.025  # the capsule's half length [m]
OFFSET = 0.05  # contact offset of both shapes [m]: every gap tested here is reported


def _lens_palm() -> np.ndarray:
    """A 90 x 80 mm convex palm 6 mm thick: an outer ring of 16 points at mid-height, an inner ring above and
    below (a lens with a sharp rim, the worst case for face-plane distances)."""
    ang = np.linspace(0.0, 2.0 * np.pi, 16, endpoint=False)
    ring = np.stack([0.045 * np.cos(ang), 0.04 * np.sin(ang)], 1)
    return np.concatenate(
        [np.c_[ring, np.zeros(16)], np.c_[0.6 * ring, np.full(16, -0.003)], np.c_[0.6 * ring, np.full(16, 0.003)]]
    )


def _mujoco_distance(palm: np.ndarray, kind: str, pos: np.ndarray, quat_wxyz: np.ndarray) -> float:
    """MuJoCo's distance between the palm hull and the round shape (its own GJK on the mesh's hull)."""
    vert = " ".join(f"{x:.9g}" for x in palm.ravel())
    size = f"{RADIUS}" if kind == "sphere" else f"{RADIUS} {HALF}"
    xml = f"""<mujoco><asset><mesh name="palm" vertex="{vert}"/></asset><worldbody>
      <geom type="mesh" mesh="palm"/>
      <body pos="{pos[0]:.9g} {pos[1]:.9g} {pos[2]:.9g}" quat="{" ".join(f"{q:.9g}" for q in quat_wxyz)}">
        <geom type="{kind}" size="{size}"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return float(mujoco.mj_geomDistance(m, d, 0, 1, 1.0, np.zeros(6)))


def _artic_contacts(palm: np.ndarray, kind: str, poses: list[tuple[np.ndarray, np.ndarray]]):
    """(E, C) separations and (E, C, 3) normals of the round shape's contacts with the palm (a static hull) for one
    pose per env, with gravity off; read after one tiny step, so the bodies have not moved."""
    scene = artic.Scene(len(poses), gravity=(0.0, 0.0, 0.0), speculative_contacts="all")
    static = artic.RigidStatic(Transform(), "palm")
    static.attach_shape(ConvexMesh(vertices=palm, contact_offset=OFFSET))
    scene.add_actor(static)
    # MuJoCo's capsule lies along its z axis, artic's along x
    shape = Sphere(RADIUS, contact_offset=OFFSET) if kind == "sphere" else Capsule(RADIUS, HALF, contact_offset=OFFSET)
    b = artic.RigidDynamic(Transform(), "round")
    b.attach_shape(shape)
    b.update_mass_and_inertia(1000.0)
    scene.add_actor(b)
    along_z = np.array([0.0, -np.sqrt(0.5), 0.0, np.sqrt(0.5)])  # x to z, (x, y, z, w)
    pose = np.zeros((len(poses), 7))
    for e, (p, q_wxyz) in enumerate(poses):
        q = np.array([*q_wxyz[1:], q_wxyz[0]])
        pose[e, :3] = p
        pose[e, 3:] = quat_mul(q, along_z) if kind == "capsule" else q
    scene.set_actor_pose(b, pose)
    scene.step(1e-9)
    r = scene.get_contacts(b)
    return r.count, r.separation, r.normal


def _poses(palm, kind, gaps, rng):
    """Poses with MuJoCo distance `gap` from the palm: a random direction and orientation, the distance set by
    bisection on MuJoCo's; the first directions face the rim and the flat side."""
    out = []
    for k, gap in enumerate(gaps):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        direction = [np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]), np.array([0.6, 0.0, 0.8])][k % 3]
        if k >= 3:
            direction = rng.normal(size=3)
            direction[2] *= 0.3  # mostly towards the rim, where the plane distance is farthest off
            direction /= np.linalg.norm(direction)
        lo, hi = 0.0, 0.5
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if _mujoco_distance(palm, kind, direction * mid, q) < gap:
                lo = mid
            else:
                hi = mid
        out.append((direction * hi, q, _mujoco_distance(palm, kind, direction * hi, q)))
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_round_shape_beside_a_thin_hull_measures_mujocos_distance(kind):
    """At MuJoCo distances from 0.5 to 36 mm, in 24 random directions (mostly at the rim) and orientations, the
    nearest reported contact's separation is MuJoCo's distance to 2e-5 m, and its normal points from the palm
    towards the shape; nothing is reported deeper (the lower bound gave -1.4 mm at 36 mm)."""
    palm = _lens_palm()
    rng = np.random.default_rng(7)
    gaps = np.tile([0.0005, 0.002, 0.005, 0.012, 0.02, 0.036], 4)
    poses = _poses(palm, kind, gaps, rng)
    count, sep, normal = _artic_contacts(palm, kind, [(p, q) for p, q, _ in poses])
    for e, (p, _, dist) in enumerate(poses):
        n = int(count[e])
        if dist >= OFFSET:
            continue
        assert n >= 1, (e, dist)
        nearest = float(sep[e, :n].min())
        assert abs(nearest - dist) < 2e-5, (e, kind, dist, sep[e, :n])
        # the normal leaves the palm towards the shape: along the shape's offset from the palm's centre, roughly
        c = int(np.argmin(sep[e, :n]))
        assert float(normal[e, c] @ p) > 0.0, (e, normal[e, c], p)


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_round_shape_in_a_thin_hull_keeps_its_depth(kind):
    """Overlapping, the face-plane depth stands (it is exact for a point inside): a shape sunk 2 mm into the
    palm's flat side reports -2 mm, normal +z."""
    palm = _lens_palm()
    q = np.array([1.0, 0.0, 0.0, 0.0])
    if kind == "capsule":  # lying flat: MuJoCo's z axis turned onto x
        q = np.array([np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0])
    p = np.array([0.0, 0.0, 0.003 + RADIUS - 0.002])
    count, sep, normal = _artic_contacts(palm, kind, [(p, q)])
    n = int(count[0])
    assert n >= 1
    np.testing.assert_allclose(sep[0, :n].min(), -0.002, atol=2e-6)
    np.testing.assert_allclose(normal[0, int(np.argmin(sep[0, :n]))], [0.0, 0.0, 1.0], atol=1e-6)
