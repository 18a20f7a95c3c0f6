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
#include "spatial_row_checks.h"

namespace saltus::contact {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;
using testing::Pose;

// The soft free–free beam of the spatial tumbling test (L = 2 m, E = 7e7 Pa, 3 elements, 6
// modes, I_xz = 2.25 I_xy): body 1; a rigid link: body 0.
std::shared_ptr<const engine::SpatialModel> LinkAndBeam() {
  engine::BeamProperties p;
  p.length = 2.0;
  p.area = 4e-4;
  p.second_moment = 2e-7;
  p.density = 3000.0;
  p.youngs_modulus = 7e7;
  p.elements = 3;
  p.modes = 6;
  p.reference = engine::BeamReference::kFree;
  engine::SpatialModelBuilder builder;
  engine::SpatialBody link;
  link.name = "link";
  link.mass = 0.7;
  link.inertia = Vector3d(0.02, 0.03, 0.04).asDiagonal();
  builder.AddBody(link);
  engine::SpatialBody beam;
  beam.name = "beam";
  beam.beam = p;
  beam.second_moment_xz = 4.5e-7;
  builder.AddBody(beam);
  return builder.Build();
}

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

// The link near the origin; the beam's frame such that its nodes 1 and 2 lie within ~0.5 m of
// the link (its nodes are 2/3 m apart); every modal amplitude deflected and moving.
void RandomState(std::mt19937& rng, VectorXd* q, VectorXd* v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  q->resize(7 + 7 + 6);
  q->segment<3>(0) = 0.05 * Vector3d(u(rng), u(rng), u(rng));
  q->segment<4>(3) =
      Eigen::Vector4d(1.0 + 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)).normalized();
  q->segment<3>(7) = Vector3d(-1.0 + 0.2 * u(rng), 0.3 * u(rng), 0.35 + 0.1 * u(rng));
  q->segment<4>(10) =
      Eigen::Vector4d(1.0 + 0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng)).normalized();
  for (int i = 0; i < 6; ++i) (*q)[14 + i] = 0.05 * u(rng);
  v->resize(6 + 6 + 6);
  for (int k = 0; k < v->size(); ++k) (*v)[k] = 2.0 * u(rng);
}

struct Fixture {
  std::shared_ptr<const engine::SpatialModel> model = LinkAndBeam();
  std::shared_ptr<const SpatialContacts> contacts =
      std::make_shared<SpatialContacts>(model, NodePairs());
  std::shared_ptr<engine::SpatialMultibodySystem> system =
      std::make_shared<engine::SpatialMultibodySystem>(model);
  std::vector<int> rows;  // global rows of the contact block
  Fixture() {
    const int first = system->num_constraints();
    system->AddConstraintBlock(contacts);
    for (int r = 0; r < contacts->num_rows(); ++r) rows.push_back(first + r);
  }
};

// World position of the material point of `body` that is at x (world) at q, carried to q_new:
// a point of the node-k sphere (node ≥ 0) moves with the node and turns with the frame, a point
// of a rigid body with the body; the ground's stay.
Vector3d Carried(const engine::SpatialModel& model, int body, int node, const VectorXd& q,
                 const VectorXd& q_new, const Vector3d& x) {
  if (body == engine::kGround) return x;
  const auto origin = [&](const VectorXd& qq) {
    const int q0 = model.QOffset(body);
    Vector3d o = qq.segment<3>(q0);
    if (node >= 0) {
      const engine::SpatialFlexibleBeam& beam = *model.beam(body);
      const engine::SpatialBeamPoint point = beam.PointAt(beam.NodeX(node));
      o += engine::QuaternionToRotation(qq.segment<4>(q0 + 3)) *
           beam.Motion(point, qq.segment(q0 + 7, beam.num_modes()), VectorXd()).u;
    }
    return o;
  };
  const auto R = [&](const VectorXd& qq) {
    return engine::QuaternionToRotation(qq.segment<4>(model.QOffset(body) + 3));
  };
  const Vector3d s = R(q).transpose() * (x - origin(q));
  return origin(q_new) + R(q_new) * s;
}

TEST(SpatialNodeContacts, NormalRowsMatchDifferencesOfTheGapIncludingTheElasticColumns) {
  Fixture f;
  std::mt19937 rng(11);
  const int nv = f.model->num_v();
  const int normal = f.contacts->num_normal_rows();
  std::vector<int> normal_rows(f.rows.begin(), f.rows.begin() + normal);
  double largest_elastic = 0.0;
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    Eigen::MatrixXd G;
    f.system->ConstraintJacobian(0.0, q, normal_rows, &G);
    // Central differences along q ⊕ h e_i; truncation ~h² g''' ≲ 1e-10 and round-off ~1e-16/h
    // ≈ 1e-10 at h = 1e-6: 1e-7 leaves a margin of 1000.
    const double h = 1e-6;
    for (int i = 0; i < nv; ++i) {
      const VectorXd e = VectorXd::Unit(nv, i);
      VectorXd qp, qm, gp, gm;
      f.system->IntegratePosition(q, e, h, &qp);
      f.system->IntegratePosition(q, e, -h, &qm);
      f.system->ConstraintValues(0.0, qp, normal_rows, &gp);
      f.system->ConstraintValues(0.0, qm, normal_rows, &gm);
      const VectorXd fd = (gp - gm) / (2 * h);
      for (int r = 0; r < normal; ++r) {
        EXPECT_NEAR(G(r, i), fd[r], 1e-7 * (1.0 + std::abs(fd[r])))
            << f.contacts->row_info(r).name << " column " << i << " draw " << draw;
      }
    }
    largest_elastic = std::max(largest_elastic, G.rightCols(6).cwiseAbs().maxCoeff());
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
  // G_T v = t·(ẋ_b − ẋ_a) with x_a, x_b the material points at the witness points: central
  // differences of their positions along q ⊕ h v (h = 1e-6: error ≲ 1e-10 · |v|³).
  Fixture f;
  std::mt19937 rng(3);
  const int normal = f.contacts->num_normal_rows();
  const int first_resistance = f.contacts->first_resistance_row();
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    for (int r = normal; r < first_resistance; ++r) {
      Eigen::MatrixXd G;
      f.system->ConstraintJacobian(0.0, q, std::vector<int>{f.rows[static_cast<std::size_t>(r)]},
                                   &G);
      const PairDistance d = f.contacts->Evaluate(q, r);
      const auto [t1, t2] = f.contacts->Tangents(q, r);
      const Vector3d t = (r - normal) % 2 == 0 ? t1 : t2;
      const SpatialContactPair& pair =
          f.contacts->pairs()[static_cast<std::size_t>(f.contacts->RowPair(r))];
      const double h = 1e-6;
      VectorXd qp, qm;
      f.system->IntegratePosition(q, v, h, &qp);
      f.system->IntegratePosition(q, v, -h, &qm);
      const auto slip = [&](const VectorXd& qq) {
        return t.dot(Carried(*f.model, pair.body_b, pair.node_b, q, qq, d.point_b) -
                     Carried(*f.model, pair.body_a, pair.node_a, q, qq, d.point_a));
      };
      const double expected = (slip(qp) - slip(qm)) / (2 * h);
      EXPECT_NEAR(G.row(0).dot(v), expected, 1e-7 * (1.0 + std::abs(expected)))
          << f.contacts->row_info(r).name << " draw " << draw;
    }
  }
}

TEST(SpatialNodeContacts, GammaOfEveryRowMatchesDifferencesOfGv) {
  // γ against d/dε [G(q ⊕ ε v) v] (Richardson, spatial_row_checks.h): the node's Coriolis and
  // foreshortening-rate terms in the normal, tangential and rolling rows.
  Fixture f;
  std::mt19937 rng(9);
  for (int draw = 0; draw < 20; ++draw) {
    VectorXd q, v;
    RandomState(rng, &q, &v);
    const testing::GammaReference ref(*f.system, q, v, f.rows, 1e-3);
    for (std::size_t k = 0; k < f.rows.size(); ++k) {
      const int r = static_cast<int>(k);
      const auto i = static_cast<Eigen::Index>(k);
      const bool difference = !f.contacts->HasAnalyticGamma(f.contacts->NormalRowOf(r));
      EXPECT_LE(ref.Error(i), ref.Tolerance(i, difference))
          << f.contacts->row_info(r).name << " draw " << draw << " gamma " << ref.gamma[i]
          << " reference " << ref.r2[i];
    }
  }
}

TEST(SpatialNodeContacts, BadNodesAreRefusedNamingThePair) {
  const auto model = LinkAndBeam();
  const auto refused = [&](SpatialContactPair pair, const std::string& what) {
    try {
      SpatialContacts::CheckPair(*model, pair);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("contact pair 'p'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    EXPECT_THROW(SpatialContacts(model, {pair}), std::invalid_argument);
  };
  SpatialContactPair pair;
  pair.name = "p";
  pair.body_b = 1;
  pair.shape_b = Shape::Sphere(0.02);
  pair.node_b = 4;
  refused(pair, "node_b 4 is not a node of the beam (0..3)");
  pair.node_b = -2;
  refused(pair, "node_b -2 is not a node");
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
