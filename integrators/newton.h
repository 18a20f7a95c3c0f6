// Simplified Newton machinery shared by the implicit integrators (generalized-α, half-implicit,
// BDF): an iteration matrix that is factorized once and reused across iterations and steps, and
// a monitor of the contraction of the iterates that says when to stop, when the iteration
// diverges and when the matrix should be refreshed.
//
// Simplified Newton for R(x) = 0 with a frozen matrix S ≈ ∂R/∂x:
//   S Δx_k = −R(x_k),  x_{k+1} = x_k + Δx_k,
// converges linearly with rate θ_k = ‖Δx_k‖ / ‖Δx_{k−1}‖ (Hairer & Wanner, Solving ODEs II,
// Sec. IV.8, eq. 8.10–8.13). The monitor declares convergence when ‖Δx_k‖ ≤ tol, or earlier
// when the predicted remaining error θ/(1−θ)·‖Δx_k‖ ≤ tol; divergence when θ ≥ 2, θ ≥ 1 twice
// in a row (one non-contracting iterate is tolerated), the budget is spent, or when the
// prediction θ^(k_max−k)/(1−θ)·‖Δx_k‖ shows that tol cannot be reached within the iteration
// budget; and "slow" when θ > slow_rate, the signal to re-evaluate the Jacobians before the next
// step (RADAU5 refreshes for θ > 0.001; we trade more iterations for fewer Jacobians, default
// 0.3). Norms are whatever the caller scales them to (tol is in the same units).
//
// IterationMatrix keeps an LU factorization (partial pivoting) of a dense square matrix and the
// number of factorizations. The matrix is first equilibrated, S̃ = D_r S D_c, with D_r, D_c
// diagonal powers of two (exact, no round-off) chosen as LAPACK's xGEEQUB does: D_r scales every
// row's largest entry into [1, 2), then D_c every column's (Anderson et al., LAPACK Users'
// Guide, 3rd ed., SIAM 1999, Sec. 2.4.1.2, "equilibration"); S⁻¹ b = D_c S̃⁻¹ D_r b. The
// singularity test is made on S̃: a factorization whose reciprocal condition estimate of S̃ is
// below kSingularRcond (or not finite), or whose smallest pivot is below kSingularRcond times
// the largest (a lower bound of κ(U); the estimate alone misses exact zero pivots), is reported
// as singular. The iteration matrices mix
// blocks of very different sizes (BDF's h K, K the stiffness of a flexible body's modes, next
// to the O(1) constraint Jacobian); unequilibrated, the norm-wise estimate multiplies that
// spread into the conditioning of nearly dependent constraint rows and reports a well-posed
// matrix as singular (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 2002,
// Sec. 9.8, on scaling and pivoting).
//
// Saddle-point matrices at a singular configuration. The schemes' matrices have the form
// S = [A −Hᵀ; G 0] with the m constraint rows last (half-implicit's N, generalized-α's S and
// its GGL position correction P). Where G loses rank (the double four-bar with all bars on the
// ground line) S is singular whatever h, so no smaller step helps. Factorize(S, m) then falls
// back to the regularized matrix S_δ = S̃ + δ [0 0; 0 I] (in the equilibrated scaling, δ =
// kSaddleRegularization), and Solve refines against S̃: x ← x + S_δ⁻¹ (b̃ − S̃ x). Eliminating
// the multipliers of S_δ (G x + δ λ = b₂) gives the penalty matrix A + (1/δ) HᵀG of Bayo &
// Ledesma's augmented-Lagrangian formulation (Bayo & Ledesma 1996, Nonlinear Dyn. 9, 113–130;
// Cuadrado et al. 2000), and each refinement is its multiplier update λ ← λ + (1/δ)(b₂ − G x):
// along the directions where the Schur complement W = G A⁻¹Hᵀ has eigenvalues w ≫ δ it converges at
// the rate δ/(δ + w) to the solution of S x = b, along the directions lost at the singular
// configuration (w ≲ δ) the multipliers stay bounded and the update is the penalty one instead
// of ε/σ. Refinement stops when the residual no longer halves (at most kRefinements; a
// refinement that raised it is undone). The
// regularization is used only when the unregularized factorization is singular, so every
// other solve is unchanged; pivot_ratio() stays the unregularized one (RankDropMonitor).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <limits>

namespace saltus::integrators {

class IterationMatrix {
 public:
  // Reciprocal condition number below which the matrix counts as singular (round-off would
  // dominate a solve: machine ε / rcond ≥ 1e-2).
  static constexpr double kSingularRcond = 1e-14;

  // Relative regularization δ of the constraint block (header, "Saddle-point matrices"), and
  // the refinement budget of a regularized solve.
  static constexpr double kSaddleRegularization = 1e-10;
  static constexpr int kRefinements = 20;

  // Factorizes D_r S D_c (S square). Returns false when it is singular or S has NaN/Inf; the
  // matrix is then invalid until the next successful Factorize. Counts every call.
  // With constraint_rows = m > 0, S is a saddle-point matrix whose last m rows and columns are
  // the constraint block (zero, or the identity on rows a scheme fixes): a singular S is
  // factorized regularized instead (header) and false is returned only when that fails too.
  bool Factorize(const Eigen::MatrixXd& S, Eigen::Index constraint_rows = 0);
  // x = S⁻¹ b (b and x of size S.rows(); x may alias b). Requires valid().
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const;
  bool valid() const { return valid_; }
  void Invalidate() { valid_ = false; }
  long factorizations() const { return factorizations_; }
  // Smallest over largest pivot of the last factorization of the equilibrated matrix (0 before
  // the first; a lower bound of 1/κ(U)). Near a rank drop of the constraint rows it falls
  // with the smallest singular value (integrators that filter their error estimate there).
  double pivot_ratio() const { return pivot_ratio_; }
  // True when the last successful factorization is the regularized one (header).
  bool regularized() const { return regularized_; }
  // Regularized factorizations (over all calls).
  long regularizations() const { return regularizations_; }

 private:
  // Pivot test of lu_ (see Factorize); sets pivot_ratio_ when `record`.
  bool Nonsingular(bool record);

  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Eigen::VectorXd row_scale_, col_scale_;  // the diagonals of D_r and D_c
  mutable Eigen::VectorXd work_;           // D_r b
  // Regularized factorizations only: the equilibrated S̃ and the refinement's work vectors.
  Eigen::MatrixXd scaled_;
  mutable Eigen::VectorXd residual_, correction_;
  bool regularized_ = false;
  long regularizations_ = 0;
  bool valid_ = false;
  long factorizations_ = 0;
  double pivot_ratio_ = 0.0;
};

enum class NewtonProgress { kContinue, kConverged, kDiverging };

struct NewtonMonitorOptions {
  double tol = 1e-8;        // target on the increment norm
  int max_iterations = 10;  // budget per solve
  double slow_rate = 0.3;   // θ above this: refresh the Jacobians before the next solve
};

class NewtonMonitor {
 public:
  explicit NewtonMonitor(const NewtonMonitorOptions& options) : options_(options) {}
  // Starts a new solve.
  void Start();
  // Feeds ‖Δx_k‖ of the iteration just done; returns what to do next.
  NewtonProgress Update(double increment_norm);
  int iterations() const { return iterations_; }
  // Largest contraction rate seen in this solve (0 before two increments).
  double rate() const { return rate_; }
  bool slow() const { return rate_ > options_.slow_rate; }
  const NewtonMonitorOptions& options() const { return options_; }

 private:
  NewtonMonitorOptions options_;
  int iterations_ = 0;
  double previous_ = 0.0;
  double rate_ = 0.0;
  double last_theta_ = 0.0;
};

// Near singular configurations (a rank drop of G, e.g. the double four-bar with all its bars on
// the ground line; docs/benchmarks.md, "Every integrator through the singular positions"). A
// scheme records the pivot ratio of its matrix (IterationMatrix::pivot_ratio, or the KKT solve's,
// ~ σ² of G relative) at the points it chooses since Reset, and is near a rank drop while the
// current ratio is below kDrop times the largest recorded.
class RankDropMonitor {
 public:
  static constexpr double kDrop = 1e-3;
  void Reset() { reference_ = 0.0; }
  void Record(double pivot_ratio) { reference_ = std::max(reference_, pivot_ratio); }
  bool Near(double pivot_ratio) const { return pivot_ratio < kDrop * reference_; }

 private:
  double reference_ = 0.0;
};

// Newton updates that stopped contracting on a round-off floor: near a rank drop the residuals
// converge while the updates stall at round-off divided by σ_min, alternating instead of
// shrinking. Counts consecutive updates of at least half the previous one while the iterate is
// otherwise converged (`on_floor`); kStalls of them in a row count as convergence (null-space
// Newmark, generalized-α GGL, half-implicit). One per Newton solve.
class NewtonStall {
 public:
  static constexpr int kStalls = 2;
  // Counts `update` (a norm) and returns the number of consecutive stalls it ends.
  int Update(bool on_floor, double update) {
    count_ = on_floor && update >= 0.5 * previous_ ? count_ + 1 : 0;
    previous_ = update;
    return count_;
  }
  int count() const { return count_; }
  bool stalled() const { return count_ >= kStalls; }
  // The last update counted (∞ before the first).
  double previous() const { return previous_; }

 private:
  int count_ = 0;
  double previous_ = std::numeric_limits<double>::infinity();
};

}  // namespace saltus::integrators
