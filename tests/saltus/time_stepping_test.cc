// Moreau–Jean time-stepping through the facade (saltus::Simulation with integrator moreau_jean;
// saltus/saltus.h, timestepping/moreau_jean.h): the same run as timestepping::MoreauJean used
// directly, closed forms of the θ = 1/2 scheme (exact on constant forces: the midpoint rule on a
// quadratic), the mean contact force P/h of a resting sphere, Save/Restore, host forces, study
// entries and the errors of the queries the scheme does not support.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "saltus/saltus.h"
#include "timestepping/moreau_jean.h"
#include "tools/scene.h"

namespace saltus {
namespace {

using Eigen::VectorXd;

constexpr double kG = 9.81;

// A sphere (r = 0.1 m, m = 1 kg) over the floor plane, centre at height z0, Moreau–Jean with
// step h and θ (the scene keys simulation.step and simulation.theta).
std::string SphereScene(double z0, double h, double theta) {
  return "scene: ball\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n"
         "  - {name: ball, mass: 1, inertia: 0.004, position: [0, 0, " +
         std::to_string(z0) +
         "]}\n"
         "shapes:\n"
         "  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: 0}\n"
         "  - {name: s, body: ball, type: sphere, radius: 0.1}\n"
         "simulation:\n  t_end: 1\n  restitution: 0.5\n  output_step: 0.01\n"
         "  integrator: moreau_jean\n  step: " +
         std::to_string(h) + "\n  theta: " + std::to_string(theta) + "\n";
}

// What the observers of a facade run saw.
struct Seen {
  std::vector<double> outputs, events;
  int steps = 0;
};

Seen Observe(Simulation* sim) {
  Seen seen;
  sim->AddStepObserver([&seen](double, const VectorXd&, const VectorXd&) { ++seen.steps; });
  sim->AddOutputObserver(
      [&seen](double t, const VectorXd&, const VectorXd&) { seen.outputs.push_back(t); });
  sim->AddEventObserver([&seen](const Event& e, const VectorXd&, const VectorXd&, const VectorXd&) {
    seen.events.push_back(e.t);
  });
  return seen;
}

TEST(FacadeMoreauJean, RunsTheSchemeOfTheSceneBitForBit) {
  // θ = 0.75 from the scene reaches the scheme: the facade's run is timestepping::MoreauJean's
  // with the scene's options, step for step (an exact determinism check), and differs from θ = ½.
  const std::string yaml = SphereScene(0.5, 2e-3, 0.75);
  const Model model = Model::FromSceneText(yaml);
  Simulation sim(model);
  Seen seen;
  sim.AddStepObserver([&seen](double, const VectorXd&, const VectorXd&) { ++seen.steps; });
  sim.AddEventObserver([&seen](const Event& e, const VectorXd&, const VectorXd&, const VectorXd&) {
    seen.events.push_back(e.t);
  });
  ASSERT_TRUE(sim.AdvanceTo(0.8).ok());

  const tools::Scene scene = tools::ParseScene(yaml, "ball.yaml");
  timestepping::MoreauJeanOptions o = timestepping::FromSimulationOptions(scene.options);
  o.theta = scene.time_stepping.theta;
  struct Impacts : events::Observer {
    std::vector<double> t;
    void OnEvent(const Event& e, const VectorXd&, const VectorXd&, const VectorXd&) override {
      t.push_back(e.t);
    }
  } impacts;
  timestepping::MoreauJean direct(tools::BuildSceneSystem(scene).system, o);
  direct.AddObserver(&impacts);
  direct.SetState(0.0, model.initial_q(), model.initial_v());
  ASSERT_EQ(direct.AdvanceTo(0.8).status, RunStatus::kFinished);
  for (Eigen::Index i = 0; i < sim.q().size(); ++i) EXPECT_EQ(sim.q()[i], direct.q()[i]) << i;
  for (Eigen::Index i = 0; i < sim.v().size(); ++i) EXPECT_EQ(sim.v()[i], direct.v()[i]) << i;
  EXPECT_EQ(seen.events, impacts.t);
  EXPECT_FALSE(seen.events.empty());  // first impact at √(2·0.4/g) = 0.286 s
  EXPECT_EQ(seen.steps, 400);         // 0.8 s / 2 ms
  EXPECT_EQ(sim.stats().integrator.accepted_steps, 400);

  Simulation half(Model::FromSceneText(SphereScene(0.5, 2e-3, 0.5)));
  ASSERT_TRUE(half.AdvanceTo(0.8).ok());
  EXPECT_GT(std::abs(half.q()[2] - sim.q()[2]), 1e-9);
}

TEST(FacadeMoreauJean, FreeFallIsExactAndOutputsFollowTheGrid) {
  // θ = ½ on constant gravity is exact up to round-off (q_{k+1} = q_k + h (v_k + v_{k+1}) / 2,
  // v_{k+1} = v_k − g h): z(t) = z0 − g t² / 2 until the impact at √(2·0.9/g) = 0.428 s.
  Simulation sim(Model::FromSceneText(SphereScene(1.0, 1e-3, 0.5)));
  Seen seen = Observe(&sim);
  ASSERT_TRUE(sim.AdvanceTo(0.3).ok());
  EXPECT_NEAR(sim.t(), 0.3, 1e-15);
  EXPECT_NEAR(sim.q()[2], 1.0 - 0.5 * kG * 0.09, 1e-12);
  EXPECT_NEAR(sim.v()[2], -kG * 0.3, 1e-12);
  // Outputs at 0, 0.01, ..., 0.3 (the grid is a multiple of h: the step ends land on it).
  ASSERT_EQ(seen.outputs.size(), 31u);
  for (std::size_t k = 0; k < seen.outputs.size(); ++k) {
    EXPECT_NEAR(seen.outputs[k], 0.01 * static_cast<double>(k), 1e-12) << k;
  }
  EXPECT_TRUE(seen.events.empty());
}

TEST(FacadeMoreauJean, RestingSphereCarriesItsWeightAsMeanForce) {
  // Resting on the floor, every step's impulse is P = m g h, so the reported multiplier P/h is
  // the weight m g (LCP tolerance 1e-10 relative, contact/complementarity.h).
  Simulation sim(Model::FromSceneText(SphereScene(0.1, 1e-3, 0.5)));
  ASSERT_TRUE(sim.AdvanceTo(0.1).ok());
  ASSERT_EQ(sim.ActiveRows(), std::vector<int>({0}));
  EXPECT_NEAR(sim.Multipliers()[0], kG, 1e-9);
  EXPECT_NEAR(sim.AllMultipliers()[0], kG, 1e-9);
  EXPECT_EQ(sim.CurrentIndexSets().i2, std::vector<int>({0}));
  EXPECT_NEAR(sim.q()[2], 0.1, 1e-12);  // no sinking
  EXPECT_THROW(sim.ContactForces(), StateError);
  EXPECT_THROW(sim.JointReactions(), StateError);

  // A constant host force of 2 N along x: the sphere slides (frictionless) with x = t² (a = 2),
  // exact for θ = ½ up to round-off, and still rests on the floor.
  VectorXd f = VectorXd::Zero(sim.model().nv());
  f[0] = 2.0;
  sim.SetExternalForce(f);
  ASSERT_TRUE(sim.AdvanceTo(0.3).ok());
  EXPECT_NEAR(sim.q()[0], 0.2 * 0.2, 1e-12);
  EXPECT_NEAR(sim.q()[2], 0.1, 1e-12);
}

TEST(FacadeMoreauJean, RestoreContinuesBitIdentically) {
  Simulation sim(Model::FromSceneText(SphereScene(0.5, 1e-3, 0.5)));
  ASSERT_TRUE(sim.AdvanceTo(0.2).ok());
  const Snapshot snapshot = sim.Save();
  ASSERT_TRUE(sim.AdvanceTo(0.9).ok());  // two bounces after the save
  const VectorXd q1 = sim.q(), v1 = sim.v();
  sim.Restore(snapshot);
  EXPECT_EQ(sim.t(), 0.2);
  ASSERT_TRUE(sim.AdvanceTo(0.9).ok());
  // Exact determinism.
  for (Eigen::Index i = 0; i < q1.size(); ++i) EXPECT_EQ(sim.q()[i], q1[i]) << i;
  for (Eigen::Index i = 0; i < v1.size(); ++i) EXPECT_EQ(sim.v()[i], v1[i]) << i;
}

// The disk of radius 0.1 m released at rest 1 m above the floor with e = 0.5 (a Zeno point at
// t∞ = 3 t₁ ≈ 1.2846 s, t₁ = sqrt(2 · 0.9 / g)), hybrid on with h = 1 ms: the event loop hands
// the run to time-stepping just before t∞ and takes it back one calm time (50 h) later
// (tests/tools/hybrid_scene_test.cc).
std::string HybridBallScene() {
  return "scene: ball\ngravity: [0, -9.81]\n"
         "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
         "contacts:\n"
         "  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],\n"
         "     normal_a: [0, 1], radius_b: 0.1, restitution: 0.5}\n"
         "simulation:\n  t_end: 2\n  integrator: dopri5\n  rtol: 1.0e-8\n  atol: 1.0e-10\n"
         "  output_step: 0.01\n  hybrid: on\n  step: 1.0e-3\n";
}

long Switches(const Statistics& stats, events::EventKind kind) {
  return stats.events[static_cast<int>(kind)];
}

// Save inside a phase, continue, Restore, continue again: bit-identical, and the restored run
// stays in the phase it was saved in (one switch each way in all; a restart into the event loop
// inside the time-stepping phase would meet the Zeno cascade again and switch a second time).
void ExpectRestoreContinuesTheHybridRun(double t_save) {
  Simulation sim(Model::FromSceneText(HybridBallScene()));
  ASSERT_TRUE(sim.AdvanceTo(t_save).ok());
  const Snapshot snapshot = sim.Save();
  ASSERT_TRUE(snapshot.hybrid.has_value());
  ASSERT_TRUE(sim.AdvanceTo(2.0).ok());
  const VectorXd q1 = sim.q(), v1 = sim.v();
  const Statistics stats1 = sim.stats();
  EXPECT_EQ(Switches(stats1, events::EventKind::kToTimeStepping), 1);
  EXPECT_EQ(Switches(stats1, events::EventKind::kToEventDriven), 1);
  sim.Restore(snapshot);
  EXPECT_EQ(sim.t(), t_save);
  ASSERT_TRUE(sim.AdvanceTo(2.0).ok());
  for (Eigen::Index i = 0; i < q1.size(); ++i) EXPECT_EQ(sim.q()[i], q1[i]) << i;
  for (Eigen::Index i = 0; i < v1.size(); ++i) EXPECT_EQ(sim.v()[i], v1[i]) << i;
  for (int k = 0; k < events::kNumEventKinds; ++k)
    EXPECT_EQ(sim.stats().events[k], stats1.events[k]) << k;
  // The rest state of the run without Save: the centre at the radius within τ₀ = 1e-9 m, at rest
  // within τ₁ = 1e-6 m/s.
  EXPECT_NEAR(sim.q()[1], 0.1, 1e-9);
  EXPECT_NEAR(sim.v()[1], 0.0, 1e-6);
}

TEST(FacadeHybrid, RestoreInsideTheTimeSteppingPhaseContinuesBitIdentically) {
  // The switch is within W = 10 ms before t∞ ≈ 1.2846 s, the switch back 50 ms later.
  Simulation probe(Model::FromSceneText(HybridBallScene()));
  ASSERT_TRUE(probe.AdvanceTo(1.30).ok());
  ASSERT_EQ(Switches(probe.stats(), events::EventKind::kToTimeStepping), 1);
  ASSERT_EQ(Switches(probe.stats(), events::EventKind::kToEventDriven), 0);
  const Snapshot s = probe.Save();
  ASSERT_TRUE(s.hybrid.has_value());
  EXPECT_TRUE(s.hybrid->time_stepping);
  ExpectRestoreContinuesTheHybridRun(1.30);
}

TEST(FacadeHybrid, RestoreInsideAnEventDrivenPhaseContinuesBitIdentically) {
  // 1.28 s: the bounces are 1.6 ms apart, several of them within the window W = 10 ms.
  Simulation probe(Model::FromSceneText(HybridBallScene()));
  ASSERT_TRUE(probe.AdvanceTo(1.28).ok());
  ASSERT_EQ(Switches(probe.stats(), events::EventKind::kToTimeStepping), 0);
  const Snapshot s = probe.Save();
  ASSERT_TRUE(s.hybrid.has_value());
  EXPECT_FALSE(s.hybrid->time_stepping);
  EXPECT_FALSE(s.hybrid->recent_events.empty());
  ExpectRestoreContinuesTheHybridRun(1.28);
  ExpectRestoreContinuesTheHybridRun(0.5);  // one bounce behind
  ExpectRestoreContinuesTheHybridRun(1.9);  // back in the event loop, at rest
}

// Calls around a switch in any order finish the run at the rest state: SetState inside the
// time-stepping phase (a new state: the event loop starts again), Save twice in a row, Restore
// of a time-stepping snapshot after the run came back to the event loop, AdvanceTo to the
// current time, a host force change (a restart that keeps the phase).
TEST(FacadeHybrid, CallOrdersAroundASwitchDoNotCrash) {
  Simulation sim(Model::FromSceneText(HybridBallScene()));
  ASSERT_TRUE(sim.AdvanceTo(1.30).ok());
  const Snapshot inside = sim.Save();
  const Snapshot again = sim.Save();
  EXPECT_EQ(again.hybrid->time_stepping, inside.hybrid->time_stepping);
  ASSERT_TRUE(sim.AdvanceTo(1.30).ok());
  sim.SetExternalForce(VectorXd::Zero(3));
  ASSERT_TRUE(sim.AdvanceTo(1.31).ok());
  EXPECT_EQ(sim.t(), 1.31);
  EXPECT_EQ(Switches(sim.stats(), events::EventKind::kToTimeStepping), 1);  // the phase kept
  sim.SetState(sim.t(), sim.q(), sim.v());
  ASSERT_TRUE(sim.AdvanceTo(1.6).ok());
  sim.Restore(inside);
  ASSERT_TRUE(sim.AdvanceTo(2.0).ok());
  EXPECT_NEAR(sim.q()[1], 0.1, 1e-9);
  EXPECT_NEAR(sim.v()[1], 0.0, 1e-6);
}

TEST(FacadeMoreauJean, NamesStudiesAndErrors) {
  const std::vector<std::string> names = IntegratorNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "moreau_jean");
  const Model model = Model::FromSceneText(SphereScene(0.5, 1e-3, 0.5));
  const auto study =
      CompareIntegrators(model, {"moreau_jean", names.front()}, 0.2, model.default_options());
  ASSERT_EQ(study.size(), 2u);
  EXPECT_TRUE(study[0].result.ok());
  EXPECT_EQ(study[0].stats.integrator.accepted_steps, 200);
  EXPECT_TRUE(study[1].result.ok());
  // Free fall to 0.2 s: both on z0 − g t²/2 (the event loop to its tolerances, rtol 1e-6).
  EXPECT_NEAR(study[0].trajectory.q.back()[2], 0.5 - 0.5 * kG * 0.04, 1e-12);
  EXPECT_NEAR(study[1].trajectory.q.back()[2], 0.5 - 0.5 * kG * 0.04, 1e-6);

  // Without a fixed step the options are refused, naming what is missing.
  SimulationOptions o = model.default_options();
  o.integrator_options.adaptive = true;
  try {
    Simulation bad(model, o);
    ADD_FAILURE() << "moreau_jean without a fixed step accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("needs a fixed step"), std::string::npos) << e.what();
  }
  o.integrator_options.adaptive = false;
  o.integrator_options.h_init = 0.0;
  EXPECT_THROW(Simulation(model, o), InvalidArgument);
}

}  // namespace
}  // namespace saltus
