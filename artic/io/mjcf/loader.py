"""`load_mjcf`: MuJoCo MJCF models as artic articulations and static actors.

What is read, mapped, approximated and reported, element by element: docs/mjcf.md. This module reads the compiler,
options, defaults, assets and bodies (joints, geoms, masses: mass.py); the other modules of this package read the
sections (actuators.py, couplings.py, pairs.py, spatial.py, keyframes.py) and expand <include>, <attach>, <frame> and
<replicate> (sections.py, attach.py, frames.py). Errors: see `load_mjcf`.

How MJCF maps onto PhysX-style articulations:
* A body with several hinge/slide joints becomes a chain of links, one joint each (MuJoCo composes them in order about
  axes that turn with the previous joints, which is what a chain does); the extra links are massless but for a 1e-6 kg /
  1e-9 kg m^2 regularization and sit at the body frame; the body's geoms sit on its last link.
* Self-collision follows MuJoCo's body filter (its filterBodyPair, with filterparent enabled): bodies welded together (a
  body without joints is welded to its parent) never collide, and neither do a weld group and the weld group of its
  root's parent body, unless either is welded to the world. artic keeps the link pairs that rule excludes out of contact
  with `Articulation.disable_collision` (also across joint chains, where the two geom links are not parent and child).
  <exclude body1 body2> adds the pair of the two bodies' geom links; between two trees or with the world artic has no
  per-pair filter, so such an exclusion is dropped with a warning. artic's own rule that a link never collides with its
  parent link would go further in one case, a body with one joint (one link) below a parent body welded to the world (an
  arm's first link on its base: robosuite's Sawyer swings into it), which MuJoCo lets collide: those geom pairs are
  added as explicit contact pairs (pairs.py).
* A top-level body with a free joint is a floating base; any other top-level body hangs from a fixed root at the world
  origin. Ball joints are spherical joints with three free axes (their cone range is not mapped).
* Joint q is MuJoCo's qpos: the child frame is turned back by `ref`, so the body sits where the file puts it at q = ref
  (MuJoCo's qpos0), and range and springref need no shift. Joint stiffness, damping and springref are PassiveParams
  (passive.py), frictionloss a friction effort (soft with soft constraints: friction_softness), armature the joint's
  (a free joint's: root_armature). A range alone limits the joint (autolimits). <option>, defaults: see options.py.
* Actuators (motor, position, velocity, general) become drives and joint forces driven by `MjcfControl`; all are listed
  in `MjcfModel.actuators`, in file order (the ctrl columns): see actuators.py.
* Contact: contype/conaffinity are the shapes' collision group/mask (self-collision between bodies follows them, as in
  MuJoCo), friction's first value both Coulomb coefficients, combined by their maximum (MuJoCo's rule, PhysX's combine
  mode max), and the larger condim of the two (`Material.condim`: condim 1 on both, frictionless); a margin grows the
  shape (`_grow`: MuJoCo's geoms rest the sum of their margins apart; a mesh, which cannot grow, gets it as its rest
  offset) and the contact offset is 0 with MuJoCo's soft contacts (a contact exists only while the surfaces overlap,
  as MuJoCo's within its margin) or DETECTION_OFFSET with PhysX's hard rows (PhysX's default, a detection distance for
  their speculative rows). An ellipsoid collides as the convex polytope inscribed in it through ELLIPSOID_DIRECTIONS
  (exact at the ends of its axes). MuJoCo's soft-contact parameters (solref, solimp, solmix) are the materials' softness
  (geoms.py `soft_material`; constraints/softness.py).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...description.actors import RigidStatic
from ...description.articulation import Articulation
from ...description.articulation_joint import FrictionParams, Limit, PassiveParams
from ...enums import ArticulationFlag, Axis, JointType, Motion, SolverType
from ...errors import ArticError, MjcfError
from ...math.np_spatial import Transform, quat_between, quat_from_axis_angle, quat_from_matrix, quat_mul
from ..xml_values import MAX_MAGNITUDE, XmlValues, read_xml_root
from .actuators import Actuator, read_actuators
from .couplings import read_couplings
from .frames import expand_frames, expand_replicates
from .geoms import ELLIPSOID_DIRECTIONS, geom_shape, inline_mesh, report_condim
from .hfield import read_hfield
from .joint_rules import apply_spring_dampers, limit_with_margin, read_spring_damper
from .keyframes import Keyframe, QposEntry, get_qpos, qpos0, read_keyframes, set_keyframe
from .lengthrange import read_lengthrange_options
from .mass import MESH_INERTIA, MassRules
from .mocap import is_mocap, mocap_body, set_mocap
from .options import Options, apply_mujoco_defaults, disable_contacts, read_options
from .pairs import BUILTIN as PAIR_BUILTIN
from .pairs import collide_with_world_parents, read_pairs
from .report import report_unused
from .sections import expand_file, inherited_defaults
from .softness import read_softness

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ...sim.scene import Scene

__all__ = ["Actuator", "MjcfError", "MjcfModel", "load_mjcf"]


@dataclass
class MjcfModel:
    """What an MJCF file describes: articulations (one per top-level body tree), static actors (worldbody geoms),
    the file's time step and gravity, and its actuators."""

    name: str
    articulations: list = field(default_factory=list)
    statics: list = field(default_factory=list)
    timestep: float = 0.002
    gravity: tuple = (0.0, 0.0, -9.81)  # zero when <option><flag gravity="disable"> says so
    actuators: list = field(default_factory=list)
    options: Options = field(default_factory=Options)  # what <option> says (options.py)
    joints: list = field(default_factory=list)  # body joints from <equality> (couplings.py)
    joint_force_ranges: dict = field(default_factory=dict)  # joint name: (lo, hi) of its actuatorfrcrange [N or N m]
    qpos_layout: list = field(default_factory=list)  # MuJoCo's qpos order: keyframes.QposEntry per joint
    keyframes: list = field(default_factory=list)  # keyframes.Keyframe per <key>, file order
    mocap_bodies: dict = field(default_factory=dict)  # name: kinematic RigidDynamic per mocap body (mocap.py)
    spatial_tendons: dict = field(default_factory=dict)  # name: SpatialTendon (spatial.py), file order
    qpos_plans: dict = field(default_factory=dict, repr=False, compare=False)  # get_qpos's, by scene (keyframes.py)

    @property
    def solver_type(self) -> SolverType:
        """The solver that simulates the file's `<option solver>`: DIRECT for MuJoCo's Newton (its default) and CG,
        which solve to convergence, PGS for its PGS (options.py). Pass it to artic.Scene(..., solver_type=...)."""
        return SolverType.PGS if self.options.solver == "PGS" else SolverType.DIRECT

    def add_to(self, scene: Scene) -> Scene:
        """Add the static actors and articulations to `scene`; a scene gravity other than the file's (its <option
        gravity>, zero with <flag gravity='disable'>) is reported, since the scene's is the one that acts."""
        if not np.allclose(scene.gravity, self.gravity):
            warnings.warn(
                f"MJCF model '{self.name}': the scene's gravity {tuple(scene.gravity)} is not the file's "
                f"{self.gravity}; create the scene with gravity=model.gravity to simulate the file's",
                RuntimeWarning,
                stacklevel=2,
            )
        for s in self.statics:
            scene.add_actor(s)
        for a in self.articulations:
            scene.add_articulation(a)
        for b in self.mocap_bodies.values():
            scene.add_actor(b)
        for j in self.joints:  # after the articulations and mocap bodies: they join their links
            scene.add_joint(j)
        tendons = self.spatial_tendons
        if any(t.stiffness > 0.0 or t.damping > 0.0 for t in tendons.values()) or any(
            r.supported and (r.tendon in tendons or r.site is not None) for r in self.actuators
        ):  # spatial tendons' springs, muscles' passive forces, site servos act at ctrl 0 too: a control applies them
            from .control import MjcfControl

            MjcfControl(self, scene)
        return scene

    def set_keyframe(self, scene: Scene, key: int | str, envs: ArrayLike | None = None) -> Keyframe:
        """Put `envs` (default: all) of `scene` (the model added to it) in keyframe `key`, a name or an index of
        `keyframes`: roots and joints at its qpos and qvel. Returns the keyframe; `MjcfControl.set_keyframe` also
        sets its ctrl and act (keyframes.py)."""
        return set_keyframe(self, scene, key, envs)

    def get_qpos(self, scene: Scene) -> np.ndarray:
        """(E, nq) the state of every env of `scene` in MuJoCo's qpos layout (free roots' body position and w x y z
        quaternion, ball joints' quaternions, hinges and slides), to compare with MuJoCo's `data.qpos`."""
        return get_qpos(self, scene)

    def set_mocap(
        self,
        scene: Scene,
        name: str,
        pos: ArrayLike | None = None,
        quat: ArrayLike | None = None,
        envs: ArrayLike | None = None,
    ) -> None:
        """Put mocap body `name` in `envs` (default: all) at `pos` and `quat` (w, x, y, z), as MuJoCo's
        data.mocap_pos and data.mocap_quat (mocap.py)."""
        set_mocap(self, scene, name, pos, quat, envs)


_BUILTIN = {
    "joint": {
        "type": "hinge",
        "axis": "0 0 1",
        "pos": "0 0 0",
        "damping": "0",
        "armature": "0",
        "frictionloss": "0",
        "stiffness": "0",
        "springref": "0",
        "ref": "0",
    },
    "geom": {
        "type": "sphere",
        "contype": "1",
        "conaffinity": "1",
        "friction": "1 0.005 0.0001",
        "margin": "0",
        "density": "1000",
        "pos": "0 0 0",
    },
    "pair": PAIR_BUILTIN,
}
# elements whose content artic would drop: refused rather than ignored
_UNSUPPORTED = ("composite", "flexcomp")
_WORLD = -1  # the weld group of the world body and of the bodies welded to it
_ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")


def load_mjcf(path: os.PathLike | str, soft_constraints: bool = True) -> MjcfModel:
    """Load an MJCF file (see the module docstring for the mapping). soft_constraints: MuJoCo's soft contacts
    (geom and pair solref, solimp, solmix; option cone, impratio) become soft rows (description/softness.py); False
    keeps PhysX's hard rows and reports them.

    Every error is an `MjcfError` naming the file, the element (its name, or its index inside its nearest named
    ancestor) and the attribute: a missing, empty or non-XML file; a number that is malformed, of the wrong count,
    not finite or beyond 1e15 in magnitude (it would overflow float32 in the solver); a zero axis or quaternion;
    an undefined `class`/`childclass`; `compiler angle` other than degree/radian; a free joint on a nested body or
    beside other joints (MuJoCo refuses both); <composite>, <flexcomp> (their content would be dropped); an
    <attach> naming no model or body; a repeated or circular <include> (includes are expanded first, relative to
    the including file). A joint `range` bound beyond 1e15 means "unbounded": both beyond gives an unlimited joint,
    one is clamped to +-1e15, each with a warning. Axes are normalised after scaling by their largest component,
    so `0 0 1e200` is the z axis."""
    if not isinstance(soft_constraints, (bool, np.bool_)):
        raise MjcfError(f"load_mjcf: soft_constraints must be True or False, got {soft_constraints!r}")
    path, root = read_xml_root(path, "MJCF", "mujoco", MjcfError)
    folders = expand_file(root, path)  # sections.py: includes, <attach>, repeated sections
    try:
        loader = _Loader(root, path, folders, bool(soft_constraints))
    except MjcfError:
        raise
    except ArticError as e:
        raise MjcfError(f"MJCF file '{path}': {e}") from None
    except RecursionError:
        raise MjcfError(f"MJCF file '{path}': bodies are nested too deeply to load") from None
    report_unused(root, loader.v, loader.opts.soft)  # never silent: what artic does not use is warned about (report.py)
    return loader.model


class _Loader:
    def __init__(self, root, path: Path, folders: dict, soft: bool = True):
        self.path = path
        self.folders = folders  # included asset element -> its file's folder, as the main file sees it
        self.fitted = {}  # <geom> of a primitive fitted to a mesh -> (MuJoCo's size values, frame) (geoms.py)
        self.v = v = XmlValues(root, path, "MJCF", MjcfError)
        for el in root.iter():
            if el.tag in _UNSUPPORTED:
                raise v.fail(
                    el,
                    f"<{el.tag}> is not supported (its content would be dropped); expand it first, "
                    "e.g. by loading the file in MuJoCo and saving it with mj_saveLastXML",
                )
        self._compiler(root.find("compiler"))
        self.defaults = {}
        self._read_defaults(root.find("default"), "main", {})
        self.meshes, self.mesh_inertia = {}, {}
        self.mass = MassRules(self, root)
        for asset in root.findall("asset"):
            for m in asset.findall("mesh"):
                self._mesh_asset(m)
        self.hfields = {}
        for asset in root.findall("asset"):
            for h in asset.findall("hfield"):
                name, field_ = read_hfield(v, h)
                if name in self.hfields:
                    raise v.fail(h, f"height field '{name}' is defined twice; names must be unique")
                self.hfields[name] = field_
        self.opts = opts = read_options(v, root, soft)
        self.lengthrange = read_lengthrange_options(v, root)  # for muscles without one (actuators.py)
        comp = root.find("compiler")  # MuJoCo 3: a range without `limited` makes the joint limited
        self.autolimits = (
            comp is None or v.choice(comp, "autolimits", comp.get("autolimits", "true"), ("true", "false")) == "true"
        )
        model = MjcfModel(root.get("model", path.stem), timestep=opts.timestep, gravity=opts.gravity, options=opts)
        self.model = model
        world = root.find("worldbody")
        if world is None:
            raise MjcfError(f"MJCF file '{path}' has no <worldbody>")
        expand_replicates(self, world, root)  # frames.py: each copy becomes a <frame>
        self.written_pos = {}  # <body> in a <frame>: its pos as written (mass.py: a massless body's COM)
        expand_frames(self, world, "main")  # frames.py: <frame> children posed in the frame's parent
        v.reparent(root)
        for j in world:
            if j.tag in ("joint", "freejoint"):
                raise v.fail(j, "the world body cannot have joints; put the joint in a <body>")
        self.ellipsoids = []  # names of the ellipsoid geoms that collide as inscribed polytopes (`_ellipsoid`)
        self.gravcomp_unclamped = []  # joints with actuatorgravcomp and an actuatorfrcrange (`_force_range`)
        self.free_joint_unfollowed = []  # (tree, attribute) of free joints' frictionloss, stiffness
        self.angular_dropped = []  # condim 4/6 geoms and pairs without the pyramidal soft cone (geoms.py)
        self.geoms, self.geom_repeated = {}, set()  # <geom name>: (shape, margin grown by), for <pair>
        static = RigidStatic(name="world")
        for k, g in enumerate(world.findall("geom")):
            with v.context(g):
                static.attach_shape(self._shape(g, "main", f"world geom {k}", static=True))
        self.world_static = static  # also holds the planes and height fields of bodies welded to the world
        self.joint_names, self.free_joint_names = {}, set()
        self.ranges, self.spring_dampers = {}, []  # `_joint_link`: soft ranges before the margin; springdampers
        self.world_parents = []  # (articulation, link, parent link welded to the world): `_weld_filters`
        self.bodies = {"world": (None, None, _WORLD)}  # body name: (articulation, geom link, weld group)
        self.body_links = {}  # <body> element: its geom link (`_record`)
        for body in world.findall("body"):
            if is_mocap(self, body):
                rigid = mocap_body(self, body)
                model.mocap_bodies[rigid.name] = rigid
            else:
                model.articulations.append(self._tree(body))
        if static.shapes:
            if not opts.contact:
                disable_contacts(static)
            model.statics.insert(0, static)
        if len(model.articulations) == 1 and root.get("model"):
            # one body tree: the model's name ('ant'), not its root body's ('torso', in every Gymnasium robot)
            model.articulations[0].name = root.get("model")
        self.mass.finish()
        apply_spring_dampers(self.spring_dampers, opts.spring, opts.damper)
        for section in root.findall("contact"):
            self._contact(section)
        read_pairs(self, [p for section in root.findall("contact") for p in section.findall("pair")])
        collide_with_world_parents(self)
        model.joints = read_couplings(self, root)
        read_actuators(self, root.find("actuator"))  # actuators.py; after the tendons, which they may drive
        start = qpos0(model.qpos_layout)
        mocap0 = [(b.global_pose.p, np.roll(b.global_pose.q, 1)) for b in model.mocap_bodies.values()]
        model.keyframes = read_keyframes(
            v,
            root,
            model.qpos_layout,
            start,
            len(model.actuators),
            tuple(zip(*mocap0)) if mocap0 else ((), ()),
            sum(r.has_act for r in model.actuators),
        )
        report_condim(self)
        gravcomp = any(lk.gravity_scale != 1.0 for art in model.articulations for lk in art.get_links())
        if self.gravcomp_unclamped and gravcomp:
            warnings.warn(
                f"MJCF '{path.name}': {len(self.gravcomp_unclamped)} joint(s) (first "
                f"'{self.gravcomp_unclamped[0]}') have actuatorgravcomp and an actuatorfrcrange: the bodies' "
                "gravity compensation acts, but is not counted against the range as MuJoCo counts it",
                RuntimeWarning,
                stacklevel=3,
            )
        if self.free_joint_unfollowed:
            trees = sorted({t for t, _ in self.free_joint_unfollowed})
            names = sorted({n for _, n in self.free_joint_unfollowed})
            warnings.warn(
                f"MJCF '{path.name}': the free joint of {len(trees)} body tree(s) (first '{trees[0]}') has "
                f"{', '.join(names)}, which artic does not follow on a floating root (its damping and armature are "
                "followed: Articulation.root_damping, root_armature)",
                RuntimeWarning,
                stacklevel=3,
            )
        if self.ellipsoids:
            warnings.warn(
                f"MJCF '{path.name}': {len(self.ellipsoids)} ellipsoid geom(s) (first "
                f"'{self.ellipsoids[0]}') collide as the {len(ELLIPSOID_DIRECTIONS)}-vertex convex polytope "
                "inscribed in each (within 5.3 % of its radii); their mass properties are the ellipsoid's",
                RuntimeWarning,
                stacklevel=3,
            )

    def _compiler(self, comp):
        v = self.v
        self.degrees, self.eulerseq, self.inertia_from_geom, self.fitaabb = True, "xyz", "auto", False
        if comp is None:
            self.meshdir = self.path.parent
            return
        self.degrees = v.choice(comp, "angle", comp.get("angle", "degree"), ("degree", "radian")) == "degree"
        seq = comp.get("eulerseq", "xyz")
        if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
            raise v.fail(
                comp,
                f"attribute eulerseq='{seq}' must be three of x, y, z (lower case: rotating axes, "
                "upper case: fixed axes)",
            )
        self.eulerseq = seq
        v.choice(comp, "coordinate", comp.get("coordinate", "local"), ("local",))
        self.fitaabb = v.choice(comp, "fitaabb", comp.get("fitaabb", "false"), ("true", "false")) == "true"
        self.inertia_from_geom = v.choice(
            comp, "inertiafromgeom", comp.get("inertiafromgeom", "auto"), ("true", "false", "auto")
        )
        # MuJoCo: meshdir, else assetdir, relative to the model file
        self.meshdir = self.path.parent / comp.get("meshdir", comp.get("assetdir", ""))

    def _mesh_asset(self, m):
        v = self.v
        if "file" not in m.attrib:
            if "vertex" not in m.attrib:  # a plugin's (MuJoCo's SDF meshes) or nothing
                why = (
                    "is made by a MuJoCo plugin (a signed distance field), which artic does not run"
                    if m.find("plugin") is not None
                    else "has neither a file nor vertex data"
                )
                raise v.fail(m, f"{why}; give file='...' or vertex='...'")
            if not m.get("name"):
                raise v.fail(m, "a mesh given by its vertices needs a name")
            a = self._attrs(m, "main")
            self.meshes[m.get("name")] = (inline_mesh(v, m), v.numbers(m, "scale", 3, (1.0, 1.0, 1.0), a.get("scale")))
            self.mesh_inertia[m.get("name")] = v.choice(m, "inertia", a.get("inertia", "legacy"), MESH_INERTIA)
            return
        name = m.get("name") or Path(m.get("file")).stem
        if name in self.meshes:
            raise v.fail(m, f"mesh '{name}' is defined twice; mesh names must be unique")
        file = self.meshdir / m.get("file")
        if not file.is_file() and m in self.folders:  # MuJoCo's second place: under the included file's folder
            looked = file
            file = self.meshdir / self.folders[m] / m.get("file")
            if not file.is_file():
                raise v.fail(
                    m, f"attribute file='{m.get('file')}': mesh file not found (looked at {looked} and {file})"
                )
        if not file.is_file():
            raise v.fail(m, f"attribute file='{m.get('file')}': mesh file not found (looked at {file})")
        a = self._attrs(m, "main")  # <default><mesh scale inertia> apply too
        self.meshes[name] = (file, v.numbers(m, "scale", 3, (1.0, 1.0, 1.0), a.get("scale")))
        self.mesh_inertia[name] = v.choice(m, "inertia", a.get("inertia", "legacy"), MESH_INERTIA)
        if self.mesh_inertia[name] == "convex" and a.get("maxhullvert", "-1") != "-1":
            warnings.warn(
                f"{v.where(m)}: maxhullvert is not followed for inertia='convex': the mass properties are "
                "those of the full convex hull, MuJoCo's of a hull reduced to that many vertices",
                RuntimeWarning,
                stacklevel=4,
            )

    # -- defaults ---------------------------------------------------------------------------------------------------
    def _read_defaults(self, el, name, inherited):
        if el is None:
            self.defaults.setdefault("main", {})
            return
        if name in self.defaults:
            raise self.v.fail(el, f"default class '{name}' is defined twice; class names must be unique")
        mine = {tag: dict(attrs) for tag, attrs in inherited.items()}
        for child in el:
            if child.tag != "default":
                mine.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[name] = mine
        for child in el.findall("default"):
            if not child.get("class"):
                raise self.v.fail(child, "a nested <default> needs a class attribute")
            self._read_defaults(child, child.get("class"), inherited_defaults(child, mine))

    def _class(self, el, attr: str, fallback: str) -> str:
        """The default class named by `el`'s `attr` (class or childclass), `fallback` when absent."""
        cls = el.get(attr, fallback)
        if cls not in self.defaults:
            raise self.v.fail(el, f"attribute {attr}='{cls}' names no <default class>; define it or fix the name")
        return cls

    def _attrs(self, el, cls):
        """An element's attributes over its class defaults over MuJoCo's built-ins."""
        a = dict(_BUILTIN.get(el.tag, {}))
        a.update(self.defaults[self._class(el, "class", cls)].get(el.tag, {}))
        a.update(el.attrib)
        return a

    # -- frames -------------------------------------------------------------------------------------------------------
    def _angle(self, x):
        return math.radians(x) if self.degrees else x

    def _quat(self, el, a):
        """MJCF orientation (quat w x y z, axisangle, euler, xyaxes, zaxis) as artic's (x, y, z, w)."""
        v = self.v
        given = [k for k in _ORIENTATIONS if k in a]
        own = [k for k in given if k in el.attrib]
        if own:  # the element's own orientation replaces its class's, as in MuJoCo
            given = own
        if len(given) > 1:
            raise v.fail(el, f"gives several orientations ({', '.join(given)}); keep one")
        if not given:
            return np.array([0.0, 0.0, 0.0, 1.0])
        key, text = given[0], a[given[0]]
        if key == "quat":
            w, x, y, z = v.unit(el, key, v.numbers(el, key, 4, text=text, limit=None), text)
            return np.array([x, y, z, w])
        if key == "axisangle":
            aa = v.numbers(el, key, 4, text=text, limit=None)
            if abs(aa[3]) > MAX_MAGNITUDE:
                raise v.fail(el, f"attribute axisangle='{text}': the angle exceeds 1e+15 in magnitude")
            return quat_from_axis_angle(v.unit(el, key, aa[:3], text), self._angle(aa[3]))
        if key == "euler":
            e = v.numbers(el, key, 3, text=text)
            q = np.array([0.0, 0.0, 0.0, 1.0])
            for c, angle in zip(self.eulerseq, e):
                r = quat_from_axis_angle(np.eye(3)["xyz".index(c.lower())], self._angle(angle))
                # lower case: about the rotated (moving) axes, q r; upper case: about the fixed axes, r q
                q = quat_mul(q, r) if c.islower() else quat_mul(r, q)
            return q
        if key == "xyaxes":
            xy = v.numbers(el, key, 6, text=text, limit=None)
            x, y = v.unit(el, key, xy[:3], text), v.unit(el, key, xy[3:], text)
            y = y - np.dot(y, x) * x  # MuJoCo orthogonalises y against x
            if np.max(np.abs(y)) <= 1e-12:
                raise v.fail(el, f"attribute xyaxes='{text}': the two axes are parallel")
            y = v.unit(el, key, y, text)
            return quat_from_matrix(np.column_stack([x, y, np.cross(x, y)]))
        zaxis = v.numbers(el, key, 3, text=text, limit=None)
        return quat_between(np.array([0.0, 0.0, 1.0]), v.unit(el, key, zaxis, text))

    def _frame(self, el, a):
        return Transform(self.v.numbers(el, "pos", 3, (0.0, 0.0, 0.0), a.get("pos")), self._quat(el, a))

    # -- geoms (geoms.py) -------------------------------------------------------------------------------------------
    def _shape(self, g, cls, owner, static=False):
        return geom_shape(self, g, cls, owner, static)

    # -- bodies -------------------------------------------------------------------------------------------------------
    def _joints(self, body, cls):
        """The body's <joint>/<freejoint> elements and their attributes; a free joint must be alone."""
        found = [(j, self._attrs(j, cls)) for j in body if j.tag in ("joint", "freejoint")]
        free = [j for j, a in found if j.tag == "freejoint" or a.get("type") == "free"]
        if free and len(found) > 1:
            raise self.v.fail(
                body,
                f"has a free joint and {len(found) - 1} other joint(s); a free joint already "
                "gives all six dofs, remove the others (MuJoCo refuses this too)",
            )
        return found, bool(free)

    def _tree(self, body) -> Articulation:
        name = body.get("name", "body")
        with self.v.context(body):
            art = Articulation(name)
        cls = self._class(body, "childclass", "main")
        found, free = self._joints(body, cls)
        welds = []  # per body of the tree: (geom link, weld group, weld group of the parent body)
        if free:
            with self.v.context(body):
                root = art.create_link(None, self._frame(body, self._attrs(body, cls)), name)
            self.model.qpos_layout.append(QposEntry("free", art, None, found[0][0]))
            self._free_joint(art, *found[0])
            self._fill_link(root, body, cls)
            self._record(body, art, root, 0, _WORLD, welds)
            for child in body.findall("body"):
                self._body(art, root, child, cls, 0, welds)
        else:
            art.set_articulation_flag(ArticulationFlag.FIX_BASE)
            world = art.create_link(None, Transform(), f"{name}_world")
            world.mass = 0.0
            world.inertia = (0.0, 0.0, 0.0)
            self._body(art, world, body, "main", None, welds)
        self.world_parents += [(art, a, b) for a, b in self._weld_filters(art, welds)]
        self._unique_joint_names(art)
        apply_mujoco_defaults(art, self.opts)
        art.mjcf_root_free = free
        return art

    def _free_joint(self, art, j, a):
        """A free joint's damping, armature: root_damping, root_armature; frictionloss, stiffness: reported."""
        v, self.free_joint_names = self.v, self.free_joint_names | {j.get("name")}  # actuators.py: not driven
        if self.opts.damper:
            art.root_damping = v.number(j, "damping", text=a.get("damping", "0"), minimum=0.0)
        art.root_armature = v.number(j, "armature", text=a.get("armature", "0"), minimum=0.0)
        for name in ("frictionloss", "stiffness"):
            if v.number(j, name, text=a.get(name, "0"), minimum=0.0) > 0.0:
                self.free_joint_unfollowed.append((art.name, name))

    def _unique_joint_names(self, art):
        """A joint artic names after its body (a body without joints is welded by a fixed joint, an unnamed joint
        takes the body's name) may meet a joint the file names so (the Franka kitchen: body and joint
        'microwave'); the file's names are kept and the made-up one gets a suffix."""
        named = {id(j) for _, j in self.joint_names.values()}
        taken = {j.name for _, j in self.joint_names.values()}
        for link in art.get_links()[1:]:
            j = link.inbound_joint
            if id(j) in named or j.name not in taken:
                taken.add(j.name)
                continue
            base, k = f"{j.name}_{'weld' if j.get_joint_type() == JointType.FIX else 'joint'}", 1
            name = base
            while name in taken:
                k += 1
                name = f"{base}{k}"
            j.name = name
            taken.add(name)

    def _record(self, body, art, link, weld, parent_weld, welds):
        welds.append((link, weld, parent_weld))
        self.body_links[body] = link  # every body element's geom link, named or not (spatial.py's wrap geoms)
        name = body.get("name")
        if name is not None:
            if name in self.bodies:  # <exclude> would name either; MuJoCo refuses repeated names too
                raise self.v.fail(
                    body, f"body '{name}' is defined twice (or is named like the world body); body names must be unique"
                )
            self.bodies[name] = (art, link, weld)

    @staticmethod
    def _weld_filters(art, welds) -> list:
        """MuJoCo's body filter (see the module docstring): no contact within a weld group, nor between a weld
        group and the weld group of its root's parent body when neither is the world's. Returns the (link, parent
        link) pairs that MuJoCo lets collide and artic's parent rule would not: a body's geom link whose parent
        link is welded to the world (pairs.py `collide_with_world_parents`)."""
        members, parent_of = {}, {}
        for link, weld, parent_weld in welds:
            members.setdefault(weld, []).append(link)
            parent_of.setdefault(weld, parent_weld)  # a group's first body is its root

        def exclude(a, b):
            if a is not b and a.parent is not b and b.parent is not a:  # artic filters parent and child links
                art.disable_collision(a, b)

        for weld, links in members.items():
            for i, a in enumerate(links):
                for b in links[i + 1 :]:
                    exclude(a, b)
            parent = parent_of[weld]
            if weld != _WORLD and parent != _WORLD:
                for a in links:
                    for b in members[parent]:
                        exclude(a, b)
        grounded = members.get(_WORLD, [])
        return [(a, a.parent) for w, links in members.items() if w != _WORLD for a in links if a.parent in grounded]

    def _body(self, art, parent_link, body, cls, parent_weld, welds):
        """Links for `body` (one per joint), hung below `parent_link` (the parent body's geom link), recorded in
        `welds` (see `_tree`); `parent_weld` is the parent body's weld group, None for the world."""
        v = self.v
        cls = self._class(body, "childclass", cls)
        name = body.get("name", f"body{len(art.get_links())}")
        frame = self._frame(body, self._attrs(body, cls))
        joints, free = self._joints(body, cls)
        if free:
            outer = f" (inside body '{parent_link.name}')" if parent_weld is not None else ""
            raise v.fail(
                body,
                f"has a free joint but is not a child of <worldbody>{outer}; a free joint is only "
                "allowed on a top-level body (MuJoCo refuses it too)",
            )
        world_pose = parent_link.initial_pose * frame
        link = parent_link
        with v.context(body):
            if not joints:
                link = art.create_link(parent_link, world_pose, name)
                link.inbound_joint.set_joint_type(JointType.FIX)
                link.inbound_joint.parent_pose = frame
                link.inbound_joint.child_pose = Transform()
            for k, (j, a) in enumerate(joints):
                last = k == len(joints) - 1
                lname = name if last else f"{name}_{a.get('name', k)}"
                link = self._joint_link(art, link, world_pose, lname, j, a, frame if k == 0 else Transform())
                if not last:
                    link.mass = 1e-6
                    link.inertia = (1e-9, 1e-9, 1e-9)
                    link.in_fluid = False
        self._fill_link(link, body, cls, world_pose if not joints and parent_weld in (None, _WORLD) else None)
        parent_weld = _WORLD if parent_weld is None else parent_weld
        # a body without joints joins its parent's weld group; a body with joints starts its own
        weld = len(welds) if joints else parent_weld
        self._record(body, art, link, weld, parent_weld, welds)
        for child in body.findall("body"):
            self._body(art, link, child, cls, weld, welds)
        return link

    def _range(self, j, a, kind):
        """(lo, hi) of a limited joint, or None; a bound beyond 1e15 means unbounded (see `load_mjcf`)."""
        v = self.v
        limited = v.choice(j, "limited", a.get("limited", "auto"), ("true", "false", "auto"))
        if limited == "false" or kind == "ball" or not self.opts.limit:
            return None
        if "range" not in a:
            if limited == "true":
                raise v.fail(j, "attribute limited='true' without a range; give range='low high'")
            return None
        if limited == "auto" and not self.autolimits:
            raise v.fail(
                j,
                "has a range but no `limited` while <compiler autolimits='false'> (MuJoCo refuses this "
                "too); give limited='true' or 'false', or set autolimits='true'",
            )
        rng = v.numbers(j, "range", 2, text=a["range"], limit=None)
        huge = np.abs(rng) > MAX_MAGNITUDE
        if huge.all():
            warnings.warn(f"{v.where(j)}: range beyond 1e15 in magnitude; loaded as an unlimited joint", stacklevel=5)
            return None
        if huge.any():
            warnings.warn(f"{v.where(j)}: a range bound beyond 1e15 in magnitude is clamped to +-1e15", stacklevel=5)
            rng = np.clip(rng, -MAX_MAGNITUDE, MAX_MAGNITUDE)
        if not rng[0] < rng[1]:
            raise v.fail(j, f"attribute range='{a['range']}': low must be below high")
        if kind == "hinge":
            rng = np.array([self._angle(rng[0]), self._angle(rng[1])])
        return float(rng[0]), float(rng[1])

    def _joint_link(self, art, parent_link, world_pose, lname, j, a, parent_frame):
        v = self.v
        kind = v.choice(j, "type", a.get("type", "hinge"), ("hinge", "slide", "ball"))
        jname = a.get("name", lname)
        if j.get("name") is not None and jname in self.joint_names:
            raise v.fail(j, f"joint '{jname}' is defined twice; joint names must be unique")
        link = art.create_link(parent_link, world_pose, lname)
        joint = link.inbound_joint
        joint.name = jname
        self.model.qpos_layout.append(QposEntry(kind, art, joint, j))
        if j.get("name") is not None:
            self.joint_names[jname] = (art, joint)
        anchor = v.numbers(j, "pos", 3, text=a["pos"])
        axis = v.unit(j, "axis", v.numbers(j, "axis", 3, text=a["axis"], limit=None), a["axis"])
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
        else:  # MuJoCo's hinge angle is never wrapped (PhysX's REVOLUTE wraps by 4 pi: a ball rolled 2 turns apart)
            joint.set_joint_type(JointType.REVOLUTE_UNWRAPPED)
            axes = (Axis.TWIST,)
        rng = self._range(j, a, kind)
        force_range = self._force_range(j, a)
        if force_range is not None:
            self.model.joint_force_ranges[jname] = force_range
        armature = v.number(j, "armature", text=a["armature"], minimum=0.0)
        damping = v.number(j, "damping", text=a["damping"], minimum=0.0) if self.opts.damper else 0.0
        loss = v.number(j, "frictionloss", text=a["frictionloss"], minimum=0.0) if self.opts.frictionloss else 0.0
        k = v.number(j, "stiffness", text=a["stiffness"], minimum=0.0) if self.opts.spring else 0.0
        # qpos0 = ref: the child frame turned back by ref keeps artic's q MuJoCo's qpos (module docstring)
        to_rad = self._angle if kind == "hinge" else float
        ref, springref = (to_rad(v.number(j, name, text=a[name])) for name in ("ref", "springref"))
        if kind == "hinge":
            joint.child_pose = jframe * Transform(np.zeros(3), quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), ref))
        elif kind == "slide":
            joint.child_pose = jframe * Transform(np.array([ref, 0.0, 0.0]))
        spring_damper = read_spring_damper(v, j, a)  # joint_rules.py: set once the masses are final
        if spring_damper is not None:
            self.spring_dampers.append((art, joint, axes, spring_damper, springref))
        with v.context(j):
            if loss > 0.0 and self.opts.soft:  # MuJoCo's frictionloss row is soft as its limits are
                joint.friction_softness = read_softness(v, j, a, "solreffriction", "solimpfriction")
            if rng is not None and self.opts.soft:  # MuJoCo's soft limit (io/mjcf/softness.py), at its margin
                joint.limit_softness = read_softness(v, j, a, "solreflimit", "solimplimit")
                self.ranges[id(joint)] = rng  # the file's range (inheritrange), not the margin's
                rng = limit_with_margin(v, j, a, rng)
            for ax in axes:
                joint.set_motion(ax, Motion.FREE if rng is None else Motion.LIMITED)
                if rng is not None:
                    joint.set_limit_params(ax, Limit(*rng))
                if kind != "ball":
                    joint.set_joint_position(ax, ref)
                joint.set_armature(ax, armature)
                if loss > 0.0:
                    joint.set_friction_params(ax, FrictionParams(loss, loss, 0.0))
                # spring explicit, damping implicit after the solve, as MuJoCo's Euler (docs/mjcf.md: why not a drive)
                if k > 0.0 or damping > 0.0:
                    joint.set_passive_params(ax, PassiveParams(k, damping, springref))
        return link

    def _force_range(self, j, a):
        """A joint's actuatorfrcrange (the total actuator force on it is clamped to it, MuJoCo's actuatorfrclimited
        'auto' meaning "when the range is given"), or None."""
        v = self.v
        flag = v.choice(j, "actuatorfrclimited", a.get("actuatorfrclimited", "auto"), ("true", "false", "auto"))
        if flag == "false" or (flag == "auto" and "actuatorfrcrange" not in a):
            return None
        if "actuatorfrcrange" not in a:
            raise v.fail(j, "actuatorfrclimited='true' needs attribute actuatorfrcrange")
        lo, hi = (float(x) for x in v.numbers(j, "actuatorfrcrange", 2, text=a["actuatorfrcrange"]))
        if lo > hi:
            raise v.fail(j, f"attribute actuatorfrcrange='{a['actuatorfrcrange']}': the lower bound exceeds the upper")
        if v.choice(j, "actuatorgravcomp", a.get("actuatorgravcomp", "false"), ("true", "false")) == "true":
            # MuJoCo counts the joint's gravity compensation as actuator force, within this range; artic applies
            # it as the bodies' gravcomp (exact where the range leaves room for it), outside the clamp
            self.gravcomp_unclamped.append(j.get("name", "unnamed"))
        return lo, hi

    def _fill_link(self, link, body, cls, grounded=None):
        """Shapes, the body's mass properties as MuJoCo computes them (mass.py), and its gravcomp (the share of
        its weight an applied force carries: the link's gravity_scale is what is left). `grounded`: the world pose
        of a body welded to the world, whose planes and height fields the world static holds (a link cannot)."""
        shapes = []
        for k, g in enumerate(body.findall("geom")):
            with self.v.context(g):
                terrain = grounded is not None and self._attrs(g, cls).get("type") in ("plane", "hfield")
                shape = self._shape(g, cls, f"{link.name}_geom{k}", static=terrain)
                if terrain:
                    shape.local_pose = grounded * shape.local_pose
                shapes.append((self.world_static if terrain else link).attach_shape(shape))
        self.mass.fill(link, body, cls, shapes)
        if "gravcomp" in body.attrib:
            link.gravity_scale = 1.0 - self.v.number(body, "gravcomp", text=body.get("gravcomp"))

    def _contact(self, section):
        """<exclude body1 body2>: the two bodies' geom links never collide (MuJoCo excludes by body, whatever
        their weld groups). <pair>: explicit contact pairs with their own parameters (pairs.py)."""
        v = self.v
        dropped = []
        for el in section:
            if el.tag == "pair":  # read_pairs
                continue
            if el.tag != "exclude":
                raise v.fail(el, f"<{el.tag}> is not a <contact> element; use <exclude> or <pair>")
            ends = []
            for attr in ("body1", "body2"):
                name = el.get(attr)
                if name is None:
                    raise v.fail(el, f"needs attribute {attr} naming a body")
                if name not in self.bodies:
                    raise v.fail(el, f"attribute {attr}='{name}' names no body of the model")
                ends.append(self.bodies[name])
            (art_a, link_a, weld_a), (art_b, link_b, weld_b) = ends
            if weld_a == weld_b and (art_a is art_b or weld_a == _WORLD):  # welded together: never collide
                continue
            if art_a is None or art_a is not art_b:
                where = "the world" if art_a is None or art_b is None else "two different trees"
                dropped.append(
                    f"<exclude body1='{el.get('body1')}' body2='{el.get('body2')}'> (bodies of {where}; "
                    "artic filters pairs only within one articulation)"
                )
                continue
            art_a.disable_collision(link_a, link_b)  # a parent and child too: pairs.py reads it
        if dropped:
            warnings.warn(
                f"{v.where(section)}: {', '.join(dropped)} not supported and dropped; these geoms may "
                "collide where MuJoCo would not",
                RuntimeWarning,
                stacklevel=4,
            )
