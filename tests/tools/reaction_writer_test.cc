// `saltus run --reactions` (tools/reaction_writer.h): the joint forces and torques and the driver
// efforts of reactions.csv against the closed-form dynamics of a driven crank (spatial and
// planar) and of a planar pendulum (Newton at each output state).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/numeric_csv.h"
#include "tools/cli.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

using Csv = test_support::NumericCsv;
constexpr auto ReadCsv = test_support::ReadNumericCsv;

class ReactionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("saltus_reactions_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  int Run(const std::string& yaml, std::string* err_text = nullptr) {
    std::ofstream(dir_ / "scene.yaml") << yaml;
    const std::vector<std::string> args = {"run", (dir_ / "scene.yaml").string(), "--out",
                                           (dir_ / "out").string(), "--reactions"};
    std::ostringstream out, err;
    const int code = RunCli(args, out, err);
    if (err_text) *err_text = err.str();
    return code;
  }
  fs::path dir_;
};

// A bar of mass m with its centre of mass at L/2 on its x axis turns about the world z axis on a
// revolute joint with the ground, driven at θ(t) = ω t, gravity −g ŷ. With r_c = (L/2)(cos θ,
// sin θ, 0): the joint force on the bar is m (−ω² r_c + g ŷ) (Newton, a_c = −ω² r_c), the torque
// about the pivot along z is m g (L/2) cos θ (the constant rate needs no inertial torque; z is a
// principal axis, so no gyroscopic torque), carried by the driver: its effort is the same.
TEST_F(ReactionsTest, DrivenCrankMatchesNewtonEuler) {
  const double m = 3.0, L = 0.8, g = 9.81, omega = 2.0;
  const std::string yaml =
      "scene: crank\ndimension: 3\ngravity: [0, -9.81, 0]\n"
      "bodies:\n  - {name: bar, mass: 3, inertia: [0.01, 0.16, 0.16], com: [0.4, 0, 0]}\n"
      "joints:\n  - {name: hinge, type: revolute, body_a: ground, body_b: bar, "
      "ref_a: [1, 0, 0], ref_b: [1, 0, 0]}\n"
      "drivers:\n  - {name: motor, joint: hinge, kind: angle, profile: constant_rate, rate: 2}\n"
      "simulation:\n  t_end: 2\n  rtol: 1.0e-9\n  atol: 1.0e-11\n  output_step: 0.05\n";
  ASSERT_EQ(Run(yaml), kExitOk);
  const Csv csv = ReadCsv(dir_ / "out" / "reactions.csv");
  ASSERT_EQ(csv.header,
            (std::vector<std::string>{"t", "hinge.fx", "hinge.fy", "hinge.fz", "hinge.tx",
                                      "hinge.ty", "hinge.tz", "motor.effort"}));
  // One row per output time, as trajectory.csv (0, 0.05, ..., 2).
  ASSERT_EQ(csv.rows.size(), 41u);
  double worst_force = 0, worst_torque = 0, worst_effort = 0;
  for (const std::vector<double>& row : csv.rows) {
    const double th = omega * row[0];
    const double cx = 0.5 * L * std::cos(th), cy = 0.5 * L * std::sin(th);
    worst_force = std::max({worst_force, std::abs(row[1] - m * (-omega * omega * cx)),
                            std::abs(row[2] - m * (-omega * omega * cy + g)), std::abs(row[3])});
    worst_torque =
        std::max({worst_torque, std::abs(row[4]), std::abs(row[5]), std::abs(row[6] - m * g * cx)});
    worst_effort = std::max(worst_effort, std::abs(row[7] - m * g * cx));
  }
  std::printf("driven crank: reaction errors force %.2e N, torque %.2e N m, effort %.2e N m\n",
              worst_force, worst_torque, worst_effort);
  // The motion is prescribed: the state is the closed form up to the projection tolerance of the
  // event loop (1e-12) and the integration error of a driven (zero-freedom) system; the forces of
  // ~30 N then follow by one index-1 solve to round-off (measured ~2e-13). 1e-10 leaves a margin
  // of 500.
  EXPECT_LT(worst_force, 1e-10);
  EXPECT_LT(worst_torque, 1e-10);
  EXPECT_LT(worst_effort, 1e-10);
}

// The planar crank of the test above: a bar of mass m, length L, centre of mass at its middle,
// hinged at its end to the ground origin and driven at θ = ω t, gravity −g ŷ. The hinge force on
// the bar is m (−ω² r_c) + m g ŷ and the torque about the hinge point m g (L/2) cos θ; driven by
// a driver on the hinge it is in the hinge's .tz and the driver's effort, driven by an
// angle_driver joint it is that joint's .tz (and the hinge carries no torque).
TEST_F(ReactionsTest, PlanarDrivenCrankMatchesNewtonEuler) {
  const double m = 3.0, L = 0.8, g = 9.81, omega = 2.0;
  const std::string head =
      "scene: crank\ngravity: [0, -9.81]\n"
      "bodies:\n  - {name: bar, mass: 3, inertia: 0.16, position: [0.4, 0, 0], "
      "velocity: [0, 0.8, 2]}\n"
      "joints:\n  - {name: hinge, type: revolute, body_a: ground, body_b: bar, point_b: [-0.4, "
      "0]}\n";
  const std::string tail =
      "simulation:\n  t_end: 2\n  rtol: 1.0e-9\n  atol: 1.0e-11\n  output_step: 0.05\n";
  for (const bool driver_section : {true, false}) {
    SCOPED_TRACE(driver_section ? "drivers: section" : "angle_driver joint");
    const std::string yaml =
        head +
        (driver_section
             ? "drivers:\n  - {name: motor, joint: hinge, kind: angle, profile: constant_rate, "
               "rate: 2}\n"
             : "  - {name: motor, type: angle_driver, body_a: ground, body_b: bar, rate: 2}\n") +
        tail;
    std::string err;
    ASSERT_EQ(Run(yaml, &err), kExitOk) << err;
    const Csv csv = ReadCsv(dir_ / "out" / "reactions.csv");
    const std::vector<std::string> expected_header =
        driver_section
            ? std::vector<std::string>{"t", "hinge.fx", "hinge.fy", "hinge.tz", "motor.effort"}
            : std::vector<std::string>{"t",        "hinge.fx", "hinge.fy", "hinge.tz",
                                       "motor.fx", "motor.fy", "motor.tz"};
    ASSERT_EQ(csv.header, expected_header);
    ASSERT_EQ(csv.rows.size(), 41u);  // 0, 0.05, ..., 2 as trajectory.csv
    double worst_force = 0, worst_torque = 0;
    for (const std::vector<double>& row : csv.rows) {
      const double th = omega * row[0];
      const double cx = 0.5 * L * std::cos(th), cy = 0.5 * L * std::sin(th);
      worst_force = std::max({worst_force, std::abs(row[1] - m * (-omega * omega * cx)),
                              std::abs(row[2] - m * (-omega * omega * cy + g))});
      if (driver_section) {
        worst_torque =
            std::max({worst_torque, std::abs(row[3] - m * g * cx), std::abs(row[4] - m * g * cx)});
      } else {
        worst_torque = std::max({worst_torque, std::abs(row[3]), std::abs(row[4]), std::abs(row[5]),
                                 std::abs(row[6] - m * g * cx)});
      }
    }
    std::printf("planar driven crank (%s): errors force %.2e N, torque %.2e N m\n",
                driver_section ? "driver" : "angle_driver joint", worst_force, worst_torque);
    // As for the spatial crank: the motion is prescribed, so the state is the closed form to the
    // projection tolerance and the forces of ~30 N follow by one index-1 solve (measured ~1e-13).
    EXPECT_LT(worst_force, 1e-10);
    EXPECT_LT(worst_torque, 1e-10);
  }
}

// A free pendulum whose hinge names the ground as body_b: reactions.csv gives the force on
// body_a (the bar). At each output row, with θ, θ̇ from trajectory.csv and θ̈ from the pivot
// equation (J + m L²/4) θ̈ = −m g (L/2) cos θ, Newton gives f = m a_c + m g ŷ,
// a_c = (L/2)(θ̈ perp(e) − θ̇² e); the torque about the hinge point is zero.
TEST_F(ReactionsTest, PlanarPendulumWithTheGroundAsBodyBMatchesNewton) {
  const double m = 2.0, L = 1.2, g = 9.81;
  const std::string yaml =
      "scene: pendulum\ngravity: [0, -9.81]\n"
      "bodies:\n  - {name: bar, mass: 2, inertia: 0.24, position: [0.6, 0, 0]}\n"
      "joints:\n  - {name: hinge, type: revolute, body_a: bar, body_b: ground, point_a: [-0.6, "
      "0]}\n"
      "simulation:\n  t_end: 1.5\n  rtol: 1.0e-10\n  atol: 1.0e-12\n  output_step: 0.1\n";
  std::string err;
  ASSERT_EQ(Run(yaml, &err), kExitOk) << err;
  const Csv reactions = ReadCsv(dir_ / "out" / "reactions.csv");
  const Csv trajectory = ReadCsv(dir_ / "out" / "trajectory.csv");
  ASSERT_EQ(reactions.header, (std::vector<std::string>{"t", "hinge.fx", "hinge.fy", "hinge.tz"}));
  const std::size_t c_th = trajectory.Column("bar.theta"), c_w = trajectory.Column("bar.vtheta");
  ASSERT_EQ(reactions.rows.size(), 16u);
  double worst = 0, largest = 0;
  std::size_t k = 0;
  for (const std::vector<double>& row : reactions.rows) {
    while (k < trajectory.rows.size() && trajectory.rows[k][0] < row[0]) ++k;
    ASSERT_LT(k, trajectory.rows.size());
    const double th = trajectory.rows[k][c_th], w = trajectory.rows[k][c_w];
    const double J_pivot = m * L * L / 12.0 + m * L * L / 4.0;
    const double th_dd = -m * g * 0.5 * L * std::cos(th) / J_pivot;
    const double ex = std::cos(th), ey = std::sin(th);
    const double ax = 0.5 * L * (-th_dd * ey - w * w * ex),
                 ay = 0.5 * L * (th_dd * ex - w * w * ey);
    worst = std::max(
        {worst, std::abs(row[1] - m * ax), std::abs(row[2] - (m * ay + m * g)), std::abs(row[3])});
    largest = std::max(largest, std::abs(row[2]));
  }
  std::printf("planar pendulum: reaction error %.2e N (largest force %.1f N)\n", worst, largest);
  // The state is read back exactly (%.17g) and lies on the joint manifold to the projection
  // tolerance (~1e-12 m); the index-1 solve of forces ~40 N adds round-off: 1e-9 is a wide margin.
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(largest, 19.0);  // at the bottom of the swing the force exceeds m g
}

}  // namespace
}  // namespace saltus::tools
