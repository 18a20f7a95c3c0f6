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
// solved by the chain SolveFrictionComponent below (Siconos fc3d on the sparse matrix), from the
// caller's warm start (FrictionOptions::warm_start); where the whole chain fails from a non-zero
// warm start, it runs once more from P = 0 (a warm start from the previous step can put every
// stage in the basin of the same stall: the 197-contact component of the μ = 0.5 100-sphere pile
// at t = 0.723 s stalls at 1.5e-5 from it and is solved from 0). Components without b_N < 0
// have P = 0 (z_N = 0 forces P_T = 0 and satisfies every law). Contacts without tangential rows
// carry two inert unknowns (W's largest diagonal entry on the diagonal, no coupling, q = 0), so
// they stay 0; μ = 0 makes a contact frictionless.
//
// Cost per step: O(nv b²) for the mass blocks, O(Σ_c k_c² b) for W (k_c rows touching body c),
// and O(nnz(W)) per Gauss–Seidel sweep, against O(nv³ + nv m²) for the dense path and O(m³) per
// dense Newton iteration (m = 3 n_c: about 900 rows and nv = 600 in a settled 100-sphere pile).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

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
// `sparse`: the accepted bound of the chain and where to count its stages (below).
struct SparseFrictionStats;
struct ComponentMemo;
struct SparseStepOptions {
  double accepted_residual = 0.0;        // FrictionChainOptions::accepted_residual, finite, ≥ 0
  SparseFrictionStats* stats = nullptr;  // when set, every solved component is counted there
  // Per contact, the s ≥ 0 of the law u_N⁺ + e u_N⁻ + s (FrictionalContact::gap_rate; the
  // speculative contacts of timestepping/moreau_jean.h); empty: all 0. Finite, one per row.
  std::span<const double> gap_rate;
  // When set: the answers of the components of the last call at the same (t, q), reused for a
  // component with the same contacts and the same b (ComponentMemo below).
  ComponentMemo* memo = nullptr;
};
std::optional<FrictionalImpactResult> SolveFrictionalVelocityStepSparse(
    const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
    const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> normal_rows,
    std::span<const double> restitution, const FrictionOptions& options,
    const SparseStepOptions& sparse = {});

// The solver chain of one component: w = W r + b with 3 unknowns per contact (normal, tangent 1,
// tangent 2) and Coulomb's law with μ_i (μ_i = 0: frictionless) on each contact. Every stage
// starts from the best answer so far (the caller's r0 first), and the chain stops at the first
// answer whose natural-map residual (contact::CoulombResidual: per contact ‖r − P_K(r − ŵ)‖₂,
// the largest, relative to max(1, ‖b‖∞)) meets `tolerance` (r0 itself, when it does: stage kNsgs
// without a sweep):
//   kNsgs     Siconos fc3d NSGS (Gauss–Seidel over the contacts with an exact local solver: the
//             solver of Siconos' own Moreau–Jean), nsgs_sweeps sweeps;
//   kNewton   our semismooth Newton on the Alart–Curnier function over the sparse W with a
//             proximal regularization W + σI (contact/fc3d_newton.h), at most newton_iterations
//             sparse LU factorizations (0 skips the stage), for components of any size; the σI
//             term keeps its Jacobian regular on the rank-deficient W of redundant contacts.
//             Where it stalls, once more from its best iterate with the smaller scaling
//             ρ = newton_retry_rho_scale / W_ii (Fc3dNewtonOptions::rho_scale): the function
//             Φ, and so the kinks met along the path, depend on ρ, and on captured pile steps
//             the two scalings stall on different problems (docs/time-stepping.md);
//   kAdmm     Siconos fc3d ADMM, admm_iterations iterations, from Newton's best iterate (figures
//             in docs/time-stepping.md);
//   kPolish   NSGS again, polish_sweeps sweeps, from the best answer so far with Siconos'
//             tolerance 100× tighter (its error is measured in another norm and may stop above
//             ours);
//   kProximal the last resort: Siconos fc3d PROX (contact/complementarity.h,
//             Fc3dSolver::kProximal), proximal point iterations, each an Alart–Curnier
//             semismooth Newton on W + σI, on W as a DENSE matrix, proximal_iterations outer
//             iterations, for components of at most proximal_max_contacts contacts (O(m³) per
//             Newton iteration, m = 3 n_c: 2.7–6.9 s on 200 contacts, 120 s on 406). After
//             kNewton because Newton converges quadratically where Gauss–Seidel converges
//             linearly and slowly (W rank-deficient with non-zero eigenvalues over 1e4 to 7e9,
//             docs/time-stepping.md, "Why the pile steps did not converge"); after kAdmm and
//             kPolish because those, from the iterate where our Newton stalls, solve 37 of the
//             52 stalls of 278 captured N = 100 steps in 0.13–1.9 s (PROX: seconds each), so
//             the dense stage runs on the other 15 (docs/time-stepping.md). Siconos' Newton
//             leaks on NM_SPARSE; on NM_DENSE the memory stays flat (docs/time-stepping.md);
//   kAccepted no stage met `tolerance`, but the best answer's residual is ≤ accepted_residual:
//             returned with ok = true, for the caller to count (a warning, not a failure);
//   kFailed   otherwise: the best answer, ok = false.
// Each stage's answer is judged by the residual above (ours), never by Siconos' info code. The
// accepted bound is checked only after the last stage.
enum class FrictionStage { kNsgs = 0, kNewton, kProximal, kAdmm, kPolish, kAccepted, kFailed };
inline constexpr int kFrictionStages = 7;
std::string_view FrictionStageName(FrictionStage stage);

struct FrictionChainOptions {
  double tolerance = 1e-10;        // > 0
  double accepted_residual = 0.0;  // ≥ 0; 0: no answer is accepted above `tolerance`
  int nsgs_sweeps = 2000;          // > 0
  int newton_iterations = 200;     // ≥ 0; 0 skips kNewton
  // Where Newton with ρ = 10³ / W_ii stalls, Newton again from its best iterate with
  // ρ = newton_retry_rho_scale / W_ii (≥ 0; 0: no retry) and at most newton_retry_iterations
  // sparse LU factorizations (> 0); kNewton above.
  double newton_retry_rho_scale = 1e2;
  int newton_retry_iterations = 400;
  int proximal_iterations = 50;     // > 0
  int proximal_max_contacts = 300;  // ≥ 0; larger components skip kProximal
  int admm_iterations = 5000;       // > 0
  int polish_sweeps = 20000;        // > 0
};

struct FrictionChainResult {
  bool ok = false;  // stage other than kFailed
  FrictionStage stage = FrictionStage::kFailed;
  Eigen::VectorXd r;  // 3 per contact
  double residual = 0.0;
  std::string message;  // the Siconos stages' messages
};

// Throws std::invalid_argument on sizes (W: 3 n_c square, b and r0: 3 n_c, mu: n_c), non-finite
// entries, μ < 0 or bad options.
FrictionChainResult SolveFrictionComponent(const Eigen::SparseMatrix<double>& W,
                                           const Eigen::VectorXd& b, const Eigen::VectorXd& mu,
                                           const FrictionChainOptions& options,
                                           const Eigen::VectorXd& r0);

// The answers of one step's components, for the same step solved again (timestepping/
// moreau_jean.h: restitution passes, speculative and deferred rounds add or change a few rows and
// solve the step once more). A component's W is a function of (t, q) and its contacts, so a
// component of a call at the same (t, q) with the same contacts (normal rows, in order) and a
// bit-identical b is the same problem: its answer (stage, residual, impulses) is returned again
// without a solve and without being counted in the stats a second time. A call at another (t, q)
// empties the memo.
struct ComponentMemo {
  struct Entry {
    std::vector<int> normal_rows;
    Eigen::VectorXd b;
    FrictionChainResult result;
  };
  double t = 0.0;
  Eigen::VectorXd q;
  std::vector<Entry> entries;
  long reused = 0;  // components answered from the memo, since construction
};

// Components per stage that ended their chain, summed over the steps of a run.
struct SparseFrictionStats {
  std::array<long, kFrictionStages> components{};
  double largest_accepted_residual = 0.0;  // over the kAccepted components
};

}  // namespace saltus::contact
