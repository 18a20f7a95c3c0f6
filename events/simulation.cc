#include "events/simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "engine/block_sparse.h"
#include "events/contact_modes.h"
#include "events/event_context.h"
#include "events/switch_handler.h"
#include "events/witness.h"

namespace saltus::events {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using engine::ConstraintKind;

std::string_view ToString(EventKind k) {
  switch (k) {
    case EventKind::kImpact:
      return "impact";
    case EventKind::kTakeoff:
      return "takeoff";
    case EventKind::kContactClosed:
      return "contact_closed";
    case EventKind::kTime:
      return "time";
    case EventKind::kStick:
      return "stick";
    case EventKind::kSlip:
      return "slip";
    case EventKind::kTangentialImpact:
      return "tangential_impact";
    case EventKind::kToTimeStepping:
      return "to_time_stepping";
    case EventKind::kToEventDriven:
      return "to_event_driven";
  }
  return "unknown";
}

std::string_view ToString(PainleveResolution p) {
  return p == PainleveResolution::kImpact ? "impact" : "error";
}

std::string_view ToString(RunStatus s) {
  switch (s) {
    case RunStatus::kFinished:
      return "finished";
    case RunStatus::kStepSizeUnderflow:
      return "step_size_underflow";
    case RunStatus::kNewtonFailure:
      return "newton_failure";
    case RunStatus::kLinearSolveFailure:
      return "linear_solve_failure";
    case RunStatus::kNonFinite:
      return "non_finite_state";
    case RunStatus::kLcpFailure:
      return "lcp_failure";
    case RunStatus::kProjectionFailure:
      return "projection_failure";
    case RunStatus::kEventAccumulation:
      return "event_accumulation";
    case RunStatus::kInterrupted:
      return "interrupted";
    case RunStatus::kPainleve:
      return "painleve";
  }
  return "unknown";
}

namespace {

RunStatus FromStepStatus(integrators::StepStatus s) {
  switch (s) {
    case integrators::StepStatus::kAccepted:
      return RunStatus::kFinished;
    case integrators::StepStatus::kStepSizeUnderflow:
      return RunStatus::kStepSizeUnderflow;
    case integrators::StepStatus::kNewtonFailure:
      return RunStatus::kNewtonFailure;
    case integrators::StepStatus::kLinearSolveFailure:
      return RunStatus::kLinearSolveFailure;
    case integrators::StepStatus::kNonFinite:
      return RunStatus::kNonFinite;
  }
  return RunStatus::kNonFinite;
}

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// The switches of the last zeno_window seconds and the contacts of their events (the Zeno
// guard): a ring whose entries keep their row lists' storage when reused, so that a steady run of
// switches allocates nothing.
class SwitchWindow {
 public:
  // Drops the switches before t_min, then records one at t with the union of the events' rows.
  void Record(double t_min, double t, const std::vector<Event>& events) {
    while (count_ > 0 && ring_[first_].t < t_min) {
      first_ = (first_ + 1) % ring_.size();
      --count_;
    }
    if (count_ == ring_.size()) {  // full: grow the ring, oldest entry first
      std::rotate(ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(first_), ring_.end());
      first_ = 0;
      ring_.emplace_back();
    }
    Entry& entry = ring_[(first_ + count_) % ring_.size()];
    ++count_;
    entry.t = t;
    entry.rows.clear();
    for (const Event& e : events) {
      if (entry.rows.empty()) {
        entry.rows.assign(e.rows.begin(), e.rows.end());  // the entry's storage reused
      } else {
        UnionInto(entry.rows, e.rows, &union_buffer_);
        entry.rows.swap(union_buffer_);
      }
    }
  }
  std::size_t size() const { return count_; }
  // The row lists of the switches in the window, oldest first.
  template <class Fn>
  void ForEachRows(Fn&& fn) const {
    for (std::size_t k = 0; k < count_; ++k) fn(ring_[(first_ + k) % ring_.size()].rows);
  }
  void Clear() { first_ = count_ = 0; }

 private:
  struct Entry {
    double t = 0;
    std::vector<int> rows;
  };
  std::vector<Entry> ring_;
  std::size_t first_ = 0, count_ = 0;
  std::vector<int> union_buffer_;
};

}  // namespace

// The loop of Fig. 2 and its state: the current (t, q, v), the contact modes, the witness
// families, the switch handler and the output and time-event schedules.
struct Simulation::Impl {
  Impl(const engine::MechanicalSystem& s, const SimulationOptions& o,
       const std::vector<Observer*>& obs)
      : integrator(integrators::MakeIntegrator(o.integrator, o.integrator_options)),
        ctx(s, o),
        observers(obs),
        view(s),
        frictional(HasFriction(s, ctx.rows)),
        dynamics(frictional ? static_cast<const engine::MechanicalSystem&>(view) : s),
        modes(s, ctx.rows),
        forces(ctx, dynamics, modes, split),
        gaps(ctx, *integrator),
        normal_forces(ctx, *integrator, modes, forces),
        stick(ctx, *integrator, modes, forces),
        slip(ctx, *integrator, modes),
        switcher(ctx),
        time_events(o.time_events) {
    std::sort(time_events.begin(), time_events.end());
    view.set_anchor_gate(true);  // renewed at every accepted step (AcceptStep)
    if (frictional) RequireFrictionSupport(*integrator);
  }

  static void RequireFrictionSupport(const integrators::Integrator& integrator) {
    if (!integrator.SupportsNonIdealForces() || !integrator.SupportsVelocityLevelRows()) {
      throw std::invalid_argument(
          "integrator '" + std::string(integrator.name()) +
          "' cannot integrate frictional contacts (sliding friction acts off the constraint "
          "directions and sticking contacts are velocity-level rows); choose another integrator "
          "(saltus list)");
    }
  }
  static bool HasFriction(const engine::MechanicalSystem& s, const RowSets& rows) {
    for (int r : rows.unilateral) {
      if (s.constraint_info(r).friction > 0) return true;
    }
    return false;
  }
  // The system the integrator and the multipliers see in the current phase.
  const engine::MechanicalSystem& PhaseSystem() const {
    return frictional ? static_cast<const engine::MechanicalSystem&>(view) : ctx.sys;
  }

  void SetState(double t0, const VectorXd& q0, const VectorXd& v0, StateOrigin origin);
  RunResult Advance(double t_end, std::atomic<bool>& stop_requested);

  // The steps of the loop (Fig. 2).
  void Integrate(double t_limit);
  double ScanStep();
  void AcceptStep(bool time_event);
  void SwitchAt(double t_event, double t_end);
  // The switch with the events already in `events` (a time event, or none).
  void Switch(const FiredWitnesses& fired, const VectorXd& v_minus);
  void StartPhase();
  // The step size the ending phase hands to the next (StartPhase).
  double EndingStep() const;
  void SplitForces();
  void GuardAgainstAccumulation();
  std::string FrequentContacts() const;
  // Outputs at the output times before t_hi (and at t_hi when inclusive), up to t_end.
  void EmitOutputs(double t_hi, bool inclusive, double t_end);
  bool StopRequested(std::atomic<bool>& stop_requested) const;

  std::unique_ptr<integrators::Integrator> integrator;
  EventContext ctx;
  const std::vector<Observer*>& observers;
  engine::SlidingFrictionView view;  // the system with the sliding contacts' friction forces
  bool frictional;                   // some contact has μ > 0: phases see `view`
  engine::ConstrainedDynamics dynamics;
  ContactModes modes;
  ForceSplit split;  // admissible split of the contact forces (before `forces`, which reads it)
  StepSamples samples;
  SampleForces forces;
  GapWitness gaps;
  NormalForceWitness normal_forces;
  StickWitness stick;
  SlipWitness slip;
  SwitchHandler switcher;
  double t = 0;
  VectorXd q, v;
  bool initialized = false;
  bool initial_output_pending = false;
  double next_output = 0;
  std::vector<double> time_events;
  std::size_t next_time_event = 0;
  SwitchWindow recent_switches;  // Zeno guard
  // The events of the current switch (records reused: SwitchHandler::Recycle).
  std::vector<Event> events;
  std::optional<RunFailure> pending_failure;  // found by SetState: AdvanceTo stops with it
  VectorXd g_buf, gt_buf, vdot_buf, lambda_buf;
  // The restart rule (StartPhase): the active rows the integrator was last reset with and
  // whether some contact slid in that phase, and the step size the ending phase hands to the
  // next one (0: none, e.g. at SetState).
  std::vector<int> phase_rows;
  bool phase_sliding = true;
  double ending_step = 0;
  // SwitchAt's and Switch's buffers: the state at t*, the fired witnesses, v⁻.
  VectorXd q_event, v_event, v_before;
  FiredWitnesses fired_buffer;
};

Simulation::Simulation(std::shared_ptr<const engine::MechanicalSystem> system,
                       SimulationOptions options)
    : system_(std::move(system)), options_(std::move(options)) {
  Require(system_ != nullptr, "Simulation: null mechanical system");
  const auto& o = options_;
  Require(
      o.restitution >= 0.0 && o.restitution <= 1.0,
      "simulation option 'restitution' must be in [0, 1], got " + std::to_string(o.restitution));
  Require(o.restitution_threshold >= 0 && std::isfinite(o.restitution_threshold),
          "simulation option 'restitution_threshold' must be a finite number >= 0");
  Require(o.thresholds.tau0 > 0 && std::isfinite(o.thresholds.tau0),
          "simulation threshold 'gap' (tau0) must be > 0");
  Require(o.thresholds.tau1 > 0 && std::isfinite(o.thresholds.tau1),
          "simulation threshold 'velocity' (tau1) must be > 0");
  Require(o.thresholds.tau3 >= 0 && std::isfinite(o.thresholds.tau3),
          "simulation threshold 'force' (tau3) must be >= 0");
  Require(o.root_tolerance > 0 && o.root_tolerance < 1e-3,
          "simulation option 'root_tolerance' must be in (0, 1e-3)");
  Require(o.event_samples >= 0 && o.event_samples <= 1000,
          "simulation option 'event_samples' must be in [0, 1000]");
  Require(o.output_step >= 0 && std::isfinite(o.output_step),
          "simulation option 'output_step' must be >= 0");
  Require(o.zeno_max_events > 0, "simulation option 'zeno.max_events' must be > 0");
  Require(o.zeno_window > 0, "simulation option 'zeno.window' must be > 0");
  for (double te : o.time_events) {
    Require(std::isfinite(te), "simulation option 'time_events' contains a non-finite time");
  }
  // Rolling and spinning resistance rows need their own stick/roll modes, which the event loop
  // does not have yet (docs/friction.md): refuse rather than ignore the resistance.
  if (const auto rows = system_->RowsOfKind(engine::ConstraintKind::kResistance); !rows.empty()) {
    throw std::invalid_argument("contact row '" + system_->constraint_info(rows[0]).name +
                                "': rolling and spinning resistance are not supported by the "
                                "event loop yet; rolling_friction runs with integrator "
                                "moreau_jean (docs/friction.md)");
  }

  impl_ = std::make_unique<Impl>(*system_, options_, observers_);
}

Simulation::~Simulation() = default;

double Simulation::t() const { return impl_->t; }
const Eigen::VectorXd& Simulation::q() const { return impl_->q; }
const Eigen::VectorXd& Simulation::v() const { return impl_->v; }
const std::vector<int>& Simulation::closed_rows() const { return impl_->modes.closed(); }
const std::vector<int>& Simulation::active_rows() const { return impl_->modes.active(); }
const std::vector<ContactState>& Simulation::contact_states() const {
  return impl_->modes.states();
}

const SimulationStats& Simulation::stats() const {
  impl_->ctx.stats.integrator = impl_->integrator->stats();
  return impl_->ctx.stats;
}

Eigen::VectorXd Simulation::Multipliers() const {
  VectorXd vdot, lambda;
  impl_->dynamics.Solve(impl_->t, impl_->q, impl_->v, impl_->modes.active(), &vdot, &lambda);
  return lambda;
}

std::vector<Simulation::ContactForce> Simulation::ContactForces() const {
  Impl& im = *impl_;
  const std::vector<int>& active = im.modes.active();
  VectorXd vdot, lambda;
  im.dynamics.Solve(im.t, im.q, im.v, active, &vdot, &lambda);
  im.split.Apply(&lambda);
  auto lambda_of = [&](int row) {
    return lambda[std::lower_bound(active.begin(), active.end(), row) - active.begin()];
  };
  std::vector<ContactForce> out;
  for (const ContactState& s : im.modes.states()) {
    ContactForce f;
    f.row = s.row;
    f.mode = s.mode;
    f.normal = lambda_of(s.row);
    f.slip_direction = s.slip_direction;
    const auto tangents = im.ctx.sys.TangentRows(s.row);
    if (s.mode == ContactMode::kStick) {
      for (std::size_t k = 0; k < tangents.size() && k < 2; ++k) {
        f.tangential[static_cast<Eigen::Index>(k)] = lambda_of(tangents[k]);
      }
    } else if (s.mode == ContactMode::kSlip) {
      // −μ λ_N d with the current slip direction (in the plane the phase's sign).
      VectorXd u_t;
      Eigen::Vector2d d = s.slip_direction;
      if (tangents.size() == 2) {
        engine::ConstraintRate(im.ctx.sys, im.t, im.q, im.v,
                               std::vector<int>(tangents.begin(), tangents.end()), &u_t);
        if (u_t.norm() > 0) d = u_t.normalized();
      }
      f.tangential = -im.ctx.sys.constraint_info(s.row).friction * f.normal * d;
    }
    out.push_back(f);
  }
  return out;
}

void Simulation::SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                          StateOrigin origin) {
  const auto& sys = *system_;
  Require(std::isfinite(t), "initial time must be finite");
  Require(q.size() == sys.nq(), "initial q has size " + std::to_string(q.size()) +
                                    ", the system has nq = " + std::to_string(sys.nq()));
  Require(v.size() == sys.nv(), "initial v has size " + std::to_string(v.size()) +
                                    ", the system has nv = " + std::to_string(sys.nv()));
  Require(q.allFinite(), "initial q contains NaN or Inf");
  Require(v.allFinite(), "initial v contains NaN or Inf");
  impl_->SetState(t, q, v, origin);
}

SimulationStats Combined(const SimulationStats& a, const SimulationStats& b) {
  SimulationStats s = a;
  s.integrator.Add(b.integrator);
  for (int k = 0; k < kNumEventKinds; ++k) s.events[k] += b.events[k];
  s.lcp_solves += b.lcp_solves;
  s.max_position_violation = std::max(a.max_position_violation, b.max_position_violation);
  s.max_velocity_violation = std::max(a.max_velocity_violation, b.max_velocity_violation);
  s.max_acceleration_violation =
      std::max(a.max_acceleration_violation, b.max_acceleration_violation);
  s.min_gap_after_projection = std::min(a.min_gap_after_projection, b.min_gap_after_projection);
  s.watched_row_steps += b.watched_row_steps;
  s.max_watched_rows = std::max(a.max_watched_rows, b.max_watched_rows);
  s.rows_evaluated_samples += b.rows_evaluated_samples;
  s.rows_evaluated_roots += b.rows_evaluated_roots;
  s.rows_evaluated_switches += b.rows_evaluated_switches;
  s.multiplier_solves += b.multiplier_solves;
  s.round_off_departures += b.round_off_departures;
  s.threshold_closing_fallbacks += b.threshold_closing_fallbacks;
  s.energy_gains += b.energy_gains;
  s.largest_energy_gain = std::max(a.largest_energy_gain, b.largest_energy_gain);
  s.painleve_inconsistent += b.painleve_inconsistent;
  s.painleve_indeterminate += b.painleve_indeterminate;
  s.painleve_diagnoses.insert(s.painleve_diagnoses.end(), b.painleve_diagnoses.begin(),
                              b.painleve_diagnoses.end());
  s.indeterminate_impacts += b.indeterminate_impacts;
  s.impact_diagnoses.insert(s.impact_diagnoses.end(), b.impact_diagnoses.begin(),
                            b.impact_diagnoses.end());
  s.lcp_seconds += b.lcp_seconds;
  s.largest_lcp = std::max(a.largest_lcp, b.largest_lcp);
  s.wall_seconds += b.wall_seconds;
  return s;
}

void Simulation::ContinueOutputs(double next_output) {
  if (!impl_->initialized) throw std::logic_error("Simulation::ContinueOutputs before SetState");
  impl_->initial_output_pending = false;
  impl_->next_output = next_output;
}

RunResult Simulation::AdvanceTo(double t_end) {
  if (!impl_->initialized) throw std::logic_error("Simulation::AdvanceTo before SetState");
  // (Tested before a message is built: AdvanceTo allocates nothing in steady state.)
  if (!std::isfinite(t_end)) throw std::invalid_argument("t_end must be finite");
  return impl_->Advance(t_end, stop_requested_);
}

// ---------------------------------------------------------------------------------------
// The loop (Fig. 2): integrate one step, scan the witness functions on its dense output, and
// either accept the step or switch at the earliest event and start a new phase.
// ---------------------------------------------------------------------------------------
RunResult Simulation::Impl::Advance(double t_end, std::atomic<bool>& stop_requested) {
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult result;
  if (initial_output_pending) {
    initial_output_pending = false;
    if (ctx.opt.output_step > 0) {
      EmitOutputs(t, true, t_end);
    } else {
      for (Observer* o : observers) o->OnOutput(t, q, v);
    }
  }
  try {
    if (pending_failure) throw *pending_failure;
    while (t < t_end) {
      if (StopRequested(stop_requested)) {
        result.status = RunStatus::kInterrupted;
        result.message = "stopped on request at t = " + std::to_string(t);
        break;
      }
      const bool time_event =
          next_time_event < time_events.size() && time_events[next_time_event] <= t_end;
      const double t_limit = time_event ? time_events[next_time_event] : t_end;
      if (t_limit <= t) {  // a time event exactly now
        ++next_time_event;
        continue;
      }
      Integrate(t_limit);
      const double t_event = ScanStep();
      if (std::isfinite(t_event)) {
        SwitchAt(t_event, t_end);
      } else {
        EmitOutputs(samples.t1(), true, t_end);
        AcceptStep(time_event && samples.t1() >= t_limit);
      }
    }
    EmitOutputs(t, true, t_end);
  } catch (const RunFailure& failure) {
    result.status = failure.status;
    result.message = failure.message;
  }
  result.t = t;
  ctx.stats.wall_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

bool Simulation::Impl::StopRequested(std::atomic<bool>& stop_requested) const {
  return stop_requested.exchange(false, std::memory_order_relaxed) ||
         (ctx.opt.stop_flag != nullptr && ctx.opt.stop_flag->load(std::memory_order_relaxed));
}

// One accepted step towards t_limit; a failure of the integrator stops the run.
void Simulation::Impl::Integrate(double t_limit) {
  const integrators::StepStatus st = integrator->Step(t_limit);
  if (st == integrators::StepStatus::kAccepted) return;
  std::ostringstream msg;
  msg << "integrator '" << integrator->name() << "' failed at t = " << t << ": "
      << integrators::ToString(st);
  if (st == integrators::StepStatus::kStepSizeUnderflow) {
    msg << " (step below h_min = " << integrator->options().h_min << ")";
  }
  if (const std::string detail = integrator->failure_detail(); !detail.empty()) {
    msg << ": " << detail;
  }
  throw RunFailure{FromStepStatus(st), msg.str()};
}

// The dense output at the event samples, the watched rows of the step, and the earliest event
// time of the witness families on it (∞: none). A system without unilateral rows has no witness
// function at all (no gap, hence no closed contact, force or slip to watch; time events are
// step limits): its samples are the step's two ends only, which the statistics of AcceptStep
// read, so the dense output is not evaluated inside the step (DOP853 then never computes its
// lazy dense-output stages; issue 19 §3, Andrews' squeezer).
double Simulation::Impl::ScanStep() {
  if (ctx.rows.unilateral.empty()) {
    samples.Take(*integrator, 0);
    return std::numeric_limits<double>::infinity();
  }
  samples.Take(*integrator, ctx.opt.event_samples);
  gaps.Watch(q, samples, modes.closed());
  forces.NewStep(samples);
  WitnessSet* const families[] = {&gaps, &normal_forces, &stick, &slip};
  return FindEarliestEvent(samples, families);
}

// A full step without event: statistics of the constraint violations before the integrator's
// projection (the dense output at t₁), the new state, observers, and a time event at t₁.
void Simulation::Impl::AcceptStep(bool time_event) {
  const int n = samples.n();
  const double t1 = samples.t1();
  const std::vector<int>& active = modes.active();
  if (!active.empty()) {
    const VectorXd& qs = samples.q(n + 1);
    const VectorXd& vs = samples.v(n + 1);
    ctx.sys.ConstraintValues(t1, qs, active, &g_buf);
    engine::ConstraintRate(ctx.sys, t1, qs, vs, active, &gt_buf);  // G v + ∂g/∂t
    auto& st = ctx.stats;
    st.max_position_violation = std::max(st.max_position_violation, g_buf.cwiseAbs().maxCoeff());
    st.max_velocity_violation = std::max(st.max_velocity_violation, gt_buf.cwiseAbs().maxCoeff());
    // The residual of the index-1 solve at the step end: that of the multipliers at the last
    // sample (the dense output at t₁) when they were solved, else the integrator's own solve at
    // its state when it has one on these rows (it keeps them all, none dropped as redundant),
    // else one solve there (bilateral rows only).
    double residual = forces.ResidualAt(n + 1);
    if (residual < 0 && integrator->active_rows() == active) {
      residual = integrator->StepEndResidual();
    }
    if (residual < 0) {
      residual =
          dynamics.Solve(t1, integrator->q(), integrator->v(), active, &vdot_buf, &lambda_buf)
              .residual;
    }
    st.max_acceleration_violation = std::max(st.max_acceleration_violation, residual);
  }
  t = t1;
  q = integrator->q();
  v = integrator->v();
  if (frictional) view.ReanchorSlipDirections(t, q, v);  // the slip witness's anchor, too
  for (Observer* o : observers) {
    o->OnStep(t, q, v);
    if (ctx.opt.output_step <= 0) o->OnOutput(t, q, v);
  }
  if (!time_event) return;
  ++next_time_event;
  switcher.Recycle(&events);
  Event& te = switcher.NewEvent(&events, t, EventKind::kTime);
  te.energy_before = te.energy_after = ctx.mass.Energy(t, q, v);
  ending_step = EndingStep();
  Switch({}, v);
}

// An event at t_event: outputs before it, the state on the phase's manifold, the witnesses that
// fired there, the switch.
void Simulation::Impl::SwitchAt(double t_event, double t_end) {
  EmitOutputs(t_event, false, t_end);
  // (Buffers of the Impl: a switch of the same sizes as the last one allocates nothing here.)
  integrator->Interpolate(t_event, &q_event, &v_event);
  switcher.OntoPhaseManifold(t_event, q_event, v_event, modes.active());
  FiredWitnesses& fired = fired_buffer;
  fired.impacting.clear();
  fired.forced_open.clear();
  fired.slipping.clear();
  gaps.Fired(t_event, &fired.impacting);
  normal_forces.Fired(t_event, &fired.forced_open);
  fired.unloaded = normal_forces.unloaded();
  stick.Fired(t_event, &fired.slipping);
  fired.slip_directions = stick.fired_directions();
  t = t_event;
  q.swap(q_event);
  v.swap(v_event);
  ending_step = EndingStep();
  switcher.Recycle(&events);
  Switch(fired, v);
}

// The switch handler at (t, q, v), the observers, the Zeno guard and the new phase.
void Simulation::Impl::Switch(const FiredWitnesses& fired, const VectorXd& v_minus) {
  v_before = v_minus;
  switcher.Handle(t, q, v, modes, fired, &events);
  for (const Event& e : events) {
    ++ctx.stats.events[static_cast<int>(e.kind)];
    for (Observer* o : observers) o->OnEvent(e, q, v_before, v);
  }
  if (events.empty() || events.front().kind != EventKind::kTime) GuardAgainstAccumulation();
  StartPhase();
}

// Too many switches in a tiny window that the rules did not resolve stop the run.
void Simulation::Impl::GuardAgainstAccumulation() {
  recent_switches.Record(t - ctx.opt.zeno_window, t, events);
  if (static_cast<int>(recent_switches.size()) > ctx.opt.zeno_max_events) {
    std::ostringstream msg;
    msg << "event accumulation: more than " << ctx.opt.zeno_max_events << " events within "
        << ctx.opt.zeno_window << " s before t = " << t << FrequentContacts();
    throw RunFailure{RunStatus::kEventAccumulation, msg.str()};
  }
}

// The (at most three) contacts in the most switches of the Zeno window, with their counts.
std::string Simulation::Impl::FrequentContacts() const {
  std::map<int, int> count;
  recent_switches.ForEachRows([&count](const std::vector<int>& rows) {
    for (int r : rows) ++count[r];
  });
  std::vector<std::pair<int, int>> ranked(count.begin(), count.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  std::ostringstream out;
  for (std::size_t k = 0; k < ranked.size() && k < 3; ++k) {
    out << (k == 0 ? "; most frequent: '" : ", '") << ctx.sys.constraint_info(ranked[k].first).name
        << "' in " << ranked[k].second;
  }
  return out.str();
}

// The admissible split of the phase's contact forces over redundant sticking contacts
// (events/force_split.h), from the minimum-norm multipliers at the phase start.
void Simulation::Impl::SplitForces() {
  split.Clear();
  if (modes.sticking().empty()) return;
  VectorXd vdot, lambda;
  if (!dynamics.Solve(t, q, v, modes.active(), &vdot, &lambda).ok) return;
  split.Compute(PhaseSystem(), t, q, v, modes, lambda);
}

// A new phase: the open contacts touching now get their witness form, and the integrator
// restarts with the active rows frozen. Integrator::Reset (and every accepted Step) passes the
// index-1 multipliers of the active rows to MechanicalSystem::AcceptStep.
void Simulation::Impl::StartPhase() {
  gaps.StartPhase(t, q, v, modes.closed(), &switcher.snapshot());
  normal_forces.NewPhase(t);
  if (frictional) {
    view.SetSlidingContacts(modes.SlidingContacts());
    SplitForces();
    stick.StartPhase(t, q);
    slip.StartPhase(t, q, v);
  }
  // The vector field of the new phase is that of the ending one when the active rows are the
  // same and no contact slides in either (a sliding contact's force follows its direction and
  // the decision may change both): an impact that leaves the active set unchanged only moved the
  // state. The integrator then continues from the ending phase's step (Integrator::Reset).
  const bool same_field =
      ending_step > 0 && !phase_sliding && modes.sliding().empty() && modes.active() == phase_rows;
  const double continue_step = same_field ? ending_step : 0.0;
  ending_step = 0;
  phase_rows.assign(modes.active().begin(), modes.active().end());
  phase_sliding = !modes.sliding().empty();
  integrator->Reset(PhaseSystem(), modes.active(), t, q, v, continue_step);
}

// The step the ending phase hands to the next one (StartPhase): the last step it accepted, or
// the controller's proposal after it when that is smaller (the error of that step was close to
// the tolerance). Integrator::Reset has the rule. It is not capped by the phase's length: when
// events come closer and closer (phases shrinking by e), the next event then lies in the first
// sample interval of a long step, which the scan reaches first, instead of in its last one.
double Simulation::Impl::EndingStep() const {
  return std::min(integrator->t() - integrator->t_previous(), integrator->proposed_step());
}

void Simulation::Impl::EmitOutputs(double t_hi, bool inclusive, double t_end) {
  const double step = ctx.opt.output_step;
  if (step <= 0) return;
  VectorXd qo, vo;
  while (next_output < t_hi || (inclusive && next_output <= t_hi)) {
    if (next_output > t_end) break;
    if (next_output <= t) {
      qo = q;
      vo = v;
    } else {
      integrator->Interpolate(next_output, &qo, &vo);
    }
    for (Observer* o : observers) o->OnOutput(next_output, qo, vo);
    next_output += step;
    // Avoid drift of the output grid: snap to the nearest multiple.
    next_output = std::round(next_output / step) * step;
  }
}

// Consistent initialization: bilateral constraints at position and velocity level, a check for
// penetration, then the switch at t₀ (initial impacts, closed contacts) and the first phase.
void Simulation::Impl::SetState(double t0, const VectorXd& q0, const VectorXd& v0,
                                StateOrigin origin) {
  const auto& sys = ctx.sys;
  const auto& opt = ctx.opt;
  t = t0;
  q = q0;
  v = v0;
  modes.SetClosed({});
  const std::vector<int>& bilateral = ctx.rows.bilateral;
  if (!bilateral.empty()) {
    const auto rp = engine::ProjectPositions(sys, t, bilateral, opt.projection, &q);
    Require(rp.converged,
            "the initial positions cannot be projected onto the joint constraints "
            "(residual " +
                std::to_string(rp.residual) + "): check the joint locations");
    const auto rv = engine::ProjectVelocities(sys, t, q, bilateral, opt.projection, &v);
    Require(rv.converged, "the initial velocities cannot be made consistent with the joints");
  }
  // Initial penetration is an input error, not something to resolve silently (a resumed state's
  // is resolved by the switch below: see the header).
  std::vector<int> near;
  if (origin == StateOrigin::kInitial)
    ctx.candidates.Find(q, ctx.zero_speed, 0.0, 0.0, nullptr, &near);
  if (!near.empty()) {
    sys.ConstraintValues(t, q, near, &g_buf);
    for (std::size_t k = 0; k < near.size(); ++k) {
      const double g = g_buf[static_cast<Eigen::Index>(k)];
      if (g < -opt.thresholds.tau0) {
        std::ostringstream msg;
        msg << "contact '" << sys.constraint_info(near[k]).name
            << "': the initial state penetrates by " << -g << " (gap threshold "
            << opt.thresholds.tau0 << ")";
        throw std::invalid_argument(msg.str());
      }
    }
  }
  switcher.Recycle(&events);
  pending_failure.reset();
  try {
    switcher.Handle(t, q, v, modes, {}, &events);
  } catch (const RunFailure& f) {
    // A Painlevé configuration at t₀ is a property of the mechanism, not bad input: the run
    // stops at once with it (AdvanceTo), the state kept.
    if (f.status != RunStatus::kPainleve) {
      throw std::invalid_argument("initial state: " + f.message);
    }
    pending_failure = f;
  }
  for (const Event& e : events) {
    ++ctx.stats.events[static_cast<int>(e.kind)];
    for (Observer* o : observers) o->OnEvent(e, q, v0, v);
  }
  StartPhase();
  initialized = true;
  initial_output_pending = true;
  next_output = t;
  next_time_event = static_cast<std::size_t>(
      std::upper_bound(time_events.begin(), time_events.end(), t) - time_events.begin());
  recent_switches.Clear();
}

}  // namespace saltus::events
