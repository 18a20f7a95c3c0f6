// Projection of positions and velocities onto the constraint manifold (Haddouni et al. 2017,
// eq. 35 and 36; Hairer, Lubich & Wanner, Geometric Numerical Integration, Sec. IV.4):
//
//   positions  (35):  N(q)(q̃ − q) + Gᵀ(q̃) μ = 0,   g(q̃, t) = 0,
//   velocities (36):  N(q̃)(ṽ − v) + Gᵀ(q̃) η = 0,   G(q̃) ṽ + ∂g/∂t = 0,
//
// on the given rows, with the metric N = M (default) or N = I. Positions are solved by a
// simplified Newton iteration q_{k+1} = q_k ⊕ (−N⁻¹ Gᵀ W⁺ g(q_k)), W = G N⁻¹ Gᵀ, with a
// rank-revealing factorization of W so that redundant rows (rank-deficient G) are handled; the
// position update goes through MechanicalSystem::IntegratePosition. Velocities are one linear
// solve. Nothing is changed when `rows` is empty.
#pragma once

#include <Eigen/Dense>
#include <span>

#include "engine/mechanical_system.h"

namespace saltus::engine {

enum class ProjectionMetric { kMass, kIdentity };

struct ProjectionOptions {
  ProjectionMetric metric = ProjectionMetric::kMass;
  double tolerance = 1e-12;  // on ‖g‖∞ (positions) and ‖G v + ∂g/∂t‖∞ (velocities)
  int max_iterations = 20;
};

struct ProjectionResult {
  bool converged = true;
  int iterations = 0;
  double residual = 0;  // ‖·‖∞ of the constraint after the projection
};

ProjectionResult ProjectPositions(const MechanicalSystem& system, double t,
                                  std::span<const int> rows, const ProjectionOptions& options,
                                  Eigen::VectorXd* q);
ProjectionResult ProjectVelocities(const MechanicalSystem& system, double t,
                                   const Eigen::VectorXd& q, std::span<const int> rows,
                                   const ProjectionOptions& options, Eigen::VectorXd* v);

}  // namespace saltus::engine
