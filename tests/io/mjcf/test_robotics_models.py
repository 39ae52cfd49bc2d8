"""gymnasium-robotics' MJCF files as shipped (issue 25: real scene files include robot files and add their own
sections): the Adroit hand tasks (MuJoCo 2 <mujocoinclude> parts), the shadow hand, Fetch, the Franka kitchen and
the MuJoCo locomotion models. Each file MuJoCo loads, artic loads with MuJoCo's geoms, actuators, dofs and total
mass; the parts written to be included (no <worldbody>) are refused by name, where MuJoCo compiles them into an
empty model."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import artic
from tests.support.models import mjcf_with_mujoco

mujoco = pytest.importorskip("mujoco")
_spec = importlib.util.find_spec("gymnasium_robotics")  # found without importing it (its import prints notices)
ROOT = Path(_spec.submodule_search_locations[0]) / "envs" if _spec else None
FILES = sorted(ROOT.rglob("*.xml")) if ROOT else []


def _mujoco(path):
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError:
        return None  # a part MuJoCo cannot compile alone (an asset list, an actuator list)


def _dofs(model):
    return sum(a.dof_count + (0 if a.fix_base else 6) for a in model.articulations)


@pytest.mark.skipif(not FILES, reason="gymnasium-robotics is not installed")
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_files_load_as_mujoco_compiles_them(path):
    mm = _mujoco(path)
    if mm is None:
        pytest.skip("MuJoCo does not load this part alone")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what each model leaves out is reported; the counts are this test's subject
        if mm.nbody == 1 and "<worldbody" not in path.read_text():
            with pytest.raises(artic.MjcfError, match="has no <worldbody>"):
                artic.load_mjcf(path)
            return
        model = artic.load_mjcf(path)
    links = [link for a in model.articulations for link in a.get_links()]
    links += [b.link for b in model.mocap_bodies.values()]  # Fetch's gripper target
    assert len(model.mocap_bodies) == mm.nmocap
    geoms = sum(len(s.shapes) for s in model.statics) + sum(len(link.shapes) for link in links)
    assert geoms == mm.ngeom
    assert len(model.actuators) == mm.nu
    assert _dofs(model) == mm.nv
    mass = sum(link.mass for link in links)
    assert mass == pytest.approx(float(np.sum(mm.body_mass)), rel=1e-4, abs=1e-3)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)  # the kitchen's body and joint both named 'microwave' were refused here
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(20):
            scene.step(mm.opt.timestep)
    assert not scene.env_status.any(), [str(w.message) for w in record]


def _hinges(model, md):
    """(artic, MuJoCo) positions of every hinge and slide joint, in MuJoCo's qpos order."""
    from artic import CacheFlag
    from artic.io.mjcf.keyframes import _QPOS

    ours, theirs, qa, caches = [], [], 0, {}
    for e in model.qpos_layout:
        if e.kind in ("hinge", "slide"):
            art = e.articulation
            if id(art) not in caches:
                cache = art.create_cache()
                art.copy_internal_state_to_cache(cache, CacheFlag.POSITION)
                caches[id(art)] = (cache, [j for j, _ in art.dof_list()])
            cache, joints = caches[id(art)]
            ours.append(cache.joint_position[0, joints.index(e.joint)])
            theirs.append(md.qpos[qa])
        qa += _QPOS[e.kind]
    return np.array(ours), np.array(theirs)


@pytest.mark.skipif(not FILES, reason="gymnasium-robotics is not installed")
@pytest.mark.parametrize(
    "name",
    [
        "adroit_hand/adroit_door.xml",
        "adroit_hand/adroit_pen.xml",
        "hand/reach.xml",
        "hand/manipulate_block.xml",
        "fetch/reach.xml",
        "kitchen_franka/kitchen_assets/kitchen_env_model.xml",
    ],
)
def test_a_hand_held_at_rest_moves_as_mujocos(name):
    """The Adroit and shadow hands with their servos at ctrl 0, Fetch held by its (soft) mocap weld, the Franka
    kitchen's arm sagging 0.39 rad under gravity, for 1 s: every hinge ends within 0.02 rad of MuJoCo's (Fetch
    0.006, the kitchen 1e-4), while MuJoCo's own hinges move 0.07 to 0.39 rad from the start (tendon couplings,
    gravity, servo stiffness). The Adroit pen turns 0.09 rad in both palms, held by its torsional friction (condim
    4; under PGS since 2026-11-29, when its pen spun 1.8 rad)."""
    model, mm = mjcf_with_mujoco(ROOT / "assets" / name)
    md = mujoco.MjData(mm)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    start = _hinges(model, md)[1]
    for _ in range(int(round(1.0 / mm.opt.timestep))):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    ours, theirs = _hinges(model, md)
    assert np.abs(theirs - start).max() > 0.02  # MuJoCo's hand did move
    np.testing.assert_allclose(ours, theirs, atol=0.02)


@pytest.mark.skipif(not FILES, reason="gymnasium-robotics is not installed")
def test_the_shadow_hands_coupled_finger_joints_follow_mujocos():
    """The shadow hand as shipped couples each finger's two distal joints by a fixed tendon with the range
    +-0.001 (T_FFJ1c: 0.00705 q0 - 0.00805 q1), a MuJoCo soft limit. With the four J1 servos at ctrl 1.2 for 1 s,
    MuJoCo's J0 joints follow to 1.21 rad; artic's (the tendons' soft limits) end within 3e-3 rad of MuJoCo's, and
    every hinge within 0.02 rad. With the ranges dropped (`soft_constraints=False`) the J0 joints stay at 0."""
    path = ROOT / "assets" / "hand/reach.xml"
    mm = mujoco.MjModel.from_xml_path(str(path))
    names = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_ACTUATOR, k) for k in range(mm.nu)]
    ctrl = np.zeros(mm.nu)
    for finger in ("FF", "MF", "RF", "LF"):
        ctrl[names.index(f"robot0:A_{finger}J1")] = 1.2
    joints = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, k) for k in range(mm.njnt)]
    hinges = [joints[k] for k in range(mm.njnt) if mm.jnt_type[k] == mujoco.mjtJoint.mjJNT_HINGE]
    distal = [hinges.index(f"robot0:{finger}J0") for finger in ("FF", "MF", "RF", "LF")]
    for soft in (True, False):
        md = mujoco.MjData(mm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = artic.load_mjcf(path, soft_constraints=soft)
        scene = artic.Scene(1, gravity=model.gravity)
        model.add_to(scene)
        control = artic.MjcfControl(model, scene)
        md.ctrl[:] = ctrl
        control.set(ctrl[None])
        for _ in range(int(round(1.0 / mm.opt.timestep))):
            mujoco.mj_step(mm, md)
            scene.step(mm.opt.timestep)
        ours, theirs = _hinges(model, md)
        assert np.all(theirs[distal] > 1.1)  # MuJoCo's distal joints follow the servoed ones
        if soft:
            np.testing.assert_allclose(ours[distal], theirs[distal], atol=3e-3)
            np.testing.assert_allclose(ours, theirs, atol=0.02)
        else:
            assert np.all(np.abs(ours[distal]) < 0.05)
