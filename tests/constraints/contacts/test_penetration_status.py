"""Contact penetration as a status (issue 27, item 7: "PGS/TGS mass-ratio and tall-stack failures are documented but
not reported at run time"). constraints/contact_status.py watches each env's deepest penetration with the same
persistence rule as violated joints (constraints/persistence.py) against 2 cm, and sim/status.py reports it through
the scene's nan_policy."""

from __future__ import annotations

import warnings

import pytest

import artic
from artic.constraints.contact_status import PENETRATION_TOLERANCE
from tests.support.degenerate import HALF, assert_first_env_frozen, box_stack, step_recording

DT = 1.0 / 60.0


def _said(record):
    return [str(w.message) for w in record if "contact penetration deeper than" in str(w.message)]


@pytest.mark.parametrize("solver", [artic.SolverType.PGS, artic.SolverType.TGS], ids=["pgs", "tgs"])
def test_a_heavy_box_sinking_through_a_light_one_is_reported(solver):
    """A 1000 kg box on a 1 kg box under 4 Gauss-Seidel iterations: the solve cannot carry the heavy box (docs/
    solvers.md), which sinks into the light one deeper every step. That growth is reported within a few steps (a
    warning naming both boxes, the env and the depth), and get_penetration_status agrees at that moment."""
    scene, _boxes = box_stack(solver, 1000.0, 2)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        steps = 0
        while steps < 30 and not _said(record):
            scene.step(DT)
            steps += 1
    said = _said(record)
    assert said, "the sinking box was not reported"
    assert "'b0' and 'b1' env(s) 0" in said[0] and "still stepping" in said[0]
    status = scene.get_penetration_status()
    assert status.violated[0] and status.depth[0] > PENETRATION_TOLERANCE
    assert steps < 20  # by the growth clause, before the 20-step one
    depth_said = float(said[0].split("(env 0: ")[1].split(" m)")[0])
    assert depth_said == pytest.approx(status.depth[0], rel=1e-2)


def test_the_direct_solver_carries_the_same_box_and_nothing_is_reported():
    """The same scene under the direct solver: it solves the contacts exactly and the boxes stay within 1 mm."""
    scene, _boxes = box_stack(artic.SolverType.DIRECT, 1000.0, 2)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(120):
            scene.step(DT)
            assert scene.get_penetration_status().depth[0] < 1e-3
    assert not _said(record)


@pytest.mark.parametrize("solver", list(artic.SolverType), ids=lambda s: s.name.lower())
def test_a_tall_even_stack_and_a_box_pushed_out_of_the_ground_are_not_reported(solver):
    """Twelve 1 kg boxes settle a few millimetres into their contacts (PGS at 4 iterations, 17 mm at the bottom
    after 2 s): within tolerance, not reported. A box created 5 cm into the ground is pushed out in a few steps:
    its penetration halves, so it is not reported either."""
    scene, _boxes = box_stack(solver, 1.0, 12)
    sunk, _ = box_stack(solver, 1.0, 1, bottom=HALF - 0.05)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(120):
            scene.step(DT)
            sunk.step(DT)
    assert not _said(record)
    for s in (scene, sunk):
        status = s.get_penetration_status()
        assert not status.violated[0] and status.depth[0] < PENETRATION_TOLERANCE


def test_a_stack_that_keeps_sinking_is_reported_by_persistence():
    """Six boxes alternating 1 kg and 10 kg under PGS at 4 iterations sink 2-3 cm into each other and stay there
    without growing much: reported by the 20-steps-without-halving clause (step >= 20 beyond tolerance)."""
    scene, _boxes = box_stack(artic.SolverType.PGS, 10.0, 6)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(120):
            scene.step(DT)
            if _said(record):
                break
    assert _said(record)
    status = scene.get_penetration_status()
    assert status.violated[0] and status.depth[0] > PENETRATION_TOLERANCE


def test_raise_and_freeze_policies_act_on_penetration():
    """'raise' raises ConstraintViolationError naming the two bodies; 'freeze' puts the env back to before that
    step and holds it there while env 1 (its heavy box moved beside the light one, onto the ground) steps on, and a
    pose set through the scene releases it."""
    scene, _boxes = box_stack(artic.SolverType.PGS, 1000.0, 2, nan_policy="raise")
    with pytest.raises(artic.ConstraintViolationError, match=r"'b0' and 'b1' env\(s\) 0 "):
        for _ in range(30):
            scene.step(DT)
    scene, (_light, heavy) = box_stack(artic.SolverType.PGS, 1000.0, 2, envs=2, nan_policy="freeze")
    scene.set_actor_pose(heavy, [[0.0, 0.0, 3 * HALF, 0.0, 0.0, 0.0, 1.0], [0.5, 0.0, HALF, 0.0, 0.0, 0.0, 1.0]])
    said = [m for m in step_recording(scene, 30, DT) if "contact penetration deeper than" in m]
    assert "frozen before that step" in said[0]
    assert_first_env_frozen(scene, heavy, DT)
    assert scene.get_actor_pose(heavy)[1, 2] == pytest.approx(HALF, abs=2e-3)  # env 1 rests on the ground
    scene.set_actor_pose(heavy, [[0.5, 0.0, HALF, 0.0, 0.0, 0.0, 1.0]] * 2)
    assert scene.env_status.tolist() == [False, False]
    assert not scene.get_penetration_status().violated[0]
