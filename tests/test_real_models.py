"""Real models: every URDF of example-robot-data, and every MJCF of Gymnasium's MuJoCo assets and dm_control's
suite that MuJoCo itself loads, either loads and steps 2 s passively (1 env, dt 1/120) with finite states, or is
refused with a clear ArticError naming the file and the element.

URDFs get a fixed base (load_urdf's default) and no drives; MJCF models keep their free joints, floors and gravity.
Warnings (skipped .dae meshes, repaired massless links, ellipsoids colliding as polytopes) are allowed: they are
tested where they are made. romeo and human used to go NaN from a float32-singular joint-space inertia (the step's
pivot floors, math/dense.py and dynamics/aba.py, keep them finite); icub, whose neck and hip links have no inertia
about their axes, also needs the load-time mass check (mass_check.py); z1 is among the URDFs, as the issue asks.
"""

import warnings

import pytest

import artic
from artic import ArticError, UrdfError
from artic.io.mjcf.loader import MjcfError
from tests.support.models import REFUSED_MJCF, robots_dir, step_finite, suite_mjcf_files

try:
    ROBOTS = robots_dir()
except pytest.skip.Exception:  # example-robot-data missing: the URDF cases are skipped as an empty set
    ROBOTS = None

# the files artic refuses, each with the reason, which its message must give
REFUSED_URDF = {
    "ur3.urdf": "no <link> elements",  # an empty <robot>
    "romeo_laas_small.urdf": "link 'body': <inertia> is not positive semi-definite",
    "tiago.urdf": "link 'base_antenna_left_link': <inertia> is not positive semi-definite",
    "tiago_dual.urdf": "link 'base_antenna_left_link': <inertia> is not positive semi-definite",
    "tiago_no_hand.urdf": "link 'base_antenna_left_link': <inertia> is not positive semi-definite",
}


def _urdfs() -> list:
    return [] if ROBOTS is None else sorted(p.relative_to(ROBOTS).as_posix() for p in ROBOTS.rglob("*.urdf"))


def _mjcfs() -> list:
    return [
        pytest.param(key.split("/")[0], p, id=f"{key}[refused: {REFUSED_MJCF[key]}]" if key in REFUSED_MJCF else key)
        for key, p in suite_mjcf_files()
    ]


def _urdf_id(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return f"{rel}[refused: {REFUSED_URDF[name]}]" if name in REFUSED_URDF else rel


def test_the_named_robots_are_in_the_sweep():
    """romeo, icub, human and z1 are among the swept URDFs, and the sweep covers example-robot-data."""
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed (pip install -e '.[test]')")
    names = {rel.rsplit("/", 1)[-1] for rel in _urdfs()}
    assert {"romeo.urdf", "icub.urdf", "human.urdf", "z1.urdf"} <= names
    assert len(names) >= 60


@pytest.mark.parametrize("rel", _urdfs(), ids=_urdf_id)
def test_urdf_steps_finitely_or_is_refused(rel):
    """The URDF loads, enters a scene and steps 2 s with finite states, or is refused with a UrdfError naming the
    file and the broken element."""
    path = ROBOTS / rel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if path.name in REFUSED_URDF:
            with pytest.raises(UrdfError) as e:
                artic.load_urdf(path)
            assert path.name in str(e.value) and REFUSED_URDF[path.name] in str(e.value)
            return
        art = artic.load_urdf(path)
        assert step_finite(art, 2.0)


@pytest.mark.oracle
@pytest.mark.parametrize("package,path", _mjcfs())
def test_mjcf_that_mujoco_loads_steps_finitely_or_is_refused(package, path):
    """A Gymnasium or dm_control MJCF that MuJoCo compiles loads in artic and steps 2 s with finite states (its
    floor and gravity included), or is refused with an MjcfError naming the file and the element."""
    mujoco = pytest.importorskip("mujoco")
    try:
        mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:  # out of scope: only what MuJoCo loads is compared
        pytest.skip(f"MuJoCo refuses {path.name}: {e}")
    key = f"{package}/{path.name}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if key in REFUSED_MJCF:
            with pytest.raises(MjcfError) as e:
                artic.load_mjcf(path)
            assert path.name in str(e.value) and REFUSED_MJCF[key] in str(e.value)
            return
        try:
            model = artic.load_mjcf(path)
        except ArticError as e:
            pytest.fail(f"artic refuses {key}, which MuJoCo loads: {e}")
        scene = artic.Scene(1, gravity=model.gravity)
        model.add_to(scene)
        assert step_finite(model.articulations, 2.0, scene=scene)
