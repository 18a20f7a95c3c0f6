// The Python module `saltus`: the facade of saltus/saltus.h with numpy arrays in and out.
//
//   import saltus
//   model = saltus.Model.from_scene_file("examples/bouncing_ball.yaml")
//   sim = saltus.Simulation(model)            # or Simulation(model, options)
//   traj = sim.run(10.0)                      # traj.t (rows), traj.q (rows × nq), traj.v,
//   traj.events sim.set_force(lambda t, q, v: -k * q)     # user force as a Python callable
//
// Errors become Python exceptions: saltus.InvalidArgument (a ValueError), saltus.SceneError (an
// InvalidArgument with .file and .line in the message), saltus.StateError and saltus.Error (both
// RuntimeError). An exception raised inside a Python callback propagates unchanged; the
// simulation restarts from its last accepted step and can continue. Callbacks may call the
// simulation back under the rules of saltus/saltus.h ("Calls from inside observers"): state
// changes (set_state, set_force, restore, ...) take effect at the end of the current step,
// advance_to/run/save raise StateError. Long calls check for signals at every step: Ctrl-C
// raises KeyboardInterrupt with the state kept (and, for run, the trajectory so far).
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "contact/complementarity.h"
#include "integrators/integrator.h"
#include "python/bindings.h"
#include "saltus/saltus.h"
#include "tools/scene.h"

namespace py = pybind11;
using Eigen::VectorXd;
using saltus::python::AsCalled;
using saltus::python::ToVector;

namespace {

// The mark of a read-only Options (Simulation.options) in its instance dictionary.
constexpr const char* kReadOnly = "_read_only";

saltus::SimulationOptions& SetFormulation(saltus::SimulationOptions& o, const std::string& name) {
  const auto f = saltus::integrators::ParseFormulation(name);
  if (!f) {
    throw saltus::InvalidArgument("unknown formulation '" + name +
                                  "' (index1, index2, index3, ggl)");
  }
  o.integrator_options.formulation = *f;
  return o;
}

// The integrator's default formulation replaces one it does not support (tools/scene.h).
void SetIntegrator(saltus::SimulationOptions& o, const std::string& name) {
  o.integrator = name;
  if (!saltus::tools::CheckIntegratorChoice(name, o.integrator_options.formulation).empty()) {
    o.integrator_options.formulation =
        saltus::tools::DefaultFormulation(name).value_or(o.integrator_options.formulation);
  }
}

// A read-write property of Options under the scene's name for an option reached by `field`.
template <class T, class Field>
void Option(py::class_<saltus::SimulationOptions>& c, const char* name, Field field,
            const char* doc) {
  c.def_property(
      name,
      [field](const saltus::SimulationOptions& o) -> T {
        return field(const_cast<saltus::SimulationOptions&>(o));
      },
      [field](saltus::SimulationOptions& o, T value) { field(o) = value; }, doc);
}

py::dict StatsDict(const saltus::Statistics& s);

// Runs a long call (advance_to, step, run) with the interpreter's signals checked at every step
// and event: a pending signal runs its Python handler (PyErr_CheckSignals); when that raises
// (KeyboardInterrupt on Ctrl-C), the simulation is asked to stop at the step boundary, `fn`
// returns with the state kept, and the exception is raised then, with `result` (the RunResult,
// status "interrupted") and `trajectory` (run: the rows so far, else None) set on it.
template <class Fn>
saltus::RunResult WithSignalChecks(saltus::Simulation& s, const saltus::Trajectory* trajectory,
                                   Fn&& fn) {
  std::optional<py::error_already_set> raised;
  const auto check = [&s, &raised] {
    if (!raised && PyErr_CheckSignals() != 0) {
      raised.emplace();  // fetches and clears the Python error
      s.RequestStop();
    }
  };
  struct Observers {
    saltus::Simulation& s;
    int step, event;
    ~Observers() {
      s.RemoveObserver(step);
      s.RemoveObserver(event);
    }
  } observers{s, s.AddStepObserver([&](double, const VectorXd&, const VectorXd&) { check(); }),
              s.AddEventObserver([&](const saltus::Event&, const VectorXd&, const VectorXd&,
                                     const VectorXd&) { check(); })};
  const auto attach = [&](py::error_already_set& e, const saltus::RunResult& result) {
    py::setattr(e.value(), "result", py::cast(result));
    py::setattr(e.value(), "trajectory",
                trajectory != nullptr ? py::cast(*trajectory) : py::none());
  };
  saltus::RunResult result;
  try {
    result = fn();
  } catch (py::error_already_set& e) {
    // Ctrl-C while a Python callback ran: raised inside it; the simulation has restarted from
    // its last accepted step (saltus.h), and the rows so far are kept all the same.
    if (e.matches(PyExc_KeyboardInterrupt)) {
      attach(e, saltus::RunResult{saltus::RunStatus::kInterrupted,
                                  "KeyboardInterrupt in a callback", s.t()});
    }
    throw;
  }
  if (raised) {
    attach(*raised, result);
    throw std::move(*raised);
  }
  return result;
}

// A list of 2-vectors as an array (rows x 2).
Eigen::MatrixX2d PerRow(const std::vector<Eigen::Vector2d>& rows) {
  Eigen::MatrixX2d out(static_cast<Eigen::Index>(rows.size()), 2);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    out.row(static_cast<Eigen::Index>(k)) = rows[k].transpose();
  }
  return out;
}

// saltus.Simulation. Properties hold state (t, q, v, options, stats, active_rows,
// external_force); methods act or compute (advance_to, multipliers, index_sets, ...).
void BindSimulation(py::module_& m) {
  py::class_<saltus::Simulation>(
      m, "Simulation",
      "The event-driven simulation of a Model (Haddouni et al. 2017, Fig. 2). Properties hold "
      "its state (t, q, v: q and v writable), methods run or compute.")
      .def(py::init([](const saltus::Model& model) {
             return AsCalled("Simulation", [&] { return saltus::Simulation(model); });
           }),
           py::arg("model"), "Starts at the model's initial state with its options.")
      .def(py::init([](const saltus::Model& model, const saltus::SimulationOptions& options) {
             return AsCalled("Simulation", [&] { return saltus::Simulation(model, options); });
           }),
           py::arg("model"), py::arg("options"),
           "Starts at the model's initial state with these options.")
      .def(
          "advance_to",
          [](saltus::Simulation& s, double t_end) {
            return AsCalled("Simulation.advance_to", [&] {
              return WithSignalChecks(s, nullptr, [&] { return s.AdvanceTo(t_end); });
            });
          },
          py::arg("t_end"),
          "Advances to t_end; returns a RunResult (a failed run is not an exception). Ctrl-C "
          "stops at the next step boundary and raises KeyboardInterrupt (.result) with the state "
          "kept: a later call continues.")
      .def(
          "step",
          [](saltus::Simulation& s, double dt) {
            return AsCalled("Simulation.step", [&] {
              return WithSignalChecks(s, nullptr, [&] { return s.Step(dt); });
            });
          },
          py::arg("dt"), "One communication step of a co-simulation: advance_to(t + dt).")
      .def(
          "run",
          [](saltus::Simulation& s, double t_end) {
            saltus::Trajectory tr;
            const saltus::RunResult r = AsCalled("Simulation.run", [&] {
              return WithSignalChecks(s, &tr, [&] { return s.RunInto(t_end, &tr); });
            });
            return py::make_tuple(std::move(tr), r);
          },
          py::arg("t_end"),
          "Runs to t_end; returns (Trajectory, RunResult). Ctrl-C raises KeyboardInterrupt with "
          ".trajectory (the rows so far) and .result, the state kept.")
      .def(
          "events",
          [](saltus::Simulation& s, double t_end) {
            saltus::Trajectory tr;
            AsCalled("Simulation.events", [&] {
              return WithSignalChecks(s, &tr, [&] { return s.RunInto(t_end, &tr); });
            });
            return tr.events;
          },
          py::arg("t_end"), "Runs to t_end and returns its events (a list to iterate).")
      .def("request_stop", &saltus::Simulation::RequestStop,
           "Stops a running advance_to/run at its next step boundary (status 'interrupted'); "
           "callable from an observer or callback.")
      .def_property(
          "max_output_rows", &saltus::Simulation::max_output_rows,
          [](saltus::Simulation& s, double rows) {
            AsCalled("Simulation.max_output_rows", [&] { s.SetMaxOutputRows(rows); });
          },
          "Output rows one advance_to may produce with output_step > 0 (default 1e7).")
      .def_property_readonly("t", &saltus::Simulation::t, "Current time (s).")
      .def_property(
          "q", &saltus::Simulation::q,
          [](saltus::Simulation& s, py::object q) {
            AsCalled("Simulation.q", [&] { s.SetPositions(ToVector(q, "Simulation.q")); });
          },
          "Current positions (nq). Setting them keeps t and v and restarts (projection onto "
          "the joints, contact modes derived again).")
      .def_property(
          "v", &saltus::Simulation::v,
          [](saltus::Simulation& s, py::object v) {
            AsCalled("Simulation.v", [&] { s.SetVelocities(ToVector(v, "Simulation.v")); });
          },
          "Current velocities (nv). Setting them keeps t and q and restarts.")
      .def_property_readonly(
          "options",
          [](const saltus::Simulation& s) {
            py::object o = py::cast(s.options(), py::return_value_policy::copy);
            py::cast<py::dict>(o.attr("__dict__"))[kReadOnly] = true;
            return o;
          },
          "The options in use, read-only (setting one raises AttributeError): "
          "saltus.Options(sim.options) is a copy to change.")
      .def_property_readonly(
          "stats", [](const saltus::Simulation& s) { return StatsDict(s.stats()); },
          "Statistics since the start: steps, evaluations, events, violations, wall time.")
      .def_property_readonly("active_rows", &saltus::Simulation::ActiveRows,
                             "Rows of the current phase: joints, then closed contacts.")
      .def(
          "set_state",
          [](saltus::Simulation& s, double t, py::object q, py::object v) {
            AsCalled("Simulation.set_state", [&] {
              s.SetState(t, ToVector(q, "set_state: q"), ToVector(v, "set_state: v"));
            });
          },
          py::arg("t"), py::arg("q"), py::arg("v"),
          "Sets t, q and v and restarts (projection, index sets, initial impact).")
      .def(
          "multipliers",
          [](const saltus::Simulation& s) {
            return AsCalled("Simulation.multipliers", [&] { return s.AllMultipliers(); });
          },
          "Lambda for every constraint row (zero on open contacts), from the index-1 solve at "
          "the current state.")
      .def(
          "joint_reactions",
          [](const saltus::Simulation& s) {
            py::dict d;
            const auto loads =
                AsCalled("Simulation.joint_reactions", [&] { return s.JointReactions(); });
            for (const saltus::JointLoad& r : loads.joints) d[py::str(r.joint)] = r;
            return d;
          },
          "Reactions of every joint at the current state (e.g. after step): a dict joint name -> "
          "JointReaction (.body, .force, .torque; `force, torque = r`), from the multipliers of "
          "the index-1 solve with the host's forces included. Raises StateError for a model "
          "without joints (Lagrangian or user system).")
      .def(
          "driver_efforts",
          [](const saltus::Simulation& s) {
            py::dict d;
            const auto loads =
                AsCalled("Simulation.driver_efforts", [&] { return s.JointReactions(); });
            for (const saltus::DriverEffort& e : loads.drivers) {
              d[py::str(e.driver)] = e.effort;
            }
            return d;
          },
          "Effort of every driver at the current state: a dict driver name -> torque (N m, angle "
          "drivers) or force (N, displacement drivers) along its joint axis, positive towards "
          "increasing joint coordinate. Raises StateError for a model without joints.")
      .def(
          "contact_forces",
          [](const saltus::Simulation& s) {
            py::dict d;
            auto forces = AsCalled("Simulation.contact_forces", [&] { return s.ContactForces(); });
            for (saltus::ContactForce& c : forces) d[py::str(c.name)] = std::move(c);
            return d;
          },
          "The force of every closed contact at the current state: a dict contact name -> "
          "ContactForce (.mode, .normal, .tangential, .slip_direction, .point, .normal_force, "
          ".tangential_force). Open contacts carry no force and are not listed.")
      .def(
          "index_sets",
          [](const saltus::Simulation& s) {
            const saltus::IndexSets sets = s.CurrentIndexSets();
            return py::make_tuple(sets.i1, sets.i2);
          },
          "The index sets as a tuple (I1, I2): unilateral rows closed in position (g <= tau0) and "
          "the active contacts, "
          "evaluated at the current state.")
      .def_property(
          "external_force", &saltus::Simulation::external_force,
          [](saltus::Simulation& s, py::object f) {
            AsCalled("Simulation.external_force",
                     [&] { s.SetExternalForce(ToVector(f, "Simulation.external_force")); });
          },
          "Generalized force f_ext (nv) added to F, held until changed (restarts).")
      .def(
          "set_external_force",
          [](saltus::Simulation& s, py::object f) {
            AsCalled("Simulation.set_external_force",
                     [&] { s.SetExternalForce(ToVector(f, "set_external_force: f")); });
          },
          py::arg("f"), "Same as setting external_force.")
      .def(
          "set_force",
          [](saltus::Simulation& s, py::object f) {
            if (f.is_none()) {
              s.SetForceCallback({});
              return;
            }
            if (!PyCallable_Check(f.ptr())) {
              throw saltus::InvalidArgument("Simulation.set_force",
                                            "expected a callable f(t, q, v) or None");
            }
            py::function fn = f;
            AsCalled("Simulation.set_force", [&] {
              s.SetForceCallback(
                  [fn](double t, const VectorXd& q, const VectorXd& v, VectorXd* out) {
                    *out = ToVector(fn(t, q, v), "the result of the set_force callback");
                  });
            });
          },
          py::arg("f"), "A generalized force f(t, q, v) -> array(nv) added to F, or None.")
      .def(
          "on_step",
          [](saltus::Simulation& s, py::function f) {
            return s.AddStepObserver(
                [f](double t, const VectorXd& q, const VectorXd& v) { f(t, q, v); });
          },
          py::arg("f"), "Calls f(t, q, v) after every accepted step; returns an id.")
      .def(
          "on_event",
          [](saltus::Simulation& s, py::function f) {
            return s.AddEventObserver([f](const saltus::Event& e, const VectorXd& q,
                                          const VectorXd& vm,
                                          const VectorXd& vp) { f(e, q, vm, vp); });
          },
          py::arg("f"), "Calls f(event, q, v_minus, v_plus) at every event; returns an id.")
      .def(
          "remove_observer",
          [](saltus::Simulation& s, int id) {
            AsCalled("Simulation.remove_observer", [&] { s.RemoveObserver(id); });
          },
          py::arg("id"), "Removes an observer added by on_step or on_event.")
      .def(
          "save",
          [](saltus::Simulation& s) {
            return AsCalled("Simulation.save", [&] { return s.Save(); });
          },
          "The full state as a Snapshot.")
      .def(
          "restore",
          [](saltus::Simulation& s, const saltus::Snapshot& snapshot) {
            AsCalled("Simulation.restore", [&] { s.Restore(snapshot); });
          },
          py::arg("snapshot"),
          "Goes back to a Snapshot of this simulation (StateError for another model's).");
}

// saltus.Options: every key of a scene's `simulation:` section except t_end and
// max_output_rows, under the same names (tools::SimulationKeys(); python/tests/test_api.py
// reads the scene's list of keys from a scene error and checks each is here). An Options is a
// value: Simulation.options is a read-only copy (setting one of its options raises
// AttributeError), Model.options and saltus.Options(other) are copies to change.
void BindOptions(py::module_& m) {
  using O = saltus::SimulationOptions;
  py::class_<O> c(m, "Options", py::dynamic_attr(),
                  "Simulation options under the names of a scene's `simulation:` section "
                  "(docs/scene-format.md); keys() lists them. Values are checked when a "
                  "Simulation is made, enumerations (formulation, lcp_solver, "
                  "projection_metric, error_control, painleve, friction_cone) when set.");
  c.def(py::init<>(), "The defaults (those of a scene's `simulation:` without keys).");
  c.def(py::init<const O&>(), py::arg("other"),
        "A copy of other, to change (e.g. of the read-only Simulation.options).");
  c.def(
      "__setattr__",
      [](py::handle self, const std::string& name, py::object value) {
        if (!py::hasattr(py::type::of(self), name.c_str())) {
          throw py::attribute_error("Options has no option '" + name +
                                    "' (saltus.Options.keys() lists them)");
        }
        if (py::cast<py::dict>(self.attr("__dict__")).contains(kReadOnly)) {
          throw py::attribute_error(
              "Simulation.options is read-only (a simulation's options are fixed when it is "
              "made): change a copy, o = saltus.Options(sim.options), and make a "
              "Simulation(model, o)");
        }
        py::module_::import("builtins").attr("object").attr("__setattr__")(self, name, value);
      },
      "Sets an option; AttributeError for an unknown name or on Simulation.options.");
  c.def_static(
      "keys",
      [] {
        std::vector<std::string> keys;
        // t_end and max_output_rows belong to a run (Model.t_end, the argument of run /
        // advance_to; Simulation.max_output_rows); max_output_bytes bounds the files of
        // `saltus run` (a Python run writes none).
        for (const std::string& k : saltus::tools::SimulationKeys()) {
          if (k != "t_end" && k != "max_output_rows" && k != "max_output_bytes") {
            keys.push_back(k);
          }
        }
        return keys;
      },
      "The option names: the keys of a scene's `simulation:` section except t_end (Model.t_end, "
      "the argument of run and advance_to), max_output_rows (Simulation.max_output_rows) and "
      "max_output_bytes (a bound on the files of `saltus run`; Python writes none).");
  Option<double>(
      c, "theta", [](O& o) -> double& { return o.theta; },
      "Theta in [0.5, 1] of integrator moreau_jean (Acary & Brogliato 2008, Sec. 10.1.2; "
      "timestepping/moreau_jean.h).");
  Option<bool>(
      c, "speculative", [](O& o) -> bool& { return o.speculative; },
      "Speculative contacts of integrator moreau_jean (true) or the classical index set "
      "(false); timestepping/moreau_jean.h.");
  c.def_property(
      "project_contacts", [](const O& o) { return o.project_contacts; },
      [](O& o, std::optional<bool> value) { o.project_contacts = value; },
      "Position projection onto g >= -tau0 after each step of integrator moreau_jean: True, "
      "False, or None (the default: on when no contact has friction); "
      "timestepping/moreau_jean.h.");
  Option<bool>(
      c, "sleeping", [](O& o) -> bool& { return o.sleeping; },
      "Sleeping islands of integrator moreau_jean (timestepping/moreau_jean.h, \"Sleeping\").");
  Option<double>(
      c, "sleep_speed", [](O& o) -> double& { return o.sleep_speed; },
      "A body is calm when every velocity coordinate is at most this (m/s, rad/s; > 0).");
  Option<double>(
      c, "sleep_time", [](O& o) -> double& { return o.sleep_time; },
      "An island whose bodies stayed calm this long (s, > 0) falls asleep.");
  Option<bool>(
      c, "hybrid", [](O& o) -> bool& { return o.hybrid.enabled; },
      "Hybrid scheme (scene key simulation.hybrid): the event loop hands the system to "
      "Moreau-Jean time-stepping when its events crowd and takes it back when the contacts are "
      "calm (tools/hybrid_scheme.h).");
  Option<int>(
      c, "hybrid_events", [](O& o) -> int& { return o.hybrid.events; },
      "Hybrid: switch to time-stepping after more than this many events within hybrid_window.");
  Option<double>(
      c, "hybrid_window", [](O& o) -> double& { return o.hybrid.window; },
      "Hybrid: the window of simulated time (s) of hybrid_events; 0: hybrid_events * step.");
  Option<double>(
      c, "hybrid_calm_time", [](O& o) -> double& { return o.hybrid.calm_time; },
      "Hybrid: back to the event loop after this long (s) without impact and with every contact "
      "of the index set slower than hybrid_calm_speed; 0: 50 * step.");
  Option<double>(
      c, "hybrid_calm_speed", [](O& o) -> double& { return o.hybrid.calm_speed; },
      "Hybrid: the normal speed (m/s) below which a contact is calm; 0: max(tau1, "
      "restitution_threshold).");
  c.def_property_readonly(
      "friction", [](const O& o) { return o.friction; },
      "The scene's simulation-wide Coulomb coefficient mu (read-only: part of the model; "
      "PlanarBuilder/SpatialBuilder.set_friction in code).");
  c.def_property_readonly(
      "rolling_friction", [](const O& o) { return o.rolling_friction; },
      "The scene's rolling resistance mu_R (m; read-only: part of the model, "
      "SpatialBuilder.set_resistance).");
  c.def_property_readonly(
      "spinning_friction", [](const O& o) { return o.spinning_friction; },
      "The scene's spinning resistance mu_S (m; read-only: part of the model, "
      "SpatialBuilder.set_resistance).");
  c.def_property(
      "integrator", [](const O& o) { return o.integrator; },
      [](O& o, const std::string& name) { SetIntegrator(o, name); },
      "Smooth-phase integrator (saltus.integrators()). Setting it keeps the formulation when "
      "the integrator supports it, else takes the integrator's default (its first).");
  c.def_property(
      "formulation",
      [](const O& o) {
        return std::string(saltus::integrators::ToString(o.integrator_options.formulation));
      },
      [](O& o, const std::string& f) { SetFormulation(o, f); },
      "index1, index2, index3 or ggl (Haddouni et al. 2017, eq. 6-9, 23).");
  using IO = saltus::integrators::IntegratorOptions;
  const auto io = [](auto member) {
    return [member](O& o) -> decltype(auto) { return (o.integrator_options.*member); };
  };
  Option<double>(c, "rtol", io(&IO::rtol), "Relative integration tolerance (> 0).");
  Option<double>(c, "atol", io(&IO::atol), "Absolute integration tolerance (> 0).");
  Option<double>(c, "h_min", io(&IO::h_min),
                 "Smallest step (s); 0: automatic, 1e-7 * min(1, rtol / 1e-4).");
  Option<double>(c, "h_max", io(&IO::h_max), "Largest step (s).");
  Option<double>(c, "h_init", io(&IO::h_init), "First step (s); 0: the integrator chooses.");
  Option<bool>(c, "adaptive", io(&IO::adaptive),
               "Error-controlled steps (False: constant h_init).");
  c.def_property(
      "step",
      [](const O& o) {
        if (o.hybrid.enabled) return o.hybrid.step;
        return o.integrator_options.adaptive ? 0.0 : o.integrator_options.h_init;
      },
      [](O& o, double h) {
        if (o.hybrid.enabled) {
          o.hybrid.step = h;
          return;
        }
        o.integrator_options.h_init = h;
        o.integrator_options.adaptive = false;
      },
      "Fixed step (s), the scene key simulation.step: sets h_init = step and adaptive = False "
      "(needed by integrator moreau_jean); 0 while adaptive. With hybrid = True (set it first), "
      "the step of the time-stepping phases instead (the event loop keeps its own steps).");
  Option<double>(c, "safety", io(&IO::safety), "Safety factor of the step-size rule, in (0, 1].");
  c.def_property(
      "error_control",
      [](const O& o) {
        return std::string(saltus::integrators::ToString(o.integrator_options.error_control));
      },
      [](O& o, const std::string& name) {
        const auto control = saltus::integrators::ParseErrorControl(name);
        if (!control) {
          throw saltus::InvalidArgument("error_control '" + name +
                                        "' is unknown (use per_step or per_unit_step)");
        }
        o.integrator_options.error_control = *control;
      },
      "per_step or per_unit_step: what rtol and atol bound (docs/scene-format.md); per unit "
      "step over the span error_time_scale.");
  Option<double>(c, "error_time_scale", io(&IO::error_time_scale),
                 "The span T (s) of error_control per_unit_step (saltus run: t_end - t_start; "
                 "default 1).");
  Option<double>(c, "fac_min", io(&IO::fac_min), "Smallest step ratio, in (0, 1].");
  Option<double>(c, "fac_max", io(&IO::fac_max), "Largest step ratio (>= 1).");
  Option<double>(c, "newton_tol", io(&IO::newton_tol), "Newton tolerance of implicit schemes.");
  Option<int>(c, "max_newton_iterations", io(&IO::max_newton_iterations),
              "Newton iterations per step before a step is rejected.");
  Option<double>(c, "rho_inf", io(&IO::rho_inf),
                 "Spectral radius at infinity of the generalized-alpha schemes, in [0, 1].");
  Option<bool>(c, "projection", io(&IO::project), "Project onto the constraints after steps.");
  Option<double>(c, "projection_tolerance", io(&IO::projection_tol),
                 "Tolerance of the step projections.");
  c.def_property(
      "projection_metric",
      [](const O& o) {
        return std::string(o.integrator_options.projection_metric ==
                                   saltus::engine::ProjectionMetric::kMass
                               ? "mass"
                               : "identity");
      },
      [](O& o, const std::string& metric) {
        if (metric != "mass" && metric != "identity") {
          throw saltus::InvalidArgument("projection_metric '" + metric +
                                        "' is unknown (use mass or identity)");
        }
        o.integrator_options.projection_metric = metric == "mass"
                                                     ? saltus::engine::ProjectionMetric::kMass
                                                     : saltus::engine::ProjectionMetric::kIdentity;
        o.projection.metric = o.integrator_options.projection_metric;
      },
      "mass or identity: the metric of the projections (eq. 35-36).");
  Option<double>(
      c, "event_projection_tolerance", [](O& o) -> double& { return o.projection.tolerance; },
      "Tolerance of the projections after events.");
  Option<int>(
      c, "projection_max_iterations", [](O& o) -> int& { return o.projection.max_iterations; },
      "Iterations of the projections after events.");
  Option<double>(
      c, "output_step", [](O& o) -> double& { return o.output_step; },
      "Spacing of the output times (s); 0: every accepted step.");
  Option<double>(
      c, "restitution", [](O& o) -> double& { return o.restitution; },
      "Global Newton restitution coefficient in [0, 1].");
  Option<double>(
      c, "restitution_threshold", [](O& o) -> double& { return o.restitution_threshold; },
      "Approaches slower than this (m/s) are plastic; 0: off.");
  c.def_property(
      "thresholds",
      [](const O& o) {
        py::dict d;
        d["gap"] = o.thresholds.tau0;
        d["velocity"] = o.thresholds.tau1;
        d["force"] = o.thresholds.tau3;
        return d;
      },
      [](O& o, const py::dict& d) {
        for (const auto& [key, value] : d) {
          const std::string k = py::str(key);
          double& field = k == "gap"        ? o.thresholds.tau0
                          : k == "velocity" ? o.thresholds.tau1
                          : k == "force"
                              ? o.thresholds.tau3
                              : throw saltus::InvalidArgument("thresholds: unknown key '" + k +
                                                              "' (gap, velocity, force)");
          field = value.cast<double>();
        }
      },
      "Index-set thresholds {'gap': tau0 (m), 'velocity': tau1 (m/s), 'force': tau3 (N)} "
      "(eq. 13); a dict with some of the keys updates those.");
  c.def_property(
      "lcp_solver", [](const O& o) { return std::string(saltus::contact::ToString(o.lcp.solver)); },
      [](O& o, const std::string& name) {
        const auto solver = saltus::contact::ParseLcpSolver(name);
        if (!solver) {
          throw saltus::InvalidArgument("lcp_solver '" + name + "' is unknown (lemke, pgs, enum)");
        }
        o.lcp.solver = *solver;
      },
      "lemke, pgs or enum: the solver of the impact and contact LCPs.");
  c.def_property(
      "painleve", [](const O& o) { return std::string(saltus::events::ToString(o.painleve)); },
      [](O& o, const std::string& value) {
        if (value != "error" && value != "impact") {
          throw saltus::InvalidArgument("painleve '" + value + "' is unknown (error, impact)");
        }
        o.painleve = value == "error" ? saltus::events::PainleveResolution::kError
                                      : saltus::events::PainleveResolution::kImpact;
      },
      "A frictional contact problem with no solution or several (Painleve): 'error' stops the "
      "run (status painleve), 'impact' resolves it by a tangential impact.");
  c.def_property(
      "friction_cone", [](const O& o) { return saltus::tools::FrictionConeText(o); },
      [](O& o, const std::string& value) {
        if (!saltus::tools::ParseFrictionCone(value, &o)) {
          throw saltus::InvalidArgument("friction_cone '" + value +
                                        "' is unknown (exact, or 'faceted N' with N >= 3)");
        }
      },
      "Friction cone of spatial contacts: 'exact' (the disk) or 'faceted N' (a polygon of N >= 3 "
      "facets, a faceted LCP).");
  Option<double>(
      c, "lcp_tolerance", [](O& o) -> double& { return o.lcp.tolerance; },
      "Tolerance of the LCP solver.");
  Option<int>(
      c, "lcp_max_iterations", [](O& o) -> int& { return o.lcp.max_iterations; },
      "Iterations of the LCP solver.");
  Option<int>(
      c, "event_samples", [](O& o) -> int& { return o.event_samples; },
      "Interior samples of each step's dense output for the event functions.");
  Option<double>(
      c, "root_tolerance", [](O& o) -> double& { return o.root_tolerance; },
      "Relative tolerance on event times.");
  c.def_property(
      "zeno",
      [](const O& o) {
        py::dict d;
        d["max_events"] = o.zeno_max_events;
        d["window"] = o.zeno_window;
        return d;
      },
      [](O& o, const py::dict& d) {
        for (const auto& [key, value] : d) {
          const std::string k = py::str(key);
          if (k == "max_events") {
            o.zeno_max_events = value.cast<int>();
          } else if (k == "window") {
            o.zeno_window = value.cast<double>();
          } else {
            throw saltus::InvalidArgument("zeno: unknown key '" + k + "' (max_events, window)");
          }
        }
      },
      "Event accumulation guard {'max_events': n, 'window': s}: more than n unresolved events "
      "within the window stop the run.");
  Option<std::vector<double>>(
      c, "time_events", [](O& o) -> std::vector<double>& { return o.time_events; },
      "Times (s) at which the run stops for a time event.");
  // The former names of the thresholds, kept for existing code.
  Option<double>(
      c, "tau0", [](O& o) -> double& { return o.thresholds.tau0; }, "thresholds['gap'].");
  Option<double>(
      c, "tau1", [](O& o) -> double& { return o.thresholds.tau1; }, "thresholds['velocity'].");
  Option<double>(
      c, "tau3", [](O& o) -> double& { return o.thresholds.tau3; }, "thresholds['force'].");
}

py::dict StatsDict(const saltus::Statistics& s) {
  py::dict d;
  d["accepted_steps"] = s.integrator.accepted_steps;
  d["rejected_steps"] = s.integrator.rejected_steps;
  d["rhs_evaluations"] = s.integrator.rhs_evaluations;
  d["newton_iterations"] = s.integrator.newton_iterations;
  d["smallest_step"] = s.integrator.smallest_step;
  d["largest_step"] = s.integrator.largest_step;
  d["impacts"] = s.events[static_cast<int>(saltus::EventKind::kImpact)];
  d["takeoffs"] = s.events[static_cast<int>(saltus::EventKind::kTakeoff)];
  d["contacts_closed"] = s.events[static_cast<int>(saltus::EventKind::kContactClosed)];
  d["time_events"] = s.events[static_cast<int>(saltus::EventKind::kTime)];
  d["sticks"] = s.events[static_cast<int>(saltus::EventKind::kStick)];
  d["slips"] = s.events[static_cast<int>(saltus::EventKind::kSlip)];
  d["tangential_impacts"] = s.events[static_cast<int>(saltus::EventKind::kTangentialImpact)];
  d["to_time_stepping"] = s.events[static_cast<int>(saltus::EventKind::kToTimeStepping)];
  d["to_event_driven"] = s.events[static_cast<int>(saltus::EventKind::kToEventDriven)];
  d["energy_gains"] = s.energy_gains;
  d["painleve_inconsistent"] = s.painleve_inconsistent;
  d["painleve_indeterminate"] = s.painleve_indeterminate;
  d["indeterminate_impacts"] = s.indeterminate_impacts;
  d["lcp_solves"] = s.lcp_solves;
  d["max_position_violation"] = s.max_position_violation;
  d["max_velocity_violation"] = s.max_velocity_violation;
  d["max_acceleration_violation"] = s.max_acceleration_violation;
  d["wall_seconds"] = s.wall_seconds;
  return d;
}

}  // namespace

PYBIND11_MODULE(saltus, m) {
  m.doc() =
      "Saltus: event-driven simulation of nonsmooth multibody dynamics.\n\n"
      "Model (from a scene file, a URDF robot, PlanarBuilder, SpatialBuilder or "
      "Model.lagrangian) and Simulation; Options under the scene's names. Convention: "
      "properties hold state or fixed facts and compute nothing (Model.nq, .options, "
      ".position_names; Simulation.t, .q, .v, .stats, .active_rows); methods act or compute "
      "(advance_to, run, multipliers, index_sets, joint_reactions, save, ...). Stubs: saltus.pyi.";

  // Exceptions: translators are tried last-registered first, so the base comes first.
  static py::exception<saltus::Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<saltus::InvalidArgument> invalid(m, "InvalidArgument", PyExc_ValueError);
  static py::exception<saltus::SceneError> scene_error(m, "SceneError", invalid.ptr());
  static py::exception<saltus::StateError> state_error(m, "StateError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const saltus::SceneError& e) {
      PyErr_SetString(scene_error.ptr(), e.what());
    } catch (const saltus::InvalidArgument& e) {
      PyErr_SetString(invalid.ptr(), e.what());
    } catch (const saltus::StateError& e) {
      PyErr_SetString(state_error.ptr(), e.what());
    } catch (const saltus::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

  py::enum_<saltus::EventKind>(m, "EventKind", "What happened at an event.")
      .value("impact", saltus::EventKind::kImpact)
      .value("takeoff", saltus::EventKind::kTakeoff)
      .value("contact_closed", saltus::EventKind::kContactClosed)
      .value("time", saltus::EventKind::kTime)
      .value("stick", saltus::EventKind::kStick)
      .value("slip", saltus::EventKind::kSlip)
      .value("tangential_impact", saltus::EventKind::kTangentialImpact)
      .value("to_time_stepping", saltus::EventKind::kToTimeStepping)
      .value("to_event_driven", saltus::EventKind::kToEventDriven);

  py::class_<saltus::Event>(m, "Event",
                            "An event of a run: time t, kind, the unilateral rows of the contacts "
                            "involved and per row its normal impulse (N s; impacts), tangential "
                            "impulse, mode after the event and slip direction, and the energy "
                            "T + V before and after (J).")
      .def_readonly("t", &saltus::Event::t)
      .def_readonly("kind", &saltus::Event::kind)
      .def_readonly("rows", &saltus::Event::rows)
      .def_readonly("impulses", &saltus::Event::impulses)
      .def_property_readonly(
          "tangential_impulses",
          [](const saltus::Event& e) { return PerRow(e.tangential_impulses); },
          "Per row the tangential impulse (N s) in the basis of the contact's tangential rows: an "
          "array rows x 2 (the plane uses column 0; zero for frictionless contacts and "
          "non-impacts).")
      .def_property_readonly(
          "modes",
          [](const saltus::Event& e) {
            std::vector<std::string> names;
            for (saltus::ContactMode mode : e.modes)
              names.emplace_back(saltus::contact::ToString(mode));
            return names;
          },
          "Per row the contact's mode after the event: 'open', 'closed', 'stick' or 'slip'.")
      .def_property_readonly(
          "slip_directions", [](const saltus::Event& e) { return PerRow(e.slip_directions); },
          "Per row the slip direction after the event (unit when sliding, else 0), same basis as "
          "tangential_impulses (the plane: +-1 in column 0).")
      .def_readonly("energy_gain", &saltus::Event::energy_gain,
                    "True when the contact impulses of the impact did positive work beyond "
                    "round-off (possible with Newton's law and friction: Kane's pendulum).")
      .def_readonly("indeterminate", &saltus::Event::indeterminate,
                    "True when the impact problem had several post-impact velocities; the one of "
                    "least kinetic energy was taken (docs/friction.md).")
      .def_readonly("energy_before", &saltus::Event::energy_before)
      .def_readonly("energy_after", &saltus::Event::energy_after)
      .def("__repr__", [](const saltus::Event& e) {
        return "<Event " + std::string(saltus::events::ToString(e.kind)) +
               " t=" + std::to_string(e.t) + ">";
      });

  BindOptions(m);

  py::class_<saltus::Model> model_class(
      m, "Model",
      "An immutable mechanical system with its contacts and its scene's options: from a scene "
      "file or text, from PlanarBuilder / SpatialBuilder, or Model.lagrangian(...).");
  model_class
      .def_static("from_scene_file", &saltus::Model::FromSceneFile, py::arg("path"),
                  "Loads a scene file (docs/scene-format.md) or a URDF robot (.urdf). Raises "
                  "SceneError naming the file, line and item.")
      .def_static("from_scene_text", &saltus::Model::FromSceneText, py::arg("yaml"),
                  py::arg("label") = "<scene>",
                  "A scene given as YAML text; `label` names it in error messages.")
      .def_property_readonly("nq", &saltus::Model::nq, "Number of position coordinates.")
      .def_property_readonly("nv", &saltus::Model::nv, "Number of velocity coordinates.")
      .def_property_readonly("num_constraints", &saltus::Model::num_constraints,
                             "Number of constraint rows (joints, drivers, contacts).")
      .def_property_readonly("name", &saltus::Model::name, "The scene name ('' if built in code).")
      .def_property_readonly("initial_q", &saltus::Model::initial_q, "Initial positions (nq).")
      .def_property_readonly("initial_v", &saltus::Model::initial_v, "Initial velocities (nv).")
      .def_property_readonly("t_end", &saltus::Model::default_t_end,
                             "The scene's final time (0 if built in code).")
      .def_property_readonly("options", &saltus::Model::default_options,
                             py::return_value_policy::copy,
                             "The scene's simulation options (a copy to change and pass to "
                             "Simulation).")
      .def_property_readonly("position_names", &saltus::Model::PositionNames,
                             "Names of the positions, e.g. 'ball.y' (nq).")
      .def_property_readonly("velocity_names", &saltus::Model::VelocityNames,
                             "Names of the velocities (nv).")
      .def_property_readonly("constraint_names", &saltus::Model::ConstraintNames,
                             "Names of the constraint rows (num_constraints).");
  saltus::python::BindModelBuilders(m, model_class);

  py::class_<saltus::RunResult>(m, "RunResult",
                                "How a run ended: ok, status ('finished', 'step_size_underflow', "
                                "...), message and the time t reached.")
      .def_property_readonly("ok", &saltus::RunResult::ok)
      .def_property_readonly("status",
                             [](const saltus::RunResult& r) {
                               return std::string(saltus::events::ToString(r.status));
                             })
      .def_readonly("message", &saltus::RunResult::message)
      .def_readonly("t", &saltus::RunResult::t);

  py::class_<saltus::Trajectory>(m, "Trajectory",
                                 "A recorded run: t (rows), q (rows x nq), v (rows x nv) as numpy "
                                 "arrays, and its events.")
      .def_property_readonly("t",
                             [](const saltus::Trajectory& tr) {
                               return py::array_t<double>(static_cast<py::ssize_t>(tr.t.size()),
                                                          tr.t.data());
                             })
      .def_property_readonly("q", &saltus::Trajectory::QMatrix)
      .def_property_readonly("v", &saltus::Trajectory::VMatrix)
      .def_readonly("events", &saltus::Trajectory::events);

  py::class_<saltus::JointLoad>(m, "JointReaction",
                                "A joint's reaction at the current state: joint and body names, "
                                "force (N) and torque (N m, about the joint point on the body) on "
                                "that body, world frame, numpy arrays of 3 (planar models: force "
                                "(fx, fy, 0), torque (0, 0, tz)). Unpacks as (force, torque).")
      .def_readonly("joint", &saltus::JointLoad::joint)
      .def_readonly("body", &saltus::JointLoad::body,
                    "The body it acts on: body_b, or body_a when body_b is the ground.")
      .def_readonly("force", &saltus::JointLoad::force)
      .def_readonly("torque", &saltus::JointLoad::torque)
      .def("__iter__",
           [](const saltus::JointLoad& r) { return py::iter(py::make_tuple(r.force, r.torque)); })
      .def("__repr__", [](const saltus::JointLoad& r) {
        return "<JointReaction " + r.joint + " on " + r.body + ">";
      });

  py::class_<saltus::ContactForce>(
      m, "ContactForce",
      "The force of a closed contact at the current state (Simulation.contact_forces). normal: "
      "lambda_N (N); tangential: lambda_T in the basis of the contact's tangential rows (1 entry "
      "in the plane, 2 in space): the tangential multipliers when it sticks, -mu lambda_N d when "
      "it slides (Coulomb), empty for a frictionless contact; point, normal_force and "
      "tangential_force: world frame, on the contact's body b (numpy arrays of 3).")
      .def_readonly("name", &saltus::ContactForce::name)
      .def_readonly("row", &saltus::ContactForce::row, "The contact's unilateral row.")
      .def_readonly("mode", &saltus::ContactForce::mode_name,
                    "'closed' (frictionless), 'stick', 'slip' (space) or 'slip+' / 'slip-' (the "
                    "plane, by the sign of the slip direction).")
      .def_readonly("normal", &saltus::ContactForce::normal)
      .def_property_readonly(
          "tangential",
          [](const saltus::ContactForce& c) {
            return Eigen::VectorXd(c.tangential.head(c.num_tangent_rows));
          },
          "lambda_T (N), one entry per tangential row.")
      .def_property_readonly(
          "slip_direction",
          [](const saltus::ContactForce& c) {
            return Eigen::VectorXd(c.slip_direction.head(c.num_tangent_rows));
          },
          "The slip direction d (unit) when sliding, else zeros; one entry per tangential row.")
      .def_readonly("body", &saltus::ContactForce::body,
                    "Index of the contact's body b (-1: the ground).")
      .def_readonly("point", &saltus::ContactForce::point)
      .def_readonly("normal_force", &saltus::ContactForce::normal_force)
      .def_readonly("tangential_force", &saltus::ContactForce::tangential_force)
      .def("__repr__", [](const saltus::ContactForce& c) {
        return "<ContactForce " + c.name + " " + c.mode_name +
               " normal=" + std::to_string(c.normal) + ">";
      });

  py::class_<saltus::Snapshot>(m, "Snapshot",
                               "A saved state (Simulation.save) to restore later; t is its time.")
      .def_readonly("t", &saltus::Snapshot::t);

  BindSimulation(m);

  m.def(
      "compare",
      [](const saltus::Model& model, const std::vector<std::string>& integrators, double t_end,
         py::object options) {
        const saltus::SimulationOptions o =
            options.is_none() ? model.default_options() : options.cast<saltus::SimulationOptions>();
        py::list out;
        auto study = AsCalled("saltus.compare", [&] {
          return saltus::CompareIntegrators(model, integrators, t_end, o);
        });
        for (auto& e : study) {
          py::dict d;
          d["integrator"] = e.integrator;
          d["ok"] = e.result.ok();
          d["status"] = std::string(saltus::events::ToString(e.result.status));
          d["stats"] = StatsDict(e.stats);
          d["trajectory"] = std::move(e.trajectory);
          out.append(d);
        }
        return out;
      },
      py::arg("model"), py::arg("integrators"), py::arg("t_end"), py::arg("options") = py::none(),
      "Runs the model with each integrator; a list of dicts (integrator, ok, status, stats, "
      "trajectory).");
  m.def("integrators", &saltus::IntegratorNames,
        "Names of the integrators (saltus list), for Options.integrator.");
  m.attr("__version__") = saltus::Version();
}
