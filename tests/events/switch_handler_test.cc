// The switch handler at a switching time (events/switch_handler.h): impact, mode decision and
// projection on a ball and a floor, against Newton's law and the closed forms.
#include "events/switch_handler.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "contact/planar_contacts.h"
#include "engine/planar_model.h"
#include "tests/events/event_test_systems.h"

namespace saltus::events {
namespace {

using Eigen::VectorXd;

struct Handler {
  explicit Handler(std::shared_ptr<engine::MechanicalSystem> system)
      : sys(std::move(system)), ctx(*sys, opt), modes(*sys, ctx.rows), handler(ctx) {}
  std::shared_ptr<engine::MechanicalSystem> sys;
  SimulationOptions opt;
  EventContext ctx;
  ContactModes modes;
  SwitchHandler handler;
};

// Newton's law on one row: u⁺ = −e u⁻ with the impulse P = m (1 + e) |u⁻|; the ball leaves
// (u⁺ > τ₁): its contact stays open. The kinetic energy falls by the factor e².
TEST(SwitchHandlerTest, ImpactFollowsNewtonsLawAndTheBallLeaves) {
  const double m = 2.0, r = 0.1, e = 0.5, u = -3.0;
  Handler h(VerticalBall(m, r, e));
  VectorXd q = VectorXd::Constant(1, r), v = VectorXd::Constant(1, u);
  std::vector<Event> events;
  FiredWitnesses fired;
  fired.impacting = {0};
  h.handler.Handle(0.0, q, v, h.modes, fired, &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::kImpact);
  EXPECT_EQ(events[0].rows, std::vector<int>{0});
  // LCP solved by pivoting: exact to round-off (a few ulps of the O(1) numbers).
  EXPECT_NEAR(events[0].impulses[0], m * (1 + e) * -u, 1e-12);
  EXPECT_NEAR(v[0], -e * u, 1e-12);
  const double potential = m * kG * r;
  EXPECT_NEAR(events[0].energy_after - potential, e * e * (events[0].energy_before - potential),
              1e-12);
  EXPECT_EQ(h.modes.mode(0), ContactMode::kOpen);
}

// A plastic impact (e = 0) under gravity: u⁺ = 0 and the acceleration problem keeps the contact
// closed with λ = m g; a contact_closed event follows the impact, and the row becomes active.
TEST(SwitchHandlerTest, PlasticImpactUnderGravityClosesTheContact) {
  const double m = 1.0, r = 0.1;
  Handler h(VerticalBall(m, r, 0.0));
  VectorXd q = VectorXd::Constant(1, r), v = VectorXd::Constant(1, -1.0);
  std::vector<Event> events;
  FiredWitnesses fired;
  fired.impacting = {0};
  h.handler.Handle(0.0, q, v, h.modes, fired, &events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::kImpact);
  EXPECT_EQ(events[1].kind, EventKind::kContactClosed);
  EXPECT_NEAR(v[0], 0.0, 1e-15);
  EXPECT_EQ(h.modes.mode(0), ContactMode::kClosed);
  EXPECT_EQ(h.modes.active(), std::vector<int>{0});
}

// A closed contact pulled away (upward force 2 m g: g̈ = g > 0 with λ = 0) takes off, and one
// whose take-off witness fired opens whatever the acceleration problem says.
TEST(SwitchHandlerTest, ContactsTakeOffWhenPulledOrWhenTheirWitnessFired) {
  const double m = 1.0, r = 0.1;
  {
    Handler h(VerticalBall(m, r, 0.0, [&](double) { return 2 * m * kG; }));
    h.modes.SetClosed({0});
    VectorXd q = VectorXd::Constant(1, r), v = VectorXd::Zero(1);
    std::vector<Event> events;
    h.handler.Handle(0.0, q, v, h.modes, {}, &events);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, EventKind::kTakeoff);
    EXPECT_EQ(h.modes.mode(0), ContactMode::kOpen);
  }
  {
    Handler h(VerticalBall(m, r, 0.0));  // pressed by gravity, but the witness fired
    h.modes.SetClosed({0});
    VectorXd q = VectorXd::Constant(1, r), v = VectorXd::Zero(1);
    std::vector<Event> events;
    FiredWitnesses fired;
    fired.forced_open = {0};
    h.handler.Handle(0.0, q, v, h.modes, fired, &events);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, EventKind::kTakeoff);
  }
}

// A weightless block 2a × 2b sliding at 1 m/s along the floor on its two lower corners (point–line
// contacts with friction μ, or frictionless), both closed with λ_N = 0: the index-1 forces of both
// fall through zero together, as those of the clearance slider-crank's upper corners do
// (examples/friction/slider_crank_clearance.yaml, t = 8.134 ms). The left corner's take-off
// function fired, the right one is unloaded (λ_N ≤ τ₃). Forcing the left open and deciding the
// right alone kept it closed (λ = 0, g̈ = 0: resting), and the left came back at once; the two
// alternated 24 times within 6e-14 s. Decided together, both open at one switch (one take-off
// event naming both), and neither's free acceleration points into the floor (g̈ = 0 exactly: no
// force acts).
TEST(SwitchHandlerTest, ContactsUnloadedWithAFiredTakeoffOpenTogether) {
  const double a = 0.2, b = 0.1, m = 2.0;
  for (const double mu : {0.0, 0.3}) {
    engine::PlanarModelBuilder builder;
    engine::PlanarBody body;
    body.name = "block";
    body.mass = m;
    body.inertia = m * (4 * a * a + 4 * b * b) / 12.0;
    body.q0 = Eigen::Vector3d(0, b, 0);
    body.v0 = Eigen::Vector3d(1, 0, 0);
    builder.AddBody(body);
    builder.SetGravity(Eigen::Vector2d::Zero());
    auto model = builder.Build();
    auto sys = std::make_shared<engine::PlanarMultibodySystem>(model);
    std::vector<contact::PlanarContact> contacts;
    for (const int s : {-1, 1}) {
      contact::PlanarContact c;
      c.name = s < 0 ? "left" : "right";
      c.type = contact::PlanarContactType::kPointLine;
      c.body_a = engine::kGround;
      c.body_b = 0;
      c.point_b = Eigen::Vector2d(s * a, -b);
      c.friction = mu;
      contacts.push_back(c);
    }
    sys->AddConstraintBlock(std::make_shared<contact::PlanarContacts>(model, contacts));
    Handler h(sys);
    VectorXd q = model->InitialPositions(), v = model->InitialVelocities();
    std::vector<Event> events;
    // Touching with u = 0 and no force: both close (sliding when μ > 0).
    h.handler.Handle(0.0, q, v, h.modes, {}, &events);
    const int left = h.ctx.rows.unilateral[0], right = h.ctx.rows.unilateral[1];
    ASSERT_EQ(h.modes.closed(), (std::vector<int>{left, right})) << "mu " << mu;
    EXPECT_EQ(h.modes.mode(left), mu > 0 ? ContactMode::kSlip : ContactMode::kClosed);
    events.clear();
    FiredWitnesses fired;
    fired.forced_open = {left};
    fired.unloaded = {right};
    h.handler.Handle(1e-3, q, v, h.modes, fired, &events);
    ASSERT_EQ(events.size(), 1u) << "mu " << mu;
    EXPECT_EQ(events[0].kind, EventKind::kTakeoff);
    EXPECT_EQ(events[0].rows, (std::vector<int>{left, right}));
    EXPECT_TRUE(h.modes.closed().empty()) << "mu " << mu;
    // The sliding velocity is untouched (no impulse, no projection of open rows): exact.
    EXPECT_EQ(v[0], 1.0);
  }
}

// Two corners of a block (x, y, θ) resting on a floor without load, in coordinates that also hold a
// belt coordinate s: the rows are those of the same coordinates, but the right one carries a
// round-off entry −7.5e-37 in the s column where the left one has an exact 0 (the size HEM5's
// drift off the belt's guide gives in the friction oscillator's tangential rows; planar
// point-line normal rows do not produce such entries, rows of user-written embeddings can). The
// left corner's take-off fired and the right one is unloaded: one take-off group, both open at
// one switch (one event naming both). Compared by exact nonzero pattern they were not grouped,
// the right corner was decided alone and stayed closed at λ = 0.
constexpr double kArm = 0.1, kRoundOff = -7.5e-37;
TEST(SwitchHandlerTest, TakeoffGroupIgnoresRoundOffEntriesOfTheRows) {
  engine::LagrangianCallbacks cb;
  cb.n = 4;
  cb.mass = [](const VectorXd&, Eigen::MatrixXd* M) { *M = Eigen::MatrixXd::Identity(4, 4); };
  cb.forces = [](double, const VectorXd&, const VectorXd&, VectorXd* F) { *F = VectorXd::Zero(4); };
  cb.potential = [](double, const VectorXd&) { return 0.0; };
  cb.coordinate_names = {"block.x", "block.y", "block.theta", "belt.s"};
  auto sys = std::make_shared<engine::LagrangianSystem>(cb);
  engine::ConstraintCallbacks cc;
  cc.rows = {{engine::ConstraintKind::kUnilateral, "left", 0.0},
             {engine::ConstraintKind::kUnilateral, "right", 0.0}};
  cc.values = [](double, const VectorXd& q, VectorXd* g) {
    *g = Eigen::Vector2d(q[1] - kArm * q[2], q[1] + kArm * q[2] + kRoundOff * q[3]);
  };
  cc.jacobian = [](double, const VectorXd&, Eigen::MatrixXd* G) {
    G->setZero(2, 4);
    G->row(0) << 0, 1, -kArm, 0;
    G->row(1) << 0, 1, kArm, kRoundOff;
  };
  sys->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 4));
  Handler h(sys);
  const int left = h.ctx.rows.unilateral[0], right = h.ctx.rows.unilateral[1];
  VectorXd q = VectorXd::Zero(4), v = VectorXd::Zero(4);
  h.modes.SetStates({{left}, {right}});
  std::vector<Event> events;
  FiredWitnesses fired;
  fired.forced_open = {left};
  fired.unloaded = {right};
  h.handler.Handle(1e-3, q, v, h.modes, fired, &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::kTakeoff);
  EXPECT_EQ(events[0].rows, (std::vector<int>{left, right}));
  EXPECT_TRUE(h.modes.closed().empty());
}

// A resting contact found 0.5 τ₀ inside the floor is projected onto g = 0 (to the projection
// tolerance, 1e-12), and the smallest gap after projection is recorded with the snapshot.
TEST(SwitchHandlerTest, ClosingContactIsProjectedOntoTheSurface) {
  const double m = 1.0, r = 0.1;
  Handler h(VerticalBall(m, r, 0.0));
  const double tau0 = h.opt.thresholds.tau0;
  VectorXd q = VectorXd::Constant(1, r - 0.5 * tau0), v = VectorXd::Zero(1);
  std::vector<Event> events;
  h.handler.Handle(0.0, q, v, h.modes, {}, &events);
  EXPECT_EQ(h.modes.mode(0), ContactMode::kClosed);
  EXPECT_NEAR(q[0], r, h.opt.projection.tolerance);
  EXPECT_GE(h.ctx.stats.min_gap_after_projection, -h.opt.projection.tolerance);
  EXPECT_EQ(h.handler.snapshot().rows, std::vector<int>{0});
}

}  // namespace
}  // namespace saltus::events
