// Accelerations and multipliers of the index-1 formulation (Haddouni et al. 2017, eq. 8-9):
//
//   [ M(q)  −Gᵀ(q) ] [ v̇ ]   [ F(q, v, t) ]
//   [ G(q)    0    ] [ λ  ] = [    −γ      ]
//
// for a given set of constraint rows (m rows). Solved by a Cholesky factorization of M (never
// inverted) and a rank-revealing factorization of the Delassus matrix W = G M⁻¹ Gᵀ (m × m):
// λ = W⁺ (−γ − G M⁻¹ F), v̇ = M⁻¹ (F + Gᵀ λ). Redundant rows (rank(G) < m, e.g. a closed loop
// counted twice) get the minimum-norm λ, which is the multiplier the LCP solvers also see.
//
// The object owns its workspace: after the first call with a given m it does not allocate.
#pragma once

#include <Eigen/Dense>
#include <span>

#include "engine/mechanical_system.h"

namespace saltus::engine {

struct DynamicsStatus {
  bool ok = true;        // false: M not positive definite, or W singular and inconsistent
  int rank = 0;          // numerical rank of G on the given rows
  double residual = 0;   // ‖G v̇ + γ‖∞ after the solve
};

class ConstrainedDynamics {
 public:
  explicit ConstrainedDynamics(const MechanicalSystem& system);

  // v̇ (nv) and λ (rows.size()) at (t, q, v).
  DynamicsStatus Solve(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                       std::span<const int> rows, Eigen::VectorXd* vdot, Eigen::VectorXd* lambda);

  // Relative tolerance below which a singular value of W counts as zero (default 1e-10).
  void set_rank_tolerance(double tol) { rank_tolerance_ = tol; }

 private:
  const MechanicalSystem& system_;
  double rank_tolerance_ = 1e-10;
  Eigen::MatrixXd M_, G_, MinvGt_, W_;
  Eigen::VectorXd F_, gamma_, MinvF_, rhs_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod_;
};

}  // namespace saltus::engine
