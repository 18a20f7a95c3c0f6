// Accelerations and multipliers of the index-1 formulation (Haddouni et al. 2017, eq. 8-9):
//
//   [ M(q)  −Gᵀ(q) ] [ v̇ ]   [ F(q, v, t) ]
//   [ G(q)    0    ] [ λ  ] = [    −γ      ]
//
// for a given set of constraint rows (m rows). Solved by the Schur complement on the Delassus
// matrix W = G M⁻¹ Gᵀ (m × m): λ = W⁺ (−γ − G M⁻¹ F), v̇ = M⁻¹ (F + Gᵀ λ). M is factored by
// Cholesky (never inverted; a diagonal M entry by entry), once when it is constant
// (MechanicalSystem::HasConstantMassMatrix); with no rows and that factor at hand, v̇ = M⁻¹ F is
// all a call computes (a free flight's stages). With a diagonal M, W = Σ_k (M⁻¹)_kk g_k g_kᵀ is
// formed from the nonzero entries of G's columns g_k (a joint row touches the coordinates of one
// or two bodies: Σ_k c_k² products, c_k the nonzeros of column k, against m²·nv for the dense
// product). W is factored by a pivoted LDLᵀ (engine/pivoted_ldlt.h) while it is well conditioned
// (smallest over largest pivot above √(rank tolerance)); redundant rows (rank(G) < m, e.g. a closed
// loop counted twice) and configurations near a rank drop go to a rank-revealing complete
// orthogonal decomposition, and a row set found redundant goes there directly until Restart or
// another row set. Redundant rows get the minimum-norm λ, which is the multiplier the LCP solvers
// also see. Near a singular configuration (G nearly loses rank: a four-bar with its bars aligned) λ
// is not unique but v̇ is; a rank decision on W would drop the near-singular direction and leave G v̇
// + γ far from zero. When the residual exceeds 1e-12 of the scale of the summed terms, v̇ is refined
// by the penalty least-norm solve below (no rank decision): v̇ += δ with M δ ∈ range(Gᵀ), G δ = −(G
// v̇ + γ), and λ += W⁺ G δ (the refinement allocates on first use).
//
// Large mechanisms (engine/block_sparse.h): when the system provides its block-sparse M and G
// (MechanicalSystem::BlockSparseMatrices) and nv ≥ kSparseMinimumNv (or the sparse path is
// forced), M⁻¹ is formed by body blocks and W by a sparse LDLᵀ, in O(nv + nnz) per call for a
// chain. W numerically singular (redundant rows) or a residual above the consistency bound falls
// back to the dense minimum-norm path above, for that call and for later calls on the same rows.
//
// Non-ideal constraint forces (MechanicalSystem::HasNonIdealForces: sliding friction, H ≠ G):
//
//   [ M(q)  −Hᵀ ] [ v̇ ]   [  F ]
//   [ G      0  ] [ λ  ] = [ −γ ],
//
// solved by the same elimination with the non-symmetric W = G M⁻¹ Hᵀ (m × m): λ = W⁺ (−γ −
// G M⁻¹ F), v̇ = M⁻¹ (F + Hᵀ λ), W factored by an LU with partial pivoting while it is well
// conditioned (as the LDLᵀ above: smallest over largest |pivot| above √(rank tolerance)), else
// by the rank-revealing complete orthogonal decomposition (minimum-norm λ for redundant rows;
// a row set found redundant goes there directly). Dense only, without the refinement near singular
// configurations (which needs a symmetric W) and without RemoveConstrainedPart. W may be singular
// where the symmetric one is not (Painlevé: μ large enough that the effective normal force changes
// sign): ok is then false (residual above the consistency bound). Ideal systems never take this
// path.
//
// The object owns its workspace: after the first call with a given m it does not allocate
// (provided the system's MassMatrix, Forces and constraint routines do not).
#pragma once

#include <Eigen/Dense>
#include <span>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/dense_lu.h"
#include "engine/mechanical_system.h"
#include "engine/pivoted_ldlt.h"

namespace saltus::engine {

// Minimum-norm least-squares solutions of A x = b for a square, possibly rank-deficient A,
// through Eigen's complete orthogonal decomposition A P = Q [T 0; 0 0] Z:
//   x = P Zᵀ [T⁻¹ (Qᵀ b)₁..ᵣ ; 0],   r = numerical rank.
// A pivot of the column-pivoting QR counts as zero when |pivot| ≤ tolerance · |largest pivot|.
// Unlike CompleteOrthogonalDecomposition::solve, Solve does not allocate once Compute has been
// called with a matrix of the same size.
class MinNormSolver {
 public:
  // Factors A (n × n). tolerance > 0 is relative to the largest pivot.
  void Compute(const Eigen::MatrixXd& A, double tolerance);
  int rank() const { return static_cast<int>(cod_.rank()); }
  // Smallest over largest |pivot| of the column-pivoted QR (0 when rank-deficient, 1 when empty).
  double PivotRatio() const;
  // x (n) ← A⁺ b. x must not alias b.
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x);

 private:
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod_;
  Eigen::VectorXd c_, y_;
};

// Least-norm solutions of an underdetermined, possibly rank-deficient G δ = b in the metric of
// an SPD N (Bayo & Ledesma 1996; Cuadrado et al. 2000, ALI3-P projections):
//   δ = N⁻¹Gᵀ W⁺ b,  W = G N⁻¹ Gᵀ,
// without a rank decision. The penalty matrix P = N + α GᵀG is SPD whatever the rank of G, and
// α P⁻¹Gᵀ = N⁻¹Gᵀ(W + I/α)⁻¹: one penalty correction of a residual p is δ = N⁻¹Gᵀ y with
// (W + I/α) y = p (a Cholesky factorization of the SPD W + I/α; δ is formed as N⁻¹Gᵀ y so
// that it lies in range(N⁻¹Gᵀ) to round-off), and G δ = A p with the symmetric positive
// semidefinite A = W(W + I/α)⁻¹ (eigenvalues αw/(1 + αw) in [0, 1)). Solve runs conjugate
// gradients on A z = b, i.e. on the iterated penalty correction: A is the identity up to the
// directions of W with αw ≲ 1 (near a singular configuration: G nearly loses rank), which CG
// resolves in about as many extra iterations. 1/α = (largest diagonal entry of W) / kPenalty.
// At a singular configuration the component of b outside range(G) cannot be reached: Solve
// then returns the best δ found and its residual says so (no hidden inconsistency).
class PenaltyMinNormSolver {
 public:
  static constexpr double kPenalty = 1e10;  // κ ε ≈ 2e-6: the Cholesky factor keeps ~6 digits
  // Factors W + I/α for NinvGt = N⁻¹Gᵀ (nv × m) and W = G N⁻¹Gᵀ (m × m), which must outlive the
  // Solve calls. False if the factorization fails (W not symmetric positive semidefinite).
  bool Compute(const Eigen::MatrixXd& NinvGt, const Eigen::MatrixXd& W);
  // δ (nv) with ‖G δ − b‖∞ ≤ tolerance when reachable (else after ≤ 2m + 10 iterations),
  // the residual measured through W; returns that residual norm. Does not allocate after the
  // first call with the same sizes.
  double Solve(const Eigen::VectorXd& b, double tolerance, Eigen::VectorXd* delta);

 private:
  // CG stops once its residual grows beyond this factor of the best one (loss of conjugacy).
  static constexpr double kDivergence = 100.0;
  const Eigen::MatrixXd* NinvGt_ = nullptr;
  const Eigen::MatrixXd* W_ = nullptr;
  Eigen::MatrixXd shifted_;  // W + I/α
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd rho_, p_, y_, Ap_, mu_, best_;
};

struct DynamicsStatus {
  bool ok = true;       // false: M not positive definite, W singular and the rows inconsistent
                        // (residual above √ε of the right-hand side's scale), or non-finite v̇
  int rank = 0;         // numerical rank of G on the given rows (= rank of W since M is SPD)
  double residual = 0;  // ‖G v̇ + γ‖∞ after the solve
  bool sparse = false;  // solved by the block-sparse path (else dense)
  // Nearness to a rank drop: smallest over largest pivot of the pivoted LDLᵀ of W (dense path;
  // of the LU with partial pivoting for H ≠ G, or of the rank-revealing QR where either is below
  // √(rank tolerance); ~ (σ_min/σ_max)² of G in the M⁻¹ metric), 0 when W is
  // numerically rank-deficient, 1 with no rows or on the sparse path (W positive definite
  // there, not estimated).
  double pivot_ratio = 1.0;
};

class ConstrainedDynamics {
 public:
  explicit ConstrainedDynamics(const MechanicalSystem& system);

  // v̇ (nv) and λ (rows.size()) at (t, q, v); q of size nq, v of size nv (else
  // std::invalid_argument). With no rows, v̇ = M⁻¹ F and λ is empty. When M is not positive
  // definite, ok = false and v̇, λ are left with their sizes but unspecified values.
  DynamicsStatus Solve(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                       std::span<const int> rows, Eigen::VectorXd* vdot, Eigen::VectorXd* lambda);

  // x (nv) ← x − M⁻¹Gᵀ W⁺ G x: the M-orthogonal projection onto null(G) at the state and rows of
  // the last Solve, the part of x that a velocity projection (engine/projection.h, eq. 36) keeps.
  // W⁺ without a rank decision (PenaltyMinNormSolver, repeated on the remainder G x as in the
  // refinement of Solve), so that near a singular configuration the directions with σ → 0 are
  // removed too. Used by DOPRI5's error estimate near singular configurations
  // (integrators/dopri5.h). Dense path only: false (x unchanged) when the last Solve took the
  // sparse path, had no rows or failed. Does not allocate after the first call with the same m.
  bool RemoveConstrainedPart(Eigen::VectorXd* x);

  // δ (nv) ← M⁻¹Gᵀ W⁻¹ r (r of size m): the M-metric least-norm solution of G δ = r with M, G
  // and the LDLᵀ of W = G M⁻¹Gᵀ of the last Solve, i.e. one simplified-Newton correction of the
  // projections (engine/projection.h, eq. 35 and 36) at the last Solve's state without forming
  // or factoring anything. Only where that factor is the plain one: the last Solve was dense,
  // ideal (H = G), succeeded and factored W by the LDLᵀ (well conditioned, no redundant rows);
  // otherwise false (δ unchanged). Does not allocate after the first call with the same sizes.
  bool LastSolveCorrection(const Eigen::VectorXd& r, Eigen::VectorXd* delta);
  // max |G_ij| of the last Solve's dense G (0 when it took another path).
  double LastSolveGMaxAbs() const { return last_dense_ok_ ? G_.lpNorm<Eigen::Infinity>() : 0.0; }

  // Relative tolerance below which a pivot of W's rank-revealing QR counts as zero (default
  // 1e-10, relative to the largest pivot). Throws std::invalid_argument unless 0 < tol < 1.
  void set_rank_tolerance(double tol);
  double rank_tolerance() const { return rank_tolerance_; }

  // The system the solves are for.
  const MechanicalSystem& system() const { return system_; }

  // Forgets what earlier calls learnt (a row set on which W was singular goes to the dense path
  // directly; the factor of a constant M; the last dense solve that RemoveConstrainedPart uses),
  // keeping the workspace and the sparse pattern analysis of G's block structure (checked
  // against the structure of G on every call). The next Solve then computes exactly what a new
  // object would, without reallocating or re-analysing the pattern: an integrator restarting
  // after an event keeps its object and calls this (the system may even be another object at
  // the same address).
  void Restart() {
    dense_rows_valid_ = false;
    last_dense_ok_ = false;
    penalty_valid_ = false;
    mass_factored_ = false;
    sparse_mass_factored_ = false;
    redundant_rows_valid_ = false;
  }

  // Restart for a caller that knows the system is the same object as before (an integrator
  // continuing a phase across an impact, Integrator::Reset's continue_step): the factor of a
  // constant M, computed from the same M, stays; everything else is forgotten as by Restart.
  void RestartSameSystem() {
    const bool keep_mass = mass_factored_ && mass_constant_;
    Restart();
    mass_factored_ = keep_mass;
  }

  // Dense, sparse or automatic (the default; see engine::LinearAlgebra). kSparse still falls back
  // to dense when the system has no block structure or W is singular.
  void set_linear_algebra(LinearAlgebra mode) { linear_algebra_ = mode; }
  LinearAlgebra linear_algebra() const { return linear_algebra_; }

 private:
  // No rows and a constant M whose factor the phase's first call computed (M⁻¹ x for a diagonal
  // M is x times the stored inverse diagonal, else two triangular solves): v̇ = M⁻¹ F(t, q, v)
  // and λ empty, the numbers of the general path without its bookkeeping (a free flight's
  // stages are all such calls). False, with nothing computed, where it does not apply: the
  // first call after Restart, a varying M, or a system the sparse path is tried on first.
  bool SolveUnconstrained(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                          Eigen::VectorXd* vdot, Eigen::VectorXd* lambda, DynamicsStatus* status);
  // The non-symmetric path for H ≠ G (header), after M is factored and MinvF_ = M⁻¹F formed.
  DynamicsStatus SolveNonIdeal(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                               std::span<const int> rows, Eigen::VectorXd* vdot,
                               Eigen::VectorXd* lambda);
  // The sparse path; false when it does not apply (no structure, W singular, inconsistent), and
  // the dense path must be taken.
  bool SolveSparse(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                   std::span<const int> rows, Eigen::VectorXd* vdot, Eigen::VectorXd* lambda,
                   DynamicsStatus* status);
  // W_ = G_ M⁻¹ G_ᵀ from G_ and MinvGt_ (M⁻¹G_ᵀ): by the columns' nonzero rows when M is
  // diagonal and G sparse enough (joint rows touch one or two bodies), else the dense product.
  void FormDelassus();
  // Factors M(q) unless it is constant and already factored; false when M is not positive
  // definite.
  bool FactorMass(const Eigen::VectorXd& q);
  // out ← M⁻¹ x (nv), X ← M⁻¹ X (nv × k), with the factor of FactorMass.
  void ApplyMinv(const Eigen::VectorXd& x, Eigen::VectorXd* out) const;
  void ApplyMinvInPlace(Eigen::MatrixXd* X) const;
  // Factors W_ for the given rows (LDLᵀ, or the rank-revealing solver for redundant rows or
  // near a rank drop) and sets status->rank and status->pivot_ratio.
  void FactorDelassus(std::span<const int> rows, DynamicsStatus* status);
  // LDLᵀ of W_; returns min/max of its pivots (0 when W_ is not positive definite).
  double FactorDelassusLdlt();
  // FactorDelassus for the non-symmetric W_ of SolveNonIdeal (LU or the rank-revealing solver).
  void FactorNonSymmetricDelassus(std::span<const int> rows, DynamicsStatus* status);
  // LU with partial pivoting of W_; returns min/max of its |pivots| (0 when singular).
  double FactorDelassusLu();
  // x (m) ← W⁺ b with the factorization chosen by FactorDelassus or FactorNonSymmetricDelassus.
  void SolveDelassus(const Eigen::VectorXd& b, Eigen::VectorXd* x);

  const MechanicalSystem& system_;
  double rank_tolerance_ = 1e-10;
  Eigen::MatrixXd M_, G_, MinvGt_, W_, H_;
  Eigen::VectorXd F_, gamma_, MinvF_, rhs_, residual_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  bool mass_factored_ = false;  // llt_ (or minv_diagonal_) holds M (reused when M is constant)
  bool mass_constant_ = false;  // the system's HasConstantMassMatrix at the last FactorMass
  bool mass_diagonal_ = false;  // M diagonal: M⁻¹ is minv_diagonal_ (llt_ unused)
  Eigen::VectorXd minv_diagonal_;
  // FormDelassus: the nonzero rows of each column of G (column k: column_rows_[column_start_[k]
  // … column_start_[k + 1])).
  std::vector<int> column_start_, column_rows_;
  PivotedLdlt w_ldlt_;               // W when well conditioned
  bool w_by_ldlt_ = false;           // the last dense factorization of W is w_ldlt_
  DenseLu w_lu_;                     // non-symmetric W when well conditioned
  bool w_by_lu_ = false;             // the last dense factorization of W is w_lu_
  MinNormSolver w_solver_;           // W with redundant rows or near a rank drop
  std::vector<int> redundant_rows_;  // row set on which W was rank-deficient
  bool redundant_rows_valid_ = false;
  PenaltyMinNormSolver penalty_;  // refinement near singular configurations
  Eigen::VectorXd refine_rhs_, delta_, delta_lambda_, correction_;
  bool last_dense_ok_ = false;  // G_, MinvGt_, W_ hold the last Solve's (RemoveConstrainedPart)
  bool penalty_valid_ = false;  // penalty_ factored for them
  // Sparse path.
  LinearAlgebra linear_algebra_ = LinearAlgebra::kAuto;
  MassBlocks mass_blocks_;
  BlockSparseRows G_sparse_;
  SparseDelassus delassus_;
  bool sparse_mass_factored_ = false;
  std::vector<int> dense_rows_;  // row set on which W was singular: dense path directly
  bool dense_rows_valid_ = false;
};

}  // namespace saltus::engine
