// Projection of positions and velocities onto the constraint manifold (Haddouni et al. 2017,
// eq. 35 and 36; Hairer, Lubich & Wanner, Geometric Numerical Integration, Sec. IV.4):
//
//   positions  (35):  N(q)(q̃ − q) + Gᵀ(q̃) μ = 0,   g(q̃, t) = 0,
//   velocities (36):  N(q̃)(ṽ − v) + Gᵀ(q̃) η = 0,   G(q̃) ṽ + ∂g/∂t = 0,
//
// on the given rows, with the metric N = M (default) or N = I. Velocity-level rows
// (ConstraintLevel::kVelocity, nonholonomic: no position constraint) are skipped by
// ProjectPositions and kept by ProjectVelocities. Positions are solved by a
// simplified Newton iteration q_{k+1} = q_k ⊕ δ_k with δ_k the N-metric least-norm solution of
// G δ = −g(q_k), velocities by the same least-norm correction, repeated while the residual is
// above tolerance (iterative refinement); the position update goes through
// MechanicalSystem::IntegratePosition. Nothing is changed when `rows` is empty.
//
// The least-norm correction δ = −N⁻¹Gᵀ W⁺ r (W = G N⁻¹ Gᵀ) is, while W is well conditioned
// (smallest over largest pivot of its pivoted LDLᵀ above √rank_tolerance, the test of
// engine::ConstrainedDynamics), the direct solve δ = −N⁻¹Gᵀ W⁻¹ r with that LDLᵀ, and G has full
// rank. Otherwise it is computed without a rank decision (engine::PenaltyMinNormSolver: the
// penalty matrix N + α GᵀG of the mass-orthogonal projections of Bayo & Ledesma 1996 / Cuadrado
// et al. 2000, SPD whatever the rank of G, with conjugate gradients on the iterated penalty
// correction). Redundant rows (rank-deficient G) and configurations close to a singular one (W
// with eigenvalues far below 1e-10 of the largest, e.g. a four-bar with its bars aligned) get
// their full correction; what cannot be corrected at an exactly singular point (the part of the
// residual outside range(G)) stays in the residual, and the projection then fails. `rank` is
// then reported from a rank-revealing QR of W (rank_tolerance). A diagonal M is inverted entry by
// entry. The block-sparse path factorizes W by LDLᵀ and falls back to the dense path when W is
// numerically singular.
//
// The simplified Newton keeps G and W of the starting point and re-evaluates them only when an
// iteration reduces ‖g‖∞ by less than half, so the update q̃ − q lies in range(N⁻¹ Gᵀ(q)): q̃ is
// the N-metric closest point of the manifold to first order in the distance.
// On failure the returned residual is the one of the unchanged input.
//
// Tolerance: an absolute bound on the residual, raised to the round-off floor of evaluating it,
// 16ε·max(1, ‖q‖∞) for positions and 16ε·(‖G‖∞‖v‖∞ + ‖∂g/∂t‖∞) for velocities (ε the machine
// epsilon; ‖G‖∞ the largest entry), since no iteration can go below the error of its own residual.
// Positions asked for less than their floor iterate on while the residual still halves, towards
// 2ε·max(1, ‖q‖∞), and succeed when they end on the floor (the floor is a bound: with angles
// of tens of radians among the coordinates, 16ε‖q‖∞ is well above the residual Newton reaches).
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
  int max_iterations = 20;  // ≥ 1
  // Velocities only: when no refinement reaches `tolerance` within max_iterations, the best
  // iterate is accepted if its residual is ≤ stall_tolerance (0: never). Nearly redundant rows
  // (a settled pile's closed loops of contacts, W with eigenvalues far below 1e-10 of the
  // largest) leave a residual along W's near-null space that no bounded correction removes;
  // the caller states which residual is harmless (the event loop: well below its velocity
  // threshold τ₁).
  double stall_tolerance = 0.0;
  double rank_tolerance = 1e-10;  // relative pivot threshold of W's rank-revealing QR (reported
                                  // rank; singular test of the sparse path), in (0, 1)
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
