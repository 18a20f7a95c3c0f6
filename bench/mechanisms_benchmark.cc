// Google Benchmark programs for the smooth planar benchmark mechanisms (issue 3, Sec. 8):
//   BM_Andrews        examples/sets/scenes/andrews.yaml: Andrews' squeezing mechanism (Hairer &
//                     Wanner VII.7; Test Set for IVP Solvers), 7 bodies, 10 revolutes, to
//                     t = 0.03 s with the scene's options (DOPRI5, index 1, rtol 1e-10,
//                     atol 1e-12)
//   BM_DoubleFourBar  examples/sets/scenes/double_four_bar.yaml: the IFToMM double four-bar
//                     (5 bars, 7 revolutes, redundant) with the scene's options, to t_end =
//                     state.range(0) / 1000 s: 700 ms (before its first singular configuration
//                     at t ≈ 0.7136 s), 2 s, and the IFToMM 20 s (ten passages through it)
// The scene is loaded and the system and the events::Simulation built once per benchmark; each
// iteration resets the state (Simulation::SetState) and runs to t_end writing nothing
// (output_step = 0, no observer). Counters per run: accepted steps, rejected steps and
// right-hand-side evaluations (KKT solves). A run that does not finish is reported as an error.
//
// Run: build-bench/bench/mechanisms_benchmark [--benchmark_repetitions=N ...].
// Scenes are looked up under $SALTUS_SOURCE_DIR, else the source tree this was built from.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "events/simulation.h"
#include "tools/scene.h"

namespace saltus::bench {
namespace {

std::string ScenePath(const std::string& file) {
  const char* dir = std::getenv("SALTUS_SOURCE_DIR");
  return std::string(dir != nullptr ? dir : SALTUS_SOURCE_DIR) + "/examples/sets/scenes/" + file;
}

// t_end ≤ 0 runs to the scene's t_end.
void RunMechanism(benchmark::State& state, const std::string& file, double t_end) {
  tools::Scene scene;
  tools::SceneSystem built;
  try {
    scene = tools::LoadSceneFile(ScenePath(file));
    scene.options.output_step = 0.0;
    built = tools::BuildSceneSystem(scene);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (t_end <= 0) t_end = scene.t_end;
  events::Simulation simulation(built.system, scene.options);

  long steps = 0, rejected = 0, rhs = 0;
  for (auto _ : state) {
    const integrators::IntegratorStats before = simulation.stats().integrator;
    simulation.SetState(0.0, built.q0, built.v0);
    const events::RunResult result = simulation.AdvanceTo(t_end);
    if (result.status != events::RunStatus::kFinished) {
      state.SkipWithError((std::string(events::ToString(result.status)) +
                           " at t = " + std::to_string(result.t) + ": " + result.message)
                              .c_str());
      break;
    }
    const integrators::IntegratorStats& after = simulation.stats().integrator;
    steps += after.accepted_steps - before.accepted_steps;
    rejected += after.rejected_steps - before.rejected_steps;
    rhs += after.rhs_evaluations - before.rhs_evaluations;
  }
  const double runs = static_cast<double>(state.iterations());
  if (runs > 0) {
    state.counters["steps"] = static_cast<double>(steps) / runs;
    state.counters["rejected"] = static_cast<double>(rejected) / runs;
    state.counters["rhs"] = static_cast<double>(rhs) / runs;
  }
}

void BM_Andrews(benchmark::State& state) { RunMechanism(state, "andrews.yaml", 0.0); }
BENCHMARK(BM_Andrews)->Unit(benchmark::kMillisecond);

void BM_DoubleFourBar(benchmark::State& state) {
  RunMechanism(state, "double_four_bar.yaml", static_cast<double>(state.range(0)) / 1000.0);
}
BENCHMARK(BM_DoubleFourBar)->Arg(700)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace saltus::bench

BENCHMARK_MAIN();
