// engine::SparseDelassus on structures other than the chain: rows grouped by equal column-block
// patterns (groups of 1 to 5 rows, the supernodes of the block LDLᵀ), closed loops and a hub body
// (fill-in outside the pattern of W), full and diagonal metrics, against dense linear algebra on
// the same G (G.ToDense()); the fused products G x of Factor and AddNinvGt against Multiply.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/block_sparse.h"

namespace saltus::engine {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kB = 6;

// A mechanism-like G on `bodies` bodies: for each "joint" (pair of bodies, or one body and the
// ground) a group of `size` rows with random values on the blocks of its bodies.
struct Joint {
  int a, b, size;  // b = -1: ground
};

BlockSparseRows MakeRows(int bodies, const std::vector<Joint>& joints, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  BlockSparseRows G;
  G.Clear(kB, kB * bodies);
  for (const Joint& j : joints) {
    for (int r = 0; r < j.size; ++r) {
      for (const int body : {std::min(j.a, j.b < 0 ? j.a : j.b), std::max(j.a, j.b)}) {
        if (body < 0) continue;
        double* out = G.AddBlock(body);
        for (int k = 0; k < kB; ++k) out[k] = u(rng);
        if (j.b < 0) break;
      }
      G.EndRow();
    }
  }
  return G;
}

// Random SPD 6 × 6 blocks (diagonal ones when `diagonal`).
MassBlocks MakeMass(int bodies, bool diagonal, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MassBlocks M;
  M.block_size = kB;
  M.blocks.resize(kB, kB * bodies);
  for (int c = 0; c < bodies; ++c) {
    Eigen::MatrixXd A(kB, kB);
    for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = u(rng);
    Eigen::MatrixXd block = A * A.transpose() + 2.0 * Eigen::MatrixXd::Identity(kB, kB);
    if (diagonal) block = Eigen::MatrixXd(block.diagonal().asDiagonal());
    M.blocks.middleCols(kB * c, kB) = block;
  }
  return M;
}

Eigen::MatrixXd DenseMass(const MassBlocks& M) {
  const auto nv = M.blocks.cols();
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(nv, nv);
  for (Eigen::Index c = 0; c * kB < nv; ++c) {
    out.block(c * kB, c * kB, kB, kB) = M.blocks.middleCols(c * kB, kB);
  }
  return out;
}

// Every check of one structure: W⁻¹ b, N⁻¹ Gᵀ λ and the fused products against dense algebra.
void CheckAgainstDense(int bodies, const std::vector<Joint>& joints, bool diagonal, unsigned seed) {
  SCOPED_TRACE(::testing::Message() << "seed " << seed << (diagonal ? " diagonal" : " full"));
  const BlockSparseRows G = MakeRows(bodies, joints, seed);
  const MassBlocks M = MakeMass(bodies, diagonal, seed + 1);
  const Eigen::MatrixXd Gd = G.ToDense();
  const Eigen::MatrixXd N = DenseMass(M);
  const Eigen::MatrixXd NinvGt = N.llt().solve(Gd.transpose());
  const Eigen::MatrixXd W = Gd * NinvGt;
  const int m = G.rows();
  std::mt19937 rng(seed + 2);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd b(m), x(kB * bodies), lambda(m);
  for (Eigen::Index i = 0; i < m; ++i) b(i) = u(rng);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = u(rng);
  for (Eigen::Index i = 0; i < m; ++i) lambda(i) = u(rng);

  SparseDelassus delassus;
  ASSERT_TRUE(delassus.SetMetric(M));
  Eigen::VectorXd Gx;
  ASSERT_TRUE(delassus.Factor(G, 1e-12, x, &Gx));
  Eigen::VectorXd solution;
  delassus.Solve(b, &solution);
  const Eigen::VectorXd expected = W.ldlt().solve(b);
  const Eigen::VectorXd s = W.jacobiSvd().singularValues();
  const double kappa = s(0) / s(s.size() - 1);
  // Backward-stable solves of the same SPD system: relative difference ≲ κ(W) ε (a factor 100
  // for the accumulation over m ≤ 100 rows).
  EXPECT_LE((solution - expected).norm(), 100.0 * kappa * kEps * expected.norm());
  // W itself and its largest entry (the pattern and the scatter of the assembly).
  EXPECT_NEAR(delassus.WMaxAbs(), W.cwiseAbs().maxCoeff(), 1e-13 * W.cwiseAbs().maxCoeff());
  EXPECT_NEAR(delassus.GMaxAbs(), G.MaxAbs(), 0.0 + kEps * G.MaxAbs());
  // Sums of ≤ 12 products of entries ≤ 1: a few ε (16 ε bound).
  EXPECT_LE((Gx - Gd * x).lpNorm<Eigen::Infinity>(), 16 * kEps * (1.0 + x.lpNorm<1>()));

  Eigen::VectorXd y = x, Gy;
  delassus.AddNinvGt(lambda, &y, &Gy);
  const Eigen::VectorXd y_expected = x + NinvGt * lambda;
  // N⁻¹ by blocks (Cholesky of a 6 × 6 SPD block with κ ≲ 1e2): ≤ 1e-13 relative.
  EXPECT_LE((y - y_expected).lpNorm<Eigen::Infinity>(),
            1e-13 * (1.0 + y_expected.lpNorm<Eigen::Infinity>()));
  EXPECT_LE((Gy - Gd * y).lpNorm<Eigen::Infinity>(),
            16 * kEps * (1.0 + y.lpNorm<1>()));  // as for Gx
}

TEST(SparseDelassus, LoopsAndHubWithMixedGroupSizesMatchDense) {
  // 12 bodies: a chain of revolute-like groups (5 rows), closed into a loop, a hub body 11
  // joined to every third body by spherical-like groups (3), single rows (distance-like, 1) and
  // pairs (2) across the loop, and a ground joint. The loop and the hub create fill-in.
  std::vector<Joint> joints = {{0, -1, 3}};
  for (int i = 0; i + 1 < 11; ++i) joints.push_back({i, i + 1, i % 2 == 0 ? 5 : 3});
  joints.push_back({10, 0, 2});  // closes the loop
  for (int i = 0; i < 11; i += 3) joints.push_back({11, i, 3});
  joints.push_back({2, 7, 1});
  joints.push_back({4, 9, 1});
  joints.push_back({1, 6, 2});
  for (unsigned seed = 1; seed <= 3; ++seed) {
    CheckAgainstDense(12, joints, /*diagonal=*/false, seed);
    CheckAgainstDense(12, joints, /*diagonal=*/true, seed);
  }
}

TEST(SparseDelassus, RefactorizesWithNewValuesAndStructures) {
  const std::vector<Joint> chain = {{0, -1, 3}, {0, 1, 3}, {1, 2, 3}, {2, 3, 3}};
  const std::vector<Joint> tree = {{0, -1, 3}, {0, 1, 5}, {0, 2, 1}, {2, 3, 2}, {1, 3, 1}};
  // Same structure twice (numeric refactorization only), then another structure.
  CheckAgainstDense(4, chain, false, 7);
  SparseDelassus delassus;
  const MassBlocks M = MakeMass(4, false, 3);
  ASSERT_TRUE(delassus.SetMetric(M));
  const BlockSparseRows G1 = MakeRows(4, chain, 11), G2 = MakeRows(4, chain, 12);
  const BlockSparseRows G3 = MakeRows(4, tree, 13);
  for (const BlockSparseRows* G : {&G1, &G2, &G3, &G1}) {
    ASSERT_TRUE(delassus.Factor(*G, 1e-12));
    const Eigen::MatrixXd Gd = G->ToDense();
    const Eigen::MatrixXd W = Gd * DenseMass(M).llt().solve(Gd.transpose());
    const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(G->rows(), -1.0, 1.0);
    Eigen::VectorXd x;
    delassus.Solve(b, &x);
    // Residual of a backward-stable solve: ≲ ε ‖W‖ ‖x‖ (factor 100 for m ≤ 15 rows).
    EXPECT_LE((W * x - b).norm(), 100.0 * kEps * W.norm() * x.norm());
  }
  EXPECT_EQ(delassus.analyses(), 3);  // chain, tree, chain again
}

TEST(SparseDelassus, RedundantRowsReportSingular) {
  // Two identical groups on the same bodies: W singular.
  BlockSparseRows G = MakeRows(3, {{0, -1, 3}, {0, 1, 3}, {1, 2, 3}}, 5);
  for (int r = 0; r < 3; ++r) {
    // Copy the rows of the second group onto a fourth one (same pattern, same values).
    for (int k = G.row_start[static_cast<std::size_t>(3 + r)];
         k < G.row_start[static_cast<std::size_t>(4 + r)]; ++k) {
      double* out = G.AddBlock(G.block_col[static_cast<std::size_t>(k)]);
      for (int j = 0; j < kB; ++j) out[j] = G.values[static_cast<std::size_t>(kB * k + j)];
    }
    G.EndRow();
  }
  ASSERT_EQ(G.rows(), 12);
  SparseDelassus delassus;
  ASSERT_TRUE(delassus.SetMetric(MakeMass(3, false, 2)));
  EXPECT_FALSE(delassus.Factor(G, 1e-10));
}

}  // namespace
}  // namespace saltus::engine
