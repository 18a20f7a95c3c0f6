#include "tools/writers.h"

#include <cmath>

#include "integrators/integrator.h"
#include "tools/json_writer.h"

namespace saltus::tools {

namespace {

constexpr events::EventKind kAllKinds[] = {
    events::EventKind::kImpact,          events::EventKind::kTakeoff,
    events::EventKind::kContactClosed,   events::EventKind::kTime,
    events::EventKind::kStick,           events::EventKind::kSlip,
    events::EventKind::kTangentialImpact};
// summary.json's "events" counts the kinds the schemes record; a hybrid run's switches are in
// its "hybrid" object.
static_assert(std::size(kAllKinds) == events::kNumPhysicalEventKinds);

void AppendField(double x, std::string* line) {
  line->push_back(',');
  AppendDouble(x, line);
}

// summary.json's "topology" object (engine::TopologyReport, names from the model).
void WriteTopology(const engine::TopologyReport& t, const engine::SpatialModel& model,
                   JsonWriter* w) {
  const auto body_name = [&](int b) {
    return b == engine::kGround ? std::string("ground")
                                : model.bodies()[static_cast<std::size_t>(b)].name;
  };
  w->Key("topology").BeginObject();
  w->Key("bodies").Integer(model.num_bodies());
  w->Key("joints").Integer(static_cast<long>(model.joints().size()));
  w->Key("drivers").Integer(static_cast<long>(model.drivers().size()));
  w->Key("components").Integer(t.num_components);
  w->Key("components_grounded").BeginArray();
  for (const bool grounded : t.component_grounded) w->Bool(grounded);
  w->EndArray();
  w->Key("independent_loops").Integer(t.num_loops);
  w->Key("loops").BeginArray();
  for (const engine::KinematicLoop& loop : t.loops) {
    w->BeginObject();
    w->Key("joints").BeginArray();
    for (const int j : loop.joints) w->String(model.joints()[static_cast<std::size_t>(j)].name);
    w->EndArray();
    w->Key("bodies").BeginArray();
    for (const int b : loop.bodies) w->String(body_name(b));
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
  w->Key("unconnected_bodies").BeginArray();
  for (const int b : t.unconnected_bodies) w->String(body_name(b));
  w->EndArray();
  w->Key("constraint_rows").Integer(t.num_rows);
  w->Key("rank_of_G").Integer(t.rank);
  w->Key("redundant_rows").Integer(t.redundant_rows);
  w->Key("degrees_of_freedom").Integer(t.degrees_of_freedom);
  w->EndObject();
}

// The components of the block-sparse frictional steps per stage of their solver chain
// (contact/sparse_friction_step.h); "accepted" counts the answers used with a residual between
// the tolerance and τ₀/h (a warning: timestepping/moreau_jean.h, FrictionalStepSolver).
// The rolling friction step: the answers used with a residual between the tolerance and τ₀/h
// (timestepping/moreau_jean.h, RollingFrictionStepSolver), and the components of its sparse
// path by outcome (contact/sparse_rolling_step.h) with their Gauss–Seidel sweeps.
void WriteFrictionStages(const timestepping::StepContactSolver& solver, JsonWriter* w) {
  if (const auto* rolling = dynamic_cast<const timestepping::RollingFrictionStepSolver*>(&solver)) {
    w->Key("rolling_accepted").Integer(rolling->accepted());
    w->Key("largest_accepted_residual").Number(rolling->largest_accepted_residual());
    const contact::RollingStepStats& s = rolling->sparse_stats();
    w->Key("rolling_components").BeginObject();
    w->Key("gauss_seidel").Integer(s.gauss_seidel);
    w->Key("fallback").Integer(s.fallback);
    w->Key("accepted").Integer(s.accepted);
    w->Key("failed").Integer(s.failed);
    w->Key("sweeps").Integer(s.sweeps);
    w->EndObject();
    return;
  }
  const auto* frictional = dynamic_cast<const timestepping::FrictionalStepSolver*>(&solver);
  if (frictional == nullptr) return;
  const contact::SparseFrictionStats& s = frictional->stats();
  w->Key("friction_components").BeginObject();
  for (int k = 0; k < contact::kFrictionStages; ++k) {
    w->Key(std::string(contact::FrictionStageName(static_cast<contact::FrictionStage>(k))))
        .Integer(s.components[static_cast<std::size_t>(k)]);
  }
  w->EndObject();
  w->Key("largest_accepted_residual").Number(s.largest_accepted_residual);
  w->Key("reused_components").Integer(frictional->reused_components());
}

}  // namespace

// ---- trajectory.csv -------------------------------------------------------------------------

bool EventRowsOn(EventRows mode, int nq, int nv) {
  if (mode == EventRows::kAuto) return nq + nv <= kAutoEventRowsMaxColumns;
  return mode == EventRows::kOn;
}

TrajectoryWriter::TrajectoryWriter(const engine::MechanicalSystem& system, std::ostream& out,
                                   bool rows_at_steps, bool rows_at_events)
    : out_(out),
      nq_(system.nq()),
      nv_(system.nv()),
      rows_at_steps_(rows_at_steps),
      rows_at_events_(rows_at_events) {
  std::string header = "t";
  for (int i = 0; i < nq_; ++i) header += "," + system.PositionName(i);
  for (int i = 0; i < nv_; ++i) header += "," + system.VelocityName(i);
  out_ << header << '\n';
}

void TrajectoryWriter::WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  line_ = FormatDouble(t);
  for (int i = 0; i < nq_; ++i) AppendField(i < q.size() ? q[i] : std::nan(""), &line_);
  for (int i = 0; i < nv_; ++i) AppendField(i < v.size() ? v[i] : std::nan(""), &line_);
  line_.push_back('\n');
  out_ << line_;
  ++rows_;
}

void TrajectoryWriter::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (last_was_output_ && t == last_output_t_) return;
  WriteRow(t, q, v);
  last_was_output_ = true;
  last_output_t_ = t;
}

void TrajectoryWriter::OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (rows_at_steps_) OnOutput(t, q, v);
}

void TrajectoryWriter::OnEvent(const events::Event& e, const Eigen::VectorXd& q,
                               const Eigen::VectorXd& v_minus, const Eigen::VectorXd& v_plus) {
  if (!rows_at_events_) return;
  WriteRow(e.t, q, v_minus);
  WriteRow(e.t, q, v_plus);
  last_was_output_ = false;
}

// ---- events.csv -----------------------------------------------------------------------------

std::string RowNames(const engine::MechanicalSystem& system, const std::vector<int>& rows) {
  std::string names;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) names += ';';
    names += system.constraint_info(rows[i]).name;
  }
  return names;
}

EventLogWriter::EventLogWriter(const engine::MechanicalSystem& system, std::ostream& out,
                               const HybridReport* hybrid)
    : system_(system), out_(out), hybrid_(hybrid) {
  out_ << "t,kind,contacts,impulse,energy_before,energy_after,tangential_impulse,modes,"
          "energy_gain,indeterminate\n";
}

void EventLogWriter::OnEvent(const events::Event& e, const Eigen::VectorXd& /*q*/,
                             const Eigen::VectorXd& /*v_minus*/,
                             const Eigen::VectorXd& /*v_plus*/) {
  std::string impulses;
  for (std::size_t i = 0; i < e.impulses.size(); ++i) {
    if (i > 0) impulses += ';';
    impulses += FormatDouble(e.impulses[i]);
  }
  // Per contact: the tangential impulse (the plane: one number; space: "t1|t2"; none: 0) and the
  // mode after the event.
  std::string tangential, modes;
  for (std::size_t i = 0; i < e.rows.size(); ++i) {
    if (i > 0) {
      tangential += ';';
      modes += ';';
    }
    const int n = static_cast<int>(system_.TangentRows(e.rows[i]).size());
    const Eigen::Vector2d p =
        i < e.tangential_impulses.size() ? e.tangential_impulses[i] : Eigen::Vector2d::Zero();
    tangential += n == 2 ? FormatDouble(p[0]) + '|' + FormatDouble(p[1]) : FormatDouble(p[0]);
    const Eigen::Vector2d d =
        i < e.slip_directions.size() ? e.slip_directions[i] : Eigen::Vector2d::Zero();
    modes += i < e.modes.size() ? events::ContactModeName(e.modes[i], d, n) : "";
  }
  const bool scheme_switch =
      e.kind == events::EventKind::kToTimeStepping || e.kind == events::EventKind::kToEventDriven;
  if (scheme_switch && hybrid_ != nullptr) modes = hybrid_->last_switch_cause;
  out_ << FormatDouble(e.t) << ',' << events::ToString(e.kind) << ',' << RowNames(system_, e.rows)
       << ',' << impulses << ',' << FormatDouble(e.energy_before) << ','
       << FormatDouble(e.energy_after) << ',' << tangential << ',' << modes << ','
       << (e.energy_gain ? 1 : 0) << ',' << (e.indeterminate ? 1 : 0) << '\n';
  out_.flush();  // events are few and precious: on disk at once (whole rows, output_file.h)
  ++events_;
}

// ---- summary.json, last_state.json ----------------------------------------------------------

RunView ViewOf(const events::Simulation& simulation) {
  const engine::MechanicalSystem& system = simulation.system();
  return {system,
          simulation.options(),
          simulation.stats(),
          simulation.t(),
          simulation.q(),
          simulation.v(),
          simulation.closed_rows(),
          system.KineticEnergy(simulation.q(), simulation.v()) +
              system.PotentialEnergy(simulation.t(), simulation.q())};
}

RunView ViewOf(const timestepping::MoreauJean& scheme, const events::SimulationOptions& options) {
  return {scheme.system(),
          options,
          scheme.stats(),
          scheme.t(),
          scheme.q(),
          scheme.v(),
          scheme.active_rows(),
          scheme.Energy(scheme.t(), scheme.q(), scheme.v()),
          &scheme};
}

void WriteSummaryJson(const RunInfo& info, const RunView& run, std::ostream& out) {
  const events::SimulationStats& s = run.stats;
  const events::SimulationOptions& o = run.options;
  const engine::MechanicalSystem& system = run.system;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("scene").String(info.scene);
  w.Key("scene_file").String(info.scene_file);
  w.Key("provenance");
  WriteProvenanceJson(info.provenance, &w);
  w.Key("integrator")
      .String(run.time_stepping && !run.hybrid ? std::string(timestepping::kMoreauJeanName)
                                               : o.integrator);
  w.Key("formulation")
      .String(run.time_stepping && !run.hybrid
                  ? "velocity_level"
                  : integrators::ToString(o.integrator_options.formulation));
  w.Key("rtol").Number(o.integrator_options.rtol);
  w.Key("atol").Number(o.integrator_options.atol);
  w.Key("status").String(info.status);
  w.Key("message").String(info.message);
  if (!info.resumed_from.empty()) w.Key("resumed_from").String(info.resumed_from);
  w.Key("t_start").Number(info.t_start);
  w.Key("t_end").Number(info.t_end);
  w.Key("t_reached").Number(info.t_reached);
  w.Key("accepted_steps").Integer(s.integrator.accepted_steps);
  w.Key("rejected_steps").Integer(s.integrator.rejected_steps);
  w.Key("rhs_evaluations").Integer(s.integrator.rhs_evaluations);
  w.Key("newton_iterations").Integer(s.integrator.newton_iterations);
  w.Key("position_projections").Integer(s.integrator.position_projections);
  w.Key("velocity_projections").Integer(s.integrator.velocity_projections);
  w.Key("smallest_step").Number(s.integrator.accepted_steps > 0 ? s.integrator.smallest_step : 0.0);
  w.Key("largest_step").Number(s.integrator.largest_step);
  w.Key("events").BeginObject();
  long total = 0;
  for (const events::EventKind k : kAllKinds) {
    const long n = s.events[static_cast<int>(k)];
    w.Key(events::ToString(k)).Integer(n);
    total += n;
  }
  w.Key("total").Integer(total);
  w.EndObject();
  w.Key("lcp_solves").Integer(s.lcp_solves);
  w.Key("friction").BeginObject();  // issue 17 §5
  w.Key("energy_gains").Integer(s.energy_gains);
  w.Key("largest_energy_gain").Number(s.largest_energy_gain);
  w.Key("painleve_inconsistent").Integer(s.painleve_inconsistent);
  w.Key("painleve_indeterminate").Integer(s.painleve_indeterminate);
  w.Key("painleve_diagnoses").BeginArray();
  for (const std::string& d : s.painleve_diagnoses) w.String(d);
  w.EndArray();
  w.Key("indeterminate_impacts").Integer(s.indeterminate_impacts);
  w.Key("impact_diagnoses").BeginArray();
  for (const std::string& d : s.impact_diagnoses) w.String(d);
  w.EndArray();
  w.EndObject();
  w.Key("event_loop_work").BeginObject();  // events::SimulationStats (rows evaluated, LCPs)
  w.Key("watched_row_steps").Integer(s.watched_row_steps);
  w.Key("rows_evaluated_samples").Integer(s.rows_evaluated_samples);
  w.Key("rows_evaluated_roots").Integer(s.rows_evaluated_roots);
  w.Key("rows_evaluated_switches").Integer(s.rows_evaluated_switches);
  w.Key("multiplier_solves").Integer(s.multiplier_solves);
  w.Key("lcp_seconds").Number(s.lcp_seconds);
  w.Key("largest_lcp").Integer(s.largest_lcp);
  w.Key("round_off_departures").Integer(s.round_off_departures);
  w.Key("threshold_closing_fallbacks").Integer(s.threshold_closing_fallbacks);
  w.EndObject();
  w.Key("max_position_violation").Number(s.max_position_violation);
  w.Key("max_velocity_violation").Number(s.max_velocity_violation);
  w.Key("max_acceleration_violation").Number(s.max_acceleration_violation);
  w.Key("min_gap_after_projection").Number(s.min_gap_after_projection);
  w.Key("energy_final").Number(run.energy);
  w.Key("wall_seconds").Number(s.wall_seconds);
  if (const timestepping::MoreauJean* ts = run.time_stepping) {
    w.Key("time_stepping").BeginObject();  // timestepping/moreau_jean.h
    w.Key("step").Number(ts->options().h);
    w.Key("theta").Number(ts->options().theta);
    // The scheme's own counts (a hybrid run's stats also hold the event loop's).
    const events::SimulationStats& ss = ts->stats();
    w.Key("steps").Integer(ss.integrator.accepted_steps);
    w.Key("steps_with_impacts").Integer(ss.events[static_cast<int>(events::EventKind::kImpact)]);
    w.Key("contact_impacts").Integer(ts->contact_impacts());
    w.Key("speculative").Bool(ts->options().speculative);
    w.Key("speculative_rounds").Integer(ts->speculative_rounds());
    w.Key("deferred_rounds").Integer(ts->deferred_rounds());
    w.Key("contact_projections").Integer(ts->contact_projections());
    w.Key("deepest_before_projection").Number(ts->deepest_before_projection());
    w.Key("projection_seconds").Number(ts->projection_seconds());
    w.Key("project_contacts").Bool(ts->projects_contacts());
    w.Key("sleeping").BeginObject();  // timestepping/moreau_jean.h, "Sleeping"
    w.Key("enabled").Bool(ts->sleeping_enabled());
    w.Key("sleep_speed").Number(ts->options().sleep_speed);
    w.Key("sleep_time").Number(ts->options().sleep_time);
    w.Key("islands_slept").Integer(ts->islands_slept());
    w.Key("islands_woken").Integer(ts->islands_woken());
    w.Key("body_steps_asleep").Integer(ts->sleeping_body_steps());
    w.Key("bodies_asleep_final").Integer(ts->bodies_asleep());
    w.EndObject();
    w.Key("restitution_passes").Integer(ts->restitution_passes());
    w.Key("contact_problems").Integer(ss.lcp_solves);
    w.Key("active_contacts_final").Integer(static_cast<long>(ts->active_rows().size()));
    WriteFrictionStages(ts->contact_solver(), &w);
    w.EndObject();
  }
  if (const HybridReport* h = run.hybrid) {
    w.Key("hybrid").BeginObject();  // tools/hybrid_scheme.h
    w.Key("step").Number(h->options.step);
    w.Key("events").Integer(h->options.events);
    w.Key("window").Number(h->window);
    w.Key("calm_time").Number(h->calm_time);
    w.Key("calm_speed").Number(h->calm_speed);
    w.Key("to_time_stepping").Integer(h->to_time_stepping);
    w.Key("by_accumulation_guard").Integer(h->by_accumulation_guard);
    w.Key("to_event_driven").Integer(h->to_event_driven);
    w.Key("refused_switch_backs").Integer(h->refused_switch_backs);
    w.Key("after_lcp_failure").Integer(h->after_lcp_failure);
    w.Key("after_projection_failure").Integer(h->after_projection_failure);
    w.Key("after_linear_solve_failure").Integer(h->after_linear_solve_failure);
    w.Key("last_event_loop_failure").String(h->last_event_loop_failure);
    w.Key("time_in_time_stepping").Number(h->time_stepping_seconds);
    // null when there was no switch back (no switch).
    w.Key("smallest_gap_after_switch_back").Number(h->smallest_gap_after_switch_back);
    w.Key("largest_energy_change").Number(h->largest_energy_change);
    w.EndObject();
  }
  const auto* spatial = dynamic_cast<const engine::SpatialMultibodySystem*>(&system);
  if (info.topology && spatial) WriteTopology(*info.topology, spatial->model(), &w);
  w.EndObject();
}

void WriteLastStateJson(const RunInfo& info, const RunView& run, std::ostream& out,
                        const std::optional<HybridState>& hybrid) {
  const engine::MechanicalSystem& system = run.system;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("scene").String(info.scene);
  w.Key("provenance");
  WriteProvenanceJson(info.provenance, &w);
  w.Key("status").String(info.status);
  w.Key("reason").String(info.message);
  w.Key("t").Number(run.t);
  w.Key("q").BeginObject();
  for (int i = 0; i < run.q.size(); ++i) {
    w.Key(system.PositionName(i)).Number(run.q[i]);
  }
  w.EndObject();
  w.Key("v").BeginObject();
  for (int i = 0; i < run.v.size(); ++i) {
    w.Key(system.VelocityName(i)).Number(run.v[i]);
  }
  w.EndObject();
  w.Key("closed_contacts").BeginArray();
  for (const int row : run.closed_rows) {
    w.String(system.constraint_info(row).name);
  }
  w.EndArray();
  if (hybrid) {
    w.Key("hybrid").BeginObject();
    w.Key("phase").String(hybrid->time_stepping ? "time_stepping" : "event_driven");
    w.Key("recent_events").BeginArray();
    for (const double t : hybrid->recent_events) w.Number(t);
    w.EndArray();
    w.Key("calm_since").Number(hybrid->calm_since);
    w.Key("phase_start").Number(hybrid->phase_start);
    w.Key("next_output").Number(hybrid->next_output);
    w.Key("last_output").Number(hybrid->last_output);  // null: none yet (−∞)
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace saltus::tools
