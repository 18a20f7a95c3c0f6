// Google Benchmark: Jacobian strategies of the BDF corrector (integrators/bdf.h) on the chain of
// N mathematical pendulums with an excited suspension point (Arnold, Fuchs & Führer, "Efficient
// corrector iteration for DAE time integration in multibody dynamics", Sec. 4.2.1 and Table 2).
//
//   BM_BdfChain/N/mode   mode 0: system-block Jacobians (K, C, Z, G, M) with reuse
//                        mode 1: coloured grouped differences (eq. 20) of the whole residual,
//                                re-differenced whenever c₀ changes (DASSL's standard strategy)
//                        mode 2: mode 1 + partitioned update (eq. 24) on changes of c₀
//                        mode 3: mode 2 + extended update for the time excitation (eq. 26):
//                                J̄ += D_t (t_new − t_old), D_t = ∂J̄/∂t differenced once per
//                                full difference; a slow Newton iteration tries the update first
//
// Seed regime (Table 2): an approximately linear chain, rods starting 0.01 sin(i + 1) rad off the
// vertical, suspension at (0, 0.2 sin(2π·0.05 t)), RTOL = 1e-4, ATOL = 1e-6, variable order 1–5;
// one iteration integrates 20 s (the seed: 200 s). Counters per run: accepted steps, Newton
// iterations, Jacobian (difference) evaluations, partitioned updates, eq. (26) updates in place
// of a difference, D_t differences, residual evaluations, factorizations, colours.
//
// The chain is the system of tests/integrators/bdf_test.cc (tests/integrators/excited_chain.h:
// N unit masses in Cartesian coordinates, rods of length 1; same settings as
// BdfColouredJacobian.PartitionedUpdateReducesJacobianEvaluations).
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "engine/mechanical_system.h"
#include "integrators/bdf.h"
#include "tests/integrators/excited_chain.h"

namespace saltus::bench {
namespace {

// The seed's regime (Table 2): 0.2 sin(2π·0.05 t), rods 0.01 sin(i + 1) rad off the vertical.
const integrators::testing::ChainParams kSeedChain{0.2, 2 * M_PI * 0.05, 0.01};

void BM_BdfChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int mode = static_cast<int>(state.range(1));
  integrators::testing::ChainSystem system(n, kSeedChain);
  integrators::IntegratorOptions o;
  o.formulation = integrators::Formulation::kStabilizedIndex2;
  o.rtol = 1e-4;
  o.atol = 1e-6;
  integrators::BdfOptions bo;
  bo.order = 5;
  bo.variable_order = true;
  if (mode >= 1) bo.jacobian = integrators::BdfJacobian::kColouredDifferences;
  bo.partitioned_update = mode >= 2;
  bo.excitation_update = mode == 3;
  Eigen::VectorXd q0, v0;
  integrators::testing::ChainStart(n, kSeedChain, &q0, &v0);
  std::vector<int> rows(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
  const double t_end = 20.0;
  integrators::IntegratorStats stats;
  integrators::BdfJacobianStats js;
  for (auto _ : state) {
    integrators::Bdf bdf(o, bo);
    bdf.Reset(system, rows, 0.0, q0, v0);
    while (bdf.t() < t_end) {
      if (bdf.Step(t_end) != integrators::StepStatus::kAccepted) {
        state.SkipWithError("BDF step failed");
        return;
      }
    }
    stats = bdf.stats();
    js = bdf.jacobian_stats();
  }
  state.counters["steps"] = static_cast<double>(stats.accepted_steps);
  state.counters["newton"] = static_cast<double>(stats.newton_iterations);
  state.counters["jacobians"] = static_cast<double>(stats.jacobian_evaluations);
  state.counters["updates"] = static_cast<double>(js.partitioned_updates);
  state.counters["eq26"] = static_cast<double>(js.excitation_updates);
  state.counters["D_t"] = static_cast<double>(js.time_derivatives);
  state.counters["residuals"] = static_cast<double>(stats.rhs_evaluations);
  state.counters["factorizations"] = static_cast<double>(stats.factorizations);
  state.counters["colours"] = js.colours;
}

BENCHMARK(BM_BdfChain)
    ->ArgsProduct({{4, 8, 16, 32}, {0, 1, 2, 3}})
    ->ArgNames({"N", "mode"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace saltus::bench

BENCHMARK_MAIN();
