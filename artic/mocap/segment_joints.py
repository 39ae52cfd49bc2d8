"""The segment joints: ball, hinge and universal, as anatomy needs them (a shoulder, an elbow or knee, an ankle).

A joint has a frame on each segment at its anchor: D on the parent (orientation `frame_in_parent`), C on the child
(`frame_in_child`), both quaternions in the segment's body axes, as artic's body joints have them
(description/body_joints.py, ArtiSynth's convention). With R_DC = D^T R_parent^T R_child C the rotation of C in D:
* **ball**: any R_DC; coordinates the rotation vector of R_parent^T R_child (3; its frames stay the identity);
* **hinge**: R_DC = Rz(theta): one rotation about the shared z axis (an elbow's flexion); coordinate theta;
* **universal**: R_DC = Rz(roll) Ry(pitch): roll about D's z (fixed in the parent), then pitch about C's y (fixed in
  the child), the two axes of a Cardan cross, always perpendicular; coordinates (roll, pitch).
The reference pose (every segment with the world's axes) has every joint at zero: C = D there.

Axis fitting (`fit_axes`): markers cannot tell a hinge's axis directly, but the segment poses they give can. For a
hinge, the child's rotations relative to the parent between any two frames are rotations about the axis (in the
parent's axes), so the axis is the principal direction of their rotation vectors. For a universal joint, the
parent's axis a1 and the child's axis a2 stay perpendicular in every posture, a1 . (R_f a2) = 0 with R_f =
R_parent^T R_child, which alternating smallest-eigenvector steps solve from the current axes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError
from ..math.np_spatial import quat_between, quat_from_matrix, quat_to_matrix, quats_conj, quats_mul, quats_to_rotvec

JOINT_TYPES = {"ball": 3, "hinge": 1, "universal": 2}  # type: its coordinates
_Z, _Y = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def _unit(owner: str, what: str, v) -> np.ndarray:
    a = np.asarray(v, float)
    n = np.linalg.norm(a) if a.shape == (3,) and np.all(np.isfinite(a)) else 0.0
    if n < 1e-9:
        raise ValidationError(f"{owner}: {what} must be a non-zero finite 3-vector, got {v!r}")
    return a / n


def frame_from_axes(owner: str, joint: str, axis: ArrayLike | None, axis2: ArrayLike | None = None) -> np.ndarray:
    """The joint frame (x, y, z, w) whose z is a hinge's `axis`, or a universal joint's first axis with y its
    second `axis2` (perpendicular to it); the identity for a ball joint."""
    if joint == "ball":
        if axis is not None or axis2 is not None:
            raise ValidationError(f"{owner}: a ball joint has no axis; give joint='hinge' or 'universal' for one")
        return IDENTITY.copy()
    if axis is None:
        raise ValidationError(f"{owner}: a {joint} joint needs its axis (axis=(x, y, z), reference-pose axes)")
    z = _unit(owner, "axis", axis)
    if joint == "hinge":
        if axis2 is not None:
            raise ValidationError(f"{owner}: a hinge joint has one axis; axis2 is for a universal joint")
        return np.asarray(quat_between(_Z, z), float)
    if axis2 is None:
        raise ValidationError(f"{owner}: a universal joint needs its second axis too (axis2, fixed in the child)")
    y = _unit(owner, "axis2", axis2)
    if abs(z @ y) > 1e-6:
        raise ValidationError(
            f"{owner}: a universal joint's axes must be perpendicular (a Cardan cross), got axis . axis2 = {z @ y:.3g}"
        )
    return np.asarray(quat_from_matrix(np.column_stack([np.cross(y, z), y, z])), float)


def joint_rotation(
    frame_parent: np.ndarray, frame_child: np.ndarray, q_parent: np.ndarray, q_child: np.ndarray
) -> np.ndarray:
    """(..., 4) R_DC of a joint for segment orientations q_parent, q_child (..., 4)."""
    d = np.broadcast_to(frame_parent, q_parent.shape)
    c = np.broadcast_to(frame_child, q_child.shape)
    return quats_mul(quats_mul(quats_conj(d), quats_mul(quats_conj(q_parent), q_child)), c)


def coordinates(joint: str, r_dc: np.ndarray, q_parent: np.ndarray, q_child: np.ndarray) -> np.ndarray:
    """(..., k) the joint's coordinates [rad] from R_DC (..., 4) (ball: the rotation vector of R_parent^T R_child)."""
    if joint == "ball":
        return quats_to_rotvec(quats_mul(quats_conj(q_parent), q_child))
    m = _matrices(r_dc)
    if joint == "hinge":
        return np.arctan2(m[..., 1, 0], m[..., 0, 0])[..., None]
    pitch = np.arcsin(np.clip(-m[..., 2, 0], -1.0, 1.0))
    roll = np.arctan2(m[..., 1, 0], m[..., 0, 0])
    return np.stack([roll, pitch], axis=-1)


def _matrices(q: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotation matrices of quaternions (..., 4) (x, y, z, w)."""
    x, y, z, w = (q[..., k] for k in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=-2,
    )


def axes_in_child(
    joint: str, frame_parent: np.ndarray, frame_child: np.ndarray, q_parent: np.ndarray, q_child: np.ndarray
) -> np.ndarray:
    """(..., k, 3) the unit axes of the joint's coordinates in the child's axes (ball: the child's x, y, z): the
    directions its generalized forces are torques about. A universal joint's roll axis is D's z, fixed in the
    parent, so it turns in the child's axes with the pose."""
    shape = q_child.shape[:-1]
    if joint == "ball":
        return np.broadcast_to(np.eye(3), shape + (3, 3)).copy()
    c = quat_to_matrix(frame_child)
    if joint == "hinge":
        return np.broadcast_to(c @ _Z, shape + (3,))[..., None, :].copy()
    r_cp = _matrices(quats_mul(quats_conj(q_child), q_parent))  # parent axes -> child axes
    roll = np.einsum("...ij,j->...i", r_cp, quat_to_matrix(frame_parent) @ _Z)
    return np.stack([roll, np.broadcast_to(c @ _Y, shape + (3,))], axis=-2)


def fit_axes(
    joint: str,
    frame_parent: np.ndarray,
    frame_child: np.ndarray,
    q_parent: np.ndarray,
    q_child: np.ndarray,
    eta: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """New (frame_in_parent, frame_in_child) of a hinge or universal joint whose axes best explain the relative
    rotations of the segment orientations q_parent, q_child (F, 4) over F frames, each axis moved eta of the way
    from its current direction; a ball joint's frames are returned as they are."""
    if joint == "ball" or len(q_parent) < 2:
        return frame_parent, frame_child
    rel_q = quats_mul(quats_conj(q_parent), q_child)  # (F, 4): child axes -> parent axes
    rel = _matrices(rel_q)
    d_z, c_z, c_y = (quat_to_matrix(f) @ v for f, v in ((frame_parent, _Z), (frame_child, _Z), (frame_child, _Y)))
    if joint == "hinge":
        # the rotations from the mean relative rotation to every frame's, in the parent's axes, all turn about the
        # axis (from the mean rather than from one frame: no frame's noise is in every step)
        mean = mean_rotation(rel_q)
        steps = quats_to_rotvec(quats_mul(rel_q, quats_conj(np.broadcast_to(mean, rel_q.shape))))
        v = np.linalg.eigh(steps.T @ steps)[1][:, -1]
        a1 = _blend(d_z, v * np.sign(v @ d_z or 1.0), eta)
        in_child = np.einsum("fji,j->fi", rel, a1).mean(axis=0)  # the same axis in the child's axes
        a2 = _blend(c_z, in_child / np.linalg.norm(in_child), eta)
        return _turn(frame_parent, _Z, a1), _turn(frame_child, _Z, a2)
    a1, a2 = d_z, c_y
    for _ in range(200):  # a1 . R_f a2 = 0 in every frame: alternate the two smallest-eigenvector problems
        u = np.einsum("fij,j->fi", rel, a2)
        v = np.linalg.eigh(u.T @ u)[1][:, 0]
        a1 = v * np.sign(v @ a1 or 1.0)
        u = np.einsum("fji,j->fi", rel, a1)
        v = np.linalg.eigh(u.T @ u)[1][:, 0]
        a2 = v * np.sign(v @ a2 or 1.0)
    a1, a2 = _blend(d_z, a1, eta), _blend(c_y, a2, eta)
    return _turn(frame_parent, _Z, a1), _turn(frame_child, _Y, a2)


def mean_rotation(q: np.ndarray) -> np.ndarray:
    """The average of quaternions (F, 4): the principal eigenvector of sum q q^T (Markley; blind to each
    quaternion's sign), with w >= 0."""
    v = np.linalg.eigh(q.T @ q)[1][:, -1]
    return v * (1.0 if v[3] >= 0 else -1.0)


def _blend(current: np.ndarray, target: np.ndarray, eta: float) -> np.ndarray:
    v = (1.0 - eta) * current + eta * target
    return v / np.linalg.norm(v)


def _turn(frame: np.ndarray, local: np.ndarray, target: np.ndarray) -> np.ndarray:
    """`frame` turned by the smallest rotation that takes its `local` axis onto `target`."""
    q = np.asarray(quat_between(quat_to_matrix(frame) @ local, target), float)
    out = quats_mul(q, np.asarray(frame, float))
    return out / np.linalg.norm(out)
