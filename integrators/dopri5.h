// Dormand–Prince 5(4) on the index-1 formulation, with MDOP5-style projection.
//
// The smooth phase with the active rows A frozen is integrated as the first-order system
// y = (q, v), ẏ = (v, v̇), where v̇ (nv) comes from the index-1 KKT solve of
// engine::ConstrainedDynamics (Haddouni et al. 2017, eq. 8-9):
//
//   [ M(q)  −G_Aᵀ ] [ v̇ ]   [ F(q, v, t) ]
//   [ G_A     0   ] [ λ  ] = [    −γ_A    ].
//
// One step from (t_n, q_n, v_n) with step h and the tableau (c, a, b, b̂) below, i = 1..7:
//
//   Q_i = q_n ⊕ h Σ_j a_ij K_j,  K_j = dexp⁻¹_{Θ_j}(V_j), Θ_j = h Σ_k a_jk K_k
//        (MechanicalSystem::IntegratePosition and DexpInv: a Lie-group Runge–Kutta method of
//        Munthe-Kaas type, Hairer–Lubich–Wanner GNI Sec. IV.8.2, so rotations keep order 5;
//        for vector spaces K_j = V_j and this is the classical method)
//   V_i = v_n + h Σ_j a_ij A_j,      A_i = v̇(t_n + c_i h, Q_i, V_i)   (one KKT solve each)
//
//   q_{n+1} = q_n ⊕ h Σ b_j K_j,   v_{n+1} = v_n + h Σ b_j A_j            (order 5)
//   q̂_{n+1} = q_n ⊕ h Σ b̂_j K_j,  v̂_{n+1} = v_n + h Σ b̂_j A_j            (order 4)
//
// The method is FSAL: a_7j = b_j, so stage 7 is the first stage of the next step and an
// accepted step costs 6 KKT solves. The local error estimate is y_{n+1} − ŷ_{n+1} (q in the nq
// coordinates, v in nv; when nq = nv the position part is taken in the tangent, h Σ (b_j − b̂_j)
// K_j, which avoids cancellation), measured with Integrator::ErrorNorm; the step-size rule is
// eq. (30) with exponent 1/5 (the lower method has order p = 4, so the estimate is O(h⁵);
// Hairer, Nørsett & Wanner, Sec. II.4). Haddouni et al. write eq. (30) with exponent 1/p, p = 4;
// we use the exponent that matches the order of the estimated local error.
//
// Dense output (Hairer, Nørsett & Wanner, Sec. II.6, the continuous extension of order 4 used by
// their code DOPRI5): with θ = (s − t_n)/h ∈ [0, 1] and, for each component of the tangent
// increment and of v,
//   r₁ = h Σ b_j k_j,  r₂ = h k_1 − r₁,  r₃ = r₁ − h k_7 − r₂,  r₄ = h Σ d_j k_j,
//   y(θ) = y_n + θ (r₁ + (1 − θ)(r₂ + θ (r₃ + (1 − θ) r₄))),
// with k = V for positions (then q(s) = q_n ⊕ Δ(θ), Δ the tangent increment) and k = A for
// velocities. The interpolant reproduces y_n at θ = 0 and the unprojected y_{n+1} at θ = 1.
//
// Projection (MDOP5; Haddouni et al. 2017, Sec. 3.3): after an accepted step, if options.project
// and ‖g_A(q_{n+1})‖∞ > projection_tol or ‖G_A v_{n+1} + ∂g_A/∂t‖∞ > projection_tol, the
// positions are projected (eq. 35) and then the velocities (eq. 36) with options.
// projection_metric, Newton tolerance options.newton_tol and at most
// options.max_newton_iterations iterations (Table 1). The step's dense output stays the
// unprojected interpolant: Interpolate(t()) may differ from q(), v() by the projection
// correction, which is of the size of the drift (below projection_tol before the step, and the
// step's local error after it). After a projection the FSAL stage is re-evaluated at the projected
// state (one more KKT solve). The projections' Newton iterations are added to
// stats().newton_iterations. A projection that does not converge returns kNewtonFailure with the
// state left at the previous step.
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
//
// KKT-solve accounting (stats().rhs_evaluations): 1 per Reset (the first stage), +1 per Reset
// when h_init = 0 (the automatic initial step's probe), 6 per attempted step (accepted or
// rejected), +1 per projected step.
//
// Failures (the state stays at the last accepted step): a KKT solve that fails (DynamicsStatus
// not ok) in a stage or at the projected step end, or a projection that does not converge, is
// treated as a rejected step (adaptive mode): h is halved and the step retried, because a stage
// that lands almost exactly on a singular configuration (the double four-bar with all bars on
// the ground line) leaves G v̇ + γ just above the consistency bound while the state is
// consistent; the retried step's stages lie elsewhere. Only when h has reached h_min (the stages
// then approach the accepted state) is it reported: kLinearSolveFailure or kNewtonFailure. So a
// genuinely inconsistent state is still reported, after ~log2(h / h_min) retries. A NaN or Inf
// in a stage → kNonFinite (not retried with a smaller step: non-finite forces are a modelling
// error more often than a step-size one); an error test that fails with h ≤ h_min →
// kStepSizeUnderflow.
//
// Friction (integrator.h, "Friction"): the index-1 solve takes the non-ideal forces (W = G M⁻¹Hᵀ,
// engine/constrained_dynamics.h); velocity-level rows are index-1 rows like any other, and the
// position projection skips them (engine/projection.h). Near-singular filtering of the error
// estimate needs a symmetric W and is not done for non-ideal forces (the usual projection applies).
//
// References: J. R. Dormand, P. J. Prince, A family of embedded Runge–Kutta formulae, J. Comput.
// Appl. Math. 6 (1980) 19–26. E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential
// Equations I, 2nd ed., Springer 1993, Sec. II.4 (initial step), II.5 (Table 5.2), II.6 (dense
// output). B. Simeon, MBSPACK – Numerical integration software for constrained mechanical
// motion, Surveys Math. Industry 5 (1995) 169–202 (MDOP5; ref. [58] of Haddouni et al.).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "integrators/integrator.h"

namespace saltus::integrators {

// The Dormand–Prince 5(4) tableau (Dormand & Prince 1980; Hairer, Nørsett & Wanner, Solving
// ODEs I, Table II.5.2) and the dense-output weights d of their DOPRI5 (ibid., Sec. II.6).
// Indices are 0-based: stage i = 0..6.
namespace dopri5_tableau {

inline constexpr int kStages = 7;

inline constexpr std::array<double, kStages> kC = {0.0,       1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0,
                                                   8.0 / 9.0, 1.0,       1.0};

// a[i][j], j < i (strictly lower triangular).
inline constexpr std::array<std::array<double, kStages>, kStages> kA = {{
    {0, 0, 0, 0, 0, 0, 0},
    {1.0 / 5.0, 0, 0, 0, 0, 0, 0},
    {3.0 / 40.0, 9.0 / 40.0, 0, 0, 0, 0, 0},
    {44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0, 0, 0, 0},
    {19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0, 0, 0, 0},
    {9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0, 0, 0},
    {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0},
}};

// 5th-order weights (= the last row of a: FSAL).
inline constexpr std::array<double, kStages> kB = {
    35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0};

// Embedded 4th-order weights b̂.
inline constexpr std::array<double, kStages> kBHat = {
    5179.0 / 57600.0, 0.0,       7571.0 / 16695.0, 393.0 / 640.0, -92097.0 / 339200.0,
    187.0 / 2100.0,   1.0 / 40.0};

// Dense-output weights d (continuous extension of order 4).
inline constexpr std::array<double, kStages> kD = {
    -12715105075.0 / 11282082432.0,  0.0,
    87487479700.0 / 32700410799.0,   -10690763975.0 / 1880347072.0,
    701980252875.0 / 199316789632.0, -1453857185.0 / 822651844.0,
    69997945.0 / 29380423.0};

// Order of the embedded (lower-order) solution: the error estimate is O(h^(kEmbeddedOrder+1)).
inline constexpr int kEmbeddedOrder = 4;

}  // namespace dopri5_tableau

class Dopri5 final : public Integrator {
 public:
  // Throws std::invalid_argument on invalid options (see Integrator) or a formulation other than
  // kIndex1.
  explicit Dopri5(const IntegratorOptions& options);
  ~Dopri5() override;

  std::string_view name() const override { return "dopri5"; }
  int order() const override { return 5; }
  int dense_output_order() const override { return 4; }
  bool Supports(Formulation f) const override { return f == Formulation::kIndex1; }
  // After an accepted step the last solve was at its end (stage 7, FSAL, or after a projection).
  double StepEndResidual() const override { return last_residual_; }

 private:
  enum class EvalResult { kOk, kLinearSolveFailure, kNonFinite };
  // Step reduction after a failed stage solve or projection (see the header; a heuristic: any
  // factor that moves the stages off the singular point will do).
  static constexpr double kStageFailureShrink = 0.5;
  // Near singular configurations (see the header): a step whose KKT solves saw a pivot ratio of
  // W below kNearSingularPivotDrop times the reference ratio (σ_min/σ_max of G down by ~30
  // since the ratio goes as σ²) is projected onto kNearSingularProjectionTolerance, which the
  // projections raise to their round-off floor. Measured on the planar double four-bar through
  // `saltus run` (rtol = atol = 1e-5 … 1e-10): drop 1e-2 passes 20 s up to 1e-8 (1e-9 stops at
  // 8.48 s), 1e-3 up to 1e-8 (1e-9: 18.2 s), 1e-4 only up to 1e-6 (1e-7: 14.3 s).
  static constexpr double kNearSingularPivotDrop = 1e-3;
  static constexpr double kNearSingularProjectionTolerance = 1e-14;

  static StepStatus ToStatus(EvalResult r);

  void DoReset() override;
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // v̇ at (t, q, v) on the active rows (one KKT solve, counted in stats).
  EvalResult Acceleration(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                          Eigen::VectorXd* vdot);
  // Stages 2..7 of a step of size h from the current state; fills q_new_, v_new_, V_, A_.
  EvalResult Stages(double h);
  // Hairer, Nørsett & Wanner, Sec. II.4 (their HINIT); uses A_[0].
  double InitialStep();
  // ‖y_{n+1} − ŷ_{n+1}‖ in the scaled RMS norm.
  double LocalError(double h);
  // MDOP5 projection of (q_new_, v_new_) at time t when the violation exceeds projection_tol.
  // Returns false when a projection does not converge.
  bool ProjectIfNeeded(double t, bool* projected);
  // Dense-output coefficients of the step just computed (size h).
  void BuildDenseOutput(double h);

  std::unique_ptr<engine::ConstrainedDynamics> dynamics_;
  StepStatus reset_status_ = StepStatus::kAccepted;  // failure of the first-stage evaluation

  std::array<Eigen::VectorXd, dopri5_tableau::kStages> V_;  // stage velocities (nv)
  // Stage rates of the tangent increment, K_i = dexp⁻¹_{Θ_i}(V_i) with Θ_i = h Σ_j a_ij K_j
  // (equal to V_i for vector spaces).
  std::array<Eigen::VectorXd, dopri5_tableau::kStages> K_;
  Eigen::VectorXd theta_;
  std::array<Eigen::VectorXd, dopri5_tableau::kStages> A_;  // stage accelerations (nv)
  Eigen::VectorXd Q_;                                       // stage position (nq)
  Eigen::VectorXd sum_v_, sum_a_;                           // Σ a_ij V_j, Σ a_ij A_j (nv)
  Eigen::VectorXd q_new_, v_new_, q_hat_;                   // candidate and embedded solution
  Eigen::VectorXd err_, y_old_, y_new_;                     // (nq + nv) for ErrorNorm
  Eigen::VectorXd lambda_;                                  // multipliers of the last solve
  Eigen::VectorXd g_, g_t_, Gv_;                            // projection tests
  Eigen::MatrixXd G_;
  Eigen::MatrixXd M_check_;  // failure classification only
  Eigen::VectorXd F_check_;

  // Dense output of [t_prev_, t_]: tangent increments for q and values for v (see header).
  double h_dense_ = 0;
  std::array<Eigen::VectorXd, 4> rq_, rv_;
  Eigen::VectorXd a_projected_;  // first stage at the projected state
  // Smallest DynamicsStatus::pivot_ratio over the KKT solves of the current step attempt.
  double min_pivot_ratio_ = 1.0;
  double last_residual_ = -1.0;  // ‖G v̇ + γ‖∞ of the last KKT solve (Acceleration)
  // Largest min_pivot_ratio_ of the accepted steps since Reset (and of the Reset state): the
  // pivot ratio of the mechanism away from its singular configurations.
  double reference_pivot_ratio_ = 1.0;
  Eigen::VectorXd q_tight_, v_tight_;  // projection near a singular configuration
  std::vector<int> all_rows_;          // the active rows given to Reset (rows_ and dropped_rows_)
  Eigen::VectorXd filter_;             // error part in null(G) near a singular configuration
  bool filtered_ = false;              // the last LocalError left out the constrained part
  // The current step attempt saw a singular configuration (header).
  bool NearSingular() const {
    return min_pivot_ratio_ < kNearSingularPivotDrop * reference_pivot_ratio_;
  }
};

}  // namespace saltus::integrators
