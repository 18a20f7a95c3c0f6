// Generalized-α specific tests: ρ∞ parameterization and validation, second order with variable
// steps, reuse of the iteration matrix across steps.
#include "integrators/generalized_alpha.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/integrators/test_problems.h"

namespace saltus::integrators {
namespace {

using test_problems::LogLogSlope;
using test_problems::MakeProblem;
using test_problems::PositionError;

TEST(GeneralizedAlphaTest, ParametersFromRhoInf) {
  // ρ∞ = 1: the trapezoidal rule (α_m = α_f = ½, γ = ½, β = ¼); exact binary fractions, so the
  // only error is the rounding of (2ρ−1)/(ρ+1) etc.: 1e-15.
  const auto p1 = GeneralizedAlphaParameters::FromRhoInf(1.0);
  EXPECT_NEAR(p1.alpha_m, 0.5, 1e-15);
  EXPECT_NEAR(p1.alpha_f, 0.5, 1e-15);
  EXPECT_NEAR(p1.gamma, 0.5, 1e-15);
  EXPECT_NEAR(p1.beta, 0.25, 1e-15);
  // ρ∞ = 0: α_m = −1, α_f = 0, γ = 3/2, β = 1.
  const auto p0 = GeneralizedAlphaParameters::FromRhoInf(0.0);
  EXPECT_NEAR(p0.alpha_m, -1.0, 1e-15);
  EXPECT_NEAR(p0.alpha_f, 0.0, 1e-15);
  EXPECT_NEAR(p0.gamma, 1.5, 1e-15);
  EXPECT_NEAR(p0.beta, 1.0, 1e-15);
}

TEST(GeneralizedAlphaTest, RhoInfOutsideUnitIntervalThrowsNamingIt) {
  for (double rho : {-0.1, 1.5, std::nan("")}) {
    IntegratorOptions o;
    o.formulation = Formulation::kIndex3;
    o.rho_inf = rho;
    try {
      MakeIntegrator("generalized_alpha", o);
      ADD_FAILURE() << "rho_inf = " << rho << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rho_inf"), std::string::npos) << e.what();
    }
  }
}

// Error at t_end on the rod problem (rheonomic constraint, spring) with a step sequence that
// alternates h and 2h (ratio 2 every step), for four halvings of h starting from
// coarse_step / 2^k0.
double VariableStepSlope(Formulation f, bool correction,
                         double rho_inf = IntegratorOptions().rho_inf, int k0 = 0) {
  const auto p = MakeProblem("rod");
  std::vector<double> hs, errors;
  for (int k = k0; k < k0 + 4; ++k) {
    const double h = p->coarse_step() / std::pow(2.0, k);
    IntegratorOptions o;
    o.formulation = f;
    o.rho_inf = rho_inf;
    o.adaptive = false;
    o.project = false;
    o.h_init = 10.0 * p->t_end();  // each Step lands on the t_limit given below
    GeneralizedAlpha integrator(o);
    integrator.set_variable_step_correction(correction);
    Eigen::VectorXd q, v;
    p->Exact(0.0, &q, &v);
    integrator.Reset(p->system(), p->rows(), 0.0, q, v);
    double t = 0.0;
    int n = 0;
    while (t < p->t_end() - 1e-12) {
      t = std::min(p->t_end(), t + (n++ % 2 == 0 ? h : 2.0 * h));
      EXPECT_EQ(integrator.Step(t), StepStatus::kAccepted);
    }
    Eigen::VectorXd q_exact, v_exact;
    p->Exact(integrator.t(), &q_exact, &v_exact);
    hs.push_back(h);
    errors.push_back(std::max(PositionError(integrator.q(), q_exact),
                              (integrator.v() - v_exact).lpNorm<Eigen::Infinity>()));
  }
  const double slope = LogLogSlope(hs, errors);
  std::printf("  %s rho_inf %.2f correction %s: errors %.3e .. %.3e, slope %.3f\n",
              std::string(ToString(f)).c_str(), rho_inf, correction ? "on" : "off", errors.front(),
              errors.back(), slope);
  return slope;
}

TEST(GeneralizedAlphaTest, SecondOrderWithVariableSteps) {
  for (Formulation f : {Formulation::kIndex2, Formulation::kStabilizedIndex2}) {
    // Margin 0.3 as in the generic order test (tests/integrators/integrator_table_test.cc).
    EXPECT_NEAR(VariableStepSlope(f, true), 2.0, 0.3) << ToString(f);
  }
}

// Index 3 with steps alternating h, 2h. Before the ṽ_n shift of the header (issue 5) this gave
// O(1) errors and slope 0.95 at ρ∞ = 0.9: in the constrained directions v carries the steady
// offset c₂ h² q⃛, a change of h leaves an O(h³) position defect, i.e. O(h) errors in a and v̇,
// and the h, 2h, h, … sequence forces the a/v̇ recursions (eigenvalues near −ρ∞) at resonance
// (amplification about 1/(1 − ρ∞)²); the rotating constraint normal of the rod feeds that into
// the free direction. Without the shifts the slope stays below 1.5 (measured 0.91 at ρ∞ = 0.9).
TEST(GeneralizedAlphaTest, Index3SecondOrderWithVariableSteps) {
  for (double rho_inf : {0.9, 0.5, 0.0}) {
    // Margin 0.3 as in the generic order test.
    EXPECT_NEAR(VariableStepSlope(Formulation::kIndex3, true, rho_inf), 2.0, 0.3) << rho_inf;
  }
  EXPECT_LT(VariableStepSlope(Formulation::kIndex3, false), 1.5);
}

// Index 3 restarted with tiny steps (as after an event: h ≈ 1e-7) and tight tolerances from a
// state at rest: the constraint rows g/β'' with β'' = O(h²) turn the round-off of g (≈ ε‖q‖)
// into velocity increments ≈ ε‖q‖/h ≈ 1e-9, above the Newton test for atol = 1e-10 when v = 0,
// and the iteration never converges (issue 5: ball_stack and rocking_block stopped with a Newton
// failure once their contacts had closed). Round-off values of g must be treated as 0.
TEST(GeneralizedAlphaTest, Index3ConvergesAtTinyStepsFromRest) {
  const auto p = MakeProblem("circle");  // no applied force: at rest it stays at rest
  Eigen::VectorXd q0, v0;
  p->Exact(0.0, &q0, &v0);
  const double R = q0.norm();
  int rounded = 0;  // starting points whose g is not exactly 0 in floating point
  for (double phi = 0.1; phi < 6.2; phi += 0.37) {
    const Eigen::VectorXd q = R * Eigen::Vector2d(std::cos(phi), std::sin(phi));
    const Eigen::VectorXd v = Eigen::VectorXd::Zero(2);
    if (test_problems::PositionViolation(p->system(), p->rows(), 0.0, q) > 0) ++rounded;
    for (double h0 : {1e-7, 1e-6}) {
      IntegratorOptions o;
      o.formulation = Formulation::kIndex3;
      o.rtol = 1e-8;
      o.atol = 1e-10;
      o.h_init = h0;
      GeneralizedAlpha integrator(o);
      integrator.Reset(p->system(), p->rows(), 0.0, q, v);
      for (int k = 0; k < 5; ++k) {
        ASSERT_EQ(integrator.Step(p->t_end()), StepStatus::kAccepted)
            << "phi = " << phi << " h0 = " << h0 << " step " << k;
      }
      // At rest: v stays at the round-off level ε‖q‖/h0 at most (not asserted tighter).
      EXPECT_LT(integrator.v().lpNorm<Eigen::Infinity>(), 1e-8) << "phi = " << phi;
    }
  }
  EXPECT_GT(rounded, 0);  // the test must exercise nonzero round-off of g
}

TEST(GeneralizedAlphaTest, IterationMatrixIsReusedAcrossSteps) {
  const auto p = MakeProblem("rod");
  IntegratorOptions o;
  o.formulation = Formulation::kIndex3;
  o.rtol = o.atol = 1e-6;
  GeneralizedAlpha integrator(o);
  Eigen::VectorXd q, v;
  p->Exact(0.0, &q, &v);
  integrator.Reset(p->system(), p->rows(), 0.0, q, v);
  while (integrator.t() < p->t_end()) {
    ASSERT_EQ(integrator.Step(p->t_end()), StepStatus::kAccepted);
  }
  const IntegratorStats& s = integrator.stats();
  std::printf(
      "  rod index3 rtol 1e-6: %ld steps, %ld Newton iterations, %ld Jacobians, %ld "
      "factorizations\n",
      s.accepted_steps, s.newton_iterations, s.jacobian_evaluations, s.factorizations);
  EXPECT_GT(s.jacobian_evaluations, 0);
  // Simplified Newton: far fewer Jacobians and factorizations than steps.
  EXPECT_LT(s.jacobian_evaluations, s.accepted_steps / 4);
  EXPECT_LT(s.factorizations, s.accepted_steps);
}

}  // namespace
}  // namespace saltus::integrators
