// Contact of a disk with any point of a flexible beam (contact/planar_contacts.h, disk–beam; the
// beam under gravity on a cylinder of Haddouni et al. 2017, Fig. 8): the nearest centreline
// point against a brute-force search, G and γ against finite differences with the contact point
// between nodes and moving along the element, and a cantilever propped by a cylinder between
// nodes against the closed-form reaction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>

#include "contact/planar_contacts.h"
#include "engine/flexible_beam.h"
#include "engine/planar_model.h"
#include "flexible_test_models.h"
#include "planar_test_models.h"

namespace saltus::engine {
namespace {

using testing::AllRows;
using testing::FlexibleBody;
using testing::GammaByDifference;
using testing::JacobianByDifference;

// A rigid plate and a free beam (L = 2 m, 4 elements of 0.5 m, 4 modes) in a state with every
// coordinate moving: deflections of a few per cent of the beam length.
std::shared_ptr<const PlanarModel> PlateAndFreeBeam(Eigen::VectorXd* q, Eigen::VectorXd* v) {
  PlanarModelBuilder builder;
  PlanarBody plate = testing::Body("plate", 2.0, 0.3);
  builder.AddBody(plate);
  builder.AddBody(FlexibleBody("beam", testing::KaneBeam(4, 4, BeamReference::kFree, 2.0)));
  auto model = builder.Build();
  const int n = model->num_coordinates();
  *q = 0.3 * Eigen::VectorXd::LinSpaced(n, -1.0, 1.3).array().sin();
  *v = 0.7 * Eigen::VectorXd::LinSpaced(n, 0.4, 2.9).array().cos();
  q->tail(4) *= 0.1;  // η: tip deflections of 2–5 cm (mass-normalized modes of a 2.4 kg beam)
  return model;
}

// The world point at `distance` from the centreline point X, on the side of the left normal.
Eigen::Vector2d BesideBeam(const PlanarModel& model, int body, double X, double distance,
                           const Eigen::VectorXd& q) {
  const FlexibleBeam& beam = *model.beam(body);
  const BeamPoint at = beam.PointAt(X);
  const PlanarPointState p = model.BeamPointState(body, at, q, {});
  const Eigen::Vector2d tangent =
      Eigen::Rotation2Dd(q(model.Offset(body) + 2)).toRotationMatrix() *
      beam.Curve(at, q.segment(model.Offset(body) + 3, beam.num_modes())).u_x.normalized();
  return p.p + distance * Eigen::Vector2d(-tangent.y(), tangent.x());
}

TEST(FlexibleContact, NearestPointIsTheBruteForceMinimumBetweenNodes) {
  Eigen::VectorXd q, v;
  const auto model = PlateAndFreeBeam(&q, &v);
  const int i_beam = 1;
  const FlexibleBeam& beam = *model->beam(i_beam);
  const auto eta = q.segment(model->Offset(i_beam) + 3, beam.num_modes());
  for (const double X0 : {0.0, 0.37, 1.13, 1.61, 2.0}) {
    const Eigen::Vector2d c = BesideBeam(*model, i_beam, X0, 0.15, q);
    const Eigen::Matrix2d A = Eigen::Rotation2Dd(q(model->Offset(i_beam) + 2)).toRotationMatrix();
    const Eigen::Vector2d c_body = A.transpose() * (c - q.segment<2>(model->Offset(i_beam)));
    const double X = beam.NearestX(c_body, eta);
    // Brute force over 20 001 points (spacing 1e-4 m): the distance is stationary at X*, so the
    // sampled minimum is above the true one by at most ½ κ (1e-4)² ≈ 1e-8 m (κ ≲ 2 /m here).
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= 20000; ++k) {
      const double Xk = 2.0 * k / 20000.0;
      best =
          std::min(best, (beam.Motion(beam.PointAt(Xk), eta, Eigen::VectorXd()).u - c_body).norm());
    }
    const double found = (beam.Motion(beam.PointAt(X), eta, Eigen::VectorXd()).u - c_body).norm();
    EXPECT_LE(found, best + 1e-12) << "X0 = " << X0;
    EXPECT_GT(found, best - 1e-8) << "X0 = " << X0;
    // On the normal through X0: X* = X0 (the construction), to the Newton tolerance.
    EXPECT_NEAR(X, X0, 1e-10) << "X0 = " << X0;
  }
}

TEST(FlexibleContact, DiskBeamRowsMatchFiniteDifferencesBetweenNodes) {
  // A ground disk and a disk of the moving plate, each facing a point between nodes; G (with
  // the elastic columns) and γ (with the terms of the contact point moving along the beam)
  // against central differences of g and of G v.
  Eigen::VectorXd q, v;
  const auto model = PlateAndFreeBeam(&q, &v);
  const int i_plate = 0, i_beam = 1;
  auto system = std::make_shared<PlanarMultibodySystem>(model);
  contact::PlanarContact ground;
  ground.name = "cylinder";
  ground.type = contact::PlanarContactType::kDiskBeam;
  ground.body_a = kGround;
  ground.body_b = i_beam;
  ground.point_a = BesideBeam(*model, i_beam, 0.62, -0.3, q);  // X* = 0.62: element 2, ξ = 0.24
  ground.radius_a = 0.25;
  ground.radius_b = 0.01;
  contact::PlanarContact plate = ground;
  plate.name = "knob";
  plate.body_a = i_plate;
  const Eigen::Vector2d world = BesideBeam(*model, i_beam, 1.38, 0.2, q);  // element 3, ξ = 0.76
  plate.point_a = Eigen::Rotation2Dd(q(2)).toRotationMatrix().transpose() * (world - q.head<2>());
  plate.radius_a = 0.1;
  system->AddConstraintBlock(std::make_shared<const contact::PlanarContacts>(
      model, std::vector<contact::PlanarContact>{ground, plate}));
  const std::vector<int> rows = AllRows(*system);
  Eigen::VectorXd g;
  system->ConstraintValues(0.0, q, rows, &g);
  // Gaps by construction: 0.3 − 0.25 − 0.01 and 0.2 − 0.1 − 0.01.
  EXPECT_NEAR(g(0), 0.04, 1e-12);
  EXPECT_NEAR(g(1), 0.09, 1e-12);
  Eigen::MatrixXd G;
  system->ConstraintJacobian(0.0, q, rows, &G);
  // Central differences with h = 1e-6 on O(1) rows: truncation ~h² g''' ≲ 1e-10, round-off
  // ~ε/h ≈ 1e-10.
  EXPECT_LT((G - JacobianByDifference(*system, 0.0, q, rows, 1e-6)).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_GT(G.row(0).tail(4).norm(), 0.1);  // the elastic columns are there
  Eigen::VectorXd gamma;
  system->ConstraintGamma(0.0, q, v, rows, &gamma);
  const Eigen::VectorXd gamma_fd = GammaByDifference(*system, 0.0, q, v, rows, 1e-5);
  std::cout << "gamma " << gamma.transpose() << " (differences " << gamma_fd.transpose() << ")\n";
  // h = 1e-5: truncation ~h² ≈ 1e-10, round-off ~ε/h ≈ 1e-11 on O(1) values.
  EXPECT_LT((gamma - gamma_fd).cwiseAbs().maxCoeff(), 1e-6);
  // The contact point moves along the element as the beam moves and bends (q + s v).
  const contact::PlanarContacts contacts(model, {ground});
  const double x0 = contacts.Site(q, 0).point.x();
  const double x1 = contacts.Site(q + 0.05 * v, 0).point.x();
  std::cout << "contact point x " << x0 << " -> " << x1 << "\n";
  EXPECT_GT(std::abs(x1 - x0), 1e-3);
}

// A ground cylinder of radius 0.1 against the free beam (body 1) of PlateAndFreeBeam.
contact::PlanarContact GroundCylinderOnTheBeam() {
  contact::PlanarContact c;
  c.name = "cylinder";
  c.type = contact::PlanarContactType::kDiskBeam;
  c.body_a = kGround;
  c.body_b = 1;
  c.radius_a = 0.1;
  return c;
}

TEST(FlexibleContact, FrictionalDiskBeamRowsAreTheSlipOfTheSectionAtTheContactPoint) {
  // The two disks of DiskBeamRowsMatchFiniteDifferencesBetweenNodes with friction: each adds a
  // tangential row t·(v_B(x_b) − v_A(x_a)) at the witness points, x_b carried by the beam's
  // section at X* (centre p(X*), angle θ + ψ(X*) η), x_a by the plate or the ground. G_T v against
  // central differences of the slip of those material points along q + s v (h = 1e-6: truncation
  // ~h² ≲ 1e-11, round-off ~ε/h ≈ 1e-10), and γ_T (a central difference of G_T v itself, header)
  // against GammaByDifference at h = 1e-5 (truncation ~1e-10 each).
  Eigen::VectorXd q, v;
  const auto model = PlateAndFreeBeam(&q, &v);
  const int i_plate = 0, i_beam = 1;
  const FlexibleBeam& beam = *model->beam(i_beam);
  const int m = beam.num_modes(), column = model->Offset(i_beam);
  contact::PlanarContact ground;
  ground.name = "cylinder";
  ground.type = contact::PlanarContactType::kDiskBeam;
  ground.body_a = kGround;
  ground.body_b = i_beam;
  ground.point_a = BesideBeam(*model, i_beam, 0.62, -0.3, q);
  ground.radius_a = 0.25;
  ground.radius_b = 0.01;
  ground.friction = 0.4;
  contact::PlanarContact plate = ground;
  plate.name = "knob";
  plate.body_a = i_plate;
  const Eigen::Vector2d world = BesideBeam(*model, i_beam, 1.38, 0.2, q);
  plate.point_a = Eigen::Rotation2Dd(q(2)).toRotationMatrix().transpose() * (world - q.head<2>());
  plate.radius_a = 0.1;
  plate.friction = 0.3;
  auto system = std::make_shared<PlanarMultibodySystem>(model);
  system->AddConstraintBlock(std::make_shared<const contact::PlanarContacts>(
      model, std::vector<contact::PlanarContact>{ground, plate}));
  const std::vector<int> tangential = {2, 3};
  ASSERT_EQ(system->num_constraints(), 4);
  Eigen::MatrixXd G;
  system->ConstraintJacobian(0.0, q, tangential, &G);
  const auto rotation = [](double a) { return Eigen::Rotation2Dd(a).toRotationMatrix(); };
  for (int k = 0; k < 2; ++k) {
    const contact::PlanarContact& c = k == 0 ? ground : plate;
    // The disk centre, X*, the centreline point and the witness points at q.
    const auto disk_centre = [&](const Eigen::VectorXd& qq) {
      return c.body_a == kGround ? c.point_a
                                 : Eigen::Vector2d(qq.head<2>() + rotation(qq(2)) * c.point_a);
    };
    const Eigen::Vector2d p_a = disk_centre(q);
    const double X =
        beam.NearestX(rotation(q(column + 2)).transpose() * (p_a - q.segment<2>(column)),
                      q.segment(column + 3, m));
    ASSERT_GT(X, 0.0);
    const BeamPoint point = beam.PointAt(X);
    const auto centre = [&](const Eigen::VectorXd& qq) {
      return model->BeamPointState(i_beam, point, qq, {}).p;
    };
    const auto section_angle = [&](const Eigen::VectorXd& qq) {
      return qq(column + 2) + point.slope.dot(qq.segment(column + 3, m));
    };
    const Eigen::Vector2d p_b = centre(q);
    const Eigen::Vector2d n = (p_b - p_a).normalized(), t(-n.y(), n.x());
    const Eigen::Vector2d x_b = p_b - c.radius_b * n, x_a = p_a + c.radius_a * n;
    const auto slip = [&](const Eigen::VectorXd& qq) {
      const Eigen::Vector2d b =
          centre(qq) + rotation(section_angle(qq) - section_angle(q)) * (x_b - p_b);
      const Eigen::Vector2d a = disk_centre(qq) + rotation(qq(2) - q(2)) * (x_a - p_a);
      return t.dot(b - (c.body_a == kGround ? x_a : a));
    };
    const double h = 1e-6;
    const double expected = (slip(q + h * v) - slip(q - h * v)) / (2 * h);
    EXPECT_NEAR(G.row(k).dot(v), expected, 1e-8 * (1.0 + std::abs(expected))) << c.name;
    EXPECT_GT(G.row(k).tail(m).norm(), 0.1) << c.name;  // the elastic columns are there
  }
  Eigen::VectorXd gamma;
  system->ConstraintGamma(0.0, q, v, tangential, &gamma);
  const Eigen::VectorXd gamma_fd = GammaByDifference(*system, 0.0, q, v, tangential, 1e-5);
  std::cout << "gamma_T " << gamma.transpose() << " (differences " << gamma_fd.transpose() << ")\n";
  EXPECT_LT((gamma - gamma_fd).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(FlexibleContact, DiskBeamNeedsAFlexibleBody) {
  Eigen::VectorXd q, v;
  const auto model = PlateAndFreeBeam(&q, &v);
  const contact::PlanarContact c = GroundCylinderOnTheBeam();
  EXPECT_NO_THROW(contact::PlanarContacts(model, {c}));
  contact::PlanarContact rigid = c;
  rigid.body_b = 0;
  EXPECT_THROW(contact::PlanarContacts(model, {rigid}), std::invalid_argument);
  contact::PlanarContact node = c;
  node.node_b = 2;
  EXPECT_THROW(contact::PlanarContacts(model, {node}), std::invalid_argument);
  contact::PlanarContact friction = c;
  friction.friction = 0.3;
  EXPECT_NO_THROW(contact::PlanarContacts(model, {friction}));
  friction.friction = -0.3;
  EXPECT_THROW(contact::PlanarContacts(model, {friction}), std::invalid_argument);
  contact::PlanarContact no_radius = c;
  no_radius.radius_a = 0.0;
  EXPECT_THROW(contact::PlanarContacts(model, {no_radius}), std::invalid_argument);
}

TEST(FlexibleContact, OnePassRatesAreLeftToTheJacobianOnBeamPoints) {
  // A point moving along the beam has rates with the modal columns: the block declines the
  // one-pass g and ġ (engine::MechanicalSystem::ConstraintValuesAndRates then takes G v).
  Eigen::VectorXd q, v;
  const auto model = PlateAndFreeBeam(&q, &v);
  const contact::PlanarContacts contacts(model, {GroundCylinderOnTheBeam()});
  Eigen::VectorXd g(1), g_dot(1);
  EXPECT_FALSE(contacts.ValuesAndRates(0.0, q, v, std::vector<int>{0}, g, g_dot));
}

// A cantilever of length L, weight per length w, propped at X = a by a support: the prop
// reaction. The cantilever's deflection at a under w is w a²(6L² − 4La + a²)/(24 EI) and its
// flexibility at a is a³/(3 EI) (Roark's Formulas, 7th ed., Table 8.1, cases 1a and 2a); the
// reaction closes the gap, R = δ_w/c. With Hermite elements the nodal deflections are exact
// (the shape functions solve EI w'''' = 0 exactly), and inside the element [X_e, X_e + l] that
// holds a (ξ = (a − X_e)/l) the interpolated deflection misses the element's clamped–clamped
// response: q l⁴ ξ²(1 − ξ)²/(24 EI) under the weight and R l³ ξ³(1 − ξ)³/(3 EI) under the prop.
// `fe` gives that discretised reaction.
double PropReaction(double w, double ei, double L, double a, int elements, bool fe) {
  double deflection = w * a * a * (6 * L * L - 4 * L * a + a * a) / (24 * ei);
  double flexibility = a * a * a / (3 * ei);
  if (fe) {
    const double l = L / elements;
    const double xi = a / l - std::floor(a / l);
    deflection -= w * std::pow(l, 4) * std::pow(xi * (1 - xi), 2) / (24 * ei);
    flexibility -= std::pow(l, 3) * std::pow(xi * (1 - xi), 3) / (3 * ei);
  }
  return deflection / flexibility;
}

// The welded beam under gravity resting on a ground cylinder whose top touches the undeformed
// beam's lower face at X = a: statics F_η + G_ηᵀ λ = 0, g = 0 by Newton; returns λ.
double PropByCylinder(int elements, double a) {
  const BeamProperties beam = testing::KaneBeam(
      elements, AvailableModes(elements, BeamReference::kClamped), BeamReference::kClamped, 1.0);
  PlanarModelBuilder builder;
  const int b = builder.AddBody(FlexibleBody("beam", beam));
  builder.AddJoint(testing::Joint("weld", PlanarJointType::kFixed, kGround, b, {0, 0}, {0, 0}));
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  auto model = builder.Build();
  auto system = std::make_shared<PlanarMultibodySystem>(model);
  contact::PlanarContact c;
  c.name = "cylinder";
  c.type = contact::PlanarContactType::kDiskBeam;
  c.body_b = b;
  c.radius_a = 0.02;
  c.radius_b = 0.005;
  c.point_a = Eigen::Vector2d(a, -c.radius_a - c.radius_b);
  system->AddConstraintBlock(std::make_shared<const contact::PlanarContacts>(
      model, std::vector<contact::PlanarContact>{c}));
  const std::vector<int> row = {AllRows(*system).back()};
  const int m = beam.modes;
  Eigen::VectorXd q = Eigen::VectorXd::Zero(system->nq()), v = q, F, g;
  double lambda = 0.0;
  Eigen::MatrixXd G, K, S = Eigen::MatrixXd::Zero(m + 1, m + 1);
  Eigen::VectorXd rhs(m + 1);
  for (int iteration = 0; iteration < 10; ++iteration) {
    system->Forces(0.0, q, v, &F);
    system->ForceJacobians(0.0, q, v, &K, nullptr);  // K = −∂F/∂q
    system->ConstraintJacobian(0.0, q, row, &G);
    system->ConstraintValues(0.0, q, row, &g);
    S.topLeftCorner(m, m) = K.bottomRightCorner(m, m);
    S.topRightCorner(m, 1) = -G.rightCols(m).transpose();
    S.bottomLeftCorner(1, m) = G.rightCols(m);
    rhs << F.tail(m) + G.rightCols(m).transpose() * lambda, -g;
    const Eigen::VectorXd step = S.lu().solve(rhs);
    q.tail(m) += step.head(m);
    lambda += step(m);
  }
  system->Forces(0.0, q, v, &F);
  system->ConstraintJacobian(0.0, q, row, &G);
  system->ConstraintValues(0.0, q, row, &g);
  EXPECT_LT((F.tail(m) + G.rightCols(m).transpose() * lambda).norm(), 1e-8);
  EXPECT_LT(std::abs(g(0)), 1e-14);
  return lambda;
}

TEST(FlexibleContact, CantileverProppedBetweenNodesCarriesTheClosedFormReaction) {
  // Kane's section over L = 1 m (w = ρ A g = 11.77 N/m, EI = 14 000 N·m²): the free tip would
  // sag w L⁴/(8 EI) = 1.05e-4 m, so the foreshortening and the tilt of the contact normal change
  // the reaction by O(w'(a)) ≈ 1e-4 at most through the contact point's shift r w'(a); the
  // tolerance is 2e-4 relative. The prop at a = L/3 is inside an element at ξ(1 − ξ) = 2/9 for
  // 2, 4, 8 and 16 elements, so the discretisation error falls as l³ (×1/8 per halving).
  const double w = 3000.0 * 4e-4 * 9.81, ei = 7e10 * 2e-7, a = 1.0 / 3.0;
  const double exact = PropReaction(w, ei, 1.0, a, 1, false);
  double previous_error = 0.0;
  for (const int elements : {2, 4, 8, 16}) {
    const double lambda = PropByCylinder(elements, a);
    const double fe = PropReaction(w, ei, 1.0, a, elements, true);
    const double error = std::abs(lambda - exact);
    std::cout << elements << " elements: reaction " << lambda << " N (discretised closed form "
              << fe << ", continuum " << exact << "), error " << error << "\n";
    EXPECT_NEAR(lambda, fe, 2e-4 * fe);
    if (elements > 2) {
      EXPECT_GT(previous_error / error, 6.0);  // ≈ 8, l³
    }
    previous_error = error;
  }
}

}  // namespace
}  // namespace saltus::engine
