// The hybrid scheme (`simulation.hybrid: on`, tools/hybrid_scheme.h, issue 23 §3) as a user
// meets it: a scene file run by `saltus run` (RunCli), judged from events.csv, trajectory.csv and
// summary.json.
//  - The bouncing ball with e = 0.5 (a Zeno point): the switch to time-stepping lies before the
//    closed-form accumulation time t∞ = t₁ (1 + e)/(1 − e) and within the window W of it, the
//    switch back one calm time later, T + V never rises across a switch, and the rest state is
//    the one of the closed form and of the run without switching.
//  - No crowding (the ball with e = 0.9 to 2 s, the slider-crank example): hybrid on writes the
//    same bytes as hybrid off.
//  - A failure of the event loop (a contact problem, a projection) hands the run to
//    time-stepping, which finishes it; a failure that time-stepping cannot take over still stops
//    the run with its message and the state kept.
//  - Bad keys: exit 2 at their line, nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_support.h"
#include "tests/tools/scratch_dir.h"
#include "tools/cli.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

using test_support::Cli;
using test_support::CliResult;
using test_support::JsonNumber;
using test_support::ReadFile;
using test_support::Split;

// events.csv: t, kind, contacts, impulse, energy_before, energy_after, tangential_impulse,
// modes (a scheme switch's cause), ...
struct EventRow {
  double t;
  std::string kind;
  double energy_before, energy_after;
  std::string modes;
};
std::vector<EventRow> ReadEvents(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // header
  std::vector<EventRow> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = Split(line, ',');
    rows.push_back({std::stod(f[0]), f[1], std::stod(f[4]), std::stod(f[5]), f[7]});
  }
  return rows;
}

// The last row of trajectory.csv as numbers.
std::vector<double> LastRow(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  std::vector<double> x;
  for (const std::string& f : Split(last, ',')) x.push_back(std::stod(f));
  return x;
}

// The disk of radius 0.1 m released at rest 1 m above the floor (examples/bouncing_ball.yaml).
std::string Ball(double e, double t_end, const std::string& extra) {
  return "scene: ball\ngravity: [0, -9.81]\n"
         "bodies: [{name: ball, mass: 1, inertia: 0.004, position: [0, 1, 0]}]\n"
         "contacts:\n"
         "  - {name: floor, type: disk_line, body_a: ground, body_b: ball, point_a: [0, 0],\n"
         "     normal_a: [0, 1], radius_b: 0.1, restitution: " +
         std::to_string(e) +
         "}\n"
         "simulation:\n"
         "  t_end: " +
         std::to_string(t_end) +
         "\n"
         "  integrator: dopri5\n  rtol: 1.0e-8\n  atol: 1.0e-10\n  output_step: 0.01\n" +
         extra;
}

fs::path Write(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path;
}

TEST(HybridBall, SwitchesNearTheAccumulationPointAndBackOnceAtRest) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "ball05");
  const double e = 0.5, g = 9.81, h = 1e-3;
  const int K = 10;
  const double W = K * h, calm = 50 * h;  // the defaults (tools/hybrid_options.h)
  const fs::path on = Write(dir, "on.yaml", Ball(e, 2.0, "  hybrid: on\n  step: 1.0e-3\n"));
  const fs::path off = Write(dir, "off.yaml", Ball(e, 2.0, ""));
  const CliResult r_on = Cli({"run", on.string(), "--out", (dir / "on").string()});
  ASSERT_EQ(r_on.code, 0) << r_on.err;
  const CliResult r_off = Cli({"run", off.string(), "--out", (dir / "off").string()});
  ASSERT_EQ(r_off.code, 0) << r_off.err;

  // Closed form: first impact after a free fall of 0.9 m, accumulation at t₁ (1 + e)/(1 − e).
  const double t1 = std::sqrt(2 * 0.9 / g);
  const double t_inf = t1 * (1 + e) / (1 - e);
  const std::vector<EventRow> events = ReadEvents(dir / "on" / "events.csv");
  std::vector<EventRow> to_ts, to_ed;
  for (const EventRow& r : events) {
    if (r.kind == "to_time_stepping") to_ts.push_back(r);
    if (r.kind == "to_event_driven") to_ed.push_back(r);
    // T + V never rises at an event: impacts dissipate, the switches hand the state over. The
    // bound is the round-off of T + V ≈ 9.8 J (1e-15 relative) plus, at a switch back, the lift
    // of a penetration of at most τ₀ = 1e-9 m to g = 0: m g τ₀ ≈ 1e-8 J.
    EXPECT_LE(r.energy_after, r.energy_before + 1e-8) << r.kind << " at t = " << r.t;
  }
  ASSERT_EQ(to_ts.size(), 1u);
  ASSERT_EQ(to_ed.size(), 1u);
  EXPECT_EQ(to_ts[0].modes, "crowding");  // the switch's cause (events.csv modes field)
  EXPECT_EQ(to_ed[0].modes, "calm");
  // The switch is at the impact that makes more than K events within W: the flights before it
  // are longer than those left (ratio e), so it lies before t∞ by less than W.
  EXPECT_LT(to_ts[0].t, t_inf);
  EXPECT_GT(to_ts[0].t, t_inf - W);
  EXPECT_DOUBLE_EQ(to_ts[0].energy_after, to_ts[0].energy_before);  // the state is handed over
  // Back once the floor contact has been calm for the calm time: the ball settles within the
  // first time step (its flights after the switch are shorter than h), so the switch back is
  // one calm time after the switch, up to two steps.
  EXPECT_GE(to_ed[0].t, to_ts[0].t + calm - 1e-12);
  EXPECT_LE(to_ed[0].t, to_ts[0].t + calm + 2 * h);
  const std::string summary = ReadFile(dir / "on" / "summary.json");
  EXPECT_EQ(JsonNumber(summary, "to_time_stepping"), 1);
  EXPECT_EQ(JsonNumber(summary, "to_event_driven"), 1);
  EXPECT_GE(JsonNumber(summary, "smallest_gap_after_switch_back"), -1e-9);  // ≥ −τ₀

  // Rest state: the centre at the radius (g = 0 within τ₀), at rest, as without switching.
  const std::vector<double> a = LastRow(dir / "on" / "trajectory.csv");
  const std::vector<double> b = LastRow(dir / "off" / "trajectory.csv");
  ASSERT_EQ(a.size(), 7u);  // t, x, y, θ, ẋ, ẏ, θ̇
  EXPECT_DOUBLE_EQ(a[0], 2.0);
  EXPECT_NEAR(a[2], 0.1, 1e-9);
  EXPECT_NEAR(a[5], 0.0, 1e-6);  // τ₁
  EXPECT_NEAR(a[2], b[2], 1e-9);
  EXPECT_NEAR(a[5], b[5], 1e-6);
}

// The other criterion: the event loop's Zeno guard. With the rate criterion out of reach (K =
// 1000) and a guard of more than 5 events within 10 ms, the e = 0.5 ball stops the event loop
// alone with event_accumulation; with hybrid on the guard hands it to time-stepping instead,
// and the run finishes at rest.
TEST(HybridBall, TheZenoGuardSwitchesToTimeStepping) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "zeno");
  const std::string guard = "  zeno: {max_events: 5, window: 0.01}\n";
  const fs::path off = Write(dir, "off.yaml", Ball(0.5, 2.0, guard));
  const fs::path on =
      Write(dir, "on.yaml", Ball(0.5, 2.0, guard + "  hybrid: on\n  hybrid_events: 1000\n"));
  const CliResult r_off = Cli({"run", off.string(), "--out", (dir / "off").string()});
  EXPECT_EQ(r_off.code, kExitRunFailure);
  EXPECT_NE(ReadFile(dir / "off" / "summary.json").find("event_accumulation"), std::string::npos);
  const CliResult r_on = Cli({"run", on.string(), "--out", (dir / "on").string()});
  ASSERT_EQ(r_on.code, 0) << r_on.err;
  const std::string summary = ReadFile(dir / "on" / "summary.json");
  EXPECT_EQ(JsonNumber(summary, "to_time_stepping"), 1);
  EXPECT_EQ(JsonNumber(summary, "by_accumulation_guard"), 1);
  std::string cause;
  for (const EventRow& e : ReadEvents(dir / "on" / "events.csv")) {
    if (e.kind == "to_time_stepping") cause = e.modes;
  }
  EXPECT_EQ(cause, "zeno_guard");
  EXPECT_EQ(JsonNumber(summary, "to_event_driven"), 1);
  const std::vector<double> a = LastRow(dir / "on" / "trajectory.csv");
  EXPECT_NEAR(a[2], 0.1, 1e-9);  // at rest on the floor (τ₀)
  EXPECT_NEAR(a[5], 0.0, 1e-6);  // τ₁
}

// Runs the scenes `on` and `off` into dir/on and dir/off and expects the same events.csv and
// trajectory.csv, byte for byte.
void ExpectTheSameFiles(const fs::path& dir, const fs::path& on, const fs::path& off) {
  ASSERT_EQ(Cli({"run", on.string(), "--out", (dir / "on").string()}).code, 0);
  ASSERT_EQ(Cli({"run", off.string(), "--out", (dir / "off").string()}).code, 0);
  for (const char* file : {"events.csv", "trajectory.csv"}) {
    const std::string a = ReadFile(dir / "on" / file), b = ReadFile(dir / "off" / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, b) << file;
  }
}

TEST(HybridNoCrowding, BallWithRestitution09WritesTheSameBytesAsWithoutHybrid) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "ball09");
  const fs::path on = Write(dir, "on.yaml", Ball(0.9, 2.0, "  hybrid: on\n"));
  const fs::path off = Write(dir, "off.yaml", Ball(0.9, 2.0, ""));
  ExpectTheSameFiles(dir, on, off);
  EXPECT_EQ(JsonNumber(ReadFile(dir / "on" / "summary.json"), "to_time_stepping"), 0);
}

TEST(HybridNoCrowding, SliderCrankWithAStopWritesTheSameBytesAsWithoutHybrid) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "crank");
  const std::string text = ReadFile(fs::path(SALTUS_EXAMPLES_DIR) / "slider_crank_stop.yaml");
  const std::size_t at = text.find("simulation:");
  ASSERT_NE(at, std::string::npos);
  const fs::path off = Write(dir, "off.yaml", text);
  const fs::path on = Write(dir, "on.yaml",
                            text.substr(0, at) + "simulation:\n  hybrid: on\n" +
                                text.substr(at + std::string("simulation:\n").size()));
  ExpectTheSameFiles(dir, on, off);
}

// The generated 20-sphere pile (one layer on the floor, seed 1): its landing crowds the event
// loop, time-stepping takes over, and the settled layer returns to the event loop, which
// finishes 2 s. Measured (2026-11-29): to time-stepping at 0.236 s, back at 0.642 s.
TEST(HybridPile, TwentySpheresSwitchAndComeBackWithoutPenetrationOrEnergyGain) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "pile20");
  const fs::path scene = dir / "pile.yaml";
  ASSERT_EQ(
      Cli({"generate", "sphere_pile", "--n", "20", "--seed", "1", "--out", scene.string()}).code,
      0);
  const CliResult r = Cli({"run", scene.string(), "--hybrid", "on", "--event-rows", "off", "--out",
                           (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string summary = ReadFile(dir / "out" / "summary.json");
  EXPECT_EQ(JsonNumber(summary, "t_reached"), 2.0);
  EXPECT_GE(JsonNumber(summary, "to_time_stepping"), 1);
  EXPECT_GE(JsonNumber(summary, "to_event_driven"), 1);
  // After each switch back every contact within τ₀ has g ≥ −τ₀ (τ₀ = 1e-9 m, the default).
  EXPECT_GE(JsonNumber(summary, "smallest_gap_after_switch_back"), -1e-9);
  long switches = 0;
  for (const EventRow& e : ReadEvents(dir / "out" / "events.csv")) {
    if (e.kind != "to_time_stepping" && e.kind != "to_event_driven") continue;
    ++switches;
    // A switch hands the state over (to time-stepping: unchanged) or projects it onto the
    // resting contacts (M-orthogonal in velocity; in position a lift of at most τ₀ per
    // contact: 20 spheres of 0.1 kg, m g τ₀ ≈ 1e-9 J each, bound the gain by 2e-8 J).
    EXPECT_LE(e.energy_after, e.energy_before + 2e-8) << e.kind << " at t = " << e.t;
  }
  EXPECT_EQ(switches,
            JsonNumber(summary, "to_time_stepping") + JsonNumber(summary, "to_event_driven"));
}

// examples/ball_stack.yaml with the event loop's contact solver limited to one projected
// Gauss–Seidel sweep to a residual of 1e-16: the acceleration-level problem of the first closing
// contacts fails (the event loop alone stops with lcp_failure, as in cli_reliability_test), and
// on main the hybrid run stopped with it too (`hybrid_events: 100000` keeps the rate criterion
// out of reach: with the default K the landing's impacts crowd just before the failure). Hybrid
// now hands the run to time-stepping at the state after the loop's last step or event; the
// balls come to rest stacked and the run finishes. The switch row names its cause, summary.json
// counts it, and T + V does not rise at any event.
TEST(HybridFallback, AContactProblemFailureOfTheEventLoopContinuesWithTimeStepping) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "lcp_failure");
  const std::string pgs = "  lcp_solver: pgs\n  lcp_max_iterations: 1\n  lcp_tolerance: 1.0e-16\n";
  const std::string text = ReadFile(fs::path(SALTUS_EXAMPLES_DIR) / "ball_stack.yaml") + pgs;
  const fs::path off = Write(dir, "off.yaml", text);
  const fs::path on = Write(dir, "on.yaml", text + "  hybrid: on\n  hybrid_events: 100000\n");
  const CliResult r_off = Cli({"run", off.string(), "--out", (dir / "off").string()});
  ASSERT_EQ(r_off.code, kExitRunFailure) << r_off.err;
  const double t_fail = JsonNumber(ReadFile(dir / "off" / "summary.json"), "t_reached");
  const CliResult r_on = Cli({"run", on.string(), "--out", (dir / "on").string()});
  ASSERT_EQ(r_on.code, 0) << r_on.err;

  const std::string summary = ReadFile(dir / "on" / "summary.json");
  EXPECT_EQ(JsonNumber(summary, "t_reached"), 1.0);
  EXPECT_GE(JsonNumber(summary, "after_lcp_failure"), 1);
  EXPECT_NE(summary.find("\"last_event_loop_failure\": \"contact problem"), std::string::npos)
      << summary;
  std::vector<EventRow> failures;
  for (const EventRow& e : ReadEvents(dir / "on" / "events.csv")) {
    if (e.kind == "to_time_stepping" && e.modes == "lcp_failure") failures.push_back(e);
    // Impacts dissipate; a switch to time-stepping hands the state over; a switch back lifts
    // penetrations of at most τ₀ = 1e-9 m: 3 contacts × 1.75 kg × g × τ₀ < 1e-7 J.
    EXPECT_LE(e.energy_after, e.energy_before + 1e-7) << e.kind << " at t = " << e.t;
  }
  ASSERT_EQ(static_cast<double>(failures.size()), JsonNumber(summary, "after_lcp_failure"));
  // At the state of the loop's last step or event before the failed switch, handed over as is.
  EXPECT_LE(failures.front().t, t_fail);
  EXPECT_DOUBLE_EQ(failures.front().energy_after, failures.front().energy_before);

  // At rest stacked: centres at r, 3 r, 5 r (r = 0.1 m) within time-stepping's resting
  // penetration (1 − θ) h (v_e + h g) per contact with v_e = 0 here: 0.5 · 1e-3 · 1e-3 · 9.81 =
  // 4.9e-6 m, three contacts deep for the top ball: 1.5e-5 m), speeds below 1e-6 m/s (τ₁).
  const std::vector<double> last = LastRow(dir / "on" / "trajectory.csv");
  ASSERT_EQ(last.size(), 19u);  // t, 3 × (x, y, θ), 3 × (ẋ, ẏ, θ̇)
  EXPECT_NEAR(last[2], 0.1, 1.5e-5);
  EXPECT_NEAR(last[5], 0.3, 1.5e-5);
  EXPECT_NEAR(last[8], 0.5, 1.5e-5);
  for (int j = 10; j < 19; ++j) EXPECT_NEAR(last[static_cast<std::size_t>(j)], 0.0, 1e-6) << j;
}

// A captured failure (tests/tools/data/wedged_pile60.yaml: 60 spheres in a box six diameters
// wide, where rows of spheres wedge between the walls): resumed from its state at t = 0.92 s the
// event loop stops at 0.923948 s with lcp_failure on 126 contacts, and so did the hybrid run on
// main. `hybrid_events: 100000` keeps the rate criterion out of reach, so that the event loop
// meets the failure (with the default K the pile's events crowd first). Hybrid now continues
// with time-stepping from the state of the loop's last step or event and reaches t_end.
TEST(HybridFallback, TheWedgedPileContinuesWithTimeSteppingAfterItsContactProblemFails) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "wedged_pile");
  const fs::path data = SALTUS_TEST_SCENES_DIR;
  const std::string scene = ReadFile(data / "wedged_pile60.yaml");
  const fs::path off = Write(dir, "off.yaml", scene);
  const fs::path on = Write(dir, "on.yaml", scene + "  hybrid: on\n  hybrid_events: 100000\n");
  const std::string saved = (data / "wedged_pile60_t0.92.json").string();
  const CliResult r_off = Cli({"run", off.string(), "--resume", saved, "--t-end", "1.0",
                               "--event-rows", "off", "--out", (dir / "off").string()});
  ASSERT_EQ(r_off.code, kExitRunFailure) << r_off.err;
  EXPECT_NE(r_off.err.find(": lcp_failure: "), std::string::npos) << r_off.err;
  const double t_fail = JsonNumber(ReadFile(dir / "off" / "summary.json"), "t_reached");
  const CliResult r_on = Cli({"run", on.string(), "--resume", saved, "--t-end", "1.0",
                              "--event-rows", "off", "--out", (dir / "on").string()});
  ASSERT_EQ(r_on.code, 0) << r_on.err;
  const std::string summary = ReadFile(dir / "on" / "summary.json");
  EXPECT_EQ(JsonNumber(summary, "t_reached"), 1.0);
  EXPECT_GE(JsonNumber(summary, "after_lcp_failure"), 1);
  const std::vector<EventRow> events = ReadEvents(dir / "on" / "events.csv");
  long switches = 0;
  for (const EventRow& e : events) {
    if (e.kind != "to_time_stepping" && e.kind != "to_event_driven") continue;
    ++switches;
    if (switches == 1) {  // the failure's: at or before it, the state handed over as is
      EXPECT_EQ(e.modes, "lcp_failure");
      EXPECT_LE(e.t, t_fail);
      EXPECT_GT(e.t, 0.92);
      EXPECT_DOUBLE_EQ(e.energy_after, e.energy_before);
    }
    // A switch back lifts penetrations of at most τ₀ = 1e-9 m: 60 × 0.1 kg × g × τ₀ = 5.9e-9 J.
    EXPECT_LE(e.energy_after, e.energy_before + 5.9e-9) << e.kind << " at t = " << e.t;
  }
  EXPECT_EQ(switches,
            JsonNumber(summary, "to_time_stepping") + JsonNumber(summary, "to_event_driven"));
}

// examples/slider_crank_stop.yaml with rtol = atol = 1e-2 and no projection between events: the
// event loop's position projection at its first event cannot close the joints in one iteration
// (projection_failure). Time-stepping takes over at the loop's last step, but its own joint
// projection, limited to the same single iteration, fails at its first step: the hybrid run
// stops there with time-stepping's message, exit 3, and the state saved in its phase.
TEST(HybridFallback, AFailureOfTimeSteppingStillStops) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "projection_failure");
  std::string text = ReadFile(fs::path(SALTUS_EXAMPLES_DIR) / "slider_crank_stop.yaml");
  text.replace(text.find("rtol: 1.0e-6"), 12, "rtol: 1.0e-2");
  text.replace(text.find("atol: 1.0e-8"), 12, "atol: 1.0e-2");
  const fs::path on = Write(
      dir, "on.yaml", text + "  projection: false\n  projection_max_iterations: 1\n  hybrid: on\n");
  const CliResult r = Cli({"run", on.string(), "--out", (dir / "on").string()});
  ASSERT_EQ(r.code, kExitRunFailure) << r.err;
  EXPECT_NE(r.err.find(": projection_failure: the joint projection failed"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("what to try: "), std::string::npos) << r.err;
  const std::string summary = ReadFile(dir / "on" / "summary.json");
  EXPECT_NE(summary.find("\"status\": \"projection_failure\""), std::string::npos);
  EXPECT_EQ(JsonNumber(summary, "after_projection_failure"), 1);
  const std::vector<EventRow> events = ReadEvents(dir / "on" / "events.csv");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "to_time_stepping");
  EXPECT_EQ(events.back().modes, "projection_failure");
  EXPECT_NE(ReadFile(dir / "on" / "last_state.json").find("\"phase\": \"time_stepping\""),
            std::string::npos);
}

// Bad values and keys out of place: exit 2 naming the key and its line, no result file.
TEST(HybridKeys, BadValuesAndMisplacedKeysAreRefusedAtTheirLine) {
  const fs::path dir = test_support::ScratchDir("hybrid_scene_test", "keys");
  struct Case {
    std::string extra, integrator, message;
    int line;  // of the offending key (Ball's text has 12 lines before `extra`)
  };
  const std::vector<Case> cases = {
      {"  hybrid: maybe\n", "", "hybrid must be on or off", 13},
      {"  hybrid_events: 5\n", "", "hybrid_events is a parameter of hybrid: on", 13},
      {"  hybrid: on\n  hybrid_events: 0\n", "", "hybrid_events must be an integer in [1", 14},
      {"  hybrid: on\n  hybrid_calm_speed: -1\n", "", "hybrid_calm_speed must be > 0", 14},
      {"  hybrid: on\n  hybrid_window: 0\n", "", "hybrid_window must be > 0", 14},
      {"  theta: 0.7\n", "", "theta is a parameter of integrator moreau_jean (or of hybrid: on)",
       13},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const fs::path scene = Write(dir, "s" + std::to_string(k) + ".yaml", Ball(0.5, 1.0, c.extra));
    const fs::path out = dir / ("out" + std::to_string(k));
    const CliResult r = Cli({"run", scene.string(), "--out", out.string()});
    EXPECT_EQ(r.code, kExitBadInput) << c.extra;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(":" + std::to_string(c.line)), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out / "events.csv")) << c.extra;
  }
  // hybrid with integrator moreau_jean (in the scene, or on the command line).
  const std::string mj = Ball(0.5, 1.0, "  hybrid: on\n");
  std::string in_scene = mj;
  in_scene.replace(in_scene.find("integrator: dopri5"), 18, "integrator: moreau_jean");
  const fs::path s1 = Write(dir, "mj.yaml", in_scene + "  step: 1.0e-3\n");
  const CliResult r1 = Cli({"run", s1.string(), "--out", (dir / "mj").string()});
  EXPECT_EQ(r1.code, kExitBadInput);
  EXPECT_NE(r1.err.find("choose an event-loop integrator"), std::string::npos) << r1.err;
  const fs::path s2 = Write(dir, "cli.yaml", mj);
  const CliResult r2 = Cli({"run", s2.string(), "--integrator", "moreau_jean", "--step", "1e-3",
                            "--out", (dir / "cli").string()});
  EXPECT_EQ(r2.code, kExitBadInput);
  EXPECT_NE(r2.err.find("hybrid: on"), std::string::npos) << r2.err;
  const CliResult r3 =
      Cli({"run", s2.string(), "--hybrid", "maybe", "--out", (dir / "bad").string()});
  EXPECT_EQ(r3.code, kExitBadInput);
  EXPECT_NE(r3.err.find("--hybrid: expected on or off, got 'maybe'"), std::string::npos) << r3.err;
  EXPECT_FALSE(fs::exists(dir / "bad" / "events.csv"));
  EXPECT_FALSE(fs::exists(dir / "mj" / "events.csv"));
  EXPECT_FALSE(fs::exists(dir / "cli" / "events.csv"));
}

}  // namespace
}  // namespace saltus::tools
