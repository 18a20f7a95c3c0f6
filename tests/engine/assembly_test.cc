#include "engine/assembly.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/engine/spatial_mechanisms.h"

namespace saltus::engine {
namespace {

std::vector<int> JointRows(const SpatialMultibodySystem& s) {
  std::vector<int> rows(static_cast<std::size_t>(s.num_joint_rows()));
  for (int r = 0; r < s.num_joint_rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
  return rows;
}

TEST(Assembly, PerturbedBricardIsAssembledWithASmallMinimumNormCorrection) {
  auto system = testing::Bricard();
  const std::vector<int> rows = JointRows(*system);
  Eigen::VectorXd q = system->model().InitialPositions();
  Eigen::VectorXd v = Eigen::VectorXd::Zero(system->nv());
  // Perturb every body by up to 1 cm and 0.01 rad, and give it a random velocity.
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-0.01, 0.01);
  Eigen::VectorXd delta(system->nv());
  for (Eigen::Index i = 0; i < delta.size(); ++i) delta(i) = u(rng);
  system->IntegratePosition(q, delta, 1.0, &q);
  for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = 100.0 * u(rng);
  AssemblyOptions options;
  const AssemblyReport report = Assemble(*system, 0.0, rows, options, &q, &v);
  ASSERT_TRUE(report.ok) << report.message;
  EXPECT_LE(report.position_residual, options.tolerance);
  EXPECT_LE(report.velocity_residual, options.tolerance);
  EXPECT_EQ(report.rank, 29);  // redundant rows handled
  // The correction is at most the perturbation (minimum norm): |δ| ≤ √30 · 0.01.
  EXPECT_GT(report.position_correction, 0.0);
  EXPECT_LT(report.position_correction, std::sqrt(30.0) * 0.01);
  Eigen::VectorXd g;
  system->ConstraintValues(0.0, q, rows, &g);
  EXPECT_LE(g.lpNorm<Eigen::Infinity>(), options.tolerance);
}

TEST(Assembly, ImpossibleAssemblyNamesTheJoints) {
  // A pendulum whose two revolutes to the ground are 0.5 m apart on the ground but 1 m apart on
  // the bar: no configuration satisfies both.
  SpatialModelBuilder builder;
  builder.AddBody(testing::Rod("bar", 1.0, 1.0, 0.01, 0, {0.5, 0.0, 0.0}));
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ();
  builder.AddJoint(testing::Revolute("left", kGround, 0, {0.0, 0.0, 0.0}, {-0.5, 0.0, 0.0}, z));
  builder.AddJoint(testing::Revolute("right", kGround, 0, {0.5, 0.0, 0.0}, {0.5, 0.0, 0.0}, z));
  auto system = std::make_shared<SpatialMultibodySystem>(builder.Build());
  Eigen::VectorXd q = system->model().InitialPositions(), v = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd q0 = q;
  const AssemblyReport report = Assemble(*system, 0.0, JointRows(*system), {}, &q, &v);
  EXPECT_FALSE(report.ok);
  EXPECT_GT(report.position_residual, 0.1);  // the least-squares residual: 0.25 m per joint
  EXPECT_NE(report.message.find("left.x"), std::string::npos) << report.message;
  EXPECT_NE(report.message.find("joints: left right"), std::string::npos) << report.message;
  EXPECT_EQ(q, q0);  // unchanged on failure
}

}  // namespace
}  // namespace saltus::engine
