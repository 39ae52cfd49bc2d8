"""artic.interop.torch_views: PyTorch tensors that share memory with a scene's state and control arrays (on the CPU)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import artic  # noqa: E402  (after the skip: the module needs torch)
from artic import CacheFlag  # noqa: E402
from artic.assets import load_model, model_path  # noqa: E402
from artic.interop.torch_views import control_views, state_views, wake  # noqa: E402

STATE = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES


def _ant_scene(num_envs=2):
    art, statics, gravity = load_model(model_path("ant"))
    scene = artic.Scene(num_envs, gravity=gravity, device="cpu")
    for s in statics:
        scene.add_actor(s)
    scene.add_articulation(art)
    return scene, art


def _cache_state(art):
    c = art.create_cache()
    art.copy_internal_state_to_cache(c, STATE)
    return c


def test_views_alias_the_warp_arrays():
    """Every view's data pointer is its Warp array's: nothing is copied."""
    scene, art = _ant_scene()
    v = scene.view(art)
    sv, cv = state_views(scene, art), control_views(scene, art)
    assert sv["joint_q"].data_ptr() == v.state.joint_q.ptr
    assert sv["joint_qd"].data_ptr() == v.state.joint_qd.ptr
    assert sv["root_pose"].data_ptr() == v.state.root_pose.ptr
    assert sv["root_linear_velocity"].data_ptr() == v.state.root_lin_vel.ptr
    assert sv["link_pose"].data_ptr() == v.state.link_pose.ptr
    assert cv["joint_force"].data_ptr() == v.control.joint_force.ptr
    assert cv["joint_target_position"].data_ptr() == v.control.joint_target_position.ptr
    assert sv["joint_q"].shape == (2, art.dof_count) and sv["root_pose"].shape == (2, 7)
    assert sv["link_pose"].shape == (2, art.link_count, 7) and cv["link_force"].shape == (2, art.link_count, 3)
    assert sv["joint_q"].dtype == torch.float32 and sv["joint_q"].device.type == "cpu"


def test_views_read_each_step_without_being_taken_again():
    """Tensors taken before the steps show the state after each step, equal to what the cache copies out."""
    scene, art = _ant_scene()
    sv = state_views(scene, art)
    before = sv["root_pose"].clone()
    for _ in range(3):
        scene.step(0.01)
        c = _cache_state(art)
        np.testing.assert_array_equal(sv["joint_q"].numpy(), c.joint_position)
        np.testing.assert_array_equal(sv["joint_qd"].numpy(), c.joint_velocity)
        np.testing.assert_array_equal(sv["root_pose"].numpy(), c.root_transform)
        np.testing.assert_array_equal(sv["root_angular_velocity"].numpy(), c.root_angular_velocity)
    assert not torch.equal(before, sv["root_pose"])  # the ant fell: the tensor followed


def test_control_writes_reach_the_next_step():
    """A joint force written into env 0 through the torch view gives the same next state as the same force
    applied through the cache in a second scene; env 1 (no force) matches a plain step."""
    force = np.linspace(-40.0, 40.0, 8).astype(np.float32)
    scene, art = _ant_scene()
    cv = control_views(scene, art)
    cv["joint_force"][0] = torch.from_numpy(force)
    wake(scene, art)
    scene.step(0.01)
    ref_scene, ref_art = _ant_scene()
    c = ref_art.create_cache()
    c.joint_force[0] = force
    ref_art.apply_cache(c, CacheFlag.FORCE)
    ref_scene.step(0.01)
    got, want = _cache_state(art), _cache_state(ref_art)
    np.testing.assert_array_equal(got.joint_velocity, want.joint_velocity)
    np.testing.assert_array_equal(got.root_transform, want.root_transform)
    assert not np.array_equal(got.joint_velocity[0], got.joint_velocity[1])  # the force acted on env 0 only


def test_nan_written_through_a_view_is_caught_by_the_step():
    """The views bypass the cache's validation: a NaN joint force is accepted, and the step's non-finite check
    reports the env (scene.env_status), leaving the other env alone."""
    scene, art = _ant_scene()
    control_views(scene, art)["joint_force"][1, 3] = float("nan")
    with pytest.warns(RuntimeWarning, match="non-finite"):
        scene.step(0.01)
    np.testing.assert_array_equal(scene.env_status, [False, True])
    assert torch.isfinite(state_views(scene, art)["joint_qd"][0]).all()


def test_wake_refuses_a_bad_mask():
    """wake() takes one boolean per env."""
    scene, art = _ant_scene()
    with pytest.raises(artic.ValidationError, match="booleans"):
        wake(scene, art, [True])


def test_views_after_regrouping_are_taken_again():
    """Joining two ants with a body joint moves them into one block: views taken before are stale (other memory),
    views taken after alias the new, strided columns, and a write through them reaches only that ant."""
    scene, a1 = _ant_scene()
    a2 = load_model(model_path("ant"))[0]
    scene.add_articulation(a2)
    old = control_views(scene, a2)["joint_force"]
    joint = artic.SphericalJoint.from_body_frames(
        a1.root, artic.Transform((0, 0, 0.5)), a2.root, artic.Transform((0, 0, -0.5)), name="join"
    )
    scene.add_joint(joint)
    assert scene.view(a1).block is scene.view(a2).block
    new = control_views(scene, a2)["joint_force"]
    assert old.data_ptr() != new.data_ptr()  # stale: take them again
    assert new.data_ptr() == scene.view(a2).control.joint_force.ptr and new.stride() == (16, 1)
    new[1, 2] = 5.0
    f2, f1 = scene.view(a2).control.joint_force.numpy(), scene.view(a1).control.joint_force.numpy()
    assert f2[1, 2] == 5.0 and np.count_nonzero(f2) == 1 and np.count_nonzero(f1) == 0
