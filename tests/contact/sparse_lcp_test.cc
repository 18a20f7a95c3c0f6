// The sparse LCP path (contact/sparse_lcp.h) against dense lexicographic Lemke on pile-like
// problems. W = G M⁻¹ Gᵀ is positive semidefinite, so z may be non-unique but w (and W z, i.e.
// the velocity change G M⁻¹ Gᵀ z seen by the contacts) is unique: both are compared with Lemke's.

#include "contact/sparse_lcp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/impact_problem.h"
#include "contact/shapes.h"
#include "contact/spatial_contacts.h"
#include "engine/block_sparse.h"
#include "engine/spatial_model.h"
#include "tests/contact/pile_lcp.h"

namespace saltus::contact {
namespace {

using testing::MakePileLcp;
using testing::PileLcp;

// Comparison tolerance for w and W z: both solutions pass the natural-map residual 1e-10
// relative to max(1, ‖b‖∞) (complementarity.h); on a PSD W the solution w is unique and
// Lipschitz in the data, so two verified solutions agree to a small multiple of that residual
// times the conditioning of the active block; 1e-8 · max(1, ‖b‖∞) leaves that margin.
double AgreementTolerance(const Eigen::VectorXd& b) {
  return 1e-8 * std::max(1.0, b.lpNorm<Eigen::Infinity>());
}

void ExpectSolves(const LcpResult& r, const Eigen::SparseMatrix<double>& W,
                  const Eigen::VectorXd& b) {
  ASSERT_TRUE(r.ok) << r.message;
  ASSERT_EQ(r.z.size(), b.size());
  EXPECT_GE(r.z.minCoeff(), 0.0);
  // Recomputed here: w = W z + b, natural-map residual ≤ the default tolerance 1e-10.
  const Eigen::VectorXd w = W * r.z + b;
  const double scale = std::max(1.0, b.lpNorm<Eigen::Infinity>());
  EXPECT_LE(w.cwiseMin(r.z).cwiseAbs().maxCoeff() / scale, 1e-10);
  // w ≥ 0 up to the same residual.
  EXPECT_GE(w.minCoeff(), -1e-10 * scale);
}

struct PileCase {
  int nx, ny, nz;
  double p_diagonal;
  unsigned seed;
};

class SparseVsLemke : public ::testing::TestWithParam<PileCase> {};

TEST_P(SparseVsLemke, SameWAndWzAsLemke) {
  const PileCase c = GetParam();
  const PileLcp p = MakePileLcp(c.nx, c.ny, c.nz, c.p_diagonal, c.seed);
  const auto m = p.b.size();
  const LcpOptions options;
  const LcpResult sparse = SolveLcpSparse(p.W, p.b, options);
  ExpectSolves(sparse, p.W, p.b);
  EXPECT_EQ(sparse.message.rfind("lcp sparse: ", 0), 0u) << sparse.message;
  EXPECT_EQ(sparse.message.find("fallback"), std::string::npos) << sparse.message;
  const Eigen::MatrixXd W = p.W;
  LcpOptions lemke_options;
  lemke_options.fallback = false;
  const LcpResult lemke = SolveLcp(W, p.b, lemke_options);
  ASSERT_TRUE(lemke.ok) << lemke.message;
  const double tol = AgreementTolerance(p.b);
  EXPECT_LE((sparse.w - lemke.w).lpNorm<Eigen::Infinity>(), tol) << m << " rows";
  EXPECT_LE((W * sparse.z - W * lemke.z).lpNorm<Eigen::Infinity>(), tol) << m << " rows";
  // Non-trivial problems: some contacts active, some open.
  EXPECT_GT((sparse.z.array() > 0.0).count(), 0);
  EXPECT_GT((sparse.w.array() > 1e-6).count(), 0);
}

// Rows ≈ 63 to 330; the diagonal contacts make most of them rank-deficient (more rows than the
// 3N translational DOFs).
INSTANTIATE_TEST_SUITE_P(Piles, SparseVsLemke,
                         ::testing::Values(PileCase{3, 3, 3, 0.0, 1}, PileCase{3, 3, 3, 0.5, 2},
                                           PileCase{4, 4, 3, 0.3, 3}, PileCase{4, 4, 4, 0.6, 4},
                                           PileCase{5, 4, 4, 0.2, 5}, PileCase{5, 5, 3, 1.0, 6},
                                           PileCase{5, 5, 4, 0.4, 7}),
                         [](const ::testing::TestParamInfo<PileCase>& param_info) {
                           const PileCase& c = param_info.param;
                           return std::to_string(c.nx) + "x" + std::to_string(c.ny) + "x" +
                                  std::to_string(c.nz) + "_seed" + std::to_string(c.seed);
                         });

TEST(SolveLcpSparse, ManySmallPilesWithoutFallback) {
  // 60 seeds, 3 × 3 × 3 and 4 × 3 × 2 lattices, no / half / all diagonals (63 to 110 rows): the
  // sparse path verifies on its own (no dense fallback) and gives Lemke's w.
  for (unsigned seed = 0; seed < 60; ++seed) {
    const double p_diagonal = 0.5 * static_cast<double>(seed % 3);
    const PileLcp p = seed % 2 == 0 ? MakePileLcp(3, 3, 3, p_diagonal, seed)
                                    : MakePileLcp(4, 3, 2, p_diagonal, seed);
    LcpOptions options;
    options.fallback = false;
    const LcpResult sparse = SolveLcpSparse(p.W, p.b, options);
    ASSERT_TRUE(sparse.ok) << "seed " << seed << ": " << sparse.message;
    const LcpResult lemke = SolveLcp(Eigen::MatrixXd(p.W), p.b, LcpOptions{});
    ASSERT_TRUE(lemke.ok) << lemke.message;
    EXPECT_LE((sparse.w - lemke.w).lpNorm<Eigen::Infinity>(), AgreementTolerance(p.b))
        << "seed " << seed;
  }
}

TEST(SolveLcpSparse, PileProblemsAreRankDeficient) {
  // Guard on the generator: the cases above include semidefinite W (rows > DOFs).
  const PileLcp p = MakePileLcp(5, 5, 3, 1.0, 6);
  EXPECT_GT(p.b.size(), p.dofs);
}

TEST(SolveLcpSparse, BallHeldByFourRedundantContacts) {
  // One ball (mass 2, translational DOFs) on four ground contacts with the same normal e_z, and
  // pushed down: W = (1/2) 1 1ᵀ (rank 1), b = −1 on every row. Every z ≥ 0 with Σ z = 2 solves
  // it; w = 0 is unique.
  Eigen::SparseMatrix<double> W(4, 4);
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) t.emplace_back(i, j, 0.5);
  W.setFromTriplets(t.begin(), t.end());
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(4);
  const LcpResult r = SolveLcpSparse(W, b, LcpOptions{});
  ExpectSolves(r, W, b);
  // Σ z = 2 to the residual tolerance (w = 0.5 Σ z − 1).
  EXPECT_NEAR(r.z.sum(), 2.0, 1e-9);
  EXPECT_LE(r.w.lpNorm<Eigen::Infinity>(), 1e-10);
  const LcpResult lemke = SolveLcp(Eigen::MatrixXd(W), b, LcpOptions{});
  ASSERT_TRUE(lemke.ok) << lemke.message;
  // Same W z (= −b here) to the residual tolerance.
  EXPECT_LE((Eigen::MatrixXd(W) * (r.z - lemke.z)).lpNorm<Eigen::Infinity>(), 1e-9);
}

TEST(SolveLcpSparse, WarmStartAtTheSolutionNeedsOnePolish) {
  const PileLcp p = MakePileLcp(4, 4, 4, 0.6, 4);
  const LcpResult cold = SolveLcpSparse(p.W, p.b, LcpOptions{});
  ASSERT_TRUE(cold.ok) << cold.message;
  const LcpResult warm = SolveLcpSparse(p.W, p.b, LcpOptions{}, &cold.z);
  ExpectSolves(warm, p.W, p.b);
  EXPECT_LE(warm.iterations, cold.iterations);
  EXPECT_LE((warm.w - cold.w).lpNorm<Eigen::Infinity>(), AgreementTolerance(p.b));
}

TEST(SolveLcpSparse, SelfStressLoopWithASlightlyInconsistentRightHandSide) {
  // The failing problem of the N = 100 pile (pile_lcp.h, MakeSelfStressedPileLcp): the exact
  // solution opens row r by w_r = 3e-9 (the size of the inconsistency met in the pile) while PGS
  // leaves it active; on that active set the proximal steps only drift along the null direction
  // d by ~ c_r d_r / ε per step, too slowly for the caps. The drift extrapolation (sparse_lcp.h,
  // step 3) must find the opening, without the dense fallback. Before it (ε = 1e-3 max W_ii, no
  // extrapolation) 7 of these 8 cases failed with "no verified solution" after 2000 proximal steps;
  // with the small ε but no extrapolation, 3x3x3 seed 3 and 4x4x4 seed 1 still do.
  constexpr double kGap = 3e-9;
  for (const int n : {3, 4}) {
    for (const unsigned seed : {1u, 2u, 3u, 7u}) {
      SCOPED_TRACE("pile " + std::to_string(n) + "^3, seed " + std::to_string(seed));
      Eigen::VectorXd d;
      const PileLcp p = testing::MakeSelfStressedPileLcp(n, n, n, 0.3, seed, kGap, &d);
      // The construction is what it claims: W d = 0 (round-off of the eigen-solve: 1e-12 of
      // ‖W‖ ~ 10), d has mixed signs (a self-stress state, not a certificate of infeasibility),
      // and b has a component along d above the residual tolerance 1e-10 · max(1, ‖b‖∞).
      ASSERT_LE((p.W * d).lpNorm<Eigen::Infinity>(), 1e-11);
      ASSERT_LT(d.minCoeff(), 0.0);
      ASSERT_GT(d.maxCoeff(), 0.0);
      ASSERT_GT(std::abs(p.b.dot(d)), 1e-10 * std::max(1.0, p.b.lpNorm<Eigen::Infinity>()));
      LcpOptions options;
      options.fallback = false;
      const LcpResult r = SolveLcpSparse(p.W, p.b, options);
      ExpectSolves(r, p.W, p.b);
      if (n == 3 && seed == 3u) {
        EXPECT_NE(r.message.find("drift extrapolation"), std::string::npos) << r.message;
      }
      // w is unique (W PSD): w* = kGap e_r.
      Eigen::Index row = 0;
      d.cwiseAbs().maxCoeff(&row);
      Eigen::VectorXd w_star = Eigen::VectorXd::Zero(p.b.size());
      w_star[row] = kGap;
      EXPECT_LE((r.w - w_star).lpNorm<Eigen::Infinity>(), AgreementTolerance(p.b));
    }
  }
}

TEST(SolveLcpSparse, InfeasibleProblemFailsByStatus) {
  // w = −z − 1 (W = −I is not a contact matrix: non-positive diagonal): no solution. Without
  // fallback: a status; with fallback: Lemke also fails, by status.
  Eigen::SparseMatrix<double> W(2, 2);
  W.insert(0, 0) = -1.0;
  W.insert(1, 1) = -1.0;
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(2);
  LcpOptions options;
  options.fallback = false;
  EXPECT_FALSE(SolveLcpSparse(W, b, options).ok);
  options.fallback = true;
  const LcpResult r = SolveLcpSparse(W, b, options);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("lcp sparse"), std::string::npos) << r.message;
}

TEST(SolveLcpSparse, InfeasiblePsdProblemFailsByStatus) {
  // Two opposite rows on one DOF (W = [1 −1; −1 1]) both asking to separate faster than the
  // other allows: w1 = z1 − z2 − 1, w2 = z2 − z1 − 1, w1 + w2 = −2 < 0: infeasible. The sparse
  // path cannot verify any answer; without fallback that is a failure status, never a wrong ok.
  Eigen::SparseMatrix<double> W(2, 2);
  W.insert(0, 0) = 1.0;
  W.insert(0, 1) = -1.0;
  W.insert(1, 0) = -1.0;
  W.insert(1, 1) = 1.0;
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(2);
  LcpOptions options;
  options.fallback = false;
  const LcpResult r = SolveLcpSparse(W, b, options);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("no verified solution"), std::string::npos) << r.message;
}

TEST(SolveLcpSparse, AsymmetricMatrixGoesToTheDenseSolver) {
  // W = [2 1; 0 2] (a P-matrix, not symmetric): z = (0.25, 0.5) solves w = W z − (1, 1) = 0.
  Eigen::SparseMatrix<double> W(2, 2);
  W.insert(0, 0) = 2.0;
  W.insert(0, 1) = 1.0;
  W.insert(1, 1) = 2.0;
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(2);
  const LcpResult r = SolveLcpSparse(W, b, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("not symmetric"), std::string::npos) << r.message;
  // Unique solution; exact up to the LCP tolerance 1e-10 (scale 1, diagonal 2).
  EXPECT_NEAR(r.z[0], 0.25, 1e-10);
  EXPECT_NEAR(r.z[1], 0.5, 1e-10);
}

TEST(SolveLcpSparse, RejectsBadInput) {
  Eigen::SparseMatrix<double> W(2, 2);
  W.insert(0, 0) = 1.0;
  W.insert(1, 1) = 1.0;
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(2);
  EXPECT_THROW(SolveLcpSparse(W, Eigen::VectorXd::Ones(3), LcpOptions{}), std::invalid_argument);
  Eigen::VectorXd bad = b;
  bad[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(SolveLcpSparse(W, bad, LcpOptions{}), std::invalid_argument);
  LcpOptions options;
  options.tolerance = 0.0;
  EXPECT_THROW(SolveLcpSparse(W, b, options), std::invalid_argument);
  const Eigen::VectorXd z0 = Eigen::VectorXd::Ones(5);
  EXPECT_THROW(SolveLcpSparse(W, b, LcpOptions{}, &z0), std::invalid_argument);
  EXPECT_TRUE(
      SolveLcpSparse(Eigen::SparseMatrix<double>(0, 0), Eigen::VectorXd(0), LcpOptions{}).ok);
}

TEST(SolveLcpByComponents, SparsePathIsChosenAboveTheThreshold) {
  // Two independent piles side by side: one above the threshold, one below.
  const PileLcp big = MakePileLcp(4, 4, 3, 0.3, 11);
  const PileLcp small = MakePileLcp(2, 2, 1, 0.0, 12);
  const auto mb = big.b.size(), ms = small.b.size();
  Eigen::MatrixXd W = Eigen::MatrixXd::Zero(mb + ms, mb + ms);
  W.topLeftCorner(mb, mb) = big.W;
  W.bottomRightCorner(ms, ms) = small.W;
  Eigen::VectorXd b(mb + ms);
  b << big.b, small.b;
  ASSERT_LT(b.head(mb).minCoeff(), 0.0);
  ASSERT_LT(b.tail(ms).minCoeff(), 0.0);
  LcpOptions options;
  options.sparse_minimum_size = static_cast<int>(mb);
  const LcpResult r = SolveLcpByComponents(W, b, options);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.components_solved, 2);
  EXPECT_EQ(r.components_sparse, 1);
  EXPECT_NE(r.message.find("lcp sparse"), std::string::npos) << r.message;
  ExpectSolves(r, W.sparseView(), b);
  // The same problem entirely through Lemke: same w.
  options.sparse_minimum_size = static_cast<int>(mb + ms + 1);
  const LcpResult dense = SolveLcpByComponents(W, b, options);
  ASSERT_TRUE(dense.ok) << dense.message;
  EXPECT_EQ(dense.components_sparse, 0);
  EXPECT_LE((r.w - dense.w).lpNorm<Eigen::Infinity>(), AgreementTolerance(b));
  // The default threshold is what the options carry.
  EXPECT_EQ(LcpOptions{}.sparse_minimum_size, kSparseLcpMinimumSize);
  options.sparse_minimum_size = 0;
  EXPECT_THROW(SolveLcpByComponents(W, b, options), std::invalid_argument);
}

// A problem near the last one (b moved by `relative` of ‖b‖∞, fixed seed): the acceleration LCP
// of a pile after an event elsewhere in it.
Eigen::VectorXd Nearby(const Eigen::VectorXd& b, double relative, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::VectorXd out = b;
  for (Eigen::Index i = 0; i < out.size(); ++i) {
    out[i] += relative * b.lpNorm<Eigen::Infinity>() * normal(rng);
  }
  return out;
}

TEST(SolveLcpByComponents, WarmStartByIdFromThePreviousCall) {
  const PileLcp p = MakePileLcp(4, 4, 3, 0.3, 11);
  const Eigen::MatrixXd W(p.W);
  const auto m = p.b.size();
  LcpWarmStart warm;
  for (Eigen::Index i = 0; i < m; ++i) warm.ids.push_back(static_cast<int>(1000 + 7 * i));
  LcpOptions options;
  options.warm_start = &warm;
  const LcpResult first = SolveLcpByComponents(W, p.b, options);
  ASSERT_TRUE(first.ok) << first.message;
  ASSERT_EQ(first.components_sparse, 1);
  EXPECT_EQ(warm.warm_groups, 0);  // nothing recorded yet: a cold start

  // The next problem: same rows, b moved by 1e-3 (the scale of a neighbouring event's effect).
  const Eigen::VectorXd b2 = Nearby(p.b, 1e-3, 5);
  const LcpResult cold = SolveLcpByComponents(W, b2, LcpOptions{});
  const LcpResult warmed = SolveLcpByComponents(W, b2, options);
  ASSERT_TRUE(cold.ok) << cold.message;
  ExpectSolves(warmed, p.W, b2);
  EXPECT_EQ(warm.warm_groups, 1);
  EXPECT_LE((warmed.w - cold.w).lpNorm<Eigen::Infinity>(), AgreementTolerance(b2));
  // What the warm start is for: fewer PGS sweeps and proximal steps.
  EXPECT_LT(warmed.iterations, cold.iterations) << warmed.message << " / " << cold.message;

  // Found by id, not by position: the same problem with its unknowns in reverse order.
  const Eigen::MatrixXd W_rev = W.reverse();
  const Eigen::VectorXd b_rev = b2.reverse();
  std::reverse(warm.ids.begin(), warm.ids.end());
  const LcpResult reversed = SolveLcpByComponents(W_rev, b_rev, options);
  ExpectSolves(reversed, W_rev.sparseView(), b_rev);
  EXPECT_EQ(warm.warm_groups, 2);
  EXPECT_LT(reversed.iterations, cold.iterations);

  // Only the previous call counts (max_age = 1): after a call on other ids, a cold start.
  const std::vector<int> ids = warm.ids;
  for (int& id : warm.ids) id += 1;
  ASSERT_TRUE(SolveLcpByComponents(W_rev, b_rev, options).ok);
  EXPECT_EQ(warm.warm_groups, 2);
  warm.ids = ids;
  ASSERT_TRUE(SolveLcpByComponents(W_rev, b_rev, options).ok);
  EXPECT_EQ(warm.warm_groups, 2);

  warm.ids.pop_back();
  EXPECT_THROW(SolveLcpByComponents(W_rev, b_rev, options), std::invalid_argument);
  warm.ids = ids;
  warm.ids[3] = -1;
  EXPECT_THROW(SolveLcpByComponents(W_rev, b_rev, options), std::invalid_argument);
}

TEST(SolveImpact, PileComponentTakesTheSparsePath) {
  // 27 spheres (radius 0.1, masses 1 ... 3.6) touching on a 3 × 3 × 3 lattice, the bottom layer
  // on the floor: 54 axis rows, 9 floor rows and the 24 face diagonals of the horizontal layers
  // (open gaps, rows given anyway): 87 rows > 81 translational DOFs, one component. Every sphere
  // moves down and sideways at random: the impact LCP (eq. 4) of the whole pile.
  constexpr double r = 0.1;
  engine::SpatialModelBuilder builder;
  const auto id = [](int i, int j, int k) { return (k * 3 + j) * 3 + i; };
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) {
        engine::SpatialBody b;
        b.name = "s" + std::to_string(id(i, j, k));
        b.mass = 1.0 + 0.1 * id(i, j, k);
        b.inertia = 0.4 * b.mass * r * r * Eigen::Matrix3d::Identity();
        b.position = Eigen::Vector3d(2 * r * i, 2 * r * j, r + 2 * r * k);
        builder.AddBody(b);
      }
    }
  }
  builder.SetGravity(Eigen::Vector3d(0, 0, -9.81));
  const auto model = builder.Build();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  const Shape floor = Shape::Plane(Eigen::Vector3d::UnitZ(), 0.0);
  const Shape ball = Shape::Sphere(r);
  std::vector<SpatialContactPair> pairs;
  const auto pair = [&](int a, int b) {
    pairs.push_back({"p" + std::to_string(pairs.size()), a, ball, b, ball, -1.0});
  };
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) {
        const int a = id(i, j, k);
        if (k == 0) pairs.push_back({"f" + std::to_string(a), engine::kGround, floor, a, ball, -1});
        if (i < 2) pair(a, id(i + 1, j, k));
        if (j < 2) pair(a, id(i, j + 1, k));
        if (k < 2) pair(a, id(i, j, k + 1));
        if (i < 2 && j < 2) pair(a, id(i + 1, j + 1, k));
        if (i < 2 && j > 0) pair(a, id(i + 1, j - 1, k));
      }
    }
  }
  system->AddConstraintBlock(std::make_shared<SpatialContacts>(model, pairs));
  const std::vector<int> rows = system->RowsOfKind(engine::ConstraintKind::kUnilateral);
  ASSERT_EQ(rows.size(), 87u);
  ASSERT_GE(system->nv(), engine::kSparseMinimumNv);
  const Eigen::VectorXd q = model->InitialPositions();
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  Eigen::VectorXd v_minus = Eigen::VectorXd::Zero(system->nv());
  for (int a = 0; a < 27; ++a) {
    for (int d = 0; d < 3; ++d) v_minus[6 * a + d] = normal(rng) - (d == 2 ? 2.0 : 0.0);
  }
  const std::vector<double> e(rows.size(), 0.5);
  LcpOptions options;
  ASSERT_LE(options.sparse_minimum_size, 87);
  const ImpactResult sparse = SolveImpact(*system, 0.0, q, v_minus, {}, rows, e, options);
  ASSERT_TRUE(sparse.ok) << sparse.message;
  EXPECT_EQ(sparse.lcp.components_sparse, 1);
  EXPECT_EQ(sparse.largest_lcp, 87);
  EXPECT_NE(sparse.lcp.message.find("lcp sparse"), std::string::npos) << sparse.lcp.message;
  options.sparse_minimum_size = 1000;  // the dense Lemke path
  const ImpactResult lemke = SolveImpact(*system, 0.0, q, v_minus, {}, rows, e, options);
  ASSERT_TRUE(lemke.ok) << lemke.message;
  EXPECT_EQ(lemke.lcp.components_sparse, 0);
  // v⁺ is unique (W PSD: same W z): the two exact solves agree to the LCP tolerance 1e-10 times
  // the scale max(1, ‖b‖∞) ≈ 10 over the smallest mass 1, with a margin of 100.
  EXPECT_LE((sparse.v_plus - lemke.v_plus).lpNorm<Eigen::Infinity>(), 1e-7);
  EXPECT_GT((sparse.v_plus - v_minus).norm(), 1.0);  // a real impact
}

}  // namespace
}  // namespace saltus::contact
