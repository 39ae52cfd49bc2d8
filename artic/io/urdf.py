"""URDF import: `load_urdf(path, fix_base=True, package_dirs=())` builds an `Articulation`.

Mapping (URDF spec, wiki.ros.org/urdf/XML, to PhysX's model, the PhysX guide):
* Each URDF link becomes a link whose actor frame is the URDF link frame; `<inertial>` gives mass, COM and the
  inertia tensor (diagonalized into principal moments and a COM frame).
* A moving joint's frames are chosen so that its URDF axis is the joint frame's x axis (TWIST for revolute, X for
  prismatic), as omni.physx does: parent_pose = origin * R, child_pose = R with R taking x onto the axis. Joint
  positions therefore keep the URDF's sign and zero.
* revolute -> REVOLUTE, LIMITED by [lower, upper]; continuous -> REVOLUTE, FREE; prismatic -> PRISMATIC; fixed ->
  FIX; floating -> a floating base (only between a world link and the root). `<limit effort>` becomes the axis
  drive's max_force (with DRIVE_LIMITS_ARE_FORCES set, so it is a force), `<limit velocity>` the max joint velocity,
  `<dynamics damping friction>` the viscous coefficient and the static/dynamic effort of the friction params.
* `<mimic>` becomes a hard mimic joint (`urdf_mimic_tags` lists the tags as (joint, reference joint, multiplier,
  offset)).
* Collision `box/sphere/cylinder/capsule/mesh` become shapes; `package://pkg/rest` and relative file names are
  resolved next to the file (walking up its folders) and through `package_dirs`.
Every malformed file raises `UrdfError` naming the file, the element and the attribute (see `load_urdf`).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..description.articulation import Articulation
from ..description.articulation_joint import Drive, FrictionParams, Limit
from ..description.shapes import Box, Capsule, Cylinder, Mesh, Sphere
from ..enums import ArticulationFlag, Axis, DriveType, JointType, Motion
from ..errors import ArticError, UrdfError
from ..math.np_spatial import Transform, quat_between, quat_from_rpy, quat_to_matrix
from .xml_values import MAX_MAGNITUDE, XmlValues, read_xml_root

_X_TO_Z = quat_between((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))  # URDF cylinders lie along z, artic's along x


def _origin(vals: XmlValues, el) -> Transform:
    o = el.find("origin") if el is not None else None
    if o is None:
        return Transform()
    return Transform(vals.numbers(o, "xyz", 3, (0, 0, 0)), quat_from_rpy(*vals.numbers(o, "rpy", 3, (0, 0, 0))))


class _Resolver:
    """Finds mesh files named by `package://pkg/rest`, `file://`, absolute or relative paths."""

    def __init__(self, urdf_path: Path, package_dirs):
        self.base = urdf_path.parent
        self.roots = list(package_dirs) + list(urdf_path.parents)

    def __call__(self, uri: str, vals: XmlValues, el) -> str:
        uri = uri.removeprefix("file://")
        if uri.startswith("package://"):
            pkg, _, rest = uri[len("package://") :].partition("/")
            for root in self.roots:
                for cand in (root / pkg / rest, root / rest if root.name == pkg else None):
                    if cand is not None and cand.is_file():
                        return str(cand)
            raise vals.fail(
                el,
                f"attribute filename: cannot resolve '{uri}': no folder '{pkg}' holding '{rest}' "
                f"next to the URDF or in package_dirs; pass package_dirs=[folder containing '{pkg}'] (artic sim: "
                "--package-dir FOLDER)",
            )
        path = Path(uri) if os.path.isabs(uri) else self.base / uri
        if not path.is_file():
            raise vals.fail(el, f"attribute filename: mesh file '{uri}' not found (looked at {path})")
        return str(path)


def _geometry_shape(vals: XmlValues, col, resolve: _Resolver, name: str):
    geom = col.find("geometry")
    if geom is None or len(geom) == 0:
        raise vals.fail(col, "<geometry> is missing or empty; give one of box, sphere, cylinder, capsule, mesh")
    g = geom[0]
    pose = _origin(vals, col)
    with vals.context(g):
        if g.tag == "box":
            return Box(tuple(0.5 * vals.numbers(g, "size", 3)), local_pose=pose, name=name)
        if g.tag == "sphere":
            return Sphere(vals.number(g, "radius"), local_pose=pose, name=name)
        if g.tag in ("cylinder", "capsule"):
            radius, length = vals.number(g, "radius"), vals.number(g, "length")
            cls = Cylinder if g.tag == "cylinder" else Capsule
            return cls(radius, 0.5 * length, local_pose=pose * Transform(q=_X_TO_Z), name=name)
        if g.tag == "mesh":
            filename = g.get("filename")
            if not filename:
                raise vals.fail(g, "attribute filename is missing or empty; give the mesh file")
            scale = tuple(vals.numbers(g, "scale", 3, (1, 1, 1)))
            return Mesh(resolve(filename, vals, g), scale, local_pose=pose, name=name)
    raise vals.fail(g, f"unsupported geometry <{g.tag}>; use box, sphere, cylinder, capsule or mesh")


def load_urdf(
    path: os.PathLike | str,
    fix_base: bool = True,
    package_dirs: os.PathLike | str | Iterable[os.PathLike | str] = (),
    name: str | None = None,
    repair_inertia: bool = False,
    mimic: bool = True,
    self_collision: bool = False,
) -> Articulation:
    """Load a URDF file as an articulation. `fix_base=False` gives a floating base (the root link free in space).

    An `<inertia>` that is not positive semi-definite is refused unless `repair_inertia=True`, which raises its
    negative principal moments to 1e-3 of the largest one (with a warning): a repair of bad data, not physics.
    `<mimic joint=ref multiplier=m offset=o>` on joint A (q_A = m q_ref + o) becomes a hard mimic joint with gear ratio
    -m and offset -o (`mimic=False` leaves the joints independent; `urdf_mimic_tags` lists the tags). `<collision>`
    geometries become shapes; collisions between links of the robot are off unless `self_collision=True` (the convex
    hulls of neighbouring meshes of most robot descriptions overlap; Isaac Sim's importer makes the same choice).

    Every error is a `UrdfError` naming the file, the element and the attribute: a missing, empty or non-XML file;
    links that do not form one tree (a cycle, a joint whose parent is its child, a link with two parents, several
    roots, unknown or duplicate names); a number that is malformed, not finite or beyond 1e15 in magnitude (it
    would overflow float32 in the solver); a zero axis. A `<limit>` bound beyond 1e15 means "unbounded" (iris.urdf
    writes +-1e16): a joint with both bounds beyond is loaded unlimited, a single one is clamped to +-1e15, each
    with a warning. An axis is normalised after scaling by its largest component, so `0 0 1e200` is the z axis."""
    path, root_el = read_xml_root(path, "URDF", "robot", UrdfError)
    vals = XmlValues(root_el, path, "URDF", UrdfError)
    if isinstance(package_dirs, (str, os.PathLike)):  # one folder given on its own
        package_dirs = (package_dirs,)
    try:
        package_dirs = [Path(d) for d in package_dirs]
    except TypeError:
        raise UrdfError(f"URDF file '{path}': package_dirs must be a list of folders, got {package_dirs!r}") from None
    try:
        art, tags = _build(vals, root_el, fix_base, package_dirs, name, repair_inertia)
        if mimic:
            _create_mimic_joints(vals, root_el, art, tags)
        art.set_articulation_flag(ArticulationFlag.DISABLE_SELF_COLLISION, not self_collision)
        return art
    except UrdfError:
        raise
    except ArticError as e:
        raise UrdfError(f"URDF file '{path}': {e}") from None


def urdf_mimic_tags(path: os.PathLike | str) -> list[tuple[str, str, float, float]]:
    """The `<mimic>` tags of a URDF file as (joint, reference joint, multiplier, offset), in file order: what
    `load_urdf` turns into mimic joints (q_joint = multiplier q_reference + offset). Numbers are checked as
    `load_urdf` checks them (UrdfError)."""
    path, root_el = read_xml_root(path, "URDF", "robot", UrdfError)
    vals = XmlValues(root_el, path, "URDF", UrdfError)
    tags = []
    for el in root_el.findall("joint"):
        mimic = el.find("mimic")
        if mimic is not None and el.get("type") != "fixed":
            tags.append(
                (
                    el.get("name"),
                    mimic.get("joint"),
                    vals.number(mimic, "multiplier", 1.0),
                    vals.number(mimic, "offset", 0.0),
                )
            )
    return tags


def _tree(vals: XmlValues, robot):
    """(links by name, child link -> (joint name, parent link, joint element), children by link, root link),
    after checking that the joints make the links one tree."""
    links = {}
    for el in robot.findall("link"):
        lname = el.get("name")
        if not lname:
            raise vals.fail(el, "attribute name is missing or empty; every <link> needs a unique name")
        if lname in links:
            raise vals.fail(el, f"link '{lname}' is defined twice; link names must be unique")
        links[lname] = el
    if not links:
        raise UrdfError(f"URDF file '{vals.path}': the robot has no <link> elements")

    joint_names, child_of = set(), {}
    for el in robot.findall("joint"):
        jname = el.get("name")
        if not jname:
            raise vals.fail(el, "attribute name is missing or empty; every <joint> needs a unique name")
        if jname in joint_names:
            raise vals.fail(el, f"joint '{jname}' is defined twice; joint names must be unique")
        joint_names.add(jname)
        ends = {}
        for end in ("parent", "child"):
            end_el = el.find(end)
            if end_el is None or not end_el.get("link"):
                raise vals.fail(el, f"needs <{end} link=...>")
            ends[end] = end_el.get("link")
            if ends[end] not in links:
                raise vals.fail(
                    el, f"refers to unknown link '{ends[end]}' in <{end} link=...>; define the link or fix the name"
                )
        parent, child = ends["parent"], ends["child"]
        if parent == child:
            raise vals.fail(
                el,
                f"link '{child}' is both the parent and the child of joint '{jname}'; a joint "
                "connects two different links",
            )
        if child in child_of:
            raise vals.fail(
                el,
                f"link '{child}' already has parent joint '{child_of[child][0]}' (from link "
                f"'{child_of[child][1]}'); a link has one parent: a URDF must be a tree",
            )
        child_of[child] = (jname, parent, el)

    children = {ln: [] for ln in links}
    for ln, (_, parent, _) in child_of.items():
        children[parent].append(ln)
    roots = [ln for ln in links if ln not in child_of]
    reached, stack = set(), list(roots)
    while stack:
        ln = stack.pop()
        reached.add(ln)
        stack.extend(children[ln])
    lost = [ln for ln in links if ln not in reached]
    if lost:  # each lost link has a parent, so walking up from one ends in a cycle
        seen, ln = [], lost[0]
        while ln not in seen:
            seen.append(ln)
            ln = child_of[ln][1]
        cycle = seen[seen.index(ln) :][::-1]
        desc = ", ".join(f"joint '{child_of[c][0]}' ({child_of[c][1]} -> {c})" for c in cycle)
        raise UrdfError(
            f"URDF file '{vals.path}': the joints form a cycle through links {cycle}: {desc}; a URDF "
            f"must be a tree (check the <parent>/<child> of these joints)"
        )
    if len(roots) != 1:
        raise UrdfError(
            f"URDF file '{vals.path}': expected one root link, found {len(roots)} ({roots[:5]}); the "
            "links must form one tree: join the others to it with joints"
        )
    return links, child_of, children, roots[0]


def _build(vals: XmlValues, robot, fix_base: bool, package_dirs, name, repair_inertia) -> tuple[Articulation, list]:
    """The articulation and its <mimic> tags (joint, reference joint, multiplier, offset)."""
    tags = []
    resolve = _Resolver(vals.path, package_dirs)
    links, child_of, children, top = _tree(vals, robot)

    # a massless root joined by a floating or fixed joint to a single child is a "world" placeholder
    root = top
    floating_world = False
    if links[root].find("inertial") is None and len(children[root]) == 1:
        only = children[root][0]
        jtype = child_of[only][2].get("type")
        if jtype == "floating":
            floating_world = True
            root = only
        elif jtype == "fixed" and root == "world":
            root = only

    art = Articulation(name or robot.get("name") or vals.path.stem)
    if fix_base and not floating_world:
        art.set_articulation_flag(ArticulationFlag.FIX_BASE, True)
    art.set_articulation_flag(ArticulationFlag.DRIVE_LIMITS_ARE_FORCES, True)

    # create links in depth-first document order; PhysX indexing re-orders them breadth-first
    root_pose = Transform() if root == top else _origin(vals, child_of[root][2])
    stack = [(root, None, root_pose)]
    while stack:
        lname, parent_link, pose = stack.pop()
        with vals.context(links[lname]):
            link = art.create_link(parent_link, pose, name=lname)
            _fill_link(vals, link, links[lname], resolve, repair_inertia)
        if parent_link is not None:
            jname, _, jel = child_of[lname]
            with vals.context(jel):
                _fill_joint(vals, art, link.inbound_joint, jname, jel, tags)
        for child in reversed(children[lname]):
            stack.append((child, link, pose * _origin(vals, child_of[child][2])))
    return art, tags


def _create_mimic_joints(vals: XmlValues, robot, art, tags: list):
    mimic_els = {el.get("name"): el.find("mimic") for el in robot.findall("joint")}
    names = {j.name: j for j in (lk.inbound_joint for lk in art.get_links()[1:])}
    for jname, ref, multiplier, offset in tags:
        mel = mimic_els[jname]
        if ref not in names:
            # xacro output sometimes drops the prefix of the reference ('index_q1' for 'Left_index_q1'): accept the
            # one joint whose name is the mimic joint's prefix plus the reference
            matches = [n for n in names if n.endswith(ref) and jname.startswith(n[: len(n) - len(ref)])]
            if len(matches) != 1:
                raise vals.fail(mel, f"attribute joint='{ref}' refers to unknown joint '{ref}'")
            warnings.warn(
                f"{vals.where(mel)}: refers to unknown joint '{ref}'; using '{matches[0]}' (the mimic joint's prefix)",
                stacklevel=3,
            )
            ref = matches[0]
        if ref == jname:
            raise vals.fail(mel, f"attribute joint='{ref}': joint '{jname}' cannot mimic itself")
        a, b = names[jname], names[ref]
        if not a.dof_axes() or not b.dof_axes():
            raise vals.fail(mel, "both joints must move (the mimic or its reference is fixed)")
        with vals.context(mel):
            art.create_mimic_joint(a, a.dof_axes()[0], b, b.dof_axes()[0], -multiplier, -offset)


def _repair(vals: XmlValues, el, tensor: np.ndarray, repair: bool) -> np.ndarray:
    moments, axes = np.linalg.eigh(tensor)
    scale = max(abs(moments).max(), 1e-12)
    if moments.min() >= -1e-6 * scale:  # round-off, as Link.set_mass_and_inertia_tensor accepts
        return tensor
    floor = 1e-3 * scale
    if not repair:
        raise vals.fail(
            el,
            f"<inertia> is not positive semi-definite (principal moments {moments}); fix the "
            "<inertial> or load with repair_inertia=True",
        )
    warnings.warn(
        f"{vals.where(el)}: <inertia> is not positive semi-definite (principal moments {moments}); "
        f"negative moments raised to {floor:.3g}",
        stacklevel=5,
    )
    return axes @ np.diag(np.maximum(moments, floor)) @ axes.T


def _fill_link(vals: XmlValues, link, el, resolve, repair_inertia):
    inertial = el.find("inertial")
    if inertial is not None:
        origin = _origin(vals, inertial)
        mass_el = inertial.find("mass")
        mass = vals.number(mass_el, "value", 0.0) if mass_el is not None else 0.0
        i_el = inertial.find("inertia")
        t = np.zeros((3, 3))
        if i_el is not None:
            g = {k: vals.number(i_el, k, 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            t = np.array(
                [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
            )
        r = quat_to_matrix(origin.q)
        with vals.context(inertial):
            link.set_mass_and_inertia_tensor(mass, origin.p, _repair(vals, el, r @ t @ r.T, repair_inertia))
    else:
        link.set_mass_and_inertia_tensor(0.0, (0, 0, 0), np.zeros((3, 3)))
    for k, col in enumerate(el.findall("collision")):
        shape = _geometry_shape(vals, col, resolve, col.get("name") or f"{link.name}_collision{k}")
        with vals.context(col):
            link.attach_shape(shape)


def _limit_bound(vals: XmlValues, limit, attr: str) -> float | None:
    """A `<limit>` bound; None (no bound) for a magnitude beyond 1e15, which URDFs write for "unbounded"."""
    v = vals.number(limit, attr, 0.0, limit=None)
    return None if abs(v) > MAX_MAGNITUDE else v


def _fill_joint(vals: XmlValues, art, joint, jname, el, tags: list):
    jtype = el.get("type")
    joint.name = jname
    origin = _origin(vals, el)
    if jtype == "fixed":
        joint.set_joint_type(JointType.FIX)
        joint.parent_pose = origin
        joint.child_pose = Transform()
        if el.find("mimic") is not None:
            warnings.warn(
                f"{vals.where(el)}: <mimic> on a fixed joint is ignored (a fixed joint cannot follow another)",
                stacklevel=4,
            )
        return
    if jtype is None:
        raise vals.fail(el, "attribute type is missing; give revolute, continuous, prismatic or fixed")
    if jtype not in ("revolute", "continuous", "prismatic"):
        raise vals.fail(
            el,
            f"joint type '{jtype}' is not supported inside an articulation (supported: revolute, "
            "continuous, prismatic, fixed; floating only at the root)",
        )
    axis_el = el.find("axis")
    axis = np.array([1.0, 0.0, 0.0])
    if axis_el is not None:
        axis = vals.numbers(axis_el, "xyz", 3, (1, 0, 0), limit=None)  # a direction: any magnitude
        if not np.any(axis):
            raise vals.fail(axis_el, "<axis xyz> is zero; give the joint's direction")
        axis = vals.unit(axis_el, "xyz", axis)
    align = Transform(q=quat_between((1.0, 0.0, 0.0), axis))
    joint.parent_pose = origin * align
    joint.child_pose = align
    prismatic = jtype == "prismatic"
    joint.set_joint_type(JointType.PRISMATIC if prismatic else JointType.REVOLUTE)
    ax = Axis.X if prismatic else Axis.TWIST

    limit = el.find("limit")
    motion = Motion.FREE
    if limit is not None and jtype != "continuous":
        lower, upper = _limit_bound(vals, limit, "lower"), _limit_bound(vals, limit, "upper")
        if lower is None and upper is None:
            warnings.warn(
                f"{vals.where(limit)}: lower and upper beyond 1e15 in magnitude; loaded as an unlimited joint",
                stacklevel=4,
            )
        else:
            if lower is None or upper is None:
                warnings.warn(
                    f"{vals.where(limit)}: a bound beyond 1e15 in magnitude is clamped to +-1e15", stacklevel=4
                )
                lower = -MAX_MAGNITUDE if lower is None else lower
                upper = MAX_MAGNITUDE if upper is None else upper
            if lower < upper:
                motion = Motion.LIMITED
                if not prismatic and (lower < -2 * math.pi or upper > 2 * math.pi):
                    joint.set_joint_type(JointType.REVOLUTE_UNWRAPPED)  # wrapped positions stay in [-2pi, 2pi]
                joint.set_limit_params(ax, Limit(lower, upper))
            elif lower > upper:
                raise vals.fail(limit, f"lower {lower} > upper {upper}; swap them")
            else:
                warnings.warn(
                    f"{vals.where(limit)}: lower == upper == {lower}; loaded as an unlimited joint", stacklevel=4
                )
    joint.set_motion(ax, motion)
    if limit is not None:
        effort = vals.number(limit, "effort", 0.0, minimum=0.0)
        velocity = vals.number(limit, "velocity", 0.0, minimum=0.0)
        if effort > 0:
            joint.set_drive_params(ax, Drive(0.0, 0.0, effort, DriveType.FORCE))
        if velocity > 0:
            joint.set_max_joint_velocity(ax, velocity)
    dyn = el.find("dynamics")
    if dyn is not None:
        damping = vals.number(dyn, "damping", 0.0, minimum=0.0)
        friction = vals.number(dyn, "friction", 0.0, minimum=0.0)
        with vals.context(dyn):
            joint.set_friction_params(ax, FrictionParams(friction, friction, damping))
    mimic = el.find("mimic")
    if mimic is not None:
        ref = mimic.get("joint")
        if not ref:
            raise vals.fail(mimic, "attribute joint is missing; name the joint to follow")
        tags.append((jname, ref, vals.number(mimic, "multiplier", 1.0), vals.number(mimic, "offset", 0.0)))
