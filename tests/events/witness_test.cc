// Witness families on an integrator's dense output (events/witness.h): one accepted step of
// DOPRI5 with a fixed step, and the earliest event found in it against closed forms.
#include "events/witness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "contact/planar_contacts.h"
#include "engine/lagrangian_system.h"
#include "engine/planar_model.h"
#include "tests/events/event_test_systems.h"

namespace saltus::events {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// The parts of the loop that scan one step, for a system and a fixed step h.
struct OneStep {
  OneStep(std::shared_ptr<engine::MechanicalSystem> system, double h, int num_samples)
      : sys(std::move(system)),
        opt(Options(h, num_samples)),
        ctx(*sys, opt),
        integrator(integrators::MakeIntegrator("dopri5", opt.integrator_options)),
        dynamics(*sys),
        modes(*sys, ctx.rows),
        forces(ctx, dynamics, modes, split),
        gaps(ctx, *integrator),
        normal_forces(ctx, *integrator, modes, forces) {}

  static SimulationOptions Options(double h, int num_samples) {
    SimulationOptions o;
    o.integrator_options.adaptive = false;
    o.integrator_options.h_init = h;
    o.event_samples = num_samples;
    return o;
  }

  // Starts a phase at (0, q, v) with `closed` contacts, takes one step and scans it.
  double Scan(const VectorXd& q, const VectorXd& v, const std::vector<int>& closed) {
    modes.SetClosed(closed);
    gaps.StartPhase(0.0, q, v, modes.closed(), nullptr);
    integrator->Reset(*sys, modes.active(), 0.0, q, v);
    EXPECT_EQ(integrator->Step(1e9), integrators::StepStatus::kAccepted);
    samples.Take(*integrator, opt.event_samples);
    gaps.Watch(q, samples, modes.closed());
    forces.NewStep(samples);
    WitnessSet* const families[] = {&gaps, &normal_forces};
    return FindEarliestEvent(samples, families);
  }

  std::shared_ptr<engine::MechanicalSystem> sys;
  SimulationOptions opt;
  EventContext ctx;
  std::unique_ptr<integrators::Integrator> integrator;
  engine::ConstrainedDynamics dynamics;
  ContactModes modes;
  ForceSplit split;  // empty: frictionless
  StepSamples samples;
  SampleForces forces;
  GapWitness gaps;
  NormalForceWitness normal_forces;
};

// Root tolerance 1e-12 relative (SimulationOptions default); DOPRI5's dense output is exact on
// the parabolic flight (a polynomial of degree 2 < its order), so the located time is within the
// root tolerance of the closed form, plus round-off.
constexpr double kTimeTolerance = 2e-12;

TEST(WitnessTest, ImpactOfAFallingBallIsLocatedInsideTheStep) {
  const double r = 0.1, h0 = 0.05;
  OneStep s(VerticalBall(1.0, r, 0.5), 0.2, 4);
  const double t_event = s.Scan(VectorXd::Constant(1, r + h0), VectorXd::Zero(1), {});
  EXPECT_NEAR(t_event, std::sqrt(2 * h0 / kG), kTimeTolerance);
  std::vector<int> fired;
  s.gaps.Fired(t_event, &fired);
  EXPECT_EQ(fired, std::vector<int>{0});
  s.normal_forces.Fired(t_event, &fired);  // nothing closed: no take-off
  EXPECT_EQ(fired, std::vector<int>{0});
}

// A ball leaving the floor at v₀ = 1 m/s (departing form) has no root at the phase start, where
// g is at round-off level, and lands again at 2 v₀ / g.
TEST(WitnessTest, DepartingContactReturnsAfterItsFlight) {
  const double r = 0.1;
  OneStep s(VerticalBall(1.0, r, 0.5), 0.3, 4);
  const double t_event = s.Scan(VectorXd::Constant(1, r), VectorXd::Constant(1, 1.0), {});
  EXPECT_NEAR(t_event, 2 * 1.0 / kG, kTimeTolerance);
  EXPECT_EQ(s.ctx.stats.round_off_departures, 0);
}

// A unit mass moving at 1 m/s through a thin obstacle: g(q) = (q − 1/2)² − 10⁻⁴ is positive at
// both ends of the step (q = 0 and 1) and at its only sample pair, with ġ < 0 then > 0; the
// tunnelling guard finds the crossing at t = 1/2 − 10⁻².
TEST(WitnessTest, TunnellingThroughAThinObstacleIsCaught) {
  engine::LagrangianCallbacks cb;
  cb.n = 1;
  cb.mass = [](const VectorXd&, MatrixXd* M) { *M = MatrixXd::Identity(1, 1); };
  cb.forces = [](double, const VectorXd&, const VectorXd&, VectorXd* F) { *F = VectorXd::Zero(1); };
  auto sys = std::make_shared<engine::LagrangianSystem>(cb);
  engine::ConstraintCallbacks cc;
  cc.rows = {{engine::ConstraintKind::kUnilateral, "plate", 0.0}};
  cc.values = [](double, const VectorXd& q, VectorXd* g) {
    *g = VectorXd::Constant(1, (q[0] - 0.5) * (q[0] - 0.5) - 1e-4);
  };
  cc.jacobian = [](double, const VectorXd& q, MatrixXd* G) {
    *G = MatrixXd::Constant(1, 1, 2 * (q[0] - 0.5));
  };
  cc.gamma = [](double, const VectorXd&, const VectorXd& v, VectorXd* gamma) {
    *gamma = VectorXd::Constant(1, 2 * v[0] * v[0]);
  };
  sys->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 1));
  OneStep s(sys, 1.0, 0);
  const double t_event = s.Scan(VectorXd::Zero(1), VectorXd::Ones(1), {});
  EXPECT_NEAR(t_event, 0.5 - 1e-2, kTimeTolerance);
}

// A ball resting on the floor, lifted by f(t) = m g t / T: λ = m g (1 − t/T), and the take-off
// function λ + τ₃ vanishes at t = T (1 + τ₃/(m g)). The multipliers come from the index-1 solve
// at the interpolated state, exact here (constant acceleration).
TEST(WitnessTest, TakeoffWhenTheContactForceVanishes) {
  const double m = 2.0, r = 0.1, T = 0.5;
  OneStep s(VerticalBall(m, r, 0.0, [&](double t) { return m * kG * t / T; }), 1.0, 4);
  const double t_event = s.Scan(VectorXd::Constant(1, r), VectorXd::Zero(1), {0});
  const double tau3 = s.opt.thresholds.tau3;
  EXPECT_NEAR(t_event, T * (1 + tau3 / (m * kG)), kTimeTolerance);
  std::vector<int> fired;
  s.normal_forces.Fired(t_event, &fired);
  EXPECT_EQ(fired, std::vector<int>{0});
}

// Speed bound of the step: at least the largest sampled speed (free fall from rest over h:
// |v| ≤ g h, reached at the step end).
TEST(WitnessTest, StepSamplesBoundTheSpeedOverTheStep) {
  OneStep s(VerticalBall(1.0, 0.1, 0.5), 0.1, 4);
  s.Scan(VectorXd::Constant(1, 10.0), VectorXd::Zero(1), {});
  EXPECT_EQ(s.samples.time(0), 0.0);
  EXPECT_EQ(s.samples.time(s.samples.n() + 1), 0.1);
  EXPECT_GE(s.samples.speed_bound()[0], kG * 0.1 * (1 - 1e-14));
}

// The samples are interpolated when first read (the scan reads only those it reaches), in any
// order: the values are the dense output's at the sample times, bit for bit, and the speed bound
// is that of all samples. The planar ball's candidate rows are all rows whatever the speeds, so
// its scan does not need the bound.
TEST(WitnessTest, StepSamplesAreTheDenseOutputInWhateverOrderTheyAreRead) {
  auto ball = VerticalBall(1.0, 0.1, 0.5);
  EXPECT_FALSE(ball->CandidateRowsDependOnSpeed());
  OneStep s(ball, 0.1, 4);
  s.Scan(VectorXd::Constant(1, 10.0), VectorXd::Constant(1, 0.3), {});
  StepSamples lazy;
  lazy.Take(*s.integrator, 4);
  VectorXd q, v;
  double bound = 0.0, change = 0.0;
  for (int i = 5; i >= 0; --i) {
    s.integrator->Interpolate(lazy.time(i), &q, &v);
    EXPECT_EQ(lazy.q(i), q) << "sample " << i;
    EXPECT_EQ(lazy.v(i), v) << "sample " << i;
    bound = std::max(bound, std::abs(v[0]));
    if (i < 5) change = std::max(change, std::abs(lazy.v(i + 1)[0] - v[0]));
  }
  EXPECT_EQ(lazy.speed_bound()[0], bound + change);
}

// A block (0.2 × 0.1 m) sticking with its two lower corners on a belt, the friction oscillator's
// state at its first stick as HEM5 reaches it (examples/friction/friction_oscillator.yaml): the
// belt has drifted off its guide by ~1e-20 m and rad, so the corners' tangential rows agree to
// round-off but the belt's θ column is an exact 0 in one and −7.5e-37 in the other. The planar
// model gives dense rows; the corners must still form one group (equal rows, to 1e-12 relative).
// Compared by their nonzero pattern they were two groups, the index-1 solve split λ_T between
// them by minimum norm, and one corner slipped alone 0.019 s early.
TEST(WitnessTest, StickingCornersWithRowsEqualToRoundOffAreOneGroup) {
  engine::PlanarModelBuilder builder;
  for (const char* name : {"belt", "block"}) {
    engine::PlanarBody body;
    body.name = name;
    body.mass = 1.0;
    body.inertia = 0.01;
    builder.AddBody(body);
  }
  auto model = builder.Build();
  auto sys = std::make_shared<engine::PlanarMultibodySystem>(model);
  std::vector<contact::PlanarContact> contacts;
  for (const double s : {-1.0, 1.0}) {
    contact::PlanarContact c;
    c.name = s < 0 ? "left" : "right";
    c.type = contact::PlanarContactType::kPointLine;
    c.body_a = 0;
    c.body_b = 1;
    c.point_b = Eigen::Vector2d(0.1 * s, -0.05);
    c.friction = 0.3;
    contacts.push_back(c);
  }
  sys->AddConstraintBlock(std::make_shared<contact::PlanarContacts>(model, contacts));
  VectorXd q(6);
  q << 0.014943762796247909, -3.0382509484583492e-20, -5.4225086011050748e-20,
      0.0078400741083669463, 0.050000000000000003, -6.8162409928066927e-19;
  SimulationOptions opt;
  EventContext ctx(*sys, opt);
  const int left = ctx.rows.unilateral[0], right = ctx.rows.unilateral[1];
  // The premise: the rows differ in their pattern of exact zeros only.
  std::vector<int> tangents;
  for (int row : {left, right}) tangents.push_back(sys->TangentRows(row)[0]);
  MatrixXd G;
  sys->ConstraintJacobian(0.0, q, tangents, &G);
  ASSERT_NE((G.row(0).array() == 0).count(), (G.row(1).array() == 0).count()) << G;
  ASSERT_LT((G.row(0) - G.row(1)).cwiseAbs().maxCoeff(), 1e-30) << G;

  auto integrator = integrators::MakeIntegrator("dopri5", opt.integrator_options);
  engine::ConstrainedDynamics dynamics(*sys);
  ContactModes modes(*sys, ctx.rows);
  ForceSplit split;
  SampleForces forces(ctx, dynamics, modes, split);
  StickWitness stick(ctx, *integrator, modes, forces);
  modes.SetStates({{left, ContactMode::kStick}, {right, ContactMode::kStick}});
  stick.StartPhase(0.0, q);
  EXPECT_EQ(stick.groups(), (std::vector<std::vector<int>>{{left, right}}));
}

}  // namespace
}  // namespace saltus::events
