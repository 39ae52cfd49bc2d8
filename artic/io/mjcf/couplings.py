"""MJCF <tendon> and <equality> (issue 15, items 5 and 6), read after the bodies are built (`read_couplings`).

Mapping:
* <tendon><fixed> with <joint joint coef>: an artic fixed tendon (docs/mimic_and_tendons.md). MuJoCo's length
  L = sum coef_i q_i is artic's L = offset + sum c_i q_i with offset 0 and c_i = coef_i.
  artic's tendon is a tree along the kinematic tree (each tendon joint's link a child of its parent's link), so the
  tendon is rooted at the deepest common ancestor of the joints' parent links, and joints on the paths down to the
  listed ones that MuJoCo does not list get coefficient 0. PhysX applies each row as a couple between its link and
  the root, its impulse scaled by recip_coefficient rather than by the coefficient: the recip coefficients are
  solved for so that the joints get MuJoCo's c_i F (see `_recips`). Joints of different articulations: dropped
  with a warning.
  stiffness and damping map one to one; springlength (default: L at qpos0, as MuJoCo computes it) is the rest
  length. A range (with limited / autolimits) becomes MuJoCo-soft limits (solreflimit, solimplimit); with
  `soft_constraints=False` it is dropped with a warning (see `_tendon_range`).
* <equality><connect body1 body2 anchor>: a SphericalJoint holding body1's anchor (in body1's frame) on the point
  of body2 that coincides with it at qpos0 (MuJoCo's rule). <weld body1 body2 relpose>: a FixedJoint holding
  body2's pose relative to body1 at relpose, or at its qpos0 value when relpose is absent (MuJoCo's default).
  <connect site1 site2>: a SphericalJoint holding the two sites together; <weld site1 site2>: a FixedJoint making
  the two site frames coincide (MuJoCo reads neither relpose nor anchor then).
  <joint joint1 joint2 polycoef>: a mimic joint q1 - ref1 = c0 + c1 (q2 - ref2) + c2 (q2 - ref2)^2 + ... (the
  powers above one as the mimic joint's `polynomial`).
  Every equality is soft as in MuJoCo (solref/solimp, their defaults when absent) unless
  `load_mjcf(soft_constraints=False)`: a connect or weld through its joint's softness, a joint or tendon equality
  through its mimic joint's, whose regularizer is scaled by MuJoCo's weight (the two dofs' (M^-1)_dd summed, or
  the two tendons' J M^-1 J^T at qpos0).
* <tendon><spatial> of two sites with a range (a rope, as ball_in_cup's string): a DistanceJoint between the sites
  (range [low, high]), which may join two articulations. Any other spatial tendon, and a rope's spring or damper:
  a `SpatialTendon` (spatial.py: sites, wrapping spheres and cylinders, pulleys), whose spring and damper act
  through MjcfControl and which actuators (muscles among them) may pull on; its range is reported.
* <equality><tendon tendon1 tendon2 polycoef> between fixed tendons with a linear polynomial: a multi-dof mimic
  joint over their joints (L1 - L1_0 = c0 + c1 (L2 - L2_0) is linear in q).
* Reported (one warning each, naming the element): spatial tendons' ranges and frictionloss, other
  <equality><tendon>, non-linear polycoefs between tendons, a joint equality without joint2, weld torquescale
  other than 1, solref/solimp where they are not followed (ropes, and every equality and tendon range under
  soft_constraints=False), tendon ranges under soft_constraints=False (with soft constraints a fixed tendon's range
  acts shrunk by its margin, as MuJoCo's: joint_rules.py), inactive
  constraints (active='false'), and anything else in the two sections.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np

from ...description.body_joints import DistanceJoint, FixedJoint, SphericalJoint
from ...description.mass_check import joint_space_inertia, tendon_inverse_weight
from ...enums import ArticulationFlag, Axis, JointType
from ...math.np_spatial import Transform
from .joint_rules import limit_with_margin
from .report import and_more
from .site_actuators import site_frames
from .softness import read_softness
from .spatial import SpatialTendon, read_spatial_path

if TYPE_CHECKING:
    from ...description.body_joints import JointBase
    from .loader import _Loader

__all__ = ["read_couplings"]

# MuJoCo's default relpose "0 1 0 0 0 0 0": its zero quaternion means "use the qpos0 relative pose"
_SOFT = ("solref", "solimp", "solreflimit", "solimplimit")


def read_couplings(loader: _Loader, root: ET.Element) -> list[JointBase]:
    """Tendons become couplings of the articulations; equalities become body joints (returned, for
    `MjcfModel.joints`) or mimic joints. `loader` is loader.py's _Loader after its bodies are built."""
    reader = _Couplings(loader, root)
    for section in root.findall("tendon"):
        for el in section:
            reader.tendon(el)
    for section in root.findall("equality"):
        for el in section:
            reader.equality(el)
    reader.say()
    return reader.joints


class _Couplings:
    def __init__(self, loader, root):
        self.loader, self.v, self.root = loader, loader.v, root
        self._sites = None
        self.tendons = {}  # fixed tendon name: ([(articulation, joint, axis, coef)], length at qpos0)
        self.joints = []
        self.said = {}  # kind of warning -> [(element, what)], said once per kind (say)
        self.link_of = {}  # artic joint -> its link
        for art in loader.model.articulations:
            for link in art.get_links():
                if link.inbound_joint is not None:
                    self.link_of[id(link.inbound_joint)] = link

    def _warn(self, el, what, kind=None):
        """Collect a warning; `kind` (default: the text) groups the ones said together."""
        self.said.setdefault(kind or what, []).append((el, what))

    def say(self):
        """One warning per kind (a hand with 64 ranged tendons said 64 before): the first element's, and how many
        others there are, naming the next few."""
        for items in self.said.values():
            el, what = items[0]
            more = and_more(self.v, [e for e, _ in items[1:]])
            warnings.warn(f"{self.v.where(el)}: {what}{more}", RuntimeWarning, stacklevel=5)

    def _attrs(self, el, section):
        """Element attributes over its class's <default><{section}> ones."""
        ld = self.loader
        a = dict(ld.defaults[ld._class(el, "class", "main")].get(section, {}))
        a.update(el.attrib)
        return a

    def _num(self, el, a, attr, default):
        """One number of `a` (class defaults applied), an MjcfError naming the element when malformed."""
        return self.v.number(el, attr, text=a.get(attr, default))

    def _soft(self, el, a):
        soft = [k for k in _SOFT if k in a]
        if el.tag == "fixed" and self.loader.opts.soft:  # a fixed tendon's limit softness: read by _tendon_range
            soft = [k for k in soft if k not in ("solreflimit", "solimplimit")]
        if el.tag in ("connect", "weld", "joint", "tendon") and self.loader.opts.soft:
            return  # read by equality() (a joint or tendon equality: the mimic joint's softness)
        if soft:
            self._warn(el, f"{', '.join(soft)} not followed: artic holds this constraint hard (or by its own spring)")

    # -- tendons --------------------------------------------------------------------------------------------------
    def tendon(self, el):
        if el.tag == "spatial":
            self._spatial(el)
            return
        if el.tag != "fixed":
            self._warn(el, f"<{el.tag}> is not supported and was dropped")
            return
        v, a = self.v, self._attrs(el, "tendon")
        terms = []  # (artic joint, link, coef)
        for j in el:
            if j.tag != "joint":
                self._warn(j, f"<{j.tag}> inside a fixed tendon is not supported; the tendon was dropped")
                return
            name = j.get("joint")
            if name not in self.loader.joint_names:
                raise v.fail(j, f"attribute joint='{name}' names no joint of the model; fix the name")
            art, joint = self.loader.joint_names[name]
            if joint.get_joint_type() not in (JointType.REVOLUTE_UNWRAPPED, JointType.PRISMATIC):
                raise v.fail(j, f"joint '{name}' is not a hinge or slide joint; a fixed tendon needs scalar joints")
            terms.append((art, joint, self.link_of[id(joint)], v.number(j, "coef")))
        if not terms:
            self._warn(el, "a fixed tendon without joints; dropped")
            return
        if el.get("name") in self.loader.model.spatial_tendons:
            raise v.fail(el, f"tendon '{el.get('name')}' is defined twice; tendon names must be unique")
        if el.get("name") is not None:  # for <equality><tendon>: its terms and its length at qpos0
            self.tendons[el.get("name")] = (
                [(art, joint, _dof_axis(joint), c) for art, joint, _, c in terms],
                sum(c * joint.get_joint_position(_dof_axis(joint)) for _, joint, _, c in terms),
            )
        if len({id(t[0]) for t in terms}) != 1:
            self._warn(
                el,
                "its joints are in different articulations (artic's fixed tendons follow one kinematic "
                "tree); the tendon was dropped",
            )
            return
        art = terms[0][0]
        root, nodes = _subtree([t[2] for t in terms])
        coef = {id(t[2]): t[3] for t in terms}
        cs = np.array([coef.get(id(link), 0.0) for link in nodes])
        tendon = art.create_fixed_tendon()
        tendon.name = el.get("name", "")
        made = {id(root): tendon.create_tendon_joint(None, Axis.TWIST, 1.0, 1.0, root)}
        recips = self._recips(el, a, root, nodes, cs)
        for link, c, r in zip(nodes, cs, recips):
            axis = Axis.X if link.inbound_joint.get_joint_type() == JointType.PRISMATIC else Axis.TWIST
            made[id(link)] = tendon.create_tendon_joint(made[id(link.parent)], axis, float(c), float(r), link)
        opts = self.loader.opts
        tendon.stiffness = v.number(el, "stiffness", text=a.get("stiffness", "0"), minimum=0.0) if opts.spring else 0.0
        tendon.damping = v.number(el, "damping", text=a.get("damping", "0"), minimum=0.0) if opts.damper else 0.0
        length0 = sum(c * joint.get_joint_position(_dof_axis(joint)) for _, joint, _, c in terms)
        spring = v.numbers(el, "springlength", (1, 2), text=a.get("springlength", "-1 -1"))
        if spring[0] >= 0.0 or (len(spring) > 1 and spring[1] >= 0.0):
            if len(spring) == 2 and spring[0] != spring[1]:
                self._warn(el, "a springlength dead band is not supported; its middle is the rest length")
            length0 = float(np.mean(spring))
        tendon.rest_length = length0
        self._tendon_range(el, a, tendon)
        self._soft(el, a)
        if self._num(el, a, "frictionloss", "0") != 0.0:
            self._warn(el, "frictionloss is not supported and was dropped")

    def _recips(self, el, a, root, nodes, cs):
        """recip_coefficients that make artic's rows apply MuJoCo's generalized force c_i F. Row j (PhysX's couple
        between link j and the tendon root) pushes every tendon dof d on the path from the root to link j by
        (a_d . a_j) recip_j F / n (a: the dofs' world axes, n the number of rows): solve G recip / n = c with
        G[d, j] = a_d . a_j for d on j's path (unit diagonal, triangular). Exact while the axes keep their initial
        relation (parallel or perpendicular hinges or slides) and, when the root link moves, while every row's axis
        is the root's first child's (PhysX reacts each row on the root about that axis); otherwise reported, for a
        tendon with a spring or damper."""
        axes, kinds = [], []
        for link in nodes:
            joint = link.inbound_joint
            frame = link.initial_pose * joint.child_pose
            axes.append(Transform(np.zeros(3), frame.q).transform_point(np.array([1.0, 0.0, 0.0])))
            kinds.append(joint.get_joint_type())
        # a welded body on the way only routes the tendon: it has no dof and no row (FixedTendon.acting_joints)
        acting = [k for k in range(len(nodes)) if cs[k] != 0.0 or kinds[k] != JointType.FIX]
        axes, kinds = [axes[k] for k in acting], [kinds[k] for k in acting]
        n = len(acting)
        index = {id(nodes[k]): i for i, k in enumerate(acting)}
        g = np.eye(n)
        exact = True
        for j, k in enumerate(acting):
            up = nodes[k].parent
            while up is not root:
                d = index.get(id(up))
                if d is None:  # a routing node
                    up = up.parent
                    continue
                if kinds[d] == kinds[j]:
                    g[d, j] = float(np.dot(axes[d], axes[j]))
                if kinds[d] != kinds[j] or not (np.isclose(abs(g[d, j]), 1.0) or np.isclose(g[d, j], 0.0)):
                    exact = False
                up = up.parent
        first = next(k for k, link in enumerate(nodes) if link.parent is root)
        first = acting.index(first) if first in acting else 0  # the row whose axis the root reacts about (rows.py)
        moving_root = root.parent is not None or not _fixed_base(root.articulation)
        if moving_root and any(kinds[k] != kinds[first] or not np.allclose(axes[k], axes[first]) for k in range(n)):
            exact = False
        acts = any(self._num(el, a, k, "0") != 0.0 for k in ("stiffness", "damping"))
        if not exact and acts:
            self._warn(
                el,
                "its joints' axes differ (not parallel or perpendicular, or unlike the root's first "
                "child's under a moving root): artic's (PhysX's) tendon forces match MuJoCo's c_i F only "
                "approximately",
            )
        recips = np.zeros(len(nodes))
        recips[acting] = n * np.linalg.solve(g, cs[acting])
        return recips

    def _tendon_range(self, el, a, tendon):
        """MuJoCo's tendon range is a soft constraint (solreflimit, solimplimit): with soft constraints on (the
        default) it becomes the tendon's MuJoCo-soft limits (`FixedTendon.limit_softness`). artic's (PhysX's)
        fixed-tendon limit is a spring without a velocity term whose converged impulse is explicit in the
        stiffness: stiff enough to hold the range it diverges (k r h^2 > 1), soft enough to be stable it lets the
        range be exceeded (a 0.1 range on a two-hinge chain under gravity: 0.28 at k = 1e2, divergence at k = 1e4).
        So with `soft_constraints=False` the range is checked and dropped with a warning rather than mapped onto a
        limit that misbehaves."""
        v = self.v
        limited = v.choice(el, "limited", a.get("limited", "auto"), ("true", "false", "auto"))
        if limited == "false" or "range" not in a or (limited == "auto" and not self.loader.autolimits):
            return
        if not self.loader.opts.limit:
            return
        lo, hi = v.numbers(el, "range", 2, text=a["range"])
        if not lo < hi:
            raise v.fail(el, f"attribute range='{a['range']}': low must be below high")
        if self.loader.opts.soft:  # at the range shrunk by its margin, as MuJoCo's soft limit (joint_rules.py)
            lo, hi = limit_with_margin(v, el, a, (float(lo), float(hi)))
            tendon.set_limit_parameters(lo, hi)
            with v.context(el):
                tendon.limit_softness = read_softness(v, el, a, "solreflimit", "solimplimit")
            return
        self._warn(
            el,
            f"range='{a['range']}' dropped: artic's fixed-tendon limit is a spring that cannot hold "
            "MuJoCo's tendon limit constraint stably",
            "tendon range",
        )

    def _spatial(self, el):
        """A rope (two sites and a range) becomes a DistanceJoint between the sites' links (it may join two
        articulations) holding the range. Any other path, and a rope's spring or damper, becomes a `SpatialTendon`
        (spatial.py) in model.spatial_tendons: its spring and damper act through MjcfControl's step hook, actuators
        may pull on it; its range, where no DistanceJoint holds it, and frictionloss are reported."""
        v, a = self.v, self._attrs(el, "tendon")
        sites = [c for c in el if c.tag == "site"]
        limited = v.choice(el, "limited", a.get("limited", "auto"), ("true", "false", "auto"))
        ranged = "range" in a and (limited == "true" or (limited == "auto" and self.loader.autolimits))
        rope = len(sites) == 2 and len(el) == 2 and ranged
        if rope and not self._rope(el, a, sites):
            return
        self._spatial_tendon(el, a, ranged and not rope)  # a rope's too: its spring, or an actuator pulling on it

    def _rope(self, el, a, sites) -> bool:
        """The DistanceJoint of a two-site ranged tendon; False when both sites are on one body (dropped)."""
        v = self.v
        ends = []
        for s in sites:
            name = s.get("site")
            if name not in self.sites:
                raise v.fail(s, f"attribute site='{name}' names no site of the model; fix the name")
            ends.append(self.sites[name])
        lo, hi = v.numbers(el, "range", 2, text=a["range"])
        if not 0.0 <= lo < hi:
            raise v.fail(el, f"attribute range='{a['range']}': need 0 <= low < high")
        (link_a, pa), (link_b, pb) = ends
        if link_a is None:
            (link_a, pa), (link_b, pb) = (link_b, pb), (link_a, pa)
        if link_a is None or link_a is link_b:
            self._warn(el, "both sites are on one body (or the world); the tendon does nothing and was dropped")
            return False
        joint = DistanceJoint.from_body_frames(link_a, Transform(pa), link_b, Transform(pb), name=el.get("name"))
        joint.set_distance_range(float(lo), float(hi))
        self.joints.append(joint)
        self._soft(el, a)
        return True

    def _spatial_tendon(self, el, a, ranged):
        """A spatial tendon's path, spring and damper (spatial.py); what it does not follow is reported (`ranged`: a
        range that no DistanceJoint holds)."""
        v, opts = self.v, self.loader.opts
        name = el.get("name", f"spatial tendon {len(self.loader.model.spatial_tendons)}")
        if name in self.loader.model.spatial_tendons:
            raise v.fail(el, f"tendon '{name}' is defined twice; tendon names must be unique")
        tendon = SpatialTendon(name, read_spatial_path(self, el))
        tendon.stiffness = self._num(el, a, "stiffness", "0") if opts.spring else 0.0
        tendon.damping = self._num(el, a, "damping", "0") if opts.damper else 0.0
        if tendon.stiffness < 0.0 or tendon.damping < 0.0:
            raise v.fail(el, "stiffness and damping must not be negative")
        spring = v.numbers(el, "springlength", (1, 2), text=a.get("springlength", "-1 -1"))
        if spring[0] == -1.0 and spring[-1] == -1.0:
            tendon.spring = None  # MuJoCo's default: the length at qpos0 (MjcfControl measures it)
        else:
            tendon.spring = (float(spring[0]), float(spring[-1]))
            if tendon.spring[0] > tendon.spring[1]:
                raise v.fail(el, f"springlength='{a['springlength']}': the low end exceeds the high end")
        self.loader.model.spatial_tendons[name] = tendon
        limited = v.choice(el, "limited", a.get("limited", "auto"), ("true", "false", "auto"))
        if "range" in a and (limited == "true" or (limited == "auto" and self.loader.autolimits)):
            tendon.range = tuple(float(x) for x in v.numbers(el, "range", 2, text=a["range"]))
        if ranged and opts.limit:
            self._warn(el, "a spatial tendon's range (a length limit) is not followed; the tendon is unlimited")
        if self._num(el, a, "frictionloss", "0") != 0.0:
            self._warn(el, "frictionloss is not supported and was dropped")
        for attr in ("armature", "margin"):
            if self._num(el, a, attr, "0") != 0.0:
                self._warn(el, f"a spatial tendon's {attr} is not followed and was dropped", f"spatial {attr}")
        if "actuatorfrcrange" in a:
            self._warn(el, "a tendon's actuatorfrcrange is not followed (the actuators' forceranges are)")
        if name in self.tendons:
            raise v.fail(el, f"tendon '{name}' is defined twice; tendon names must be unique")

    @property
    def sites(self):
        """site name: (link or None for the world, position in the link's frame; in the world for the world)."""
        if self._sites is None:
            self._sites = {}
            world = self.root.find("worldbody")
            for body in [world, *world.iter("body")]:
                link = None if body is world else self.loader.body_links.get(body)
                if body is not world and link is None:
                    continue  # a body artic did not build
                for s in body.findall("site"):
                    if s.get("name") is not None:
                        self._sites[s.get("name")] = (link, self.v.numbers(s, "pos", 3, text=s.get("pos", "0 0 0")))
        return self._sites

    # -- equalities -----------------------------------------------------------------------------------------------
    def equality(self, el):
        before = len(self.joints)
        mimic = self._equality(el)
        made = self.joints[-1] if len(self.joints) > before else mimic
        if made is not None and self.loader.opts.soft:  # MuJoCo's equalities are soft, by default too
            a = self._attrs(el, "equality")
            with self.v.context(el):
                made.softness = read_softness(self.v, el, a)
            if mimic is not None and el.tag == "tendon":
                mimic.soft_weight = self._tendon_weight([a.get("tendon1"), a.get("tendon2")])

    def _equality(self, el):
        a = self._attrs(el, "equality")
        if a.get("active", "true") == "false":
            self._warn(el, "an inactive constraint (active='false') is not supported and was dropped")
            return
        if el.tag in ("connect", "weld"):
            if "body1" not in a:
                if "site1" in a and "site2" in a:
                    (self._connect_sites if el.tag == "connect" else self._weld_sites)(el, a)
                else:
                    self._warn(el, f"<{el.tag}> names neither body1 nor site1 and site2; dropped")
                    return
                self._soft(el, a)
                return
            body_a, body_b = self._body(el, a, "body1"), self._body(el, a, "body2", "world")
            if body_a is None and body_b is None:
                raise self.v.fail(el, "joins the world to itself; name a body")
            if el.tag == "connect":
                self._connect(el, a, body_a, body_b)
            else:
                self._weld(el, a, body_a, body_b)
        elif el.tag == "joint":
            mimic = self._joint(el, a)
        elif el.tag == "tendon":
            mimic = self._tendon_equality(el, a)
        else:
            self._warn(el, f"<equality><{el.tag}> is not supported and was dropped")
            return None
        self._soft(el, a)
        return mimic if el.tag in ("joint", "tendon") else None

    def _body(self, el, a, attr, default=None):
        name = a.get(attr, default)
        if name not in self.loader.bodies:
            raise self.v.fail(el, f"attribute {attr}='{name}' names no body of the model; fix the name")
        return self.loader.bodies[name][1]  # None for the world

    def _connect(self, el, a, link_a, link_b):
        anchor = self.v.numbers(el, "anchor", 3, text=a.get("anchor"))
        if link_a is None:  # artic's body A must move: swap (the constraint is symmetric); the anchor is in the world
            point = Transform(anchor)
            link_a, link_b = link_b, None
        else:
            point = link_a.initial_pose * Transform(anchor)
        self.joints.append(SphericalJoint.from_world_frames(link_a, link_b, point, point, name=el.get("name")))

    def _connect_sites(self, el, a):
        """MuJoCo 3's connect between sites: the two sites' positions coincide."""
        ends = []
        for attr in ("site1", "site2"):
            if a[attr] not in self.sites:
                raise self.v.fail(el, f"attribute {attr}='{a[attr]}' names no site of the model; fix the name")
            ends.append(self.sites[a[attr]])
        (link_a, pa), (link_b, pb) = ends if ends[0][0] is not None else ends[::-1]  # body A must move
        if link_a is None:
            raise self.v.fail(el, "joins the world to itself; name a site on a body")
        self.joints.append(
            SphericalJoint.from_body_frames(link_a, Transform(pa), link_b, Transform(pb), name=el.get("name"))
        )

    def _weld_sites(self, el, a):
        """MuJoCo 3's weld between sites: the two sites' frames coincide, position and orientation (relpose and
        anchor are not read, as MuJoCo's)."""
        frames = site_frames(self.loader, el)
        ends = []
        for attr in ("site1", "site2"):
            if a[attr] not in frames:
                raise self.v.fail(el, f"attribute {attr}='{a[attr]}' names no site of the model; fix the name")
            link, pos, quat = frames[a[attr]]
            ends.append((link, Transform(pos, quat)))
        (link_a, fa), (link_b, fb) = ends if ends[0][0] is not None else ends[::-1]  # body A must move
        if link_a is None:
            raise self.v.fail(el, "joins the world to itself; name a site on a body")
        if self._num(el, a, "torquescale", "1") != 1.0:
            self._warn(el, f"torquescale={a['torquescale']} is not supported; the weld holds rotation hard")
        self.joints.append(FixedJoint.from_body_frames(link_a, fa, link_b, fb, name=el.get("name")))

    def _weld(self, el, a, link_a, link_b):
        v = self.v
        if self._num(el, a, "torquescale", "1") != 1.0:
            self._warn(el, f"torquescale={a['torquescale']} is not supported; the weld holds rotation hard")
        # `anchor` (on body2) is where MuJoCo measures the weld's linear error: a hard weld holds the same relative
        # pose wherever it is, a soft one (solref) sags differently about another point, so the joint's frames
        # sit there: D at the anchor on body2, C at body1's copy of it
        anchor = Transform(v.numbers(el, "anchor", 3, text=a.get("anchor", "0 0 0")))
        pose_a = Transform() if link_a is None else link_a.initial_pose
        pose_b = Transform() if link_b is None else link_b.initial_pose
        rel = v.numbers(el, "relpose", 7, text=a.get("relpose", "0 1 0 0 0 0 0"))
        if np.any(rel[3:] != 0.0):  # given: body2's pose in body1's frame (quaternion w x y z)
            q = rel[3:] / np.linalg.norm(rel[3:])
            t12 = Transform(rel[:3], np.array([q[1], q[2], q[3], q[0]]))
        else:  # MuJoCo's default: the relative pose at qpos0
            t12 = pose_a.inverse() * pose_b
        # FixedJoint holds frame C (on A) on frame D (on B): C is where body2 belongs relative to body1
        if link_a is None:
            joint = FixedJoint.from_body_frames(link_b, anchor, None, t12 * anchor, name=el.get("name"))
        else:
            joint = FixedJoint.from_body_frames(link_a, t12 * anchor, link_b, anchor, name=el.get("name"))
        self.joints.append(joint)

    def _tendon_equality(self, el, a):
        """L1 - L1_0 = c0 + c1 (L2 - L2_0) (L2 absent: L1 - L1_0 = c0) between fixed tendons of one articulation
        is linear in their joints' q: a multi-dof mimic joint. Spatial tendons and higher powers are reported."""
        v = self.v
        names = [a.get("tendon1"), a.get("tendon2")]
        poly = _padded(v.numbers(el, "polycoef", (1, 5), text=a.get("polycoef", "0 1 0 0 0")))
        if any(n is not None and n not in self.tendons for n in names) or names[0] is None:
            self._warn(el, "<equality><tendon> needs fixed tendons read from this file (not spatial ones); dropped")
            return
        if names[1] is not None and np.any(poly[2:] != 0.0):
            self._warn(el, "<equality><tendon> with a non-linear polycoef is not supported; dropped")
            return
        (terms1, l1), (terms2, l2) = self.tendons[names[0]], self.tendons.get(names[1], ([], 0.0))
        c0, c1 = float(poly[0]), float(poly[1]) if names[1] is not None else 0.0
        # sum_1 a_i q_i - c1 sum_2 b_j q_j - (l1 + c0 - c1 l2) = 0, terms merged by dof
        coef, where = {}, {}
        for terms, scale in ((terms1, 1.0), (terms2, -c1)):
            for art, joint, axis, c in terms:
                key = (id(joint), axis)
                coef[key] = coef.get(key, 0.0) + scale * c
                where[key] = (art, joint, axis)
        keys = [k for k in coef if coef[k] != 0.0]
        if not keys or len({id(where[k][0]) for k in keys}) != 1:
            self._warn(
                el, "<equality><tendon> over joints of different articulations (or none) is not supported; dropped"
            )
            return
        art, lead, lead_axis = where[keys[0]]
        head = coef[keys[0]]
        others = [(where[k][1], where[k][2], coef[k] / head) for k in keys[1:]]
        offset = -(l1 + c0 - c1 * l2) / head
        if others:
            return art.create_multi_dof_mimic_joint(lead, lead_axis, others, offset)
        self._warn(el, "<equality><tendon> holds a single joint at a constant; not supported; dropped")
        return None

    def _tendon_weight(self, names):
        """MuJoCo's approximate inverse effective mass of a tendon equality: the sum of its tendons' J M^-1 J^T at
        qpos0 (tendon_invweight0), J the tendon's coefficients on its joints' dofs."""
        total = 0.0
        for name in names:
            if name is None:
                continue
            terms, _ = self.tendons[name]
            inertia = joint_space_inertia(terms[0][0])
            total += tendon_inverse_weight([((joint.child_link, axis), c) for _, joint, axis, c in terms], inertia)
        return total

    def _joint(self, el, a):
        v, ld = self.v, self.loader
        names = [a.get("joint1"), a.get("joint2")]
        for k, name in enumerate(names):
            if name is not None and name not in ld.joint_names:
                raise v.fail(el, f"attribute joint{k + 1}='{name}' names no joint of the model; fix the name")
        poly = _padded(v.numbers(el, "polycoef", (1, 5), text=a.get("polycoef", "0 1 0 0 0")))
        if names[1] is None:
            self._warn(el, "a joint equality without joint2 (a joint held at a constant) is not supported; dropped")
            return
        (art1, j1), (art2, j2) = ld.joint_names[names[0]], ld.joint_names[names[1]]
        if art1 is not art2:
            self._warn(
                el,
                "its joints are in different articulations; artic's mimic joints couple dofs of one "
                "articulation; dropped",
            )
            return
        axes = []
        for j in (j1, j2):
            if j.get_joint_type() not in (JointType.REVOLUTE_UNWRAPPED, JointType.PRISMATIC):
                self._warn(el, f"joint '{j.name}' is not a hinge or slide joint; dropped")
                return
            axes.append(Axis.X if j.get_joint_type() == JointType.PRISMATIC else Axis.TWIST)
        ref1, ref2 = j1.get_joint_position(axes[0]), j2.get_joint_position(axes[1])
        # q1 - ref1 = c0 + c1 (q2 - ref2)  <=>  q1 + (-c1) q2 + (c1 ref2 - ref1 - c0) = 0
        c0, c1 = float(poly[0]), float(poly[1])
        if c1 == 0.0 and not np.any(poly[2:] != 0.0):
            self._warn(el, "polycoef holds joint1 at a constant (c1 = 0); not supported; dropped")
            return
        # q1 - ref1 - sum_k c_k (q2 - ref2)^k: the powers above one as the mimic joint's polynomial about ref2
        curve = (ref2, -float(poly[2]), -float(poly[3]), -float(poly[4]))
        return art1.create_mimic_joint(j1, axes[0], j2, axes[1], -c1, c1 * ref2 - ref1 - c0, polynomial=curve)


def _depth(link):
    d = 0
    while link.parent is not None:
        link, d = link.parent, d + 1
    return d


def _subtree(links):
    """(root, nodes): the tendon root, the deepest link that is a strict ancestor of every listed link, and the
    links on the paths from it down to the listed ones, parents first."""

    def ancestors(link):
        out = []
        while link is not None:
            out.append(link)
            link = link.parent
        return out

    common = None
    for link in links:
        ids = [id(x) for x in ancestors(link.parent)]
        common = ids if common is None else [x for x in common if x in ids]
    root = next(x for x in ancestors(links[0].parent) if id(x) == common[0])
    nodes = {}
    for link in links:
        while link is not root:
            nodes[id(link)] = link
            link = link.parent
    return root, sorted(nodes.values(), key=_depth)


def _fixed_base(art):
    return bool(art.get_articulation_flags() & ArticulationFlag.FIX_BASE)


def _dof_axis(joint):
    return Axis.X if joint.get_joint_type() == JointType.PRISMATIC else Axis.TWIST


def _padded(poly):
    """polycoef with the omitted trailing coefficients zero (MuJoCo keeps their defaults: 0 beyond the second)."""
    out = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    out[: len(poly)] = poly
    return out
