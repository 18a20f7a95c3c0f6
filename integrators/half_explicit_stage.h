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
// Non-ideal constraint forces (MechanicalSystem::HasNonIdealForces, sliding friction): the
// force directions of stage i are H(Q_i, V_i, t_i) instead of G(Q_i) in the first block row
// (M V̇_i = F + H_iᵀ Λ_i) and in W̃ = G_{i+1} M⁻¹ H_iᵀ below; the constraint rows are unchanged.
// Velocity-level rows need nothing special: the stages impose velocity constraints only.
//
// Solution: with a Cholesky factorization of M(Q_i) (never inverted), the unknown solved for is
// μ = α Λ (so that α = 0 is allowed, as the dense output needs):
//   W̃ μ = −(G_{i+1} (ṽ + α M⁻¹F) + ∂g/∂t),   W̃ = G_{i+1} M⁻¹ G_iᵀ (m × m, not symmetric),
//   V_{i+1} = ṽ + α M⁻¹F + M⁻¹ G_iᵀ μ,   V̇_i = M⁻¹F + M⁻¹ G_iᵀ μ / α.
//
// Redundant and rank-changing constraints (Haddouni et al. 2017, Sec. 4.5): consistent rank
// reduction. Once per step the integrator calls SelectRows at the step's start q_n: a
// column-pivoted (rank-revealing) Householder QR of G(q_n)ᵀ picks r independent rows S (pivot
// |R_kk| above select_tolerance × |R_00|, default 1e-8 = the stage residual tolerance, so that rows
// dependent to the constraint tolerance count as redundant). Every stage of that step then imposes
// only the rows S: G_S(Q_{i+1}) and G_S(Q_i) replace G in the stage system, W̃_S = G_S(Q_{i+1}) M⁻¹
// G_S(Q_i)ᵀ (r × r) is factored by a complete orthogonal decomposition with a relative pivot
// threshold (rank_tolerance) and μ_S is its minimum-norm least-squares solution; the dropped rows
// carry no multiplier. Using the same S at both stage points makes the reduction consistent: near
// the manifold the redundant Jacobian is only nearly rank-deficient (its smallest singular value is
// of the order of the position drift of the explicit stage point), and a per-stage rank decision
// (or a least-squares solve on all rows) reads that as a rank change.
// After the solve every row's velocity residual ρ_k = G_k(Q_{i+1}) V_{i+1} + ∂g_k/∂t is checked:
//   kept rows:    |ρ_k| ≤ tol · scale  (round-off of the solve),
//   dropped rows: |ρ_k| ≤ tol · scale + κ ‖g(Q_{i+1})‖∞ ‖V_{i+1}‖∞,  κ = 10 m⁻¹,
// where the second term is what a row that is a combination of the kept rows on the manifold
// g = 0 leaves off it: its Jacobian deviates from that combination by O(‖g‖) times the curvature
// of the constraints (κ = 10 m⁻¹: Jacobians varying on scales of 0.1 m and more; measured on
// Bricard, 1 m links in quaternion coordinates: ρ_k ≤ 3 ‖g‖ ‖V‖). A genuine rank
// change (a row independent of S at Q_{i+1}, e.g. a contact that stops being redundant) leaves a
// residual of the order of ‖Q_{i+1} − q_n‖ ≫ ‖g‖; the stage then reports kInconsistent with the
// rows whose residual exceeded the bound, and the integrator rejects the step and retries smaller.
// Without SelectRows (or after a change of the row count) all rows are kept.
//
// Symbols: nv velocities, m = rows.size() active rows. The object owns its workspace; after the
// first call with given sizes it does not allocate (except for the failure report).
#pragma once

#include <Eigen/Dense>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/mechanical_system.h"
#include "integrators/integrator.h"

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

  // Chooses the independent rows S at (t, q) (see above); once per step, before the stages.
  // Returns r = |S|. kNonFinite-free: a non-finite G keeps all rows (the stage then fails).
  int SelectRows(double t, const Eigen::VectorXd& q, std::span<const int> rows);
  // |R_rr| / |R_00| of the last SelectRows' QR for its last kept row (~ σ_min/σ_max of the kept
  // rows' Jacobian; 1 without rows): falls towards a rank drop of G (hem5.h, near singular
  // configurations).
  double selection_pivot_ratio() const { return selection_pivot_ratio_; }
  // Near a singular configuration (hem5.h): selection_pivot_ratio() below 0.03 (≈ √1e-3, DOPRI5's
  // drop of the σ² pivot ratio) times `reference`, the largest ratio of the accepted steps.
  bool NearSingular(double reference) const { return selection_pivot_ratio_ < 0.03 * reference; }
  // Uses the row selection of another stage object (same rows).
  void CopySelection(const HalfExplicitStage& other);
  // Relative pivot threshold of SelectRows' rank-revealing QR, in (0, 1); default 1e-8.
  void set_select_tolerance(double tol);
  // Positions in `rows` of the kept (S) and dropped rows of the current selection.
  const std::vector<int>& kept() const { return kept_; }
  const std::vector<int>& dropped() const { return dropped_; }

  // Evaluates M, F and G at (t_i, Q_i, V_i) and factors M (once when the mass matrix is
  // constant). Must precede Solve. Returns kSingularMass or kNonFinite on failure.
  StageStatus Prepare(double t_i, const Eigen::VectorXd& Q_i, const Eigen::VectorXd& V_i,
                      std::span<const int> rows);

  // Solves the stage with the prepared (M_i, F_i, G_i) and the constraint at (t_next, Q_next):
  // V_next (nv) = ṽ + α V̇; vdot (nv) = V̇ when α ≠ 0 (PHEM56 has a negative â_55; left unspecified
  // when α = 0).
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
  double select_tolerance_ = 1e-8;
  double selection_pivot_ratio_ = 1.0;
  std::vector<int> kept_, dropped_;  // positions in rows
  std::size_t selection_rows_ = 0;   // rows.size() the selection was made for
  bool reduced_ = false;             // some row dropped
  Eigen::MatrixXd G_full_, G_sel_;
  Eigen::VectorXd rhs_full_, g_;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> select_qr_;
  void EnsureSelection(std::size_t m);
  std::vector<int> offending_rows_;
  double last_residual_ = 0;
  int last_rank_ = 0;
  long factorizations_ = 0;
};

// The step status for a failed stage `stage` (0-based) of `scheme` in the step from t of size h,
// and in *message why: NaN/Inf (kNonFinite), M not positive definite (kLinearSolveFailure), or a
// stage system that cannot satisfy the velocity constraint (kLinearSolveFailure), naming its
// residual, rank and the constraints involved (stage.offending_rows()).
StepStatus DescribeStageFailure(const HalfExplicitStage& stage_system, StageStatus s,
                                std::string_view scheme, int stage, double t, double h,
                                const engine::MechanicalSystem& system, std::size_t num_rows,
                                std::string* message);

}  // namespace saltus::integrators
