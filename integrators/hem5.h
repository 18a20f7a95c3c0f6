// HEM5: Brasey's 8-stage half-explicit Runge–Kutta method of order 5 for the index-2
// formulation (Haddouni et al. 2017, Sec. 3.2, eq. 31–35), with error control, a continuous
// extension and position projection.
//
// The smooth phase with the active rows A frozen is the index-2 DAE (eq. 7)
//   q̇ = T(q) v,   M(q) v̇ = F(q, v, t) + G_Aᵀ λ,   G_A(q, t) v + ∂g_A/∂t = 0.
// One step from (t_n, q_n, v_n) with step h and the coefficients (c, a, b) below, stages
// i = 1..8 (Q_1 = q_n, V_1 = v_n; stage 9 is the solution):
//
//   Q_{i+1} = q_n ⊕ Θ_{i+1},  Θ_{i+1} = h Σ_{j≤i} a_{i+1,j} K_j,  K_j = dexp⁻¹_{Θ_j}(V_j)
//                                  (MechanicalSystem::IntegratePosition and DexpInv; Θ_1 = 0)
//   [ M(Q_i)  −G(Q_i)ᵀ ] [ V̇_i ]   [ F(Q_i, V_i, t_n + c_i h) ]
//   [ G(Q_{i+1})   0   ] [ Λ_i ] = [ r_i                       ]             (eq. 31)
//   r_i = −(G(Q_{i+1}) (v_n + h Σ_{j<i} a_{i+1,j} V̇_j) + ∂g/∂t) / (h a_{i+1,i})      (eq. 32)
//   V_{i+1} = v_n + h Σ_{j≤i} a_{i+1,j} V̇_j,
//
// with a_{9,j} = b_j: q_{n+1} = Q_9, v_{n+1} = V_9, which satisfies G(q_{n+1}) v_{n+1} + ∂g/∂t = 0
// to the stage tolerance. The positions are a Munthe-Kaas Lie-group RK (Hairer, Lubich & Wanner,
// Geometric Numerical Integration, Sec. IV.8): HEM5 applied to the DAE written in the tangent
// coordinates θ of q = q_n ⊕ θ, θ̇ = dexp⁻¹_θ(v), so the order stays 5 on rotations (with K_j = V_j
// the local error on a spinning body is O(h³) and the order drops to 2). The velocity-level stage
// systems are unchanged: Q_{i+1} does not depend on Λ_i, so each stage is still one linear solve.
// Eight linear systems per attempted step (no FSAL: stage 1 depends on h through G(Q_2)). Each is
// solved by integrators::HalfExplicitStage (Cholesky of M, a rank-revealing minimum-norm solve of
// the non-symmetric W̃ = G(Q_{i+1}) M⁻¹ G(Q_i)ᵀ) on the independent rows selected once per step
// at q_n (consistent rank reduction), which is what makes redundant constraints work; see
// half_explicit_stage.h and docs/half-explicit.md.
//
// Error estimate (eq. 33–34; Brasey's HEM5 code): with y = (q, v) and Y_8 = (Q_8, V_8),
//   e₁ = ‖y_{n+1} − Y_8‖,   e₂ = ‖y_{n+1} − y_n − h (5/2 K_7 − 3/2 K_8)‖   (K = V̇ for v; for q
//   the position q_n ⊕ h (5/2 K_7 − 3/2 K_8) with the tangent rates K_j),
//   err = e₁² / (e₁ + 0.01 e₂) = O(h⁵),
// in the scaled RMS norm of Integrator::ErrorNorm; step-size rule eq. (30) with p = 4 in
// Integrator::StepFactor, i.e. exponent 1/5 (HEM5's ALPHA = 1/5). The "p = 5" is the
// order of the method; the estimate is O(h⁵), hence the exponent 1/5.
//
// Continuous extension (HEM5 code, dense output "CT4", order 4): one more stage for an
// accepted step, at c₁₀ = 1/20, with stage 9 = (q_{n+1}, v_{n+1}):
//   Q₁₀ = q_n ⊕ h (a₁₀,₆ K_6 + a₁₀,₇ K_7 + a₁₀,₉ K_9),  V̇_9 from eq. (31) with M, F, G at
//   (q_{n+1}, v_{n+1}) and the constraint at Q₁₀, V₁₀ = v_n + h (a₁₀,₆ V̇_6 + a₁₀,₇ V̇_7 + a₁₀,₉
//   V̇_9).
// With θ = (s − t_n)/h and d_j(θ) = θ Σ_k D_kj θ^(k−1), j ∈ {4, …, 8, 10}:
//   q(θ) = q_n ⊕ h Σ_j d_j(θ) K_j   (K₁₀ = dexp⁻¹_{Θ₁₀}(V₁₀)),
//   v(θ) = v_n + h Σ_{j=4..8} d_j(θ) V̇_j + h d₁₀(θ) V̇₁₀(θ),
// where V̇₁₀(θ) solves eq. (31) with M, F, G at stage 10 and the constraint G(q(θ)) v(θ) + ∂g/∂t = 0
// at the interpolated point: the dense velocity satisfies the velocity constraint (one small
// linear solve per Interpolate call, counted in interpolation_solves()). At θ = 0 and θ = 1 the
// interpolant returns the step's end points exactly (before projection).
//
// Lazy dense output (as DOP853's dense stages, explicit_runge_kutta.h): stage 10 and the
// interpolant's coefficients are computed when an interpolation strictly inside the accepted step
// first asks for them, not with the step. They depend only on the step's start, its end before
// projection and its stages, which stay until the next Step, so their values are those computed
// with the step, to the bit, and the steps themselves do not change. A run that interpolates only
// at the step ends (the event loop with event_samples = 0 and no output point inside the step)
// pays 8 stage solves per accepted step instead of 9 (stage 10 costs a solve and two evaluations
// of M, F and G: at the step's end and at c₁₀). Should the
// stage-10 solve fail (a rank change between the step's end and c₁₀; computed with the step, it
// used to reject the step), or a Step attempt overwrite the stages first (after a failed Step),
// the interpolant drops the stage-10 terms: q(θ) = q_n ⊕ h Σ_{j=4..8} d_j(θ) K_j with the same
// end-point correction, v(θ) = v_n + h Σ d_j(θ) V̇_j without the constraint solve (lower order;
// the ends stay exact).
//
// Projection (eq. 35): after an accepted step, if options.project and ‖g_A(q_{n+1})‖∞ >
// projection_tol, q is projected onto g_A = 0 and then v onto G_A v + ∂g_A/∂t = 0 (eq. 36; the
// velocity constraint moved with q). Counted in stats().position_projections and
// velocity_projections; the dense output stays unprojected. A projection that does not converge
// returns kNewtonFailure with the state left at the previous step.
//
// Stage failures: a stage whose velocity constraint cannot be met (rank change of G between Q_i
// and Q_{i+1}, see half_explicit_stage.h) rejects the step; it is retried with h/4 (counted as a
// rejected step). At h ≤ h_min (or with a fixed step) Step returns kLinearSolveFailure and
// failure_message() names the constraint rows involved. A singular M returns kLinearSolveFailure
// at once; NaN or Inf returns kNonFinite.
//
// Work accounting (stats().rhs_evaluations = linear stage solves): 8 per attempted step, 1 per
// accepted step interpolated strictly inside (the dense-output stage), 1 per Reset (index-1
// acceleration for the initial step estimate) + 1 when h_init = 0. factorizations counts
// Cholesky factorizations of M.
//
// Friction (integrator.h, "Friction"): stage i uses the force directions H(Q_i, V_i) for
// non-ideal forces (half_explicit_stage.h); velocity-level rows are index-2 rows like any other,
// and the position projection skips them.
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
// References: V. Brasey, E. Hairer, Half-explicit Runge–Kutta methods for differential-algebraic
// systems of index 2, SIAM J. Numer. Anal. 30 (1993) 538–552. V. Brasey, HEM5 user's guide,
// Université de Genève 1994, and the Fortran code hem5.f (version of June 8, 1994; distributed
// with E. Hairer's codes and in Siconos' externals/hairer/): coefficients (subroutine COEF),
// error estimate, dense output. Haddouni et al., Multibody Syst. Dyn. 41 (2017), eq. 30–35.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "engine/constrained_dynamics.h"
#include "integrators/half_explicit_stage.h"
#include "integrators/integrator.h"

namespace saltus::integrators {

// Coefficients of HEM5, 0-based (stage i = 0..7), as printed to 16 digits in subroutine COEF
// of Brasey's hem5.f. a_{8,j} (the last row) sums to 1 within 2e-13, the printing precision.
namespace hem5_tableau {

inline constexpr int kStages = 8;

inline constexpr std::array<double, kStages + 1> kC = {
    0.0, 0.1, 0.15, 0.3614787346573635, 0.08535584335486351, 0.5, 0.8, 1.0, 1.0};

// kA[i][j], j < i; row kStages is b.
inline constexpr std::array<std::array<double, kStages>, kStages + 1> kA = {{
    {0, 0, 0, 0, 0, 0, 0, 0},
    {0.1, 0, 0, 0, 0, 0, 0, 0},
    {0.03749999999999999, 0.1125, 0, 0, 0, 0, 0, 0},
    {0.3222169236216038, -1.188883322987607, 1.228145134023366, 0, 0, 0, 0, 0},
    {-0.03501123898129943, 0.3725420601086163, -0.2721053535582034, 0.01993037578575077, 0, 0, 0,
     0},
    {-0.5576547055042005, 1.367307289645883, -1.732236360460725, 0.4587772007467548,
     0.9638065755722880, 0, 0, 0},
    {0.08654517193566155, -0.08810082847945416, 0.1981275547329404, -0.4645422679331083,
     0.1615170091109488, 0.9064533606330119, 0, 0},
    {0.0, 0.0, 0.0, 3.624477248753816, -0.4617724189181256, -3.198024628164272, 1.035319798328740,
     0},
    {0.0, 0.0, 0.0, 0.2467760667636791, 0.2106594087489728, 0.1769218149125021, 0.3064446444147922,
     0.05919806516005373},
}};

// Dense output: stage 10 at c = 1/20 from stages 6, 7 (0-based 5, 6) and the step's end.
inline constexpr double kC10 = 0.05;
inline constexpr double kA10_6 = 0.2519444444444446;
inline constexpr double kA10_7 = -0.3861111111111117;
inline constexpr double kA10_9 = 0.1841666666666670;
// D[k][j]: coefficient of θ^(k+1) for the stages 4, 5, 6, 7, 8 (0-based 3..7) and 10.
inline constexpr int kDenseStages = 6;
inline constexpr std::array<std::array<double, kDenseStages>, 4> kD = {{
    {-0.2661262387118526, -0.4784628694418738, -8.4922471157927090e-02, 0.2500588298423810,
     -0.1047577768468651, 1.684210526316138},
    {2.963408265225625, 5.405521925140019, 0.9129165649477744, -2.963932600778991,
     1.261033213890067, -7.578947368424495},
    {-4.141333547260734, -8.533017606960350, -0.8633784567714418, 6.403467289689607,
     -2.971000836599169, 10.10526315790209},
    {1.690827587510642, 3.816617960011145, 0.2123061778941055, -3.383148874338215,
     1.873923464716025, -4.210526315793703},
}};

// Order of the error estimate minus one: err = O(h^(kEstimateOrder+1)).
inline constexpr int kEstimateOrder = 4;

}  // namespace hem5_tableau

class Hem5 final : public Integrator {
 public:
  // Throws std::invalid_argument on invalid options or a formulation other than kIndex2.
  explicit Hem5(const IntegratorOptions& options);
  ~Hem5() override;

  std::string_view name() const override { return "hem5"; }
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
  // Linear solves made by Interpolate (not in stats(), which Interpolate cannot modify).
  long interpolation_solves() const { return interpolation_solves_; }

 private:
  void DoReset() override;
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;
  StepStatus AttemptSteps(double t_limit);
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // Stages of a step of size h from the current state; fills Q_, V_, A_, q_new_, v_new_.
  StageStatus Stages(double h);
  // The dense-output stage of the last accepted step (its h_dense_, start and unprojected end).
  StageStatus DenseStage();
  // Stage 10 and the interpolant of the last accepted step, on the first call after the step (a
  // cache: const for DoInterpolate). False when stage 10 is not available (header).
  bool EnsureDenseOutput() const;
  double InitialStep(const Eigen::VectorXd& a0);
  double LocalError(double h);
  bool ProjectIfNeeded(double t, bool* projected);
  StepStatus StageFailure(StageStatus s, double h, int stage);
  // The interpolant's coefficients rq_, rv_ of the last accepted step (without stage 10 unless
  // dense_ready_).
  void BuildDenseOutput();

  std::unique_ptr<HalfExplicitStage> stage_;
  std::unique_ptr<HalfExplicitStage> dense_stage_;  // keeps M, F, G of stage 10 for Interpolate
  StepStatus reset_status_ = StepStatus::kAccepted;
  std::string failure_message_;
  double rank_tolerance_ = 1e-10;
  double max_position_violation_ = 0;
  long stage_rejections_ = 0;
  mutable long interpolation_solves_ = 0;
  long factorizations_seen_ = 0;  // of stage_ and dense_stage_, already added to stats_
  int failure_stage_ = 0;

  std::array<Eigen::VectorXd, hem5_tableau::kStages + 1> Q_;  // stage positions (nq)
  std::array<Eigen::VectorXd, hem5_tableau::kStages + 1> V_;  // stage velocities (nv)
  std::array<Eigen::VectorXd, hem5_tableau::kStages> A_;      // stage accelerations V̇ (nv)
  // Stage tangent rates K_j = dexp⁻¹_{Θ_j}(V_j) (nv); K_[kStages] belongs to the step's end.
  std::array<Eigen::VectorXd, hem5_tableau::kStages + 1> K_;
  Eigen::VectorXd theta_, K10_;
  Eigen::VectorXd sum_v_, v_tilde_, q_new_, v_new_, q_tmp_;
  Eigen::VectorXd err_, y_old_, y_new_;
  Eigen::VectorXd g_;
  Eigen::VectorXd Q10_, V10_, A9_;

  // Dense output of [t_prev_, t_]: tangent increments for q, velocity terms, end points.
  double h_dense_ = 0;
  // Lazy dense output (header): stage 10 still to be computed (dense_pending_), computed
  // (dense_ready_).
  bool dense_pending_ = false, dense_ready_ = false;
  std::array<Eigen::VectorXd, 4> rq_, rv_;
  Eigen::VectorXd q_end_, v_end_;
  mutable Eigen::VectorXd dq_, vpoly_, vout_;

  // Near singular configurations (header; HalfExplicitStage::NearSingular against the largest
  // selection pivot ratio of the accepted steps since Reset).
  bool NearSingular() const {
    return !rows_.empty() && stage_->NearSingular(reference_selection_ratio_);
  }
  double reference_selection_ratio_ = 0.0;
};

}  // namespace saltus::integrators
