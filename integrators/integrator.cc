#include "integrators/integrator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>

#include "engine/block_sparse.h"
#include "engine/constrained_dynamics.h"
#include "engine/projection.h"
#include "integrators/flush_subnormals.h"
#include "integrators/row_selection.h"

namespace saltus::integrators {

namespace {

std::string Num(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", x);
  return buffer;
}

// For one-time validation only: the message is built even when the condition holds, so hot
// paths (Reset, Step, Interpolate) test first and format only on failure.
void Require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

void ValidateOptions(const IntegratorOptions& o) {
  Require(o.rtol >= 0 && std::isfinite(o.rtol),
          "IntegratorOptions.rtol must be finite and >= 0, got " + Num(o.rtol));
  Require(o.atol >= 0 && std::isfinite(o.atol),
          "IntegratorOptions.atol must be finite and >= 0, got " + Num(o.atol));
  Require(o.rtol > 0 || o.atol > 0, "IntegratorOptions.rtol and atol cannot both be 0");
  Require(o.h_min >= 0 && std::isfinite(o.h_min),
          "IntegratorOptions.h_min must be finite and >= 0, got " + Num(o.h_min));
  Require(o.h_max > 0, "IntegratorOptions.h_max must be > 0, got " + Num(o.h_max));
  Require(o.h_max >= o.h_min,
          "IntegratorOptions.h_max (" + Num(o.h_max) + ") must be >= h_min (" + Num(o.h_min) + ")");
  Require(o.h_init >= 0 && std::isfinite(o.h_init),
          "IntegratorOptions.h_init must be finite and >= 0, got " + Num(o.h_init));
  Require(o.adaptive || o.h_init > 0,
          "IntegratorOptions.h_init must be > 0 when adaptive = false (it is the fixed step)");
  Require(o.safety > 0 && o.safety <= 1,
          "IntegratorOptions.safety must be in (0, 1], got " + Num(o.safety));
  Require(o.fac_min > 0 && o.fac_min <= 1,
          "IntegratorOptions.fac_min must be in (0, 1], got " + Num(o.fac_min));
  Require(o.fac_max >= 1 && std::isfinite(o.fac_max),
          "IntegratorOptions.fac_max must be finite and >= 1, got " + Num(o.fac_max));
  Require(o.newton_tol > 0, "IntegratorOptions.newton_tol must be > 0, got " + Num(o.newton_tol));
  Require(o.max_newton_iterations >= 1,
          "IntegratorOptions.max_newton_iterations must be >= 1, got " +
              std::to_string(o.max_newton_iterations));
  Require(
      o.error_time_scale > 0 && std::isfinite(o.error_time_scale),
      "IntegratorOptions.error_time_scale must be finite and > 0, got " + Num(o.error_time_scale));
  Require(o.projection_tol > 0,
          "IntegratorOptions.projection_tol must be > 0, got " + Num(o.projection_tol));
}

// Passes the index-1 multipliers of `rows` (all the active rows given to Reset, so that redundant
// rows share the load as in the event loop) at an accepted state (t, q, v) to
// MechanicalSystem::AcceptStep when the system uses them (force elements evaluated from the last
// accepted step, e.g. joint friction from the normal force); the same values the event loop
// passes (events::Simulation). False when the constrained dynamics cannot be solved there.
bool NotifyAcceptedState(const engine::MechanicalSystem& system, const std::vector<int>& rows,
                         double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (!system.UsesAcceptedSteps()) return true;
  engine::ConstrainedDynamics dynamics(system);
  Eigen::VectorXd vdot, lambda;
  if (!dynamics.Solve(t, q, v, rows, &vdot, &lambda).ok || !lambda.allFinite()) return false;
  system.AcceptStep(t, q, v, rows, lambda);
  return true;
}

// rows ∪ dropped, ascending.
std::vector<int> MergedRows(const std::vector<int>& rows, const std::vector<int>& dropped) {
  std::vector<int> all = rows;
  all.insert(all.end(), dropped.begin(), dropped.end());
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

std::string_view ToString(Formulation f) {
  switch (f) {
    case Formulation::kIndex1:
      return "index1";
    case Formulation::kIndex2:
      return "index2";
    case Formulation::kIndex3:
      return "index3";
    case Formulation::kStabilizedIndex2:
      return "ggl";
  }
  return "unknown";
}

std::optional<Formulation> ParseFormulation(std::string_view name) {
  for (Formulation f : {Formulation::kIndex1, Formulation::kIndex2, Formulation::kIndex3,
                        Formulation::kStabilizedIndex2}) {
    if (name == ToString(f)) return f;
  }
  return std::nullopt;
}

std::string_view ToString(ErrorControl c) {
  return c == ErrorControl::kPerUnitStep ? "per_unit_step" : "per_step";
}

std::optional<ErrorControl> ParseErrorControl(std::string_view name) {
  for (ErrorControl c : {ErrorControl::kPerStep, ErrorControl::kPerUnitStep}) {
    if (name == ToString(c)) return c;
  }
  return std::nullopt;
}

std::string_view ToString(StepStatus s) {
  switch (s) {
    case StepStatus::kAccepted:
      return "accepted";
    case StepStatus::kStepSizeUnderflow:
      return "step size underflow";
    case StepStatus::kNewtonFailure:
      return "Newton failure";
    case StepStatus::kLinearSolveFailure:
      return "linear solve failure";
    case StepStatus::kNonFinite:
      return "non-finite state";
  }
  return "unknown";
}

void IntegratorStats::Add(const IntegratorStats& other) {
  accepted_steps += other.accepted_steps;
  rejected_steps += other.rejected_steps;
  rhs_evaluations += other.rhs_evaluations;
  newton_iterations += other.newton_iterations;
  jacobian_evaluations += other.jacobian_evaluations;
  factorizations += other.factorizations;
  position_projections += other.position_projections;
  velocity_projections += other.velocity_projections;
  smallest_step = std::min(smallest_step, other.smallest_step);
  largest_step = std::max(largest_step, other.largest_step);
  total_time += other.total_time;
}

double AutomaticMinStep(double rtol) {
  constexpr double kTable1MinStep = 1e-7;  // s, at the Table 1 tolerance below
  constexpr double kTable1Rtol = 1e-4;
  // The error estimate of a step h carries a round-off ≈ h · ε · ‖f‖ (ε ≈ 2.2e-16), so a
  // tolerance τ far below round-off passes the error test only for h ≲ τ / (ε ‖f‖): without a
  // floor, rtol = atol = 1e-30 (tests/tools/compare_test.cc) would shrink h to ≈ 1e-15 s and
  // crawl; with it, such a tolerance ends in kStepSizeUnderflow.
  constexpr double kSmallestTolerance = 1e-10;
  return kTable1MinStep * std::min(1.0, std::max(rtol, kSmallestTolerance) / kTable1Rtol);
}

Integrator::Integrator(const IntegratorOptions& options) : options_(options) {
  ValidateOptions(options_);
  if (options_.h_min == 0.0) {
    // rtol = 0 (pure atol control): atol plays the tolerance.
    options_.h_min = std::min(AutomaticMinStep(options_.rtol > 0 ? options_.rtol : options_.atol),
                              options_.h_max);
  }
}

Integrator::~Integrator() = default;

void Integrator::Reset(const engine::MechanicalSystem& system, std::vector<int> active_rows,
                       double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                       double continue_step) {
  if (!Supports(options_.formulation)) {
    throw std::invalid_argument("integrator '" + std::string(name()) +
                                "' does not support formulation '" +
                                std::string(ToString(options_.formulation)) + "'");
  }
  if (!(std::isfinite(t)))
    throw std::invalid_argument("Integrator::Reset: t must be finite, got " + Num(t));
  if (!(q.size() == system.nq()))
    throw std::invalid_argument("Integrator::Reset: q has size " + std::to_string(q.size()) +
                                ", the system has nq = " + std::to_string(system.nq()));
  if (!(v.size() == system.nv()))
    throw std::invalid_argument("Integrator::Reset: v has size " + std::to_string(v.size()) +
                                ", the system has nv = " + std::to_string(system.nv()));
  if (!(q.allFinite())) throw std::invalid_argument("Integrator::Reset: q contains NaN or Inf");
  if (!(v.allFinite())) throw std::invalid_argument("Integrator::Reset: v contains NaN or Inf");
  if (!(continue_step >= 0 && std::isfinite(continue_step)))
    throw std::invalid_argument("Integrator::Reset: continue_step must be finite and >= 0, got " +
                                Num(continue_step));
  std::vector<char>& seen = seen_rows_;  // (a member: a restart allocates nothing here)
  seen.assign(static_cast<std::size_t>(system.num_constraints()), 0);
  for (int row : active_rows) {
    if (!(row >= 0 && row < system.num_constraints()))
      throw std::invalid_argument("Integrator::Reset: active row " + std::to_string(row) +
                                  " outside [0, " + std::to_string(system.num_constraints()) + ")");
    if (!(!seen[static_cast<std::size_t>(row)]))
      throw std::invalid_argument("Integrator::Reset: active row " + std::to_string(row) +
                                  " listed twice");
    seen[static_cast<std::size_t>(row)] = 1;
  }

  RequireSupportedPhase(system, active_rows);

  // The continued first step (header): shrunk by ‖v⁻‖ / ‖v⁺‖ when the new state is faster.
  continue_step_ = 0;
  if (continue_step > 0 && v_.size() == v.size() && q_.size() == q.size()) {
    const Eigen::Index nq = q.size(), nv = v.size();
    const double uniform = options_.atol + options_.rtol * q.lpNorm<Eigen::Infinity>();
    double before = 0, after = 0;
    for (Eigen::Index i = 0; i < nv; ++i) {
      const double sc = nq == nv ? options_.atol + options_.rtol * std::abs(q[i]) : uniform;
      if (sc <= 0) continue;
      before += (v_[i] / sc) * (v_[i] / sc);
      after += (v[i] / sc) * (v[i] / sc);
    }
    continue_step_ = after > before ? continue_step * std::sqrt(before / after) : continue_step;
  }
  system_ = &system;
  dropped_rows_.clear();
  dropped_row_failure_.clear();
  if (NeedsIndependentRows()) {
    rows_ = IndependentRows(system, t, q, active_rows);
    std::set_difference(active_rows.begin(), active_rows.end(), rows_.begin(), rows_.end(),
                        std::back_inserter(dropped_rows_));
  } else {
    rows_ = std::move(active_rows);
  }
  non_ideal_ = system.HasNonIdealForces();
  velocity_level_.resize(rows_.size());
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    velocity_level_[k] = system.IsVelocityLevel(rows_[k]) ? 1 : 0;
  }
  has_velocity_rows_ =
      std::find(velocity_level_.begin(), velocity_level_.end(), 1) != velocity_level_.end();
  position_rows_ = system.PositionLevelRows(rows_);
  t_ = t;
  restart_t_ = t;
  t_prev_ = t;
  q_ = q;
  v_ = v;
  q_prev_ = q;
  v_prev_ = v;
  h_ = options_.h_init;
  DoReset();
  // A failed solve here is left to the scheme's first step (its own evaluation fails too).
  (void)NotifyAcceptedState(*system_, MergedRows(rows_, dropped_rows_), t_, q_, v_);
}

StepStatus Integrator::Step(double t_limit) {
  if (system_ == nullptr) throw std::logic_error("Integrator::Step called before Reset");
  if (!(t_limit > t_))
    throw std::invalid_argument("Integrator::Step: t_limit (" + Num(t_limit) +
                                ") must be greater than the current time t (" + Num(t_) + ")");
  dropped_row_failure_.clear();
  StepStatus status;
  {
    // Subnormal operands cost ~25x a normal one and carry no information at the tolerances a
    // step can meet (flush_subnormals.h); the caller's mode is restored after the step.
    const FlushSubnormals flush;
    status = DoStep(t_limit);
  }
  if (status != StepStatus::kAccepted) return status;
  if (!dropped_rows_.empty() && q_.allFinite()) {
    Eigen::VectorXd g;
    DroppedRowViolations(&g);
    Eigen::Index worst = 0;
    const double violation = g.cwiseAbs().maxCoeff(&worst);
    const double tol =
        kDroppedRowToleranceFactor * std::max(options_.projection_tol, options_.newton_tol);
    if (!(violation <= tol)) {
      const int row = dropped_rows_[static_cast<std::size_t>(worst)];
      dropped_row_failure_ =
          "constraint '" + system_->constraint_info(row).name +
          "' was linearly dependent on the others at the restart (t = " + Num(restart_t_) +
          ") and is violated by " + Num(violation) + " at t = " + Num(t_) +
          ": the rank of the constraints changed (not a structural redundancy)";
      t_ = t_prev_;
      q_ = q_prev_;
      v_ = v_prev_;
      return StepStatus::kLinearSolveFailure;
    }
  }

  if (!q_.allFinite() || !v_.allFinite() || !std::isfinite(t_)) {
    // Back to the last accepted state; the dense output collapses to that point.
    t_ = t_prev_;
    q_ = q_prev_;
    v_ = v_prev_;
    return StepStatus::kNonFinite;
  }
  // Force elements evaluated from the last accepted step (MechanicalSystem::AcceptStep): here,
  // so that they work wherever the integrator is stepped, not only inside the event loop.
  if (system_->UsesAcceptedSteps() &&
      !NotifyAcceptedState(*system_, MergedRows(rows_, dropped_rows_), t_, q_, v_)) {
    t_ = t_prev_;
    q_ = q_prev_;
    v_ = v_prev_;
    return StepStatus::kLinearSolveFailure;
  }
  const double h = t_ - t_prev_;
  ++stats_.accepted_steps;
  stats_.smallest_step = std::min(stats_.smallest_step, h);
  stats_.largest_step = std::max(stats_.largest_step, h);
  stats_.total_time += h;
  return StepStatus::kAccepted;
}

void Integrator::RequireSupportedPhase(const engine::MechanicalSystem& system,
                                       const std::vector<int>& active_rows) const {
  if (system.HasNonIdealForces() && !SupportsNonIdealForces()) {
    throw std::invalid_argument("integrator '" + std::string(name()) +
                                "' does not support non-ideal constraint forces (sliding "
                                "friction): the system has sliding contacts");
  }
  if (SupportsVelocityLevelRows()) return;
  for (int row : active_rows) {
    if (system.IsVelocityLevel(row)) {
      throw std::invalid_argument("integrator '" + std::string(name()) +
                                  "' does not support velocity-level constraint rows (sticking "
                                  "contacts): active row '" +
                                  system.constraint_info(row).name + "'");
    }
  }
}

void Integrator::DroppedRowViolations(Eigen::VectorXd* violation) const {
  // Position-level rows: g; velocity-level rows (no g): G v + ∂g/∂t.
  system_->ConstraintValues(t_, q_, dropped_rows_, violation);
  std::vector<int> velocity_rows;
  std::vector<Eigen::Index> at;
  for (std::size_t k = 0; k < dropped_rows_.size(); ++k) {
    if (system_->IsVelocityLevel(dropped_rows_[k])) {
      velocity_rows.push_back(dropped_rows_[k]);
      at.push_back(static_cast<Eigen::Index>(k));
    }
  }
  if (velocity_rows.empty()) return;
  Eigen::VectorXd rate;
  engine::ConstraintRate(*system_, t_, q_, v_, velocity_rows, &rate);
  for (std::size_t k = 0; k < at.size(); ++k)
    (*violation)(at[k]) = rate(static_cast<Eigen::Index>(k));
}

bool Integrator::ProjectToRoundOff(double t, std::span<const int> rows, Eigen::VectorXd* q,
                                   Eigen::VectorXd* v) {
  engine::ProjectionOptions po;
  po.metric = options_.projection_metric;
  po.tolerance = 1e-14;
  po.max_iterations = options_.max_newton_iterations;
  q_round_off_ = *q;
  const engine::ProjectionResult rp =
      engine::ProjectPositions(*system_, t, rows, po, &q_round_off_);
  ++stats_.position_projections;
  stats_.newton_iterations += rp.iterations;
  if (!rp.converged) return false;
  v_round_off_ = *v;
  const engine::ProjectionResult rv =
      engine::ProjectVelocities(*system_, t, q_round_off_, rows, po, &v_round_off_);
  ++stats_.velocity_projections;
  if (!rv.converged) return false;
  q->swap(q_round_off_);
  v->swap(v_round_off_);
  return true;
}

bool Integrator::RemoveConstrainedPartAt(double t, const Eigen::VectorXd& q, Eigen::VectorXd* x) {
  if (rows_.empty()) return true;
  ConstrainedPartWork& w = constrained_part_;
  system_->ConstraintJacobian(t, q, rows_, &w.G);
  system_->MassMatrix(q, &w.M);
  w.mass.compute(w.M);
  if (w.mass.info() != Eigen::Success) return false;
  w.MiGt = w.mass.solve(w.G.transpose());
  w.W.setThreshold(1e-13);
  w.W.compute(w.G * w.MiGt);
  w.y = w.MiGt * w.W.solve(w.G * *x);
  if (!w.y.allFinite()) return false;
  *x -= w.y;
  return true;
}

void Integrator::RemoveConstrainedPartOfError(double t, const Eigen::VectorXd& q,
                                              Eigen::VectorXd* err) {
  const Eigen::Index nv = system_->nv();
  const Eigen::Index nq = err->size() - nv;
  error_part_ = err->tail(nv);
  if (RemoveConstrainedPartAt(t, q, &error_part_)) err->tail(nv) = error_part_;
  if (nq != nv) return;
  error_part_ = err->head(nq);
  if (RemoveConstrainedPartAt(t, q, &error_part_)) err->head(nq) = error_part_;
}

void Integrator::PositionConstraintValues(double t, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
  if (!has_velocity_rows_) {
    system_->ConstraintValues(t, q, rows_, g);
    return;
  }
  system_->ConstraintValues(t, q, position_rows_, &g_position_);
  g->resize(static_cast<Eigen::Index>(rows_.size()));
  Eigen::Index next = 0;
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    (*g)(static_cast<Eigen::Index>(k)) = velocity_level_[k] ? 0.0 : g_position_(next++);
  }
}

const Eigen::MatrixXd& Integrator::ForceDirections(double t, const Eigen::VectorXd& q,
                                                   const Eigen::VectorXd& v,
                                                   const Eigen::MatrixXd& G,
                                                   Eigen::MatrixXd* H) const {
  if (!non_ideal_) return G;
  system_->ForceDirectionsFromJacobian(t, q, v, rows_, G, H);
  return *H;
}

void Integrator::Interpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  if (system_ == nullptr) throw std::logic_error("Integrator::Interpolate called before Reset");
  // Root finders may land a few ulps outside the step; anything further is a caller's error.
  const double slack = 1e-12 * std::max({1.0, std::abs(t_prev_), std::abs(t_)});
  if (!(s >= t_prev_ - slack && s <= t_ + slack))
    throw std::invalid_argument("Integrator::Interpolate: s = " + Num(s) +
                                " outside the last step [" + Num(t_prev_) + ", " + Num(t_) + "]");
  if (t_ == t_prev_) {  // no step since Reset (or the last one was discarded)
    *q = q_;
    *v = v_;
    return;
  }
  DoInterpolate(std::clamp(s, t_prev_, t_), q, v);
}

double Integrator::ErrorNorm(const Eigen::VectorXd& err, const Eigen::VectorXd& y_old,
                             const Eigen::VectorXd& y_new) const {
  const Eigen::Index n = err.size();
  if (n == 0) return 0.0;
  double sum = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double sc =
        options_.atol + options_.rtol * std::max(std::abs(y_old[i]), std::abs(y_new[i]));
    if (err[i] == 0.0) continue;  // also when sc = 0 (atol = 0 and both values 0)
    const double r = err[i] / sc;
    sum += r * r;
  }
  return std::sqrt(sum / static_cast<double>(n));
}

double Integrator::InitialStepEstimate(
    const Eigen::VectorXd& a0, int order,
    const std::function<bool(double, const Eigen::VectorXd&, const Eigen::VectorXd&,
                             Eigen::VectorXd*)>& acceleration) const {
  if (continue_step_ > 0) return std::clamp(continue_step_, MinStep(), options_.h_max);
  const int nq = system_->nq();
  const int nv = system_->nv();
  const double atol = options_.atol;
  const double rtol = options_.rtol;
  // (x / sc)², with 0 for x = 0 (also when sc = 0: atol = 0 and a zero component).
  auto sq = [](double x, double sc) { return x == 0.0 ? 0.0 : (x / sc) * (x / sc); };
  auto scale = [&](double y) { return atol + rtol * std::abs(y); };
  // Scale of the position tangent: componentwise when nq = nv, else from ‖q‖∞ (heuristic only).
  const double q_scale_uniform = scale(q_.lpNorm<Eigen::Infinity>());
  auto tangent_scale = [&](int i) { return nq == nv ? scale(q_[i]) : q_scale_uniform; };
  // d0 = ‖y0‖, d1 = ‖f(y0)‖ in the scaled RMS norms.
  double d0 = 0, d1 = 0;
  for (int i = 0; i < nq; ++i) d0 += sq(q_[i], scale(q_[i]));
  for (int i = 0; i < nv; ++i) d0 += sq(v_[i], scale(v_[i]));
  for (int i = 0; i < nv; ++i) d1 += sq(v_[i], tangent_scale(i)) + sq(a0[i], scale(v_[i]));
  d0 = std::sqrt(d0 / std::max(1, nq + nv));
  d1 = std::sqrt(d1 / std::max(1, 2 * nv));
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h0 = std::min(h0, options_.h_max);

  // One explicit Euler step of size h0 and the derivative there: d2 ≈ ‖f'‖.
  Eigen::VectorXd q1, v1 = v_ + h0 * a0, a1;
  system_->IntegratePosition(q_, v_, h0, &q1);
  if (!acceleration(t_ + h0, q1, v1, &a1)) {
    // Leave the real failure, if any, to the step; h0 is a safe small guess.
    return std::max(h0, MinStep());
  }
  double d2 = 0;
  for (int i = 0; i < nv; ++i) {
    d2 += sq(v1[i] - v_[i], tangent_scale(i)) + sq(a1[i] - a0[i], scale(v_[i]));
  }
  d2 = std::sqrt(d2 / std::max(1, 2 * nv)) / h0;
  const double d12 = std::max(d1, d2);
  const double h1 = d12 <= 1e-15 ? std::max(1e-6, h0 * 1e-3)
                                 : std::pow(0.01 / d12, 1.0 / static_cast<double>(order));
  return std::max(std::min({100 * h0, h1, options_.h_max}), MinStep());
}

bool Integrator::ProjectOntoConstraints(double t, double rank_tolerance, Eigen::VectorXd* q,
                                        Eigen::VectorXd* v) {
  engine::ProjectionOptions po;
  po.metric = options_.projection_metric;
  po.tolerance = std::min(options_.newton_tol, 0.1 * options_.projection_tol);
  po.max_iterations = options_.max_newton_iterations;
  po.rank_tolerance = rank_tolerance;
  Eigen::VectorXd q_projected = *q;
  const engine::ProjectionResult rp =
      engine::ProjectPositions(*system_, t, rows_, po, &q_projected);
  ++stats_.position_projections;
  stats_.newton_iterations += rp.iterations;
  if (!rp.converged) return false;
  const engine::ProjectionResult rv =
      engine::ProjectVelocities(*system_, t, q_projected, rows_, po, v);
  ++stats_.velocity_projections;
  if (!rv.converged) return false;
  *q = std::move(q_projected);
  return true;
}

double Integrator::StepFactor(double err, int p, bool after_rejection) const {
  const double upper = after_rejection ? 1.0 : options_.fac_max;
  if (std::isnan(err)) return options_.fac_min;
  if (err <= 0.0) return upper;
  const double factor =
      options_.safety * std::pow(1.0 / err, 1.0 / static_cast<double>(ControlOrder(p)));
  return std::clamp(factor, options_.fac_min, upper);
}

}  // namespace saltus::integrators
