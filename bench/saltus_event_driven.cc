// saltus_event_driven: runs a scene file with Saltus and prints the same figures, in the same
// format, as bench/siconos_event_driven, for bench/compare_siconos.py.
//
// The scene is loaded and validated by the scene loader (tools/scene.h) and run by
// events::Simulation with the scene's options, except that nothing is written during the run:
// output_step is set to 0 and the only observer records the events. The timed part, like the
// Siconos driver's, covers building the system, setting up the simulation (SetState: initial
// contact status) and running to t_end; not reading the scene, loading Siconos Numerics (which
// the Siconos driver loads at start-up), nor writing the event file.
//
// Usage:
//   saltus_event_driven SCENE.yaml [--integrator NAME] [--rtol R --atol A] [--t-end T]
//                       [--events FILE] [--quiet]
// stdout: "key=value" lines (engine, scene, status, message, t_end, t_reached, impacts, events,
// wall_seconds, cpu_seconds, accepted_steps, rejected_steps, rhs_evaluations, lcp_solves, then
// final y and ẏ of each body unless --quiet). --events writes FILE as CSV `t,kind,contacts,impulse`
// (%.17g; contacts and impulses joined by ';'), the first columns of the CLI's events.csv.
// Exit codes: 0 finished; 2 bad command line or scene; 3 the run stopped early.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/siconos_loader.h"
#include "events/simulation.h"
#include "tools/scene.h"
#include "tools/writers.h"

namespace {

using saltus::events::Event;
using saltus::events::EventKind;

struct Options {
  std::string scene_file;
  std::optional<std::string> integrator;
  std::optional<double> rtol, atol, t_end;
  std::string events_file;
  bool quiet = false;
};

[[noreturn]] void Usage(const std::string& error) {
  std::cerr << "saltus_event_driven: " << error << "\n"
            << "usage: saltus_event_driven SCENE.yaml [--integrator NAME] [--rtol R --atol A]\n"
               "         [--t-end T] [--events FILE] [--quiet]\n";
  std::exit(2);
}

double ParsePositive(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(x > 0) || !std::isfinite(x)) {
    Usage("option " + flag + ": expected a positive number, got '" + text + "'");
  }
  return x;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg.rfind("--", 0) != 0) {
      if (!o.scene_file.empty()) Usage("more than one scene file ('" + arg + "')");
      o.scene_file = arg;
    } else {
      if (i + 1 >= argc) Usage("option " + arg + ": missing value");
      const std::string value = argv[++i];
      if (arg == "--integrator") {
        o.integrator = value;
      } else if (arg == "--rtol") {
        o.rtol = ParsePositive(arg, value);
      } else if (arg == "--atol") {
        o.atol = ParsePositive(arg, value);
      } else if (arg == "--t-end") {
        o.t_end = ParsePositive(arg, value);
      } else if (arg == "--events") {
        o.events_file = value;
      } else {
        Usage("unknown option '" + arg + "'");
      }
    }
  }
  if (o.scene_file.empty()) Usage("no scene file");
  if (o.rtol.has_value() != o.atol.has_value()) Usage("give both --rtol and --atol, or neither");
  return o;
}

// Keeps what the event file and the counts need of every event (time, kind, contacts, normal
// impulses), as the Siconos driver's LoggedEvent does, not the whole record.
struct LoggedEvent {
  double t = 0;
  EventKind kind = EventKind::kTime;
  std::vector<int> rows;
  std::vector<double> impulses;
};
class EventRecorder : public saltus::events::Observer {
 public:
  void OnEvent(const Event& e, const Eigen::VectorXd&, const Eigen::VectorXd&,
               const Eigen::VectorXd&) override {
    events.push_back({e.t, e.kind, e.rows, e.impulses});
  }
  std::vector<LoggedEvent> events;
};

void WriteEvents(const std::string& path, const saltus::engine::MechanicalSystem& system,
                 const std::vector<LoggedEvent>& events) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::cerr << "saltus_event_driven: cannot write '" << path << "'\n";
    std::exit(2);
  }
  std::fprintf(f, "t,kind,contacts,impulse\n");
  for (const LoggedEvent& e : events) {
    std::string impulses;
    char number[32];
    for (std::size_t k = 0; k < e.impulses.size(); ++k) {
      if (k > 0) impulses += ';';
      std::snprintf(number, sizeof number, "%.17g", e.impulses[k]);
      impulses += number;
    }
    std::fprintf(f, "%.17g,%s,%s,%s\n", e.t, std::string(saltus::events::ToString(e.kind)).c_str(),
                 saltus::tools::RowNames(system, e.rows).c_str(), impulses.c_str());
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  namespace tools = saltus::tools;
  namespace events = saltus::events;
  const Options options = ParseOptions(argc, argv);
  tools::Scene scene;
  try {
    scene = tools::LoadSceneFile(options.scene_file);
    if (options.integrator) scene.options.integrator = *options.integrator;
    if (options.rtol) {
      scene.options.integrator_options.rtol = *options.rtol;
      scene.options.integrator_options.atol = *options.atol;
    }
    if (options.t_end) scene.t_end = *options.t_end;
    scene.options.output_step = 0.0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "saltus_event_driven: " << e.what() << "\n";
    return 2;
  }

  // Siconos Numerics, which Saltus loads on the first contact problem it solves
  // (contact/siconos_loader.h), is loaded before the timed part: the Siconos driver has it loaded
  // at start-up, so both time the same work.
  try {
    saltus::contact::LoadSiconosNumerics();
  } catch (const std::runtime_error& e) {
    std::cerr << "saltus_event_driven: " << e.what() << "\n";
    return 2;
  }
  EventRecorder recorder;
  std::string status = "finished", message;
  double t_reached = 0.0;
  std::shared_ptr<saltus::engine::PlanarMultibodySystem> system;
  std::unique_ptr<events::Simulation> simulation;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  try {
    system = tools::BuildSystem(scene);
    simulation = std::make_unique<events::Simulation>(system, scene.options);
    simulation->AddObserver(&recorder);
    simulation->SetState(0.0, system->model().InitialPositions(),
                         system->model().InitialVelocities());
    const events::RunResult result = simulation->AdvanceTo(scene.t_end);
    status = std::string(events::ToString(result.status));
    message = result.message;
    t_reached = result.t;
  } catch (const std::invalid_argument& e) {
    std::cerr << "saltus_event_driven: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    if (!simulation) {  // the system could not even be set up
      std::cerr << "saltus_event_driven: " << e.what() << "\n";
      return 3;
    }
    status = "error";
    message = e.what();
    t_reached = simulation->t();
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  if (!options.events_file.empty()) WriteEvents(options.events_file, *system, recorder.events);
  long impacts = 0;
  for (const LoggedEvent& e : recorder.events) impacts += e.kind == EventKind::kImpact ? 1 : 0;
  const events::SimulationStats& stats = simulation->stats();
  std::printf("engine=saltus\nscene=%s\nstatus=%s\nmessage=%s\n", scene.name.c_str(),
              status.c_str(), message.c_str());
  std::printf("t_end=%.17g\nt_reached=%.17g\nimpacts=%ld\nevents=%zu\n", scene.t_end, t_reached,
              impacts, recorder.events.size());
  std::printf(
      "wall_seconds=%.9g\ncpu_seconds=%.9g\naccepted_steps=%ld\nrejected_steps=%ld\nrhs_"
      "evaluations=%ld\n",
      wall, cpu, stats.integrator.accepted_steps, stats.integrator.rejected_steps,
      stats.integrator.rhs_evaluations);
  std::printf("lcp_solves=%ld\nintegrator=%s\nrtol=%g\natol=%g\n", stats.lcp_solves,
              scene.options.integrator.c_str(), scene.options.integrator_options.rtol,
              scene.options.integrator_options.atol);
  if (!options.quiet) {
    const Eigen::VectorXd& q = simulation->q();
    const Eigen::VectorXd& v = simulation->v();
    for (int i = 0; i < system->model().num_bodies(); ++i) {
      const std::string& name = system->model().bodies()[static_cast<std::size_t>(i)].name;
      std::printf("final_y.%s=%.17g\nfinal_vy.%s=%.17g\n", name.c_str(), q[3 * i + 1], name.c_str(),
                  v[3 * i + 1]);
    }
  }
  return status == "finished" ? 0 : 3;
}
