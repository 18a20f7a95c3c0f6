#include "tools/hybrid_scheme.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/projection.h"
#include "tools/schemes.h"

namespace saltus::tools {
namespace {

using Eigen::VectorXd;
using events::EventKind;
using events::RunResult;
using events::RunStatus;

void Require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("simulation option " + message);
}

// How far apart two times may lie that are equal in exact arithmetic. A time of a time-stepping
// phase is t_s + k h evaluated in floating point, two roundings of at most ε/2 relative each
// (k h, then the sum; ε = DBL_EPSILON), so within ε |t| of its exact value; a time read from a
// file (t_end, a grid point k · output_step, a calm time n h) is within ε |t| as well. Twice the
// sum of the two bounds also covers the rounding of the comparison's own difference.
double RoundOff(double a, double b) { return 2.0 * DBL_EPSILON * (std::abs(a) + std::abs(b)); }

// The event loop's options for the time-stepping phases: the fixed step h, outputs at every step
// (the hybrid scheme keeps the run's output grid itself).
events::SimulationOptions SteppingOptions(events::SimulationOptions options, double h) {
  options.integrator = timestepping::kMoreauJeanName;
  options.integrator_options.h_init = h;
  options.integrator_options.adaptive = false;
  options.output_step = 0.0;
  return options;
}

class HybridScheme final : public Scheme, private events::Observer {
 public:
  HybridScheme(std::shared_ptr<const engine::MechanicalSystem> system,
               const events::SimulationOptions& options, const timestepping::SceneKeys& keys,
               const HybridOptions& hybrid)
      : system_(std::move(system)),
        options_(options),
        hybrid_(Checked(hybrid)),
        loop_(system_, options),
        stepping_(system_, SteppingOptions(options, hybrid.step), keys) {
    report_.options = hybrid_;
    report_.window = hybrid_.Window();
    report_.calm_time = hybrid_.CalmTime();
    report_.calm_speed = hybrid_.CalmSpeed(options.thresholds.tau1, options.restitution_threshold);
    loop_.AddObserver(this);
    stepping_.AddObserver(this);
  }

  void AddObserver(events::Observer* o) override { observers_.push_back(o); }

  void SetState(double t, const VectorXd& q, const VectorXd& v,
                events::StateOrigin origin) override {
    const std::optional<HybridState> resume = std::exchange(resume_, std::nullopt);
    switch_pending_ = false;
    after_switch_ = false;
    recent_.clear();
    if (resume && resume->time_stepping) {
      // Resumed inside a time-stepping phase: Moreau–Jean goes on from the state (its
      // penetrations of O(h) accepted) on the phase's grid, with the calm stretch it had.
      timestepping::MoreauJean& mj = stepping_.scheme();
      mj.SetState(t, q, v, events::StateOrigin::kResumed);
      mode_ = Mode::kTimeStepping;
      calm_since_ = resume->calm_since;
      StartGrid(resume->phase_start, t);
      impacts_seen_ = mj.stats().events[static_cast<int>(EventKind::kImpact)];
    } else {
      loop_.SetState(t, q, v, origin);
      mode_ = Mode::kEventDriven;
      KeepConsistentState(loop_.t(), loop_.q(), loop_.v());
      if (resume) recent_.assign(resume->recent_events.begin(), resume->recent_events.end());
    }
    last_output_ = resume ? resume->last_output : -std::numeric_limits<double>::infinity();
    next_output_ = resume ? resume->next_output : t;
    initialized_ = true;
  }
  std::optional<HybridState> hybrid_state() const override {
    HybridState s;
    s.time_stepping = mode_ == Mode::kTimeStepping;
    s.recent_events.assign(recent_.begin(), recent_.end());
    s.calm_since = calm_since_;
    s.phase_start = phase_start_;
    s.next_output = next_output_;
    s.last_output = last_output_;
    return s;
  }
  void ResumeHybridState(const HybridState& state) override { resume_ = state; }
  const HybridReport* hybrid_report() const override { return &report_; }

  RunResult AdvanceTo(double t_end) override {
    if (!initialized_) throw std::logic_error("hybrid scheme: AdvanceTo before SetState");
    if (!std::isfinite(t_end)) throw std::invalid_argument("t_end must be finite");
    for (;;) {  // one scheme after the other while they hand the run over
      switched_ = false;
      const RunResult r =
          mode_ == Mode::kEventDriven ? AdvanceEventDriven(t_end) : AdvanceTimeStepping(t_end);
      if (r.status != RunStatus::kFinished || !switched_) return r;
    }
  }

  void RequestStop() override {
    stop_requested_.store(true, std::memory_order_relaxed);
    loop_.simulation().RequestStop();
  }
  double t() const override { return Active().t(); }
  const VectorXd& q() const override { return Active().q(); }
  const VectorXd& v() const override { return Active().v(); }
  const events::SimulationStats& stats() const override {
    stats_ = loop_.stats();
    if (report_.to_time_stepping > 0) stats_ = events::Combined(stats_, stepping_.stats());
    stats_.events[static_cast<int>(EventKind::kToTimeStepping)] = report_.to_time_stepping;
    stats_.events[static_cast<int>(EventKind::kToEventDriven)] = report_.to_event_driven;
    return stats_;
  }
  std::vector<int> ActiveRows() const override { return Active().ActiveRows(); }
  VectorXd Multipliers() const override { return Active().Multipliers(); }
  const std::vector<int>& closed_rows() const override { return Active().closed_rows(); }
  RunView View() const override {
    RunView view = Active().View();
    return {
        view.system,      options_,    stats(),
        view.t,           view.q,      view.v,
        view.closed_rows, view.energy, report_.to_time_stepping > 0 ? &stepping_.scheme() : nullptr,
        &report_};
  }
  // None: the writers keep this pointer for the whole run, and the time-stepping phases have no
  // index-1 multipliers (the writers then report as for time-stepping).
  const events::Simulation* event_loop() const override { return nullptr; }
  std::string StepSummary() const override {
    std::string s = "hybrid: " + loop_.StepSummary();
    if (report_.to_time_stepping > 0) s += "; " + stepping_.StepSummary();
    return s + "; " + std::to_string(report_.to_time_stepping) + " switch(es) to time-stepping, " +
           std::to_string(report_.to_event_driven) + " back";
  }

 private:
  enum class Mode { kEventDriven, kTimeStepping };

  static HybridOptions Checked(const HybridOptions& h) {
    Require(std::isfinite(h.step) && h.step > 0, "'step' of the hybrid scheme must be > 0");
    Require(h.events >= 1, "'hybrid_events' must be >= 1");
    Require(std::isfinite(h.window) && h.window >= 0, "'hybrid_window' must be >= 0");
    Require(std::isfinite(h.calm_time) && h.calm_time >= 0, "'hybrid_calm_time' must be >= 0");
    Require(std::isfinite(h.calm_speed) && h.calm_speed >= 0, "'hybrid_calm_speed' must be >= 0");
    return h;
  }

  const Scheme& Active() const {
    return mode_ == Mode::kEventDriven ? static_cast<const Scheme&>(loop_)
                                       : static_cast<const Scheme&>(stepping_);
  }
  double Energy(double t, const VectorXd& q, const VectorXd& v) const {
    return system_->KineticEnergy(q, v) + system_->PotentialEnergy(t, q);
  }

  // The event loop until t_end, a failure, a stop request, or the switch to time-stepping.
  RunResult AdvanceEventDriven(double t_end) {
    events::Simulation& loop = loop_.simulation();
    counting_ = true;
    RunResult r = loop.AdvanceTo(t_end);
    counting_ = false;
    if (r.status == RunStatus::kInterrupted) {
      if (stop_requested_.exchange(false, std::memory_order_relaxed) || !switch_pending_) return r;
      r.status = RunStatus::kFinished;  // stopped by the scheme's own request (OnEvent)
      r.message.clear();
    } else if (r.status == RunStatus::kEventAccumulation) {
      ++report_.by_accumulation_guard;
      loop.CancelStopRequest();
      ToTimeStepping(loop.t(), loop.q(), loop.v(), "zeno_guard");
      return {RunStatus::kFinished, "", t()};
    } else if (long* count = FailureCount(r.status)) {
      // The failed switch may have left (q, v) half-projected: time-stepping takes over at the
      // state after the last accepted step or event (header).
      loop.CancelStopRequest();
      try {
        ToTimeStepping(consistent_t_, consistent_q_, consistent_v_, events::ToString(r.status));
      } catch (const std::invalid_argument& e) {  // Moreau–Jean refuses the state
        r.message += "; time-stepping could not take over: " + std::string(e.what());
        return r;
      }
      ++*count;
      report_.last_event_loop_failure = r.message;
      return {RunStatus::kFinished, "", t()};
    }
    if (r.status != RunStatus::kFinished || !switch_pending_) return r;
    loop.CancelStopRequest();  // a request the loop did not consume (the switch was at t_end)
    ToTimeStepping(loop.t(), loop.q(), loop.v(), "crowding");
    return r;
  }

  // The counter of the event loop's failures that time-stepping takes over (header), or null.
  long* FailureCount(RunStatus status) {
    switch (status) {
      case RunStatus::kLcpFailure:
        return &report_.after_lcp_failure;
      case RunStatus::kProjectionFailure:
        return &report_.after_projection_failure;
      case RunStatus::kLinearSolveFailure:
        return &report_.after_linear_solve_failure;
      default:
        return nullptr;
    }
  }

  // Time-stepping, one step at a time, until t_end, a failure, a stop request, or calm.
  RunResult AdvanceTimeStepping(double t_end) {
    timestepping::MoreauJean& mj = stepping_.scheme();
    RunResult r;
    while (mj.t() < t_end) {
      if (stop_requested_.exchange(false, std::memory_order_relaxed)) {
        loop_.simulation().CancelStopRequest();
        return {RunStatus::kInterrupted, "stopped on request at t = " + std::to_string(mj.t()),
                mj.t()};
      }
      // To the next point of the phase's grid t_s + k h, or to t_end when that is nearer (the
      // phase ends exactly at t_end, the facade continues while t < t_end; a later call goes on
      // to the same grid point). A grid point within round-off of t_end is t_end.
      const double t0 = mj.t();
      const double grid = phase_start_ + static_cast<double>(grid_steps_ + 1) * hybrid_.step;
      const double slack = RoundOff(grid, t_end);
      if (grid <= t_end + slack) ++grid_steps_;
      r = mj.AdvanceTo(grid < t_end - slack ? grid : t_end);
      report_.time_stepping_seconds += mj.t() - t0;
      if (r.status != RunStatus::kFinished) return r;
      if (Calm() && ToEventDriven()) return {RunStatus::kFinished, "", t()};
    }
    r.t = mj.t();
    return r;
  }

  // The grid t_s + k h of a time-stepping phase that started at t_s, continued at t: k is the
  // last grid point at or before t (t may lie between two when a call ended at its t_end).
  void StartGrid(double t_s, double t) {
    phase_start_ = t_s;
    grid_steps_ = std::llround((t - t_s) / hybrid_.step);
    const double at = t_s + static_cast<double>(grid_steps_) * hybrid_.step;
    if (at > t + RoundOff(at, t)) --grid_steps_;
  }

  // After a time step: whether the contacts have been calm for the calm time (header).
  bool Calm() {
    const timestepping::MoreauJean& mj = stepping_.scheme();
    const long impacts = mj.stats().events[static_cast<int>(EventKind::kImpact)];
    bool calm = impacts == impacts_seen_;
    impacts_seen_ = impacts;
    const std::vector<int>& rows = mj.active_rows();
    if (calm && !rows.empty()) {
      system_->ConstraintValuesAndRates(mj.t(), mj.q(), mj.v(), rows, &g_, &g_dot_);
      calm = g_dot_.cwiseAbs().maxCoeff() <= report_.calm_speed;
    }
    if (!calm) calm_since_ = mj.t();
    // Both are grid times; the calm time is n h when given as a multiple of the step.
    const double calm_for = mj.t() - calm_since_;
    return calm_for >= report_.calm_time - RoundOff(mj.t(), report_.calm_time);
  }

  // Moreau–Jean takes over at (t, q, v), a consistent state of the event loop; `cause` is the
  // switch's (header).
  void ToTimeStepping(double t, const VectorXd& q, const VectorXd& v, std::string_view cause) {
    const double before = Energy(t, q, v);
    timestepping::MoreauJean& mj = stepping_.scheme();
    mj.SetState(t, q, v, events::StateOrigin::kResumed);
    mode_ = Mode::kTimeStepping;
    switch_pending_ = false;
    after_switch_ = true;
    calm_since_ = t;
    StartGrid(t, t);
    impacts_seen_ = mj.stats().events[static_cast<int>(EventKind::kImpact)];
    ++report_.to_time_stepping;
    switched_ = true;
    report_.last_switch_cause = cause;
    Announce(EventKind::kToTimeStepping, t, before, Energy(t, mj.q(), mj.v()), q, v, mj.v());
  }

  // The state after the event loop's last accepted step or event, where time-stepping takes
  // over when the loop fails (copies of nq + nv numbers, beside a step's or an event's work).
  void KeepConsistentState(double t, const VectorXd& q, const VectorXd& v) {
    consistent_t_ = t;
    consistent_q_ = q;
    consistent_v_ = v;
  }

  // False when the event loop refuses the state (its switch at the state fails): the run then
  // stays in time-stepping for another calm time.
  bool ToEventDriven() {
    const timestepping::MoreauJean& mj = stepping_.scheme();
    const double t = mj.t();
    const double before = Energy(t, mj.q(), mj.v());
    events::Simulation& loop = loop_.simulation();
    // The contacts that carried an impulse in the last step are closed: their gaps, within the
    // scheme's accuracy of zero (a contact that started a step departing ends it up to
    // (1 − θ) h U_k above the surface, at rest), are projected onto g = 0 with the joints, so
    // that the event loop's I₁ (g ≤ τ₀) finds them and its acceleration-level problem decides.
    // An M-metric projection along the contact normals: it can lower T + V, or raise V by the
    // lift of a penetration of at most τ₀.
    handed_q_ = mj.q();
    closing_ = system_->RowsOfKind(engine::ConstraintKind::kBilateral);
    for (std::size_t k = 0; k < mj.active_rows().size(); ++k) {
      if (mj.impulses()[static_cast<Eigen::Index>(k)] > 0.0)
        closing_.push_back(mj.active_rows()[k]);
    }
    if (!closing_.empty() &&
        !engine::ProjectPositions(*system_, t, closing_, options_.projection, &handed_q_)
             .converged) {
      handed_q_ = mj.q();
    }
    held_.clear();
    holding_ = true;
    try {
      loop.SetState(t, handed_q_, mj.v(), events::StateOrigin::kResumed);
    } catch (const std::invalid_argument&) {
      holding_ = false;
      ++report_.refused_switch_backs;
      calm_since_ = t;
      return false;
    }
    holding_ = false;
    loop.ContinueOutputs(next_output_);
    loop.CancelStopRequest();
    mode_ = Mode::kEventDriven;
    recent_.clear();
    KeepConsistentState(loop.t(), loop.q(), loop.v());
    ++report_.to_event_driven;
    switched_ = true;
    report_.last_switch_cause = "calm";
    // The smallest gap of the contacts within τ₀ of the restarted loop (header: ≥ −τ₀).
    system_->CandidateRows(loop.q(), VectorXd::Zero(system_->nv()), 0.0, options_.thresholds.tau0,
                           &near_);
    if (!near_.empty()) {
      system_->ConstraintValues(t, loop.q(), near_, &g_);
      report_.smallest_gap_after_switch_back =
          std::min(report_.smallest_gap_after_switch_back, g_.minCoeff());
    }
    Announce(EventKind::kToEventDriven, t, before, Energy(t, loop.q(), loop.v()), loop.q(), mj.v(),
             loop.v());
    for (const Held& e : held_) {
      for (events::Observer* o : observers_) o->OnEvent(e.event, e.q, e.v_minus, e.v_plus);
    }
    held_.clear();
    return true;
  }

  void Announce(EventKind kind, double t, double before, double after, const VectorXd& q,
                const VectorXd& v_minus, const VectorXd& v_plus) {
    events::Event e;
    e.t = t;
    e.kind = kind;
    e.energy_before = before;
    e.energy_after = after;
    report_.largest_energy_change = std::max(report_.largest_energy_change, after - before);
    for (events::Observer* o : observers_) o->OnEvent(e, q, v_minus, v_plus);
  }

  // ---- the observer of both schemes ----------------------------------------------------------
  void OnStep(double t, const VectorXd& q, const VectorXd& v) override {
    if (counting_) KeepConsistentState(t, q, v);
    for (events::Observer* o : observers_) o->OnStep(t, q, v);
  }
  void OnOutput(double t, const VectorXd& q, const VectorXd& v) override {
    const double step = options_.output_step;
    if (after_switch_) {  // the restarted scheme's output of the state the other one gave
      after_switch_ = false;
      if (t <= last_output_) return;
    }
    if (mode_ == Mode::kTimeStepping && step > 0) {
      // The first step end at or after each grid point (as MoreauJean's own outputs).
      const double slack = RoundOff(t, next_output_);
      if (t < next_output_ - slack) return;
      while (next_output_ <= t + slack)
        next_output_ = std::round((next_output_ + step) / step) * step;
    } else if (step > 0) {
      next_output_ = std::round((t + step) / step) * step;  // the event loop's grid
    }
    last_output_ = t;
    for (events::Observer* o : observers_) o->OnOutput(t, q, v);
  }
  void OnEvent(const events::Event& e, const VectorXd& q, const VectorXd& v_minus,
               const VectorXd& v_plus) override {
    if (holding_) {  // the restarted event loop's events, given after the switch's own
      held_.push_back({e, q, v_minus, v_plus});
      return;
    }
    for (events::Observer* o : observers_) o->OnEvent(e, q, v_minus, v_plus);
    if (!counting_) return;
    KeepConsistentState(e.t, q, v_plus);
    if (e.kind == EventKind::kTime || switch_pending_) return;
    // Event loop → time-stepping: more than K events within the window W (header).
    recent_.push_back(e.t);
    while (recent_.front() < e.t - report_.window) recent_.pop_front();
    if (static_cast<int>(recent_.size()) > hybrid_.events) {
      switch_pending_ = true;
      loop_.simulation().RequestStop();
    }
  }

  struct Held {
    events::Event event;
    VectorXd q, v_minus, v_plus;
  };

  std::shared_ptr<const engine::MechanicalSystem> system_;
  events::SimulationOptions options_;
  HybridOptions hybrid_;
  EventDrivenScheme loop_;
  TimeSteppingScheme stepping_;
  std::vector<events::Observer*> observers_;
  Mode mode_ = Mode::kEventDriven;
  bool initialized_ = false;
  bool counting_ = false;        // inside the event loop's AdvanceTo
  bool switch_pending_ = false;  // the criterion met: the loop stops at its next step boundary
  bool switched_ = false;        // by the scheme being advanced (AdvanceTo)
  std::atomic<bool> stop_requested_{false};  // the caller's RequestStop
  std::deque<double> recent_;                // times of the event loop's recent events
  std::optional<HybridState> resume_;        // the phase the next SetState resumes in
  double calm_since_ = 0;
  long impacts_seen_ = 0;
  double phase_start_ = 0;  // the time-stepping phase's grid t_s + k h: t_s, and k reached
  long long grid_steps_ = 0;
  double consistent_t_ = 0;  // KeepConsistentState
  VectorXd consistent_q_, consistent_v_;
  // Outputs: the last one given, the next grid point, and whether the next output is the
  // restarted scheme's first.
  double last_output_ = -std::numeric_limits<double>::infinity();
  double next_output_ = 0;
  bool after_switch_ = false;
  bool holding_ = false;
  std::vector<Held> held_;
  HybridReport report_;
  mutable events::SimulationStats stats_;
  VectorXd g_, g_dot_, handed_q_;
  std::vector<int> near_, closing_;
};

}  // namespace

std::unique_ptr<Scheme> MakeHybridScheme(std::shared_ptr<const engine::MechanicalSystem> system,
                                         const events::SimulationOptions& options,
                                         const timestepping::SceneKeys& keys,
                                         const HybridOptions& hybrid) {
  if (options.integrator == timestepping::kMoreauJeanName) {
    throw std::invalid_argument(
        "simulation option 'hybrid' switches between the event loop and moreau_jean: it needs "
        "an event-loop integrator, not moreau_jean");
  }
  return std::make_unique<HybridScheme>(std::move(system), options, keys, hybrid);
}

}  // namespace saltus::tools
