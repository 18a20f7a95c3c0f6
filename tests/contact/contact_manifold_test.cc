#include "contact/contact_manifold.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "contact/complementarity.h"
#include "contact/spatial_contacts.h"
#include "contact_test_shapes.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"

namespace saltus::contact {
namespace {

using Eigen::AngleAxisd;
using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Quaterniond;
using Eigen::Vector3d;
using testing::Cube;
using testing::Pose;
using testing::Pyramid;
using testing::Rx;
using testing::Rz;
using testing::TwoFreeBodies;

const Shape kGround = Shape::Plane(Vector3d::UnitZ(), 0.0, Isometry3d::Identity(), "ground");

// d/dε [G(q ⊕ ε v) v] at ε = 0 for `rows`: central differences D(ε) at ε = 1e-4 and ε/2,
// Richardson-extrapolated, (4 D(ε/2) − D(ε))/3: truncation O(ε⁴ |d⁵(G v)/dε⁵|) ≲ 1e-16 ·
// (|v|·curvature)⁵, round-off ~ machine ε |G v| / ε ≈ 1e-11. The four shifted positions
// (q ⊕ ±ε v, q ⊕ ±ε/2 v) are appended to `shifted` (tests skip rows whose witness features switch
// among them: G jumps there).
Eigen::VectorXd RichardsonRateDerivative(const engine::MechanicalSystem& system,
                                         const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                         const std::vector<int>& rows,
                                         std::vector<Eigen::VectorXd>* shifted) {
  constexpr double kEps = 1e-4;
  const auto difference = [&](double eps) {
    Eigen::VectorXd q_plus, q_minus;
    system.IntegratePosition(q, v, eps, &q_plus);
    system.IntegratePosition(q, v, -eps, &q_minus);
    Eigen::MatrixXd G_plus, G_minus;
    system.ConstraintJacobian(0, q_plus, rows, &G_plus);
    system.ConstraintJacobian(0, q_minus, rows, &G_minus);
    shifted->push_back(std::move(q_plus));
    shifted->push_back(std::move(q_minus));
    return Eigen::VectorXd((G_plus - G_minus) * v / (2 * eps));
  };
  const Eigen::VectorXd d_full = difference(kEps);
  return (4 * difference(kEps / 2) - d_full) / 3;
}

// A random state of the two-body γ tests below (body 0 carries the surface, body 1 the other
// shape, 7 + 7 coordinates): body 0 within 5 cm of the origin and tilted by ≲ 0.3 rad, body 1 over
// |x|, |y| ≤ 0.35 m at height z_mid ± z_half in any orientation; every velocity in [−2, 2].
void RandomizeSurfaceAndBody(std::mt19937& rng, double z_mid, double z_half, Eigen::VectorXd* q,
                             Eigen::VectorXd* v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  q->segment<3>(0) = 0.05 * Vector3d(u(rng), u(rng), u(rng));
  q->segment<4>(3) =
      Eigen::Vector4d(1.0 + 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)).normalized();
  q->segment<3>(7) = Vector3d(0.35 * u(rng), 0.35 * u(rng), z_mid + z_half * u(rng));
  q->segment<4>(10) = Eigen::Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized();
  v->resize(12);
  for (int k = 0; k < 12; ++k) (*v)[k] = 2.0 * u(rng);
}

TEST(ContactManifold, BoxFlatOnPlaneHasFourPoints) {
  const Vector3d h(0.3, 0.2, 0.1);
  const ContactManifold m(kGround, Shape::Box(h));
  EXPECT_EQ(m.num_features(), 8);
  const Isometry3d X_box = Pose(Vector3d(1.0, -2.0, 0.1), Rz(0.7));
  // Margin: the resting corners are at gap 0 to round-off (1e-16); the others at 0.2.
  const std::vector<int> active = m.Active(Isometry3d::Identity(), X_box, 1e-9);
  ASSERT_EQ(active.size(), 4u);
  for (int i : active) {
    const PairDistance d = m.Evaluate(i, Isometry3d::Identity(), X_box);
    EXPECT_NEAR(d.gap, 0.0, 1e-15);
    EXPECT_LT((d.normal - Vector3d::UnitZ()).norm(), 1e-15);
    // The contact point is a bottom corner of the box.
    const Vector3d local = X_box.inverse() * d.point_b;
    EXPECT_NEAR(local.cwiseAbs().x(), h.x(), 1e-15);
    EXPECT_NEAR(local.cwiseAbs().y(), h.y(), 1e-15);
    EXPECT_NEAR(local.z(), -h.z(), 1e-15);
  }
  // Plane given second: same gaps, normals reversed.
  const ContactManifold r(Shape::Box(h), kGround);
  const std::vector<int> active_r = r.Active(X_box, Isometry3d::Identity(), 1e-9);
  ASSERT_EQ(active_r, active);
  EXPECT_LT(
      (r.Evaluate(active_r[0], X_box, Isometry3d::Identity()).normal + Vector3d::UnitZ()).norm(),
      1e-15);
}

TEST(ContactManifold, CylinderAndCapsuleOnTheirSideHaveTwoEndPoints) {
  const double radius = 0.2, length = 1.0;
  for (const Shape& s : {Shape::Cylinder(radius, length), Shape::Capsule(radius, length)}) {
    const ContactManifold m(kGround, s);
    EXPECT_EQ(m.num_features(), 2);
    // Axis horizontal (along −y after Rx(π/2)), yawed, resting on the ground.
    const Isometry3d X = Pose(Vector3d(0.5, 0.5, radius), Rz(0.3) * Rx(M_PI / 2));
    const std::vector<int> active = m.Active(Isometry3d::Identity(), X, 1e-9);
    ASSERT_EQ(active.size(), 2u) << ToString(s.type());
    const Vector3d axis = X.linear().col(2);
    for (int i = 0; i < 2; ++i) {
      const PairDistance d = m.Evaluate(i, Isometry3d::Identity(), X);
      EXPECT_NEAR(d.gap, 0.0, 1e-15);  // round-off of the rotation
      const Vector3d expected =
          X.translation() + (i == 0 ? -0.5 : 0.5) * length * axis - radius * Vector3d::UnitZ();
      EXPECT_LT((d.point_b - expected).norm(), 1e-15) << ToString(s.type());
    }
    // Tilted by 0.1 rad about the horizontal normal of the axis: one end lifts by L sin(0.1).
    const Vector3d tilt_axis = Vector3d::UnitZ().cross(axis).normalized();
    const Isometry3d T = Pose(X.translation(), AngleAxisd(0.1, tilt_axis) * X.linear());
    const double g0 = m.Evaluate(0, Isometry3d::Identity(), T).gap;
    const double g1 = m.Evaluate(1, Isometry3d::Identity(), T).gap;
    // Closed form: ends at heights ∓(L/2) sin 0.1 about the centre, lowest point r cos… below.
    const double drop = radius * (s.type() == ShapeType::kCylinder ? std::cos(0.1) : 1.0);
    EXPECT_NEAR(std::min(g0, g1), radius - 0.5 * length * std::sin(0.1) - drop, 1e-15);
    EXPECT_NEAR(std::max(g0, g1), radius + 0.5 * length * std::sin(0.1) - drop, 1e-15);
  }
}

// The side of a point against a triangle mesh (geometry3d.h, MeshPointSide): on the closed
// pyramid (its base added) the sign of the signed distance is −1 exactly inside the solid, in
// every Voronoi region (checked against the half-space test of the 5 face planes); on the open
// pyramid a point beside a base (boundary) edge or vertex is +1 (unsigned), also below the base.
// The vertex rows' gap MeshPointDistance then agrees with the closed solid's signed distance.
TEST(ContactManifold, MeshPointSideIsInsideOfClosedSurfaceAndPlusOnOpenBoundary) {
  const TriangleMesh open = Pyramid();
  TriangleMesh closed = open;
  closed.triangles.push_back({0, 2, 1});
  closed.triangles.push_back({0, 3, 2});
  const auto inside = [&](const Vector3d& p) {
    for (const auto& t : closed.triangles) {
      const Vector3d& a = closed.vertices[static_cast<std::size_t>(t[0])];
      const Vector3d n = (closed.vertices[static_cast<std::size_t>(t[1])] - a)
                             .cross(closed.vertices[static_cast<std::size_t>(t[2])] - a);
      if (n.dot(p - a) > 0.0) return false;
    }
    return true;
  };
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int counts[3][2] = {{0, 0}, {0, 0}, {0, 0}};  // region kind × (outside, inside)
  int boundary_below = 0;
  for (int k = 0; k < 4000; ++k) {
    const Vector3d p(0.3 * u(rng), 0.3 * u(rng), 0.06 + 0.12 * u(rng));
    const MeshClosest c = ClosestPointOnMesh(closed, p);
    // Points within 1e-9 of the surface: the sign is a matter of round-off.
    if ((p - c.point).norm() < 1e-9) continue;
    const bool in = inside(p);
    EXPECT_EQ(MeshPointSide(closed, c, p), in ? -1.0 : 1.0) << p.transpose();
    ++counts[c.feature.kind][in ? 1 : 0];
    const PairDistance d = MeshPointDistance(closed, Isometry3d::Identity(), p);
    // The signed distance's magnitude is the distance to the closest point (exact, round-off).
    EXPECT_NEAR(d.gap, (in ? -1.0 : 1.0) * (p - c.point).norm(), 1e-15);
    const MeshClosest o = ClosestPointOnMesh(open, p);
    if (o.feature.kind != TriangleFeature::kFace && o.point.z() < 1e-12 && p.z() < 0.0) {
      ++boundary_below;
      EXPECT_EQ(MeshPointSide(open, o, p), 1.0) << p.transpose();
    }
  }
  // Every region on both sides (the inside sees only faces and edges of the solid, and
  // vertices outside), and points beyond the open rim below the base.
  EXPECT_GE(counts[TriangleFeature::kFace][0], 100);
  EXPECT_GE(counts[TriangleFeature::kFace][1], 100);
  EXPECT_GE(counts[TriangleFeature::kEdge][0], 100);
  EXPECT_GE(counts[TriangleFeature::kVertex][0], 100);
  EXPECT_GE(boundary_below, 100);
}

// Every feature kind: the normal is the gradient of its gap (central differences).
TEST(ContactManifold, FeatureNormalsAreGradients) {
  std::mt19937 rng(11);
  std::normal_distribution<double> nd(0.0, 1.0);
  const auto random_rotation = [&] {
    return Quaterniond(nd(rng), nd(rng), nd(rng), nd(rng)).normalized().toRotationMatrix();
  };
  const Shape tilted = Shape::Plane(Vector3d(0.2, -0.1, 1.0), 0.05);
  const std::vector<ContactManifold> manifolds = {
      ContactManifold(tilted, Shape::Box(Vector3d(0.3, 0.2, 0.1))),
      ContactManifold(Shape::Cylinder(0.2, 0.5), tilted),
      ContactManifold(tilted, Shape::Capsule(0.1, 0.4)),
      ContactManifold(Shape::Box(Vector3d(0.5, 0.5, 0.2)), Shape::Box(Vector3d(0.2, 0.1, 0.15))),
      // Triangle-mesh vertex and end-ball rows, box–capsule end balls, both orders.
      ContactManifold(Shape::TriangleMeshSurface(Pyramid()), Shape::Box(Vector3d(0.3, 0.2, 0.1))),
      ContactManifold(Shape::ConvexMesh(Cube(0.15)), Shape::TriangleMeshSurface(Pyramid())),
      ContactManifold(Shape::TriangleMeshSurface(Pyramid()), Shape::Capsule(0.1, 0.4)),
      ContactManifold(Shape::Box(Vector3d(0.3, 0.2, 0.1)), Shape::Capsule(0.1, 0.4)),
      ContactManifold(Shape::Capsule(0.1, 0.4), Shape::Box(Vector3d(0.3, 0.2, 0.1)))};
  // Ellipsoid support point and cylinder rims against a mesh or a box, both orders: placed once
  // with the centre over the +x face of the pyramid and over the box's top face (n fixed in the
  // surface), and once at the random poses above (mostly the centre beside the pyramid's apex,
  // edges, or the box's edges and corners: n turns with the centre, NormalTurn).
  const std::vector<ContactManifold> support_and_rim = {
      ContactManifold(Shape::TriangleMeshSurface(Pyramid()),
                      Shape::Ellipsoid(Vector3d(0.2, 0.1, 0.15))),
      ContactManifold(Shape::Cylinder(0.1, 0.1), Shape::TriangleMeshSurface(Pyramid())),
      ContactManifold(Shape::Box(Vector3d(0.3, 0.2, 0.1)),
                      Shape::Ellipsoid(Vector3d(0.2, 0.1, 0.15))),
      ContactManifold(Shape::Cylinder(0.1, 0.1), Shape::Box(Vector3d(0.3, 0.2, 0.1)))};
  std::vector<std::pair<const ContactManifold*, bool>> cases;
  for (const ContactManifold& m : manifolds) cases.emplace_back(&m, false);
  for (const ContactManifold& m : support_and_rim) {
    cases.emplace_back(&m, true);
    cases.emplace_back(&m, false);
  }
  int turning = 0;  // features evaluated with a non-zero normal turn
  for (const auto& [mp, face] : cases) {
    const ContactManifold& m = *mp;
    Isometry3d X_a = Pose(Vector3d(0, 0, -0.1), random_rotation());
    Isometry3d X_b = Pose(Vector3d(0.1, 0.2, 0.7), random_rotation());
    if (face) {  // the surface at (0, 0, −0.1) unturned, the convex shape's centre over a face
      const bool surface_is_a =
          m.shape_a().type() == ShapeType::kTriangleMesh || m.shape_a().type() == ShapeType::kBox;
      const Isometry3d X_s = Pose(Vector3d(0, 0, -0.1));
      const Isometry3d X_c = Pose(Vector3d(0.25, 0.01, 0.22), random_rotation());
      X_a = surface_is_a ? X_s : X_c;
      X_b = surface_is_a ? X_c : X_s;
    }
    for (int i = 0; i < m.num_features(); ++i) {
      NormalTurn turn;
      const PairDistance d = m.Evaluate(i, X_a, X_b, &turn);
      if (!turn.w.isZero(0.0)) ++turning;
      EXPECT_LT((d.point_b - d.point_a - d.gap * d.normal).norm(), 1e-14);
      for (int k = 0; k < 6; ++k) {
        const double step = 1e-6;
        Vector3d dx = Vector3d::Zero(), dth = Vector3d::Zero();
        (k < 3 ? dx : dth)(k % 3) = step;
        const auto moved = [&](double s) {
          Isometry3d Y = X_b;
          if (k >= 3)
            Y.linear() = AngleAxisd(s * step, dth / step).toRotationMatrix() * X_b.linear();
          Y.translation() += s * dx;
          return Y;
        };
        const double fd =
            (m.Evaluate(i, X_a, moved(1.0)).gap - m.Evaluate(i, X_a, moved(-1.0)).gap) /
            (2.0 * step);
        // ġ = n·v_B(p_b) + w·v_B(c) for a motion of B alone (contact_manifold.h, NormalTurn).
        const double predicted =
            (d.normal.dot(dx) + (d.point_b - X_b.translation()).cross(d.normal).dot(dth) +
             turn.w.dot(dx) + (turn.point - X_b.translation()).cross(turn.w).dot(dth)) /
            step;
        // Exact gaps: FD truncation ~ step² × curvature, round-off 1e-16 / step: 1e-8 is ample.
        EXPECT_NEAR(fd, predicted, 1e-8) << "feature " << i << " direction " << k;
      }
    }
  }
  // The random poses put the support and rim centres beside edges or vertices.
  EXPECT_GE(turning, 3);
}

// A box rolling over its edge x = +h_x on the ground: the pivot corners stay at gap 0, the
// feature rows keep their identity and every gap is a smooth function of the angle; the active
// set goes 4 → 2 → 4. The min over the features equals the pair's signed distance.
TEST(ContactManifold, BoxRollingOverAnEdgeKeepsContinuousRows) {
  const Vector3d h(0.2, 0.3, 0.1);
  const Shape box = Shape::Box(h);
  const ContactManifold m(kGround, box);
  const auto pose = [&](double theta) {
    // Rotation about the edge (x = h_x, z = 0) parallel to y.
    const Matrix3d R = AngleAxisd(theta, Vector3d::UnitY()).toRotationMatrix();
    const Vector3d pivot(h.x(), 0.0, 0.0);
    return Pose(pivot + R * (Vector3d(0, 0, h.z()) - pivot), R);
  };
  const int n = 200;
  const double dtheta = (M_PI / 2) / n;
  for (int k = 0; k <= n; ++k) {
    const double theta = k * dtheta;
    const std::vector<int> active = m.Active(Isometry3d::Identity(), pose(theta), 1e-12);
    const std::size_t expected = (k == 0 || k == n) ? 4u : 2u;
    EXPECT_EQ(active.size(), expected) << "theta " << theta;
    double min_gap = 1e300;
    for (int i = 0; i < m.num_features(); ++i) {
      const double g = m.Evaluate(i, Isometry3d::Identity(), pose(theta)).gap;
      min_gap = std::min(min_gap, g);
      if (k == 0 || k == n) continue;
      // Smoothness: each row is r sin(θ + φ_i) − const; its second difference is bounded by
      // dθ² × max|g''| ≤ dθ² × ‖h‖ (plus round-off).
      const double gm = m.Evaluate(i, Isometry3d::Identity(), pose(theta - dtheta)).gap;
      const double gp = m.Evaluate(i, Isometry3d::Identity(), pose(theta + dtheta)).gap;
      EXPECT_LE(std::abs(gp - 2.0 * g + gm), dtheta * dtheta * 2.0 * h.norm() + 1e-14);
    }
    const double signed_distance =
        SignedDistance(kGround, Isometry3d::Identity(), box, pose(theta)).gap;
    EXPECT_NEAR(min_gap, signed_distance, 1e-15);  // both exact
  }
}

TEST(ContactManifold, BoxOnBoxUsesCorners) {
  const ContactManifold m(Shape::Box(Vector3d(1.0, 1.0, 0.5)), Shape::Box(Vector3d(0.2, 0.3, 0.1)));
  EXPECT_EQ(m.num_features(), 16);
  const Isometry3d X_a = Pose(Vector3d(0, 0, 0.5));               // top face at z = 1
  const Isometry3d X_b = Pose(Vector3d(0.1, 0.2, 1.1), Rz(0.4));  // resting on it
  const std::vector<int> active = m.Active(X_a, X_b, 1e-9);
  ASSERT_EQ(active.size(), 4u);
  for (int i : active) {
    EXPECT_EQ(m.feature(i).kind, FeatureKind::kBoxCornerOfB);
    EXPECT_LT((m.Evaluate(i, X_a, X_b).normal - Vector3d::UnitZ()).norm(), 1e-15);
  }
  // Sunk by 0.01: four corners at −0.01 exactly.
  const Isometry3d sunk = Pose(Vector3d(0.1, 0.2, 1.09), Rz(0.4));
  for (int i : m.Active(X_a, sunk, 0.0)) EXPECT_NEAR(m.Evaluate(i, X_a, sunk).gap, -0.01, 1e-15);
}

// A box resting flat: four redundant rows (Delassus rank 3). The acceleration-level LCP
// (Haddouni et al. 2017, eq. 12) with Lemke still solves, the contact forces add up to m g and
// their moment about the centre vanishes.
TEST(ContactManifold, RestingBoxForcesBalanceGravity) {
  const Vector3d h(0.3, 0.2, 0.1);
  const double mass = 2.0, gravity = 9.81;
  // v = (linear velocity, angular velocity in the world frame); M = diag(m I, R I_B Rᵀ).
  const Vector3d inertia_body(mass / 3.0 * (h.y() * h.y() + h.z() * h.z()),
                              mass / 3.0 * (h.x() * h.x() + h.z() * h.z()),
                              mass / 3.0 * (h.x() * h.x() + h.y() * h.y()));
  const Isometry3d X = Pose(Vector3d(0.4, 0.1, h.z()), Rz(0.9));
  Eigen::Matrix<double, 6, 6> M = Eigen::Matrix<double, 6, 6>::Zero();
  M.topLeftCorner<3, 3>() = mass * Matrix3d::Identity();
  M.bottomRightCorner<3, 3>() = X.linear() * inertia_body.asDiagonal() * X.linear().transpose();
  Eigen::Matrix<double, 6, 1> F = Eigen::Matrix<double, 6, 1>::Zero();
  F(2) = -mass * gravity;
  const ContactManifold m(kGround, Shape::Box(h));
  const std::vector<int> active = m.Active(Isometry3d::Identity(), X, 1e-9);
  ASSERT_EQ(active.size(), 4u);
  Eigen::MatrixXd G(4, 6);
  std::vector<PairDistance> points;
  for (int r = 0; r < 4; ++r) {
    points.push_back(m.Evaluate(active[static_cast<std::size_t>(r)], Isometry3d::Identity(), X));
    const PairDistance& d = points.back();
    G.row(r) << d.normal.transpose(), (d.point_b - X.translation()).cross(d.normal).transpose();
  }
  const Eigen::MatrixXd Minv = M.inverse();
  const Eigen::MatrixXd W = G * Minv * G.transpose();
  EXPECT_EQ(Eigen::FullPivLU<Eigen::MatrixXd>(W).rank(), 3);
  // At rest γ = 0: w = W λ + G M⁻¹ F.
  const LcpResult lcp = SolveLcp(W, G * Minv * F, LcpOptions{});
  ASSERT_TRUE(lcp.ok) << lcp.message;
  Vector3d force = Vector3d::Zero(), moment = Vector3d::Zero();
  for (int r = 0; r < 4; ++r) {
    const Vector3d f = lcp.z(r) * points[static_cast<std::size_t>(r)].normal;
    force += f;
    moment += (points[static_cast<std::size_t>(r)].point_b - X.translation()).cross(f);
    EXPECT_GE(lcp.z(r), 0.0);
  }
  // Tolerance: the LCP's residual tolerance 1e-10 relative to ‖b‖ ~ g, times the weights.
  EXPECT_NEAR(force.z(), mass * gravity, 1e-8);
  EXPECT_LT(moment.norm(), 1e-8);
}

// Two free bodies "a" and "b" (inertias diag(0.02, 0.03, 0.04) and diag(0.05, 0.02, 0.03), b's
// centre of mass at com_b in its frame) for the γ tests.
// γ of the cylinder-rim and box-corner features in closed form (spatial_contacts.h) against a
// central difference of G v along the motion q ⊕ ε v (v constant, so d/dε [G v] = Ġ v = γ).
// Two free bodies; the rim rows against a tilted ground plane and against a plane on the other
// body given as B; the 16 corner rows of two boxes at random nearby poses, which visit the face,
// edge and vertex regions (counted: each must be visited).
TEST(ContactManifoldGamma, RimAndBoxCornerGammaMatchDifferenceOfJacobian) {
  const std::shared_ptr<const engine::SpatialModel> model =
      TwoFreeBodies(Vector3d(0.02, -0.01, 0.03));
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  Isometry3d off = Pose(Vector3d(0.05, -0.02, 0.03), Rz(0.4) * Rx(-0.3));
  const Vector3d h_a(0.2, 0.1, 0.15), h_b(0.1, 0.2, 0.1);
  const std::vector<SpatialContactPair> pairs = {
      {"floor_cylinder", engine::kGround,
       Shape::Plane(Vector3d(0.1, -0.2, 1.0), -0.05, Isometry3d::Identity(), "floor"), 0,
       Shape::Cylinder(0.07, 0.25, off), 0.2},
      {"cylinder_plane_b", 0, Shape::Cylinder(0.06, 0.2, off), 1,
       Shape::Plane(Vector3d(0.3, 1.0, -0.2), 0.02, off), 0.2},
      {"boxes", 0, Shape::Box(h_a), 1, Shape::Box(h_b, off), 0.0},
  };
  auto contacts = std::make_shared<SpatialContacts>(model, pairs);
  system->AddConstraintBlock(contacts);
  const int m = contacts->num_rows();  // 2 + 2 + 16
  ASSERT_EQ(m, 20);
  for (int i = 0; i < m; ++i) EXPECT_TRUE(contacts->HasAnalyticGamma(i)) << i;

  // Region of a corner row's corner in the other box (outside count, see the header).
  const auto region = [&](const Eigen::VectorXd& q, int row) {
    if (row < 4) return -1;
    const bool corner_of_b = row < 12;  // features 0..7: corners of B against box A
    const PairDistance d = contacts->Evaluate(q, row);
    const int body = corner_of_b ? 0 : 1;
    Isometry3d X =
        Pose(q.segment<3>(7 * body), engine::QuaternionToRotation(q.segment<4>(7 * body + 3)));
    if (!corner_of_b) X = X * off;
    const Vector3d local = X.inverse() * (corner_of_b ? d.point_b : d.point_a);
    const Vector3d h = corner_of_b ? h_a : h_b;
    int outside = 0;
    for (int j = 0; j < 3; ++j) outside += std::abs(local[j]) > h[j] ? 1 : 0;
    return std::max(outside, 1);  // 0 (inside) is the face form too
  };

  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<int> rows(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) rows[static_cast<std::size_t>(i)] = i;
  int visits[4] = {0, 0, 0, 0};
  int rim_checks = 0;
  double worst = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Eigen::VectorXd q = model->InitialPositions(), v(12);
    q.segment<3>(0) = Vector3d(0, 0, 0.3) + 0.1 * Vector3d(u(rng), u(rng), u(rng));
    q.segment<3>(7) = q.segment<3>(0) + 0.3 * Vector3d(u(rng), u(rng), u(rng));
    for (int body = 0; body < 2; ++body) {
      q.segment<4>(7 * body + 3) = Eigen::Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized();
    }
    for (int k = 0; k < 12; ++k) v[k] = 2.0 * u(rng);
    Eigen::VectorXd gamma;
    system->ConstraintGamma(0, q, v, rows, &gamma);
    // RichardsonRateDerivative: truncation ~ 1e-9 here (|v| ≤ 2√6, curvatures ≲ 1/0.06 m⁻¹).
    std::vector<Eigen::VectorXd> shifted;
    const Eigen::VectorXd fd = RichardsonRateDerivative(*system, q, v, rows, &shifted);
    for (int i = 0; i < m; ++i) {
      const int r = region(q, i);
      // A switch of the witness features within ±ε makes G jump: not a test of γ.
      if (r != region(shifted[0], i) || r != region(shifted[1], i)) continue;
      if (r < 0) {
        ++rim_checks;
      } else {
        ++visits[r];
      }
      const double err = std::abs(fd[i] - gamma[i]) / (1 + std::abs(gamma[i]));
      worst = std::max(worst, err);
      // Truncation bound above (1e-9) with a ×100 margin, relative to 1 + |γ|.
      EXPECT_LT(err, 1e-7) << contacts->row_info(i).name << " region " << r << " trial " << trial
                           << ": analytic " << gamma[i] << ", difference " << fd[i];
    }
  }
  EXPECT_GE(rim_checks, 100);
  EXPECT_GE(visits[1], 20);  // face
  EXPECT_GE(visits[2], 20);  // edge
  EXPECT_GE(visits[3], 20);  // vertex
  std::printf(
      "rim/corner gamma vs difference of G v: worst %.2e (rim %d, face %d, edge %d, "
      "vertex %d)\n",
      worst, rim_checks, visits[1], visits[2], visits[3]);
}

// γ of triangle-mesh–sphere rows in closed form, by the Voronoi region of the closest point
// (spatial_contacts.h: face → plane–point form, edge → edge form, vertex → point–point form),
// against the Richardson-extrapolated central difference of G v along q ⊕ ε v, as above. A
// four-sided pyramid surface (apex up) on a moving body with a sphere off its body's origin on
// the other (mesh as A), and the same surface fixed to the ground against a sphere given as A.
// Random poses put the centre over faces, beside edges and beyond vertices; each region must be
// visited, and poses whose closest feature changes within ±ε are skipped (G jumps there).
TEST(ContactManifoldGamma, MeshSphereGammaMatchesDifferenceOfJacobianInEveryRegion) {
  const std::shared_ptr<const engine::SpatialModel> model = TwoFreeBodies();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  TriangleMesh pyramid;
  pyramid.vertices = {
      {-0.2, -0.2, 0.0}, {0.2, -0.2, 0.0}, {0.2, 0.2, 0.0}, {-0.2, 0.2, 0.0}, {0.0, 0.0, 0.12}};
  pyramid.triangles = {{0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}};
  const Isometry3d mesh_pose = Pose(Vector3d(0.01, 0.02, -0.03), Rz(0.3) * Rx(0.2));
  const Isometry3d ball_pose = Pose(Vector3d(0.03, -0.02, 0.01));
  const Shape mesh = Shape::TriangleMeshSurface(pyramid, mesh_pose, "pyramid");
  const std::vector<SpatialContactPair> pairs = {
      {"moving_mesh", 0, mesh, 1, Shape::Sphere(0.05, ball_pose), 0.0},
      {"ground_mesh_b", 1, Shape::Sphere(0.04, ball_pose), engine::kGround, mesh, 0.0},
  };
  auto contacts = std::make_shared<SpatialContacts>(model, pairs);
  system->AddConstraintBlock(contacts);
  ASSERT_EQ(contacts->num_rows(), 2);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(contacts->HasAnalyticGamma(i)) << i;

  // The closest triangle and region of row `row`'s sphere centre (as the gap computes them).
  const auto region = [&](const Eigen::VectorXd& q, int row) {
    const auto pose = [&](int body) {
      return Pose(q.segment<3>(7 * body), engine::QuaternionToRotation(q.segment<4>(7 * body + 3)));
    };
    const Isometry3d X_mesh = (row == 0 ? pose(0) : Isometry3d::Identity()) * mesh_pose;
    const Vector3d centre = pose(1) * ball_pose.translation();
    const MeshClosest closest = ClosestPointOnMesh(pyramid, X_mesh.inverse() * centre);
    return std::make_pair(closest.triangle * 3 + static_cast<int>(closest.feature.kind),
                          static_cast<int>(closest.feature.kind));
  };

  std::mt19937 rng(17);
  const std::vector<int> rows = {0, 1};
  int visits[3] = {0, 0, 0};  // vertex, edge, face (TriangleFeature::Kind)
  double worst = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Eigen::VectorXd q = model->InitialPositions(), v;
    RandomizeSurfaceAndBody(rng, 0.08, 0.12, &q, &v);
    Eigen::VectorXd gamma;
    system->ConstraintGamma(0, q, v, rows, &gamma);
    // RichardsonRateDerivative (error bounds as in the test above; curvatures here ≲ 1/0.03 m⁻¹:
    // poses with the centre closer than 3 cm to the closest feature are skipped).
    std::vector<Eigen::VectorXd> shifted;
    const Eigen::VectorXd fd = RichardsonRateDerivative(*system, q, v, rows, &shifted);
    for (int i = 0; i < 2; ++i) {
      const auto r = region(q, i);
      bool same = true;
      for (const Eigen::VectorXd& qs : shifted) same = same && region(qs, i) == r;
      const PairDistance d = contacts->Evaluate(q, i);
      const double radius = i == 0 ? 0.05 : 0.04;
      if (!same || d.gap + radius < 0.03) continue;
      ++visits[r.second];
      const double err = std::abs(fd[i] - gamma[i]) / (1 + std::abs(gamma[i]));
      worst = std::max(worst, err);
      // Truncation bound of the difference (~1e-9) with a ×100 margin, relative to 1 + |γ|.
      EXPECT_LT(err, 1e-7) << contacts->row_info(i).name << " region " << r.second << " trial "
                           << trial << ": analytic " << gamma[i] << ", difference " << fd[i];
    }
  }
  EXPECT_GE(visits[TriangleFeature::kFace], 20);
  EXPECT_GE(visits[TriangleFeature::kEdge], 20);
  EXPECT_GE(visits[TriangleFeature::kVertex], 20);
  std::printf("mesh-sphere gamma vs difference of G v: worst %.2e (vertex %d, edge %d, face %d)\n",
              worst, visits[0], visits[1], visits[2]);
}

// γ of the triangle-mesh vertex and end-ball rows and of the box end-ball rows (spatial_contacts.h:
// the mesh rows by the Voronoi region of the closest point as for a sphere, with the vertex or
// ball centre as the material point; the box rows by the region in the box as for a corner),
// against the Richardson-extrapolated central difference of G v along q ⊕ ε v, as above. Mesh
// on a moving body (as A) against a box and a capsule; a convex cube given as A against the
// mesh fixed to the ground; a box against a capsule in both orders. Poses whose closest feature
// changes within ±ε, or with the feature point nearer than 3 cm to an edge or vertex (curvature
// bound of the difference), are skipped; each region must be visited.
TEST(ContactManifoldGamma, MeshVertexAndEndBallGammaMatchDifferenceOfJacobian) {
  const std::shared_ptr<const engine::SpatialModel> model = TwoFreeBodies();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  const TriangleMesh pyramid = Pyramid();
  const Isometry3d mesh_pose = Pose(Vector3d(0.01, 0.02, -0.03), Rz(0.3) * Rx(0.2));
  const Isometry3d off = Pose(Vector3d(0.03, -0.02, 0.01), Rz(0.4) * Rx(-0.3));
  const Shape mesh = Shape::TriangleMeshSurface(pyramid, mesh_pose, "pyramid");
  const Vector3d h_box(0.2, 0.1, 0.15);
  const Shape box = Shape::Box(h_box);
  const double r_capsule = 0.03;
  const Shape capsule = Shape::Capsule(r_capsule, 0.1, off);
  const std::vector<SpatialContactPair> pairs = {
      {"mesh_box", 0, mesh, 1, Shape::Box(Vector3d(0.06, 0.05, 0.04), off), 0.0},  // rows 0–7
      {"cube_mesh", 1, Shape::ConvexMesh(Cube(0.05), off), engine::kGround, mesh, 0.0},  // 8–15
      {"mesh_capsule", 0, mesh, 1, capsule, 0.0},                                        // 16–17
      {"box_capsule", 0, box, 1, capsule, 0.0},                                          // 18–19
      {"capsule_box", 1, capsule, 0, box, 0.0},                                          // 20–21
  };
  auto contacts = std::make_shared<SpatialContacts>(model, pairs);
  system->AddConstraintBlock(contacts);
  const int m = contacts->num_rows();
  ASSERT_EQ(m, 22);
  for (int i = 0; i < m; ++i) EXPECT_TRUE(contacts->HasAnalyticGamma(i)) << i;

  const auto pose = [&](const Eigen::VectorXd& q, int body) {
    if (body == engine::kGround) return Isometry3d(Isometry3d::Identity());
    return Pose(q.segment<3>(7 * body), engine::QuaternionToRotation(q.segment<4>(7 * body + 3)));
  };
  // Region key of a row (−1: too near an edge or vertex) and its class: 0 vertex, 1 edge, 2 face
  // (mesh rows, TriangleFeature::Kind) or 3 + outside count − 1 (box rows: 3 face, 4 edge,
  // 5 vertex).
  const auto region = [&](const Eigen::VectorXd& q, int row) -> std::pair<int, int> {
    const SpatialContactPair& pair = pairs[static_cast<std::size_t>(contacts->RowPair(row))];
    const bool surface_is_a =
        pair.shape_b.type() == ShapeType::kCapsule || pair.shape_b.type() == ShapeType::kBox;
    const PairDistance d = contacts->Evaluate(q, row);
    const double rho = row >= 16 ? r_capsule : 0.0;
    const Vector3d c =
        surface_is_a ? Vector3d(d.point_b + rho * d.normal) : Vector3d(d.point_a - rho * d.normal);
    const int surface_body = surface_is_a ? pair.body_a : pair.body_b;
    if (row < 18) {
      const Isometry3d X = pose(q, surface_body) * mesh_pose;
      const MeshClosest closest = ClosestPointOnMesh(pyramid, X.inverse() * c);
      const int kind = static_cast<int>(closest.feature.kind);
      if (kind != TriangleFeature::kFace && (X * closest.point - c).norm() < 0.03) return {-1, -1};
      return {closest.triangle * 3 + kind, kind};
    }
    const Vector3d local = pose(q, surface_body).inverse() * c;
    int outside = 0, key = 0;
    for (int j = 0; j < 3; ++j) {
      const bool out = std::abs(local[j]) > h_box[j];
      outside += out ? 1 : 0;
      key = 3 * key + (out ? (local[j] > 0 ? 2 : 1) : 0);
    }
    const double dist = std::abs(d.gap + rho);
    if (outside >= 2 && dist < 0.03) return {-1, -1};
    return {100 + key, 2 + std::max(outside, 1)};
  };

  std::mt19937 rng(23);
  std::vector<int> rows(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) rows[static_cast<std::size_t>(i)] = i;
  int visits[6] = {0, 0, 0, 0, 0, 0};
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::VectorXd q = model->InitialPositions(), v;
    RandomizeSurfaceAndBody(rng, 0.1, 0.15, &q, &v);
    Eigen::VectorXd gamma;
    system->ConstraintGamma(0, q, v, rows, &gamma);
    // RichardsonRateDerivative; error bounds as in the tests above (curvatures ≲ 1/0.03 m⁻¹
    // after the skips).
    std::vector<Eigen::VectorXd> shifted;
    const Eigen::VectorXd fd = RichardsonRateDerivative(*system, q, v, rows, &shifted);
    for (int i = 0; i < m; ++i) {
      const auto r = region(q, i);
      if (r.first < 0) continue;
      bool same = true;
      for (const Eigen::VectorXd& qs : shifted) same = same && region(qs, i) == r;
      if (!same) continue;
      ++visits[r.second];
      const double err = std::abs(fd[i] - gamma[i]) / (1 + std::abs(gamma[i]));
      worst = std::max(worst, err);
      // Truncation bound of the difference (~1e-9) with a ×100 margin, relative to 1 + |γ|.
      EXPECT_LT(err, 1e-7) << contacts->row_info(i).name << " region " << r.second << " trial "
                           << trial << ": analytic " << gamma[i] << ", difference " << fd[i];
    }
  }
  for (int k = 0; k < 6; ++k) EXPECT_GE(visits[k], 20) << "region class " << k;
  std::printf(
      "mesh vertex / end-ball and box end-ball gamma vs difference of G v: worst %.2e (mesh "
      "vertex %d, edge %d, face %d; box face %d, edge %d, vertex %d)\n",
      worst, visits[0], visits[1], visits[2], visits[3], visits[4], visits[5]);
}

// Ellipsoid support point and cylinder rims against a mesh and a box (kSurfaceSupport,
// kSurfaceRim): along q(ε) = q ⊕ ε v (v̇ = 0) the first and second central differences of the
// gap values must give G v and γ, in every configuration whose centre stays in one region (face,
// edge or vertex) of the surface, where the gap is smooth (contact_manifold.h). Beside an edge or
// a vertex G v includes the normal-turn term (NormalTurn): without it G v is off by O(1) there.
// Independent of the row's Jacobian code: only gap values are differenced.
TEST(ContactManifoldGamma, SupportAndRimRowsMatchDifferencesOfTheGap) {
  const std::shared_ptr<const engine::SpatialModel> model = TwoFreeBodies();
  auto system = std::make_shared<engine::SpatialMultibodySystem>(model);
  const TriangleMesh pyramid = Pyramid();
  const Isometry3d mesh_pose = Pose(Vector3d(0.01, 0.02, -0.03), Rz(0.3) * Rx(0.2));
  const Shape mesh = Shape::TriangleMeshSurface(pyramid, mesh_pose, "pyramid");
  const Vector3d h_box(0.3, 0.25, 0.15);
  const Shape box = Shape::Box(h_box);
  const double length = 0.12;
  const Shape egg = Shape::Ellipsoid(Vector3d(0.06, 0.04, 0.03));
  const Shape cylinder = Shape::Cylinder(0.04, length);
  const std::vector<SpatialContactPair> pairs = {
      {"mesh_egg", 0, mesh, 1, egg, 0.0},            // row 0
      {"cylinder_mesh", 1, cylinder, 0, mesh, 0.0},  // 1–2
      {"box_egg", 0, box, 1, egg, 0.0},              // 3
      {"egg_box", 1, egg, 0, box, 0.0},              // 4
      {"box_cylinder", 0, box, 1, cylinder, 0.0},    // 5–6
  };
  auto contacts = std::make_shared<SpatialContacts>(model, pairs);
  system->AddConstraintBlock(contacts);
  const int m = contacts->num_rows();
  ASSERT_EQ(m, 7);
  const auto pose = [&](const Eigen::VectorXd& q, int body) {
    return Pose(q.segment<3>(7 * body), engine::QuaternionToRotation(q.segment<4>(7 * body + 3)));
  };
  // Region key of a row's centre (the ellipsoid's centre or the end circle's): the mesh
  // triangle, the kind of its closest feature and the feature's vertices; the box's sign pattern
  // (−1, 0, +1 per axis beyond the half sizes); −1 inside the box. Odd keys: edge or vertex.
  const auto region = [&](const Eigen::VectorXd& q, int row) {
    const Isometry3d X_s = pose(q, 0), X_c = pose(q, 1);
    const double end = row == 1 || row == 5 ? -0.5 : (row == 2 || row == 6 ? 0.5 : 0.0);
    const Vector3d c = X_c * Vector3d(0, 0, end * length);
    if (row <= 2) {
      const MeshClosest closest = ClosestPointOnMesh(pyramid, (X_s * mesh_pose).inverse() * c);
      const int kind = closest.feature.kind == TriangleFeature::kFace ? 0 : 1;
      return 2 * (100 * closest.triangle + 10 * closest.feature.vertices[0] +
                  closest.feature.vertices[1]) +
             kind;
    }
    const Vector3d local = X_s.inverse() * c;
    int outside = 0, key = 0;
    for (int j = 0; j < 3; ++j) {
      const int sign = local[j] > h_box[j] ? 1 : (local[j] < -h_box[j] ? -1 : 0);
      if (sign != 0) ++outside;
      key = 3 * key + sign + 1;
    }
    if (outside == 0) return -1;
    return 2 * key + (outside >= 2 ? 1 : 0);
  };
  std::mt19937 rng(29);
  std::vector<int> rows(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) rows[static_cast<std::size_t>(i)] = i;
  int visits[2][2] = {{0, 0}, {0, 0}};  // [mesh, box][face, edge or vertex]
  double worst_rate = 0, worst_gamma = 0;
  int beyond_base = 0;  // samples whose G v error exceeds 1e-8 (truncation-limited)
  for (int trial = 0; trial < 300; ++trial) {
    Eigen::VectorXd q = model->InitialPositions(), v;
    RandomizeSurfaceAndBody(rng, 0.25, 0.1, &q, &v);
    Eigen::VectorXd gamma;
    Eigen::MatrixXd G;
    system->ConstraintGamma(0, q, v, rows, &gamma);
    system->ConstraintJacobian(0, q, rows, &G);
    const Eigen::VectorXd rate = G * v;
    constexpr double kEps = 1e-4;
    std::vector<Eigen::VectorXd> shifted;
    Eigen::VectorXd g0(m);
    contacts->Values(0, q, rows, g0);
    // First and second central differences of g at ε and ε/2, Richardson-extrapolated.
    const auto differences = [&](double eps) {
      Eigen::VectorXd q_plus, q_minus, g_plus(m), g_minus(m);
      system->IntegratePosition(q, v, eps, &q_plus);
      system->IntegratePosition(q, v, -eps, &q_minus);
      shifted.push_back(q_plus);
      shifted.push_back(q_minus);
      contacts->Values(0, q_plus, rows, g_plus);
      contacts->Values(0, q_minus, rows, g_minus);
      return std::make_pair(Eigen::VectorXd((g_plus - g_minus) / (2 * eps)),
                            Eigen::VectorXd((g_plus - 2 * g0 + g_minus) / (eps * eps)));
    };
    const auto [d1_half, d2_half] = differences(kEps / 2);
    const auto [d1, d2] = differences(kEps);
    const Eigen::VectorXd fd_rate = (4 * d1_half - d1) / 3;
    const Eigen::VectorXd fd_gamma = (4 * d2_half - d2) / 3;
    for (int i = 0; i < m; ++i) {
      const int r = region(q, i);
      if (r < 0) continue;
      bool same = true;
      for (const Eigen::VectorXd& qs : shifted) same = same && region(qs, i) == r;
      if (!same) continue;
      // The cylinder standing on an end (n ∥ e): the rim gap is not differentiable.
      const PairDistance d = contacts->Evaluate(q, i);
      if (i == 1 || i == 2 || i == 5 || i == 6) {
        const Vector3d e = pose(q, 1).linear().col(2);
        if (std::abs(d.normal.dot(e)) > 0.95) continue;
      }
      ++visits[i <= 2 ? 0 : 1][r % 2];
      const double err_rate = std::abs(fd_rate[i] - rate[i]) / (1 + std::abs(rate[i]));
      const double err_gamma = std::abs(fd_gamma[i] - gamma[i]) / (1 + std::abs(gamma[i]));
      worst_rate = std::max(worst_rate, err_rate);
      worst_gamma = std::max(worst_gamma, err_gamma);
      // First difference: Richardson truncation ~ ε⁴ g⁽⁵⁾, round-off 1e-16/ε = 1e-12. Beside
      // an edge or a vertex close to the centre the curvature of g reaches ~1/δ³ and the
      // truncation grows: it is bounded by the change between the two levels, |D(ε) − D(ε/2)|
      // (the ε² term, ×(εk)² ≲ 1e-2 larger than the ε⁴ remainder at every pose here), hence
      // the second term. A missing normal-turn term is an O(|w| |v|) ~ 1 error.
      const double rate_tol = 1e-8 + 1e-2 * std::abs(d1[i] - d1_half[i]) / (1 + std::abs(rate[i]));
      EXPECT_LT(err_rate, rate_tol) << contacts->row_info(i).name << " trial " << trial;
      if (err_rate > 1e-8) ++beyond_base;
      // Second difference: round-off 1e-16 / ε² = 1e-8 (×5 from the extrapolation), truncation
      // as above; γ itself comes from the difference of G v at ε ~ 6e-6 (DifferenceGamma,
      // error ~1e-10 relative): 1e-6 is a ×20 margin over the round-off.
      const double gamma_tol =
          1e-6 + 1e-2 * std::abs(d2[i] - d2_half[i]) / (1 + std::abs(gamma[i]));
      EXPECT_LT(err_gamma, gamma_tol) << contacts->row_info(i).name << " trial " << trial
                                      << ": gamma " << gamma[i] << ", difference " << fd_gamma[i];
    }
  }
  for (const auto& counts : visits) {
    EXPECT_GE(counts[0], 30);  // centres over a face
    EXPECT_GE(counts[1], 30);  // beside an edge or a vertex
  }
  std::printf(
      "support / rim rows vs differences of the gap: G v worst %.2e (%d samples above 1e-8), "
      "gamma worst %.2e (mesh rows over a face %d, beside an edge or vertex %d; box rows %d, "
      "%d)\n",
      worst_rate, beyond_base, worst_gamma, visits[0][0], visits[0][1], visits[1][0], visits[1][1]);
}

}  // namespace
}  // namespace saltus::contact
