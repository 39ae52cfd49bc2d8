"""`Scene`: the envs, gravity and device, and the articulations and rigid actors replicated over the envs.

Adding an articulation validates it and builds its device arrays (Model, State, Control, Data) for all envs; from
then on its topology is frozen (PhysX: remove, change, re-add). Parameter changes made through the description
(masses, frames, armature) are re-uploaded; state set through the description (joint positions, root pose) is
written to every env. Per-env state goes through the articulation cache.

Articulations whose shapes can touch are stepped together in one block (block.py); the scene regroups them when an
articulation is added or removed, carrying every env's state over. Arrays taken from `scene.view(art)` belong to
the current grouping: take them again after adding or removing an articulation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import warp as wp

from .description.actors import RigidDynamic, RigidStatic
from .block import Block, collision_groups, merge_wake_state, restore_view_arrays, view_arrays
from .description.articulation import Articulation
from .cache import CacheFlag
from .errors import StateError, TopologyError, ValidationError
from .step import SolverType
from .view import ArticulationView


@dataclass
class ContactReport:
    """The contacts of one articulation or rigid body after the last step (E envs, C slots; entries past count[e]
    are stale). Forces are what link a received over the step, world frame, applied at the point."""

    count: np.ndarray  # (E,) int
    link_a: np.ndarray  # (E, C) int: the body's link (low-level order), pushed along +normal
    link_b: np.ndarray  # (E, C) int: the other link (in its own articulation), -1 for a static shape
    articulation_b: np.ndarray  # (E, C) int: the other link's articulation (index in scene.articulations), -1 static
    shape_a: list  # per geometry index: the Shape objects (index with shape_index_a and shape_index_b)
    shape_index_a: np.ndarray  # (E, C) int
    shape_index_b: np.ndarray  # (E, C) int
    point: np.ndarray  # (E, C, 3) [m]
    normal: np.ndarray  # (E, C, 3) unit, from the other body towards a
    separation: np.ndarray  # (E, C) [m], negative when penetrating
    force: np.ndarray  # (E, C, 3) [N]: on the body's link
    overflow: np.ndarray  # (E,) contacts dropped for lack of slots in the last step (the body's whole block)

    def total_force(self) -> np.ndarray:
        """(E, 3) sum of the contact forces on the body, per env [N]."""
        mask = np.arange(self.force.shape[1])[None, :] < self.count[:, None]
        return (self.force * mask[..., None]).sum(axis=1)


class Scene:
    def __init__(self, num_envs: int = 1, gravity=(0.0, 0.0, -9.81), device=None, solver_type=SolverType.PGS,
                 contact_capacity: int = 512, friction_correlation_distance: float = 0.025):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValidationError(f"scene: num_envs must be a positive integer, got {num_envs!r}")
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValidationError(f"scene: gravity must be 3 finite numbers, got {gravity!r}")
        wp.init()
        try:
            self.device = wp.get_device(device)
        except (RuntimeError, ValueError) as e:
            raise ValidationError(f"scene: unknown device {device!r} ({e}); use None, 'cpu' or 'cuda:0'") from None
        try:
            self.solver_type = SolverType(solver_type)
        except ValueError:
            raise ValidationError(
                f"scene: unknown solver_type {solver_type!r}; use artic.SolverType.PGS or TGS") from None
        if isinstance(contact_capacity, bool) or not isinstance(contact_capacity, (int, np.integer)) \
                or contact_capacity < 1:
            raise ValidationError(f"scene: contact_capacity must be a positive integer, got {contact_capacity!r}")
        self.contact_capacity = int(contact_capacity)  # most contact slots per articulation per env
        try:
            corr = float(friction_correlation_distance)
        except (TypeError, ValueError):
            corr = float("nan")
        if not np.isfinite(corr) or corr <= 0.0:
            raise ValidationError(f"scene: friction_correlation_distance must be a positive length in metres, got "
                                  f"{friction_correlation_distance!r}")
        # PxSceneDesc::frictionCorrelationDistance: contacts of a patch closer than this share one friction anchor
        self.friction_correlation_distance = corr  # [m]
        self.num_envs = int(num_envs)
        self.gravity = tuple(g)
        self.time = 0.0
        self._views: dict[int, ArticulationView] = {}
        self._blocks: list[Block] = []
        self.articulations: list[Articulation] = []
        self.statics: list[RigidStatic] = []
        self._overflow_warned = False

    def __repr__(self):
        return (f"Scene(num_envs={self.num_envs}, articulations={len(self.articulations)}, "
                f"solver={self.solver_type.name}, device='{self.device}')")

    def add_articulation(self, art: Articulation):
        """Validate `art`, freeze its topology and build its arrays for every env."""
        if not isinstance(art, Articulation):
            raise ValidationError(f"scene: add_articulation takes an artic.Articulation, got {type(art).__name__}")
        if art._scene is not None:
            raise TopologyError(f"articulation '{art.name}' is already in a scene; remove it first")
        art.validate()
        for link in art.get_links():
            for shape in link.shapes:
                shape.check_contact_params()
        view = ArticulationView(art, self._new_block([art]))
        view.write_description()
        art._scene = self
        self._views[id(art)] = view
        self.articulations.append(art)
        self._regroup()
        return art

    def _new_block(self, arts) -> Block:
        return Block(arts, self.num_envs, self.gravity, self.device, self.statics, self.contact_capacity,
                     self.friction_correlation_distance)

    def _regroup(self):
        """Group the articulations into blocks (those whose shapes can touch share one) and move every env's state
        of a regrouped articulation into its new block."""
        groups = collision_groups(self.articulations)
        current = {tuple(id(a) for a in v.block.arts): v.block for v in self._views.values()}
        blocks = []
        for group in groups:
            block = current.get(tuple(id(a) for a in group))
            if block is None:
                views = [self._views[id(a)] for a in group]
                saved = [view_arrays(v) for v in views]
                block = self._new_block(group)
                for v, arrays in zip(views, saved):
                    v.bind(block)
                    restore_view_arrays(v, arrays)
                merge_wake_state(block, saved)
            blocks.append(block)
        self._blocks = blocks

    def add_actor(self, actor):
        """Add a RigidStatic (its shapes collide with every articulation and body, in every env) or a RigidDynamic
        (simulated as a one-link floating articulation, see description/actors.py)."""
        if isinstance(actor, RigidDynamic):
            self.add_articulation(actor.articulation)
            return actor
        if not isinstance(actor, RigidStatic):
            raise ValidationError(f"scene: add_actor takes a RigidStatic or RigidDynamic, got {type(actor).__name__}")
        if actor._scene is not None:
            raise TopologyError(f"static actor '{actor.name}' is already in a scene")
        actor._scene = self
        self.statics.append(actor)
        self._statics_changed()
        return actor

    def remove_actor(self, actor):
        if isinstance(actor, RigidDynamic):
            self.remove_articulation(actor.articulation)
            return
        if actor not in self.statics:
            raise StateError(f"actor '{getattr(actor, 'name', actor)}' is not in this scene")
        self.statics.remove(actor)
        actor._scene = None
        self._statics_changed()

    def _statics_changed(self):
        for block in self._blocks:
            block.on_statics_changed()
        for view in self._views.values():
            view.wake(np.ones(self.num_envs, bool))

    def step(self, dt: float):
        """Advance every articulation of every env by dt seconds (one fused kernel launch per block)."""
        try:
            dt = float(dt)
        except (TypeError, ValueError):
            raise ValidationError(f"scene: dt must be a number, got {dt!r}") from None
        if not np.isfinite(dt) or dt <= 0.0:
            raise ValidationError(f"scene: dt must be a positive finite number of seconds, got {dt}")
        for block in self._blocks:
            block.step(dt, self.solver_type)
        for view in self._views.values():
            view.after_step()
        self.time += dt
        if self.device.is_cpu and not self._overflow_warned:  # cheap on the CPU; a GPU checks on get_contacts
            self._check_overflow()

    def _check_overflow(self):
        for block in self._blocks:
            dropped = block.contact_overflow()
            if dropped is not None and dropped.any() and not self._overflow_warned:
                self._overflow_warned = True
                names = ", ".join(f"'{a.name}'" for a in block.arts)
                warnings.warn(f"scene: articulation(s) {names} produced more contacts than their "
                              f"{block.contacts().link_a.shape[1]} slots in {int((dropped > 0).sum())} env(s); "
                              "the extra contacts were dropped. Raise Scene(contact_capacity=...)",
                              RuntimeWarning, stacklevel=3)

    def get_contacts(self, obj) -> ContactReport:
        """The contacts of an articulation or RigidDynamic after the last step."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        report = self.view(art).contact_report(self.articulations)
        if report.overflow.any() and not self._overflow_warned:
            self._check_overflow()
        return report

    # -- rigid-body state as arrays ---------------------------------------------------------------------------------
    def _body_cache(self, body, flags):
        if not isinstance(body, RigidDynamic):
            raise ValidationError(f"scene: expected a RigidDynamic, got {type(body).__name__}")
        cache = body.articulation.create_cache()
        body.articulation.copy_internal_state_to_cache(cache, flags)
        return cache

    def get_actor_pose(self, body) -> np.ndarray:
        """(E, 7) actor poses (px, py, pz, qx, qy, qz, qw) of a RigidDynamic."""
        return self._body_cache(body, CacheFlag.ROOT_TRANSFORM).root_transform.copy()

    def set_actor_pose(self, body, poses):
        cache = self._body_cache(body, CacheFlag.ROOT_TRANSFORM)
        cache.root_transform[:] = _shaped(poses, cache.root_transform.shape, f"rigid body '{body.name}' poses")
        body.articulation.apply_cache(cache, CacheFlag.ROOT_TRANSFORM)

    def get_actor_velocity(self, body) -> np.ndarray:
        """(E, 6) COM linear [m/s] then angular [rad/s] velocities, world."""
        c = self._body_cache(body, CacheFlag.ROOT_VELOCITIES)
        return np.concatenate([c.root_linear_velocity, c.root_angular_velocity], axis=1)

    def set_actor_velocity(self, body, velocities):
        cache = self._body_cache(body, CacheFlag.ROOT_VELOCITIES)
        v = _shaped(velocities, (self.num_envs, 6), f"rigid body '{body.name}' velocities")
        cache.root_linear_velocity[:] = v[:, :3]
        cache.root_angular_velocity[:] = v[:, 3:]
        body.articulation.apply_cache(cache, CacheFlag.ROOT_VELOCITIES)

    def set_kinematic_target(self, body, poses):
        """Move a kinematic RigidDynamic to `poses` ((E, 7) or (7,): px, py, pz, qx, qy, qz, qw) over the next
        step (PxRigidDynamic::setKinematicTarget): it moves at the velocity that reaches them in dt, pushing the
        bodies it meets; without a new target it stops there."""
        if not isinstance(body, RigidDynamic) or not body.kinematic:
            raise ValidationError(f"scene: set_kinematic_target needs a RigidDynamic with kinematic = True, got "
                                  f"{body!r}")
        p = np.array(_shaped(poses, (self.num_envs, 7), f"rigid body '{body.name}' kinematic targets"))
        norm = np.linalg.norm(p[:, 3:], axis=1)
        if np.any(norm < 1e-6):
            raise ValidationError(f"rigid body '{body.name}' kinematic targets: quaternions (qx, qy, qz, qw) must "
                                  "not be zero")
        p[:, 3:] /= norm[:, None]
        view = self.view(body.articulation)
        view.control.kinematic_target.assign(p.reshape(self.num_envs, 1, 7))
        view.control.kinematic_pending.fill_(1)
        view.wake(np.ones(self.num_envs, bool))

    def get_link_poses(self, obj) -> np.ndarray:
        """(E, L, 7) world poses (px, py, pz, qx, qy, qz, qw) of an articulation's links, in link order
        (PxArticulationLink::getGlobalPose for every link and env)."""
        art = obj.articulation if isinstance(obj, RigidDynamic) else obj
        view = self.view(art)
        view.ensure_kinematics()
        return view.state.link_pose.numpy().copy()

    def remove_articulation(self, art: Articulation):
        if isinstance(art, RigidDynamic):
            art = art.articulation
        if art._scene is not self:
            raise StateError(f"articulation '{art.name}' is not in this scene")
        del self._views[id(art)]
        self.articulations.remove(art)
        art._scene = None
        self._regroup()

    def view(self, art: Articulation) -> ArticulationView:
        """The device blocks (model, state, control, data) of an articulation in this scene."""
        try:
            return self._views[id(art)]
        except KeyError:
            raise StateError(f"articulation '{art.name}' is not in this scene") from None

    # -- forwarded from Articulation ------------------------------------------------------------------------------
    def _on_description_changed(self, art, what):
        if what == "topology":
            raise TopologyError(f"articulation '{art.name}' is in a scene; remove it before changing its topology")
        self.view(art).on_description_changed(what)

    def _create_cache(self, art):
        return self.view(art).create_cache()

    def _copy_internal_state_to_cache(self, art, cache, flags):
        self.view(art).copy_internal_state_to_cache(cache, flags)

    def _apply_cache(self, art, cache, flags):
        self.view(art).apply_cache(cache, flags)

    def _common_init(self, art):
        self.view(art).common_init()

    def _inverse_dynamics(self, art):
        return self.view(art)


def _shaped(values, shape, what: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float32)
    if a.shape == shape[1:]:
        a = np.broadcast_to(a, shape)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ValidationError(f"{what}: expected finite values of shape {shape} or {shape[1:]}, got {a.shape}")
    return a
