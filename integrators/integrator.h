// One interface for every smooth-phase integrator of Saltus.
//
// Between two events the event loop freezes the active rows A = B ∪ (I₂ ∩ U) and asks the
// integrator to advance the DAE
//
//   q̇ = T(q) v,   M(q) v̇ = F(q, v, t) + G_Aᵀ λ,   constraints on A in the chosen formulation:
//   index 1: G_A v̇ + γ_A = 0 (Haddouni et al. 2017, eq. 8-9);  index 2: G_A v + ∂g_A/∂t = 0
//   (eq. 7);  index 3: g_A = 0 (eq. 6);  stabilized index 2 (GGL): both g_A = 0 and the velocity
//   constraint (eq. 23).
//
// Friction (the contact modes frozen between events, ARCHITECTURE.md):
//  - Velocity-level rows (ConstraintLevel::kVelocity: the tangential rows of a sticking contact,
//    nonholonomic) have no g: index 1 and 2 treat them as every row; index 3 and GGL enforce
//    g = 0 on the position-level rows only and G v + ∂g/∂t = 0 on the velocity-level rows (the
//    usual treatment of nonholonomic rows in index-3 schemes, e.g. Arnold & Brüls' generalized-α;
//    each scheme's header says how). Their g is never read.
//  - Non-ideal forces (MechanicalSystem::HasNonIdealForces, sliding friction): the dynamics is
//    M v̇ = F + H_Aᵀ λ with force directions H_A ≠ G_A (MechanicalSystem::ForceDirections); the
//    constraints are unchanged. Schemes use Hᵀλ wherever the constraint forces enter (and −Hᵀ in
//    their iteration matrices) and take exactly their ideal code path when the system has none.
//  A scheme that cannot do one of them says so (SupportsNonIdealForces, SupportsVelocityLevelRows;
//  also in the integrator table) and Reset refuses such a phase.
//
// Usage: Reset(system, rows, t, q, v) at a consistent state, then Step(t_limit) repeatedly; each
// successful Step is one accepted step [t_previous(), t()] with t() ≤ t_limit, whose dense
// output Interpolate(s, ...) is valid for s in that interval (the root finder evaluates event
// functions on it). After an event the loop calls Reset again (one-step methods restart).
//
// Step-size control (eq. 30): h_new = h · min(fac_max, max(fac_min, s (1/err)^(1/(p+1))))
// with err the scaled error norm (rtol, atol), s the safety factor and p the order of the
// lower-order solution of the embedded pair, so that the estimated local error is O(h^(p+1))
// (Hairer, Nørsett & Wanner, Solving ODEs I, Sec. II.4, eq. 4.13). The paper writes the exponent
// as 1/p with p the "order of consistency"; for DOPRI5 it takes p = 4, we take 1/(4+1), the
// exponent that matches the order of the estimate. A step is accepted when err ≤ 1. Defaults
// from the paper's Table 1 where it gives one. Non-virtual Step validates and keeps statistics;
// schemes implement DoReset/DoStep/DoInterpolate.
//
// References: Haddouni, Acary, Garreau, Beley, Brogliato, Comparison of several formulations and
// integration methods for the resolution of DAEs formulations in event-driven simulation of
// nonsmooth frictionless multibody dynamics, Multibody System Dynamics 41 (2017).
// E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential Equations I, Springer 1993.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/mechanical_system.h"
#include "engine/projection.h"

namespace saltus::integrators {

enum class Formulation { kIndex1, kIndex2, kIndex3, kStabilizedIndex2 };

// "index1", "index2", "index3", "ggl".
std::string_view ToString(Formulation f);
std::optional<Formulation> ParseFormulation(std::string_view name);

// What the step-size controller bounds (Hairer, Nørsett & Wanner I, Sec. II.4; L. F. Shampine,
// Tolerance proportionality in ODE codes, Lecture Notes in Math. 1386 (1989) 118–136).
// A scheme whose estimate err (scaled by atol + rtol |y|) is the local error of the solution it
// continues with, err ≈ C h^(p+1), accumulates a global error ≈ Σ err ≈ (T/h) err over a span T
// (when the problem does not amplify it):
//   kPerStep      err ≤ 1 (eq. 30 of Haddouni et al. 2017, Table 1's setting): the global error
//                 ≈ (T/h)·tol ∝ tol^(p/(p+1)), a multiple of tol that grows with the number of
//                 steps — for the order-2 schemes (generalized-α, Newmark, BDF2) and BDF
//                 measured at 10²–10⁴ × rtol on the `joints` set (docs/benchmarks.md);
//   kPerUnitStep  err · T/h ≤ 1 ("error per unit step"): the global error ≈ tol times the
//                 problem's amplification, i.e. proportional to tol, at the cost of smaller steps;
//                 the step-size rule then uses the exponent 1/p (err · T/h ∝ h^p).
// DOPRI5, DOP853, HEM5 and PHEM56 continue with their higher-order solution (local extrapolation):
// their local error is an order below the estimate, which already keeps the global error at about
// tol (0.001–4 × rtol on `joints`); kPerUnitStep makes them take smaller steps for no gain.
enum class ErrorControl { kPerStep, kPerUnitStep };
std::string_view ToString(ErrorControl c);  // "per_step", "per_unit_step"
std::optional<ErrorControl> ParseErrorControl(std::string_view name);

struct IntegratorOptions {
  Formulation formulation = Formulation::kIndex1;
  double rtol = 1e-4;  // Table 1: relative integration tolerance
  double atol = 1e-6;
  // Minimum time step; 0 (the default): automatic, AutomaticMinStep(rtol) below. Whatever the
  // value, a step never goes below the resolution of t (Integrator::MinStep).
  double h_min = 0.0;
  double h_max = std::numeric_limits<double>::infinity();
  double h_init = 0.0;   // 0: automatic initial step (Hairer, Nørsett & Wanner, Sec. II.4)
  double safety = 0.3;   // s in eq. (30); Table 1 of the paper (Hairer uses 0.9)
  double fac_min = 0.2;  // bounds on h_new / h
  double fac_max = 5.0;
  bool adaptive = true;      // false: constant step h_init (order tests)
  double newton_tol = 1e-8;  // Table 1: tolerance on Newton's residual
  int max_newton_iterations = 10;
  double projection_tol = 1e-4;  // Table 1: max violation of g and G v before projecting
  engine::ProjectionMetric projection_metric = engine::ProjectionMetric::kMass;
  bool project = true;  // MDOP5-style projection after accepted steps
  // Spectral radius at infinity ρ∞ ∈ [0, 1] of the generalized-α schemes (Haddouni et al. 2017,
  // after eq. 16): 1 no numerical damping, 0 annihilation of high frequencies. Validated by them.
  double rho_inf = 0.9;
  // What the error test bounds (ErrorControl below). T = error_time_scale (s) is the span the
  // global error accumulates over: the CLI sets it to the run's t_end − t_start.
  ErrorControl error_control = ErrorControl::kPerStep;
  double error_time_scale = 1.0;
};

// The automatic minimum step: Table 1's h_min = 1e-7 s at its tolerance rtol = 1e-4, in
// proportion to rtol below it, down to rtol = 1e-10:
//   h_min = 1e-7 s · min(1, max(rtol, 1e-10) / 1e-4)   (≥ 1e-13 s).
// Why proportional: an order-p error control needs steps h ∝ rtol^(1/(p+1)) on a smooth solution
// (Hairer, Nørsett & Wanner I, Sec. II.4), which shrink more slowly than rtol for every p ≥ 0; a
// problem whose smallest needed step clears 1e-7 s at 1e-4 clears the scaled minimum at any
// tighter rtol by at least the same margin (measurements: docs/benchmarks.md). Why the floor: a
// tolerance far below round-off must end in kStepSizeUnderflow, not in steps of ≈ rtol / (ε ‖f‖)
// whose error estimate is round-off and that make no progress. A genuine failure (singular
// configuration) still ends after O(log(h / h_min)) retries, each failed attempt shrinking h.
double AutomaticMinStep(double rtol);
// Relative resolution of t below which t + h is not distinguishable from t for the root finders
// and dense output: a step is never smaller than kTimeResolution · |t|.
inline constexpr double kTimeResolution = 64 * std::numeric_limits<double>::epsilon();

struct IntegratorStats {
  long accepted_steps = 0;
  long rejected_steps = 0;
  long rhs_evaluations = 0;  // evaluations of v̇ (KKT solves) or residuals
  long newton_iterations = 0;
  long jacobian_evaluations = 0;
  long factorizations = 0;
  long position_projections = 0;
  long velocity_projections = 0;
  double smallest_step = std::numeric_limits<double>::infinity();
  double largest_step = 0.0;
  double total_time = 0.0;  // sum of accepted step sizes
  void Add(const IntegratorStats& other);
};

enum class StepStatus {
  kAccepted,
  kStepSizeUnderflow,  // error test failed with h ≤ h_min
  kNewtonFailure,
  kLinearSolveFailure,  // singular KKT / M not positive definite
  kNonFinite,           // NaN or Inf in the state
};
std::string_view ToString(StepStatus s);

// Dropped dependent rows (Integrator::NeedsIndependentRows) may drift by this factor times the
// scheme's constraint tolerance before the step is undone; structurally redundant rows stay at
// a few times the kept rows' violation (Bricard: ≈ 3 ‖g‖ ‖v‖).
inline constexpr double kDroppedRowToleranceFactor = 10.0;

class Integrator {
 public:
  // Throws std::invalid_argument naming the option when the options are invalid: rtol, atol < 0
  // or both 0; h_min < 0; h_max < h_min; h_init < 0 (or = 0 with adaptive = false); safety
  // outside (0, 1]; fac_min outside (0, 1]; fac_max < 1; newton_tol, projection_tol ≤ 0;
  // max_newton_iterations < 1.
  explicit Integrator(const IntegratorOptions& options);
  virtual ~Integrator();
  Integrator(const Integrator&) = delete;
  Integrator& operator=(const Integrator&) = delete;

  virtual std::string_view name() const = 0;
  // Order of the global error at step ends (convergence order of the scheme).
  virtual int order() const = 0;
  // Order of the continuous extension used by Interpolate (its local error is
  // O(h^(dense_output_order()+1))); the generic tests check it.
  virtual int dense_output_order() const = 0;
  virtual bool Supports(Formulation f) const = 0;
  // Whether the scheme integrates systems with non-ideal constraint forces (sliding friction,
  // H ≠ G) and active velocity-level rows (sticking contacts); the event loop asks before it
  // starts such a phase. Both true unless a scheme says otherwise (its header says why).
  virtual bool SupportsNonIdealForces() const { return true; }
  virtual bool SupportsVelocityLevelRows() const { return true; }
  // Why the last Step failed, beyond its status (e.g. the constraints of a singular stage
  // system, or a dropped dependent row that became violated); empty when there is nothing to add.
  std::string failure_detail() const {
    return dropped_row_failure_.empty() ? SchemeFailureDetail() : dropped_row_failure_;
  }

  // (Re)starts at (t, q, v) with `active_rows` frozen. The state should satisfy the constraints
  // of the formulation (the loop projects before Reset). Throws std::invalid_argument on
  // inconsistent sizes (q: nq, v: nv), NaN/Inf in t, q or v, an active row outside
  // [0, num_constraints()) or listed twice, an unsupported formulation, a system with non-ideal
  // forces or an active velocity-level row that the scheme does not support (naming the row). The
  // system must outlive the integrator's use of it. Statistics are not cleared: they accumulate
  // over Resets. Schemes that need independent rows keep a basis of them (NeedsIndependentRows
  // below), so active_rows() may be a subset of `active_rows` with the same span. The dropped rows
  // are watched: a step after which one of them is violated by more than kDroppedRowToleranceFactor
  // × max(projection_tol, newton_tol) (the dependence was not structural but a rank drop at the
  // restart point, e.g. two curves tangent there) is undone and Step returns kLinearSolveFailure,
  // failure_detail() naming the row. A failure of the scheme's first evaluation at (t, q, v) is
  // reported by the next Step.
  //
  // continue_step > 0 restarts a phase whose vector field is that of the phase that ended (the
  // same system, active rows and forces: an impact changed the velocities, not the dynamics),
  // from the step that phase ended with (the event loop passes min(last accepted step, proposed
  // step)). The schemes that start from InitialStepEstimate (DOPRI5, DOP853, HEM5, PHEM56,
  // null-space Newmark) then take as first step
  //   h = continue_step · min(1, ‖v⁻‖ / ‖v⁺‖),   clamped to [MinStep(), h_max],
  // with v⁻ the velocities of the integrator's last state (before this Reset), v⁺ the new ones,
  // in the scaled norm of the position rates of HINIT (‖v‖² = mean (v_i / (atol + rtol |q_i|))²,
  // Hairer, Nørsett & Wanner I, Sec. II.4), instead of HINIT's estimate, which costs one more
  // evaluation of f per restart and starts every phase a few factors fac_max below the step the
  // controller had reached. Why this is safe:
  //  - the first step passes the same error test as every step and is rejected and shrunk when
  //    it fails, so the tolerance is kept whatever the guess; a guess too large costs rejected
  //    attempts (a factor fac_min each), one too small costs steps;
  //  - on the same vector field the step the old phase's error test accepted last is the
  //    controller's estimate of the step it would take next without the event: the usual
  //    continuation of a one-step method across a root that leaves the right-hand side unchanged
  //    (Hairer, Nørsett & Wanner I, Sec. II.6 on discontinuities: a restart is needed where f
  //    changes, not where only the state is reinitialised);
  //  - an impulse that speeds the system up (‖v⁺‖ > ‖v⁻‖: a kick, a body hit by a faster one)
  //    moves it through its configuration faster, by that ratio, and the step shrinks with it
  //    (a system set moving from rest, ‖v⁻‖ = 0, starts from HINIT); one that slows it down (a
  //    bounce with e < 1) does not lengthen it.
  // What changes is the step sequence, hence the dense output the events are located on: events
  // move by the integration error. 0 (the default): HINIT. Schemes that do not use
  // InitialStepEstimate (BDF, generalized-α, half-implicit), runs with h_init > 0, and a Reset
  // onto a system of other sizes ignore it. Throws std::invalid_argument when continue_step is
  // negative or not finite.
  void Reset(const engine::MechanicalSystem& system, std::vector<int> active_rows, double t,
             const Eigen::VectorXd& q, const Eigen::VectorXd& v, double continue_step = 0.0);

  // One accepted step towards t_limit (> t(); +∞ allowed), never past it; the step that reaches
  // t_limit ends exactly on it. On failure the state stays at the last accepted step (after
  // kNonFinite detected here, the dense output collapses to that point). Throws
  // std::invalid_argument if t_limit ≤ t(), std::logic_error before the first Reset.
  StepStatus Step(double t_limit);

  double t() const { return t_; }
  double t_previous() const { return t_prev_; }
  const Eigen::VectorXd& q() const { return q_; }
  const Eigen::VectorXd& v() const { return v_; }
  // The step size the controller proposes next.
  double proposed_step() const { return h_; }
  const std::vector<int>& active_rows() const { return rows_; }

  // ‖G v̇ + γ‖∞ of the scheme's own index-1 solve on active_rows() at (t(), q(), v()) when its
  // last evaluation of an accepted step was there (DOPRI5: the FSAL stage, or the evaluation after
  // a projection), so that the event loop need not solve again; negative when the scheme has none.
  virtual double StepEndResidual() const { return -1.0; }

  // Dense output on [t_previous(), t()]: q (nq), v (nv), resized. Before the first step it
  // returns the Reset state. Throws std::invalid_argument if s is outside the step by more than
  // 1e-12·max(1, |t|) (root finders may land a few ulps outside; such s are clamped).
  void Interpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const;

  const IntegratorOptions& options() const { return options_; }
  // Accumulated since construction (not cleared by Reset).
  const IntegratorStats& stats() const { return stats_; }

 protected:
  virtual void DoReset() {}
  // True for schemes that need linearly independent active rows: Reset then keeps an independent
  // subset with the same span (row_selection.h). The implicit schemes factorize the full Newton
  // matrix [S, −Gᵀ; G, 0], singular with redundant rows; DOPRI5's index-1 solve is minimum-norm
  // but off the manifold the redundant rows stop being exactly dependent and their drift read as
  // inconsistent constraints (Bricard stopped at t = 0.17 s at rtol 1e-3). HEM5 and PHEM56 add
  // their own per-step choice among the kept rows (rank changes within a phase); without the
  // structural choice here, drift made all 30 Bricard rows look independent at q_n and PHEM56
  // stopped at rtol 1e-3…1e-5. The null-space Newmark scheme works with least-squares bases and
  // keeps every row.
  virtual bool NeedsIndependentRows() const { return false; }
  // The scheme's own failure detail (see failure_detail).
  virtual std::string SchemeFailureDetail() const { return {}; }
  // Throws std::invalid_argument when the scheme cannot integrate a phase of `system` with
  // `active_rows` (SupportsNonIdealForces, SupportsVelocityLevelRows).
  void RequireSupportedPhase(const engine::MechanicalSystem& system,
                             const std::vector<int>& active_rows) const;
  // Violations of the dropped rows at the current state (g, or G v + ∂g/∂t for velocity-level
  // rows), one per dropped row.
  void DroppedRowViolations(Eigen::VectorXd* violation) const;
  // g on the active rows (rows_.size() entries, aligned with rows_): g(q, t) on position-level
  // rows and 0 on velocity-level rows, whose g is not a constraint and is not evaluated.
  void PositionConstraintValues(double t, const Eigen::VectorXd& q, Eigen::VectorXd* g);
  // The force directions of the active rows at (t, q, v): G itself when the system is ideal (no
  // evaluation), else H from MechanicalSystem::ForceDirections, written to *H. G must be the
  // Jacobian of rows_ at (t, q).
  const Eigen::MatrixXd& ForceDirections(double t, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& v, const Eigen::MatrixXd& G,
                                         Eigen::MatrixXd* H) const;
  // Attempts steps (rejecting and shrinking as needed) until one is accepted; updates t_, q_,
  // v_, t_prev_, h_ and the dense output. Must not step past t_limit.
  virtual StepStatus DoStep(double t_limit) = 0;
  virtual void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const = 0;

  // Scaled RMS norm of an error vector given the old and new values (same sizes n):
  //   ‖err‖ = sqrt((1/n) Σ (err_i / sc_i)²),  sc_i = atol + rtol · max(|y_old,i|, |y_new,i|)
  // (Hairer, Nørsett & Wanner, Sec. II.4, eq. 4.10–4.11). 0 when n = 0.
  double ErrorNorm(const Eigen::VectorXd& err, const Eigen::VectorXd& y_old,
                   const Eigen::VectorXd& y_new) const;
  // Starting step of Hairer, Nørsett & Wanner (Solving ODEs I, Sec. II.4, HINIT) for a method of
  // the given order on y = (q, v), f = (v, v̇), at the current state with v̇ = a0. `acceleration`
  // evaluates v̇ at (t, q, v) and returns false when it cannot. Clamped to [h_min, h_max].
  // After a Reset with continue_step > 0: the continued step of Reset, without calling
  // `acceleration`.
  double InitialStepEstimate(
      const Eigen::VectorXd& a0, int order,
      const std::function<bool(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                               Eigen::VectorXd* vdot)>& acceleration) const;
  // Projects (q, v) onto the active rows at t: positions by eq. (35), then velocities by eq. (36),
  // with the options' metric and iteration budget and the Newton tolerance
  // min(newton_tol, 0.1 · projection_tol), so that the result lands well below the threshold
  // that triggered it; `rank_tolerance` as in engine::ProjectionOptions. Counts the projections
  // and Newton iterations. False (q, v unchanged) if either projection fails.
  bool ProjectOntoConstraints(double t, double rank_tolerance, Eigen::VectorXd* q,
                              Eigen::VectorXd* v);
  // Projects (q, v) onto `rows` at t to the projections' round-off floor (tolerance 1e-14, the
  // options' metric and iteration budget): positions by eq. (35), then velocities by eq. (36).
  // Counts the projections and Newton iterations. False (q, v unchanged) if either does not
  // converge. Used near singular configurations (explicit_runge_kutta.h, hem5.h).
  bool ProjectToRoundOff(double t, std::span<const int> rows, Eigen::VectorXd* q,
                         Eigen::VectorXd* v);
  // x ← (I − M⁻¹Gᵀ W⁺ G) x with M, G = G_A at (t, q), W = G M⁻¹Gᵀ and W⁺ the minimum-norm
  // inverse of a complete orthogonal decomposition with relative threshold 1e-13 (directions
  // singular to round-off are left in x): the part of a velocity-space vector x along the
  // constraint manifold in the M metric. The error estimates of BDF, HEM5 and PHEM56 near a
  // singular configuration (bdf.h, hem5.h). False (x unchanged) when M cannot be factorized.
  bool RemoveConstrainedPartAt(double t, const Eigen::VectorXd& q, Eigen::VectorXd* x);
  // The same for an error vector err = (q part (nq), v part (nv)) of a step ending at (t, q):
  // the v part always, the q part only where it is a velocity-space vector (nq = nv). Each part
  // is left unchanged when its filter fails.
  void RemoveConstrainedPartOfError(double t, const Eigen::VectorXd& q, Eigen::VectorXd* err);
  // Step-size factor h_new / h = s (1/err)^(1/(p+1)) from eq. (30), p the order of the embedded
  // lower-order solution, clamped to [fac_min, fac_max] (upper bound 1 when after_rejection, i.e.
  // for a rejected step and for the first accepted step after one). err = 0 gives the upper
  // bound, NaN gives fac_min.
  // With ErrorControl::kPerUnitStep, err is the value ControlledError returns and the exponent is
  // 1/p.
  double StepFactor(double err, int p, bool after_rejection) const;
  // The quantity the error test compares with 1 for a step of size h whose estimate is err:
  // err (kPerStep) or err · error_time_scale / h (kPerUnitStep).
  double ControlledError(double err, double h) const {
    return options_.error_control == ErrorControl::kPerUnitStep
               ? err * (options_.error_time_scale / h)
               : err;
  }
  // The share of the tolerance a step of size h may spend: 1 per step, h / error_time_scale per
  // unit step. An implicit scheme's Newton iteration error adds up over the steps like a local
  // error, so its stopping tolerance follows this share (generalized_alpha.h).
  double ToleranceShare(double h) const {
    return options_.error_control == ErrorControl::kPerUnitStep
               ? std::min(1.0, h / options_.error_time_scale)
               : 1.0;
  }
  // The exponent's denominator of the step-size rule for an estimate O(h^(p+1)): p + 1, or p
  // per unit step.
  int ControlOrder(int p) const {
    return options_.error_control == ErrorControl::kPerUnitStep ? std::max(p, 1) : p + 1;
  }
  // The step of an attempt from t_ toward t_limit, h the step wanted (the schemes' step loops).
  // Adaptive: stretched by up to 1 % to land on t_limit rather than leave a sliver (Hairer's
  // DOPRI5 does the same); fixed: lands on t_limit when the remainder is one step up to
  // round-off. Returns whether the attempt is the last before t_limit (*h = t_limit − t_ then).
  bool LandOnLimit(double t_limit, double* h) const {
    const double remaining = t_limit - t_;
    const bool last =
        options_.adaptive ? t_ + 1.01 * *h >= t_limit : remaining <= *h * (1.0 + 1e-9);
    if (last) *h = remaining;
    return last;
  }
  // The smallest step allowed at the current time: max(options().h_min, kTimeResolution · |t|)
  // (options().h_min resolved to AutomaticMinStep(rtol) when it was given as 0), never above
  // h_max (the schemes clamp steps to [MinStep(), h_max]).
  double MinStep() const {
    return std::min(std::max(options_.h_min, kTimeResolution * std::abs(t_)), options_.h_max);
  }

  const engine::MechanicalSystem* system_ = nullptr;
  IntegratorOptions options_;
  std::vector<int> rows_;
  // Set by Reset: the system's HasNonIdealForces(); per entry of rows_, whether it is a
  // velocity-level row; the position-level rows of rows_ (global indices, in order).
  bool non_ideal_ = false;
  std::vector<char> velocity_level_;
  bool has_velocity_rows_ = false;
  std::vector<int> position_rows_;
  Eigen::VectorXd g_position_;  // workspace of PositionConstraintValues
  // Workspace of RemoveConstrainedPartAt.
  struct ConstrainedPartWork {
    Eigen::MatrixXd M, G, MiGt;
    Eigen::LDLT<Eigen::MatrixXd> mass;
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> W;
    Eigen::VectorXd y;
  } constrained_part_;
  Eigen::VectorXd q_round_off_, v_round_off_;  // workspace of ProjectToRoundOff
  Eigen::VectorXd error_part_;                 // workspace of RemoveConstrainedPartOfError
  std::vector<int> dropped_rows_;              // active rows left out by NeedsIndependentRows
  std::string dropped_row_failure_;
  double restart_t_ = 0;         // time of the last Reset
  double continue_step_ = 0;     // the first step after Reset's continue_step (0: HINIT)
  std::vector<char> seen_rows_;  // Reset's check for rows listed twice
  double t_ = 0, t_prev_ = 0, h_ = 0;
  Eigen::VectorXd q_, v_, q_prev_, v_prev_;
  IntegratorStats stats_;
};

// ---- The integrator table -----------------------------------------------------------------
struct IntegratorEntry {
  std::string_view name;
  std::string_view description;
  std::vector<Formulation> formulations;
  std::unique_ptr<Integrator> (*make)(const IntegratorOptions& options);
  // Integrator::SupportsNonIdealForces (sliding friction) and SupportsVelocityLevelRows
  // (sticking contacts) of the scheme.
  bool non_ideal_forces;
  bool velocity_level_rows;
};

// Every integrator of Saltus: the factory, the CLI help and the generic tests use this list.
std::span<const IntegratorEntry> IntegratorTable();
// Throws std::invalid_argument naming the unknown integrator and listing the known ones, or the
// unsupported formulation and the supported ones.
std::unique_ptr<Integrator> MakeIntegrator(std::string_view name, const IntegratorOptions& options);

}  // namespace saltus::integrators
