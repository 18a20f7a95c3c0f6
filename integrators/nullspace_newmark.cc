#include "integrators/nullspace_newmark.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/projection.h"
#include "integrators/newton.h"

namespace saltus::integrators {

namespace {

// Relative threshold on singular values of G below which a direction counts as redundant (as
// the rank tolerance of engine::ConstrainedDynamics).
constexpr double kRankTolerance = 1e-10;
// σ_min/σ_max of G₀ below which a failed step is solved again on the round-off floor (header).
constexpr double kNearSingular = 1e-3;

// Central-difference step for coordinates of size |x|∞: ∛ε·max(1, |x|∞) balances truncation
// O(δ²) against round-off O(ε/δ) (the same rule as engine::MechanicalSystem's tangent matrices).
double DifferenceStep(const Eigen::VectorXd& x) {
  const double scale = x.size() > 0 ? std::max(1.0, x.lpNorm<Eigen::Infinity>()) : 1.0;
  return std::cbrt(std::numeric_limits<double>::epsilon()) * scale;
}

double InfNorm(const Eigen::VectorXd& x) {
  return x.size() > 0 ? x.lpNorm<Eigen::Infinity>() : 0.0;
}

}  // namespace

NullspaceNewmark::NullspaceNewmark(const IntegratorOptions& options, NewmarkParameters parameters,
                                   std::string_view name)
    : Integrator(options), parameters_(parameters), name_(name) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator '" + std::string(name_) +
                                "' does not support formulation '" +
                                std::string(ToString(options.formulation)) + "'; supported: ggl");
  }
  if (!(parameters.beta > 0.0 && parameters.beta <= 0.5)) {
    throw std::invalid_argument("integrator '" + std::string(name_) +
                                "': Newmark beta must be in (0, 0.5], got " +
                                std::to_string(parameters.beta));
  }
  if (!(parameters.gamma >= 0.5 && parameters.gamma <= 1.0)) {
    throw std::invalid_argument("integrator '" + std::string(name_) +
                                "': Newmark gamma must be in [0.5, 1], got " +
                                std::to_string(parameters.gamma));
  }
}

NullspaceNewmark::~NullspaceNewmark() = default;

void NullspaceNewmark::DoReset() {
  const int nv = system_->nv();
  dynamics_ = std::make_unique<engine::ConstrainedDynamics>(*system_);
  a_.resize(nv);
  a_prev_.resize(nv);
  da_prev_.setZero(nv);
  have_da_prev_ = false;
  h_prev_ = 0;
  reset_status_ = StepStatus::kAccepted;
  ++stats_.rhs_evaluations;
  if (!q_.allFinite() || !v_.allFinite()) {
    reset_status_ = StepStatus::kNonFinite;
    return;
  }
  const engine::DynamicsStatus status = dynamics_->Solve(t_, q_, v_, rows_, &a_, &lambda_);
  if (!a_.allFinite() || (lambda_.size() > 0 && !lambda_.allFinite())) {
    reset_status_ = StepStatus::kNonFinite;
    return;
  }
  if (!status.ok) {
    reset_status_ = StepStatus::kLinearSolveFailure;
    return;
  }
  a_prev_ = a_;
  if (options_.h_init > 0) {
    h_ = options_.h_init;
    return;
  }
  // Hairer's starting step with a trial evaluation at t₀ + h₀: a state at rest whose forcing
  // starts from zero (a driver with Ω̇(0) = 0) has ‖v‖ = ‖a‖ = 0, and only the change of the
  // acceleration over the trial step tells how fast the solution moves.
  Eigen::VectorXd lambda;
  h_ = InitialStepEstimate(
      a_, 2, [&](double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* a) {
        ++stats_.rhs_evaluations;
        return dynamics_->Solve(t, q, v, rows_, a, &lambda).ok && a->allFinite();
      });
}

void NullspaceNewmark::TangentMatrices(double t1, const Eigen::VectorXd& x0) {
  const int nv = system_->nv();
  ++stats_.jacobian_evaluations;
  // K_t = ∂(M a₀)/∂q − ∂F/∂q − ∂(Gᵀλ)/∂q, C_t = −∂F/∂v (engine::MechanicalSystem's hooks).
  system_->ForceJacobians(t1, x0, v_new_, &K_t_, &C_t_);
  system_->MassMatrixProductJacobian(x0, a_new_, &K_tmp_);
  K_t_ += K_tmp_;
  const int m = static_cast<int>(rows_.size());
  if (m == 0) {
    Hd_.resize(0, nv);
    Hdd_.resize(0, nv);
    Gv_mat_.resize(0, nv);
    return;
  }
  if (lambda_.size() == m) {
    system_->ConstraintForceJacobian(t1, x0, rows_, lambda_, &K_tmp_);
    K_t_ -= K_tmp_;
  }
  // Ḣ = ∂(G v₀ + ∂g/∂t)/∂d, Ḧ = ∂(G a₀ + γ)/∂d (along x₀ ⊕ δ), Γ_v = ∂γ/∂v, central
  // differences.
  Hd_.resize(m, nv);
  Hdd_.resize(m, nv);
  Gv_mat_.resize(m, nv);
  const double eps_q = DifferenceStep(x0);
  const double eps_v = DifferenceStep(v_new_);
  Eigen::VectorXd e = Eigen::VectorXd::Zero(nv);
  for (int j = 0; j < nv; ++j) {
    e.setZero();
    e(j) = 1.0;
    for (int side = 0; side < 2; ++side) {
      const double eps = side == 0 ? eps_q : -eps_q;
      system_->IntegratePosition(x0, e, eps, &q_new_);
      system_->ConstraintJacobian(t1, q_new_, rows_, side == 0 ? &G_plus_ : &G_minus_);
      system_->ConstraintTimeDerivative(t1, q_new_, rows_, &g_t_);
      system_->ConstraintGamma(t1, q_new_, v_new_, rows_, &gamma_);
      Eigen::VectorXd& y = side == 0 ? y_plus_ : y_minus_;
      const Eigen::MatrixXd& Gs = side == 0 ? G_plus_ : G_minus_;
      y.resize(2 * m);
      y.head(m) = Gs * v_new_ + g_t_;
      y.tail(m) = Gs * a_new_ + gamma_;
    }
    Hd_.col(j) = (y_plus_.head(m) - y_minus_.head(m)) / (2 * eps_q);
    Hdd_.col(j) = (y_plus_.tail(m) - y_minus_.tail(m)) / (2 * eps_q);
    Eigen::VectorXd vp = v_new_, vm = v_new_;
    vp(j) += eps_v;
    vm(j) -= eps_v;
    system_->ConstraintGamma(t1, x0, vp, rows_, &y_plus_);
    system_->ConstraintGamma(t1, x0, vm, rows_, &y_minus_);
    Gv_mat_.col(j) = (y_plus_ - y_minus_) / (2 * eps_v);
  }
}

NullspaceNewmark::SolveResult NullspaceNewmark::SolveStep(double h, bool round_off_floor) {
  const int nv = system_->nv();
  const int m = static_cast<int>(rows_.size());
  const double t1 = t_ + h;
  const double beta = parameters_.beta;
  const double gam = parameters_.gamma;
  const double tol = options_.newton_tol;

  // Predictor: Taylor expansion with the last acceleration.
  d_ = h * v_ + (0.5 * h * h) * a_;
  v_new_ = v_ + h * a_;
  a_new_ = a_;
  system_->IntegratePosition(q_, d_, 1.0, &x_);
  if (!x_.allFinite() || !v_new_.allFinite()) return SolveResult::kNonFinite;
  TangentMatrices(t1, x_);
  if (!K_t_.allFinite() || !C_t_.allFinite() || !Hd_.allFinite() || !Hdd_.allFinite() ||
      !Gv_mat_.allFinite()) {
    return SolveResult::kNonFinite;
  }

  bool update_small = false;
  NewtonStall stall;  // non-contracting updates with positions converged (header)
  Eigen::VectorXd dp, vp, ap, alpha_pred, w_pred, D0, V0, A0, b, z, Dd, Dv, Da;
  Eigen::MatrixXd Xp, X1, X2, Dz, Vz, Az, S;
  for (int it = 0;; ++it) {
    system_->IntegratePosition(q_, d_, 1.0, &x_);
    system_->MassMatrix(x_, &M_);
    system_->Forces(t1, x_, v_new_, &F_);
    ++stats_.rhs_evaluations;
    if (!M_.allFinite() || !F_.allFinite()) return SolveResult::kNonFinite;
    double residual_g = 0, residual_v = 0, residual_a = 0;
    if (m > 0) {
      system_->ConstraintValues(t1, x_, rows_, &g_);
      system_->ConstraintJacobian(t1, x_, rows_, &G_);
      system_->ConstraintTimeDerivative(t1, x_, rows_, &g_t_);
      system_->ConstraintGamma(t1, x_, v_new_, rows_, &gamma_);
      r_v_ = G_ * v_new_ + g_t_;
      r_a_ = G_ * a_new_ + gamma_;
      if (!g_.allFinite() || !G_.allFinite() || !r_v_.allFinite() || !r_a_.allFinite()) {
        return SolveResult::kNonFinite;
      }
      residual_g = InfNorm(g_);
      residual_v = InfNorm(r_v_);
      residual_a = InfNorm(r_a_) / std::max(1.0, InfNorm(a_new_));
    }
    const bool residual_ok = residual_g <= tol && residual_v <= tol && residual_a <= tol;
    residuals_at_tol_ = residual_ok;
    if (it > 0 && (update_small || stall.stalled()) && residual_ok) return SolveResult::kConverged;
    if (it >= options_.max_newton_iterations) return SolveResult::kNotConverged;
    ++stats_.newton_iterations;

    // Null space N and pseudo-inverse G⁺ of G₀ from its SVD (minimum-norm particular solutions).
    if (m > 0) {
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(G_, Eigen::ComputeThinU | Eigen::ComputeFullV);
      const Eigen::VectorXd& s = svd.singularValues();
      int rank = 0;
      const double s_max = s.size() > 0 ? s(0) : 0.0;
      while (rank < s.size() && s(rank) > kRankTolerance * s_max) ++rank;
      sigma_ratio_ = rank > 0 ? s(rank - 1) / s_max : 1.0;
      const Eigen::MatrixXd& V = svd.matrixV();
      N_ = V.rightCols(nv - rank);
      Gpinv_ = V.leftCols(rank) * s.head(rank).cwiseInverse().asDiagonal() *
               svd.matrixU().leftCols(rank).transpose();
    } else {
      N_.setIdentity(nv, nv);
      Gpinv_.resize(nv, 0);
    }
    const Eigen::Index r = N_.cols();

    // Particular solutions and the α-dependent terms (eq. 34, 38–40, 45–49), in update form. On
    // the round-off floor retry (header), a particular solution below newton_tol relative is not
    // applied.
    if (m > 0) {
      dp = -(Gpinv_ * g_);
      const bool dp_floor = round_off_floor && InfNorm(dp) <= tol * std::max(1.0, InfNorm(q_));
      if (dp_floor) dp.setZero();
      vp = Gpinv_ * (-r_v_ - Hd_ * dp);
      const bool vp_floor = round_off_floor && InfNorm(vp) <= tol * std::max(1.0, InfNorm(v_new_));
      if (vp_floor) vp.setZero();
      Xp = -(Gpinv_ * (Hd_ * N_));
      ap = Gpinv_ * (-r_a_ - Hdd_ * dp - Gv_mat_ * vp);
      X1 = -(Gpinv_ * (Hdd_ * N_ + Gv_mat_ * Xp));
      X2 = -(Gpinv_ * (Gv_mat_ * N_));
    } else {
      dp.setZero(nv);
      vp.setZero(nv);
      ap.setZero(nv);
      Xp.setZero(nv, r);
      X1.setZero(nv, r);
      X2.setZero(nv, r);
    }
    // Newmark on the tangential coordinates (start of step projected, eq. 56–58):
    // α' = α_pred + h²β z,  α̇' = w_pred + hγ z,  z = the update of Nᵀ a.
    alpha_pred = N_.transpose() * (h * v_ + (h * h) * ((0.5 - beta) * a_ + beta * a_new_) - d_);
    w_pred = N_.transpose() * (v_ + h * ((1.0 - gam) * a_ + gam * a_new_) - v_new_);
    D0 = dp + N_ * alpha_pred;
    Dz = (h * h * beta) * N_;
    V0 = vp + N_ * w_pred + Xp * alpha_pred;
    Vz = (h * gam) * N_ + (h * h * beta) * Xp;
    A0 = ap + X1 * alpha_pred + X2 * w_pred;
    Az = N_ + (h * h * beta) * X1 + (h * gam) * X2;

    // Reduced linearized equilibrium (eq. 52): Nᵀ[M a₀ − F + M Δa + K_t Δd + C_t Δv] = 0.
    if (r > 0) {
      S = N_.transpose() * (M_ * Az + K_t_ * Dz + C_t_ * Vz);
      b = -(N_.transpose() * (M_ * (a_new_ + A0) - F_ + K_t_ * D0 + C_t_ * V0));
      Eigen::PartialPivLU<Eigen::MatrixXd> lu(S);
      ++stats_.factorizations;
      z = lu.solve(b);
      if (!z.allFinite()) return SolveResult::kNonFinite;
    } else {
      z.resize(0);
    }
    Dd = D0 + Dz * z;
    Dv = V0 + Vz * z;
    Da = A0 + Az * z;
    if (!Dd.allFinite() || !Dv.allFinite() || !Da.allFinite()) return SolveResult::kNonFinite;
    d_ += Dd;
    v_new_ += Dv;
    a_new_ += Da;

    const double update_dv = std::max(InfNorm(Dd) / std::max(1.0, InfNorm(q_)),
                                      InfNorm(Dv) / std::max(1.0, InfNorm(v_new_)));
    const double update = std::max(update_dv, InfNorm(Da) / std::max(1.0, InfNorm(a_new_)));
    // On the round-off floor the acceleration is determined only to ε/σ² (header): positions and
    // velocities decide.
    update_small = (round_off_floor ? update_dv : update) <= tol;
    const bool positions_converged = InfNorm(Dd) / std::max(1.0, InfNorm(q_)) <= tol;
    // Divergence: a growing update after the first iterations.
    if (it >= 2 && update > 2.0 * stall.previous() && update > 1e-3) {
      return SolveResult::kNotConverged;
    }
    stall.Update(positions_converged, update);
  }
}

double NullspaceNewmark::LocalError(double h) {
  const int nq = system_->nq();
  const int nv = system_->nv();
  const double beta = parameters_.beta;
  const double gam = parameters_.gamma;
  // Δa = a_{n+1} − a_n.
  const Eigen::VectorXd da = a_new_ - a_;
  err_.resize(2 * nv);
  // Positions: Zienkiewicz–Xie, h² (β − 1/6) Δa.
  err_.head(nv) = (h * h * (beta - 1.0 / 6.0)) * da;
  // Velocities: h (γ − ½) Δa (first order, zero for γ = ½) plus the trapezoidal term h³/12 ä,
  // ä ≈ (Δa/h − Δa_prev/h_prev)/(½(h + h_prev)); without a previous step (h/12) Δa, which
  // over-estimates by one order (safe).
  err_.tail(nv) = (h * (gam - 0.5)) * da;
  if (have_da_prev_ && h_prev_ > 0) {
    const Eigen::VectorXd add =
        (h * h * h / 12.0) * (da / h - da_prev_ / h_prev_) / (0.5 * (h + h_prev_));
    err_.tail(nv) += add;
  } else {
    err_.tail(nv) += (h / 12.0) * da;
  }
  if (floor_step_) {
    // Solved on the round-off floor: a_{n+1} is known only to ε/σ² in the directions G nearly
    // loses (header), and Δa with it; the estimate keeps its part along the manifold.
    system_->IntegratePosition(q_, d_, 1.0, &x_);
    RemoveConstrainedPartOfError(t_ + h, x_, &err_);
  }
  y_old_.resize(2 * nv);
  y_new_.resize(2 * nv);
  if (nq == nv) {
    y_old_.head(nv) = q_;
    system_->IntegratePosition(q_, d_, 1.0, &x_);
    y_new_.head(nv) = x_;
  } else {
    y_old_.head(nv).setConstant(InfNorm(q_));
    y_new_.head(nv).setConstant(InfNorm(q_));
  }
  y_old_.tail(nv) = v_;
  y_new_.tail(nv) = v_new_;
  return ErrorNorm(err_, y_old_, y_new_);
}

bool NullspaceNewmark::ProjectIfNeeded(double t) {
  if (!options_.project || rows_.empty()) return true;
  system_->ConstraintValues(t, q_new_, rows_, &g_);
  system_->ConstraintJacobian(t, q_new_, rows_, &G_);
  system_->ConstraintTimeDerivative(t, q_new_, rows_, &g_t_);
  r_v_ = G_ * v_new_ + g_t_;
  const double ptol = options_.projection_tol;
  if (InfNorm(g_) <= ptol && InfNorm(r_v_) <= ptol) return true;
  engine::ProjectionOptions po;
  po.metric = options_.projection_metric;
  po.tolerance = options_.newton_tol;
  po.max_iterations = options_.max_newton_iterations;
  const engine::ProjectionResult rp = engine::ProjectPositions(*system_, t, rows_, po, &q_new_);
  ++stats_.position_projections;
  stats_.newton_iterations += rp.iterations;
  if (!rp.converged) return false;
  const engine::ProjectionResult rv =
      engine::ProjectVelocities(*system_, t, q_new_, rows_, po, &v_new_);
  ++stats_.velocity_projections;
  return rv.converged;
}

void NullspaceNewmark::ComputeMultipliers(double t, const Eigen::VectorXd& q,
                                          const Eigen::VectorXd& v, const Eigen::VectorXd& a) {
  // Least-squares λ of Gᵀ λ = M a − F (minimum norm for redundant rows).
  const int m = static_cast<int>(rows_.size());
  if (m == 0) {
    lambda_.resize(0);
    return;
  }
  system_->MassMatrix(q, &M_);
  system_->Forces(t, q, v, &F_);
  system_->ConstraintJacobian(t, q, rows_, &G_);
  lambda_ = G_.transpose().completeOrthogonalDecomposition().solve(M_ * a - F_);
}

StepStatus NullspaceNewmark::DoStep(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  const bool adaptive = options_.adaptive;
  const int p_embedded = 2;  // local error O(h³): exponent 1/3 in eq. (30)
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);

    floor_step_ = false;
    SolveResult result = SolveStep(h, /*round_off_floor=*/false);
    double err = 0;
    if (result == SolveResult::kConverged && adaptive) err = ControlledError(LocalError(h), h);
    // Near a rank drop, a step that fails (Newton, or the error test) with every constraint
    // residual at newton_tol is solved again on the round-off floor (header).
    const bool failed = result == SolveResult::kNotConverged || err > 1.0;
    if (failed && !rows_.empty() && residuals_at_tol_ && sigma_ratio_ < kNearSingular) {
      ++round_off_retries_;
      floor_step_ = true;
      result = SolveStep(h, /*round_off_floor=*/true);
      err = result == SolveResult::kConverged && adaptive ? ControlledError(LocalError(h), h) : 0.0;
    }
    if (result == SolveResult::kNonFinite) return StepStatus::kNonFinite;
    if (result == SolveResult::kNotConverged) {
      ++stats_.rejected_steps;
      if (!adaptive || h <= MinStep()) return StepStatus::kNewtonFailure;
      h = std::max(0.25 * h, MinStep());
      rejected = true;
      continue;
    }
    if (adaptive) {
      if (std::isnan(err)) return StepStatus::kNonFinite;
      if (err > 1.0) {
        ++stats_.rejected_steps;
        if (h <= MinStep()) return StepStatus::kStepSizeUnderflow;
        h = std::max(h * StepFactor(err, p_embedded, /*after_rejection=*/true), MinStep());
        rejected = true;
        continue;
      }
    }

    const double t_new = last ? t_limit : t_ + h;
    system_->IntegratePosition(q_, d_, 1.0, &q_new_);
    if (!ProjectIfNeeded(t_new)) return StepStatus::kNewtonFailure;

    // Dense output data and the history of accelerations.
    d_dense_ = d_;
    da_prev_ = a_new_ - a_;
    have_da_prev_ = true;
    h_prev_ = h;
    a_prev_.swap(a_);
    a_ = a_new_;
    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    q_ = q_new_;
    v_prev_.swap(v_);
    v_ = v_new_;
    ComputeMultipliers(t_, q_, v_, a_);

    if (adaptive) {
      double h_next = h * StepFactor(err, p_embedded, rejected);
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void NullspaceNewmark::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  const double h = t_ - t_prev_;
  const double th = (s - t_prev_) / h;
  const double th2 = th * th, th3 = th2 * th;
  const double h00 = 2 * th3 - 3 * th2 + 1, h10 = th3 - 2 * th2 + th, h01 = -2 * th3 + 3 * th2,
               h11 = th3 - th2;
  // Cubic Hermite on the tangent increment (0 → d, slopes h v_n, h v_{n+1}) and on v.
  const Eigen::VectorXd D = (h10 * h) * v_prev_ + h01 * d_dense_ + (h11 * h) * v_;
  system_->IntegratePosition(q_prev_, D, 1.0, q);
  *v = h00 * v_prev_ + (h10 * h) * a_prev_ + h01 * v_ + (h11 * h) * a_;
}

}  // namespace saltus::integrators
