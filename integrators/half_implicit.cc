#include "integrators/half_implicit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/projection.h"

namespace saltus::integrators {

namespace {

// Newton residual target as a fraction of atol (see the header; Hairer & Wanner II, Sec. IV.8
// use κ ∈ [0.01, 0.1]).
constexpr double kNewtonErrorFraction = 0.03;
// Increments below this multiple of machine ε relative to the state are round-off: the
// iteration cannot do better.
constexpr double kRoundOff = 64.0 * std::numeric_limits<double>::epsilon();
// Contraction of ‖g‖ per quasi-Newton iteration above which eq. (10) replaces eq. (12).
constexpr double kSlowRate = 0.25;
// Step reduction after a Newton failure.
constexpr double kNewtonFailureShrink = 0.25;
// p in eq. (30): the local error estimate is O(h^(p+1)) = O(h²).
constexpr int kEstimateOrder = 1;

}  // namespace

HalfImplicit::HalfImplicit(const IntegratorOptions& options) : Integrator(options) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator 'half_implicit' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: index3");
  }
}

HalfImplicit::~HalfImplicit() = default;

bool HalfImplicit::EvaluateStart(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  ++stats_.rhs_evaluations;
  system_->Forces(t, q, v, &F_next_);
  if (!F_next_.allFinite()) return false;
  system_->MassMatrix(q, &M_next_);
  system_->ConstraintJacobian(t, q, rows_, &G_next_);
  if (non_ideal_) system_->ForceDirectionsFromJacobian(t, q, v, rows_, G_next_, &H_next_);
  return M_next_.allFinite() && G_next_.allFinite() && (!non_ideal_ || H_next_.allFinite());
}

void HalfImplicit::ConstraintResidual(double t_new, double h) {
  PositionConstraintValues(t_new, q_new_, &g_);
  if (!has_velocity_rows_) return;
  // Velocity-level rows: h (G(q_{n+1}) v_{n+1} + ∂g/∂t) = G(q_{n+1}) θ + h ∂g/∂t (header).
  system_->ConstraintJacobian(t_new, q_new_, rows_, &G_new_);
  system_->ConstraintTimeDerivative(t_new, q_new_, rows_, &gt_);
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (!velocity_level_[k]) continue;
    const auto i = static_cast<Eigen::Index>(k);
    g_(i) = G_new_.row(i).dot(theta_) + h * gt_(i);
  }
}

void HalfImplicit::DoReset() {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  reset_status_ = StepStatus::kAccepted;
  h_dense_ = 0.0;
  rank_drop_.Reset();
  lambda_hat_.setZero(m);
  zero_.setZero(nv);
  N_lu_.Invalidate();
  chord_ = v_;
  if (!EvaluateStart(t_, q_, chord_)) {
    reset_status_ = StepStatus::kNonFinite;
    return;
  }
  M_.swap(M_next_);
  F_.swap(F_next_);
  G_.swap(G_next_);
  H_.swap(H_next_);
  if (options_.h_init > 0) {
    h_ = options_.h_init;
  } else {
    // First guess of Hairer, Nørsett & Wanner (Solving ODEs I, Sec. II.4), 0.01 ‖v‖ / ‖v̇‖ in the
    // scaled norms with the unconstrained v̇ = M⁻¹F; the error control corrects it.
    const Eigen::VectorXd vdot = M_.ldlt().solve(F_);
    const double d0 = ErrorNorm(v_, v_, v_);
    const double d1 = ErrorNorm(vdot, v_, v_);
    const double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h_ = std::clamp(h0, MinStep(), options_.h_max);
  }
}

HalfImplicit::Outcome HalfImplicit::Solve(double h) {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double t_new = t_ + h;

  // N of eq. (12) from the time-t_n Jacobians, factorized once for this step (force directions
  // H_n = G_n for ideal forces).
  const Eigen::MatrixXd& H = non_ideal_ ? H_ : G_;
  N_.resize(nv + m, nv + m);
  N_.topLeftCorner(nv, nv) = M_;
  N_.topRightCorner(nv, m) = -H.transpose();
  N_.bottomLeftCorner(m, nv) = G_;
  N_.bottomRightCorner(m, m).setZero();
  ++stats_.jacobian_evaluations;
  ++stats_.factorizations;
  if (!N_lu_.Factorize(N_, m)) return Outcome::kLinearSolveFailure;
  rank_drop_.Record(N_lu_.pivot_ratio());
  const bool near_singular = m > 0 && rank_drop_.Near(N_lu_.pivot_ratio());
  NewtonStall stall;

  b_ = h * (M_ * chord_) + (h * h) * F_;
  // Predictor θ = h v_n; the first iteration solves the (linear) e₁ exactly with the λ̂ guess.
  theta_ = h * chord_;
  // v_{n+1} = θ/h carries the residual of g divided by h: the residual must be below κ·atol·h
  // as well (tiny steps, e.g. the last one before an event, then iterate to round-off).
  const double tol_g =
      std::min(options_.newton_tol, kNewtonErrorFraction * options_.atol * std::min(1.0, h));
  const double q_scale = 1.0 + q_.lpNorm<Eigen::Infinity>();
  r_.resize(nv + m);
  // Quasi-Newton with N of eq. (12) while it contracts fast; when ‖g‖ shrinks by less than
  // kSlowRate per iteration (large h ‖v‖ curvature: the rate is O(h)), the bottom row is
  // re-evaluated at the iterate, G(q_{n+1}^(k)), and N refactorized at every iteration: the
  // Newton matrix of eq. (10) (quadratic convergence up to the dexp factor of rotations).
  bool full_newton = false;
  double previous_g = std::numeric_limits<double>::infinity();
  const int budget = 2 * options_.max_newton_iterations;
  for (int it = 0; it <= budget; ++it) {
    system_->IntegratePosition(q_, theta_, 1.0, &q_new_);
    ++stats_.rhs_evaluations;
    ConstraintResidual(t_new, h);
    if (!q_new_.allFinite() || !g_.allFinite()) return Outcome::kNonFinite;
    // After one iteration e₁ (linear) vanishes up to round-off: only g is tested.
    const double residual_g = m > 0 ? g_.lpNorm<Eigen::Infinity>() : 0.0;
    if (it > 0 && residual_g <= tol_g) {
      v_new_ = theta_ / h;
      return Outcome::kConverged;
    }
    if (it == budget) break;
    if (it > 1 && !full_newton && residual_g > kSlowRate * previous_g) full_newton = true;
    if (it > 1 && residual_g > 2.0 * previous_g) break;  // diverging
    previous_g = residual_g;
    if (full_newton) {
      ++stats_.jacobian_evaluations;
      ++stats_.factorizations;
      system_->ConstraintJacobian(t_new, q_new_, rows_, &G_new_);
      N_.bottomLeftCorner(m, nv) = G_new_;
      if (!N_lu_.Factorize(N_, m)) return Outcome::kLinearSolveFailure;
    }
    r_.head(nv) = M_ * theta_ - H.transpose() * lambda_hat_ - b_;
    r_.tail(m) = g_;
    N_lu_.Solve(-r_, &x_);
    ++stats_.newton_iterations;
    theta_ += x_.head(nv);
    lambda_hat_ += x_.tail(m);
    // Near a rank drop of G (header): with g on its round-off floor the update stalls at the
    // round-off divided by σ_min; two non-contracting updates in a row count as reaching it.
    const double x_norm = x_.head(nv).lpNorm<Eigen::Infinity>();
    stall.Update(near_singular && it > 0 && residual_g <= kRoundOff * q_scale, x_norm);
    if (it > 0 && (x_norm <= kRoundOff * q_scale || stall.stalled())) {
      // Round-off reached: accept if g is as small as it can get.
      system_->IntegratePosition(q_, theta_, 1.0, &q_new_);
      ConstraintResidual(t_new, h);
      if (m == 0 || g_.lpNorm<Eigen::Infinity>() <= std::max(tol_g, kRoundOff * q_scale)) {
        v_new_ = theta_ / h;
        return Outcome::kConverged;
      }
    }
  }
  return Outcome::kNewtonFailure;
}

void HalfImplicit::CorrectVelocity() {
  const int nv = system_->nv();
  const auto m = static_cast<Eigen::Index>(rows_.size());
  const double tol = std::min(options_.newton_tol, 0.1 * options_.projection_tol);
  r_.resize(nv + m);
  r_.head(nv).setZero();
  for (int it = 0; it < options_.max_newton_iterations; ++it) {
    // G_next_ and gt_ are those at (t_new, q_new_) (DoStep).
    r_.tail(m) = -(G_next_ * v_new_ + gt_);
    if (r_.tail(m).lpNorm<Eigen::Infinity>() <= tol) return;
    N_lu_.Solve(r_, &x_);
    v_new_ += x_.head(nv);
  }
}

StepStatus HalfImplicit::DoStep(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  const bool adaptive = options_.adaptive;
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  const Eigen::VectorXd lambda_hat_start = lambda_hat_;
  const double h_start_guess = h_dense_ > 0 ? h_dense_ : 0.0;
  for (;;) {
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);
    // Initial guess: the previous step's λ̂ = h² λ rescaled to this step.
    lambda_hat_ = lambda_hat_start;
    if (h_start_guess > 0) lambda_hat_ *= (h / h_start_guess) * (h / h_start_guess);

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
      // e_q = (h/2)(v_{n+1} − v_n) in the tangent space (see the header).
      e_ = 0.5 * (theta_ - h * chord_);
      if (system_->nq() == system_->nv()) {
        err = ErrorNorm(e_, q_, q_new_);
      } else {
        err = ErrorNorm(e_, zero_, zero_);  // no componentwise size for non-vector coordinates
      }
      err = ControlledError(err, h);
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

    // Velocity level (MDOP5-style): the chord velocity has G v = O(h).
    d_q1_ = system_->nq() == system_->nv() ? Eigen::VectorXd(q_new_ - q_) : theta_;
    if (options_.project && !rows_.empty()) {
      system_->ConstraintJacobian(t_new, q_new_, rows_, &G_next_);
      system_->ConstraintTimeDerivative(t_new, q_new_, rows_, &gt_);
      if ((G_next_ * v_new_ + gt_).lpNorm<Eigen::Infinity>() > options_.projection_tol) {
        engine::ProjectionOptions po;
        po.metric = options_.projection_metric;
        po.tolerance = options_.newton_tol;
        po.max_iterations = options_.max_newton_iterations;
        const engine::ProjectionResult rv =
            engine::ProjectVelocities(*system_, t_new, q_new_, rows_, po, &v_new_);
        ++stats_.velocity_projections;
        if (!rv.converged) return StepStatus::kNewtonFailure;
      }
    }
    // Start data of the next step (at the chord velocity, the scheme's state); NaN forces at the
    // new state reject it.
    if (!EvaluateStart(t_new, q_new_, v_new_)) return StepStatus::kNonFinite;
    chord_prev_.swap(chord_);
    chord_ = v_new_;
    if (options_.project && !rows_.empty()) CorrectVelocity();
    M_.swap(M_next_);
    F_.swap(F_next_);
    G_.swap(G_next_);
    H_.swap(H_next_);

    d_v0_ = v_;
    d_v1_ = v_new_;
    h_dense_ = h;
    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    q_.swap(q_new_);
    v_prev_.swap(v_);
    v_.swap(v_new_);

    if (adaptive) {
      double h_next = h * StepFactor(err, kEstimateOrder, rejected);
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void HalfImplicit::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  // The scheme's own continuous extension (see the header): a step of size σ = s − t_n,
  // v(σ) = v_n + (σ/h)(v_{n+1} − v_n), θ(σ) = σ v_n + (σ/h)² (θ_{n+1} − h v_n).
  const double h = h_dense_;
  const double th = (s - t_prev_) / h;
  *v = (th * h) * chord_prev_ + (th * th) * (d_q1_ - h * chord_prev_);  // tangent displacement
  system_->IntegratePosition(q_prev_, *v, 1.0, q);
  *v = d_v0_ + th * (d_v1_ - d_v0_);
}

}  // namespace saltus::integrators
