// The block-sparse path (engine/block_sparse.h) against the dense one: ConstrainedDynamics and the
// projections on the N-link chain (sparse) and Bricard's mechanism (redundant rows: fallback).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/constrained_dynamics.h"
#include "engine/projection.h"
#include "engine/rotation.h"
#include "tests/engine/malloc_counter.h"
#include "tests/engine/n_chain_model.h"
#include "tests/engine/spatial_mechanisms.h"

namespace saltus::engine {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

std::vector<int> AllRows(const MechanicalSystem& system) {
  std::vector<int> rows(static_cast<std::size_t>(system.num_constraints()));
  for (int r = 0; r < system.num_constraints(); ++r) rows[static_cast<std::size_t>(r)] = r;
  return rows;
}

// A generic state near q0: every body moved by up to `dx` and turned by up to `dtheta` rad,
// velocities uniform in [−1, 1]. The Solve compared below is defined at any state.
void RandomState(const MechanicalSystem& system, const Eigen::VectorXd& q0, double dx,
                 double dtheta, unsigned seed, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd delta(system.nv());
  for (Eigen::Index i = 0; i < delta.size(); ++i) delta(i) = (i % 6 < 3 ? dx : dtheta) * u(rng);
  system.IntegratePosition(q0, delta, 1.0, q);
  v->resize(system.nv());
  for (Eigen::Index i = 0; i < v->size(); ++i) (*v)(i) = u(rng);
}

// Dense condition number of W = G M⁻¹ Gᵀ (2-norm), for the tolerances below.
double ConditionOfW(const MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                    const std::vector<int>& rows) {
  Eigen::MatrixXd M, G;
  system.MassMatrix(q, &M);
  system.ConstraintJacobian(t, q, rows, &G);
  const Eigen::MatrixXd W = G * M.llt().solve(G.transpose());
  const Eigen::VectorXd s = W.jacobiSvd().singularValues();
  return s(0) / s(s.size() - 1);
}

TEST(BlockSparseRows, SpatialJacobianAndMassMatchDense) {
  const auto system = testing::MakeNChain(6, 3, Eigen::Vector3d(0.05, -0.03, 0.3));
  Eigen::VectorXd q, v;
  RandomState(*system, system->model().InitialPositions(), 0.1, 0.5, 7, &q, &v);
  const std::vector<int> rows = {2, 0, 5, 9, 17};
  MassBlocks M;
  BlockSparseRows G;
  ASSERT_TRUE(system->BlockSparseMatrices(0.0, q, rows, &M, &G));
  Eigen::MatrixXd G_dense, M_dense;
  system->ConstraintJacobian(0.0, q, rows, &G_dense);
  system->MassMatrix(q, &M_dense);
  // The same formulas evaluated in the same order: equal to round-off of the sums (a few ε).
  EXPECT_LE((G.ToDense() - G_dense).lpNorm<Eigen::Infinity>(), 8 * kEps * G_dense.norm());
  for (int i = 0; i < 6; ++i) {
    EXPECT_LE((M.blocks.middleCols<6>(6 * i) - M_dense.block<6, 6>(6 * i, 6 * i))
                  .lpNorm<Eigen::Infinity>(),
              8 * kEps * M_dense.norm());
  }
  // At most two bodies per joint row.
  for (int i = 0; i < G.rows(); ++i) {
    EXPECT_LE(
        G.row_start[static_cast<std::size_t>(i) + 1] - G.row_start[static_cast<std::size_t>(i)], 2);
  }
}

struct DenseSparse {
  Eigen::VectorXd vdot_dense, lambda_dense, vdot_sparse, lambda_sparse;
  DynamicsStatus dense, sparse;
};

DenseSparse SolveBoth(const MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                      const Eigen::VectorXd& v, const std::vector<int>& rows) {
  DenseSparse out;
  ConstrainedDynamics dense(system), sparse(system);
  dense.set_linear_algebra(LinearAlgebra::kDense);
  sparse.set_linear_algebra(LinearAlgebra::kSparse);
  out.dense = dense.Solve(t, q, v, rows, &out.vdot_dense, &out.lambda_dense);
  out.sparse = sparse.Solve(t, q, v, rows, &out.vdot_sparse, &out.lambda_sparse);
  return out;
}

double RelativeDifference(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / std::max(1.0, b.lpNorm<Eigen::Infinity>());
}

TEST(SparseDynamics, ChainOfTwentyMatchesDense) {
  for (const double com_offset : {0.0, 0.4}) {
    const auto system = testing::MakeNChain(
        20, 1, Eigen::Vector3d(0.1 * com_offset, -0.2 * com_offset, com_offset));
    Eigen::VectorXd q, v;
    RandomState(*system, system->model().InitialPositions(), 0.05, 0.3, 11, &q, &v);
    const std::vector<int> rows = AllRows(*system);
    const DenseSparse r = SolveBoth(*system, 0.0, q, v, rows);
    ASSERT_TRUE(r.dense.ok);
    ASSERT_TRUE(r.sparse.ok);
    EXPECT_FALSE(r.dense.sparse);
    EXPECT_TRUE(r.sparse.sparse);
    EXPECT_EQ(r.sparse.rank, 60);
    // Two backward-stable solves of the same system differ by at most ~κ(W) ε relative to the
    // solution (Higham, Accuracy and Stability of Numerical Algorithms, Thm 7.2); 100 covers
    // the modest growth constants of the two factorizations.
    const double kappa = ConditionOfW(*system, 0.0, q, rows);
    const double tol = 100.0 * kappa * kEps;
    EXPECT_LT(tol, 1e-6) << "the test would be vacuous";
    EXPECT_LE(RelativeDifference(r.vdot_sparse, r.vdot_dense), tol) << "com " << com_offset;
    EXPECT_LE(RelativeDifference(r.lambda_sparse, r.lambda_dense), tol) << "com " << com_offset;
    // Both satisfy the acceleration constraint to round-off of its terms.
    EXPECT_LE(r.sparse.residual,
              1e3 * kEps * std::max(1.0, r.vdot_dense.lpNorm<Eigen::Infinity>()));
  }
}

TEST(SparseDynamics, AutomaticChoiceBySize) {
  const auto small = testing::MakeNChain(4);   // nv = 24 < kSparseMinimumNv
  const auto large = testing::MakeNChain(10);  // nv = 60
  for (const auto& system : {small, large}) {
    ConstrainedDynamics dynamics(*system);
    Eigen::VectorXd vdot, lambda;
    const auto status =
        dynamics.Solve(0.0, system->model().InitialPositions(), system->model().InitialVelocities(),
                       AllRows(*system), &vdot, &lambda);
    ASSERT_TRUE(status.ok);
    EXPECT_EQ(status.sparse, system->nv() >= kSparseMinimumNv) << "nv = " << system->nv();
  }
}

TEST(SparseDynamics, RedundantBricardFallsBackToDense) {
  const auto system = testing::Bricard();
  const Eigen::VectorXd q = system->model().InitialPositions();
  Eigen::VectorXd v = Eigen::VectorXd::Zero(system->nv());
  const std::vector<int> rows = AllRows(*system);
  ConstrainedDynamics dense(*system), sparse(*system);
  dense.set_linear_algebra(LinearAlgebra::kDense);
  sparse.set_linear_algebra(LinearAlgebra::kSparse);
  for (int call = 0; call < 2; ++call) {  // the second call goes to the dense path directly
    Eigen::VectorXd vd, ld, vs, ls;
    const auto sd = dense.Solve(0.0, q, v, rows, &vd, &ld);
    const auto ss = sparse.Solve(0.0, q, v, rows, &vs, &ls);
    ASSERT_TRUE(sd.ok);
    ASSERT_TRUE(ss.ok);
    EXPECT_FALSE(ss.sparse);
    EXPECT_EQ(ss.rank, 29);
    EXPECT_EQ(sd.rank, 29);
    // The same dense computation on the same data: identical up to the last bit; 1e-15 relative
    // only to avoid comparing doubles exactly.
    EXPECT_LE(RelativeDifference(vs, vd), 1e-15);
    EXPECT_LE(RelativeDifference(ls, ld), 1e-15);
  }
}

#ifdef SALTUS_COUNT_MALLOC
TEST(SparseDynamics, NoAllocationAfterFirstCall) {
  const auto system = testing::MakeNChain(
      20, 1, Eigen::Vector3d(0.04, 0.06, 0.4));  // non-constant M: blocks refactorized
  Eigen::VectorXd q, v;
  RandomState(*system, system->model().InitialPositions(), 0.05, 0.3, 5, &q, &v);
  const std::vector<int> rows = AllRows(*system);
  ConstrainedDynamics dynamics(*system);
  dynamics.set_linear_algebra(LinearAlgebra::kSparse);
  Eigen::VectorXd vdot, lambda;
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).sparse);
  g_allocations = 0;
  g_counting = true;
  const auto status = dynamics.Solve(0.1, q, v, rows, &vdot, &lambda);
  g_counting = false;
  EXPECT_TRUE(status.ok && status.sparse);
  EXPECT_EQ(g_allocations.load(), 0);
}
#endif

TEST(SparseProjection, ChainPositionsAndVelocitiesMatchDense) {
  const auto system = testing::MakeNChain(20, 2, Eigen::Vector3d(-0.05, 0.02, 0.4));
  Eigen::VectorXd q0, v0;
  RandomState(*system, system->model().InitialPositions(), 1e-3, 1e-3, 13, &q0, &v0);
  const std::vector<int> rows = AllRows(*system);
  for (const ProjectionMetric metric : {ProjectionMetric::kMass, ProjectionMetric::kIdentity}) {
    ProjectionOptions dense_options, sparse_options;
    dense_options.metric = sparse_options.metric = metric;
    dense_options.linear_algebra = LinearAlgebra::kDense;
    sparse_options.linear_algebra = LinearAlgebra::kSparse;
    Eigen::VectorXd q_dense = q0, q_sparse = q0;
    const auto pd = ProjectPositions(*system, 0.0, rows, dense_options, &q_dense);
    const auto ps = ProjectPositions(*system, 0.0, rows, sparse_options, &q_sparse);
    ASSERT_TRUE(pd.converged);
    ASSERT_TRUE(ps.converged);
    EXPECT_GT(ps.iterations, 0);
    EXPECT_EQ(ps.rank, 60);
    // Both iterations stop at ‖g‖∞ ≤ 1e-12 (the default tolerance) and take the same steps up to
    // κ(W) ε each; the projected points agree to the tolerance scaled by κ(W), far below the
    // 1e-3 correction.
    const double kappa = ConditionOfW(*system, 0.0, q0, rows);
    EXPECT_LE((q_sparse - q_dense).lpNorm<Eigen::Infinity>(), 1e-12 * kappa);
    EXPECT_LE(ps.residual, 1e-12);

    Eigen::VectorXd v_dense = v0, v_sparse = v0;
    const auto vd = ProjectVelocities(*system, 0.0, q_dense, rows, dense_options, &v_dense);
    const auto vs = ProjectVelocities(*system, 0.0, q_dense, rows, sparse_options, &v_sparse);
    ASSERT_TRUE(vd.converged);
    ASSERT_TRUE(vs.converged);
    EXPECT_EQ(vs.rank, 60);
    // One linear solve each: κ(W) ε relative (as above, factor 100).
    EXPECT_LE(RelativeDifference(v_sparse, v_dense), 100.0 * kappa * kEps);
  }
}

TEST(SparseProjection, RedundantBricardFallsBackToDense) {
  const auto system = testing::Bricard();
  Eigen::VectorXd q0, v0;
  RandomState(*system, system->model().InitialPositions(), 1e-4, 1e-4, 17, &q0, &v0);
  const std::vector<int> rows = AllRows(*system);
  ProjectionOptions options;
  options.linear_algebra = LinearAlgebra::kSparse;
  Eigen::VectorXd q = q0, v = v0;
  const auto rp = ProjectPositions(*system, 0.0, rows, options, &q);
  ASSERT_TRUE(rp.converged);
  EXPECT_EQ(rp.rank, 29);  // the dense rank-revealing path did the work
  EXPECT_LE(rp.residual, 1e-12);
  const auto rv = ProjectVelocities(*system, 0.0, q, rows, options, &v);
  ASSERT_TRUE(rv.converged);
  EXPECT_EQ(rv.rank, 29);
}

TEST(ConstraintRate, MatchesDenseProduct) {
  const auto system = testing::MakeNChain(12, 4, Eigen::Vector3d(0.03, 0.03, 0.2));
  Eigen::VectorXd q, v;
  RandomState(*system, system->model().InitialPositions(), 0.1, 0.5, 19, &q, &v);
  const std::vector<int> rows = AllRows(*system);
  Eigen::VectorXd rate;
  ConstraintRate(*system, 0.0, q, v, rows, &rate);
  Eigen::MatrixXd G;
  system->ConstraintJacobian(0.0, q, rows, &G);
  // Sums of ≤ 12 products in a different order: a few ε of ‖G‖ ‖v‖.
  EXPECT_LE((rate - G * v).lpNorm<Eigen::Infinity>(),
            16 * kEps * G.lpNorm<Eigen::Infinity>() * v.lpNorm<Eigen::Infinity>() * 12);
}

}  // namespace
}  // namespace saltus::engine
