// Helpers shared by the Google Benchmark programs that run the event loop (run_benchmark.cc,
// friction_benchmark.cc, island_event_cost.cc).
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "events/simulation.h"

namespace saltus::bench {

// Events of every kind counted so far.
inline long TotalEvents(const events::SimulationStats& stats) {
  long n = 0;
  for (long k : stats.events) n += k;
  return n;
}

// A run that did not finish is reported as the benchmark's error (not timed); returns true
// then, so that the caller leaves its loop.
inline bool SkipUnlessFinished(benchmark::State& state, const events::RunResult& result) {
  if (result.status == events::RunStatus::kFinished) return false;
  state.SkipWithError((std::string(events::ToString(result.status)) +
                       " at t = " + std::to_string(result.t) + ": " + result.message)
                          .c_str());
  return true;
}

}  // namespace saltus::bench
