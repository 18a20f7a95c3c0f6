// Simulation::JointReactions of the facade (saltus/saltus.h): after each Step, the joint forces,
// torques and driver efforts of a planar pendulum, a planar driven crank (with and without a
// host force f_ext), a spatial driven crank and a bar propped on a contact against Newton-Euler
// closed forms; the error for a model without joints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "saltus/saltus.h"

namespace saltus {
namespace {

using Eigen::Vector3d;
using Eigen::VectorXd;

constexpr double kG = 9.81;

// A free pendulum: a bar of mass m = 2, length L = 1.2 (J_c = m L²/12 = 0.24), hinged at its end
// to the ground origin, released horizontally; the hinge names the bar as body_b or as body_a
// (the ground is body_b: the reaction is then reported on body_a, the bar).
std::string Pendulum(bool bar_is_body_b) {
  return std::string(
             "scene: pendulum\ngravity: [0, -9.81]\n"
             "bodies:\n  - {name: bar, mass: 2, inertia: 0.24, position: [0.6, 0, 0]}\n"
             "joints:\n  - {name: hinge, type: revolute, ") +
         (bar_is_body_b ? "body_a: ground, body_b: bar, point_b: [-0.6, 0]}\n"
                        : "body_a: bar, body_b: ground, point_a: [-0.6, 0]}\n") +
         "simulation:\n  t_end: 1.5\n  rtol: 1.0e-10\n  atol: 1.0e-12\n";
}

// After every Step the hinge force on the bar is Newton's f = m a_c + m g ŷ with
// a_c = (L/2)(θ̈ perp(e) − θ̇² e), e = (cos θ, sin θ), and θ̈ from the pivot equation
// (J_c + m L²/4) θ̈ = −m g (L/2) cos θ; the torque about the hinge point is zero.
TEST(JointReactionsTest, PlanarPendulumMatchesNewtonAfterEachStep) {
  const double m = 2.0, L = 1.2;
  double worst = 0, largest = 0;
  for (const bool bar_is_body_b : {true, false}) {
    Simulation sim(Model::FromSceneText(Pendulum(bar_is_body_b)));
    for (int k = 0; k < 15; ++k) {
      ASSERT_TRUE(sim.Step(0.1).ok());
      const JointLoads loads = sim.JointReactions();
      ASSERT_EQ(loads.joints.size(), 1u);
      EXPECT_TRUE(loads.drivers.empty());
      const JointLoad& hinge = loads.joints[0];
      EXPECT_EQ(hinge.joint, "hinge");
      EXPECT_EQ(hinge.body, "bar");
      const double th = sim.q()[2], w = sim.v()[2];
      const double th_dd = -m * kG * 0.5 * L * std::cos(th) / (m * L * L / 12.0 + m * L * L / 4.0);
      const double ex = std::cos(th), ey = std::sin(th);
      const Vector3d expected(m * 0.5 * L * (-th_dd * ey - w * w * ex),
                              m * 0.5 * L * (th_dd * ex - w * w * ey) + m * kG, 0.0);
      worst = std::max({worst, (hinge.force - expected).norm(), hinge.torque.norm()});
      largest = std::max(largest, hinge.force.norm());
    }
  }
  std::printf("facade planar pendulum: reaction error %.2e N (largest force %.1f N)\n", worst,
              largest);
  // The state lies on the joint to the projection tolerance (~1e-12 m) and the index-1 solve of
  // forces ~40 N adds round-off (as tests/tools/reaction_writer_test.cc): 1e-9 is a wide margin.
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(largest, 19.0);  // at the bottom of the swing the force exceeds m g
}

// The planar crank of tests/tools/reaction_writer_test.cc: a bar of mass m = 3, length L = 0.8
// hinged at its end to the ground origin, driven at θ = ω t (ω = 2), gravity −g ŷ, and a host
// force f_ext = (p, 0) at its centre of mass. The motion is prescribed, so Newton gives the hinge
// force f = m(−ω² r_c) + m g ŷ − f_ext and the moment balance about the hinge (no angular
// acceleration) the driving torque τ = m g c_x + c_y p, r_c = (L/2)(cos θ, sin θ) = (c_x, c_y);
// τ is both the hinge's torque about its point and the driver's effort.
TEST(JointReactionsTest, PlanarDrivenCrankWithHostForceMatchesNewtonEuler) {
  const double m = 3.0, L = 0.8, omega = 2.0;
  const std::string yaml =
      "scene: crank\ngravity: [0, -9.81]\n"
      "bodies:\n  - {name: bar, mass: 3, inertia: 0.16, position: [0.4, 0, 0], "
      "velocity: [0, 0.8, 2]}\n"
      "joints:\n  - {name: hinge, type: revolute, body_a: ground, body_b: bar, point_b: [-0.4, "
      "0]}\n"
      "drivers:\n  - {name: motor, joint: hinge, kind: angle, profile: constant_rate, rate: 2}\n"
      "simulation:\n  t_end: 2\n  rtol: 1.0e-9\n  atol: 1.0e-11\n";
  for (const double p : {0.0, 5.0}) {
    SCOPED_TRACE("host force " + std::to_string(p) + " N");
    Simulation sim(Model::FromSceneText(yaml));
    if (p != 0.0) sim.SetExternalForce(Eigen::Vector3d(p, 0.0, 0.0));
    double worst_force = 0, worst_torque = 0;
    for (int k = 0; k < 20; ++k) {
      ASSERT_TRUE(sim.Step(0.1).ok());
      const JointLoads loads = sim.JointReactions();
      ASSERT_EQ(loads.joints.size(), 1u);
      ASSERT_EQ(loads.drivers.size(), 1u);
      EXPECT_EQ(loads.drivers[0].driver, "motor");
      EXPECT_EQ(loads.drivers[0].joint, "hinge");
      const double th = omega * sim.t();
      const double cx = 0.5 * L * std::cos(th), cy = 0.5 * L * std::sin(th);
      const Vector3d force(-m * omega * omega * cx - p, -m * omega * omega * cy + m * kG, 0.0);
      const double tau = m * kG * cx + cy * p;
      const JointLoad& hinge = loads.joints[0];
      worst_force = std::max(worst_force, (hinge.force - force).norm());
      worst_torque = std::max({worst_torque, (hinge.torque - Vector3d(0, 0, tau)).norm(),
                               std::abs(loads.drivers[0].effort - tau)});
    }
    std::printf("facade planar driven crank, f_ext %.0f N: errors force %.2e N, torque %.2e N m\n",
                p, worst_force, worst_torque);
    // Prescribed motion: the state is the closed form to the projection tolerance and forces of
    // ~30 N follow by one index-1 solve (measured ~1e-13 by the writer's test): 1e-10.
    EXPECT_LT(worst_force, 1e-10);
    EXPECT_LT(worst_torque, 1e-10);
  }
}

// The spatial crank of tests/tools/reaction_writer_test.cc: the bar turns about the world z axis
// at θ = ω t; the joint force on it is m (−ω² r_c + g ŷ) and the torque about the pivot
// (0, 0, m g c_x), carried by the driver (effort m g c_x); z is a principal axis, so no
// gyroscopic torque.
TEST(JointReactionsTest, SpatialDrivenCrankMatchesNewtonEuler) {
  const double m = 3.0, L = 0.8, omega = 2.0;
  const std::string yaml =
      "scene: crank\ndimension: 3\ngravity: [0, -9.81, 0]\n"
      "bodies:\n  - {name: bar, mass: 3, inertia: [0.01, 0.16, 0.16], com: [0.4, 0, 0]}\n"
      "joints:\n  - {name: hinge, type: revolute, body_a: ground, body_b: bar, "
      "ref_a: [1, 0, 0], ref_b: [1, 0, 0]}\n"
      "drivers:\n  - {name: motor, joint: hinge, kind: angle, profile: constant_rate, rate: 2}\n"
      "simulation:\n  t_end: 2\n  rtol: 1.0e-9\n  atol: 1.0e-11\n";
  Simulation sim(Model::FromSceneText(yaml));
  double worst_force = 0, worst_torque = 0;
  for (int k = 0; k < 20; ++k) {
    ASSERT_TRUE(sim.Step(0.1).ok());
    const JointLoads loads = sim.JointReactions();
    ASSERT_EQ(loads.joints.size(), 1u);
    ASSERT_EQ(loads.drivers.size(), 1u);
    EXPECT_EQ(loads.joints[0].joint, "hinge");
    EXPECT_EQ(loads.joints[0].body, "bar");
    const double th = omega * sim.t();
    const double cx = 0.5 * L * std::cos(th), cy = 0.5 * L * std::sin(th);
    const Vector3d force(-m * omega * omega * cx, -m * omega * omega * cy + m * kG, 0.0);
    worst_force = std::max(worst_force, (loads.joints[0].force - force).norm());
    worst_torque =
        std::max({worst_torque, (loads.joints[0].torque - Vector3d(0, 0, m * kG * cx)).norm(),
                  std::abs(loads.drivers[0].effort - m * kG * cx)});
  }
  std::printf("facade spatial driven crank: errors force %.2e N, torque %.2e N m\n", worst_force,
              worst_torque);
  // As the planar crank (the writer's test measures ~2e-13): 1e-10.
  EXPECT_LT(worst_force, 1e-10);
  EXPECT_LT(worst_torque, 1e-10);
}

// A bar (m = 2, L = 1.2) hinged at its left end to the ground origin and resting horizontally with
// its right end on a floor contact: statics gives the contact force N = m g / 2 (moments about the
// hinge, N L = m g L/2) and the hinge force (0, m g / 2) with no torque. The closed contact is in
// the index-1 solve (its row is ignored by the reduction, its λ carries the other half).
TEST(JointReactionsTest, BarOnAHingeAndAClosedContactSharesItsWeight) {
  const double m = 2.0;
  Simulation sim(Model::FromSceneText(
      "scene: propped_bar\ngravity: [0, -9.81]\n"
      "bodies:\n  - {name: bar, mass: 2, inertia: 0.24, position: [0.6, 0, 0]}\n"
      "joints:\n  - {name: hinge, type: revolute, body_a: ground, body_b: bar, point_b: [-0.6, "
      "0]}\n"
      "contacts:\n  - {name: prop, type: point_line, body_a: ground, body_b: bar, point_b: [0.6, "
      "0], restitution: 0}\n"
      "simulation:\n  t_end: 1\n"));
  double worst = 0;
  for (int k = 0; k < 5; ++k) {
    ASSERT_TRUE(sim.Step(0.1).ok());
    ASSERT_EQ(sim.CurrentIndexSets().i2.size(), 1u);  // the prop stays closed
    const JointLoads loads = sim.JointReactions();
    ASSERT_EQ(loads.joints.size(), 1u);
    const Eigen::VectorXd lambda = sim.AllMultipliers();
    const double contact = lambda[sim.CurrentIndexSets().i2[0]];
    worst = std::max({worst, (loads.joints[0].force - Vector3d(0, 0.5 * m * kG, 0)).norm(),
                      loads.joints[0].torque.norm(), std::abs(contact - 0.5 * m * kG)});
  }
  std::printf("facade propped bar: hinge and contact force errors %.2e N\n", worst);
  // A static state at rest (q on the constraints to the projection tolerance): the forces of ~10 N
  // are one index-1 solve, exact to round-off; 1e-10 is a wide margin.
  EXPECT_LT(worst, 1e-10);
}

// A multibody model without joints has no entries; a Lagrangian model is refused with a
// StateError (not a crash) and the simulation stays usable.
TEST(JointReactionsTest, ModelsWithoutJoints) {
  Simulation ball(Model::FromSceneText(
      "scene: ball\ngravity: [0, -9.81]\n"
      "bodies:\n  - {name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}\n"
      "simulation:\n  t_end: 1\n"));
  ASSERT_TRUE(ball.Step(0.1).ok());
  const JointLoads none = ball.JointReactions();
  EXPECT_TRUE(none.joints.empty());
  EXPECT_TRUE(none.drivers.empty());

  engine::LagrangianCallbacks dyn;
  dyn.n = 1;  // M = I, F = 0
  Simulation mass(Model::FromLagrangian(dyn, {}, VectorXd::Zero(1), VectorXd::Zero(1)));
  EXPECT_THROW(mass.JointReactions(), StateError);
  try {
    mass.JointReactions();
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("not a planar or spatial multibody"), std::string::npos);
  }
  EXPECT_TRUE(mass.Step(0.1).ok());
}

}  // namespace
}  // namespace saltus
