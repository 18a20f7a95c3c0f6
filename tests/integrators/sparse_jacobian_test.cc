// Tests of the dense and grouped (sparse) finite-difference Jacobians of
// integrators/sparse_jacobian.h on the residual of the chain of N mathematical pendulums with an
// excited suspension point (Arnold, Fuchs & Führer, Sec. 4.2.1) in the stabilized index-2 form
// of their eq. (10): the colouring is consistent, a Jacobian costs (number of colours) function
// evaluations besides F(y) — independent of N — and equals the dense difference approximation;
// a pattern estimated at a degenerate point is refreshed when the structure grows.
#include "integrators/sparse_jacobian.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

namespace saltus::integrators {
namespace {

// Chain of N unit point masses joined by massless rods of length 1, the first hanging from the
// suspension point s(t) = (0, A sin Ωt); gravity (0, −9.81). y = (p (2N), v (2N), λ (N), η (N)),
// g_i = (|p_i − p_{i−1}|² − 1)/2 with p_0 = s(t). Residual (Arnold et al. eq. 10, M = I), with
// ẏ = a y + b as in their eq. (13):
//   F1 = ṗ − v + Gᵀη,  F2 = v̇ − f + Gᵀλ,  F3 = G v + ∂g/∂t,  F4 = g.
struct Chain {
  explicit Chain(int n) : N(n), b(Eigen::VectorXd::Zero(6 * n)) {}
  int N;
  double t = 0.3, A = 0.1, Omega = 5.0, a = 50.0;  // a: the BDF coefficient α/h of eq. (13)
  Eigen::VectorXd b;                               // ẏ = a y + b
  int size() const { return 6 * N; }
  void Residual(const Eigen::VectorXd& y, Eigen::VectorXd* F) const {
    F->setZero(6 * N);
    const Eigen::VectorXd ydot = a * y + b;
    const Eigen::Vector2d s(0.0, A * std::sin(Omega * t)),
        s_dot(0.0, A * Omega * std::cos(Omega * t));
    for (int i = 0; i < N; ++i) {
      const Eigen::Vector2d p = y.segment<2>(2 * i), v = y.segment<2>(2 * N + 2 * i);
      const Eigen::Vector2d p_prev = i == 0 ? s : Eigen::Vector2d(y.segment<2>(2 * (i - 1)));
      const Eigen::Vector2d v_prev =
          i == 0 ? s_dot : Eigen::Vector2d(y.segment<2>(2 * N + 2 * (i - 1)));
      const Eigen::Vector2d d = p - p_prev;
      const double lambda = y(4 * N + i), eta = y(5 * N + i);
      // Row i of G: +dᵀ on p_i, −dᵀ on p_{i−1}.
      F->segment<2>(2 * i) += ydot.segment<2>(2 * i) - v + eta * d;
      F->segment<2>(2 * N + 2 * i) +=
          ydot.segment<2>(2 * N + 2 * i) - Eigen::Vector2d(0, -9.81) + lambda * d;
      if (i > 0) {
        F->segment<2>(2 * (i - 1)) -= eta * d;
        F->segment<2>(2 * N + 2 * (i - 1)) -= lambda * d;
      }
      (*F)(4 * N + i) = d.dot(v - v_prev);  // G v + ∂g/∂t (the suspension's motion for i = 0)
      (*F)(5 * N + i) = 0.5 * (d.squaredNorm() - 1.0);
    }
  }
  // A generic state: angles drawn from a seeded generator (seed 7), velocities and multipliers
  // of order 1.
  Eigen::VectorXd State(bool hanging_straight) const {
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Eigen::VectorXd y(6 * N);
    Eigen::Vector2d p(0.0, A * std::sin(Omega * t));
    for (int i = 0; i < N; ++i) {
      const double phi = hanging_straight ? 0.0 : 0.5 * u(gen);
      p += Eigen::Vector2d(std::sin(phi), -std::cos(phi));
      y.segment<2>(2 * i) = p;
    }
    for (int k = 2 * N; k < 6 * N; ++k) y(k) = hanging_straight ? 0.0 : u(gen);
    return y;
  }
};

ResidualFunction Function(const Chain& c) {
  return [&c](const Eigen::VectorXd& y, Eigen::VectorXd* F) { c.Residual(y, F); };
}

TEST(SparseJacobian, ChainOfPendulumsColoursIndependentOfN) {
  for (int N : {4, 8, 16, 32}) {
    Chain c(N);
    c.b = Eigen::VectorXd::Constant(c.size(), 0.3);
    const Eigen::VectorXd y = c.State(false);
    const ResidualFunction F = Function(c);
    Eigen::VectorXd F0;
    F(y, &F0);
    Eigen::MatrixXd J_dense, J_sparse;
    DenseDifferenceJacobian(F, y, F0, &J_dense);
    const SparsityPattern pattern = PatternOf(J_dense);
    const ColumnColouring colouring = ColourColumns(pattern);
    EXPECT_TRUE(IsConsistentColouring(pattern, colouring));
    const int evaluations = SparseDifferenceJacobian(F, y, F0, pattern, colouring, &J_sparse);
    std::printf(
        "  N = %2d: n = %3d, non-zeros = %4ld, colours = %d, evaluations per Jacobian = "
        "%d (+1 for F(y)); dense: %d\n",
        N, c.size(), pattern.nonzeros(), colouring.num_colours, evaluations, c.size());
    EXPECT_EQ(evaluations, colouring.num_colours);
    // The chain couples each body only to its neighbours: the number of groups is bounded by
    // the band structure, not by N (greedy colouring measured 9 at N = 4 and 10 from N = 8 on),
    // and far below n = 6N. Any consistent grouping needs at least as many groups as the
    // densest row has non-zeros.
    std::vector<int> row_nonzeros(static_cast<std::size_t>(c.size()), 0);
    for (const auto& rows : pattern.column_rows) {
      for (int i : rows) ++row_nonzeros[static_cast<std::size_t>(i)];
    }
    const int densest_row = *std::max_element(row_nonzeros.begin(), row_nonzeros.end());
    EXPECT_GE(colouring.num_colours, densest_row);
    EXPECT_LE(colouring.num_colours, 12) << "N = " << N;
    // Same increments, and each perturbed row sees exactly one perturbed column of the group:
    // the quotients are the dense ones up to the round-off of F's evaluation order, ~ε|F|/δ with
    // δ ≈ 1.5e-8·max(|y|, 1.2e-4): 1e-6 relative to the Jacobian's size.
    EXPECT_LE((J_sparse - J_dense).lpNorm<Eigen::Infinity>(),
              1e-6 * J_dense.lpNorm<Eigen::Infinity>());
  }
}

TEST(SparseJacobian, PatternRefreshWhenStructureGrows) {
  Chain c(6);
  c.b = Eigen::VectorXd::Zero(c.size());
  const ResidualFunction F = Function(c);
  // Hanging straight at rest: x-differences, velocities and multipliers vanish, so many
  // structural non-zeros are numerically 0 and the first estimate misses them.
  const Eigen::VectorXd y0 = c.State(true);
  Eigen::VectorXd F0;
  F(y0, &F0);
  Eigen::MatrixXd J_dense, J_sparse;
  DenseDifferenceJacobian(F, y0, F0, &J_dense);
  SparsityPattern pattern = PatternOf(J_dense);
  ColumnColouring colouring = ColourColumns(pattern);
  const long nonzeros_degenerate = pattern.nonzeros();

  const Eigen::VectorXd y1 = c.State(false);
  F(y1, &F0);
  DenseDifferenceJacobian(F, y1, F0, &J_dense);
  SparseDifferenceJacobian(F, y1, F0, pattern, colouring, &J_sparse);
  const double scale = J_dense.lpNorm<Eigen::Infinity>();
  // The stale pattern drops entries of order 1 (e.g. the multipliers' coupling).
  EXPECT_GT((J_sparse - J_dense).lpNorm<Eigen::Infinity>(), 1e-3 * scale);
  EXPECT_TRUE(UpdatePattern(J_dense, 0.0, &pattern));
  EXPECT_GT(pattern.nonzeros(), nonzeros_degenerate);
  EXPECT_FALSE(UpdatePattern(J_dense, 0.0, &pattern));  // nothing new the second time
  colouring = ColourColumns(pattern);
  EXPECT_TRUE(IsConsistentColouring(pattern, colouring));
  SparseDifferenceJacobian(F, y1, F0, pattern, colouring, &J_sparse);
  // As in the previous test: round-off of F's evaluation only.
  EXPECT_LE((J_sparse - J_dense).lpNorm<Eigen::Infinity>(), 1e-6 * scale);
}

TEST(SparseJacobian, ColouringOfKnownPatterns) {
  // Tridiagonal n × n: three groups (columns r, r+3, … never share a row).
  const int n = 10;
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    T(i, i) = 2;
    if (i > 0) T(i, i - 1) = -1;
    if (i + 1 < n) T(i, i + 1) = -1;
  }
  const SparsityPattern tri = PatternOf(T);
  EXPECT_EQ(tri.nonzeros(), 3 * n - 2);
  const ColumnColouring tri_colours = ColourColumns(tri);
  EXPECT_EQ(tri_colours.num_colours, 3);
  EXPECT_TRUE(IsConsistentColouring(tri, tri_colours));
  // A dense row forces one group per column.
  Eigen::MatrixXd D = Eigen::MatrixXd::Identity(n, n);
  D.row(0).setOnes();
  EXPECT_EQ(ColourColumns(PatternOf(D)).num_colours, n);
  // Diagonal: one group.
  EXPECT_EQ(ColourColumns(PatternOf(Eigen::MatrixXd::Identity(n, n))).num_colours, 1);
  // An inconsistent colouring is detected (so the check above can fail).
  ColumnColouring bad = tri_colours;
  bad.colour[1] = bad.colour[0];
  EXPECT_FALSE(IsConsistentColouring(tri, bad));
}

TEST(SparseJacobian, IncrementAndBadInput) {
  // eq. (17): δ = max(|y|, ε^¼) √ε.
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_NEAR(DifferenceIncrement(0.0), std::pow(eps, 0.25) * std::sqrt(eps), 1e-30);
  EXPECT_NEAR(DifferenceIncrement(-3.0), 3.0 * std::sqrt(eps), 1e-22);
  EXPECT_THROW(PatternOf(Eigen::MatrixXd::Identity(2, 2), -1.0), std::invalid_argument);
  SparsityPattern p = PatternOf(Eigen::MatrixXd::Identity(2, 2));
  EXPECT_THROW(UpdatePattern(Eigen::MatrixXd::Identity(3, 3), 0.0, &p), std::invalid_argument);
  Eigen::MatrixXd J;
  const ResidualFunction F = [](const Eigen::VectorXd& y, Eigen::VectorXd* out) { *out = y; };
  EXPECT_THROW(SparseDifferenceJacobian(F, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(2), p,
                                        ColourColumns(p), &J),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::integrators
