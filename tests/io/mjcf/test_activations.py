"""MJCF actuators with state (issue 25, Deliver 2): MuJoCo's activations (intvelocity, dyntype integrator, filter and
filterexact, <position timeconst>, <cylinder>, actrange, actearly) and the affine gain of <damper>, which
`MjcfControl` integrates and applies at the start of every step (Scene.set_before_step), against MuJoCo 4 on the
chain of test_actuators.py (zero gravity, contacts off, Euler, h = 1.25e-4 s, so that PhysX's implicit drives and
MuJoCo's explicit actuator forces differ by < 5e-4 over 1 s).

Each trajectory test also checks that the activation mattered: the same chain with the lag or the integration left
out (what artic did before) parts from MuJoCo's by more than the tolerance.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag, ValidationError
from tests.io.mjcf.test_actuators import TOLERANCE, _chain, _check_match, _trajectories

mujoco = pytest.importorskip("mujoco")


def _activations(path, ctrl_at, seconds):
    """MuJoCo's data.act and artic's control.act after each step under ctrl_at(t), set at every step."""
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    ours, theirs = [], []
    for step in range(round(seconds / mm.opt.timestep)):
        c = np.asarray(ctrl_at(step * mm.opt.timestep), float)
        md.ctrl[:] = c
        control.set(c[None])
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
        ours.append(control.act[0].copy())
        theirs.append(md.act.copy())
    return np.array(ours), np.array(theirs)


def _drift(ours, lagless):
    """How far the trajectory without the activation parts from the one with it."""
    return np.abs(ours - lagless).max()


def test_intvelocity_integrates_ctrl_as_mujoco(tmp_path):
    """<intvelocity kp actrange>: its activation integrates ctrl and stops at actrange, exactly as MuJoCo's
    (1e-12), and the joint follows MuJoCo's to 1e-3 over 1 s under a ctrl that changes sign; the servo's target is
    the integral (a position servo on the raw ctrl goes elsewhere)."""
    iv = '<intvelocity name="p" joint="j2" kp="5" kv="0.5" gear="1.5" actrange="-0.6 0.4"/>'
    path = _chain(tmp_path, position=iv)

    def ctrl(t):
        return [0.1, 1.5 if t < 0.5 else -2.0, 0.2]

    ours_act, theirs_act = _activations(path, ctrl, 1.0)
    np.testing.assert_allclose(ours_act, theirs_act, atol=1e-12)
    assert theirs_act.max() == pytest.approx(0.4) and theirs_act.min() == pytest.approx(-0.6)  # both ends reached
    ours, theirs, _ = _trajectories(path, ctrl, 1.0)
    _check_match(ours, theirs)
    plain, _, _ = _trajectories(_chain(tmp_path), ctrl, 1.0)
    assert _drift(ours, plain) > 10 * TOLERANCE


def test_intvelocity_inheritrange_and_dampratio(tmp_path):
    """inheritrange sets an intvelocity's actrange (not its ctrlrange) from the joint's range, dampratio its kv, as
    MuJoCo's compiler does; the activation stops at the inherited range as MuJoCo's."""
    path = _chain(tmp_path, position='<intvelocity name="p" joint="j2" kp="5" dampratio="1" inheritrange="0.5"/>')
    path.write_text(
        path.read_text()
        .replace('<joint name="j2" axis="0 1 0"/>', '<joint name="j2" axis="0 1 0" range="-0.4 0.8"/>')
        .replace("<option timestep", '<compiler angle="radian"/>\n  <option timestep')
    )
    mm = mujoco.MjModel.from_xml_path(str(path))
    model = artic.load_mjcf(path)
    rec = model.actuators[1]
    assert rec.dyn == "integrator" and rec.ctrlrange is None
    np.testing.assert_allclose(rec.actrange, mm.actuator_actrange[1], atol=1e-12)
    assert rec.bias[2] == pytest.approx(mm.actuator_biasprm[1, 2], rel=1e-9)
    ours_act, theirs_act = _activations(path, lambda t: [0.0, 3.0, 0.0], 0.3)
    np.testing.assert_allclose(ours_act, theirs_act, atol=1e-12)
    assert theirs_act[-1, 0] == pytest.approx(0.5)  # middle 0.2 + 0.5 * 0.6


@pytest.mark.parametrize(
    "servo",
    [
        '<position name="p" joint="j2" kp="5" kv="0.5" gear="1.5" timeconst="0.05"/>',  # filterexact
        '<cylinder name="p" joint="j2" gear="1.5" area="0.4" bias="0 -4 -0.3" timeconst="0.05"/>',  # filter
        '<general name="p" joint="j2" gear="1.5" gainprm="5" biastype="affine" biasprm="0 -5 -0.5" '
        'dyntype="filter" dynprm="0.1"/>',
        '<general name="p" joint="j2" gear="1.5" gainprm="5" biastype="affine" biasprm="0 -5 -0.5" '
        'dyntype="filterexact" dynprm="0.1" actearly="true"/>',
    ],
)
def test_filters_lag_as_in_mujoco(tmp_path, servo):
    """A servo behind an activation filter (Euler filter, exact filter, actearly) lags its ctrl as MuJoCo's: the
    activation to 1e-12, the joints to 1e-3 over 1 s under a varying ctrl; without the lag the chain parts from
    MuJoCo's by more than 10x that."""
    path = _chain(tmp_path, position=servo)

    def ctrl(t):
        return [0.2, 1.2 * np.sin(4 * t), 0.1]

    ours_act, theirs_act = _activations(path, ctrl, 0.5)
    np.testing.assert_allclose(ours_act, theirs_act, atol=1e-12)
    ours, theirs, _ = _trajectories(path, ctrl, 1.0)
    _check_match(ours, theirs)
    lagless = servo.replace('timeconst="0.05"', 'timeconst="0.0001"').replace('dynprm="0.1"', 'dynprm="0.0001"')
    plain, _, _ = _trajectories(_chain(tmp_path, position=lagless), ctrl, 1.0)
    assert _drift(ours, plain) > 10 * TOLERANCE


def test_damper_scales_damping_with_ctrl(tmp_path):
    """<damper kv ctrlrange>: a joint force -kv ctrl velocity, taken at the step's initial velocity (as MuJoCo's
    Euler); a motor swings the joint, the damper's ctrl sweeps 0..1 and beyond its range: MuJoCo's trajectory to
    1e-3 over 1 s, and without the damper the chain moves elsewhere. A general actuator with an affine gain
    (length and velocity terms) on a joint follows MuJoCo too."""
    extra = '<damper name="d" joint="j1" kv="0.8" ctrlrange="0 1"/>'

    def ctrl(t):
        return [np.sin(5 * t), 0.3, 0.2, 1.5 * abs(np.sin(2 * t))]

    ours, theirs, control = _trajectories(_chain(tmp_path, extra=extra), ctrl, 1.0)
    _check_match(ours, theirs)
    assert control.ctrl[0, 3] <= 1.0
    free, _, _ = _trajectories(_chain(tmp_path, extra=extra.replace('kv="0.8"', 'kv="0"')), ctrl, 1.0)
    assert _drift(ours, free) > 10 * TOLERANCE
    affine = '<general name="g" joint="j3" gaintype="affine" gainprm="0.5 -0.4 -0.3" dyntype="integrator"/>'
    ours, theirs, _ = _trajectories(_chain(tmp_path, extra=affine), lambda t: [0.2, 0.3, 0.1, np.cos(4 * t)], 1.0)
    _check_match(ours, theirs)


def test_damper_range_is_required_and_not_negative(tmp_path):
    """MuJoCo refuses a damper without ctrlrange or with a negative one; so does artic, naming the fix."""
    for attrs, match in (("", "needs ctrlrange"), ('ctrlrange="-1 1"', "must not be negative")):
        path = _chain(tmp_path, extra=f'<damper name="d" joint="j1" kv="1" {attrs}/>')
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_path(str(path))
        with pytest.raises(artic.MjcfError, match=match):
            artic.load_mjcf(path)


KEYED = """<keyframe><key name="k" qpos="0.1 -0.2 0.3" ctrl="0.2 0.5 0.1 1.0" act="0.35"/></keyframe>
</mujoco>"""


def test_keyframe_act_and_set_keyframe(tmp_path):
    """A key's act (one value per actuator with an activation) is read as MuJoCo's key_act, and
    MjcfControl.set_keyframe puts the chosen envs in the key's state, ctrl and act: from it the chain follows
    MuJoCo's mj_resetDataKeyframe run to 1e-3 over 0.5 s, while the other env keeps its own."""
    iv = '<intvelocity name="iv" joint="j3" kp="4" kv="0.4"/>'
    path = _chain(tmp_path, extra=iv)
    path.write_text(path.read_text().replace("</mujoco>", KEYED))
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    model = artic.load_mjcf(path)
    np.testing.assert_allclose(model.keyframes[0].act, mm.key_act[0], atol=1e-12)
    scene = artic.Scene(2, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    control.set_keyframe("k", envs=[1])
    np.testing.assert_allclose(control.act, [[0.0], [0.35]])
    np.testing.assert_allclose(control.ctrl[1], md.ctrl)
    assert np.all(control.ctrl[0] == 0.0)
    (art,) = model.articulations
    cache = art.create_cache()
    idx = [art.dof_names.index(n) for n in ("j1", "j2", "j3")]
    h = mm.opt.timestep
    for _ in range(round(0.5 / h)):
        mujoco.mj_step(mm, md)
        scene.step(h)
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
    assert np.abs(cache.joint_position[1, idx] - md.qpos).max() < TOLERANCE
    assert np.abs(md.qpos - mm.key_qpos[0]).max() > 0.05  # MuJoCo's chain moved
    assert control.act[1, 0] == pytest.approx(md.act[0], abs=1e-12)
    assert np.abs(cache.joint_position[0, idx]).max() < 1e-9  # env 0: ctrl 0 from rest, nothing moves


def test_a_newer_control_replaces_the_older(tmp_path):
    """Two MjcfControls of one model in one scene: the newer one's step hook replaces the older one's, so the
    activation is integrated once per step (as MuJoCo's), not twice."""
    path = _chain(tmp_path, position='<intvelocity name="p" joint="j2" kp="5"/>')
    model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    artic.MjcfControl(model, scene).set([[0.0, 1.0, 0.0]])
    control = artic.MjcfControl(model, scene)
    control.set([[0.0, 1.0, 0.0]])
    for _ in range(10):
        scene.step(0.01)
    assert control.act[0, 0] == pytest.approx(0.1, abs=1e-12)


def test_bad_act_is_refused(tmp_path):
    """An act of the wrong shape or with NaN is refused with a ValidationError naming the actuators with an
    activation; ctrl and act stay as they were."""
    model = artic.load_mjcf(_chain(tmp_path, position='<intvelocity name="p" joint="j2" kp="5"/>'))
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    for act, match in (([[0.1, 0.2]], r"shape \(1, 2\)"), ([[np.nan]], "non-finite")):
        with pytest.raises(ValidationError, match=rf"act must be 1 x 1 finite numbers .*activation: p.*{match}"):
            control.set([[0.0, 1.0, 0.0]], act=act)
        assert np.all(control.ctrl == 0.0) and np.all(control.act == 0.0)
    # beyond ctrl's bound too, through set and through the act property (MuJoCo resets on the bad accelerations)
    with pytest.raises(ValidationError, match="act values must be at most 1e\\+15"):
        control.set([[0.0, 1.0, 0.0]], act=[[1e20]])
    with pytest.raises(ValidationError, match="act values must be at most 1e\\+15"):
        control.act = [[-1e300]]
    assert np.all(control.act == 0.0)


def test_dm_control_quadruped_filters_follow_mujoco(tmp_path):
    """dm_control's quadruped as shipped (12 position servos, kp 1000, behind 0.1 s activation filters), on MuJoCo's
    Euler at the file's 5 ms step with contacts off, under one random ctrl sequence for 0.3 s: the activations equal
    MuJoCo's (1e-12) and the hinges follow MuJoCo's to 0.03 rad (0.019 measured; 0.004 at 1 ms: PhysX's implicit
    drives at kp 1000), while the servos' travel is 0.38 rad. The same file with the filters mapped as dyntype none
    (artic before activations) moves the hinges elsewhere by 0.4 rad."""
    dm_control = pytest.importorskip("dm_control")
    import re
    import shutil
    from pathlib import Path

    suite = Path(dm_control.__file__).parent / "suite"
    shutil.copytree(suite / "common", tmp_path / "common")
    text = re.sub(
        r"<option[^>]*/>",
        '<option timestep=".005" integrator="Euler"><flag contact="disable"/></option>',
        (suite / "quadruped.xml").read_text(),
        count=1,
    )
    table = np.random.default_rng(3).uniform(-1.0, 1.0, (30, 12))

    def ctrl(t):
        return table[min(int(t / 0.01 + 1e-9), 29)]

    runs = {}
    for dyn in ("filter", "none"):
        path = tmp_path / f"quadruped_{dyn}.xml"
        path.write_text(text.replace('dyntype="filter"', f'dyntype="{dyn}"'))
        runs[dyn] = _trajectories(path, ctrl, 0.3)
    ours, theirs, _ = runs["filter"]
    ours_act, theirs_act = _activations(tmp_path / "quadruped_filter.xml", ctrl, 0.3)
    assert ours_act.shape == (60, 12)
    np.testing.assert_allclose(ours_act, theirs_act, atol=1e-12)
    travel = np.abs(theirs[:, :12] - theirs[0, :12]).max()
    print(f"quadruped: max error {np.abs(ours - theirs).max():.2e} over {travel:.2f} rad of travel")
    assert travel > 0.2
    assert np.abs(ours - theirs).max() < 0.03
    assert np.abs(runs["none"][0] - ours).max() > 0.2
