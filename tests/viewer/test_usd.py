"""USD export (artic.viewer.write_usd, `artic sim --usd`): the stage is read back with Pixar's own `pxr` and every
link's world transform at every frame equals the recorded pose, each shape has its kind, size and world placement,
statics and contact points are there; bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

from artic import ArticError, Scene, ValidationError
from artic.assets import load_model, model_path
from artic.description.shapes import Box, Capsule, Sphere
from artic.math.np_spatial import quat_rotate
from artic.viewer import Recorder, write_usd
from tests.support.imports import hide_package

pxr = pytest.importorskip("pxr")
from pxr import Usd, UsdGeom  # noqa: E402

DT = 1.0 / 60.0


def _record(name, frames=40, floating=False):
    art, statics, gravity = load_model(model_path(name), fix_base=not floating)
    scene = Scene(1, gravity=gravity or (0.0, 0.0, -9.81))
    for actor in statics:
        scene.add_actor(actor)
    scene.add_articulation(art)
    rec = Recorder(scene)
    for _ in range(frames):
        scene.step(DT)
        rec.record()
    return art, statics, rec


def _links(stage):
    return {p.GetAttribute("artic:name").Get(): p for p in stage.Traverse() if p.HasAttribute("artic:name")}


def _world(prim, frame):
    m = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode(frame))
    return np.array(m).T  # pxr's matrices act on row vectors: transpose to act on columns


@pytest.mark.parametrize("suffix", [".usda", ".usdc"])
def test_ant_round_trip(tmp_path, suffix):
    """The ant dropping onto its floor for 40 frames: read back, each link's world transform at each time code is
    its recorded pose (1e-5 m, 1e-5 in the rotation matrix), the stage's timing is the recording's, its capsules
    are the ant's (radius, length, ends in the world where artic's capsule ends are), the floor is a static, and
    the contact points of each frame are the recorder's."""
    art, statics, rec = _record("ant")
    path = write_usd(tmp_path / f"ant{suffix}", [art, *statics], np.stack(rec.poses[0]), DT, contacts=rec.contacts)
    stage = Usd.Stage.Open(str(path))
    assert stage.GetTimeCodesPerSecond() == pytest.approx(60.0) and stage.GetEndTimeCode() == 39
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    poses = np.stack(rec.poses[0]).astype(float)
    links = _links(stage)
    assert sorted(links) == sorted(art.link_names)
    moved = 0.0
    for b, link in enumerate(art._topology().links):
        for k in (0, 17, 39):
            m = _world(links[link.name], k)
            p = poses[k, b]
            np.testing.assert_allclose(m[:3, 3], p[:3], atol=1e-5)
            for axis in np.eye(3):
                np.testing.assert_allclose(m[:3, :3] @ axis, quat_rotate(p[3:], axis), atol=1e-5)
        moved = max(moved, np.abs(poses[-1, b, :3] - poses[0, b, :3]).max())
        for shape in link.shapes:
            if not isinstance(shape, Capsule):
                continue
            (prim,) = [c for c in links[link.name].GetChildren() if c.GetName() == shape.name]
            cap = UsdGeom.Capsule(prim)
            assert cap.GetRadiusAttr().Get() == pytest.approx(shape.radius)
            assert cap.GetHeightAttr().Get() == pytest.approx(2 * shape.half_height)
            assert cap.GetAxisAttr().Get() == "X"
            end = _world(prim, 39) @ np.array([shape.half_height, 0.0, 0.0, 1.0])
            local, p_link = shape.local_pose, poses[39, b]
            expected = p_link[:3] + quat_rotate(p_link[3:], local.p + quat_rotate(local.q, [shape.half_height, 0, 0]))
            np.testing.assert_allclose(end[:3], expected, atol=1e-5)
    assert moved > 0.05  # the ant fell: the samples are not all one pose
    floor = [p for p in stage.Traverse() if str(p.GetPath()).startswith("/World/statics/")]
    assert floor and len(statics) == 1
    points = UsdGeom.Points(stage.GetPrimAtPath("/World/contacts"))
    for k in (0, 39):
        got = np.array(points.GetPointsAttr().Get(Usd.TimeCode(k))).reshape(-1, 3)
        np.testing.assert_allclose(got, rec.contacts[k][0], atol=1e-6)
    assert len(rec.contacts[39][0]) > 0  # it landed


def test_boxes_and_spheres_are_placed(tmp_path):
    """A box and a sphere on a link posed away from the link frame: the Cube's corner (1, 1, 1) lands on the box's
    corner in the world, the sphere has its radius and centre."""
    import artic
    from artic import Transform

    art = artic.Articulation("blocks")
    root = art.create_link(None, Transform((0.5, -0.2, 1.0), (0.0, 0.0, 0.38268343, 0.92387953)), "base")
    box = Box((0.1, 0.2, 0.3), local_pose=Transform((0.3, 0.0, 0.1), (0.2588190, 0.0, 0.0, 0.9659258)), name="b")
    root.attach_shape(box)
    root.attach_shape(Sphere(0.07, local_pose=Transform((0.0, 0.4, 0.0)), name="s"))
    root.mass = 1.0
    scene = Scene(1)
    scene.add_articulation(art)
    scene.step(DT)
    poses = scene.get_link_poses(art)[None]  # (1, E, L, 7)
    path = write_usd(tmp_path / "blocks.usda", art, poses, DT)
    stage = Usd.Stage.Open(str(path))
    link = _links(stage)["base"]
    cube = stage.GetPrimAtPath(link.GetPath().AppendChild("b"))
    corner = _world(cube, 0) @ np.array([1.0, 1.0, 1.0, 1.0])
    p = poses[0, 0, 0].astype(float)
    local = quat_rotate(box.local_pose.q, [0.1, 0.2, 0.3]) + box.local_pose.p
    np.testing.assert_allclose(corner[:3], p[:3] + quat_rotate(p[3:], local), atol=1e-5)
    sphere = stage.GetPrimAtPath(link.GetPath().AppendChild("s"))
    assert UsdGeom.Sphere(sphere).GetRadiusAttr().Get() == pytest.approx(0.07)
    centre = _world(sphere, 0)[:3, 3]
    np.testing.assert_allclose(centre, p[:3] + quat_rotate(p[3:], [0.0, 0.4, 0.0]), atol=1e-5)


def test_bad_input_is_refused(tmp_path, monkeypatch):
    art, _, rec = _record("arm6", frames=2)
    poses = np.stack(rec.poses[0])
    with pytest.raises(ValidationError, match="dt must be a positive number"):
        write_usd(tmp_path / "a.usda", art, poses, 0.0)
    with pytest.raises(ValidationError, match=r"must be a \.usda, \.usd or \.usdc file path"):
        write_usd(tmp_path / "a.html", art, poses, DT)
    with pytest.raises(ValidationError, match="3 contact frames for 2 pose frames"):
        write_usd(tmp_path / "a.usda", art, poses, DT, contacts=[None] * 3)
    with pytest.raises(ValidationError, match="link poses of 'arm6' must be"):
        write_usd(tmp_path / "a.usda", art, poses[:, :2], DT)
    hide_package(monkeypatch, "pxr")
    with pytest.raises(ArticError, match="pip install 'artic\\[usd\\]'"):
        write_usd(tmp_path / "a.usda", art, poses, DT)


def test_artic_sim_writes_usd(tmp_path):
    """`artic sim ant --usd`: a stage with one time sample per step, whose links at the last step stand where the
    run file's link poses put them."""
    from artic.cli.main import main

    usd, run = tmp_path / "ant.usda", tmp_path / "run.npz"
    assert main(["sim", "ant", "--seconds", "0.25", "--usd", str(usd), "--plot", "", "--out", str(run)]) == 0
    stage = Usd.Stage.Open(str(usd))
    data = np.load(run)
    steps = len(data["t"])
    assert stage.GetEndTimeCode() == steps - 1 and stage.GetTimeCodesPerSecond() == pytest.approx(1 / data["dt"])
    links = _links(stage)
    for b, name in enumerate(data["link_names"]):
        np.testing.assert_allclose(
            _world(links[str(name)], steps - 1)[:3, 3], data["link_poses"][-1, 0, b, :3], atol=1e-5
        )
