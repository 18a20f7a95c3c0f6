// `saltus run --reactions` (tools/reaction_writer.h): the joint forces and torques and the driver
// efforts of reactions.csv against the closed-form dynamics of a driven crank, and the refusal of
// the switch for planar scenes (exit 2, nothing written).
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

TEST_F(ReactionsTest, PlanarSceneIsRefusedAndNothingWritten) {
  const std::string yaml =
      "scene: planar\nbodies:\n  - {name: ball, mass: 1, inertia: 0.1}\n"
      "simulation:\n  t_end: 1\n";
  std::string err;
  EXPECT_EQ(Run(yaml, &err), kExitBadInput);
  EXPECT_NE(err.find("--reactions"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace
}  // namespace saltus::tools
