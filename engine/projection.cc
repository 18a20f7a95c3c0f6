#include "engine/projection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/constrained_dynamics.h"

namespace saltus::engine {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
// Factor of the round-off floor on the residual (see projection.h).
constexpr double kFloorFactor = 16.0;
// Positions asked for a tolerance below that floor keep iterating towards this lower one while
// the residual still halves (see projection.h); measured on the planar double four-bar, whose
// crank angles reach ~31 rad in 20 s: 16 ε ‖q‖∞ ≈ 1.1e-13 left a residual that stopped DOPRI5 at
// rtol 1e-10 (atol 1e-12) at t = 10.43 s, 2 ε ‖q‖∞ lets it run 20 s.
constexpr double kTightFloorFactor = 2.0;

void ValidateOptions(const ProjectionOptions& options, const char* where) {
  if (!(options.tolerance > 0.0)) {
    throw std::invalid_argument(std::string(where) + ": tolerance must be > 0, got " +
                                std::to_string(options.tolerance));
  }
  if (options.max_iterations < 1) {
    throw std::invalid_argument(std::string(where) + ": max_iterations must be >= 1, got " +
                                std::to_string(options.max_iterations));
  }
  if (!(options.stall_tolerance >= 0.0 && std::isfinite(options.stall_tolerance))) {
    throw std::invalid_argument(std::string(where) + ": stall_tolerance must be >= 0, got " +
                                std::to_string(options.stall_tolerance));
  }
  if (!(options.rank_tolerance > 0.0 && options.rank_tolerance < 1.0)) {
    throw std::invalid_argument(std::string(where) + ": rank_tolerance must be in (0, 1), got " +
                                std::to_string(options.rank_tolerance));
  }
}

void CheckSize(const Eigen::VectorXd& x, int expected, const char* what, const char* where) {
  if (x.size() != expected) {
    throw std::invalid_argument(std::string(where) + ": " + what + " has size " +
                                std::to_string(x.size()) + ", expected " +
                                std::to_string(expected));
  }
}

// The metric N and the factors that both projections need on a set of rows:
// N⁻¹Gᵀ (nv × m) and a factorization of W = G N⁻¹ Gᵀ: the dense rank-revealing one, or the
// block-sparse LDLᵀ (engine/block_sparse.h) when `sparse`.
class MetricProjector {
 public:
  MetricProjector(const MechanicalSystem& system, std::span<const int> rows,
                  const ProjectionOptions& options, bool sparse)
      : system_(system), rows_(rows), options_(options), sparse_(sparse) {}

  // Sets up N at q (factorizes M for the mass metric). False when M is not positive definite.
  bool SetMetric(double t, const Eigen::VectorXd& q) {
    if (options_.metric != ProjectionMetric::kMass) return true;
    if (sparse_) {
      system_.BlockSparseMatrices(t, q, {}, &blocks_, nullptr);
      return delassus_.SetMetric(blocks_);
    }
    system_.MassMatrix(q, &M_);
    use_identity_ = false;
    // A diagonal M (bodies with principal axes at their centres of mass): N⁻¹ entry by entry.
    mass_diagonal_ = M_.isDiagonal(0.0);
    if (mass_diagonal_) {
      minv_diagonal_ = M_.diagonal().cwiseInverse();
      return (M_.diagonal().array() > 0.0).all() && minv_diagonal_.allFinite();
    }
    llt_.compute(M_);
    return llt_.info() == Eigen::Success;
  }

  // Evaluates G at (t, q) (without factorizing).
  void Evaluate(double t, const Eigen::VectorXd& q) {
    if (sparse_) {
      system_.BlockSparseMatrices(t, q, rows_, nullptr, &G_sparse_);
    } else {
      system_.ConstraintJacobian(t, q, rows_, &G_);
    }
  }
  // y = G x for the last Evaluate.
  void Multiply(const Eigen::VectorXd& x, Eigen::VectorXd* y) const {
    if (sparse_) {
      G_sparse_.Multiply(x, y);
    } else {
      y->noalias() = G_ * x;
    }
  }
  double GMaxAbs() const {
    return sparse_ ? G_sparse_.MaxAbs() : (G_.size() > 0 ? G_.lpNorm<Eigen::Infinity>() : 0.0);
  }
  // Factors W at the last Evaluate. False (sparse only) when W is numerically singular.
  bool Factor() {
    if (sparse_) {
      if (options_.metric == ProjectionMetric::kIdentity) {
        delassus_.SetIdentityMetric(G_sparse_.block_size, G_sparse_.cols);
      }
      rank_ = static_cast<int>(rows_.size());
      return delassus_.Factor(G_sparse_, options_.rank_tolerance);
    }
    NinvGt_ = G_.transpose();
    if (!use_identity_ && mass_diagonal_) {
      NinvGt_ = minv_diagonal_.asDiagonal() * NinvGt_;
    } else if (!use_identity_) {
      llt_.solveInPlace(NinvGt_);
    }
    W_.noalias() = G_ * NinvGt_;
    // Well conditioned (smallest over largest pivot of the pivoted LDLᵀ above √(rank
    // tolerance), the test of ConstrainedDynamics): full rank, and the correction is the direct
    // solve. Otherwise the rank (reported only) from the rank-revealing QR, and the penalty
    // correction, which needs no rank decision.
    w_ldlt_.compute(W_);
    const auto d = w_ldlt_.vectorD();
    const double largest = d.size() > 0 ? d.maxCoeff() : 0.0;
    by_ldlt_ = w_ldlt_.info() == Eigen::Success && largest > 0.0 &&
               d.minCoeff() / largest > std::sqrt(options_.rank_tolerance);
    if (by_ldlt_) {
      rank_ = static_cast<int>(rows_.size());
      return true;
    }
    solver_.Compute(W_, options_.rank_tolerance);
    rank_ = solver_.rank();
    return penalty_.Compute(NinvGt_, W_);
  }
  int rank() const { return rank_; }

  // correction ≈ −N⁻¹ Gᵀ W⁺ r, the N-metric least-norm δ with G δ = −r; the dense path stops
  // once ‖G δ + r‖∞ ≤ tolerance (or after its iteration cap).
  void Correction(const Eigen::VectorXd& r, double tolerance, Eigen::VectorXd* correction) {
    if (sparse_) {
      delassus_.Solve(r, &multiplier_);
      correction->setZero(system_.nv());
      delassus_.AddNinvGt(-multiplier_, correction);
      return;
    }
    if (by_ldlt_) {
      multiplier_ = -r;
      w_ldlt_.solveInPlace(multiplier_);
      correction->noalias() = NinvGt_ * multiplier_;
      return;
    }
    // Penalty projection with conjugate gradients (engine/constrained_dynamics.h): no rank
    // decision, so a step near a singular configuration still gets its full correction.
    penalty_.Solve(-r, tolerance, correction);
  }

 private:
  const MechanicalSystem& system_;
  std::span<const int> rows_;
  const ProjectionOptions& options_;
  bool sparse_;
  bool use_identity_ = true;
  bool mass_diagonal_ = false;  // N⁻¹ is minv_diagonal_ (llt_ unused)
  bool by_ldlt_ = false;        // W factored by w_ldlt_ (well conditioned)
  int rank_ = 0;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd minv_diagonal_;
  Eigen::LDLT<Eigen::MatrixXd> w_ldlt_;
  Eigen::MatrixXd M_, G_, NinvGt_, W_;
  PenaltyMinNormSolver penalty_;
  MinNormSolver solver_;
  MassBlocks blocks_;
  BlockSparseRows G_sparse_;
  SparseDelassus delassus_;
  Eigen::VectorXd multiplier_;
};

bool AllFinite(const Eigen::VectorXd& x) { return x.allFinite(); }

// Whether to try the block-sparse path: the system provides it and the options or the size ask.
bool UseSparse(const MechanicalSystem& system, double t, const Eigen::VectorXd& q,
               const ProjectionOptions& options) {
  if (options.linear_algebra == LinearAlgebra::kDense) return false;
  if (options.linear_algebra == LinearAlgebra::kAuto && system.nv() < kSparseMinimumNv) {
    return false;
  }
  return system.BlockSparseMatrices(t, q, {}, nullptr, nullptr);
}

// One projection attempt; *singular is set when the sparse W is singular (the caller then
// repeats with the dense path).
ProjectionResult ProjectPositionsWith(const MechanicalSystem& system, double t,
                                      std::span<const int> rows, const ProjectionOptions& options,
                                      bool sparse, Eigen::VectorXd* q, bool* singular) {
  ProjectionResult result;
  *singular = false;
  Eigen::VectorXd g;
  system.ConstraintValues(t, *q, rows, &g);
  double residual = g.lpNorm<Eigen::Infinity>();
  result.residual = residual;
  const double q_scale = std::max(1.0, q->lpNorm<Eigen::Infinity>());
  const double tolerance = std::max(options.tolerance, kFloorFactor * kEps * q_scale);
  // Below the floor: iterate towards the lower one while it pays, succeed on the floor.
  const double target = std::max(options.tolerance, kTightFloorFactor * kEps * q_scale);
  if (!AllFinite(g)) {
    result.converged = false;
    return result;
  }
  if (residual <= target) return result;

  MetricProjector projector(system, rows, options, sparse);
  if (!projector.SetMetric(t, *q)) {
    result.converged = false;
    return result;
  }
  projector.Evaluate(t, *q);
  if (!projector.Factor()) {
    *singular = true;
    return result;
  }
  result.rank = projector.rank();

  // On failure q is left unchanged and result.residual keeps its initial value.
  Eigen::VectorXd q_k = *q;
  Eigen::VectorXd dq, q_best;
  double best = residual;  // the best residual within tolerance (the input's when it is)
  for (int k = 1; k <= options.max_iterations; ++k) {
    projector.Correction(g, 0.5 * target, &dq);
    system.IntegratePosition(q_k, dq, 1.0, &q_k);
    system.ConstraintValues(t, q_k, rows, &g);
    const double next = g.lpNorm<Eigen::Infinity>();
    result.iterations = k;
    if (!AllFinite(q_k) || !AllFinite(g)) break;
    if (next <= target) {
      *q = q_k;
      result.residual = next;
      return result;
    }
    if (next <= tolerance && next < best) {
      q_best = q_k;
      best = next;
    }
    if (next <= tolerance && next > 0.5 * residual) break;  // round-off: no more progress
    // Contraction slower than 1/2 (large initial violation): refresh the Jacobian, which turns
    // the simplified Newton into Newton's method from here on.
    if (next > 0.5 * residual) {
      projector.Evaluate(t, q_k);
      if (!projector.Factor()) {
        *singular = true;
        return result;
      }
    }
    residual = next;
  }
  if (best <= tolerance) {  // on the floor, not below it
    if (q_best.size() > 0) *q = q_best;
    result.residual = best;
    return result;
  }
  result.converged = false;
  return result;
}

ProjectionResult ProjectVelocitiesWith(const MechanicalSystem& system, double t,
                                       const Eigen::VectorXd& q, std::span<const int> rows,
                                       const ProjectionOptions& options, bool sparse,
                                       Eigen::VectorXd* v, bool* singular) {
  ProjectionResult result;
  *singular = false;
  MetricProjector projector(system, rows, options, sparse);
  projector.Evaluate(t, q);
  Eigen::VectorXd g_t;
  system.ConstraintTimeDerivative(t, q, rows, &g_t);
  Eigen::VectorXd r(static_cast<Eigen::Index>(rows.size())), Gv;
  projector.Multiply(*v, &Gv);
  r = g_t + Gv;
  result.residual = r.lpNorm<Eigen::Infinity>();
  if (!AllFinite(r)) {
    result.converged = false;
    return result;
  }
  const double tolerance = std::max(
      options.tolerance,
      kFloorFactor * kEps *
          (projector.GMaxAbs() * v->lpNorm<Eigen::Infinity>() + g_t.lpNorm<Eigen::Infinity>()));
  if (result.residual <= tolerance) return result;

  if (!projector.SetMetric(t, q)) {
    result.converged = false;
    return result;
  }
  if (!projector.Factor()) {
    *singular = true;
    return result;
  }
  result.rank = projector.rank();
  // On failure v is left unchanged and result.residual keeps its initial value.
  Eigen::VectorXd v_k = *v;
  Eigen::VectorXd dv, v_best;
  double best = result.residual;
  for (int k = 1; k <= options.max_iterations; ++k) {
    projector.Correction(r, 0.5 * tolerance, &dv);
    v_k += dv;
    projector.Multiply(v_k, &Gv);
    r = g_t + Gv;
    result.iterations = k;
    const double next = r.lpNorm<Eigen::Infinity>();
    if (!AllFinite(r)) break;
    if (next <= tolerance) {
      *v = v_k;
      result.residual = next;
      return result;
    }
    if (next < best) {
      best = next;
      v_best = v_k;
    }
  }
  if (v_best.size() > 0 && best <= options.stall_tolerance) {  // header: stall_tolerance
    *v = v_best;
    result.residual = best;
    return result;
  }
  result.converged = false;
  return result;
}

}  // namespace

ProjectionResult ProjectPositions(const MechanicalSystem& system, double t,
                                  std::span<const int> rows, const ProjectionOptions& options,
                                  Eigen::VectorXd* q) {
  constexpr const char* kWhere = "ProjectPositions";
  ValidateOptions(options, kWhere);
  CheckSize(*q, system.nq(), "q", kWhere);
  // Velocity-level rows have no position constraint (header).
  const std::vector<int> position_rows = system.PositionLevelRows(rows);
  rows = position_rows;
  if (rows.empty()) return ProjectionResult();
  bool singular = false;
  if (UseSparse(system, t, *q, options)) {
    const ProjectionResult result =
        ProjectPositionsWith(system, t, rows, options, true, q, &singular);
    if (!singular) return result;
  }
  return ProjectPositionsWith(system, t, rows, options, false, q, &singular);
}

ProjectionResult ProjectVelocities(const MechanicalSystem& system, double t,
                                   const Eigen::VectorXd& q, std::span<const int> rows,
                                   const ProjectionOptions& options, Eigen::VectorXd* v) {
  constexpr const char* kWhere = "ProjectVelocities";
  ValidateOptions(options, kWhere);
  CheckSize(q, system.nq(), "q", kWhere);
  CheckSize(*v, system.nv(), "v", kWhere);
  if (rows.empty()) return ProjectionResult();
  bool singular = false;
  if (UseSparse(system, t, q, options)) {
    const ProjectionResult result =
        ProjectVelocitiesWith(system, t, q, rows, options, true, v, &singular);
    if (!singular) return result;
  }
  return ProjectVelocitiesWith(system, t, q, rows, options, false, v, &singular);
}

}  // namespace saltus::engine
