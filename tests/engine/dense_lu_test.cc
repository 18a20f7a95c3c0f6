#include "engine/dense_lu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace saltus::engine {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

Eigen::MatrixXd RandomMatrix(Eigen::Index m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd A(m, m);
  for (Eigen::Index j = 0; j < m; ++j) {
    for (Eigen::Index i = 0; i < m; ++i) A(i, j) = u(rng);
  }
  return A;
}

// Both paths (fixed storage up to kSmallSize, Eigen's blocked LU above) against Eigen's
// PartialPivLU: the same pivoting rule gives the same pivots, and the solve's backward error is
// round-off, ‖A x − b‖ ≤ c m ε ‖A‖ ‖x‖ (Higham, Accuracy and Stability, Thm. 9.4; the growth
// factor of these matrices is O(1), c = 10 covers it).
TEST(DenseLu, MatchesEigensPartialPivotingAndSolvesToRoundOff) {
  std::mt19937 rng(7);
  for (Eigen::Index m : {1, 2, 3, 4, 7, 8, 9, 16}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Eigen::MatrixXd A = RandomMatrix(m, rng);
      const Eigen::VectorXd b = RandomMatrix(m, rng).col(0);
      DenseLu lu;
      lu.Compute(A);
      const Eigen::PartialPivLU<Eigen::MatrixXd> ref(A);
      const auto u_ref = ref.matrixLU().diagonal().cwiseAbs();
      EXPECT_NEAR(lu.PivotRatio(), u_ref.minCoeff() / u_ref.maxCoeff(), 1e-12) << "m = " << m;
      Eigen::VectorXd x;
      lu.Solve(b, &x);
      const double backward = (A * x - b).norm();
      EXPECT_LE(backward, 10.0 * static_cast<double>(m) * kEps * A.norm() * x.norm())
          << "m = " << m;
    }
  }
}

// A singular matrix keeps its zero pivot: the ratio is 0 (the caller then uses a rank-revealing
// solver), and an empty matrix is trivially well conditioned.
TEST(DenseLu, SingularAndEmptyMatrices) {
  Eigen::MatrixXd A(3, 3);
  A << 1, 2, 3, 2, 4, 6, 1, 0, 1;  // row 2 = 2 × row 1
  DenseLu lu;
  lu.Compute(A);
  EXPECT_EQ(lu.PivotRatio(), 0.0);
  lu.Compute(Eigen::MatrixXd::Zero(2, 2));
  EXPECT_EQ(lu.PivotRatio(), 0.0);
  lu.Compute(Eigen::MatrixXd(0, 0));
  EXPECT_EQ(lu.PivotRatio(), 1.0);
  Eigen::VectorXd x;
  lu.Solve(Eigen::VectorXd(0), &x);
  EXPECT_EQ(x.size(), 0);
}

// Reuse: a small factorization after a large one (and back) answers for the last matrix.
TEST(DenseLu, SwitchesBetweenSmallAndLargePaths) {
  std::mt19937 rng(11);
  DenseLu lu;
  for (Eigen::Index m : {12, 3, 20, 2}) {
    const Eigen::MatrixXd A = RandomMatrix(m, rng) + 4.0 * Eigen::MatrixXd::Identity(m, m);
    const Eigen::VectorXd b = Eigen::VectorXd::Ones(m);
    lu.Compute(A);
    Eigen::VectorXd x;
    lu.Solve(b, &x);
    EXPECT_LE((A * x - b).lpNorm<Eigen::Infinity>(), 1e-13) << "m = " << m;
  }
}

}  // namespace
}  // namespace saltus::engine
