"""Shapes and materials refuse bad values when they are set, not only at construction (issue 14): mesh arrays are
checked on assignment and stored read-only, absurd magnitudes (sizes, mesh coordinates, contact offsets, material
coefficients) are refused, and malformed transforms and materials raise artic's ValidationError."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import Box, Capsule, ConvexMesh, Cylinder, Material, Mesh, Sphere, Transform, TriangleMesh, ValidationError
from artic.description.shapes import COARSE_LENGTH, MAX_FRICTION
from artic.description.validate import MAX_MAGNITUDE

FLOOR_V = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])
FLOOR_T = [[0, 1, 2], [0, 2, 3]]
TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def _obj(verts, faces) -> str:
    return "".join(f"v {x} {y} {z}\n" for x, y, z in verts) + "".join(
        "f " + " ".join(str(i + 1) for i in f) + "\n" for f in faces
    )


# -- mesh arrays on assignment ---------------------------------------------------------------------------------------


def test_triangle_mesh_indices_are_checked_on_assignment():
    """The reviewer's segfault: triangles assigned after construction with an index past the vertices are refused
    at the assignment (they used to reach the collision kernel and crash the process), and so are vertices that
    no longer cover the triangles' indices; the mesh keeps its previous, valid arrays."""
    t = TriangleMesh(vertices=FLOOR_V, triangles=FLOOR_T, name="floor")
    with pytest.raises(ValidationError, match=r"triangle mesh 'floor': triangle indices must lie in \[0, 4\)"):
        t.triangles = [[0, 1, 200000000]]
    with pytest.raises(ValidationError, match=r"triangle mesh 'floor': triangle indices must lie in \[0, 3\)"):
        t.vertices = FLOOR_V[:3]
    with pytest.raises(ValidationError, match="triangle mesh 'floor': triangles must be .* integer"):
        t.triangles = [[0.0, 1.0, 2.0]]
    with pytest.raises(ValidationError, match="triangle mesh 'floor': vertex 1 is not finite"):
        t.vertices = np.vstack([FLOOR_V[:1], [np.nan, 0.0, 0.0], FLOOR_V[2:]])
    assert t.triangles.tolist() == FLOOR_T and np.array_equal(t.vertices, FLOOR_V)
    t.triangles = [[0, 1, 3]]  # a valid assignment is kept
    assert t.triangles.tolist() == [[0, 1, 3]]


def test_mesh_arrays_are_read_only():
    """The arrays of TriangleMesh, ConvexMesh and Mesh refuse in-place writes (an edited index would bypass the
    checks above), and the caller's own array stays writable and is not aliased."""
    src = FLOOR_V.copy()
    t = TriangleMesh(vertices=src, triangles=FLOOR_T)
    c = ConvexMesh(TETRA)
    for a in (t.vertices, t.triangles, c.vertices, c.hull_points):
        with pytest.raises(ValueError, match="read-only"):
            a[0, 0] = 7
    src[0, 0] = 5.0
    assert t.vertices[0, 0] == -1.0


def test_mesh_file_arrays_are_read_only(tmp_path):
    """A Mesh's scaled vertices and its triangles are read-only, so no in-place edit (a coordinate of 1e30, an
    index past the vertices) bypasses the checks made when the file was read and scaled."""
    path = tmp_path / "t.obj"
    path.write_text(_obj(TETRA, [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]))
    for scale in ((1.0, 1.0, 1.0), (-2.0, 1.0, 1.0)):  # a mirroring scale makes new triangle arrays
        m = Mesh(str(path), scale=scale)
        for a, bad in ((m.vertices, 1e30), (m.triangles, 10**9)):
            with pytest.raises(ValueError, match="read-only"):
                a[0, 0] = bad


def test_triangle_indices_forced_writable_and_edited_are_refused_before_the_step():
    """An index edited in place after the array was made writable again is refused by attach_shape, and, when
    edited after attach_shape, by the collision build at the first step, naming the actor and the shape."""
    t = TriangleMesh(vertices=FLOOR_V, triangles=FLOOR_T, name="floor")
    t.triangles.flags.writeable = True
    t.triangles[0, 2] = 200000000
    with pytest.raises(ValidationError, match="triangle mesh 'floor': triangle indices"):
        artic.RigidStatic(name="ground").attach_shape(t)

    t = TriangleMesh(vertices=FLOOR_V, triangles=FLOOR_T, name="floor")
    ground = artic.RigidStatic(name="ground")
    ground.attach_shape(t)
    t.triangles.flags.writeable = True
    t.triangles[0, 2] = 200000000
    scene = artic.Scene(1)
    ball = artic.RigidDynamic(Transform((0.0, 0.0, 0.5)), "ball")
    ball.attach_shape(Sphere(0.1))
    ball.update_mass_and_inertia(1000.0)
    scene.add_actor(ball)
    with pytest.raises(ValidationError, match="ground.*triangle mesh 'floor': triangle indices"):
        scene.add_actor(ground)
        scene.step(0.01)


def test_convex_mesh_vertices_are_checked_on_assignment():
    """ConvexMesh vertices assigned after construction are validated (shape, finiteness) and its hull follows."""
    c = ConvexMesh(TETRA, name="hull")
    with pytest.raises(ValidationError, match="convex mesh 'hull': vertices"):
        c.vertices = [[1.0, 2.0]]
    c.vertices = TETRA * 2.0
    assert c.volume_com_inertia()[0] == pytest.approx(8.0 / 6.0)


# -- magnitudes ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda v: Sphere(v, name="s"), "radius"),
        (lambda v: Box((0.1, v, 0.1), name="s"), "half extent"),
        (lambda v: Capsule(0.1, v, name="s"), "half_height"),
        (lambda v: Cylinder(v, 0.1, name="s"), "radius"),
    ],
)
def test_absurd_shape_sizes_are_refused(make, field):
    """A size beyond MAX_MAGNITUDE (a static Sphere(1e20) turned every env NaN) is refused naming the shape and
    field; a size of exactly MAX_MAGNITUDE is accepted."""
    with pytest.raises(ValidationError, match=f"'s': {field} 1e\\+20 m is beyond 1e\\+15"):
        make(1e20)
    with pytest.warns(RuntimeWarning, match="float32"):  # accepted, with test_lengths_too_large_..._warn's warning
        make(MAX_MAGNITUDE)


def test_lengths_too_large_for_float32_contacts_warn():
    """A size or mesh coordinate beyond COARSE_LENGTH (a static Box of half extent 1e9 threw a resting ball 8 m up,
    silently) warns naming the shape and the float32 resolution at that length (length x 2^-24), pointing at the
    caller's line; lengths up to COARSE_LENGTH do not warn."""
    with pytest.warns(RuntimeWarning, match=r"box 'g': half extent 1e\+09 m .* only to ~60 m") as rec:
        Box((1e9, 1.0, 1.0), name="g")
    assert rec[0].filename == __file__
    s = Sphere(1.0, name="g")
    with pytest.warns(RuntimeWarning, match=r"sphere 'g': radius 200000 m .* only to ~0.012 m"):
        s.radius = 2e5
    with pytest.warns(RuntimeWarning, match=r"triangle mesh 'g': coordinate 1e\+06 m of vertex 2 .* ~0.06 m"):
        TriangleMesh(
            vertices=FLOOR_V * [1.0, 1.0, 0.0] + [[0, 0, 0], [0, 0, 0], [0, 0, 1e6], [0, 0, 0]],
            triangles=FLOOR_T,
            name="g",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Box((COARSE_LENGTH, 1.0, 1.0))
        TriangleMesh(vertices=FLOOR_V * COARSE_LENGTH, triangles=FLOOR_T)


def test_absurd_mesh_coordinates_are_refused(tmp_path):
    """Mesh coordinates beyond MAX_MAGNITUDE (a static mesh at 1e30 let a ball fall through without a word) are
    refused for TriangleMesh, ConvexMesh, a mesh file, and a mesh file whose scale takes them there; so is a scale
    beyond MAX_MAGNITUDE."""
    with pytest.raises(ValidationError, match=r"triangle mesh 'f': vertex 0 .* beyond \+-1e\+15 m"):
        TriangleMesh(vertices=FLOOR_V * 1e30, triangles=FLOOR_T, name="f")
    with pytest.raises(ValidationError, match=r"convex mesh 'c': vertex 1 .* beyond \+-1e\+15 m"):
        ConvexMesh(TETRA * 1e30, name="c")
    far = tmp_path / "far.obj"
    far.write_text(_obj(TETRA * 1e30, [(0, 1, 2)]))
    with pytest.raises(ValidationError, match=r"mesh 'm' \(file '.*far.obj'.*vertex 1 .* beyond"):
        Mesh(str(far), name="m")
    ten = tmp_path / "ten.obj"
    ten.write_text(_obj(TETRA * 10.0, [(0, 1, 2)]))
    with pytest.raises(ValidationError, match="mesh 'm'.*scale"):
        Mesh(str(ten), scale=(1e20, 1.0, 1.0), name="m")
    with pytest.warns(RuntimeWarning, match="float32"):  # 1e14 m is accepted, with a warning
        m = Mesh(str(ten), scale=(1e13, 1.0, 1.0), name="m")
    with pytest.raises(ValidationError, match=r"mesh 'm' \(file .*ten.obj.*vertex 1 .* beyond"):
        m.scale = (MAX_MAGNITUDE, 1.0, 1.0)  # within the scale bound, but vertex 1 (10, 0, 0) ends at 1e16
    assert m.scale == (1e13, 1.0, 1.0) and m.vertices[1, 0] == 1e14  # the refused scale left the mesh as it was


def test_absurd_contact_offset_is_refused():
    """contact_offset must be a distance in [0, MAX_MAGNITUDE], checked at construction and on assignment."""
    with pytest.raises(ValidationError, match="sphere 'b': contact_offset must be a distance"):
        Sphere(0.1, contact_offset=1e30, name="b")
    s = Sphere(0.1, name="b")
    for bad in (-0.1, np.nan, "0.02"):
        with pytest.raises(ValidationError, match="sphere 'b': contact_offset"):
            s.contact_offset = bad
    assert s.contact_offset == 0.02


def test_absurd_rest_offset_is_refused():
    """rest_offset is a finite distance within +-MAX_MAGNITUDE (negative: the contact holds the surfaces that deep
    in), checked at construction and on assignment."""
    with pytest.raises(ValidationError, match="sphere 'b': rest_offset must be a distance within"):
        Sphere(0.1, rest_offset=-1e30, name="b")
    s = Sphere(0.1, name="b", rest_offset=-0.001)
    for bad in (np.inf, np.nan, "0.02", None):
        with pytest.raises(ValidationError, match="sphere 'b': rest_offset"):
            s.rest_offset = bad
    assert s.rest_offset == -0.001


def test_material_coefficients_are_bounded():
    """Friction must lie in [0, MAX_FRICTION] and restitution in [0, 1] (PxMaterial's ranges), at construction
    and on assignment; MAX_FRICTION itself and restitution 1 are accepted."""
    for args in ((1e30, 0.5, 0.0), (0.5, 1e30, 0.0), (-0.1, 0.5, 0.0), (0.5, 0.5, 1.5), (0.5, 0.5, -0.1)):
        with pytest.raises(ValidationError, match="material: .* must be in"):
            Material(*args)
    mat = Material(MAX_FRICTION, MAX_FRICTION, 1.0)
    with pytest.raises(ValidationError, match="material: static_friction must be in"):
        mat.static_friction = 1e30
    with pytest.raises(ValidationError, match="material: restitution must be in"):
        mat.restitution = 2.0
    assert (mat.static_friction, mat.restitution) == (MAX_FRICTION, 1.0)


# -- malformed values ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, what",
    [
        (("a",), "position p"),
        (((1, 2),), "position p"),
        (((1j, 0, 0),), "position p"),
        (((0, 0, 0), "abcd"), "quaternion q"),
        (((0, 0, 0), (0, 0, 1)), "quaternion q"),
    ],
)
def test_malformed_transform_raises_validation_error(args, what):
    """Transform of a string, the wrong count or complex numbers raises artic's ValidationError (still a
    ValueError for existing callers) naming the field; it used to raise NumPy's bare ValueError."""
    with pytest.raises(ValidationError, match=f"Transform: {what}.* must be"):
        Transform(*args)
    assert issubclass(ValidationError, ValueError)


def test_malformed_material_and_masks_raise_at_construction():
    """Material("a") and a non-integer collision group or mask raise ValidationError at construction or
    assignment (the mask used to pass until the scene add)."""
    with pytest.raises(ValidationError, match="material: static_friction must be a number, got 'a'"):
        Material("a")
    with pytest.raises(ValidationError, match=r"sphere 'b': collision_group must be an integer bit mask"):
        Sphere(collision_group=1.5, name="b")
    s = Sphere(name="b")
    for bad in ("1", True, -1, 2**31):
        with pytest.raises(ValidationError, match=r"sphere 'b': collision_mask must be an integer bit mask"):
            s.collision_mask = bad
    with pytest.raises(ValidationError, match="sphere 'b': material must be an artic.Material"):
        s.material = 0.5
