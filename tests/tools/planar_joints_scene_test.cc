// Planar scenes with the distance, fixed and point_on_line joints and a `drivers:` section
// (docs/scene-format.md): parsing into the model, a run through the event loop, and every
// bad-input case as a SceneError naming the item at its file line (exit code 2 from the CLI).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "events/simulation.h"
#include "tests/tools/scene_error_support.h"
#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

// A crank (pivot at the ground origin, at α = π/2) with a massless rod to a slider on the x axis
// driven by s(t) = 0.3 + 0.05 sin(2π t); an arm welded on the slider and a pin riding in a slot
// along the arm. Consistent at t = 0 (the rod length is taken from these positions).
const std::string kScene = R"(scene: planar_joints
gravity: [0, -9.81]
bodies:
  - name: crank
    mass: 0.5
    inertia: 0.002
    position: [0, 0.05, 1.5707963267948966]
  - name: slider
    mass: 2
    inertia: 0.01
    position: [0.3, 0, 0]
  - name: arm
    mass: 1
    inertia: 0.01
    position: [0.3, 0.2, 0]
  - name: pin
    mass: 0.1
    inertia: 0.001
    position: [0.5, 0.2, 0]
joints:
  - name: pivot
    type: revolute
    body_a: ground
    body_b: crank
    point_b: [-0.05, 0]
  - name: rod
    type: distance
    body_a: crank
    body_b: slider
    point_a: [0.05, 0]
  - name: guide
    type: prismatic
    body_a: ground
    body_b: slider
    axis_a: [1, 0]
  - name: weld
    type: fixed
    body_a: slider
    body_b: arm
    point_a: [0, 0.2]
  - name: slot
    type: point_on_line
    body_a: arm
    body_b: pin
    axis_a: [2, 0]
  - name: spin
    type: angle_driver
    body_a: ground
    body_b: pin
    rate: 0.5
drivers:
  - name: push
    joint: guide
    kind: displacement
    profile: sine
    value0: 0.3
    amplitude: 0.05
    frequency: 6.283185307179586
simulation:
  t_end: 1
  rtol: 1.0e-9
  atol: 1.0e-11
)";

// kScene with the first occurrence of `from` replaced by `to` (which must exist).
std::string Edit(const std::string& from, const std::string& to) {
  const std::size_t at = kScene.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the scene";
  if (at == std::string::npos) return kScene;
  return kScene.substr(0, at) + to + kScene.substr(at + from.size());
}

using test_support::ExpectSceneErrorAt;
using test_support::LineOf;

TEST(PlanarJointsScene, NewJointsAndDriversMapToTheModel) {
  const Scene scene = ParseScene(kScene, "test.yaml");
  using T = engine::PlanarJointType;
  ASSERT_EQ(scene.joints.size(), 6u);
  EXPECT_EQ(scene.joints[1].type, T::kDistance);
  EXPECT_EQ(scene.joints[3].type, T::kFixed);
  EXPECT_EQ(scene.joints[4].type, T::kPointOnLine);
  // The rod length from the initial configuration: crank pin at (0, 0.1), slider at (0.3, 0).
  EXPECT_NEAR(scene.joints[1].length, std::sqrt(0.1), 1e-15);
  ASSERT_EQ(scene.drivers.size(), 1u);
  const engine::PlanarDriver& push = scene.drivers[0];
  EXPECT_EQ(push.name, "push");
  EXPECT_EQ(push.joint, 2);
  EXPECT_EQ(push.kind, engine::DriverKind::kDisplacement);
  EXPECT_EQ(push.profile.kind, engine::TimeProfile::Kind::kSine);
  EXPECT_NEAR(push.profile.frequency, 2.0 * std::numbers::pi, 1e-15);
  EXPECT_EQ(scene.lines.drivers.at(0), LineOf(kScene, "  - name: push"));

  const auto system = BuildSystem(scene);
  const std::vector<std::string> expected = {
      "pivot.x", "pivot.y",    "rod.distance", "guide.angle", "guide.normal", "weld.x",
      "weld.y",  "weld.angle", "slot.normal",  "spin.angle",  "push"};
  ASSERT_EQ(system->num_constraints(), static_cast<int>(expected.size()));
  for (int r = 0; r < system->num_constraints(); ++r) {
    EXPECT_EQ(system->constraint_info(r).name, expected[static_cast<std::size_t>(r)]);
  }
  EXPECT_NEAR(system->model().joints()[4].axis_a.norm(), 1.0, 1e-15);
  EXPECT_EQ(system->model().DriverRow(0), 10);
  EXPECT_EQ(system->model().JointRows(3).first, 5);
  EXPECT_EQ(system->model().JointRows(3).count, 3);
}

TEST(PlanarJointsScene, SceneRunsAndFollowsItsDriver) {
  const Scene scene = ParseScene(kScene, "test.yaml");
  const auto system = BuildSystem(scene);
  events::Simulation sim(system, scene.options);
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  ASSERT_EQ(sim.AdvanceTo(scene.t_end).status, events::RunStatus::kFinished);
  const double t = sim.t();
  const Eigen::VectorXd& q = sim.q();
  // Every row is kept to the projection's round-off; at rtol 1e-9 the slider follows s(t), the
  // arm stays welded (θ = 0, 0.2 above the slider) and the pin turns at 0.5 rad/s, to ≲ 1e-8.
  constexpr double kTol = 1e-8;
  EXPECT_NEAR(q(3), 0.3 + 0.05 * std::sin(2.0 * std::numbers::pi * t), kTol);
  EXPECT_NEAR(q(4), 0.0, kTol);
  EXPECT_NEAR(q(6), q(3), kTol);
  EXPECT_NEAR(q(7), 0.2, kTol);
  EXPECT_NEAR(q(8), 0.0, kTol);
  EXPECT_NEAR(q(10), 0.2, kTol);  // the pin stays on the arm's line y = 0.2
  EXPECT_NEAR(q(11), 0.5 * t, kTol);
  EXPECT_NEAR(q(9), 0.5, kTol);  // nothing pushes the pin along the horizontal slot
  // The crank closes the loop: |crank pin − slider| = √0.1 with the pin 0.1 from the origin.
  const Eigen::Vector2d crank_pin = 0.1 * Eigen::Vector2d(std::cos(q(2)), std::sin(q(2)));
  EXPECT_NEAR((Eigen::Vector2d(q(3), 0.0) - crank_pin).norm(), std::sqrt(0.1), kTol);
  EXPECT_NEAR((q.head<2>() - 0.5 * crank_pin).norm(), 0.0, kTol);
}

TEST(PlanarJointsScene, DriversOnJointsThatCannotTakeThemAreErrorsAtTheJointKey) {
  const std::string angle = Edit("    kind: displacement\n", "    kind: angle\n");
  ExpectSceneErrorAt(
      angle, "    joint: guide",
      {"driver 'push'", "an angle driver needs a revolute joint; 'guide' is not one"});
  for (const char* joint : {"pivot", "rod", "weld", "slot", "spin"}) {
    const std::string yaml = Edit("    joint: guide\n", std::string("    joint: ") + joint + "\n");
    ExpectSceneErrorAt(yaml, std::string("    joint: ") + joint,
                       {"driver 'push'", "a displacement driver needs a prismatic joint; '" +
                                             std::string(joint) + "' is not one"});
  }
  for (const char* joint : {"rod", "weld", "slot", "spin"}) {
    std::string yaml = Edit("    kind: displacement\n", "    kind: angle\n");
    yaml.replace(yaml.find("    joint: guide\n"), 17, std::string("    joint: ") + joint + "\n");
    ExpectSceneErrorAt(yaml, std::string("    joint: ") + joint,
                       {"driver 'push'", "an angle driver needs a revolute joint; '" +
                                             std::string(joint) + "' is not one"});
  }
}

TEST(PlanarJointsScene, BadDriversAreErrorsNamingTheDriver) {
  ExpectSceneErrorAt(Edit("    joint: guide\n", "    joint: guid\n"), "    joint: guid",
                     {"driver 'push'", "joint 'guid' is not a joint", "did you mean 'guide'"});
  ExpectSceneErrorAt(Edit("    kind: displacement\n", "    kind: displace\n"), "    kind: displace",
                     {"driver 'push'", "kind 'displace' is unknown"});
  ExpectSceneErrorAt(Edit("    profile: sine\n", "    profile: cosine\n"), "    profile: cosine",
                     {"driver 'push'", "profile 'cosine' is unknown"});
  ExpectSceneErrorAt(Edit("    amplitude: 0.05\n", "    amplitude: 0.05\n    coefficients: [1]\n"),
                     "    coefficients", {"driver 'push'", "coefficients"});
  ExpectSceneErrorAt(Edit("    kind: displacement\n", ""), "  - name: push",
                     {"driver 'push'", "missing required key 'kind'"});
  ExpectSceneErrorAt(Edit("    amplitude: 0.05\n", "    amplitude: .inf\n"), "    amplitude",
                     {"driver 'push'", "amplitude"});
  ExpectSceneErrorAt(Edit("  - name: push\n", "  - name: rod\n"), "  - name: rod\n    joint",
                     {"duplicate name 'rod'"});
}

TEST(PlanarJointsScene, BadNewJointsAreErrorsNamingTheJoint) {
  // Distance: length > 0 when given, and the points apart when it is not.
  ExpectSceneErrorAt(Edit("    point_a: [0.05, 0]\n", "    point_a: [0.05, 0]\n    length: 0\n"),
                     "    length: 0", {"joint 'rod'", "length"});
  ExpectSceneErrorAt(Edit("    point_a: [0.05, 0]\n", "    point_a: [0.05, 0]\n    length: -1\n"),
                     "    length: -1", {"joint 'rod'", "length"});
  ExpectSceneErrorAt(
      Edit("    point_a: [0.05, 0]\n", "    point_a: [0.05, 0]\n    point_b: [-0.3, 0.1]\n"),
      "  - name: rod", {"joint 'rod'", "length must be > 0"});
  // Keys of another joint type.
  ExpectSceneErrorAt(Edit("    point_a: [0, 0.2]\n", "    point_a: [0, 0.2]\n    length: 1\n"),
                     "    length: 1", {"joint 'weld'", "'length'", "a fixed joint"});
  ExpectSceneErrorAt(
      Edit("    point_a: [0.05, 0]\n", "    point_a: [0.05, 0]\n    axis_a: [1, 0]\n"),
      "    axis_a: [1, 0]", {"joint 'rod'", "'axis_a'", "a distance joint"});
  ExpectSceneErrorAt(Edit("    axis_a: [2, 0]\n", "    axis_a: [2, 0]\n    angle0: 1\n"),
                     "    angle0: 1", {"joint 'slot'", "'angle0'", "a point_on_line joint"});
  // Zero axis; unknown type with a suggestion.
  ExpectSceneErrorAt(Edit("    axis_a: [2, 0]\n", "    axis_a: [0, 0]\n"), "    axis_a: [0, 0]",
                     {"joint 'slot'", "axis_a"});
  ExpectSceneErrorAt(Edit("    type: point_on_line\n", "    type: point_on_lin\n"),
                     "    type: point_on_lin", {"joint 'slot'", "did you mean 'point_on_line'"});
}

// Issue 3 §4: an initial state that cannot be assembled is an error naming the joints left with
// a large residual, at the line of the first of them (as for spatial scenes). A 1 m rod cannot
// join the crank pin (≤ 0.1 m from the origin) to the slider held at 0.3 m by its driver.
TEST(PlanarJointsScene, ImpossibleAssemblyNamesTheJointsAtTheirLine) {
  const std::string yaml = Edit("    point_a: [0.05, 0]\n  - name: guide",
                                "    point_a: [0.05, 0]\n    length: 1.0\n  - name: guide");
  try {
    BuildSceneSystem(ParseScene(yaml, "test.yaml"));
    ADD_FAILURE() << "no SceneError for the impossible assembly";
  } catch (const SceneError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot be assembled"), std::string::npos) << what;
    EXPECT_NE(what.find("rod"), std::string::npos) << what;
    const std::size_t at = what.find("; joints: ");
    ASSERT_NE(at, std::string::npos) << what;
    std::istringstream names(what.substr(at + 10));
    std::string first;
    names >> first;
    EXPECT_EQ(e.line(), LineOf(yaml, "  - name: " + first + "\n")) << what;
  }
  // The consistent scene builds, and its initial state is the one written in the file (the
  // event loop's projection, not the assembly, makes a planar state consistent).
  const SceneSystem built = BuildSceneSystem(ParseScene(kScene, "test.yaml"));
  EXPECT_EQ(built.q0, BuildSystem(ParseScene(kScene, "test.yaml"))->model().InitialPositions());
}

TEST(PlanarJointsScene, CliExitsTwoWithFileAndLineAndWritesNothing) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_planar_joints_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string yaml = Edit("    kind: displacement\n", "    kind: angle\n");
  const fs::path scene = dir / "bad.yaml";
  std::ofstream(scene) << yaml;
  std::ostringstream out, err;
  const std::vector<std::string> args = {"run", scene.string(), "--out", (dir / "out").string()};
  EXPECT_EQ(RunCli(args, out, err), kExitBadInput);
  EXPECT_NE(err.str().find(scene.string() + ":" + std::to_string(LineOf(yaml, "    joint: guide")) +
                           ": driver 'push'"),
            std::string::npos)
      << err.str();
  EXPECT_FALSE(fs::exists(dir / "out"));
  // The good scene runs (exit 0) and writes its files.
  std::ofstream(dir / "good.yaml") << kScene;
  const std::vector<std::string> good = {
      "run", (dir / "good.yaml").string(), "--out", (dir / "good").string(), "--t-end", "0.2"};
  EXPECT_EQ(RunCli(good, out, err), 0) << err.str();
  EXPECT_TRUE(fs::exists(dir / "good" / "trajectory.csv"));
  fs::remove_all(dir);
}

TEST(PlanarJointsScene, ExampleSceneRunsAndFollowsTheClosedForm) {
  // examples/planar/driven_slider_crank.yaml through the CLI: the slider follows its driver and
  // the crank angle the closed form cos α = (s² + r² − l²)/(2 s r), r = 0.1, l² = 0.1, at every
  // output time. rtol 1e-8 of the scene: errors ≲ 1e-8 (measured 5e-11 on the crank angle).
  namespace fs = std::filesystem;
  const char* source_dir = std::getenv("SALTUS_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "SALTUS_SOURCE_DIR not set";
  const fs::path out =
      fs::temp_directory_path() / ("saltus_driven_slider_crank_" + std::to_string(getpid()));
  fs::remove_all(out);
  std::ostringstream cout, cerr;
  const std::vector<std::string> args = {
      "run", (fs::path(source_dir) / "examples" / "planar" / "driven_slider_crank.yaml").string(),
      "--out", out.string()};
  ASSERT_EQ(RunCli(args, cout, cerr), 0) << cerr.str();
  std::ifstream in(out / "trajectory.csv");
  std::string header, line;
  std::getline(in, header);
  ASSERT_EQ(header.rfind("t,crank.x,crank.y,crank.theta,slider.x,", 0), 0u) << header;
  int rows = 0;
  double worst = 0.0;
  while (std::getline(in, line)) {
    std::vector<double> x;
    std::stringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) x.push_back(std::stod(f));
    const double t = x[0], s = 0.3 + 0.05 * std::sin(2.0 * std::numbers::pi * t);
    const double alpha = std::acos((s * s + 0.01 - 0.1) / (0.2 * s));
    worst = std::max({worst, std::abs(x[3] - alpha), std::abs(x[4] - s), std::abs(x[10] - 0.4),
                      std::abs(x[11] - 0.2)});
    ++rows;
  }
  EXPECT_GE(rows, 201);  // output_step 0.01 over 2 s
  EXPECT_LT(worst, 1e-8);
  fs::remove_all(out);
}

TEST(PlanarJointsScene, DocumentationNamesTheNewKeys) {
  const char* source_dir = std::getenv("SALTUS_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "SALTUS_SOURCE_DIR not set";
  std::ifstream in(std::filesystem::path(source_dir) / "docs" / "scene-format.md");
  ASSERT_TRUE(in) << "docs/scene-format.md not found";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* key :
       {"| `distance` | 1 |", "| `fixed` | 3 |", "| `point_on_line` | 1 |",
        "| `length` | distance |", "| `drivers` | list |", "### Planar drivers"}) {
    EXPECT_NE(doc.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace saltus::tools
