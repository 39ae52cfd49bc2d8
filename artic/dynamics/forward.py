"""Inputs of the unconstrained forward dynamics of a step, as PhysX forms them (physx-notes 3.2, 3.5, 9.1).

* Velocity pre-scale: if any |qdot_d| exceeds its max joint velocity, all joint velocities are scaled by the one
  ratio min(max_d / |qdot_d|), keeping the direction of motion in joint space.
* Link damping and max velocities act as forces before the solver: with d' = min(d, 1/dt) and the excess ratio
  s = 1 - v_max/|v| (0 below the cap), the applied COM force is (1 - d' dt)(m g + F_user) - m (d' + s/dt) v and the
  torque (1 - d' dt) tau_user - I_w (d' + s/dt) w: gravity and user forces are damped too, and the excess speed is
  removed in one step.
"""

from __future__ import annotations

import warp as wp

from ..core.model import DofParams, Tree


@wp.func
def prescale_joint_velocities(tree: Tree, dp: DofParams, gen_v: wp.array2d(dtype=float), env: int, n: int) -> None:
    for t in range(tree.tree_count):  # one ratio per articulation
        d0 = tree.joint_dof_start[tree.tree_root[t]]
        d1 = n
        if t + 1 < tree.tree_count:
            d1 = tree.joint_dof_start[tree.tree_root[t + 1]]
        ratio = float(1.0)
        for d in range(d0, d1):
            v = wp.abs(gen_v[env, tree.dof_gen[d]])
            if v > dp.dof_max_velocity[d]:
                ratio = wp.min(ratio, dp.dof_max_velocity[d] / v)
        if ratio < 1.0:
            for d in range(d0, d1):
                gen_v[env, tree.dof_gen[d]] = gen_v[env, tree.dof_gen[d]] * ratio


@wp.func
def rotational_inertia_times(tree: Tree, link_rot: wp.quat, i: int, w: wp.vec3) -> wp.vec3:
    """I_w w for link i: its principal moments applied in the world axes of its principal frame."""
    q = link_rot * tree.link_com_rot[i]
    local = wp.quat_rotate_inv(q, w)
    return wp.quat_rotate(q, wp.cw_mul(tree.link_principal_inertia[i], local))


@wp.func
def applied_link_wrench(
    tree: Tree,
    dp: DofParams,
    i: int,
    link_rot: wp.quat,
    com_velocity: wp.spatial_vector,
    user_force: wp.vec3,
    user_torque: wp.vec3,
    gravity: wp.vec3,
    dt: float,
) -> wp.spatial_vector:
    """(force, torque) at link i's COM this step: gravity and user forces, damping and max-velocity terms."""
    m = tree.link_mass[i]
    v = wp.spatial_top(com_velocity)
    w = wp.spatial_bottom(com_velocity)
    lin_d = wp.min(dp.link_linear_damping[i], 1.0 / dt)
    ang_d = wp.min(dp.link_angular_damping[i], 1.0 / dt)
    lin_s = float(0.0)
    speed = wp.length(v)
    if speed > dp.link_max_linear_velocity[i]:
        lin_s = 1.0 - dp.link_max_linear_velocity[i] / speed
    ang_s = float(0.0)
    spin = wp.length(w)
    if spin > dp.link_max_angular_velocity[i]:
        ang_s = 1.0 - dp.link_max_angular_velocity[i] / spin
    weight = m * dp.link_gravity_scale[i] * gravity
    force = (1.0 - lin_d * dt) * (weight + user_force) - m * (lin_d + lin_s / dt) * v
    torque = (1.0 - ang_d * dt) * user_torque - (ang_d + ang_s / dt) * rotational_inertia_times(tree, link_rot, i, w)
    medium = dp.link_fluid[i]
    if medium[0] > 0.0 or medium[1] > 0.0:
        drag = fluid_wrench(link_rot * tree.link_com_rot[i], v - dp.link_wind[i], w, dp.link_fluid_box[i], medium)
        force += wp.spatial_top(drag)
        torque += wp.spatial_bottom(drag)
    return wp.spatial_vector(force, torque)


@wp.func
def fluid_wrench(frame: wp.quat, v: wp.vec3, w: wp.vec3, box: wp.vec3, medium: wp.vec3) -> wp.spatial_vector:
    """(force, torque) of MuJoCo's inertia-box fluid model (description/fluid.py) on a link whose principal frame
    is `frame`, moving at v relative to the medium and turning at w (world), of inertia-box sides `box`, in a
    medium of density medium[0] and viscosity medium[1]."""
    lv = wp.quat_rotate_inv(frame, v)
    lw = wp.quat_rotate_inv(frame, w)
    d = (box[0] + box[1] + box[2]) / 3.0
    f = lv * (-3.0 * wp.pi * medium[1] * d)
    t = lw * (-wp.pi * medium[1] * d * d * d)
    area = wp.vec3(box[1] * box[2], box[0] * box[2], box[0] * box[1])
    arm = wp.vec3(
        box[0] * (box[1] * box[1] * box[1] * box[1] + box[2] * box[2] * box[2] * box[2]),
        box[1] * (box[0] * box[0] * box[0] * box[0] + box[2] * box[2] * box[2] * box[2]),
        box[2] * (box[0] * box[0] * box[0] * box[0] + box[1] * box[1] * box[1] * box[1]),
    )
    for k in range(3):
        f[k] = f[k] - 0.5 * medium[0] * area[k] * wp.abs(lv[k]) * lv[k]
        t[k] = t[k] - medium[0] * arm[k] * wp.abs(lw[k]) * lw[k] / 64.0
    return wp.spatial_vector(wp.quat_rotate(frame, f), wp.quat_rotate(frame, t))
