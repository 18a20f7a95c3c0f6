// Smooth constrained mechanical problems with closed-form solutions, for the integrator tests.
//
//   circle   particle of mass m on the circle x² + y² = R², no applied force: uniform circular
//            motion, φ(t) = φ₀ + ω t. Row g = (x² + y² − R²)/2, G = (x, y), γ = vₓ² + v_y².
//   rod      bead of mass m on a rod turning at the prescribed rate Ω (rheonomic row
//            g = −x sin Ωt + y cos Ωt), pulled to the origin by a spring of stiffness
//            k = m (Ω² + ω₀²): the radius obeys r̈ = (Ω² − k/m) r = −ω₀² r, so
//            r(t) = r₀ cos ω₀t + (ṙ₀/ω₀) sin ω₀t and (x, y) = r (cos Ωt, sin Ωt).
//   rotor    a damped rotor whose position is the unit complex number q = (cos θ, sin θ)
//            (nq = 2, nv = 1, q ⊕ h v rotates q by h v): J ω̇ = −c ω, so
//            ω(t) = ω₀ e^(−βt), θ(t) = θ₀ + (ω₀/β)(1 − e^(−βt)), β = c/J. No constraint rows;
//            it exercises MechanicalSystem::IntegratePosition with nq ≠ nv.
//
// Every system can be told to return NaN forces from a given time on (failure tests).
//
// Mechanisms, for the convergence-order test (built with the engine's planar and spatial models;
// references independent of the integrators, see test_problems.cc):
//   slider_crank     free planar slider-crank, Haug's data (BENCHMARKS.md), 1 DOF; reference:
//                    the minimal-coordinate ODE in the crank angle by classical RK4.
//   double_pendulum  Haug's planar double pendulum released horizontal, 2 DOF; reference: the
//                    minimal-coordinate ODE in the two bar angles by classical RK4.
//   heavy_top        symmetric heavy top on a spherical joint in steady precession (quaternion
//                    positions, exponential-map update); reference: the closed form.
// They throw std::logic_error from set_nan_forces_from (no NaN switch in the engine's models).
#pragma once

#include <Eigen/Dense>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"
#include "engine/planar_model.h"
#include "integrators/integrator.h"

namespace saltus::integrators::test_problems {

class TestProblem {
 public:
  virtual ~TestProblem() = default;
  virtual std::string name() const = 0;
  virtual const engine::MechanicalSystem& system() const = 0;
  // Active rows (all rows of the system).
  virtual std::vector<int> rows() const = 0;
  double t0() const { return 0.0; }
  virtual double t_end() const = 0;
  // A step for which the fixed-step convergence study starts in the asymptotic regime.
  virtual double coarse_step() const = 0;
  // Coarsest step of the five-halving study on the mechanisms for an integrator of `order`
  // (high orders start coarser so that the finest run stays above the reference's error).
  virtual double order_study_step(int /*order*/) const { return coarse_step(); }
  // Closed-form q (nq) and v (nv) at t.
  virtual void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const = 0;
  // Forces become NaN for t ≥ t_nan.
  virtual void set_nan_forces_from(double t_nan) = 0;
  // Estimated error of Exact(t) (0 for closed forms; RK4 references: Richardson estimate).
  virtual double ReferenceErrorEstimate(double /*t*/) const { return 0.0; }
};

// "circle", "rod", "rotor".
std::vector<std::string> ProblemNames();
// "slider_crank", "double_pendulum", "heavy_top" (MakeProblem builds them too).
std::vector<std::string> MechanismNames();
std::unique_ptr<TestProblem> MakeProblem(const std::string& name);

// Distance between two positions of the problem (the rotor compares angles through q).
double PositionError(const Eigen::VectorXd& q, const Eigen::VectorXd& q_exact);

// ‖g(q, t)‖∞ on the position-level rows of `rows` and ‖G v + ∂g/∂t‖∞ on `rows` (0 when there are
// none).
double PositionViolation(const engine::MechanicalSystem& system, const std::vector<int>& rows,
                         double t, const Eigen::VectorXd& q);
double VelocityViolation(const engine::MechanicalSystem& system, const std::vector<int>& rows,
                         double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

// Two uniform bars (1 kg, 1 m, J = 1/12 kg·m²) pinned to the ground and to each other, gravity
// 9.81 m/s², released at rest in line at `angle0` from the downward vertical (the energy and
// damping studies of the implicit schemes; not a convergence-order problem).
std::unique_ptr<engine::PlanarMultibodySystem> MakeUnitDoublePendulum(double angle0);

// Least-squares slope of log(y) against log(x).
double LogLogSlope(const std::vector<double>& x, const std::vector<double>& y);

// The planar IFToMM double four-bar (examples/sets/scenes/double_four_bar.yaml: three cranks and
// two couplers of 1 m, 1 kg, J = 1/12 kg·m², cranks vertical turning at −1 rad/s). Every half
// turn (first at t ≈ 0.714 s, then 1.228 s, ...) all bars lie on the ground line, where G (14
// rows) drops to rank 12 and the crossed branch meets the parallelogram one.
std::shared_ptr<const engine::PlanarModel> PlanarDoubleFourBar();

// A run of the planar double four-bar to t_end with *integrator (Reset here on all 14 rows):
// the largest energy error max |E − E0| and the largest departure from the parallelogram branch
// (crank angles unequal, couplers rotated) over the accepted steps; status is the first
// non-accepted step's (the run stops there, at t_stop) or kAccepted. dense_drift is max |E − E0|
// of the dense output at θ = 1/4, 1/2, 3/4 of every accepted step.
struct FourBarRun {
  double drift = 0.0;
  double dense_drift = 0.0;
  double branch = 0.0;
  long steps = 0;
  integrators::StepStatus status = integrators::StepStatus::kAccepted;
  double t_stop = 0.0;
};
FourBarRun RunPlanarDoubleFourBar(integrators::Integrator* integrator, double t_end);

}  // namespace saltus::integrators::test_problems
