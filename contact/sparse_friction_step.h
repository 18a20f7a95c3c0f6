// The frictional contact problem of one Moreau–Jean step (contact/friction_problem.h,
// SolveFrictionalVelocityStep) on the block-sparse structure of a system without joints: the
// same problem and the same answer to the solver tolerance, at the cost of a pile's sparsity
// instead of dense matrices of size nv and 3 n_c.
//
// The step (Acary & Brogliato, "Numerical Methods for Nonsmooth Dynamical Systems", LNACM 35,
// 2008, Sec. 10.1; Jean 1999): with u⁻ = G v + ∂g/∂t at the start velocity v and f = h F,
//   v⁺ = v_free + M⁻¹ Gᵀ P,   v_free = v + M⁻¹ f,
//   w = G v⁺ + ∂g/∂t + e u⁻_N (normal rows) = W P + b,   W = G M⁻¹ Gᵀ,   b = G v_free + ∂g/∂t + e
//   u⁻_N,
// and per contact Coulomb's law on (P, w) with the exact cone (contact/friction_cone.h):
//   P ∈ K_μ = {‖P_T‖ ≤ μ P_N},   ŵ = w + μ ‖w_T‖ e_N ∈ K_μ*,   Pᵀ ŵ = 0.
//
// Assembly (contact/sparse_assembly.h): M = diag(M_c) by body blocks, G by body blocks, and W is
// formed per component of the body–contact graph only, as a sparse matrix whose 3 × 3 block
// (i, j) is Σ_c G_i,c M_c⁻¹ G_j,cᵀ over the bodies c that contacts i and j share (non-zero only
// when they share one). Each component with an approaching or pushed normal row (b_N < 0) is
// solved by Siconos fc3d on the sparse matrix (contact::SolveFrictionContact3d): NSGS first
// (Gauss–Seidel over the contacts with an exact local solver, the solver of Siconos' own
// Moreau–Jean), then Alart–Curnier Newton from its answer where NSGS stalls (not first: it leaks
// memory on sparse matrices, contact/complementarity.h), then both again with Siconos' tolerance
// 100× tighter, stopping at the first answer whose natural-map residual of the law
// (contact::CoulombResidual, relative to max(1, ‖b_c‖∞)) meets the tolerance; otherwise the
// answer with the smallest residual is returned with ok = false. Components without b_N < 0
// have P = 0 (z_N = 0 forces P_T = 0 and satisfies every law). Contacts without tangential rows
// carry two inert unknowns (W's largest diagonal entry on the diagonal, no coupling, q = 0), so
// they stay 0; μ = 0 makes a contact frictionless.
//
// Cost per step: O(nv b²) for the mass blocks, O(Σ_c k_c² b) for W (k_c rows touching body c),
// and O(nnz(W)) per Gauss–Seidel sweep, against O(nv³ + nv m²) for the dense path and O(m³) per
// dense Newton iteration (m = 3 n_c: about 900 rows and nv = 600 in a settled 100-sphere pile).
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <span>

#include "contact/friction_problem.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

// The step above for the contacts of `normal_rows` (each with the system's tangential rows and μ,
// FrictionalContact::FromSystem) with restitution e (one per row). std::nullopt when the sparse
// path does not apply, and the caller should use SolveFrictionalVelocityStep: the system does not
// provide its block structure (MechanicalSystem::BlockSparseMatrices), nv <
// engine::kSparseMinimumNv, options.cone is not kExact, or a contact has one tangential row
// (planar). options.diagnose is ignored (no Painlevé enumeration on a time step; status kSolved
// or kNoSolutionFound). Throws std::invalid_argument on a state of the wrong size or non-finite,
// f not of nv finite entries, a row outside the system, listed twice or not unilateral, a
// restitution count other than the rows' or e outside [0, 1], bad options (tolerance ≤ 0,
// max_iterations ≤ 0) or a warm start other than 3 per contact.
std::optional<FrictionalImpactResult> SolveFrictionalVelocityStepSparse(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> normal_rows,
    std::span<const double> restitution, const FrictionOptions& options);

}  // namespace saltus::contact
