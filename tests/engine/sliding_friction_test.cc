// engine::SlidingFrictionView (force directions of sliding contacts), the non-symmetric index-1
// solve of engine::ConstrainedDynamics, and the projections on velocity-level rows. The test
// bodies (a planar body on a line, a sphere on a plane) are those of the integrator tests
// (tests/integrators/friction_problems.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/projection.h"
#include "engine/sliding_friction.h"
#include "tests/engine/malloc_counter.h"
#include "tests/integrators/friction_problems.h"

namespace saltus::engine {
namespace {

using integrators::friction_problems::kGravity;
using integrators::friction_problems::PlanarBodyParameters;
using integrators::friction_problems::PlanarContactBody;
using integrators::friction_problems::PlanarSlide;
using integrators::friction_problems::SpatialSlide;
using integrators::friction_problems::SphereOnPlane;
using integrators::friction_problems::SphereParameters;

// A state of the sphere (q: centre, rotation coordinates; v: ẋ, ω) with slip velocity
// (ẋ − R ω_y, ẏ + R ω_x) = (3, 4) · scale.
void SphereState(const SphereParameters& p, double scale, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  *q = Eigen::VectorXd::Zero(6);
  (*q)(2) = p.R;
  (*q)(3) = 0.7;
  *v = Eigen::VectorXd::Zero(6);
  (*v)(0) = 1.0 * scale;
  (*v)(4) = -2.0 * scale / p.R;  // ẋ − R ω_y = 3 scale
  (*v)(1) = 4.0 * scale;
}

TEST(SlidingFrictionView, ForwardsItsBaseRowForRow) {
  SphereParameters p;
  p.g_x = 1.5;
  const SphereOnPlane sphere(p);
  SlidingFrictionView view(sphere);
  EXPECT_EQ(&view.base(), &sphere);
  ASSERT_EQ(view.num_constraints(), sphere.num_constraints());
  for (int r = 0; r < view.num_constraints(); ++r) {
    EXPECT_EQ(view.constraint_info(r).name, sphere.constraint_info(r).name);
    EXPECT_EQ(view.NormalRow(r), sphere.NormalRow(r));
  }
  EXPECT_EQ(view.TangentRows(0).size(), 2u);
  Eigen::VectorXd q, v;
  SphereState(p, 1.0, &q, &v);
  const std::vector<int> rows = {0, 1, 2};
  Eigen::MatrixXd M1, M2, G1, G2, H;
  Eigen::VectorXd F1, F2, g1, g2;
  sphere.MassMatrix(q, &M1);
  view.MassMatrix(q, &M2);
  sphere.Forces(0.1, q, v, &F1);
  view.Forces(0.1, q, v, &F2);
  sphere.ConstraintJacobian(0.1, q, rows, &G1);
  view.ConstraintJacobian(0.1, q, rows, &G2);
  sphere.ConstraintGamma(0.1, q, v, rows, &g1);
  view.ConstraintGamma(0.1, q, v, rows, &g2);
  // The same routines on the same data: exact equality.
  EXPECT_EQ(M1, M2);
  EXPECT_EQ(F1, F2);
  EXPECT_EQ(G1, G2);
  EXPECT_EQ(g1, g2);
  EXPECT_EQ(view.HasConstantMassMatrix(), sphere.HasConstantMassMatrix());
  // No sliding contact: ideal, H = G.
  EXPECT_FALSE(view.HasNonIdealForces());
  view.ForceDirections(0.1, q, v, rows, &H);
  EXPECT_EQ(H, G1);
}

// Plane: H_n = G_n − μ s G_T = (0, 1, 0) − 0.3 · (−1) · (1, 0, R) for a disk of radius 1 sliding
// with s = −1; the tangential row keeps its Jacobian.
TEST(SlidingFrictionView, PlanarForceDirectionWithTheSlipSign) {
  PlanarBodyParameters p;  // R = 1, μ = 0.3
  const PlanarContactBody disk(p);
  SlidingFrictionView view(disk);
  view.SetSlidingContacts({PlanarSlide(0.3, -1.0)});
  EXPECT_TRUE(view.HasNonIdealForces());
  Eigen::MatrixXd H;
  view.ForceDirections(0.0, Eigen::Vector3d(0.2, 1.0, 0.1), Eigen::Vector3d(-2.0, 0.0, 0.0),
                       std::vector<int>{1, 0}, &H);
  ASSERT_EQ(H.rows(), 2);
  // Sums of two exact products: exact to round-off of numbers of order 1.
  EXPECT_LE((H.row(0) - Eigen::RowVector3d(1.0, 0.0, 1.0)).norm(), 1e-15);
  EXPECT_LE((H.row(1) - Eigen::RowVector3d(0.3, 1.0, 0.3)).norm(), 1e-15);
  // From a given G: the same operations on the same numbers, so the same bits.
  Eigen::MatrixXd G, H_from_G;
  view.ConstraintJacobian(0.0, Eigen::Vector3d(0.2, 1.0, 0.1), std::vector<int>{1, 0}, &G);
  view.ForceDirectionsFromJacobian(0.0, Eigen::Vector3d(0.2, 1.0, 0.1),
                                   Eigen::Vector3d(-2.0, 0.0, 0.0), std::vector<int>{1, 0}, G,
                                   &H_from_G);
  EXPECT_EQ(H_from_G, H);
}

// Space, current direction: d = ġ_T/‖ġ_T‖ = (0.6, 0.8) for a slip velocity (3, 4);
// H_n = e_z − μ (0.6 G_T1 + 0.8 G_T2), G_T1 = (1, 0, 0, 0, −R, 0), G_T2 = (0, 1, 0, R, 0, 0).
// Below the slip-speed floor the fallback d₀ applies.
TEST(SlidingFrictionView, SpatialForceDirectionFollowsTheCurrentSlip) {
  SphereParameters p;
  const SphereOnPlane sphere(p);
  SlidingFrictionView view(sphere);
  const Eigen::Vector2d d0(0.0, -1.0);
  view.SetSlidingContacts({SpatialSlide(0.25, d0)});
  Eigen::VectorXd q, v, d;
  SphereState(p, 1.0, &q, &v);
  view.SlipDirectionAt(0, 0.0, q, v, &d);
  EXPECT_LE((d - Eigen::Vector2d(0.6, 0.8)).norm(), 1e-15);
  Eigen::MatrixXd H;
  view.ForceDirections(0.0, q, v, std::vector<int>{0}, &H);
  Eigen::RowVectorXd expected(6);
  expected << -0.25 * 0.6, -0.25 * 0.8, 1.0, -0.25 * 0.8 * p.R, 0.25 * 0.6 * p.R, 0.0;
  EXPECT_LE((H - expected).norm(), 1e-15);
  // Slip speed 5e-13 ≤ the default floor 1e-12: d = d₀.
  SphereState(p, 1e-13, &q, &v);
  view.SlipDirectionAt(0, 0.0, q, v, &d);
  EXPECT_EQ(d, d0);
  view.set_slip_speed_floor(1e-14);
  view.SlipDirectionAt(0, 0.0, q, v, &d);
  EXPECT_LE((d - Eigen::Vector2d(0.6, 0.8)).norm(), 1e-12);
  EXPECT_THROW(view.set_slip_speed_floor(0.0), std::invalid_argument);
}

TEST(SlidingFrictionView, RejectsInvalidSlidingContactsNamingThem) {
  SphereParameters p;
  const SphereOnPlane sphere(p);
  SlidingFrictionView view(sphere);
  const SlidingContact good = SpatialSlide(0.2, Eigen::Vector2d(1.0, 0.0));
  view.SetSlidingContacts({good});
  auto expect_throw = [&](std::vector<SlidingContact> set, const std::string& needle) {
    try {
      view.SetSlidingContacts(std::move(set));
      ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    // A rejected set leaves the previous one.
    ASSERT_EQ(view.sliding_contacts().size(), 1u);
    EXPECT_EQ(view.sliding_contacts()[0].mu, 0.2);
  };
  SlidingContact c = good;
  c.normal_row = 1;
  expect_throw({c}, "'contact.t1': not a unilateral row");
  c.normal_row = 3;
  expect_throw({c}, "normal row 3 outside [0, 3)");
  expect_throw({good, good}, "'contact': listed twice");
  c = good;
  c.mu = -0.1;
  expect_throw({c}, "'contact': friction coefficient must be a finite number >= 0");
  c.mu = std::numeric_limits<double>::quiet_NaN();
  expect_throw({c}, "friction coefficient");
  c = good;
  c.direction = Eigen::VectorXd::Ones(1);
  expect_throw({c}, "1 entries for 2 tangential rows");
  c.direction = Eigen::Vector2d(1.0, 1.0);
  expect_throw({c}, "unit vector");
  view.SetSlidingContacts({});
  EXPECT_FALSE(view.HasNonIdealForces());
}

// The non-symmetric index-1 solve on a block (R = 0) sliding down an incline with s = +1:
// λ_N = m g cos α, ẍ = g (sin α − μ cos α), ÿ = θ̈ = 0, to round-off of O(10) numbers. The
// frictionless view takes the ideal path: the same numbers as the base, bit for bit.
TEST(ConstrainedDynamicsNonIdeal, SlidingBlockOnAnIncline) {
  PlanarBodyParameters p;
  p.m = 2.0, p.R = 0.0, p.J = 0.3, p.alpha = 0.4, p.mu = 0.25;
  const PlanarContactBody block(p);
  SlidingFrictionView view(block);
  const Eigen::VectorXd q = Eigen::Vector3d(0.3, 0.0, 0.1), v = Eigen::Vector3d(1.0, 0.0, 0.0);
  const std::vector<int> rows = {0};
  Eigen::VectorXd vdot, lambda, vdot_base, lambda_base;
  ConstrainedDynamics on_base(block), on_view(view);
  ASSERT_TRUE(on_base.Solve(0.0, q, v, rows, &vdot_base, &lambda_base).ok);
  ASSERT_TRUE(on_view.Solve(0.0, q, v, rows, &vdot, &lambda).ok);
  EXPECT_EQ(vdot, vdot_base);
  EXPECT_EQ(lambda, lambda_base);

  view.SetSlidingContacts({PlanarSlide(p.mu, 1.0)});
  on_view.Restart();
  const DynamicsStatus status = on_view.Solve(0.0, q, v, rows, &vdot, &lambda);
  ASSERT_TRUE(status.ok);
  EXPECT_FALSE(status.sparse);
  EXPECT_LE(status.residual, 1e-14);
  EXPECT_NEAR(lambda(0), p.m * kGravity * std::cos(p.alpha), 1e-13);
  EXPECT_NEAR(vdot(0), kGravity * (std::sin(p.alpha) - p.mu * std::cos(p.alpha)), 1e-13);
  EXPECT_NEAR(vdot(1), 0.0, 1e-14);
  EXPECT_NEAR(vdot(2), 0.0, 1e-14);
  // RemoveConstrainedPart needs the symmetric W: not available after a non-ideal solve.
  Eigen::VectorXd x = Eigen::Vector3d(1.0, 1.0, 1.0);
  EXPECT_FALSE(on_view.RemoveConstrainedPart(&x));
}

// The non-symmetric W = G M⁻¹Hᵀ of the disk sliding (s = −1) with its tangential row also
// active (rows {0, 1}: W is 2 × 2, non-symmetric, well conditioned) is factored by the LU; the
// same rows with the normal row repeated ({0, 1, 0}: rank 2 of 3) go to the rank-revealing QR,
// which splits the normal multiplier equally between the copies (minimum norm) and gives the
// same v̇. Checked against the defining equations M v̇ = F + Hᵀλ and G v̇ + γ = 0 (numbers of
// order 10: round-off 1e-14) and against each other.
TEST(ConstrainedDynamicsNonIdeal, LuForFullRankRowsRankRevealingQrForRedundantRows) {
  PlanarBodyParameters p;  // R = 1, μ = 0.3
  p.alpha = 0.3;
  const PlanarContactBody disk(p);
  SlidingFrictionView view(disk);
  view.SetSlidingContacts({PlanarSlide(p.mu, -1.0)});
  ConstrainedDynamics dynamics(view);
  const Eigen::VectorXd q = Eigen::Vector3d(0.2, 1.0, 0.1), v = Eigen::Vector3d(-2.0, 0.0, 0.5);
  const std::vector<int> rows = {0, 1}, repeated = {0, 1, 0};
  Eigen::VectorXd vdot, lambda, vdot_qr, lambda_qr;
  const DynamicsStatus lu = dynamics.Solve(0.0, q, v, rows, &vdot, &lambda);
  ASSERT_TRUE(lu.ok);
  EXPECT_EQ(lu.rank, 2);
  EXPECT_GT(lu.pivot_ratio, 1e-3);
  EXPECT_LE(lu.residual, 1e-14);
  Eigen::MatrixXd M, H;
  Eigen::VectorXd F;
  view.MassMatrix(q, &M);
  view.Forces(0.0, q, v, &F);
  view.ForceDirections(0.0, q, v, rows, &H);
  EXPECT_LE((M * vdot - F - H.transpose() * lambda).lpNorm<Eigen::Infinity>(), 1e-13);

  for (int call = 0; call < 2; ++call) {  // the second call: the row set known to be redundant
    const DynamicsStatus qr = dynamics.Solve(0.0, q, v, repeated, &vdot_qr, &lambda_qr);
    ASSERT_TRUE(qr.ok);
    EXPECT_EQ(qr.rank, 2);
    EXPECT_EQ(qr.pivot_ratio, 0.0);
    EXPECT_LE((vdot_qr - vdot).lpNorm<Eigen::Infinity>(), 1e-13);
    EXPECT_NEAR(lambda_qr(0), 0.5 * lambda(0), 1e-13);
    EXPECT_NEAR(lambda_qr(2), 0.5 * lambda(0), 1e-13);
    EXPECT_NEAR(lambda_qr(1), lambda(1), 1e-13);
  }
  // Back to the full-rank rows: the LU again, the same numbers as the first call.
  Eigen::VectorXd vdot_again, lambda_again;
  EXPECT_GT(dynamics.Solve(0.0, q, v, rows, &vdot_again, &lambda_again).pivot_ratio, 1e-3);
  EXPECT_EQ(vdot_again, vdot);
  EXPECT_EQ(lambda_again, lambda);
}

// The non-symmetric path keeps the workspace promise of the symmetric one: no heap allocation
// after the first call with the same rows (the view's force directions included), here on the
// sphere sliding with the current slip direction (H depends on v).
TEST(ConstrainedDynamicsNonIdeal, NoAllocationAfterFirstCall) {
#ifdef SALTUS_COUNT_MALLOC
  SphereParameters p;
  p.g_x = 1.0;
  const SphereOnPlane sphere(p);
  SlidingFrictionView view(sphere);
  view.SetSlidingContacts({SpatialSlide(0.3, Eigen::Vector2d(1.0, 0.0))});
  ConstrainedDynamics dynamics(view);
  Eigen::VectorXd q, v, vdot, lambda;
  SphereState(p, 1.0, &q, &v);
  const std::vector<int> rows = {0};
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).ok);  // warm-up
  EXPECT_EQ(CountAllocations([&] {
              for (int k = 0; k < 10; ++k) {
                v(0) += 0.1;
                dynamics.Solve(0.01 * k, q, v, rows, &vdot, &lambda);
              }
            }),
            0);
  // The counter itself works (guards against a test that cannot fail).
  EXPECT_GE(CountAllocations([] {
              Eigen::VectorXd scratch(100);
              scratch.setZero();
            }),
            1);
#else
  GTEST_SKIP() << "malloc counting needs glibc without sanitizers";
#endif
}

// Sticking rows are velocity-level: ProjectPositions uses the normal row only (the tangential
// row's Values() are a poison value, friction_problems.h), ProjectVelocities both. The disk is
// lifted off the line by 1e-3 and its velocity slips; the mass-metric projections move y along
// G_n = e_y alone, and (ẋ, θ̇) to the nearest rolling velocity in the metric diag(m, J).
TEST(Projection, VelocityLevelRowsAreProjectedOnlyAtVelocityLevel) {
  PlanarBodyParameters p;  // m = 1, J = ½, R = 1
  const PlanarContactBody disk(p);
  const std::vector<int> rows = {0, 1};
  Eigen::VectorXd q = Eigen::Vector3d(0.4, p.R + 1e-3, 0.2);
  ProjectionOptions options;
  const ProjectionResult rp = ProjectPositions(disk, 0.0, rows, options, &q);
  ASSERT_TRUE(rp.converged);
  EXPECT_EQ(rp.rank, 1);
  EXPECT_NEAR(q(1), p.R, 1e-12);
  EXPECT_EQ(q(0), 0.4);
  EXPECT_EQ(q(2), 0.2);
  Eigen::VectorXd v = Eigen::Vector3d(1.0, 0.01, 0.0);  // slip ẋ + R θ̇ = 1
  const ProjectionResult rv = ProjectVelocities(disk, 0.0, q, rows, options, &v);
  ASSERT_TRUE(rv.converged);
  EXPECT_EQ(rv.rank, 2);
  EXPECT_NEAR(v(1), 0.0, 1e-12);
  EXPECT_NEAR(v(0) + p.R * v(2), 0.0, 1e-12);
  // M-orthogonal correction of the slip: δ = −M⁻¹G_Tᵀ (G_T M⁻¹ G_Tᵀ)⁻¹ · 1 with
  // G_T M⁻¹ G_Tᵀ = 1/m + R²/J = 3: δẋ = −1/3, δθ̇ = −2/3.
  EXPECT_NEAR(v(0), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(v(2), -2.0 / 3.0, 1e-12);
}

}  // namespace
}  // namespace saltus::engine
