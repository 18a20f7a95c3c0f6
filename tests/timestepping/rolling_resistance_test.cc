// Moreau–Jean with rolling resistance (contact/rolling_friction_step.h, issue 18 §3) against
// closed forms. A solid sphere (m, R, J = 2/5 m R²) rolling without slip on a plane, with Coulomb
// μ and rolling resistance μ_R (a length; |τ_R| ≤ μ_R N):
//   flat floor:  a = −(5/7) μ_R g / R until it stops at t_s = v₀/|a|, then at rest for good;
//   incline α:   at rest iff tan α ≤ μ_R / R (the friction force m g sin α has the moment
//                m g R sin α about the centre, which the rolling torque, at most μ_R m g cos α,
//                must balance), else it rolls down at a = (5/7) g (sin α − (μ_R/R) cos α);
// both need μ large enough for rolling without slip (friction force ≤ μ N).
// Why the tolerances are tight: with constant forces the θ-method velocities v_{k+1} = v_k + h a
// are exact, and with θ = 1/2 the positions are the trapezoidal rule of a linear v, also exact;
// the only O(h) effects are the step in which the sphere stops (its position moves by at most
// |a| h² there) and the solver tolerance (1e-10 relative to max(1, ‖b‖∞), b ~ v: ≤ 1e-9 m/s with
// a margin of 10).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/rolling_friction_step.h"
#include "contact/sparse_rolling_step.h"
#include "events/simulation.h"
#include "timestepping/moreau_jean.h"
#include "tools/generators_contact.h"
#include "tools/scene.h"

namespace saltus::timestepping {
namespace {

constexpr double kG = 9.81, kR = 0.1, kMuR = 0.01, kMu = 0.5;
constexpr double kSolverTol = 1e-9;  // header: solver tolerance with a margin of 10

struct Built {
  std::shared_ptr<engine::MechanicalSystem> system;
  Eigen::VectorXd q0, v0;
  events::SimulationOptions options;
};

// x with all its digits (std::to_string keeps 6 decimals: a gap of 1e-7 at the start).
std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// A sphere touching a plane through the origin of normal (sin α, 0, cos α), at rest.
Built Incline(double alpha, const std::string& pair_keys) {
  const double s = std::sin(alpha), c = std::cos(alpha);
  const std::string yaml =
      "scene: incline\ndimension: 3\ngravity: [0, 0, -9.81]\nbodies:\n"
      "  - {name: ball, mass: 1, inertia: 0.004, position: [" +
      Num(kR * s) + ", 0, " + Num(kR * c) +
      "]}\nshapes:\n  - {name: ramp, body: ground, type: plane, normal: [" + Num(s) + ", 0, " +
      Num(c) +
      "], offset: 0}\n  - {name: s, body: ball, type: sphere, radius: 0.1}\n"
      "contacts:\n  pairs:\n    - {shapes: [ramp, s], " +
      pair_keys + "}\nsimulation:\n  t_end: 1\n";
  const tools::Scene scene = tools::ParseScene(yaml, "test.yaml");
  const tools::SceneSystem b = tools::BuildSceneSystem(scene);
  return {b.system, b.q0, b.v0, scene.options};
}

std::string Keys(double mu_r) {
  return "friction: " + Num(kMu) + ", rolling_friction: " + Num(mu_r);
}

MoreauJeanOptions Options(const Built& b, double h) {
  MoreauJeanOptions o = FromSimulationOptions(b.options);
  o.h = h;
  return o;
}

// The rolling step solver of each path: the block-sparse Gauss–Seidel one (the default) and the
// dense one (Siconos' solver on the whole problem), both with MoreauJean's accepted bound τ₀/h.
std::shared_ptr<const StepContactSolver> Solver(const Built& b, double h, bool sparse) {
  return std::make_shared<RollingFrictionStepSolver>(Options(b, h).tau0 / h, sparse);
}

TEST(RollingResistance, RollingSphereDeceleratesAtFiveSeventhsMuRGOverRAndStaysStopped) {
  const double v0 = 0.5, h = 1e-3;
  const Built b = Incline(0.0, Keys(kMuR));
  Eigen::VectorXd v = b.v0;
  v[0] = v0;       // linear velocity along +x
  v[4] = v0 / kR;  // ω_y: rolling without slip (contact point at rest)
  for (const bool sparse : {true, false}) {
    SCOPED_TRACE(sparse ? "sparse" : "dense");
    MoreauJean mj(b.system, Options(b, h), Solver(b, h, sparse));
    mj.SetState(0.0, b.q0, v);
    const double a = 5.0 / 7.0 * kMuR * kG / kR;  // 0.70071 m/s²
    const double t_stop = v0 / a;                 // 0.71356 s
    ASSERT_EQ(mj.AdvanceTo(0.5 * t_stop).status, events::RunStatus::kFinished);
    const double t = mj.t();
    EXPECT_NEAR(mj.v()[0], v0 - a * t, kSolverTol);
    EXPECT_NEAR(mj.q()[0], v0 * t - 0.5 * a * t * t, kSolverTol);  // trapezoidal rule: exact
    EXPECT_NEAR(mj.v()[0] - kR * mj.v()[4], 0.0, kSolverTol);      // still rolling without slip
    ASSERT_EQ(mj.AdvanceTo(t_stop + 0.1).status, events::RunStatus::kFinished);
    EXPECT_NEAR(mj.v()[0], 0.0, kSolverTol);
    EXPECT_NEAR(mj.v()[4], 0.0, kSolverTol / kR);
    // Stopping distance v₀²/(2a); the stopping step moves it by at most a h².
    const double x_stop = v0 * v0 / (2.0 * a);
    EXPECT_NEAR(mj.q()[0], x_stop, a * h * h + kSolverTol);
    // At rest for good: no creep beyond round-off over 0.5 s.
    const double x_rest = mj.q()[0];
    ASSERT_EQ(mj.AdvanceTo(t_stop + 0.6).status, events::RunStatus::kFinished);
    EXPECT_NEAR(mj.q()[0], x_rest, 1e-12);
    EXPECT_NEAR(mj.v()[0], 0.0, 1e-12);
    EXPECT_EQ(mj.stats().events[static_cast<int>(events::EventKind::kImpact)], 0);
  }
}

TEST(RollingResistance, SphereOnAnInclineStaysIffTanAlphaIsAtMostMuROverR) {
  const double h = 1e-3, t_end = 0.3;
  const double critical = std::atan(kMuR / kR);  // 5.71°
  for (const double alpha : {0.9 * critical, 1.5 * critical})
    for (const bool sparse : {true, false}) {
      const Built b = Incline(alpha, Keys(kMuR));
      MoreauJean mj(b.system, Options(b, h), Solver(b, h, sparse));
      mj.SetState(0.0, b.q0, b.v0);
      ASSERT_EQ(mj.AdvanceTo(t_end).status, events::RunStatus::kFinished);
      const double s = std::sin(alpha), c = std::cos(alpha);
      const Eigen::Vector3d down(c, 0.0, -s);
      const double speed = down.dot(mj.v().head<3>());
      const double a = alpha <= critical ? 0.0 : 5.0 / 7.0 * kG * (s - kMuR / kR * c);
      EXPECT_NEAR(speed, a * t_end, kSolverTol) << "alpha " << alpha << " sparse " << sparse;
      const Eigen::Vector3d moved = mj.q().head<3>() - b.q0.head<3>();
      EXPECT_NEAR(down.dot(moved), 0.5 * a * t_end * t_end, kSolverTol)
          << "alpha " << alpha << " sparse " << sparse;
    }
}

TEST(RollingResistance, WithoutResistanceTheSphereRollsDownAtFiveSeventhsGSinAlpha) {
  // μ_R = 0 through the rolling step solver (rows present, coefficient 0 is not accepted by the
  // scene, so a tiny μ_R whose effect is below the tolerance): a = 5/7 g sin α as without rows.
  const double alpha = M_PI / 6.0, h = 1e-3, t_end = 0.2, mu_r = 1e-12;
  const Built b = Incline(alpha, Keys(mu_r));
  MoreauJean mj(b.system, Options(b, h));
  mj.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(mj.AdvanceTo(t_end).status, events::RunStatus::kFinished);
  const Eigen::Vector3d down(std::cos(alpha), 0.0, -std::sin(alpha));
  EXPECT_NEAR(down.dot(mj.v().head<3>()), 5.0 / 7.0 * kG * std::sin(alpha) * t_end,
              kSolverTol + 5.0 / 7.0 * kG * mu_r / kR * t_end);
}

TEST(RollingResistance, SpinningResistanceIsRefusedNamingTheContact) {
  const Built b = Incline(0.0, "friction: 0.5, spinning_friction: 0.002");
  try {
    MoreauJean mj(b.system, Options(b, 1e-3));
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ramp-s"), std::string::npos) << what;
    EXPECT_NE(what.find("spinning_friction is not supported"), std::string::npos) << what;
  }
  const Eigen::VectorXd f = Eigen::VectorXd::Zero(b.system->nv());
  const int n = b.system->RowsOfKind(engine::ConstraintKind::kUnilateral)[0];
  const std::vector<int> rows{n};
  const std::vector<double> e{0.0};
  EXPECT_THROW(contact::SolveRollingFrictionVelocityStep(*b.system, 0.0, b.q0, b.v0, f, {}, rows, e,
                                                         contact::FrictionOptions{}),
               std::invalid_argument);
}

TEST(RollingResistance, ResidualIsZeroOnTheLawAndMeasuresAViolation) {
  // One contact: rolling (u_R ≠ 0) with the torque on the disk's rim against it, sticking
  // tangentially inside the disk, closed normally.
  const Eigen::VectorXd mu = Eigen::VectorXd::Constant(1, 0.5),
                        mu_r = Eigen::VectorXd::Constant(1, 0.01);
  Eigen::VectorXd r(5), w(5);
  r << 2.0, 0.3, -0.4, -0.02 * 0.6, -0.02 * 0.8;  // ‖r_T‖ = 0.5 ≤ 1, ‖r_R‖ = μ_R r_N = 0.02
  w << 0.0, 0.0, 0.0, 3.0, 4.0;                   // u_R along (0.6, 0.8)
  EXPECT_NEAR(contact::RollingFrictionResidual(r, w, mu, mu_r, 1.0), 0.0, 1e-15);
  r[3] = 0.0;  // the torque no longer opposes the rolling at full strength
  EXPECT_GT(contact::RollingFrictionResidual(r, w, mu, mu_r, 1.0), 1e-3);
}

// Solves every step of a run with both paths and keeps the sparse answer (the default).
class ComparingRollingSolver : public StepContactSolver {
 public:
  explicit ComparingRollingSolver(double accepted)
      : sparse_(accepted, true), dense_(accepted, false) {}
  contact::ImpactResult Solve(const engine::MechanicalSystem& system, double t,
                              const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                              std::span<const int> unilateral_rows,
                              std::span<const double> restitution, std::span<const double> gap_rate,
                              const contact::LcpOptions& options) const override {
    const contact::ImpactResult d = dense_.Solve(system, t, q, v, f, bilateral_rows,
                                                 unilateral_rows, restitution, gap_rate, options);
    const contact::ImpactResult s = sparse_.Solve(system, t, q, v, f, bilateral_rows,
                                                  unilateral_rows, restitution, gap_rate, options);
    if (!d.ok || !s.ok) {
      ++failures;
    } else {
      ++compared;
      largest_contacts = std::max(largest_contacts, static_cast<int>(unilateral_rows.size()));
      max_dv = std::max(max_dv, (s.v_plus - d.v_plus).lpNorm<Eigen::Infinity>());
    }
    return s;
  }
  const RollingFrictionStepSolver& sparse() const { return sparse_; }
  mutable int compared = 0, failures = 0, largest_contacts = 0;
  mutable double max_dv = 0.0;

 private:
  RollingFrictionStepSolver sparse_, dense_;
};

// The block-sparse rolling step equals the dense one on every step of a seeded 10-sphere pile
// (μ = 0.5, μ_R = 1 mm, e = 0.5, speculative contacts) falling and settling for 0.4 s: both solve
// the law to a natural-map residual of 1e-10 relative to max(1, ‖b‖∞) (b ~ 1 m/s at the
// landings), or within the accepted τ₀/h = 1e-6 m/s; v⁺ − v_free = M⁻¹ Gᵀ P moves by
// ‖M⁻¹ Gᵀ‖ ‖ΔP‖, ΔP up to the residual over W's smallest non-zero eigenvalue. The bound 1e-6 m/s
// is the accepted residual (an accepted answer may differ by that much); docs/time-stepping.md
// has the measured difference.
TEST(RollingResistance, SparseRollingStepEqualsTheDenseOneOnAPile) {
  tools::PileContactLaw law;
  law.friction = 0.5;
  law.rolling_friction = 1e-3;
  const tools::Scene scene = tools::ParseScene(tools::SpherePileYaml(10, 0.4, 1, law), "pile.yaml");
  const tools::SceneSystem b = tools::BuildSceneSystem(scene);
  MoreauJeanOptions o = FromSimulationOptions(scene.options);
  o.h = 1e-3;
  o.project_contacts = true;  // off by default with friction (header): the issue's −τ₀ check
  auto solver = std::make_shared<ComparingRollingSolver>(o.tau0 / o.h);
  MoreauJean mj(b.system, o, solver);
  mj.SetState(0.0, b.q0, b.v0);
  ASSERT_EQ(mj.AdvanceTo(0.4).status, events::RunStatus::kFinished);
  EXPECT_EQ(solver->failures, 0);
  EXPECT_GT(solver->compared, 100);
  EXPECT_GE(solver->largest_contacts, 10);  // every sphere touches something by then
  EXPECT_LT(solver->max_dv, 1e-6);          // m/s, the accepted residual (above)
  const contact::RollingStepStats& st = solver->sparse().sparse_stats();
  EXPECT_GT(st.gauss_seidel, 100);  // the sweeps, not the fallback, answer most components
  EXPECT_EQ(st.failed, 0);
  // Speculative contacts and the projection (timestepping/moreau_jean.h): no row of a step ends
  // below −τ₀ after the projection, where the classical index set let the landing go ~1 mm in;
  // every pair at the end is checked too (centres: 7 coordinates per body, radius 0.05 m).
  EXPECT_LE(mj.stats().max_position_violation, o.tau0);
  const double r = 0.05;
  const auto n = mj.q().size() / 7;
  double smallest = 1.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = i + 1; j < n; ++j) {
      smallest = std::min(smallest,
                          (mj.q().segment<3>(7 * i) - mj.q().segment<3>(7 * j)).norm() - 2.0 * r);
    }
    smallest = std::min(smallest, mj.q()[7 * i + 2] - r);  // the floor
  }
  EXPECT_GE(smallest, -o.tau0);
}

}  // namespace
}  // namespace saltus::timestepping
