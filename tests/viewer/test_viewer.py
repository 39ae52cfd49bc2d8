"""The HTML replay (artic.viewer): its inputs are checked, and a replay of the shipped ant runs in a real headless
Chromium (Debian's `chromium`, driven by Playwright's Python client) without console errors or network, holds the
ant's bodies, and redraws when the slider moves."""

import os
import shutil

import numpy as np
import pytest

from artic import Scene
from artic.assets import load_model, model_path
from artic.errors import ValidationError
from artic.viewer import Recorder, write_replay
from tests.support import EXAMPLES

DT = 1.0 / 60.0
FRAMES = 120  # two seconds: the ant drops onto its floor, bounces on its soft feet (as MuJoCo's) and settles


@pytest.fixture(scope="module")
def ant_replay(tmp_path_factory):
    art, statics, gravity = load_model(model_path("ant"))
    scene = Scene(1, gravity=gravity)
    for actor in statics:
        scene.add_actor(actor)
    scene.add_articulation(art)
    rec = Recorder(scene)
    for _ in range(FRAMES):
        scene.step(DT)
        rec.record()
    path = rec.write(tmp_path_factory.mktemp("replay") / "ant.html", DT, title="ant")
    return path, art, statics, rec


def _chromium():
    """Debian's chromium binary, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    missing = (
        "Debian's chromium (apt-get install chromium)"
        if exe is None
        else "the playwright Python package (pip install playwright)"
        if sync_playwright is None
        else None
    )
    if missing:
        if os.environ.get("CI"):  # .ci/run installs both: a missing one there is a broken CI, not a skip
            pytest.fail(f"the browser test needs {missing}, which .ci/run should have installed")
        pytest.skip(f"the browser test needs {missing}")
    with sync_playwright() as p:
        # SwiftShader gives WebGL without a GPU; --no-sandbox because CI runs as root
        b = p.chromium.launch(
            executable_path=exe, args=["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
        )
        yield b
        b.close()


def _open(browser, path):
    page = browser.new_page(viewport={"width": 900, "height": 600})
    log = {"errors": [], "requests": []}
    page.on("console", lambda m: m.type == "error" and log["errors"].append(m.text))
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    page.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:")) or log["requests"].append(r.url))
    page.goto(path.as_uri())
    page.wait_for_function("window.articReplay && window.articReplay.ready", timeout=30000)
    return page, log


def _pixels(png: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def test_ant_replay_runs_in_chromium(ant_replay, browser, tmp_path):
    """The ant's replay loads in headless Chromium with no console error and no network request, holds one body
    per ant link (13, from the model) and its floor, and moving the slider to the last frame changes the drawn
    pixels (the ant has dropped onto the floor) and the time shown."""
    path, art, statics, _ = ant_replay
    page, log = _open(browser, path)
    info = page.evaluate(
        "({bodies: articReplay.bodyCount, statics: articReplay.staticCount, "
        "frames: articReplay.frameCount, contacts: articReplay.maxContacts})"
    )
    assert info["bodies"] == art.link_count == 13
    assert info["statics"] == len(statics) >= 1
    assert info["frames"] == FRAMES
    assert info["contacts"] >= 4  # the four feet rest on the floor
    before = page.screenshot()
    # move the slider as a person does: set its value and fire its input event
    page.evaluate("""() => { const s = document.getElementById('artic-slider');
                      s.value = s.max; s.dispatchEvent(new Event('input')); }""")
    page.wait_for_timeout(200)
    after = page.screenshot()
    shot = tmp_path / "ant_replay_last_frame.png"
    shot.write_bytes(after)
    print(f"replay screenshot: {shot}")
    assert page.evaluate("articReplay.frame") == FRAMES - 1
    assert page.text_content("#artic-time") == f"{(FRAMES - 1) * DT:.3f} s"
    changed = np.abs(_pixels(before) - _pixels(after)).max(axis=2) > 8
    assert changed.mean() > 0.002, f"only {changed.mean():.4%} of the pixels changed between the first and last frame"
    assert log["errors"] == [], log["errors"]
    assert log["requests"] == [], f"the page reached for the network: {log['requests']}"
    page.close()


def test_joint_frames_toggle_draws(ant_replay, browser):
    """Ticking 'joint frames' draws the ant's joint frames (2 per joint: 24) over the bodies: the pixels change,
    and no error is logged."""
    path, art, _, _ = ant_replay
    page, log = _open(browser, path)
    assert page.evaluate("articReplay.jointFrameCount") == 2 * (art.link_count - 1)
    before = _pixels(page.screenshot())
    page.check("#artic-joint-frames")
    page.wait_for_timeout(200)
    after = _pixels(page.screenshot())
    assert (np.abs(before - after).max(axis=2) > 8).mean() > 0.001
    assert log["errors"] == [], log["errors"]
    page.close()


def test_replay_is_self_contained(ant_replay):
    """The page loads nothing: no script or stylesheet from elsewhere, three.js and the data inlined."""
    html = ant_replay[0].read_text()
    assert "<script src" not in html and "<link" not in html
    assert "OrbitControls" in html and "window.ARTIC_DATA = {" in html


def test_recorded_contacts_are_the_scenes(ant_replay):
    """The recorder keeps env 0's contacts of each frame as the scene reports them: at the last frame the ant's
    feet on the floor (two or four) hold its weight (sum of vertical forces = m g). (At 1 s, the replay's length
    before MuJoCo's pyramidal cone, the ant is between two bounces on its soft feet, which MuJoCo's ant makes too
    at this step.)"""
    _, art, _, rec = ant_replay
    points, normals, forces = rec.contacts[-1]
    assert len(points) >= 2
    weight = sum(link.mass for link in art.get_links()) * 9.81
    assert forces[:, 2].sum() == pytest.approx(weight, rel=0.05)
    assert np.allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-4)


def test_write_replay_from_model_path(tmp_path, ant_replay):
    """write_replay takes a model path and (T, E, L, 7) link poses (what `artic view` gets from a run.npz) and
    names the page after the model."""
    _, _, _, rec = ant_replay
    poses = np.stack(rec.poses[0])[:, None]  # (T, 1, L, 7)
    out = write_replay(tmp_path / "r.html", model_path("ant"), poses, DT)
    assert "<title>ant - artic replay</title>" in out.read_text()


@pytest.mark.parametrize(
    "case, message",
    [
        ("shape", "must be (frames, 13, 7)"),
        ("nan", "frame 3"),
        ("dt", "dt must be a positive"),
        ("contacts", "2 contacts frames for 5 pose frames"),
        ("color", "no link named ['nose']"),
        ("folder", "does not exist"),
        ("zero quaternion", "body 4 in frame 2 has norm 0"),
        ("long quaternion", "body 4 in frame 2 has norm 2"),
        ("far", "frame 1 reach 1e+30 m"),
        ("no path", "path must be a file path"),
    ],
)
def test_write_replay_refuses_bad_input(tmp_path, case, message):
    """Wrong pose shapes, non-finite poses, a bad dt, a contact list of the wrong length, an unknown link colour,
    a missing folder, zero or non-unit quaternions, positions at 1e30 m and no path at all (issue 27: the last
    three were accepted, or a raw TypeError) each give a ValidationError that says what is wrong."""
    poses = np.zeros((5, 13, 7))
    poses[..., 6] = 1.0
    kwargs = {"link_poses": poses, "dt": DT}
    path = tmp_path / "r.html"
    if case == "shape":
        kwargs["link_poses"] = poses[:, :12]
    elif case == "nan":
        poses[3, 2, 0] = np.nan
    elif case == "dt":
        kwargs["dt"] = 0.0
    elif case == "contacts":
        kwargs["contacts"] = [None, None]
    elif case == "color":
        kwargs["colors"] = {"nose": "#ff0000"}
    elif case == "folder":
        path = tmp_path / "missing" / "r.html"
    elif case == "zero quaternion":
        poses[2, 4, 3:] = 0.0
    elif case == "long quaternion":
        poses[2, 4, 6] = 2.0
    elif case == "far":
        poses[1, 0, 0] = 1e30
    elif case == "no path":
        path = None
    with pytest.raises(ValidationError) as err:
        write_replay(path, "ant", **kwargs)
    assert message in str(err.value)
    assert path is None or not path.exists()


def _view(argv):
    """`artic view` through its own parser (cli/main.py registers the same add_parser)."""
    import argparse

    from artic.cli.view import add_parser

    parser = argparse.ArgumentParser(prog="artic")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["view", *argv])
    return args.func(args)


def test_artic_view_rebuilds_replay_from_run_file(tmp_path, ant_replay, capsys):
    """`artic view run.npz` writes run.html from the run's link poses (T, E, L, 7), model name and dt: the page
    holds the ant's frames, and the command says where it wrote it."""
    _, _, _, rec = ant_replay
    run = tmp_path / "run.npz"
    np.savez(run, link_poses=np.stack(rec.poses[0])[:, None], model="ant", dt=DT)
    assert _view([str(run)]) == 0
    html = (tmp_path / "run.html").read_text()
    assert f'"frame_count":{FRAMES}' in html and "<title>ant - artic replay</title>" in html
    assert str(tmp_path / "run.html") in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no run file"),
        ({"q": np.zeros((3, 1, 8))}, "has no link_poses, model, dt"),
        ({"link_poses": np.zeros((3, 13, 7)), "model": "ant", "dt": DT}, "must be (frames, envs, links, 7)"),
    ],
)
def test_artic_view_refuses_bad_run_files(tmp_path, content, message):
    """A missing run file, one without link poses (an older artic sim) and one with poses of the wrong rank are
    refused with a ValidationError that names the file and the fix."""
    run = tmp_path / "run.npz"
    if content is not None:
        np.savez(run, **content)
    with pytest.raises(ValidationError) as err:
        _view([str(run)])
    assert message in str(err.value)


def test_replay_ant_example(tmp_path):
    """examples/replay_ant.py writes its replay with one frame per step, and the driven legs move the links
    relative to the torso (the gait is in the poses, not only the fall)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("replay_ant", EXAMPLES / "replay_ant.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path, rec = module.main(["--seconds", "1", "--html", str(tmp_path / "ant.html")])
    assert path.stat().st_size > 500_000  # three.js is inlined
    poses = np.stack(rec.poses[0])
    frames = round(1.0 / DT)
    assert len(poses) == frames
    relative = poses[:, 1:, :3] - poses[:, :1, :3]  # link positions relative to the torso
    assert np.ptp(relative[frames // 2 :], axis=0).max() > 0.05


def _page_data(html: str) -> dict:
    import json

    start = html.index("window.ARTIC_DATA = ") + len("window.ARTIC_DATA = ")
    return json.loads(html[start : html.index(";</script>", start)])


def test_loop_joint_frames_of_four_bar(tmp_path, browser):
    """The four-bar example's replay (a static bar, three RigidDynamic bars as convex hulls, four body hinges
    closing the loop) draws 3 moving bodies, 1 static, a C and a D frame per hinge (8): C on body A, D on body B
    (joint0's C on the static bar), and each hinge's force on body A at C, without console errors."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("four_bar", EXAMPLES / "four_bar.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scene, bars, _ = module.build_four_bar()
    rec = Recorder(scene)
    for _ in range(30):  # half a second: the linkage swings down through its bottom pose
        scene.step(DT)
        rec.record()
    path = rec.write(tmp_path / "four_bar.html", DT)
    frames = _page_data(path.read_text())["frames"]
    assert [(f["joint"], f["kind"]) for f in frames] == [(f"joint{i}", k) for i in range(4) for k in "CD"]
    assert frames[0] == {"static": 0, "kind": "C", "joint": "joint0", "pose": frames[0]["pose"]}
    assert [f.get("body") for f in frames[1:]] == [0, 0, 1, 1, 2, 2, None]
    assert frames[-1]["static"] == 0
    points = np.array([p for p, _ in rec.joint_forces])
    forces = np.array([f for _, f in rec.joint_forces])
    assert points.shape == forces.shape == (30, 4, 3)
    # joint0's frame C sits on the grounded bar (centre (-0.5, 0, 0), upright) at its top pin, 0.5 m up its z axis
    assert np.allclose(points[:, 0], [-0.5, 0.0, 0.5], atol=1e-6)
    # the hinges hold the swinging linkage: the largest pin force exceeds the heaviest bar's weight
    assert np.isfinite(forces).all()
    assert np.linalg.norm(forces, axis=2).max() > max(b.link.mass for b in bars[1:]) * 9.81
    page, log = _open(browser, path)
    assert page.evaluate(
        "[articReplay.bodyCount, articReplay.staticCount, articReplay.jointFrameCount, articReplay.maxJointForces]"
    ) == [3, 1, 8, 4]
    page.check("#artic-joint-frames")
    page.screenshot(path=tmp_path / "four_bar.png")
    assert log["errors"] == [], log["errors"]
    page.close()
