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

#include "integrators/integrator.h"
#include "python/bindings.h"
#include "saltus/saltus.h"

namespace py = pybind11;
using Eigen::VectorXd;
using saltus::python::ToVector;

namespace {

saltus::SimulationOptions& SetFormulation(saltus::SimulationOptions& o, const std::string& name) {
  const auto f = saltus::integrators::ParseFormulation(name);
  if (!f) {
    throw saltus::InvalidArgument("unknown formulation '" + name +
                                  "' (index1, index2, index3, ggl)");
  }
  o.integrator_options.formulation = *f;
  return o;
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
  d["energy_gains"] = s.energy_gains;
  d["painleve_inconsistent"] = s.painleve_inconsistent;
  d["painleve_indeterminate"] = s.painleve_indeterminate;
  d["lcp_solves"] = s.lcp_solves;
  d["max_position_violation"] = s.max_position_violation;
  d["max_velocity_violation"] = s.max_velocity_violation;
  d["max_acceleration_violation"] = s.max_acceleration_violation;
  d["wall_seconds"] = s.wall_seconds;
  return d;
}

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

}  // namespace

PYBIND11_MODULE(saltus, m) {
  m.doc() = "Saltus: event-driven simulation of nonsmooth multibody dynamics";

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

  py::enum_<saltus::EventKind>(m, "EventKind")
      .value("impact", saltus::EventKind::kImpact)
      .value("takeoff", saltus::EventKind::kTakeoff)
      .value("contact_closed", saltus::EventKind::kContactClosed)
      .value("time", saltus::EventKind::kTime);

  py::class_<saltus::Event>(m, "Event")
      .def_readonly("t", &saltus::Event::t)
      .def_readonly("kind", &saltus::Event::kind)
      .def_readonly("rows", &saltus::Event::rows)
      .def_readonly("impulses", &saltus::Event::impulses)
      .def_readonly("energy_before", &saltus::Event::energy_before)
      .def_readonly("energy_after", &saltus::Event::energy_after)
      .def("__repr__", [](const saltus::Event& e) {
        return "<Event " + std::string(saltus::events::ToString(e.kind)) +
               " t=" + std::to_string(e.t) + ">";
      });

  py::class_<saltus::SimulationOptions>(m, "Options")
      .def(py::init<>())
      .def_readwrite("integrator", &saltus::SimulationOptions::integrator)
      .def_property(
          "formulation",
          [](const saltus::SimulationOptions& o) {
            return std::string(saltus::integrators::ToString(o.integrator_options.formulation));
          },
          [](saltus::SimulationOptions& o, const std::string& f) { SetFormulation(o, f); })
      .def_property(
          "rtol", [](const saltus::SimulationOptions& o) { return o.integrator_options.rtol; },
          [](saltus::SimulationOptions& o, double x) { o.integrator_options.rtol = x; })
      .def_property(
          "atol", [](const saltus::SimulationOptions& o) { return o.integrator_options.atol; },
          [](saltus::SimulationOptions& o, double x) { o.integrator_options.atol = x; })
      .def_property(
          "h_min", [](const saltus::SimulationOptions& o) { return o.integrator_options.h_min; },
          [](saltus::SimulationOptions& o, double x) { o.integrator_options.h_min = x; })
      .def_property(
          "h_max", [](const saltus::SimulationOptions& o) { return o.integrator_options.h_max; },
          [](saltus::SimulationOptions& o, double x) { o.integrator_options.h_max = x; })
      .def_readwrite("restitution", &saltus::SimulationOptions::restitution)
      .def_readwrite("output_step", &saltus::SimulationOptions::output_step)
      .def_readwrite("root_tolerance", &saltus::SimulationOptions::root_tolerance)
      .def_property(
          "tau0", [](const saltus::SimulationOptions& o) { return o.thresholds.tau0; },
          [](saltus::SimulationOptions& o, double x) { o.thresholds.tau0 = x; })
      .def_property(
          "tau1", [](const saltus::SimulationOptions& o) { return o.thresholds.tau1; },
          [](saltus::SimulationOptions& o, double x) { o.thresholds.tau1 = x; })
      .def_property(
          "tau3", [](const saltus::SimulationOptions& o) { return o.thresholds.tau3; },
          [](saltus::SimulationOptions& o, double x) { o.thresholds.tau3 = x; })
      .def_readwrite("time_events", &saltus::SimulationOptions::time_events);

  py::class_<saltus::Model> model_class(m, "Model");
  model_class.def_static("from_scene_file", &saltus::Model::FromSceneFile, py::arg("path"))
      .def_static("from_scene_text", &saltus::Model::FromSceneText, py::arg("yaml"),
                  py::arg("label") = "<scene>")
      .def_property_readonly("nq", &saltus::Model::nq)
      .def_property_readonly("nv", &saltus::Model::nv)
      .def_property_readonly("num_constraints", &saltus::Model::num_constraints)
      .def_property_readonly("name", &saltus::Model::name)
      .def_property_readonly("initial_q", &saltus::Model::initial_q)
      .def_property_readonly("initial_v", &saltus::Model::initial_v)
      .def_property_readonly("t_end", &saltus::Model::default_t_end)
      .def("default_options", &saltus::Model::default_options)
      .def("position_names", &saltus::Model::PositionNames)
      .def("velocity_names", &saltus::Model::VelocityNames)
      .def("constraint_names", &saltus::Model::ConstraintNames);
  saltus::python::BindModelBuilders(m, model_class);

  py::class_<saltus::RunResult>(m, "RunResult")
      .def_property_readonly("ok", &saltus::RunResult::ok)
      .def_property_readonly("status",
                             [](const saltus::RunResult& r) {
                               return std::string(saltus::events::ToString(r.status));
                             })
      .def_readonly("message", &saltus::RunResult::message)
      .def_readonly("t", &saltus::RunResult::t);

  py::class_<saltus::Trajectory>(m, "Trajectory")
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

  py::class_<saltus::Snapshot>(m, "Snapshot").def_readonly("t", &saltus::Snapshot::t);

  py::class_<saltus::Simulation>(m, "Simulation")
      .def(py::init<const saltus::Model&>(), py::arg("model"))
      .def(py::init<const saltus::Model&, const saltus::SimulationOptions&>(), py::arg("model"),
           py::arg("options"))
      .def(
          "advance_to",
          [](saltus::Simulation& s, double t_end) {
            return WithSignalChecks(s, nullptr, [&] { return s.AdvanceTo(t_end); });
          },
          py::arg("t_end"),
          "Advances to t_end. Ctrl-C stops at the next step boundary and raises "
          "KeyboardInterrupt (.result) with the state kept: a later call continues.")
      .def(
          "step",
          [](saltus::Simulation& s, double dt) {
            return WithSignalChecks(s, nullptr, [&] { return s.Step(dt); });
          },
          py::arg("dt"))
      .def(
          "run",
          [](saltus::Simulation& s, double t_end) {
            saltus::Trajectory tr;
            const saltus::RunResult r =
                WithSignalChecks(s, &tr, [&] { return s.RunInto(t_end, &tr); });
            return py::make_tuple(std::move(tr), r);
          },
          py::arg("t_end"),
          "Runs to t_end; returns (Trajectory, RunResult). Ctrl-C raises KeyboardInterrupt with "
          ".trajectory (the rows so far) and .result, the state kept.")
      .def(
          "events",
          [](saltus::Simulation& s, double t_end) {
            saltus::Trajectory tr;
            WithSignalChecks(s, &tr, [&] { return s.RunInto(t_end, &tr); });
            return tr.events;
          },
          py::arg("t_end"), "Runs to t_end and returns its events (a list to iterate).")
      .def("request_stop", &saltus::Simulation::RequestStop,
           "Stops a running advance_to/run at its next step boundary (status 'interrupted'); "
           "callable from an observer or callback.")
      .def_property("max_output_rows", &saltus::Simulation::max_output_rows,
                    &saltus::Simulation::SetMaxOutputRows,
                    "Output rows one advance_to may produce with output_step > 0 (default 1e7).")
      .def_property_readonly("t", &saltus::Simulation::t)
      .def_property_readonly("q", &saltus::Simulation::q)
      .def_property_readonly("v", &saltus::Simulation::v)
      .def(
          "set_state",
          [](saltus::Simulation& s, double t, py::object q, py::object v) {
            s.SetState(t, ToVector(q, "q"), ToVector(v, "v"));
          },
          py::arg("t"), py::arg("q"), py::arg("v"))
      .def("multipliers", &saltus::Simulation::AllMultipliers,
           "λ for every constraint row (zero on open contacts).")
      .def("active_rows", &saltus::Simulation::ActiveRows)
      .def(
          "joint_reactions",
          [](const saltus::Simulation& s) {
            py::dict d;
            for (const saltus::JointLoad& r : s.JointReactions().joints) d[py::str(r.joint)] = r;
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
            for (const saltus::DriverEffort& e : s.JointReactions().drivers) {
              d[py::str(e.driver)] = e.effort;
            }
            return d;
          },
          "Effort of every driver at the current state: a dict driver name -> torque (N m, angle "
          "drivers) or force (N, displacement drivers) along its joint axis, positive towards "
          "increasing joint coordinate. Raises StateError for a model without joints.")
      .def("index_sets",
           [](const saltus::Simulation& s) {
             const saltus::IndexSets sets = s.CurrentIndexSets();
             return py::make_tuple(sets.i1, sets.i2);
           })
      .def("stats", [](const saltus::Simulation& s) { return StatsDict(s.stats()); })
      .def(
          "set_external_force",
          [](saltus::Simulation& s, py::object f) {
            s.SetExternalForce(ToVector(f, "external force"));
          },
          py::arg("f"))
      .def(
          "set_force",
          [](saltus::Simulation& s, py::object f) {
            if (f.is_none()) {
              s.SetForceCallback({});
              return;
            }
            if (!PyCallable_Check(f.ptr())) {
              throw saltus::InvalidArgument("set_force: expected a callable f(t, q, v) or None");
            }
            py::function fn = f;
            s.SetForceCallback([fn](double t, const VectorXd& q, const VectorXd& v, VectorXd* out) {
              *out = ToVector(fn(t, q, v), "the force callback's result");
            });
          },
          py::arg("f"), "A generalized force f(t, q, v) -> array(nv) added to F, or None.")
      .def("on_step",
           [](saltus::Simulation& s, py::function f) {
             return s.AddStepObserver(
                 [f](double t, const VectorXd& q, const VectorXd& v) { f(t, q, v); });
           })
      .def("on_event",
           [](saltus::Simulation& s, py::function f) {
             return s.AddEventObserver([f](const saltus::Event& e, const VectorXd& q,
                                           const VectorXd& vm,
                                           const VectorXd& vp) { f(e, q, vm, vp); });
           })
      .def("remove_observer", &saltus::Simulation::RemoveObserver)
      .def("save", &saltus::Simulation::Save)
      .def("restore", &saltus::Simulation::Restore);

  m.def(
      "compare",
      [](const saltus::Model& model, const std::vector<std::string>& integrators, double t_end,
         py::object options) {
        const saltus::SimulationOptions o =
            options.is_none() ? model.default_options() : options.cast<saltus::SimulationOptions>();
        py::list out;
        for (auto& e : saltus::CompareIntegrators(model, integrators, t_end, o)) {
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
  m.def("integrators", &saltus::IntegratorNames);
  m.attr("__version__") = saltus::Version();
}
