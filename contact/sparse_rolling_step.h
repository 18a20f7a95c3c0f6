// The contact problem of one Moreau–Jean step with Coulomb friction and rolling resistance
// (contact/rolling_friction_step.h: the same law, the same unknowns) on the block-sparse
// structure of a system without joints, solved contact by contact.
//
// Law per contact α (Acary & Brogliato, "Numerical Methods for Nonsmooth Dynamical Systems",
// LNACM 35, 2008, Sec. 10.1 for the step; the law is the rolling friction cone of Siconos
// Numerics' RollingFrictionContactProblem, docs/friction.md "Rolling and spinning resistance"),
// with w = W P + b, W = G M⁻¹ Gᵀ, b = G v_free + ∂g/∂t + e u_N⁻ + s:
//   0 ≤ w_N ⊥ P_N ≥ 0,
//   ‖P_T‖ ≤ μ P_N,     P_T = Π_{μ P_N}(P_T − w_T)      (the disk law: stick or slip against w_T),
//   ‖P_R‖ ≤ μ_R P_N,   P_R = Π_{μ_R P_N}(P_R − w_R),
// Π_ρ the projection onto the disk of radius ρ; s = 0 on closed rows and g(q̃)/(θ h) on the open
// rows of speculative contacts (timestepping/moreau_jean.h). The residual is contact::
// RollingFrictionResidual (per contact, the norm of the natural map above; the largest, relative
// to max(1, ‖b‖∞) of the component).
//
// Solver (the nonsmooth Gauss–Seidel over contacts of M. Jean, "The non-smooth contact dynamics
// method", CMAME 177, 1999, which Siconos' fc3d NSGS also is): W is formed per component of the
// body–contact graph (contact/sparse_assembly.h) with 5 unknowns per contact; a sweep visits the
// contacts in order and solves the local problem of contact α with the others fixed, q_α = b_α +
// Σ_{β≠α} W_αβ P_β, then updates w by the column block W_·α ΔP_α (O(nnz) per sweep). The local
// solve (5 unknowns): P = 0 when q_N ≥ 0 (open); else the sticking answer W_αα P = −q_α (exact,
// LDLᵀ) when it lies in the cone; else a projected fixed point P ← Π_K(P − ρ (W_αα P + q_α)) with
// one scalar ρ per group (1/W_NN; 1/λ_max of the 2 × 2 tangential and rolling blocks), whose fixed
// points are exactly the law's. Each contact starts from the caller's warm start (the impulses of
// the previous step, per contact). A component whose sweeps do not reach the tolerance goes to
// the existing chain: Siconos' rolling friction solver on its dense W (contact/complementarity.h,
// SolveRollingFrictionContact3d), from the Gauss–Seidel iterate, at most three attempts with a
// tolerance 100× tighter each; then the best answer is accepted when within accepted_residual.
// Components without b_N < 0 have P = 0 (every law holds with w = b).
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <span>

#include "contact/friction_problem.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

struct RollingStepOptions {
  double accepted_residual = 0.0;  // ≥ 0, finite: the bound of an accepted answer
  int max_sweeps = 500;            // Gauss–Seidel sweeps per component before the fallback, > 0
  // Per contact, the gap term s ≥ 0 of the normal law (empty: all 0); finite.
  std::span<const double> gap_rate;
  // Impulses to start from, 5 per contact (P_N, P_T, P_R), or nullptr (cold start).
  const Eigen::VectorXd* warm_start = nullptr;
};

// Components that ended in each way, summed over calls.
struct RollingStepStats {
  long gauss_seidel = 0;  // met the tolerance in the sweeps
  long fallback = 0;      // met it in Siconos' dense solver
  long accepted = 0;      // within accepted_residual only
  long failed = 0;
  long sweeps = 0;  // Gauss–Seidel sweeps, summed
  double largest_accepted_residual = 0.0;
};

// The step of the header for the contacts of `normal_rows` (each with its system's tangential and
// rolling rows), restitution e per contact, f = h F (nv). The result as
// SolveRollingFrictionVelocityStep's (impulses, rates, modes, energy against v + M⁻¹ f; residual
// the largest over the components). std::nullopt when the path does not apply (the system does
// not provide its block structure, or a contact has one tangential row): use the dense function.
// Throws std::invalid_argument on a bad state or f, a row outside the system, listed twice or not
// unilateral, a contact with a spinning row, restitution outside [0, 1] or of another count,
// bad options, gap rates or warm start of the wrong size or non-finite.
std::optional<FrictionalImpactResult> SolveRollingFrictionVelocityStepSparse(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> normal_rows,
    std::span<const double> restitution, const FrictionOptions& options,
    const RollingStepOptions& rolling, RollingStepStats* stats = nullptr);

}  // namespace saltus::contact
