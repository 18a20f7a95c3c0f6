// The C++ half of the Python-vs-C++ speed comparison (issue 9, item 5; bench/python_vs_cpp.py
// runs both halves and prints the ratios). A Google Benchmark program timing whole runs through
// the public facade saltus/saltus.h, exactly what the Python script does through the module:
//
//   model built once from the scene file; per iteration
//   Simulation sim(model, model.default_options()); Trajectory tr = sim.Run(model.default_t_end())
//
// For every scene file given on the command line (after the Google Benchmark flags) it registers
//   BM_FacadeRun/<scene>            the run as above
//   BM_FacadeRunZeroForce/<scene>   the same with a C++ force callback returning zeros (the
//                                   baseline of the Python force-callable overhead)
// A run that does not finish is reported as an error, not timed.
//
// Run: build/bench/python_vs_cpp examples/bouncing_ball.yaml [--benchmark_format=json ...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "saltus/saltus.h"

namespace {

void RunScene(benchmark::State& state, const std::string& path, bool zero_force) {
  try {
    const saltus::Model model = saltus::Model::FromSceneFile(path);
    const double t_end = model.default_t_end();
    long rows = 0;
    for (auto _ : state) {
      saltus::Simulation sim(model, model.default_options());
      if (zero_force) {
        sim.SetForceCallback([](double, const Eigen::VectorXd&, const Eigen::VectorXd& v,
                                Eigen::VectorXd* f) { f->setZero(v.size()); });
      }
      saltus::RunResult result;
      const saltus::Trajectory trajectory = sim.Run(t_end, &result);
      if (!result.ok()) {
        state.SkipWithError(
            ("run stopped at t = " + std::to_string(result.t) + ": " + result.message).c_str());
        break;
      }
      rows = static_cast<long>(trajectory.t.size());
      benchmark::DoNotOptimize(trajectory.t.data());
    }
    state.counters["rows"] = static_cast<double>(rows);
  } catch (const saltus::Error& e) {
    state.SkipWithError(e.what());
  }
}

std::string Stem(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // removes the --benchmark_* flags
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SCENE.yaml... [--benchmark_* flags]\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    benchmark::RegisterBenchmark(("BM_FacadeRun/" + Stem(path)).c_str(), [path](
                                                                             benchmark::State& s) {
      RunScene(s, path, false);
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_FacadeRunZeroForce/" + Stem(path)).c_str(),
                                 [path](benchmark::State& s) { RunScene(s, path, true); })
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
