"""PhysX oracle: ur5 and panda from example-robot-data, collisions off, driven along sinusoidal targets for 2 s at
dt = 1/120 with the same gains, iteration counts (4, 1), link damping 0.05, velocity caps, joint friction
coefficient 0.05 and URDF velocity limits in artic and in PhysX 5.3 (SAPIEN), for PGS and TGS.

Tolerance: 1e-3 rad on every joint at every step. Both engines run the same float32 algorithm, so what remains
is float32 round-off accumulated over 240 steps and the few places PhysX 5.3 (SAPIEN) and 5.8 (artic's model)
differ (e.g. the response floor 1e-5 vs 1e-12); measured: 5e-6 rad (ur5), 7e-5 rad (panda)."""

import numpy as np
import pytest

from artic import SolverType
from tests.support.models import robot_path
from tests.support.physx_oracle import trajectories

pytest.importorskip("sapien")
pytestmark = pytest.mark.oracle

CASES = {
    "ur5": (np.array([0.0, -1.0, 1.0, -1.2, -1.6, 0.0]), 2000.0, 200.0, np.full(6, 0.3)),
    "panda": (
        np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02]),
        1000.0,
        100.0,
        np.array([0.3] * 7 + [0.0, 0.0]),
    ),
}


@pytest.mark.parametrize("solver", [SolverType.PGS, SolverType.TGS])
@pytest.mark.parametrize("robot", sorted(CASES))
def test_joint_trajectories_match_physx(robot, solver):
    q0, kp, kd, amp = CASES[robot]
    a, p = trajectories(
        robot_path(robot), q0, lambda t: q0 + amp * np.sin(np.pi * t), kp, kd, solver, steps=240, dt=1.0 / 120.0
    )
    assert np.ptp(p[:, :7], axis=0).min() > 0.5  # the arm really moved
    assert np.abs(a - p).max() < 1e-3
