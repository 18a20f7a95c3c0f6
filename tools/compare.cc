#include "tools/compare.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "events/simulation.h"
#include "integrators/integrator.h"
#include "tools/cli.h"
#include "tools/json_writer.h"
#include "tools/metadata.h"
#include "tools/reference.h"
#include "tools/scene.h"

#ifndef SALTUS_SETS_DIR
#define SALTUS_SETS_DIR "examples/sets"
#endif
#ifndef SALTUS_PLOTS_SCRIPT
#define SALTUS_PLOTS_SCRIPT "tools/plots/compare_plots.py"
#endif

namespace saltus::tools {

std::string_view CompareHelp() {
  return "usage: saltus compare [options]\n"
         "\n"
         "Runs scenes x integrators x formulations x tolerances, each run in its own process,\n"
         "measures each against a reference solution and writes DIR/results.csv, plots and\n"
         "DIR/report.md (docs/compare.md).\n"
         "\n"
         "options (lists take several words or a comma list):\n"
         "  --set NAME|FILE ...         shipped sets (joints, impacts, stiff, flexible) or set\n"
         "                              files (default: all four when no --scenes)\n"
         "  --scenes FILE ...           scene files\n"
         "  --integrators N ...         integrators (default: all, see saltus list)\n"
         "  --formulations F ...        keep only these formulations (default: all supported)\n"
         "  --rtol R1,R2,...            tolerances, atol = rtol (default 1e-3,1e-4,1e-5,1e-6)\n"
         "  --out DIR                   output folder (default out/compare)\n"
         "  --time-limit S              wall-clock limit per run in s (default 60)\n"
         "  --cost C                    work axis of the plots and profiles: wall, cpu (s),\n"
         "                              rhs (right-hand-side evaluations) or steps (default wall)\n"
         "  --jobs N                    runs at the same time (default: 1 when the cost is a\n"
         "                              time, wall or cpu; else the cores available)\n"
         "  --repeat N                  repeat each simulation up to N times while under 1 s\n"
         "                              and keep the median wall and CPU times (default 3)\n"
         "  --t-end T                   overrides every scene's final time\n"
         "  --error-control C           per_step or per_unit_step for the compared runs\n"
         "                              (default: each scene's; docs/compare.md)\n"
         "  --reference-integrator N    reference runs for scenes without a reference\n"
         "  --reference-rtol R          (default dopri5 at 1e-10, atol = rtol/100)\n"
         "  --no-plots                  write results.csv and the error / rtol summary\n"
         "                              (DIR/error_over_rtol.md) only\n"
         "  --emit-jobs DIR             write one job per run (DIR/jobs.txt), a GNU parallel\n"
         "                              script and a Slurm job array instead of running them\n"
         "  --collect DIR               merge the results of the emitted jobs in DIR into\n"
         "                              DIR/results.csv, plots and report (alone)\n"
         "  --help                      show this help\n";
}

const std::vector<std::string> kResultColumns = {
    "set",
    "scene",
    "integrator",
    "formulation",
    "rtol",
    "atol",
    "status",
    "reason",
    "wall_seconds",
    "cpu_seconds",
    "repeats",
    "t_end",
    "t_reached",
    "accepted_steps",
    "rejected_steps",
    "average_step",
    "smallest_step",
    "rhs_evaluations",
    "newton_iterations",
    "jacobian_evaluations",
    "factorizations",
    "impacts",
    "takeoffs",
    "contacts_closed",
    "time_events",
    "sticks",
    "slips",
    "max_position_violation",
    "max_velocity_violation",
    "max_acceleration_violation",
    "error",
    "error_over_rtol",
    "reference",
};

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<std::string> scene_files;
  std::vector<std::string> sets;
  std::vector<std::string> integrators, formulations;
  std::vector<double> rtols = {1e-3, 1e-4, 1e-5, 1e-6};
  std::string out_dir = "out/compare";
  double time_limit = 60;
  int jobs = 0;  // 0: 1 when the cost is a time (wall, cpu), else the cores available
  int repeat = 3;
  std::string cost = "wall";            // --cost: wall, cpu, rhs or steps (the plots' work axis)
  std::optional<std::string> emit_dir;  // --emit-jobs DIR
  std::string reference_integrator = "dopri5";
  double reference_rtol = 1e-10;
  bool plots = true;
  std::optional<double> t_end;                             // overrides every scene's t_end
  std::optional<integrators::ErrorControl> error_control;  // --error-control
};

struct SceneEntry {
  Scene scene;
  std::string set;                             // set name, or "scenes" for --scenes
  std::optional<ReferenceSolution> reference;  // after the reference phase
  std::string reference_note;                  // why there is none
  std::string reference_origin;  // file of the `reference:` (the set file when it names one)
};

struct Job {
  std::size_t scene = 0;
  std::string integrator;
  integrators::Formulation formulation = integrators::Formulation::kIndex1;
  double rtol = 0, atol = 0;
  bool is_reference = false;  // a reference run: writes the reference CSV
  bool emitted = false;       // an emitted job (--emit-jobs): writes its positions, no error
  // --error-control for the compared runs; unset: the scene's (references always use theirs).
  std::optional<integrators::ErrorControl> error_control;
};

double ParsePositive(const std::string& flag, const std::string& text) {
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || end != last || !std::isfinite(value) || !(value > 0)) {
    throw std::invalid_argument(flag + ": expected a number > 0, got '" + text + "'");
  }
  return value;
}

int ParseCount(const std::string& flag, const std::string& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) {
    throw std::invalid_argument(flag + ": expected an integer >= 1, got '" + text + "'");
  }
  return value;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) items.push_back(item);
  if (!text.empty() && text.back() == ',') items.emplace_back();
  return items;
}

Options ParseArgs(std::span<const std::string> args) {
  Options o;
  static const std::vector<std::string> kListFlags = {"--scenes", "--set", "--integrators",
                                                      "--formulations"};
  static const std::vector<std::string> kValueFlags = {
      "--rtol",           "--out",       "--time-limit",   "--jobs",
      "--repeat",         "--t-end",     "--cost",         "--reference-integrator",
      "--reference-rtol", "--emit-jobs", "--error-control"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (const std::size_t eq = flag.find('=');
        flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--no-plots") {
      o.plots = false;
      continue;
    }
    if (flag == "--run-job" || flag == "--collect") {
      throw std::invalid_argument(flag + " takes no other option (saltus compare " + flag + " DIR" +
                                  (flag == "--run-job" ? " N" : "") + ")");
    }
    const bool is_list = std::find(kListFlags.begin(), kListFlags.end(), flag) != kListFlags.end();
    const bool is_value =
        std::find(kValueFlags.begin(), kValueFlags.end(), flag) != kValueFlags.end();
    if (!is_list && !is_value) {
      if (flag.rfind("-", 0) == 0) {
        throw std::invalid_argument("compare: unknown option '" + flag + "'");
      }
      throw std::invalid_argument("compare: unexpected argument '" + flag +
                                  "' (scene files go after --scenes)");
    }
    std::vector<std::string> values;
    if (inline_value) {
      values.push_back(*inline_value);
    } else if (is_value) {
      if (i + 1 >= args.size()) throw std::invalid_argument(flag + ": missing value");
      values.push_back(args[++i]);
    } else {
      while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) values.push_back(args[++i]);
    }
    if (values.empty()) throw std::invalid_argument(flag + ": missing value");
    std::vector<std::string> items;
    for (const std::string& v : values) {
      for (const std::string& item : is_list ? SplitCommas(v) : std::vector<std::string>{v}) {
        if (item.empty()) throw std::invalid_argument(flag + ": empty item in '" + v + "'");
        items.push_back(item);
      }
    }
    if (flag == "--scenes") {
      o.scene_files.insert(o.scene_files.end(), items.begin(), items.end());
    } else if (flag == "--set") {
      o.sets.insert(o.sets.end(), items.begin(), items.end());
    } else if (flag == "--integrators") {
      o.integrators.insert(o.integrators.end(), items.begin(), items.end());
    } else if (flag == "--formulations") {
      o.formulations.insert(o.formulations.end(), items.begin(), items.end());
    } else if (flag == "--rtol") {
      try {
        o.rtols = ParseToleranceList(items[0]);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--rtol: ") + e.what());
      }
    } else if (flag == "--out") {
      o.out_dir = items[0];
    } else if (flag == "--time-limit") {
      o.time_limit = ParsePositive(flag, items[0]);
    } else if (flag == "--jobs") {
      o.jobs = ParseCount(flag, items[0]);
    } else if (flag == "--repeat") {
      o.repeat = ParseCount(flag, items[0]);
    } else if (flag == "--reference-integrator") {
      o.reference_integrator = items[0];
    } else if (flag == "--t-end") {
      o.t_end = ParsePositive(flag, items[0]);
    } else if (flag == "--reference-rtol") {
      o.reference_rtol = ParsePositive(flag, items[0]);
    } else if (flag == "--cost") {
      if (items[0] != "wall" && items[0] != "cpu" && items[0] != "rhs" && items[0] != "steps") {
        throw std::invalid_argument("--cost: expected wall, cpu, rhs or steps, got '" + items[0] +
                                    "'");
      }
      o.cost = items[0];
    } else if (flag == "--error-control") {
      o.error_control = integrators::ParseErrorControl(items[0]);
      if (!o.error_control) {
        throw std::invalid_argument("--error-control: expected per_step or per_unit_step, got '" +
                                    items[0] + "'");
      }
    } else if (flag == "--emit-jobs") {
      o.emit_dir = items[0];
    } else {
      throw std::invalid_argument(flag + ": not supported by compare");
    }
  }
  if (o.scene_files.empty() && o.sets.empty()) o.sets = {"joints", "impacts", "stiff", "flexible"};
  return o;
}

// A file shipped with Saltus: P/share/saltus/<installed> when this program is an installed
// P/bin/saltus (cmake/SaltusInstall.cmake), else `source` in the tree it was built from.
std::filesystem::path ShippedFile(const std::string& installed, const char* source) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.parent_path().filename() == "bin") {
    const std::filesystem::path path = exe.parent_path().parent_path() / "share/saltus" / installed;
    if (std::filesystem::exists(path, ec)) return path;
  }
  return source;
}

std::filesystem::path SetsDir() { return ShippedFile("examples/sets", SALTUS_SETS_DIR); }

std::string Format(double x) {
  if (!std::isfinite(x)) return "";
  return FormatDouble(x);
}

std::string Short(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", x);
  return buffer;
}

// ---- One run, in the child process ---------------------------------------------------------

// CPU time of this process (s): the run's child does nothing else.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n == 0 ? std::nan("") : n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// The grid a run records: all positions at the scene's reference times (reference runs and
// emitted runs, whose error is computed when the study is collected).
ReferenceSolution AllPositionsGrid(const Scene& scene, const engine::MechanicalSystem& system) {
  ReferenceSolution r;
  r.step = scene.reference.step > 0 ? scene.reference.step : scene.t_end / 100;
  r.times = ReferenceTimes(scene.t_end, r.step);
  for (int i = 0; i < system.nq(); ++i) {
    r.names.push_back(system.PositionName(i));
    r.columns.push_back(i);
  }
  r.values.setZero(static_cast<Eigen::Index>(r.times.size()), system.nq());
  return r;
}

// Runs the job up to `repeat` times while the runs have used less than 1 s in all, and reports
// the median wall and CPU times of the repeats (their statistics are identical: the runs are
// deterministic). Reference and emitted runs write their positions at the reference times to
// `positions_out`; other runs with a reference get their error.
ResultRow SimulateJob(const SceneEntry& entry, const Job& job, int repeat,
                      const std::filesystem::path& positions_out) {
  const Scene& scene = entry.scene;
  ResultRow row;
  events::SimulationOptions options = scene.options;
  options.integrator = job.integrator;
  options.integrator_options.formulation = job.formulation;
  options.integrator_options.rtol = job.rtol;
  options.integrator_options.atol = job.atol;
  if (job.error_control) options.integrator_options.error_control = *job.error_control;
  options.integrator_options.error_time_scale = scene.t_end;  // the runs start at t = 0

  // Planar or spatial; a spatial scene's initial state is its consistent initialization.
  const SceneSystem built = BuildSceneSystem(scene);
  const std::shared_ptr<engine::MechanicalSystem> system = built.system;
  const bool record = job.is_reference || job.emitted;
  std::optional<ReferenceSolution> grid = entry.reference;
  if (record) grid = AllPositionsGrid(scene, *system);
  options.output_step = grid ? grid->step : 0.0;

  std::vector<double> walls, cpus;
  double used = 0;
  std::unique_ptr<events::Simulation> simulation;
  std::unique_ptr<ReferenceRecorder> recorder;
  events::RunResult result;
  std::string error_text;
  for (int r = 0; r < repeat; ++r) {
    simulation = std::make_unique<events::Simulation>(system, options);
    recorder.reset(grid ? new ReferenceRecorder(*grid) : nullptr);
    if (recorder) simulation->AddObserver(recorder.get());
    const Clock::time_point start = Clock::now();
    const double cpu_start = ProcessCpuSeconds();
    try {
      simulation->SetState(0.0, built.q0, built.v0);
      result = simulation->AdvanceTo(scene.t_end);
      // The loop's output grid can step just past t_end in floating point (100 · 0.035 =
      // 3.5000000000000004 > 3.5) and then emits no row there: the final state stands for it.
      if (recorder && result.status == events::RunStatus::kFinished) {
        recorder->OnOutput(simulation->t(), simulation->q(), simulation->v());
      }
    } catch (const std::exception& e) {
      result.status = events::RunStatus::kNonFinite;
      result.t = simulation->t();
      error_text = std::string("exception: ") + e.what();
    }
    walls.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    cpus.push_back(ProcessCpuSeconds() - cpu_start);
    used += walls.back();
    if (result.status != events::RunStatus::kFinished || !error_text.empty() || used > 1.0) break;
  }
  const bool ok = result.status == events::RunStatus::kFinished && error_text.empty();
  const events::SimulationStats& s = simulation->stats();
  row["status"] = ok ? "ok" : "failed";
  if (!ok) {
    row["reason"] = !error_text.empty() ? error_text
                                        : std::string(events::ToString(result.status)) +
                                              (result.message.empty() ? "" : ": " + result.message);
  }
  row["wall_seconds"] = Format(Median(walls));
  row["cpu_seconds"] = Format(Median(cpus));
  row["repeats"] = std::to_string(walls.size());
  row["t_reached"] = Format(result.t);
  row["accepted_steps"] = std::to_string(s.integrator.accepted_steps);
  row["rejected_steps"] = std::to_string(s.integrator.rejected_steps);
  if (s.integrator.accepted_steps > 0) {
    row["average_step"] =
        Format(s.integrator.total_time / static_cast<double>(s.integrator.accepted_steps));
    row["smallest_step"] = Format(s.integrator.smallest_step);
  }
  row["rhs_evaluations"] = std::to_string(s.integrator.rhs_evaluations);
  row["newton_iterations"] = std::to_string(s.integrator.newton_iterations);
  row["jacobian_evaluations"] = std::to_string(s.integrator.jacobian_evaluations);
  row["factorizations"] = std::to_string(s.integrator.factorizations);
  row["impacts"] = std::to_string(s.events[0]);
  row["takeoffs"] = std::to_string(s.events[1]);
  row["contacts_closed"] = std::to_string(s.events[2]);
  row["time_events"] = std::to_string(s.events[3]);
  row["sticks"] = std::to_string(s.events[static_cast<int>(events::EventKind::kStick)]);
  row["slips"] = std::to_string(s.events[static_cast<int>(events::EventKind::kSlip)]);
  row["max_position_violation"] = Format(s.max_position_violation);
  row["max_velocity_violation"] = Format(s.max_velocity_violation);
  row["max_acceleration_violation"] = Format(s.max_acceleration_violation);
  if (ok && recorder && !record) row["error"] = Format(recorder->Error());
  if (ok && record) {
    if (!recorder->complete()) {
      row["status"] = "failed";
      row["reason"] = "the run missed some reference times";
    } else {
      std::ofstream file(positions_out, std::ios::binary | std::ios::trunc);
      WriteReferenceCsv(recorder->AsReference(""), file);
      if (!file) {
        row["status"] = "failed";
        row["reason"] = "cannot write " + positions_out.string();
      }
    }
  }
  return row;
}

// Text form of a row for the pipe: "key=value" lines, newlines in values replaced by spaces.
std::string Serialize(const ResultRow& row) {
  std::string text;
  for (const auto& [key, value] : row) {
    std::string v = value;
    std::replace(v.begin(), v.end(), '\n', ' ');
    text += key + "=" + v + "\n";
  }
  return text;
}

ResultRow Deserialize(const std::string& text) {
  ResultRow row;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) row[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return row;
}

// ---- The process pool ----------------------------------------------------------------------

struct Running {
  pid_t pid = -1;
  int fd = -1;
  std::size_t job = 0;
  Clock::time_point start;
  std::string output;
};

std::string SignalName(int sig) {
  const char* name = strsignal(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

// Runs every job in a child process, at most `jobs` at once, each killed after `time_limit`
// seconds. Calls done(job index, row) as each finishes (in the parent).
// positions_out(k): where job k writes its positions (reference and emitted runs).
template <class Done>
void RunPool(const std::vector<SceneEntry>& scenes, const std::vector<Job>& jobs, int parallel,
             double time_limit, int repeat,
             const std::function<std::filesystem::path(std::size_t)>& positions_out,
             const CompareHooks& hooks, Done&& done) {
  std::vector<Running> running;
  std::size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (static_cast<int>(running.size()) < parallel && next < jobs.size()) {
      int fds[2];
      if (pipe(fds) != 0) throw std::runtime_error("compare: pipe() failed");
      std::fflush(nullptr);
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("compare: fork() failed");
      if (pid == 0) {
        close(fds[0]);
        std::string text;
        int code = 0;
        try {
          if (hooks.in_child) {
            const Job& job = jobs[next];
            hooks.in_child(scenes[job.scene].scene.name, job.integrator, job.rtol);
          }
          text = Serialize(
              SimulateJob(scenes[jobs[next].scene], jobs[next], repeat, positions_out(next)));
        } catch (const std::exception& e) {
          ResultRow row{{"status", "failed"}, {"reason", std::string("error: ") + e.what()}};
          text = Serialize(row);
        }
        std::size_t written = 0;
        while (written < text.size()) {
          const ssize_t n = write(fds[1], text.data() + written, text.size() - written);
          if (n <= 0) {
            code = 1;
            break;
          }
          written += static_cast<std::size_t>(n);
        }
        close(fds[1]);
        _exit(code);
      }
      close(fds[1]);
      running.push_back({pid, fds[0], next, Clock::now(), {}});
      ++next;
    }
    // Wait for output or the nearest deadline (at most 100 ms).
    std::vector<pollfd> polls;
    for (const Running& r : running) polls.push_back({r.fd, POLLIN, 0});
    int wait_ms = 100;
    for (const Running& r : running) {
      const double left =
          time_limit - std::chrono::duration<double>(Clock::now() - r.start).count();
      wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
    }
    poll(polls.data(), static_cast<nfds_t>(polls.size()), wait_ms);
    for (std::size_t k = 0; k < running.size();) {
      Running& r = running[k];
      bool finished = false;
      ResultRow row;
      if (polls[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[4096];
        const ssize_t n = read(r.fd, buffer, sizeof buffer);
        if (n > 0) r.output.append(buffer, static_cast<std::size_t>(n));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
          int status = 0;
          waitpid(r.pid, &status, 0);
          finished = true;
          if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !r.output.empty()) {
            row = Deserialize(r.output);
          } else if (WIFSIGNALED(status)) {
            row = {{"status", "failed"}, {"reason", "crashed: " + SignalName(WTERMSIG(status))}};
          } else {
            row = {{"status", "failed"},
                   {"reason", "the run process exited with code " +
                                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1)}};
          }
        }
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - r.start).count();
      if (!finished && elapsed > time_limit) {
        kill(r.pid, SIGKILL);
        int status = 0;
        waitpid(r.pid, &status, 0);
        finished = true;
        row = {{"status", "timed_out"},
               {"reason", "killed after the time limit of " + Short(time_limit) + " s"},
               {"wall_seconds", Format(time_limit)}};
      }
      if (finished) {
        close(r.fd);
        const std::size_t job = r.job;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        polls.erase(polls.begin() + static_cast<std::ptrdiff_t>(k));
        done(job, row);
      } else {
        ++k;
      }
    }
  }
}

// ---- Study set-up --------------------------------------------------------------------------

void LoadScene(const SceneSetEntry& item, const std::string& set, std::optional<double> t_end,
               std::vector<SceneEntry>* scenes) {
  const std::string& file = item.file;
  SceneEntry entry;
  entry.scene = LoadSceneFile(file);
  if (!item.name.empty()) entry.scene.name = item.name;
  if (item.t_end) entry.scene.t_end = *item.t_end;
  if (t_end) entry.scene.t_end = *t_end;
  if (!item.analytic.empty()) {
    entry.scene.reference = SceneReference{};
    entry.scene.reference.analytic = item.analytic;
    entry.scene.reference.line = item.line;
    entry.reference_origin = item.set_file;  // errors of the closed form point at the set's line
  }
  entry.set = set;
  BuildSceneSystem(entry.scene);  // anything the engine rejects is bad input, before any run
  for (const SceneEntry& other : *scenes) {
    if (other.scene.name == entry.scene.name) {
      if (std::filesystem::equivalent(other.scene.file, entry.scene.file)) return;  // listed twice
      throw std::invalid_argument(file + ": scene name '" + entry.scene.name +
                                  "' is also used by " + other.scene.file +
                                  " (results are keyed by scene name)");
    }
  }
  scenes->push_back(std::move(entry));
}

// File and analytic references are bad input when wrong; runs are made later.
void ResolveStaticReference(SceneEntry* entry) {
  const Scene& scene = entry->scene;
  const SceneReference& spec = scene.reference;
  const double step = spec.step > 0 ? spec.step : scene.t_end / 100;
  if (!spec.file.empty()) {
    const auto system = BuildSceneSystem(scene).system;
    try {
      entry->reference = LoadReferenceFile(spec.file, *system, scene.t_end, spec.step);
    } catch (const std::invalid_argument& e) {
      throw SceneError(scene.file, spec.line, std::string("reference: ") + e.what());
    }
  } else if (!spec.analytic.empty()) {
    const auto system = BuildSceneSystem(scene).system;
    try {
      entry->reference = AnalyticReference(spec.analytic, scene, *system, step);
    } catch (const std::invalid_argument& e) {
      throw SceneError(entry->reference_origin.empty() ? scene.file : entry->reference_origin,
                       spec.line, e.what());
    }
  }
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::vector<double> ParseToleranceList(const std::string& text) {
  std::vector<double> values;
  const std::vector<std::string> items = SplitCommas(text);
  if (items.empty()) throw std::invalid_argument("empty tolerance list");
  for (const std::string& item : items) {
    double x = 0;
    const char* first = item.data();
    const char* last = item.data() + item.size();
    const auto [end, ec] = std::from_chars(first, last, x);
    if (item.empty() || ec != std::errc() || end != last || !std::isfinite(x) || !(x > 0)) {
      throw std::invalid_argument("'" + item + "' in '" + text +
                                  "' is not a tolerance (a number > 0; list them as 1e-2,1e-4)");
    }
    values.push_back(x);
  }
  return values;
}

std::vector<SceneSetEntry> SceneSet(const std::string& name_or_path, std::string* set_name) {
  std::filesystem::path path = name_or_path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    path = SetsDir() / (name_or_path + ".yaml");
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::string known;
    for (const auto& f : std::filesystem::directory_iterator(SetsDir(), ec)) {
      if (f.path().extension() == ".yaml") {
        known += (known.empty() ? "" : ", ") + f.path().stem().string();
      }
    }
    throw std::invalid_argument("--set: '" + name_or_path +
                                "' is neither a set file nor a shipped set (known: " + known + ")");
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(path.string() + ": malformed YAML: " + e.msg);
  }
  if (!root.IsMap() || !root["scenes"] || !root["scenes"].IsSequence()) {
    throw std::invalid_argument(path.string() + ": a set file needs 'scenes:' (a list of files)");
  }
  *set_name = root["set"] && root["set"].IsScalar() ? root["set"].Scalar() : path.stem().string();
  std::vector<SceneSetEntry> entries;
  for (const YAML::Node& n : root["scenes"]) {
    SceneSetEntry entry;
    entry.set_file = path.string();
    entry.line = n.Mark().line + 1;
    const std::string where = path.string() + ":" + std::to_string(entry.line) + ": ";
    const YAML::Node file_node = n.IsMap() ? n["file"] : n;
    if (!file_node || !file_node.IsScalar()) {
      throw std::invalid_argument(where +
                                  "a scene is a file name or {file: F, t_end: T, analytic: NAME}");
    }
    if (n.IsMap()) {
      for (const auto& key : n) {
        const std::string k = key.first.as<std::string>();
        if (k != "file" && k != "name" && k != "t_end" && k != "analytic") {
          throw std::invalid_argument(where + "unknown key '" + k +
                                      "' (a scene entry has file, name, t_end, analytic)");
        }
      }
      if (n["name"]) {
        entry.name = n["name"].IsScalar() ? n["name"].Scalar() : "";
        const bool valid =
            !entry.name.empty() && std::all_of(entry.name.begin(), entry.name.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                     c == '.';
            });
        if (!valid) {
          throw std::invalid_argument(where + "name must be letters, digits, '_', '-' or '.'");
        }
      }
      if (n["t_end"]) {
        double t = 0;
        const std::string text = n["t_end"].IsScalar() ? n["t_end"].Scalar() : "";
        const auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), t);
        if (text.empty() || code != std::errc() || end != text.data() + text.size() ||
            !std::isfinite(t) || !(t > 0)) {
          throw std::invalid_argument(where + "t_end must be a number > 0, got '" + text + "'");
        }
        entry.t_end = t;
      }
      if (n["analytic"]) {
        if (!n["analytic"].IsScalar()) throw std::invalid_argument(where + "analytic: a name");
        entry.analytic = n["analytic"].Scalar();
      }
    }
    std::filesystem::path scene = file_node.Scalar();
    if (scene.is_relative()) scene = path.parent_path() / scene;
    entry.file = scene.lexically_normal().string();
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<std::string> SceneSetFiles(const std::string& name_or_path, std::string* set_name) {
  std::vector<std::string> files;
  for (const SceneSetEntry& entry : SceneSet(name_or_path, set_name)) files.push_back(entry.file);
  return files;
}

void WriteResultRow(const ResultRow& row, std::ostream& out) {
  for (std::size_t i = 0; i < kResultColumns.size(); ++i) {
    const auto it = row.find(kResultColumns[i]);
    std::string value = it == row.end() ? "" : it->second;
    if (value.find_first_of(",\"\n") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : value) {
        if (c == '"') quoted += '"';
        quoted += c == '\n' ? ' ' : c;
      }
      value = quoted + "\"";
    }
    out << (i > 0 ? "," : "") << value;
  }
  out << '\n';
}

int RunCompare(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  return RunCompare(args, out, err, CompareHooks{});
}

namespace {

// A study after its checks: the scenes (with their file and closed-form references), the
// reference runs for the others and the runs of every valid combination.
struct Study {
  Options o;
  std::vector<SceneEntry> scenes;
  std::vector<Job> reference_jobs, jobs;
  int parallel = 1;
};

// Step 1 of the header: everything that can be bad input, before any run. Throws
// std::invalid_argument.
Study PrepareStudy(std::span<const std::string> args) {
  Study study;
  study.o = ParseArgs(args);
  const Options& o = study.o;
  std::vector<SceneEntry>& scenes = study.scenes;
  for (const std::string& set : o.sets) {
    std::string name;
    for (const SceneSetEntry& item : SceneSet(set, &name)) LoadScene(item, name, o.t_end, &scenes);
  }
  for (const std::string& file : o.scene_files) {
    LoadScene(SceneSetEntry{file, {}, {}, {}, {}, 0}, "scenes", o.t_end, &scenes);
  }
  std::vector<std::string> known;
  for (const integrators::IntegratorEntry& e : integrators::IntegratorTable()) {
    known.emplace_back(e.name);
  }
  const std::vector<std::string> integrator_names = o.integrators.empty() ? known : o.integrators;
  for (const std::string& name : integrator_names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument("--integrators: " + CheckIntegratorChoice(name, {}));
    }
  }
  std::vector<integrators::Formulation> formulations;
  for (const std::string& name : o.formulations) {
    const std::optional<integrators::Formulation> f = integrators::ParseFormulation(Lower(name));
    if (!f) {
      throw std::invalid_argument("--formulations: '" + name +
                                  "' is unknown (use index1, index2, index3 or ggl)");
    }
    formulations.push_back(*f);
  }
  if (std::find(known.begin(), known.end(), o.reference_integrator) == known.end()) {
    throw std::invalid_argument("--reference-integrator: " +
                                CheckIntegratorChoice(o.reference_integrator, {}));
  }
  for (SceneEntry& entry : scenes) ResolveStaticReference(&entry);

  // Every valid combination.
  for (std::size_t s = 0; s < scenes.size(); ++s) {
    for (const std::string& name : integrator_names) {
      const auto entry =
          std::find_if(integrators::IntegratorTable().begin(), integrators::IntegratorTable().end(),
                       [&](const integrators::IntegratorEntry& e) { return e.name == name; });
      for (integrators::Formulation f : entry->formulations) {
        if (!formulations.empty() &&
            std::find(formulations.begin(), formulations.end(), f) == formulations.end()) {
          continue;
        }
        for (double rtol : o.rtols) {
          study.jobs.push_back({s, name, f, rtol, rtol, false, false, o.error_control});
        }
      }
    }
  }
  if (study.jobs.empty()) {
    throw std::invalid_argument(
        "--formulations: no selected integrator supports the selected formulations (see saltus "
        "list)");
  }
  // Reference runs for scenes without a file or closed form.
  for (std::size_t s = 0; s < scenes.size(); ++s) {
    const SceneReference& spec = scenes[s].scene.reference;
    if (scenes[s].reference) continue;
    Job job;
    job.scene = s;
    job.is_reference = true;
    job.integrator = spec.integrator.empty() ? o.reference_integrator : spec.integrator;
    // The scene's formulation, else the integrator's first one (scene.cc checked the pair).
    job.formulation =
        DefaultFormulation(job.integrator).value_or(integrators::Formulation::kIndex1);
    if (!spec.integrator.empty() && !spec.formulation.empty()) {
      job.formulation = *integrators::ParseFormulation(spec.formulation);
    }
    job.rtol = spec.rtol > 0 ? spec.rtol : o.reference_rtol;
    job.atol = spec.atol > 0 ? spec.atol : job.rtol / 100;
    study.reference_jobs.push_back(job);
  }
  // Timing runs side by side disturb each other (2 runs on 2 cores: 5x between repeats), so
  // a time cost runs one at a time unless --jobs says otherwise.
  const bool timing = o.cost == "wall" || o.cost == "cpu";
  study.parallel = o.jobs > 0 ? o.jobs
                   : timing   ? 1
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return study;
}

std::string ReferenceHow(const Job& job) {
  return "run " + job.integrator + "/" + std::string(integrators::ToString(job.formulation)) +
         " rtol=" + Short(job.rtol) + " atol=" + Short(job.atol);
}

// Takes the outcome of a reference run: its CSV as the scene's reference, or why there is none.
void TakeReference(const Job& job, const ResultRow& row, const std::filesystem::path& csv,
                   SceneEntry* entry, std::ostream& err) {
  const std::string how = ReferenceHow(job);
  const auto status = row.find("status");
  if (status != row.end() && status->second == "ok") {
    const auto system = BuildSceneSystem(entry->scene).system;
    entry->reference = LoadReferenceFile(csv.string(), *system, entry->scene.t_end);
    entry->reference->how = how;
    err << "  reference " << entry->scene.name << ": " << how << '\n';
  } else {
    const auto reason = row.find("reason");
    entry->reference_note = how + " " + (status == row.end() ? "missing" : status->second) +
                            (reason == row.end() ? "" : ": " + reason->second);
    err << "  reference " << entry->scene.name << ": " << entry->reference_note
        << " (its errors stay empty)\n";
  }
}

// Keeps a copy of every file and closed-form reference beside the results.
void WriteStaticReferences(const std::vector<SceneEntry>& scenes,
                           const std::filesystem::path& reference_dir) {
  for (const SceneEntry& entry : scenes) {
    if (!entry.reference || entry.reference->how.rfind("run", 0) == 0) continue;
    std::ofstream file(reference_dir / (entry.scene.name + ".csv"), std::ios::trunc);
    WriteReferenceCsv(*entry.reference, file);
  }
}

// The columns a finished row gets from its job.
void LabelRow(const Study& study, const Job& job, ResultRow* row) {
  const SceneEntry& entry = study.scenes[job.scene];
  (*row)["set"] = entry.set;
  (*row)["scene"] = entry.scene.name;
  (*row)["integrator"] = job.integrator;
  (*row)["formulation"] = std::string(integrators::ToString(job.formulation));
  (*row)["rtol"] = Format(job.rtol);
  (*row)["atol"] = Format(job.atol);
  (*row)["t_end"] = Format(entry.scene.t_end);
  (*row)["reference"] = entry.reference ? entry.reference->how : entry.reference_note;
  // Achieved error over requested tolerance (issue 19 §2: within a stated factor of 1).
  const auto error = row->find("error");
  if (error != row->end() && !error->second.empty()) {
    (*row)["error_over_rtol"] = Format(std::atof(error->second.c_str()) / job.rtol);
  }
}

void PrintRow(const ResultRow& row, std::size_t finished, std::size_t total, std::ostream& err) {
  const auto at = [&](const char* key) {
    const auto it = row.find(key);
    return it == row.end() ? std::string() : it->second;
  };
  err << '[' << finished << '/' << total << "] " << at("scene") << ' ' << at("integrator") << '/'
      << at("formulation") << " rtol=" << Short(std::atof(at("rtol").c_str())) << ": "
      << at("status");
  if (at("status") == "ok") {
    err << ", " << Short(std::atof(at("wall_seconds").c_str())) << " s, " << at("accepted_steps")
        << " steps (" << at("rejected_steps") << " rejected)";
    if (!at("error").empty()) {
      err << ", error " << Short(std::atof(at("error").c_str())) << " ("
          << Short(std::atof(at("error_over_rtol").c_str())) << " x rtol)";
    }
  } else {
    err << " (" << at("reason") << ')';
  }
  err << '\n';
}

void WriteHeader(std::ostream& results) {
  for (std::size_t i = 0; i < kResultColumns.size(); ++i) {
    results << (i > 0 ? "," : "") << kResultColumns[i];
  }
  results << '\n';
}

// "saltus compare <args>", shell-quoted (tools/metadata.h).
std::string CompareCommandLine(std::span<const std::string> args) {
  std::vector<std::string> line = {"compare"};
  line.insert(line.end(), args.begin(), args.end());
  return CommandLine(line);
}

// DIR/provenance.json of the study (tools/metadata.h), which the report quotes: the command that
// defined the study, the SHA-256 of every scene file ("scenes"; "scene_sha256" is the one file's
// digest in a one-scene study, else the digest of the lines "<sha256>  <file>\n" of all of them,
// sha256sum's format) and, after --collect, the collect command apart.
void WriteStudyProvenance(const std::string& command_line, const Study& study,
                          const std::filesystem::path& dir,
                          const std::string& collect_command_line = "") {
  Provenance p = CollectProvenance({}, "");
  p.command_line = command_line;
  p.collect_command_line = collect_command_line;
  std::string listing;
  for (const SceneEntry& entry : study.scenes) {
    p.scenes.push_back({entry.scene.name, entry.scene.file, FileSha256(entry.scene.file)});
    listing += p.scenes.back().sha256 + "  " + entry.scene.file + "\n";
  }
  p.scene_sha256 = p.scenes.size() == 1 ? p.scenes[0].sha256 : Sha256Hex(listing);
  std::ofstream file(dir / "provenance.json", std::ios::trunc);
  JsonWriter w(file);
  WriteProvenanceJson(p, &w);
  file << '\n';
}

// Step 5: plots and report with the plot script; false (with a warning) when it fails.
bool DrawPlots(const std::filesystem::path& dir, const std::string& cost, std::ostream& err) {
  std::fflush(nullptr);
  const std::string script = ShippedFile("plots/compare_plots.py", SALTUS_PLOTS_SCRIPT).string();
  // The Debian interpreter has python3-matplotlib; SALTUS_PYTHON overrides it.
  std::string python = "python3";
  if (const char* env = std::getenv("SALTUS_PYTHON"); env != nullptr && *env != '\0') {
    python = env;
  } else if (access("/usr/bin/python3", X_OK) == 0) {
    python = "/usr/bin/python3";
  }
  const std::string csv = (dir / "results.csv").string();
  const std::string out_dir = dir.string();
  const pid_t pid = fork();
  if (pid == 0) {
    execlp(python.c_str(), python.c_str(), script.c_str(), csv.c_str(), "--out", out_dir.c_str(),
           "--cost", cost.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  const bool plotted = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!plotted) {
    err << "warning: the plots were not drawn (" << python << ' ' << script
        << " failed; needs python3-matplotlib); results.csv is complete\n";
  }
  return plotted;
}

// The achieved error / rtol per solver (integrator/formulation) over its finished runs with an
// error (all scenes and tolerances): the number of runs, the median and the largest. Issue 19 §2
// asks each integrator's factor to be stated; the same table as report.md's "Achieved error /
// rtol per solver" (tools/plots/compare_plots.py, error_over_rtol), for studies without plots.
class ErrorOverRtolSummary {
 public:
  void Add(const ResultRow& row) {
    const auto at = [&](const char* key) {
      const auto it = row.find(key);
      return it == row.end() ? std::string() : it->second;
    };
    if (at("status") != "ok" || at("error").empty()) return;
    const double error = std::atof(at("error").c_str());
    const double rtol = std::atof(at("rtol").c_str());
    if (!std::isfinite(error) || !(rtol > 0)) return;
    ratios_[at("integrator") + "/" + at("formulation")].push_back(error / rtol);
  }

  // A Markdown table: | solver | runs | median | largest |, one row per solver in name order.
  std::string Table() const {
    std::ostringstream table;
    table << "| solver | runs | median | largest |\n|---|---|---|---|\n";
    for (auto [solver, x] : ratios_) {
      std::sort(x.begin(), x.end());
      const std::size_t n = x.size();
      const double median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
      table << "| " << solver << " | " << n << " | " << Short(median) << " | " << Short(x.back())
            << " |\n";
    }
    return table.str();
  }

  bool empty() const { return ratios_.empty(); }

 private:
  std::map<std::string, std::vector<double>> ratios_;
};

// Without report.md (--no-plots, or the plot script failed): DIR/error_over_rtol.md holds the
// summary table; false when it cannot be written.
bool WriteErrorOverRtol(const ErrorOverRtolSummary& summary, const std::filesystem::path& dir) {
  std::ofstream file(dir / "error_over_rtol.md", std::ios::trunc);
  file << "# saltus compare: achieved error / rtol per solver\n\n"
       << "Over each solver's finished runs with an error against the reference (all scenes "
          "and tolerances); see results.csv, column error_over_rtol.\n\n"
       << summary.Table();
  return static_cast<bool>(file.flush());
}

int Finish(const Study& study, const std::filesystem::path& dir, std::size_t runs,
           const std::map<std::string, int>& by_status, const ErrorOverRtolSummary& summary,
           Clock::time_point start, std::ostream& out, std::ostream& err) {
  const bool plotted = study.o.plots && DrawPlots(dir, study.o.cost, err);
  if (!plotted && !WriteErrorOverRtol(summary, dir)) {
    err << "error: writing " << (dir / "error_over_rtol.md") << " failed\n";
    return kExitError;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  out << "compare: " << runs << " runs in " << Short(seconds) << " s:";
  for (const auto& [status, count] : by_status) out << ' ' << count << ' ' << status;
  out << "\n  results in " << (dir / "results.csv").string();
  out << (plotted ? ", report in " : ", error / rtol summary in ")
      << (dir / (plotted ? "report.md" : "error_over_rtol.md")).string();
  out << '\n';
  if (!summary.empty()) out << "achieved error / rtol per solver:\n" << summary.Table();
  return kExitOk;
}

// ---- Studies beyond one machine (--emit-jobs, --run-job, --collect) ---------------------------
// DIR/study.args holds the study's arguments (one per line) and DIR/study.cwd the folder they
// are relative to: a job and the collection rebuild the same study (same scenes, same job
// order) from them. Job k < R (R reference runs) is reference run k, job R + i is run i.

// The `saltus` program the jobs call: this one when it is `saltus`, else `saltus` on the PATH
// (RunCompare called from another program).
std::filesystem::path SaltusProgram() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return !ec && exe.filename() == "saltus" ? exe : std::filesystem::path("saltus");
}

std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Moves to a folder and back (the study's paths are relative to the folder it was emitted in).
class CurrentPathGuard {
 public:
  CurrentPathGuard() : saved_(std::filesystem::current_path()) {}
  ~CurrentPathGuard() {
    std::error_code ec;
    std::filesystem::current_path(saved_, ec);
  }
  CurrentPathGuard(const CurrentPathGuard&) = delete;
  CurrentPathGuard& operator=(const CurrentPathGuard&) = delete;

 private:
  std::filesystem::path saved_;
};

// Reads DIR/study.args, moves to DIR/study.cwd (the caller holds a CurrentPathGuard) and
// rebuilds the study.
Study ReloadStudy(const std::filesystem::path& dir) {
  std::ifstream args_file(dir / "study.args"), cwd_file(dir / "study.cwd");
  if (!args_file || !cwd_file) {
    throw std::invalid_argument(dir.string() +
                                ": not a folder of emitted jobs (no study.args; "
                                "see saltus compare --emit-jobs)");
  }
  std::vector<std::string> args;
  for (std::string line; std::getline(args_file, line);) args.push_back(line);
  std::string cwd;
  std::getline(cwd_file, cwd);
  std::error_code ec;
  std::filesystem::current_path(cwd, ec);
  if (ec)
    throw std::invalid_argument("cannot enter the study's folder " + cwd + ": " + ec.message());
  return PrepareStudy(args);
}

std::filesystem::path RunRowFile(const std::filesystem::path& dir, std::size_t k) {
  return dir / "runs" / (std::to_string(k) + ".txt");
}
std::filesystem::path RunPositionsFile(const std::filesystem::path& dir, std::size_t k) {
  return dir / "runs" / (std::to_string(k) + ".csv");
}

// The body of slurm.sh after its #SBATCH lines (which must come first) and `jobs=<jobs.txt>`:
// task K runs line K of jobs.txt; --dry-run lists the tasks of the script's own --array range.
constexpr const char* kSlurmTaskLogic = R"sh(if [ "${1:-}" = "--dry-run" ]; then
  range=$(sed -n 's/^#SBATCH --array=//p' "$0")
  for task in $(seq "${range%-*}" "${range#*-}"); do
    echo "task $task: $(sed -n "${task}p" "$jobs")"
  done
  exit 0
fi
if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  echo "slurm.sh: SLURM_ARRAY_TASK_ID is not set (submit with sbatch; --dry-run lists the tasks)" >&2
  exit 2
fi
line=$(sed -n "${SLURM_ARRAY_TASK_ID}p" "$jobs")
if [ -z "$line" ]; then
  echo "slurm.sh: no task $SLURM_ARRAY_TASK_ID in $jobs" >&2
  exit 2
fi
eval "$line"
)sh";

int EmitJobs(std::span<const std::string> args, const Study& study, std::ostream& out,
             std::ostream& err) {
  const std::filesystem::path dir = std::filesystem::absolute(*study.o.emit_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir / "runs", ec);
  std::filesystem::create_directories(dir / "references", ec);
  if (ec) {
    err << "error: cannot create " << dir << ": " << ec.message() << '\n';
    return kExitError;
  }
  std::ofstream args_file(dir / "study.args", std::ios::trunc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--emit-jobs") {
      ++i;  // and its value
    } else if (args[i].rfind("--emit-jobs=", 0) != 0) {
      args_file << args[i] << '\n';
    }
  }
  std::ofstream(dir / "study.cwd", std::ios::trunc)
      << std::filesystem::current_path().string() << '\n';
  // The command as given, for the provenance that --collect writes.
  std::ofstream(dir / "study.command", std::ios::trunc) << CompareCommandLine(args) << '\n';
  WriteStaticReferences(study.scenes, dir / "references");
  const std::size_t total = study.reference_jobs.size() + study.jobs.size();
  const std::string self = Quote(SaltusProgram().string());
  std::ofstream jobs(dir / "jobs.txt", std::ios::trunc);
  for (std::size_t k = 0; k < total; ++k) {
    jobs << self << " compare --run-job " << Quote(dir.string()) << ' ' << k << '\n';
  }
  std::ofstream parallel(dir / "run_parallel.sh", std::ios::trunc);
  parallel << "#!/bin/sh\n# Runs every job with GNU parallel (Debian parallel), SALTUS_JOBS at "
              "once (default: the cores),\n# then merges the results.\nset -e\n"
           << "parallel --will-cite --halt never --joblog "
           << Quote((dir / "parallel.log").string())
           << " --jobs \"${SALTUS_JOBS:-100%}\" :::: " << Quote((dir / "jobs.txt").string())
           << " || true\n"
           << self << " compare --collect " << Quote(dir.string()) << '\n';
  // A job's own limit is enforced by the job (--time-limit, five times for reference runs);
  // Slurm's covers it with a margin.
  const long minutes = static_cast<long>(std::ceil(5 * study.o.time_limit / 60)) + 5;
  std::ofstream slurm(dir / "slurm.sh", std::ios::trunc);
  slurm << "#!/bin/bash\n"
           "# One Slurm array task per job: sbatch slurm.sh, then, once all have ended,\n"
           "#   saltus compare --collect DIR   (or: sbatch --dependency=afterany:<job id> "
           "--wrap \"...\")\n"
           "# Without Slurm: `bash slurm.sh --dry-run` prints the command of every task of the "
           "array;\n"
           "# SLURM_ARRAY_TASK_ID=K bash slurm.sh runs task K here, as Slurm would.\n"
        << "#SBATCH --job-name=saltus-compare\n#SBATCH --array=1-" << total << '\n'
        << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --time=" << minutes << '\n'
        << "#SBATCH --output=" << (dir / "runs" / "slurm_%a.out").string() << '\n'
        << "jobs=" << Quote((dir / "jobs.txt").string()) << '\n'
        << kSlurmTaskLogic;
  for (const char* script : {"run_parallel.sh", "slurm.sh"}) {
    std::filesystem::permissions(dir / script, std::filesystem::perms::owner_exec,
                                 std::filesystem::perm_options::add, ec);
  }
  if (!args_file || !jobs || !parallel || !slurm) {
    err << "error: writing the jobs in " << dir << " failed\n";
    return kExitError;
  }
  out << "compare: " << total << " jobs (" << study.reference_jobs.size() << " reference runs) in "
      << (dir / "jobs.txt").string() << "\n  run them with " << (dir / "run_parallel.sh").string()
      << " (GNU parallel) or sbatch " << (dir / "slurm.sh").string()
      << ",\n  then: saltus compare --collect " << dir.string() << '\n';
  return kExitOk;
}

// `--run-job DIR K`: job K of the emitted study in a child process (time limit, crashes), its
// row to DIR/runs/K.txt and its positions to DIR/runs/K.csv (reference runs:
// DIR/references/<scene>.csv).
int RunEmittedJob(const std::filesystem::path& dir_arg, const std::string& index, std::ostream& err,
                  const CompareHooks& hooks) {
  const std::filesystem::path dir = std::filesystem::absolute(dir_arg);
  const CurrentPathGuard guard;
  const Study study = ReloadStudy(dir);
  const std::size_t refs = study.reference_jobs.size();
  std::size_t k = 0;
  const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), k);
  if (index.empty() || ec != std::errc() || end != index.data() + index.size() ||
      k >= refs + study.jobs.size()) {
    throw std::invalid_argument("--run-job: job '" + index + "' is not in 0.." +
                                std::to_string(refs + study.jobs.size() - 1));
  }
  Job job = k < refs ? study.reference_jobs[k] : study.jobs[k - refs];
  job.emitted = k >= refs;
  const std::filesystem::path positions =
      job.is_reference ? dir / "references" / (study.scenes[job.scene].scene.name + ".csv")
                       : RunPositionsFile(dir, k);
  ResultRow result;
  RunPool(
      study.scenes, {job}, 1, (job.is_reference ? 5 : 1) * study.o.time_limit,
      job.is_reference ? 1 : study.o.repeat, [&](std::size_t) { return positions; }, hooks,
      [&](std::size_t, const ResultRow& row) { result = row; });
  std::ofstream file(RunRowFile(dir, k), std::ios::binary | std::ios::trunc);
  file << Serialize(result);
  if (!file.flush()) {
    err << "error: cannot write " << RunRowFile(dir, k) << '\n';
    return kExitError;
  }
  return kExitOk;
}

ResultRow ReadRunRow(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return {{"status", "missing"}, {"reason", "no result: the job did not run or did not finish"}};
  }
  std::stringstream text;
  text << in.rdbuf();
  return Deserialize(text.str());
}

// The error of an emitted run: its positions at the reference times replayed through a
// ReferenceRecorder, as a local run records them.
std::string EmittedError(const SceneEntry& entry, const std::filesystem::path& positions) {
  if (!entry.reference) return "";
  const auto system = BuildSceneSystem(entry.scene).system;
  const ReferenceSolution run = LoadReferenceFile(positions.string(), *system, entry.scene.t_end);
  ReferenceRecorder recorder(*entry.reference);
  Eigen::VectorXd q(system->nq()), v = Eigen::VectorXd::Zero(system->nv());
  for (std::size_t i = 0; i < run.times.size(); ++i) {
    for (std::size_t c = 0; c < run.columns.size(); ++c) {
      q[run.columns[c]] = run.values(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c));
    }
    recorder.OnOutput(run.times[i], q, v);
  }
  return Format(recorder.Error());
}

int Collect(const std::filesystem::path& dir_arg, std::ostream& out, std::ostream& err) {
  const Clock::time_point start = Clock::now();
  const std::filesystem::path dir = std::filesystem::absolute(dir_arg);
  const CurrentPathGuard guard;
  Study study = ReloadStudy(dir);
  const std::size_t refs = study.reference_jobs.size();
  for (std::size_t k = 0; k < refs; ++k) {
    const Job& job = study.reference_jobs[k];
    SceneEntry& entry = study.scenes[job.scene];
    TakeReference(job, ReadRunRow(RunRowFile(dir, k)),
                  dir / "references" / (entry.scene.name + ".csv"), &entry, err);
  }
  std::ofstream results(dir / "results.csv", std::ios::binary | std::ios::trunc);
  WriteHeader(results);
  std::map<std::string, int> by_status;
  ErrorOverRtolSummary summary;
  for (std::size_t i = 0; i < study.jobs.size(); ++i) {
    const Job& job = study.jobs[i];
    ResultRow row = ReadRunRow(RunRowFile(dir, refs + i));
    if (row["status"] == "ok")
      row["error"] = EmittedError(study.scenes[job.scene], RunPositionsFile(dir, refs + i));
    LabelRow(study, job, &row);
    WriteResultRow(row, results);
    ++by_status[row["status"]];
    summary.Add(row);
  }
  if (!results.flush()) {
    err << "error: writing " << (dir / "results.csv") << " failed\n";
    return kExitError;
  }
  results.close();
  std::ifstream command_file(dir / "study.command");
  std::string study_command;
  std::getline(command_file, study_command);
  const std::vector<std::string> collect = {"--collect", dir.string()};
  WriteStudyProvenance(study_command, study, dir, CompareCommandLine(collect));
  return Finish(study, dir, study.jobs.size(), by_status, summary, start, out, err);
}

}  // namespace

int RunCompare(std::span<const std::string> args, std::ostream& out, std::ostream& err,
               const CompareHooks& hooks) {
  const Clock::time_point study_start = Clock::now();
  if (!args.empty() && args[0] == "--run-job") {
    if (args.size() != 3) throw std::invalid_argument("usage: saltus compare --run-job DIR K");
    return RunEmittedJob(args[1], args[2], err, hooks);
  }
  if (!args.empty() && args[0] == "--collect") {
    if (args.size() != 2) throw std::invalid_argument("usage: saltus compare --collect DIR");
    return Collect(args[1], out, err);
  }
  // ---- 1. Bad input, before any run. ----
  Study study = PrepareStudy(args);
  if (study.o.emit_dir) return EmitJobs(args, study, out, err);

  // ---- 2. Output directory. ----
  const std::filesystem::path dir = study.o.out_dir;
  const std::filesystem::path reference_dir = dir / "references";
  std::error_code ec;
  std::filesystem::create_directories(reference_dir, ec);
  if (ec) {
    err << "error: cannot create " << reference_dir << ": " << ec.message() << '\n';
    return kExitError;
  }
  WriteStudyProvenance(CompareCommandLine(args), study, dir);

  // ---- 3. Reference runs for scenes without a file or closed form. ----
  const auto reference_csv = [&](const Job& job) {
    return reference_dir / (study.scenes[job.scene].scene.name + ".csv");
  };
  if (!study.reference_jobs.empty()) {
    err << "compare: " << study.reference_jobs.size() << " reference run(s)\n";
    RunPool(
        study.scenes, study.reference_jobs, study.parallel, 5 * study.o.time_limit, 1,
        [&](std::size_t k) { return reference_csv(study.reference_jobs[k]); }, hooks,
        [&](std::size_t k, const ResultRow& row) {
          const Job& job = study.reference_jobs[k];
          TakeReference(job, row, reference_csv(job), &study.scenes[job.scene], err);
        });
  }
  WriteStaticReferences(study.scenes, reference_dir);

  // ---- 4. The study. ----
  std::ofstream results(dir / "results.csv", std::ios::binary | std::ios::trunc);
  if (!results) {
    err << "error: cannot write " << (dir / "results.csv") << '\n';
    return kExitError;
  }
  WriteHeader(results);
  err << "compare: " << study.jobs.size() << " runs over " << study.scenes.size() << " scene(s), "
      << study.parallel << " at a time, time limit " << Short(study.o.time_limit) << " s\n";
  std::size_t finished = 0;
  std::map<std::string, int> by_status;
  ErrorOverRtolSummary summary;
  RunPool(
      study.scenes, study.jobs, study.parallel, study.o.time_limit, study.o.repeat,
      [](std::size_t) { return std::filesystem::path(); }, hooks,
      [&](std::size_t k, ResultRow row) {
        LabelRow(study, study.jobs[k], &row);
        WriteResultRow(row, results);
        results.flush();
        ++by_status[row["status"]];
        summary.Add(row);
        PrintRow(row, ++finished, study.jobs.size(), err);
      });
  if (!results) {
    err << "error: writing " << (dir / "results.csv") << " failed\n";
    return kExitError;
  }
  results.close();

  // ---- 5. Plots and report. ----
  return Finish(study, dir, study.jobs.size(), by_status, summary, study_start, out, err);
}

}  // namespace saltus::tools
