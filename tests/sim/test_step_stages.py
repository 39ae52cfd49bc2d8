"""The step's early stops, which the stage profile (benchmarks/profile_stages.py) times: a step stopped before
"integrate" leaves the state as it was, and the full step is unchanged by them."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import Box, SolverType
from artic.sim.step_kernel import STAGE_INTEGRATE, STAGE_NONE, record_step
from tests.support.bodies import body, scene_with_ground


def _state(block) -> dict:
    return {k: a.numpy().copy() for k, a in vars(block.state).items() if hasattr(a, "numpy")}


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.DIRECT])
def test_a_step_stopped_before_integration_leaves_the_state_and_the_full_one_steps(solver):
    """Identity: a box resting on the ground (contact rows, solver work) stepped with every stop before
    "integrate" keeps its state bit for bit; the block's own launch, which runs every stage, then steps it as a
    second scene stepped without the stops: exactly under PGS, to rounding under DIRECT (whose memory of the rows'
    factorizations the stopped steps updated, free_factor.FactorMemo)."""
    scenes = []
    for _ in range(2):
        scene = scene_with_ground(solver)
        scene.add_actor(body(Box((0.1, 0.1, 0.1)), pose=(0.0, 0.0, 0.1)))
        for _ in range(5):
            scene.step(1.0 / 60.0)
        scenes.append(scene)
    block = scenes[0]._blocks[0]
    ((dt, kind, mode, _),) = block._launches.keys()
    direct = block._direct_arrays() if kind == int(SolverType.DIRECT) else block._no_direct
    before = _state(block)
    for stop in range(STAGE_NONE, STAGE_INTEGRATE):
        record_step(block, dt, SolverType(kind), mode, direct, stop_after=stop).launch()
        after = _state(block)
        for k in before:
            np.testing.assert_array_equal(after[k], before[k], err_msg=f"stop {stop}: {k}")
    for scene in scenes:
        scene.step(1.0 / 60.0)
    a, b = (_state(s._blocks[0]) for s in scenes)
    for k in a:
        if solver == SolverType.PGS:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            np.testing.assert_allclose(a[k], b[k], atol=1e-7, rtol=1e-6, err_msg=k)
    assert not np.array_equal(a["joint_q"], before["joint_q"]) or not np.array_equal(
        a["root_pose"], before["root_pose"]
    )  # the full step did move it (it settles on the ground)
    assert artic.SolverType(kind) == solver
