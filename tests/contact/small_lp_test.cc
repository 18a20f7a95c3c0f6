// The simplex of contact/small_lp.h on small LPs with known answers (vertices computed by hand).
// Tolerances: the data are small integers, so the simplex reaches round-off (~1e-15); 1e-12.

#include "contact/small_lp.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace saltus::contact {
namespace {

TEST(SmallLp, FeasibleMinimumAtAVertex) {
  // x + y + s = 4, x + 3y + t = 6, all ≥ 0; min −x − 2y: vertex (3, 1), value −5.
  Eigen::MatrixXd A(2, 4);
  A << 1, 1, 1, 0, 1, 3, 0, 1;
  SmallLp lp(A, Eigen::Vector2d(4, 6), 1e-12);
  ASSERT_TRUE(lp.feasible());
  EXPECT_LE((A * lp.x() - Eigen::Vector2d(4, 6)).norm(), 1e-12);
  Eigen::Vector4d c(-1, -2, 0, 0);
  ASSERT_EQ(lp.Minimize(c), LpStatus::kOptimal);
  EXPECT_NEAR(lp.x()[0], 3.0, 1e-12);
  EXPECT_NEAR(lp.x()[1], 1.0, 1e-12);
  // Maximum of x over the same polyhedron (min −x): x = 4 at (4, 0).
  ASSERT_EQ(lp.Minimize(Eigen::Vector4d(-1, 0, 0, 0)), LpStatus::kOptimal);
  EXPECT_NEAR(lp.x()[0], 4.0, 1e-12);
}

TEST(SmallLp, InfeasibleUnboundedAndNegativeRightHandSide) {
  // x − y = −1 (handled by negating the row), x + y = −1: infeasible with x, y ≥ 0.
  Eigen::MatrixXd A(2, 2);
  A << 1, -1, 1, 1;
  EXPECT_FALSE(SmallLp(A, Eigen::Vector2d(-1, -1), 1e-12).feasible());
  // x − y = −1 alone: feasible (0, 1); min −x is unbounded along (1, 1).
  Eigen::MatrixXd B(1, 2);
  B << 1, -1;
  SmallLp lp(B, Eigen::VectorXd::Constant(1, -1.0), 1e-12);
  ASSERT_TRUE(lp.feasible());
  EXPECT_NEAR(lp.x()[1] - lp.x()[0], 1.0, 1e-12);
  EXPECT_EQ(lp.Minimize(Eigen::Vector2d(-1, 0)), LpStatus::kUnbounded);
  EXPECT_EQ(lp.Minimize(Eigen::Vector2d(1, 0)), LpStatus::kOptimal);
  EXPECT_NEAR(lp.x()[0], 0.0, 1e-12);
}

TEST(SmallLp, RedundantAndDegenerateRows) {
  // The same row twice (a redundant contact) and a degenerate vertex at the origin:
  // x + y = 0 twice, x − y = 0 → only x = y = 0.
  Eigen::MatrixXd A(3, 2);
  A << 1, 1, 1, 1, 1, -1;
  SmallLp lp(A, Eigen::Vector3d::Zero(), 1e-12);
  ASSERT_TRUE(lp.feasible());
  EXPECT_EQ(lp.Minimize(Eigen::Vector2d(-1, -1)), LpStatus::kOptimal);
  EXPECT_LE(lp.x().norm(), 1e-12);
  // Rows 2 (x + y = 1) twice, consistent: the segment; max x = 1.
  Eigen::MatrixXd B(2, 2);
  B << 1, 1, 2, 2;
  SmallLp seg(B, Eigen::Vector2d(1, 2), 1e-12);
  ASSERT_TRUE(seg.feasible());
  ASSERT_EQ(seg.Minimize(Eigen::Vector2d(-1, 0)), LpStatus::kOptimal);
  EXPECT_NEAR(seg.x()[0], 1.0, 1e-12);
  // Violations below the feasibility tolerance are accepted, above it not.
  Eigen::MatrixXd C(2, 1);
  C << 1, 1;
  EXPECT_TRUE(SmallLp(C, Eigen::Vector2d(1.0, 1.0 + 1e-10), 1e-9).feasible());
  EXPECT_FALSE(SmallLp(C, Eigen::Vector2d(1.0, 1.0 + 1e-6), 1e-9).feasible());
}

TEST(SmallLp, BadInputThrows) {
  EXPECT_THROW(SmallLp(Eigen::MatrixXd::Ones(2, 2), Eigen::Vector3d::Ones(), 1e-9),
               std::invalid_argument);
  EXPECT_THROW(SmallLp(Eigen::MatrixXd::Ones(1, 1), Eigen::VectorXd::Ones(1), 0.0),
               std::invalid_argument);
  SmallLp infeasible(Eigen::MatrixXd::Ones(1, 1), -Eigen::VectorXd::Ones(1), 1e-9);
  EXPECT_THROW(infeasible.Minimize(Eigen::VectorXd::Ones(1)), std::logic_error);
}

// Lemke on positive definite problems (a solution always exists and is unique): the answer meets
// complementarity to round-off (1e-12 of the data's scale, entries of order 1).
TEST(SmallLemke, RandomPositiveDefiniteProblems) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n01(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 1 + trial % 8;
    Eigen::MatrixXd C(n + 1, n);
    for (int i = 0; i < C.rows(); ++i) {
      for (int j = 0; j < n; ++j) C(i, j) = n01(rng);
    }
    const Eigen::MatrixXd M = C.transpose() * C;
    Eigen::VectorXd q(n);
    for (int i = 0; i < n; ++i) q[i] = n01(rng);
    const LemkeResult r = SolveLcpByLemke(M, q, 1000);
    ASSERT_TRUE(r.ok) << "trial " << trial;
    const Eigen::VectorXd w = M * r.z + q;
    EXPECT_GE(w.minCoeff(), -1e-12 * (1 + M.norm()));
    EXPECT_LE(r.z.cwiseMin(w).cwiseAbs().maxCoeff(), 1e-12 * (1 + M.norm()));
  }
}

// Degenerate: q = (−1, −1) with two equal rows (a redundant contact): the solutions are
// z₁ + z₂ = 1, and the lexicographic rule terminates on one. Infeasible: w = −z − 1 ≥ 0 has no
// solution z ≥ 0; Lemke stops on a secondary ray.
TEST(SmallLemke, DegenerateAndRay) {
  Eigen::Matrix2d M;
  M << 1, 1, 1, 1;
  const LemkeResult r = SolveLcpByLemke(M, Eigen::Vector2d(-1, -1), 100);
  ASSERT_TRUE(r.ok);
  EXPECT_NEAR(r.z.sum(), 1.0, 1e-14);
  const LemkeResult ray =
      SolveLcpByLemke(-Eigen::MatrixXd::Ones(1, 1), -Eigen::VectorXd::Ones(1), 100);
  EXPECT_FALSE(ray.ok);
  EXPECT_TRUE(ray.ray);
  EXPECT_THROW(SolveLcpByLemke(Eigen::MatrixXd::Ones(2, 2), Eigen::Vector3d::Ones(), 10),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
