// The bank of contact LCPs × solvers (STYLE.md 9; in the spirit of Siconos' lcp_test_collection):
// problems captured from generated piles (contact/lcp_capture.h; tests/contact/data/lcp/, each
// file's note says where it came from) and synthetic pile problems (pile_lcp.h), against every
// stage of the chain. Every answer is checked on the complementarity conditions recomputed here
// from W, b and z: z ≥ 0, w = W z + b, natural-map residual ‖min(w, z)‖∞ / max(1, ‖b‖∞) within
// the LCP tolerance (1e-10, LcpOptions).
//
// What each solver is expected to do on the bank:
//   monotone  SolveMonotoneLcp (interior point + active-set refinement): solves every problem
//             of the bank, all of which have solutions (W = G M⁻¹ Gᵀ ⪰ 0 and, for the captured
//             acceleration problems, v̇ = 0 is feasible since γ ≥ 0 for spheres and planes).
//   chain     SolveLcpByComponents with the default options (the path of the simulations):
//             solves every problem.
//   lemke, sparse (no fallback), pgs: fast paths, allowed to fail (a status), never to return
//             ok with a wrong answer. Lemke stops on a ray on the captured pile problems
//             (problems that have solutions).
// The outcome of every (problem, solver) pair is printed, so the bank doubles as a report.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/lcp_capture.h"
#include "contact/monotone_lcp.h"
#include "contact/sparse_lcp.h"
#include "pile_lcp.h"

namespace saltus::contact {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-10;  // LcpOptions::tolerance, the test of every stage

fs::path DataDir() {
  const char* root = std::getenv("SALTUS_SOURCE_DIR");
  return fs::path(root != nullptr ? root : ".") / "tests" / "contact" / "data" / "lcp";
}

struct BankProblem {
  std::string name;
  Eigen::SparseMatrix<double> W;
  Eigen::VectorXd b;
};

std::vector<BankProblem> Bank() {
  std::vector<BankProblem> bank;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(DataDir())) {
    if (entry.path().extension() == ".lcp") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    CapturedLcp p = ReadCapturedLcpFile(f.string());
    bank.push_back({f.filename().string(), p.W, p.b});
  }
  // Synthetic piles (pile_lcp.h): rank-deficient lattices with diagonals, and the self-stressed
  // pile whose solution leaves one row of a null-space loop open by 1e-9.
  for (const unsigned seed : {1u, 2u, 3u}) {
    testing::PileLcp p = testing::MakePileLcp(5, 5, 3, 0.6, seed);
    bank.push_back({"lattice_5x5x3_seed" + std::to_string(seed), p.W, p.b});
  }
  testing::PileLcp s = testing::MakeSelfStressedPileLcp(4, 4, 3, 0.7, 7u, 1e-9, nullptr);
  bank.push_back({"self_stressed_4x4x3", s.W, s.b});
  return bank;
}

enum class Solver { kLemke, kSparse, kPgs, kMonotone, kChain };
const char* Name(Solver s) {
  switch (s) {
    case Solver::kLemke:
      return "lemke";
    case Solver::kSparse:
      return "sparse";
    case Solver::kPgs:
      return "pgs";
    case Solver::kMonotone:
      return "monotone";
    case Solver::kChain:
      return "chain";
  }
  return "?";
}

LcpResult Solve(Solver s, const BankProblem& p) {
  LcpOptions o;
  o.fallback = false;
  switch (s) {
    case Solver::kLemke:
      return SolveLcp(Eigen::MatrixXd(p.W), p.b, o);
    case Solver::kPgs:
      o.solver = LcpSolver::kPgs;
      o.max_iterations = 1000;  // a fast path: enough sweeps to solve the lattices
      return SolveLcp(Eigen::MatrixXd(p.W), p.b, o);
    case Solver::kSparse:
      return SolveLcpSparse(p.W, p.b, o);
    case Solver::kMonotone:
      return SolveMonotoneLcp(p.W, p.b, o);
    case Solver::kChain:
      return SolveLcpByComponents(Eigen::MatrixXd(p.W), p.b, LcpOptions{});
  }
  return {};
}

// The residual recomputed here from (W, b, z) only.
double Residual(const BankProblem& p, const Eigen::VectorXd& z) {
  const Eigen::VectorXd w = p.W * z + p.b;
  const double scale = std::max(1.0, p.b.lpNorm<Eigen::Infinity>());
  return z.size() > 0 ? w.cwiseMin(z).cwiseAbs().maxCoeff() / scale : 0.0;
}

TEST(LcpBank, CapturedPileProblemsArePresent) {
  // The acceleration problems on which the 50- and 60-sphere piles stopped with lcp_failure
  // (t = 1.2257 s and 0.8266 s, Lemke on a ray) must stay in the bank.
  int captured = 0;
  for (const auto& entry : fs::directory_iterator(DataDir())) {
    captured += entry.path().extension() == ".lcp";
  }
  EXPECT_GE(captured, 2);
}

TEST(LcpBank, EverySolverAnswerPassesTheResidualTestAndTheGuaranteedOnesAlwaysAnswer) {
  for (const BankProblem& p : Bank()) {
    for (const Solver s :
         {Solver::kLemke, Solver::kSparse, Solver::kPgs, Solver::kMonotone, Solver::kChain}) {
      const auto start = std::chrono::steady_clock::now();
      const LcpResult r = Solve(s, p);
      const double ms =
          1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%-40s %5ld rows  %-8s %-6s %8.2f ms  %s\n", p.name.c_str(),
                  static_cast<long>(p.b.size()), Name(s), r.ok ? "ok" : "FAIL", ms,
                  r.message.substr(0, 120).c_str());
      if (r.ok) {
        ASSERT_EQ(r.z.size(), p.b.size()) << p.name << " " << Name(s);
        EXPECT_GE(r.z.minCoeff(), 0.0) << p.name << " " << Name(s);
        EXPECT_LE(Residual(p, r.z), kTolerance) << p.name << " " << Name(s);
      }
      if (s == Solver::kMonotone || s == Solver::kChain) {
        EXPECT_TRUE(r.ok) << p.name << " " << Name(s) << ": " << r.message;
      }
    }
  }
}

TEST(SolveMonotoneLcp, InfeasibleProblemGivesTheFarkasCertificate) {
  // w1 = z1 − z2 − 1, w2 = z2 − z1 − 1: w1 + w2 = −2 for every z, so no z ≥ 0 has w ≥ 0;
  // y = (1, 1) ≥ 0 has W y = 0 and bᵀy = −2 < 0 (monotone_lcp.h).
  Eigen::SparseMatrix<double> W(2, 2);
  W.insert(0, 0) = 1.0;
  W.insert(0, 1) = -1.0;
  W.insert(1, 0) = -1.0;
  W.insert(1, 1) = 1.0;
  const LcpResult r = SolveMonotoneLcp(W, -Eigen::VectorXd::Ones(2), LcpOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("no solution"), std::string::npos) << r.message;
}

TEST(SolveMonotoneLcp, ZeroMatrixAndNonNegativeRightHandSides) {
  Eigen::SparseMatrix<double> W(3, 3);
  const LcpResult zero = SolveMonotoneLcp(W, Eigen::Vector3d(1.0, 0.0, 2.0), LcpOptions{});
  EXPECT_TRUE(zero.ok);
  EXPECT_EQ(zero.z.lpNorm<Eigen::Infinity>(), 0.0);  // z = 0 exactly: nothing was solved
  const LcpResult bad = SolveMonotoneLcp(W, Eigen::Vector3d(1.0, -1.0, 2.0), LcpOptions{});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("no solution"), std::string::npos) << bad.message;
  EXPECT_THROW(SolveMonotoneLcp(W, Eigen::Vector2d(1.0, 1.0), LcpOptions{}), std::invalid_argument);
}

TEST(SolveMonotoneLcp, DegenerateRedundantContactsOfOneBall) {
  // A ball (unit mass, 3 translational DOFs) held by four contacts whose normals tilt 30° from
  // the vertical, pressed down by b = G a₀ with a₀ = (0, 0, −g): W = G Gᵀ is 4 × 4 of rank 3;
  // the total vertical force is g and w = 0 on every row (the ball does not move).
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  Eigen::MatrixXd G(4, 3);
  G << s, 0, c, -s, 0, c, 0, s, c, 0, -s, c;
  const Eigen::SparseMatrix<double> W = (G * G.transpose()).sparseView();
  const Eigen::VectorXd b = G * Eigen::Vector3d(0, 0, -9.81);
  const LcpResult r = SolveMonotoneLcp(W, b, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  // Vertical balance Σ z_i c = g, to the residual tolerance times the scale of b (1e-10 · 8.5).
  EXPECT_NEAR(r.z.sum() * c, 9.81, 1e-8);
  EXPECT_LE(r.w.lpNorm<Eigen::Infinity>(), 1e-9);
}

TEST(LcpCapture, ProblemsRoundTripBitIdentical) {
  testing::PileLcp pile = testing::MakePileLcp(3, 3, 2, 0.5, 11u);
  CapturedLcp p;
  p.kind = "acceleration";
  p.t = 1.2257085046;
  p.note = "a note\nwith a line break";
  p.W = pile.W;
  p.b = pile.b;
  for (int i = 0; i < pile.b.size(); ++i) p.rows.push_back(100 + i);
  std::stringstream text;
  WriteCapturedLcp(p, text);
  const CapturedLcp q = ReadCapturedLcp(text, "mem");
  EXPECT_EQ(q.kind, p.kind);
  EXPECT_EQ(q.t, p.t);  // %.17g round trip: exact
  EXPECT_EQ(q.note, "a note with a line break");
  EXPECT_EQ(q.rows, p.rows);
  ASSERT_EQ(q.b.size(), p.b.size());
  for (Eigen::Index i = 0; i < p.b.size(); ++i) EXPECT_EQ(q.b[i], p.b[i]);  // exact round trip
  const Eigen::MatrixXd a(p.W), c(q.W);
  EXPECT_EQ((a - c).cwiseAbs().maxCoeff(), 0.0);  // exact round trip
}

TEST(LcpCapture, MalformedFilesNameTheLine) {
  const auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      ReadCapturedLcp(in, "bad.lcp");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "saltus_lcp 1\nkind impact\nt 0.5\nnote x\nn 2\nrows 3 4\nb -1 2\n";
  EXPECT_EQ(error("saltus_lcp 3\n").rfind("bad.lcp:1: ", 0), 0u) << error("saltus_lcp 3\n");
  EXPECT_NE(error(head + "nnz 1\nw 0 2 1.0\nend\n").find("bad.lcp:9: column index"),
            std::string::npos);
  EXPECT_NE(error(head + "nnz 1\nw 1 0 1.0\nend\n").find("bad.lcp:9: W entries are the upper"),
            std::string::npos);
  EXPECT_NE(error(head + "nnz 1\nw 0 0 nan\nend\n").find("bad.lcp:9: W entry"), std::string::npos);
  EXPECT_NE(error(head + "nnz 1\nw 0 0 1\n").find("end of input"), std::string::npos);
  EXPECT_NE(error("saltus_lcp 1\nkind impact\nt 0.5\nnote x\nn 2\nrows 3\n").find("bad.lcp:6"),
            std::string::npos);
  EXPECT_EQ(error(head + "nnz 1\nw 0 0 1.5\nend\n"), "no error");
}

}  // namespace
}  // namespace saltus::contact
