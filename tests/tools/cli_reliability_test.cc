// The reliability of `saltus run` as a user meets it (issue 20 §2-4): the real executable
// (SALTUS_CLI_PATH) interrupted by SIGINT, SIGTERM and SIGKILL while it runs, writing to a full
// disk (/dev/full), stale results of an earlier run, and the bounds on magnitudes and output
// rows; the exit codes are those of the README.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/cli.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

const std::string kExamples = SALTUS_EXAMPLES_DIR;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Cli(const std::vector<std::string>& args, std::ostringstream& out, std::ostringstream& err) {
  return RunCli(args, out, err);
}

// A pendulum with a far horizon and a fine output grid: runs until it is stopped.
const std::string kLongPendulum = R"(scene: pendulum
bodies: [{name: bob, mass: 1, inertia: 0.01, position: [1, 0, 0]}]
joints: [{name: pivot, type: revolute, body_a: ground, body_b: bob, point_a: [0, 0],
          point_b: [-1, 0]}]
contacts: [{name: floor, type: disk_line, body_a: ground, body_b: bob, point_a: [0, -1.05],
            normal_a: [0, 1], radius_b: 0.1, restitution: 1}]
simulation: {t_end: 100000, rtol: 1.0e-10, atol: 1.0e-12, output_step: 0.01}
)";

// The child process of one `saltus run`, its stderr in a file.
struct Child {
  pid_t pid = -1;
  fs::path err_file;
  int Wait(int* signal_number = nullptr) const {
    int status = 0;
    waitpid(pid, &status, 0);
    if (signal_number != nullptr) *signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string err() const { return ReadFile(err_file); }
};

Child Start(const std::vector<std::string>& args, const fs::path& err_file) {
  Child c;
  c.err_file = err_file;
  c.pid = fork();
  if (c.pid == 0) {
    const int out = open("/dev/null", O_WRONLY);
    const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    std::vector<char*> argv = {const_cast<char*>(SALTUS_CLI_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(SALTUS_CLI_PATH, argv.data());
    _exit(127);
  }
  return c;
}

// Waits until `path` holds at least `bytes` bytes (the run is under way) while the child runs.
// No fixed deadline short enough to fail on a loaded machine (the suite runs beside builds): it
// gives up only when the child has exited without writing them, or after 10 minutes, and then
// kills the child so that no run outlives the test.
bool WaitForBytes(const Child& child, const fs::path& path, std::uintmax_t bytes) {
  for (int k = 0; k < 60'000; ++k) {
    std::error_code ec;
    if (fs::file_size(path, ec) >= bytes && !ec) return true;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == child.pid) {
      return false;  // exited (not reaped: Wait still reads its status)
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(child.pid, SIGKILL);
  return false;
}

// Whether a file's last line may be cut: a process killed by SIGKILL inside a write(2) to a
// regular file has that write ended at a page boundary (tools/output_file.h).
enum class LastLine { kWhole, kMayBeCutAtAPage };

// Every line ends with '\n' and has the header's number of fields (a last line cut at a page
// boundary excepted, when allowed, and not counted); returns the number of whole rows.
long CheckWholeRows(const fs::path& path, LastLine last = LastLine::kWhole) {
  std::string text = ReadFile(path);
  EXPECT_FALSE(text.empty()) << path;
  if (text.empty()) return 0;
  if (last == LastLine::kMayBeCutAtAPage && text.back() != '\n') {
    EXPECT_EQ(text.size() % static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), 0u)
        << path << " is cut inside a row away from a page boundary";
    text.erase(text.rfind('\n') + 1);
  }
  EXPECT_EQ(text.back(), '\n') << path << " ends inside a row";
  std::istringstream in(text);
  std::string line;
  long fields = -1, rows = -1;
  while (std::getline(in, line)) {
    const long n = static_cast<long>(std::count(line.begin(), line.end(), ',')) + 1;
    if (fields < 0) fields = n;
    EXPECT_EQ(n, fields) << path << " row " << rows + 1;
    ++rows;
  }
  return rows;
}

// A JSON string value "key": "value" of a file written by tools::JsonWriter.
std::string JsonString(const std::string& text, const std::string& key) {
  const std::string tag = "\"" + key + "\": \"";
  const std::size_t at = text.find(tag);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + tag.size();
  return text.substr(begin, text.find('"', begin) - begin);
}

class CliReliabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    scratch_ = fs::temp_directory_path() /
               ("saltus_cli_reliability_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path WriteScene(const std::string& text) {
    const fs::path path = scratch_ / "scene.yaml";
    std::ofstream(path) << text;
    return path;
  }
  fs::path scratch_;
};

TEST_F(CliReliabilityTest, SigintAndSigtermStopTheRunAndKeepTheResults) {
  const fs::path scene = WriteScene(kLongPendulum);
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    const fs::path out = scratch_ / ("out" + std::to_string(sig));
    const Child c = Start({"run", scene.string(), "--out", out.string()}, scratch_ / "err");
    ASSERT_TRUE(WaitForBytes(c, out / "trajectory.csv", 100'000)) << "the run did not start";
    kill(c.pid, sig);
    int signal_number = 0;
    const int code = c.Wait(&signal_number);
    EXPECT_EQ(signal_number, 0) << "killed instead of stopping";
    EXPECT_EQ(code, kExitSignalBase + sig) << c.err();  // README: 130 and 143
    EXPECT_NE(c.err().find("interrupted"), std::string::npos) << c.err();
    const std::string summary = ReadFile(out / "summary.json");
    EXPECT_EQ(JsonString(summary, "status"), "interrupted");
    const std::string last_state = ReadFile(out / "last_state.json");
    EXPECT_EQ(JsonString(last_state, "status"), "interrupted");
    EXPECT_NE(last_state.find("\"bob.y\""), std::string::npos);
    EXPECT_GT(CheckWholeRows(out / "trajectory.csv"), 100);
    CheckWholeRows(out / "events.csv");  // the header at least, and every impact
  }
}

TEST_F(CliReliabilityTest, SigkillLeavesWholeRows) {
  const fs::path scene = WriteScene(kLongPendulum);
  const fs::path out = scratch_ / "out";
  const Child c = Start({"run", scene.string(), "--out", out.string()}, scratch_ / "err");
  ASSERT_TRUE(WaitForBytes(c, out / "trajectory.csv", 300'000)) << c.err();
  kill(c.pid, SIGKILL);
  int signal_number = 0;
  c.Wait(&signal_number);
  EXPECT_EQ(signal_number, SIGKILL);
  // Rows go to disk only whole (tools/output_file.h); SIGKILL inside a write(2) can still have
  // the kernel end it at a page boundary.
  EXPECT_GT(CheckWholeRows(out / "trajectory.csv", LastLine::kMayBeCutAtAPage), 1000);
  EXPECT_GE(CheckWholeRows(out / "events.csv", LastLine::kMayBeCutAtAPage), 0);
  EXPECT_FALSE(fs::exists(out / "summary.json"));  // none of an earlier run either
}

TEST_F(CliReliabilityTest, AFullDiskStopsTheRunWithTheReason) {
  for (const char* file : {"trajectory.csv", "events.csv"}) {
    SCOPED_TRACE(file);
    const fs::path out = scratch_ / (std::string("out_") + file);
    fs::create_directories(out);
    fs::create_symlink("/dev/full", out / file);  // every write fails with ENOSPC
    std::ostringstream o, e;
    const int code = Cli({"run", kExamples + "/bouncing_ball.yaml", "--out", out.string()}, o, e);
    EXPECT_EQ(code, kExitError);
    EXPECT_NE(e.str().find(file), std::string::npos) << e.str();
    EXPECT_NE(e.str().find("No space left on device"), std::string::npos) << e.str();
    // Stopped when the write failed, not at t_end = 10 s.
    const std::string summary = ReadFile(out / "summary.json");
    EXPECT_EQ(JsonString(summary, "status"), "output_error");
    EXPECT_NE(JsonString(summary, "message").find("No space left"), std::string::npos);
    EXPECT_TRUE(fs::exists(out / "last_state.json"));
    // The summary line lists the files written, not the one that could not be.
    const std::string listed = o.str().substr(o.str().find("/ ("));  // after DIR (out_<file>)
    EXPECT_EQ(listed.find(file), std::string::npos) << listed;
    EXPECT_NE(listed.find("summary.json"), std::string::npos) << listed;
    EXPECT_NE(listed.find("last_state.json"), std::string::npos) << listed;
  }
}

TEST_F(CliReliabilityTest, ResultsOfAnEarlierRunAreNotLeftBehind) {
  const fs::path out = scratch_ / "out";
  fs::create_directories(out);
  for (const char* stale : {"reactions.csv", "results.h5", "vtk.pvd", "last_state.json",
                            "summary.json", "summary.json.tmp"}) {
    std::ofstream(out / stale) << "stale\n";
  }
  fs::create_directories(out / "vtk");
  std::ofstream(out / "vtk" / "frame_000041.vtp") << "stale\n";
  std::ostringstream o, e;
  ASSERT_EQ(Cli({"run", kExamples + "/bouncing_ball.yaml", "--out", out.string(), "--t-end", "0.5"},
                o, e),
            kExitOk)
      << e.str();
  for (const char* stale : {"reactions.csv", "results.h5", "vtk.pvd", "last_state.json", "vtk"}) {
    EXPECT_FALSE(fs::exists(out / stale)) << stale;
  }
  EXPECT_EQ(JsonString(ReadFile(out / "summary.json"), "status"), "finished");
}

TEST_F(CliReliabilityTest, UnboundedOrNonPhysicalInputIsBadInputAtItsLine) {
  const std::string ball = ReadFile(kExamples + "/bouncing_ball.yaml");
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = ball;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  struct Case {
    std::string scene, expected;
    int line;
  };
  const std::vector<Case> cases = {
      {replaced("output_step: 0.01", "output_step: 1e-308"), "outside the magnitudes", 29},
      {replaced("output_step: 0.01", "output_step: 1e-7"), "max_output_rows", 29},
      {replaced("position: [0, 1, 0]", "position: [0, 1, 0]\n    velocity: [0, 1.8e19, 0]"),
       "velocity[1] = 1.8e19 is outside", 14},
      {replaced("mass: 1", "mass: 1e-320"), "mass = 1e-320 is outside", 11},
      {replaced("mass: 1", "mass: !!binary aGVsbG8="), "YAML tag", 11},
      {replaced("t_end: 10", "t_end: 1e308"), "outside", 24},
  };
  for (const Case& c : cases) {
    const fs::path scene = WriteScene(c.scene);
    const fs::path out = scratch_ / "never";
    std::ostringstream o, e;
    EXPECT_EQ(Cli({"run", scene.string(), "--out", out.string()}, o, e), kExitBadInput);
    EXPECT_NE(e.str().find(scene.string() + ":" + std::to_string(c.line) + ":"), std::string::npos)
        << e.str();
    EXPECT_NE(e.str().find(c.expected), std::string::npos) << e.str();
    EXPECT_FALSE(fs::exists(out));
  }
  // The override allows a fine grid.
  const fs::path allowed =
      WriteScene(replaced("output_step: 0.01", "output_step: 1e-7\n  max_output_rows: 1e9"));
  std::ostringstream o, e;
  EXPECT_EQ(
      Cli({"run", allowed.string(), "--out", (scratch_ / "a").string(), "--t-end", "1e-5"}, o, e),
      kExitOk)
      << e.str();
  // Command line: denormal, huge or repeated values.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--t-end", "1e-320"},
        {"--t-end", "1e308"},
        {"--t-end", "1", "--t-end", "2"},
        {"--rtol", "1e-6", "--rtol=1e-7"},
        {"--t-end", "1e4"}}) {  // 1e4 s at output_step 1e-7: 1e11 rows > max_output_rows 1e9
    std::vector<std::string> full = {"run", allowed.string(), "--out", (scratch_ / "b").string()};
    full.insert(full.end(), args.begin(), args.end());
    std::ostringstream o2, e2;
    EXPECT_EQ(Cli(full, o2, e2), kExitBadInput) << e2.str();
  }
}

TEST_F(CliReliabilityTest, RowsAtEveryStepStopAtTheLimit) {
  std::string text = ReadFile(kExamples + "/bouncing_ball.yaml");
  text.replace(text.find("output_step: 0.01"), 17, "output_step: 0\n  max_output_rows: 50");
  const fs::path scene = WriteScene(text);
  const fs::path out = scratch_ / "out";
  std::ostringstream o, e;
  EXPECT_EQ(Cli({"run", scene.string(), "--out", out.string()}, o, e), kExitRunFailure);
  EXPECT_EQ(JsonString(ReadFile(out / "summary.json"), "status"), "output_limit");
  const long rows = CheckWholeRows(out / "trajectory.csv");
  EXPECT_GE(rows, 50);
  EXPECT_LE(rows, 53);  // the step that reached the limit, plus event rows of that step
  EXPECT_TRUE(fs::exists(out / "last_state.json"));
}

// The bound on bytes (tools/limits.h): a grid whose trajectory.csv could exceed
// max_output_bytes is refused before anything is written, naming the option; a run without a
// grid stops when its CSV files reach it, keeping whole rows and last_state.json.
TEST_F(CliReliabilityTest, OutputBytesAreBoundedBeforeAndDuringTheRun) {
  const std::string ball = ReadFile(kExamples + "/bouncing_ball.yaml");
  // The ball: nq + nv = 6, so 7 numbers a row of at most 25 bytes; output_step 0.01 over 10 s is
  // 1001 rows, at most 175,175 bytes: refused under 1e5, run under 2e5.
  const fs::path scene = WriteScene(ball);
  const fs::path never = scratch_ / "never";
  std::ostringstream o, e;
  EXPECT_EQ(
      Cli({"run", scene.string(), "--out", never.string(), "--max-output-bytes", "1e5"}, o, e),
      kExitBadInput);
  EXPECT_NE(e.str().find(scene.string() + ":29:"), std::string::npos) << e.str();
  EXPECT_NE(e.str().find("up to 175175 bytes of trajectory.csv"), std::string::npos) << e.str();
  EXPECT_NE(e.str().find("max_output_bytes = 100000"), std::string::npos) << e.str();
  EXPECT_NE(e.str().find("--max-output-bytes"), std::string::npos) << e.str();
  EXPECT_FALSE(fs::exists(never));
  // The scene key says the same.
  std::string keyed = ball;
  keyed.replace(keyed.find("output_step: 0.01"), 17, "output_step: 0.01\n  max_output_bytes: 1e5");
  std::ostringstream o1, e1;
  EXPECT_EQ(Cli({"run", WriteScene(keyed).string(), "--out", never.string()}, o1, e1),
            kExitBadInput);
  EXPECT_NE(e1.str().find("max_output_bytes = 100000"), std::string::npos) << e1.str();
  std::ostringstream o2, e2;
  EXPECT_EQ(
      Cli({"run", scene.string(), "--out", (scratch_ / "ok").string(), "--max-output-bytes", "2e5"},
          o2, e2),
      kExitOk)
      << e2.str();

  // Rows at every accepted step: stopped once the CSV files hold 20,000 bytes.
  std::string steps = ball;
  steps.replace(steps.find("output_step: 0.01"), 17, "output_step: 0");
  const fs::path out = scratch_ / "out";
  std::ostringstream o3, e3;
  EXPECT_EQ(
      Cli({"run", WriteScene(steps).string(), "--out", out.string(), "--max-output-bytes", "2e4"},
          o3, e3),
      kExitRunFailure);
  EXPECT_NE(e3.str().find("max_output_bytes = 20000"), std::string::npos) << e3.str();
  EXPECT_EQ(JsonString(ReadFile(out / "summary.json"), "status"), "output_limit");
  EXPECT_GE(CheckWholeRows(out / "trajectory.csv"), 1);
  const auto bytes = fs::file_size(out / "trajectory.csv") + fs::file_size(out / "events.csv");
  // Reached at the step that crossed the bound: at most that step's rows beyond it (one step
  // row and two event rows of at most 7 x 25 bytes, and one events.csv line).
  EXPECT_GE(bytes, 20000u);
  EXPECT_LE(bytes, 20000u + 3 * 175 + 400);
  EXPECT_TRUE(fs::exists(out / "last_state.json"));
}

// Every way a run can stop with exit 3, provoked on an example: the message says when (t), where
// (the contacts, with μ for friction), what happened in the scene's terms, and what to try, and
// names no C++ function ("SolveContactAccelerations: ..." was printed before).
TEST_F(CliReliabilityTest, RunFailuresSayWhatHappenedAndWhatToTry) {
  struct Case {
    std::string example, appended, status;
    std::vector<std::string> expected;  // substrings of stderr
    std::string solver_account = {};    // in summary.json's message, not on the terminal
  };
  const std::vector<Case> cases = {
      // One projected Gauss-Seidel sweep cannot reach a residual of 1e-16 on the stacked balls'
      // first closing contacts.
      {"ball_stack.yaml",
       "  lcp_solver: pgs\n  lcp_max_iterations: 1\n  lcp_tolerance: 1.0e-16\n",
       "lcp_failure",
       {"contacts 'ground_bottom', 'bottom_middle'", "no contact forces",
        "what to try: ", "lcp_solver"},
       "lcp pgs"},
      // Painlevé's rod with μ = 1.5 > 4/3 (the example's header): inconsistent at t = 0.
      {"friction/painleve_rod.yaml",
       "",
       "painleve",
       {"at t = 0 s", "'rough_end' (mu = 1.5", "inconsistent", "painleve: impact"}},
      // The fourth impact of the bouncing ball (t = 2.518 s) exceeds 3 events per 100 s.
      {"bouncing_ball.yaml",
       "  zeno: {max_events: 3, window: 100}\n",
       "event_accumulation",
       {"at t = 2.51", "more than 3 events within 100 s", "restitution_threshold"}},
      // rtol = atol = 1e-2 without projection drifts off the joints: one Newton iteration of
      // the position projection at the first event cannot close them.
      {"slider_crank_stop.yaml",
       "  projection: false\n  projection_max_iterations: 1\n",
       "projection_failure",
       {"position projection failed", "s (residual", "largest at '", "projection_max_iterations"}},
      // h_min = 0.05 s at rtol 1e-13: DOPRI5's first step is already below it.
      {"slider_crank_stop.yaml",
       "  h_min: 0.05\n",
       "step_size_underflow",
       {"at t = 0 s", "h_min = 0.05", "lower h_min"}},
  };
  const std::regex function_name("[A-Z][a-z]+[A-Z][A-Za-z]*:");
  // Solver wording a user cannot act on (the error line; the advice names scene keys).
  const std::regex solver_words(
      "lemke|siconos|pgs|nsgs|nsn|fc3d|enumerat|ray termination|pivot| lcp ", std::regex::icase);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.example + " -> " + c.status);
    std::string text = ReadFile(kExamples + "/" + c.example);
    if (c.example == "friction/painleve_rod.yaml") {
      text.replace(text.find("\n  painleve: impact"), 19, "\n  painleve: error");
    }
    if (c.status == "projection_failure") {
      text.replace(text.find("rtol: 1.0e-6"), 12, "rtol: 1.0e-2");
      text.replace(text.find("atol: 1.0e-8"), 12, "atol: 1.0e-2");
    }
    if (c.status == "step_size_underflow") {
      text.replace(text.find("rtol: 1.0e-6"), 12, "rtol: 1.0e-13");
    }
    const fs::path out = scratch_ / c.status;
    std::ostringstream o, e;
    ASSERT_EQ(Cli({"run", WriteScene(text + c.appended).string(), "--out", out.string()}, o, e),
              kExitRunFailure)
        << e.str();
    EXPECT_EQ(JsonString(ReadFile(out / "summary.json"), "status"), c.status);
    EXPECT_NE(e.str().find(": " + c.status + ": "), std::string::npos) << e.str();
    EXPECT_NE(e.str().find("what to try: "), std::string::npos) << e.str();
    for (const std::string& expected : c.expected) {
      EXPECT_NE(e.str().find(expected), std::string::npos) << expected << " not in\n" << e.str();
    }
    EXPECT_FALSE(std::regex_search(e.str(), function_name)) << e.str();
    const std::string error_line = e.str().substr(0, e.str().find("what to try: "));
    EXPECT_FALSE(std::regex_search(error_line, solver_words)) << error_line;
    if (!c.solver_account.empty()) {
      EXPECT_NE(JsonString(ReadFile(out / "summary.json"), "message").find(c.solver_account),
                std::string::npos)
          << ReadFile(out / "summary.json");
    }
  }
}

}  // namespace
}  // namespace saltus::tools
