"""URDF import: `load_urdf(path, fix_base=True, package_dirs=())` builds an `Articulation`.

Mapping (URDF spec, wiki.ros.org/urdf/XML, to PhysX's model, specs/physx-articulations-guide.txt):
* Each URDF link becomes a link whose actor frame is the URDF link frame; `<inertial>` gives mass, COM and the
  inertia tensor (diagonalized into principal moments and a COM frame).
* A moving joint's frames are chosen so that its URDF axis is the joint frame's x axis (TWIST for revolute, X for
  prismatic), as omni.physx does: parent_pose = origin * R, child_pose = R with R taking x onto the axis. Joint
  positions therefore keep the URDF's sign and zero.
* revolute -> REVOLUTE, LIMITED by [lower, upper]; continuous -> REVOLUTE, FREE; prismatic -> PRISMATIC; fixed ->
  FIX; floating -> a floating base (only between a world link and the root). `<limit effort>` becomes the axis
  drive's max_force (with DRIVE_LIMITS_ARE_FORCES set, so it is a force), `<limit velocity>` the max joint velocity,
  `<dynamics damping friction>` the viscous coefficient and the static/dynamic effort of the friction params.
* `<mimic>` is kept on `Articulation.urdf_mimics` as (joint, reference joint, multiplier, offset).
* Collision `box/sphere/cylinder/capsule/mesh` become shapes; `package://pkg/rest` and relative file names are
  resolved next to the file (walking up its folders) and through `package_dirs`.
A missing root, a link with two parents, a cycle or an unsupported joint type raises `UrdfError` naming the element.
"""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import ArticError, UrdfError
from ..math.np_spatial import Transform, quat_between, quat_from_rpy, quat_to_matrix
from .articulation import Articulation, Drive, FrictionParams, Limit
from .shapes import Box, Capsule, Cylinder, Mesh, Sphere
from .types import ArticulationFlag, Axis, DriveType, JointType, Motion

_X_TO_Z = quat_between((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))  # URDF cylinders lie along z, artic's along x


def _floats(text: str | None, n: int, default, where: str) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        v = np.array([float(t) for t in text.split()], dtype=float)
    except ValueError:
        raise UrdfError(f"{where}: cannot read numbers from '{text}'") from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise UrdfError(f"{where}: expected {n} finite numbers, got '{text}'")
    return v


def _attr_float(el, name: str, default, where: str) -> float:
    text = el.get(name)
    if text is None:
        return default
    try:
        v = float(text)
    except ValueError:
        raise UrdfError(f"{where}: attribute {name}='{text}' is not a number") from None
    if not math.isfinite(v):
        raise UrdfError(f"{where}: attribute {name}='{text}' is not finite")
    return v


def _origin(el, where: str) -> Transform:
    o = el.find("origin") if el is not None else None
    if o is None:
        return Transform()
    xyz = _floats(o.get("xyz"), 3, (0, 0, 0), where + " <origin xyz>")
    rpy = _floats(o.get("rpy"), 3, (0, 0, 0), where + " <origin rpy>")
    return Transform(xyz, quat_from_rpy(*rpy))


class _Resolver:
    """Finds mesh files named by `package://pkg/rest`, `file://`, absolute or relative paths."""

    def __init__(self, urdf_path: Path, package_dirs):
        self.base = urdf_path.parent
        self.roots = [Path(d) for d in package_dirs] + list(urdf_path.parents)

    def __call__(self, uri: str, where: str) -> str:
        if uri.startswith("file://"):
            uri = uri[len("file://"):]
        if uri.startswith("package://"):
            pkg, _, rest = uri[len("package://"):].partition("/")
            for root in self.roots:
                for cand in (root / pkg / rest, root / rest if root.name == pkg else None):
                    if cand is not None and cand.exists():
                        return str(cand)
            raise UrdfError(f"{where}: cannot resolve '{uri}': no folder '{pkg}' next to the URDF or in "
                            "package_dirs; pass package_dirs=[folder containing '{pkg}']")
        path = Path(uri) if os.path.isabs(uri) else self.base / uri
        if not path.exists():
            raise UrdfError(f"{where}: mesh file '{uri}' not found (looked at {path})")
        return str(path)


def _geometry_shape(geom, pose: Transform, resolve: _Resolver, where: str):
    if geom is None or len(geom) == 0:
        raise UrdfError(f"{where}: <geometry> is empty")
    g = geom[0]
    if g.tag == "box":
        size = _floats(g.get("size"), 3, None, where + " <box size>")
        return Box(tuple(0.5 * size), local_pose=pose)
    if g.tag == "sphere":
        return Sphere(_attr_float(g, "radius", None, where + " <sphere>"), local_pose=pose)
    if g.tag in ("cylinder", "capsule"):
        radius = _attr_float(g, "radius", None, f"{where} <{g.tag}>")
        length = _attr_float(g, "length", None, f"{where} <{g.tag}>")
        if radius is None or length is None:
            raise UrdfError(f"{where}: <{g.tag}> needs radius and length")
        cls = Cylinder if g.tag == "cylinder" else Capsule
        return cls(radius, 0.5 * length, local_pose=pose * Transform(q=_X_TO_Z))
    if g.tag == "mesh":
        filename = g.get("filename")
        if not filename:
            raise UrdfError(f"{where}: <mesh> has no filename")
        scale = tuple(_floats(g.get("scale"), 3, (1, 1, 1), where + " <mesh scale>"))
        try:  # the mesh file is read and checked here, at load
            return Mesh(resolve(filename, where), scale, local_pose=pose)
        except UrdfError:
            raise
        except ArticError as e:
            raise UrdfError(f"{where}: {e}") from None
    raise UrdfError(f"{where}: unsupported geometry <{g.tag}>; use box, sphere, cylinder, capsule or mesh")


def read_xml_root(path: Path, kind: str, tag: str, error):
    """The root element of an XML robot file, or `error` naming the file (missing, not XML, wrong top element)."""
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise error(f"{kind} file '{path}' not found") from None
    except ET.ParseError as e:
        raise error(f"{kind} file '{path}' is not valid XML: {e}") from None
    if root.tag != tag:
        raise error(f"{kind} file '{path}': the top element is <{root.tag}>, expected <{tag}>")
    return root


def load_urdf(path, fix_base: bool = True, package_dirs=(), name: str | None = None,
              repair_inertia: bool = False, mimic: bool = True, self_collision: bool = False) -> Articulation:
    """Load a URDF file as an articulation. `fix_base=False` gives a floating base (the root link free in space).

    An `<inertia>` that is not positive semi-definite is refused unless `repair_inertia=True`, which raises its
    negative principal moments to 1e-3 of the largest one (with a warning): a repair of bad data, not physics.
    `<mimic joint=ref multiplier=m offset=o>` on joint A (q_A = m q_ref + o) becomes a hard mimic joint with gear
    ratio -m and offset -o (`mimic=False` only records the tags in `urdf_mimics`). `<collision>` geometries become
    shapes; collisions between links of the robot are off unless `self_collision=True` (the convex hulls of
    neighbouring meshes of most robot descriptions overlap; Isaac Sim's importer makes the same choice)."""
    path = Path(path)
    root_el = read_xml_root(path, "URDF", "robot", UrdfError)
    try:
        art = _build(root_el, path, fix_base, package_dirs, name, repair_inertia)
        if mimic:
            _create_mimic_joints(art, path)
        art.set_articulation_flag(ArticulationFlag.DISABLE_SELF_COLLISION, not self_collision)
        return art
    except UrdfError:
        raise
    except ArticError as e:
        raise UrdfError(f"URDF file '{path}': {e}") from None


def _build(robot, path: Path, fix_base: bool, package_dirs, name, repair_inertia) -> Articulation:
    resolve = _Resolver(path, package_dirs)
    links = {}
    for el in robot.findall("link"):
        lname = el.get("name")
        if not lname:
            raise UrdfError(f"URDF '{path}': a <link> has no name")
        if lname in links:
            raise UrdfError(f"URDF '{path}': link '{lname}' is defined twice")
        links[lname] = el
    if not links:
        raise UrdfError(f"URDF '{path}': the robot has no <link> elements")

    joints, child_of = {}, {}
    for el in robot.findall("joint"):
        jname = el.get("name")
        where = f"URDF '{path}': joint '{jname}'"
        parent_el, child_el = el.find("parent"), el.find("child")
        if parent_el is None or child_el is None:
            raise UrdfError(f"{where}: needs <parent link=...> and <child link=...>")
        parent, child = parent_el.get("link"), child_el.get("link")
        for ln in (parent, child):
            if ln not in links:
                raise UrdfError(f"{where}: refers to unknown link '{ln}'")
        if child in child_of:
            raise UrdfError(f"{where}: link '{child}' already has parent joint '{child_of[child][0]}'; "
                            "a URDF must be a tree (close loops with loop joints instead)")
        child_of[child] = (jname, parent, el)
        joints[jname] = el
    roots = [ln for ln in links if ln not in child_of]
    if len(roots) != 1:
        raise UrdfError(f"URDF '{path}': expected one root link, found {len(roots)} ({roots[:5]}); "
                        "the links must form one tree")
    children = {ln: [] for ln in links}
    for ln, (_, parent, _) in child_of.items():
        children[parent].append(ln)

    # a massless root joined by a floating or fixed joint to a single child is a "world" placeholder
    root = roots[0]
    floating_world = False
    if links[root].find("inertial") is None and len(children[root]) == 1:
        only = children[root][0]
        jtype = child_of[only][2].get("type")
        if jtype == "floating":
            floating_world = True
            root = only
        elif jtype == "fixed" and root == "world":
            root = only

    art = Articulation(name or robot.get("name") or path.stem)
    if fix_base and not floating_world:
        art.set_articulation_flag(ArticulationFlag.FIX_BASE, True)
    art.set_articulation_flag(ArticulationFlag.DRIVE_LIMITS_ARE_FORCES, True)

    # create links in depth-first document order; PhysX indexing re-orders them breadth-first
    root_pose = Transform() if root == roots[0] else _origin(child_of[root][2], f"joint '{child_of[root][0]}'")
    stack = [(root, None, root_pose)]
    while stack:
        lname, parent_link, pose = stack.pop()
        link = art.create_link(parent_link, pose, name=lname)
        _fill_link(link, links[lname], resolve, f"URDF '{path}': link '{lname}'", repair_inertia)
        if parent_link is not None:
            jname, _, jel = child_of[lname]
            _fill_joint(art, link.inbound_joint, jname, jel, f"URDF '{path}': joint '{jname}'")
        for child in reversed(children[lname]):
            jel = child_of[child][2]
            stack.append((child, link, pose * _origin(jel, f"joint '{child_of[child][0]}'")))
    return art


def _create_mimic_joints(art, path):
    for jname, ref, multiplier, offset in art.urdf_mimics:
        where = f"URDF '{path}': joint '{jname}' <mimic>"
        names = {j.name: j for j in (lk.inbound_joint for lk in art.get_links()[1:])}
        if ref not in names:
            # xacro output sometimes drops the prefix of the reference ('index_q1' for 'Left_index_q1'): accept the
            # one joint whose name is the mimic joint's prefix plus the reference
            matches = [n for n in names if n.endswith(ref) and jname.startswith(n[: len(n) - len(ref)])]
            if len(matches) != 1:
                raise UrdfError(f"{where}: refers to unknown joint '{ref}'")
            warnings.warn(f"{where}: refers to unknown joint '{ref}'; using '{matches[0]}' (the mimic joint's "
                          "prefix)", stacklevel=3)
            ref = matches[0]
        a, b = names[jname], names[ref]
        if not a.dof_axes() or not b.dof_axes():
            raise UrdfError(f"{where}: both joints must move (the mimic or its reference is fixed)")
        art.create_mimic_joint(a, a.dof_axes()[0], b, b.dof_axes()[0], -multiplier, -offset)


def _repair(tensor: np.ndarray, where: str, repair: bool) -> np.ndarray:
    moments, axes = np.linalg.eigh(tensor)
    scale = max(abs(moments).max(), 1e-12)
    if moments.min() >= -1e-6 * scale:  # round-off, as Link.set_mass_and_inertia_tensor accepts
        return tensor
    floor = 1e-3 * scale
    if not repair:
        raise UrdfError(f"{where}: <inertia> is not positive semi-definite (principal moments {moments}); "
                        "fix the <inertial> or load with repair_inertia=True")
    warnings.warn(f"{where}: <inertia> is not positive semi-definite (principal moments {moments}); "
                  f"negative moments raised to {floor:.3g}", stacklevel=5)
    return axes @ np.diag(np.maximum(moments, floor)) @ axes.T


def _fill_link(link, el, resolve, where, repair_inertia):
    inertial = el.find("inertial")
    if inertial is not None:
        origin = _origin(inertial, where + " <inertial>")
        mass_el = inertial.find("mass")
        mass = _attr_float(mass_el, "value", 0.0, where + " <mass>") if mass_el is not None else 0.0
        i_el = inertial.find("inertia")
        t = np.zeros((3, 3))
        if i_el is not None:
            g = {k: _attr_float(i_el, k, 0.0, where + " <inertia>") for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            t = np.array([[g["ixx"], g["ixy"], g["ixz"]],
                          [g["ixy"], g["iyy"], g["iyz"]],
                          [g["ixz"], g["iyz"], g["izz"]]])
        r = quat_to_matrix(origin.q)
        link.set_mass_and_inertia_tensor(mass, origin.p, _repair(r @ t @ r.T, where, repair_inertia))
    else:
        link.set_mass_and_inertia_tensor(0.0, (0, 0, 0), np.zeros((3, 3)))
    for k, col in enumerate(el.findall("collision")):
        shape = _geometry_shape(col.find("geometry"), _origin(col, where), resolve, f"{where} <collision> {k}")
        shape.name = col.get("name") or f"{link.name}_collision{k}"
        link.attach_shape(shape)


def _fill_joint(art, joint, jname, el, where):
    jtype = el.get("type")
    joint.name = jname
    origin = _origin(el, where)
    if jtype == "fixed":
        joint.set_joint_type(JointType.FIX)
        joint.parent_pose = origin
        joint.child_pose = Transform()
        if el.find("mimic") is not None:
            warnings.warn(f"{where}: <mimic> on a fixed joint is ignored (a fixed joint cannot follow another)",
                          stacklevel=4)
        return
    if jtype not in ("revolute", "continuous", "prismatic"):
        raise UrdfError(f"{where}: joint type '{jtype}' is not supported inside an articulation "
                        "(supported: revolute, continuous, prismatic, fixed; floating only at the root)")
    axis_el = el.find("axis")
    axis = _floats(axis_el.get("xyz") if axis_el is not None else None, 3, (1, 0, 0), where + " <axis>")
    if np.linalg.norm(axis) < 1e-9:
        raise UrdfError(f"{where}: <axis xyz> is zero")
    align = Transform(q=quat_between((1.0, 0.0, 0.0), axis))
    joint.parent_pose = origin * align
    joint.child_pose = align
    prismatic = jtype == "prismatic"
    joint.set_joint_type(JointType.PRISMATIC if prismatic else JointType.REVOLUTE)
    ax = Axis.X if prismatic else Axis.TWIST

    limit = el.find("limit")
    motion = Motion.FREE
    if limit is not None and jtype != "continuous":
        lower = _attr_float(limit, "lower", 0.0, where + " <limit>")
        upper = _attr_float(limit, "upper", 0.0, where + " <limit>")
        if lower < upper:
            motion = Motion.LIMITED
            if not prismatic and (lower < -2 * math.pi or upper > 2 * math.pi):
                joint.set_joint_type(JointType.REVOLUTE_UNWRAPPED)  # wrapped positions must stay in [-2pi, 2pi]
            joint.set_limit_params(ax, Limit(lower, upper))
        elif lower > upper:
            raise UrdfError(f"{where}: <limit> lower {lower} > upper {upper}; swap them")
        else:
            warnings.warn(f"{where}: <limit> lower == upper == {lower}; loaded as an unlimited joint", stacklevel=4)
    joint.set_motion(ax, motion)
    if limit is not None:
        effort = _attr_float(limit, "effort", 0.0, where + " <limit>")
        velocity = _attr_float(limit, "velocity", 0.0, where + " <limit>")
        if effort > 0:
            joint.set_drive_params(ax, Drive(0.0, 0.0, effort, DriveType.FORCE))
        if velocity > 0:
            joint.set_max_joint_velocity(ax, velocity)
    dyn = el.find("dynamics")
    if dyn is not None:
        damping = _attr_float(dyn, "damping", 0.0, where + " <dynamics>")
        friction = _attr_float(dyn, "friction", 0.0, where + " <dynamics>")
        joint.set_friction_params(ax, FrictionParams(friction, friction, damping))
    mimic = el.find("mimic")
    if mimic is not None:
        ref = mimic.get("joint")
        if not ref:
            raise UrdfError(f"{where}: <mimic> has no joint attribute")
        art.urdf_mimics.append((jname, ref, _attr_float(mimic, "multiplier", 1.0, where + " <mimic>"),
                                _attr_float(mimic, "offset", 0.0, where + " <mimic>")))
