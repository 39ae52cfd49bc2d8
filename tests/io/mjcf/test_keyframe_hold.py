"""Holding a keyframe's ctrl for 2 s as MuJoCo does (issue 25, Deliver 7), on registry models as shipped.

The criterion is the issue's: over 2 s, artic's largest hinge or slide excursion from the keyframe stays within twice
MuJoCo's, or within 0.02 rad (m) where MuJoCo's is smaller. Two kinds of keyframe:
* the files' own `<key>`s (the Franka kitchen, dm_control's cartpole asset, dog and fruit fly, myo_sim's leg with its
  prosthesis), set with MjcfControl.set_keyframe (qpos, qvel, ctrl, act) and MuJoCo's mj_resetDataKeyframe;
* a hold built for every model driven by position servos on joints (the Shadow and Adroit hands, the kitchen's arm,
  robosuite's grippers, dm_control's quadruped, whose tendon servos stay at ctrl 0): the ctrl each servo needs to hold
  the joint where the file puts it (kp gear q / gain, within its ctrlrange), the same in both. Where MuJoCo's own motion
  is large (a keyframe with zero ctrl lets the model fall) the criterion is loose; the servo holds are the strict cases,
  and there the two agree to 0.02 rad or better (their hinges' largest difference is checked too, HOLD_AGREE). The
  Adroit pen is held by its fingertips' torsional friction (condim 4), under PGS and the direct solver alike: with
  condim 3 (PGS before 2026-11-29) MuJoCo's pen turns 1.8 rad in the palm, as artic's did.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import artic
from tests.support.wheels import package_root

mujoco = pytest.importorskip("mujoco")

SECONDS = 2.0
HOLD_AGREE = 0.02  # [rad or m] artic's hinges against MuJoCo's at the servo holds (measured: 1e-4 to 0.013)


def _robotics(name: str) -> Path:
    robotics = pytest.importorskip("gymnasium_robotics")
    return Path(robotics.__file__).parent / "envs" / "assets" / name


def _dm(name: str) -> Path:
    dm = pytest.importorskip("dm_control")
    return Path(dm.__file__).parent / name


KEYED = {
    "kitchen": lambda: _robotics("kitchen_franka/kitchen_assets/kitchen_env_model.xml"),
    "cartpole": lambda: _dm("mujoco/testing/assets/cartpole.xml"),
    "dog": lambda: _dm("locomotion/walkers/assets/dog_v2/dog.xml"),
    "fruitfly on floor": lambda: _dm("locomotion/walkers/assets/fruitfly_v2/floor.xml"),
    "myolegs_osl": lambda: package_root("myo_sim") / "models" / "legacy" / "osl" / "myolegs_osl.xml",
}
SERVOS = {
    "shadow hand": lambda: _robotics("hand/reach.xml"),
    "adroit door": lambda: _robotics("adroit_hand/adroit_door.xml"),
    "adroit hammer": lambda: _robotics("adroit_hand/adroit_hammer.xml"),
    "adroit relocate": lambda: _robotics("adroit_hand/adroit_relocate.xml"),
    "kitchen arm": lambda: _robotics("kitchen_franka/kitchen_assets/kitchen_env_model.xml"),
    "inspire left hand": lambda: package_root("robosuite") / "models/assets/grippers/inspire_left_hand.xml",
    "panda gripper": lambda: package_root("robosuite") / "models/assets/grippers/panda_gripper.xml",
    "robotiq 140": lambda: package_root("robosuite") / "models/assets/grippers/robotiq_gripper_140.xml",
    "quadruped": lambda: _dm("suite/quadruped.xml"),
}
# gripper servo holds where mesh contacts at qpos0 push the fingers past their limits in both engines, each its own
# way: the excursion criterion holds, the step-by-step agreement does not
LOOSE = {
    "robotiq 140": "its finger meshes start inside each other: 0.10 rad apart after 2 s, both moving 0.3",
    "quadruped": "its servos act on tendons, held at ctrl 0: it settles on its floor 0.27 rad off, the two 0.04 apart",
}


def _hold_ctrl(mm, qpos: np.ndarray) -> np.ndarray:
    """The ctrl that holds each joint position servo's joint at qpos (kp gear q / gain), within its ctrlrange;
    0 for every other actuator."""
    ctrl = np.zeros(mm.nu)
    for a in range(mm.nu):
        servo = mm.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE and mm.actuator_biasprm[a, 1] < 0.0
        if mm.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and servo:
            q = qpos[mm.jnt_qposadr[mm.actuator_trnid[a, 0]]]
            ctrl[a] = -mm.actuator_biasprm[a, 1] * mm.actuator_gear[a, 0] * q / mm.actuator_gainprm[a, 0]
    limited = mm.actuator_ctrllimited.astype(bool)
    ctrl[limited] = np.clip(ctrl[limited], mm.actuator_ctrlrange[limited, 0], mm.actuator_ctrlrange[limited, 1])
    return ctrl


def _hold(path: Path, key: int | None, solver: str = "PGS"):
    """(artic's, MuJoCo's largest hinge/slide excursion, their largest difference) over SECONDS from keyframe
    `key` with its ctrl, or (key None) from the file's pose with the servo hold; solver "PGS" (the file's
    iterations) or "file" (model.solver_type: DIRECT for MuJoCo's Newton and CG)."""
    mm = mujoco.MjModel.from_xml_path(str(path))
    md = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
        scene = artic.Scene(
            1, gravity=model.gravity, solver_type=model.solver_type if solver == "file" else artic.SolverType.PGS
        )
        model.add_to(scene)
        control = artic.MjcfControl(model, scene) if model.actuators else None
    if key is not None:
        mujoco.mj_resetDataKeyframe(mm, md, key)
        if control is not None:
            control.set_keyframe(key)
        else:
            model.set_keyframe(scene, key)
    else:
        md.ctrl[:] = _hold_ctrl(mm, md.qpos)
        control.set(md.ctrl[None].copy())
    hinges = [mm.jnt_qposadr[j] for j in range(mm.njnt) if mm.jnt_type[j] in (2, 3)]
    start = md.qpos[hinges].copy()
    ours = theirs = apart = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(round(SECONDS / mm.opt.timestep)):
            scene.step(mm.opt.timestep)
            mujoco.mj_step(mm, md)
            if k % 10 == 9:
                q = model.get_qpos(scene)[0, hinges]
                ours = max(ours, float(np.abs(q - start).max()))
                theirs = max(theirs, float(np.abs(md.qpos[hinges] - start).max()))
                apart = max(apart, float(np.abs(q - md.qpos[hinges]).max()))
    assert not scene.env_status.any()
    return ours, theirs, apart


def _keys():
    out = []
    for name, where in KEYED.items():
        try:
            path = where()
        except pytest.skip.Exception:
            continue
        out += [
            pytest.param(path, k, id=f"{name} key {k}") for k in range(mujoco.MjModel.from_xml_path(str(path)).nkey)
        ]
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("solver", ["PGS", "file"])
@pytest.mark.parametrize("path, key", _keys())
def test_a_files_keyframe_is_held_as_in_mujoco(path, key, solver):
    ours, theirs, _ = _hold(path, key, solver)
    assert ours <= max(2.0 * theirs, 0.02), (ours, theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("solver", ["PGS", "file"])
@pytest.mark.parametrize("name", list(SERVOS))
def test_position_servos_hold_the_files_pose_as_in_mujoco(name, solver):
    ours, theirs, apart = _hold(SERVOS[name](), None, solver)
    assert ours <= max(2.0 * theirs, 0.02), (ours, theirs)
    if name not in LOOSE:
        assert apart < HOLD_AGREE, (ours, theirs, apart)


@pytest.mark.oracle
@pytest.mark.parametrize("solver", ["file", "PGS"])
def test_the_adroit_pen_is_held_as_in_mujoco(solver):
    """The hand holds the pen by its fingertips' torsional friction (condim 4) as in MuJoCo, under the file's solver
    (DIRECT; measured 0.097 rad against MuJoCo's 0.126) and PGS (0.123; it left the friction out before 2026-11-29
    and the pen turned 5.3 rad)."""
    ours, theirs, apart = _hold(_robotics("adroit_hand/adroit_pen.xml"), None, solver)
    assert ours <= max(2.0 * theirs, 0.02), (ours, theirs)
    # every hinge near MuJoCo's throughout: measured 0.054 DIRECT (the pen's roll; the hand's hinges 0.021), 0.028 PGS;
    # 0.038 DIRECT until the hand's frictionloss (0.001 N m) became MuJoCo's soft row, which a clean case follows to
    # 8e-8 (test_soft_constraints.py): the pen slipping in the grasp amplifies any difference
    assert apart < 0.065, apart
