// The solver chain of the block-sparse frictional Moreau–Jean step (SolveFrictionComponent,
// contact/sparse_friction_step.h) on problems captured from piles with μ = 0.5
// (tests/contact/data/friction/, each file's comment says how; contact/lcp_capture.h, version 2):
// two N = 100 steps that 2000 NSGS sweeps do not bring to 1e-10, the step that stopped the
// N = 100 run at 0.708 s (no stage of the NSGS → ADMM → polish chain below 1e-6), and in
// newton_stalls/ five steps on which the Newton stage without its smoothing path stalls (captured
// in the ninth session), and in stops/ the step that stopped the N = 100 run at 0.9085 s (eleventh
// session). The
// step that stopped the N = 200 run (406 contacts) is not here: neither our Newton nor the dense
// proximal stage solves it yet (docs/time-stepping.md). Each answer is checked here from (W, b, μ,
// r) alone: the cone ‖r_T‖ ≤ μ r_N, and the natural-map residual of Coulomb's law recomputed by
// this file (z − P_K(z − ŵ), ŵ = w + μ‖w_T‖ e_N, largest over the contacts, relative to max(1,
// ‖b‖∞)): ≤ 1e-10 (the chain's tolerance, LcpOptions::tolerance) when a Newton stage is in the
// chain; ≤ 1e-6 for an answer accepted without one (τ₀/h with the defaults τ₀ = 1e-9 m, h = 1e-3 s:
// timestepping/moreau_jean.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "contact/lcp_capture.h"
#include "contact/sparse_friction_step.h"

namespace saltus::contact {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-10;  // LcpOptions::tolerance
constexpr double kAccepted = 1e-6;    // τ₀/h = 1e-9 m / 1e-3 s

// The .lcp files of tests/contact/data/friction, or of its sub-folder `sub`.
std::vector<fs::path> BankFiles(const char* sub = "") {
  const char* root = std::getenv("SALTUS_SOURCE_DIR");
  const fs::path dir =
      fs::path(root != nullptr ? root : ".") / "tests" / "contact" / "data" / "friction" / sub;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".lcp") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Projection of (x_n, x_t) onto K_μ = {‖x_t‖ ≤ μ x_n}.
Eigen::Vector3d ProjectOntoCone(double mu, const Eigen::Vector3d& x) {
  const double n = x[0], t = x.tail<2>().norm();
  if (t <= mu * n) return x;
  if (mu * t <= -n) return Eigen::Vector3d::Zero();
  const double a = (n + mu * t) / (1.0 + mu * mu);
  Eigen::Vector3d p;
  p << a, mu * a * x.tail<2>() / t;
  return p;
}

double LawResidual(const CapturedLcp& p, const Eigen::VectorXd& r) {
  const Eigen::VectorXd w = p.W * r + p.b;
  double worst = 0.0;
  for (Eigen::Index k = 0; k < p.mu.size(); ++k) {
    const Eigen::Vector3d z = r.segment<3>(3 * k);
    Eigen::Vector3d u = w.segment<3>(3 * k);
    u[0] += p.mu[k] * u.tail<2>().norm();
    worst = std::max(worst, (z - ProjectOntoCone(p.mu[k], z - u)).norm());
  }
  return worst / std::max(1.0, p.b.lpNorm<Eigen::Infinity>());
}

double ConeViolation(const CapturedLcp& p, const Eigen::VectorXd& r) {
  double worst = 0.0;
  for (Eigen::Index k = 0; k < p.mu.size(); ++k) {
    worst = std::max(worst, r.segment<2>(3 * k + 1).norm() - p.mu[k] * r[3 * k]);
  }
  return worst;
}

// The chain from r = 0 with the accepted bound; prints the stage that ended it per problem.
FrictionChainResult SolveBankProblem(const fs::path& f, const CapturedLcp& p,
                                     FrictionChainOptions o) {
  o.accepted_residual = kAccepted;
  const FrictionChainResult s =
      SolveFrictionComponent(p.W, p.b, p.mu, o, Eigen::VectorXd::Zero(p.b.size()));
  std::printf("%s: %lld contacts, stage %s, residual %.3g\n", f.filename().c_str(),
              static_cast<long long>(p.mu.size()), std::string(FrictionStageName(s.stage)).c_str(),
              LawResidual(p, s.r));
  return s;
}

// The answer meets the law to `bound`, agrees with the chain's own residual, and is in the cone.
void ExpectSolved(const fs::path& f, const CapturedLcp& p, const FrictionChainResult& s,
                  double bound) {
  const double residual = LawResidual(p, s.r);
  EXPECT_TRUE(s.ok) << f << ": " << s.message;
  // The chain's own residual (CoulombResidual) and this file's agree to round-off.
  EXPECT_NEAR(s.residual, residual, 1e-3 * residual + 1e-15) << f;
  EXPECT_LE(residual, bound) << f;
  // NSGS and ADMM iterates may leave the cone by the order of the residual.
  EXPECT_LE(ConeViolation(p, s.r), 10.0 * residual * std::max(1.0, p.b.lpNorm<Eigen::Infinity>()))
      << f;
}

TEST(FrictionBank, TheNewtonStageSolvesEveryCapturedPileStep) {
  const std::vector<fs::path> files = BankFiles();
  ASSERT_GE(files.size(), 3u);
  for (const fs::path& f : files) {
    const CapturedLcp p = ReadCapturedLcpFile(f.string());
    ASSERT_EQ(3 * p.mu.size(), p.b.size()) << f;
    const FrictionChainResult s = SolveBankProblem(f, p, FrictionChainOptions{});
    EXPECT_EQ(s.stage, FrictionStage::kNewton) << f << ": " << s.message;
    ExpectSolved(f, p, s, kTolerance);
  }
}

TEST(FrictionBank, WhereTheUnsmoothedNewtonStallsTheSmoothingPathSolves) {
  // Five N = 100 steps (160–200 contacts) on which the Newton stage without smoothing, started
  // from the 2000-sweep NSGS iterate of r = 0, ends at 3.7e-8 … 5.3e-5 (bench/friction_bank,
  // docs/time-stepping.md; before the smoothing path ADMM or the NSGS polish solved them, the
  // dense PROX stage took seconds each). With the smoothing path (contact/fc3d_newton.h) Newton
  // solves four of them; on the 160-contact step at t = 0.5395 it still stalls and ADMM solves.
  const std::vector<fs::path> files = BankFiles("newton_stalls");
  ASSERT_EQ(files.size(), 5u);
  const FrictionStage expected[] = {FrictionStage::kAdmm, FrictionStage::kNewton,
                                    FrictionStage::kNewton, FrictionStage::kNewton,
                                    FrictionStage::kNewton};  // t = 0.5395 … 0.7735
  for (std::size_t k = 0; k < files.size(); ++k) {
    const CapturedLcp p = ReadCapturedLcpFile(files[k].string());
    ASSERT_EQ(3 * p.mu.size(), p.b.size()) << files[k];
    ASSERT_LE(p.mu.size(), 200) << files[k];
    const FrictionChainResult s = SolveBankProblem(files[k], p, FrictionChainOptions{});
    EXPECT_EQ(s.stage, expected[k]) << files[k] << ": " << s.message;
    // The smoothing path was taken: the unsmoothed iteration failed at σ = σ_ref first.
    EXPECT_NE(s.message.find(", smoothed, "), std::string::npos) << s.message;
    ExpectSolved(files[k], p, s, kTolerance);
  }
}

TEST(FrictionBank, TheSecondNewtonScalingSolvesTheStepThatStoppedTheN100Pile) {
  // The 216-contact component that stopped the N = 100 pile at t = 0.9085 s (stops/): W of rank
  // 560 of 648 with W_NN regular, no contact pair repeated, and a strictly feasible cone
  // condition, so a solution exists (docs/time-stepping.md). Newton with ρ = 10³ / W_ii stalls
  // at 1.9e-5 from the NSGS iterate of r = 0, and ADMM and the polish stay above the accepted
  // bound (PROX too: Siconos error 5.7e-3 after 50 iterations; left out here, 2 s); the retry
  // with ρ = 10² / W_ii from Newton's best iterate solves it.
  const std::vector<fs::path> files = BankFiles("stops");
  ASSERT_EQ(files.size(), 1u);
  const CapturedLcp p = ReadCapturedLcpFile(files[0].string());
  ASSERT_EQ(p.mu.size(), 216);
  FrictionChainOptions o;
  o.proximal_max_contacts = 0;
  const FrictionChainResult s = SolveBankProblem(files[0], p, o);
  EXPECT_EQ(s.stage, FrictionStage::kNewton) << s.message;
  EXPECT_NE(s.message.find("[c = 100]"), std::string::npos) << s.message;
  ExpectSolved(files[0], p, s, kTolerance);
  // Without the retry the chain fails: its best answer is above the accepted bound.
  o.newton_retry_rho_scale = 0.0;
  const FrictionChainResult without = SolveBankProblem(files[0], p, o);
  EXPECT_EQ(without.stage, FrictionStage::kFailed) << without.message;
  EXPECT_GT(LawResidual(p, without.r), kAccepted);
}

TEST(FrictionBank, WithoutNewtonTheProximalStageSolvesTheSmallest) {
  // Siconos' dense PROX, the fallback after kNewton: 0.14 s on these 120 contacts, 8 s on the
  // 196-contact problems (docs/time-stepping.md), so only the smallest here.
  const fs::path f = BankFiles().front();
  const CapturedLcp p = ReadCapturedLcpFile(f.string());
  FrictionChainOptions o;
  o.newton_iterations = 0;
  o.admm_iterations = o.polish_sweeps = 1;  // PROX is the last stage: reach it quickly
  const FrictionChainResult s = SolveBankProblem(f, p, o);
  EXPECT_EQ(s.stage, FrictionStage::kProximal) << f << ": " << s.message;
  ExpectSolved(f, p, s, kTolerance);
}

TEST(FrictionBank, WithoutTheNewtonStagesTheChainSolvesOrAcceptsTheFirstTwo) {
  const std::vector<fs::path> files = BankFiles();
  FrictionChainOptions o;
  o.newton_iterations = 0;
  o.proximal_max_contacts = 0;
  for (std::size_t k = 0; k < 2; ++k) {
    const CapturedLcp p = ReadCapturedLcpFile(files[k].string());
    const FrictionChainResult s = SolveBankProblem(files[k], p, o);
    EXPECT_NE(s.stage, FrictionStage::kNsgs) << files[k] << ": the captured problem became easy";
    ExpectSolved(files[k], p, s, s.stage == FrictionStage::kAccepted ? kAccepted : kTolerance);
  }
}

TEST(FrictionBank, WithoutTheAcceptedBoundAStalledProblemFailsWithItsBestAnswer) {
  // The problem at t = 0.4045 s: no stage reaches 1e-10 (measured: NSGS 20,000 sweeps 1.5e-7,
  // ADMM 20,000 iterations 7e-8, with Siconos' Python binding).
  const fs::path f = BankFiles().front();
  const CapturedLcp p = ReadCapturedLcpFile(f.string());
  FrictionChainOptions o;  // accepted_residual = 0
  o.newton_iterations = 0;
  o.proximal_max_contacts = 0;
  o.nsgs_sweeps = o.polish_sweeps = 200;
  o.admm_iterations = 200;
  const FrictionChainResult s =
      SolveFrictionComponent(p.W, p.b, p.mu, o, Eigen::VectorXd::Zero(p.b.size()));
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.stage, FrictionStage::kFailed);
  EXPECT_NE(s.message.find("above the accepted bound"), std::string::npos) << s.message;
  EXPECT_NEAR(s.residual, LawResidual(p, s.r), 1e-3 * s.residual);
  EXPECT_GT(s.residual, kTolerance);
}

TEST(FrictionBank, BadOptionsAndSizesThrow) {
  Eigen::SparseMatrix<double> W(3, 3);
  W.setIdentity();
  const Eigen::Vector3d b(-1.0, 0.0, 0.0);
  const Eigen::VectorXd mu = Eigen::VectorXd::Constant(1, 0.5);
  // Each bad option alone, on the defaults.
  const auto refused = [&](auto&& spoil) {
    FrictionChainOptions o;
    spoil(o);
    EXPECT_THROW(SolveFrictionComponent(W, b, mu, o, Eigen::VectorXd::Zero(3)),
                 std::invalid_argument);
  };
  refused([](FrictionChainOptions& o) { o.accepted_residual = -1.0; });
  refused([](FrictionChainOptions& o) { o.proximal_iterations = 0; });
  refused([](FrictionChainOptions& o) { o.newton_iterations = -1; });
  refused([](FrictionChainOptions& o) { o.proximal_max_contacts = -1; });
  refused([](FrictionChainOptions& o) { o.newton_retry_rho_scale = -1.0; });
  refused([](FrictionChainOptions& o) {
    o.newton_retry_rho_scale = std::numeric_limits<double>::infinity();
  });
  refused([](FrictionChainOptions& o) { o.newton_retry_iterations = 0; });
  EXPECT_THROW(SolveFrictionComponent(W, b, Eigen::VectorXd::Constant(2, 0.5),
                                      FrictionChainOptions{}, Eigen::VectorXd::Zero(3)),
               std::invalid_argument);
  // One contact pushed along its normal on the identity: r = (1, 0, 0), w = 0 (closed form).
  const FrictionChainResult s =
      SolveFrictionComponent(W, b, mu, FrictionChainOptions{}, Eigen::VectorXd::Zero(3));
  EXPECT_TRUE(s.ok);
  EXPECT_NEAR(s.r[0], 1.0, 1e-12);
  EXPECT_NEAR(s.r.tail<2>().norm(), 0.0, 1e-12);
}

TEST(FrictionBank, FrictionalCapturesRoundTripBitIdentical) {
  const CapturedLcp p = ReadCapturedLcpFile(BankFiles().front().string());
  std::stringstream written;
  WriteCapturedLcp(p, written);
  const CapturedLcp q = ReadCapturedLcp(written, "mem");
  ASSERT_EQ(q.mu.size(), p.mu.size());
  EXPECT_EQ((q.mu - p.mu).cwiseAbs().maxCoeff(), 0.0);  // %.17g: exact
  EXPECT_EQ((q.b - p.b).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ((Eigen::MatrixXd(q.W) - Eigen::MatrixXd(p.W)).cwiseAbs().maxCoeff(), 0.0);
  const auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      ReadCapturedLcp(in, "bad.lcp");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "saltus_lcp 2\nkind friction_step\nt 0.5\nnote x\nn 3\nrows 1 1 1\n";
  EXPECT_NE(error(head + "b -1 0 0\nnnz 0\nend\n").find("bad.lcp:8: expected 'mu'"),
            std::string::npos);
  EXPECT_NE(error(head + "b -1 0 0\nmu -0.5\nnnz 0\nend\n").find("bad.lcp:8: mu entry"),
            std::string::npos);
  EXPECT_EQ(error(head + "b -1 0 0\nmu 0.5\nnnz 1\nw 0 0 1\nend\n"), "no error");
}

}  // namespace
}  // namespace saltus::contact
