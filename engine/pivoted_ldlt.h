// LDLᵀ factorization with symmetric pivoting of a symmetric positive semidefinite W (m × m), the
// Delassus matrix W = G M⁻¹Gᵀ that ConstrainedDynamics factors at every evaluation
// (engine/constrained_dynamics.h):
//
//   P W Pᵀ = L D Lᵀ,   L unit lower triangular,   D = diag(d_0, …, d_{m−1}).
//
// Pivot order. At step k the row, among those not yet chosen, whose diagonal entry |W_ii| is
// largest (the first of equal ones) is exchanged with the row in position k. The entries compared
// are W's own diagonal, not the Schur complement's, so the whole order is fixed before the
// elimination starts (a selection sort of diag W, by exchanges). It is the order Eigen::LDLT 3.4
// chooses, the factorization ConstrainedDynamics used before: the pivots d_k, hence the ratio
// min d / max d that ConstrainedDynamics reads for its rank decisions (DynamicsStatus::
// pivot_ratio, the switch to the rank-revealing solver below √(rank tolerance)), are the same to
// round-off.
//
// Elimination, left-looking (column k from the finished columns j < k; Golub & Van Loan, Matrix
// Computations, 4th ed., §4.1, the LDLᵀ form of Gaussian elimination), on A = P W Pᵀ:
//
//   d_k  = a_kk − Σ_{j<k} l_kj (d_j l_kj),
//   l_ik = (a_ik − Σ_{j<k} l_ij (d_j l_kj)) / d_k,   i > k,
//
// where a column j with l_kj = 0 is skipped: W of a mechanism is sparse (a joint row is coupled
// only with the rows of the joints on its two bodies), and so is L, and leaving out an exact zero
// term does not change a sum. The elimination stops at the first pivot d_k ≤ 0 (or not finite):
// W is then not positive definite to working precision, its pivot ratio is 0, and the caller
// takes the rank-revealing path (Eigen::LDLT's ratio, max(min d / max d, 0), is 0 there too).
//
// Rounding as Eigen::LDLT 3.4 does it where the rank decisions read it: the sums over j < k are
// accumulated first and then subtracted from a_kk and a_ik, and the column is divided by d_k (a
// division, not a product with 1/d_k); the solve divides by d_k too. With the reciprocal and the
// terms subtracted one by one (the first version) the round-off differed enough for DOP853 to stop
// at a singular position of the double four-bar (Dop853Singular.PlanarDoubleFourBar...).
//
// Solve: x = Pᵀ L⁻ᵀ D⁻¹ L⁻¹ P b, with column-oriented forward substitution (zero entries of the
// intermediate vector skipped) and row-oriented back substitution, both on contiguous columns.
//
// Exact zeros left out. Column j of L is not used below its last nonzero row (recorded when the
// column is finished), in the elimination's updates and in both substitutions; the updates of
// column k are summed four rows at a time in registers, over j ascending as one row at a time.
// The terms left out or added are products with an exact 0, which change no sum: the numbers are
// those of the full loops. The order of the last Compute is kept when W's diagonal, read in that
// order, is strictly decreasing: the selection then has a unique answer, that order (a tie or a
// rise selects again).
//
// Storage: one m × m column-major buffer (L below the diagonal, D on it) and the order, grown to
// the largest m seen and then reused: Compute and Solve do not allocate after the first call with
// that m. Against Eigen::LDLT on Andrews' squeezer (m = 20): no l1-norm pass (Eigen computes it for
// a condition estimate that is not used here), no per-column expressions on dynamic blocks, and
// the zero entries of L skipped, and a branch-free gather of P W Pᵀ (docs/benchmarks.md, sixteenth
// session).
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace saltus::engine {

class PivotedLdlt {
 public:
  // Factors the symmetric W (its lower triangle is read). Returns min_k d_k / max_k d_k when
  // every pivot is positive and finite, else 0 (the factor is then unusable: solved() false);
  // 1 for m = 0.
  double Compute(const Eigen::MatrixXd& W);
  // True after a Compute that returned a ratio > 0: Solve may be called.
  bool solved() const { return usable_; }
  Eigen::Index size() const { return m_; }
  // x ← W⁻¹ x (x of size m), with the factor of the last successful Compute.
  void SolveInPlace(Eigen::VectorXd* x) const;
  // Pivot k (d_k) and the row of W in position k of P W Pᵀ (k < size(), after a successful
  // Compute).
  double pivot(Eigen::Index k) const { return a_[static_cast<std::size_t>(k * (m_ + 1))]; }
  int order(Eigen::Index k) const { return order_[static_cast<std::size_t>(k)]; }

 private:
  Eigen::Index m_ = 0;
  bool usable_ = false;
  std::vector<double> a_;   // m × m, column-major: L below the diagonal, D on it
  std::vector<int> order_;  // position k of P W Pᵀ holds row order_[k] of W
  // The order for W: the last one when it still holds, else the selection by exchanges.
  bool KeepsLastOrder(const Eigen::MatrixXd& W);
  void SelectOrder(const Eigen::MatrixXd& W);

  Eigen::Index order_size_ = -1;   // m of the order in order_ (−1: none yet)
  std::vector<double> diagonal_;   // SelectOrder: |W_ii| in the order of exchanges
  std::vector<int> last_;          // last row with l_ij ≠ 0 of column j (j itself if none)
  mutable std::vector<double> y_;  // Solve: P b, then the substitutions
};

}  // namespace saltus::engine
