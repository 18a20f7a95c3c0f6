// Google Benchmark: the cost of one event of the event loop against the number of settled
// spheres outside the event's island and against the size of the event's own island (issue 23
// §5: "an event in a settled pile of N spheres costs O(island), not O(N)").
//
// Scenes (spatial, generated here as YAML, read by tools::ParseScene as `saltus run` reads a
// file): spheres of radius r = 0.05 m, mass 0.1 kg, on the floor z = 0, frictionless, the
// simulation keys of a generated pile (tools/generators_contact.h: DOPRI5 index 1, rtol 1e-6,
// atol 1e-8, h_max 0.01, v_e = 0.01 m/s, every pair of shapes a contact row) but e = 0.8, so that
// the ball keeps bouncing. A settled layer is a square of k × k spheres resting on the floor
// (centre z = r) with neighbouring centres exactly 2r apart: every floor row and every
// neighbour row is closed at g = 0 (the layer is one island; the neighbour rows carry no load,
// so without walls the layer is in equilibrium).
//   BM_Event_BallBesideLayer/N   a ball dropped from 0.1 m onto the floor at the origin beside a
//                            settled layer of N spheres whose nearest sphere is 0.25 m away: the
//                            ball's island is the ball alone, the N spheres are elsewhere.
//   BM_Event_BallOnLayer/M    a ball dropped from 0.1 m onto the centre sphere of a settled
//                            layer of M = k² spheres (k odd): the island of every impact is the
//                            ball and the whole layer (M + 1 bodies, about 3M closed rows).
// The ball's flight time between impacts depends only on e and the drop height (the layer does
// not move), so both programs time the same sequence of events: SetState at t = 0 and the run
// to t_start = 0.1 s (before the first impact at 0.1428 s: sqrt(2 · 0.1 / g)) are outside the
// timing; AdvanceTo(t_end = 1.0 s) is timed and covers the first 6 impacts. Items processed are
// events, so items_per_second is the inverse of the cost of one event including the smooth steps
// between events (all bodies are integrated at every step); the counters give the events, steps
// and the time in the impact and contact problems (lcp_us) per run, and the cost per event and
// per step. bench/island_cost_fit.py fits the log-log slopes; figures in docs/benchmarks.md.
//
// Run: build/bench/island_event_cost [--benchmark_format=json] (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include "bench/event_benchmark_support.h"
#include "events/simulation.h"
#include "tools/scene.h"

namespace saltus::bench {
namespace {

constexpr double kRadius = 0.05;
constexpr double kDrop = 0.1;  // height of the ball's lowest point above what it lands on (m)
constexpr double kStart = 0.1, kEnd = 1.0;

// Appends a settled k-column layer of n spheres (rows of k, the last one possibly shorter) with
// its first centre at (x0, y0, r), centres 2r apart, named s0, s1, ...
void AddLayer(int n, int k, double x0, double y0, std::ostringstream* bodies,
              std::ostringstream* shapes) {
  for (int i = 0; i < n; ++i) {
    const double x = x0 + 2.0 * kRadius * (i % k), y = y0 + 2.0 * kRadius * (i / k);
    *bodies << "  - {name: s" << i << ", mass: 0.1, inertia: 1.0e-4, position: [" << x << ", " << y
            << ", " << kRadius << "]}\n";
    *shapes << "  - {name: shape_s" << i << ", body: s" << i
            << ", type: sphere, radius: " << kRadius << "}\n";
  }
}

// The scene: a settled layer of n spheres in rows of k starting at (x0, y0), and the ball above
// (bx, 0) with its lowest point kDrop above `landing` (the floor: 0, a layer sphere: 2r).
std::string SceneYaml(int n, int k, double x0, double y0, double bx, double landing) {
  std::ostringstream bodies, shapes;
  bodies.precision(17);
  shapes.precision(17);
  bodies << "bodies:\n  - {name: ball, mass: 0.1, inertia: 1.0e-4, position: [" << bx << ", 0, "
         << landing + kDrop + kRadius << "]}\n";
  shapes << "shapes:\n  - {name: floor, body: ground, type: plane, normal: [0, 0, 1], offset: "
            "0}\n  - {name: shape_ball, body: ball, type: sphere, radius: "
         << kRadius << "}\n";
  AddLayer(n, k, x0, y0, &bodies, &shapes);
  return "scene: island_event_cost\ndimension: 3\ngravity: [0, 0, -9.81]\n" + bodies.str() +
         shapes.str() +
         "simulation:\n  t_end: 1\n  integrator: dopri5\n  formulation: index1\n"
         "  rtol: 1.0e-6\n  atol: 1.0e-8\n  output_step: 0\n  h_max: 0.01\n"
         "  restitution: 0.8\n  restitution_threshold: 0.01\n";
}

void RunEvents(benchmark::State& state, const std::string& yaml) {
  tools::Scene scene;
  tools::SceneSystem built;
  try {
    scene = tools::ParseScene(yaml, "island_event_cost");
    built = tools::BuildSceneSystem(scene);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  events::Simulation simulation(built.system, scene.options);
  long events_total = 0, steps_total = 0;
  double seconds = 0, lcp_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    simulation.SetState(0.0, built.q0, built.v0);
    events::RunResult result = simulation.AdvanceTo(kStart);
    const events::SimulationStats before = simulation.stats();
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    if (result.status == events::RunStatus::kFinished) result = simulation.AdvanceTo(kEnd);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (SkipUnlessFinished(state, result)) break;
    const events::SimulationStats& after = simulation.stats();
    events_total += TotalEvents(after) - TotalEvents(before);
    steps_total += after.integrator.accepted_steps - before.integrator.accepted_steps;
    lcp_seconds += after.lcp_seconds - before.lcp_seconds;
  }
  state.SetItemsProcessed(events_total);
  const double runs = static_cast<double>(state.iterations());
  if (runs > 0 && events_total > 0 && steps_total > 0) {
    state.counters["events"] = static_cast<double>(events_total) / runs;
    state.counters["steps"] = static_cast<double>(steps_total) / runs;
    state.counters["us_per_event"] = 1e6 * seconds / static_cast<double>(events_total);
    state.counters["us_per_step"] = 1e6 * seconds / static_cast<double>(steps_total);
    state.counters["lcp_us"] = 1e6 * lcp_seconds / runs;
  }
}

// N settled spheres 0.25 m beyond the ball (nearest surfaces 0.15 m apart), in rows of
// k = ceil(sqrt(N)).
void BM_Event_BallBesideLayer(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int k = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
  RunEvents(state, SceneYaml(n, k, 0.25, -kRadius * (k - 1), 0.0, 0.0));
}
BENCHMARK(BM_Event_BallBesideLayer)
    ->Arg(0)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond);

// The ball above the centre sphere of a k × k layer centred at the origin (k = state.range(0)).
void BM_Event_BallOnLayer(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const double corner = -kRadius * (k - 1);
  RunEvents(state, SceneYaml(k * k, k, corner, corner, 0.0, 2.0 * kRadius));
}
BENCHMARK(BM_Event_BallOnLayer)
    ->Arg(1)
    ->Arg(3)
    ->Arg(5)
    ->Arg(9)
    ->Arg(17)
    ->Arg(31)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace saltus::bench

BENCHMARK_MAIN();
