"""The rows of an articulation's dofs (its joint drives, limits, friction and velocity limits), in PhysX's solve
order; their parameters are the model's (core/model.py: DofParams).

Every dof row acts on one dof d: its Jacobian is the unit vector e_d over the generalized velocities, so its
response is r = (M^-1)_dd (the joint velocity change per unit joint impulse with every other dof and the floating
base free to move, physx-notes 2.3) and an impulse dl changes the generalized velocity by dl * M^-1 e_d. Rows are
ordered as PhysX visits them (physx-notes 2.8 and 4.2): links depth-first from the root, children in low-level
order; per dof in axis order: coefficient friction, drive, static/dynamic/viscous friction, position limit,
velocity limit. Which rows exist follows physx-notes 2.2 (drives) and 3.3 (friction models); the table is built
from the descriptions in sim/builders/model.py.
"""

from __future__ import annotations

import warp as wp

ROW_FRICTION_COEF = wp.constant(0)  # PhysX's deprecated coefficient friction (default 0.05)
ROW_DRIVE = wp.constant(1)
ROW_FRICTION = wp.constant(2)  # static/dynamic/viscous friction (PhysX 5.6 model)
ROW_LIMIT = wp.constant(3)
ROW_VELOCITY_LIMIT = wp.constant(4)


@wp.struct
class DofRows:
    """The dof rows of a block in solve order (R rows)."""

    row_count: int
    row_kind: wp.array(dtype=int)  # (R,) ROW_*
    row_dof: wp.array(dtype=int)  # (R,) dof the row acts on
    row_rank: wp.array(dtype=int)  # (R,) depth-first rank of the row's link (static contacts follow each link)
