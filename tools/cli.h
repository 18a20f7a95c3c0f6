// The `saltus` command line, as a library function so that tests can call it directly.
//
//   saltus run SCENE.yaml [--integrator NAME] [--formulation index1|index2|index3|ggl]
//                         [--rtol R] [--atol A] [--t-end T] [--out DIR] [--hdf5] [--vtk]
//   saltus compare --scenes FILES… --integrators NAMES… --rtol R1,R2,… --out DIR (docs/compare.md)
//   saltus generate NAME --n N [--seed S] [--out FILE]   (tools/generators.h)
//   saltus list
//   saltus help
//
// `run` loads and validates the scene, applies the command-line overrides, builds the system
// and sets up the simulation (all before touching DIR, default out/<scene name>), then runs to
// t_end writing DIR/trajectory.csv, DIR/events.csv and DIR/summary.json (tools/writers.h), and
// DIR/last_state.json when the run fails (--hdf5: DIR/results.h5, --vtk: DIR/vtk.pvd, see
// docs/output-formats.md). A one-line progress bar goes to stderr when it is a
// terminal and the run lasts more than about a second; a short summary goes to stdout.
// `list` prints every integrator of integrators::IntegratorTable() with its description and
// formulations.
#pragma once

#include <chrono>
#include <ostream>
#include <span>
#include <string>

#include "events/simulation.h"

namespace saltus::tools {

// Exit codes of RunCli and of the `saltus` executable.
constexpr int kExitOk = 0;
constexpr int kExitError = 1;       // output could not be written, or an internal error
constexpr int kExitBadInput = 2;    // bad scene or command line; nothing was written
constexpr int kExitRunFailure = 3;  // the simulation stopped before t_end; files were written

// `args` excludes the program name. `stderr_is_terminal` enables the progress bar on `err`.
int RunCli(std::span<const std::string> args, std::ostream& out, std::ostream& err,
           bool stderr_is_terminal = false);

// The one-line progress bar of `saltus run` on stderr: redrawn in place with '\r' at accepted
// steps and at events, at most once per `period`, and only once the run has lasted `delay` (so
// short runs print nothing); it shows the simulated time, the events, the wall time and the time
// left at the average rate so far.
class ProgressBar : public events::Observer {
 public:
  ProgressBar(std::ostream& err, bool enabled, double t0, double t_end,
              std::chrono::duration<double> delay = std::chrono::seconds(1),
              std::chrono::duration<double> period = std::chrono::milliseconds(100));
  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  void OnEvent(const events::Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
               const Eigen::VectorXd& v_plus) override;
  // Erases the bar, if drawn, so that later messages start on a clean line.
  void Finish();
  // Redraws for simulated time t (when enabled, past the delay and the period).
  void Draw(double t);
  bool drawn() const { return drawn_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& err_;
  bool enabled_;
  double t0_, t_end_;
  std::chrono::duration<double> delay_, period_;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;
  long events_ = 0;
};

}  // namespace saltus::tools
