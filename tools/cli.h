// The `saltus` command line, as a library function so that tests can call it directly.
//
//   saltus run SCENE [--integrator NAME] [--formulation index1|index2|index3|ggl]
//                    [--rtol R] [--atol A] [--t-end T] [--out DIR] [--hdf5] [--vtk] ...
//   saltus compare [options]            (tools/compare.h, docs/compare.md)
//   saltus generate NAME --n N [--seed S] [--out FILE]   (tools/generators.h)
//   saltus list
//   saltus help [COMMAND] | saltus COMMAND --help | saltus --version
//
// Every command has its own help (`saltus COMMAND --help`, also `saltus help COMMAND`), exit
// code 0; `--version` prints the version and the source commit (tools/build_info.h).
// `run` loads and validates the scene, applies the command-line overrides, builds the system
// and sets up the simulation (all before touching DIR, default out/<scene name>), then runs to
// t_end writing DIR/trajectory.csv, DIR/events.csv and DIR/summary.json (tools/writers.h), and
// DIR/last_state.json when the run fails (--hdf5: DIR/results.h5, --vtk: DIR/vtk.pvd, see
// docs/output-formats.md). Result files of an earlier run that this one does not write are
// removed first. CSV files are written in whole rows and JSON files complete or not at all
// (tools/output_file.h); a failed write stops the run at once. SIGINT and SIGTERM stop the run
// at the next step boundary and the results are written (exit 128 + signal). A formulation not
// given on the command line or in the scene is the integrator's default (tools/scene.h
// DefaultFormulation). A one-line progress bar goes to stderr when it is a terminal and the run
// lasts more than about a second; a short summary goes to stdout.
// `list` prints every integrator of integrators::IntegratorTable() with its description and
// formulations, wrapped to the terminal's width (80 columns when stdout is not a terminal).
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <ostream>
#include <span>
#include <string>

#include "events/simulation.h"

namespace saltus::tools {

// Exit codes of RunCli and of the `saltus` executable (README, "Exit codes").
constexpr int kExitOk = 0;
constexpr int kExitError = 1;         // a result file could not be written (the reason is printed;
                                      // the run stopped there, files end at a whole row), or an
                                      // internal error
constexpr int kExitBadInput = 2;      // bad scene or command line; nothing was written
constexpr int kExitRunFailure = 3;    // the simulation stopped before t_end; files were written,
                                      // with DIR/last_state.json
constexpr int kExitSignalBase = 128;  // + signal number: SIGINT 130, SIGTERM 143 — interrupted;
                                      // files written as for 3, status "interrupted"

// `args` excludes the program name. `stderr_is_terminal` enables the progress bar on `err`.
int RunCli(std::span<const std::string> args, std::ostream& out, std::ostream& err,
           bool stderr_is_terminal = false);

// The time left of a run from its recent pace: with (w, t) the newest sample (wall seconds,
// simulated time) and (w₀, t₀) the newest one at least `window` seconds older (the oldest while
// none is),
//   left = (t_end − t) · (w − w₀) / (t − t₀),
// the simulated time per wall second of the window held for the rest of the run. A window, not
// the whole run's average: runs slow down when contacts multiply (a pile settling: the average
// since the start under-estimated the time left 9×, docs/output-formats.md "Progress").
class TimeLeftEstimator {
 public:
  explicit TimeLeftEstimator(double t_end, double window_seconds = 3.0)
      : t_end_(t_end), window_(window_seconds) {}
  // A sample: `wall` seconds since the start (non-decreasing) at simulated time t.
  void Add(double wall, double t);
  // Seconds left, or NaN while the window holds no progress in t.
  double SecondsLeft() const;

 private:
  double t_end_, window_;
  std::deque<std::pair<double, double>> samples_;  // (wall, t), oldest first
};

// The one-line progress bar of `saltus run` on stderr: redrawn in place with '\r' from accepted
// steps, output times and events, at most once per `period`, and only once the run has lasted
// `delay` (so short runs print nothing). It shows the fraction of [t0, t_end] simulated, the
// simulated time, the events so far, the wall time and the time left from the recent pace
// (TimeLeftEstimator; none before any progress). Disabled (enabled = false), it draws nothing:
// `saltus run` enables it only when stderr is a terminal.
class ProgressBar : public events::Observer {
 public:
  using Clock = std::chrono::steady_clock;
  // `now` replaces the steady clock (tests); empty: Clock::now.
  ProgressBar(std::ostream& err, bool enabled, double t0, double t_end,
              std::chrono::duration<double> delay = std::chrono::milliseconds(400),
              std::chrono::duration<double> period = std::chrono::milliseconds(100),
              std::function<Clock::time_point()> now = {});
  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  void OnEvent(const events::Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
               const Eigen::VectorXd& v_plus) override;
  // Erases the bar, if drawn, so that later messages start on a clean line.
  void Finish();
  bool drawn() const { return drawn_; }

 private:
  void Update(double t);

  std::ostream& err_;
  bool enabled_;
  double t0_, t_end_;
  std::chrono::duration<double> delay_, period_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;
  std::size_t width_ = 0;  // characters of the last line drawn
  long events_ = 0;
  TimeLeftEstimator left_;
};

// "0.4 s", "42 s", "3 min 05 s", "2 h 07 min": a duration for people.
std::string HumanDuration(double seconds);

// `text` (words separated by spaces) for printing from column `indent` on: lines filled to at
// most `width` columns, joined by '\n' and `indent` spaces (a word longer than the room stays
// whole on its own line).
std::string WrapText(const std::string& text, std::size_t width, std::size_t indent);

}  // namespace saltus::tools
