"""The fluid medium (description/fluid.py, MuJoCo's inertia-box model): closed forms and identities on single
bodies, and refusals of bad input. MJCF files with a medium against MuJoCo: tests/io/mjcf/test_options.py."""

from __future__ import annotations

import numpy as np
import pytest

import artic
from artic import ArticError, Fluid
from artic.description.fluid import inertia_box
from tests.support.bodies import body


def _falling_box(fluid, half=(0.2, 0.1, 0.05), density=100.0, steps=3000, dt=1e-3, pose=(0.0, 0.0, 0.0)):
    b = body(artic.Box(half), pose=pose, density=density)
    b.link.linear_damping = 0.0
    b.articulation.fluid = fluid
    scene = artic.Scene(1, gravity=(0.0, 0.0, -9.81))
    scene.add_actor(b)
    for _ in range(steps):
        scene.step(dt)
    return b, scene


def test_the_inertia_box_of_a_box_is_the_box():
    """A solid box's principal moments give back its sides (the model's definition), a massless link none."""
    half = np.array([0.2, 0.1, 0.05])
    m = 3.0
    moments = (
        m / 3.0 * np.array([half[1] ** 2 + half[2] ** 2, half[0] ** 2 + half[2] ** 2, half[0] ** 2 + half[1] ** 2])
    )
    np.testing.assert_allclose(inertia_box(m, moments), 2 * half, rtol=1e-12)
    assert not inertia_box(0.0, moments).any()


def test_stokes_drag_gives_the_terminal_speed():
    """In a viscous medium alone a falling box reaches m g / (3 pi viscosity d), d the mean side of its inertia box
    (3 s at dt 1e-3 with a 0.07 s time constant: there to 1e-4 relative), and does not turn."""
    viscosity = 0.5
    b, scene = _falling_box(Fluid(viscosity=viscosity), density=10.0)
    d = np.mean([0.4, 0.2, 0.1])
    expected = b.link.mass * 9.81 / (3.0 * np.pi * viscosity * d)
    v = scene.get_actor_velocity(b)[0]
    assert v[2] == pytest.approx(-expected, rel=1e-4)
    np.testing.assert_allclose(v[[0, 1, 3, 4, 5]], 0.0, atol=1e-6)


def test_quadratic_drag_gives_the_terminal_speed_and_wind_carries():
    """In a dense medium alone, a box falling flat (its 0.4 x 0.2 face down) ends at sqrt(2 m g / (density A));
    a horizontal wind w drags it along its 0.2 x 0.1 side face: the closed form of m u' = -density / 2 A u^2 for
    the speed u relative to the wind is u = w / (1 + density A w t / (2 m)) (to 2e-3 at dt 1e-3)."""
    density, wind, seconds = 50.0, 1.5, 4.0
    b, scene = _falling_box(Fluid(density=density, wind=(wind, 0.0, 0.0)), steps=int(seconds * 1000))
    m = b.link.mass
    v = scene.get_actor_velocity(b)[0]
    assert v[2] == pytest.approx(-np.sqrt(2.0 * m * 9.81 / (density * 0.4 * 0.2)), rel=1e-3)
    relative = wind / (1.0 + density * 0.2 * 0.1 * wind * seconds / (2.0 * m))
    assert wind - v[0] == pytest.approx(relative, rel=2e-3)
    assert v[0] > 1.0  # carried


def test_without_a_medium_nothing_changes():
    """fluid None, or a medium of zero density and viscosity: free fall, v = -g t."""
    for fluid in (None, Fluid()):
        b, scene = _falling_box(fluid, steps=100)
        assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(-9.81 * 0.1, rel=1e-5)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"density": -1.0}, "density must be finite and >= 0"),
        ({"viscosity": float("nan")}, "viscosity must be finite and >= 0"),
        ({"density": "1"}, "density must be a number"),
        ({"wind": (1.0, 2.0)}, "wind must be 3 finite numbers"),
        ({"wind": (0.0, float("inf"), 0.0)}, "wind must be 3 finite numbers"),
    ],
)
def test_bad_media_are_refused(kwargs, words):
    with pytest.raises(ArticError, match=words):
        Fluid(**kwargs)


def test_fluid_must_be_a_fluid():
    art = artic.Articulation("a")
    with pytest.raises(ArticError, match="articulation 'a': fluid must be an artic.Fluid or None"):
        art.fluid = 1.2


def test_a_medium_set_in_a_scene_acts_from_the_next_step():
    """Like any model parameter, `fluid` (and a link's `in_fluid`) set while the articulation is in a scene acts from
    the next step: the viscous drag's first-step velocity change is -h (3 pi viscosity d / m) v."""
    b, scene = _falling_box(None, density=10.0, steps=0)
    scene.set_actor_velocity(b, [0.0, 0.0, -1.0, 0.0, 0.0, 0.0])
    b.articulation.fluid = Fluid(viscosity=0.5)
    dt = 1e-3
    scene.step(dt)
    drag = 3.0 * np.pi * 0.5 * np.mean([0.4, 0.2, 0.1]) / b.link.mass
    assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(-1.0 - 9.81 * dt + drag * dt, rel=1e-5)
    b.link.in_fluid = False
    scene.step(dt)
    assert scene.get_actor_velocity(b)[0, 2] == pytest.approx(-1.0 - 2 * 9.81 * dt + drag * dt, rel=1e-5)
    with pytest.raises(ArticError, match="in_fluid must be True or False"):
        b.link.in_fluid = "no"
