#include "integrators/dopri5.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/block_sparse.h"
#include "engine/projection.h"

namespace saltus::integrators {

namespace tab = dopri5_tableau;

namespace {

// Hairer's HINIT: the new step is (0.01 / max(‖f‖, ‖f'‖))^(1/(order)), order of the method.
constexpr int kInitialStepOrder = 5;

}  // namespace

Dopri5::Dopri5(const IntegratorOptions& options) : Integrator(options) {
  if (!Supports(options.formulation)) {
    throw std::invalid_argument("integrator 'dopri5' does not support formulation '" +
                                std::string(ToString(options.formulation)) +
                                "'; supported: index1");
  }
}

Dopri5::~Dopri5() = default;

Dopri5::EvalResult Dopri5::Acceleration(double t, const Eigen::VectorXd& q,
                                        const Eigen::VectorXd& v, Eigen::VectorXd* vdot) {
  if (!q.allFinite() || !v.allFinite()) return EvalResult::kNonFinite;
  ++stats_.rhs_evaluations;
  const engine::DynamicsStatus status = dynamics_->Solve(t, q, v, rows_, vdot, &lambda_);
  min_pivot_ratio_ = std::min(min_pivot_ratio_, status.pivot_ratio);
  last_residual_ = status.residual;
  if (status.ok && vdot->allFinite()) return EvalResult::kOk;
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

StepStatus Dopri5::ToStatus(EvalResult r) {
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

void Dopri5::DoReset() {
  const int nq = system_->nq();
  const int nv = system_->nv();
  // The solver object is kept across restarts on the same system (an event-driven run restarts
  // at every event): what it learnt is forgotten, so the solves are those of a new object,
  // without re-allocating or re-analysing the sparse pattern of a known structure of G.
  if (dynamics_ != nullptr && &dynamics_->system() == system_) {
    dynamics_->Restart();
  } else {
    dynamics_ = std::make_unique<engine::ConstrainedDynamics>(*system_);
  }
  for (int i = 0; i < tab::kStages; ++i) {
    V_[i].resize(nv);
    K_[i].resize(nv);
    A_[i].resize(nv);
  }
  for (int k = 0; k < 4; ++k) {
    rq_[k].resize(nv);
    rv_[k].resize(nv);
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
  h_dense_ = 0;

  all_rows_ = rows_;
  all_rows_.insert(all_rows_.end(), dropped_rows_.begin(), dropped_rows_.end());
  std::sort(all_rows_.begin(), all_rows_.end());
  V_[0] = v_;
  K_[0] = v_;  // θ = 0 at the start of a step: dexp⁻¹₀ = I
  reset_status_ = StepStatus::kAccepted;
  min_pivot_ratio_ = 1.0;
  const EvalResult r = Acceleration(t_, q_, v_, &A_[0]);
  reference_pivot_ratio_ = min_pivot_ratio_;
  if (r != EvalResult::kOk) {
    // Reported by the next Step: Reset only throws for invalid input.
    reset_status_ = ToStatus(r);
    return;
  }
  h_ = options_.h_init > 0 ? options_.h_init : InitialStep();
}

double Dopri5::InitialStep() {
  return InitialStepEstimate(
      A_[0], kInitialStepOrder,
      [&](double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* a) {
        return Acceleration(t, q, v, a) == EvalResult::kOk;
      });
}

Dopri5::EvalResult Dopri5::Stages(double h) {
  min_pivot_ratio_ = 1.0;
  filtered_ = false;
  for (int s = 1; s < tab::kStages; ++s) {
    sum_v_ = tab::kA[s][0] * K_[0];
    sum_a_ = tab::kA[s][0] * A_[0];
    for (int j = 1; j < s; ++j) {
      sum_v_ += tab::kA[s][j] * K_[j];
      sum_a_ += tab::kA[s][j] * A_[j];
    }
    const double t_stage = t_ + tab::kC[s] * h;
    if (s + 1 < tab::kStages) {
      system_->IntegratePosition(q_, sum_v_, h, &Q_);
      V_[s] = v_ + h * sum_a_;
      theta_ = h * sum_v_;
      system_->DexpInv(theta_, V_[s], &K_[s]);
      const EvalResult r = Acceleration(t_stage, Q_, V_[s], &A_[s]);
      if (r != EvalResult::kOk) return r;
    } else {  // stage 7 is the solution (a_7j = b_j), and the next step's first stage (FSAL)
      system_->IntegratePosition(q_, sum_v_, h, &q_new_);
      v_new_ = v_ + h * sum_a_;
      V_[s] = v_new_;
      theta_ = h * sum_v_;
      system_->DexpInv(theta_, V_[s], &K_[s]);
      const EvalResult r = Acceleration(t_stage, q_new_, v_new_, &A_[s]);
      if (r != EvalResult::kOk) return r;
    }
  }
  return EvalResult::kOk;
}

double Dopri5::LocalError(double h) {
  const Eigen::Index nq = q_.size();
  const Eigen::Index nv = v_.size();
  // Velocity part: h Σ (b_j − b̂_j) A_j.
  sum_a_.setZero();
  for (int j = 0; j < tab::kStages; ++j) sum_a_ += (tab::kB[j] - tab::kBHat[j]) * A_[j];
  err_.tail(nv) = h * sum_a_;
  if (nq == nv) {
    // Vector-space coordinates: the difference of the two positions is h Σ (b_j − b̂_j) V_j.
    sum_v_.setZero();
    for (int j = 0; j < tab::kStages; ++j) sum_v_ += (tab::kB[j] - tab::kBHat[j]) * K_[j];
    err_.head(nq) = h * sum_v_;
  } else {
    sum_v_.setZero();
    for (int j = 0; j < tab::kStages; ++j) sum_v_ += tab::kBHat[j] * K_[j];
    system_->IntegratePosition(q_, sum_v_, h, &q_hat_);
    err_.head(nq) = q_new_ - q_hat_;
  }
  // Near a singular configuration (header): the step end is projected onto all active rows,
  // which removes the error's part in range(M⁻¹Gᵀ) (the last KKT solve is stage 7's, at q_new_);
  // what is left to control is its part in null(G). Positions in the tangent, h Σ (b_j − b̂_j) K_j,
  // mapped back to the nq coordinates at q_new_.
  filtered_ = false;
  if (options_.project && NearSingular() && !rows_.empty()) {
    filter_ = err_.tail(nv);
    if (dynamics_->RemoveConstrainedPart(&filter_)) {
      err_.tail(nv) = filter_;
      sum_v_.setZero();
      for (int j = 0; j < tab::kStages; ++j) sum_v_ += (tab::kB[j] - tab::kBHat[j]) * K_[j];
      filter_ = h * sum_v_;
      filtered_ = dynamics_->RemoveConstrainedPart(&filter_);
      if (filtered_ && nq == nv) {
        err_.head(nq) = filter_;
      } else if (filtered_) {
        system_->IntegratePosition(q_new_, filter_, 1.0, &q_hat_);
        err_.head(nq) = q_hat_ - q_new_;
      }
    }
  }
  y_old_.head(nq) = q_;
  y_old_.tail(nv) = v_;
  y_new_.head(nq) = q_new_;
  y_new_.tail(nv) = v_new_;
  return ErrorNorm(err_, y_old_, y_new_);
}

bool Dopri5::ProjectIfNeeded(double t, bool* projected) {
  *projected = false;
  if (!options_.project || rows_.empty()) return true;
  PositionConstraintValues(t, q_new_, &g_);
  engine::ConstraintRate(*system_, t, q_new_, v_new_, rows_, &Gv_);  // O(nnz) when block-sparse
  const double tol = options_.projection_tol;
  const bool within = g_.lpNorm<Eigen::Infinity>() <= tol && Gv_.lpNorm<Eigen::Infinity>() <= tol;
  // Near a rank drop of G (header, "Near singular configurations"): project every step onto the
  // round-off floor, on all active rows (with dropped dependent rows the kept ones may lose rank
  // there where all rows do not: the spatial double four-bar); if that does not converge, the
  // usual projection below.
  if (NearSingular()) {
    engine::ProjectionOptions po;
    po.metric = options_.projection_metric;
    po.tolerance = kNearSingularProjectionTolerance;
    po.max_iterations = options_.max_newton_iterations;
    q_tight_ = q_new_;
    const engine::ProjectionResult rp =
        engine::ProjectPositions(*system_, t, all_rows_, po, &q_tight_);
    ++stats_.position_projections;
    stats_.newton_iterations += rp.iterations;
    if (rp.converged) {
      v_tight_ = v_new_;
      const engine::ProjectionResult rv =
          engine::ProjectVelocities(*system_, t, q_tight_, all_rows_, po, &v_tight_);
      ++stats_.velocity_projections;
      if (rv.converged) {
        q_new_.swap(q_tight_);
        v_new_.swap(v_tight_);
        *projected = true;
        return true;
      }
    }
  }
  // A step whose error estimate left out the constrained part (LocalError) must be projected.
  if (within && !filtered_) return true;

  if (!ProjectOntoConstraints(t, engine::ProjectionOptions{}.rank_tolerance, &q_new_, &v_new_))
    return false;
  *projected = true;
  return true;
}

void Dopri5::BuildDenseOutput(double h) {
  // Tangent increments for q (k = V) and values for v (k = A); see the header.
  auto build = [&](const std::array<Eigen::VectorXd, tab::kStages>& k,
                   std::array<Eigen::VectorXd, 4>& r) {
    r[0] = tab::kB[0] * k[0];
    r[3] = tab::kD[0] * k[0];
    for (int j = 1; j < tab::kStages; ++j) {
      r[0] += tab::kB[j] * k[j];
      r[3] += tab::kD[j] * k[j];
    }
    r[0] *= h;
    r[3] *= h;
    r[1] = h * k[0] - r[0];
    r[2] = r[0] - h * k[tab::kStages - 1] - r[1];
  };
  build(K_, rq_);
  build(A_, rv_);
  h_dense_ = h;
}

StepStatus Dopri5::DoStep(double t_limit) {
  if (reset_status_ != StepStatus::kAccepted) return reset_status_;
  const bool adaptive = options_.adaptive;
  double h = std::min(adaptive ? h_ : options_.h_init, options_.h_max);
  bool rejected = false;
  for (;;) {
    const double remaining = t_limit - t_;
    const double h_wanted = h;
    // Adaptive: stretch by up to 1% rather than leave a sliver (Hairer's DOPRI5 does the same).
    // Fixed: land on t_limit when the remainder is one step up to round-off.
    const bool last = adaptive ? t_ + 1.01 * h >= t_limit : remaining <= h * (1.0 + 1e-9);
    if (last) h = remaining;

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
      err = LocalError(h);
      if (std::isnan(err)) return StepStatus::kNonFinite;
      if (err > 1.0) {
        ++stats_.rejected_steps;
        if (h <= MinStep()) return StepStatus::kStepSizeUnderflow;
        h = std::max(h * StepFactor(err, tab::kEmbeddedOrder, /*after_rejection=*/true), MinStep());
        rejected = true;
        continue;
      }
    }

    const double t_new = last ? t_limit : t_ + h;
    bool projected = false;
    const bool projection_ok = ProjectIfNeeded(t_new, &projected);
    if (projection_ok && projected) r = Acceleration(t_new, q_new_, v_new_, &a_projected_);
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
    t_prev_ = t_;
    t_ = t_new;
    q_prev_.swap(q_);
    q_.swap(q_new_);
    v_prev_.swap(v_);
    v_.swap(v_new_);
    A_[0].swap(projected ? a_projected_ : A_[tab::kStages - 1]);
    V_[0] = v_;
    K_[0] = v_;
    K_[0] = v_;  // θ = 0 at the start of a step: dexp⁻¹₀ = I

    if (adaptive) {
      double h_next = h * StepFactor(err, tab::kEmbeddedOrder, rejected);
      // A step shortened only to meet t_limit says nothing against the step wanted before.
      if (last && !rejected) h_next = std::max(h_next, h_wanted);
      h_ = std::min(h_next, options_.h_max);
    }
    return StepStatus::kAccepted;
  }
}

void Dopri5::DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
  const double theta = (s - t_prev_) / h_dense_;
  const double theta1 = 1.0 - theta;
  // *v holds the tangent increment of q first, then the velocity.
  *v = theta * (rq_[0] + theta1 * (rq_[1] + theta * (rq_[2] + theta1 * rq_[3])));
  system_->IntegratePosition(q_prev_, *v, 1.0, q);
  *v = v_prev_ + theta * (rv_[0] + theta1 * (rv_[1] + theta * (rv_[2] + theta1 * rv_[3])));
}

}  // namespace saltus::integrators
