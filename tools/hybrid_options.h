// The options and the report of the hybrid scheme (tools/hybrid_scheme.h): the event loop hands
// the whole system to Moreau–Jean time-stepping when its events come faster than it can serve
// them, and takes it back once the contacts are calm. Plain data, shared by the scene reader
// (simulation.hybrid and the hybrid_* keys, docs/scene-format.md), the facade and the writers.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace saltus::tools {

struct HybridOptions {
  bool enabled = false;
  // The fixed step h of the Moreau–Jean phases (s; scene key simulation.step). 1 ms: the step at
  // which every measured frictionless pile finishes 2 s (docs/time-stepping.md) and at which a
  // resting contact penetrates by at most (1 − θ) h (v_e + h g) ≈ 5 µm before the projection.
  double step = 1e-3;
  // Event loop → time-stepping: more than `events` events (every kind but time events) within
  // `window` s of simulated time, or the Zeno guard (RunStatus::kEventAccumulation). window = 0:
  // events · h, i.e. the events come more often than one per time step on average.
  int events = 10;
  double window = 0.0;
  // Time-stepping → event loop: `calm_time` s of steps (0: 50 h) without an impact (no row of
  // the index set approaching faster than τ₁ and receiving an impulse) and with every row of the
  // last index set at |ġ| ≤ calm_speed (m/s; 0: max(τ₁, v_e) of the event loop, so that it
  // restarts without a bouncing impact: below τ₁ it takes a contact for one at rest, and an
  // approach slower than the restitution threshold v_e is a plastic impact that closes it).
  double calm_time = 0.0;
  double calm_speed = 0.0;

  // The defaults resolved for a step h and the event loop's τ₁.
  double Window() const { return window > 0 ? window : events * step; }
  double CalmTime() const { return calm_time > 0 ? calm_time : 50.0 * step; }
  double CalmSpeed(double tau1, double v_e) const {
    return calm_speed > 0 ? calm_speed : std::max(tau1, v_e);
  }
};

// What a hybrid run reports (summary.json "hybrid").
struct HybridReport {
  HybridOptions options;  // as given (the resolved values are written next to them)
  double window = 0, calm_time = 0, calm_speed = 0;  // resolved
  long to_time_stepping = 0;                         // switches, of which those by the Zeno guard
  long by_accumulation_guard = 0;
  long to_event_driven = 0;
  long refused_switch_backs = 0;  // the event loop refused the state (the run stayed in MJ)
  // Switches to time-stepping because the event loop failed on a contact problem, a projection
  // or the index-1 solve of its closed rows (RunStatus::kLcpFailure, kProjectionFailure,
  // kLinearSolveFailure), and the last such failure's message.
  long after_lcp_failure = 0;
  long after_projection_failure = 0;
  long after_linear_solve_failure = 0;
  std::string last_event_loop_failure;
  // Why the last switch was made ("crowding", "zeno_guard", "lcp_failure",
  // "projection_failure", "linear_solve_failure", "calm"): the `modes` field of the switch's
  // events.csv row.
  std::string_view last_switch_cause;
  double time_stepping_seconds = 0;  // simulated time spent in time-stepping
  // The smallest gap of the contacts within τ₀ right after a switch back (∞: none), and the
  // largest change of T + V across a switch (J; −∞: no switch).
  double smallest_gap_after_switch_back = std::numeric_limits<double>::infinity();
  double largest_energy_change = -std::numeric_limits<double>::infinity();
};

// Where a hybrid run is between its schemes, beyond (t, q, v): the scheme that integrates and the
// counters of its switch criterion (tools/hybrid_scheme.h), so that a run restarted from a saved
// state (the facade's Save/Restore, its restarts on new host forces) goes on in the same phase
// instead of beginning again with the event loop.
struct HybridState {
  bool time_stepping = false;
  std::vector<double> recent_events;  // event loop: the times of the events within the window W
  double calm_since = 0;              // time-stepping: the start of the calm stretch
  double phase_start = 0;             // time-stepping: t_s of the phase's grid t_s + k h
  // The run's output grid: the next grid point and the time of the last output given.
  double next_output = 0;
  double last_output = -std::numeric_limits<double>::infinity();
};

}  // namespace saltus::tools
