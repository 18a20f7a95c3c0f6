// `saltus compare` (tools/compare.h) and reference solutions (tools/reference.h): the closed
// forms (bouncing disk, free body, spinning top, driven slider-crank), reference files, the error
// against a reference, set files, the study with finished, failed, crashed and timed-out runs,
// and bad input.
#include "tools/compare.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "events/simulation.h"
#include "tools/cli.h"
#include "tools/reference.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

// The bouncing ball of examples/bouncing_ball.yaml over 2 s (four impacts), with its closed form.
constexpr const char* kBouncingDisk = R"(scene: disk
gravity: [0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: 0.004, position: [0.3, 1, 0.2], velocity: [0.5, 0, 1]}
contacts:
  - {name: floor, type: disk_line, body_a: ground, body_b: ball, normal_a: [0, 1], radius_b: 0.1,
     restitution: 0.9}
simulation:
  t_end: 2
reference:
  analytic: bouncing_disk
  step: 0.05
)";

// A pendulum (no closed form): compare makes a reference run.
constexpr const char* kPendulum = R"(scene: pendulum
bodies:
  - {name: link, mass: 1, inertia: 0.083333333333333333, position: [0.5, 0, 0]}
joints:
  - {name: pivot, type: revolute, body_a: ground, body_b: link, point_a: [0, 0], point_b: [-0.5, 0]}
simulation:
  t_end: 1
)";

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("saltus_compare_test_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }

  struct Outcome {
    int code;
    std::string out, err;
  };
  Outcome Compare(std::vector<std::string> args) const {
    args.insert(args.begin(), "compare");
    std::ostringstream out, err;
    const int code = RunCli(args, out, err);
    return {code, out.str(), err.str()};
  }

  fs::path dir_;
};

// Rows of a results.csv as column → value (no quoted commas in the fields read here).
std::vector<std::map<std::string, std::string>> ReadResults(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string h; std::getline(hs, h, ',');) header.push_back(h);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::size_t i = 0;
    bool quoted = false;
    std::string field;
    for (char c : line + ",") {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        row[header.at(i++)] = field;
        field.clear();
      } else {
        field += c;
      }
    }
    EXPECT_EQ(i, header.size()) << line;
    rows.push_back(row);
  }
  return rows;
}

TEST(ToleranceList, ParsesAndRejectsNamingTheItem) {
  const std::vector<double> r = ParseToleranceList("1e-2,1e-4");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0], 1e-2);
  EXPECT_DOUBLE_EQ(r[1], 1e-4);
  for (const std::string bad : {"1e-2,,1e-4", "1e-2;1e-4", "-1e-3", "0", "abc", "", "1e-3,"}) {
    EXPECT_THROW(ParseToleranceList(bad), std::invalid_argument) << bad;
  }
  try {
    ParseToleranceList("1e-2,x3");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'x3'"), std::string::npos) << e.what();
  }
}

TEST(SceneReferenceSection, ParsesAndRejectsNamingTheLine) {
  const std::string base = kPendulum;
  const Scene file = ParseScene(base + "reference: {file: ref/p.csv, step: 0.1}\n", "dir/p.yaml");
  EXPECT_EQ(file.reference.file, "dir/ref/p.csv");  // resolved against the scene's folder
  EXPECT_DOUBLE_EQ(file.reference.step, 0.1);
  EXPECT_EQ(file.reference.line, 8);
  const Scene run = ParseScene(base + "reference: {integrator: dopri5, rtol: 1e-9}\n", "p.yaml");
  EXPECT_EQ(run.reference.integrator, "dopri5");
  EXPECT_DOUBLE_EQ(run.reference.rtol, 1e-9);
  EXPECT_TRUE(ParseScene(base, "p.yaml").reference.integrator.empty());
  const auto message = [&](const std::string& section) {
    try {
      ParseScene(base + section, "p.yaml");
    } catch (const SceneError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("reference: {file: a.csv, analytic: bouncing_disk}\n").find("p.yaml:8:"),
            std::string::npos);
  EXPECT_NE(message("reference: {integrator: nope}\n").find("unknown integrator 'nope'"),
            std::string::npos);
  EXPECT_NE(message("reference: {rtol: 1e-9}\n").find("need integrator"), std::string::npos);
  EXPECT_NE(message("reference: {step: -1}\n").find("step must be > 0"), std::string::npos);
  EXPECT_NE(message("reference: {fille: a.csv}\n").find("unknown key 'fille'"), std::string::npos);
}

TEST_F(CompareTest, AnalyticBouncingDiskMatchesTheClosedForm) {
  const Scene scene = ParseScene(kBouncingDisk, "disk.yaml");
  const auto system = BuildSystem(scene);
  const ReferenceSolution ref = AnalyticReference("bouncing_disk", scene, *system, 0.05);
  ASSERT_EQ(ref.times.size(), 41u);  // 0, 0.05, ..., 2
  ASSERT_EQ(ref.names, (std::vector<std::string>{"ball.x", "ball.y", "ball.theta"}));
  const double g = 9.81, e = 0.9, h = 0.9;
  const double t1 = std::sqrt(2 * h / g), v1 = g * t1;
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double t = ref.times[k];
    double y;
    if (t <= t1) {
      y = 1 - 0.5 * g * t * t;
    } else if (t <= t1 + 2 * e * v1 / g) {  // first rebound
      const double s = t - t1;
      y = 0.1 + e * v1 * s - 0.5 * g * s * s;
    } else {
      continue;
    }
    const auto row = static_cast<Eigen::Index>(k);
    // Same formulas evaluated in another order: round-off of a few ulps of 1 m.
    EXPECT_NEAR(ref.values(row, 1), y, 1e-13) << "t = " << t;
    EXPECT_NEAR(ref.values(row, 0), 0.3 + 0.5 * t, 1e-13);
    EXPECT_NEAR(ref.values(row, 2), 0.2 + 1.0 * t, 1e-13);
  }
  // Scenes that do not fit the closed form are refused, naming the scene.
  const Scene pendulum = ParseScene(kPendulum, "pendulum.yaml");
  try {
    AnalyticReference("bouncing_disk", pendulum, *BuildSystem(pendulum), 0.1);
    FAIL();
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("'pendulum'"), std::string::npos) << ex.what();
  }
  EXPECT_THROW(AnalyticReference("no_such_form", scene, *system, 0.1), std::invalid_argument);
}

TEST_F(CompareTest, ReferenceFileAndErrorAgainstIt) {
  const Scene scene = ParseScene(kPendulum, "pendulum.yaml");
  const auto system = BuildSystem(scene);
  const std::string file = Write("ref.csv", "t,link.x,link.y\n0,0.5,0\n0.5,0.25,-0.25\n1,0,-0.5\n");
  const ReferenceSolution ref = LoadReferenceFile(file, *system, 1.0);
  EXPECT_DOUBLE_EQ(ref.step, 0.5);
  ASSERT_EQ(ref.columns, (std::vector<int>{0, 1}));

  // err = max |q − q_ref| / (1 + |q_ref|) over the recorded times.
  ReferenceRecorder recorder(ref);
  Eigen::VectorXd q(3), v = Eigen::VectorXd::Zero(3);
  q << 0.5, 0, 0;
  recorder.OnOutput(0, q, v);
  q << 0.25, -0.25 + 0.3, 0;  // y off by 0.3 where |y_ref| = 0.25
  recorder.OnOutput(0.5, q, v);
  EXPECT_FALSE(recorder.complete());
  EXPECT_TRUE(std::isinf(recorder.Error()));
  recorder.OnOutput(0.75, q, v);  // not a reference time: ignored
  q << 0, -0.5, 0;
  recorder.OnOutput(1.0, q, v);
  ASSERT_TRUE(recorder.complete());
  EXPECT_NEAR(recorder.Error(), 0.3 / 1.25, 1e-15);  // round-off of the subtraction

  // Bad files name the file and line.
  const auto message = [&](const std::string& text) {
    try {
      LoadReferenceFile(Write("bad.csv", text), *system, 1.0);
    } catch (const std::invalid_argument& ex) {
      return std::string(ex.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("t,link.z\n0,1\n").find("bad.csv:1: column 'link.z'"), std::string::npos);
  EXPECT_NE(message("t,link.x\n0,1\n0.5,x\n").find("bad.csv:3:"), std::string::npos);
  EXPECT_NE(message("t,link.x\n0,1\n0.5,1\n0.7,1\n").find("not on the grid"), std::string::npos);
  EXPECT_NE(message("t,link.x\n0.5,1\n0,1\n").find("increasing"), std::string::npos);
}

TEST_F(CompareTest, StudyRecordsFinishedAndFailedRunsAndErrors) {
  const std::string disk = Write("disk.yaml", kBouncingDisk);
  const std::string pendulum = Write("pendulum.yaml", kPendulum);
  // rtol 1e-30 (with atol = rtol) cannot be met above h_min: that run must fail and be recorded.
  const Outcome o =
      Compare({"--scenes", disk, pendulum, "--integrators", "dopri5", "--rtol", "1e-3,1e-6,1e-30",
               "--out", (dir_ / "out").string(), "--no-plots", "--jobs", "2", "--repeat", "1"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto rows = ReadResults(dir_ / "out" / "results.csv");
  ASSERT_EQ(rows.size(), 6u);
  int failed = 0;
  std::map<std::string, std::map<std::string, double>> error;  // scene → rtol → error
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("integrator"), "dopri5");
    EXPECT_EQ(row.at("formulation"), "index1");
    EXPECT_EQ(row.at("set"), "scenes");
    if (row.at("rtol") == "1.0000000000000001e-30") {
      EXPECT_EQ(row.at("status"), "failed");
      EXPECT_FALSE(row.at("reason").empty());
      EXPECT_TRUE(row.at("error").empty());
      EXPECT_TRUE(row.at("error_over_rtol").empty());
      ++failed;
      continue;
    }
    ASSERT_EQ(row.at("status"), "ok") << row.at("reason");
    EXPECT_GT(std::stol(row.at("accepted_steps")), 0);
    EXPECT_GT(std::stod(row.at("average_step")), 0.0);
    EXPECT_GT(std::stod(row.at("wall_seconds")), 0.0);
    error[row.at("scene")][row.at("rtol")] = std::stod(row.at("error"));
    // error / rtol, both printed to 17 significant digits: equal to a few ulps.
    const double ratio = std::stod(row.at("error")) / std::stod(row.at("rtol"));
    EXPECT_NEAR(std::stod(row.at("error_over_rtol")), ratio, 1e-14 * ratio);
    if (row.at("scene") == "disk") {
      EXPECT_EQ(row.at("reference"), "analytic bouncing_disk");
      EXPECT_EQ(row.at("impacts"), "3");  // at t = 0.428, 1.199 and 1.893 s (closed form)
    } else {
      EXPECT_EQ(row.at("reference"), "run dopri5/index1 rtol=1e-10 atol=1e-12");
    }
  }
  EXPECT_EQ(failed, 2);
  // Free flights are quadratic in t, which DOPRI5 integrates exactly; the error comes from the
  // impact times, located to 1e-12 s (root_tolerance) at speeds below 5 m/s.
  EXPECT_LT(error["disk"]["0.001"], 1e-9);
  // The pendulum: the error falls with the tolerance and stays near it (a global error of a few
  // rtol over one swing), and is far above the reference run's 1e-10.
  EXPECT_LT(error["pendulum"]["9.9999999999999995e-07"], error["pendulum"]["0.001"]);
  EXPECT_LT(error["pendulum"]["0.001"], 1e-1);
  EXPECT_GT(error["pendulum"]["0.001"], 1e-8);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "references" / "pendulum.csv"));
  // One progress line per run on stderr.
  std::size_t lines = 0;
  for (std::size_t p = o.err.find("] "); p != std::string::npos; p = o.err.find("] ", p + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 6u) << o.err;

  // Without plots the per-solver error / rtol summary is written and printed: over the 4 finished
  // runs (the 2 failed ones have no error), the median of the 4 row ratios (mean of the middle
  // two) and the largest, recomputed here from results.csv and printed to 3 digits.
  std::vector<double> ratios;
  for (const auto& row : rows) {
    if (row.at("status") == "ok") ratios.push_back(std::stod(row.at("error_over_rtol")));
  }
  ASSERT_EQ(ratios.size(), 4u);
  std::sort(ratios.begin(), ratios.end());
  char expected[128];
  std::snprintf(expected, sizeof expected, "| dopri5/index1 | 4 | %.3g | %.3g |",
                0.5 * (ratios[1] + ratios[2]), ratios[3]);
  std::ifstream summary_file(dir_ / "out" / "error_over_rtol.md");
  ASSERT_TRUE(summary_file.good());
  const std::string summary((std::istreambuf_iterator<char>(summary_file)),
                            std::istreambuf_iterator<char>());
  EXPECT_NE(summary.find("| solver | runs | median | largest |"), std::string::npos) << summary;
  EXPECT_NE(summary.find(expected), std::string::npos) << expected << " in\n" << summary;
  EXPECT_NE(o.out.find(expected), std::string::npos) << expected << " in\n" << o.out;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "report.md"));
}

TEST_F(CompareTest, RunsPastTheTimeLimitAreKilledAndRecorded) {
  // A 1 ms limit cannot fit a process start plus 100 s of pendulum at rtol 1e-8 (about 0.1 s of
  // work); the reference comes from a file so that no reference run is needed.
  Write("ref.csv", "t,link.x\n0,0.5\n");
  const std::string scene = Write(
      "slow.yaml",
      std::string(kPendulum).replace(std::string(kPendulum).find("t_end: 1"), 8, "t_end: 100") +
          "reference: {file: ref.csv, step: 0.5}\n");
  const Outcome o =
      Compare({"--scenes", scene, "--integrators", "dopri5", "--rtol", "1e-8", "--out",
               (dir_ / "out").string(), "--no-plots", "--time-limit", "0.001"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto rows = ReadResults(dir_ / "out" / "results.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("status"), "timed_out");
  EXPECT_NE(rows[0].at("reason").find("time limit"), std::string::npos);
}

TEST_F(CompareTest, BadInputStopsBeforeAnyRun) {
  const std::string disk = Write("disk.yaml", kBouncingDisk);
  const std::string out = (dir_ / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::string names;  // must appear in the message
  };
  const std::vector<Case> cases = {
      {{"--scenes", disk, "--integrators", "no_such_integrator"}, "no_such_integrator"},
      {{"--scenes", disk, "--rtol", "1e-3,abc"}, "'abc'"},
      {{"--scenes", disk, "--formulations", "index7"}, "index7"},
      {{"--scenes", (dir_ / "missing.yaml").string()}, "missing.yaml"},
      {{"--scenes", Write("broken.yaml", "scene: broken\nbodies: []\n")}, "broken.yaml"},
      {{"--set", "no_such_set"}, "no_such_set"},
      {{"--scenes", disk, "--bogus"}, "--bogus"},
      {{"--scenes", Write("badref.yaml", std::string(kBouncingDisk) + "  file: x.csv\n")},
       "badref.yaml"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--out", out, "--no-plots"});
    const Outcome o = Compare(args);
    EXPECT_EQ(o.code, kExitBadInput) << c.names << ": " << o.err;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(out)) << c.names;  // nothing was run or written
  }
}

TEST_F(CompareTest, ShippedSetsLoad) {
  for (const std::string set : {"joints", "impacts", "stiff", "flexible"}) {
    std::string name;
    const std::vector<SceneSetEntry> entries = SceneSet(set, &name);
    EXPECT_EQ(name, set);
    EXPECT_GE(entries.size(), 2u);
    for (const SceneSetEntry& entry : entries) {
      Scene scene = LoadSceneFile(entry.file);
      SceneSystem built;
      EXPECT_NO_THROW(built = BuildSceneSystem(scene)) << entry.file;
      if (!entry.analytic.empty() && built.system) {
        if (entry.t_end) scene.t_end = *entry.t_end;
        EXPECT_NO_THROW(AnalyticReference(entry.analytic, scene, *built.system, scene.t_end / 100))
            << entry.file;
      }
    }
  }
}

// ---- Closed forms of spatial and free bodies -----------------------------------------------

// Runs `scene` with DOPRI5 at rtol = atol and returns its error against `ref`.
double RunAgainst(const Scene& scene, const ReferenceSolution& ref, double rtol) {
  const SceneSystem built = BuildSceneSystem(scene);
  events::SimulationOptions options = scene.options;
  options.integrator = "dopri5";
  options.integrator_options.formulation = integrators::Formulation::kIndex1;
  options.integrator_options.rtol = rtol;
  options.integrator_options.atol = rtol;
  options.output_step = ref.step;
  events::Simulation simulation(built.system, options);
  ReferenceRecorder recorder(ref);
  simulation.AddObserver(&recorder);
  simulation.SetState(0.0, built.q0, built.v0);
  const events::RunResult result = simulation.AdvanceTo(scene.t_end);
  EXPECT_EQ(result.status, events::RunStatus::kFinished) << result.message;
  return recorder.Error();
}

Scene ExampleScene(const std::string& relative, double t_end) {
  Scene scene = LoadSceneFile(std::string(SALTUS_EXAMPLES_DIR) + "/" + relative);
  scene.t_end = t_end;
  return scene;
}

std::string AnalyticMessage(const std::string& name, const Scene& scene) {
  try {
    AnalyticReference(name, scene, *BuildSceneSystem(scene).system, 0.1);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST_F(CompareTest, FreeBodyClosedFormPlanarAndSpatial) {
  const Scene planar = ParseScene(R"(scene: thrown
bodies:
  - {name: plate, mass: 1, inertia: 0.1, position: [0, 1, 0.3], velocity: [2, 3, 4]}
simulation:
  t_end: 1
)",
                                  "thrown.yaml");
  const ReferenceSolution p =
      AnalyticReference("free_body", planar, *BuildSceneSystem(planar).system, 0.1);
  ASSERT_EQ(p.times.size(), 11u);
  // x = 2 t, y = 1 + 3 t − 9.81 t²/2, θ = 0.3 + 4 t at t = 1; round-off of a few ulps.
  EXPECT_NEAR(p.values(10, 0), 2.0, 1e-14);
  EXPECT_NEAR(p.values(10, 1), 1 + 3 - 0.5 * 9.81, 1e-14);
  EXPECT_NEAR(p.values(10, 2), 4.3, 1e-14);
  // DOPRI5 integrates a quadratic exactly: only round-off over ~10 steps remains.
  EXPECT_LT(RunAgainst(planar, p, 1e-6), 1e-12);

  // A box spinning about its principal z axis, centre of mass off the body origin (so the
  // origin circles the centre of mass while it falls).
  const std::string spatial_text = R"(scene: spinning_box
dimension: 3
bodies:
  - {name: box, mass: 2, inertia: [0.1, 0.2, 0.3], com: [0.1, 0, 0], position: [0, 0, 1],
     quaternion: [0.9238795325112867, 0.3826834323650898, 0, 0], velocity: [1, 0, 2],
     angular_velocity: [0, 0, 6]}
simulation:
  t_end: 2
)";
  const Scene spatial = ParseScene(spatial_text, "spinning_box.yaml");
  const ReferenceSolution s =
      AnalyticReference("free_body", spatial, *BuildSceneSystem(spatial).system, 0.05);
  ASSERT_EQ(s.names.size(), 7u);
  EXPECT_EQ(s.names[3], "box.qw");
  // DOPRI5 at rtol 1e-10 over 12 rad of rotation: global error a few 1e-10; 1e-8 leaves room.
  const double fine = RunAgainst(spatial, s, 1e-10);
  EXPECT_LT(fine, 1e-8);
  // ...and the error follows the tolerance (the closed form is not just the run itself).
  const double coarse = RunAgainst(spatial, s, 1e-5);
  EXPECT_GT(coarse, 10 * fine);
  EXPECT_LT(coarse, 1e-2);
  // Not a principal axis: no closed form, refused naming the scene.
  std::string tumbling = spatial_text;
  tumbling.replace(tumbling.find("[0, 0, 6]"), 9, "[1, 0, 6]");
  EXPECT_NE(AnalyticMessage("free_body", ParseScene(tumbling, "t.yaml")).find("principal axis"),
            std::string::npos);
  EXPECT_NE(AnalyticMessage("free_body", ParseScene(kPendulum, "p.yaml")).find("'pendulum'"),
            std::string::npos);
}

TEST_F(CompareTest, SpinningTopSteadyPrecession) {
  const Scene top = ExampleScene("spatial/spinning_top.yaml", 1.0);
  const ReferenceSolution ref =
      AnalyticReference("spinning_top", top, *BuildSceneSystem(top).system, 0.01);
  // The tilt stays θ = 0.3 rad: the body z axis has k·b = cos 0.3 at every time, and the axis
  // has precessed by Ω t about z (Ω = 0.8245 rad/s, slow root; from the scene's comment).
  const double Omega = 0.82453619590491523;
  for (std::size_t i = 0; i < ref.times.size(); i += 10) {
    const auto r = static_cast<Eigen::Index>(i);
    const Eigen::Quaterniond q(ref.values(r, 3), ref.values(r, 4), ref.values(r, 5),
                               ref.values(r, 6));
    const Eigen::Vector3d b = q.toRotationMatrix().col(2);
    EXPECT_NEAR(b.z(), std::cos(0.3), 1e-12);  // round-off of the quaternion products
    const double t = ref.times[i];
    // b = Rot(z, Ω t) (0, −sin θ, cos θ): its azimuth is −π/2 + Ω t.
    EXPECT_NEAR(std::atan2(b.y(), b.x()), std::remainder(-M_PI / 2 + Omega * t, 2 * M_PI), 1e-10);
    EXPECT_NEAR(ref.values(r, 0), 0.0, 1e-15);  // the body origin is the pivot
  }
  // DOPRI5 at rtol 1e-10 follows it; at rtol 1e-5 the error is much larger (the reference is
  // not the run): 100 rad/s spin over 1 s, global error ~1e-9 at 1e-10.
  const double fine = RunAgainst(top, ref, 1e-10);
  EXPECT_LT(fine, 1e-7);
  EXPECT_GT(RunAgainst(top, ref, 1e-5), 10 * fine);
  // Off the steady precession (1 % more precession rate): refused.
  Scene off = top;
  off.spatial.bodies[0].angular_velocity[1] *= 1.01;
  EXPECT_NE(AnalyticMessage("spinning_top", off).find("steady precession"), std::string::npos);
}

TEST_F(CompareTest, DrivenSliderCrankKinematics) {
  const Scene crank = ExampleScene("spatial/slider_crank.yaml", 1.0);
  const auto system = BuildSceneSystem(crank).system;
  const ReferenceSolution ref = AnalyticReference("slider_crank", crank, *system, 0.01);
  const auto slider_x =
      std::find(ref.names.begin(), ref.names.end(), "slider.x") - ref.names.begin();
  ASSERT_LT(slider_x, static_cast<long>(ref.names.size()));
  // The scene's own closed form (its header comment): x = sqrt(0.3² − p_y² − p_z²) with the crank
  // pin p = (0, 0.1 + 0.08 cos θ, 0.12 + 0.08 sin θ), θ = π/2 − 2π t.
  for (std::size_t i = 0; i < ref.times.size(); ++i) {
    const double theta = M_PI / 2 - 2 * M_PI * ref.times[i];
    const double py = 0.1 + 0.08 * std::cos(theta), pz = 0.12 + 0.08 * std::sin(theta);
    // Both evaluate the same geometry through different round-off: 1e-12 m.
    EXPECT_NEAR(ref.values(static_cast<Eigen::Index>(i), slider_x),
                std::sqrt(0.09 - py * py - pz * pz), 1e-12)
        << "t = " << ref.times[i];
  }
  // DOPRI5 at rtol 1e-10 on the driven mechanism: position drift is projected, the error is
  // the integration's (~1e-9); 1e-7 leaves room.
  const double fine = RunAgainst(crank, ref, 1e-10);
  EXPECT_LT(fine, 1e-7);
  Scene free_crank = crank;
  free_crank.spatial.drivers.clear();
  EXPECT_NE(AnalyticMessage("slider_crank", free_crank).find("angle driver"), std::string::npos);
}

TEST_F(CompareTest, SetEntriesOverrideTheFinalTimeAndNameAClosedForm) {
  const std::string crank = std::string(SALTUS_EXAMPLES_DIR) + "/spatial/slider_crank.yaml";
  const std::string set = Write("mini.yaml", "set: mini\nscenes:\n  - {file: " + crank +
                                                 ", t_end: 0.5, analytic: slider_crank}\n");
  const Outcome o = Compare({"--set", set, "--integrators", "dopri5", "--rtol", "1e-4,1e-7",
                             "--out", (dir_ / "out").string(), "--no-plots", "--repeat", "1"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto rows = ReadResults(dir_ / "out" / "results.csv");
  ASSERT_EQ(rows.size(), 2u);
  std::map<std::string, double> error;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("set"), "mini");
    EXPECT_EQ(row.at("t_end"), "0.5");
    EXPECT_EQ(row.at("reference"), "analytic slider_crank");
    ASSERT_EQ(row.at("status"), "ok") << row.at("reason");
    error[row.at("rtol")] = std::stod(row.at("error"));
  }
  EXPECT_LT(error["9.9999999999999995e-08"], error["0.0001"]);
  EXPECT_LT(error["9.9999999999999995e-08"], 1e-5);  // a global error of a few rtol
  // Bad entries stop the study naming the set file and line.
  const auto bad = [&](const std::string& entry) {
    const Outcome b = Compare({"--set", Write("bad.yaml", "set: bad\nscenes:\n  - " + entry + "\n"),
                               "--out", (dir_ / "bad").string(), "--no-plots"});
    EXPECT_EQ(b.code, kExitBadInput) << entry;
    EXPECT_FALSE(fs::exists(dir_ / "bad")) << entry;
    return b.err;
  };
  EXPECT_NE(bad("{file: " + crank + ", t_end: -1}").find("bad.yaml:3: t_end"), std::string::npos);
  EXPECT_NE(bad("{file: " + crank + ", tend: 1}").find("unknown key 'tend'"), std::string::npos);
  EXPECT_NE(bad("{file: " + crank + ", analytic: spinning_top}").find("bad.yaml:3:"),
            std::string::npos);
}

TEST_F(CompareTest, ReferenceGridOvershootingTheFinalTimeIsStillComplete) {
  // 10 · 0.07 = 0.7000000000000001 > t_end = 0.7: the event loop emits no output row at the last
  // reference time; the run's final state must stand for it, else the reference run is
  // incomplete and every error of the scene stays empty.
  std::string text = kPendulum;
  text.replace(text.find("t_end: 1"), 8, "t_end: 0.7");
  const std::string scene =
      Write("p07.yaml", text + "reference: {integrator: dopri5, rtol: 1e-9, step: 0.07}\n");
  const Outcome o = Compare({"--scenes", scene, "--integrators", "dopri5", "--rtol", "1e-4",
                             "--out", (dir_ / "out").string(), "--no-plots", "--repeat", "1"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const auto rows = ReadResults(dir_ / "out" / "results.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("reference"), "run dopri5/index1 rtol=1e-09 atol=1e-11") << o.err;
  ASSERT_FALSE(rows[0].at("error").empty()) << o.err;
  EXPECT_LT(std::stod(rows[0].at("error")), 1e-2);  // rtol 1e-4 over 0.7 s of a pendulum
}

TEST_F(CompareTest, CrashingRunIsRecordedAndTheStudyGoesOn) {
  Write("ref.csv", "t,link.x\n0,0.5\n");
  const std::string scene =
      Write("pendulum.yaml", std::string(kPendulum) + "reference: {file: ref.csv, step: 0.5}\n");
  CompareHooks hooks;
  hooks.in_child = [](const std::string&, const std::string&, double rtol) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // no core file from the deliberate crashes
    if (rtol == 1e-4) std::raise(SIGSEGV);
    if (rtol == 1e-5) std::abort();
  };
  const std::vector<std::string> args = {"--scenes",
                                         scene,
                                         "--integrators",
                                         "dopri5",
                                         "--rtol",
                                         "1e-3,1e-4,1e-5,1e-6",
                                         "--out",
                                         (dir_ / "out").string(),
                                         "--no-plots",
                                         "--repeat",
                                         "1",
                                         "--jobs",
                                         "2"};
  std::ostringstream out, err;
  ASSERT_EQ(RunCompare(args, out, err, hooks), kExitOk) << err.str();
  const auto rows = ReadResults(dir_ / "out" / "results.csv");
  ASSERT_EQ(rows.size(), 4u);  // the runs after the crashes went on
  std::map<std::string, std::map<std::string, std::string>> by_rtol;
  for (const auto& row : rows) by_rtol[row.at("rtol")] = row;
  EXPECT_EQ(by_rtol["0.001"]["status"], "ok");
  EXPECT_EQ(by_rtol["9.9999999999999995e-07"]["status"], "ok");
  EXPECT_EQ(by_rtol["0.0001"]["status"], "failed");
  EXPECT_NE(by_rtol["0.0001"]["reason"].find("crashed: signal " + std::to_string(SIGSEGV)),
            std::string::npos)
      << by_rtol["0.0001"]["reason"];
  EXPECT_EQ(by_rtol["1.0000000000000001e-05"]["status"], "failed");
  EXPECT_NE(by_rtol["1.0000000000000001e-05"]["reason"].find("crashed: signal " +
                                                             std::to_string(SIGABRT)),
            std::string::npos);
  EXPECT_TRUE(by_rtol["0.0001"]["error"].empty());
}

}  // namespace
}  // namespace saltus::tools

namespace saltus::tools {
namespace {

// Runs a shell command; returns its exit status.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// --emit-jobs writes one command line per run (and per reference run), a GNU parallel script
// and a Slurm array script; running the jobs with GNU parallel (Debian `parallel`) and
// --collect gives the rows a local study gives, with the same errors (the positions are stored
// with %.17g and the error is replayed through the same ReferenceRecorder) and the same
// statistics (deterministic runs).
TEST_F(CompareTest, EmittedJobsRunWithGnuParallelAndCollect) {
  if (Shell("parallel --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "GNU parallel is not installed (scripts/install-deps.sh installs it)";
  }
  const std::string disk = Write("disk.yaml", kBouncingDisk);
  const std::string pendulum = Write("pendulum.yaml", kPendulum);
  const std::vector<std::string> study = {"--scenes",    disk,        pendulum,    "--integrators",
                                          "dopri5,hem5", "--rtol",    "1e-3,1e-5", "--repeat",
                                          "1",           "--no-plots"};
  std::vector<std::string> local = study;
  local.insert(local.end(), {"--out", (dir_ / "local").string()});
  ASSERT_EQ(Compare(local).code, kExitOk);

  // Emitted by the `saltus` program, whose path the job lines carry.
  const fs::path jobs = dir_ / "jobs";
  std::string emit = std::string("'") + SALTUS_CLI_PATH + "' compare";
  for (const std::string& arg : study) emit += " '" + arg + "'";
  ASSERT_EQ(Shell(emit + " --emit-jobs '" + jobs.string() + "' > /dev/null 2>&1"), 0);
  EXPECT_FALSE(fs::exists(dir_ / "local" / "runs"));
  std::ifstream lines_in(jobs / "jobs.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(lines_in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 8u);  // the pendulum's reference run, 2 scenes x 2 x 2 runs
  EXPECT_NE(lines[0].find(" compare --run-job "), std::string::npos) << lines[0];
  const std::string slurm = [&] {
    std::ifstream in(jobs / "slurm.sh");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  EXPECT_NE(slurm.find("#SBATCH --array=1-9"), std::string::npos) << slurm;
  EXPECT_NE(slurm.find("SLURM_ARRAY_TASK_ID"), std::string::npos);

  // The jobs run anywhere: here with GNU parallel, two at a time, then collected.
  ASSERT_EQ(Shell("cd / && SALTUS_JOBS=2 sh '" + (jobs / "run_parallel.sh").string() + "' > '" +
                  (dir_ / "parallel.out").string() + "' 2>&1"),
            0);
  const auto a = ReadResults(dir_ / "local" / "results.csv");
  const auto b = ReadResults(jobs / "results.csv");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (const char* column : {"scene", "integrator", "rtol", "status", "accepted_steps",
                               "rhs_evaluations", "impacts", "error", "reference"}) {
      EXPECT_EQ(a[i].at(column), b[i].at(column)) << column << " of row " << i;
    }
    EXPECT_EQ(b[i].at("status"), "ok");
    EXPECT_FALSE(b[i].at("error").empty());
  }
  // The provenance names the study's command (not the collect command, recorded apart) and the
  // scene files' SHA-256, checked against coreutils' sha256sum.
  const auto read = [](const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string provenance = read(jobs / "provenance.json");
  EXPECT_NE(provenance.find("\"command_line\": \"saltus compare --scenes "), std::string::npos)
      << provenance;
  EXPECT_NE(provenance.find("--emit-jobs"), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"collect_command_line\": \"saltus compare --collect "),
            std::string::npos)
      << provenance;
  ASSERT_EQ(Shell("sha256sum '" + disk + "' > '" + (dir_ / "disk.sha").string() + "'"), 0);
  const std::string disk_sha = read(dir_ / "disk.sha").substr(0, 64);
  EXPECT_NE(provenance.find("\"sha256\": \"" + disk_sha + "\""), std::string::npos) << provenance;
  EXPECT_EQ(provenance.find("\"scene_sha256\": \"\""), std::string::npos) << provenance;
  // A job that did not run is reported as missing, not lost.
  fs::remove(jobs / "runs" / "4.txt");
  ASSERT_EQ(Compare({"--collect", jobs.string()}).code, kExitOk);
  int missing = 0;
  for (const auto& row : ReadResults(jobs / "results.csv"))
    missing += row.at("status") == "missing";
  EXPECT_EQ(missing, 1);
}

// The Slurm path without Slurm: slurm.sh --dry-run lists one task per line of jobs.txt over the
// script's own #SBATCH --array range, and running every task as Slurm would (bash, with
// SLURM_ARRAY_TASK_ID set, from another folder) then --collect gives the local study's rows.
TEST_F(CompareTest, SlurmArrayScriptRunsEveryTaskWithoutSlurm) {
  const std::string disk = Write("disk.yaml", kBouncingDisk);
  const std::vector<std::string> study = {"--scenes",    disk,     "--integrators",
                                          "dopri5,hem5", "--rtol", "1e-3,1e-5",
                                          "--repeat",    "1",      "--no-plots"};
  std::vector<std::string> local = study;
  local.insert(local.end(), {"--out", (dir_ / "local").string()});
  ASSERT_EQ(Compare(local).code, kExitOk);
  const fs::path jobs = dir_ / "jobs";
  std::string emit = std::string("'") + SALTUS_CLI_PATH + "' compare";
  for (const std::string& arg : study) emit += " '" + arg + "'";
  ASSERT_EQ(Shell(emit + " --emit-jobs '" + jobs.string() + "' > /dev/null 2>&1"), 0);
  const std::string slurm = "bash '" + (jobs / "slurm.sh").string() + "'";

  std::vector<std::string> lines;
  std::ifstream lines_in(jobs / "jobs.txt");
  for (std::string line; std::getline(lines_in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);  // the disk has a closed form: no reference run; 2 x 2 runs
  const fs::path listed = dir_ / "dry_run.txt";
  ASSERT_EQ(Shell(slurm + " --dry-run > '" + listed.string() + "'"), 0);
  std::ifstream dry(listed);
  std::size_t task = 0;
  for (std::string line; std::getline(dry, line); ++task) {
    ASSERT_LT(task, lines.size()) << line;
    EXPECT_EQ(line, "task " + std::to_string(task + 1) + ": " + lines[task]);
  }
  EXPECT_EQ(task, lines.size());

  // Outside an array (no task id) or past its end: an error, nothing run.
  EXPECT_EQ(Shell("env -u SLURM_ARRAY_TASK_ID " + slurm + " 2> /dev/null"), 2);
  EXPECT_EQ(Shell("SLURM_ARRAY_TASK_ID=5 " + slurm + " 2> /dev/null"), 2);
  EXPECT_FALSE(fs::exists(jobs / "runs" / "0.txt"));
  for (std::size_t k = 1; k <= lines.size(); ++k) {
    ASSERT_EQ(Shell("cd / && SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " " + slurm +
                    " > /dev/null 2>&1"),
              0)
        << "task " << k;
  }
  ASSERT_EQ(Compare({"--collect", jobs.string()}).code, kExitOk);
  const auto a = ReadResults(dir_ / "local" / "results.csv");
  const auto b = ReadResults(jobs / "results.csv");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (const char* column : {"scene", "integrator", "rtol", "status", "accepted_steps",
                               "rhs_evaluations", "impacts", "error"}) {
      EXPECT_EQ(a[i].at(column), b[i].at(column)) << column << " of row " << i;
    }
    EXPECT_EQ(b[i].at("status"), "ok");
  }
}

// The help lists every option the parser takes (the study options and the two of the
// emitted-jobs path; --run-job is internal to the emitted jobs).
TEST(CompareHelpTest, ListsEveryOption) {
  const std::string help(CompareHelp());
  for (const char* flag :
       {"--set", "--scenes", "--integrators", "--formulations", "--rtol", "--out", "--time-limit",
        "--cost", "--jobs", "--repeat", "--t-end", "--reference-integrator", "--reference-rtol",
        "--no-plots", "--emit-jobs", "--collect", "--help"}) {
    EXPECT_NE(help.find(std::string("  ") + flag + " "), std::string::npos) << flag;
  }
}

TEST_F(CompareTest, CostOptionAndMedianOfRepeats) {
  const std::string disk = Write("disk.yaml", kBouncingDisk);
  EXPECT_EQ(Compare({"--scenes", disk, "--cost", "flops", "--out", (dir_ / "x").string()}).code,
            kExitBadInput);
  const Outcome o =
      Compare({"--scenes", disk, "--integrators", "dopri5", "--rtol", "1e-4", "--cost", "rhs",
               "--repeat", "3", "--no-plots", "--out", (dir_ / "o").string()});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  // --cost rhs runs in parallel by default; a time cost runs one at a time.
  EXPECT_EQ(o.err.find(", 1 at a time"), std::string::npos) << o.err;
  const auto rows = ReadResults(dir_ / "o" / "results.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("repeats"), "3");  // the disk takes milliseconds: all three repeats
  EXPECT_GT(std::stod(rows[0].at("cpu_seconds")), 0.0);
  const Outcome timed = Compare({"--scenes", disk, "--integrators", "dopri5", "--rtol", "1e-4",
                                 "--no-plots", "--out", (dir_ / "t").string()});
  EXPECT_NE(timed.err.find(", 1 at a time"), std::string::npos) << timed.err;
}

}  // namespace
}  // namespace saltus::tools
