// Generalized-α (Chung & Hulbert 1993; Arnold & Brüls 2007) for the constrained equations of
// motion, in three formulations (Haddouni et al. 2017, Sec. 3.1):
//
//   index 3 (eq. 14–19):   M(q) v̇ = F(q, v, t) + Gᵀλ,   g(q, t) = 0,
//   index 2 (eq. 20–22):   same dynamics,                G v + ∂g/∂t = 0,
//   GGL (Algorithm 1, eq. 21, 24): the index-2 iteration plus a position correction
//       q_{n+1} = q̂_{n+1} ⊕ U,  M U = Gᵀ ν,  g(q_{n+1}) = 0   (both levels hold at step ends).
//
// One step of size h from (q_n, v_n, v̇_n, a_n), with the auxiliary acceleration a (eq. 15, 16):
//   (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) v̇_{n+1} + α_f v̇_n,
//   v_{n+1} = v_n + h (1 − γ) a_n + h γ a_{n+1},
//   q_{n+1} = q_n ⊕ Δq,  Δq = h v_n + h² (½ − β) a_n + h² β a_{n+1}   (Lie-group form of eq. 16:
//   the tangent increment goes through MechanicalSystem::IntegratePosition; Brüls, Cardona &
//   Arnold, Mech. Mach. Theory 48 (2012)).
// Parameters from ρ∞ ∈ [0, 1] (Haddouni et al., after eq. 16):
//   α_m = (2ρ∞ − 1)/(ρ∞ + 1),  α_f = ρ∞/(ρ∞ + 1),  γ = ½ + α_f − α_m,  β = ¼ (γ + ½)².
//
// Newton iteration. Unknowns (v̇_{n+1}, λ_{n+1}); with c = (1 − α_f)/(1 − α_m), the derivatives
// of the update are ∂v/∂v̇ = γ'' = h γ c and ∂Δq/∂v̇ = β'' = h² β c. Residuals
//   R_d = M(q) v̇ − F(q, v, t) − Gᵀλ,   R_c = g(q, t)/β'' (index 3) or (G v + ∂g/∂t)/γ'' (index 2),
// and the iteration matrix (eq. 19 and 22 multiplied by β'' resp. γ'', which keeps it well
// conditioned for small h; Arnold & Brüls 2007, Sec. 3):
//   S = [ M + γ'' C_t + β'' K_t   −Gᵀ ]     C_t = −∂F/∂v,
//       [ G (+ (β''/γ'') Z)        0  ],    K_t = ∂(M a)/∂q − ∂F/∂q − ∂(Gᵀλ)/∂q,
// with Z = ∂(G v + ∂g/∂t)/∂q (finite differences) in the index-2 row, which eq. (22) omits; it
// is of relative size h ω and keeps the simplified Newton contracting at large steps.
// tangent matrices from MechanicalSystem::ForceJacobians, MassMatrixProductJacobian and
// ConstraintForceJacobian (analytic where the system provides them). Simplified Newton
// (integrators/newton.h): S is kept across iterations and steps, refactorized when γ''
// changes by more than the window [1, 1.2] of step ratios (Hairer & Wanner II, RADAU5's
// quot1/quot2), and its Jacobians are re-evaluated when an iteration contracted slowly
// (θ > 0.3) or diverged. A step whose Newton iteration fails with fresh Jacobians is retried with
// h/4 (a rejected step); below h_min the step returns kNewtonFailure. Convergence: the increment
// (β''Δv̇, γ''Δv̇, ΔU) relative to 1 + ‖q‖∞, 1 + ‖v‖∞ below newton_tol (GGL also needs the
// position correction ‖g‖∞ ≤ newton_tol). Index 3: components of g below the round-off level
// 16 ε (1 + ‖q‖∞) are taken as 0 in R_c, since g/β'' would turn them into velocity increments
// ≈ ε‖q‖/h that never settle at the tiny steps that follow events. Counted in stats:
// newton_iterations, residual evaluations (rhs_evaluations), jacobian_evaluations, factorizations.
//
// Near singular configurations (GGL; the double four-bar with all bars on the ground line). When
// S's pivot ratio (IterationMatrix::pivot_ratio, ~ σ² of G relative) is below
// RankDropMonitor::kDrop = 1e-3 times the largest since Reset, the velocity constraint's residual
// sits on a floor (1e-12 at rtol 1e-10, t = 0.71438 s) that the solve turns into velocity updates
// γ''Δv̇ ~ 1e-8 along the soft direction, alternating instead of contracting; the position
// correction's updates stay at 1e-12 (measured with a rank-truncated correction: same failure).
// Every step then failed down to h_min (newton_failure at 0.71438 s for rtol 1e-10). So there an
// iterate is also accepted when the constraint residuals and the position update (β''Δv̇ and ΔU,
// relative) are below newton_tol and the update stopped contracting (≥ ½ the previous) twice in
// a row, as the null-space Newmark scheme does (nullspace_newmark.h); the step's final check of
// both constraint levels to newton_tol still applies. While the first such stall is pending the
// Newton monitor's divergence verdict (it sees the alternation) is overruled within the
// iteration budget: at the crossing near t = 10.43 s (cranks at ~31 rad, residual floor 1e-11 …
// 3e-11) the monitor otherwise stopped every step after one stall. Measured, 20 s at rtol 1e-10:
// 176,910 steps, max |E − E0| = 2.1e-5 J (before: newton_failure at 0.71438 s). Index 2 is left
// out: with the same rule the rtol 1e-10 run stopped earlier (linear_solve_failure at
// t = 2.657 s instead of 16.25 s).
//
// At the singular configuration itself S (for small h) and the GGL correction matrix P are
// singular whatever h: with fresh Jacobians they are factorized regularized, the
// augmented-Lagrangian form of newton.h ("Saddle-point matrices at a singular configuration"),
// instead of ending the run with linear_solve_failure.
//
// Error estimate (eq. 25–29): the difference to the third-order Taylor expansion,
//   e_q = Δq − h ṽ_n − h² (v̇_n/3 + v̇_{n+1}/6)  (eq. 29; ṽ_n below), O(h³),
// on the positions only (as the paper; a velocity estimate would use v̇, which in the index-3
// form carries the Newton residual of g divided by β'' = O(h²) and stalls small steps), measured
// with Integrator::ErrorNorm; step-size rule eq. (30) with p = 2.
//
// Error per unit step (IntegratorOptions::error_control, integrator.h). The Newton iteration
// stops with an error of up to its tolerance in every step, and these errors add up over the
// steps like local errors: with Table 1's absolute newton_tol = 1e-8 the global error has a floor
// ≈ steps · 1e-8 (measured on the `joints` slider-crank at rtol 1e-6 per unit step: 64,143 steps,
// error 1.3e-3 against 5.3e-6 with newton_tol = 1e-12). Per unit step the iteration therefore
// stops at κ · rtol · h/T (κ = 0.03, the fraction of the tolerance the velocity increments already
// get), between 100 ε and newton_tol, and its weighted velocity increments at κ · h/T of the
// tolerance. Index 3 refuses per_unit_step: its residual g/β'' carries the round-off of g divided
// by β h², so its Newton iteration cannot stop at such a tolerance, and with newton_tol the
// position error of every step (≈ newton_tol) enters the estimate e_q, which per unit step is
// multiplied by T/h (the slider-crank test problem at rtol 1e-5 stopped with a step-size
// underflow at t = 2.8 ms). Per step (the default) the stopping rule is the paper's, unchanged.
//
// Variable steps. a_n approximates v̇(t_n + Δ_α h) with Δ_α = α_m − α_f (Arnold & Brüls 2007,
// Sec. 3), h the step that produced it; using it unchanged in a step of another size loses one
// order in v (the remark after eq. 16 of Haddouni et al.). Before a step of size h after one of
// size h_{n−1} the auxiliary acceleration is shifted to the new step,
//   ã_n = a_n + Δ_α (h − h_{n−1}) v⃛,   v⃛ ≈ (v̇_n − v̇_{n−1}) / h_{n−1},
// a first-order Taylor correction that restores a_n = v̇(t_n + Δ_α h) + O(h²) (the rule of Arnold
// & Brüls' variable-step analysis as used by Jay & Negrut for HHT-α; here derived directly from
// that property). Index 3 needs more (our own derivation; no published rule was at hand): in the
// constrained directions the scheme differentiates positions fixed by g, its v carries the steady
// offset c₂ h² q⃛, c₂ = −1/12 − Δ_α²/4 (position and velocity updates with a_n = q̈(t_n + Δ_α h)
// and v_n = q̇(t_n) + c₂ h² q⃛), and v̇ there has O(h) errors, so v̇ differences are unusable in
// those directions (and differences of v or a feed the O(ε/h) index-3 velocity noise back: both
// tried, unstable for ratio 4). With W = M⁻¹Gᵀ (G M⁻¹Gᵀ)⁻¹ at t_n (G W = I), and G q⃛ from the
// time derivative of g̈ = G v̇ + γ = 0, i.e. G q⃛ = −(γ̇ + Ġ v̇), by differences over the last step
// (γ involves v but not its difference quotient, so no noise is amplified):
//   ã_n = a_n + (I − W G) Δ_α (h − h_{n−1}) v⃛ + Δ_α (h − h_{n−1}) W G q⃛,
//   ṽ_n = v_n + c₂ (h² − h_{n−1}²) W G q⃛        (ṽ_n replaces v_n in the step).
// Without ṽ_n, steps alternating h, 2h force the a/v̇ recursions (eigenvalues near −ρ∞) at
// resonance and the index-3 error is O(1) at ρ∞ = 0.9 (tests/integrators/generalized_alpha_test.cc,
// docs/implicit.md). After Reset a_0 = v̇_0 and no shift is made on the first step.
//
// Algebraic variables in the index-3 form (issue 5). In the constrained directions range(W) the
// positions are fixed by g, and with them the scheme's (v, a): their error recursion, from
// q_{n+1} fixed and the updates above, is the 2×2 matrix
//   [1 − γ/β, 1 − γ − γ(½ − β)/β; −1/β, −(½ − β)/β]   (in (v, h a)),
// which for the ρ∞ parameters has the DOUBLE eigenvalue −ρ∞ (a Jordan block), and v̇, λ follow
// from a through a recursion with the root −α_f/(1 − α_f) = −ρ∞ again. A perturbation of size ε
// of a Jordan block (here: the constraint normals turning along the motion, G(q_{n+1}) ≠ G(q_n))
// moves its eigenvalues by ≈ √ε, so the modulus exceeds 1 once √ε > 1 − ρ∞: on the planar
// double pendulum at h = 1e-2 the scheme's v̇ left the index-1 v̇ at the same state at a rate
// doubling every 0.2 s (ρ∞ = 1), until Newton failed at t = 3.97 s; ρ∞ = 0.99 / 0.98 failed at
// 4.4 / 6.2 s, 0.95 held (1 − ρ∞ = 0.05 exceeds the perturbation). Positions stay on the
// manifold throughout (|g| 2e-10). Remedy: after every accepted step v̇ and λ are replaced by
// the index-1 values at (t_{n+1}, q_{n+1}, v_{n+1}) (engine::ConstrainedDynamics, one KKT
// solve), and a by its consistent value in the constrained directions only,
//   a ← a + W G (v̇₁(t_{n+1}) + Δ_α (v̇₁(t_{n+1}) − v̇₁(t_n)) − a),  W = M⁻¹Gᵀ (G M⁻¹Gᵀ)⁻¹,
// i.e. a = v̇(t_{n+1} + Δ_α h) + O(h²) there (Arnold & Brüls' meaning of a), while the free
// directions keep the scheme's own a recursion and its numerical damping. v̇ changes only in
// range(W) (M(v̇₁ − v̇) = Gᵀ(λ₁ − λ) since the dynamics residual is zero at step ends). This
// removes the parasitic modes for every ρ∞ ∈ [0, 1] (10 s on the double pendulum at h = 1e-2 and
// 5e-3, second order, dissipation decreasing to none as ρ∞ → 1: tests/integrators/
// generalized_alpha_test.cc, GeneralizedAlphaRhoSweep) and keeps λ, v̇ free of the index-3
// oscillations that feed take-off detection. Index 2 and GGL do not need it (their constrained
// velocities are fixed by the velocity constraint; measured: every ρ∞ runs).
//
// Dense output: quintic Hermite interpolation in the tangent space of q_n from (q, v, v̇) at both
// ends; v(s) is its time derivative (so q̇ = v holds on the interpolant). It reproduces both
// end states; its error is dominated by the O(h²) global error of the data (dense order 2).
//
// Friction (integrator.h, "Friction"). Non-ideal forces: R_d = M v̇ − F − Hᵀλ with H at the
// iterate and −Hᵀ in the top-right block of S; K_t keeps the system's ∂(Gᵀλ)/∂q and H's
// dependence on v is not differentiated (modified Newton: rate, not solution). Velocity-level
// rows (Arnold & Brüls' treatment of nonholonomic rows): in the index-3 form their residual is
// the index-2 one, (G v + ∂g/∂t)/γ'' with the row G + (β''/γ'') Z in S; in GGL the position
// correction acts on the position-level rows only (ν = 0 on the others, their row of the
// correction matrix is the identity). The index-3 specifics above (the shift of a_n and ṽ_n and
// the resynchronisation of a) act on the directions the position-level rows fix, with W =
// M⁻¹H_Pᵀ (G_P M⁻¹H_Pᵀ)⁻¹ (the oblique projector: v̇₁ − v̇ = M⁻¹Hᵀ(λ₁ − λ) lies in range(M⁻¹Hᵀ));
// the velocity-level directions get the index-2 treatment.
//
// The first v̇_0, λ_0 after Reset come from the index-1 KKT solve (engine::ConstrainedDynamics).
// No projection is applied by this integrator: each formulation enforces its own constraint
// level; index-2 positions drift like the global error.
//
// References: J. Chung, G. M. Hulbert, J. Appl. Mech. 60 (1993) 371–375. M. Arnold,
// O. Brüls, Convergence of the generalized-α scheme for constrained mechanical systems,
// Multibody Syst. Dyn. 18 (2007) 185–202. Haddouni et al., Multibody Syst. Dyn. 41 (2017).
// E. Hairer, G. Wanner, Solving ODEs II, Springer 1996, Sec. IV.8.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <string_view>

#include "engine/constrained_dynamics.h"
#include "integrators/integrator.h"
#include "integrators/newton.h"

namespace saltus::integrators {

struct GeneralizedAlphaParameters {
  double alpha_m, alpha_f, gamma, beta;
  // Throws std::invalid_argument naming rho_inf when ρ∞ is outside [0, 1] or not finite.
  static GeneralizedAlphaParameters FromRhoInf(double rho_inf);
};

class GeneralizedAlpha final : public Integrator {
 public:
  // Supports kIndex3, kIndex2, kStabilizedIndex2. Throws std::invalid_argument on invalid
  // options, another formulation, or rho_inf outside [0, 1].
  explicit GeneralizedAlpha(const IntegratorOptions& options);
  ~GeneralizedAlpha() override;

  std::string_view name() const override { return "generalized_alpha"; }
  int order() const override { return 2; }
  int dense_output_order() const override { return 2; }
  bool Supports(Formulation f) const override {
    return f == Formulation::kIndex3 || f == Formulation::kIndex2 ||
           f == Formulation::kStabilizedIndex2;
  }
  const GeneralizedAlphaParameters& parameters() const { return par_; }
  // Multipliers and accelerations at t() (sizes active_rows().size() and nv).
  const Eigen::VectorXd& lambda() const { return lambda_; }
  const Eigen::VectorXd& vdot() const { return vdot_; }
  // When false, the variable-step shifts of a_n and (index 3) v_n are not applied (tests show
  // the order loss).
  void set_variable_step_correction(bool on) { correct_variable_step_ = on; }

 private:
  enum class Outcome { kConverged, kNewtonFailure, kLinearSolveFailure, kNonFinite };

  void DoReset() override;
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // Solves one step of size h; on kConverged q_new_, v_new_, vdot_new_, a_new_, lambda_new_,
  // dq_new_ hold the result.
  Outcome Solve(double h);
  // The state implied by vdot_new_ (and U_ for GGL) for step h.
  void UpdateState(double h);
  // Evaluates the Jacobians at the current iterate and (re)factorizes S for step h.
  bool RefreshMatrix(double h, bool new_jacobians);
  double ErrorEstimate(double h);
  // Newton's stopping tolerance for a step of size h (header, "Error per unit step").
  double NewtonTolerance(double h) const;
  // Index 3: r_.tail(m) = g/β'' on the position-level rows (round-off floor, see the .cc) and
  // (G v + ∂g/∂t)/γ'' on the velocity-level rows, at the iterate (G_ evaluated there); returns
  // the unscaled residual ‖·‖∞.
  double Index3ConstraintResidual(double t, double beta2, double gamma2);
  // max |G v + ∂g/∂t| over the velocity-level rows at the iterate (G_ evaluated there); when r is
  // given, also writes those entries divided by `scale` to r(nv + k).
  double VelocityLevelResidual(double t, Eigen::VectorXd* r, double scale);
  // Index 3, after an accepted step: v̇, λ from the index-1 solve at (t, q, v) and a in the
  // constrained directions from them (header, "Algebraic variables"). False on a failed solve.
  bool ResyncAlgebraic();
  // ã_n and ṽ_n for a step of size h after one of size h_last_ (variable-step rule, header).
  void ShiftToStep(double h);
  // Index 3, the directions the position-level rows fix at (t, q, v) (header, "Friction"): their
  // Jacobian G_P, M⁻¹H_Pᵀ (H_P = G_P for ideal forces) and the rank-revealing factorization of
  // G_P M⁻¹H_Pᵀ, so that W = M⁻¹H_Pᵀ (G_P M⁻¹H_Pᵀ)⁺ with G_P W = I.
  void PositionConstrainedDirections(
      double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::MatrixXd* G,
      Eigen::MatrixXd* MiHt,
      Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>* delassus) const;

  // Near a rank drop of G (header): S_lu_'s pivot ratios since Reset.
  RankDropMonitor rank_drop_;

  GeneralizedAlphaParameters par_;
  bool correct_variable_step_ = true;
  bool resync_algebraic_ = false;  // index 3 (see the header, "Algebraic variables")
  std::unique_ptr<engine::ConstrainedDynamics> dynamics_;
  StepStatus reset_status_ = StepStatus::kAccepted;
  IterationMatrix S_lu_, P_lu_;
  bool jacobians_stale_ = true;
  double h_matrix_ = 0;  // step size S was built for

  // State at t_n: v̇_n, a_n, λ_n; v̇_{n−1} and the step sizes behind a_n.
  Eigen::VectorXd vdot_, a_, lambda_, vdot_prev_;
  double h_last_ = 0;                  // size of the last accepted step (0 after Reset)
  Eigen::VectorXd a_shift_, v_shift_;  // ã_n, ṽ_n used by the current step
  // Iterate.
  Eigen::VectorXd q_new_, v_new_, vdot_new_, a_new_, lambda_new_, dq_new_, q_hat_, U_, nu_;
  // Work.
  Eigen::MatrixXd M_, K_, C_, KM_, KG_, G_, H_, Z_, S_, P_;
  Eigen::VectorXd F_, g_, gt_, r_, x_, e_, y_old_, y_new_;
  // Dense output of [t_prev_, t_]: q_prev_ ⊕ Δ(θ), Hermite data.
  double h_dense_ = 0;
  Eigen::VectorXd d_q1_, d_v0_, d_v1_, d_a0_, d_a1_;
};

}  // namespace saltus::integrators
