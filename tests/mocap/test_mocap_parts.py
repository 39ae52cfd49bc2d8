"""The parts of marker fitting: segment models and their files, marker data and C3D, the rig's per-env marker
switching, errors; and the two body-joint features it added (per-env enabling, moving frames)."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import ArticError, Transform, ValidationError
from artic.mocap import (
    MarkerRig,
    MarkerSet,
    Segment,
    SegmentModel,
    fit_markers,
    load_segment_model,
    read_c3d,
    save_segment_model,
    track_markers,
    write_c3d,
)
from artic.mocap.synthetic import humanoid, humanoid_markers


def _pendulum(envs=2):
    scene = artic.Scene(envs)
    b = artic.RigidDynamic(Transform((0.0, 0.0, 0.5)), "bob")
    b.link.mass, b.link.inertia = 2.0, (0.01, 0.01, 0.01)
    b.link.linear_damping = b.link.angular_damping = 0.0
    b.articulation.sleep_threshold = 0.0
    scene.add_actor(b)
    j = scene.add_joint(
        artic.SphericalJoint.from_body_frames(b, Transform((0.0, 0.0, 0.5)), None, Transform((0.0, 0.0, 1.0)))
    )
    return scene, b, j


def test_joint_enabled_per_env():
    scene, b, j = _pendulum()
    scene.set_joint_enabled(j, np.array([True, False]))
    for _ in range(50):
        scene.step(0.01)
    z = scene.get_actor_pose(b)[:, 2]
    assert abs(z[0] - 0.5) < 1e-3  # held
    assert z[1] < 0.5 - 0.5 * 9.81 * 0.5**2 * 0.9  # free fall over 0.5 s
    f = scene.get_joint_forces(j).wrench_a
    assert abs(f[0, 2] - 2.0 * 9.81) < 0.05 and np.all(f[1] == 0.0)
    assert list(scene.get_joint_enabled(j)) == [True, False]
    with pytest.raises(ValidationError, match="enabled"):
        scene.set_joint_enabled(j, np.array([1, 0]))


def test_set_frames_moves_the_joint():
    scene, b, j = _pendulum(1)
    j.set_frames(frame_ca=Transform((0.0, 0.0, 0.3)))
    assert np.allclose(scene.get_joint_frames(j).c_world[0, :3], (0.0, 0.0, 0.8), atol=1e-6)
    for _ in range(300):
        scene.step(0.01)
    # the bob now hangs 0.3 m below the pivot
    assert abs(scene.get_actor_pose(b)[0, 2] - 0.7) < 2e-3


def test_spherical_joint_at_half_a_revolution_stays_finite():
    scene, b, j = _pendulum(3)
    poses = np.tile([0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 1.0], (3, 1))
    for e, angle in enumerate((np.pi - 1e-6, np.pi, np.pi + 1e-6)):
        poses[e, 3:] = [np.sin(angle / 2), 0.0, 0.0, np.cos(angle / 2)]
    scene.set_actor_pose(b, poses)
    for _ in range(5):
        scene.step(0.01)
        assert np.all(np.isfinite(scene.get_actor_pose(b)))
        assert np.all(np.isfinite(scene.get_joint_forces(j).wrench_a))


def test_segment_model_round_trips_and_validates():
    m = humanoid()
    art, _links = m.to_articulation()
    back = SegmentModel.from_articulation(art)
    for a, b in zip(m.segments, back.segments):
        assert a.name == b.name and a.parent == b.parent and abs(a.mass - b.mass) < 1e-12
        assert np.allclose(a.anchor_in_parent, b.anchor_in_parent) and np.allclose(a.anchor_in_child, b.anchor_in_child)
        assert np.allclose(a.inertia, b.inertia, atol=1e-9)
    with pytest.raises(ValidationError, match="mass"):
        Segment("s", None, -1.0)
    with pytest.raises(ValidationError, match="inertia"):
        Segment("s", None, 1.0, (1.0, -1.0, 1.0))
    with pytest.raises(ValidationError, match="parent 'nope'"):
        SegmentModel([Segment("a"), Segment("b", "nope")])
    with pytest.raises(ValidationError, match="two segments"):
        SegmentModel([Segment("a"), Segment("a", "a")])


def test_model_file_round_trip_and_mujoco_oracle(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    m = humanoid()
    names, segs, att = humanoid_markers(m)
    path = tmp_path / "h.xml"
    save_segment_model(path, m, names, segs, att)
    m2, n2, s2, a2 = load_segment_model(path)
    assert n2 == names and s2 == segs and np.allclose(a2, att)
    assert np.allclose(m2.reference_poses(), m.reference_poses())
    mj = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    # MuJoCo reads the same bodies: COMs, masses, ball joints at the anchors, sites at the markers
    assert np.allclose(d.xipos[1:], m.reference_poses()[:, :3], atol=1e-9)
    assert np.allclose(mj.body_mass[1:], [s.mass for s in m.segments])
    assert mj.njnt == len(m.segments) and mj.nsite == len(names)
    site = {mj.site(k).name: d.site_xpos[k] for k in range(mj.nsite)}
    world = m.reference_poses()[[m.index(s) for s in segs], :3] + att
    assert np.allclose([site[n] for n in names], world, atol=1e-9)
    bad = tmp_path / "bad.xml"
    bad.write_text(
        "<mujoco><worldbody><body name='a'><inertial mass='1' diaginertia='1 1'/></body></worldbody></mujoco>"
    )
    with pytest.raises(ArticError, match="diaginertia"):
        load_segment_model(bad)
    with pytest.raises(ArticError, match="does not exist"):
        load_segment_model(tmp_path / "none.xml")


def test_c3d_round_trip_with_missing_markers(tmp_path):
    p = np.random.default_rng(0).uniform(-1, 1, (5, 3, 3))
    p[2, 1] = np.nan
    ms = MarkerSet(["a", "b", "c"], ["s"] * 3, p, 120.0)
    write_c3d(tmp_path / "m.c3d", ms)
    names, q, rate = read_c3d(tmp_path / "m.c3d")
    assert names == ["a", "b", "c"] and rate == 120.0
    assert np.isnan(q[2, 1]).all() and np.allclose(np.nan_to_num(q), np.nan_to_num(p), atol=1e-6)
    (tmp_path / "junk.c3d").write_bytes(b"\x00" * 100)
    with pytest.raises(ArticError, match="could not be read"):
        read_c3d(tmp_path / "junk.c3d")


def test_marker_errors():
    m = humanoid()
    names, segs, att = humanoid_markers(m)
    p = np.zeros((4, len(names), 3))
    with pytest.raises(ValidationError, match=r"shape \(T, 39, 3\)"):
        MarkerSet(names, segs, p[:, :5])
    with pytest.raises(ValidationError, match="one segment per marker"):
        MarkerSet(names, segs[:3], p)
    q = p.copy()
    q[1, 0, 2] = np.nan
    with pytest.raises(ValidationError, match="some NaN"):
        MarkerSet(names, segs, q)
    wrong = list(segs)
    wrong[0] = "tail"
    with pytest.raises(ValidationError, match="segment 'tail' is not in segment model"):
        fit_markers(m, MarkerSet(names, wrong, p), epochs=1)
    with pytest.raises(ValidationError, match="attachments"):
        track_markers(m, MarkerSet(names, segs, p), att[:3])
    with pytest.raises(ValidationError, match="learning rate"):
        fit_markers(m, MarkerSet(names, segs, p), eta_m=2.0)


def test_missing_marker_is_switched_off_in_its_env():
    """A marker missing (NaN) in one env's frame pulls nothing there; present in the other env, it pulls."""
    m = SegmentModel([Segment("a", None, 1.0, (0.01, 0.01, 0.01))], (0.0, 0.0, 1.0))
    p = np.array([[[0.1, 0.0, 1.0]], [[np.nan] * 3]])
    rig = MarkerRig(m, MarkerSet(["m"], ["a"], p), np.zeros((1, 3)), 2, marker_erp_cfm=(0.2, 1e-3))
    rig.place_markers(p)
    rig.step(0.01, 30)
    x = rig.poses()[:, 0, :3]
    assert np.allclose(x[0], (0.1, 0.0, 1.0), atol=1e-3)
    assert np.allclose(x[1], (0.0, 0.0, 1.0), atol=1e-9)
    f, _ = rig.marker_forces()
    assert np.all(f[1] == 0.0)


def test_cli_fit_and_track(tmp_path):
    from artic.cli.main import main
    from artic.mocap.synthetic import record_markers, simulate_motion

    m = humanoid()
    names, segs, att = humanoid_markers(m)
    motion = simulate_motion(m, seconds=0.2, rate=100.0)
    ms = record_markers(motion, [m.index(s) for s in segs], att, names, segs)
    write_c3d(tmp_path / "m.c3d", ms)
    save_segment_model(tmp_path / "model.xml", m, names, segs, att)
    assert (
        main(
            [
                "fit",
                str(tmp_path / "m.c3d"),
                "--model",
                str(tmp_path / "model.xml"),
                "--out",
                str(tmp_path / "fit"),
                "--epochs",
                "2",
                "--relax-steps",
                "5",
                "--envs",
                "4",
            ]
        )
        == 0
    )
    _fitted, n2, _, a2 = load_segment_model(tmp_path / "fit" / "fitted.xml")
    assert n2 == names and np.all(np.isfinite(a2))
    assert (tmp_path / "fit" / "fit_report.png").is_file()
    assert (
        main(
            ["track", str(tmp_path / "m.c3d"), "--model", str(tmp_path / "model.xml"), "--out", str(tmp_path / "track")]
        )
        == 0
    )
    out = np.load(tmp_path / "track" / "track.npz")
    assert out["joint_torques"].shape == (ms.frames, 12, 3) and np.all(np.isfinite(out["joint_torques"]))
    # a site that is not a marker of the file: a clear error, exit code 2
    save_segment_model(tmp_path / "other.xml", m, ["x" + n for n in names], segs, att)
    assert (
        main(["track", str(tmp_path / "m.c3d"), "--model", str(tmp_path / "other.xml"), "--out", str(tmp_path / "t2")])
        == 2
    )


def test_batched_quaternion_helpers_match_scipy():
    from scipy.spatial.transform import Rotation

    from artic.math.np_spatial import quats_conj, quats_mul, quats_rotate, quats_to_rotvec

    rng = np.random.default_rng(1)
    a, b = Rotation.random(50, random_state=2), Rotation.random(50, random_state=3)
    v = rng.normal(size=(50, 3))
    qa, qb = a.as_quat(), b.as_quat()
    assert np.allclose(quats_rotate(qa, v), a.apply(v))
    assert np.allclose(quats_rotate(quats_conj(qa), v), a.inv().apply(v))
    assert np.allclose(Rotation.from_quat(quats_mul(qa, qb)).as_matrix(), (a * b).as_matrix())
    assert np.allclose(quats_to_rotvec(qa), a.as_rotvec())
    assert np.allclose(quats_to_rotvec(-qa), a.as_rotvec())  # either sign of a quaternion


def test_cut_files_and_array_rates_are_said(tmp_path, capsys):
    """Issue 27: a C3D file cut in half read as a shorter recording without a word, and an .npz marker file whose
    rate is an array stopped the CLI with a raw TypeError. Now the first warns with the frame counts and the
    second is a clear error (exit code 2); a rate that is not one positive number is refused by MarkerSet too."""
    from artic.cli.main import main

    p = np.random.default_rng(1).uniform(-1, 1, (200, 3, 3))
    write_c3d(tmp_path / "full.c3d", MarkerSet(["a", "b", "c"], ["s"] * 3, p, 100.0))
    data = (tmp_path / "full.c3d").read_bytes()
    (tmp_path / "cut.c3d").write_bytes(data[: len(data) // 2])
    with pytest.warns(RuntimeWarning, match=r"declares 200 frames but only \d+ could be read"):
        _, cut, _ = read_c3d(tmp_path / "cut.c3d")
    assert 0 < len(cut) < 200 and np.allclose(cut, p[: len(cut)], atol=1e-6)
    m = humanoid()
    names, segs, att = humanoid_markers(m)
    save_segment_model(tmp_path / "model.xml", m, names, segs, att)
    np.savez(tmp_path / "m.npz", names=np.array(names), positions=np.zeros((3, len(names), 3)), rate=np.ones(2))
    assert main(["track", str(tmp_path / "m.npz"), "--model", str(tmp_path / "model.xml")]) == 2
    assert "rate must be one number" in capsys.readouterr().err
    for rate in (np.array([100.0, 50.0]), "100", -1.0, np.nan):
        with pytest.raises(ValidationError, match="markers: rate"):
            MarkerSet(["a"], ["s"], np.zeros((2, 1, 3)), rate)


def test_fit_sizes_its_batch_to_the_memory_and_the_scene_refuses_a_block_too_large(monkeypatch):
    """Issue 27: `artic fit ... --envs 100000` ran until the OOM killer stopped it, because the memory check counted
    each body alone while the rig's 52 bodies step as one block whose arrays grow with the square of their 312
    generalized dofs (2 MB per env). Now the scene checks each block before building it (an ArticError with the
    block's size and the fixes), and fit_markers relaxes as many frames at once as half the available memory
    holds, with a warning. The available memory is patched to 200 MB here."""
    m = humanoid()
    names, segs, att = humanoid_markers(m)
    p = np.zeros((12, len(names), 3)) + np.array([0.0, 0.0, 1.0])
    markers = MarkerSet(names, segs, p, 100.0)
    probe = MarkerRig(m, markers, att, 1)
    per_env = probe.scene.bytes_per_env()
    assert 1.5e6 < per_env < 3e6  # the 52-body block: M, M^-1 and 459 joint rows over 312 generalized dofs
    monkeypatch.setattr("artic.sim.memory.available_bytes", lambda device: (200 * 2**20, "available memory"))
    with pytest.raises(
        ArticError, match=r"bodies stepped together .*generalized dofs.*use at most about \d+ envs, or let"
    ):
        MarkerRig(m, markers, att, 1000)
    with pytest.warns(RuntimeWarning, match=r"fit_markers: 1000 envs .* relaxing (\d+) frames at a time"):
        res = fit_markers(m, markers, att, epochs=1, num_envs=1000, relax_steps=2)
    assert np.all(np.isfinite(res.attachments))


def test_fit_progress_in_a_log_is_lines_not_redraws(capsys):
    """In a pipe or a log (stderr not a terminal, as under pytest) the fit's progress is a line at every fifth of
    the epochs, without carriage returns; a 3,000-character line of redraws was what a log got."""
    m = humanoid()
    names, segs, att = humanoid_markers(m)
    p = np.zeros((4, len(names), 3)) + np.array([0.0, 0.0, 1.0])
    fit_markers(m, MarkerSet(names, segs, p, 100.0), att, epochs=5, num_envs=2, relax_steps=1, progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [line for line in err.splitlines() if line.startswith("fit: epoch")]
    assert [line.split()[2] for line in lines] == ["1/5", "2/5", "3/5", "4/5", "5/5"]
