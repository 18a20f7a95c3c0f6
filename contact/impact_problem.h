// Impact and contact problems of the event-driven scheme (Haddouni et al. 2017, Section 2).
//
// Both reduce to an LCP on the unilateral rows U' with the bilateral rows B' as equalities,
// eliminated by a Schur complement on the Delassus matrix W = G M⁻¹ Gᵀ (M factorized by
// Cholesky, M = L Lᵀ, never inverted):
//
//   W = [W_BB W_BU; W_UB W_UU],  W_red = W_UU − W_UB W_BB⁺ W_BU,
//
// with W_BB⁺ from a rank-revealing factorization, so redundant joints are allowed. W_BB is
// factorized through its square root: with A = L⁻¹ Gᵀ (nv × m), W = Aᵀ A, and a complete
// orthogonal decomposition (column-pivoting QR, relative rank threshold kBilateralRankTolerance)
// of A_B (contact/delassus.h) gives an orthonormal basis Q₁ of range(A_B); then W_red = Cᵀ C with
// C = (I − Q₁ Q₁ᵀ) A_U. This is W_UU − W_UB W_BB⁺ W_BU without squaring the condition number.
//
// Normal velocities include the partial time derivative of rheonomic rows: u = G v + ∂g/∂t = ġ.
//
// Impact (eq. 2, 4): with u = G v + ∂g/∂t and impulses P, v⁺ = v⁻ + M⁻¹ Gᵀ P,
//   bilateral:  u_B⁺ = 0 (this also removes velocity drift),
//   unilateral: 0 ≤ u_U⁺ + e u_U⁻ ⊥ P_U ≥ 0   (Newton restitution, e per row),
// where u_U⁻ is the approach velocity of v̄⁻, the M-orthogonal projection of v⁻ onto
// {G_B v + ∂g_B/∂t = 0} (v⁻ itself when there are no bilateral rows).
// Energy. The kinetic energy changes by T⁺ − T⁻ = ½ Pᵀ (u⁺ + u⁻) (scleronomic rows). A
// pre-impact velocity from an integrator's dense output violates the joints at velocity level
// by u_B⁻ ≠ 0 (≈ 1e-7 m/s at rtol 1e-6), and with Newton's law applied to G v⁻ the bilateral
// impulse did work ½ P_B·u_B⁻ of either sign: a slider-crank hitting a stop with e = 1 gained
// up to 2e-8 of its energy per impact. Splitting the impact into the projection v⁻ → v̄⁻
// (T(v̄⁻) = T⁻ − ½ δᵀ M δ, δ = v⁻ − v̄⁻: second order in the drift) and Newton's law from v̄⁻
// (u_B = 0 before and after: the joints do no work) gives, on a row with P > 0,
// u⁺ = −e ū⁻, so T⁺ ≤ T⁻ whenever every unilateral row is approaching or resting (ū_U⁻ ≤ 0),
// and T⁺ = T(v̄⁻) to round-off when e = 1 on every row with P > 0. Both steps are one LCP: the
// projection is the y_free of the reduced problem below. A closed but separating row (u⁻ > 0)
// that receives an impulse leaves with u⁺ = −e u⁻ < 0 (Newton's law as written in eq. 4); a
// caller that prefers u⁺ ≥ 0 there passes e = 0 for such rows, in which case the energy may
// increase. Likewise when simultaneous contacts have different coefficients, Newton's law
// is not energetically consistent in general: a coupled multi-contact impact can gain energy
// (Glocker, Multibody Syst. Dyn. 29 (2013) 77-117, Part I, Kane's example); the event log
// reports energy_before/energy_after of every impact, so such gains are visible.
//
// Contact at acceleration level (eq. 12): M v̇ = F + Gᵀ λ,
//   bilateral:  G_B v̇ + γ_B = 0,
//   unilateral: 0 ≤ G_U v̇ + γ_U ⊥ λ_U ≥ 0.
//
// Sparse assembly: without bilateral rows, when nv ≥ engine::kSparseMinimumNv and the system
// provides its block structure (MechanicalSystem::BlockSparseMatrices: M = diag(M_c), G by body
// blocks), W = Σ_c G_c M_c⁻¹ G_cᵀ is assembled from the blocks in O(Σ_c k_c² b) (k_c rows
// touching body c, b the block size) instead of O(nv³ + nv m²) for the dense factor of M, and
// v⁺ = v⁻ + M⁻¹ Gᵀ P, v̇ = M⁻¹ (F + Gᵀ λ) by blocks; the LCP is the same (W dense, m × m, over
// the given rows only). Otherwise the dense path below.
//
// Components. With M block diagonal, W_ij = G_i M⁻¹ G_jᵀ = 0 when rows i and j share no body,
// so the LCP splits into independent LCPs over the connected components of the graph whose
// vertices are the bodies and whose edges are the rows (the ground is no vertex: two contacts
// with the floor on different bodies are independent; a joint joins its bodies).
// contact::SolveLcpByComponents solves each component alone, in O(Σ m_c³) pivoting instead of
// O(m³), and skips a component whose b_c ≥ 0 (nothing approaches, or nothing is pulled into an
// obstacle): z_c = 0 there, so v⁺ = v⁻ (v̇ = M⁻¹ F) on its bodies. The sparse path builds W only
// per solved component (never m × m); the dense path splits W_red along its exact zeros (the
// elimination of joints may fill it in: then it is one component). largest_lcp reports the
// unknowns of the largest component solved. On the sparse path a component of at least
// LcpOptions::sparse_minimum_size rows gets W_c as a sparse matrix and goes to the exact sparse
// active-set solver (contact/sparse_lcp.h) instead of dense Lemke.
//
// Capture: with the environment variable SALTUS_LCP_CAPTURE=DIR, the LCPs of these functions
// that needed a fallback stage (or failed; SALTUS_LCP_CAPTURE_WHEN) are written to DIR for the
// test bank (contact/lcp_capture.h).
//
// Multipliers of redundant bilateral rows are not unique; the minimum-norm ones are returned.
// Unilateral multipliers of redundant contacts are not unique either; the LCP solver picks one.
// Inconsistent redundant bilateral rows (incompatible ∂g/∂t or γ) are satisfied in the least-
// squares sense and the remaining violation is reported in bilateral_residual.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/delassus.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

struct ImpactResult {
  bool ok = false;
  Eigen::VectorXd v_plus;               // nv
  Eigen::VectorXd impulse_b;            // bilateral rows, same order as given
  Eigen::VectorXd impulse_u;            // unilateral rows, same order as given
  Eigen::VectorXd u_minus_u, u_plus_u;  // normal velocities ġ of the unilateral rows: ū⁻ (at
                                        // the velocity projected onto the joints) and u⁺
  int bilateral_rank = 0;               // rank of G_B
  double bilateral_residual = 0;        // ‖G_B v⁺ + ∂g_B/∂t‖∞
  int largest_lcp = 0;                  // unknowns of the largest LCP solved (see "Components")
  LcpResult lcp;
  std::string message;
};

// Solves the impact problem at (t, q) for the pre-impact velocity v_minus (nv).
// `restitution[i]` is e for unilateral_rows[i], in [0, 1]. Row lists hold global constraint
// indices (engine::MechanicalSystem), in any order, without duplicates within or across lists.
// Throws std::invalid_argument on wrong sizes of q (nq) or v_minus (nv), non-finite q or v,
// a row outside the system or listed twice, a restitution count different from the number of
// unilateral rows, or a coefficient outside [0, 1] (the message names the row). A failed LCP,
// a mass matrix that is not positive definite or non-finite system data give ok = false with a
// message; the other fields then hold the attempt (v_plus = v_minus if nothing was solved).
ImpactResult SolveImpact(const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& v_minus, std::span<const int> bilateral_rows,
                         std::span<const int> unilateral_rows, std::span<const double> restitution,
                         const LcpOptions& options);

// Storage that SolveImpact reuses from one call to the next on one system (the event loop's
// switch handler keeps one; Drake's and MBSim's contact solvers keep their factorizations the
// same way): the dense assembly, with the Cholesky factor L of M computed at the first call and
// kept when the mass matrix is constant (MechanicalSystem::HasConstantMassMatrix: planar bodies,
// linear systems), so that an impact evaluates and factorizes M once per run instead of once per
// impact (W = ‖L⁻¹ Gᵀ‖² of a one-row impact then costs the Jacobian row and one triangular
// solve); the result and the intermediate vectors, so that a steady sequence of impacts of the
// same size allocates nothing on the dense path. A workspace belongs to the first system it is
// used with; SolveImpact throws std::invalid_argument for another.
class ImpactWorkspace {
 public:
  ImpactWorkspace() = default;
  ImpactWorkspace(const ImpactWorkspace&) = delete;
  ImpactWorkspace& operator=(const ImpactWorkspace&) = delete;

  const engine::MechanicalSystem* system = nullptr;  // set by the first SolveImpact
  DenseAssembly assembly;
  ImpactResult result;
  Eigen::VectorXd gt_b, gt_u, y0, y;
};

// SolveImpact with a workspace (above): the same result, kept in workspace->result and
// returned by reference (valid until the next call with the workspace).
const ImpactResult& SolveImpact(const engine::MechanicalSystem& system, double t,
                                const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                                std::span<const int> bilateral_rows,
                                std::span<const int> unilateral_rows,
                                std::span<const double> restitution, const LcpOptions& options,
                                ImpactWorkspace* workspace);

// The contact problem of one step of a time-stepping scheme (Moreau–Jean, timestepping/):
//   v⁺ = v + M⁻¹ (f + Gᵀ P),   G_B v⁺ + ∂g_B/∂t = 0,   0 ≤ u_U⁺ + e u_U⁻ + s_U ⊥ P_U ≥ 0,
// with u = G v + ∂g/∂t, u⁻ that of the given v (the velocity at the start of the step) and f (nv)
// the impulse of the forces over the step (h F). SolveImpact is the case f = 0, s = 0. The LCP's
// b is G v_free + ∂g/∂t + e u⁻ + s with v_free = v + M⁻¹ f; u_minus_u reports u⁻, u_plus_u u⁺.
// `gap_rate` (s, one per unilateral row, ≥ 0; empty: all 0) lets an open row approach at up to
// s: the speculative rows of timestepping/moreau_jean.h, s = g/(θ h), which may close to g = 0
// by the step's end and not further. Same validation as SolveImpact, and f must have nv finite
// entries, gap_rate be empty or one finite s ≥ 0 per unilateral row (std::invalid_argument).
ImpactResult SolveVelocityStep(const engine::MechanicalSystem& system, double t,
                               const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                               const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                               std::span<const int> unilateral_rows,
                               std::span<const double> restitution, const LcpOptions& options,
                               std::span<const double> gap_rate = {});

struct ContactAccelerationResult {
  bool ok = false;
  Eigen::VectorXd vdot;           // nv
  Eigen::VectorXd lambda_b;       // bilateral multipliers
  Eigen::VectorXd lambda_u;       // unilateral multipliers (contact forces), ≥ 0
  Eigen::VectorXd accel_u;        // g̈ = G_U v̇ + γ_U of the unilateral rows, ≥ 0
  int bilateral_rank = 0;         // rank of G_B
  double bilateral_residual = 0;  // ‖G_B v̇ + γ_B‖∞
  int largest_lcp = 0;            // unknowns of the largest LCP solved (see "Components")
  LcpResult lcp;
  std::string message;
};

// Solves the contact problem at acceleration level (eq. 12) at (t, q, v). Same row and
// validation rules as SolveImpact (no restitution).
ContactAccelerationResult SolveContactAccelerations(const engine::MechanicalSystem& system,
                                                    double t, const Eigen::VectorXd& q,
                                                    const Eigen::VectorXd& v,
                                                    std::span<const int> bilateral_rows,
                                                    std::span<const int> unilateral_rows,
                                                    const LcpOptions& options);

}  // namespace saltus::contact
