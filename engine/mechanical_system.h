// The constrained mechanical system that integrators, contact solvers and the event loop see.
//
//   q̇ = T(q) v,     M(q) v̇ = F(q, v, t) + Gᵀ(q, t) λ,     g(q, t) = 0 on the active rows,
//
// (Haddouni et al. 2017, eq. 6). Sizes: q (nq), v (nv), M (nv × nv, symmetric positive definite),
// F (nv, applied + gyroscopic forces). Constraint rows come in blocks (engine::ConstraintBlock):
// joints and drivers are bilateral rows (set B), contacts are unilateral rows (set U); every row
// has one global index in [0, num_constraints()). For any subset of rows the system evaluates
//
//   g (m)          constraint values (for unilateral rows: the signed gap),
//   G (m × nv)     Jacobian with respect to v, so that ġ = G v + ∂g/∂t,
//   ∂g/∂t (m)      partial time derivative (non-zero for rheonomic rows only),
//   γ (m)          acceleration term, g̈ = G v̇ + γ, i.e. γ = Ġ v + ∂(∂g/∂t)/∂q · q̇ + ∂²g/∂t².
//
// The position update q ⊕ h v (IntegratePosition) is the only way integrators and projections
// move q, so that spatial bodies can use the exponential map for their quaternions.
//
// Non-ideal constraint forces (sliding friction). The force of an active row may act along a
// direction other than its Jacobian:
//
//   M(q) v̇ = F(q, v, t) + Hᵀ(q, v, t) λ,   G v̇ + γ = 0 (or the index-2/3 forms),
//
// H (m × nv) = G for every row of an ideal system (the default). A sliding contact's normal row
// has H_n = G_n − μ d·G_T (its tangential rows G_T, d the slip direction): the normal force λ_N
// brings the Coulomb force −μ λ_N d with it (engine/sliding_friction.h). H differs from G only
// through ForceDirections, and only when HasNonIdealForces() is true; integrators query it at
// every Reset (it may change between smooth phases, never within one) and take exactly their
// ideal code path when it is false.
//
// Velocity-level rows (ConstraintLevel::kVelocity: the tangential rows of a sticking contact,
// engine/constraint_block.h) have no position constraint: formulations that enforce g = 0
// enforce G v + ∂g/∂t = 0 on them instead, and their g is never used as a constraint.
//
// A system is built once and then only read: every method is const and thread-compatible.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/constraint_block.h"

namespace saltus::engine {

struct MassBlocks;       // engine/block_sparse.h
struct BlockSparseRows;  // engine/block_sparse.h

class MechanicalSystem {
 public:
  virtual ~MechanicalSystem();

  virtual int nq() const = 0;
  virtual int nv() const = 0;

  // M(q), resized to nv × nv.
  virtual void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const = 0;
  // True when M does not depend on q (planar bodies, linear systems): solvers may then factorize
  // it once. The default is false.
  virtual bool HasConstantMassMatrix() const { return false; }
  // F(q, v, t), resized to nv.
  virtual void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                      Eigen::VectorXd* F) const = 0;
  // q_next = q ⊕ h v. The default is the vector-space update q + h v (valid when T = I).
  // q_next may alias q.
  virtual void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                                 Eigen::VectorXd* q_next) const;
  // θ = q ⊖ q_base, the tangent increment with q_base ⊕ θ = q (inverse of IntegratePosition at
  // h = 1; for rotations the logarithm of the relative rotation), resized to nv. Multistep
  // methods keep past positions as such increments relative to the current point (BDF). Returns
  // false when the system cannot compute it; the default is q − q_base when nq = nv and false
  // otherwise (a system with nq = nv and a nonlinear IntegratePosition must override it).
  virtual bool PositionDifference(const Eigen::VectorXd& q, const Eigen::VectorXd& q_base,
                                  Eigen::VectorXd* theta) const {
    if (nq() != nv()) return false;
    *theta = q - q_base;
    return true;
  }
  // Along a curve q(t) = q₀ ⊕ θ(t) (θ ∈ R^nv), the velocity v(t) and the rate of the tangent
  // increment are related by θ̇ = dexp⁻¹_θ(v). Lie-group Runge–Kutta methods of Munthe-Kaas type
  // integrate θ with this map so that they keep their order on rotations (Hairer, Lubich &
  // Wanner, Geometric Numerical Integration, Sec. IV.8). The default is the identity (vector
  // spaces, where θ̇ = v). theta_dot may not alias theta or v.
  virtual void DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
                       Eigen::VectorXd* theta_dot) const {
    (void)theta;
    *theta_dot = v;
  }
  // Kinetic energy ½ vᵀ M(q) v.
  double KineticEnergy(const Eigen::VectorXd& q, const Eigen::VectorXd& v) const;
  // Potential energy of the conservative forces, when the system knows it (0 otherwise).
  virtual double PotentialEnergy(double t, const Eigen::VectorXd& q) const;

  // ---- Tangent matrices for implicit integrators -------------------------------------------
  // Derivatives along the position update q ⊕ δ (δ ∈ R^nv, see IntegratePosition), so every
  // matrix is nv × nv whatever nq is:
  //   K = −∂F/∂q,   C = −∂F/∂v                    (tangent stiffness and damping of the forces),
  //   K_M = ∂(M(q) a)/∂q                          (inertial term; zero when M is constant),
  //   K_G = ∂(G(q, t)ᵀ λ)/∂q  for the given rows   (geometric stiffness of the constraints).
  // They form the iteration matrix of the generalized-α, BDF and half-implicit schemes
  // (Haddouni et al. 2017, eq. 17: S_t = M β' + C_t γ' + K_t, K_t = K_M + K + K_G).
  // The defaults are central finite differences: column j uses ±ε_j along δ = e_j with
  // ε_j = ∛(machine ε) · max(1, |x|∞) (x = q or v), about 6e-6 for unit-size coordinates,
  // which balances the O(ε²) truncation error against the O(machine ε / ε) round-off; the error
  // is then about 1e-10 relative to the size of the forces. Subclasses override them with
  // analytic versions where cheap. Outputs are resized; K or C may be null (not computed).
  virtual void ForceJacobians(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              Eigen::MatrixXd* K, Eigen::MatrixXd* C) const;
  // K_M = ∂(M(q) a)/∂q (nv × nv) for a given a (nv). Zero when HasConstantMassMatrix().
  virtual void MassMatrixProductJacobian(const Eigen::VectorXd& q, const Eigen::VectorXd& a,
                                         Eigen::MatrixXd* K_M) const;
  // K_G = ∂(G(q, t)ᵀ λ)/∂q (nv × nv) for `rows` and λ (rows.size()). Computed by central finite
  // differences of Gᵀλ with the step above; throws std::invalid_argument when λ has the wrong size.
  virtual void ConstraintForceJacobian(double t, const Eigen::VectorXd& q,
                                       std::span<const int> rows, const Eigen::VectorXd& lambda,
                                       Eigen::MatrixXd* K_G) const;
  // Z = ∂(G(q, t) v + ∂g/∂t)/∂q (rows.size() × nv) at fixed v: the position derivative of the
  // velocity constraint, needed in the iteration matrices of index-2 and GGL schemes. Central
  // finite differences with the step above.
  virtual void ConstraintVelocityJacobian(double t, const Eigen::VectorXd& q,
                                          const Eigen::VectorXd& v, std::span<const int> rows,
                                          Eigen::MatrixXd* Z) const;

  // ---- Force directions of the constraint rows (see the header) ----------------------------
  // True when ForceDirections may differ from ConstraintJacobian (the default is false). Fixed
  // between two Resets of an integrator on this system.
  virtual bool HasNonIdealForces() const { return false; }
  // H (rows.size() × nv, resized) at (t, q, v) for `rows` (global, as ConstraintJacobian), so
  // that the constraint forces are Hᵀ λ. The default is G (ideal constraints). Throws
  // std::out_of_range on a row outside the system.
  virtual void ForceDirections(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                               std::span<const int> rows, Eigen::MatrixXd* H) const {
    (void)v;
    ConstraintJacobian(t, q, rows, H);
  }
  // The same H when the caller already holds G = ConstraintJacobian(t, q, rows) (H must not
  // alias G): a system whose H is G plus a correction overrides this to start from G instead of
  // evaluating it again. The default ignores G and calls ForceDirections, so a system (or a
  // wrapper) that overrides only ForceDirections stays correct.
  virtual void ForceDirectionsFromJacobian(double t, const Eigen::VectorXd& q,
                                           const Eigen::VectorXd& v, std::span<const int> rows,
                                           const Eigen::MatrixXd& G, Eigen::MatrixXd* H) const {
    (void)G;
    ForceDirections(t, q, v, rows, H);
  }

  // ---- Block-sparse structure (optional, for large mechanisms; engine/block_sparse.h) -------
  // The diagonal blocks of M(q) (when M is non-null) and G(q, t) on `rows` as block-sparse rows
  // (when G is non-null; blocks = the velocities of one body), in O(nv + nnz) without forming the
  // dense matrices. Returns false when the system does not provide them (the default): solvers
  // then use MassMatrix and ConstraintJacobian.
  virtual bool BlockSparseMatrices(double /*t*/, const Eigen::VectorXd& /*q*/,
                                   std::span<const int> /*rows*/, MassBlocks* /*M*/,
                                   BlockSparseRows* /*G*/) const {
    return false;
  }

  // Names of the coordinates, used for output columns ("<body>.<coordinate>", "<body>.v<...>").
  virtual std::string PositionName(int i) const;
  virtual std::string VelocityName(int i) const;

  // ---- Force elements evaluated explicitly from the last accepted step ---------------------
  // Some force elements use the constraint forces of the previous step, e.g. Coulomb friction in
  // a joint from its normal force (half-implicit seed, Sec. 3.4: "evaluated explicitly based on
  // the joint normal force from the previous step"). When UsesAcceptedSteps() is true every
  // integrator (Integrator::Reset and every accepted Integrator::Step, so also inside the event
  // loop) calls AcceptStep with the index-1 multipliers λ of the active `rows` at (t, q, v); the
  // system keeps what it needs in mutable members (such a system is not thread-compatible and
  // serves one simulation at a time). Defaults: false / nothing.
  virtual bool UsesAcceptedSteps() const { return false; }
  virtual void AcceptStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                          std::span<const int> rows, const Eigen::VectorXd& lambda) const {
    (void)t, (void)q, (void)v, (void)rows, (void)lambda;
  }

  // ---- Constraint rows -------------------------------------------------------------------
  // Appends a block; its rows get the next global indices. Returns the first of them.
  // Call only while building the system (before it is shared with a simulation). Throws
  // std::invalid_argument when a tangential or resistance row's normal_row is not a unilateral row
  // of the block, or a unilateral row has friction, rolling_friction or spinning_friction < 0 (or
  // NaN), friction > 0 without tangential rows, rolling_friction > 0 without exactly two rolling
  // rows or spinning_friction > 0 without exactly one spinning row.
  int AddConstraintBlock(std::shared_ptr<const ConstraintBlock> block);

  int num_constraints() const { return static_cast<int>(row_block_.size()); }
  const ConstraintRowInfo& constraint_info(int row) const;
  // True for a velocity-level row (ConstraintLevel::kVelocity). Throws std::out_of_range on a row
  // outside the system.
  bool IsVelocityLevel(int row) const {
    return constraint_info(row).level == ConstraintLevel::kVelocity;
  }
  // The position-level rows of `rows`, in their order (the rows whose g is a constraint).
  std::vector<int> PositionLevelRows(std::span<const int> rows) const;
  // All global rows of one kind, ascending.
  std::vector<int> RowsOfKind(ConstraintKind kind) const;
  // The tangential rows (global, ascending; empty for a frictionless or non-unilateral row) of a
  // unilateral row, and the unilateral row of a tangential row (−1 for other kinds). Throw
  // std::out_of_range on a row outside the system.
  std::span<const int> TangentRows(int normal_row) const;
  // The rolling rows (two) and the spinning row (one) of a unilateral row (empty when it has none
  // or is not unilateral). Throw std::out_of_range on a row outside the system.
  std::span<const int> RollingRows(int normal_row) const;
  std::span<const int> SpinningRows(int normal_row) const;
  // The unilateral row of a tangential or resistance row (−1 for other kinds).
  int NormalRow(int tangent_row) const;
  // The constraint blocks in the order of their rows (a view of this system can add the same
  // blocks to get the same global rows).
  const std::vector<std::shared_ptr<const ConstraintBlock>>& constraint_blocks() const {
    return blocks_;
  }

  // Global rows (ascending) that may reach a value ≤ margin within `horizon` at speeds bounded by
  // `speed_bound` (ConstraintBlock::CandidateRows of every block; all rows by default).
  void CandidateRows(const Eigen::VectorXd& q, const Eigen::VectorXd& speed_bound, double horizon,
                     double margin, std::vector<int>* rows) const;
  // Whether some block's CandidateRows reads speed_bound (ConstraintBlock).
  bool CandidateRowsDependOnSpeed() const;

  // Each fills its output for `rows` (global indices, any order, no duplicates), resizing it to
  // rows.size() (× nv for G). Throws std::out_of_range on a row index outside the system.
  void ConstraintValues(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                        Eigen::VectorXd* g) const;
  void ConstraintJacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                          Eigen::MatrixXd* G) const;
  void ConstraintTimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                                Eigen::VectorXd* g_t) const;
  void ConstraintGamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                       std::span<const int> rows, Eigen::VectorXd* gamma) const;
  // G and γ of `rows` (global, as above) at one (t, q, v) in one pass over the blocks
  // (ConstraintBlock::JacobianAndGamma): the numbers of ConstraintJacobian and ConstraintGamma.
  void ConstraintJacobianAndGamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                  std::span<const int> rows, Eigen::MatrixXd* G,
                                  Eigen::VectorXd* gamma) const;
  // g and ġ = G v + ∂g/∂t of `rows` (global, as above) at one (t, q, v): ConstraintBlock::
  // ValuesAndRates of each block that provides it, ConstraintValues and engine::ConstraintRate
  // (engine/block_sparse.h) for the rows of the others; the same numbers either way.
  void ConstraintValuesAndRates(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                std::span<const int> rows, Eigen::VectorXd* g,
                                Eigen::VectorXd* g_dot) const;
  // ConstraintBlock::AppendJacobianBlocks of the block holding `row` (global): true when the
  // block appended the row to *G. Throws std::out_of_range on a row outside the system.
  bool AppendConstraintJacobianBlocks(double t, const Eigen::VectorXd& q, int row,
                                      BlockSparseRows* G) const;

 private:
  // Splits `rows` into runs that belong to one block and calls `fn(block, local_rows, offset)`.
  template <class Fn>
  void ForEachBlockRun(std::span<const int> rows, Fn&& fn) const;

  std::vector<std::shared_ptr<const ConstraintBlock>> blocks_;
  std::vector<int> block_first_row_;  // global index of each block's first row
  std::vector<int> row_block_;        // block of each global row
  // The rows of one kind that belong to each global row r: rows[start[r] .. start[r + 1]).
  struct RowsByNormal {
    std::vector<int> start{0}, rows;
    std::span<const int> Of(int r) const;
  };
  RowsByNormal tangent_, rolling_, spinning_;
  // Per global row: its unilateral row (tangential and resistance rows), else −1.
  std::vector<int> normal_row_;
};

}  // namespace saltus::engine
