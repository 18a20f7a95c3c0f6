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
    "time_events": [0.25, 0.5], "painleve": "impact", "error_control": "per_unit_step",
}


BALL = "scene: ball\nbodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"


def scene_simulation_keys():
    """The keys of a scene's simulation section as the scene loader lists them when it refuses
    an unknown one: the list a new scene key joins, so a test on it cannot forget the key."""
    with pytest.raises(saltus.SceneError) as refused:
        saltus.Model.from_scene_text(BALL + "simulation: {t_end: 1, no_such_key: 1}\n")
    allowed = str(refused.value).split("(allowed: ", 1)[1].rsplit(")", 1)[0]
    return [k.strip() for k in allowed.split(",")]


def test_options_hold_every_key_the_scene_loader_accepts():
    keys = scene_simulation_keys()
    assert "rtol" in keys and "theta" in keys and "friction" in keys, keys  # the parse worked
    # t_end is the argument of run/advance_to (Model.t_end), max_output_rows a property of
    # Simulation, max_output_bytes a bound on the files of `saltus run` (Python writes none);
    # every other key is an Options attribute under its scene name.
    assert set(saltus.Options.keys()) == set(keys) - {"t_end", "max_output_rows",
                                                      "max_output_bytes"}
    options = saltus.Options()
    for k in saltus.Options.keys():
        assert hasattr(options, k), k
    assert hasattr(saltus.Model, "t_end") and hasattr(saltus.Simulation, "max_output_rows")
    # The keys VALUES sets below, those of the Moreau-Jean, friction and spatial tests, and no
    # other: a new key needs a round-trip test.
    assert set(saltus.Options.keys()) == set(VALUES) | {
        "friction_cone", "step", "theta", "speculative", "friction", "rolling_friction",
        "spinning_friction", "project_contacts", "sleeping", "sleep_speed", "sleep_time",
        "hybrid", "hybrid_events", "hybrid_window", "hybrid_calm_time", "hybrid_calm_speed"}


def test_hybrid_keys_read_as_in_a_scene_and_switch_on_the_zeno_ball():
    # The keys of simulation.hybrid (tools/hybrid_options.h) under their scene names; with
    # hybrid on, `step` is the step of the time-stepping phases.
    ball = ("scene: ball\ngravity: [0, -9.81]\n"
            "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
            "contacts: [{name: floor, type: disk_line, body_a: ground, body_b: ball, "
            "point_a: [0, 0], normal_a: [0, 1], radius_b: 0.1, restitution: 0.5}]\n")
    model = saltus.Model.from_scene_text(
        ball + "simulation: {t_end: 2, hybrid: on, step: 2.0e-3, hybrid_events: 12, "
        "hybrid_window: 0.03, hybrid_calm_time: 0.07, hybrid_calm_speed: 2.0e-6}\n")
    o = model.options
    assert (o.hybrid, o.step, o.hybrid_events, o.hybrid_window, o.hybrid_calm_time,
            o.hybrid_calm_speed) == (True, 2e-3, 12, 0.03, 0.07, 2e-6)
    assert o.integrator == "dopri5" and o.adaptive  # the event loop keeps its own steps
    by_hand = saltus.Options()
    by_hand.hybrid = True
    by_hand.step = 1e-3
    assert by_hand.step == 1e-3 and by_hand.adaptive
    # The e = 0.5 ball accumulates impacts at 3 t1 = 1.2851 s: one switch to time-stepping
    # before it, one back once it rests (tests/tools/hybrid_scene_test.cc has the bounds).
    sim = saltus.Simulation(model, saltus.Options(model.options))
    assert sim.advance_to(2.0).ok
    assert (sim.stats["to_time_stepping"], sim.stats["to_event_driven"]) == (1, 1)
    assert abs(sim.q[1] - 0.1) <= 1e-9 and abs(sim.v[1]) <= 1e-6
    by_hand.integrator = "moreau_jean"
    with pytest.raises(saltus.InvalidArgument, match="choose an event-loop integrator"):
        saltus.Simulation(model, by_hand)


def test_moreau_jean_keys_and_friction_read_as_in_a_scene():
    model = saltus.Model.from_scene_text(
        BALL + "simulation: {t_end: 1, integrator: moreau_jean, step: 1.0e-3, theta: 0.75, "
        "friction: 0.3}\n")
    o = model.options
    assert (o.integrator, o.step, o.theta, o.friction) == ("moreau_jean", 1e-3, 0.75, 0.3)
    assert (o.rolling_friction, o.spinning_friction) == (0.0, 0.0)
    assert o.speculative  # the default
    off = saltus.Model.from_scene_text(
        BALL + "simulation: {t_end: 1, integrator: moreau_jean, step: 1.0e-3, speculative: false}\n")
    assert not off.options.speculative
    # The projection and sleeping keys read as in the scene (timestepping/moreau_jean.h).
    assert (o.project_contacts, o.sleeping, o.sleep_speed, o.sleep_time) == (None, True, 1e-5, 0.1)
    keyed = saltus.Model.from_scene_text(
        BALL + "simulation: {t_end: 1, integrator: moreau_jean, step: 1.0e-3, "
        "project_contacts: false, sleeping: false, sleep_speed: 2.0e-4, sleep_time: 0.25}\n").options
    assert (keyed.project_contacts, keyed.sleeping, keyed.sleep_speed, keyed.sleep_time) == (
        False, False, 2e-4, 0.25)
    copy = saltus.Options(keyed)
    assert (copy.project_contacts, copy.sleeping) == (False, False)
    with pytest.raises(saltus.SceneError, match="sleeping is a parameter of integrator moreau_jean"):
        saltus.Model.from_scene_text(BALL + "simulation: {t_end: 1, sleeping: false}\n")
    with pytest.raises(saltus.SceneError, match="speculative is a parameter of integrator moreau_jean"):
        saltus.Model.from_scene_text(BALL + "simulation: {t_end: 1, speculative: false}\n")
    # theta reaches the scheme: a Simulation with theta = 1 differs from theta = 1/2 on a
    # falling ball only through the velocity update, and both run.
    by_hand = saltus.Options()
    by_hand.integrator = "moreau_jean"
    by_hand.step = 1e-3
    by_hand.theta = 0.75
    assert by_hand.theta == 0.75
    with pytest.raises(AttributeError):
        by_hand.friction = 0.5  # part of the model
    by_hand.theta = 0.2
    with pytest.raises(saltus.InvalidArgument, match=r"^Simulation: theta must be in \[0.5, 1\], got 0.2$"):
        saltus.Simulation(model, by_hand)
    # The model's friction is 0.3; options carrying another (the defaults, 0) are refused.
    by_hand.theta = 0.75
    with pytest.raises(saltus.InvalidArgument, match="friction"):
        saltus.Simulation(model, by_hand)
    sim = saltus.Simulation(model, saltus.Options(model.options))
    assert sim.options.theta == 0.75 and sim.advance_to(0.01).ok
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
    with pytest.raises(saltus.InvalidArgument, match="error_control"):
        by_hand.error_control = "per_second"
    with pytest.raises(saltus.InvalidArgument):
        by_hand.thresholds = {"gpa": 1e-9}


def test_friction_cone_reads_as_in_a_scene():
    text = ("dimension: 3\nscene: ball\nbodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 0, 1]}]\n"
            "simulation: {t_end: 1, friction_cone: faceted 6}\n")
    assert saltus.Model.from_scene_text(text).options.friction_cone == "faceted 6"
    o = saltus.Options()
    assert o.friction_cone == "exact" and o.painleve == "error"
    o.friction_cone = "faceted 12"
    assert o.friction_cone == "faceted 12"
    for bad in ("faceted 2", "round", "exact 3"):
        with pytest.raises(saltus.InvalidArgument, match="friction_cone"):
            o.friction_cone = bad
    with pytest.raises(saltus.InvalidArgument, match="painleve"):
        o.painleve = "ignore"


def test_options_are_copies_the_model_and_simulation_keep_theirs():
    model = saltus.Model.from_scene_text(
        "scene: ball\nbodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
        "simulation: {t_end: 1, rtol: 1.0e-7}\n")
    options = model.options
    options.rtol = 0.5
    assert model.options.rtol == 1e-7  # the model is immutable
    sim = saltus.Simulation(model, options)
    # Simulation.options is read-only: setting one of its options raises instead of changing a
    # copy silently; saltus.Options(sim.options) is a copy to change.
    with pytest.raises(AttributeError, match="read-only"):
        sim.options.rtol = 0.25
    assert sim.options.rtol == 0.5
    copy = saltus.Options(sim.options)
    copy.rtol = 0.25
    assert copy.rtol == 0.25 and sim.options.rtol == 0.5
    with pytest.raises(AttributeError, match="no option 'rtoll'"):
        copy.rtoll = 1e-6  # a misspelt option is not a new attribute


def test_messages_name_what_the_python_user_wrote():
    """Errors name the Python call or attribute (never a C++ function) and print numbers in their
    shortest exact form (issue 20, section 4)."""
    model = saltus.Model.from_scene_text(BALL + "simulation: {t_end: 1}\n")
    sim = saltus.Simulation(model)
    cases = [
        (lambda: sim.run(1e308), saltus.InvalidArgument,
         "Simulation.run: t_end = 1e+308 s is not finite or beyond the limit of 1e+15 s"),
        (lambda: sim.advance_to(-0.5), saltus.InvalidArgument,
         "Simulation.advance_to: t_end = -0.5 s is before the current time t = 0 s"),
        (lambda: sim.step(0.0), saltus.InvalidArgument,
         "Simulation.step: dt must be > 0 and finite, got 0"),
        (lambda: setattr(sim, "q", [math.nan, 0, 0]), saltus.InvalidArgument,
         "Simulation.q: q[0] = nan is not finite"),
        (lambda: setattr(sim, "v", [0, 0]), saltus.InvalidArgument,
         "Simulation.v: v has size 2, expected 3"),
        (lambda: sim.set_state(0.0, [0, 1, 0], [0, math.inf, 0]), saltus.InvalidArgument,
         "Simulation.set_state: v[1] = inf is not finite"),
        (lambda: setattr(sim, "max_output_rows", 0.5), saltus.InvalidArgument,
         "Simulation.max_output_rows: max_output_rows must be >= 1, got 0.5"),
        (lambda: sim.remove_observer(12345), saltus.InvalidArgument,
         "Simulation.remove_observer: no observer with id 12345"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind) as raised:
            call()
        assert str(raised.value) == message
    o = saltus.Options()
    o.output_step = 1e-300
    fine = saltus.Simulation(model, o)
    with pytest.raises(saltus.InvalidArgument) as raised:
        fine.run(1.0)
    assert str(raised.value) == (
        "Simulation.run: output_step = 1e-300 s over 1 s gives 9.999999999999999e+299 output rows, "
        "more than "
        "max_output_rows = 1e+07 (raise max_output_rows or output_step)")

    def observer(t, q, v):
        sim.advance_to(1.0)

    sim.on_step(observer)
    with pytest.raises(saltus.StateError) as raised:
        sim.advance_to(0.1)
    assert str(raised.value).startswith("Simulation.advance_to: not allowed from inside an observer")
    for message in [str(raised.value)] + [m for _, _, m in cases]:
        for cxx in ("AdvanceTo", "SetPositions", "SetState", "SetMaxOutputRows", "RemoveObserver"):
            assert cxx not in message, message


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
