#include "integrators/phem56.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "engine/constrained_dynamics.h"
#include "engine/projection.h"

namespace saltus::integrators {

namespace tab = phem56_tableau;

Phem56::Phem56(const IntegratorOptions& options) : Integrator(options) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator 'phem56' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: index2");
  }
}

Phem56::~Phem56() = default;

void Phem56::set_rank_tolerance(double tol) {
  if (!(tol > 0.0 && tol < 1.0)) {
    throw std::invalid_argument("Phem56: rank tolerance must be in (0, 1), got " +
                                std::to_string(tol));
  }
  rank_tolerance_ = tol;
  if (stage_) stage_->set_rank_tolerance(tol);
}

void Phem56::DoReset() {
  const int nq = system_->nq();
  const int nv = system_->nv();
  stage_ = std::make_unique<HalfExplicitStage>(*system_);
  stage_->set_rank_tolerance(rank_tolerance_);
  stage_->set_residual_tolerance(options_.newton_tol);
  stage_->set_select_tolerance(std::clamp(options_.newton_tol, 1e-14, 1e-2));
  for (int i = 0; i < tab::kStages; ++i) {
    A_[i].resize(nv);
    K_[i].resize(nv);
  }
  err_.resize(nq + nv);
  y_old_.resize(nq + nv);
  y_new_.resize(nq + nv);
  h_dense_ = 0;
  factorizations_seen_ = 0;
  failure_message_.clear();
  reset_status_ = StepStatus::kAccepted;
  reference_selection_ratio_ = 0.0;

  // Stage 1 needs the acceleration at (t_n, q_n, v_n): the index-1 solve (minimum-norm for
  // redundant rows) after every Reset, then the FSAL stage 7 of each accepted step.
  engine::ConstrainedDynamics dynamics(*system_);
  dynamics.set_rank_tolerance(std::max(rank_tolerance_, 1e-12));
  Eigen::VectorXd lambda;
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus st = dynamics.Solve(t_, q_, v_, rows_, &a_, &lambda);
  // With inconsistent acceleration constraints (a rank change at t_n) the least-squares v̇ is
  // used: the stage systems then decide (and reject, naming the rows, if no step resolves it).
  if (a_.size() != v_.size() || !a_.allFinite()) {
    failure_message_ = "phem56: the initial acceleration (index-1 solve) is not finite at t = " +
                       std::to_string(t_) + " (singular mass matrix?)";
    reset_status_ = StepStatus::kNonFinite;
    h_ = std::max(MinStep(), 1e-6);
    return;
  }
  (void)st;
  if (options_.h_init > 0) {
    h_ = options_.h_init;
    return;
  }
  h_ = InitialStepEstimate(
      a_, 5, [&](double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* a) {
        ++stats_.rhs_evaluations;
        return dynamics.Solve(t, q, v, rows_, a, &lambda).ok && a->allFinite();
      });
}

StageStatus Phem56::Stages(double h) {
  // Consistent rank reduction: the independent rows at q_n, used in every stage of the step.
  stage_->SelectRows(t_, q_, rows_);
  A_[0] = a_;
  K_[0] = v_;  // Θ_1 = 0: dexp⁻¹₀ = I
  for (int i = 1; i < tab::kStages; ++i) {
    const auto& a = tab::kA[i];
    const auto& ahat = tab::kAHat[i];
    // Explicit point (Q_i, V_i); row 6 of a is b, i.e. the step's end (q_{n+1}, v_{n+1}).
    if (i < tab::kStages - 1) {
      sum_ = a[0] * K_[0];
      for (int j = 1; j < i; ++j) sum_ += a[j] * K_[j];
      system_->IntegratePosition(q_, sum_, h, &Q_);
      theta_ = h * sum_;
      V_ = v_;
      for (int j = 0; j < i; ++j) {
        if (a[j] != 0.0) V_ += (h * a[j]) * A_[j];
      }
    } else {
      Q_ = q_new_;
      V_ = v_new_;
      sum_ = tab::kAHat[5][0] * K_[0];
      for (int j = 1; j < 6; ++j) sum_ += tab::kAHat[5][j] * K_[j];
      theta_ = h * sum_;
    }
    system_->DexpInv(theta_, V_, &K_[i]);
    ++stats_.rhs_evaluations;
    StageStatus s = stage_->Prepare(t_ + tab::kC[i] * h, Q_, V_, rows_);
    if (s != StageStatus::kOk) {
      failure_stage_ = i;
      return s;
    }
    // Constraint point Q̂_i = q_n ⊕ h Σ_{j≤i} â_ij K_j and ṽ_i = v_n + h Σ_{j<i} â_ij V̇_j.
    sum_ = ahat[0] * K_[0];
    for (int j = 1; j <= i; ++j) sum_ += ahat[j] * K_[j];
    system_->IntegratePosition(q_, sum_, h, &Qhat_);
    v_tilde_ = v_;
    for (int j = 0; j < i; ++j) {
      if (ahat[j] != 0.0) v_tilde_ += (h * ahat[j]) * A_[j];
    }
    Eigen::VectorXd* v_out = (i == 5) ? &v_new_ : &v_hat_;
    s = stage_->Solve(t_ + tab::kCHat[i] * h, Qhat_, rows_, v_tilde_, h * ahat[i], &A_[i], v_out);
    if (s != StageStatus::kOk) {
      failure_stage_ = i;
      return s;
    }
    if (i == 5) q_new_ = Qhat_;
  }
  a_new_ = A_[tab::kStages - 1];
  return StageStatus::kOk;
}

double Phem56::LocalError(double h) {
  const Eigen::Index nq = q_.size();
  const Eigen::Index nv = v_.size();
  // Embedded order-4 solution, its velocity projected once onto the constraint at q̂.
  sum_ = tab::kBHat[0] * K_[0];
  v_hat_ = v_;
  for (int j = 0; j < tab::kStages; ++j) {
    if (j > 0) sum_ += tab::kBHat[j] * K_[j];
    if (tab::kBHat[j] != 0.0) v_hat_ += (h * tab::kBHat[j]) * A_[j];
  }
  system_->IntegratePosition(q_, sum_, h, &q_hat_);
  ++stats_.rhs_evaluations;
  const StageStatus s = stage_->Solve(t_ + h, q_hat_, rows_, v_hat_, 0.0, nullptr, &v_proj_);
  if (s == StageStatus::kNonFinite) return std::nan("");
  err_.head(nq) = q_new_ - q_hat_;
  err_.tail(nv) = v_new_ - v_proj_;
  if (NearSingular()) RemoveConstrainedPartOfError(t_ + h, q_new_, &err_);
  y_old_.head(nq) = q_;
  y_old_.tail(nv) = v_;
  y_new_.head(nq) = q_new_;
  y_new_.tail(nv) = v_new_;
  return ErrorNorm(err_, y_old_, y_new_);
}

bool Phem56::ProjectIfNeeded(double t, bool* projected) {
  *projected = false;
  if (rows_.empty()) return true;
  PositionConstraintValues(t, q_new_, &g_);
  const double violation = g_.lpNorm<Eigen::Infinity>();
  max_position_violation_ = std::max(max_position_violation_, violation);
  // Near a singular configuration (header): every step to the round-off floor.
  if (options_.project && NearSingular() && ProjectToRoundOff(t, rows_, &q_new_, &v_new_)) {
    *projected = true;
    return true;
  }
  if (!options_.project || violation <= options_.projection_tol) return true;
  if (!ProjectOntoConstraints(t, std::max(rank_tolerance_, 1e-10), &q_new_, &v_new_)) return false;
  *projected = true;
  return true;
}

void Phem56::BuildDenseOutput(double h) {
  // Hermite data (phem56.f, POL4) in tangent coordinates: Θ(0) = 0, Θ'(0) = h K_1, Θ'(1) = h K_7,
  // Θ(19/30) = h Σ b̄_j K_j, Θ(1) = h Σ b_j K_j (b = row 6 of â); the same for v.
  dk0_ = h * K_[0];
  dk1_ = h * K_[6];
  dv0_ = h * A_[0];
  dv1_ = h * A_[6];
  dtheta_d_ = tab::kBDense[0] * K_[0];
  dv_d_ = tab::kBDense[0] * A_[0];
  dtheta_1_ = tab::kAHat[5][0] * K_[0];
  for (int j = 1; j < tab::kStages; ++j) {
    dtheta_d_ += tab::kBDense[j] * K_[j];
    dv_d_ += tab::kBDense[j] * A_[j];
    if (j < 6) dtheta_1_ += tab::kAHat[5][j] * K_[j];
  }
  dtheta_d_ *= h;
  dv_d_ *= h;
  dtheta_1_ *= h;
  dv_1_ = v_new_ - v_;
  q_end_ = q_new_;
  v_end_ = v_new_;
  h_dense_ = h;
}

StepStatus Phem56::StageFailure(StageStatus s, double h, int stage) {
  return DescribeStageFailure(*stage_, s, "phem56", stage, t_, h, *system_, rows_.size(),
                              &failure_message_);
}

StepStatus Phem56::DoStep(double t_limit) {
  const StepStatus status = AttemptSteps(t_limit);
  const long factorizations = stage_->factorizations();
  stats_.factorizations += factorizations - factorizations_seen_;
  factorizations_seen_ = factorizations;
  return status;
}

StepStatus Phem56::AttemptSteps(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  failure_message_.clear();
  const bool adaptive = options_.adaptive;
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);

    failure_stage_ = 0;
    const StageStatus s = Stages(h);
    if (s == StageStatus::kInconsistent) {
      // A rank change inside the step: retry smaller (Haddouni et al., Sec. 4.5).
      ++stats_.rejected_steps;
      ++stage_rejections_;
      if (!adaptive || h <= MinStep()) return StageFailure(s, h, failure_stage_);
      h = std::max(0.25 * h, MinStep());
      rejected = true;
      continue;
    }
    if (s != StageStatus::kOk) return StageFailure(s, h, failure_stage_);

    double err = 0;
    if (adaptive) {
      err = ControlledError(LocalError(h), h);
      if (std::isnan(err)) return StepStatus::kNonFinite;
      if (err > 1.0) {
        ++stats_.rejected_steps;
        if (h <= MinStep()) return StepStatus::kStepSizeUnderflow;
        h = std::max(h * StepFactor(err, tab::kEstimateOrder, /*after_rejection=*/true), MinStep());
        rejected = true;
        continue;
      }
    }
    BuildDenseOutput(h);

    const double t_new = last ? t_limit : t_ + h;
    bool projected = false;
    if (!ProjectIfNeeded(t_new, &projected)) {
      h_dense_ = 0;
      failure_message_ =
          "phem56: position projection (eq. 35) did not converge at t = " + std::to_string(t_new);
      return StepStatus::kNewtonFailure;
    }

    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    reference_selection_ratio_ =
        std::max(reference_selection_ratio_, stage_->selection_pivot_ratio());
    q_.swap(q_new_);
    v_prev_.swap(v_);
    v_.swap(v_new_);
    a_ = a_new_;

    if (adaptive) {
      double h_next = h * StepFactor(err, tab::kEstimateOrder, rejected);
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void Phem56::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  const double x = (s - t_prev_) / h_dense_;
  if (x <= 0.0) {
    *q = q_prev_;
    *v = v_prev_;
    return;
  }
  if (x >= 1.0) {
    *q = q_end_;
    *v = v_end_;
    return;
  }
  // Quartic Hermite through y(0), y'(0), y(θ_D), y(1), y'(1) (phem56.f, COPOL4), derivatives per
  // unit θ (the data carry the factor h).
  constexpr double T = tab::kThetaD;
  const double xm1 = x - 1.0;
  const double fac = x * xm1;
  const double tmx = T - x;
  const double cp1 = fac * xm1 * tmx / T;
  const double cp2 = -fac * x * tmx / (1.0 - T);
  const double cp3 = fac * fac / (T * T * (1.0 - T) * (1.0 - T));
  const double cp4 = x * x *
                     (T * (3.0 * T - 4.0) + x * ((4.0 - 2.0 * T * T) + x * (2.0 * T - 3.0))) /
                     ((1.0 - T) * (1.0 - T));
  dq_ = cp1 * dk0_ + cp2 * dk1_ + cp3 * dtheta_d_ + cp4 * dtheta_1_;
  system_->IntegratePosition(q_prev_, dq_, 1.0, q);
  *v = v_prev_ + cp1 * dv0_ + cp2 * dv1_ + cp3 * dv_d_ + cp4 * dv_1_;
}

}  // namespace saltus::integrators
