"""`load_mjcf`: MuJoCo MJCF models as artic articulations and static actors.

Supported: <compiler angle meshdir inertiafromgeom>, <option timestep gravity>, nested <default> classes with
childclass, <worldbody> geoms (static) and bodies, joints hinge/slide/ball/free, geoms plane/sphere/capsule/box/
cylinder/mesh (STL/OBJ), size or fromto, pos/quat/axisangle/euler/zaxis, <inertial> or geom-derived mass
(density or mass), joint range/limited, damping, armature, frictionloss, stiffness, contype/conaffinity, friction,
margin, and <position>/<velocity>/<motor> actuators.

How MJCF maps onto PhysX-style articulations:
* A body with several hinge/slide joints becomes a chain of links, one joint each (MuJoCo composes them in order
  about axes that turn with the previous joints, which is what a chain does); the extra links are massless but
  for a 1e-6 kg / 1e-9 kg m^2 regularization and sit at the body frame. A body and its parent body never collide
  (MuJoCo's rule), also across such chains (`Articulation.disable_collision`).
* A top-level body with a free joint is a floating base; any other top-level body hangs from a fixed root at the
  world origin. Ball joints are spherical joints with three free axes (their cone range is not mapped).
* Joint damping is PhysX's viscous joint friction, frictionloss its static and dynamic friction effort, joint
  stiffness a force drive towards springref (0), armature the joint armature.
* <position kp> is a force drive of stiffness kp; <velocity kv> one of damping kv; <motor> adds nothing to the model
  (apply its gear times the control as a joint force). All are listed in `MjcfModel.actuators`.
* Contact: contype/conaffinity are the shapes' collision group/mask (self-collision between bodies follows them,
  as in MuJoCo), friction's first value both Coulomb coefficients, margin the contact offset. MuJoCo's soft-contact
  parameters (solref, solimp) have no PhysX counterpart and are ignored.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ArticError, UrdfError
from ..math.np_spatial import Transform, quat_between, quat_from_axis_angle, quat_mul
from .actors import RigidStatic
from .articulation import Articulation, Drive, FrictionParams, Limit
from .shapes import Box, Capsule, Cylinder, Material, Mesh, Plane, Sphere, mass_properties
from .types import ArticulationFlag, Axis, DriveType, JointType, Motion
from .urdf import read_xml_root


class MjcfError(UrdfError):
    """A malformed or unsupported MJCF file (an ArticError)."""


@dataclass
class Actuator:
    name: str
    kind: str  # "motor", "position" or "velocity"
    joint: str
    gear: float
    ctrlrange: tuple | None


@dataclass
class MjcfModel:
    """What an MJCF file describes: articulations (one per top-level body tree), static actors (worldbody geoms),
    the file's time step and gravity, and its actuators."""

    name: str
    articulations: list = field(default_factory=list)
    statics: list = field(default_factory=list)
    timestep: float = 0.002
    gravity: tuple = (0.0, 0.0, -9.81)
    actuators: list = field(default_factory=list)

    def add_to(self, scene):
        for s in self.statics:
            scene.add_actor(s)
        for a in self.articulations:
            scene.add_articulation(a)
        return scene


_BUILTIN = {
    "joint": {"type": "hinge", "axis": "0 0 1", "pos": "0 0 0", "damping": "0", "armature": "0",
              "frictionloss": "0", "stiffness": "0", "springref": "0"},
    "geom": {"type": "sphere", "contype": "1", "conaffinity": "1", "friction": "1 0.005 0.0001", "margin": "0",
             "density": "1000", "pos": "0 0 0"},
}


def load_mjcf(path) -> MjcfModel:
    path = Path(path)
    root = read_xml_root(path, "MJCF", "mujoco", MjcfError)
    try:
        return _Loader(root, path).model
    except MjcfError:
        raise
    except ArticError as e:
        raise MjcfError(f"MJCF file '{path}': {e}") from None
    except (ValueError, KeyError) as e:
        raise MjcfError(f"MJCF file '{path}': malformed value ({e})") from None


def _vec(text, n=None):
    v = np.array([float(x) for x in text.split()], dtype=float)
    if n is not None and len(v) != n:
        raise ValueError(f"expected {n} numbers, got '{text}'")
    return v


class _Loader:
    def __init__(self, root, path: Path):
        self.path = path
        comp = root.find("compiler")
        comp = comp.attrib if comp is not None else {}
        self.degrees = comp.get("angle", "degree") == "degree"
        self.meshdir = path.parent / comp.get("meshdir", "")
        self.inertia_from_geom = comp.get("inertiafromgeom", "auto")
        self.defaults = {}
        self._read_defaults(root.find("default"), "main", {})
        self.meshes = {}
        for asset in root.findall("asset"):
            for m in asset.findall("mesh"):
                name = m.get("name") or Path(m.get("file", "")).stem
                self.meshes[name] = (self.meshdir / m.get("file", ""), _vec(m.get("scale", "1 1 1"), 3))
        opt = root.find("option")
        model = MjcfModel(root.get("model", path.stem))
        if opt is not None:
            model.timestep = float(opt.get("timestep", model.timestep))
            model.gravity = tuple(_vec(opt.get("gravity", "0 0 -9.81"), 3))
        self.model = model
        world = root.find("worldbody")
        if world is None:
            raise MjcfError(f"MJCF file '{path}' has no <worldbody>")
        static = RigidStatic(name="world")
        for k, g in enumerate(world.findall("geom")):
            static.attach_shape(self._shape(g, "main", f"world geom {k}")[0])
        if static.shapes:
            model.statics.append(static)
        self.joint_names = {}
        for body in world.findall("body"):
            model.articulations.append(self._tree(body))
        self._actuators(root.find("actuator"))

    # -- defaults ---------------------------------------------------------------------------------------------------
    def _read_defaults(self, el, name, inherited):
        if el is None:
            self.defaults.setdefault("main", {})
            return
        mine = {tag: dict(attrs) for tag, attrs in inherited.items()}
        for child in el:
            if child.tag != "default":
                mine.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[name] = mine
        for child in el.findall("default"):
            self._read_defaults(child, child.get("class", name), mine)

    def _attrs(self, el, cls):
        """An element's attributes over its class defaults over MuJoCo's built-ins."""
        a = dict(_BUILTIN.get(el.tag, {}))
        a.update(self.defaults.get(el.get("class", cls), {}).get(el.tag, {}))
        a.update(el.attrib)
        return a

    # -- frames -------------------------------------------------------------------------------------------------------
    def _angle(self, x):
        return math.radians(x) if self.degrees else x

    def _quat(self, a):
        """MJCF orientation (quat w x y z, axisangle, euler xyz, zaxis) as artic's (x, y, z, w)."""
        if "quat" in a:
            w, x, y, z = _vec(a["quat"], 4)
            q = np.array([x, y, z, w])
            return q / np.linalg.norm(q)
        if "axisangle" in a:
            v = _vec(a["axisangle"], 4)
            return quat_from_axis_angle(v[:3] / np.linalg.norm(v[:3]), self._angle(v[3]))
        if "euler" in a:
            e = _vec(a["euler"], 3)
            q = np.array([0.0, 0.0, 0.0, 1.0])
            for k in range(3):  # MuJoCo's default eulerseq "xyz": intrinsic rotations about moving axes
                q = quat_mul(q, quat_from_axis_angle(np.eye(3)[k], self._angle(e[k])))
            return q
        if "zaxis" in a:
            return quat_between(np.array([0.0, 0.0, 1.0]), _vec(a["zaxis"], 3))
        return np.array([0.0, 0.0, 0.0, 1.0])

    def _frame(self, a):
        return Transform(_vec(a.get("pos", "0 0 0"), 3), self._quat(a))

    # -- geoms --------------------------------------------------------------------------------------------------------
    def _shape(self, g, cls, owner):
        """(shape, mass or None) of a <geom>."""
        a = self._attrs(g, cls)
        kind = a.get("type", "sphere")
        size = _vec(a.get("size", "0"))
        pose = self._frame(a)
        along_z = Transform(q=quat_between(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])))
        name = a.get("name", owner)
        if "fromto" in a and kind in ("capsule", "cylinder", "box"):
            ft = _vec(a["fromto"], 6)
            axis = ft[3:] - ft[:3]
            half = 0.5 * np.linalg.norm(axis)
            pose = Transform(0.5 * (ft[:3] + ft[3:]), quat_between(np.array([1.0, 0.0, 0.0]), axis / (2 * half)))
            if kind == "box":
                shape = Box((half, size[0], size[1] if len(size) > 1 else size[0]))
            else:
                shape = (Capsule if kind == "capsule" else Cylinder)(float(size[0]), half)
        elif kind == "sphere":
            shape = Sphere(float(size[0]))
        elif kind in ("capsule", "cylinder"):
            shape = (Capsule if kind == "capsule" else Cylinder)(float(size[0]), float(size[1]))
            pose = pose * along_z
        elif kind == "box":
            shape = Box(tuple(size[:3]))
        elif kind == "plane":
            shape = Plane()
            pose = pose * Transform(q=quat_between(np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])))
        elif kind == "mesh":
            file, scale = self.meshes[a["mesh"]]
            try:  # the mesh file is read and checked here, at load
                shape = Mesh(str(file), tuple(scale), name=name)
            except ArticError as e:
                body = "world" if owner.startswith("world geom") else owner.rsplit("_geom", 1)[0]
                raise MjcfError(f"MJCF file '{self.path}': body '{body}' geom '{name}': {e}") from None
        elif kind == "ellipsoid":
            warnings.warn(f"MJCF '{self.path.name}': ellipsoid geom '{name}' collides as the sphere of its largest "
                          "radius", RuntimeWarning, stacklevel=4)
            shape = Sphere(float(size.max()))
        else:
            raise MjcfError(f"MJCF file '{self.path}': geom '{name}' has unsupported type '{kind}'")
        shape.name = name  # first, so that a bad pose is reported with the geom's name
        shape.local_pose = pose
        mu = float(_vec(a["friction"])[0])
        shape.material = Material(mu, mu, 0.0)
        shape.contact_offset = float(a["margin"])
        shape.collision_group = int(a["contype"])
        shape.collision_mask = int(a["conaffinity"])
        mass = float(a["mass"]) if "mass" in a else None
        return shape, (mass, float(a["density"]))

    # -- bodies -------------------------------------------------------------------------------------------------------
    def _tree(self, body) -> Articulation:
        name = body.get("name", "body")
        art = Articulation(name)
        cls = body.get("childclass", "main")
        joints = [j for j in body if j.tag in ("joint", "freejoint")]
        free = any(j.tag == "freejoint" or self._attrs(j, cls).get("type") == "free" for j in joints)
        if free:
            root = art.create_link(None, self._frame(self._attrs(body, cls)), name)
            self._fill_link(root, body, cls)
            parent = root
        else:
            art.set_articulation_flag(ArticulationFlag.FIX_BASE)
            world = art.create_link(None, Transform(), f"{name}_world")
            world.mass = 0.0
            world.inertia = (0.0, 0.0, 0.0)
            parent = self._body(art, world, body, "main", Transform())
        for child in body.findall("body"):
            if free:
                self._body(art, parent, child, cls, Transform(), parent)
        art.mjcf_root_free = free
        return art

    def _body(self, art, parent_link, body, cls, parent_offset, parent_body_link=None):
        """Links for `body` (one per joint), hung below `parent_link`; returns the body's link."""
        cls = body.get("childclass", cls)
        name = body.get("name", f"body{len(art.get_links())}")
        frame = parent_offset * self._frame(self._attrs(body, cls))
        joints = [j for j in body if j.tag == "joint"]
        world_pose = parent_link.initial_pose * frame
        link = parent_link
        if not joints:
            link = art.create_link(parent_link, world_pose, name)
            link.inbound_joint.set_joint_type(JointType.FIX)
            link.inbound_joint.parent_pose = frame
            link.inbound_joint.child_pose = Transform()
        for k, j in enumerate(joints):
            a = self._attrs(j, cls)
            last = k == len(joints) - 1
            lname = name if last else f"{name}_{a.get('name', k)}"
            link = self._joint_link(art, link, world_pose, lname, a, frame if k == 0 else Transform(), body)
            if not last:
                link.mass = 1e-6
                link.inertia = (1e-9, 1e-9, 1e-9)
        self._fill_link(link, body, cls)
        if parent_body_link is not None and link.inbound_joint is not None and link.parent is not parent_body_link:
            art.disable_collision(link, parent_body_link)  # MuJoCo's parent-child exclusion across joint chains
        for child in body.findall("body"):
            self._body(art, link, child, cls, Transform(), link)
        return link

    def _joint_link(self, art, parent_link, world_pose, lname, a, parent_frame, body):
        kind = a.get("type", "hinge")
        jname = a.get("name", lname)
        if kind == "free":
            raise MjcfError(f"MJCF file '{self.path}': free joint '{jname}' below the top level of the tree")
        link = art.create_link(parent_link, world_pose, lname)
        joint = link.inbound_joint
        joint.name = jname
        self.joint_names[jname] = (art, joint)
        anchor = _vec(a["pos"], 3)
        axis = _vec(a["axis"], 3)
        axis = axis / np.linalg.norm(axis)
        jframe = Transform(anchor, quat_between(np.array([1.0, 0.0, 0.0]), axis))
        joint.parent_pose = parent_frame * jframe
        joint.child_pose = jframe
        joint.friction_coefficient = 0.0
        if kind == "ball":
            joint.set_joint_type(JointType.SPHERICAL)
            axes = (Axis.TWIST, Axis.SWING1, Axis.SWING2)
            joint.parent_pose = parent_frame * Transform(anchor)
            joint.child_pose = Transform(anchor)
        elif kind == "slide":
            joint.set_joint_type(JointType.PRISMATIC)
            axes = (Axis.X,)
        elif kind == "hinge":
            joint.set_joint_type(JointType.REVOLUTE)
            axes = (Axis.TWIST,)
        else:
            raise MjcfError(f"MJCF file '{self.path}': joint '{jname}' has unsupported type '{kind}'")
        rng = _vec(a["range"], 2) if "range" in a else None
        limited = a.get("limited", "auto")
        limited = rng is not None and (limited == "true" or limited == "auto")
        for ax in axes:
            joint.set_motion(ax, Motion.LIMITED if limited and kind != "ball" else Motion.FREE)
            if limited and kind != "ball":
                lo, hi = (self._angle(rng[0]), self._angle(rng[1])) if kind == "hinge" else (rng[0], rng[1])
                joint.set_limit_params(ax, Limit(float(lo), float(hi)))
            joint.set_armature(ax, float(a["armature"]))
            damping, loss = float(a["damping"]), float(a["frictionloss"])
            if damping > 0.0 or loss > 0.0:
                joint.set_friction_params(ax, FrictionParams(loss, loss, damping))
            k = float(a["stiffness"])
            if k > 0.0:
                joint.set_drive_params(ax, Drive(k, 0.0, 1e30, DriveType.FORCE))
                joint.set_drive_target(ax, float(a["springref"]))
        return link

    def _fill_link(self, link, body, cls):
        """Shapes, and mass properties from <inertial> or from the geoms."""
        parts = []
        for k, g in enumerate(body.findall("geom")):
            shape, (mass, density) = self._shape(g, cls, f"{link.name}_geom{k}")
            link.attach_shape(shape)
            if not isinstance(shape, Mesh):
                parts.append((shape, mass, density))
        inertial = body.find("inertial")
        if inertial is not None and self.inertia_from_geom != "true":
            a = inertial.attrib
            frame = self._frame(a)
            if "diaginertia" in a:
                moments = _vec(a["diaginertia"], 3)
                link.set_mass_and_inertia_tensor(float(a["mass"]), frame.p, np.eye(3))  # frame first
                link.inertia = moments
                link.cmass_local_pose = frame
            else:
                xx, yy, zz, xy, xz, yz = _vec(a["fullinertia"], 6)
                link.set_mass_and_inertia_tensor(float(a["mass"]), frame.p,
                                                 np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
            return
        if not parts:  # MuJoCo gives such a body no mass; a tiny one keeps M positive definite
            link.mass = 1e-6
            link.inertia = (1e-9, 1e-9, 1e-9)
            return
        total, com, tensor = 0.0, np.zeros(3), np.zeros((3, 3))
        pieces = []
        for shape, mass, density in parts:
            m, c, i = mass_properties([shape], density, f"link '{link.name}'")
            if mass is not None:
                i *= mass / m
                m = mass
            pieces.append((m, c, i))
            total += m
            com += m * c
        com /= total
        for m, c, i in pieces:
            d = c - com
            tensor += i + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
        link.set_mass_and_inertia_tensor(total, com, tensor)

    def _actuators(self, el):
        if el is None:
            return
        for act in el:
            a = self._attrs(act, "main")
            jname = a.get("joint")
            if jname not in self.joint_names:
                warnings.warn(f"MJCF '{self.path.name}': actuator '{a.get('name')}' on '{jname}' is not a joint "
                              "actuator; skipped", RuntimeWarning, stacklevel=3)
                continue
            gear = float(_vec(a.get("gear", "1"))[0])
            rng = tuple(_vec(a["ctrlrange"], 2)) if "ctrlrange" in a else None
            self.model.actuators.append(Actuator(a.get("name", jname), act.tag, jname, gear, rng))
            _, joint = self.joint_names[jname]
            ax = joint.dof_axes()[0]
            if act.tag == "position":
                joint.set_drive_params(ax, Drive(float(a.get("kp", "1")) * gear, float(a.get("kv", "0")), 1e30,
                                                 DriveType.FORCE))
            elif act.tag == "velocity":
                joint.set_drive_params(ax, Drive(0.0, float(a.get("kv", "1")) * gear, 1e30, DriveType.FORCE))
