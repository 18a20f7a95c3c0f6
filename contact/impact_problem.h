// Impact and contact problems of the event-driven scheme (Haddouni et al. 2017, Section 2).
//
// Both reduce to an LCP on the unilateral rows U' with the bilateral rows B' as equalities,
// eliminated by a Schur complement on the Delassus matrix W = G M⁻¹ Gᵀ (M factorized by
// Cholesky, never inverted):
//
//   W = [W_BB W_BU; W_UB W_UU],  W_red = W_UU − W_UB W_BB⁺ W_BU,
//
// with W_BB⁺ from a rank-revealing factorization, so redundant joints are allowed.
//
// Impact (eq. 2, 4): with u⁻ = G v⁻ and impulses P, v⁺ = v⁻ + M⁻¹ Gᵀ P,
//   bilateral:  u_B⁺ = 0 (this also removes velocity drift),
//   unilateral: 0 ≤ u_U⁺ + e u_U⁻ ⊥ P_U ≥ 0   (Newton restitution, e per row).
// Contact at acceleration level (eq. 12): M v̇ = F + Gᵀ λ,
//   bilateral:  G_B v̇ + γ_B = 0,
//   unilateral: 0 ≤ G_U v̇ + γ_U ⊥ λ_U ≥ 0.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <vector>

#include "contact/complementarity.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

struct ImpactResult {
  bool ok = false;
  Eigen::VectorXd v_plus;      // nv
  Eigen::VectorXd impulse_b;   // bilateral rows, same order as given
  Eigen::VectorXd impulse_u;   // unilateral rows, same order as given
  Eigen::VectorXd u_minus_u, u_plus_u;  // normal velocities of the unilateral rows
  LcpResult lcp;
  std::string message;
};

// `restitution[i]` is e for unilateral_rows[i], in [0, 1].
ImpactResult SolveImpact(const engine::MechanicalSystem& system, double t,
                         const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                         std::span<const int> bilateral_rows, std::span<const int> unilateral_rows,
                         std::span<const double> restitution, const LcpOptions& options);

struct ContactAccelerationResult {
  bool ok = false;
  Eigen::VectorXd vdot;         // nv
  Eigen::VectorXd lambda_b;     // bilateral multipliers
  Eigen::VectorXd lambda_u;     // unilateral multipliers (contact forces), ≥ 0
  Eigen::VectorXd accel_u;      // g̈ of the unilateral rows, ≥ 0
  LcpResult lcp;
  std::string message;
};

ContactAccelerationResult SolveContactAccelerations(const engine::MechanicalSystem& system,
                                                    double t, const Eigen::VectorXd& q,
                                                    const Eigen::VectorXd& v,
                                                    std::span<const int> bilateral_rows,
                                                    std::span<const int> unilateral_rows,
                                                    const LcpOptions& options);

}  // namespace saltus::contact
