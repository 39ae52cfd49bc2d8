"""MJCF mass properties against MuJoCo itself: for every MJCF of Gymnasium's MuJoCo assets and dm_control's suite
that MuJoCo loads, artic's per-body mass, COM and inertia tensor (about the COM, body axes) equal MuJoCo's
compiled body_mass / body_ipos / body_iquat + body_inertia to 1e-6 relative, and so do the total mass and the dof
count. Plus small synthetic models for the compiler settings those files do not exercise.

Mapping (load_mjcf's docstring): bodies come in the same depth-first order in both; a MuJoCo body with k > 1
hinge/slide joints is k artic links of which the last holds its mass (the others carry a 1e-6 kg regularization);
a top-level body without a free joint hangs from an extra fixed "<name>_world" root link. A body MuJoCo leaves
massless gets artic's 1e-6 kg / 1e-9 kg m^2 regularization.
"""

import warnings

import mujoco
import numpy as np
import pytest

import artic
from artic.io.mjcf.loader import MjcfError
from tests.support.models import REFUSED_MJCF, suite_mjcf_files


def _mjcfs() -> list:
    return [pytest.param(key, p, id=key) for key, p in suite_mjcf_files()]


def _rot(q_wxyz):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(q_wxyz, dtype=float))
    return m.reshape(3, 3)


def _link_tensor(link):
    x, y, z, w = link.cmass_local_pose.q
    r = _rot([w, x, y, z])
    return r @ np.diag(link.inertia) @ r.T


def _body_links(mj, model):
    """{MuJoCo body id: the artic link holding its mass}, checking the link counts and names on the way."""
    links = [list(a.get_links()) for a in model.articulations]
    out, k, cursor = {}, -1, []
    for b in range(1, mj.nbody):
        top = mj.body_parentid[b] == 0
        if top:
            k += 1
            cursor = links[k]
            assert cursor, "an articulation without links"
            free = mj.body_jntnum[b] == 1 and mj.jnt_type[mj.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE
            if not free:
                assert cursor[0].name.endswith("_world")
                cursor.pop(0)
        n = (
            1
            if mj.body_jntnum[b] == 0
            else (1 if mj.jnt_type[mj.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE else mj.body_jntnum[b])
        )
        assert len(cursor) >= n, f"artic has fewer links than MuJoCo's bodies need at body {b}"
        mine, cursor[:] = cursor[:n], cursor[n:]
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)
        if name:
            assert mine[-1].name == name
        out[b] = mine[-1]
    assert k == len(links) - 1 and not any(links), "artic has links MuJoCo does not"
    return out


def _compare(path, mj):
    """Assert artic's mass properties of the MJCF at `path` equal those of MuJoCo's compiled model `mj`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    bodies = _body_links(mj, model)
    total = 0.0
    for b, link in bodies.items():
        where = f"body {b} '{mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)}'"
        mass = mj.body_mass[b]
        if mass == 0.0:  # artic's tiny mass, at MuJoCo's body_ipos (its own pos: the regularizers' point)
            assert link.mass == pytest.approx(1e-6) and max(link.inertia) <= 1e-9 * (1 + 1e-9), where
            np.testing.assert_allclose(link.cmass_local_pose.p, mj.body_ipos[b], rtol=0, atol=1e-9, err_msg=where)
            continue
        total += link.mass
        assert link.mass == pytest.approx(mass, rel=1e-6), where
        ref = _rot(mj.body_iquat[b]) @ np.diag(mj.body_inertia[b]) @ _rot(mj.body_iquat[b]).T
        scale = np.abs(ref).max()
        np.testing.assert_allclose(_link_tensor(link), ref, rtol=0, atol=1e-6 * scale + 1e-15, err_msg=where)
        np.testing.assert_allclose(
            link.cmass_local_pose.p,
            mj.body_ipos[b],
            rtol=0,
            atol=1e-6 * max(1e-3, np.abs(mj.body_ipos[b]).max()),
            err_msg=where,
        )
    assert total == pytest.approx(mj.body_mass[1:].sum(), rel=1e-6)
    dofs = sum(a.dof_count + (6 if a.mjcf_root_free else 0) for a in model.articulations)
    assert dofs == mj.nv


@pytest.mark.parametrize(("key", "path"), _mjcfs())
def test_mass_properties_match_mujoco(key, path):
    """Per body: mass, COM (body frame) and inertia tensor about the COM (body axes) equal MuJoCo's to 1e-6
    relative; the total mass and the dof count too. A refused model is refused with its listed reason."""
    try:
        mj = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        pytest.skip(f"MuJoCo does not load it: {e}")
    if key in REFUSED_MJCF:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(MjcfError, match=REFUSED_MJCF[key]):
                artic.load_mjcf(path)
        return
    _compare(path, mj)


def _star_obj(path):
    """A closed, outward-wound, non-convex mesh: a bipyramid over an 8-pointed star, its top apex far off the axis
    (so that the centroid of its faces sees some faces from behind: legacy and exact inertia differ)."""
    ring = [
        (r * np.cos(a), r * np.sin(a), 0.0)
        for a, r in zip(np.linspace(0, 2 * np.pi, 16, endpoint=False), [1.0, 0.35] * 8)
    ]
    verts = ring + [(2.0, 0.1, 0.3), (-0.2, 0.3, -0.5)]
    faces = [(i, (i + 1) % 16, 16) for i in range(16)] + [((i + 1) % 16, i, 17) for i in range(16)]
    lines = [f"v {x:.9f} {y:.9f} {z:.9f}" for x, y, z in verts] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


_MESH_BODY = (
    '<body name="m{k}" pos="{k} 0 1"><joint type="slide"/>'
    '<geom type="mesh" mesh="star_{kind}" pos="0.1 0 0" euler="10 20 30" density="700"/></body>'
)
_MESH_ASSETS = (
    "".join(
        f'<mesh name="star_{k}" file="star.obj" scale="0.1 0.2 -0.15" inertia="{k}"/>'
        for k in ("exact", "convex", "shell")
    )
    + '<mesh name="star_legacy" file="star.obj" scale="0.1 0.2 -0.15"/>'
)

CASES = {
    "solid primitives, several per body": (
        "",
        (
            '<body name="a"><joint/><geom type="sphere" size="0.1" pos="0.1 0 0"/>'
            '<geom type="capsule" size="0.05 0.2" euler="0 90 0"/><geom type="cylinder" size="0.07 0.1" pos="0 0.2 0"'
            ' quat="0.9 0.1 0.3 0"/><geom type="ellipsoid" size="0.1 0.2 0.05" pos="0 0 0.3" euler="30 0 10"/>'
            '<geom type="box" size="0.1 0.2 0.3" pos="0.2 0.1 0" axisangle="1 1 0 40"/></body>'
        ),
    ),
    "shellinertia on every primitive": (
        '<default><geom shellinertia="true"/></default>',
        "".join(
            f'<body name="{t}" pos="{k} 0 0"><joint/><geom type="{t}" size="{s}" euler="10 20 30"/></body>'
            for k, (t, s) in enumerate(
                [
                    ("sphere", "0.1"),
                    ("capsule", "0.05 0.2"),
                    ("cylinder", "0.07 0.1"),
                    ("ellipsoid", "0.1 0.2 0.05"),
                    ("box", "0.1 0.2 0.3"),
                ]
            )
        ),
    ),
    "fromto forms": (
        "",
        (
            '<body name="f"><joint/><geom type="capsule" size="0.05" fromto="0 0 0 0.3 0.1 0.2"/>'
            '<geom type="cylinder" size="0.04" fromto="0.1 0 0 0.1 0.3 0"/>'
            '<geom type="box" size="0.03" fromto="0 0 0.1 0.2 0.2 0.3"/>'
            '<geom type="ellipsoid" size="0.06" fromto="0 0.1 0 0 -0.2 0.1"/></body>'
        ),
    ),
    "geom mass, density, massless geoms": (
        "",
        (
            '<body name="d"><joint/><geom size="0.1" mass="3"/><geom type="box" size="0.1 0.1 0.1" density="250"'
            ' pos="0.3 0 0"/><geom size="0.2" density="0" pos="0 1 0"/><geom size="0.2" mass="0" pos="0 -1 0"/></body>'
        ),
    ),
    "inertiagrouprange leaves out other groups": (
        '<compiler inertiagrouprange="0 2"/>',
        '<body name="g"><joint/><geom size="0.1"/><geom size="0.3" pos="0.5 0 0" group="3"/></body>',
    ),
    "inertiafromgeom true overrides <inertial>": (
        '<compiler inertiafromgeom="true"/>',
        (
            '<body name="t"><joint/><inertial pos="0 0 0" mass="5" diaginertia="1 1 1"/>'
            '<geom type="box" size="0.1 0.2 0.3"/></body>'
            '<body name="u" pos="0 0 1"><joint/><inertial pos="0 0 0.1" mass="2" diaginertia="1 2 2"/>'
            '<geom size="0.1" mass="0"/></body>'
        ),
    ),
    "inertiafromgeom false ignores geoms": (
        '<compiler inertiafromgeom="false"/>',
        (
            '<body name="t"><joint/><inertial pos="0.1 0 0" mass="5" diaginertia="1 2 2.5" euler="0 30 0"/>'
            '<geom type="box" size="0.1 0.2 0.3"/><body name="w" pos="0 0 1"><geom size="0.1"/></body></body>'
        ),
    ),
    "boundmass and boundinertia": (
        '<compiler boundmass="0.5" boundinertia="0.01"/>',
        (
            '<body name="b"><joint/><geom size="0.01"/><body name="c" pos="0 0 1"><joint/>'
            '<geom type="capsule" size="0.2 0.5"/></body></body>'
        ),
    ),
    "balanceinertia evens out moments that break A + B >= C": (
        '<compiler balanceinertia="true"/>',
        '<body name="b"><joint/><inertial pos="0 0 0.1" mass="2" diaginertia="1 1 3"/></body>',
    ),
    "fullinertia": (
        "",
        '<body name="b"><joint/><inertial pos="0 0.1 0" mass="2" fullinertia="2 3 4 0.1 -0.2 0.3"/></body>',
    ),
    "settotalmass scales every body": (
        '<compiler settotalmass="7.5"/>',
        (
            '<body name="a"><joint/><geom size="0.1"/><body name="b" pos="0 0 1"><joint axis="1 0 0"/>'
            '<geom type="box" size="0.1 0.2 0.3"/></body></body>'
        ),
    ),
    "mesh inertia legacy, exact, convex and shell, mirrored by a negative scale": (
        f"<asset>{_MESH_ASSETS}</asset>",
        "".join(_MESH_BODY.format(k=k, kind=kind) for k, kind in enumerate(("legacy", "exact", "convex", "shell"))),
    ),
    "mesh inertia and scale from <default> classes": (
        '<default><mesh inertia="convex" scale="0.5 1 2"/></default><asset><mesh name="s" file="star.obj"/></asset>',
        '<body name="m"><joint/><geom type="mesh" mesh="s"/></body>',
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compiler_and_geom_mass_settings_match_mujoco(case, tmp_path):
    """Each compiler or geom mass setting (shell inertia, fromto, groups, inertiafromgeom, bounds, balancing,
    fullinertia, settotalmass, mesh inertia modes) gives MuJoCo's per-body mass, COM and inertia."""
    head, bodies = CASES[case]
    _star_obj(tmp_path / "star.obj")
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco>{head}<worldbody>{bodies}</worldbody></mujoco>")
    _compare(path, mujoco.MjModel.from_xml_path(str(path)))


MASSLESS = """<mujoco><compiler inertiagrouprange="4 5" {bound}/><worldbody><body name="a" pos="0 0 1">
<joint axis="0 1 0"/><inertial pos="0 0 -.1" mass="1" diaginertia=".01 .01 .01"/>
  <body name="site_only" pos="0.3 0.2 0.12" euler="0 90 0"><site name="s"/></body>
  <frame pos="0.1 0 0" euler="0 0 30"><body name="framed" pos="0 0.2 -0.3"><geom size=".05" group="1"/>
    <body name="weighty" pos="0 0 -.2"><joint axis="0 1 0"/><geom size=".05" group="4"/></body></body></frame>
</body></worldbody></mujoco>"""


@pytest.mark.parametrize("bound", ["", 'boundmass="0.01" boundinertia="1e-6"'])
def test_a_massless_bodys_com_and_inverse_weights_are_mujocos(tmp_path, bound):
    """A body without mass (a site only, or its geoms outside inertiagrouprange; in a <frame>; with a heavy child on a
    joint): MuJoCo's compiler puts its COM at the body's own pos as written (metaworld's Sawyer hand, welded
    to its mocap body); artic's tiny mass sits there, and with boundmass MuJoCo's mass does. The inverse weights a
    soft weld's regularizer is scaled by equal MuJoCo's body_invweight0 (3x apart on the Sawyer hand before)."""
    from artic.description.mass_check import link_inverse_weights

    path = tmp_path / "m.xml"
    path.write_text(MASSLESS.format(bound=bound))
    mj = mujoco.MjModel.from_xml_path(str(path))
    _compare(path, mj)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    (art,) = model.articulations
    weights = link_inverse_weights(art)
    for name in ("a", "site_only", "framed", "weighty"):
        b = mj.body(name).id
        np.testing.assert_allclose(weights[art.get_link(name)], mj.body_invweight0[b], rtol=1e-4, err_msg=name)
    assert np.abs(mj.body_ipos[mj.body("framed").id] - [0, 0.2, -0.3]).max() < 1e-12  # MuJoCo's reading


def test_mesh_inertia_modes_differ(tmp_path):
    """The mesh test model discriminates: its four inertia modes give four different masses (in MuJoCo)."""
    _star_obj(tmp_path / "star.obj")
    path = tmp_path / "m.xml"
    head, bodies = CASES["mesh inertia legacy, exact, convex and shell, mirrored by a negative scale"]
    path.write_text(f"<mujoco>{head}<worldbody>{bodies}</worldbody></mujoco>")
    masses = mujoco.MjModel.from_xml_path(str(path)).body_mass[1:]
    assert len(set(np.round(masses, 9))) == 4


def test_unbalanced_inertia_is_refused(tmp_path):
    """Principal inertias breaking A + B >= C without balanceinertia are refused (as MuJoCo refuses them), naming
    the body and the fix."""
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><worldbody><body name="b"><joint/><inertial pos="0 0 0" mass="2" diaginertia="1 1 3"/>'
        "</body></worldbody></mujoco>"
    )
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(MjcfError, match="body 'b'.*balanceinertia"):
        artic.load_mjcf(path)


def test_primitive_fitted_to_a_non_convex_mesh_weighs_as_in_mujoco(tmp_path):
    """A box fitted to the star (non-convex: MuJoCo's legacy inertia rule differs from the exact one there) has
    MuJoCo's mass, COM and principal moments (it was refused before)."""
    _star_obj(tmp_path / "star.obj")
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><asset><mesh name="s" file="star.obj"/></asset><worldbody><body name="b"><joint/>'
        '<geom name="g" type="box" mesh="s"/></body></worldbody></mujoco>'
    )
    mm = mujoco.MjModel.from_xml_path(str(path))
    link = artic.load_mjcf(path).articulations[0].get_link("b")
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-6)
    np.testing.assert_allclose(link.cmass_local_pose.p, mm.body_ipos[1], atol=1e-7)
    np.testing.assert_allclose(sorted(link.inertia), sorted(mm.body_inertia[1]), rtol=1e-5)


def test_convex_inertia_with_maxhullvert_warns(tmp_path):
    """A mesh with inertia='convex' and maxhullvert (MuJoCo's mass then comes from a reduced hull, which artic
    does not build) loads with a warning naming the mesh and maxhullvert."""
    _star_obj(tmp_path / "star.obj")
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><asset><mesh name="s" file="star.obj" inertia="convex" maxhullvert="6"/></asset>'
        '<worldbody><body name="b"><joint/><geom type="mesh" mesh="s"/></body></worldbody></mujoco>'
    )
    with pytest.warns(RuntimeWarning, match="mesh 's': maxhullvert is not followed for inertia='convex'"):
        artic.load_mjcf(path)


def _two_objects(path, order, tag="o", lead=""):
    """An OBJ file of two boxes (0.1 m and 0.3 m), each under an `o` (or `g`) line, in `order`."""
    import trimesh

    boxes = {"small": trimesh.creation.box((0.1, 0.1, 0.1)), "large": trimesh.creation.box((0.3, 0.3, 0.3))}
    boxes["large"].apply_translation((1.0, 0.0, 0.0))
    lines, offset = [lead] if lead else [], 0
    for name in order:
        m = boxes[name]
        lines.append(f"{tag} {name}" if tag else "")
        lines += [f"v {x} {y} {z}" for x, y, z in m.vertices]
        lines += [f"f {i + 1 + offset} {j + 1 + offset} {k + 1 + offset}" for i, j, k in m.faces]
        offset += len(m.vertices)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "order, tag, lead",
    [
        (("small", "large"), "o", ""),
        (("large", "small"), "o", ""),
        (("small", "large"), "g", ""),
        (("small", "large"), "", "g whole"),
    ],
    ids=["objects", "objects-reversed", "groups", "one-group"],
)
def test_an_obj_file_of_several_objects_is_read_as_mujoco_reads_it(tmp_path, order, tag, lead):
    """MuJoCo takes the faces of an OBJ file's first object or group only (a rib-cage file weighed 1.38 kg in
    artic for MuJoCo's 0.0126 kg rib); so does an MJCF mesh now, with a warning naming what is left out, and the
    body weighs as in MuJoCo. One group holding everything is read whole. A Mesh made directly (URDF) reads all."""
    _two_objects(tmp_path / "two.obj", order, tag, lead)
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><asset><mesh name="m" file="two.obj"/></asset><worldbody><body name="b"><freejoint/>'
        '<geom type="mesh" mesh="m"/></body></worldbody></mujoco>'
    )
    mm = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        link = artic.load_mjcf(path).articulations[0].get_link("b")
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-6)
    said = [str(w.message) for w in record if "objects or groups" in str(w.message)]
    assert len(said) == (0 if lead else 1)
    whole = artic.Mesh(str(tmp_path / "two.obj"))
    assert len(whole.triangles) == 24


def _msh(path, mesh, faces=True, normals=True):
    """MuJoCo's binary MSH file of a trimesh mesh (normals and texture coordinates as MuJoCo's exporters write them)."""
    v = np.asarray(mesh.vertices, dtype="<f4")
    n = np.asarray(mesh.vertex_normals, dtype="<f4") if normals else np.zeros((0, 3), "<f4")
    f = np.asarray(mesh.faces, dtype="<i4") if faces else np.zeros((0, 3), "<i4")
    t = np.zeros((len(v) if normals else 0, 2), "<f4")
    head = np.array([len(v), len(n), len(t), len(f)], "<i4")
    path.write_bytes(b"".join(a.tobytes() for a in (head, v, n, t, f)))


@pytest.mark.parametrize("faces", [True, False], ids=["faces", "vertices-only"])
def test_an_msh_mesh_weighs_as_in_mujoco(tmp_path, faces):
    """MuJoCo's own binary mesh format (robosuite's objects, dm_control's fruit fly; a ZeroDivisionError here
    before): mass, COM and inertia equal MuJoCo's; a file of vertices only is their convex hull, as in MuJoCo."""
    import trimesh

    mesh = trimesh.creation.cylinder(radius=0.04, height=0.12, sections=24)
    mesh.apply_translation((0.01, -0.02, 0.03))
    _msh(tmp_path / "can.msh", mesh, faces=faces)
    path = tmp_path / "m.xml"
    path.write_text(
        '<mujoco><asset><mesh name="m" file="can.msh"/></asset><worldbody><body name="b"><freejoint/>'
        '<geom type="mesh" mesh="m" density="300"/></body></worldbody></mujoco>'
    )
    mm = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    link = model.articulations[0].get_link("b")
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-6)
    np.testing.assert_allclose(link.cmass_local_pose.p, mm.body_ipos[1], atol=1e-7)
    assert sorted(link.inertia) == pytest.approx(sorted(mm.body_inertia[1]), rel=1e-5)
