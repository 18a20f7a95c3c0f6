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

// LocateRootWithRates on a free-flight gap g(s) = g0 + v0 s − ½ g s² (the bouncing ball's, a
// polynomial the Hermite cubic reproduces exactly): the first point is the root to round-off,
// one probe closes the bracket, so 2 evaluations. Root from the closed form
// s* = (v0 + √(v0² + 2 g g0))/g.
TEST(RootFindingTest, RatesLocateAFreeFlightGapInTwoEvaluations) {
  const double g0 = 0.9, v0 = 0.0, grav = 9.81;
  const double root = (v0 + std::sqrt(v0 * v0 + 2 * grav * g0)) / grav;
  int evaluations = 0;
  auto phi = [&](double s, double* rate) {
    ++evaluations;
    *rate = v0 - grav * s;
    return g0 + v0 * s - 0.5 * grav * s * s;
  };
  double r0 = 0, r1 = 0;
  const double lo = 0.3, hi = 0.5;
  const double f0 = phi(lo, &r0), f1 = phi(hi, &r1);
  evaluations = 0;
  const Bracket b = LocateRootWithRates(lo, hi, f0, f1, r0, r1, kTol, phi);
  double rate = 0;
  EXPECT_GT(phi(b.lo, &rate), 0.0);
  EXPECT_LE(phi(b.hi, &rate), 0.0);
  EXPECT_LE(b.hi - b.lo, kTol);
  EXPECT_NEAR(b.lo, root, kTol);
  EXPECT_LE(evaluations - 2, 2);
}

// On functions the cubic does not reproduce: the cosine and the convex exponential of the
// Illinois tests, to the same bracket. The cosine: the Hermite point is within ~1e-3 of the root
// on the unit interval, two Newton steps reach 1e-12, one probe closes: ≤ 5 evaluations (Illinois
// ≤ 12). The exponential varies by e^20 over the interval, so the cubic's root is far off and the
// first evaluations are bisections (safeguard) until Newton takes over: ≤ 15 (Illinois ≤ 40).
TEST(RootFindingTest, RatesConvergeQuadraticallyOnSmoothFunctions) {
  struct Case {
    double lo, hi, root;
    double (*f)(double);
    double (*df)(double);
    int max_evaluations;
  };
  const Case cases[] = {
      {1.0, 2.0, std::numbers::pi / 2, [](double t) { return std::cos(t); },
       [](double t) { return -std::sin(t); }, 5},
      {0.0, 1.0, std::log(1e3) / 20.0, [](double t) { return std::exp(-20.0 * t) - 1e-3; },
       [](double t) { return -20.0 * std::exp(-20.0 * t); }, 15},
  };
  for (const Case& c : cases) {
    int evaluations = 0;
    auto phi = [&](double s, double* rate) {
      ++evaluations;
      *rate = c.df(s);
      return c.f(s);
    };
    const Bracket b =
        LocateRootWithRates(c.lo, c.hi, c.f(c.lo), c.f(c.hi), c.df(c.lo), c.df(c.hi), kTol, phi);
    EXPECT_GT(c.f(b.lo), 0.0);
    EXPECT_LE(c.f(b.hi), 0.0);
    EXPECT_LE(b.hi - b.lo, kTol * std::max(1.0, c.hi));
    EXPECT_NEAR(b.lo, c.root, 2 * kTol);
    EXPECT_LE(evaluations, c.max_evaluations) << "root " << c.root;
  }
}

// Wrong rates (a caller bug or a rate that is not φ'): the safeguards fall back to bisection and
// still return a bracket of the tolerance around the root, within 2 × 45 evaluations (bisection
// from a unit interval to 1e-12 takes 40).
TEST(RootFindingTest, RatesThatLieStillGiveTheBracket) {
  int evaluations = 0;
  auto phi = [&](double s, double* rate) {
    ++evaluations;
    *rate = 1.0;  // the wrong sign and size
    return std::cos(s);
  };
  const Bracket b =
      LocateRootWithRates(1.0, 2.0, std::cos(1.0), std::cos(2.0), 5.0, -7.0, kTol, phi);
  EXPECT_GT(std::cos(b.lo), 0.0);
  EXPECT_LE(std::cos(b.hi), 0.0);
  EXPECT_LE(b.hi - b.lo, 2 * kTol);
  EXPECT_LE(evaluations, 90);
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
