// Rolling and spinning resistance rows of spatial contacts (spatial_contacts.h, "Resistance
// rows"): names, order and links; G_R v against the relative rotation of the two bodies over a
// short motion (finite differences of the rotation matrices); γ_R against Richardson-extrapolated
// differences of G_R v; the block-sparse and one-pass paths; bad coefficients and pairs without a
// sphere rejected. Every pair type with a sphere is covered: ground plane, plane on a moving body
// given as B, sphere, box, triangle mesh (sphere on either side) and the FCL path (cylinder).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "contact/spatial_contacts.h"
#include "contact_test_shapes.h"
#include "engine/block_sparse.h"
#include "engine/constrained_dynamics.h"
#include "engine/rotation.h"
#include "engine/sliding_friction.h"
#include "engine/spatial_model.h"
#include "spatial_row_checks.h"

namespace saltus::contact {
namespace {

using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;
using testing::Pose;
using testing::Pyramid;
using testing::Rx;
using testing::Rz;

const Isometry3d kOff = Pose(Vector3d(0.05, -0.02, 0.03), Rz(0.4) * Rx(-0.3));
constexpr double kRolling = 0.01, kSpinning = 0.002;

// Every pair type with a sphere, between body 0 (or the ground) and body 1.
std::vector<SpatialContactPair> SpherePairs(double mu, double rolling, double spinning) {
  const Shape floor =
      Shape::Plane(Vector3d(0.1, -0.2, 1.0), -0.05, Isometry3d::Identity(), "floor");
  const Shape mesh = Shape::TriangleMeshSurface(
      Pyramid(), Pose(Vector3d(0.01, 0.02, -0.03), Rz(0.3) * Rx(0.2)), "pyramid");
  using engine::kGround;
  std::vector<SpatialContactPair> pairs = {
      {"floor_ball", kGround, floor, 1, Shape::Sphere(0.1, kOff), -1.0},
      {"ball_on_plane_b", 1, Shape::Sphere(0.12, kOff), 0, Shape::Plane(Vector3d(1, 0, 0.2), 0.1),
       -1.0},
      {"balls", 0, Shape::Sphere(0.15, kOff), 1, Shape::Sphere(0.1), -1.0},
      {"box_ball", 0, Shape::Box(Vector3d(0.2, 0.1, 0.15)), 1, Shape::Sphere(0.1, kOff), -1.0},
      {"mesh_ball", 0, mesh, 1, Shape::Sphere(0.05, Pose(Vector3d(0.03, -0.02, 0.01))), -1.0},
      {"ball_ground_mesh", 1, Shape::Sphere(0.04, kOff), kGround, mesh, -1.0},
      {"ball_cylinder", 0, Shape::Sphere(0.1, kOff), 1, Shape::Cylinder(0.06, 0.2), -1.0},
  };
  for (SpatialContactPair& p : pairs) {
    p.friction = mu;
    p.rolling_friction = rolling;
    p.spinning_friction = spinning;
  }
  return pairs;
}

struct Fixture {
  std::shared_ptr<engine::SpatialMultibodySystem> system;
  std::shared_ptr<const SpatialContacts> contacts;
};

Fixture MakeFixture(double mu, double rolling, double spinning) {
  Fixture f;
  const auto model = testing::TwoFreeBodies(Vector3d(0.02, -0.01, 0.03));
  f.system = std::make_shared<engine::SpatialMultibodySystem>(model);
  f.contacts = std::make_shared<SpatialContacts>(model, SpherePairs(mu, rolling, spinning));
  f.system->AddConstraintBlock(f.contacts);
  return f;
}

std::vector<int> Range(int begin, int end) {
  std::vector<int> rows;
  for (int i = begin; i < end; ++i) rows.push_back(i);
  return rows;
}

// The axis u of a resistance row at q: t1, t2 (".r1", ".r2") or n (".s").
Vector3d Axis(const SpatialContacts& c, const VectorXd& q, int row) {
  const std::string& name = c.row_info(row).name;
  const auto [t1, t2] = c.Tangents(q, row);
  if (c.row_info(row).spinning) return c.Evaluate(q, row).normal;
  return name.substr(name.size() - 3) == ".r1" ? t1 : t2;
}

Matrix3d Rotation(const VectorXd& q, int body) {
  if (body == engine::kGround) return Matrix3d::Identity();
  return engine::QuaternionToRotation(q.segment<4>(7 * body + 3));
}

TEST(SpatialResistance, RowsFollowTheTangentialRowsWithNamesAndLinks) {
  const Fixture f = MakeFixture(0.5, kRolling, kSpinning);
  const SpatialContacts& c = *f.contacts;
  const int n = c.num_normal_rows();
  ASSERT_EQ(n, 7);  // one row per pair
  ASSERT_EQ(c.first_resistance_row(), 3 * n);
  ASSERT_EQ(c.num_rows(), 6 * n);  // 2 tangential + 2 rolling + 1 spinning per normal row
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(c.row_info(r).rolling_friction, kRolling);  // stored as given, exactly
    EXPECT_EQ(c.row_info(r).spinning_friction, kSpinning);
    const char* suffix[] = {".r1", ".r2", ".s"};
    for (int k = 0; k < 3; ++k) {
      const int row = 3 * n + 3 * r + k;
      EXPECT_EQ(c.row_info(row).kind, engine::ConstraintKind::kResistance);
      EXPECT_EQ(c.row_info(row).level, engine::ConstraintLevel::kVelocity);
      EXPECT_EQ(c.row_info(row).name, c.row_info(r).name + suffix[k]);
      EXPECT_EQ(c.row_info(row).spinning, k == 2);
      EXPECT_EQ(c.row_info(row).normal_row, r);
      EXPECT_EQ(c.NormalRowOf(row), r);
    }
  }
  const engine::MechanicalSystem& sys = *f.system;
  EXPECT_EQ(std::vector<int>(sys.RollingRows(2).begin(), sys.RollingRows(2).end()),
            (std::vector<int>{3 * n + 6, 3 * n + 7}));
  EXPECT_EQ(std::vector<int>(sys.SpinningRows(2).begin(), sys.SpinningRows(2).end()),
            (std::vector<int>{3 * n + 8}));
  EXPECT_EQ(sys.NormalRow(3 * n + 8), 2);
  EXPECT_EQ(sys.TangentRows(2).size(), 2u);  // the resistance rows are not tangential rows
  EXPECT_TRUE(sys.RollingRows(3 * n).empty());
  // Rolling without Coulomb friction and without spinning: two rows per normal row, right after
  // the normal rows; no resistance: the frictionless block.
  const Fixture rolling_only = MakeFixture(0.0, kRolling, 0.0);
  EXPECT_EQ(rolling_only.contacts->num_rows(), 3 * n);
  EXPECT_EQ(rolling_only.contacts->row_info(n + 1).name, "floor_ball.r2");
  EXPECT_TRUE(rolling_only.system->SpinningRows(0).empty());
  EXPECT_EQ(MakeFixture(0.0, 0.0, 0.0).contacts->num_rows(), n);
}

TEST(SpatialResistance, BadCoefficientsAndPairsWithoutASphereAreRejected) {
  const auto model = testing::TwoFreeBodies();
  const auto rejects = [&](SpatialContactPair pair, const std::string& part) {
    try {
      SpatialContacts(model, {pair});
      ADD_FAILURE() << "accepted: " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'p'"), std::string::npos) << e.what();
    }
  };
  SpatialContactPair ball{"p", engine::kGround, DefaultPairPlane(), 1, Shape::Sphere(0.1)};
  SpatialContactPair p = ball;
  p.rolling_friction = -0.01;
  rejects(p, "rolling_friction must be a finite number >= 0");
  p.rolling_friction = std::numeric_limits<double>::quiet_NaN();
  rejects(p, "rolling_friction must be a finite number >= 0");
  p = ball;
  p.spinning_friction = std::numeric_limits<double>::infinity();
  rejects(p, "spinning_friction must be a finite number >= 0");
  SpatialContactPair box{"p", engine::kGround, DefaultPairPlane(), 1,
                         Shape::Box(Vector3d(0.1, 0.1, 0.1))};
  box.rolling_friction = 0.01;
  rejects(box, "apply to pairs with a sphere on one side");
  box.rolling_friction = 0.0;
  box.spinning_friction = 0.01;
  rejects(box, "apply to pairs with a sphere on one side");
  // The system checks hand-made metadata too: μ_R > 0 without its two rolling rows.
  engine::SpatialMultibodySystem system(model);
  struct OneRow : engine::ConstraintBlock {
    engine::ConstraintRowInfo info{engine::ConstraintKind::kUnilateral, "c"};
    int num_rows() const override { return 1; }
    const engine::ConstraintRowInfo& row_info(int) const override { return info; }
    void Values(double, const VectorXd&, std::span<const int>,
                Eigen::Ref<VectorXd> g) const override {
      g.setZero();
    }
    void Jacobian(double, const VectorXd&, std::span<const int>,
                  Eigen::Ref<Eigen::MatrixXd> G) const override {
      G.setZero();
    }
    void Gamma(double, const VectorXd&, const VectorXd&, std::span<const int>,
               Eigen::Ref<VectorXd> gamma) const override {
      gamma.setZero();
    }
  };
  auto block = std::make_shared<OneRow>();
  block->info.rolling_friction = 0.01;
  EXPECT_THROW(system.AddConstraintBlock(block), std::invalid_argument);
  EXPECT_EQ(system.num_constraints(), 0);  // a rejected block leaves the system unchanged
}

TEST(SpatialResistance, JacobianIsTheRelativeRotationOfTheTwoBodies) {
  // G_R v against u·(θ_B − θ_A)/(2ε), θ the rotation vector of R(q ⊕ εv) R(q ⊕ −εv)ᵀ (world
  // frame): for a body turning at constant body-frame ω, R(q ⊕ s v) = R e^{s[ω]}, so this
  // rotation is R e^{2ε[ω]} Rᵀ and θ = 2ε R ω exactly: only round-off remains, ε_mach/ε ≈ 2e-11
  // at ε = 1e-5 times |ω| ≲ 3.5. Tolerance 1e-9. The row does not depend on the contact
  // geometry beyond u, so this also holds on the FCL path.
  const Fixture f = MakeFixture(0.5, kRolling, kSpinning);
  const SpatialContacts& c = *f.contacts;
  const std::vector<int> rows = Range(c.first_resistance_row(), c.num_rows());
  const double eps = 1e-5;
  std::mt19937 rng(31);
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    VectorXd q, v, qp, qm;
    testing::RandomTwoBodyState(rng, &q, &v);
    f.system->IntegratePosition(q, v, eps, &qp);
    f.system->IntegratePosition(q, v, -eps, &qm);
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0, q, rows, &G);
    const VectorXd rate = G * v;
    const auto turn = [&](int body) {
      const Eigen::AngleAxisd aa(Rotation(qp, body) * Rotation(qm, body).transpose());
      return Vector3d(aa.angle() * aa.axis() / (2 * eps));
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const int row = rows[i];
      const SpatialContactPair& pair = c.pairs()[static_cast<std::size_t>(c.RowPair(row))];
      const double fd = Axis(c, q, row).dot(turn(pair.body_b) - turn(pair.body_a));
      const double err = std::abs(fd - rate[static_cast<Eigen::Index>(i)]);
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-9) << c.row_info(row).name << " trial " << trial;
      // No linear part: the rows do not see translations.
      for (int body = 0; body < 2; ++body) {
        EXPECT_TRUE(G.row(static_cast<Eigen::Index>(i)).segment<3>(6 * body).isZero(0.0));
      }
    }
  }
  std::printf("G_R v vs relative rotation: worst error %.2e\n", worst);
}

TEST(SpatialResistance, BlockSparseRowsAndOnePassRatesMatchTheDenseJacobian) {
  const Fixture f = MakeFixture(0.5, kRolling, kSpinning);
  const int m = f.contacts->num_rows();
  const std::vector<int> rows = Range(0, m);
  std::mt19937 rng(37);
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v;
    testing::RandomTwoBodyState(rng, &q, &v);
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0, q, rows, &G);
    engine::BlockSparseRows sparse;
    ASSERT_TRUE(f.system->BlockSparseMatrices(0, q, rows, nullptr, &sparse));
    EXPECT_LE((sparse.ToDense() - G).cwiseAbs().maxCoeff(), 1e-14) << "trial " << trial;
    VectorXd g, g_dot, rate;
    f.system->ConstraintValuesAndRates(0, q, v, rows, &g, &g_dot);
    EXPECT_TRUE(g.tail(m - f.contacts->num_normal_rows()).isZero(0.0));  // velocity level
    engine::ConstraintRate(*f.system, 0, q, v, rows, &rate);
    EXPECT_EQ(g_dot, rate) << "trial " << trial;  // documented bit for bit
  }
}

TEST(SpatialResistance, GammaMatchesRichardsonDifferencesOfGv) {
  // γ_R = d/dε [G_R(q ⊕ ε v) v] at ε = 0 against testing::GammaReference (ε = 4e-5; its
  // tolerance, as for γ_T in spatial_tangents_test). A row is checked
  // only where its normal row's γ passes the same check (no feature switch within ±ε); the FCL
  // pair is left out (normals to ~3e-7). Enough sharp checks (estimate ≤ 1e-9 (1 + |γ|)) are
  // required per pair.
  const Fixture f = MakeFixture(0.5, kRolling, kSpinning);
  const SpatialContacts& c = *f.contacts;
  const std::vector<int> rows = Range(0, c.num_rows());
  std::mt19937 rng(41);
  std::map<std::string, int> sharp;
  double worst = 0, worst_difference = 0;
  for (int trial = 0; trial < 100; ++trial) {
    VectorXd q, v;
    testing::RandomTwoBodyState(rng, &q, &v);
    const testing::GammaReference ref(*f.system, q, v, rows, 4e-5);
    const auto tolerance = [&](Eigen::Index k) {
      return ref.Tolerance(k, !c.HasAnalyticGamma(c.NormalRowOf(static_cast<int>(k))));
    };
    for (int row = c.first_resistance_row(); row < c.num_rows(); ++row) {
      const auto k = static_cast<Eigen::Index>(row);
      const int r = c.NormalRowOf(row);
      if (!c.Evaluate(q, r).analytic) continue;
      if (ref.Error(r) > tolerance(r)) continue;  // the normal row's features switch
      const double err = ref.Error(k);
      EXPECT_LE(err, tolerance(k)) << c.row_info(row).name << " trial " << trial << ": analytic "
                                   << ref.gamma[k] << ", difference " << ref.r2[k];
      const double scale = 1 + std::abs(ref.gamma[k]);
      if (ref.Estimate(k) > 1e-9 * scale) continue;
      double& w = c.HasAnalyticGamma(r) ? worst : worst_difference;
      w = std::max(w, err / scale);
      ++sharp[c.pairs()[static_cast<std::size_t>(c.RowPair(row))].name];
    }
  }
  for (const SpatialContactPair& p : c.pairs()) {
    if (p.name == "ball_cylinder") continue;  // the FCL path (see above)
    EXPECT_GE(sharp[p.name], 30) << p.name;
  }
  std::printf(
      "gamma_R vs Richardson difference, sharp checks: worst relative %.2e closed-form, %.2e "
      "central-difference rows\n",
      worst, worst_difference);
}

TEST(SpatialResistance, BallRollingOnTheFloorSeesItsAngularVelocity) {
  // A ball on the horizontal ground (frame fixed in the ground: t1, t2, n constant): G_R v is
  // the world angular velocity's components along t1, t2, e_z, and γ_R = u̇·ω = 0 exactly.
  engine::SpatialModelBuilder builder;
  engine::SpatialBody ball;
  ball.name = "ball";
  ball.inertia = Matrix3d::Identity() * 0.004;
  builder.AddBody(ball);
  const auto model = builder.Build();
  SpatialContactPair pair{"floor", engine::kGround, DefaultPairPlane(), 0, Shape::Sphere(0.1)};
  pair.rolling_friction = kRolling;
  pair.spinning_friction = kSpinning;
  engine::SpatialMultibodySystem system(model);
  const auto contacts =
      std::make_shared<SpatialContacts>(model, std::vector<SpatialContactPair>{pair});
  system.AddConstraintBlock(contacts);
  VectorXd q(7), v(6);
  q << 0.3, -0.2, 0.1, Eigen::Vector4d(0.9, 0.1, -0.3, 0.2).normalized();
  v << 1.0, 0.5, 0.0, 3.0, -1.0, 2.0;
  const std::vector<int> rows = {1, 2, 3};
  Eigen::MatrixXd G;
  VectorXd gamma;
  system.ConstraintJacobian(0, q, rows, &G);
  system.ConstraintGamma(0, q, v, rows, &gamma);
  const Vector3d omega = Rotation(q, 0) * v.tail<3>();
  const auto [t1, t2] = contacts->Tangents(q, 0);
  const Vector3d expected(t1.dot(omega), t2.dot(omega), omega.z());
  // R ω against the Jacobian's Rᵀu: a few ulps of products of O(1) numbers.
  EXPECT_LE((G * v - expected).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LE(gamma.cwiseAbs().maxCoeff(), 1e-14);
}

// A ball (mass m, radius R, J = 2/5 m R²) centred on its body on the horizontal ground, with
// rolling and spinning resistance, and a view whose rolling and spinning groups slide.
struct RollingBall {
  static constexpr double kMass = 2.0, kRadius = 0.1, kGravity = 9.81;
  std::shared_ptr<engine::SpatialMultibodySystem> system;
  RollingBall() {
    engine::SpatialModelBuilder builder;
    engine::SpatialBody ball;
    ball.name = "ball";
    ball.mass = kMass;
    ball.inertia = Matrix3d::Identity() * (0.4 * kMass * kRadius * kRadius);
    builder.AddBody(ball);
    builder.SetGravity(Vector3d(0, 0, -kGravity));
    const auto model = builder.Build();
    SpatialContactPair pair{"floor", engine::kGround, DefaultPairPlane(), 0,
                            Shape::Sphere(kRadius)};
    pair.friction = 0.5;
    pair.rolling_friction = kRolling;
    pair.spinning_friction = kSpinning;
    system = std::make_shared<engine::SpatialMultibodySystem>(model);
    system->AddConstraintBlock(
        std::make_shared<SpatialContacts>(model, std::vector<SpatialContactPair>{pair}));
  }
};

TEST(SpatialResistance, RollingAndSpinningSlidesGiveTheClosedFormDecelerations) {
  // Rolling without slip (tangential rows active: stick) at ẋ = v₀ e_x, ω = (0, v₀/R, ω_z), the
  // rolling group sliding along its current direction d_R = ġ_R/‖ġ_R‖ (the rolling axis e_y in
  // the contact frame), the spinning group along sign(ω_z) = +1. The resistance torques −μ_R m g
  // d_R and −μ_S m g sign(ω_z) (λ_N = m g) give, with m a = F_T and J α = −F_T R − μ_R m g (a = α
  // R):
  //   a = −(5/7) μ_R g / R   along e_x,     ω̇_z = −μ_S m g / J,
  // i.e. the ball stops rolling at v₀/a and spinning at J ω_z/(μ_S m g). Tolerance: round-off of
  // the index-1 solve on O(100) numbers (10 ulps · 100 ≈ 1e-13).
  const RollingBall ball;
  engine::SlidingFrictionView view(*ball.system);
  view.set_anchor_gate(true);
  const double v0 = 1.5, wz = 4.0, R = RollingBall::kRadius;
  VectorXd q(7), v(6);
  q << 0.0, 0.0, R, 1.0, 0.0, 0.0, 0.0;
  v << v0, 0.0, 0.0, 0.0, v0 / R, wz;
  const std::vector<int> rolling = {3, 4}, spinning = {5};
  VectorXd rate;
  engine::ConstraintRate(view, 0, q, v, rolling, &rate);
  engine::SlidingContact roll{0, kRolling, engine::SlipDirection::kCurrent, rate.normalized(),
                              engine::FrictionGroup::kRolling};
  engine::SlidingContact spin{0, kSpinning, engine::SlipDirection::kCurrent,
                              Eigen::VectorXd::Ones(1), engine::FrictionGroup::kSpinning};
  view.SetSlidingContacts({roll, spin});
  engine::ConstrainedDynamics dynamics(view);
  const std::vector<int> rows = {0, 1, 2};  // normal row and the sticking tangential rows
  VectorXd vdot, lambda;
  const engine::DynamicsStatus status = dynamics.Solve(0.0, q, v, rows, &vdot, &lambda);
  ASSERT_TRUE(status.ok);
  const double m = RollingBall::kMass, g = RollingBall::kGravity, J = 0.4 * m * R * R;
  EXPECT_NEAR(lambda[0], m * g, 1e-12);
  EXPECT_NEAR(vdot[0], -5.0 / 7.0 * kRolling * g / R, 1e-13);
  EXPECT_NEAR(vdot[1], 0.0, 1e-13);
  EXPECT_NEAR(vdot[2], 0.0, 1e-13);
  EXPECT_NEAR(vdot[4], vdot[0] / R, 1e-12);  // still rolling without slip
  EXPECT_NEAR(vdot[5], -kSpinning * m * g / J, 1e-12);
  // Tangential force m a (rolling resistance acts through the contact's friction force).
  EXPECT_NEAR(std::hypot(lambda[1], lambda[2]), m * 5.0 / 7.0 * kRolling * g / R, 1e-12);
  // The same group list with a listed-twice entry is refused; a group the contact lacks too.
  EXPECT_THROW(view.SetSlidingContacts({roll, roll}), std::invalid_argument);
  engine::SlidingContact bad = roll;
  bad.normal_row = 1;  // a tangential row: not unilateral
  EXPECT_THROW(view.SetSlidingContacts({bad}), std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
