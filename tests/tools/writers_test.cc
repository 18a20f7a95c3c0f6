// trajectory.csv and events.csv writers, on a small user-defined system (2 coordinates, one
// unilateral row).
#include "tools/writers.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "engine/lagrangian_system.h"

namespace saltus::tools {
namespace {

std::shared_ptr<engine::LagrangianSystem> TwoCoordinateSystem() {
  engine::LagrangianCallbacks callbacks;
  callbacks.n = 2;
  callbacks.coordinate_names = {"x", "y"};
  auto system = std::make_shared<engine::LagrangianSystem>(callbacks);
  engine::ConstraintCallbacks stop;
  stop.rows = {{engine::ConstraintKind::kUnilateral, "stop_a", -1.0},
               {engine::ConstraintKind::kUnilateral, "stop_b", -1.0}};
  stop.values = [](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) { *g = q; };
  stop.jacobian = [](double, const Eigen::VectorXd&, Eigen::MatrixXd* G) {
    *G = Eigen::MatrixXd::Identity(2, 2);
  };
  system->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(stop, 2));
  return system;
}

std::string HeaderOf(const std::string& csv) { return csv.substr(0, csv.find('\n')); }

TEST(WritersTest, TrajectoryHeaderNamesEveryCoordinate) {
  const auto system = TwoCoordinateSystem();
  std::ostringstream out;
  TrajectoryWriter writer(*system, out);
  EXPECT_EQ(out.str(), "t," + system->PositionName(0) + "," + system->PositionName(1) + "," +
                           system->VelocityName(0) + "," + system->VelocityName(1) + "\n");
}

TEST(WritersTest, OutputRowsAndTwoRowsPerEvent) {
  const auto system = TwoCoordinateSystem();
  std::ostringstream out;
  TrajectoryWriter writer(*system, out);
  const Eigen::Vector2d q(0.1, 2.0), v_minus(-1.0, 0.0), v_plus(0.5, 0.0);
  writer.OnOutput(0.0, q, v_minus);
  writer.OnOutput(0.0, q, v_minus);  // the same output again: skipped
  events::Event e;
  e.t = 0.25;
  e.kind = events::EventKind::kImpact;
  writer.OnEvent(e, q, v_minus, v_plus);
  writer.OnOutput(0.25, q, v_plus);  // after an event, an output at t* is a new row
  EXPECT_EQ(writer.rows(), 4);
  const std::string csv = out.str();
  const std::string body = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(body,
            "0,0.10000000000000001,2,-1,0\n"
            "0.25,0.10000000000000001,2,-1,0\n"
            "0.25,0.10000000000000001,2,0.5,0\n"
            "0.25,0.10000000000000001,2,0.5,0\n");
}

TEST(WritersTest, RowsAtStepsWhenAsked) {
  const auto system = TwoCoordinateSystem();
  const Eigen::Vector2d q(1.0, 2.0), v(3.0, 4.0);
  std::ostringstream grid_only, every_step;
  TrajectoryWriter without(*system, grid_only);
  TrajectoryWriter with(*system, every_step, /*rows_at_steps=*/true);
  for (TrajectoryWriter* w : {&without, &with}) {
    w->OnStep(0.5, q, v);
    w->OnOutput(0.5, q, v);  // the same instant as the step row: one row only
  }
  EXPECT_EQ(without.rows(), 1);
  EXPECT_EQ(with.rows(), 1);
  with.OnStep(0.75, q, v);
  EXPECT_EQ(with.rows(), 2);
}

TEST(WritersTest, EventLogJoinsRowNamesAndImpulses) {
  const auto system = TwoCoordinateSystem();
  std::ostringstream out;
  EventLogWriter writer(*system, out);
  EXPECT_EQ(HeaderOf(out.str()),
            "t,kind,contacts,impulse,energy_before,energy_after,tangential_impulse,modes,"
            "energy_gain,indeterminate");
  events::Event e;
  e.t = 1.5;
  e.kind = events::EventKind::kImpact;
  e.rows = {0, 1};
  e.impulses = {0.25, 3.0};
  e.energy_before = 2.0;
  e.energy_after = 1.5;
  e.tangential_impulses = {Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero()};
  e.modes = {events::ContactMode::kOpen, events::ContactMode::kClosed};
  e.slip_directions = e.tangential_impulses;
  e.indeterminate = true;  // the last column
  const Eigen::Vector2d zero = Eigen::Vector2d::Zero();
  writer.OnEvent(e, zero, zero, zero);
  e.kind = events::EventKind::kTakeoff;
  e.indeterminate = false;
  e.rows = {1};
  e.impulses = {0.0};
  e.tangential_impulses = {Eigen::Vector2d::Zero()};
  e.modes = {events::ContactMode::kOpen};
  e.slip_directions = e.tangential_impulses;
  writer.OnEvent(e, zero, zero, zero);
  EXPECT_EQ(writer.events(), 2);
  const std::string csv = out.str();
  EXPECT_EQ(csv.substr(csv.find('\n') + 1),
            "1.5,impact,stop_a;stop_b,0.25;3,2,1.5,0;0,open;closed,0,1\n"
            "1.5,takeoff,stop_b,0,2,1.5,0,open,0,0\n");
  EXPECT_EQ(RowNames(*system, {1, 0}), "stop_b;stop_a");
}

}  // namespace
}  // namespace saltus::tools
