"""Shared test helpers: where example-robot-data lives, random articulations mixing every joint type."""

from __future__ import annotations

import site
import sys
from pathlib import Path

import numpy as np
import pytest

import artic
from artic import ArticulationFlag, Axis, JointType, Limit, Motion, Transform
from artic.math.np_spatial import quat_exp


def robots_dir() -> Path:
    """The robots/ folder that the `example-robot-data` wheel installs under cmeel.prefix."""
    for p in list(sys.path) + site.getsitepackages():
        cand = Path(p) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if cand.is_dir():
            return cand
    pytest.skip("example-robot-data is not installed (pip install -e '.[test]')")


ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "allegro": ("allegro_hand_description/urdf/allegro_right_hand.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
}


def robot_path(name: str) -> Path:
    return robots_dir() / ROBOTS[name][0]


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def random_pose(rng, scale=0.5) -> Transform:
    return Transform(rng.uniform(-scale, scale, 3), random_rotation(rng))


def random_tree(
    rng, n_links=8, floating=False, armature=True, kinds=("fix", "prismatic", "revolute", "unwrapped", "spherical")
) -> artic.Articulation:
    """A random articulation whose joints cycle through every type: FIX, PRISMATIC on X/Y/Z, REVOLUTE and
    REVOLUTE_UNWRAPPED about any axis, SPHERICAL with 1, 2 or 3 free axes; random frames, masses, COMs, inertias."""
    art = artic.Articulation("random")
    if not floating:
        art.set_articulation_flag(ArticulationFlag.FIX_BASE)
    links = [art.create_link(None, random_pose(rng), "root")]
    for i in range(1, n_links):
        parent = links[rng.integers(0, len(links))]
        link = art.create_link(parent, None, f"l{i}")
        j = link.inbound_joint
        j.parent_pose = random_pose(rng)
        j.child_pose = random_pose(rng)
        kind = kinds[(i - 1) % len(kinds)] if i <= len(kinds) else kinds[rng.integers(0, len(kinds))]
        if kind == "fix":
            j.set_joint_type(JointType.FIX)
        elif kind == "prismatic":
            j.set_joint_type(JointType.PRISMATIC)
            j.set_motion(Axis(3 + rng.integers(0, 3)), Motion.FREE)
        elif kind in ("revolute", "unwrapped"):
            j.set_joint_type(JointType.REVOLUTE if kind == "revolute" else JointType.REVOLUTE_UNWRAPPED)
            ax = Axis(rng.integers(0, 3))
            j.set_motion(ax, Motion.LIMITED)
            j.set_limit_params(ax, Limit(-2.0, 2.0))
        else:
            j.set_joint_type(JointType.SPHERICAL)
            count = 1 + (i % 3)
            for ax in sorted(rng.choice(3, size=count, replace=False)):
                j.set_motion(Axis(ax), Motion.FREE)
        if armature:
            for ax in j.dof_axes():
                j.set_armature(ax, rng.uniform(0.0, 0.1))
        links.append(link)
    for link in links:
        a = rng.uniform(0.05, 0.3, 3)
        link.mass = rng.uniform(0.5, 3.0)
        link.inertia = link.mass / 3.0 * np.array([a[1] ** 2 + a[2] ** 2, a[0] ** 2 + a[2] ** 2, a[0] ** 2 + a[1] ** 2])
        link.cmass_local_pose = Transform(rng.uniform(-0.2, 0.2, 3), random_rotation(rng))
    return art


def random_state(rng, art, cache, spread=1.0):
    """Fill a cache with random positions, velocities and (floating) root pose/velocity, per env."""
    e, n = cache.joint_position.shape
    cache.joint_position[:] = rng.uniform(-spread, spread, (e, n))
    cache.joint_velocity[:] = rng.uniform(-spread, spread, (e, n))
    cache.root_transform[:] = np.concatenate([rng.uniform(-1, 1, (e, 3)), [random_rotation(rng) for _ in range(e)]], 1)
    cache.root_linear_velocity[:] = rng.uniform(-spread, spread, (e, 3))
    cache.root_angular_velocity[:] = rng.uniform(-spread, spread, (e, 3))


def rot_exp(rotvec):
    return quat_exp(rotvec)


def step_finite(art, seconds: float, dt: float = 1.0 / 120.0, scene=None) -> bool:
    """Add `art` (an articulation, or a list of them) to a 1-env scene, or use `scene`, which holds them; step it
    `seconds` passively at `dt` and say whether every joint position and velocity and every root pose stayed finite
    after each step."""
    arts = list(art) if isinstance(art, (list, tuple)) else [art]
    if scene is None:
        scene = artic.Scene(1)
        for a in arts:
            scene.add_articulation(a)
    caches = [a.create_cache() for a in arts]
    flags = artic.CacheFlag.POSITION | artic.CacheFlag.VELOCITY | artic.CacheFlag.ROOT_TRANSFORM
    for _ in range(round(seconds / dt)):
        scene.step(dt)
        for a, cache in zip(arts, caches):
            a.copy_internal_state_to_cache(cache, flags)
            if not (
                np.isfinite(cache.joint_position).all()
                and np.isfinite(cache.joint_velocity).all()
                and np.isfinite(cache.root_transform).all()
            ):
                return False
    return True


# MJCF files of gymnasium's and dm_control's suites that artic refuses, each with the reason its message must give
REFUSED_MJCF: dict[str, str] = {}  # none since height fields load (dm_control's quadruped)


def suite_mjcf_files() -> list[tuple[str, Path]]:
    """(key 'package/file.xml', path) of every MJCF of gymnasium's MuJoCo assets and dm_control's suite that is
    installed (the real-model tests parametrize over them)."""
    import importlib.util

    out = []
    for package, folder in (("gymnasium", "envs/mujoco/assets"), ("dm_control", "suite")):
        spec = importlib.util.find_spec(package)
        if spec is not None:
            out += [(f"{package}/{p.name}", p) for p in sorted((Path(spec.origin).parent / folder).glob("*.xml"))]
    return out


def mjcf_with_mujoco(path: Path) -> tuple:
    """(artic's MjcfModel, MuJoCo's MjModel) of one MJCF file: what artic reports about the parts it leaves out is
    not the subject of the tests that compare the two, so its warnings are not shown."""
    import warnings

    import mujoco

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(path)
    return model, mujoco.MjModel.from_xml_path(str(path))
