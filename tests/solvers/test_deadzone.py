"""Deadzone controllers and secondary targets (artic.Deadzone; the ODE paper, end of section S1), solved by the
direct solver: zero force inside the band, the implicit spring of eq. 13 beyond it, and a secondary target pursued
only while the coordinate is inside the band. On an articulation axis and on a body joint's coordinate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import artic
from artic import Axis, CacheFlag, SolverType, Transform

DT = 0.01
MASS = 2.0


def _slider_articulation(gravity_x=0.0):
    """A 2 kg link on a prismatic X axis of a fixed base, no damping, no friction, gravity along x only."""
    art = artic.Articulation("slider")
    art.set_articulation_flag(artic.ArticulationFlag.FIX_BASE)
    root = art.create_link(None, Transform(), "root")
    link = art.create_link(root, None, "slide")
    link.mass = MASS
    for lk in (root, link):
        lk.linear_damping = lk.angular_damping = 0.0
        lk.cfm_scale = 0.0
    j = link.inbound_joint
    j.friction_coefficient = 0.0
    j.set_joint_type(artic.JointType.PRISMATIC)
    j.set_motion(Axis.X, artic.Motion.FREE)
    art.sleep_threshold = 0.0
    scene = artic.Scene(1, gravity=(gravity_x, 0.0, 0.0), solver_type=SolverType.DIRECT)
    scene.add_articulation(art)
    return art, scene, j


class _AxisRig:
    """The deadzone on the articulation's own dof."""

    def __init__(self, deadzone, v0=0.0, gravity_x=0.0):
        self.art, self.scene, self.joint = _slider_articulation(gravity_x)
        self.joint.set_deadzone(Axis.X, deadzone)
        self.cache = self.art.create_cache()
        self.cache.joint_velocity[:] = v0
        self.art.apply_cache(self.cache, CacheFlag.VELOCITY)

    def step(self):
        self.scene.step(DT)
        self.art.copy_internal_state_to_cache(self.cache, CacheFlag.POSITION | CacheFlag.VELOCITY)
        return float(self.cache.joint_position[0, 0]), float(self.cache.joint_velocity[0, 0])


class _CoordinateRig:
    """The deadzone on a body joint's coordinate: a 2 kg free body on a SliderJoint (along world z) to the world."""

    def __init__(self, deadzone, v0=0.0, gravity_z=0.0):
        b = artic.RigidDynamic(Transform((0.0, 0.0, 1.0)), "b")
        b.link.mass, b.link.inertia = MASS, (0.1, 0.2, 0.3)
        b.link.linear_damping = b.link.angular_damping = 0.0
        b.articulation.sleep_threshold = 0.0
        self.scene = artic.Scene(1, gravity=(0.0, 0.0, gravity_z), solver_type=SolverType.DIRECT)
        self.scene.add_actor(b)
        self.joint = artic.SliderJoint(b, None, Transform((0.0, 0.0, 1.0)))
        self.joint.set_deadzone(0, deadzone)
        self.scene.add_joint(self.joint)
        self.scene.set_actor_velocity(b, [[0.0, 0.0, v0, 0.0, 0.0, 0.0]])
        self.body = b

    def step(self):
        self.scene.step(DT)
        return float(self.scene.get_joint_coordinates(self.joint)[0, 0]), float(
            self.scene.get_actor_velocity(self.body)[0, 2]
        )


def _reference(dz, q, v, force, steps):
    """Closed form per step (float64): v' = v + h F/m, then the edge springs' implicit impulse
    lambda = -h (k (q + h v+ - edge) + d v+), kept only where it pushes back (lambda <= 0 at the high edge,
    >= 0 at the low one); the secondary spring while q starts inside the band; q += h v+."""
    out = []
    for _ in range(steps):
        v_free = v + DT * force / MASS
        lam_total = 0.0
        inside = dz.low <= q <= dz.high
        rows = [(dz.stiffness, dz.damping, dz.high, -np.inf, 0.0), (dz.stiffness, dz.damping, dz.low, 0.0, np.inf)]
        if inside and dz.secondary_max_force > 0:
            cap = dz.secondary_max_force * DT
            rows.append((dz.secondary_stiffness, dz.secondary_damping, dz.secondary_target, -cap, cap))
        # exact solution of the 1-dof LCP: each row free (its spring impulse, within its bounds) or at a bound
        # (where its spring would push past it); try every combination, keep the one meeting every condition
        best = None
        for states in itertools.product(range(3), repeat=len(rows)):
            fixed = [(r[3] if s == 1 else r[4]) for r, s in zip(rows, states) if s != 0]
            if not all(np.isfinite(fixed)):
                continue
            free = [r for r, s in zip(rows, states) if s == 0]
            a = MASS + sum(DT * (DT * k + d) for k, d, *_ in free)
            vp = (MASS * v_free + sum(fixed) - sum(DT * k * (q - e) for k, d, e, *_ in free)) / a
            ok, total = True, 0.0
            for (k, d, e, lo, hi), st in zip(rows, states):
                spring = -DT * (k * (q + DT * vp - e) + d * vp)
                if st == 0:
                    ok &= lo - 1e-12 <= spring <= hi + 1e-12
                    total += spring
                elif st == 1:
                    ok &= spring <= lo + 1e-12
                    total += lo
                else:
                    ok &= spring >= hi - 1e-12
                    total += hi
            if ok:
                best = (vp, total)
                break
        vp, lam_total = best
        q, v = q + DT * vp, vp
        out.append((q, v, lam_total))
    return np.array(out)


@pytest.mark.parametrize("rig", [_AxisRig, _CoordinateRig], ids=["axis", "coordinate"])
def test_zero_force_inside_the_band_and_the_implicit_spring_beyond(rig):
    """A 2 kg slider at 1 m/s inside the band [-0.1, 0.1] (k = 1000 N/m, d = 5 N s/m): no force while inside (the
    velocity stays 1 m/s exactly until the step that would cross the edge), then each step is the implicit spring
    towards the crossed edge, pushing back only (closed form, float64) to 1e-5 m and 1e-4 m/s over 60 steps;
    the reported controller impulse equals the closed form's."""
    dz = artic.Deadzone(-0.1, 0.1, 1000.0, 5.0)
    r = rig(dz, v0=1.0)
    ref = _reference(dz, 0.0, 1.0, 0.0, 60)
    got = []
    for _ in range(60):
        q, v = r.step()
        impulse = r.scene.get_solver_report(r.art if rig is _AxisRig else r.body)["deadzone_impulse"][0, 0]
        got.append((q, v, impulse))
    got = np.array(got)
    first_push = int(np.argmax(np.abs(ref[:, 2]) > 0))
    assert first_push >= 8  # it coasted for 8 steps (0.08 m) before the band's edge
    assert np.all(got[:first_push, 1] == pytest.approx(1.0, abs=1e-6))
    assert np.all(got[:first_push, 2] == 0.0)
    np.testing.assert_allclose(got[:, 0], ref[:, 0], atol=1e-5)
    np.testing.assert_allclose(got[:, 1], ref[:, 1], atol=1e-4)
    np.testing.assert_allclose(got[:, 2], ref[:, 2], atol=1e-4)
    assert got[:, 0].max() > 0.1 and got[-1, 0] < 0.1 + 1e-3  # it went past the edge and was pushed back


@pytest.mark.parametrize("rig", [_AxisRig, _CoordinateRig], ids=["axis", "coordinate"])
def test_secondary_target_is_pursued_only_inside_the_band(rig):
    """Band [-0.5, 0.5], secondary target 0.2 (k2 = 50, d2 = 20, capped at 20 N): from rest at 0 the coordinate
    follows the closed form to the secondary target (1e-5 m over 200 steps) and rests there. Under a constant
    100 N push along the coordinate the 20 N secondary spring cannot hold it: it leaves the band, the secondary row
    switches off, and the edge spring alone holds it at high + 100 N / k (closed form, 1e-4 m)."""
    dz = artic.Deadzone(
        -0.5,
        0.5,
        2000.0,
        40.0,
        secondary_target=0.2,
        secondary_stiffness=50.0,
        secondary_damping=20.0,
        secondary_max_force=20.0,
    )
    r = rig(dz)
    got = np.array([r.step() for _ in range(200)])
    ref = _reference(dz, 0.0, 0.0, 0.0, 200)
    np.testing.assert_allclose(got[:, 0], ref[:, 0], atol=1e-5)
    assert got[-1, 0] == pytest.approx(0.2, abs=1e-3)
    push = 100.0 / MASS
    r = rig(dz, **({"gravity_x": push} if rig is _AxisRig else {"gravity_z": push}))
    got = np.array([r.step() for _ in range(400)])
    ref = _reference(dz, 0.0, 0.0, 100.0, 400)
    np.testing.assert_allclose(got[:, 0], ref[:, 0], atol=1e-4)
    assert got[-1, 0] == pytest.approx(0.5 + 100.0 / 2000.0, abs=1e-3)


def test_iterative_solvers_refuse_deadzones_and_bad_deadzones_are_refused():
    """PGS and TGS do not solve deadzone rows: stepping one raises an ArticError that says to use DIRECT (and how to
    remove it); invalid bands, gains and secondary targets are refused naming the joint and field."""
    r = _AxisRig(artic.Deadzone(-0.1, 0.1, 10.0))
    for solver in (SolverType.PGS, SolverType.TGS):
        r.scene.solver_type = solver
        with pytest.raises(artic.ArticError, match="only the direct solver solves.*SolverType.DIRECT"):
            r.scene.step(DT)
    r.joint.set_deadzone(Axis.X, None)
    r.scene.step(DT)  # without it PGS steps
    j = r.joint
    bad = [
        (artic.Deadzone(0.2, 0.1, 10.0), "low 0.2 > high 0.1"),
        (artic.Deadzone(-0.1, 0.1, -1.0), "stiffness must be finite and >= 0"),
        (artic.Deadzone(-0.1, 0.1, float("nan")), "stiffness must be a number"),
        (artic.Deadzone(-0.1, 0.1, 0.0, 0.0), "needs stiffness or damping"),
        (
            artic.Deadzone(-0.1, 0.1, 1.0, secondary_target=0.5, secondary_stiffness=1.0, secondary_max_force=1.0),
            "secondary_target 0.5 lies outside",
        ),
        ((-0.1, 0.1), "takes an artic.Deadzone"),
    ]
    for value, message in bad:
        with pytest.raises(artic.ValidationError, match=f"joint '{j.name}'.*{message}"):
            j.set_deadzone(Axis.X, value)
    j.set_deadzone(Axis.Y, artic.Deadzone(-0.1, 0.1, 1.0))  # a locked axis
    r.scene.solver_type = SolverType.DIRECT
    with pytest.raises(artic.ValidationError, match="deadzone on axis .* which is locked"):
        r.scene.step(DT)
