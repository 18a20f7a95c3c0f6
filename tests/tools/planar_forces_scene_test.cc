// Planar `forces:` of scene files (tools/scene.cc ParseForce, docs/scene-format.md): the
// torsional_spring and the load `scale` are parsed into the engine structs, bad input is a
// SceneError at the item's line (exit 2 from `saltus run`, nothing written), and runs through
// `saltus run` follow the closed forms of a damped torsional oscillator and of a free body under
// a sine-scaled force; the example examples/planar/sprung_pendulum.yaml gives hinge reactions
// that satisfy Newton's law at every output row.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/numeric_csv.h"
#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

// Line numbers below refer to this text (1-based).
const std::string kBase =
    "scene: forces\n"                                                                     // 1
    "gravity: [0, 0]\n"                                                                   // 2
    "bodies:\n"                                                                           // 3
    "  - {name: disk, mass: 2, inertia: 0.5, position: [0, 0, 0.3]}\n"                    // 4
    "  - {name: puck, mass: 4, inertia: 0.1, position: [2, 0, 0]}\n"                      // 5
    "joints:\n"                                                                           // 6
    "  - {name: axle, type: revolute, body_a: ground, body_b: disk}\n"                    // 7
    "  - {name: rail, type: prismatic, body_a: ground, body_b: puck, point_a: [2, 0]}\n"  // 8
    "forces:\n"                                                                           // 9
    "  - name: coil\n"                                                                    // 10
    "    type: torsional_spring\n"                                                        // 11
    "    joint: axle\n"                                                                   // 12
    "    stiffness: 8\n"                                                                  // 13
    "    damping: 0.4\n"                                                                  // 14
    "    angle0: 0.1\n"                                                                   // 15
    "  - name: push\n"                                                                    // 16
    "    type: load\n"                                                                    // 17
    "    body: puck\n"                                                                    // 18
    "    force: [3, 0]\n"                                                                 // 19
    "    scale: {profile: sine, value0: 0.5, amplitude: 2, frequency: 3}\n"               // 20
    "simulation:\n"                                                                       // 21
    "  t_end: 2\n"                                                                        // 22
    "  rtol: 1.0e-10\n"                                                                   // 23
    "  atol: 1.0e-12\n"                                                                   // 24
    "  output_step: 0.5\n";                                                               // 25

std::string Edit(const std::string& from, const std::string& to) {
  const std::size_t at = kBase.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the scene";
  if (at == std::string::npos) return kBase;
  return kBase.substr(0, at) + to + kBase.substr(at + from.size());
}

// Parses and builds `yaml` expecting a SceneError at `line` whose message has every needle.
void ExpectError(const std::string& yaml, int line, const std::vector<std::string>& needles) {
  try {
    BuildSystem(ParseScene(yaml, "test.yaml"));
    ADD_FAILURE() << "no SceneError for:\n" << yaml;
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("test.yaml:" + std::to_string(line) + ": ", 0), 0u) << what;
    for (const std::string& n : needles) {
      EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' missing from: " << what;
    }
  }
}

TEST(PlanarForcesSceneTest, TorsionalSpringAndScaledLoadAreParsed) {
  const Scene scene = ParseScene(kBase, "test.yaml");
  ASSERT_EQ(scene.torsional_springs.size(), 1u);
  const engine::PlanarTorsionalSpring& s = scene.torsional_springs[0];
  EXPECT_EQ(s.name, "coil");
  EXPECT_EQ(s.joint, 0);
  EXPECT_DOUBLE_EQ(s.stiffness, 8.0);  // parsed decimal literals, exact
  EXPECT_DOUBLE_EQ(s.damping, 0.4);
  EXPECT_DOUBLE_EQ(s.angle0, 0.1);
  EXPECT_EQ(scene.lines.torsional_springs, std::vector<int>{10});
  ASSERT_EQ(scene.loads.size(), 1u);
  ASSERT_TRUE(scene.loads[0].scale.has_value());
  const engine::TimeProfile& p = *scene.loads[0].scale;
  EXPECT_EQ(p.kind, engine::TimeProfile::Kind::kSine);
  EXPECT_DOUBLE_EQ(p.value0, 0.5);
  EXPECT_DOUBLE_EQ(p.amplitude, 2.0);
  EXPECT_DOUBLE_EQ(p.frequency, 3.0);
  // Without `scale` the load is constant; the defaults of the spring are c = 0, θ₀ = 0.
  const Scene plain = ParseScene(Edit("    damping: 0.4\n    angle0: 0.1\n", ""), "test.yaml");
  EXPECT_DOUBLE_EQ(plain.torsional_springs[0].damping, 0.0);
  EXPECT_DOUBLE_EQ(plain.torsional_springs[0].angle0, 0.0);
  const Scene constant =
      ParseScene(Edit("    scale: {profile: sine, value0: 0.5, amplitude: 2, frequency: 3}\n", ""),
                 "test.yaml");
  EXPECT_FALSE(constant.loads[0].scale.has_value());
  // The model built from the scene has them.
  const auto system = BuildSystem(scene);
  ASSERT_EQ(system->model().torsional_springs().size(), 1u);
  EXPECT_TRUE(system->model().loads()[0].scale.has_value());
}

TEST(PlanarForcesSceneTest, BadTorsionalSpringsAndScalesNameTheItemAndLine) {
  ExpectError(Edit("    joint: axle\n", "    joint: rail\n"), 12,
              {"force 'coil'", "needs a revolute joint", "'rail' is not one"});
  ExpectError(Edit("    joint: axle\n", "    joint: axel\n"), 12,
              {"force 'coil'", "'axel' is not a joint", "did you mean 'axle'"});
  ExpectError(Edit("    stiffness: 8\n", "    stiffness: -8\n"), 13,
              {"force 'coil'", "stiffness must be >= 0"});
  ExpectError(Edit("    stiffness: 8\n", ""), 10,
              {"force 'coil'", "missing required key 'stiffness'"});
  ExpectError(Edit("    angle0: 0.1\n", "    angle0: 0.1\n    body: disk\n"), 16,
              {"force 'coil'", "key 'body' does not apply to a torsional_spring force"});
  ExpectError(Edit("    joint: axle\n", ""), 10, {"force 'coil'", "missing required key 'joint'"});
  ExpectError(Edit("profile: sine", "profile: sinus"), 20,
              {"force 'push': scale", "profile 'sinus' is unknown"});
  ExpectError(Edit("frequency: 3}", "frequency: 3, rate: 1}"), 20,
              {"force 'push': scale", "key 'rate' does not apply"});
  ExpectError(Edit("    scale: {profile: sine, value0: 0.5, amplitude: 2, frequency: 3}\n",
                   "    scale: 2\n"),
              20, {"force 'push': scale", "mapping"});
  ExpectError(Edit("    angle0: 0.1\n", "    angle0: 0.1\n    scale: {profile: sine}\n"), 16,
              {"force 'coil'", "key 'scale' does not apply to a torsional_spring force"});
}

class PlanarForcesRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("saltus_planar_forces_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  int Run(const std::string& yaml, std::string* err_text) {
    std::ofstream(dir_ / "scene.yaml") << yaml;
    const std::vector<std::string> args = {"run", (dir_ / "scene.yaml").string(), "--out",
                                           (dir_ / "out").string()};
    std::ostringstream out, err;
    const int code = RunCli(args, out, err);
    *err_text = err.str();
    return code;
  }
  fs::path dir_;
};

TEST_F(PlanarForcesRunTest, BadSceneExitsWithTwoAndWritesNothing) {
  std::string err;
  EXPECT_EQ(Run(Edit("    joint: axle\n", "    joint: rail\n"), &err), kExitBadInput);
  EXPECT_NE(err.find("scene.yaml:12: force 'coil'"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// The disk: J θ̈ = −k (θ − θ₀) − c θ̇ with θ(0) = 0.3, θ̇(0) = 0 (underdamped: ω_n = 4 rad/s,
// ζ = c / (2 √(k J)) = 0.1): θ − θ₀ = A e^{−ζ ω_n t} (cos ω_d t + ζ/√(1 − ζ²) sin ω_d t).
// The puck on its rail: m ẍ = 3 (0.5 + 2 sin 3t), so x − 2 = (3/m)(0.25 t² + (2/3) t −
// (2/9) sin 3t). The prismatic joint keeps it on the x axis.
TEST_F(PlanarForcesRunTest, RunsFollowTheClosedForms) {
  std::string err;
  ASSERT_EQ(Run(kBase, &err), kExitOk) << err;
  const test_support::NumericCsv csv =
      test_support::ReadNumericCsv(dir_ / "out" / "trajectory.csv");
  const std::size_t c_th = csv.Column("disk.theta"), c_x = csv.Column("puck.x");
  const double k = 8, c = 0.4, J = 0.5, m = 4, A = 0.3 - 0.1;
  const double wn = std::sqrt(k / J), zeta = c / (2 * std::sqrt(k * J));
  const double wd = wn * std::sqrt(1 - zeta * zeta);
  double worst_theta = 0, worst_x = 0;
  for (const std::vector<double>& row : csv.rows) {
    const double t = row[0];
    const double theta =
        0.1 + A * std::exp(-zeta * wn * t) *
                  (std::cos(wd * t) + zeta / std::sqrt(1 - zeta * zeta) * std::sin(wd * t));
    const double x = 2 + 3 / m * (0.25 * t * t + 2.0 / 3.0 * t - 2.0 / 9.0 * std::sin(3 * t));
    worst_theta = std::max(worst_theta, std::abs(row[c_th] - theta));
    worst_x = std::max(worst_x, std::abs(row[c_x] - x));
  }
  std::printf("torsional oscillator: |theta error| %.2e rad; sine-scaled load: |x error| %.2e m\n",
              worst_theta, worst_x);
  ASSERT_GE(csv.rows.size(), 5u);
  // DOPRI5 at rtol 1e-10 / atol 1e-12 over 2 s on smooth linear dynamics: global errors of a
  // few 1e-10 (measured below 1e-10); 1e-8 leaves a margin.
  EXPECT_LT(worst_theta, 1e-8);
  EXPECT_LT(worst_x, 1e-8);
}

// examples/planar/sprung_pendulum.yaml with --reactions: at every output row the hinge force on
// the bar is Newton's m a_c − m g_vec − φ(t) f (the load acts on the bar too), with θ, θ̇ from
// trajectory.csv and θ̈ from the pivot equation of the scene's header; the torque about the
// hinge point is zero.
TEST_F(PlanarForcesRunTest, SprungPendulumExampleReactionsMatchNewton) {
  const char* source_dir = std::getenv("SALTUS_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "SALTUS_SOURCE_DIR not set";
  const std::vector<std::string> args = {
      "run", (fs::path(source_dir) / "examples" / "planar" / "sprung_pendulum.yaml").string(),
      "--out", (dir_ / "out").string(), "--reactions"};
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  const test_support::NumericCsv reactions =
      test_support::ReadNumericCsv(dir_ / "out" / "reactions.csv");
  const test_support::NumericCsv trajectory =
      test_support::ReadNumericCsv(dir_ / "out" / "trajectory.csv");
  ASSERT_EQ(reactions.header, (std::vector<std::string>{"t", "hinge.fx", "hinge.fy", "hinge.tz"}));
  ASSERT_EQ(reactions.rows.size(), 61u);  // 0, 0.05, ..., 3
  const std::size_t c_th = trajectory.Column("bar.theta"), c_w = trajectory.Column("bar.vtheta");
  const double m = 2, L = 1.2, g = 9.81, k = 20, c = 0.5, theta0 = -0.5, J_p = m * L * L / 3;
  double worst = 0, largest = 0, theta_min = 0;
  std::size_t row_k = 0;
  for (const std::vector<double>& row : reactions.rows) {
    const double t = row[0];
    while (row_k < trajectory.rows.size() && trajectory.rows[row_k][0] < t) ++row_k;
    ASSERT_LT(row_k, trajectory.rows.size());
    const double th = trajectory.rows[row_k][c_th], w = trajectory.rows[row_k][c_w];
    const double phi = std::sin(6 * t), ex = std::cos(th), ey = std::sin(th);
    const double th_dd =
        (-m * g * 0.5 * L * ex - k * (th - theta0) - c * w + phi * L * 5 * ex) / J_p;
    const double ax = 0.5 * L * (-th_dd * ey - w * w * ex);
    const double ay = 0.5 * L * (th_dd * ex - w * w * ey);
    worst = std::max({worst, std::abs(row[1] - m * ax),
                      std::abs(row[2] - (m * ay + m * g - phi * 5)), std::abs(row[3])});
    largest = std::max(largest, std::hypot(row[1], row[2]));
    theta_min = std::min(theta_min, th);
  }
  std::printf(
      "sprung pendulum example: hinge reaction error %.2e N (largest %.1f N, lowest "
      "angle %.2f rad)\n",
      worst, largest, theta_min);
  // As for the free pendulum of reaction_writer_test: the state is read back exactly and the
  // forces (~30 N) follow by one index-1 solve; 1e-9 is a wide margin over round-off.
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(largest, 10.0);    // the check is not vacuous
  EXPECT_LT(theta_min, -0.3);  // the bar swings down onto its spring
}

}  // namespace
}  // namespace saltus::tools
