"""What a body joint measures: frames C and D, T_CD, and per slot its value and the direction of its rate
(ArtiSynth's joints chapter, sections 3.3.1-3.3.2; description/body_joints.py defines the modes).

A joint has six slots. Slots 3..5 are the components of p (the origin of C in D's axes); their rates are the
velocity of C's origin as a point of A relative to B's point there, along D's axes. Slots 0..2 are angular and
depend on the mode:
* ROTVEC: the rotation vector r = log R_CD (|r| <= pi); r' = Jl^-1(r) w_D (Jl: the left Jacobian of SO(3), w_D the
  angular velocity of A relative to B in D's axes);
* TWIST_X/Y/Z: the twist angle t about that axis e of D and the swing left over (R = Rot_e(t) exp(s), the swing's
  rotation vector s has no component along e); with w_D = t' e + Rot_e(t) Jl(s) s', the rates are
  [t', s'] = M^-1 Rot_e(t)^T w_D for M = [e | Jl(s) e_i | Jl(s) e_j];
* EULER_ZYX: R = Rz(a) Ry(b) Rx(c), rates from the inverse of the Euler-rate matrix (singular at b = +-pi/2).
* EULER_ZY (the universal joint, R = Rz(a) Ry(b) on the joint): a and b read from C's axes in D's, a from the pitch
  axis y_C (atan2(-y_x, y_y)), b from x_C and z_C (atan2(-x_z, z_z), the whole circle), and the constrained slot
  asin(y_C . z_D) (= asin(sin c cos b) for R = Rz(a) Ry(b) Rx(c)). A Cardan joint has no singularity on its
  manifold; read as Z-Y-X Euler angles it had one at b = +-pi/2, where c flipped by pi and the solver "corrected"
  that with half a turn. These are singular only 90 deg off the joint (y_C along z_D).
The direction of an angular slot is a world vector u with slot rate = u . (w_A - w_B); of a linear slot a world
vector u with rate = u . (v_A(p_C) - v_B(p_C)). A distance joint's slot 3 is |p_C - p_D|, its direction the unit
vector from D's origin to C's, B's point being p_D. MuJoCo's soft weld measures its rotation otherwise, by its
quaternion error (weld_rotation_row); point_bias gives a body point's velocity-product acceleration (its reference).
"""

from __future__ import annotations

import warp as wp

from ..description import body_joints as bj
from ..dynamics.integrate import quat_log

# the description's measure modes (description/body_joints.py), as kernel constants
MODE_ROTVEC = wp.constant(bj.MODE_ROTVEC)
MODE_TWIST_X = wp.constant(bj.MODE_TWIST_X)
MODE_TWIST_Z = wp.constant(bj.MODE_TWIST_Z)
MODE_EULER_ZY = wp.constant(bj.MODE_EULER_ZY)
MODE_EULER_ZYX = wp.constant(bj.MODE_EULER_ZYX)
MODE_DISTANCE = wp.constant(bj.MODE_DISTANCE)
_TWO_PI = wp.constant(6.283185307179586)

vec6 = wp.types.vector(length=6, dtype=float)


@wp.func
def body_pose(link_pose: wp.array2d(dtype=wp.transform), env: int, link: int) -> wp.transform:
    """A body's actor pose; the world (and a static body, whose frame is folded into its joint frame) is the
    identity."""
    if link < 0:
        return wp.transform_identity()
    return link_pose[env, link]


@wp.func
def unwrap(raw: float, previous: float) -> float:
    """raw + 2 pi k nearest to previous: angles keep counting past +-pi."""
    return raw + _TWO_PI * wp.round((previous - raw) / _TWO_PI)


@wp.func
def jl_inv(r: wp.vec3) -> wp.mat33:
    """Inverse left Jacobian of SO(3): r' = Jl^-1(r) w for R = exp(r) and spatial angular velocity w."""
    t2 = wp.dot(r, r)
    c = 1.0 / 12.0 + t2 / 720.0
    if t2 > 1.0e-6:
        t = wp.sqrt(t2)
        # (1 + cos t) / sin t written as cot(t/2): finite at t = pi, where the other form is 0/0 (a spherical
        # joint turned half a revolution)
        h = 0.5 * t
        c = 1.0 / t2 - wp.cos(h) / (2.0 * t * wp.sin(h))
    k = wp.skew(r)
    return wp.identity(n=3, dtype=float) - 0.5 * k + c * (k * k)


@wp.func
def jl(r: wp.vec3) -> wp.mat33:
    """Left Jacobian of SO(3): w = Jl(r) r' for R = exp(r)."""
    t2 = wp.dot(r, r)
    a = 0.5 - t2 / 24.0
    b = 1.0 / 6.0 - t2 / 120.0
    if t2 > 1.0e-6:
        t = wp.sqrt(t2)
        a = (1.0 - wp.cos(t)) / t2
        b = (t - wp.sin(t)) / (t2 * t)
    k = wp.skew(r)
    return wp.identity(n=3, dtype=float) + a * k + b * (k * k)


@wp.func
def _axis_quat(axis: int, angle: float) -> wp.quat:
    v = wp.vec3(0.0)
    v[axis] = 1.0
    return wp.quat_from_axis_angle(v, angle)


@wp.func
def joint_slots(mode: int, tcd: wp.transform, rot_d: wp.quat) -> tuple[vec6, wp.mat33]:
    """(values, angular directions as the rows of a mat33, world) of a joint's slots 0..5 (raw: angles not yet
    unwrapped). Linear directions are D's world axes (rows of R_D^T)."""
    q = wp.transform_get_rotation(tcd)
    if q[3] < 0.0:
        q = -q  # the same rotation; keeps twist angles in [-pi, pi]
    p = wp.transform_get_translation(tcd)
    rd = wp.quat_to_matrix(rot_d)
    values = vec6()
    for k in range(3):
        values[3 + k] = p[k]
    dirs = wp.mat33()
    if mode == MODE_ROTVEC or mode == MODE_DISTANCE:
        r = quat_log(q)
        for k in range(3):
            values[k] = r[k]
        dirs = jl_inv(r) * wp.transpose(rd)
    elif mode < MODE_EULER_ZY:  # twist about axis k and the swing left over
        k = mode - MODE_TWIST_X
        twist = wp.quat(0.0, 0.0, 0.0, q[3])
        twist[k] = q[k]
        n = wp.length(wp.vec4(twist[0], twist[1], twist[2], twist[3]))
        angle = float(0.0)
        if n > 1.0e-12:
            twist = twist / n
            angle = 2.0 * wp.atan2(twist[k], twist[3])
        else:
            twist = wp.quat_identity()  # a half-turn swing: no twist to speak of
        s = quat_log(wp.quat_inverse(twist) * q)
        for i in range(3):
            values[i] = s[i]
        values[k] = angle
        m = jl(s)  # columns: the swing's rates; column k: the twist's
        for i in range(3):
            m[i, k] = 0.0
        m[k, k] = 1.0
        dirs = wp.inverse(m) * wp.transpose(rd * wp.quat_to_matrix(_axis_quat(k, angle)))
    elif mode == MODE_EULER_ZY:  # R = Rz(a) Ry(b): read from C's axes, singular only 90 deg off the joint
        m = wp.quat_to_matrix(q)
        x = wp.vec3(m[0, 0], m[1, 0], m[2, 0])  # C's axes in D's (columns of R)
        y = wp.vec3(m[0, 1], m[1, 1], m[2, 1])  # the pitch axis, Rz(a) e_y on the joint
        z = wp.vec3(m[0, 2], m[1, 2], m[2, 2])
        ez = wp.vec3(0.0, 0.0, 1.0)
        values[0] = wp.atan2(-y[0], y[1])
        values[1] = wp.atan2(-x[2], z[2])
        values[2] = wp.asin(wp.clamp(y[2], -1.0, 1.0))  # y_C . z_D = sin(c) cos(b): 0 on the joint
        # rates: y' = w x y (w relative, in D's axes); each row is its value's gradient in w
        off = wp.max(1.0 - y[2] * y[2], 1.0e-12)
        row0 = (ez - y[2] * y) / off
        row1 = wp.cross(x[2] * z - z[2] * x, ez) / wp.max(x[2] * x[2] + z[2] * z[2], 1.0e-12)
        row2 = wp.cross(y, ez) / wp.sqrt(off)
        rows = wp.mat33(row0[0], row0[1], row0[2], row1[0], row1[1], row1[2], row2[0], row2[1], row2[2])
        dirs = rows * wp.transpose(rd)
    else:  # R = Rz(a) Ry(b) Rx(c)
        m = wp.quat_to_matrix(q)
        a = wp.atan2(m[1, 0], m[0, 0])
        b = wp.asin(wp.clamp(-m[2, 0], -1.0, 1.0))
        c = wp.atan2(m[2, 1], m[2, 2])
        values[0] = a
        values[1] = b
        values[2] = c
        sa = wp.sin(a)
        ca = wp.cos(a)
        sb = wp.sin(b)
        cb = wp.max(wp.cos(b), 1.0e-6)  # gimbal lock at b = +-pi/2
        e_inv = wp.mat33(sb * ca / cb, sb * sa / cb, 1.0, -sa, ca, 0.0, ca / cb, sa / cb, 0.0)
        dirs = e_inv * wp.transpose(rd)
    return values, dirs


@wp.func
def weld_rotation_row(xc: wp.transform, xd: wp.transform, k: int) -> wp.vec4:
    """(value, direction) of rotation row k of a MuJoCo-soft weld, in angle units: MuJoCo's residual is the vector
    part e of conj(q_C) q_D (sin(angle / 2) about the axis; C and D coincide at qpos0, as MuJoCo's relpose makes
    body1's and body2's frames), whose rate is 0.5 N (w_D - w_C) with column i of N the vector part of conj(q_C)
    (b_i, 0) q_D. The row is -2 e_k, its direction N's row k (so that the row's rate, direction . (w_A - w_B),
    is the value's): MuJoCo's row scaled by -2, which the factor 4 on its weight and the half angles of the
    impedance undo. The angle rows of joint_coordinates agree with it to first order only (1 % off at 0.1 rad,
    30 % at the 0.7 rad that gym-aloha's end-effector welds start from)."""
    qc = wp.transform_get_rotation(xc)
    qd = wp.transform_get_rotation(xd)
    qci = wp.quat_inverse(qc)
    err = qci * qd
    u = wp.vec3(0.0)
    for i in range(3):
        b = wp.quat(0.0, 0.0, 0.0, 0.0)
        b[i] = 1.0
        n = qci * b * qd
        u[i] = n[k]
    return wp.vec4(-2.0 * err[k], u[0], u[1], u[2])


@wp.func
def point_bias(
    link_v: wp.array2d(dtype=wp.spatial_vector),
    link_bias: wp.array2d(dtype=wp.spatial_vector),
    env: int,
    link: int,
    p: wp.vec3,
) -> wp.spatial_vector:
    """(angular, linear) acceleration of the point p (relative to O) fixed on `link` at zero generalized
    accelerations: (alpha, a_O + alpha x p + w x (v_O + w x p)); zero for a static body."""
    if link < 0:
        return wp.spatial_vector()
    v = link_v[env, link]
    a = link_bias[env, link]
    w = wp.spatial_top(v)
    alpha = wp.spatial_top(a)
    lin = wp.spatial_bottom(a) + wp.cross(alpha, p) + wp.cross(w, wp.spatial_bottom(v) + wp.cross(w, p))
    return wp.spatial_vector(alpha, lin)
