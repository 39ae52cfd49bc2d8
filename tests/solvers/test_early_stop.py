"""PGS's early stop (Articulation.solver_tolerance, solvers/pgs.py): the position iterations end after the first
sweep that changes no generalized velocity by more than the tolerance, and Scene.get_solver_iterations reports the
sweeps run.

Closed forms: a lone row is solved exactly by one Gauss-Seidel sweep, so its step takes two sweeps (one that solves,
one that finds nothing to change) and gives the fully iterated step's result; a body with no rows takes one.
Identity: on a real model (Gymnasium's ant, MuJoCo's soft contacts and limits) the early-stopped trajectory is the
fully iterated one to within the tolerance's effect, at a fraction of the sweeps. Tolerance 0 (the default, PhysX's
behaviour) runs every iteration; TGS runs all its substeps; DIRECT reports 0.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from artic import SolverType
from artic.io.mjcf.options import SOLVER_TOLERANCE
from tests.support.bodies import body
from tests.support.models import suite_mjcf_files
from tests.support.scenes import prismatic_drive, run

ITERATIONS = (16, 1)


@pytest.mark.parametrize("kp, kd", [(100.0, 10.0), (1e6, 1e3)])
def test_lone_row_takes_two_sweeps_and_gives_the_full_result(kp, kd):
    """A prismatic drive (one row): the first sweep is the implicit-Euler update (test_drives_and_limits' closed
    form), the second changes nothing, so the early-stopped step equals the 16-sweep one."""
    stopped, scene = prismatic_drive(SolverType.PGS, ITERATIONS, stiffness=kp, damping=kd)
    stopped.solver_tolerance = 1e-6
    q, qd = run(stopped, scene, 5)
    assert scene.get_solver_iterations(stopped).tolist() == [2]
    full, full_scene = prismatic_drive(SolverType.PGS, ITERATIONS, stiffness=kp, damping=kd)
    q_full, qd_full = run(full, full_scene, 5)
    assert full_scene.get_solver_iterations(full).tolist() == [ITERATIONS[0]]
    np.testing.assert_allclose(q, q_full, rtol=0, atol=1e-7)
    np.testing.assert_allclose(qd, qd_full, rtol=0, atol=1e-6)


def test_no_rows_takes_one_sweep():
    """A falling box with nothing to touch: the first sweep finds no row, so it is the last."""
    scene = artic.Scene(3, gravity=(0.0, 0.0, -9.81))
    box = scene.add_actor(body(artic.Box((0.1, 0.1, 0.1))))
    box.set_solver_iteration_counts(*ITERATIONS)
    box.solver_tolerance = 1e-5
    scene.step(0.01)
    assert scene.get_solver_iterations(box).tolist() == [1, 1, 1]
    z = scene.get_actor_pose(box)[:, 2]
    np.testing.assert_allclose(z, 1.0 - 9.81 * 0.01**2, atol=1e-6)


@pytest.mark.parametrize("solver, expected", [(SolverType.PGS, ITERATIONS[0]), (SolverType.TGS, 8)])
def test_without_tolerance_every_iteration_runs(solver, expected):
    """Tolerance 0 (the default): PGS runs its 16 sweeps; TGS its substeps, whatever the tolerance."""
    art, scene = prismatic_drive(solver, (expected, 1))
    if solver == SolverType.TGS:
        art.solver_tolerance = 1.0
    run(art, scene, 2)
    assert art.solver_tolerance == (1.0 if solver == SolverType.TGS else 0.0)
    assert scene.get_solver_iterations(art).tolist() == [expected]


def test_direct_reports_no_sweeps():
    art, scene = prismatic_drive(SolverType.DIRECT, ITERATIONS)
    art.solver_tolerance = 1e-5
    run(art, scene, 2)
    assert scene.get_solver_iterations(art).tolist() == [0]
    assert not scene.get_solver_report(art)["fell_back"][0]


def test_sweeps_before_any_step_are_refused():
    art, scene = prismatic_drive()
    with pytest.raises(artic.ArticError, match="no step has run for 'prismatic' yet"):
        scene.get_solver_iterations(art)


@pytest.mark.parametrize("value", [-1e-5, float("nan"), float("inf"), "1e-5"])
def test_bad_tolerance_is_refused_by_name(value):
    art, _ = prismatic_drive()
    with pytest.raises(artic.ArticError, match="prismatic.*solver_tolerance"):
        art.solver_tolerance = value


def _ant_run(tolerance: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(link positions after `steps` steps (L, 3), sweeps per step) of Gymnasium's ant dropped from its initial
    pose at its 100 iterations (zero controls)."""
    files = dict(suite_mjcf_files())
    if "gymnasium/ant.xml" not in files:
        pytest.skip("gymnasium is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(files["gymnasium/ant.xml"])
    (art,) = model.articulations
    assert art.solver_tolerance == SOLVER_TOLERANCE  # load_mjcf's default for a file without tolerance="0"
    art.solver_tolerance = tolerance
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    sweeps = []
    for _ in range(steps):
        scene.step(model.timestep)
        sweeps.append(scene.get_solver_iterations(art)[0])
    return scene.get_link_poses(art)[0, :, :3], np.array(sweeps)


def test_real_model_early_stop_follows_the_full_iterations():
    """Gymnasium's ant over 1 s (falling onto its four feet, bouncing, settling): stopped at MJCF's tolerance, its
    links stay within 2e-4 m of the 100-sweep run's (measured 3.5e-5) while it sweeps on average under a third of
    that (measured 14); one sweep a step moves them by 3 cm, so the comparison can tell."""
    steps = 100  # dt 0.01
    full, full_sweeps = _ant_run(0.0, steps)
    stopped, sweeps = _ant_run(SOLVER_TOLERANCE, steps)
    assert (full_sweeps == 100).all()
    assert sweeps.min() >= 1 and sweeps.max() <= 100
    assert sweeps.mean() < 30, sweeps.mean()
    assert np.abs(stopped - full).max() < 2e-4, np.abs(stopped - full).max()
    loose, loose_sweeps = _ant_run(1.0, steps)
    assert (loose_sweeps <= 2).all()
    assert np.abs(loose - full).max() > 1e-3, np.abs(loose - full).max()
