#include "tools/cli.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "events/simulation.h"
#include "integrators/integrator.h"
#include "timestepping/moreau_jean.h"
#include "tools/build_info.h"
#include "tools/compare.h"
#include "tools/generators.h"
#include "tools/hdf5_writer.h"
#include "tools/json_writer.h"
#include "tools/limits.h"
#include "tools/metadata.h"
#include "tools/output_file.h"
#include "tools/reaction_writer.h"
#include "tools/resume.h"
#include "tools/run_scheme.h"
#include "tools/scene.h"
#include "tools/vtk_writer.h"
#include "tools/writers.h"

namespace saltus::tools {

namespace {

constexpr std::string_view kUsage =
    "usage:\n"
    "  saltus run SCENE [options]        simulate a scene and write its results\n"
    "  saltus compare [options]          compare integrators over scene sets (docs/compare.md)\n"
    "  saltus generate NAME --n N [--seed S] [--friction MU] [--out FILE]\n"
    "                                    write a generated scene\n"
    "  saltus list                       list the integrators and their formulations\n"
    "  saltus help [COMMAND]             show this help, or a command's\n"
    "  saltus --version                  show the version and the source commit\n"
    "\n"
    "Every command takes --help (e.g. saltus run --help).\n"
    "\n"
    "exit codes: 0 finished, 1 output or internal error, 2 bad input (nothing written),\n"
    "            3 the run stopped early (files written, with DIR/last_state.json),\n"
    "            130/143 run interrupted by SIGINT/SIGTERM (files written as for 3)\n";

constexpr std::string_view kRunHelp =
    "usage: saltus run SCENE [options]\n"
    "\n"
    "Simulates SCENE (a scene file, docs/scene-format.md) to its t_end and writes\n"
    "DIR/trajectory.csv, DIR/events.csv and DIR/summary.json (docs/output-formats.md).\n"
    "The options override the scene's simulation section.\n"
    "\n"
    "options:\n"
    "  --integrator NAME      smooth-phase integrator (see saltus list)\n"
    "  --formulation F        index1, index2, index3 or ggl (default: the scene's, else the\n"
    "                         integrator's first in saltus list)\n"
    "  --rtol R               relative integration tolerance (> 0)\n"
    "  --atol A               absolute integration tolerance (> 0)\n"
    "  --t-end T              final time in seconds (> 0)\n"
    "  --error-control C      per_step (default) or per_unit_step: what rtol and atol bound\n"
    "                         (docs/scene-format.md, simulation.error_control)\n"
    "  --step H               fixed step in seconds (> 0); required by moreau_jean; with\n"
    "                         hybrid on, the step of the time-stepping phases\n"
    "  --hybrid M             on or off: as simulation.hybrid (the event loop hands the run\n"
    "                         to moreau_jean while its events crowd, docs/time-stepping.md)\n"
    "  --out DIR              output directory (default out/<scene name>)\n"
    "  --hdf5                 also write DIR/results.h5 (trajectory, events, contact forces)\n"
    "  --vtk                  also write DIR/vtk.pvd + DIR/vtk/ (ParaView series)\n"
    "  --reactions            also write DIR/reactions.csv (joint forces and torques, driver\n"
    "                         efforts, at the trajectory's output times)\n"
    "  --event-rows M         on, off or auto (default): the two trajectory.csv rows at each\n"
    "                         event; auto writes them when a row has <= 500 numbers (nq + nv)\n"
    "  --max-output-bytes B   bound on the bytes of the result files (default 1e10; as\n"
    "                         simulation.max_output_bytes): a planned output grid above it is\n"
    "                         refused, a run reaching it stops (exit 3, status output_limit)\n"
    "  --resume FILE          continue a stopped run from its FILE = DIR/last_state.json (t, q,\n"
    "                         v; contact modes are derived again); results go to --out, by\n"
    "                         default DIR/resumed\n"
    "  --help                 show this help\n"
    "\n"
    "exit codes: 0 finished, 1 a result file could not be written (reason printed) or an\n"
    "            internal error, 2 bad input (nothing written), 3 the run stopped early (files\n"
    "            written, with DIR/last_state.json), 130/143 interrupted by SIGINT/SIGTERM\n"
    "            (files written as for 3)\n";

constexpr std::string_view kGenerateHelp =
    "usage: saltus generate NAME --n N [--seed S] [--friction MU] [--rolling-friction L]\n"
    "                       [--out FILE]\n"
    "\n"
    "Writes a generated scene (YAML) on stdout or in FILE (tools/generators.h):\n"
    "  n_chain         Haug's chain of N spinning bars on spherical joints (N <= 100000)\n"
    "  excited_chain   N pendulums hanging from a driven suspension point (N <= 100000)\n"
    "  sphere_pile     N spheres falling into a box (N <= 1000)\n"
    "\n"
    "options:\n"
    "  --n N        number of bodies (>= 1)\n"
    "  --seed S     seed of the random initial state (>= 0, default 1)\n"
    "  --friction MU          sphere_pile: Coulomb friction on every pair (>= 0; default none)\n"
    "  --rolling-friction L   sphere_pile: rolling resistance length in m (>= 0; needs\n"
    "                         --friction > 0 and --integrator moreau_jean --step H to run)\n"
    "  --out FILE   write the scene to FILE instead of stdout\n"
    "  --help       show this help\n";

constexpr std::string_view kListHelp =
    "usage: saltus list\n"
    "\n"
    "Lists the integrators (saltus run SCENE --integrator NAME) with their descriptions and\n"
    "the formulations each supports; the first one is its default.\n";

// Bad command-line input; the message names the argument.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct RunArgs {
  std::string scene;
  std::optional<std::string> integrator, formulation, out_dir, error_control;
  std::optional<double> rtol, atol, t_end, step;
  std::optional<double> max_output_bytes;   // --max-output-bytes (tools/limits.h)
  bool hdf5 = false, vtk = false;           // --hdf5, --vtk (docs/output-formats.md)
  bool reactions = false;                   // --reactions (tools/reaction_writer.h)
  std::optional<std::string> resume;        // --resume FILE (tools/resume.h)
  EventRows event_rows = EventRows::kAuto;  // --event-rows (tools/writers.h)
  std::optional<bool> hybrid;               // --hybrid on|off (simulation.hybrid)
};

double PositiveNumber(const std::string& flag, const std::string& text) {
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, value);
  // Denormals and overflow parse as result_out_of_range: outside the bounds (tools/limits.h).
  const bool out_of_range = ec == std::errc::result_out_of_range;
  if (text.empty() || (ec != std::errc() && !out_of_range) || end != last ||
      (!out_of_range && !std::isfinite(value))) {
    throw UsageError(flag + ": expected a number, got '" + text + "'");
  }
  if (out_of_range || !WithinMagnitudeBounds(value)) {
    throw UsageError(flag + ": " + text + " is outside the magnitudes Saltus accepts (" +
                     MagnitudeBoundsText() + ")");
  }
  if (!(value > 0)) throw UsageError(flag + ": must be > 0, got " + text);
  return value;
}

RunArgs ParseRunArgs(std::span<const std::string> args) {
  RunArgs run;
  bool have_scene = false;
  std::vector<std::string> seen;  // options given so far: each at most once
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      if (!arg.empty() && arg[0] == '-') throw UsageError("unknown option '" + arg + "'");
      if (have_scene) throw UsageError("unexpected argument '" + arg + "' (one scene per run)");
      run.scene = arg;
      have_scene = true;
      continue;
    }
    const std::string flag_name = arg.substr(0, arg.find('='));
    if (std::find(seen.begin(), seen.end(), flag_name) != seen.end()) {
      throw UsageError(flag_name + ": given twice");
    }
    seen.push_back(flag_name);
    if (arg == "--hdf5" || arg == "--vtk" || arg == "--reactions") {  // switches without a value
      (arg == "--hdf5" ? run.hdf5 : arg == "--vtk" ? run.vtk : run.reactions) = true;
      continue;
    }
    if (arg.rfind("--hdf5=", 0) == 0 || arg.rfind("--vtk=", 0) == 0 ||
        arg.rfind("--reactions=", 0) == 0) {
      throw UsageError(arg.substr(0, arg.find('=')) + ": takes no value");
    }
    // --flag VALUE or --flag=VALUE
    std::string flag = arg;
    std::optional<std::string> value;
    if (const std::size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    static const std::vector<std::string> kFlags = {
        "--integrator",    "--formulation", "--rtol",       "--atol",   "--t-end",
        "--step",          "--out",         "--event-rows", "--resume", "--max-output-bytes",
        "--error-control", "--hybrid"};
    if (std::find(kFlags.begin(), kFlags.end(), flag) == kFlags.end()) {
      std::vector<std::string> known = kFlags;
      known.insert(known.end(), {"--hdf5", "--vtk", "--reactions", "--help"});
      throw UsageError("unknown option '" + flag + "'" + DidYouMean(flag, known) +
                       " (saltus run --help lists the options)");
    }
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError(flag + ": missing value");
      value = args[++i];
    }
    if (flag == "--integrator") {
      run.integrator = *value;
    } else if (flag == "--formulation") {
      run.formulation = *value;
    } else if (flag == "--rtol") {
      run.rtol = PositiveNumber(flag, *value);
    } else if (flag == "--atol") {
      run.atol = PositiveNumber(flag, *value);
    } else if (flag == "--t-end") {
      run.t_end = PositiveNumber(flag, *value);
    } else if (flag == "--step") {
      run.step = PositiveNumber(flag, *value);
    } else if (flag == "--error-control") {
      run.error_control = *value;
    } else if (flag == "--max-output-bytes") {
      run.max_output_bytes = PositiveNumber(flag, *value);
    } else if (flag == "--resume") {
      if (value->empty()) throw UsageError("--resume: empty file name");
      run.resume = *value;
    } else if (flag == "--hybrid") {
      if (*value != "on" && *value != "off") {
        throw UsageError("--hybrid: expected on or off, got '" + *value + "'");
      }
      run.hybrid = *value == "on";
    } else if (flag == "--event-rows") {
      if (*value == "on") {
        run.event_rows = EventRows::kOn;
      } else if (*value == "off") {
        run.event_rows = EventRows::kOff;
      } else if (*value == "auto") {
        run.event_rows = EventRows::kAuto;
      } else {
        throw UsageError("--event-rows: expected on, off or auto, got '" + *value + "'");
      }
    } else {
      if (value->empty()) throw UsageError("--out: empty directory name");
      run.out_dir = *value;
    }
  }
  if (!have_scene) throw UsageError("run: missing the scene file (saltus run SCENE.yaml)");
  return run;
}

// After --integrator without --formulation: the scene's formulation when it gave one that the
// integrator supports, else the integrator's default (an unknown integrator is reported later).
void KeepOrDefaultFormulation(Scene& scene) {
  integrators::Formulation& f = scene.options.integrator_options.formulation;
  if (scene.formulation_given && CheckIntegratorChoice(scene.options.integrator, f).empty()) return;
  f = DefaultFormulation(scene.options.integrator).value_or(f);
}

// Applies the command-line overrides to the scene and checks the integrator choice again.
void ApplyOverrides(const RunArgs& run, Scene* scene) {
  integrators::IntegratorOptions& io = scene->options.integrator_options;
  if (run.integrator) {
    scene->options.integrator = *run.integrator;
    if (!run.formulation) KeepOrDefaultFormulation(*scene);
  }
  if (run.formulation) {
    const std::optional<integrators::Formulation> f =
        integrators::ParseFormulation(*run.formulation);
    if (!f) {
      throw UsageError("--formulation: '" + *run.formulation +
                       "' is unknown (use index1, index2, index3 or ggl)");
    }
    io.formulation = *f;
  }
  if (run.error_control) {
    const std::optional<integrators::ErrorControl> c =
        integrators::ParseErrorControl(*run.error_control);
    if (!c) {
      throw UsageError("--error-control: '" + *run.error_control +
                       "' is unknown (use per_step or per_unit_step)");
    }
    io.error_control = *c;
  }
  if (run.rtol) io.rtol = *run.rtol;
  if (run.atol) io.atol = *run.atol;
  if (run.t_end) {
    scene->t_end = *run.t_end;
    try {
      CheckOutputRows(*scene);
    } catch (const SceneError& e) {
      throw UsageError("--t-end " + FormatDouble(*run.t_end) + ": " + e.message() + " (" +
                       scene->file + ":" + std::to_string(e.line()) + ")");
    }
  }
  if (run.max_output_bytes) scene->max_output_bytes = *run.max_output_bytes;
  const bool time_stepping = scene->options.integrator == timestepping::kMoreauJeanName;
  if (run.hybrid) scene->hybrid.enabled = *run.hybrid;
  if (scene->hybrid.enabled && time_stepping) {
    throw UsageError(
        "--integrator moreau_jean: the scene has hybrid: on, which switches between the event "
        "loop and moreau_jean (choose an event-loop integrator)");
  }
  if (scene->hybrid.enabled && run.reactions) {
    throw UsageError(
        "--reactions: not available with hybrid: on (no index-1 multipliers in "
        "the time-stepping phases)");
  }
  if (run.step && scene->hybrid.enabled) {  // as simulation.step: the time-stepping phases'
    scene->hybrid.step = *run.step;
  } else if (run.step) {  // as simulation.step: a fixed step
    io.h_init = *run.step;
    io.adaptive = false;
  }
  if (time_stepping && !(io.h_init > 0 && !io.adaptive)) {
    throw UsageError("--integrator moreau_jean needs a fixed step: --step H (or simulation.step)");
  }
  if (time_stepping && run.reactions) {
    throw UsageError("--reactions: not available with moreau_jean (no index-1 multipliers)");
  }
  if (run.integrator || run.formulation) {
    const std::string problem = CheckIntegratorChoice(scene->options.integrator, io.formulation);
    if (!problem.empty()) {
      throw UsageError(std::string(run.integrator ? "--integrator" : "--formulation") + ": " +
                       problem);
    }
  }
}

// Rolling resistance runs with moreau_jean only, spinning resistance with no scheme yet
// (docs/friction.md): the scene is refused at the first pair that has either, naming the way
// that works (events::Simulation and timestepping::MoreauJean refuse the rows as well).
void RefuseResistanceWithoutItsScheme(const Scene& scene) {
  const bool time_stepping = scene.options.integrator == timestepping::kMoreauJeanName;
  const std::vector<contact::SpatialContactPair>& pairs = scene.spatial.contact_pairs;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const contact::SpatialContactPair& p = pairs[i];
    const bool spinning = p.spinning_friction > 0.0;
    if (!spinning && (time_stepping || p.rolling_friction == 0.0)) continue;
    const int line = i < scene.spatial.contact_pair_lines.size()
                         ? scene.spatial.contact_pair_lines[i]
                         : scene.lines.simulation;
    throw SceneError(
        scene.file, line,
        "contact pair '" + p.name + "': " +
            (spinning ? std::string("spinning_friction is not supported yet by any integrator "
                                    "(the event loop has no spinning modes, and Siconos' "
                                    "rolling friction cone in moreau_jean has no spinning "
                                    "torque)")
                      : std::string("rolling_friction needs --integrator moreau_jean --step H "
                                    "(or simulation.integrator: moreau_jean): the event loop "
                                    "has no rolling contact modes yet")) +
            " (docs/friction.md)");
  }
}

// `saltus generate NAME --n N [--seed S] [--friction MU] [--rolling-friction L] [--out FILE]`
// (tools/generators.h): the scene YAML on
// `out`, or in FILE.
int Generate(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  std::optional<std::string> name, out_file;
  std::optional<long long> n, seed;
  PileContactLaw law;
  const auto number = [](const std::string& flag, const std::string& text) {
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
        !std::isfinite(value) || value < 0.0) {
      throw UsageError(flag + ": expected a finite number >= 0, got '" + text + "'");
    }
    return value;
  };
  const auto integer = [](const std::string& flag, const std::string& text, long long low) {
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < low) {
      throw UsageError(flag + ": expected an integer >= " + std::to_string(low) + ", got '" + text +
                       "'");
    }
    return value;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--n" || arg == "--seed" || arg == "--out" || arg == "--friction" ||
        arg == "--rolling-friction") {
      if (i + 1 >= args.size()) throw UsageError(arg + ": missing value");
      const std::string& value = args[++i];
      if (arg == "--n") {
        n = integer(arg, value, 1);
      } else if (arg == "--seed") {
        seed = integer(arg, value, 0);
      } else if (arg == "--friction") {
        law.friction = number(arg, value);
      } else if (arg == "--rolling-friction") {
        law.rolling_friction = number(arg, value);
      } else {
        if (value.empty()) throw UsageError("--out: empty file name");
        out_file = value;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError("unknown option '" + arg +
                       "' (generate options: --n, --seed, --friction, --rolling-friction, --out)");
    } else if (name) {
      throw UsageError("generate: unexpected argument '" + arg + "' (one generator)");
    } else {
      name = arg;
    }
  }
  if (!name) {
    throw UsageError("generate: missing the generator name (n_chain, excited_chain, sphere_pile)");
  }
  if (!n) throw UsageError("generate: missing --n N");
  if (*n > kMaxGeneratedBodies) {
    throw UsageError("--n: at most " + std::to_string(kMaxGeneratedBodies) + ", got " +
                     std::to_string(*n));
  }
  std::string text;
  try {
    std::optional<std::uint64_t> seed_value;
    if (seed) seed_value = static_cast<std::uint64_t>(*seed);
    text = GenerateScene(*name, static_cast<int>(*n), seed_value, law);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!out_file) {
    out << text;
    return kExitOk;
  }
  if (const std::string problem = WriteFileAtomically(*out_file, text); !problem.empty()) {
    err << "error: cannot write " << problem << '\n';
    return kExitError;
  }
  return kExitOk;
}

// Columns of the terminal on `fd`, else $COLUMNS, else 80 (at least 40).
std::size_t TerminalColumns(int fd) {
  winsize size{};
  long columns = 0;
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    columns = size.ws_col;
  } else if (const char* env = std::getenv("COLUMNS")) {
    columns = std::strtol(env, nullptr, 10);
  }
  return static_cast<std::size_t>(columns > 0 ? std::max(columns, 40L) : 80L);
}

int List(std::ostream& out, std::size_t width) {
  std::size_t name_width = 0;
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    name_width = std::max(name_width, e.name.size());
  }
  const std::size_t indent = name_width + 4;
  out << "integrators (saltus run SCENE --integrator NAME):\n";
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    std::string formulations = "formulations:";
    for (std::size_t i = 0; i < e.formulations.size(); ++i) {
      formulations += std::string(i > 0 ? ", " : " ") +
                      std::string(integrators::ToString(e.formulations[i])) +
                      (i == 0 ? " (default)" : "");
    }
    const std::string head = "  " + std::string(e.name) + ' ';
    out << head << std::string(indent - head.size(), ' ')
        << WrapText(std::string(e.description), width, indent) << '\n'
        << std::string(indent, ' ') << WrapText(formulations, width, indent) << '\n';
    out << std::string(indent, ' ')
        << WrapText(std::string("friction: sliding ") + (e.non_ideal_forces ? "yes" : "no") +
                        ", sticking " + (e.velocity_level_rows ? "yes" : "no"),
                    width, indent)
        << '\n';
  }
  const std::string head = "  " + std::string(timestepping::kMoreauJeanName) + ' ';
  out << head << std::string(indent - std::min(indent, head.size()), ' ')
      << WrapText(std::string(timestepping::kMoreauJeanDescription), width, indent) << '\n'
      << std::string(indent, ' ')
      << WrapText("formulations: velocity level (any --formulation is ignored)", width, indent)
      << '\n'
      << std::string(indent, ' ') << WrapText("friction: exact Coulomb cone", width, indent)
      << '\n';
  return kExitOk;
}

std::string Seconds(double t) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g s", t);
  return buffer;
}

// The human summary of `saltus run` on stdout.
// `written`: the result files written complete, as named in DIR.
void PrintRunSummary(const Scene& scene, const std::filesystem::path& dir, const Scheme& simulation,
                     const RunInfo& info, const std::vector<std::string>& written,
                     std::ostream& out) {
  const events::SimulationStats& stats = simulation.stats();
  out << scene.name << ": " << info.status << " at t = " << Seconds(info.t_reached) << " (t_end "
      << Seconds(scene.t_end) << ")\n"
      << "  integrator " << simulation.StepSummary() << "\n"
      << "  events:";
  for (int k = 0, shown = 0; k < events::kNumEventKinds; ++k) {
    // The friction kinds only when they happened (frictionless runs print as before).
    if (k > static_cast<int>(events::EventKind::kTime) && stats.events[k] == 0) continue;
    out << (shown++ > 0 ? "," : "") << ' ' << stats.events[k] << ' '
        << events::ToString(static_cast<events::EventKind>(k));
  }
  if (stats.energy_gains > 0) {
    out << "\n  note: " << stats.energy_gains
        << " impact(s) where the contact impulses gained energy (Newton's law with friction "
           "can; largest gain "
        << stats.largest_energy_gain << " J): see energy_gain in events.csv";
  }
  if (stats.indeterminate_impacts > 0) {
    out << "\n  note: " << stats.indeterminate_impacts
        << " indeterminate impact(s), the least kinetic energy taken (first: "
        << stats.impact_diagnoses.front()
        << "): see indeterminate in events.csv, impact_diagnoses in summary.json";
  }
  if (stats.painleve_inconsistent + stats.painleve_indeterminate > 0) {
    out << "\n  note: " << stats.painleve_inconsistent << " inconsistent and "
        << stats.painleve_indeterminate
        << " indeterminate Painlevé configuration(s): see friction in summary.json";
  }
  out << "\n  wall time " << Seconds(stats.wall_seconds) << "\n  results in " << dir.string()
      << "/ (";
  for (std::size_t k = 0; k < written.size(); ++k) out << (k > 0 ? ", " : "") << written[k];
  out << (written.empty() ? "none written" : "") << ")\n";
}

// SIGINT and SIGTERM during `saltus run`: the handler sets a lock-free atomic flag (async-signal
// safe) that the event loop reads at every step boundary (events::SimulationOptions::stop_flag);
// the run then stops with a consistent state and writes its results. SA_RESETHAND restores the
// default action, so a second signal ends the process at once.
class StopSignals {
 public:
  StopSignals() {
    static_assert(std::atomic<bool>::is_always_lock_free);
    Flag().store(false);
    Signal() = 0;
    struct sigaction action {};
    action.sa_handler = &StopSignals::Handle;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static const std::atomic<bool>& flag() { return Flag(); }
  static bool received() { return Signal() != 0; }
  static int number() { return Signal(); }
  static const char* Name() { return Signal() == SIGINT ? "SIGINT" : "SIGTERM"; }

 private:
  static std::atomic<bool>& Flag() {
    static std::atomic<bool> flag{false};
    return flag;
  }
  static volatile std::sig_atomic_t& Signal() {
    static volatile std::sig_atomic_t signal_number = 0;
    return signal_number;
  }
  static void Handle(int signal_number) {
    Signal() = signal_number;
    Flag().store(true);
  }
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// Stops the run at the next step boundary when a result file could not be written (disk full:
// the files keep their last complete row), when a run without an output grid has written
// max_output_rows rows (each accepted step is a row: the bound of tools/limits.h at run time), or
// when the CSV files together have reached max_output_bytes.
class OutputGuard : public events::Observer {
 public:
  OutputGuard(Scheme& simulation, std::vector<const LineFile*> files,
              const TrajectoryWriter& trajectory, double max_rows, double max_bytes)
      : simulation_(simulation),
        files_(std::move(files)),
        trajectory_(trajectory),
        max_rows_(max_rows),
        max_bytes_(max_bytes) {}
  void OnStep(double, const Eigen::VectorXd&, const Eigen::VectorXd&) override { Check(); }
  void OnOutput(double, const Eigen::VectorXd&, const Eigen::VectorXd&) override { Check(); }
  void OnEvent(const events::Event&, const Eigen::VectorXd&, const Eigen::VectorXd&,
               const Eigen::VectorXd&) override {
    Check();
  }
  // Why the guard stopped the run ("" if it did not) and the status it reports.
  const std::string& problem() const { return problem_; }
  const char* status() const { return write_failed_ ? "output_error" : "output_limit"; }

 private:
  void Check() {
    if (!problem_.empty()) return;
    for (const LineFile* f : files_) {
      if (f && !f->ok()) {
        problem_ = "writing " + f->error();
        write_failed_ = true;
      }
    }
    if (problem_.empty() && static_cast<double>(trajectory_.rows()) >= max_rows_) {
      problem_ = "trajectory.csv reached max_output_rows = " + FormatDouble(max_rows_) +
                 " rows (without output_step every accepted step is a row; set "
                 "simulation.output_step or raise simulation.max_output_rows)";
    }
    double bytes = 0;
    for (const LineFile* f : files_) bytes += f ? static_cast<double>(f->bytes()) : 0.0;
    if (problem_.empty() && bytes >= max_bytes_) {
      problem_ = "the result files reached max_output_bytes = " + NumberText(max_bytes_) +
                 " bytes (raise simulation.max_output_bytes or --max-output-bytes, or set a "
                 "larger simulation.output_step)";
    }
    if (!problem_.empty()) simulation_.RequestStop();
  }
  Scheme& simulation_;
  std::vector<const LineFile*> files_;
  const TrajectoryWriter& trajectory_;
  double max_rows_, max_bytes_;
  std::string problem_;
  bool write_failed_ = false;
};

// What a user can change when a run with `options` stops with `status` (exit 3), printed under
// the error.
std::string_view RunFailureAdvice(std::string_view status,
                                  const events::SimulationOptions& options) {
  if (status == "lcp_failure") {
    return "the contact solver found no verified contact forces or impulses: try "
           "simulation.lcp_solver: lemke (the default) or enum (few contacts), a larger "
           "lcp_max_iterations, a restitution_threshold (e.g. 0.01 m/s) for settling stacks, "
           "or --integrator moreau_jean --step h for dense piles";
  }
  if (status == "painleve" && options.painleve == events::PainleveResolution::kImpact) {
    return "with these friction coefficients the contact forces have no solution or several "
           "(Painlevé), and the tangential impact that resolves this found no verified "
           "impulses: lower the friction of the contacts named, or run the scene with "
           "--integrator moreau_jean --step 1e-4 (time-stepping decides no contact modes)";
  }
  if (status == "painleve") {
    return "with these friction coefficients the contact forces have no solution or several "
           "(Painlevé): set simulation.painleve: impact to resolve it by a tangential impact, "
           "or lower the friction of the contacts named";
  }
  if (status == "projection_failure") {
    return "the state could not be brought back onto the joints and closed contacts: tighten "
           "rtol and atol (less drift), keep projection: true, or raise "
           "projection_max_iterations";
  }
  if (status == "step_size_underflow" || status == "newton_failure" ||
      status == "linear_solve_failure") {
    return "the integrator could not take a step: lower h_min, loosen rtol and atol, or use "
           "another integrator (saltus list; bdf for stiff scenes)";
  }
  if (status == "event_accumulation") {
    return "events accumulate (a contact closing and reopening ever faster, Zeno): set "
           "restitution_threshold (e.g. 0.01 m/s) so that slow impacts are plastic, or raise "
           "zeno.max_events or shorten zeno.window";
  }
  if (status == "non_finite_state") {
    return "positions or velocities became infinite or NaN: check masses, inertias, stiffnesses "
           "and initial velocities for extreme values, and tighten rtol and atol";
  }
  return {};
}

// A run-failure message as the terminal shows it: the contact solvers' own accounts
// ("[solver: ...]", contact/impact_problem.cc) are left out; summary.json keeps them.
std::string WithoutSolverAccounts(std::string message) {
  static constexpr std::string_view kOpen = " [solver: ";
  bool removed = false;
  for (auto at = message.find(kOpen); at != std::string::npos; at = message.find(kOpen, at)) {
    std::size_t end = at + 1, depth = 0;  // the matching ']'
    for (; end < message.size(); ++end) {
      if (message[end] == '[') ++depth;
      if (message[end] == ']' && --depth == 0) break;
    }
    message.erase(at, end + 1 - at);
    removed = true;
  }
  return removed ? message + " (the solver's account is in summary.json)" : message;
}

// Closes the result files, writes summary.json (and last_state.json when the run did not
// finish) each complete or absent, prints the human summary; returns the exit code (README).
int WriteResults(const Scene& scene, const std::filesystem::path& dir, const Scheme& simulation,
                 RunInfo info, bool finished, const std::vector<LineFile*>& files, Hdf5Writer* hdf5,
                 VtkSeries* vtk, std::ostream& out, std::ostream& err) {
  std::vector<std::string> failures, written;
  for (LineFile* f : files) {
    if (f == nullptr) continue;
    if (f->Close()) {
      written.push_back(f->path().filename().string());
    } else {
      failures.push_back(f->error());
    }
  }
  // results.h5 and vtk.pvd closed, also after a failed run.
  const auto close = [&](auto* writer, const char* name) {
    if (writer == nullptr) return;
    try {
      writer->Close();
      written.emplace_back(name);
    } catch (const std::runtime_error& e) {
      failures.emplace_back(e.what());
    }
  };
  close(hdf5, "results.h5");
  close(vtk, "vtk.pvd");
  if (!failures.empty() && info.status != "output_error") {
    info.status = "output_error";
    info.message = "writing " + failures.front();
    finished = false;
  }
  std::ostringstream summary;
  WriteSummaryJson(info, simulation.View(), summary);
  if (std::string e = WriteFileAtomically(dir / "summary.json", summary.str()); !e.empty()) {
    failures.push_back(std::move(e));
  } else {
    written.emplace_back("summary.json");
  }
  if (!finished) {
    std::ostringstream last_state;
    WriteLastStateJson(info, simulation.View(), last_state, simulation.hybrid_state());
    if (std::string e = WriteFileAtomically(dir / "last_state.json", last_state.str());
        !e.empty()) {
      failures.push_back(std::move(e));
    } else {
      written.emplace_back("last_state.json");
    }
  }
  PrintRunSummary(scene, dir, simulation, info, written, out);
  if (!failures.empty()) {
    for (const std::string& f : failures) err << "error: cannot write " << f << '\n';
    err << "error: the run stopped at t = " << Seconds(info.t_reached) << "; the result files in "
        << dir.string() << " end at their last complete row\n";
    return kExitError;
  }
  if (finished) return kExitOk;
  err << "error: the run stopped at t = " << Seconds(info.t_reached)
      << " before t_end = " << Seconds(scene.t_end) << ": " << info.status
      << (info.message.empty() ? "" : ": " + WithoutSolverAccounts(info.message))
      << "; last state in " << (dir / "last_state.json").string() << '\n';
  if (const std::string_view advice = RunFailureAdvice(info.status, scene.options);
      !advice.empty()) {
    err << "  what to try: " << advice << '\n';
  }
  if (info.status == "interrupted" && StopSignals::received()) {
    return kExitSignalBase + StopSignals::number();
  }
  return kExitRunFailure;
}

struct InitialState {
  double t = 0;
  Eigen::VectorXd q, v;
  events::StateOrigin origin = events::StateOrigin::kInitial;
  std::optional<HybridState> hybrid;  // the saved hybrid phase (Scheme::ResumeHybridState)
};

// The scene's initial state at t = 0, or with --resume the saved state (tools/resume.h), which
// must lie before t_end. A state saved from a different version of the scene file (another
// SHA-256) is used with a warning: its coordinates match by name.
InitialState StartingState(const RunArgs& run, const Scene& scene, const SceneSystem& built,
                           std::ostream& err) {
  if (!run.resume) return {0.0, built.q0, built.v0, events::StateOrigin::kInitial, std::nullopt};
  const SavedState saved = ReadLastStateJson(*run.resume, *built.system);
  if (!(saved.t < scene.t_end)) {
    throw UsageError("--resume: the saved state is at t = " + Seconds(saved.t) +
                     ", not before t_end = " + Seconds(scene.t_end) + " (raise it with --t-end)");
  }
  if (!saved.scene_sha256.empty() && saved.scene_sha256 != FileSha256(run.scene)) {
    err << "warning: " << *run.resume << " was saved from another version of " << run.scene
        << " (its SHA-256 differs); the coordinates match by name\n";
  }
  if (saved.hybrid && !scene.hybrid.enabled) {
    err << "warning: " << *run.resume << " was saved by a hybrid run (phase "
        << (saved.hybrid->time_stepping ? "time_stepping" : "event_driven")
        << "); this run is not hybrid and starts from the state alone\n";
  }
  return {saved.t, saved.q, saved.v, events::StateOrigin::kResumed, saved.hybrid};
}

// --out, else out/<scene name>; with --resume, else <the saved state's folder>/resumed, so that
// the stopped run's files stay. Resuming into the saved state's own folder is refused: it would
// overwrite the first part of the results.
std::filesystem::path OutputDirectory(const RunArgs& run, const Scene& scene) {
  if (!run.resume) return run.out_dir ? *run.out_dir : "out/" + scene.name;
  const std::filesystem::path saved_dir = std::filesystem::path(*run.resume).parent_path();
  if (!run.out_dir) return (saved_dir.empty() ? "." : saved_dir) / "resumed";
  std::error_code ec;
  if (std::filesystem::equivalent(*run.out_dir, saved_dir.empty() ? "." : saved_dir, ec)) {
    throw UsageError("--out: " + *run.out_dir + " holds the run being resumed; its files " +
                     "would be overwritten (give another folder)");
  }
  return *run.out_dir;
}

// Provenance of `saltus run ARGS` (tools/metadata.h).
Provenance RunProvenance(std::span<const std::string> args, const std::string& scene_file) {
  std::vector<std::string> command_line = {"run"};
  command_line.insert(command_line.end(), args.begin(), args.end());
  return CollectProvenance(command_line, scene_file);
}

int Run(std::span<const std::string> args, std::ostream& out, std::ostream& err,
        bool stderr_is_terminal) {
  // ---- 1. Everything that can be bad input, before anything is written. ----
  const RunArgs run = ParseRunArgs(args);
  Scene scene = LoadSceneFile(run.scene);
  ApplyOverrides(run, &scene);
  // Planar or spatial (dimension: 3; assembled, with its topology in `report`).
  const SceneSystem built = BuildSceneSystem(scene);
  const auto planar = std::dynamic_pointer_cast<engine::PlanarMultibodySystem>(built.system);
  const auto spatial_system =
      std::dynamic_pointer_cast<engine::SpatialMultibodySystem>(built.system);
  const std::shared_ptr<engine::MechanicalSystem> system = built.system;
  if (run.vtk && planar && planar->model().has_flexible_bodies()) {
    throw SceneError(scene.file, 0,
                     "--vtk draws rigid planar bodies only, and this scene has flexible bodies "
                     "(use the CSV or --hdf5 output)");
  }
  if (run.vtk && spatial_system) {
    for (std::size_t k = 0; k < scene.spatial.shape_nodes.size(); ++k) {
      if (scene.spatial.shape_nodes[k] == -1) continue;
      throw SceneError(scene.file, scene.spatial.shape_lines[k],
                       "--vtk draws shapes fixed in their body's frame, and shape '" +
                           scene.spatial.shapes[k].name() +
                           "' sits at a node or along the centreline of a flexible body (use the "
                           "CSV or --hdf5 output)");
    }
  }
  // The initial state: the scene's, or with --resume a saved one (tools/resume.h).
  const InitialState start = StartingState(run, scene, built, err);
  // The span the global error accumulates over (integrators::ErrorControl::kPerUnitStep).
  scene.options.integrator_options.error_time_scale = scene.t_end - start.t;
  const Eigen::VectorXd& q0 = start.q;
  const Eigen::VectorXd& v0 = start.v;
  for (const std::string& warning : scene.warnings) err << "warning: " << warning << '\n';
  out << built.report;
  // The event loop names the offending item ("contact 'floor': the initial state penetrates
  // ..."): point at that item's line, else at the simulation section.
  const auto simulation_error = [&](const std::invalid_argument& e) {
    const std::string what = e.what();
    int line = scene.lines.simulation;
    const auto find = [&](const std::string& name, const std::vector<int>& lines, std::size_t i) {
      if (what.find("'" + name + "'") != std::string::npos && i < lines.size()) line = lines[i];
    };
    for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
      find(scene.bodies[i].name, scene.lines.bodies, i);
    }
    for (std::size_t i = 0; i < scene.joints.size(); ++i) {
      find(scene.joints[i].name, scene.lines.joints, i);
    }
    for (std::size_t i = 0; i < scene.contacts.size(); ++i) {
      find(scene.contacts[i].name, scene.lines.contacts, i);
    }
    return SceneError(scene.file, line, what);
  };
  RefuseResistanceWithoutItsScheme(scene);
  CheckOutputBytes(scene, scene.t_end - start.t, 1 + system->nq() + system->nv());
  try {
    // A dry set-up: the options and the initial state must be accepted by the scheme.
    MakeScheme(system, scene.options, scene.time_stepping, scene.hybrid)
        ->SetState(start.t, q0, v0, start.origin);
  } catch (const SceneError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw simulation_error(e);
  }

  // ---- 2. Output files (results of an earlier run in DIR that this one does not rewrite are
  // removed, so that nothing stale sits beside the new results). ----
  const std::filesystem::path dir = OutputDirectory(run, scene);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    err << "error: cannot create the output directory " << dir << ": " << ec.message() << '\n';
    return kExitError;
  }
  for (const auto& [name, written] : {std::pair<const char*, bool>{"summary.json", false},
                                      {"last_state.json", false},
                                      {"reactions.csv", run.reactions},
                                      {"results.h5", run.hdf5}}) {
    if (!written) std::filesystem::remove(dir / name, ec);
  }
  if (!run.vtk) RemoveVtkSeries(dir, "vtk");
  const StopSignals signals;  // SIGINT, SIGTERM: stop at the next step boundary
  LineFile trajectory_file(dir / "trajectory.csv");
  LineFile events_file(dir / "events.csv");
  std::unique_ptr<LineFile> reactions_file;
  if (run.reactions) reactions_file = std::make_unique<LineFile>(dir / "reactions.csv");
  for (const LineFile* f : {&trajectory_file, &events_file, reactions_file.get()}) {
    if (f && !f->ok()) {
      err << "error: cannot write " << f->error() << '\n';
      return kExitError;
    }
  }

  // ---- 3. The run. ----
  scene.options.stop_flag = &StopSignals::flag();
  const Provenance provenance = RunProvenance(args, run.scene);
  const std::unique_ptr<Scheme> scheme =
      MakeScheme(system, scene.options, scene.time_stepping, scene.hybrid);
  Scheme& simulation = *scheme;
  // The writers that read contact forces need the event loop's multipliers (null: none).
  const events::Simulation* loop = simulation.event_loop();
  // Time-stepping: the v⁻ of an impact event is the velocity at the start of its step, not at
  // the event's time, so its two rows are written only on request (--event-rows on). A hybrid
  // run (no event loop to read multipliers from) writes them as the event loop does.
  const bool event_rows = scene.options.integrator != timestepping::kMoreauJeanName
                              ? EventRowsOn(run.event_rows, system->nq(), system->nv())
                              : run.event_rows == EventRows::kOn;
  TrajectoryWriter trajectory(*system, trajectory_file.stream(),
                              /*rows_at_steps=*/scene.options.output_step <= 0, event_rows);
  EventLogWriter event_log(*system, events_file.stream(), simulation.hybrid_report());
  ProgressBar progress(err, stderr_is_terminal, start.t, scene.t_end);
  simulation.AddObserver(&trajectory);
  simulation.AddObserver(&event_log);
  simulation.AddObserver(&progress);
  std::unique_ptr<ReactionWriter> reactions;
  if (run.reactions) {  // not with moreau_jean (ApplyOverrides)
    const bool rows_at_steps = scene.options.output_step <= 0;
    reactions = spatial_system
                    ? std::make_unique<ReactionWriter>(*spatial_system, *simulation.event_loop(),
                                                       reactions_file->stream(), rows_at_steps)
                    : std::make_unique<ReactionWriter>(*planar, *simulation.event_loop(),
                                                       reactions_file->stream(), rows_at_steps);
    simulation.AddObserver(reactions.get());
  }
  // --hdf5 and --vtk (tools/hdf5_writer.h, tools/vtk_writer.h); a path that cannot be created
  // is an output error.
  std::unique_ptr<Hdf5Writer> hdf5;
  std::unique_ptr<VtkSeries> vtk;
  try {
    const bool at_steps = scene.options.output_step <= 0;
    if (run.hdf5) {
      hdf5 = std::make_unique<Hdf5Writer>(*system, dir / "results.h5", loop, at_steps);
      hdf5->WriteProvenance(provenance);
      simulation.AddObserver(hdf5.get());
    }
    if (run.vtk) {
      if (planar) {
        vtk = std::make_unique<VtkWriter>(
            std::shared_ptr<const engine::PlanarModel>(planar, &planar->model()), scene.contacts,
            dir, "vtk", at_steps, loop);
      } else if (spatial_system) {  // dimension: 3, with the scene's shapes
        vtk = std::make_unique<SpatialVtkWriter>(
            std::shared_ptr<const engine::SpatialModel>(spatial_system, &spatial_system->model()),
            scene.spatial.shapes, scene.spatial.shape_bodies, dir, "vtk", at_steps, loop);
      }
      if (vtk) simulation.AddObserver(vtk.get());
    }
  } catch (const std::runtime_error& e) {
    err << "error: " << e.what() << '\n';
    return kExitError;
  }
  // Last: sees what the writers did with each step.
  OutputGuard guard(simulation, {&trajectory_file, &events_file, reactions_file.get()}, trajectory,
                    scene.max_output_rows, scene.max_output_bytes);
  simulation.AddObserver(&guard);

  RunInfo info;
  info.provenance = provenance;
  info.scene = scene.name;
  info.scene_file = scene.file;
  info.t_end = scene.t_end;
  info.t_start = start.t;
  if (run.resume) info.resumed_from = *run.resume;
  info.topology = built.topology;  // spatial scenes: at the assembled q0
  bool finished = false;
  try {
    if (start.hybrid) simulation.ResumeHybridState(*start.hybrid);
    simulation.SetState(start.t, q0, v0, start.origin);
    trajectory.OnOutput(simulation.t(), simulation.q(), simulation.v());
    for (events::Observer* o :
         {static_cast<events::Observer*>(hdf5.get()), static_cast<events::Observer*>(vtk.get()),
          static_cast<events::Observer*>(reactions.get())}) {
      if (o) o->OnOutput(simulation.t(), simulation.q(), simulation.v());
    }
    const events::RunResult result = simulation.AdvanceTo(scene.t_end);
    finished = result.status == events::RunStatus::kFinished;
    info.status = std::string(events::ToString(result.status));
    info.message = result.message;
    info.t_reached = result.t;
    if (!guard.problem().empty()) {  // the guard's stop, not a signal
      info.status = guard.status();
      info.message = guard.problem();
    } else if (result.status == events::RunStatus::kInterrupted && StopSignals::received()) {
      info.message = std::string("interrupted by ") + StopSignals::Name() +
                     " at t = " + FormatDouble(result.t);
    }
  } catch (const std::exception& e) {
    info.status = "error";
    info.message = e.what();
    info.t_reached = simulation.t();
  }
  progress.Finish();
  return WriteResults(scene, dir, simulation, info, finished,
                      {&trajectory_file, &events_file, reactions_file.get()}, hdf5.get(), vtk.get(),
                      out, err);
}

}  // namespace

ProgressBar::ProgressBar(std::ostream& err, bool enabled, double t0, double t_end,
                         std::chrono::duration<double> delay, std::chrono::duration<double> period,
                         std::function<Clock::time_point()> now)
    : err_(err),
      enabled_(enabled),
      t0_(t0),
      t_end_(t_end),
      delay_(delay),
      period_(period),
      now_(now ? std::move(now) : [] { return Clock::now(); }),
      start_(now_()),
      left_(t_end) {
  left_.Add(0.0, t0);
}

void TimeLeftEstimator::Add(double wall, double t) {
  samples_.emplace_back(wall, t);
  // Keep the newest sample at or before the window's start, so the window spans `window_`.
  while (samples_.size() > 2 && samples_[1].first <= wall - window_) samples_.pop_front();
}

double TimeLeftEstimator::SecondsLeft() const {
  if (samples_.size() < 2) return std::nan("");
  const auto& [w0, t0] = samples_.front();
  const auto& [w, t] = samples_.back();
  if (!(t > t0)) return std::nan("");
  return std::max(0.0, t_end_ - t) * (w - w0) / (t - t0);
}

void ProgressBar::OnStep(double t, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/) {
  Update(t);
}

void ProgressBar::OnOutput(double t, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/) {
  Update(t);
}

void ProgressBar::OnEvent(const events::Event& e, const Eigen::VectorXd& /*q*/,
                          const Eigen::VectorXd& /*v_minus*/, const Eigen::VectorXd& /*v_plus*/) {
  ++events_;
  Update(e.t);
}

void ProgressBar::Update(double t) {
  if (!enabled_) return;
  const Clock::time_point now = now_();
  if (now - start_ < delay_) return;
  if (drawn_ && now - last_draw_ < period_) return;
  last_draw_ = now;
  drawn_ = true;
  const double span = t_end_ - t0_;
  const double fraction = span > 0 ? std::clamp((t - t0_) / span, 0.0, 1.0) : 1.0;
  constexpr int kWidth = 20;
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  left_.Add(elapsed, t);
  const double seconds_left = left_.SecondsLeft();
  const std::string left =
      std::isfinite(seconds_left) ? ", ~" + HumanDuration(seconds_left) + " left" : "";
  char text[200];
  std::snprintf(text, sizeof text, "\r[%-*s] %5.1f %%  t = %.4g of %.4g s  %ld events  %s%s",
                kWidth, std::string(static_cast<std::size_t>(filled), '#').c_str(),
                100.0 * fraction, t, t_end_, events_, HumanDuration(elapsed).c_str(), left.c_str());
  const std::size_t width = std::strlen(text) - 1;
  // Pad over the tail of a longer previous line.
  err_ << text << std::string(width < width_ ? width_ - width : 0, ' ') << std::flush;
  width_ = std::max(width_, width);
}

void ProgressBar::Finish() {
  if (drawn_) err_ << '\r' << std::string(width_, ' ') << '\r' << std::flush;
  drawn_ = false;
}

std::string HumanDuration(double seconds) {
  char text[48];
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 9.95) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else if (seconds < 59.5) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (seconds < 3599.5) {
    const long s = std::lround(seconds);
    std::snprintf(text, sizeof text, "%ld min %02ld s", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(text, sizeof text, "%ld h %02ld min", m / 60, m % 60);
  }
  return text;
}

std::string WrapText(const std::string& text, std::size_t width, std::size_t indent) {
  const std::size_t room = width > indent ? width - indent : 1;
  std::string out, line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out += line + '\n' + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

namespace {

// A command of the `saltus` program: its name, help text and entry point (args after the name).
struct Command {
  std::string_view name;
  std::string_view help;
  std::function<int(std::span<const std::string>)> run;
};

bool AsksForHelp(std::span<const std::string> args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--help" || a == "-h"; });
}

std::string VersionText() {
  return "saltus " + std::string(Version()) + " (commit " + std::string(Commit()) + ")\n";
}

}  // namespace

int RunCli(std::span<const std::string> args, std::ostream& out, std::ostream& err,
           bool stderr_is_terminal) {
  const std::vector<Command> commands = {
      {"run", kRunHelp,
       [&](std::span<const std::string> a) { return Run(a, out, err, stderr_is_terminal); }},
      {"compare", CompareHelp(),
       [&](std::span<const std::string> a) { return RunCompare(a, out, err); }},
      {"generate", kGenerateHelp,
       [&](std::span<const std::string> a) { return Generate(a, out, err); }},
      {"list", kListHelp,
       [&](std::span<const std::string> a) {
         if (!a.empty()) throw UsageError("list: unexpected argument '" + a[0] + "'");
         return List(out, TerminalColumns(STDOUT_FILENO));
       }},
  };
  const auto find = [&](const std::string& name) -> const Command* {
    for (const Command& c : commands) {
      if (c.name == name) return &c;
    }
    return nullptr;
  };
  std::string help_hint = "saltus help";
  try {
    if (args.empty()) {
      err << kUsage;
      return kExitBadInput;
    }
    const std::string& command = args[0];
    if (command == "--version" || command == "version") {
      out << VersionText();
      return kExitOk;
    }
    if (command == "help" || command == "--help" || command == "-h") {
      // `saltus help`, `saltus help --help`, `saltus help help`: the usage.
      if (command != "help" || args.size() == 1 || AsksForHelp(args.subspan(1)) ||
          args[1] == "help") {
        out << kUsage;
        return kExitOk;
      }
      if (const Command* c = find(args[1])) {
        out << c->help;
        return kExitOk;
      }
      throw UsageError("help: unknown command '" + args[1] + "'");
    }
    const Command* c = find(command);
    if (c == nullptr) {
      std::vector<std::string> names = {"help"};
      for (const Command& k : commands) names.emplace_back(k.name);
      throw UsageError("unknown command '" + command + "'" + DidYouMean(command, names) +
                       " (use run, compare, generate, list or help)");
    }
    help_hint = "saltus " + command + " --help";
    if (AsksForHelp(args.subspan(1))) {
      out << c->help;
      return kExitOk;
    }
    return c->run(args.subspan(1));
  } catch (const UsageError& e) {
    err << "error: " << e.what() << "\n(" << help_hint << " shows the usage)\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {  // SceneError and other bad input
    err << "error: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << '\n';
    return kExitError;
  }
}

}  // namespace saltus::tools
