// Root location on dense output (events/root_finding.h): the Illinois method and the tunnelling
// guard, on functions with known roots.
#include "events/root_finding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace saltus::events {
namespace {

constexpr double kTol = 1e-12;  // relative root tolerance (SimulationOptions default)

// The bracket ends on both sides of the root and is no wider than the tolerance; Illinois
// converges superlinearly (order ≈ 1.44, Dowell & Jarratt 1971), so a unit bracket needs a few
// tens of evaluations at most, not the ~40 of bisection nor the hundreds of plain regula falsi
// on a convex function.
TEST(RootFindingTest, IllinoisLocatesTheRootOfACosineToTheTolerance) {
  int evaluations = 0;
  auto phi = [&](double t) {
    ++evaluations;
    return std::cos(t);
  };
  const Bracket b = LocateRoot(1.0, 2.0, phi(1.0), phi(2.0), kTol, phi);
  evaluations -= 2;
  EXPECT_GT(std::cos(b.lo), 0.0);
  EXPECT_LE(std::cos(b.hi), 0.0);
  EXPECT_LE(b.hi - b.lo, kTol * 2.0);
  EXPECT_NEAR(b.lo, std::numbers::pi / 2, kTol * 2.0);
  EXPECT_LE(evaluations, 12);
}

TEST(RootFindingTest, IllinoisIsNotSlowedDownByAConvexFunction) {
  // φ = e^(−20 t) − 10⁻³: plain regula falsi keeps the right end and crawls from the left.
  int evaluations = 0;
  auto phi = [&](double t) {
    ++evaluations;
    return std::exp(-20.0 * t) - 1e-3;
  };
  const double root = std::log(1e3) / 20.0;
  const Bracket b = LocateRoot(0.0, 1.0, phi(0.0), phi(1.0), kTol, phi);
  EXPECT_NEAR(b.hi, root, 2 * kTol);
  EXPECT_LE(b.hi - b.lo, kTol);
  EXPECT_LE(evaluations, 2 + 40);
}

// A gap g(t) = (t − 0.5)² − d sampled positive at t = 0 and 1 with ġ(0) < 0 < ġ(1): for d > 0
// the body passed through the obstacle between the samples, and the guard returns the first
// crossing 0.5 − √d (to the root tolerance); for d < 0 the gap stays positive.
TEST(RootFindingTest, TunnellingGuardFindsTheCrossingInsideASampleInterval) {
  for (const double d : {1e-2, 1e-6}) {
    auto g = [d](double t) { return (t - 0.5) * (t - 0.5) - d; };
    const double root = FindGapDip(0.0, 1.0, g(0.0), g(1.0), 1.0, kTol, g, g);
    EXPECT_NEAR(root, 0.5 - std::sqrt(d), 2 * kTol) << "d = " << d;
    EXPECT_GE(g(root), 0.0);  // the left end: the gap is still ≥ 0 there
  }
  auto g_above = [](double t) { return (t - 0.5) * (t - 0.5) + 1e-6; };
  EXPECT_TRUE(std::isinf(FindGapDip(0.0, 1.0, 0.250001, 0.250001, 1.0, kTol, g_above, g_above)));
}

// Without evaluating anything when the bracket is too short for the gap to reach zero at the
// largest end rate: a gap of 1 cannot vanish in 0.1 s at a rate of 1.
TEST(RootFindingTest, TunnellingGuardDecidesFromTheSampleGapsFirst) {
  int evaluations = 0;
  auto g = [&](double) {
    ++evaluations;
    return 1.0;
  };
  EXPECT_TRUE(std::isinf(FindGapDip(0.0, 0.1, 1.0, 1.0, 1.0, kTol, g, g)));
  EXPECT_EQ(evaluations, 0);
}

}  // namespace
}  // namespace saltus::events
