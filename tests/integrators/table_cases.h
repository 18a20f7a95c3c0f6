// The cases of the integrator table (integrator × formulation) and the fixed-step convergence
// study shared by the generic table tests (integrator_table_test.cc) and the friction-phase
// tests (friction_phases_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "integrators/integrator.h"
#include "tests/integrators/test_problems.h"

namespace saltus::integrators::table_cases {

using test_problems::LogLogSlope;
using test_problems::PositionError;
using test_problems::PositionViolation;
using test_problems::TestProblem;
using test_problems::VelocityViolation;

struct Case {
  std::string integrator;
  Formulation formulation;
};

inline std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const IntegratorEntry& entry : IntegratorTable()) {
    for (Formulation f : entry.formulations) cases.push_back({std::string(entry.name), f});
  }
  return cases;
}

inline std::string CaseName(const Case& c) {
  // gtest parameter names allow only letters, digits and '_': "generalized-alpha" →
  // "generalized_alpha".
  std::string name = c.integrator + "_" + std::string(ToString(c.formulation));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// gtest prints parameters with this (ADL).
inline void PrintTo(const Case& c, std::ostream* os) { *os << CaseName(c); }

inline IntegratorOptions BaseOptions(const Case& c) {
  IntegratorOptions o;
  o.formulation = c.formulation;
  return o;
}

inline IntegratorOptions FixedStepOptions(const Case& c, double h) {
  IntegratorOptions o = BaseOptions(c);
  o.adaptive = false;
  o.h_init = h;
  o.project = false;
  return o;
}

// Starts `integrator` at the problem's exact initial state.
inline void ResetAtStart(Integrator& integrator, const TestProblem& p) {
  Eigen::VectorXd q0, v0;
  p.Exact(p.t0(), &q0, &v0);
  integrator.Reset(p.system(), p.rows(), p.t0(), q0, v0);
}

// Steps to t_end; every step must be accepted. Returns the number of steps.
inline int RunTo(Integrator& integrator, double t_end) {
  int steps = 0;
  while (integrator.t() < t_end) {
    const StepStatus status = integrator.Step(t_end);
    EXPECT_EQ(status, StepStatus::kAccepted) << "at t = " << integrator.t();
    if (status != StepStatus::kAccepted || ++steps > 1000000) break;
  }
  return steps;
}

// Error of (q, v) against the closed form at t (positions through PositionError).
inline double StateError(const TestProblem& p, double t, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& v) {
  Eigen::VectorXd q_exact, v_exact;
  p.Exact(t, &q_exact, &v_exact);
  return std::max(PositionError(q, q_exact), (v - v_exact).lpNorm<Eigen::Infinity>());
}

// Halvings of a fixed-step study for a method of `order`: `halvings` up to order 5; above, 2,
// since each halving divides an order-p error by 2^p and the finest run must stay above the
// round-off floor (≈ 1e-13…1e-12 here): DOP853 (order 8) from errors ≈ 1e-8…1e-5 at
// TestProblem::order_study_step(8) reaches ≈ 1e-13…1e-10 after two.
inline int StudyHalvings(int order, int halvings) { return order > 5 ? 2 : halvings; }
// Two halvings of an order-8 method go from pre-asymptotic errors to the round-off floor, so its
// slopes are looser than the 0.3 margin: measured with DOP853, error slopes 7.4 (slider-crank),
// 7.95–8.2 (circle, rod, rotor, heavy top), 10.1 (double pendulum, whose error drops 1200× then
// 960× per halving: superconvergent pre-asymptotic terms), index-1 drift slopes 6.7 (rod
// position) to 10.3. The lower side still separates order 8 from DOPRI5's 5 and from 6.
inline double StudyDeficitMargin(int order) { return order > 5 ? 1.0 : 0.0; }
inline double StudyExcessMargin(int order) { return order > 5 ? 2.5 : 0.0; }

// Fixed-step convergence study: `halvings` halvings of the step from `H`; the least-squares
// slope of log(error at t_end) against log(h) must be the integrator's order within 0.3. The
// margin covers the O(h) change of the leading error coefficient across the steps (the fits give
// 4.9–5.1 for dopri5) while still separating order p from p ± 1. Then the constraint drift the
// formulation promises.
// `excess_margin` widens the upper side only (a slope above the order: pre-asymptotic
// higher-order terms; the caller says why).
inline void CheckConvergenceOrderAndDrift(const Case& c, const TestProblem& problem, double H,
                                          int halvings, double excess_margin = 0.0) {
  const TestProblem* p = &problem;
  std::vector<double> hs, errors, g_drift, v_drift;
  int order = 0;
  for (int k = 0; k <= halvings; ++k) {
    const double h = H / std::pow(2.0, k);
    auto integrator = MakeIntegrator(c.integrator, FixedStepOptions(c, h));
    order = integrator->order();
    ResetAtStart(*integrator, *p);
    const int steps = RunTo(*integrator, p->t_end());
    EXPECT_EQ(steps, static_cast<int>(std::lround((p->t_end() - p->t0()) / h)));
    hs.push_back(h);
    errors.push_back(StateError(*p, integrator->t(), integrator->q(), integrator->v()));
    g_drift.push_back(PositionViolation(p->system(), p->rows(), integrator->t(), integrator->q()));
    v_drift.push_back(VelocityViolation(p->system(), p->rows(), integrator->t(), integrator->q(),
                                        integrator->v()));
    std::printf("  %s %s h = %-9.4g error = %.3e  |g| = %.3e  |Gv + g_t| = %.3e\n",
                CaseName(c).c_str(), p->name().c_str(), h, errors.back(), g_drift.back(),
                v_drift.back());
  }
  const double slope = LogLogSlope(hs, errors);
  std::printf("  %s %s: slope %.3f (order %d)\n", CaseName(c).c_str(), p->name().c_str(), slope,
              order);
  EXPECT_GE(slope, order - 0.3 - StudyDeficitMargin(order));
  EXPECT_LE(slope, order + 0.3 + std::max(excess_margin, StudyExcessMargin(order)));
  // The reference must be far more accurate than the finest run: a relative perturbation r of
  // the last of six equally spaced points moves the least-squares slope by 2.5 r / 17.5 / ln 2
  // ≈ 0.21 r, so 5e-2 costs at most 0.01 of the 0.3 margin.
  EXPECT_LE(p->ReferenceErrorEstimate(p->t_end()), 5e-2 * errors.back());

  if (p->rows().empty()) return;
  // Constraint drift the formulation promises.
  //  index 1: g and G v + g_t are only enforced through G v̇ + γ = 0, so they drift with the
  //           global error: they must shrink at least like h^(order − 0.5) (same fit margin
  //           argument as above, widened because a drift is a projection of the error and may
  //           lose the leading term), unless they are already at round-off (1e-12).
  //  index 2: G v + g_t = 0 to the Newton tolerance; g drifts like index 1.
  //  index 3 and GGL: g = 0 to the Newton tolerance (and G v + g_t = 0 for GGL).
  const double newton_tol = IntegratorOptions().newton_tol;
  auto expect_rate = [&](const std::vector<double>& drift, const char* what) {
    if (drift.back() < 1e-12) return;  // round-off: nothing to fit
    const double rate = LogLogSlope(hs, drift);
    std::printf("  %s %s: %s drift slope %.3f\n", CaseName(c).c_str(), p->name().c_str(), what,
                rate);
    EXPECT_GE(rate, order - 0.5 - StudyDeficitMargin(order)) << what;
  };
  auto expect_bound = [&](const std::vector<double>& drift, const char* what) {
    // 10 × the Newton tolerance: the last Newton update is below it and the constraint is
    // re-evaluated once more at a slightly different point.
    for (double d : drift) EXPECT_LE(d, 10 * newton_tol) << what;
  };
  switch (c.formulation) {
    case Formulation::kIndex1:
      expect_rate(g_drift, "position");
      expect_rate(v_drift, "velocity");
      break;
    case Formulation::kIndex2:
      expect_rate(g_drift, "position");
      expect_bound(v_drift, "velocity");
      break;
    case Formulation::kIndex3:
      expect_bound(g_drift, "position");
      break;
    case Formulation::kStabilizedIndex2:
      expect_bound(g_drift, "position");
      expect_bound(v_drift, "velocity");
      break;
  }
}

}  // namespace saltus::integrators::table_cases
