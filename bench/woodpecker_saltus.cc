// woodpecker_saltus: the woodpecker toy's linearized model (tests/events/woodpecker_model.h, the
// model of tests/events/woodpecker_reference_test.cc) run by Saltus' event loop; the Saltus side
// of bench/compare_woodpecker.py, whose Siconos side is bench/woodpecker_siconos.cc.
//
// Start: the published state with φ_M at the corner's contact angle −(r_M − r_O)/h_M (the
// published φ_M = −0.1036 penetrates by 8.8e-7 m). Options as in the reference test: DOPRI5,
// painleve: impact; rtol/atol from the command line (default 1e-9 / 1e-11, the test's).
//
// Usage: woodpecker_saltus [--rtol R --atol A] [--t-end T] [--trajectory FILE]
// stdout: key=value lines: engine, status, message, rtol, atol, t_end, t_reached, events,
// impacts, beak_impacts, impacts.<contact>, beak_impact_times (';'-joined), accepted_steps,
// rejected_steps, rhs_evaluations, wall_seconds, cpu_seconds, final q.
// --trajectory writes t,y,ydot,phi_M,phi_M_dot,phi_S,phi_S_dot (%.17g) every 1e-3 s (the
// simulation's dense output), recorded in memory during the run and written after it. The times
// cover building the system, SetState and the run, not the file.
// Exit codes: 0 finished; 2 bad command line; 3 the run stopped early.
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/driver_support.h"
#include "events/simulation.h"
#include "tests/events/woodpecker_model.h"

namespace {

namespace events = saltus::events;
namespace wp = saltus::test_support::woodpecker;
constexpr const char* kContactNames[3] = {"beak", "corner_up", "corner_down"};

struct Options {
  double rtol = 1e-9, atol = 1e-11, t_end = 1.0;
  std::string trajectory_file;
};

[[noreturn]] void Usage(const std::string& error) {
  std::cerr << "woodpecker_saltus: " << error << "\n"
            << "usage: woodpecker_saltus [--rtol R --atol A] [--t-end T] [--trajectory FILE]\n";
  std::exit(2);
}

double ParsePositive(const std::string& flag, const std::string& text) {
  const std::optional<double> x = saltus::bench::ParseInRange(text);
  if (!x) Usage("option " + flag + ": expected a positive number, got '" + text + "'");
  return *x;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) Usage("option " + arg + ": missing value");
    const std::string value = argv[++i];
    if (arg == "--rtol") {
      o.rtol = ParsePositive(arg, value);
    } else if (arg == "--atol") {
      o.atol = ParsePositive(arg, value);
    } else if (arg == "--t-end") {
      o.t_end = ParsePositive(arg, value);
    } else if (arg == "--trajectory") {
      o.trajectory_file = value;
    } else {
      Usage("unknown option '" + arg + "'");
    }
  }
  return o;
}

using Row = std::array<double, 7>;  // t, y, ẏ, φ_M, φ̇_M, φ_S, φ̇_S
constexpr const char* kHeader = "t,y,ydot,phi_M,phi_M_dot,phi_S,phi_S_dot";

// The samples at the output times and the impacts per contact (an impact event counts for every
// contact whose row it involves).
class Recorder : public events::Observer {
 public:
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    rows.push_back({t, q[0], v[0], q[1], v[1], q[2], v[2]});
  }
  void OnEvent(const events::Event& e, const Eigen::VectorXd&, const Eigen::VectorXd&,
               const Eigen::VectorXd&) override {
    ++n_events;
    if (e.kind != events::EventKind::kImpact) return;
    ++n_impacts;
    for (int row : e.rows) {
      if (row >= 0 && row < 3) ++impacts[static_cast<std::size_t>(row)];
      if (row == 0) beak_times.push_back(e.t);
    }
  }
  std::vector<Row> rows;
  long n_events = 0, n_impacts = 0;
  std::array<long, 3> impacts = {0, 0, 0};
  std::vector<double> beak_times;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  Recorder recorder;
  recorder.rows.reserve(static_cast<std::size_t>(o.t_end / 1e-3) + 2);

  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  events::SimulationOptions options;
  options.integrator_options.rtol = o.rtol;
  options.integrator_options.atol = o.atol;
  options.output_step = 1e-3;
  options.painleve = events::PainleveResolution::kImpact;
  events::Simulation simulation(wp::LinearWoodpecker(), options);
  simulation.AddObserver(&recorder);
  simulation.SetState(0.0, wp::InitialPositions(wp::kContactAngle), wp::InitialVelocities());
  const events::RunResult result = simulation.AdvanceTo(o.t_end);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  if (!o.trajectory_file.empty()) {
    try {
      saltus::bench::WriteCsvRows(o.trajectory_file, kHeader, recorder.rows);
    } catch (const std::exception& e) {
      std::cerr << "woodpecker_saltus: " << e.what() << "\n";
      return 2;
    }
  }
  const bool finished = result.status == events::RunStatus::kFinished;
  const events::SimulationStats& stats = simulation.stats();
  std::printf("engine=saltus\nstatus=%s\nmessage=%s\nrtol=%g\natol=%g\nt_end=%.17g\n",
              finished ? "finished" : std::string(events::ToString(result.status)).c_str(),
              result.message.c_str(), o.rtol, o.atol, o.t_end);
  std::printf("t_reached=%.17g\nevents=%ld\nimpacts=%ld\nbeak_impacts=%ld\n", result.t,
              recorder.n_events, recorder.n_impacts, recorder.impacts[0]);
  for (std::size_t k = 0; k < 3; ++k) {
    std::printf("impacts.%s=%ld\n", kContactNames[k], recorder.impacts[k]);
  }
  std::printf("beak_impact_times=");
  for (std::size_t i = 0; i < recorder.beak_times.size(); ++i) {
    std::printf(i ? ";%.17g" : "%.17g", recorder.beak_times[i]);
  }
  std::printf("\n");
  std::printf("accepted_steps=%ld\nrejected_steps=%ld\nrhs_evaluations=%ld\n",
              static_cast<long>(stats.integrator.accepted_steps),
              static_cast<long>(stats.integrator.rejected_steps),
              static_cast<long>(stats.integrator.rhs_evaluations));
  std::printf("wall_seconds=%.9g\ncpu_seconds=%.9g\n", wall, cpu);
  std::printf("final_y=%.17g\nfinal_phi_M=%.17g\nfinal_phi_S=%.17g\n", simulation.q()[0],
              simulation.q()[1], simulation.q()[2]);
  return finished ? 0 : 3;
}
