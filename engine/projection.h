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
// solve, refined by the same factorization while the residual is above tolerance (iterative
// refinement). Nothing is changed when `rows` is empty.
//
// The simplified Newton keeps G and W of the starting point and re-evaluates them only when an
// iteration reduces ‖g‖∞ by less than half, so the update q̃ − q lies in range(N⁻¹ Gᵀ(q)): q̃ is
// the N-metric closest point of the manifold to first order in the distance.
// On failure the returned residual is the one of the unchanged input.
//
// Tolerance: an absolute bound on the residual, raised to the round-off floor of evaluating it,
// 16ε·max(1, ‖q‖∞) for positions and 16ε·(‖G‖∞‖v‖∞ + ‖∂g/∂t‖∞) for velocities (ε the machine
// epsilon; ‖G‖∞ the largest entry), since no iteration can go below the error of its own residual.
// On failure (no convergence within max_iterations, a non-finite iterate, or inconsistent
// redundant rows) q or v is left unchanged and converged = false; the caller decides. Invalid
// options or wrong sizes throw std::invalid_argument. These functions allocate their workspace
// (they run after events, not per step).
#pragma once

#include <Eigen/Dense>
#include <span>

#include "engine/block_sparse.h"
#include "engine/mechanical_system.h"

namespace saltus::engine {

enum class ProjectionMetric { kMass, kIdentity };

struct ProjectionOptions {
  ProjectionMetric metric = ProjectionMetric::kMass;
  double tolerance = 1e-12;  // on ‖g‖∞ (positions) and ‖G v + ∂g/∂t‖∞ (velocities), > 0
  int max_iterations = 20;        // ≥ 1
  double rank_tolerance = 1e-10;  // relative pivot threshold of W's rank-revealing QR, in (0, 1)
  // Dense or block-sparse factorization of W (engine/block_sparse.h); kAuto: sparse when the
  // system provides its block structure and nv ≥ kSparseMinimumNv. A singular sparse W (redundant
  // rows) falls back to the dense rank-revealing path.
  LinearAlgebra linear_algebra = LinearAlgebra::kAuto;
};

struct ProjectionResult {
  bool converged = true;
  int iterations = 0;   // Newton (positions) or refinement (velocities) updates applied
  double residual = 0;  // ‖·‖∞ of the constraint at the returned q or v
  int rank = 0;         // numerical rank of G on the rows (0 when nothing was factorized)
};

ProjectionResult ProjectPositions(const MechanicalSystem& system, double t,
                                  std::span<const int> rows, const ProjectionOptions& options,
                                  Eigen::VectorXd* q);
ProjectionResult ProjectVelocities(const MechanicalSystem& system, double t,
                                   const Eigen::VectorXd& q, std::span<const int> rows,
                                   const ProjectionOptions& options, Eigen::VectorXd* v);

}  // namespace saltus::engine
