// Null-space (tangent-space) Newmark integration of constrained mechanical systems
// (I. Fernández de Bustos, H. Uriarte, G. Urkullu, V. García-Marina, Multibody Syst. Dyn.
// (2021), Sections 4–6; equation numbers below are that paper's).
//
// One step t_n → t_{n+1} = t_n + h. Unknowns at t_{n+1}: the tangent increment d (nv) with
// q_{n+1} = q_n ⊕ d (MechanicalSystem::IntegratePosition), v = v_{n+1} (nv), a = v̇_{n+1} (nv).
// Each Newton iteration linearizes the three constraint levels at the current estimate
// (d₀, v₀, a₀), x₀ = q_n ⊕ d₀, with G₀ = G(x₀, t_{n+1}) (m × nv):
//
//   position      G₀ Δd = −g(x₀)                                          (eq. 32–33)
//   velocity      G₀ Δv = −(G₀ v₀ + ∂g/∂t) − Ḣ Δd,        Ḣ = ∂(G v₀ + ∂g/∂t)/∂d     (eq. 35–36)
//   acceleration  G₀ Δa = −(G₀ a₀ + γ) − Ḧ Δd − Γ_v Δv,  Ḧ = ∂(G a₀ + γ)/∂d, Γ_v = ∂γ/∂v (eq.
//   41–43)
//
// and parametrizes their solutions with minimum-norm particular solutions (G₀⁺, from an SVD, so
// that redundant rows work) and an orthonormal null-space basis N (nv × r, G₀ N = 0):
//
//   Δd = d_p + N α,                      d_p = −G₀⁺ g                              (eq. 34)
//   Δv = v_p + N α̇ + X_p α,             X_p = −G₀⁺ Ḣ N                            (eq. 38–40)
//   Δa = a_p + N α̈ + X₁ α + X₂ α̇,      X₁ = −G₀⁺ (Ḧ N + Γ_v X_p), X₂ = −G₀⁺ Γ_v N  (eq. 45–49)
//
// The start-of-step state is projected onto the same linearization by least squares
// (eq. 56–58). Because every particular solution lies in range(G₀ᵀ) ⟂ N and N is orthonormal,
// the least-squares projection of eq. 56–58 gives exactly the tangential components Nᵀ(·) of
// the start-of-step increment (0), velocity and acceleration; in the absolute tangential
// coordinates Nᵀd, Nᵀv, Nᵀa Newmark's scheme on α therefore reads
//
//   Nᵀ d        = h Nᵀ v_n + h² ((½ − β) Nᵀ a_n + β Nᵀ a),
//   Nᵀ v_{n+1}  = Nᵀ v_n + h ((1 − γ_N) Nᵀ a_n + γ_N Nᵀ a),
//
// and the reduced equilibrium (eq. 52, N_G = N since positions and velocities share the tangent
// coordinates) linearized with the tangent matrices of engine::MechanicalSystem,
//
//   Nᵀ [ M₀ a₀ − F₀ + M₀ Δa + K_t Δd + C_t Δv ] = 0,
//   K_t = ∂(M a₀)/∂q − ∂F/∂q − ∂(Gᵀλ)/∂q,   C_t = −∂F/∂v,
//
// is one r × r linear system for α̈. The constraint forces Gᵀλ drop out (Nᵀ G₀ᵀ = 0) except for
// their geometric stiffness in K_t, which carries the pendulum's restoring force. At convergence
// the step satisfies g = 0, G v + ∂g/∂t = 0, G a + γ = 0 and Nᵀ(M a − F) = 0 at t_{n+1} together
// with the two Newmark relations above: positions, velocities and accelerations are all on the
// constraint manifold, and the linear stability of the scheme is Newmark's on the reduced
// system M_R = Nᵀ M N, K_R = Nᵀ K_t N (eq. 11, 26: Δt ≤ ω_max⁻¹ (γ/2 − β)^(−1/2) for
// conditionally stable parameters). Within one step the derivative matrices Ḣ, Ḧ, Γ_v (central
// differences of the constraint routines) and K_t, C_t are evaluated once at the predictor
// (simplified Newton): they change the rate of convergence, not the converged solution.
//
// Newton stops when the constraint residuals at the current estimate are below newton_tol and the
// last update was below newton_tol relative to the state; at most max_newton_iterations. Near a
// singular configuration (the double four-bar with all bars on the ground line) the minimum-norm
// particular solutions amplify the round-off of the residuals by 1/σ and 1/σ²: at σ_min(G) ~ 1e-3
// (rtol 1e-7, t = 0.71386 s) Δa stalled at 1.5e-8 … 9e-8 relative, at σ_min ~ 5e-5 (rtol 1e-10,
// t = 0.714325 s) Δv at 2e-8 … 4e-8 relative (v_p = −G⁺(r_v + Ḣ d_p) carries the position
// round-off d_p ~ ε/σ through Ḣ and G⁺ again), with every constraint residual at 1e-16 and position
// updates of 1e-12: every step failed down to h_min (newton_failure at t = 0.714 s for rtol ≤
// 1e-6). So an iterate is also accepted when the constraint residuals are below newton_tol, the
// position update is below it, and the update stopped contracting (‖Δ_k‖ ≥ ½ ‖Δ_{k−1}‖) twice in a
// row: Newton sits on the round-off floor that the conditioning of G allows, and the velocity
// constraint holds to newton_tol.
//
// Round-off floor retry. Closer to the rank drop (σ_min/σ_max of G₀ down to 1e-6 … 1e-7: the
// double four-bar at rtol 1e-8, t = 2.657 s, and at 1e-9/1e-10, t = 0.71435 s) the iteration
// itself amplifies round-off: a position update d_p = −G⁺g of the round-off of g (ε/σ, 1e-11 …
// 1e-10) moves G, so that the next velocity residual is of order σ |d_p| |v| and v_p = −G⁺ r_v
// of order 1e-5; v_p enters a_p through Γ_v v_p and is divided by σ once more. The updates then
// alternated (accelerations changing by 2 … 17 % of |a|) with every constraint residual at
// newton_tol, and every step failed down to h_min. So a step that fails — Newton, or the error
// test — while σ_min/σ_max < 1e-3 (kNearSingular) and every constraint residual of its last
// iterate is below newton_tol is solved once more from the predictor with three changes:
//   - a particular solution d_p or v_p below newton_tol relative (the round-off floor) is not
//     applied, so positions and velocities do not move by amplified noise;
//   - Newton stops on the position and velocity updates (below newton_tol) with the residuals:
//     the accelerations are determined only to ε/σ² there;
//   - the error estimate keeps its part along the manifold, (I − M⁻¹Gᵀ W⁺ G) e
//     (Integrator::RemoveConstrainedPartOfError), since Δa carries that noise along range(Gᵀ).
// The converged step satisfies the same constraints to newton_tol; only which iterate is accepted
// differs. The gate leaves Bricard's mechanism untouched: its failed steps have σ ratios 0.12 …
// 0.13 (1.05e-10 for its redundant row), and its steps and trajectories are byte-identical at
// every rtol 1e-3 … 1e-10 (docs/benchmarks.md). Measured on the double four-bar over 20 s:
// rtol 1e-8, 1e-9, 1e-10 finish (58,564, 126,189 and 285,712 steps; main stops at 2.657 s and
// 0.714 s).
//
// Error estimate (step-size control, eq. 30 of Haddouni et al. with p = 2): the local error of
// Newmark's positions is h² (β − 1/6) (a_{n+1} − a_n) + O(h⁴) (Zienkiewicz & Xie 1991); the
// velocities (trapezoidal in a when γ_N = ½) have local error −h³/12 ä, estimated from the second
// difference of accelerations over the last two steps (none on the first step after a Reset).
// Both are combined in the scaled RMS norm.
//
// Dense output: cubic Hermite interpolation of the tangent increment (values 0, d, slopes h v_n,
// h v_{n+1}) and of v (slopes h a_n, h a_{n+1}); exact at both ends.
//
// Accelerations: the step needs a_n; Reset computes it from the index-1 KKT system
// (engine::ConstrainedDynamics), after that the converged a of each step is kept.
//
// Formulation: the scheme enforces position, velocity and acceleration constraints at once; it
// is registered for the stabilized index-2 formulation ("ggl"), the closest of the four.
//
// Friction: refused (Reset throws; the integrator table says so). Velocity-level rows (sticking
// contacts) have no position constraint, so positions and velocities would need different
// tangent spaces (null(G_position) and null(G)), where the scheme's Newmark relations use one
// basis N for both (N_G = N above). Non-ideal forces (sliding, M v̇ = F + Hᵀλ with H ≠ G) do not
// drop out of the reduced equilibrium: Nᵀ Hᵀ λ ≠ 0 for N spanning null(G).
//
// References: I. Fernández de Bustos, H. Uriarte, G. Urkullu, V. García-Marina, Multibody
// Syst. Dyn. (2021), integration in the tangent space of the constraint manifold (the team's
// seed null-space-tangent-integration-dae.txt); N. M. Newmark, A method of computation for
// structural dynamics, J. Eng. Mech. Div. ASCE 85 (1959); O. C. Zienkiewicz, Y. M. Xie, A simple
// error estimator and adaptive time stepping procedure for dynamic analysis, Earthquake Eng.
// Struct. Dyn. 20 (1991) 871–887.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string_view>

#include "engine/constrained_dynamics.h"
#include "integrators/integrator.h"

namespace saltus::integrators {

// Newmark's parameters (β, γ). Stability of the linear undamped scheme: unconditional when
// γ ≥ ½ and β ≥ γ/2; otherwise (γ ≥ ½) Δt ω ≤ (γ/2 − β)^(−1/2).
struct NewmarkParameters {
  double beta = 0.25;
  double gamma = 0.5;
  static NewmarkParameters Trapezoidal() { return {0.25, 0.5}; }
  static NewmarkParameters FoxGoodwin() { return {1.0 / 12.0, 0.5}; }
  static NewmarkParameters LinearAcceleration() { return {1.0 / 6.0, 0.5}; }
};

class NullspaceNewmark final : public Integrator {
 public:
  // Throws std::invalid_argument on invalid options (see Integrator), a formulation other than
  // kStabilizedIndex2, or parameters outside β ∈ (0, ½], γ ∈ [½, 1] (β = 0 would make the scheme
  // explicit in positions, which this implicit solver does not treat).
  explicit NullspaceNewmark(const IntegratorOptions& options,
                            NewmarkParameters parameters = NewmarkParameters::Trapezoidal(),
                            std::string_view name = "newmark_nullspace");
  ~NullspaceNewmark() override;

  std::string_view name() const override { return name_; }
  // Second order for γ = ½ (the only choice admitted here besides damped γ > ½, which is first
  // order); order() reports 2 for γ = ½ and 1 otherwise.
  int order() const override { return parameters_.gamma == 0.5 ? 2 : 1; }
  int dense_output_order() const override { return 3; }
  bool Supports(Formulation f) const override { return f == Formulation::kStabilizedIndex2; }
  // Neither friction phase (header, "Friction").
  bool SupportsNonIdealForces() const override { return false; }
  bool SupportsVelocityLevelRows() const override { return false; }
  const NewmarkParameters& parameters() const { return parameters_; }

  // The multipliers λ (rows) and accelerations a (nv) of the last accepted step.
  const Eigen::VectorXd& lambda() const { return lambda_; }
  const Eigen::VectorXd& acceleration() const { return a_; }
  // Steps solved again on the round-off floor (header) since construction.
  long round_off_retries() const { return round_off_retries_; }

 private:
  enum class SolveResult { kConverged, kNotConverged, kNonFinite };

  void DoReset() override;
  StepStatus DoStep(double t_limit) override;
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // Newton iteration of one step of size h; on success d_, v_new_, a_new_ hold the solution.
  SolveResult SolveStep(double h, bool round_off_floor);
  // Central-difference derivative matrices at the predictor (see the header comment).
  void TangentMatrices(double t1, const Eigen::VectorXd& x0);
  double LocalError(double h);
  bool ProjectIfNeeded(double t);
  void ComputeMultipliers(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                          const Eigen::VectorXd& a);

  NewmarkParameters parameters_;
  std::string_view name_;
  std::unique_ptr<engine::ConstrainedDynamics> dynamics_;
  StepStatus reset_status_ = StepStatus::kAccepted;

  Eigen::VectorXd a_, a_prev_, lambda_;  // accelerations at t_ and t_prev_, multipliers at t_
  Eigen::VectorXd da_prev_;              // a_n − a_{n−1} of the previous step (error estimate)
  double h_prev_ = 0;                    // size of the previous step (0: none since Reset)
  bool have_da_prev_ = false;
  long round_off_retries_ = 0;
  bool floor_step_ = false;  // the step being tried is solved on the round-off floor
  // Of the last Newton iteration: σ_min/σ_max of the kept singular values of G₀ (1 without
  // rows), and whether every constraint residual was below newton_tol.
  double sigma_ratio_ = 1.0;
  bool residuals_at_tol_ = false;

  // Newton state and workspace.
  Eigen::VectorXd d_, v_new_, a_new_, x_, q_new_;
  Eigen::MatrixXd M_, G_, K_t_, C_t_, K_tmp_, Hd_, Hdd_, Gv_mat_;
  Eigen::VectorXd F_, g_, g_t_, gamma_, r_v_, r_a_;
  Eigen::MatrixXd N_, Gpinv_;
  Eigen::VectorXd r_rhs_;  // right-hand sides of the velocity and acceleration particular solutions
  Eigen::MatrixXd G_plus_, G_minus_;
  Eigen::VectorXd y_plus_, y_minus_;
  Eigen::VectorXd err_, y_old_, y_new_;

  // Dense output of [t_prev_, t_].
  Eigen::VectorXd d_dense_, v_dense0_, v_dense1_;
};

}  // namespace saltus::integrators
