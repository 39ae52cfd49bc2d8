"""An artic model rebuilt in PhysX 5 through SAPIEN, for benchmarks that compare the same model in both.

SAPIEN 3.0 reads URDF but not MJCF, so the benchmark models (loaded by artic from MJCF or URDF) are rebuilt link by
link with SAPIEN's articulation builder: joint frames, types and limits, masses, COM frames and principal inertias,
primitive shapes with their materials, collision groups and masks (SAPIEN's groups 0 and 1 follow the same rule,
(g_a & m_b) or (g_b & m_a)), drives, joint damping (a drive damping: PhysX 5.3 has no viscous joint friction),
armature, iteration counts; static actors become static SAPIEN actors. PhysX ignores parent-child link pairs only,
so artic's extra `disable_collision` pairs (an MJCF body and its parent across massless hinge chains) cannot be
mirrored: `self_collision=False` turns every link-link pair off instead.
"""

from __future__ import annotations

import warnings

import numpy as np

import artic
from artic import Axis, Box, Capsule, Cylinder, JointType, Motion, Plane, Sphere


def _pose(t):
    """A SAPIEN pose (quaternion w first) of an artic Transform (quaternion x, y, z, w)."""
    import sapien

    q = np.asarray(t.q, float)
    return sapien.Pose(np.asarray(t.p, float), [q[3], q[0], q[1], q[2]])


_TO_X = {  # rotations taking the joint frame's x axis onto the dof's axis (SAPIEN's joints act along x)
    Axis.TWIST: (0.0, 0.0, 0.0, 1.0),
    Axis.X: (0.0, 0.0, 0.0, 1.0),
    Axis.SWING1: (0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)),
    Axis.Y: (0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)),
    Axis.SWING2: (0.0, -np.sqrt(0.5), 0.0, np.sqrt(0.5)),
    Axis.Z: (0.0, -np.sqrt(0.5), 0.0, np.sqrt(0.5)),
}


def _add_shapes(builder, shapes, groups, pose_of):
    import sapien.physx as px

    for s in shapes:
        m = s.material
        mat = px.PhysxMaterial(m.static_friction, m.dynamic_friction, m.restitution)
        pose = _pose(pose_of(s))
        if isinstance(s, Sphere):
            builder.add_sphere_collision(pose, s.radius, mat)
        elif isinstance(s, Capsule):
            builder.add_capsule_collision(pose, s.radius, s.half_height, mat)
        elif isinstance(s, Cylinder):
            builder.add_cylinder_collision(pose, s.radius, s.half_height, mat)
        elif isinstance(s, Box):
            builder.add_box_collision(pose, tuple(s.half_extents), mat)
        elif isinstance(s, Plane):
            builder.add_plane_collision(pose, mat)
        else:
            raise NotImplementedError(f"shape {type(s).__name__} is not rebuilt in SAPIEN")
        groups.append((int(s.collision_group), int(s.collision_mask)))


def _set_groups(entity_shapes, groups):
    for shape, (g, m) in zip(entity_shapes, groups, strict=True):
        shape.set_collision_groups([g, m, 0, 0])


def physx_scene(
    art: artic.Articulation,
    statics,
    dt: float,
    gravity,
    solver=artic.SolverType.PGS,
    self_collision: bool = True,
    contact_offset: float = 0.02,
):
    """(SAPIEN scene, articulation) of `art` (built from its links' current settings) and the static actors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sapien
        import sapien.physx as px

        cfg = px.PhysxSceneConfig()
        cfg.enable_tgs = solver == artic.SolverType.TGS
        cfg.gravity = np.asarray(gravity, dtype=float)
        px.set_scene_config(cfg)
        shape_cfg = px.PhysxShapeConfig()
        shape_cfg.contact_offset = contact_offset
        shape_cfg.rest_offset = 0.0
        px.set_shape_config(shape_cfg)
        scene = sapien.Scene([px.PhysxCpuSystem()])
    scene.set_timestep(dt)
    builder = scene.create_articulation_builder()
    link_builders, link_groups, joints = {}, {}, []
    for link in art.get_links():
        lb = builder.create_link_builder(link_builders[link.parent.name] if link.parent is not None else None)
        lb.set_name(link.name)
        if link.parent is not None:
            j = link.inbound_joint
            jt = j.get_joint_type()
            if jt == JointType.FIX:
                lb.set_joint_properties("fixed", [], _pose(j.parent_pose), _pose(j.child_pose))
            elif jt in (JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED, JointType.PRISMATIC):
                ax = j.dof_axes()[0]
                turn = artic.Transform(q=_TO_X[ax])
                kind = "prismatic" if jt == JointType.PRISMATIC else "revolute"
                if j.get_motion(ax) == Motion.LIMITED:
                    lim = j.get_limit_params(ax)
                    limits = [[lim.low, lim.high]]
                else:
                    limits = [[-np.inf, np.inf]]
                    kind = "revolute_unwrapped" if kind == "revolute" else kind
                lb.set_joint_name(j.name)  # damping goes into the drive below
                lb.set_joint_properties(kind, limits, _pose(j.parent_pose * turn), _pose(j.child_pose * turn))
                joints.append((link.name, j, ax))
            else:
                raise NotImplementedError(f"joint type {jt.name} is not rebuilt in SAPIEN")
        lb.set_mass_and_inertia(link.mass, _pose(link.cmass_local_pose), np.asarray(link.inertia, float))
        groups = link_groups[link.name] = []
        _add_shapes(lb, link.shapes, groups, lambda s: s.local_pose)
        link_builders[link.name] = lb
    robot = builder.build(fix_root_link=art.fix_base)
    robot.set_pose(_pose(art.root.initial_pose))
    for link in robot.links:
        groups = link_groups[link.name]
        if not self_collision:
            groups = [(g, m & ~g) for g, m in groups]
        _set_groups(link.collision_shapes, groups)
    it = art.get_solver_iteration_counts()
    robot.set_solver_position_iterations(it[0])
    robot.set_solver_velocity_iterations(it[1])
    robot.set_sleep_threshold(0.0)  # measure the solver, not sleeping bodies
    by_name = {jt.name: jt for jt in robot.active_joints}
    for _name, j, ax in joints:
        pj = by_name[j.name]
        d = j.get_drive_params(ax)
        damping = j.get_friction_params(ax).viscous_friction_coefficient + d.damping
        if d.stiffness > 0.0 or damping > 0.0:
            pj.set_drive_properties(d.stiffness, damping, d.max_force if d.max_force > 0 else 1e10, "force")
            pj.set_drive_target(j.get_drive_target(ax))
        pj.set_armature(np.array([j.get_armature(ax)]))
    for actor in statics:
        sb = scene.create_actor_builder()
        groups = []
        _add_shapes(sb, actor.shapes, groups, lambda s, a=actor: a.pose * s.local_pose)
        entity = sb.build_static(name=actor.name)
        comp = entity.find_component_by_type(px.PhysxRigidStaticComponent)
        _set_groups(comp.collision_shapes, groups)
    return scene, robot
