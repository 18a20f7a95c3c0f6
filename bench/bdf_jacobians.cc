// Google Benchmark: Jacobian strategies of the BDF corrector (integrators/bdf.h) on the chain of
// N mathematical pendulums with an excited suspension point (Arnold, Fuchs & Führer, "Efficient
// corrector iteration for DAE time integration in multibody dynamics", Sec. 4.2.1 and Table 2).
//
//   BM_BdfChain/N/mode   mode 0: system-block Jacobians (K, C, Z, G, M) with reuse
//                        mode 1: coloured grouped differences (eq. 20) of the whole residual,
//                                re-differenced whenever c₀ changes (DASSL's standard strategy)
//                        mode 2: mode 1 + partitioned update (eq. 24) on changes of c₀
//
// Seed regime (Table 2): an approximately linear chain, rods starting 0.01 sin(i + 1) rad off the
// vertical, suspension at (0, 0.2 sin(2π·0.05 t)), RTOL = 1e-4, ATOL = 1e-6, variable order 1–5;
// one iteration integrates 20 s (the seed: 200 s). Counters per run: accepted steps, Newton
// iterations, Jacobian (difference) evaluations, partitioned updates, factorizations, colours.
//
// The chain is the system of tests/integrators/bdf_test.cc (N unit masses in Cartesian
// coordinates, rods of length 1), repeated here because the benchmarks do not link the test
// sources (same settings as BdfColouredJacobian.PartitionedUpdateReducesJacobianEvaluations).
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "engine/mechanical_system.h"
#include "integrators/bdf.h"

namespace saltus::bench {
namespace {

constexpr double kA = 0.2, kOmega = 2 * M_PI * 0.05, kPhi = 0.01, kGravity = 9.81;

Eigen::Vector2d Suspension(double t) { return {0.0, kA * std::sin(kOmega * t)}; }
Eigen::Vector2d SuspensionRate(double t) { return {0.0, kA * kOmega * std::cos(kOmega * t)}; }
Eigen::Vector2d SuspensionAccel(double t) {
  return {0.0, -kA * kOmega * kOmega * std::sin(kOmega * t)};
}

// Rows g_i = (|d_i|² − 1)/2, d_i = p_i − p_{i−1}, p₀ = s(t).
class ChainRods final : public engine::ConstraintBlock {
 public:
  explicit ChainRods(int n) : n_(n) { info_.name = "rod"; }
  int num_rows() const override { return n_; }
  const engine::ConstraintRowInfo& row_info(int /*local_row*/) const override { return info_; }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    for (std::size_t k = 0; k < rows.size(); ++k)
      g(static_cast<Eigen::Index>(k)) = 0.5 * (D(t, q, rows[k]).squaredNorm() - 1.0);
  }
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    G.setZero();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const int i = rows[k];
      const Eigen::Vector2d d = D(t, q, i);
      const auto r = static_cast<Eigen::Index>(k);
      G.block<1, 2>(r, 2 * i) = d.transpose();
      if (i > 0) G.block<1, 2>(r, 2 * (i - 1)) = -d.transpose();
    }
  }
  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      g_t(static_cast<Eigen::Index>(k)) = rows[k] == 0 ? -D(t, q, 0).dot(SuspensionRate(t)) : 0.0;
    }
  }
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const int i = rows[k];
      const Eigen::Vector2d v_prev =
          i == 0 ? SuspensionRate(t) : Eigen::Vector2d(v.segment<2>(2 * (i - 1)));
      double value = (Eigen::Vector2d(v.segment<2>(2 * i)) - v_prev).squaredNorm();
      if (i == 0) value -= D(t, q, 0).dot(SuspensionAccel(t));
      gamma(static_cast<Eigen::Index>(k)) = value;
    }
  }

 private:
  Eigen::Vector2d D(double t, const Eigen::VectorXd& q, int i) const {
    const Eigen::Vector2d prev =
        i == 0 ? Suspension(t) : Eigen::Vector2d(q.segment<2>(2 * (i - 1)));
    return Eigen::Vector2d(q.segment<2>(2 * i)) - prev;
  }
  int n_;
  engine::ConstraintRowInfo info_;
};

class ChainSystem final : public engine::MechanicalSystem {
 public:
  explicit ChainSystem(int n) : n_(n) { AddConstraintBlock(std::make_shared<ChainRods>(n)); }
  int nq() const override { return 2 * n_; }
  int nv() const override { return 2 * n_; }
  void MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const override {
    M->setIdentity(2 * n_, 2 * n_);
  }
  bool HasConstantMassMatrix() const override { return true; }
  void Forces(double /*t*/, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/,
              Eigen::VectorXd* F) const override {
    F->setZero(2 * n_);
    for (int i = 0; i < n_; ++i) (*F)(2 * i + 1) = -kGravity;
  }

 private:
  int n_;
};

void BM_BdfChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int mode = static_cast<int>(state.range(1));
  ChainSystem system(n);
  integrators::IntegratorOptions o;
  o.formulation = integrators::Formulation::kStabilizedIndex2;
  o.rtol = 1e-4;
  o.atol = 1e-6;
  integrators::BdfOptions bo;
  bo.order = 5;
  bo.variable_order = true;
  if (mode >= 1) bo.jacobian = integrators::BdfJacobian::kColouredDifferences;
  bo.partitioned_update = mode == 2;
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(2 * n), v0 = Eigen::VectorXd::Zero(2 * n);
  Eigen::Vector2d p = Suspension(0.0);
  for (int i = 0; i < n; ++i) {
    const double phi = kPhi * std::sin(i + 1.0);
    p += Eigen::Vector2d(std::sin(phi), -std::cos(phi));
    q0.segment<2>(2 * i) = p;
    v0(2 * i + 1) = kA * kOmega;
  }
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
  state.counters["factorizations"] = static_cast<double>(stats.factorizations);
  state.counters["colours"] = js.colours;
}

BENCHMARK(BM_BdfChain)
    ->ArgsProduct({{4, 8, 16, 32}, {0, 1, 2}})
    ->ArgNames({"N", "mode"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace saltus::bench

BENCHMARK_MAIN();
