"""`ArticulationView`: one articulation's device blocks in a scene, its cache I/O and its inverse dynamics.

The PhysX calls on `Articulation` (apply_cache, compute_mass_matrix, ...) land here. Positions come from the
articulation's state (set them with apply_cache), velocity-dependent functions read velocities from the cache, as
the PhysX guide prescribes ("Inverse Dynamics"). Each function is a fixed sequence of kernel launches over all envs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..description.articulation import Articulation
from ..description.validate import MAX_MAGNITUDE
from ..dynamics.aba import aba
from ..dynamics.centroidal import articulation_com, centroidal_momentum
from ..dynamics.crba import crba
from ..dynamics.jacobian import dense_jacobian
from ..dynamics.kinematics import forward_kinematics, link_velocities
from ..dynamics.rnea import rnea
from ..enums import CacheFlag, JointType
from ..errors import StateError, ValidationError
from .builders.arrays import build_data, write_description_state, write_description_targets
from .builders.model import build_model, refresh_model
from .cache import ArticulationCache, cache_flags
from .memory import allocation_errors
from .status import refresh_status

if TYPE_CHECKING:
    from .block import Block

_ZERO_G = (0.0, 0.0, 0.0)
_STATE_FLAGS = CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES


class ArticulationView:
    def __init__(self, art: Articulation, block: Block):
        self.art = art
        self.num_envs = block.num_envs
        self.gravity = block.gravity
        self.device = block.device
        with allocation_errors(f"articulation '{art.name}'", self.num_envs):
            self.model = build_model(art, self.device)
            self.data = build_data(self.model, self.num_envs, self.device)
        self._revolute_dofs, self._spherical_dofs = self._position_ranges()
        self._model_dirty = False  # description parameters changed since the model was uploaded
        self.bind(block)

    def bind(self, block: Block) -> None:
        """Read and write this articulation's columns of `block` (on adding, and when the scene regroups)."""
        self.block = block
        self.state, self.control, outputs = block.views(self.art)
        for name, arr in outputs.items():
            setattr(self.data, name, arr)
        self._positions_valid = False  # link poses and Data's shared per-env quantities follow the state
        self._velocities_valid = False  # link velocities follow the state
        self._links_fresh = False  # the state's link poses and velocities follow its joint state (a step's)

    def write_description(self) -> None:
        """Start from the description: its joint state, root pose, drive targets and wake counter, in every env."""
        write_description_state(self.state, self.art)
        write_description_targets(self.control, self.art)
        self.state.wake_counter.fill_(self.art.wake_counter)

    def _position_ranges(self):
        topo = self.art._topology()
        rev, sph = [], []
        for i, link in enumerate(topo.links):
            j = link.inbound_joint
            if j is None:
                continue
            dofs = range(topo.dof_start[i], topo.dof_start[i] + len(topo.dof_axes[i]))
            if j.get_joint_type() == JointType.REVOLUTE:
                rev.extend(dofs)
            elif j.get_joint_type() == JointType.SPHERICAL:
                sph.extend(dofs)
        return np.array(rev, int), np.array(sph, int)

    # -- description changes --------------------------------------------------------------------------------------
    def on_description_changed(self, what: str, part: tuple[str, int | None] | None = None) -> None:
        """A description setter ran: re-upload the model, or rewrite state or targets from the description in every
        env (only `part`'s field and dof column when given, so per-env values set through the cache elsewhere stay)."""
        if what == "model":
            self._model_dirty = True  # re-uploaded once, before the next computation
            self.block.mark_dirty()
        elif what == "state":
            write_description_state(self.state, self.art, part)
            refresh_status(self.block)
            self.wake(np.ones(self.num_envs, bool))
        elif what == "control":
            write_description_targets(self.control, self.art, part)
            self.wake(np.ones(self.num_envs, bool))
        self._positions_valid = self._velocities_valid = self._links_fresh = False

    def _sync_model(self):
        if self._model_dirty:
            refresh_model(self.model, self.art)
            self._model_dirty = False

    def update_kinematics(self) -> None:
        self._sync_model()
        forward_kinematics(self.model, self.state, self.data)
        self._positions_valid = True
        self._velocities_valid = self._links_fresh = False

    def ensure_kinematics(self) -> None:
        if not self._positions_valid:
            self.update_kinematics()

    def ensure_velocities(self) -> None:
        self.ensure_kinematics()
        if not self._velocities_valid:
            link_velocities(self.model, self.state, self.data)
            self._velocities_valid = True
        self._links_fresh = True

    def ensure_link_state(self) -> None:
        """The state's link poses and velocities as the joint state gives them, without Data: a step leaves them so
        (it writes them at its end), and then this costs nothing (MJCF's spatial tendons read them before every
        step: the kinematics launches were most of a muscle model's step)."""
        if not self._links_fresh:
            self.ensure_velocities()

    # -- simulation -----------------------------------------------------------------------------------------------
    def after_step(self, links_written: bool = True) -> None:
        """After a step: it wrote link poses and velocities into the state (`links_written`), but this view's own
        Data (O, inertias, motion columns for inverse dynamics) is recomputed when next asked for."""
        self._positions_valid = self._velocities_valid = False
        self._links_fresh = links_written

    def wake(self, envs: np.ndarray) -> None:
        """Wake the envs where `envs` is True (PhysX: on non-zero velocities or forces, or targets set)."""
        self.block.wake(envs)

    def is_sleeping(self) -> np.ndarray:
        return self.state.sleeping.numpy().astype(bool)

    # -- cache ----------------------------------------------------------------------------------------------------
    def create_cache(self) -> ArticulationCache:
        return ArticulationCache(
            self.art, self.num_envs, self.model.link_count, self.model.dof_count, self.model.floating
        )

    def _check_cache(self, cache):
        if not isinstance(cache, ArticulationCache) or cache.articulation is not self.art:
            raise ValidationError(
                f"articulation '{self.art.name}': the cache was not created by this articulation; "
                "use art.create_cache()"
            )
        if cache.num_envs != self.num_envs:  # a cache from before the articulation moved to another scene
            raise ValidationError(
                f"articulation '{self.art.name}': the cache was created for {cache.num_envs} envs "
                f"but its scene has {self.num_envs}; take a new one with art.create_cache()"
            )

    def copy_internal_state_to_cache(self, cache: ArticulationCache, flags: CacheFlag | int) -> None:
        self._check_cache(cache)
        flags = cache_flags(f"articulation '{self.art.name}'", flags)
        s, c, d = self.state, self.control, self.data
        if flags & CacheFlag.LINK_VELOCITY:
            self.ensure_velocities()
        if flags & CacheFlag.POSITION:
            cache.checked_output("joint_position")[:] = s.joint_q.numpy()
        if flags & CacheFlag.VELOCITY:
            cache.checked_output("joint_velocity")[:] = s.joint_qd.numpy()
        if flags & CacheFlag.ACCELERATION:
            cache.checked_output("joint_acceleration")[:] = d.joint_acceleration.numpy()
        if flags & CacheFlag.FORCE:
            cache.checked_output("joint_force")[:] = c.joint_force.numpy()
        if flags & CacheFlag.JOINT_TARGET_POSITIONS:
            cache.checked_output("joint_target_positions")[:] = c.joint_target_position.numpy()
        if flags & CacheFlag.JOINT_TARGET_VELOCITIES:
            cache.checked_output("joint_target_velocities")[:] = c.joint_target_velocity.numpy()
        if flags & CacheFlag.ROOT_TRANSFORM:
            cache.checked_output("root_transform")[:] = s.root_pose.numpy()[:, 0]
        if flags & CacheFlag.ROOT_VELOCITIES:
            cache.checked_output("root_linear_velocity")[:] = s.root_lin_vel.numpy()[:, 0]
            cache.checked_output("root_angular_velocity")[:] = s.root_ang_vel.numpy()[:, 0]
            acc = d.link_acceleration.numpy()[:, 0]
            cache.checked_output("root_linear_acceleration")[:] = acc[:, :3]
            cache.checked_output("root_angular_acceleration")[:] = acc[:, 3:]
        if flags & CacheFlag.LINK_VELOCITY:
            cache.checked_output("link_velocity")[:] = s.link_velocity.numpy()
        if flags & CacheFlag.LINK_ACCELERATION:
            cache.checked_output("link_acceleration")[:] = d.link_acceleration.numpy()
        if flags & CacheFlag.LINK_INCOMING_JOINT_FORCE:
            cache.checked_output("link_incoming_joint_force")[:] = d.link_incoming_joint_force.numpy()
        if flags & CacheFlag.LINK_FORCE:
            cache.checked_output("link_force")[:] = c.link_force.numpy()
        if flags & CacheFlag.LINK_TORQUE:
            cache.checked_output("link_torque")[:] = c.link_torque.numpy()

    # cache fields each apply_cache flag reads
    _APPLIED = (
        (CacheFlag.POSITION, ("joint_position",)),
        (CacheFlag.VELOCITY, ("joint_velocity",)),
        (CacheFlag.ROOT_TRANSFORM, ("root_transform",)),
        (CacheFlag.ROOT_VELOCITIES, ("root_linear_velocity", "root_angular_velocity")),
        (CacheFlag.FORCE, ("joint_force",)),
        (CacheFlag.JOINT_TARGET_POSITIONS, ("joint_target_positions",)),
        (CacheFlag.JOINT_TARGET_VELOCITIES, ("joint_target_velocities",)),
        (CacheFlag.LINK_FORCE, ("link_force",)),
        (CacheFlag.LINK_TORQUE, ("link_torque",)),
    )

    def apply_cache(self, cache: ArticulationCache, flags: CacheFlag | int) -> None:
        self._check_cache(cache)
        name = self.art.name
        flags = cache_flags(f"articulation '{name}'", flags)
        # every field is checked before any is written, so a refused call changes nothing
        v = {f: cache.checked_input(f) for flag, fields in self._APPLIED if flags & flag for f in fields}
        s, c = self.state, self.control
        if flags & CacheFlag.POSITION:
            q = v["joint_position"]
            if self._revolute_dofs.size and np.abs(q[:, self._revolute_dofs]).max() > 2 * np.pi + 1e-6:
                raise ValidationError(
                    f"articulation '{name}': REVOLUTE joint positions must lie in [-2pi, 2pi]; "
                    "use REVOLUTE_UNWRAPPED for unbounded angles"
                )
            if self._spherical_dofs.size and np.abs(q[:, self._spherical_dofs]).max() > np.pi + 1e-6:
                raise ValidationError(f"articulation '{name}': SPHERICAL joint positions must lie in [-pi, pi]")
        if flags & CacheFlag.ROOT_TRANSFORM:
            x = v["root_transform"]
            norms = np.linalg.norm(x[:, 3:], axis=1)
            if np.any(np.abs(norms - 1.0) > 1e-3):
                raise ValidationError(
                    f"articulation '{name}': cache.root_transform quaternions (x, y, z, w) must "
                    f"be unit length; got norms {norms[np.abs(norms - 1) > 1e-3][:3]}"
                )
            x[:, 3:] /= norms[:, None]
        targets = {
            "joint_position": s.joint_q,
            "joint_velocity": s.joint_qd,
            "joint_force": c.joint_force,
            "joint_target_positions": c.joint_target_position,
            "joint_target_velocities": c.joint_target_velocity,
            "link_force": c.link_force,
            "link_torque": c.link_torque,
        }
        roots = {
            "root_transform": s.root_pose,
            "root_linear_velocity": s.root_lin_vel,
            "root_angular_velocity": s.root_ang_vel,
        }  # (E, 1, k) device arrays
        for f, a in v.items():
            if f in roots:
                roots[f].assign(a[:, None])
            else:
                targets[f].assign(a)
        self.wake(self._wake_mask(v))
        if flags & (CacheFlag.POSITION | CacheFlag.ROOT_TRANSFORM):
            self.update_kinematics()  # link poses now; link velocities when next asked for
        if flags & (CacheFlag.VELOCITY | CacheFlag.ROOT_VELOCITIES):
            self._velocities_valid = self._links_fresh = False
        if flags & _STATE_FLAGS:
            refresh_status(self.block)  # a reset to a finite state clears the env's non-finite status

    def write_dof_columns(self, columns: dict) -> None:
        """What apply_cache does for some dof columns of the targets and joint forces alone, without a cache round
        trip: `columns` maps "joint_target_positions", "joint_target_velocities" or "joint_force" to (dof indices,
        (E, k) values). For a controller that writes them at every step (MjcfControl: copying every field out to a
        cache and back in was ~150 us of the 210 us step of dm_control's quadruped at one env). The values are
        refused unless finite and within +-MAX_MAGNITUDE; envs are woken by the columns written (a target away from
        the position, a non-zero force), as PhysX wakes on targets and forces set."""
        fields = {
            "joint_target_positions": self.control.joint_target_position,
            "joint_target_velocities": self.control.joint_target_velocity,
            "joint_force": self.control.joint_force,
        }
        for name, (_, values) in columns.items():
            if not np.all(np.isfinite(values)) or np.abs(values).max(initial=0.0) > MAX_MAGNITUDE:
                raise ValidationError(
                    f"articulation '{self.art.name}': {name} must be finite and at most {MAX_MAGNITUDE:g} in "
                    "magnitude; check the controls and the state they are computed from"
                )
        wake = np.zeros(self.num_envs, bool)
        for name, (idx, values) in columns.items():
            array = fields[name]
            host = array.numpy()  # the array's own memory on the CPU; a copy, written back, on a GPU
            host[:, idx] = values
            if not array.device.is_cpu:
                array.assign(host)
            if name == "joint_target_positions":
                wake |= np.any(host[:, idx] != self.state.joint_q.numpy()[:, idx], axis=1)
            else:
                wake |= np.any(host[:, idx] != 0.0, axis=1)
        self.wake(wake)

    def _wake_mask(self, applied: dict) -> np.ndarray:
        """Envs that applying these (checked) fields wakes: non-zero velocities or forces, targets away from the
        state."""
        mask = np.zeros(self.num_envs, bool)
        for name, a in applied.items():
            if name == "joint_target_positions":
                mask |= np.any(a != self.state.joint_q.numpy(), axis=1)
            elif name not in ("joint_position", "root_transform"):
                mask |= np.any(a.reshape(a.shape[0], -1) != 0, axis=1)
        return mask

    # -- inverse dynamics -----------------------------------------------------------------------------------------
    def _gen(self, cache, joint_field: str, root_fields) -> np.ndarray:
        """A generalized (E, N) vector from cache fields: the floating root's six entries, then the joints."""
        joints = cache.checked_input(joint_field)
        if not self.model.floating:
            return joints
        parts = [cache.checked_input(f) for f in root_fields]
        return np.concatenate(parts + [joints], axis=1)

    def _velocities(self, cache):
        return self._gen(cache, "joint_velocity", ["root_linear_velocity", "root_angular_velocity"])

    def _split(self, gen: np.ndarray, cache, joint_out: str, root_out: str | None):
        off = self.model.gen_offset
        cache.checked_output(joint_out)[:] = gen[:, off:]
        if off and root_out is not None:
            cache.checked_output(root_out)[:] = gen[:, :off]

    def common_init(self) -> None:
        self.update_kinematics()

    def compute_mass_matrix(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        self.ensure_kinematics()
        crba(self.model, self.data)
        cache.checked_output("mass_matrix")[:] = self.data.mass_matrix.numpy()

    def compute_gravity_compensation(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        self.ensure_kinematics()
        self.data.gen_v.zero_()
        self.data.gen_a.zero_()
        rnea(self.model, self.data, self.gravity, use_fext=False)
        cache.checked_output("gravity_compensation_force")[:] = self.data.gen_f.numpy()

    def _coriolis(self, cache):
        self.data.gen_v.assign(self._velocities(cache))
        self.data.gen_a.zero_()
        rnea(self.model, self.data, _ZERO_G, use_fext=False)

    def compute_coriolis_compensation(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        self.ensure_kinematics()
        self._coriolis(cache)
        cache.checked_output("coriolis_force")[:] = self.data.gen_f.numpy()

    def compute_generalized_external_force(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        self.ensure_kinematics()
        d = self.data
        d.link_fext.assign(cache.checked_input("external_forces"))
        d.gen_v.zero_()
        d.gen_a.zero_()
        rnea(self.model, d, _ZERO_G, use_fext=True)
        self._split(d.gen_f.numpy(), cache, "joint_force", "root_force")

    def compute_joint_acceleration(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        self.ensure_kinematics()
        d = self.data
        d.gen_v.assign(self._velocities(cache))
        forces = self._gen(cache, "joint_force", ["root_force"])
        d.gen_f.assign(forces)
        aba(self.model, d, self.gravity, use_fext=False)
        gen = d.gen_a.numpy()
        if not np.all(np.isfinite(gen)):
            envs = np.flatnonzero(~np.all(np.isfinite(gen), axis=1))
            raise StateError(
                f"articulation '{self.art.name}': joint accelerations are not finite in env(s) "
                f"{envs[:5].tolist()}; the joint-space inertia is singular there (a link with a free "
                "dof but no mass or inertia below it?); give such links mass and inertia or armature"
            )
        self._split(gen, cache, "joint_acceleration", None)
        if self.model.floating:
            cache.checked_output("root_linear_acceleration")[:] = gen[:, :3]
            cache.checked_output("root_angular_acceleration")[:] = gen[:, 3:6]

    def compute_joint_force(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        self.ensure_kinematics()
        d = self.data
        d.gen_v.assign(self._velocities(cache))
        d.gen_a.assign(
            self._gen(cache, "joint_acceleration", ["root_linear_acceleration", "root_angular_acceleration"])
        )
        rnea(self.model, d, _ZERO_G, use_fext=False)
        self._split(d.gen_f.numpy(), cache, "joint_force", "root_force")

    def compute_dense_jacobian(self, cache: ArticulationCache) -> tuple[int, int]:
        self._check_cache(cache)
        self.ensure_kinematics()
        dense_jacobian(self.model, self.data)
        cache.checked_output("dense_jacobian")[:] = self.data.jacobian.numpy()
        return cache.dense_jacobian.shape[1], cache.dense_jacobian.shape[2]

    def compute_centroidal_momentum_matrix(self, cache: ArticulationCache) -> None:
        self._check_cache(cache)
        if not self.model.floating:
            raise StateError(
                f"articulation '{self.art.name}': the centroidal momentum matrix is defined for "
                "floating-base articulations only (clear FIX_BASE)"
            )
        self.ensure_kinematics()
        crba(self.model, self.data)
        self._coriolis(cache)
        centroidal_momentum(
            self.model, self.data, self.data.gen_f, self.data.centroidal_matrix, self.data.centroidal_bias
        )
        cache.checked_output("centroidal_momentum_matrix")[:] = self.data.centroidal_matrix.numpy()
        cache.checked_output("centroidal_momentum_bias")[:] = self.data.centroidal_bias.numpy()

    def compute_articulation_com(self, root_frame: bool) -> np.ndarray:
        self.ensure_kinematics()
        articulation_com(self.model, self.state, self.data, root_frame)
        return self.data.com.numpy().astype(np.float64)
