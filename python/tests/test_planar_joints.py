"""pytest tests of the planar distance, fixed and point_on_line joints and planar drivers built with
saltus.PlanarBuilder: the same model as the scene file format (docs/scene-format.md), and errors
naming the item."""
import math

import numpy as np
import pytest

import saltus

SCENE = """scene: py_planar_joints
gravity: [0, -9.81]
bodies:
  - {name: crank, mass: 0.5, inertia: 0.002, position: [0, 0.05, 1.5707963267948966]}
  - {name: slider, mass: 2, inertia: 0.01, position: [0.3, 0, 0]}
  - {name: arm, mass: 1, inertia: 0.01, position: [0.3, 0.2, 0]}
  - {name: pin, mass: 0.1, inertia: 0.001, position: [0.5, 0.2, 0]}
joints:
  - {name: pivot, type: revolute, body_a: ground, body_b: crank, point_b: [-0.05, 0]}
  - {name: rod, type: distance, body_a: crank, body_b: slider, point_a: [0.05, 0]}
  - {name: guide, type: prismatic, body_a: ground, body_b: slider, axis_a: [1, 0]}
  - {name: weld, type: fixed, body_a: slider, body_b: arm, point_a: [0, 0.2]}
  - {name: slot, type: point_on_line, body_a: arm, body_b: pin, axis_a: [1, 0]}
drivers:
  - {name: push, joint: guide, kind: displacement, profile: sine, value0: 0.3,
     amplitude: 0.05, frequency: 6.283185307179586}
simulation:
  t_end: 0.5
"""


def build():
    b = saltus.PlanarBuilder()
    b.set_gravity([0, -9.81])
    b.add_body("crank", mass=0.5, inertia=0.002, position=[0, 0.05, math.pi / 2])
    b.add_body("slider", mass=2, inertia=0.01, position=[0.3, 0, 0])
    b.add_body("arm", mass=1, inertia=0.01, position=[0.3, 0.2, 0])
    b.add_body("pin", mass=0.1, inertia=0.001, position=[0.5, 0.2, 0])
    b.add_joint("pivot", "revolute", "ground", "crank", point_b=[-0.05, 0])
    b.add_joint("rod", "distance", "crank", "slider", point_a=[0.05, 0])  # length from q0
    guide = b.add_joint("guide", "prismatic", "ground", "slider", axis_a=[1, 0])
    b.add_joint("weld", "fixed", "slider", "arm", point_a=[0, 0.2])
    b.add_joint("slot", "point_on_line", "arm", "pin", axis_a=[1, 0])
    b.add_driver("push", guide, kind="displacement", profile="sine", value0=0.3,
                 amplitude=0.05, frequency=2 * math.pi)
    return b


def test_planar_builder_new_joints_and_driver_match_the_scene_file():
    built = build().build()
    scene = saltus.Model.from_scene_text(SCENE)
    assert built.constraint_names == scene.constraint_names
    assert built.constraint_names[-1] == "push"
    runs = [saltus.Simulation(m, scene.options).run(0.5) for m in (built, scene)]
    (tb, rb), (ts, rs) = runs
    assert rb.ok and rs.ok
    # The same model and options: the same arithmetic (round-off margin).
    assert tb.q.shape == ts.q.shape
    assert np.max(np.abs(tb.q - ts.q)) < 1e-12
    # The slider follows its driver s(t) = 0.3 + 0.05 sin(2 pi t) (integrator tolerance).
    t = tb.t[-1]
    assert abs(tb.q[-1, 3] - (0.3 + 0.05 * math.sin(2 * math.pi * t))) < 1e-5


def test_planar_builder_rejects_bad_joints_and_drivers_naming_them():
    b = build()
    with pytest.raises(saltus.InvalidArgument, match="driver 'd'.*revolute.*'guide'"):
        b.add_driver("d", "guide", kind="angle")
    with pytest.raises(saltus.InvalidArgument, match="driver 'd'.*prismatic.*'rod'"):
        b.add_driver("d", "rod", kind="displacement")
    with pytest.raises(saltus.InvalidArgument, match="driver 'd'.*unknown joint 'nope'"):
        b.add_driver("d", "nope")
    with pytest.raises(saltus.InvalidArgument, match="driver 'd'.*kind"):
        b.add_driver("d", "pivot", kind="twist")
    with pytest.raises(saltus.InvalidArgument, match="joint 'r'.*length"):
        b.add_joint("r", "distance", "ground", "pin", length=-1)
    with pytest.raises(saltus.InvalidArgument, match="joint 's'.*axis_a"):
        b.add_joint("s", "point_on_line", "ground", "pin", axis_a=[0, 0])
