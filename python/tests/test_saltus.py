"""pytest tests of the Python module `saltus` (run by ctest as python_pytest, PYTHONPATH = the
build directory of the module)."""
import math
import os

import numpy as np
import pytest

import saltus

G = 9.81
BALL = """scene: ball
bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]
contacts: [{name: floor, type: disk_line, body_a: ground, body_b: ball, normal_a: [0, 1],
            radius_b: 0.1, restitution: 0.9}]
simulation: {t_end: 1, rtol: 1.0e-8, atol: 1.0e-10, output_step: 0.01}
"""


def ball():
    return saltus.Model.from_scene_text(BALL)


def test_run_returns_numpy_trajectory_and_events():
    sim = saltus.Simulation(ball())
    traj, result = sim.run(0.6)
    assert result.ok and result.status == "finished"
    assert isinstance(traj.q, np.ndarray) and traj.q.shape == (len(traj.t), 3)
    assert traj.t[0] == 0.0
    impacts = [e for e in traj.events if e.kind == saltus.EventKind.impact]
    assert len(impacts) == 1
    # Free flight is integrated exactly by DOPRI5: only the root tolerance remains (1e-9 margin).
    assert impacts[0].t == pytest.approx(math.sqrt(2 * 0.9 / G), abs=1e-9)
    assert sim.stats["impacts"] == 1


def test_scene_file_and_events_iteration():
    path = os.path.join(os.environ["SALTUS_SOURCE_DIR"], "examples", "bouncing_ball.yaml")
    model = saltus.Model.from_scene_file(path)
    assert model.name == "bouncing_ball" and model.position_names[1] == "ball.y"
    kinds = [e.kind for e in saltus.Simulation(model).events(1.5)]
    assert kinds.count(saltus.EventKind.impact) == 2  # t1 = 0.428, t2 = t1 + 2·0.9·v1/g = 1.199


def test_state_access_multipliers_and_index_sets():
    sim = saltus.Simulation(saltus.Model.from_scene_text(BALL.replace("[0, 1, 0]", "[0, 0.1, 0]")))
    sim.advance_to(0.1)
    assert sim.index_sets() == ([0], [0])
    assert sim.multipliers()[0] == pytest.approx(G, abs=1e-9)  # resting weight, round-off
    sim.set_state(0.0, np.array([0.0, 2.0, 0.0]), np.zeros(3))
    assert sim.q[1] == 2.0 and sim.t == 0.0


def test_python_force_callable_gives_harmonic_motion():
    model = saltus.Model.lagrangian(1, force=lambda t, q, v: -4.0 * q, q0=[1.0], v0=[0.0])
    opts = model.options
    opts.rtol, opts.atol = 1e-10, 1e-12
    sim = saltus.Simulation(model, opts)
    sim.advance_to(1.0)
    assert sim.q[0] == pytest.approx(math.cos(2.0), abs=1e-7)  # DOPRI5 at rtol 1e-10


def test_set_force_external_force_and_rewind():
    sim = saltus.Simulation(ball())
    sim.set_external_force([0.0, G, 0.0])  # hovers
    sim.advance_to(0.2)
    assert sim.q[1] == pytest.approx(1.0, abs=1e-12)  # zero net force, round-off
    snap = sim.save()
    sim.set_force(lambda t, q, v: np.array([1.0, 0.0, 0.0]))
    sim.advance_to(0.4)
    x_forced = sim.q[0]
    assert x_forced == pytest.approx(0.5 * 0.2**2, abs=1e-12)  # polynomial motion
    sim.set_force(None)
    sim.restore(snap)
    sim.advance_to(0.4)
    assert sim.q[0] == 0.0


def test_observers_and_comparison_study():
    sim = saltus.Simulation(ball())
    seen = []
    sim.on_event(lambda e, q, vm, vp: seen.append((e.t, vm[1], vp[1])))
    steps = []
    sim.on_step(lambda t, q, v: steps.append(t))
    sim.advance_to(0.5)
    assert len(seen) == 1 and seen[0][1] < 0 < seen[0][2] and steps
    name = saltus.integrators()[0]
    study = saltus.compare(ball(), [name], 0.5)
    assert study[0]["integrator"] == name and study[0]["ok"]
    assert study[0]["stats"]["accepted_steps"] > 0


def test_bad_input_raises_python_exceptions():
    with pytest.raises(saltus.SceneError, match="bogus"):
        saltus.Model.from_scene_text(BALL + "bogus: 1\n")
    with pytest.raises(saltus.SceneError):
        saltus.Model.from_scene_file("/nonexistent.yaml")
    sim = saltus.Simulation(ball())
    with pytest.raises(saltus.InvalidArgument):
        sim.set_state(0.0, np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError):  # InvalidArgument is a ValueError
        sim.advance_to(float("nan"))
    with pytest.raises(saltus.InvalidArgument):
        sim.set_external_force("not a vector")
    with pytest.raises(saltus.InvalidArgument):
        sim.set_force(42)
    opts = saltus.Options()
    with pytest.raises(saltus.InvalidArgument):
        opts.formulation = "index7"
    opts.integrator = "nope"
    with pytest.raises(saltus.InvalidArgument, match="nope"):
        saltus.Simulation(ball(), opts)
    other = saltus.Simulation(saltus.Model.lagrangian(1, q0=[0.0], v0=[0.0]))
    with pytest.raises(saltus.StateError):
        sim.restore(other.save())


def test_exception_in_python_callback_propagates_and_run_continues():
    sim = saltus.Simulation(ball())
    calls = {"n": 0}

    def force(t, q, v):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyError("from the callback")
        return np.zeros(3)

    sim.set_force(force)
    with pytest.raises(KeyError):
        sim.advance_to(1.0)
    with pytest.raises(saltus.InvalidArgument):  # wrong size, rejected: the old force stays
        sim.set_force(lambda t, q, v: np.zeros(4))
    assert sim.advance_to(1.0).ok
    assert sim.stats["impacts"] == 1  # t1 = 0.428 s; t2 = 1.199 s is after the end


def test_integrator_choice_takes_its_default_formulation():
    # Every integrator runs the ball after setting only its name: the formulation becomes the
    # integrator's first (saltus list) unless the current one is supported.
    for name in saltus.integrators():
        opts = ball().options
        opts.integrator = name
        if name == "moreau_jean":
            opts.step = 1e-3  # time-stepping needs its fixed step too
        assert saltus.Simulation(ball(), opts).advance_to(0.1).ok, name
    opts = saltus.Options()
    opts.formulation = "index2"
    opts.integrator = "generalized_alpha"  # supports index2 (its first is index3): kept
    assert opts.formulation == "index2"
    opts.integrator = "dopri5"  # index1 only
    assert opts.formulation == "index1"
    model = saltus.Model.from_scene_text(BALL.replace("rtol:", "integrator: hem5, rtol:"))
    assert model.options.formulation == "index2"  # hem5's only formulation


def test_moreau_jean_time_stepping_runs_through_the_facade():
    # Options.integrator = "moreau_jean" with Options.step: the same Simulation, observers and
    # trajectory. θ = 1/2 is exact on free fall (the midpoint rule on a quadratic): y = 1 − g t²/2
    # to round-off; the impact (y = 0.1 at √(2·0.9/g) = 0.428 s) is captured in the step where
    # the predicted gap closes: within 2h.
    opts = ball().options
    opts.integrator = "moreau_jean"
    with pytest.raises(saltus.InvalidArgument, match="fixed step"):
        saltus.Simulation(ball(), opts)
    opts.step = 1e-3
    assert opts.step == 1e-3 and not opts.adaptive and opts.h_init == 1e-3
    sim = saltus.Simulation(ball(), opts)
    traj, result = sim.run(0.6)
    assert result.ok
    k = int(np.argmin(abs(traj.t - 0.3)))
    assert traj.t[k] == pytest.approx(0.3, abs=1e-12)
    assert traj.q[k, 1] == pytest.approx(1 - 0.5 * G * traj.t[k] ** 2, abs=1e-12)
    impacts = [e for e in traj.events if e.kind == saltus.EventKind.impact]
    assert len(impacts) == 1
    assert impacts[0].t == pytest.approx(math.sqrt(2 * 0.9 / G), abs=2e-3)
    assert sim.stats["accepted_steps"] == 600
    with pytest.raises(saltus.StateError):
        sim.contact_forces()


def test_frictional_scene_with_joints_follows_its_closed_form():
    # examples/friction/friction_oscillator.yaml (belt on a driven prismatic guide, block on it
    # with μ = 0.3): slip from rest until ẋ = v_b at t₁ = asin(v_b/(x_e ω))/ω, x_e = μ g/ω²; the
    # contacts' tangential rows come after the guide's rows. Tolerance as in
    # tests/tools/friction_examples_test.cc (root tolerance and rtol 1e-9 on the phase: 1e-8).
    path = os.path.join(os.environ["SALTUS_SOURCE_DIR"], "examples", "friction",
                        "friction_oscillator.yaml")
    sim = saltus.Simulation(saltus.Model.from_scene_file(path))
    traj, result = sim.run(0.1)
    assert result.ok
    omega, vb = 10.0, 0.2
    xe = 0.3 * G / omega**2
    sticks = [e.t for e in traj.events if e.kind == saltus.EventKind.stick]
    assert sticks and sticks[0] == pytest.approx(math.asin(vb / (xe * omega)) / omega, abs=1e-8)
