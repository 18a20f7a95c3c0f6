#include "integrators/generalized_alpha.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/projection.h"

namespace saltus::integrators {

namespace {

// Window of step ratios h_new / h_matrix for which the factorized iteration matrix is kept and
// the step is not changed (RADAU5's quot1 = 1, quot2 = 1.2; Hairer & Wanner II, Sec. IV.8).
constexpr double kKeepMatrixLow = 1.0;
constexpr double kKeepMatrixHigh = 1.2;
// Step reduction after a Newton failure with fresh Jacobians.
constexpr double kNewtonFailureShrink = 0.25;
// Newton increments must be below this fraction of the error tolerance (in ErrorNorm units), so
// that the iteration error stays well below the local error (Hairer & Wanner II, Sec. IV.8 use
// κ ∈ [0.01, 0.1]).
constexpr double kNewtonErrorFraction = 0.03;
// Lowest Newton tolerance NewtonTolerance asks for: 100 ε, the round-off of the residuals and
// relative increments of positions of order 1.
constexpr double kNewtonToleranceFloor = 100 * std::numeric_limits<double>::epsilon();
// Round-off level of the position constraints, in units of ε (1 + ‖q‖∞): g is a difference of
// coordinates of size ‖q‖ (a few roundings each), so |g| below this is treated as 0 by the
// index-3 Newton iteration. 16 ε ‖q‖ covers the few operations of the contact and joint gaps
// (a gap of 0.3 m is resolved to 1e-15 m); it is 1e6 times below the default newton_tol.
constexpr double kConstraintRoundoff = 16.0;
// Order p of the method in eq. (30): the local error estimate is O(h^(p+1)).
constexpr int kEstimateOrder = 2;

}  // namespace

GeneralizedAlphaParameters GeneralizedAlphaParameters::FromRhoInf(double rho_inf) {
  if (!(rho_inf >= 0.0 && rho_inf <= 1.0)) {
    throw std::invalid_argument("rho_inf must be in [0, 1], got " + std::to_string(rho_inf));
  }
  GeneralizedAlphaParameters p{};
  p.alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0);
  p.alpha_f = rho_inf / (rho_inf + 1.0);
  p.gamma = 0.5 + p.alpha_f - p.alpha_m;
  p.beta = 0.25 * (p.gamma + 0.5) * (p.gamma + 0.5);
  return p;
}

GeneralizedAlpha::GeneralizedAlpha(const IntegratorOptions& options)
    : Integrator(options), par_(GeneralizedAlphaParameters::FromRhoInf(options.rho_inf)) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator 'generalized_alpha' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: index3, index2, ggl");
  }
  if (options.error_control == ErrorControl::kPerUnitStep &&
      options.formulation == Formulation::kIndex3) {
    throw std::invalid_argument(
        "integrator 'generalized_alpha' with formulation 'index3' does not support error_control "
        "per_unit_step (its positions carry Newton's tolerance in every step; use index2 or ggl)");
  }
  resync_algebraic_ = options.formulation == Formulation::kIndex3;
}

GeneralizedAlpha::~GeneralizedAlpha() = default;

void GeneralizedAlpha::DoReset() {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  dynamics_ = std::make_unique<engine::ConstrainedDynamics>(*system_);
  reset_status_ = StepStatus::kAccepted;
  vdot_.resize(nv);
  lambda_.resize(m);
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus st = dynamics_->Solve(t_, q_, v_, rows_, &vdot_, &lambda_);
  if (!vdot_.allFinite() || !lambda_.allFinite()) {
    reset_status_ = st.ok ? StepStatus::kNonFinite : StepStatus::kNonFinite;
  } else if (!st.ok) {
    reset_status_ = StepStatus::kLinearSolveFailure;
  }
  a_ = vdot_;
  vdot_prev_ = vdot_;
  h_last_ = 0.0;
  h_dense_ = 0.0;
  jacobians_stale_ = true;
  S_lu_.Invalidate();
  P_lu_.Invalidate();
  rank_drop_.Reset();
  U_.setZero(nv);
  nu_.setZero(m);
  if (reset_status_ != StepStatus::kAccepted) return;
  if (options_.h_init > 0) {
    h_ = options_.h_init;
  } else {
    // First guess of Hairer, Nørsett & Wanner (Solving ODEs I, Sec. II.4): 0.01 ‖y‖ / ‖ẏ‖ in
    // the scaled norms, y = (v), ẏ = (v̇); the error control corrects it within a few steps.
    Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
    const double d0 = ErrorNorm(v_, v_, v_);
    const double d1 = ErrorNorm(vdot_, v_, v_);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h_ = std::clamp(h0, MinStep(), options_.h_max);
  }
}

void GeneralizedAlpha::UpdateState(double h) {
  const auto& p = par_;
  a_new_ = (p.alpha_f * vdot_ + (1.0 - p.alpha_f) * vdot_new_ - p.alpha_m * a_shift_) /
           (1.0 - p.alpha_m);
  v_new_ = v_shift_ + h * (1.0 - p.gamma) * a_shift_ + h * p.gamma * a_new_;
  dq_new_ = h * v_shift_ + h * h * (0.5 - p.beta) * a_shift_ + h * h * p.beta * a_new_;
  if (options_.formulation == Formulation::kStabilizedIndex2) {
    system_->IntegratePosition(q_, dq_new_, 1.0, &q_hat_);
    system_->IntegratePosition(q_hat_, U_, 1.0, &q_new_);
  } else {
    system_->IntegratePosition(q_, dq_new_, 1.0, &q_new_);
  }
}

bool GeneralizedAlpha::RefreshMatrix(double h, bool new_jacobians) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double t = t_ + h;
  const double c = (1.0 - par_.alpha_f) / (1.0 - par_.alpha_m);
  const double beta2 = h * h * par_.beta * c;
  const double gamma2 = h * par_.gamma * c;
  if (new_jacobians) {
    ++stats_.jacobian_evaluations;
    system_->ForceJacobians(t, q_new_, v_new_, &K_, &C_);
    system_->MassMatrixProductJacobian(q_new_, vdot_new_, &KM_);
    if (m > 0) {
      system_->ConstraintForceJacobian(t, q_new_, rows_, lambda_new_, &KG_);
    } else {
      KG_.setZero(nv, nv);
    }
    system_->MassMatrix(q_new_, &M_);
    system_->ConstraintJacobian(t, q_new_, rows_, &G_);
    const bool index3 = options_.formulation == Formulation::kIndex3;
    if ((!index3 || has_velocity_rows_) && m > 0) {
      // Z = ∂(G v + ∂g/∂t)/∂q along q ⊕ δ: the index-2 row of S is G + (β''/γ'') Z (index 3:
      // on the velocity-level rows only).
      system_->ConstraintVelocityJacobian(t, q_new_, v_new_, rows_, &Z_);
    }
    jacobians_stale_ = false;
  }
  S_.resize(nv + m, nv + m);
  S_.topLeftCorner(nv, nv) = M_ + gamma2 * C_ + beta2 * (KM_ + K_ - KG_);
  S_.topRightCorner(nv, m) = -ForceDirections(t, q_new_, v_new_, G_, &H_).transpose();
  S_.bottomLeftCorner(m, nv) = G_;
  if (options_.formulation != Formulation::kIndex3 && m > 0) {
    S_.bottomLeftCorner(m, nv) += (beta2 / gamma2) * Z_;
  } else if (has_velocity_rows_) {
    for (Eigen::Index k = 0; k < m; ++k) {
      if (velocity_level_[static_cast<std::size_t>(k)])
        S_.row(nv + k).head(nv) += (beta2 / gamma2) * Z_.row(k);
    }
  }
  S_.bottomRightCorner(m, m).setZero();
  ++stats_.factorizations;
  h_matrix_ = h;
  // Regularized at a singular configuration (newton.h, "Saddle-point matrices") only with fresh
  // Jacobians: a singular matrix from stale ones is refreshed first (Solve).
  const Eigen::Index saddle_rows = new_jacobians ? m : 0;
  if (!S_lu_.Factorize(S_, saddle_rows)) return false;
  rank_drop_.Record(S_lu_.pivot_ratio());
  if (options_.formulation == Formulation::kStabilizedIndex2) {
    // Position correction (eq. 24) on the position-level rows; ν = 0 on the velocity-level rows.
    P_ = S_;
    P_.topLeftCorner(nv, nv) = M_;
    P_.topRightCorner(nv, m) = -G_.transpose();
    P_.bottomLeftCorner(m, nv) = G_;
    for (Eigen::Index k = 0; k < m; ++k) {
      if (!velocity_level_[static_cast<std::size_t>(k)]) continue;
      P_.row(nv + k).head(nv).setZero();
      P_(nv + k, nv + k) = 1.0;
    }
    ++stats_.factorizations;
    if (!P_lu_.Factorize(P_, saddle_rows)) return false;
  }
  return true;
}

void GeneralizedAlpha::ShiftToStep(double h) {
  a_shift_ = a_;
  v_shift_ = v_;
  if (!correct_variable_step_ || h_last_ <= 0.0 || h == h_last_) return;
  // ã_n = a_n + Δ_α (h − h_{n−1}) v⃛, v⃛ ≈ (v̇_n − v̇_{n−1}) / h_{n−1} (see the header).
  e_ = (par_.alpha_m - par_.alpha_f) * (h - h_last_) / h_last_ * (vdot_ - vdot_prev_);
  if (options_.formulation != Formulation::kIndex3 || position_rows_.empty()) {
    a_shift_ += e_;
    return;
  }
  // Index 3: constrained directions range(W), W = M⁻¹Gᵀ (G M⁻¹Gᵀ)⁻¹, shifted with G q⃛ instead of
  // v̇ differences, and ṽ_n moves v's offset c₂ h² q⃛ to the new step (see the header).
  Eigen::MatrixXd G, G_prev, MiGt;  // at t_n and t_{n−1} (G_ belongs to the iteration)
  Eigen::VectorXd gamma, gamma_prev;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> delassus;
  PositionConstrainedDirections(t_, q_, v_, &G, &MiGt, &delassus);
  system_->ConstraintJacobian(t_prev_, q_prev_, position_rows_, &G_prev);
  system_->ConstraintGamma(t_, q_, v_, position_rows_, &gamma);
  system_->ConstraintGamma(t_prev_, q_prev_, v_prev_, position_rows_, &gamma_prev);
  // G q⃛ = −(γ̇ + Ġ v̇) (time derivative of g̈ = G v̇ + γ = 0), by differences over the last step.
  const Eigen::VectorXd Gq3 = -((gamma - gamma_prev) + (G - G_prev) * vdot_) / h_last_;
  const double dalpha = par_.alpha_m - par_.alpha_f;
  const double c2 = -1.0 / 12.0 - 0.25 * dalpha * dalpha;
  const Eigen::VectorXd Wq3 = MiGt * delassus.solve(Gq3);
  a_shift_ += e_ - MiGt * delassus.solve(G * e_) + dalpha * (h - h_last_) * Wq3;
  v_shift_ += c2 * (h * h - h_last_ * h_last_) * Wq3;
  if (!a_shift_.allFinite() || !v_shift_.allFinite()) {  // degenerate data: no index-3 shift
    a_shift_ = a_ + e_;
    v_shift_ = v_;
  }
}

GeneralizedAlpha::Outcome GeneralizedAlpha::Solve(double h) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double t = t_ + h;
  const double c = (1.0 - par_.alpha_f) / (1.0 - par_.alpha_m);
  const double beta2 = h * h * par_.beta * c;
  const double gamma2 = h * par_.gamma * c;
  const Formulation f = options_.formulation;
  const bool ggl = f == Formulation::kStabilizedIndex2;

  // ã_n: a_n moved to the new step size (see the header).
  ShiftToStep(h);

  for (int attempt = 0; attempt < 2; ++attempt) {
    // Predictor: constant acceleration and multipliers.
    vdot_new_ = vdot_;
    lambda_new_ = lambda_;
    U_.setZero(nv);
    nu_.setZero(m);
    UpdateState(h);
    const bool fresh = jacobians_stale_ || !S_lu_.valid();
    if (fresh || h != h_matrix_) {
      if (!RefreshMatrix(h, fresh)) {
        if (!M_.allFinite() || !K_.allFinite() || !C_.allFinite()) return Outcome::kNonFinite;
        if (!fresh) {  // the old Jacobians may be to blame
          jacobians_stale_ = true;
          continue;
        }
        return Outcome::kLinearSolveFailure;
      }
    }
    NewtonMonitorOptions mo;
    const double tol = NewtonTolerance(h);
    mo.tol = tol;
    mo.max_iterations = options_.max_newton_iterations;
    NewtonMonitor monitor(mo);
    monitor.Start();
    NewtonProgress progress = NewtonProgress::kContinue;
    // Near a rank drop of G (header, "Near singular configurations"): consecutive updates that
    // stopped contracting with residuals and position updates converged.
    const bool near_singular = ggl && m > 0 && rank_drop_.Near(S_lu_.pivot_ratio());
    NewtonStall stall;
    while (progress == NewtonProgress::kContinue) {
      // Second attempt: full Newton (matrices at every iterate). Simplified Newton with
      // matrices from the start of the step contracts too slowly when the constraint normals
      // turn a lot within a step (e.g. ωh = 0.6 on a circle); refreshing restores quadratic
      // convergence at the price of one Jacobian evaluation per iteration.
      if (attempt == 1 && monitor.iterations() > 0 && !RefreshMatrix(h, true)) {
        return M_.allFinite() ? Outcome::kLinearSolveFailure : Outcome::kNonFinite;
      }
      ++stats_.rhs_evaluations;
      if (!system_->HasConstantMassMatrix()) system_->MassMatrix(q_new_, &M_);
      system_->Forces(t, q_new_, v_new_, &F_);
      if (!F_.allFinite() || !q_new_.allFinite() || !v_new_.allFinite()) {
        return Outcome::kNonFinite;
      }
      r_.resize(nv + m);
      // Unscaled constraint residual of this iterate: part of the convergence test, so that the
      // accepted state meets its constraint level to newton_tol (not only small increments).
      double residual_c = 0.0;
      if (m > 0) {
        system_->ConstraintJacobian(t, q_new_, rows_, &G_);
        r_.head(nv).noalias() =
            M_ * vdot_new_ - F_ -
            ForceDirections(t, q_new_, v_new_, G_, &H_).transpose() * lambda_new_;
        if (f == Formulation::kIndex3) {
          residual_c = Index3ConstraintResidual(t, beta2, gamma2);
        } else {
          system_->ConstraintTimeDerivative(t, q_new_, rows_, &gt_);
          r_.tail(m).noalias() = (G_ * v_new_ + gt_) / gamma2;
          residual_c = r_.tail(m).lpNorm<Eigen::Infinity>() * gamma2;
        }
      } else {
        r_.noalias() = M_ * vdot_new_ - F_;
      }
      double residual_g = 0.0;
      if (ggl && m > 0) {
        PositionConstraintValues(t, q_new_, &g_);
        residual_g = g_.lpNorm<Eigen::Infinity>();
      }
      S_lu_.Solve(-r_, &x_);
      vdot_new_ += x_.head(nv);
      lambda_new_ += x_.tail(m);
      const double q_scale = 1.0 + q_new_.lpNorm<Eigen::Infinity>();
      const double v_scale = 1.0 + v_new_.lpNorm<Eigen::Infinity>();
      const double dv_norm = x_.head(nv).lpNorm<Eigen::Infinity>();
      double position_increment = beta2 * dv_norm / q_scale;
      double increment = std::max(position_increment, gamma2 * dv_norm / v_scale);
      if (options_.adaptive) {
        // Also below kNewtonErrorFraction of the error tolerance, so that tight rtol are met.
        e_ = gamma2 * x_.head(nv);
        increment = std::max(increment, tol * ErrorNorm(e_, v_, v_new_) /
                                            (kNewtonErrorFraction * ToleranceShare(h)));
      }
      UpdateState(h);
      if (ggl && m > 0) {
        // Position correction (eq. 24): [M −Gᵀ; G 0] (ΔU, Δν) = −(M U − Gᵀν, g(q̂ ⊕ U)) on the
        // position-level rows; velocity-level rows keep ν = 0 (their row of P is the identity).
        PositionConstraintValues(t, q_new_, &g_);
        r_.head(nv).noalias() = M_ * U_ - G_.transpose() * nu_;
        r_.tail(m) = g_;
        for (Eigen::Index k = 0; k < m; ++k) {
          if (velocity_level_[static_cast<std::size_t>(k)]) r_(nv + k) = nu_(k);
        }
        P_lu_.Solve(-r_, &x_);
        U_ += x_.head(nv);
        nu_ += x_.tail(m);
        position_increment =
            std::max(position_increment, x_.head(nv).lpNorm<Eigen::Infinity>() / q_scale);
        increment = std::max(increment, position_increment);
        UpdateState(h);
      }
      ++stats_.newton_iterations;
      const bool floor_reached = near_singular && monitor.iterations() > 0 &&
                                 std::max({residual_c, residual_g, position_increment}) <= tol;
      stall.Update(floor_reached, increment);
      progress = stall.stalled() ? NewtonProgress::kConverged
                                 : monitor.Update(std::max({increment, residual_c, residual_g}));
      // On the floor the monitor's divergence test sees the alternation, not a divergence: the
      // iteration goes on (within the budget) until the stall test decides.
      if (progress == NewtonProgress::kDiverging && stall.count() == 1 &&
          monitor.iterations() < options_.max_newton_iterations) {
        progress = NewtonProgress::kContinue;
      }
      if (progress == NewtonProgress::kConverged && m > 0 &&
          monitor.iterations() < options_.max_newton_iterations) {
        // The accepted state must meet its constraint levels to newton_tol: check it.
        double final_residual = 0.0;
        if (f != Formulation::kIndex2) {
          PositionConstraintValues(t, q_new_, &g_);
          final_residual = g_.lpNorm<Eigen::Infinity>();
        }
        if (f != Formulation::kIndex3) {
          system_->ConstraintJacobian(t, q_new_, rows_, &G_);
          system_->ConstraintTimeDerivative(t, q_new_, rows_, &gt_);
          final_residual = std::max(final_residual, (G_ * v_new_ + gt_).lpNorm<Eigen::Infinity>());
        } else if (has_velocity_rows_) {
          system_->ConstraintJacobian(t, q_new_, rows_, &G_);
          final_residual = std::max(final_residual, VelocityLevelResidual(t, nullptr, 1.0));
        }
        if (final_residual > tol) progress = NewtonProgress::kContinue;
      }
    }
    if (progress == NewtonProgress::kConverged) {
      if (monitor.slow()) jacobians_stale_ = true;
      return Outcome::kConverged;
    }
    jacobians_stale_ = true;  // retry once, with full Newton
  }
  jacobians_stale_ = true;
  return Outcome::kNewtonFailure;
}

double GeneralizedAlpha::VelocityLevelResidual(double t, Eigen::VectorXd* r, double scale) {
  const int nv = system_->nv();
  system_->ConstraintTimeDerivative(t, q_new_, rows_, &gt_);
  gt_.noalias() += G_ * v_new_;
  double residual = 0.0;
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (!velocity_level_[k]) continue;
    const auto i = static_cast<Eigen::Index>(k);
    residual = std::max(residual, std::abs(gt_(i)));
    if (r != nullptr) (*r)(nv + i) = gt_(i) / scale;
  }
  return residual;
}

double GeneralizedAlpha::Index3ConstraintResidual(double t, double beta2, double gamma2) {
  const auto m = static_cast<Eigen::Index>(rows_.size());
  PositionConstraintValues(t, q_new_, &g_);
  // Values at the round-off level of g are indistinguishable from 0: dividing them by
  // β'' = O(h²) would drive v̇ and v by O(ε‖q‖/h²) and O(ε‖q‖/h), which never settle at
  // the tiny steps that follow events (see kConstraintRoundoff).
  const double g_floor = kConstraintRoundoff * std::numeric_limits<double>::epsilon() *
                         (1.0 + q_new_.lpNorm<Eigen::Infinity>());
  g_ = (g_.array().abs() <= g_floor).select(0.0, g_);
  r_.tail(m) = g_ / beta2;
  if (!has_velocity_rows_) return r_.tail(m).lpNorm<Eigen::Infinity>() * beta2;
  // Velocity-level rows (no g): (G v + ∂g/∂t)/γ'', the index-2 residual (header).
  return std::max(g_.lpNorm<Eigen::Infinity>(), VelocityLevelResidual(t, &r_, gamma2));
}

void GeneralizedAlpha::PositionConstrainedDirections(
    double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::MatrixXd* G,
    Eigen::MatrixXd* MiHt,
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>* delassus) const {
  Eigen::MatrixXd M, H;
  system_->MassMatrix(q, &M);
  system_->ConstraintJacobian(t, q, position_rows_, G);
  if (non_ideal_) system_->ForceDirections(t, q, v, position_rows_, &H);
  const Eigen::LDLT<Eigen::MatrixXd> mass(M);
  *MiHt = mass.solve((non_ideal_ ? H : *G).transpose());
  // Rank-revealing: redundant rows (e.g. contacts of a block on two supports) leave G M⁻¹Hᵀ
  // singular; the minimum-norm solution then acts along the range only.
  delassus->compute(*G * *MiHt);
}

bool GeneralizedAlpha::ResyncAlgebraic() {
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus ds = dynamics_->Solve(t_, q_, v_, rows_, &vdot_, &lambda_);
  if (!ds.ok || !vdot_.allFinite() || !lambda_.allFinite()) return false;
  // a_{n+1} ≈ v̇(t_{n+1} + Δ_α h): target v̇₁(t_{n+1}) + Δ_α (v̇₁(t_{n+1}) − v̇₁(t_n)) (both
  // index-1 values, smooth), imposed on the constrained directions range(W) only:
  //   a ← a + W G (target − a),  W = M⁻¹Gᵀ (G M⁻¹Gᵀ)⁻¹,
  // so that the free directions keep the scheme's own recursion (and its damping).
  const double dalpha = par_.alpha_m - par_.alpha_f;
  e_ = vdot_ + dalpha * (vdot_ - vdot_prev_) - a_;
  Eigen::MatrixXd G, MiGt;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> delassus;
  PositionConstrainedDirections(t_, q_, v_, &G, &MiGt, &delassus);
  const Eigen::VectorXd correction = MiGt * delassus.solve(G * e_);
  if (!correction.allFinite()) return false;
  a_ += correction;
  return true;
}

double GeneralizedAlpha::NewtonTolerance(double h) const {
  if (options_.error_control != ErrorControl::kPerUnitStep) return options_.newton_tol;
  // Header, "Error per unit step": a fraction of the step's share of rtol, above round-off.
  return std::clamp(kNewtonErrorFraction * options_.rtol * ToleranceShare(h), kNewtonToleranceFloor,
                    options_.newton_tol);
}

double GeneralizedAlpha::ErrorEstimate(double h) {
  const int nq = system_->nq();
  const int nv = system_->nv();
  // eq. (29) in the tangent space. Positions only, as in the paper: a velocity estimate needs
  // v̇, which in the index-3 form carries the Newton residual of g divided by β'' = O(h²).
  e_ = dq_new_ - h * v_shift_ - h * h * (vdot_ / 3.0 + vdot_new_ / 6.0);
  if (nq == nv) return ErrorNorm(e_, q_, q_new_);
  y_old_.setZero(nv);  // no componentwise size for non-vector coordinates: atol only
  return ErrorNorm(e_, y_old_, y_old_);
}

StepStatus GeneralizedAlpha::DoStep(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  const bool adaptive = options_.adaptive;
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    // Keep the factorized matrix when the controller asks for a slightly larger step.
    if (adaptive && S_lu_.valid() && !jacobians_stale_ && h_matrix_ > 0 &&
        h >= kKeepMatrixLow * h_matrix_ && h <= kKeepMatrixHigh * h_matrix_) {
      h = h_matrix_;
    }
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);

    const Outcome outcome = Solve(h);
    if (outcome == Outcome::kNonFinite) return StepStatus::kNonFinite;
    if (outcome == Outcome::kLinearSolveFailure) return StepStatus::kLinearSolveFailure;
    if (outcome == Outcome::kNewtonFailure) {
      ++stats_.rejected_steps;
      if (!adaptive || h <= MinStep()) return StepStatus::kNewtonFailure;
      h = std::max(h * kNewtonFailureShrink, MinStep());
      rejected = true;
      continue;
    }
    double err = 0.0;
    if (adaptive) {
      err = ControlledError(ErrorEstimate(h), h);
      if (std::isnan(err)) return StepStatus::kNonFinite;
      if (err > 1.0) {
        ++stats_.rejected_steps;
        if (h <= MinStep()) return StepStatus::kStepSizeUnderflow;
        h = std::max(h * StepFactor(err, kEstimateOrder, /*after_rejection=*/true), MinStep());
        rejected = true;
        continue;
      }
    }
    const double t_new = last ? t_limit : t_ + h;

    // Dense-output data before the state moves (tangent displacement of the step end).
    const int nv = system_->nv();
    if (system_->nq() == nv) {
      d_q1_ = q_new_ - q_;
    } else {
      d_q1_ = dq_new_;
      if (options_.formulation == Formulation::kStabilizedIndex2) d_q1_ += U_;
    }
    d_v0_ = v_;
    d_v1_ = v_new_;
    d_a0_ = vdot_;
    d_a1_ = vdot_new_;
    h_dense_ = h;

    // Projection of the level the formulation does not enforce (MDOP5-style, Sec. 3.3).
    if (options_.project && !rows_.empty() &&
        options_.formulation != Formulation::kStabilizedIndex2) {
      engine::ProjectionOptions po;
      po.metric = options_.projection_metric;
      po.tolerance = options_.newton_tol;
      po.max_iterations = options_.max_newton_iterations;
      if (options_.formulation == Formulation::kIndex2) {
        PositionConstraintValues(t_new, q_new_, &g_);
        if (g_.lpNorm<Eigen::Infinity>() > options_.projection_tol) {
          const engine::ProjectionResult rp =
              engine::ProjectPositions(*system_, t_new, rows_, po, &q_new_);
          ++stats_.position_projections;
          stats_.newton_iterations += rp.iterations;
          if (!rp.converged) return StepStatus::kNewtonFailure;
        }
      }
      system_->ConstraintJacobian(t_new, q_new_, rows_, &G_);
      system_->ConstraintTimeDerivative(t_new, q_new_, rows_, &gt_);
      if ((G_ * v_new_ + gt_).lpNorm<Eigen::Infinity>() > options_.projection_tol) {
        const engine::ProjectionResult rv =
            engine::ProjectVelocities(*system_, t_new, q_new_, rows_, po, &v_new_);
        ++stats_.velocity_projections;
        if (!rv.converged) return StepStatus::kNewtonFailure;
      }
    }

    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    q_.swap(q_new_);
    v_prev_.swap(v_);
    v_.swap(v_new_);
    vdot_prev_.swap(vdot_);
    vdot_.swap(vdot_new_);
    a_.swap(a_new_);
    lambda_.swap(lambda_new_);
    h_last_ = h;
    if (resync_algebraic_ && !position_rows_.empty()) {
      // Index 3 (header, "Algebraic variables"): v̇, λ from the index-1 solve, a in the
      // constrained directions from them.
      if (!ResyncAlgebraic()) return StepStatus::kNonFinite;
    }

    if (adaptive) {
      double h_next = h * StepFactor(err, kEstimateOrder, rejected);
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void GeneralizedAlpha::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  const double h = h_dense_;
  const double th = (s - t_prev_) / h;
  const double t2 = th * th, t3 = t2 * th, t4 = t3 * th, t5 = t4 * th;
  // Quintic Hermite basis on [0, 1] (value, first and second derivative at each end); the value
  // at θ = 0 is the zero displacement, so H0 is not needed.
  const double h1 = th - 6 * t3 + 8 * t4 - 3 * t5;
  const double h2 = 0.5 * t2 - 1.5 * t3 + 1.5 * t4 - 0.5 * t5;
  const double h3 = 10 * t3 - 15 * t4 + 6 * t5;
  const double h4 = -4 * t3 + 7 * t4 - 3 * t5;
  const double h5 = 0.5 * t3 - t4 + 0.5 * t5;
  const double dh1 = 1 - 18 * t2 + 32 * t3 - 15 * t4;
  const double dh2 = th - 4.5 * t2 + 6 * t3 - 2.5 * t4;
  const double dh3 = 30 * t2 - 60 * t3 + 30 * t4;
  const double dh4 = -12 * t2 + 28 * t3 - 15 * t4;
  const double dh5 = 1.5 * t2 - 4 * t3 + 2.5 * t4;
  // *v holds the tangent displacement first.
  *v = (h1 * h) * d_v0_ + (h2 * h * h) * d_a0_ + h3 * d_q1_ + (h4 * h) * d_v1_ +
       (h5 * h * h) * d_a1_;
  system_->IntegratePosition(q_prev_, *v, 1.0, q);
  *v = dh1 * d_v0_ + (dh2 * h) * d_a0_ + (dh3 / h) * d_q1_ + dh4 * d_v1_ + (dh5 * h) * d_a1_;
}

}  // namespace saltus::integrators
