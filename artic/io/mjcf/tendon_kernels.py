"""Spatial tendons on the device: the lengths, speeds and link forces of a TendonSet (spatial.py) computed by two
Warp launches per step from the block's own state and written into its link forces, instead of NumPy over a copy of
the state and a cache round trip (~0.9 ms a step at one env, mostly NumPy's per-call cost on small arrays).

The geometry is spatial.py's and wrap.py's, one (env, tendon) per thread, in float64 as there: each path step is a
straight segment between two sites, or two sites with a wrapping geom between them (wrap.py's sphere and cylinder,
the side site's homotopy rule, the inside wrap by Newton's method). `_evaluate` writes each tendon's length and speed
and each step's points; `_apply` puts a tension f on the bodies as J^T f, the point forces -f u and +f u at each
straight piece's ends (atomically added to the links' forces and torques about their COMs, which the step reads and
then clears). NumPy's spatial.py stays the reference (tests/io/mjcf/test_tendon_kernels.py checks the two against
each other on random poses) and the path for the tendons whose links are not all in one block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ...core.struct_refs import opt_in as _struct_refs
from ..xml_values import MAX_MAGNITUDE

_struct_refs(__name__)  # struct parameters by reference (core/struct_refs.py)

if TYPE_CHECKING:
    from ...sim.block import Block
    from ...sim.scene import Scene
    from .spatial import TendonSet

vec5d = wp.types.vector(length=5, dtype=wp.float64)  # two 2D tangent points and an arc length (-1: no wrap)

_LIMIT = wp.constant(float(MAX_MAGNITUDE))  # a force beyond it is dropped (the scene reports the env's state)


@wp.func
def _tiny() -> wp.float64:
    return wp.float64(1.0e-15)  # MuJoCo's mjMINVAL, as wrap.py's _TINY


@wp.func
def _unit2(a: wp.vec2d) -> wp.vec2d:
    return a / wp.max(wp.length(a), _tiny())


@wp.func
def _turn2(u: wp.vec2d, b: wp.float64) -> wp.vec2d:
    c = wp.cos(b)
    s = wp.sin(b)
    return wp.vec2d(c * u[0] - s * u[1], s * u[0] + c * u[1])


@wp.func
def _crosses(a0: wp.vec2d, a1: wp.vec2d, b0: wp.vec2d, b1: wp.vec2d) -> int:
    """Whether the 2D segments a0-a1 and b0-b1 intersect."""
    ea = a1 - a0
    eb = b1 - b0
    det = eb[1] * ea[0] - eb[0] * ea[1]
    if wp.abs(det) < _tiny():
        return 0
    off = a0 - b0
    s = (eb[0] * off[1] - eb[1] * off[0]) / det
    t = (ea[0] * off[1] - ea[1] * off[0]) / det
    one = wp.float64(1.0)
    zero = wp.float64(0.0)
    if s >= zero and s <= one and t >= zero and t <= one:
        return 1
    return 0


@wp.func
def _no_wrap(q0: wp.vec2d, q1: wp.vec2d) -> vec5d:
    return vec5d(q0[0], q0[1], q1[0], q1[1], wp.float64(-1.0))


@wp.func
def _tangents(q0: wp.vec2d, q1: wp.vec2d, r: wp.float64, h0: wp.float64, h1: wp.float64, sgn: wp.float64) -> vec5d:
    """The tangent points of one way round (wrap.py's _circle), the last entry the score that picks the way."""
    n0 = wp.dot(q0, q0)
    n1 = wp.dot(q1, q1)
    rr = r * r
    s0 = wp.vec2d(q0[0] * rr + sgn * r * q0[1] * h0, q0[1] * rr - sgn * r * q0[0] * h0) / n0
    s1 = wp.vec2d(q1[0] * rr - sgn * r * q1[1] * h1, q1[1] * rr + sgn * r * q1[0] * h1) / n1
    g = -wp.dot(s0 - s1, s0 - s1)
    if _crosses(q0, s0, q1, s1) != 0:
        g = wp.float64(-10000.0)
    return vec5d(s0[0], s0[1], s1[0], s1[1], g)


@wp.func
def _circle(q0: wp.vec2d, q1: wp.vec2d, r: wp.float64) -> vec5d:
    """wrap.py's _circle for one row: the outside wrap without a side site."""
    n0 = wp.dot(q0, q0)
    n1 = wp.dot(q1, q1)
    seg = q1 - q0
    seg2 = wp.dot(seg, seg)
    rr = r * r
    if n0 < rr or n1 < rr or r < _tiny() or seg2 < _tiny():
        return _no_wrap(q0, q1)
    a = wp.clamp(-wp.dot(seg, q0) / seg2, wp.float64(0.0), wp.float64(1.0))
    near = q0 + a * seg
    if wp.dot(near, near) > rr:
        return _no_wrap(q0, q1)
    h0 = wp.sqrt(wp.max(n0 - rr, wp.float64(0.0)))
    h1 = wp.sqrt(wp.max(n1 - rr, wp.float64(0.0)))
    plus = _tangents(q0, q1, r, h0, h1, wp.float64(1.0))
    minus = _tangents(q0, q1, r, h0, h1, wp.float64(-1.0))
    first = plus[4] > minus[4]
    pnt = minus
    if first:
        pnt = plus
    p0 = wp.vec2d(pnt[0], pnt[1])
    p1 = wp.vec2d(pnt[2], pnt[3])
    if _crosses(q0, p0, q1, p1) != 0:
        return _no_wrap(q0, q1)
    angle = wp.acos(wp.clamp(wp.dot(_unit2(p0), _unit2(p1)), wp.float64(-1.0), wp.float64(1.0)))
    turn = pnt[1] * pnt[2] - pnt[0] * pnt[3]
    if (turn > wp.float64(0.0) and not first) or (turn < wp.float64(0.0) and first):
        angle = wp.float64(2.0 * wp.pi) - angle
    return vec5d(pnt[0], pnt[1], pnt[2], pnt[3], r * angle)


@wp.func
def _signed_angle(u: wp.vec2d, v: wp.vec2d) -> wp.float64:
    return wp.atan2(u[0] * v[1] - u[1] * v[0], wp.dot(u, v))


@wp.func
def _homotopic(q0: wp.vec2d, q1: wp.vec2d, sd: wp.vec2d, r: wp.float64) -> vec5d:
    """wrap.py's _homotopic for one row: the outside wrap with a side site (MuJoCo 4's rule)."""
    l0 = wp.length(q0)
    l1 = wp.length(q1)
    if l0 < r or l1 < r or r < _tiny():
        return _no_wrap(q0, q1)
    winding = _signed_angle(q0, sd) + _signed_angle(sd, q1)
    one = wp.float64(1.0)
    b0 = wp.acos(wp.clamp(r / wp.max(l0, _tiny()), -one, one))
    b1 = wp.acos(wp.clamp(r / wp.max(l1, _tiny()), -one, one))
    arc = wp.abs(winding) - b0 - b1
    if arc < wp.float64(0.0):
        return _no_wrap(q0, q1)
    turn = one
    if winding < wp.float64(0.0):
        turn = -one
    p0 = r * _turn2(_unit2(q0), turn * b0)
    p1 = r * _turn2(_unit2(q1), -turn * b1)
    return vec5d(p0[0], p0[1], p1[0], p1[1], r * arc)


@wp.func
def _incidence(z: wp.float64, a: wp.float64, b: wp.float64, g: wp.float64) -> wp.float64:
    one = wp.float64(1.0)
    return (
        wp.asin(wp.clamp(a * z, -one, one))
        + wp.asin(wp.clamp(b * z, -one, one))
        - wp.float64(2.0) * wp.asin(wp.clamp(z, -one, one))
        + g
    )


@wp.func
def _slope(z: wp.float64, a: wp.float64, b: wp.float64) -> wp.float64:
    one = wp.float64(1.0)
    zero = wp.float64(0.0)
    return (
        a / wp.max(_tiny(), wp.sqrt(wp.max(one - (z * a) * (z * a), zero)))
        + b / wp.max(_tiny(), wp.sqrt(wp.max(one - (z * b) * (z * b), zero)))
        - wp.float64(2.0) / wp.max(_tiny(), wp.sqrt(wp.max(one - z * z, zero)))
    )


@wp.func
def _inside(q0: wp.vec2d, q1: wp.vec2d, r: wp.float64) -> vec5d:
    """wrap.py's _inside for one row: one touching point, length 0 (Newton's method from z near 1)."""
    tiny = _tiny()
    one = wp.float64(1.0)
    zero = wp.float64(0.0)
    l0 = wp.length(q0)
    l1 = wp.length(q1)
    seg = q1 - q0
    seg2 = wp.dot(seg, seg)
    if l0 <= r or l1 <= r or r < tiny or l0 < tiny or l1 < tiny:
        return _no_wrap(q0, q1)
    a = -wp.dot(seg, q0)
    if seg2 > tiny:
        a = a / seg2
    if seg2 > tiny and a > zero and a < one and wp.length(q0 + a * seg) <= r:
        return _no_wrap(q0, q1)  # the straight segment cuts the circle
    ca = r / wp.max(l0, tiny)
    cb = r / wp.max(l1, tiny)
    cos_g = (l0 * l0 + l1 * l1 - seg2) / wp.max(wp.float64(2.0) * l0 * l1, tiny)
    if cos_g < -one + tiny:
        return _no_wrap(q0, q1)
    failed = cos_g > one - tiny
    g = wp.acos(wp.clamp(cos_g, -one, one))
    z = one - wp.float64(1.0e-7)
    fz = _incidence(z, ca, cb, g)
    if fz > zero:
        failed = True
    done = failed or wp.abs(fz) <= wp.float64(1.0e-6)
    for _it in range(20):
        if done:
            break
        df = _slope(z, ca, cb)
        if df > -tiny:
            failed = True
            break
        z1 = z - fz / df
        if z1 > z:
            failed = True
            break
        z = z1
        fz = _incidence(z, ca, cb, g)
        if fz > wp.float64(1.0e-6):
            failed = True
            break
        done = wp.abs(fz) <= wp.float64(1.0e-6)
    if not done:
        failed = True
    touch = r * _unit2(wp.float64(0.5) * (q0 + q1))  # MuJoCo's answer where the solve fails
    if not failed:
        ccw = q0[0] * q1[1] - q0[1] * q1[0] > zero
        base = _unit2(q1)
        k = cb
        if ccw:
            base = _unit2(q0)
            k = ca
        ang = wp.asin(wp.clamp(z, -one, one)) - wp.asin(wp.clamp(k * z, -one, one))
        touch = r * _turn2(base, ang)
    return vec5d(touch[0], touch[1], touch[0], touch[1], zero)


@wp.func
def _plane_axes(p0: wp.vec3d, p1: wp.vec3d, cylinder: int) -> wp.mat33d:
    """The wrapping plane's two axes (rows 0 and 1) in the geom's frame (wrap.py's _sphere_plane; a cylinder's x, y)."""
    one = wp.float64(1.0)
    zero = wp.float64(0.0)
    if cylinder != 0:
        return wp.mat33d(one, zero, zero, zero, one, zero, zero, zero, zero)
    a0 = p0 / wp.max(wp.length(p0), _tiny())
    normal = wp.cross(p0, p1)
    if wp.length(normal) < _tiny():  # parallel: MuJoCo's normal p0 x (1, 1, 1 with a 0 at p0's largest component)
        other = wp.vec3d(one, one, one)
        big = 0
        if wp.abs(a0[1]) > wp.abs(a0[big]):
            big = 1
        if wp.abs(a0[2]) > wp.abs(a0[big]):
            big = 2
        other[big] = zero
        normal = wp.cross(a0, other)
    normal = normal / wp.max(wp.length(normal), _tiny())
    a1 = wp.cross(normal, a0)
    a1 = a1 / wp.max(wp.length(a1), _tiny())
    return wp.mat33d(a0[0], a0[1], a0[2], a1[0], a1[1], a1[2], zero, zero, zero)


@wp.func
def _wrap(
    x0: wp.vec3d,
    x1: wp.vec3d,
    center: wp.vec3d,
    rot: wp.mat33d,
    r: wp.float64,
    cylinder: int,
    side: wp.vec3d,
    has_side: int,
):
    """wrap.py's wrap for one row: (t0, t1, arc, wrapped), the tangent points in the world (x0, x1 and 0, 0 where
    nothing wraps)."""
    rt = wp.transpose(rot)
    p0 = rt * (x0 - center)
    p1 = rt * (x1 - center)
    ax = _plane_axes(p0, p1, cylinder)
    ax0 = wp.vec3d(ax[0, 0], ax[0, 1], ax[0, 2])
    ax1 = wp.vec3d(ax[1, 0], ax[1, 1], ax[1, 2])
    q0 = wp.vec2d(wp.dot(p0, ax0), wp.dot(p0, ax1))
    q1 = wp.vec2d(wp.dot(p1, ax0), wp.dot(p1, ax1))
    pnt = _no_wrap(q0, q1)
    if wp.length(p0) >= _tiny() and wp.length(p1) >= _tiny():
        if has_side == 0:
            pnt = _circle(q0, q1, r)
        else:
            s = rt * (side - center)
            if wp.length(s) < r:
                pnt = _inside(q0, q1, r)
            else:
                sd = wp.vec2d(wp.dot(s, ax0), wp.dot(s, ax1))
                n = wp.length(sd)
                if n < _tiny():
                    sd = wp.vec2d(r, wp.float64(0.0))  # a side site on the axis: any direction (MuJoCo's x)
                else:
                    sd = sd * (r / n)
                pnt = _homotopic(q0, q1, sd, r)
    length = pnt[4]
    if length < wp.float64(0.0):
        return x0, x1, wp.float64(0.0), 0
    r0 = pnt[0] * ax0 + pnt[1] * ax1
    r1 = pnt[2] * ax0 + pnt[3] * ax1
    if cylinder != 0:  # heights in proportion to the path length along the helix, the arc lengthened by its rise
        run0 = wp.sqrt((p0[0] - r0[0]) * (p0[0] - r0[0]) + (p0[1] - r0[1]) * (p0[1] - r0[1]))
        run1 = wp.sqrt((p1[0] - r1[0]) * (p1[0] - r1[0]) + (p1[1] - r1[1]) * (p1[1] - r1[1]))
        total = wp.max(run0 + length + run1, _tiny())
        rise = p1[2] - p0[2]
        r0[2] = p0[2] + rise * run0 / total
        r1[2] = p0[2] + rise * (run0 + length) / total
        length = wp.sqrt(length * length + (r1[2] - r0[2]) * (r1[2] - r0[2]))
    return center + rot * r0, center + rot * r1, length, 1


@wp.func
def link_frame(pose: wp.array2d(dtype=wp.transform), env: int, blk: int) -> tuple[wp.vec3d, wp.quatd]:
    """(position, rotation) of block link `blk` in float64; the world's identity for -1."""
    zero = wp.float64(0.0)
    if blk < 0:
        return wp.vec3d(zero, zero, zero), wp.quatd(zero, zero, zero, wp.float64(1.0))
    t = pose[env, blk]
    p = wp.transform_get_translation(t)
    q = wp.transform_get_rotation(t)
    return (
        wp.vec3d(wp.float64(p[0]), wp.float64(p[1]), wp.float64(p[2])),
        wp.quatd(wp.float64(q[0]), wp.float64(q[1]), wp.float64(q[2]), wp.float64(q[3])),
    )


@wp.func
def _world_point(pose: wp.array2d(dtype=wp.transform), env: int, blk: int, local: wp.vec3d) -> wp.vec3d:
    p, q = link_frame(pose, env, blk)
    return p + wp.quat_rotate(q, local)


@wp.func
def point_velocity(
    pose: wp.array2d(dtype=wp.transform),
    vel: wp.array2d(dtype=wp.spatial_vector),
    env: int,
    blk: int,
    com_local: wp.vec3d,
    x: wp.vec3d,
) -> wp.vec3d:
    """The velocity of world point x moving with block link `blk` (0 for the world): v at the COM + w x (x - COM)."""
    if blk < 0:
        return wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
    v = vel[env, blk]  # (linear at the COM, angular)
    lin = wp.vec3d(wp.float64(v[0]), wp.float64(v[1]), wp.float64(v[2]))
    ang = wp.vec3d(wp.float64(v[3]), wp.float64(v[4]), wp.float64(v[5]))
    return lin + wp.cross(ang, x - _world_point(pose, env, blk, com_local))


@wp.struct
class TendonTables:
    """A TendonSet's paths as device tables (K links, S sites, W wraps, N path steps, T tendons)."""

    link_block: wp.array(dtype=int)  # (K,) each link's column in its block's state
    com_local: wp.array(dtype=wp.vec3d)  # (K,) [m] each link's COM in its actor frame
    site_link: wp.array(dtype=int)  # (S,) the site's link (index into K), -1: the world
    site_pos: wp.array(dtype=wp.vec3d)  # (S,) [m] in the link's actor frame, or the world
    wrap_link: wp.array(dtype=int)  # (W,)
    wrap_pos: wp.array(dtype=wp.vec3d)  # (W,) [m] the geom's frame in the link's actor frame
    wrap_quat: wp.array(dtype=wp.quatd)  # (W,)
    wrap_radius: wp.array(dtype=wp.float64)  # (W,) [m]
    wrap_cylinder: wp.array(dtype=int)  # (W,) 1 for a cylinder (its axis the frame's z)
    wrap_side: wp.array(dtype=int)  # (W,) the side site, -1: none
    step_start: wp.array(dtype=int)  # (T + 1,) each tendon's path steps
    step_a: wp.array(dtype=int)  # (N,) the step's first site
    step_b: wp.array(dtype=int)  # (N,) its last site
    step_wrap: wp.array(dtype=int)  # (N,) the geom between them, -1: a straight segment
    step_scale: wp.array(dtype=wp.float64)  # (N,) 1 / the divisor of the pulley branch the step is on


@wp.func
def _block(tt: TendonTables, k: int) -> int:
    """Tendon link k's column in its block's state; -1 for the world (k < 0)."""
    if k < 0:
        return -1
    return tt.link_block[k]


@wp.func
def _com(tt: TendonTables, k: int) -> wp.vec3d:
    """Tendon link k's COM in its actor frame; the world's origin for k < 0."""
    if k < 0:
        return wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
    return tt.com_local[k]


@wp.kernel
def _evaluate(
    tt: TendonTables,
    pose: wp.array2d(dtype=wp.transform),
    vel: wp.array2d(dtype=wp.spatial_vector),
    num_tendons: int,
    length: wp.array2d(dtype=wp.float64),
    speed: wp.array2d(dtype=wp.float64),
    points: wp.array3d(dtype=wp.vec3d),
    wrapped: wp.array2d(dtype=int),
):
    """Each (env, tendon)'s length, speed and path points (evaluate_tendon)."""
    tid = wp.tid()
    evaluate_tendon(tt, pose, vel, tid // num_tendons, tid % num_tendons, length, speed, points, wrapped)


@wp.func
def evaluate_tendon(
    tt: TendonTables,
    pose: wp.array2d(dtype=wp.transform),
    vel: wp.array2d(dtype=wp.spatial_vector),
    env: int,
    t: int,
    length: wp.array2d(dtype=wp.float64),
    speed: wp.array2d(dtype=wp.float64),
    points: wp.array3d(dtype=wp.vec3d),
    wrapped: wp.array2d(dtype=int),
) -> None:
    """Tendon t's length [m] and speed [m/s] in env, and each of its path steps' points (x0, t0, t1, x1) with whether
    it wrapped, for apply_tendon."""
    total = wp.float64(0.0)
    rate = wp.float64(0.0)
    for s in range(tt.step_start[t], tt.step_start[t + 1]):
        a = tt.step_a[s]
        b = tt.step_b[s]
        ba = _block(tt, tt.site_link[a])
        bb = _block(tt, tt.site_link[b])
        xa = _world_point(pose, env, ba, tt.site_pos[a])
        xb = _world_point(pose, env, bb, tt.site_pos[b])
        va = point_velocity(pose, vel, env, ba, _com(tt, tt.site_link[a]), xa)
        vb = point_velocity(pose, vel, env, bb, _com(tt, tt.site_link[b]), xb)
        scale = tt.step_scale[s]
        w = tt.step_wrap[s]
        t0 = xb
        t1 = xa
        bent = 0
        arc = wp.float64(0.0)
        if w >= 0:
            bw = _block(tt, tt.wrap_link[w])
            p, q = link_frame(pose, env, bw)
            center = p + wp.quat_rotate(q, tt.wrap_pos[w])
            rot = wp.quat_to_matrix(wp.mul(q, tt.wrap_quat[w]))
            side = xa
            has_side = 0
            if tt.wrap_side[w] >= 0:
                ss = tt.wrap_side[w]
                side = _world_point(pose, env, _block(tt, tt.site_link[ss]), tt.site_pos[ss])
                has_side = 1
            t0, t1, arc, bent = _wrap(xa, xb, center, rot, tt.wrap_radius[w], tt.wrap_cylinder[w], side, has_side)
            if bent != 0:
                com = _com(tt, tt.wrap_link[w])
                d0 = t0 - xa
                d1 = xb - t1
                n0 = wp.length(d0)
                n1 = wp.length(d1)
                total += scale * (n0 + arc + n1)
                v0 = point_velocity(pose, vel, env, bw, com, t0)
                v1 = point_velocity(pose, vel, env, bw, com, t1)
                rate += scale * wp.dot(d0 / wp.max(n0, _tiny()), v0 - va)
                rate += scale * wp.dot(d1 / wp.max(n1, _tiny()), vb - v1)
        if bent == 0:
            d = xb - xa
            n = wp.length(d)
            total += scale * n
            rate += scale * wp.dot(d / wp.max(n, _tiny()), vb - va)
        points[env, s, 0] = xa
        points[env, s, 1] = t0
        points[env, s, 2] = t1
        points[env, s, 3] = xb
        wrapped[env, s] = bent
    length[env, t] = total
    speed[env, t] = rate


@wp.func
def _push(
    tt: TendonTables,
    pose: wp.array2d(dtype=wp.transform),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
    env: int,
    k: int,
    x: wp.vec3d,
    f: wp.vec3d,
):
    """Force f [N] at world point x on tendon link k (none on the world): its force and torque about the COM."""
    if k < 0:
        return
    zero = wp.float64(0.0)
    push(pose, link_force, link_torque, env, tt.link_block[k], tt.com_local[k], x, f, wp.vec3d(zero, zero, zero))


@wp.func
def push(
    pose: wp.array2d(dtype=wp.transform),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
    env: int,
    blk: int,
    com: wp.vec3d,
    x: wp.vec3d,
    f: wp.vec3d,
    tau: wp.vec3d,
) -> None:
    """Force f [N] at world point x and torque tau [N m] added (atomically) to block link `blk`'s force and torque
    about its COM (`com` in its actor frame); nothing for the world (blk < 0)."""
    if blk < 0:
        return
    t = tau + wp.cross(x - _world_point(pose, env, blk, com), f)
    wp.atomic_add(link_force, env, blk, wp.vec3(float(f[0]), float(f[1]), float(f[2])))
    wp.atomic_add(link_torque, env, blk, wp.vec3(float(t[0]), float(t[1]), float(t[2])))


@wp.func
def _pull(
    tt: TendonTables,
    pose: wp.array2d(dtype=wp.transform),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
    env: int,
    x0: wp.vec3d,
    k0: int,
    x1: wp.vec3d,
    k1: int,
    tension: wp.float64,
):
    """A straight piece from x0 (on link k0) to x1 (on k1) under `tension` (MuJoCo's sign): -f u at x0, +f u at x1."""
    d = x1 - x0
    f = d * (tension / wp.max(wp.length(d), _tiny()))
    _push(tt, pose, link_force, link_torque, env, k0, x0, -f)
    _push(tt, pose, link_force, link_torque, env, k1, x1, f)


@wp.kernel
def _apply(
    tt: TendonTables,
    pose: wp.array2d(dtype=wp.transform),
    num_tendons: int,
    force: wp.array2d(dtype=wp.float64),
    points: wp.array3d(dtype=wp.vec3d),
    wrapped: wp.array2d(dtype=int),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
):
    """Each (env, tendon)'s force added to the links' forces (apply_tendon)."""
    tid = wp.tid()
    apply_tendon(tt, pose, tid // num_tendons, tid % num_tendons, force, points, wrapped, link_force, link_torque)


@wp.func
def apply_tendon(
    tt: TendonTables,
    pose: wp.array2d(dtype=wp.transform),
    env: int,
    t: int,
    force: wp.array2d(dtype=wp.float64),
    points: wp.array3d(dtype=wp.vec3d),
    wrapped: wp.array2d(dtype=int),
    link_force: wp.array2d(dtype=wp.vec3),
    link_torque: wp.array2d(dtype=wp.vec3),
) -> None:
    """Tendon t's force [N] in env added to the links' forces as J^T f (module docstring), at the points of
    evaluate_tendon; a non-finite or float32-overflowing force is dropped (the env's state is reported by the
    scene)."""
    f = force[env, t]
    if not wp.isfinite(f) or wp.abs(f) > wp.float64(_LIMIT):
        return
    for s in range(tt.step_start[t], tt.step_start[t + 1]):
        tension = f * tt.step_scale[s]
        ka = tt.site_link[tt.step_a[s]]
        kb = tt.site_link[tt.step_b[s]]
        if wrapped[env, s] != 0:
            kw = tt.wrap_link[tt.step_wrap[s]]
            _pull(tt, pose, link_force, link_torque, env, points[env, s, 0], ka, points[env, s, 1], kw, tension)
            _pull(tt, pose, link_force, link_torque, env, points[env, s, 2], kw, points[env, s, 3], kb, tension)
        else:
            _pull(tt, pose, link_force, link_torque, env, points[env, s, 0], ka, points[env, s, 3], kb, tension)


class TendonKernels:
    """A TendonSet evaluated and applied on the device of the block that holds all its links (module docstring)."""

    def __init__(self, scene: Scene, tendons: TendonSet, block: Block):
        self._scene = scene
        self.num_envs = scene.num_envs
        self.block = block
        self._arts = list({id(lk.articulation): lk.articulation for lk in tendons.links}.values())
        dev = block.device
        ts = tendons
        nt = len(ts.tendons)
        ns = len(ts.site_pos)
        # the path steps by tendon: the straight segments (kind 0), then one step per wrap
        steps = [(int(ts.seg_tendon[i]), int(ts.seg_a[i]), int(ts.seg_b[i]), -1, float(ts.seg_scale[i]))
                 for i in range(len(ts.seg_a)) if ts.seg_kind[i] == 0]  # fmt: skip
        for w in range(len(ts.wrap_link)):
            a, b = ts.wrap_ends[w]
            steps.append((int(ts.wrap_tendon[w]), int(a), int(b), w, 1.0 / float(ts.wrap_divisor[w])))
        steps.sort(key=lambda x: x[0])
        assert all(max(x[1], x[2]) < ns for x in steps)  # straight segments join sites only
        start = np.searchsorted([x[0] for x in steps], np.arange(nt + 1)).astype(np.int32)
        world = len(ts.links)

        def link_or_world(k):
            return np.where(np.asarray(k) == world, -1, k).astype(np.int32)

        tt = TendonTables()
        arr = lambda a, dtype: wp.array(np.asarray(a), dtype=dtype, device=dev)  # noqa: E731
        tt.link_block = arr(np.array([block.link_index[id(lk)] for lk in ts.links] or [0], np.int32), int)
        tt.com_local = arr(ts.com_local[:-1].reshape(-1, 3) if len(ts.links) else np.zeros((1, 3)), wp.vec3d)
        tt.site_link = arr(link_or_world(ts.site_link), int)
        tt.site_pos = arr(ts.site_pos, wp.vec3d)
        nw = len(ts.wrap_link)
        tt.wrap_link = arr(link_or_world(ts.wrap_link) if nw else np.zeros(1, np.int32), int)
        tt.wrap_pos = arr(ts.wrap_pos if nw else np.zeros((1, 3)), wp.vec3d)
        tt.wrap_quat = arr(ts.wrap_quat if nw else np.array([[0.0, 0.0, 0.0, 1.0]]), wp.quatd)
        tt.wrap_radius = arr(ts.wrap_radius if nw else np.zeros(1), wp.float64)
        tt.wrap_cylinder = arr(ts.wrap_cylinder.astype(np.int32) if nw else np.zeros(1, np.int32), int)
        tt.wrap_side = arr(np.where(ts.wrap_has_side, ts.wrap_side, -1).astype(np.int32) if nw else [-1], int)
        tt.step_start = arr(start, int)
        tt.step_a = arr(np.array([x[1] for x in steps], np.int32), int)
        tt.step_b = arr(np.array([x[2] for x in steps], np.int32), int)
        tt.step_wrap = arr(np.array([x[3] for x in steps], np.int32), int)
        tt.step_scale = arr(np.array([x[4] for x in steps], float), wp.float64)
        self.tables = tt
        e = self.num_envs
        self.num_tendons = nt
        self.length = wp.zeros((e, nt), dtype=wp.float64, device=dev)
        self.speed = wp.zeros((e, nt), dtype=wp.float64, device=dev)
        self.force = wp.zeros((e, nt), dtype=wp.float64, device=dev)
        self.points = wp.zeros((e, max(len(steps), 1), 4), dtype=wp.vec3d, device=dev)
        self.wrapped = wp.zeros((e, max(len(steps), 1)), dtype=int, device=dev)
        self._cpu = dev.is_cpu
        self._length_np = self.length.numpy() if self._cpu else None  # NumPy views on the CPU: no copies
        self._speed_np = self.speed.numpy() if self._cpu else None
        self._force_np = self.force.numpy() if self._cpu else None
        self._launches = None  # (evaluate, apply), recorded at the first use (_recorded)

    def _recorded(self):
        """Both launches, recorded once (a struct of 15 arrays costs ~30 argument packings a launch otherwise)."""
        if self._launches is None:
            st, ctl, dev = self.block.state, self.block.control, self.block.device
            n = self.num_envs * self.num_tendons
            evaluate = wp.launch(
                _evaluate, n,
                [self.tables, st.link_pose, st.link_velocity, self.num_tendons, self.length, self.speed, self.points,
                 self.wrapped],
                device=dev, record_cmd=True,
            )  # fmt: skip
            apply = wp.launch(
                _apply, n,
                [self.tables, st.link_pose, self.num_tendons, self.force, self.points, self.wrapped, ctl.link_force,
                 ctl.link_torque],
                device=dev, record_cmd=True,
            )  # fmt: skip
            self._launches = (evaluate, apply)
        return self._launches

    def ensure_link_state(self) -> None:
        """The link poses and velocities of the scene's current state in the block's arrays (a host change made
        since the last step, as ArticulationView.ensure_link_state)."""
        for art in self._arts:
            self._scene.view(art).ensure_link_state()

    def evaluate(self) -> None:
        """The lengths and speeds (self.length, self.speed) and the points at the scene's current state."""
        self.ensure_link_state()
        self._recorded()[0].launch()

    def length_speed(self) -> tuple[np.ndarray, np.ndarray]:
        """(length (E, T) [m], speed (E, T) [m/s]) at the scene's current state; on the CPU, views that the next
        call overwrites."""
        self.evaluate()
        if self._cpu:
            return self._length_np, self._speed_np
        return self.length.numpy(), self.speed.numpy()

    def apply(self, force: np.ndarray) -> None:
        """Add tendon forces (E, T) [N] to the links' forces for the coming step, at the points of the last
        length_speed call."""
        if self._cpu:
            self._force_np[...] = force
        else:
            self.force.assign(np.asarray(force, np.float64))
        self.apply_tension()

    def apply_tension(self) -> None:
        """Add the tensions in self.force (E, T) [N] (written there on the device) to the links' forces."""
        self._recorded()[1].launch()
