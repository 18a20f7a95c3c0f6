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
// independent of the scale of W; c = 10³ (fc3d_newton.cc: c = 1 stalls on a captured pile step).
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
// an outer iteration that does not lower e is undone and κ (initially 1) grows tenfold.
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
};

struct Fc3dNewtonResult {
  bool ok = false;    // residual ≤ tolerance
  Eigen::VectorXd r;  // the best iterate by Fc3dResidual (3 n_c)
  double residual = 0.0;
  int iterations = 0;  // Newton steps
  int outer = 0;       // proximal iterations
  std::string message;
};

// From r0 (3 n_c). W: 3 n_c square, symmetric positive semidefinite with positive diagonal
// (zero diagonal entries get ρ = 1). Throws std::invalid_argument on sizes, non-finite entries,
// μ < 0 or bad options. Never throws on non-convergence: ok = false with the best iterate.
Fc3dNewtonResult SolveFc3dNewton(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& b,
                                 const Eigen::VectorXd& mu, const Fc3dNewtonOptions& options,
                                 const Eigen::VectorXd& r0);

}  // namespace saltus::contact
