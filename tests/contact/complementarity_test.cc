// A bank of LCPs × the three solvers (in the spirit of Siconos' lcp_test_collection). Every
// solve is checked on the complementarity conditions recomputed here from W, b and z, not only on
// z. What each solver is expected to do on each problem:
//
//   lemke  solves every feasible problem of the bank (P-matrices and positive semidefinite
//          Delassus matrices, including rank-deficient ones) and fails cleanly on infeasible ones.
//   enum   the same (each bank problem has a basic solution with a nonsingular basis), within its
//          size limit kMaxEnumerativeSize.
//   pgs    solves the diagonal, positive definite and semidefinite problems of the bank whose
//          diagonal is positive (for symmetric positive semidefinite W with a positive diagonal
//          and a solvable LCP its iterates converge, Luo & Tseng 1992, but possibly slowly: the
//          seeded Delassus problems here take 9 to 126 sweeps). It fails by status when W has a
//          zero diagonal entry (a contact row of G that vanishes: "vanishing diagonal") and when
//          the sweep limit is reached (PgsIterationLimitIsAStatus).

#include "contact/complementarity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

// Siconos 4.4's lcp_enum never frees the enumeration state it allocates (enum_init, 32 bytes per
// enumerative solve). Known upstream leak, not ours: suppressed for LeakSanitizer in
// SALTUS_SANITIZE builds (this hook is an unused function otherwise).
extern "C" const char* __lsan_default_suppressions() { return "leak:enum_init\n"; }

namespace saltus::contact {
namespace {

enum class Expect { kSolves, kFails };

struct LcpCase {
  std::string name;
  Eigen::MatrixXd W;
  Eigen::VectorXd b;
  Eigen::VectorXd z_exact;  // empty when the solution is not unique or not known in closed form
  Expect lemke = Expect::kSolves;
  Expect pgs = Expect::kSolves;
  Expect enumerative = Expect::kSolves;
};

Expect ExpectationFor(const LcpCase& c, LcpSolver s) {
  switch (s) {
    case LcpSolver::kLemke:
      return c.lemke;
    case LcpSolver::kPgs:
      return c.pgs;
    case LcpSolver::kEnumerative:
      return c.enumerative;
  }
  return Expect::kSolves;
}

Eigen::MatrixXd RandomSpd(int n, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = normal(rng);
  return A * A.transpose() + 0.5 * Eigen::MatrixXd::Identity(n, n);
}

Eigen::VectorXd RandomVector(int n, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Eigen::VectorXd x(n);
  for (int i = 0; i < n; ++i) x(i) = normal(rng);
  return x;
}

// Delassus matrix W = G M⁻¹ Gᵀ of m contact rows on nv < m coordinates (rank ≤ nv), and
// b = G v⁻ for a random v⁻: the impact LCP with e = 0, always solvable (it is the projection of
// v⁻ onto the cone {G v ≥ 0} in the M-metric).
void RandomDelassus(int m, int nv, std::mt19937& rng, Eigen::MatrixXd* W, Eigen::VectorXd* b) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> mass(0.5, 2.0);
  Eigen::MatrixXd G(m, nv);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < nv; ++j) G(i, j) = normal(rng);
  Eigen::VectorXd m_inv(nv);
  for (int j = 0; j < nv; ++j) m_inv(j) = 1.0 / mass(rng);
  *W = G * m_inv.asDiagonal() * G.transpose();
  *b = G * RandomVector(nv, rng);
}

std::vector<LcpCase> Bank() {
  std::vector<LcpCase> bank;
  {
    LcpCase c{"diagonal", Eigen::Vector3d(2, 4, 1).asDiagonal(), Eigen::Vector3d(-2, 4, -3),
              Eigen::Vector3d(1, 0, 3)};
    bank.push_back(c);
  }
  {
    // z₂ = 0: z₁ = 2/2 = 1, w₂ = 1·1 + 1 = 2 > 0.
    Eigen::Matrix2d W;
    W << 2, 1, 1, 2;
    bank.push_back({"two_by_two_one_active", W, Eigen::Vector2d(-2, 1), Eigen::Vector2d(1, 0)});
    // Both active: 3 z = 3 → z = (1, 1).
    bank.push_back({"two_by_two_both_active", W, Eigen::Vector2d(-3, -3), Eigen::Vector2d(1, 1)});
  }
  {
    Eigen::Matrix3d W;
    W << 3, 1, 0, 1, 3, 1, 0, 1, 3;
    bank.push_back({"all_inactive", W, Eigen::Vector3d(1, 0, 2), Eigen::Vector3d::Zero()});
  }
  {
    LcpCase c{"n0", Eigen::MatrixXd(0, 0), Eigen::VectorXd(0), Eigen::VectorXd(0)};
    bank.push_back(c);
  }
  {
    LcpCase c{"n1_active", Eigen::MatrixXd::Constant(1, 1, 2.0), Eigen::VectorXd::Constant(1, -4.0),
              Eigen::VectorXd::Constant(1, 2.0)};
    bank.push_back(c);
    LcpCase d{"n1_inactive", Eigen::MatrixXd::Constant(1, 1, 2.0),
              Eigen::VectorXd::Constant(1, 4.0), Eigen::VectorXd::Zero(1)};
    bank.push_back(d);
    LcpCase e{"n1_infeasible_zero", Eigen::MatrixXd::Zero(1, 1), Eigen::VectorXd::Constant(1, -1.0),
              Eigen::VectorXd(0)};
    e.lemke = e.pgs = e.enumerative = Expect::kFails;
    bank.push_back(e);
    LcpCase f{"n1_infeasible_negative", Eigen::MatrixXd::Constant(1, 1, -1.0),
              Eigen::VectorXd::Constant(1, -1.0), Eigen::VectorXd(0)};
    f.lemke = f.pgs = f.enumerative = Expect::kFails;
    bank.push_back(f);
  }
  {
    // w₁ = −1 whatever z: infeasible. W₁₁ = 0 also stops PGS (vanishing diagonal).
    Eigen::Matrix2d W;
    W << 0, 0, 0, 1;
    LcpCase c{"infeasible_2x2", W, Eigen::Vector2d(-1, 0), Eigen::VectorXd(0)};
    c.lemke = c.pgs = c.enumerative = Expect::kFails;
    bank.push_back(c);
  }
  {
    // Block resting on three colinear points of its bottom edge (x = −1, 0, 1), normal +y:
    // G = [0 1 x_i], M = diag(m, m, J), W = G M⁻¹ Gᵀ has rank 2. b = G v⁻ with the block falling
    // (v⁻ = (0, −1, 0)): every contact has u⁻ = −1; any P ≥ 0 with ΣP = m and Σ x_i P_i = 0
    // solves it (not unique), so only the residual is checked.
    Eigen::Matrix3d G;
    G << 0, 1, -1, 0, 1, 0, 0, 1, 1;
    const Eigen::Vector3d m_inv(1.0 / 2.0, 1.0 / 2.0, 1.0 / 0.5);
    LcpCase c{"delassus_colinear_rank2", G * m_inv.asDiagonal() * G.transpose(),
              G * Eigen::Vector3d(0, -1, 0), Eigen::VectorXd(0)};
    bank.push_back(c);
  }
  std::mt19937 rng(20170417);  // fixed seed: the bank is the same on every run
  for (int n : {4, 8, 12}) {
    LcpCase c{"random_spd_" + std::to_string(n), RandomSpd(n, rng), RandomVector(n, rng),
              Eigen::VectorXd(0)};
    bank.push_back(c);
  }
  {
    LcpCase c{"random_spd_40", RandomSpd(40, rng), RandomVector(40, rng), Eigen::VectorXd(0)};
    c.enumerative = Expect::kFails;  // above kMaxEnumerativeSize: refused by status
    bank.push_back(c);
  }
  for (const auto& [m, nv] : std::vector<std::pair<int, int>>{{4, 2}, {8, 3}, {12, 6}}) {
    LcpCase c{"delassus_rank" + std::to_string(nv) + "_of_" + std::to_string(m), Eigen::MatrixXd(),
              Eigen::VectorXd(), Eigen::VectorXd(0)};
    RandomDelassus(m, nv, rng, &c.W, &c.b);
    bank.push_back(c);
  }
  {
    // A contact row of G that vanishes (e.g. a degenerate normal): W has a zero row and column
    // and b has a zero entry; any z₄ ≥ 0 is complementary. Lemke and enum solve it; PGS cannot
    // divide by the zero diagonal and reports it.
    Eigen::MatrixXd G(4, 3);
    G << 0, 1, -1, 0, 1, 1, 1, 0, 0, 0, 0, 0;
    const Eigen::MatrixXd W = G * G.transpose();
    LcpCase c{"delassus_zero_row", W, G * Eigen::Vector3d(0.5, -1, 0.2), Eigen::VectorXd(0)};
    c.pgs = Expect::kFails;
    bank.push_back(c);
  }
  return bank;
}

const std::vector<LcpCase>& TheBank() {
  static const std::vector<LcpCase> bank = Bank();
  return bank;
}

class LcpBankTest : public ::testing::TestWithParam<std::tuple<int, LcpSolver>> {};

TEST_P(LcpBankTest, SolvesWithSmallComplementarityResidual) {
  const LcpCase& c = TheBank()[static_cast<std::size_t>(std::get<0>(GetParam()))];
  const LcpSolver solver = std::get<1>(GetParam());
  LcpOptions options;
  options.solver = solver;
  options.fallback = false;  // the bank tests each solver on its own
  const LcpResult r = SolveLcp(c.W, c.b, options);
  const Expect expect = ExpectationFor(c, solver);
  SCOPED_TRACE(c.name + " / " + std::string(ToString(solver)) + ": " + r.message);

  if (expect == Expect::kFails) {
    EXPECT_FALSE(r.ok);
    EXPECT_FALSE(r.message.empty());
    return;
  }
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.z.size(), c.b.size());
  ASSERT_EQ(r.w.size(), c.b.size());
  if (c.b.size() == 0) return;

  // Recompute the complementarity conditions here. Scale: max(1, ‖b‖∞), as in the wrapper.
  const double scale = std::max(1.0, c.b.lpNorm<Eigen::Infinity>());
  // Tolerance: the requested natural-map tolerance (1e-10) times the scale.
  const double tol = options.tolerance * scale;
  const Eigen::VectorXd w = c.W * r.z + c.b;
  // The returned w is W z + b recomputed by the wrapper: equal up to the round-off of the product
  // (a few ulps of ‖W‖‖z‖ + ‖b‖).
  const double product_roundoff =
      1e-14 * (c.W.lpNorm<Eigen::Infinity>() * r.z.lpNorm<Eigen::Infinity>() + scale);
  EXPECT_LE((w - r.w).lpNorm<Eigen::Infinity>(), product_roundoff);
  EXPECT_GE(r.z.minCoeff(), 0.0);  // the wrapper clips z at 0
  EXPECT_GE(w.minCoeff(), -tol);
  EXPECT_LE(w.cwiseMin(r.z).cwiseAbs().maxCoeff(), tol);
  EXPECT_LE(r.residual, options.tolerance);
  if (c.z_exact.size() > 0) {
    // Closed form; the solvers reach it to the residual tolerance divided by the smallest
    // diagonal entry of the active block (≥ 1 here), so 1e-9 is ample.
    EXPECT_LE((r.z - c.z_exact).lpNorm<Eigen::Infinity>(), 1e-9);
  }
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<int, LcpSolver>>& info) {
  return TheBank()[static_cast<std::size_t>(std::get<0>(info.param))].name + "_" +
         std::string(ToString(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(Bank, LcpBankTest,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(TheBank().size())),
                                            ::testing::Values(LcpSolver::kLemke, LcpSolver::kPgs,
                                                              LcpSolver::kEnumerative)),
                         CaseName);

TEST(SolveLcp, SolversAgreeOnPositiveDefiniteProblems) {
  // A symmetric positive definite W is a P-matrix: the solution is unique, so all three solvers
  // must return the same z. Difference bound: each z is within tolerance·scale/λ_min(W) of the
  // exact solution (λ_min ≥ 0.5 by construction), so 1e-8 is a safe bound.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::MatrixXd W = RandomSpd(6, rng);
    const Eigen::VectorXd b = RandomVector(6, rng);
    LcpOptions options;
    const LcpResult lemke = SolveLcp(W, b, options);
    options.solver = LcpSolver::kPgs;
    const LcpResult pgs = SolveLcp(W, b, options);
    options.solver = LcpSolver::kEnumerative;
    const LcpResult enumerative = SolveLcp(W, b, options);
    ASSERT_TRUE(lemke.ok) << lemke.message;
    ASSERT_TRUE(pgs.ok) << pgs.message;
    ASSERT_TRUE(enumerative.ok) << enumerative.message;
    EXPECT_LE((lemke.z - pgs.z).lpNorm<Eigen::Infinity>(), 1e-8);
    EXPECT_LE((lemke.z - enumerative.z).lpNorm<Eigen::Infinity>(), 1e-8);
  }
}

TEST(SolveLcp, PgsIterationLimitIsAStatus) {
  // An ill-conditioned SPD problem that PGS cannot solve to 1e-10 in 3 sweeps.
  std::mt19937 rng(11);
  Eigen::MatrixXd W = RandomSpd(10, rng);
  W += 50.0 * Eigen::VectorXd::Ones(10) * Eigen::VectorXd::Ones(10).transpose();
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(10);
  LcpOptions options;
  options.solver = LcpSolver::kPgs;
  options.max_iterations = 3;
  options.fallback = false;
  const LcpResult r = SolveLcp(W, b, options);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("pgs"), std::string::npos) << r.message;
  EXPECT_EQ(r.iterations, 3);
  options.max_iterations = 100000;
  EXPECT_TRUE(SolveLcp(W, b, options).ok);
}

TEST(SolveLcp, FallbackSolvesWhatTheChosenSolverCannot) {
  // The problem above with PGS limited to 3 sweeps: with the fallback (the default) enumeration
  // solves it and the message says so; the residual is at the bank's level.
  std::mt19937 rng(11);
  Eigen::MatrixXd W = RandomSpd(10, rng);
  W += 50.0 * Eigen::VectorXd::Ones(10) * Eigen::VectorXd::Ones(10).transpose();
  const Eigen::VectorXd b = -Eigen::VectorXd::Ones(10);
  LcpOptions options;
  options.solver = LcpSolver::kPgs;
  options.max_iterations = 3;
  const LcpResult r = SolveLcp(W, b, options);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("fallback enum"), std::string::npos) << r.message;
  EXPECT_LE(r.residual, options.tolerance);
}

TEST(SolveLcp, NothingIsPrinted) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  for (const LcpCase& c : TheBank()) {
    for (LcpSolver s : {LcpSolver::kLemke, LcpSolver::kPgs, LcpSolver::kEnumerative}) {
      LcpOptions options;
      options.solver = s;
      (void)SolveLcp(c.W, c.b, options);
    }
  }
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
}

TEST(SolveLcp, RejectsBadInput) {
  const Eigen::Matrix2d W = Eigen::Matrix2d::Identity();
  const Eigen::Vector2d b(-1, 1);
  LcpOptions options;
  EXPECT_THROW(SolveLcp(Eigen::MatrixXd::Identity(2, 3), b, options), std::invalid_argument);
  EXPECT_THROW(SolveLcp(Eigen::Matrix3d::Identity(), b, options), std::invalid_argument);
  Eigen::Matrix2d W_nan = W;
  W_nan(0, 1) = std::nan("");
  EXPECT_THROW(SolveLcp(W_nan, b, options), std::invalid_argument);
  Eigen::Vector2d b_inf = b;
  b_inf(1) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(SolveLcp(W, b_inf, options), std::invalid_argument);
  LcpOptions bad = options;
  bad.tolerance = 0.0;
  EXPECT_THROW(SolveLcp(W, b, bad), std::invalid_argument);
  bad = options;
  bad.max_iterations = 0;
  EXPECT_THROW(SolveLcp(W, b, bad), std::invalid_argument);
  // An out-of-range enum value must never reach Siconos (which would exit()).
  bad = options;
  bad.solver = static_cast<LcpSolver>(42);
  EXPECT_THROW(SolveLcp(W, b, bad), std::invalid_argument);
  try {
    (void)SolveLcp(W_nan, b, options);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("W"), std::string::npos) << e.what();
  }
}

TEST(SolveLcp, EnumerationLimitIsAStatus) {
  const int n = kMaxEnumerativeSize + 1;
  LcpOptions options;
  options.solver = LcpSolver::kEnumerative;
  options.fallback = false;
  const LcpResult r = SolveLcp(Eigen::MatrixXd::Identity(n, n), -Eigen::VectorXd::Ones(n), options);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("limit"), std::string::npos) << r.message;
}

TEST(SolveLcp, NamesRoundTrip) {
  for (LcpSolver s : {LcpSolver::kLemke, LcpSolver::kPgs, LcpSolver::kEnumerative}) {
    const auto parsed = ParseLcpSolver(ToString(s));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ(ToString(LcpSolver::kLemke), "lemke");
  EXPECT_EQ(ToString(LcpSolver::kPgs), "pgs");
  EXPECT_EQ(ToString(LcpSolver::kEnumerative), "enum");
  EXPECT_FALSE(ParseLcpSolver("Lemke").has_value());
  EXPECT_FALSE(ParseLcpSolver("").has_value());
}

TEST(SolveLcp, ConcurrentCallsAreSafe) {
  // Two threads solving different problems with the enumerative solver (which keeps state in
  // Siconos) must each get their own correct answer.
  std::mt19937 rng(3);
  const Eigen::MatrixXd W1 = RandomSpd(8, rng), W2 = RandomSpd(8, rng);
  const Eigen::VectorXd b1 = RandomVector(8, rng), b2 = RandomVector(8, rng);
  LcpOptions options;
  options.solver = LcpSolver::kEnumerative;
  const LcpResult ref1 = SolveLcp(W1, b1, options), ref2 = SolveLcp(W2, b2, options);
  ASSERT_TRUE(ref1.ok && ref2.ok);
  bool all_ok[2] = {true, true};
  auto worker = [&](int k) {
    for (int i = 0; i < 50; ++i) {
      const LcpResult r = k == 0 ? SolveLcp(W1, b1, options) : SolveLcp(W2, b2, options);
      const LcpResult& ref = k == 0 ? ref1 : ref2;
      // Same deterministic algorithm on the same data: identical up to round-off.
      if (!r.ok || (r.z - ref.z).lpNorm<Eigen::Infinity>() > 1e-12) all_ok[k] = false;
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_TRUE(all_ok[0]);
  EXPECT_TRUE(all_ok[1]);
}

// ---- Independent components (SolveLcpByComponents) ----------------------------------------

// A random block-diagonal LCP with the unknowns of its blocks interleaved: blocks of sizes
// `sizes`, unknown i in block i mod (number of blocks) until a block is full.
struct SplitCase {
  Eigen::MatrixXd W;
  Eigen::VectorXd b;
  std::vector<int> component;
};

SplitCase InterleavedBlocks(const std::vector<int>& sizes, std::mt19937& rng) {
  SplitCase c;
  int n = 0;
  for (int m : sizes) n += m;
  std::vector<std::vector<int>> members(sizes.size());
  for (int i = 0, k = 0; i < n; ++k) {
    const std::size_t blk = static_cast<std::size_t>(k) % sizes.size();
    if (static_cast<int>(members[blk].size()) < sizes[blk]) {
      members[blk].push_back(i++);
    }
  }
  c.W = Eigen::MatrixXd::Zero(n, n);
  c.b = RandomVector(n, rng);
  c.component.assign(static_cast<std::size_t>(n), 0);
  for (std::size_t blk = 0; blk < sizes.size(); ++blk) {
    const Eigen::MatrixXd Wb = RandomSpd(sizes[blk], rng);
    const auto& idx = members[blk];
    for (std::size_t i = 0; i < idx.size(); ++i) {
      c.component[static_cast<std::size_t>(idx[i])] = static_cast<int>(blk);
      for (std::size_t j = 0; j < idx.size(); ++j) {
        c.W(idx[i], idx[j]) = Wb(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
      }
    }
  }
  return c;
}

double NaturalMapResidual(const Eigen::MatrixXd& W, const Eigen::VectorXd& b,
                          const Eigen::VectorXd& z) {
  const Eigen::VectorXd w = W * z + b;
  return w.cwiseMin(z).cwiseAbs().maxCoeff() / std::max(1.0, b.lpNorm<Eigen::Infinity>());
}

TEST(SolveLcpByComponents, EqualsTheUnsplitSolveOnInterleavedBlocks) {
  // W positive definite (each block is): the solution is unique, so the split and the unsplit
  // Lemke solves agree to within the solver tolerance·scale/λ_min(W) (λ_min ≥ 0.5 by
  // construction of RandomSpd): 1e-8 is safe; in practice both are exact to round-off.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    const SplitCase c = InterleavedBlocks({4, 1, 6, 3}, rng);
    const LcpOptions options;
    const LcpResult whole = SolveLcp(c.W, c.b, options);
    const LcpResult split = SolveLcpByComponents(c.W, c.b, options);
    ASSERT_TRUE(whole.ok) << whole.message;
    ASSERT_TRUE(split.ok) << split.message;
    EXPECT_EQ(split.components, 4);
    EXPECT_LE((split.z - whole.z).lpNorm<Eigen::Infinity>(), 1e-8);
    // The returned w and residual describe the whole problem.
    EXPECT_LE((split.w - (c.W * split.z + c.b)).lpNorm<Eigen::Infinity>(), 1e-12);
    EXPECT_LE(split.residual, options.tolerance);
    EXPECT_LE(NaturalMapResidual(c.W, c.b, split.z), options.tolerance);
    EXPECT_LE(split.largest_component, 6);
    // The labelled overload with the caller's own partition gives the same z.
    const LcpResult labelled = SolveLcpByComponents(
        c.component, 4,
        [&c](int, const std::vector<int>& idx, Eigen::MatrixXd* W_c) {
          for (std::size_t i = 0; i < idx.size(); ++i) {
            for (std::size_t j = 0; j < idx.size(); ++j) {
              (*W_c)(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
                  c.W(idx[i], idx[j]);
            }
          }
        },
        c.b, options);
    ASSERT_TRUE(labelled.ok) << labelled.message;
    EXPECT_LE((labelled.z - split.z).lpNorm<Eigen::Infinity>(), 1e-15);
  }
}

TEST(SolveLcpByComponents, OneComponentIsTheUnsplitSolve) {
  // A dense W (one component) goes to SolveLcp unchanged: the same call on the same data, so
  // the answers agree to the last bit (bound 0 written as the smallest meaningful 1e-300).
  std::mt19937 rng(5);
  const Eigen::MatrixXd W = RandomSpd(7, rng);
  const Eigen::VectorXd b = RandomVector(7, rng);
  const LcpResult whole = SolveLcp(W, b, LcpOptions{});
  const LcpResult split = SolveLcpByComponents(W, b, LcpOptions{});
  ASSERT_TRUE(whole.ok && split.ok);
  EXPECT_EQ(split.components, 1);
  EXPECT_EQ(split.largest_component, 7);
  EXPECT_LE((split.z - whole.z).lpNorm<Eigen::Infinity>(), 1e-300);
  EXPECT_EQ(split.iterations, whole.iterations);
}

TEST(SolveLcpByComponents, ComponentsWithNonNegativeBAreNotSolved) {
  // Block 1 has b ≥ 0: z = 0 there without a solve (its block function must not be called);
  // block 0 is solved. The whole solution still meets the residual test.
  std::mt19937 rng(9);
  SplitCase c = InterleavedBlocks({3, 4}, rng);
  for (Eigen::Index i = 0; i < c.b.size(); ++i) {
    c.b[i] = c.component[static_cast<std::size_t>(i)] == 1 ? std::abs(c.b[i]) : -std::abs(c.b[i]);
  }
  std::vector<int> built;
  const LcpResult r = SolveLcpByComponents(
      c.component, 2,
      [&](int comp, const std::vector<int>& idx, Eigen::MatrixXd* W_c) {
        built.push_back(comp);
        for (std::size_t i = 0; i < idx.size(); ++i) {
          for (std::size_t j = 0; j < idx.size(); ++j) {
            (*W_c)(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
                c.W(idx[i], idx[j]);
          }
        }
      },
      c.b, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(built, std::vector<int>{0});
  EXPECT_EQ(r.components_solved, 1);
  EXPECT_EQ(r.largest_component, 3);
  for (Eigen::Index i = 0; i < c.b.size(); ++i) {
    if (c.component[static_cast<std::size_t>(i)] == 1) {
      EXPECT_EQ(r.z[i], 0.0);  // exactly zero: never touched
    }
  }
  // All of block 0 is pushed (b < 0 on a positive definite block): z > 0 somewhere.
  EXPECT_GT(r.z.maxCoeff(), 0.0);
  EXPECT_LE(NaturalMapResidual(c.W, c.b, r.z), LcpOptions{}.tolerance);
  EXPECT_LE(r.residual, LcpOptions{}.tolerance);
}

TEST(SolveLcpByComponents, FailureNamesTheComponentAndBadInputThrows) {
  // Infeasible block: W = 0, b = −1 (no z ≥ 0 gives w ≥ 0); the other block is fine.
  Eigen::MatrixXd W = Eigen::MatrixXd::Zero(3, 3);
  W(0, 0) = 2.0;
  W(0, 2) = W(2, 0) = 0.5;
  W(2, 2) = 1.0;
  const Eigen::VectorXd b = Eigen::Vector3d(-1.0, -1.0, -2.0);
  LcpOptions options;
  options.fallback = false;
  const LcpResult r = SolveLcpByComponents(W, b, options);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.components, 2);
  EXPECT_NE(r.message.find("first unknown 1"), std::string::npos) << r.message;
  EXPECT_THROW(SolveLcpByComponents(Eigen::MatrixXd::Identity(2, 3), b, options),
               std::invalid_argument);
  LcpOptions bad;
  bad.tolerance = -1.0;
  EXPECT_THROW(SolveLcpByComponents(W, b, bad), std::invalid_argument);
  const auto noop = [](int, const std::vector<int>&, Eigen::MatrixXd*) {};
  EXPECT_THROW(SolveLcpByComponents({0, 1, 2}, 2, noop, b, options), std::invalid_argument);
  EXPECT_THROW(SolveLcpByComponents({0, 1}, 2, noop, b, options), std::invalid_argument);
}

// A box (m = 1 kg, half side a = 0.2 m, corners h = 0.02 m below its centre) resting on its four
// bottom corners under gravity, in contact frames (n = z, t1 = x, t2 = y): W = G M^-1 G^T is
// 12 x 12 of rank 6 (the corner forces are fixed only up to self-balancing ones), the case on
// which Siconos' Newton solver met a singular Jacobian and printed to stderr. The answer must
// hold the box at rest (G^T r = -F: the weight, no net tangential force or torque) with every
// corner in its cone and sticking (u = W r + q = 0), to 1e-9 relative: ten times the solver's
// tolerance 1e-10 relative to |q| = g; and print nothing.
TEST(SolveFrictionContact3d, RedundantCornersAreSolvedWithoutLibraryOutput) {
  const double m = 1.0, a = 0.2, h = 0.02, g = 9.81, mu = 0.2;
  const Eigen::Vector3d inertia(m * (a * a + h * h) / 3, m * (a * a + h * h) / 3,
                                m * 2 * a * a / 3);
  Eigen::MatrixXd G(12, 6);
  const double corners[4][2] = {{a, a}, {-a, a}, {-a, -a}, {a, -a}};
  for (int i = 0; i < 4; ++i) {
    const Eigen::Vector3d r(corners[i][0], corners[i][1], -h);
    const int axes[3] = {2, 0, 1};  // n, t1, t2
    for (int k = 0; k < 3; ++k) {
      const Eigen::Vector3d d = Eigen::Vector3d::Unit(axes[k]);
      G.row(3 * i + k) << d.transpose(), r.cross(d).transpose();
    }
  }
  Eigen::VectorXd M_inv(6);
  M_inv << 1 / m, 1 / m, 1 / m, inertia.cwiseInverse();
  const Eigen::MatrixXd W = G * M_inv.asDiagonal() * G.transpose();
  ASSERT_EQ(Eigen::FullPivLU<Eigen::MatrixXd>(W).rank(), 6);
  Eigen::VectorXd F = Eigen::VectorXd::Zero(6);
  F[2] = -m * g;
  const Eigen::VectorXd q = G * M_inv.asDiagonal() * F;
  const Eigen::VectorXd mus = Eigen::VectorXd::Constant(4, mu);

  testing::internal::CaptureStderr();
  const Fc3dResult result = SolveFrictionContact3d(W, q, mus, Fc3dOptions{});
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(printed, "");
  ASSERT_TRUE(result.ok) << result.message;
  double weight = 0;
  for (int i = 0; i < 4; ++i) {
    weight += result.r[3 * i];
    EXPECT_GE(result.r[3 * i], -1e-10 * m * g);
    // In the cone; the self-balancing tangential forces are as free as the normal split.
    EXPECT_LE(std::hypot(result.r[3 * i + 1], result.r[3 * i + 2]),
              mu * result.r[3 * i] + 1e-9 * m * g);
  }
  EXPECT_NEAR(weight, m * g, 1e-9 * m * g);
  EXPECT_LE((G.transpose() * result.r + F).lpNorm<Eigen::Infinity>(), 1e-9 * m * g);  // at rest
  EXPECT_LE((W * result.r + q).lpNorm<Eigen::Infinity>(), 1e-9 * g);
}

}  // namespace
}  // namespace saltus::contact
