#include "integrators/half_explicit_stage.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace saltus::integrators {

namespace {
// κ of the dropped-row bound (header): curvature scale of the constraints, 1/m. On Bricard (1 m
// links, quaternion coordinates) the dropped row's residual reaches 3 ‖g‖ ‖V‖; 10 leaves a margin.
constexpr double kDriftCurvature = 10.0;
}  // namespace

HalfExplicitStage::HalfExplicitStage(const engine::MechanicalSystem& system) : system_(system) {}

void HalfExplicitStage::set_rank_tolerance(double tol) {
  if (!(tol > 0.0 && tol < 1.0)) {
    throw std::invalid_argument("HalfExplicitStage: rank tolerance must be in (0, 1), got " +
                                std::to_string(tol));
  }
  rank_tolerance_ = tol;
}

void HalfExplicitStage::set_select_tolerance(double tol) {
  if (!(tol > 0.0 && tol < 1.0)) {
    throw std::invalid_argument("HalfExplicitStage: select tolerance must be in (0, 1), got " +
                                std::to_string(tol));
  }
  select_tolerance_ = tol;
}

void HalfExplicitStage::EnsureSelection(std::size_t m) {
  if (selection_rows_ == m && kept_.size() + dropped_.size() == m) return;
  kept_.resize(m);
  for (std::size_t k = 0; k < m; ++k) kept_[k] = static_cast<int>(k);
  dropped_.clear();
  selection_rows_ = m;
  reduced_ = false;
}

int HalfExplicitStage::SelectRows(double t, const Eigen::VectorXd& q, std::span<const int> rows) {
  const std::size_t m = rows.size();
  selection_rows_ = 0;
  EnsureSelection(m);  // all rows
  selection_pivot_ratio_ = 1.0;
  if (m == 0) return 0;
  system_.ConstraintJacobian(t, q, rows, &G_full_);
  if (!G_full_.allFinite()) return static_cast<int>(m);
  // Column-pivoted QR of Gᵀ (nv × m): the pivot order ranks the rows by independence.
  select_qr_.compute(G_full_.transpose());
  const auto& R = select_qr_.matrixR();
  const Eigen::Index k_max = std::min<Eigen::Index>(R.rows(), R.cols());
  const double r00 = k_max > 0 ? std::abs(R(0, 0)) : 0.0;
  Eigen::Index r = 0;
  while (r < k_max && std::abs(R(r, r)) > select_tolerance_ * r00) ++r;
  selection_pivot_ratio_ = r > 0 ? std::abs(R(r - 1, r - 1)) / r00 : 1.0;
  if (r == static_cast<Eigen::Index>(m)) return static_cast<int>(m);
  const auto& perm = select_qr_.colsPermutation().indices();
  std::vector<char> keep(m, 0);
  for (Eigen::Index k = 0; k < r; ++k) keep[static_cast<std::size_t>(perm(k))] = 1;
  kept_.clear();
  dropped_.clear();
  for (std::size_t k = 0; k < m; ++k) (keep[k] ? kept_ : dropped_).push_back(static_cast<int>(k));
  reduced_ = !dropped_.empty();
  return static_cast<int>(r);
}

void HalfExplicitStage::CopySelection(const HalfExplicitStage& other) {
  kept_ = other.kept_;
  dropped_ = other.dropped_;
  selection_rows_ = other.selection_rows_;
  reduced_ = other.reduced_;
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
    EnsureSelection(rows.size());
    // The force directions at stage i: G_i, or H_i for non-ideal forces (header).
    if (system_.HasNonIdealForces()) {
      system_.ForceDirections(t_i, Q_i, V_i, rows, &G_full_);
    } else {
      system_.ConstraintJacobian(t_i, Q_i, rows, &G_full_);
    }
    if (reduced_) {
      G_i_ = G_full_(kept_, Eigen::all);
    } else {
      G_i_.swap(G_full_);
    }
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
    EnsureSelection(rows.size());
    system_.ConstraintJacobian(t_next, Q_next, rows, &G_full_);
    system_.ConstraintTimeDerivative(t_next, Q_next, rows, &g_t_);
    if (!G_full_.allFinite() || !g_t_.allFinite()) return StageStatus::kNonFinite;
    // The stage system on the selected rows S (all rows when nothing was dropped).
    if (reduced_) {
      G_next_ = G_full_(kept_, Eigen::all);
      rhs_ = g_t_(kept_);
    } else {
      G_next_ = G_full_;
      rhs_ = g_t_;
    }
    W_.noalias() = G_next_ * MinvGt_;
    rhs_.noalias() += G_next_ * (*V_next);
    rhs_ = -rhs_;
    w_solver_.Compute(W_, rank_tolerance_);
    last_rank_ = w_solver_.rank();
    w_solver_.Solve(rhs_, &mu_);
    V_next->noalias() += MinvGt_ * mu_;
    // Velocity-constraint residual of every row at the next stage, and its round-off scale.
    residual_ = g_t_;
    residual_.noalias() += G_full_ * (*V_next);
    const double v_norm = V_next->lpNorm<Eigen::Infinity>();
    const double scale =
        std::max(1.0, G_full_.cwiseAbs().maxCoeff() * v_norm + g_t_.lpNorm<Eigen::Infinity>());
    last_residual_ = residual_.lpNorm<Eigen::Infinity>();
    if (!V_next->allFinite()) return StageStatus::kNonFinite;
    const double tol = residual_tolerance_ * scale;
    if (!(last_residual_ <= tol)) {
      // Dropped rows may deviate by what the position drift explains (see the header, κ = 1/m).
      double drift_allowance = 0.0;
      if (reduced_) {
        system_.ConstraintValues(t_next, Q_next, system_.PositionLevelRows(rows), &g_);
        drift_allowance =
            g_.allFinite() ? kDriftCurvature * g_.lpNorm<Eigen::Infinity>() * v_norm : 0.0;
      }
      std::vector<char> is_dropped(rows.size(), 0);
      for (int k : dropped_) is_dropped[static_cast<std::size_t>(k)] = 1;
      for (Eigen::Index k = 0; k < residual_.size(); ++k) {
        const double bound =
            tol + (is_dropped[static_cast<std::size_t>(k)] ? drift_allowance : 0.0);
        if (!(std::abs(residual_(k)) <= bound)) {
          offending_rows_.push_back(rows[static_cast<std::size_t>(k)]);
        }
      }
      if (!offending_rows_.empty()) return StageStatus::kInconsistent;
    }
  }
  if (!V_next->allFinite()) return StageStatus::kNonFinite;
  if (alpha != 0.0 && vdot != nullptr) {
    *vdot = MinvF_;
    if (!rows.empty()) vdot->noalias() += MinvGt_ * (mu_ / alpha);
    if (!vdot->allFinite()) return StageStatus::kNonFinite;
  }
  return StageStatus::kOk;
}

StepStatus DescribeStageFailure(const HalfExplicitStage& stage_system, StageStatus s,
                                std::string_view scheme, int stage, double t, double h,
                                const engine::MechanicalSystem& system, std::size_t num_rows,
                                std::string* message) {
  std::ostringstream msg;
  msg << scheme << ": ";
  StepStatus status = StepStatus::kLinearSolveFailure;
  switch (s) {
    case StageStatus::kNonFinite:
      msg << "NaN or Inf in stage " << stage + 1 << " at t = " << t;
      status = StepStatus::kNonFinite;
      break;
    case StageStatus::kSingularMass:
      msg << "mass matrix not positive definite in stage " << stage + 1 << " at t = " << t;
      break;
    case StageStatus::kInconsistent:
    case StageStatus::kOk:
      msg << "stage " << stage + 1 << " system (eq. 31) at t = " << t << ", h = " << h
          << " cannot satisfy the velocity constraint (residual " << stage_system.last_residual()
          << ", rank of the stage matrix G M^-1 G^T " << stage_system.last_rank() << " of "
          << stage_system.kept().size() << " selected of " << num_rows
          << " rows); constraints involved:";
      for (int row : stage_system.offending_rows()) msg << " " << system.constraint_info(row).name;
      break;
  }
  *message = msg.str();
  return status;
}

}  // namespace saltus::integrators
