// The `friction` keys of scene files (docs/scene-format.md): per planar contact, per listed
// spatial pair and simulation-wide, with simulation.painleve and simulation.friction_cone; the
// tangential rows they give; and their bad input through the command line (exit 2, the file line
// named, nothing written), in process (RunCli) and through the real executable.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "numeric_csv.h"
#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

// A block on two corners and a disk on the ground (planar). Line numbers matter below.
const std::string kPlanar = R"(scene: rough
gravity: [0, -9.81]
bodies:
  - name: block
    mass: 1
    inertia: 0.1
    position: [0, 0.1, 0]
  - name: disk
    mass: 1
    inertia: 0.01
    position: [1, 0.2, 0]
joints:
  - name: hold
    type: revolute
    body_a: block
    body_b: disk
    point_a: [0.5, 0.05]
    point_b: [-0.5, -0.05]
contacts:
  - name: left
    type: point_line
    body_a: ground
    body_b: block
    point_b: [-0.1, -0.1]
    friction: 0.4
  - name: roll
    type: disk_line
    body_a: ground
    body_b: disk
    radius_b: 0.2
simulation:
  t_end: 0.01
  integrator: dopri5
  friction: 0.25
  painleve: impact
)";

// A ball over a table and the floor (spatial); the table-ball pair is listed.
const std::string kSpatial = R"(scene: rough3d
dimension: 3
gravity: [0, 0, -9.81]
bodies:
  - name: ball
    mass: 1
    inertia: 0.004
    position: [0.1, 0.05, 1.32]
shapes:
  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: 0}
  - {name: table, body: ground, type: box, half_size: [0.6, 0.4, 0.02], position: [0, 0, 0.7]}
  - {name: ball_shape, body: ball, type: sphere, radius: 0.1}
contacts:
  pairs:
    - {shapes: [table, ball_shape], restitution: 0.8, friction: 0.6}
simulation:
  t_end: 0.01
  integrator: dopri5
  friction: 0.2
  friction_cone: faceted 8
)";

// 1-based line of the first occurrence of `needle` in `text`.
int LineOf(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(FrictionScene, PlanarContactsTakeTheirOwnOrTheSimulationFriction) {
  const Scene scene = ParseScene(kPlanar, "rough.yaml");
  ASSERT_EQ(scene.contacts.size(), 2u);
  EXPECT_EQ(scene.contacts[0].friction, 0.4);   // its own (exact: parsed, not computed)
  EXPECT_EQ(scene.contacts[1].friction, 0.25);  // simulation.friction
  EXPECT_EQ(scene.friction.friction, 0.25);
  EXPECT_EQ(scene.options.painleve, events::PainleveResolution::kImpact);
  const auto system = BuildSystem(scene);
  // Joint rows (2), the normal rows, then one tangential row per frictional contact.
  ASSERT_EQ(system->num_constraints(), 6);
  const std::vector<std::string> names = {"left", "roll", "left.t", "roll.t"};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(system->constraint_info(2 + k).name, names[k]);
  EXPECT_EQ(system->constraint_info(2).friction, 0.4);
  EXPECT_EQ(system->constraint_info(4).kind, engine::ConstraintKind::kTangential);
  EXPECT_EQ(system->NormalRow(5), 3);
}

TEST(FrictionScene, WithoutFrictionKeysTheRowsAreTodays) {
  std::string text = Replace(kPlanar, "    friction: 0.4\n", "");
  text = Replace(text, "  friction: 0.25\n", "");
  const Scene scene = ParseScene(text, "plain.yaml");
  EXPECT_EQ(scene.options.painleve, events::PainleveResolution::kImpact);
  const auto system = BuildSystem(scene);
  ASSERT_EQ(system->num_constraints(), 4);
  EXPECT_EQ(system->constraint_info(2).name, "left");
  EXPECT_EQ(system->constraint_info(3).name, "roll");
  EXPECT_EQ(system->constraint_info(3).friction, 0.0);
  // friction: 0 given explicitly is the same as no key.
  const auto zero = BuildSystem(ParseScene(Replace(kPlanar, "friction: 0.25", "friction: 0"), "z"));
  EXPECT_EQ(zero->num_constraints(), 5);  // only 'left' (0.4) keeps a tangential row
  EXPECT_EQ(zero->constraint_info(4).name, "left.t");
  // Defaults: painleve error, cone exact.
  const Scene defaults = ParseScene(Replace(text, "  painleve: impact\n", ""), "d");
  EXPECT_EQ(defaults.options.painleve, events::PainleveResolution::kError);
  EXPECT_EQ(defaults.options.friction_cone, contact::FrictionCone::kExact);
}

TEST(FrictionScene, SpatialPairsTakeTheirOwnOrTheSimulationFriction) {
  const Scene scene = ParseScene(kSpatial, "rough3d.yaml");
  const SpatialScene& sp = scene.spatial;
  ASSERT_EQ(sp.contact_pairs.size(), 2u);
  for (const contact::SpatialContactPair& p : sp.contact_pairs) {
    EXPECT_EQ(p.friction, p.name == "table-ball_shape" ? 0.6 : 0.2) << p.name;
  }
  EXPECT_EQ(scene.options.friction_cone, contact::FrictionCone::kFaceted);
  EXPECT_EQ(scene.options.friction_facets, 8);
  const auto system = BuildSpatialSystem(scene);
  // Two normal rows (floor-ball, table-ball), then two tangential rows each.
  ASSERT_EQ(system->num_constraints(), 6);
  EXPECT_EQ(system->constraint_info(2).name, system->constraint_info(0).name + ".t1");
  EXPECT_EQ(system->constraint_info(5).name, system->constraint_info(1).name + ".t2");
  EXPECT_EQ(ParseScene(Replace(kSpatial, "faceted 8", "exact"), "e").options.friction_cone,
            contact::FrictionCone::kExact);
}

struct BadCase {
  std::string base, from, to;  // the scene and the edit
  std::string at;              // text of the line the error must name (after the edit)
  std::string message;
};

std::vector<BadCase> BadCases() {
  const std::string own = "    friction: 0.4\n", sim = "  friction: 0.25\n";
  const std::string pair = "friction: 0.6}";
  return {
      {kPlanar, own, "    friction: -0.1\n", "friction: -0.1",
       "contact 'left': friction must be >= 0, got -0.1"},
      {kPlanar, own, "    friction: .nan\n", "friction: .nan", "friction must be a finite number"},
      {kPlanar, own, "    friction: .inf\n", "friction: .inf", "friction must be a finite number"},
      {kPlanar, own, "    friction: rough\n", "friction: rough", "friction must be a number"},
      {kPlanar, sim, "  friction: -1\n", "friction: -1", "simulation: friction must be >= 0"},
      {kPlanar, "painleve: impact", "painleve: maybe", "painleve: maybe",
       "painleve 'maybe' is unknown"},
      {kPlanar, "painleve: impact", "friction_cone: exact", "friction_cone: exact",
       "friction_cone applies to spatial scenes"},
      {kPlanar, "    point_a: [0.5, 0.05]\n", "    point_a: [0.5, 0.05]\n    friction: 0.3\n",
       "    friction: 0.3", "joint 'hold': friction does not apply here"},
      {kPlanar, "    inertia: 0.01\n", "    inertia: 0.01\n    friction: 0.3\n",
       "    friction: 0.3", "body 'disk': friction does not apply here"},
      {kSpatial, pair, "friction: -0.5}", "friction: -0.5",
       "contact pair 'table-ball_shape': friction must be >= 0, got -0.5"},
      {kSpatial, pair, "friction: .inf}", "friction: .inf", "friction must be a finite number"},
      {kSpatial, pair, "friction: .nan}", "friction: .nan", "friction must be a finite number"},
      {kSpatial, "  friction: 0.2\n", "  friction: -0.2\n", "friction: -0.2",
       "simulation: friction must be >= 0"},
      {kSpatial, "  friction: 0.2\n", "  friction: .nan\n", "friction: .nan",
       "friction must be a finite number"},
      {kSpatial, "faceted 8", "faceted 2", "faceted 2", "faceted needs an integer N >= 3"},
      {kSpatial, "faceted 8", "faceted -8", "faceted -8", "faceted needs an integer N >= 3"},
      {kSpatial, "faceted 8", "faceted 8 9", "faceted 8 9", "faceted needs an integer"},
      {kSpatial, "faceted 8", "faceted", "friction_cone: faceted", "faceted needs an integer"},
      {kSpatial, "faceted 8", "faceted 4.5", "faceted 4.5", "faceted needs an integer"},
      {kSpatial, "faceted 8", "round", "friction_cone: round", "friction_cone 'round' is unknown"},
      {kSpatial, "radius: 0.1}", "radius: 0.1, friction: 0.3}", "ball_shape",
       "shape 'ball_shape': friction does not apply here"},
      // Rolling and spinning resistance (issue 18 §1).
      {kSpatial, pair, "friction: 0.6, rolling_friction: -0.01}", "rolling_friction: -0.01",
       "contact pair 'table-ball_shape': rolling_friction must be >= 0, got -0.01"},
      {kSpatial, pair, "friction: 0.6, spinning_friction: .nan}", "spinning_friction: .nan",
       "spinning_friction must be a finite number"},
      {kSpatial, "  friction: 0.2\n", "  friction: 0.2\n  rolling_friction: -1\n",
       "rolling_friction: -1", "simulation: rolling_friction must be >= 0"},
      {kSpatial, "  friction: 0.2\n", "  friction: 0.2\n  spinning_friction: .inf\n",
       "spinning_friction: .inf", "spinning_friction must be a finite number"},
      {kPlanar, "painleve: impact", "rolling_friction: 0.01", "rolling_friction: 0.01",
       "rolling_friction applies to spatial scenes"},
      {Replace(kSpatial, "type: sphere, radius: 0.1}", "type: box, half_size: [0.1, 0.1, 0.1]}"),
       pair, "friction: 0.6, rolling_friction: 0.01}", "rolling_friction: 0.01",
       "rolling_friction applies to pairs with a sphere on one side"},
  };
}

class FrictionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    scratch_ = fs::temp_directory_path() /
               ("saltus_friction_scene_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path scratch_;
};

TEST_F(FrictionCli, BadFrictionInputExitsTwoNamingTheLineAndWritesNothing) {
  int k = 0;
  for (const BadCase& c : BadCases()) {
    const std::string text = Replace(c.base, c.from, c.to);
    const fs::path scene = scratch_ / ("bad" + std::to_string(k++) + ".yaml");
    std::ofstream(scene) << text;
    const fs::path out = scratch_ / "out";
    std::ostringstream o, e;
    const std::vector<std::string> args = {"run", scene.string(), "--out", out.string()};
    const int code = RunCli(args, o, e);
    EXPECT_EQ(code, kExitBadInput) << c.to;
    const std::string where = scene.string() + ":" + std::to_string(LineOf(text, c.at)) + ": ";
    EXPECT_NE(e.str().find(where), std::string::npos) << c.to << ": " << e.str();
    EXPECT_NE(e.str().find(c.message), std::string::npos) << c.to << ": " << e.str();
    EXPECT_FALSE(fs::exists(out)) << c.to;
  }
}

TEST_F(FrictionCli, TheExecutableRejectsNegativeFriction) {
  const BadCase c = BadCases().front();
  const std::string text = Replace(c.base, c.from, c.to);
  const fs::path scene = scratch_ / "bad.yaml", out = scratch_ / "out", err = scratch_ / "err";
  std::ofstream(scene) << text;
  const std::string command = std::string("'") + SALTUS_CLI_PATH + "' run '" + scene.string() +
                              "' --out '" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitBadInput);
  std::ifstream in(err);
  std::stringstream message;
  message << in.rdbuf();
  EXPECT_NE(message.str().find(":" + std::to_string(LineOf(text, c.at)) + ": " + c.message),
            std::string::npos)
      << message.str();
  EXPECT_FALSE(fs::exists(out));
}

TEST(FrictionScene, SpatialPairsTakeTheirOwnOrTheSimulationResistance) {
  // The pair's own keys win; simulation.rolling_friction goes to the pairs with a sphere only
  // (the crate added here keeps none against the floor and the table, and gets it against the
  // ball), each of which gets the rows r1, r2 (and s with spinning_friction).
  std::string text =
      Replace(kSpatial, "friction: 0.6}", "friction: 0.6, spinning_friction: 0.003}");
  text = Replace(text, "  friction: 0.2\n", "  friction: 0.2\n  rolling_friction: 0.01\n");
  text = Replace(text, "    position: [0.1, 0.05, 1.32]\n",
                 "    position: [0.1, 0.05, 1.32]\n  - name: crate\n    mass: 1\n"
                 "    inertia: 0.004\n    position: [-2, 0, 0.2]\n");
  text = Replace(text, "shapes:\n",
                 "shapes:\n  - {name: crate_shape, body: crate, type: box, half_size: [0.1, 0.1, "
                 "0.1]}\n");
  const Scene scene = ParseScene(text, "resist.yaml");
  std::map<std::string, std::pair<double, double>> resistance;
  for (const contact::SpatialContactPair& p : scene.spatial.contact_pairs) {
    resistance[p.name] = {p.rolling_friction, p.spinning_friction};
  }
  using P = std::pair<double, double>;
  EXPECT_EQ(resistance["table-ball_shape"], P(0.01, 0.003));  // exact: parsed values
  EXPECT_EQ(resistance["floor-ball_shape"], P(0.01, 0.0));
  EXPECT_EQ(resistance["floor-crate_shape"], P(0.0, 0.0));
  EXPECT_EQ(resistance["table-crate_shape"], P(0.0, 0.0));
  EXPECT_EQ(resistance["crate_shape-ball_shape"], P(0.01, 0.0));  // a sphere on one side
  const auto system = BuildSpatialSystem(scene);
  int rolling = 0, spinning = 0;
  for (int r = 0; r < system->num_constraints(); ++r) {
    const engine::ConstraintRowInfo& info = system->constraint_info(r);
    if (info.kind != engine::ConstraintKind::kResistance) continue;
    ++(info.spinning ? spinning : rolling);
  }
  EXPECT_EQ(rolling, 6);  // r1, r2 of the three pairs of the ball (floor, table, crate)
  EXPECT_EQ(spinning, 1);
}

// examples/friction3d/rolling_resistance.yaml at user level (docs/friction.md): with
// --integrator dopri5 the event loop refuses it at the pair's line naming moreau_jean (exit 2,
// nothing written); as written (integrator: moreau_jean, step: 1e-3) the ball rolls to rest at
// the closed form of the scene's header. Tolerances
// (tests/timestepping/rolling_resistance_test.cc): constant forces make the scheme's velocities and
// (θ = 1/2) positions exact, except the stopping step (≤ a h²), plus the solver's 1e-9 and the 17
// digits of trajectory.csv.
TEST_F(FrictionCli, RollingResistanceRunsWithMoreauJeanAndTheEventLoopNamesIt) {
  const fs::path scene = fs::path(SALTUS_EXAMPLES_DIR) / "friction3d" / "rolling_resistance.yaml";
  std::stringstream text;
  text << std::ifstream(scene).rdbuf();
  const fs::path refused = scratch_ / "refused";
  std::ostringstream o, e;
  const std::vector<std::string> refused_args = {"run",    scene.string(), "--integrator",
                                                 "dopri5", "--out",        refused.string()};
  EXPECT_EQ(RunCli(refused_args, o, e), kExitBadInput);
  const std::string where =
      scene.string() + ":" + std::to_string(LineOf(text.str(), "rolling_friction: 0.01")) + ": ";
  EXPECT_NE(e.str().find(where), std::string::npos) << e.str();
  EXPECT_NE(e.str().find("rolling_friction needs --integrator moreau_jean --step H"),
            std::string::npos)
      << e.str();
  EXPECT_FALSE(fs::exists(refused));

  const fs::path out = scratch_ / "out";
  std::ostringstream o2, e2;
  const std::vector<std::string> args = {"run", scene.string(), "--out", out.string()};
  ASSERT_EQ(RunCli(args, o2, e2), kExitOk) << e2.str();
  EXPECT_EQ(e2.str(), "");
  const test_support::NumericCsv csv = test_support::ReadNumericCsv(out / "trajectory.csv");
  const std::size_t t = csv.Column("t"), x = csv.Column("ball.x"), vx = csv.Column("ball.vx");
  const double v0 = 0.5, h = 1e-3, a = 5.0 / 7.0 * 0.01 * 9.81 / 0.1, t_stop = v0 / a;
  int checked = 0;
  for (const std::vector<double>& row : csv.rows) {
    const double tk = row[t];
    if (tk < t_stop - h) {
      EXPECT_NEAR(row[vx], v0 - a * tk, 1e-9) << "t = " << tk;
      EXPECT_NEAR(row[x], v0 * tk - 0.5 * a * tk * tk, 1e-9) << "t = " << tk;
    } else if (tk > t_stop + h) {
      EXPECT_NEAR(row[vx], 0.0, 1e-9) << "t = " << tk;
      EXPECT_NEAR(row[x], v0 * v0 / (2.0 * a), a * h * h + 1e-9) << "t = " << tk;
    }
    ++checked;
  }
  EXPECT_GE(checked, 100);  // output_step 0.01 over 1.2 s
}

TEST_F(FrictionCli, AFrictionalSceneRunsAndWritesItsResults) {
  // Until the event loop uses the tangential rows (issue 17) a frictional scene runs as the
  // frictionless one; here: it is accepted and runs to its end.
  const fs::path scene = scratch_ / "rough.yaml", out = scratch_ / "out";
  std::ofstream(scene) << kSpatial;
  std::ostringstream o, e;
  const std::vector<std::string> args = {"run", scene.string(), "--out", out.string()};
  EXPECT_EQ(RunCli(args, o, e), kExitOk) << e.str();
  EXPECT_TRUE(fs::exists(out / "summary.json"));
}

}  // namespace
}  // namespace saltus::tools
