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
