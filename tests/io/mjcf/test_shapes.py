"""MJCF geoms that have no artic primitive: ellipsoids (an inscribed convex polytope) and height fields (a static
triangle mesh), against the geometry MuJoCo gives them."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import artic
from artic import CacheFlag, ConvexMesh, Sphere, TriangleMesh
from artic.io.mjcf.loader import MjcfError


def _load(tmp_path, body="", world="", asset=""):
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco><asset>{asset}</asset><worldbody>{world}{body}</worldbody></mujoco>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return artic.load_mjcf(path), path


def _rest_height(model, seconds=1.0, dt=0.002):
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    (art,) = model.articulations
    for _ in range(round(seconds / dt)):
        scene.step(dt)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_TRANSFORM)
    return float(cache.root_transform[0, 2])


@pytest.mark.parametrize("euler, vertical", [("0 0 0", 0.1), ("90 0 0", 0.2), ("0 90 0", 0.3)])
def test_ellipsoid_rests_on_the_radius_that_points_down(tmp_path, euler, vertical):
    """An ellipsoid of radii 0.3, 0.2, 0.1 dropped on the floor with each of its axes vertical comes to rest with its
    centre at that axis' radius (to 2 mm), as a real ellipsoid does (it used to collide as a 0.3 m sphere)."""
    model, _ = _load(
        tmp_path,
        world='<geom type="plane" size="5 5 0.1"/>',
        body=f'<body pos="0 0 0.35" euler="{euler}"><freejoint/><geom type="ellipsoid" size="0.3 0.2 0.1"/></body>',
    )
    assert _rest_height(model) == pytest.approx(vertical, abs=2e-3)


def test_ellipsoid_polytope_is_inscribed_and_close(tmp_path):
    """The collision polytope of an ellipsoid (also one given by fromto, whose third radius lies along the segment)
    has its vertices on the ellipsoid and reaches within 5.3 % of its support in every direction; equal radii give
    an exact sphere. One warning names the ellipsoids."""
    path = tmp_path / "e.xml"
    path.write_text(
        '<mujoco><worldbody><body><freejoint/><geom name="e" type="ellipsoid" size="0.3 0.2 0.1"/>'
        '<geom name="f" type="ellipsoid" size="0.05" fromto="0 0 0 0 0 0.4"/>'
        '<geom name="s" type="ellipsoid" size="0.1 0.1 0.1"/></body></worldbody></mujoco>'
    )
    with pytest.warns(RuntimeWarning, match=r"2 ellipsoid geom\(s\) \(first 'e'\)"):
        model = artic.load_mjcf(path)
    e, f, s = model.articulations[0].get_links()[0].shapes
    assert isinstance(s, Sphere) and s.radius == pytest.approx(0.1)
    rng = np.random.default_rng(3)
    dirs = rng.normal(size=(20000, 3))
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    for shape, radii in ((e, np.array([0.3, 0.2, 0.1])), (f, np.array([0.2, 0.05, 0.05]))):  # f: x along fromto
        assert isinstance(shape, ConvexMesh)
        v = shape.vertices
        assert np.allclose(((v / radii) ** 2).sum(axis=1), 1.0)  # on the ellipsoid
        support = (dirs @ v.T).max(axis=1)
        exact = np.linalg.norm(dirs * radii, axis=1)  # an ellipsoid's support function
        assert np.all(support <= exact + 1e-12) and np.all(support >= (1 - 0.053) * exact)
    assert np.allclose(f.local_pose.p, [0.0, 0.0, 0.2])


# one raised grid point inside the -y row: the two ways to split a cell into triangles give different surfaces
_FIELD = '<hfield name="h" nrow="2" ncol="3" size="1 2 0.5 0.1" elevation="1 2 3 1 9 2"/>'


def _mesh_height(mesh, pose, x, y):
    """The height of a triangle mesh's surface above the world point (x, y) (the mesh posed by a translation)."""
    px, py = x - pose.p[0], y - pose.p[1]
    for tri in mesh.triangles:
        a, b, c = mesh.vertices[tri]
        m = np.array([[b[0] - a[0], c[0] - a[0]], [b[1] - a[1], c[1] - a[1]]])
        u, w = np.linalg.solve(m, [px - a[0], py - a[1]])
        if u >= -1e-9 and w >= -1e-9 and u + w <= 1 + 1e-9:
            return pose.p[2] + a[2] + u * (b[2] - a[2]) + w * (c[2] - a[2])
    raise AssertionError(f"({x}, {y}) is outside the mesh")


def test_hfield_surface_is_mujocos(tmp_path):
    """A height field given by elevations is a static triangle mesh whose surface height equals MuJoCo's (its ray
    casts down onto the same field, float32 data) at grid points and inside cells on both sides of the cell
    diagonals."""
    model, path = _load(tmp_path, asset=_FIELD, world='<geom name="t" type="hfield" hfield="h" pos="0.1 0.2 0.3"/>')
    (mesh,) = model.statics[0].shapes
    assert isinstance(mesh, TriangleMesh)
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    geom = np.zeros(1, np.int32)
    for x, y in [
        (-1, -2),
        (0, -2),
        (1, -2),
        (-1, 2),
        (1, 2),
        (-0.5, -1.0),
        (-0.8, 1.5),
        (0.7, 0.3),
        (0.2, -0.9),
        (0.5, -1.5),
    ]:
        x, y = x + 0.1, y + 0.2
        down = mujoco.mj_ray(mj, data, np.array([x, y, 10.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geom)
        assert _mesh_height(mesh, mesh.local_pose, x, y) == pytest.approx(10.0 - down, abs=1e-6)


def test_hfield_without_data_is_a_flat_patch_at_the_geom(tmp_path):
    """dm_control's quadruped terrain: a height field without elevation data is MuJoCo's zeros, a flat rectangle of
    the field's size at the geom's height (two triangles); a ball dropped on it rests on it."""
    model, _ = _load(
        tmp_path,
        asset='<hfield name="h" nrow="201" ncol="201" size="3 2 5 0.1"/>',
        world='<geom type="hfield" hfield="h" pos="0 0 -0.2"/>',
        body='<body pos="0.5 -0.4 0.3"><freejoint/><geom size="0.1"/></body>',
    )
    (mesh,) = model.statics[0].shapes
    assert len(mesh.triangles) == 2
    assert np.allclose(np.abs(mesh.vertices[:, :2]).max(axis=0), [3, 2]) and np.allclose(mesh.vertices[:, 2], 0)
    assert _rest_height(model) == pytest.approx(-0.2 + 0.1, abs=2e-3)


@pytest.mark.parametrize(
    "asset, where, message",
    [
        (
            '<hfield name="h" file="terrain.png" size="1 1 1 0.1"/>',
            "world",
            "height fields from files are not supported",
        ),
        (_FIELD, "body", "height fields are static terrain"),
        (_FIELD.replace('name="h"', 'name="g"'), "world", "attribute hfield='h' names no <hfield>"),
        ('<hfield name="h" nrow="1" ncol="3" size="1 1 1 0.1"/>', "world", "at least 2 rows and 2 columns"),
        ('<hfield name="h" nrow="2" ncol="2" size="1 1 0 0.1"/>', "world", "must all be > 0"),
        ('<hfield name="h" nrow="2" ncol="2" size="1 1 1 0.1" elevation="1 2 3"/>', "world", "expected 4 finite"),
    ],
)
def test_bad_hfields_are_refused(tmp_path, asset, where, message):
    """A height field artic cannot build as MuJoCo does is an MjcfError naming the file, the element and the fix."""
    geom = '<geom type="hfield" hfield="h"/>'
    body = f"<body><freejoint/>{geom}</body>" if where == "body" else ""
    path = tmp_path / "bad.xml"
    path.write_text(
        f"<mujoco><asset>{asset}</asset><worldbody>{geom if where == 'world' else ''}{body}</worldbody></mujoco>"
    )
    with pytest.raises(MjcfError, match=message) as e:
        artic.load_mjcf(path)
    assert "bad.xml" in str(e.value)


@pytest.mark.parametrize(
    "ground",
    [
        '<geom type="plane" size="2 2 .1"/>',
        '<geom type="hfield" hfield="h"/>',
        '<body name="deck" pos="0.1 0 0"><geom type="plane" size="2 2 .1"/></body>',  # welded to a welded body
    ],
)
def test_terrain_on_a_body_welded_to_the_world_holds_as_mujocos(tmp_path, ground):
    """A plane or height field on a body without joints below the world (gym_xarm's floor body; refused before:
    "attach_shape takes an artic shape other than Plane"): the world holds it at the body's pose, and a box dropped
    on the tilted ground comes to rest where MuJoCo's does (1e-3 m)."""
    path = tmp_path / "ground.xml"
    path.write_text(
        '<mujoco><asset><hfield name="h" nrow="2" ncol="2" size="2 2 .05 .1" elevation="0 0 0 0"/></asset>'
        f'<worldbody><body name="floor" pos="0 0 -.1" euler="8 0 0">{ground}</body>'
        '<body name="box" pos="0 0 .3"><freejoint/><geom type="box" size=".1 .1 .1"/></body></worldbody></mujoco>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    for _ in range(500):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    q = model.get_qpos(scene)[0]
    normal, origin = np.array([0.0, -np.sin(np.radians(8)), np.cos(np.radians(8))]), np.array([0.0, 0.0, -0.1])
    height, height_mj = normal @ (q[:3] - origin), normal @ (md.qpos[:3] - origin)
    assert abs(height_mj - 0.1) < 2e-3 and abs(height - height_mj) < 1e-3, (height, height_mj)  # resting on it
    if "hfield" not in ground:  # MuJoCo's box-hfield contacts slide it 2 cm further as it lands; its plane's do not
        np.testing.assert_allclose(q[:3], md.qpos[:3], atol=1e-3)


@pytest.mark.parametrize(
    "geom",
    [
        'type="sphere" size="0.1"',
        'type="capsule" size="0.1 0.2" zaxis="1 0 0"',
        'type="box" size="0.1 0.2 0.1"',
        'type="cylinder" size="0.1 0.2"',
        'type="ellipsoid" size="0.3 0.2 0.1"',
    ],
)
def test_margins_keep_bodies_apart_as_in_mujoco(tmp_path, geom):
    """MuJoCo's geoms rest the sum of their margins apart (0.05 + 0.03 here, against 0 without): a body with a
    margin dropped on a floor with one rests at MuJoCo's height to 1.5 mm. The margins are in the shapes' growth,
    so the contact offsets are 0: a contact exists only while the grown surfaces overlap, as MuJoCo's only within
    the margins."""
    path = tmp_path / "m.xml"
    path.write_text(
        f'<mujoco><worldbody><geom type="plane" size="5 5 0.1" margin="0.03"/><body pos="0 0 0.4">'
        f'<freejoint/><geom {geom} margin="0.05"/></body></worldbody></mujoco>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    for _ in range(500):
        mujoco.mj_step(mj, data)
    assert _rest_height(model) == pytest.approx(data.qpos[2], abs=1.5e-3)
    shapes = model.statics[0].shapes + model.articulations[0].get_links()[0].shapes
    assert all(s.contact_offset == 0.0 for s in shapes)


def test_mesh_margin_is_its_rest_offset(tmp_path):
    """A mesh geom cannot grow by its margin: it becomes the shape's rest offset (its contacts hold it that far
    from the other surface), silently. A 10 cm mesh cube with margin 0.01 dropped on a floor with margin 0.02
    rests at MuJoCo's height (0.03 above touching) to 1.5 mm, where the margin was dropped before."""
    corners = [(x, y, z) for x in (-0.05, 0.05) for y in (-0.05, 0.05) for z in (-0.05, 0.05)]
    faces = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    (tmp_path / "cube.obj").write_text(
        "".join(f"v {x} {y} {z}\n" for x, y, z in corners)
        + "".join(f"f {a} {b} {c}\nf {a} {c} {d}\n" for a, b, c, d in faces)
    )
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><asset><mesh name="c" file="cube.obj"/></asset><worldbody><geom type="plane" size="5 5 0.1" '
        'margin="0.02"/><body pos="0 0 0.2"><freejoint/><geom name="cube" type="mesh" mesh="c" margin="0.01"/>'
        "</body></worldbody></mujoco>"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.filterwarnings("ignore", message=".*not used by artic, without effect")
        model = artic.load_mjcf(path)
    cube = model.articulations[0].get_links()[0].shapes[0]
    assert cube.rest_offset == pytest.approx(0.01)
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    for _ in range(500):
        mujoco.mj_step(mj, data)
    assert data.qpos[2] == pytest.approx(0.08, abs=2e-3)  # MuJoCo keeps it the margins' 0.03 above touching
    assert _rest_height(model) == pytest.approx(data.qpos[2], abs=1.5e-3)


def test_resting_capsule_keeps_its_contacts(tmp_path):
    """A capsule lying on the floor (MuJoCo's default margin 0, so artic's contact offset 0: a soft contact exists
    only while the surfaces overlap) has MuJoCo's contacts at every step of 0.5 s, both ends once it has sunk into
    its soft contacts (one at the first step, where it starts exactly touching: MuJoCo's too), and rests at
    MuJoCo's height to 1e-6 m. Under PhysX's hard rows (soft_constraints=False) the contact offset stays 0.02 m,
    which a hard contact at rest needs: at 0 it was seen only in the steps where it sank in."""
    model, path = _load(
        tmp_path,
        world='<geom type="plane" size="5 5 0.1"/>',
        body='<body pos="0 0 0.05"><freejoint/><geom type="capsule" size="0.05 0.2" zaxis="1 0 0"/></body>',
    )
    mj = mujoco.MjModel.from_xml_path(str(path))
    mj.opt.timestep = 0.0025
    data = mujoco.MjData(mj)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    (art,) = model.articulations
    counts, mj_counts = [], []
    for _ in range(200):
        scene.step(0.0025)
        mujoco.mj_step(mj, data)
        counts.append(int(scene.get_contacts(art).count[0]))
        mj_counts.append(int(data.ncon))
    assert counts == mj_counts and min(counts[1:]) == 2
    assert scene.get_link_poses(art)[0, 0, 2] == pytest.approx(data.qpos[2], abs=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hard = artic.load_mjcf(path, soft_constraints=False)
    assert hard.articulations[0].get_links()[0].shapes[0].contact_offset == pytest.approx(0.02)


def test_friction_combines_by_maximum_and_condim_by_the_larger(tmp_path):
    """MuJoCo takes the larger friction of two geoms (PhysX's combine mode max) and the larger condim: each geom's
    material keeps its friction and its condim (Material.condim), the contact decides (test below)."""
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1" friction="0.5"/><body>'
        '<freejoint/><geom name="slick" size="0.1" condim="1" friction="0.9"/><geom name="rough" '
        'size="0.1" pos="0 0 0.3" friction="0.7"/></body></worldbody></mujoco>'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = artic.load_mjcf(path)
    floor = model.statics[0].shapes[0]
    slick, rough = model.articulations[0].get_links()[0].shapes
    assert [(s.material.static_friction, s.material.condim) for s in (floor, slick, rough)] == [
        (0.5, 3),
        (0.9, 1),
        (0.7, 3),
    ]
    assert {s.material.friction_combine for s in (floor, slick, rough)} == {"max"}
    bad = tmp_path / "bad.xml"
    bad.write_text(path.read_text().replace('condim="1"', 'condim="2"'))
    with pytest.raises(artic.ArticError, match="condim"):
        artic.load_mjcf(bad)


_SLIDER = """<mujoco><option timestep="0.002"/><worldbody>
<geom name="floor" type="plane" size="5 5 .1" friction="%s" condim="%s" priority="%s"/>
<body name="b" pos="0 0 0.03"><freejoint/>
<geom type="box" size="0.2 0.2 0.03" condim="1" friction="0.9" priority="%s"/></body>
</worldbody><keyframe><key qpos="0 0 0.03 1 0 0 0" qvel="2 0 0 0 0 0"/></keyframe></mujoco>"""

# (floor friction, floor condim, floor priority, box priority), the distance MuJoCo's box slides in 0.4 s
SLIDES = {
    "on a condim-3 floor": (("0.5", "3", "0", "0"), 0.225),  # condim 3 (the larger), friction 0.9 (the larger)
    "on a condim-1 floor": (("0.5", "1", "0", "0"), 0.8),  # both condim 1: frictionless
    "box of higher priority": (("0.5", "3", "0", "1"), 0.8),  # the box's condim 1: frictionless
    "floor of higher priority": (("0.3", "3", "1", "0"), 0.56),  # the floor's: condim 3, friction 0.3 (0.406
    # with 0.5, 0.225 with the box's 0.9, 0.8 frictionless)
}


@pytest.mark.parametrize("case", list(SLIDES))
def test_a_condim_1_box_slides_as_mujocos(tmp_path, case):
    """A flat condim-1 box (friction 0.9) launched at 2 m/s along a floor: MuJoCo's contact takes the larger condim
    and friction of two geoms of equal priority (on a condim-3 floor of friction 0.5 the box stops after 0.225 m;
    with the floor's 0.5, as artic had it, 0.406 m; on a condim-1 floor it slides freely), and every parameter of
    the geom of higher priority where they differ. artic follows MuJoCo to 2 mm over 0.4 s under the file's solver
    (measured 4e-4 m). Flat, so that the friction does not tip it."""
    import mujoco

    values, slides = SLIDES[case]
    path = tmp_path / "slider.xml"
    path.write_text(_SLIDER % values)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    artic.MjcfControl(model, scene).set_keyframe(0)
    for _ in range(200):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    x = model.get_qpos(scene)[0][0]
    assert x == pytest.approx(md.qpos[0], abs=2e-3)
    assert md.qpos[0] == pytest.approx(slides, abs=0.03)  # which rule MuJoCo applied (SLIDES)


_BOX_VERTS = "0 0 0  0.2 0 0  0 0.1 0  0 0 0.3  0.2 0.1 0  0.2 0 0.3  0 0.1 0.3  0.2 0.1 0.3"
_BOX_FACES = "0 2 1 1 2 4 0 1 5 0 5 3 0 3 6 0 6 2 1 4 7 1 7 5 2 6 7 2 7 4 3 5 7 3 7 6"


@pytest.mark.parametrize("faces", ["", f' face="{_BOX_FACES}"'], ids=["hull", "faces"])
def test_a_mesh_given_by_its_vertices_is_mujocos(tmp_path, faces):
    """<mesh vertex="..." face="..."> (or vertices alone: MuJoCo takes their hull), scaled, on a free body: mass,
    COM and inertia equal MuJoCo's, and dropped tilted onto the floor the body comes to rest where MuJoCo's does
    (after 2 s: artic's hull makes other contacts than MuJoCo's on the way, and settles 0.1 s later)."""
    import mujoco

    xml = f"""<mujoco><asset><mesh name="m" vertex="{_BOX_VERTS}"{faces} scale="1 2 1"/></asset><worldbody>
    <geom type="plane" size="1 1 .1"/><body pos="0 0 0.5" euler="10 20 0"><freejoint/>
    <geom type="mesh" mesh="m" pos="0.01 0 0"/></body></worldbody></mujoco>"""
    path = tmp_path / "m.xml"
    path.write_text(xml)
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing about the mesh is dropped
        model = artic.load_mjcf(path)
    link = model.articulations[0].get_links()[0]
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-6)
    np.testing.assert_allclose(link.cmass_local_pose.p, mm.body_ipos[1], atol=1e-6)
    np.testing.assert_allclose(sorted(link.inertia), sorted(mm.body_inertia[1]), rtol=1e-6)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    for _ in range(1000):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    assert abs(scene.get_link_poses(model.articulations[0])[0, 0, 2] - md.xpos[1][2]) < 1e-5


@pytest.mark.parametrize(
    "mesh, words",
    [
        ('vertex="0 0 0 1 0 0 0 1 0 0 0 1 1"', "3 per vertex"),
        (f'vertex="{_BOX_VERTS}" face="0 1 8"', "indices in \\[0, 8\\)"),
        ('vertex="0 0 0 1 0 0 0 1 0 1 1 0"', "span no volume"),
        ('vertex="0 0 0 1 0 0 0 1 0 0 0 1"', "needs a name"),
    ],
)
def test_bad_inline_meshes_are_refused_by_name(tmp_path, mesh, words):
    name = "" if "needs a name" in words else ' name="m"'
    path = tmp_path / "m.xml"
    path.write_text(
        f'<mujoco><asset><mesh{name} {mesh}/></asset><worldbody><body><freejoint/><geom type="mesh" mesh="m"/>'
        "</body></worldbody></mujoco>"
    )
    with pytest.raises(artic.MjcfError, match=words):
        artic.load_mjcf(path)


@pytest.mark.parametrize("degrees, expected", [(0.0, 2), (0.001, 2), (0.01, 1), (2.0, 1), (30.0, 1)])
def test_soft_capsule_pairs_make_mujocos_contacts(tmp_path, degrees, expected):
    """Each soft contact point is a spring of its own, so a pair must make MuJoCo's points, not more: two capsules
    crossing at an angle touch at one point, parallel ones (within ~1e-4 rad, as MuJoCo decides) at the two ends of
    their overlap, where MuJoCo puts them; before, artic added both ends within 18 degrees (three springs where
    MuJoCo has one). Checked against MuJoCo's contacts at the same pose."""
    a = np.radians(degrees)
    dx, dy = 0.1 * np.cos(a), 0.1 * np.sin(a)
    path = tmp_path / "capsules.xml"
    path.write_text(
        '<mujoco><option gravity="0 0 0"/><worldbody><geom type="capsule" size=".05" fromto="-.2 0 0 .2 0 0"/>'
        f'<body pos="0.05 0 .09"><freejoint/><geom type="capsule" size=".05" fromto="{-dx} {-dy} 0 {dx} {dy} 0"/>'
        "</body></worldbody></mujoco>"
    )
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    assert data.ncon == expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    scene.step(1e-9)
    report = scene.get_contacts(model.articulations[0])
    assert report.count[0] == expected
    np.testing.assert_allclose(report.separation[0, :expected], [c.dist for c in data.contact[:expected]], atol=2e-6)
    if expected == 2:  # at the ends of the overlap, x = -0.05 and 0.15
        np.testing.assert_allclose(
            sorted(report.point[0, :2, 0]), sorted(c.pos[0] for c in data.contact[:2]), atol=1e-6
        )


@pytest.mark.parametrize("fromto", [".05 .02 0 .15 -.03 .04", "0 0 0 0 0 1", "0 0 1 0 0 0"])
def test_a_box_given_by_fromto_has_mujocos_frame(tmp_path, fromto):
    """A box given by fromto has a square section whose sides depend on the frame about the segment: MuJoCo turns
    the frame's z onto from - to (the smallest turn), and artic's box now has that very frame and half sizes (r, r,
    half length); it had x along to - from before, the section turned by 180 degrees about an axis in its plane,
    so the square's sides pointed elsewhere. Along z, MuJoCo's half turn is about x (checked: both directions)."""
    model, path = _load(tmp_path, body=f'<body><freejoint/><geom type="box" fromto="{fromto}" size=".01"/></body>')
    m = mujoco.MjModel.from_xml_path(str(path))
    (shape,) = model.articulations[0].get_links()[0].shapes
    w, x, y, z = m.geom_quat[0]
    np.testing.assert_allclose(shape.local_pose.q, [x, y, z, w], atol=1e-12)
    np.testing.assert_allclose(shape.local_pose.p, m.geom_pos[0], atol=1e-12)
    np.testing.assert_allclose(shape.half_extents, m.geom_size[0], atol=1e-12)
