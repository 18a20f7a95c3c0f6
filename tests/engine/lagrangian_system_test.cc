#include "engine/lagrangian_system.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/projection.h"

namespace saltus::engine {
namespace {

// 1-DOF oscillator m ẍ = −k x with a stop at x_stop: g = x − x_stop ≥ 0 (unilateral).
constexpr double kMass = 2.0;
constexpr double kStiffness = 50.0;
constexpr double kStop = -0.1;

LagrangianCallbacks Oscillator() {
  LagrangianCallbacks callbacks;
  callbacks.n = 1;
  callbacks.mass = [](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    M->resize(1, 1);
    (*M)(0, 0) = kMass;
  };
  callbacks.forces = [](double, const Eigen::VectorXd& q, const Eigen::VectorXd&,
                        Eigen::VectorXd* F) {
    F->resize(1);
    (*F)(0) = -kStiffness * q(0);
  };
  callbacks.potential = [](double, const Eigen::VectorXd& q) {
    return 0.5 * kStiffness * q(0) * q(0);
  };
  callbacks.coordinate_names = {"x"};
  return callbacks;
}

ConstraintCallbacks Stop(double restitution) {
  ConstraintCallbacks stop;
  ConstraintRowInfo info;
  info.kind = ConstraintKind::kUnilateral;
  info.name = "stop";
  info.restitution = restitution;
  stop.rows = {info};
  stop.values = [](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    g->resize(1);
    (*g)(0) = q(0) - kStop;
  };
  stop.jacobian = [](double, const Eigen::VectorXd&, Eigen::MatrixXd* G) { G->setOnes(1, 1); };
  return stop;
}

TEST(LagrangianSystemTest, OscillatorWithStop) {
  LagrangianSystem system(Oscillator());
  system.AddConstraintBlock(std::make_shared<CallbackConstraints>(Stop(0.7), 1));
  EXPECT_EQ(system.nq(), 1);
  EXPECT_EQ(system.nv(), 1);
  EXPECT_EQ(system.PositionName(0), "x");
  EXPECT_EQ(system.VelocityName(0), "vx");

  // Row info preserved through the block and the system.
  ASSERT_EQ(system.num_constraints(), 1);
  EXPECT_EQ(system.constraint_info(0).name, "stop");
  EXPECT_EQ(system.constraint_info(0).kind, ConstraintKind::kUnilateral);
  EXPECT_NEAR(system.constraint_info(0).restitution, 0.7, 0.0);  // stored, not computed
  EXPECT_EQ(system.RowsOfKind(ConstraintKind::kUnilateral), std::vector<int>{0});

  const Eigen::VectorXd q = Eigen::VectorXd::Constant(1, 0.3);
  const Eigen::VectorXd v = Eigen::VectorXd::Constant(1, -1.0);
  Eigen::MatrixXd M;
  Eigen::VectorXd F, g, gamma;
  system.MassMatrix(q, &M);
  system.Forces(0.0, q, v, &F);
  // One multiplication each: exact up to one rounding (1e-15).
  EXPECT_NEAR(M(0, 0), kMass, 0.0);
  EXPECT_NEAR(F(0), -kStiffness * 0.3, 1e-15);
  EXPECT_NEAR(system.PotentialEnergy(0.0, q), 0.5 * kStiffness * 0.09, 1e-15);
  EXPECT_NEAR(system.KineticEnergy(q, v), 0.5 * kMass, 1e-15);
  const std::vector<int> rows = {0};
  system.ConstraintValues(0.0, q, rows, &g);
  EXPECT_NEAR(g(0), 0.3 - kStop, 1e-15);
  system.ConstraintGamma(0.0, q, v, rows, &gamma);  // no callback: γ = 0
  EXPECT_NEAR(gamma(0), 0.0, 0.0);

  // Free: ẍ = −k x / m. Stop closed at x = x_stop: ẍ = 0 and λ = −F = k x_stop < 0 (the spring
  // pulls the mass off the stop, so the event loop would see a take-off). A few flops: 1e-14.
  ConstrainedDynamics dynamics(system);
  Eigen::VectorXd vdot, lambda;
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, {}, &vdot, &lambda).ok);
  EXPECT_NEAR(vdot(0), -kStiffness * 0.3 / kMass, 1e-14);
  const Eigen::VectorXd q_stop = Eigen::VectorXd::Constant(1, kStop);
  ASSERT_TRUE(dynamics.Solve(0.0, q_stop, v, rows, &vdot, &lambda).ok);
  EXPECT_NEAR(vdot(0), 0.0, 1e-14);
  EXPECT_NEAR(lambda(0), kStiffness * kStop, 1e-13);

  // Projection onto the stop from a penetrating position (g linear: one Newton step).
  Eigen::VectorXd q_pen = Eigen::VectorXd::Constant(1, -0.15);
  const ProjectionResult result = ProjectPositions(system, 0.0, rows, {}, &q_pen);
  ASSERT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, 1);
  EXPECT_NEAR(q_pen(0), kStop, 1e-15);
}

TEST(LagrangianSystemTest, DefaultsAndNames) {
  LagrangianCallbacks callbacks;
  callbacks.n = 2;
  LagrangianSystem system(callbacks);
  Eigen::MatrixXd M;
  Eigen::VectorXd F;
  system.MassMatrix(Eigen::VectorXd::Zero(2), &M);
  system.Forces(0.0, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Zero(2), &F);
  // Defaults set, not computed: tolerance 0.
  EXPECT_NEAR((M - Eigen::MatrixXd::Identity(2, 2)).norm(), 0.0, 0.0);
  EXPECT_NEAR(F.norm(), 0.0, 0.0);
  EXPECT_NEAR(system.PotentialEnergy(0.0, Eigen::VectorXd::Zero(2)), 0.0, 0.0);
  EXPECT_EQ(system.PositionName(1), "q1");
  EXPECT_EQ(system.VelocityName(1), "v1");

  callbacks.coordinate_names = {"cart.x", "cart.theta"};
  LagrangianSystem named(callbacks);
  EXPECT_EQ(named.PositionName(1), "cart.theta");
  EXPECT_EQ(named.VelocityName(1), "cart.vtheta");
}

TEST(LagrangianSystemTest, BadSystemsThrow) {
  LagrangianCallbacks callbacks;
  callbacks.n = 0;
  EXPECT_THROW(LagrangianSystem{callbacks}, std::invalid_argument);
  callbacks.n = 2;
  callbacks.coordinate_names = {"x"};
  EXPECT_THROW(LagrangianSystem{callbacks}, std::invalid_argument);
  callbacks.coordinate_names = {"x", "x"};
  EXPECT_THROW(LagrangianSystem{callbacks}, std::invalid_argument);
  callbacks.coordinate_names = {};
  callbacks.mass = [](const Eigen::VectorXd&, Eigen::MatrixXd* M) { M->setIdentity(3, 3); };
  LagrangianSystem wrong_mass(callbacks);
  Eigen::MatrixXd M;
  EXPECT_THROW(wrong_mass.MassMatrix(Eigen::VectorXd::Zero(2), &M), std::invalid_argument);
}

TEST(CallbackConstraintsTest, RowSubsetsAndOptionalCallbacks) {
  // Three rows on n = 2: g = (q₀, q₁ − t, q₀ q₁); rows 0 and 2 selected.
  ConstraintCallbacks c;
  c.rows.resize(3);
  c.rows[0].name = "a";
  c.rows[1].name = "b";
  c.rows[2].name = "c";
  c.rows[2].kind = ConstraintKind::kUnilateral;
  c.rows[2].restitution = -1.0;  // "use the global coefficient": allowed
  c.values = [](double t, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    g->resize(3);
    *g << q(0), q(1) - t, q(0) * q(1);
  };
  c.jacobian = [](double, const Eigen::VectorXd& q, Eigen::MatrixXd* G) {
    G->resize(3, 2);
    *G << 1, 0, 0, 1, q(1), q(0);
  };
  c.gamma = [](double, const Eigen::VectorXd&, const Eigen::VectorXd& v, Eigen::VectorXd* gamma) {
    gamma->resize(3);
    *gamma << 0, 0, 2 * v(0) * v(1);
  };
  c.time_derivative = [](double, const Eigen::VectorXd&, Eigen::VectorXd* g_t) {
    g_t->resize(3);
    *g_t << 0, -1, 0;
  };
  LagrangianCallbacks callbacks;
  callbacks.n = 2;
  LagrangianSystem system(callbacks);
  system.AddConstraintBlock(std::make_shared<CallbackConstraints>(c, 2));
  const Eigen::Vector2d q(2.0, 3.0);
  const Eigen::Vector2d v(-1.0, 0.5);
  const std::vector<int> rows = {0, 2};
  Eigen::VectorXd g, gamma, g_t;
  Eigen::MatrixXd G;
  system.ConstraintValues(0.5, q, rows, &g);
  system.ConstraintJacobian(0.5, q, rows, &G);
  system.ConstraintGamma(0.5, q, v, rows, &gamma);
  system.ConstraintTimeDerivative(0.5, q, std::vector<int>{1, 2}, &g_t);
  // Small integers and halves: exact in binary floating point (tolerance 0).
  EXPECT_NEAR(g(0), 2.0, 0.0);
  EXPECT_NEAR(g(1), 6.0, 0.0);
  EXPECT_NEAR(G(1, 0), 3.0, 0.0);
  EXPECT_NEAR(G(1, 1), 2.0, 0.0);
  EXPECT_NEAR(gamma(0), 0.0, 0.0);
  EXPECT_NEAR(gamma(1), -1.0, 0.0);
  EXPECT_NEAR(g_t(0), -1.0, 0.0);
  EXPECT_NEAR(g_t(1), 0.0, 0.0);
  EXPECT_EQ(system.constraint_info(2).kind, ConstraintKind::kUnilateral);
  EXPECT_EQ(system.RowsOfKind(ConstraintKind::kBilateral), (std::vector<int>{0, 1}));
}

TEST(CallbackConstraintsTest, ValidationThrows) {
  auto expect_message = [](const ConstraintCallbacks& c, int nv, const std::string& expected) {
    try {
      CallbackConstraints block(c, nv);
      ADD_FAILURE() << "no exception; expected: " << expected;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  expect_message(Stop(1.5), 1, "row 0 'stop': restitution must be in [0, 1]");
  expect_message(Stop(std::numeric_limits<double>::quiet_NaN()), 1, "row 0 'stop': restitution");
  expect_message(Stop(0.5), 0, "nv must be > 0");
  ConstraintCallbacks c = Stop(0.5);
  c.values = nullptr;
  expect_message(c, 1, "values callback is missing");
  c = Stop(0.5);
  c.jacobian = nullptr;
  expect_message(c, 1, "jacobian callback is missing");
  c = Stop(0.5);
  c.rows.push_back(c.rows[0]);
  expect_message(c, 1, "row 1 'stop': duplicate row name");
  c = Stop(0.5);
  c.rows[0].name.clear();
  expect_message(c, 1, "row 0: name must not be empty");
  // Edge values are valid: e = 0, e = 1, negative (global).
  EXPECT_NO_THROW(CallbackConstraints(Stop(0.0), 1));
  EXPECT_NO_THROW(CallbackConstraints(Stop(1.0), 1));
  EXPECT_NO_THROW(CallbackConstraints(Stop(-1.0), 1));
}

TEST(CallbackConstraintsTest, WrongCallbackSizeThrows) {
  ConstraintCallbacks c = Stop(0.5);
  c.values = [](double, const Eigen::VectorXd&, Eigen::VectorXd* g) { g->setZero(2); };
  LagrangianSystem system(Oscillator());
  system.AddConstraintBlock(std::make_shared<CallbackConstraints>(c, 1));
  Eigen::VectorXd g;
  EXPECT_THROW(system.ConstraintValues(0.0, Eigen::VectorXd::Zero(1), std::vector<int>{0}, &g),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::engine
