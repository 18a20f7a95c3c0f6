// `saltus compare` (tools/compare.h) and reference solutions (tools/reference.h): the closed-form
// bouncing disk, reference files, the error against a reference, the study with finished,
// failed and timed-out runs, and bad input.
#include "tools/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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
      ++failed;
      continue;
    }
    ASSERT_EQ(row.at("status"), "ok") << row.at("reason");
    EXPECT_GT(std::stol(row.at("accepted_steps")), 0);
    EXPECT_GT(std::stod(row.at("average_step")), 0.0);
    EXPECT_GT(std::stod(row.at("wall_seconds")), 0.0);
    error[row.at("scene")][row.at("rtol")] = std::stod(row.at("error"));
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
  for (const std::string set : {"joints", "impacts", "stiff"}) {
    std::string name;
    const std::vector<std::string> files = SceneSetFiles(set, &name);
    EXPECT_EQ(name, set);
    EXPECT_GE(files.size(), 2u);
    for (const std::string& file : files) {
      EXPECT_NO_THROW(BuildSystem(LoadSceneFile(file))) << file;
    }
  }
}

}  // namespace
}  // namespace saltus::tools
