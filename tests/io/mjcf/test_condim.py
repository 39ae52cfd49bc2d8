"""MuJoCo's torsional (condim 4) and rolling (condim 6) friction: edges of its pyramidal cone (constraints/pyramid.py)
or rows of its elliptic cone (constraints/elliptic.py), under the direct solver, PGS and TGS, against MuJoCo (its
file's Newton) on the same files under both cones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import CacheFlag

mujoco = pytest.importorskip("mujoco")

XML = """<mujoco><option timestep="0.002" {cone}/>
<worldbody><geom type="plane" size="5 5 .1" condim="{c}" friction="{mu} {tor} {roll}"/>
<body name="ball" pos="0 0 0.1"><freejoint/>
<geom type="sphere" size="0.1" condim="{c}" friction="{mu} {tor} {roll}" density="1000"/></body>
</worldbody></mujoco>"""


CONES = {"pyramidal": "", "elliptic": 'cone="elliptic"'}


def _both(tmp_path, condim, tor, roll, qvel, solver=None, seconds=1.0, cone="pyramidal", sliding=0.8, floor=None):
    """MuJoCo's and artic's free-ball velocities (linear, angular; world) every 10 ms over `seconds`, from 0.2 s of
    settling and then `qvel` given to both; `floor`: the floor's (condim, torsional, rolling) where they differ from
    the ball's."""
    path = tmp_path / "ball.xml"
    text = XML.format(c=condim, tor=tor, roll=roll, cone=CONES[cone], mu=sliding)
    if floor is not None:
        plane = '<geom type="plane" size="5 5 .1" '
        start = text.index(plane)
        end = text.index("/>", start)
        text = (
            text[:start] + plane + 'condim="{}" friction="{} {} {}"'.format(floor[0], sliding, *floor[1:]) + text[end:]
        )
    path.write_text(text)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver or model.solver_type)
    model.add_to(scene)
    (art,) = model.articulations
    for _ in range(100):
        mujoco.mj_step(m, d)
        scene.step(m.opt.timestep)
    d.qvel[:] = qvel
    cache = art.create_cache()
    art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_VELOCITIES)
    cache.root_linear_velocity[0], cache.root_angular_velocity[0] = qvel[:3], qvel[3:]
    art.apply_cache(cache, CacheFlag.ROOT_VELOCITIES)
    theirs, ours = [], []
    for k in range(round(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
        scene.step(m.opt.timestep)
        if k % 5 == 4:
            art.copy_internal_state_to_cache(cache, CacheFlag.ROOT_VELOCITIES)
            ours.append(np.concatenate([cache.root_linear_velocity[0], cache.root_angular_velocity[0]]))
            theirs.append(d.qvel[:6].copy())
    assert not scene.env_status.any()
    return np.array(theirs), np.array(ours)


SOLVERS = {"direct": None, "pgs": artic.SolverType.PGS, "tgs": artic.SolverType.TGS}
# TGS's spin departs from MuJoCo's as it nears rest under the pyramid (measured 0.33 rad/s at 4 rad/s, 0.2 s in; the
# elliptic cone 3e-4): its one sweep a substep with positions moving between them is not MuJoCo's solve of the step
SPIN_TOLERANCE = {"direct": 1e-2, "pgs": 1e-2, "tgs": 0.5}


@pytest.mark.parametrize("solver", list(SOLVERS))
@pytest.mark.parametrize("cone", list(CONES))
def test_torsional_friction_stops_a_spinning_ball_as_mujoco(tmp_path, cone, solver):
    """condim 4: a ball spinning at 20 rad/s about the normal on the floor is stopped by its torsional friction
    (0.05 m) in ~0.2 s; artic's spin follows MuJoCo's to 1e-2 rad/s every 10 ms under the direct solver and PGS
    (measured 1e-4 at most), to SPIN_TOLERANCE under TGS, and the ball stays put."""
    theirs, ours = _both(tmp_path, 4, 0.05, 0.001, np.array([0, 0, 0, 0, 0, 20.0]), SOLVERS[solver], cone=cone)
    assert theirs[0, 5] > 1.0 and abs(theirs[-1, 5]) < 1e-3  # MuJoCo's spin slows down and stops
    np.testing.assert_allclose(ours, theirs, atol=SPIN_TOLERANCE[solver])
    assert abs(ours[-1, 5]) < 1e-3  # and artic's stops too


@pytest.mark.parametrize("solver", list(SOLVERS))
@pytest.mark.parametrize("cone", list(CONES))
def test_rolling_friction_stops_a_rolling_ball_as_mujoco(tmp_path, cone, solver):
    """condim 6: a ball launched rolling at 1 m/s (10 rad/s) nearly stops within 1 s under its rolling friction
    (0.02 m); every 10 ms over 1 s artic's rolling speed follows MuJoCo's to 1e-2 m/s and its spin to 0.05 rad/s
    under every solver (measured 4e-3 and 0.036 under the pyramid, 0.045 under TGS's ellipse: the soft contact's
    small vertical chatter, 0.03 m/s in both engines, runs a few steps out of phase between them)."""
    theirs, ours = _both(tmp_path, 6, 0.05, 0.02, np.array([1.0, 0, 0, 0, 10.0, 0]), SOLVERS[solver], cone=cone)
    assert 0.5 < theirs[19, 0] < 0.95 and theirs[-1, 0] < 0.1  # rolling friction slows it down over the second
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], atol=1e-2)
    np.testing.assert_allclose(ours[:, 4], theirs[:, 4], atol=0.05)
    np.testing.assert_allclose(ours[:, 2], theirs[:, 2], atol=0.05)


@pytest.mark.parametrize("solver", list(SOLVERS))
def test_torsional_friction_acts_without_sliding_friction(tmp_path, solver):
    """friction="0 0.05 0" with condim 4: MuJoCo raises every friction coefficient of a contact to at least 1e-5
    (mjMINMU), so the spin still stops (in 0.2 s); before 2026-11-29 artic dropped the torsional friction with the
    sliding one (the spin stayed at 20 rad/s)."""
    theirs, ours = _both(
        tmp_path, 4, 0.05, 0.0, np.array([0, 0, 0, 0, 0, 20.0]), SOLVERS[solver], seconds=0.4, sliding=0.0
    )
    assert theirs[0, 5] > 1.0 and abs(theirs[-1, 5]) < 1e-3  # MuJoCo's spin stops
    np.testing.assert_allclose(ours[:, 5], theirs[:, 5], atol=SPIN_TOLERANCE[solver])


@pytest.mark.parametrize("solver", list(SOLVERS))
@pytest.mark.parametrize("cone", list(CONES))
def test_a_condim_3_geoms_torsion_counts_against_a_condim_4_one(tmp_path, cone, solver):
    """A condim-3 ball with friction[1] 0.05 spinning on a condim-4 floor whose own is 0.001: MuJoCo's contact takes
    the larger condim (4) and the larger torsion (0.05), so the spin stops in ~0.2 s as with 0.05 on both; artic's
    follows to SPIN_TOLERANCE (measured 6e-6 rad/s under DIRECT and PGS, TGS's pyramid 0.33; before, only the
    floor's 0.001 acted: 19.5 rad/s off). Rolling likewise from a condim-6 floor: to 1e-2 m/s (measured 4e-3)."""
    qvel = np.array([0, 0, 0, 0, 0, 20.0])
    theirs, ours = _both(tmp_path, 3, 0.05, 0.001, qvel, SOLVERS[solver], seconds=0.4, cone=cone, floor=(4, 0.001, 0.0))
    assert theirs[0, 5] > 1.0 and abs(theirs[-1, 5]) < 1e-3  # MuJoCo's spin stops: the ball's 0.05 acts
    np.testing.assert_allclose(ours[:, 5], theirs[:, 5], atol=SPIN_TOLERANCE[solver])
    # and the reverse: condim 6 on the floor with rolling 0 takes the condim-3 ball's rolling 0.02
    qvel = np.array([1.0, 0, 0, 0, 10.0, 0])
    theirs, ours = _both(tmp_path, 3, 0.05, 0.02, qvel, SOLVERS[solver], seconds=0.6, cone=cone, floor=(6, 0.05, 0.0))
    assert theirs[-1, 0] < 0.8  # MuJoCo's roll slows under the ball's 0.02
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], atol=1e-2)


@pytest.mark.parametrize("cone", list(CONES))
def test_condim_3_leaves_the_spin_alone(tmp_path, cone):
    """The same spinning ball with condim 3 (sliding friction only): neither engine slows its spin."""
    theirs, ours = _both(tmp_path, 3, 0.05, 0.001, np.array([0, 0, 0, 0, 0, 20.0]), seconds=0.3, cone=cone)
    np.testing.assert_allclose(theirs[:, 5], 20.0, atol=1e-3)
    np.testing.assert_allclose(ours[:, 5], 20.0, atol=1e-3)


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.TGS])
def test_pgs_and_tgs_step_angular_friction_without_a_warning(tmp_path, solver):
    """PGS and TGS solve the torsional and rolling rows (until 2026-11-29 they left them out and warned)."""
    path = tmp_path / "ball.xml"
    path.write_text(XML.format(c=6, tor=0.05, roll=0.001, cone="", mu=0.8))
    model = artic.load_mjcf(path)
    scene = artic.Scene(1, gravity=model.gravity, solver_type=solver)
    model.add_to(scene)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            scene.step(model.timestep)


def test_without_soft_constraints_condim_4_is_reported(tmp_path):
    """Torsional friction is part of MuJoCo's soft cones: with soft_constraints=False the geoms act as condim 3,
    with one warning naming the first geom; under either soft cone no such warning."""
    path = tmp_path / "ball.xml"
    path.write_text(XML.format(c=4, tor=0.05, roll=0.001, cone="", mu=0.8).replace('name="ball" pos', 'name="b" pos'))
    with pytest.warns(RuntimeWarning, match="condim 4 or 6 geom.* act as condim 3"):
        artic.load_mjcf(path, soft_constraints=False)
    path.write_text(XML.format(c=4, tor=0.05, roll=0.001, cone=CONES["elliptic"], mu=0.8))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = artic.load_mjcf(path)
    assert not [w for w in caught if "condim 3" in str(w.message)]
    (shape,) = [s for a in model.articulations for link in a.get_links() for s in link.shapes]
    assert (shape.material.torsional_friction, shape.material.elliptic_impratio) == (0.05, 1.0)


@pytest.mark.parametrize("name", ["torsional_friction", "rolling_friction"])
def test_a_negative_angular_friction_is_refused(name):
    with pytest.raises(artic.ArticError, match=f"{name} must be >= 0"):
        setattr(artic.Material(), name, -0.01)


def test_the_memory_estimate_counts_the_angular_rows(tmp_path):
    """With torsional friction in a block its contact rows carry three angular rows and two six-edge vectors per
    slot, and contact_bytes_per_env (what check_fits is given) counts them: the Warp arrays' own sizes, 2 envs."""
    import warp as wp

    from artic.sim.builders.arrays import contact_bytes_per_env, detection_centers

    path = tmp_path / "ball.xml"
    path.write_text(XML.format(c=4, tor=0.05, roll=0.001, cone="", mu=0.8))
    model = artic.load_mjcf(path)
    scene = artic.Scene(2, gravity=model.gravity, solver_type=model.solver_type)
    model.add_to(scene)
    scene.step(model.timestep)
    block = scene.view(model.articulations[0]).block
    arrays = (block.contact_points, block.contact_rows)
    total = sum(v.capacity for a in arrays for k, v in vars(a).items() if isinstance(v, wp.array) and k != "grow")
    assert block.contact_rows.ang_g.shape[0] == 2
    centers = detection_centers(block.geometry)
    assert total == 2 * contact_bytes_per_env(block.geometry.capacity, block.model.gen_count, True, centers)
