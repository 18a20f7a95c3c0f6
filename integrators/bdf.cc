#include "integrators/bdf.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/projection.h"

namespace saltus::integrators {

namespace {

// Step-size ratio cap: variable-step BDF2 is zero-stable for ratios below 1 + √2 (Grigorieff);
// 2 keeps a margin and is the usual cap of BDF codes.
constexpr double kMaxStepRatio = 2.0;
// Shrink factor of h after a Newton failure with fresh Jacobians (as generalized_alpha.cc).
constexpr double kNewtonFailureShrink = 0.25;
// Tolerance of ConsistentStart's projections: below every round-off floor, so that they end on
// the floor (engine/projection.h).
constexpr double kConsistentStartTolerance = 1e-300;
// Per unit step, Newton stops at this fraction of the step's share of rtol, above 100 ε (the
// values of generalized_alpha.cc; bdf.h, "Error per unit step: the Newton tolerance").
constexpr double kNewtonErrorFraction = 0.03;
constexpr double kNewtonToleranceFloor = 100 * std::numeric_limits<double>::epsilon();

// Value at s of the polynomial through (x_i, y_i), i < n: Lagrange basis weights.
void LagrangeWeights(const std::vector<double>& x, std::size_t n, double s,
                     std::vector<double>* w) {
  w->assign(n, 1.0);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      if (i != j) (*w)[j] *= (s - x[i]) / (x[j] - x[i]);
    }
  }
}

}  // namespace

Bdf::Bdf(const IntegratorOptions& options, const BdfOptions& bdf, std::string name)
    : Integrator(options), bdf_(bdf), name_(std::move(name)) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator '" + name_ + "' does not support formulation '" +
                                std::string(ToString(options.formulation)) + "'; supported: ggl");
  }
  if (bdf_.order < 1 || bdf_.order > 5) {
    throw std::invalid_argument("BdfOptions.order must be in [1, 5], got " +
                                std::to_string(bdf_.order));
  }
  if (!(bdf_.refactor_threshold > 0)) {
    throw std::invalid_argument("BdfOptions.refactor_threshold must be > 0");
  }
  if (bdf_.excitation_update && !bdf_.partitioned_update) {
    throw std::invalid_argument(
        "BdfOptions.excitation_update (eq. 26) extends the partitioned update: it needs "
        "partitioned_update = true");
  }
  if (bdf_.partitioned_update && bdf_.jacobian != BdfJacobian::kColouredDifferences) {
    throw std::invalid_argument(
        "BdfOptions.partitioned_update needs jacobian = kColouredDifferences (the system-block "
        "Jacobian re-assembles J with the new c0 anyway)");
  }
}

Bdf::~Bdf() = default;

void Bdf::ConsistentStart() {
  engine::ProjectionOptions po;
  po.metric = options_.projection_metric;
  po.tolerance = kConsistentStartTolerance;
  po.max_iterations = options_.max_newton_iterations;
  q_start_ = q_;
  if (!engine::ProjectPositions(*system_, t_, rows_, po, &q_start_).converged) return;
  v_start_ = v_;
  if (!engine::ProjectVelocities(*system_, t_, q_start_, rows_, po, &v_start_).converged) return;
  q_.swap(q_start_);
  v_.swap(v_start_);
}

void Bdf::DoReset() {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  dynamics_ = std::make_unique<engine::ConstrainedDynamics>(*system_);
  reset_status_ = StepStatus::kAccepted;
  if (m > 0) ConsistentStart();
  rank_drop_.Reset();
  vdot0_.resize(nv);
  lambda_.resize(m);
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus st = dynamics_->Solve(t_, q_, v_, rows_, &vdot0_, &lambda_);
  if (!vdot0_.allFinite() || !lambda_.allFinite()) {
    reset_status_ = StepStatus::kNonFinite;
  } else if (!st.ok) {
    reset_status_ = StepStatus::kLinearSolveFailure;
  }
  mu_.setZero(m);
  ht_.assign(1, t_);
  htheta_.assign(1, Eigen::VectorXd::Zero(nv));
  hq_.assign(1, q_);
  hv_.assign(1, v_);
  hlambda_.assign(1, lambda_);
  last_order_ = 1;
  k_next_ = 1;
  steps_at_order_ = 0;
  initial_phase_ = true;
  consecutive_rejections_ = 0;
  jacobians_stale_ = true;
  c0_jbar_ = 0;
  have_dt_ = false;
  jbar_from_update_ = false;
  update_failed_ = false;
  if (pattern_.cols != 2 * nv + 2 * m) have_pattern_ = false;  // the active rows changed
  J_lu_.Invalidate();
  dt_.clear();
  if (reset_status_ != StepStatus::kAccepted) return;
  if (options_.h_init > 0) {
    h_ = options_.h_init;
  } else {
    // First guess of Hairer, Nørsett & Wanner (Solving ODEs I, Sec. II.4): 0.01 ‖y‖ / ‖ẏ‖ in
    // the scaled norms with y = v, ẏ = v̇; the error control corrects it within a few steps.
    const double d0 = ErrorNorm(v_, v_, v_);
    const double d1 = ErrorNorm(vdot0_, v_, v_);
    const double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h_ = std::clamp(h0, MinStep(), options_.h_max);
  }
}

void Bdf::Prepare(double h) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const std::size_t n_hist = ht_.size();
  const double t1 = ht_[0] + h;
  if (n_hist == 1) {
    // First step after Reset: a one-step method that uses only the state at t_n and its
    // derivative (v_n, v̇_n), no value from before the Reset. Order 1: backward Euler; order ≥ 2:
    // the trapezoidal rule ẏ(t_{n+1}) ≈ (2/h)(y_{n+1} − y_n) − ẏ_n (the BDF2 derivative formula
    // with the node t_{n−1} replaced by the derivative at t_n), which avoids the O(h²) error
    // constant of backward Euler in fixed-step runs. Taylor predictor (θ, v) = (h v_n, v_n + h
    // v̇_n); its error is O(h²), so the estimate ½‖y − y^P‖ is that of an order-1 step
    // (conservative: adaptive runs restart with small steps, as an order-1 restart does).
    k_ = 1;
    const bool trapezoidal = bdf_.order >= 2;
    c_.assign(2, 0.0);
    c_[0] = (trapezoidal ? 2.0 : 1.0) / h;
    c_[1] = -c_[0];
    sum_theta_.setZero(nv);  // θ_n = 0
    sum_v_ = -c_[0] * v_;
    if (trapezoidal) {
      sum_theta_ -= v_;  // θ̇_n = v_n (μ = 0 at a consistent state)
      sum_v_ -= vdot0_;
    }
    theta_pred_ = h * v_;
    v_pred_ = v_ + h * vdot0_;
    lambda_pred_ = lambda_;
    error_factor_ = 0.5;
    return;
  }
  const bool select = bdf_.variable_order && options_.adaptive;
  k_ = std::min(select ? k_next_ : order(), static_cast<int>(n_hist));
  const auto k = static_cast<std::size_t>(k_);

  // Corrector nodes x_0 = t_{n+1}, x_j = t_{n+1−j}; c_j = l_j'(x_0).
  std::vector<double> x(k + 1);
  x[0] = t1;
  for (std::size_t j = 1; j <= k; ++j) x[j] = ht_[j - 1];
  c_.assign(k + 1, 0.0);
  for (std::size_t i = 1; i <= k; ++i) c_[0] += 1.0 / (x[0] - x[i]);
  for (std::size_t j = 1; j <= k; ++j) {
    double num = 1.0, den = 1.0;
    for (std::size_t i = 0; i <= k; ++i) {
      if (i != j) den *= x[j] - x[i];
      if (i != j && i != 0) num *= x[0] - x[i];
    }
    c_[j] = num / den;
  }
  sum_theta_.setZero(nv);
  sum_v_.setZero(nv);
  for (std::size_t j = 1; j <= k; ++j) {
    sum_theta_ += c_[j] * htheta_[j - 1];
    sum_v_ += c_[j] * hv_[j - 1];
  }

  // Predictor through the k + 1 last values. Right after the restart only k are stored (the
  // second step, at order 2 through y_{n+1}, y_n, y_{n−1}): the predictor then has order k − 1
  // and y_{n+1} − y^P ≈ B y^{(k)}/k! with B of dimension time^k, so A/(A + B) with the order-k
  // A (time^(k+1)) would mix units and shrink like h (measured: 1.3e-5 for h = 1.5e-5 s), leaving
  // that step almost uncontrolled. The estimate then uses the order-(k − 1) corrector's
  // constant, ke = np − 1: the error test of a BDF(k − 1) step, an upper bound for BDF(k).
  const std::size_t np = std::min(k + 1, n_hist);
  const std::size_t ke = np - 1;
  double c0e = 0.0, A = 1.0;
  for (std::size_t j = 1; j <= ke; ++j) {
    c0e += 1.0 / (x[0] - x[j]);
    A *= x[0] - x[j];
  }
  A /= c0e;
  double B = 1.0;
  std::vector<double> w;
  LagrangeWeights(ht_, np, t1, &w);
  theta_pred_.setZero(nv);
  v_pred_.setZero(nv);
  lambda_pred_.setZero(m);
  for (std::size_t i = 0; i < np; ++i) {
    theta_pred_ += w[i] * htheta_[i];
    v_pred_ += w[i] * hv_[i];
    lambda_pred_ += w[i] * hlambda_[i];
    B *= t1 - ht_[i];
  }
  error_factor_ = A / (A + B);
}

void Bdf::UpdatePosition() { system_->IntegratePosition(q_, theta_new_, 1.0, &q_new_); }

bool Bdf::EvaluateJacobians(double t) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  ++stats_.jacobian_evaluations;
  const Eigen::VectorXd a = c_[0] * v_new_ + sum_v_;
  system_->ForceJacobians(t, q_new_, v_new_, &K_, &C_);
  system_->MassMatrixProductJacobian(q_new_, a, &KM_);
  if (m > 0) {
    system_->ConstraintForceJacobian(t, q_new_, rows_, lambda_new_, &KG_);
  } else {
    KG_.setZero(nv, nv);
  }
  system_->MassMatrix(q_new_, &M_);
  system_->ConstraintJacobian(t, q_new_, rows_, &G_);
  if (non_ideal_) system_->ForceDirectionsFromJacobian(t, q_new_, v_new_, rows_, G_, &H_);
  // Z = ∂(G v + ∂g/∂t)/∂q along q ⊕ δ.
  system_->ConstraintVelocityJacobian(t, q_new_, v_new_, rows_, &Z_);
  jacobians_stale_ = false;
  return M_.allFinite() && K_.allFinite() && C_.allFinite() && KM_.allFinite() && KG_.allFinite() &&
         Z_.allFinite();
}

bool Bdf::Factorize(bool regularize) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double c0 = c_[0];
  const Eigen::Index n = 2 * nv + 2 * m;
  const Eigen::Index constraint_rows = regularize ? 2 * m : 0;  // λ and μ
  // Scaled as diag(1/c₀, 1/c₀, 1, 1) J diag(1, 1, c₀, c₀), whose entries stay O(1) as h → 0
  // (unscaled, the condition number grows like c₀² and tiny steps before an event look singular).
  const double s = 1.0 / c0;
  if (bdf_.jacobian == BdfJacobian::kColouredDifferences) {
    if (c0 != c0_jbar_) {
      // Partitioned update, eq. (24)/(25) for the GGL residual: J̄ += c₀ diag(I, M(q_new), 0, 0)
      // − c₀,old diag(I, M̄, 0, 0); only the c₀-dependent entries change, ∂F/∂y is kept.
      ++jstats_.partitioned_updates;
      Jbar_.block(0, 0, nv, nv).diagonal().array() += c0 - c0_jbar_;
      system_->MassMatrix(q_new_, &M_);
      Jbar_.block(nv, nv, nv, nv) += c0 * M_ - c0_jbar_ * Mbar_;
      Mbar_ = M_;
      c0_jbar_ = c0;
    }
    // The same scaling as below: diag(1/c₀, 1/c₀, 1, 1) J̄ diag(1, 1, c₀, c₀).
    J_ = Jbar_;
    J_.topRows(2 * nv) *= s;
    J_.rightCols(2 * m) *= c0;
    ++stats_.factorizations;
    c0_matrix_ = c0;
    k_matrix_ = k_;
    return J_lu_.Factorize(J_, constraint_rows);
  }
  J_.setZero(n, n);
  J_.block(0, 0, nv, nv).diagonal().setConstant(1.0);
  J_.block(0, nv, nv, nv).diagonal().setConstant(-s);
  J_.block(0, 2 * nv + m, nv, m) = -G_.transpose();
  J_.block(nv, 0, nv, nv) = s * (KM_ + K_ - KG_);
  J_.block(nv, nv, nv, nv) = M_ + s * C_;
  J_.block(nv, 2 * nv, nv, m) = -(non_ideal_ ? H_ : G_).transpose();
  J_.block(2 * nv, 0, m, nv) = Z_;
  J_.block(2 * nv, nv, m, nv) = G_;
  J_.block(2 * nv + m, 0, m, nv) = G_;
  // Velocity-level rows have no g: their stabilizing multiplier is fixed at μ_k = 0 (header).
  for (Eigen::Index k = 0; k < m; ++k) {
    if (!velocity_level_[static_cast<std::size_t>(k)]) continue;
    J_.row(2 * nv + m + k).setZero();
    J_(2 * nv + m + k, 2 * nv + m + k) = 1.0;
  }
  ++stats_.factorizations;
  c0_matrix_ = c0;
  k_matrix_ = k_;
  return J_lu_.Factorize(J_, constraint_rows);
}

Bdf::Outcome Bdf::Solve(double h) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double t = t_ + h;
  const double c0 = c_[0];
  const double q_scale = 1.0 + q_.lpNorm<Eigen::Infinity>();
  const double newton_tol =
      options_.error_control == ErrorControl::kPerUnitStep
          ? std::clamp(kNewtonErrorFraction * options_.rtol * ToleranceShare(h),
                       kNewtonToleranceFloor, options_.newton_tol)
          : options_.newton_tol;

  for (int attempt = 0; attempt < 2; ++attempt) {
    theta_new_ = theta_pred_;
    v_new_ = v_pred_;
    lambda_new_ = lambda_pred_;
    mu_new_.setZero(m);
    UpdatePosition();
    const bool coloured = bdf_.jacobian == BdfJacobian::kColouredDifferences;
    if (!bdf_.reuse_iteration_matrix || jacobians_stale_ || !J_lu_.valid()) {
      if (coloured && bdf_.excitation_update && have_dt_ && !update_failed_ && !refresh_pattern_ &&
          J_lu_.valid()) {
        // Eq. (26) instead of a new difference: the slow iteration may come from the
        // time-dependent entries of J̄ only.
        ExcitationShift(t);
        ++jstats_.excitation_updates;
        jbar_from_update_ = true;
        jacobians_stale_ = false;
      } else if (coloured) {
        if (!DifferenceJacobian(t, !have_pattern_ || refresh_pattern_, bdf_.excitation_update, h)) {
          return Outcome::kNonFinite;
        }
      } else {
        ++stats_.rhs_evaluations;
        if (!EvaluateJacobians(t)) return Outcome::kNonFinite;
      }
      if (!Factorize(/*regularize=*/true)) return Outcome::kLinearSolveFailure;
    } else if (std::abs(c0 / c0_matrix_ - 1.0) > bdf_.refactor_threshold ||
               (k_ != k_matrix_ && (!coloured || bdf_.partitioned_update))) {
      // A change of order also refactorizes (see bdf.h, "Restart"): the start-up steps after
      // every Reset change the order at each step with c₀ within the threshold.
      // Coloured differences without the partitioned update: J = c₀𝓜 − ∂F/∂y is differenced as
      // a whole (as in DASSL), so a new c₀ needs a new difference approximation.
      if (coloured && !bdf_.partitioned_update && !DifferenceJacobian(t, false)) {
        return Outcome::kNonFinite;
      }
      if (coloured && bdf_.excitation_update && have_dt_) ExcitationShift(t);  // eq. (26)
      if (!Factorize()) {
        jacobians_stale_ = true;
        continue;
      }
    }
    NewtonMonitorOptions mo;
    mo.tol = newton_tol;
    mo.max_iterations = options_.max_newton_iterations;
    NewtonMonitor monitor(mo);
    monitor.Start();
    NewtonProgress progress = NewtonProgress::kContinue;
    r_.resize(2 * nv + 2 * m);
    while (progress == NewtonProgress::kContinue) {
      // Second attempt: full Newton (Jacobians at every iterate). The simplified iteration with
      // the matrix from the predictor can stall when the constraint normals turn a lot within
      // the step (ωh ≈ 0.6 on a circle); re-evaluating restores quadratic convergence.
      if (attempt == 1 && monitor.iterations() > 0) {
        if (coloured) {
          if (!DifferenceJacobian(t, false)) return Outcome::kNonFinite;
        } else if (!EvaluateJacobians(t)) {
          return Outcome::kNonFinite;
        }
        if (!Factorize(/*regularize=*/true)) return Outcome::kLinearSolveFailure;
      }
      ++stats_.rhs_evaluations;
      if (!system_->HasConstantMassMatrix() || M_.rows() != nv) system_->MassMatrix(q_new_, &M_);
      system_->Forces(t, q_new_, v_new_, &F_);
      if (!F_.allFinite() || !q_new_.allFinite() || !v_new_.allFinite()) {
        return Outcome::kNonFinite;
      }
      double residual_c = 0.0;
      if (m > 0) {
        system_->ConstraintJacobian(t, q_new_, rows_, &G_);
        system_->ConstraintTimeDerivative(t, q_new_, rows_, &gt_);
        PositionConstraintValues(t, q_new_, &g_);
        w_.noalias() = v_new_ + G_.transpose() * mu_new_;
        r_.segment(nv, nv).noalias() =
            M_ * (c0 * v_new_ + sum_v_) - F_ -
            ForceDirections(t, q_new_, v_new_, G_, &H_r_).transpose() * lambda_new_;
        r_.segment(2 * nv, m).noalias() = G_ * v_new_ + gt_;
        r_.tail(m) = g_;
        FixVelocityLevelMultipliers(mu_new_, &r_);
        residual_c =
            std::max(r_.segment(2 * nv, m).lpNorm<Eigen::Infinity>(), g_.lpNorm<Eigen::Infinity>());
      } else {
        w_ = v_new_;
        r_.segment(nv, nv).noalias() = M_ * (c0 * v_new_ + sum_v_) - F_;
      }
      system_->DexpInv(theta_new_, w_, &dexp_);
      r_.head(nv) = c0 * theta_new_ + sum_theta_ - dexp_;
      if (!r_.allFinite()) return Outcome::kNonFinite;
      // Solve with the scaled matrix (see Factorize).
      r_.head(2 * nv) /= c0_matrix_;
      J_lu_.Solve(-r_, &x_);
      x_.tail(2 * m) *= c0_matrix_;
      theta_new_ += x_.head(nv);
      v_new_ += x_.segment(nv, nv);
      lambda_new_ += x_.segment(2 * nv, m);
      mu_new_ += x_.tail(m);
      UpdatePosition();
      ++stats_.newton_iterations;
      const double v_scale = 1.0 + v_new_.lpNorm<Eigen::Infinity>();
      const double increment = std::max(x_.head(nv).lpNorm<Eigen::Infinity>() / q_scale,
                                        x_.segment(nv, nv).lpNorm<Eigen::Infinity>() / v_scale);
      progress = monitor.Update(std::max(increment, residual_c));
      if (progress == NewtonProgress::kConverged && m > 0) {
        // The accepted state must meet both constraint levels to newton_tol: check it.
        PositionConstraintValues(t, q_new_, &g_);
        system_->ConstraintJacobian(t, q_new_, rows_, &G_);
        system_->ConstraintTimeDerivative(t, q_new_, rows_, &gt_);
        const double final_residual =
            std::max(g_.lpNorm<Eigen::Infinity>(), (G_ * v_new_ + gt_).lpNorm<Eigen::Infinity>());
        if (final_residual > newton_tol) {
          progress = monitor.iterations() < options_.max_newton_iterations
                         ? NewtonProgress::kContinue
                         : NewtonProgress::kDiverging;
        }
      }
    }
    if (progress == NewtonProgress::kConverged) {
      if (monitor.slow()) {
        jacobians_stale_ = true;
        // Eq. (26): slow even with the updated J̄ → the next refresh is a new difference.
        update_failed_ = jbar_from_update_;
      }
      return Outcome::kConverged;
    }
    jacobians_stale_ = true;  // retry once, with full Newton
    // Coloured differences: the failure may come from entries missing in the estimated pattern;
    // the retry starts with a full difference that refreshes it (Sec. 3.1).
    if (coloured) refresh_pattern_ = true;
  }
  return Outcome::kNewtonFailure;
}

StepStatus Bdf::DoStep(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  const bool adaptive = options_.adaptive;
  const int nv = system_->nv();
  const int nq = system_->nq();
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);
    Prepare(h);

    const Outcome outcome = Solve(h);
    if (outcome == Outcome::kNonFinite) return StepStatus::kNonFinite;
    if (outcome == Outcome::kLinearSolveFailure) return StepStatus::kLinearSolveFailure;
    if (outcome == Outcome::kNewtonFailure) {
      ++stats_.rejected_steps;
      NoteRejection();
      if (!adaptive || h <= MinStep()) return StepStatus::kNewtonFailure;
      h = std::max(h * kNewtonFailureShrink, MinStep());
      rejected = true;
      continue;
    }
    double err = 0.0;
    if (adaptive) {
      // Differential variables only (θ, v); λ, μ are index-2 algebraic variables.
      e_ = error_factor_ * (theta_new_ - theta_pred_);
      // Near a singular configuration only the motion along the manifold is estimated (header).
      const bool filter = NearSingular();
      if (filter) RemoveConstrainedPartAt(t_ + h, q_new_, &e_);
      double err_q;
      if (nq == nv) {
        err_q = ErrorNorm(e_, q_, q_new_);
      } else {
        const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);  // atol only
        err_q = ErrorNorm(e_, zero, zero);
      }
      e_ = error_factor_ * (v_new_ - v_pred_);
      if (filter) RemoveConstrainedPartAt(t_ + h, q_new_, &e_);
      const double err_v = ErrorNorm(e_, v_, v_new_);
      err = std::sqrt(0.5 * (err_q * err_q + err_v * err_v));
      // Per unit step, the two start steps after a Reset (order-1 estimates) keep the per-step
      // test (bdf.h, "Error per unit step: the start").
      const bool start = ht_.size() <= 2;
      if (!start) err = ControlledError(err, h);
      if (std::isnan(err)) return StepStatus::kNonFinite;
      if (err > 1.0) {
        ++stats_.rejected_steps;
        NoteRejection();
        if (h <= MinStep()) return StepStatus::kStepSizeUnderflow;
        // The start's exponent is the per-step one, 1/(k + 1) (eq. 30).
        const double shrink =
            start ? std::clamp(options_.safety * std::pow(err, -0.5), options_.fac_min, 1.0)
                  : StepFactor(err, k_, /*after_rejection=*/true);
        h = std::max(h * shrink, MinStep());
        rejected = true;
        continue;
      }
    }
    const double t_new = last ? t_limit : t_ + h;
    const auto k = static_cast<std::size_t>(k_);

    // Dense output: the corrector's nodes, θ relative to q_n (= q_prev_ after the swap).
    dt_.assign(1, t_new);
    dtheta_.assign(1, theta_new_);
    dv_.assign(1, v_new_);
    dense_start_ = ht_.size() == 1;
    if (dense_start_) {
      // First step after Reset: quadratics through the step's ends with the initial slopes
      // (θ̇, v̇)(t_n) = (v_n, v̇_n), exact for constant accelerations (free flight after an impact)
      // so that the event functions see positions and velocities that agree.
      dv0_ = v_;
      da0_ = vdot0_;
    }
    for (std::size_t j = 0; j < k; ++j) {
      dt_.push_back(ht_[j]);
      dtheta_.push_back(htheta_[j]);
      dv_.push_back(hv_[j]);
    }

    // History: insert the new point and re-base the positions on q_{n+1}.
    ht_.insert(ht_.begin(), t_new);
    htheta_.insert(htheta_.begin(), theta_new_);
    hq_.insert(hq_.begin(), q_new_);
    hv_.insert(hv_.begin(), v_new_);
    hlambda_.insert(hlambda_.begin(), lambda_new_);
    // Order selection needs y_{n+1}, …, y_{n−k−1} (k + 3 values) for the order-(k+1) estimate.
    const std::size_t keep = static_cast<std::size_t>(bdf_.order) + 2;
    if (ht_.size() > keep) {
      ht_.resize(keep);
      htheta_.resize(keep);
      hq_.resize(keep);
      hv_.resize(keep);
      hlambda_.resize(keep);
    }
    // θ_j ← q_j ⊖ q_{n+1} through the system's inverse position update (exact on rotations);
    // systems without it: θ_j − θ_{n+1}, exact in vector spaces only (see bdf.h).
    for (std::size_t j = 1; j < htheta_.size(); ++j) {
      if (!system_->PositionDifference(hq_[j], q_new_, &htheta_[j])) htheta_[j] -= theta_new_;
    }
    htheta_[0].setZero();

    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    q_.swap(q_new_);
    v_prev_ = v_;
    v_ = v_new_;
    lambda_ = lambda_new_;
    mu_ = mu_new_;
    steps_at_order_ = k_ == last_order_ ? steps_at_order_ + 1 : 1;
    last_order_ = k_;
    ++steps_per_order_[static_cast<std::size_t>(k_ - 1)];
    consecutive_rejections_ = 0;
    rank_drop_.Record(J_lu_.pivot_ratio());

    if (adaptive && bdf_.variable_order) {
      // DASSL's step-size rule for the chosen order (Brenan, Campbell & Petzold, Sec. 5.2.2):
      // r = (2 est + 10⁻⁴)^(−1/(k+1)); double when r ≥ 2, keep h when 1 < r < 2 (constant steps
      // keep the BDF coefficients and J), else shrink by r clamped to [0.5, 0.9].
      // SelectOrder returns −1 when the history is still too short for T(k_new) (the initial
      // phase right after a Reset): the step's own estimate decides the new step then.
      double est = SelectOrder(h, err);
      if (est < 0) est = err;
      double r = std::pow(2.0 * est + 1e-4, -1.0 / ControlOrder(k_next_));
      if (r >= kMaxStepRatio) {
        r = kMaxStepRatio;
      } else if (r <= 1.0) {
        r = std::clamp(r, 0.5, 0.9);
      } else {
        r = 1.0;
      }
      if (rejected) r = std::min(r, 1.0);
      double h_next = h * r;
      if (last && !rejected) h_next = std::max(h_next, std::min(h_wanted, kMaxStepRatio * h));
      h_ = std::clamp(h_next, MinStep(), options_.h_max);
    } else if (adaptive) {
      double h_next = h * std::min(StepFactor(err, k_, rejected), rejected ? 1.0 : kMaxStepRatio);
      if (last && !rejected) h_next = std::max(h_next, std::min(h_wanted, kMaxStepRatio * h));
      h_ = std::clamp(h_next, MinStep(), options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void Bdf::NoteRejection() {
  // A rejected one-step start (no history yet: the first step's size is only a guess) does not
  // end the initial phase, so that the order still rises from the second step on.
  if (ht_.size() == 1) return;
  initial_phase_ = false;
  ++consecutive_rejections_;
  // Repeated failures: one order lower per further failure (DASSL drops to order 1 after the
  // third; the predictor of a lower order is less sensitive to the rough history).
  if (consecutive_rejections_ >= 2) k_next_ = std::max(1, std::min(k_next_, k_) - 1);
}

double Bdf::DifferentialNorm(const Eigen::VectorXd& theta, const Eigen::VectorXd& v) const {
  // The norm of the error test (DoStep), with the state of the last accepted step.
  double err_q;
  if (system_->nq() == system_->nv()) {
    err_q = ErrorNorm(theta, q_prev_, q_);
  } else {
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(system_->nv());
    err_q = ErrorNorm(theta, zero, zero);
  }
  const double err_v = ErrorNorm(v, v_prev_, v_);
  return std::sqrt(0.5 * (err_q * err_q + err_v * err_v));
}

double Bdf::SelectOrder(double h, double err) {
  const int k = k_;
  const int max_order = bdf_.order;
  const std::size_t points = ht_.size();  // y_{n+1} first
  // T(j) ≈ ‖h^{j+1} y^{(j+1)}‖ = ‖(j+1)! h^{j+1} y[t_{n+1}, …, t_{n−j}]‖ (≈ ‖∇^{j+1} y_{n+1}‖ for
  // constant steps); DASSL's TERK-type terms: T(k−1) = TERKM1, T(k) = TERK, T(k+1) = TERKP1.
  // Returns −1 when the history is too short.
  auto T = [&](int j) -> double {
    if (j < 0 || static_cast<std::size_t>(j + 2) > points) return -1.0;
    const auto n = static_cast<std::size_t>(j + 2);
    std::vector<Eigen::VectorXd> dth(htheta_.begin(), htheta_.begin() + static_cast<long>(n));
    std::vector<Eigen::VectorXd> dv(hv_.begin(), hv_.begin() + static_cast<long>(n));
    for (std::size_t l = 1; l < n; ++l) {
      for (std::size_t i = 0; i + l < n; ++i) {
        const double dt = ht_[i] - ht_[i + l];
        dth[i] = (dth[i] - dth[i + 1]) / dt;
        dv[i] = (dv[i] - dv[i + 1]) / dt;
      }
    }
    double scale = 1.0;
    for (int i = 1; i <= j + 1; ++i) scale *= i * h;
    return DifferentialNorm(scale * dth[0], scale * dv[0]);
  };
  const double terk = T(k), terkm1 = T(k - 1), terkm2 = T(k - 2), terkp1 = T(k + 1);
  int k_new = k;
  // Lowering test (all phases): the derivatives do not decrease with the order.
  bool lower = false;
  if (k > 2) {
    lower = std::max(terkm1, terkm2) <= terk;
  } else if (k == 2) {
    lower = terkm1 <= 0.5 * terk;
  }
  if (lower) {
    k_new = k - 1;
    initial_phase_ = false;
  } else if (initial_phase_) {
    // Initial phase after a restart: raise the order every step up to the maximum.
    k_new = std::min(k + 1, max_order);
    if (k_new == max_order) initial_phase_ = false;
  } else if (k < max_order && steps_at_order_ >= k + 1 && terkp1 >= 0) {
    // Raise only after k + 1 steps at constant order (the differences then belong to one order).
    if (k == 1) {
      if (terkp1 < 0.5 * terk) k_new = 2;
    } else if (terkm1 <= std::min(terk, terkp1)) {
      k_new = k - 1;
    } else if (terkp1 < terk) {
      k_new = k + 1;
    }
  }
  k_next_ = k_new;
  // Estimated local error at the new order: the BDF error constant 1/(k+1) times T(k).
  if (k_new == k) return err;
  return ControlledError(T(k_new) / (k_new + 1), h);
}

void Bdf::FixVelocityLevelMultipliers(const Eigen::VectorXd& mu, Eigen::VectorXd* r) const {
  if (!has_velocity_rows_) return;
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  for (Eigen::Index k = 0; k < m; ++k) {
    if (velocity_level_[static_cast<std::size_t>(k)]) (*r)(2 * nv + m + k) = mu(k);
  }
}

void Bdf::StepResidual(double t, const Eigen::VectorXd& y, Eigen::VectorXd* r) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double c0 = c_[0];
  const Eigen::VectorXd theta = y.head(nv), v = y.segment(nv, nv);
  Eigen::VectorXd q, F, w, dexp;
  Eigen::MatrixXd M;
  system_->IntegratePosition(q_, theta, 1.0, &q);
  system_->MassMatrix(q, &M);
  system_->Forces(t, q, v, &F);
  r->resize(2 * nv + 2 * m);
  r->segment(nv, nv).noalias() = M * (c0 * v + sum_v_) - F;
  w = v;
  if (m > 0) {
    Eigen::MatrixXd G, H;
    Eigen::VectorXd gt, g;
    system_->ConstraintJacobian(t, q, rows_, &G);
    system_->ConstraintTimeDerivative(t, q, rows_, &gt);
    PositionConstraintValues(t, q, &g);
    w.noalias() += G.transpose() * y.tail(m);
    r->segment(nv, nv).noalias() -=
        ForceDirections(t, q, v, G, &H).transpose() * y.segment(2 * nv, m);
    r->segment(2 * nv, m).noalias() = G * v + gt;
    r->tail(m) = g;
    FixVelocityLevelMultipliers(y.tail(m), r);
  }
  system_->DexpInv(theta, w, &dexp);
  r->head(nv) = c0 * theta + sum_theta_ - dexp;
}

void Bdf::ExcitationShift(double t) {
  Jbar_.noalias() += (t - t_jbar_) * Dt_;
  t_jbar_ = t;
}

bool Bdf::DifferenceJacobian(double t, bool dense, bool time_derivative, double h) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const Eigen::Index n = 2 * nv + 2 * m;
  Eigen::VectorXd y(n), r0;
  y << theta_new_, v_new_, lambda_new_, mu_new_;
  const ResidualFunction R = [this, t](const Eigen::VectorXd& x, Eigen::VectorXd* out) {
    StepResidual(t, x, out);
  };
  StepResidual(t, y, &r0);
  ++stats_.jacobian_evaluations;
  jstats_.unknowns = static_cast<int>(n);
  int evaluations;
  if (dense) {
    evaluations = DenseDifferenceJacobian(R, y, r0, &Jbar_);
    ++jstats_.dense_jacobians;
    if (!have_pattern_) {
      pattern_ = PatternOf(Jbar_);
      colouring_ = ColourColumns(pattern_);
      have_pattern_ = true;
    } else if (UpdatePattern(Jbar_, 0.0, &pattern_)) {
      colouring_ = ColourColumns(pattern_);
      ++jstats_.pattern_changes;
    }
    refresh_pattern_ = false;
  } else {
    evaluations = SparseDifferenceJacobian(R, y, r0, pattern_, colouring_, &Jbar_);
    ++jstats_.sparse_jacobians;
    jstats_.sparse_evaluations += evaluations;
    jstats_.sparse_colours += colouring_.num_colours;
  }
  jstats_.colours = colouring_.num_colours;
  stats_.rhs_evaluations += evaluations + 1;
  c0_jbar_ = c_[0];
  system_->MassMatrix(q_new_, &Mbar_);
  jacobians_stale_ = false;
  t_jbar_ = t;
  jbar_from_update_ = false;
  update_failed_ = false;
  if (time_derivative) {
    // D_t ≈ (J̄(t + δ, y) − J̄(t, y)) / δ with δ = h, same pattern and colouring (see bdf.h).
    const double t2 = t + h;
    const ResidualFunction R2 = [this, t2](const Eigen::VectorXd& x, Eigen::VectorXd* out) {
      StepResidual(t2, x, out);
    };
    Eigen::VectorXd r2;
    StepResidual(t2, y, &r2);
    const int evaluations2 = SparseDifferenceJacobian(R2, y, r2, pattern_, colouring_, &Dt_);
    Dt_ = (Dt_ - Jbar_) / h;
    ++jstats_.time_derivatives;
    jstats_.time_derivative_evaluations += evaluations2 + 1;
    stats_.rhs_evaluations += evaluations2 + 1;
    have_dt_ = Dt_.allFinite();
  }
  return Jbar_.allFinite();
}

void Bdf::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  // Lagrange form of the interpolating polynomial; the node t_n carries θ = 0.
  if (dense_start_) {
    const double h = dt_[0] - dt_[1], tau = s - dt_[1], r = tau * tau / (h * h);
    const Eigen::VectorXd theta = tau * dv0_ + r * (dtheta_[0] - h * dv0_);
    *v = dv0_ + tau * da0_ + r * (dv_[0] - dv0_ - h * da0_);
    system_->IntegratePosition(q_prev_, theta, 1.0, q);
    return;
  }
  std::vector<double> w;
  LagrangeWeights(dt_, dt_.size(), s, &w);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(system_->nv());
  v->setZero(system_->nv());
  for (std::size_t i = 0; i < dt_.size(); ++i) {
    theta += w[i] * dtheta_[i];
    *v += w[i] * dv_[i];
  }
  system_->IntegratePosition(q_prev_, theta, 1.0, q);
}

}  // namespace saltus::integrators
