// Issue 22 §1: unilateral contacts at nodes of spatial flexible bodies (contact/spatial_contacts.h,
// "Contacts at nodes"). A sphere at a node of a soft free–free beam touches a fixed plane, a plane
// of a moving rigid link, a sphere and a box of the link; the normal rows' G agrees with central
// differences of g along every velocity direction (the elastic columns included), the plane row
// equals the closed form n·[I, −R[ū]×, R B], the tangential rows are the slip of the material
// points at the witness points, and γ of every row (normal, tangential, rolling) agrees with
// Richardson-extrapolated differences of G v along q ⊕ t v. Bad pairs are refused by name.
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

// One pair of every path with a node: plane–sphere (fixed plane, with friction and rolling
// resistance), moving plane–sphere, sphere–sphere with the node on side a, and box–sphere (the
// manifold path, γ by differences).
std::vector<SpatialContactPair> NodePairs() {
  std::vector<SpatialContactPair> pairs(4);
  pairs[0].name = "floor_tip";
  pairs[0].body_a = engine::kGround;
  pairs[0].shape_a = Shape::Plane(Vector3d(0.1, -0.2, 1.0), -0.05);
  pairs[0].body_b = 1;
  pairs[0].shape_b = Shape::Sphere(0.02);
  pairs[0].node_b = 3;
  pairs[0].friction = 0.4;
  pairs[0].rolling_friction = 0.01;
  pairs[1].name = "wall_root";
  pairs[1].body_a = 0;
  pairs[1].shape_a = Shape::Plane(Vector3d(0.3, 1.0, -0.2), 0.02, Pose(Vector3d(0.05, 0, 0.1)));
  pairs[1].body_b = 1;
  pairs[1].shape_b = Shape::Sphere(0.03);
  pairs[1].node_b = 0;
  pairs[1].friction = 0.5;
  pairs[2].name = "node_ball";
  pairs[2].body_a = 1;
  pairs[2].shape_a = Shape::Sphere(0.04);
  pairs[2].node_a = 1;
  pairs[2].body_b = 0;
  pairs[2].shape_b = Shape::Sphere(0.1, Pose(Vector3d(0.1, -0.05, 0.02)));
  pairs[2].friction = 0.3;
  pairs[3].name = "box_node";
  pairs[3].body_a = 0;
  pairs[3].shape_a = Shape::Box(Vector3d(0.2, 0.1, 0.15));
  pairs[3].body_b = 1;
  pairs[3].shape_b = Shape::Sphere(0.05);
  pairs[3].node_b = 2;
  pairs[3].friction = 0.2;
  return pairs;
}

// The beam's frame tilted by ≲ 0.4 rad, such that its nodes 1 and 2 lie within ~0.5 m of the link
// (its nodes are 2/3 m apart); every modal amplitude deflected and moving.
void RandomState(std::mt19937& rng, VectorXd* q, VectorXd* v) {
  testing::RandomLinkAndBeamState(rng, Eigen::Vector4d(0.2, 0.2, 0.2, 0.2), q, v);
}

struct Fixture : testing::LinkAndBeamContacts {
  Fixture() : LinkAndBeamContacts(NodePairs()) {}
};

TEST(SpatialNodeContacts, NormalRowsMatchDifferencesOfTheGapIncludingTheElasticColumns) {
  Fixture f;
  std::mt19937 rng(11);
  double largest_elastic = 0.0;
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    largest_elastic =
        std::max(largest_elastic, testing::ExpectNormalRowsMatchGapDifferences(f, q, draw));
  }
  // The elastic columns carry the beam's flexibility (mode shapes of ~0.6 m/√kg at the nodes).
  EXPECT_GT(largest_elastic, 0.1);
}

TEST(SpatialNodeContacts, PlaneRowIsTheClosedFormOfTheNode) {
  // G = n·[I, −R[ū]×, R B] on (ṙ, ω, η̇) of the beam (ω in the body frame), nothing on the link.
  Fixture f;
  std::mt19937 rng(5);
  VectorXd q, v;
  RandomState(rng, &q, &v);
  Eigen::MatrixXd G;
  f.system->ConstraintJacobian(0.0, q, std::vector<int>{f.rows[0]}, &G);
  const engine::SpatialFlexibleBeam& beam = *f.model->beam(1);
  const engine::SpatialBeamMotion node =
      beam.Motion(beam.PointAt(beam.NodeX(3)), q.segment(14, 6), VectorXd());
  const Matrix3d R = engine::QuaternionToRotation(q.segment<4>(10));
  const Vector3d n = Vector3d(0.1, -0.2, 1.0).normalized();
  Eigen::RowVectorXd expected = Eigen::RowVectorXd::Zero(18);
  expected.segment<3>(6) = n.transpose();
  expected.segment<3>(9) = -n.transpose() * R * engine::Skew(node.u);
  expected.segment<6>(12) = n.transpose() * R * node.B;
  // Round-off of products of O(1) numbers.
  EXPECT_LT((G.row(0) - expected).cwiseAbs().maxCoeff(), 1e-14);
  // The gap: n·p − offset − ρ with p = r + R ū.
  VectorXd g;
  f.system->ConstraintValues(0.0, q, std::vector<int>{f.rows[0]}, &g);
  const Vector3d p = q.segment<3>(7) + R * node.u;
  EXPECT_NEAR(g[0], n.dot(p) + 0.05 / Vector3d(0.1, -0.2, 1.0).norm() - 0.02, 1e-15);
}

TEST(SpatialNodeContacts, TangentialRowsAreTheSlipOfTheMaterialPoints) {
  // The material points of the node spheres are those of the node's section.
  Fixture f;
  std::mt19937 rng(3);
  const auto node_x = [&](int p, int side) {
    const SpatialContactPair& pair = f.contacts->pairs()[static_cast<std::size_t>(p)];
    const int node = side == 0 ? pair.node_a : pair.node_b;
    return node >= 0 ? f.model->beam(1)->NodeX(node) : 0.0;
  };
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    testing::ExpectTangentialRowsAreTheSlip(f, q, v, draw, node_x);
  }
}

TEST(SpatialNodeContacts, RollingRowsAreTheRelativeTurnOfTheSections) {
  // The rolling rows of floor_tip (node 3 on side b, the ground on a): G v = u·Ω_b^w with Ω_b^w
  // the world angular velocity of the node's section, from central differences of its axes
  // A = R Λ along q ⊕ h v: [Ω]× = (A(q ⊕ hv) − A(q ⊕ −hv)) Aᵀ/(2h) (h = 1e-6; error ~1e-10).
  // With every mode moving the section turns against the frame (the R E η̇ columns).
  Fixture f;
  std::mt19937 rng(13);
  const engine::SpatialFlexibleBeam& beam = *f.model->beam(1);
  const auto axes = [&](const VectorXd& q) {
    return Matrix3d(engine::QuaternionToRotation(q.segment<4>(10)) *
                    beam.Section(beam.PointAt(beam.NodeX(3)), q.segment(14, 6), VectorXd()).turn);
  };
  double largest_turn = 0.0;
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    const double h = 1e-6;
    VectorXd qp, qm;
    f.system->IntegratePosition(q, v, h, &qp);
    f.system->IntegratePosition(q, v, -h, &qm);
    const Matrix3d W = (axes(qp) - axes(qm)) * axes(q).transpose() / (2 * h);
    const Vector3d omega(W(2, 1), W(0, 2), W(1, 0));
    const Vector3d frame_omega = engine::QuaternionToRotation(q.segment<4>(10)) * v.segment<3>(9);
    largest_turn = std::max(largest_turn, (omega - frame_omega).norm());
    for (int r = f.contacts->first_resistance_row(); r < f.contacts->num_rows(); ++r) {
      if (f.contacts->RowPair(r) != 0) continue;
      Eigen::MatrixXd G;
      f.system->ConstraintJacobian(0.0, q, std::vector<int>{f.rows[static_cast<std::size_t>(r)]},
                                   &G);
      const auto [t1, t2] = f.contacts->Tangents(q, r);
      const Vector3d n = f.contacts->Evaluate(q, r).normal;
      const std::string& name = f.contacts->row_info(r).name;  // <row>.r1, .r2 or .s
      const char axis = name.back();
      const Vector3d u = axis == '1' ? t1 : axis == '2' ? t2 : n;
      EXPECT_NEAR(G.row(0).dot(v), u.dot(omega), 1e-7 * (1.0 + omega.norm()))
          << f.contacts->row_info(r).name << " draw " << draw;
    }
  }
  EXPECT_GT(largest_turn, 0.1);
}

TEST(SpatialNodeContacts, GammaOfEveryRowMatchesDifferencesOfGv) {
  // γ against d/dε [G(q ⊕ ε v) v] (Richardson, spatial_row_checks.h): the node's Coriolis and
  // foreshortening-rate terms in the normal, tangential and rolling rows.
  Fixture f;
  std::mt19937 rng(9);
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    // Tangential and rolling rows at nodes: γ by differences (the section's turn).
    testing::ExpectGammaMatchesDifferences(f, q, v, draw, [&](int r) {
      return r >= f.contacts->num_normal_rows() ||
             !f.contacts->HasAnalyticGamma(f.contacts->NormalRowOf(r));
    });
  }
}

TEST(SpatialNodeContacts, BadNodesAreRefusedNamingThePair) {
  const auto model = LinkAndBeam();
  const auto refused = [&](const SpatialContactPair& pair, const std::string& what) {
    testing::ExpectRefused(model, pair, what);
  };

  SpatialContactPair pair;
  pair.name = "p";
  pair.body_b = 1;
  pair.shape_b = Shape::Sphere(0.02);
  pair.node_b = 4;
  refused(pair, "node_b 4 is not a node of the beam (0..3)");
  pair.node_b = -3;  // (−2 is kAlongCentreline)
  refused(pair, "node_b -3 is not a node");
  pair.node_b = 1;
  pair.shape_b = Shape::Box(Vector3d(0.1, 0.1, 0.1));
  refused(pair, "must be a sphere centred on the node");
  pair.shape_b = Shape::Sphere(0.02, Pose(Vector3d(0.1, 0, 0)));
  refused(pair, "must be a sphere centred on the node");
  pair.shape_b = Shape::Sphere(0.02);
  pair.body_b = 0;  // the rigid link
  refused(pair, "node_b needs a flexible body_b");
  pair.body_b = 1;
  pair.node_a = 0;  // side a is the ground
  refused(pair, "node_a needs a flexible body_a");
  pair.node_a = -1;
  EXPECT_NO_THROW(SpatialContacts::CheckPair(*model, pair));
}

}  // namespace
}  // namespace saltus::contact
