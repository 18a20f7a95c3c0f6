// Tangential rows of spatial contacts (spatial_contacts.h, "Tangential rows"): the frame, G_T
// against the displacement of the two material points at the witness points, γ_T against
// Richardson-extrapolated differences of G_T v, the block-sparse and one-pass paths, and that
// friction leaves the normal rows untouched. Every pair type of the manifold is covered: plane
// against box, sphere, capsule, cylinder, convex mesh and ellipsoid (also with the plane on a
// moving body and given as B), sphere–sphere, box–box, sphere–box, box–capsule, box–cylinder and
// box–ellipsoid (rim and support rows), capsule–capsule, the FCL path, and a triangle mesh
// against sphere, box, convex mesh, capsule, ellipsoid and cylinder.

#include <gtest/gtest.h>

#include <algorithm>
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
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "spatial_row_checks.h"

namespace saltus::contact {
namespace {

using Eigen::AngleAxisd;
using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;
using testing::Cube;
using testing::Pose;
using testing::Pyramid;
using testing::Rx;
using testing::Rz;

const Isometry3d kOff = Pose(Vector3d(0.05, -0.02, 0.03), Rz(0.4) * Rx(-0.3));
const Isometry3d kMeshPose = Pose(Vector3d(0.01, 0.02, -0.03), Rz(0.3) * Rx(0.2));
const Vector3d kBoxA(0.2, 0.1, 0.15);

// Every pair type, between body 0 (or the ground) and body 1, with friction `mu`.
std::vector<SpatialContactPair> AllPairTypes(double mu) {
  const Shape floor =
      Shape::Plane(Vector3d(0.1, -0.2, 1.0), -0.05, Isometry3d::Identity(), "floor");
  const Shape mesh = Shape::TriangleMeshSurface(Pyramid(), kMeshPose, "pyramid");
  const Shape box_a = Shape::Box(kBoxA);
  const Shape box_b = Shape::Box(Vector3d(0.1, 0.2, 0.1), kOff);
  const Shape egg = Shape::Ellipsoid(Vector3d(0.06, 0.04, 0.03), kOff);
  using engine::kGround;
  std::vector<SpatialContactPair> pairs = {
      {"floor_box", kGround, floor, 1, box_b, -1.0},
      {"floor_ball", kGround, floor, 1, Shape::Sphere(0.1, kOff), -1.0},
      {"floor_capsule", kGround, floor, 1, Shape::Capsule(0.05, 0.3, kOff), -1.0},
      {"floor_cylinder", kGround, floor, 1, Shape::Cylinder(0.07, 0.25, kOff), -1.0},
      {"floor_cube", kGround, floor, 1, Shape::ConvexMesh(Cube(0.05), kOff), -1.0},
      {"floor_egg", kGround, floor, 1, egg, -1.0},
      {"moving_plane", 0, Shape::Plane(Vector3d(0.3, 1.0, -0.2), 0.02, kOff), 1,
       Shape::Box(Vector3d(0.1, 0.05, 0.08)), -1.0},
      {"ball_on_plane_b", 1, Shape::Sphere(0.12, kOff), 0, Shape::Plane(Vector3d(1, 0, 0.2), 0.1),
       -1.0},
      {"cylinder_plane_b", 1, Shape::Cylinder(0.06, 0.2, kOff), 0,
       Shape::Plane(Vector3d(0.3, 1.0, -0.2), 0.02, kOff), -1.0},
      {"balls", 0, Shape::Sphere(0.15, kOff), 1, Shape::Sphere(0.1), -1.0},
      {"boxes", 0, box_a, 1, box_b, -1.0},
      {"box_ball", 0, box_a, 1, Shape::Sphere(0.1, kOff), -1.0},
      {"box_capsule", 0, box_a, 1, Shape::Capsule(0.03, 0.1, kOff), -1.0},
      {"capsule_box", 1, Shape::Capsule(0.03, 0.1, kOff), 0, box_a, -1.0},
      {"box_cylinder", 0, box_a, 1, Shape::Cylinder(0.04, 0.12), -1.0},
      {"box_egg", 0, box_a, 1, egg, -1.0},
      {"capsules", 0, Shape::Capsule(0.04, 0.2, kOff), 1, Shape::Capsule(0.03, 0.15), -1.0},
      {"ball_cylinder", 0, Shape::Sphere(0.1, kOff), 1, Shape::Cylinder(0.06, 0.2), -1.0},
      {"mesh_ball", 0, mesh, 1, Shape::Sphere(0.05, Pose(Vector3d(0.03, -0.02, 0.01))), -1.0},
      {"ball_ground_mesh", 1, Shape::Sphere(0.04, kOff), kGround, mesh, -1.0},
      {"mesh_box", 0, mesh, 1, Shape::Box(Vector3d(0.06, 0.05, 0.04), kOff), -1.0},
      {"cube_ground_mesh", 1, Shape::ConvexMesh(Cube(0.05), kOff), kGround, mesh, -1.0},
      {"mesh_capsule", 0, mesh, 1, Shape::Capsule(0.03, 0.1, kOff), -1.0},
      {"mesh_egg", 0, mesh, 1, egg, -1.0},
      {"cylinder_mesh", 1, Shape::Cylinder(0.04, 0.12), 0, mesh, -1.0},
  };
  for (SpatialContactPair& p : pairs) p.friction = mu;
  return pairs;
}

struct Fixture {
  std::shared_ptr<const engine::SpatialModel> model;
  std::shared_ptr<engine::SpatialMultibodySystem> system;
  std::shared_ptr<const SpatialContacts> contacts;
};

Fixture MakeFixture(double mu) {
  Fixture f;
  f.model = testing::TwoFreeBodies(Vector3d(0.02, -0.01, 0.03));
  f.system = std::make_shared<engine::SpatialMultibodySystem>(f.model);
  f.contacts = std::make_shared<SpatialContacts>(f.model, AllPairTypes(mu));
  f.system->AddConstraintBlock(f.contacts);
  return f;
}

std::vector<int> Range(int begin, int end) {
  std::vector<int> rows;
  for (int i = begin; i < end; ++i) rows.push_back(i);
  return rows;
}

// Where the material point of `body` at the world point x at q is at q_new.
Vector3d MaterialPoint(int body, const Vector3d& x, const VectorXd& q, const VectorXd& q_new) {
  if (body == engine::kGround) return x;
  const Matrix3d R = engine::QuaternionToRotation(q.segment<4>(7 * body + 3));
  const Matrix3d R_new = engine::QuaternionToRotation(q_new.segment<4>(7 * body + 3));
  return q_new.segment<3>(7 * body) + R_new * R.transpose() * (x - q.segment<3>(7 * body));
}

// The pair name of a row ("floor_box.3.t1" → "floor_box").
std::string PairName(const SpatialContacts& c, int row) {
  return c.pairs()[static_cast<std::size_t>(c.RowPair(row))].name;
}

TEST(SpatialTangents, RowsFollowAllNormalRowsWithNamesAndLinks) {
  const Fixture rough = MakeFixture(0.5);
  const Fixture plain = MakeFixture(0.0);
  const SpatialContacts& c = *rough.contacts;
  const int n = c.num_normal_rows();
  ASSERT_EQ(plain.contacts->num_rows(), n);  // frictionless: the normal rows only
  ASSERT_EQ(c.num_rows(), 3 * n);            // every normal row has μ > 0: two more each
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(c.row_info(r).kind, engine::ConstraintKind::kUnilateral);
    EXPECT_EQ(c.row_info(r).friction, 0.5);  // stored as given, exactly
    EXPECT_EQ(plain.contacts->row_info(r).friction, 0.0);
    EXPECT_EQ(plain.contacts->row_info(r).name, c.row_info(r).name);
    for (int k = 0; k < 2; ++k) {
      const int t = n + 2 * r + k;
      EXPECT_EQ(c.row_info(t).kind, engine::ConstraintKind::kTangential);
      EXPECT_EQ(c.row_info(t).level, engine::ConstraintLevel::kVelocity);
      EXPECT_EQ(c.row_info(t).name, c.row_info(r).name + (k == 0 ? ".t1" : ".t2"));
      EXPECT_EQ(c.row_info(t).normal_row, r);
      EXPECT_EQ(c.NormalRowOf(t), r);
      EXPECT_EQ(c.RowPair(t), c.RowPair(r));
    }
  }
  // The system links both ways (AddConstraintBlock validated the metadata).
  EXPECT_EQ(
      std::vector<int>(rough.system->TangentRows(3).begin(), rough.system->TangentRows(3).end()),
      (std::vector<int>{n + 6, n + 7}));
  EXPECT_EQ(rough.system->NormalRow(n + 7), 3);
  // Mixed: friction on one pair only gives rows for that pair's normal rows only.
  std::vector<SpatialContactPair> pairs = AllPairTypes(0.0);
  pairs[1].friction = 0.3;  // floor_ball: one normal row (row 8, after the 8 box corners)
  const SpatialContacts mixed(testing::TwoFreeBodies(), pairs);
  ASSERT_EQ(mixed.num_rows(), n + 2);
  EXPECT_EQ(mixed.row_info(n).name, "floor_ball.t1");
  EXPECT_EQ(mixed.row_info(n + 1).normal_row, 8);
}

TEST(SpatialTangents, FrictionLeavesNormalRowsAndCandidatesUnchanged) {
  // The normal rows of the rough block give the plain block's g, G, γ, ġ bit for bit (exact
  // determinism check), and the broadphase lists the same (normal) rows.
  const Fixture rough = MakeFixture(0.5);
  const Fixture plain = MakeFixture(0.0);
  const int n = plain.contacts->num_rows();
  const std::vector<int> rows = Range(0, n);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v;
    testing::RandomTwoBodyState(rng, &q, &v);
    VectorXd g_p, g_r, gamma_p, gamma_r, gv_p, gv_r, gd_p, gd_r;
    Eigen::MatrixXd G_p, G_r;
    plain.system->ConstraintValues(0, q, rows, &g_p);
    rough.system->ConstraintValues(0, q, rows, &g_r);
    plain.system->ConstraintJacobian(0, q, rows, &G_p);
    rough.system->ConstraintJacobian(0, q, rows, &G_r);
    plain.system->ConstraintGamma(0, q, v, rows, &gamma_p);
    rough.system->ConstraintGamma(0, q, v, rows, &gamma_r);
    plain.system->ConstraintValuesAndRates(0, q, v, rows, &gv_p, &gd_p);
    rough.system->ConstraintValuesAndRates(0, q, v, rows, &gv_r, &gd_r);
    EXPECT_EQ(g_p, g_r);
    EXPECT_EQ(G_p, G_r);
    EXPECT_EQ(gamma_p, gamma_r);
    EXPECT_EQ(gd_p, gd_r);
    std::vector<int> cand_p, cand_r;
    const VectorXd speed = VectorXd::Constant(12, 1.0);
    plain.system->CandidateRows(q, speed, 0.1, 0.01, &cand_p);
    rough.system->CandidateRows(q, speed, 0.1, 0.01, &cand_r);
    EXPECT_EQ(cand_p, cand_r);
    for (int r : cand_r) EXPECT_LT(r, n);
  }
}

TEST(SpatialTangents, FrameIsOrthonormalRightHandedAndFixedOnPlanes) {
  const Fixture f = MakeFixture(0.5);
  const SpatialContacts& c = *f.contacts;
  std::mt19937 rng(9);
  for (int trial = 0; trial < 20; ++trial) {
    VectorXd q, v;
    testing::RandomTwoBodyState(rng, &q, &v);
    for (int r = 0; r < c.num_normal_rows(); ++r) {
      const Vector3d n = c.Evaluate(q, r).normal;
      const auto [t1, t2] = c.Tangents(q, r);
      // Products of unit vectors: round-off a few ulps (1e-15); |1 + a·n| ≥ 1/7 keeps the
      // frame's own round-off at that level.
      EXPECT_NEAR(t1.norm(), 1.0, 1e-14) << c.row_info(r).name;
      EXPECT_NEAR(t1.dot(n), 0.0, 1e-14) << c.row_info(r).name;
      EXPECT_LT((t2 - n.cross(t1)).norm(), 1e-14) << c.row_info(r).name;
    }
  }
  // On the ground plane the frame is fixed: the same t1 for every pose of the box.
  VectorXd q, v;
  testing::RandomTwoBodyState(rng, &q, &v);
  const Vector3d t1 = c.Tangents(q, 0).first;
  testing::RandomTwoBodyState(rng, &q, &v);
  EXPECT_LT((c.Tangents(q, 3).first - t1).norm(), 1e-15);
}

TEST(SpatialTangents, JacobianIsTheSlipOfTheMaterialPointsAtTheWitnessPoints) {
  // G_T v against t_k·[(X_B(q ⊕ εv) − X_B(q ⊕ −εv)) − (X_A(…) − X_A(…))]/(2ε), X the material
  // points at the witness points of q: truncation ε² |d³X/ds³|/6 ≲ 1e-10 · (|v|√6)³ · 0.6 / 6 ≈
  // 4e-10 at ε = 1e-5 (|x − r| ≲ 0.6 m), round-off ε_mach · 0.6 / ε ≈ 1e-11. Tolerance 5e-9
  // (FCL rows included: their witness points are exact inputs here).
  const Fixture f = MakeFixture(0.5);
  const SpatialContacts& c = *f.contacts;
  const int n = c.num_normal_rows();
  const std::vector<int> rows = Range(n, c.num_rows());
  const double eps = 1e-5;
  std::mt19937 rng(13);
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    VectorXd q, v, qp, qm;
    testing::RandomTwoBodyState(rng, &q, &v);
    f.system->IntegratePosition(q, v, eps, &qp);
    f.system->IntegratePosition(q, v, -eps, &qm);
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0, q, rows, &G);
    const VectorXd rate = G * v;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const int row = rows[i];
      const SpatialContactPair& pair = c.pairs()[static_cast<std::size_t>(c.RowPair(row))];
      const PairDistance d = c.Evaluate(q, row);
      const auto [t1, t2] = c.Tangents(q, row);
      const Vector3d& t = (row - n) % 2 == 0 ? t1 : t2;
      const Vector3d slip = (MaterialPoint(pair.body_b, d.point_b, q, qp) -
                             MaterialPoint(pair.body_b, d.point_b, q, qm)) -
                            (MaterialPoint(pair.body_a, d.point_a, q, qp) -
                             MaterialPoint(pair.body_a, d.point_a, q, qm));
      const double fd = t.dot(slip) / (2 * eps);
      worst = std::max(worst, std::abs(fd - rate[static_cast<Eigen::Index>(i)]));
      EXPECT_NEAR(rate[static_cast<Eigen::Index>(i)], fd, 5e-9)
          << c.row_info(row).name << " trial " << trial;
    }
  }
  std::printf("G_T v vs material slip: worst error %.2e\n", worst);
}

TEST(SpatialTangents, BlockSparseRowsAndOnePassRatesMatchTheDenseJacobian) {
  const Fixture f = MakeFixture(0.5);
  const int m = f.contacts->num_rows();
  const std::vector<int> rows = Range(0, m);
  std::mt19937 rng(21);
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v;
    testing::RandomTwoBodyState(rng, &q, &v);
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0, q, rows, &G);
    engine::BlockSparseRows sparse;
    ASSERT_TRUE(f.system->BlockSparseMatrices(0, q, rows, nullptr, &sparse));
    // Same products in the same order as the dense row: equal up to round-off of O(1) entries.
    EXPECT_LE((sparse.ToDense() - G).cwiseAbs().maxCoeff(), 1e-14) << "trial " << trial;
    VectorXd g, g_dot;
    f.system->ConstraintValuesAndRates(0, q, v, rows, &g, &g_dot);
    VectorXd g_values;
    f.system->ConstraintValues(0, q, rows, &g_values);
    EXPECT_EQ(g, g_values);  // exact: the same gaps, 0 on tangential rows
    EXPECT_TRUE(g.tail(m - f.contacts->num_normal_rows()).isZero(0.0));
    // ġ as engine::ConstraintRate computes it from the block rows (documented bit for bit).
    VectorXd rate;
    engine::ConstraintRate(*f.system, 0, q, v, rows, &rate);
    EXPECT_EQ(g_dot, rate) << "trial " << trial;
  }
}

// Whether the normal of row r is fixed in the surface body at q (a face region; false beside an
// edge or a vertex of a box or the pyramid), for the visit counts below: a face normal has a
// coordinate ±1 in the box frame, or is one of the pyramid's face normals.
bool BesideEdgeOrVertex(const SpatialContacts& c, const VectorXd& q, int r) {
  const SpatialContactPair& pair = c.pairs()[static_cast<std::size_t>(c.RowPair(r))];
  const Vector3d n = c.Evaluate(q, r).normal;
  bool surface = false;
  for (int side = 0; side < 2; ++side) {
    const Shape& s = side == 0 ? pair.shape_a : pair.shape_b;
    const int body = side == 0 ? pair.body_a : pair.body_b;
    const Matrix3d R_body = body == engine::kGround
                                ? Matrix3d(Matrix3d::Identity())
                                : engine::QuaternionToRotation(q.segment<4>(7 * body + 3));
    const Vector3d local = (R_body * s.pose().linear()).transpose() * n;
    if (s.type() == ShapeType::kBox) {
      surface = true;
      if (local.cwiseAbs().maxCoeff() > 1.0 - 1e-9) return false;
    } else if (s.type() == ShapeType::kTriangleMesh) {
      surface = true;
      const TriangleMesh& m = s.mesh();
      for (const auto& t : m.triangles) {
        const Vector3d f = (m.vertices[static_cast<std::size_t>(t[1])] -
                            m.vertices[static_cast<std::size_t>(t[0])])
                               .cross(m.vertices[static_cast<std::size_t>(t[2])] -
                                      m.vertices[static_cast<std::size_t>(t[0])])
                               .normalized();
        if (std::abs(f.dot(local)) > 1.0 - 1e-9) return false;
      }
    }
  }
  return surface;
}

TEST(SpatialTangents, GammaMatchesRichardsonDifferencesOfGv) {
  // γ_T = d/dε [G_T(q ⊕ ε v) v] at ε = 0 against testing::GammaReference (ε = 4e-5; its
  // tolerance: Richardson extrapolation, truncation estimate and round-off, spatial_row_checks.h).
  // The reference's truncation error grows like (|v| · curvature)⁵ and is not negligible for the
  // fast states drawn here beside 3 cm features (up to ~1e-6 relative).
  // Where the witness features of the normal row switch within ±ε (a corner crossing from a face
  // region to an edge region, a mesh point to another triangle, the side of an open mesh) G has
  // a kink or a jump and the difference is no derivative: a tangential row is checked only when
  // its normal row's γ (tested in its regions by contact_manifold_test and
  // spatial_contacts_test) passes the same check. Kinks the normal row does not show make the
  // estimate large, and such checks pass more easily: the test also counts the "sharp" checks
  // (estimate ≤ 1e-9 (1 + |γ_T|)) and requires enough of them for every pair type and beside
  // edges and vertices.
  // FCL rows (normals to ~3e-7, i.e. 3e-7 |v| / ε of noise) are left out, as in the normal-row
  // tests.
  const Fixture f = MakeFixture(0.5);
  const SpatialContacts& c = *f.contacts;
  const int n = c.num_normal_rows();
  const std::vector<int> rows = Range(0, c.num_rows());
  std::mt19937 rng(29);
  std::map<std::string, int> sharp;
  int beside_edges = 0, closed_form = 0;
  double worst = 0, worst_difference = 0;
  for (int trial = 0; trial < 200; ++trial) {
    VectorXd q, v;
    testing::RandomTwoBodyState(rng, &q, &v);
    const testing::GammaReference ref(*f.system, q, v, rows, 4e-5);
    const auto tolerance = [&](Eigen::Index k) {
      return ref.Tolerance(k, !c.HasAnalyticGamma(c.NormalRowOf(static_cast<int>(k))));
    };
    for (int row = n; row < c.num_rows(); ++row) {
      const auto k = static_cast<Eigen::Index>(row);
      const int r = c.NormalRowOf(row);
      if (!c.Evaluate(q, r).analytic) continue;
      if (ref.Error(r) > tolerance(r)) continue;  // the normal row's features switch
      const double est = ref.Estimate(k);
      const double scale = 1 + std::abs(ref.gamma[k]);
      const double err = ref.Error(k);
      EXPECT_LE(err, tolerance(k))
          << c.row_info(row).name << " trial " << trial << ": analytic " << ref.gamma[k]
          << ", difference " << ref.r2[k] << ", estimate " << est;
      if (est > 1e-9 * scale) continue;
      (c.HasAnalyticGamma(r) ? worst : worst_difference) =
          std::max(c.HasAnalyticGamma(r) ? worst : worst_difference, err / scale);
      ++sharp[PairName(c, row)];
      if (c.HasAnalyticGamma(r)) ++closed_form;
      if (c.HasAnalyticGamma(r) && BesideEdgeOrVertex(c, q, r)) ++beside_edges;
    }
  }
  for (const SpatialContactPair& p : c.pairs()) {
    if (p.name == "ball_cylinder") continue;  // the FCL path (see above)
    EXPECT_GE(sharp[p.name], 20) << p.name;
  }
  EXPECT_GE(beside_edges, 100);  // closed-form rows of corners and mesh points off the faces
  std::printf(
      "gamma_T vs Richardson difference, sharp checks: worst relative %.2e closed-form (%d "
      "checks, %d beside edges or vertices), %.2e central-difference rows\n",
      worst, closed_form, beside_edges, worst_difference);
}

TEST(SpatialTangents, RollingSphereHasNoSlipAndZeroGammaOnTheFloor) {
  // A ball of radius r = 0.1 centred on its body on the horizontal ground, rolling: ṙ = ω × r n
  // (n = e_z), so the contact point's material velocity is 0: G_T v = 0 on both rows. With v̇ = 0
  // the frame is fixed (ṫ = 0) and the contact point x_b = r_b − r n moves with the centre
  // (ẋ_b − ṙ = 0), so γ_T = 0 (header).
  engine::SpatialModelBuilder builder;
  engine::SpatialBody ball;
  ball.name = "ball";
  ball.position = Vector3d(0.3, -0.2, 0.1);
  builder.AddBody(ball);
  const auto model = builder.Build();
  SpatialContactPair pair{"roll", engine::kGround,    Shape::Plane(Vector3d::UnitZ(), 0.0),
                          0,      Shape::Sphere(0.1), -1.0};
  pair.friction = 0.4;
  const SpatialContacts c(model, {pair});
  ASSERT_EQ(c.num_rows(), 3);
  VectorXd q = model->InitialPositions();
  q.segment<4>(3) = Eigen::Vector4d(0.9, 0.1, -0.3, 0.2).normalized();
  const Matrix3d R = engine::QuaternionToRotation(q.segment<4>(3));
  const Vector3d omega_world(1.5, -2.0, 0.7);
  VectorXd v(6);
  v.head<3>() = omega_world.cross(Vector3d(0, 0, 0.1));
  v.tail<3>() = R.transpose() * omega_world;  // body-frame ω
  const std::vector<int> rows = {1, 2};
  Eigen::MatrixXd G(2, 6);
  c.Jacobian(0, q, rows, G);
  VectorXd gamma(2);
  c.Gamma(0, q, v, rows, gamma);
  // Round-off of products of O(1) numbers: 1e-15.
  EXPECT_LT((G * v).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_LT(gamma.cwiseAbs().maxCoeff(), 1e-15);
  // Sliding at 1 m/s along +x without spin: the slip is (1, 0, 0) in the frame (t1, t2).
  v.setZero();
  v[0] = 1.0;
  const auto [t1, t2] = c.Tangents(q, 0);
  const VectorXd slip = G * v;
  EXPECT_NEAR(slip[0], t1.x(), 1e-15);
  EXPECT_NEAR(slip[1], t2.x(), 1e-15);
}

TEST(SpatialTangents, NegativeOrNonFiniteFrictionIsRejectedNamingThePair) {
  const auto model = testing::TwoFreeBodies();
  for (const double mu : {-0.1, std::nan(""), std::numeric_limits<double>::infinity()}) {
    SpatialContactPair pair{"rough", engine::kGround,    Shape::Plane(Vector3d::UnitZ(), 0.0),
                            0,       Shape::Sphere(0.1), -1.0};
    pair.friction = mu;
    try {
      const SpatialContacts c(model, {pair});
      ADD_FAILURE() << "accepted friction " << mu;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("contact pair 'rough': friction must be"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(SpatialContacts::CheckPair(*model, pair), std::invalid_argument);
  }
}

}  // namespace
}  // namespace saltus::contact
