// Tests of the Integrator base class (integrators/integrator.cc) through a stand-in scheme:
// option validation, Reset validation, the statistics and NaN check of Step, ErrorNorm,
// StepFactor, and the names of formulations and statuses.
#include "integrators/integrator.h"
#include "integrators/newton.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

namespace saltus::integrators {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A free particle on a line: nq = nv = 1, M = 1, F = 0, no constraint rows.
class FreeParticle final : public engine::MechanicalSystem {
 public:
  int nq() const override { return 1; }
  int nv() const override { return 1; }
  void MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const override {
    M->setIdentity(1, 1);
  }
  void Forces(double /*t*/, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/,
              Eigen::VectorXd* F) const override {
    F->setZero(1);
  }
};

// 4 · denorm_min (a subnormal, 2e-323) times 1 through volatile operands, so that the product is
// computed at run time under the thread's floating-point mode, not folded by the compiler.
double SubnormalProduct() {
  volatile double tiny = 4.0 * std::numeric_limits<double>::denorm_min();
  volatile double one = 1.0;
  return tiny * one;
}

// Stand-in scheme: exact steps of the free particle with the fixed step h_init, optionally
// producing a NaN position, so that the base class's bookkeeping can be checked in isolation.
class StubIntegrator final : public Integrator {
 public:
  explicit StubIntegrator(const IntegratorOptions& o) : Integrator(o) {}
  std::string_view name() const override { return "stub"; }
  int order() const override { return 1; }
  int dense_output_order() const override { return 1; }
  bool Supports(Formulation f) const override { return f == Formulation::kIndex1; }

  using Integrator::ErrorNorm;
  using Integrator::StepFactor;
  bool produce_nan = false;
  int resets = 0;
  double in_step_product = -1.0;  // 4 · denorm_min · 1 computed inside DoStep

 private:
  void DoReset() override { ++resets; }
  StepStatus DoStep(double t_limit) override {
    const double h = std::min(options_.h_init, t_limit - t_);
    t_prev_ = t_;
    q_prev_ = q_;
    v_prev_ = v_;
    system_->IntegratePosition(q_, v_, h, &q_);
    t_ += h;
    if (produce_nan) q_(0) = kNaN;
    in_step_product = SubnormalProduct();
    return StepStatus::kAccepted;
  }
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    *q = q_prev_ + (s - t_prev_) * v_prev_;
    *v = v_prev_;
  }
};

IntegratorOptions StubOptions() {
  IntegratorOptions o;
  o.adaptive = false;
  o.h_init = 0.25;
  return o;
}

void ExpectInvalidArgument(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Integrator::Step runs the scheme's step with subnormals flushed to zero (flush_subnormals.h) and
// gives the caller back its own mode: the same product is 0 inside the step and 2e-323 after it.
TEST(Integrator, StepFlushesSubnormalsAndRestoresTheCallersMode) {
#if defined(__SSE2__) || defined(_M_X64) || defined(__aarch64__)
  FreeParticle particle;
  StubIntegrator integrator(StubOptions());
  integrator.Reset(particle, {}, 0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Ones(1));
  ASSERT_GT(SubnormalProduct(), 0.0);  // the default mode keeps subnormals
  ASSERT_EQ(integrator.Step(1.0), StepStatus::kAccepted);
  EXPECT_EQ(integrator.in_step_product, 0.0);
  EXPECT_EQ(SubnormalProduct(), 4.0 * std::numeric_limits<double>::denorm_min());
#else
  GTEST_SKIP() << "no flush-to-zero control on this architecture";
#endif
}

TEST(Formulation, NamesRoundTrip) {
  const std::set<std::string> expected = {"index1", "index2", "index3", "ggl"};
  std::set<std::string> seen;
  for (Formulation f : {Formulation::kIndex1, Formulation::kIndex2, Formulation::kIndex3,
                        Formulation::kStabilizedIndex2}) {
    const std::string name(ToString(f));
    seen.insert(name);
    const std::optional<Formulation> parsed = ParseFormulation(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(seen, expected);
  EXPECT_FALSE(ParseFormulation("index4").has_value());
  EXPECT_FALSE(ParseFormulation("").has_value());
  EXPECT_FALSE(ParseFormulation("Index1").has_value());
}

TEST(StepStatus, NamesAreDistinct) {
  std::set<std::string_view> names;
  for (StepStatus s :
       {StepStatus::kAccepted, StepStatus::kStepSizeUnderflow, StepStatus::kNewtonFailure,
        StepStatus::kLinearSolveFailure, StepStatus::kNonFinite}) {
    EXPECT_FALSE(ToString(s).empty());
    names.insert(ToString(s));
  }
  EXPECT_EQ(names.size(), 5u);
}

TEST(IntegratorStats, AddSumsCountsAndCombinesExtremes) {
  IntegratorStats a, b;
  a.accepted_steps = 3;
  a.rejected_steps = 1;
  a.rhs_evaluations = 20;
  a.position_projections = 2;
  a.smallest_step = 0.1;
  a.largest_step = 0.5;
  a.total_time = 1.0;
  b.accepted_steps = 2;
  b.newton_iterations = 7;
  b.jacobian_evaluations = 1;
  b.factorizations = 4;
  b.velocity_projections = 5;
  b.smallest_step = 0.05;
  b.largest_step = 0.2;
  b.total_time = 0.25;
  a.Add(b);
  EXPECT_EQ(a.accepted_steps, 5);
  EXPECT_EQ(a.rejected_steps, 1);
  EXPECT_EQ(a.rhs_evaluations, 20);
  EXPECT_EQ(a.newton_iterations, 7);
  EXPECT_EQ(a.jacobian_evaluations, 1);
  EXPECT_EQ(a.factorizations, 4);
  EXPECT_EQ(a.position_projections, 2);
  EXPECT_EQ(a.velocity_projections, 5);
  // Exact: min/max select one of the inputs, and 1 + 0.25 is representable.
  EXPECT_NEAR(a.smallest_step, 0.05, 0.0);
  EXPECT_NEAR(a.largest_step, 0.5, 0.0);
  EXPECT_NEAR(a.total_time, 1.25, 0.0);
  // Adding empty statistics changes nothing (∞ is the neutral smallest step).
  IntegratorStats empty;
  a.Add(empty);
  EXPECT_NEAR(a.smallest_step, 0.05, 0.0);
  EXPECT_EQ(a.accepted_steps, 5);
}

TEST(IntegratorOptions, InvalidValuesThrowNamingTheOption) {
  auto with = [](auto&& modify) {
    return [modify] {
      IntegratorOptions o = StubOptions();
      modify(o);
      StubIntegrator stub(o);
    };
  };
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.rtol = -1; }), "rtol");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.atol = kNaN; }), "atol");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.rtol = o.atol = 0; }),
                        "cannot both be 0");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.h_min = -1e-3; }), "h_min");
  ExpectInvalidArgument(with([](IntegratorOptions& o) {
                          o.h_min = 1e-6;
                          o.h_max = 1e-9;
                        }),
                        "h_max");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.h_init = -1; }), "h_init");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.h_init = 0; }), "adaptive = false");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.safety = 1.5; }), "safety");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.fac_min = 0; }), "fac_min");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.fac_max = 0.5; }), "fac_max");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.newton_tol = 0; }), "newton_tol");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.max_newton_iterations = 0; }),
                        "max_newton_iterations");
  ExpectInvalidArgument(with([](IntegratorOptions& o) { o.projection_tol = -1; }),
                        "projection_tol");
  EXPECT_NO_THROW(with([](IntegratorOptions&) {})());
}

TEST(Integrator, ResetRejectsUnsupportedFormulation) {
  IntegratorOptions o = StubOptions();
  o.formulation = Formulation::kIndex3;
  StubIntegrator stub(o);
  FreeParticle system;
  ExpectInvalidArgument(
      [&] { stub.Reset(system, {}, 0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1)); },
      "index3");
}

TEST(Integrator, ResetRejectsBadStateAndRows) {
  StubIntegrator stub(StubOptions());
  FreeParticle system;
  const Eigen::VectorXd one = Eigen::VectorXd::Ones(1);
  ExpectInvalidArgument([&] { stub.Reset(system, {}, 0.0, Eigen::VectorXd(2), one); },
                        "q has size 2");
  ExpectInvalidArgument([&] { stub.Reset(system, {}, 0.0, one, Eigen::VectorXd(0)); },
                        "v has size 0");
  ExpectInvalidArgument([&] { stub.Reset(system, {0}, 0.0, one, one); }, "active row 0");
  ExpectInvalidArgument([&] { stub.Reset(system, {}, kNaN, one, one); }, "t must be finite");
  ExpectInvalidArgument(
      [&] { stub.Reset(system, {}, 0.0, one, Eigen::VectorXd::Constant(1, kNaN)); },
      "v contains NaN");
  EXPECT_EQ(stub.resets, 0);
}

TEST(Integrator, StepKeepsStatisticsAndInterpolates) {
  StubIntegrator stub(StubOptions());
  FreeParticle system;
  stub.Reset(system, {}, 1.0, Eigen::VectorXd::Constant(1, 2.0), Eigen::VectorXd::Constant(1, 3.0));
  EXPECT_EQ(stub.resets, 1);
  Eigen::VectorXd q, v;
  stub.Interpolate(1.0, &q, &v);  // before any step: the Reset state
  EXPECT_NEAR(q(0), 2.0, 0.0);
  EXPECT_NEAR(v(0), 3.0, 0.0);

  // Steps of 0.25 to t = 1.6: 0.25, 0.25, 0.1 (the stub shortens the last one).
  while (stub.t() < 1.6) ASSERT_EQ(stub.Step(1.6), StepStatus::kAccepted);
  const IntegratorStats& s = stub.stats();
  EXPECT_EQ(s.accepted_steps, 3);
  // Step sizes are differences of times: round-off of 1e-15 at most.
  EXPECT_NEAR(s.smallest_step, 0.1, 1e-15);
  EXPECT_NEAR(s.largest_step, 0.25, 1e-15);
  EXPECT_NEAR(s.total_time, 0.6, 1e-15);
  // Free flight: q = 2 + 3 (t − 1), exact up to round-off of the three additions.
  EXPECT_NEAR(stub.q()(0), 2.0 + 3.0 * 0.6, 1e-14);
  stub.Interpolate(1.55, &q, &v);
  EXPECT_NEAR(q(0), 2.0 + 3.0 * 0.55, 1e-14);

  // A second Reset does not clear the statistics.
  stub.Reset(system, {}, 0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1));
  EXPECT_EQ(stub.stats().accepted_steps, 3);
}

TEST(Integrator, StepDetectsNonFiniteStateAndRestoresTheLastOne) {
  StubIntegrator stub(StubOptions());
  FreeParticle system;
  stub.Reset(system, {}, 0.0, Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXd::Constant(1, 1.0));
  ASSERT_EQ(stub.Step(10.0), StepStatus::kAccepted);
  const double t_good = stub.t();
  const double q_good = stub.q()(0);
  stub.produce_nan = true;
  EXPECT_EQ(stub.Step(10.0), StepStatus::kNonFinite);
  // Restored bit for bit (tolerance 0): the base class copies the previous state back.
  EXPECT_NEAR(stub.t(), t_good, 0.0);
  EXPECT_NEAR(stub.q()(0), q_good, 0.0);
  EXPECT_NEAR(stub.t_previous(), t_good, 0.0);
  EXPECT_EQ(stub.stats().accepted_steps, 1);  // the bad step is not counted
  Eigen::VectorXd q, v;
  stub.Interpolate(t_good, &q, &v);
  EXPECT_NEAR(q(0), q_good, 0.0);
}

TEST(Integrator, StepValidatesTheLimit) {
  StubIntegrator stub(StubOptions());
  FreeParticle system;
  EXPECT_THROW(stub.Step(1.0), std::logic_error);  // before Reset
  stub.Reset(system, {}, 1.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1));
  ExpectInvalidArgument([&] { stub.Step(1.0); }, "t_limit");
  ExpectInvalidArgument([&] { stub.Step(kNaN); }, "t_limit");
}

TEST(Integrator, ErrorNormIsTheScaledRms) {
  IntegratorOptions o = StubOptions();
  o.rtol = 1e-2;
  o.atol = 1e-3;
  StubIntegrator stub(o);
  const Eigen::Vector2d err(1e-3, -2e-3), y_old(1.0, 0.0), y_new(2.0, -1.0);
  // sc = atol + rtol·max(|y_old|, |y_new|) = (0.021, 0.011).
  const double r0 = 1e-3 / 0.021, r1 = 2e-3 / 0.011;
  const double expected = std::sqrt(0.5 * (r0 * r0 + r1 * r1));
  // A handful of flops: relative round-off of a few ulps.
  EXPECT_NEAR(stub.ErrorNorm(err, y_old, y_new), expected, 1e-15 * expected);
  EXPECT_NEAR(stub.ErrorNorm(Eigen::VectorXd(0), Eigen::VectorXd(0), Eigen::VectorXd(0)), 0.0, 0.0);

  // atol = 0 with zero values: a zero error component contributes 0, not 0/0.
  IntegratorOptions o_rel = StubOptions();
  o_rel.rtol = 1e-6;
  o_rel.atol = 0;
  StubIntegrator relative(o_rel);
  const Eigen::Vector2d e2(0.0, 1e-6), y2(0.0, 1.0);
  EXPECT_NEAR(relative.ErrorNorm(e2, y2, y2), std::sqrt(0.5), 1e-15);
}

TEST(Integrator, StepFactorFollowsEq30AndItsBounds) {
  IntegratorOptions o = StubOptions();
  o.safety = 0.9;
  o.fac_min = 0.2;
  o.fac_max = 5.0;
  StubIntegrator stub(o);
  // err = 1: the safety factor. err = 2⁻⁵ with p = 4: s · 32^(1/5) = 2 s. Tolerances: pow
  // round-off of a few ulps.
  EXPECT_NEAR(stub.StepFactor(1.0, 4, false), 0.9, 1e-15);
  EXPECT_NEAR(stub.StepFactor(1.0 / 32.0, 4, false), 1.8, 1e-15);
  // The exponent is 1/(p+1): p = 1 gives s · 4^(1/2) = 2 s at err = 1/4.
  EXPECT_NEAR(stub.StepFactor(0.25, 1, false), 1.8, 1e-15);
  // Bounds (exact: clamped to the option values).
  EXPECT_NEAR(stub.StepFactor(1e-30, 4, false), 5.0, 0.0);
  EXPECT_NEAR(stub.StepFactor(0.0, 4, false), 5.0, 0.0);
  EXPECT_NEAR(stub.StepFactor(1e30, 4, false), 0.2, 0.0);
  EXPECT_NEAR(stub.StepFactor(kNaN, 4, false), 0.2, 0.0);
  EXPECT_NEAR(stub.StepFactor(1.0 / 32.0, 4, true), 1.0, 0.0);  // no growth after a rejection
  EXPECT_NEAR(stub.StepFactor(4.0, 4, true), 0.9 * std::pow(0.25, 0.2), 1e-15);
}

// IterationMatrix equilibrates before factorizing (integrators/newton.h). The matrix has the
// pattern of BDF's GGL matrix on examples/flexible/sliding_beam.yaml once both ends stick: a
// stiffness block 5e6–2e7 times the constraint blocks, and two constraint rows 2.4e-4 apart (G's
// measured σ_min/σ_max there), [D, −Gᵀ; G, 0]. Its exact 1-norm reciprocal condition is 4.8e-23
// unscaled and 1.3e-9 equilibrated (computed by inverting both): the estimate of the unscaled
// matrix is below kSingularRcond (checked, the precondition of the test), the equilibrated one
// is accepted, and the solve recovers a known x to ε κ₁ ≈ 2e-7 relative (tolerance 1e-6).
TEST(IterationMatrix, EquilibratesBadlyScaledBlocks) {
  Eigen::MatrixXd G(3, 4);
  G << 1, 0, 1, 0, 1, 0, 1, 2.4e-4, 0, 1, 0, 1;
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(7, 7);
  S.topLeftCorner(4, 4).diagonal() << 1e7, 2e7, 5e6, 1e7;
  S.topRightCorner(4, 3) = -G.transpose();
  S.bottomLeftCorner(3, 4) = G;
  ASSERT_LT(Eigen::PartialPivLU<Eigen::MatrixXd>(S).rcond(), IterationMatrix::kSingularRcond);

  IterationMatrix matrix;
  ASSERT_TRUE(matrix.Factorize(S));
  Eigen::VectorXd x_true(7);
  x_true << 0.3, -1.2, 2.0, 0.7, 5.0, -4.0, 1.5;
  Eigen::VectorXd x = S * x_true;
  matrix.Solve(x, &x);  // in place
  EXPECT_LT((x.head(4) - x_true.head(4)).norm(), 1e-6 * x_true.head(4).norm());
  EXPECT_EQ(matrix.factorizations(), 1);
}

// A matrix with two equal rows is singular. Its LU has an exact zero pivot (the rows stay equal
// under every elimination step), yet Eigen's reciprocal condition estimate of it is ≈ 0.2:
// Factorize must still refuse it, and accept the same matrix before the row is copied.
TEST(IterationMatrix, RefusesAMatrixWithTwoEqualRows) {
  std::srand(7);
  Eigen::MatrixXd S = Eigen::MatrixXd::Random(6, 6) + 3.0 * Eigen::MatrixXd::Identity(6, 6);
  IterationMatrix matrix;
  ASSERT_TRUE(matrix.Factorize(S));
  S.row(5) = S.row(4);
  ASSERT_GT(Eigen::PartialPivLU<Eigen::MatrixXd>(S).rcond(), IterationMatrix::kSingularRcond);
  EXPECT_FALSE(matrix.Factorize(S));
  EXPECT_FALSE(matrix.valid());
}

// A saddle-point matrix whose constraint rows lose rank (integrators/newton.h, "Saddle-point
// matrices at a singular configuration"): [M, −Gᵀ; G, 0] with G's third row equal to its first,
// as at a singular configuration where two constraint normals align. The plain factorization
// refuses it; with the constraint block declared it is factorized regularized. For a consistent
// right-hand side b = S x_true the primal part is unique (M is SPD) and the refined solve must
// reproduce it and meet S x = b to round-off (1e-12 relative: the refinement converges at the
// rate δ/(δ + w) ≈ 1e-10 per pass in the directions w ~ 1 of the Schur complement, so two
// passes reach the round-off of S x, a few ε ‖S‖ ‖x‖); the multipliers are the least-norm ones
// (the rows' sum is determined, the difference λ₁ − λ₃ has no component in G x + δ λ = b₂ for
// consistent b₂, so it is 0). A full-rank matrix is not regularized.
TEST(IterationMatrix, RegularizesASingularSaddlePointMatrix) {
  Eigen::MatrixXd G(3, 4);
  G << 1, 0.5, 0, 0, 0, 1, -1, 0.25, 1, 0.5, 0, 0;
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(7, 7);
  S.topLeftCorner(4, 4).diagonal() << 2.0, 1.0, 0.5, 3.0;
  S.topRightCorner(4, 3) = -G.transpose();
  S.bottomLeftCorner(3, 4) = G;
  IterationMatrix matrix;
  EXPECT_FALSE(matrix.Factorize(S));
  ASSERT_TRUE(matrix.Factorize(S, 3));
  EXPECT_TRUE(matrix.regularized());
  EXPECT_EQ(matrix.regularizations(), 1);
  EXPECT_LT(matrix.pivot_ratio(), IterationMatrix::kSingularRcond);  // the unregularized one
  Eigen::VectorXd x_true(7);
  x_true << 0.3, -1.2, 2.0, 0.7, 5.0, -4.0, 1.5;
  const Eigen::VectorXd b = S * x_true;
  Eigen::VectorXd x;
  matrix.Solve(b, &x);
  EXPECT_LT((S * x - b).lpNorm<Eigen::Infinity>(), 1e-12 * b.lpNorm<Eigen::Infinity>());
  EXPECT_LT((x.head(4) - x_true.head(4)).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_NEAR(x(4) + x(6), x_true(4) + x_true(6), 1e-12);
  EXPECT_NEAR(x(4), x(6), 1e-9);
  EXPECT_NEAR(x(5), x_true(5), 1e-12);

  S(6, 3) = 1e-3;  // the third row (and column) independent again
  S(3, 6) = -1e-3;
  ASSERT_TRUE(matrix.Factorize(S, 3));
  EXPECT_FALSE(matrix.regularized());
  EXPECT_EQ(matrix.regularizations(), 1);
}

}  // namespace
}  // namespace saltus::integrators
