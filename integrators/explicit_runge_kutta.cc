#include "integrators/explicit_runge_kutta.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/block_sparse.h"
#include "engine/projection.h"

namespace saltus::integrators {

namespace {

// Eigen's allFinite (x − x == x − x, a vectorized expression and its reduction) as one pass
// over the entries: the same answer, at a few instructions per entry for the short vectors of a
// stage (three per call on every right-hand side).
bool AllFinite(const Eigen::VectorXd& x) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

}  // namespace

ExplicitRungeKutta::ExplicitRungeKutta(const IntegratorOptions& options, std::string name,
                                       const ExplicitRkTableau& tableau)
    : Integrator(options), tableau_(tableau), name_(std::move(name)) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator '" + name_ + "' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: index1");
  }
  norms_.resize(tableau_.b_hat.size());
}

ExplicitRungeKutta::~ExplicitRungeKutta() = default;

ExplicitRungeKutta::EvalResult ExplicitRungeKutta::Acceleration(double t, const Eigen::VectorXd& q,
                                                                const Eigen::VectorXd& v,
                                                                Eigen::VectorXd* vdot) {
  if (!AllFinite(q) || !AllFinite(v)) return EvalResult::kNonFinite;
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus status = dynamics_->Solve(t, q, v, rows_, vdot, &lambda_);
  min_pivot_ratio_ = std::min(min_pivot_ratio_, status.pivot_ratio);
  last_residual_ = status.residual;
  if (status.ok && AllFinite(*vdot)) return EvalResult::kOk;
  // The solver does not say why it failed: NaN/Inf in M, F, G or γ is a non-finite model
  // evaluation, anything else a singular M or inconsistent constraint rows. Failure path only.
  system_->MassMatrix(q, &M_check_);
  system_->Forces(t, q, v, &F_check_);
  bool finite = M_check_.allFinite() && F_check_.allFinite();
  if (finite && !rows_.empty()) {
    system_->ConstraintJacobian(t, q, rows_, &G_);
    system_->ConstraintGamma(t, q, v, rows_, &g_);
    finite = G_.allFinite() && g_.allFinite();
  }
  return finite ? EvalResult::kLinearSolveFailure : EvalResult::kNonFinite;
}

StepStatus ExplicitRungeKutta::ToStatus(EvalResult r) {
  switch (r) {
    case EvalResult::kOk:
      return StepStatus::kAccepted;
    case EvalResult::kLinearSolveFailure:
      return StepStatus::kLinearSolveFailure;
    case EvalResult::kNonFinite:
      return StepStatus::kNonFinite;
  }
  return StepStatus::kNonFinite;
}

void ExplicitRungeKutta::DoReset() {
  const int nq = system_->nq();
  const int nv = system_->nv();
  // The solver object is kept across restarts on the same system (an event-driven run restarts
  // at every event): what it learnt is forgotten, so the solves are those of a new object,
  // without re-allocating or re-analysing the sparse pattern of a known structure of G.
  // A continued phase (Reset's continue_step: the same system and vector field, only the state
  // changed) keeps the factor of a constant M as well.
  if (dynamics_ != nullptr && &dynamics_->system() == system_) {
    if (continue_step_ > 0) {
      dynamics_->RestartSameSystem();
    } else {
      dynamics_->Restart();
    }
  } else {
    dynamics_ = std::make_unique<engine::ConstrainedDynamics>(*system_);
  }
  const auto n = static_cast<std::size_t>(tableau_.dense_stages);
  V_.resize(n);
  K_.resize(n);
  A_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    V_[i].resize(nv);
    K_[i].resize(nv);
    A_[i].resize(nv);
  }
  Q_.resize(nq);
  sum_v_.resize(nv);
  sum_a_.resize(nv);
  q_new_.resize(nq);
  v_new_.resize(nv);
  q_hat_.resize(nq);
  a_projected_.resize(nv);
  err_.resize(nq + nv);
  y_old_.resize(nq + nv);
  y_new_.resize(nq + nv);

  all_rows_ = rows_;
  all_rows_.insert(all_rows_.end(), dropped_rows_.begin(), dropped_rows_.end());
  std::sort(all_rows_.begin(), all_rows_.end());
  V_[0] = v_;
  K_[0] = v_;  // θ = 0 at the start of a step: dexp⁻¹₀ = I
  reset_status_ = StepStatus::kAccepted;
  step_end_residual_ = -1.0;
  min_pivot_ratio_ = 1.0;
  previous_filtered_err_ = -1.0;
  hermite_dense_ = false;
  dense_pending_ = dense_ready_ = false;
  const EvalResult r = Acceleration(t_, q_, v_, &A_[0]);
  reference_pivot_ratio_ = min_pivot_ratio_;
  if (r != EvalResult::kOk) {
    // Reported by the next Step: Reset only throws for invalid input.
    reset_status_ = ToStatus(r);
    return;
  }
  h_ = options_.h_init > 0 ? options_.h_init : InitialStep();
}

double ExplicitRungeKutta::InitialStep() {
  return InitialStepEstimate(
      A_[0], tableau_.order,
      [&](double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* a) {
        return Acceleration(t, q, v, a) == EvalResult::kOk;
      });
}

ExplicitRungeKutta::EvalResult ExplicitRungeKutta::Stage(int i, double h, double t0,
                                                         const Eigen::VectorXd& q0,
                                                         const Eigen::VectorXd& v0,
                                                         const Eigen::VectorXd& a0,
                                                         Eigen::VectorXd* Q) {
  const auto s = static_cast<std::size_t>(i);
  // Σ a_ij K_j and Σ a_ij A_j (K_0 = V_0 = v0; DOP853's tableau is sparse: zeros skipped), V_i
  // and θ = h Σ a_ij K_j, one entry at a time: the operations of the vector expressions in the
  // same order (the same numbers), without a pass and its set-up per term for small nv.
  const Eigen::Index nv = v0.size();
  sum_v_.resize(nv);
  sum_a_.resize(nv);
  theta_.resize(nv);
  Eigen::VectorXd& V = V_[s];
  V.resize(nv);
  const double a_0 = tableau_.a_at(i, 0);
  for (Eigen::Index k = 0; k < nv; ++k) {
    double sv = a_0 * v0[k], sa = a_0 * a0[k];
    for (int j = 1; j < i; ++j) {
      const double a = tableau_.a_at(i, j);
      if (a == 0.0) continue;
      sv += a * K_[static_cast<std::size_t>(j)][k];
      sa += a * A_[static_cast<std::size_t>(j)][k];
    }
    sum_v_[k] = sv;
    sum_a_[k] = sa;
    V[k] = v0[k] + h * sa;
    theta_[k] = h * sv;
  }
  system_->IntegratePosition(q0, sum_v_, h, Q);
  system_->DexpInv(theta_, V, &K_[s]);
  return Acceleration(t0 + tableau_.c[s] * h, *Q, V_[s], &A_[s]);
}

bool ExplicitRungeKutta::EnsureDenseStages() const {
  if (!dense_pending_) return dense_ready_;
  // A cache of the accepted step (header, "Lazy dense-output stages"): computing it changes
  // nothing the caller can observe besides stats().rhs_evaluations.
  return const_cast<ExplicitRungeKutta*>(this)->ComputeDenseStages();
}

bool ExplicitRungeKutta::ComputeDenseStages() {
  dense_pending_ = false;
  const double pivot_ratio = min_pivot_ratio_;
  const double residual = last_residual_;
  bool ok = true;
  for (int i = tableau_.stages; i < tableau_.dense_stages && ok; ++i) {
    ok = Stage(i, dense_h_, t_prev_, q_prev_, v_prev_, dense_a0_, &Q_) == EvalResult::kOk;
  }
  min_pivot_ratio_ = pivot_ratio;
  last_residual_ = residual;
  if (ok) CompleteDenseOutput();
  dense_ready_ = ok;
  return ok;
}

ExplicitRungeKutta::EvalResult ExplicitRungeKutta::Stages(double h) {
  min_pivot_ratio_ = 1.0;
  filtered_ = false;
  const int last = tableau_.stages - 1;
  for (int i = 1; i < last; ++i) {
    const EvalResult r = Stage(i, h, t_, q_, v_, A_[0], &Q_);
    if (r != EvalResult::kOk) return r;
  }
  // The last stage is the solution (a_sj = b_j) and the next step's first stage (FSAL).
  const EvalResult r = Stage(last, h, t_, q_, v_, A_[0], &q_new_);
  v_new_ = V_[static_cast<std::size_t>(last)];
  return r;
}

template <class Weight>
void ExplicitRungeKutta::SumK(const Weight& w, Eigen::VectorXd* out) const {
  out->setZero();
  for (int j = 0; j < tableau_.stages; ++j) *out += w(j) * K_[static_cast<std::size_t>(j)];
}

double ExplicitRungeKutta::EstimatorNorm(int e, double h) {
  const Eigen::Index nq = q_.size();
  const Eigen::Index nv = v_.size();
  const std::span<const double> b = tableau_.b;
  const std::span<const double> b_hat = tableau_.b_hat[static_cast<std::size_t>(e)];
  const auto diff = [&](int j) {
    return b[static_cast<std::size_t>(j)] - b_hat[static_cast<std::size_t>(j)];
  };
  // Velocity part: h Σ (b_j − b̂_j) A_j; with vector-space coordinates (nq = nv) the difference
  // of the two positions, h Σ (b_j − b̂_j) K_j. One entry at a time, the sums from 0 in the order
  // of the vector expressions (the same numbers; see Stage).
  const bool vector_space = nq == nv;
  sum_a_.resize(nv);
  sum_v_.resize(nv);
  for (Eigen::Index k = 0; k < nv; ++k) {
    double sa = 0.0, sv = 0.0;
    for (int j = 0; j < tableau_.stages; ++j) {
      const double d = diff(j);
      sa += d * A_[static_cast<std::size_t>(j)][k];
      if (vector_space) sv += d * K_[static_cast<std::size_t>(j)][k];
    }
    sum_a_[k] = sa;
    err_[nq + k] = h * sa;
    if (vector_space) {
      sum_v_[k] = sv;
      err_[k] = h * sv;
    }
  }
  if (!vector_space) {
    SumK([&](int j) { return b_hat[static_cast<std::size_t>(j)]; }, &sum_v_);
    system_->IntegratePosition(q_, sum_v_, h, &q_hat_);
    err_.head(nq) = q_new_ - q_hat_;
  }
  // Near a singular configuration (header): the step end is projected onto all active rows,
  // which removes the error's part in range(M⁻¹Gᵀ) (the last KKT solve is the FSAL stage's, at
  // q_new_); what is left to control is its part in null(G). Positions in the tangent,
  // h Σ (b_j − b̂_j) K_j, mapped back to the nq coordinates at q_new_.
  if (options_.project && NearSingular() && !rows_.empty()) {
    filter_ = err_.tail(nv);
    if (dynamics_->RemoveConstrainedPart(&filter_)) {
      err_.tail(nv) = filter_;
      SumK(diff, &sum_v_);
      filter_ = h * sum_v_;
      const bool filtered = dynamics_->RemoveConstrainedPart(&filter_);
      filtered_ = filtered_ || filtered;
      if (filtered && nq == nv) {
        err_.head(nq) = filter_;
      } else if (filtered) {
        system_->IntegratePosition(q_new_, filter_, 1.0, &q_hat_);
        err_.head(nq) = q_hat_ - q_new_;
      }
    }
  }
  return ErrorNorm(err_, y_old_, y_new_);
}

double ExplicitRungeKutta::LocalError(double h) {
  const Eigen::Index nq = q_.size();
  const Eigen::Index nv = v_.size();
  y_old_.head(nq) = q_;
  y_old_.tail(nv) = v_;
  y_new_.head(nq) = q_new_;
  y_new_.tail(nv) = v_new_;
  filtered_ = false;
  for (std::size_t e = 0; e < norms_.size(); ++e) norms_[e] = EstimatorNorm(static_cast<int>(e), h);
  return CombineErrors(norms_);
}

bool ExplicitRungeKutta::ProjectIfNeeded(double t, bool* projected) {
  *projected = false;
  keep_fsal_ = false;
  if (!options_.project || rows_.empty()) return true;
  PositionConstraintValues(t, q_new_, &g_);
  engine::ConstraintRate(*system_, t, q_new_, v_new_, rows_, &Gv_);  // O(nnz) when block-sparse
  const double tol = options_.projection_tol;
  const bool within = g_.lpNorm<Eigen::Infinity>() <= tol && Gv_.lpNorm<Eigen::Infinity>() <= tol;
  // Near a rank drop of G (header, "Near singular configurations"): project every step onto the
  // round-off floor, on all active rows (with dropped dependent rows the kept ones may lose rank
  // there where all rows do not: the spatial double four-bar); if that does not converge, the
  // usual projection below.
  if (NearSingular() && ProjectToRoundOff(t, all_rows_, &q_new_, &v_new_)) {
    *projected = true;
    return true;
  }
  // A step whose error estimate left out the constrained part (LocalError) must be projected.
  if (within && !filtered_) return true;

  if (!filtered_ && ProjectWithStepEndFactor(t)) {
    *projected = true;
    return true;
  }
  if (!ProjectOntoConstraints(t, engine::ProjectionOptions{}.rank_tolerance, &q_new_, &v_new_))
    return false;
  *projected = true;
  return true;
}

bool ExplicitRungeKutta::ProjectWithStepEndFactor(double t) {
  if (options_.projection_metric != engine::ProjectionMetric::kMass || has_velocity_rows_) {
    return false;
  }
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  // The tolerances of ProjectOntoConstraints and their round-off floors (engine/projection.h).
  const double tol = std::min(options_.newton_tol, 0.1 * options_.projection_tol);
  const double q_tol = std::max(tol, 16.0 * kEps * std::max(1.0, q_new_.lpNorm<Eigen::Infinity>()));
  // Positions (eq. 35): q ← q ⊖ M⁻¹Gᵀ W⁻¹ g(q), G and W of the FSAL stage's solve at q_new_.
  q_fixed_ = q_new_;
  fixed_g_ = g_;  // g(q_new_), from the test in ProjectIfNeeded
  double residual = fixed_g_.lpNorm<Eigen::Infinity>();
  int iterations = 0;
  while (residual > q_tol) {
    if (iterations == kStepEndFactorIterations ||
        !dynamics_->LastSolveCorrection(fixed_g_, &correction_)) {
      return false;
    }
    system_->IntegratePosition(q_fixed_, correction_, -1.0, &q_fixed_);
    PositionConstraintValues(t, q_fixed_, &fixed_g_);
    ++iterations;
    const double next = fixed_g_.lpNorm<Eigen::Infinity>();
    if (!(next <= 0.5 * residual)) return false;  // no Newton contraction: the full projection
    residual = next;
  }
  // Velocities (eq. 36) at the projected positions: v ← v − M⁻¹Gᵀ W⁻¹ (G(q̃) v + ∂g/∂t), with the
  // same G and W; the residual is that of G(q̃), so only the correction's direction is off, by
  // O(‖q̃ − q_new‖), which the iteration absorbs.
  v_fixed_ = v_new_;
  engine::ConstraintRate(*system_, t, q_fixed_, v_fixed_, rows_, &fixed_g_);
  const double v_tol = std::max(
      tol, 16.0 * kEps * dynamics_->LastSolveGMaxAbs() * v_fixed_.lpNorm<Eigen::Infinity>());
  residual = fixed_g_.lpNorm<Eigen::Infinity>();
  int v_iterations = 0;
  while (residual > v_tol) {
    if (v_iterations == kStepEndFactorIterations ||
        !dynamics_->LastSolveCorrection(fixed_g_, &correction_)) {
      return false;
    }
    v_fixed_ -= correction_;
    engine::ConstraintRate(*system_, t, q_fixed_, v_fixed_, rows_, &fixed_g_);
    ++v_iterations;
    const double next = fixed_g_.lpNorm<Eigen::Infinity>();
    if (!(next <= 0.5 * residual)) return false;
    residual = next;
  }
  if (!q_fixed_.allFinite() || !v_fixed_.allFinite()) return false;
  ++stats_.position_projections;
  ++stats_.velocity_projections;
  stats_.newton_iterations += iterations;
  // The correction in the error norm of the step (header, "Projection"): small enough, the FSAL
  // stage stays the next step's first stage.
  const Eigen::Index nq = q_new_.size();
  const Eigen::Index nv = v_new_.size();
  err_.head(nq) = q_fixed_ - q_new_;
  err_.tail(nv) = v_fixed_ - v_new_;
  y_new_.head(nq) = q_fixed_;
  y_new_.tail(nv) = v_fixed_;
  keep_fsal_ = ErrorNorm(err_, y_new_, y_new_) <= kStaleFirstStageBound;
  q_new_.swap(q_fixed_);
  v_new_.swap(v_fixed_);
  return true;
}

bool ExplicitRungeKutta::InterpolateNearSingular(double s, Eigen::VectorXd* q,
                                                 Eigen::VectorXd* v) const {
  if (!hermite_dense_) return false;
  const double h = hermite_h_;
  const double t = (s - t_prev_) / h;
  const double t2 = t * t, t3 = t2 * t, t4 = t3 * t, t5 = t4 * t;
  if (q_prev_.size() == v_prev_.size()) {
    // Vector-space coordinates (as in EstimatorNorm): the quintic Hermite interpolant of
    // (q, v, v̇) at both ends, the velocity its derivative. Basis P_i on [0, 1] and P_i'.
    const double p1 = t - 6 * t3 + 8 * t4 - 3 * t5, p2 = 0.5 * t2 - 1.5 * t3 + 1.5 * t4 - 0.5 * t5;
    const double p3 = 10 * t3 - 15 * t4 + 6 * t5, p4 = -4 * t3 + 7 * t4 - 3 * t5;
    const double p5 = 0.5 * t3 - t4 + 0.5 * t5;
    const double d1 = 1 - 18 * t2 + 32 * t3 - 15 * t4, d2 = t - 4.5 * t2 + 6 * t3 - 2.5 * t4;
    const double d3 = 30 * t2 - 60 * t3 + 30 * t4, d4 = -12 * t2 + 28 * t3 - 15 * t4;
    const double d5 = 1.5 * t2 - 4 * t3 + 2.5 * t4;
    *v = (p1 * h) * v_prev_ + (p2 * h * h) * hermite_a0_ + p3 * hermite_delta_ +
         (p4 * h) * hermite_k1_ + (p5 * h * h) * hermite_a1_;
    system_->IntegratePosition(q_prev_, *v, 1.0, q);
    *v = d1 * v_prev_ + (d2 * h) * hermite_a0_ + (d3 / h) * hermite_delta_ + d4 * hermite_k1_ +
         (d5 * h) * hermite_a1_;
    return true;
  }
  // Rotations: the cubic Hermite interpolant of the tangent increment (rate v at 0,
  // dexp⁻¹_Δ(v) at 1; its second derivative at 1 is not v̇) and of v (rates v̇).
  const double h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t;
  const double h01 = -2 * t3 + 3 * t2, h11 = t3 - t2;
  *v = (h10 * h) * v_prev_ + h01 * hermite_delta_ + (h11 * h) * hermite_k1_;
  system_->IntegratePosition(q_prev_, *v, 1.0, q);
  *v = h00 * v_prev_ + (h10 * h) * hermite_a0_ + h01 * v_ + (h11 * h) * hermite_a1_;
  return true;
}

StepStatus ExplicitRungeKutta::DoStep(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  // The attempts below overwrite the stages of the last accepted step.
  dense_pending_ = false;
  const bool adaptive = options_.adaptive;
  const auto fsal = static_cast<std::size_t>(tableau_.stages - 1);
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);

    EvalResult r = Stages(h);
    // A stage that lands (nearly) on a singular configuration can leave G v̇ + γ above the
    // consistency bound although the state is consistent: retried with a smaller step, whose
    // stages lie elsewhere. As h → h_min the stages approach the accepted state, so a genuine
    // inconsistency still ends in kLinearSolveFailure.
    if (r == EvalResult::kLinearSolveFailure && adaptive && h > MinStep()) {
      ++stats_.rejected_steps;
      h = std::max(h * kStageFailureShrink, MinStep());
      rejected = true;
      continue;
    }
    if (r != EvalResult::kOk) return ToStatus(r);

    double err = 0;
    if (adaptive) {
      err = ControlledError(LocalError(h), h);
      if (std::isnan(err)) return StepStatus::kNonFinite;
      if (err > 1.0) {
        ++stats_.rejected_steps;
        if (h <= MinStep()) return StepStatus::kStepSizeUnderflow;
        h = std::max(h * StepFactor(err, tableau_.estimate_order, /*after_rejection=*/true),
                     MinStep());
        rejected = true;
        continue;
      }
    }

    const double t_new = last ? t_limit : t_ + h;
    bool projected = false;
    const bool projection_ok = ProjectIfNeeded(t_new, &projected);
    // After a projection the first stage of the next step is re-evaluated at the projected
    // state, unless the correction was far below the tolerance (ProjectWithStepEndFactor).
    const bool reevaluated = projected && !keep_fsal_;
    if (projection_ok && reevaluated) r = Acceleration(t_new, q_new_, v_new_, &a_projected_);
    step_end_residual_ = last_residual_;  // the FSAL stage's or the projected state's solve
    // Same as a stage failure: the step end sits (nearly) on a singular configuration.
    if ((!projection_ok || r == EvalResult::kLinearSolveFailure) && adaptive && h > MinStep()) {
      ++stats_.rejected_steps;
      h = std::max(h * kStageFailureShrink, MinStep());
      rejected = true;
      continue;
    }
    if (!projection_ok) return StepStatus::kNewtonFailure;
    if (r != EvalResult::kOk) return ToStatus(r);

    reference_pivot_ratio_ = std::max(reference_pivot_ratio_, min_pivot_ratio_);
    BuildDenseOutput(h);
    // A near-singular step of a scheme with dense-output stages (header): those stages are
    // outside the error estimate and its filter, so the step's interpolant becomes the Hermite
    // one of the projected ends.
    hermite_dense_ = projected && NearSingular() && tableau_.dense_stages > tableau_.stages &&
                     system_->PositionDifference(q_new_, q_, &hermite_delta_);
    if (hermite_dense_) {
      hermite_a0_ = A_[0];
      hermite_a1_ = a_projected_;
      system_->DexpInv(hermite_delta_, v_new_, &hermite_k1_);
      hermite_h_ = h;
    }
    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    q_.swap(q_new_);
    v_prev_.swap(v_);
    v_.swap(v_new_);
    if (tableau_.dense_stages > tableau_.stages) {
      // The dense-output stages are computed when an interpolation first needs them (header,
      // "Lazy dense-output stages"): keep v̇ at the step start and every stage.
      dense_a0_.swap(A_[0]);
      A_[0] = reevaluated ? a_projected_ : A_[fsal];
      dense_h_ = h;
      dense_pending_ = !hermite_dense_;
      dense_ready_ = false;
    } else {
      A_[0].swap(reevaluated ? a_projected_ : A_[fsal]);
    }
    V_[0] = v_;
    K_[0] = v_;  // θ = 0 at the start of a step: dexp⁻¹₀ = I

    if (adaptive) {
      double h_next = h * StepFactor(err, tableau_.estimate_order, rejected);
      // A near-singular step's filtered estimate can sit on a floor that does not shrink with h
      // (header, "Near singular configurations"): when it did not fall although the step did not
      // grow since the last accepted filtered step, the next step is not shrunk.
      const bool on_floor = filtered_ && previous_filtered_err_ >= 0.0 &&
                            h <= previous_filtered_h_ && err >= previous_filtered_err_;
      if (on_floor && !rejected) h_next = std::max(h_next, h);
      previous_filtered_err_ = filtered_ ? err : -1.0;
      previous_filtered_h_ = h;
      // A step shortened only to meet t_limit says nothing against the step wanted before.
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

}  // namespace saltus::integrators
