// The last stage of the LCP solver chain: a solver that does not fail when a solution exists.
//
//   find z (n):   w = W z + b,   0 ≤ w ⊥ z ≥ 0,   W symmetric positive semidefinite.
//
// Every frictionless contact problem of Saltus is of this kind: the impact LCP (Haddouni et al.
// 2017, eq. 4) and the acceleration-level LCP (eq. 12), W = G M⁻¹ Gᵀ (contact/impact_problem.h).
// It is the optimality system of the convex QP  min ½ zᵀ W z + bᵀ z  over z ≥ 0, and a monotone
// LCP has a solution if and only if it is feasible (some z ≥ 0 with W z + b ≥ 0; Cottle, Pang &
// Stone, The Linear Complementarity Problem, 1992, Sec. 3.1). By Farkas' lemma it is infeasible
// if and only if some y ≥ 0 has W y = 0 and bᵀ y < 0 (y ≥ 0, Wᵀ y ≤ 0, bᵀ y < 0 gives
// yᵀ W y ≤ 0, hence W y = 0 for W ⪰ 0): in a pile, non-negative impulses in self-equilibrium
// (Gᵀ y = 0) that the right-hand side asks to push apart. The acceleration LCP of spheres and
// planes is always feasible (v̇ = 0 gives G v̇ + γ = γ ≥ 0); so is an impact LCP whose
// restitution coefficients are all equal (b = (1 + e) G v⁻ is orthogonal to every such y).
//
// Method.
//   1. An infeasible primal–dual interior-point method (Kojima, Megiddo & Mizuno 1993; Wright,
//      Primal-Dual Interior-Point Methods, SIAM 1997, Ch. 6 and 11) on the scaled problem
//      W̃ = W / max W_ii, b̃ = b / max(1, ‖b‖∞), from z = w = 1. Each iteration solves
//        (W̃ + Z⁻¹ S) Δz = r_c   (sparse LDLᵀ, pattern analysed once; Z = diag z, S = diag w,
//      positive definite although W̃ is only semidefinite) for Mehrotra's predictor and corrector
//      (one factorization, two solves). The step is cut back (halving) until the iterate stays in
//      the neighbourhood  z_i w_i ≥ 10⁻⁴ μ,  ‖r‖ / μ ≤ 10³ ‖r₀‖ / μ₀  (r = W̃ z + b̃ − w,
//      μ = zᵀ w / n) with μ decreasing by at least 1 % of the step; when that leaves no step, a
//      centring step (σ = 0.5) is taken instead. Infeasible-interior-point methods of this class
//      converge to a solution of a monotone LCP whenever one exists (Wright 1994, Math. Prog. 67;
//      Zhang 1994, SIAM J. Optim. 4), whatever the rank of W.
//   2. Refinement. Interior iterates only approach the solution (z_i w_i = μ > 0), and at a
//      degenerate pair (z_i, w_i both tending to 0, common at the resting contacts of a pile)
//      min(z_i, w_i) ~ √μ. From μ ≤ 10⁻⁸ on, each order of magnitude of μ, the active set
//      F = {i : z_i > w_i} and z (zero off F) start the proximal active-set iteration of
//      contact/sparse_lcp.h (RefineLcpSparse), which is exact on the right F.
//   3. Accepted only when the natural-map residual ‖min(w, z)‖∞ / max(1, ‖b‖∞) of the original
//      problem is ≤ options.tolerance (complementarity.h). When the iterates diverge (‖z̃‖∞ >
//      10¹⁰) or stall, the direction y = z / ‖z‖ is tested as the infeasibility certificate above
//      (‖W̃ y‖∞ ≤ 10⁻⁸, b̃ᵀ y < 0): the message then says the problem has no solution.
// Cost: 15–40 iterations, each one sparse factorization of the pattern of W (+ diagonal).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include "contact/complementarity.h"

namespace saltus::contact {

// W (n × n) symmetric positive semidefinite (symmetry is the caller's: the factorization reads
// the lower triangle), b (n). The message starts with "lcp interior point:" and gives the
// iterations and refinements, or why it failed ("no solution: ..." with a Farkas certificate).
// iterations = interior-point iterations. Throws std::invalid_argument on inconsistent sizes,
// non-finite entries or bad options (as SolveLcp).
LcpResult SolveMonotoneLcp(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& b,
                           const LcpOptions& options);

}  // namespace saltus::contact
