// Planar contact rows: gaps against hand-computed geometry, G against central finite differences
// of the gap, γ against finite differences of G v along q ± ε v, and validation messages.

#include "contact/planar_contacts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

namespace saltus::contact {
namespace {

using engine::kGround;

std::shared_ptr<const engine::PlanarModel> Bodies(int n) {
  engine::PlanarModelBuilder builder;
  for (int i = 0; i < n; ++i) {
    engine::PlanarBody b;
    b.name = "body" + std::to_string(i);
    builder.AddBody(b);
  }
  return builder.Build();
}

std::vector<int> AllRows(const PlanarContacts& c) {
  std::vector<int> rows(static_cast<std::size_t>(c.num_rows()));
  for (int i = 0; i < c.num_rows(); ++i) rows[static_cast<std::size_t>(i)] = i;
  return rows;
}

Eigen::VectorXd Gaps(const PlanarContacts& c, const Eigen::VectorXd& q) {
  const std::vector<int> rows = AllRows(c);
  Eigen::VectorXd g(c.num_rows());
  c.Values(0.0, q, rows, g);
  return g;
}

Eigen::MatrixXd Jacobian(const PlanarContacts& c, const Eigen::VectorXd& q) {
  const std::vector<int> rows = AllRows(c);
  Eigen::MatrixXd G(c.num_rows(), q.size());
  c.Jacobian(0.0, q, rows, G);
  return G;
}

Eigen::VectorXd Gamma(const PlanarContacts& c, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const std::vector<int> rows = AllRows(c);
  Eigen::VectorXd gamma(c.num_rows());
  c.Gamma(0.0, q, v, rows, gamma);
  return gamma;
}

PlanarContact Make(const std::string& name, PlanarContactType type, int a, int b) {
  PlanarContact c;
  c.name = name;
  c.type = type;
  c.body_a = a;
  c.body_b = b;
  return c;
}

TEST(PlanarContacts, GapsMatchHandComputedGeometry) {
  const auto model = Bodies(2);
  std::vector<PlanarContact> contacts;
  // 1. Point (1, 0) of body 0 above the ground line y = 0.5 (normal +y).
  PlanarContact pl = Make("point_line", PlanarContactType::kPointLine, kGround, 0);
  pl.point_a = {0.0, 0.5};
  pl.point_b = {1.0, 0.0};
  contacts.push_back(pl);
  // 2. Disk of radius 0.2 (centre (0, 0) of body 1) against a line carried by body 0: through
  //    (0, −1) in body 0's frame with normal (0, 2) (normalized to +y of body 0).
  PlanarContact dl = Make("disk_line", PlanarContactType::kDiskLine, 0, 1);
  dl.point_a = {0.0, -1.0};
  dl.normal_a = {0.0, 2.0};
  dl.radius_b = 0.2;
  contacts.push_back(dl);
  // 3. Disk–disk: radius 0.3 at (0.5, 0) of body 0, radius 0.4 at the centre of body 1.
  PlanarContact dd = Make("disk_disk", PlanarContactType::kDiskDisk, 0, 1);
  dd.point_a = {0.5, 0.0};
  dd.radius_a = 0.3;
  dd.radius_b = 0.4;
  contacts.push_back(dd);
  const PlanarContacts block(model, contacts);

  // Body 0 at (1, 2) turned by 90°, body 1 at (−1, 3), any angle.
  Eigen::VectorXd q(6);
  q << 1.0, 2.0, std::numbers::pi / 2, -1.0, 3.0, 0.7;
  const Eigen::VectorXd g = Gaps(block, q);
  // 1. Point: (1, 2) + R(90°)(1, 0) = (1, 3); gap = 3 − 0.5 = 2.5.
  EXPECT_NEAR(g(0), 2.5, 1e-15);
  // 2. Line point (1, 2) + R(90°)(0, −1) = (2, 2), normal R(90°)(0, 1) = (−1, 0);
  //    gap = (−1, 0)·((−1, 3) − (2, 2)) − 0.2 = 3 − 0.2 = 2.8.
  EXPECT_NEAR(g(1), 2.8, 1e-15);
  // 3. Disk a centre (1, 2) + R(90°)(0.5, 0) = (1, 2.5); distance to (−1, 3) is √(4 + 0.25);
  //    gap = √4.25 − 0.7.
  EXPECT_NEAR(g(2), std::sqrt(4.25) - 0.7, 1e-15);
  // Round-off: cos(π/2) ≈ 6e-17, so 1e-15 absolute is a few ulps of the O(1) values.
}

TEST(PlanarContacts, GroundCanCarryThePointOrTheDisk) {
  const auto model = Bodies(1);
  // A ground point (0, 1) below a line of body 0 (through its centre, normal −y of the body):
  // with body 0 at (0, 3) the gap is 2.
  PlanarContact c = Make("ceiling", PlanarContactType::kPointLine, 0, kGround);
  c.normal_a = {0.0, -1.0};
  c.point_b = {0.0, 1.0};
  const PlanarContacts block(model, {c});
  const Eigen::Vector3d q(0.0, 3.0, 0.0);
  EXPECT_NEAR(Gaps(block, q)(0), 2.0, 1e-15);
  // Only body 0's columns: moving body 0 up opens the gap (∂g/∂y = +1).
  const Eigen::MatrixXd G = Jacobian(block, q);
  EXPECT_NEAR(G(0, 1), 1.0, 1e-15);
}

// Random contacts of every type between three bodies and the ground, lines on moving bodies
// included, for the finite-difference checks.
PlanarContacts RandomContacts(std::mt19937& rng) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0), pos(0.1, 0.5);
  const auto model = Bodies(3);
  const auto vec = [&] { return Eigen::Vector2d(uni(rng), uni(rng)); };
  std::vector<PlanarContact> cs;
  const std::vector<std::pair<int, int>> pairs = {{kGround, 0}, {0, 1},       {1, 2},
                                                  {2, 0},       {1, kGround}, {kGround, 2}};
  int k = 0;
  for (const auto& [a, b] : pairs) {
    for (PlanarContactType type : {PlanarContactType::kPointLine, PlanarContactType::kDiskLine,
                                   PlanarContactType::kDiskDisk}) {
      PlanarContact c = Make("c" + std::to_string(k++), type, a, b);
      c.point_a = vec();
      c.point_b = vec();
      c.normal_a = vec();
      c.radius_a = type == PlanarContactType::kDiskDisk ? pos(rng) : 0.0;
      c.radius_b = type == PlanarContactType::kPointLine ? 0.0 : pos(rng);
      cs.push_back(c);
    }
  }
  return PlanarContacts(model, cs);
}

Eigen::VectorXd RandomState(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  Eigen::VectorXd x(9);
  for (int i = 0; i < 9; ++i) x(i) = scale * uni(rng);
  return x;
}

TEST(PlanarContacts, JacobianMatchesFiniteDifferencesOfTheGap) {
  // Central differences with step ε = 1e-6: truncation error ε²/6 |g'''| ≈ 1e-12 (the gap's
  // derivatives are O(1) on these O(1) configurations, disk centres kept ≥ ~0.1 apart in
  // practice), round-off ε_mach |g| / ε ≈ 1e-10. Tolerance 1e-8 covers both with margin.
  std::mt19937 rng(42);
  const double eps = 1e-6;
  for (int trial = 0; trial < 50; ++trial) {
    const PlanarContacts block = RandomContacts(rng);
    const Eigen::VectorXd q = RandomState(rng, 2.0);
    const Eigen::MatrixXd G = Jacobian(block, q);
    Eigen::MatrixXd G_fd(G.rows(), G.cols());
    for (int j = 0; j < 9; ++j) {
      Eigen::VectorXd qp = q, qm = q;
      qp(j) += eps;
      qm(j) -= eps;
      G_fd.col(j) = (Gaps(block, qp) - Gaps(block, qm)) / (2.0 * eps);
    }
    const Eigen::VectorXd g = Gaps(block, q);
    for (Eigen::Index i = 0; i < G.rows(); ++i) {
      // Skip the rare disk pairs whose centres nearly coincide (gap ≈ −r_a − r_b): there the
      // normal turns fast and the finite difference is inaccurate.
      const PlanarContact& c = block.contacts()[static_cast<std::size_t>(i)];
      if (c.type == PlanarContactType::kDiskDisk && g(i) + c.radius_a + c.radius_b < 0.05) continue;
      EXPECT_LE((G.row(i) - G_fd.row(i)).lpNorm<Eigen::Infinity>(), 1e-8)
          << "trial " << trial << ", " << c.name;
    }
  }
}

TEST(PlanarContacts, GammaMatchesFiniteDifferencesOfGv) {
  // γ = Ġ v = d/ds [G(q + s v) v] at s = 0 (T = I for planar bodies). Central differences with
  // s = 1e-6: truncation O(s²) ≈ 1e-12, round-off ε_mach |G v| / s ≈ 1e-10; tolerance 1e-7 with
  // |v| ≤ 2 (γ is quadratic in v, so scaled by 4).
  std::mt19937 rng(7);
  const double s = 1e-6;
  for (int trial = 0; trial < 50; ++trial) {
    const PlanarContacts block = RandomContacts(rng);
    const Eigen::VectorXd q = RandomState(rng, 2.0);
    const Eigen::VectorXd v = RandomState(rng, 2.0);
    const Eigen::VectorXd gamma = Gamma(block, q, v);
    const Eigen::VectorXd gamma_fd =
        (Jacobian(block, q + s * v) * v - Jacobian(block, q - s * v) * v) / (2.0 * s);
    const Eigen::VectorXd g = Gaps(block, q);
    for (Eigen::Index i = 0; i < gamma.size(); ++i) {
      const PlanarContact& c = block.contacts()[static_cast<std::size_t>(i)];
      if (c.type == PlanarContactType::kDiskDisk && g(i) + c.radius_a + c.radius_b < 0.05) continue;
      EXPECT_NEAR(gamma(i), gamma_fd(i), 1e-7 * 4.0) << "trial " << trial << ", " << c.name;
    }
  }
}

TEST(PlanarContacts, SecondDerivativeOfTheGapAlongATrajectory) {
  // Independent check of g̈ = G v̇ + γ: along q(s) = q + s v + ½ s² a, the second central
  // difference of g at s = 0 is g̈ with v̇ = a. Step 1e-4: truncation O(h²) ≈ 1e-8, round-off
  // ε_mach |g| / h² ≈ 1e-8; tolerance 1e-6.
  std::mt19937 rng(3);
  const double h = 1e-4;
  for (int trial = 0; trial < 20; ++trial) {
    const PlanarContacts block = RandomContacts(rng);
    const Eigen::VectorXd q = RandomState(rng, 2.0);
    const Eigen::VectorXd v = RandomState(rng, 1.0);
    const Eigen::VectorXd a = RandomState(rng, 1.0);
    const auto at = [&](double t) { return Eigen::VectorXd(q + t * v + 0.5 * t * t * a); };
    const Eigen::VectorXd g_dd_fd =
        (Gaps(block, at(h)) - 2.0 * Gaps(block, at(0.0)) + Gaps(block, at(-h))) / (h * h);
    const Eigen::VectorXd g_dd = Jacobian(block, q) * a + Gamma(block, q, v);
    const Eigen::VectorXd g = Gaps(block, q);
    for (Eigen::Index i = 0; i < g.size(); ++i) {
      const PlanarContact& c = block.contacts()[static_cast<std::size_t>(i)];
      if (c.type == PlanarContactType::kDiskDisk && g(i) + c.radius_a + c.radius_b < 0.05) continue;
      EXPECT_NEAR(g_dd(i), g_dd_fd(i), 1e-6) << "trial " << trial << ", " << c.name;
    }
  }
}

TEST(PlanarContacts, SubsetsOfRowsAndRowInfo) {
  std::mt19937 rng(1);
  const PlanarContacts block = RandomContacts(rng);
  const Eigen::VectorXd q = RandomState(rng, 1.0);
  const Eigen::VectorXd v = RandomState(rng, 1.0);
  const std::vector<int> rows = {2, 5, 11};
  Eigen::VectorXd g(3), gamma(3);
  Eigen::MatrixXd G(3, 9);
  block.Values(0.0, q, rows, g);
  block.Jacobian(0.0, q, rows, G);
  block.Gamma(0.0, q, v, rows, gamma);
  const Eigen::VectorXd g_all = Gaps(block, q), gamma_all = Gamma(block, q, v);
  const Eigen::MatrixXd G_all = Jacobian(block, q);
  for (int k = 0; k < 3; ++k) {
    // Same arithmetic row by row, so equal to the last ulp; 1e-15 on O(1) values.
    EXPECT_NEAR(g(k), g_all(rows[static_cast<std::size_t>(k)]), 1e-15);
    EXPECT_NEAR(gamma(k), gamma_all(rows[static_cast<std::size_t>(k)]), 1e-15);
    EXPECT_LE((G.row(k) - G_all.row(rows[static_cast<std::size_t>(k)])).norm(), 1e-15);
  }
  EXPECT_EQ(block.row_info(5).name, "c5");
  EXPECT_EQ(block.row_info(5).kind, engine::ConstraintKind::kUnilateral);
  EXPECT_EQ(block.num_rows(), 18);
}

TEST(PlanarContacts, RestitutionAndNormalAreStored) {
  const auto model = Bodies(1);
  PlanarContact c = Make("floor", PlanarContactType::kDiskLine, kGround, 0);
  c.normal_a = {0.0, 3.0};
  c.radius_b = 0.1;
  c.restitution = 0.8;
  PlanarContact d = c;
  d.name = "floor2";
  d.restitution = -0.5;
  const PlanarContacts block(model, {c, d});
  EXPECT_NEAR(block.row_info(0).restitution, 0.8, 1e-15);  // stored as given
  EXPECT_LT(block.row_info(1).restitution, 0.0);           // negative: the simulation's global one
  EXPECT_NEAR(block.contacts()[0].normal_a.norm(), 1.0, 1e-15);
}

TEST(PlanarContacts, CoincidentDiskCentresGiveNaNJacobian) {
  const auto model = Bodies(2);
  PlanarContact c = Make("pair", PlanarContactType::kDiskDisk, 0, 1);
  c.radius_a = 0.1;
  c.radius_b = 0.2;
  const PlanarContacts block(model, {c});
  Eigen::VectorXd q = Eigen::VectorXd::Zero(6);
  EXPECT_NEAR(Gaps(block, q)(0), -0.3, 1e-15);  // the gap itself is defined
  EXPECT_TRUE(Jacobian(block, q).array().isNaN().any());
  EXPECT_TRUE(std::isnan(Gamma(block, q, Eigen::VectorXd::Ones(6))(0)));
}

void ExpectRejected(std::vector<PlanarContact> contacts, int n_bodies, const std::string& part) {
  try {
    PlanarContacts block(Bodies(n_bodies), std::move(contacts));
    ADD_FAILURE() << "accepted; expected an error mentioning '" << part << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(PlanarContacts, ValidationNamesTheContact) {
  PlanarContact ok = Make("good", PlanarContactType::kDiskLine, kGround, 0);
  ok.radius_b = 0.1;
  EXPECT_NO_THROW(PlanarContacts(Bodies(1), {ok}));

  PlanarContact c = ok;
  c.name = "wheel";
  c.radius_b = 0.0;
  ExpectRejected({c}, 1, "'wheel'");
  c = ok;
  c.name = "bad_body";
  c.body_b = 3;
  ExpectRejected({c}, 1, "'bad_body'");
  c = ok;
  c.name = "both_ground";
  c.body_b = kGround;
  ExpectRejected({c}, 1, "both the ground");
  c = ok;
  c.name = "self";
  c.body_a = 0;
  ExpectRejected({c}, 1, "same body");
  c = ok;
  c.name = "flat";
  c.normal_a = Eigen::Vector2d::Zero();
  ExpectRejected({c}, 1, "'flat'");
  c = ok;
  c.name = "bouncy";
  c.restitution = 1.5;
  ExpectRejected({c}, 1, "'bouncy'");
  c = ok;
  c.name = "nan";
  c.point_a.x() = std::nan("");
  ExpectRejected({c}, 1, "'nan'");
  c = ok;
  c.name = "negative";
  c.type = PlanarContactType::kPointLine;
  c.radius_a = -1.0;
  ExpectRejected({c}, 1, "'negative'");
  c = ok;
  c.name = "disks";
  c.type = PlanarContactType::kDiskDisk;
  c.radius_a = 0.0;
  ExpectRejected({c}, 1, "'disks'");
  ExpectRejected({ok, ok}, 1, "duplicate");
  c = ok;
  c.name = "";
  ExpectRejected({c}, 1, "name");
  EXPECT_THROW(PlanarContacts(nullptr, {ok}), std::invalid_argument);
  // Wrong q size at evaluation.
  const PlanarContacts block(Bodies(1), {ok});
  Eigen::VectorXd g(1);
  const std::vector<int> rows = {0};
  EXPECT_THROW(block.Values(0.0, Eigen::VectorXd::Zero(4), rows, g), std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
