// Tests specific to Dop853 (integrators/dop853.{h,cc}): the tableau against every Runge–Kutta
// order condition up to order 8 (all 200 rooted trees), the embedded estimators' orders, the
// dense output's order 7 for several θ, the KKT-solve accounting, and bounce times of the
// bouncing ball through the CLI against the closed form. The order at fixed steps on closed-form
// problems (slopes 7.95–8.12 on the circle, the rod and the rotor) and of the dense output
// (7.9–8.06) are the table's generic tests (integrator_table_test.cc, dop853_index1_*).
#include "integrators/dop853.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/block_sparse.h"
#include "tests/integrators/event_times.h"
#include "tests/integrators/test_problems.h"
#include "tools/cli.h"

namespace saltus::integrators {
namespace {

namespace fs = std::filesystem;
namespace tab = dop853_tableau;
using test_outputs::ImpactTimes;
using test_problems::MakeProblem;

using Weights = std::array<double, tab::kDenseStages>;

// A rooted tree: its subtrees (unordered; the canonical form sorts them).
struct Tree {
  std::vector<Tree> children;
  int Order() const {
    int n = 1;
    for (const Tree& c : children) n += c.Order();
    return n;
  }
  std::string Canonical() const {
    std::vector<std::string> parts;
    for (const Tree& c : children) parts.push_back(c.Canonical());
    std::sort(parts.begin(), parts.end());
    std::string s = "[";
    for (const std::string& p : parts) s += p;
    return s + "]";
  }
  // γ(t) = |t| Π γ(children) (Hairer, Nørsett & Wanner I, Def. II.2.10).
  double Gamma() const {
    double g = Order();
    for (const Tree& c : children) g *= c.Gamma();
    return g;
  }
  // Elementary weights Φ_i(t) = Π_children (A Φ(child))_i over the 16 stages (ibid., Def. 2.9).
  Weights Phi() const {
    Weights phi;
    phi.fill(1.0);
    for (const Tree& c : children) {
      const Weights child = c.Phi();
      for (int i = 0; i < tab::kDenseStages; ++i) {
        double s = 0;
        for (int j = 0; j < i; ++j) s += tab::kA[i][j] * child[j];
        phi[i] *= s;
      }
    }
    return phi;
  }
};

// Every tree obtained from t by attaching one leaf to one vertex.
void Grow(const Tree& t, std::vector<Tree>* out) {
  Tree with_leaf = t;
  with_leaf.children.push_back(Tree{});
  out->push_back(with_leaf);
  for (std::size_t k = 0; k < t.children.size(); ++k) {
    std::vector<Tree> grown;
    Grow(t.children[k], &grown);
    for (Tree& g : grown) {
      Tree copy = t;
      copy.children[k] = std::move(g);
      out->push_back(std::move(copy));
    }
  }
}

// All rooted trees of order 1..max_order, each once: 1, 1, 2, 4, 9, 20, 48, 115 of each order
// (Hairer, Nørsett & Wanner I, Table II.2.1).
std::vector<Tree> TreesUpTo(int max_order) {
  std::vector<Tree> all = {Tree{}}, level = {Tree{}};
  for (int n = 2; n <= max_order; ++n) {
    std::vector<Tree> next;
    std::set<std::string> seen;
    for (const Tree& t : level) {
      std::vector<Tree> grown;
      Grow(t, &grown);
      for (Tree& g : grown) {
        if (seen.insert(g.Canonical()).second) next.push_back(std::move(g));
      }
    }
    all.insert(all.end(), next.begin(), next.end());
    level = std::move(next);
  }
  return all;
}

Weights Extend(const std::array<double, tab::kStages>& w) {
  Weights x{};
  std::copy(w.begin(), w.end(), x.begin());
  return x;
}

Weights B() {
  Weights b{};
  for (int j = 0; j < tab::kStages; ++j) b[j] = tab::kA[tab::kStages - 1][j];
  return b;
}

double Dot(const Weights& b, const Weights& x) {
  double s = 0;
  for (int i = 0; i < tab::kDenseStages; ++i) s += b[i] * x[i];
  return s;
}

// Dense-output weights b_j(θ) as Dop853::BuildDenseOutput combines them (dop853.h).
Weights DenseWeights(double theta) {
  const double t1 = 1 - theta;
  const Weights b = B();
  Weights w{};
  for (int j = 0; j < tab::kDenseStages; ++j) {
    const double r0 = b[j];
    const double r1 = (j == 0 ? 1.0 : 0.0) - r0;
    const double r2 = r0 - (j == tab::kStages - 1 ? 1.0 : 0.0) - r1;
    const auto& d = tab::kD;
    w[j] = theta *
           (r0 +
            t1 * (r1 + theta * (r2 + t1 * (d[0][j] +
                                           theta * (d[1][j] + t1 * (d[2][j] + theta * d[3][j]))))));
  }
  return w;
}

// Largest |Σ w_i Φ_i(t) − scale(|t|)/γ(t)| over the trees of order ≤ max_order.
double WorstResidual(
    const Weights& w, const std::vector<Tree>& trees, int max_order,
    const std::function<double(int)>& scale = [](int) { return 1.0; }) {
  double worst = 0;
  for (const Tree& t : trees) {
    if (t.Order() > max_order) continue;
    worst = std::max(worst, std::abs(Dot(w, t.Phi()) - scale(t.Order()) / t.Gamma()));
  }
  return worst;
}

// The coefficients are 30-digit decimals rounded to doubles, and the weights reach |a| ≈ 44 and
// |d| ≈ 530 with sums of up to 16 terms: a few hundred ulps of those sizes is 1e-12 (solution)
// and 1e-11 (dense output); a wrong digit in a coefficient shows up at 1e-6 or more.
constexpr double kTableauTol = 1e-12;
constexpr double kDenseTol = 1e-11;

TEST(Dop853Tableau, IsExplicitFsalWithConsistentNodes) {
  for (int i = 0; i < tab::kDenseStages; ++i) {
    double row = 0;
    for (int j = 0; j < tab::kDenseStages; ++j) {
      if (j >= i) {
        EXPECT_NEAR(tab::kA[i][j], 0.0, 0.0) << i << "," << j;  // explicit
      }
      row += tab::kA[i][j];
    }
    EXPECT_NEAR(row, tab::kC[i], kTableauTol) << "row " << i;  // Σ_j a_ij = c_i
  }
  EXPECT_NEAR(tab::kC[tab::kStages - 1], 1.0, 0.0);  // FSAL stage at t_n + h
}

TEST(Dop853Tableau, TreeCountsAreThoseOfTheBook) {
  std::vector<int> count(9, 0);
  for (const Tree& t : TreesUpTo(8)) ++count[static_cast<std::size_t>(t.Order())];
  EXPECT_EQ(count, (std::vector<int>{0, 1, 1, 2, 4, 9, 20, 48, 115}));
}

TEST(Dop853Tableau, SolutionSatisfiesEveryOrderConditionUpToEight) {
  const std::vector<Tree> trees = TreesUpTo(9);
  // Quadrature conditions Σ b_i c_i^(k−1) = 1/k (the bushy trees) and then every tree.
  const Weights b = B();
  for (int k = 1; k <= 8; ++k) {
    Weights ck{};
    for (int i = 0; i < tab::kDenseStages; ++i) ck[i] = std::pow(tab::kC[i], k - 1);
    EXPECT_NEAR(Dot(b, ck), 1.0 / k, kTableauTol) << "k = " << k;
  }
  const double worst8 = WorstResidual(b, trees, 8);
  std::printf("  worst residual over the 200 trees of order <= 8: %.2e\n", worst8);
  EXPECT_LE(worst8, kTableauTol);
  // And not of order 9 (some tree of order 9 fails clearly): 8 is the order, not a lower bound.
  EXPECT_GT(WorstResidual(b, trees, 9), 1e-6);
}

TEST(Dop853Tableau, EmbeddedEstimatorsHaveOrdersFiveAndThree) {
  const std::vector<Tree> trees = TreesUpTo(6);
  Weights b5 = B(), b3 = Extend(tab::kBHat3);
  for (int j = 0; j < tab::kStages; ++j) b5[j] -= tab::kE5[j];
  EXPECT_LE(WorstResidual(b5, trees, 5), kTableauTol);
  EXPECT_GT(WorstResidual(b5, trees, 6), 1e-6);  // else e⁽⁵⁾ would be O(h⁷)
  EXPECT_LE(WorstResidual(b3, trees, 3), kTableauTol);
  EXPECT_GT(WorstResidual(b3, trees, 4), 1e-6);
}

TEST(Dop853Tableau, DenseOutputHasOrderSevenForEveryTheta) {
  const std::vector<Tree> trees = TreesUpTo(8);
  for (double theta : {0.1, 0.3, 0.5, 0.77, 0.95}) {
    const Weights w = DenseWeights(theta);
    const double worst =
        WorstResidual(w, trees, 7, [&](int order) { return std::pow(theta, order); });
    std::printf("  θ = %.2f: worst residual over the trees of order <= 7: %.2e\n", theta, worst);
    EXPECT_LE(worst, kDenseTol) << "θ = " << theta;
  }
  const Weights w1 = DenseWeights(1.0), b = B();
  for (int j = 0; j < tab::kDenseStages; ++j) EXPECT_NEAR(w1[j], b[j], kDenseTol) << j;
}

// ---- The integrator -----------------------------------------------------------------------

// FSAL accounting (explicit_runge_kutta.h): 1 solve per Reset, 12 per attempted step, none for
// projections here (project = false), and the 3 dense-output stages only for a step interpolated
// strictly inside ("Lazy dense-output stages"), once per step.
TEST(Dop853, CountsTwelveKktSolvesPerAttemptAndThreeForAnInterpolatedStep) {
  const auto p = MakeProblem("circle");
  IntegratorOptions o;
  o.rtol = 1e-9;
  o.atol = 1e-9;
  o.h_init = 0.5;
  o.project = false;
  Dop853 integrator(o);
  Eigen::VectorXd q0, v0, q, v;
  p->Exact(p->t0(), &q0, &v0);
  integrator.Reset(p->system(), p->rows(), p->t0(), q0, v0);
  long interpolated = 0;
  for (int k = 0; integrator.t() < p->t_end(); ++k) {
    ASSERT_EQ(integrator.Step(p->t_end()), StepStatus::kAccepted);
    const double t0 = integrator.t_previous(), t1 = integrator.t();
    integrator.Interpolate(t0, &q, &v);  // the ends: no solve
    integrator.Interpolate(t1, &q, &v);
    if (k % 2 == 0) {  // every other step inside, twice: 3 solves once
      integrator.Interpolate(t0 + 0.3 * (t1 - t0), &q, &v);
      integrator.Interpolate(t0 + 0.7 * (t1 - t0), &q, &v);
      ++interpolated;
    }
  }
  const IntegratorStats& st = integrator.stats();
  EXPECT_GT(st.rejected_steps, 0);  // h_init = 0.5 is too large at 1e-9
  EXPECT_GT(interpolated, 2);
  EXPECT_EQ(st.rhs_evaluations,
            1 + 12 * (st.accepted_steps + st.rejected_steps) + 3 * interpolated);
}

// The projection after a step (projection_tol 1e-10, below the drift of most steps at rtol 1e-4)
// uses the FSAL stage's factorization of W at the step end and keeps the FSAL stage as the next
// first stage when its correction is below 1e-3 of the tolerance (explicit_runge_kutta.h,
// "Projection"): every step end then holds |g|, |G v| ≤ 1e-10, the attempts cost 12 KKT solves
// each (1 + 1 for Reset and the initial-step probe) plus one for the few projections that
// re-evaluate (measured: 46 steps, 33 projected, 3 re-evaluated; at most a quarter allowed), and
// the global error stays within the factor 100 of the tolerance against the reference
// (RK4 in the minimal coordinate).
TEST(Dop853, ProjectsWithTheStepEndFactorizationWithoutAnotherSolve) {
  const auto p = MakeProblem("slider_crank");
  IntegratorOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-4;
  o.projection_tol = 1e-10;
  Dop853 integrator(o);
  Eigen::VectorXd q0, v0, g, g_dot;
  p->Exact(p->t0(), &q0, &v0);
  const std::vector<int> rows = p->rows();
  integrator.Reset(p->system(), rows, p->t0(), q0, v0);
  while (integrator.t() < p->t_end()) {
    ASSERT_EQ(integrator.Step(p->t_end()), StepStatus::kAccepted);
    p->system().ConstraintValues(integrator.t(), integrator.q(), rows, &g);
    engine::ConstraintRate(p->system(), integrator.t(), integrator.q(), integrator.v(), rows,
                           &g_dot);
    ASSERT_LE(g.lpNorm<Eigen::Infinity>(), 1e-10) << "t = " << integrator.t();
    ASSERT_LE(g_dot.lpNorm<Eigen::Infinity>(), 1e-10) << "t = " << integrator.t();
  }
  const IntegratorStats& st = integrator.stats();
  EXPECT_GT(st.position_projections, st.accepted_steps / 2);
  const long base = 2 + 12 * (st.accepted_steps + st.rejected_steps);
  EXPECT_GE(st.rhs_evaluations, base);
  EXPECT_LE(st.rhs_evaluations, base + st.position_projections / 4);
  Eigen::VectorXd q_ref, v_ref;
  p->Exact(integrator.t(), &q_ref, &v_ref);
  const double bound = 100 * o.rtol + p->ReferenceErrorEstimate(integrator.t());
  EXPECT_LE((integrator.q() - q_ref).lpNorm<Eigen::Infinity>(), bound);
  EXPECT_LE((integrator.v() - v_ref).lpNorm<Eigen::Infinity>(), bound);
}

// The dense-output stages computed when asked give the trajectory and the dense output of stages
// computed with every step: two runs, one interpolating inside every step and one only inside
// the last, agree to the bit at every step end and at the last step's samples; and at θ = 1/2 the
// interpolant is the order-7 one, within the tolerance of the exact circle (the cubic Hermite
// interpolant of the ends, which it falls back to without the stages, is not).
TEST(Dop853, LazyDenseStagesChangeNeitherTheStepsNorTheInterpolant) {
  const auto p = MakeProblem("circle");
  IntegratorOptions o;
  o.rtol = o.atol = 1e-9;
  Dop853 eager(o), lazy(o);
  Eigen::VectorXd q0, v0, qe, ve, ql, vl, qx, vx;
  p->Exact(p->t0(), &q0, &v0);
  eager.Reset(p->system(), p->rows(), p->t0(), q0, v0);
  lazy.Reset(p->system(), p->rows(), p->t0(), q0, v0);
  double worst = 0;
  while (eager.t() < p->t_end()) {
    ASSERT_EQ(eager.Step(p->t_end()), StepStatus::kAccepted);
    ASSERT_EQ(lazy.Step(p->t_end()), StepStatus::kAccepted);
    const double t0 = eager.t_previous(), t1 = eager.t();
    eager.Interpolate(0.5 * (t0 + t1), &qe, &ve);
    p->Exact(0.5 * (t0 + t1), &qx, &vx);
    worst = std::max(worst, (qe - qx).cwiseAbs().maxCoeff());
    ASSERT_EQ(lazy.t(), t1);
    ASSERT_TRUE(lazy.q() == eager.q() && lazy.v() == eager.v()) << "at t = " << t1;
  }
  for (const double theta : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    const double s = eager.t_previous() + theta * (eager.t() - eager.t_previous());
    eager.Interpolate(s, &qe, &ve);
    lazy.Interpolate(s, &ql, &vl);
    EXPECT_TRUE(qe == ql && ve == vl) << "theta = " << theta;
  }
  // Measured: 6.4e-13 with the order-7 interpolant, 2.0e-6 with r₃ … r₆ left zero (the cubic
  // Hermite one: the dense stages never computed). The bound is the requested tolerance / 10.
  std::printf("  largest position error at theta = 1/2: %.3g\n", worst);
  EXPECT_LT(worst, 1e-10);
  EXPECT_GT(eager.stats().rhs_evaluations, lazy.stats().rhs_evaluations);
}

// The bouncing ball through the CLI (examples/bouncing_ball.yaml, e = 0.9, g = 9.81, drop 0.9 m)
// against its closed form: t₁ = √(2 · 0.9 / g), v₁ = g t₁, t_{k+1} = t_k + 2 eᵏ v₁ / g. The
// first 8 impacts; the tolerance 1e-8 s is the requested accuracy (rtol 1e-10, atol 1e-12 on
// positions ~1 m) turned into time by impact speeds ≥ 1.8 m/s, times the up to 8 impacts over
// which it accumulates, with a margin of ~10.
TEST(Dop853Events, BouncingBallImpactTimesMatchTheClosedForm) {
  const fs::path scratch =
      fs::temp_directory_path() / ("saltus_dop853_test_" + std::to_string(getpid()));
  const std::vector<std::string> args = {
      "run",           std::string(SALTUS_EXAMPLES_DIR) + "/bouncing_ball.yaml",
      "--integrator",  "dop853",
      "--formulation", "index1",
      "--rtol",        "1e-10",
      "--atol",        "1e-12",
      "--out",         scratch.string()};
  std::ostringstream o, e;
  ASSERT_EQ(tools::RunCli(args, o, e), tools::kExitOk) << e.str();
  const std::vector<double> times = ImpactTimes(scratch / "events.csv");
  fs::remove_all(scratch);
  ASSERT_GE(times.size(), 8u);
  const double g = 9.81, e_n = 0.9, t1 = std::sqrt(2 * 0.9 / g), v1 = g * t1;
  double t = t1, worst = 0;
  for (std::size_t k = 0; k < 8; ++k) {
    EXPECT_NEAR(times[k], t, 1e-8) << "impact " << k;
    worst = std::max(worst, std::abs(times[k] - t));
    t += 2 * std::pow(e_n, static_cast<double>(k + 1)) * v1 / g;
  }
  std::printf("  %zu impacts; first 8 within %.2e s of the closed form\n", times.size(), worst);
}

// The planar double four-bar (test_problems.h) through 19 s, past the singular configuration at
// t ≈ 18.711 s, rtol = atol = 1e-10 (library defaults otherwise). There the step's error
// estimate, even with its constrained part removed (explicit_runge_kutta.h), keeps a floor of
// scaled error 1e-4 … 1e-3 that does not shrink with h, above the level at which the controller
// keeps h for an estimate of order 8 (safety^8 = 0.3^8 = 6.6e-5): the accepted steps shrank by
// ~5 % each from 3.5e-7 s to 2.7e-13 s and `saltus run` of the same scene stopped at
// t = 18.7108 s (linear_solve_failure once stages failed at h_min; bench/singular_positions.py).
// Measured now: 19 s in 1,024 steps, max |E − E0| = 3.1e-7 J.
TEST(Dop853Singular, PlanarDoubleFourBarPassesItsSingularConfigurations) {
  IntegratorOptions options;
  options.rtol = options.atol = 1e-10;
  Dop853 dop853(options);
  const test_problems::FourBarRun run = test_problems::RunPlanarDoubleFourBar(&dop853, 19.0);
  EXPECT_EQ(run.status, StepStatus::kAccepted) << "stopped at t = " << run.t_stop;
  EXPECT_LT(run.drift, 1e-3);  // IFToMM criterion (A02 double four-bar): energy drift < 1e-3 J
  // Off the parallelogram branch crank angles differ by O(1) (π when a coupler flips); 1e-6
  // leaves a wide margin over the projections' accuracy.
  EXPECT_LT(run.branch, 1e-6);
  // The dense output of the near-singular steps (explicit_runge_kutta.h, "Dense output of a
  // near-singular step") too: at the crossing near 18.2 s the 7th-order interpolant of the step
  // 18.19415 → 18.20839 s was 6.4e-3 J off at 18.20 s (1.4e-2 J at θ = ¼, ½, ¾ of the steps); the
  // Hermite interpolant: 4.4e-7 J, as the step ends. Bound: IFToMM's 1e-3 J divided by 100.
  EXPECT_LT(run.dense_drift, 1e-5);
}

}  // namespace
}  // namespace saltus::integrators
