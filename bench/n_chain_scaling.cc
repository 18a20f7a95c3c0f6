// Cost per step against N for the N-link chain (issue 3 §8; chain of /work/shared/BENCHMARKS.md,
// built by tests/engine/n_chain_model.h, seed 1), dense against block-sparse linear algebra
// (engine/block_sparse.h):
//
//   BM_Dopri5Step/N/mode   one fixed DOPRI5 step (h = 1e-4 s, projection on, 6 KKT solves)
//                          mode 0: dense (the system is wrapped so that it hides its block
//                          structure), mode 1: the default automatic choice (sparse for nv ≥ 48)
//   BM_KktSolve/N/mode     one ConstrainedDynamics::Solve at the initial state, mode 0 forced
//                          dense, 1 forced sparse (crossover of the two factorizations)
//
// Dense runs stop at N = 128 (DOPRI5) and 256 (Solve): their O(N³) cost makes larger N take
// minutes. bench/n_chain_fit.py fits the growth exponent of the time per step (least squares on
// log t against log N over N ≥ 32 and over all N) from --benchmark_format=json output, taking the
// median of each point over several output files (repeated runs).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "integrators/integrator.h"
#include "tests/engine/n_chain_model.h"

namespace {

using saltus::engine::ConstraintBlock;
using saltus::engine::ConstraintRowInfo;
using saltus::engine::MechanicalSystem;

// The rows of another system, through its dense interface.
class ForwardedRows : public ConstraintBlock {
 public:
  explicit ForwardedRows(const MechanicalSystem& inner) : inner_(inner) {}
  int num_rows() const override { return inner_.num_constraints(); }
  const ConstraintRowInfo& row_info(int r) const override { return inner_.constraint_info(r); }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    inner_.ConstraintValues(t, q, rows, &g_);
    g = g_;
  }
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    inner_.ConstraintJacobian(t, q, rows, &G_);
    G = G_;
  }
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    inner_.ConstraintGamma(t, q, v, rows, &g_);
    gamma = g_;
  }
  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    inner_.ConstraintTimeDerivative(t, q, rows, &g_);
    g_t = g_;
  }

 private:
  const MechanicalSystem& inner_;
  mutable Eigen::VectorXd g_;
  mutable Eigen::MatrixXd G_;
};

// The same system without BlockSparseMatrices: every solver takes the dense path.
class DenseOnly : public MechanicalSystem {
 public:
  explicit DenseOnly(std::shared_ptr<const MechanicalSystem> inner) : inner_(std::move(inner)) {
    AddConstraintBlock(std::make_shared<ForwardedRows>(*inner_));
  }
  int nq() const override { return inner_->nq(); }
  int nv() const override { return inner_->nv(); }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override {
    inner_->MassMatrix(q, M);
  }
  bool HasConstantMassMatrix() const override { return inner_->HasConstantMassMatrix(); }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override {
    inner_->Forces(t, q, v, F);
  }
  void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                         Eigen::VectorXd* q_next) const override {
    inner_->IntegratePosition(q, v, h, q_next);
  }
  bool PositionDifference(const Eigen::VectorXd& q, const Eigen::VectorXd& q_base,
                          Eigen::VectorXd* theta) const override {
    return inner_->PositionDifference(q, q_base, theta);
  }
  void DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
               Eigen::VectorXd* theta_dot) const override {
    inner_->DexpInv(theta, v, theta_dot);
  }

 private:
  std::shared_ptr<const MechanicalSystem> inner_;
};

std::vector<int> AllRows(const MechanicalSystem& system) {
  std::vector<int> rows(static_cast<std::size_t>(system.num_constraints()));
  for (int r = 0; r < system.num_constraints(); ++r) rows[static_cast<std::size_t>(r)] = r;
  return rows;
}

void BM_Dopri5Step(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool dense = state.range(1) == 0;
  const auto chain = saltus::engine::testing::MakeNChain(n);
  std::shared_ptr<const MechanicalSystem> system = chain;
  if (dense) system = std::make_shared<DenseOnly>(chain);
  saltus::integrators::IntegratorOptions options;
  options.adaptive = false;
  options.h_init = 1e-4;
  auto integrator = saltus::integrators::MakeIntegrator("dopri5", options);
  integrator->Reset(*system, AllRows(*system), 0.0, chain->model().InitialPositions(),
                    chain->model().InitialVelocities());
  for (auto _ : state) {
    const auto status = integrator->Step(1e9);
    if (status != saltus::integrators::StepStatus::kAccepted) {
      state.SkipWithError("step failed");
      break;
    }
  }
  state.counters["N"] = n;
  state.counters["nv"] = system->nv();
  const auto& stats = integrator->stats();
  state.counters["projections_per_step"] =
      static_cast<double>(stats.position_projections) / static_cast<double>(stats.accepted_steps);
}

void BM_KktSolve(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto system = saltus::engine::testing::MakeNChain(n);
  saltus::engine::ConstrainedDynamics dynamics(*system);
  dynamics.set_linear_algebra(state.range(1) == 0 ? saltus::engine::LinearAlgebra::kDense
                                                  : saltus::engine::LinearAlgebra::kSparse);
  const Eigen::VectorXd q = system->model().InitialPositions();
  const Eigen::VectorXd v = system->model().InitialVelocities();
  const std::vector<int> rows = AllRows(*system);
  Eigen::VectorXd vdot, lambda;
  for (auto _ : state) {
    const auto status = dynamics.Solve(0.0, q, v, rows, &vdot, &lambda);
    benchmark::DoNotOptimize(vdot.data());
    if (!status.ok) {
      state.SkipWithError("solve failed");
      break;
    }
  }
  state.counters["N"] = n;
}

void Sizes(benchmark::internal::Benchmark* b, int dense_max) {
  for (int n = 4; n <= 512; n *= 2) {
    if (n <= dense_max) b->Args({n, 0});
    b->Args({n, 1});
  }
  b->ArgNames({"N", "sparse"})->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Dopri5Step)->Apply([](benchmark::internal::Benchmark* b) { Sizes(b, 128); });
BENCHMARK(BM_KktSolve)->Apply([](benchmark::internal::Benchmark* b) { Sizes(b, 256); });

}  // namespace

BENCHMARK_MAIN();
