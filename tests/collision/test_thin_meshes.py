"""Thin static meshes (issue 25, item 5): a 16 mm table top made of a mesh.

* As triangles (`TriangleMesh`, or a `Mesh` on a static actor): each sample of a body is measured against the
  mesh's nearest triangle only. Before, every triangle the sample projected onto counted, so a box held 5 cm above
  the top was 66 mm behind the bottom face: four contacts at -66 mm with normal (0, 0, -1) drove it down through
  the table (-0.036 m after 0.5 s).
* From MJCF: MuJoCo collides every mesh as its convex hull, static ones too, so `load_mjcf` gives a static mesh
  `static_hull`: the box rests on the table where MuJoCo's does.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import artic
from artic import Box, Material, Transform
from tests.support.bodies import body, run

TOP = 0.75  # table top height [m]
HALF = (0.3, 0.2, 0.008)  # the top's half extents: 16 mm thick


def _box_mesh(half):
    """A box's 8 corners and 12 triangles, counter-clockwise seen from outside."""
    hx, hy, hz = half
    v = np.array([(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)], float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]  # outward normals
    tris = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))], int)
    return v, tris


def test_box_rests_on_a_thin_triangle_mesh():
    """A 10 cm box released 5 cm above a 16 mm table top of 12 triangles lands and rests on it, its contacts
    pointing up; no contact ever points down (what the bottom face gave)."""
    verts, tris = _box_mesh(HALF)
    scene = artic.Scene(1)
    table = artic.RigidStatic(Transform([0.0, 0.0, TOP - HALF[2]]), name="table")
    table.attach_shape(artic.TriangleMesh(vertices=verts, triangles=tris, material=Material(0.5, 0.5, 0.0)))
    scene.add_actor(table)
    b = body(Box((0.05, 0.05, 0.05)), pose=(0.05, 0.02, TOP + 0.05 + 0.05))
    scene.add_actor(b)
    lowest_normal = 1.0
    for _ in range(60):
        scene.step(1.0 / 120.0)
        r = scene.get_contacts(b)
        if r.count[0]:
            lowest_normal = min(lowest_normal, float(r.normal[0, : r.count[0], 2].min()))
    z = scene.get_actor_pose(b)[0, 2]
    assert abs(z - (TOP + 0.05)) < 2e-3, z
    assert lowest_normal > 0.99


def _write_table(tmp_path):
    verts, tris = _box_mesh(HALF)
    with open(tmp_path / "top.obj", "w") as f:
        for p in verts:
            f.write("v {:g} {:g} {:g}\n".format(*p))
        for t in tris + 1:
            f.write("f {} {} {}\n".format(*t))
    xml = f"""<mujoco><asset><mesh name="top" file="top.obj"/></asset><worldbody>
    <geom type="mesh" mesh="top" pos="0 0 {TOP - HALF[2]}"/>
    <body name="box" pos="0.05 0.02 {TOP + 0.1}"><freejoint/><geom type="box" size=".05 .05 .05" mass="1"/></body>
    </worldbody></mujoco>"""
    path = tmp_path / "table.xml"
    path.write_text(xml)
    return path


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.DIRECT], ids=lambda s: s.name)
def test_mjcf_mesh_table_top_holds_a_box_as_in_mujoco(tmp_path, solver):
    """The same table top as an MJCF mesh geom: the box dropped on it rests where MuJoCo's does (its soft contact
    included) after 0.5 s, to 1e-5 m."""
    path = _write_table(tmp_path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    for _ in range(250):
        mujoco.mj_step(m, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    assert model.statics[0].shapes[0].static_hull
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    art = model.articulations[0]
    for _ in range(250):
        scene.step(model.timestep)
    z = scene.get_link_poses(art)[0, 0, 2]
    assert abs(z - d.qpos[2]) < 1e-5, (z, d.qpos[2])


def test_static_hull_is_checked(tmp_path):
    _write_table(tmp_path)
    with pytest.raises(artic.ArticError, match="static_hull"):
        artic.Mesh(str(tmp_path / "top.obj"), static_hull="yes")


def test_box_sinks_no_more_into_a_triangle_mesh_than_into_its_hull():
    """Identity: on the 16 mm top as triangles and as a static hull, a box dropped from 5 cm comes to rest at the
    same height (to 1e-4 m)."""
    heights = []
    for as_hull in (False, True):
        verts, tris = _box_mesh(HALF)
        scene = artic.Scene(1)
        table = artic.RigidStatic(Transform([0.0, 0.0, TOP - HALF[2]]), name="table")
        shape = artic.ConvexMesh(verts) if as_hull else artic.TriangleMesh(vertices=verts, triangles=tris)
        table.attach_shape(shape)
        scene.add_actor(table)
        b = body(Box((0.05, 0.05, 0.05)), pose=(0.05, 0.02, TOP + 0.1))
        scene.add_actor(b)
        poses, _ = run(scene, [b], 90, 1.0 / 120.0)
        heights.append(poses[-1, 0, 2])
    assert abs(heights[0] - heights[1]) < 1e-4, heights
