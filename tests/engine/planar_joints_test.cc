// The planar joint and driver library beyond revolute/prismatic (engine/planar_model.h):
// distance, fixed and point_on_line joints and TimeProfile drivers (angle on a revolute,
// displacement on a prismatic). G, ∂g/∂t and γ against finite differences, the row layout
// (PlanarModel::JointRows / DriverRow), the builder's errors, and mechanisms run through the
// event loop against closed forms or an independent ODE solution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/planar_model.h"
#include "engine/topology.h"
#include "events/simulation.h"
#include "tests/engine/planar_test_models.h"

namespace saltus::engine {
namespace {

using testing::AllRows;
constexpr double kEps = std::numeric_limits<double>::epsilon();

using testing::Body;
using testing::GammaByDifference;
using testing::JacobianByDifference;
using testing::Joint;

TimeProfile ConstantRate(double value0, double rate) {
  TimeProfile p;
  p.kind = TimeProfile::Kind::kConstantRate;
  p.value0 = value0;
  p.rate = rate;
  return p;
}
TimeProfile Polynomial(std::vector<double> coefficients) {
  TimeProfile p;
  p.kind = TimeProfile::Kind::kPolynomial;
  p.coefficients = std::move(coefficients);
  return p;
}
TimeProfile Sine(double value0, double amplitude, double frequency, double phase) {
  TimeProfile p;
  p.kind = TimeProfile::Kind::kSine;
  p.value0 = value0;
  p.amplitude = amplitude;
  p.frequency = frequency;
  p.phase = phase;
  return p;
}
PlanarDriver Driver(const std::string& name, int joint, DriverKind kind, TimeProfile profile) {
  PlanarDriver d;
  d.name = name;
  d.joint = joint;
  d.kind = kind;
  d.profile = std::move(profile);
  return d;
}

// Every new row type with the ground on either side and off-centre points, and each profile on
// each driver kind, so that every term of G, γ and ∂g/∂t is exercised. The rows are not meant
// to be consistent.
std::shared_ptr<const PlanarModel> NewJointZoo() {
  PlanarModelBuilder builder;
  const int A = builder.AddBody(Body("A", 1.0, 0.1));
  const int B = builder.AddBody(Body("B", 2.0, 0.2));
  const int C = builder.AddBody(Body("C", 3.0, 0.3));
  using T = PlanarJointType;
  PlanarJoint j = Joint("dist_gA", T::kDistance, kGround, A, {0.3, -0.2}, {0.1, 0.4});
  j.length = 1.3;
  builder.AddJoint(j);
  j = Joint("dist_AB", T::kDistance, A, B, {0.5, 0.2}, {-0.3, 0.1});
  j.length = 0.7;
  builder.AddJoint(j);
  j = Joint("dist_Cg", T::kDistance, C, kGround, {-0.4, 0.25}, {1.0, -1.0});
  j.length = 2.0;
  builder.AddJoint(j);
  j = Joint("weld_gA", T::kFixed, kGround, A, {0.2, 0.1}, {-0.1, 0.3});
  j.angle0 = 0.3;
  builder.AddJoint(j);
  j = Joint("weld_BC", T::kFixed, B, C, {0.4, -0.3}, {0.2, 0.2});
  j.angle0 = -0.5;
  builder.AddJoint(j);
  j = Joint("pol_AB", T::kPointOnLine, A, B, {0.2, -0.1}, {0.1, 0.3});
  j.axis_a = Eigen::Vector2d(1.0, 2.0);
  builder.AddJoint(j);
  j = Joint("pol_gC", T::kPointOnLine, kGround, C, {1.0, 2.0}, {0.2, 0.0});
  j.axis_a = Eigen::Vector2d(0.6, 0.8);
  builder.AddJoint(j);
  j = Joint("pol_Cg", T::kPointOnLine, C, kGround, {-0.3, 0.1}, {0.5, 0.5});
  j.axis_a = Eigen::Vector2d(-1.0, 0.5);
  builder.AddJoint(j);
  const int rev_AB = builder.AddJoint(Joint("rev_AB", T::kRevolute, A, B, {0.5, 0.2}, {-0.3, 0.1}));
  const int rev_gC =
      builder.AddJoint(Joint("rev_gC", T::kRevolute, kGround, C, {0.3, -0.2}, {0.1, 0.4}));
  j = Joint("pri_AB", T::kPrismatic, A, B, {0.2, -0.1}, {0.1, 0.3});
  j.axis_a = Eigen::Vector2d(1.0, 2.0);
  const int pri_AB = builder.AddJoint(j);
  j = Joint("pri_Cg", T::kPrismatic, C, kGround, {-0.3, 0.1}, {0.5, 0.5});
  j.axis_a = Eigen::Vector2d(-1.0, 0.5);
  const int pri_Cg = builder.AddJoint(j);
  j = Joint("pri_gB", T::kPrismatic, kGround, B, {1.0, 2.0}, {0.2, 0.0});
  j.axis_a = Eigen::Vector2d(0.6, 0.8);
  const int pri_gB = builder.AddJoint(j);
  j = Joint("old_BC", T::kAngleDriver, B, C, {0, 0}, {0, 0});
  j.angle0 = 0.2;
  j.rate = 1.7;
  builder.AddJoint(j);
  builder.AddDriver(Driver("ang_rate", rev_AB, DriverKind::kAngle, ConstantRate(0.2, 1.3)));
  builder.AddDriver(
      Driver("ang_poly", rev_gC, DriverKind::kAngle, Polynomial({0.1, -0.5, 0.7, 0.3})));
  builder.AddDriver(Driver("ang_sine", rev_AB, DriverKind::kAngle, Sine(0.1, 0.6, 3.0, 0.2)));
  builder.AddDriver(
      Driver("disp_rate", pri_AB, DriverKind::kDisplacement, ConstantRate(-0.4, 0.8)));
  builder.AddDriver(
      Driver("disp_poly", pri_Cg, DriverKind::kDisplacement, Polynomial({0.3, 0.2, -1.1, 0.4})));
  builder.AddDriver(
      Driver("disp_sine", pri_gB, DriverKind::kDisplacement, Sine(0.5, 0.25, 2.5, -0.7)));
  return builder.Build();
}

Eigen::VectorXd RandomVector(int n, double scale) { return scale * Eigen::VectorXd::Random(n); }

TEST(PlanarNewJoints, RowLayoutNamesAndRanges) {
  PlanarMultibodySystem system(NewJointZoo());
  const PlanarModel& model = system.model();
  const std::vector<std::string> expected = {
      "dist_gA.distance", "dist_AB.distance", "dist_Cg.distance", "weld_gA.x",     "weld_gA.y",
      "weld_gA.angle",    "weld_BC.x",        "weld_BC.y",        "weld_BC.angle", "pol_AB.normal",
      "pol_gC.normal",    "pol_Cg.normal",    "rev_AB.x",         "rev_AB.y",      "rev_gC.x",
      "rev_gC.y",         "pri_AB.angle",     "pri_AB.normal",    "pri_Cg.angle",  "pri_Cg.normal",
      "pri_gB.angle",     "pri_gB.normal",    "old_BC.angle",     "ang_rate",      "ang_poly",
      "ang_sine",         "disp_rate",        "disp_poly",        "disp_sine"};
  ASSERT_EQ(system.num_constraints(), static_cast<int>(expected.size()));
  ASSERT_EQ(model.num_joint_rows(), system.num_constraints());
  for (int r = 0; r < system.num_constraints(); ++r) {
    EXPECT_EQ(system.constraint_info(r).name, expected[static_cast<std::size_t>(r)]);
    EXPECT_EQ(system.constraint_info(r).kind, ConstraintKind::kBilateral);
  }
  // JointRows: contiguous, in joint order, each row named after its joint.
  int next = 0;
  for (int j = 0; j < static_cast<int>(model.joints().size()); ++j) {
    const PlanarRowRange range = model.JointRows(j);
    EXPECT_EQ(range.first, next);
    EXPECT_EQ(range.count, PlanarModel::NumRows(model.joints()[static_cast<std::size_t>(j)].type));
    for (int r = range.first; r < range.first + range.count; ++r) {
      EXPECT_EQ(system.constraint_info(r).name.rfind(
                    model.joints()[static_cast<std::size_t>(j)].name + ".", 0),
                0u);
    }
    next += range.count;
  }
  for (int d = 0; d < static_cast<int>(model.drivers().size()); ++d) {
    EXPECT_EQ(model.DriverRow(d), next + d);
    EXPECT_EQ(system.constraint_info(model.DriverRow(d)).name,
              model.drivers()[static_cast<std::size_t>(d)].name);
  }
  EXPECT_THROW(model.JointRows(-1), std::out_of_range);
  EXPECT_THROW(model.JointRows(14), std::out_of_range);
  EXPECT_THROW(model.DriverRow(6), std::out_of_range);
  // point_on_line axes are normalized like the prismatic ones.
  EXPECT_NEAR(model.joints()[5].axis_a.norm(), 1.0, 4 * kEps);
}

// Central differences with step h: truncation h²/6·|g'''| and round-off ε·|g|/h per entry.
// With q of scale 2 and lever arms ≤ 1.3 m the rows are |g| ≲ 30 (the distance rows are
// quadratic: ‖d‖²/(2L) ≤ 6²/1.4) and |g'''| ≲ 10, so at h = 1e-6 the error is below
// 30·2.2e-16/1e-6 + 1e-12·2 ≈ 7e-9: tolerance 2e-8.
constexpr double kFdStep = 1e-6;
constexpr double kFdTol = 2e-8;

TEST(PlanarNewJoints, JacobianMatchesCentralDifferences) {
  PlanarMultibodySystem system(NewJointZoo());
  const std::vector<int> rows = AllRows(system);
  std::srand(21);
  double worst = 0.0;
  for (int trial = 0; trial < 8; ++trial) {
    const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
    const double t = 0.37 * trial;
    Eigen::MatrixXd G;
    system.ConstraintJacobian(t, q, rows, &G);
    const Eigen::MatrixXd fd = JacobianByDifference(system, t, q, rows, kFdStep);
    for (int j = 0; j < system.nq(); ++j) {
      const auto column = fd.col(j);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto r = static_cast<Eigen::Index>(i);
        EXPECT_NEAR(G(r, j), column(r), kFdTol)
            << system.constraint_info(rows[i]).name << ", column " << j;
        worst = std::max(worst, std::abs(G(r, j) - column(r)));
      }
    }
  }
  std::cout << "G vs central differences: worst " << worst << " (tolerance " << kFdTol << ")\n";
}

TEST(PlanarNewJoints, GammaMatchesDifferenceOfGvAlongTheMotion) {
  // With v fixed, d/ds [G(q + s v, t + s) v + ∂g/∂t(q + s v, t + s)] at s = 0 is g̈ with v̇ = 0,
  // i.e. γ (including the drivers' −φ̈). Round-off ε·|ġ|/h with |ġ| ≲ 100 (v of scale 3)
  // gives ≈ 2e-8; truncation h²/6·|ġ'''| ≲ 1e-12·1e3. Tolerance 1e-7.
  constexpr double kGammaTol = 1e-7;
  PlanarMultibodySystem system(NewJointZoo());
  const std::vector<int> rows = AllRows(system);
  std::srand(22);
  double worst = 0.0;
  for (int trial = 0; trial < 8; ++trial) {
    const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
    const Eigen::VectorXd v = RandomVector(system.nv(), 3.0);
    const double t = 0.2 + 0.5 * trial;
    Eigen::VectorXd gamma;
    system.ConstraintGamma(t, q, v, rows, &gamma);
    const Eigen::VectorXd fd = GammaByDifference(system, t, q, v, rows, kFdStep);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      EXPECT_NEAR(gamma(r), fd(r), kGammaTol) << system.constraint_info(rows[i]).name;
      worst = std::max(worst, std::abs(gamma(r) - fd(r)));
    }
    EXPECT_GT(gamma.lpNorm<Eigen::Infinity>(), 1.0);  // the check is not vacuous
  }
  std::cout << "gamma vs differences of G v + g_t: worst " << worst << " (tolerance " << kGammaTol
            << ")\n";
}

TEST(PlanarNewJoints, JacobianAndGammaInOnePassAreTheSeparateValues) {
  // ConstraintJacobianAndGamma shares each joint's points between G and γ; the operations on
  // each entry are those of ConstraintJacobian and ConstraintGamma, so the values are equal to
  // the bit (tolerance 0), for all rows and for a subset whose joints' rows are split.
  PlanarMultibodySystem system(NewJointZoo());
  const std::vector<int> all = AllRows(system);
  const std::vector<int> subset = {1, 4, 5, 9, 13, 17, 20, 22, 24, 28};
  std::srand(23);
  for (int trial = 0; trial < 4; ++trial) {
    const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
    const Eigen::VectorXd v = RandomVector(system.nv(), 3.0);
    const double t = 0.3 + 0.4 * trial;
    for (const std::vector<int>* rows : {&all, &subset}) {
      Eigen::MatrixXd G, G_pair;
      Eigen::VectorXd gamma, gamma_pair;
      system.ConstraintJacobian(t, q, *rows, &G);
      system.ConstraintGamma(t, q, v, *rows, &gamma);
      system.ConstraintJacobianAndGamma(t, q, v, *rows, &G_pair, &gamma_pair);
      ASSERT_EQ(G_pair.rows(), static_cast<Eigen::Index>(rows->size()));
      ASSERT_EQ(G_pair.cols(), system.nv());
      ASSERT_EQ(gamma_pair.size(), static_cast<Eigen::Index>(rows->size()));
      EXPECT_EQ((G_pair - G).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_EQ((gamma_pair - gamma).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_GT(gamma.lpNorm<Eigen::Infinity>(), 1.0);  // not vacuous: v ≠ 0 gives γ ≠ 0
    }
  }
}

TEST(PlanarNewJoints, DriverTimeTermsMatchDifferencesInTime) {
  // At fixed q: ∂g/∂t against (g(t+h) − g(t−h))/(2h) and, with v = 0, γ (its time part −φ̈
  // only: every kinematic term of γ has a factor of v) against (g(t+h) − 2g(t) + g(t−h))/h².
  // h = 1e-4: first difference truncation h²/6·|φ'''| ≲ 1e-8·20 (sine: A ω³ = 0.6·27), round-off
  // ε|g|/h ≈ 2e-16·30/1e-4 = 7e-11; second difference truncation h²/12·|φ''''| ≲ 1e-9·50,
  // round-off 4ε|g|/h² ≈ 3e-6. Tolerances 1e-6 and 1e-5.
  constexpr double h = 1e-4;
  constexpr double kFirstTol = 1e-6;
  constexpr double kSecondTol = 1e-5;
  PlanarMultibodySystem system(NewJointZoo());
  const std::vector<int> rows = AllRows(system);
  std::srand(23);
  const Eigen::VectorXd v0 = Eigen::VectorXd::Zero(system.nv());
  double worst_first = 0.0, worst_second = 0.0;
  for (int trial = 0; trial < 4; ++trial) {
    const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
    const double t = 0.3 + 0.9 * trial;
    Eigen::VectorXd g_t, gamma, gp, g0, gm;
    system.ConstraintTimeDerivative(t, q, rows, &g_t);
    system.ConstraintGamma(t, q, v0, rows, &gamma);
    system.ConstraintValues(t + h, q, rows, &gp);
    system.ConstraintValues(t, q, rows, &g0);
    system.ConstraintValues(t - h, q, rows, &gm);
    const Eigen::VectorXd first = (gp - gm) / (2.0 * h);
    const Eigen::VectorXd second = (gp - 2.0 * g0 + gm) / (h * h);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      EXPECT_NEAR(g_t(r), first(r), kFirstTol) << system.constraint_info(rows[i]).name;
      EXPECT_NEAR(gamma(r), second(r), kSecondTol) << system.constraint_info(rows[i]).name;
      worst_first = std::max(worst_first, std::abs(g_t(r) - first(r)));
      worst_second = std::max(worst_second, std::abs(gamma(r) - second(r)));
    }
    // The profiles are exact: −φ̇ and −φ̈ in closed form at the driver rows (23 … 28).
    const double c = std::cos(3.0 * t + 0.2), s = std::sin(3.0 * t + 0.2);
    EXPECT_NEAR(g_t(23), -1.3, 1e-15);
    EXPECT_NEAR(g_t(24), -(-0.5 + 1.4 * t + 0.9 * t * t), 1e-13);  // a few roundings of O(10)
    EXPECT_NEAR(g_t(25), -0.6 * 3.0 * c, 1e-14);
    EXPECT_NEAR(gamma(24), -(1.4 + 1.8 * t), 1e-13);
    EXPECT_NEAR(gamma(25), 0.6 * 9.0 * s, 1e-14);
    EXPECT_NEAR(gamma(23), 0.0, 1e-15);
  }
  std::cout << "driver time terms: dg/dt worst " << worst_first << " (tolerance " << kFirstTol
            << "), gamma worst " << worst_second << " (tolerance " << kSecondTol << ")\n";
}

TEST(PlanarNewJoints, ValuesOfAssembledJointsAreZero) {
  // A configuration built to satisfy every new row: each row is zero up to round-off.
  PlanarModelBuilder builder;
  PlanarBody a = Body("a", 1.0, 1.0), b = Body("b", 1.0, 1.0);
  a.q0 << 0.4, -0.3, 0.7;
  b.q0 << 1.1, 0.5, -0.4;
  const int ia = builder.AddBody(a);
  const int ib = builder.AddBody(b);
  const Eigen::Vector2d s_a(0.2, -0.1);
  // Distance with L from q0 (length 0).
  builder.AddJoint(Joint("rod", PlanarJointType::kDistance, ia, ib, s_a, {0.3, 0.1}));
  // Weld: point_b chosen to coincide with a's point, θ₀ the current relative angle.
  const Eigen::Vector2d p = a.q0.head<2>() + Eigen::Rotation2Dd(a.q0(2)) * s_a;
  PlanarJoint weld = Joint("weld", PlanarJointType::kFixed, ia, ib, s_a,
                           Eigen::Rotation2Dd(-b.q0(2)) * (p - b.q0.head<2>()));
  weld.angle0 = b.q0(2) - a.q0(2);
  builder.AddJoint(weld);
  // Point on line: b's centre on the line through a's point along the direction to it.
  PlanarJoint slot = Joint("slot", PlanarJointType::kPointOnLine, ia, ib, s_a, {0.0, 0.0});
  slot.axis_a = 3.0 * (Eigen::Rotation2Dd(-a.q0(2)) * (b.q0.head<2>() - p));
  builder.AddJoint(slot);
  auto model = builder.Build();
  const Eigen::Vector2d pb =
      b.q0.head<2>() + Eigen::Rotation2Dd(b.q0(2)) * Eigen::Vector2d(0.3, 0.1);
  EXPECT_NEAR(model->joints()[0].length, (pb - p).norm(), 1e-15);
  PlanarMultibodySystem system(model);
  Eigen::VectorXd g;
  system.ConstraintValues(0.0, model->InitialPositions(), AllRows(system), &g);
  ASSERT_EQ(g.size(), 5);
  EXPECT_LT(g.lpNorm<Eigen::Infinity>(), 1e-15);  // O(1) quantities, a few roundings each
}

TEST(PlanarNewJoints, TopologyCountsNewJointsAsEdgesAndDriversAsRows) {
  // Crank (revolute to the ground), rod (distance) to a slider on a ground prismatic, driven; a
  // second slider welded to the first and a pin in a slot of it. Edges: 5 joints (the driver is
  // not one) on V = 4 bodies + ground, one component: loops = E − V + C = 5 − 5 + 1 = 1 (ground,
  // crank, slider). Rows 2 + 1 + 2 + 3 + 1 + 1 (driver) = 10, full rank at this regular
  // configuration, so 12 − 10 = 2 degrees of freedom (the pin's slide and spin).
  PlanarModelBuilder builder;
  PlanarBody crank = Body("crank", 1.0, 0.1), slider = Body("slider", 1.0, 0.1);
  PlanarBody arm = Body("arm", 1.0, 0.1), pin = Body("pin", 1.0, 0.1);
  crank.q0 << 0.0, 0.05, std::numbers::pi / 2;
  slider.q0 << 0.3, 0.0, 0.0;
  arm.q0 << 0.3, 0.2, 0.0;
  pin.q0 << 0.5, 0.2, 0.0;
  const int ic = builder.AddBody(crank), is = builder.AddBody(slider);
  const int ia = builder.AddBody(arm), ip = builder.AddBody(pin);
  using T = PlanarJointType;
  builder.AddJoint(Joint("pivot", T::kRevolute, kGround, ic, {0, 0}, {-0.05, 0}));
  builder.AddJoint(Joint("rod", T::kDistance, ic, is, {0.05, 0}, {0, 0}));
  const int guide = builder.AddJoint(Joint("guide", T::kPrismatic, kGround, is, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("weld", T::kFixed, is, ia, {0, 0.2}, {0, 0}));
  builder.AddJoint(Joint("slot", T::kPointOnLine, ia, ip, {0, 0}, {0, 0}));
  builder.AddDriver(Driver("push", guide, DriverKind::kDisplacement, ConstantRate(0.3, 0.1)));
  PlanarMultibodySystem system(builder.Build());
  const TopologyReport report = AnalyzeTopology(system, 0.0, system.model().InitialPositions());
  EXPECT_EQ(report.num_components, 1);
  EXPECT_EQ(report.num_loops, 1);
  ASSERT_EQ(report.loops.size(), 1u);
  EXPECT_EQ(report.loops[0].joints.size(), 3u);  // pivot, rod, guide
  EXPECT_TRUE(report.unconnected_bodies.empty());
  EXPECT_EQ(report.num_rows, 10);  // with the driver's row
  EXPECT_EQ(report.rank, 10);
  EXPECT_EQ(report.redundant_rows, 0);
  EXPECT_EQ(report.degrees_of_freedom, 2);
}

// ---- Builder errors -----------------------------------------------------------------------

// Runs `add` on a builder holding a body "a", a revolute "pin", a prismatic "slide", a distance
// "rod", a fixed "weld", a point_on_line "slot" and an angle_driver "old" (joints 0 … 5), and
// returns the message it throws ("" if none).
template <class F>
std::string BuilderError(F add) {
  PlanarModelBuilder builder;
  PlanarBody body = Body("a", 1.0, 1.0);
  body.q0 << 1.0, 0.0, 0.0;
  const int a = builder.AddBody(body);
  using T = PlanarJointType;
  builder.AddJoint(Joint("pin", T::kRevolute, kGround, a, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("slide", T::kPrismatic, kGround, a, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("rod", T::kDistance, kGround, a, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("weld", T::kFixed, kGround, a, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("slot", T::kPointOnLine, kGround, a, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("old", T::kAngleDriver, kGround, a, {0, 0}, {0, 0}));
  try {
    add(builder, a);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PlanarNewJoints, BuilderRejectsDriversOnJointsThatCannotTakeThem) {
  using K = DriverKind;
  const auto driver_error = [](int joint, K kind) {
    return BuilderError([&](PlanarModelBuilder& b, int) {
      b.AddDriver(Driver("drive", joint, kind, ConstantRate(0.0, 1.0)));
    });
  };
  EXPECT_EQ(driver_error(0, K::kAngle), "");
  EXPECT_EQ(driver_error(1, K::kDisplacement), "");
  EXPECT_EQ(driver_error(1, K::kAngle),
            "driver 'drive': an angle driver needs a revolute joint; 'slide' is not one");
  EXPECT_EQ(driver_error(0, K::kDisplacement),
            "driver 'drive': a displacement driver needs a prismatic joint; 'pin' is not one");
  for (int joint : {2, 3, 4, 5}) {
    for (K kind : {K::kAngle, K::kDisplacement}) {
      const std::string message = driver_error(joint, kind);
      EXPECT_EQ(message.rfind("driver 'drive': a", 0), 0u) << message;
      EXPECT_NE(message.find("is not one"), std::string::npos) << message;
    }
  }
  EXPECT_EQ(driver_error(6, K::kAngle), "driver 'drive': joint index 6 outside [0, 6)");
  EXPECT_EQ(driver_error(-1, K::kAngle), "driver 'drive': joint index -1 outside [0, 6)");
}

TEST(PlanarNewJoints, BuilderRejectsBadJointsAndDriversNamingThem) {
  using T = PlanarJointType;
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int a) {
              PlanarJoint j = Joint("r2", T::kDistance, kGround, a, {0, 0}, {0, 0});
              j.length = -0.5;
              b.AddJoint(j);
            }),
            "joint 'r2': length must be > 0 (or 0: from q0), got -0.5");
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int a) {
              b.AddJoint(Joint("r2", T::kDistance, kGround, a, {1.0, 0.0}, {0, 0}));
            }),
            "joint 'r2': length is 0 and the two points coincide in the initial configuration: "
            "give length > 0");
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int a) {
              PlanarJoint j = Joint("r2", T::kDistance, kGround, a, {0, 0}, {0, 0});
              j.length = std::numeric_limits<double>::infinity();
              b.AddJoint(j);
            }),
            "joint 'r2': length must be finite, got inf");
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int a) {
              PlanarJoint j = Joint("s2", T::kPointOnLine, kGround, a, {0, 0}, {0, 0});
              j.axis_a = Eigen::Vector2d::Zero();
              b.AddJoint(j);
            }),
            "joint 's2': axis_a must be non-zero, got (0, 0)");
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int) {
              b.AddDriver(Driver("drive", 0, DriverKind::kAngle, ConstantRate(0.0, 1.0)));
              b.AddDriver(Driver("drive", 0, DriverKind::kAngle, ConstantRate(0.0, 1.0)));
            }),
            "driver 'drive': duplicate name");
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int) {
              b.AddDriver(Driver("", 0, DriverKind::kAngle, ConstantRate(0.0, 1.0)));
            }),
            "driver #0: name must not be empty");
  EXPECT_EQ(BuilderError([](PlanarModelBuilder& b, int) {
              b.AddDriver(Driver("drive", 0, DriverKind::kAngle,
                                 Sine(0.0, 1.0, std::numeric_limits<double>::quiet_NaN(), 0.0)));
            }),
            "driver 'drive': profile frequency must be finite, got nan");
}

// ---- Mechanisms through the event loop ----------------------------------------------------

events::SimulationOptions TightOptions() {
  events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-10;
  options.integrator_options.atol = 1e-12;
  return options;
}

// RK4 for y' = f(y) (the reference ODE solutions), n steps of h.
template <class F>
Eigen::Vector2d Rk4(F f, Eigen::Vector2d y, double h, int n) {
  for (int k = 0; k < n; ++k) {
    const Eigen::Vector2d k1 = f(y);
    const Eigen::Vector2d k2 = f(y + 0.5 * h * k1);
    const Eigen::Vector2d k3 = f(y + 0.5 * h * k2);
    const Eigen::Vector2d k4 = f(y + h * k3);
    y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  return y;
}

TEST(PlanarNewJointMechanisms, PendulumOnADistanceJointFollowsThePointPendulumOde) {
  // A body hung by a massless rod of length L (distance joint from the ground origin to its
  // centre of mass): the rod force passes through the centre, so θ̇ stays constant and the
  // centre is a point pendulum φ̈ = −(g/L) sin φ, r = L (sin φ, −cos φ). Reference: RK4 at
  // h = 1e-4 (error ≈ h⁴ φ⁽⁵⁾ T ≲ 1e-14).
  constexpr double L = 0.8, g = 9.81, phi0 = 1.2, phi_dot0 = -0.7, spin = 2.5;
  PlanarModelBuilder builder;
  PlanarBody bob = Body("bob", 1.7, 0.2);
  bob.q0 << L * std::sin(phi0), -L * std::cos(phi0), 0.3;
  bob.v0 << L * phi_dot0 * std::cos(phi0), L * phi_dot0 * std::sin(phi0), spin;
  const int ib = builder.AddBody(bob);
  builder.SetGravity(Eigen::Vector2d(0.0, -g));
  builder.AddJoint(Joint("rod", PlanarJointType::kDistance, kGround, ib, {0, 0}, {0, 0}));
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  EXPECT_NEAR(system->model().joints()[0].length, L, 1e-15);  // from q0
  events::Simulation sim(system, TightOptions());
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  const auto pendulum = [&](const Eigen::Vector2d& y) {
    return Eigen::Vector2d(y(1), -g / L * std::sin(y(0)));
  };
  Eigen::Vector2d y(phi0, phi_dot0);
  double worst = 0.0;
  for (int k = 1; k <= 4; ++k) {
    const double t = 0.5 * k;
    ASSERT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished);
    y = Rk4(pendulum, y, 1e-4, 5000);
    const Eigen::Vector2d r(L * std::sin(y(0)), -L * std::cos(y(0)));
    const Eigen::Vector2d r_dot = L * y(1) * Eigen::Vector2d(std::cos(y(0)), std::sin(y(0)));
    const double err =
        std::max({(sim.q().head<2>() - r).norm(), (sim.v().head<2>() - r_dot).norm(),
                  std::abs(sim.q()(2) - (0.3 + spin * t)), std::abs(sim.v()(2) - spin)});
    worst = std::max(worst, err);
    // rtol 1e-10 / atol 1e-12 on O(1) states over 2 s (≈ 1 period): a global error of a few
    // hundred times rtol at most, ≲ 1e-8 (measured 1.8e-12).
    EXPECT_LT(err, 1e-8) << "t = " << t;
  }
  std::cout << "distance-joint pendulum vs RK4 over 2 s: worst state error " << worst << "\n";
}

TEST(PlanarNewJointMechanisms, WeldedCompoundPendulumMovesAsOneBody) {
  // Two bodies welded (fixed joint, relative angle 0.4) hanging from a ground revolute: one rigid
  // body, (J₁ + m₁ℓ₁² + J₂ + m₂ℓ₂²) θ̈ = −(m₁ℓ₁ + m₂ℓ₂) g sin θ with the centres on the
  // pendulum's axis at ℓ₁, ℓ₂ from the pivot. Reference: RK4 at h = 1e-4.
  constexpr double m1 = 2.0, J1 = 0.3, l1 = 0.7, m2 = 1.2, J2 = 0.05, l2 = 1.3, g = 9.81;
  constexpr double theta0 = 0.9, omega0 = 1.1, weld_angle = 0.4;
  const auto pos = [](double l, double th) {
    return Eigen::Vector2d(l * std::sin(th), -l * std::cos(th));
  };
  const auto vel = [](double l, double th, double w) {
    return Eigen::Vector2d(l * w * std::cos(th), l * w * std::sin(th));
  };
  PlanarModelBuilder builder;
  PlanarBody a = Body("a", m1, J1), b = Body("b", m2, J2);
  a.q0 << pos(l1, theta0), theta0;
  a.v0 << vel(l1, theta0, omega0), omega0;
  b.q0 << pos(l2, theta0), theta0 + weld_angle;
  b.v0 << vel(l2, theta0, omega0), omega0;
  const int ia = builder.AddBody(a);
  const int ib = builder.AddBody(b);
  builder.SetGravity(Eigen::Vector2d(0.0, -g));
  builder.AddJoint(Joint("pivot", PlanarJointType::kRevolute, kGround, ia, {0, 0}, {0, l1}));
  PlanarJoint weld = Joint("weld", PlanarJointType::kFixed, ia, ib, {0, l1 - l2}, {0, 0});
  weld.angle0 = weld_angle;
  builder.AddJoint(weld);
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  events::Simulation sim(system, TightOptions());
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  const double inertia = J1 + m1 * l1 * l1 + J2 + m2 * l2 * l2;
  const double moment = (m1 * l1 + m2 * l2) * g;
  const auto ode = [&](const Eigen::Vector2d& y) {
    return Eigen::Vector2d(y(1), -moment / inertia * std::sin(y(0)));
  };
  Eigen::Vector2d y(theta0, omega0);
  double worst = 0.0;
  for (int k = 1; k <= 4; ++k) {
    ASSERT_EQ(sim.AdvanceTo(0.5 * k).status, events::RunStatus::kFinished);
    y = Rk4(ode, y, 1e-4, 5000);
    const Eigen::VectorXd& q = sim.q();
    const double err = std::max({std::abs(q(2) - y(0)), std::abs(q(5) - y(0) - weld_angle),
                                 (q.segment<2>(3) - pos(l2, y(0))).norm(),
                                 std::abs(sim.v()(2) - y(1)), std::abs(sim.v()(5) - y(1))});
    worst = std::max(worst, err);
    EXPECT_LT(err, 1e-8) << "t = " << 0.5 * k;  // as above (measured 4.3e-13)
  }
  std::cout << "welded pendulum vs RK4 over 2 s: worst state error " << worst << "\n";
}

TEST(PlanarNewJointMechanisms, SliderCrankDrivenBySineDisplacementFollowsClosedForm) {
  // Crank of length r pinned to the ground at the origin, a massless rod (distance joint, length
  // l) from the crank pin to a slider on the ground x axis, the slider driven by
  // s(t) = 0.3 + 0.05 sin(2π t). Zero degrees of freedom: the crank angle is
  // cos α = (s² + r² − l²)/(2 s r) (α ∈ (0, π)), whatever the masses and gravity.
  constexpr double r = 0.1, l = 0.3, s0 = 0.3, amp = 0.05, w = 2.0 * std::numbers::pi;
  const auto s_of = [&](double t) { return s0 + amp * std::sin(w * t); };
  const auto alpha_of = [&](double t) {
    const double s = s_of(t);
    return std::acos((s * s + r * r - l * l) / (2.0 * s * r));
  };
  const auto alpha_dot_of = [&](double t) {
    const double s = s_of(t), s_dot = amp * w * std::cos(w * t), al = alpha_of(t);
    return -s_dot * (s - r * std::cos(al)) / (s * r * std::sin(al));
  };
  PlanarModelBuilder builder;
  PlanarBody crank = Body("crank", 0.5, 0.002), slider = Body("slider", 2.0, 0.01);
  const double al0 = alpha_of(0.0), ad0 = alpha_dot_of(0.0);
  crank.q0 << 0.5 * r * std::cos(al0), 0.5 * r * std::sin(al0), al0;
  crank.v0 << -0.5 * r * ad0 * std::sin(al0), 0.5 * r * ad0 * std::cos(al0), ad0;
  slider.q0 << s0, 0.0, 0.0;
  slider.v0 << amp * w, 0.0, 0.0;
  const int ic = builder.AddBody(crank);
  const int is = builder.AddBody(slider);
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  builder.AddJoint(Joint("pivot", PlanarJointType::kRevolute, kGround, ic, {0, 0}, {-r / 2, 0}));
  PlanarJoint rod = Joint("rod", PlanarJointType::kDistance, ic, is, {r / 2, 0}, {0, 0});
  rod.length = l;
  builder.AddJoint(rod);
  const int guide =
      builder.AddJoint(Joint("guide", PlanarJointType::kPrismatic, kGround, is, {0, 0}, {0, 0}));
  builder.AddDriver(Driver("push", guide, DriverKind::kDisplacement, Sine(s0, amp, w, 0.0)));
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  events::Simulation sim(system, TightOptions());
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  double worst = 0.0;
  for (int k = 1; k <= 10; ++k) {
    const double t = 0.1 * k;
    ASSERT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished);
    const double err =
        std::max({std::abs(sim.q()(2) - alpha_of(t)), std::abs(sim.v()(2) - alpha_dot_of(t)),
                  std::abs(sim.q()(3) - s_of(t))});
    worst = std::max(worst, err);
    // Positions are fixed by the rows (kept to round-off by the projection) and velocities by
    // G v = −∂g/∂t; the integrator's error (rtol 1e-10) bounds what is left: ≲ 1e-8
    // (measured 5.9e-14).
    EXPECT_LT(err, 1e-8) << "t = " << t;
  }
  std::cout << "sine-driven slider-crank over 1 s: worst |alpha|, |alpha_dot|, |s| error " << worst
            << "\n";
}

TEST(PlanarNewJointMechanisms, BeadInADrivenRotatingSlotFollowsTheCoshLaw) {
  // A rod turned about the ground origin by an angle driver φ = ω t (constant_rate) on its
  // revolute; a bead in a frictionless slot along the rod (point_on_line), no gravity. The slot
  // force is normal to the rod, so the radial coordinate obeys r̈ = ω² r:
  // r(t) = r₀ cosh(ω t) + (ṙ₀/ω) sinh(ω t), the bead at r (cos ω t, sin ω t); its own spin is free
  // and stays constant.
  constexpr double w = 2.0, r0 = 0.1, r_dot0 = 0.05, spin = -0.7;
  PlanarModelBuilder builder;
  PlanarBody rod = Body("rod", 1.0, 0.5), bead = Body("bead", 0.2, 0.001);
  rod.v0 << 0.0, 0.0, w;
  bead.q0 << r0, 0.0, 0.4;
  bead.v0 << r_dot0, w * r0, spin;
  const int ir = builder.AddBody(rod);
  const int ib = builder.AddBody(bead);
  const int pivot =
      builder.AddJoint(Joint("pivot", PlanarJointType::kRevolute, kGround, ir, {0, 0}, {0, 0}));
  builder.AddJoint(Joint("slot", PlanarJointType::kPointOnLine, ir, ib, {0, 0}, {0, 0}));
  builder.AddDriver(Driver("motor", pivot, DriverKind::kAngle, ConstantRate(0.0, w)));
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  events::Simulation sim(system, TightOptions());
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  double worst = 0.0;
  for (int k = 1; k <= 5; ++k) {
    const double t = 0.2 * k;
    ASSERT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished);
    const double r = r0 * std::cosh(w * t) + r_dot0 / w * std::sinh(w * t);
    const double r_dot = r0 * w * std::sinh(w * t) + r_dot0 * std::cosh(w * t);
    const Eigen::Vector2d e(std::cos(w * t), std::sin(w * t)), e_perp(-e.y(), e.x());
    const double err = std::max({(sim.q().segment<2>(3) - r * e).norm(),
                                 (sim.v().segment<2>(3) - (r_dot * e + r * w * e_perp)).norm(),
                                 std::abs(sim.q()(2) - w * t), std::abs(sim.v()(5) - spin)});
    worst = std::max(worst, err);
    EXPECT_LT(err, 1e-8) << "t = " << t;  // rtol 1e-10 on O(1) states over 1 s
  }
  std::cout << "bead in a rotating slot vs cosh law over 1 s: worst state error " << worst << "\n";
}

}  // namespace
}  // namespace saltus::engine
