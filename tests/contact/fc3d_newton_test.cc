// SolveFc3dNewton (contact/fc3d_newton.h) on one- and two-contact problems with closed-form
// answers, including a rank-deficient W (two coincident contacts) where only the proximal
// regularization keeps the Newton matrix regular. The captured pile steps are in
// friction_bank_test.
#include "contact/fc3d_newton.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace saltus::contact {
namespace {

Eigen::SparseMatrix<double> Sparse(const Eigen::MatrixXd& W) { return W.sparseView(); }

// Newton converges quadratically near the answer: the answers below are exact to round-off, so
// 1e-12 on unit data leaves a margin of 1e3 over double precision.
constexpr double kClose = 1e-12;

TEST(Fc3dNewton, OneContactOpenStickAndSlideMatchTheirClosedForms) {
  const Eigen::SparseMatrix<double> W = Sparse(Eigen::Matrix3d::Identity());
  const Eigen::VectorXd mu = Eigen::VectorXd::Constant(1, 0.5);
  const Eigen::VectorXd r0 = Eigen::VectorXd::Zero(3);
  // Separating: r = 0.
  Fc3dNewtonResult s = SolveFc3dNewton(W, Eigen::Vector3d(1.0, 0.3, 0.0), mu, {}, r0);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_NEAR(s.r.norm(), 0.0, kClose);
  // Pushed with a tangential load inside the cone (0.2 ≤ 0.5 · 1): stick, r = −b.
  s = SolveFc3dNewton(W, Eigen::Vector3d(-1.0, 0.2, -0.1), mu, {}, r0);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_NEAR((s.r - Eigen::Vector3d(1.0, -0.2, 0.1)).norm(), 0.0, kClose);
  // Tangential load 2 > μ r_N = 0.5: slide, u_N = 0 so r_N = 1, r_T = μ r_N along −u_T, and
  // u_T = r_T + b_T = (−1.5, 0).
  s = SolveFc3dNewton(W, Eigen::Vector3d(-1.0, -2.0, 0.0), mu, {}, r0);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_NEAR((s.r - Eigen::Vector3d(1.0, 0.5, 0.0)).norm(), 0.0, kClose);
  EXPECT_LE(s.residual, 1e-10);
}

TEST(Fc3dNewton, TwoCoincidentContactsShareTheLoad) {
  // W = [I I; I I] (rank 3 of 6): only r_1 + r_2 is determined, = (1, −0.2, 0) (stick, 0.2 ≤ 0.5).
  Eigen::MatrixXd Wd(6, 6);
  Wd << Eigen::Matrix3d::Identity(), Eigen::Matrix3d::Identity(), Eigen::Matrix3d::Identity(),
      Eigen::Matrix3d::Identity();
  Eigen::VectorXd b(6);
  b << -1.0, 0.2, 0.0, -1.0, 0.2, 0.0;
  const Eigen::VectorXd mu = Eigen::VectorXd::Constant(2, 0.5);
  const Fc3dNewtonResult s = SolveFc3dNewton(Sparse(Wd), b, mu, {}, Eigen::VectorXd::Zero(6));
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_LE(s.residual, 1e-10);
  const Eigen::Vector3d sum = s.r.head<3>() + s.r.tail<3>();
  // The residual bounds the error of u = W r + b = sum + b_1 componentwise.
  EXPECT_NEAR((sum - Eigen::Vector3d(1.0, -0.2, 0.0)).norm(), 0.0, 1e-9);
  for (int k = 0; k < 2; ++k) {
    EXPECT_LE(s.r.segment<2>(3 * k + 1).norm(), 0.5 * s.r[3 * k] + 1e-9);  // in the cone
  }
}

TEST(Fc3dNewton, BadInputThrows) {
  const Eigen::SparseMatrix<double> W = Sparse(Eigen::Matrix3d::Identity());
  const Eigen::Vector3d b(-1.0, 0.0, 0.0);
  const Eigen::VectorXd mu = Eigen::VectorXd::Constant(1, 0.5);
  EXPECT_THROW(SolveFc3dNewton(W, b, Eigen::VectorXd::Constant(2, 0.5), {}, b),
               std::invalid_argument);
  EXPECT_THROW(SolveFc3dNewton(W, b, Eigen::VectorXd::Constant(1, -0.1), {}, b),
               std::invalid_argument);
  Fc3dNewtonOptions o;
  o.max_iterations = 0;
  EXPECT_THROW(SolveFc3dNewton(W, b, mu, o, b), std::invalid_argument);
  EXPECT_THROW(SolveFc3dNewton(W, Eigen::Vector3d(NAN, 0.0, 0.0), mu, {}, b),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
