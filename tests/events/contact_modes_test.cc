// Contact modes and the index sets derived from them (events/contact_modes.h).
#include "events/contact_modes.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/lagrangian_system.h"

namespace saltus::events {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using engine::ConstraintKind;
using engine::ConstraintLevel;
using engine::ConstraintRowInfo;

// Rows: 0 joint (bilateral), 1 contact a (unilateral, μ = 0.5), 2 contact b (unilateral,
// frictionless), 3 joint, 4 tangential row of contact a. Values are irrelevant here.
std::shared_ptr<engine::MechanicalSystem> RowsSystem() {
  engine::LagrangianCallbacks cb;
  cb.n = 2;
  cb.mass = [](const VectorXd&, MatrixXd* M) { *M = MatrixXd::Identity(2, 2); };
  cb.forces = [](double, const VectorXd&, const VectorXd&, VectorXd* F) { *F = VectorXd::Zero(2); };
  auto sys = std::make_shared<engine::LagrangianSystem>(cb);
  engine::ConstraintCallbacks cc;
  ConstraintRowInfo joint{ConstraintKind::kBilateral, "joint.x"};
  ConstraintRowInfo a{ConstraintKind::kUnilateral, "a"};
  a.friction = 0.5;
  ConstraintRowInfo b{ConstraintKind::kUnilateral, "b"};
  ConstraintRowInfo joint2{ConstraintKind::kBilateral, "joint.y"};
  ConstraintRowInfo at{ConstraintKind::kTangential, "a.t"};
  at.level = ConstraintLevel::kVelocity;
  at.normal_row = 1;
  cc.rows = {joint, a, b, joint2, at};
  cc.values = [](double, const VectorXd&, VectorXd* g) { *g = VectorXd::Zero(5); };
  cc.jacobian = [](double, const VectorXd&, MatrixXd* G) { *G = MatrixXd::Zero(5, 2); };
  sys->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 2));
  return sys;
}

TEST(ContactModesTest, EveryContactStartsOpenAndOnlyJointsAreActive) {
  auto sys = RowsSystem();
  const RowSets rows(*sys, 0.0);
  const ContactModes modes(*sys, rows);
  EXPECT_EQ(modes.mode(1), ContactMode::kOpen);
  EXPECT_EQ(modes.mode(2), ContactMode::kOpen);
  EXPECT_TRUE(modes.closed().empty());
  EXPECT_EQ(modes.active(), (std::vector<int>{0, 3}));
}

TEST(ContactModesTest, ClosedContactsJoinI2AndTheActiveRows) {
  auto sys = RowsSystem();
  const RowSets rows(*sys, 0.0);
  ContactModes modes(*sys, rows);
  modes.SetClosed({1, 2});
  EXPECT_EQ(modes.mode(1), ContactMode::kClosed);
  EXPECT_EQ(modes.closed(), (std::vector<int>{1, 2}));
  // A frictionless closed contact adds its normal row only (no tangential row: it slides freely).
  EXPECT_EQ(modes.active(), (std::vector<int>{0, 1, 2, 3}));
  modes.SetClosed({2});
  EXPECT_EQ(modes.mode(1), ContactMode::kOpen);
  EXPECT_EQ(modes.closed(), (std::vector<int>{2}));
  EXPECT_EQ(modes.active(), (std::vector<int>{0, 2, 3}));
  modes.SetClosed({});
  EXPECT_EQ(modes.active(), (std::vector<int>{0, 3}));
}

// Frictional states: a sticking contact adds its tangential row to the active rows, a sliding
// one does not (its friction acts through the force direction of its normal row).
TEST(ContactModesTest, StickingContactsActivateTheirTangentialRows) {
  auto sys = RowsSystem();
  const RowSets rows(*sys, 0.0);
  ContactModes modes(*sys, rows);
  modes.SetStates({{2, ContactMode::kClosed}, {1, ContactMode::kStick}});
  EXPECT_EQ(modes.closed(), (std::vector<int>{1, 2}));
  EXPECT_EQ(modes.sticking(), std::vector<int>{1});
  EXPECT_EQ(modes.active(), (std::vector<int>{0, 1, 2, 3, 4}));
  modes.SetStates({{1, ContactMode::kSlip, Eigen::Vector2d(-1, 0)}});
  EXPECT_EQ(modes.sliding(), std::vector<int>{1});
  EXPECT_EQ(modes.active(), (std::vector<int>{0, 1, 3}));
  const auto sliding = modes.SlidingContacts();
  ASSERT_EQ(sliding.size(), 1u);
  EXPECT_EQ(sliding[0].normal_row, 1);
  EXPECT_EQ(sliding[0].mu, 0.5);
  EXPECT_EQ(sliding[0].mode, engine::SlipDirection::kFixed);  // one tangential row: the plane
  EXPECT_EQ(sliding[0].direction, VectorXd::Constant(1, -1.0));
}

TEST(ContactModesTest, ModeNames) {
  const Eigen::Vector2d none = Eigen::Vector2d::Zero();
  EXPECT_EQ(ContactModeName(ContactMode::kOpen, none, 1), "open");
  EXPECT_EQ(ContactModeName(ContactMode::kClosed, none, 0), "closed");
  EXPECT_EQ(ContactModeName(ContactMode::kStick, none, 1), "stick");
  EXPECT_EQ(ContactModeName(ContactMode::kSlip, Eigen::Vector2d(1, 0), 1), "slip+");
  EXPECT_EQ(ContactModeName(ContactMode::kSlip, Eigen::Vector2d(-1, 0), 1), "slip-");
  EXPECT_EQ(ContactModeName(ContactMode::kSlip, Eigen::Vector2d(0.6, 0.8), 2), "slip");
}

}  // namespace
}  // namespace saltus::events
