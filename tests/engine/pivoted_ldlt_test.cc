#include "engine/pivoted_ldlt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "malloc_counter.h"

namespace saltus::engine {
namespace {

Eigen::MatrixXd RandomMatrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd A(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j) {
    for (Eigen::Index i = 0; i < rows; ++i) A(i, j) = u(rng);
  }
  return A;
}

// W = G N⁻¹ Gᵀ with G (m × n) of the pattern of a planar chain of n/3 bodies whose joint rows
// (two per joint) touch the coordinates of two neighbouring bodies, N⁻¹ diagonal positive: the
// sparse Delassus matrices ConstrainedDynamics factors (exact zeros outside the pattern).
Eigen::MatrixXd ChainDelassus(int joints, std::mt19937& rng) {
  const int n = 3 * (joints + 1), m = 2 * joints;
  std::uniform_real_distribution<double> u(-1.0, 1.0), mass(0.5, 2.0);
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(m, n);
  for (int j = 0; j < joints; ++j) {
    for (int r = 2 * j; r < 2 * j + 2; ++r) {
      for (int c = 3 * j; c < 3 * j + 6; ++c) G(r, c) = u(rng);
    }
  }
  Eigen::VectorXd ninv(n);
  for (int c = 0; c < n; ++c) ninv(c) = 1.0 / mass(rng);
  return G * ninv.asDiagonal() * G.transpose();
}

// Eigen::LDLT's order as positions: position k of P W Pᵀ holds row order[k] of W.
std::vector<int> EigenOrder(const Eigen::LDLT<Eigen::MatrixXd>& ldlt) {
  const Eigen::Index m = ldlt.matrixLDLT().rows();
  Eigen::VectorXd index(m);
  for (Eigen::Index i = 0; i < m; ++i) index(i) = static_cast<double>(i);
  const Eigen::VectorXd permuted = ldlt.transpositionsP() * index;
  std::vector<int> order(static_cast<std::size_t>(m));
  for (Eigen::Index k = 0; k < m; ++k) order[static_cast<std::size_t>(k)] = int(permuted(k));
  return order;
}

// Eigen::LDLT's pivot ratio as ConstrainedDynamics computed it before (0 unless positive).
double EigenRatio(const Eigen::LDLT<Eigen::MatrixXd>& ldlt) {
  const auto d = ldlt.vectorD();
  const double largest = d.maxCoeff();
  return ldlt.info() == Eigen::Success && largest > 0.0 ? std::max(d.minCoeff() / largest, 0.0)
                                                        : 0.0;
}

// Same order as Eigen::LDLT, same pivots and solutions to round-off: both eliminate the same
// P W Pᵀ with sums in different orders, so the difference is a few ε times the growth of the
// elimination; the bound 1e-12 relative (≈ 4500 ε) covers these well-conditioned W (condition
// ≲ 1e4). Ties in diag W (the identity plus a coupling, every diagonal entry 2) check that the
// first of equal entries is taken, as Eigen does.
void ExpectSameAsEigen(const Eigen::MatrixXd& W, const Eigen::VectorXd& b) {
  const Eigen::Index m = W.rows();
  PivotedLdlt ldlt;
  const double ratio = ldlt.Compute(W);
  const Eigen::LDLT<Eigen::MatrixXd> ref(W);
  ASSERT_TRUE(ldlt.solved()) << "m = " << m;
  const std::vector<int> order = EigenOrder(ref);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(m));
  for (Eigen::Index k = 0; k < m; ++k) {
    EXPECT_EQ(ldlt.order(k), order[static_cast<std::size_t>(k)]) << "m = " << m << ", k = " << k;
    const double d_ref = ref.vectorD()(k);
    EXPECT_NEAR(ldlt.pivot(k), d_ref, 1e-12 * std::abs(d_ref)) << "m = " << m << ", k = " << k;
  }
  EXPECT_NEAR(ratio, EigenRatio(ref), 1e-12 * EigenRatio(ref)) << "m = " << m;
  Eigen::VectorXd x = b;
  ldlt.SolveInPlace(&x);
  const Eigen::VectorXd x_ref = ref.solve(b);
  EXPECT_LE((x - x_ref).norm(), 1e-12 * x_ref.norm()) << "m = " << m;
}

TEST(PivotedLdlt, RandomPositiveDefiniteMatchesEigensLdlt) {
  std::mt19937 rng(11);
  for (Eigen::Index m : {1, 2, 3, 5, 8, 13, 20, 33, 64}) {
    for (int trial = 0; trial < 10; ++trial) {
      // A Aᵀ + I/2: eigenvalues in [1/2, ~4m], condition ≲ 8m.
      const Eigen::MatrixXd A = RandomMatrix(m, m, rng);
      Eigen::MatrixXd W = A * A.transpose();
      W.diagonal().array() += 0.5;
      ExpectSameAsEigen(W, RandomMatrix(m, 1, rng));
    }
  }
}

TEST(PivotedLdlt, SparseChainDelassusMatchesEigensLdlt) {
  std::mt19937 rng(5);
  for (int joints : {1, 2, 4, 10, 25}) {
    for (int trial = 0; trial < 10; ++trial) {
      ExpectSameAsEigen(ChainDelassus(joints, rng), RandomMatrix(2 * joints, 1, rng));
    }
  }
}

// The elimination and substitutions of engine/pivoted_ldlt.h over full columns (every row below
// the diagonal), in the same order P: the numbers the class gives with the rows after each
// column's last nonzero left out must be these to the bit, since the terms left out are products
// with an exact 0.
struct FullLoopsLdlt {
  Eigen::MatrixXd a;  // L below the diagonal, D on it
  FullLoopsLdlt(const Eigen::MatrixXd& W, const PivotedLdlt& order) {
    const Eigen::Index n = W.rows();
    a.resize(n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = 0; i < n; ++i) {
        const int wi = order.order(i), wj = order.order(j);
        a(i, j) = W(std::max(wi, wj), std::min(wi, wj));  // W's lower triangle, as the class
      }
    }
    Eigen::VectorXd sum(n);
    for (Eigen::Index k = 0; k < n; ++k) {
      double update = 0.0;
      sum.setZero();
      for (Eigen::Index j = 0; j < k; ++j) {
        const double l_kj = a(k, j);
        if (l_kj == 0.0) continue;
        const double t = a(j, j) * l_kj;
        update += l_kj * t;
        for (Eigen::Index i = k + 1; i < n; ++i) sum(i) += a(i, j) * t;
      }
      a(k, k) -= update;
      for (Eigen::Index i = k + 1; i < n; ++i) a(i, k) = (a(i, k) - sum(i)) / a(k, k);
    }
  }
  Eigen::VectorXd Solve(const Eigen::VectorXd& b, const PivotedLdlt& order) const {
    const Eigen::Index n = a.rows();
    Eigen::VectorXd y(n);
    for (Eigen::Index k = 0; k < n; ++k) y(k) = b(order.order(k));
    for (Eigen::Index j = 0; j < n; ++j) {
      if (y(j) == 0.0) continue;
      for (Eigen::Index i = j + 1; i < n; ++i) y(i) -= a(i, j) * y(j);
    }
    for (Eigen::Index k = 0; k < n; ++k) y(k) /= a(k, k);
    for (Eigen::Index k = n; k-- > 0;) {
      double even = 0.0, odd = 0.0;
      Eigen::Index i = k + 1;
      for (; i + 1 < n; i += 2) {
        even += a(i, k) * y(i);
        odd += a(i + 1, k) * y(i + 1);
      }
      if (i < n) even += a(i, k) * y(i);
      y(k) -= even + odd;
    }
    Eigen::VectorXd x(n);
    for (Eigen::Index k = 0; k < n; ++k) x(order.order(k)) = y(k);
    return x;
  }
};

// One factor object reused over a sequence of W (the solver of ConstrainedDynamics across the
// evaluations of a phase): a W near the last one keeps its order, a W whose diagonal changed
// order or has ties selects again, a smaller and a larger m follow. Each factor is compared with
// a fresh object's (order, pivots, solution) and with the full loops (FullLoopsLdlt), to the bit
// (tolerance 0: the same operations on the same numbers).
TEST(PivotedLdlt, ReusedFactorAndSkippedZerosGiveTheNumbersOfTheFullLoops) {
  std::mt19937 rng(29);
  std::vector<Eigen::MatrixXd> sequence;
  const Eigen::MatrixXd chain = ChainDelassus(10, rng);
  sequence.push_back(chain);
  sequence.push_back(chain * 1.0001);  // same order kept
  Eigen::MatrixXd reordered = chain;
  reordered(3, 3) *= 50.0;  // this row moves to the front
  sequence.push_back(reordered);
  Eigen::MatrixXd tie = chain;
  tie(5, 5) = tie(6, 6) = tie.diagonal().maxCoeff() * 2.0;  // equal entries: selected again
  sequence.push_back(tie);
  sequence.push_back(ChainDelassus(4, rng));
  sequence.push_back(ChainDelassus(25, rng));
  sequence.push_back(ChainDelassus(25, rng));
  PivotedLdlt reused;
  for (std::size_t s = 0; s < sequence.size(); ++s) {
    const Eigen::MatrixXd& W = sequence[s];
    const Eigen::Index m = W.rows();
    const Eigen::VectorXd b = RandomMatrix(m, 1, rng);
    PivotedLdlt fresh;
    const double ratio = reused.Compute(W);
    EXPECT_EQ(ratio, fresh.Compute(W)) << "W " << s;
    ASSERT_TRUE(reused.solved());
    const FullLoopsLdlt full(W, fresh);
    Eigen::VectorXd x = b, x_fresh = b;
    reused.SolveInPlace(&x);
    fresh.SolveInPlace(&x_fresh);
    for (Eigen::Index k = 0; k < m; ++k) {
      EXPECT_EQ(reused.order(k), fresh.order(k)) << "W " << s << ", k = " << k;
      EXPECT_EQ(reused.pivot(k), full.a(k, k)) << "W " << s << ", k = " << k;
    }
    EXPECT_EQ((x - x_fresh).cwiseAbs().maxCoeff(), 0.0) << "W " << s;
    EXPECT_EQ((x - full.Solve(b, fresh)).cwiseAbs().maxCoeff(), 0.0) << "W " << s;
    ExpectSameAsEigen(W, b);  // and the order is Eigen's
  }
}

TEST(PivotedLdlt, EqualDiagonalEntriesTakeTheFirst) {
  std::mt19937 rng(3);
  for (Eigen::Index m : {2, 4, 9}) {
    Eigen::MatrixXd W = 2.0 * Eigen::MatrixXd::Identity(m, m);
    for (Eigen::Index i = 1; i < m; ++i) W(i, i - 1) = W(i - 1, i) = 0.5;
    ExpectSameAsEigen(W, RandomMatrix(m, 1, rng));
    // Some equal, some larger: the larger first, the equal ones in their exchange order.
    W(m - 1, m - 1) = 3.0;
    ExpectSameAsEigen(W, RandomMatrix(m, 1, rng));
  }
}

// Semidefinite W = G Gᵀ with rank r < m (redundant rows, m − r exact dependencies): the pivot
// ratio is 0 or at round-off level, far below √(rank tolerance) = 1e-5 of ConstrainedDynamics,
// as Eigen::LDLT's, so both send W to the rank-revealing solver. Near-singular W (one direction
// scaled by s): the ratio is ~ s² as Eigen's, on the same side of 1e-5 (s² = 1e-4 and 1e-6).
TEST(PivotedLdlt, SemidefiniteAndNearSingularGiveTheSameRankDecisions) {
  std::mt19937 rng(17);
  const double threshold = std::sqrt(1e-10);
  for (Eigen::Index m : {2, 5, 12, 20}) {
    for (Eigen::Index r = 1; r < m; r += std::max<Eigen::Index>(1, m / 4)) {
      const Eigen::MatrixXd G = RandomMatrix(m, r, rng) * RandomMatrix(r, m + 1, rng);
      const Eigen::MatrixXd W = G * G.transpose();
      PivotedLdlt ldlt;
      const double ratio = ldlt.Compute(W);
      const Eigen::LDLT<Eigen::MatrixXd> ref(W);
      EXPECT_LE(ratio, 1e-12) << "m = " << m << ", rank " << r;
      EXPECT_LE(EigenRatio(ref), threshold) << "m = " << m << ", rank " << r;
    }
    for (double s : {1e-2, 1e-3}) {
      // W = Q diag(1, …, 1, s²) Qᵀ scaled by a random diagonal: condition ~ 1/s².
      const Eigen::HouseholderQR<Eigen::MatrixXd> qr(RandomMatrix(m, m, rng));
      const Eigen::MatrixXd Q = qr.householderQ();
      Eigen::VectorXd lambda = Eigen::VectorXd::Ones(m);
      lambda(m - 1) = s * s;
      const Eigen::MatrixXd W = Q * lambda.asDiagonal() * Q.transpose();
      PivotedLdlt ldlt;
      const double ratio = ldlt.Compute(W);
      const Eigen::LDLT<Eigen::MatrixXd> ref(W);
      EXPECT_EQ(ratio > threshold, EigenRatio(ref) > threshold) << "m = " << m << ", s = " << s;
      // Condition 1/s² ≤ 1e6: the ratios agree to ~ ε / s² relative.
      EXPECT_NEAR(ratio, EigenRatio(ref), 1e-8 * EigenRatio(ref)) << "m = " << m << ", s = " << s;
    }
  }
}

TEST(PivotedLdlt, NotPositiveDefiniteOrNotFiniteGivesRatioZero) {
  Eigen::MatrixXd W(2, 2);
  W << 1.0, 2.0, 2.0, 1.0;  // eigenvalues 3, −1
  PivotedLdlt ldlt;
  EXPECT_EQ(ldlt.Compute(W), 0.0);
  EXPECT_FALSE(ldlt.solved());
  W << 1.0, 0.0, 0.0, std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ldlt.Compute(W), 0.0);
  EXPECT_FALSE(ldlt.solved());
  W.setZero();
  EXPECT_EQ(ldlt.Compute(W), 0.0);
  EXPECT_EQ(ldlt.Compute(Eigen::MatrixXd(0, 0)), 1.0);
  EXPECT_TRUE(ldlt.solved());
}

#ifdef SALTUS_COUNT_MALLOC
TEST(PivotedLdlt, NoAllocationAfterTheLargestSize) {
  std::mt19937 rng(2);
  const Eigen::MatrixXd W20 = ChainDelassus(10, rng), W8 = ChainDelassus(4, rng);
  Eigen::VectorXd b20 = RandomMatrix(20, 1, rng), b8 = RandomMatrix(8, 1, rng);
  PivotedLdlt ldlt;
  ldlt.Compute(W20);
  const long allocations = CountAllocations([&] {
    ldlt.Compute(W8);
    ldlt.SolveInPlace(&b8);
    ldlt.Compute(W20);
    ldlt.SolveInPlace(&b20);
  });
  EXPECT_EQ(allocations, 0);
}
#endif

}  // namespace
}  // namespace saltus::engine
