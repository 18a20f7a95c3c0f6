#include "contact/geometry3d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace saltus::contact {
namespace {

using Eigen::AngleAxisd;
using Eigen::Isometry3d;
using Eigen::Quaterniond;
using Eigen::Vector3d;

Isometry3d Pose(const Vector3d& p, const Quaterniond& q = Quaterniond::Identity()) {
  Isometry3d X = Isometry3d::Identity();
  X.linear() = q.normalized().toRotationMatrix();
  X.translation() = p;
  return X;
}

Quaterniond RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized();
}

Vector3d RandomDirection(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return Vector3d(n(rng), n(rng), n(rng)).normalized();
}

// Rigid displacement of a pose: translation dx and rotation dtheta (world axes) about the body
// origin.
Isometry3d Displaced(const Isometry3d& X, const Vector3d& dx, const Vector3d& dtheta) {
  Isometry3d Y = X;
  const double angle = dtheta.norm();
  if (angle > 0.0) Y.linear() = AngleAxisd(angle, dtheta / angle).toRotationMatrix() * X.linear();
  Y.translation() += dx;
  return Y;
}

void ExpectConsistent(const PairDistance& d, double tol) {
  EXPECT_NEAR(d.normal.norm(), 1.0, 1e-12);  // unit to round-off
  EXPECT_LT((d.point_b - d.point_a - d.gap * d.normal).norm(), tol);
}

// Central differences of the gap along the 12 rigid-displacement directions of both bodies,
// against n·δx + ((p_b − o_b) × n)·δθ for B and the opposite with p_a for A.
void ExpectNormalIsGradient(const Shape& a, const Isometry3d& X_a, const Shape& b,
                            const Isometry3d& X_b, double step, double tol) {
  const PairDistance d = SignedDistance(a, X_a, b, X_b);
  for (int side = 0; side < 2; ++side) {
    for (int k = 0; k < 6; ++k) {
      Vector3d dx = Vector3d::Zero(), dtheta = Vector3d::Zero();
      (k < 3 ? dx : dtheta)(k % 3) = step;
      const auto gap = [&](double s) {
        if (side == 0) return SignedDistance(a, Displaced(X_a, s * dx, s * dtheta), b, X_b).gap;
        return SignedDistance(a, X_a, b, Displaced(X_b, s * dx, s * dtheta)).gap;
      };
      const double fd = (gap(1.0) - gap(-1.0)) / (2.0 * step);
      const Vector3d& p = side == 0 ? d.point_a : d.point_b;
      const Vector3d& o = side == 0 ? X_a.translation() : X_b.translation();
      const double sign = side == 0 ? -1.0 : 1.0;
      const double predicted =
          sign * (d.normal.dot(dx) + (p - o).cross(d.normal).dot(dtheta)) / step;
      EXPECT_NEAR(fd, predicted, tol) << ToString(a.type()) << "-" << ToString(b.type()) << " side "
                                      << side << " direction " << k;
    }
  }
}

TEST(Geometry3d, SphereSphereClosedForm) {
  std::mt19937 rng(1);
  const Shape a = Shape::Sphere(0.3), b = Shape::Sphere(0.7);
  for (int i = 0; i < 20; ++i) {
    const Vector3d ca(0.1 * i, -0.2, 0.3), u = RandomDirection(rng);
    const double dist = 0.5 + 0.1 * i;  // from 0.5 (overlap 0.5) to 2.4 (gap 1.4)
    const PairDistance d = SignedDistance(a, Pose(ca, RandomRotation(rng)), b,
                                          Pose(ca + dist * u, RandomRotation(rng)));
    EXPECT_TRUE(d.analytic);
    EXPECT_NEAR(d.gap, dist - 1.0, 1e-14);  // closed form, round-off of O(1) quantities
    EXPECT_LT((d.normal - u).norm(), 1e-14);
    EXPECT_LT((d.point_a - (ca + 0.3 * u)).norm(), 1e-14);
    ExpectConsistent(d, 1e-14);
  }
}

TEST(Geometry3d, SpherePlaneClosedFormAndOrder) {
  // Plane n·x ≤ 0.5 in its frame, rotated and moved by its body pose.
  const Shape plane = Shape::Plane(Vector3d(0, 0, 2), 1.0);  // normal normalized: offset 0.5
  const Shape ball = Shape::Sphere(0.25);
  const Isometry3d X_p = Pose(Vector3d(1, 2, 3), Quaterniond(AngleAxisd(0.4, Vector3d::UnitX())));
  const Vector3d n = X_p.linear() * Vector3d::UnitZ();
  const Vector3d on_plane = X_p * Vector3d(0.3, -0.2, 0.5);
  for (double h : {-0.2, 0.0, 0.1, 2.0}) {
    const Vector3d c = on_plane + (h + 0.25) * n;
    const PairDistance d = SignedDistance(plane, X_p, ball, Pose(c));
    EXPECT_NEAR(d.gap, h, 1e-14);  // closed form
    EXPECT_LT((d.normal - n).norm(), 1e-15);
    ExpectConsistent(d, 1e-14);
    // Reversed order: same gap, opposite normal, swapped points.
    const PairDistance r = SignedDistance(ball, Pose(c), plane, X_p);
    EXPECT_NEAR(r.gap, h, 1e-14);
    EXPECT_LT((r.normal + n).norm(), 1e-15);
    EXPECT_LT((r.point_a - d.point_b).norm(), 1e-15);
  }
}

TEST(Geometry3d, SphereBoxFaceEdgeCornerInside) {
  const Shape box = Shape::Box(Vector3d(1.0, 0.5, 0.25));
  const Shape ball = Shape::Sphere(0.1);
  const Quaterniond R(AngleAxisd(0.7, Vector3d(1, 2, 3).normalized()));
  const Isometry3d X_box = Pose(Vector3d(-1, 0.5, 2), R);
  struct Case {
    Vector3d centre_local;
    double gap;
    Vector3d normal_local;
  };
  const double s = std::sqrt(0.5);
  const std::vector<Case> cases = {
      {{0.2, 0.1, 0.75}, 0.4, {0, 0, 1}},                                // face z
      {{1.3, 0.9, 0.0}, 0.5 - 0.1, {0.6, 0.8, 0}},                       // edge: (0.3, 0.4) off
      {{-1.2, -0.7, -0.45}, std::sqrt(0.12) - 0.1, {-0.2, -0.2, -0.2}},  // corner
      {{0.9, 0.0, 0.1}, -0.1 - 0.1, {1, 0, 0}},                          // inside, nearest face +x
      {{0.1, -0.45, 0.0}, -0.05 - 0.1, {0, -1, 0}},      // inside, nearest face −y
      {{1.0 + s, 0.0, 0.25 + s}, 1.0 - 0.1, {1, 0, 1}},  // edge, 45°
  };
  for (const Case& c : cases) {
    const Vector3d centre = X_box * c.centre_local;
    const Vector3d n = R * c.normal_local.normalized();
    const PairDistance d = SignedDistance(box, X_box, ball, Pose(centre));
    EXPECT_TRUE(d.analytic);
    EXPECT_NEAR(d.gap, c.gap, 1e-14);  // closed form
    EXPECT_LT((d.normal - n).norm(), 1e-14);
    ExpectConsistent(d, 1e-14);
    const PairDistance r = SignedDistance(ball, Pose(centre), box, X_box);
    EXPECT_NEAR(r.gap, c.gap, 1e-14);
    EXPECT_LT((r.normal + n).norm(), 1e-14);
  }
}

TEST(Geometry3d, BoxCylinderCapsuleEllipsoidOnPlane) {
  std::mt19937 rng(2);
  const Shape ground = Shape::Plane(Vector3d::UnitZ(), 0.0);
  const Vector3d h(0.3, 0.2, 0.1);
  const double r = 0.15, L = 0.8;
  const Vector3d radii(0.3, 0.2, 0.5);
  const std::vector<Shape> shapes = {Shape::Box(h), Shape::Cylinder(r, L), Shape::Capsule(r, L),
                                     Shape::Ellipsoid(radii)};
  for (int i = 0; i < 25; ++i) {
    const Quaterniond q = RandomRotation(rng);
    const Eigen::Matrix3d R = q.toRotationMatrix();
    const Vector3d c(0.2, -0.1, 0.05 * i - 0.2);
    const Vector3d n = Vector3d::UnitZ(), m = R.transpose() * n;  // n in the shape frame
    const double mz = m.z();
    // Closed forms of min over the shape of n·x (support functions): box corners, cylinder
    // rim, capsule end ball, ellipsoid ‖D m‖.
    const std::vector<double> expected = {
        c.z() - h.cwiseProduct(m.cwiseAbs()).sum(),
        c.z() - 0.5 * L * std::abs(mz) - r * std::sqrt(std::max(0.0, 1.0 - mz * mz)),
        c.z() - 0.5 * L * std::abs(mz) - r, c.z() - radii.cwiseProduct(m).norm()};
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const PairDistance d = SignedDistance(ground, Pose(Vector3d::Zero()), shapes[k], Pose(c, q));
      EXPECT_TRUE(d.analytic);
      EXPECT_NEAR(d.gap, expected[k], 1e-14) << ToString(shapes[k].type());  // closed form
      EXPECT_LT((d.normal - n).norm(), 1e-15);
      ExpectConsistent(d, 1e-14);
      EXPECT_NEAR(d.point_a.z(), 0.0, 1e-14);  // the witness on A lies in the plane
    }
  }
}

TEST(Geometry3d, CapsuleCapsuleClosedForm) {
  // Crossed capsules: axis x at the origin, axis y at height z0: segment distance z0.
  const Shape a = Shape::Capsule(0.1, 2.0), b = Shape::Capsule(0.2, 1.0);
  const Quaterniond to_x(AngleAxisd(M_PI / 2, Vector3d::UnitY()));
  const Quaterniond to_y(AngleAxisd(M_PI / 2, Vector3d::UnitX()));
  for (double z0 : {0.05, 0.3, 1.0}) {
    const PairDistance d =
        SignedDistance(a, Pose(Vector3d(0.3, 0, 0), to_x), b, Pose(Vector3d(0, 0.1, z0), to_y));
    EXPECT_NEAR(d.gap, z0 - 0.3, 1e-14);  // closed form
    EXPECT_LT((d.normal - Vector3d::UnitZ()).norm(), 1e-14);
    ExpectConsistent(d, 1e-14);
  }
  // Parallel capsules side by side: distance between the axes minus the radii.
  const PairDistance p = SignedDistance(a, Pose(Vector3d::Zero()), b, Pose(Vector3d(0.5, 0, 0.3)));
  EXPECT_NEAR(p.gap, 0.5 - 0.3, 1e-14);
  EXPECT_LT((p.normal - Vector3d::UnitX()).norm(), 1e-14);
}

TEST(Geometry3d, SphereTriangleMesh) {
  // A square of two triangles in z = 0 (x, y in [0, 1]).
  TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  const Shape floor = Shape::TriangleMeshSurface(m);
  const Shape ball = Shape::Sphere(0.1);
  const PairDistance over =
      SignedDistance(floor, Pose(Vector3d::Zero()), ball, Pose(Vector3d(0.3, 0.6, 0.5)));
  EXPECT_NEAR(over.gap, 0.4, 1e-15);  // closed form
  EXPECT_LT((over.normal - Vector3d::UnitZ()).norm(), 1e-15);
  // Beyond the edge x = 1: distance to the edge.
  const PairDistance edge =
      SignedDistance(floor, Pose(Vector3d::Zero()), ball, Pose(Vector3d(1.3, 0.5, 0.4)));
  EXPECT_NEAR(edge.gap, 0.5 - 0.1, 1e-15);
  EXPECT_LT((edge.normal - Vector3d(0.6, 0, 0.8)).norm(), 1e-15);
  ExpectConsistent(edge, 1e-15);
}

// PlanarFaces keeps a planar quad (two coplanar triangles) as one face and separates a face
// folded by a crease. Why it matters for rows (docs/contact-geometry.md, "Crease crossings"): a
// sphere sliding on the quad across its diagonal keeps the face's gap at 0, whereas the row of
// the single triangle ahead would reach 0 only at the diagonal, with zero slope (a grazing root).
TEST(Geometry3d, PlanarFacesMergeCoplanarTriangles) {
  TriangleMesh m;
  // The unit square in z = 0 (two triangles) and a triangle on its edge x = 1 turned up by
  // δ = 0.1 rad (a concave crease seen from +z).
  const double delta = 0.1;
  m.vertices = {
      {0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {1 + std::cos(delta), 0.5, std::sin(delta)}};
  m.triangles = {{0, 1, 2}, {0, 2, 3}, {1, 4, 2}};
  const std::vector<PlanarFace> faces = PlanarFaces(m);
  ASSERT_EQ(faces.size(), 2u);
  EXPECT_EQ(faces[0].triangles, (std::vector<int>{0, 1}));
  EXPECT_EQ(faces[0].mesh.vertices.size(), 4u);
  EXPECT_EQ(faces[1].triangles, (std::vector<int>{2}));
  // A fold of 1e-6 rad is above the default tolerance (1e-8 rad): two faces.
  TriangleMesh bent = m;
  bent.vertices[3].z() = 1e-6;
  EXPECT_EQ(PlanarFaces(bent).size(), 3u);
  EXPECT_EQ(PlanarFaces(bent, 1e-5).size(), 2u);

  const Shape quad = Shape::TriangleMeshSurface(faces[0].mesh);
  TriangleMesh one;
  one.vertices = {m.vertices[0], m.vertices[2], m.vertices[3]};  // triangle 1 alone
  one.triangles = {{0, 1, 2}};
  const Shape ahead = Shape::TriangleMeshSurface(one);
  const Shape ball = Shape::Sphere(0.1);
  // The centre at height r along y = 0.3 crosses the diagonal x = y at x = 0.3; moving towards
  // −x, triangle 1 (y ≥ x) is the one ahead.
  for (double x = 0.2; x <= 0.4 + 1e-12; x += 0.01) {
    const Isometry3d X_ball = Pose(Vector3d(x, 0.3, 0.1));
    EXPECT_NEAR(SignedDistance(quad, Pose(Vector3d::Zero()), ball, X_ball).gap, 0.0, 1e-15) << x;
    // Triangle 1 alone: √(r² + s²) − r with s = (x − 0.3)/√2 the distance to the diagonal
    // (closed form, round-off).
    const double s = std::max(0.0, x - 0.3) / std::sqrt(2.0);
    EXPECT_NEAR(SignedDistance(ahead, Pose(Vector3d::Zero()), ball, X_ball).gap,
                std::sqrt(0.01 + s * s) - 0.1, 1e-15)
        << x;
  }
}

// Every analytic pair and a selection of FCL pairs: the normal is the gradient of the gap.
TEST(Geometry3d, NormalIsGradientOfGap) {
  std::mt19937 rng(3);
  TriangleMesh tetra;
  tetra.vertices = {{0, 0, 0}, {0.4, 0, 0}, {0, 0.4, 0}, {0, 0, 0.4}};
  tetra.triangles = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  const std::vector<Shape> convex = {Shape::Sphere(0.2),
                                     Shape::Box(Vector3d(0.2, 0.15, 0.1)),
                                     Shape::Capsule(0.1, 0.3),
                                     Shape::Cylinder(0.15, 0.3),
                                     Shape::Ellipsoid(Vector3d(0.2, 0.15, 0.25)),
                                     Shape::ConvexMesh(tetra)};
  const Shape plane = Shape::Plane(Vector3d(0.1, 0.2, 1.0), 0.1);
  for (std::size_t i = 0; i < convex.size(); ++i) {
    // Random orientation, clearly above the plane: the lowest point is unique almost surely.
    const Isometry3d X_b = Pose(Vector3d(0.1, 0.2, 0.8), RandomRotation(rng));
    // Step and tolerance: exact gaps, central differences with curvature ≤ 1/0.1: truncation
    // ≤ step²·10 ≈ 1e-11, round-off 1e-16/1e-6 = 1e-10.
    ExpectNormalIsGradient(plane, Pose(Vector3d(0, 0, 0.1), RandomRotation(rng)), convex[i], X_b,
                           1e-6, 1e-8);
    for (std::size_t j = 0; j < convex.size(); ++j) {
      const Isometry3d X_a = Pose(Vector3d::Zero(), RandomRotation(rng));
      const Isometry3d X = Pose(0.9 * RandomDirection(rng), RandomRotation(rng));
      const bool analytic = HasAnalyticPath(convex[i].type(), convex[j].type());
      // FCL path: gaps carry ~1e-13 error (step 1e-5: FD round-off ~1e-8) and its witness
      // points, hence normals, ~3e-7 (measured on random poses, see geometry3d.h): 2e-6.
      ExpectNormalIsGradient(convex[i], X_a, convex[j], X, analytic ? 1e-6 : 1e-5,
                             analytic ? 1e-8 : 2e-6);
    }
  }
}

// FCL's gaps against closed forms. With FCL's default GJK tolerance (1e-6) the error is far above
// what root finding needs; with the tolerance the library sets (1e-16), it is below 1e-10.
TEST(Geometry3d, FclAccuracyAgainstClosedForms) {
  std::mt19937 rng(4);
  const Shape table = Shape::Box(Vector3d(1.0, 1.0, 0.1));  // top face z = 0.1
  const Shape box = Shape::Box(Vector3d(0.2, 0.1, 0.15));
  const Shape ball = Shape::Sphere(0.3);
  const Shape egg = Shape::Ellipsoid(Vector3d(0.5, 0.4, 0.3));
  DistanceOptions fcl_default;
  fcl_default.force_fcl = true;
  fcl_default.fcl_distance_tolerance = 1e-6;  // FCL's GJKSolver_libccd default
  DistanceOptions fcl_tight;
  fcl_tight.force_fcl = true;
  double worst_default = 0.0, worst_tight = 0.0;
  for (int i = 0; i < 30; ++i) {
    const Quaterniond q = RandomRotation(rng);
    const double gap = 1e-3 * std::pow(10.0, i % 4);  // 1e-3 … 1
    // Box over the table: the lowest corner of the box sets the gap (its x, y stay over the
    // table since the box is small).
    const Eigen::Matrix3d R = q.toRotationMatrix();
    const double depth =
        Vector3d(0.2, 0.1, 0.15).cwiseProduct(R.row(2).transpose().cwiseAbs()).sum();
    const Isometry3d X_box = Pose(Vector3d(0.1, -0.2, 0.1 + depth + gap), q);
    // Ball of radius 0.3 on the ellipsoid's shortest (z) axis: gap = |c| − 0.3 − 0.3, valid
    // while |c| − 0.3 stays below the smallest curvature radius there, b²/c = 0.533.
    const double gap_e = std::min(gap, 0.1);
    const Isometry3d X_ball = Pose(Vector3d(0, 0, 0.6 + gap_e));
    const struct {
      const Shape& a;
      Isometry3d X_a;
      const Shape& b;
      Isometry3d X_b;
      double gap;
    } cases[] = {{table, Pose(Vector3d::Zero()), box, X_box, gap},
                 {egg, Pose(Vector3d::Zero()), ball, X_ball, gap_e}};
    for (const auto& c : cases) {
      const PairDistance d0 = SignedDistance(c.a, c.X_a, c.b, c.X_b, fcl_default);
      const PairDistance d1 = SignedDistance(c.a, c.X_a, c.b, c.X_b, fcl_tight);
      EXPECT_FALSE(d1.analytic);
      worst_default = std::max(worst_default, std::abs(d0.gap - c.gap));
      worst_tight = std::max(worst_tight, std::abs(d1.gap - c.gap));
    }
  }
  RecordProperty("fcl_default_worst_error", std::to_string(worst_default));
  RecordProperty("fcl_tight_worst_error", std::to_string(worst_tight));
  std::printf("FCL gap error: default tolerance %.3e, library setting %.3e\n", worst_default,
              worst_tight);
  EXPECT_GT(worst_default, 1e-9);  // the default really is too coarse for root finding
  EXPECT_LT(worst_tight, 1e-10);   // the requirement
}

// Analytic paths against FCL on random poses: both agree to 1e-10.
TEST(Geometry3d, AnalyticAgreesWithFcl) {
  std::mt19937 rng(5);
  const std::vector<Shape> shapes = {Shape::Sphere(0.2), Shape::Box(Vector3d(0.3, 0.2, 0.1)),
                                     Shape::Capsule(0.1, 0.4)};
  DistanceOptions fcl;
  fcl.force_fcl = true;
  for (int i = 0; i < 20; ++i) {
    for (const Shape& a : shapes) {
      for (const Shape& b : shapes) {
        if (!HasAnalyticPath(a.type(), b.type())) continue;
        const Isometry3d X_a = Pose(Vector3d::Zero(), RandomRotation(rng));
        const Isometry3d X_b = Pose((0.8 + 0.05 * i) * RandomDirection(rng), RandomRotation(rng));
        const PairDistance exact = SignedDistance(a, X_a, b, X_b);
        const PairDistance f = SignedDistance(a, X_a, b, X_b, fcl);
        if (exact.gap < 1e-3) continue;  // FCL's penetration (EPA) is not the subject here
        EXPECT_TRUE(exact.analytic);
        EXPECT_NEAR(exact.gap, f.gap, 1e-10) << ToString(a.type()) << "-" << ToString(b.type());
        // The certified bracket really bounds the error (round-off slack 1e-15).
        EXPECT_LE(std::abs(exact.gap - f.gap), f.gap_error + 1e-15);
        // Witness points of smooth pairs are unique; box faces may have a continuum of them.
        EXPECT_LT((exact.normal - f.normal).norm(), 1e-4);
      }
    }
  }
  // Plane pairs: FCL's half-space is not a GJK shape; compare with a large thin box instead.
  const Shape ground = Shape::Plane(Vector3d::UnitZ(), 0.0);
  const Shape slab = Shape::Box(Vector3d(10, 10, 1));
  const std::vector<Shape> on_ground = {Shape::Box(Vector3d(0.3, 0.2, 0.1)),
                                        Shape::Cylinder(0.2, 0.5), Shape::Capsule(0.1, 0.4),
                                        Shape::Ellipsoid(Vector3d(0.3, 0.2, 0.4))};
  for (int i = 0; i < 10; ++i) {
    for (const Shape& s : on_ground) {
      const Isometry3d X = Pose(Vector3d(0.1, 0.2, 0.5 + 0.1 * i), RandomRotation(rng));
      const PairDistance exact = SignedDistance(ground, Pose(Vector3d::Zero()), s, X);
      const PairDistance f = SignedDistance(slab, Pose(Vector3d(0, 0, -1)), s, X, fcl);
      EXPECT_NEAR(exact.gap, f.gap, 1e-10) << ToString(s.type());  // the bound
    }
  }
}

// FCL pairs in overlap (FCL's collision query, MPR) and at exact touch: the sign and the normal
// are right and the depth is close.
TEST(Geometry3d, FclOverlapAndTouch) {
  const Shape table = Shape::Box(Vector3d(1, 1, 0.5));  // top face z = 0.5
  for (const Shape& s : {Shape::Capsule(0.1, 0.4), Shape::Cylinder(0.1, 0.4)}) {
    const double bottom = s.type() == ShapeType::kCapsule ? 0.3 : 0.2;  // centre to lowest point
    for (double gap : {-0.01, 0.0, 0.01}) {
      const Isometry3d X = Pose(Vector3d(0.1, 0.2, 0.5 + bottom + gap));
      const PairDistance d = SignedDistance(table, Pose(Vector3d::Zero()), s, X);
      EXPECT_FALSE(d.analytic);
      // MPR's depth is approximate: 1e-6 of the 0.01 overlap measured ~2e-7.
      EXPECT_NEAR(d.gap, gap, gap < 0.0 ? 1e-6 : 1e-12) << ToString(s.type());
      // Normal: MPR's (overlap), the witness points' (apart), or at exact touch the witness
      // points of a copy moved away by 1e-4 of the size: flat faces exact, curved ones O(1e-4).
      EXPECT_LT((d.normal - Vector3d::UnitZ()).norm(), 1e-4) << ToString(s.type()) << " " << gap;
      EXPECT_LT((d.point_b - d.point_a - d.gap * d.normal).norm(), 1e-9);
    }
  }
}

TEST(Geometry3d, RejectsSurfacePairs) {
  const Shape plane = Shape::Plane(Vector3d::UnitZ(), 0.0, Isometry3d::Identity(), "floor");
  EXPECT_THROW(SignedDistance(plane, Isometry3d::Identity(), plane, Isometry3d::Identity()),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact
