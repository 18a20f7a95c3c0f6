// Google Benchmark programs for whole event-driven runs (STYLE.md item 10):
//   BM_Run_BouncingBall   examples/bouncing_ball.yaml: one disk, e = 0.9, through the
//                         accumulation of impacts (t∞ ≈ 8.14 s) to rest, T = 10 s
//   BM_Run_BallStack      examples/ball_stack.yaml: three disks in a column, e = 0.5, T = 1 s
// The scene is loaded and the system and the events::Simulation are built once per benchmark;
// each iteration resets the state (Simulation::SetState) and runs to t_end with the scene's
// options, writing nothing (output_step = 0, no observer). Items processed are events
// (impacts, take-offs, contact closings); the counters give events and accepted steps per run.
// A run that does not finish is reported as an error, not timed.
//
// Run: build-bench/bench/saltus_bench [--benchmark_repetitions=N ...] (docs/benchmarks.md).
// Scenes are looked up under $SALTUS_SOURCE_DIR, else the source tree this was built from.
#include <benchmark/benchmark.h>

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

void RunScene(benchmark::State& state, const std::string& file) {
  tools::Scene scene;
  std::shared_ptr<engine::PlanarMultibodySystem> system;
  try {
    scene = tools::LoadSceneFile(ExamplePath(file));
    scene.options.output_step = 0.0;
    system = tools::BuildSystem(scene);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const Eigen::VectorXd q0 = system->model().InitialPositions();
  const Eigen::VectorXd v0 = system->model().InitialVelocities();
  events::Simulation simulation(system, scene.options);

  long events_total = 0, steps_total = 0;
  for (auto _ : state) {
    const long events_before = TotalEvents(simulation.stats());
    const long steps_before = simulation.stats().integrator.accepted_steps;
    simulation.SetState(0.0, q0, v0);
    const events::RunResult result = simulation.AdvanceTo(scene.t_end);
    if (SkipUnlessFinished(state, result)) break;
    events_total += TotalEvents(simulation.stats()) - events_before;
    steps_total += simulation.stats().integrator.accepted_steps - steps_before;
  }
  state.SetItemsProcessed(events_total);
  const double runs = static_cast<double>(state.iterations());
  if (runs > 0) {
    state.counters["events"] = static_cast<double>(events_total) / runs;
    state.counters["steps"] = static_cast<double>(steps_total) / runs;
  }
}

void BM_Run_BouncingBall(benchmark::State& state) { RunScene(state, "bouncing_ball.yaml"); }
BENCHMARK(BM_Run_BouncingBall)->Unit(benchmark::kMillisecond);

void BM_Run_BallStack(benchmark::State& state) { RunScene(state, "ball_stack.yaml"); }
BENCHMARK(BM_Run_BallStack)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace saltus::bench

BENCHMARK_MAIN();
