#include "engine/constrained_dynamics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/lagrangian_system.h"
#include "engine/planar_model.h"
#include "tests/engine/malloc_counter.h"
#include "tests/engine/planar_test_models.h"

namespace saltus::engine {
namespace {

using testing::AllRows;
using testing::MakePendulum;
using testing::MakeSliderCrank;
using testing::PendulumParams;

// Closed form of the pendulum of planar_test_models.h: θ̈ = −m g ℓ sin θ / (J + m ℓ²),
// r = ℓ (sin θ, −cos θ) so r̈ = ℓ (θ̈ cos θ − θ̇² sin θ, θ̈ sin θ + θ̇² cos θ), and the joint rows
// g = p_ground − p_bob have G = [−I, ·] on the bob's translation, so M v̇ = F + Gᵀ λ gives
// λ = m (0, −g) − m r̈ (minus the pivot's force on the bob).
struct PendulumClosedForm {
  Eigen::Vector3d vdot;
  Eigen::Vector2d lambda;
};
PendulumClosedForm ClosedForm(const PendulumParams& p) {
  const double theta_ddot = -p.m * p.g * p.ell * std::sin(p.theta) / (p.J + p.m * p.ell * p.ell);
  const double w2 = p.omega * p.omega;
  const Eigen::Vector2d r_ddot(p.ell * (theta_ddot * std::cos(p.theta) - w2 * std::sin(p.theta)),
                               p.ell * (theta_ddot * std::sin(p.theta) + w2 * std::cos(p.theta)));
  PendulumClosedForm out;
  out.vdot << r_ddot, theta_ddot;
  out.lambda = Eigen::Vector2d(0.0, -p.m * p.g) - p.m * r_ddot;
  return out;
}

// Tolerance for the closed-form comparisons: the solve is a few dozen flops on O(10) numbers
// with κ(W) = O(10), so round-off is ~1e-14; 1e-11 leaves a wide margin while any modelling
// error (sign, missing term) is O(1).
constexpr double kClosedFormTol = 1e-11;

TEST(ConstrainedDynamicsTest, PendulumMatchesClosedForm) {
  for (double theta : {0.0, 0.6, -2.0, 3.0}) {
    PendulumParams p;
    p.theta = theta;
    auto model = MakePendulum(p);
    PlanarMultibodySystem system(model);
    ConstrainedDynamics dynamics(system);
    const std::vector<int> rows = AllRows(system);
    Eigen::VectorXd vdot, lambda;
    const DynamicsStatus status = dynamics.Solve(0.0, model->InitialPositions(),
                                                 model->InitialVelocities(), rows, &vdot, &lambda);
    const PendulumClosedForm expected = ClosedForm(p);
    ASSERT_TRUE(status.ok);
    EXPECT_EQ(status.rank, 2);
    ASSERT_EQ(vdot.size(), 3);
    ASSERT_EQ(lambda.size(), 2);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(vdot(i), expected.vdot(i), kClosedFormTol);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(lambda(i), expected.lambda(i), kClosedFormTol);
    // Residual ‖G v̇ + γ‖∞ at round-off: ε times O(10) terms.
    EXPECT_LE(status.residual, 1e-13);
  }
}

TEST(ConstrainedDynamicsTest, RedundantJointGivesMinimumNormSplit) {
  PendulumParams p;
  p.joint_copies = 2;  // the same revolute twice: 4 rows, rank 2
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  ConstrainedDynamics dynamics(system);
  const std::vector<int> rows = AllRows(system);
  ASSERT_EQ(rows.size(), 4u);
  Eigen::VectorXd vdot, lambda;
  const DynamicsStatus status = dynamics.Solve(0.0, model->InitialPositions(),
                                               model->InitialVelocities(), rows, &vdot, &lambda);
  ASSERT_TRUE(status.ok);
  EXPECT_EQ(status.rank, 2);
  const PendulumClosedForm expected = ClosedForm(p);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(vdot(i), expected.vdot(i), kClosedFormTol);
  // Identical rows: only λ₁ + λ₂ is determined; the minimum-norm choice splits it equally.
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(lambda(i), 0.5 * expected.lambda(i), kClosedFormTol);
    EXPECT_NEAR(lambda(i + 2), 0.5 * expected.lambda(i), kClosedFormTol);
  }
  EXPECT_LE(status.residual, 1e-13);  // round-off, as above
}

// The slider-crank of planar_test_models.h at its initial state, with a solver and all rows.
struct SliderCrankAtStart {
  std::shared_ptr<const PlanarModel> model = MakeSliderCrank({});
  PlanarMultibodySystem system{model};
  ConstrainedDynamics dynamics{system};
  std::vector<int> rows = AllRows(system);
  Eigen::VectorXd q = model->InitialPositions();
  Eigen::VectorXd v = model->InitialVelocities();
};

TEST(ConstrainedDynamicsTest, SliderCrankSatisfiesKktSystem) {
  SliderCrankAtStart s;
  const PlanarMultibodySystem& system = s.system;
  const std::vector<int>& rows = s.rows;
  const Eigen::VectorXd &q = s.q, &v = s.v;
  Eigen::VectorXd vdot, lambda;
  const DynamicsStatus status = s.dynamics.Solve(0.0, q, v, rows, &vdot, &lambda);
  ASSERT_TRUE(status.ok);
  EXPECT_EQ(status.rank, 8);
  // Both block rows of eq. (8): M v̇ − Gᵀ λ = F and G v̇ = −γ, to round-off (O(10) entries).
  Eigen::MatrixXd M, G;
  Eigen::VectorXd F, gamma;
  system.MassMatrix(q, &M);
  system.Forces(0.0, q, v, &F);
  system.ConstraintJacobian(0.0, q, rows, &G);
  system.ConstraintGamma(0.0, q, v, rows, &gamma);
  EXPECT_LE((M * vdot - G.transpose() * lambda - F).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_LE((G * vdot + gamma).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_NEAR(status.residual, (G * vdot + gamma).lpNorm<Eigen::Infinity>(), 1e-14);
}

// LastSolveCorrection is the M-metric least-norm solution δ = M⁻¹Gᵀ W⁻¹ r of G δ = r at the last
// Solve's state (dense formula below; κ(W) = O(10), so round-off ~1e-14 of the O(1) entries);
// it is refused before any Solve and where W needed the rank-revealing path.
TEST(ConstrainedDynamicsTest, LastSolveCorrectionIsTheMassMetricLeastNormSolution) {
  SliderCrankAtStart s;
  const PlanarMultibodySystem& system = s.system;
  ConstrainedDynamics& dynamics = s.dynamics;
  const std::vector<int>& rows = s.rows;
  const Eigen::VectorXd &q = s.q, &v = s.v;
  Eigen::VectorXd vdot, lambda, delta;
  const Eigen::VectorXd r =
      Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(rows.size()), -1.0, 2.0);
  EXPECT_FALSE(dynamics.LastSolveCorrection(r, &delta));
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).ok);
  ASSERT_TRUE(dynamics.LastSolveCorrection(r, &delta));
  Eigen::MatrixXd M, G;
  system.MassMatrix(q, &M);
  system.ConstraintJacobian(0.0, q, rows, &G);
  const Eigen::MatrixXd MinvGt = M.ldlt().solve(G.transpose());
  const Eigen::VectorXd expected = MinvGt * (G * MinvGt).ldlt().solve(r);
  EXPECT_LE((delta - expected).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_LE((G * delta - r).lpNorm<Eigen::Infinity>(), 1e-12);
  // Redundant rows (the pivot counted twice): W is rank-deficient, no plain factor to reuse.
  std::vector<int> redundant = rows;
  redundant.push_back(rows[0]);
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, redundant, &vdot, &lambda).ok);
  EXPECT_FALSE(dynamics.LastSolveCorrection(
      Eigen::VectorXd::Zero(static_cast<Eigen::Index>(redundant.size())), &delta));
}

// W = G M⁻¹Gᵀ is formed from the nonzero entries of G's columns (diagonal M); an entry that is
// exactly zero at one call (the pendulum hanging straight down: sin θ = 0) and not at the next
// must not leave a stale pattern: one object, the states at θ = 0 and θ = 0.6, both against the
// closed form.
TEST(ConstrainedDynamicsTest, ChangingPatternOfGKeepsTheClosedForm) {
  PendulumParams hanging;
  hanging.theta = 0.0;
  auto model = MakePendulum(hanging);
  PlanarMultibodySystem system(model);
  ConstrainedDynamics dynamics(system);
  const std::vector<int> rows = AllRows(system);
  for (const double theta : {0.0, 0.6}) {
    SCOPED_TRACE(theta);
    PendulumParams p = hanging;
    p.theta = theta;
    const auto state = MakePendulum(p);  // same bodies and joint, the state at θ
    Eigen::VectorXd vdot, lambda;
    ASSERT_TRUE(
        dynamics
            .Solve(0.0, state->InitialPositions(), state->InitialVelocities(), rows, &vdot, &lambda)
            .ok);
    const PendulumClosedForm expected = ClosedForm(p);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(vdot(i), expected.vdot(i), kClosedFormTol);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(lambda(i), expected.lambda(i), kClosedFormTol);
  }
}

TEST(ConstrainedDynamicsTest, NoRowsIsFreeMotion) {
  PendulumParams p;
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  ConstrainedDynamics dynamics(system);
  Eigen::VectorXd vdot, lambda;
  const DynamicsStatus status = dynamics.Solve(0.0, model->InitialPositions(),
                                               model->InitialVelocities(), {}, &vdot, &lambda);
  ASSERT_TRUE(status.ok);
  EXPECT_EQ(status.rank, 0);
  EXPECT_EQ(lambda.size(), 0);
  // Free fall: v̇ = (0, −g, 0) exactly up to one division.
  EXPECT_NEAR(vdot(0), 0.0, 1e-15);
  EXPECT_NEAR(vdot(1), -p.g, 1e-14);
  EXPECT_NEAR(vdot(2), 0.0, 1e-15);
}

// A 1-DOF Lagrangian system with two callback rows on the same coordinate.
std::unique_ptr<LagrangianSystem> TwoRowSystem(double mass, double gamma1) {
  LagrangianCallbacks callbacks;
  callbacks.n = 1;
  callbacks.mass = [mass](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    M->resize(1, 1);
    (*M)(0, 0) = mass;
  };
  callbacks.forces = [](double, const Eigen::VectorXd&, const Eigen::VectorXd&,
                        Eigen::VectorXd* F) { F->setConstant(1, 3.0); };
  auto system = std::make_unique<LagrangianSystem>(callbacks);
  ConstraintCallbacks rows;
  rows.rows.resize(2);
  rows.rows[0].name = "c0";
  rows.rows[1].name = "c1";
  rows.values = [](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    g->resize(2);
    *g << q(0), q(0);
  };
  rows.jacobian = [](double, const Eigen::VectorXd&, Eigen::MatrixXd* G) {
    G->resize(2, 1);
    *G << 1.0, 1.0;
  };
  rows.gamma = [gamma1](double, const Eigen::VectorXd&, const Eigen::VectorXd&,
                        Eigen::VectorXd* gamma) {
    gamma->resize(2);
    *gamma << 0.0, gamma1;
  };
  system->AddConstraintBlock(std::make_shared<CallbackConstraints>(rows, 1));
  return system;
}

TEST(ConstrainedDynamicsTest, InconsistentRedundantRowsReportNotOk) {
  // Rows v̇ = 0 and v̇ = −1 cannot both hold.
  auto system = TwoRowSystem(1.0, 1.0);
  ConstrainedDynamics dynamics(*system);
  const std::vector<int> rows = {0, 1};
  Eigen::VectorXd vdot, lambda;
  const DynamicsStatus status =
      dynamics.Solve(0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1), rows, &vdot, &lambda);
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.rank, 1);
  // The least-squares compromise v̇ = −½ leaves residual ½ (exact up to round-off).
  EXPECT_NEAR(vdot(0), -0.5, 1e-14);
  EXPECT_NEAR(status.residual, 0.5, 1e-14);
}

TEST(ConstrainedDynamicsTest, ConsistentRedundantRowsAreOk) {
  auto system = TwoRowSystem(2.0, 0.0);
  ConstrainedDynamics dynamics(*system);
  const std::vector<int> rows = {0, 1};
  Eigen::VectorXd vdot, lambda;
  const DynamicsStatus status =
      dynamics.Solve(0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1), rows, &vdot, &lambda);
  ASSERT_TRUE(status.ok);
  EXPECT_EQ(status.rank, 1);
  // M v̇ = 3 + λ₀ + λ₁ with v̇ = 0: λ₀ + λ₁ = −3, split equally (exact up to round-off).
  EXPECT_NEAR(vdot(0), 0.0, 1e-15);
  EXPECT_NEAR(lambda(0), -1.5, 1e-14);
  EXPECT_NEAR(lambda(1), -1.5, 1e-14);
}

TEST(ConstrainedDynamicsTest, NonPositiveMassReportsNotOk) {
  auto system = TwoRowSystem(-1.0, 0.0);
  ConstrainedDynamics dynamics(*system);
  const std::vector<int> rows = {0};
  Eigen::VectorXd vdot, lambda;
  const DynamicsStatus status =
      dynamics.Solve(0.0, Eigen::VectorXd::Zero(1), Eigen::VectorXd::Zero(1), rows, &vdot, &lambda);
  EXPECT_FALSE(status.ok);
}

TEST(ConstrainedDynamicsTest, WrongSizesThrow) {
  PendulumParams p;
  PlanarMultibodySystem system(MakePendulum(p));
  ConstrainedDynamics dynamics(system);
  Eigen::VectorXd vdot, lambda;
  EXPECT_THROW(
      dynamics.Solve(0.0, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Zero(3), {}, &vdot, &lambda),
      std::invalid_argument);
  EXPECT_THROW(
      dynamics.Solve(0.0, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(4), {}, &vdot, &lambda),
      std::invalid_argument);
  EXPECT_THROW(dynamics.set_rank_tolerance(0.0), std::invalid_argument);
  EXPECT_THROW(dynamics.set_rank_tolerance(1.5), std::invalid_argument);
}

TEST(ConstrainedDynamicsTest, NoAllocationAfterFirstCall) {
#ifdef SALTUS_COUNT_MALLOC
  auto model = MakeSliderCrank({});
  PlanarMultibodySystem system(model);
  ConstrainedDynamics dynamics(system);
  const std::vector<int> rows = AllRows(system);
  const std::vector<int> fewer = {0, 1, 2, 3};
  const Eigen::VectorXd q = model->InitialPositions();
  Eigen::VectorXd v = model->InitialVelocities();
  Eigen::VectorXd vdot, lambda;
  dynamics.Solve(0.0, q, v, rows, &vdot, &lambda);  // warm-up: sizes the workspace
  g_allocations = 0;
  g_counting = true;
  for (int k = 0; k < 10; ++k) {
    v(2) += 0.1;
    dynamics.Solve(0.01 * k, q, v, rows, &vdot, &lambda);
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
  // A different m reallocates once, as documented; then it is allocation-free again.
  dynamics.Solve(0.0, q, v, fewer, &vdot, &lambda);
  g_allocations = 0;
  g_counting = true;
  dynamics.Solve(0.0, q, v, fewer, &vdot, &lambda);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
  // A larger system (a chain of 20 links: nv = 60, m = 40), where Eigen's products and
  // factorizations use their blocked paths.
  PlanarModelBuilder builder;
  for (int i = 0; i < 20; ++i) {
    PlanarBody link;
    link.name = "link" + std::to_string(i);
    link.q0 << 0.0, -0.5 - i, 0.0;
    builder.AddBody(link);
    PlanarJoint pin;
    pin.name = "pin" + std::to_string(i);
    pin.body_a = i == 0 ? kGround : i - 1;
    pin.body_b = i;
    pin.point_a = Eigen::Vector2d(0.0, i == 0 ? 0.0 : -0.5);
    pin.point_b = Eigen::Vector2d(0.0, 0.5);
    builder.AddJoint(pin);
  }
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  auto chain = builder.Build();
  PlanarMultibodySystem chain_system(chain);
  ConstrainedDynamics chain_dynamics(chain_system);
  const std::vector<int> chain_rows = AllRows(chain_system);
  const Eigen::VectorXd chain_q = chain->InitialPositions();
  const Eigen::VectorXd chain_v = Eigen::VectorXd::Ones(chain_system.nv());
  const DynamicsStatus warm =
      chain_dynamics.Solve(0.0, chain_q, chain_v, chain_rows, &vdot, &lambda);
  ASSERT_TRUE(warm.ok);
  EXPECT_EQ(warm.rank, 40);
  g_allocations = 0;
  g_counting = true;
  chain_dynamics.Solve(0.0, chain_q, chain_v, chain_rows, &vdot, &lambda);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
  // The counter itself works (guards against a test that cannot fail).
  g_allocations = 0;
  g_counting = true;
  Eigen::VectorXd scratch(100);
  scratch.setZero();
  g_counting = false;
  EXPECT_GE(g_allocations.load(), 1);
#else
  GTEST_SKIP() << "malloc counting needs glibc without sanitizers";
#endif
}

TEST(MinNormSolverTest, MatchesPseudoInverseOnRankDeficientMatrices) {
  std::srand(7);
  for (int n : {1, 3, 6, 9}) {
    for (int r = 0; r <= n; r += (n > 3 ? 2 : 1)) {
      // A = B Cᵀ, n × n of rank r (random B, C almost surely of full rank r).
      const Eigen::MatrixXd B = Eigen::MatrixXd::Random(n, r);
      const Eigen::MatrixXd C = Eigen::MatrixXd::Random(n, r);
      const Eigen::MatrixXd A = B * C.transpose();
      const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
      MinNormSolver solver;
      solver.Compute(A, 1e-10);
      Eigen::VectorXd x;
      solver.Solve(b, &x);
      EXPECT_EQ(solver.rank(), r) << "n = " << n;
      // Reference A⁺ b from the SVD with the same cut-off.
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
      svd.setThreshold(1e-10);
      const Eigen::VectorXd x_ref = svd.solve(b);
      // Both are backward stable on matrices with entries O(1) and condition of their range
      // part O(10²): agreement to 1e-10 relative.
      EXPECT_LE((x - x_ref).norm(), 1e-10 * (1.0 + x_ref.norm())) << "n = " << n << ", r = " << r;
    }
  }
}

// A system that declares its mass matrix constant is factorized once, and the accelerations
// are the same as with a fresh factorization (M v̇ = F exactly: no constraint rows).
TEST(ConstrainedDynamicsTest, ConstantMassMatrixIsFactorizedOnce) {
  int mass_calls = 0;
  LagrangianCallbacks cb;
  cb.n = 2;
  cb.constant_mass = true;
  cb.mass = [&mass_calls](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    ++mass_calls;
    *M = (Eigen::Matrix2d() << 2.0, 0.5, 0.5, 1.0).finished();
  };
  cb.forces = [](double t, const Eigen::VectorXd& q, const Eigen::VectorXd&, Eigen::VectorXd* F) {
    *F = Eigen::Vector2d(1.0 + t, -q[0]);
  };
  LagrangianSystem system(cb);
  ConstrainedDynamics dynamics(system);
  Eigen::VectorXd vdot, lambda;
  const Eigen::Matrix2d M = (Eigen::Matrix2d() << 2.0, 0.5, 0.5, 1.0).finished();
  for (int k = 0; k < 3; ++k) {
    const Eigen::Vector2d q(0.3 * k, 1.0), v(0.0, 0.0);
    ASSERT_TRUE(dynamics.Solve(0.1 * k, q, v, {}, &vdot, &lambda).ok);
    const Eigen::Vector2d expected = M.ldlt().solve(Eigen::Vector2d(1.0 + 0.1 * k, -q[0]));
    // Two Cholesky solves of a 2×2 system with condition number ~5: round-off.
    EXPECT_LT((vdot - expected).cwiseAbs().maxCoeff(), 1e-14);
  }
  EXPECT_EQ(mass_calls, 1);
}

// Once a constant M is factored, a call without rows computes v̇ = M⁻¹ F and nothing else
// (SolveUnconstrained). Its numbers must be those of the general path, which a new object takes
// on its first call: bit for bit, for a diagonal M (the planar pendulum, calls with and without
// its joint rows interleaved) and a full one (two Cholesky solves), and a non-finite force must
// still give ok = false.
TEST(ConstrainedDynamicsTest, FreeCallsWithAFactoredConstantMassAreTheGeneralPathsNumbers) {
  PendulumParams p;
  auto model = MakePendulum(p);
  PlanarMultibodySystem pendulum(model);
  const std::vector<int> joint_rows = AllRows(pendulum);
  ConstrainedDynamics kept(pendulum);
  Eigen::VectorXd vdot, lambda, vdot_new, lambda_new;
  for (int k = 0; k < 6; ++k) {
    Eigen::VectorXd q = model->InitialPositions(), v = model->InitialVelocities();
    q(2) += 0.37 * k;
    v(2) = 0.5 - 0.21 * k;
    const std::span<const int> rows =
        k % 3 == 2 ? std::span<const int>(joint_rows) : std::span<const int>();
    ASSERT_TRUE(kept.Solve(0.1 * k, q, v, rows, &vdot, &lambda).ok);
    ConstrainedDynamics fresh(pendulum);
    ASSERT_TRUE(fresh.Solve(0.1 * k, q, v, rows, &vdot_new, &lambda_new).ok);
    EXPECT_EQ(vdot, vdot_new) << "call " << k;
    EXPECT_EQ(lambda, lambda_new) << "call " << k;
  }

  bool poison = false;
  LagrangianCallbacks cb;
  cb.n = 2;
  cb.constant_mass = true;
  cb.mass = [](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    *M = (Eigen::Matrix2d() << 2.0, 0.5, 0.5, 1.0).finished();
  };
  cb.forces = [&poison](double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                        Eigen::VectorXd* F) {
    *F = Eigen::Vector2d(std::sin(3.0 * t) + v[1], -q[0] * q[1]);
    if (poison) (*F)(1) = std::numeric_limits<double>::quiet_NaN();
  };
  LagrangianSystem full(cb);
  ConstrainedDynamics kept_full(full);
  for (int k = 0; k < 4; ++k) {
    const Eigen::Vector2d q(0.3 * k - 0.2, 1.0 + 0.1 * k), v(0.7, -0.4 * k);
    ASSERT_TRUE(kept_full.Solve(0.1 * k, q, v, {}, &vdot, &lambda).ok);
    ConstrainedDynamics fresh(full);
    ASSERT_TRUE(fresh.Solve(0.1 * k, q, v, {}, &vdot_new, &lambda_new).ok);
    EXPECT_EQ(vdot, vdot_new) << "call " << k;
    EXPECT_EQ(lambda.size(), 0);
  }
  poison = true;
  EXPECT_FALSE(
      kept_full.Solve(0.5, Eigen::Vector2d(0.1, 0.2), Eigen::Vector2d::Zero(), {}, &vdot, &lambda)
          .ok);
}

}  // namespace
}  // namespace saltus::engine
