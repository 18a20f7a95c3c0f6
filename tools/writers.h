// Result files of a run (documented for users in docs/scene-format.md, section "Output files").
//
//   trajectory.csv  t, then q by MechanicalSystem::PositionName, then v by VelocityName; one row
//                   per output time (Observer::OnOutput) and, unless event rows are off
//                   (EventRows), two rows per event at the event time t*: q with v⁻, then q
//                   with v⁺.
//   events.csv      t,kind,contacts,impulse,energy_before,energy_after; contacts are constraint
//                   row names joined by ';', impulses (N·s, one per row) likewise; energies T + V
//                   (J) at t*⁻ and t*⁺.
//   summary.json    scene, provenance (Saltus version and commit, SHA-256 of the scene file,
//                   command line, host; tools/metadata.h), integrator, formulation, status,
//                   times, step and event counts, constraint violations, wall time
//                   (events::SimulationStats); for moreau_jean a "time_stepping" object (step,
//                   theta, steps, steps with impacts, contact impacts, contact problems, final
//                   active contacts); for spatial
//                   scenes a "topology" object: bodies, joints, components (number and whether
//                   grounded), independent loops with their joint and body names, unconnected
//                   bodies, constraint rows, rank of G, redundant rows, degrees of freedom.
//   last_state.json after a run that stopped early: t, named q and v, closed contacts, the
//                   reason, the provenance; `saltus run --resume` reads it (tools/resume.h).
//
// Every double is printed with %.17g (FormatDouble), so files round-trip exactly and two runs
// of the same scene give byte-identical trajectories and event logs.
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"
#include "engine/topology.h"
#include "events/simulation.h"
#include "timestepping/moreau_jean.h"
#include "tools/hybrid_options.h"
#include "tools/metadata.h"

namespace saltus::tools {

// Whether trajectory.csv has the two rows at each event (`saltus run --event-rows`).
enum class EventRows { kAuto, kOn, kOff };

// kAuto: event rows when a row has at most kAutoEventRowsMaxColumns numbers (nq + nv). A pile of
// N spheres has 13 N numbers per row and tens of events per sphere: at N = 1000 every event
// would add 2 × 13,000 numbers (~0.5 MB of text), so large scenes keep only the output grid.
constexpr int kAutoEventRowsMaxColumns = 500;
bool EventRowsOn(EventRows mode, int nq, int nv);

// Streams trajectory.csv. The header is written on construction.
class TrajectoryWriter : public events::Observer {
 public:
  // rows_at_steps: also write a row at every accepted step (OnStep), for runs without an output
  // grid (SimulationOptions::output_step = 0). rows_at_events: the two rows at each event.
  TrajectoryWriter(const engine::MechanicalSystem& system, std::ostream& out,
                   bool rows_at_steps = false, bool rows_at_events = true);

  // A row at the end of an accepted step, when rows_at_steps.
  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;

  // An output row. A second output row at the same t as the previous output or step row (e.g.
  // the initial state written by the caller and again by the simulation) is skipped.
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // Two rows at e.t: (q, v_minus) then (q, v_plus), when rows_at_events.
  void OnEvent(const events::Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
               const Eigen::VectorXd& v_plus) override;

  long rows() const { return rows_; }

 private:
  void WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  std::ostream& out_;
  int nq_, nv_;
  bool rows_at_steps_;
  bool rows_at_events_;
  long rows_ = 0;
  bool last_was_output_ = false;
  double last_output_t_ = 0;
  std::string line_;  // reused row buffer
};

// Streams events.csv. The header is written on construction. With a hybrid run's report the
// scheme switches' rows (no contacts) give the switch's cause in the `modes` field
// (HybridReport::last_switch_cause, set before the switch is announced).
class EventLogWriter : public events::Observer {
 public:
  EventLogWriter(const engine::MechanicalSystem& system, std::ostream& out,
                 const HybridReport* hybrid = nullptr);
  void OnEvent(const events::Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
               const Eigen::VectorXd& v_plus) override;
  long events() const { return events_; }

 private:
  const engine::MechanicalSystem& system_;
  std::ostream& out_;
  const HybridReport* hybrid_;
  long events_ = 0;
};

// Names of constraint rows joined by ';' (e.g. "ball1_ball2;ball2_ball3").
std::string RowNames(const engine::MechanicalSystem& system, const std::vector<int>& rows);

// What the reports say about the run besides the simulation's own state and statistics.
struct RunInfo {
  std::string scene;
  std::string scene_file;
  double t_end = 0;     // requested
  std::string status;   // events::ToString(RunStatus), or "error" for an exception
  std::string message;  // why the run stopped early; empty when finished
  double t_reached = 0;
  // Spatial scenes: the model's topology at the initial configuration (engine/topology.h),
  // written as summary.json's "topology" object; planar models do not offer one.
  std::optional<engine::TopologyReport> topology;
  Provenance provenance;     // summary.json's "provenance" (tools/metadata.h)
  std::string resumed_from;  // --resume: the saved state's file (summary.json "resumed_from")
  double t_start = 0;        // the run's initial time (the saved state's t when resumed)
};

// What the reports read from a run, whichever scheme ran it (the event loop or Moreau–Jean
// time-stepping); valid while the scheme object lives.
struct RunView {
  const engine::MechanicalSystem& system;
  const events::SimulationOptions& options;
  const events::SimulationStats& stats;
  double t;
  const Eigen::VectorXd& q;
  const Eigen::VectorXd& v;
  const std::vector<int>& closed_rows;  // closed contacts (time-stepping: the last index set)
  double energy;                        // T + V at (t, q, v)
  const timestepping::MoreauJean* time_stepping = nullptr;  // summary.json "time_stepping"
  const HybridReport* hybrid = nullptr;                     // summary.json "hybrid"
};
RunView ViewOf(const events::Simulation& simulation);
// `options`: those of the scene (integrator name, tolerances as given).
RunView ViewOf(const timestepping::MoreauJean& scheme, const events::SimulationOptions& options);

void WriteSummaryJson(const RunInfo& info, const RunView& run, std::ostream& out);
// t, q and v by coordinate name, closed contacts by name, status and message of the failure;
// for a hybrid run its phase (an object "hybrid": phase "event_driven" or "time_stepping",
// recent_events, calm_since, phase_start, next_output, last_output; HybridState).
void WriteLastStateJson(const RunInfo& info, const RunView& run, std::ostream& out,
                        const std::optional<HybridState>& hybrid = std::nullopt);

}  // namespace saltus::tools
