// A semismooth Newton method for the 3D frictional contact problem on a block-sparse W, with a
// proximal regularization W + σI for the rank-deficient W of redundant contacts.
//
// Problem (contact/complementarity.h, "Frictional contact in 3D"): find r (3 n_c) with
// u = W r + b and, per contact i (unknowns 3i, 3i+1, 3i+2 = normal, tangent 1, tangent 2),
// r_i ∈ K_μi = {‖r_T‖ ≤ μ_i r_N} and Coulomb's law with Signorini's condition on (r_N, u_N).
//
// Alart–Curnier function (Alart & Curnier, "A mixed formulation for frictional contact problems
// prone to Newton like solution methods", CMAME 92 (1991) 353–375, the augmented Lagrangian form
// of Sec. 3; Acary & Brogliato, LNACM 35, 2008, Sec. 13.4.2): with ρ_N, ρ_T > 0 per contact,
//   x_N = r_N − ρ_N u_N,   x_T = r_T − ρ_T u_T,   R = μ max(0, x_N),
//   Φ_N(r, u) = r_N − max(0, x_N),
//   Φ_T(r, u) = r_T − P_D(R)(x_T),   P_D(R)(x) = x if ‖x‖ ≤ R, else R x / ‖x‖,
// Φ = 0 exactly on the solutions of the law (the same set as the natural map of De Saxcé's form,
// contact::CoulombResidual). Φ is piecewise smooth; an element of its generalized Jacobian is
// ∂Φ/∂r = A + B W with the 3 × 3 blocks per contact (ê = x_T/‖x_T‖, Γ = (I − ê êᵀ)/‖x_T‖):
//   x_N > 0:  A_NN = 0, B_NN = ρ_N;            else A_NN = 1, B_NN = 0;
//   R = 0 (open or μ = 0): A_TT = I, B_TT = 0 (Φ_T = r_T, also at x_T = 0);
//   else ‖x_T‖ ≤ R: A_TT = 0, B_TT = ρ_T I;    else A_TT = I − R Γ, B_TT = ρ_T R Γ,
//             A_TN = −μ ê, B_TN = μ ρ_N ê.
// So the Newton matrix has the block pattern of W. ρ_N = c/W_NN,i and ρ_T = c/max(W_TT,i) make Φ
// independent of the scale of W; c = 10³ by default (Fc3dNewtonOptions::rho_scale). With
// ρ W_ii ≫ 1 the function weighs the velocities u more than the impulses r; on captured pile steps
// c = 1 stalls where 10³ solves, and some steps where 10³ stalls are solved with c = 10², so the
// solver chain retries with it (contact/sparse_friction_step.h; docs/time-stepping.md).
//
// Proximal regularization. In a pile W = G M⁻¹ Gᵀ is rank-deficient (more contact rows than
// body velocities) and, for sticking contacts, A + B W has the rows ρ W_i: singular. Each outer
// iteration k therefore solves the proximal problem (Rockafellar, "Monotone operators and the
// proximal point algorithm", SIAM J. Control Optim. 14 (1976)) with
//   W_σ = W + σ_k I,   b_σ = b − σ_k r_k   (u_σ = u + σ_k (r − r_k)),
// whose Newton matrix A + B (W + σ_k I) is regular, by Newton steps from r_k with an Armijo line
// search on θ_σ = ½‖Φ(r, u_σ)‖² (the Newton direction d gives ∇θ_σ·d = −2θ_σ, so t = 1, ½, ¼, …
// until θ_σ(r + t d) ≤ (1 − 2·10⁻⁴ t) θ_σ(r)), to ‖Φ(r, u_σ)‖∞ ≤ ¼ ‖Φ(r_k, u)‖∞, and takes the
// answer as r_{k+1}. A fixed point r_{k+1} = r_k solves the original problem. σ_k follows the
// residual e_k (below), σ_k = σ_ref · clamp(κ e_k, 10⁻¹⁰, 1) with σ_ref the largest diagonal
// entry of W (the regularized-Newton rule σ ∝ ‖F‖ of Li, Fukushima, Qi & Yamashita, Comput.
// Optim. Appl. 28 (2004) 131–147, which keeps superlinear convergence on singular problems);
// an outer iteration that does not lower e is undone and κ (initially 1) grows tenfold; once
// σ = σ_ref a failed outer iteration would repeat itself and the iteration ends.
//
// Smoothing. On pile steps an iterate's contact can sit on the stick/slide kink ‖x_T‖ = R, where
// the Newton direction of the one-sided element is a descent direction for θ_σ only over steps
// t ≲ 10⁻⁴ (measured by finite differences on a captured N = 100 step: ∇θ·d = −2θ at h = 10⁻⁷,
// −1.6θ at 10⁻⁴, no decrease at t = 1/1024): the Armijo search ends, the outer iteration fails and
// κ grows until σ = σ_ref. When an outer iteration fails at σ = σ_ref we therefore follow, from
// the best iterate and with κ = 1 again, a path of smoothed functions Φ_ε, ε → 0, with the
// Chen–Harker–Kanzow–Smale smoothing of max(0, ·)
// (Chen & Harker, SIAM J. Matrix Anal. Appl. 14 (1993) 1168–1190; Kanzow, ibid. 17 (1996)
// 851–868), φ_ε(a) = ½(a + √(a² + 4ε²)) ≥ max(0, a), φ_ε − max(0, ·) ≤ ε:
//   R_ε = μ φ_ε(x_N),   Φ_N = r_N − φ_ε(x_N),
//   Φ_T = r_T − R_ε x_T / M_ε,   M_ε = ½(‖x_T‖ + R_ε + √((‖x_T‖ − R_ε)² + 4ε²)) ≥ max(‖x_T‖, R_ε),
// (M_ε is the smoothed max(‖x_T‖, R), so R x_T / max(‖x_T‖, R) = P_D(R)(x_T) at ε = 0). Φ_ε is C¹
// for ε > 0 (M_ε ≥ ε > 0), its Jacobian is exact (fc3d_internal::SmoothedAlartCurnier, checked
// against finite differences), so the Newton direction is a descent direction of ½‖Φ_ε‖² for
// every regular Newton matrix. The outer iterations go on with ε_k = s ‖r_k‖∞: ε must be of the
// size of the Newton step, which on these steps is far larger than ‖Φ‖ (|d| ≈ 3·10⁻³ with
// ‖Φ‖∞ ≈ 10⁻⁵), so ε ∝ ‖Φ‖ keeps the kink as sharp as it was. The inner target is ¼ ‖Φ_ε(r_k)‖∞; s
// shrinks ×0.3 after an inner solve that met it and grows ×3 (up to 0.1) after one that did not;
// the iterate is kept whether or not it lowers e, the answer is the best iterate by e; at s < 10⁻⁹
// the iterations go back to Φ from the best iterate. Where the unsmoothed iteration converges, the
// path is never taken and the iterates are those without it. Φ_ε = 0 only approximates the law, so
// the path ends only when e ≤ tolerance. Captured N = 100 steps where the unsmoothed iteration
// stalls: docs/time-stepping.md.
//
// Each Newton step costs one sparse LU (Eigen::SparseLU, COLAMD ordering) of a matrix with W's
// pattern, against O(m³) for a dense factorization (m = 3 n_c). The answer is judged by our own
// residual e (Fc3dResidual below), never by Φ.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>

namespace saltus::contact {

// The natural-map residual of the law (contact::CoulombResidual): per contact
// ‖r_i − P_K(r_i − û_i)‖₂ with û = u + μ‖u_T‖ e_N, the largest over the contacts, relative to
// max(1, ‖b‖∞). Sizes as in SolveFc3dNewton (not checked here).
double Fc3dResidual(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& b,
                    const Eigen::VectorXd& mu, const Eigen::VectorXd& r);

struct Fc3dNewtonOptions {
  double tolerance = 1e-10;  // on Fc3dResidual, > 0
  int max_iterations = 200;  // Newton steps (sparse LU factorizations) in all, > 0
  int max_outer = 60;        // proximal iterations, > 0
  bool smoothing = true;   // follow Φ_ε after a proximal iteration failed at σ = σ_ref (above)
  double rho_scale = 1e3;  // c in ρ_N = c / W_NN,i and ρ_T = c / max(W_TT,i) (above), > 0
};

struct Fc3dNewtonResult {
  bool ok = false;    // residual ≤ tolerance
  Eigen::VectorXd r;  // the best iterate by Fc3dResidual (3 n_c)
  double residual = 0.0;
  int iterations = 0;     // Newton steps
  int outer = 0;          // proximal iterations
  bool smoothed = false;  // the smoothing path was taken
  std::string message;
};

// From r0 (3 n_c). W: 3 n_c square, symmetric positive semidefinite with positive diagonal
// (zero diagonal entries get ρ = 1). Throws std::invalid_argument on sizes, non-finite entries,
// μ < 0 or bad options. Never throws on non-convergence: ok = false with the best iterate.
Fc3dNewtonResult SolveFc3dNewton(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& b,
                                 const Eigen::VectorXd& mu, const Fc3dNewtonOptions& options,
                                 const Eigen::VectorXd& r0);

}  // namespace saltus::contact
