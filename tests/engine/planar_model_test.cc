#include "engine/planar_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/engine/planar_test_models.h"

namespace saltus::engine {
namespace {

using testing::AllRows;

// ---- Models -------------------------------------------------------------------------------

using testing::Body;
using testing::GammaByDifference;
using testing::JacobianByDifference;
using testing::Joint;

// Every joint type, with the ground on either side and off-centre points, so that every term
// of G, γ and ∂g/∂t is exercised. The rows are not meant to be consistent.
std::shared_ptr<const PlanarModel> JointZoo() {
  PlanarModelBuilder builder;
  const int A = builder.AddBody(Body("A", 1.0, 0.1));
  const int B = builder.AddBody(Body("B", 2.0, 0.2));
  const int C = builder.AddBody(Body("C", 3.0, 0.3));
  using T = PlanarJointType;
  builder.AddJoint(Joint("rev_gA", T::kRevolute, kGround, A, {0.3, -0.2}, {0.1, 0.4}));
  builder.AddJoint(Joint("rev_AB", T::kRevolute, A, B, {0.5, 0.2}, {-0.3, 0.1}));
  builder.AddJoint(Joint("rev_Cg", T::kRevolute, C, kGround, {-0.4, 0.25}, {1.0, -1.0}));
  PlanarJoint pri = Joint("pri_AB", T::kPrismatic, A, B, {0.2, -0.1}, {0.1, 0.3});
  pri.axis_a = Eigen::Vector2d(1.0, 2.0);
  pri.angle0 = 0.3;
  builder.AddJoint(pri);
  pri = Joint("pri_gC", T::kPrismatic, kGround, C, {1.0, 2.0}, {0.2, 0.0});
  pri.axis_a = Eigen::Vector2d(0.6, 0.8);
  pri.angle0 = -0.2;
  builder.AddJoint(pri);
  pri = Joint("pri_Cg", T::kPrismatic, C, kGround, {-0.3, 0.1}, {0.5, 0.5});
  pri.axis_a = Eigen::Vector2d(-1.0, 0.5);
  builder.AddJoint(pri);
  PlanarJoint drv = Joint("drv_BC", T::kAngleDriver, B, C, {0, 0}, {0, 0});
  drv.angle0 = 0.2;
  drv.rate = 1.7;
  builder.AddJoint(drv);
  drv = Joint("drv_gA", T::kAngleDriver, kGround, A, {0, 0}, {0, 0});
  drv.rate = -0.9;
  builder.AddJoint(drv);
  return builder.Build();
}

// Gravity, springs (with and without rest length, to the ground and between bodies, damped or
// not) and loads with an offset point and a torque.
std::shared_ptr<const PlanarModel> ForceZoo(double damping) {
  PlanarModelBuilder builder;
  const int A = builder.AddBody(Body("A", 1.5, 0.1));
  const int B = builder.AddBody(Body("B", 0.7, 0.05));
  builder.SetGravity(Eigen::Vector2d(0.3, -9.81));
  PlanarSpringDamper spring;
  spring.name = "k_AB";
  spring.body_a = A;
  spring.body_b = B;
  spring.point_a = Eigen::Vector2d(0.2, 0.1);
  spring.point_b = Eigen::Vector2d(-0.1, 0.3);
  spring.stiffness = 40.0;
  spring.damping = damping;
  spring.rest_length = 0.4;
  builder.AddSpringDamper(spring);
  spring.name = "k_gA";
  spring.body_a = kGround;
  spring.body_b = A;
  spring.point_a = Eigen::Vector2d(1.0, 2.0);
  spring.point_b = Eigen::Vector2d(0.3, -0.2);
  spring.stiffness = 15.0;
  spring.damping = 0.5 * damping;
  spring.rest_length = 0.0;
  builder.AddSpringDamper(spring);
  spring.name = "k_Bg";
  spring.body_a = B;
  spring.body_b = kGround;
  spring.point_a = Eigen::Vector2d(0.0, 0.2);
  spring.point_b = Eigen::Vector2d(-1.0, 0.0);
  spring.stiffness = 7.0;
  spring.damping = 2.0 * damping;
  spring.rest_length = 0.9;
  builder.AddSpringDamper(spring);
  PlanarLoad load;
  load.name = "push";
  load.body = B;
  load.force = Eigen::Vector2d(2.0, -1.0);
  load.point = Eigen::Vector2d(0.4, 0.1);
  load.torque = 0.8;
  builder.AddLoad(load);
  return builder.Build();
}

Eigen::VectorXd RandomVector(int n, double scale) { return scale * Eigen::VectorXd::Random(n); }

// ---- Finite-difference checks of the joint rows -------------------------------------------
// Central differences with step ε = 1e-6: truncation ε²/6·|g'''| ≈ 1e-12 (third derivatives
// bounded by lever arms ≤ 3 m), round-off ε_mach·|g|/ε ≈ 2e-16·10/1e-6 = 2e-9. Tolerance 1e-8.
constexpr double kFdStep = 1e-6;
constexpr double kFdTol = 1e-8;

TEST(PlanarJointsTest, JacobianMatchesFiniteDifferences) {
  PlanarMultibodySystem system(JointZoo());
  const std::vector<int> rows = AllRows(system);
  ASSERT_EQ(rows.size(), 2u + 2u + 2u + 2u + 2u + 2u + 1u + 1u);
  std::srand(11);
  for (int trial = 0; trial < 5; ++trial) {
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
      }
    }
  }
}

TEST(PlanarJointsTest, TimeDerivativeMatchesFiniteDifferences) {
  PlanarMultibodySystem system(JointZoo());
  const std::vector<int> rows = AllRows(system);
  std::srand(12);
  const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
  const double t = 0.8;
  Eigen::VectorXd g_t, gp, gm;
  system.ConstraintTimeDerivative(t, q, rows, &g_t);
  system.ConstraintValues(t + kFdStep, q, rows, &gp);
  system.ConstraintValues(t - kFdStep, q, rows, &gm);
  const Eigen::VectorXd fd = (gp - gm) / (2.0 * kFdStep);
  bool any_rheonomic = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    // g is affine in t: the difference is exact up to round-off (kFdTol as above).
    EXPECT_NEAR(g_t(r), fd(r), kFdTol) << system.constraint_info(rows[i]).name;
    any_rheonomic = any_rheonomic || std::abs(g_t(r)) > 0.5;
  }
  EXPECT_TRUE(any_rheonomic);
  // The drivers: ∂g/∂t = −ω exactly.
  EXPECT_NEAR(g_t(12), -1.7, 1e-15);
  EXPECT_NEAR(g_t(13), 0.9, 1e-15);
}

TEST(PlanarJointsTest, GammaMatchesFiniteDifferenceOfGdot) {
  // With v fixed, d/ds [G(q + s v, t + s) v + ∂g/∂t(q + s v, t + s)] at s = 0 is g̈ with v̇ = 0,
  // i.e. γ. Round-off: ε_mach·|ġ|/ε with |ġ| ≲ 30 gives ≈ 1e-8; truncation ε²·|ġ'''| ≲ 1e-10.
  constexpr double kGammaTol = 1e-7;
  PlanarMultibodySystem system(JointZoo());
  const std::vector<int> rows = AllRows(system);
  std::srand(13);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
    const Eigen::VectorXd v = RandomVector(system.nv(), 3.0);
    const double t = 0.2 + 0.5 * trial;
    Eigen::VectorXd gamma;
    system.ConstraintGamma(t, q, v, rows, &gamma);
    const Eigen::VectorXd fd = GammaByDifference(system, t, q, v, rows, kFdStep);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      EXPECT_NEAR(gamma(r), fd(r), kGammaTol) << system.constraint_info(rows[i]).name;
    }
    EXPECT_GT(gamma.lpNorm<Eigen::Infinity>(), 1.0);  // the check is not vacuous
  }
}

TEST(PlanarJointsTest, RowSubsetsMatchTheFullEvaluation) {
  PlanarMultibodySystem system(JointZoo());
  std::srand(14);
  const Eigen::VectorXd q = RandomVector(system.nq(), 2.0);
  const Eigen::VectorXd v = RandomVector(system.nv(), 3.0);
  const std::vector<int> all = AllRows(system);
  const std::vector<int> subset = {13, 1, 7, 4};
  Eigen::VectorXd g_all, g_sub, gamma_all, gamma_sub, gt_all, gt_sub;
  Eigen::MatrixXd G_all, G_sub;
  system.ConstraintValues(0.3, q, all, &g_all);
  system.ConstraintValues(0.3, q, subset, &g_sub);
  system.ConstraintJacobian(0.3, q, all, &G_all);
  system.ConstraintJacobian(0.3, q, subset, &G_sub);
  system.ConstraintGamma(0.3, q, v, all, &gamma_all);
  system.ConstraintGamma(0.3, q, v, subset, &gamma_sub);
  system.ConstraintTimeDerivative(0.3, q, all, &gt_all);
  system.ConstraintTimeDerivative(0.3, q, subset, &gt_sub);
  for (std::size_t k = 0; k < subset.size(); ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    const int r = subset[k];
    // The same arithmetic on the same inputs: identical results (tolerance 0).
    EXPECT_NEAR(g_sub(i), g_all(r), 0.0);
    EXPECT_NEAR(gamma_sub(i), gamma_all(r), 0.0);
    EXPECT_NEAR(gt_sub(i), gt_all(r), 0.0);
    EXPECT_NEAR((G_sub.row(i) - G_all.row(r)).norm(), 0.0, 0.0);
  }
}

TEST(PlanarJointsTest, RowNamesAndKinds) {
  PlanarMultibodySystem system(JointZoo());
  const std::vector<std::string> expected = {
      "rev_gA.x",     "rev_gA.y",      "rev_AB.x",      "rev_AB.y",     "rev_Cg.x",
      "rev_Cg.y",     "pri_AB.angle",  "pri_AB.normal", "pri_gC.angle", "pri_gC.normal",
      "pri_Cg.angle", "pri_Cg.normal", "drv_BC.angle",  "drv_gA.angle"};
  ASSERT_EQ(system.num_constraints(), static_cast<int>(expected.size()));
  for (int r = 0; r < system.num_constraints(); ++r) {
    EXPECT_EQ(system.constraint_info(r).name, expected[static_cast<std::size_t>(r)]);
    EXPECT_EQ(system.constraint_info(r).kind, ConstraintKind::kBilateral);
  }
}

TEST(PlanarJointsTest, PrismaticAxisIsNormalized) {
  // Slider on a ground axis (2, 0) through the origin, body at height 0.5 rotated by 0.1:
  // the normal row is the distance 0.5 and the angle row θ − θ₀ = 0.1 − 0.05.
  PlanarModelBuilder builder;
  const int s = builder.AddBody(Body("s", 1.0, 1.0));
  PlanarJoint pri = Joint("slide", PlanarJointType::kPrismatic, kGround, s, {0, 0}, {0, 0});
  pri.axis_a = Eigen::Vector2d(2.0, 0.0);
  pri.angle0 = 0.05;
  builder.AddJoint(pri);
  PlanarMultibodySystem system(builder.Build());
  EXPECT_NEAR(system.model().joints()[0].axis_a.norm(), 1.0, 1e-15);
  Eigen::VectorXd g;
  system.ConstraintValues(0.0, Eigen::Vector3d(3.0, 0.5, 0.1), AllRows(system), &g);
  EXPECT_NEAR(g(0), 0.05, 1e-15);  // one subtraction
  EXPECT_NEAR(g(1), 0.5, 1e-15);   // exact arithmetic on these inputs, up to one rounding
}

TEST(PlanarJointsTest, NoJointsGiveAnEmptyBlock) {
  PlanarModelBuilder builder;
  builder.AddBody(Body("free", 1.0, 1.0));
  PlanarMultibodySystem system(builder.Build());
  EXPECT_EQ(system.num_constraints(), 0);
}

TEST(PlanarJointsTest, WrongSizeThrows) {
  PlanarMultibodySystem system(JointZoo());
  Eigen::VectorXd g;
  EXPECT_THROW(system.ConstraintValues(0.0, Eigen::VectorXd::Zero(4), AllRows(system), &g),
               std::invalid_argument);
}

// ---- Forces, energy, mass matrix, names ---------------------------------------------------

TEST(PlanarForcesTest, ConservativeForcesAreMinusGradientOfPotential) {
  PlanarMultibodySystem system(ForceZoo(/*damping=*/0.0));
  std::srand(21);
  // Step 1e-5: truncation ε²/6·|V'''| ≲ 1e-10·100, round-off ε_mach·|V|/ε ≈ 2e-16·100/1e-5 =
  // 2e-9; tolerance 1e-7.
  constexpr double kStep = 1e-5;
  constexpr double kTol = 1e-7;
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = RandomVector(system.nq(), 1.5);
    const Eigen::VectorXd v = RandomVector(system.nv(), 2.0);  // irrelevant without damping
    Eigen::VectorXd F;
    system.Forces(0.0, q, v, &F);
    for (int j = 0; j < system.nq(); ++j) {
      Eigen::VectorXd qp = q, qm = q;
      qp(j) += kStep;
      qm(j) -= kStep;
      const double dV =
          (system.PotentialEnergy(0.0, qp) - system.PotentialEnergy(0.0, qm)) / (2.0 * kStep);
      EXPECT_NEAR(F(j), -dV, kTol) << system.PositionName(j);
    }
  }
}

// Length of spring k_AB of ForceZoo, written out independently: p = r + R(θ) s.
double SpringLength(const Eigen::VectorXd& q) {
  auto point = [&](int body, Eigen::Vector2d s) {
    const double th = q(3 * body + 2);
    return Eigen::Vector2d(q(3 * body) + std::cos(th) * s.x() - std::sin(th) * s.y(),
                           q(3 * body + 1) + std::sin(th) * s.x() + std::cos(th) * s.y());
  };
  return (point(1, {-0.1, 0.3}) - point(0, {0.2, 0.1})).norm();
}

TEST(PlanarForcesTest, DampingActsAlongTheLine) {
  // One damped spring between two bodies, so that F(q, v) − F(q, 0) is its damping force.
  PlanarModelBuilder builder;
  builder.AddBody(Body("A", 1.5, 0.1));
  builder.AddBody(Body("B", 0.7, 0.05));
  PlanarSpringDamper spring;
  spring.name = "k_AB";
  spring.body_a = 0;
  spring.body_b = 1;
  spring.point_a = Eigen::Vector2d(0.2, 0.1);
  spring.point_b = Eigen::Vector2d(-0.1, 0.3);
  spring.stiffness = 40.0;
  spring.damping = 3.0;
  spring.rest_length = 0.4;
  builder.AddSpringDamper(spring);
  PlanarMultibodySystem system(builder.Build());
  std::srand(22);
  constexpr double kStep = 1e-6;
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = RandomVector(6, 1.0);
    const Eigen::VectorXd v = RandomVector(6, 2.0);
    Eigen::VectorXd F, F0;
    system.Forces(0.0, q, v, &F);
    system.Forces(0.0, q, Eigen::VectorXd::Zero(6), &F0);
    const Eigen::VectorXd F_damp = F - F0;
    // ℓ̇ = ∇ℓ·v and the damping force is −c ℓ̇ ∇ℓ (tension c ℓ̇ along the line), with ∇ℓ by
    // central differences (step 1e-6: error ≈ 1e-10 from round-off, ℓ = O(1)).
    Eigen::VectorXd grad(6);
    for (int j = 0; j < 6; ++j) {
      Eigen::VectorXd qp = q, qm = q;
      qp(j) += kStep;
      qm(j) -= kStep;
      grad(j) = (SpringLength(qp) - SpringLength(qm)) / (2.0 * kStep);
    }
    const double length_dot = grad.dot(v);
    const Eigen::VectorXd expected = -spring.damping * length_dot * grad;
    // Error: c·(2|∇ℓ||v|)·δ∇ℓ with δ∇ℓ ≈ 1e-10 → ≈ 1e-8; tolerance 1e-7.
    EXPECT_LE((F_damp - expected).lpNorm<Eigen::Infinity>(), 1e-7);
    // Dissipation: vᵀ F_damp = −c ℓ̇² ≤ 0.
    EXPECT_NEAR(v.dot(F_damp), -spring.damping * length_dot * length_dot, 1e-7);
  }
}

TEST(PlanarForcesTest, GravityLoadAndMassMatrix) {
  PlanarMultibodySystem system(ForceZoo(0.0));
  Eigen::MatrixXd M;
  Eigen::VectorXd q = Eigen::VectorXd::Zero(6);
  system.MassMatrix(q, &M);
  const Eigen::VectorXd diag = (Eigen::VectorXd(6) << 1.5, 1.5, 0.1, 0.7, 0.7, 0.05).finished();
  // Copied values, no arithmetic: tolerance 0.
  EXPECT_NEAR((M - Eigen::MatrixXd(diag.asDiagonal())).norm(), 0.0, 0.0);

  // Gravity alone: a model with one body and no other force.
  PlanarModelBuilder builder;
  PlanarBody body = Body("b", 2.0, 1.0);
  builder.AddBody(body);
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  PlanarLoad load;
  load.name = "push";
  load.body = 0;
  load.force = Eigen::Vector2d(1.0, 0.0);
  load.point = Eigen::Vector2d(0.0, 0.5);  // above the centre of mass
  load.torque = 0.25;
  builder.AddLoad(load);
  PlanarMultibodySystem one(builder.Build());
  Eigen::VectorXd F;
  const double theta = 0.3;
  one.Forces(0.0, Eigen::Vector3d(0.0, 0.0, theta), Eigen::Vector3d::Zero(), &F);
  // Moment about the centre of mass of f = (1, 0) at s_w = 0.5 (−sin θ, cos θ):
  // s_w × f = −0.5 cos θ; plus the torque 0.25. A few flops: 1e-15.
  EXPECT_NEAR(F(0), 1.0, 1e-15);
  EXPECT_NEAR(F(1), -2.0 * 9.81, 1e-14);
  EXPECT_NEAR(F(2), -0.5 * std::cos(theta) + 0.25, 1e-15);
  // V = −m g·r − f·p − τ θ at r = (0, 1): 2·9.81 − (−0.5 sin θ) − 0.25 θ.
  EXPECT_NEAR(one.PotentialEnergy(0.0, Eigen::Vector3d(0.0, 1.0, theta)),
              2.0 * 9.81 + 0.5 * std::sin(theta) - 0.25 * theta, 1e-14);
}

TEST(PlanarModelTest, NamesAndInitialState) {
  auto model = testing::MakeSliderCrank({});
  PlanarMultibodySystem system(model);
  EXPECT_EQ(system.nq(), 9);
  EXPECT_EQ(system.PositionName(0), "crank.x");
  EXPECT_EQ(system.PositionName(4), "rod.y");
  EXPECT_EQ(system.PositionName(8), "slider.theta");
  EXPECT_EQ(system.VelocityName(2), "crank.vtheta");
  EXPECT_EQ(system.VelocityName(6), "slider.vx");
  EXPECT_THROW(system.PositionName(9), std::out_of_range);
  EXPECT_THROW(system.VelocityName(-1), std::out_of_range);
  EXPECT_EQ(model->FindBody("rod"), 1);
  EXPECT_EQ(model->FindBody("ground"), kGround);
  EXPECT_EQ(model->FindBody("nope"), -2);
  const Eigen::VectorXd q = model->InitialPositions();
  ASSERT_EQ(q.size(), 9);
  EXPECT_NEAR(q(2), 0.8, 0.0);  // copied from the body: exact
  // The slider-crank's initial state is consistent (built from the closed-form geometry):
  // g and G v vanish to round-off.
  Eigen::VectorXd g;
  Eigen::MatrixXd G;
  system.ConstraintValues(0.0, q, AllRows(system), &g);
  system.ConstraintJacobian(0.0, q, AllRows(system), &G);
  EXPECT_LE(g.lpNorm<Eigen::Infinity>(), 1e-15);
  EXPECT_LE((G * model->InitialVelocities()).lpNorm<Eigen::Infinity>(), 1e-14);
}

// ---- Builder validation -------------------------------------------------------------------

// Runs `add` and expects std::invalid_argument whose message contains `expected`.
void ExpectInvalid(const std::function<void()>& add, const std::string& expected) {
  try {
    add();
    ADD_FAILURE() << "no exception; expected: " << expected;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << expected;
  }
}

TEST(PlanarModelBuilderTest, BadBodiesThrowNamingTheBody) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  PlanarModelBuilder builder;
  builder.AddBody(Body("crank", 1.0, 1.0));
  ExpectInvalid([&] { builder.AddBody(Body("rod", -1.0, 1.0)); },
                "body 'rod': mass must be > 0, got -1");
  ExpectInvalid([&] { builder.AddBody(Body("rod", 0.0, 1.0)); }, "body 'rod': mass must be > 0");
  ExpectInvalid([&] { builder.AddBody(Body("rod", kNaN, 1.0)); },
                "body 'rod': mass must be finite, got nan");
  ExpectInvalid([&] { builder.AddBody(Body("rod", 1.0, 0.0)); },
                "body 'rod': inertia must be > 0, got 0");
  ExpectInvalid([&] { builder.AddBody(Body("rod", 1.0, kInf)); },
                "body 'rod': inertia must be finite, got inf");
  ExpectInvalid(
      [&] {
        PlanarBody b = Body("rod", 1.0, 1.0);
        b.q0(1) = kNaN;
        builder.AddBody(b);
      },
      "body 'rod': q0 must be finite, got (0, nan, 0)");
  ExpectInvalid(
      [&] {
        PlanarBody b = Body("rod", 1.0, 1.0);
        b.v0(2) = -kInf;
        builder.AddBody(b);
      },
      "body 'rod': v0 must be finite");
  ExpectInvalid([&] { builder.AddBody(Body("crank", 1.0, 1.0)); }, "body 'crank': duplicate name");
  ExpectInvalid([&] { builder.AddBody(Body("", 1.0, 1.0)); }, "body #1: name must not be empty");
  ExpectInvalid([&] { builder.AddBody(Body("ground", 1.0, 1.0)); },
                "body 'ground': the name 'ground' is reserved");
  // Nothing invalid was added.
  EXPECT_EQ(builder.Build()->num_bodies(), 1);
}

TEST(PlanarModelBuilderTest, BadJointsThrowNamingTheJoint) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  PlanarModelBuilder builder;
  builder.AddBody(Body("crank", 1.0, 1.0));
  builder.AddBody(Body("rod", 1.0, 1.0));
  using T = PlanarJointType;
  ExpectInvalid(
      [&] {
        builder.AddJoint(Joint("pin", T::kRevolute, 0, 5, {0, 0}, {0, 0}));
      },
      "joint 'pin': body_b: unknown body index 5");
  ExpectInvalid(
      [&] {
        builder.AddJoint(Joint("pin", T::kRevolute, -3, 1, {0, 0}, {0, 0}));
      },
      "joint 'pin': body_a: unknown body index -3");
  ExpectInvalid(
      [&] {
        builder.AddJoint(Joint("pin", T::kRevolute, 1, 1, {0, 0}, {0, 0}));
      },
      "joint 'pin': body_a and body_b are the same body");
  ExpectInvalid(
      [&] {
        builder.AddJoint(Joint("pin", T::kRevolute, 0, 1, {kNaN, 0}, {0, 0}));
      },
      "joint 'pin': point_a must be finite");
  ExpectInvalid(
      [&] {
        PlanarJoint j = Joint("slide", T::kPrismatic, kGround, 1, {0, 0}, {0, 0});
        j.axis_a = Eigen::Vector2d::Zero();
        builder.AddJoint(j);
      },
      "joint 'slide': axis_a must be non-zero, got (0, 0)");
  ExpectInvalid(
      [&] {
        PlanarJoint j = Joint("motor", T::kAngleDriver, kGround, 0, {0, 0}, {0, 0});
        j.rate = kNaN;
        builder.AddJoint(j);
      },
      "joint 'motor': rate must be finite, got nan");
  ExpectInvalid(
      [&] {
        builder.AddJoint(Joint("", T::kRevolute, 0, 1, {0, 0}, {0, 0}));
      },
      "joint #0: name must not be empty");
  builder.AddJoint(Joint("pin", T::kRevolute, 0, 1, {0, 0}, {0, 0}));
  ExpectInvalid(
      [&] {
        builder.AddJoint(Joint("pin", T::kRevolute, kGround, 1, {0, 0}, {0, 0}));
      },
      "joint 'pin': duplicate name");
}

TEST(PlanarModelBuilderTest, BadSpringsLoadsAndGravityThrowNamingTheItem) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  PlanarModelBuilder builder;
  builder.AddBody(Body("crank", 1.0, 1.0));
  auto spring = [](const std::string& name) {
    PlanarSpringDamper s;
    s.name = name;
    s.body_a = kGround;
    s.body_b = 0;
    s.stiffness = 1.0;
    return s;
  };
  ExpectInvalid(
      [&] {
        auto s = spring("k1");
        s.stiffness = -3.0;
        builder.AddSpringDamper(s);
      },
      "spring 'k1': stiffness must be >= 0, got -3");
  ExpectInvalid(
      [&] {
        auto s = spring("k1");
        s.damping = -0.5;
        builder.AddSpringDamper(s);
      },
      "spring 'k1': damping must be >= 0, got -0.5");
  ExpectInvalid(
      [&] {
        auto s = spring("k1");
        s.rest_length = -1e-3;
        builder.AddSpringDamper(s);
      },
      "spring 'k1': rest_length must be >= 0, got -0.001");
  ExpectInvalid(
      [&] {
        auto s = spring("k1");
        s.body_b = 2;
        builder.AddSpringDamper(s);
      },
      "spring 'k1': body_b: unknown body index 2");
  ExpectInvalid(
      [&] {
        auto s = spring("k1");
        s.point_b(0) = kNaN;
        builder.AddSpringDamper(s);
      },
      "spring 'k1': point_b must be finite");
  builder.AddSpringDamper(spring("k1"));
  ExpectInvalid([&] { builder.AddSpringDamper(spring("k1")); }, "spring 'k1': duplicate name");

  PlanarLoad load;
  load.name = "push";
  load.body = kGround;
  ExpectInvalid([&] { builder.AddLoad(load); }, "load 'push': body: unknown body index -1");
  load.body = 0;
  load.torque = kNaN;
  ExpectInvalid([&] { builder.AddLoad(load); }, "load 'push': torque must be finite, got nan");
  load.torque = 0.0;
  load.force(1) = -kNaN;
  ExpectInvalid([&] { builder.AddLoad(load); }, "load 'push': force must be finite");

  ExpectInvalid([&] { builder.SetGravity(Eigen::Vector2d(0.0, kNaN)); },
                "gravity must be finite, got (0, nan)");
  ExpectInvalid([&] { PlanarModelBuilder().Build(); }, "no bodies");
  EXPECT_THROW(PlanarMultibodySystem(nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace saltus::engine
