// Variable-step BDF (backward differentiation formulas) of fixed order k ∈ {1, …, 5} on the
// stabilized index-2 formulation of Gear, Gupta & Leimkuhler (GGL; Haddouni et al. 2017, eq. 23),
// with a predictor by extrapolation, a simplified Newton corrector whose iteration matrix is
// kept over many steps, and a DASSL-type error estimate from the predictor–corrector difference
// (Arnold, Fuchs & Führer, seed `arnold-efficient-corrector-iteration.txt`, Sec. 2; Brenan,
// Campbell & Petzold, Numerical Solution of IVPs in DAEs, SIAM 1996, Ch. 5).
//
// Unknowns y = (q, v, λ, μ) with sizes nq (handled as a tangent increment θ ∈ R^nv, q = q_n ⊕ θ),
// nv, m, m (m = number of active rows). The GGL system
//
//   θ̇ = dexp⁻¹_θ(v + Gᵀμ),   M(q) v̇ = F(q, v, t) + Gᵀλ,   G v + ∂g/∂t = 0,   g(q, t) = 0,
//
// has index 2; μ = 0 on the exact solution and only stabilizes the position level. BDF of order
// k at t_{n+1} = t_n + h replaces the derivative by that of the polynomial through the k + 1
// values y_{n+1}, y_n, …, y_{n+1−k} (variable-coefficient form, arbitrary past step sizes):
//
//   ẏ(t_{n+1}) ≈ Σ_{j=0}^{k} c_j y_{n+1−j},   c_0 = Σ_{j=1}^{k} 1/(t_{n+1} − t_{n+1−j}),
//
// (c_j the derivatives at t_{n+1} of the Lagrange basis polynomials). The Newton residual is
//   R = ( c₀θ + Σ c_j θ_j − dexp⁻¹_θ(v + Gᵀμ),  M (c₀v + Σ c_j v_j) − F − Gᵀλ,  G v + ∂g/∂t,  g ),
// and the simplified Newton iteration matrix (∂(Gᵀμ)/∂q and ∂dexp⁻¹/∂θ dropped, μ ≈ 0, θ = O(h))
//
//   J = [ c₀ I                  −I           0     −Gᵀ ]     K_t = ∂(M a)/∂q − ∂F/∂q − ∂(Gᵀλ)/∂q,
//       [ K_t                c₀ M + C_t     −Gᵀ    0  ]     C_t = −∂F/∂v,  a = c₀ v + Σ c_j v_j,
//       [ Z                     G            0     0  ]     Z = ∂(G v + ∂g/∂t)/∂q,
//       [ G                     0            0     0  ]
//
// i.e. J = c₀ 𝓜 − ∂F/∂y of the seed's eq. (9) for the GGL system. Jacobian reuse (seed Sec. 2.1):
// the blocks K_t, C_t, Z, G, M are evaluated only when the previous Newton iteration contracted
// slowly (rate θ > 0.3, integrators/newton.h) or diverged; J is refactorized with the stored
// blocks when c₀ changed by more than 25 % since the last factorization (DASSL's rule for
// refactorizing with a changed "cj"); otherwise the old factorization is used as is. Without
// reuse (BdfOptions::reuse_iteration_matrix = false) every step evaluates and factorizes anew.
//
// Predictor: the polynomial through y_n, …, y_{n−k} (k + 1 past values) extrapolated to t_{n+1};
// after Reset there is only y_n, and the first step is backward Euler with the Taylor predictor
// (θ, v) = (h v_n, v_n + h v̇_n) from the index-1 accelerations. The order then rises by one per
// step up to k: a clean restart at order 1 after every Reset (event).
//
// Error estimate (Brenan, Campbell & Petzold, Sec. 5.2, in the variable-step form derived from
// the interpolation errors): with A = Π_{j=1}^{k}(t_{n+1} − t_{n+1−j}) / c₀ (corrector error
// y_{n+1} − y(t_{n+1}) ≈ A y^{(k+1)}/(k+1)!) and B = Π_{j=0}^{k}(t_{n+1} − t_{n−j}) (predictor
// error −B y^{(k+1)}/(k+1)!), the local error is  LTE ≈ A/(A + B) · (y_{n+1} − y^P_{n+1})
// (constant steps: 1/3 for k = 1, 2/11 for k = 2). Only the differential variables (θ, v) enter
// the norm (Integrator::ErrorNorm); λ and μ are index-2 algebraic variables and are excluded, as
// the index requires. Step size: eq. (30) with exponent 1/(k + 1) and the ratio h_{n+1}/h_n
// capped at 2 (zero-stability of variable-step BDF2 needs a ratio below 1 + √2).
//
// Near singular configurations (a rank drop of G: the double four-bar with all bars on the
// ground line). The corrector meets g = 0 and G v + ∂g/∂t = 0 at the step end, so the
// predictor–corrector difference's part in range(M⁻¹Gᵀ) measures how far the predictor was off
// the manifold; along a left singular vector of G with σ → 0 that part is the predictor's
// constraint residual divided by σ, an h-independent floor (the DOPRI5 case, explicit_runge_
// kutta.h): on the planar double four-bar at rtol 1e-10 the steps collapsed to h_min = 1e-13 s at
// t = 0.714113 s. So when the iteration matrix's pivot ratio (IterationMatrix::pivot_ratio, ~ σ²
// of G relative) is below RankDropMonitor::kDrop = 1e-3 times the largest ratio of the accepted
// steps since Reset, both parts of the estimate (θ and v) are replaced by their part along the
// manifold, e ← (I − M⁻¹Gᵀ W⁺ G) e at q_{n+1} (Integrator::RemoveConstrainedPartAt; θ is a
// tangent increment, so both are velocity-space vectors): the corrector resets the constrained
// components, so only the motion along the manifold needs error control (the step-size analogue of
// excluding algebraic variables from the norm). Away from such configurations the estimate is
// unchanged. Measured (bench/singular_positions.py, docs/benchmarks.md): `bdf` finishes the 20 s
// double four-bar at every rtol 1e-3 … 1e-10 (before: step_size_underflow at t = 0.714 s at rtol
// 1e-10); `bdf2` at rtol 1e-9 and 1e-10 in 164,486 and 354,020 steps (before: no end within
// 30 s). Bricard's runs are unchanged.
//
// Variable order (BdfOptions::variable_order, adaptive runs only; fixed-step runs use the fixed
// order min(order, 2), see Bdf::order()): DASSL's order selection (Petzold 1982; Brenan, Campbell
// & Petzold, Sec. 5.2.2), with the terms T(j) ≈ ‖h^{j+1} y^{(j+1)}‖ computed from the divided
// differences of the last j + 2 accepted (θ, v) (= ‖∇^{j+1} y_{n+1}‖ for constant steps):
//   - lower to k − 1 if max(T(k−1), T(k−2)) ≤ T(k) (k > 2), or T(k−1) ≤ ½ T(k) (k = 2);
//   - initial phase after every Reset: raise the order by one per step up to the maximum, until
//     the first rejection or lowering (rejections of the first step, whose size is a guess, do
//     not count);
//   - afterwards raise only after k + 1 steps at constant order: k = 1 → 2 if T(2) < ½ T(1);
//     k ≥ 2: lower if T(k−1) ≤ min(T(k), T(k+1)), else raise if T(k+1) < T(k);
//   - new step h·r, r = (2 est + 10⁻⁴)^(−1/(k+1)) with est the error estimate at the new order
//     (the predictor–corrector estimate if unchanged or if the history is still too short for
//     T(k_new) — the initial phase —, else T(k_new)/(k_new + 1)); r ≥ 2 → 2,
//     1 < r < 2 → 1 (keep h), r ≤ 1 → clamp to [0.5, 0.9];
//   - after two consecutive rejections, one order lower per further rejection.
// Every Reset restarts at order 1.
//
// Error per unit step: the start (ErrorControl::kPerUnitStep, integrator.h). The first two steps
// after a Reset have order-1 estimates (the one-step start's Taylor predictor; the second step's
// two-point predictor, error constant of BDF1), O(h²): per unit step they would need err·T/h =
// O(h) ≤ 1 while the round-off floor of θ (the corrector meets g = 0 at q_n ⊕ θ, ≈ 5e-17 m on
// the four-bar) gives err·T/h ∝ 1/h, and at rtol 1e-8 no h passed both (step_size_underflow at
// t = 0). These two steps keep the per-step test (exponent 1/2): they add at most 2 rtol per
// Reset to the global error.
//
// Error per unit step: the Newton tolerance. The corrector meets G v + ∂g/∂t = 0 and g = 0 only
// to the Newton tolerance; the next step removes that residual whatever its h, an h-independent
// jump in v − v^P that err·T/h turns into a floor ∝ 1/h (the `joints` slider-crank at rtol 1e-6
// stopped at t = 0.648 s with Table 1's newton_tol = 1e-8). Per unit step the iteration stops at
// 0.03 · rtol · h/T, between 100 ε and newton_tol, as generalized_alpha.h ("Error per unit
// step"); per step it keeps newton_tol.
//
// Coloured sparse Jacobians (BdfOptions::jacobian = kColouredDifferences; Arnold, Fuchs &
// Führer, Sec. 3.1, integrators/sparse_jacobian.h): J̄ = ∂R/∂y of the whole Newton residual R by
// grouped differences (eq. 20), n_colours + 1 residual evaluations; the pattern comes from a
// first full difference (eq. 16) and is refreshed (union with a new full difference, recoloured
// if it grew) after a failed Newton iteration. Without the partitioned update, J̄ is
// re-differenced when c₀ changed by more than refactor_threshold (DASSL's standard strategy).
// Partitioned update (BdfOptions::partitioned_update, eq. 24/25): on such a change
//   J̄ ← J̄ + c₀,new diag(I, M(q_new), 0, 0) − c₀,old diag(I, M_old, 0, 0),
// keeping the ∂F/∂y part; J̄ is re-differenced only after slow or failed Newton iterations.
//
// Extended partitioned update for time-excited systems (BdfOptions::excitation_update, eq. 26):
//   J̄_new = J̄_old + (c₀,new − c₀,old) diag(I, M, 0, 0) + Σ_i ∂²F/∂u_i∂y · (u_i(t_new) −
//   u_i(t_old)).
// The model does not expose its excitations u(t) (here the suspension point s(t), ṡ(t) of the
// chain, or any rheonomic row), only the time t, so the time itself plays the role of the single
// excitation: D_t = ∂(∂R/∂y)/∂t replaces ∂²F/∂u∂y and the update is J̄ += D_t (t_new − t_old),
// the first-order Taylor term of the seed's expansion with u = t. Because u = t enters the model
// nonlinearly (sin Ωt), D_t is not constant as the seed's ∂²F/∂u∂y is for a model linear in u:
// it is re-evaluated at every full difference approximation, as the grouped difference
//   D_t ≈ (J̄(t + δ, y) − J̄(t, y)) / δ,   δ = h (the current step: the time scale on which J̄ is
// extrapolated; a smaller δ would amplify the O(√ε) noise of the difference Jacobians),
// with the same pattern and colouring: n_colours + 1 extra residual evaluations per full
// difference (counted in BdfJacobianStats::time_derivative_evaluations). A step whose Newton
// iteration was slow first tries the cheap update (eq. 26 at the new t) and re-differences only
// if the iteration is still slow with the updated matrix, or after a Newton failure.
//
// Dense output: the corrector's polynomial through (t_{n+1}, …, t_{n+1−k}) for θ and for v
// (order k); q(s) = q_n ⊕ θ(s). It reproduces both ends of the step. On the first step after a
// Reset: the quadratics through both ends with the initial slopes v_n and v̇_n (exact for free
// flight, so the event functions on g and G v agree right after an impact).
//
// Past positions are stored as tangent increments θ_j relative to the current q_n (and as the
// positions q_j themselves) and re-based after each step by θ_j ← q_j ⊖ q_{n+1}
// (MechanicalSystem::PositionDifference, the inverse of the position update: the logarithm of
// the relative rotation on quaternion bodies), so the corrector, predictor and dense output see
// the exact log coordinates of the past points and keep their order on rotations (measured:
// fixed-step BDF3 on the heavy top, slope 2.90; with the former re-basing θ_j ← θ_j − θ_{n+1},
// which drops the O(h³) commutator of two rotations, 2.21). Systems without PositionDifference
// (nq ≠ nv and no override) fall back to θ_j − θ_{n+1}, exact in vector spaces only.
//
// Restart and refactorization: the iteration matrix is also refactorized when the order changed
// since the last factorization (not only when c₀ moved by more than refactor_threshold). The
// start-up steps after every Reset raise the order at every step and, at constant h, keep c₀
// within 25 % (2/h, 1.5/h, 1.83/h, 2.08/h, 2.28/h), so the simplified Newton iteration with the
// first matrix stopped at the Newton tolerance instead of solving the corrector exactly. In free
// flight (linear, quadratic solution, which every order ≥ 2 reproduces) that left position errors
// of 5e-14 m: enough to feed the tiny bounces of the bouncing ball (a gap error δ at landing adds
// g δ/u to the bounce speed u; the event loop ends the Zeno sequence only below τ₁ = 1e-6 m/s,
// so flights must be exact to (1 − e) τ₁²/g ≈ 1e-14 m) — the run bounced at 2e-6 m/s forever.
//
// Friction (integrator.h, "Friction"). Non-ideal forces: the dynamics residual is
// M (c₀v + Σ c_j v_j) − F − Hᵀλ with H at the iterate, and −Hᵀ in J's λ column (H's dependence on
// q and v is not differentiated: modified Newton). Velocity-level rows have no g: their
// stabilizing multiplier is fixed, μ_k = 0 (residual μ_k, row of J the identity), so θ̇ = dexp⁻¹(v
// + Gᵀμ) is stabilized by the position-level rows only and the velocity-level rows are enforced
// by G v + ∂g/∂t = 0 alone (index 2 for them).
//
// Counted in stats: newton_iterations, rhs_evaluations (residual evaluations),
// jacobian_evaluations, factorizations. A Newton failure with fresh Jacobians shrinks h by 4;
// at h_min the step returns kNewtonFailure with the state at the last accepted step.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "integrators/integrator.h"
#include "integrators/newton.h"
#include "integrators/sparse_jacobian.h"

namespace saltus::integrators {

// How the iteration matrix J = c₀𝓜 − ∂F/∂y is obtained.
enum class BdfJacobian {
  kSystemBlocks,        // K_t, C_t, Z, G, M from the system's (analytic or FD) block routines
  kColouredDifferences  // ∂R/∂y of the whole Newton residual by grouped differences (eq. 20)
};

struct BdfOptions {
  int order = 2;                       // fixed order k ∈ [1, 5]; maximum order if variable_order
  bool variable_order = false;         // DASSL-type order selection in [1, order] (adaptive only)
  bool reuse_iteration_matrix = true;  // false: new Jacobians and factorization every step
  double refactor_threshold = 0.25;    // refactorize when |c₀/c₀_matrix − 1| exceeds this
  BdfJacobian jacobian = BdfJacobian::kSystemBlocks;
  // kColouredDifferences only: a change of c₀ updates J by eq. (24)/(25) instead of a new
  // difference approximation (the system-block Jacobian always re-assembles J with the new c₀).
  bool partitioned_update = false;
  // Extended update for time-excited systems (eq. 26, see above); needs partitioned_update.
  bool excitation_update = false;
};

// Counters of the coloured-difference Jacobians (BdfJacobian::kColouredDifferences).
struct BdfJacobianStats {
  long dense_jacobians = 0;      // full differences (eq. 16): first one and pattern refreshes
  long sparse_jacobians = 0;     // grouped differences (eq. 20)
  long sparse_evaluations = 0;   // residual evaluations spent in grouped differences
  long sparse_colours = 0;       // Σ of the number of colours over the grouped differences
  long pattern_changes = 0;      // refreshes that added entries (colouring recomputed)
  long partitioned_updates = 0;  // cheap updates (eq. 24/25, or 26 with excitation_update)
  long excitation_updates = 0;   // eq. (26) updates made instead of a new difference (slow Newton)
  long time_derivatives = 0;     // differences D_t = ∂J̄/∂t (eq. 26), one per full difference
  long time_derivative_evaluations = 0;  // residual evaluations spent on D_t
  int colours = 0;                       // current number of colours
  int unknowns = 0;                      // n_y = 2 nv + 2 m
};

class Bdf final : public Integrator {
 public:
  static constexpr int kVariableOrderFixedStepOrder = 2;  // see order()

  // Supports kStabilizedIndex2 only. Throws std::invalid_argument on invalid options, another
  // formulation, order outside [1, 5], refactor_threshold ≤ 0, or partitioned_update without
  // jacobian = kColouredDifferences.
  // `name` is the table entry's name (name()).
  explicit Bdf(const IntegratorOptions& options, const BdfOptions& bdf = {},
               std::string name = "bdf");
  ~Bdf() override;

  std::string_view name() const override { return name_; }
  // Order of a fixed-step run (what the generic order test measures). Fixed order: k. Variable
  // order: a fixed-step run has no error estimate and hence no order selection; it runs at
  // min(max order, 2). The one-step start after Reset (trapezoidal rule) and the BDF2 second
  // step have local errors O(h³), so no fixed-step run can show more than order 3, and fixed
  // order 3 measured only slopes 2.3 (circle) to 3.05 in the generic order test (the start-up
  // error dominates at the test's steps): order 2 is the order a fixed-step run delivers.
  // Adaptive runs select orders in [1, max_order()].
  int order() const override {
    return bdf_.variable_order ? std::min(bdf_.order, kVariableOrderFixedStepOrder) : bdf_.order;
  }
  int max_order() const { return bdf_.order; }
  int dense_output_order() const override { return order(); }
  bool Supports(Formulation f) const override { return f == Formulation::kStabilizedIndex2; }
  const BdfOptions& bdf_options() const { return bdf_; }
  // Order used by the last accepted step (1 right after Reset, then rising to order()).
  int last_order() const { return last_order_; }
  // Number of accepted steps made at each order 1…5 since construction (index order − 1).
  const std::array<long, 5>& steps_per_order() const { return steps_per_order_; }
  const BdfJacobianStats& jacobian_stats() const { return jstats_; }
  // Multipliers λ (m) and the GGL stabilizing multipliers μ (m) at t().
  const Eigen::VectorXd& lambda() const { return lambda_; }
  const Eigen::VectorXd& mu() const { return mu_; }

 private:
  enum class Outcome { kConverged, kNewtonFailure, kLinearSolveFailure, kNonFinite };

  void DoReset() override;
  // The consistent start of DoReset: q onto g = 0 and v onto G v + ∂g/∂t = 0 on the active rows,
  // down to the projections' round-off floor (engine/projection.h); the state is kept as given
  // when either projection does not converge. The GGL corrector enforces both at the end of the
  // first step whatever h, so a residual of the given state (the event loop projects to its own
  // tolerance: 1.1e-13 m on Flores' slider-crank) would enter the first step's error estimate
  // as an h-independent jump, and on a component whose error weight is atol no step passes.
  void ConsistentStart();
  bool NeedsIndependentRows() const override { return true; }
  StepStatus DoStep(double t_limit) override;
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // Sets k_, c_ (corrector coefficients), the predictor and the error factor for step h.
  void Prepare(double h);
  // Newton solve of the step; on kConverged theta_new_, v_new_, lambda_new_, mu_new_, q_new_
  // hold the result.
  Outcome Solve(double h);
  bool EvaluateJacobians(double t);
  // Coloured differences of the Newton residual at (θ, v, λ, μ)_new; fills Jbar_ (unscaled).
  // With excitation_update and time_derivative, also D_t = ∂J̄/∂t (eq. 26) with δ = h.
  bool DifferenceJacobian(double t, bool dense, bool time_derivative = false, double h = 0);
  // Eq. (26), time part: J̄ += D_t (t − t_jbar_) (the c₀ part is applied in Factorize).
  void ExcitationShift(double t);
  // Residual R(y) of the step at t for y = (θ, v, λ, μ) (unscaled, current c_).
  void StepResidual(double t, const Eigen::VectorXd& y, Eigen::VectorXd* r);
  // r's position-constraint entries of the velocity-level rows ← μ_k (header, "Friction").
  void FixVelocityLevelMultipliers(const Eigen::VectorXd& mu, Eigen::VectorXd* r) const;
  // DASSL-type order selection after an accepted step at order k_ of size h (history updated);
  // returns the error estimate for the chosen order (sets k_next_).
  double SelectOrder(double h, double err);
  // Bookkeeping of a rejected step (ends the initial phase, lowers the order on repeats).
  void NoteRejection();
  // Weighted norm of (θ, v) parts as in the error test.
  double DifferentialNorm(const Eigen::VectorXd& theta, const Eigen::VectorXd& v) const;
  // Builds and factorizes the iteration matrix. With `regularize` (where a singular matrix would
  // end the run: fresh Jacobians) a singular matrix at a singular configuration is factorized
  // regularized (IterationMatrix, "Saddle-point matrices"); elsewhere it is refused and the
  // caller retries with fresh Jacobians first.
  bool Factorize(bool regularize = false);
  void UpdatePosition();

  BdfOptions bdf_;
  std::string name_;
  std::unique_ptr<engine::ConstrainedDynamics> dynamics_;
  StepStatus reset_status_ = StepStatus::kAccepted;
  int last_order_ = 1;
  std::array<long, 5> steps_per_order_{};
  // Variable order: order for the next step, steps taken at the current order, initial phase
  // (order raised every step until the first rejection or lowering), consecutive rejections.
  int k_next_ = 1;
  int steps_at_order_ = 0;
  bool initial_phase_ = true;
  int consecutive_rejections_ = 0;
  // Coloured differences: pattern, colouring, J̄ at c0_jbar_ (and M there for eq. 25).
  BdfJacobianStats jstats_;
  SparsityPattern pattern_;
  ColumnColouring colouring_;
  bool have_pattern_ = false;
  bool refresh_pattern_ = false;
  double c0_jbar_ = 0;
  Eigen::MatrixXd Jbar_, Mbar_;
  // Eq. (26): D_t, the time of J̄'s ∂F/∂y part, whether D_t is valid for J̄, whether J̄ comes
  // from an update (not a difference) and whether an update already failed to restore speed.
  Eigen::MatrixXd Dt_;
  double t_jbar_ = 0;
  bool have_dt_ = false;
  bool jbar_from_update_ = false;
  bool update_failed_ = false;

  // History, newest first: times, θ relative to the current q_n, v, λ (at most order + 1).
  std::vector<double> ht_;
  std::vector<Eigen::VectorXd> htheta_, hv_, hlambda_;
  std::vector<Eigen::VectorXd> hq_;  // the positions q_j themselves (re-basing θ_j)
  Eigen::VectorXd vdot0_, lambda_, mu_;
  Eigen::VectorXd q_start_, v_start_;  // ConsistentStart's trial state

  // Current step: order, coefficients, predictor, error factor.
  int k_ = 1;
  std::vector<double> c_;
  double error_factor_ = 0.5;
  Eigen::VectorXd theta_pred_, v_pred_, lambda_pred_, sum_theta_, sum_v_;
  Eigen::VectorXd theta_new_, v_new_, lambda_new_, mu_new_, q_new_;

  // Near singular configurations (header): J_lu_'s pivot ratio below RankDropMonitor::kDrop
  // times the largest ratio of the accepted steps since Reset.
  bool NearSingular() const { return !rows_.empty() && rank_drop_.Near(J_lu_.pivot_ratio()); }
  RankDropMonitor rank_drop_;

  // Iteration matrix and its blocks.
  IterationMatrix J_lu_;
  bool jacobians_stale_ = true;
  double c0_matrix_ = 0;
  int k_matrix_ = 0;  // order of the step that last factorized J
  Eigen::MatrixXd M_, K_, C_, KM_, KG_, G_, Z_, J_;
  Eigen::MatrixXd H_, H_r_;  // force directions (non-ideal forces): of J, of the residual
  Eigen::VectorXd F_, g_, gt_, r_, x_, w_, dexp_, e_;

  // Dense output of [t_prev_, t_]: nodes and values (θ relative to q_prev_, v).
  std::vector<double> dt_;
  std::vector<Eigen::VectorXd> dtheta_, dv_;
  bool dense_start_ = false;  // first step after Reset: quadratics with the initial slopes
  Eigen::VectorXd dv0_, da0_;
};

}  // namespace saltus::integrators
