// The contact problem of one Moreau–Jean step with Coulomb friction and rolling resistance
// (issue 18 §3; timestepping/moreau_jean.h, docs/friction.md "Rolling and spinning resistance").
//
// Per contact α of the index set: the normal row n, the tangential rows t1, t2 and the rolling
// rows r1, r2 of the system (MechanicalSystem::TangentRows, RollingRows), with u = G v + ∂g/∂t
// on every row (u_R: the relative angular velocity of the two bodies along t1, t2). With f = h F
// the impulse of the forces over the step and u⁻ the rates at the step's start velocity v:
//
//   v⁺ = v + M⁻¹ (f + G_Bᵀ P_B + Σ_α (G_Nᵀ P_N + G_Tᵀ P_T + G_Rᵀ P_R)),   u_B⁺ = 0,
//   0 ≤ u_N⁺ + e u_N⁻ + s ⊥ P_N ≥ 0   (s: the gap term of speculative contacts, else 0),
//   ‖P_T‖ ≤ μ P_N,     and u_T⁺ = 0 or P_T = −μ P_N u_T⁺/‖u_T⁺‖,
//   ‖P_R‖ ≤ μ_R P_N,   and u_R⁺ = 0 or P_R = −μ_R P_N u_R⁺/‖u_R⁺‖,
//
// Siconos Numerics' rolling friction cone (RollingFrictionContactProblem, contact/
// complementarity.h SolveRollingFrictionContact3d) with μ = ConstraintRowInfo::friction and the
// length μ_R = ConstraintRowInfo::rolling_friction. Bilateral rows are eliminated as in
// contact/delassus.h; the local problem has 5 unknowns per contact, (P_N, P_T, P_R). A contact
// without two tangential rows, or without rolling rows, gets inert unknowns there (unit-scaled
// diagonal, no coupling, q = 0, coefficient 0), which the cone keeps at 0.
//
// Spinning resistance (the row "<row>.s", |τ_S| ≤ μ_S λ_N) is not part of Siconos' 5-unknown cone:
// a contact with a spinning row is refused (std::invalid_argument naming it).
//
// Residual (RollingFrictionResidual): the law above is equivalent to Signorini on (P_N, w_N) and
// two disk laws with the same P_N (complementarity.h), so per contact
//   ρ_α = ‖(min(P_N, w_N), P_T − Π_{μ P_N⁺}(P_T − w_T), P_R − Π_{μ_R P_N⁺}(P_R − w_R))‖₂,
// Π_ρ the projection onto the disk of radius ρ and w = W P + b (w_N = u_N⁺ + e u_N⁻); the largest
// ρ_α divided by max(1, ‖b‖∞), as the fc3d residual (contact/friction_cone.h). A solve is accepted
// when it is at most FrictionOptions::tolerance; Siconos' own error is retried with a tolerance
// 100 times smaller, at most twice, when ours is not met.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <vector>

#include "contact/friction_problem.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

// r, w: 5 n_c (per contact: normal, tangent 1, 2, rolling 1, 2); mu, mu_r: n_c; scale > 0.
double RollingFrictionResidual(const Eigen::VectorXd& r, const Eigen::VectorXd& w,
                               const Eigen::VectorXd& mu, const Eigen::VectorXd& mu_r,
                               double scale);

// The rows of the contacts in the local layout (header): `rows` lists the system rows present,
// `slot[i]` the unknown (5α + k) of rows[i]; μ and μ_R per contact (0 where rows are missing).
// Throws std::invalid_argument (message starting with `who`) on a normal row that is not
// unilateral or a contact with a spinning row.
struct RollingLayout {
  std::vector<int> rows, slot;
  Eigen::VectorXd mu, mu_r;
};
RollingLayout CollectRollingRows(const char* who, const engine::MechanicalSystem& system,
                                 std::span<const int> normal_rows);

// One step's contact problem (header). `normal_rows`: the unilateral rows of the index set,
// `restitution` one e ∈ [0, 1] each; f (nv): the force impulse h F. Uses options.tolerance and
// options.max_iterations (Gauss–Seidel sweeps, at least 1000). The result's contacts carry P_N,
// P_T, P_R and u⁺ (FrictionalContactResult::rolling, rolling_rate); residual is
// RollingFrictionResidual; ok = residual ≤ tolerance; kinetic_energy_change, contact_work and
// energy_gain against the free velocity v + M⁻¹ f as in contact::SolveFrictionalVelocityStep.
// Throws std::invalid_argument on a bad state or f (sizes, non-finite), a row outside the system
// or listed twice, a normal row that is not unilateral, a contact with a spinning row, restitution
// outside [0, 1] or of another size than normal_rows, gap rates (the s ≥ 0 added to w_N of the
// speculative contacts, timestepping/moreau_jean.h; empty: 0) not one finite value per contact,
// or bad options. The block-sparse, warm-started solve of the same problem:
// contact/sparse_rolling_step.h.
FrictionalImpactResult SolveRollingFrictionVelocityStep(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
    std::span<const int> normal_rows, std::span<const double> restitution,
    const FrictionOptions& options, std::span<const double> gap_rate = {});

}  // namespace saltus::contact
