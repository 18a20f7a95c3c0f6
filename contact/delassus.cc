#include "contact/delassus.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace saltus::contact {

std::string RowLabel(const engine::MechanicalSystem& system, int row) {
  return "row " + std::to_string(row) + " ('" + system.constraint_info(row).name + "')";
}

void ValidateState(const char* who, const engine::MechanicalSystem& system, double t,
                   const Eigen::VectorXd& q, const Eigen::VectorXd& v, const char* v_name) {
  // (The messages are built on failure only: an impact calls this once.)
  const auto fail = [who](const std::string& what) {
    throw std::invalid_argument(std::string(who) + ": " + what);
  };
  if (!std::isfinite(t)) fail("t is not finite");
  if (q.size() != system.nq()) {
    fail("q has " + std::to_string(q.size()) + " entries, nq = " + std::to_string(system.nq()));
  }
  if (v.size() != system.nv()) {
    fail(std::string(v_name) + " has " + std::to_string(v.size()) +
         " entries, nv = " + std::to_string(system.nv()));
  }
  if (!q.allFinite()) fail("q has a non-finite entry");
  if (!v.allFinite()) fail(std::string(v_name) + " has a non-finite entry");
}

void ValidateRows(const char* who, const engine::MechanicalSystem& system,
                  std::span<const int> bilateral_rows, std::span<const int> unilateral_rows) {
  const auto check = [&](std::span<const int> rows, const char* list) {
    for (int r : rows) {
      if (r < 0 || r >= system.num_constraints()) {
        throw std::invalid_argument(std::string(who) + ": " + list + " row " + std::to_string(r) +
                                    " outside [0, " + std::to_string(system.num_constraints()) +
                                    ")");
      }
    }
  };
  check(bilateral_rows, "bilateral");
  check(unilateral_rows, "unilateral");
  // Duplicates, within or across the two lists: sort a copy (these lists are short; one row
  // cannot be listed twice).
  if (bilateral_rows.size() + unilateral_rows.size() < 2) return;
  thread_local std::vector<int> all;
  all.assign(bilateral_rows.begin(), bilateral_rows.end());
  all.insert(all.end(), unilateral_rows.begin(), unilateral_rows.end());
  std::sort(all.begin(), all.end());
  const auto dup = std::adjacent_find(all.begin(), all.end());
  if (dup != all.end()) {
    throw std::invalid_argument(std::string(who) + ": " + RowLabel(system, *dup) + " listed twice");
  }
}

void SolveLowerInPlace(const Eigen::MatrixXd& lower, Eigen::MatrixXd* X) {
  const Eigen::Index n = lower.rows();
  if (n > kSmallTriangle) {
    lower.triangularView<Eigen::Lower>().solveInPlace(*X);
    return;
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    const double a = 1.0 / lower(i, i);
    for (Eigen::Index j = 0; j < X->cols(); ++j) {
      double* x = X->col(j).data();
      x[i] *= a;
      const double b = x[i];
      for (Eigen::Index k = i + 1; k < n; ++k) x[k] -= b * lower(k, i);
    }
  }
}

DenseAssembly AssembleDense(const engine::MechanicalSystem& system, double t,
                            const Eigen::VectorXd& q, std::span<const int> bilateral_rows,
                            std::span<const int> unilateral_rows) {
  DenseAssembly a;
  AssembleDenseInto(system, t, q, bilateral_rows, unilateral_rows, false, &a);
  return a;
}

void AssembleDenseInto(const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                       std::span<const int> bilateral_rows, std::span<const int> unilateral_rows,
                       bool keep_mass, DenseAssembly* out) {
  DenseAssembly& a = *out;
  a.error.clear();
  const int nv = system.nv();
  const bool constant = keep_mass && system.HasConstantMassMatrix();
  if (!(constant && a.mass_kept && a.llt.rows() == nv)) {
    a.mass_kept = false;
    system.MassMatrix(q, &a.M);
    if (a.M.rows() != nv || a.M.cols() != nv || !a.M.allFinite()) {
      a.error = "mass matrix is not a finite nv x nv matrix";
      return;
    }
    a.llt.compute(a.M);
    if (a.llt.info() != Eigen::Success) {
      a.error = "mass matrix is not positive definite (Cholesky failed)";
      return;
    }
    a.mass_kept = constant;
  }
  system.ConstraintJacobian(t, q, bilateral_rows, &a.G_b);
  system.ConstraintJacobian(t, q, unilateral_rows, &a.G_u);
  if (!a.G_b.allFinite() || !a.G_u.allFinite()) {
    a.error = "constraint Jacobian has a non-finite entry";
    return;
  }
  // (Eigen's triangular solve reads element (0, 0) of an empty right-hand side: skip those.)
  a.A_b.resize(nv, a.G_b.rows());
  a.A_u.resize(nv, a.G_u.rows());
  if (a.G_b.rows() > 0) {
    a.A_b = a.G_b.transpose();
    SolveLowerInPlace(a.llt.matrixLLT(), &a.A_b);
  }
  if (a.G_u.rows() > 0) {
    a.A_u = a.G_u.transpose();
    SolveLowerInPlace(a.llt.matrixLLT(), &a.A_u);
  }
}

BilateralElimination::BilateralElimination(const Eigen::MatrixXd& A_b, const Eigen::MatrixXd& A_u,
                                           const Eigen::VectorXd& y0, const Eigen::VectorXd& c_b)
    : A_b_(&A_b), A_u_(&A_u), y0_(y0), c_b_(c_b) {
  const Eigen::Index nv = y0.size();
  Eigen::MatrixXd Q1(nv, 0);
  Eigen::VectorXd s(0);
  if (A_b.cols() > 0) {
    cod_.setThreshold(kBilateralRankTolerance);
    cod_.compute(A_b);
    rank_ = static_cast<int>(cod_.rank());
    Q1 = cod_.householderQ() * Eigen::MatrixXd::Identity(nv, rank_);
    // Component of y in range(A_B) fixed by the bilateral rows: (A_Bᵀ Q₁) s = −c_B, A_Bᵀ Q₁ of
    // full column rank; least squares if redundant rows are inconsistent.
    if (rank_ > 0) {
      const Eigen::MatrixXd K = A_b.transpose() * Q1;
      s = K.colPivHouseholderQr().solve(-c_b);
    }
  }
  C_ = A_u;
  y_free_ = y0;
  if (rank_ > 0) {
    C_.noalias() -= Q1 * (Q1.transpose() * A_u);
    y_free_.noalias() -= Q1 * (Q1.transpose() * y0);
    y_free_.noalias() += Q1 * s;
  }
  W_ = C_.transpose() * C_;
  W_ = 0.5 * (W_ + W_.transpose()).eval();
}

Eigen::VectorXd BilateralElimination::Rhs(const Eigen::VectorXd& d_u) const {
  return A_u_->transpose() * y_free_ + d_u;
}

void BilateralElimination::Recover(const Eigen::VectorXd& z_u, Eigen::VectorXd* y,
                                   Eigen::VectorXd* z_b, double* bilateral_residual) const {
  *y = y_free_ + C_ * z_u;
  *bilateral_residual = 0.0;
  if (A_b_->cols() == 0) {
    z_b->resize(0);
    return;
  }
  // A_B z_B = y − y0 − A_U z_U, which lies in range(A_B): minimum-norm z_B.
  const Eigen::VectorXd rhs = *y - y0_ - *A_u_ * z_u;
  *z_b = rank_ > 0 ? Eigen::VectorXd(cod_.solve(rhs)) : Eigen::VectorXd::Zero(A_b_->cols());
  *bilateral_residual = (A_b_->transpose() * *y + c_b_).lpNorm<Eigen::Infinity>();
}

}  // namespace saltus::contact
