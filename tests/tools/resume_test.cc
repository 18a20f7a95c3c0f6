// `saltus run --resume` (tools/resume.h): a run stopped by a request (RunStatus::kInterrupted,
// the state saved by WriteLastStateJson as `saltus run` does) and resumed from its
// last_state.json follows the uninterrupted run, a hybrid run in the phase it was in; bad saved
// states are bad input.
#include "tools/resume.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/numeric_csv.h"
#include "tools/cli.h"
#include "tools/json_writer.h"
#include "tools/metadata.h"
#include "tools/run_scheme.h"
#include "tools/scene.h"
#include "tools/writers.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;
using test_support::NumericCsv;
using test_support::ReadNumericCsv;

const std::string kExamples = SALTUS_EXAMPLES_DIR;

std::string ReadText(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Cli(const std::vector<std::string>& args, std::string* err = nullptr) {
  std::ostringstream out, errs;
  const int code = RunCli(args, out, errs);
  if (err) *err = errs.str();
  return code;
}

// Requests a stop (`stop`) at the first accepted step at or after t_stop.
class StopAt : public events::Observer {
 public:
  // `at_events`: also stop after the first event at or after t_stop (in an accumulation of
  // impacts every step ends with an event, so OnStep is not called until it ends).
  StopAt(std::function<void()> stop, double t_stop, bool at_events = false)
      : stop_(std::move(stop)), t_stop_(t_stop), at_events_(at_events) {}
  void OnStep(double t, const Eigen::VectorXd&, const Eigen::VectorXd&) override {
    if (t >= t_stop_) stop_();
  }
  void OnEvent(const events::Event& e, const Eigen::VectorXd&, const Eigen::VectorXd&,
               const Eigen::VectorXd&) override {
    if (at_events_ && e.t >= t_stop_) stop_();
  }

 private:
  std::function<void()> stop_;
  double t_stop_;
  bool at_events_;
};

class ResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() /
               ("saltus_resume_test_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }

  // Runs `scene_file` through the library until t_stop, as `saltus run` would, and saves the
  // state where the stop request took effect. Returns the saved file.
  fs::path Interrupt(const std::string& scene_file, double t_stop) {
    const Scene scene = LoadSceneFile(scene_file);
    const SceneSystem built = BuildSceneSystem(scene);
    events::Simulation sim(built.system, scene.options);
    StopAt stop([&sim] { sim.RequestStop(); }, t_stop);
    sim.AddObserver(&stop);
    sim.SetState(0.0, built.q0, built.v0);
    const events::RunResult result = sim.AdvanceTo(scene.t_end);
    EXPECT_EQ(result.status, events::RunStatus::kInterrupted);
    RunInfo info;
    info.scene = scene.name;
    info.status = std::string(events::ToString(result.status));
    info.provenance = CollectProvenance({}, scene_file);
    const fs::path dir = scratch_ / "stopped";
    fs::create_directories(dir);
    std::ofstream file(dir / "last_state.json");
    WriteLastStateJson(info, ViewOf(sim), file);
    return dir / "last_state.json";
  }

  // The same for the scheme of the scene (MakeScheme: here the hybrid one), saving its phase
  // as `saltus run` does (tools/cli.cc WriteResults), into dir `name`.
  fs::path InterruptScheme(const std::string& scene_file, double t_stop, const std::string& name,
                           bool at_events = false) {
    const Scene scene = LoadSceneFile(scene_file);
    const SceneSystem built = BuildSceneSystem(scene);
    const std::unique_ptr<Scheme> scheme =
        MakeScheme(built.system, scene.options, scene.time_stepping, scene.hybrid);
    StopAt stop([&scheme] { scheme->RequestStop(); }, t_stop, at_events);
    scheme->AddObserver(&stop);
    scheme->SetState(0.0, built.q0, built.v0, events::StateOrigin::kInitial);
    const events::RunResult result = scheme->AdvanceTo(scene.t_end);
    EXPECT_EQ(result.status, events::RunStatus::kInterrupted);
    RunInfo info;
    info.scene = scene.name;
    info.status = std::string(events::ToString(result.status));
    info.provenance = CollectProvenance({}, scene_file);
    const fs::path dir = scratch_ / name;
    fs::create_directories(dir);
    std::ofstream file(dir / "last_state.json");
    WriteLastStateJson(info, scheme->View(), file, scheme->hybrid_state());
    return dir / "last_state.json";
  }

  fs::path scratch_;
};

// The bouncing ball stopped in flight at t = 1 s (between the impacts at 0.428 s and 1.199 s)
// and resumed: the later impacts and the state at t_end agree with the uninterrupted run.
// DOPRI5 integrates free flight (a quadratic) exactly, so the two differ by the root
// tolerance (1e-12 relative) and round-off only: 1e-9 s and 1e-9 m leave margin.
TEST_F(ResumeTest, BouncingBallContinuesAsTheUninterruptedRun) {
  const std::string scene = kExamples + "/bouncing_ball.yaml";
  ASSERT_EQ(Cli({"run", scene, "--t-end", "3", "--out", (scratch_ / "whole").string()}), 0);
  const fs::path saved = Interrupt(scene, 1.0);
  std::string err;
  ASSERT_EQ(Cli({"run", scene, "--t-end", "3", "--resume", saved.string()}, &err), 0) << err;
  const fs::path resumed = saved.parent_path() / "resumed";  // the default folder

  // The event times (first column of events.csv; the others are text).
  const auto event_times = [](const fs::path& file) {
    std::ifstream in(file);
    std::vector<double> t;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) t.push_back(std::stod(line.substr(0, line.find(','))));
    return t;
  };
  std::vector<double> later;  // impacts of the uninterrupted run after the stop
  for (const double t : event_times(scratch_ / "whole" / "events.csv")) {
    if (t > 1.0) later.push_back(t);
  }
  const std::vector<double> part = event_times(resumed / "events.csv");
  ASSERT_EQ(part.size(), later.size());
  ASSERT_GE(later.size(), 2u);  // 1.199 s, 1.892 s, 2.516 s
  for (std::size_t i = 0; i < later.size(); ++i) EXPECT_NEAR(part[i], later[i], 1e-9);

  const NumericCsv a = ReadNumericCsv(scratch_ / "whole" / "trajectory.csv");
  const NumericCsv b = ReadNumericCsv(resumed / "trajectory.csv");
  EXPECT_GT(b.rows.front()[0], 1.0 - 1e-12);  // starts at the saved time
  EXPECT_NEAR(a.rows.back()[0], 3.0, 1e-12);
  EXPECT_NEAR(b.rows.back()[0], 3.0, 1e-12);
  for (std::size_t j = 1; j < a.header.size(); ++j) {
    EXPECT_NEAR(b.rows.back()[j], a.rows.back()[j], 1e-9) << a.header[j];
  }
  const std::string summary = [&] {
    std::ifstream in(resumed / "summary.json");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  EXPECT_NE(summary.find("\"resumed_from\": \"" + saved.string() + "\""), std::string::npos);
}

// The sprung, periodically pushed pendulum (a joint, a spring, a time-dependent load) stopped
// at t = 1.3 s: the resumed run restarts the integrator, so it differs from the uninterrupted
// one by the integration error of each, O(rtol) = 1e-9 per unit of the solution. Measured:
// 1.6e-10 rad; 1e-7 is a margin of several hundred.
TEST_F(ResumeTest, SprungPendulumMatchesToTheIntegrationTolerance) {
  const std::string scene = kExamples + "/planar/sprung_pendulum.yaml";
  ASSERT_EQ(Cli({"run", scene, "--out", (scratch_ / "whole").string()}), 0);
  const fs::path saved = Interrupt(scene, 1.3);
  const fs::path resumed = scratch_ / "b";
  std::string err;
  ASSERT_EQ(Cli({"run", scene, "--resume", saved.string(), "--out", resumed.string()}, &err), 0)
      << err;
  const NumericCsv a = ReadNumericCsv(scratch_ / "whole" / "trajectory.csv");
  const NumericCsv b = ReadNumericCsv(resumed / "trajectory.csv");
  double largest = 0;
  for (const auto& rb : b.rows) {  // every output time of the resumed run on the common grid
    for (const auto& ra : a.rows) {
      if (std::abs(ra[0] - rb[0]) > 1e-12) continue;
      for (std::size_t j = 1; j < ra.size(); ++j)
        largest = std::max(largest, std::abs(ra[j] - rb[j]));
    }
  }
  EXPECT_LT(largest, 1e-7);
  std::cout << "sprung pendulum: largest difference after resuming " << largest << '\n';
}

// A saved state may penetrate: a run stopped by a failure, or a time-stepping run (Moreau–Jean
// keeps penetrations of order h times the approach velocity; the 100-sphere pile's state at its
// stop penetrated by 6.8e-6 m and could not be resumed). The bouncing ball's state saved in
// flight, moved 1e-6 m into the floor (10³ τ₀) and falling at 1 m/s: refused as an initial state,
// it resumes with the event loop (the switch at t takes the penetrating contact into I₁, resolves
// the impact, v_y = +0.9 m/s with e = 0.9, and projects the gap to 0 to the projection
// tolerance) and with Moreau–Jean (h = 1 ms).
TEST_F(ResumeTest, PenetratingSavedStatesResume) {
  const std::string ball = kExamples + "/bouncing_ball.yaml";
  const fs::path saved = Interrupt(ball, 1.0);
  std::string json = [&] {
    std::ifstream in(saved);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }();
  const auto set = [&json](const std::string& name, double value) {
    const std::string key = "\"" + name + "\": ";
    const std::size_t at = json.find(key);
    ASSERT_NE(at, std::string::npos) << name;
    const std::size_t from = at + key.size(), to = json.find_first_of(",}\n", from);
    json.replace(from, to - from, FormatDouble(value));
  };
  set("ball.y", 0.1 - 1e-6);
  set("ball.vy", -1.0);
  const fs::path penetrating = scratch_ / "penetrating.json";
  std::ofstream(penetrating) << json;

  std::string err;
  const fs::path initial = scratch_ / "initial.yaml";
  {
    std::ifstream in(ball);
    std::stringstream text;
    text << in.rdbuf();
    std::string scene = text.str();
    scene.replace(scene.find("position: [0, 1, 0]"), 19, "position: [0, 0.099999, 0]");
    std::ofstream(initial) << scene;
  }
  EXPECT_EQ(Cli({"run", initial.string(), "--out", (scratch_ / "refused").string()}, &err),
            kExitBadInput);
  EXPECT_NE(err.find("penetrates"), std::string::npos) << err;

  const fs::path event_driven = scratch_ / "event_driven";
  ASSERT_EQ(Cli({"run", ball, "--t-end", "1.5", "--resume", penetrating.string(), "--out",
                 event_driven.string()},
                &err),
            0)
      << err;
  const NumericCsv rows = ReadNumericCsv(event_driven / "trajectory.csv");
  const auto y = rows.Column("ball.y"), vy = rows.Column("ball.vy");
  // The event rows of the switch at the saved time (before, after): after it the ball is on the
  // floor (the projection's tolerance, 1e-12) and leaves it at e × 1 m/s.
  EXPECT_NEAR(rows.rows[1][y], 0.1, 1e-12);
  EXPECT_NEAR(rows.rows[1][vy], 0.9, 1e-12);
  ASSERT_EQ(Cli({"run", ball, "--t-end", "1.5", "--integrator", "moreau_jean", "--step", "1e-3",
                 "--resume", penetrating.string(), "--out", (scratch_ / "moreau_jean").string()},
                &err),
            0)
      << err;
}

// events.csv as (t, kind) pairs.
std::vector<std::pair<double, std::string>> EventKinds(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::pair<double, std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const std::size_t a = line.find(','), b = line.find(',', a + 1);
    rows.emplace_back(std::stod(line.substr(0, a)), line.substr(a + 1, b - a - 1));
  }
  return rows;
}
double FirstOf(const std::vector<std::pair<double, std::string>>& rows, const std::string& kind) {
  for (const auto& [t, k] : rows) {
    if (k == kind) return t;
  }
  return -1;
}

// The disk dropped from 1 m onto the floor with e = 0.5, hybrid on (h = 1 ms, the default
// criteria: K = 10 events within W = 10 ms, calm time 50 ms): as in hybrid_scene_test, the
// impacts crowd before their accumulation point t∞ = 1.2850588 s, time-stepping takes over at
// 1.28505 s and hands back 50 ms later.
std::string HybridBall() {
  return "scene: ball\ngravity: [0, -9.81]\n"
         "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
         "contacts:\n"
         "  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],\n"
         "     normal_a: [0, 1], radius_b: 0.1, restitution: 0.5}\n"
         "simulation: {t_end: 1.6, integrator: dopri5, rtol: 1.0e-8, atol: 1.0e-10,\n"
         "             output_step: 0.01, hybrid: on, step: 1.0e-3}\n";
}

// A hybrid run stopped inside its time-stepping phase (t = 1.31 s) resumes in that phase, on the
// same step grid with the same calm stretch: the switch back to the event loop comes at the
// uninterrupted run's time (the same grid point: the grid's round-off, 1e-12 s, bounds the
// difference), and the rest state is the same (τ₀ = 1e-9 m, τ₁ = 1e-6 m/s). A file without the
// phase (written before it was saved) still loads and restarts with the event loop.
TEST_F(ResumeTest, HybridRunResumesInsideItsTimeSteppingPhase) {
  const fs::path scene = scratch_ / "ball.yaml";
  std::ofstream(scene) << HybridBall();
  ASSERT_EQ(Cli({"run", scene.string(), "--out", (scratch_ / "whole").string()}), 0);
  const auto whole = EventKinds(scratch_ / "whole" / "events.csv");
  const double to_ts = FirstOf(whole, "to_time_stepping"), back = FirstOf(whole, "to_event_driven");
  ASSERT_GT(to_ts, 1.28);
  ASSERT_LT(to_ts, 1.31);
  ASSERT_GT(back, 1.31);

  const fs::path saved = InterruptScheme(scene.string(), 1.31, "stopped_ts");
  const std::string json = ReadText(saved);
  EXPECT_NE(json.find("\"phase\": \"time_stepping\""), std::string::npos) << json;
  std::string err;
  const fs::path resumed = scratch_ / "resumed_ts";
  ASSERT_EQ(
      Cli({"run", scene.string(), "--resume", saved.string(), "--out", resumed.string()}, &err), 0)
      << err;
  const auto part = EventKinds(resumed / "events.csv");
  ASSERT_FALSE(part.empty());
  EXPECT_EQ(part.front().second, "to_event_driven");  // no event before the switch back
  EXPECT_NEAR(part.front().first, back, 1e-12);
  const NumericCsv a = ReadNumericCsv(scratch_ / "whole" / "trajectory.csv");
  const NumericCsv b = ReadNumericCsv(resumed / "trajectory.csv");
  EXPECT_NEAR(b.rows.back()[0], 1.6, 1e-12);
  const std::size_t y = a.Column("ball.y"), vy = a.Column("ball.vy");
  EXPECT_NEAR(b.rows.back()[y], a.rows.back()[y], 1e-9);
  EXPECT_NEAR(b.rows.back()[vy], a.rows.back()[vy], 1e-6);

  // Without the "hybrid" object (an older file): loaded, the run restarts with the event loop
  // (no switch back, since it never left it).
  const std::size_t at = json.find(",\n  \"hybrid\"");
  ASSERT_NE(at, std::string::npos);
  const fs::path old_file = scratch_ / "old.json";
  std::ofstream(old_file) << json.substr(0, at) << "\n}\n";
  ASSERT_EQ(Cli({"run", scene.string(), "--resume", old_file.string(), "--out",
                 (scratch_ / "resumed_old").string()},
                &err),
            0)
      << err;
  EXPECT_LT(FirstOf(EventKinds(scratch_ / "resumed_old" / "events.csv"), "to_event_driven"), 0);
}

// A hybrid run stopped in its event-driven phase just before the impacts crowd (after the first
// impact at or after t = 1.284 s, with several of the K = 10 impacts of the window W already
// counted; in the accumulation every step ends with an impact, so the stop is taken at an
// event) resumes with the events it had counted: it switches to time-stepping at the same impact
// as the uninterrupted run (event times agree to the root tolerance, 1e-9 s as in
// BouncingBallContinuesAsTheUninterruptedRun; without the counted events the switch would wait
// for K more impacts).
TEST_F(ResumeTest, HybridRunResumesWithTheEventsItHadCounted) {
  const fs::path scene = scratch_ / "ball.yaml";
  std::ofstream(scene) << HybridBall();
  ASSERT_EQ(Cli({"run", scene.string(), "--out", (scratch_ / "whole").string()}), 0);
  const auto whole = EventKinds(scratch_ / "whole" / "events.csv");
  const double to_ts = FirstOf(whole, "to_time_stepping");
  ASSERT_GT(to_ts, 1.284);
  const fs::path saved = InterruptScheme(scene.string(), 1.284, "stopped_ed", true);
  EXPECT_NE(ReadText(saved).find("\"phase\": \"event_driven\""), std::string::npos)
      << ReadText(saved);
  std::string err;
  const fs::path resumed = scratch_ / "resumed_ed";
  ASSERT_EQ(
      Cli({"run", scene.string(), "--resume", saved.string(), "--out", resumed.string()}, &err), 0)
      << err;
  const auto part = EventKinds(resumed / "events.csv");
  // Between the stop (after the first impact at or after 1.284 s) and the switch.
  double stopped_at = to_ts;
  for (const auto& [t, k] : whole) {
    if (k == "impact" && t >= 1.284) {
      stopped_at = t;
      break;
    }
  }
  long impacts_whole = 0, impacts_part = 0;
  for (const auto& [t, k] : whole) impacts_whole += k == "impact" && t > stopped_at && t <= to_ts;
  for (const auto& [t, k] : part) impacts_part += k == "impact" && t <= to_ts + 1e-9;
  EXPECT_EQ(impacts_part, impacts_whole);
  EXPECT_NEAR(FirstOf(part, "to_time_stepping"), to_ts, 1e-9);
  EXPECT_NEAR(FirstOf(part, "to_event_driven"), FirstOf(whole, "to_event_driven"), 1e-9);
}

TEST_F(ResumeTest, BadSavedStatesAreBadInput) {
  const std::string ball = kExamples + "/bouncing_ball.yaml";
  const std::string pendulum = kExamples + "/planar/sprung_pendulum.yaml";
  const fs::path saved = Interrupt(ball, 1.0);
  const fs::path out = scratch_ / "out";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", ball, "--resume", (scratch_ / "none.json").string()}, "cannot read"},
      {{"run", pendulum, "--resume", saved.string()}, "coordinate 1 is 'ball.x'"},
      {{"run", ball, "--resume", saved.string(), "--t-end", "0.5"}, "not before t_end"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--out", out.string()});
    std::string err;
    EXPECT_EQ(Cli(a, &err), kExitBadInput) << message;
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(out));
  }
  std::string err;
  EXPECT_EQ(
      Cli({"run", ball, "--resume", saved.string(), "--out", saved.parent_path().string()}, &err),
      kExitBadInput);
  EXPECT_NE(err.find("holds the run being resumed"), std::string::npos) << err;
  std::ofstream(scratch_ / "broken.json") << "{\"t\": 1, \"q\": {\"ball.x\": nul";
  EXPECT_EQ(
      Cli({"run", ball, "--resume", (scratch_ / "broken.json").string(), "--out", out.string()}),
      kExitBadInput);
  // A hybrid phase that is neither: named with its line.
  std::string json = ReadText(saved);
  json.insert(json.rfind('}'), ",\n  \"hybrid\": {\"phase\": \"sideways\"}\n");
  std::ofstream(scratch_ / "phase.json") << json;
  EXPECT_EQ(
      Cli({"run", ball, "--resume", (scratch_ / "phase.json").string(), "--out", out.string()},
          &err),
      kExitBadInput);
  EXPECT_NE(err.find("phase.json:"), std::string::npos) << err;
  EXPECT_NE(err.find("hybrid.phase: expected event_driven or time_stepping"), std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace saltus::tools
