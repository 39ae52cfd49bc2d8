"""MJCF `<option>` and MuJoCo's behaviour by default, for `load_mjcf`.

`<option timestep gravity>`, the medium (`density viscosity wind`: MuJoCo's inertia-box fluid forces on every link,
description/fluid.py) and the `<flag>` switches gravity, contact, constraint, limit, frictionloss, spring and
damper are followed; every other option attribute or flag that changes the dynamics is reported with one warning
naming it (MuJoCo's XML reference, "option" and "option/flag").

Integration. artic steps with semi-implicit Euler (velocities, then positions with the new velocities), MuJoCo's
`Euler`. Joint stiffness and damping are the joints' PassiveParams, integrated as MuJoCo's Euler does: springs
explicit, damping (and a free joint's, Articulation.root_damping) implicit after the constraint solve, M + h D in
place of M (dynamics/passive.py; MuJoCo's eulerdamp, whose disabling is reported). `RK4`, `implicit` and
`implicitfast` are reported: artic does not follow them (its trajectories differ from theirs at first order in the
time step).

MuJoCo's defaults (applied to every link and dof of an MJCF import, not to URDF or the Python API): no link damping
(PhysX: 0.05 /s), no sleeping (PhysX: sleep threshold 5e-3), and no velocity caps (PhysX: 100 m/s, 50 rad/s per
link, 100 per joint dof); the caps are set to 1e10, far beyond any motion a float32 solver resolves.

Solver iterations. MuJoCo solves its constraints to convergence (its Newton solver, up to `<option iterations>`,
default 100, tolerance 1e-8); PhysX's default 4 position iterations leave friction unconverged where contacts close
a loop: the dm_control walker, lying on its back propped on its legs, slid flat (friction 0.7) where MuJoCo's holds
even at friction 0.35, and held with 128 iterations. An MJCF import's articulations therefore get `iterations`
position iterations (at most 255, PhysX's bound) and PhysX's 1 velocity iteration. Like MuJoCo's solvers, they stop
early once converged: `<option tolerance>` (MuJoCo's relative cost improvement, default 1e-8) cannot carry over to
Gauss-Seidel sweeps, so any value but 0 sets Articulation.solver_tolerance to SOLVER_TOLERANCE (1e-5 m/s or rad/s:
the iterations end after a sweep that changes no velocity by more), and tolerance="0" (MuJoCo: never stop early) runs
every iteration. Converged steps cost a few sweeps (Gymnasium's hopper: 3 of 100 on average, its trajectory 1e-6 m
from the fully iterated one); stiff, many-contact ones still need most of them (dm_control's quadruped: 60 of 100).
Lower `set_solver_iteration_counts` where speed matters more than MuJoCo's results.

Which solver. MuJoCo's Newton (its default) and CG solve the step's convex problem to convergence; artic's DIRECT
solves the rows exactly, PGS iterates towards them. `MjcfModel.solver_type` is therefore SolverType.DIRECT for
`solver="Newton"` or `"CG"` and SolverType.PGS for `solver="PGS"`; a scene made with `solver_type=model.solver_type`
simulates the file's choice (the scene's solver is the scene's, not a model's). Measured (docs/benchmarks.md, "Real
robot scenes"): DIRECT is also the cheaper where PGS converges slowly (dm_control's humanoid 231 -> 61 us a step,
Fetch 566 -> 180, over 16 registry scenes a median 3.9x MuJoCo's step against PGS's 4.3x, the worst 12.7x against
40x), up to 1.3x PGS's on a few small contact-free ones, and holds every keyframe and drop of the MJCF oracle tests
(tests/io/mjcf/test_drops.py, test_keyframe_hold.py run both). Its workspace grows with the square of the rows per
env (docs/solvers.md): PGS remains the choice for thousands of envs of a many-contact model.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...description.fluid import Fluid

if TYPE_CHECKING:
    from ...description.actors import RigidStatic
    from ...description.articulation import Articulation, Link
    from ..xml_values import XmlValues

# <flag> switches whose default is "enable" (MuJoCo's disable flags); the rest default to "disable"
_DISABLE_FLAGS = (
    "constraint",
    "equality",
    "frictionloss",
    "limit",
    "contact",
    "spring",
    "damper",
    "gravity",
    "clampctrl",
    "warmstart",
    "filterparent",
    "actuation",
    "refsafe",
    "sensor",
    "midphase",
    "eulerdamp",
    "autoreset",
    "nativeccd",
    "island",
    "passive",
)
# flags that change nothing artic simulates (diagnostics, collision-detection internals, sensors)
_HARMLESS_FLAGS = (
    "energy",
    "sensor",
    "midphase",
    "nativeccd",
    "multiccd",
    "island",
    "warmstart",
    "fwdinv",
    "invdiscrete",
    "autoreset",
    "clampctrl",
    "filterparent",
)
# <option> attributes read here; the others change MuJoCo's solver, integrator or medium and are reported
_READ_OPTIONS = ("timestep", "gravity", "integrator", "iterations", "tolerance", "cone", "impratio", "solver")
MAX_ITERATIONS = 255  # PhysX's bound on an articulation's position iterations
# [m/s or rad/s] Articulation.solver_tolerance of an MJCF import whose tolerance is not 0: 1e-4 changed the dm_control
# quadruped's 1 s drop by 0.9 m (it tips another way), 1e-5 by 6e-6 m (docs/benchmarks.md)
SOLVER_TOLERANCE = 1e-5
# option attributes that change nothing artic simulates: the magnetic field acts on magnetometers only, apirate
# on MuJoCo's remote API
_HARMLESS_OPTIONS = ("magnetic", "apirate")
# what artic steps for the integrators it does not follow (Euler and implicitfast it does: actuators.py, passive.py)
_INTEGRATORS = {
    "RK4": "artic steps MuJoCo's Euler: semi-implicit, joint damping implicit, actuator forces explicit",
    "implicit": "artic steps implicitfast: joint and actuator damping implicit, the Coriolis terms' velocity "
    "derivatives left out",
}
# the medium: MuJoCo's inertia-box fluid model on every link (description/fluid.py)
_MEDIUM = ("density", "viscosity", "wind")
# artic's link and joint caps standing in for "no cap"
NO_CAP = 1e10


@dataclass
class Options:
    """What `<option>` says about the simulation: time step, gravity (zero when disabled) and the switches."""

    timestep: float = 0.002
    gravity: tuple = (0.0, 0.0, -9.81)
    contact: bool = True  # contacts are generated (off with flag contact or constraint disabled)
    limit: bool = True  # joint ranges are enforced (off with flag limit or constraint disabled)
    frictionloss: bool = True  # joint dry friction acts (off with flag frictionloss or constraint disabled)
    spring: bool = True  # joint stiffness acts (off with flag spring disabled)
    damper: bool = True  # joint damping acts (off with flag damper disabled)
    iterations: int = 100  # MuJoCo's solver iterations: the articulations' position iterations (capped at 255)
    tolerance: float = 1e-8  # MuJoCo's; 0 runs every iteration, any other value gives SOLVER_TOLERANCE
    soft: bool = True  # MuJoCo's soft constraints mapped (load_mjcf's soft_constraints), else PhysX's hard rows
    cone: str = "pyramidal"  # MuJoCo's friction cone: the soft normal row's regularizer (contact_rows._cone_factor)
    impratio: float = 1.0
    solver: str = "Newton"  # MuJoCo's solver: Newton and CG map to SolverType.DIRECT, PGS to PGS (module docstring)
    integrator: str = "Euler"  # Euler: explicit actuator drives; implicit(fast): their damping implicit (actuators.py)
    fluid: Fluid | None = None  # the medium (density, viscosity, wind), None when MuJoCo's is vacuum


def read_options(v: XmlValues, root: ET.Element, soft: bool = True) -> Options:
    """The `<option>` element(s) of `root` (later ones override, as MuJoCo merges them), with one warning per
    attribute or flag that artic does not follow. soft: MuJoCo's soft constraints are mapped (cone and impratio
    matter only then)."""
    opts = Options(soft=soft)
    gravity_on = True
    dropped = []
    for opt in root.findall("option"):
        if "timestep" in opt.attrib:
            opts.timestep = v.number(opt, "timestep")
            if opts.timestep <= 0.0:
                raise v.fail(opt, f"attribute timestep='{opt.get('timestep')}' must be > 0")
        if "gravity" in opt.attrib:
            opts.gravity = tuple(v.numbers(opt, "gravity", 3))
        if "iterations" in opt.attrib:
            opts.iterations = v.integer(opt, "iterations", opt.get("iterations"), 0, 2**31 - 1)
            if opts.iterations > MAX_ITERATIONS:
                dropped.append(
                    (
                        opt,
                        f"attribute iterations='{opts.iterations}' is capped at {MAX_ITERATIONS} "
                        "position iterations (PhysX's bound)",
                    )
                )
        if "tolerance" in opt.attrib:
            opts.tolerance = v.number(opt, "tolerance", minimum=0.0)
        opts.cone = v.choice(opt, "cone", opt.get("cone", opts.cone), ("pyramidal", "elliptic"))
        opts.solver = v.choice(opt, "solver", opt.get("solver", opts.solver), ("PGS", "CG", "Newton"))
        if "impratio" in opt.attrib:
            opts.impratio = v.number(opt, "impratio")
            if opts.impratio <= 0.0:
                raise v.fail(opt, f"attribute impratio='{opt.get('impratio')}' must be > 0")
        if not soft and ("cone" in opt.attrib or "impratio" in opt.attrib):
            dropped.append((opt, "attributes cone and impratio (soft constraints are off: soft_constraints=False)"))
        opts.integrator = v.choice(
            opt, "integrator", opt.get("integrator", opts.integrator), ("Euler", "RK4", "implicit", "implicitfast")
        )
        if "integrator" in opt.attrib and opts.integrator in ("RK4", "implicit"):
            dropped.append((opt, f"attribute integrator='{opts.integrator}' ({_INTEGRATORS[opts.integrator]})"))
        if any(name in opt.attrib for name in _MEDIUM):
            medium = opts.fluid or Fluid()
            density = v.number(opt, "density", text=opt.get("density", str(medium.density)), minimum=0.0)
            viscosity = v.number(opt, "viscosity", text=opt.get("viscosity", str(medium.viscosity)), minimum=0.0)
            wind = tuple(v.numbers(opt, "wind", 3, text=opt.get("wind", " ".join(map(str, medium.wind)))))
            opts.fluid = Fluid(density, viscosity, wind)
        for name, text in opt.attrib.items():
            if name in _READ_OPTIONS or name in _HARMLESS_OPTIONS or name in _MEDIUM:
                continue
            dropped.append((opt, f"attribute {name}='{text}' (a MuJoCo solver setting; artic's solver has its own)"))
        for flag in opt.findall("flag"):
            for name, value in flag.attrib.items():
                value = v.choice(flag, name, value, ("enable", "disable"))
                on = value == "enable"
                if name == "gravity":
                    gravity_on = on
                elif name == "contact":
                    opts.contact = on
                elif name == "limit":
                    opts.limit = on
                elif name in ("frictionloss", "spring", "damper"):
                    setattr(opts, name, on)
                elif name == "constraint":
                    if not on:
                        opts.contact = opts.limit = opts.frictionloss = False
                elif name not in _HARMLESS_FLAGS and on != (name in _DISABLE_FLAGS):
                    dropped.append((flag, f"attribute {name}='{value}' (not followed)"))
        if len(opt) and any(c.tag != "flag" for c in opt):
            dropped.extend((c, "is not followed") for c in opt if c.tag != "flag")
    if not gravity_on:
        opts.gravity = (0.0, 0.0, 0.0)
    for el, what in dropped:
        warnings.warn(f"{v.where(el)}: {what}; MuJoCo's setting is ignored", RuntimeWarning, stacklevel=4)
    return opts


def apply_mujoco_defaults(art: Articulation, opts: Options) -> None:
    """MuJoCo's behaviour by default on an imported articulation: no link damping, no sleeping, no velocity caps
    (see the module docstring); with contacts disabled, its shapes collide with nothing."""
    art.sleep_threshold = 0.0
    art.set_solver_iteration_counts(min(max(opts.iterations, 1), MAX_ITERATIONS), 1)
    art.solver_tolerance = SOLVER_TOLERANCE if opts.tolerance > 0.0 else 0.0
    if opts.fluid is not None and opts.fluid.active:
        art.fluid = opts.fluid  # MuJoCo's inertia-box fluid forces (description/fluid.py)
    for link in art.get_links():
        link.linear_damping = 0.0
        link.angular_damping = 0.0
        link.max_linear_velocity = NO_CAP
        link.max_angular_velocity = NO_CAP
        if link.inbound_joint is not None:
            for ax in link.inbound_joint.dof_axes():
                link.inbound_joint.set_max_joint_velocity(ax, NO_CAP)
        if not opts.contact:
            disable_contacts(link)


def disable_contacts(actor: RigidStatic | Link) -> None:
    """MuJoCo's `flag contact='disable'`: the actor's shapes collide with nothing (group and mask 0)."""
    for shape in actor.shapes:
        shape.collision_group = 0
        shape.collision_mask = 0
