// Half-implicit (symplectic-Euler type) scheme for the index-3 equations of motion
// (technical note on half-implicit integration of the index-3 DAEs of multibody dynamics, the
// team's seed half-implicit-index3-multibody.txt, eq. 4–12), written for the general system
//
//   q̇ = T(q) v,   M(q) v̇ = F(q, v, t) + Gᵀλ,   g(q, t) = 0   (index 3, Haddouni et al. eq. 6).
//
// One step of size h from (t_n, q_n, v_n): explicit velocity update, implicit position update
// (eq. 4a–4d; eq. 4d is the Lie-group update, here MechanicalSystem::IntegratePosition):
//
//   v_{n+1} = v_n + h v̇_n,   M_n v̇_n = F_n + G_nᵀ λ_n,   q_{n+1} = q_n ⊕ h v_{n+1},
//   g(q_{n+1}, t_{n+1}) = 0,
//
// with M_n, F_n, G_n evaluated at (t_n, q_n, v_n). With the unknowns θ = h v_{n+1} (nv, the
// tangent increment of q) and λ̂ = h² λ_n (m) (eq. 6) this is the nonlinear system (eq. 5)
//
//   e₁ = M_n θ − G_nᵀ λ̂ − b_n = 0,   b_n = h M_n v_n + h² F_n        (eq. 7a, our sign of λ),
//   e₂ = g(q_n ⊕ θ, t_{n+1}) = 0,
//
// solved by quasi-Newton with the matrix of eq. (12), built and factorized once per step from
// the time-t_n Jacobians:  N = [ M_n  −G_nᵀ ; G_n  0 ]  (nv + m square). N is O(1) whatever h
// (λ̂ carries the h²), so no scaling is needed. e₁ is linear, so after the first iteration only
// e₂ is left; the iteration stops when ‖g‖∞ ≤ tol_g with tol_g = min(newton_tol,
// κ atol min(1, h)) (the iteration error must stay well below the local error the controller
// measures, κ = 0.03 as in Hairer & Wanner II, Sec. IV.8; and v_{n+1} = θ/h carries the residual
// divided by h, so tiny steps — the last one before an event or t_limit — need a residual
// O(h)), or when the increment reaches round-off (then ‖g‖∞ ≤ 64 ε (1 + ‖q‖∞) is accepted). Its
// contraction rate is O(h) (the mismatch between G_n and G(q_{n+1})), so two or three iterations
// suffice. Near a rank drop of G (N's pivot ratio, IterationMatrix::pivot_ratio, below
// RankDropMonitor::kDrop = 1e-3 times the largest since Reset; the double four-bar with all bars
// on the ground line) the increment does not reach that round-off level: with g at 4e-16 the
// updates stalled at 5e-14 … 2e-13 (round-off divided by σ_min), just above 64 ε (1 + ‖q‖∞) =
// 5e-14, and every step failed down to h_min (newton_failure at t = 0.7135 s for rtol 1e-9 and
// 1e-10). There an increment that stopped contracting (≥ ½ the previous) twice in a row with
// ‖g‖∞ ≤ 64 ε (1 + ‖q‖∞) counts as having reached round-off (the null-space Newmark rule,
// nullspace_newmark.h). At the singular configuration itself N (built at t_n, independent of h)
// is singular: it is then factorized regularized, the augmented-Lagrangian form of newton.h
// ("Saddle-point matrices at a singular configuration"), instead of ending the run.
// Only M, F, g and G are needed: no force, mass-matrix or constraint-force Jacobian (the
// point of the scheme). M_n, F_n and G_n of the next step are evaluated at the end of each accepted
// step; a non-finite F there rejects the step with kNonFinite (the state stays at t_n).
//
// Order. The scheme is first order (seed Sec. 3.1, Fig. 2): positions and velocities have
// global error O(h); it is symplectic for conservative systems (bounded energy error, no drift:
// seed Fig. 3; tested in tests/integrators/half_implicit_test.cc). The multiplier λ_n is the one
// that maps q_n onto the manifold at t_{n+1}: it is not an accurate λ(t_n) (after a start or a
// velocity projection it is about half the normal force), so it is not exported.
//
// Constraint levels. g = 0 at step ends to tol_g (index 3). v_{n+1} is a chord velocity:
// G(q_{n+1}) v_{n+1} = O(h), and it is the scheme's state: from a chord velocity the next λ_n is
// the constraint force, while from a velocity with G v = 0 (after a start, an event's projection
// or a projection of the chord) the chord condition g(q_n ⊕ θ) = 0 gives G v̇_n = −½ (vᵀ ∂²g v) and
// λ_n misses half the centripetal share: an O(1) error of the step's acceleration, of any sign in
// the directions the rows couple (the woodpecker's hinge loads the sliding sleeve with it: at a
// stick → slip decision the slip then started backwards). With options.project the chord is
// projected (MDOP5-style, as the other schemes) when ‖G v + ∂g/∂t‖∞ > projection_tol, and the
// velocity the scheme reports — v(), the dense output, the state of the next phase — is the chord
// corrected along the force directions, v_{n+1} + M⁻¹H_nᵀ μ with G(q_{n+1}) v + ∂g/∂t = 0
// (quasi-Newton with the step's N; to min(newton_tol, projection_tol/10)): for ideal forces the
// mass-orthogonal projection, with friction along the directions the constraint forces act in.
// That removes the chord's O(h) offset (½ h M⁻¹Hᵀ W⁻¹ vᵀ ∂²g v to first order) and with it the
// λ_n error after a start, and keeps the recursion (and its energy behaviour) unchanged.
//
// Adaptive variant (the seed lists adaptivity as future work). Local error estimate: the
// position update q_n ⊕ h v_{n+1} = q_n ⊕ (h v_n + h² v̇_n) differs from the trapezoidal update
// q_n ⊕ h (v_n + v_{n+1})/2 — second-order consistent — by
//
//   e_q = (h/2)(v_{n+1} − v_n) = (h²/2) v̇_n,
//
// which is the leading term of the position local error q(t_{n+1}) − q_{n+1} = −(h²/2) q̈ + O(h³)
// (Taylor expansion; exact for the h² term since v̇_n = q̈(t_n) + O(h) in the tangent directions).
// It is measured with Integrator::ErrorNorm and the step-size rule eq. (30) with p = 1 (local
// error O(h²)). Positions only, as the generalized-α estimate (Haddouni et al. eq. 29): a
// velocity estimate would need v̇_{n+1} − v̇_n, and v̇_n jumps by O(1) in the normal direction
// whenever a velocity projection (or a Reset) turns the chord velocity into a tangent one, which
// would read as a huge local error. Error-per-step control of a first-order method gives a global
// error ∝ tol^(1/2) (Hairer, Nørsett & Wanner I, Sec. II.4); the generic tests check it.
// Fixed step: options.adaptive = false, h = options.h_init.
//
// Dense output (for event location): the scheme's own continuous extension — a step of size
// σ ∈ [0, h] from (t_n, q_n, c_n) with the same v̇_n, c_n the chord velocity at t_n:
//   q(t_n + σ) = q_n ⊕ (σ c_n + (σ/h)² (θ − h c_n)),   v(t_n + σ) = v_n + (σ/h)(v_{n+1} − v_n),
// θ the step's tangent increment and v_n, v_{n+1} the reported velocities (so both end states are
// reproduced; without a velocity projection θ = h c_{n+1} and q(t_n + σ) = q_n ⊕ σ c(t_n + σ),
// eq. 4c with step σ). Local error O(h²) (dense order 1). v is not dq/dt: on a first-order chord
// the two differ by O(h). A cubic Hermite interpolant from (q, v) at both ends was used before
// (issue 5): its end slopes v_n, v_{n+1} are inconsistent with the chord θ/h = v_{n+1}, so its
// velocity overshoots by up to |v_{n+1} − v_n|/3 inside the step; at the low-speed bounces that end
// an accumulation (u ≈ g h) that overshoot pumped energy at every located impact and the bouncing
// ball never reached the Zeno rule u⁺ ≤ τ₁ (313 424 impacts instead of 145). The extension above is
// monotone between the end velocities; what is left is the first-order loss of ≈ g h per bounce
// (docs/implicit.md, tests/integrators/implicit_examples_test.cc).
//
// Friction (integrator.h, "Friction"). Non-ideal forces: e₁ = M_n θ − H_nᵀ λ̂ − b_n with the force
// directions H_n at (t_n, q_n, v_n), explicit like F_n, and −H_nᵀ in N. Velocity-level rows have
// no g: their e₂ is the velocity constraint at the step end times h,
//   h (G(q_{n+1}) v_{n+1} + ∂g/∂t) = G(q_n ⊕ θ) θ + h ∂g/∂t(q_{n+1}, t_{n+1}),
// whose derivative with respect to θ is G_n + O(h), so N is unchanged and the tolerance tol_g
// (which already accounts for the division of the residual by h in v_{n+1}) applies as is.
//
// Counted in stats: newton_iterations, rhs_evaluations (evaluations of F and g), factorizations
// of N (one per attempted step), jacobian_evaluations (G_n, one per attempted step).
#pragma once

#include <Eigen/Dense>
#include <string_view>

#include "integrators/integrator.h"
#include "integrators/newton.h"

namespace saltus::integrators {

class HalfImplicit final : public Integrator {
 public:
  // Supports kIndex3 only. Throws std::invalid_argument on invalid options or another
  // formulation.
  explicit HalfImplicit(const IntegratorOptions& options);
  ~HalfImplicit() override;

  std::string_view name() const override { return "half_implicit"; }
  int order() const override { return 1; }
  int dense_output_order() const override { return 1; }
  bool Supports(Formulation f) const override { return f == Formulation::kIndex3; }

 private:
  enum class Outcome { kConverged, kNewtonFailure, kLinearSolveFailure, kNonFinite };

  void DoReset() override;
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // M_n, F_n, G_n at (t, q, v) into M_, F_, G_. False when F is not finite.
  bool EvaluateStart(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);
  // Solves eq. (5) for a step of size h from (t_, q_, v_); on kConverged theta_, q_new_,
  // v_new_ and lambda_hat_ hold the result.
  Outcome Solve(double h);
  // v_new_ (the chord velocity at t_{n+1}) corrected along the force directions onto the velocity
  // constraint at (t_{n+1}, q_new_), with G_next_ and gt_ evaluated there (header, "Constraint
  // levels").
  void CorrectVelocity();
  // e₂ at q_new_ = q_n ⊕ theta_ into g_ (header, "Friction").
  void ConstraintResidual(double t_new, double h);

  StepStatus reset_status_ = StepStatus::kAccepted;
  IterationMatrix N_lu_;
  // Near a rank drop of G (header): N_lu_'s pivot ratios since Reset.
  RankDropMonitor rank_drop_;
  // At t_n.
  Eigen::MatrixXd M_, G_, H_, N_, G_new_;  // H_: force directions (non-ideal forces only)
  Eigen::VectorXd F_;
  // Iterate and result.
  Eigen::VectorXd theta_, lambda_hat_, q_new_, v_new_, b_, r_, x_, g_, gt_, e_, zero_;
  // Start-of-step data of the next step, computed at the end of the accepted one.
  Eigen::MatrixXd M_next_, G_next_, H_next_;
  Eigen::VectorXd F_next_;
  // Dense output of [t_prev_, t_]: tangent increment θ from q_prev_, end velocities.
  double h_dense_ = 0;
  Eigen::VectorXd d_q1_, d_v0_, d_v1_;
  // The chord velocities at t_n (the scheme's state, header "Constraint levels") and t_{n-1}.
  Eigen::VectorXd chord_, chord_prev_;
};

}  // namespace saltus::integrators
