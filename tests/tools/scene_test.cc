// Scene loader: a valid scene maps to the model and the simulation options as documented in
// docs/scene-format.md, and every class of bad input gives a SceneError naming the item and the
// line of the file.
#include "tools/scene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "integrators/integrator.h"

namespace saltus::tools {
namespace {

// A valid scene touching every section. Line numbers are used by the tests below.
const std::string kBase = R"(scene: test
gravity: [0, -9.81]
bodies:
  - name: ball
    mass: 1
    inertia: 0.004
    position: [0, 1, 0]
  - name: box
    mass: 2
    inertia: 0.1
    position: [1, 1, 0]
joints:
  - name: pin
    type: revolute
    body_a: ground
    body_b: box
    point_a: [1, 1.5]
    point_b: [0, 0.5]
forces:
  - name: spring
    type: spring_damper
    body_a: ground
    body_b: ball
    stiffness: 10
contacts:
  - name: floor
    type: disk_line
    body_a: ground
    body_b: ball
    radius_b: 0.1
    restitution: 0.5
simulation:
  t_end: 1
  integrator: dopri5
  formulation: index1
  rtol: 1.0e-6
)";

// kBase with the first occurrence of `from` replaced by `to` (which must exist).
std::string Edit(const std::string& from, const std::string& to, const std::string& base = kBase) {
  const std::size_t at = base.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the scene";
  if (at == std::string::npos) return base;
  return base.substr(0, at) + to + base.substr(at + from.size());
}

// Parses `yaml` expecting a SceneError at `line` whose message contains every needle.
void ExpectError(const std::string& yaml, int line, const std::vector<std::string>& needles) {
  try {
    ParseScene(yaml, "test.yaml");
    ADD_FAILURE() << "no SceneError for:\n" << yaml;
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.file(), "test.yaml");
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("test.yaml:" + std::to_string(line) + ": ", 0), 0u) << what;
    for (const std::string& n : needles) {
      EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' missing from: " << what;
    }
  }
}

TEST(SceneTest, ValidSceneMapsToModelAndOptions) {
  const Scene s = ParseScene(kBase, "test.yaml");
  EXPECT_EQ(s.name, "test");
  ASSERT_EQ(s.bodies.size(), 2u);
  EXPECT_EQ(s.bodies[1].name, "box");
  // Values are copied from the text: exact up to decimal-to-binary rounding (1 ulp).
  EXPECT_NEAR(s.bodies[1].mass, 2.0, 1e-15);
  EXPECT_NEAR(s.bodies[0].q0[1], 1.0, 1e-15);
  EXPECT_NEAR(s.gravity[1], -9.81, 1e-15);
  ASSERT_EQ(s.joints.size(), 1u);
  EXPECT_EQ(s.joints[0].body_a, engine::kGround);
  EXPECT_EQ(s.joints[0].body_b, 1);  // "box" is the second body
  EXPECT_EQ(s.joints[0].type, engine::PlanarJointType::kRevolute);
  EXPECT_NEAR(s.joints[0].point_a[1], 1.5, 1e-15);
  ASSERT_EQ(s.springs.size(), 1u);
  // rest_length defaults to the initial distance ground origin -> ball centre (0, 1): 1 m.
  EXPECT_NEAR(s.springs[0].rest_length, 1.0, 1e-15);
  EXPECT_NEAR(s.springs[0].damping, 0.0, 1e-15);
  ASSERT_EQ(s.contacts.size(), 1u);
  EXPECT_EQ(s.contacts[0].type, contact::PlanarContactType::kDiskLine);
  EXPECT_EQ(s.contacts[0].body_b, 0);
  EXPECT_NEAR(s.contacts[0].normal_a[1], 1.0, 1e-15);  // default normal (0, 1)
  EXPECT_NEAR(s.contacts[0].restitution, 0.5, 1e-15);
  EXPECT_NEAR(s.t_end, 1.0, 1e-15);
  EXPECT_EQ(s.options.integrator, "dopri5");
  EXPECT_EQ(s.options.integrator_options.formulation, integrators::Formulation::kIndex1);
  EXPECT_NEAR(s.options.integrator_options.rtol, 1e-6, 1e-21);
  // Keys left out keep the library defaults.
  const events::SimulationOptions defaults;
  EXPECT_NEAR(s.options.integrator_options.atol, defaults.integrator_options.atol, 1e-21);
  EXPECT_NEAR(s.options.thresholds.tau0, defaults.thresholds.tau0, 1e-24);
  EXPECT_EQ(s.options.event_samples, defaults.event_samples);
  EXPECT_EQ(s.lines.bodies, (std::vector<int>{4, 8}));
  EXPECT_EQ(s.lines.contacts, (std::vector<int>{26}));
  EXPECT_EQ(s.lines.simulation, 33);
}

TEST(SceneTest, EverySimulationKeyIsMapped) {
  const std::string yaml = Edit("  rtol: 1.0e-6\n", R"(  rtol: 1.0e-6
  atol: 1.0e-9
  h_min: 1.0e-9
  h_max: 0.5
  h_init: 1.0e-3
  safety: 0.8
  fac_min: 0.3
  fac_max: 4
  newton_tol: 1.0e-9
  max_newton_iterations: 7
  output_step: 0.01
  restitution: 0.7
  thresholds: {gap: 1.0e-8, velocity: 1.0e-5, force: 1.0e-9}
  projection: false
  projection_tolerance: 1.0e-5
  projection_metric: identity
  event_projection_tolerance: 1.0e-11
  projection_max_iterations: 9
  lcp_solver: pgs
  lcp_tolerance: 1.0e-9
  lcp_max_iterations: 500
  event_samples: 6
  root_tolerance: 1.0e-11
  zeno: {max_events: 50, window: 1.0e-4}
  time_events: [0.5, 0.25]
)");
  const Scene s = ParseScene(yaml, "test.yaml");
  const events::SimulationOptions& o = s.options;
  const integrators::IntegratorOptions& io = o.integrator_options;
  // Each value is read from decimal text: equal up to 1 ulp, so relative 1e-15.
  EXPECT_NEAR(io.atol, 1e-9, 1e-24);
  EXPECT_NEAR(io.h_min, 1e-9, 1e-24);
  EXPECT_NEAR(io.h_max, 0.5, 1e-15);
  EXPECT_NEAR(io.h_init, 1e-3, 1e-18);
  EXPECT_NEAR(io.safety, 0.8, 1e-15);
  EXPECT_NEAR(io.fac_min, 0.3, 1e-15);
  EXPECT_NEAR(io.fac_max, 4.0, 1e-15);
  EXPECT_NEAR(io.newton_tol, 1e-9, 1e-24);
  EXPECT_EQ(io.max_newton_iterations, 7);
  EXPECT_NEAR(o.output_step, 0.01, 1e-17);
  EXPECT_NEAR(o.restitution, 0.7, 1e-15);
  EXPECT_NEAR(o.thresholds.tau0, 1e-8, 1e-23);
  EXPECT_NEAR(o.thresholds.tau1, 1e-5, 1e-20);
  EXPECT_NEAR(o.thresholds.tau3, 1e-9, 1e-24);
  EXPECT_FALSE(io.project);
  EXPECT_NEAR(io.projection_tol, 1e-5, 1e-20);
  EXPECT_EQ(io.projection_metric, engine::ProjectionMetric::kIdentity);
  EXPECT_EQ(o.projection.metric, engine::ProjectionMetric::kIdentity);
  EXPECT_NEAR(o.projection.tolerance, 1e-11, 1e-26);
  EXPECT_EQ(o.projection.max_iterations, 9);
  EXPECT_EQ(o.lcp.solver, contact::LcpSolver::kPgs);
  EXPECT_NEAR(o.lcp.tolerance, 1e-9, 1e-24);
  EXPECT_EQ(o.lcp.max_iterations, 500);
  EXPECT_EQ(o.event_samples, 6);
  EXPECT_NEAR(o.root_tolerance, 1e-11, 1e-26);
  EXPECT_EQ(o.zeno_max_events, 50);
  EXPECT_NEAR(o.zeno_window, 1e-4, 1e-19);
  ASSERT_EQ(o.time_events.size(), 2u);
  EXPECT_NEAR(o.time_events[0], 0.25, 1e-16);  // sorted
  EXPECT_NEAR(o.time_events[1], 0.5, 1e-16);
}

TEST(SceneTest, BuildSystemGivesJointRowsThenContactRows) {
  const Scene s = ParseScene(kBase, "test.yaml");
  const auto system = BuildSystem(s);
  EXPECT_EQ(system->nq(), 6);
  ASSERT_EQ(system->num_constraints(), 3);  // revolute (2 rows) + one contact
  EXPECT_EQ(system->constraint_info(0).name, "pin.x");
  EXPECT_EQ(system->constraint_info(2).name, "floor");
  EXPECT_EQ(system->constraint_info(2).kind, engine::ConstraintKind::kUnilateral);
  EXPECT_NEAR(system->constraint_info(2).restitution, 0.5, 1e-15);
  EXPECT_EQ(system->PositionName(3), "box.x");
  // The contact gap at the initial state: centre height 1 minus radius 0.1 (exact in binary up
  // to one rounding).
  Eigen::VectorXd g;
  const std::vector<int> rows = {2};
  system->ConstraintValues(0.0, system->model().InitialPositions(), rows, &g);
  EXPECT_NEAR(g[0], 0.9, 1e-15);
}

// `saltus run` prints the topology of planar scenes too (BuildSceneSystem's report): kBase has
// the box pinned to the ground and the ball joined to nothing (its spring is no joint).
TEST(SceneTest, PlanarSceneReportsItsTopology) {
  const SceneSystem built = BuildSceneSystem(ParseScene(kBase, "test.yaml"));
  EXPECT_EQ(built.report,
            "topology: 2 bodies, 1 joints, 2 components, 0 independent loops\n"
            "  bodies not connected by any joint: ball\n"
            "  constraint rows 2, rank of G 2, redundant 0, degrees of freedom 4\n");
  EXPECT_FALSE(built.topology.has_value());  // summary.json's object stays spatial-only
}

TEST(SceneTest, MalformedYamlReportsTheParserLine) {
  ExpectError(Edit("    inertia: 0.004\n", "    inertia: 0.004\n      oops: 1\n"), 7,
              {"malformed YAML"});
  ExpectError(Edit("    mass: 2\n", "\tmass: 2\n"), 9, {"malformed YAML", "tab"});
}

TEST(SceneTest, EmptySceneIsAnError) {
  ExpectError("", 1, {"empty"});
  ExpectError("# only a comment\n", 1, {"empty"});
}

TEST(SceneTest, BadInputExampleFromTheDocumentation) {
  try {
    ParseScene(Edit("mass: 1\n", "mass: -1\n"), "scene.yaml");
    FAIL() << "negative mass accepted";
  } catch (const SceneError& e) {
    EXPECT_STREQ(e.what(), "scene.yaml:5: body 'ball': mass must be > 0, got -1");
  }
}

TEST(SceneTest, UnknownKeysAnywhere) {
  ExpectError(Edit("gravity:", "gravty:"), 2, {"unknown key 'gravty'", "did you mean 'gravity'"});
  ExpectError(Edit("    mass: 1\n", "    mas: 1\n"), 5,
              {"body 'ball'", "unknown key 'mas'", "did you mean 'mass'"});
  ExpectError(Edit("    stiffness: 10\n", "    stiffness: 10\n    stiffnes: 3\n"), 25,
              {"force 'spring'", "unknown key 'stiffnes'"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  thresholds: {gap: 1.0e-9, vel: 1}\n"), 37,
              {"simulation.thresholds", "unknown key 'vel'"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  zeno: {max_event: 3}\n"), 37,
              {"simulation.zeno", "unknown key 'max_event'"});
  ExpectError(Edit("  rtol:", "  rtl:"), 36, {"simulation", "unknown key 'rtl'"});
}

TEST(SceneTest, KeysOfAnotherTypeAreRejected) {
  ExpectError(Edit("    radius_b: 0.1\n", "    radius_b: 0.1\n    radius_a: 0.1\n"), 31,
              {"contact 'floor'", "'radius_a' does not apply to a disk_line contact"});
  ExpectError(Edit("    point_b: [0, 0.5]\n", "    point_b: [0, 0.5]\n    rate: 1\n"), 19,
              {"joint 'pin'", "'rate' does not apply to a revolute joint"});
}

TEST(SceneTest, DuplicateKeys) {
  ExpectError(Edit("    mass: 1\n", "    mass: 1\n    mass: 3\n"), 6,
              {"body 'ball'", "duplicate key 'mass'", "line 5"});
}

TEST(SceneTest, MissingRequiredKeys) {
  ExpectError(Edit("    mass: 1\n", ""), 4, {"body 'ball'", "missing required key 'mass'"});
  ExpectError(Edit("    inertia: 0.1\n", ""), 8, {"body 'box'", "missing required key 'inertia'"});
  ExpectError(Edit("  - name: ball\n", "  - nam: ball\n"), 4,
              {"body #1", "missing required key 'name'"});
  ExpectError(Edit("    radius_b: 0.1\n", ""), 26, {"contact 'floor'", "'radius_b'"});
  ExpectError(Edit("  t_end: 1\n", ""), 33, {"simulation", "missing required key 't_end'"});
  ExpectError(Edit("scene: test\n", "description: no name\n"), 1, {"missing required key 'scene'"});
  ExpectError(Edit("    type: revolute\n", ""), 13, {"joint 'pin'", "'type'"});
}

TEST(SceneTest, WrongTypes) {
  ExpectError(Edit("mass: 1\n", "mass: heavy\n"), 5,
              {"body 'ball'", "mass must be a number", "'heavy'"});
  ExpectError(Edit("mass: 1\n", "mass: [1]\n"), 5, {"mass must be a number", "a list"});
  ExpectError(Edit("  t_end: 1\n", "  t_end:\n"), 33, {"t_end must be a number", "null"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  event_samples: 2.5\n"), 37,
              {"event_samples must be an integer"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  projection: maybe\n"), 37,
              {"projection must be true or false"});
  ExpectError(
      Edit("  - name: box\n    mass: 2\n    inertia: 0.1\n    position: [1, 1, 0]\n", "  - box\n"),
      8, {"body #2", "expected a mapping"});
  ExpectError(Edit("forces:\n  - name: spring\n    type: spring_damper\n    body_a: ground\n"
                   "    body_b: ball\n    stiffness: 10\n",
                   "forces: spring\n"),
              19, {"forces must be a list"});
  ExpectError(Edit("    body_b: box\n", "    body_b: {name: box}\n"), 16,
              {"joint 'pin'", "body_b must be text"});
}

TEST(SceneTest, VectorsOfTheWrongLength) {
  ExpectError(Edit("position: [0, 1, 0]", "position: [0, 1]"), 7,
              {"body 'ball'", "position must be a list of 3 numbers", "got 2 values"});
  ExpectError(Edit("point_a: [1, 1.5]", "point_a: [1, 1.5, 0]"), 17,
              {"joint 'pin'", "point_a must be a list of 2 numbers", "got 3 values"});
  ExpectError(Edit("gravity: [0, -9.81]", "gravity: -9.81"), 2, {"gravity must be a list"});
  ExpectError(Edit("position: [0, 1, 0]", "position: [0, one, 0]"), 7,
              {"position[1] must be a number"});
}

TEST(SceneTest, MassAndInertiaMustBePositive) {
  ExpectError(Edit("mass: 1\n", "mass: 0\n"), 5, {"body 'ball'", "mass must be > 0, got 0"});
  ExpectError(Edit("inertia: 0.1\n", "inertia: -0.1\n"), 10,
              {"body 'box'", "inertia must be > 0, got -0.1"});
  ExpectError(Edit("inertia: 0.004\n", "inertia: 0\n"), 6, {"inertia must be > 0"});
}

TEST(SceneTest, RestitutionOutsideTheUnitInterval) {
  ExpectError(Edit("restitution: 0.5", "restitution: 1.5"), 31,
              {"contact 'floor'", "restitution must be in [0, 1], got 1.5"});
  ExpectError(Edit("restitution: 0.5", "restitution: -0.1"), 31, {"restitution must be in [0, 1]"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  restitution: 2\n"), 37,
              {"simulation", "restitution must be in [0, 1], got 2"});
}

TEST(SceneTest, NonFiniteNumbersAnywhere) {
  ExpectError(Edit("mass: 1\n", "mass: .nan\n"), 5, {"body 'ball'", "finite", ".nan"});
  ExpectError(Edit("position: [0, 1, 0]", "position: [0, .inf, 0]"), 7,
              {"position[1] must be a finite number"});
  ExpectError(Edit("gravity: [0, -9.81]", "gravity: [-.inf, -9.81]"), 2, {"finite"});
  ExpectError(Edit("  t_end: 1\n", "  t_end: .inf\n"), 33, {"t_end must be a finite number"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: nan\n"), 36, {"rtol must be a finite number"});
  ExpectError(Edit("    stiffness: 10\n", "    stiffness: .NaN\n"), 24,
              {"force 'spring'", "finite"});
}

TEST(SceneTest, UnknownBodyNames) {
  ExpectError(Edit("    body_b: box\n", "    body_b: bx\n"), 16,
              {"joint 'pin'", "body_b 'bx' is not a body", "did you mean 'box'", "ground"});
  ExpectError(Edit("    body_b: ball\n    radius_b", "    body_b: wheel\n    radius_b"), 29,
              {"contact 'floor'", "'wheel' is not a body"});
  ExpectError(Edit("    body_a: ground\n    body_b: ball\n    stiffness",
                   "    body_a: Ground\n    body_b: ball\n    stiffness"),
              22, {"force 'spring'", "body_a 'Ground' is not a body"});
}

TEST(SceneTest, SameBodyOnBothSides) {
  ExpectError(Edit("    body_a: ground\n    body_b: box\n", "    body_a: box\n    body_b: box\n"),
              16, {"joint 'pin'", "body_a and body_b are the same (box)"});
}

TEST(SceneTest, DuplicateAndInvalidNames) {
  ExpectError(Edit("  - name: box\n", "  - name: ball\n"), 8,
              {"duplicate name 'ball'", "body at line 4"});
  ExpectError(Edit("  - name: floor\n", "  - name: pin\n"), 26,
              {"duplicate name 'pin'", "joint at line 13"});
  ExpectError(Edit("  - name: box\n", "  - name: ground\n"), 8, {"'ground' is reserved"});
  ExpectError(Edit("  - name: box\n", "  - name: my box\n"), 8, {"'my box' is not a valid name"});
  ExpectError(Edit("scene: test\n", "scene: a/b\n"), 1, {"scene name 'a/b' is not a valid name"});
}

TEST(SceneTest, UnknownTypes) {
  ExpectError(Edit("type: revolute", "type: hinge"), 14,
              {"joint 'pin'", "type 'hinge' is unknown", "revolute"});
  ExpectError(Edit("type: disk_line", "type: disc_line"), 27,
              {"contact 'floor'", "did you mean 'disk_line'"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  projection_metric: euclid\n"), 37,
              {"projection_metric 'euclid' is unknown"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  lcp_solver: lemk\n"), 37,
              {"lcp_solver 'lemk' is unknown", "did you mean 'lemke'"});
}

TEST(SceneTest, UnknownIntegratorAndFormulation) {
  ExpectError(Edit("integrator: dopri5", "integrator: rk99"), 34,
              {"simulation", "unknown integrator 'rk99'", "dopri5"});
  ExpectError(Edit("formulation: index1", "formulation: index4"), 35,
              {"formulation 'index4' is unknown"});
}

TEST(SceneTest, FormulationTheIntegratorDoesNotSupport) {
  // Any (integrator, formulation) pair absent from the table.
  for (const integrators::IntegratorEntry& entry : integrators::IntegratorTable()) {
    for (const char* name : {"index1", "index2", "index3", "ggl"}) {
      const integrators::Formulation f = *integrators::ParseFormulation(name);
      if (std::find(entry.formulations.begin(), entry.formulations.end(), f) !=
          entry.formulations.end()) {
        continue;
      }
      const std::string yaml =
          Edit("integrator: dopri5\n  formulation: index1",
               "integrator: " + std::string(entry.name) + "\n  formulation: " + name);
      ExpectError(yaml, 35, {"simulation", "does not support formulation '" + std::string(name)});
      return;
    }
  }
  GTEST_SKIP() << "every integrator supports every formulation";
}

TEST(SceneTest, NonPositiveTimesAndTolerances) {
  ExpectError(Edit("  t_end: 1\n", "  t_end: 0\n"), 33, {"simulation", "t_end must be > 0, got 0"});
  ExpectError(Edit("  t_end: 1\n", "  t_end: -2\n"), 33, {"t_end must be > 0, got -2"});
  ExpectError(Edit("rtol: 1.0e-6", "rtol: 0"), 36, {"rtol must be > 0"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  h_min: 0.1\n  h_max: 0.01\n"), 38,
              {"h_max (0.01) must be >= h_min (0.1)"});
  ExpectError(Edit("  rtol: 1.0e-6\n", "  rtol: 1.0e-6\n  time_events: [0.5, -1]\n"), 37,
              {"time_events[1] must be >= 0"});
}

TEST(SceneTest, GeometryChecks) {
  ExpectError(Edit("    radius_b: 0.1\n", "    radius_b: 0\n"), 30,
              {"contact 'floor'", "radius_b must be > 0"});
  ExpectError(Edit("    radius_b: 0.1\n", "    radius_b: 0.1\n    normal_a: [0, 0]\n"), 31,
              {"contact 'floor'", "normal_a must be a non-zero vector"});
  ExpectError(Edit("    stiffness: 10\n", "    stiffness: -10\n"), 24,
              {"force 'spring'", "stiffness must be >= 0"});
}

TEST(SceneTest, EmptyBodiesList) {
  const std::size_t first = kBase.find("bodies:\n");
  const std::size_t end = kBase.find("joints:\n");
  ExpectError(Edit(kBase.substr(first, end - first), "bodies: []\n"), 3,
              {"bodies must be a non-empty"});
}

TEST(SceneTest, NormalsAndAxesAreNormalized) {
  const Scene s = ParseScene(
      Edit("    radius_b: 0.1\n", "    radius_b: 0.1\n    normal_a: [0, 2]\n"), "test.yaml");
  // Normalizing (0, 2) is exact in binary.
  EXPECT_NEAR(s.contacts[0].normal_a.norm(), 1.0, 1e-15);
}

// docs/scene-format.md documents every key the loader accepts (the lists below are the
// loader's, section by section).
TEST(SceneTest, DocumentationNamesEveryKey) {
  const char* source_dir = std::getenv("SALTUS_SOURCE_DIR");
  if (source_dir == nullptr) GTEST_SKIP() << "SALTUS_SOURCE_DIR not set";
  std::ifstream in(std::filesystem::path(source_dir) / "docs" / "scene-format.md");
  ASSERT_TRUE(in) << "docs/scene-format.md not found";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* key : {"scene",
                          "description",
                          "gravity",
                          "bodies",
                          "joints",
                          "forces",
                          "contacts",
                          "simulation",
                          "name",
                          "mass",
                          "inertia",
                          "position",
                          "velocity",
                          "type",
                          "body_a",
                          "body_b",
                          "point_a",
                          "point_b",
                          "axis_a",
                          "angle0",
                          "rate",
                          "revolute",
                          "prismatic",
                          "angle_driver",
                          "spring_damper",
                          "load",
                          "stiffness",
                          "damping",
                          "rest_length",
                          "body",
                          "force",
                          "point",
                          "torque",
                          "point_line",
                          "disk_line",
                          "disk_disk",
                          "normal_a",
                          "radius_a",
                          "radius_b",
                          "restitution",
                          "t_end",
                          "integrator",
                          "formulation",
                          "rtol",
                          "atol",
                          "h_min",
                          "h_max",
                          "h_init",
                          "adaptive",
                          "safety",
                          "fac_min",
                          "fac_max",
                          "newton_tol",
                          "max_newton_iterations",
                          "output_step",
                          "thresholds",
                          "thresholds.gap",
                          "thresholds.velocity",
                          "thresholds.force",
                          "projection",
                          "projection_tolerance",
                          "projection_metric",
                          "event_projection_tolerance",
                          "projection_max_iterations",
                          "lcp_solver",
                          "lcp_tolerance",
                          "lcp_max_iterations",
                          "event_samples",
                          "root_tolerance",
                          "zeno",
                          "zeno.max_events",
                          "zeno.window",
                          "time_events"}) {
    EXPECT_NE(doc.find("`" + std::string(key) + "`"), std::string::npos) << key;
  }
}

TEST(SceneTest, LoadSceneFileNamesTheFile) {
  try {
    LoadSceneFile("/nonexistent/dir/scene.yaml");
    FAIL() << "no error for a missing file";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/dir/scene.yaml");
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "saltus_scene_test_bad.yaml";
  std::ofstream(path) << Edit("mass: 1\n", "mass: -3\n");
  try {
    LoadSceneFile(path.string());
    FAIL() << "negative mass accepted";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.line(), 5);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace saltus::tools
