"""pytest tests of the planar torsional spring-damper and the scaled load of saltus.PlanarBuilder:
the same model as the scene file (docs/scene-format.md, `forces`), and errors naming the item."""
import math

import numpy as np
import pytest

import saltus

SCENE = """scene: py_planar_forces
gravity: [0, 0]
bodies:
  - {name: disk, mass: 2, inertia: 0.5, position: [0, 0, 0.3]}
  - {name: puck, mass: 4, inertia: 0.1, position: [2, 0, 0]}
joints:
  - {name: axle, type: revolute, body_a: ground, body_b: disk}
  - {name: rail, type: prismatic, body_a: ground, body_b: puck, point_a: [2, 0]}
forces:
  - {name: coil, type: torsional_spring, joint: axle, stiffness: 8, damping: 0.4, angle0: 0.1}
  - {name: push, type: load, body: puck, force: [3, 0],
     scale: {profile: sine, value0: 0.5, amplitude: 2, frequency: 3}}
simulation:
  t_end: 1
  rtol: 1.0e-10
  atol: 1.0e-12
"""


def build():
    b = saltus.PlanarBuilder()
    b.set_gravity([0, 0])
    b.add_body("disk", mass=2, inertia=0.5, position=[0, 0, 0.3])
    b.add_body("puck", mass=4, inertia=0.1, position=[2, 0, 0])
    b.add_joint("axle", "revolute", "ground", "disk")
    b.add_joint("rail", "prismatic", "ground", "puck", point_a=[2, 0])
    b.add_torsional_spring("coil", "axle", stiffness=8, damping=0.4, angle0=0.1)
    b.add_load("push", "puck", force=[3, 0],
               scale={"profile": "sine", "value0": 0.5, "amplitude": 2, "frequency": 3})
    return b


def test_planar_builder_forces_match_the_scene_file_and_the_closed_form():
    built = build().build()
    scene = saltus.Model.from_scene_text(SCENE)
    runs = [saltus.Simulation(m, scene.options).run(1.0) for m in (built, scene)]
    (tb, rb), (ts, rs) = runs
    assert rb.ok and rs.ok
    # The same model and options: the same arithmetic (round-off margin).
    assert tb.q.shape == ts.q.shape
    assert np.max(np.abs(tb.q - ts.q)) < 1e-12
    # Damped torsional oscillator (omega_n = 4, zeta = 0.1) and the puck under 3 (0.5 + 2 sin 3t):
    # rtol 1e-10 gives global errors far below 1e-7.
    t = tb.t[-1]
    wn, zeta = 4.0, 0.1
    wd = wn * math.sqrt(1 - zeta**2)
    theta = 0.1 + 0.2 * math.exp(-zeta * wn * t) * (
        math.cos(wd * t) + zeta / math.sqrt(1 - zeta**2) * math.sin(wd * t))
    x = 2 + 3 / 4 * (0.25 * t * t + 2 / 3 * t - 2 / 9 * math.sin(3 * t))
    assert abs(tb.q[-1, 2] - theta) < 1e-7
    assert abs(tb.q[-1, 3] - x) < 1e-7


def test_planar_builder_rejects_bad_forces_naming_them():
    b = build()
    with pytest.raises(saltus.InvalidArgument, match="torsional spring 't'.*revolute.*'rail'"):
        b.add_torsional_spring("t", "rail", stiffness=1)
    with pytest.raises(saltus.InvalidArgument, match="torsional spring 't'.*unknown joint 'nope'"):
        b.add_torsional_spring("t", "nope", stiffness=1)
    with pytest.raises(saltus.InvalidArgument, match="torsional spring 't'.*stiffness"):
        b.add_torsional_spring("t", "axle", stiffness=-1)
    with pytest.raises(saltus.InvalidArgument, match="load 'l'.*scale"):
        b.add_load("l", "puck", force=[1, 0], scale={"profile": "sinus"})
    with pytest.raises(saltus.InvalidArgument, match="load 'l'.*scale"):
        b.add_load("l", "puck", force=[1, 0], scale=2.0)
