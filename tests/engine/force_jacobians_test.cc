// Tangent matrices of MechanicalSystem: the analytic planar K = −∂F/∂q, C = −∂F/∂v against the
// base class's central finite differences, the finite-difference defaults against closed forms,
// and K_G = ∂(Gᵀλ)/∂q of a pendulum pin against its closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "engine/lagrangian_system.h"
#include "engine/planar_model.h"

namespace saltus::engine {
namespace {

// The base-class finite differences, reachable on a planar system through a thin wrapper that
// forwards everything except ForceJacobians.
class FiniteDifferencePlanar : public MechanicalSystem {
 public:
  explicit FiniteDifferencePlanar(std::shared_ptr<const PlanarMultibodySystem> sys)
      : sys_(std::move(sys)) {}
  int nq() const override { return sys_->nq(); }
  int nv() const override { return sys_->nv(); }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override {
    sys_->MassMatrix(q, M);
  }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override {
    sys_->Forces(t, q, v, F);
  }

 private:
  std::shared_ptr<const PlanarMultibodySystem> sys_;
};

// Two bodies joined to the ground and to each other by spring-dampers with and without rest
// length, a load off the centre of mass, gravity: every term of the analytic K and C is used.
std::shared_ptr<const PlanarMultibodySystem> MakeSpringySystem() {
  PlanarModelBuilder builder;
  PlanarBody a;
  a.name = "a";
  a.mass = 1.3;
  a.inertia = 0.2;
  const int ia = builder.AddBody(a);
  PlanarBody b = a;
  b.name = "b";
  const int ib = builder.AddBody(b);
  PlanarSpringDamper s1;
  s1.name = "s1";
  s1.body_a = kGround;
  s1.body_b = ia;
  s1.point_a = {0.1, 0.5};
  s1.point_b = {0.3, -0.2};
  s1.stiffness = 40.0;
  s1.damping = 3.0;
  s1.rest_length = 0.4;
  builder.AddSpringDamper(s1);
  PlanarSpringDamper s2;
  s2.name = "s2";
  s2.body_a = ia;
  s2.body_b = ib;
  s2.point_a = {-0.2, 0.1};
  s2.point_b = {0.25, 0.05};
  s2.stiffness = 25.0;
  s2.damping = 1.5;
  s2.rest_length = 0.0;
  builder.AddSpringDamper(s2);
  PlanarLoad load;
  load.name = "push";
  load.body = ib;
  load.force = {2.0, -1.0};
  load.point = {0.3, 0.4};
  load.torque = 0.7;
  builder.AddLoad(load);
  builder.SetGravity({0.0, -9.81});
  return std::make_shared<const PlanarMultibodySystem>(builder.Build());
}

TEST(ForceJacobiansTest, PlanarAnalyticMatchesFiniteDifferences) {
  auto sys = MakeSpringySystem();
  FiniteDifferencePlanar fd(sys);
  Eigen::VectorXd q(6), v(6);
  q << 0.3, -0.4, 0.7, 1.1, 0.2, -0.5;
  v << 0.5, -1.2, 2.0, -0.3, 0.8, -1.7;
  Eigen::MatrixXd K, C, K_fd, C_fd;
  sys->ForceJacobians(0.0, q, v, &K, &C);
  fd.ForceJacobians(0.0, q, v, &K_fd, &C_fd);
  // Central differences with ε ≈ 6e-6 · max(1, |x|∞): truncation ε²·|F'''| ≈ 1e-9 and round-off
  // machine-ε·|F|/ε ≈ 1e-10 for entries of size ~50 (stiffness 40, lever 0.5): 1e-6 is safe.
  EXPECT_LT((K - K_fd).lpNorm<Eigen::Infinity>(), 1e-6) << "K\n" << K << "\nK_fd\n" << K_fd;
  EXPECT_LT((C - C_fd).lpNorm<Eigen::Infinity>(), 1e-6) << "C\n" << C << "\nC_fd\n" << C_fd;
  // The matrices are not trivially zero (the comparison above would then be vacuous).
  EXPECT_GT(K.lpNorm<Eigen::Infinity>(), 10.0);
  EXPECT_GT(C.lpNorm<Eigen::Infinity>(), 1.0);
  // Null outputs are allowed.
  Eigen::MatrixXd K_only;
  sys->ForceJacobians(0.0, q, v, &K_only, nullptr);
  EXPECT_LT((K_only - K).lpNorm<Eigen::Infinity>(), 1e-12);  // same arithmetic
}

// Two bodies on revolute joints (ground–a and a–b) with a torsional spring-damper on each and a
// load scaled by a sine profile: the torsional K, C and the scaled load's K term are used.
std::shared_ptr<const PlanarMultibodySystem> MakeTorsionalSystem() {
  PlanarModelBuilder builder;
  PlanarBody a;
  a.name = "a";
  a.mass = 0.8;
  a.inertia = 0.05;
  const int ia = builder.AddBody(a);
  PlanarBody b = a;
  b.name = "b";
  const int ib = builder.AddBody(b);
  PlanarJoint pin;
  pin.name = "pin";
  pin.body_a = kGround;
  pin.body_b = ia;
  pin.point_b = {-0.3, 0.0};
  const int j0 = builder.AddJoint(pin);
  PlanarJoint elbow;
  elbow.name = "elbow";
  elbow.body_a = ia;
  elbow.body_b = ib;
  elbow.point_a = {0.3, 0.0};
  elbow.point_b = {-0.2, 0.1};
  const int j1 = builder.AddJoint(elbow);
  PlanarTorsionalSpring t0;
  t0.name = "t0";
  t0.joint = j0;
  t0.stiffness = 12.0;
  t0.damping = 0.7;
  t0.angle0 = 0.4;
  builder.AddTorsionalSpring(t0);
  PlanarTorsionalSpring t1;
  t1.name = "t1";
  t1.joint = j1;
  t1.stiffness = 30.0;
  t1.damping = 2.5;
  t1.angle0 = -0.3;
  builder.AddTorsionalSpring(t1);
  PlanarLoad load;
  load.name = "pulse";
  load.body = ib;
  load.force = {3.0, -2.0};
  load.point = {0.4, -0.1};
  load.torque = 0.5;
  TimeProfile sine;
  sine.kind = TimeProfile::Kind::kSine;
  sine.value0 = 0.5;
  sine.amplitude = 2.0;
  sine.frequency = 3.0;
  load.scale = sine;
  builder.AddLoad(load);
  builder.SetGravity({0.0, -9.81});
  return std::make_shared<const PlanarMultibodySystem>(builder.Build());
}

TEST(ForceJacobiansTest, PlanarTorsionalSpringAndScaledLoadMatchFiniteDifferences) {
  auto sys = MakeTorsionalSystem();
  FiniteDifferencePlanar fd(sys);
  Eigen::VectorXd q(6), v(6);
  q << 0.3, -0.4, 0.7, 1.1, 0.2, -0.5;
  v << 0.5, -1.2, 2.0, -0.3, 0.8, -1.7;
  const double t = 0.37;  // φ = 0.5 + 2 sin(1.11) ≈ 2.29
  Eigen::MatrixXd K, C, K_fd, C_fd;
  sys->ForceJacobians(t, q, v, &K, &C);
  fd.ForceJacobians(t, q, v, &K_fd, &C_fd);
  std::printf("torsional springs + scaled load: |K - K_fd| %.2e, |C - C_fd| %.2e\n",
              (K - K_fd).lpNorm<Eigen::Infinity>(), (C - C_fd).lpNorm<Eigen::Infinity>());
  // As above: central differences with ε ≈ 6e-6 · max(1, |x|∞), truncation ε²·|F'''| ≈ 1e-9
  // for entries of size ~30 (torsional terms are linear in θ, θ̇; the load's are sin/cos of size
  // ~10), round-off ≈ 1e-10: 1e-6 is safe.
  EXPECT_LT((K - K_fd).lpNorm<Eigen::Infinity>(), 1e-6) << "K\n" << K << "\nK_fd\n" << K_fd;
  EXPECT_LT((C - C_fd).lpNorm<Eigen::Infinity>(), 1e-6) << "C\n" << C << "\nC_fd\n" << C_fd;
  // The torsional entries themselves, so that the comparison is not vacuous: sums of the given
  // dampings (c_t0 + c_t1 on θ_a, −c_t1 between θ_a and θ_b), exact up to round-off.
  EXPECT_NEAR(C(2, 2), 0.7 + 2.5, 1e-12);
  EXPECT_NEAR(C(2, 5), -2.5, 1e-12);
  EXPECT_NEAR(C(5, 5), 2.5, 1e-12);
  EXPECT_GT(std::abs(K(5, 5) - 30.0), 1.0);  // the scaled load's rotation term is there too
}

TEST(ForceJacobiansTest, FiniteDifferenceDefaultsMatchClosedForm) {
  // Damped Duffing oscillator as a callback system: F = −k q − k3 q³ − c v q², so
  // K = k + 3 k3 q² + 2 c v q, C = c q².
  constexpr double k = 3.0, k3 = 0.5, c = 0.8;
  LagrangianCallbacks cb;
  cb.n = 1;  // M = I (no mass callback)
  cb.forces = [](double, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* F) {
    F->resize(1);
    (*F)(0) = -k * q(0) - k3 * q(0) * q(0) * q(0) - c * v(0) * q(0) * q(0);
  };
  LagrangianSystem sys(cb);
  Eigen::VectorXd q(1), v(1);
  q << 1.7;
  v << -0.6;
  Eigen::MatrixXd K, C;
  sys.ForceJacobians(0.0, q, v, &K, &C);
  const double K_exact = k + 3.0 * k3 * q(0) * q(0) + 2.0 * c * v(0) * q(0);
  const double C_exact = c * q(0) * q(0);
  // Central differences, ε = 6e-6 · 1.7: truncation ε² |F'''|/6 ≈ 1e-11; round-off ≈ 1e-10.
  EXPECT_NEAR(K(0, 0), K_exact, 1e-7);
  EXPECT_NEAR(C(0, 0), C_exact, 1e-7);
  Eigen::MatrixXd K_M;
  sys.MassMatrixProductJacobian(q, v, &K_M);
  EXPECT_NEAR(K_M(0, 0), 0.0, 1e-12);  // M = I is constant: exact zero
}

TEST(ForceJacobiansTest, ConstraintForceJacobianOfPendulumPin) {
  // Pin between the ground origin and the body point s = (0, ℓ): g = 0 − (r + R(θ) s), so
  // G = −[I, perp(s_w)], Gᵀλ = −(λ, perp(s_w)·λ) and ∂/∂θ of the last entry is +s_w·λ; every
  // other entry is 0.
  constexpr double ell = 0.7;
  PlanarModelBuilder builder;
  PlanarBody body;
  body.name = "bob";
  const int bob = builder.AddBody(body);
  PlanarJoint pin;
  pin.name = "pin";
  pin.body_a = kGround;
  pin.body_b = bob;
  pin.point_b = {0.0, ell};
  builder.AddJoint(pin);
  PlanarMultibodySystem sys(builder.Build());
  Eigen::VectorXd q(3);
  q << 0.2, -0.5, 0.9;
  Eigen::Vector2d lambda(1.5, -2.5);
  const std::vector<int> rows = {0, 1};
  Eigen::MatrixXd K_G;
  sys.ConstraintForceJacobian(0.0, q, rows, lambda, &K_G);
  const Eigen::Vector2d s_w(-ell * std::sin(q(2)), ell * std::cos(q(2)));
  Eigen::Matrix3d expected = Eigen::Matrix3d::Zero();
  expected(2, 2) = s_w.dot(lambda);
  // Central differences of sin/cos terms of size ~2: truncation ≈ ε²·2 ≈ 1e-10.
  EXPECT_LT((K_G - expected).lpNorm<Eigen::Infinity>(), 1e-8) << K_G;
  EXPECT_GT(std::abs(expected(2, 2)), 0.5);  // the check above is not vacuous
  EXPECT_THROW(sys.ConstraintForceJacobian(0.0, q, rows, Eigen::VectorXd(3), &K_G),
               std::invalid_argument);
}

TEST(ForceJacobiansTest, ConstraintVelocityJacobianOfPendulumPin) {
  // Same pin: G v = −(ṙ + θ̇ perp(s_w)), and ∂/∂θ at fixed v is −θ̇ perp(perp(s_w)) = θ̇ s_w;
  // every other column is 0 (no time dependence).
  constexpr double ell = 0.7;
  PlanarModelBuilder builder;
  PlanarBody body;
  body.name = "bob";
  const int bob = builder.AddBody(body);
  PlanarJoint pin;
  pin.name = "pin";
  pin.body_a = kGround;
  pin.body_b = bob;
  pin.point_b = {0.0, ell};
  builder.AddJoint(pin);
  PlanarMultibodySystem sys(builder.Build());
  Eigen::VectorXd q(3), v(3);
  q << 0.2, -0.5, 0.9;
  v << 0.3, -0.1, 1.7;
  const std::vector<int> rows = {0, 1};
  Eigen::MatrixXd Z;
  sys.ConstraintVelocityJacobian(0.0, q, v, rows, &Z);
  const Eigen::Vector2d s_w(-ell * std::sin(q(2)), ell * std::cos(q(2)));
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(2, 3);
  expected.col(2) = v(2) * s_w;
  // Central differences of sin/cos terms of size ~1.2 (θ̇ ℓ): truncation ≈ ε²·1.2 ≈ 5e-11.
  EXPECT_LT((Z - expected).lpNorm<Eigen::Infinity>(), 1e-8) << Z;
  EXPECT_GT(expected.col(2).norm(), 0.5);  // the check above is not vacuous
}

}  // namespace
}  // namespace saltus::engine
