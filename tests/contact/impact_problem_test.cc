// Impact (Haddouni et al. 2017, eq. 2/4) and acceleration-level contact problem (eq. 12) on
// planar scenes with closed-form answers. Tolerances: unless stated otherwise the answers are
// exact up to round-off, and the only approximate step is the LCP, solved to a natural-map
// residual of 1e-10 (relative to max(1, ‖b‖∞)); Lemke and enum reach ~1e-15 in practice, so
// closed forms are compared at 1e-10 times the problem scale.

#include "contact/impact_problem.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "contact/planar_contacts.h"
#include "contact/spatial_contacts.h"
#include "engine/block_sparse.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"

// Siconos 4.4's lcp_enum never frees the enumeration state it allocates (enum_init, 32 bytes per
// enumerative solve). Known upstream leak, not ours: suppressed for LeakSanitizer in
// SALTUS_SANITIZE builds (this hook is an unused function otherwise).
extern "C" const char* __lsan_default_suppressions() { return "leak:enum_init\n"; }

namespace saltus::contact {
namespace {

using engine::kGround;
using engine::PlanarBody;
using engine::PlanarJoint;
using engine::PlanarJointType;

constexpr double kGravity = 9.81;
constexpr double kTol = 1e-10;  // see the header comment

struct Scene {
  std::shared_ptr<const engine::PlanarModel> model;
  std::shared_ptr<engine::PlanarMultibodySystem> system;
  std::vector<int> joint_rows;
  std::vector<int> contact_rows;
  Eigen::VectorXd q;
};

Scene MakeScene(engine::PlanarModelBuilder& builder, std::vector<PlanarContact> contacts) {
  Scene s;
  s.model = builder.Build();
  s.system = std::make_shared<engine::PlanarMultibodySystem>(s.model);
  s.joint_rows = s.system->RowsOfKind(engine::ConstraintKind::kBilateral);
  const int n_contacts = static_cast<int>(contacts.size());
  const int first =
      s.system->AddConstraintBlock(std::make_shared<PlanarContacts>(s.model, std::move(contacts)));
  for (int i = 0; i < n_contacts; ++i) s.contact_rows.push_back(first + i);
  s.q = s.model->InitialPositions();
  return s;
}

PlanarBody Body(const std::string& name, double mass, double inertia, Eigen::Vector3d q0) {
  PlanarBody b;
  b.name = name;
  b.mass = mass;
  b.inertia = inertia;
  b.q0 = q0;
  return b;
}

PlanarContact GroundDisk(const std::string& name, int body, double radius) {
  PlanarContact c;
  c.name = name;
  c.type = PlanarContactType::kDiskLine;
  c.body_a = kGround;
  c.body_b = body;
  c.radius_b = radius;
  return c;
}

PlanarContact DiskDisk(const std::string& name, int a, double ra, int b, double rb) {
  PlanarContact c;
  c.name = name;
  c.type = PlanarContactType::kDiskDisk;
  c.body_a = a;
  c.radius_a = ra;
  c.body_b = b;
  c.radius_b = rb;
  return c;
}

PlanarContact GroundPoint(const std::string& name, int body, Eigen::Vector2d point_b) {
  PlanarContact c;
  c.name = name;
  c.type = PlanarContactType::kPointLine;
  c.body_a = kGround;
  c.body_b = body;
  c.point_b = point_b;
  return c;
}

Eigen::MatrixXd MassMatrix(const Scene& s) {
  Eigen::MatrixXd M;
  s.system->MassMatrix(s.q, &M);
  return M;
}

// M (v⁺ − v⁻) = Gᵀ P over all rows: the impulses returned are the ones that produced v⁺.
void ExpectMomentumBalance(const Scene& s, const Eigen::VectorXd& v_minus,
                           std::span<const int> b_rows, std::span<const int> u_rows,
                           const ImpactResult& r) {
  Eigen::MatrixXd G_b, G_u;
  s.system->ConstraintJacobian(0.0, s.q, b_rows, &G_b);
  s.system->ConstraintJacobian(0.0, s.q, u_rows, &G_u);
  const Eigen::VectorXd lhs = MassMatrix(s) * (r.v_plus - v_minus);
  const Eigen::VectorXd rhs = G_b.transpose() * r.impulse_b + G_u.transpose() * r.impulse_u;
  // Round-off of two products of size ‖M‖‖v‖ and ‖G‖‖P‖.
  const double scale = 1.0 + lhs.lpNorm<Eigen::Infinity>() + rhs.lpNorm<Eigen::Infinity>();
  EXPECT_LE((lhs - rhs).lpNorm<Eigen::Infinity>(), 1e-12 * scale);
}

// ---- Impact ---------------------------------------------------------------------------------

TEST(SolveImpact, BallOnGroundNewtonRestitution) {
  const double m = 2.0, r = 0.1;
  for (double e : {0.9, 0.0}) {
    engine::PlanarModelBuilder builder;
    builder.AddBody(Body("ball", m, 0.01, {0.0, r, 0.0}));
    Scene s = MakeScene(builder, {GroundDisk("floor", 0, r)});
    const Eigen::Vector3d v_minus(0.3, -4.0, 1.5);
    const std::vector<double> restitution = {e};
    const ImpactResult res =
        SolveImpact(*s.system, 0.0, s.q, v_minus, {}, s.contact_rows, restitution, LcpOptions{});
    ASSERT_TRUE(res.ok) << res.message;
    // u⁺ = −e u⁻ (u⁻ = −4), P = m (1 + e) |u⁻|; frictionless: ẋ and θ̇ unchanged.
    EXPECT_NEAR(res.u_minus_u(0), -4.0, 1e-15);  // G v⁻ is exact here
    EXPECT_NEAR(res.u_plus_u(0), 4.0 * e, kTol * 4.0);
    EXPECT_NEAR(res.impulse_u(0), m * (1.0 + e) * 4.0, kTol * 4.0 * m);
    EXPECT_NEAR(res.v_plus(0), 0.3, 1e-15);
    EXPECT_NEAR(res.v_plus(1), 4.0 * e, kTol * 4.0);
    EXPECT_NEAR(res.v_plus(2), 1.5, 1e-15);
    EXPECT_EQ(res.impulse_b.size(), 0);
  }
}

// A block (2 kg, J = 0.7) whose corner touches the ground off its centre, and a ball (1 kg) on
// the ground far from it: two contacts of two bodies.
Scene BlockCornerAndBall() {
  engine::PlanarModelBuilder builder;
  builder.AddBody(Body("block", 2.0, 0.7, {0.0, 0.25, 0.3}));
  builder.AddBody(Body("ball", 1.0, 0.1, {3.0, 0.25, 0.0}));
  return MakeScene(builder,
                   {GroundPoint("corner", 0, {-1.0, -0.25}), GroundDisk("ball_floor", 1, 0.25)});
}

// The closed form of one row (no bilateral rows, impact_problem.cc "SolveOneRow") against the
// LCP path: a block hit at an off-centre corner (W = 1/m + (r × n)²/J couples translation and
// rotation), solved alone and together with a separating contact of a second body (another
// component, b > 0: z = 0 there, so the block's problem is the same). Impulses, v⁺ and u±
// agree to round-off (1e-13 relative: a few operations in different order), for the impact and
// for a Moreau–Jean velocity step with a free impulse f.
TEST(SolveImpact, OneRowClosedFormAgreesWithTheLcpPath) {
  Scene s = BlockCornerAndBall();
  const Eigen::VectorXd v = (Eigen::VectorXd(6) << 0.4, -2.0, 0.7, 0.1, 0.5, 0.0).finished();
  const Eigen::VectorXd f = (Eigen::VectorXd(6) << 0.01, -0.02, 0.005, 0.0, -0.01, 0.0).finished();
  const std::vector<int> one = {s.contact_rows[0]};
  const std::vector<int> both = {s.contact_rows[0], s.contact_rows[1]};
  const std::vector<double> e1 = {0.6}, e2 = {0.6, 0.6};
  for (const bool step : {false, true}) {
    const ImpactResult a =
        step ? SolveVelocityStep(*s.system, 0.0, s.q, v, f, {}, one, e1, LcpOptions{})
             : SolveImpact(*s.system, 0.0, s.q, v, {}, one, e1, LcpOptions{});
    const ImpactResult b =
        step ? SolveVelocityStep(*s.system, 0.0, s.q, v, f, {}, both, e2, LcpOptions{})
             : SolveImpact(*s.system, 0.0, s.q, v, {}, both, e2, LcpOptions{});
    ASSERT_TRUE(a.ok) << a.message;
    ASSERT_TRUE(b.ok) << b.message;
    ASSERT_GT(a.impulse_u(0), 0.1);  // the corner approaches: an impulse
    EXPECT_EQ(b.impulse_u(1), 0.0);  // the ball separates
    EXPECT_EQ(a.lcp.components_solved, 1);
    EXPECT_EQ(a.largest_lcp, 1);
    const double tol = 1e-13 * (1.0 + a.impulse_u(0));
    EXPECT_NEAR(a.impulse_u(0), b.impulse_u(0), tol) << "step " << step;
    EXPECT_NEAR(a.u_minus_u(0), b.u_minus_u(0), 1e-13) << "step " << step;
    EXPECT_NEAR(a.u_plus_u(0), b.u_plus_u(0), 1e-13) << "step " << step;
    EXPECT_LE((a.v_plus - b.v_plus).lpNorm<Eigen::Infinity>(), 1e-13) << "step " << step;
    if (!step) {
      EXPECT_NEAR(a.u_plus_u(0), -0.6 * a.u_minus_u(0), 1e-13);  // Newton's law, eq. 4
      ExpectMomentumBalance(s, v, {}, one, a);
    }
  }
}

// The workspace overload (ImpactWorkspace: M's factor kept across calls when M is constant, the
// result's storage reused) gives the answers of the by-value SolveImpact over a sequence of
// impacts at other positions and row sets: the one-row closed form, the two-row LCP path and a
// one-row impact again (every field rewritten, none left from the previous call). The planar
// mass matrix does not depend on q, so the kept factor is the one a new factorization gives, and
// the arithmetic is the same: equal to round-off (1e-15 relative).
TEST(SolveImpact, WorkspaceKeepsTheConstantMassFactorAndGivesTheSameAnswers) {
  Scene s = BlockCornerAndBall();
  ASSERT_TRUE(s.system->HasConstantMassMatrix());
  const Eigen::VectorXd v = (Eigen::VectorXd(6) << 0.4, -2.0, 0.7, 0.1, -0.5, 0.0).finished();
  const std::vector<int> one = {s.contact_rows[0]};
  const std::vector<int> both = {s.contact_rows[0], s.contact_rows[1]};
  const std::vector<double> e1 = {0.6}, e2 = {0.6, 0.3};
  ImpactWorkspace ws;
  for (int call = 0; call < 3; ++call) {
    Eigen::VectorXd q = s.q;
    q[2] += 0.2 * call;  // the block's angle: another G at every call
    const std::vector<int>& rows = call == 1 ? both : one;
    const std::vector<double>& e = call == 1 ? e2 : e1;
    const ImpactResult fresh = SolveImpact(*s.system, 0.0, q, v, {}, rows, e, LcpOptions{});
    const ImpactResult& kept = SolveImpact(*s.system, 0.0, q, v, {}, rows, e, LcpOptions{}, &ws);
    ASSERT_TRUE(fresh.ok) << fresh.message;
    ASSERT_TRUE(kept.ok) << kept.message;
    EXPECT_TRUE(ws.assembly.mass_kept);
    ASSERT_EQ(kept.impulse_u.size(), static_cast<Eigen::Index>(rows.size()));
    ASSERT_EQ(kept.u_plus_u.size(), static_cast<Eigen::Index>(rows.size()));
    const double scale = 1.0 + fresh.v_plus.lpNorm<Eigen::Infinity>();
    EXPECT_LE((kept.v_plus - fresh.v_plus).lpNorm<Eigen::Infinity>(), 1e-15 * scale) << call;
    EXPECT_LE((kept.impulse_u - fresh.impulse_u).lpNorm<Eigen::Infinity>(),
              1e-15 * (1.0 + fresh.impulse_u.lpNorm<Eigen::Infinity>()))
        << call;
    EXPECT_LE((kept.u_plus_u - fresh.u_plus_u).lpNorm<Eigen::Infinity>(), 1e-15 * scale) << call;
    EXPECT_EQ(kept.lcp.components_solved, fresh.lcp.components_solved) << call;
    EXPECT_EQ(kept.largest_lcp, fresh.largest_lcp) << call;
  }
  // A workspace belongs to one system.
  engine::PlanarModelBuilder other;
  other.AddBody(Body("ball", 1.0, 0.1, {3.0, 0.25, 0.0}));
  Scene t = MakeScene(other, {GroundDisk("ball_floor", 0, 0.25)});
  const std::vector<int> row = {t.contact_rows[0]};
  EXPECT_THROW(
      SolveImpact(*t.system, 0.0, t.q, Eigen::VectorXd::Zero(3), {}, row, e1, LcpOptions{}, &ws),
      std::invalid_argument);
  EXPECT_THROW(SolveImpact(*t.system, 0.0, t.q, Eigen::VectorXd::Zero(3), {}, row, e1, LcpOptions{},
                           nullptr),
               std::invalid_argument);
}

// SolveLowerInPlace's loops for small triangles are Eigen's kernel operation for operation: the
// same bits as TriangularView<Lower>::solveInPlace on random Cholesky factors (n = 1 … 6, both
// sides of kSmallTriangle) and right-hand sides of 1 … 3 columns, zeros and signed zeros included.
TEST(SolveLowerInPlace, IsEigensTriangularSolveBitForBit) {
  std::mt19937 random(20261129);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int n = 1; n <= 6; ++n) {
    for (int cols = 1; cols <= 3; ++cols) {
      for (int trial = 0; trial < 200; ++trial) {
        Eigen::MatrixXd B(n, n);
        for (Eigen::Index i = 0; i < B.size(); ++i) B(i) = u(random);
        const Eigen::MatrixXd M = B * B.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
        const Eigen::LLT<Eigen::MatrixXd> llt(M);
        Eigen::MatrixXd X(n, cols);
        for (Eigen::Index i = 0; i < X.size(); ++i) {
          X(i) = trial % 5 == 0 && i % 2 == 0 ? (i % 4 == 0 ? 0.0 : -0.0) : u(random);
        }
        Eigen::MatrixXd expected = X;
        llt.matrixL().solveInPlace(expected);
        SolveLowerInPlace(llt.matrixLLT(), &X);
        for (Eigen::Index i = 0; i < X.size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint64_t>(X(i)), std::bit_cast<std::uint64_t>(expected(i)))
              << "n = " << n << ", column entries " << cols << ", trial " << trial;
        }
      }
    }
  }
}

TEST(SolveImpact, RowOfEqualDisksMovesAsOneBlock) {
  // Disk 0 (speed V) hits a row of n = 3 equal disks at rest, all touching. The LCP is on a
  // positive definite W (independent rows), so its answer is unique: every contact of the row
  // stays closed and the struck disks leave together as one block,
  //   U = (1 + e) V / (n + 1),   striker: V (1 − n e) / (n + 1),
  // with impulses P_k = (n − k + 1) m U on contact k (momentum passed down the row). This is the
  // simultaneous-impact answer of Newton's law, not Newton's cradle (which needs sequential
  // impacts): for e = 1 the striker bounces back at −V/2 and the block leaves at V/2.
  const double m = 1.3, radius = 0.5, V = 2.0;
  const int n = 3;
  for (double e : {1.0, 0.5, 0.0}) {
    engine::PlanarModelBuilder builder;
    std::vector<PlanarContact> contacts;
    for (int k = 0; k <= n; ++k) {
      builder.AddBody(Body("disk" + std::to_string(k), m, 0.1, {2.0 * radius * k, 0.0, 0.0}));
      if (k > 0) contacts.push_back(DiskDisk("c" + std::to_string(k), k - 1, radius, k, radius));
    }
    Scene s = MakeScene(builder, contacts);
    Eigen::VectorXd v_minus = Eigen::VectorXd::Zero(3 * (n + 1));
    v_minus(0) = V;
    const std::vector<double> restitution(n, e);
    for (LcpSolver solver : {LcpSolver::kLemke, LcpSolver::kPgs, LcpSolver::kEnumerative}) {
      LcpOptions options;
      options.solver = solver;
      // PGS stops at its tolerance: its z is off by up to ‖W⁻¹‖∞ × tolerance × scale
      // (‖W⁻¹‖∞ = 2 m = 2.6 here), so it is asked for 1e-12 to meet the 1e-10 checks below.
      options.tolerance = 1e-12;
      const ImpactResult r =
          SolveImpact(*s.system, 0.0, s.q, v_minus, {}, s.contact_rows, restitution, options);
      ASSERT_TRUE(r.ok) << ToString(solver) << ": " << r.message;
      const double U = (1.0 + e) * V / (n + 1);
      EXPECT_NEAR(r.v_plus(0), V * (1.0 - n * e) / (n + 1), kTol * V);
      for (int k = 1; k <= n; ++k) {
        EXPECT_NEAR(r.v_plus(3 * k), U, kTol * V) << "disk " << k;
        EXPECT_NEAR(r.v_plus(3 * k + 1), 0.0, kTol * V) << "disk " << k;
        EXPECT_NEAR(r.impulse_u(k - 1), (n - k + 1) * m * U, kTol * m * V) << "contact " << k;
      }
      ExpectMomentumBalance(s, v_minus, {}, s.contact_rows, r);
    }
  }
}

TEST(SolveImpact, EnergyNeverIncreasesWhenAllRowsApproach) {
  // Random multi-contact configurations: 4 bodies, disk–disk contacts between all pairs,
  // disk–ground contacts, point–line contacts with lines on moving bodies, and a revolute joint
  // between bodies 0 and 1. v⁻ is random, made consistent with the joint (u_B⁻ = 0), and the
  // unilateral rows are those with u⁻ < 0; e is random in [0, 1] per row. Then
  // T⁺ − T⁻ = ½ Pᵀ (u⁺ + u⁻) = ½ Σ P_i (1 − e_i) u_i⁻ ≤ 0.
  std::mt19937 rng(2017);
  std::uniform_real_distribution<double> uni(-1.0, 1.0), pos(0.5, 2.0), unit(0.0, 1.0);
  int impacts_with_several_active = 0;
  for (int trial = 0; trial < 200; ++trial) {
    engine::PlanarModelBuilder builder;
    const int nb = 4;
    for (int i = 0; i < nb; ++i) {
      builder.AddBody(Body("b" + std::to_string(i), pos(rng), 0.2 * pos(rng),
                           {2.0 * uni(rng), 2.0 * uni(rng), 3.0 * uni(rng)}));
    }
    PlanarJoint pin;
    pin.name = "pin";
    pin.type = PlanarJointType::kRevolute;
    pin.body_a = 0;
    pin.body_b = 1;
    pin.point_a = {uni(rng), uni(rng)};
    pin.point_b = {uni(rng), uni(rng)};
    builder.AddJoint(pin);
    std::vector<PlanarContact> contacts;
    for (int a = 0; a < nb; ++a) {
      for (int b = a + 1; b < nb; ++b) {
        PlanarContact c = DiskDisk("dd" + std::to_string(a) + std::to_string(b), a, 0.3, b, 0.2);
        c.point_a = {0.2 * uni(rng), 0.2 * uni(rng)};
        contacts.push_back(c);
      }
      contacts.push_back(GroundDisk("floor" + std::to_string(a), a, 0.3));
    }
    for (int a = 0; a < nb; ++a) {
      PlanarContact c;
      c.name = "pl" + std::to_string(a);
      c.type = PlanarContactType::kPointLine;
      c.body_a = a;
      c.body_b = (a + 1) % nb;
      c.point_a = {uni(rng), uni(rng)};
      c.normal_a = {uni(rng), uni(rng)};
      c.point_b = {uni(rng), uni(rng)};
      contacts.push_back(c);
    }
    Scene s = MakeScene(builder, contacts);
    const Eigen::MatrixXd M = MassMatrix(s);
    Eigen::VectorXd v(3 * nb);
    for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = 3.0 * uni(rng);
    // Project v onto the joint's tangent space in the M metric: u_B⁻ = 0.
    Eigen::MatrixXd G_b;
    s.system->ConstraintJacobian(0.0, s.q, s.joint_rows, &G_b);
    const Eigen::MatrixXd MinvGt = M.ldlt().solve(G_b.transpose());
    v -= MinvGt * (G_b * MinvGt).ldlt().solve(G_b * v);
    Eigen::MatrixXd G_all;
    s.system->ConstraintJacobian(0.0, s.q, s.contact_rows, &G_all);
    const Eigen::VectorXd u_all = G_all * v;
    std::vector<int> rows;
    std::vector<double> e;
    for (std::size_t k = 0; k < s.contact_rows.size(); ++k) {
      if (u_all(static_cast<Eigen::Index>(k)) < 0.0) {
        rows.push_back(s.contact_rows[k]);
        e.push_back(unit(rng));
      }
    }
    const ImpactResult r = SolveImpact(*s.system, 0.0, s.q, v, s.joint_rows, rows, e, {});
    ASSERT_TRUE(r.ok) << "trial " << trial << ": " << r.message;
    const double T_minus = s.system->KineticEnergy(s.q, v);
    const double T_plus = s.system->KineticEnergy(s.q, r.v_plus);
    // Slack: where P_i > 0 the LCP leaves w_i = u_i⁺ + e_i u_i⁻ ≤ 1e-10·max(1, ‖b‖∞) (b = (1+e)u⁻
    // here), adding at most ½ ‖P‖₁ times that to ΔT; plus round-off of T (1e-13 T⁻).
    const double b_scale = std::max(1.0, 2.0 * r.u_minus_u.lpNorm<Eigen::Infinity>());
    const double slack = 0.5 * r.impulse_u.lpNorm<1>() * kTol * b_scale + 1e-13 * T_minus;
    EXPECT_LE(T_plus, T_minus + slack) << "trial " << trial;
    // The constraints of the impact law themselves.
    const Eigen::Map<const Eigen::VectorXd> e_vec(e.data(), static_cast<Eigen::Index>(e.size()));
    const Eigen::VectorXd w = r.u_plus_u + e_vec.cwiseProduct(r.u_minus_u);
    if (w.size() > 0) {
      EXPECT_GE(w.minCoeff(), -kTol * b_scale);
      EXPECT_GE(r.impulse_u.minCoeff(), 0.0);
    }
    EXPECT_LE(r.bilateral_residual, 1e-12 * (1.0 + v.lpNorm<Eigen::Infinity>()));
    EXPECT_EQ(r.bilateral_rank, 2);
    ExpectMomentumBalance(s, v, s.joint_rows, rows, r);
    if ((r.impulse_u.array() > 1e-9).count() >= 2) ++impacts_with_several_active;
  }
  // The sample really exercises simultaneous impacts, not only single contacts.
  EXPECT_GT(impacts_with_several_active, 50);
}

TEST(SolveImpact, SeparatingClosedContactCaveat) {
  // Documents the caveat stated in impact_problem.h. Three unit-mass disks A, B, C in a row,
  // all touching; A hits B at speed 1 while C already moves away from B at 0.1, so the B–C
  // contact is closed but separating (u⁻ = +0.1). Closed forms from the LCP with both contacts
  // active: with e_BC = 0, (P_AB, P_BC) = (1.3, 0.6), v⁺ = (−0.3, 0.7, 0.7), u_BC⁺ = 0, and the
  // kinetic energy rises from 0.505 to 0.535; with e_BC = 1, (P_AB, P_BC) = (19/15, 8/15),
  // u_BC⁺ = −0.1 (approaching again) and T⁺ = T⁻ = 0.505.
  engine::PlanarModelBuilder builder;
  for (int k = 0; k < 3; ++k)
    builder.AddBody(Body("d" + std::to_string(k), 1.0, 0.1, {1.0 * k, 0.0, 0.0}));
  Scene s = MakeScene(builder, {DiskDisk("ab", 0, 0.5, 1, 0.5), DiskDisk("bc", 1, 0.5, 2, 0.5)});
  Eigen::VectorXd v_minus = Eigen::VectorXd::Zero(9);
  v_minus(0) = 1.0;
  v_minus(6) = 0.1;
  const double T_minus = s.system->KineticEnergy(s.q, v_minus);
  EXPECT_NEAR(T_minus, 0.505, 1e-15);
  {
    const std::vector<double> e = {1.0, 0.0};
    const ImpactResult r = SolveImpact(*s.system, 0.0, s.q, v_minus, {}, s.contact_rows, e, {});
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_NEAR(r.impulse_u(0), 1.3, kTol);
    EXPECT_NEAR(r.impulse_u(1), 0.6, kTol);
    EXPECT_NEAR(r.u_plus_u(1), 0.0, kTol);
    EXPECT_NEAR(s.system->KineticEnergy(s.q, r.v_plus), 0.535, kTol);
  }
  {
    const std::vector<double> e = {1.0, 1.0};
    const ImpactResult r = SolveImpact(*s.system, 0.0, s.q, v_minus, {}, s.contact_rows, e, {});
    ASSERT_TRUE(r.ok) << r.message;
    EXPECT_NEAR(r.impulse_u(0), 19.0 / 15.0, kTol);
    EXPECT_NEAR(r.impulse_u(1), 8.0 / 15.0, kTol);
    EXPECT_NEAR(r.u_plus_u(1), -0.1, kTol);
    EXPECT_NEAR(s.system->KineticEnergy(s.q, r.v_plus), T_minus, kTol);
  }
}

// Pendulum: bob (mass m, inertia J about its centre) hanging at distance L below a ground pivot,
// swinging right at angular velocity ω into a vertical wall that touches it.
Scene Pendulum(double m, double J, double L, double r, int n_pins) {
  engine::PlanarModelBuilder builder;
  builder.AddBody(Body("bob", m, J, {0.0, -L, 0.0}));
  for (int k = 0; k < n_pins; ++k) {
    PlanarJoint pin;
    pin.name = "pin" + std::to_string(k);
    pin.type = PlanarJointType::kRevolute;
    pin.body_a = kGround;
    pin.body_b = 0;
    pin.point_b = {0.0, L};
    builder.AddJoint(pin);
  }
  PlanarContact wall;
  wall.name = "wall";
  wall.type = PlanarContactType::kDiskLine;
  wall.body_a = kGround;
  wall.point_a = {r, 0.0};
  wall.normal_a = {-1.0, 0.0};
  wall.body_b = 0;
  wall.radius_b = r;
  return MakeScene(builder, {wall});
}

TEST(SolveImpact, PendulumBobHitsWall) {
  // About the pivot: (J + m L²)(ω⁺ − ω) = −L P, and the wall law gives −ω⁺ L = −e (−ω L), so
  // ω⁺ = −e ω, v⁺ = −e v⁻ and P = (J + m L²)(1 + e) ω / L. The joint rows stay satisfied:
  // u_B⁺ = G_B v⁺ = 0.
  const double m = 1.5, J = 0.02, L = 0.8, r = 0.1, omega = 2.0, e = 0.7;
  for (int n_pins : {1, 2}) {  // 2: a redundant copy of the joint (G_B of rank 2, 4 rows)
    Scene s = Pendulum(m, J, L, r, n_pins);
    Eigen::VectorXd g;
    s.system->ConstraintValues(0.0, s.q, s.contact_rows, &g);
    EXPECT_NEAR(g(0), 0.0, 1e-15);  // touching
    const Eigen::Vector3d v_minus(omega * L, 0.0, omega);
    const std::vector<double> restitution = {e};
    const ImpactResult res = SolveImpact(*s.system, 0.0, s.q, v_minus, s.joint_rows, s.contact_rows,
                                         restitution, LcpOptions{});
    ASSERT_TRUE(res.ok) << res.message;
    EXPECT_EQ(res.bilateral_rank, 2);
    EXPECT_NEAR(res.u_minus_u(0), -omega * L, 1e-15);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(res.v_plus(i), -e * v_minus(i), kTol * omega * L);
    EXPECT_NEAR(res.impulse_u(0), (J + m * L * L) * (1.0 + e) * omega / L, kTol * 10.0);
    Eigen::MatrixXd G_b;
    s.system->ConstraintJacobian(0.0, s.q, s.joint_rows, &G_b);
    // u_B⁺ = 0 up to round-off of the projection (a few ulps of ‖v‖).
    EXPECT_LE((G_b * res.v_plus).lpNorm<Eigen::Infinity>(), 1e-14);
    EXPECT_LE(res.bilateral_residual, 1e-14);
    ExpectMomentumBalance(s, v_minus, s.joint_rows, s.contact_rows, res);
    if (n_pins == 2) {
      // Minimum-norm multipliers of the redundant pair: shared equally between the copies.
      EXPECT_NEAR(res.impulse_b(0), res.impulse_b(2), 1e-12);
      EXPECT_NEAR(res.impulse_b(1), res.impulse_b(3), 1e-12);
    }
  }
}

TEST(SolveImpact, BilateralRowsRemoveVelocityDrift) {
  // A pendulum whose v⁻ violates the joint (drift) and an angle driver (rheonomic, ∂g/∂t = −ω₀):
  // with no unilateral row the impact problem is the velocity projection, after which
  // G_B v⁺ + ∂g_B/∂t = 0, i.e. the driven body turns at exactly ω₀.
  engine::PlanarModelBuilder builder;
  builder.AddBody(Body("bar", 1.0, 0.1, {0.3, -0.2, 0.4}));
  PlanarJoint driver;
  driver.name = "motor";
  driver.type = PlanarJointType::kAngleDriver;
  driver.body_a = kGround;
  driver.body_b = 0;
  driver.rate = 3.0;
  driver.angle0 = 0.4;
  builder.AddJoint(driver);
  Scene s = MakeScene(builder, {});
  const Eigen::Vector3d v_minus(0.5, -0.2, 3.4);
  const ImpactResult r =
      SolveImpact(*s.system, 0.0, s.q, v_minus, s.joint_rows, {}, {}, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.v_plus(2), 3.0, 1e-14);
  EXPECT_NEAR(r.v_plus(0), 0.5, 1e-15);  // the driver row does not touch x, y
  EXPECT_NEAR(r.v_plus(1), -0.2, 1e-15);
  EXPECT_NEAR(r.impulse_b(0), 0.1 * (3.0 - 3.4), 1e-14);  // J Δθ̇ = P
  EXPECT_LE(r.bilateral_residual, 1e-14);
  EXPECT_EQ(r.bilateral_rank, 1);
}

TEST(SolveImpact, InconsistentRedundantRowsAreSatisfiedInLeastSquares) {
  // Two drivers on one body with rates 3 and 4 cannot both hold: G_B has rank 1 and the
  // least-squares answer is θ̇⁺ = 3.5, leaving |θ̇⁺ − ω| = 0.5 on each row (reported, ok stays
  // true since the LCP part is solved).
  engine::PlanarModelBuilder builder;
  builder.AddBody(Body("bar", 1.0, 0.1, {0.0, 0.0, 0.0}));
  for (double rate : {3.0, 4.0}) {
    PlanarJoint driver;
    driver.name = "motor" + std::to_string(static_cast<int>(rate));
    driver.type = PlanarJointType::kAngleDriver;
    driver.body_a = kGround;
    driver.body_b = 0;
    driver.rate = rate;
    builder.AddJoint(driver);
  }
  Scene s = MakeScene(builder, {});
  const ImpactResult r = SolveImpact(*s.system, 0.0, s.q, Eigen::Vector3d(0.0, 0.0, 1.0),
                                     s.joint_rows, {}, {}, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.bilateral_rank, 1);
  EXPECT_NEAR(r.v_plus(2), 3.5, 1e-14);  // mean of the two rates; round-off only
  EXPECT_NEAR(r.bilateral_residual, 0.5, 1e-14);
}

TEST(SolveImpact, ColinearContactsOnBlockEdge) {
  // A block falls and turns onto three colinear points of its bottom edge (x = −1, 0, 1 from the
  // centre, 0.25 below it): G = [0 1 x_i], W has rank 2, the impulses are not unique but v⁺ is:
  // u_i⁺ = −e u_i⁻ for all three rows is consistent (u is affine in x_i), so
  // v⁺ = (ẋ, −e ẏ, −e θ̇). Every solver must find it.
  const double m = 2.0, J = m * (4.0 + 0.25) / 12.0, e = 0.5;
  engine::PlanarModelBuilder builder;
  builder.AddBody(Body("block", m, J, {0.0, 0.25, 0.0}));
  Scene s = MakeScene(
      builder, {GroundPoint("left", 0, {-1.0, -0.25}), GroundPoint("middle", 0, {0.0, -0.25}),
                GroundPoint("right", 0, {1.0, -0.25})});
  Eigen::MatrixXd G;
  s.system->ConstraintJacobian(0.0, s.q, s.contact_rows, &G);
  const Eigen::MatrixXd W = G * MassMatrix(s).inverse() * G.transpose();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(W);
  svd.setThreshold(1e-12);
  EXPECT_EQ(svd.rank(), 2);
  const Eigen::Vector3d v_minus(0.2, -2.0, 0.3);
  const std::vector<double> restitution(3, e);
  for (LcpSolver solver : {LcpSolver::kLemke, LcpSolver::kPgs, LcpSolver::kEnumerative}) {
    LcpOptions options;
    options.solver = solver;
    const ImpactResult r =
        SolveImpact(*s.system, 0.0, s.q, v_minus, {}, s.contact_rows, restitution, options);
    ASSERT_TRUE(r.ok) << ToString(solver) << ": " << r.message;
    EXPECT_NEAR(r.v_plus(0), 0.2, kTol);
    EXPECT_NEAR(r.v_plus(1), 1.0, kTol * 10.0);  // scale of b: (1 + e)|u⁻| ≈ 3.5
    EXPECT_NEAR(r.v_plus(2), -0.15, kTol * 10.0);
    // Total impulse and moment are unique: Σ P = m (1 + e) 2, Σ x_i P_i = J (θ̇⁺ − θ̇⁻).
    EXPECT_NEAR(r.impulse_u.sum(), m * (1.0 + e) * 2.0, kTol * 100.0);
    EXPECT_NEAR(-r.impulse_u(0) + r.impulse_u(2), J * (-0.15 - 0.3), kTol * 100.0);
    EXPECT_GE(r.impulse_u.minCoeff(), 0.0);
  }
}

TEST(SolveImpact, FailuresAreStatuses) {
  engine::PlanarModelBuilder builder;
  builder.AddBody(Body("block", 2.0, 0.7, {0.0, 0.25, 0.0}));
  builder.AddBody(Body("ball", 1.0, 0.1, {3.0, 0.25, 0.0}));
  Scene s = MakeScene(
      builder, {GroundPoint("left", 0, {-1.0, -0.25}), GroundPoint("middle", 0, {0.0, -0.25}),
                GroundPoint("right", 0, {1.0, -0.25}), DiskDisk("same_centre", 0, 0.1, 1, 0.1)});
  const Eigen::VectorXd v_minus = (Eigen::VectorXd(6) << 0.2, -2.0, 0.3, 0, 0, 0).finished();
  const std::vector<int> block_rows = {s.contact_rows[0], s.contact_rows[1], s.contact_rows[2]};
  const std::vector<double> restitution(3, 0.5);
  // PGS limited to one sweep cannot solve the redundant problem (it needs about 12).
  LcpOptions pgs;
  pgs.solver = LcpSolver::kPgs;
  pgs.max_iterations = 1;
  pgs.fallback = false;
  const ImpactResult r =
      SolveImpact(*s.system, 0.0, s.q, v_minus, {}, block_rows, restitution, pgs);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("pgs"), std::string::npos) << r.message;
  // Coincident disk centres: the contact normal is undefined (NaN Jacobian), reported by status.
  Eigen::VectorXd q = s.q;
  q.segment<2>(3) = q.segment<2>(0);
  const std::vector<int> disk_row = {s.contact_rows[3]};
  const std::vector<double> half = {0.5};
  const ImpactResult r2 = SolveImpact(*s.system, 0.0, q, v_minus, {}, disk_row, half, {});
  EXPECT_FALSE(r2.ok);
  EXPECT_NE(r2.message.find("non-finite"), std::string::npos) << r2.message;
}

TEST(SolveImpact, RejectsBadInput) {
  Scene s = Pendulum(1.0, 0.1, 1.0, 0.1, 1);
  const Eigen::Vector3d v(1.0, 0.0, 1.0);
  const std::vector<double> e = {0.5};
  const LcpOptions o;
  EXPECT_THROW(
      SolveImpact(*s.system, 0.0, s.q, Eigen::Vector2d(1, 0), s.joint_rows, s.contact_rows, e, o),
      std::invalid_argument);
  EXPECT_THROW(
      SolveImpact(*s.system, 0.0, Eigen::Vector4d::Zero(), v, s.joint_rows, s.contact_rows, e, o),
      std::invalid_argument);
  Eigen::Vector3d v_nan = v;
  v_nan(1) = std::nan("");
  EXPECT_THROW(SolveImpact(*s.system, 0.0, s.q, v_nan, s.joint_rows, s.contact_rows, e, o),
               std::invalid_argument);
  EXPECT_THROW(SolveImpact(*s.system, 0.0, s.q, v, s.joint_rows, s.contact_rows, {}, o),
               std::invalid_argument);
  const std::vector<int> out_of_range = {7};
  EXPECT_THROW(SolveImpact(*s.system, 0.0, s.q, v, s.joint_rows, out_of_range, e, o),
               std::invalid_argument);
  const std::vector<int> twice = {s.contact_rows[0], s.contact_rows[0]};
  const std::vector<double> e2 = {0.5, 0.5};
  EXPECT_THROW(SolveImpact(*s.system, 0.0, s.q, v, {}, twice, e2, o), std::invalid_argument);
  try {
    const std::vector<double> bad = {1.5};
    (void)SolveImpact(*s.system, 0.0, s.q, v, s.joint_rows, s.contact_rows, bad, o);
    ADD_FAILURE() << "restitution 1.5 accepted";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("'wall'"), std::string::npos) << ex.what();
  }
}

// ---- Contact accelerations (eq. 12) ------------------------------------------------------------

engine::PlanarModelBuilder GravityBuilder() {
  engine::PlanarModelBuilder builder;
  builder.SetGravity({0.0, -kGravity});
  return builder;
}

TEST(SolveContactAccelerations, BallRestingOnGround) {
  const double m = 2.0;
  engine::PlanarModelBuilder builder = GravityBuilder();
  builder.AddBody(Body("ball", m, 0.01, {0.0, 0.1, 0.0}));
  Scene s = MakeScene(builder, {GroundDisk("floor", 0, 0.1)});
  const ContactAccelerationResult r = SolveContactAccelerations(
      *s.system, 0.0, s.q, Eigen::Vector3d::Zero(), {}, s.contact_rows, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.lambda_u(0), m * kGravity, kTol * m * kGravity);  // λ = m g
  EXPECT_NEAR(r.accel_u(0), 0.0, kTol * kGravity);
  EXPECT_LE(r.vdot.lpNorm<Eigen::Infinity>(), kTol * kGravity);
}

TEST(SolveContactAccelerations, ColumnOfThreeDisks) {
  // Disks of masses 1, 2, 3 stacked on the ground: the contact below each disk carries the
  // weight of everything above it: (m1 + m2 + m3) g, (m2 + m3) g, m3 g.
  const double m1 = 1.0, m2 = 2.0, m3 = 3.0, r1 = 0.3, r2 = 0.2, r3 = 0.25;
  engine::PlanarModelBuilder builder = GravityBuilder();
  builder.AddBody(Body("d1", m1, 0.05, {0.0, r1, 0.0}));
  builder.AddBody(Body("d2", m2, 0.05, {0.0, 2 * r1 + r2, 0.0}));
  builder.AddBody(Body("d3", m3, 0.05, {0.0, 2 * r1 + 2 * r2 + r3, 0.0}));
  Scene s = MakeScene(builder, {GroundDisk("floor", 0, r1), DiskDisk("d1d2", 0, r1, 1, r2),
                                DiskDisk("d2d3", 1, r2, 2, r3)});
  for (LcpSolver solver : {LcpSolver::kLemke, LcpSolver::kPgs, LcpSolver::kEnumerative}) {
    LcpOptions options;
    options.solver = solver;
    // As in RowOfEqualDisksMovesAsOneBlock: PGS's λ is off by up to ‖W⁻¹‖∞ × tolerance × scale
    // (‖W⁻¹‖∞ = 14 here), so it is asked for 1e-12 to meet the 1e-10 checks below.
    options.tolerance = 1e-12;
    const ContactAccelerationResult r = SolveContactAccelerations(
        *s.system, 0.0, s.q, Eigen::VectorXd::Zero(9), {}, s.contact_rows, options);
    ASSERT_TRUE(r.ok) << ToString(solver) << ": " << r.message;
    const double scale = (m1 + m2 + m3) * kGravity;  // largest |b| entry is of order g
    EXPECT_NEAR(r.lambda_u(0), (m1 + m2 + m3) * kGravity, kTol * scale);
    EXPECT_NEAR(r.lambda_u(1), (m2 + m3) * kGravity, kTol * scale);
    EXPECT_NEAR(r.lambda_u(2), m3 * kGravity, kTol * scale);
    EXPECT_LE(r.vdot.lpNorm<Eigen::Infinity>(), kTol * scale);
  }
}

TEST(SolveContactAccelerations, BlockOnTwoCornersWithOffCentreMass) {
  // Corners at x = −a and x = +b from the centre of mass (a ≠ b): Σλ = m g and −a λ₁ + b λ₂ = 0,
  // so λ₁ = m g b / (a + b), λ₂ = m g a / (a + b).
  const double m = 3.0, a = 0.7, b = 0.3, h = 0.2;
  engine::PlanarModelBuilder builder = GravityBuilder();
  builder.AddBody(Body("block", m, 0.4, {0.0, h, 0.0}));
  Scene s =
      MakeScene(builder, {GroundPoint("left", 0, {-a, -h}), GroundPoint("right", 0, {b, -h})});
  const ContactAccelerationResult r = SolveContactAccelerations(
      *s.system, 0.0, s.q, Eigen::Vector3d::Zero(), {}, s.contact_rows, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  const double scale = m * kGravity;
  EXPECT_NEAR(r.lambda_u(0), m * kGravity * b / (a + b), kTol * scale);
  EXPECT_NEAR(r.lambda_u(1), m * kGravity * a / (a + b), kTol * scale);
  EXPECT_NEAR(r.lambda_u.sum(), m * kGravity, kTol * scale);
  EXPECT_NEAR(-a * r.lambda_u(0) + b * r.lambda_u(1), 0.0, kTol * scale);
  EXPECT_LE(r.vdot.lpNorm<Eigen::Infinity>(), kTol * scale);
}

TEST(SolveContactAccelerations, BodyPulledAwayTakesOff) {
  // Upward force F > m g: the contact opens, λ = 0 and g̈ = F/m − g > 0.
  const double m = 2.0, F = 30.0;
  engine::PlanarModelBuilder builder = GravityBuilder();
  builder.AddBody(Body("ball", m, 0.01, {0.0, 0.1, 0.0}));
  engine::PlanarLoad pull;
  pull.name = "pull";
  pull.body = 0;
  pull.force = {0.0, F};
  builder.AddLoad(pull);
  Scene s = MakeScene(builder, {GroundDisk("floor", 0, 0.1)});
  const ContactAccelerationResult r = SolveContactAccelerations(
      *s.system, 0.0, s.q, Eigen::Vector3d::Zero(), {}, s.contact_rows, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NEAR(r.lambda_u(0), 0.0, kTol * F);
  EXPECT_NEAR(r.accel_u(0), F / m - kGravity, kTol * F);
  EXPECT_GT(r.accel_u(0), 0.0);
}

TEST(SolveContactAccelerations, PendulumLeaningOnWall) {
  // Bob at angle φ to the right of the vertical, leaning on a wall on its left (normal +x).
  // Moments about the pivot: λ L cos φ = m g L sin φ, so λ = m g tan φ, and the bob stays at
  // rest (v̇ = 0) with the joint rows satisfied at acceleration level.
  const double m = 1.5, J = 0.02, L = 0.8, r = 0.1, phi = 0.3;
  engine::PlanarModelBuilder builder = GravityBuilder();
  builder.AddBody(Body("bob", m, J, {L * std::sin(phi), -L * std::cos(phi), phi}));
  PlanarJoint pin;
  pin.name = "pin";
  pin.type = PlanarJointType::kRevolute;
  pin.body_a = kGround;
  pin.body_b = 0;
  pin.point_b = {0.0, L};
  builder.AddJoint(pin);
  PlanarContact wall;
  wall.name = "wall";
  wall.type = PlanarContactType::kDiskLine;
  wall.body_a = kGround;
  wall.point_a = {L * std::sin(phi) - r, 0.0};
  wall.normal_a = {1.0, 0.0};
  wall.body_b = 0;
  wall.radius_b = r;
  Scene s = MakeScene(builder, {wall});
  Eigen::VectorXd g;
  s.system->ConstraintValues(0.0, s.q, s.joint_rows, &g);
  ASSERT_LE(g.lpNorm<Eigen::Infinity>(), 1e-15);  // the scene is assembled
  const ContactAccelerationResult res = SolveContactAccelerations(
      *s.system, 0.0, s.q, Eigen::Vector3d::Zero(), s.joint_rows, s.contact_rows, LcpOptions{});
  ASSERT_TRUE(res.ok) << res.message;
  const double scale = m * kGravity;
  EXPECT_NEAR(res.lambda_u(0), m * kGravity * std::tan(phi), kTol * scale);
  EXPECT_LE(res.vdot.lpNorm<Eigen::Infinity>(), kTol * scale);
  EXPECT_LE(res.bilateral_residual, 1e-12 * scale);
  // Joint force balances gravity and the wall: M v̇ = F + G_Bᵀ λ_B + G_Uᵀ λ_U = 0.
  Eigen::MatrixXd G_b;
  s.system->ConstraintJacobian(0.0, s.q, s.joint_rows, &G_b);
  const Eigen::Vector2d joint_force_on_bob = (G_b.transpose() * res.lambda_b).head<2>();
  EXPECT_NEAR(joint_force_on_bob.x(), -m * kGravity * std::tan(phi), kTol * scale);
  EXPECT_NEAR(joint_force_on_bob.y(), m * kGravity, kTol * scale);
}

TEST(SolveContactAccelerations, RejectsBadInput) {
  engine::PlanarModelBuilder builder = GravityBuilder();
  builder.AddBody(Body("ball", 1.0, 0.01, {0.0, 0.1, 0.0}));
  Scene s = MakeScene(builder, {GroundDisk("floor", 0, 0.1)});
  EXPECT_THROW(SolveContactAccelerations(*s.system, 0.0, s.q, Eigen::Vector2d::Zero(), {},
                                         s.contact_rows, LcpOptions{}),
               std::invalid_argument);
  const std::vector<int> both = {s.contact_rows[0]};
  EXPECT_THROW(SolveContactAccelerations(*s.system, 0.0, s.q, Eigen::Vector3d::Zero(), both, both,
                                         LcpOptions{}),
               std::invalid_argument);
  LcpOptions bad;
  bad.tolerance = -1.0;
  EXPECT_THROW(SolveContactAccelerations(*s.system, 0.0, s.q, Eigen::Vector3d::Zero(), {},
                                         s.contact_rows, bad),
               std::invalid_argument);
}

// ---- Independent components (impact_problem.h, "Components") -------------------------------

// Nine spheres (nv = 54 ≥ engine::kSparseMinimumNv: the block-sparse path) in four groups of
// touching rows, plus two free spheres:
//   A  column on the floor: floor–s0, s0–s1, s1–s2   (3 rows, one component)
//   B  s3–s4 side by side at mid-air                 (1 row)
//   C  s5 on the floor                               (1 row)
//   D  s6 on the floor                               (1 row)
// With `joint`, a spherical joint holds s7 to s3 and a distance joint s8 to s6 (bilateral rows:
// the dense path).
struct SphereGroups {
  std::shared_ptr<const engine::SpatialModel> model;
  std::shared_ptr<engine::SpatialMultibodySystem> system;
  std::vector<int> rows;       // unilateral rows in the order above
  std::vector<int> bilateral;  // joint rows (empty without joints)
  Eigen::VectorXd q;
  std::vector<double> mass;
};

constexpr double kRadius = 0.1;

SphereGroups MakeSphereGroups(bool joint) {
  const Eigen::Vector3d positions[9] = {
      {0, 0, kRadius}, {0, 0, 3 * kRadius},       {0, 0, 5 * kRadius},
      {1, 0, 0.5},     {1 + 2 * kRadius, 0, 0.5}, {2, 0, kRadius},
      {3, 0, kRadius}, {1, 0, 0.5 + 3 * kRadius}, {3, 0, 4 * kRadius}};
  SphereGroups g;
  engine::SpatialModelBuilder builder;
  for (int i = 0; i < 9; ++i) {
    engine::SpatialBody b;
    b.name = "s" + std::to_string(i);
    b.mass = 1.0 + 0.25 * i;
    b.inertia = 0.4 * b.mass * kRadius * kRadius * Eigen::Matrix3d::Identity();
    b.position = positions[i];
    builder.AddBody(b);
    g.mass.push_back(b.mass);
  }
  if (joint) {
    engine::SpatialJoint j;
    j.name = "hold";
    j.type = engine::SpatialJointType::kSpherical;
    j.body_a = 3;
    j.body_b = 7;
    j.point_a = Eigen::Vector3d(0, 0, 1.5 * kRadius);
    j.point_b = Eigen::Vector3d(0, 0, -1.5 * kRadius);
    builder.AddJoint(j);
    engine::SpatialJoint d;
    d.name = "rod";
    d.type = engine::SpatialJointType::kDistance;
    d.body_a = 6;
    d.body_b = 8;
    d.length = 3 * kRadius;
    builder.AddJoint(d);
  }
  builder.SetGravity(Eigen::Vector3d(0, 0, -9.81));
  g.model = builder.Build();
  g.system = std::make_shared<engine::SpatialMultibodySystem>(g.model);
  g.bilateral = g.system->RowsOfKind(engine::ConstraintKind::kBilateral);
  const Shape floor = Shape::Plane(Eigen::Vector3d::UnitZ(), 0.0);
  const Shape ball = Shape::Sphere(kRadius);
  std::vector<SpatialContactPair> pairs = {{"floor_s0", engine::kGround, floor, 0, ball, -1.0},
                                           {"s0_s1", 0, ball, 1, ball, -1.0},
                                           {"s1_s2", 1, ball, 2, ball, -1.0},
                                           {"s3_s4", 3, ball, 4, ball, -1.0},
                                           {"floor_s5", engine::kGround, floor, 5, ball, -1.0},
                                           {"floor_s6", engine::kGround, floor, 6, ball, -1.0}};
  g.system->AddConstraintBlock(std::make_shared<SpatialContacts>(g.model, pairs));
  g.rows = g.system->RowsOfKind(engine::ConstraintKind::kUnilateral);
  g.q = g.model->InitialPositions();
  return g;
}

// v⁻: A falls onto the floor (s2 fastest), B closes, C rests, D falls; the free spheres spin.
Eigen::VectorXd GroupVelocities(const SphereGroups& g) {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(g.system->nv());
  v(6 * 0 + 2) = -1.0;
  v(6 * 1 + 2) = -1.5;
  v(6 * 2 + 2) = -3.0;
  v(6 * 3 + 0) = 1.0;
  v(6 * 4 + 0) = -0.5;
  v(6 * 6 + 2) = -2.0;
  v(6 * 7 + 4) = 3.0;
  v(6 * 8 + 3) = -1.0;
  return v;
}

TEST(SolveImpactComponents, SplitEqualsTheUnsplitDenseSolve) {
  const SphereGroups g = MakeSphereGroups(false);
  ASSERT_EQ(g.rows.size(), 6u);
  ASSERT_GE(g.system->nv(), engine::kSparseMinimumNv);
  const Eigen::VectorXd v_minus = GroupVelocities(g);
  const std::vector<double> e = {0.5, 0.3, 0.8, 1.0, 0.5, 0.2};
  const ImpactResult r = SolveImpact(*g.system, 0.0, g.q, v_minus, {}, g.rows, e, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  // Four components (A, B, C, D); C rests (b = 0) and is not solved; A is the largest.
  EXPECT_EQ(r.lcp.components, 4);
  EXPECT_EQ(r.lcp.components_solved, 3);
  EXPECT_EQ(r.largest_lcp, 3);

  // The unsplit problem, assembled densely here: W = G M⁻¹ Gᵀ, b = (1 + e) u⁻, one Lemke solve.
  Eigen::MatrixXd G, M;
  g.system->ConstraintJacobian(0.0, g.q, g.rows, &G);
  g.system->MassMatrix(g.q, &M);
  const Eigen::MatrixXd MinvGt = M.llt().solve(G.transpose());
  const Eigen::MatrixXd W = G * MinvGt;
  const Eigen::VectorXd u_minus = G * v_minus;
  const Eigen::VectorXd b =
      u_minus + Eigen::Map<const Eigen::VectorXd>(e.data(), 6).cwiseProduct(u_minus);
  const LcpResult whole = SolveLcp(W, b, LcpOptions{});
  ASSERT_TRUE(whole.ok) << whole.message;
  const Eigen::VectorXd v_plus = v_minus + MinvGt * whole.z;
  // W is positive definite (independent rows): the solution is unique. Both solves are exact up
  // to round-off; their difference is bounded by the LCP tolerance 1e-10 × scale ‖b‖∞ ≈ 6.
  const double scale = b.lpNorm<Eigen::Infinity>();
  EXPECT_LE((r.impulse_u - whole.z).lpNorm<Eigen::Infinity>(), 1e-10 * scale);
  EXPECT_LE((r.v_plus - v_plus).lpNorm<Eigen::Infinity>(), 1e-10 * scale);
  // Resting component: untouched, v⁺ = v⁻ exactly there; free spheres untouched.
  EXPECT_EQ(r.impulse_u(4), 0.0);
  for (int body : {5, 7, 8}) {
    EXPECT_EQ((r.v_plus.segment<6>(6 * body) - v_minus.segment<6>(6 * body)).norm(), 0.0)
        << "body " << body;
  }
  // Closed form on D (one sphere on the floor): u⁺ = −e u⁻, P = m (1 + e) |u⁻|.
  EXPECT_NEAR(r.v_plus(6 * 6 + 2), 0.2 * 2.0, 1e-12);
  EXPECT_NEAR(r.impulse_u(5), g.mass[6] * 1.2 * 2.0, 1e-12);
}

TEST(SolveImpactComponents, JointsJoinTheirBodies) {
  // With joints the dense path eliminates the bilateral rows and splits W_red along its exact
  // zeros. Checked on the conditions of eq. 4 themselves: u_B⁺ = 0, 0 ≤ u⁺ + e u⁻ ⊥ P ≥ 0, and
  // M (v⁺ − v⁻) = Gᵀ P over all rows. Tolerances: LCP residual 1e-10 relative to ‖b‖∞ ≈ 6;
  // the elimination is backward stable (1e-12 of the scale).
  const SphereGroups g = MakeSphereGroups(true);
  ASSERT_FALSE(g.bilateral.empty());
  Eigen::VectorXd v_minus = GroupVelocities(g);
  v_minus(6 * 7 + 0) = 1.0;  // s7 follows s3 at the joint (drift removed by u_B⁺ = 0 anyway)
  const std::vector<double> e = {0.5, 0.3, 0.8, 1.0, 0.5, 0.2};
  const ImpactResult r =
      SolveImpact(*g.system, 0.0, g.q, v_minus, g.bilateral, g.rows, e, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_LE(r.bilateral_residual, 1e-12 * 6.0);
  for (std::size_t k = 0; k < g.rows.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    const double w = r.u_plus_u(kk) + e[k] * r.u_minus_u(kk);
    EXPECT_GE(r.impulse_u(kk), 0.0);
    EXPECT_GE(w, -1e-10 * 6.0) << "row " << k;
    EXPECT_LE(std::min(std::abs(w), r.impulse_u(kk)), 1e-10 * 6.0) << "row " << k;
  }
  Eigen::MatrixXd G_b, G_u, M;
  g.system->ConstraintJacobian(0.0, g.q, g.bilateral, &G_b);
  g.system->ConstraintJacobian(0.0, g.q, g.rows, &G_u);
  g.system->MassMatrix(g.q, &M);
  const Eigen::VectorXd residual =
      M * (r.v_plus - v_minus) - G_b.transpose() * r.impulse_b - G_u.transpose() * r.impulse_u;
  EXPECT_LE(residual.lpNorm<Eigen::Infinity>(), 1e-12 * 60.0);
  // The rod makes s8 share D's impulse: it moves (it had only a spin before).
  EXPECT_GT(std::abs(r.v_plus(6 * 8 + 2) - v_minus(6 * 8 + 2)), 0.1);
}

TEST(SolveContactAccelerationsComponents, StackForcesAndSkippedComponents) {
  // At rest under gravity: the column carries λ = (m0 + m1 + m2) g, (m1 + m2) g, m2 g; C and D
  // carry their weight; B (side by side, same height) has b = 0: not solved, λ = 0. Exact up to
  // round-off of the LCP on a 3 × 3 positive definite W (1e-10 relative to ‖b‖∞ ~ 10).
  const SphereGroups g = MakeSphereGroups(false);
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(g.system->nv());
  const ContactAccelerationResult r =
      SolveContactAccelerations(*g.system, 0.0, g.q, v, {}, g.rows, LcpOptions{});
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.lcp.components, 4);
  EXPECT_EQ(r.lcp.components_solved, 3);
  EXPECT_EQ(r.largest_lcp, 3);
  const double g0 = 9.81, tol = 1e-10 * 30.0;
  ASSERT_NEAR(g.model->gravity().norm(), g0, 1e-12);
  EXPECT_NEAR(r.lambda_u(0), (g.mass[0] + g.mass[1] + g.mass[2]) * g0, tol);
  EXPECT_NEAR(r.lambda_u(1), (g.mass[1] + g.mass[2]) * g0, tol);
  EXPECT_NEAR(r.lambda_u(2), g.mass[2] * g0, tol);
  EXPECT_EQ(r.lambda_u(3), 0.0);
  EXPECT_NEAR(r.lambda_u(4), g.mass[5] * g0, tol);
  EXPECT_NEAR(r.lambda_u(5), g.mass[6] * g0, tol);
  EXPECT_LE(r.accel_u.cwiseAbs().maxCoeff(), tol);
}

}  // namespace
}  // namespace saltus::contact
