"""Calls of the Python module from inside its own callbacks, and Ctrl-C during long calls
(saltus/saltus.h, "Calls from inside observers and callbacks"; issue 20 §1-2)."""
import os
import subprocess

import numpy as np
import pytest

import saltus
from test_saltus import G, ball  # the bouncing ball of the facade tests


# State changes: deferred to the end of the current step when called from inside.
CHANGES = {
    "set_state": lambda s, snap: s.set_state(2.0, [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]),
    "set_external_force": lambda s, snap: s.set_external_force([0.0, G, 0.0]),
    "set_force": lambda s, snap: s.set_force(lambda t, q, v: np.array([0.0, G, 0.0])),
    "set_force_none": lambda s, snap: s.set_force(None),
    "restore": lambda s, snap: s.restore(snap),
    "remove_all_observers": lambda s, snap: [s.remove_observer(i) for i in list(s._ids)],
    "add_observer": lambda s, snap: s.on_step(lambda t, q, v: None),
    "request_stop": lambda s, snap: s.request_stop(),
}
# Calls refused from inside with StateError.
REFUSED = {
    "advance_to": lambda s: s.advance_to(5.0),
    "step": lambda s: s.step(0.1),
    "run": lambda s: s.run(5.0),
    "events": lambda s: s.events(5.0),
    "save": lambda s: s.save(),
}
SITES = ["on_step", "on_event", "force"]


def install(sim, site, body):
    """Runs body() once from `site` (after t > 0.1 for steps and forces; the first event)."""
    done = []

    def once(t):
        if not done and t > 0.1:
            done.append(t)
            body()

    sim._ids = []
    if site == "on_step":
        sim._ids.append(sim.on_step(lambda t, q, v: once(t)))
    elif site == "on_event":
        sim._ids.append(sim.on_event(lambda e, q, vm, vp: once(1.0)))
    else:
        def force(t, q, v):
            once(t)
            return np.zeros(3)
        sim.set_force(force)
    return done


class Proxy:
    """Forwards to a Simulation and has room for the observer ids (pybind11 objects have none)."""

    def __init__(self, sim):
        self._sim = sim

    def __getattr__(self, name):
        return getattr(self._sim, name)


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_state_changes_from_callbacks_take_effect_and_never_crash(site, change):
    sim = saltus.Simulation(ball())
    snap = sim.save()
    proxy = Proxy(sim)
    done = install(proxy, site, lambda: CHANGES[change](proxy, snap))
    result = sim.advance_to(3.0)
    assert done, "the callback site was never reached"
    if change == "request_stop":
        assert result.status == "interrupted"
        result = sim.advance_to(3.0)
    assert result.ok, result.message
    assert sim.t == pytest.approx(3.0, abs=1e-12)
    assert np.all(np.isfinite(sim.q))


def test_set_state_inside_on_step_is_the_state_the_run_continues_from():
    # Was a segmentation fault (issue 20): the loop running the observer was freed.
    sim = saltus.Simulation(ball())
    calls = []

    def observer(t, q, v):
        if t > 0.1 and not calls:
            calls.append(t)
            sim.set_state(2.0, [0.0, 3.0, 0.0], [0.0, 0.0, 0.0])
            assert sim.t < 2.0  # deferred to the end of the step

    sim.on_step(observer)
    assert sim.advance_to(2.5).ok
    # Free fall from rest at y = 3, t = 2: exact up to round-off for DOPRI5 (quadratic motion).
    assert sim.q[1] == pytest.approx(3.0 - 0.5 * G * 0.5**2, abs=1e-12)


@pytest.mark.parametrize("site", SITES)
def test_nested_runs_and_save_are_refused(site):
    sim = saltus.Simulation(ball())
    refused = []

    def body():
        for name, call in REFUSED.items():
            with pytest.raises(saltus.StateError):
                call(sim)
            refused.append(name)
        if site == "force":
            with pytest.raises(saltus.StateError):
                sim.multipliers()
        else:
            assert sim.multipliers().shape == (1,)

    install(Proxy(sim), site, body)
    assert sim.advance_to(1.0).ok
    assert sorted(refused) == sorted(REFUSED)


def test_observer_removing_itself_and_adding_others():
    sim = saltus.Simulation(ball())
    counts = {"self": 0, "added": 0}
    ids = []

    def self_removing(t, q, v):
        counts["self"] += 1
        sim.remove_observer(ids[0])
        for _ in range(10):
            sim.on_step(lambda t, q, v: counts.__setitem__("added", counts["added"] + 1))

    ids.append(sim.on_step(self_removing))
    assert sim.advance_to(1.0).ok
    assert counts["self"] == 1 and counts["added"] > 0


def test_huge_output_step_or_horizon_is_refused():
    model = ball()
    opts = model.options
    opts.output_step = 1e-300
    sim = saltus.Simulation(model, opts)
    with pytest.raises(saltus.InvalidArgument, match="output rows"):
        sim.advance_to(1.0)
    with pytest.raises(saltus.InvalidArgument):
        saltus.Simulation(ball()).run(1e308)


def interrupt_soon(delay):
    """A real SIGINT (as Ctrl-C sends) to this process after `delay` seconds, from another
    process: a Python thread could not run while the call holds the interpreter."""
    return subprocess.Popen(["sh", "-c", f"sleep {delay}; kill -INT {os.getpid()}"])


LONG_PENDULUM = """scene: pendulum
bodies: [{name: bob, mass: 1, inertia: 0.01, position: [1, 0, 0]}]
joints: [{name: pivot, type: revolute, body_a: ground, body_b: bob, point_a: [0, 0],
          point_b: [-1, 0]}]
simulation: {t_end: 1, rtol: 1.0e-10, atol: 1.0e-12, output_step: 0.01}
"""


@pytest.mark.parametrize("call", ["advance_to", "run"])
def test_ctrl_c_raises_keyboard_interrupt_with_state_and_results_kept(call):
    model = saltus.Model.from_scene_text(LONG_PENDULUM)
    reference = saltus.Simulation(model)
    sim = saltus.Simulation(model)
    t_end = 1e5  # minutes of work: only the interrupt ends the call
    sender = interrupt_soon(0.3)
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            getattr(sim, call)(t_end)
    finally:
        sender.wait()
    assert info.value.result.status == "interrupted"
    assert 0 < sim.t < t_end and info.value.result.t == sim.t
    if call == "run":
        traj = info.value.trajectory
        assert len(traj.t) >= 2 and traj.t[0] == 0.0 and traj.t[-1] <= sim.t
    else:
        assert info.value.trajectory is None
    # The state is kept: the run continues bit-identically to an uninterrupted one.
    t_stop = sim.t
    t_next = t_stop + 0.5
    assert sim.advance_to(t_next).ok
    assert reference.advance_to(t_next).ok
    assert np.array_equal(sim.q, reference.q) and np.array_equal(sim.v, reference.v)


def test_ctrl_c_inside_a_python_callback_keeps_the_rows_so_far():
    # The interpreter raises KeyboardInterrupt inside the callback that runs when the signal
    # arrives (here raised by the callback itself at t > 0.3).
    sim = saltus.Simulation(ball())

    def observer(t, q, v):
        if t > 0.3:
            raise KeyboardInterrupt

    sim.on_step(observer)
    with pytest.raises(KeyboardInterrupt) as info:
        sim.run(1.0)
    assert info.value.result.status == "interrupted"
    traj = info.value.trajectory
    assert len(traj.t) >= 30 and traj.t[0] == 0.0  # the outputs 0, 0.01, ..., 0.3
    assert 0.3 < sim.t <= 1.0  # the first accepted step past 0.3 s (it may end at t_end)
