#include "tools/cli.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
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
#include "tools/compare.h"
#include "tools/generators.h"
#include "tools/hdf5_writer.h"
#include "tools/json_writer.h"
#include "tools/reaction_writer.h"
#include "tools/run_scheme.h"
#include "tools/scene.h"
#include "tools/vtk_writer.h"
#include "tools/writers.h"

namespace saltus::tools {

namespace {

constexpr std::string_view kUsage =
    "usage:\n"
    "  saltus run SCENE.yaml [options]   simulate a scene and write its results\n"
    "  saltus compare [options]          compare integrators over scene sets (docs/compare.md)\n"
    "  saltus generate NAME --n N [--seed S] [--out FILE]\n"
    "                                    write a generated scene (n_chain, excited_chain,\n"
    "                                    sphere_pile: N <= 1000)\n"
    "  saltus list                       list the integrators and their formulations\n"
    "  saltus help                       show this help\n"
    "\n"
    "options of run (they override the scene's simulation section):\n"
    "  --integrator NAME      smooth-phase integrator (see saltus list)\n"
    "  --formulation F        index1, index2, index3 or ggl\n"
    "  --rtol R               relative integration tolerance (> 0)\n"
    "  --atol A               absolute integration tolerance (> 0)\n"
    "  --t-end T              final time in seconds (> 0)\n"
    "  --step H               fixed step in seconds (> 0); required by moreau_jean\n"
    "  --out DIR              output directory (default out/<scene name>)\n"
    "  --hdf5                 also write DIR/results.h5 (trajectory, events, contact forces)\n"
    "  --vtk                  also write DIR/vtk.pvd + DIR/vtk/ (ParaView series)\n"
    "  --reactions            also write DIR/reactions.csv (joint forces and torques, driver\n"
    "                         efforts, at the trajectory's output times)\n"
    "  --event-rows M         on, off or auto (default): the two trajectory.csv rows at each\n"
    "                         event; auto writes them when a row has <= 500 numbers (nq + nv)\n"
    "\n"
    "exit codes: 0 finished, 1 output or internal error, 2 bad input (nothing written),\n"
    "            3 the run stopped early (files written, with DIR/last_state.json)\n";

// Bad command-line input; the message names the argument.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct RunArgs {
  std::string scene;
  std::optional<std::string> integrator, formulation, out_dir;
  std::optional<double> rtol, atol, t_end, step;
  bool hdf5 = false, vtk = false;           // --hdf5, --vtk (docs/output-formats.md)
  bool reactions = false;                   // --reactions (tools/reaction_writer.h)
  EventRows event_rows = EventRows::kAuto;  // --event-rows (tools/writers.h)
};

double PositiveNumber(const std::string& flag, const std::string& text) {
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || end != last || !std::isfinite(value)) {
    throw UsageError(flag + ": expected a number, got '" + text + "'");
  }
  if (!(value > 0)) throw UsageError(flag + ": must be > 0, got " + text);
  return value;
}

RunArgs ParseRunArgs(std::span<const std::string> args) {
  RunArgs run;
  bool have_scene = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      if (!arg.empty() && arg[0] == '-') throw UsageError("unknown option '" + arg + "'");
      if (have_scene) throw UsageError("unexpected argument '" + arg + "' (one scene per run)");
      run.scene = arg;
      have_scene = true;
      continue;
    }
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
    static const std::vector<std::string> kFlags = {"--integrator", "--formulation", "--rtol",
                                                    "--atol",       "--t-end",       "--step",
                                                    "--out",        "--event-rows"};
    if (std::find(kFlags.begin(), kFlags.end(), flag) == kFlags.end()) {
      throw UsageError("unknown option '" + flag + "' (run options: --integrator, " +
                       "--formulation, --rtol, --atol, --t-end, --step, --out, --hdf5, --vtk, " +
                       "--reactions, --event-rows)");
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

// Applies the command-line overrides to the scene and checks the integrator choice again.
void ApplyOverrides(const RunArgs& run, Scene* scene) {
  integrators::IntegratorOptions& io = scene->options.integrator_options;
  if (run.integrator) scene->options.integrator = *run.integrator;
  if (run.formulation) {
    const std::optional<integrators::Formulation> f =
        integrators::ParseFormulation(*run.formulation);
    if (!f) {
      throw UsageError("--formulation: '" + *run.formulation +
                       "' is unknown (use index1, index2, index3 or ggl)");
    }
    io.formulation = *f;
  }
  if (run.rtol) io.rtol = *run.rtol;
  if (run.atol) io.atol = *run.atol;
  if (run.t_end) scene->t_end = *run.t_end;
  if (run.step) {  // as simulation.step: a fixed step
    io.h_init = *run.step;
    io.adaptive = false;
  }
  const bool time_stepping = scene->options.integrator == timestepping::kMoreauJeanName;
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

// `saltus generate NAME --n N [--seed S] [--out FILE]` (tools/generators.h): the scene YAML on
// `out`, or in FILE.
int Generate(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  std::optional<std::string> name, out_file;
  std::optional<long long> n, seed;
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
    if (arg == "--n" || arg == "--seed" || arg == "--out") {
      if (i + 1 >= args.size()) throw UsageError(arg + ": missing value");
      const std::string& value = args[++i];
      if (arg == "--n") {
        n = integer(arg, value, 1);
      } else if (arg == "--seed") {
        seed = integer(arg, value, 0);
      } else {
        if (value.empty()) throw UsageError("--out: empty file name");
        out_file = value;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "' (generate options: --n, --seed, --out)");
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
    text = GenerateScene(*name, static_cast<int>(*n), seed_value);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!out_file) {
    out << text;
    return kExitOk;
  }
  std::ofstream file(*out_file, std::ios::binary | std::ios::trunc);
  file << text;
  if (!file.flush()) {
    err << "error: cannot write " << *out_file << '\n';
    return kExitError;
  }
  return kExitOk;
}

int List(std::ostream& out) {
  std::size_t width = 0;
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    width = std::max(width, e.name.size());
  }
  out << "integrators (saltus run SCENE --integrator NAME):\n";
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    out << "  " << e.name << std::string(width - e.name.size() + 2, ' ') << e.description << "\n  "
        << std::string(width + 2, ' ') << "formulations: ";
    for (std::size_t i = 0; i < e.formulations.size(); ++i) {
      out << (i > 0 ? ", " : "") << integrators::ToString(e.formulations[i]);
    }
    out << '\n';
  }
  out << "  " << timestepping::kMoreauJeanName
      << std::string(width - std::min(width, timestepping::kMoreauJeanName.size()) + 2, ' ')
      << timestepping::kMoreauJeanDescription << "\n  " << std::string(width + 2, ' ')
      << "formulations: velocity level (any --formulation is ignored)\n";
  return kExitOk;
}

std::string Seconds(double t) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g s", t);
  return buffer;
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
  const Eigen::VectorXd& q0 = built.q0;
  const Eigen::VectorXd& v0 = built.v0;
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
  try {
    // A dry set-up: the options and the initial state must be accepted by the scheme.
    MakeScheme(system, scene.options, scene.theta)->SetState(0.0, q0, v0);
  } catch (const SceneError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw simulation_error(e);
  }

  // ---- 2. Output files. ----
  const std::filesystem::path dir = run.out_dir ? *run.out_dir : "out/" + scene.name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    err << "error: cannot create the output directory " << dir << ": " << ec.message() << '\n';
    return kExitError;
  }
  std::filesystem::remove(dir / "last_state.json", ec);  // stale from an earlier failed run
  std::ofstream trajectory_file(dir / "trajectory.csv", std::ios::binary | std::ios::trunc);
  std::ofstream events_file(dir / "events.csv", std::ios::binary | std::ios::trunc);
  std::ofstream reactions_file;
  if (run.reactions) {
    reactions_file.open(dir / "reactions.csv", std::ios::binary | std::ios::trunc);
  }
  if (!trajectory_file || !events_file || (run.reactions && !reactions_file)) {
    err << "error: cannot write in " << dir << '\n';
    return kExitError;
  }

  // ---- 3. The run. ----
  const std::unique_ptr<Scheme> scheme = MakeScheme(system, scene.options, scene.theta);
  Scheme& simulation = *scheme;
  // Time-stepping: the v⁻ of an impact event is the velocity at the start of its step, not at
  // the event's time, so its two rows are written only on request (--event-rows on).
  const bool time_stepping = scene.options.integrator == timestepping::kMoreauJeanName;
  const bool event_rows = time_stepping ? run.event_rows == EventRows::kOn
                                        : EventRowsOn(run.event_rows, system->nq(), system->nv());
  TrajectoryWriter trajectory(*system, trajectory_file,
                              /*rows_at_steps=*/scene.options.output_step <= 0, event_rows);
  EventLogWriter event_log(*system, events_file);
  ProgressBar progress(err, stderr_is_terminal, 0.0, scene.t_end);
  simulation.AddObserver(&trajectory);
  simulation.AddObserver(&event_log);
  simulation.AddObserver(&progress);
  std::unique_ptr<ReactionWriter> reactions;
  if (run.reactions) {
    const bool rows_at_steps = scene.options.output_step <= 0;
    events::Simulation& loop = *simulation.event_loop();  // --reactions: not with moreau_jean
    reactions =
        spatial_system
            ? std::make_unique<ReactionWriter>(*spatial_system, loop, reactions_file, rows_at_steps)
            : std::make_unique<ReactionWriter>(*planar, loop, reactions_file, rows_at_steps);
    simulation.AddObserver(reactions.get());
  }
  // --hdf5 and --vtk (tools/hdf5_writer.h, tools/vtk_writer.h); a path that cannot be created
  // is an output error.
  std::unique_ptr<Hdf5Writer> hdf5;
  std::unique_ptr<VtkSeries> vtk;
  try {
    const bool at_steps = scene.options.output_step <= 0;
    if (run.hdf5) {
      hdf5 = std::make_unique<Hdf5Writer>(*system, dir / "results.h5", simulation.event_loop(),
                                          at_steps);
      simulation.AddObserver(hdf5.get());
    }
    if (run.vtk) {
      if (planar) {
        vtk = std::make_unique<VtkWriter>(
            std::shared_ptr<const engine::PlanarModel>(planar, &planar->model()), scene.contacts,
            dir, "vtk", at_steps);
      } else if (spatial_system) {  // dimension: 3, with the scene's shapes
        vtk = std::make_unique<SpatialVtkWriter>(
            std::shared_ptr<const engine::SpatialModel>(spatial_system, &spatial_system->model()),
            scene.spatial.shapes, scene.spatial.shape_bodies, dir, "vtk", at_steps);
      }
      if (vtk) simulation.AddObserver(vtk.get());
    }
  } catch (const std::runtime_error& e) {
    err << "error: " << e.what() << '\n';
    return kExitError;
  }

  RunInfo info;
  info.scene = scene.name;
  info.scene_file = scene.file;
  info.t_end = scene.t_end;
  info.topology = built.topology;  // spatial scenes: at the assembled q0
  bool finished = false;
  try {
    simulation.SetState(0.0, q0, v0);
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
  } catch (const std::exception& e) {
    info.status = "error";
    info.message = e.what();
    info.t_reached = simulation.t();
  }
  progress.Finish();
  trajectory_file.flush();
  events_file.flush();
  if (reactions) reactions_file.flush();
  bool extra_ok = true;  // results.h5 and vtk.pvd closed, also after a failed run
  try {
    if (hdf5) hdf5->Close();
    if (vtk) vtk->Close();
  } catch (const std::runtime_error& e) {
    err << "error: " << e.what() << '\n';
    extra_ok = false;
  }

  std::ofstream summary_file(dir / "summary.json", std::ios::binary | std::ios::trunc);
  WriteSummaryJson(info, simulation.View(), summary_file);
  if (!finished) {
    std::ofstream last_state(dir / "last_state.json", std::ios::binary | std::ios::trunc);
    WriteLastStateJson(info, simulation.View(), last_state);
  }
  if (!trajectory_file || !events_file || !summary_file || !extra_ok ||
      (reactions && !reactions_file)) {
    err << "error: writing the results in " << dir << " failed\n";
    return kExitError;
  }

  // ---- 4. The human summary. ----
  const events::SimulationStats& stats = simulation.stats();
  out << scene.name << ": " << info.status << " at t = " << Seconds(info.t_reached) << " (t_end "
      << Seconds(scene.t_end) << ")\n"
      << "  integrator " << simulation.StepSummary() << "\n"
      << "  events:";
  for (int k = 0; k < 4; ++k) {
    out << (k > 0 ? "," : "") << ' ' << stats.events[k] << ' '
        << events::ToString(static_cast<events::EventKind>(k));
  }
  out << "\n  wall time " << Seconds(stats.wall_seconds) << "\n  results in " << dir.string()
      << "/ (trajectory.csv, events.csv, summary.json" << (hdf5 ? ", results.h5" : "")
      << (vtk ? ", vtk.pvd" : "") << (reactions ? ", reactions.csv" : "")
      << (finished ? "" : ", last_state.json") << ")\n";
  if (!finished) {
    err << "error: the run stopped at t = " << Seconds(info.t_reached)
        << " before t_end = " << Seconds(scene.t_end) << ": " << info.status
        << (info.message.empty() ? "" : ": " + info.message) << "; last state in "
        << (dir / "last_state.json").string() << '\n';
    return kExitRunFailure;
  }
  return kExitOk;
}

}  // namespace

ProgressBar::ProgressBar(std::ostream& err, bool enabled, double t0, double t_end,
                         std::chrono::duration<double> delay, std::chrono::duration<double> period)
    : err_(err),
      enabled_(enabled),
      t0_(t0),
      t_end_(t_end),
      delay_(delay),
      period_(period),
      start_(Clock::now()) {}

void ProgressBar::OnStep(double t, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/) {
  Draw(t);
}

// Events redraw too: in an event-heavy run (a settling pile) most steps end at an event.
void ProgressBar::OnEvent(const events::Event& e, const Eigen::VectorXd& /*q*/,
                          const Eigen::VectorXd& /*v_minus*/, const Eigen::VectorXd& /*v_plus*/) {
  ++events_;
  Draw(e.t);
}

void ProgressBar::Draw(double t) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < delay_) return;
  if (drawn_ && now - last_draw_ < period_) return;
  last_draw_ = now;
  drawn_ = true;
  const double fraction = t_end_ > t0_ ? std::clamp((t - t0_) / (t_end_ - t0_), 0.0, 1.0) : 1.0;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Time left at the average rate so far (simulated time per wall second).
  char left[32] = "";
  if (fraction > 0.0 && fraction < 1.0) {
    std::snprintf(left, sizeof left, ", ~%.0f s left", elapsed * (1.0 - fraction) / fraction);
  }
  char text[200];
  std::snprintf(text, sizeof text, "\r[%-*s] %5.1f %%  t = %.4g of %.4g s  %ld events  %.1f s%s",
                kWidth, std::string(static_cast<std::size_t>(filled), '#').c_str(),
                100.0 * fraction, t, t_end_, events_, elapsed, left);
  err_ << text << std::flush;
}

void ProgressBar::Finish() {
  if (drawn_) err_ << '\r' << std::string(110, ' ') << '\r' << std::flush;
  drawn_ = false;
}

int RunCli(std::span<const std::string> args, std::ostream& out, std::ostream& err,
           bool stderr_is_terminal) {
  try {
    if (args.empty()) {
      err << kUsage;
      return kExitBadInput;
    }
    const std::string& command = args[0];
    if (command == "help" || command == "--help" || command == "-h") {
      out << kUsage;
      return kExitOk;
    }
    if (command == "list") {
      if (args.size() > 1) throw UsageError("list: unexpected argument '" + args[1] + "'");
      return List(out);
    }
    if (command == "run") return Run(args.subspan(1), out, err, stderr_is_terminal);
    if (command == "compare") return RunCompare(args.subspan(1), out, err);
    if (command == "generate") return Generate(args.subspan(1), out, err);
    throw UsageError("unknown command '" + command +
                     "' (use run, compare, generate, list or help)");
  } catch (const UsageError& e) {
    err << "error: " << e.what() << "\n(saltus help shows the usage)\n";
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
