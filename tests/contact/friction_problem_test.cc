// Frictional impact and contact problems (contact/friction_problem.h) against closed forms.
//
// Tolerances: the answers below are closed forms exact up to round-off; the only approximate step
// is the complementarity solve, accepted at a law residual of 1e-10 relative to max(1, ‖b‖∞)
// (Lemke and the enumeration's simplex reach ~1e-15 in practice; fc3d's Newton stops at the
// tolerance). Impulses and accelerations are therefore compared at 1e-9 times the problem's
// scale (the residual tolerance with a margin of 10 for the conditioning of these 2–6 unknown
// problems), unless a test says otherwise.

#include "contact/friction_problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "contact/impact_problem.h"
#include "contact/planar_contacts.h"
#include "engine/planar_model.h"
#include "friction_test_models.h"

// Siconos 4.4's lcp_enum (a fallback of contact::SolveLcp) never frees its enumeration state
// (32 bytes per call): a known upstream leak, suppressed for LeakSanitizer in SALTUS_SANITIZE
// builds (see tests/contact/impact_problem_test.cc).
extern "C" const char* __lsan_default_suppressions() { return "leak:enum_init\n"; }

namespace saltus::contact {
namespace {

using testing::AddPlanarContacts;
using testing::AddSpatialContacts;
using testing::PlanarBodies;
using testing::PlanarContactSpec;
using testing::SpatialBody;
using testing::SpatialContactSpec;

constexpr double kG = 9.81;
constexpr double kTol = 1e-9;  // see the header comment

std::vector<FrictionalContact> ContactsOf(const engine::MechanicalSystem& system, int first,
                                          int count, int rows_per_contact, double e = 0.0) {
  std::vector<FrictionalContact> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(FrictionalContact::FromSystem(system, first + rows_per_contact * i, e));
  }
  return out;
}

// ---- Planar impacts --------------------------------------------------------------------------

// A uniform disk (J = ½ m ρ²) hits a rough floor: u_N⁻ = ẏ, slip s⁻ = ẋ + ρ ω, W_NN = 1/m,
// W_TT = 1/m + ρ²/J = 3/m, W_NT = 0. P_N = −m (1 + e) ẏ; it sticks iff |s⁻| ≤ 3 μ (1 + e)|ẏ|,
// then P_T = −m s⁻/3 (u_T⁺ = 0); else P_T = −μ P_N sign(s⁻) and u_T⁺ = s⁻ + 3 P_T/m.
TEST(FrictionalImpact, DiskObliqueImpactStickOrSlipClosedForm) {
  const double m = 2.0, rho = 0.3, J = 0.5 * m * rho * rho;
  struct Case {
    double vx, vy, omega, e, mu;
  };
  for (const Case& c : {Case{1.0, -2.0, 0.0, 0.5, 0.5}, Case{1.0, -2.0, 0.0, 0.5, 0.05},
                        Case{-3.0, -1.0, 4.0, 0.0, 0.2}, Case{0.5, -1.0, -10.0, 1.0, 0.3},
                        Case{0.0, -1.0, 0.0, 0.3, 0.5}}) {
    auto system = PlanarBodies({{m, J}}, Eigen::Vector2d(0.0, -kG));
    const int first = AddPlanarContacts(
        system.get(), {{.name = "disk", .radius = rho, .offset = 0.0, .friction = c.mu}});
    Eigen::VectorXd q(3), v(3);
    q << 0.0, rho, 0.0;
    v << c.vx, c.vy, c.omega;
    const auto contacts = ContactsOf(*system, first, 1, 2, c.e);
    const FrictionalImpactResult r =
        SolveFrictionalImpact(*system, 0.0, q, v, {}, contacts, FrictionOptions{});
    ASSERT_TRUE(r.ok) << r.message;
    const double s = c.vx + rho * c.omega;
    const double PN = -m * (1.0 + c.e) * c.vy;
    const bool stick = std::abs(s) <= 3.0 * c.mu * (1.0 + c.e) * std::abs(c.vy);
    const double PT = stick ? -m * s / 3.0 : -c.mu * PN * (s > 0 ? 1.0 : -1.0);
    const double scale = m * (std::abs(c.vx) + std::abs(c.vy) + rho * std::abs(c.omega));
    EXPECT_NEAR(r.contacts[0].normal, PN, kTol * scale);
    EXPECT_NEAR(r.contacts[0].tangential[0], PT, kTol * scale);
    EXPECT_NEAR(r.v_plus[0], c.vx + PT / m, kTol * scale);
    EXPECT_NEAR(r.v_plus[1], c.vy + PN / m, kTol * scale);
    EXPECT_NEAR(r.v_plus[2], c.omega + rho * PT / J, kTol * scale / rho);
    EXPECT_NEAR(r.contacts[0].tangential_rate[0], stick ? 0.0 : s + 3.0 * PT / m, kTol * scale);
    EXPECT_EQ(r.contacts[0].mode,
              c.e > 0 ? ContactMode::kOpen : (stick ? ContactMode::kStick : ContactMode::kSlip));
    EXPECT_LE(r.residual, 1e-10);
    // A single contact on a free body with W_NT = 0 never gains energy (friction_problem.h).
    EXPECT_LE(r.kinetic_energy_change, 1e-12 * system->KineticEnergy(q, v));
    EXPECT_FALSE(r.energy_gain);
    EXPECT_EQ(r.diagnosis.status, Solvability::kUnique);
  }
}

// The same disk impact on the rows of the contact module (contact/planar_contacts.h: a disk–line
// contact with μ > 0 gets its tangential row, t = n turned by +π/2, so t = (−1, 0) on this floor):
// v⁺, P_N and |P_T| as in the closed form above, the tangential impulse opposing the slip.
TEST(FrictionalImpact, DiskOnPlanarContactModuleRows) {
  const double m = 2.0, rho = 0.3, J = 0.5 * m * rho * rho, mu = 0.05, e = 0.5;
  engine::PlanarModelBuilder builder;
  builder.SetGravity(Eigen::Vector2d(0.0, -kG));
  const int body = builder.AddBody(
      {.name = "disk", .mass = m, .inertia = J, .q0 = Eigen::Vector3d(0.0, rho, 0.0)});
  auto model = builder.Build();
  auto system = std::make_shared<engine::PlanarMultibodySystem>(model);
  PlanarContact c;
  c.name = "floor";
  c.type = PlanarContactType::kDiskLine;
  c.body_b = body;
  c.radius_b = rho;
  c.friction = mu;
  const int first = system->AddConstraintBlock(
      std::make_shared<PlanarContacts>(model, std::vector<PlanarContact>{c}));
  const auto contacts =
      std::vector<FrictionalContact>{FrictionalContact::FromSystem(*system, first, e)};
  ASSERT_EQ(contacts[0].num_tangent_rows, 1);
  Eigen::VectorXd q = model->InitialPositions(), v(3);
  v << 1.0, -2.0, 0.0;
  const FrictionalImpactResult r =
      SolveFrictionalImpact(*system, 0.0, q, v, {}, contacts, FrictionOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  const double s = v[0] + rho * v[2];                  // slip of the contact point, +x
  const double PN = -m * (1.0 + e) * v[1];             // 6 N s
  ASSERT_GT(std::abs(s), 3.0 * mu * (1.0 + e) * 2.0);  // slips through the impact
  const double Px = -mu * PN * (s > 0 ? 1.0 : -1.0);   // friction impulse along +x
  EXPECT_NEAR(r.contacts[0].normal, PN, kTol * m);
  EXPECT_NEAR(std::abs(r.contacts[0].tangential[0]), mu * PN, kTol * m);
  EXPECT_NEAR(r.v_plus[0], v[0] + Px / m, kTol);
  EXPECT_NEAR(r.v_plus[1], v[1] + PN / m, kTol);
  EXPECT_NEAR(r.v_plus[2], v[2] + rho * Px / J, kTol / rho);
  // The row's tangential rate is tᵀ(contact-point velocity) with t = (−1, 0).
  EXPECT_NEAR(r.contacts[0].tangential_rate[0], -(r.v_plus[0] + rho * r.v_plus[2]), kTol);
}

// Closed form of one planar contact with coupling W_NT ≠ 0 (Newton + Coulomb, e, μ), by cases:
// stick P = −W⁻¹ b if P_N ≥ 0 and |P_T| ≤ μ P_N; else slip with sign σ: P_T = −σ μ P_N,
// P_N = −b_N / (W_NN − σ μ W_NT) ≥ 0 and σ u_T⁺ ≥ 0.
Eigen::Vector2d OneContactImpulse(const Eigen::Matrix2d& W, const Eigen::Vector2d& b, double mu) {
  if (b[0] >= 0.0) return Eigen::Vector2d::Zero();
  const Eigen::Vector2d P = -W.ldlt().solve(b);
  if (P[0] >= 0.0 && std::abs(P[1]) <= mu * P[0]) return P;
  for (double sigma : {1.0, -1.0}) {
    const double PN = -b[0] / (W(0, 0) - sigma * mu * W(0, 1));
    const Eigen::Vector2d Q(PN, -sigma * mu * PN);
    if (PN >= 0.0 && sigma * (W.row(1).dot(Q) + b[1]) >= 0.0) return Q;
  }
  return Eigen::Vector2d::Constant(std::nan(""));
}

// A tilted block hits the floor with one corner: W_NT ≠ 0. μ sweeps across the stick/slip
// boundary; the closed form uses W = G M⁻¹ Gᵀ written out by hand for the corner.
TEST(FrictionalImpact, TiltedBlockCornerAgreesWithClosedFormAcrossStickSlip) {
  const double m = 1.5, a = 0.4, h = 0.2, J = m * (4 * a * a + 4 * h * h) / 12.0, th = 0.35;
  const Eigen::Vector2d s(-a, -h);
  const Eigen::Vector2d Rs = Eigen::Rotation2Dd(th) * s;
  const Eigen::Vector2d perp(-Rs.y(), Rs.x());
  Eigen::Matrix<double, 2, 3> G;
  G << 0.0, 1.0, perp.y(), 1.0, 0.0, perp.x();
  const Eigen::Matrix3d Minv = Eigen::Vector3d(1 / m, 1 / m, 1 / J).asDiagonal();
  const Eigen::Matrix2d W = G * Minv * G.transpose();
  int stick = 0, slip = 0;
  for (double mu : {0.02, 0.1, 0.2, 0.3, 0.5, 0.8, 1.5}) {
    for (double e : {0.0, 0.6}) {
      auto system = PlanarBodies({{m, J}}, Eigen::Vector2d(0.0, -kG));
      const int first = AddPlanarContacts(
          system.get(), {{.name = "corner", .point = s, .offset = 0.0, .friction = mu}});
      Eigen::VectorXd q(3), v(3);
      q << 0.0, -Rs.y(), th;
      v << 0.7, -1.3, 0.9;
      const Eigen::Vector2d u = G * v;
      const Eigen::Vector2d P = OneContactImpulse(W, Eigen::Vector2d((1 + e) * u[0], u[1]), mu);
      ASSERT_TRUE(P.allFinite());
      const FrictionalImpactResult r = SolveFrictionalImpact(
          *system, 0.0, q, v, {}, ContactsOf(*system, first, 1, 2, e), FrictionOptions{});
      ASSERT_TRUE(r.ok) << r.message;
      EXPECT_NEAR(r.contacts[0].normal, P[0], kTol * m * 2.0) << "mu " << mu << " e " << e;
      EXPECT_NEAR(r.contacts[0].tangential[0], P[1], kTol * m * 2.0) << "mu " << mu;
      const Eigen::Vector3d v_plus = v + Minv * G.transpose() * P;
      // θ̇ changes by P r/J (up to ~10 rad/s here): 1e-9 of the velocity scale.
      EXPECT_LE((r.v_plus - v_plus).lpNorm<Eigen::Infinity>(),
                kTol * (1.0 + v_plus.lpNorm<Eigen::Infinity>()));
      (std::abs(P[1]) < mu * P[0] * (1 - 1e-9) ? stick : slip) += 1;
    }
  }
  EXPECT_GT(stick, 0);  // both outcomes are exercised
  EXPECT_GT(slip, 0);
}

// Kane's double pendulum (Kane & Levinson 1985; Glocker, Multibody Syst. Dyn. 2013): two uniform
// rods (m = 1 kg, L = 1 m) hinged at the origin, angles from the downward vertical φ₁ = 0.5,
// φ₂ = 1.0 rad, φ̇ = (0, −1) rad/s, the tip of rod 2 striking a rough floor, e = 0.8, μ = 1
// (parameters ours, chosen where the law gains energy). The reference is computed in minimal
// coordinates φ (M(φ) = [[4/3, ½cos(φ₁−φ₂)], [½cos(φ₁−φ₂), 1/3]] m L², tip Jacobian by hand):
// it sticks (|P_T| = 0.467 < μ P_N = 0.789 N s) and T⁺ − T⁻ = +0.359 T⁻ — a 36 % gain that the
// solver (absolute coordinates, joints eliminated as bilateral rows) must report.
TEST(FrictionalImpact, KaneDoublePendulumEnergyGainIsReported) {
  const double m = 1.0, L = 1.0, p1 = 0.5, p2 = 1.0, e = 0.8, mu = 1.0;
  const Eigen::Vector2d phidot(0.0, -1.0);
  // Minimal-coordinate reference.
  Eigen::Matrix2d Mphi;
  Mphi << 4.0 / 3.0, 0.5 * std::cos(p1 - p2), 0.5 * std::cos(p1 - p2), 1.0 / 3.0;
  Mphi *= m * L * L;
  Eigen::Matrix2d Gphi;  // rows: normal (tip y), tangential (tip x)
  Gphi << L * std::sin(p1), L * std::sin(p2), L * std::cos(p1), L * std::cos(p2);
  const Eigen::Matrix2d Wphi = Gphi * Mphi.inverse() * Gphi.transpose();
  const Eigen::Vector2d u = Gphi * phidot;
  const Eigen::Vector2d P = OneContactImpulse(Wphi, Eigen::Vector2d((1 + e) * u[0], u[1]), mu);
  const Eigen::Vector2d phidot_plus = phidot + Mphi.inverse() * Gphi.transpose() * P;
  const double T_minus = 0.5 * phidot.dot(Mphi * phidot);
  const double dT = 0.5 * (phidot_plus - phidot).dot(Mphi * (phidot_plus + phidot));
  ASSERT_GT(dT, 0.3 * T_minus);

  // Absolute coordinates: rods as bodies (pivot at (0, L/2), tip at (0, −L/2) in body frame).
  engine::PlanarModelBuilder builder;
  builder.SetGravity(Eigen::Vector2d(0.0, -kG));
  const Eigen::Vector2d half(0.0, -L / 2);
  const Eigen::Vector2d c1 = Eigen::Rotation2Dd(p1) * half;
  const Eigen::Vector2d tip1 = 2.0 * c1;
  const Eigen::Vector2d c2 = tip1 + Eigen::Rotation2Dd(p2) * half;
  const Eigen::Vector2d tip2 = tip1 + 2.0 * (Eigen::Rotation2Dd(p2) * half);
  engine::PlanarBody b1{.name = "rod1",
                        .mass = m,
                        .inertia = m * L * L / 12.0,
                        .q0 = Eigen::Vector3d(c1.x(), c1.y(), p1)};
  engine::PlanarBody b2{.name = "rod2",
                        .mass = m,
                        .inertia = m * L * L / 12.0,
                        .q0 = Eigen::Vector3d(c2.x(), c2.y(), p2)};
  const int i1 = builder.AddBody(b1), i2 = builder.AddBody(b2);
  builder.AddJoint({.name = "pivot",
                    .body_a = engine::kGround,
                    .body_b = i1,
                    .point_b = Eigen::Vector2d(0.0, L / 2)});
  builder.AddJoint({.name = "knee",
                    .body_a = i1,
                    .body_b = i2,
                    .point_a = Eigen::Vector2d(0.0, -L / 2),
                    .point_b = Eigen::Vector2d(0.0, L / 2)});
  auto model = builder.Build();
  auto system = std::make_shared<engine::PlanarMultibodySystem>(model);
  const std::vector<int> joints = system->RowsOfKind(engine::ConstraintKind::kBilateral);
  const int first = AddPlanarContacts(
      system.get(),
      {{.name = "tip", .body = i2, .point = half, .offset = tip2.y(), .friction = mu}});
  const auto perp = [](const Eigen::Vector2d& a) { return Eigen::Vector2d(-a.y(), a.x()); };
  Eigen::VectorXd q = model->InitialPositions(), v(6);
  v.head<2>() = phidot[0] * perp(c1);
  v[2] = phidot[0];
  v.segment<2>(3) = phidot[0] * perp(tip1) + phidot[1] * perp(c2 - tip1);
  v[5] = phidot[1];
  const FrictionalImpactResult r = SolveFrictionalImpact(
      *system, 0.0, q, v, joints, ContactsOf(*system, first, 1, 2, e), FrictionOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.contacts[0].normal, P[0], kTol);
  EXPECT_NEAR(r.contacts[0].tangential[0], P[1], kTol);
  EXPECT_NEAR(system->KineticEnergy(q, v), T_minus, 1e-12);
  EXPECT_NEAR(r.kinetic_energy_change, dT, kTol);
  // Scleronomic joints kept at velocity level: the contact impulses' work is the whole ΔT.
  EXPECT_NEAR(r.contact_work, dT, kTol);
  EXPECT_TRUE(r.energy_gain);
  EXPECT_NE(r.message.find("contact impulses gained energy"), std::string::npos);
  EXPECT_NEAR(r.v_plus[2], phidot_plus[0], kTol);
  EXPECT_NEAR(r.v_plus[5], phidot_plus[1], kTol);
  EXPECT_LE(r.bilateral_residual, 1e-12);
  EXPECT_EQ(r.contacts[0].mode, ContactMode::kOpen);  // bounces off: u_N⁺ = −e u_N⁻ > 0
  // Frictionless, the same impact dissipates: (1 − e²)/2 · u_N⁻²/W_NN is lost.
  auto frictionless = ContactsOf(*system, first, 1, 2, e);
  frictionless[0].friction = 0.0;
  const FrictionalImpactResult f =
      SolveFrictionalImpact(*system, 0.0, q, v, joints, frictionless, FrictionOptions{});
  EXPECT_NEAR(f.kinetic_energy_change, -0.5 * (1 - e * e) * u[0] * u[0] / Wphi(0, 0), kTol);
  EXPECT_FALSE(f.energy_gain);
}

// ---- Planar acceleration level -----------------------------------------------------------------

// A uniform disk at rest on an incline of angle α (x down the slope, gravity g(sin α, −cos α)).
// Rolling (stick): λ_N = m g cos α, λ_T = −m g sin α / (1 + m ρ²/J) = −m g sin α / 3, so it
// sticks iff μ ≥ tan α / 3. Otherwise it starts to slip down the slope (d = +1): λ_T = −μ λ_N,
// ẍ = g (sin α − μ cos α), θ̈ = −μ m g cos α ρ / J, g̈_T = g (sin α − 3 μ cos α) > 0.
TEST(FrictionalAccelerations, RollingDiskOnInclineSticksIffMuAtLeastTanAlphaOverThree) {
  const double m = 1.2, rho = 0.25, J = 0.5 * m * rho * rho, alpha = 0.5;
  const double mu_c = std::tan(alpha) / 3.0;
  for (double mu : {0.5 * mu_c, 0.99 * mu_c, 1.01 * mu_c, 2.0 * mu_c}) {
    auto system = PlanarBodies({{m, J}}, kG * Eigen::Vector2d(std::sin(alpha), -std::cos(alpha)));
    const int first =
        AddPlanarContacts(system.get(), {{.name = "disk", .radius = rho, .friction = mu}});
    Eigen::VectorXd q(3), v = Eigen::VectorXd::Zero(3);
    q << 0.0, rho, 0.0;
    const FrictionalAccelerationResult r = SolveFrictionalAccelerations(
        *system, 0.0, q, v, {}, ContactsOf(*system, first, 1, 2), FrictionOptions{});
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.diagnosis.status, Solvability::kUnique);
    const double lambda_n = m * kG * std::cos(alpha);
    EXPECT_NEAR(r.contacts[0].normal, lambda_n, kTol * m * kG);
    if (mu >= mu_c) {
      EXPECT_EQ(r.contacts[0].mode, ContactMode::kStick);
      EXPECT_NEAR(r.contacts[0].tangential[0], -m * kG * std::sin(alpha) / 3.0, kTol * m * kG);
      EXPECT_NEAR(r.vdot[0], -rho * r.vdot[2], kTol * kG);  // rolls
      EXPECT_NEAR(r.vdot[0], 2.0 / 3.0 * kG * std::sin(alpha), kTol * kG);
    } else {
      EXPECT_EQ(r.contacts[0].mode, ContactMode::kSlip);
      EXPECT_NEAR(r.contacts[0].slip_direction[0], 1.0, 1e-15);
      EXPECT_NEAR(r.contacts[0].tangential[0], -mu * lambda_n, kTol * m * kG);
      EXPECT_NEAR(r.vdot[0], kG * (std::sin(alpha) - mu * std::cos(alpha)), kTol * kG);
      EXPECT_NEAR(r.vdot[2], -mu * m * kG * std::cos(alpha) * rho / J, kTol * kG / rho);
      EXPECT_NEAR(r.contacts[0].tangential_rate[0],
                  kG * (std::sin(alpha) - 3.0 * mu * std::cos(alpha)), kTol * kG);
    }
    EXPECT_NEAR(r.vdot[1], 0.0, kTol * kG);
  }
}

// A block (half sizes a, h) on its two bottom corners. Sliding to the right (d = +1) on a
// horizontal floor, both corners closed: ÿ = θ̈ = 0 give λ₁ + λ₂ = m g and a (λ₂ − λ₁) = μ h m g,
// λ₁,₂ = ½ m g (1 ∓ μ h/a), ẍ = −μ g: unique forces and accelerations.
TEST(FrictionalAccelerations, BlockSlidingOnTwoCornersClosedForm) {
  const double m = 2.0, a = 0.5, h = 0.2, J = m * (4 * a * a + 4 * h * h) / 12.0, mu = 0.4;
  auto system = PlanarBodies({{m, J}}, Eigen::Vector2d(0.0, -kG));
  const int first = AddPlanarContacts(
      system.get(), {{.name = "rear", .point = Eigen::Vector2d(-a, -h), .friction = mu},
                     {.name = "front", .point = Eigen::Vector2d(a, -h), .friction = mu}});
  Eigen::VectorXd q(3), v(3);
  q << 0.0, h, 0.0;
  v << 1.5, 0.0, 0.0;
  auto contacts = ContactsOf(*system, first, 2, 2);
  for (auto& c : contacts) {
    c.sliding = true;
    c.slip_direction = Eigen::Vector2d(1.0, 0.0);
  }
  const FrictionalAccelerationResult r =
      SolveFrictionalAccelerations(*system, 0.0, q, v, {}, contacts, FrictionOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.diagnosis.status, Solvability::kUnique) << r.diagnosis.message;
  const double lambda1 = 0.5 * m * kG * (1 - mu * h / a), lambda2 = 0.5 * m * kG * (1 + mu * h / a);
  EXPECT_NEAR(r.contacts[0].normal, lambda1, kTol * m * kG);
  EXPECT_NEAR(r.contacts[1].normal, lambda2, kTol * m * kG);
  EXPECT_NEAR(r.contacts[0].tangential[0], -mu * lambda1, kTol * m * kG);
  EXPECT_NEAR(r.contacts[1].tangential[0], -mu * lambda2, kTol * m * kG);
  EXPECT_NEAR(r.vdot[0], -mu * kG, kTol * kG);
  EXPECT_NEAR(r.vdot[1], 0.0, kTol * kG);
  EXPECT_NEAR(r.vdot[2], 0.0, kTol * kG / a);
  for (const auto& c : r.contacts) EXPECT_EQ(c.mode, ContactMode::kSlip);
}

// The same block at rest on an incline (x down the slope). The two tangential rows are equal
// (ẋ + h θ̇ at both corners): only λ_T₁ + λ_T₂ is determined, a continuum of forces with one v̇ —
// unique, not indeterminate. μ ≥ tan α: v̇ = 0, λ_T₁ + λ_T₂ = −m g sin α. μ < tan α: both slip
// down the slope, ẍ = g (sin α − μ cos α), ÿ = θ̈ = 0.
TEST(FrictionalAccelerations, BlockOnTwoCornersOnInclineRedundantTangentsIsUnique) {
  const double m = 2.0, a = 0.5, h = 0.2, J = m * (4 * a * a + 4 * h * h) / 12.0, alpha = 0.3;
  for (double mu : {0.5 * std::tan(alpha), 2.0 * std::tan(alpha)}) {
    auto system = PlanarBodies({{m, J}}, kG * Eigen::Vector2d(std::sin(alpha), -std::cos(alpha)));
    const int first = AddPlanarContacts(
        system.get(), {{.name = "rear", .point = Eigen::Vector2d(-a, -h), .friction = mu},
                       {.name = "front", .point = Eigen::Vector2d(a, -h), .friction = mu}});
    Eigen::VectorXd q(3), v = Eigen::VectorXd::Zero(3);
    q << 0.0, h, 0.0;
    const FrictionalAccelerationResult r = SolveFrictionalAccelerations(
        *system, 0.0, q, v, {}, ContactsOf(*system, first, 2, 2), FrictionOptions{});
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.diagnosis.status, Solvability::kUnique) << r.diagnosis.message;
    const double sum_n = r.contacts[0].normal + r.contacts[1].normal;
    const double sum_t = r.contacts[0].tangential[0] + r.contacts[1].tangential[0];
    EXPECT_NEAR(sum_n, m * kG * std::cos(alpha), kTol * m * kG);
    for (const auto& c : r.contacts) {
      EXPECT_LE(std::abs(c.tangential[0]), mu * c.normal + kTol * m * kG);
    }
    if (mu >= std::tan(alpha)) {
      EXPECT_NEAR(sum_t, -m * kG * std::sin(alpha), kTol * m * kG);
      EXPECT_LE(r.vdot.lpNorm<Eigen::Infinity>(), kTol * kG);
      for (const auto& c : r.contacts) EXPECT_EQ(c.mode, ContactMode::kStick);
    } else {
      EXPECT_NEAR(r.vdot[0], kG * (std::sin(alpha) - mu * std::cos(alpha)), kTol * kG);
      EXPECT_NEAR(r.vdot[1], 0.0, kTol * kG);
      EXPECT_NEAR(r.vdot[2], 0.0, kTol * kG / a);
      for (const auto& c : r.contacts) {
        EXPECT_EQ(c.mode, ContactMode::kSlip);
        EXPECT_NEAR(c.slip_direction[0], 1.0, 1e-15);
      }
    }
  }
}

// ---- The Painlevé rod
// ----------------------------------------------------------------------------

// A uniform rod (half length l, J = m l²/3) with its lower end on the floor, angle θ from the
// floor, end at x_c − l cos θ: g_N = y − l sin θ, ġ_T = ẋ + l sin θ θ̇. Sliding with direction
// s = sign(ġ_T), λ_T = −μ s λ_N, the normal acceleration is
//   g̈_N = a + b λ_N,  a = −g + l θ̇² sin θ,  b = (1 + 3 cos²θ + 3 μ s sin θ cos θ)/m
// (derived in the test's comment; Champneys & Várkonyi, IMA J. Appl. Math. 81 (2016) 538–568,
// Sec. 2). b < 0 needs s = −1 and μ > (1 + 3 cos²θ)/(3 sin θ cos θ) ≥ 4/3 (minimum at tan θ = 2).
// b > 0: unique; b < 0, a < 0: inconsistent; b < 0, a > 0: indeterminate (λ_N = 0 with g̈_N = a,
// or λ_N = −a/b with g̈_N = 0).
struct Rod {
  double m = 1.0, l = 0.5;
  std::shared_ptr<engine::LagrangianSystem> system;
  int first = 0;
};

Rod MakeRod(double mu) {
  Rod rod;
  rod.system = PlanarBodies({{rod.m, rod.m * rod.l * rod.l / 3.0}}, Eigen::Vector2d(0.0, -kG));
  rod.first = AddPlanarContacts(
      rod.system.get(),
      {{.name = "rod.tip", .point = Eigen::Vector2d(-rod.l, 0.0), .friction = mu}});
  return rod;
}

// q, v with the tip on the floor, sliding at speed s·1 m/s and angular velocity θ̇.
void RodState(const Rod& rod, double theta, double theta_dot, double s, Eigen::VectorXd* q,
              Eigen::VectorXd* v) {
  q->resize(3);
  v->resize(3);
  *q << 0.0, rod.l * std::sin(theta), theta;
  // Tip velocity: normal ẏ − l cos θ θ̇ = 0, tangential ẋ + l sin θ θ̇ = s.
  *v << s - rod.l * std::sin(theta) * theta_dot, rod.l * std::cos(theta) * theta_dot, theta_dot;
}

TEST(Painleve, RodClassificationAgreesWithAnalyticCriterionOnAGrid) {
  int counts[3] = {0, 0, 0};  // unique, inconsistent, indeterminate
  for (double mu : {0.3, 1.0, 1.3, 1.4, 1.6, 2.0, 3.0}) {
    const Rod rod = MakeRod(mu);
    for (int i = 1; i < 18; ++i) {
      const double theta = i * (std::numbers::pi / 2) / 18.0;
      for (double theta_dot : {0.0, 3.0, 8.0}) {
        for (double s : {-1.0, 1.0}) {
          const double a = -kG + rod.l * theta_dot * theta_dot * std::sin(theta);
          const double b = (1 + 3 * std::cos(theta) * std::cos(theta) +
                            3 * mu * s * std::sin(theta) * std::cos(theta)) /
                           rod.m;
          if (std::abs(a) < 1e-6 || std::abs(b) < 1e-6) continue;  // on a boundary
          Eigen::VectorXd q, v;
          RodState(rod, theta, theta_dot, s, &q, &v);
          auto contacts = ContactsOf(*rod.system, rod.first, 1, 2);
          contacts[0].sliding = true;
          contacts[0].slip_direction = Eigen::Vector2d(s, 0.0);
          const FrictionalAccelerationResult r =
              SolveFrictionalAccelerations(*rod.system, 0.0, q, v, {}, contacts, FrictionOptions{});
          const std::string where = "theta " + std::to_string(theta) + " thetadot " +
                                    std::to_string(theta_dot) + " mu " + std::to_string(mu) +
                                    " s " + std::to_string(s);
          if (b > 0) {
            ++counts[0];
            ASSERT_TRUE(r.ok) << where << ": " << r.message;
            EXPECT_EQ(r.diagnosis.status, Solvability::kUnique) << where;
            const double lambda = a < 0 ? -a / b : 0.0;
            EXPECT_NEAR(r.contacts[0].normal, lambda, kTol * kG * rod.m) << where;
            EXPECT_NEAR(r.contacts[0].normal_rate, a < 0 ? 0.0 : a, kTol * kG) << where;
            EXPECT_EQ(r.contacts[0].mode, a < 0 ? ContactMode::kSlip : ContactMode::kOpen);
          } else if (a < 0) {
            ++counts[1];
            EXPECT_FALSE(r.ok) << where;
            EXPECT_EQ(r.diagnosis.status, Solvability::kInconsistent) << where;
            char mu_text[32];  // the message prints mu with %g, as a user writes it
            std::snprintf(mu_text, sizeof mu_text, "%g", mu);
            EXPECT_NE(r.diagnosis.message.find("'rod.tip' (mu = " + std::string(mu_text)),
                      std::string::npos)
                << r.diagnosis.message;
            EXPECT_EQ(r.diagnosis.contacts, std::vector<int>{0});
          } else {
            ++counts[2];
            EXPECT_TRUE(r.ok) << where;
            EXPECT_EQ(r.diagnosis.status, Solvability::kIndeterminate) << where;
            EXPECT_NE(r.diagnosis.message.find("rod.tip"), std::string::npos);
          }
        }
      }
    }
  }
  // All three cases occur on the grid (μ > 4/3 with θ near atan 2 gives b < 0).
  EXPECT_GT(counts[0], 100);
  EXPECT_GT(counts[1], 5);
  EXPECT_GT(counts[2], 5);
}

// The tangential impact at an inconsistent configuration: u_N⁻ = 0, u_T⁻ = s ≠ 0, e = 0. z = 0
// solves the impact problem; the impulsive solution is the sticking one, P = −W⁻¹ (0, s) with
// W = (1/m) [[1 + 3cos²θ, −3 sin θ cos θ], [−3 sin θ cos θ, 1 + 3 sin²θ]], feasible (P_N ≥ 0,
// |P_T| ≤ μ P_N) exactly when b < 0 for the sliding direction s. After it the tip sticks.
TEST(Painleve, TangentialImpactResolvesTheInconsistentRod) {
  const double mu = 2.0, theta = std::atan(2.0), s = -1.0;
  const Rod rod = MakeRod(mu);
  Eigen::VectorXd q, v;
  RodState(rod, theta, 0.0, s, &q, &v);
  auto contacts = ContactsOf(*rod.system, rod.first, 1, 2);
  contacts[0].sliding = true;
  contacts[0].slip_direction = Eigen::Vector2d(s, 0.0);
  const FrictionalAccelerationResult acc =
      SolveFrictionalAccelerations(*rod.system, 0.0, q, v, {}, contacts, FrictionOptions{});
  ASSERT_EQ(acc.diagnosis.status, Solvability::kInconsistent);

  contacts[0].sliding = false;
  const FrictionalImpactResult r =
      SolveTangentialImpact(*rod.system, 0.0, q, v, {}, contacts, FrictionOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  const double c = std::cos(theta), sn = std::sin(theta);
  Eigen::Matrix2d W;
  W << 1 + 3 * c * c, -3 * sn * c, -3 * sn * c, 1 + 3 * sn * sn;
  W /= rod.m;
  const Eigen::Vector2d P = -W.inverse() * Eigen::Vector2d(0.0, s);
  ASSERT_GT(P[0], 0.0);
  ASSERT_LE(std::abs(P[1]), mu * P[0]);
  EXPECT_NEAR(r.contacts[0].normal, P[0], kTol);
  EXPECT_NEAR(r.contacts[0].tangential[0], P[1], kTol);
  EXPECT_NEAR(r.contacts[0].normal_rate, 0.0, kTol);
  EXPECT_NEAR(r.contacts[0].tangential_rate[0], 0.0, kTol);
  EXPECT_EQ(r.contacts[0].mode, ContactMode::kStick);
  EXPECT_LT(r.kinetic_energy_change, 0.0);
  // After the impulse the tip is at rest: the acceleration problem with a stick candidate has a
  // solution.
  const FrictionalAccelerationResult after =
      SolveFrictionalAccelerations(*rod.system, 0.0, q, r.v_plus, {}, contacts, FrictionOptions{});
  EXPECT_TRUE(after.ok) << after.message;
  EXPECT_NE(after.diagnosis.status, Solvability::kInconsistent);
}

// ---- Space -------------------------------------------------------------------------------------

// A solid sphere (J = ⅖ m R²) hits the floor z = 0: u_N⁻ = ż, slip s⁻ = ċ_T + ω × (−R e_z),
// W_NN = 1/m, W_TT = (1/m + R²/J) I = 7/(2m) I, W_NT = 0. P_N = −m (1 + e) ż; it sticks iff
// ‖s⁻‖ ≤ (7/2) μ (1 + e)|ż|, then P_T = −(2m/7) s⁻; else P_T = −μ P_N s⁻/‖s⁻‖ and the slip keeps
// its direction: u_T⁺ = s⁻ (1 − (7/2) μ (1 + e)|ż| / ‖s⁻‖).
TEST(FrictionalImpact3d, SphereObliqueImpactClosedFormExactCone) {
  const double m = 0.5, R = 0.1, J = 0.4 * m * R * R;
  for (double mu : {0.05, 0.2, 0.6}) {
    for (FrictionCone cone : {FrictionCone::kExact}) {
      auto system = SpatialBody(m, J * Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, -kG));
      const int first = AddSpatialContacts(
          system.get(), {{.name = "ball", .r = Eigen::Vector3d(0, 0, -R), .friction = mu}});
      Eigen::VectorXd q = Eigen::VectorXd::Zero(6), v(6);
      v << 1.0, -0.5, -2.0, 3.0, 4.0, -1.0;
      const double e = 0.5;
      FrictionOptions options;
      options.cone = cone;
      const FrictionalImpactResult r = SolveFrictionalImpact(
          *system, 0.0, q, v, {}, ContactsOf(*system, first, 1, 3, e), options);
      ASSERT_TRUE(r.ok) << r.message;
      const Eigen::Vector3d omega = v.tail<3>();
      const Eigen::Vector3d slip3 = v.head<3>() + omega.cross(Eigen::Vector3d(0, 0, -R));
      const Eigen::Vector2d slip = slip3.head<2>();
      const double PN = -m * (1 + e) * v[2];
      const bool stick = slip.norm() <= 3.5 * mu * (1 + e) * std::abs(v[2]);
      const Eigen::Vector2d PT = stick ? Eigen::Vector2d(-2 * m / 7 * slip)
                                       : Eigen::Vector2d(-mu * PN * slip.normalized());
      EXPECT_NEAR(r.contacts[0].normal, PN, kTol) << "mu " << mu;
      EXPECT_LE((r.contacts[0].tangential - PT).norm(), kTol) << "mu " << mu;
      const Eigen::Vector2d uT =
          stick ? Eigen::Vector2d::Zero() : Eigen::Vector2d(slip + 3.5 / m * PT);
      EXPECT_LE((r.contacts[0].tangential_rate - uT).norm(), kTol);
      EXPECT_LE(r.residual, 1e-10);
      EXPECT_FALSE(r.energy_gain);
      EXPECT_EQ(r.diagnosis.status, Solvability::kSolved);  // exact cone: not enumerated
    }
  }
}

// The faceted cone with N facets on the sphere sliding through the impact (‖s⁻‖ = K · (7/2) μ
// P_N/m, K = 100). The friction impulse sits on a vertex of the polygon unless −s⁻ is within a
// band around an edge's normal, where it moves along the edge; the band ends where the slip's
// angle δ from the bisector has ‖s⁻‖ sin δ = (7/2) μ P_N/m · sin(π/N), i.e. sin δ = sin(π/N)/K.
// So over all slip directions the largest angle between the faceted and the exact impulse is
// π/N − asin(sin(π/N)/K), and the direction error 1 − cos of it, ≈ 1 − cos(π/N) for K ≫ 1
// (FRICTION.md). Measured over 500 directions per sector: within 2 % of the closed form (the
// sampling of a kink), never above 1 − cos(π/N).
TEST(FrictionalImpact3d, FacetedConeSlipDirectionErrorMatchesOneMinusCosPiOverN) {
  const double m = 0.5, R = 0.1, J = 0.4 * m * R * R, mu = 0.05, e = 0.0, vz = -1.0, K = 100.0;
  const double PN = -m * (1 + e) * vz;
  const double slip_speed = K * 3.5 * mu * PN / m;
  auto system = SpatialBody(m, J * Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, -kG));
  const int first = AddSpatialContacts(
      system.get(), {{.name = "ball", .r = Eigen::Vector3d(0, 0, -R), .friction = mu}});
  const auto contacts = ContactsOf(*system, first, 1, 3, e);
  for (int N : {4, 8, 16, 32}) {
    FrictionOptions faceted;
    faceted.cone = FrictionCone::kFaceted;
    faceted.facets = N;
    faceted.diagnose = false;  // one contact: unique anyway; keeps the 2000 solves fast
    double worst = 0.0;
    const int samples = 500;
    for (int k = 0; k < samples; ++k) {
      const double phi = (k + 0.5) * (2 * std::numbers::pi / N) / samples;
      Eigen::VectorXd q = Eigen::VectorXd::Zero(6), v = Eigen::VectorXd::Zero(6);
      v << slip_speed * std::cos(phi), slip_speed * std::sin(phi), vz, 0, 0, 0;
      const FrictionalImpactResult r =
          SolveFrictionalImpact(*system, 0.0, q, v, {}, contacts, faceted);
      ASSERT_TRUE(r.ok) << r.message;
      const Eigen::Vector2d exact = -Eigen::Vector2d(std::cos(phi), std::sin(phi));
      worst = std::max(worst, 1.0 - r.contacts[0].tangential.normalized().dot(exact));
    }
    const double pi_n = std::numbers::pi / N;
    const double expected = 1.0 - std::cos(pi_n - std::asin(std::sin(pi_n) / K));
    EXPECT_NEAR(worst, expected, 0.02 * expected) << "N = " << N;
    EXPECT_LE(worst, 1.0 - std::cos(pi_n)) << "N = " << N;
  }
}

// A box flat on four corners on an incline of angle α (frame of the incline: z normal, x down the
// slope). Four normal rows for three normal degrees of freedom and four tangential pairs: the
// forces are not unique, the motion is. μ ≥ tan α: v̇ = 0 (all stick), Σλ_T = (−m g sin α, 0);
// μ < tan α: the box slides as a whole, ẍ = g (sin α − μ cos α), no rotation, all slip along +x.
TEST(FrictionalAccelerations3d, BoxOnFourCornersOnInclineSticksOrSlidesAsAWhole) {
  const double m = 3.0, a = 0.3, bw = 0.2, h = 0.1, alpha = 0.4;
  Eigen::Matrix3d J =
      Eigen::Vector3d(m / 3 * (bw * bw + h * h), m / 3 * (a * a + h * h), m / 3 * (a * a + bw * bw))
          .asDiagonal();
  for (FrictionCone cone : {FrictionCone::kExact, FrictionCone::kFaceted}) {
    for (double mu : {0.5 * std::tan(alpha), 1.5 * std::tan(alpha)}) {
      auto system = SpatialBody(m, J, kG * Eigen::Vector3d(std::sin(alpha), 0.0, -std::cos(alpha)));
      std::vector<SpatialContactSpec> corners;
      for (double sx : {-1.0, 1.0}) {
        for (double sy : {-1.0, 1.0}) {
          corners.push_back({.name = "corner" + std::to_string(corners.size()),
                             .r = Eigen::Vector3d(sx * a, sy * bw, -h),
                             .friction = mu});
        }
      }
      const int first = AddSpatialContacts(system.get(), corners);
      Eigen::VectorXd q = Eigen::VectorXd::Zero(6), v = Eigen::VectorXd::Zero(6);
      FrictionOptions options;
      options.cone = cone;
      options.facets = 8;
      const FrictionalAccelerationResult r = SolveFrictionalAccelerations(
          *system, 0.0, q, v, {}, ContactsOf(*system, first, 4, 3), options);
      const std::string where = (cone == FrictionCone::kExact ? "exact" : "faceted") +
                                std::string(" mu ") + std::to_string(mu);
      ASSERT_TRUE(r.ok) << where << ": " << r.message;
      Eigen::Vector2d sum_t = Eigen::Vector2d::Zero();
      double sum_n = 0.0;
      for (const auto& c : r.contacts) {
        sum_n += c.normal;
        sum_t += c.tangential;
      }
      // The exact cone's Newton stops at its tolerance: 1e-8 of m g is a margin of 100 over it.
      const double tol = 1e-8 * m * kG;
      EXPECT_NEAR(sum_n, m * kG * std::cos(alpha), tol) << where;
      if (mu >= std::tan(alpha)) {
        EXPECT_NEAR(sum_t[0], -m * kG * std::sin(alpha), tol) << where;
        EXPECT_NEAR(sum_t[1], 0.0, tol) << where;
        EXPECT_LE(r.vdot.lpNorm<Eigen::Infinity>(), 1e-8 * kG) << where;
        for (const auto& c : r.contacts) EXPECT_EQ(c.mode, ContactMode::kStick) << where;
      } else {
        EXPECT_NEAR(r.vdot[0], kG * (std::sin(alpha) - mu * std::cos(alpha)), 1e-8 * kG) << where;
        EXPECT_LE(r.vdot.tail<5>().lpNorm<Eigen::Infinity>(), 1e-8 * kG / h) << where;
        for (const auto& c : r.contacts) {
          EXPECT_EQ(c.mode, ContactMode::kSlip) << where;
          EXPECT_NEAR(c.slip_direction[0], 1.0, 1e-8) << where;
        }
      }
    }
  }
}

// ---- Frictionless inputs
// -------------------------------------------------------------------------

// μ = 0 everywhere: the answers are SolveImpact's and SolveContactAccelerations's, bit for bit
// (EXPECT_EQ on doubles is the determinism check the header promises).
TEST(FrictionalProblems, FrictionlessInputsGiveExactlyTheFrictionlessAnswers) {
  const double m = 2.0, a = 0.5, h = 0.2, J = m * (4 * a * a + 4 * h * h) / 12.0;
  auto system = PlanarBodies({{m, J}}, Eigen::Vector2d(0.0, -kG));
  const int first = AddPlanarContacts(
      system.get(), {{.name = "rear", .point = Eigen::Vector2d(-a, -h), .friction = 0.0},
                     {.name = "front", .point = Eigen::Vector2d(a, -h), .friction = 0.0}});
  Eigen::VectorXd q(3), v(3);
  q << 0.0, h, 0.0;
  v << 0.3, -1.0, 0.7;
  const auto contacts = ContactsOf(*system, first, 2, 2, 0.4);
  const std::vector<int> normals = {first, first + 2};
  const std::vector<double> e = {0.4, 0.4};
  const ImpactResult ref = SolveImpact(*system, 0.0, q, v, {}, normals, e, LcpOptions{});
  const FrictionalImpactResult r =
      SolveFrictionalImpact(*system, 0.0, q, v, {}, contacts, FrictionOptions{});
  ASSERT_TRUE(ref.ok && r.ok);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.v_plus[i], ref.v_plus[i]);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(r.contacts[static_cast<std::size_t>(i)].normal, ref.impulse_u[i]);
  const ContactAccelerationResult ref_a =
      SolveContactAccelerations(*system, 0.0, q, v, {}, normals, LcpOptions{});
  const FrictionalAccelerationResult ra =
      SolveFrictionalAccelerations(*system, 0.0, q, v, {}, contacts, FrictionOptions{});
  ASSERT_TRUE(ref_a.ok && ra.ok);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ra.vdot[i], ref_a.vdot[i]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ra.contacts[static_cast<std::size_t>(i)].normal, ref_a.lambda_u[i]);
  }
}

// ---- Bad input -------------------------------------------------------------------------------

TEST(FrictionalProblems, BadInputThrowsNamingTheRow) {
  auto system = PlanarBodies({{1.0, 0.1}, {1.0, 0.1}}, Eigen::Vector2d(0.0, -kG));
  const int first = AddPlanarContacts(
      system.get(), {{.name = "left", .body = 0, .radius = 0.1, .friction = 0.5},
                     {.name = "right", .body = 1, .radius = 0.1, .friction = 0.5}});
  Eigen::VectorXd q(6), v = Eigen::VectorXd::Zero(6);
  q << 0, 0.1, 0, 1, 0.1, 0;
  const FrictionOptions options;
  const auto expect_throw = [&](std::vector<FrictionalContact> contacts, const std::string& what,
                                bool impact = true, FrictionOptions o = FrictionOptions{}) {
    try {
      if (impact) {
        SolveFrictionalImpact(*system, 0.0, q, v, {}, contacts, o);
      } else {
        SolveFrictionalAccelerations(*system, 0.0, q, v, {}, contacts, o);
      }
      ADD_FAILURE() << "no exception for " << what;
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find(what), std::string::npos) << ex.what();
    }
  };
  const auto good = ContactsOf(*system, first, 2, 2);
  auto c = good;
  c[0].friction = -0.1;
  expect_throw(c, "'left'");
  c = good;
  c[1].friction = std::nan("");
  expect_throw(c, "'right'");
  c = good;
  c[1].restitution = 1.5;
  expect_throw(c, "restitution");
  c = good;
  c[0].tangent_rows[0] = good[1].tangent_rows[0];  // the other contact's tangent
  expect_throw(c, "not a tangential row of this contact");
  c = good;
  c[0].num_tangent_rows = 0;  // μ > 0 without tangents
  expect_throw(c, "needs tangential rows");
  c = good;
  c[1] = c[0];
  expect_throw(c, "listed twice");
  c = good;
  c[0].normal_row = first + 1;  // a tangential row as normal row
  expect_throw(c, "not a unilateral row");
  c = good;
  c[0].sliding = true;
  c[0].slip_direction = Eigen::Vector2d(1.0, 0.0);
  expect_throw(c, "acceleration-level");
  c[0].slip_direction = Eigen::Vector2d(0.5, 0.0);
  expect_throw(c, "unit direction", false);
  FrictionOptions bad;
  bad.cone = FrictionCone::kFaceted;
  bad.facets = 2;
  expect_throw(good, "facets", true, bad);
  bad = FrictionOptions{};
  bad.tolerance = 0.0;
  expect_throw(good, "tolerance", true, bad);
  const Eigen::VectorXd short_warm = Eigen::VectorXd::Zero(5);
  bad = FrictionOptions{};
  bad.warm_start = &short_warm;
  expect_throw(good, "warm start", true, bad);
  EXPECT_THROW(FrictionalContact::FromSystem(*system, first + 1), std::invalid_argument);
  (void)options;
}

}  // namespace
}  // namespace saltus::contact
