"""The Python API as a whole (issue 21, section 10): the stubs declare every public name, every
public function has a docstring, Options holds every simulation key of a scene under its name,
and q and v can be written."""
import ast
import math
import os

import numpy as np
import pytest

import saltus

STUBS = os.path.join(os.environ["SALTUS_SOURCE_DIR"], "python", "saltus.pyi")


def stub_names():
    """{'': module names, 'Class': member names} declared in saltus.pyi."""
    with open(STUBS) as f:
        tree = ast.parse(f.read())
    names = {"": set()}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[""].add(node.name)
            members = names.setdefault(node.name, set())
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    members.add(item.target.id)
        elif isinstance(node, ast.FunctionDef):
            names[""].add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names[""].add(node.target.id)
    return names


def public(obj):
    return [n for n in dir(obj) if not n.startswith("_")]


def test_stubs_declare_every_public_name():
    declared = stub_names()
    for name in public(saltus):
        assert name in declared[""], "saltus.%s is missing from saltus.pyi" % name
        obj = getattr(saltus, name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            for member in public(obj):
                if member in ("name", "value") and name == "EventKind":
                    continue  # the Enum's own
                assert member in declared.get(name, set()), \
                    "saltus.%s.%s is missing from saltus.pyi" % (name, member)


def test_every_public_function_has_a_docstring():
    def documented(f):
        # pybind11 puts the signature on the first line; the docstring follows it.
        doc = (f.__doc__ or "").strip().split("\n")
        return len([line for line in doc if line.strip() and "(" not in line.split(" ")[0]]) > 0

    for name in public(saltus):
        obj = getattr(saltus, name)
        if callable(obj) and not isinstance(obj, type):
            assert documented(obj), name
        if isinstance(obj, type) and not issubclass(obj, BaseException) and name != "EventKind":
            assert obj.__doc__, name
            for member in public(obj):
                attr = getattr(obj, member)
                if callable(attr) and not isinstance(attr, property):
                    assert documented(attr), "%s.%s" % (name, member)


# A non-default value for every key of a scene's simulation section.
VALUES = {
    "integrator": "hem5", "formulation": "index2", "rtol": 1e-7, "atol": 1e-9, "h_min": 1e-12,
    "h_max": 0.5, "h_init": 1e-3, "adaptive": True, "safety": 0.8, "fac_min": 0.3,
    "fac_max": 4.0, "newton_tol": 1e-9, "max_newton_iterations": 9, "rho_inf": 0.7,
    "output_step": 0.02, "restitution": 0.4, "restitution_threshold": 0.01,
    "thresholds": {"gap": 2e-9, "velocity": 3e-6, "force": 4e-10}, "projection": False,
    "projection_tolerance": 1e-11, "projection_metric": "identity",
    "event_projection_tolerance": 1e-13, "projection_max_iterations": 7, "lcp_solver": "pgs",
    "lcp_tolerance": 1e-11, "lcp_max_iterations": 500, "event_samples": 6,
    "root_tolerance": 1e-11, "zeno": {"max_events": 100, "window": 1e-5},
    "time_events": [0.25, 0.5],
}


def test_options_hold_every_simulation_key_under_the_scene_name():
    keys = saltus.Options.keys()
    assert set(keys) == set(VALUES), set(keys) ^ set(VALUES)
    lines = ["scene: ball", "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]",
             "simulation:", "  t_end: 1"]
    for k, v in VALUES.items():
        text = str(v).lower() if isinstance(v, bool) else (
            "{%s}" % ", ".join("%s: %r" % kv for kv in v.items()) if isinstance(v, dict) else v)
        lines.append("  %s: %s" % (k, text))
    from_scene = saltus.Model.from_scene_text("\n".join(lines) + "\n").options
    by_hand = saltus.Options()
    for k, v in VALUES.items():
        setattr(by_hand, k, v)
    for k, v in VALUES.items():
        assert getattr(from_scene, k) == v, k
        assert getattr(by_hand, k) == v, k
    with pytest.raises(saltus.InvalidArgument):
        by_hand.lcp_solver = "simplex"
    with pytest.raises(saltus.InvalidArgument):
        by_hand.thresholds = {"gpa": 1e-9}


def test_q_and_v_are_writable():
    model = saltus.Model.from_scene_text(
        "scene: ball\nbodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
        "simulation: {t_end: 1}\n")
    sim = saltus.Simulation(model)
    sim.q = np.array([0.0, 2.0, 0.0])
    sim.v = [1.0, 0.0, 0.0]
    assert sim.q[1] == 2.0 and sim.v[0] == 1.0 and sim.t == 0.0
    sim.advance_to(0.5)
    # Free flight from y = 2 with vx = 1: x = t, y = 2 - g t^2 / 2 (DOPRI5 exact on a
    # quadratic; 1e-12 for round-off).
    assert sim.q[0] == pytest.approx(0.5, abs=1e-12)
    assert sim.q[1] == pytest.approx(2 - 9.81 * 0.125, abs=1e-12)
    with pytest.raises(saltus.InvalidArgument):
        sim.q = np.zeros(2)
    assert math.isfinite(sim.stats["accepted_steps"])
