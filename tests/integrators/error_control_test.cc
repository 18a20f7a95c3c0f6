// What rtol bounds (integrators/integrator.h, ErrorControl). Per unit step, the global error of
// the order-2 generalized-α forms is proportional to rtol; per step (the paper's eq. 30, the
// default) it grows like the number of steps times rtol. Mechanisms with references independent
// of the integrators (test_problems.h: the slider-crank and the double pendulum, 2 s, minimal
// coordinate RK4 references with errors below 1e-12).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "integrators/integrator.h"
#include "tests/integrators/table_cases.h"
#include "tests/integrators/test_problems.h"
#include "tools/cli.h"

namespace saltus::integrators {
namespace {

using table_cases::ResetAtStart;
using table_cases::RunTo;
using test_problems::MakeProblem;
using test_problems::PositionError;
namespace fs = std::filesystem;

// DIR/trajectory.csv as t (in ns) → the position columns (named q*, x, y, theta…: every column
// whose name does not start with v).
std::map<long long, std::vector<double>> ReadRows(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<bool> position;
  std::stringstream header(line);
  for (std::string name; std::getline(header, name, ',');) {
    position.push_back(name != "t" && name.rfind("v", 0) != 0 &&
                       name.find(".v") == std::string::npos);
  }
  std::map<long long, std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::stringstream cells(line);
    std::vector<double> values;
    double t = 0;
    std::size_t k = 0;
    for (std::string cell; std::getline(cells, cell, ','); ++k) {
      if (k == 0) t = std::stod(cell);
      if (k < position.size() && position[k]) values.push_back(std::stod(cell));
    }
    rows[std::llround(t * 1e9)] = values;
  }
  return rows;
}

struct Outcome {
  double error = 0;  // max |q − q_ref| at t_end
  long steps = 0;
};

Outcome Integrate(const std::string& problem, Formulation formulation, ErrorControl control,
                  double rtol, const std::string& integrator_name = "generalized_alpha") {
  const auto p = MakeProblem(problem);
  IntegratorOptions o;
  o.formulation = formulation;
  o.rtol = o.atol = rtol;
  o.error_control = control;
  o.error_time_scale = p->t_end() - p->t0();
  auto integrator = MakeIntegrator(integrator_name, o);
  ResetAtStart(*integrator, *p);
  RunTo(*integrator, p->t_end());
  Eigen::VectorXd q, v;
  p->Exact(p->t_end(), &q, &v);
  return {PositionError(integrator->q(), q), integrator->stats().accepted_steps};
}

// Per unit step at rtol 1e-4 and 1e-5, generalized-α index 2 and GGL on both mechanisms:
//   - error ≤ 20 rtol: the stated factor (measured 0.4–6 rtol; the problem's own amplification
//     of local errors over 2 s is what remains, HNW I, Sec. II.4);
//   - error(1e-4) / error(1e-5) ≥ 5: proportional (10 for an exact proportionality; measured
//     7.6–13). Per step the same runs give ratios 10^(2/3) ≈ 4.6 at best for an order-2 scheme
//     (global ∝ rtol^(2/3)), measured 2.1–3.6, and errors up to 80 rtol at 1e-5: both checks
//     fail there.
TEST(ErrorPerUnitStep, GeneralizedAlphaErrorIsProportionalToRtol) {
  for (const std::string problem : {"slider_crank", "double_pendulum"}) {
    for (Formulation f : {Formulation::kIndex2, Formulation::kStabilizedIndex2}) {
      const Outcome loose = Integrate(problem, f, ErrorControl::kPerUnitStep, 1e-4);
      const Outcome tight = Integrate(problem, f, ErrorControl::kPerUnitStep, 1e-5);
      std::printf("  %s %s: error %.2e (%ld steps) at 1e-4, %.2e (%ld steps) at 1e-5\n",
                  problem.c_str(), std::string(ToString(f)).c_str(), loose.error, loose.steps,
                  tight.error, tight.steps);
      EXPECT_LE(loose.error, 20 * 1e-4) << problem << ' ' << ToString(f);
      EXPECT_LE(tight.error, 20 * 1e-5) << problem << ' ' << ToString(f);
      EXPECT_GE(loose.error / tight.error, 5.0) << problem << ' ' << ToString(f);
    }
  }
}

// Variable-order BDF per unit step at rtol 1e-6 and 1e-8 on both mechanisms (bdf.h, "Error per
// unit step"): on main (ca607b1) the runs at 1e-8 stopped with a step-size underflow at t = 0
// (slider-crank) and after 3 steps (double pendulum): the start's order-1 estimates against the
// round-off floor. Bound 20 rtol as above; measured 0.37–0.47 rtol (with Table 1's newton_tol
// instead of the per-unit Newton tolerance: 0.05–0.21 rtol in 1.6–2.6 times the steps).
TEST(ErrorPerUnitStep, BdfFinishesAndStaysWithinTheFactor) {
  for (const std::string problem : {"slider_crank", "double_pendulum"}) {
    for (const double rtol : {1e-6, 1e-8}) {
      const Outcome run = Integrate(problem, Formulation::kStabilizedIndex2,
                                    ErrorControl::kPerUnitStep, rtol, "bdf");
      std::printf("  %s bdf at %.0e: error %.2e (%.2f rtol, %ld steps)\n", problem.c_str(), rtol,
                  run.error, run.error / rtol, run.steps);
      EXPECT_LE(run.error, 20 * rtol) << problem << ' ' << rtol;
    }
  }
}

// At the level a user sees: `saltus run` of the `joints` set's slider-crank (2 s, the crank
// turning 28 rad) with GGL per unit step at rtol 1e-6 takes ≈ 6 · 10⁴ steps, where Table 1's
// fixed newton_tol = 1e-8 left a Newton error floor of steps · 1e-8: measured 1.3e-3 against
// 9.4e-7 with the tolerance following the step's share of rtol (NewtonTolerance), at t_end. The
// positions at t_end against DOPRI5 at rtol 1e-11 (its own error ≈ 1e-9) within 20 rtol, the
// factor of the test above.
TEST(ErrorPerUnitStep, NewtonToleranceFollowsTheStepsShareThroughTheCli) {
  const fs::path scene = fs::path(SALTUS_EXAMPLES_DIR) / "sets" / "scenes" / "slider_crank.yaml";
  const fs::path scratch =
      fs::temp_directory_path() / ("saltus_error_control_test_" + std::to_string(getpid()));
  const auto run = [&](const std::vector<std::string>& options, const std::string& name) {
    std::vector<std::string> args = {"run", scene.string(), "--out", (scratch / name).string()};
    args.insert(args.end(), options.begin(), options.end());
    std::ostringstream o, e;
    EXPECT_EQ(tools::RunCli(args, o, e), tools::kExitOk) << e.str();
    return ReadRows(scratch / name / "trajectory.csv");
  };
  const auto reference = run({"--rtol", "1e-11", "--atol", "1e-13"}, "reference");
  const auto ggl = run({"--integrator", "generalized_alpha", "--formulation", "ggl", "--rtol",
                        "1e-6", "--atol", "1e-6", "--error-control", "per_unit_step"},
                       "ggl");
  ASSERT_FALSE(ggl.empty());
  ASSERT_FALSE(reference.empty());
  // The last rows: both runs end at t_end = 2 s exactly.
  const auto& [t, row] = *ggl.rbegin();
  const auto& [t_ref, row_ref] = *reference.rbegin();
  EXPECT_EQ(t, t_ref);
  double error = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    error = std::max(error, std::abs(row[i] - row_ref[i]) / (1.0 + std::abs(row_ref[i])));
  }
  std::printf("  slider_crank ggl per unit step at 1e-6: error %.2e at t_end\n", error);
  EXPECT_LE(error, 20 * 1e-6);
  fs::remove_all(scratch);
}

TEST(ErrorPerUnitStep, BadOptionsAreRefused) {
  IntegratorOptions o;
  o.error_time_scale = 0.0;
  EXPECT_THROW(MakeIntegrator("generalized_alpha", o), std::invalid_argument);
  o.error_time_scale = 1.0;
  o.error_control = ErrorControl::kPerUnitStep;
  o.formulation = Formulation::kIndex3;  // generalized_alpha.h, "Error per unit step"
  EXPECT_THROW(MakeIntegrator("generalized_alpha", o), std::invalid_argument);
  o.formulation = Formulation::kStabilizedIndex2;
  EXPECT_NO_THROW(MakeIntegrator("generalized_alpha", o));
  EXPECT_EQ(ParseErrorControl("per_unit_step"), ErrorControl::kPerUnitStep);
  EXPECT_EQ(ParseErrorControl("per_step"), ErrorControl::kPerStep);
  EXPECT_FALSE(ParseErrorControl("unit").has_value());
}

}  // namespace
}  // namespace saltus::integrators
