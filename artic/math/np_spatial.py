"""Float64 NumPy rigid-body math for host-side building and for tests.

Quaternions are (x, y, z, w) as in Warp and PhysX; a `Transform` is (p, q) and maps child coordinates to parent
coordinates: x_parent = q * x_child + p. Rotation vectors follow PhysX's `PxExp` (axis times angle).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError


def quat_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamilton product a*b of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quat_conj(q: ArrayLike) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quat_rotate(q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """Rotate vector v by unit quaternion q."""
    u = np.asarray(q[:3], dtype=float)
    w = q[3]
    v = np.asarray(v, dtype=float)
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def quat_to_matrix(q: ArrayLike) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_from_matrix(m: ArrayLike) -> np.ndarray:
    """Unit quaternion of a proper rotation matrix (Shepperd's method, stable for every angle)."""
    m = np.asarray(m, dtype=float)
    tr = np.trace(m)
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def quat_from_axis_angle(axis: ArrayLike, angle: float) -> np.ndarray:
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    s = np.sin(0.5 * angle)
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, np.cos(0.5 * angle)])


def quat_exp(rotvec: ArrayLike) -> np.ndarray:
    """Quaternion of a rotation vector (PhysX `PxExp`)."""
    rotvec = np.asarray(rotvec, dtype=float)
    angle = np.linalg.norm(rotvec)
    if angle < 1e-12:
        return np.array([0.5 * rotvec[0], 0.5 * rotvec[1], 0.5 * rotvec[2], 1.0]) / np.sqrt(1 + 0.25 * angle**2)
    return quat_from_axis_angle(rotvec / angle, angle)


def quat_from_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    qx = quat_from_axis_angle((1, 0, 0), roll)
    qy = quat_from_axis_angle((0, 1, 0), pitch)
    qz = quat_from_axis_angle((0, 0, 1), yaw)
    return quat_mul(qz, quat_mul(qy, qx))


def quat_between(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """The shortest rotation taking unit vector a onto unit vector b."""
    a = np.asarray(a, dtype=float) / np.linalg.norm(a)
    b = np.asarray(b, dtype=float) / np.linalg.norm(b)
    d = float(np.dot(a, b))
    if d < -1.0 + 1e-12:
        # opposite vectors: rotate by pi about any axis orthogonal to a
        ortho = np.cross(a, (1.0, 0.0, 0.0))
        if np.linalg.norm(ortho) < 1e-6:
            ortho = np.cross(a, (0.0, 1.0, 0.0))
        return quat_from_axis_angle(ortho, np.pi)
    c = np.cross(a, b)
    q = np.array([c[0], c[1], c[2], 1.0 + d])
    return q / np.linalg.norm(q)


# -- batched: arrays of quaternions (..., 4) and vectors (..., 3) ----------------------------------------------------
def quats_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a*b of (..., 4) (x, y, z, w) quaternions."""
    av, aw, bv, bw = a[..., :3], a[..., 3:4], b[..., :3], b[..., 3:4]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - (av * bv).sum(-1, keepdims=True)], -1)


def unit_wxyz(q: ArrayLike) -> np.ndarray:
    """(..., 4) (w, x, y, z) quaternions scaled to unit length as MuJoCo's mju_normalize4 does: one of length below
    1e-15 (a file's "0 0 0 0", which MuJoCo models hold in keyframes) becomes the identity (1, 0, 0, 0)."""
    q = np.array(q, dtype=float)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    zero = n[..., 0] < 1e-15
    q[zero] = (1.0, 0.0, 0.0, 0.0)
    return q / np.where(zero[..., None], 1.0, n)


def quats_conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (..., 3) arrays: np.cross's result, without its axis bookkeeping (several times
    faster on the small batches of per-step host code)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def quats_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4)."""
    u, w = q[..., :3], q[..., 3:4]
    t = 2.0 * cross3(u, v)
    return v + w * t + cross3(u, t)


def quats_to_matrices(q: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotation matrices of unit (x, y, z, w) quaternions (..., 4)."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def quats_to_rotvec(q: np.ndarray) -> np.ndarray:
    """(..., 3) rotation vectors, |r| <= pi, of unit quaternions (..., 4)."""
    q = np.where(q[..., 3:4] < 0.0, -q, q)
    s = np.linalg.norm(q[..., :3], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., 3:4])
    return q[..., :3] * np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0)


def skew(v: ArrayLike) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _vector(what: str, value, n: int) -> np.ndarray:
    """`value` as a new float64 array of n real numbers; strings, booleans, complex numbers and other shapes raise
    a ValidationError (NumPy would raise a bare ValueError or TypeError, or read True as 1.0)."""
    try:
        a = np.asarray(value)
        ok = a.dtype.kind in "fiu" and a.size == n
        a = a.astype(float) if ok else a
    except (TypeError, ValueError):  # ragged nested sequences
        ok = False
    if not ok:
        raise ValidationError(f"Transform: {what} must be {n} real numbers, got {value!r}")
    return np.array(a, dtype=float).reshape(n)


@dataclass
class Transform:
    """A rigid transform (p, q): position and (x, y, z, w) unit quaternion, like `PxTransform`."""

    p: np.ndarray = field(default_factory=lambda: np.zeros(3))
    q: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))

    def __post_init__(self):
        self.p = _vector("position p", self.p, 3)
        self.q = _vector("quaternion q (x, y, z, w)", self.q, 4)

    def __mul__(self, other: Transform) -> Transform:
        return Transform(self.p + quat_rotate(self.q, other.p), quat_mul(self.q, other.q))

    def inverse(self) -> Transform:
        """The inverse transform (q taken as unit length): parent to child coordinates."""
        qi = quat_conj(self.q)
        return Transform(-quat_rotate(qi, self.p), qi)

    def transform_point(self, v: ArrayLike) -> np.ndarray:
        """Point v from child to parent coordinates: q v + p."""
        return self.p + quat_rotate(self.q, v)

    def rotate(self, v: ArrayLike) -> np.ndarray:
        """Vector v from child to parent axes: q v (no translation)."""
        return quat_rotate(self.q, v)

    def as_array(self) -> np.ndarray:
        """(px, py, pz, qx, qy, qz, qw), Warp's transform layout."""
        return np.concatenate([self.p, self.q])

    def is_finite(self) -> bool:
        """Whether every component of p and q is finite."""
        return bool(np.all(np.isfinite(self.p)) and np.all(np.isfinite(self.q)))

    @staticmethod
    def from_array(a: ArrayLike) -> Transform:
        """A Transform from (px, py, pz, qx, qy, qz, qw), the inverse of as_array."""
        a = np.asarray(a, dtype=float)
        return Transform(a[:3], a[3:7])

    def copy(self) -> Transform:
        """A copy with its own p and q arrays."""
        return Transform(self.p.copy(), self.q.copy())


def spatial_inertia(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> np.ndarray:
    """6x6 spatial inertia about the origin, in (angular, linear) order, of a body with COM `com` and rotational
    inertia `inertia_com` about the COM (all in the same frame). Featherstone (2008), eq. 2.63."""
    c = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_com + mass * c @ c.T
    out[:3, 3:] = mass * c
    out[3:, :3] = mass * c.T
    out[3:, 3:] = mass * np.eye(3)
    return out
