// PHEM56: Murua's partitioned half-explicit Runge–Kutta method of order 5 (6 stages) for the
// index-2 formulation, with an embedded order-4 error estimate, an order-4 continuous extension
// and position projection (Haddouni et al. 2017, Sec. 3.2, eq. 30 and 35).
//
// The smooth phase with the active rows A frozen is the index-2 DAE (eq. 7)
//   q̇ = T(q) v,   M(q) v̇ = F(q, v, t) + G_Aᵀ λ,   G_A(q, t) v + ∂g_A/∂t = 0.
// A partitioned half-explicit method uses two tableaux: (c, a) for the explicit stage points where
// M, F and G are evaluated, and (ĉ, â) for the points where the velocity constraint is imposed.
// One step from (t_n, q_n, v_n) with step h and the acceleration A_n from the previous step
// (FSAL; the index-1 acceleration after Reset): V̇_1 = A_n, K_1 = v_n, and for i = 2, …, 6
//
//   Q_i = q_n ⊕ h Σ_{j<i} a_ij K_j,   V_i = v_n + h Σ_{j<i} a_ij V̇_j,   K_i = dexp⁻¹_{Θ_i}(V_i),
//   Q̂_i = q_n ⊕ h Σ_{j≤i} â_ij K_j,   ṽ_i = v_n + h Σ_{j<i} â_ij V̇_j,
//   [ M(Q_i)   −G(Q_i)ᵀ ] [ V̇_i ]   [ F(Q_i, V_i, t_n + c_i h)                              ]
//   [ G(Q̂_i)       0    ] [ Λ_i ] = [ −(G(Q̂_i) ṽ_i + ∂g/∂t(Q̂_i, t_n + ĉ_i h)) / (h â_ii) ],
//
// so that V̂_i = ṽ_i + h â_ii V̇_i satisfies the velocity constraint at Q̂_i (cf. eq. 31–32;
// Θ_i = h Σ_{j<i} a_ij K_j, dexp⁻¹ as in HEM5: a Munthe-Kaas Lie-group RK on the positions,
// MechanicalSystem::IntegratePosition/DexpInv, identities on vector spaces). The last row of â is
// b (ĉ_6 = 1): q_{n+1} = Q̂_6, v_{n+1} = V̂_6, which meets the velocity constraint at q_{n+1}.
// An extra stage 7 at the explicit point (q_{n+1}, v_{n+1}) with the constraint imposed at
// Q̂_7 (ĉ_7 = 19/30) gives the next step's V̇_1 = A_{n+1} (an O(h⁴) acceleration). Seven linear
// stage solves per attempted step: stages 2–6, stage 7 and the error estimate's projection.
//
// Error estimate (phem56.f): the embedded order-4 solution ŷ with weights b̂ (j = 1..7, V̇_7 =
// A_{n+1}, K_7 = dexp⁻¹ at q_{n+1}), q̂ = q_n ⊕ h Σ b̂_j K_j, v̂ = v_n + h Σ b̂_j V̇_j, with v̂ projected
// once onto the velocity constraint at q̂ (one linear solve with M(q_{n+1}), G(q_{n+1})):
//   err = ‖(q_{n+1} − q̂, v_{n+1} − P v̂)‖ = O(h⁵)
// in the scaled RMS norm of Integrator::ErrorNorm; step rule eq. (30) through
// Integrator::StepFactor with exponent 1/5 (phem56.f's ALPHA = 1/5; the p = 5 is the
// method's order, the estimate is O(h⁵)).
//
// Continuous extension (phem56.f, POL4): the quartic Hermite interpolant of the tangent increment
// Θ(θ) (q(θ) = q_n ⊕ Θ(θ)) and of v through θ = 0 (value and derivative h K_1, h V̇_1), θ = 1
// (value, derivative h K_7, h A_{n+1}) and θ = 19/30, where y_D = y_n + h Σ b̄_j Y_j (weights b̄
// below, j = 1..7). No extra solve; order 4 (local error O(h⁵)). The interpolated velocity does not
// satisfy the velocity constraint exactly (its error is O(h⁵)).
//
// Projection (eq. 35/36), stage failures, rank-deficient and redundant rows (the consistent row
// selection of HalfExplicitStage, once per step at q_n) and the failure message: as in HEM5
// (hem5.h, half_explicit_stage.h).
//
// Work accounting (stats().rhs_evaluations = linear stage solves): 7 per attempted step, 1 per
// Reset (the index-1 acceleration A_n) + 1 when h_init = 0. factorizations counts Cholesky
// factorizations of M.
//
// Friction (integrator.h, "Friction"): as HEM5 (the force directions of each stage from
// half_explicit_stage.h; velocity-level rows are index-2 rows, skipped by the position
// projection).
//
// Near singular configurations (a rank drop of G: the double four-bar with all bars on the
// ground line), as DOPRI5 does (explicit_runge_kutta.h): when the QR pivot ratio of the rows kept
// at the step start (HalfExplicitStage::selection_pivot_ratio, ~ σ_min/σ_max of G) is below
// 0.03 (≈ √1e-3, DOPRI5's drop of the σ² pivot ratio) times the largest ratio
// of the accepted steps since Reset, (1) the error estimate keeps only its part along the
// manifold, e ← (I − M⁻¹Gᵀ W⁺ G) e at q_{n+1} for v (and q when nq = nv; Integrator::
// RemoveConstrainedPartOfError): its constrained part is the stage residuals divided by σ, a floor
// whatever h; (2) the step end is projected to the round-off floor (Integrator::ProjectToRoundOff),
// which removes that part, so that the state reaches the singular configuration without a drift
// along the near-singular direction (with the usual projection_tol 1e-4 the stages there could
// not meet the velocity constraint even at h_min). Measured on the 20 s double four-bar
// (bench/singular_positions.py, docs/benchmarks.md): HEM5 and PHEM56 finish at every rtol
// 1e-3 … 1e-10 (before: HEM5 stopped at 5 of 8, PHEM56 at 7 of 8).
//
// References: A. Murua, Partitioned half-explicit Runge–Kutta methods for differential-algebraic
// systems of index 2, Computing 59 (1997) 43–61; M. Arnold, A. Murua, Non-stiff integrators for
// differential-algebraic systems of index 2, Numer. Algorithms 19 (1998) 25–41. Coefficients,
// error estimate and dense output from Murua's Fortran code phem56.f (version of November 1995,
// subroutines PCOEF56, PHCOR56 and COPOL4; distributed with E. Hairer's codes and, e.g., in
// mbsim-env/mbsim kernel/mbsim/integrators/fortran/phem56.f): the explicit tableau (c, a, b) is
// that of Dormand–Prince 5(4) (the code prints "PHERK method based on DOPRI5").
#pragma once

#include <Eigen/Dense>
#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "integrators/half_explicit_stage.h"
#include "integrators/integrator.h"

namespace saltus::integrators {

// Coefficients of PHEM56 (phem56.f, PCOEF56), as exact rationals; 0-based stage index
// (stage i of the comments is index i − 1).
namespace phem56_tableau {

inline constexpr int kStages = 7;  // 6 stages + the FSAL acceleration stage

// Explicit points: c and a (Dormand–Prince); row 6 (the FSAL point) is b.
inline constexpr std::array<double, kStages> kC = {0.0,     1.0 / 5, 3.0 / 10, 4.0 / 5,
                                                   8.0 / 9, 1.0,     1.0};
inline constexpr std::array<std::array<double, kStages>, kStages> kA = {{
    {0, 0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0, 0},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
}};

// Constraint points: ĉ and â (â_ij for j ≤ i; row 5 is b, row 6 the FSAL acceleration stage).
inline constexpr std::array<double, kStages> kCHat = {0.0, 3.0 / 10, 3.0 / 8,  5.0 / 7,
                                                      1.0, 1.0,      19.0 / 30};
inline constexpr std::array<std::array<double, kStages>, kStages> kAHat = {{
    {0, 0, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0, 0},
    {21.0 / 256, 45.0 / 256, 15.0 / 128, 0, 0, 0, 0},
    {19235.0 / 98784, -225.0 / 392, 6235.0 / 6174, 2755.0 / 32928, 0, 0, 0},
    {-293.0 / 1152, 85.0 / 48, -2275.0 / 1908, 35.0 / 32, -2835.0 / 6784, 0, 0},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0},
    {10752038939.0 / 66307507200, -19259.0 / 50160, 19581770468.0 / 24023520675,
     9941999.0 / 650073600, 180060831.0 / 4820710400, -11331659.0 / 439538400, 1.0 / 76},
}};

// Embedded order-4 weights b̂ (j = 1..7) and dense-output weights b̄ of the point θ = 19/30.
inline constexpr std::array<double, kStages> kBHat = {
    5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200, 187.0 / 2100, 1.0 / 40};
inline constexpr double kThetaD = 19.0 / 30;
inline constexpr std::array<double, kStages> kBDense = {1812923.0 / 20736000, 0,
                                                        45847.0 / 100170,     56677.0 / 414720,
                                                        -289161.0 / 13568000, -67507.0 / 4536000,
                                                        -3971.0 / 324000};

// Order of the error estimate minus one: err = O(h^(kEstimateOrder+1)).
inline constexpr int kEstimateOrder = 4;

}  // namespace phem56_tableau

class Phem56 final : public Integrator {
 public:
  // Throws std::invalid_argument on invalid options or a formulation other than kIndex2.
  explicit Phem56(const IntegratorOptions& options);
  ~Phem56() override;

  std::string_view name() const override { return "phem56"; }
  int order() const override { return 5; }
  int dense_output_order() const override { return 4; }
  bool Supports(Formulation f) const override { return f == Formulation::kIndex2; }

  // Relative pivot threshold of the stage systems' rank-revealing solve (default 1e-10).
  void set_rank_tolerance(double tol);

  // After a failed Step: what failed and the constraint rows involved (names); empty otherwise.
  const std::string& failure_message() const { return failure_message_; }
  std::string SchemeFailureDetail() const override { return failure_message_; }
  // Steps rejected because a stage system could not meet the velocity constraint (a rank change
  // or a dropped row beyond the drift bound, half_explicit_stage.h), since construction; they are
  // also counted in stats().rejected_steps, with the error-control rejections.
  long stage_rejections() const { return stage_rejections_; }
  // Largest ‖g_A‖∞ at a step end before projection, since construction.
  double max_position_violation() const { return max_position_violation_; }

 private:
  void DoReset() override;
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;
  StepStatus AttemptSteps(double t_limit);
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  StageStatus Stages(double h);
  double LocalError(double h);
  bool ProjectIfNeeded(double t, bool* projected);
  StepStatus StageFailure(StageStatus s, double h, int stage);
  void BuildDenseOutput(double h);

  std::unique_ptr<HalfExplicitStage> stage_;
  StepStatus reset_status_ = StepStatus::kAccepted;
  std::string failure_message_;
  double rank_tolerance_ = 1e-10;
  double max_position_violation_ = 0;
  long stage_rejections_ = 0;
  long factorizations_seen_ = 0;
  int failure_stage_ = 0;

  Eigen::VectorXd a_;  // V̇_1 of the next step: the FSAL acceleration A_n (nv)
  std::array<Eigen::VectorXd, phem56_tableau::kStages> A_;  // V̇_j (nv); A_[6] = A_{n+1}
  std::array<Eigen::VectorXd, phem56_tableau::kStages> K_;  // tangent rates K_j (nv)
  Eigen::VectorXd Q_, V_, Qhat_, sum_, theta_, v_tilde_, q_new_, v_new_, a_new_;
  Eigen::VectorXd q_hat_, v_hat_, v_proj_, err_, y_old_, y_new_, g_;

  // Dense output of [t_prev_, t_]: tangent increments / velocity differences, end data.
  double h_dense_ = 0;
  Eigen::VectorXd dk0_, dk1_, dtheta_d_, dtheta_1_;  // h K_1, h K_7, Θ(19/30), Θ(1)
  Eigen::VectorXd dv0_, dv1_, dv_d_, dv_1_;  // h V̇_1, h A_{n+1}, v_D − v_n, v_{n+1} − v_n
  Eigen::VectorXd q_end_, v_end_;
  mutable Eigen::VectorXd dq_;

  // Near singular configurations (header; HalfExplicitStage::NearSingular against the largest
  // selection pivot ratio of the accepted steps since Reset).
  bool NearSingular() const {
    return !rows_.empty() && stage_->NearSingular(reference_selection_ratio_);
  }
  double reference_selection_ratio_ = 0.0;
};

}  // namespace saltus::integrators
