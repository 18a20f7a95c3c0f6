// The command line as a user meets it: through RunCli and through the real `saltus` executable
// (SALTUS_CLI_PATH), plus the C++ embedding example (SALTUS_EMBEDDING_EXAMPLE_PATH).
#include "tools/cli.h"
#include "tests/tools/cli_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "integrators/integrator.h"
#include "tools/build_info.h"
#include "tools/json_writer.h"
#include "tools/metadata.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

const std::string kExamples = SALTUS_EXAMPLES_DIR;
const std::string kBouncingBall = kExamples + "/bouncing_ball.yaml";

using test_support::Cli;
using test_support::CliResult;
using test_support::ReadFile;
using test_support::Split;

// Runs a shell command; returns its exit status and stdout (stderr goes to `err_file`).
CliResult Process(const std::string& command, const fs::path& err_file) {
  FILE* pipe = popen((command + " 2>'" + err_file.string() + "'").c_str(), "r");
  if (pipe == nullptr) return {-1, "", "popen failed"};
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = pclose(pipe);
  std::ifstream err_in(err_file);
  std::stringstream err;
  err << err_in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err.str()};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Each test gets an empty scratch directory, removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    scratch_ = fs::temp_directory_path() /
               ("saltus_cli_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }

  fs::path WriteScene(const std::string& name, const std::string& text) {
    const fs::path path = scratch_ / name;
    std::ofstream(path) << text;
    return path;
  }

  fs::path scratch_;
};

TEST_F(CliTest, ListShowsEveryIntegratorAndItsFormulations) {
  const CliResult r = Cli({"list"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(r.err.empty()) << r.err;
  // The descriptions are wrapped: compare with the line breaks and indents as single spaces.
  std::string flat;
  for (const std::string& line : Lines(r.out)) {
    const std::size_t first = line.find_first_not_of(' ');
    flat += (flat.empty() ? "" : " ") + (first == std::string::npos ? "" : line.substr(first));
  }
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    EXPECT_NE(r.out.find(std::string(e.name)), std::string::npos) << r.out;
    EXPECT_NE(flat.find(std::string(e.description)), std::string::npos) << e.name;
    for (integrators::Formulation f : e.formulations) {
      EXPECT_NE(r.out.find(std::string(integrators::ToString(f))), std::string::npos);
    }
    // What each scheme does with friction phases, after its formulations.
    const std::string friction = std::string("friction: sliding ") +
                                 (e.non_ideal_forces ? "yes" : "no") + ", sticking " +
                                 (e.velocity_level_rows ? "yes" : "no");
    EXPECT_NE(flat.find(friction, flat.find(std::string(e.description))), std::string::npos)
        << r.out;
  }
}

TEST_F(CliTest, BinaryListsDopri5) {
  const CliResult r = Process(std::string("'") + SALTUS_CLI_PATH + "' list", scratch_ / "err");
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("dopri5"), std::string::npos) << r.out;
}

TEST_F(CliTest, HelpAndUnknownCommands) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"help"}, {"--help"}, {"-h"}, {"help", "--help"}, {"help", "-h"}, {"help", "help"}}) {
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitOk) << args.back() << r.err;
    EXPECT_NE(r.out.find("saltus run SCENE [options]"), std::string::npos) << r.out;
    // Every exit code `saltus run` can return (README "Exit codes").
    for (const char* code :
         {"0 finished", "1 output", "2 bad input", "3 the run stopped", "130/143"}) {
      EXPECT_NE(r.out.find(code), std::string::npos) << code;
    }
  }
  const CliResult none = Cli({});
  EXPECT_EQ(none.code, kExitBadInput);
  EXPECT_NE(none.err.find("usage"), std::string::npos);
  const CliResult unknown = Cli({"frobnicate"});
  EXPECT_EQ(unknown.code, kExitBadInput);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos) << unknown.err;
  EXPECT_EQ(Cli({"list", "extra"}).code, kExitBadInput);
}

TEST_F(CliTest, EveryCommandHasItsOwnHelp) {
  for (const std::string command : {"run", "compare", "generate", "list"}) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{command, "--help"},
                                               {command, "-h"},
                                               {"help", command},
                                               {command, "x.yaml", "--rtol", "1", "--help"}}) {
      const CliResult r = Cli(args);
      EXPECT_EQ(r.code, kExitOk) << command << r.err;
      EXPECT_EQ(r.out.rfind("usage: saltus " + command, 0), 0u) << r.out;
      EXPECT_TRUE(r.err.empty()) << r.err;
    }
  }
  // Every run option in the parser's list is in the help.
  const std::string help = Cli({"run", "--help"}).out;
  for (const char* option : {"--integrator", "--formulation", "--rtol", "--atol", "--t-end",
                             "--out", "--hdf5", "--vtk", "--reactions", "--event-rows"}) {
    EXPECT_NE(help.find(option), std::string::npos) << option;
  }
  EXPECT_EQ(Cli({"help", "frobnicate"}).code, kExitBadInput);
}

TEST_F(CliTest, VersionPrintsTheVersionAndCommit) {
  for (const std::string flag : {"--version", "version"}) {
    const CliResult r = Cli({flag});
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_EQ(r.out,
              "saltus " + std::string(Version()) + " (commit " + std::string(Commit()) + ")\n");
  }
  EXPECT_FALSE(Version().empty());
  EXPECT_FALSE(Commit().empty());
  const CliResult binary =
      Process(std::string("'") + SALTUS_CLI_PATH + "' --version", scratch_ / "err");
  EXPECT_EQ(binary.code, kExitOk);
  EXPECT_EQ(binary.out.rfind("saltus 0.", 0), 0u) << binary.out;
}

TEST_F(CliTest, UnknownCommandSuggestsTheNearestOne) {
  const CliResult r = Cli({"rnu"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("unknown command 'rnu' (did you mean 'run'?)"), std::string::npos) << r.err;
}

TEST_F(CliTest, ListWrapsToTheTerminalWidth) {
  for (const int columns : {60, 80, 120}) {
    setenv("COLUMNS", std::to_string(columns).c_str(), 1);  // stdout of the test is no terminal
    const CliResult r = Cli({"list"});
    ASSERT_EQ(r.code, kExitOk);
    std::size_t widest = 0;
    for (const std::string& line : Lines(r.out)) widest = std::max(widest, line.size());
    EXPECT_LE(widest, static_cast<std::size_t>(columns)) << r.out;
    EXPECT_GT(widest, static_cast<std::size_t>(columns) - 25) << r.out;  // and uses the room
  }
  unsetenv("COLUMNS");
}

// Without --formulation, --integrator takes the integrator's first (default) formulation when
// the scene names none; a formulation the scene gives is kept when the integrator supports it.
TEST_F(CliTest, FormulationDefaultsToTheIntegratorsFirst) {
  std::string text = ReadFile(kBouncingBall);
  const std::size_t at = text.find("  formulation: index1\n");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, 22);
  const fs::path plain = WriteScene("plain.yaml", text);
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    const fs::path out = scratch_ / std::string(e.name);
    const CliResult r = Cli({"run", plain.string(), "--integrator", std::string(e.name), "--t-end",
                             "0.2", "--out", out.string()});
    ASSERT_EQ(r.code, kExitOk) << e.name << ": " << r.err;
    const std::string expected =
        "\"formulation\": \"" + std::string(integrators::ToString(e.formulations.front())) + "\"";
    EXPECT_NE(ReadFile(out / "summary.json").find(expected), std::string::npos) << e.name;
  }
  text.insert(at, "  formulation: index2\n");
  text.replace(text.find("integrator: dopri5"), 18, "integrator: hem5");  // a valid scene
  const fs::path scene = WriteScene("index2.yaml", text);
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    const bool has_index2 = std::find(e.formulations.begin(), e.formulations.end(),
                                      integrators::Formulation::kIndex2) != e.formulations.end();
    const fs::path out = scratch_ / ("i2_" + std::string(e.name));
    const CliResult r = Cli({"run", scene.string(), "--integrator", std::string(e.name), "--t-end",
                             "0.2", "--out", out.string()});
    ASSERT_EQ(r.code, kExitOk) << e.name << ": " << r.err;
    const std::string expected =
        "\"formulation\": \"" +
        std::string(has_index2 ? "index2" : integrators::ToString(e.formulations.front())) + "\"";
    EXPECT_NE(ReadFile(out / "summary.json").find(expected), std::string::npos) << e.name;
  }
}

TEST_F(CliTest, SummaryRecordsTheProvenance) {
  const fs::path out = scratch_ / "prov";
  const CliResult r = Cli({"run", kBouncingBall, "--t-end", "0.1", "--out", out.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string summary = ReadFile(out / "summary.json");
  const std::string sha = Sha256Hex(ReadFile(kBouncingBall));
  for (const std::string& expected :
       {"\"saltus_version\": \"" + std::string(Version()) + "\"",
        "\"saltus_commit\": \"" + std::string(Commit()) + "\"", "\"scene_sha256\": \"" + sha + "\"",
        "\"command_line\": \"saltus run " + kBouncingBall + " --t-end 0.1 --out " + out.string() +
            "\"",
        std::string("\"host\": \"")}) {
    EXPECT_NE(summary.find(expected), std::string::npos) << expected << "\n" << summary;
  }
}

TEST_F(CliTest, BadSceneExitsTwoAndWritesNothing) {
  std::string text = ReadFile(kBouncingBall);
  const std::size_t at = text.find("mass: 1\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "mass: -1\n");
  const fs::path scene = WriteScene("bad.yaml", text);
  // The line of "mass:" in the example file.
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + at, '\n')) + 1;
  const fs::path out = scratch_ / "out";

  const CliResult r = Cli({"run", scene.string(), "--out", out.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find(scene.string() + ":" + std::to_string(line) + ": body 'ball': mass"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));

  const CliResult p = Process(std::string("'") + SALTUS_CLI_PATH + "' run '" + scene.string() +
                                  "' --out '" + out.string() + "'",
                              scratch_ / "err");
  EXPECT_EQ(p.code, kExitBadInput);
  EXPECT_NE(p.err.find(":" + std::to_string(line) + ": body 'ball'"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliTest, InitialPenetrationIsBadInputAtTheContactLine) {
  // The ball centre at 0.05 m: the disk (r = 0.1 m) penetrates the ground by 5 cm.
  std::string text = ReadFile(kBouncingBall);
  const std::string released = "position: [0, 1, 0]";
  const std::size_t at = text.find(released);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, released.size(), "position: [0, 0.05, 0]");
  const fs::path scene = WriteScene("penetrating.yaml", text);
  const std::size_t contact = text.find("- name: floor");
  ASSERT_NE(contact, std::string::npos);
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + contact, '\n')) + 1;
  const fs::path out = scratch_ / "out";
  const CliResult r = Cli({"run", scene.string(), "--out", out.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find(scene.string() + ":" + std::to_string(line) + ": "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("'floor'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliTest, MissingSceneFileExitsTwo) {
  const fs::path out = scratch_ / "out";
  const CliResult r = Cli({"run", (scratch_ / "nope.yaml").string(), "--out", out.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("nope.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliTest, BadCommandLineValuesExitTwoAndWriteNothing) {
  const fs::path out = scratch_ / "out";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--rtol", "abc"}, "--rtol: expected a number, got 'abc'"},
      {{"--rtol", "0"}, "--rtol: must be > 0"},
      {{"--rtol=-1e-3"}, "--rtol: must be > 0"},
      {{"--atol", "1e-3x"}, "--atol: expected a number"},
      {{"--t-end", "0"}, "--t-end: must be > 0"},
      {{"--t-end", "inf"}, "--t-end: expected a number"},
      {{"--bogus", "1"}, "unknown option '--bogus'"},
      {{"--integrater", "hem5"}, "unknown option '--integrater' (did you mean '--integrator'?)"},
      {{"-x"}, "unknown option '-x'"},
      {{"--formulation", "index9"}, "--formulation: 'index9' is unknown"},
      {{"--integrator", "nope"}, "--integrator: unknown integrator 'nope'"},
      {{"--rtol"}, "--rtol: missing value"},
      {{"second.yaml"}, "unexpected argument 'second.yaml'"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"run", kBouncingBall, "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = Cli(args);
    EXPECT_EQ(r.code, kExitBadInput) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << message;
  }
  EXPECT_EQ(Cli({"run"}).code, kExitBadInput);  // no scene
}

TEST_F(CliTest, UnsupportedFormulationOnTheCommandLineExitsTwo) {
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    for (const char* name : {"index1", "index2", "index3", "ggl"}) {
      const integrators::Formulation f = *integrators::ParseFormulation(name);
      if (std::find(e.formulations.begin(), e.formulations.end(), f) != e.formulations.end()) {
        continue;
      }
      const fs::path out = scratch_ / "out";
      const CliResult r = Cli({"run", kBouncingBall, "--integrator", std::string(e.name),
                               "--formulation", name, "--out", out.string()});
      EXPECT_EQ(r.code, kExitBadInput);
      EXPECT_NE(r.err.find("does not support formulation"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(out));
      return;
    }
  }
  GTEST_SKIP() << "every integrator supports every formulation";
}

TEST_F(CliTest, BouncingBallWritesTheDocumentedFiles) {
  const fs::path out = scratch_ / "bb";
  const CliResult r = Cli({"run", kBouncingBall, "--t-end", "2", "--out", out.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // no progress bar when stderr is not a terminal
  EXPECT_NE(r.out.find("bouncing_ball: finished at t = 2 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(out.string()), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out / "last_state.json"));

  // trajectory.csv: header, output rows every 0.01 s, and two rows at each impact.
  const std::vector<std::string> trajectory = Lines(ReadFile(out / "trajectory.csv"));
  ASSERT_GT(trajectory.size(), 200u);
  EXPECT_EQ(trajectory[0], "t,ball.x,ball.y,ball.theta,ball.vx,ball.vy,ball.vtheta");
  EXPECT_EQ(trajectory[1], "0,0,1,0,0,0,0");  // the initial state, exactly as in the file
  EXPECT_EQ(Split(trajectory.back(), ',')[0], "2");

  // events.csv: header and the impacts of the closed form. Free flight is a quadratic, which
  // dopri5 (order 5, dense output of order 4) integrates exactly, so event times differ from
  // the closed form only by the root tolerance (1e-12 relative) and round-off: 1e-9 is margin.
  const std::vector<std::string> events = Lines(ReadFile(out / "events.csv"));
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0],
            "t,kind,contacts,impulse,energy_before,energy_after,tangential_impulse,modes,"
            "energy_gain,indeterminate");
  const double g = 9.81, e = 0.9;
  const double t1 = std::sqrt(2 * 0.9 / g);  // gap 0.9 m
  const double t2 = t1 + 2 * e * g * t1 / g;
  const std::vector<std::string> first = Split(events[1], ',');
  ASSERT_EQ(first.size(), 10u);
  EXPECT_NEAR(std::stod(first[0]), t1, 1e-9);
  EXPECT_EQ(first[1], "impact");
  EXPECT_EQ(first[2], "floor");
  // Impulse p = m (1 + e) v1 with v1 = g t1 (m = 1 kg); same margin as above.
  EXPECT_NEAR(std::stod(first[3]), (1 + e) * g * t1, 1e-9);
  EXPECT_NEAR(std::stod(Split(events[2], ',')[0]), t2, 1e-9);

  // The two trajectory rows of the first impact: same t and q; Newton's law vy+ = -e vy-.
  std::size_t k = 1;
  while (k < trajectory.size() && Split(trajectory[k], ',')[0] != first[0]) ++k;
  ASSERT_LT(k + 1, trajectory.size()) << "no trajectory row at the first impact";
  const std::vector<std::string> before = Split(trajectory[k], ',');
  const std::vector<std::string> after = Split(trajectory[k + 1], ',');
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[2], before[2]);  // q is continuous: the same printed value
  const double vy_minus = std::stod(before[5]), vy_plus = std::stod(after[5]);
  EXPECT_NEAR(vy_minus, -g * t1, 1e-9);  // closed form, as above
  // One-contact LCP: exact up to round-off on |v| ~ 4 m/s.
  EXPECT_NEAR(vy_plus, -e * vy_minus, 1e-12);

  // summary.json
  const std::string summary = ReadFile(out / "summary.json");
  for (const std::string key : {"\"scene\": \"bouncing_ball\"",
                                "\"integrator\": \"dopri5\"",
                                "\"formulation\": \"index1\"",
                                "\"status\": \"finished\"",
                                "\"t_end\": 2",
                                "\"t_reached\": 2",
                                "\"accepted_steps\": ",
                                "\"rejected_steps\": ",
                                "\"rhs_evaluations\": ",
                                "\"position_projections\": ",
                                "\"velocity_projections\": ",
                                "\"impact\": ",
                                "\"takeoff\": ",
                                "\"contact_closed\": ",
                                "\"time\": ",
                                "\"max_position_violation\": ",
                                "\"max_velocity_violation\": ",
                                "\"max_acceleration_violation\": ",
                                "\"min_gap_after_projection\": ",
                                "\"wall_seconds\": "}) {
    EXPECT_NE(summary.find(key), std::string::npos) << key << " missing from\n" << summary;
  }
  // Impacts in [0, 2]: the first two (t2 = 1.199 s) and the third at t2 + 2 e² v1/g = 1.893 s.
  EXPECT_NE(summary.find("\"impact\": 3,"), std::string::npos) << summary;
}

TEST_F(CliTest, OverridesReachTheRun) {
  const fs::path out = scratch_ / "o";
  const CliResult r =
      Cli({"run", kBouncingBall, "--integrator", "dopri5", "--formulation", "index1", "--rtol=1e-5",
           "--atol", "1e-7", "--t-end=0.5", "--out", out.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string summary = ReadFile(out / "summary.json");
  EXPECT_NE(summary.find("\"rtol\": " + FormatDouble(1e-5) + ","), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"atol\": " + FormatDouble(1e-7) + ","), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"t_reached\": 0.5,"), std::string::npos) << summary;
}

TEST_F(CliTest, TwoRunsGiveByteIdenticalResults) {
  const fs::path a = scratch_ / "a", b = scratch_ / "b";
  ASSERT_EQ(Cli({"run", kBouncingBall, "--t-end", "3", "--out", a.string()}).code, kExitOk);
  const CliResult p = Process(std::string("'") + SALTUS_CLI_PATH + "' run '" + kBouncingBall +
                                  "' --t-end 3 --out '" + b.string() + "'",
                              scratch_ / "err");
  ASSERT_EQ(p.code, kExitOk) << p.err;
  const std::string trajectory = ReadFile(a / "trajectory.csv");
  EXPECT_GT(trajectory.size(), 1000u);
  EXPECT_TRUE(trajectory == ReadFile(b / "trajectory.csv"));
  EXPECT_TRUE(ReadFile(a / "events.csv") == ReadFile(b / "events.csv"));
}

// The command line loads Siconos Numerics only when a run solves a contact problem with it
// (contact/siconos_loader.h), FCL only with the first 3D shape (contact/fcl_backend.h), links
// HDF5 without its network drivers and yaml-cpp, zlib, libsz statically, and (with
// SALTUS_STATIC_CXX_RUNTIME) its C++ runtime statically (tools/CMakeLists.txt); URDF is read
// without a library (tools/urdf.h): the bouncing ball with HDF5 output loads none of Siconos,
// FCL, libcurl, yaml-cpp, urdfdom, libstdc++, and its results.h5 is an HDF5 file. The dynamic
// loader lists every library it opens under LD_DEBUG=files (glibc).
TEST_F(CliTest, BouncingBallLoadsNeitherSiconosNorFclNorHdf5NetworkLibraries) {
  const fs::path out = scratch_ / "ball";
  const CliResult p = Process("LD_DEBUG=files '" + std::string(SALTUS_CLI_PATH) + "' run '" +
                                  kBouncingBall + "' --t-end 1 --hdf5 --out '" + out.string() + "'",
                              scratch_ / "err");
  ASSERT_EQ(p.code, kExitOk) << p.err;
  ASSERT_NE(p.err.find("file=libc.so"), std::string::npos) << "no LD_DEBUG output:\n" << p.err;
  std::vector<std::string> absent = {
      "libsiconos_numerics", "libfcl",           "libsaltus_fcl", "libcurl",
      "libyaml-cpp",         "libz.so",          "libsz.so",      "liburdfdom",
      "libtinyxml",          "libconsole_bridge"};
#ifdef SALTUS_STATIC_CXX_RUNTIME
  absent.insert(absent.end(), {"libstdc++", "libgcc_s"});
#endif
  for (const std::string& library : absent) {
    EXPECT_EQ(p.err.find(library), std::string::npos) << library << " loaded:\n" << p.err;
  }
  const std::string h5 = ReadFile(out / "results.h5");
  ASSERT_GE(h5.size(), 8u);
  EXPECT_EQ(h5.substr(0, 8), std::string("\x89HDF\r\n\x1a\n", 8));  // HDF5 format signature
}

// A scene with 3D shapes loads the FCL module on demand and runs: the ball on the table (a
// sphere above a box) hits it at the closed-form time of its free fall.
TEST_F(CliTest, SpatialSceneLoadsTheFclModule) {
  const fs::path out = scratch_ / "table";
  const CliResult p =
      Process("LD_DEBUG=files '" + std::string(SALTUS_CLI_PATH) + "' run '" + kExamples +
                  "/spatial/ball_on_table.yaml' --t-end 0.5 --out '" + out.string() + "'",
              scratch_ / "err");
  ASSERT_EQ(p.code, kExitOk) << p.err;
  EXPECT_NE(p.err.find("libsaltus_fcl.so"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("libfcl"), std::string::npos) << p.err;
  const std::vector<std::string> events = Lines(ReadFile(out / "events.csv"));
  ASSERT_GT(events.size(), 1u);
  // Free fall of the sphere's lowest point from 1.22 m onto the table top at 0.72 m:
  // t = √(2 · 0.5 / 9.81); event location at rtol 1e-8 is far inside 1e-6 s.
  EXPECT_NEAR(std::stod(events[1].substr(0, events[1].find(','))), std::sqrt(1.0 / 9.81), 1e-6);
}

// A module that cannot be opened is an error naming it, not a crash (SALTUS_FCL_MODULE points at
// a file that is not a shared object).
TEST_F(CliTest, MissingFclModuleIsAnError) {
  const fs::path bogus = WriteScene("not_a_module.so", "not a shared object\n");
  const fs::path out = scratch_ / "bogus";
  const CliResult p = Process(
      "SALTUS_FCL_MODULE='" + bogus.string() + "' '" + std::string(SALTUS_CLI_PATH) + "' run '" +
          kExamples + "/spatial/ball_on_table.yaml' --t-end 0.1 --out '" + out.string() + "'",
      scratch_ / "err");
  EXPECT_NE(p.code, kExitOk);
  EXPECT_NE(p.err.find("FCL module"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("not_a_module.so"), std::string::npos) << p.err;
}

TEST_F(CliTest, RunFailureExitsThreeAndSavesTheLastState) {
  // The bouncing ball with a Zeno guard that allows only 3 events per 100 s: the 4th impact
  // (t = 2.518 s) stops the run with RunStatus::kEventAccumulation.
  std::string text = ReadFile(kBouncingBall);
  text += "  zeno: {max_events: 3, window: 100}\n";
  const fs::path scene = WriteScene("zeno.yaml", text);
  const fs::path out = scratch_ / "z";
  const CliResult r = Cli({"run", scene.string(), "--out", out.string()});
  EXPECT_EQ(r.code, kExitRunFailure) << r.out << r.err;
  EXPECT_NE(r.err.find("event_accumulation"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("last_state.json"), std::string::npos) << r.err;
  for (const char* file : {"trajectory.csv", "events.csv", "summary.json", "last_state.json"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  EXPECT_EQ(Lines(ReadFile(out / "events.csv")).size(), 5u);  // header + 4 impacts
  const std::string last = ReadFile(out / "last_state.json");
  for (const std::string key : {"\"status\": \"event_accumulation\"", "\"reason\": \"", "\"t\": ",
                                "\"ball.y\": ", "\"ball.vy\": ", "\"closed_contacts\": ["}) {
    EXPECT_NE(last.find(key), std::string::npos) << key << " missing from\n" << last;
  }
  EXPECT_NE(ReadFile(out / "summary.json").find("\"status\": \"event_accumulation\""),
            std::string::npos);

  // A later successful run in the same directory removes the stale last state.
  ASSERT_EQ(Cli({"run", kBouncingBall, "--t-end", "0.1", "--out", out.string()}).code, kExitOk);
  EXPECT_FALSE(fs::exists(out / "last_state.json"));
}

// A run that succeeds prints nothing on stderr from the real executable (the progress bar is
// drawn only on a terminal). Siconos Numerics writes to stderr itself when its Newton solver
// factorizes a singular Jacobian, which the rank-deficient contact problems of a box resting on
// its four corners gave (28 "NM_LU_factorize: ... DGETRF failed" lines on the spinning box,
// 2 on the box on the incline; contact/complementarity.h).
TEST_F(CliTest, SuccessfulRunsKeepStderrEmpty) {
  std::string spinning = ReadFile(kExamples + "/friction3d/spinning_sliding_box.yaml");
  const std::string sliding = "velocity: [1, 0, 0]";
  ASSERT_NE(spinning.find(sliding), std::string::npos);
  spinning.replace(spinning.find(sliding), sliding.size(), "velocity: [0, 0, 0]");
  const std::vector<fs::path> scenes = {kExamples + "/friction3d/spinning_sliding_box.yaml",
                                        WriteScene("spinning_only.yaml", spinning),
                                        kExamples + "/friction3d/box_incline_stick.yaml"};
  for (std::size_t k = 0; k < scenes.size(); ++k) {
    SCOPED_TRACE(scenes[k].string());
    const CliResult r =
        Process(std::string("'") + SALTUS_CLI_PATH + "' run '" + scenes[k].string() + "' --out '" +
                    (scratch_ / ("out" + std::to_string(k))).string() + "'",
                scratch_ / "err");
    EXPECT_EQ(r.code, kExitOk) << r.err;
    EXPECT_EQ(r.err, "");
  }
}

TEST_F(CliTest, DefaultOutputDirectoryIsOutSlashSceneName) {
  const fs::path cwd = fs::current_path();
  fs::current_path(scratch_);
  const CliResult r = Cli({"run", kBouncingBall, "--t-end", "0.1"});
  fs::current_path(cwd);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(fs::exists(scratch_ / "out" / "bouncing_ball" / "trajectory.csv"));
}

TEST(ProgressBarTest, DrawsInPlaceAndErasesItself) {
  std::ostringstream err;
  ProgressBar bar(err, /*enabled=*/true, 0.0, 10.0, /*delay=*/std::chrono::seconds(0),
                  /*period=*/std::chrono::seconds(0));
  const Eigen::VectorXd x = Eigen::VectorXd::Zero(1);
  bar.OnStep(2.5, x, x);
  EXPECT_TRUE(bar.drawn());
  const std::string line = err.str();
  EXPECT_EQ(line.front(), '\r');
  EXPECT_EQ(line.find('\n'), std::string::npos);  // one line, never a newline
  EXPECT_NE(line.find(" 25.0 %"), std::string::npos) << line;
  bar.Finish();
  EXPECT_FALSE(bar.drawn());
  EXPECT_EQ(err.str().back(), '\r');
}

// A fake clock: the bar redraws from steps, outputs and events, at most once per period, and
// estimates the time left from the pace over its window (here the whole run, shorter than the
// window's 3 s but for its first 10 s without a draw).
TEST(ProgressBarTest, RedrawsFromEveryCallbackWithAnEstimateOfTheTimeLeft) {
  using Clock = ProgressBar::Clock;
  Clock::time_point now{};
  std::ostringstream err;
  ProgressBar bar(err, /*enabled=*/true, 0.0, 10.0, std::chrono::seconds(1),
                  std::chrono::milliseconds(100), [&] { return now; });
  const Eigen::VectorXd x = Eigen::VectorXd::Zero(1);
  bar.OnStep(0.5, x, x);  // within the delay: nothing
  EXPECT_TRUE(err.str().empty());
  now += std::chrono::seconds(10);
  events::Event e;
  e.t = 2.5;
  bar.OnEvent(e, x, x, x);  // 25 % in 10 s: 30 s left at that rate
  std::string line = err.str();
  EXPECT_NE(line.find(" 25.0 %"), std::string::npos) << line;
  EXPECT_NE(line.find("1 events"), std::string::npos) << line;
  EXPECT_NE(line.find("10 s, ~30 s left"), std::string::npos) << line;
  bar.OnOutput(3.0, x, x);  // within the period: no redraw
  EXPECT_EQ(err.str(), line);
  now += std::chrono::milliseconds(150);
  bar.OnOutput(5.0, x, x);  // 50 % in 10.15 s
  line = err.str().substr(line.size());
  EXPECT_NE(line.find(" 50.0 %"), std::string::npos) << line;
  EXPECT_NE(line.find("~10 s left"), std::string::npos) << line;
  EXPECT_LE(line.size(), 81u);  // fits a terminal line
}

// A run whose pace drops 10× (a pile whose contacts multiply): 10 s of wall time at 1 s of t per
// second, then 0.1 s of t per second. Once the window (3 s) lies in the slow phase the estimate
// is the exact time left, (t_end − t) / 0.1; the whole-run average (the former estimate) stays
// far below it.
TEST(TimeLeftEstimatorTest, FollowsARateChangeWithinItsWindow) {
  const double t_end = 20;
  TimeLeftEstimator left(t_end, /*window_seconds=*/3.0);
  EXPECT_TRUE(std::isnan(left.SecondsLeft()));
  const auto t_at = [](double w) { return w <= 10 ? w : 10 + 0.1 * (w - 10); };
  for (int k = 0; k <= 100; ++k) left.Add(0.1 * k, t_at(0.1 * k));
  // Fast phase: 10 s left at 1 s/s (a linear pace: exact up to round-off, 1e-9).
  EXPECT_NEAR(left.SecondsLeft(), 10.0, 1e-9);
  for (int k = 101; k <= 150; ++k) left.Add(0.1 * k, t_at(0.1 * k));
  // 5 s into the slow phase, t = 10.5: 9.5 s of t left at 0.1 s/s = 95 s.
  EXPECT_NEAR(left.SecondsLeft(), 95.0, 1e-6);
  const double average = (t_end - 10.5) * 15.0 / 10.5;  // 13.6 s: 7x too low
  EXPECT_GT(left.SecondsLeft(), 6 * average);
  // No progress within the window: no estimate.
  TimeLeftEstimator stalled(t_end);
  stalled.Add(0, 1);
  stalled.Add(5, 1);
  EXPECT_TRUE(std::isnan(stalled.SecondsLeft()));
}

TEST(ProgressBarTest, HumanDurations) {
  EXPECT_EQ(HumanDuration(0.44), "0.4 s");
  EXPECT_EQ(HumanDuration(42.2), "42 s");
  EXPECT_EQ(HumanDuration(185), "3 min 05 s");
  EXPECT_EQ(HumanDuration(7620), "2 h 07 min");
  EXPECT_EQ(HumanDuration(-1), "?");
}

TEST(WrapTextTest, FillsLinesToTheWidth) {
  EXPECT_EQ(WrapText("aa bb cc dd", 10, 4), "aa bb\n    cc dd");
  EXPECT_EQ(WrapText("averyveryverylongword x", 10, 4), "averyveryverylongword\n    x");
  EXPECT_EQ(WrapText("", 10, 4), "");
}

TEST(ProgressBarTest, SilentForShortRunsAndWhenDisabled) {
  std::ostringstream err;
  ProgressBar waits(err, /*enabled=*/true, 0.0, 10.0);  // default delay: 0.4 s
  ProgressBar disabled(err, /*enabled=*/false, 0.0, 10.0, std::chrono::seconds(0));
  const Eigen::VectorXd x = Eigen::VectorXd::Zero(1);
  waits.OnStep(1.0, x, x);
  disabled.OnStep(1.0, x, x);
  waits.Finish();
  EXPECT_TRUE(err.str().empty());
  // Through RunCli with a "terminal": the run is far shorter than a second.
  std::ostringstream out, err2;
  const std::vector<std::string> args = {
      "run",
      kBouncingBall,
      "--t-end",
      "1",
      "--out",
      (fs::temp_directory_path() / ("saltus_cli_test_" + std::to_string(getpid()) + "_progress"))
          .string()};
  EXPECT_EQ(RunCli(args, out, err2, /*stderr_is_terminal=*/true), kExitOk);
  EXPECT_TRUE(err2.str().empty()) << err2.str();
  fs::remove_all(args.back());
}

TEST_F(CliTest, EmbeddingExampleFindsTheClosedFormImpact) {
  const CliResult r =
      Process(std::string("'") + SALTUS_EMBEDDING_EXAMPLE_PATH + "'", scratch_ / "err");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  double closed_form = 0, simulated = 0;
  const std::size_t c = r.out.find("first impact at t = ");
  const std::size_t s = r.out.find("impact  1  t = ");
  ASSERT_NE(c, std::string::npos) << r.out;
  ASSERT_NE(s, std::string::npos) << r.out;
  closed_form = std::stod(r.out.substr(c + 20));
  simulated = std::stod(r.out.substr(s + 15));
  // rtol 1e-10 on positions ~0.1 m gives errors ~1e-11 m; divided by the impact speed
  // 0.87 m/s the event time is good to ~1e-10 s (measured 1.1e-9 with the dense output);
  // 1e-7 leaves margin.
  EXPECT_NEAR(simulated, closed_form, 1e-7);
  EXPECT_NE(r.out.find("impact  2"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace saltus::tools
