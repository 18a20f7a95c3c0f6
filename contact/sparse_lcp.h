// An exact sparse LCP path for large contact components.
//
//   find z (n):   w = W z + b,   0 ≤ w ⊥ z ≥ 0,   W = G M⁻¹ Gᵀ symmetric positive SEMIdefinite,
//
// the impact LCP (Haddouni et al. 2017, eq. 4) and the acceleration-level contact LCP (eq. 12) of
// one large independent component (a pile of spheres: thousands of rows, a row couples only with
// the rows that share one of its two bodies). Dense lexicographic Lemke costs O(m³) per solve
// (1.4 s at 931 rows); this path costs a few sparse factorizations.
//
// Method (projected Gauss–Seidel to guess the active set, as in Morales, Nocedal & Smelyanskiy
// 2008, then a proximal-point outer loop whose steps are solved exactly by block principal
// pivoting, Júdice & Pires 1994):
//   1. PGS sweeps z_i ← max(0, z_i − w_i / W_ii) from z⁰ (a warm start or 0) until the support
//      {i : z_i > 0} has not changed for 5 sweeps (at least 10, at most 200 sweeps).
//   2. Proximal point (Rockafellar 1976) on the monotone LCP: z_{k+1} solves the regularized LCP
//        w = (W + εI) z + (b − ε z_k),  0 ≤ w ⊥ z ≥ 0,   ε = 1e-3 · max W_ii,
//      whose matrix is positive DEFINITE (unique solution, always z ≥ 0), although W is only
//      semidefinite (redundant contacts: a plain active-set solve W_FF z_F = −b_F would pick an
//      arbitrary, possibly negative, point of a solution affine set, or be inconsistent).
//   3. Each regularized LCP by block principal pivoting from the previous active set F: factor
//      W_FF + εI (sparse LDLᵀ, AMD ordering), z_F = −(W_FF + εI)⁻¹(b − εz_k)_F, z_N = 0;
//      violators i ∈ F with z_i < 0 and i ∉ F with w_i < 0 (below −1e-13 of their scale) change
//      side — all of them while their number decreases (three extra tries), then one at a time
//      (Murty's rule: the largest index). When F does not change, the factor is reused: a
//      proximal step then costs one sparse solve. Caps: 1000 proximal steps, 200 factorizations.
//      Drift extrapolation: on a fixed F with W_FF singular (a self-stress loop of a settled
//      pile, Gᵀd = 0 with d of mixed signs) and b_F not in range(W_FF) (a component 3.6e-9 along
//      null(W), ‖b‖₂ = 55, in the N = 100 pile at t = 0.7068 s; its origin was not traced), the
//      steps converge on range(W_FF) but move z by −ε⁻¹ P_null b_F per step along null(W_FF),
//      and the solution lies where a z_i of the loop reaches 0 (that row then opens, w_i > 0). When
//      two consecutive steps on the same F agree to 1e-3 of their size, z jumps along the step to
//      the first z_i = 0 (ratio test); the next step drops that row from F. (Without it the pile
//      needed an estimated ~1e5 steps there, beyond the caps, and dense Lemke then stopped on a
//      ray.)
//   4. Accepted only when the natural-map residual ‖min(w, z)‖∞ / max(1, ‖b‖∞) of the ORIGINAL
//      problem (z ≥ 0, w = W z + b) is ≤ options.tolerance, exactly the test of SolveLcp
//      (complementarity.h): never a merely approximate answer. Otherwise 10× more PGS sweeps
//      from where PGS stopped and steps 2–4 again, then (options.fallback) the solver with a
//      guarantee, SolveMonotoneLcp (contact/monotone_lcp.h, when options.monotone_stage), and
//      last the dense SolveLcp (Lemke and its other fallbacks).
// Convergence: the proximal iterates converge to a solution of the LCP when one exists (monotone
// operator; W PSD); on a fixed active set a step contracts the error by ε / (λ + ε) on each
// eigenvalue λ > 0 of W_FF and leaves the null-space component unchanged. A step that keeps F
// divides ε by 10 (refactoring the same F) down to 1e-6 · max W_ii, so that the small eigenvalues
// of ill-conditioned piles (λ ~ 1e-4 max W_ii) contract fast too; a step that changes F puts ε
// back to 1e-3 · max W_ii (with the small ε the pivoting cycles on semidefinite piles).
// Warm start (z0, e.g. the previous solution of the same rows: contact::LcpWarmStart): PGS starts
// from it, and the first proximal step of the first round uses the smallest ε = 1e-6 · max W_ii
// (from a right active set and a z0 near the solution the error then contracts by
// ε / (λ + ε) ≪ 1 at once: one factorization and one or two steps); a pivot puts ε back to
// 1e-3 · max W_ii as above, and the answer passes the same residual test.
// On a PSD W, w (hence the post-impact velocity v⁺ = v⁻ + M⁻¹Gᵀz) is unique even where z is not.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include "contact/complementarity.h"

namespace saltus::contact {

// W (n × n) symmetric (column j is used as row j), b (n). A non-positive diagonal entry (PGS
// cannot use it) or an asymmetric W (above 1e-12 relative) sends the problem to the dense
// SolveLcp when options.fallback, else a failure status. `z0` (n entries, or nullptr) warm-starts
// PGS (negative entries are clipped). The message starts with "lcp sparse:" and gives the PGS
// sweeps, proximal steps and factorizations, or which dense fallback solved it; iterations =
// sweeps + proximal steps. Throws std::invalid_argument on inconsistent sizes, non-finite entries
// or bad options (as SolveLcp).
LcpResult SolveLcpSparse(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& b,
                         const LcpOptions& options, const Eigen::VectorXd* z0 = nullptr);

// Steps 2–4 alone (no PGS, no fallback) from z_start ≥ 0 (n entries; its support is the first
// active set), with the smallest shift first as for a warm start: the refinement of an
// approximate solution (contact/monotone_lcp.h). W must be symmetric with a positive diagonal
// (not checked here). ok only when the residual test passes; the message starts with
// "lcp refine:".
LcpResult RefineLcpSparse(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& b,
                          const LcpOptions& options, const Eigen::VectorXd& z_start);

}  // namespace saltus::contact
