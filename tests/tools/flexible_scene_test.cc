// Planar scenes with `flexible_bodies` (docs/scene-format.md, engine/flexible_beam.h): parsing
// into the model, every bad-input case as a SceneError at the item's file line (exit 2 from the
// CLI, nothing written), and the examples in examples/flexible/ through `saltus run`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "engine/flexible_beam.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"
#include "tests/tools/numeric_csv.h"
#include "tests/tools/scene_error_support.h"
#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

// A rigid link pinned to the tip node of a flexible beam, the beam's tip touching a stop.
const std::string kScene = R"(scene: flexible
gravity: [0, -9.81]
bodies:
  - name: link
    mass: 0.5
    inertia: 0.01
    position: [1.2, 0, 0]
flexible_bodies:
  - name: beam
    length: 1.0
    E: 7.0e10
    density: 2700
    width: 0.02
    height: 0.01
    elements: 4
    modes: 3
    reference: clamped
    modal_damping: 0.02
joints:
  - name: pivot
    type: revolute
    body_a: ground
    body_b: beam
  - name: tip_pin
    type: revolute
    body_a: beam
    body_b: link
    node_a: 4
    point_b: [-0.2, 0]
forces:
  - name: push
    type: load
    body: beam
    node: 2
    force: [0, -1]
contacts:
  - name: stop
    type: point_line
    body_a: ground
    body_b: beam
    node_b: 3
    point_a: [0, -0.5]
    normal_a: [0, 1]
simulation:
  t_end: 0.2
  integrator: dopri5
)";

std::string Edit(const std::string& from, const std::string& to) {
  std::string yaml = kScene;
  const std::size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the scene";
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return yaml;
}

using test_support::ExpectSceneErrorAt;
using test_support::LineOf;

TEST(FlexibleScene, FlexibleBodiesMapToTheModel) {
  const Scene scene = ParseScene(kScene, "test.yaml");
  ASSERT_EQ(scene.bodies.size(), 2u);
  ASSERT_TRUE(scene.bodies[1].beam.has_value());
  const engine::BeamProperties& beam = *scene.bodies[1].beam;
  EXPECT_EQ(beam.elements, 4);
  EXPECT_EQ(beam.modes, 3);
  EXPECT_DOUBLE_EQ(beam.area, 0.02 * 0.01);
  EXPECT_DOUBLE_EQ(beam.second_moment, 0.02 * 1e-6 / 12.0);  // w h³/12, h in the plane
  EXPECT_EQ(scene.joints[1].node_a, 4);
  EXPECT_EQ(scene.loads[0].node, 2);
  EXPECT_EQ(scene.contacts[0].node_b, 3);
  const auto system = BuildSystem(scene);
  EXPECT_EQ(system->nq(), 3 + 3 + 3);
  EXPECT_EQ(system->PositionName(6), "beam.eta1");
  // The tip pin's length-free check: node 4 of the undeformed beam is at x = 1, the link's
  // point at 1.2 − 0.2: the scene is consistent.
  Eigen::VectorXd g;
  system->ConstraintValues(0.0, system->model().InitialPositions(), std::vector<int>{0, 1, 2, 3},
                           &g);
  EXPECT_LT(g.norm(), 1e-15);
}

TEST(FlexibleScene, BadInputIsReportedAtItsLine) {
  ExpectSceneErrorAt(Edit("    E: 7.0e10\n", "    E: 0\n"), "    E: 0", {"E must be > 0"});
  ExpectSceneErrorAt(Edit("    density: 2700\n", "    density: -1\n"), "    density: -1",
                     {"density must be > 0"});
  ExpectSceneErrorAt(Edit("    width: 0.02\n", "    width: 0\n"), "    width: 0",
                     {"width must be > 0"});
  ExpectSceneErrorAt(Edit("    modes: 3\n", "    modes: 13\n"), "    modes: 13",
                     {"flexible body 'beam'", "modes must be at most 12"});
  ExpectSceneErrorAt(Edit("    elements: 4\n", "    elements: 0\n"), "    elements: 0",
                     {"elements must be an integer in [1, 500], got 0"});
  ExpectSceneErrorAt(Edit("    reference: clamped\n", "    reference: clamp\n"),
                     "    reference: clamp",
                     {"reference 'clamp' is unknown", "did you mean 'clamped'"});
  ExpectSceneErrorAt(Edit("    node_a: 4\n", "    node_a: 5\n"), "    node_a: 5",
                     {"joint 'tip_pin'", "node_a 5 does not exist", "nodes 0..4"});
  ExpectSceneErrorAt(Edit("    point_b: [-0.2, 0]\n", "    point_b: [-0.2, 0]\n    node_b: 1\n"),
                     "    node_b: 1", {"node_b needs a flexible body", "'link' is not one"});
  ExpectSceneErrorAt(Edit("    node: 2\n", "    node: 2\n    point: [0.1, 0]\n"), "    node: 2",
                     {"force 'push'", "node and point are exclusive"});
  ExpectSceneErrorAt(Edit("    node_b: 3\n", "    node_b: 9\n"), "    node_b: 9",
                     {"contact 'stop'", "node_b 9 does not exist"});
  // disk_beam: body_b must be flexible; no node_b (its point is found).
  const std::string disk_beam =
      "    type: disk_beam\n    body_a: ground\n    body_b: beam\n"
      "    point_a: [0.5, -0.5]\n    radius_a: 0.1\n"
      "    radius_b: 0.005\n";
  const std::string stop =
      "    type: point_line\n    body_a: ground\n    body_b: beam\n    node_b: 3\n"
      "    point_a: [0, -0.5]\n    normal_a: [0, 1]\n";
  EXPECT_NO_THROW(ParseScene(Edit(stop, disk_beam), "test.yaml"));
  ExpectSceneErrorAt(Edit(stop, disk_beam + "    node_b: 2\n"), "    node_b: 2",
                     {"contact 'stop'", "does not apply to a disk_beam contact"});
  // Friction: its own key only, >= 0 (simulation.friction does not apply to it).
  const Scene frictional = ParseScene(Edit(stop, disk_beam + "    friction: 0.3\n"), "test.yaml");
  const auto it = std::find_if(frictional.contacts.begin(), frictional.contacts.end(),
                               [](const contact::PlanarContact& c) { return c.name == "stop"; });
  ASSERT_NE(it, frictional.contacts.end());
  EXPECT_EQ(it->friction, 0.3);
  ExpectSceneErrorAt(Edit(stop, disk_beam + "    friction: -0.3\n"), "    friction: -0.3",
                     {"contact 'stop'", "friction"});
  ExpectSceneErrorAt(
      Edit(stop,
           "    type: disk_beam\n    body_a: ground\n    body_b: link  # rigid\n    radius_a: 0.1\n"
           "    radius_b: 0\n"),
      "    body_b: link  # rigid", {"must be a flexible body", "'link' is not one"});
}

// Writes `yaml` to <dir>/bad.yaml and runs `saltus run` on it: expects exit 2, "<file>:<line>" of
// the first line equal to `line` in stderr, one of `names` (the refused item), `message`, and no
// output directory.
void ExpectCliRefusesAtLine(const std::filesystem::path& dir, const std::string& yaml,
                            const std::string& line, const std::vector<std::string>& names,
                            const std::string& message) {
  namespace fs = std::filesystem;
  const fs::path scene = dir / "bad.yaml";
  std::ofstream(scene) << yaml;
  std::ostringstream out, err;
  const fs::path written = dir / "out";
  const std::vector<std::string> args = {"run", scene.string(), "--out", written.string()};
  EXPECT_EQ(RunCli(args, out, err), kExitBadInput);
  const std::string where = scene.string() + ":" + std::to_string(LineOf(yaml, line));
  EXPECT_NE(err.str().find(where), std::string::npos) << err.str();
  const bool named = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return err.str().find(name) != std::string::npos;
  });
  EXPECT_TRUE(named) << err.str();
  EXPECT_NE(err.str().find(message), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(written));
}

// One bad-input case of a CLI test: `from` replaced by `to` in the scene, refused at the first
// line equal to `line` with `message`.
struct CliCase {
  std::string from, to, line, message;
};

// Runs every case through `saltus run` in a fresh temporary directory (ExpectCliRefusesAtLine,
// naming one of `names`), then the unedited scene, which must exit 0 and write its trajectory.
void ExpectCliRefusesEachEdit(const std::string& prefix, const std::string& scene,
                              const std::vector<std::string>& names,
                              const std::vector<CliCase>& cases) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / (prefix + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const CliCase& c : cases) {
    SCOPED_TRACE(c.to);
    std::string yaml = scene;
    const std::size_t at = yaml.find(c.from);
    ASSERT_NE(at, std::string::npos) << "test bug: '" << c.from << "' not in the scene";
    yaml.replace(at, c.from.size(), c.to);
    ExpectCliRefusesAtLine(dir, yaml, c.line, names, c.message);
  }
  std::ofstream(dir / "good.yaml") << scene;
  std::ostringstream out, err;
  const std::vector<std::string> args = {"run", (dir / "good.yaml").string(), "--out",
                                         (dir / "good").string()};
  EXPECT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  EXPECT_TRUE(fs::exists(dir / "good" / "trajectory.csv"));
  fs::remove_all(dir);
}

// Issue 22 §4 through the CLI: each bad item exits 2 naming the item, the file and the line,
// and writes nothing; the unedited scene runs.
TEST(FlexibleScene, CliExitsTwoWithFileAndLineAndWritesNothing) {
  const std::string section = "    width: 0.02\n    height: 0.01\n";
  ExpectCliRefusesEachEdit(
      "saltus_flexible_", kScene, {"flexible body 'beam'", "joint 'tip_pin'"},
      {
          {"    E: 7.0e10\n", "    E: 0\n", "    E: 0", "E must be > 0"},
          {"    E: 7.0e10\n", "    E: -2.0e11\n", "    E: -2.0e11", "E must be > 0"},
          {"    density: 2700\n", "    density: 0\n", "    density: 0", "density must be > 0"},
          {"    length: 1.0\n", "    length: -1.0\n", "    length: -1.0", "length must be > 0"},
          {"    width: 0.02\n", "    width: 0\n", "    width: 0", "width must be > 0"},
          {"    height: 0.01\n", "    height: -0.01\n", "    height: -0.01", "height must be > 0"},
          {section, "    area: 0\n    second_moment: 1.0e-9\n", "    area: 0", "area must be > 0"},
          {section, "    area: 2.0e-4\n    second_moment: -1.0e-9\n", "    second_moment: -1.0e-9",
           "second_moment must be > 0"},
          {"    modes: 3\n", "    modes: 40\n", "    modes: 40", "modes must be at most 12"},
          {"    node_a: 4\n", "    node_a: 5\n", "    node_a: 5", "node_a 5 does not exist"},
          {"    reference: clamped\n", "    reference: clamped\n    reduction: craig_bamton\n",
           "    reduction: craig_bamton", "reduction 'craig_bamton' is unknown"},
          {"    reference: clamped\n",
           "    reference: clamped\n    reduction: craig_bampton\n    boundary_nodes: [2, 7]\n",
           "    boundary_nodes: [2, 7]", "boundary node 7 does not exist"},
          // The default boundary: node 4, where tip_pin attaches (3 coordinates > 2 modes).
          {"    modes: 3\n", "    modes: 2\n    reduction: craig_bampton\n", "    modes: 2",
           "modes must be at least 3 with the craig_bampton reduction"},
      });
}

// reduction: craig_bampton in a scene: without boundary_nodes the boundary is the nodes where
// joints attach (here node 4, tip_pin; the hub joint `pivot` attaches at the frame origin, no
// node), with them the listed nodes.
TEST(FlexibleScene, CraigBamptonBoundaryIsTheJointNodesOrTheList) {
  const Scene joints = ParseScene(
      Edit("    reference: clamped\n", "    reference: clamped\n    reduction: craig_bampton\n"),
      "test.yaml");
  EXPECT_EQ(joints.bodies[1].beam->reduction, engine::BeamReduction::kCraigBampton);
  EXPECT_EQ(joints.bodies[1].beam->boundary_nodes, std::vector<int>({4}));
  const Scene listed =
      ParseScene(Edit("    modes: 3\n    reference: clamped\n",
                      "    modes: 6\n    reference: clamped\n    reduction: craig_bampton\n"
                      "    boundary_nodes: [4, 2]\n"),
                 "test.yaml");
  EXPECT_EQ(listed.bodies[1].beam->boundary_nodes, std::vector<int>({4, 2}));
  EXPECT_EQ(listed.bodies[1].beam->modes, 6);
  EXPECT_NO_THROW(BuildSystem(listed));
}

// Simeon's flexible slider crank against the published reference solution of the Test Set for
// IVP Solvers (Mazzia & Magherini, Release 2.4, 2008, problem "crank"; Simeon, Math. Modelling
// of Systems 2 (1996) 1-18): at t = 0.1 s, after 2.4 crank turns at 150 rad/s, the amplitude of
// the first lateral mode sin(πx/L), which is the mid-span deflection (the second mode
// sin(2πx/L) vanishes there), is q₁ = 1.893192460247178e-4 m (the test set's reference, from
// its source crank.f). The test set's model: linear stiffness (no geometric stiffening), no
// damping, 2 lateral sine modes and a quadratic axial field, started from its consistent
// initial values ("close to smooth motion": lateral rates q̇₁ = 0.444896105, q̇₂ = 4.63434311e-3
// m/s, axial values of order 1e-5 m). Here: examples/flexible/slider_crank.yaml with
// geometric_stiffening: false and 2 modes (the 2 lowest pinned modes, the FE twins of the two
// sines), the lateral rates projected on the modes (η̇ = Φᵀ M ẋ of the nodal field); the rod is
// axially rigid, the one difference of the model left (its axial field carries 1e-5 m).
TEST(FlexibleScene, SimeonSliderCrankMidSpanDeflectionMatchesTheTestSetReference) {
  std::ifstream in(std::string(SALTUS_EXAMPLES_DIR) + "/flexible/slider_crank.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"    modes: 4\n", "    modes: 2\n"},
        {"    reference: pinned\n", "    reference: pinned\n    geometric_stiffening: false\n"}}) {
    const std::size_t at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
  }
  const Scene scene = ParseScene(yaml, "slider_crank.yaml");
  const auto system = BuildSystem(scene);
  const engine::PlanarModel& model = system->model();
  const int rod = 2;  // crank, slider, then the flexible rod
  const engine::FlexibleBeam& beam = *model.beam(rod);
  const double L = beam.length(), pi = std::numbers::pi;
  Eigen::VectorXd x_dot = Eigen::VectorXd::Zero(beam.fe_mass().rows());
  for (int k = 0; k < beam.num_nodes(); ++k) {
    const double X = beam.NodeX(k);
    x_dot(3 * k + 1) =
        0.444896105 * std::sin(pi * X / L) + 4.63434311e-3 * std::sin(2 * pi * X / L);
    x_dot(3 * k + 2) = 0.444896105 * pi / L * std::cos(pi * X / L) +
                       4.63434311e-3 * 2 * pi / L * std::cos(2 * pi * X / L);
  }
  Eigen::VectorXd v = model.InitialVelocities();
  v.segment(model.Offset(rod) + 3, 2) = beam.modes().transpose() * beam.fe_mass() * x_dot;
  events::SimulationOptions options = scene.options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-9;
  options.integrator_options.atol = 1e-12;
  events::Simulation sim(system, options);
  sim.SetState(0.0, model.InitialPositions(), v);
  ASSERT_EQ(sim.AdvanceTo(0.1).status, events::RunStatus::kFinished);
  const double mid_span = beam.PointAt(0.5 * L).sw.dot(sim.q().segment(model.Offset(rod) + 3, 2));
  const double reference = 1.893192460247178e-4;
  std::cout << "mid-span deflection at t = 0.1 s: " << mid_span << " m (test set " << reference
            << ", relative difference " << (mid_span - reference) / reference << ")\n";
  // Measured +0.089 %. The bound, 0.5 %, leaves room for the model differences above and still
  // tells the cases apart: started undeformed the value is −1.41e-4 m (−175 %), and with
  // geometric stiffening on (the axial load stiffens the rod) 2.33e-4 m (+23 %).
  EXPECT_NEAR(mid_span, reference, 5e-3 * reference);
}

// The mid-span deflection w(t) = s_w(L/2)·η of the rod of a flexible slider-crank example at
// the output times 0.25 ms … 10 ms (rtol 1e-8), with the rod's `modes` replaced when `modes` > 0.
std::vector<double> SliderCrankMidSpan(const std::string& example, int modes) {
  std::ifstream in(std::string(SALTUS_EXAMPLES_DIR) + "/flexible/" + example);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  if (modes > 0) {
    const std::size_t at = yaml.find("    modes: 4\n");
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) yaml.replace(at, 13, "    modes: " + std::to_string(modes) + "\n");
  }
  const Scene scene = ParseScene(yaml, example);
  const auto system = BuildSystem(scene);
  const int rod = 2;  // crank, slider, then the flexible rod
  const engine::FlexibleBeam& beam = *system->model().beam(rod);
  const Eigen::RowVectorXd mid = beam.PointAt(0.5 * beam.length()).sw;
  events::SimulationOptions options = scene.options;
  options.integrator_options.rtol = 1e-8;
  options.integrator_options.atol = 1e-11;
  events::Simulation sim(system, options);
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  std::vector<double> w;
  for (int k = 1; k <= 40; ++k) {
    EXPECT_EQ(sim.AdvanceTo(2.5e-4 * k).status, events::RunStatus::kFinished);
    w.push_back(mid.dot(sim.q().segment(system->model().Offset(rod) + 3, beam.num_modes())));
  }
  return w;
}

// Largest |a_k − b_k| relative to the largest |b_k|.
double RelativeMaxDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    diff = std::max(diff, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return diff / scale;
}

// examples/flexible/slider_crank_craig_bampton.yaml against slider_crank.yaml: the same rod,
// 4 modes each (Craig–Bampton: 3 constraint modes of the pin nodes + 1 fixed-interface mode),
// and both against an 8-mode free-interface reference (the 6-element rod has 18; 4 against 12
// modes differ by 0.15 % over 20 ms, so 8 modes are converged well below the bounds here). Over
// the first 10 ms (1.5 crank turns; the rod started undeformed rings at ≈ 1e3 rad/s on top of
// the forced response) the mid-span deflection follows the reference: measured 0.11 %
// (free-interface) and 0.61 % (Craig–Bampton, whose one fixed-interface mode is the rod's
// clamped–clamped-like bending). The bounds, 0.5 % and 1 %, are those figures with margin.
TEST(FlexibleScene, CraigBamptonSliderCrankFollowsTheConvergedRod) {
  const std::vector<double> reference = SliderCrankMidSpan("slider_crank.yaml", 8);
  const double free_interface =
      RelativeMaxDifference(SliderCrankMidSpan("slider_crank.yaml", 0), reference);
  const double craig_bampton =
      RelativeMaxDifference(SliderCrankMidSpan("slider_crank_craig_bampton.yaml", 0), reference);
  std::cout << "mid-span deflection over 10 ms against 8 free-interface modes: 4 free-interface "
            << "modes " << free_interface << ", Craig–Bampton (3 + 1) " << craig_bampton << "\n";
  EXPECT_LT(free_interface, 5e-3);
  EXPECT_LT(craig_bampton, 1e-2);
}

// examples/flexible/*.yaml through `saltus run` (the stiff ones shortened): every run finishes,
// the energy never increases at an impact on the beam, and the spin-up stays bounded.
TEST(FlexibleScene, ExamplesRunThroughTheCli) {
  namespace fs = std::filesystem;
  const fs::path examples = fs::path(SALTUS_EXAMPLES_DIR) / "flexible";
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_flexible_examples_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const struct {
    const char* name;
    const char* t_end;  // empty: the scene's
  } runs[] = {{"spin_up", ""},          {"beam_stop", ""},          {"beam_on_cylinder", ""},
              {"slider_crank", "0.02"}, {"slider_crank_rigid", ""}, {"rotating_beam", "0.2"}};
  for (const auto& run : runs) {
    SCOPED_TRACE(run.name);
    std::vector<std::string> args = {"run", (examples / (std::string(run.name) + ".yaml")).string(),
                                     "--out", (dir / run.name).string()};
    if (*run.t_end) args.insert(args.end(), {"--t-end", run.t_end});
    std::ostringstream out, err;
    ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  }
  // beam_stop (impacts on node 6) and beam_on_cylinder (impacts between nodes): none gains
  // energy (round-off margin 1e-12 of the energy).
  for (const char* name : {"beam_stop", "beam_on_cylinder"}) {
    SCOPED_TRACE(name);
    std::ifstream events(dir / name / "events.csv");
    std::string line;
    std::getline(events, line);
    int impacts = 0;
    while (std::getline(events, line)) {
      std::vector<std::string> f;
      std::stringstream fields(line);
      for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
      if (f[1] != "impact") continue;
      ++impacts;
      const double before = std::stod(f[4]), after = std::stod(f[5]);
      EXPECT_LE(after, before + 1e-12 * std::max(1.0, std::abs(before))) << "t = " << f[0];
    }
    EXPECT_GT(impacts, 0);
  }
  // spin_up: the beam's tip deflection w = s_w(L)·η stays below 0.6 m (peak 0.573 m, see
  // tests/engine/flexible_benchmarks_test.cc, which compares it with the quasi-static response).
  const Scene scene = LoadSceneFile((examples / "spin_up.yaml").string());
  const auto system = BuildSystem(scene);
  const engine::FlexibleBeam& beam = *system->model().beam(0);
  const Eigen::RowVectorXd tip = beam.PointAt(beam.length()).sw;
  const test_support::NumericCsv trajectory =
      test_support::ReadNumericCsv(dir / "spin_up" / "trajectory.csv");
  const std::size_t eta1 = trajectory.Column("beam.eta1");
  double peak = 0.0;
  for (const std::vector<double>& row : trajectory.rows) {
    double w = 0.0;
    for (int i = 0; i < beam.num_modes(); ++i)
      w += tip(i) * row[eta1 + static_cast<std::size_t>(i)];
    peak = std::max(peak, std::abs(w));
  }
  EXPECT_GT(peak, 0.5);
  EXPECT_LT(peak, 0.6);
  fs::remove_all(dir);
}

// examples/flexible/sliding_beam.yaml: a free beam sliding on its two end nodes with friction
// μ = 0.3 at v0 = 1 m/s. While both ends slide, m ẍ = −μ (N_heel + N_toe) and the normal
// impulses add up to m g t + m ẏ_cm(t), so ẋ = v0 − μ g t − μ ẏ_cm: the beam stops at
// t = v0/(μ g) (ẏ_cm = 0 again once the sag has settled), after x = v0²/(2 μ g) − μ Δy_cm. The
// frame of a free beam is its mean axes, whose origin is the centre of mass to second order in
// the deflection ((sag/L)² ≈ 1e-8 m); the integration (rtol 1e-6) and the stick event's location
// add ~1e-7. Tolerances 1e-6 on both (measured with DOPRI5: 2.5e-8 m, 2.1e-7 s). After the stop
// both ends stick: their two tangential rows differ only by the foreshortening of the bending
// modes at the sagging toe (1e-3 entries, σ_min/σ_max of G = 2.4e-4), and the implicit schemes'
// Newton matrices are singular to working precision unless equilibrated (integrators/newton.h):
// BDF stopped there with a linear solve failure at t = 0.40 s before it was. The run must reach
// t_end with the beam at rest, where it stopped. The first-order half_implicit leaves both ends on
// their cones' boundary after the stop (an equilibrium, |λ_T| = μ λ_N at each end to 1e-14), and
// the noise of their nearly dependent stick rows makes the stick → slip functions cross: it
// stopped on a stick–slip accumulation at 0.430 s (issue 17 §3) before the band of the boundary
// (events/witness.h). Its switches after the stop are round-off slides (5e-12 m in all,
// measured; bound 1e-9 m for every scheme), and its position carries the error of a first-order
// scheme (5.9e-5 m from the closed form at rtol 1e-6, measured; bound 1e-4 m).
struct SlidingBeamCase {
  const char* integrator;
  double position_tolerance;  // m, of x(t_end) against the closed form
};

class SlidingBeam : public ::testing::TestWithParam<SlidingBeamCase> {};

TEST_P(SlidingBeam, StopsAtTheClosedFormAndStaysThere) {
  namespace fs = std::filesystem;
  const std::string integrator = GetParam().integrator;
  const fs::path dir = fs::temp_directory_path() /
                       ("saltus_flexible_sliding_" + integrator + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::vector<std::string> args = {
      "run",          (fs::path(SALTUS_EXAMPLES_DIR) / "flexible" / "sliding_beam.yaml").string(),
      "--out",        dir.string(),
      "--integrator", integrator};
  std::ostringstream out, err;
  ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  const double v0 = 1.0, mu = 0.3, g = 9.81;
  std::ifstream events(dir / "events.csv");
  std::string line;
  double t_stop = -1.0;  // the first stick of both ends
  while (std::getline(events, line) && t_stop < 0) {
    if (line.find(",stick,heel;toe,") != std::string::npos) t_stop = std::stod(line);
  }
  EXPECT_NEAR(t_stop, v0 / (mu * g), 1e-6);
  const test_support::NumericCsv trajectory = test_support::ReadNumericCsv(dir / "trajectory.csv");
  const auto t = trajectory.Column("t"), x = trajectory.Column("beam.x");
  double x_stop = 0.0;
  for (const std::vector<double>& row : trajectory.rows) {
    if (row[t] == t_stop) x_stop = row[x];  // the event's rows
  }
  const std::vector<double>& last = trajectory.rows.back();
  EXPECT_NEAR(last[t], 0.5, 1e-12);                       // t_end reached
  EXPECT_NEAR(last[x], x_stop, 1e-9);                     // at rest where it stopped
  const double drop = last[trajectory.Column("beam.y")];  // y_cm(0) = 0
  EXPECT_LT(drop, -5e-5);                                 // the sag is there (9.1e-5 m)
  EXPECT_NEAR(last[x], v0 * v0 / (2.0 * mu * g) - mu * drop, GetParam().position_tolerance);
  EXPECT_NEAR(last[trajectory.Column("beam.vx")], 0.0, 1e-9);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    FlexibleScene, SlidingBeam,
    ::testing::Values(SlidingBeamCase{"dopri5", 1e-6}, SlidingBeamCase{"hem5", 1e-6},
                      SlidingBeamCase{"phem56", 1e-6}, SlidingBeamCase{"generalized_alpha", 1e-6},
                      SlidingBeamCase{"bdf", 1e-6}, SlidingBeamCase{"half_implicit", 1e-4}),
    [](const auto& name) { return std::string(name.param.integrator); });

}  // namespace
}  // namespace saltus::tools

namespace saltus::tools {
namespace {

// Issue 22 §3: the spatial flexible examples through `saltus run`. Energy T + V, and for the
// free beam the linear momentum and the angular momentum about the world origin, from each
// trajectory row: the generalized momentum M v holds them exactly (its (ṙ) entries are ∂T/∂ṙ =
// the linear momentum p, its (ω) entries ∂T/∂ω = the body-frame angular momentum L̄_o about the
// frame origin; about the world origin L = R L̄_o + r × p). Bound: DOPRI5's local error is below
// rtol relative to the state per accepted step, and these quantities are quadratic in it, so
// their drift is at most 2 N rtol over N steps (as in tests/engine/spatial_flexible_tumbling_test).
// A spatial flexible body pinned at node 0 (the keys of examples/flexible/pinned_beam_3d.yaml).
constexpr const char* kSpatialScene = R"(scene: s
dimension: 3
flexible_bodies:
  - name: beam
    length: 1.0
    E: 7.0e10
    density: 2700
    area: 2.0e-4
    second_moment: 1.7e-9
    second_moment_xz: 6.7e-9
    elements: 4
    modes: 4
joints:
  - name: pivot
    type: spherical
    body_a: ground
    body_b: beam
    node_b: 0
simulation:
  t_end: 0.1
)";

std::string EditSpatial(const std::string& from, const std::string& to) {
  std::string yaml = kSpatialScene;
  const std::size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the scene";
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return yaml;
}

TEST(SpatialFlexibleScene, BadInputIsReportedAtItsLine) {
  using test_support::ExpectSceneErrorAt;
  ExpectSceneErrorAt(EditSpatial("    E: 7.0e10\n", "    E: -1\n"), "    E: -1",
                     {"flexible body 'beam'", "E must be > 0"});
  ExpectSceneErrorAt(EditSpatial("    density: 2700\n", "    density: 0\n"), "    density: 0",
                     {"density must be > 0"});
  ExpectSceneErrorAt(EditSpatial("    second_moment_xz: 6.7e-9\n", "    second_moment_xz: -2\n"),
                     "    second_moment_xz: -2", {"second_moment_xz must be > 0"});
  ExpectSceneErrorAt(EditSpatial("    length: 1.0\n", "    length: 0\n"), "    length: 0",
                     {"length must be > 0"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 21\n"), "    modes: 21",
                     {"flexible body 'beam'", "modes must be at most 20"});
  // Craig–Bampton: at least the 5 boundary coordinates of node 4 (u, v, θ_z, w, θ_y); boundary
  // nodes that exist; a known reduction.
  ExpectSceneErrorAt(
      EditSpatial("    modes: 4\n",
                  "    modes: 4\n    reduction: craig_bampton\n    boundary_nodes: [4]\n"),
      "    modes: 4", {"flexible body 'beam'", "modes must be at least 5", "5 boundary"});
  ExpectSceneErrorAt(
      EditSpatial("    modes: 4\n",
                  "    modes: 6\n    reduction: craig_bampton\n    boundary_nodes: [4, 9]\n"),
      "    boundary_nodes: [4, 9]", {"boundary node 9 does not exist"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 4\n    reduction: guyan\n"),
                     "    reduction: guyan", {"reduction 'guyan' is unknown"});
  ExpectSceneErrorAt(EditSpatial("    node_b: 0\n", "    node_b: 5\n"), "    node_b: 5",
                     {"joint 'pivot'", "node_b 5 does not exist", "nodes 0..4"});
  ExpectSceneErrorAt(EditSpatial("    node_b: 0\n", "    node_b: 0\n    point_b: [0, 0, 0]\n"),
                     "    node_b: 0", {"node_b and point_b are exclusive"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 4\n    modal_position: [1, 2]\n"),
                     "    modal_position: [1, 2]", {"modal_position must be a list of 4 numbers"});
  // Torsion (St Venant): G or ν, not both; J only with them; 6n modes with torsion.
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 4\n    shear_modulus: -3\n"),
                     "    shear_modulus: -3",
                     {"flexible body 'beam'", "shear_modulus must be > 0"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 4\n    poisson_ratio: 0.7\n"),
                     "    poisson_ratio: 0.7", {"poisson_ratio must be in (-1, 0.5]"});
  ExpectSceneErrorAt(
      EditSpatial("    modes: 4\n",
                  "    modes: 4\n    shear_modulus: 2.6e10\n    poisson_ratio: 0.3\n"),
      "    poisson_ratio: 0.3", {"either shear_modulus or poisson_ratio"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 4\n    torsion_constant: 1e-9\n"),
                     "    torsion_constant: 1e-9", {"torsion_constant needs shear_modulus"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n",
                                 "    modes: 4\n    poisson_ratio: 0.3\n    torsion_constant: 0\n"),
                     "    torsion_constant: 0", {"torsion_constant must be > 0"});
  ExpectSceneErrorAt(EditSpatial("    node_b: 0\n", "    arm_b: [0, 0.1, 0]\n"),
                     "    arm_b: [0, 0.1, 0]", {"joint 'pivot'", "arm_b needs node_b"});
  ExpectSceneErrorAt(EditSpatial("    modes: 4\n", "    modes: 25\n    poisson_ratio: 0.3\n"),
                     "    modes: 25", {"modes must be at most 24", "torsion"});
}

TEST(SpatialFlexibleScene, LoadsAndTorsionalSpringsAtNodesAreRead) {
  // A load's `node` (force at the node, torque on its section) and a torsional spring on a
  // revolute joint at a node reach the model; a node that does not exist, a node with a point or
  // on a rigid body is refused at its line.
  const std::string forces =
      "forces:\n"
      "  - {name: tip_push, type: load, body: beam, node: 4, force: [0, 1, 0], torque: [1, 0, "
      "0]}\n"
      "  - {name: twist, type: torsional_spring, joint: hinge, stiffness: 2.0}\n";
  const std::string hinge =
      "  - name: hinge\n    type: revolute\n    body_a: ground\n    body_b: beam\n"
      "    node_b: 2\n    axis_a: [0, 1, 0]\n    axis_b: [0, 1, 0]\n";
  const std::string yaml = EditSpatial("simulation:\n", hinge + forces + "simulation:\n");
  const Scene scene = ParseScene(yaml, "s.yaml");
  ASSERT_EQ(scene.spatial.loads.size(), 1u);
  EXPECT_EQ(scene.spatial.loads[0].node, 4);
  ASSERT_EQ(scene.spatial.torsional_springs.size(), 1u);
  const auto system = BuildSpatialSystem(scene);
  EXPECT_EQ(system->model().loads()[0].node, 4);
  EXPECT_EQ(system->model().torsional_springs().size(), 1u);
  using test_support::ExpectSceneErrorAt;
  ExpectSceneErrorAt(EditSpatial("simulation:\n",
                                 "forces:\n  - {name: p, type: load, body: beam, node: 7}\n"
                                 "simulation:\n"),
                     "  - {name: p, type: load, body: beam, node: 7}",
                     {"force 'p'", "node 7 does not exist"});
  ExpectSceneErrorAt(
      EditSpatial("simulation:\n",
                  "forces:\n  - {name: p, type: load, body: beam, node: 1, point: [0, 0, 1]}\n"
                  "simulation:\n"),
      "  - {name: p, type: load, body: beam, node: 1, point: [0, 0, 1]}",
      {"node and point are exclusive"});
}

TEST(FlexibleScene, SpringDampersAtNodesAreRead) {
  // A spring_damper's node_a / node_b (planar and spatial, spatial with arms) reach the model;
  // its default rest length is the distance between the undeformed ends (planar: node 2 at
  // (0.5, 0) and the link's point (1.2, 0.3): √(0.7² + 0.3²)). A node that does not exist, a
  // node with a point and an arm without a node are refused at their line.
  const std::string spring =
      "  - {name: s, type: spring_damper, body_a: beam, node_a: 2, body_b: link, point_b: [0, "
      "0.3], stiffness: 5}\n";
  const Scene scene = ParseScene(Edit("contacts:\n", spring + "contacts:\n"), "s.yaml");
  ASSERT_EQ(scene.springs.size(), 1u);
  EXPECT_EQ(scene.springs[0].node_a, 2);
  EXPECT_EQ(scene.springs[0].node_b, -1);
  EXPECT_NEAR(scene.springs[0].rest_length, std::hypot(0.7, 0.3), 1e-15);
  using test_support::ExpectSceneErrorAt;
  const std::string bad =
      "  - {name: s, type: spring_damper, body_a: beam, node_a: 5, body_b: "
      "link, stiffness: 5}";
  ExpectSceneErrorAt(Edit("contacts:\n", bad + "\ncontacts:\n"), bad,
                     {"force 's'", "node_a 5 does not exist"});
  const std::string with_point =
      "  - {name: s, type: spring_damper, body_a: beam, node_a: 1, "
      "point_a: [0, 0.1], body_b: link, stiffness: 5}";
  ExpectSceneErrorAt(Edit("contacts:\n", with_point + "\ncontacts:\n"), with_point,
                     {"node_a and point_a are exclusive"});
  const std::string on_rigid =
      "  - {name: s, type: spring_damper, body_a: beam, body_b: link, "
      "node_b: 0, stiffness: 5}";
  ExpectSceneErrorAt(Edit("contacts:\n", on_rigid + "\ncontacts:\n"), on_rigid,
                     {"node_b needs a flexible body"});
}

TEST(SpatialFlexibleScene, SpringDampersAtNodesAreRead) {
  const std::string forces =
      "forces:\n"
      "  - {name: s, type: spring_damper, body_a: ground, point_a: [0, 0, 1], body_b: beam, "
      "node_b: 4, arm_b: [0, 0.1, 0], stiffness: 3, damping: 0.5}\n";
  const Scene scene = ParseScene(EditSpatial("simulation:\n", forces + "simulation:\n"), "s.yaml");
  ASSERT_EQ(scene.spatial.springs.size(), 1u);
  EXPECT_EQ(scene.spatial.springs[0].node_b, 4);
  EXPECT_EQ(scene.spatial.springs[0].arm_b, Eigen::Vector3d(0, 0.1, 0));
  const auto system = BuildSpatialSystem(scene);
  EXPECT_EQ(system->model().springs()[0].node_b, 4);
  using test_support::ExpectSceneErrorAt;
  const std::string arm =
      "  - {name: s, type: spring_damper, body_a: ground, body_b: beam, "
      "arm_b: [0, 0.1, 0], stiffness: 3}";
  ExpectSceneErrorAt(EditSpatial("simulation:\n", "forces:\n" + arm + "\nsimulation:\n"), arm,
                     {"arm_b needs node_b"});
  const std::string missing =
      "  - {name: s, type: spring_damper, body_a: ground, body_b: beam, "
      "node_b: 9, stiffness: 3}";
  ExpectSceneErrorAt(EditSpatial("simulation:\n", "forces:\n" + missing + "\nsimulation:\n"),
                     missing, {"node_b 9 does not exist"});
  const std::string with_point =
      "  - {name: s, type: spring_damper, body_a: ground, body_b: "
      "beam, node_b: 1, point_b: [0, 0, 1], stiffness: 3}";
  ExpectSceneErrorAt(EditSpatial("simulation:\n", "forces:\n" + with_point + "\nsimulation:\n"),
                     with_point, {"node_b and point_b are exclusive"});
}

TEST(SpatialFlexibleScene, CraigBamptonBoundaryDefaultsToTheJointNodes) {
  // reduction: craig_bampton without boundary_nodes: the nodes where joints attach (the pivot's
  // node 0); with the list, the list. The model's beam then has the Craig–Bampton modes of the
  // engine (engine/flexible_beam_spatial.h) for those properties.
  const Scene defaulted =
      ParseScene(EditSpatial("    modes: 4\n",
                             "    modes: 4\n    reference: free\n    reduction: craig_bampton\n"),
                 "s.yaml");
  const engine::BeamProperties& beam = *defaulted.spatial.bodies.at(0).beam;
  EXPECT_EQ(beam.reduction, engine::BeamReduction::kCraigBampton);
  EXPECT_EQ(beam.boundary_nodes, std::vector<int>{0});
  const engine::SpatialFlexibleBeam built(beam, defaulted.spatial.bodies.at(0).second_moment_xz);
  EXPECT_EQ(built.num_modes(), 4);
  EXPECT_EQ(engine::SpatialBoundaryCoordinates(beam, false), 5);
  const Scene listed = ParseScene(
      EditSpatial("    modes: 4\n",
                  "    modes: 12\n    reduction: craig_bampton\n    boundary_nodes: [2, 4]\n"),
      "s.yaml");
  EXPECT_EQ(listed.spatial.bodies.at(0).beam->boundary_nodes, (std::vector<int>{2, 4}));
}

TEST(SpatialFlexibleScene, CraigBamptonPendulumIsTheClampedOne) {
  // pinned_beam_3d_craig_bampton.yaml is pinned_beam_3d.yaml with a free beam reduced by
  // Craig–Bampton on the pivot's node 0: rigid motions ⊕ the 4 lowest clamped-free modes, the
  // kinematic space of the clamped example's frame and 4 modes, in another floating frame (the
  // mean axes). Run through the CLI over 0.5 s (a quarter swing), their tips r + R ū(L, η) agree
  // to the second-order terms of the floating frame (foreshortening; deflections ~1e-3 m give
  // ~1e-6 m) and the integration error (rtol 1e-8); bound 1e-5 of the tip's travel. Measured
  // below. The frames differ (the clamped frame stays tangent at the pivot): their orientations
  // part by the root slope, so the test compares the tips, not q.
  namespace fs = std::filesystem;
  const fs::path examples = fs::path(SALTUS_EXAMPLES_DIR) / "flexible";
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_cb_pendulum_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::vector<std::vector<Eigen::Vector3d>> tips;
  for (const std::string name : {"pinned_beam_3d", "pinned_beam_3d_craig_bampton"}) {
    std::ostringstream out, err;
    const std::vector<std::string> args = {"run",     (examples / (name + ".yaml")).string(),
                                           "--out",   (dir / name).string(),
                                           "--t-end", "0.5"};
    ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
    const Scene scene = LoadSceneFile((examples / (name + ".yaml")).string());
    const auto system = BuildSpatialSystem(scene);
    const engine::SpatialFlexibleBeam& beam = *system->model().beam(0);
    const engine::SpatialBeamPoint tip = beam.PointAt(beam.length());
    const test_support::NumericCsv csv =
        test_support::ReadNumericCsv(dir / name / "trajectory.csv");
    std::vector<Eigen::Vector3d> path;
    for (const std::vector<double>& row : csv.rows) {
      const Eigen::VectorXd q =
          Eigen::Map<const Eigen::VectorXd>(row.data() + 1, system->model().num_q());
      path.push_back(q.head<3>() +
                     engine::QuaternionToRotation(q.segment<4>(3)) *
                         beam.Motion(tip, q.tail(beam.num_modes()), Eigen::VectorXd()).u);
    }
    tips.push_back(path);
  }
  ASSERT_EQ(tips[0].size(), tips[1].size());
  double difference = 0.0, travel = 0.0;
  for (std::size_t k = 0; k < tips[0].size(); ++k) {
    difference = std::max(difference, (tips[0][k] - tips[1][k]).norm());
    travel = std::max(travel, (tips[0][k] - tips[0][0]).norm());
  }
  std::cout << "pendulum tips, clamped vs Craig-Bampton: largest difference " << difference
            << " m over a travel of " << travel << " m\n";
  EXPECT_GT(travel, 0.5);
  EXPECT_LT(difference, 1e-5 * travel);
  fs::remove_all(dir);
}

TEST(SpatialFlexibleScene, TorsionKeysGiveGAndJ) {
  // G = E/(2(1 + ν)); J defaults to I_xy + I_xz for area/second_moment sections and to the
  // rectangle's St Venant constant for width/height; 6n modes are accepted with torsion; no key,
  // no torsion.
  const auto torsion_of = [](const std::string& yaml) {
    const Scene scene = ParseScene(yaml, "s.yaml");
    return scene.spatial.bodies.at(0).torsion;
  };
  EXPECT_FALSE(torsion_of(kSpatialScene).has_value());
  const auto from_nu =
      torsion_of(EditSpatial("    modes: 4\n", "    modes: 24\n    poisson_ratio: 0.25\n"));
  ASSERT_TRUE(from_nu.has_value());
  EXPECT_DOUBLE_EQ(from_nu->shear_modulus, 7.0e10 / 2.5);
  EXPECT_DOUBLE_EQ(from_nu->torsion_constant, 1.7e-9 + 6.7e-9);
  const auto given = torsion_of(EditSpatial(
      "    modes: 4\n", "    modes: 4\n    shear_modulus: 2.6e10\n    torsion_constant: 5e-9\n"));
  ASSERT_TRUE(given.has_value());
  EXPECT_EQ(given->shear_modulus, 2.6e10);
  EXPECT_EQ(given->torsion_constant, 5e-9);
  const auto rectangle = torsion_of(
      EditSpatial("    area: 2.0e-4\n    second_moment: 1.7e-9\n    second_moment_xz: 6.7e-9\n",
                  "    width: 0.02\n    height: 0.01\n    shear_modulus: 2.6e10\n"));
  ASSERT_TRUE(rectangle.has_value());
  EXPECT_DOUBLE_EQ(rectangle->torsion_constant, engine::RectangleTorsionConstant(0.02, 0.01));
  // Timoshenko & Goodier §109: a/b = 2 gives J = 0.229 a b³ (3 digits).
  EXPECT_NEAR(rectangle->torsion_constant / (0.02 * 1e-6), 0.229, 0.0005);
}

// Issue 22 §4 for `dimension: 3` scenes through the CLI: each bad item of a spatial flexible body
// (or of a joint at one of its nodes) exits 2 with the file and line, names the item and writes
// nothing; the unedited scene runs.
TEST(SpatialFlexibleScene, CliExitsTwoWithFileAndLineAndWritesNothing) {
  ExpectCliRefusesEachEdit(
      "saltus_spatial_flexible_cli_", kSpatialScene,
      {"flexible body 'beam'", "joint 'pivot'", "shape 'tip'"},
      {
          {"    E: 7.0e10\n", "    E: -1\n", "    E: -1", "E must be > 0"},
          {"    density: 2700\n", "    density: 0\n", "    density: 0", "density must be > 0"},
          {"    second_moment_xz: 6.7e-9\n", "    second_moment_xz: -2\n",
           "    second_moment_xz: -2", "second_moment_xz must be > 0"},
          {"    modes: 4\n", "    modes: 21\n", "    modes: 21", "modes must be at most 20"},
          {"    modes: 4\n",
           "    modes: 4\n    reduction: craig_bampton\n    boundary_nodes: [4]\n", "    modes: 4",
           "modes must be at least 5"},
          {"    node_b: 0\n", "    node_b: 5\n", "    node_b: 5", "node_b 5 does not exist"},
          {"    modes: 4\n", "    modes: 4\n    shear_modulus: 0\n", "    shear_modulus: 0",
           "shear_modulus must be > 0"},
          {"    modes: 4\n", "    modes: 4\n    torsion_constant: 1e-9\n",
           "    torsion_constant: 1e-9", "torsion_constant needs shear_modulus"},
          {"    modes: 4\n", "    modes: 4\n    modal_position: [1, 2]\n",
           "    modal_position: [1, 2]", "modal_position must be a list of 4 numbers"},
          {"simulation:\n",
           "shapes:\n  - {name: tip, body: beam, node: 7, type: sphere, radius: 0.01}\n"
           "simulation:\n",
           "  - {name: tip, body: beam, node: 7, type: sphere, radius: 0.01}",
           "node 7 does not exist"},
          {"simulation:\n",
           "shapes:\n  - {name: tip, body: beam, node: 4, type: capsule, radius: 0.01, "
           "length: 0.1}\nsimulation:\n",
           "  - {name: tip, body: beam, node: 4, type: capsule, radius: 0.01, length: 0.1}",
           "must be a sphere"},
      });
}

TEST(SpatialFlexibleScene, ExamplesConserveEnergyAndMomentaThroughTheCli) {
  namespace fs = std::filesystem;
  const fs::path examples = fs::path(SALTUS_EXAMPLES_DIR) / "flexible";
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_spatial_flexible_" + std::to_string(getpid()));
  fs::remove_all(dir);
  for (const std::string name : {"tumbling_beam", "pinned_beam_3d", "tumbling_twisted_beam",
                                 "pinned_beam_3d_craig_bampton"}) {
    SCOPED_TRACE(name);
    std::ostringstream out, err;
    const std::vector<std::string> args = {"run", (examples / (name + ".yaml")).string(), "--out",
                                           (dir / name).string()};
    ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
    const Scene scene = LoadSceneFile((examples / (name + ".yaml")).string());
    const auto system = BuildSpatialSystem(scene);
    const engine::SpatialModel& model = system->model();
    ASSERT_TRUE(model.has_flexible_bodies());
    const test_support::NumericCsv csv =
        test_support::ReadNumericCsv(dir / name / "trajectory.csv");
    ASSERT_GT(csv.rows.size(), 100u);
    std::ifstream summary(dir / name / "summary.json");
    const std::string text((std::istreambuf_iterator<char>(summary)), {});
    const auto at = text.find("\"accepted_steps\": ");
    ASSERT_NE(at, std::string::npos);
    const double steps = std::stod(text.substr(at + 18));
    const double bound = 2.0 * steps * scene.options.integrator_options.rtol;
    const int nq = model.num_q(), nv = model.num_v();
    double e0 = 0.0, drift_e = 0.0, drift_p = 0.0, drift_l = 0.0, scale_p = 0.0, scale_l = 0.0;
    Eigen::Vector3d p0 = Eigen::Vector3d::Zero(), l0 = Eigen::Vector3d::Zero();
    for (std::size_t k = 0; k < csv.rows.size(); ++k) {
      const std::vector<double>& row = csv.rows[k];
      const Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(row.data() + 1, nq);
      const Eigen::VectorXd v = Eigen::Map<const Eigen::VectorXd>(row.data() + 1 + nq, nv);
      Eigen::MatrixXd M;
      system->MassMatrix(q, &M);
      const Eigen::VectorXd h = M * v;
      const double e = 0.5 * v.dot(h) + system->PotentialEnergy(row[0], q);
      const Eigen::Vector3d p = h.head<3>();
      const Eigen::Vector3d l =
          engine::QuaternionToRotation(q.segment<4>(3)) * h.segment<3>(3) + q.head<3>().cross(p);
      if (k == 0) {
        e0 = e;
        p0 = p;
        l0 = l;
        scale_p = std::max(p.norm(), 1e-300);
        scale_l = std::max(l.norm(), 1e-300);
      }
      drift_e = std::max(drift_e, std::abs(e - e0) / std::abs(e0));
      drift_p = std::max(drift_p, (p - p0).norm() / scale_p);
      drift_l = std::max(drift_l, (l - l0).norm() / scale_l);
    }
    std::cout << name << ": E0 " << e0 << " J, relative drifts: energy " << drift_e
              << ", linear momentum " << drift_p << ", angular momentum " << drift_l << "; "
              << steps << " steps (bound " << bound << ")\n";
    EXPECT_LT(drift_e, bound);
    if (name.rfind("pinned_beam_3d", 0) != 0) {  // free: both momenta conserved
      EXPECT_LT(drift_p, bound);
      EXPECT_LT(drift_l, bound);
    }
  }
  fs::remove_all(dir);
}

// Issue 22 §1: St Venant torsion loaded through joints at arms of a node's section.
// examples/flexible/torsion_pendulum_3d.yaml (see its header): a clamped steel shaft with two
// bobs on spherical joints at the arms ±d of its tip section twists at ω with
// (ωL/c) tan(ωL/c) = ρ I_p L/I_tip (Timoshenko, Young & Weaver), 397.21348 rad/s. The period is
// measured from the zero crossings of bob1's z (linear interpolation between rows Δt = 1e-4 s
// apart: ~Δt (ωΔt)²/6 ≈ 3e-8 s per crossing, 4e-7 of the 5 periods measured). The model's own
// errors: the FE discretisation of the shaft's inertia (1.5 % of I_tip, in error by
// ~(βL/n)²/24 ≈ 4e-5 of itself: 6e-7) and the bending of the shaft under the bobs (none to first
// order: they move oppositely). Bound: 1e-5 relative (measured 2.7e-7). The
// bobs stay on their arms (bob2 mirrors bob1: z₂ = −z₁ within 1e-9 m), and T + V is conserved
// (within 2 N rtol, as above).
TEST(SpatialFlexibleScene, TorsionPendulumSwingsAtTheClosedForm) {
  namespace fs = std::filesystem;
  const fs::path scene_file =
      fs::path(SALTUS_EXAMPLES_DIR) / "flexible" / "torsion_pendulum_3d.yaml";
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_torsion_pendulum_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::ostringstream out, err;
  const std::vector<std::string> args = {"run", scene_file.string(), "--out", dir.string()};
  ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  const test_support::NumericCsv csv = test_support::ReadNumericCsv(dir / "trajectory.csv");
  const std::size_t t = csv.Column("t"), z1 = csv.Column("bob1.z"), z2 = csv.Column("bob2.z");
  std::vector<double> crossings;
  double mirror = 0.0;
  for (std::size_t k = 1; k < csv.rows.size(); ++k) {
    const std::vector<double>& a = csv.rows[k - 1];
    const std::vector<double>& b = csv.rows[k];
    mirror = std::max(mirror, std::abs(b[z1] + b[z2]));
    if (a[z1] > 0.0 && b[z1] <= 0.0) {
      crossings.push_back(a[t] + (b[t] - a[t]) * a[z1] / (a[z1] - b[z1]));
    }
  }
  ASSERT_GE(crossings.size(), 5u);
  const double period =
      (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  const double omega = 2.0 * std::numbers::pi / period, closed = 397.213478;
  std::cout << "torsion pendulum: " << crossings.size() << " down-crossings, omega " << omega
            << " rad/s against " << closed << " (relative " << omega / closed - 1.0
            << "); |z1 + z2| <= " << mirror << " m\n";
  EXPECT_NEAR(omega, closed, 1e-5 * closed);
  EXPECT_LT(mirror, 1e-9);
  fs::remove_all(dir);
}

// Issue 22 §1, §4: a sphere at a node of a spatial flexible body (`node` on a shape) and each
// bad use of the key, reported at its line naming the shape.
std::string SpatialWithShapes(const std::string& tip) {
  return EditSpatial("simulation:\n",
                     "shapes:\n  - {name: floor, body: ground, type: plane, "
                     "offset: -0.3}\n" +
                         tip + "simulation:\n");
}

TEST(SpatialFlexibleScene, ShapesAtNodesAreSpheresOfFlexibleBodies) {
  using test_support::ExpectSceneErrorAt;
  const std::string good = "  - {name: tip, body: beam, node: 4, type: sphere, radius: 0.01}\n";
  const Scene scene = ParseScene(SpatialWithShapes(good), "s.yaml");
  ASSERT_EQ(scene.spatial.contact_pairs.size(), 1u);
  EXPECT_EQ(scene.spatial.contact_pairs[0].name, "floor-tip");
  EXPECT_EQ(scene.spatial.contact_pairs[0].node_a, -1);
  EXPECT_EQ(scene.spatial.contact_pairs[0].node_b, 4);
  const auto bad = [&](const std::string& tip, const std::vector<std::string>& what) {
    ExpectSceneErrorAt(SpatialWithShapes(tip), tip.substr(0, tip.size() - 1), what);
  };
  bad("  - {name: tip, body: beam, node: 5, type: sphere, radius: 0.01}\n",
      {"shape 'tip'", "node 5 does not exist", "nodes 0..4"});
  bad("  - {name: tip, body: beam, node: -1, type: sphere, radius: 0.01}\n", {"node"});
  bad("  - {name: tip, body: ground, node: 1, type: sphere, radius: 0.01}\n",
      {"node needs a flexible body"});
  bad("  - {name: tip, body: beam, node: 4, type: box, half_size: [0.1, 0.1, 0.1]}\n",
      {"shape 'tip'", "must be a sphere"});
  bad("  - {name: tip, body: beam, type: sphere, radius: 0.01}\n",
      {"shape 'tip'", "needs `node: k`"});
  bad("  - {name: tip, body: beam, node: 4, position: [0, 0, 0], type: sphere, radius: 0.01}\n",
      {"node and position are exclusive"});
  bad("  - {name: tip, body: beam, node: 4, quaternion: [1, 0, 0, 0], type: sphere, radius: "
      "0.01}\n",
      {"node and quaternion are exclusive"});
  // The planar form of a contact at a node in a dimension: 3 scene.
  ExpectSceneErrorAt(EditSpatial("simulation:\n",
                                 "contacts:\n  - {name: stop, type: point_line, body_a: ground, "
                                 "body_b: beam, node_b: 4}\nsimulation:\n"),
                     "  - {name: stop", {"not a list of planar contacts", "node: k"});
}

// Issue 22 §1: a sphere swept along the centreline (`node: centreline`), and its bad uses at
// their lines: the shape's own keys at the shape, a partner other than a sphere or a plane at the
// pair's line.
TEST(SpatialFlexibleScene, ShapesAlongTheCentrelineAreSweptSpheres) {
  using test_support::ExpectSceneErrorAt;
  const std::string good =
      "  - {name: tube, body: beam, node: centreline, type: sphere, radius: 0.005}\n";
  const Scene scene = ParseScene(SpatialWithShapes(good), "s.yaml");
  ASSERT_EQ(scene.spatial.contact_pairs.size(), 1u);
  EXPECT_EQ(scene.spatial.contact_pairs[0].name, "floor-tube");
  EXPECT_EQ(scene.spatial.contact_pairs[0].node_a, -1);
  EXPECT_EQ(scene.spatial.contact_pairs[0].node_b, contact::kAlongCentreline);
  const auto bad = [&](const std::string& tube, const std::vector<std::string>& what) {
    ExpectSceneErrorAt(SpatialWithShapes(tube), tube.substr(0, tube.size() - 1), what);
  };
  bad("  - {name: tube, body: beam, node: along, type: sphere, radius: 0.005}\n",
      {"shape 'tube'", "node"});
  bad("  - {name: tube, body: ground, node: centreline, type: sphere, radius: 0.005}\n",
      {"node needs a flexible body"});
  bad("  - {name: tube, body: beam, node: centreline, type: capsule, radius: 0.005, length: "
      "0.1}\n",
      {"shape 'tube'", "must be a sphere"});
  bad("  - {name: tube, body: beam, node: centreline, position: [0, 0, 0], type: sphere, radius: "
      "0.005}\n",
      {"node and position are exclusive"});
  // A box is no partner of the centreline: refused at the pair's line when the model is built.
  const std::string pair_line = "    - {shapes: [post, tube]}";
  const std::string yaml = SpatialWithShapes(good +
                                             "  - {name: post, body: ground, type: box, "
                                             "half_size: [0.1, 0.1, 0.1], position: [0.5, 0, "
                                             "-0.2]}\ncontacts:\n  pairs:\n" +
                                             pair_line + "\n");
  try {
    BuildSpatialSystem(ParseScene(yaml, "test.yaml"));
    ADD_FAILURE() << "a box partner of the centreline was accepted";
  } catch (const SceneError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.line(), test_support::LineOf(yaml, pair_line)) << what;
    EXPECT_NE(what.find("contact pair 'post-tube'"), std::string::npos) << what;
    EXPECT_NE(what.find("touches a sphere or a plane"), std::string::npos) << what;
  }
}

// --vtk draws shapes at their body frame's pose, which a sphere at a node is not: refused at
// the shape's line (exit 2, nothing written).
TEST(SpatialFlexibleScene, VtkIsRefusedForShapesAtNodes) {
  namespace fs = std::filesystem;
  const fs::path file = fs::path(SALTUS_EXAMPLES_DIR) / "flexible" / "beam_tip_stop_3d.yaml";
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_beam_tip_stop_vtk_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::ostringstream out, err;
  const std::vector<std::string> args = {"run", file.string(), "--out", dir.string(), "--vtk"};
  EXPECT_EQ(RunCli(args, out, err), kExitBadInput);
  std::ifstream in(file);
  const std::string yaml((std::istreambuf_iterator<char>(in)), {});
  const int line = test_support::LineOf(yaml, "  - {name: tip, body: beam, node: 4");
  EXPECT_NE(err.str().find(file.string() + ":" + std::to_string(line) + ":"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("shape 'tip' sits at a node"), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(dir));
}

// Issue 22 §1, §2: impacts of a single contact on a spatial flexible body, through `saltus run`.
// At an impact of the single contact with the joint rows J kept (Newton's law on the contact row
// c, J v⁺ = 0), the impulse acts along M⁻¹ cᵀ projected on the joints' null space: with
// A = [J; c] M⁻¹ [J; c]ᵀ the contact's Delassus number is the Schur complement
// W = A_cc − A_cJ A_JJ⁻¹ A_Jc, the normal velocity goes from v_n⁻ to v_n⁺ = −e v_n⁻ and the
// kinetic energy drops by exactly
//   ΔT = (1 − e²)/2 · (v_n⁻)² / W
// (e = 0.5; e = 0 for an impact that closes the contact, the end of an accumulation). W and v_n⁻
// are evaluated from the trajectory's event rows (17 digits), ΔT = energy_before − energy_after of
// events.csv (V does not jump). Bound 1e-10 ΔT + 5e-14 J: ΔT is a difference of energies of
// ≲ 3 J, whose ulp is ≤ 4.4e-16 J. Between events T + V is conserved to the integration: drift
// below 2 N rtol of the largest |T + V|, the bound of
// ExamplesConserveEnergyAndMomentaThroughTheCli; every impact loses energy.
struct ImpactFigures {
  int impacts = 0, opening = 0;
  double worst = 0.0, largest_loss = 0.0, drift = 0.0, bound = 0.0, steps = 0.0;
  double smallest_w = 0.0, largest_w = 0.0;
};

void CheckImpactsLoseTheClosedForm(const std::string& example, const std::string& t_end,
                                   const std::string& contact_name, ImpactFigures* figures) {
  namespace fs = std::filesystem;
  const fs::path file = fs::path(SALTUS_EXAMPLES_DIR) / "flexible" / (example + ".yaml");
  const fs::path dir =
      fs::temp_directory_path() / ("saltus_" + example + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::ostringstream out, err;
  const std::vector<std::string> args = {"run",        file.string(), "--out",
                                         dir.string(), "--t-end",     t_end};
  ASSERT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  const Scene scene = LoadSceneFile(file.string());
  const auto system = BuildSpatialSystem(scene);
  const engine::SpatialModel& model = system->model();
  const int nq = model.num_q(), nv = model.num_v();
  int contact = -1;
  std::vector<int> rows;  // the joint rows, then the contact
  for (int r = 0; r < system->num_constraints(); ++r) {
    if (system->constraint_info(r).name == contact_name) contact = r;
    if (r < system->num_joint_rows()) rows.push_back(r);
  }
  ASSERT_GE(contact, 0);
  const auto nj = static_cast<Eigen::Index>(rows.size());
  rows.push_back(contact);

  const test_support::NumericCsv trajectory = test_support::ReadNumericCsv(dir / "trajectory.csv");
  // events.csv: t, kind, contacts, impulse, energy_before, energy_after, …, modes, …
  std::ifstream events_text(dir / "events.csv");
  std::vector<std::string> kinds, modes;
  std::vector<std::vector<double>> event_values;  // t, energy_before, energy_after
  std::string line;
  std::getline(events_text, line);
  while (std::getline(events_text, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 8u) << line;
    kinds.push_back(f[1]);
    modes.push_back(f[7]);
    event_values.push_back({std::stod(f[0]), std::stod(f[4]), std::stod(f[5])});
  }
  std::ifstream summary(dir / "summary.json");
  const std::string text((std::istreambuf_iterator<char>(summary)), {});
  const auto at = text.find("\"accepted_steps\": ");
  ASSERT_NE(at, std::string::npos);
  ImpactFigures& r = *figures;
  r.steps = std::stod(text.substr(at + 18));
  r.smallest_w = std::numeric_limits<double>::infinity();

  std::size_t next_row = 0;  // the trajectory's two rows of each event, in event order
  double scale = 0.0, previous_after = 0.0;
  for (std::size_t k = 0; k < event_values.size(); ++k) {
    const double t = event_values[k][0];
    const double before = event_values[k][1], after = event_values[k][2];
    scale = std::max({scale, std::abs(before), std::abs(after)});
    if (k > 0) r.drift = std::max(r.drift, std::abs(before - previous_after));
    previous_after = after;
    while (next_row < trajectory.rows.size() && trajectory.rows[next_row][0] != t) ++next_row;
    ASSERT_LT(next_row + 1, trajectory.rows.size()) << "no event rows at t = " << t;
    const std::vector<double>& row_before = trajectory.rows[next_row];
    const std::vector<double>& row_after = trajectory.rows[next_row + 1];
    next_row += 2;
    if (kinds[k] != "impact") continue;
    ++r.impacts;
    EXPECT_LE(after, before + 1e-12 * std::max(1.0, std::abs(before))) << "t = " << t;
    const Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(row_before.data() + 1, nq);
    const Eigen::VectorXd v_minus =
        Eigen::Map<const Eigen::VectorXd>(row_before.data() + 1 + nq, nv);
    const Eigen::VectorXd v_plus = Eigen::Map<const Eigen::VectorXd>(row_after.data() + 1 + nq, nv);
    Eigen::MatrixXd M, G;
    system->MassMatrix(q, &M);
    system->ConstraintJacobian(t, q, rows, &G);
    const Eigen::MatrixXd A = G * M.ldlt().solve(G.transpose());
    const Eigen::VectorXd a_jc = A.col(nj).head(nj);
    const double W = A(nj, nj) - a_jc.dot(A.topLeftCorner(nj, nj).ldlt().solve(a_jc));
    r.smallest_w = std::min(r.smallest_w, W);
    r.largest_w = std::max(r.largest_w, W);
    const double vn_minus = G.row(nj).dot(v_minus), vn_plus = G.row(nj).dot(v_plus);
    const double e = modes[k] == "open" ? 0.5 : 0.0;
    if (e > 0.0) ++r.opening;
    // Relative 1e-9, plus the round-off of the dot products G v themselves (~nv ε |G| ‖v‖∞ on
    // the written state, 1e-13 · ‖v‖∞): the tip's last impacts before it rests approach at
    // ~1e-6 m/s, where 1e-9 of vn is below that round-off (2e-15 measured).
    const double v_scale = std::max(1.0, v_minus.lpNorm<Eigen::Infinity>());
    EXPECT_NEAR(vn_plus, -e * vn_minus, 1e-9 * std::abs(vn_minus) + 1e-13 * v_scale) << "t = " << t;
    const double loss = before - after;
    const double closed_form = 0.5 * (1.0 - e * e) * vn_minus * vn_minus / W;
    EXPECT_NEAR(loss, closed_form, 1e-10 * closed_form + 5e-14) << "t = " << t << " W = " << W;
    r.worst = std::max(r.worst, std::abs(loss - closed_form));
    r.largest_loss = std::max(r.largest_loss, loss);
  }
  r.bound = 2.0 * r.steps * scene.options.integrator_options.rtol * scale;
  std::cout << example << " to " << t_end << " s: " << r.impacts << " impacts (" << r.opening
            << " with e = 0.5), largest loss " << r.largest_loss
            << " J, largest |ΔT − closed form| " << r.worst << " J, W in [" << r.smallest_w << ", "
            << r.largest_w << "] 1/kg; largest T + V change between events " << r.drift
            << " J (bound " << r.bound << ", " << r.steps << " steps)\n";
  EXPECT_LT(r.drift, r.bound);
  fs::remove_all(dir);
}

// examples/flexible/beam_tip_stop_3d.yaml, the tip sphere (node 4) of a spatial beam on a
// spherical joint bouncing on a sloped floor. Measured: the 0.29 J loss of the first impact
// within 1e-14 relative, the others within 2e-15 J (opening impacts) and 2.4e-14 J (the closing
// ones, v_n⁻ ≈ 1e-6 m/s), with W ≈ 15.7–16.0 kg⁻¹.
TEST(SpatialFlexibleScene, BeamTipStopImpactsLoseTheClosedForm) {
  ImpactFigures figures;
  CheckImpactsLoseTheClosedForm("beam_tip_stop_3d", "0.8", "floor-tip", &figures);
  EXPECT_GT(figures.opening, 10);
  EXPECT_GT(figures.largest_loss, 0.1);  // the first impact loses 0.29 J: the check is not vacuous
}

// examples/flexible/ball_on_beam_3d.yaml: a ball dropped on a simply supported spatial beam
// between its nodes (the tube along the centreline, `node: centreline`); the joint rows are the
// spherical pin and the point-on-line roller (5 rows).
TEST(SpatialFlexibleScene, BallOnBeamImpactsLoseTheClosedForm) {
  ImpactFigures figures;
  CheckImpactsLoseTheClosedForm("ball_on_beam_3d", "0.5", "ball-tube", &figures);
  EXPECT_GT(figures.opening, 2);
  // The first impact (v_n ≈ −1.4 m/s) loses half of the ball's 0.049 J: not vacuous.
  EXPECT_GT(figures.largest_loss, 0.01);
  // The beam is in W: the ball alone would give 1/m = 20 kg⁻¹ (measured 25.06 kg⁻¹).
  EXPECT_GT(figures.smallest_w, 1.1 / 0.05);
}

}  // namespace
}  // namespace saltus::tools
