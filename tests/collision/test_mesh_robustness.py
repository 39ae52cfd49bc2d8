"""Geometry is robust (issue 14): mesh files read and validated at load, corrupt files refused with an ArticError,
degenerate point sets thickened as documented, NaN poses and sizes refused, robots with meshes step."""

from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest

import artic
from artic import ArticError, Box, Capsule, ConvexMesh, Cylinder, Mesh, Sphere, Transform
from artic.io.mesh_file import MeshFileError
from artic.math.hull import DEGENERATE_THICKNESS_RATIO, convex_hull, hull_topology
from artic.sim.builders.geometry import geometry_arrays
from tests.support.models import robots_dir

TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TETRA_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def _binary_stl(verts, faces) -> bytes:
    out = bytearray(b"\0" * 80) + struct.pack("<I", len(faces))
    for f in faces:
        out += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *verts[i]) for i in f) + b"\0\0"
    return bytes(out)


def _obj(verts, faces) -> str:
    return "".join(f"v {x} {y} {z}\n" for x, y, z in verts) + "".join(
        "f " + " ".join(str(i + 1) for i in f) + "\n" for f in faces
    )


def _urdf_with_mesh(tmp_path, mesh_name: str) -> str:
    body = (
        f'<robot name="r"><link name="hand"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/>'
        f'</inertial><collision><geometry><mesh filename="{mesh_name}"/></geometry></collision></link></robot>'
    )
    (tmp_path / "r.urdf").write_text(body)
    return str(tmp_path / "r.urdf")


GOOD_STL = _binary_stl(TETRA, TETRA_FACES)
CORRUPT = {  # file name -> content: each must be refused with an ArticError naming the file
    "empty.stl": b"",
    "truncated.stl": GOOD_STL[:120],
    "noise.stl": bytes(np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8)),
    "nan.stl": _binary_stl(np.array([[np.nan, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), TETRA_FACES),
    "garbage.obj": b"hello world\nthis is no mesh\n",
    "index_zero.obj": _obj(TETRA, [(0, 1, 2)]).replace("f 1 2 3", "f 0 2 3").encode(),
    "index_negative.obj": _obj(TETRA, [(0, 1, 2)]).replace("f 1 2 3", "f 1 2 -999").encode(),
    "index_too_big.obj": _obj(TETRA, [(0, 1, 2), (0, 1, 7)]).encode(),
    "two_coords.obj": b"v 0 0\nv 1 0\nv 0 1\nf 1 2 3\n",
    "bad_number.obj": b"v 0 0 0\nv 1 zero 0\nv 0 1 0\nf 1 2 3\n",
    "nan.obj": _obj(np.array([[0, 0, np.nan], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), TETRA_FACES).encode(),
    "no_faces.obj": _obj(TETRA, []).encode(),
    "not_xml.dae": b"<COLLADA><unclosed",
    "index_too_big.off": b"OFF\n4 1 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 9\n",
    "short.msh": b"\x04\x00\x00\x00",
    "counts_mismatch.msh": np.array([4, 0, 0, 4], "<i4").tobytes() + TETRA.astype("<f4").tobytes(),
    "index_too_big.msh": np.array([4, 0, 0, 1], "<i4").tobytes()
    + TETRA.astype("<f4").tobytes()
    + np.array([0, 1, 9], "<i4").tobytes(),
    "flat_no_faces.msh": np.array([4, 0, 0, 0], "<i4").tobytes() + (TETRA * [1, 1, 0]).astype("<f4").tobytes(),
    "no_geometry.dae": b'<?xml version="1.0"?><COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" '
    b'version="1.4.1"><asset/></COLLADA>',
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_mesh_file_is_refused_at_construction(tmp_path, name):
    """A corrupt mesh file raises a MeshFileError (an ArticError, never a library exception or a crash) when the
    Mesh is built, naming the file; through a URDF the error also names the link."""
    path = tmp_path / name
    path.write_bytes(CORRUPT[name])
    with pytest.raises(MeshFileError, match=name):
        Mesh(str(path))
    with pytest.raises(artic.UrdfError, match=f"link 'hand'.*{name}"):
        artic.load_urdf(_urdf_with_mesh(tmp_path, name))


def test_missing_mesh_file_is_refused_at_construction(tmp_path):
    """A mesh file that does not exist (or is a folder) is refused when the shape is built, not at the first step."""
    with pytest.raises(MeshFileError, match="not found"):
        Mesh(str(tmp_path / "gone.stl"), name="hand_0")
    with pytest.raises(MeshFileError, match="not a file"):
        Mesh(str(tmp_path))


def test_static_obj_mesh_with_out_of_range_face_is_refused():
    """The issue's crash: a static OBJ mesh whose face index lies past the vertices is an ArticError at load, before
    any scene sees it (it used to crash the process or read garbage at the first step)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ground.obj"
        path.write_text(_obj(TETRA, [(0, 1, 2), (0, 1, 40)]))
        with pytest.raises(MeshFileError, match="face index 41 is out of range"):
            artic.RigidStatic(name="ground").attach_shape(Mesh(str(path), name="floor"))


def test_valid_files_of_every_reader_give_the_same_tetrahedron(tmp_path):
    """Binary STL, ASCII STL, OBJ (with texture/normal indices and a negative index), COLLADA, PLY and OFF all give
    the unit right tetrahedron: volume 1/6, centroid (1/4, 1/4, 1/4)."""
    ascii_stl = (
        "solid t\n"
        + "".join(
            "facet normal 0 0 0\nouter loop\n"
            + "".join(f"vertex {TETRA[i][0]} {TETRA[i][1]} {TETRA[i][2]}\n" for i in f)
            + "endloop\nendfacet\n"
            for f in TETRA_FACES
        )
        + "endsolid t\n"
    )
    obj = _obj(TETRA, []) + "vt 0 0\nvn 0 0 1\nf 1/1/1 3/1/1 2/1/1\nf 1 2 4\nf 1 4 -2\nf 2 3 4\n"
    pos = " ".join(str(x) for x in TETRA.ravel())
    idx = " ".join(str(i) for f in TETRA_FACES for i in f)
    dae = (
        '<?xml version="1.0"?><COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">'
        '<asset><unit meter="1"/><up_axis>Z_UP</up_axis></asset><library_geometries><geometry id="g"><mesh>'
        f'<source id="p"><float_array id="pa" count="12">{pos}</float_array><technique_common>'
        '<accessor source="#pa" count="4" stride="3"><param name="X" type="float"/><param name="Y" type="float"/>'
        '<param name="Z" type="float"/></accessor></technique_common></source><vertices id="v">'
        '<input semantic="POSITION" source="#p"/></vertices><triangles count="4"><input semantic="VERTEX" '
        f'source="#v" offset="0"/><p>{idx}</p></triangles></mesh></geometry></library_geometries>'
        '<library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node>'
        '</visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene></COLLADA>'
    )
    corners = "".join(f"{x} {y} {z}\n" for x, y, z in TETRA)
    faces = "".join(f"3 {a} {b} {c}\n" for a, b, c in TETRA_FACES)
    ply = (
        "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
        "element face 4\nproperty list uchar int vertex_indices\nend_header\n" + corners + faces
    )
    files = {
        "b.stl": GOOD_STL,
        "a.stl": ascii_stl.encode(),
        "t.obj": obj.encode(),
        "t.dae": dae.encode(),
        "t.ply": ply.encode(),
        "t.off": ("OFF\n4 4 0\n" + corners + faces).encode(),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        vol, com, _ = Mesh(str(tmp_path / name)).volume_com_inertia()
        assert vol == pytest.approx(1.0 / 6.0, rel=1e-6), name
        np.testing.assert_allclose(com, [0.25, 0.25, 0.25], atol=1e-6, err_msg=name)


def test_mesh_file_is_read_once_at_construction(tmp_path):
    """The Mesh keeps its vertices: once built, deleting its file changes neither its mass properties nor its
    collision geometry (nothing reads the file at the first step); a new scale re-scales the kept vertices."""
    path = tmp_path / "t.stl"
    path.write_bytes(GOOD_STL)
    mesh = Mesh(str(path), scale=(2.0, 2.0, 2.0))
    path.unlink()
    assert mesh.volume_com_inertia()[0] == pytest.approx(8.0 / 6.0)
    art = artic.Articulation("a")
    art.create_link(None, None, "hand").attach_shape(mesh)
    h, _ = geometry_arrays([art], [], 64)
    assert h["verts"].max() == pytest.approx(2.0)
    mesh.scale = (1.0, 1.0, 3.0)  # a scale change re-scales the cached file: the deleted file is not needed
    assert mesh.volume_com_inertia()[0] == pytest.approx(3.0 / 6.0)


def test_bad_mesh_scale_is_refused(tmp_path):
    """A zero, NaN or malformed mesh scale is refused naming the mesh; a negative (mirroring) scale is accepted and
    keeps the volume."""
    path = tmp_path / "t.stl"
    path.write_bytes(GOOD_STL)
    for bad in ((0.0, 1.0, 1.0), (np.nan, 1.0, 1.0), (1.0, 1.0), "big"):
        with pytest.raises(ArticError, match="mesh 'm'.*scale"):
            Mesh(str(path), scale=bad, name="m")
    assert Mesh(str(path), scale=(-1.0, 1.0, 1.0)).volume_com_inertia()[0] == pytest.approx(1.0 / 6.0)


def test_mjcf_mesh_error_names_body_geom_and_file(tmp_path):
    """A broken mesh asset of an MJCF geom is refused at load, naming the body, the geom and the file."""
    (tmp_path / "bad.obj").write_text("v 0 0 0\nv 1 0 0\nf 1 2 3\n")
    (tmp_path / "m.xml").write_text(
        '<mujoco><asset><mesh name="shell" file="bad.obj"/></asset><worldbody><body name="cup">'
        '<freejoint/><geom name="cup_geom" type="mesh" mesh="shell" mass="1"/></body></worldbody></mujoco>'
    )
    with pytest.raises(ArticError, match="geom 'cup_geom' in body 'cup'.*bad.obj.*face index 3 is out of range"):
        artic.load_mjcf(tmp_path / "m.xml")


# -- degenerate point sets -------------------------------------------------------------------------------------------


def _thickened(points):
    with pytest.warns(RuntimeWarning, match="span no volume.*thickened"):
        return ConvexMesh(points, name="plate")


def test_flat_point_set_becomes_a_slab_of_documented_thickness():
    """Points in one plane (a 2 m x 1 m rectangle) become a slab of thickness 1 % of the largest extent (0.02 m),
    with a warning naming the shape; mass properties are that box's (closed form)."""
    rect = np.array([[x, y, 0.0] for x in (-1.0, 1.0) for y in (-0.5, 0.5)])
    shape = _thickened(rect)
    t = DEGENERATE_THICKNESS_RATIO * 2.0
    vol, com, inertia = shape.volume_com_inertia()
    assert vol == pytest.approx(2.0 * 1.0 * t, rel=1e-9)
    np.testing.assert_allclose(com, 0.0, atol=1e-12)
    a, b, c = 2.0, 1.0, t  # full edge lengths: I = V (b^2 + c^2) / 12 ...
    np.testing.assert_allclose(
        np.diag(inertia), vol / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b]), rtol=1e-9
    )
    verts, _ = convex_hull(shape.hull_points, "plate")
    assert np.ptp(verts[:, 2]) == pytest.approx(t)


def test_collinear_and_three_point_sets_are_thickened():
    """Collinear points become a square rod of side 1 % of their length; three points a thin triangular slab; both
    build a closed polytope for collision."""
    line = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    rod = _thickened(line)
    t = DEGENERATE_THICKNESS_RATIO * 2.0
    vol, _, inertia = rod.volume_com_inertia()
    assert vol == pytest.approx(2.0 * t * t, rel=1e-9)
    assert inertia[0, 0] == pytest.approx(vol * t * t / 6.0, rel=1e-6)  # square section about the rod's axis
    assert inertia[1, 1] == pytest.approx(vol * (4.0 + t * t) / 12.0, rel=1e-6)
    tri = _thickened(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    for shape in (rod, tri):
        verts, _ = convex_hull(shape.hull_points, "x")
        planes, _, edges, _ = hull_topology(verts, "x")
        assert len(verts) - len(edges) + len(planes) == 2  # Euler: a closed convex polytope


def test_coincident_points_are_refused():
    """Points that all coincide (a single point) cannot make a hull: ConvexMesh refuses them, naming the shape."""
    with pytest.raises(ArticError, match="convex mesh 'dot'.*coincide"):
        ConvexMesh(np.ones((5, 3)), name="dot")


def test_flat_mesh_file_is_thickened_as_a_hull_and_kept_as_triangles(tmp_path):
    """A mesh file of one flat quad (as solo's plane.obj, which used to fail at the first step) loads; on a static
    actor it is its triangles, without a warning; as a link's hull it is thickened, with a warning naming the file,
    and builds collision geometry."""
    path = tmp_path / "plane.obj"
    path.write_text("v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3 4\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ground = artic.RigidStatic(name="ground")
        ground.attach_shape(Mesh(str(path)))
        h, _ = geometry_arrays([], [ground], 64)
    assert len(h["tris"]) == 2 and np.ptp(h["verts"][:, 2]) == 0.0
    art = artic.Articulation("a")
    art.create_link(None, None, "plate").attach_shape(Mesh(str(path)))
    with pytest.warns(RuntimeWarning, match="plane.obj.*thickened"):
        h, _ = geometry_arrays([art], [], 64)
    assert np.ptp(h["verts"][:, 2]) == pytest.approx(DEGENERATE_THICKNESS_RATIO * 2.0, rel=1e-5)


def test_mesh_file_of_one_point_is_refused(tmp_path):
    """A mesh file whose vertices all coincide has nothing to collide with: refused at load, naming the file."""
    path = tmp_path / "dot.obj"
    path.write_text("v 1 2 3\nv 1 2 3\nv 1 2 3\nf 1 2 3\n")
    with pytest.raises(ArticError, match="dot.obj.*coincide"):
        Mesh(str(path))


def test_exactly_flat_grid_gives_a_slab_not_a_qhull_error():
    """Qhull itself fails on exactly coplanar input (QH6154, the raw error that escaped): convex_hull thickens the
    grid into a slab whose topology is closed, with faces on both sides of the plane."""
    from scipy.spatial import ConvexHull, QhullError

    flat = np.array([[x, y, 0.0] for x in range(3) for y in range(3)], float)
    with pytest.raises(QhullError):
        ConvexHull(flat)
    with pytest.warns(RuntimeWarning, match="thickened"):
        verts, _ = convex_hull(flat, "grid")
    planes, _, edges, _ = hull_topology(verts, "grid")
    assert len(verts) - len(edges) + len(planes) == 2
    normals_z = sorted(p[2] for p in planes if abs(abs(p[2]) - 1.0) < 1e-6)
    assert normals_z == [-1.0, 1.0]


# -- shape validation ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda p: Box((0.1, 0.1, 0.1), local_pose=p),
        lambda p: Sphere(0.1, local_pose=p),
        lambda p: Capsule(0.1, 0.2, local_pose=p),
        lambda p: ConvexMesh(TETRA, local_pose=p),
    ],
)
def test_non_finite_shape_pose_is_refused(make):
    """A NaN or inf shape pose is refused at construction and on assignment (it made the humanoid fall through the
    floor to -17 m); a zero quaternion too."""
    for pose in (
        Transform((np.nan, 0.0, 0.0)),
        Transform((0.0, 0.0, np.inf)),
        Transform(q=(np.nan, 0, 0, 1)),
        Transform(q=(0.0, 0.0, 0.0, 0.0)),
    ):
        with pytest.raises(ArticError, match="local_pose"):
            make(pose)
        shape = make(Transform())
        with pytest.raises(ArticError, match="local_pose"):
            shape.local_pose = pose


def test_mjcf_geom_with_nan_pos_is_refused_naming_the_geom(tmp_path):
    """The issue's humanoid case through a file: an MJCF geom at pos="nan 0 0" is refused at load, naming the
    file and the geom (it used to load and fall through the floor)."""
    (tmp_path / "m.xml").write_text(
        '<mujoco><worldbody><body name="torso" pos="0 0 1"><freejoint/>'
        '<geom name="torso_geom" type="sphere" size="0.1" pos="nan 0 0"/></body></worldbody></mujoco>'
    )
    with pytest.raises(
        ArticError, match="m.xml.*geom 'torso_geom' in body 'torso': attribute pos='nan 0 0' is not finite"
    ):
        artic.load_mjcf(tmp_path / "m.xml")


def test_pose_edited_in_place_is_refused_before_the_step():
    """A finite pose edited in place to NaN after construction is caught when the articulation is added to a
    scene, naming the shape."""
    art = artic.Articulation("a")
    link = art.create_link(None, None, "r")
    shape = link.attach_shape(Sphere(0.1, name="ball"))
    link.set_mass_and_inertia_tensor(1.0, (0, 0, 0), np.eye(3))
    shape.local_pose.p[1] = np.nan
    with pytest.raises(ArticError, match="sphere 'ball'.*local_pose"):
        artic.Scene(1).add_articulation(art)


@pytest.mark.parametrize(
    "make",
    [
        lambda v: Box((0.1, v, 0.1)),
        lambda v: Sphere(v),
        lambda v: Capsule(v, 0.1),
        lambda v: Cylinder(0.1, v),
        lambda v: ConvexMesh(np.vstack([TETRA, [v, 0.0, 0.0]])),
    ],
)
def test_nan_shape_size_is_refused(make):
    """NaN or inf in any size of any shape is refused with an ArticError at construction."""
    for v in (np.nan, np.inf):
        with pytest.raises(ArticError):
            make(v)


def test_shape_errors_name_the_shape():
    """Shape errors name the shape by type and name, and an unnamed one as such (they used to name '')."""
    with pytest.raises(ArticError, match="^box 'lid': half extent"):
        Box((0.1, -1.0, 0.1), name="lid")
    with pytest.raises(ArticError, match="^unnamed cylinder: radius"):
        Cylinder(-1.0, 0.1)
    box = Box((0.1, 0.1, 0.1), name="lid")
    with pytest.raises(ArticError, match="box 'lid': half_extents must be 3 numbers"):
        box.half_extents = (0.1, 0.1)


# -- robots ------------------------------------------------------------------------------------------------------------


def test_z1_and_b1_z1_step():
    """z1 and b1-z1 (example-robot-data) load and step with finite link poses (a raw QhullError escaped their
    first step)."""
    robots = robots_dir()
    for rel in ("z1_description/urdf/z1.urdf", "b1_description/urdf/b1-z1.urdf"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            art = artic.load_urdf(robots / rel, package_dirs=[robots.parent])
        scene = artic.Scene(1)
        scene.add_actor(artic.create_ground_plane())
        scene.add_articulation(art)
        for _ in range(3):
            scene.step(1e-3)
        assert np.all(np.isfinite(scene.get_link_poses(art))), rel


@pytest.mark.parametrize("name", ["z1_GripperStator.STL", "z1_Link06.STL"])
def test_reduced_hull_of_z1_meshes_spans_the_mesh(name):
    """The cause of z1's QhullError: reducing these hulls to 64 vertices once kept the first 64 extreme points by
    index, all on one face (one x coordinate), and Qhull failed on that flat set. The reduced hull must keep at
    least 99 % of the mesh's extent along every axis."""
    mesh = Mesh(str(robots_dir() / "z1_description/meshes/collision" / name))
    verts, _ = convex_hull(mesh.hull_points, name)
    assert len(verts) <= 64
    assert np.all(np.ptp(verts, axis=0) >= 0.99 * np.ptp(mesh.vertices, axis=0))


@pytest.mark.oracle
@pytest.mark.parametrize(
    "rel",
    [
        "panda_description/meshes/collision/link1.stl",
        "panda_description/meshes/collision/hand.stl",
        "allegro_hand_description/meshes/link_0.0.STL",
        "solo_description/meshes/obj/with_foot/solo_foot.obj",
        "baxter_description/meshes/torso/base_link_collision.DAE",
        "anymal_b_simple_description/meshes/foot/anymal_foot.dae",
    ],
)
def test_mesh_hull_mass_properties_match_coal(rel):
    """Volume, COM and inertia of a mesh's convex hull equal those of coal (hpp-fcl), which reads the file with
    assimp and integrates its own hull; DAE units and node transforms included (ANYmal's foot, whose broken texture
    made pycollada drop the geometry, is read)."""
    coal = pytest.importorskip("coal")
    path = robots_dir() / rel
    vol, com, inertia = Mesh(str(path)).volume_com_inertia()
    ref = coal.MeshLoader().load(str(path), np.ones(3))
    ref.buildConvexHull(True, "Qt")
    assert vol == pytest.approx(ref.convex.computeVolume(), rel=1e-5)
    np.testing.assert_allclose(com, ref.convex.computeCOM(), atol=1e-6 * np.cbrt(vol) + 1e-9)
    np.testing.assert_allclose(
        inertia, ref.convex.computeMomentofInertiaRelatedToCOM(), atol=1e-5 * np.abs(inertia).max()
    )
