// SolveFc3dNewton (contact/fc3d_newton.h) on one- and two-contact problems with closed-form
// answers, including a rank-deficient W (two coincident contacts) where only the proximal
// regularization keeps the Newton matrix regular. The captured pile steps are in
// friction_bank_test.
#include "contact/fc3d_newton.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "contact/fc3d_newton_internal.h"

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

// The Jacobian of Φ_ε with respect to (r, u) (3 × 6) by central differences of step h; ε = 0 is
// the Alart–Curnier function Φ.
Eigen::Matrix<double, 3, 6> CentralDifferences(const Eigen::Vector3d& r, const Eigen::Vector3d& u,
                                               double mu, double rho_n, double rho_t, double h,
                                               double eps = 0.0) {
  Eigen::Matrix<double, 6, 1> x;
  x << r, u;
  Eigen::Matrix<double, 3, 6> J;
  for (int j = 0; j < 6; ++j) {
    Eigen::Matrix<double, 6, 1> xp = x, xm = x;
    xp[j] += h;
    xm[j] -= h;
    const auto at = [&](const Eigen::Matrix<double, 6, 1>& y) {
      const Eigen::Vector3d ry = y.head<3>(), uy = y.tail<3>();
      return eps > 0.0 ? fc3d_internal::SmoothedAlartCurnier(ry, uy, mu, rho_n, rho_t, eps).phi
                       : fc3d_internal::AlartCurnier(ry, uy, mu, rho_n, rho_t).phi;
    };
    J.col(j) = (at(xp) - at(xm)) / (2.0 * h);
  }
  return J;
}

Eigen::Matrix<double, 3, 6> Analytic(const Eigen::Vector3d& r, const Eigen::Vector3d& u, double mu,
                                     double rho_n, double rho_t) {
  const fc3d_internal::AcBlock k = fc3d_internal::AlartCurnier(r, u, mu, rho_n, rho_t);
  Eigen::Matrix<double, 3, 6> J;
  J << k.A, k.B;
  return J;
}

// Away from the kinks Φ is smooth and (A, B) is its Jacobian. Central differences with h = 1e-6
// on data of order 1 err by O(h²) ≈ 1e-12 (truncation) plus ε|Φ|/h ≈ 1e-9 (round-off): 1e-7.
TEST(Fc3dNewton, AlartCurnierJacobianMatchesFiniteDifferencesAwayFromTheKinks) {
  const double mu = 0.5, rho_n = 0.7, rho_t = 1.3;
  struct Point {
    const char* name;
    Eigen::Vector3d r, u;
  };
  // open: x_N = 0.2 − 0.7 · 1 < 0; stick: x_N = 2.07, R = 1.035, ‖x_T‖ = 0.40;
  // slide: x_N = 1.65, R = 0.825, ‖x_T‖ = 2.95 (both tangents non-zero, so Γ is a full 2 × 2).
  const Point points[] = {
      {"open", {0.2, 0.3, -0.1}, {1.0, 0.4, 0.2}},
      // open with x_T = 0 (r_T = u_T = 0, as on a separating contact that NSGS left at r = 0):
      // Φ_T = r_T on the whole neighbourhood, so A_TT = I, B_TT = 0.
      {"open, x_T = 0", {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}},
      {"stick", {2.0, 0.3, -0.1}, {-0.1, 0.1, 0.2}},
      {"slide", {1.3, 0.9, -0.4}, {-0.5, -1.0, 1.2}},
  };
  for (const Point& p : points) {
    const Eigen::Matrix<double, 3, 6> fd = CentralDifferences(p.r, p.u, mu, rho_n, rho_t, 1e-6);
    EXPECT_LT((Analytic(p.r, p.u, mu, rho_n, rho_t) - fd).cwiseAbs().maxCoeff(), 1e-7) << p.name;
  }
}

// On a kink the element returned must be one of the one-sided limits of the Jacobian (each an
// element of Clarke's generalized Jacobian). Each limit is measured by central differences at a
// point δ = 1e-6 off the kink on its side with h = 1e-9 < δ: the error is L δ ≈ 1e-6 (the
// Jacobian of each piece is Lipschitz with L of order 1 on these data) plus ε|Φ|/h ≈ 1e-6: 1e-5.
// The two limits differ by order 1 (asserted first), so the test tells them apart.
TEST(Fc3dNewton, AlartCurnierJacobianOnAKinkIsAOneSidedLimit) {
  const double mu = 0.5, delta = 1e-6, h = 1e-9, tol = 1e-5;
  struct Kink {
    const char* name;
    Eigen::Vector3d r, u, side;  // side: the direction in r that crosses the kink
    double rho_n, rho_t;
  };
  const Kink kinks[] = {
      // x_N = 1 − 2 · 0.5 = 0 exactly: between open and pressed (sliding, x_T ≠ 0).
      {"open|pressed", {1.0, 0.3, 0.0}, {0.5, 0.1, 0.0}, {1.0, 0.0, 0.0}, 2.0, 1.0},
      // x_N = 2, R = 1, x_T = (1, 0): ‖x_T‖ = R exactly, between stick and slide.
      {"stick|slide", {2.0, 1.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, 1.0, 1.0},
  };
  for (const Kink& k : kinks) {
    const Eigen::Matrix<double, 3, 6> minus =
        CentralDifferences(k.r - delta * k.side, k.u, mu, k.rho_n, k.rho_t, h);
    const Eigen::Matrix<double, 3, 6> plus =
        CentralDifferences(k.r + delta * k.side, k.u, mu, k.rho_n, k.rho_t, h);
    ASSERT_GT((plus - minus).cwiseAbs().maxCoeff(), 0.1) << k.name;
    const Eigen::Matrix<double, 3, 6> J = Analytic(k.r, k.u, mu, k.rho_n, k.rho_t);
    const double to_minus = (J - minus).cwiseAbs().maxCoeff();
    const double to_plus = (J - plus).cwiseAbs().maxCoeff();
    EXPECT_LT(std::min(to_minus, to_plus), tol) << k.name << ": " << to_minus << ", " << to_plus;
  }
}

// The smoothed function Φ_ε (contact/fc3d_newton.h, "Smoothing") is C¹ for ε > 0, so its
// (A, B) must be its Jacobian on the kinks of Φ as well. With ε = 10⁻² the curvature of Φ_ε is of
// order 1/ε, its third derivatives of order 1/ε²: central differences with h = 10⁻⁶ err by
// h²/ε² ≈ 10⁻⁸ plus round-off 10⁻¹⁶/h = 10⁻¹⁰, so 10⁻⁶.
TEST(Fc3dNewton, SmoothedJacobianMatchesFiniteDifferencesOnTheKinks) {
  const double mu = 0.5, eps = 1e-2, h = 1e-6;
  struct Point {
    const char* name;
    Eigen::Vector3d r, u;
    double rho_n, rho_t;
  };
  const Point points[] = {
      {"open|pressed", {1.0, 0.3, 0.0}, {0.5, 0.1, 0.0}, 2.0, 1.0},  // x_N = 0
      {"stick|slide", {2.0, 1.0, 0.0}, {0.0, 0.0, 0.0}, 1.0, 1.0},   // ‖x_T‖ = R = 1
      {"stick|slide, oblique", {2.0, 0.6, 0.8}, {0.0, 0.0, 0.0}, 1.0, 1.0},
      {"x_T = 0", {2.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, 1.0, 1.0},
      {"slide", {1.3, 0.9, -0.4}, {-0.5, -1.0, 1.2}, 0.7, 1.3},
      {"open", {0.2, 0.3, -0.1}, {1.0, 0.4, 0.2}, 0.7, 1.3},
  };
  for (const Point& p : points) {
    const Eigen::Matrix<double, 3, 6> fd =
        CentralDifferences(p.r, p.u, mu, p.rho_n, p.rho_t, h, eps);
    const fc3d_internal::AcBlock k =
        fc3d_internal::SmoothedAlartCurnier(p.r, p.u, mu, p.rho_n, p.rho_t, eps);
    Eigen::Matrix<double, 3, 6> J;
    J << k.A, k.B;
    EXPECT_LT((J - fd).cwiseAbs().maxCoeff(), 1e-6) << p.name;
  }
}

// Φ_ε − Φ: φ_ε(x_N) − max(0, x_N) ∈ [0, ε], so |Φ_N,ε − Φ_N| ≤ ε; P_ε and P are both along x_T,
// and their lengths differ by at most max(μ ε, ε) (R_ε − R ∈ [0, μ ε], and M_ε exceeds
// max(‖x_T‖, R_ε) by at most ε), so ‖Φ_T,ε − Φ_T‖ ≤ (1 + μ) ε. Checked at ε = 10⁻³ and 10⁻⁸, on
// and off the kinks, with 10⁻¹⁴ for round-off on data of order 1.
TEST(Fc3dNewton, SmoothedFunctionTendsToTheAlartCurnierFunction) {
  const double mu = 0.5;
  const Eigen::Vector3d rs[] = {{1.0, 0.3, 0.0},  {2.0, 1.0, 0.0},  {2.0, 0.0, 0.0},
                                {1.3, 0.9, -0.4}, {0.2, 0.3, -0.1}, {2.0, 0.3, -0.1}};
  const Eigen::Vector3d us[] = {{0.5, 0.1, 0.0},   {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0},
                                {-0.5, -1.0, 1.2}, {1.0, 0.4, 0.2}, {-0.1, 0.1, 0.2}};
  for (const double eps : {1e-3, 1e-8}) {
    for (int i = 0; i < 6; ++i) {
      const Eigen::Vector3d phi = fc3d_internal::AlartCurnier(rs[i], us[i], mu, 1.0, 1.0).phi;
      const Eigen::Vector3d phi_eps =
          fc3d_internal::SmoothedAlartCurnier(rs[i], us[i], mu, 1.0, 1.0, eps).phi;
      EXPECT_LE(std::abs(phi_eps[0] - phi[0]), eps + 1e-14) << i;
      EXPECT_LE((phi_eps - phi).tail<2>().norm(), (1.0 + mu) * eps + 1e-14) << i;
    }
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
  o = Fc3dNewtonOptions{};
  o.rho_scale = 0.0;
  EXPECT_THROW(SolveFc3dNewton(W, b, mu, o, b), std::invalid_argument);
  o.rho_scale = NAN;
  EXPECT_THROW(SolveFc3dNewton(W, b, mu, o, b), std::invalid_argument);
  EXPECT_THROW(SolveFc3dNewton(W, Eigen::Vector3d(NAN, 0.0, 0.0), mu, {}, b),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
