// One stage of a half-explicit Runge–Kutta method for the index-2 formulation (Haddouni et al.
// 2017, eq. 31–32; Brasey & Hairer 1993; Hairer & Wanner, Solving ODEs II, Sec. VII.6):
//
//   [ M(Q_i)         −Gᵀ(Q_i, t_i) ] [ V̇_i ]   [ F(Q_i, V_i, t_i)                               ]
//   [ G(Q_{i+1}, t_{i+1})    0     ] [ Λ_i ] = [ −(G(Q_{i+1}) ṽ + ∂g/∂t(Q_{i+1}, t_{i+1})) / α ],
//
// with ṽ = v_n + h Σ_{j<i} a_{i+1,j} V̇_j (nv) and α = h a_{i+1,i}, so that the next stage
// velocity V_{i+1} = ṽ + α V̇_i satisfies the velocity constraint G(Q_{i+1}) V_{i+1} + ∂g/∂t = 0.
// The same system gives the half-explicit dense output (with α possibly 0).
//
// Solution: with a Cholesky factorization of M(Q_i) (never inverted), the unknown solved for is
// μ = α Λ (so that α = 0 is allowed, as the dense output needs):
//   W̃ μ = −(G_{i+1} (ṽ + α M⁻¹F) + ∂g/∂t),   W̃ = G_{i+1} M⁻¹ G_iᵀ (m × m, not symmetric),
//   V_{i+1} = ṽ + α M⁻¹F + M⁻¹ G_iᵀ μ,   V̇_i = M⁻¹F + M⁻¹ G_iᵀ μ / α.
//
// Redundant and rank-changing constraints (Haddouni et al. 2017, Sec. 4.5): W̃ is factored by a
// complete orthogonal decomposition with a relative pivot threshold (rank_tolerance) and μ is the
// minimum-norm least-squares solution. When the rows are redundant with the same rank at both
// stage points (closed loops counted twice, four coplanar contact points), the right-hand side
// lies in the range of W̃ and the velocity constraint is met to round-off. When the rank differs
// between the two points (or W̃ loses rank in a way the right-hand side does not follow), the
// least-squares solution leaves a residual; the stage reports kInconsistent together with the rows
// whose velocity constraint is violated, and the integrator rejects the step and retries smaller.
//
// Symbols: nv velocities, m = rows.size() active rows. The object owns its workspace; after the
// first call with given sizes it does not allocate (except for the failure report).
#pragma once

#include <Eigen/Dense>
#include <span>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/mechanical_system.h"

namespace saltus::integrators {

enum class StageStatus {
  kOk,
  kSingularMass,  // M(Q_i) not positive definite
  kInconsistent,  // the velocity constraint at Q_{i+1} cannot be met (rank change)
  kNonFinite,     // NaN/Inf in M, F, G, ∂g/∂t or the solution
};

class HalfExplicitStage {
 public:
  explicit HalfExplicitStage(const engine::MechanicalSystem& system);

  // Relative pivot threshold of W̃'s rank-revealing factorization, in (0, 1); default 1e-10.
  void set_rank_tolerance(double tol);
  double rank_tolerance() const { return rank_tolerance_; }
  // Absolute tolerance on ‖G_{i+1} V_{i+1} + ∂g/∂t‖∞ (scaled by max(1, ‖G‖·‖V‖∞ + ‖∂g/∂t‖∞));
  // above it the stage is kInconsistent. Default 1e-8.
  void set_residual_tolerance(double tol) { residual_tolerance_ = tol; }

  // Evaluates M, F and G at (t_i, Q_i, V_i) and factors M (once when the mass matrix is
  // constant). Must precede Solve. Returns kSingularMass or kNonFinite on failure.
  StageStatus Prepare(double t_i, const Eigen::VectorXd& Q_i, const Eigen::VectorXd& V_i,
                      std::span<const int> rows);

  // Solves the stage with the prepared (M_i, F_i, G_i) and the constraint at (t_next, Q_next):
  // V_next (nv) = ṽ + α V̇; vdot (nv) = V̇ when α > 0 (left unspecified when α = 0).
  StageStatus Solve(double t_next, const Eigen::VectorXd& Q_next, std::span<const int> rows,
                    const Eigen::VectorXd& v_tilde, double alpha, Eigen::VectorXd* vdot,
                    Eigen::VectorXd* V_next);

  // After kInconsistent: the rows (global indices) whose velocity constraint residual exceeded
  // the tolerance, and the largest residual.
  const std::vector<int>& offending_rows() const { return offending_rows_; }
  double last_residual() const { return last_residual_; }
  int last_rank() const { return last_rank_; }

  // M⁻¹ x for the prepared M (nv), into *y. y must not alias x.
  void SolveMass(const Eigen::VectorXd& x, Eigen::VectorXd* y) const;
  const Eigen::VectorXd& forces() const { return F_; }
  // Cholesky factorizations of M made so far.
  long factorizations() const { return factorizations_; }

 private:
  const engine::MechanicalSystem& system_;
  double rank_tolerance_ = 1e-10;
  double residual_tolerance_ = 1e-8;
  Eigen::MatrixXd M_, G_i_, G_next_, MinvGt_, W_;
  Eigen::VectorXd F_, MinvF_, g_t_, rhs_, mu_, residual_, tmp_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  bool mass_factored_ = false;
  engine::MinNormSolver w_solver_;
  std::vector<int> offending_rows_;
  double last_residual_ = 0;
  int last_rank_ = 0;
  long factorizations_ = 0;
};

}  // namespace saltus::integrators
