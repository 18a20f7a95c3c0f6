#include "integrators/hem5.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "engine/projection.h"

namespace saltus::integrators {

namespace tab = hem5_tableau;

namespace {

// Stages (0-based) whose V and V̇ enter the dense output, in the column order of kD (the last
// column, stage 10, is handled separately).
constexpr std::array<int, 5> kDenseStageIndex = {3, 4, 5, 6, 7};

}  // namespace

Hem5::Hem5(const IntegratorOptions& options) : Integrator(options) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator 'hem5' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: index2");
  }
}

Hem5::~Hem5() = default;

void Hem5::set_rank_tolerance(double tol) {
  if (!(tol > 0.0 && tol < 1.0)) {
    throw std::invalid_argument("Hem5: rank tolerance must be in (0, 1), got " +
                                std::to_string(tol));
  }
  rank_tolerance_ = tol;
  if (stage_) stage_->set_rank_tolerance(tol);
  if (dense_stage_) dense_stage_->set_rank_tolerance(tol);
}

void Hem5::DoReset() {
  const int nq = system_->nq();
  const int nv = system_->nv();
  stage_ = std::make_unique<HalfExplicitStage>(*system_);
  dense_stage_ = std::make_unique<HalfExplicitStage>(*system_);
  for (HalfExplicitStage* s : {stage_.get(), dense_stage_.get()}) {
    s->set_rank_tolerance(rank_tolerance_);
    s->set_residual_tolerance(options_.newton_tol);
    // Rows dependent at q_n to the constraint tolerance count as redundant (consistent reduction).
    s->set_select_tolerance(std::clamp(options_.newton_tol, 1e-14, 1e-2));
  }
  for (int i = 0; i <= tab::kStages; ++i) {
    Q_[i].resize(nq);
    V_[i].resize(nv);
    K_[i].resize(nv);
  }
  for (int i = 0; i < tab::kStages; ++i) A_[i].resize(nv);
  for (int k = 0; k < 4; ++k) {
    rq_[k].resize(nv);
    rv_[k].resize(nv);
  }
  err_.resize(nq + nv);
  y_old_.resize(nq + nv);
  y_new_.resize(nq + nv);
  h_dense_ = 0;
  dense_pending_ = dense_ready_ = false;
  factorizations_seen_ = 0;
  failure_message_.clear();

  reset_status_ = StepStatus::kAccepted;
  reference_selection_ratio_ = 0.0;
  if (options_.h_init > 0) {
    h_ = options_.h_init;
    return;
  }
  // Automatic initial step from the index-1 acceleration at the start.
  engine::ConstrainedDynamics dynamics(*system_);
  Eigen::VectorXd a0, lambda;
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus st = dynamics.Solve(t_, q_, v_, rows_, &a0, &lambda);
  if (!st.ok || !a0.allFinite()) {
    // Reported by the next Step (the first stage fails the same way); a small safe guess here.
    h_ = std::max(MinStep(), 1e-6);
    return;
  }
  h_ = InitialStep(a0);
}

double Hem5::InitialStep(const Eigen::VectorXd& a0) {
  engine::ConstrainedDynamics dynamics(*system_);
  Eigen::VectorXd lambda;
  return InitialStepEstimate(
      a0, 5, [&](double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* a) {
        ++stats_.rhs_evaluations;
        return dynamics.Solve(t, q, v, rows_, a, &lambda).ok && a->allFinite();
      });
}

StageStatus Hem5::Stages(double h) {
  Q_[0] = q_;
  V_[0] = v_;
  K_[0] = v_;  // Θ_1 = 0: dexp⁻¹₀ = I
  // Consistent rank reduction: the independent rows at q_n, used in every stage of the step.
  stage_->SelectRows(t_, q_, rows_);
  for (int i = 0; i < tab::kStages; ++i) {
    const auto& next = tab::kA[i + 1];  // row kStages is b: the solution
    ++stats_.rhs_evaluations;
    StageStatus s = stage_->Prepare(t_ + tab::kC[i] * h, Q_[i], V_[i], rows_);
    if (s != StageStatus::kOk) {
      failure_stage_ = i;
      return s;
    }
    // Q_{i+1} = q_n ⊕ Θ_{i+1},  Θ_{i+1} = h Σ_{j≤i} a_{i+1,j} K_j.
    sum_v_ = next[0] * K_[0];
    for (int j = 1; j <= i; ++j) sum_v_ += next[j] * K_[j];
    system_->IntegratePosition(q_, sum_v_, h, &Q_[i + 1]);
    theta_ = h * sum_v_;
    // ṽ = v_n + h Σ_{j<i} a_{i+1,j} V̇_j.
    v_tilde_ = v_;
    for (int j = 0; j < i; ++j) {
      if (next[j] != 0.0) v_tilde_ += (h * next[j]) * A_[j];
    }
    s = stage_->Solve(t_ + tab::kC[i + 1] * h, Q_[i + 1], rows_, v_tilde_, h * next[i], &A_[i],
                      &V_[i + 1]);
    if (s != StageStatus::kOk) {
      failure_stage_ = i;
      return s;
    }
    // K_{i+1} = dexp⁻¹_{Θ_{i+1}}(V_{i+1}) (= V_{i+1} in vector spaces).
    system_->DexpInv(theta_, V_[i + 1], &K_[i + 1]);
  }
  q_new_ = Q_[tab::kStages];
  v_new_ = V_[tab::kStages];
  return StageStatus::kOk;
}

StageStatus Hem5::DenseStage() {
  // Stage 9 is the step's end (q_{n+1}, v_{n+1}, unprojected: q_end_, v_end_); stage 10 at
  // c = 1/20. The step's start is t_prev_, q_prev_, v_prev_; its stages K_, A_ are still those of
  // the step (lazy: before the next Stages).
  const double h = h_dense_;
  ++stats_.rhs_evaluations;
  StageStatus s = stage_->Prepare(t_prev_ + h, q_end_, v_end_, rows_);
  if (s != StageStatus::kOk) return s;
  // Θ₁₀ = h (a₁₀,₆ K_6 + a₁₀,₇ K_7 + a₁₀,₉ K_9), K_9 = dexp⁻¹ of the step's end (K_[kStages]).
  sum_v_ = tab::kA10_6 * K_[5] + tab::kA10_7 * K_[6] + tab::kA10_9 * K_[tab::kStages];
  system_->IntegratePosition(q_prev_, sum_v_, h, &Q10_);
  theta_ = h * sum_v_;
  v_tilde_ = v_prev_ + (h * tab::kA10_6) * A_[5] + (h * tab::kA10_7) * A_[6];
  s = stage_->Solve(t_prev_ + tab::kC10 * h, Q10_, rows_, v_tilde_, h * tab::kA10_9, &A9_, &V10_);
  if (s != StageStatus::kOk) return s;
  system_->DexpInv(theta_, V10_, &K10_);
  // M, F, G at stage 10, kept for the velocity interpolant, with the step's row selection.
  dense_stage_->CopySelection(*stage_);
  return dense_stage_->Prepare(t_prev_ + tab::kC10 * h, Q10_, V10_, rows_);
}

bool Hem5::EnsureDenseOutput() const {
  if (!dense_pending_) return dense_ready_;
  // A cache of the accepted step (header, "Lazy dense output"): computing it changes nothing the
  // caller can observe besides stats().rhs_evaluations and stats().factorizations.
  auto* self = const_cast<Hem5*>(this);
  self->dense_pending_ = false;
  self->dense_ready_ = self->DenseStage() == StageStatus::kOk;
  self->BuildDenseOutput();
  return dense_ready_;
}

double Hem5::LocalError(double h) {
  const Eigen::Index nq = q_.size();
  const Eigen::Index nv = v_.size();
  // e₁: the solution against stage 8.
  err_.head(nq) = q_new_ - Q_[7];
  err_.tail(nv) = v_new_ - V_[7];
  const bool filter = NearSingular();
  if (filter) RemoveConstrainedPartOfError(t_ + h, q_new_, &err_);
  y_old_.head(nq) = q_;
  y_old_.tail(nv) = v_;
  y_new_.head(nq) = q_new_;
  y_new_.tail(nv) = v_new_;
  const double e1 = ErrorNorm(err_, y_old_, y_new_);
  // e₂: the solution against y_n + h (5/2 K_7 − 3/2 K_8).
  sum_v_ = 2.5 * K_[6] - 1.5 * K_[7];
  system_->IntegratePosition(q_, sum_v_, h, &q_tmp_);
  err_.head(nq) = q_new_ - q_tmp_;
  err_.tail(nv) = v_new_ - v_ - h * (2.5 * A_[6] - 1.5 * A_[7]);
  if (filter) RemoveConstrainedPartOfError(t_ + h, q_new_, &err_);
  const double e2 = ErrorNorm(err_, y_old_, y_new_);
  const double denominator = e1 + 0.01 * e2;
  if (std::isnan(denominator)) return denominator;
  if (denominator <= 0.0) return 0.0;
  return e1 * e1 / denominator;
}

bool Hem5::ProjectIfNeeded(double t, bool* projected) {
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

void Hem5::BuildDenseOutput() {
  const double h = h_dense_;
  for (int k = 0; k < 4; ++k) {
    // Without stage 10 (its solve failed: header) the interpolant keeps the other terms.
    if (dense_ready_) {
      rq_[k] = tab::kD[k][tab::kDenseStages - 1] * K10_;
    } else {
      rq_[k].setZero();
    }
    rv_[k].setZero();
    for (int c = 0; c < 5; ++c) {
      const int j = kDenseStageIndex[static_cast<std::size_t>(c)];
      rq_[k] += tab::kD[k][c] * K_[j];
      rv_[k] += tab::kD[k][c] * A_[j];
    }
    rq_[k] *= h;
    rv_[k] *= h;
  }
  // Make Δ(1) equal the step's own increment h Σ b_j K_j (the printed D differ from b by 3e-14).
  sum_v_ = tab::kA[tab::kStages][0] * K_[0];
  for (int j = 1; j < tab::kStages; ++j) sum_v_ += tab::kA[tab::kStages][j] * K_[j];
  rq_[0] += h * sum_v_ - (rq_[0] + rq_[1] + rq_[2] + rq_[3]);
}

StepStatus Hem5::StageFailure(StageStatus s, double h, int stage) {
  return DescribeStageFailure(*stage_, s, "hem5", stage, t_, h, *system_, rows_.size(),
                              &failure_message_);
}

StepStatus Hem5::DoStep(double t_limit) {
  const StepStatus status = AttemptSteps(t_limit);
  const long factorizations = stage_->factorizations() + dense_stage_->factorizations();
  stats_.factorizations += factorizations - factorizations_seen_;
  factorizations_seen_ = factorizations;
  return status;
}

StepStatus Hem5::AttemptSteps(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  failure_message_.clear();
  if (dense_pending_) {
    // The stages below overwrite the last step's: should this Step fail, the last step's dense
    // output is the one without stage 10 (header, "Lazy dense output").
    dense_pending_ = dense_ready_ = false;
    BuildDenseOutput();
  }
  const bool adaptive = options_.adaptive;
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    const double h_wanted = h;
    const bool last = LandOnLimit(t_limit, &h);

    failure_stage_ = 0;
    StageStatus s = Stages(h);
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

    // The dense output's end points (unprojected) and step; its stage 10 waits for the first
    // interpolation strictly inside the step (header, "Lazy dense output").
    q_end_ = q_new_;
    v_end_ = v_new_;
    h_dense_ = h;
    dense_pending_ = true;
    dense_ready_ = false;

    const double t_new = last ? t_limit : t_ + h;
    bool projected = false;
    if (!ProjectIfNeeded(t_new, &projected)) {
      h_dense_ = 0;
      dense_pending_ = false;
      failure_message_ =
          "hem5: position projection (eq. 35) did not converge at t = " + std::to_string(t_new);
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

    if (adaptive) {
      double h_next = h * StepFactor(err, tab::kEstimateOrder, rejected);
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void Hem5::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  // θ = 1 exactly at the step end ((t − t_prev)/h may be 1 − ulp when t = t_prev + h rounds), so
  // that the step's ends never need stage 10.
  const double theta = s == t_ ? 1.0 : (s - t_prev_) / h_dense_;
  if (theta <= 0.0) {
    *q = q_prev_;
    *v = v_prev_;
    return;
  }
  if (theta >= 1.0) {
    *q = q_end_;
    *v = v_end_;
    return;
  }
  const bool stage10 = EnsureDenseOutput();
  // Position: q_n ⊕ θ (r₀ + θ (r₁ + θ (r₂ + θ r₃))).
  dq_ = theta * (rq_[0] + theta * (rq_[1] + theta * (rq_[2] + theta * rq_[3])));
  system_->IntegratePosition(q_prev_, dq_, 1.0, q);
  vpoly_ = v_prev_ + theta * (rv_[0] + theta * (rv_[1] + theta * (rv_[2] + theta * rv_[3])));
  if (!stage10) {
    *v = vpoly_;
    return;
  }
  // Stage-10 weight d₁₀(θ) and the half-explicit solve enforcing the velocity constraint at q(θ).
  const int last = tab::kDenseStages - 1;
  const double d10 =
      theta * (tab::kD[0][last] +
               theta * (tab::kD[1][last] + theta * (tab::kD[2][last] + theta * tab::kD[3][last])));
  ++interpolation_solves_;
  const StageStatus st = dense_stage_->Solve(s, *q, rows_, vpoly_, h_dense_ * d10, nullptr, &vout_);
  if (st == StageStatus::kOk || st == StageStatus::kInconsistent) {
    *v = vout_;  // least-squares velocity when the rows are inconsistent at q(θ)
  } else {
    *v = vpoly_;
  }
}

}  // namespace saltus::integrators
