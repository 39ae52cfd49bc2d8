"""Articulations that cannot be stepped are caught when they enter a scene, not at the first step.

A dof whose moving subtree has no mass (prismatic) or no rotational inertia about the dof's axis (revolute,
spherical), or a floating root without mass or inertia, makes the joint-space inertia M singular: the step divides
by zero and the articulation goes NaN without a word (romeo.urdf: 24 finger links without `<inertial>`; icub.urdf:
link neck_2 has mass 0.1 kg and inertia 0 on a hinge through its COM; a URDF link without `<inertial>` on a moving
joint; a massless floating root). `check_mass_properties` finds such dofs on the host, from the description alone,
and `Scene.add_articulation` runs it before any device array exists.

The test is exact at the reference configuration (every joint position zero): the articulated-body inertia that
each dof sees, its pivot `D = S^T I^A S + armature` (Featherstone's backward pass, in float64), is what forward
dynamics divides by; M is positive definite iff every D is (and, for a floating root, the root's 6x6 articulated
inertia). A massless link carried by massive children, or a massless link whose joint has armature, is therefore
fine and left alone, as MuJoCo leaves a moving body alone when a welded child has mass and inertia. A pivot can
also vanish away from zero: three concurrent hinges joined by massless links lock at 90 degrees of the middle one
(human.urdf's hips and shoulders go NaN after 0.5 s of falling). So each revolute joint whose link has no
rotational inertia of its own is also turned, alone, to its limits and to +-pi/2 where those lie within them, and
the pivots are checked there too.

What the peers do:

* PhysX refuses zero: `PxRigidBody::setMass` and `setMassSpaceInertiaTensor` report "components must be > 0 for
  articulations" for an articulation link and ignore the call (NpRigidBodyTemplate.h), so the link keeps its
  previous mass and inertia (1 and (1, 1, 1) by default).
* MuJoCo's compiler refuses a moving body whose mass or any principal inertia is below mjMINVAL (1e-15) unless a
  welded child has mass and inertia ("mass and inertia of moving bodies must be larger than mjMINVAL",
  user_model.cc). Its opt-in `<compiler boundmass=.. boundinertia=..>` (default 0) first raises every body's mass
  and principal inertias to those bounds, and `balanceinertia` (default false) replaces principal moments that
  violate the triangle inequality A + B >= C by their mean.

artic steps in float32, where 1e-15 is no floor at all. A pivot is reported when it is below

* `MASS_FLOOR` = 1e-5 kg (translation, root mass) or `INERTIA_FLOOR` = 1e-8 kg m^2 (rotation), or
* float32's epsilon (1.19e-7) times the largest pivot of its kind in the articulation: below that it is zero to
  float32 and the step's factorization of M loses it (icub's neck_2: 2.3e-13 kg m^2 against 0.46).

Of example-robot-data's 64 loadable URDFs and Gymnasium's and dm_control's 32 loadable MJCF files, only romeo
(24 finger links), icub (neck_2 at zero, r_hip_1 at its lock), icub_reduced (r_hip_1 at its lock) and human (5
virtual links at their locks) are reported. At the reference configuration the others' smallest pivots are
2.5e-3 kg (dm_control swimmer) and 7.4e-8 kg m^2 (dm_control manipulator), and the smallest share of the largest
rotational pivot is 1.0e-6 (alex_psyonic_hands.urdf, which steps finitely).

* `policy="repair"` (the default): MuJoCo's `boundmass`/`boundinertia`, applied only where needed. The link that a
  reported joint moves directly (the root, for a floating root) has its mass raised to the larger of `MASS_FLOOR`
  and `REPAIR_RATIO` (1e-5) times the articulation's total mass, and each principal inertia to the larger of
  `INERTIA_FLOOR` and 1e-5 times the largest rotational pivot. A link's articulated inertia is at least its own, so
  the dof's pivot is then at least that. The ratio keeps two digits above float32's rounding: icub steps 2 s with
  neck_2 raised to 1e-6 kg m^2 (2e-6 of its largest pivot) and goes NaN after 69 steps at 3e-7. One `UserWarning`
  per articulation names the links and the values given. A healthy articulation is not touched (not a bit of its
  masses changes) and produces no warning.
* `policy="raise"`: PhysX's refusal, as an exception: a `ValidationError` naming the links and the fix (an
  `<inertial>`, `link.mass` and `link.inertia`, or armature on the joint).

`balanceinertia` is not applied: `Link.set_mass_and_inertia_tensor` and the loaders already refuse inertia tensors
that are not positive semi-definite (URDF `repair_inertia=True` repairs them). A warning on the ratio of link
masses is not given either: tiny links on fixed joints make it fire on healthy robots (so101.urdf 1.5e8, hyq 6e7),
while the pivot test above measures what the step divides by.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..enums import Axis, JointType, Motion
from ..errors import ValidationError
from ..math.np_spatial import Transform, quat_from_axis_angle, quat_to_matrix, skew, spatial_inertia
from .body_joints import description_pose

if TYPE_CHECKING:
    from .articulation import Articulation, Link

MASS_FLOOR = 1e-5  # [kg]: least pivot of a translational dof, mass given to a repaired link
INERTIA_FLOOR = 1e-8  # [kg m^2]: least pivot of a rotational dof, principal inertias given to a repaired link
REPAIR_RATIO = 1e-5  # a repaired link gets at least this share of the total mass and of the largest rotational pivot
POLICIES = ("repair", "raise")

_UNIT = np.eye(3)
_EPS32 = float(np.finfo(np.float32).eps)  # 1.19e-7: a pivot below this share of the largest is zero to float32


def mass_policy_arg(policy: str) -> str:
    """Validate a mass policy ('repair' or 'raise'), for `Scene(mass_policy=...)`."""
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValidationError(f"scene: mass_policy must be 'repair' or 'raise', got {policy!r}")
    return policy


def _world_poses(links) -> dict:
    """Actor-frame poses of every link at the reference configuration (every joint at zero), root at the identity:
    the check does not depend on where the articulation stands."""
    poses = {links[0]: Transform()}
    for link in links[1:]:
        j = link.inbound_joint
        poses[link] = poses[link.parent] * j.parent_pose * j.child_pose.inverse()
    return poses


def _link_inertia(link, pose: Transform) -> np.ndarray:
    """6x6 spatial inertia of a link about the world origin (angular, linear order)."""
    com = pose * link.cmass_local_pose
    rot = quat_to_matrix(com.q)
    return spatial_inertia(link.mass, com.p, rot @ np.diag(link.inertia) @ rot.T)


def _motion_subspace(link, pose: Transform) -> np.ndarray:
    """6 x k world-frame motion subspace (about the world origin) of the unlocked axes of a link's inbound joint."""
    j = link.inbound_joint
    frame = pose * j.child_pose
    cols = []
    for a in j.dof_axes():
        d = frame.rotate(_UNIT[int(a) % 3])
        cols.append(np.concatenate([d, np.cross(frame.p, d)]) if a < Axis.X else np.concatenate([np.zeros(3), d]))
    return np.array(cols).reshape(-1, 6).T


def _min_eig(m: np.ndarray) -> float:
    return float(np.linalg.eigvalsh(0.5 * (m + m.T)).min())


def _kind(link) -> str:
    return "rotation" if link.inbound_joint.dof_axes()[0] < Axis.X else "translation"


def _through_joint(link, articulated: np.ndarray, pose: Transform):
    """(pivot or None for a fixed joint, what the parent feels) for a link's inbound joint, given the link's
    articulated inertia. A singular pivot passes on nothing the joint cannot carry."""
    j = link.inbound_joint
    axes = j.dof_axes()
    if not axes:
        return None, articulated
    s = _motion_subspace(link, pose)
    u = articulated @ s
    d = s.T @ u + np.diag([j.get_armature(a) for a in axes])
    return _min_eig(d), articulated - u @ np.linalg.pinv(d, rcond=1e-12) @ u.T


def _root_pivots(art, articulated: np.ndarray) -> list:
    if art.fix_base:
        return []
    root = art._topology().links[0]
    lin = articulated[3:, 3:]
    rot = articulated[:3, :3] - articulated[:3, 3:] @ np.linalg.pinv(lin, rcond=1e-12) @ articulated[3:, :3]
    return [(root, "root mass", _min_eig(lin)), (root, "root rotation", _min_eig(rot))]


def _backward(art):
    """Featherstone's backward pass at the reference configuration: (poses, articulated inertia per link, what each
    link passes to its parent, pivots), all in the world frame about its origin."""
    links = art._topology().links
    poses = _world_poses(links)
    articulated = {link: _link_inertia(link, poses[link]) for link in links}
    passed, out = {}, []
    for link in reversed(links[1:]):  # children before parents
        pivot, passed[link] = _through_joint(link, articulated[link], poses[link])
        articulated[link.parent] = articulated[link.parent] + passed[link]
        if pivot is not None:
            out.append((link, _kind(link), pivot))
    return poses, articulated, passed, out + _root_pivots(art, articulated[links[0]])


def _turned(art, ref, link, angle: float) -> list:
    """The pivots that change when the revolute inbound joint of `link` turns by `angle`: its subtree turns rigidly
    about the joint axis, so its own pivots keep their values and only its ancestors' (and a floating root's) are
    recomputed, from what the subtree passes up, turned."""
    poses, articulated, passed, _ = ref
    j = link.inbound_joint
    frame = poses[link.parent] * j.parent_pose
    rot = quat_to_matrix(quat_from_axis_angle(frame.rotate(_UNIT[int(j.dof_axes()[0])]), angle))
    force = np.zeros((6, 6))  # the rotation about the axis line through frame.p, acting on (torque, force) pairs
    force[:3, :3] = force[3:, 3:] = rot
    force[:3, 3:] = skew(frame.p - rot @ frame.p) @ rot
    moved, child, out = force @ passed[link] @ force.T, link, []
    while child.parent is not None:
        parent = child.parent
        total = articulated[parent] - passed[child] + moved
        if parent.inbound_joint is None:
            return out + _root_pivots(art, total)
        pivot, moved = _through_joint(parent, total, poses[parent])
        if pivot is not None:
            out.append((parent, _kind(parent), pivot))
        child = parent
    return out


def pivots(art: Articulation, turned: Link | None = None, angle: float = 0.0) -> list:
    """(link, kind, pivot) per link whose inbound joint has dofs, children first, at the reference configuration:
    kind is 'rotation' (pivot in kg m^2, the least eigenvalue of D for a spherical joint) or 'translation' (kg). A
    floating root adds (root, 'root mass', kg) and (root, 'root rotation', kg m^2): the least eigenvalues of its
    articulated inertia's linear block and of the rotational part with the linear motion free. With `turned`, a
    link on a revolute joint, that joint is at `angle` and only the pivots this changes are listed."""
    if getattr(art, "_kinematic", False):  # a kinematic body follows its targets: nothing divides by its mass
        return []
    ref = _backward(art)
    return ref[3] if turned is None else _turned(art, ref, turned, angle)


def _is_translation(kind: str) -> bool:
    return kind in ("translation", "root mass")


def _lock_samples(art, small: float) -> list:
    """(link, angle) configurations that may line up the axes around links without rotational inertia of their
    own (gimbal lock of three concurrent hinges joined by massless links, human.urdf's hips): each revolute joint
    whose link has a principal inertia below `small`, at its limits and at +-pi/2 where they lie within them."""
    out = []
    for link in art._topology().links[1:]:
        j = link.inbound_joint
        if j.get_joint_type() not in (JointType.REVOLUTE, JointType.REVOLUTE_UNWRAPPED) or link.inertia.min() >= small:
            continue
        axis = j.dof_axes()[0]
        low, high = -np.inf, np.inf
        angles = set()
        if j.get_motion(axis) == Motion.LIMITED:
            lim = j.get_limit_params(axis)
            low, high = lim.low, lim.high
            angles = {low, high}
        angles |= {a for a in (-0.5 * np.pi, 0.5 * np.pi) if low <= a <= high}
        out += [(link, a) for a in sorted(angles) if a != 0.0]
    return out


def find_massless(art: Articulation) -> list:
    """(link, what) for every link whose inbound dof (or, for a floating root, the root) has a pivot below its
    floor: `MASS_FLOOR` or `INERTIA_FLOOR`, or float32's epsilon times the largest pivot of the same kind (in kg or
    kg m^2) at the reference configuration. The reference configuration is checked, then the configurations of
    `_lock_samples`. `what` names the joint and the pivot."""
    if getattr(art, "_kinematic", False):  # a kinematic body follows its targets: nothing divides by its mass
        return []
    ref = _backward(art)
    piv = ref[3]
    largest = {t: max((p for _, k, p in piv if _is_translation(k) == t), default=0.0) for t in (False, True)}
    floor = {t: max(MASS_FLOOR if t else INERTIA_FLOOR, _EPS32 * largest[t]) for t in (False, True)}
    found = {}

    def report(piv, where):
        for link, kind, pivot in piv:
            t = _is_translation(kind)
            if pivot < floor[t] and link not in found:
                unit = "kg" if t else "kg m^2"
                found[link] = (
                    f"{kind} {pivot:.3g} {unit}{where}"
                    if kind.startswith("root")
                    else f"{'mass along' if t else 'rotational inertia about'} joint "
                    f"'{link.inbound_joint.name}' {pivot:.3g} {unit}{where}"
                )

    report(piv, "")
    for turned, angle in _lock_samples(art, floor[False]):
        report(_turned(art, ref, turned, angle), f" with joint '{turned.inbound_joint.name}' at {angle:.4g} rad")
    return list(found.items())


def repair_values(art: Articulation) -> tuple[float, float]:
    """(mass [kg], principal inertia [kg m^2]) that a repaired link of `art` is raised to: the floors, or
    `REPAIR_RATIO` of the articulation's total mass and of its largest rotational pivot if those are larger."""
    total = sum(link.mass for link in art.get_links())
    rot = max((p for _, k, p in pivots(art) if not _is_translation(k)), default=0.0)
    return max(MASS_FLOOR, REPAIR_RATIO * total), max(INERTIA_FLOOR, REPAIR_RATIO * rot)


def check_mass_properties(art: Articulation, policy: str = "repair") -> list:
    """Find the dofs of `art` that cannot be stepped (module docstring) and repair them or refuse the articulation.
    Returns the names of the repaired links (empty when the articulation is healthy)."""
    policy = mass_policy_arg(policy)
    found = find_massless(art)
    if not found:
        return []
    names = ", ".join(f"'{link.name}' ({what})" for link, what in found)
    if policy == "raise":
        raise ValidationError(
            f"articulation '{art.name}': {len(found)} link(s) cannot be stepped, the joint-space inertia is "
            f"singular: {names}. Give them mass and inertia (a URDF <inertial>, link.mass and link.inertia) or "
            "armature on their joint, or add the articulation with mass_policy='repair'"
        )
    mass, inertia = repair_values(art)
    for link, _ in found:
        link.mass = max(link.mass, mass)
        link.inertia = np.maximum(link.inertia, inertia)
    warnings.warn(
        f"articulation '{art.name}': {len(found)} link(s) had no mass or inertia for the dof that moves them and "
        f"would go NaN in the step: {names}. Their mass was raised to {mass:.3g} kg and their principal inertias to "
        f"{inertia:.3g} kg m^2 (like MuJoCo's boundmass/boundinertia); give them real mass properties, or use "
        "mass_policy='raise' to refuse such models",
        UserWarning,
        stacklevel=3,
    )
    return [link.name for link, _ in found]


def _joint_columns(art: Articulation) -> tuple:
    """(columns, dofs, moved_by, poses, armature) at the described pose: each generalized dof's world motion column
    (angular, linear about the origin), its (link, axis), the columns moving each link, the links' poses and the
    dofs' armature (a floating root's six first, as (root, 0..5))."""
    links = art._topology().links
    poses = {link: description_pose(link) for link in links}
    columns, dofs, moved_by = [], [], {}
    if not art.fix_base:
        columns += list(np.eye(6))
        dofs += [(links[0], k) for k in range(6)]
    moved_by[links[0]] = list(range(len(columns)))
    armature = [0.0] * len(columns)
    for link in links[1:]:
        j = link.inbound_joint
        s = _motion_subspace(link, poses[link])
        start = len(columns)
        for k, a in enumerate(j.dof_axes()):
            columns.append(s[:, k])
            dofs.append((link, a))
            armature.append(j.get_armature(a))
        moved_by[link] = moved_by[link.parent] + list(range(start, len(columns)))
    return columns, dofs, moved_by, poses, armature


def joint_space_inertia(art: Articulation) -> tuple[np.ndarray, list]:
    """(M, dofs): the joint-space inertia (float64, armature on the diagonal) at the articulation's joint positions
    and root pose as described, and per row of M its (link, axis) (a floating root's six first, as (root, 0..5):
    angular then linear, about the world origin). For what MuJoCo's compiler computes at qpos0 (a position
    actuator's dampratio). Each link adds J^T I J, J its ancestors' motion columns; a floating root's root_armature
    adds as a body of that mass at the root's origin with that isotropic inertia (math/spatial.armature_about_o)."""
    columns, dofs, moved_by, poses, armature = _joint_columns(art)
    m = np.diag(armature)
    for link in art._topology().links:
        idx = moved_by[link]
        if idx:
            jac = np.array([columns[i] for i in idx]).T
            inertia = _link_inertia(link, poses[link])
            if link.inbound_joint is None and not art.fix_base:
                a = art.root_armature
                inertia = inertia + spatial_inertia(a, poses[link].p, a * np.eye(3))
            m[np.ix_(idx, idx)] += jac.T @ inertia @ jac
    return m, dofs


def link_inverse_weights(art: Articulation) -> dict:
    """Per link, (translational, rotational) inverse weight at the described pose, as MuJoCo's body_invweight0:
    the mean diagonal of J M^-1 J^T for the link's COM Jacobian J (linear rows, then angular) [1/kg, 1/(kg m^2)].
    The approximate inverse effective mass a soft row's regularizer is scaled by (constraints/softness.py); a link
    that no dof moves weighs 0 (infinitely heavy)."""
    columns, _, moved_by, poses, _ = _joint_columns(art)
    out = {}
    if not columns:
        return dict.fromkeys(art._topology().links, (0.0, 0.0))
    m, _ = joint_space_inertia(art)
    minv = np.linalg.pinv(m)
    cols = np.array(columns).T  # 6 x N
    for link in art._topology().links:
        idx = moved_by[link]
        if not idx:
            out[link] = (0.0, 0.0)
            continue
        com = (poses[link] * link.cmass_local_pose).p
        jac = np.zeros((6, cols.shape[1]))
        jac[3:, idx] = cols[:3, idx]  # angular
        jac[:3, idx] = cols[3:, idx] + np.cross(cols[:3, idx].T, com).T  # the COM's linear velocity
        a = jac @ minv @ jac.T
        out[link] = (float(np.trace(a[:3, :3]) / 3.0), float(np.trace(a[3:, 3:]) / 3.0))
    return out


def generalized_force(art: Articulation, wrenches: dict) -> np.ndarray:
    """J^T w at the described pose: the generalized force (in joint_space_inertia's dof order) of world forces and
    torques `wrenches` {link: (force at the link's COM (3,) [N], torque (3,) [N m])} on links of `art`."""
    columns, dofs, moved_by, poses, _ = _joint_columns(art)
    out = np.zeros(len(dofs))
    for link, (force, torque) in wrenches.items():
        com = (poses[link] * link.cmass_local_pose).p
        wrench = np.concatenate([np.asarray(torque, float) + np.cross(com, force), force])  # about the origin
        for d in moved_by[link]:
            out[d] += float(np.dot(columns[d], wrench))
    return out


def tendon_inverse_weight(terms: list, inertia: tuple) -> float:
    """MuJoCo's tendon_invweight0: J M^-1 J^T for a length sum c_i q_i, `terms` its ((link, axis), c_i) and
    `inertia` the articulation's joint_space_inertia at the described pose [1/kg or 1/(kg m^2)]."""
    m, dofs = inertia
    index = {dof: i for i, dof in enumerate(dofs)}
    jac = np.zeros(len(dofs))
    for dof, c in terms:
        jac[index[dof]] += c
    return float(jac @ np.linalg.pinv(m) @ jac)


def dof_inverse_weights(art: Articulation) -> dict:
    """Per joint dof (link, axis), (M^-1)_dd at the described pose, as MuJoCo's dof_invweight0: a soft limit's
    approximate inverse effective mass [1/kg or 1/(kg m^2)] (constraints/softness.py)."""
    m, dofs = joint_space_inertia(art)
    diag = np.diag(np.linalg.pinv(m)) if len(dofs) else []
    return {dof: float(w) for dof, w in zip(dofs, diag)}
