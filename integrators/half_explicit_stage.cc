#include "integrators/half_explicit_stage.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace saltus::integrators {

HalfExplicitStage::HalfExplicitStage(const engine::MechanicalSystem& system) : system_(system) {}

void HalfExplicitStage::set_rank_tolerance(double tol) {
  if (!(tol > 0.0 && tol < 1.0)) {
    throw std::invalid_argument("HalfExplicitStage: rank tolerance must be in (0, 1), got " +
                                std::to_string(tol));
  }
  rank_tolerance_ = tol;
}

StageStatus HalfExplicitStage::Prepare(double t_i, const Eigen::VectorXd& Q_i,
                                       const Eigen::VectorXd& V_i, std::span<const int> rows) {
  if (!Q_i.allFinite() || !V_i.allFinite()) return StageStatus::kNonFinite;
  if (!(system_.HasConstantMassMatrix() && mass_factored_)) {
    system_.MassMatrix(Q_i, &M_);
    if (!M_.allFinite()) return StageStatus::kNonFinite;
    llt_.compute(M_);
    ++factorizations_;
    if (llt_.info() != Eigen::Success) {
      mass_factored_ = false;
      return StageStatus::kSingularMass;
    }
    mass_factored_ = true;
  }
  system_.Forces(t_i, Q_i, V_i, &F_);
  if (!F_.allFinite()) return StageStatus::kNonFinite;
  MinvF_ = llt_.solve(F_);
  if (!rows.empty()) {
    system_.ConstraintJacobian(t_i, Q_i, rows, &G_i_);
    if (!G_i_.allFinite()) return StageStatus::kNonFinite;
    MinvGt_ = llt_.solve(G_i_.transpose());
  }
  return StageStatus::kOk;
}

void HalfExplicitStage::SolveMass(const Eigen::VectorXd& x, Eigen::VectorXd* y) const {
  *y = llt_.solve(x);
}

StageStatus HalfExplicitStage::Solve(double t_next, const Eigen::VectorXd& Q_next,
                                     std::span<const int> rows, const Eigen::VectorXd& v_tilde,
                                     double alpha, Eigen::VectorXd* vdot, Eigen::VectorXd* V_next) {
  offending_rows_.clear();
  last_residual_ = 0;
  last_rank_ = 0;
  if (!Q_next.allFinite()) return StageStatus::kNonFinite;
  // α V̇ = α M⁻¹F + M⁻¹ G_iᵀ μ, μ = α Λ (see the header).
  *V_next = v_tilde + alpha * MinvF_;
  if (!rows.empty()) {
    system_.ConstraintJacobian(t_next, Q_next, rows, &G_next_);
    system_.ConstraintTimeDerivative(t_next, Q_next, rows, &g_t_);
    if (!G_next_.allFinite() || !g_t_.allFinite()) return StageStatus::kNonFinite;
    W_.noalias() = G_next_ * MinvGt_;
    rhs_ = g_t_;
    rhs_.noalias() += G_next_ * (*V_next);
    rhs_ = -rhs_;
    w_solver_.Compute(W_, rank_tolerance_);
    last_rank_ = w_solver_.rank();
    w_solver_.Solve(rhs_, &mu_);
    V_next->noalias() += MinvGt_ * mu_;
    // Velocity-constraint residual at the next stage, and its round-off scale.
    residual_ = g_t_;
    residual_.noalias() += G_next_ * (*V_next);
    const double scale =
        std::max(1.0, G_next_.cwiseAbs().maxCoeff() * V_next->lpNorm<Eigen::Infinity>() +
                          g_t_.lpNorm<Eigen::Infinity>());
    last_residual_ = residual_.lpNorm<Eigen::Infinity>();
    if (!V_next->allFinite()) return StageStatus::kNonFinite;
    if (!(last_residual_ <= residual_tolerance_ * scale)) {
      for (Eigen::Index k = 0; k < residual_.size(); ++k) {
        if (std::abs(residual_(k)) > residual_tolerance_ * scale) {
          offending_rows_.push_back(rows[static_cast<std::size_t>(k)]);
        }
      }
      return StageStatus::kInconsistent;
    }
  }
  if (!V_next->allFinite()) return StageStatus::kNonFinite;
  if (alpha > 0.0 && vdot != nullptr) {
    *vdot = MinvF_;
    if (!rows.empty()) vdot->noalias() += MinvGt_ * (mu_ / alpha);
    if (!vdot->allFinite()) return StageStatus::kNonFinite;
  }
  return StageStatus::kOk;
}

}  // namespace saltus::integrators
