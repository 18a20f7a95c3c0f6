// Frictional contact phases with closed-form (or RK4) solutions, for the integrator tests.
//
// Planar body: q = (x, y, θ), M = diag(m, m, J), gravity of magnitude g tilted by α (the line is an
// incline of angle α, x pointing down the slope): F = m g (sin α, −cos α, 0) − (k x, 0, 0) with an
// optional spring k to x = 0. Its contact with the line y = 0 (LineContact), for a round body of
// radius R (R = 0: a block touching the line under its centre):
//   row 0  unilateral, g = y − R, G = (0, 1, 0), friction μ;
//   row 1  tangential, velocity level: the slip velocity of the contact point ġ_T = ẋ + R θ̇,
//          G_T = (1, 0, R) (θ counter-clockwise, contact point at (x, y − R)), γ = 0.
//
// Sphere: q = (x, y, z, φ) (nq = nv = 6), v = (ẋ, ẏ, ż, ω), M = diag(m, m, m, J, J, J),
// J = (2/5) m R² (solid sphere). Its orientation does not enter the dynamics (a sphere on a plane,
// isotropic J, no gyroscopic term), so φ is just the integral of ω. Gravity and a spring to the
// z axis: F = (m g_x − k x, m g_y − k y, −m g_n, 0, 0, 0). Contact with the plane z = 0
// (PlaneContact):
//   row 0  unilateral, g = z − R, G = e_z;
//   rows 1, 2  tangential, velocity level: slip velocity v + ω × (0, 0, −R) = (ẋ − R ω_y,
//          ẏ + R ω_x), G_T1 = (1, 0, 0, 0, −R, 0), G_T2 = (0, 1, 0, R, 0, 0), γ = 0.
//
// The velocity-level rows' Values() return kVelocityRowPoison instead of the conventional 0: any
// formulation that used them as position constraints would show it.
//
// Test problems (test_problems::TestProblem, for the order study):
//   sliding_spring  disk (m = 1, R = 1, J = ½) sliding on the flat line, s = +1, μ = 0.3, spring
//                   k = 4 (ω = 2), launched at ẋ = 3 without spin; active row: the normal row.
//                   Closed form: λ_N = m g, m ẍ = −k x − μ m g, J θ̈ = −μ m g R, i.e.
//                   x = −c + c cos ωt + (v₀/ω) sin ωt (c = μ g/ω²), θ = −½ (μ m g R/J) t²; the
//                   slip ẋ + R θ̇ stays positive up to t_end = 0.25 (0.46 m/s there).
//   rolling_spring  disk (m = 1, R = ½, J = ⅛) rolling (sticking) on the flat line with a spring
//                   k = 6: (m + J/R²) ẍ = −k x, ω = 2, x = x₀ cos ωt + (v₀/ω) sin ωt,
//                   θ = θ₀ − (x − x₀)/R; active rows: normal and tangential (velocity level).
//   sphere_turning  solid sphere (m = 1, R = 0.1) sliding with the current slip direction under
//                   gravity tilted along x (g_x = 2, g_n = 9.81, μ = 0.05) and a spring k = 4 to
//                   the z axis, launched from the axis with the slip velocity (0, 1) (ẏ = 1, no
//                   spin): the slip direction turns from +y through +x to −y over t_end = 1 while
//                   the slip speed stays above 0.26. Reference: classical RK4 of the reduced ODE
//                   (friction_problems.cc), 2¹⁴ steps, its error estimated by Richardson
//                   extrapolation against 2¹³ steps.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "engine/constraint_block.h"
#include "engine/mechanical_system.h"
#include "engine/sliding_friction.h"
#include "tests/integrators/test_problems.h"

namespace saltus::integrators::friction_problems {

inline constexpr double kGravity = 9.81;
inline constexpr double kVelocityRowPoison = 1e3;

struct PlanarBodyParameters {
  double m = 1.0, J = 0.5, R = 1.0;
  double alpha = 0.0;  // incline angle (gravity tilt)
  double k = 0.0;      // spring on x
  double mu = 0.3;     // friction coefficient of the contact row
};

class PlanarContactBody final : public engine::MechanicalSystem {
 public:
  explicit PlanarContactBody(const PlanarBodyParameters& p);
  int nq() const override { return 3; }
  int nv() const override { return 3; }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override;
  bool HasConstantMassMatrix() const override { return true; }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override;
  const PlanarBodyParameters& parameters() const { return p_; }

 private:
  PlanarBodyParameters p_;
};

struct SphereParameters {
  double m = 1.0, R = 0.1;
  double g_x = 0.0, g_y = 0.0, g_n = kGravity;
  double k = 0.0;  // spring pulling the centre to the z axis: −k (x, y)
  double mu = 0.3;
  double J() const { return 0.4 * m * R * R; }
};

class SphereOnPlane final : public engine::MechanicalSystem {
 public:
  explicit SphereOnPlane(const SphereParameters& p);
  int nq() const override { return 6; }
  int nv() const override { return 6; }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override;
  bool HasConstantMassMatrix() const override { return true; }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override;
  const SphereParameters& parameters() const { return p_; }

 private:
  SphereParameters p_;
};

// The planar sliding contact of the normal row 0 with slip sign s (= ±1).
engine::SlidingContact PlanarSlide(double mu, double s);
// The spatial sliding contact of row 0 with the current slip direction and fallback d₀.
engine::SlidingContact SpatialSlide(double mu, const Eigen::Vector2d& d0);

// "sliding_spring", "rolling_spring", "sphere_turning".
std::vector<std::string> FrictionProblemNames();
std::unique_ptr<test_problems::TestProblem> MakeFrictionProblem(const std::string& name);

}  // namespace saltus::integrators::friction_problems
