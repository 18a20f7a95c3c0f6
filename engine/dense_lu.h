// LU factorization with partial pivoting, P A = L U, of a dense square matrix: the non-symmetric
// Delassus matrix W = G M⁻¹ Hᵀ of a frictional phase (engine/constrained_dynamics.h), factored at
// every evaluation of the right-hand side.
//
// At step k the row with the largest |a_ik|, i ≥ k, is swapped into row k, the multipliers
// l_ik = a_ik / u_kk are stored below the diagonal and the trailing block is updated,
// a_ij ← a_ij − l_ik u_kj (Golub & Van Loan, Matrix Computations, 4th ed., Alg. 3.4.1, Gaussian
// elimination with partial pivoting). A frictional phase has a few contacts, so W is a few rows:
// up to kSmallSize the elimination runs in fixed storage in plain loops (a 2 × 2 W costs a tenth
// of a general blocked factorization's bookkeeping); larger matrices use Eigen's blocked
// PartialPivLU, the same pivoting rule.
#pragma once

#include <Eigen/Dense>
#include <array>

namespace saltus::engine {

class DenseLu {
 public:
  static constexpr Eigen::Index kSmallSize = 8;

  // Factors the square matrix A. A zero pivot is kept (A singular: PivotRatio() = 0).
  void Compute(const Eigen::MatrixXd& A);
  // min_k |u_kk| / max_k |u_kk|, 0 when every pivot is 0 (1 for an empty A).
  double PivotRatio() const;
  // x = A⁻¹ b (not finite when a pivot is 0); x must not be b.
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;

 private:
  Eigen::Index m_ = 0;
  bool small_ = true;
  Eigen::Matrix<double, kSmallSize, kSmallSize> lu_;  // L (unit, below) and U, small path
  std::array<Eigen::Index, kSmallSize> row_{};        // row k of P A is row row_[k] of A
  Eigen::PartialPivLU<Eigen::MatrixXd> large_;        // m > kSmallSize
};

}  // namespace saltus::engine
