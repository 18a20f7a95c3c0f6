// Time per LCP solve against the number of rows m on pile-like problems (issue 4: the impact
// and contact LCPs of a settled sphere pile are one component of thousands of rows): dense
// lexicographic Lemke (contact::SolveLcp) against the exact sparse active-set path
// (contact::SolveLcpSparse, contact/sparse_lcp.h). The problems are those of the tests
// (tests/contact/pile_lcp.h): spheres on a nx × ny × nz lattice, axis contacts plus face-diagonal
// contacts with probability p (rank-deficient W), b = G u + c. Counters: rows, dofs (3N), and for
// the sparse path iterations = PGS sweeps + active-set solves. Every solve is checked (ok, else the
// benchmark reports an error). BM_LemkeLarge is one Lemke solve at ~3,000 rows (about a minute);
// --benchmark_filter='BM_Sparse|BM_Lemke/' leaves it out. BM_SparseNearby/<config>/<warm>: the
// problem after b moved by 1e-3 of ‖b‖∞ (an event elsewhere in a settled pile), cold (0) or
// warm-started from the solution of the unmoved problem (1, contact::LcpWarmStart's use).
#include <benchmark/benchmark.h>

#include <array>
#include <random>

#include "contact/complementarity.h"
#include "contact/sparse_lcp.h"
#include "tests/contact/pile_lcp.h"

namespace {

using saltus::contact::LcpOptions;
using saltus::contact::LcpResult;
using saltus::contact::testing::MakePileLcp;
using saltus::contact::testing::PileLcp;

struct Config {
  int nx, ny, nz;
  double p;
};
// Chosen to give ≈ 160, 325, 576, 931, 1,408, 3,000 and 4,250 rows (the sizes measured with
// Lemke in the previous session, and a settled pile of N = 1000), then 10 to 80 rows.
constexpr std::array<Config, 11> kConfigs = {{{4, 4, 3, 0.27},
                                              {5, 5, 4, 0.18},
                                              {6, 6, 5, 0.13},
                                              {7, 7, 6, 0.105},
                                              {8, 8, 7, 0.087},
                                              {10, 10, 9, 0.11},
                                              {10, 10, 10, 0.3},
                                              // Small components, for the crossover.
                                              {2, 2, 1, 0.5},
                                              {2, 2, 2, 0.5},
                                              {3, 3, 2, 0.3},
                                              {3, 3, 3, 0.2}}};

const PileLcp& Problem(std::size_t i) {
  static std::array<PileLcp, kConfigs.size()> cache;
  static std::array<bool, kConfigs.size()> made{};
  if (!made[i]) {
    const Config& c = kConfigs[i];
    cache[i] = MakePileLcp(c.nx, c.ny, c.nz, c.p, 1234u + static_cast<unsigned>(i));
    made[i] = true;
  }
  return cache[i];
}

void Counters(benchmark::State& state, const PileLcp& p, const LcpResult& r) {
  state.counters["rows"] = static_cast<double>(p.b.size());
  state.counters["dofs"] = p.dofs;
  state.counters["iterations"] = r.iterations;
  state.counters["active"] = static_cast<double>((r.z.array() > 0.0).count());
  state.SetLabel(r.message);
}

void BM_Sparse(benchmark::State& state) {
  const PileLcp& p = Problem(static_cast<std::size_t>(state.range(0)));
  LcpOptions options;
  options.fallback = false;
  LcpResult r;
  for (auto _ : state) {
    r = saltus::contact::SolveLcpSparse(p.W, p.b, options);
    benchmark::DoNotOptimize(r.z.data());
  }
  if (!r.ok) state.SkipWithError(r.message.c_str());
  Counters(state, p, r);
}
BENCHMARK(BM_Sparse)->DenseRange(0, kConfigs.size() - 1)->Unit(benchmark::kMillisecond);

void BM_SparseNearby(benchmark::State& state) {
  const PileLcp& p = Problem(static_cast<std::size_t>(state.range(0)));
  const bool warm = state.range(1) != 0;
  LcpOptions options;
  options.fallback = false;
  const LcpResult previous = saltus::contact::SolveLcpSparse(p.W, p.b, options);
  if (!previous.ok) {
    state.SkipWithError(previous.message.c_str());
    return;
  }
  std::mt19937 rng(99u);
  std::normal_distribution<double> normal;
  Eigen::VectorXd b = p.b;
  for (Eigen::Index i = 0; i < b.size(); ++i)
    b[i] += 1e-3 * p.b.lpNorm<Eigen::Infinity>() * normal(rng);
  LcpResult r;
  for (auto _ : state) {
    r = saltus::contact::SolveLcpSparse(p.W, b, options, warm ? &previous.z : nullptr);
    benchmark::DoNotOptimize(r.z.data());
  }
  if (!r.ok) state.SkipWithError(r.message.c_str());
  Counters(state, p, r);
}
BENCHMARK(BM_SparseNearby)->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}})->Unit(benchmark::kMillisecond);

void Lemke(benchmark::State& state) {
  const PileLcp& p = Problem(static_cast<std::size_t>(state.range(0)));
  const Eigen::MatrixXd W = p.W;
  LcpOptions options;
  options.fallback = false;
  options.max_iterations = 1000000;
  LcpResult r;
  for (auto _ : state) {
    r = saltus::contact::SolveLcp(W, p.b, options);
    benchmark::DoNotOptimize(r.z.data());
  }
  if (!r.ok) state.SkipWithError(r.message.c_str());
  Counters(state, p, r);
}
void BM_Lemke(benchmark::State& state) { Lemke(state); }
BENCHMARK(BM_Lemke)->DenseRange(0, 4)->DenseRange(7, 10)->Unit(benchmark::kMillisecond);
void BM_LemkeLarge(benchmark::State& state) { Lemke(state); }
BENCHMARK(BM_LemkeLarge)->Arg(5)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
