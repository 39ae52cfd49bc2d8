"""A step that leaves an env's state non-finite is detected per env and reported (artic/sim/status.py), and a
float32-singular mass matrix gets a finite response (the pivot floor of artic/math/dense.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag, NanPolicy, NonFiniteStateError
from artic.sim.status import FINITE_LIMIT
from tests.support.scenes import prismatic_drive

DT = 1.0 / 60.0


def _slider(envs=4, policy="warn"):
    art, scene0 = prismatic_drive(envs=envs)
    scene0.remove_articulation(art)
    scene = artic.Scene(envs, gravity=(0.0, 0.0, 0.0), nan_policy=policy)
    scene.add_articulation(art)
    return art, scene


def _poison(scene, art, env, field="joint_qd", value=np.nan, part="state"):
    """Write a bad value into one env's state (or control) directly, bypassing the cache's input checks, as a
    step that lost the state would leave it."""
    arr = getattr(getattr(scene.view(art), part), field)
    a = arr.numpy()
    a[env, 0] = value
    arr.assign(a)


def _steps(scene, n):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(n):
            scene.step(DT)
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def test_warn_policy_marks_only_the_bad_env_once_and_leaves_the_others_bitwise_unchanged():
    """Under the default policy a NaN in env 2 sets env 2's status (and no other), gives one warning naming the
    articulation and the env, and the other envs follow exactly the trajectory of a scene without the NaN."""
    art, scene = _slider()
    ref_art, ref = _slider()
    assert scene.nan_policy == NanPolicy.WARN
    _steps(scene, 3)
    _steps(ref, 3)
    _poison(scene, art, 2)
    msgs = _steps(scene, 40)
    _steps(ref, 40)
    assert len(msgs) == 1 and "'prismatic'" in msgs[0] and "env(s) 2" in msgs[0], msgs
    assert scene.env_status.tolist() == [False, False, True, False]
    assert scene.get_env_status(art).tolist() == [False, False, True, False]
    q = scene.view(art).state.joint_q.numpy()
    q_ref = ref.view(ref_art).state.joint_q.numpy()
    assert np.isnan(q[2, 0])
    np.testing.assert_array_equal(q[[0, 1, 3]], q_ref[[0, 1, 3]])


def test_warnings_are_rate_limited_and_later_envs_are_warned_about_once_the_interval_has_passed(monkeypatch):
    """A second env going bad right after the first gives no second warning within the interval, but the status
    array shows it at once; at the first step after the interval a warning names that env (and only it), although
    no further env was lost."""
    art, scene = _slider()
    _poison(scene, art, 1)
    first = _steps(scene, 2)
    _poison(scene, art, 3)
    second = _steps(scene, 2)
    assert len(first) == 1 and second == []
    assert scene.env_status.tolist() == [False, True, False, True]
    monkeypatch.setattr(artic.sim.status, "WARN_INTERVAL", 0.0)  # as if the interval had passed
    third = _steps(scene, 1)
    assert len(third) == 1 and "env(s) 3 " in third[0] and "env(s) 1" not in third[0]
    assert _steps(scene, 3) == []
    cache = art.create_cache()  # env 1 reset, then lost again: reported again
    cache.joint_velocity[:] = 0.0
    cache.joint_position[:] = 0.1
    art.apply_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    assert not scene.env_status.any()
    _poison(scene, art, 1)
    fourth = _steps(scene, 1)
    assert len(fourth) == 1 and "env(s) 1 " in fourth[0] and scene.env_status.tolist() == [False, True, False, False]


def test_beyond_finite_limit_is_reported_like_nan():
    """A finite state beyond FINITE_LIMIT (float32 squares overflow past ~1.8e19) counts as lost."""
    art, scene = _slider()
    _poison(scene, art, 0, "joint_q", 10 * FINITE_LIMIT)
    msgs = _steps(scene, 1)
    assert len(msgs) == 1 and scene.env_status.tolist() == [True, False, False, False]


def test_raise_policy_raises_naming_articulation_and_env():
    """nan_policy='raise': Scene.step raises NonFiniteStateError (an ArticError) naming the articulation and env."""
    art, scene = _slider(policy="raise")
    _poison(scene, art, 3)
    with pytest.raises(NonFiniteStateError, match=r"'prismatic' env\(s\) 3"):
        scene.step(DT)
    assert isinstance(NonFiniteStateError("x"), artic.ArticError)


def test_freeze_policy_holds_the_last_finite_state_until_a_reset_clears_it():
    """nan_policy='freeze': a lost env is put back to the state it had at the start of the step that lost it and
    is not stepped again; the others go on; writing a finite state through the cache clears the status and the
    env moves again."""
    art, scene = _slider(policy="freeze")
    _steps(scene, 3)
    q_start = scene.view(art).state.joint_q.numpy().copy()
    _poison(scene, art, 1, "joint_force", np.nan, part="control")  # the step from a finite state loses it
    msgs = _steps(scene, 5)
    q_after = scene.view(art).state.joint_q.numpy()
    assert len(msgs) == 1 and "frozen" in msgs[0]
    assert scene.env_status.tolist() == [False, True, False, False]
    assert q_after[1, 0] == q_start[1, 0]  # exactly the state before the bad step
    assert np.all(q_after[[0, 2, 3], 0] != q_start[[0, 2, 3], 0])  # the others moved on
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    cache.joint_velocity[1] = 0.0
    cache.joint_force[:] = 0.0  # the cause goes too, or the env is lost again in its next step
    art.apply_cache(cache, CacheFlag.VELOCITY | CacheFlag.FORCE)
    assert not scene.env_status.any()
    assert _steps(scene, 1) == [] and not scene.env_status.any()
    assert scene.view(art).state.joint_q.numpy()[1, 0] != q_start[1, 0]


def test_reset_through_the_cache_clears_an_env_only_once_its_whole_state_is_finite():
    """apply_cache re-checks the envs: writing finite velocities while the positions are still NaN keeps the
    status; writing finite positions too clears it."""
    art, scene = _slider()
    _poison(scene, art, 0)
    _poison(scene, art, 2)
    _steps(scene, 1)
    assert np.isnan(scene.view(art).state.joint_q.numpy()[[0, 2], 0]).all()
    cache = art.create_cache()
    cache.joint_velocity[:] = 0.0
    art.apply_cache(cache, CacheFlag.VELOCITY)
    assert scene.env_status.tolist() == [True, False, True, False]
    cache.joint_position[:] = 0.1
    art.apply_cache(cache, CacheFlag.POSITION)
    assert not scene.env_status.any()


def test_unknown_policy_is_refused():
    with pytest.raises(artic.ValidationError, match="nan_policy"):
        artic.Scene(1, nan_policy="ignore")
    assert artic.Scene(1, nan_policy=NanPolicy.FREEZE).nan_policy == NanPolicy.FREEZE


def test_a_hinge_without_inertia_about_its_axis_steps_finitely_through_the_pivot_floors():
    """A link whose COM lies on its hinge axis and whose inertia about that axis is zero makes the joint-space
    inertia D of the articulated-body pass (and M's pivot) exactly zero. Set after the articulation is added (past
    the load-time mass check), the step's floors keep it finite: a driven neighbour swings for 2 s and every env
    stays finite and unreported, while the inverse-dynamics API still reports the singular matrix."""
    art = artic.Articulation("zero_axis_inertia")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    base = art.create_link(None, artic.Transform(), "base")
    arm = art.create_link(base, None, "arm")
    arm.mass, arm.inertia = 1.0, (0.01, 0.01, 0.01)
    arm.cmass_local_pose = artic.Transform((0.2, 0.0, 0.0))
    arm.inbound_joint.set_joint_type(artic.JointType.REVOLUTE)
    arm.inbound_joint.set_motion(artic.Axis.SWING1, artic.Motion.FREE)  # about y: gravity swings it
    tip = art.create_link(arm, None, "tip")
    tip.inbound_joint.parent_pose = artic.Transform((0.4, 0.0, 0.0))
    tip.inbound_joint.set_joint_type(artic.JointType.REVOLUTE)
    tip.inbound_joint.set_motion(artic.Axis.TWIST, artic.Motion.FREE)  # about x, through the tip's COM
    scene = artic.Scene(2, gravity=(0.0, 0.0, -9.81))
    scene.add_articulation(art)
    tip.mass, tip.inertia = 0.5, (0.0, 0.02, 0.02)  # no inertia about x: D = 0 for the tip's hinge
    msgs = _steps(scene, 120)
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
    assert msgs == [] and not scene.env_status.any()
    assert np.all(np.isfinite(cache.joint_position)) and np.all(np.isfinite(cache.joint_velocity))
    assert abs(cache.joint_position[0, 0]) > 0.1  # the arm did swing under gravity
    # at the swung pose float32 rounding may leave D a tiny number of either sign; at q = 0 it is exactly zero
    cache.joint_position[:] = 0.0
    art.apply_cache(cache, CacheFlag.POSITION)
    with pytest.raises(artic.ArticError, match="singular"):
        art.compute_joint_acceleration(cache)


def test_runaway_state_is_reported_before_float32_gives_out():
    """A slider joint's drive with a target velocity of 1e14 m/s (an accepted input, below the 1e15 input bound)
    runs a free body away in one env; the step reports that env once its state passes FINITE_LIMIT (1e10), long
    before anything is NaN (the limit used to be 1e16, and such a state stepped on unreported). The other env is
    untouched."""
    body = artic.RigidDynamic(artic.Transform(), "slider body")
    body.attach_shape(artic.Box((0.1, 0.1, 0.1), collision_group=0, collision_mask=0))
    body.update_mass_and_inertia(1000.0)
    scene = artic.Scene(2, gravity=(0.0, 0.0, 0.0))
    scene.add_actor(body)
    joint = artic.SliderJoint(body, None, artic.Transform())
    joint.set_drive_params(0, artic.Drive(0.0, 100.0, 3.4e38, artic.DriveType.FORCE))
    scene.add_joint(joint)
    scene.set_joint_targets(joint, velocities=np.array([[0.0], [1e14]]))
    messages = _steps(scene, 20)
    assert scene.env_status.tolist() == [False, True]
    v = scene.get_actor_velocity(body)
    assert np.all(np.isfinite(v)) and np.abs(v[1]).max() > FINITE_LIMIT and np.abs(v[0]).max() == 0.0
    assert any("non-finite state" in m and "env(s) 1" in m and "1e+10" in m for m in messages)
