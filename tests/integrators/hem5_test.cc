// Tests of HEM5 (integrators/hem5.h) beyond the generic table tests: the coefficients, the
// velocity constraint of the dense output, position projection with counts, redundant
// constraints (a parallelogram four-bar with a redundant fifth bar; a block resting flat on four
// colinear contact points), contacts closing inside a step, a rank change that no step can
// resolve, every example through the CLI against DOPRI5, and spatial (quaternion) bodies: order
// and dense-output order through dexp⁻¹, Bricard energy drift.
#include "integrators/hem5.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/assembly.h"
#include "engine/lagrangian_system.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"
#include "tests/engine/spatial_mechanisms.h"
#include "tests/integrators/event_times.h"
#include "tests/integrators/rank_drop_scenario.h"
#include "tests/integrators/test_problems.h"
#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::integrators {
namespace {

namespace fs = std::filesystem;
using test_outputs::ImpactTimes;
namespace tab = hem5_tableau;
using test_problems::MakeProblem;
using test_problems::PositionViolation;
using test_problems::VelocityViolation;

// ---- Coefficients --------------------------------------------------------------------------

// Row sums give c (the printed 16-digit coefficients: 1e-15, except the last internal row whose
// entries up to 3.6 sum to 1 within 2e-13 in hem5.f); b satisfies the quadrature conditions of
// order 5 (Σ b c^k = 1/(k+1), k ≤ 4) to round-off; the dense-output weights sum to b at θ = 1
// (printed to 13–14 digits: 1e-13).
TEST(Hem5Tableau, ConsistencyAndQuadratureConditions) {
  for (int i = 1; i <= tab::kStages; ++i) {
    double sum = 0;
    for (int j = 0; j < tab::kStages; ++j) sum += tab::kA[i][j];
    EXPECT_NEAR(sum, tab::kC[i], i == 7 ? 2e-13 : 1e-15) << "row " << i;
  }
  for (int k = 0; k <= 4; ++k) {
    double sum = 0;
    for (int j = 0; j < tab::kStages; ++j)
      sum += tab::kA[tab::kStages][j] * std::pow(tab::kC[j], k);
    EXPECT_NEAR(sum, 1.0 / (k + 1), 1e-15) << "k = " << k;
  }
  for (int c = 0; c < tab::kDenseStages; ++c) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += tab::kD[k][c];
    const double b = c < 5 ? tab::kA[tab::kStages][3 + c] : 0.0;
    EXPECT_NEAR(sum, b, 1e-13) << "dense column " << c;
  }
  EXPECT_NEAR(tab::kA10_6 + tab::kA10_7 + tab::kA10_9, tab::kC10, 1e-15);
}

IntegratorOptions Index2(double rtol) {
  IntegratorOptions o;
  o.formulation = Formulation::kIndex2;
  o.rtol = rtol;
  o.atol = rtol;
  return o;
}

// ---- Dense output and projection on the closed-form problems ---------------------------------

// The dense velocity is made to satisfy G(q(θ)) v(θ) + ∂g/∂t = 0 by its own stage solve, so the
// velocity constraint holds at interior points to the stage tolerance (newton_tol = 1e-8 scaled
// by max(1, ‖G‖‖v‖), here ≤ 10): 1e-12 is far below that and still 100× round-off. Positions are
// not constrained: their violation is the interpolant's error, ≤ rtol-sized.
TEST(Hem5, DenseVelocitySatisfiesTheVelocityConstraint) {
  for (const std::string name : {"circle", "rod"}) {
    const auto p = MakeProblem(name);
    Hem5 hem5(Index2(1e-6));
    Eigen::VectorXd q0, v0, q, v;
    p->Exact(p->t0(), &q0, &v0);
    hem5.Reset(p->system(), p->rows(), p->t0(), q0, v0);
    double worst_v = 0, worst_g = 0;
    while (hem5.t() < p->t_end()) {
      ASSERT_EQ(hem5.Step(p->t_end()), StepStatus::kAccepted);
      for (double theta : {0.13, 0.5, 0.77}) {
        const double s = hem5.t_previous() + theta * (hem5.t() - hem5.t_previous());
        hem5.Interpolate(s, &q, &v);
        worst_v = std::max(worst_v, VelocityViolation(p->system(), p->rows(), s, q, v));
        worst_g = std::max(worst_g, PositionViolation(p->system(), p->rows(), s, q));
      }
    }
    std::printf("  %s: dense output max |Gv + g_t| = %.2e, max |g| = %.2e, %ld solves\n",
                name.c_str(), worst_v, worst_g, hem5.interpolation_solves());
    EXPECT_LE(worst_v, 1e-12) << name;
    EXPECT_LE(worst_g, 1e-5) << name;  // rtol-sized
    EXPECT_GT(hem5.interpolation_solves(), 0);
  }
}

// Lazy dense output (hem5.h): stage 10 computed only for steps interpolated strictly inside.
// One run interpolates inside every step (stage 10 with every step, as before the change), one
// only inside the last: the step ends agree to the bit, so do the last step's interpolants, and
// the second run made one stage solve fewer per step not interpolated inside (8 per attempted
// step, +1 for a step interpolated inside, the step ends need none).
TEST(Hem5, LazyDenseOutputChangesNeitherTheStepsNorTheInterpolant) {
  for (const std::string name : {"circle", "rod"}) {
    const auto p = MakeProblem(name);
    Hem5 eager(Index2(1e-7)), lazy(Index2(1e-7));
    Eigen::VectorXd q0, v0, qe, ve, ql, vl;
    p->Exact(p->t0(), &q0, &v0);
    eager.Reset(p->system(), p->rows(), p->t0(), q0, v0);
    lazy.Reset(p->system(), p->rows(), p->t0(), q0, v0);
    long steps = 0;
    while (eager.t() < p->t_end()) {
      ASSERT_EQ(eager.Step(p->t_end()), StepStatus::kAccepted);
      ASSERT_EQ(lazy.Step(p->t_end()), StepStatus::kAccepted);
      ++steps;
      const double t0 = eager.t_previous(), t1 = eager.t();
      eager.Interpolate(t0 + 0.4 * (t1 - t0), &qe, &ve);
      lazy.Interpolate(t0, &ql, &vl);  // the ends: no stage
      lazy.Interpolate(t1, &ql, &vl);
      ASSERT_EQ(lazy.t(), t1) << name;
      ASSERT_TRUE(lazy.q() == eager.q() && lazy.v() == eager.v()) << name << " at t = " << t1;
    }
    for (const double theta : {0.0, 0.1, 0.5, 0.9, 1.0}) {
      const double s = eager.t_previous() + theta * (eager.t() - eager.t_previous());
      eager.Interpolate(s, &qe, &ve);
      lazy.Interpolate(s, &ql, &vl);
      EXPECT_TRUE(qe == ql && ve == vl) << name << " theta = " << theta;
    }
    EXPECT_GT(steps, 10) << name;
    EXPECT_EQ(eager.stats().accepted_steps, lazy.stats().accepted_steps) << name;
    EXPECT_EQ(eager.stats().rhs_evaluations - lazy.stats().rhs_evaluations, steps - 1) << name;
    EXPECT_EQ(eager.stats().rhs_evaluations,
              2 + 8 * (eager.stats().accepted_steps + eager.stats().rejected_steps) + steps)
        << name;
  }
}

// Velocity constraint at round-off over the whole run; position violation with and without
// projection (eq. 35). With projection_tol below the natural drift, projections happen, are
// counted, and keep ‖g‖∞ ≤ projection_tol at every step end.
TEST(Hem5, ProjectionIsCountedAndBoundsThePositionViolation) {
  const auto p = MakeProblem("circle");
  auto run = [&](bool project, long* projections) {
    IntegratorOptions o = Index2(1e-3);
    o.project = project;
    o.projection_tol = 1e-9;
    Hem5 hem5(o);
    Eigen::VectorXd q0, v0;
    p->Exact(p->t0(), &q0, &v0);
    hem5.Reset(p->system(), p->rows(), p->t0(), q0, v0);
    double max_g = 0, max_gv = 0;
    while (hem5.t() < p->t_end()) {
      EXPECT_EQ(hem5.Step(p->t_end()), StepStatus::kAccepted);
      max_g = std::max(max_g, PositionViolation(p->system(), p->rows(), hem5.t(), hem5.q()));
      max_gv =
          std::max(max_gv, VelocityViolation(p->system(), p->rows(), hem5.t(), hem5.q(), hem5.v()));
    }
    *projections = hem5.stats().position_projections;
    EXPECT_EQ(hem5.stats().velocity_projections, hem5.stats().position_projections);
    // Before projection, the largest violation the integrator saw.
    std::printf(
        "  project = %d: max |g| = %.2e (before projection %.2e), max |Gv| = %.2e, "
        "%ld projections, %ld steps\n",
        project, max_g, hem5.max_position_violation(), max_gv, *projections,
        hem5.stats().accepted_steps);
    // The stage solves meet the velocity constraint to round-off (16 ε · ‖G‖‖v‖ ≈ 1e-14).
    EXPECT_LE(max_gv, 1e-13);
    return max_g;
  };
  long with = 0, without = 0;
  const double g_with = run(true, &with);
  const double g_without = run(false, &without);
  EXPECT_GT(with, 0);
  EXPECT_EQ(without, 0);
  EXPECT_LE(g_with, 1e-9);
  EXPECT_GT(g_without, 1e-9);  // so that the projection had something to do
}

// ---- A rank change that no step size resolves --------------------------------------------------

// The particle whose two rows are dependent only at the restart (rank_drop_scenario.h).
TEST(Hem5, RankDropAtTheRestartIsWatchedAndStopsNamingTheRow) {
  IntegratorOptions o = Index2(1e-6);
  o.h_init = 1e-2;
  o.h_min = 1e-6;
  Hem5 hem5(o);
  test_problems::ExpectRankDropAtTheRestartStopsNamingTheRow(hem5, o);
}

// ---- Redundant constraints through the event loop ---------------------------------------------

struct RunOutcome {
  events::RunResult result;
  events::SimulationStats stats;
  std::vector<events::Event> events;
  Eigen::VectorXd q, v;
};

class EventRecorder : public events::Observer {
 public:
  void OnEvent(const events::Event& e, const Eigen::VectorXd&, const Eigen::VectorXd&,
               const Eigen::VectorXd&) override {
    events.push_back(e);
  }
  std::vector<events::Event> events;
};

RunOutcome RunScene(const std::string& yaml, const std::string& integrator, Formulation formulation,
                    double rtol) {
  const tools::Scene scene = tools::ParseScene(yaml, "<test>");
  const auto system = tools::BuildSystem(scene);
  events::SimulationOptions options = scene.options;
  options.integrator = integrator;
  options.integrator_options.formulation = formulation;
  options.integrator_options.rtol = rtol;
  options.integrator_options.atol = rtol;
  events::Simulation simulation(system, options);
  EventRecorder recorder;
  simulation.AddObserver(&recorder);
  Eigen::VectorXd q0(3 * static_cast<int>(scene.bodies.size()));
  Eigen::VectorXd v0(q0.size());
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    q0.segment<3>(3 * static_cast<int>(i)) = scene.bodies[i].q0;
    v0.segment<3>(3 * static_cast<int>(i)) = scene.bodies[i].v0;
  }
  simulation.SetState(0.0, q0, v0);
  RunOutcome out;
  out.result = simulation.AdvanceTo(scene.t_end);
  out.stats = simulation.stats();
  out.events = recorder.events;
  out.q = simulation.q();
  out.v = simulation.v();
  return out;
}

// Parallelogram four-bar with a redundant fifth bar (cf. the IFToMM benchmark A02): three equal
// parallel cranks (L = 1 m, 1 kg, pivots at x = 0, 1, 2 on the ground) carry a coupler (2 m, 1 kg)
// that translates on a circle. 12 coordinates, 6 revolute joints = 12 rows, mobility 1: G has
// rank 11 on the manifold and one row is redundant everywhere. Started hanging with crank rate
// 2 rad/s under gravity, the mechanism swings as a compound pendulum (amplitude ≈ 33°, so it never
// reaches the horizontal change point where the parallelogram could fold and G loses more rank).
// The run must finish, keep the velocity constraints and the energy (no applied work; HEM5 at rtol
// 1e-8 loses ~rtol·E).
constexpr char kParallelogram[] = R"(
scene: parallelogram_five_bar
gravity: [0, -9.81]
bodies:
  - {name: crank1, mass: 1, inertia: 0.083333333333333333, position: [0, -0.5, -1.5707963267948966], velocity: [1, 0, 2]}
  - {name: crank2, mass: 1, inertia: 0.083333333333333333, position: [2, -0.5, -1.5707963267948966], velocity: [1, 0, 2]}
  - {name: bar5, mass: 1, inertia: 0.083333333333333333, position: [1, -0.5, -1.5707963267948966], velocity: [1, 0, 2]}
  - {name: coupler, mass: 1, inertia: 0.33333333333333333, position: [1, -1, 0], velocity: [2, 0, 0]}
joints:
  - {name: pivot1, type: revolute, body_a: ground, body_b: crank1, point_a: [0, 0], point_b: [-0.5, 0]}
  - {name: pivot2, type: revolute, body_a: ground, body_b: crank2, point_a: [2, 0], point_b: [-0.5, 0]}
  - {name: pivot5, type: revolute, body_a: ground, body_b: bar5, point_a: [1, 0], point_b: [-0.5, 0]}
  - {name: pin1, type: revolute, body_a: crank1, body_b: coupler, point_a: [0.5, 0], point_b: [-1, 0]}
  - {name: pin2, type: revolute, body_a: crank2, body_b: coupler, point_a: [0.5, 0], point_b: [1, 0]}
  - {name: pin5, type: revolute, body_a: bar5, body_b: coupler, point_a: [0.5, 0], point_b: [0, 0]}
simulation:
  t_end: 3
  output_step: 0.01
)";

TEST(Hem5Redundant, ParallelogramWithRedundantFifthBar) {
  const tools::Scene scene = tools::ParseScene(kParallelogram, "<test>");
  const auto system = tools::BuildSystem(scene);
  std::vector<int> rows(static_cast<std::size_t>(system->num_constraints()));
  for (int i = 0; i < system->num_constraints(); ++i) rows[static_cast<std::size_t>(i)] = i;
  Eigen::VectorXd q0(12), v0(12);
  for (int i = 0; i < 4; ++i) {
    q0.segment<3>(3 * i) = scene.bodies[static_cast<std::size_t>(i)].q0;
    v0.segment<3>(3 * i) = scene.bodies[static_cast<std::size_t>(i)].v0;
  }
  Eigen::MatrixXd G;
  system->ConstraintJacobian(0.0, q0, rows, &G);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(G);
  qr.setThreshold(1e-10);
  ASSERT_EQ(qr.rank(), 11);  // one redundant row: the case the test is about
  ASSERT_LE(VelocityViolation(*system, rows, 0.0, q0, v0), 1e-14);

  const double E0 = system->KineticEnergy(q0, v0) + system->PotentialEnergy(0.0, q0);
  for (bool project : {false, true}) {
    IntegratorOptions o = Index2(1e-8);
    o.project = project;
    o.projection_tol = 1e-10;
    Hem5 hem5(o);
    hem5.Reset(*system, rows, 0.0, q0, v0);
    double max_gv = 0, max_g = 0, max_dE = 0;
    while (hem5.t() < scene.t_end) {
      const StepStatus st = hem5.Step(scene.t_end);
      ASSERT_EQ(st, StepStatus::kAccepted) << "t = " << hem5.t() << ": " << hem5.failure_message();
      max_gv = std::max(max_gv, VelocityViolation(*system, rows, hem5.t(), hem5.q(), hem5.v()));
      max_g = std::max(max_g, PositionViolation(*system, rows, hem5.t(), hem5.q()));
      const double E =
          system->KineticEnergy(hem5.q(), hem5.v()) + system->PotentialEnergy(hem5.t(), hem5.q());
      max_dE = std::max(max_dE, std::abs(E - E0));
    }
    std::printf(
        "  parallelogram, project = %d: %ld steps, %ld rejected, max |g| = %.2e, "
        "max |Gv| = %.2e, max |dE| = %.2e J (E0 = %.3f), %ld projections\n",
        project, hem5.stats().accepted_steps, hem5.stats().rejected_steps, max_g, max_gv, max_dE,
        E0, hem5.stats().position_projections);
    // Velocity constraints: stage tolerance (newton_tol 1e-8 × max(1, ‖G‖‖v‖) ≈ 1e-8 × 4).
    EXPECT_LE(max_gv, 1e-7);
    // Energy: the global error at rtol = 1e-8 times the energy scale (≈ 40 J), with a factor
    // 100 for the accumulation over ≈ 1 swing period per second: 1e-8 · 40 · 100 = 4e-5.
    EXPECT_LE(max_dE, 4e-5);
    if (project) {
      EXPECT_LE(max_g, 1e-10);
    }
  }
}

// A block (0.4 × 0.2 m, 1 kg) with four contact points on its bottom edge, dropped flat from
// 5 cm with a horizontal velocity of 0.3 m/s (frictionless): every impact is simultaneous on
// four rows of rank 2 (all rows are (0, 1, x_k) in (x, y, θ)), the bounces accumulate, and the
// block then slides resting on all four contacts, the redundant active set A = 4 rows of rank 2
// held by the half-explicit stage solves. It must slide to t_end at rest height with the free
// horizontal motion x = x₀ + 0.3 t (no horizontal force; the impacts are vertical).
constexpr char kFlatBlock[] = R"(
scene: flat_block
gravity: [0, -9.81]
bodies:
  - {name: block, mass: 1, inertia: 0.0041666666666666667, position: [0, 0.15, 0], velocity: [0.3, 0, 0]}
contacts:
  - {name: c1, type: point_line, body_a: ground, body_b: block, normal_a: [0, 1], point_b: [-0.2, -0.1]}
  - {name: c2, type: point_line, body_a: ground, body_b: block, normal_a: [0, 1], point_b: [-0.1, -0.1]}
  - {name: c3, type: point_line, body_a: ground, body_b: block, normal_a: [0, 1], point_b: [0.1, -0.1]}
  - {name: c4, type: point_line, body_a: ground, body_b: block, normal_a: [0, 1], point_b: [0.2, -0.1]}
simulation:
  t_end: 1.5
  restitution: 0.5
  output_step: 0.01
)";

// Run with HEM5 and with PHEM56 (the same stage solves, HalfExplicitStage).
TEST(Hem5Redundant, BlockRestingFlatOnFourColinearContacts) {
  for (const char* integrator : {"hem5", "phem56"}) {
    SCOPED_TRACE(integrator);
    const RunOutcome r = RunScene(kFlatBlock, integrator, Formulation::kIndex2, 1e-8);
    ASSERT_EQ(r.result.status, events::RunStatus::kFinished) << r.result.message;
    long impacts = r.stats.events[static_cast<int>(events::EventKind::kImpact)];
    std::printf(
        "  flat block, %s: %ld impacts, %ld steps, %ld rejected, max |g_A| = %.2e, max |G_A v| "
        "= %.2e, final q = (%.9f, %.9f, %.2e)\n",
        integrator, impacts, r.stats.integrator.accepted_steps, r.stats.integrator.rejected_steps,
        r.stats.max_position_violation, r.stats.max_velocity_violation, r.q(0), r.q(1), r.q(2));
    EXPECT_GT(impacts, 3);
    // Resting: height 0.1 (half the block) and no rotation, to the closing thresholds (τ₀ = 1e-9 m,
    // projections to round-off): 1e-9.
    EXPECT_NEAR(r.q(1), 0.1, 1e-9);
    EXPECT_NEAR(r.q(2), 0.0, 1e-9);
    // Free horizontal motion: x = 0.3 t at t = 1.5, to the integration tolerance (exact for any RK
    // method: the horizontal acceleration is identically 0): 1e-9.
    EXPECT_NEAR(r.q(0), 0.45, 1e-9);
    EXPECT_NEAR(r.v(0), 0.3, 1e-9);
    EXPECT_LE(r.stats.max_velocity_violation, 1e-7);
  }
}

// Rocking: the same block released at rest tilted by 0.1 rad on one corner's side with two corner
// contacts: the other corner closes inside a step (an impact located on HEM5's dense output), the
// block rocks with decreasing amplitude. The impact times must agree with DOPRI5's at rtol = 1e-10
// to the event-location accuracy of both runs: 1e-6 s (errors of rtol-sized positions divided by
// the approach velocity ≈ 0.1 m/s, amplified by the accumulation of earlier impacts).
constexpr char kRockingBlock[] = R"(
scene: rocking
gravity: [0, -9.81]
bodies:
  - {name: block, mass: 1, inertia: 0.0041666666666666667, position: [0, 0.17, 0.1]}
contacts:
  - {name: left_corner, type: point_line, body_a: ground, body_b: block, normal_a: [0, 1], point_b: [-0.2, -0.1]}
  - {name: right_corner, type: point_line, body_a: ground, body_b: block, normal_a: [0, 1], point_b: [0.2, -0.1]}
simulation:
  t_end: 1.0
  restitution: 0.5
)";

// HEM5 and PHEM56 (on PHEM56's order-4 Hermite dense output).
TEST(Hem5Events, ContactClosingInsideAStepMatchesDopri5) {
  const RunOutcome d = RunScene(kRockingBlock, "dopri5", Formulation::kIndex1, 1e-10);
  ASSERT_EQ(d.result.status, events::RunStatus::kFinished) << d.result.message;
  for (const char* integrator : {"hem5", "phem56"}) {
    SCOPED_TRACE(integrator);
    const RunOutcome h = RunScene(kRockingBlock, integrator, Formulation::kIndex2, 1e-10);
    ASSERT_EQ(h.result.status, events::RunStatus::kFinished) << h.result.message;
    std::vector<double> th, td;
    for (const auto& e : h.events)
      if (e.kind == events::EventKind::kImpact) th.push_back(e.t);
    for (const auto& e : d.events)
      if (e.kind == events::EventKind::kImpact) td.push_back(e.t);
    ASSERT_GE(td.size(), 3u);
    const std::size_t n = std::min<std::size_t>({th.size(), td.size(), 6});
    ASSERT_GE(th.size(), 3u);
    for (std::size_t i = 0; i < n; ++i) {
      std::printf("  impact %zu: %s %.12f  dopri5 %.12f\n", i, integrator, th[i], td[i]);
      EXPECT_NEAR(th[i], td[i], 1e-6) << "impact " << i;
    }
  }
}

// ---- Every example through the CLI, against DOPRI5 ---------------------------------------------

// Each example runs with `--integrator hem5` and `--integrator phem56` (index2) and with DOPRI5
// (index1) at the same
// tolerance (rtol = 1e-8, atol = 1e-10); the first impact times agree within 1e-5 s: the
// requested tolerance (1e-8 relative on positions) turned into time by the approach velocities
// (≥ 0.1 m/s) and the accumulation over a few earlier impacts, with a margin of 10. Only the
// first 5 impacts are compared: later ones of an accumulation (bouncing ball near t∞) are
// ill-conditioned for both integrators alike.
TEST(HalfExplicitExamples, ImpactTimesMatchDopri5ThroughTheCli) {
  const fs::path examples = SALTUS_EXAMPLES_DIR;
  const fs::path scratch =
      fs::temp_directory_path() / ("saltus_hem5_test_" + std::to_string(getpid()));
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(examples)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    std::vector<double> times[3];
    int k = 0;
    for (const char* integrator : {"dopri5", "hem5", "phem56"}) {
      const fs::path out = scratch / (name + "_" + integrator);
      const std::vector<std::string> args = {
          "run",           entry.path().string(),
          "--integrator",  integrator,
          "--formulation", std::string(integrator) == "dopri5" ? "index1" : "index2",
          "--rtol",        "1e-8",
          "--atol",        "1e-10",
          "--out",         out.string()};
      std::ostringstream o, e;
      EXPECT_EQ(tools::RunCli(args, o, e), tools::kExitOk) << integrator << ": " << e.str();
      times[k++] = ImpactTimes(out / "events.csv");
    }
    ASSERT_FALSE(times[0].empty());
    for (int j : {1, 2}) {
      ASSERT_FALSE(times[j].empty());
      const std::size_t n = std::min<std::size_t>({times[0].size(), times[j].size(), 5});
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_NEAR(times[j][i], times[0][i], 1e-5)
            << (j == 1 ? "hem5" : "phem56") << " impact " << i;
      }
      std::printf("  %s: %zu / %zu impacts (%s / dopri5), first %zu agree; t1 = %.10f / %.10f\n",
                  name.c_str(), times[j].size(), times[0].size(), j == 1 ? "hem5" : "phem56", n,
                  times[j][0], times[0][0]);
    }
    ++compared;
  }
  fs::remove_all(scratch);
  EXPECT_GE(compared, 4);
}

// ---- Spatial (quaternion) bodies: order through dexp⁻¹, Bricard ------------------------------

// The same model with the pre-Lie-group position stages (K_j = V_j): shows what dexp⁻¹ buys.
class IdentityDexpSystem final : public engine::SpatialMultibodySystem {
 public:
  using engine::SpatialMultibodySystem::SpatialMultibodySystem;
  void DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
               Eigen::VectorXd* theta_dot) const override {
    (void)theta;
    *theta_dot = v;
  }
};

std::vector<int> AllJointRows(const engine::SpatialMultibodySystem& s) {
  std::vector<int> rows(static_cast<std::size_t>(s.num_joint_rows()));
  for (int r = 0; r < s.num_joint_rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
  return rows;
}

// Mean observed order of the error in (q, v) at t = 1 under constant steps 1/8 … 1/64, against
// a 1/2048 run (its error is (1/32)⁵ ≈ 3e-8 of the 1/64 one for order 5).
double ConstantStepOrder(const engine::SpatialMultibodySystem& system, const char* label) {
  const std::vector<int> rows = AllJointRows(system);
  const Eigen::VectorXd q0 = system.model().InitialPositions();
  const Eigen::VectorXd v0 = system.model().InitialVelocities();
  auto solve = [&](double h) {
    IntegratorOptions options = Index2(1e-8);
    options.adaptive = false;
    options.h_init = h;
    options.project = false;
    Hem5 hem5(options);
    hem5.Reset(system, rows, 0.0, q0, v0);
    while (hem5.t() < 1.0 - 1e-12) {
      EXPECT_EQ(hem5.Step(1.0), StepStatus::kAccepted) << label << " " << hem5.failure_message();
    }
    Eigen::VectorXd y(q0.size() + v0.size());
    y << hem5.q(), hem5.v();
    return y;
  };
  const Eigen::VectorXd reference = solve(1.0 / 2048);
  std::vector<double> errors;
  for (int n : {8, 16, 32, 64}) errors.push_back((solve(1.0 / n) - reference).norm());
  double slope_sum = 0;
  for (std::size_t k = 1; k < errors.size(); ++k) {
    const double slope = std::log2(errors[k - 1] / errors[k]);
    std::printf("  %s: h = 1/%d error %.3e, observed order %.2f\n", label, 8 << k, errors[k],
                slope);
    slope_sum += slope;
  }
  const double order = slope_sum / static_cast<double>(errors.size() - 1);
  std::printf("  %s: mean observed order %.2f\n", label, order);
  return order;
}

// A free asymmetric body (J = diag(1, 2, 3), ω = (1, 0.2, 3) rad/s, no gravity, no
// constraints), the case of SpatialBenchmarks.Dopri5OrderOnAFreeSpinningBody.
std::shared_ptr<const engine::SpatialModel> FreeSpinningBody() {
  engine::SpatialModelBuilder builder;
  engine::SpatialBody body;
  body.name = "body";
  body.inertia = Eigen::Vector3d(1.0, 2.0, 3.0).asDiagonal();
  body.angular_velocity = {1.0, 0.2, 3.0};
  builder.AddBody(body);
  return builder.Build();
}

// A spatial pendulum: an asymmetric body (1 kg, J = diag(0.02, 0.05, 0.06)) hung from the
// ground by a spherical joint at the origin, centre of mass at c = (0.3, −0.8, 0.1), spinning at
// ω = (1, 0.5, 2) rad/s (body frame = world at t = 0) with the consistent ṙ = ω × c; gravity.
std::shared_ptr<const engine::SpatialModel> SphericalPendulum() {
  engine::SpatialModelBuilder builder;
  const Eigen::Vector3d c(0.3, -0.8, 0.1);
  engine::SpatialBody body;
  body.name = "bob";
  body.mass = 1.0;
  body.inertia = Eigen::Vector3d(0.02, 0.05, 0.06).asDiagonal();
  body.position = c;
  body.angular_velocity = {1.0, 0.5, 2.0};
  body.velocity = body.angular_velocity.cross(c);
  const int b = builder.AddBody(body);
  engine::SpatialJoint joint;
  joint.name = "pivot";
  joint.type = engine::SpatialJointType::kSpherical;
  joint.body_a = engine::kGround;
  joint.body_b = b;
  joint.point_a = Eigen::Vector3d::Zero();
  joint.point_b = -c;
  builder.AddJoint(joint);
  builder.SetGravity({0.0, -9.81, 0.0});
  return builder.Build();
}

// HEM5's position stages go through dexp⁻¹ (Munthe-Kaas), so the order on rotations is the
// method's 5; with K_j = V_j it was 2. ±0.3 is the margin of the generic order tests.
TEST(Hem5Spatial, OrderFiveOnAFreeSpinningBody) {
  const engine::SpatialMultibodySystem lie(FreeSpinningBody());
  EXPECT_NEAR(ConstantStepOrder(lie, "HEM5 free body"), 5.0, 0.3);
  const IdentityDexpSystem plain(FreeSpinningBody());
  // The uncorrected stages lose three orders (local error O(h³)): anything below 3 shows it.
  EXPECT_LT(ConstantStepOrder(plain, "HEM5 free body, K = V"), 3.0);
}

TEST(Hem5Spatial, OrderFiveOnASphericalPendulum) {
  const engine::SpatialMultibodySystem lie(SphericalPendulum());
  EXPECT_NEAR(ConstantStepOrder(lie, "HEM5 spherical pendulum"), 5.0, 0.3);
  const IdentityDexpSystem plain(SphericalPendulum());
  EXPECT_LT(ConstantStepOrder(plain, "HEM5 spherical pendulum, K = V"), 3.0);
}

// Dense output on the free spinning body: q(θ) at the midpoint of the last step of a run with
// constant steps h = 1/8 … 1/64 against a 1/2048 run ending there (1 − h/2 is a multiple of
// 1/2048). The interpolant is of order 4 (local error O(h⁵)), so the error must fall with
// slope ≥ 4 − 0.3 (margin of the generic order tests); with V_j instead of K_j in the
// interpolant only, it measures 3.0.
TEST(Hem5Spatial, DenseOutputOrderOnAFreeSpinningBody) {
  const engine::SpatialMultibodySystem system(FreeSpinningBody());
  const Eigen::VectorXd q0 = system.model().InitialPositions();
  const Eigen::VectorXd v0 = system.model().InitialVelocities();
  auto run = [&](double t_end, Hem5* hem5) {
    hem5->Reset(system, {}, 0.0, q0, v0);
    while (hem5->t() < t_end - 1e-12) {
      EXPECT_EQ(hem5->Step(t_end), StepStatus::kAccepted);
    }
  };
  IntegratorOptions options = Index2(1e-8);
  options.adaptive = false;
  options.project = false;
  std::vector<double> errors;
  for (int n : {8, 16, 32, 64}) {
    const double h = 1.0 / n, t_mid = 1.0 - 0.5 * h;
    options.h_init = h;
    Hem5 coarse(options);
    run(1.0, &coarse);
    Eigen::VectorXd q, v;
    coarse.Interpolate(t_mid, &q, &v);
    options.h_init = 1.0 / 2048;
    Hem5 fine(options);
    run(t_mid, &fine);
    errors.push_back((q - fine.q()).norm());
  }
  double slope_sum = 0;
  for (std::size_t k = 1; k < errors.size(); ++k) {
    const double slope = std::log2(errors[k - 1] / errors[k]);
    std::printf("  HEM5 dense output, free body: h = 1/%d error %.3e, slope %.2f\n", 8 << k,
                errors[k], slope);
    slope_sum += slope;
  }
  EXPECT_GT(slope_sum / static_cast<double>(errors.size() - 1), 3.7);
}

// Bricard (6R, 30 rows of rank 29: one redundant) released at rest under gravity, 3 s with
// HEM5 and projection. Energy must stay within the IFToMM A04 criterion (1e-3 J); the velocity
// constraint holds at every step end (stage tolerance, see Hem5Redundant tests).
TEST(Hem5Spatial, BricardKeepsEnergyWithRedundantJoints) {
  auto system = engine::testing::Bricard();
  const std::vector<int> rows = AllJointRows(*system);
  Eigen::VectorXd q = system->model().InitialPositions(), v = system->model().InitialVelocities();
  const engine::AssemblyReport assembly = engine::Assemble(*system, 0.0, rows, {}, &q, &v);
  ASSERT_TRUE(assembly.ok) << assembly.message;
  auto energy = [&](double t, const Eigen::VectorXd& qs, const Eigen::VectorXd& vs) {
    return system->KineticEnergy(qs, vs) + system->PotentialEnergy(t, qs);
  };
  const double E0 = energy(0.0, q, v);
  const double t_end = 3.0;
  for (const double rtol : {1e-5, 1e-8}) {
    IntegratorOptions options = Index2(rtol);
    options.atol = 0.01 * rtol;
    options.h_min = 1e-12;
    options.projection_tol = 1e-10;
    // Stage residual tolerance (1e-8 scaled): with newton_tol = 1e-13 the redundant row's
    // least-squares residual (8e-13, round-off) is taken for a rank change and the run stalls.
    options.newton_tol = 1e-8;
    Hem5 hem5(options);
    hem5.Reset(*system, rows, 0.0, q, v);
    double drift = 0, travel = 0, max_gv = 0;
    Eigen::MatrixXd G;
    Eigen::VectorXd g_t;
    while (hem5.t() < t_end) {
      ASSERT_EQ(hem5.Step(t_end), StepStatus::kAccepted)
          << "t = " << hem5.t() << ": " << hem5.failure_message();
      drift = std::max(drift, std::abs(energy(hem5.t(), hem5.q(), hem5.v()) - E0));
      for (int i = 0; i < system->model().num_bodies(); ++i) {
        travel = std::max(travel, (hem5.q().segment<3>(7 * i) - q.segment<3>(7 * i)).norm());
      }
      system->ConstraintJacobian(hem5.t(), hem5.q(), rows, &G);
      system->ConstraintTimeDerivative(hem5.t(), hem5.q(), rows, &g_t);
      max_gv = std::max(max_gv, (G * hem5.v() + g_t).lpNorm<Eigen::Infinity>());
    }
    const IntegratorStats& st = hem5.stats();
    std::printf(
        "  HEM5 Bricard rtol %.0e: E0 = %.6f J, max |E - E0| = %.2e J over %.1f s, %ld steps, "
        "%ld rejected, %ld rhs, %ld projections, max |g| before projection %.2e, max |G v + g_t| "
        "%.2e, max travel %.3f m\n",
        rtol, E0, drift, t_end, st.accepted_steps, st.rejected_steps, st.rhs_evaluations,
        st.position_projections, hem5.max_position_violation(), max_gv, travel);
    EXPECT_GT(travel, 0.1);  // the redundant linkage does move
    // Consistent rank reduction (half_explicit_stage.h): the nearly rank-deficient G at the
    // explicit stage points is no longer read as a rank change. Before it: 1044 rejected of 3197
    // at rtol 1e-5. At most 10 % of the accepted steps (error-control rejections included).
    EXPECT_LE(st.rejected_steps, st.accepted_steps / 10);
    EXPECT_LT(drift, 1e-3);  // IFToMM A04 criterion
    // Velocity constraint: stage tolerance 1e-8 scaled by max(1, ‖G‖‖v‖∞ + ‖g_t‖∞).
    EXPECT_LT(max_gv, 1e-7);
  }
}

// The planar double four-bar (test_problems.h) through its singular configurations at
// t ≈ 0.714 s and 1.228 s, rtol = atol = 1e-10 (library defaults otherwise). Before the
// near-singular filter and projection (hem5.h) `saltus run` of the same scene stopped at
// t = 1.22815 s (step_size_underflow at h_min = 1e-13 s; bench/singular_positions.py); measured
// now: 20 s in 22,505 steps, max |E − E0| = 6.7e-8 J.
TEST(Hem5Singular, PlanarDoubleFourBarPassesItsSingularConfigurations) {
  IntegratorOptions options;
  options.rtol = options.atol = 1e-10;
  options.formulation = Formulation::kIndex2;
  Hem5 hem5(options);
  const test_problems::FourBarRun run = test_problems::RunPlanarDoubleFourBar(&hem5, 1.5);
  EXPECT_EQ(run.status, StepStatus::kAccepted) << "stopped at t = " << run.t_stop;
  EXPECT_LT(run.drift, 1e-3);  // IFToMM criterion (A02 double four-bar): energy drift < 1e-3 J
  // Off the parallelogram branch crank angles differ by O(1) (π when a coupler flips); 1e-6
  // leaves a wide margin over the projections' accuracy.
  EXPECT_LT(run.branch, 1e-6);
}

}  // namespace
}  // namespace saltus::integrators
