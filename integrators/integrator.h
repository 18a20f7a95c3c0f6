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
// Usage: Reset(system, rows, t, q, v) at a consistent state, then Step(t_limit) repeatedly; each
// successful Step is one accepted step [t_previous(), t()] with t() ≤ t_limit, whose dense
// output Interpolate(s, ...) is valid for s in that interval (the root finder evaluates event
// functions on it). After an event the loop calls Reset again (one-step methods restart).
//
// Step-size control (eq. 30): h_new = h · min(fac_max, max(fac_min, s (1/err)^(1/(p+1))))
// with err the scaled error norm (rtol, atol) and s the safety factor; defaults from the paper's
// Table 1 where it gives one. Non-virtual Step validates and keeps statistics; schemes implement
// DoReset/DoStep/DoInterpolate.
#pragma once

#include <Eigen/Dense>
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

struct IntegratorOptions {
  Formulation formulation = Formulation::kIndex1;
  double rtol = 1e-4;  // Table 1: relative integration tolerance
  double atol = 1e-6;
  double h_min = 1e-7;  // Table 1: minimum time step
  double h_max = std::numeric_limits<double>::infinity();
  double h_init = 0.0;      // 0: automatic initial step (Hairer, Nørsett & Wanner, Sec. II.4)
  double safety = 0.9;      // s in eq. (30); the paper's Table 1 uses 0.3
  double fac_min = 0.2;     // bounds on h_new / h
  double fac_max = 5.0;
  bool adaptive = true;     // false: constant step h_init (order tests)
  double newton_tol = 1e-8;         // Table 1: tolerance on Newton's residual
  int max_newton_iterations = 10;
  double projection_tol = 1e-4;     // Table 1: max violation of g and G v before projecting
  engine::ProjectionMetric projection_metric = engine::ProjectionMetric::kMass;
  bool project = true;              // MDOP5-style projection after accepted steps
};

struct IntegratorStats {
  long accepted_steps = 0;
  long rejected_steps = 0;
  long rhs_evaluations = 0;          // evaluations of v̇ (KKT solves) or residuals
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

class Integrator {
 public:
  explicit Integrator(const IntegratorOptions& options);
  virtual ~Integrator();
  Integrator(const Integrator&) = delete;
  Integrator& operator=(const Integrator&) = delete;

  virtual std::string_view name() const = 0;
  virtual int order() const = 0;
  virtual bool Supports(Formulation f) const = 0;

  // (Re)starts at (t, q, v) with `active_rows` frozen. The state should satisfy the constraints
  // of the formulation (the loop projects before Reset). Throws std::invalid_argument on
  // inconsistent sizes or an unsupported formulation.
  void Reset(const engine::MechanicalSystem& system, std::vector<int> active_rows, double t,
             const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  // One accepted step towards t_limit (> t()), never past it. On failure the state stays at the
  // last accepted step.
  StepStatus Step(double t_limit);

  double t() const { return t_; }
  double t_previous() const { return t_prev_; }
  const Eigen::VectorXd& q() const { return q_; }
  const Eigen::VectorXd& v() const { return v_; }
  // The step size the controller proposes next.
  double proposed_step() const { return h_; }
  const std::vector<int>& active_rows() const { return rows_; }

  // Dense output on [t_previous(), t()]. Outputs are resized.
  void Interpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const;

  const IntegratorOptions& options() const { return options_; }
  const IntegratorStats& stats() const { return stats_; }

 protected:
  virtual void DoReset() {}
  // Attempts steps (rejecting and shrinking as needed) until one is accepted; updates t_, q_,
  // v_, t_prev_, h_ and the dense output. Must not step past t_limit.
  virtual StepStatus DoStep(double t_limit) = 0;
  virtual void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const = 0;

  // Scaled RMS norm of an error vector given the old and new values (Hairer's sc_i).
  double ErrorNorm(const Eigen::VectorXd& err, const Eigen::VectorXd& y_old,
                   const Eigen::VectorXd& y_new) const;
  // Step-size factor from eq. (30), clamped to [fac_min, fac_max] (fac_max = 1 after a rejection).
  double StepFactor(double err, int p, bool after_rejection) const;

  const engine::MechanicalSystem* system_ = nullptr;
  IntegratorOptions options_;
  std::vector<int> rows_;
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
};

// Every integrator of Saltus: the factory, the CLI help and the generic tests use this list.
std::span<const IntegratorEntry> IntegratorTable();
// Throws std::invalid_argument naming the unknown integrator and listing the known ones, or the
// unsupported formulation and the supported ones.
std::unique_ptr<Integrator> MakeIntegrator(std::string_view name, const IntegratorOptions& options);

}  // namespace saltus::integrators
