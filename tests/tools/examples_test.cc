// Every scene in examples/ runs to completion through the command line, energy never increases
// across an impact (events.csv), and each example ends in the state its comment promises.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = SALTUS_EXAMPLES_DIR;

std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, sep);) fields.push_back(f);
  if (!line.empty() && line.back() == sep) fields.emplace_back();
  return fields;
}

// A CSV file as a header and rows of fields.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int Column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  }
  double Value(std::size_t row, const std::string& name) const {
    const int c = Column(name);
    EXPECT_GE(c, 0) << "no column " << name;
    return c < 0 ? std::nan("") : std::stod(rows[row][static_cast<std::size_t>(c)]);
  }
};

Csv ReadCsv(const fs::path& path) {
  Csv csv;
  std::ifstream in(path);
  std::string line;
  if (std::getline(in, line)) csv.header = Split(line, ',');
  while (std::getline(in, line)) csv.rows.push_back(Split(line, ','));
  return csv;
}

class ExamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / ("saltus_examples_test_" + std::to_string(getpid()));
    fs::remove_all(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }

  // Runs examples/<name>.yaml with the CLI; returns the output directory.
  fs::path Run(const std::string& name) {
    const fs::path out = scratch_ / name;
    std::ostringstream o, e;
    const std::vector<std::string> args = {"run", (kExamples / (name + ".yaml")).string(), "--out",
                                           out.string()};
    EXPECT_EQ(RunCli(args, o, e), kExitOk) << name << ":\n" << o.str() << e.str();
    return out;
  }

  fs::path scratch_;
};

// The five documented examples are there, and nothing else is left untested.
TEST_F(ExamplesTest, TheDocumentedScenesExist) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() == ".yaml") found.insert(entry.path().stem().string());
  }
  EXPECT_EQ(found, (std::set<std::string>{"ball_chain", "ball_stack", "bouncing_ball",
                                          "rocking_block", "slider_crank_stop"}));
}

TEST_F(ExamplesTest, EveryExampleRunsAndNeverGainsEnergyAtImpacts) {
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const Scene scene = LoadSceneFile(entry.path().string());
    EXPECT_EQ(scene.name, name);  // so that out/<scene> matches the file name
    const fs::path out = Run(name);
    const Csv events = ReadCsv(out / "events.csv");
    ASSERT_EQ(events.header.size(), 10u);
    int impacts = 0;
    for (std::size_t i = 0; i < events.rows.size(); ++i) {
      if (events.rows[i][1] != "impact") continue;
      ++impacts;
      const double before = events.Value(i, "energy_before");
      const double after = events.Value(i, "energy_after");
      // T + V summed in double precision: round-off ~1e-15 relative; 1e-12 leaves margin.
      EXPECT_LE(after, before + 1e-12 * std::max(1.0, std::abs(before)))
          << "impact at t = " << events.rows[i][0];
    }
    EXPECT_GT(impacts, 0) << "an example without impacts tests nothing here";
    // Gap after every projection ≥ −τ₀ (issue requirement), read from summary.json.
    std::ifstream summary_file(out / "summary.json");
    const std::string summary((std::istreambuf_iterator<char>(summary_file)),
                              std::istreambuf_iterator<char>());
    const std::string key = "\"min_gap_after_projection\": ";
    const auto pos = summary.find(key);
    ASSERT_NE(pos, std::string::npos);
    const double min_gap = std::strtod(summary.c_str() + pos + key.size(), nullptr);
    EXPECT_GE(min_gap, -scene.options.thresholds.tau0);
    const Csv trajectory = ReadCsv(out / "trajectory.csv");
    ASSERT_FALSE(trajectory.rows.empty());
    // Ran to t_end (the last output row).
    EXPECT_NEAR(trajectory.Value(trajectory.rows.size() - 1, "t"), scene.t_end, 1e-12);
  }
}

// The final state of each example. "At rest" tolerances: the velocity threshold τ₁ = 1e-6 m/s
// decides closing, and closed contacts are then held by the index-1 dynamics and projections
// to round-off; 1e-6 (m, m/s, rad) is the margin used throughout.
TEST_F(ExamplesTest, BouncingBallComesToRestAtTheAccumulationTime) {
  const fs::path out = Run("bouncing_ball");
  const Csv trajectory = ReadCsv(out / "trajectory.csv");
  const std::size_t last = trajectory.rows.size() - 1;
  EXPECT_NEAR(trajectory.Value(last, "ball.y"), 0.1, 1e-6);
  EXPECT_NEAR(trajectory.Value(last, "ball.vy"), 0.0, 1e-6);
  const Csv events = ReadCsv(out / "events.csv");
  ASSERT_FALSE(events.rows.empty());
  EXPECT_EQ(events.rows.back()[1], "contact_closed");
  // t∞ = t1 + 2 e v1 / (g (1 − e)); the flights left once the rebound speed is below
  // τ₁ = 1e-6 m/s add up to less than 2 τ₁ / (g (1 − e)) ≈ 2e-6 s, so 1e-5 s is margin.
  const double g = 9.81, e = 0.9, t1 = std::sqrt(2 * 0.9 / g);
  const double t_inf = t1 + 2 * e * g * t1 / (g * (1 - e));
  EXPECT_NEAR(events.Value(events.rows.size() - 1, "t"), t_inf, 1e-5);
}

TEST_F(ExamplesTest, BallStackComesToRest) {
  const Csv trajectory = ReadCsv(Run("ball_stack") / "trajectory.csv");
  const std::size_t last = trajectory.rows.size() - 1;
  const std::map<std::string, double> heights = {{"bottom", 0.1}, {"middle", 0.3}, {"top", 0.5}};
  for (const auto& [body, y] : heights) {
    EXPECT_NEAR(trajectory.Value(last, body + ".y"), y, 1e-6) << body;
    EXPECT_NEAR(trajectory.Value(last, body + ".vy"), 0.0, 1e-6) << body;
  }
}

TEST_F(ExamplesTest, RockingBlockSettlesOnBothCorners) {
  const fs::path out = Run("rocking_block");
  const Csv trajectory = ReadCsv(out / "trajectory.csv");
  const std::size_t last = trajectory.rows.size() - 1;
  EXPECT_NEAR(trajectory.Value(last, "block.theta"), 0.0, 1e-6);
  EXPECT_NEAR(trajectory.Value(last, "block.y"), 0.1, 1e-6);
  EXPECT_NEAR(trajectory.Value(last, "block.vtheta"), 0.0, 1e-6);
  // It rocked: impacts on both corners.
  const Csv events = ReadCsv(out / "events.csv");
  std::set<std::string> corners;
  for (const auto& row : events.rows) {
    if (row[1] == "impact") corners.insert(row[2]);
  }
  EXPECT_TRUE(corners.count("left_corner") && corners.count("right_corner"));
}

TEST_F(ExamplesTest, SliderCrankNeverPassesTheStop) {
  const fs::path out = Run("slider_crank_stop");
  const Csv trajectory = ReadCsv(out / "trajectory.csv");
  // Stop face at x = 0.75, slider front 0.05 ahead of its centre: centre x ≤ 0.7. Impacts are
  // located before the gap turns negative; 1e-6 m allows for the index-1 drift of the joints.
  double x_max = -1;
  for (std::size_t i = 0; i < trajectory.rows.size(); ++i) {
    x_max = std::max(x_max, trajectory.Value(i, "slider.x"));
    // The prismatic joint holds the slider on the x axis (projection tolerance 1e-4 m).
    EXPECT_NEAR(trajectory.Value(i, "slider.y"), 0.0, 1e-4);
  }
  EXPECT_LE(x_max, 0.7 + 1e-6);
  EXPECT_GT(x_max, 0.7 - 1e-3);  // and it does reach the stop
  int impacts = 0;
  for (const auto& row : ReadCsv(out / "events.csv").rows) impacts += row[1] == "impact";
  EXPECT_GE(impacts, 2);
}

TEST_F(ExamplesTest, BallChainConservesMomentum) {
  const Csv trajectory = ReadCsv(Run("ball_chain") / "trajectory.csv");
  const std::size_t last = trajectory.rows.size() - 1;
  double p = 0;
  for (const char* body : {"striker", "ball1", "ball2", "ball3"}) {
    p += trajectory.Value(last, std::string(body) + ".vx");  // unit masses
  }
  // Impulses are internal: momentum 1 kg·m/s is kept up to round-off of the LCP solution.
  EXPECT_NEAR(p, 1.0, 1e-12);
  // The last ball leaves fastest: the impact went through the chain.
  EXPECT_GT(trajectory.Value(last, "ball3.vx"), 0.4);
}

}  // namespace
}  // namespace saltus::tools
