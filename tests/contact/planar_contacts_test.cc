// Planar contact rows: gaps against hand-computed geometry, G against central finite differences
// of the gap, γ against finite differences of G v along q ± ε v, and validation messages.

#include "contact/planar_contacts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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
// included, for the finite-difference checks; with friction > 0, every contact but each third
// one gets that μ (and so a tangential row), mixing frictional and frictionless contacts.
PlanarContacts RandomContacts(std::mt19937& rng, double friction = 0.0) {
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
      const int index = k++;
      PlanarContact c = Make("c" + std::to_string(index), type, a, b);
      c.point_a = vec();
      c.point_b = vec();
      c.normal_a = vec();
      c.radius_a = type == PlanarContactType::kDiskDisk ? pos(rng) : 0.0;
      c.radius_b = type == PlanarContactType::kPointLine ? 0.0 : pos(rng);
      c.friction = index % 3 == 0 ? 0.0 : friction;
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

// ---- Tangential rows ------------------------------------------------------------------------

Eigen::Matrix2d Rot(double theta) { return Eigen::Rotation2Dd(theta).toRotationMatrix(); }

// Reference geometry of a contact at q, written out from the header's definitions: the unit
// normal n, tangent t = n turned by +π/2, and the witness points x_a, x_b of the two surfaces.
struct Reference {
  Eigen::Vector2d n, t, x_a, x_b;
};
Reference ReferenceGeometry(const PlanarContact& c, const Eigen::VectorXd& q) {
  const auto pose = [&](int body, const Eigen::Vector2d& s) -> Eigen::Vector2d {
    if (body == kGround) return s;
    return q.segment<2>(3 * body) + Rot(q(3 * body + 2)) * s;
  };
  const auto angle = [&](int body) { return body == kGround ? 0.0 : q(3 * body + 2); };
  Reference r;
  const Eigen::Vector2d p_a = pose(c.body_a, c.point_a), p_b = pose(c.body_b, c.point_b);
  if (c.type == PlanarContactType::kDiskDisk) {
    r.n = (p_b - p_a).normalized();
    r.x_a = p_a + c.radius_a * r.n;
  } else {
    r.n = Rot(angle(c.body_a)) * c.normal_a.normalized();
  }
  r.x_b = p_b - c.radius_b * r.n;
  if (c.type != PlanarContactType::kDiskDisk) r.x_a = r.x_b - r.n.dot(r.x_b - p_a) * r.n;
  r.t = Eigen::Vector2d(-r.n.y(), r.n.x());
  return r;
}

// Where the material point of `body` that is at x when the bodies are at q is when they are at
// q_new (the ground does not move).
Eigen::Vector2d MaterialPoint(int body, const Eigen::Vector2d& x, const Eigen::VectorXd& q,
                              const Eigen::VectorXd& q_new) {
  if (body == kGround) return x;
  const Eigen::Vector2d s = Rot(q(3 * body + 2)).transpose() * (x - q.segment<2>(3 * body));
  return q_new.segment<2>(3 * body) + Rot(q_new(3 * body + 2)) * s;
}

TEST(PlanarContacts, TangentialRowsFollowAllNormalRows) {
  std::mt19937 rng(3);
  const PlanarContacts block = RandomContacts(rng, 0.4);
  const int n = static_cast<int>(block.contacts().size());
  ASSERT_EQ(block.num_rows(), n + 12);  // 18 contacts, every third frictionless
  int k = n;
  for (int i = 0; i < n; ++i) {
    const engine::ConstraintRowInfo& normal = block.row_info(i);
    EXPECT_EQ(normal.kind, engine::ConstraintKind::kUnilateral);
    EXPECT_EQ(normal.name, block.contacts()[static_cast<std::size_t>(i)].name);
    EXPECT_EQ(normal.friction, i % 3 == 0 ? 0.0 : 0.4);  // stored as given, exactly
    if (i % 3 == 0) continue;
    const engine::ConstraintRowInfo& tangent = block.row_info(k);
    EXPECT_EQ(tangent.kind, engine::ConstraintKind::kTangential);
    EXPECT_EQ(tangent.level, engine::ConstraintLevel::kVelocity);
    EXPECT_EQ(tangent.name, normal.name + ".t");
    EXPECT_EQ(tangent.normal_row, i);
    EXPECT_EQ(block.RowContact(k), i);
    ++k;
  }
  // The system accepts the metadata and links the rows both ways.
  engine::PlanarMultibodySystem system(Bodies(3));
  const int first = system.AddConstraintBlock(std::make_shared<PlanarContacts>(block));
  EXPECT_EQ(system.TangentRows(first + 1).size(), 1u);
  EXPECT_EQ(system.NormalRow(system.TangentRows(first + 1)[0]), first + 1);
  EXPECT_TRUE(system.TangentRows(first).empty());
  // Values of the velocity-level rows are 0 by convention.
  const Eigen::VectorXd g = Gaps(block, RandomState(rng, 2.0));
  EXPECT_TRUE(g.tail(12).isZero(0.0));
}

TEST(PlanarContacts, FrictionlessRowsAreUnchangedByFriction) {
  // The same random contacts with and without friction: the normal rows keep their count,
  // names, gaps, G and γ bit for bit (friction only appends rows).
  std::mt19937 rng_a(11), rng_b(11);
  const PlanarContacts plain = RandomContacts(rng_a);
  const PlanarContacts rough = RandomContacts(rng_b, 0.7);
  const int n = plain.num_rows();
  ASSERT_EQ(n, static_cast<int>(plain.contacts().size()));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(plain.row_info(i).name, rough.row_info(i).name);
    EXPECT_EQ(plain.row_info(i).kind, engine::ConstraintKind::kUnilateral);
    EXPECT_EQ(plain.row_info(i).friction, 0.0);
  }
  std::mt19937 rng(5);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = RandomState(rng, 2.0), v = RandomState(rng, 2.0);
    std::vector<int> rows(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
    Eigen::VectorXd g_rough(n), gamma_rough(n);
    Eigen::MatrixXd G_rough(n, 9);
    rough.Values(0.0, q, rows, g_rough);
    rough.Jacobian(0.0, q, rows, G_rough);
    rough.Gamma(0.0, q, v, rows, gamma_rough);
    EXPECT_EQ(Gaps(plain, q), g_rough);  // exact determinism check
    EXPECT_EQ(Jacobian(plain, q), G_rough);
    EXPECT_EQ(Gamma(plain, q, v), gamma_rough);
  }
}

TEST(PlanarContacts, RowsDoNotDependOnWhatWasAskedBefore) {
  // The geometry of a contact is computed once per q and thread and reused by later calls
  // (planar_contacts.cc, GeometryMemo). Rows asked one at a time, tangential before normal,
  // interleaved with another object of other contacts at the same q and with other q, are the
  // rows of one call on all rows: bit for bit (exact determinism check).
  std::mt19937 rng_a(21), rng_b(22);
  const PlanarContacts first = RandomContacts(rng_a, 0.5);
  const PlanarContacts other = RandomContacts(rng_b, 0.3);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = RandomState(rng, 2.0), v = RandomState(rng, 2.0);
    const Eigen::VectorXd q_other = RandomState(rng, 2.0);
    const Eigen::MatrixXd G_all = Jacobian(first, q);
    const Eigen::VectorXd gamma_all = Gamma(first, q, v), g_all = Gaps(first, q);
    for (int i = first.num_rows() - 1; i >= 0; --i) {
      Jacobian(other, i % 2 == 0 ? q : q_other);  // the memo now holds the other object's rows
      const int row[] = {i};
      Eigen::MatrixXd G_i(1, q.size());
      Eigen::VectorXd gamma_i(1), g_i(1);
      first.Jacobian(0.0, q, row, G_i);
      first.Gamma(0.0, q, v, row, gamma_i);
      first.Values(0.0, q, row, g_i);
      EXPECT_EQ(G_i.row(0), G_all.row(i)) << "row " << i;
      EXPECT_EQ(gamma_i[0], gamma_all[i]) << "row " << i;
      EXPECT_EQ(g_i[0], g_all[i]) << "row " << i;
    }
  }
}

TEST(PlanarContacts, TangentialJacobianIsTheSlipOfTheMaterialPoints) {
  // G_T v against the central difference of the tangential displacement of the two material
  // points at the witness points, t·[(X_B(q + ε v) − X_B(q − ε v)) − (X_A(…) − X_A(…))]/(2ε):
  // the points move on circles of radius ≲ 3 (|x − r|) at |ω| ≤ 2, so the truncation is
  // ε² |d³X/ds³|/6 ≲ 1e-10 · 2³ · 3 / 6 ≈ 4e-10 at ε = 1e-5, round-off ε_mach · 3 / ε ≈ 1e-10.
  // Tolerance 5e-9.
  std::mt19937 rng(17);
  const double eps = 1e-5;
  for (int trial = 0; trial < 50; ++trial) {
    const PlanarContacts block = RandomContacts(rng, 0.5);
    const Eigen::VectorXd q = RandomState(rng, 2.0), v = RandomState(rng, 2.0);
    const Eigen::VectorXd rate = Jacobian(block, q) * v;
    const Eigen::VectorXd qp = q + eps * v, qm = q - eps * v;
    const int n = static_cast<int>(block.contacts().size());
    for (int row = n; row < block.num_rows(); ++row) {
      const PlanarContact& c = block.contacts()[static_cast<std::size_t>(block.RowContact(row))];
      const Reference r = ReferenceGeometry(c, q);
      const Eigen::Vector2d slip =
          (MaterialPoint(c.body_b, r.x_b, q, qp) - MaterialPoint(c.body_b, r.x_b, q, qm)) -
          (MaterialPoint(c.body_a, r.x_a, q, qp) - MaterialPoint(c.body_a, r.x_a, q, qm));
      EXPECT_NEAR(rate(row), r.t.dot(slip) / (2.0 * eps), 5e-9)
          << "trial " << trial << ", " << c.name;
    }
  }
}

TEST(PlanarContacts, ValuesAndRatesAreTheGapsAndGTimesV) {
  // The one-pass g and ġ of the event loop's samples against Values and G v on random contacts
  // with friction (normal and tangential rows, in a shuffled subset): the same geometry and the
  // same row coefficients, summed in another order, so equal to round-off of the terms summed,
  // |G| |v| ε ≲ 10 · 2 · 2.2e-16 (tolerance 1e-13).
  std::mt19937 rng(23);
  for (int trial = 0; trial < 50; ++trial) {
    const PlanarContacts block = RandomContacts(rng, 0.5);
    const Eigen::VectorXd q = RandomState(rng, 2.0), v = RandomState(rng, 2.0);
    std::vector<int> rows = AllRows(block);
    std::shuffle(rows.begin(), rows.end(), rng);
    rows.resize(rows.size() / 2);
    std::sort(rows.begin(), rows.end());
    const auto m = static_cast<Eigen::Index>(rows.size());
    Eigen::VectorXd g(m), g_dot(m), g_ref(m);
    Eigen::MatrixXd G(m, q.size());
    ASSERT_TRUE(block.ValuesAndRates(0.0, q, v, rows, g, g_dot));
    block.Values(0.0, q, rows, g_ref);
    block.Jacobian(0.0, q, rows, G);
    EXPECT_EQ(g, g_ref) << "trial " << trial;
    EXPECT_LE((g_dot - G * v).lpNorm<Eigen::Infinity>(), 1e-13) << "trial " << trial;
  }
}

// Contacts of every rigid type (point–line, disk–line, disk–disk) on the sides ground–body,
// body–body and body–ground of Bodies(3), with random points (zero half of the time), normals
// and radii.
std::vector<PlanarContact> RigidContactsOfEveryTypeAndSide(std::mt19937& rng) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0), pos(0.1, 0.5);
  const auto point = [&] {
    return uni(rng) < 0.0 ? Eigen::Vector2d::Zero() : Eigen::Vector2d(uni(rng), uni(rng));
  };
  std::vector<PlanarContact> cs;
  const std::vector<std::pair<int, int>> pairs = {{kGround, 0}, {0, 1}, {2, kGround}};
  for (const auto& [a, b] : pairs) {
    for (PlanarContactType type : {PlanarContactType::kPointLine, PlanarContactType::kDiskLine,
                                   PlanarContactType::kDiskDisk}) {
      PlanarContact c = Make("c" + std::to_string(cs.size()), type, a, b);
      c.point_a = point();
      c.point_b = point();
      c.normal_a = Eigen::Vector2d(uni(rng), uni(rng));
      c.radius_a = type == PlanarContactType::kDiskDisk ? pos(rng) : 0.0;
      c.radius_b = type == PlanarContactType::kPointLine ? 0.0 : pos(rng);
      cs.push_back(c);
    }
  }
  return cs;
}

TEST(PlanarContacts, GapsStraightFromQAreTheGeometryMemosGapsBitForBit) {
  // Values computes a rigid contact's gap from q alone, leaving out the ground's identity pose
  // and the rotation of a zero point (a disk's centre); ValuesAndRates takes it from the full
  // geometry (the memo) unless the contact needs no rotation at all (RotationFree: then from q
  // as well). The products left out only add exact zeros, so the two must agree to the last bit
  // (EXPECT_EQ), on every type and side, with points zero half of the time.
  std::mt19937 rng(5);
  const auto model = Bodies(3);
  for (int trial = 0; trial < 40; ++trial) {
    const PlanarContacts block(model, RigidContactsOfEveryTypeAndSide(rng));
    const Eigen::VectorXd q = RandomState(rng, 2.0), v = RandomState(rng, 1.0);
    const std::vector<int> rows = AllRows(block);
    const auto m = static_cast<Eigen::Index>(rows.size());
    Eigen::VectorXd g(m), g_memo(m), g_dot(m);
    block.Values(0.0, q, rows, g);
    ASSERT_TRUE(block.ValuesAndRates(0.0, q, v, rows, g_memo, g_dot));
    EXPECT_EQ(g, g_memo) << "trial " << trial;
  }
}

TEST(PlanarContacts, JacobianStraightFromQIsTheGeometryMemosRowsBitForBit) {
  // Jacobian computes a rigid contact's normal row from q alone (as Values its gap);
  // ValuesAndRates takes the row from the full geometry (the memo; for a RotationFree contact
  // from q as Jacobian does) and returns ġ = G v. At
  // v = e_j, ġ is column j of the memo's rows: dir·e + angular e adds only exact zeros to the
  // one coefficient picked. The two must agree to the last bit (EXPECT_EQ; ±0 compare equal),
  // on every type and side, with points zero half of the time.
  std::mt19937 rng(7);
  const auto model = Bodies(3);
  for (int trial = 0; trial < 40; ++trial) {
    const PlanarContacts block(model, RigidContactsOfEveryTypeAndSide(rng));
    const Eigen::VectorXd q = RandomState(rng, 2.0);
    const std::vector<int> rows = AllRows(block);
    const auto m = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd G(m, q.size());
    block.Jacobian(0.0, q, rows, G);
    for (Eigen::Index j = 0; j < q.size(); ++j) {
      const Eigen::VectorXd e = Eigen::VectorXd::Unit(q.size(), j);
      Eigen::VectorXd g(m), column(m);
      ASSERT_TRUE(block.ValuesAndRates(0.0, q, e, rows, g, column));
      EXPECT_EQ(Eigen::VectorXd(G.col(j)), column) << "trial " << trial << ", column " << j;
    }
  }
}

TEST(PlanarContacts, TangentialGammaMatchesRichardsonDifferencesOfGv) {
  // γ_T = d/ds [G_T(q + s v) v] at s = 0: central differences D(s) at s = 1e-4 and s/2,
  // Richardson-extrapolated (4 D(s/2) − D(s))/3: truncation O(s⁴ |d⁵(G v)/ds⁵|) ≈ 1e-16 ·
  // (|v| · curvature)⁵ with |v| ≤ 2 and disk-centre distances ≥ 0.05 (curvature ≤ 20: 1e-16 ·
  // 40⁵ ≈ 1e-8), round-off ε_mach |G v| / s ≈ 1e-11. Tolerance 1e-7, as 1e-7 · 4 for the normal
  // rows above (γ quadratic in v).
  std::mt19937 rng(23);
  for (int trial = 0; trial < 50; ++trial) {
    const PlanarContacts block = RandomContacts(rng, 0.5);
    const Eigen::VectorXd q = RandomState(rng, 2.0), v = RandomState(rng, 2.0);
    const auto difference = [&](double s) {
      return Eigen::VectorXd((Jacobian(block, q + s * v) - Jacobian(block, q - s * v)) * v /
                             (2.0 * s));
    };
    const Eigen::VectorXd fd = (4.0 * difference(0.5e-4) - difference(1e-4)) / 3.0;
    const Eigen::VectorXd gamma = Gamma(block, q, v);
    const Eigen::VectorXd g = Gaps(block, q);
    const int n = static_cast<int>(block.contacts().size());
    for (int row = n; row < block.num_rows(); ++row) {
      const int i = block.RowContact(row);
      const PlanarContact& c = block.contacts()[static_cast<std::size_t>(i)];
      if (c.type == PlanarContactType::kDiskDisk && g(i) + c.radius_a + c.radius_b < 0.05) continue;
      EXPECT_NEAR(gamma(row), fd(row), 1e-7) << "trial " << trial << ", " << c.name;
    }
  }
}

TEST(PlanarContacts, RollingDiskHasNoSlipAndTheClosedFormGamma) {
  // A disk of radius r = 0.3 on the ground line y = 0 rolling without slip, ẋ = −r ω: ġ_T = 0
  // (t = (−1, 0) for n = +y, so ġ_T = −(ẋ + r ω)). With v̇ = 0 the contact point moves along the
  // line but the material slip stays 0: γ_T = 0 (the centre moves straight, the disk turns at a
  // constant rate). Sliding at ẋ = 1 without spin: ġ_T = −1. Exact to round-off (1e-15).
  PlanarContact c = Make("roll", PlanarContactType::kDiskLine, kGround, 0);
  c.radius_b = 0.3;
  c.friction = 0.5;
  const PlanarContacts block(Bodies(1), {c});
  const Eigen::Vector3d q(0.4, 0.3, 1.1);
  const double omega = 2.0;
  const Eigen::Vector3d rolling(-0.3 * omega, 0.0, omega), sliding(1.0, 0.0, 0.0);
  EXPECT_NEAR((Jacobian(block, q) * rolling)(1), 0.0, 1e-15);
  EXPECT_NEAR((Jacobian(block, q) * sliding)(1), -1.0, 1e-15);
  EXPECT_NEAR(Gamma(block, q, rolling)(1), 0.0, 1e-15);
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
  for (const double mu : {-0.1, std::nan(""), std::numeric_limits<double>::infinity()}) {
    c = ok;
    c.name = "rough";
    c.friction = mu;
    ExpectRejected({c}, 1, "'rough' (#0): friction must be a finite number >= 0");
  }
  EXPECT_THROW(PlanarContacts(nullptr, {ok}), std::invalid_argument);
  // Wrong q size at evaluation.
  const PlanarContacts block(Bodies(1), {ok});
  Eigen::VectorXd g(1);
  const std::vector<int> rows = {0};
  EXPECT_THROW(block.Values(0.0, Eigen::VectorXd::Zero(4), rows, g), std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
