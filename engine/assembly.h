// Consistent initialization (assembly) of a mechanical system from approximate q0, v0.
//
// Positions: Gauss–Newton with minimum-norm steps in the tangent coordinates of the position
// update,  q_{k+1} = q_k ⊕ δ_k,  δ_k = −G(q_k)⁺ g(q_k, t0)  (G⁺ the Moore–Penrose pseudo-inverse
// through a complete orthogonal decomposition, so redundant rows are fine), until ‖g‖∞ ≤ tol. For
// a consistent set of rows this converges quadratically to a point of the manifold, and to first
// order it is the closest one in the Euclidean metric of v (the minimum-norm correction).
// Velocities: the minimum-norm correction  ṽ = v − G⁺ (G v + ∂g/∂t)  at the assembled q.
// (Cf. Haug, Computer Aided Kinematics and Dynamics of Mechanical Systems, 1989, Sec. 4.4, and
// Haddouni et al. 2017, eq. 35-36, with the identity metric.)
//
// The report gives the size of the corrections, ‖Σ δ_k‖₂ and ‖ṽ − v‖₂. When the positions cannot
// be assembled (residual above tol after max_iterations, or no progress), the message names the
// joints (and drivers) whose rows keep the largest residual, e.g.
//   "assembly failed: ‖g‖∞ = 0.2 after 50 iterations; residual rows: link3.x (0.2), ..."
#pragma once

#include <Eigen/Dense>
#include <span>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"

namespace saltus::engine {

struct AssemblyOptions {
  double tolerance = 1e-10;       // on ‖g‖∞ and ‖G v + ∂g/∂t‖∞, > 0
  int max_iterations = 50;        // ≥ 1
  double rank_tolerance = 1e-10;  // relative pivot threshold of the decomposition, in (0, 1)
};

struct AssemblyReport {
  bool ok = true;
  int iterations = 0;
  double position_correction = 0.0;        // ‖Σ δ_k‖₂ (tangent coordinates)
  double velocity_correction = 0.0;        // ‖ṽ − v‖₂
  double position_residual = 0.0;          // ‖g‖∞ at the returned q
  double velocity_residual = 0.0;          // ‖G v + ∂g/∂t‖∞ at the returned q, v
  int rank = 0;                            // rank of G at the returned q
  std::vector<std::string> failing_rows;   // rows whose |g| > tolerance after failure
  std::vector<std::string> failing_items;  // their joints or drivers (name before the first '.')
  std::string message;                     // empty when ok
};

// Assembles q, v (sizes nq, nv) on `rows` at time t. On success q and v are replaced; on failure
// they are left unchanged and ok = false with the message above. Throws std::invalid_argument on
// bad sizes or options.
AssemblyReport Assemble(const MechanicalSystem& system, double t, std::span<const int> rows,
                        const AssemblyOptions& options, Eigen::VectorXd* q, Eigen::VectorXd* v);

}  // namespace saltus::engine
