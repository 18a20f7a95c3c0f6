// Siconos Numerics is loaded on the first call that needs it (contact/siconos_loader.h): not at
// program start, and then the solver answers as when linked directly. One test per process order:
// this file holds a single test, so nothing else has loaded the library before it starts.
#include "contact/siconos_loader.h"
#include "contact/complementarity.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace saltus::contact {
namespace {

// Whether the process maps a file whose name contains `name` (/proc/self/maps).
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(name) != std::string::npos;
}

TEST(SiconosLoader, LoadsOnTheFirstSolveAndThenSolves) {
  ASSERT_FALSE(SiconosNumericsLoaded());
  ASSERT_FALSE(Mapped("libsiconos_numerics"));

  // 0 ≤ z ⟂ W z + b ≥ 0 with W = [2 1; 1 2], b = (−5, −6): both unknowns active, so
  // W z = −b and z = (4/3, 7/3) (closed form), w = 0. Lemke is a Siconos solver.
  Eigen::MatrixXd W(2, 2);
  W << 2, 1, 1, 2;
  const Eigen::VectorXd b = Eigen::Vector2d(-5, -6);
  LcpOptions options;
  options.solver = LcpSolver::kLemke;
  options.fallback = false;  // the answer must come from Siconos' Lemke, not a fallback stage
  const LcpResult r = SolveLcp(W, b, options);

  EXPECT_TRUE(SiconosNumericsLoaded());
  EXPECT_TRUE(Mapped("libsiconos_numerics"));
  ASSERT_TRUE(r.ok) << r.message;
  // Lemke's pivots are exact up to round-off on a 2 × 2 problem: 1e-12.
  EXPECT_NEAR(r.z(0), 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.z(1), 7.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.w.norm(), 0.0, 1e-12);
}

}  // namespace
}  // namespace saltus::contact
