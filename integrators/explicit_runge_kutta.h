// Embedded explicit Runge–Kutta pairs on the index-1 formulation, with MDOP5-style projection:
// what DOPRI5 (dopri5.h) and DOP853 (dop853.h) share. A scheme supplies its tableau
// (ExplicitRkTableau), how its error estimators combine, and its dense output.
//
// The smooth phase with the active rows A frozen is integrated as the first-order system
// y = (q, v), ẏ = (v, v̇), where v̇ (nv) comes from the index-1 KKT solve of
// engine::ConstrainedDynamics (Haddouni et al. 2017, eq. 8-9):
//
//   [ M(q)  −G_Aᵀ ] [ v̇ ]   [ F(q, v, t) ]
//   [ G_A     0   ] [ λ  ] = [    −γ_A    ].
//
// One step from (t_n, q_n, v_n) with step h and the tableau (c, a, b) of s stages, i = 1..s:
//
//   Q_i = q_n ⊕ h Σ_j a_ij K_j,  K_j = dexp⁻¹_{Θ_j}(V_j), Θ_j = h Σ_k a_jk K_k
//        (MechanicalSystem::IntegratePosition and DexpInv: a Lie-group Runge–Kutta method of
//        Munthe-Kaas type, Hairer–Lubich–Wanner GNI Sec. IV.8.2, so rotations keep the order;
//        for vector spaces K_j = V_j and this is the classical method)
//   V_i = v_n + h Σ_j a_ij A_j,      A_i = v̇(t_n + c_i h, Q_i, V_i)   (one KKT solve each)
//
//   q_{n+1} = q_n ⊕ h Σ b_j K_j,   v_{n+1} = v_n + h Σ b_j A_j.
//
// Every tableau here is FSAL: a_sj = b_j and c_s = 1, so stage s is the solution and the first
// stage of the next step, and an accepted step costs s − 1 KKT solves. Each embedded solution
// b̂⁽ᵉ⁾ gives an error estimate y_{n+1} − ŷ⁽ᵉ⁾_{n+1} (q in the nq coordinates, v in nv; when
// nq = nv the position part is taken in the tangent, h Σ (b_j − b̂_j) K_j, which avoids
// cancellation), measured with Integrator::ErrorNorm; the scheme combines the norms
// (CombineErrors) into err, and the step-size rule is eq. (30) with exponent 1/(p + 1), p the
// order of the combined estimate (Hairer, Nørsett & Wanner, Sec. II.4). Haddouni et al. write
// eq. (30) with exponent 1/p, p = 4 for DOPRI5; we use the exponent that matches the order of
// the estimated local error.
//
// Dense output: stages s + 1 … s_dense (Hairer, Nørsett & Wanner, Sec. II.6; none for DOPRI5)
// are evaluated after an accepted step, from the same q_n, v_n and the stages before them
// (including the unprojected FSAL stage s); the scheme then builds its interpolant from all
// stages (BuildDenseOutput).
//
// Projection (MDOP5; Haddouni et al. 2017, Sec. 3.3): after an accepted step, if options.project
// and ‖g_A(q_{n+1})‖∞ > projection_tol or ‖G_A v_{n+1} + ∂g_A/∂t‖∞ > projection_tol, the
// positions are projected (eq. 35) and then the velocities (eq. 36) with options.
// projection_metric, Newton tolerance options.newton_tol and at most
// options.max_newton_iterations iterations (Table 1). The step's dense output stays the
// unprojected interpolant: Interpolate(t()) may differ from q(), v() by the projection
// correction, which is of the size of the drift (below projection_tol before the step, and the
// step's local error after it; near-singular steps of DOP853 excepted, below). The
// projections' Newton iterations are added to stats().newton_iterations. A projection that does
// not converge returns kNewtonFailure with the state left at the previous step.
// The projection with the step end's factorization: away from singular configurations (and with
// the M metric, ideal forces and position-level rows only) the FSAL stage's KKT solve at
// (q_{n+1}, v_{n+1}) has already formed G, M⁻¹Gᵀ and the LDLᵀ of W = G M⁻¹Gᵀ there
// (ConstrainedDynamics::LastSolveCorrection), which are the matrices of the simplified Newton
// iteration of eq. (35) started at q_{n+1}: q ← q ⊖ M⁻¹Gᵀ W⁻¹ g(q). A drift d of one step's
// local error is removed in one iteration (the next residual is O(d²): 1e-18 for d = 1e-9), the
// velocities (eq. 36) with the same matrices: v ← v − M⁻¹Gᵀ W⁻¹ (G(q̃) v + ∂g/∂t), whose
// direction is off by O(‖q̃ − q_{n+1}‖) only, absorbed by the iteration since the residual is
// that of G(q̃). The tolerances are those of the full projection (engine/projection.h); each
// iteration must halve the residual, at most kStepEndFactorIterations of them, else the full
// projection runs from the unprojected state. Nothing is formed or factored: on Andrews'
// squeezer (DOP853, tol 1e-3, every step projected onto 1e-11) this removes the projection's
// two factorizations of W per step.
// After a projection the FSAL stage is re-evaluated at the projected state (one more KKT solve),
// unless the correction (q̃ − q_{n+1}, ṽ − v_{n+1}) has a scaled error norm (Integrator::
// ErrorNorm, the step's rtol and atol) at most kStaleFirstStageBound = 1e-3: then the unprojected
// FSAL stage stays the next first stage. Its acceleration differs from the one at the projected
// state by L·‖correction‖ (L the Lipschitz constant of v̇), so the next step's result moves by
// h·b·L·‖correction‖ ≤ (hL)·1e-3 of the tolerance, with hL = O(1) inside the explicit method's
// stability region; the error estimate is affected the same way. A projection of drift far
// below the local error (projection_tol 1e-10, as the |g| ≤ 1e-10 of issue 19 asks) then mostly
// costs no KKT solve; a projection of a drift near the tolerance (the library's projection_tol
// 1e-4 at rtol 1e-6) still re-evaluates. Measured on Andrews' squeezer (DOP853, projection_tol
// 1e-10, tol 1e-2 … 1e-6, errors at t = 0.03 against the Test Set): with the bound 1e-3 the
// errors are those of re-evaluating every time within 3 % (tol 1e-4: 9.75e-8 against 9.47e-8;
// tol 1e-3: 2.860e-5 against 2.874e-5) and 474 instead of 505 solves at tol 1e-3; with 1e-2 the
// error at tol 1e-2 grew by 31 % (4.59e-3 against 3.51e-3), so 1e-3.
//
// Near singular configurations (a rank drop of G_A: the double four-bar with all bars on the
// ground line, where the parallelogram and the crossed branches meet). The index-1 ODE keeps
// the drift G v + ∂g/∂t constant (d/dt (G v) = Ġ v + G v̇ = 0); along a left singular vector u
// of G with singular value σ → 0 a drift c_u needs a velocity c_u/σ along the matching right
// singular vector, i.e. a move towards the other branch, and accelerations c_u σ̇/σ². With the
// default projection_tol (1e-4, never reached on the four-bar) the planar double four-bar left
// the parallelogram branch at rtol 1e-5 … 1e-8 (energy error up to 0.1 J) or the steps
// collapsed towards the singular time. So a step whose KKT solves (DynamicsStatus::pivot_ratio:
// smallest over largest pivot of W, ~ (σ_min/σ_max)²) saw a ratio below kNearSingularPivotDrop
// times the reference ratio (the largest seen since Reset: the mechanism away from its
// singular configurations) is projected at its end whatever its violation, onto the projections'
// round-off floor, so that c_u is round-off when the mechanism reaches the singular
// configuration; if that projection does not converge, the usual projection applies. The
// projection is onto all active rows, also those dropped as dependent at Reset
// (Integrator::NeedsIndependentRows): the kept rows may lose more rank at the singular
// configuration than all rows do (the spatial double four-bar: the 29 rows kept at t = 0 have
// rank 26 there, all 35 rows 27), and the mechanism could leave the plane along a dropped row.
// Error estimate of such a step: even on the round-off floor, the KKT solves near the rank drop
// carry multipliers with errors ~ (error of γ_u)/σ², i.e. accelerations with errors far above
// the tolerance in range(M⁻¹Gᵀ) (the directions whose σ → 0), which the local error estimate
// y_{n+1} − ŷ_{n+1} saw: at rtol 1e-10 the scaled error stayed ~3e-3 whatever h (a noise
// floor, measured on the planar double four-bar), the controller (safety 0.3) shrank h by 4 %
// per step, and the steps collapsed onto the singular configuration. Since the step end is
// projected, which removes the error's part in range(M⁻¹Gᵀ) (velocities exactly, by eq. 36 in
// the M metric; positions to first order), the estimate of such a step keeps only its part in
// null(G): err ← (I − M⁻¹Gᵀ W⁺ G) err at q_{n+1} for v and for the position's tangent increment
// h Σ (b_j − b̂_j) K_j (engine::ConstrainedDynamics::RemoveConstrainedPart, W⁺ without a rank
// decision); such a step is always projected (if the tight projection fails, by the usual
// one): the projection resets the constrained components, so their error need not be
// controlled, only the error of the motion along the manifold. The tight position projection
// also goes below the usual round-off floor 16 ε ‖q‖∞ while Newton still converges (engine/
// projection.h): the planar cranks reach ~31 rad in 20 s, where that floor (1.1e-13) left a
// position residual e along the near-singular direction, which turns the branch crossing into a
// hyperbola of size √e ~ 3e-7 that the steps could not follow (stop at t = 10.43 s at rtol 1e-10,
// atol 1e-12). Measured, 20 s, steps / max |E − E0|: planar double four-bar (library defaults,
// rtol = atol) 1e-5 522 / 4.6e-5 J, 1e-8 2,095 / 4.8e-9 J, 1e-9 3,324 / 7.3e-10 J, 1e-10
// 5,273 / 4.9e-9 J (before: stops at 18.20 s and 0.714 s at 1e-9, 1e-10); with atol = rtol/100,
// 1e-10 6,748 / 5.1e-11 J; spatial (35 rows, atol = rtol/100) 1e-8 2,525 / 8.5e-10 J, 1e-10
// 6,399 / 8.4e-10 J (before: stops at 1.2282 s and 0.7144 s). LIMITATION: a step across the
// singular configuration can still cost more energy than the tolerance suggests (planar, rtol
// 1e-9, atol 1e-9/100: one step at t = 10.42693 s, 3.4e-7 J; not analysed further, presumably
// the multipliers' errors ~ 1/σ² of stages next to it, leaking into the motion along the
// manifold through the change of G within the step).
// The filtered estimate can still sit on a floor that does not shrink with h (DOP853, rtol =
// atol = 1e-10, t ≈ 18.711 s: scaled err 1e-4 … 1e-3 for every h from 3.5e-7 s to 3e-13 s).
// Below err = 1 the controller keeps h only when err ≤ safety^(p+1) (0.3⁸ = 6.6e-5 for DOP853's
// order-7 estimate, 0.3⁵ = 2.4e-3 for DOPRI5's): DOP853's accepted steps shrank by ~5 % each
// until stages failed at h_min (linear_solve_failure after 9,440 steps). So when an accepted
// filtered step follows an accepted filtered step at least as long and its err did not fall
// (the estimate does not follow h^(p+1): a floor), the next step is not shrunk. Where the
// estimate does fall with h (loose tolerances) nothing changes. DOP853, 20 s at rtol 1e-10:
// 1,062 steps (bench/singular_positions.py, docs/benchmarks.md).
// Dense output of a near-singular step: the scheme's interpolant is a combination of the stage
// rates, and the stages' accelerations near the rank drop carry the errors ~ (error of γ_u)/σ²
// in range(M⁻¹Gᵀ) that the filtered estimate leaves out and the end projection removes only at
// the step end. For DOP853 the three dense-output stages are in addition outside every estimate:
// at rtol = atol = 1e-10 on the planar double four-bar, in the accepted step 18.19415 → 18.20839 s
// across the crossing θ = −18π, one of them saw a pivot ratio 7e-10 and gave crank accelerations
// −12.4 / −9.3 / −13.9 rad/s² (−11.44 on the branch), the next 58 / −95; the interpolant at
// 18.20 s left the manifold (|g| 3.4e-6 m, |G v| 5e-4 m/s, crank rates −4.886 / −5.016 /
// −4.809 rad/s) with an energy error of 6.4e-3 J, while every step end stayed within 3.1e-7 J.
// So for a projected near-singular step of a scheme with dense-output stages, Interpolate gives
// the Hermite interpolant of the step's ends instead (InterpolateNearSingular): (q, v, v̇) at the
// start and at the projected end, all on the manifold, the accelerations from solves at those
// states. Vector-space coordinates (nq = nv): the quintic in q and its derivative for v, errors
// O(h⁶) and O(h⁵); with rotations: cubics in the tangent increment and in v, O(h⁴). Same
// example, output every 0.01 s: max |E − E0| over the output 6.4e-3 → 3.9e-7 J. DOPRI5 has no
// dense-output stages and keeps its interpolant (its 1e-10 run: 6e-10 J on the same grid).
//
// KKT-solve accounting (stats().rhs_evaluations): 1 per Reset (the first stage), +1 per Reset
// when h_init = 0 (the automatic initial step's probe), s − 1 per attempted step (accepted or
// rejected), +1 per projected step whose FSAL stage is re-evaluated (above), and s_dense − s per
// accepted step whose dense output is asked strictly inside the step (below).
//
// Lazy dense-output stages: a scheme whose continuous extension needs stages beyond the solution
// (DOP853: 3 of them) computes them when an interpolation strictly inside the accepted step first
// asks for it, not with the step; they depend only on the step's start and its stages, which stay
// until the next Step. The values are those of the stages computed with the step, to the bit. A
// run that interpolates only at the step ends (the event loop with event_samples = 0 and no
// output grid inside the step) pays 12 KKT solves per DOP853 step instead of 15. Their solves
// are outside the step: their pivot ratios do not enter the near-singular test, and a failed one
// (or a Step attempt that has since overwritten the stages, after a failed Step) leaves the
// interpolant without their terms, the cubic Hermite interpolant of the step's ends (dop853.h).
//
// Failures (the state stays at the last accepted step): a KKT solve that fails (DynamicsStatus
// not ok) in a stage or at the projected step end, or a projection that
// does not converge, is treated as a rejected step (adaptive mode): h is halved and the step
// retried, because a stage that lands almost exactly on a singular configuration (the double
// four-bar with all bars on the ground line) leaves G v̇ + γ just above the consistency bound
// while the state is consistent; the retried step's stages lie elsewhere. Only when h has reached
// h_min (the stages then approach the accepted state) is it reported: kLinearSolveFailure or
// kNewtonFailure. So a genuinely inconsistent state is still reported, after ~log2(h / h_min)
// retries. A NaN or Inf in a stage → kNonFinite (not retried with a smaller step: non-finite
// forces are a modelling error more often than a step-size one); an error test that fails with
// h ≤ h_min → kStepSizeUnderflow.
//
// Friction (integrator.h, "Friction"): the index-1 solve takes the non-ideal forces (W = G M⁻¹Hᵀ,
// engine/constrained_dynamics.h); velocity-level rows are index-1 rows like any other, and the
// position projection skips them (engine/projection.h). Near-singular filtering of the error
// estimate needs a symmetric W and is not done for non-ideal forces (the usual projection applies).
//
// References: E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential Equations I, 2nd
// ed., Springer 1993, Sec. II.4 (initial step, step control), II.6 (dense output). B. Simeon,
// MBSPACK – Numerical integration software for constrained mechanical motion, Surveys Math.
// Industry 5 (1995) 169–202 (MDOP5; ref. [58] of Haddouni et al.). Haddouni, Acary, Garreau,
// Beley, Brogliato, Multibody System Dynamics 41 (2017).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "integrators/integrator.h"

namespace saltus::integrators {

// An explicit Runge–Kutta tableau with FSAL solution stage and dense-output stages (header).
// 0-based stages; `a` is row-major with `dense_stages` columns.
struct ExplicitRkTableau {
  int stages = 0;             // s: stage s − 1 (0-based) is the solution, a[s − 1][j] = b_j
  int dense_stages = 0;       // s_dense ≥ s: stages s … s_dense − 1 only for the dense output
  std::span<const double> c;  // s_dense nodes
  std::span<const double> a;  // s_dense × s_dense, strictly lower triangular
  std::span<const double> b;  // s weights of the solution
  // Embedded weights b̂⁽ᵉ⁾ (s each), one per error estimator (1 or 2).
  std::vector<std::span<const double>> b_hat;
  int order = 0;           // of the solution
  int estimate_order = 0;  // p: the combined estimate err is O(h^(p+1))
  double a_at(int i, int j) const { return a[static_cast<std::size_t>(i * dense_stages + j)]; }
};

// a[i][j] row-major, for ExplicitRkTableau::a.
template <std::size_t N>
constexpr std::array<double, N * N> FlattenTableau(const std::array<std::array<double, N>, N>& a) {
  std::array<double, N * N> flat{};
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = 0; j < N; ++j) flat[i * N + j] = a[i][j];
  }
  return flat;
}

class ExplicitRungeKutta : public Integrator {
 public:
  ~ExplicitRungeKutta() override;

  std::string_view name() const override { return name_; }
  int order() const override { return tableau_.order; }
  bool Supports(Formulation f) const override { return f == Formulation::kIndex1; }
  // After an accepted step: the residual of the solve at its end (the FSAL stage, or the
  // evaluation after a projection; not DOP853's dense-output stages, solved later if at all).
  double StepEndResidual() const override { return step_end_residual_; }

 protected:
  // Throws std::invalid_argument on invalid options (see Integrator) or a formulation other than
  // kIndex1. `tableau` must outlive the integrator.
  ExplicitRungeKutta(const IntegratorOptions& options, std::string name,
                     const ExplicitRkTableau& tableau);

  // err from the ErrorNorm of each estimator (same order as tableau.b_hat).
  virtual double CombineErrors(std::span<const double> norms) const { return norms[0]; }
  // Dense-output coefficients of the step of size h just computed, from the stages below and
  // q_, v_ (still the step's start; the step end is not yet swapped in). A scheme with
  // dense-output stages builds here only the part that needs stages 0 … s − 1, with the part of
  // stages s … s_dense − 1 zero, and the rest in CompleteDenseOutput.
  virtual void BuildDenseOutput(double h) = 0;
  // The part of the dense output of the last accepted step that needs its dense-output stages
  // (header, "Lazy dense-output stages"), once they are in V_, K_, A_ (stage 0: v_prev_ in
  // V_[0], K_[0] and the step start's acceleration in A_[0] are those of the next step by then:
  // use v_prev_ and DenseStartAcceleration()).
  virtual void CompleteDenseOutput() {}
  // The dense-output stages s … s_dense − 1 of the last accepted step, computed on the first
  // call after the step (a cache: const for the scheme's DoInterpolate), then
  // CompleteDenseOutput. False when they are not available: a stage solve failed, or a Step
  // attempt has since overwritten the stages; the scheme's interpolant then keeps the part of
  // the dense-output stages zero (header).
  bool EnsureDenseStages() const;
  // v̇ at the start of the last accepted step (valid for EnsureDenseStages/CompleteDenseOutput).
  const Eigen::VectorXd& DenseStartAcceleration() const { return dense_a0_; }
  // The dense output of the last accepted step when it replaces the scheme's (header, "Dense
  // output of a near-singular step"): the cubic Hermite interpolants of the projected end states.
  // Returns false (and leaves *q, *v alone) when the scheme's own interpolant applies.
  bool InterpolateNearSingular(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const;

  const ExplicitRkTableau& tableau_;
  // Stage velocities V_i (nv), the position rates K_i = dexp⁻¹_{Θ_i}(V_i) with
  // Θ_i = h Σ_j a_ij K_j (equal to V_i for vector spaces) and the stage accelerations A_i, for
  // every stage including the dense-output ones.
  std::vector<Eigen::VectorXd> V_, K_, A_;

 private:
  enum class EvalResult { kOk, kLinearSolveFailure, kNonFinite };
  // Step reduction after a failed stage solve or projection (see the header; a heuristic: any
  // factor that moves the stages off the singular point will do).
  static constexpr double kStageFailureShrink = 0.5;
  // Near singular configurations (see the header): a step whose KKT solves saw a pivot ratio of
  // W below kNearSingularPivotDrop times the reference ratio (σ_min/σ_max of G down by ~30
  // since the ratio goes as σ²) is projected to the round-off floor (ProjectToRoundOff,
  // tolerance 1e-14, which the projections raise to their floor). Measured with DOPRI5 on the
  // planar double four-bar through `saltus run` (rtol = atol = 1e-5 … 1e-10): drop 1e-2 passes 20 s
  // up to 1e-8 (1e-9 stops at 8.48 s), 1e-3 up to 1e-8 (1e-9: 18.2 s), 1e-4 only up to 1e-6
  // (1e-7: 14.3 s).
  static constexpr double kNearSingularPivotDrop = 1e-3;
  // Simplified-Newton iterations of ProjectWithStepEndFactor for positions and for velocities
  // (each must halve the residual): a drift of a step's local error is removed in one, its
  // square in a second (header, "Projection").
  static constexpr int kStepEndFactorIterations = 3;
  // The FSAL stage is kept as the next first stage when the projection's correction (q̃ − q,
  // ṽ − v) has a scaled error norm at most this (header, "Projection").
  static constexpr double kStaleFirstStageBound = 1e-3;

  static StepStatus ToStatus(EvalResult r);

  void DoReset() override;
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;

  // v̇ at (t, q, v) on the active rows (one KKT solve, counted in stats).
  EvalResult Acceleration(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                          Eigen::VectorXd* vdot);
  // Stage i (0-based, ≥ 1) of a step of size h from (t0, q0, v0) with v̇ = a0 there (stage 0:
  // K_0 = V_0 = v0, A_0 = a0): its position into *Q, V_[i], K_[i], A_[i].
  EvalResult Stage(int i, double h, double t0, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                   const Eigen::VectorXd& a0, Eigen::VectorXd* Q);
  // The dense-output stages of the last accepted step and CompleteDenseOutput (EnsureDenseStages);
  // leaves the step's statistics of pivots and residuals as they were.
  bool ComputeDenseStages();
  // Stages 2..s of a step of size h from the current state; fills q_new_, v_new_, V_, K_, A_.
  EvalResult Stages(double h);
  // Hairer, Nørsett & Wanner, Sec. II.4 (their HINIT); uses A_[0].
  double InitialStep();
  // err of the step (CombineErrors of the estimators' scaled RMS norms).
  double LocalError(double h);
  // ‖y_{n+1} − ŷ⁽ᵉ⁾_{n+1}‖ of estimator e (header); y_old_, y_new_ set.
  double EstimatorNorm(int e, double h);
  // Σ_j w_j K_j over the solution stages into *out (w(j) gives the weight).
  template <class Weight>
  void SumK(const Weight& w, Eigen::VectorXd* out) const;
  // MDOP5 projection of (q_new_, v_new_) at time t when the violation exceeds projection_tol.
  // Returns false when a projection does not converge.
  bool ProjectIfNeeded(double t, bool* projected);
  // The projection of ProjectIfNeeded away from singular configurations, with the FSAL stage's
  // factorization (header, "Projection"); false when it does not apply or does not converge
  // within kStepEndFactorIterations contracting iterations (q_new_, v_new_ then unchanged).
  // Sets keep_fsal_.
  bool ProjectWithStepEndFactor(double t);

  std::string name_;
  std::unique_ptr<engine::ConstrainedDynamics> dynamics_;
  StepStatus reset_status_ = StepStatus::kAccepted;  // failure of the first-stage evaluation

  Eigen::VectorXd theta_;
  Eigen::VectorXd Q_;                      // stage position (nq)
  Eigen::VectorXd sum_v_, sum_a_;          // Σ a_ij K_j, Σ a_ij A_j (nv)
  Eigen::VectorXd q_new_, v_new_, q_hat_;  // candidate and embedded solution
  Eigen::VectorXd err_, y_old_, y_new_;    // (nq + nv) for ErrorNorm
  std::vector<double> norms_;              // per estimator
  Eigen::VectorXd lambda_;                 // multipliers of the last solve
  Eigen::VectorXd g_, g_t_, Gv_;           // projection tests
  Eigen::MatrixXd G_;
  Eigen::MatrixXd M_check_;  // failure classification only
  Eigen::VectorXd F_check_;
  Eigen::VectorXd a_projected_;                               // first stage at the projected state
  Eigen::VectorXd q_fixed_, v_fixed_, fixed_g_, correction_;  // ProjectWithStepEndFactor
  bool keep_fsal_ = false;  // the last projection keeps the FSAL stage (ProjectWithStepEndFactor)
  double last_residual_ = -1.0;      // ‖G v̇ + γ‖∞ of the last KKT solve (Acceleration)
  double step_end_residual_ = -1.0;  // last_residual_ of the step end (StepEndResidual)
  // Smallest DynamicsStatus::pivot_ratio over the KKT solves of the current step attempt.
  double min_pivot_ratio_ = 1.0;
  // Largest min_pivot_ratio_ of the accepted steps since Reset (and of the Reset state): the
  // pivot ratio of the mechanism away from its singular configurations.
  double reference_pivot_ratio_ = 1.0;
  std::vector<int> all_rows_;  // the active rows given to Reset (rows_ and dropped_rows_)
  Eigen::VectorXd filter_;     // error part in null(G) near a singular configuration
  bool filtered_ = false;      // the last LocalError left out the constrained part
  // err and h of the last accepted step if its estimate was filtered, else err = −1 (DoStep).
  double previous_filtered_err_ = -1.0, previous_filtered_h_ = 0.0;
  // Dense output of a near-singular step (InterpolateNearSingular): on when the last accepted
  // step used it; the accelerations at its start and (projected) end, the tangent increment
  // Δ = q ⊖ q_prev and the end's rate dexp⁻¹_Δ(v), h of the step.
  bool hermite_dense_ = false;
  // Lazy dense-output stages (header): the last accepted step's are still to be computed
  // (dense_pending_), were computed (dense_ready_); its h and v̇ at its start.
  bool dense_pending_ = false, dense_ready_ = false;
  double dense_h_ = 0.0;
  Eigen::VectorXd dense_a0_;
  Eigen::VectorXd hermite_a0_, hermite_a1_, hermite_delta_, hermite_k1_;
  double hermite_h_ = 0.0;
  // The current step attempt saw a singular configuration (header).
  bool NearSingular() const {
    return min_pivot_ratio_ < kNearSingularPivotDrop * reference_pivot_ratio_;
  }
};

}  // namespace saltus::integrators
