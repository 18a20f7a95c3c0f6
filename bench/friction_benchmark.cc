// Google Benchmark programs for Coulomb friction in the plane (issue 17 §9), each beside its
// frictionless equivalent (the same scene with μ = 0 on every contact):
//   BM_Slide_SlidingBlock[_Frictionless]  examples/friction/sliding_block.yaml over its sliding
//                                         phase (0 … 0.6 s: both corners slide; frictionless:
//                                         both corners closed, no friction force)
//   BM_Run_RollingDisk[_Frictionless]     examples/friction/rolling_disk.yaml, 1.5 s (slip, then
//                                         rolling)
//   BM_Run_Woodpecker                     examples/friction/woodpecker.yaml, 1 s
//   BM_Step_SlidingBlock[_Frictionless]   the sliding phase (0 … 0.6 s) with h_max = 1 ms
//   BM_Step_RollingDisk[_Frictionless]    the slip phase (0 … 0.5 s; slip ends at 0.5097 s) with
//                                         h_max = 1 ms
// The BM_Slide/BM_Run programs take 5-11 DOPRI5 steps per run, so their time per step is mostly
// the per-run work (the state reset and the contact classification at t = 0, an LCP with friction
// rows in the frictional run); the BM_Step programs cap the step so that both runs take the same
// ~500-600 steps of one smooth phase, and their time per step is the cost of a smooth step.
// The scene is loaded and the simulation built once; each iteration resets the state and runs,
// writing nothing. Counters: accepted steps, right-hand-side evaluations (index-1 solves) and
// events per run, and the wall time per step and per evaluation (ns), which is what the
// frictional smooth phase changes: one non-symmetric solve (H ≠ G) instead of a symmetric one.
//
// Run: build-bench/bench/friction_benchmark [--benchmark_repetitions=N] (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench/event_benchmark_support.h"
#include "events/simulation.h"
#include "tools/scene.h"

namespace saltus::bench {
namespace {

std::string ExamplePath(const std::string& file) {
  const char* dir = std::getenv("SALTUS_SOURCE_DIR");
  return std::string(dir != nullptr ? dir : SALTUS_SOURCE_DIR) + "/examples/" + file;
}

// h_max > 0 caps the integrator's step (0: the scene's own).
void RunScene(benchmark::State& state, const std::string& file, double t_end, bool frictionless,
              double h_max = 0.0) {
  tools::Scene scene;
  tools::SceneSystem built;
  try {
    scene = tools::LoadSceneFile(ExamplePath(file));
    scene.options.output_step = 0.0;
    if (h_max > 0.0) scene.options.integrator_options.h_max = h_max;
    if (frictionless) {
      for (auto& c : scene.contacts) c.friction = 0.0;
    }
    built = tools::BuildSceneSystem(scene);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  events::Simulation simulation(built.system, scene.options);
  long events_total = 0, steps_total = 0, rhs_total = 0;
  double seconds = 0;
  for (auto _ : state) {
    const events::SimulationStats before = simulation.stats();
    const auto start = std::chrono::steady_clock::now();
    simulation.SetState(0.0, built.q0, built.v0);
    const events::RunResult result = simulation.AdvanceTo(t_end);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (SkipUnlessFinished(state, result)) break;
    const events::SimulationStats& after = simulation.stats();
    events_total += TotalEvents(after) - TotalEvents(before);
    steps_total += after.integrator.accepted_steps - before.integrator.accepted_steps;
    rhs_total += after.integrator.rhs_evaluations - before.integrator.rhs_evaluations;
  }
  state.SetItemsProcessed(steps_total);
  const double runs = static_cast<double>(state.iterations());
  if (runs > 0 && steps_total > 0) {
    state.counters["events"] = static_cast<double>(events_total) / runs;
    state.counters["steps"] = static_cast<double>(steps_total) / runs;
    state.counters["rhs"] = static_cast<double>(rhs_total) / runs;
    state.counters["ns_per_step"] = 1e9 * seconds / static_cast<double>(steps_total);
    state.counters["ns_per_rhs"] = 1e9 * seconds / static_cast<double>(rhs_total);
  }
}

void BM_Slide_SlidingBlock(benchmark::State& s) {
  RunScene(s, "friction/sliding_block.yaml", 0.6, false);
}
void BM_Slide_SlidingBlock_Frictionless(benchmark::State& s) {
  RunScene(s, "friction/sliding_block.yaml", 0.6, true);
}
void BM_Run_RollingDisk(benchmark::State& s) {
  RunScene(s, "friction/rolling_disk.yaml", 1.5, false);
}
void BM_Run_RollingDisk_Frictionless(benchmark::State& s) {
  RunScene(s, "friction/rolling_disk.yaml", 1.5, true);
}
void BM_Run_Woodpecker(benchmark::State& s) { RunScene(s, "friction/woodpecker.yaml", 1.0, false); }
void BM_Step_SlidingBlock(benchmark::State& s) {
  RunScene(s, "friction/sliding_block.yaml", 0.6, false, 1e-3);
}
void BM_Step_SlidingBlock_Frictionless(benchmark::State& s) {
  RunScene(s, "friction/sliding_block.yaml", 0.6, true, 1e-3);
}
void BM_Step_RollingDisk(benchmark::State& s) {
  RunScene(s, "friction/rolling_disk.yaml", 0.5, false, 1e-3);
}
void BM_Step_RollingDisk_Frictionless(benchmark::State& s) {
  RunScene(s, "friction/rolling_disk.yaml", 0.5, true, 1e-3);
}
BENCHMARK(BM_Slide_SlidingBlock)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Slide_SlidingBlock_Frictionless)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Run_RollingDisk)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Run_RollingDisk_Frictionless)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Run_Woodpecker)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Step_SlidingBlock)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Step_SlidingBlock_Frictionless)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Step_RollingDisk)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Step_RollingDisk_Frictionless)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace saltus::bench

BENCHMARK_MAIN();
