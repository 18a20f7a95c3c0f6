// Flexible bodies in the planar multibody model (engine/planar_model.h with engine/
// flexible_beam.h): node kinematics and joint rows at nodes against finite differences, the
// static cantilever through the model's forces, energy conservation of a free flexible body,
// and the spin-up of Kane, Ryan & Banerjee (1987) with and without geometric stiffening.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <numbers>

#include "contact/planar_contacts.h"
#include "engine/flexible_beam.h"
#include "engine/planar_model.h"
#include "events/simulation.h"
#include "flexible_test_models.h"
#include "planar_test_models.h"

namespace saltus::engine {
namespace {

using testing::AllRows;
using testing::FlexibleBody;
using testing::GammaByDifference;
using testing::JacobianByDifference;

// A state with every coordinate moving: deflections of a few per cent of the beam length.
void RandomState(const PlanarModel& model, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  const int n = model.num_coordinates();
  *q = 0.3 * Eigen::VectorXd::LinSpaced(n, -1.0, 1.3).array().sin();
  *v = 0.7 * Eigen::VectorXd::LinSpaced(n, 0.4, 2.9).array().cos();
}

// ∂f/∂q of a scalar function of the coordinates by central differences, h = 1e-6 (truncation
// ~1e-12 f‴, round-off ~1e-10 f for f of order 1).
template <class Function>
Eigen::VectorXd CentralGradient(Function f, const Eigen::VectorXd& q) {
  Eigen::VectorXd grad(q.size());
  for (Eigen::Index i = 0; i < q.size(); ++i) {
    Eigen::VectorXd qp = q, qm = q;
    qp(i) += 1e-6;
    qm(i) -= 1e-6;
    grad(i) = (f(qp) - f(qm)) / 2e-6;
  }
  return grad;
}

TEST(PlanarFlexible, CoordinatesNamesAndMassMatrixLayout) {
  PlanarModelBuilder builder;
  builder.AddBody(testing::Body("crank", 1.0, 0.1));
  const int rod =
      builder.AddBody(FlexibleBody("rod", testing::KaneBeam(4, 3, BeamReference::kPinned, 2.0)));
  builder.AddBody(testing::Body("slider", 2.0, 0.2));
  auto model = builder.Build();
  EXPECT_EQ(model->num_coordinates(), 3 + 6 + 3);
  EXPECT_EQ(model->Offset(rod), 3);
  EXPECT_EQ(model->Offset(2), 9);
  PlanarMultibodySystem system(model);
  EXPECT_FALSE(system.HasConstantMassMatrix());
  EXPECT_EQ(system.PositionName(6), "rod.eta1");
  EXPECT_EQ(system.VelocityName(8), "rod.veta3");
  EXPECT_EQ(system.PositionName(9), "slider.x");
  // The flexible body's mass: ρ A L.
  EXPECT_NEAR(model->bodies()[1].mass, 3000.0 * 4e-4 * 2.0, 1e-12);
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  Eigen::MatrixXd M;
  system.MassMatrix(q, &M);
  // Block diagonal: no coupling between bodies.
  EXPECT_EQ(M.block(0, 3, 3, 9).norm(), 0.0);
  EXPECT_EQ(M.block(3, 9, 6, 3).norm(), 0.0);
  EXPECT_EQ(M(9, 9), 2.0);
}

TEST(PlanarFlexible, NodeVelocityAndAccelerationMatchFiniteDifferences) {
  PlanarModelBuilder builder;
  const int b =
      builder.AddBody(FlexibleBody("beam", testing::KaneBeam(3, 4, BeamReference::kFree, 3.0)));
  auto model = builder.Build();
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  q.tail(4) *= 0.5;  // η ~ 0.1: deflections ~ 0.1/√(ρAL) ≈ 5 cm, foreshortening active
  const double h = 1e-6;
  for (int node = 0; node < 4; ++node) {
    const PlanarPointState p = model->Point(b, node, Eigen::Vector2d::Zero(), q, v);
    const PlanarPointState pp = model->Point(b, node, Eigen::Vector2d::Zero(), q + h * v, v);
    const PlanarPointState pm = model->Point(b, node, Eigen::Vector2d::Zero(), q - h * v, v);
    // ṗ = d/ds p(q + s v); the velocity part of p̈ (v̇ = 0): d/ds ṗ(q + s v, v) =
    // −ω² s_w + a_elastic. Central differences, h = 1e-6: truncation ~1e-12, round-off ~1e-10.
    EXPECT_LT(((pp.p - pm.p) / (2 * h) - p.p_dot).norm(), 1e-8) << "node " << node;
    const Eigen::Vector2d a = -v(2) * v(2) * p.s_w + p.a_elastic;
    EXPECT_LT(((pp.p_dot - pm.p_dot) / (2 * h) - a).norm(), 1e-7) << "node " << node;
    EXPECT_NEAR((pp.angle - pm.angle) / (2 * h), p.angle_rate, 1e-8) << "node " << node;
    // jac_eta = ∂p/∂η.
    for (int j = 0; j < 4; ++j) {
      Eigen::VectorXd qp = q, qm = q;
      qp(3 + j) += h;
      qm(3 + j) -= h;
      const Eigen::Vector2d dp = (model->Point(b, node, Eigen::Vector2d::Zero(), qp, v).p -
                                  model->Point(b, node, Eigen::Vector2d::Zero(), qm, v).p) /
                                 (2 * h);
      EXPECT_LT((dp - p.jac_eta.col(j)).norm(), 1e-8) << "node " << node << " mode " << j;
    }
  }
}

// A rigid link and a flexible beam joined at nodes by every joint type, each in its own model.
TEST(PlanarFlexible, JointRowsAtNodesMatchFiniteDifferences) {
  const PlanarJointType types[] = {PlanarJointType::kRevolute, PlanarJointType::kFixed,
                                   PlanarJointType::kDistance, PlanarJointType::kPrismatic,
                                   PlanarJointType::kPointOnLine};
  for (PlanarJointType type : types) {
    for (bool beam_is_a : {false, true}) {
      PlanarModelBuilder builder;
      PlanarBody link = testing::Body("link", 1.5, 0.2);
      link.q0 << 1.0, 0.5, 0.2;
      const int i_link = builder.AddBody(link);
      const int i_beam = builder.AddBody(
          FlexibleBody("beam", testing::KaneBeam(4, 4, BeamReference::kClamped, 2.0)));
      PlanarJoint joint = testing::Joint("j", type, beam_is_a ? i_beam : i_link,
                                         beam_is_a ? i_link : i_beam, {0.1, -0.2}, {0.1, -0.2});
      (beam_is_a ? joint.point_a : joint.point_b).setZero();
      (beam_is_a ? joint.node_a : joint.node_b) = 3;
      joint.axis_a = Eigen::Vector2d(0.6, 0.8);
      joint.length = 0.7;
      const int j = builder.AddJoint(joint);
      // Drivers on the joints that take one, to cover their rows too.
      if (type == PlanarJointType::kRevolute || type == PlanarJointType::kPrismatic) {
        PlanarDriver driver;
        driver.name = "drive";
        driver.joint = j;
        driver.kind =
            type == PlanarJointType::kRevolute ? DriverKind::kAngle : DriverKind::kDisplacement;
        driver.profile.kind = TimeProfile::Kind::kSine;
        driver.profile.amplitude = 0.3;
        driver.profile.frequency = 2.0;
        builder.AddDriver(driver);
      }
      PlanarMultibodySystem system(builder.Build());
      Eigen::VectorXd q, v;
      RandomState(system.model(), &q, &v);
      const std::vector<int> rows = AllRows(system);
      const double t = 0.37;
      Eigen::MatrixXd G;
      system.ConstraintJacobian(t, q, rows, &G);
      // Central differences with h = 1e-6 on O(1) rows: error ≲ 1e-9.
      const Eigen::MatrixXd G_fd = JacobianByDifference(system, t, q, rows, 1e-6);
      EXPECT_LT((G - G_fd).cwiseAbs().maxCoeff(), 1e-7)
          << "type " << static_cast<int>(type) << " beam_is_a " << beam_is_a << "\n"
          << G << "\n\n"
          << G_fd;
      Eigen::VectorXd gamma;
      system.ConstraintGamma(t, q, v, rows, &gamma);
      const Eigen::VectorXd gamma_fd = GammaByDifference(system, t, q, v, rows, 1e-5);
      EXPECT_LT((gamma - gamma_fd).cwiseAbs().maxCoeff(), 1e-6)
          << "type " << static_cast<int>(type) << " beam_is_a " << beam_is_a << "\n"
          << gamma.transpose() << "\n"
          << gamma_fd.transpose();
      // The one pass of the KKT solve (points shared by G and γ): the same operations, equal to
      // the bit.
      Eigen::MatrixXd G_pair;
      Eigen::VectorXd gamma_pair;
      system.ConstraintJacobianAndGamma(t, q, v, rows, &G_pair, &gamma_pair);
      EXPECT_EQ((G_pair - G).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_EQ((gamma_pair - gamma).cwiseAbs().maxCoeff(), 0.0);
    }
  }
}

// A rigid plate (body 0) and a free 2 m beam of 4 elements and 4 modes (body 1), unconnected:
// the bodies of the contact-row tests.
std::shared_ptr<const PlanarModel> PlateAndFreeBeam() {
  PlanarModelBuilder builder;
  PlanarBody plate = testing::Body("plate", 2.0, 0.3);
  plate.q0 << 0.5, -0.4, 0.1;
  builder.AddBody(plate);
  builder.AddBody(FlexibleBody("beam", testing::KaneBeam(4, 4, BeamReference::kFree, 2.0)));
  return builder.Build();
}

TEST(PlanarFlexible, ContactRowsAtNodesMatchFiniteDifferences) {
  // A point and a disk at beam nodes against a line of a rigid body and a disk of the ground:
  // G (with the elastic columns) and γ (with the node's Coriolis and foreshortening-rate terms)
  // against central differences of g and of G v.
  const auto model = PlateAndFreeBeam();
  const int i_plate = 0, i_beam = 1;
  auto system = std::make_shared<PlanarMultibodySystem>(model);
  contact::PlanarContact point_line;
  point_line.name = "tip";
  point_line.type = contact::PlanarContactType::kPointLine;
  point_line.body_a = i_plate;
  point_line.body_b = i_beam;
  point_line.node_b = 4;
  point_line.normal_a = Eigen::Vector2d(0.3, 1.0);
  contact::PlanarContact disks;
  disks.name = "knob";
  disks.type = contact::PlanarContactType::kDiskDisk;
  disks.body_a = kGround;
  disks.body_b = i_beam;
  disks.node_b = 2;
  disks.point_a = Eigen::Vector2d(3.0, 2.0);
  disks.radius_a = 0.1;
  disks.radius_b = 0.05;
  system->AddConstraintBlock(std::make_shared<const contact::PlanarContacts>(
      model, std::vector<contact::PlanarContact>{point_line, disks}));
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  const std::vector<int> rows = AllRows(*system);
  Eigen::MatrixXd G;
  system->ConstraintJacobian(0.0, q, rows, &G);
  // Central differences with h = 1e-6 on O(1) rows: error ≲ 1e-9.
  EXPECT_LT((G - JacobianByDifference(*system, 0.0, q, rows, 1e-6)).cwiseAbs().maxCoeff(), 1e-7);
  Eigen::VectorXd gamma;
  system->ConstraintGamma(0.0, q, v, rows, &gamma);
  EXPECT_LT((gamma - GammaByDifference(*system, 0.0, q, v, rows, 1e-5)).cwiseAbs().maxCoeff(),
            1e-6);
  // A node of a rigid body is rejected, naming the contact.
  contact::PlanarContact bad = point_line;
  bad.body_b = i_plate;
  bad.body_a = kGround;
  EXPECT_THROW(contact::PlanarContacts(model, {bad}), std::invalid_argument);
}

// The material point of `body` that is at the world point x at q, moved to q2: for a node the
// point is carried by the node's cross-section (centre p_b, angle θ + ψ η), else by the frame.
Eigen::Vector2d CarriedPoint(const PlanarModel& model, int body, int node, const Eigen::Vector2d& x,
                             const Eigen::VectorXd& q, const Eigen::VectorXd& q2) {
  if (body == kGround) return x;
  const PlanarPointState at = model.Point(body, node, Eigen::Vector2d::Zero(), q, {});
  const PlanarPointState to = model.Point(body, node, Eigen::Vector2d::Zero(), q2, {});
  return to.p + Eigen::Rotation2Dd(to.angle - at.angle).toRotationMatrix() * (x - at.p);
}

TEST(PlanarFlexible, FrictionRowsAtNodesAreTheSlipOfTheSectionAndMatchDifferences) {
  // A point, a disk on a line and a disk on a disk, at nodes of a free beam, all with μ = 0.5.
  // The tangential row at a node is the slip of the material point that the node's section
  // carries: G_T v against the central difference of t·(X_B − X_A) along v, and γ_T against
  // central differences of G v (the normal rows' γ as well).
  const auto model = PlateAndFreeBeam();
  const int i_plate = 0, i_beam = 1;
  auto system = std::make_shared<PlanarMultibodySystem>(model);
  std::vector<contact::PlanarContact> contacts(3);
  contacts[0].name = "tip";
  contacts[0].type = contact::PlanarContactType::kPointLine;
  contacts[0].body_a = i_plate;
  contacts[0].node_b = 4;
  contacts[0].normal_a = Eigen::Vector2d(0.3, 1.0);
  contacts[1].name = "roller";
  contacts[1].type = contact::PlanarContactType::kDiskLine;
  contacts[1].body_a = i_plate;
  contacts[1].point_a = Eigen::Vector2d(0.2, -0.1);
  contacts[1].normal_a = Eigen::Vector2d(-0.5, 1.0);
  contacts[1].node_b = 3;
  contacts[1].radius_b = 0.07;
  contacts[2].name = "knob";
  contacts[2].type = contact::PlanarContactType::kDiskDisk;
  contacts[2].body_a = kGround;
  contacts[2].point_a = Eigen::Vector2d(3.0, 2.0);
  contacts[2].radius_a = 0.1;
  contacts[2].node_b = 2;
  contacts[2].radius_b = 0.05;
  for (auto& c : contacts) {
    c.body_b = i_beam;
    c.friction = 0.5;
  }
  auto block = std::make_shared<const contact::PlanarContacts>(model, contacts);
  system->AddConstraintBlock(block);
  ASSERT_EQ(system->num_constraints(), 6);
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  const std::vector<int> rows = AllRows(*system);
  Eigen::MatrixXd G;
  system->ConstraintJacobian(0.0, q, rows, &G);
  const Eigen::VectorXd rate = G * v;
  // The elastic columns of the tangential rows are not zero (the test sees them).
  EXPECT_GT(G.block(3, 6, 3, 4).cwiseAbs().minCoeff(), 1e-3);
  // Slip along v: the material points move on curves of curvature ≲ |ω| + |η̇|-terms ~ 3 over
  // |x − r| ≲ 3: truncation ε² |d³X/ds³|/6 ≈ 1e-10 · 30 ≈ 3e-9 at ε = 1e-5, round-off
  // ε_mach · 3/ε ≈ 1e-10. Tolerance 5e-8.
  const double eps = 1e-5;
  const Eigen::VectorXd qp = q + eps * v, qm = q - eps * v;
  for (int k = 0; k < 3; ++k) {
    const contact::PlanarContact& c = contacts[static_cast<std::size_t>(k)];
    const contact::ContactSite site = block->Site(q, k);
    const Eigen::Vector2d n = site.normal.head<2>();
    const Eigen::Vector2d p_b = model->Point(i_beam, c.node_b, Eigen::Vector2d::Zero(), q, {}).p;
    const Eigen::Vector2d x_b = p_b - c.radius_b * n;
    Eigen::VectorXd g(1);
    block->Values(0.0, q, std::vector<int>{k}, g);
    const Eigen::Vector2d x_a = x_b - g(0) * n;
    const Eigen::Vector2d t(-n.y(), n.x());
    const Eigen::Vector2d slip = (CarriedPoint(*model, i_beam, c.node_b, x_b, q, qp) -
                                  CarriedPoint(*model, i_beam, c.node_b, x_b, q, qm)) -
                                 (CarriedPoint(*model, c.body_a, -1, x_a, q, qp) -
                                  CarriedPoint(*model, c.body_a, -1, x_a, q, qm));
    EXPECT_NEAR(rate(3 + k), t.dot(slip) / (2.0 * eps), 5e-8) << c.name;
  }
  // Normal rows: G against central differences of g (h = 1e-6 on O(1) rows: error ≲ 1e-9).
  const std::vector<int> normal = {0, 1, 2};
  Eigen::MatrixXd G_normal;
  system->ConstraintJacobian(0.0, q, normal, &G_normal);
  EXPECT_LT((G_normal - JacobianByDifference(*system, 0.0, q, normal, 1e-6)).cwiseAbs().maxCoeff(),
            1e-7);
  // γ of every row against central differences of G v, h = 1e-5 (as the frictionless test).
  Eigen::VectorXd gamma;
  system->ConstraintGamma(0.0, q, v, rows, &gamma);
  const Eigen::VectorXd gamma_fd = GammaByDifference(*system, 0.0, q, v, rows, 1e-5);
  EXPECT_LT((gamma - gamma_fd).cwiseAbs().maxCoeff(), 1e-6) << gamma.transpose() << "\n"
                                                            << gamma_fd.transpose();
}

TEST(PlanarFlexible, NodeLoadsDeriveFromTheirPotential) {
  PlanarModelBuilder builder;
  const int b =
      builder.AddBody(FlexibleBody("beam", testing::KaneBeam(4, 3, BeamReference::kFree, 2.0)));
  PlanarLoad load;
  load.name = "tip";
  load.body = b;
  load.node = 4;
  load.force = Eigen::Vector2d(3.0, -5.0);
  load.torque = 2.0;
  builder.AddLoad(load);
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  PlanarMultibodySystem system(builder.Build());
  Eigen::VectorXd q, v, F;
  RandomState(system.model(), &q, &v);
  q.tail(3) *= 0.1;  // η ~ 0.03: elastic energy ~1e3 J (stiff modes), deflections ~1 cm
  v.setZero();
  system.Forces(0.0, q, v, &F);
  const double h = 1e-6, V = system.PotentialEnergy(0.0, q);
  for (int j = 0; j < system.nq(); ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp(j) += h;
    qm(j) -= h;
    const double dV = (system.PotentialEnergy(0.0, qp) - system.PotentialEnergy(0.0, qm)) / (2 * h);
    // F = −∂V/∂q at v = 0 (gravity, elastic and the constant node load are conservative).
    // Central difference: truncation ~h² ≈ 1e-12, round-off ~1e-16 |V| / h.
    EXPECT_NEAR(F(j), -dV, 1e-7 * std::max(1.0, std::abs(dV)) + 1e-15 * std::abs(V) / h)
        << system.PositionName(j) << " (V = " << V << ")";
  }
}

TEST(PlanarFlexible, TorsionalSpringsAtNodesActOnTheSectionsAngles) {
  // A torsional spring-damper on a revolute joint between a link and node 3 of a beam (the node on
  // either side) and on one between two nodes of two beams. The relative angle is that of the
  // sections, θ_rel = (θ_b + ψ_b η_b) − (θ_a + ψ_a η_a) (ψ the slope rows at the nodes, read from
  // the beams here), so its generalized force F(with) − F(without) must be
  //   −(k (θ_rel − θ₀) + c θ̇_rel) ∂θ_rel/∂q,   θ̇_rel = ∂θ_rel/∂q · v
  // (q̇ = v in the plane), with ∂θ_rel/∂q by central differences (h = 1e-6 on a function linear
  // in q: round-off only, ~1e-10; bound 1e-8 of the force's scale), and V(with) − V(without) =
  // ½ k (θ_rel − θ₀)² to round-off.
  const double k = 4.0, c = 0.6, angle0 = -0.1;
  for (int layout = 0; layout < 3; ++layout) {
    const auto build = [&](bool spring) {
      PlanarModelBuilder builder;
      PlanarBody link = testing::Body("link", 1.5, 0.2);
      link.q0 << 1.0, 0.5, 0.2;
      builder.AddBody(link);
      builder.AddBody(FlexibleBody("beam", testing::KaneBeam(4, 4, BeamReference::kClamped, 2.0)));
      builder.AddBody(FlexibleBody("beam2", testing::KaneBeam(3, 3, BeamReference::kFree, 1.0)));
      PlanarJoint joint = testing::Joint("j", PlanarJointType::kRevolute, 0, 1, {0.1, -0.2},
                                         Eigen::Vector2d::Zero());
      if (layout == 0) joint.node_b = 3;
      if (layout == 1) {
        joint = testing::Joint("j", PlanarJointType::kRevolute, 1, 0, Eigen::Vector2d::Zero(),
                               {0.1, -0.2});
        joint.node_a = 3;
      }
      if (layout == 2) {
        joint = testing::Joint("j", PlanarJointType::kRevolute, 1, 2, Eigen::Vector2d::Zero(),
                               Eigen::Vector2d::Zero());
        joint.node_a = 3;
        joint.node_b = 1;
      }
      const int j = builder.AddJoint(joint);
      if (spring) builder.AddTorsionalSpring(PlanarTorsionalSpring{"spring", j, k, c, angle0});
      return std::make_shared<PlanarMultibodySystem>(builder.Build());
    };
    const auto without = build(false), with = build(true);
    const PlanarModel& model = with->model();
    const PlanarJoint& joint = model.joints()[0];
    const auto section_angle = [&](int body, int node, const Eigen::VectorXd& x) {
      const int o = model.Offset(body);
      if (node < 0) return x(o + 2);
      const FlexibleBeam& beam = *model.beam(body);
      return x(o + 2) +
             beam.PointAt(beam.NodeX(node)).slope.dot(x.segment(o + 3, beam.num_modes()));
    };
    const auto relative = [&](const Eigen::VectorXd& x) {
      return section_angle(joint.body_b, joint.node_b, x) -
             section_angle(joint.body_a, joint.node_a, x);
    };
    Eigen::VectorXd q, v;
    RandomState(model, &q, &v);
    const Eigen::VectorXd grad = CentralGradient(relative, q);
    const Eigen::VectorXd expected = -(k * (relative(q) - angle0) + c * grad.dot(v)) * grad;
    Eigen::VectorXd F0, F1;
    without->Forces(0.2, q, v, &F0);
    with->Forces(0.2, q, v, &F1);
    const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
    EXPECT_LT((F1 - F0 - expected).cwiseAbs().maxCoeff(), 1e-8 * scale) << "layout " << layout;
    // The modal entries: ψᵀ τ on the beams' η.
    EXPECT_GT(expected.segment(6, 4).cwiseAbs().maxCoeff(), 1e-2 * scale) << "layout " << layout;
    const double dV = with->PotentialEnergy(0.2, q) - without->PotentialEnergy(0.2, q);
    // V(with) − V(without) cancels the elastic energy of the stiff modes (|V| up to ~1e6 J at this
    // state): its round-off is ~1e-16 |V| per term; bound 1e-14 |V|.
    const double V = std::abs(with->PotentialEnergy(0.2, q));
    EXPECT_NEAR(dV, 0.5 * k * std::pow(relative(q) - angle0, 2), 1e-14 * V + 1e-12);
  }
}

TEST(PlanarFlexible, SpringDampersAtNodesPullAlongTheLineBetweenTheirEnds) {
  // A spring-damper (k, c, L₀) between a link point and node 3 of a beam (the node on either
  // side) and between node 3 of one beam and node 1 of another. With ℓ(q) = |p_b − p_a| (the
  // ends' places, PlanarModel::Point) the generalized force F(with) − F(without) must be
  //   −(k (ℓ − L₀) + c ℓ̇) ∂ℓ/∂q,   ℓ̇ = ∂ℓ/∂q · v
  // (q̇ = v in the plane, V_s = ½ k (ℓ − L₀)²), ∂ℓ/∂q by central differences (h = 1e-6:
  // truncation h² ℓ‴ ~ 1e-12 at ℓ ~ 1 m, round-off 1e-16/1e-6 = 1e-10; bound 1e-8 of the
  // force's scale), with modal entries (the node's Jacobian) > 1e-2 of the scale. The damper
  // alone dissipates: its power F·v is −c ℓ̇² (1e-8 of c ℓ̇², the same differences), and
  // V(with) − V(without) = ½ k (ℓ − L₀)² (round-off of |V|, bound 1e-14 |V| as above).
  const double k = 30.0, c = 0.8, rest = 0.4;
  for (int layout = 0; layout < 3; ++layout) {
    const auto build = [&](double stiffness, double damping) {
      PlanarModelBuilder builder;
      PlanarBody link = testing::Body("link", 1.5, 0.2);
      link.q0 << 1.0, 0.5, 0.2;
      builder.AddBody(link);
      builder.AddBody(FlexibleBody("beam", testing::KaneBeam(4, 4, BeamReference::kClamped, 2.0)));
      builder.AddBody(FlexibleBody("beam2", testing::KaneBeam(3, 3, BeamReference::kFree, 1.0)));
      if (stiffness > 0.0 || damping > 0.0) {
        PlanarSpringDamper spring;
        spring.name = "spring";
        spring.stiffness = stiffness;
        spring.damping = damping;
        spring.rest_length = rest;
        spring.body_a = layout == 1 ? 1 : 0;
        spring.body_b = layout == 1 ? 0 : 1;
        if (layout == 0) {
          spring.point_a = {0.1, -0.2};
          spring.node_b = 3;
        }
        if (layout == 1) {
          spring.node_a = 3;
          spring.point_b = {0.1, -0.2};
        }
        if (layout == 2) {
          spring.body_a = 1;
          spring.node_a = 3;
          spring.body_b = 2;
          spring.node_b = 1;
        }
        builder.AddSpringDamper(spring);
      }
      return std::make_shared<PlanarMultibodySystem>(builder.Build());
    };
    const auto without = build(0.0, 0.0), with = build(k, c), damper = build(0.0, c);
    const PlanarModel& model = with->model();
    const PlanarSpringDamper& spring = model.springs()[0];
    const Eigen::VectorXd no_v;
    const auto length = [&](const Eigen::VectorXd& x) {
      return (model.Point(spring.body_b, spring.node_b, spring.point_b, x, no_v).p -
              model.Point(spring.body_a, spring.node_a, spring.point_a, x, no_v).p)
          .norm();
    };
    Eigen::VectorXd q, v;
    RandomState(model, &q, &v);
    const Eigen::VectorXd grad = CentralGradient(length, q);
    const double rate = grad.dot(v);
    const Eigen::VectorXd expected = -(k * (length(q) - rest) + c * rate) * grad;
    Eigen::VectorXd F0, F1, Fc;
    without->Forces(0.2, q, v, &F0);
    with->Forces(0.2, q, v, &F1);
    damper->Forces(0.2, q, v, &Fc);
    const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
    EXPECT_LT((F1 - F0 - expected).cwiseAbs().maxCoeff(), 1e-8 * scale) << "layout " << layout;
    EXPECT_GT(expected.segment(6, 4).cwiseAbs().maxCoeff(), 1e-2 * scale) << "layout " << layout;
    EXPECT_GT(std::abs(rate), 1e-2) << "layout " << layout;  // the damper's power is tested
    EXPECT_NEAR((Fc - F0).dot(v), -c * rate * rate, 1e-8 * c * rate * rate) << "layout " << layout;
    const double dV = with->PotentialEnergy(0.2, q) - without->PotentialEnergy(0.2, q);
    const double V = std::abs(with->PotentialEnergy(0.2, q));
    EXPECT_NEAR(dV, 0.5 * k * std::pow(length(q) - rest, 2), 1e-14 * V + 1e-12)
        << "layout " << layout;
  }
  // A node on a rigid body, a node out of range, and a node with a point are refused.
  for (int bad = 0; bad < 3; ++bad) {
    PlanarModelBuilder builder;
    builder.AddBody(testing::Body("link", 1.5, 0.2));
    builder.AddBody(FlexibleBody("beam", testing::KaneBeam(4, 4, BeamReference::kClamped, 2.0)));
    PlanarSpringDamper spring;
    spring.name = "bad";
    spring.body_a = 0;
    spring.body_b = 1;
    spring.stiffness = 1.0;
    if (bad == 0) spring.node_a = 1;
    if (bad == 1) spring.node_b = 5;
    if (bad == 2) {
      spring.node_b = 2;
      spring.point_b = {0.1, 0.0};
    }
    EXPECT_THROW(builder.AddSpringDamper(spring), std::invalid_argument) << "case " << bad;
  }
}

TEST(PlanarFlexible, CantileverUnderATipLoadDeflectsByTheClosedForm) {
  // The beam frame welded to the ground (fixed joint at the frame origin), a downward load P at
  // the tip node; statics F_η(η) = 0 by Newton with the model's force Jacobian. With all modes
  // of the 8-element cantilever, δ = P L³/(3 E I) exactly (nodally exact Hermite elements)
  // up to the foreshortening nonlinearity, which changes w by O((δ/L)²) ≈ 1e-6 relative here.
  const BeamProperties beam = testing::KaneBeam(8, AvailableModes(8, BeamReference::kClamped));
  PlanarModelBuilder builder;
  const int b = builder.AddBody(FlexibleBody("beam", beam));
  builder.AddJoint(testing::Joint("weld", PlanarJointType::kFixed, kGround, b, {0, 0}, {0, 0}));
  const double P = 1.4;  // N: δ = 1.4·1000/(3·14000) ≈ 3.3 cm
  PlanarLoad load;
  load.name = "tip";
  load.body = b;
  load.node = 8;
  load.force = Eigen::Vector2d(0.0, -P);
  builder.AddLoad(load);
  PlanarMultibodySystem system(builder.Build());
  const int m = beam.modes;
  Eigen::VectorXd q = Eigen::VectorXd::Zero(system.nq()), v = q, F;
  for (int iteration = 0; iteration < 8; ++iteration) {
    system.Forces(0.0, q, v, &F);
    Eigen::MatrixXd K;
    system.ForceJacobians(0.0, q, v, &K, nullptr);
    q.tail(m) += K.bottomRightCorner(m, m).lu().solve(F.tail(m));
  }
  system.Forces(0.0, q, v, &F);
  EXPECT_LT(F.tail(m).norm(), 1e-9);
  const double delta = -system.model().Point(b, 8, Eigen::Vector2d::Zero(), q, v).p.y();
  const double exact = P * 1000.0 / (3.0 * 7e10 * 2e-7);
  std::cout << "tip deflection " << delta << " (closed form " << exact << ")\n";
  EXPECT_NEAR(delta, exact, 1e-5 * exact);
}

events::SimulationOptions Tight(double rtol) {
  events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = rtol;
  options.integrator_options.atol = 1e-3 * rtol;
  return options;
}

TEST(PlanarFlexible, FreeFlexibleBodyTumblingConservesEnergy) {
  // No gravity, no damping, no constraints: T + V is a constant of the motion of the Lagrangian
  // model (engine/flexible_beam.h). A beam spinning at 2 rad/s with its first modes excited
  // (deflections ~5 % of L, so that the foreshortening terms matter) for 3 s.
  PlanarModelBuilder builder;
  BeamProperties beam = testing::KaneBeam(4, 3, BeamReference::kFree, 2.0);
  // Soft (E = 7e7 Pa): modes at 19, 53 and 104 rad/s, so that rtol 1e-9 needs few steps.
  beam.youngs_modulus = 7e7;
  builder.AddBody(FlexibleBody("beam", beam));
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  Eigen::VectorXd q = Eigen::VectorXd::Zero(system->nq()), v = q;
  v.head<3>() << 0.2, -0.1, 2.0;
  q.segment(3, 3) << 0.08, -0.05, 0.03;
  v.segment(3, 3) << -0.2, 0.3, 0.1;
  const double e0 = system->KineticEnergy(q, v) + system->PotentialEnergy(0.0, q);
  events::Simulation sim(system, Tight(1e-9));
  sim.SetState(0.0, q, v);
  double worst = 0.0;
  for (int k = 1; k <= 6; ++k) {
    ASSERT_EQ(sim.AdvanceTo(0.5 * k).status, events::RunStatus::kFinished);
    const double e =
        system->KineticEnergy(sim.q(), sim.v()) + system->PotentialEnergy(sim.t(), sim.q());
    worst = std::max(worst, std::abs(e - e0) / e0);
  }
  std::cout << "free flexible body: energy " << e0 << " J, largest relative drift " << worst
            << " over 3 s, " << sim.stats().integrator.accepted_steps << " steps, "
            << sim.stats().integrator.rhs_evaluations << " evaluations\n";
  // DOPRI5 at rtol 1e-9: the energy error is of the order of the global error, ~1e-8.
  EXPECT_LT(worst, 1e-7);
}

}  // namespace
}  // namespace saltus::engine
