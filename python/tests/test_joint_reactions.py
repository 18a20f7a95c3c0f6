"""pytest tests of Simulation.joint_reactions and Simulation.driver_efforts (issue 3 §2: driving
torques and bearing loads after a step) against Newton-Euler closed forms."""
import math

import numpy as np
import pytest

import saltus

G = 9.81

# The driven crank of tests/saltus/joint_reactions_test.cc: a bar of mass m = 3, length L = 0.8,
# hinged at its end to the ground origin and driven at theta = omega t (omega = 2).
PLANAR_CRANK = """scene: crank
gravity: [0, -9.81]
bodies: [{name: bar, mass: 3, inertia: 0.16, position: [0.4, 0, 0], velocity: [0, 0.8, 2]}]
joints: [{name: hinge, type: revolute, body_a: ground, body_b: bar, point_b: [-0.4, 0]}]
drivers: [{name: motor, joint: hinge, kind: angle, profile: constant_rate, rate: 2}]
simulation: {t_end: 2, rtol: 1.0e-9, atol: 1.0e-11}
"""

SPATIAL_CRANK = """scene: crank
dimension: 3
gravity: [0, -9.81, 0]
bodies: [{name: bar, mass: 3, inertia: [0.01, 0.16, 0.16], com: [0.4, 0, 0]}]
joints: [{name: hinge, type: revolute, body_a: ground, body_b: bar, ref_a: [1, 0, 0],
          ref_b: [1, 0, 0]}]
drivers: [{name: motor, joint: hinge, kind: angle, profile: constant_rate, rate: 2}]
simulation: {t_end: 2, rtol: 1.0e-9, atol: 1.0e-11}
"""


def expected_crank(t, m=3.0, half_length=0.4, omega=2.0):
    """Newton-Euler for the prescribed rotation: hinge force m(-omega^2 r_c) + m g y on the bar,
    torque about the hinge (and driver effort) m g c_x."""
    cx = half_length * math.cos(omega * t)
    cy = half_length * math.sin(omega * t)
    force = np.array([-m * omega**2 * cx, -m * omega**2 * cy + m * G, 0.0])
    return force, m * G * cx


@pytest.mark.parametrize("scene", [PLANAR_CRANK, SPATIAL_CRANK], ids=["planar", "spatial"])
def test_driven_crank_reactions_after_each_step(scene):
    sim = saltus.Simulation(saltus.Model.from_scene_text(scene))
    for _ in range(10):
        assert sim.step(0.1).ok
        reactions = sim.joint_reactions()
        assert list(reactions) == ["hinge"]
        hinge = reactions["hinge"]
        assert hinge.joint == "hinge" and hinge.body == "bar"
        force, torque = hinge
        assert isinstance(force, np.ndarray) and force.shape == (3,) and torque.shape == (3,)
        f_expected, tau = expected_crank(sim.t)
        # Prescribed motion: the forces (~30 N) follow from one index-1 solve at a state on the
        # closed form to the projection tolerance (C++ test measures ~1e-13): 1e-10.
        np.testing.assert_allclose(force, f_expected, rtol=0, atol=1e-10)
        np.testing.assert_allclose(torque, [0.0, 0.0, tau], rtol=0, atol=1e-10)
        efforts = sim.driver_efforts()
        assert list(efforts) == ["motor"]
        assert efforts["motor"] == pytest.approx(tau, abs=1e-10)


def test_models_without_joints():
    ball = saltus.Simulation(saltus.Model.from_scene_text(
        "scene: ball\nbodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
        "simulation: {t_end: 1}\n"))
    assert ball.joint_reactions() == {} and ball.driver_efforts() == {}
    mass = saltus.Simulation(saltus.Model.lagrangian(1, q0=[0.0], v0=[0.0]))
    with pytest.raises(saltus.StateError, match="not a planar or spatial multibody"):
        mass.joint_reactions()
    with pytest.raises(saltus.StateError):
        mass.driver_efforts()
