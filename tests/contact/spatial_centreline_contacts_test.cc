// Issue 22 §1: contacts between nodes of spatial flexible bodies (contact/spatial_contacts.h,
// "Contacts along the centreline"). The tube swept by a sphere along the deformed centreline of
// a soft free–free beam touches a fixed plane (with friction), a sphere of a moving rigid link
// (with friction) and a fixed sphere, at the material point X* nearest to the partner, found at
// every evaluation. Checked: the normal rows' G against central differences of g (which move X*),
// the closed form of a straight beam (X* the projection of the centre on the axis, the gap its
// distance to the axis, G = n·[I, −R[ū*]×, R B(X*)]), the tangential rows against the slip of the
// material points at X*, and γ of every row against Richardson-extrapolated differences of G v
// (the term −ḟ_X²/f_XX of X* moving along the beam included). Bad pairs are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/spatial_contacts.h"
#include "contact_test_shapes.h"
#include "engine/flexible_beam_spatial.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "flexible_contact_checks.h"
#include "spatial_row_checks.h"

namespace saltus::contact {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;
using testing::LinkAndBeam;
using testing::Pose;

const Vector3d kFloorNormal = Vector3d(0.02, -0.01, 1.0);

// A fixed floor under the beam (friction and rolling resistance), a sphere of the link beside the
// beam's middle (friction; the centreline on side a), and a fixed sphere above the beam.
std::vector<SpatialContactPair> CentrelinePairs() {
  std::vector<SpatialContactPair> pairs(3);
  pairs[0].name = "floor_beam";
  pairs[0].body_a = engine::kGround;
  pairs[0].shape_a = Shape::Plane(kFloorNormal, -0.05);
  pairs[0].body_b = 1;
  pairs[0].shape_b = Shape::Sphere(0.02);
  pairs[0].node_b = kAlongCentreline;
  pairs[0].friction = 0.4;
  pairs[0].rolling_friction = 0.01;
  pairs[1].name = "beam_ball";
  pairs[1].body_a = 1;
  pairs[1].shape_a = Shape::Sphere(0.03);
  pairs[1].node_a = kAlongCentreline;
  pairs[1].body_b = 0;
  pairs[1].shape_b = Shape::Sphere(0.1, Pose(Vector3d(0.1, -0.05, 0.02)));
  pairs[1].friction = 0.3;
  pairs[2].name = "post_beam";
  pairs[2].body_a = engine::kGround;
  pairs[2].shape_a = Shape::Sphere(0.05, Pose(Vector3d(0.4, 0.1, 0.6)));
  pairs[2].body_b = 1;
  pairs[2].shape_b = Shape::Sphere(0.03);
  pairs[2].node_b = kAlongCentreline;
  return pairs;
}

// The beam's frame turned about z by ≲ 0.6 rad and tilted by ≲ 0.02 rad, so that the lowest
// point along the floor's normal is an end or, where the modes bend the beam downwards, between
// nodes; every modal amplitude deflected (up to 3 cm at the nodes) and moving.
void RandomState(std::mt19937& rng, VectorXd* q, VectorXd* v) {
  testing::RandomLinkAndBeamState(rng, Eigen::Vector4d(0.0, 0.01, 0.01, 0.3), q, v);
}

struct Fixture : testing::LinkAndBeamContacts {
  Fixture() : LinkAndBeamContacts(CentrelinePairs()) {}
  // X* of the centreline side of pair `p` at q, from the beam's own search (independent of the
  // contact block's bookkeeping).
  double CentrelineX(const VectorXd& q, int p) const {
    const engine::SpatialFlexibleBeam& beam = *model->beam(1);
    const Matrix3d R = engine::QuaternionToRotation(q.segment<4>(10));
    const VectorXd eta = q.segment(14, 6);
    if (p == 0) return beam.LowestX(R.transpose() * kFloorNormal.normalized(), eta);
    const Vector3d c =
        p == 1 ? Vector3d(q.segment<3>(0) + engine::QuaternionToRotation(q.segment<4>(3)) *
                                                Vector3d(0.1, -0.05, 0.02))
               : Vector3d(0.4, 0.1, 0.6);
    return beam.NearestX(R.transpose() * (c - q.segment<3>(7)), eta);
  }
};

TEST(SpatialCentrelineContacts, NormalRowsMatchDifferencesOfTheGap) {
  // g = f(X*(q), q): its central differences along q ⊕ h e_i move X* (the search runs at each
  // q); G is the row of the material point X* (the gap is stationary in X*).
  Fixture f;
  std::mt19937 rng(11);
  ASSERT_EQ(f.contacts->num_normal_rows(), 3);
  double largest_elastic = 0.0;
  int interior = 0;
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    for (int p = 0; p < 3; ++p) {
      const double X = f.CentrelineX(q, p);
      if (X > 0.0 && X < 2.0 && std::abs(X - std::round(1.5 * X) / 1.5) > 1e-3) ++interior;
    }
    largest_elastic =
        std::max(largest_elastic, testing::ExpectNormalRowsMatchGapDifferences(f, q, draw));
  }
  EXPECT_GT(largest_elastic, 0.1);
  // Most contact points lie between nodes (not at an end or a node): the test is about them.
  EXPECT_GT(interior, 40);
}

TEST(SpatialCentrelineContacts, StraightBeamHasTheClosedForm) {
  // η = 0: the centreline is the segment r + R (X, 0, 0). A sphere of centre c touches it at
  // X* = e_x·Rᵀ(c − r) (inside [0, L]), with the gap ‖(I − e e ᵀ)(c − p)‖ − ρ_a − ρ_b, and the
  // row n·[I, −R[ū*]×, R B(X*)] on the beam with ū* = (X*, 0, 0) and B(X*) the modal rows
  // (s_u, s_v, s_w) at X*: the shape functions between the nodes.
  Fixture f;
  std::mt19937 rng(5);
  const engine::SpatialFlexibleBeam& beam = *f.model->beam(1);
  for (int draw = 0; draw < 10; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    q.tail(6).setZero();
    const Matrix3d R = engine::QuaternionToRotation(q.segment<4>(10));
    const Vector3d r = q.segment<3>(7);
    const Vector3d c(0.4, 0.1, 0.6);  // the fixed sphere of pair 2
    const double X = R.col(0).dot(c - r);
    ASSERT_GT(X, 0.0);
    ASSERT_LT(X, 2.0);
    EXPECT_NEAR(f.CentrelineX(q, 2), X, 1e-13);
    const Vector3d p = r + X * R.col(0);
    const Vector3d n = (p - c).normalized();  // from the post (side a) to the beam
    VectorXd g;
    f.system->ConstraintValues(0.0, q, std::vector<int>{f.rows[2]}, &g);
    EXPECT_NEAR(g[0], (p - c).norm() - 0.05 - 0.03, 1e-14);
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0.0, q, std::vector<int>{f.rows[2]}, &G);
    const engine::SpatialBeamPoint point = beam.PointAt(X);
    Eigen::Matrix<double, 3, 6> B;
    B << point.su, point.sv, point.sw;
    Eigen::RowVectorXd expected = Eigen::RowVectorXd::Zero(18);
    expected.segment<3>(6) = n.transpose();
    expected.segment<3>(9) = -n.transpose() * R * engine::Skew(Vector3d(X, 0.0, 0.0));
    expected.segment<6>(12) = n.transpose() * R * B;
    // Round-off of products of O(1) numbers and X* to 1e-13.
    EXPECT_LT((G.row(0) - expected).cwiseAbs().maxCoeff(), 1e-12) << "draw " << draw;
  }
}

TEST(SpatialCentrelineContacts, TangentialRowsAreTheSlipOfTheMaterialPoints) {
  // The beam's material point is that of the section at X* (held fixed while differencing).
  Fixture f;
  std::mt19937 rng(3);
  ASSERT_EQ(f.contacts->first_resistance_row() - f.contacts->num_normal_rows(), 4);
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    testing::ExpectTangentialRowsAreTheSlip(f, q, v, draw,
                                            [&](int p, int) { return f.CentrelineX(q, p); });
  }
}

TEST(SpatialCentrelineContacts, GammaOfEveryRowMatchesDifferencesOfGv) {
  // γ against d/dε [G(q ⊕ ε v) v] (Richardson, spatial_row_checks.h): the normal rows in closed
  // form with the term of X* moving along the beam, the tangential and rolling rows by their own
  // central difference (tolerance of the difference γ).
  Fixture f;
  std::mt19937 rng(9);
  int moving = 0;
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    testing::ExpectGammaMatchesDifferences(
        f, q, v, draw, [&](int r) { return r >= f.contacts->num_normal_rows(); });
    // The sphere rows' X* is interior in every draw: the moving-point term is exercised.
    for (int p = 1; p < 3; ++p) {
      const double X = f.CentrelineX(q, p);
      moving += X > 0.0 && X < 2.0;
    }
  }
  EXPECT_EQ(moving, 40);
}

TEST(SpatialCentrelineContacts, BadPairsAreRefusedNamingThePair) {
  const auto model = LinkAndBeam();
  const auto refused = [&](const SpatialContactPair& pair, const std::string& what) {
    testing::ExpectRefused(model, pair, what);
  };

  SpatialContactPair pair;
  pair.name = "p";
  pair.body_b = 1;
  pair.shape_b = Shape::Sphere(0.02);
  pair.node_b = kAlongCentreline;
  pair.shape_a = Shape::Box(Vector3d(0.1, 0.1, 0.1));
  refused(pair, "touches a sphere or a plane");
  pair.shape_a = Shape::Sphere(0.1);
  pair.body_a = 0;
  pair.shape_b = Shape::Capsule(0.02, 0.1);
  refused(pair, "must be a sphere with the identity pose");
  pair.shape_b = Shape::Sphere(0.02, Pose(Vector3d(0.1, 0, 0)));
  refused(pair, "must be a sphere with the identity pose");
  pair.shape_b = Shape::Sphere(0.02);
  pair.body_b = 0;
  pair.body_a = engine::kGround;
  refused(pair, "node_b needs a flexible body_b");
  // A node on the partner's side needs a flexible body there too.
  pair.body_b = 1;
  pair.body_a = 0;
  pair.node_a = 0;
  refused(pair, "node_a needs a flexible body_a");
  pair.node_a = -1;
  EXPECT_NO_THROW(SpatialContacts::CheckPair(*model, pair));
  pair.body_a = engine::kGround;
  pair.shape_a = Shape::Plane(Vector3d::UnitZ(), 0.0);
  EXPECT_NO_THROW(SpatialContacts::CheckPair(*model, pair));
}

}  // namespace
}  // namespace saltus::contact
