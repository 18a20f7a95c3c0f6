#include "engine/projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/lagrangian_system.h"
#include "engine/planar_model.h"
#include "tests/engine/planar_test_models.h"

namespace saltus::engine {
namespace {

using testing::AllRows;
using testing::MakePendulum;
using testing::MakeSliderCrank;
using testing::PendulumParams;
using testing::SliderCrankParams;

// Part of N δ that is not in range(Gᵀ): the residual of the least-squares fit N δ ≈ Gᵀ μ. It
// vanishes exactly when δ satisfies the first-order optimality condition of (35)/(36).
double OptimalityDefect(const Eigen::MatrixXd& N, const Eigen::MatrixXd& G,
                        const Eigen::VectorXd& delta) {
  const Eigen::VectorXd Nd = N * delta;
  const Eigen::MatrixXd Gt = G.transpose();
  const Eigen::VectorXd mu = Gt.completeOrthogonalDecomposition().solve(Nd);
  return (Nd - Gt * mu).norm();
}

double ConstraintNorm(const MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                      const std::vector<int>& rows) {
  Eigen::VectorXd g;
  system.ConstraintValues(t, q, rows, &g);
  return g.lpNorm<Eigen::Infinity>();
}

// Counts the position updates, to check that the projection moves q only through
// IntegratePosition.
class CountingSystem : public PlanarMultibodySystem {
 public:
  using PlanarMultibodySystem::PlanarMultibodySystem;
  void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                         Eigen::VectorXd* q_next) const override {
    ++calls;
    PlanarMultibodySystem::IntegratePosition(q, v, h, q_next);
  }
  mutable int calls = 0;
};

// Constant of the O(‖δ‖²) bounds below, and the perturbation size that makes them sharp.
constexpr double kSecondOrder = 10.0;
constexpr double kPerturbation = 1e-5;

// Checks a position projection from q_start against (35): g(q̃) = 0 and, with δ = q̃ − q_start,
// N δ ∈ range(Gᵀ(q̃)) up to O(‖δ‖²) (the simplified Newton direction uses G(q_start)), and
// δ equals the linearized closed form −N⁻¹Gᵀ W⁺ g(q_start) up to O(‖δ‖²).
void CheckPositionProjection(const MechanicalSystem& system, const std::vector<int>& rows,
                             const Eigen::VectorXd& q_start, ProjectionMetric metric) {
  ProjectionOptions options;
  options.metric = metric;
  Eigen::VectorXd q = q_start;
  const ProjectionResult result = ProjectPositions(system, 0.0, rows, options, &q);
  ASSERT_TRUE(result.converged);
  EXPECT_GE(result.iterations, 1);
  EXPECT_LE(result.residual, 1e-12);
  EXPECT_LE(ConstraintNorm(system, 0.0, q, rows), 1e-12);

  Eigen::MatrixXd N, G0, G1;
  if (metric == ProjectionMetric::kMass) {
    system.MassMatrix(q_start, &N);
  } else {
    N = Eigen::MatrixXd::Identity(system.nv(), system.nv());
  }
  system.ConstraintJacobian(0.0, q_start, rows, &G0);
  system.ConstraintJacobian(0.0, q, rows, &G1);
  const Eigen::VectorXd delta = q - q_start;
  const double d2 = delta.squaredNorm();
  // The constants: ‖N‖ ≤ 2 and second derivatives of g are bounded by the lever arms (≤ 1.5 m)
  // in these models, so the O(‖δ‖²) terms are below 10‖δ‖² (kSecondOrder); a wrong direction
  // leaves an O(‖δ‖) defect, more than 10 times larger at ‖δ‖ ≈ 1e-5 (see MetricMatters).
  EXPECT_LE(OptimalityDefect(N, G1, delta), kSecondOrder * d2);
  Eigen::VectorXd g0;
  system.ConstraintValues(0.0, q_start, rows, &g0);
  const Eigen::MatrixXd NinvGt = N.llt().solve(G0.transpose());
  const Eigen::MatrixXd W = G0 * NinvGt;
  const Eigen::VectorXd delta_lin = -NinvGt * W.completeOrthogonalDecomposition().solve(g0);
  EXPECT_LE((delta - delta_lin).norm(), kSecondOrder * d2);
}

TEST(ProjectPositionsTest, PendulumMassAndIdentityMetric) {
  PendulumParams p;
  auto model = MakePendulum(p);
  CountingSystem system(model);
  const std::vector<int> rows = AllRows(system);
  std::srand(1);
  const Eigen::VectorXd q_start =
      model->InitialPositions() + kPerturbation * Eigen::VectorXd::Random(system.nq());
  ASSERT_GT(ConstraintNorm(system, 0.0, q_start, rows), 0.1 * kPerturbation);
  CheckPositionProjection(system, rows, q_start, ProjectionMetric::kMass);
  CheckPositionProjection(system, rows, q_start, ProjectionMetric::kIdentity);
  EXPECT_GT(system.calls, 0);
}

TEST(ProjectPositionsTest, SliderCrank) {
  auto model = MakeSliderCrank({});
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  std::srand(2);
  const Eigen::VectorXd q_start =
      model->InitialPositions() + kPerturbation * Eigen::VectorXd::Random(system.nq());
  CheckPositionProjection(system, rows, q_start, ProjectionMetric::kMass);
  CheckPositionProjection(system, rows, q_start, ProjectionMetric::kIdentity);
}

TEST(ProjectPositionsTest, MetricMatters) {
  // The identity-metric projection is not M-optimal: its defect in the M metric is O(‖δ‖),
  // more than 10 times the second-order bound used above, which therefore can fail.
  auto model = MakeSliderCrank({});
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  std::srand(3);
  const Eigen::VectorXd q_start =
      model->InitialPositions() + kPerturbation * Eigen::VectorXd::Random(system.nq());
  ProjectionOptions options;
  options.metric = ProjectionMetric::kIdentity;
  Eigen::VectorXd q = q_start;
  ASSERT_TRUE(ProjectPositions(system, 0.0, rows, options, &q).converged);
  Eigen::MatrixXd M, G;
  system.MassMatrix(q, &M);
  system.ConstraintJacobian(0.0, q, rows, &G);
  const Eigen::VectorXd delta = q - q_start;
  EXPECT_GT(OptimalityDefect(M, G, delta), 10.0 * kSecondOrder * delta.squaredNorm());
}

TEST(ProjectPositionsTest, LargeViolationConverges) {
  PendulumParams p;
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  Eigen::VectorXd q = model->InitialPositions();
  q(0) += 0.3;
  q(1) -= 0.2;
  q(2) += 0.4;
  const ProjectionResult result = ProjectPositions(system, 0.0, rows, {}, &q);
  ASSERT_TRUE(result.converged);
  EXPECT_LE(ConstraintNorm(system, 0.0, q, rows), 1e-12);
  EXPECT_LE(result.iterations, 20);
}

TEST(ProjectPositionsTest, RedundantRowsGiveTheSameResult) {
  PendulumParams p;
  auto single = MakePendulum(p);
  p.joint_copies = 2;
  auto doubled = MakePendulum(p);
  PlanarMultibodySystem system1(single);
  PlanarMultibodySystem system2(doubled);
  std::srand(4);
  const Eigen::VectorXd q_start =
      single->InitialPositions() + 1e-2 * Eigen::VectorXd::Random(system1.nq());
  Eigen::VectorXd q1 = q_start;
  Eigen::VectorXd q2 = q_start;
  const ProjectionResult r1 = ProjectPositions(system1, 0.0, AllRows(system1), {}, &q1);
  const ProjectionResult r2 = ProjectPositions(system2, 0.0, AllRows(system2), {}, &q2);
  ASSERT_TRUE(r1.converged);
  ASSERT_TRUE(r2.converged);
  EXPECT_EQ(r1.rank, 2);
  EXPECT_EQ(r2.rank, 2);
  // Same iteration on the same manifold: W⁺ of the doubled rows gives the same step, so the
  // results agree to round-off times the iteration count.
  EXPECT_LE((q1 - q2).lpNorm<Eigen::Infinity>(), 1e-13);
}

TEST(ProjectPositionsTest, InconsistentRowsLeaveQUnchanged) {
  // One body pinned to the ground at two points 1 m apart through body points 0.5 m apart:
  // no configuration satisfies both joints.
  PlanarModelBuilder builder;
  PlanarBody body;
  body.name = "plate";
  const int plate = builder.AddBody(body);
  PlanarJoint pin;
  pin.name = "left";
  pin.body_a = kGround;
  pin.body_b = plate;
  pin.point_a = Eigen::Vector2d(-0.5, 0.0);
  pin.point_b = Eigen::Vector2d(-0.25, 0.0);
  builder.AddJoint(pin);
  pin.name = "right";
  pin.point_a = Eigen::Vector2d(0.5, 0.0);
  pin.point_b = Eigen::Vector2d(0.25, 0.0);
  builder.AddJoint(pin);
  PlanarMultibodySystem system(builder.Build());
  Eigen::VectorXd q = Eigen::Vector3d(0.01, 0.02, 0.03);
  const Eigen::VectorXd q_start = q;
  const ProjectionResult result = ProjectPositions(system, 0.0, AllRows(system), {}, &q);
  EXPECT_FALSE(result.converged);
  EXPECT_EQ(result.iterations, ProjectionOptions{}.max_iterations);
  EXPECT_EQ(q, q_start);  // untouched (exact comparison of unchanged memory, not arithmetic)
  EXPECT_NEAR(result.residual, ConstraintNorm(system, 0.0, q_start, AllRows(system)), 0.0);
}

TEST(ProjectPositionsTest, NothingToDo) {
  PendulumParams p;
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  Eigen::VectorXd q = model->InitialPositions() + Eigen::VectorXd::Constant(3, 0.1);
  const Eigen::VectorXd q_start = q;
  ProjectionResult result = ProjectPositions(system, 0.0, {}, {}, &q);
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, 0);
  EXPECT_EQ(q, q_start);
  // Already on the manifold (the model's q0 is exact to round-off): zero iterations.
  q = model->InitialPositions();
  result = ProjectPositions(system, 0.0, AllRows(system), {}, &q);
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, 0);
}

TEST(ProjectPositionsTest, BadInputThrows) {
  PendulumParams p;
  PlanarMultibodySystem system(MakePendulum(p));
  const std::vector<int> rows = AllRows(system);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(3);
  ProjectionOptions options;
  options.tolerance = 0.0;
  EXPECT_THROW(ProjectPositions(system, 0.0, rows, options, &q), std::invalid_argument);
  options = {};
  options.max_iterations = 0;
  EXPECT_THROW(ProjectPositions(system, 0.0, rows, options, &q), std::invalid_argument);
  options = {};
  options.rank_tolerance = 2.0;
  EXPECT_THROW(ProjectPositions(system, 0.0, rows, options, &q), std::invalid_argument);
  Eigen::VectorXd q_bad = Eigen::VectorXd::Zero(4);
  EXPECT_THROW(ProjectPositions(system, 0.0, rows, {}, &q_bad), std::invalid_argument);
  Eigen::VectorXd v_bad = Eigen::VectorXd::Zero(2);
  EXPECT_THROW(ProjectVelocities(system, 0.0, q, rows, {}, &v_bad), std::invalid_argument);
}

TEST(ProjectVelocitiesTest, SliderCrankMatchesClosedForm) {
  auto model = MakeSliderCrank({});
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  const Eigen::VectorXd q = model->InitialPositions();
  std::srand(5);
  const Eigen::VectorXd v_start = Eigen::VectorXd::Random(system.nv());
  Eigen::MatrixXd G;
  system.ConstraintJacobian(0.0, q, rows, &G);
  for (ProjectionMetric metric : {ProjectionMetric::kMass, ProjectionMetric::kIdentity}) {
    ProjectionOptions options;
    options.metric = metric;
    Eigen::VectorXd v = v_start;
    const ProjectionResult result = ProjectVelocities(system, 0.0, q, rows, options, &v);
    ASSERT_TRUE(result.converged);
    EXPECT_EQ(result.rank, 8);
    EXPECT_LE(result.residual, 1e-12);
    EXPECT_LE((G * v).lpNorm<Eigen::Infinity>(), 1e-12);
    // (36) is linear: ṽ = v − N⁻¹Gᵀ W⁻¹ G v exactly, and N (ṽ − v) ∈ range(Gᵀ) to round-off
    // (entries O(1), κ(W) = O(10²): 1e-12).
    Eigen::MatrixXd N;
    if (metric == ProjectionMetric::kMass) {
      system.MassMatrix(q, &N);
    } else {
      N = Eigen::MatrixXd::Identity(9, 9);
    }
    const Eigen::MatrixXd NinvGt = N.llt().solve(G.transpose());
    const Eigen::VectorXd expected = v_start - NinvGt * (G * NinvGt).llt().solve(G * v_start);
    EXPECT_LE((v - expected).lpNorm<Eigen::Infinity>(), 1e-12);
    EXPECT_LE(OptimalityDefect(N, G, v - v_start), 1e-12);
  }
}

// Pendulum whose angle is driven: θ = θ₀ + ω t (rheonomic row, ∂g/∂t = −ω).
std::shared_ptr<const PlanarModel> DrivenPendulum(double theta0, double omega) {
  PendulumParams p;
  p.theta = theta0;
  p.omega = omega;
  PlanarModelBuilder builder;
  auto base = MakePendulum(p);
  builder.AddBody(base->bodies()[0]);
  builder.AddJoint(base->joints()[0]);
  PlanarJoint driver;
  driver.name = "motor";
  driver.type = PlanarJointType::kAngleDriver;
  driver.body_a = kGround;
  driver.body_b = 0;
  driver.angle0 = theta0;
  driver.rate = omega;
  builder.AddJoint(driver);
  return builder.Build();
}

TEST(ProjectVelocitiesTest, DriverRowGivesRheonomicVelocity) {
  const double theta0 = 0.4;
  const double omega = 2.5;
  const double t = 0.2;
  auto model = DrivenPendulum(theta0, omega);
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(system.constraint_info(2).name, "motor.angle");

  // Positions at time t: θ must become θ₀ + ω t.
  Eigen::VectorXd q = model->InitialPositions();
  const ProjectionResult pos = ProjectPositions(system, t, rows, {}, &q);
  ASSERT_TRUE(pos.converged);
  EXPECT_NEAR(q(2), theta0 + omega * t, 1e-12);  // the projection tolerance on g

  // Velocities from rest: G ṽ = −∂g/∂t, so θ̇ = ω and the pivot stays still.
  Eigen::VectorXd v = Eigen::VectorXd::Zero(3);
  const ProjectionResult vel = ProjectVelocities(system, t, q, rows, {}, &v);
  ASSERT_TRUE(vel.converged);
  EXPECT_EQ(vel.rank, 3);
  EXPECT_NEAR(v(2), omega, 1e-12);  // the projection tolerance on G v + ∂g/∂t
  const double theta = q(2);
  EXPECT_NEAR(v(0), PendulumParams{}.ell * omega * std::cos(theta), 1e-12);
  EXPECT_NEAR(v(1), PendulumParams{}.ell * omega * std::sin(theta), 1e-12);
  Eigen::MatrixXd G;
  Eigen::VectorXd g_t;
  system.ConstraintJacobian(t, q, rows, &G);
  system.ConstraintTimeDerivative(t, q, rows, &g_t);
  EXPECT_LE((G * v + g_t).lpNorm<Eigen::Infinity>(), 1e-12);
}

TEST(ProjectVelocitiesTest, RedundantRows) {
  PendulumParams p;
  p.joint_copies = 2;
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  Eigen::VectorXd v = Eigen::Vector3d(1.0, -2.0, 0.5);
  const ProjectionResult result =
      ProjectVelocities(system, 0.0, model->InitialPositions(), rows, {}, &v);
  ASSERT_TRUE(result.converged);
  EXPECT_EQ(result.rank, 2);
  EXPECT_LE(result.residual, 1e-12);
}

// A point mass in the plane (M = diag(2, 5)) on two unit circles centred at (0, 0) and (d, 0),
// d = 2 x₀ with x₀² + y₀² = 1: they meet at (x₀, ±y₀), and G = 2 [x₀ y₀; −x₀ y₀] has singular
// values 2√2 x₀ and 2√2 y₀. For y₀ → 0 the circles become tangent (a singular configuration:
// G loses rank, as the double four-bar does when its bars lie on the ground line).
std::unique_ptr<LagrangianSystem> TwoCircles(double y0) {
  const double d = 2.0 * std::sqrt(1.0 - y0 * y0);
  LagrangianCallbacks callbacks;
  callbacks.n = 2;
  callbacks.constant_mass = true;
  callbacks.mass = [](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    *M = Eigen::Vector2d(2.0, 5.0).asDiagonal();
  };
  auto system = std::make_unique<LagrangianSystem>(callbacks);
  ConstraintCallbacks circles;
  circles.rows.resize(2);
  circles.rows[0].name = "circle0";
  circles.rows[1].name = "circle1";
  circles.values = [d](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    g->resize(2);
    *g << q.squaredNorm() - 1.0, (q - Eigen::Vector2d(d, 0.0)).squaredNorm() - 1.0;
  };
  circles.jacobian = [d](double, const Eigen::VectorXd& q, Eigen::MatrixXd* G) {
    G->resize(2, 2);
    G->row(0) = 2.0 * q.transpose();
    G->row(1) = 2.0 * (q - Eigen::Vector2d(d, 0.0)).transpose();
  };
  system->AddConstraintBlock(std::make_shared<CallbackConstraints>(circles, 2));
  return system;
}

TEST(ProjectVelocitiesTest, NearSingularConfigurationGetsTheFullCorrection) {
  // y₀ = 1e-6: W = G M⁻¹ Gᵀ has eigenvalues in the ratio ~y₀² = 1e-12, below the 1e-10 rank
  // threshold of a rank-revealing factorization of W, yet G has full rank 2 and the only
  // velocity with G ṽ = 0 is ṽ = 0 (closed form).
  const double y0 = 1e-6;
  auto system = TwoCircles(y0);
  const std::vector<int> rows = {0, 1};
  const Eigen::VectorXd q = Eigen::Vector2d(std::sqrt(1.0 - y0 * y0), y0);
  Eigen::VectorXd v = Eigen::Vector2d(0.3, -0.7);
  ProjectionOptions options;
  options.tolerance = 1e-14;
  const ProjectionResult result = ProjectVelocities(*system, 0.0, q, rows, options, &v);
  ASSERT_TRUE(result.converged);
  EXPECT_LE(result.residual, options.tolerance);
  // ‖G ṽ‖∞ ≤ 1e-14 bounds ṽ_x by 1e-14 / (2 x₀) and ṽ_y by 1e-14 / (2 y₀) = 5e-9.
  EXPECT_NEAR(v(0), 0.0, 1e-14);
  EXPECT_NEAR(v(1), 0.0, 5e-9);
}

TEST(ProjectVelocitiesTest, SingularConfigurationGivesTheMassOrthogonalProjection) {
  // y₀ = 0: tangent circles, G = [2 0; −2 0] has rank 1 and the rows are consistent
  // (g_t = 0). The M-orthogonal projection onto {ṽ_x = 0} keeps ṽ_y (closed form: M diagonal).
  auto system = TwoCircles(0.0);
  const std::vector<int> rows = {0, 1};
  const Eigen::VectorXd q = Eigen::Vector2d(1.0, 0.0);
  Eigen::VectorXd v = Eigen::Vector2d(0.3, -0.7);
  const ProjectionResult result = ProjectVelocities(*system, 0.0, q, rows, {}, &v);
  ASSERT_TRUE(result.converged);
  EXPECT_EQ(result.rank, 1);
  // The residual tolerance 1e-12 (default) bounds ṽ_x by 1e-12 / 2; ṽ_y is untouched up to
  // round-off (the correction is M⁻¹Gᵀμ, zero in y).
  EXPECT_NEAR(v(0), 0.0, 1e-12);
  EXPECT_NEAR(v(1), -0.7, 1e-15);
}

// Tangent circles (G = [2 0; −2 0], rank 1) with slightly inconsistent rates ∂g/∂t = (0, c):
// G ṽ + ∂g/∂t = (2ṽ_x, c − 2ṽ_x), whose ∞-norm is smallest, |c|/2, at ṽ_x = c/4 (closed
// form): no velocity reaches a tolerance below |c|/2, as a pile's nearly redundant rows.
TEST(ProjectVelocitiesTest, StalledResidualIsAcceptedOnlyBelowTheStallTolerance) {
  auto system = TwoCircles(0.0);
  const std::vector<int> rows = {0, 1};
  const Eigen::VectorXd q = Eigen::Vector2d(1.0, 0.0);
  auto with_rate = [&](double c, double stall_tolerance, Eigen::VectorXd* v) {
    ConstraintCallbacks rates;
    rates.rows.resize(2);
    rates.rows[0].name = "a";
    rates.rows[1].name = "b";
    rates.values = [](double, const Eigen::VectorXd& x, Eigen::VectorXd* g) {
      *g = Eigen::Vector2d(x.squaredNorm() - 1.0,
                           (x - Eigen::Vector2d(2.0, 0.0)).squaredNorm() - 1.0);
    };
    rates.jacobian = [](double, const Eigen::VectorXd& x, Eigen::MatrixXd* G) {
      G->resize(2, 2);
      G->row(0) = 2.0 * x.transpose();
      G->row(1) = 2.0 * (x - Eigen::Vector2d(2.0, 0.0)).transpose();
    };
    rates.time_derivative = [c](double, const Eigen::VectorXd&, Eigen::VectorXd* g_t) {
      *g_t = Eigen::Vector2d(0.0, c);
    };
    LagrangianCallbacks callbacks;
    callbacks.n = 2;
    callbacks.constant_mass = true;
    callbacks.mass = [](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
      *M = Eigen::Vector2d(2.0, 5.0).asDiagonal();
    };
    LagrangianSystem sys(callbacks);
    sys.AddConstraintBlock(std::make_shared<CallbackConstraints>(rates, 2));
    ProjectionOptions options;
    options.stall_tolerance = stall_tolerance;
    return ProjectVelocities(sys, 0.0, q, rows, options, v);
  };
  const Eigen::VectorXd v0 = Eigen::Vector2d(0.3, -0.7);
  // c = 2e-11: the best residual 1e-11 is above the tolerance 1e-12 and below 1e-9.
  Eigen::VectorXd v = v0;
  EXPECT_FALSE(with_rate(2e-11, 0.0, &v).converged);
  EXPECT_EQ(v, v0);  // unchanged on failure (exact: nothing written)
  const ProjectionResult accepted = with_rate(2e-11, 1e-9, &v);
  ASSERT_TRUE(accepted.converged);
  // The best iterate is within a factor 2 of the closed-form floor |c|/2, and the M-orthogonal
  // correction leaves ṽ_y untouched up to round-off.
  EXPECT_GE(accepted.residual, 1e-11 * (1.0 - 1e-6));
  EXPECT_LE(accepted.residual, 2e-11);
  EXPECT_NEAR(v(1), -0.7, 1e-15);
  // c = 1e-3: inconsistent rows, not round-off: the stall bound does not hide them.
  v = v0;
  EXPECT_FALSE(with_rate(1e-3, 1e-9, &v).converged);
  EXPECT_EQ(v, v0);
}

TEST(ProjectPositionsTest, ToleranceBelowTheRoundOffFloorIteratesTowardsTheLowerFloor) {
  // A pendulum turned to θ = 31 rad (the planar double four-bar's cranks reach that in 20 s):
  // the floor 16 ε ‖q‖∞ is 1.1e-13. A violation of 5e-14 (below it) with a tolerance of 1e-16
  // used to be returned untouched; now Newton iterates while the residual halves and stops on
  // the lower floor 2 ε ‖q‖∞ = 1.4e-14 or below it (DOPRI5's projection near singular
  // configurations, integrators/dopri5.h).
  PendulumParams p;
  p.theta = 31.0;
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  Eigen::VectorXd q = model->InitialPositions();
  q(0) += 5e-14;
  ASSERT_GT(ConstraintNorm(system, 0.0, q, rows), 4e-14);
  ProjectionOptions options;
  options.tolerance = 1e-16;
  const ProjectionResult result = ProjectPositions(system, 0.0, rows, options, &q);
  ASSERT_TRUE(result.converged);
  EXPECT_GE(result.iterations, 1);
  // 2 ε ‖q‖∞ = 1.4e-14, the lower floor (engine/projection.cc).
  EXPECT_LE(result.residual, 1.4e-14);
  EXPECT_LE(ConstraintNorm(system, 0.0, q, rows), 1.4e-14);
}

// ConstrainedDynamics::RemoveConstrainedPart applies x ← x − M⁻¹Gᵀ W⁺ G x at the last Solve's
// state: the operator of the velocity projection (36) for g_t = 0, which ProjectVelocities
// applies by its own route (engine/projection.cc).
TEST(RemoveConstrainedPartTest, MatchesTheVelocityProjection) {
  SliderCrankParams p;
  auto model = MakeSliderCrank(p);
  PlanarMultibodySystem system(model);
  const std::vector<int> rows = AllRows(system);
  const Eigen::VectorXd q = model->InitialPositions();
  ConstrainedDynamics dynamics(system);
  Eigen::VectorXd vdot, lambda;
  ASSERT_TRUE(dynamics.Solve(0.0, q, model->InitialVelocities(), rows, &vdot, &lambda).ok);
  Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(system.nv(), -1.0, 2.0);
  Eigen::VectorXd projected = x;
  ProjectionOptions options;
  options.tolerance = 1e-14;
  ASSERT_TRUE(ProjectVelocities(system, 0.0, q, rows, options, &projected).converged);
  ASSERT_TRUE(dynamics.RemoveConstrainedPart(&x));
  // Both are the same linear operator on an O(1) vector with κ(W) = O(100): round-off ~1e-13.
  EXPECT_LT((x - projected).lpNorm<Eigen::Infinity>(), 1e-12);
  Eigen::MatrixXd G;
  system.ConstraintJacobian(0.0, q, rows, &G);
  EXPECT_LT((G * x).lpNorm<Eigen::Infinity>(), 1e-12);
}

TEST(RemoveConstrainedPartTest, NearSingularConfigurationRemovesTheFullConstrainedPart) {
  // The two circles at y₀ = 1e-6 (W's eigenvalues in the ratio 1e-12, below the 1e-10 rank
  // threshold): G has full rank 2, null(G) = {0}, so the whole vector is constrained and must go,
  // also its y part, along the near-singular direction (a rank decision would keep it).
  const double y0 = 1e-6;
  auto system = TwoCircles(y0);
  const std::vector<int> rows = {0, 1};
  const Eigen::VectorXd q = Eigen::Vector2d(std::sqrt(1.0 - y0 * y0), y0);
  ConstrainedDynamics dynamics(*system);
  Eigen::VectorXd vdot, lambda;
  ASSERT_TRUE(dynamics.Solve(0.0, q, Eigen::Vector2d::Zero(), rows, &vdot, &lambda).ok);
  Eigen::VectorXd x = Eigen::Vector2d(0.3, -0.7);
  ASSERT_TRUE(dynamics.RemoveConstrainedPart(&x));
  // The remainder G x is reduced to 1e-12 of its initial ‖G x‖∞ ≈ 1.2 (the solver's target):
  // |x_x| ≤ 1.2e-12 / (2 x₀) and |x_y| ≤ 1.2e-12 / (2 y₀) = 6e-7.
  EXPECT_NEAR(x(0), 0.0, 1e-12);
  EXPECT_NEAR(x(1), 0.0, 6e-7);
}

TEST(RemoveConstrainedPartTest, NotAvailableWithoutADenseSolve) {
  PendulumParams p;
  auto model = MakePendulum(p);
  PlanarMultibodySystem system(model);
  ConstrainedDynamics dynamics(system);
  Eigen::VectorXd x = Eigen::Vector3d(1.0, 2.0, 3.0);
  EXPECT_FALSE(dynamics.RemoveConstrainedPart(&x));  // no Solve yet
  Eigen::VectorXd vdot, lambda;
  ASSERT_TRUE(
      dynamics.Solve(0.0, model->InitialPositions(), model->InitialVelocities(), {}, &vdot, &lambda)
          .ok);
  EXPECT_FALSE(dynamics.RemoveConstrainedPart(&x));                    // no rows
  EXPECT_NEAR((x - Eigen::Vector3d(1.0, 2.0, 3.0)).norm(), 0.0, 0.0);  // untouched
}

}  // namespace
}  // namespace saltus::engine
