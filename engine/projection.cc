#include "engine/projection.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/constrained_dynamics.h"

namespace saltus::engine {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
// Factor of the round-off floor on the residual (see projection.h).
constexpr double kFloorFactor = 16.0;

void ValidateOptions(const ProjectionOptions& options, const char* where) {
  if (!(options.tolerance > 0.0)) {
    throw std::invalid_argument(std::string(where) + ": tolerance must be > 0, got " +
                                std::to_string(options.tolerance));
  }
  if (options.max_iterations < 1) {
    throw std::invalid_argument(std::string(where) + ": max_iterations must be >= 1, got " +
                                std::to_string(options.max_iterations));
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
// N⁻¹Gᵀ (nv × m) and the rank-revealing factorization of W = G N⁻¹ Gᵀ.
class MetricProjector {
 public:
  MetricProjector(const MechanicalSystem& system, const Eigen::VectorXd& q,
                  const ProjectionOptions& options)
      : options_(options) {
    if (options.metric == ProjectionMetric::kMass) {
      Eigen::MatrixXd M;
      system.MassMatrix(q, &M);
      llt_.compute(M);
      use_identity_ = false;
      ok_ = llt_.info() == Eigen::Success;
    }
  }

  bool ok() const { return ok_; }

  // Factors W at the Jacobian G.
  void Factor(const Eigen::MatrixXd& G) {
    NinvGt_ = G.transpose();
    if (!use_identity_) llt_.solveInPlace(NinvGt_);
    W_.noalias() = G * NinvGt_;
    solver_.Compute(W_, options_.rank_tolerance);
  }
  int rank() const { return solver_.rank(); }

  // correction = −N⁻¹ Gᵀ W⁺ r, the N-metric least-norm δ with G δ = −r.
  void Correction(const Eigen::VectorXd& r, Eigen::VectorXd* correction) {
    solver_.Solve(r, &multiplier_);
    correction->noalias() = -(NinvGt_ * multiplier_);
  }

 private:
  const ProjectionOptions& options_;
  bool use_identity_ = true;
  bool ok_ = true;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::MatrixXd NinvGt_, W_;
  MinNormSolver solver_;
  Eigen::VectorXd multiplier_;
};

bool AllFinite(const Eigen::VectorXd& x) { return x.allFinite(); }

}  // namespace

ProjectionResult ProjectPositions(const MechanicalSystem& system, double t,
                                  std::span<const int> rows, const ProjectionOptions& options,
                                  Eigen::VectorXd* q) {
  constexpr const char* kWhere = "ProjectPositions";
  ValidateOptions(options, kWhere);
  CheckSize(*q, system.nq(), "q", kWhere);
  ProjectionResult result;
  if (rows.empty()) return result;

  Eigen::VectorXd g;
  system.ConstraintValues(t, *q, rows, &g);
  double residual = g.lpNorm<Eigen::Infinity>();
  result.residual = residual;
  const double tolerance = std::max(
      options.tolerance, kFloorFactor * kEps * std::max(1.0, q->lpNorm<Eigen::Infinity>()));
  if (!AllFinite(g)) {
    result.converged = false;
    return result;
  }
  if (residual <= tolerance) return result;

  MetricProjector projector(system, *q, options);
  if (!projector.ok()) {
    result.converged = false;
    return result;
  }
  Eigen::MatrixXd G;
  system.ConstraintJacobian(t, *q, rows, &G);
  projector.Factor(G);
  result.rank = projector.rank();

  // On failure q is left unchanged and result.residual keeps its initial value.
  Eigen::VectorXd q_k = *q;
  Eigen::VectorXd dq;
  for (int k = 1; k <= options.max_iterations; ++k) {
    projector.Correction(g, &dq);
    system.IntegratePosition(q_k, dq, 1.0, &q_k);
    system.ConstraintValues(t, q_k, rows, &g);
    const double next = g.lpNorm<Eigen::Infinity>();
    result.iterations = k;
    if (!AllFinite(q_k) || !AllFinite(g)) break;
    if (next <= tolerance) {
      *q = q_k;
      result.residual = next;
      return result;
    }
    // Contraction slower than 1/2 (large initial violation): refresh the Jacobian, which turns
    // the simplified Newton into Newton's method from here on.
    if (next > 0.5 * residual) {
      system.ConstraintJacobian(t, q_k, rows, &G);
      projector.Factor(G);
    }
    residual = next;
  }
  result.converged = false;
  return result;
}

ProjectionResult ProjectVelocities(const MechanicalSystem& system, double t,
                                   const Eigen::VectorXd& q, std::span<const int> rows,
                                   const ProjectionOptions& options, Eigen::VectorXd* v) {
  constexpr const char* kWhere = "ProjectVelocities";
  ValidateOptions(options, kWhere);
  CheckSize(q, system.nq(), "q", kWhere);
  CheckSize(*v, system.nv(), "v", kWhere);
  ProjectionResult result;
  if (rows.empty()) return result;

  Eigen::MatrixXd G;
  Eigen::VectorXd g_t;
  system.ConstraintJacobian(t, q, rows, &G);
  system.ConstraintTimeDerivative(t, q, rows, &g_t);
  Eigen::VectorXd r = g_t;
  r.noalias() += G * *v;
  result.residual = r.lpNorm<Eigen::Infinity>();
  if (!AllFinite(r)) {
    result.converged = false;
    return result;
  }
  const double tolerance =
      std::max(options.tolerance, kFloorFactor * kEps *
                                      (G.lpNorm<Eigen::Infinity>() * v->lpNorm<Eigen::Infinity>() +
                                       g_t.lpNorm<Eigen::Infinity>()));
  if (result.residual <= tolerance) return result;

  MetricProjector projector(system, q, options);
  if (!projector.ok()) {
    result.converged = false;
    return result;
  }
  projector.Factor(G);
  result.rank = projector.rank();
  // On failure v is left unchanged and result.residual keeps its initial value.
  Eigen::VectorXd v_k = *v;
  Eigen::VectorXd dv;
  for (int k = 1; k <= options.max_iterations; ++k) {
    projector.Correction(r, &dv);
    v_k += dv;
    r = g_t;
    r.noalias() += G * v_k;
    result.iterations = k;
    const double next = r.lpNorm<Eigen::Infinity>();
    if (!AllFinite(r)) break;
    if (next <= tolerance) {
      *v = v_k;
      result.residual = next;
      return result;
    }
  }
  result.converged = false;
  return result;
}

}  // namespace saltus::engine
