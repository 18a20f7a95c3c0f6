// The public facade saltus/saltus.h: models from scenes and code, advancing, state access,
// multipliers and index sets, observers, external forces, save/restore and bad input.
#include "saltus/saltus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/scene.h"

namespace saltus {
namespace {

using Eigen::VectorXd;

constexpr double kG = 9.81;

// The bouncing ball of examples/bouncing_ball.yaml (radius 0.1, centre at 1 m, e = 0.9) with a
// short horizon. First impact at t₁ = √(2·0.9/g) with speed g t₁.
std::string BallScene(double y0 = 1.0, double restitution = 0.9) {
  return "scene: ball\n"
         "gravity: [0, -9.81]\n"
         "bodies:\n"
         "  - {name: ball, mass: 1, inertia: 0.004, position: [0, " +
         std::to_string(y0) +
         ", 0]}\n"
         "contacts:\n"
         "  - {name: floor, type: disk_line, body_a: ground, body_b: ball, normal_a: [0, 1],\n"
         "     radius_b: 0.1, restitution: " +
         std::to_string(restitution) +
         "}\n"
         "simulation:\n"
         "  t_end: 1\n"
         "  rtol: 1.0e-8\n"
         "  atol: 1.0e-10\n"
         "  output_step: 0.01\n";
}

// m q̈ = F with F = 0 in the model; forces come from the host.
Model FreeMass() {
  engine::LagrangianCallbacks dyn;
  dyn.n = 1;
  dyn.coordinate_names = {"x"};
  return Model::FromLagrangian(dyn, {}, VectorXd::Constant(1, 1.0), VectorXd::Zero(1));
}

double MaxDiff(const VectorXd& a, const VectorXd& b) { return (a - b).cwiseAbs().maxCoeff(); }

TEST(ModelTest, FromSceneHasSizesNamesAndOptions) {
  const Model m = Model::FromSceneText(BallScene());
  EXPECT_EQ(m.nq(), 3);
  EXPECT_EQ(m.nv(), 3);
  EXPECT_EQ(m.num_constraints(), 1);
  EXPECT_EQ(m.name(), "ball");
  EXPECT_EQ(m.PositionNames()[1], "ball.y");
  EXPECT_EQ(m.ConstraintNames()[0], "floor");
  EXPECT_EQ(m.UnilateralRows(), std::vector<int>{0});
  ASSERT_NE(m.planar_model(), nullptr);
  EXPECT_EQ(m.planar_contacts().size(), 1u);
  EXPECT_NEAR(m.default_t_end(), 1.0, 0.0);  // parsed exactly
  EXPECT_NEAR(m.default_options().integrator_options.rtol, 1e-8, 0.0);
  EXPECT_NEAR(m.initial_q()[1], 1.0, 0.0);
}

TEST(ModelTest, FromSceneFileReadsTheExample) {
  const char* src = std::getenv("SALTUS_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const Model m = Model::FromSceneFile(std::string(src) + "/examples/bouncing_ball.yaml");
  EXPECT_EQ(m.name(), "bouncing_ball");
}

TEST(ModelTest, FromSceneFileBuildsAndAssemblesASpatialScene) {
  // Haug's double pendulum (examples/spatial/double_pendulum.yaml): 2 quaternion bodies (nq = 14,
  // nv = 12), assembled so that the revolute joints hold to the assembly tolerance (1e-10), and
  // a short run keeps its energy (DOPRI5 at the scene's rtol; 1e-6 J of ~1e4 J).
  const char* src = std::getenv("SALTUS_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const Model m = Model::FromSceneFile(std::string(src) + "/examples/spatial/double_pendulum.yaml");
  EXPECT_EQ(m.nq(), 14);
  EXPECT_EQ(m.nv(), 12);
  Simulation sim(m);
  const engine::MechanicalSystem& sys = m.system();
  auto energy = [&] {
    return sys.KineticEnergy(sim.q(), sim.v()) + sys.PotentialEnergy(sim.t(), sim.q());
  };
  const double E0 = energy();
  ASSERT_EQ(sim.AdvanceTo(0.2).status, RunStatus::kFinished);
  EXPECT_NEAR(energy(), E0, 1e-6);
}

TEST(ModelTest, FromPlanarInCode) {
  engine::PlanarModelBuilder b;
  engine::PlanarBody ball;
  ball.name = "ball";
  ball.mass = 2.0;
  ball.inertia = 0.01;
  ball.q0 = Eigen::Vector3d(0, 0.5, 0);
  b.AddBody(ball);
  b.SetGravity(Eigen::Vector2d(0, -kG));
  contact::PlanarContact floor;
  floor.name = "floor";
  floor.body_b = 0;
  floor.radius_b = 0.1;
  floor.restitution = 0.5;
  const Model m = Model::FromPlanar(b.Build(), {floor});
  Simulation sim(m);
  const Trajectory traj = sim.Run(1.0);
  ASSERT_FALSE(traj.events.empty());
  // Gap 0.4 m: t₁ = √(2·0.4/g). Free flight is quadratic, which DOPRI5 integrates exactly, so
  // only the root tolerance (1e-12 relative) and round-off remain; 1e-9 leaves margin.
  EXPECT_NEAR(traj.events[0].t, std::sqrt(2 * 0.4 / kG), 1e-9);
}

TEST(ModelTest, FromPlanarWithFrictionHasTangentialRowsAfterTheNormalRows) {
  engine::PlanarModelBuilder b;
  engine::PlanarBody ball;
  ball.name = "ball";
  ball.q0 = Eigen::Vector3d(0, 0.5, 0);
  b.AddBody(ball);
  contact::PlanarContact floor, wall;
  floor.name = "floor";
  floor.body_b = 0;
  floor.radius_b = 0.1;
  floor.friction = 0.4;
  wall = floor;
  wall.name = "wall";
  wall.normal_a = Eigen::Vector2d(1, 0);
  wall.point_a = Eigen::Vector2d(-1, 0);
  wall.friction = 0.0;
  const auto model = b.Build();
  const Model m = Model::FromPlanar(model, {floor, wall});
  EXPECT_EQ(m.ConstraintNames(), (std::vector<std::string>{"floor", "wall", "floor.t"}));
  EXPECT_EQ(m.UnilateralRows(), (std::vector<int>{0, 1}));
  EXPECT_EQ(m.system().constraint_info(2).kind, engine::ConstraintKind::kTangential);
  floor.friction = -0.2;
  try {
    Model::FromPlanar(model, {floor});
    ADD_FAILURE() << "negative friction accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'floor'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("friction"), std::string::npos) << e.what();
  }
}

TEST(SimulationTest, BouncingBallFirstImpactAndRebound) {
  const Model m = Model::FromSceneText(BallScene());
  Simulation sim(m);
  RunResult r;
  const Trajectory traj = sim.Run(0.6, &r);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_NEAR(sim.t(), 0.6, 1e-14);  // ends on t_end (round-off of the last step)
  ASSERT_EQ(traj.events.size(), 1u);
  const double t1 = std::sqrt(2 * 0.9 / kG);
  EXPECT_NEAR(traj.events[0].t, t1, 1e-9);  // as in FromPlanarInCode
  // Rows: outputs every 0.01 s from 0 plus two rows at the impact.
  EXPECT_NEAR(traj.t.front(), 0.0, 0.0);
  EXPECT_EQ(traj.t.size(), 61u + 2u);
  const Eigen::MatrixXd V = traj.VMatrix();
  EXPECT_EQ(V.cols(), 3);
  // Newton restitution: v⁺ = −e v⁻ (the impact rows of the trajectory), to LCP round-off.
  std::size_t k = 0;
  while (traj.t[k] < traj.events[0].t) ++k;
  EXPECT_NEAR(traj.v[k + 1][1], -0.9 * traj.v[k][1], 1e-10);
  EXPECT_NEAR(traj.v[k][1], -kG * t1, 1e-8);  // rtol 1e-8 on |v| ≈ 4.2
}

TEST(SimulationTest, StepAndAdvanceReachTheirTimes) {
  Simulation sim(Model::FromSceneText(BallScene()));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(sim.Step(0.05).ok());
  EXPECT_NEAR(sim.t(), 0.5, 1e-12);  // sum of ten 0.05 steps, round-off
  ASSERT_TRUE(sim.AdvanceTo(0.7).ok());
  EXPECT_NEAR(sim.t(), 0.7, 1e-14);
  EXPECT_EQ(sim.stats().events[static_cast<int>(EventKind::kImpact)], 1);
  EXPECT_GT(sim.stats().integrator.accepted_steps, 0);
}

TEST(SimulationTest, RestingContactHasWeightAsMultiplierAndIsInBothIndexSets) {
  // Disk resting on the floor: gap 0, velocity 0, λ = m g.
  Simulation sim(Model::FromSceneText(BallScene(0.1)));
  ASSERT_TRUE(sim.AdvanceTo(0.2).ok());
  const IndexSets sets = sim.CurrentIndexSets();
  EXPECT_EQ(sets.i1, std::vector<int>{0});
  EXPECT_EQ(sets.i2, std::vector<int>{0});
  EXPECT_EQ(sim.ActiveRows(), std::vector<int>{0});
  // Index-1 solve of a 1×1 system: round-off.
  EXPECT_NEAR(sim.Multipliers()[0], kG, 1e-9);
  EXPECT_NEAR(sim.AllMultipliers()[0], kG, 1e-9);
  EXPECT_NEAR(sim.q()[1], 0.1, 1e-9);  // projection tolerance
}

TEST(SimulationTest, SetStateAndPartsRestart) {
  Simulation sim(Model::FromSceneText(BallScene()));
  VectorXd q(3), v(3);
  q << 0, 2, 0;
  v << 1, 0, 0;
  sim.SetState(5.0, q, v);
  EXPECT_NEAR(sim.t(), 5.0, 0.0);
  ASSERT_TRUE(sim.AdvanceTo(5.1).ok());
  // Free flight: exact for DOPRI5 up to round-off (see FromPlanarInCode).
  EXPECT_NEAR(sim.q()[0], 0.1, 1e-12);
  EXPECT_NEAR(sim.q()[1], 2 - 0.5 * kG * 0.01, 1e-12);
  v << 0, 0, 0;
  sim.SetVelocities(v);
  EXPECT_NEAR(sim.v()[1], 0.0, 0.0);
  q << 0, 3, 0;
  sim.SetPositions(q);
  EXPECT_NEAR(sim.q()[1], 3.0, 0.0);
}

TEST(SimulationTest, ObserversSeeStepsOutputsAndEventsAndCanBeRemoved) {
  Simulation sim(Model::FromSceneText(BallScene()));
  int steps = 0, outputs = 0, impacts = 0;
  const int a = sim.AddStepObserver([&](double, const VectorXd&, const VectorXd&) { ++steps; });
  sim.AddOutputObserver([&](double, const VectorXd&, const VectorXd&) { ++outputs; });
  sim.AddEventObserver(
      [&](const Event& e, const VectorXd&, const VectorXd& vm, const VectorXd& vp) {
        if (e.kind == EventKind::kImpact) {
          ++impacts;
          EXPECT_LT(vm[1], 0.0);
          EXPECT_GT(vp[1], 0.0);
        }
      });
  ASSERT_TRUE(sim.AdvanceTo(0.5).ok());
  EXPECT_EQ(impacts, 1);
  EXPECT_EQ(outputs, 51);  // 0, 0.01, ..., 0.5
  // Every accepted step is reported except the one cut short by the impact.
  EXPECT_EQ(steps + impacts, sim.stats().integrator.accepted_steps);
  sim.RemoveObserver(a);
  const int before = steps;
  ASSERT_TRUE(sim.AdvanceTo(0.6).ok());
  EXPECT_EQ(steps, before);
  EXPECT_THROW(sim.RemoveObserver(a), InvalidArgument);
  EXPECT_THROW(sim.AddStepObserver(nullptr), InvalidArgument);
}

TEST(SimulationTest, ExternalForceCancelsGravityAndCoSimulates) {
  Simulation sim(Model::FromSceneText(BallScene()));
  VectorXd f(3);
  f << 0, kG, 0;  // m g upwards: the ball hovers
  sim.SetExternalForce(f);
  ASSERT_TRUE(sim.AdvanceTo(0.5).ok());
  // Zero net force: the state is constant up to round-off.
  EXPECT_NEAR(sim.q()[1], 1.0, 1e-12);
  EXPECT_NEAR(MaxDiff(sim.external_force(), f), 0.0, 0.0);
  // Co-simulation: a host applies a piecewise-constant horizontal force, 1 N on [0.5, 0.6) and
  // −1 N on [0.6, 0.7): x = ½·0.01 + 0.1·0.1 − ½·0.01 = 0.01 m, ẋ = 0.
  f[0] = 1.0;
  sim.SetExternalForce(f);
  ASSERT_TRUE(sim.Step(0.1).ok());
  f[0] = -1.0;
  sim.SetExternalForce(f);
  ASSERT_TRUE(sim.Step(0.1).ok());
  EXPECT_NEAR(sim.q()[0], 0.01, 1e-12);  // polynomial motion, exact up to round-off
  EXPECT_NEAR(sim.v()[0], 0.0, 1e-12);
  EXPECT_THROW(sim.SetExternalForce(VectorXd::Zero(2)), InvalidArgument);
  VectorXd bad = f;
  bad[0] = NAN;
  EXPECT_THROW(sim.SetExternalForce(bad), InvalidArgument);
}

TEST(SimulationTest, ForceCallbackMakesAHarmonicOscillator) {
  const Model m = FreeMass();
  SimulationOptions o;
  o.integrator_options.rtol = 1e-10;
  o.integrator_options.atol = 1e-12;
  Simulation sim(m, o);
  sim.SetForceCallback([](double, const VectorXd& q, const VectorXd&, VectorXd* f) {
    *f = -4.0 * q;  // k = 4, ω = 2
  });
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
  // q = cos 2t; the global error of DOPRI5 at rtol 1e-10 over 1 s is far below 1e-7.
  EXPECT_NEAR(sim.q()[0], std::cos(2.0), 1e-7);
  EXPECT_NEAR(sim.v()[0], -2.0 * std::sin(2.0), 1e-7);
}

TEST(SimulationTest, ForceCallbackOfWrongSizeOrThrowingLeavesARunnableSimulation) {
  Simulation sim(FreeMass());
  EXPECT_THROW(sim.SetForceCallback([](double, const VectorXd&, const VectorXd&, VectorXd* f) {
    *f = VectorXd::Zero(3);
  }),
               InvalidArgument);
  ASSERT_TRUE(sim.AdvanceTo(0.1).ok());  // the rejected force is not installed
  int calls = 0;
  sim.SetForceCallback([&](double t, const VectorXd&, const VectorXd&, VectorXd* f) {
    if (t > 0.5 && calls++ == 0) throw std::runtime_error("host failed");
    f->setZero();
  });
  EXPECT_THROW(sim.AdvanceTo(1.0), std::runtime_error);
  EXPECT_LE(sim.t(), 0.5 + 0.5);  // the last accepted step
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
  EXPECT_NEAR(sim.t(), 1.0, 1e-14);
}

TEST(SimulationTest, ObserverExceptionPropagatesAndTheRunContinues) {
  Simulation sim(Model::FromSceneText(BallScene()));
  bool thrown = false;
  sim.AddStepObserver([&](double t, const VectorXd&, const VectorXd&) {
    if (t > 0.2 && !thrown) {
      thrown = true;
      throw std::runtime_error("observer failed");
    }
  });
  EXPECT_THROW(sim.AdvanceTo(1.0), std::runtime_error);
  // The state is that of the first accepted step past 0.2 s, wherever the step sequence puts it
  // (after the impact at 0.428 s the phase may continue with a step to t_end = 1).
  const double t_stop = sim.t();
  EXPECT_GT(t_stop, 0.2);
  EXPECT_LE(t_stop, 1.0);
  ASSERT_TRUE(sim.AdvanceTo(1.1).ok());  // before the second impact (1.199 s)
  EXPECT_EQ(sim.stats().events[static_cast<int>(EventKind::kImpact)], 1);
}

TEST(SimulationTest, RestoreRewindsBitForBit) {
  Simulation sim(Model::FromSceneText(BallScene()));
  ASSERT_TRUE(sim.AdvanceTo(0.3).ok());
  const Snapshot snap = sim.Save();
  RunResult r1;
  const Trajectory first = sim.Run(1.0, &r1);
  ASSERT_TRUE(r1.ok());
  const VectorXd q1 = sim.q(), v1 = sim.v();
  const Statistics s1 = sim.stats();

  sim.Restore(snap);
  EXPECT_NEAR(sim.t(), 0.3, 0.0);
  RunResult r2;
  const Trajectory second = sim.Run(1.0, &r2);
  ASSERT_TRUE(r2.ok());
  // Same operations on the same inputs: bit-identical.
  EXPECT_NEAR(MaxDiff(sim.q(), q1), 0.0, 0.0);
  EXPECT_NEAR(MaxDiff(sim.v(), v1), 0.0, 0.0);
  ASSERT_EQ(first.events.size(), second.events.size());
  ASSERT_EQ(first.t.size(), second.t.size());
  for (std::size_t k = 0; k < first.events.size(); ++k) {
    EXPECT_NEAR(first.events[k].t, second.events[k].t, 0.0);
  }
  EXPECT_EQ(sim.stats().integrator.accepted_steps, s1.integrator.accepted_steps);
  EXPECT_EQ(sim.stats().events[0], s1.events[0]);

  // A rewind with another force: the branch differs; restoring again restores f_ext too.
  sim.Restore(snap);
  VectorXd f(3);
  f << 0, -5, 0;
  sim.SetExternalForce(f);
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
  EXPECT_GT(MaxDiff(sim.q(), q1), 1e-3);
  sim.Restore(snap);
  EXPECT_NEAR(sim.external_force().norm(), 0.0, 0.0);
  ASSERT_TRUE(sim.AdvanceTo(1.0).ok());
  EXPECT_NEAR(MaxDiff(sim.q(), q1), 0.0, 0.0);
}

TEST(SimulationTest, SnapshotKeepsTheExternalForceAndRestartsDoNotRepeatOutputs) {
  Simulation sim(Model::FromSceneText(BallScene()));
  std::vector<double> times;
  sim.AddOutputObserver([&](double t, const VectorXd&, const VectorXd&) { times.push_back(t); });
  VectorXd f(3);
  f << 0, kG, 0;
  ASSERT_TRUE(sim.AdvanceTo(0.1).ok());
  sim.SetExternalForce(f);  // hovering from t = 0.1 on
  const Snapshot snap = sim.Save();
  ASSERT_TRUE(sim.AdvanceTo(0.3).ok());
  // One output per grid time although the loop restarted twice at t = 0.1.
  EXPECT_EQ(times.size(), 31u);
  const double y = sim.q()[1];
  sim.SetExternalForce(VectorXd::Zero(3));
  sim.Restore(snap);
  EXPECT_NEAR(MaxDiff(sim.external_force(), f), 0.0, 0.0);
  ASSERT_TRUE(sim.AdvanceTo(0.3).ok());
  EXPECT_NEAR(sim.q()[1], y, 0.0);  // bit-identical replay of the hovering branch
}

TEST(SimulationTest, RestoreKeepsClosedContacts) {
  Simulation sim(Model::FromSceneText(BallScene(0.1)));
  ASSERT_TRUE(sim.AdvanceTo(0.1).ok());
  const Snapshot snap = sim.Save();
  EXPECT_EQ(snap.closed_rows, std::vector<int>{0});
  ASSERT_TRUE(sim.AdvanceTo(0.2).ok());
  sim.Restore(snap);
  EXPECT_EQ(sim.CurrentIndexSets().i2, std::vector<int>{0});
}

// Every example scene through the facade against the event loop on the scene's own system (what
// `saltus run` runs): the facade adds the host's forces (none here) and forwards everything else,
// so status, events and final state must be the same bit for bit (an exact determinism check).
// Frictional scenes with joints (tangential rows after the joints' rows), spatial piles
// (broadphase, block-sparse rows) and joint friction (accepted-step hook) are among them.
TEST(SimulationTest, EveryExampleSceneRunsAsTheEventLoopRunsIt) {
  const char* src = std::getenv("SALTUS_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::vector<std::filesystem::path> scenes;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(src) + "/examples")) {
    if (entry.path().extension() == ".yaml") scenes.push_back(entry.path());
  }
  std::sort(scenes.begin(), scenes.end());
  int compared = 0;
  for (const auto& path : scenes) {
    SCOPED_TRACE(path.string());
    tools::Scene scene;
    try {
      scene = tools::LoadSceneFile(path.string());
    } catch (const tools::SceneError&) {
      continue;  // scene sets (examples/sets/*.yaml) are not scenes
    }
    const double t_end = std::min(scene.t_end, 0.2);  // set-up, first events and phases
    const tools::SceneSystem built = tools::BuildSceneSystem(scene);
    // Rolling resistance runs with moreau_jean only (the event loop refuses its rows;
    // tests/tools/friction_scene_test.cc runs that scene).
    if (!built.system->RowsOfKind(engine::ConstraintKind::kResistance).empty()) continue;
    events::Simulation loop(built.system, scene.options);
    loop.SetState(0, built.q0, built.v0);
    const events::RunResult expected = loop.AdvanceTo(t_end);

    Simulation sim(Model::FromSceneFile(path.string()));
    const RunResult got = sim.AdvanceTo(t_end);
    EXPECT_EQ(got.status, expected.status) << got.message;
    EXPECT_EQ(got.t, expected.t);
    EXPECT_EQ(sim.q(), loop.q());
    EXPECT_EQ(sim.v(), loop.v());
    for (int k = 0; k < events::kNumEventKinds; ++k) {
      EXPECT_EQ(sim.stats().events[k], loop.stats().events[k]) << "events of kind " << k;
    }
    ++compared;
  }
  EXPECT_GE(compared, 40);  // every scene of examples/ (48 when written)
}

TEST(BadInputTest, EveryEntryPointThrowsATypedError) {
  EXPECT_THROW(Model::FromSceneText("scene: x\nbodies: 3\n"), SceneError);
  try {
    Model::FromSceneText(BallScene() + "  bogus_key: 1\n", "ball.yaml");
    FAIL() << "no SceneError";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), "ball.yaml");
    EXPECT_GT(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("bogus_key"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Model::FromSceneFile("/nonexistent/scene.yaml"), SceneError);
  EXPECT_THROW(Model::FromPlanar(nullptr), InvalidArgument);
  EXPECT_THROW(Model::FromSystem(nullptr, VectorXd(), VectorXd()), InvalidArgument);
  engine::LagrangianCallbacks bad;
  bad.n = 0;
  EXPECT_THROW(Model::FromLagrangian(bad, {}, VectorXd(), VectorXd()), InvalidArgument);
  engine::LagrangianCallbacks one;
  one.n = 1;
  EXPECT_THROW(Model::FromLagrangian(one, {}, VectorXd::Zero(2), VectorXd::Zero(1)),
               InvalidArgument);
  // Friction on a callback row: it has no tangent (no tangential rows in its block).
  engine::ConstraintCallbacks stop;
  stop.rows.resize(1);
  stop.rows[0].name = "stop";
  stop.rows[0].kind = engine::ConstraintKind::kUnilateral;
  stop.rows[0].friction = 0.3;
  stop.values = [](double, const VectorXd& q, VectorXd* g) { *g = q; };
  stop.jacobian = [](double, const VectorXd&, Eigen::MatrixXd* G) {
    *G = Eigen::MatrixXd::Ones(1, 1);
  };
  try {
    Model::FromLagrangian(one, {stop}, VectorXd::Ones(1), VectorXd::Zero(1));
    ADD_FAILURE() << "friction on a callback row accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'stop': friction > 0 needs tangential rows"),
              std::string::npos)
        << e.what();
  }

  const Model m = Model::FromSceneText(BallScene());
  SimulationOptions o = m.default_options();
  o.integrator = "no_such_integrator";
  try {
    Simulation s(m, o);
    FAIL() << "no InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_integrator"), std::string::npos) << e.what();
  }
  o = m.default_options();
  o.restitution = 2.0;
  EXPECT_THROW(Simulation(m, o), InvalidArgument);

  Simulation sim(m);
  EXPECT_THROW(sim.AdvanceTo(NAN), InvalidArgument);
  EXPECT_THROW(sim.AdvanceTo(-1.0), InvalidArgument);
  EXPECT_THROW(sim.Step(0.0), InvalidArgument);
  EXPECT_THROW(sim.SetState(0, VectorXd::Zero(2), VectorXd::Zero(3)), InvalidArgument);
  EXPECT_THROW(sim.SetState(0, VectorXd::Zero(3), VectorXd::Zero(4)), InvalidArgument);
  VectorXd q(3);
  q << 0, 0.05, 0;  // penetrates the floor by 0.05
  EXPECT_THROW(sim.SetPositions(q), InvalidArgument);
  EXPECT_NEAR(sim.q()[1], 1.0, 0.0);  // unchanged by the rejected call
  EXPECT_TRUE(sim.AdvanceTo(0.1).ok());

  Simulation other(FreeMass());
  EXPECT_THROW(sim.Restore(other.Save()), StateError);
  // All of them are saltus::Error.
  EXPECT_THROW(sim.AdvanceTo(-1.0), Error);
}

TEST(StudyTest, CompareIntegratorsRunsEachOne) {
  const Model m = Model::FromSceneText(BallScene());
  const std::vector<std::string> names = IntegratorNames();
  ASSERT_FALSE(names.empty());
  const auto study =
      CompareIntegrators(m, {names.front(), names.front()}, 0.5, m.default_options());
  ASSERT_EQ(study.size(), 2u);
  EXPECT_TRUE(study[0].result.ok());
  EXPECT_EQ(study[0].stats.integrator.accepted_steps, study[1].stats.integrator.accepted_steps);
  EXPECT_THROW(CompareIntegrators(m, {"nope"}, 0.5, m.default_options()), InvalidArgument);
  EXPECT_EQ(Version(), "0.1.0");
}

}  // namespace
}  // namespace saltus
