"""Coulomb friction as Python users see it (issue 17 section 8): Simulation.contact_forces() and the
frictional fields of Event on the planar examples of examples/friction/, against the closed forms
of their headers."""
import math
import os

import numpy as np
import pytest

import saltus

EXAMPLES = os.path.join(os.environ["SALTUS_SOURCE_DIR"], "examples", "friction")
G = 9.81
# Index-1 solves of forces of ~10 N: round-off.
FORCE_TOL = 1e-9


def example(name):
    return saltus.Model.from_scene_file(os.path.join(EXAMPLES, name))


def test_sliding_block_slides_at_mu_m_g_then_sticks_without_friction():
    # m = 1, mu = 0.3, v0 = 2: both corners slide until t* = v0 / (mu g), then stick.
    mu, t_stop = 0.3, 2.0 / (0.3 * G)
    sim = saltus.Simulation(example("sliding_block.yaml"))
    events = []
    sim.on_event(lambda e, q, vm, vp: events.append(e))
    sim.advance_to(0.5 * t_stop)
    forces = sim.contact_forces()
    assert sorted(forces) == ["left_corner", "right_corner"]
    for c in forces.values():
        d = c.slip_direction[0]  # +-1 in the basis of the contact's tangential row
        assert c.mode == ("slip+" if d > 0 else "slip-") and abs(d) == 1.0
        assert c.tangential.shape == (1,)
        assert c.tangential[0] == pytest.approx(-mu * c.normal * d, abs=FORCE_TOL)
        assert isinstance(c.tangential_force, np.ndarray) and c.tangential_force.shape == (3,)
    assert sum(c.normal for c in forces.values()) == pytest.approx(G, abs=FORCE_TOL)
    total = sum(c.tangential_force for c in forces.values())
    assert np.allclose(total, [-mu * G, 0, 0], atol=FORCE_TOL)

    sim.advance_to(1.5)
    forces = sim.contact_forces()
    assert {c.mode for c in forces.values()} == {"stick"}
    assert abs(sum(c.tangential[0] for c in forces.values())) < FORCE_TOL
    sticks = [e for e in events if e.kind == saltus.EventKind.stick]
    assert len(sticks) == 1
    # Located on the slip speed, linear in t: root tolerance 1e-12 plus projections.
    assert sticks[0].t == pytest.approx(t_stop, abs=1e-9)
    assert sticks[0].modes == ["stick", "stick"]
    assert sticks[0].tangential_impulses.shape == (2, 2)
    assert sticks[0].slip_directions.shape == (2, 2) and not sticks[0].energy_gain


def test_incline_holds_m_g_sin_alpha_while_sticking():
    alpha = 0.3
    sim = saltus.Simulation(example("incline_stick.yaml"))
    sim.advance_to(0.5)
    forces = sim.contact_forces()
    assert {c.mode for c in forces.values()} == {"stick"}
    assert sum(c.normal for c in forces.values()) == pytest.approx(G * math.cos(alpha),
                                                                   abs=FORCE_TOL)
    total = sum(c.tangential_force for c in forces.values())
    assert total[0] == pytest.approx(G * math.sin(alpha), abs=FORCE_TOL)


def test_painleve_option_reaches_the_event_loop():
    # painleve_rod.yaml (its header): the rough rod is Painleve-inconsistent at t = 0; with
    # painleve: impact (the scene's) a tangential impact resolves it and the run finishes, with
    # painleve: error it stops there with status painleve.
    model = example("painleve_rod.yaml")
    assert model.options.painleve == "impact"
    sim = saltus.Simulation(model)  # the tangential impact happens here, at the initial state
    assert sim.advance_to(model.t_end).ok
    assert sim.stats["tangential_impacts"] >= 1
    options = saltus.Options()
    options.painleve = "error"
    result = saltus.Simulation(model, options).advance_to(model.t_end)
    assert result.status == "painleve" and result.t == 0.0


def test_woodpecker_flags_its_indeterminate_impacts():
    # The four-corner woodpecker (a test scene): the sleeve's impacts jam it on two diagonal
    # corners, where the impact problem has two post-impact velocities (docs/friction.md,
    # "Indeterminate impacts"); the first is at t = 0.0708 s. Every flagged event is counted once
    # in the statistics.
    scene = os.path.join(os.environ["SALTUS_SOURCE_DIR"], "tests", "tools", "data",
                         "woodpecker_four_corners.yaml")
    sim = saltus.Simulation(saltus.Model.from_scene_file(scene))
    events = []
    sim.on_event(lambda e, q, vm, vp: events.append(e))
    assert sim.advance_to(0.2).ok
    flagged = [e for e in events if e.indeterminate]
    assert len(flagged) >= 1
    assert all(e.kind == saltus.EventKind.impact for e in flagged)
    assert sim.stats["indeterminate_impacts"] == len(flagged)
