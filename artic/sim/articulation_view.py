"""`ArticulationView`: one articulation's device blocks in a scene, its cache I/O and its inverse dynamics.

The PhysX calls on `Articulation` (apply_cache, compute_mass_matrix, ...) land here. Positions come from the
articulation's state (set them with apply_cache), velocity-dependent functions read velocities from the cache, as
the PhysX guide prescribes ("Inverse Dynamics"). Each function is a fixed sequence of kernel launches over all envs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.host_views import finite_within, host_view
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
_STATE_FLAGS = int(CacheFlag.POSITION | CacheFlag.VELOCITY | CacheFlag.ROOT_TRANSFORM | CacheFlag.ROOT_VELOCITIES)
# the cache flags' bits as plain ints (copy_internal_state_to_cache)
_POSITION, _VELOCITY, _ACCELERATION, _FORCE = (
    int(f) for f in (CacheFlag.POSITION, CacheFlag.VELOCITY, CacheFlag.ACCELERATION, CacheFlag.FORCE)
)
_TARGET_POSITIONS, _TARGET_VELOCITIES = int(CacheFlag.JOINT_TARGET_POSITIONS), int(CacheFlag.JOINT_TARGET_VELOCITIES)
_ROOT_TRANSFORM, _ROOT_VELOCITIES = int(CacheFlag.ROOT_TRANSFORM), int(CacheFlag.ROOT_VELOCITIES)
_LINK_VELOCITY, _LINK_ACCELERATION = int(CacheFlag.LINK_VELOCITY), int(CacheFlag.LINK_ACCELERATION)
_INCOMING = int(CacheFlag.LINK_INCOMING_JOINT_FORCE)
_LINK_FORCE, _LINK_TORQUE = int(CacheFlag.LINK_FORCE), int(CacheFlag.LINK_TORQUE)


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
        self._steps_seen = block.steps  # the block's steps these flags know of (_catch_up)
        s, c, d = self.state, self.control, self.data
        self._copied = (  # (flag bit, cache field, array) of copy_internal_state_to_cache's plain copies
            (_POSITION, "joint_position", s.joint_q),
            (_VELOCITY, "joint_velocity", s.joint_qd),
            (_ACCELERATION, "joint_acceleration", d.joint_acceleration),
            (_FORCE, "joint_force", c.joint_force),
            (_TARGET_POSITIONS, "joint_target_positions", c.joint_target_position),
            (_TARGET_VELOCITIES, "joint_target_velocities", c.joint_target_velocity),
            (_LINK_VELOCITY, "link_velocity", s.link_velocity),
            (_LINK_ACCELERATION, "link_acceleration", d.link_acceleration),
            (_INCOMING, "link_incoming_joint_force", d.link_incoming_joint_force),
            (_LINK_FORCE, "link_force", c.link_force),
            (_LINK_TORQUE, "link_torque", c.link_torque),
        )

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
        self._catch_up()
        self._positions_valid = self._velocities_valid = self._links_fresh = False

    def _catch_up(self) -> None:
        """What the block's steps since this view last looked left: link poses and velocities written into the
        state, this view's own Data (O, inertias, motion columns for inverse dynamics) to recompute when next asked
        for. Checked when the flags are next read or set rather than told by every step (~0.4 us a step per
        articulation)."""
        steps = self.block.steps
        if self._steps_seen != steps:
            self._steps_seen = steps
            self._positions_valid = self._velocities_valid = False
            self._links_fresh = True

    def _sync_model(self):
        if self._model_dirty:
            refresh_model(self.model, self.art)
            self._model_dirty = False

    def update_kinematics(self) -> None:
        self._catch_up()
        self._sync_model()
        forward_kinematics(self.model, self.state, self.data)
        self._positions_valid = True
        self._velocities_valid = self._links_fresh = False

    def ensure_kinematics(self) -> None:
        self._catch_up()
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
        self._catch_up()
        if not self._links_fresh:
            self.ensure_velocities()

    # -- simulation -----------------------------------------------------------------------------------------------
    def after_step(self, links_written: bool = True) -> None:
        """After a change of the state's joints that, unlike a step (_catch_up), did (`links_written`) or did not
        write the link poses and velocities: this view's own Data is recomputed when next asked for."""
        self._catch_up()
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
        f = int(cache_flags(f"articulation '{self.art.name}'", flags))  # plain ints: IntFlag's & costs ~1 us each
        s, d = self.state, self.data
        if f & _LINK_VELOCITY:
            self.ensure_velocities()
        for bit, field, array in self._copied:
            if f & bit:
                cache.checked_output(field)[:] = host_view(array)
        if f & _ROOT_TRANSFORM:
            cache.checked_output("root_transform")[:] = host_view(s.root_pose)[:, 0]
        if f & _ROOT_VELOCITIES:
            cache.checked_output("root_linear_velocity")[:] = host_view(s.root_lin_vel)[:, 0]
            cache.checked_output("root_angular_velocity")[:] = host_view(s.root_ang_vel)[:, 0]
            acc = host_view(d.link_acceleration)[:, 0]
            cache.checked_output("root_linear_acceleration")[:] = acc[:, :3]
            cache.checked_output("root_angular_acceleration")[:] = acc[:, 3:]

    # cache fields each apply_cache flag reads
    _APPLIED = (  # plain ints (apply_cache)
        (_POSITION, ("joint_position",)),
        (_VELOCITY, ("joint_velocity",)),
        (_ROOT_TRANSFORM, ("root_transform",)),
        (_ROOT_VELOCITIES, ("root_linear_velocity", "root_angular_velocity")),
        (_FORCE, ("joint_force",)),
        (_TARGET_POSITIONS, ("joint_target_positions",)),
        (_TARGET_VELOCITIES, ("joint_target_velocities",)),
        (_LINK_FORCE, ("link_force",)),
        (_LINK_TORQUE, ("link_torque",)),
    )

    def apply_cache(self, cache: ArticulationCache, flags: CacheFlag | int) -> None:
        self._check_cache(cache)
        name = self.art.name
        flags = int(cache_flags(f"articulation '{name}'", flags))  # plain ints: IntFlag's & costs ~1 us each
        # every field is checked before any is written, so a refused call changes nothing
        v = {f: cache.checked_input(f) for flag, fields in self._APPLIED if flags & flag for f in fields}
        s, c = self.state, self.control
        if flags & _POSITION:
            q = v["joint_position"]
            if self._revolute_dofs.size and np.abs(q[:, self._revolute_dofs]).max() > 2 * np.pi + 1e-6:
                raise ValidationError(
                    f"articulation '{name}': REVOLUTE joint positions must lie in [-2pi, 2pi]; "
                    "use REVOLUTE_UNWRAPPED for unbounded angles"
                )
            if self._spherical_dofs.size and np.abs(q[:, self._spherical_dofs]).max() > np.pi + 1e-6:
                raise ValidationError(f"articulation '{name}': SPHERICAL joint positions must lie in [-pi, pi]")
        if flags & _ROOT_TRANSFORM:
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
            array = roots[f] if f in roots else targets[f]
            if array.device.is_cpu:  # straight into the array's memory (assign stages a copy: ~15 us)
                host_view(array)[...] = a[:, None] if f in roots else a
            else:
                array.assign(a[:, None] if f in roots else a)
        if self.block.sleep_threshold() > 0.0:  # at 0 the block never sleeps (step_kernel._sleep_check)
            self.wake(self._wake_mask(v))
        self._catch_up()
        if flags & (_POSITION | _ROOT_TRANSFORM):
            self.update_kinematics()  # link poses now; link velocities when next asked for
        if flags & (_VELOCITY | _ROOT_VELOCITIES):
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
            if not finite_within(values, MAX_MAGNITUDE):
                raise ValidationError(
                    f"articulation '{self.art.name}': {name} must be finite and at most {MAX_MAGNITUDE:g} in "
                    "magnitude; check the controls and the state they are computed from"
                )
        wake = None
        can_sleep = self.block.sleep_threshold() > 0.0  # at 0 the block never sleeps (step_kernel._sleep_check)
        for name, (idx, values) in columns.items():
            array = fields[name]
            host = host_view(array)  # the array's own memory on the CPU; a copy, written back, on a GPU
            host[:, idx] = values
            if not array.device.is_cpu:
                array.assign(host)
            if not can_sleep:
                continue
            if name == "joint_target_positions":
                moved = (host[:, idx] != host_view(self.state.joint_q)[:, idx]).any(axis=1)
            else:
                moved = (host[:, idx] != 0.0).any(axis=1)
            wake = moved if wake is None else wake | moved
        if wake is not None:
            self.wake(wake)

    def _wake_mask(self, applied: dict) -> np.ndarray:
        """Envs that applying these (checked) fields wakes: non-zero velocities or forces, targets away from the
        state."""
        mask = np.zeros(self.num_envs, bool)
        for name, a in applied.items():
            if name == "joint_target_positions":
                mask |= np.any(a != host_view(self.state.joint_q), axis=1)
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
